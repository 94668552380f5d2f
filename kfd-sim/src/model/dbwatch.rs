//! Doorbell writes seen as they happen: a doorbell is a plain store to a page the user mapped,
//! which a hardware engine notices at once and the model cannot, unless the page faults. The
//! user's doorbell mappings are registered with a `userfaultfd` (`UFFD_USER_MODE_ONLY`, which
//! needs no privilege; write-protect of shmem pages, `UFFD_FEATURE_WP_HUGETLBFS_SHMEM`, Linux
//! 5.19+). An engine thread about to sleep write-protects the doorbell pages of its GPUs
//! ([`DoorbellWatch::protect`]), re-reads its doorbells, and sleeps; the next store to such a
//! page faults, the watch thread wakes the engines of that GPU and lifts the protection, and the
//! store completes (the writer is held for that one round trip; while engines are busy the pages
//! stay writable and stores cost nothing). The model's own mapping of the pages is never
//! protected. Where `userfaultfd` is refused (seccomp, an older kernel) or a registration fails,
//! [`DoorbellWatch::new`] or [`DoorbellWatch::usable`] says so and the engines poll their
//! doorbells with a backoff instead.

use super::sys::PAGE_SIZE;
use nix::errno::Errno;
use parking_lot::Mutex;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const UFFD_API: u64 = 0xaa;
const UFFD_USER_MODE_ONLY: libc::c_int = 1;
const UFFD_FEATURE_WP_HUGETLBFS_SHMEM: u64 = 1 << 12;
/// `KFDSIM_DOORBELL_WATCH=0` turns the watch off (engines poll with the backoff).
pub const ENV_WATCH: &str = "KFDSIM_DOORBELL_WATCH";
const UFFDIO_API: libc::c_ulong = 0xc018_aa3f;
const UFFDIO_REGISTER: libc::c_ulong = 0xc020_aa00;
const UFFDIO_WRITEPROTECT: libc::c_ulong = 0xc018_aa06;
const UFFDIO_WAKE: libc::c_ulong = 0x8010_aa02;
const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1;
const UFFD_EVENT_PAGEFAULT: u8 = 0x12;

#[repr(C)]
struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct UffdioRange {
    start: u64,
    len: u64,
}

#[repr(C)]
struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}

#[repr(C)]
struct UffdioWriteprotect {
    range: UffdioRange,
    mode: u64,
}

/// `struct uffd_msg` for a page fault (32 bytes).
#[repr(C)]
#[derive(Default)]
struct UffdMsg {
    event: u8,
    _reserved: [u8; 7],
    flags: u64,
    address: u64,
    _ptid: u64,
}

/// A user mapping of a doorbell slice registered with the userfaultfd.
struct Range {
    start: u64,
    len: u64,
    gpu_id: u32,
    /// Write-protected since the last fault in it lifted the protection (changed only under the
    /// `ranges` lock, together with the protection itself).
    protected: bool,
}

/// The userfaultfd of one process and the user's doorbell mappings registered with it.
pub struct DoorbellWatch {
    fd: OwnedFd,
    /// User mappings of doorbell slices. Its lock also orders protecting against a fault's
    /// wake-up and lift: see [`DoorbellWatch::protect`]. Lock order: `ranges`, then the
    /// engines' locks (the wake-up).
    ranges: Mutex<Vec<Range>>,
    /// False once a registration failed: some doorbell stores are not seen.
    usable: AtomicBool,
    started: AtomicBool,
}

