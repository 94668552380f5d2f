//! Memory instructions: SMEM (scalar loads), FLAT/GLOBAL/SCRATCH, MUBUF, DS (LDS), with a
//! small per-thread TLB over [`Memory::host_ptr`] so per-lane accesses stay cheap.
//!
//! **Single-copy atomicity.** gfx90a reads and writes each naturally aligned dword and 8-byte
//! part of a lane's access whole: a `flat_store_dwordx4` of `{data, flag, data, flag}` is never
//! seen by another agent's `flat_load_dwordx4` as a new flag beside old data. RCCL's LL protocol
//! (`ncclLLFifoLine`) depends on it. Global memory that other host threads (other waves' and
//! queues' threads, SDMA engines, the CPU) reach is therefore moved here in aligned 8-byte and
//! 4-byte host accesses ([`load_parts`], [`store_parts`]), on every path: the full-wave fast path
//! ([`coalesced`]), per-lane FLAT/GLOBAL/MUBUF accesses, and SMEM. Atomics are host atomics
//! ([`Memory::atomic`]). LDS and scratch are touched only by the host thread that runs the
//! workgroup, so they need nothing more. Unaligned parts have no such guarantee on the hardware
//! and none here.

use crate::decode::{AtomicOp, Enc, Inst, MemKind, Src};
use crate::optab::Op;
use crate::wave::{unsupported, Ty, Wave, APERTURE_SIZE, PRIVATE_BASE, SHARED_BASE};
use crate::{ExecError, Fault, Memory};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const PAGE: u64 = 4096;
/// Entries of the TLB: 64, indexed by the top 6 bits of a 64-bit hash (`Mem::ptr`).
const TLB_SLOTS: usize = 64;

#[derive(Clone, Copy)]
struct TlbEntry {
    /// Page number + 1 (0: empty).
    tag: u64,
    ptr: *mut u8,
    write: bool,
}

/// Reads `dst.len()` bytes at host pointer `p` as gfx90a reads a lane's access: each 8-byte
/// aligned part in one 8-byte load, each other 4-byte aligned part in one 4-byte load, any
/// unaligned rest byte by byte (see the module's doc).
///
/// # Safety
/// `p` is valid for reads of `dst.len()` bytes (other threads may write them concurrently).
#[inline]
unsafe fn load_parts(p: *const u8, dst: &mut [u8]) {
    let n = dst.len();
    let mut i = 0;
    while i < n {
        let q = p.wrapping_add(i);
        // SAFETY (all three arms): `q..q+len` lies inside the caller's valid range, and the
        // atomic arms are aligned for their width.
        if (q as usize).is_multiple_of(8) && n - i >= 8 {
            let v = unsafe { AtomicU64::from_ptr(q as *mut u64) }.load(Ordering::Relaxed);
            dst[i..i + 8].copy_from_slice(&v.to_le_bytes());
            i += 8;
        } else if (q as usize).is_multiple_of(4) && n - i >= 4 {
            let v = unsafe { AtomicU32::from_ptr(q as *mut u32) }.load(Ordering::Relaxed);
            dst[i..i + 4].copy_from_slice(&v.to_le_bytes());
            i += 4;
        } else {
            dst[i] = unsafe { q.read_volatile() };
            i += 1;
        }
    }
}

/// Writes `src` at host pointer `p` in the parts [`load_parts`] reads.
///
/// # Safety
/// `p` is valid for writes of `src.len()` bytes (other threads may access them concurrently).
#[inline]
unsafe fn store_parts(p: *mut u8, src: &[u8]) {
    let n = src.len();
    let mut i = 0;
    while i < n {
        let q = p.wrapping_add(i);
        // SAFETY: as in `load_parts`.
        if (q as usize).is_multiple_of(8) && n - i >= 8 {
            let v = u64::from_le_bytes(src[i..i + 8].try_into().unwrap());
            unsafe { AtomicU64::from_ptr(q as *mut u64) }.store(v, Ordering::Relaxed);
            i += 8;
        } else if (q as usize).is_multiple_of(4) && n - i >= 4 {
            let v = u32::from_le_bytes(src[i..i + 4].try_into().unwrap());
            unsafe { AtomicU32::from_ptr(q as *mut u32) }.store(v, Ordering::Relaxed);
            i += 4;
        } else {
            unsafe { q.write_volatile(src[i]) };
            i += 1;
        }
    }
}

/// Stores `*v` at `q` (`store`) or loads it from there: an aligned dword in one host access
/// (single-copy atomic, see the module's doc), an unaligned one as the bytes come.
///
/// # Safety
/// `q` is valid for 4 bytes of the access (other threads may access them concurrently).
#[inline(always)]
unsafe fn move_dword(q: *mut u32, v: &mut u32, store: bool) {
    // SAFETY: the caller's; the atomic arm is aligned.
    unsafe {
        if (q as usize).is_multiple_of(4) {
            let a = AtomicU32::from_ptr(q);
            if store {
                a.store(*v, Ordering::Relaxed);
            } else {
                *v = a.load(Ordering::Relaxed);
            }
        } else if store {
            q.write_unaligned(*v);
        } else {
            *v = q.read_unaligned();
        }
    }
}

