//! One dispatch: the kernel descriptor, workgroups handed to a pool of host threads, the waves
//! of each workgroup run interleaved on one thread (switching at `s_barrier`), decoded
//! instructions cached per thread by code address.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use crate::decode::{decode, Enc, Inst};
use crate::memops::{exec_ds, exec_smem, exec_vmem, Clock, Local, Mem};
use crate::optab::Op;
use crate::salu::{self, exec_scalar, Env, Flow};
use crate::valu::exec_vector;
use crate::wave::{Status, Wave, EXEC, M0, VCC};
use crate::{Dispatch, ExecError, Fault, Memory, Options, Stats};

/// The fields of the 64-byte kernel descriptor (AMDGPUUsage "Kernel Descriptor", code object
/// V4/V5) the interpreter uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
}

impl KernelDescriptor {
    pub fn parse(b: &[u8; 64]) -> KernelDescriptor {
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        KernelDescriptor {
            group_segment_fixed_size: u32at(0),
            private_segment_fixed_size: u32at(4),
            kernarg_size: u32at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(b[16..24].try_into().unwrap()),
            compute_pgm_rsrc3: u32at(44),
            compute_pgm_rsrc1: u32at(48),
            compute_pgm_rsrc2: u32at(52),
            kernel_code_properties: u16::from_le_bytes([b[56], b[57]]),
        }
    }
}

// kernel_code_properties bits.
const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
const ENABLE_SGPR_DISPATCH_PTR: u16 = 1 << 1;
const ENABLE_SGPR_QUEUE_PTR: u16 = 1 << 2;
const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u16 = 1 << 3;
const ENABLE_SGPR_DISPATCH_ID: u16 = 1 << 4;
const ENABLE_SGPR_FLAT_SCRATCH_INIT: u16 = 1 << 5;
const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;

/// Fast hasher for code addresses.
#[derive(Default)]
struct PcHasher(u64);
impl Hasher for PcHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v >> 2).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Instructions a wave runs before the other waves of its workgroup get a turn.
const WAVE_SLICE: u64 = 1 << 14;

/// Instructions, and wall time, a workgroup runs before it gives its thread to another
/// workgroup that is waiting (a ready one, or a fresh one while fewer than the resident cap are
/// resident: what fits in [`Options::wave_slots`], at least `2 * threads + 8`). The time bound
/// keeps turns short for slow instructions (a wave spinning on `s_memtime` with 64-bit
/// divisions), so that resident workgroups all make progress as they would on the GPU.
const WG_SLICE: u64 = 1 << 20;
const WG_SLICE_TIME: std::time::Duration = std::time::Duration::from_millis(2);

/// A host thread's decoded instructions: each 4 KiB code page has a slot per byte offset
/// holding the instruction's index in `insts` (`NONE` until first run), so a wave looks its
/// page up once per page it enters, not once per instruction.
#[derive(Default)]
struct Code {
    pages: HashMap<u64, Box<[u32]>, BuildHasherDefault<PcHasher>>,
    insts: Vec<Inst>,
}

const NONE: u32 = u32::MAX;

/// Everything the waves of one dispatch share (read-only).
struct Shared<'a> {
    d: &'a Dispatch,
    kd: KernelDescriptor,
    entry: u64,
    nwg: [u64; 3],
    lds_size: usize,
    priv_size: u32,
    opts: &'a Options,
    clock: Clock,
    abort: AtomicBool,
    /// `AMDGCN_ISA_TRACE=1`: print every instruction of workgroup 0's first wave with its
    /// destination's value in the first active lane (debugging aid, stderr).
    trace: bool,
}

/// The kernel descriptor a register-started dispatch ([`crate::ComputeRegisters`]) amounts to:
/// the COMPUTE_PGM_RSRC* copies, LDS from COMPUTE_PGM_RSRC2.LDS_SIZE (bits 23:15, 128-dword
/// granules on gfx9), no user-SGPR enables (the user data is loaded as it is), entry 0 bytes
/// from the program address.
fn registers_descriptor(r: &crate::ComputeRegisters) -> KernelDescriptor {
    KernelDescriptor {
        group_segment_fixed_size: ((r.pgm_rsrc2 >> 15) & 0x1ff) * 512,
        compute_pgm_rsrc1: r.pgm_rsrc1,
        compute_pgm_rsrc2: r.pgm_rsrc2,
        compute_pgm_rsrc3: r.pgm_rsrc3,
        ..Default::default()
    }
}

