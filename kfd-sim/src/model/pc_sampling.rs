//! PC sampling: ROCm DKMS's `AMDKFD_IOC_PC_SAMPLE` (nr 0x85, KFD 1.16; `kfd_pc_sampling.c` as
//! posted upstream in "drm/amdkfd: add pc sampling support" v4, amd-gfx, February 2024), with
//! the host-trap method GC 9.4.2 has.
//!
//! A process registers with the GPU's sampler (CREATE: a trace id), then START makes the
//! driver's sampling thread send host traps (SQ_CMD CMD=TRAP, trap id 4, to one wave slot of
//! every CU, round robin over 8 slots × 4 SIMDs, once per `interval` µs) and sets the host-trap
//! enable bit in the process's first-level TMA, so that its waves take the trap into the
//! second-level handler (ROCr's writes each wave's PC into the tool's buffer). The format is the
//! GPU's, shared by every process: a CREATE with other parameters while a session exists gets
//! EEXIST and the parameters in use.
//!
//! The kernel keeps the sessions in the GPU's `kfd_node->pcs_data`; processes here each have a
//! model, so the sessions live in a table every process of the session shares (`pcs-table`,
//! mapped shared as `dbg-table` is; see [`super::debug`]). The sampling thread is not a thread:
//! the GPU's sampling start time and interval say which wave slot each host trap targets, and a
//! wave asks ([`host_trap`]) as it resumes whether one of them hit it since it last asked.
//!
//! Differences (FIDELITY.md row 19): STOP clears the process's host-trap bit only when none of
//! its sessions on the GPU is still started (v4 clears it at any STOP); a QUERY with no buffer
//! gets the number of formats and success, as the DKMS does (v4: ENOSPC), since ROCr asks so.

use super::process::{Process, TrapHandler};
use super::{gpus, sys};
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};

/// Sessions (trace ids) a machine holds at once.
pub const ENTRIES: usize = 256;
/// GPUs with a sampler (topology order).
pub const MAX_GPUS: usize = 16;
/// Name of the table in the session directory.
pub const TABLE_FILE: &str = "pcs-table";
/// The trap id the sampling thread's host traps carry (SQ_CMD DATA; "use trapID 4 for host
/// trap"): ROCr's handler takes trap id 0 for a debugger's trap.
pub const HOST_TRAP_ID: u32 = 4;
/// `kgd_gfx_v9_trigger_pc_sample_trap` on aldebaran: wave slots and SIMDs it goes round.
const WAVE_SLOTS: u64 = 8;
const SIMDS: u64 = 4;

/// `sample_info_hosttrap_9_0_0`: GC 9.4.2's one format.
const HOSTTRAP_9_0_0: kfd_pc_sample_info = kfd_pc_sample_info {
    interval: 0,
    interval_min: 1,
    interval_max: u64::MAX,
    flags: 0,
    method: KFD_IOCTL_PCS_METHOD_HOSTTRAP,
    r#type: KFD_IOCTL_PCS_TYPE_TIME_US,
};

/// A GPU's sampler (`kfd_dev_pc_sampling_data`).
#[repr(C)]
struct Device {
    /// The sessions' `kfd_pc_sample_info` as five words, valid while a session exists.
    info: [AtomicU64; 5],
    /// CLOCK_MONOTONIC ns at which sampling started (the first START); 0: not sampling.
    start_ns: AtomicU64,
    /// The last trace id given (`idr_alloc_cyclic` from 1).
    last_id: AtomicU32,
    _pad: AtomicU32,
}

/// A session (`pcs_entry`).
#[repr(C)]
struct Entry {
    /// Trace id; 0: free.
    trace_id: AtomicU32,
    pid: AtomicU32,
    gpu_id: AtomicU32,
    /// Started.
    enabled: AtomicU32,
}

#[repr(C)]
struct Table {
    /// Pid of the process changing the table (`pcs_data.mutex`); 0: none.
    lock: AtomicU32,
    _pad: AtomicU32,
    devices: [Device; MAX_GPUS],
    entries: [Entry; ENTRIES],
}

