//! The MEC's PM4 compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE`, `KFD_QUEUE_FORMAT_PM4`): the
//! gfx9 CP's packet semantics, with kernel dispatches run by the gfx90a interpreter.
//!
//! Ring and pointers (gfx9, 64-bit doorbells): the ring is `ring_size` bytes of dwords; the
//! doorbell (and the write-pointer location) holds the write pointer in dwords, counting up
//! without wrapping; the CP reports its read pointer to the queue's read-pointer location as a
//! 32-bit dword offset into the ring (it wraps at the ring size: kfdtest `PM4Queue::Rptr`), after
//! every packet. A packet whose dwords are not all below the write pointer waits for them.
//!
//! Packets: type 3 (header: opcode bits 15:8, `count` bits 29:16 = dwords after the header − 1,
//! bit 1 shader type, type bits 31:30; soc15d.h `PACKET3`), and the 1-dword type-2 filler. A
//! type-3 NOP with `count` 0x3fff is one dword (the gfx9 ring padding, `PACKET3(PACKET3_NOP,
//! 0x3FFF)`; kfdtest `CMD_NOP_TYPE_3`). The MEC opcodes modelled (soc15d.h `PACKET3_*`, layouts
//! of the MEC forms in kfdtest's `pm4_pkt_struct_*.h`):
//! - NOP (0x10), ACQUIRE_MEM (0x58), EVENT_WRITE (0x46): caches and pipeline flushes; with packets
//!   run one at a time to completion on coherent host memory there is nothing left to do.
//! - SET_SH_REG (0x76): DW1 bits 15:0 = register offset from 0x2c00 (`PACKET3_SET_SH_REG_START`),
//!   then the values of consecutive registers: the queue's SH register file.
//! - DISPATCH_DIRECT (0x15): DIM_X/Y/Z, DISPATCH_INITIATOR. Runs the compute registers
//!   ([`Regs::dispatch`]) on the interpreter; the packet completes when every wave has ended.
//! - WRITE_DATA (0x37): DW1 dst_sel bits 11:8 (memory: 5, or TC_L2: 2), wr_one_addr bit 16;
//!   DW2-3 address; the data dwords follow.
//! - RELEASE_MEM (0x49): DW2 int_sel bits 26:24, data_sel bits 31:29; DW3-4 address; DW5-6 data;
//!   DW7 int_ctxid. data_sel 0 none, 1 the low 32 bits, 2 all 64, 3 the GPU clock; int_sel 0 none,
//!   1/2 an end-of-pipe interrupt (after the write), 3 the write only. The interrupt is the CP's
//!   END_OF_PIPE, whose context id `event_interrupt_wq_v9` hands to
//!   `kfd_signal_event_interrupt` as the SDMA TRAP's.
//! - WAIT_REG_MEM (0x3c): DW1 function bits 2:0 (always, <, <=, ==, !=, >=, >), mem_space bits 5:4
//!   (1 memory, 0 register); DW2-3 address; DW4 reference; DW5 mask. A memory wait polls until
//!   `(value & mask) function reference`; a register wait passes (no registers are modelled,
//!   as SDMA POLL_REGMEM).
//! - INDIRECT_BUFFER (0x3f): DW1-2 address (bits 1:0 clear, high 16 bits), DW3 size in dwords
//!   bits 19:0. The IB's packets run as part of this one; a WAIT_REG_MEM inside it resumes there
//!   ([`Pm4State`]). An IB inside an IB is not modelled.
//! - anything else (type 0/1 register writes, other opcodes, reserved field values) stops the
//!   queue with a fault at the packet, as an AQL packet the model does not know.

use super::aql::Pass;
use super::gpuvm::{Fault, FaultKind};
use super::queue::QueueRt;
use super::sdma::{read_dwords, read_va, write_va};
use kfd_ioctl::sdma::PollFunc;
use std::sync::atomic::Ordering;