pub fn run(mem: &dyn Memory, d: &Dispatch, threads: usize, opts: &Options) -> Result<Stats, ExecError> {
    let kd = match &d.registers {
        Some(r) => registers_descriptor(r),
        None => {
            let mut b = [0u8; 64];
            mem.read(d.kernel_object, &mut b)?;
            KernelDescriptor::parse(&b)
        }
    };
    if kd.kernel_code_properties & ENABLE_WAVEFRONT_SIZE32 != 0 {
        return Err(ExecError::Invalid("wave32 kernel (gfx90a runs wave64 only)".into()));
    }
    if d.workgroup_size.contains(&0) {
        return Err(ExecError::Invalid(format!("workgroup size {:?}", d.workgroup_size)));
    }
    let wg_items = d.workgroup_size.iter().map(|&x| x as u64).product::<u64>();
    if wg_items > 1024 {
        return Err(ExecError::Invalid(format!("workgroup of {wg_items} work-items (max 1024)")));
    }
    if d.grid_size.contains(&0) {
        return Ok(Stats::default());
    }
    let nwg: [u64; 3] = std::array::from_fn(|k| (d.grid_size[k] as u64).div_ceil(d.workgroup_size[k] as u64));
    let lds_size = d.group_segment_size.max(kd.group_segment_fixed_size) as usize;
    if lds_size > 64 * 1024 {
        return Err(ExecError::Invalid(format!("{lds_size} bytes of LDS (max 65536)")));
    }
    let priv_size = d.private_segment_size.max(kd.private_segment_fixed_size);
    if priv_size > 1 << 20 {
        return Err(ExecError::Invalid(format!("{priv_size} bytes of scratch per work-item")));
    }
    let entry = match &d.registers {
        Some(r) => r.pgm_addr,
        None => (d.kernel_object as i64).wrapping_add(kd.kernel_code_entry_byte_offset) as u64,
    };
    let sh = Shared {
        d,
        kd,
        entry,
        nwg,
        lds_size,
        priv_size,
        opts,
        clock: Clock { start: std::time::Instant::now() },
        abort: AtomicBool::new(false),
        trace: std::env::var_os("AMDGCN_ISA_TRACE").is_some(),
    };
    let total = nwg[0] * nwg[1] * nwg[2];
    let sched = Mutex::new(Sched::default());
    let wake = Condvar::new();
    let first_err: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let wave_insts = AtomicU64::new(0);
    let lane_insts = AtomicU64::new(0);
    let nthreads = threads.max(1).min(total.min(256) as usize);
    // Workgroups resident at once: as many as the GPU's wave slots hold (up to
    // MAX_RESIDENT_WAVES), not fewer than the host threads keep busy, never more than the GPU
    // holds (a hostcall buffer has one packet per wave slot).
    let wg_waves = wg_items.div_ceil(64);
    let slots = opts.wave_slots.unwrap_or(0).min(crate::MAX_RESIDENT_WAVES);
    let mut resident_cap = (2 * nthreads + 8).max((slots / wg_waves) as usize);
    if let Some(all) = opts.wave_slots {
        resident_cap = resident_cap.min((all / wg_waves).max(1) as usize);
    }
    let fail = |idx: u64, e: ExecError| {
        let mut g = first_err.lock().unwrap_or_else(|p| p.into_inner());
        if g.as_ref().is_none_or(|(i, _)| idx < *i) {
            *g = Some((idx, e));
        }
        sh.abort.store(true, Ordering::Relaxed);
        wake.notify_all();
    };
    let work = |_t: usize| {
        let mut code = Code::default();
        let mut m = Mem::new(mem);
        let mut spare: Option<Wg> = None;
        let mut stats = Stats::default();
        loop {
            if let Some(t) = &opts.throttle {
                (t.0)();
            }
            if opts.cancel.as_ref().is_some_and(|c| (c.0)()) {
                fail(0, ExecError::Cancelled);
                break;
            }
            // Next workgroup: one released from a GWS barrier, else a fresh one.
            let mut wg = {
                let mut st = sched.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if sh.abort.load(Ordering::Relaxed) {
                        break None;
                    }
                    if st.wake_sema(opts) {
                        wake.notify_all();
                    }
                    // Fresh workgroups first while few are resident (a preempted one may wait
                    // for one of them), then those released or preempted.
                    if st.next < total && (st.resident < resident_cap || st.ready.is_empty()) {
                        let idx = st.next;
                        st.next += 1;
                        st.running += 1;
                        st.resident += 1;
                        let mut wg = spare.take().unwrap_or_default();
                        wg.idx = idx;
                        break Some(wg);
                    }
                    if let Some(wg) = st.ready.pop_front() {
                        st.running += 1;
                        break Some(wg);
                    }
                    if st.running == 0 {
                        // Nothing runs: workgroups still waiting (semaphores first) never will.
                        let sema = "wait at GWS semaphores that no wave is left to release";
                        let stuck =
                            st.sema.first().map(|(_, p)| (p.idx, st.sema.len(), "ds_gws_sema_p", sema)).or_else(|| {
                                let barrier = "wait for waves that never arrive";
                                st.parked.first().map(|p| (p.idx, st.parked.len(), "ds_gws_barrier", barrier))
                            });
                        drop(st);
                        if let Some((idx, n, op, what)) = stuck {
                            fail(idx, ExecError::Invalid(format!("{op}: {n} workgroups {what}")));
                        }
                        break None;
                    }
                    st = if st.sema.is_empty() {
                        wake.wait(st).unwrap_or_else(|p| p.into_inner())
                    } else {
                        // A running workgroup's `ds_gws_sema_v` may release a parked one.
                        let t = std::time::Duration::from_millis(1);
                        wake.wait_timeout(st, t).unwrap_or_else(|p| p.into_inner()).0
                    };
                }
            };
            let Some(wg) = wg.as_mut() else { break };
            if wg.waves_live == 0 {
                init_workgroup(&sh, wg);
            }
            // Long-running workgroups step aside when others could run (one of them may be
            // what this one waits for).
            let preempt = || {
                let st = sched.lock().unwrap_or_else(|p| p.into_inner());
                !st.ready.is_empty() || (st.next < total && st.resident < resident_cap)
            };
            let r = resume_workgroup(&sh, wg, &mut code, &mut m, &mut stats, &preempt);
            let mut st = sched.lock().unwrap_or_else(|p| p.into_inner());
            st.running -= 1;
            match r {
                Ok(WgEnd::Done) => {
                    wg.waves_live = 0;
                    st.resident -= 1;
                    spare = Some(std::mem::take(wg));
                    if st.running == 0 {
                        wake.notify_all();
                    }
                }
                Ok(WgEnd::Preempted) => {
                    st.ready.push_back(std::mem::take(wg));
                    wake.notify_one();
                }
                Ok(WgEnd::Gws(target)) => {
                    st.gws_arrived += wg.gws_waiting();
                    st.parked.push(std::mem::take(wg));
                    if st.gws_arrived >= target {
                        st.gws_arrived -= target;
                        let released: Vec<Wg> = std::mem::take(&mut st.parked);
                        for mut p in released {
                            p.release_gws();
                            st.ready.push_back(p);
                        }
                    }
                    wake.notify_all();
                }
                Ok(WgEnd::Sema(generation)) => {
                    st.sema.push((generation, std::mem::take(wg)));
                    if st.wake_sema(opts) || st.running == 0 {
                        wake.notify_all();
                    }
                }
                Err(e) => {
                    drop(st);
                    wg.withdraw_gws(opts);
                    fail(wg.idx, e);
                    break;
                }
            }
        }
        wave_insts.fetch_add(stats.wave_instructions, Ordering::Relaxed);
        lane_insts.fetch_add(stats.lane_instructions, Ordering::Relaxed);
    };
    if nthreads <= 1 {
        work(0);
    } else {
        std::thread::scope(|s| {
            for t in 0..nthreads {
                let work = &work;
                s.spawn(move || work(t));
            }
        });
    }
    // Waves left waiting in GWS semaphores (the dispatch failed or was cancelled) leave
    // their queues.
    let st = sched.into_inner().unwrap_or_else(|p| p.into_inner());
    for mut wg in st.parked.into_iter().chain(st.ready).chain(st.sema.into_iter().map(|(_, wg)| wg)) {
        wg.withdraw_gws(opts);
    }
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(Stats { wave_instructions: wave_insts.into_inner(), lane_instructions: lane_insts.into_inner() }),
    }
}

