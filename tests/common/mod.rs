//! Helpers shared by the tests that drive kfd-sim with raw syscalls.
#![allow(dead_code)]

pub mod raw_queue;

use kfd_ioctl::kfd::{kfd_ioctl_acquire_vm_args, AMDKFD_IOC_ACQUIRE_VM};
use libc::{c_ulong, c_void};
use nix::errno::Errno;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, MutexGuard, OnceLock};

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises the tests of one executable (one KFD process each), and fails loudly when the
/// executable is not running under the launcher.
pub fn serial() -> MutexGuard<'static, ()> {
    assert!(
        std::env::var_os("KFDSIM_ROOT").is_some(),
        "these tests run under kfd-sim: set CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=\"<target>/release/kfdsim run --\""
    );
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `open(path, O_RDWR | O_CLOEXEC)`, asserting success.
pub fn open(path: &str) -> OwnedFd {
    let c = CString::new(path).unwrap();
    // SAFETY: valid C string.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    assert!(fd >= 0, "open {path}: {}", Errno::last());
    // SAFETY: fresh fd.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// `ioctl(fd, req, a)` with the kernel's errno on failure.
pub fn kio<T>(fd: RawFd, req: c_ulong, a: &mut T) -> Result<(), Errno> {
    // SAFETY: `a` is a valid uapi struct of the size encoded in `req`.
    let r = unsafe { libc::ioctl(fd, req, a as *mut T as *mut c_void) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Reads the GPUs from the simulated sysfs: (gpu_id, render minor), in node order.
pub fn topology_gpus() -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for node in 0..64 {
        let base = format!("/sys/devices/virtual/kfd/kfd/topology/nodes/{node}");
        let Ok(id) = std::fs::read_to_string(format!("{base}/gpu_id")) else { break };
        let id: u32 = id.trim().parse().unwrap();
        if id == 0 {
            continue;
        }
        let props = std::fs::read_to_string(format!("{base}/properties")).unwrap();
        let minor =
            props.lines().find_map(|l| l.strip_prefix("drm_render_minor ")).map(|m| m.trim().parse().unwrap()).unwrap();
        v.push((id, minor));
    }
    v
}

/// This process's KFD: `/dev/kfd` and, per GPU in node order, its render node bound by
/// ACQUIRE_VM (as libhsakmt's `fmm_init_process_apertures`).
pub struct Env {
    pub kfd: OwnedFd,
    pub render: Vec<OwnedFd>,
    pub gpus: Vec<u32>,
}

/// The one [`Env`] of this test executable (one KFD process, as in a real process: a second
/// ACQUIRE_VM with another render fd would be EBUSY), made on first use.
pub fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let kfd = open("/dev/kfd");
        let mut render = Vec::new();
        let mut gpus = Vec::new();
        for (id, minor) in topology_gpus() {
            let r = open(&format!("/dev/dri/renderD{minor}"));
            let mut a = kfd_ioctl_acquire_vm_args { drm_fd: r.as_raw_fd() as u32, gpu_id: id };
            kio(kfd.as_raw_fd(), AMDKFD_IOC_ACQUIRE_VM, &mut a).unwrap();
            render.push(r);
            gpus.push(id);
        }
        assert!(!gpus.is_empty());
        Env { kfd, render, gpus }
    })
}

/// An anonymous `PROT_NONE` reservation of `size` bytes (a VA range for GPU VA == CPU VA).
pub fn reserve(size: u64) -> u64 {
    // SAFETY: anonymous PROT_NONE reservation at a kernel-chosen address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p as u64
}

/// Forks; the child runs `f` and exits with its return value. Returns the child's exit status.
pub fn in_child(f: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `f` then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(101);
        // SAFETY: terminate the child without running the parent's atexit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "child died: status {status:#x}");
    libc::WEXITSTATUS(status)
}
