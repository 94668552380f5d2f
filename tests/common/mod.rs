//! Helpers shared by the tests that drive kfd-sim with raw syscalls.
#![allow(dead_code)]

use libc::{c_ulong, c_void};
use nix::errno::Errno;
use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, MutexGuard};

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