/// Workgroup hand-out across the host threads.
#[derive(Default)]
struct Sched {
    /// Next fresh workgroup index.
    next: u64,
    /// Workgroups on a thread right now.
    running: usize,
    /// Workgroups started and not finished (running, ready, parked).
    resident: usize,
    /// Workgroups whose waves wait in `ds_gws_barrier`, and the waves arrived so far.
    parked: Vec<Wg>,
    gws_arrived: u32,
    /// Workgroups released from the GWS barrier or preempted, to resume.
    ready: std::collections::VecDeque<Wg>,
    /// Workgroups whose waves wait in `ds_gws_sema_p`, with the GWS generation they wait past.
    sema: Vec<(u64, Wg)>,
}

impl Sched {
    /// Moves the workgroups a GWS release may have reached to `ready`; true if any moved.
    fn wake_sema(&mut self, opts: &Options) -> bool {
        let Some(g) = opts.gws.as_deref() else { return false };
        if self.sema.is_empty() {
            return false;
        }
        let now = g.generation();
        let mut moved = false;
        let mut k = 0;
        while k < self.sema.len() {
            if self.sema[k].0 < now {
                let (_, mut wg) = self.sema.swap_remove(k);
                wg.release_gws();
                self.ready.push_back(wg);
                moved = true;
            } else {
                k += 1;
            }
        }
        moved
    }
}

