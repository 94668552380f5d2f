//! The KFD debugger interface, KFD 1.13 (linux `kfd_debug.c`; `kfd_chardev.c`
//! `kfd_ioctl_set_debug_trap`, `runtime_enable`, `runtime_disable`): what rocgdb and kfdtest's
//! `KFDDBGTest`s drive through `AMDKFD_IOC_DBG_TRAP` and `AMDKFD_IOC_RUNTIME_ENABLE`.
//!
//! A debugger (another process that ptrace-attached the target, or the target itself) enables
//! debugging with a file descriptor; KFD writes one byte to that file whenever an exception it
//! subscribed to is raised (`kfd_dbg_ev_raise`), and the debugger collects the exception with
//! `QUERY_DEBUG_EVENT`. Exceptions live on the target's queues (`EC_QUEUE_NEW` at CREATE_QUEUE,
//! `EC_QUEUE_WAVE_TRAP` from a trap handler's `s_sendmsg sendmsg(MSG_INTERRUPT)` with PRIV set),
//! on its devices (`EC_DEVICE_MEMORY_VIOLATION` at a GPU VM fault, which then is not signalled to
//! the runtime) and on the process (`EC_PROCESS_RUNTIME`: a runtime enable or disable, which
//! blocks the target until the debugger answers with `SEND_RUNTIME_EVENT`).
//!
//! The kernel keeps this in the target's `kfd_process`; here the debugger and the target are
//! different OS processes with a model each, so the state is a table shared by every process of
//! the session: the session directory's `dbg-table`, mapped shared (an anonymous shared mapping
//! without a session directory: then only a process and its forks see each other). A slot per
//! target pid holds the runtime state, the debugger (pid and the descriptor it gave), the
//! enabled and raised exceptions and the target's queues. The debugger's byte goes through
//! `/proc/<debugger>/fd/<fd>`, checked against the file it named at enable (a FIFO or pipe).
//!
//! Not modelled (FIDELITY.md): SUSPEND/RESUME_QUEUES, address watch, and wave launch mode HALT or
//! DEBUG answer EOPNOTSUPP; a SEND_RUNTIME_EVENT of queue or device exceptions is not passed on
//! to the runtime.

use super::gpus;
use super::sys;
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::OnceLock;

/// Targets a session can hold at once (a slot is taken at RUNTIME_ENABLE or DBG_TRAP_ENABLE,
/// and freed when its process is gone).
pub const SLOTS: usize = 128;
/// GPUs whose device exceptions a slot holds (topology order).
pub const MAX_GPUS: usize = 16;
/// Queues of a target a slot holds (the first ones created).
pub const MAX_QUEUES: usize = 128;
/// Name of the table in the session directory.
pub const TABLE_FILE: &str = "dbg-table";

#[repr(C)]
struct QueueSlot {
    /// `queue_id + 1`; 0: free.
    id: AtomicU32,
    gpu_id: AtomicU32,
    doorbell_id: AtomicU32,
    queue_type: AtomicU32,
    ring_size: AtomicU32,
    ctx_save_restore_area_size: AtomicU32,
    /// `q->properties.exception_status`.
    status: AtomicU64,
    ring_base: AtomicU64,
    wptr: AtomicU64,
    rptr: AtomicU64,
    ctx_save_restore_address: AtomicU64,
}