pub const PACKET3_NOP: u32 = 0x10;
pub const PACKET3_DISPATCH_DIRECT: u32 = 0x15;
pub const PACKET3_WRITE_DATA: u32 = 0x37;
pub const PACKET3_WAIT_REG_MEM: u32 = 0x3c;
pub const PACKET3_INDIRECT_BUFFER: u32 = 0x3f;
pub const PACKET3_EVENT_WRITE: u32 = 0x46;
pub const PACKET3_RELEASE_MEM: u32 = 0x49;
pub const PACKET3_ACQUIRE_MEM: u32 = 0x58;
pub const PACKET3_SET_SH_REG: u32 = 0x76;

/// `PACKET3_SET_SH_REG_START`: SET_SH_REG offsets count from this register (dword offset).
pub const SH_REG_START: u32 = 0x2c00;
/// SH registers the model keeps (0x2c00..0x3000).
const SH_REGS: usize = 0x400;

/// The `COMPUTE_*` registers a dispatch reads (gfx_9_0_offset.h, absolute dword offsets).
pub mod reg {
    pub const COMPUTE_START_X: u32 = 0x2e04;
    pub const COMPUTE_NUM_THREAD_X: u32 = 0x2e07;
    pub const COMPUTE_PGM_LO: u32 = 0x2e0c;
    pub const COMPUTE_PGM_HI: u32 = 0x2e0d;
    pub const COMPUTE_PGM_RSRC1: u32 = 0x2e12;
    pub const COMPUTE_PGM_RSRC2: u32 = 0x2e13;
    pub const COMPUTE_TMPRING_SIZE: u32 = 0x2e18;
    pub const COMPUTE_PGM_RSRC3: u32 = 0x2e2d;
    pub const COMPUTE_USER_DATA_0: u32 = 0x2e40;
}

/// A type-3 packet header (soc15d.h `PACKET3`, with SHADER_TYPE = compute as the MEC wants it).
pub fn packet3(op: u32, count: u32) -> u32 {
    3 << 30 | (count & 0x3fff) << 16 | (op & 0xff) << 8 | 1 << 1
}

/// A queue's CP state between packets: the SH registers and an interrupted indirect buffer.
pub struct Pm4State {
    sh: Box<[u32; SH_REGS]>,
    /// An INDIRECT_BUFFER stopped at a WAIT_REG_MEM: the ring read pointer of the
    /// INDIRECT_BUFFER packet and the IB dword to resume at.
    ib_resume: Option<(u64, usize)>,
}

impl Default for Pm4State {
    fn default() -> Self {
        Pm4State { sh: Box::new([0; SH_REGS]), ib_resume: None }
    }
}

impl Pm4State {
    fn get(&self, r: u32) -> u32 {
        self.sh[(r - SH_REG_START) as usize]
    }

