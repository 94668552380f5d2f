//! DRM syncobjs (linux `drivers/gpu/drm/drm_syncobj.c`), shared across processes.
//!
//! A syncobj is a 4 KiB memfd named `kfdsim-syncobj` holding its state: a futex word bumped on
//! every change, a "has fence" flag (binary syncobjs) and the last signaled timeline point. The
//! model keeps the page mapped, not the fd ([`super::memfd`]); its fd (HANDLE_TO_FD) is a new open
//! file of that memfd, so any process that receives it sees and changes the
//! same object; waiters sleep on the futex of the shared page (a non-private futex works across
//! processes). The model has no DRM command submission, so every fence it knows is already
//! signaled: a binary syncobj is either without fence or signaled; a timeline is signaled up to
//! its point. Waiting for a fence that has not been submitted needs `WAIT_FOR_SUBMIT` (else
//! EINVAL, as `drm_syncobj_array_wait_timeout`); timeouts are absolute `CLOCK_MONOTONIC` ns and
//! expire with ETIME.

use super::memfd::MemfdMap;
use super::sys;
use nix::errno::Errno;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

const MEMFD_NAME: &str = "kfdsim-syncobj";
const SYNC_FILE_NAME: &str = "kfdsim-sync_file";

/// The shared page layout.
#[repr(C)]
struct Shared {
    /// Futex word: incremented on every state change.
    seq: AtomicU32,
    /// Binary syncobj: 1 if a (signaled) fence is attached.
    has_fence: AtomicU32,
    /// Timeline: last signaled point.
    point: AtomicU64,
}

/// One syncobj: its shared page.
pub struct Syncobj {
    page: MemfdMap,
}

impl Syncobj {
    pub fn new(signaled: bool) -> Result<Arc<Syncobj>, Errno> {
        let fd = sys::memfd(MEMFD_NAME, 4096).map_err(|_| Errno::ENOMEM)?;
        let s = Self::from_fd(fd.as_raw_fd())?;
        if signaled {
            s.shared().has_fence.store(1, Ordering::Release);
        }
        Ok(s)
    }

    /// Maps the page of syncobj memfd `fd` (not kept).
    fn from_fd(fd: RawFd) -> Result<Arc<Syncobj>, Errno> {
        Ok(Arc::new(Syncobj { page: MemfdMap::new(fd, 4096)? }))
    }

    fn shared(&self) -> &Shared {
        // SAFETY: the page is mapped for our lifetime and `Shared` is all atomics.
        unsafe { &*(self.page.base() as *const Shared) }
    }

    fn changed(&self) {
        let s = self.shared();
        s.seq.fetch_add(1, Ordering::AcqRel);
        // SAFETY: futex wake on a live shared word.
        unsafe { libc::syscall(libc::SYS_futex, &s.seq as *const AtomicU32, libc::FUTEX_WAKE, i32::MAX, 0, 0, 0) };
    }

    /// Binary signal: attach a signaled fence (`drm_syncobj_signal_ioctl`).
    pub fn signal(&self) {
        self.shared().has_fence.store(1, Ordering::Release);
        self.changed();
    }

    /// `drm_syncobj_reset_ioctl`: drop the fence.
    pub fn reset(&self) {
        self.shared().has_fence.store(0, Ordering::Release);
        self.changed();
    }

    /// `drm_syncobj_timeline_signal_ioctl`: point 0 = binary signal.
    pub fn signal_point(&self, point: u64) {
        if point == 0 {
            return self.signal();
        }
        self.shared().point.fetch_max(point, Ordering::AcqRel);
        self.shared().has_fence.store(1, Ordering::Release);
        self.changed();
    }

    /// Last signaled timeline point (`drm_syncobj_query_ioctl`).
    pub fn point(&self) -> u64 {
        self.shared().point.load(Ordering::Acquire)
    }

    /// True if waiting on `point` (0 = binary) is satisfied.
    pub fn is_signaled(&self, point: u64) -> bool {
        if point == 0 {
            self.shared().has_fence.load(Ordering::Acquire) != 0
        } else {
            self.point() >= point
        }
    }

    /// A new fd of the memfd (`drm_syncobj_handle_to_fd`); at the fd limit EMFILE.
    pub fn export(&self, cloexec: bool) -> Result<RawFd, Errno> {
        self.page.open(cloexec)
    }

    /// Recognises a syncobj fd (`drm_syncobj_fd_to_handle`): EINVAL for anything else.
    pub fn import(fd: RawFd) -> Result<Arc<Syncobj>, Errno> {
        sys::fstat(fd).map_err(|_| Errno::EINVAL)?;
        let link = sys::fd_link(fd).ok_or(Errno::EINVAL)?;
        if !link.starts_with(&format!("/memfd:{MEMFD_NAME}")) {
            return Err(Errno::EINVAL);
        }
        Self::from_fd(fd)
    }

    fn seq(&self) -> u32 {
        self.shared().seq.load(Ordering::Acquire)
    }

    /// Sleeps until the futex word moves away from `seq` or `deadline_ns` (CLOCK_MONOTONIC) passes.
    fn sleep(&self, seq: u32, deadline_ns: i64) {
        let now = sys::clock_ns(libc::CLOCK_MONOTONIC) as i64;
        let left = (deadline_ns - now).clamp(0, 50_000_000);
        let ts = libc::timespec { tv_sec: left / 1_000_000_000, tv_nsec: left % 1_000_000_000 };
        // SAFETY: futex wait on a live shared word with a relative timeout.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                &self.shared().seq as *const AtomicU32,
                libc::FUTEX_WAIT,
                seq,
                &ts as *const libc::timespec,
                0,
                0,
            )
        };
    }
}