fn ioctl<T>(fd: &OwnedFd, req: libc::c_ulong, arg: &mut T) -> Result<(), Errno> {
    // SAFETY: `arg` is the `#[repr(C)]` struct that `req` reads and writes.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req, arg as *mut T) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

impl DoorbellWatch {
    /// A userfaultfd with write-protect of shmem pages, or None where it is refused.
    pub fn new() -> Option<DoorbellWatch> {
        if std::env::var_os(ENV_WATCH).is_some_and(|v| v == "0") {
            return None;
        }
        // SAFETY: plain syscall; the returned fd (if any) is owned below.
        let fd =
            unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | libc::O_NONBLOCK | UFFD_USER_MODE_ONLY) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a new fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        let mut api = UffdioApi { api: UFFD_API, features: UFFD_FEATURE_WP_HUGETLBFS_SHMEM, ioctls: 0 };
        ioctl(&fd, UFFDIO_API, &mut api).ok()?;
        Some(DoorbellWatch {
            fd,
            ranges: Mutex::new(Vec::new()),
            usable: AtomicBool::new(true),
            started: AtomicBool::new(false),
        })
    }

    /// Closes the fd in a child after fork, where `self` belongs to the parent's abandoned
    /// model, which is never dropped (`process::current` forgets it).
    pub fn close_inherited(&self) {
        self.usable.store(false, Ordering::Release);
        // SAFETY: the fd is ours; the OwnedFd that also holds it is never dropped (see above),
        // so it is closed once.
        unsafe { libc::close(self.fd.as_raw_fd()) };
    }

    /// Whether every doorbell mapping of the user is registered.
    pub fn usable(&self) -> bool {
        self.usable.load(Ordering::Acquire)
    }

    /// Registers the user's mapping `[start, start+len)` of `gpu_id`'s doorbell slice and starts
    /// the watch thread (once), which calls `wake(Some(gpu_id))` on a store to a protected page
    /// (`wake(None)` for a page it no longer knows).
    pub fn register(self: &Arc<Self>, start: u64, len: u64, gpu_id: u32, wake: impl Fn(Option<u32>) + Send + 'static) {
        let mut reg = UffdioRegister { range: UffdioRange { start, len }, mode: UFFDIO_REGISTER_MODE_WP, ioctls: 0 };
        if ioctl(&self.fd, UFFDIO_REGISTER, &mut reg).is_err() {
            self.usable.store(false, Ordering::Release);
            return;
        }
        {
            let mut r = self.ranges.lock();
            // An earlier mapping at these addresses is gone (the kernel dropped its registration).
            r.retain(|x| x.start + x.len <= start || start + len <= x.start);
            r.push(Range { start, len, gpu_id, protected: false });
        }
        if !self.started.swap(true, Ordering::AcqRel) {
            let me = self.clone();
            let spawned = std::thread::Builder::new().name("kfdsim-doorbell".into()).spawn(move || me.run(wake));
            if spawned.is_err() {
                self.usable.store(false, Ordering::Release);
            }
        }
    }

    /// Write-protects the user's doorbell pages of `gpu_id`; false when the user has no
    /// (registered) mapping of them, so that stores to them would not be seen. Ranges whose
    /// mapping is gone are forgotten. A range still protected since the last call costs no
    /// system call (`UFFDIO_WRITEPROTECT` flushes the TLBs of every CPU running the process).
    ///
    /// Why a caller that gets true, then finds no work in the doorbells, may sleep until woken:
    /// a store that completed before the protection is visible to that read (the protecting
    /// ioctl is a full barrier), and one after it faults. For each fault the watch thread clears
    /// the range's flag, wakes the engines and lifts the protection in one critical section of
    /// the `ranges` lock ([`DoorbellWatch::run`]), so a protection the caller relied on is
    /// either still in place (a store faults, and the wake-up comes after this call) or was
    /// lifted before this call took the lock (the flag is clear and the range is protected
    /// again here); it is never lifted without a wake-up after the caller's protect. A store
    /// held in its fault lands after the lift: the woken engine sees it, or protects again
    /// first (after the lift, as it waits for the lock) and the store faults again.
    pub fn protect(&self, gpu_id: u32) -> bool {
        let mut r = self.ranges.lock();
        let mut all = true;
        r.retain_mut(|x| {
            if x.gpu_id != gpu_id || x.protected {
                return true;
            }
            let mut wp = UffdioWriteprotect {
                range: UffdioRange { start: x.start, len: x.len },
                mode: UFFDIO_WRITEPROTECT_MODE_WP,
            };
            match ioctl(&self.fd, UFFDIO_WRITEPROTECT, &mut wp) {
                Ok(()) => {
                    x.protected = true;
                    true
                }
                // The address space is changing (fork, mremap): keep it, do not rely on it now.
                Err(Errno::EAGAIN) => {
                    all = false;
                    true
                }
                Err(_) => false,
            }
        });
        all && self.usable() && r.iter().any(|x| x.gpu_id == gpu_id)
    }

    /// The watch thread: for each write fault, wakes the engines of the page's GPU, then lifts
    /// the protection of the page (which lets the store complete).
    fn run(self: Arc<Self>, wake: impl Fn(Option<u32>)) {
        loop {
            let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, -1) };
            if r < 0 && Errno::last() != Errno::EINTR {
                self.usable.store(false, Ordering::Release);
                return;
            }
            loop {
                let mut m = UffdMsg::default();
                // SAFETY: reads at most one 32-byte uffd_msg into `m`.
                let n = unsafe {
                    libc::read(self.fd.as_raw_fd(), &mut m as *mut UffdMsg as *mut libc::c_void, size_of::<UffdMsg>())
                };
                if n != size_of::<UffdMsg>() as isize {
                    break;
                }
                if m.event != UFFD_EVENT_PAGEFAULT {
                    continue;
                }
                let page = m.address & !(PAGE_SIZE - 1);
                // Flag, wake and lift in one critical section (see `protect`): an engine woken
                // re-protects only after the lift. Waking first lets the engine's wake-up run
                // while the writer's store is let through.
                let mut r = self.ranges.lock();
                let hit = r.iter_mut().find(|x| (x.start..x.start + x.len).contains(&page));
                wake(hit.map(|x| {
                    x.protected = false;
                    x.gpu_id
                }));
                let mut wp = UffdioWriteprotect { range: UffdioRange { start: page, len: PAGE_SIZE }, mode: 0 };
                if ioctl(&self.fd, UFFDIO_WRITEPROTECT, &mut wp).is_err() {
                    // The page went away meanwhile: let the writer retry (and fault as it must).
                    let mut range = UffdioRange { start: page, len: PAGE_SIZE };
                    let _ = ioctl(&self.fd, UFFDIO_WAKE, &mut range);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A store to a protected page wakes the engines before it completes; a range that a fault
    /// unprotected is protected again by the next `protect` (so the next store faults too), and
    /// one still protected is left as it is.
    #[test]
    fn each_store_after_protect_wakes_once() {
        let Some(w) = DoorbellWatch::new() else {
            eprintln!("userfaultfd refused here: nothing to check");
            return;
        };
        let w = Arc::new(w);
        let len = PAGE_SIZE as usize;
        // SAFETY: a fresh shared anonymous (shmem) page, unmapped at the end.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let wakes = Arc::new(AtomicUsize::new(0));
        let seen = wakes.clone();
        w.register(p as u64, len as u64, 7, move |g| {
            assert_eq!(g, Some(7));
            seen.fetch_add(1, Ordering::SeqCst);
        });
        if !w.usable() {
            eprintln!("write-protect of shmem refused here: nothing to check");
            // SAFETY: the mapping made above.
            unsafe { libc::munmap(p, len) };
            return;
        }
        let db = p as *mut u64;
        for i in 1..=3u64 {
            assert!(w.protect(7));
            // Still protected: no second fault, nothing changes.
            assert!(w.protect(7));
            // SAFETY: within the mapping; the store blocks until the watch lifts the protection.
            unsafe { std::ptr::write_volatile(db, i) };
            assert_eq!(wakes.load(Ordering::SeqCst), i as usize);
            // Lifted: this store does not fault.
            // SAFETY: as above.
            unsafe { std::ptr::write_volatile(db, i) };
            assert_eq!(wakes.load(Ordering::SeqCst), i as usize);
        }
        assert!(!w.protect(8), "no mapping of GPU 8");
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(p, len) };
    }
}