/// One workgroup's state (movable between host threads while parked).
#[derive(Default)]
struct Wg {
    idx: u64,
    waves: Vec<Wave>,
    /// Waves of this workgroup (the first `waves_live` of `waves`); 0: not started.
    waves_live: usize,
    lds: Vec<u8>,
}

impl Wg {
    fn gws_waiting(&self) -> u32 {
        self.waves[..self.waves_live].iter().filter(|w| w.status == Status::Gws).count() as u32
    }

    /// Resumes the waves parked in `ds_gws_barrier` or `ds_gws_sema_p` (the latter run it
    /// again and queue again if no release reached them).
    fn release_gws(&mut self) {
        for w in &mut self.waves[..self.waves_live] {
            if matches!(w.status, Status::Gws | Status::Sema) {
                w.status = Status::Running;
            }
        }
    }

    /// Takes the waves' places out of GWS semaphore queues (the workgroup will not run on).
    fn withdraw_gws(&mut self, opts: &Options) {
        for w in &mut self.waves {
            if let (Some(x), Some(g)) = (w.gws_wait.take(), opts.gws.as_deref()) {
                g.withdraw(x);
            }
        }
    }
}

/// Why a workgroup stopped running on its thread.
enum WgEnd {
    Done,
    /// Ran for [`WG_SLICE`] instructions while other workgroups were waiting to run.
    Preempted,
    /// Waves wait in `ds_gws_barrier` for this many waves of the dispatch.
    Gws(u32),
    /// Waves wait in `ds_gws_sema_p`: worth resuming once [`crate::Gws`]'s generation is past
    /// this one.
    Sema(u64),
}

/// Sets up the waves and LDS of workgroup `wg.idx` (AMDGPUUsage "Initial Kernel Execution
/// State").
/// The MODE register a wave starts with, from the kernel descriptor's COMPUTE_PGM_RSRC1 (LLVM
/// AMDGPUUsage, "compute_pgm_rsrc1"): FP_ROUND[3:0] from FLOAT_ROUND_MODE_32/16_64 (bits 15:12),
/// FP_DENORM[7:4] from FLOAT_DENORM_MODE_32/16_64 (bits 19:16), DX10_CLAMP (bit 8) from bit 21 and
/// IEEE (bit 9) from bit 23, as the hardware loads it at dispatch.
fn initial_mode(rsrc1: u32) -> u32 {
    ((rsrc1 >> 12) & 0xff) | ((rsrc1 >> 21) & 1) << 8 | ((rsrc1 >> 23) & 1) << 9
}

