//! KFD fixtures shared by kfd-sim's in-process model tests (`kfd-sim/src/model/tests.rs`) and the
//! integration tests that reach the model through real syscalls (`tests/common/mod.rs`): BOs,
//! GPU mappings, the event page and events, SDMA queues. Included with `#[path]` by both.
//!
//! The including module provides the way into the kernel (the model's entry points, or libc):
//! - `fn sys_ioctl(fd: RawFd, req: c_ulong, arg: *mut c_void) -> Result<(), Errno>`;
//! - `fn sys_mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: RawFd, off: i64)
//!   -> Result<*mut c_void, Errno>` (`fd` -1: an anonymous mapping);
//! - `fn env() -> &'static Env`: the process's one KFD, opened and with its VMs acquired.

use super::{env, sys_ioctl, sys_mmap};
use kfd_ioctl::kfd::*;
use libc::{c_ulong, c_void};
use nix::errno::Errno;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// This process's KFD: `/dev/kfd` and, per GPU in node order, its render node bound by
/// ACQUIRE_VM (as libhsakmt's `fmm_init_process_apertures`).
pub struct Env {
    pub kfd: OwnedFd,
    pub render: Vec<OwnedFd>,
    pub gpus: Vec<u32>,
}

/// `ioctl(fd, req, a)` with the kernel's errno on failure.
pub fn kio<T>(fd: RawFd, req: c_ulong, a: &mut T) -> Result<(), Errno> {
    sys_ioctl(fd, req, a as *mut T as *mut c_void)
}

/// An anonymous `PROT_NONE` reservation of `size` bytes (a VA range for GPU VA == CPU VA, like
/// the runtime's SVM aperture).
pub fn reserve(size: u64) -> u64 {
    sys_mmap(
        std::ptr::null_mut(),
        size as usize,
        libc::PROT_NONE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
        -1,
        0,
    )
    .expect("PROT_NONE reservation") as u64
}

pub struct Buf {
    pub handle: u64,
    pub va: u64,
    pub size: u64,
}

pub const GTT: u32 = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
pub const VRAM: u32 = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;

/// mmap(render_fd, offset) read-write, `MAP_FIXED` over our own reservation at `va`.
pub fn cpu_map(render: RawFd, va: u64, size: u64, offset: u64) {
    let p = sys_mmap(
        va as *mut c_void,
        size as usize,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED | libc::MAP_FIXED,
        render,
        offset as i64,
    );
    assert_eq!(p.map(|p| p as u64), Ok(va), "render-node mmap");
}

/// ALLOC(va) on GPU `gpu_idx` → mmap(render_fd, mmap_offset, MAP_FIXED) when the CPU may map
/// it (GTT, or host-visible VRAM).
pub fn alloc_at(gpu_idx: usize, va: u64, size: u64, flags: u32) -> Buf {
    let e = env();
    let mut a =
        kfd_ioctl_alloc_memory_of_gpu_args { va_addr: va, size, gpu_id: e.gpus[gpu_idx], flags, ..Default::default() };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    if flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM == 0 || flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0 {
        cpu_map(e.render[gpu_idx].as_raw_fd(), va, size, a.mmap_offset);
    }
    Buf { handle: a.handle, va, size }
}

/// reserve VA → [`alloc_at`].
pub fn alloc(gpu_idx: usize, size: u64, flags: u32) -> Buf {
    alloc_at(gpu_idx, reserve(size), size, flags)
}

/// MAP_MEMORY_TO_GPU of `b` on `gpus` through the KFD fd `kfd`.
pub fn map_on(kfd: RawFd, b: &Buf, gpus: &[u32]) -> Result<(), Errno> {
    let mut a = kfd_ioctl_map_memory_to_gpu_args {
        handle: b.handle,
        device_ids_array_ptr: gpus.as_ptr() as u64,
        n_devices: gpus.len() as u32,
        n_success: 0,
    };
    kio(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a)
}

pub fn map(b: &Buf, gpus: &[u32]) -> Result<(), Errno> {
    map_on(env().kfd.as_raw_fd(), b, gpus)
}

pub fn unmap(b: &Buf, gpus: &[u32]) -> Result<(), Errno> {
    let mut a = kfd_ioctl_unmap_memory_from_gpu_args {
        handle: b.handle,
        device_ids_array_ptr: gpus.as_ptr() as u64,
        n_devices: gpus.len() as u32,
        n_success: 0,
    };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut a)
}

pub fn free(b: &Buf) -> Result<(), Errno> {
    let mut a = kfd_ioctl_free_memory_of_gpu_args { handle: b.handle };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut a)
}