    /// The dispatch DISPATCH_DIRECT (`dims`, `initiator`) starts from the registers (see
    /// [`amdgcn_isa::ComputeRegisters`]): COMPUTE_PGM_LO/HI (address >> 8; PGM_HI bits 7:0),
    /// RSRC1/2/3, USER_DATA_0..15, NUM_THREAD_X/Y/Z (NUM_THREAD_FULL, bits 15:0) as the
    /// workgroup size; DISPATCH_INITIATOR.USE_THREAD_DIMENSIONS (bit 5) makes `dims` work-items,
    /// else workgroups. COMPUTE_TMPRING_SIZE.WAVESIZE (bits 24:12, 1 KiB per wave) gives the
    /// scratch per work-item when RSRC2.SCRATCH_EN is set. Errors: COMPUTE_START_* other than
    /// 0 (not modelled), a grid past 2^32 work-items per dimension.
    fn dispatch(&self, dims: [u32; 3], initiator: u32) -> Result<amdgcn_isa::Dispatch, String> {
        let start: Vec<u32> = (0..3).map(|k| self.get(reg::COMPUTE_START_X + k)).collect();
        if start.iter().any(|s| *s != 0) {
            return Err(format!("COMPUTE_START_X/Y/Z {start:?} (only 0 is modelled)"));
        }
        let wg: [u16; 3] =
            std::array::from_fn(|k| (self.get(reg::COMPUTE_NUM_THREAD_X + k as u32) & 0xffff).min(0xffff) as u16);
        let threads = initiator & (1 << 5) != 0;
        let mut grid = [0u32; 3];
        for k in 0..3 {
            let n = if threads { dims[k] as u64 } else { dims[k] as u64 * wg[k] as u64 };
            grid[k] = u32::try_from(n).map_err(|_| format!("grid of {n} work-items in dimension {k}"))?;
        }
        let pgm = (self.get(reg::COMPUTE_PGM_LO) as u64 | ((self.get(reg::COMPUTE_PGM_HI) & 0xff) as u64) << 32) << 8;
        let rsrc2 = self.get(reg::COMPUTE_PGM_RSRC2);
        let scratch_per_lane =
            if rsrc2 & 1 != 0 { ((self.get(reg::COMPUTE_TMPRING_SIZE) >> 12) & 0x1fff) * 1024 / 64 } else { 0 };
        let registers = amdgcn_isa::ComputeRegisters {
            pgm_addr: pgm,
            pgm_rsrc1: self.get(reg::COMPUTE_PGM_RSRC1),
            pgm_rsrc2: rsrc2,
            pgm_rsrc3: self.get(reg::COMPUTE_PGM_RSRC3),
            user_data: std::array::from_fn(|i| self.get(reg::COMPUTE_USER_DATA_0 + i as u32)),
        };
        Ok(amdgcn_isa::Dispatch {
            grid_size: grid,
            workgroup_size: wg,
            private_segment_size: scratch_per_lane,
            registers: Some(registers),
            ..Default::default()
        })
    }
}

/// Dwords of the packet whose header is `h`, or None for a header the CP rejects (types 0
/// and 1: register writes, not allowed in a user queue).
pub fn packet_dwords(h: u32) -> Option<u64> {
    match h >> 30 {
        2 => Some(1),
        3 => {
            let count = (h >> 16) & 0x3fff;
            Some(if (h >> 8) & 0xff == PACKET3_NOP && count == 0x3fff { 1 } else { count as u64 + 2 })
        }
        _ => None,
    }
}

/// How a packet ended.
enum Outcome {
    Done,
    /// A WAIT_REG_MEM is not satisfied yet: run the packet again later.
    Wait,
}