fn table() -> Option<&'static Table> {
    static T: OnceLock<Option<&'static Table>> = OnceLock::new();
    *T.get_or_init(|| {
        let p = sys::session_table(TABLE_FILE, std::mem::size_of::<Table>(), true)?;
        // SAFETY: the mapping is `size_of::<Table>()` bytes, page-aligned, never unmapped, and
        // `Table` is plain atomics (valid for any bytes, zero included); other processes touch
        // it only through atomics too.
        Some(unsafe { &*(p as *const Table) })
    })
}

/// The table, locked; sessions of processes that are gone released (`kfd_pc_sample_release`
/// at process exit).
struct Locked(&'static Table);

impl Drop for Locked {
    fn drop(&mut self) {
        self.0.lock.store(0, SeqCst);
    }
}

fn lock() -> Result<Locked, Errno> {
    let t = table().ok_or(Errno::ENOMEM)?;
    let me = sys::getpid();
    loop {
        let holder = t.lock.load(SeqCst);
        // A holder that died released nothing: take over from it.
        if (holder == 0 || !sys::pid_alive(holder)) && t.lock.compare_exchange(holder, me, SeqCst, SeqCst).is_ok() {
            break;
        }
        std::thread::yield_now();
    }
    let l = Locked(t);
    l.release(|pid| !sys::pid_alive(pid));
    Ok(l)
}

/// The sampler of GPU `gpu_id`.
fn device(gpu_id: u32) -> Option<&'static Device> {
    let i = gpus::index_below(gpu_id, MAX_GPUS)?;
    Some(&table()?.devices[i])
}

impl Locked {
    fn sessions(&self, gpu_id: u32) -> impl Iterator<Item = &'static Entry> {
        self.0.entries.iter().filter(move |e| e.trace_id.load(SeqCst) != 0 && e.gpu_id.load(SeqCst) == gpu_id)
    }

    /// Frees the sessions of the processes `gone` names, updating their samplers.
    fn release(&self, gone: impl Fn(u32) -> bool) {
        for e in &self.0.entries {
            if e.trace_id.load(SeqCst) != 0 && gone(e.pid.load(SeqCst)) {
                let gpu_id = e.gpu_id.load(SeqCst);
                self.free(e);
                self.update(gpu_id);
            }
        }
    }

    fn free(&self, e: &Entry) {
        e.trace_id.store(0, SeqCst);
        e.enabled.store(0, SeqCst);
        e.pid.store(0, SeqCst);
    }

    /// The sampler after sessions came or went: its format cleared with the last session
    /// (`use_count` 0), sampling stopped with the last started one (`active_count` 0).
    fn update(&self, gpu_id: u32) {
        let Some(d) = device(gpu_id) else { return };
        if self.sessions(gpu_id).next().is_none() {
            for w in &d.info {
                w.store(0, SeqCst);
            }
        }
        if !self.sessions(gpu_id).any(|e| e.enabled.load(SeqCst) != 0) {
            d.start_ns.store(0, SeqCst);
        }
    }
}

fn load_info(d: &Device) -> kfd_pc_sample_info {
    let w: [u64; 5] = std::array::from_fn(|k| d.info[k].load(SeqCst));
    kfd_pc_sample_info {
        interval: w[0],
        interval_min: w[1],
        interval_max: w[2],
        flags: w[3],
        method: w[4] as u32,
        r#type: (w[4] >> 32) as u32,
    }
}