/// A GPU VA space seen through a per-thread TLB of host pointers.
pub struct Mem<'a> {
    pub mem: &'a dyn Memory,
    tlb: [TlbEntry; TLB_SLOTS],
}

impl<'a> Mem<'a> {
    pub fn new(mem: &'a dyn Memory) -> Mem<'a> {
        Mem { mem, tlb: [TlbEntry { tag: 0, ptr: std::ptr::null_mut(), write: false }; TLB_SLOTS] }
    }

    /// A host pointer for `[va, va+len)` when it lies in one host-backed page.
    #[inline]
    fn ptr(&mut self, va: u64, len: usize, write: bool) -> Result<Option<*mut u8>, Fault> {
        let off = va & (PAGE - 1);
        if off + len as u64 > PAGE {
            return Ok(None);
        }
        let page = va / PAGE;
        // Slots by a hash of the page number, not its low bits: buffers allocated at the same
        // offset in 2 MiB-aligned ranges (every hipMalloc) would otherwise share slots and
        // evict each other on every access of a kernel that walks them side by side.
        let slot = &mut self.tlb[(page.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize];
        if slot.tag == page + 1 && (slot.write || !write) {
            if slot.ptr.is_null() {
                return Ok(None);
            }
            // The entry maps the whole page; `off + len <= PAGE`.
            return Ok(Some(slot.ptr.wrapping_add(off as usize)));
        }
        let p = self.mem.host_ptr(page * PAGE, PAGE, write)?;
        *slot = TlbEntry { tag: page + 1, ptr: p.unwrap_or(std::ptr::null_mut()), write };
        Ok(p.map(|p| p.wrapping_add(off as usize)))
    }

    pub fn read(&mut self, va: u64, dst: &mut [u8]) -> Result<(), Fault> {
        match self.ptr(va, dst.len(), false)? {
            // SAFETY: `host_ptr` promised `[page, page+4096)` is host memory valid for the
            // dispatch; `[va, va+len)` lies inside that page (checked in `ptr`). Other waves
            // may write it concurrently, as GPU memory allows; bytes are copied without
            // forming references.
            Some(p) => unsafe { load_parts(p, dst) },
            None => self.mem.read(va, dst)?,
        }
        Ok(())
    }

    pub fn write(&mut self, va: u64, src: &[u8]) -> Result<(), Fault> {
        match self.ptr(va, src.len(), true)? {
            // SAFETY: as in `read`, with the page mapped writable (asked with `write`).
            Some(p) => unsafe { store_parts(p, src) },
            None => self.mem.write(va, src)?,
        }
        Ok(())
    }

    #[inline]
    pub fn read_u32(&mut self, va: u64) -> Result<u32, Fault> {
        if let Some(p) = self.ptr(va, 4, false)? {
            let mut b = [0u8; 4];
            // SAFETY: as in `read`; 4 bytes inside the page.
            unsafe { load_parts(p, &mut b) };
            return Ok(u32::from_le_bytes(b));
        }
        let mut b = [0u8; 4];
        self.mem.read(va, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    #[inline]
    pub fn write_u32(&mut self, va: u64, v: u32) -> Result<(), Fault> {
        if let Some(p) = self.ptr(va, 4, true)? {
            // SAFETY: as in `write`; 4 bytes inside the page.
            unsafe { store_parts(p, &v.to_le_bytes()) };
            return Ok(());
        }
        self.mem.write(va, &v.to_le_bytes())
    }
}

/// Per-workgroup state memory instructions reach besides global memory.
pub struct Local<'b> {
    pub lds: &'b mut [u8],
}

fn atomic_apply(op: AtomicOp, bytes: u8, old: u64, src: u64, cmp: u64) -> u64 {
    let w = bytes == 8;
    let m = if w { u64::MAX } else { u32::MAX as u64 };
    let (o, s) = (old & m, src & m);
    let sx = |v: u64| if w { v as i64 } else { v as u32 as i32 as i64 };
    let r = match op {
        AtomicOp::Swap => s,
        AtomicOp::CmpSwap => {
            if o == cmp & m {
                s
            } else {
                o
            }
        }
        AtomicOp::Add => o.wrapping_add(s),
        AtomicOp::Sub => o.wrapping_sub(s),
        AtomicOp::SMin => sx(o).min(sx(s)) as u64,
        AtomicOp::SMax => sx(o).max(sx(s)) as u64,
        AtomicOp::UMin => o.min(s),
        AtomicOp::UMax => o.max(s),
        AtomicOp::And => o & s,
        AtomicOp::Or => o | s,
        AtomicOp::Xor => o ^ s,
        AtomicOp::Inc => {
            if o >= s {
                0
            } else {
                o + 1
            }
        }
        AtomicOp::Dec => {
            if o == 0 || o > s {
                s
            } else {
                o - 1
            }
        }
        AtomicOp::AddF32 => (f32::from_bits(o as u32) + f32::from_bits(s as u32)).to_bits() as u64,
        AtomicOp::AddF64 => (f64::from_bits(o) + f64::from_bits(s)).to_bits(),
        AtomicOp::MinF64 => f64::from_bits(o).min(f64::from_bits(s)).to_bits(),
        AtomicOp::MaxF64 => f64::from_bits(o).max(f64::from_bits(s)).to_bits(),
        AtomicOp::PkAddF16 => {
            let f = |v: u64, k: u32| crate::wave::f16_to_f32((v >> (16 * k)) as u16);
            let lo = crate::wave::f32_to_f16(f(o, 0) + f(s, 0)) as u64;
            let hi = crate::wave::f32_to_f16(f(o, 1) + f(s, 1)) as u64;
            lo | hi << 16
        }
    };
    r & m
}

/// Where a per-lane address lands.
enum Place {
    Global(u64),
    Lds(u32),
    Private(u32),
}

fn place_flat(a: u64) -> Place {
    if (SHARED_BASE..SHARED_BASE + APERTURE_SIZE).contains(&a) {
        Place::Lds((a - SHARED_BASE) as u32)
    } else if (PRIVATE_BASE..PRIVATE_BASE + APERTURE_SIZE).contains(&a) {
        Place::Private((a - PRIVATE_BASE) as u32)
    } else {
        Place::Global(a)
    }
}

/// FLAT_SCRATCH_LO/HI: on GFX9 the 64-bit base address of the wave's scratch (LLVM AMDGPUUsage,
/// "Flat Scratch": the prolog moves Flat Scratch Init, "the 64-bit address of the base of
/// scratch backing memory", plus the wave's offset there).
const FLAT_SCRATCH: usize = 102;

/// Where private offset `o` of lane `l` goes for a FLAT or SCRATCH instruction. A wave whose
/// FLAT_SCRATCH is set reaches memory there, interleaved by dword as the hardware swizzles the
/// private segment (AMDGPUUsage "Private Segment": "accessed in an interleaved manner";
/// 4-byte elements, index stride 64): `base + (o / 4) * 256 + l * 4 + o % 4` (kfdtest's PM4
/// dispatches set it to the scratch BO). FLAT_SCRATCH 0, what the interpreter's dispatches start
/// with (Flat Scratch Init and the wave offset are 0): the wave's own host scratch.
fn place_private(w: &Wave, l: usize, o: u32) -> Place {
    match w.sgpr64(FLAT_SCRATCH) {
        0 => Place::Private(o),
        base => Place::Global(base.wrapping_add((o as u64 & !3) * 64 + l as u64 * 4 + (o as u64 & 3))),
    }
}

/// Byte access to one lane's place. Out-of-range LDS/scratch reads give 0 and writes are
/// dropped (the hardware's range checking), global accesses fault.
fn lane_read(w: &Wave, m: &mut Mem, lds: &[u8], l: usize, p: &Place, buf: &mut [u8]) -> Result<(), ExecError> {
    match *p {
        Place::Global(a) => {
            if buf.len() == 4 {
                let v = m.read_u32(a)?;
                buf.copy_from_slice(&v.to_le_bytes());
            } else {
                m.read(a, buf)?;
            }
        }
        Place::Lds(o) => {
            let o = o as usize;
            match lds.get(o..o + buf.len()) {
                Some(s) => buf.copy_from_slice(s),
                None => buf.fill(0),
            }
        }
        Place::Private(o) => {
            let o = o as usize;
            let ps = w.priv_size as usize;
            if o + buf.len() <= ps && !w.scratch.is_empty() {
                let base = l * ps + o;
                buf.copy_from_slice(&w.scratch[base..base + buf.len()]);
            } else {
                buf.fill(0);
            }
        }
    }
    Ok(())
}

fn lane_write(w: &mut Wave, m: &mut Mem, lds: &mut [u8], l: usize, p: &Place, buf: &[u8]) -> Result<(), ExecError> {
    match *p {
        Place::Global(a) => {
            if buf.len() == 4 {
                m.write_u32(a, u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]))?;
            } else {
                m.write(a, buf)?;
            }
        }
        Place::Lds(o) => {
            let o = o as usize;
            if let Some(s) = lds.get_mut(o..o + buf.len()) {
                s.copy_from_slice(buf);
            }
        }
        Place::Private(o) => {
            let o = o as usize;
            let ps = w.priv_size as usize;
            if o + buf.len() <= ps {
                if w.scratch.is_empty() {
                    w.scratch = vec![0; ps * 64];
                }
                w.scratch_used = true;
                let base = l * ps + o;
                w.scratch[base..base + buf.len()].copy_from_slice(buf);
            }
        }
    }
    Ok(())
}

fn lane_atomic(
    w: &mut Wave,
    m: &mut Mem,
    lds: &mut [u8],
    l: usize,
    p: &Place,
    bytes: u8,
    f: &mut dyn FnMut(u64) -> u64,
) -> Result<u64, ExecError> {
    match *p {
        Place::Global(a) => {
            if a % bytes as u64 != 0 {
                return Err(ExecError::Invalid(format!("misaligned atomic at {a:#x}")));
            }
            Ok(m.mem.atomic(a, bytes as u32, f)?)
        }
        _ => {
            // LDS and scratch belong to this workgroup's thread: a plain read-modify-write.
            let mut b = [0u8; 8];
            let n = bytes as usize;
            lane_read(w, m, lds, l, p, &mut b[..n])?;
            let old = u64::from_le_bytes(b);
            let new = f(old);
            lane_write(w, m, lds, l, p, &new.to_le_bytes()[..n])?;
            Ok(old)
        }
    }
}

/// Reads a register tuple's `bytes` of lane `l` starting at VGPR `r` into `buf`.
fn gather(w: &Wave, r: u16, l: usize, buf: &mut [u8]) {
    for (k, c) in buf.chunks_mut(4).enumerate() {
        let v = w.v[r as usize + k][l].to_le_bytes();
        c.copy_from_slice(&v[..c.len()]);
    }
}

/// Writes loaded data to the destination tuple of lane `l`.
fn scatter(w: &mut Wave, r: u16, l: usize, data: &[u8], bytes: u8, sext: bool, d16: u8) {
    let r = r as usize;
    match (bytes, d16) {
        (1 | 2, 0) => {
            let v = if bytes == 1 {
                if sext {
                    data[0] as i8 as i32 as u32
                } else {
                    data[0] as u32
                }
            } else {
                let h = u16::from_le_bytes([data[0], data[1]]);
                if sext {
                    h as i16 as i32 as u32
                } else {
                    h as u32
                }
            };
            w.v[r][l] = v;
        }
        (_, 1 | 2) => {
            let h: u16 = if bytes == 1 {
                if sext {
                    data[0] as i8 as i16 as u16
                } else {
                    data[0] as u16
                }
            } else {
                u16::from_le_bytes([data[0], data[1]])
            };
            let old = w.v[r][l];
            w.v[r][l] = if d16 == 2 { (old & 0xffff) | (h as u32) << 16 } else { (old & 0xffff_0000) | h as u32 };
        }
        _ => {
            for (k, c) in data.chunks(4).enumerate() {
                w.v[r + k][l] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
    }
}

/// Runs one vector memory instruction (FLAT/GLOBAL/SCRATCH/MUBUF) for the active lanes.
pub fn exec_vmem(w: &mut Wave, i: &Inst, pc: u64, m: &mut Mem, loc: &mut Local) -> Result<(), ExecError> {
    let kind = i.mem.ok_or_else(|| unsupported(i, pc, ""))?;
    if kind == MemKind::Nop {
        return Ok(());
    }
    if !matches!(kind, MemKind::Load { .. } | MemKind::Store { .. } | MemKind::Atomic { .. }) {
        return Err(unsupported(i, pc, ""));
    }
    // What the addressing takes from SGPRs, read once for all lanes.
    let saddr = i.sbase as usize;
    let sbase = if i.enc == Enc::Global && saddr != 0x7f { w.sgpr64(saddr) } else { 0 };
    let mubuf = !matches!(i.enc, Enc::Flat | Enc::Global | Enc::Scratch);
    let (desc, soff) = if mubuf {
        // MUBUF: V# in s[sbase..sbase+3].
        let s = saddr;
        let soff = w.scalar(
            match i.soffset {
                Some(c) => sop(c),
                None => Src::Inline(128),
            },
            Ty::B32,
        ) as u32;
        ([w.s[s], w.s[s + 1], w.s[s + 2], w.s[s + 3]], soff)
    } else {
        ([0; 4], 0)
    };
    if coalesced(w, i, kind, m, sbase) {
        return Ok(());
    }
    // One pass over the active lanes, each computing its place and accessing it: a lane reads
    // only its own registers, so a load whose destination overlaps its address registers
    // is safe lane by lane.
    let mut mm = w.exec();
    while mm != 0 {
        let l = mm.trailing_zeros() as usize;
        mm &= mm - 1;
        let p = match i.enc {
            Enc::Flat => match place_flat(lane_vaddr(w, i, sbase, l)) {
                Place::Private(o) => place_private(w, l, o),
                p => p,
            },
            Enc::Global => Place::Global(lane_vaddr(w, i, sbase, l)),
            Enc::Scratch => {
                let a = if saddr == 0x7f { w.v[i.addr as usize][l] } else { w.s[saddr] };
                place_private(w, l, (a as i64 + i.offset as i64) as u32)
            }
            _ => {
                let [d0, d1, d2, d3] = desc;
                let stride = (d1 >> 16) & 0x3fff;
                let mut vo = 0u64;
                let mut vi = 0u64;
                let mut k = i.addr as usize;
                if i.idxen {
                    vi = w.v[k][l] as u64;
                    k += 1;
                }
                if i.offen {
                    vo = w.v[k][l] as u64;
                }
                let lane_off = vo + i.offset as u64;
                if d3 & (1 << 23) != 0 {
                    // ADD_TID_ENABLE: the swizzled private segment buffer: per-lane scratch. The
                    // SGPR offset is the wave's (unswizzled bytes: the stack and frame pointers
                    // count 64 lanes' bytes), the rest each lane's.
                    Place::Private((lane_off + soff as u64 / 64) as u32)
                } else {
                    let off = lane_off + soff as u64;
                    let base = d0 as u64 | ((d1 & 0xffff) as u64) << 32;
                    let idx_off = vi * stride as u64;
                    let rec = if stride == 0 { off } else { vi };
                    if rec >= d2 as u64 {
                        // Out of range: loads return 0, stores/atomics are dropped.
                        if let MemKind::Load { bytes, sext, d16 } = kind {
                            let z = [0u8; 16];
                            scatter(w, i.dst, l, &z[..bytes as usize], bytes, sext, d16);
                        }
                        continue;
                    }
                    Place::Global(base + idx_off + off)
                }
            }
        };
        match kind {
            MemKind::Load { bytes, sext, d16 } => {
                let mut buf = [0u8; 16];
                let n = bytes as usize;
                lane_read(w, m, loc.lds, l, &p, &mut buf[..n])?;
                scatter(w, i.dst, l, &buf[..n], bytes, sext, d16);
            }
            MemKind::Store { bytes, hi } => {
                let mut buf = [0u8; 16];
                let n = bytes as usize;
                if hi {
                    let v = w.v[i.data as usize][l] >> 16;
                    buf[..2].copy_from_slice(&(v as u16).to_le_bytes());
                } else {
                    gather(w, i.data, l, &mut buf[..n]);
                }
                lane_write(w, m, loc.lds, l, &p, &buf[..n])?;
            }
            MemKind::Atomic { op, bytes, rtn } => {
                let rtn = rtn && i.glc;
                let wide = bytes == 8;
                let rd = |w: &Wave, r: u16| {
                    if wide {
                        w.rd64(crate::wave::Opnd::V(r), l)
                    } else {
                        w.v[r as usize][l] as u64
                    }
                };
                let src = rd(w, i.data);
                let cmp = if op == AtomicOp::CmpSwap { rd(w, i.data + if wide { 2 } else { 1 }) } else { 0 };
                let old = lane_atomic(w, m, loc.lds, l, &p, bytes, &mut |o| atomic_apply(op, bytes, o, src, cmp))?;
                if rtn {
                    w.v[i.dst as usize][l] = old as u32;
                    if wide {
                        w.v[i.dst as usize + 1][l] = (old >> 32) as u32;
                    }
                }
            }
            _ => unreachable!("checked above"),
        }
    }
    Ok(())
}

/// Lane `l`'s virtual address for a FLAT or GLOBAL instruction: the VGPR pair, or with GLOBAL's
/// `saddr` (`sbase`, its SGPR pair's value) that plus the VGPR offset; then the immediate offset.
#[inline(always)]
fn lane_vaddr(w: &Wave, i: &Inst, sbase: u64, l: usize) -> u64 {
    let a = if i.enc == Enc::Global && i.sbase != 0x7f {
        sbase.wrapping_add(w.v[i.addr as usize][l] as u64)
    } else {
        w.rd64(crate::wave::Opnd::V(i.addr), l)
    };
    a.wrapping_add(i.offset as i64 as u64)
}

/// A load or store of whole dwords (1 to 4 a lane) by all 64 lanes at consecutive addresses in
/// host-backed global memory, in one page or across two (a coalesced access, as most kernels
/// make): one or two host pointers for the wave instead of a translation per lane. Returns false,
/// having done nothing, for any other access, or when a page is not host memory or is not
/// mapped: the per-lane path then runs it (and reports a fault at its exact lane).
fn coalesced(w: &mut Wave, i: &Inst, kind: MemKind, m: &mut Mem, sbase: u64) -> bool {
    let (bytes, store) = match kind {
        MemKind::Load { bytes, d16: 0, .. } if bytes % 4 == 0 => (bytes as usize, false),
        MemKind::Store { bytes, hi: false } if bytes % 4 == 0 => (bytes as usize, true),
        _ => return false,
    };
    if !matches!(i.enc, Enc::Global | Enc::Flat) || w.exec() != u64::MAX {
        return false;
    }
    // Lane l's address (lane_vaddr) is lane 0's + l * bytes: the address VGPR's low dwords
    // step by `bytes` from lane 0's without passing 2^32 (else lane by lane), and a 64-bit
    // address's high dwords are all lane 0's. Checked in 32-bit lanes, the differences or-ed
    // together: one vectorizable loop, no early exit.
    let lo = &w.v[i.addr as usize];
    let lo0 = lo[0];
    if lo0.checked_add(63 * bytes as u32).is_none() {
        return false;
    }
    let mut bad = 0u32;
    for (l, &v) in lo.iter().enumerate() {
        bad |= v.wrapping_sub(lo0) ^ (l * bytes) as u32;
    }
    let base = if i.enc == Enc::Global && i.sbase != 0x7f {
        sbase.wrapping_add(lo0 as u64)
    } else {
        let hi = &w.v[i.addr as usize + 1];
        for &v in hi {
            bad |= v ^ hi[0];
        }
        lo0 as u64 | (hi[0] as u64) << 32
    };
    if bad != 0 {
        return false;
    }
    let a0 = base.wrapping_add(i.offset as i64 as u64);
    debug_assert_eq!(a0, lane_vaddr(w, i, sbase, 0));
    let len = 64 * bytes;
    let last = a0.wrapping_add(len as u64 - 1);
    if i.enc == Enc::Flat && !matches!((place_flat(a0), place_flat(last)), (Place::Global(_), Place::Global(_))) {
        return false;
    }
    // The bytes before the next page boundary (all of them when there is none in the range),
    // a whole number of dwords: the rest come from the next page.
    let cut = ((PAGE - (a0 & (PAGE - 1))) as usize).min(len);
    if cut % 4 != 0 {
        return false;
    }
    let Ok(Some(p0)) = m.ptr(a0, cut, store) else { return false };
    let p1 = if cut < len {
        let Ok(Some(p1)) = m.ptr(a0.wrapping_add(cut as u64), len - cut, store) else { return false };
        p1
    } else {
        p0
    };
    let (p0, p1, cut_word) = (p0 as *mut u32, p1 as *mut u32, cut / 4);
    let words = bytes / 4;
    let r0 = if store { i.data } else { i.dst } as usize;
    if words == 1 {
        // Lane l's dword is dword l of the range: in p0's part for the lanes below `cut_word`,
        // in p1's for the rest. Two loops, no test per lane.
        let split = cut_word.min(64);
        let (lo, hi) = w.v[r0].split_at_mut(split);
        // (When `hi` has lanes, `split` is `cut_word`: its lane n is p1's dword n.)
        for (regs, p) in [(lo, p0), (hi, p1)] {
            for (n, v) in regs.iter_mut().enumerate() {
                let q = p.wrapping_add(n);
                // SAFETY: `Mem::ptr` gave host pointers valid for the `cut` bytes at `a0` (p0)
                // and the `len - cut` bytes after them (p1), each range in one page mapped for
                // the dispatch; `q` is this lane's dword in its part. Other waves access it as
                // the GPU's memory would be: without ordering, each aligned dword whole.
                unsafe { move_dword(q, v, store) };
            }
        }
        return true;
    }
    if words % 2 == 0 && (p0 as usize).is_multiple_of(8) && (p1 as usize).is_multiple_of(8) {
        // dwordx2/x4 at 8-byte aligned host addresses (the common case): every lane's dword
        // pair (k, k+1), k even, is one aligned 8-byte part, all in p0's part for the lanes
        // below `split`, in p1's for the rest (`cut_word` is even: p0's part ends at an aligned
        // page end). Register pair by register pair, two loops, no test per lane.
        for k in (0..words).step_by(2) {
            let split = cut_word.saturating_sub(k).div_ceil(words).min(64);
            let (a, b) = w.v[r0 + k..].split_at_mut(1);
            let (ra, rb) = (&mut a[0], &mut b[0]);
            let parts = [(0..split, p0, k as isize), (split..64, p1, k as isize - cut_word as isize)];
            for (lanes, p, first) in parts {
                for l in lanes {
                    // SAFETY: `Mem::ptr` gave host pointers valid for the `cut` bytes at `a0`
                    // (p0) and the `len - cut` bytes after them (p1), each in one page mapped
                    // for the dispatch; lane l's dwords k, k+1 are at `first + l * words` in its
                    // part, 8-byte aligned (checked above). Other waves access them as the GPU's
                    // memory would be: without ordering, each aligned 8-byte part whole.
                    let a = unsafe { AtomicU64::from_ptr(p.offset(first + (l * words) as isize) as *mut u64) };
                    if store {
                        a.store(ra[l] as u64 | (rb[l] as u64) << 32, Ordering::Relaxed);
                    } else {
                        let v = a.load(Ordering::Relaxed);
                        (ra[l], rb[l]) = (v as u32, (v >> 32) as u32);
                    }
                }
            }
        }
        return true;
    }
    // Other wide accesses (dwordx3, or unaligned) lane by lane, so that each lane's aligned
    // 8-byte parts move whole (the module's doc): lane l's dword k is dword j = l * words + k of the range, in p0's part
    // below `cut_word`, else in p1's. An 8-byte aligned pair never straddles the two (the
    // page boundary between them is 8-byte aligned).
    let at = |j: usize| if j < cut_word { p0.wrapping_add(j) } else { p1.wrapping_add(j - cut_word) };
    for l in 0..64 {
        let mut k = 0;
        while k < words {
            let j = l * words + k;
            let q = at(j);
            // SAFETY: as above: `q` (and `q + 1` in the first arm, the same page's next dword:
            // `j + 1 != cut_word`) is this lane's dword in its part; the atomic arms are aligned.
            unsafe {
                if k + 1 < words && (q as usize).is_multiple_of(8) && j + 1 != cut_word {
                    let a = AtomicU64::from_ptr(q as *mut u64);
                    if store {
                        a.store(w.v[r0 + k][l] as u64 | (w.v[r0 + k + 1][l] as u64) << 32, Ordering::Relaxed);
                    } else {
                        let v = a.load(Ordering::Relaxed);
                        w.v[r0 + k][l] = v as u32;
                        w.v[r0 + k + 1][l] = (v >> 32) as u32;
                    }
                    k += 2;
                    continue;
                }
                move_dword(q, &mut w.v[r0 + k][l], store);
            }
            k += 1;
        }
    }
    true
}

fn sop(c: u8) -> Src {
    match c {
        0..=127 => Src::S(c),
        128..=208 | 240..=248 => Src::Inline(c),
        c => Src::Special(c),
    }
}

/// Runs one DS (LDS) instruction.
pub fn exec_ds(w: &mut Wave, i: &Inst, pc: u64, m: &mut Mem, loc: &mut Local) -> Result<(), ExecError> {
    if i.gds {
        return Err(unsupported(i, pc, "GDS"));
    }
    if i.op == Op::ds_nop {
        return Ok(());
    }
    let kind = i.mem.ok_or_else(|| unsupported(i, pc, ""))?;
    let exec = w.exec();
    let off16 = i.offset as u32 | (i.offset1 as u32) << 8;
    let lds = &mut *loc.lds;
    let lread = |lds: &[u8], a: u32, buf: &mut [u8]| {
        let a = a as usize;
        match lds.get(a..a + buf.len()) {
            Some(s) => buf.copy_from_slice(s),
            None => buf.fill(0),
        }
    };
    let lwrite = |lds: &mut [u8], a: u32, buf: &[u8]| {
        let a = a as usize;
        if let Some(s) = lds.get_mut(a..a + buf.len()) {
            s.copy_from_slice(buf);
        }
    };
    let addr = |w: &Wave, l: usize| w.v[i.addr as usize][l];
    match kind {
        MemKind::Load { bytes, sext, d16 } => {
            let mut buf = [0u8; 16];
            let n = bytes as usize;
            lanes(exec, |l| {
                lread(lds, addr(w, l).wrapping_add(off16), &mut buf[..n]);
                scatter(w, i.dst, l, &buf[..n], bytes, sext, d16);
            });
        }
        MemKind::Store { bytes, hi } => {
            let mut buf = [0u8; 16];
            let n = bytes as usize;
            lanes(exec, |l| {
                if hi {
                    let v = w.v[i.data as usize][l] >> 16;
                    buf[..2].copy_from_slice(&(v as u16).to_le_bytes());
                } else {
                    gather(w, i.data, l, &mut buf[..n]);
                }
                lwrite(lds, addr(w, l).wrapping_add(off16), &buf[..n]);
            });
        }
        MemKind::Read2 { bytes, st64 } => {
            let n = bytes as usize;
            let scale = if st64 { 64 * bytes as u32 } else { bytes as u32 };
            let mut buf = [0u8; 16];
            lanes(exec, |l| {
                let a = addr(w, l);
                lread(lds, a.wrapping_add(i.offset as u32 * scale), &mut buf[..n]);
                lread(lds, a.wrapping_add(i.offset1 as u32 * scale), &mut buf[n..2 * n]);
                scatter(w, i.dst, l, &buf[..2 * n], 2 * bytes, false, 0);
            });
        }
        MemKind::Write2 { bytes, st64 } => {
            let n = bytes as usize;
            let scale = if st64 { 64 * bytes as u32 } else { bytes as u32 };
            let mut buf = [0u8; 8];
            lanes(exec, |l| {
                let a = addr(w, l);
                gather(w, i.data, l, &mut buf[..n]);
                lwrite(lds, a.wrapping_add(i.offset as u32 * scale), &buf[..n]);
                gather(w, i.data1, l, &mut buf[..n]);
                lwrite(lds, a.wrapping_add(i.offset1 as u32 * scale), &buf[..n]);
            });
        }
        MemKind::Atomic { op, bytes, rtn } => {
            let n = bytes as usize;
            let wide = bytes == 8;
            lanes(exec, |l| {
                let a = addr(w, l).wrapping_add(off16);
                let rd = |w: &Wave, r: u16| {
                    if wide {
                        w.rd64(crate::wave::Opnd::V(r), l)
                    } else {
                        w.v[r as usize][l] as u64
                    }
                };
                // DS_CMPST: data0 is the compare value, data1 the new value.
                let (src, cmp) =
                    if op == AtomicOp::CmpSwap { (rd(w, i.data1), rd(w, i.data)) } else { (rd(w, i.data), 0) };
                let mut b = [0u8; 8];
                lread(lds, a, &mut b[..n]);
                let old = u64::from_le_bytes(b);
                let new = atomic_apply(op, bytes, old, src, cmp);
                lwrite(lds, a, &new.to_le_bytes()[..n]);
                if rtn {
                    w.v[i.dst as usize][l] = old as u32;
                    if wide {
                        w.v[i.dst as usize + 1][l] = (old >> 32) as u32;
                    }
                }
            });
        }
        MemKind::Bpermute | MemKind::Permute => {
            let mut out = [0u32; 64];
            let mut hit = 0u64;
            let data = w.v[i.data as usize];
            lanes(exec, |l| {
                let s = ((addr(w, l).wrapping_add(off16) >> 2) & 63) as usize;
                if kind == MemKind::Bpermute {
                    out[l] = if exec >> s & 1 != 0 { data[s] } else { 0 };
                    hit |= 1 << l;
                } else {
                    out[s] = data[l];
                    hit |= 1 << s;
                }
            });
            lanes(exec, |l| {
                w.v[i.dst as usize][l] = if hit >> l & 1 != 0 { out[l] } else { 0 };
            });
        }
        MemKind::Swizzle => {
            // The source is the ADDR operand (`ds_swizzle_b32 vdst, vsrc offset:...`).
            let data = w.v[i.addr as usize];
            let mut out = [0u32; 64];
            lanes(exec, |l| {
                let s = if off16 & 0x8000 != 0 {
                    (l & !3) | ((off16 as usize >> (2 * (l & 3))) & 3)
                } else {
                    let and = (off16 & 0x1f) as usize;
                    let or = ((off16 >> 5) & 0x1f) as usize;
                    let xor = ((off16 >> 10) & 0x1f) as usize;
                    (l & !31) | ((((l & 31) & and) | or) ^ xor)
                };
                out[l] = if exec >> s & 1 != 0 { data[s] } else { 0 };
            });
            lanes(exec, |l| w.v[i.dst as usize][l] = out[l]);
        }
        MemKind::Nop => {}
    }
    let _ = m;
    Ok(())
}

fn lanes(mut m: u64, mut f: impl FnMut(usize)) {
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l);
    }
}

/// What scalar memory time instructions read.
pub struct Clock {
    pub start: std::time::Instant,
}

/// Runs one SMEM instruction.
pub fn exec_smem(w: &mut Wave, i: &Inst, pc: u64, m: &mut Mem, clock: &Clock) -> Result<(), ExecError> {
    use Op::*;
    let d = i.dst as usize;
    let atomic = crate::decode::smem_atomic(i.op.name());
    let n = match i.op {
        s_load_dword | s_buffer_load_dword | s_store_dword | s_buffer_store_dword => 1,
        s_load_dwordx2 | s_buffer_load_dwordx2 | s_store_dwordx2 | s_buffer_store_dwordx2 => 2,
        s_load_dwordx4 | s_buffer_load_dwordx4 | s_store_dwordx4 | s_buffer_store_dwordx4 => 4,
        s_load_dwordx8 | s_buffer_load_dwordx8 => 8,
        s_load_dwordx16 | s_buffer_load_dwordx16 => 16,
        s_memtime | s_memrealtime => {
            let ns = clock.start.elapsed().as_nanos() as u64;
            // s_memrealtime: the 100 MHz constant clock; s_memtime: the shader clock.
            let v = if i.op == s_memrealtime { ns / 10 } else { ns.saturating_mul(17) / 10 };
            w.set_s64(d, v);
            return Ok(());
        }
        s_dcache_inv | s_dcache_wb | s_dcache_inv_vol | s_dcache_wb_vol => return Ok(()),
        _ if atomic.is_some() => 0,
        _ => return Err(unsupported(i, pc, "")),
    };
    let buffer = i.op.name().starts_with("s_buffer");
    let base = if buffer {
        let s = i.sbase as usize;
        w.s[s] as u64 | ((w.s[s + 1] & 0xffff) as u64) << 32
    } else {
        w.sgpr64(i.sbase as usize)
    };
    let soff = match i.soffset {
        Some(c) => w.scalar(sop(c), Ty::B32) as u32 as u64,
        None => 0,
    };
    let addr = (base.wrapping_add(soff) as i64).wrapping_add(i.offset as i64) as u64 & !3;
    if let Some((op, bytes)) = atomic {
        // SDATA holds the source (then, for cmpswap, the compare value); GLC returns the old
        // value there.
        let regs = bytes as usize / 4;
        let rd = |w: &Wave, r: usize| if regs == 2 { w.sgpr64(r & 0xff) } else { w.s[r & 0xff] as u64 };
        let src = rd(w, d);
        let cmp = if op == AtomicOp::CmpSwap { rd(w, d + regs) } else { 0 };
        let addr = addr & !(bytes as u64 - 1);
        let old = m.mem.atomic(addr, bytes as u32, &mut |o| atomic_apply(op, bytes, o, src, cmp))?;
        if i.glc {
            w.set_s(d, old as u32);
            if regs == 2 {
                w.set_s(d + 1, (old >> 32) as u32);
            }
        }
        return Ok(());
    }
    let store = i.op.name().contains("store");
    // The whole access at once, so that its aligned 8-byte parts move whole (the module's doc).
    let mut buf = [0u8; 64];
    let buf = &mut buf[..4 * n];
    if store {
        for (k, c) in buf.chunks_mut(4).enumerate() {
            c.copy_from_slice(&w.s[(d + k) & 0xff].to_le_bytes());
        }
        m.write(addr, buf)?;
    } else {
        m.read(addr, buf)?;
        for (k, c) in buf.chunks(4).enumerate() {
            w.set_s(d + k, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        }
    }
    Ok(())
}
