//! SDMA packets for the gfx9 / SDMA 4.x engines (gfx90a = MI200): encoders, the named builders the
//! runtime calls, and the decoder the kfd-sim SDMA engine runs.
//!
//! A packet is a run of little-endian dwords. Dword 0 (the header) holds the opcode in bits [7:0]
//! and the sub-opcode in bits [15:8]; the remaining header bits and the following dwords depend on
//! the opcode. All layouts here follow upstream linux
//! `drivers/gpu/drm/amd/amdgpu/vega10_sdma_pkt_open.h` (the `SDMA_PKT_*` field masks and shifts)
//! and the emitters in `sdma_v4_0.c` (`sdma_v4_0_emit_copy_buffer`, `sdma_v4_0_emit_fill_buffer`,
//! `sdma_v4_0_ring_emit_fence`, `sdma_v4_0_wait_reg_mem`, `sdma_v4_0_ring_insert_nop`,
//! `sdma_v4_0_vm_write_pte`), cross-checked with ROCr `runtime/hsa-runtime/core/runtime/
//! amd_blit_sdma.cpp` (`BlitSdma::Build*Command`, `sdma_registers.h`) and tinygrad
//! `tinygrad/runtime/autogen/am/sdma_4_0_0.py`.
//!
//! Units: addresses are GPU virtual addresses in bytes; `count`/`bytes` are bytes unless a name
//! says dwords. Builders append to a `Vec<u32>` and never leave a partial packet behind: on error
//! nothing is appended.
//!
//! The decoder never panics: unknown opcodes, reserved field values and truncated input come back
//! as [`DecodeError`], which the simulator turns into a queue fault.
//!
//! ```
//! use kfd_ioctl::sdma::{self, Packet};
//! let mut ring = Vec::new();
//! sdma::copy_linear(&mut ring, 0x7000_0000_0000, 0x7100_0000_0000, 4096);
//! sdma::fence(&mut ring, 0x7200_0000_0000, 1).unwrap();
//! sdma::trap(&mut ring, 5).unwrap();
//! let packets = sdma::decode_all(&ring).unwrap();
//! assert_eq!(packets[2], Packet::Trap { int_ctx: 5 });
//! ```

use std::fmt;

// ---------------------------------------------------------------------------------------------
// Opcodes (vega10_sdma_pkt_open.h `SDMA_OP_*` / `SDMA_SUBOP_*`)
// ---------------------------------------------------------------------------------------------

/// `SDMA_OP_NOP`: header [29:16] = number of extra dwords the engine skips (burst NOP).
pub const SDMA_OP_NOP: u8 = 0;
/// `SDMA_OP_COPY` (sub-op [`SDMA_SUBOP_COPY_LINEAR`]).
pub const SDMA_OP_COPY: u8 = 1;
/// `SDMA_OP_WRITE` (sub-op [`SDMA_SUBOP_WRITE_LINEAR`]).
pub const SDMA_OP_WRITE: u8 = 2;
/// `SDMA_OP_INDIRECT` (not decoded: user queues do not chain IBs).
pub const SDMA_OP_INDIRECT: u8 = 4;
/// `SDMA_OP_FENCE`: write one dword to memory.
pub const SDMA_OP_FENCE: u8 = 5;
/// `SDMA_OP_TRAP`: raise the SDMA trap interrupt with a 28-bit context id.
pub const SDMA_OP_TRAP: u8 = 6;
/// `SDMA_OP_POLL_REGMEM`: wait until `(*addr & mask) func reference`.
pub const SDMA_OP_POLL_REGMEM: u8 = 8;
/// `SDMA_OP_ATOMIC`: 32/64-bit atomic on memory (TC_OP encoding, see [`AtomicOp`]).
pub const SDMA_OP_ATOMIC: u8 = 10;
/// `SDMA_OP_CONST_FILL`: fill memory with a constant.
pub const SDMA_OP_CONST_FILL: u8 = 11;
/// `SDMA_OP_TIMESTAMP` (sub-op [`SDMA_SUBOP_TIMESTAMP_GET_GLOBAL`]).
pub const SDMA_OP_TIMESTAMP: u8 = 13;
/// `SDMA_OP_SRBM_WRITE` (kernel rings only; not decoded).
pub const SDMA_OP_SRBM_WRITE: u8 = 14;
/// `SDMA_OP_DUMMY_TRAP` (not decoded).
pub const SDMA_OP_DUMMY_TRAP: u8 = 16;

/// `SDMA_SUBOP_COPY_LINEAR`.
pub const SDMA_SUBOP_COPY_LINEAR: u8 = 0;
/// Header bit of COPY_LINEAR that makes it a broadcast copy: one source, two destinations, 9
/// dwords (`SDMA_PKT_COPY_LINEAR_HEADER_broadcast`, bit 27; navi10_sdma_pkt_open.h spells the
/// layout out as `SDMA_PKT_COPY_BROADCAST_LINEAR`).
pub const COPY_LINEAR_BROADCAST_BIT: u32 = 1 << 27;
/// `SDMA_SUBOP_COPY_LINEAR_SUB_WIND`: copy a 3D sub-window between two pitched linear surfaces.
pub const SDMA_SUBOP_COPY_LINEAR_SUB_WIND: u8 = 4;
/// `SDMA_SUBOP_WRITE_LINEAR`.
pub const SDMA_SUBOP_WRITE_LINEAR: u8 = 0;
/// `SDMA_SUBOP_TIMESTAMP_GET_GLOBAL`: write the 64-bit global (100 MHz) GPU timestamp.
pub const SDMA_SUBOP_TIMESTAMP_GET_GLOBAL: u8 = 2;

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

/// Largest COPY_LINEAR packet on gfx90a, in bytes. The count field (DW1, bytes − 1) is 30 bits wide
/// on gfx90a (ROCr `GpuAgent::CreateBlitSdma`: `copy_size_overrides[1] = 0x3fffffff` for gfx9.0.10;
/// linux `sdma_v4_4_buffer_funcs.copy_max_bytes = 1 << 30`); other gfx9 parts have 22 bits
/// (`SDMA_PKT_COPY_LINEAR_COUNT_count_mask 0x003FFFFF` in vega10_sdma_pkt_open.h).
pub const COPY_LINEAR_MAX_BYTES: u32 = 1 << 30;
/// Mask of the COPY_LINEAR count field on gfx90a (30 bits, see [`COPY_LINEAR_MAX_BYTES`]).
pub const COPY_LINEAR_COUNT_MASK: u32 = 0x3fff_ffff;
/// Largest CONST_FILL packet, in bytes (a multiple of 4): ROCr `BlitSdmaBase::kMaxSingleFillSize =
/// 0x3fffe0`; the count field is 22 bits (`SDMA_PKT_CONSTANT_FILL_COUNT_count_mask 0x003FFFFF`).
pub const CONST_FILL_MAX_BYTES: u32 = 0x3f_ffe0;
/// Mask of the CONST_FILL count field (22 bits).
pub const CONST_FILL_COUNT_MASK: u32 = 0x3f_ffff;
/// Largest extra-dword count of one NOP packet (`SDMA_PKT_NOP_HEADER_count_mask 0x3FFF`).
pub const NOP_MAX_COUNT: u32 = 0x3fff;
/// Largest WRITE_LINEAR payload, in dwords (`SDMA_PKT_WRITE_UNTILED_DW_3_count_mask 0x000FFFFF`
/// holds dwords − 1).
pub const WRITE_LINEAR_MAX_DWORDS: usize = 1 << 20;
/// Largest TRAP context id (`SDMA_PKT_TRAP_INT_CONTEXT_int_context_mask 0x0FFFFFFF`); KFD passes
/// the low 28 bits to `kfd_signal_event_interrupt`.
pub const TRAP_INT_CTX_MASK: u32 = 0x0fff_ffff;
/// POLL_REGMEM retry count meaning "retry forever" (12-bit field, `sdma_v4_0_wait_reg_mem` and ROCr
/// both use 0xfff).
pub const POLL_REGMEM_RETRY_FOREVER: u16 = 0xfff;
/// POLL_REGMEM poll interval ROCr uses (`BlitSdma::BuildPollCommand`; the kernel's
/// `sdma_v4_0_ring_emit_hdp_flush` uses 10), in the hardware's interval units.
pub const POLL_REGMEM_DEFAULT_INTERVAL: u16 = 4;
/// COPY_LINEAR_SUB_WIND field widths (vega10_sdma_pkt_open.h `SDMA_PKT_COPY_LINEAR_SUBWIN_*`):
/// x/y offsets, pitch − 1 and rect_x/rect_y − 1 are 14 bits; z offset and rect_z − 1 are 11
/// bits; slice pitch − 1 is 28 bits; the element size (log2 bytes, header [31:29]) is 0..=4
/// (1 to 16 bytes). All counted in elements.
pub const SUBWIN_XY_MAX: u32 = 1 << 14;
/// Largest rect_z / z offset + 1 of COPY_LINEAR_SUB_WIND (11-bit fields).
pub const SUBWIN_Z_MAX: u32 = 1 << 11;
/// Largest pitch of COPY_LINEAR_SUB_WIND, in elements (14-bit field holding pitch − 1).
pub const SUBWIN_PITCH_MAX: u32 = 1 << 14;
/// Largest slice pitch of COPY_LINEAR_SUB_WIND, in elements (28-bit field holding slice − 1).
pub const SUBWIN_SLICE_MAX: u32 = 1 << 28;
/// Largest element size code of COPY_LINEAR_SUB_WIND (16-byte elements).
pub const SUBWIN_ELEM_MAX: u8 = 4;
/// CONST_FILL `fillsize` value for dword fills (ROCr `BuildFillCommand`: `fillsize = 2`).
const FILLSIZE_DWORD: u32 = 2;

// Header bit positions (vega10_sdma_pkt_open.h).
const NOP_COUNT_SHIFT: u32 = 16;
const POLL_HDP_FLUSH_SHIFT: u32 = 26;
const POLL_FUNC_SHIFT: u32 = 28;
const POLL_MEM_POLL_SHIFT: u32 = 31;
const ATOMIC_LOOP_SHIFT: u32 = 16;
const ATOMIC_OP_SHIFT: u32 = 25;
const CONST_FILL_FILLSIZE_SHIFT: u32 = 30;
const SUBWIN_ELEM_SHIFT: u32 = 29;

// ---------------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------------

/// POLL_REGMEM compare function, header bits [30:28] (`SDMA_PKT_POLL_REGMEM_HEADER_func`). The
/// engine waits until `(value_at_addr & mask) <func> reference` holds (the same encoding as PM4
/// WAIT_REG_MEM; `sdma_v4_0_wait_reg_mem` uses 3 "==", tinygrad uses 5 ">=").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PollFunc {
    /// Always true.
    Always = 0,
    /// `<`
    Lt = 1,
    /// `<=`
    Le = 2,
    /// `==`
    Eq = 3,
    /// `!=`
    Ne = 4,
    /// `>=`
    Ge = 5,
    /// `>`
    Gt = 6,
}

impl PollFunc {
    /// Decodes the 3-bit field; 7 is reserved → `None`.
    pub fn from_bits(bits: u32) -> Option<PollFunc> {
        Some(match bits {
            0 => PollFunc::Always,
            1 => PollFunc::Lt,
            2 => PollFunc::Le,
            3 => PollFunc::Eq,
            4 => PollFunc::Ne,
            5 => PollFunc::Ge,
            6 => PollFunc::Gt,
            _ => return None,
        })
    }