/// The dGPU event page: a 32 KiB GTT BO handed to the first CREATE_EVENT, mapped on every GPU.
/// Returns its VA: the event slots (u64 each).
pub fn event_page() -> u64 {
    static PAGE: OnceLock<u64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        let b = alloc(0, 32768, GTT);
        map(&b, &env().gpus).unwrap();
        let mut a = kfd_ioctl_create_event_args {
            event_page_offset: b.handle,
            event_type: KFD_IOC_EVENT_SIGNAL,
            auto_reset: 1,
            ..Default::default()
        };
        kio(env().kfd.as_raw_fd(), AMDKFD_IOC_CREATE_EVENT, &mut a).unwrap();
        b.va
    })
}

/// CREATE_EVENT (after the event page exists).
pub fn create_event(kind: u32, auto_reset: bool) -> kfd_ioctl_create_event_args {
    let _ = event_page();
    let mut a = kfd_ioctl_create_event_args { event_type: kind, auto_reset: auto_reset as u32, ..Default::default() };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_CREATE_EVENT, &mut a).unwrap();
    a
}

/// WAIT_EVENTS on any of `ids`: (result, `wait_result`, the events' data).
pub fn wait(ids: &[u32], timeout_ms: u32) -> (Result<(), Errno>, u32, Vec<kfd_event_data>) {
    let mut evs: Vec<kfd_event_data> =
        ids.iter().map(|i| kfd_event_data { event_id: *i, ..Default::default() }).collect();
    let mut w = kfd_ioctl_wait_events_args {
        events_ptr: evs.as_mut_ptr() as u64,
        num_events: ids.len() as u32,
        wait_for_all: 0,
        timeout: timeout_ms,
        wait_result: 99,
    };
    let r = kio(env().kfd.as_raw_fd(), AMDKFD_IOC_WAIT_EVENTS, &mut w);
    (r, w.wait_result, evs)
}

/// WAIT_EVENTS on one event with `signal_event_data.last_event_age = age` (KFD 1.14):
/// (result, `wait_result`, the age it reads back).
pub fn wait_aged(id: u32, age: u64, timeout_ms: u32) -> (Result<(), Errno>, u32, u64) {
    let mut ev = kfd_event_data { event_id: id, ..Default::default() };
    ev.set_last_event_age(age);
    let mut w = kfd_ioctl_wait_events_args {
        events_ptr: &mut ev as *mut kfd_event_data as u64,
        num_events: 1,
        wait_for_all: 0,
        timeout: timeout_ms,
        wait_result: 99,
    };
    let r = kio(env().kfd.as_raw_fd(), AMDKFD_IOC_WAIT_EVENTS, &mut w);
    (r, w.wait_result, ev.last_event_age())
}

/// An SDMA queue with its ring, rptr/wptr page and doorbell.
pub struct Sdma {
    pub ring: Buf,
    pub ptrs: Buf,
    pub doorbell: *mut u64,
    pub queue_id: u32,
    pub wptr: u64,
}

/// Maps the doorbell slice holding the doorbell at `doorbell_offset` (what CREATE_QUEUE
/// returned); returns the doorbell.
pub fn map_doorbell(doorbell_offset: u64) -> *mut u64 {
    assert_eq!(doorbell_offset >> 62, 3);
    let base = sys_mmap(
        std::ptr::null_mut(),
        8192,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED,
        env().kfd.as_raw_fd(),
        (doorbell_offset & !0x1fff) as i64,
    )
    .expect("doorbell mmap");
    (base as u64 + (doorbell_offset & 0x1fff)) as *mut u64
}

/// CREATE_QUEUE (SDMA, 64 KiB ring) on GPU `gpu_idx`, and its doorbell mapped.
pub fn create_sdma(gpu_idx: usize) -> Sdma {
    let e = env();
    let ring = alloc(gpu_idx, 65536, GTT);
    let ptrs = alloc(gpu_idx, 4096, GTT);
    map(&ring, &e.gpus[gpu_idx..=gpu_idx]).unwrap();
    map(&ptrs, &e.gpus[gpu_idx..=gpu_idx]).unwrap();
    let mut q = kfd_ioctl_create_queue_args {
        ring_base_address: ring.va,
        ring_size: 65536,
        gpu_id: e.gpus[gpu_idx],
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: 100,
        queue_priority: 15,
        read_pointer_address: ptrs.va,
        write_pointer_address: ptrs.va + 8,
        ..Default::default()
    };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    Sdma { ring, ptrs, doorbell: map_doorbell(q.doorbell_offset), queue_id: q.queue_id, wptr: 0 }
}