fn init_workgroup(sh: &Shared, g: &mut Wg) {
    let idx = g.idx;
    let d = sh.d;
    let wg = [idx % sh.nwg[0], (idx / sh.nwg[0]) % sh.nwg[1], idx / (sh.nwg[0] * sh.nwg[1])];
    // Partial workgroups at the grid's end.
    let size: [u32; 3] = std::array::from_fn(|k| {
        let full = d.workgroup_size[k] as u64;
        (d.grid_size[k] as u64 - wg[k] * full).min(full) as u32
    });
    let items = size[0] * size[1] * size[2];
    let nwaves = items.div_ceil(64) as usize;
    let waves = &mut g.waves;
    while waves.len() < nwaves {
        waves.push(Wave::new());
    }
    g.waves_live = nwaves;
    g.lds.resize(sh.lds_size, 0);
    g.lds.fill(0);
    let kd = &sh.kd;
    let props = kd.kernel_code_properties;
    let rsrc2 = kd.compute_pgm_rsrc2;
    let vgprs = ((kd.compute_pgm_rsrc1 & 0x3f) as usize + 1) * 8;
    for (n, w) in waves.iter_mut().take(nwaves).enumerate() {
        w.s = [0; 256];
        for r in w.v.iter_mut().take(vgprs.min(512)) {
            *r = [0; 64];
        }
        for r in w.v.iter_mut().skip(256).take(vgprs.min(256)) {
            *r = [0; 64];
        }
        w.scc = false;
        w.pc = sh.entry;
        w.status = Status::Running;
        w.gws_wait = None;
        w.id = n as u32;
        w.wg = idx;
        w.mode = initial_mode(kd.compute_pgm_rsrc1);
        w.count = 0;
        w.trap_mode = false;
        w.host_trap_seen = u64::MAX;
        w.in_host_trap = false;
        if sh.opts.trap.is_some() {
            // The trap temporaries set up for a trap handler: the dispatch id in ttmp6-7,
            // workgroup id X, Y, Z in ttmp8-10, the wave's index in its workgroup in
            // ttmp11[5:0].
            w.set_s64(salu::TTMP0 + 6, d.dispatch_id);
            for (k, id) in wg.iter().enumerate() {
                w.set_s(salu::TTMP0 + 8 + k, *id as u32);
            }
            w.set_s(salu::TTMP0 + 11, n as u32 & 0x3f);
        }
        w.priv_size = sh.priv_size;
        // Scratch is allocated on the first private write (zero until then).
        if w.scratch_used {
            w.scratch.fill(0);
            w.scratch_used = false;
        }
        if w.scratch.len() != sh.priv_size as usize * 64 {
            w.scratch = Vec::new();
        }
        // User SGPRs, in AMDGPUUsage order (or COMPUTE_USER_DATA_* as they are).
        let mut s = 0usize;
        let put = |w: &mut Wave, s: &mut usize, v: u32| {
            w.set_s(*s, v);
            *s += 1;
        };
        if let Some(r) = &d.registers {
            let n = (((rsrc2 >> 1) & 0x1f) as usize).min(16);
            for v in &r.user_data[..n] {
                put(w, &mut s, *v);
            }
        }
        if props & ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER != 0 {
            // A V# for the swizzled private segment: ADD_TID_ENABLE marks it per-lane.
            put(w, &mut s, 0);
            put(w, &mut s, 0);
            put(w, &mut s, u32::MAX);
            put(w, &mut s, 1 << 23 | 0x27000);
        }
        for (bit, v) in [
            (ENABLE_SGPR_DISPATCH_PTR, d.dispatch_ptr),
            (ENABLE_SGPR_QUEUE_PTR, d.queue_ptr),
            (ENABLE_SGPR_KERNARG_SEGMENT_PTR, d.kernarg_address),
            (ENABLE_SGPR_DISPATCH_ID, 0),
            (ENABLE_SGPR_FLAT_SCRATCH_INIT, 0),
        ] {
            if props & bit != 0 {
                put(w, &mut s, v as u32);
                put(w, &mut s, (v >> 32) as u32);
            }
        }
        if props & ENABLE_SGPR_PRIVATE_SEGMENT_SIZE != 0 {
            put(w, &mut s, sh.priv_size);
        }
        // System SGPRs start at USER_SGPR_COUNT.
        s = ((rsrc2 >> 1) & 0x1f) as usize;
        for (k, id) in wg.iter().enumerate() {
            if rsrc2 & (1 << (7 + k)) != 0 {
                put(w, &mut s, *id as u32);
            }
        }
        if rsrc2 & (1 << 10) != 0 {
            put(w, &mut s, 0);
        }
        if rsrc2 & 1 != 0 {
            // Private segment wave offset: each wave's scratch is its own buffer.
            put(w, &mut s, 0);
        }
        // Work-item ids packed in v0 (gfx90a): x [9:0], y [19:10], z [29:20].
        // The wave's first work-item by division, the rest by counting (no divisions per lane).
        let t0 = n as u32 * 64;
        let (mut x, mut y, mut z) = (t0 % size[0], (t0 / size[0]) % size[1], t0 / (size[0] * size[1]));
        let lanes = items.saturating_sub(t0).min(64) as usize;
        for v in w.v[0].iter_mut().take(lanes) {
            *v = x | y << 10 | z << 20;
            x += 1;
            if x == size[0] {
                x = 0;
                y += 1;
                if y == size[1] {
                    y = 0;
                    z += 1;
                }
            }
        }
        let exec = if lanes == 64 { u64::MAX } else { (1u64 << lanes) - 1 };
        w.set_exec(exec);
        w.s[VCC] = 0;
        w.s[M0] = u32::MAX;
        let _ = EXEC;
    }
}