#[repr(C)]
struct Slot {
    /// Target pid; 0: free.
    pid: AtomicU32,
    /// Debugger pid while debugging is enabled (`debug_trap_enabled`); 0: not enabled.
    debugger: AtomicU32,
    /// The debugger's descriptor (`dbg_ev_file`) in its process.
    dbg_fd: AtomicI32,
    runtime_state: AtomicU32,
    ttmp_setup: AtomicU32,
    /// `runtime_enable_sema`.
    sema: AtomicU32,
    dbg_flags: AtomicU32,
    /// `SPI_GDBG_TRAP_MASK.EXCP_EN` as `SET_WAVE_LAUNCH_OVERRIDE` leaves it.
    trap_mask: AtomicU32,
    /// (st_dev, st_ino) of the debugger's file at enable.
    dbg_dev: AtomicU64,
    dbg_ino: AtomicU64,
    r_debug: AtomicU64,
    /// `exception_enable_mask`.
    enable_mask: AtomicU64,
    /// `p->exception_status`.
    process_status: AtomicU64,
    /// `pdd->exception_status`, by topology index.
    device_status: [AtomicU64; MAX_GPUS],
    /// `pdd->vm_fault_exc_data`: VA (0: none) and NotPresent | ReadOnly << 1.
    fault_va: [AtomicU64; MAX_GPUS],
    fault_bits: [AtomicU32; MAX_GPUS],
    queues: [QueueSlot; MAX_QUEUES],
}

fn table() -> Option<&'static [Slot]> {
    static T: OnceLock<Option<&'static [Slot]>> = OnceLock::new();
    *T.get_or_init(|| {
        // A new table reads as zeroes: all slots free.
        let p = sys::session_table(TABLE_FILE, SLOTS * std::mem::size_of::<Slot>(), true)?;
        // SAFETY: the mapping is `len` bytes, page-aligned, never unmapped, and `Slot` is plain
        // atomics (valid for any bytes, zero included); other processes touch it only through
        // atomics too.
        Some(unsafe { std::slice::from_raw_parts(p as *const Slot, SLOTS) })
    })
}

/// The live slot of `pid`.
fn slot_of(pid: u32) -> Option<&'static Slot> {
    table()?.iter().find(|s| s.pid.load(SeqCst) == pid)
}

/// The slot of `pid`, claimed (all zero: runtime DISABLED, not debugged) if it has none.
fn claim(pid: u32) -> Option<&'static Slot> {
    if let Some(s) = slot_of(pid) {
        return Some(s);
    }
    let t = table()?;
    let s = t.iter().find(|s| {
        let cur = s.pid.load(SeqCst);
        (cur == 0 || !sys::pid_alive(cur)) && s.pid.compare_exchange(cur, pid, SeqCst, SeqCst).is_ok()
    })?;
    // What DISABLE leaves behind, then the runtime state and the queues of the pid before.
    disable(s);
    for a in [&s.runtime_state, &s.ttmp_setup, &s.sema] {
        a.store(0, SeqCst);
    }
    s.r_debug.store(0, SeqCst);
    for q in &s.queues {
        q.id.store(0, SeqCst);
    }
    Some(s)
}

fn gpu_index(gpu_id: u32) -> Option<usize> {
    gpus::index_below(gpu_id, MAX_GPUS)
}

/// Whether `s` is being debugged by a live debugger. A debugger that died ends the session as
/// its release does in the kernel (`kfd_process_notifier_release` disables its targets).
fn debugged(s: &Slot) -> bool {
    let d = s.debugger.load(SeqCst);
    if d == 0 {
        return false;
    }
    if !sys::pid_alive(d) {
        disable(s);
        return false;
    }
    true
}

/// Whether process `pid` has debugging enabled (`debug_trap_enabled`).
pub fn enabled(pid: u32) -> bool {
    slot_of(pid).is_some_and(debugged)
}

/// `debug_event_write_work_handler`: one byte to the debugger's file.
fn notify(s: &Slot) {
    use std::io::Write;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let path = format!("/proc/{}/fd/{}", s.debugger.load(SeqCst), s.dbg_fd.load(SeqCst));
    let Ok(mut f) = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(path) else { return };
    let same = f.metadata().is_ok_and(|m| m.dev() == s.dbg_dev.load(SeqCst) && m.ino() == s.dbg_ino.load(SeqCst));
    if same {
        let _ = f.write(b".");
    }
}