fn qword(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// Runs the packets of PM4 queue `q` between its read pointer and its doorbell.
pub fn run(q: &QueueRt) -> Pass {
    let mut pass = Pass { progress: false, waiting: false, events: Vec::new(), fault: None };
    let Ok(wptr) = q.doorbell.read_u64(q.doorbell_off) else { return pass };
    let (ring_base, ring_size) = q.ring();
    let ndw = ring_size / 4;
    let mut rptr = q.rptr.load(Ordering::Acquire);
    if wptr.wrapping_sub(rptr) > ndw {
        // A write pointer the ring cannot hold: an invalid queue state.
        pass.fault = Some(Fault { va: ring_base & !0xfff, kind: FaultKind::NotPresent });
        return pass;
    }
    let mut st = q.pm4.lock();
    // The CP's fetcher: the dwords published between the read and the write pointer are read in
    // one go (two reads at the wrap), not one access per dword: a USERPTR ring (libhsakmt's
    // system memory) costs a system call per access. Where that read faults, dwords are read one
    // at a time so that the fault is raised at its packet.
    let window = fetch(q, ring_base, ndw, rptr, wptr).unwrap_or_default();
    let first = rptr;
    let ring_dw = |i: u64| -> Result<u32, Fault> {
        if let Some(&d) = i.checked_sub(first).and_then(|k| window.get(k as usize)) {
            return Ok(d);
        }
        let mut b = [0u8; 4];
        read_va(&q.vm.read(), ring_base + (i % ndw) * 4, &mut b)?;
        Ok(u32::from_le_bytes(b))
    };
    // The read-pointer report is written once the pass stops (all packets consumed, a wait, a
    // fault), as the CP's report trails its fetches.
    let report = |rptr: u64| {
        let _ = write_va(&q.vm.read(), q.rptr_va, &((rptr % ndw) as u32).to_le_bytes());
    };
    while rptr < wptr && !q.stopped.load(Ordering::Acquire) && q.active.load(Ordering::Acquire) {
        let at = ring_base + (rptr % ndw) * 4;
        let h = match ring_dw(rptr) {
            Ok(h) => h,
            Err(f) => {
                pass.fault = Some(f);
                break;
            }
        };
        let Some(len) = packet_dwords(h) else {
            trace(q, rptr, &format_args!("invalid packet header {h:#010x}"));
            pass.fault = Some(Fault { va: at & !0xfff, kind: FaultKind::NotPresent });
            break;
        };
        if rptr + len > wptr {
            // The rest of the packet is not published yet.
            break;
        }
        let dw: Result<Vec<u32>, Fault> = (0..len).map(|i| ring_dw(rptr + i)).collect();
        let r = dw.and_then(|dw| exec(q, &mut st, &dw, Some(rptr), &mut pass.events));
        match r {
            Ok(Outcome::Done) => {
                rptr += len;
                pass.progress = true;
                q.rptr.store(rptr, Ordering::Release);
            }
            Ok(Outcome::Wait) => {
                pass.waiting = true;
                break;
            }
            Err(f) => {
                pass.fault = Some(f);
                break;
            }
        }
    }
    if pass.progress {
        // The CP's read-pointer report: a 32-bit dword offset into the ring.
        report(rptr);
    }
    pass
}

/// The ring's dwords `[rptr, wptr)` (pointers in dwords, the ring `ndw` dwords at `base`).
fn fetch(q: &QueueRt, base: u64, ndw: u64, rptr: u64, wptr: u64) -> Result<Vec<u32>, Fault> {
    let n = wptr.saturating_sub(rptr).min(ndw);
    let mut bytes = vec![0u8; n as usize * 4];
    let start = rptr % ndw;
    let head = (ndw - start).min(n) as usize * 4;
    let vm = q.vm.read();
    if head > 0 {
        read_va(&vm, base + start * 4, &mut bytes[..head])?;
    }
    if head < bytes.len() {
        read_va(&vm, base, &mut bytes[head..])?;
    }
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn trace(q: &QueueRt, rptr: u64, what: &dyn std::fmt::Display) {
    if crate::model::trace_enabled() {
        crate::trace::emit(format_args!("PM4 queue {} gpu {:#x} rptr {rptr:#x}: {what}", q.queue_id, q.gpu_id));
    }
}

/// Executes one packet (`dw`: header and body). `ring_rptr`: the packet's ring position, None
/// inside an indirect buffer. End-of-pipe interrupts go to `events`.
fn exec(
    q: &QueueRt,
    st: &mut Pm4State,
    dw: &[u32],
    ring_rptr: Option<u64>,
    events: &mut Vec<u32>,
) -> Result<Outcome, Fault> {
    let rptr = ring_rptr.unwrap_or(u64::MAX);
    let h = dw[0];
    let bad = |what: &dyn std::fmt::Display| {
        trace(q, rptr, &format_args!("{what} ({h:#010x}): not modelled; the queue stops"));
        Fault { va: q.ring().0 & !0xfff, kind: FaultKind::NotPresent }
    };
    if h >> 30 == 2 {
        return Ok(Outcome::Done);
    }
    let op = (h >> 8) & 0xff;
    let body = &dw[1..];
    // Every opcode below has at least this many body dwords.
    let need = |n: usize| {
        if body.len() < n {
            Err(bad(&format_args!("opcode {op:#x} with {} dwords", body.len())))
        } else {
            Ok(())
        }
    };
    match op {
        PACKET3_NOP | PACKET3_ACQUIRE_MEM | PACKET3_EVENT_WRITE => {}
        PACKET3_SET_SH_REG => {
            need(2)?;
            let off = (body[0] & 0xffff) as usize;
            if off + body.len() - 1 > SH_REGS {
                return Err(bad(&format_args!("SET_SH_REG of {} registers at {off:#x}", body.len() - 1)));
            }
            st.sh[off..off + body.len() - 1].copy_from_slice(&body[1..]);
            trace(q, rptr, &format_args!("SET_SH_REG {:#x} = {:x?}", off as u32 + SH_REG_START, &body[1..]));
        }
        PACKET3_WRITE_DATA => {
            need(4)?;
            let dst_sel = (body[0] >> 8) & 0xf;
            if dst_sel != 5 && dst_sel != 2 {
                return Err(bad(&format_args!("WRITE_DATA dst_sel {dst_sel}")));
            }
            let addr = qword(body[1] & !3, body[2]);
            let data = &body[3..];
            let vm = q.vm.read();
            if body[0] & (1 << 16) != 0 {
                // wr_one_addr: every dword to the same address.
                for d in data {
                    write_va(&vm, addr, &d.to_le_bytes())?;
                }
            } else {
                let bytes: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
                write_va(&vm, addr, &bytes)?;
            }
            trace(q, rptr, &format_args!("WRITE_DATA {addr:#x} {data:x?}"));
        }
        PACKET3_RELEASE_MEM => {
            need(7)?;
            let (int_sel, data_sel) = ((body[1] >> 24) & 7, (body[1] >> 29) & 7);
            let data = qword(body[4], body[5]);
            let bytes = match data_sel {
                0 => vec![],
                1 => (data as u32).to_le_bytes().to_vec(),
                2 => data.to_le_bytes().to_vec(),
                3 => super::sys::gpu_clock().to_le_bytes().to_vec(),
                _ => return Err(bad(&format_args!("RELEASE_MEM data_sel {data_sel}"))),
            };
            let addr = qword(body[2] & if bytes.len() == 8 { !7 } else { !3 }, body[3]);
            if !bytes.is_empty() {
                write_va(&q.vm.read(), addr, &bytes)?;
            }
            match int_sel {
                0 | 3 => {}
                1 | 2 => events.push(body[6]),
                _ => return Err(bad(&format_args!("RELEASE_MEM int_sel {int_sel}"))),
            }
            trace(
                q,
                rptr,
                &format_args!(
                    "RELEASE_MEM data_sel {data_sel} {addr:#x} = {data:#x}, int_sel {int_sel} ctx {:#x}",
                    body[6]
                ),
            );
        }
        PACKET3_WAIT_REG_MEM => {
            need(6)?;
            let (fbits, mem_space) = (body[0] & 7, (body[0] >> 4) & 3);
            let Some(func) = PollFunc::from_bits(fbits) else {
                return Err(bad(&format_args!("WAIT_REG_MEM function {fbits}")));
            };
            if mem_space == 1 {
                let addr = qword(body[1] & !3, body[2]);
                let mut b = [0u8; 4];
                read_va(&q.vm.read(), addr, &mut b)?;
                if !func.test(u32::from_le_bytes(b), body[4], body[3]) {
                    return Ok(Outcome::Wait);
                }
                trace(q, rptr, &format_args!("WAIT_REG_MEM {addr:#x} {func:?} {:#x} passed", body[3]));
            }
        }
        PACKET3_INDIRECT_BUFFER => {
            need(3)?;
            if ring_rptr.is_none() {
                return Err(bad(&"INDIRECT_BUFFER inside an indirect buffer"));
            }
            let addr = qword(body[0] & !3, body[1] & 0xffff);
            let size = (body[2] & 0xf_ffff) as usize;
            let ib = read_dwords(&q.vm.read(), addr, size)?;
            let mut pos = match st.ib_resume.take() {
                Some((r, p)) if r == rptr => p,
                _ => 0,
            };
            trace(q, rptr, &format_args!("INDIRECT_BUFFER {addr:#x} {size} dwords from {pos}"));
            while pos < ib.len() {
                let Some(n) = packet_dwords(ib[pos]) else {
                    return Err(bad(&format_args!("IB packet header {:#010x}", ib[pos])));
                };
                let n = n as usize;
                if pos + n > ib.len() {
                    return Err(bad(&"IB packet past the IB's end"));
                }
                if let Outcome::Wait = exec(q, st, &ib[pos..pos + n], None, events)? {
                    st.ib_resume = Some((rptr, pos));
                    return Ok(Outcome::Wait);
                }
                pos += n;
            }
        }
        PACKET3_DISPATCH_DIRECT => {
            need(4)?;
            if body[3] & 1 == 0 {
                // COMPUTE_SHADER_EN clear: nothing is launched.
                return Ok(Outcome::Done);
            }
            let d = st.dispatch([body[0], body[1], body[2]], body[3]).map_err(|e| bad(&e))?;
            trace(q, rptr, &format_args!("DISPATCH_DIRECT {d:x?}"));
            super::aql::run_kernel(q, &d)?;
            if q.stopped.load(Ordering::Acquire) {
                // Abandoned by DESTROY_QUEUE: the packet is not consumed.
                return Ok(Outcome::Wait);
            }
        }
        _ => return Err(bad(&format_args!("opcode {op:#x}"))),
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_sizes() {
        assert_eq!(packet_dwords(packet3(PACKET3_NOP, 0x3fff)), Some(1));
        assert_eq!(packet_dwords(0xffff_1002), Some(1), "kfdtest CMD_NOP_TYPE_3");
        assert_eq!(packet_dwords(packet3(PACKET3_NOP, 0)), Some(2));
        assert_eq!(packet_dwords(packet3(PACKET3_RELEASE_MEM, 6)), Some(8));
        assert_eq!(packet_dwords(0x8000_0000), Some(1), "type-2 filler");
        assert_eq!(packet_dwords(0x0000_1234), None, "type 0");
        assert_eq!(packet_dwords(0x4000_0000), None, "type 1");
    }

    #[test]
    fn dispatch_from_registers() {
        let mut st = Pm4State::default();
        let set = |st: &mut Pm4State, r: u32, v: u32| st.sh[(r - SH_REG_START) as usize] = v;
        set(&mut st, reg::COMPUTE_PGM_LO, 0x1234_5600 >> 8 | 0x7f << 24);
        set(&mut st, reg::COMPUTE_PGM_HI, 0x01);
        set(&mut st, reg::COMPUTE_PGM_RSRC2, 4 << 1 | 1 << 7);
        for k in 0..3 {
            set(&mut st, reg::COMPUTE_NUM_THREAD_X + k, [64, 2, 1][k as usize]);
        }
        set(&mut st, reg::COMPUTE_USER_DATA_0 + 3, 77);
        let d = st.dispatch([3, 1, 1], 1).unwrap();
        assert_eq!((d.grid_size, d.workgroup_size), ([192, 2, 1], [64, 2, 1]));
        let r = d.registers.unwrap();
        assert_eq!((r.pgm_addr, r.user_data[3]), (0x017f_1234_5600, 77));
        // USE_THREAD_DIMENSIONS: the dims are work-items.
        assert_eq!(st.dispatch([100, 2, 1], 0x21).unwrap().grid_size, [100, 2, 1]);
        set(&mut st, reg::COMPUTE_START_X, 1);
        assert!(st.dispatch([1, 1, 1], 1).is_err());
    }
}