/// Runs the waves of a workgroup (interleaved, switching at `s_barrier` and `s_sleep`) until
/// they end or wait in a GWS barrier.
fn resume_workgroup(
    sh: &Shared,
    g: &mut Wg,
    code: &mut Code,
    m: &mut Mem,
    stats: &mut Stats,
    preempt: &dyn Fn() -> bool,
) -> Result<WgEnd, ExecError> {
    let kd = &sh.kd;
    let mut slice_end = stats.wave_instructions + WG_SLICE;
    let mut slice_start = std::time::Instant::now();
    let mut check_at = stats.wave_instructions + 4096;
    let idx = g.idx;
    let nwaves = g.waves_live;
    let waves = &mut g.waves;
    let env_base = Env {
        hw_id: 0,
        lds_alloc: (sh.lds_size as u32).div_ceil(512),
        gpr_alloc: ((kd.compute_pgm_rsrc1 & 0x3f) << 8) | ((kd.compute_pgm_rsrc1 >> 6) & 0xf) << 24,
        trap: sh.opts.trap.as_ref(),
    };
    let mut local = Local { lds: &mut g.lds };
    let mut gws_target = 0;
    loop {
        let mut running = false;
        let mut all_slept = true;
        for (n, w) in waves.iter_mut().take(nwaves).enumerate() {
            if w.status == Status::Sema && sema_released(sh, w) {
                w.status = Status::Running;
            }
            if w.status != Status::Running {
                continue;
            }
            running = true;
            let env = Env { hw_id: (n as u32 & 15) | ((n as u32 % 4) << 4) | (((idx % 16) as u32) << 8), ..env_base };
            if let Some(t) = run_wave(sh, w, code, m, &mut local, &env, stats)? {
                gws_target = t;
            }
            all_slept &= w.slept;
        }
        if running && all_slept {
            // Every wave that ran is spin-waiting (`s_sleep` in a poll loop, as RCCL's and
            // ROCr's waits do): what it waits for comes from another thread (another workgroup,
            // GPU or the host), so give the CPU to it, as the sleep gives the CU to other waves.
            std::thread::yield_now();
        }
        let live: Vec<usize> = (0..nwaves).filter(|&n| waves[n].status != Status::Done).collect();
        if live.is_empty() {
            return Ok(WgEnd::Done);
        }
        if live.iter().all(|&n| waves[n].status == Status::Barrier) {
            for &n in &live {
                waves[n].status = Status::Running;
            }
        } else if !running {
            if live.iter().any(|&n| waves[n].status == Status::Gws) {
                return Ok(WgEnd::Gws(gws_target));
            }
            let queued = live.iter().filter_map(|&n| waves[n].gws_wait.map(|x| x.generation)).min();
            if let Some(generation) = queued {
                return Ok(WgEnd::Sema(generation));
            }
            return Err(ExecError::Invalid("workgroup deadlocked".into()));
        }
        // The clock is read every 4096 instructions at most (barrier-heavy workgroups come
        // here every few instructions).
        if stats.wave_instructions >= check_at {
            check_at = stats.wave_instructions + 4096;
            if sh.opts.cancel.as_ref().is_some_and(|c| (c.0)()) {
                return Err(ExecError::Cancelled);
            }
            if stats.wave_instructions >= slice_end || slice_start.elapsed() >= WG_SLICE_TIME {
                if preempt() {
                    return Ok(WgEnd::Preempted);
                }
                slice_end = stats.wave_instructions + WG_SLICE;
                slice_start = std::time::Instant::now();
            }
        }
    }
}

/// Whether a release reached GWS since wave `w` queued in `ds_gws_sema_p` (it may go on).
fn sema_released(sh: &Shared, w: &Wave) -> bool {
    match (sh.opts.gws.as_deref(), w.gws_wait) {
        (Some(g), Some(x)) => g.generation() > x.generation,
        _ => true,
    }
}

/// Executes one decoded instruction.
pub(crate) fn step(
    w: &mut Wave,
    i: &Inst,
    pc: u64,
    m: &mut Mem,
    loc: &mut Local,
    env: &Env,
    clock: &Clock,
) -> Result<Flow, Box<ExecError>> {
    Ok(match i.enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp => exec_scalar(w, i, pc, env)?,
        Enc::Smem => {
            exec_smem(w, i, pc, m, clock)?;
            Flow::Next
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p => {
            exec_vector(w, i, pc)?;
            Flow::Next
        }
        Enc::Ds if i.op == Op::ds_gws_barrier && i.gds => {
            // Wait for data0 + 1 waves of the dispatch (one GWS resource; LLVM encodes the
            // data VGPR in the ADDR field).
            let e = w.exec();
            let l = if e == 0 { 0 } else { e.trailing_zeros() as usize };
            Flow::Gws(w.v[i.addr as usize][l].wrapping_add(1))
        }
        Enc::Ds
            if i.gds
                && matches!(
                    i.op,
                    Op::ds_gws_init
                        | Op::ds_gws_sema_v
                        | Op::ds_gws_sema_br
                        | Op::ds_gws_sema_p
                        | Op::ds_gws_sema_release_all
                ) =>
        {
            Flow::GwsSema
        }
        Enc::Ds => {
            exec_ds(w, i, pc, m, loc)?;
            Flow::Next
        }
        Enc::Flat | Enc::Global | Enc::Scratch | Enc::Mubuf => {
            exec_vmem(w, i, pc, m, loc)?;
            Flow::Next
        }
    })
}