    /// Evaluates `(value & mask) <self> reference`, the reference taken as written in the packet
    /// (unmasked): callers pass a reference that fits the mask.
    pub fn test(self, value: u32, mask: u32, reference: u32) -> bool {
        let v = value & mask;
        match self {
            PollFunc::Always => true,
            PollFunc::Lt => v < reference,
            PollFunc::Le => v <= reference,
            PollFunc::Eq => v == reference,
            PollFunc::Ne => v != reference,
            PollFunc::Ge => v >= reference,
            PollFunc::Gt => v > reference,
        }
    }
}

/// ATOMIC operation, header bits [31:25] (`SDMA_PKT_ATOMIC_HEADER_atomic_op`). The values are the
/// gfx9 `TC_OP_ATOMIC_*_RTN_*` cache-op codes (ROCr `sdma_registers.h` `SDMA_ATOMIC_ADD64 = 47` =
/// `TC_OP_ATOMIC_ADD_RTN_64` 0x2f; the full table is the `TC_OP` enum of the gfx9 PM4 headers).
/// `src`/`cmp` operands are 64-bit for the `*64` ops and use their low 32 bits for the `*32` ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicOp {
    /// `TC_OP_ATOMIC_SWAP_RTN_32`: `*addr = src`.
    Swap32 = 0x07,
    /// `TC_OP_ATOMIC_CMPSWAP_RTN_32`: `if *addr == cmp { *addr = src }`.
    CmpSwap32 = 0x08,
    /// `TC_OP_ATOMIC_ADD_RTN_32`.
    Add32 = 0x0f,
    /// `TC_OP_ATOMIC_SUB_RTN_32`.
    Sub32 = 0x10,
    /// `TC_OP_ATOMIC_SMIN_RTN_32`.
    SMin32 = 0x11,
    /// `TC_OP_ATOMIC_UMIN_RTN_32`.
    UMin32 = 0x12,
    /// `TC_OP_ATOMIC_SMAX_RTN_32`.
    SMax32 = 0x13,
    /// `TC_OP_ATOMIC_UMAX_RTN_32`.
    UMax32 = 0x14,
    /// `TC_OP_ATOMIC_AND_RTN_32`.
    And32 = 0x15,
    /// `TC_OP_ATOMIC_OR_RTN_32`.
    Or32 = 0x16,
    /// `TC_OP_ATOMIC_XOR_RTN_32`.
    Xor32 = 0x17,
    /// `TC_OP_ATOMIC_INC_RTN_32`: `*addr = if *addr >= src { 0 } else { *addr + 1 }`.
    Inc32 = 0x18,
    /// `TC_OP_ATOMIC_DEC_RTN_32`: `*addr = if *addr == 0 || *addr > src { src } else { *addr - 1 }`.
    Dec32 = 0x19,
    /// `TC_OP_ATOMIC_SWAP_RTN_64`.
    Swap64 = 0x27,
    /// `TC_OP_ATOMIC_CMPSWAP_RTN_64`.
    CmpSwap64 = 0x28,
    /// `TC_OP_ATOMIC_ADD_RTN_64` (ROCr `SDMA_ATOMIC_ADD64`; with `src = u64::MAX` it decrements a
    /// signal, as ROCr's completion path does).
    Add64 = 0x2f,
    /// `TC_OP_ATOMIC_SUB_RTN_64`.
    Sub64 = 0x30,
    /// `TC_OP_ATOMIC_SMIN_RTN_64`.
    SMin64 = 0x31,
    /// `TC_OP_ATOMIC_UMIN_RTN_64`.
    UMin64 = 0x32,
    /// `TC_OP_ATOMIC_SMAX_RTN_64`.
    SMax64 = 0x33,
    /// `TC_OP_ATOMIC_UMAX_RTN_64`.
    UMax64 = 0x34,
    /// `TC_OP_ATOMIC_AND_RTN_64`.
    And64 = 0x35,
    /// `TC_OP_ATOMIC_OR_RTN_64`.
    Or64 = 0x36,
    /// `TC_OP_ATOMIC_XOR_RTN_64`.
    Xor64 = 0x37,
    /// `TC_OP_ATOMIC_INC_RTN_64`.
    Inc64 = 0x38,
    /// `TC_OP_ATOMIC_DEC_RTN_64`.
    Dec64 = 0x39,
}

impl AtomicOp {
    const ALL: [AtomicOp; 26] = [
        AtomicOp::Swap32,
        AtomicOp::CmpSwap32,
        AtomicOp::Add32,
        AtomicOp::Sub32,
        AtomicOp::SMin32,
        AtomicOp::UMin32,
        AtomicOp::SMax32,
        AtomicOp::UMax32,
        AtomicOp::And32,
        AtomicOp::Or32,
        AtomicOp::Xor32,
        AtomicOp::Inc32,
        AtomicOp::Dec32,
        AtomicOp::Swap64,
        AtomicOp::CmpSwap64,
        AtomicOp::Add64,
        AtomicOp::Sub64,
        AtomicOp::SMin64,
        AtomicOp::UMin64,
        AtomicOp::SMax64,
        AtomicOp::UMax64,
        AtomicOp::And64,
        AtomicOp::Or64,
        AtomicOp::Xor64,
        AtomicOp::Inc64,
        AtomicOp::Dec64,
    ];

    /// Every operation this module knows, in encoding order.
    pub fn all() -> &'static [AtomicOp] {
        &Self::ALL
    }

    /// Decodes the 7-bit field; codes not listed in [`AtomicOp`] → `None`.
    pub fn from_bits(bits: u32) -> Option<AtomicOp> {
        Self::ALL.iter().copied().find(|op| *op as u32 == bits)
    }

    /// True for the 64-bit operations (operand and memory width 8 bytes, else 4).
    pub fn is_64bit(self) -> bool {
        (self as u8) >= 0x20
    }

    /// Width of the memory operand in bytes (4 or 8); the address must be aligned to it.
    pub fn width(self) -> u64 {
        if self.is_64bit() {
            8
        } else {
            4
        }
    }

    /// Applies the operation to `old` (zero-extended for 32-bit ops) and returns the new value
    /// (32-bit ops return a value that fits in 32 bits). This is what the simulator's engine
    /// stores back; the hardware semantics are those of the matching GPU memory atomic.
    pub fn apply(self, old: u64, src: u64, cmp: u64) -> u64 {
        if self.is_64bit() {
            match self {
                AtomicOp::Swap64 => src,
                AtomicOp::CmpSwap64 => {
                    if old == cmp {
                        src
                    } else {
                        old
                    }
                }
                AtomicOp::Add64 => old.wrapping_add(src),
                AtomicOp::Sub64 => old.wrapping_sub(src),
                AtomicOp::SMin64 => (old as i64).min(src as i64) as u64,
                AtomicOp::UMin64 => old.min(src),
                AtomicOp::SMax64 => (old as i64).max(src as i64) as u64,
                AtomicOp::UMax64 => old.max(src),
                AtomicOp::And64 => old & src,
                AtomicOp::Or64 => old | src,
                AtomicOp::Xor64 => old ^ src,
                AtomicOp::Inc64 => {
                    if old >= src {
                        0
                    } else {
                        old + 1
                    }
                }
                AtomicOp::Dec64 => {
                    if old == 0 || old > src {
                        src
                    } else {
                        old - 1
                    }
                }
                _ => unreachable!("32-bit op in 64-bit arm"),
            }
        } else {
            let (o, s, c) = (old as u32, src as u32, cmp as u32);
            let r = match self {
                AtomicOp::Swap32 => s,
                AtomicOp::CmpSwap32 => {
                    if o == c {
                        s
                    } else {
                        o
                    }
                }
                AtomicOp::Add32 => o.wrapping_add(s),
                AtomicOp::Sub32 => o.wrapping_sub(s),
                AtomicOp::SMin32 => (o as i32).min(s as i32) as u32,
                AtomicOp::UMin32 => o.min(s),
                AtomicOp::SMax32 => (o as i32).max(s as i32) as u32,
                AtomicOp::UMax32 => o.max(s),
                AtomicOp::And32 => o & s,
                AtomicOp::Or32 => o | s,
                AtomicOp::Xor32 => o ^ s,
                AtomicOp::Inc32 => {
                    if o >= s {
                        0
                    } else {
                        o + 1
                    }
                }
                AtomicOp::Dec32 => {
                    if o == 0 || o > s {
                        s
                    } else {
                        o - 1
                    }
                }
                _ => unreachable!("64-bit op in 32-bit arm"),
            };
            r as u64
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Packet
// ---------------------------------------------------------------------------------------------

/// One decoded SDMA packet (gfx9 / SDMA 4.x). Cache-policy bits the engine ignores (FENCE mtype,
/// COPY swap/tmz, ...) are encoded as 0 and not kept by the decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    /// NOP, 1 + `count` dwords: the engine skips `count` dwords after the header (burst NOP,
    /// `sdma_v4_0_ring_insert_nop`: `SDMA_PKT_NOP_HEADER_COUNT(count - 1)` on the first of `count`
    /// NOPs). An all-zero dword is a 1-dword NOP. `count` ≤ [`NOP_MAX_COUNT`].
    Nop {
        /// Extra dwords after the header (their contents are ignored).
        count: u32,
    },
    /// COPY_LINEAR, 7 dwords: copy `count` bytes from `src` to `dst` (`sdma_v4_0_emit_copy_buffer`).
    /// 1 ≤ `count` ≤ [`COPY_LINEAR_MAX_BYTES`]; DW1 holds `count - 1`.
    CopyLinear {
        /// Bytes to copy.
        count: u32,
        /// Source GPU VA (bytes).
        src: u64,
        /// Destination GPU VA (bytes).
        dst: u64,
    },
    /// COPY_LINEAR with the broadcast bit ([`COPY_LINEAR_BROADCAST_BIT`]), 9 dwords: copy `count`
    /// bytes from `src` to both `dst[0]` (DW5-6) and `dst[1]` (DW7-8). DW1 holds `count - 1` as in
    /// COPY_LINEAR. kfdtest's `SDMACopyDataPacket` with two destinations (`KFDQMTest.P2PTest`).
    CopyLinearBroadcast {
        /// Bytes to copy.
        count: u32,
        /// Source GPU VA (bytes).
        src: u64,
        /// The two destination GPU VAs (bytes).
        dst: [u64; 2],
    },
    /// COPY_LINEAR_SUB_WIND, 13 dwords: copy a `rect_x` × `rect_y` × `rect_z` block of elements
    /// of `1 << elem` bytes between two pitched linear surfaces (vega10_sdma_pkt_open.h
    /// `SDMA_PKT_COPY_LINEAR_SUBWIN`; ROCr `BlitSdma::BuildCopyRectCommand`). Element
    /// `(x, y, z)` of a surface is at `addr + ((z0 + z) * slice + (y0 + y) * pitch + x0 + x) << elem`.
    /// Bases 4-aligned and pitches (and slices when `rect_z > 1`) whole dwords (ROCr
    /// `SubmitCopyRectCommand`: "Hardware requires DWORD alignment for base address, pitches");
    /// fields within the `SUBWIN_*` limits.
    CopySubWindow {
        /// log2 of the element size in bytes, 0..=[`SUBWIN_ELEM_MAX`].
        elem: u8,
        /// Source surface.
        src: SubWindow,
        /// Destination surface.
        dst: SubWindow,
        /// Elements per row, 1..=[`SUBWIN_XY_MAX`].
        rect_x: u32,
        /// Rows, 1..=[`SUBWIN_XY_MAX`].
        rect_y: u32,
        /// Slices, 1..=[`SUBWIN_Z_MAX`].
        rect_z: u32,
    },
    /// CONST_FILL, 5 dwords: write the dword `data` `count / 4` times from `dst` (ROCr
    /// `BuildFillCommand`: `fillsize = 2`, DW4 = `count - 4`). `dst` dword-aligned, `count` a
    /// multiple of 4 in 4 ..= [`CONST_FILL_MAX_BYTES`].
    ConstFill {
        /// Destination GPU VA (bytes, 4-aligned).
        dst: u64,
        /// Fill pattern.
        data: u32,
        /// Bytes to fill (multiple of 4).
        count: u32,
    },
    /// FENCE, 4 dwords: write the dword `data` at `addr` (4-aligned) once all earlier packets are
    /// done (`sdma_v4_0_ring_emit_fence`).
    Fence {
        /// Destination GPU VA (bytes, 4-aligned).
        addr: u64,
        /// Value written.
        data: u32,
    },
    /// TRAP, 2 dwords: raise the SDMA trap interrupt; KFD signals the event whose id is
    /// `int_ctx` (28 bits; `kfd_int_process_v9.c` → `kfd_signal_event_interrupt`).
    Trap {
        /// Interrupt context (the KFD event_id), ≤ [`TRAP_INT_CTX_MASK`].
        int_ctx: u32,
    },
    /// POLL_REGMEM, 6 dwords (`sdma_v4_0_wait_reg_mem`): wait until
    /// `(dword at addr & mask) func reference`, re-reading every `interval` for `retry_count`
    /// tries (0xfff = forever). With `mem_poll == false` the packet polls registers (DW1/DW2 are
    /// register byte offsets, e.g. ROCr's HDP flush `{0x8, 0, 0x80000000, 0, 0, 0}`); `addr` then
    /// holds DW1 | DW2 << 32 verbatim.
    PollRegmem {
        /// GPU VA of the polled dword (bytes, 4-aligned) when `mem_poll`.
        addr: u64,
        /// Value compared against.
        reference: u32,
        /// Mask applied to the polled value.
        mask: u32,
        /// Compare function.
        func: PollFunc,
        /// Poll interval (16 bits).
        interval: u16,
        /// Retry count (12 bits; [`POLL_REGMEM_RETRY_FOREVER`] = no limit).
        retry_count: u16,
        /// Header bit 26: flush HDP before polling.
        hdp_flush: bool,
        /// Header bit 31: poll memory (true) or registers (false).
        mem_poll: bool,
    },
    /// ATOMIC, 8 dwords: `*addr = op(*addr, src, cmp)` (ROCr/tinygrad completion:
    /// `Add64` with `src = u64::MAX` decrements a signal).
    Atomic {
        /// Operation.
        op: AtomicOp,
        /// GPU VA of the operand (bytes, aligned to `op.width()`).
        addr: u64,
        /// Source operand.
        src: u64,
        /// Compare operand (CMPSWAP only).
        cmp: u64,
        /// Header bit 16 `loop`: retry a CMPSWAP every `loop_interval` until it succeeds.
        loop_cmpswap: bool,
        /// DW7 [12:0]: loop interval.
        loop_interval: u16,
    },
    /// TIMESTAMP GET_GLOBAL, 3 dwords: write the 64-bit global GPU timestamp (100 MHz) at `addr`
    /// (8-aligned; DW1 carries address bits [31:3]).
    Timestamp {
        /// Destination GPU VA (bytes, 8-aligned).
        addr: u64,
    },
    /// WRITE_LINEAR (WRITE_UNTILED), 4 + n dwords: write `data` (n dwords, 1 ..=
    /// [`WRITE_LINEAR_MAX_DWORDS`]) at `dst` (`sdma_v4_0_vm_write_pte`: DW3 = n − 1).
    WriteLinear {
        /// Destination GPU VA (bytes, 4-aligned).
        dst: u64,
        /// Inline payload.
        data: Vec<u32>,
    },
}

/// One side of a COPY_LINEAR_SUB_WIND: a pitched linear surface and the block's origin in it,
/// in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubWindow {
    /// Base GPU VA (bytes, 4-aligned).
    pub addr: u64,
    /// Origin x, y (< [`SUBWIN_XY_MAX`]) and z (< [`SUBWIN_Z_MAX`]).
    pub x: u32,
    pub y: u32,
    pub z: u32,
    /// Row pitch, 1..=[`SUBWIN_PITCH_MAX`].
    pub pitch: u32,
    /// Slice pitch, 1..=[`SUBWIN_SLICE_MAX`] (ignored by a one-slice block).
    pub slice: u32,
}