/// `kfd_dbg_ev_raise` for process exceptions: true if the debugger subscribed to them.
fn raise_process(s: &Slot, mask: u64) -> bool {
    s.process_status.fetch_or(mask & KFD_EC_MASK_PROCESS, SeqCst);
    subscribed(s, mask)
}

fn subscribed(s: &Slot, mask: u64) -> bool {
    if s.enable_mask.load(SeqCst) & mask != 0 {
        notify(s);
        true
    } else {
        false
    }
}

// ------------------------------------------------------------------------------------------
// The target's side (called in the process being debugged)
// ------------------------------------------------------------------------------------------

/// A new KFD process for `pid`: a slot left by an earlier process of the same pid (pids are
/// reused) goes, unless a live debugger made it for this one (`kfd_create_process` on behalf of
/// a tracee that had not opened /dev/kfd yet, which it then finds).
pub fn process_started(pid: u32) {
    if let Some(s) = slot_of(pid) {
        if !debugged(s) {
            s.pid.store(0, SeqCst);
        }
    }
}

/// `runtime_enable` (`enable`) or `runtime_disable` for this process, `queues` the number of
/// queues it has. Enable: a second enable → EBUSY, queues already created → EEXIST. Either,
/// under a debugger, raises `EC_PROCESS_RUNTIME` and blocks until the debugger's
/// `SEND_RUNTIME_EVENT` (`runtime_enable_sema`), or until it stops debugging. Without a shared
/// table only the enable state is kept (`fallback`).
pub fn runtime_enable(
    enable: bool,
    r_debug: u64,
    ttmp_setup: bool,
    queues: usize,
    fallback: &mut bool,
) -> Result<(), Errno> {
    let Some(s) = claim(sys::getpid()) else {
        if enable && *fallback {
            return Err(Errno::EBUSY);
        }
        *fallback = enable;
        return Ok(());
    };
    if enable {
        if s.runtime_state.load(SeqCst) != DEBUG_RUNTIME_STATE_DISABLED {
            return Err(Errno::EBUSY);
        }
        if queues != 0 {
            return Err(Errno::EEXIST);
        }
        s.r_debug.store(r_debug, SeqCst);
        s.ttmp_setup.store(ttmp_setup as u32, SeqCst);
        s.runtime_state.store(DEBUG_RUNTIME_STATE_ENABLED, SeqCst);
    } else {
        s.runtime_state.store(DEBUG_RUNTIME_STATE_DISABLED, SeqCst);
        s.r_debug.store(0, SeqCst);
    }
    *fallback = enable;
    if debugged(s) {
        raise_process(s, kfd_ec_mask(EC_PROCESS_RUNTIME));
        // down_interruptible(&p->runtime_enable_sema).
        loop {
            let c = s.sema.load(SeqCst);
            if c > 0 && s.sema.compare_exchange(c, c - 1, SeqCst, SeqCst).is_ok() {
                break;
            }
            if !debugged(s) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    if !enable {
        s.ttmp_setup.store(0, SeqCst);
    }
    Ok(())
}

/// What a queue of this process looks like to a debugger (`pqm_get_queue_snapshot`).
pub struct QueueInfo {
    pub queue_id: u32,
    pub gpu_id: u32,
    pub doorbell_id: u32,
    pub queue_type: u32,
    pub ring_base: u64,
    pub ring_size: u32,
    pub wptr: u64,
    pub rptr: u64,
    pub ctx_save_restore_address: u64,
    pub ctx_save_restore_area_size: u32,
}

/// CREATE_QUEUE: files the queue where a debugger can see it and, while debugged, raises
/// `EC_QUEUE_NEW` on it (`kfd_ioctl_create_queue`'s `kfd_dbg_ev_raise`).
pub fn queue_created(q: &QueueInfo) {
    let Some(s) = slot_of(sys::getpid()) else { return };
    let Some(e) = s.queues.iter().find(|e| e.id.compare_exchange(0, q.queue_id + 1, SeqCst, SeqCst).is_ok()) else {
        return;
    };
    e.gpu_id.store(q.gpu_id, SeqCst);
    e.doorbell_id.store(q.doorbell_id, SeqCst);
    e.queue_type.store(q.queue_type, SeqCst);
    e.ring_base.store(q.ring_base, SeqCst);
    e.ring_size.store(q.ring_size, SeqCst);
    e.wptr.store(q.wptr, SeqCst);
    e.rptr.store(q.rptr, SeqCst);
    e.ctx_save_restore_address.store(q.ctx_save_restore_address, SeqCst);
    e.ctx_save_restore_area_size.store(q.ctx_save_restore_area_size, SeqCst);
    e.status.store(0, SeqCst);
    if debugged(s) {
        let m = kfd_ec_mask(EC_QUEUE_NEW);
        e.status.fetch_or(m, SeqCst);
        subscribed(s, m);
    }
}

/// DESTROY_QUEUE: the queue leaves the debugger's view.
pub fn queue_destroyed(queue_id: u32) {
    let Some(s) = slot_of(sys::getpid()) else { return };
    if let Some(e) = s.queues.iter().find(|e| e.id.load(SeqCst) == queue_id + 1) {
        e.status.store(0, SeqCst);
        e.id.store(0, SeqCst);
    }
}

/// `kfd_set_dbg_ev_from_interrupt` for a queue exception (`mask`) from the queue with
/// `doorbell_id` on `gpu_id`: true if this process is debugged and the debugger subscribed to
/// it (then the interrupt goes no further).
pub fn raise_queue(gpu_id: u32, doorbell_id: u32, mask: u64) -> bool {
    let Some(s) = slot_of(sys::getpid()) else { return false };
    if !debugged(s) {
        return false;
    }
    let q = s.queues.iter().find(|e| {
        e.id.load(SeqCst) != 0 && e.gpu_id.load(SeqCst) == gpu_id && e.doorbell_id.load(SeqCst) == doorbell_id
    });
    if let Some(q) = q {
        q.status.fetch_or(mask, SeqCst);
    }
    subscribed(s, mask)
}

/// `kfd_set_dbg_ev_from_interrupt` for a GPU VM fault on `gpu_id` at `va`: true if this process
/// is debugged and the debugger subscribed to `EC_DEVICE_MEMORY_VIOLATION` (then the runtime's
/// memory event is not signalled). The first fault's data is kept for QUERY_EXCEPTION_INFO.
pub fn raise_memory_violation(gpu_id: u32, va: u64, not_present: bool, read_only: bool) -> bool {
    let Some(s) = slot_of(sys::getpid()) else { return false };
    let Some(g) = gpu_index(gpu_id) else { return false };
    if !debugged(s) {
        return false;
    }
    let m = kfd_ec_mask(EC_DEVICE_MEMORY_VIOLATION);
    s.device_status[g].fetch_or(m, SeqCst);
    if s.fault_va[g].load(SeqCst) == 0 {
        s.fault_bits[g].store(not_present as u32 | (read_only as u32) << 1, SeqCst);
        s.fault_va[g].store(va.max(1), SeqCst);
    }
    subscribed(s, m)
}

// ------------------------------------------------------------------------------------------
// The debugger's side: AMDKFD_IOC_DBG_TRAP
// ------------------------------------------------------------------------------------------

/// The pid in `/proc/<pid>/status`'s `TracerPid:` (0: not traced).
fn tracer_of(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("TracerPid:").map(|v| v.trim().parse().unwrap_or(0))))
        .unwrap_or(0)
}