/// Decodes `words` and executes that one instruction on a zeroed wave (all lanes active)
/// against a memory where every access faults: `Err(Unsupported)` when the interpreter
/// lacks it (decode or execution), else the instruction's size in bytes. For coverage tools.
pub fn probe(words: [u32; 3]) -> Result<usize, ExecError> {
    struct NoMem;
    impl Memory for NoMem {
        fn read(&self, va: u64, _: &mut [u8]) -> Result<(), Fault> {
            Err(Fault { va: va & !0xfff, write: false })
        }
        fn write(&self, va: u64, _: &[u8]) -> Result<(), Fault> {
            Err(Fault { va: va & !0xfff, write: true })
        }
        fn atomic(&self, va: u64, _: u32, _: &mut dyn FnMut(u64) -> u64) -> Result<u64, Fault> {
            Err(Fault { va: va & !0xfff, write: true })
        }
    }
    let i = decode(words).map_err(|e| ExecError::Unsupported { pc: 0, encoding: e.encoding, what: e.what })?;
    let mut w = Wave::new();
    w.set_exec(u64::MAX);
    let mut lds = vec![0u8; 1024];
    let mut loc = Local { lds: &mut lds };
    let mut m = Mem::new(&NoMem);
    let clock = Clock { start: std::time::Instant::now() };
    match step(&mut w, &i, 0, &mut m, &mut loc, &Env::default(), &clock).map_err(|e| *e) {
        Err(e @ ExecError::Unsupported { .. }) => Err(e),
        _ => Ok(i.size as usize),
    }
}

fn trace(w: &Wave, i: &Inst, pc: u64) {
    let e = w.exec();
    let l = if e == 0 { 0 } else { e.trailing_zeros() as usize };
    let d = i.dst as usize;
    let val = match i.enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Smem => format!("s{d}={:#x}", w.s[d & 0xff]),
        Enc::Vopc => format!("vcc={:#x}", w.vcc()),
        _ if i.cmp.is_some() => format!("s{}={:#x}", i.sdst, w.sgpr64(i.sdst as usize)),
        _ => format!("v{d}[{l}]={:#x} v{}[{l}]={:#x}", w.v[d][l], d + 1, w.v[d + 1][l]),
    };
    eprintln!("{pc:#x} {:<24} {:#018x} exec={e:#x} scc={} {val}", i.op.name(), i.raw, w.scc as u8);
}

/// Decodes the instruction at `pc` (reading up to 12 bytes, less at the end of a mapping).
fn fetch(m: &mut Mem, pc: u64) -> Result<Inst, ExecError> {
    let mut b = [0u8; 12];
    let mut have = 0;
    for n in [12usize, 8, 4] {
        if m.read(pc, &mut b[..n]).is_ok() {
            have = n;
            break;
        }
    }
    if have == 0 {
        return Err(ExecError::Fault(Fault { va: pc & !0xfff, write: false }));
    }
    let w = [0, 1, 2].map(|k| u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap()));
    let inst = decode(w).map_err(|e| ExecError::Unsupported { pc, encoding: e.encoding, what: e.what })?;
    if inst.size as usize > have {
        return Err(ExecError::Fault(Fault { va: (pc + have as u64) & !0xfff, write: false }));
    }
    Ok(inst)
}

/// `ds_gws_init`, `ds_gws_sema_v`, `ds_gws_sema_br`, `ds_gws_sema_p` and
/// `ds_gws_sema_release_all` on the dispatch's GWS ([`Options::gws`]), resource
/// `(M0[21:16] + OFFSET0[5:0]) % 64`, the count (INIT, BR) from the first active lane of the VGPR
/// that LLVM encodes in the ADDR field (the ISA's GWS instruction table). False: the wave waits
/// in `ds_gws_sema_p` ([`Wave::gws_wait`] holds its place in the queue).
fn gws_sema(sh: &Shared, w: &mut Wave, i: &Inst) -> Result<bool, ExecError> {
    let Some(g) = sh.opts.gws.as_deref() else {
        return Err(ExecError::Invalid(format!(
            "{} at {:#x}: the queue has no GWS (ALLOC_QUEUE_GWS)",
            i.op.name(),
            w.pc
        )));
    };
    let rid = (((w.s[M0] >> 16) & 0x3f) + (i.offset as u32 & 0x3f)) as usize % crate::GWS_RESOURCES;
    let e = w.exec();
    let lane = if e == 0 { 0 } else { e.trailing_zeros() as usize };
    let count = w.v[i.addr as usize][lane];
    match i.op {
        Op::ds_gws_init => g.init(rid, count),
        Op::ds_gws_sema_v => g.release(rid, 1),
        Op::ds_gws_sema_br => g.release(rid, count),
        Op::ds_gws_sema_release_all => g.release_all(rid),
        _ => match g.acquire(rid, w.gws_wait.take()) {
            Ok(()) => {}
            Err(wait) => {
                w.gws_wait = Some(wait);
                return Ok(false);
            }
        },
    }
    Ok(true)
}