/// A fake sync_file for `EXPORT_SYNC_FILE` (always signaled).
pub fn make_sync_file(cloexec: bool) -> Result<RawFd, Errno> {
    let fd = sys::memfd(SYNC_FILE_NAME, 0)?;
    let r = sys::dup(fd.as_raw_fd(), cloexec);
    drop(fd);
    r
}

/// True if `fd` is a sync_file the model made.
pub fn is_sync_file(fd: RawFd) -> bool {
    sys::fd_link(fd).is_some_and(|l| l.starts_with(&format!("/memfd:{SYNC_FILE_NAME}")))
}

/// Syncobj handles of one render file (`file_priv->syncobj_idr`, from 1).
#[derive(Default)]
pub struct SyncobjTable {
    pub handles: BTreeMap<u32, Arc<Syncobj>>,
}

impl SyncobjTable {
    pub fn insert(&mut self, s: Arc<Syncobj>) -> u32 {
        let id = super::lowest_free_id(&self.handles);
        self.handles.insert(id, s);
        id
    }

    pub fn get(&self, h: u32) -> Result<Arc<Syncobj>, Errno> {
        self.handles.get(&h).cloned().ok_or(Errno::EINVAL)
    }
}

/// `drm_syncobj_array_wait_timeout`: waits for all (or the first of) `objs` at `points`.
/// Returns the index of the first signaled object. `timeout_ns` is absolute CLOCK_MONOTONIC.
pub fn wait(
    objs: &[Arc<Syncobj>],
    points: &[u64],
    wait_all: bool,
    wait_for_submit: bool,
    timeout_ns: i64,
) -> Result<u32, Errno> {
    if !wait_for_submit && objs.iter().zip(points).any(|(o, p)| !o.is_signaled(*p)) {
        // Nothing is ever submitted later in the model: an unsignaled point has no fence.
        return Err(Errno::EINVAL);
    }
    loop {
        let seqs: Vec<u32> = objs.iter().map(|o| o.seq()).collect();
        let first = objs.iter().zip(points).position(|(o, p)| o.is_signaled(*p));
        let all = objs.iter().zip(points).all(|(o, p)| o.is_signaled(*p));
        if (wait_all && all) || (!wait_all && first.is_some()) {
            return Ok(first.unwrap_or(0) as u32);
        }
        if sys::clock_ns(libc::CLOCK_MONOTONIC) as i64 >= timeout_ns {
            return Err(Errno::ETIME);
        }
        // Sleep on the futexes of every unsignaled object at once (futex_waitv), so that any of
        // them wakes us, as the kernel's wait callbacks on every fence do; without futex_waitv
        // (Linux < 5.16), on the first one's futex (bounded, so the others are re-checked).
        let pending: Vec<usize> = (0..objs.len()).filter(|&i| !objs[i].is_signaled(points[i])).collect();
        if !sleep_any(objs, &seqs, &pending, timeout_ns) {
            let i = pending.first().copied().unwrap_or(0);
            objs[i].sleep(seqs[i], timeout_ns);
        }
    }
}

/// `struct futex_waitv` (linux `include/uapi/linux/futex.h`).
#[repr(C)]
struct FutexWaitv {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

/// `FUTEX2_SIZE_U32`; shared futexes (no `FUTEX2_PRIVATE`): the page is shared across processes.
const FUTEX2_SIZE_U32: u32 = 0x02;
const SYS_FUTEX_WAITV: libc::c_long = 449;

/// Sleeps until the futex word of any of `objs[i]` (`i` in `which`) moves away from `seqs[i]`,
/// or 50 ms, or `deadline_ns`. False when the kernel has no `futex_waitv`.
fn sleep_any(objs: &[Arc<Syncobj>], seqs: &[u32], which: &[usize], deadline_ns: i64) -> bool {
    if which.is_empty() || which.len() > 128 {
        return false;
    }
    let waiters: Vec<FutexWaitv> = which
        .iter()
        .map(|&i| FutexWaitv {
            val: seqs[i] as u64,
            uaddr: &objs[i].shared().seq as *const AtomicU32 as u64,
            flags: FUTEX2_SIZE_U32,
            reserved: 0,
        })
        .collect();
    let now = sys::clock_ns(libc::CLOCK_MONOTONIC) as i64;
    let until = deadline_ns.min(now + 50_000_000).max(now);
    let ts = libc::timespec { tv_sec: until / 1_000_000_000, tv_nsec: until % 1_000_000_000 };
    // SAFETY: futex_waitv reads `waiters` (live shared words of syncobjs we hold) and the
    // absolute CLOCK_MONOTONIC timeout; it writes nothing.
    let r = unsafe {
        libc::syscall(
            SYS_FUTEX_WAITV,
            waiters.as_ptr(),
            waiters.len() as libc::c_uint,
            0u32,
            &ts as *const libc::timespec,
            libc::CLOCK_MONOTONIC,
        )
    };
    !(r < 0 && Errno::last() == Errno::ENOSYS)
}