fn store_info(d: &Device, i: &kfd_pc_sample_info) {
    for (k, v) in [i.interval, i.interval_min, i.interval_max, i.flags, i.method as u64 | (i.r#type as u64) << 32]
        .into_iter()
        .enumerate()
    {
        d.info[k].store(v, SeqCst);
    }
}

/// A new KFD process for `pid`: sessions an earlier process of the same pid left go.
pub fn process_started(pid: u32) {
    if has_sessions(pid) {
        if let Ok(t) = lock() {
            t.release(|p| p == pid);
        }
    }
}

/// Whether process `pid` has a PC sampling session (`pc_sampling_ref`): the debugger is refused
/// then (EBUSY), as the two share the trap handler.
pub fn has_sessions(pid: u32) -> bool {
    table().is_some_and(|t| t.entries.iter().any(|e| e.trace_id.load(SeqCst) != 0 && e.pid.load(SeqCst) == pid))
}

/// `kfd_ioctl_pc_sample` for process `p`: no CAP_PERFMON or CAP_SYS_ADMIN → EACCES (the ioctl's
/// `KFD_IOC_FLAG_PERFMON`); a GPU the process does not have → EINVAL; DESTROY, START and STOP of
/// a trace id that is not the caller's on that GPU → EINVAL; QUERY and CREATE while debugging is
/// enabled → EBUSY. Then per op (`kfd_pc_sample_*`):
/// - QUERY_CAPABILITIES writes the GPU's formats (one, [`HOSTTRAP_9_0_0`]) to `sample_info_ptr`,
///   or, unless `flags` is `KFD_IOCTL_PCS_QUERY_TYPE_FULL`, the one in use while a session
///   exists (`num_sample_info` = 1). A NULL buffer or `num_sample_info` 0 only gets the number.
/// - CREATE (`num_sample_info` 1, else EINVAL): an interval that is not a power of 2 where
///   `flags` asks for one → EINVAL; no format with that method, type and interval range →
///   EOPNOTSUPP; other parameters than the sessions' in use → EEXIST, with those written back;
///   no room → ENOMEM. Returns the new `trace_id` (from 1, cyclic).
/// - DESTROY: a started session → EBUSY.
/// - START: started already → EALREADY; else the process's waves on the GPU take host traps.
/// - STOP: not started → EALREADY; returns once no wave of the process is left in a host trap
///   (`remap_queue`), so the tool may free its buffer.
pub fn pc_sample(p: &Arc<Process>, args: &mut kfd_ioctl_pc_sample_args) -> Result<libc::c_int, Errno> {
    // CAP_PERFMON (38) or CAP_SYS_ADMIN (21).
    if !sys::has_capability(38) && !sys::has_capability(21) {
        return Err(Errno::EACCES);
    }
    let th = p.state.lock().pdd(args.gpu_id).map(|d| d.trap_handler.clone()).ok_or(Errno::EINVAL)?;
    let me = sys::getpid();
    let t = lock()?;
    let d = device(args.gpu_id).ok_or(Errno::EINVAL)?;
    let entry = || {
        t.sessions(args.gpu_id)
            .find(|e| e.trace_id.load(SeqCst) == args.trace_id && e.pid.load(SeqCst) == me)
            .ok_or(Errno::EINVAL)
    };
    match args.op {
        KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES | KFD_IOCTL_PCS_OP_CREATE if super::debug::enabled(me) => Err(Errno::EBUSY),
        KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES => {
            let current = t.sessions(args.gpu_id).next().is_some();
            if args.flags != KFD_IOCTL_PCS_QUERY_TYPE_FULL && current {
                args.num_sample_info = 1;
                if args.sample_info_ptr != 0 {
                    let i = load_info(d);
                    sys::copy_to_user(args.sample_info_ptr, sys::as_bytes(std::slice::from_ref(&i)))
                        .map_err(|_| Errno::EFAULT)?;
                }
                return Ok(0);
            }
            if args.sample_info_ptr == 0 || args.num_sample_info == 0 {
                args.num_sample_info = 1;
                return Ok(0);
            }
            sys::copy_to_user(args.sample_info_ptr, sys::as_bytes(std::slice::from_ref(&HOSTTRAP_9_0_0)))
                .map_err(|_| Errno::EFAULT)?;
            Ok(0)
        }
        KFD_IOCTL_PCS_OP_CREATE => {
            if args.num_sample_info != 1 {
                return Err(Errno::EINVAL);
            }
            let mut i = kfd_pc_sample_info::default();
            sys::copy_from_user(sys::as_bytes_mut(std::slice::from_mut(&mut i)), args.sample_info_ptr)
                .map_err(|_| Errno::EFAULT)?;
            if i.flags & KFD_IOCTL_PCS_FLAG_POWER_OF_2 != 0 && !i.interval.is_power_of_two() {
                return Err(Errno::EINVAL);
            }
            let f = &HOSTTRAP_9_0_0;
            if (i.method, i.r#type) != (f.method, f.r#type) || !(f.interval_min..=f.interval_max).contains(&i.interval)
            {
                return Err(Errno::EOPNOTSUPP);
            }
            if t.sessions(args.gpu_id).next().is_some() && load_info(d) != i {
                let cur = load_info(d);
                sys::copy_to_user(args.sample_info_ptr, sys::as_bytes(std::slice::from_ref(&cur)))
                    .map_err(|_| Errno::EFAULT)?;
                return Err(Errno::EEXIST);
            }
            let free = t.0.entries.iter().find(|e| e.trace_id.load(SeqCst) == 0).ok_or(Errno::ENOMEM)?;
            let in_use = |id: u32| t.0.entries.iter().any(|e| e.trace_id.load(SeqCst) == id);
            let mut id = d.last_id.load(SeqCst);
            loop {
                id = if id >= i32::MAX as u32 { 1 } else { id + 1 };
                if !in_use(id) {
                    break;
                }
            }
            if t.sessions(args.gpu_id).next().is_none() {
                store_info(d, &i);
            }
            d.last_id.store(id, SeqCst);
            free.pid.store(me, SeqCst);
            free.gpu_id.store(args.gpu_id, SeqCst);
            free.enabled.store(0, SeqCst);
            free.trace_id.store(id, SeqCst);
            args.trace_id = id;
            Ok(0)
        }
        KFD_IOCTL_PCS_OP_DESTROY => {
            let e = entry()?;
            if e.enabled.load(SeqCst) != 0 {
                return Err(Errno::EBUSY);
            }
            t.free(e);
            t.update(args.gpu_id);
            Ok(0)
        }
        KFD_IOCTL_PCS_OP_START => {
            let e = entry()?;
            if e.enabled.load(SeqCst) != 0 {
                return Err(Errno::EALREADY);
            }
            if d.start_ns.load(SeqCst) == 0 {
                d.start_ns.store(sys::clock_ns(libc::CLOCK_MONOTONIC).max(1), SeqCst);
            }
            e.enabled.store(1, SeqCst);
            th.host_trap_enabled.store(true, SeqCst);
            Ok(0)
        }
        KFD_IOCTL_PCS_OP_STOP => {
            let e = entry()?;
            if e.enabled.load(SeqCst) == 0 {
                return Err(Errno::EALREADY);
            }
            e.enabled.store(0, SeqCst);
            t.update(args.gpu_id);
            if !t.sessions(args.gpu_id).any(|e| e.pid.load(SeqCst) == me && e.enabled.load(SeqCst) != 0) {
                th.host_trap_enabled.store(false, SeqCst);
            }
            drop(t);
            // Waves already in the handler finish first (a wave that ended or faulted in it
            // never returns: waited for 1 s at most).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
            while th.host_traps_running.load(SeqCst) > 0 && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// The [`amdgcn_isa::HostTrap`] of a dispatch of the process whose pdd has `th`, on `gpu_id`:
/// whether the sampling thread's host traps hit the wave with `hw_id` since it last asked (`seen`:
/// the trap's sequence number then). Host trap `n` after the start targets wave slot `n % 8` of
/// SIMD `n / 8 % 4` on every CU (`kgd_gfx_v9_trigger_pc_sample_trap`); the first-level handler
/// drops it unless the process enabled host traps (`L_FETCH_2ND_TRAP`'s TMA flag).
pub fn host_trap(gpu_id: u32, th: &TrapHandler, hw_id: u32, seen: &mut u64) -> Option<u32> {
    if !th.host_trap_enabled.load(SeqCst) {
        return None;
    }
    let d = device(gpu_id)?;
    let start = d.start_ns.load(SeqCst);
    let interval_ns = d.info[0].load(SeqCst).saturating_mul(1000).max(1);
    let now = sys::clock_ns(libc::CLOCK_MONOTONIC);
    if start == 0 || now < start {
        return None;
    }
    let n = (now - start) / interval_ns;
    let (slot, simd) = ((hw_id & 0xf) as u64, ((hw_id >> 4) & 3) as u64);
    if *seen == u64::MAX || *seen > n || slot >= WAVE_SLOTS {
        *seen = n;
        return None;
    }
    // The first trap after `seen` that targets this wave's slot.
    let target = simd * WAVE_SLOTS + slot;
    let period = WAVE_SLOTS * SIMDS;
    let after = *seen + 1;
    let next = after + (target + period - after % period) % period;
    *seen = n;
    if next > n {
        return None;
    }
    th.host_traps_running.fetch_add(1, SeqCst);
    Some(HOST_TRAP_ID)
}