fn run_wave(
    sh: &Shared,
    w: &mut Wave,
    code: &mut Code,
    m: &mut Mem,
    loc: &mut Local,
    env: &Env,
    stats: &mut Stats,
) -> Result<Option<u32>, ExecError> {
    let budget = sh.opts.max_wave_instructions.unwrap_or(u64::MAX);
    // Switch to the workgroup's other waves now and then, so a wave spinning on what another
    // wave of its workgroup writes (without s_barrier or s_sleep) still sees it happen.
    let slice_end = w.count + WAVE_SLICE;
    let Code { pages, insts } = code;
    let new_page = || vec![NONE; 4096].into_boxed_slice();
    let mut page_va = w.pc >> 12;
    let mut page = pages.entry(page_va).or_insert_with(new_page);
    // The dispatch's counters, added to `stats` as the loop ends: the wave's instructions from
    // `w.count`, its active lanes summed here.
    let start = w.count;
    w.slept = false;
    let mut lanes = 0;
    let (mut last_exec, mut last_lanes) = (0u64, 0u64);
    // A host trap is taken between instructions: here, as the wave resumes.
    if let Some(t) = env.trap.filter(|t| t.tba != 0 && !w.trap_mode) {
        if let Some(id) = t.host_trap.as_ref().and_then(|h| (h.take)(env.hw_id, &mut w.host_trap_seen)) {
            w.pc = salu::enter_trap(w, t, w.pc, id << 16 | salu::TTMP1_HT);
            w.in_host_trap = true;
        }
    }
    let r = loop {
        if w.count >= slice_end {
            break Ok(None);
        }
        let pc = w.pc;
        if pc >> 12 != page_va {
            page_va = pc >> 12;
            page = pages.entry(page_va).or_insert_with(new_page);
        }
        let slot = &mut page[(pc & 0xfff) as usize];
        if *slot == NONE {
            match fetch(m, pc) {
                Ok(i) => insts.push(i),
                Err(e) => break Err(e),
            }
            *slot = insts.len() as u32 - 1;
        }
        let i = &insts[*slot as usize];
        w.count += 1;
        // EXEC's popcount, counted again only when EXEC changed (x86-64's baseline has no
        // POPCNT: about 20 instructions).
        let exec = w.exec();
        if exec != last_exec {
            (last_exec, last_lanes) = (exec, exec.count_ones() as u64);
        }
        lanes += last_lanes;
        if w.count > budget {
            break Err(ExecError::Invalid(format!("wave ran past its budget of {budget} instructions (pc {pc:#x})")));
        }
        let flow = match step(w, i, pc, m, loc, env, &sh.clock) {
            Ok(f) => f,
            Err(e) => break Err(*e),
        };
        match flow {
            Flow::Next => {
                if sh.trace && w.id == 0 && w.wg == 0 {
                    trace(w, i, pc);
                }
                w.pc = pc.wrapping_add(i.size as u64)
            }
            Flow::Jump(t) => w.pc = t,
            Flow::Barrier => {
                w.pc = pc.wrapping_add(i.size as u64);
                w.status = Status::Barrier;
                break Ok(None);
            }
            Flow::Yield => {
                // s_sleep: let the other waves of the workgroup run (a spin-wait).
                w.pc = pc.wrapping_add(i.size as u64);
                w.slept = true;
                break Ok(None);
            }
            Flow::Gws(target) => {
                w.pc = pc.wrapping_add(i.size as u64);
                w.status = Status::Gws;
                break Ok(Some(target));
            }
            Flow::Interrupt(data, privileged) => {
                if let Some(t) = &sh.opts.trap {
                    (t.interrupt)(data, privileged);
                }
                w.pc = pc.wrapping_add(i.size as u64)
            }
            Flow::GwsSema => match gws_sema(sh, w, i) {
                Ok(true) => w.pc = pc.wrapping_add(i.size as u64),
                Ok(false) => {
                    // Queued: the wave runs `ds_gws_sema_p` again once released.
                    w.status = Status::Sema;
                    break Ok(None);
                }
                Err(e) => break Err(e),
            },
            Flow::End => {
                w.status = Status::Done;
                break Ok(None);
            }
        }
    };
    stats.wave_instructions += w.count - start;
    stats.lane_instructions += lanes;
    r
}