impl Sdma {
    /// Writes `dw` to the ring, then the wptr and the doorbell.
    pub fn submit(&mut self, dw: &[u32]) {
        for (i, d) in dw.iter().enumerate() {
            let off = (self.wptr + i as u64 * 4) & (self.ring.size - 1);
            // SAFETY: the ring is CPU-mapped read-write.
            unsafe { *((self.ring.va + off) as *mut u32) = *d };
        }
        self.wptr += dw.len() as u64 * 4;
        // SAFETY: the wptr slot and the doorbell are mapped.
        unsafe {
            *((self.ptrs.va + 8) as *mut u64) = self.wptr;
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            std::ptr::write_volatile(self.doorbell, self.wptr);
        }
    }

    /// DESTROY_QUEUE; gives back the ring and the pointers page (still allocated and mapped).
    pub fn destroy(self) -> (Buf, Buf) {
        let mut d = kfd_ioctl_destroy_queue_args { queue_id: self.queue_id, pad: 0 };
        kio(env().kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
        (self.ring, self.ptrs)
    }
}

/// A forked child that asked to be traced (PTRACE_TRACEME) and stopped itself: `f` runs with its
/// pid while it is stopped, then the child is continued and reaped (it exits at once). The child
/// shares this process's mappings as of the fork; it only makes system calls.
pub fn with_stopped_tracee<R>(f: impl FnOnce(libc::pid_t) -> R) -> R {
    // SAFETY: the child only makes system calls and exits.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // SAFETY: as above.
        unsafe {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                libc::_exit(3);
            }
            libc::raise(libc::SIGSTOP);
            libc::_exit(0);
        }
    }
    let mut st = 0;
    // SAFETY: our child.
    assert_eq!(unsafe { libc::waitpid(child, &mut st, 0) }, child);
    assert!(libc::WIFSTOPPED(st), "child not stopped (status {st:#x}; 0x300: PTRACE_TRACEME refused)");
    let r = f(child);
    // SAFETY: our tracee; it exits when continued.
    unsafe {
        libc::ptrace(libc::PTRACE_CONT, child, 0, 0);
        assert_eq!(libc::waitpid(child, &mut st, 0), child);
    }
    r
}

/// Whether `fd` has input within `ms` milliseconds.
pub fn readable(fd: RawFd, ms: i32) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) == 1 }
}

/// Drains `fd` (non-blocking).
pub fn drain(fd: RawFd) {
    let mut b = [0u8; 64];
    // SAFETY: our descriptor, a 64-byte buffer.
    while unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) } > 0 {}
}

/// AMDKFD_IOC_DBG_TRAP `op` on process `pid`, its arguments set by `set`: the result and the
/// arguments as the kernel left them.
pub fn dbg_trap(
    pid: u32,
    op: u32,
    set: impl FnOnce(&mut kfd_ioctl_dbg_trap_args),
) -> (Result<(), Errno>, kfd_ioctl_dbg_trap_args) {
    let mut a = kfd_ioctl_dbg_trap_args { pid, op, ..Default::default() };
    set(&mut a);
    (kio(env().kfd.as_raw_fd(), AMDKFD_IOC_DBG_TRAP, &mut a), a)
}

/// AMDKFD_IOC_PC_SAMPLE `op` through the KFD fd `fd`, with one `kfd_pc_sample_info` (or none):
/// the result and the arguments as the kernel left them.
pub fn pc_sample(
    fd: RawFd,
    op: u32,
    gpu_id: u32,
    trace_id: u32,
    info: Option<&mut kfd_pc_sample_info>,
) -> (Result<(), Errno>, kfd_ioctl_pc_sample_args) {
    let mut a = kfd_ioctl_pc_sample_args { op, gpu_id, trace_id, ..Default::default() };
    if let Some(i) = info {
        a.sample_info_ptr = i as *mut kfd_pc_sample_info as u64;
        a.num_sample_info = 1;
    }
    (kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut a), a)
}

/// Whether this process may use PC sampling (`KFD_IOC_FLAG_PERFMON`: CAP_PERFMON or
/// CAP_SYS_ADMIN in its effective set). Without, every PC_SAMPLE op is EACCES, which the PC
/// sampling tests check instead.
pub fn perfmon_capable() -> bool {
    let eff = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        s.lines().find_map(|l| l.strip_prefix("CapEff:")).and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    });
    eff.is_some_and(|e| e >> 38 & 1 != 0 || e >> 21 & 1 != 0)
}