/// `kfd_dbg_trap_disable` + `kfd_dbg_clean_exception_status`.
fn disable(s: &Slot) {
    s.debugger.store(0, SeqCst);
    s.dbg_fd.store(-1, SeqCst);
    s.enable_mask.store(0, SeqCst);
    s.process_status.store(0, SeqCst);
    s.trap_mask.store(0, SeqCst);
    s.dbg_flags.store(0, SeqCst);
    for g in 0..MAX_GPUS {
        s.device_status[g].store(0, SeqCst);
        s.fault_va[g].store(0, SeqCst);
    }
    for q in &s.queues {
        q.status.store(0, SeqCst);
    }
}

/// `kfd_ioctl_set_debug_trap`, called in the debugger's process (`me`, whose model holds
/// `own_queues` if it debugs itself). The target must exist (ESRCH), be this process or one the
/// calling thread ptraces (EPERM, but for DISABLE), and be debug enabled for every op but ENABLE
/// (EINVAL); the hardware ops need the target's runtime enabled (EPERM). Per op as in
/// `kfd_debug.c`.
pub fn dbg_trap(args: &mut kfd_ioctl_dbg_trap_args, own_queues: &[QueueInfo]) -> Result<libc::c_int, Errno> {
    let me = sys::getpid();
    let pid = args.pid;
    if pid == 0 || !sys::pid_alive(pid) {
        return Err(Errno::ESRCH);
    }
    // ptrace_parent(target) == current: the tracer is a thread (the one that attached, or
    // that forked a PTRACE_TRACEME child), and it must be the caller.
    let tid = nix::unistd::gettid().as_raw() as u32;
    if pid != me && args.op != KFD_IOC_DBG_TRAP_DISABLE && tracer_of(pid) != tid {
        return Err(Errno::EPERM);
    }
    // PC sampling and the debugger share the trap handler (`pc_sampling_ref`).
    if super::pc_sampling::has_sessions(pid) {
        return Err(Errno::EBUSY);
    }
    let s = if args.op == KFD_IOC_DBG_TRAP_ENABLE {
        let s = claim(pid).ok_or(Errno::ENOMEM)?;
        if pid == me {
            // Queues created before this process had a slot.
            for q in own_queues {
                if !s.queues.iter().any(|e| e.id.load(SeqCst) == q.queue_id + 1) {
                    queue_created(q);
                }
            }
        }
        s
    } else {
        let s = slot_of(pid).ok_or(Errno::ESRCH)?;
        if !debugged(s) {
            return Err(Errno::EINVAL);
        }
        s
    };
    let hw_op = matches!(
        args.op,
        KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE
            | KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE
            | KFD_IOC_DBG_TRAP_SUSPEND_QUEUES
            | KFD_IOC_DBG_TRAP_RESUME_QUEUES
            | KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH
            | KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH
            | KFD_IOC_DBG_TRAP_SET_FLAGS
    );
    if hw_op && s.runtime_state.load(SeqCst) != DEBUG_RUNTIME_STATE_ENABLED {
        return Err(Errno::EPERM);
    }
    match args.op {
        KFD_IOC_DBG_TRAP_ENABLE => {
            // kfd_dbg_trap_enable
            if s.debugger.load(SeqCst) != 0 && debugged(s) {
                return Err(Errno::EALREADY);
            }
            let fd = args.u32_at(20) as i32;
            let st = sys::fstat(fd).map_err(|_| Errno::EBADF)?;
            let info = kfd_runtime_info {
                r_debug: s.r_debug.load(SeqCst),
                runtime_state: s.runtime_state.load(SeqCst),
                ttmp_setup: s.ttmp_setup.load(SeqCst),
            };
            let size = (args.u32_at(16) as usize).min(std::mem::size_of::<kfd_runtime_info>());
            sys::copy_to_user(args.u64_at(8), &sys::as_bytes(std::slice::from_ref(&info))[..size])
                .map_err(|_| Errno::EFAULT)?;
            args.set_u32(16, std::mem::size_of::<kfd_runtime_info>() as u32);
            s.dbg_fd.store(fd, SeqCst);
            s.dbg_dev.store(st.st_dev, SeqCst);
            s.dbg_ino.store(st.st_ino, SeqCst);
            s.enable_mask.store(args.u64_at(0), SeqCst);
            s.debugger.store(me, SeqCst);
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_DISABLE => {
            // A target whose runtime is not enabled keeps its state for a later attach.
            disable(s);
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT => {
            // kfd_dbg_send_exception_to_runtime: EC_PROCESS_RUNTIME ups the semaphore.
            if args.u64_at(0) & kfd_ec_mask(EC_PROCESS_RUNTIME) != 0 {
                s.sema.fetch_add(1, SeqCst);
            }
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED => {
            // kfd_dbg_set_enabled_debug_exception_mask
            let set = args.u64_at(0);
            let found = s.process_status.load(SeqCst)
                | s.queues.iter().filter(|q| q.id.load(SeqCst) != 0).fold(0, |a, q| a | q.status.load(SeqCst))
                | s.device_status.iter().fold(0, |a, d| a | d.load(SeqCst));
            s.enable_mask.store(set, SeqCst);
            if set & found != 0 {
                notify(s);
            }
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE => {
            // kgd_aldebaran_validate_trap_override_request + kgd_gfx_v9_set_wave_launch_trap_override:
            // GC 9.4.2 can trap on the FP/integer exceptions, address watch and memory
            // violation, not on wave start or end; EXCP_EN is a 9-bit field.
            let (mode, bits, request) = (args.u32_at(0), args.u32_at(4), args.u32_at(8));
            let supported = 0x1ff;
            args.set_u32(8, supported);
            if mode != KFD_DBG_TRAP_OVERRIDE_OR && mode != KFD_DBG_TRAP_OVERRIDE_REPLACE {
                return Err(Errno::EPERM);
            }
            if request & !supported != 0 {
                return Err(Errno::EACCES);
            }
            let prev = s.trap_mask.load(SeqCst);
            s.trap_mask.store(((bits & request) | (prev & !request)) & supported, SeqCst);
            args.set_u32(4, prev);
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE => match args.u32_at(0) {
            KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL => Ok(0),
            KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT | KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG => Err(Errno::EOPNOTSUPP),
            _ => Err(Errno::EINVAL),
        },
        KFD_IOC_DBG_TRAP_SET_FLAGS => {
            // kfd_dbg_trap_set_flags: GC 9.4.2 has per-VMID debug, so SINGLE_MEM_OP is allowed
            // (the interpreter completes every memory operation in order anyway).
            let prev = s.dbg_flags.swap(args.u32_at(0) & KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP, SeqCst);
            args.set_u32(0, prev);
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT => {
            // kfd_dbg_ev_query_debug_event: the first queue, else device, else the process
            // with an enabled exception pending; reports its status and clears `clear`.
            let (clear, enabled) = (args.u64_at(0), s.enable_mask.load(SeqCst));
            let (mut status, mut gpu_id, mut queue_id) = (0, 0, 0);
            if let Some(q) = s.queues.iter().find(|q| q.id.load(SeqCst) != 0 && q.status.load(SeqCst) & enabled != 0) {
                status = q.status.fetch_and(!clear, SeqCst);
                queue_id = q.id.load(SeqCst) - 1;
                gpu_id = q.gpu_id.load(SeqCst);
            } else if let Some(g) =
                (0..MAX_GPUS.min(gpus::all().len())).find(|&g| s.device_status[g].load(SeqCst) & enabled != 0)
            {
                status = s.device_status[g].fetch_and(!clear, SeqCst);
                gpu_id = gpus::all()[g].gpu_id;
            } else if s.process_status.load(SeqCst) & enabled != 0 {
                status = s.process_status.fetch_and(!clear, SeqCst);
            }
            args.set_u64(0, status);
            args.set_u32(8, gpu_id);
            args.set_u32(12, queue_id);
            if status == 0 {
                Err(Errno::EAGAIN)
            } else {
                Ok(0)
            }
        }
        KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO => query_exception_info(s, args),
        KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT => {
            // pqm_get_queue_snapshot
            let (clear, buf, want, entry) = (args.u64_at(0), args.u64_at(8), args.u32_at(16), args.u32_at(20));
            if entry == 0 {
                args.set_u32(16, 0);
                return Err(Errno::EINVAL);
            }
            let live: Vec<&QueueSlot> = s.queues.iter().filter(|q| q.id.load(SeqCst) != 0).collect();
            args.set_u32(16, live.len() as u32);
            let size = (entry as usize).min(std::mem::size_of::<kfd_queue_snapshot_entry>());
            args.set_u32(20, size as u32);
            for (i, q) in live.iter().take(want as usize).enumerate() {
                let e = kfd_queue_snapshot_entry {
                    exception_status: if clear != 0 {
                        q.status.fetch_and(!clear, SeqCst)
                    } else {
                        q.status.load(SeqCst)
                    },
                    ring_base_address: q.ring_base.load(SeqCst),
                    write_pointer_address: q.wptr.load(SeqCst),
                    read_pointer_address: q.rptr.load(SeqCst),
                    ctx_save_restore_address: q.ctx_save_restore_address.load(SeqCst),
                    queue_id: q.id.load(SeqCst) - 1,
                    gpu_id: q.gpu_id.load(SeqCst),
                    ring_size: q.ring_size.load(SeqCst),
                    queue_type: q.queue_type.load(SeqCst),
                    ctx_save_restore_area_size: q.ctx_save_restore_area_size.load(SeqCst),
                    reserved: 0,
                };
                let at = buf + i as u64 * entry as u64;
                sys::copy_to_user(at, &sys::as_bytes(std::slice::from_ref(&e))[..size]).map_err(|_| Errno::EFAULT)?;
            }
            Ok(0)
        }
        KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT => {
            // kfd_dbg_trap_device_snapshot: one entry per GPU of the target (all of the
            // topology's, as every process here has a pdd for each).
            let (clear, buf, want, entry) = (args.u64_at(0), args.u64_at(8), args.u32_at(16), args.u32_at(20));
            if buf == 0 {
                return Err(Errno::EINVAL);
            }
            let all = gpus::all();
            args.set_u32(16, all.len() as u32);
            let size = (entry as usize).min(std::mem::size_of::<kfd_dbg_device_info_entry>());
            args.set_u32(20, size as u32);
            for (i, g) in all.iter().enumerate().take(want as usize) {
                let status = match s.device_status.get(i) {
                    Some(d) if clear != 0 => d.fetch_and(!clear, SeqCst),
                    Some(d) => d.load(SeqCst),
                    None => 0,
                };
                let e = device_info(g.gpu_id, status);
                let at = buf + i as u64 * entry as u64;
                sys::copy_to_user(at, &sys::as_bytes(std::slice::from_ref(&e))[..size]).map_err(|_| Errno::EFAULT)?;
            }
            Ok(0)
        }
        // Queue suspension and address watch points are not modelled.
        KFD_IOC_DBG_TRAP_SUSPEND_QUEUES
        | KFD_IOC_DBG_TRAP_RESUME_QUEUES
        | KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH
        | KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH => Err(Errno::EOPNOTSUPP),
        _ => Err(Errno::EINVAL),
    }
}

/// `kfd_dbg_trap_query_exception_info`: the info of one exception (`exception_code` on the
/// queue, device or process `source_id`); ENODATA if it is not pending, EINVAL for an unknown
/// source or code.
fn query_exception_info(s: &Slot, args: &mut kfd_ioctl_dbg_trap_args) -> Result<libc::c_int, Errno> {
    let (info, info_size, source, code, clear) =
        (args.u64_at(0), args.u32_at(8), args.u32_at(12), args.u32_at(16), args.u32_at(20) != 0);
    if info == 0 || !(1..=64).contains(&code) {
        return Err(Errno::EINVAL);
    }
    let m = kfd_ec_mask(code);
    let mut actual = 0usize;
    let status: &AtomicU64 = if m & KFD_EC_MASK_QUEUE != 0 {
        let q = s.queues.iter().find(|q| q.id.load(SeqCst) == source + 1).ok_or(Errno::EINVAL)?;
        &q.status
    } else if m & KFD_EC_MASK_DEVICE != 0 {
        let g = gpu_index(source).ok_or(Errno::EINVAL)?;
        if s.device_status[g].load(SeqCst) & m == 0 {
            return Err(Errno::ENODATA);
        }
        if code == EC_DEVICE_MEMORY_VIOLATION {
            let bits = s.fault_bits[g].load(SeqCst);
            let data = kfd_hsa_memory_exception_data {
                failure: kfd_memory_exception_failure {
                    NotPresent: bits & 1,
                    ReadOnly: bits >> 1 & 1,
                    NoExecute: 0,
                    imprecise: 0,
                },
                va: s.fault_va[g].load(SeqCst),
                gpu_id: source,
                ErrorType: 0,
            };
            let b = sys::as_bytes(std::slice::from_ref(&data));
            sys::copy_to_user(info, &b[..(info_size as usize).min(b.len())]).map_err(|_| Errno::EFAULT)?;
            actual = b.len();
            if clear {
                s.fault_va[g].store(0, SeqCst);
            }
        }
        &s.device_status[g]
    } else if m & KFD_EC_MASK_PROCESS != 0 {
        if code == EC_PROCESS_RUNTIME && s.process_status.load(SeqCst) & m != 0 {
            let r = kfd_runtime_info {
                r_debug: s.r_debug.load(SeqCst),
                runtime_state: s.runtime_state.load(SeqCst),
                ttmp_setup: s.ttmp_setup.load(SeqCst),
            };
            let b = sys::as_bytes(std::slice::from_ref(&r));
            sys::copy_to_user(info, &b[..(info_size as usize).min(b.len())]).map_err(|_| Errno::EFAULT)?;
            actual = b.len();
        }
        &s.process_status
    } else {
        return Err(Errno::EINVAL);
    };
    if status.load(SeqCst) & m == 0 {
        return Err(Errno::ENODATA);
    }
    args.set_u32(8, actual as u32);
    if clear {
        status.fetch_and(!m, SeqCst);
    }
    Ok(0)
}

/// `kfd_dbg_device_info_entry` of the GPU with `gpu_id` from the topology.
fn device_info(gpu_id: u32, exception_status: u64) -> kfd_dbg_device_info_entry {
    let a = super::kfd_chardev::apertures(gpu_id);
    let mut e = kfd_dbg_device_info_entry {
        exception_status,
        lds_base: a.lds_base,
        lds_limit: a.lds_limit,
        scratch_base: a.scratch_base,
        scratch_limit: a.scratch_limit,
        gpuvm_base: a.gpuvm_base,
        gpuvm_limit: a.gpuvm_limit,
        gpu_id,
        ..Default::default()
    };
    if let Some(g) = crate::topology::gpu_by_id(gpu_id) {
        e.location_id = g.location_id;
        e.vendor_id = g.vendor_id;
        e.device_id = g.device_id;
        e.revision_id = g.revision_id;
        e.subsystem_vendor_id = g.subsystem_vendor_id;
        e.subsystem_device_id = g.subsystem_device_id;
        e.fw_version = g.fw_version;
        e.gfx_target_version = g.gfx_target_version;
        e.simd_count = g.simd_count;
        e.max_waves_per_simd = g.max_waves_per_simd;
        e.array_count = g.array_count;
        e.simd_arrays_per_engine = g.simd_arrays_per_engine;
        e.num_xcc = g.num_xcc.max(1);
        e.capability = g.capability;
        e.debug_prop = g.debug_prop as u32;
    }
    e
}
