//! Helpers shared by the tests that drive kfd-sim with raw syscalls.
#![allow(dead_code)]

pub mod raw_queue;

use kfd_ioctl::kfd::{kfd_ioctl_acquire_vm_args, AMDKFD_IOC_ACQUIRE_VM};
use libc::{c_int, c_ulong, c_void};
use nix::errno::Errno;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, MutexGuard, OnceLock};

static SERIAL: Mutex<()> = Mutex::new(());

/// `<target>/release/kfdsim`, next to the `deps/` dir holding this test executable.
pub fn kfdsim() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let k = exe.parent().unwrap().parent().unwrap().join("kfdsim");
    assert!(k.is_file(), "{} not found (cargo build --release -p kfd-sim)", k.display());
    k
}

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

/// The way into the kernel for the shared fixtures: `ioctl(2)`, reaching kfd-sim through
/// LD_PRELOAD.
fn sys_ioctl(fd: RawFd, req: c_ulong, arg: *mut c_void) -> Result<(), Errno> {
    // SAFETY: `arg` is a valid uapi struct of the size encoded in `req` (see `kio`).
    let r = unsafe { libc::ioctl(fd, req, arg) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// The way into mmap for the shared fixtures: `mmap(2)`.
fn sys_mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: RawFd,
    off: i64,
) -> Result<*mut c_void, Errno> {
    // SAFETY: the fixtures map fresh ranges, or MAP_FIXED over their own reservations.
    let p = unsafe { libc::mmap(addr, len, prot, flags, fd, off) };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p)
    }
}

#[path = "../../kfd-sim/test-support/kfd_fixtures.rs"]
pub mod fixtures;
pub use fixtures::*;

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