impl SubWindow {
    /// Byte address of element `(x, y, z)` of the block.
    pub fn element_addr(&self, elem: u8, x: u64, y: u64, z: u64) -> u64 {
        let e = (self.z as u64 + z) * self.slice as u64 + (self.y as u64 + y) * self.pitch as u64 + self.x as u64 + x;
        self.addr.wrapping_add(e << elem)
    }

    fn validate(&self, side: &'static str, elem: u8, rect_z: u32) -> Result<(), EncodeError> {
        check_align(side, self.addr, 4)?;
        check_range("SUB_WIND x", self.x as u64, 0, SUBWIN_XY_MAX as u64 - 1)?;
        check_range("SUB_WIND y", self.y as u64, 0, SUBWIN_XY_MAX as u64 - 1)?;
        check_range("SUB_WIND z", self.z as u64, 0, SUBWIN_Z_MAX as u64 - 1)?;
        check_range("SUB_WIND pitch", self.pitch as u64, 1, SUBWIN_PITCH_MAX as u64)?;
        check_range("SUB_WIND slice", self.slice as u64, 1, SUBWIN_SLICE_MAX as u64)?;
        check_align("SUB_WIND pitch bytes", (self.pitch as u64) << elem, 4)?;
        if rect_z > 1 {
            check_align("SUB_WIND slice bytes", (self.slice as u64) << elem, 4)?;
        }
        Ok(())
    }

    fn encode(&self) -> [u32; 5] {
        [lo(self.addr), hi(self.addr), self.x | self.y << 16, self.z | (self.pitch - 1) << 16, self.slice - 1]
    }

    fn decode(p: &[u32]) -> SubWindow {
        SubWindow {
            addr: qword(p[0], p[1]),
            x: p[2] & 0x3fff,
            y: (p[2] >> 16) & 0x3fff,
            z: p[3] & 0x7ff,
            pitch: ((p[3] >> 16) & 0x3fff) + 1,
            slice: (p[4] & 0x0fff_ffff) + 1,
        }
    }
}

/// Why a packet could not be decoded. The simulator turns any of these into a queue fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ends inside a packet: `needed` dwords are required from the packet start,
    /// `available` were given (0 available = empty input).
    Truncated {
        /// Opcode of the header (0 when the input is empty).
        op: u8,
        /// Dwords the packet needs.
        needed: usize,
        /// Dwords present.
        available: usize,
    },
    /// Opcode / sub-opcode pair this decoder does not implement.
    UnknownOpcode {
        /// Header bits [7:0].
        op: u8,
        /// Header bits [15:8].
        sub_op: u8,
        /// The whole header dword.
        header: u32,
    },
    /// A field holds a reserved or unsupported value.
    InvalidField {
        /// Opcode of the packet.
        op: u8,
        /// Field name as in vega10_sdma_pkt_open.h.
        field: &'static str,
        /// The raw field value.
        value: u32,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { op, needed, available } => {
                write!(f, "SDMA packet (op {op}) truncated: needs {needed} dwords, {available} available")
            }
            DecodeError::UnknownOpcode { op, sub_op, header } => {
                write!(f, "unknown SDMA opcode {op} sub-op {sub_op} (header {header:#010x})")
            }
            DecodeError::InvalidField { op, field, value } => {
                write!(f, "SDMA packet (op {op}): invalid {field} = {value:#x}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why a packet or builder call cannot be encoded (a caller bug the runtime maps to
/// `hipErrorInvalidValue`). Builders return it without appending anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// An address is not aligned to `align` bytes.
    Misaligned {
        /// Field name.
        field: &'static str,
        /// The address.
        addr: u64,
        /// Required alignment in bytes.
        align: u64,
    },
    /// A value does not fit its field or is outside the packet's range.
    OutOfRange {
        /// Field name.
        field: &'static str,
        /// The value.
        value: u64,
        /// Largest accepted value.
        max: u64,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::Misaligned { field, addr, align } => {
                write!(f, "SDMA {field} {addr:#x} is not {align}-byte aligned")
            }
            EncodeError::OutOfRange { field, value, max } => {
                write!(f, "SDMA {field} = {value:#x} out of range (max {max:#x})")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

#[inline]
fn header(op: u8, sub_op: u8) -> u32 {
    op as u32 | (sub_op as u32) << 8
}
#[inline]
fn lo(v: u64) -> u32 {
    v as u32
}
#[inline]
fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}
#[inline]
fn qword(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

fn check_align(field: &'static str, addr: u64, align: u64) -> Result<(), EncodeError> {
    // `align` is a power of two.
    if addr & (align - 1) != 0 {
        Err(EncodeError::Misaligned { field, addr, align })
    } else {
        Ok(())
    }
}

fn check_range(field: &'static str, value: u64, min: u64, max: u64) -> Result<(), EncodeError> {
    if value < min || value > max {
        Err(EncodeError::OutOfRange { field, value, max })
    } else {
        Ok(())
    }
}

impl Packet {
    /// Size of the encoded packet in dwords.
    pub fn dwords(&self) -> usize {
        match self {
            Packet::Nop { count } => 1 + *count as usize,
            Packet::CopyLinear { .. } => 7,
            Packet::CopyLinearBroadcast { .. } => 9,
            Packet::CopySubWindow { .. } => 13,
            Packet::ConstFill { .. } => 5,
            Packet::Fence { .. } => 4,
            Packet::Trap { .. } => 2,
            Packet::PollRegmem { .. } => 6,
            Packet::Atomic { .. } => 8,
            Packet::Timestamp { .. } => 3,
            Packet::WriteLinear { data, .. } => 4 + data.len(),
        }
    }

    /// Size of the encoded packet in bytes (`dwords() * 4`).
    pub fn bytes(&self) -> usize {
        self.dwords() * 4
    }

    /// Checks every field against its bit width, range and alignment (see each variant).
    pub fn validate(&self) -> Result<(), EncodeError> {
        match self {
            Packet::Nop { count } => check_range("NOP count", *count as u64, 0, NOP_MAX_COUNT as u64),
            Packet::CopyLinear { count, .. } | Packet::CopyLinearBroadcast { count, .. } => {
                check_range("COPY_LINEAR count", *count as u64, 1, COPY_LINEAR_MAX_BYTES as u64)
            }
            Packet::CopySubWindow { elem, src, dst, rect_x, rect_y, rect_z } => {
                check_range("SUB_WIND elementsize", *elem as u64, 0, SUBWIN_ELEM_MAX as u64)?;
                src.validate("SUB_WIND src", *elem, *rect_z)?;
                dst.validate("SUB_WIND dst", *elem, *rect_z)?;
                check_range("SUB_WIND rect_x", *rect_x as u64, 1, SUBWIN_XY_MAX as u64)?;
                check_range("SUB_WIND rect_y", *rect_y as u64, 1, SUBWIN_XY_MAX as u64)?;
                check_range("SUB_WIND rect_z", *rect_z as u64, 1, SUBWIN_Z_MAX as u64)
            }
            Packet::ConstFill { dst, count, .. } => {
                check_align("CONST_FILL dst", *dst, 4)?;
                check_range("CONST_FILL count", *count as u64, 4, CONST_FILL_MAX_BYTES as u64)?;
                if count % 4 != 0 {
                    return Err(EncodeError::Misaligned { field: "CONST_FILL count", addr: *count as u64, align: 4 });
                }
                Ok(())
            }
            Packet::Fence { addr, .. } => check_align("FENCE addr", *addr, 4),
            Packet::Trap { int_ctx } => check_range("TRAP int_ctx", *int_ctx as u64, 0, TRAP_INT_CTX_MASK as u64),
            Packet::PollRegmem { addr, mem_poll, retry_count, .. } => {
                if *mem_poll {
                    check_align("POLL_REGMEM addr", *addr, 4)?;
                }
                check_range("POLL_REGMEM retry_count", *retry_count as u64, 0, 0xfff)
            }
            Packet::Atomic { op, addr, loop_interval, .. } => {
                check_align("ATOMIC addr", *addr, op.width())?;
                check_range("ATOMIC loop_interval", *loop_interval as u64, 0, 0x1fff)
            }
            Packet::Timestamp { addr } => check_align("TIMESTAMP addr", *addr, 8),
            Packet::WriteLinear { dst, data } => {
                check_align("WRITE_LINEAR dst", *dst, 4)?;
                check_range("WRITE_LINEAR dwords", data.len() as u64, 1, WRITE_LINEAR_MAX_DWORDS as u64)
            }
        }
    }

    /// Appends the packet's dwords to `out`.
    ///
    /// # Panics
    /// If [`Packet::validate`] fails (a field does not fit its packet). The named builders
    /// ([`copy_linear`], [`fence`], ...) check first and never reach this.
    pub fn encode(&self, out: &mut Vec<u32>) {
        if let Err(e) = self.validate() {
            panic!("invalid SDMA packet {self:?}: {e}");
        }
        out.reserve(self.dwords());
        match self {
            Packet::Nop { count } => {
                out.push(header(SDMA_OP_NOP, 0) | count << NOP_COUNT_SHIFT);
                out.resize(out.len() + *count as usize, 0);
            }
            Packet::CopyLinear { count, src, dst } => out.extend_from_slice(&[
                header(SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR),
                count - 1,
                0, // dst_sw [17:16], src_sw [25:24]: no endian swap
                lo(*src),
                hi(*src),
                lo(*dst),
                hi(*dst),
            ]),
            Packet::CopyLinearBroadcast { count, src, dst } => out.extend_from_slice(&[
                header(SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR) | COPY_LINEAR_BROADCAST_BIT,
                count - 1,
                0, // dst2_sw [11:10], dst1_sw [17:16], src_sw [25:24]: no endian swap
                lo(*src),
                hi(*src),
                lo(dst[0]),
                hi(dst[0]),
                lo(dst[1]),
                hi(dst[1]),
            ]),
            Packet::CopySubWindow { elem, src, dst, rect_x, rect_y, rect_z } => {
                out.push(header(SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR_SUB_WIND) | (*elem as u32) << SUBWIN_ELEM_SHIFT);
                out.extend_from_slice(&src.encode());
                out.extend_from_slice(&dst.encode());
                // DW12 dst_sw [17:16], src_sw [25:24]: no endian swap.
                out.extend_from_slice(&[(rect_x - 1) | (rect_y - 1) << 16, rect_z - 1]);
            }
            Packet::ConstFill { dst, data, count } => out.extend_from_slice(&[
                header(SDMA_OP_CONST_FILL, 0) | FILLSIZE_DWORD << CONST_FILL_FILLSIZE_SHIFT,
                lo(*dst),
                hi(*dst),
                *data,
                count - 4, // ROCr: (dwords - 1) * 4
            ]),
            Packet::Fence { addr, data } => {
                out.extend_from_slice(&[header(SDMA_OP_FENCE, 0), lo(*addr), hi(*addr), *data])
            }
            Packet::Trap { int_ctx } => out.extend_from_slice(&[header(SDMA_OP_TRAP, 0), *int_ctx]),
            Packet::PollRegmem { addr, reference, mask, func, interval, retry_count, hdp_flush, mem_poll } => out
                .extend_from_slice(&[
                    header(SDMA_OP_POLL_REGMEM, 0)
                        | (*hdp_flush as u32) << POLL_HDP_FLUSH_SHIFT
                        | (*func as u32) << POLL_FUNC_SHIFT
                        | (*mem_poll as u32) << POLL_MEM_POLL_SHIFT,
                    lo(*addr),
                    hi(*addr),
                    *reference,
                    *mask,
                    *interval as u32 | (*retry_count as u32) << 16,
                ]),
            Packet::Atomic { op, addr, src, cmp, loop_cmpswap, loop_interval } => out.extend_from_slice(&[
                header(SDMA_OP_ATOMIC, 0)
                    | (*loop_cmpswap as u32) << ATOMIC_LOOP_SHIFT
                    | (*op as u32) << ATOMIC_OP_SHIFT,
                lo(*addr),
                hi(*addr),
                lo(*src),
                hi(*src),
                lo(*cmp),
                hi(*cmp),
                *loop_interval as u32,
            ]),
            Packet::Timestamp { addr } => out.extend_from_slice(&[
                header(SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL),
                lo(*addr),
                hi(*addr),
            ]),
            Packet::WriteLinear { dst, data } => {
                out.extend_from_slice(&[
                    header(SDMA_OP_WRITE, SDMA_SUBOP_WRITE_LINEAR),
                    lo(*dst),
                    hi(*dst),
                    data.len() as u32 - 1,
                ]);
                out.extend_from_slice(data);
            }
        }
    }

    /// Encodes into a fresh vector (see [`Packet::encode`]).
    pub fn to_dwords(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.dwords());
        self.encode(&mut v);
        v
    }

    /// Decodes the packet at the start of `ring` and returns it with the number of dwords it
    /// occupies. `ring` is a contiguous view; a packet that wraps the ring end must be presented
    /// contiguously by the caller (ROCr and our runtime pad with NOPs instead of wrapping).
    ///
    /// Errors: [`DecodeError::Truncated`] if `ring` ends inside the packet (including empty input),
    /// [`DecodeError::UnknownOpcode`] for opcodes/sub-opcodes other than those of [`Packet`],
    /// [`DecodeError::InvalidField`] for reserved values (POLL_REGMEM func 7, unknown atomic op,
    /// CONST_FILL fillsize other than dword). Never panics.
    pub fn decode(ring: &[u32]) -> Result<(Packet, usize), DecodeError> {
        let Some(&h) = ring.first() else {
            return Err(DecodeError::Truncated { op: 0, needed: 1, available: 0 });
        };
        let op = (h & 0xff) as u8;
        let sub_op = ((h >> 8) & 0xff) as u8;
        let need = |n: usize| -> Result<&[u32], DecodeError> {
            if ring.len() < n {
                Err(DecodeError::Truncated { op, needed: n, available: ring.len() })
            } else {
                Ok(&ring[..n])
            }
        };
        let unknown = DecodeError::UnknownOpcode { op, sub_op, header: h };
        match (op, sub_op) {
            (SDMA_OP_NOP, 0) => {
                let count = (h >> NOP_COUNT_SHIFT) & NOP_MAX_COUNT;
                need(1 + count as usize)?;
                Ok((Packet::Nop { count }, 1 + count as usize))
            }
            (SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR) if h & COPY_LINEAR_BROADCAST_BIT != 0 => {
                let p = need(9)?;
                let count = (p[1] & COPY_LINEAR_COUNT_MASK) + 1;
                let dst = [qword(p[5], p[6]), qword(p[7], p[8])];
                Ok((Packet::CopyLinearBroadcast { count, src: qword(p[3], p[4]), dst }, 9))
            }
            (SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR) => {
                let p = need(7)?;
                let count = (p[1] & COPY_LINEAR_COUNT_MASK) + 1;
                Ok((Packet::CopyLinear { count, src: qword(p[3], p[4]), dst: qword(p[5], p[6]) }, 7))
            }
            (SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR_SUB_WIND) => {
                let p = need(13)?;
                let elem = (h >> SUBWIN_ELEM_SHIFT) as u8 & 7;
                if elem > SUBWIN_ELEM_MAX {
                    return Err(DecodeError::InvalidField { op, field: "elementsize", value: elem as u32 });
                }
                Ok((
                    Packet::CopySubWindow {
                        elem,
                        src: SubWindow::decode(&p[1..6]),
                        dst: SubWindow::decode(&p[6..11]),
                        rect_x: (p[11] & 0x3fff) + 1,
                        rect_y: ((p[11] >> 16) & 0x3fff) + 1,
                        rect_z: (p[12] & 0x7ff) + 1,
                    },
                    13,
                ))
            }
            (SDMA_OP_WRITE, SDMA_SUBOP_WRITE_LINEAR) => {
                let p = need(4)?;
                let n = (p[3] & 0x000f_ffff) as usize + 1;
                let p = need(4 + n)?;
                Ok((Packet::WriteLinear { dst: qword(p[1], p[2]), data: p[4..].to_vec() }, 4 + n))
            }
            (SDMA_OP_FENCE, 0) => {
                let p = need(4)?;
                Ok((Packet::Fence { addr: qword(p[1], p[2]), data: p[3] }, 4))
            }
            (SDMA_OP_TRAP, 0) => {
                let p = need(2)?;
                Ok((Packet::Trap { int_ctx: p[1] & TRAP_INT_CTX_MASK }, 2))
            }
            (SDMA_OP_POLL_REGMEM, 0) => {
                let p = need(6)?;
                let fbits = (h >> POLL_FUNC_SHIFT) & 7;
                let func =
                    PollFunc::from_bits(fbits).ok_or(DecodeError::InvalidField { op, field: "func", value: fbits })?;
                Ok((
                    Packet::PollRegmem {
                        addr: qword(p[1], p[2]),
                        reference: p[3],
                        mask: p[4],
                        func,
                        interval: (p[5] & 0xffff) as u16,
                        retry_count: ((p[5] >> 16) & 0xfff) as u16,
                        hdp_flush: (h >> POLL_HDP_FLUSH_SHIFT) & 1 != 0,
                        mem_poll: (h >> POLL_MEM_POLL_SHIFT) & 1 != 0,
                    },
                    6,
                ))
            }
            (SDMA_OP_ATOMIC, 0) => {
                let p = need(8)?;
                let obits = (h >> ATOMIC_OP_SHIFT) & 0x7f;
                let aop = AtomicOp::from_bits(obits).ok_or(DecodeError::InvalidField {
                    op,
                    field: "atomic_op",
                    value: obits,
                })?;
                Ok((
                    Packet::Atomic {
                        op: aop,
                        addr: qword(p[1], p[2]),
                        src: qword(p[3], p[4]),
                        cmp: qword(p[5], p[6]),
                        loop_cmpswap: (h >> ATOMIC_LOOP_SHIFT) & 1 != 0,
                        loop_interval: (p[7] & 0x1fff) as u16,
                    },
                    8,
                ))
            }
            (SDMA_OP_CONST_FILL, 0) => {
                let p = need(5)?;
                let fillsize = (h >> CONST_FILL_FILLSIZE_SHIFT) & 3;
                if fillsize != FILLSIZE_DWORD {
                    return Err(DecodeError::InvalidField { op, field: "fillsize", value: fillsize });
                }
                // Dword fill: the low two bits of the count are ignored. ROCr writes
                // (dwords - 1) * 4, bytes - 1 reads the same.
                let count = (p[4] & CONST_FILL_COUNT_MASK & !3) + 4;
                Ok((Packet::ConstFill { dst: qword(p[1], p[2]), data: p[3], count }, 5))
            }
            (SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL) => {
                let p = need(3)?;
                // write_addr_31_3: DW1 bits [2:0] are not part of the address.
                Ok((Packet::Timestamp { addr: qword(p[1] & !7, p[2]) }, 3))
            }
            _ => Err(unknown),
        }
    }
}

/// Decodes a whole stream of packets that ends exactly at a packet boundary.
pub fn decode_all(mut stream: &[u32]) -> Result<Vec<Packet>, DecodeError> {
    let mut v = Vec::new();
    while !stream.is_empty() {
        let (p, n) = Packet::decode(stream)?;
        v.push(p);
        stream = &stream[n..];
    }
    Ok(v)
}

// ---------------------------------------------------------------------------------------------
// Builders (the runtime's only way to make packets)
// ---------------------------------------------------------------------------------------------

/// Appends COPY_LINEAR packets that copy `bytes` bytes from `src` to `dst`, split into packets of
/// at most [`COPY_LINEAR_MAX_BYTES`] (as ROCr `BuildCopyCommand` splits by
/// `max_single_linear_copy_size_`). Any alignment is accepted. `bytes == 0` appends nothing.
/// Returns the number of packets appended (7 dwords each).
pub fn copy_linear(out: &mut Vec<u32>, dst: u64, src: u64, bytes: u64) -> usize {
    copy_linear_max(out, dst, src, bytes, COPY_LINEAR_MAX_BYTES)
}

/// Number of COPY_LINEAR packets [`copy_linear`] emits for `bytes` bytes.
pub fn copy_linear_packets(bytes: u64) -> usize {
    bytes.div_ceil(COPY_LINEAR_MAX_BYTES as u64) as usize
}

fn copy_linear_max(out: &mut Vec<u32>, dst: u64, src: u64, bytes: u64, max: u32) -> usize {
    let mut done = 0u64;
    let mut n = 0;
    out.reserve(7 * bytes.div_ceil(max as u64) as usize);
    while done < bytes {
        let chunk = (bytes - done).min(max as u64) as u32;
        Packet::CopyLinear { count: chunk, src: src.wrapping_add(done), dst: dst.wrapping_add(done) }.encode(out);
        done += chunk as u64;
        n += 1;
    }
    n
}

/// A pitched linear surface in bytes, for [`copy_3d`]: element `(x, y, z)` (x in bytes) is at
/// `addr + z * slice + y * pitch + x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pitched {
    pub addr: u64,
    pub pitch: u64,
    pub slice: u64,
}

/// The packets of a `width` (bytes) × `height` × `depth` block copy between two pitched
/// surfaces, in order, for the caller to encode in batches that fit its ring.
///
/// COPY_LINEAR_SUB_WIND where its limits allow, as ROCr `BuildCopyRectCommand` tiles it: the
/// largest element (1..16 bytes) dividing both pitches (and slices, for more than one slice), the
/// width and the bases' offsets from a dword; bases aligned down to a dword with the rest as the
/// x origin; the block cut into tiles of at most [`SUBWIN_XY_MAX`] elements × rows and
/// [`SUBWIN_Z_MAX`] slices. Where a pitch or slice is not whole dwords or exceeds the fields, one
/// COPY_LINEAR per row instead. The arithmetic wraps; the caller has range-checked both blocks.
pub fn copy_3d(dst: Pitched, src: Pitched, width: u64, height: u64, depth: u64) -> Box<dyn Iterator<Item = Packet>> {
    let ctz = |v: u64| (v | 16).trailing_zeros() as u8;
    let mut elem = ctz(src.pitch).min(ctz(dst.pitch)).min(ctz(width)).min(ctz(src.addr % 4)).min(ctz(dst.addr % 4));
    let mut dword_pitches = src.pitch.is_multiple_of(4) && dst.pitch.is_multiple_of(4);
    if depth > 1 {
        elem = elem.min(ctz(src.slice)).min(ctz(dst.slice));
        dword_pitches &= src.slice.is_multiple_of(4) && dst.slice.is_multiple_of(4);
    }
    let fits = |v: u64, max: u32| (1..=max as u64).contains(&(v >> elem));
    let slices_fit = depth == 1 || (fits(src.slice, SUBWIN_SLICE_MAX) && fits(dst.slice, SUBWIN_SLICE_MAX));
    if !(dword_pitches && fits(src.pitch, SUBWIN_PITCH_MAX) && fits(dst.pitch, SUBWIN_PITCH_MAX) && slices_fit) {
        return Box::new((0..depth).flat_map(move |z| {
            (0..height).flat_map(move |y| {
                let s = src.addr.wrapping_add(z.wrapping_mul(src.slice)).wrapping_add(y.wrapping_mul(src.pitch));
                let d = dst.addr.wrapping_add(z.wrapping_mul(dst.slice)).wrapping_add(y.wrapping_mul(dst.pitch));
                let mut v = Vec::with_capacity(7);
                copy_linear(&mut v, d, s, width);
                decode_all(&v).expect("COPY_LINEAR encodes and decodes")
            })
        }));
    }
    let tile_w = (SUBWIN_XY_MAX as u64) << elem;
    let (ty, tz) = (SUBWIN_XY_MAX as u64, SUBWIN_Z_MAX as u64);
    Box::new((0..depth.div_ceil(tz)).flat_map(move |zi| {
        (0..height.div_ceil(ty)).flat_map(move |yi| {
            (0..width.div_ceil(tile_w)).map(move |xi| {
                let (z0, y0, x0) = (zi * tz, yi * ty, xi * tile_w);
                let side = |p: Pitched| {
                    let a = p.addr.wrapping_add(z0 * p.slice).wrapping_add(y0 * p.pitch).wrapping_add(x0);
                    SubWindow {
                        addr: a & !3,
                        x: ((a & 3) >> elem) as u32,
                        y: 0,
                        z: 0,
                        pitch: (p.pitch >> elem) as u32,
                        slice: if depth > 1 { (p.slice >> elem) as u32 } else { 1 },
                    }
                };
                Packet::CopySubWindow {
                    elem,
                    src: side(src),
                    dst: side(dst),
                    rect_x: ((width - x0).min(tile_w) >> elem) as u32,
                    rect_y: (height - y0).min(ty) as u32,
                    rect_z: (depth - z0).min(tz) as u32,
                }
            })
        })
    }))
}

/// Appends CONST_FILL packets writing the dword `value` over `bytes` bytes at `dst`, split into
/// packets of at most [`CONST_FILL_MAX_BYTES`] (ROCr `BuildFillCommand`). `dst` and `bytes` must be
/// multiples of 4 (byte/short memsets are the caller's job: expand the pattern, handle the edges
/// with [`write_linear`]). `bytes == 0` appends nothing. Returns the number of packets (5 dwords
/// each); on error nothing is appended.
pub fn const_fill(out: &mut Vec<u32>, dst: u64, value: u32, bytes: u64) -> Result<usize, EncodeError> {
    check_align("CONST_FILL dst", dst, 4)?;
    if bytes & 3 != 0 {
        return Err(EncodeError::Misaligned { field: "CONST_FILL bytes", addr: bytes, align: 4 });
    }
    let mut done = 0u64;
    let mut n = 0;
    while done < bytes {
        let chunk = (bytes - done).min(CONST_FILL_MAX_BYTES as u64) as u32;
        Packet::ConstFill { dst: dst.wrapping_add(done), data: value, count: chunk }.encode(out);
        done += chunk as u64;
        n += 1;
    }
    Ok(n)
}

/// Number of CONST_FILL packets [`const_fill`] emits for `bytes` bytes.
pub fn const_fill_packets(bytes: u64) -> usize {
    bytes.div_ceil(CONST_FILL_MAX_BYTES as u64) as usize
}

/// Appends a FENCE writing the dword `value` at `addr` (4-aligned) — 4 dwords.
pub fn fence(out: &mut Vec<u32>, addr: u64, value: u32) -> Result<(), EncodeError> {
    let p = Packet::Fence { addr, data: value };
    p.validate()?;
    p.encode(out);
    Ok(())
}

/// Appends a TRAP with `int_ctx = event_id` (≤ [`TRAP_INT_CTX_MASK`]) — 2 dwords. KFD signals the
/// event only if its event-page slot is not −1, so put a [`fence`] of `event_id` to the slot first
/// (ROCr `InterruptSignal`, tinygrad `AMDCopyQueue.signal`).
pub fn trap(out: &mut Vec<u32>, event_id: u32) -> Result<(), EncodeError> {
    let p = Packet::Trap { int_ctx: event_id };
    p.validate()?;
    p.encode(out);
    Ok(())
}

/// Appends a POLL_REGMEM on memory that waits forever until `(*addr & mask) func value`
/// (interval [`POLL_REGMEM_DEFAULT_INTERVAL`], retry [`POLL_REGMEM_RETRY_FOREVER`], no HDP
/// flush) — 6 dwords. `addr` must be 4-aligned.
pub fn poll_regmem(out: &mut Vec<u32>, addr: u64, func: PollFunc, value: u32, mask: u32) -> Result<(), EncodeError> {
    let p = Packet::PollRegmem {
        addr,
        reference: value,
        mask,
        func,
        interval: POLL_REGMEM_DEFAULT_INTERVAL,
        retry_count: POLL_REGMEM_RETRY_FOREVER,
        hdp_flush: false,
        mem_poll: true,
    };
    p.validate()?;
    p.encode(out);
    Ok(())
}

/// [`poll_regmem`] with `>=` (tinygrad `AMDCopyQueue.wait`: wait for a timeline value).
pub fn poll_regmem_ge(out: &mut Vec<u32>, addr: u64, value: u32, mask: u32) -> Result<(), EncodeError> {
    poll_regmem(out, addr, PollFunc::Ge, value, mask)
}

/// [`poll_regmem`] with `==` (ROCr `BuildPollCommand`: wait for a signal to reach a value).
pub fn poll_regmem_eq(out: &mut Vec<u32>, addr: u64, value: u32, mask: u32) -> Result<(), EncodeError> {
    poll_regmem(out, addr, PollFunc::Eq, value, mask)
}

// ---------------------------------------------------------------------------------------------
// 64-bit sequence counters and their wrap-safe 32-bit polls
// ---------------------------------------------------------------------------------------------

/// Bias of the second word of a sequence counter (see [`seq_signal`]).
pub const SEQ_BIAS: u64 = 1 << 31;
/// How far below its target a polled counter may be when the poll is built (submissions), see
/// [`poll_seq_ge`]. A 256 KiB ring holds fewer than 2^13 submissions.
pub const SEQ_POLL_BELOW: u64 = 1 << 24;
/// How far past its target a polled counter may have gone when the poll first reads it
/// (submissions, ≈ 2^31 − 2^24), see [`poll_seq_ge`].
pub const SEQ_POLL_ABOVE: u64 = (1 << 32) - SEQ_POLL_BELOW - SEQ_BIAS;

/// Appends the completion of sequence number `seq` to the counter at `addr` (16 bytes,
/// 8-aligned): `ATOMIC UMAX64(seq)` on the u64 at `addr` and `ATOMIC UMAX64(seq + SEQ_BIAS)` on
/// the u64 at `addr + 8` — 16 dwords. The first word is the exact 64-bit value the host compares
/// (a 64-bit atomic is single-copy atomic, unlike a pair of 32-bit FENCEs, and UMAX keeps it
/// monotonic when several queues or processes raise one counter); the second exists only for
/// [`poll_seq_ge`]. Errors: `Misaligned` when `addr` is not 8-aligned.
pub fn seq_signal(out: &mut Vec<u32>, addr: u64, seq: u64) -> Result<(), EncodeError> {
    check_align("sequence counter", addr, 8)?;
    atomic(out, AtomicOp::UMax64, addr, seq, 0)?;
    atomic(out, AtomicOp::UMax64, addr + 8, seq.wrapping_add(SEQ_BIAS), 0)
}

/// Appends a POLL_REGMEM that waits until the counter at `addr` (written by [`seq_signal`])
/// reaches the 64-bit `seq` — 6 dwords. Errors: `Misaligned` when `addr` is not 8-aligned.
///
/// POLL_REGMEM compares one dword unsigned (`(value & mask) >= reference`), so a plain poll of
/// the low 32 bits of a 64-bit counter is wrong across a multiple of 2^32: a target just past
/// the wrap (low bits small) passes at once, and a counter that wrapped past a target just below
/// it (low bits small again) never passes. The counter therefore keeps two words, `v` and
/// `v + 2^31`, whose low dwords are the same sequence shifted by half the 32-bit circle, and the
/// poll reads the one in which the target's low dword lies in
/// `[SEQ_POLL_BELOW, SEQ_POLL_BELOW + 2^31)`: there the comparison is exact for every counter
/// value from `seq − SEQ_POLL_BELOW` to `seq + SEQ_POLL_ABOVE`, because no multiple of 2^32
/// falls in that window. It holds when (1) the counter is at most [`SEQ_POLL_BELOW`] (2^24)
/// below the target, which is so for any target already queued (a ring holds < 2^13
/// submissions), and (2) the engine first reads the word before the counter runs more than
/// [`SEQ_POLL_ABOVE`] (≈ 2^31) past the target: at 100,000 submissions a second, a poll queued
/// behind other work may wait about six hours. The host never needs this: it compares the full
/// 64-bit first word.
pub fn poll_seq_ge(out: &mut Vec<u32>, addr: u64, seq: u64) -> Result<(), EncodeError> {
    check_align("sequence counter", addr, 8)?;
    let (word, reference) = seq_poll_word(seq);
    poll_regmem_ge(out, addr + word, reference, u32::MAX)
}

/// The byte offset in the counter (0 or 8) and the 32-bit reference [`poll_seq_ge`] uses for
/// target `seq`.
pub fn seq_poll_word(seq: u64) -> (u64, u32) {
    let lo = seq as u32 as u64;
    if (SEQ_POLL_BELOW..SEQ_POLL_BELOW + SEQ_BIAS).contains(&lo) {
        (0, lo as u32)
    } else {
        (8, seq.wrapping_add(SEQ_BIAS) as u32)
    }
}

/// Appends an ATOMIC `op` at `addr` (aligned to `op.width()`) with operands `src`/`cmp`, no loop
/// — 8 dwords.
pub fn atomic(out: &mut Vec<u32>, op: AtomicOp, addr: u64, src: u64, cmp: u64) -> Result<(), EncodeError> {
    let p = Packet::Atomic { op, addr, src, cmp, loop_cmpswap: false, loop_interval: 0 };
    p.validate()?;
    p.encode(out);
    Ok(())
}

/// Appends `ATOMIC ADD64(value)` at `addr` (8-aligned) — 8 dwords. `value = u64::MAX` decrements
/// (ROCr's signal completion on links with 64-bit atomics).
pub fn atomic_add64(out: &mut Vec<u32>, addr: u64, value: u64) -> Result<(), EncodeError> {
    atomic(out, AtomicOp::Add64, addr, value, 0)
}

/// Appends a TIMESTAMP GET_GLOBAL writing the 64-bit GPU timestamp at `addr` (8-aligned) —
/// 3 dwords.
pub fn timestamp(out: &mut Vec<u32>, addr: u64) -> Result<(), EncodeError> {
    let p = Packet::Timestamp { addr };
    p.validate()?;
    p.encode(out);
    Ok(())
}

/// Appends WRITE_LINEAR packets writing `data` at `dst` (4-aligned), split every
/// [`WRITE_LINEAR_MAX_DWORDS`] dwords — 4 + n dwords each. Empty `data` appends nothing. Returns
/// the number of packets.
pub fn write_linear(out: &mut Vec<u32>, dst: u64, data: &[u32]) -> Result<usize, EncodeError> {
    check_align("WRITE_LINEAR dst", dst, 4)?;
    let mut n = 0;
    for (i, chunk) in data.chunks(WRITE_LINEAR_MAX_DWORDS).enumerate() {
        let at = dst.wrapping_add((i * WRITE_LINEAR_MAX_DWORDS * 4) as u64);
        out.extend_from_slice(&[
            header(SDMA_OP_WRITE, SDMA_SUBOP_WRITE_LINEAR),
            lo(at),
            hi(at),
            chunk.len() as u32 - 1,
        ]);
        out.extend_from_slice(chunk);
        n += 1;
    }
    Ok(n)
}

/// Appends exactly `dwords` dwords of NOP padding (burst NOPs of at most `NOP_MAX_COUNT + 1`
/// dwords each, as `sdma_v4_0_ring_insert_nop`). `dwords == 0` appends nothing.
pub fn nop_pad(out: &mut Vec<u32>, dwords: usize) {
    let mut left = dwords;
    out.reserve(dwords);
    while left > 0 {
        let n = left.min(NOP_MAX_COUNT as usize + 1);
        Packet::Nop { count: n as u32 - 1 }.encode(out);
        left -= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine sees when it polls counter value `v` for target `seq`.
    fn seq_poll_passes(seq: u64, v: u64) -> bool {
        let mut out = vec![];
        poll_seq_ge(&mut out, 0x1000, seq).unwrap();
        let Packet::PollRegmem { addr, reference, mask, func, .. } = Packet::decode(&out).unwrap().0 else {
            panic!("not a poll")
        };
        let word = if addr == 0x1000 { v } else { v.wrapping_add(SEQ_BIAS) };
        assert!(addr == 0x1000 || addr == 0x1008);
        func.test(word as u32, mask, reference)
    }

    #[test]
    fn seq_poll_is_exact_across_the_32_bit_wrap() {
        let edges = [0u64, 1 << 31, 1 << 32, 3 << 31, 5 << 32, SEQ_POLL_BELOW, SEQ_POLL_BELOW + SEQ_BIAS];
        for e in edges {
            for seq in e.saturating_sub(3)..e + 3 {
                for v in (seq.saturating_sub(SEQ_POLL_BELOW)..seq.saturating_sub(SEQ_POLL_BELOW) + 3)
                    .chain(seq.saturating_sub(5000)..seq + 5000)
                    .chain(seq + SEQ_POLL_ABOVE - 3..=seq + SEQ_POLL_ABOVE)
                {
                    assert_eq!(seq_poll_passes(seq, v), v >= seq, "seq {seq:#x} counter {v:#x}");
                }
            }
        }
        // The plain low-dword poll this replaces is wrong there.
        assert!(!PollFunc::Ge.test((1u64 << 32) as u32, u32::MAX, ((1u64 << 32) - 1) as u32));
    }

    #[test]
    fn seq_signal_raises_both_words() {
        let mut out = vec![];
        seq_signal(&mut out, 0x1000, (1 << 32) + 7).unwrap();
        let p = decode_all(&out).unwrap();
        assert_eq!(p.len(), 2);
        assert!(matches!(p[0], Packet::Atomic { op: AtomicOp::UMax64, addr: 0x1000, src, .. } if src == (1 << 32) + 7));
        assert!(
            matches!(p[1], Packet::Atomic { op: AtomicOp::UMax64, addr: 0x1008, src, .. } if src == (1 << 32) + 7 + SEQ_BIAS)
        );
        assert!(seq_signal(&mut out, 0x1004, 1).is_err());
    }

    fn all_packets() -> Vec<Packet> {
        let mut v = vec![
            Packet::Nop { count: 0 },
            Packet::Nop { count: 5 },
            Packet::Nop { count: NOP_MAX_COUNT },
            Packet::CopyLinear { count: 1, src: 0x1234_5678_9abc, dst: 0xfedc_ba98_7654 },
            Packet::CopyLinear { count: COPY_LINEAR_MAX_BYTES, src: 1, dst: 3 },
            Packet::CopyLinearBroadcast { count: 4096, src: 0x1000, dst: [0x7f00_0000_2000, 0x7e00_0000_3000] },
            Packet::ConstFill { dst: 0x7fff_0000_1000, data: 0xdead_beef, count: 4 },
            Packet::ConstFill { dst: 0x1000, data: 0x0101_0101, count: CONST_FILL_MAX_BYTES },
            Packet::Fence { addr: 0x7f00_0000_0004, data: 0xffff_ffff },
            Packet::Trap { int_ctx: 0 },
            Packet::Trap { int_ctx: TRAP_INT_CTX_MASK },
            Packet::Timestamp { addr: 0xffff_ffff_ffff_fff8 },
            Packet::WriteLinear { dst: 0x2000, data: vec![1] },
            Packet::WriteLinear { dst: 0x2004, data: (0..100).collect() },
        ];
        for (i, func) in
            [PollFunc::Always, PollFunc::Lt, PollFunc::Le, PollFunc::Eq, PollFunc::Ne, PollFunc::Ge, PollFunc::Gt]
                .into_iter()
                .enumerate()
        {
            v.push(Packet::PollRegmem {
                addr: 0x7000_0000_0000 + 4 * i as u64,
                reference: i as u32 * 7,
                mask: 0xffff_ff00 | i as u32,
                func,
                interval: 0xffff - i as u16,
                retry_count: 0xfff - i as u16,
                hdp_flush: i % 2 == 0,
                mem_poll: i % 3 != 0,
            });
        }
        for (i, op) in AtomicOp::all().iter().enumerate() {
            v.push(Packet::Atomic {
                op: *op,
                addr: 0x8000_0000 + 8 * i as u64,
                src: 0x1111_2222_3333_4444 ^ i as u64,
                cmp: u64::MAX - i as u64,
                loop_cmpswap: i % 2 == 1,
                loop_interval: 0x1fff - i as u16,
            });
        }
        v
    }

    #[test]
    fn round_trip_every_packet() {
        for p in all_packets() {
            let d = p.to_dwords();
            assert_eq!(d.len(), p.dwords(), "{p:?}");
            assert_eq!(Packet::decode(&d), Ok((p.clone(), d.len())), "{p:?} {d:x?}");
            // Trailing data is not consumed.
            let mut longer = d.clone();
            longer.extend_from_slice(&[0xffff_ffff, 0x1234]);
            assert_eq!(Packet::decode(&longer), Ok((p.clone(), d.len())));
        }
    }

    #[test]
    fn round_trip_stream() {
        let packets = all_packets();
        let mut s = Vec::new();
        for p in &packets {
            p.encode(&mut s);
        }
        assert_eq!(decode_all(&s).unwrap(), packets);
    }

    #[test]
    fn truncated_input_is_an_error_never_a_panic() {
        assert_eq!(Packet::decode(&[]), Err(DecodeError::Truncated { op: 0, needed: 1, available: 0 }));
        for p in all_packets() {
            let d = p.to_dwords();
            for cut in 0..d.len() {
                match Packet::decode(&d[..cut]) {
                    Err(DecodeError::Truncated { needed, available, .. }) => {
                        assert_eq!(available, cut);
                        assert!(needed > cut && needed <= d.len(), "{p:?} cut {cut}");
                    }
                    other => panic!("{p:?} cut at {cut}: {other:?}"),
                }
            }
        }
        // WRITE_LINEAR whose count says more data than present.
        let w = [0x2, 0x1000, 0, 9, 1, 2];
        assert_eq!(Packet::decode(&w), Err(DecodeError::Truncated { op: 2, needed: 14, available: 6 }));
        // Burst NOP announcing more dwords than present.
        assert_eq!(Packet::decode(&[0x0003_0000, 0]), Err(DecodeError::Truncated { op: 0, needed: 4, available: 2 }));
    }

    #[test]
    fn unknown_opcodes_are_rejected() {
        // INDIRECT (4), SEM (7), COND_EXE (9), PTEPDE (12), SRBM_WRITE (14), PRE_EXE (15),
        // DUMMY_TRAP (16), GCR_REQ (17, gfx10+), garbage 0xff.
        for op in [3u32, 4, 7, 9, 12, 14, 15, 16, 17, 0x80, 0xff] {
            let d = [op, 0, 0, 0, 0, 0, 0, 0];
            assert_eq!(
                Packet::decode(&d),
                Err(DecodeError::UnknownOpcode { op: op as u8, sub_op: 0, header: op }),
                "op {op}"
            );
        }
        // Known opcodes with unimplemented sub-ops: COPY_TILED (1/1), COPY_TILED_SUB_WIND (1/5),
        // WRITE_TILED (2/1), DATA_FILL_MULTI (11/1), POLL_REG_WRITE_MEM (8/1), TIMESTAMP_SET/GET
        // (13/0, 13/1), NOP with a sub-op.
        for (op, sub) in [(1u32, 5u32), (1, 1), (2, 1), (11, 1), (8, 1), (13, 0), (13, 1), (0, 1)] {
            let h = op | sub << 8;
            let d = [h, 0, 0, 0, 0, 0, 0, 0];
            assert_eq!(
                Packet::decode(&d),
                Err(DecodeError::UnknownOpcode { op: op as u8, sub_op: sub as u8, header: h })
            );
        }
    }

    #[test]
    fn reserved_fields_are_rejected() {
        // POLL_REGMEM func = 7.
        let d = [8 | 7 << 28 | 1 << 31, 0, 0, 0, 0, 0];
        assert_eq!(Packet::decode(&d), Err(DecodeError::InvalidField { op: 8, field: "func", value: 7 }));
        // ATOMIC op 0x2c (TC_OP_WBINVL2_SD, not an atomic).
        let d = [10 | 0x2c << 25, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(Packet::decode(&d), Err(DecodeError::InvalidField { op: 10, field: "atomic_op", value: 0x2c }));
        // CONST_FILL byte fill (fillsize 0) is not supported.
        let d = [11, 0, 0, 0, 3];
        assert_eq!(Packet::decode(&d), Err(DecodeError::InvalidField { op: 11, field: "fillsize", value: 0 }));
    }

    // ---- known-good images from upstream -------------------------------------------------------

    #[test]
    fn image_copy_linear_kernel() {
        // linux sdma_v4_0_emit_copy_buffer: {OP(COPY)|SUB_OP(COPY_LINEAR), byte_count - 1, 0,
        // lo(src), hi(src), lo(dst), hi(dst)}.
        let (src, dst, n) = (0x0000_0001_2345_6000u64, 0x0000_0002_0000_0040u64, 0x1000u32);
        let img = [0x0000_0001, n - 1, 0, 0x2345_6000, 1, 0x0000_0040, 2];
        let mut out = Vec::new();
        assert_eq!(copy_linear(&mut out, dst, src, n as u64), 1);
        assert_eq!(out, img);
        assert_eq!(Packet::decode(&img), Ok((Packet::CopyLinear { count: n, src, dst }, 7)));
    }

    #[test]
    fn image_copy_linear_broadcast_kfdtest() {
        // kfdtest SDMACopyDataPacket with n = 2: header broadcast bit 27, count - 1, 0, src,
        // dst[0], dst[1]: 9 dwords; the packet after it decodes from dword 9.
        let img = [0x0800_0001, 0xfff, 0, 0x1000, 0, 0x2000, 0x7f, 0x3000, 0x7e, 0x0000_0006, 0x1234];
        let (p, n) = Packet::decode(&img).unwrap();
        assert_eq!(
            (p, n),
            (Packet::CopyLinearBroadcast { count: 0x1000, src: 0x1000, dst: [0x7f_0000_2000, 0x7e_0000_3000] }, 9)
        );
        assert_eq!(Packet::decode(&img[9..]), Ok((Packet::Trap { int_ctx: 0x1234 }, 2)));
        assert_eq!(
            Packet::decode(&img[..8]),
            Err(DecodeError::Truncated { op: SDMA_OP_COPY, needed: 9, available: 8 })
        );
        let mut out = Vec::new();
        Packet::CopyLinearBroadcast { count: 0x1000, src: 0x1000, dst: [0x7f_0000_2000, 0x7e_0000_3000] }
            .encode(&mut out);
        assert_eq!(out, img[..9]);
    }

    #[test]
    fn image_fence_and_trap_kernel() {
        // linux sdma_v4_0_ring_emit_fence: {OP(FENCE), lo(addr), hi(addr), lo(seq)} then
        // {OP(TRAP), INT_CONTEXT(0)}.
        let addr = 0x0000_7fff_1234_5670u64;
        let img = [0x0000_0005, 0x1234_5670, 0x0000_7fff, 42, 0x0000_0006, 0];
        let mut out = Vec::new();
        fence(&mut out, addr, 42).unwrap();
        trap(&mut out, 0).unwrap();
        assert_eq!(out, img);
        assert_eq!(decode_all(&img).unwrap(), vec![Packet::Fence { addr, data: 42 }, Packet::Trap { int_ctx: 0 }]);
    }

    #[test]
    fn image_const_fill_rocr_and_kernel() {
        // ROCr BlitSdma::BuildFillCommand (gfx9, SizeToCountOffset = -1): op = CONST_FILL,
        // fillsize = 2 (header 0x8000000b), count = (dwords - 1) * 4.
        let img = [0x8000_000b, 0x0000_1000, 0x0000_0001, 0xcafe_f00d, (256 - 1) * 4];
        let mut out = Vec::new();
        assert_eq!(const_fill(&mut out, 0x1_0000_1000, 0xcafe_f00d, 1024), Ok(1));
        assert_eq!(out, img);
        assert_eq!(
            Packet::decode(&img),
            Ok((Packet::ConstFill { dst: 0x1_0000_1000, data: 0xcafe_f00d, count: 1024 }, 5))
        );
        // The kernel's byte-count convention (count = bytes - 1, sdma_v4_0_emit_fill_buffer)
        // with a dword fillsize reads the same.
        let img2 = [0x8000_000b, 0x0000_1000, 0x0000_0001, 0xcafe_f00d, 1024 - 1];
        assert_eq!(Packet::decode(&img2).unwrap().0, Packet::decode(&img).unwrap().0);
    }

    #[test]
    fn image_poll_regmem() {
        // ROCr BuildPollCommand / reference §3.5: mem_poll = 1, func = 3 (==), DW5 retry 0xfff,
        // interval 4 -> header 0xb0000008, DW5 0x0fff0004.
        let img = [0xb000_0008, 0x0000_2000, 0x0000_7f00, 0, 0xffff_ffff, 0x0fff_0004];
        let mut out = Vec::new();
        poll_regmem_eq(&mut out, 0x7f00_0000_2000, 0, 0xffff_ffff).unwrap();
        assert_eq!(out, img);
        // tinygrad AMDCopyQueue.wait: func = 5 (>=) -> header 0xd0000008.
        let mut out = Vec::new();
        poll_regmem_ge(&mut out, 0x7f00_0000_2000, 7, 0xffff_ffff).unwrap();
        assert_eq!(out[0], 0xd000_0008);
        // ROCr HDP flush raw packet {0x8, 0x0, 0x80000000, 0, 0, 0}: a register poll, func
        // ALWAYS; it must decode (the simulator treats it as satisfied).
        let hdp = [0x8, 0x0, 0x8000_0000, 0, 0, 0];
        assert_eq!(
            Packet::decode(&hdp),
            Ok((
                Packet::PollRegmem {
                    addr: 0x8000_0000_0000_0000,
                    reference: 0,
                    mask: 0,
                    func: PollFunc::Always,
                    interval: 0,
                    retry_count: 0,
                    hdp_flush: false,
                    mem_poll: false,
                },
                6
            ))
        );
        // linux sdma_v4_0_ring_emit_hdp_flush: HDP_FLUSH(1) | FUNC(3), retry 0xfff, interval 10.
        let (p, _) = Packet::decode(&[0x3400_0008, 0x10, 0x14, 1, 1, 0x0fff_000a]).unwrap();
        assert!(matches!(
            p,
            Packet::PollRegmem {
                hdp_flush: true,
                mem_poll: false,
                func: PollFunc::Eq,
                interval: 10,
                retry_count: 0xfff,
                ..
            }
        ));
    }

    #[test]
    fn image_atomic_add64_decrement() {
        // ROCr / tinygrad signal completion: ATOMIC op = SDMA_ATOMIC_ADD64 (47) << 25 ->
        // header 0x5e00000a, src = -1.
        let addr = 0x7f12_3456_7008u64;
        let img = [0x5e00_000a, 0x3456_7008, 0x7f12, 0xffff_ffff, 0xffff_ffff, 0, 0, 0];
        let mut out = Vec::new();
        atomic_add64(&mut out, addr, u64::MAX).unwrap();
        assert_eq!(out, img);
        let (p, n) = Packet::decode(&img).unwrap();
        assert_eq!(n, 8);
        assert_eq!(
            p,
            Packet::Atomic { op: AtomicOp::Add64, addr, src: u64::MAX, cmp: 0, loop_cmpswap: false, loop_interval: 0 }
        );
        assert_eq!(AtomicOp::Add64.apply(5, u64::MAX, 0), 4);
    }

    #[test]
    fn image_timestamp_and_nop() {
        // TIMESTAMP GET_GLOBAL: OP 13 | SUB_OP 2 << 8 = 0x20d; DW1 = addr bits [31:3] in place.
        let img = [0x0000_020d, 0x0000_1008, 0x0000_0007];
        let mut out = Vec::new();
        timestamp(&mut out, 0x7_0000_1008).unwrap();
        assert_eq!(out, img);
        assert_eq!(Packet::decode(&img), Ok((Packet::Timestamp { addr: 0x7_0000_1008 }, 3)));
        // Low bits of DW1 are not address bits.
        assert_eq!(Packet::decode(&[0x20d, 0x100f, 0]).unwrap().0, Packet::Timestamp { addr: 0x1008 });
        // linux sdma_v4_0_ring_insert_nop with burst_nop, count = 8: 0x00070000 then 7 NOPs (0).
        let mut out = Vec::new();
        nop_pad(&mut out, 8);
        assert_eq!(out, [0x0007_0000, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_all(&out).unwrap(), vec![Packet::Nop { count: 7 }]);
        // A zero dword is a single NOP (ROCr pads ring wrap with zeros).
        assert_eq!(decode_all(&[0, 0, 0]).unwrap(), vec![Packet::Nop { count: 0 }; 3]);
    }

    #[test]
    fn image_write_linear_kernel() {
        // linux sdma_v4_0_vm_write_pte (count = 1 PTE): {OP(WRITE)|SUB_OP(WRITE_LINEAR),
        // lo(pe), hi(pe), ndw - 1, lo(value), hi(value)}.
        let img = [0x0000_0002, 0x0000_3000, 0x0000_0001, 1, 0x89ab_cdef, 0x0123_4567];
        let mut out = Vec::new();
        assert_eq!(write_linear(&mut out, 0x1_0000_3000, &[0x89ab_cdef, 0x0123_4567]), Ok(1));
        assert_eq!(out, img);
        assert_eq!(
            Packet::decode(&img),
            Ok((Packet::WriteLinear { dst: 0x1_0000_3000, data: vec![0x89ab_cdef, 0x0123_4567] }, 6))
        );
    }

    // ---- splitting -------------------------------------------------------------------------

    fn copies(s: &[u32]) -> Vec<(u32, u64, u64)> {
        decode_all(s)
            .unwrap()
            .into_iter()
            .map(|p| match p {
                Packet::CopyLinear { count, src, dst } => (count, src, dst),
                p => panic!("{p:?}"),
            })
            .collect()
    }

    #[test]
    fn copy_splits_at_exact_limit() {
        let m = COPY_LINEAR_MAX_BYTES as u64;
        let mut s = Vec::new();
        assert_eq!(copy_linear(&mut s, 0x1000, 0x2000, 0), 0);
        assert!(s.is_empty());
        assert_eq!(copy_linear(&mut s, 0x1000, 0x2000, m), 1);
        assert_eq!(s[1], COPY_LINEAR_COUNT_MASK);
        assert_eq!(copies(&s), vec![(COPY_LINEAR_MAX_BYTES, 0x2000, 0x1000)]);
        s.clear();
        assert_eq!(copy_linear(&mut s, 0x1000, 0x2000, m + 1), 2);
        assert_eq!(copies(&s), vec![(COPY_LINEAR_MAX_BYTES, 0x2000, 0x1000), (1, 0x2000 + m, 0x1000 + m)]);
        s.clear();
        assert_eq!(copy_linear(&mut s, 0x10, 0x30, 3 * m - 5), 3);
        let c = copies(&s);
        assert_eq!(c.iter().map(|c| c.0 as u64).sum::<u64>(), 3 * m - 5);
        assert_eq!(c[2], ((m - 5) as u32, 0x30 + 2 * m, 0x10 + 2 * m));
        assert_eq!(copy_linear_packets(3 * m - 5), 3);
        assert_eq!(copy_linear_packets(0), 0);
        // An 8 GiB copy: 8 packets, contiguous.
        s.clear();
        assert_eq!(copy_linear(&mut s, 0, 1 << 40, 8 << 30), 8);
        assert_eq!(s.len(), 8 * 7);
    }

    #[test]
    fn fill_splits_at_exact_limit() {
        let m = CONST_FILL_MAX_BYTES as u64;
        let fills = |s: &[u32]| -> Vec<(u64, u32, u32)> {
            decode_all(s)
                .unwrap()
                .into_iter()
                .map(|p| match p {
                    Packet::ConstFill { dst, data, count } => (dst, data, count),
                    p => panic!("{p:?}"),
                })
                .collect()
        };
        let mut s = Vec::new();
        assert_eq!(const_fill(&mut s, 0x1000, 7, 0), Ok(0));
        assert!(s.is_empty());
        assert_eq!(const_fill(&mut s, 0x1000, 7, m), Ok(1));
        assert_eq!(fills(&s), vec![(0x1000, 7, CONST_FILL_MAX_BYTES)]);
        s.clear();
        assert_eq!(const_fill(&mut s, 0x1000, 7, m + 4), Ok(2));
        assert_eq!(fills(&s), vec![(0x1000, 7, CONST_FILL_MAX_BYTES), (0x1000 + m, 7, 4)]);
        s.clear();
        assert_eq!(const_fill(&mut s, 0x1000, 9, 1 << 30), Ok(const_fill_packets(1 << 30)));
        assert_eq!(fills(&s).iter().map(|f| f.2 as u64).sum::<u64>(), 1 << 30);
        // Preconditions: nothing appended on error.
        s.clear();
        assert!(matches!(const_fill(&mut s, 0x1002, 0, 8), Err(EncodeError::Misaligned { .. })));
        assert!(matches!(const_fill(&mut s, 0x1000, 0, 6), Err(EncodeError::Misaligned { .. })));
        assert!(s.is_empty());
    }

    #[test]
    fn nop_pad_exact_lengths() {
        for n in [0usize, 1, 2, 7, 0x4000, 0x4001, 0x8000 + 3] {
            let mut s = vec![0xabcd];
            nop_pad(&mut s, n);
            assert_eq!(s.len(), n + 1);
            let packets = decode_all(&s[1..]).unwrap();
            assert!(packets.iter().all(|p| matches!(p, Packet::Nop { .. })));
            assert_eq!(packets.iter().map(|p| p.dwords()).sum::<usize>(), n);
        }
    }

    #[test]
    fn builder_preconditions() {
        let mut s = Vec::new();
        assert!(fence(&mut s, 0x1002, 0).is_err());
        assert!(timestamp(&mut s, 0x1004).is_err());
        assert!(trap(&mut s, 0x1000_0000).is_err());
        assert!(atomic_add64(&mut s, 0x1004, 1).is_err());
        assert!(atomic(&mut s, AtomicOp::Add32, 0x1004, 1, 0).is_ok());
        assert!(poll_regmem_ge(&mut s, 0x1001, 1, !0).is_err());
        assert!(write_linear(&mut s, 0x1002, &[1]).is_err());
        assert_eq!(s.len(), 8, "only the valid ATOMIC was appended");
        assert_eq!(write_linear(&mut s, 0x1000, &[]), Ok(0));
        assert_eq!(s.len(), 8);
        // WRITE_LINEAR split at its limit.
        let mut s = Vec::new();
        let data = vec![5u32; WRITE_LINEAR_MAX_DWORDS + 1];
        assert_eq!(write_linear(&mut s, 0x1000, &data), Ok(2));
        let p = decode_all(&s).unwrap();
        assert_eq!(p[1], Packet::WriteLinear { dst: 0x1000 + 4 * WRITE_LINEAR_MAX_DWORDS as u64, data: vec![5] });
    }

    #[test]
    #[should_panic(expected = "invalid SDMA packet")]
    fn encode_rejects_out_of_range_fields() {
        Packet::CopyLinear { count: COPY_LINEAR_MAX_BYTES + 1, src: 0, dst: 0 }.to_dwords();
    }

    #[test]
    fn poll_func_semantics() {
        assert!(PollFunc::Ge.test(10, !0, 10));
        assert!(!PollFunc::Ge.test(9, !0, 10));
        assert!(PollFunc::Eq.test(0x1_00, 0xff, 0));
        assert!(PollFunc::Ne.test(1, !0, 0));
        assert!(PollFunc::Lt.test(1, !0, 2) && PollFunc::Le.test(2, !0, 2) && PollFunc::Gt.test(3, !0, 2));
        assert!(PollFunc::Always.test(0, 0, 1));
        assert_eq!(PollFunc::from_bits(7), None);
    }

    #[test]
    fn atomic_semantics() {
        assert_eq!(AtomicOp::CmpSwap64.apply(5, 9, 5), 9);
        assert_eq!(AtomicOp::CmpSwap64.apply(6, 9, 5), 6);
        assert_eq!(AtomicOp::Add32.apply(0xffff_ffff, 2, 0), 1);
        assert_eq!(AtomicOp::SMin64.apply(u64::MAX, 3, 0), u64::MAX); // -1 < 3
        assert_eq!(AtomicOp::Inc32.apply(4, 4, 0), 0);
        assert_eq!(AtomicOp::Dec64.apply(0, 7, 0), 7);
        for op in AtomicOp::all() {
            assert_eq!(AtomicOp::from_bits(*op as u32), Some(*op));
            assert!(op.is_64bit() == (op.width() == 8));
        }
    }
}

#[cfg(test)]
mod sub_window_tests {
    use super::*;

    #[test]
    fn sub_window_layout_and_limits() {
        let side = |addr, x, pitch, slice| SubWindow { addr, x, y: 2, z: 1, pitch, slice };
        let p = Packet::CopySubWindow {
            elem: 2,
            src: side(0x1000_0000_1000, 1, 64, 64 * 16),
            dst: side(0x2000_0000_2000, 3, SUBWIN_PITCH_MAX, SUBWIN_SLICE_MAX),
            rect_x: SUBWIN_XY_MAX,
            rect_y: 5,
            rect_z: SUBWIN_Z_MAX,
        };
        let dw = p.to_dwords();
        assert_eq!(dw.len(), 13);
        // Header: op COPY, sub-op 4, elementsize in [31:29] (vega10_sdma_pkt_open.h).
        assert_eq!(dw[0], 1 | 4 << 8 | 2 << 29);
        assert_eq!(&dw[1..6], &[0x1000, 0x1000, 1 | 2 << 16, 1 | 63 << 16, 64 * 16 - 1]);
        assert_eq!(&dw[6..11], &[0x2000, 0x2000, 3 | 2 << 16, 1 | 0x3fff << 16, 0x0fff_ffff]);
        assert_eq!(&dw[11..], &[0x3fff | 4 << 16, 0x7ff]);
        assert_eq!(Packet::decode(&dw).unwrap(), (p.clone(), 13));
        // Limits: elementsize 5, rect 0, pitch over 14 bits, unaligned base, pitch not whole dwords.
        let bad = |f: &dyn Fn(&mut Packet)| {
            let mut q = p.clone();
            f(&mut q);
            q.validate().is_err()
        };
        assert!(bad(&|q| if let Packet::CopySubWindow { elem, .. } = q {
            *elem = 5
        }));
        assert!(bad(&|q| if let Packet::CopySubWindow { rect_y, .. } = q {
            *rect_y = 0
        }));
        assert!(bad(&|q| if let Packet::CopySubWindow { rect_z, .. } = q {
            *rect_z = SUBWIN_Z_MAX + 1
        }));
        assert!(bad(&|q| if let Packet::CopySubWindow { src, .. } = q {
            src.pitch = SUBWIN_PITCH_MAX + 1
        }));
        assert!(bad(&|q| if let Packet::CopySubWindow { src, .. } = q {
            src.addr += 2
        }));
        assert!(bad(&|q| if let Packet::CopySubWindow { elem, src, .. } = q {
            *elem = 0;
            src.pitch = 63;
        }));
        let mut dw5 = dw.clone();
        dw5[0] |= 5 << 29;
        assert!(matches!(Packet::decode(&dw5), Err(DecodeError::InvalidField { field: "elementsize", .. })));
        assert!(matches!(Packet::decode(&dw[..12]), Err(DecodeError::Truncated { needed: 13, .. })));
    }

    #[test]
    fn copy_3d_tiles_and_falls_back() {
        let p = |addr, pitch, slice| Pitched { addr, pitch, slice };
        // 16-byte elements where everything is a multiple of 16.
        let v: Vec<_> = copy_3d(p(0x1000, 256, 4096), p(0x9000, 512, 8192), 128, 3, 2).collect();
        assert_eq!(v.len(), 1);
        let Packet::CopySubWindow { elem, rect_x, rect_y, rect_z, src, .. } = v[0] else { panic!() };
        assert_eq!((elem, rect_x, rect_y, rect_z, src.pitch, src.slice), (4, 8, 3, 2, 32, 512));
        // Odd base: byte elements, base aligned down, the rest as the x origin.
        let v: Vec<_> = copy_3d(p(0x1003, 256, 0), p(0x9001, 512, 0), 100, 40_000, 1).collect();
        assert_eq!(v.len(), 3, "rows tiled by 2^14");
        let Packet::CopySubWindow { elem, src, dst, rect_y, .. } = v[2] else { panic!() };
        assert_eq!((elem, src.addr & 3, src.x, dst.x, rect_y), (0, 0, 1, 3, 40_000 - 2 * SUBWIN_XY_MAX));
        for q in &v {
            q.validate().unwrap();
        }
        // A pitch the packet cannot express, or not whole dwords: one COPY_LINEAR per row.
        let v: Vec<_> = copy_3d(p(0, 1 << 20, 0), p(0, 256, 0), 64, 9, 1).collect();
        assert_eq!(v.len(), 9);
        assert!(v.iter().all(|q| matches!(q, Packet::CopyLinear { count: 64, .. })));
        let v: Vec<_> = copy_3d(p(0, 102, 0), p(0, 256, 0), 64, 2, 1).collect();
        assert!(matches!(v[1], Packet::CopyLinear { dst: 102, src: 256, count: 64 }));
    }
}
