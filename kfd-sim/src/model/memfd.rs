//! A memfd the model keeps mapped but not open: no fd per object.
//!
//! The kernel holds a BO or a syncobj with no file descriptor in the process, so a process with
//! 10,000 BOs stays far below `RLIMIT_NOFILE`. The model's objects are memfds; [`MemfdMap`] maps
//! one `MAP_SHARED` once (the model's own view) and closes the fd. The mapping holds the file, so
//! its pages, its name (`/memfd:kfdsim-bo ...`) and its inode (`st_dev`, `st_ino`: the identity
//! that imports match on) live as long as the object.
//!
//! - A user mapping of the object (render-node or `/dev/kfd` mmap) is made from the model's
//!   mapping, not from an fd: `mremap(base + off, 0, len, MREMAP_MAYMOVE|MREMAP_FIXED, at)`
//!   (`old_size` 0 on a shared mapping creates a second mapping of the same pages), then
//!   `mprotect` to the requested protection.
//! - A new fd (a dma-buf export, a syncobj's HANDLE_TO_FD) is a new open file of the same inode:
//!   `open("/proc/self/map_files/<start>-<end>", O_RDWR)`. The kernel allows that open only with
//!   `CAP_SYS_ADMIN` or `CAP_CHECKPOINT_RESTORE` in the initial user namespace
//!   (`proc_map_files_get_link`). The first `MemfdMap` of a process probes it; where it is not
//!   permitted (or `/proc` is missing) every `MemfdMap` keeps a dup of its fd instead, one fd per
//!   object, as the model did before.

use super::bo::FileKey;
use super::sys;
use libc::{c_int, c_void};
use nix::errno::Errno;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU8, Ordering};

/// `MAP_TYPE` (`MAP_SHARED`, `MAP_PRIVATE`, `MAP_SHARED_VALIDATE`).
const MAP_TYPE: c_int = 0x0f;
/// `MAP_HUGE_MASK << MAP_HUGE_SHIFT`: the huge page size bits of `MAP_HUGETLB`.
const MAP_HUGE_SIZE_BITS: c_int = 0x3f << 26;

/// Whether `/proc/self/map_files` may be opened: 0 not yet probed, 1 yes, 2 no.
static REOPEN: AtomicU8 = AtomicU8::new(0);

/// A memfd (or any shmem file) mapped `MAP_SHARED` and read-write for the model, `len` bytes
/// from file offset 0. Unmapped on drop.
pub struct MemfdMap {
    base: *mut u8,
    len: u64,
    key: FileKey,
    /// A dup of the file, only where reopening from the mapping is not permitted.
    fd: Option<OwnedFd>,
}

// SAFETY: `base` is a MAP_SHARED mapping owned by the MemfdMap for its whole life; users access
// it through raw copies and atomics that tolerate concurrent writers.
unsafe impl Send for MemfdMap {}
// SAFETY: see above.
unsafe impl Sync for MemfdMap {}

impl MemfdMap {
    /// Maps `len` bytes of `fd` (the caller's; not kept, not closed). Bad fd → EBADF; the mapping
    /// fails, or the fallback's dup at the fd limit → ENOMEM (an allocation error, as the kernel's
    /// BO allocation would give). Keeps a dup of `fd` only where [`MemfdMap::open`] cannot reopen
    /// it.
    pub fn new(fd: RawFd, len: u64) -> Result<MemfdMap, Errno> {
        let st = sys::fstat(fd).map_err(|_| Errno::EBADF)?;
        Self::with_key(fd, len, (st.st_dev, st.st_ino))
    }

    /// [`MemfdMap::new`] of a file whose identity `key` the caller has from its own fstat.
    pub fn with_key(fd: RawFd, len: u64, key: FileKey) -> Result<MemfdMap, Errno> {
        let base = sys::map_shared(fd, len).map_err(|_| Errno::ENOMEM)?;
        let mut m = MemfdMap { base, len, key, fd: None };
        if !m.reopen_permitted() {
            // SAFETY: `dup` returns a fresh fd owned by nobody else.
            m.fd = Some(unsafe { OwnedFd::from_raw_fd(sys::dup(fd, true).map_err(|_| Errno::ENOMEM)?) });
        }
        Ok(m)
    }

    /// Wraps a mapping the caller made (`len` bytes at `base`, read-write, `MAP_SHARED`; unmapped
    /// on drop) for the object of identity `key`; [`MemfdMap::open`] dups `fd`. For objects whose
    /// pages come from several files (a udmabuf of a list of memfd ranges, `udmabuf.rs`).
    pub fn from_mapping(base: *mut u8, len: u64, key: FileKey, fd: OwnedFd) -> MemfdMap {
        MemfdMap { base, len, key, fd: Some(fd) }
    }

    /// The model's view: `len()` bytes, read-write.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// `(st_dev, st_ino)` of the file.
    pub fn key(&self) -> FileKey {
        self.key
    }

    /// True where this object keeps an fd (reopening is not permitted in this process).
    pub fn holds_fd(&self) -> bool {
        self.fd.is_some()
    }

    /// A new fd of the file, `O_RDWR` (+`O_CLOEXEC` if `cloexec`), owned by the caller (as the fd
    /// `dma_buf_fd` installs). Errors: EMFILE/ENFILE at the fd limit.
    pub fn open(&self, cloexec: bool) -> Result<RawFd, Errno> {
        match &self.fd {
            Some(fd) => sys::dup(fd.as_raw_fd(), cloexec),
            None => self.open_mapping(cloexec).map(IntoRawFd::into_raw_fd),
        }
    }

    /// Where process `pid` (this process, seen from another) keeps the file: its fd where it
    /// holds one, else the model's mapping in `/proc/<pid>/map_files`. Another process of the
    /// same user opens it as a new file of the same inode (`ipc.rs`).
    pub fn proc_path(&self, pid: u32) -> String {
        match &self.fd {
            Some(fd) => format!("/proc/{pid}/fd/{}", fd.as_raw_fd()),
            None => format!("/proc/{pid}/map_files/{}", self.map_files_name()),
        }
    }

    /// The model's mapping's name in `/proc/<pid>/map_files`: `<start>-<end>` in hex.
    fn map_files_name(&self) -> String {
        let start = self.base as u64;
        format!("{:x}-{:x}", start, start + sys::page_align(self.len))
    }

    /// `open("/proc/self/map_files/<start>-<end>")` of the model's mapping.
    fn open_mapping(&self, cloexec: bool) -> Result<OwnedFd, Errno> {
        let path = format!("/proc/self/map_files/{}", self.map_files_name());
        let flags = libc::O_RDWR | if cloexec { libc::O_CLOEXEC } else { 0 };
        sys::open(&path, flags)
    }

    /// Probes (once per process) whether [`Self::open_mapping`] works. Errors that say nothing
    /// about permission (EMFILE, ENFILE, ENOMEM) are not remembered.
    fn reopen_permitted(&self) -> bool {
        match REOPEN.load(Ordering::Relaxed) {
            1 => return true,
            2 => return false,
            _ => {}
        }
        match self.open_mapping(true) {
            Ok(_) => {
                REOPEN.store(1, Ordering::Relaxed);
                true
            }
            Err(Errno::EMFILE | Errno::ENFILE | Errno::ENOMEM) => false,
            Err(_) => {
                REOPEN.store(2, Ordering::Relaxed);
                false
            }
        }
    }

    /// Maps bytes `[off, off+len)` of the file for the user as `mmap(addr, len, prot, flags, fd,
    /// off)` would, without an fd: `MAP_SHARED` always (the kernel maps device pages; a private
    /// copy of them does not exist), `MAP_FIXED`, `MAP_FIXED_NOREPLACE`, `MAP_32BIT` and an
    /// address hint honoured (an anonymous `PROT_NONE` placeholder is mapped with them first and
    /// then replaced), `MAP_LOCKED` applied with `mlock`, `MAP_POPULATE` ignored.
    /// `dontfork`: `VM_DONTCOPY` (doorbells, events, MMIO), the mapping is not inherited.
    /// Errors: `MAP_HUGETLB` → EINVAL (`ksys_mmap_pgoff` on a file that is not hugetlbfs);
    /// the range past the object → EINVAL; otherwise mmap's, mremap's or mprotect's errno.
    ///
    /// # Safety
    /// As `mmap(2)`: with `MAP_FIXED`, `[addr, addr+len)` must be a range the caller owns and may
    /// replace (nothing in it is borrowed); without it, `addr` is only a hint.
    pub unsafe fn map_for_user(
        &self,
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        off: u64,
        dontfork: bool,
    ) -> Result<*mut c_void, Errno> {
        if flags & libc::MAP_HUGETLB != 0 || off.checked_add(len as u64).is_none_or(|e| e > self.len) {
            return Err(Errno::EINVAL);
        }
        let placeholder = (flags & !(MAP_TYPE | MAP_HUGE_SIZE_BITS | libc::MAP_ANONYMOUS))
            | libc::MAP_PRIVATE
            | libc::MAP_ANONYMOUS
            | libc::MAP_NORESERVE;
        // SAFETY: our caller upholds the MAP_FIXED contract for `addr`.
        let at = unsafe { sys::mmap(addr, len, libc::PROT_NONE, placeholder, -1, 0) }?;
        let done = (|| {
            // SAFETY: `[base+off, base+off+len)` lies in the model's shared mapping (checked
            // above); the target is the placeholder we own, which the new mapping replaces.
            unsafe { sys::mremap_dup(self.base.add(off as usize) as *mut c_void, len, at) }?;
            if prot != libc::PROT_READ | libc::PROT_WRITE {
                // SAFETY: changing the protection of the mapping just made.
                unsafe { sys::mprotect(at, len, prot) }?;
            }
            Ok(())
        })();
        if let Err(e) = done {
            // SAFETY: `[at, at+len)` is the placeholder (or the new mapping) made above.
            unsafe { sys::munmap(at, len) };
            return Err(e);
        }
        // SAFETY: advising / locking our own fresh mapping.
        unsafe {
            if flags & libc::MAP_LOCKED != 0 {
                libc::mlock(at, len);
            }
            if dontfork {
                libc::madvise(at, len, libc::MADV_DONTFORK);
            }
        }
        Ok(at)
    }
}

impl Drop for MemfdMap {
    fn drop(&mut self) {
        // SAFETY: the model's own view, made in `new`; dropping the owner ends every borrow.
        unsafe { sys::munmap(self.base as *mut c_void, self.len as usize) };
        // A kept fd (OwnedFd) closes itself.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the capability (CI and the dev machine run as root): no fd kept; the reopened fd is the same inode with the BO's name; a user mapping made by
    /// mremap shares the pages both ways and gets the asked protection.
    #[test]
    fn mapped_without_fd_reopens_and_maps() {
        let fd = sys::memfd("kfdsim-bo gpu_id=0x1 flags=0x1 size=0x3000", 0x3000).unwrap();
        let m = MemfdMap::new(fd.as_raw_fd(), 0x3000).unwrap();
        drop(fd);
        if m.holds_fd() {
            eprintln!("reopening through /proc/self/map_files not permitted here: fallback keeps an fd");
        }
        let f = m.open(true).unwrap();
        // SAFETY: fresh fd from `open`.
        let f = unsafe { OwnedFd::from_raw_fd(f) };
        let st = sys::fstat(f.as_raw_fd()).unwrap();
        assert_eq!((st.st_dev, st.st_ino), m.key());
        assert_eq!(st.st_size, 0x3000);
        assert!(sys::fd_link(f.as_raw_fd()).unwrap().starts_with("/memfd:kfdsim-bo gpu_id=0x1 "));
        // SAFETY: no MAP_FIXED: a fresh range.
        let u =
            unsafe { m.map_for_user(std::ptr::null_mut(), 0x2000, libc::PROT_READ, libc::MAP_SHARED, 0x1000, false) }
                .unwrap() as *mut u8;
        // SAFETY: both pointers are inside live mappings of the same file page.
        unsafe {
            *m.base().add(0x1008) = 0x5a;
            assert_eq!(*u.add(8), 0x5a);
        }
        assert!(sys::is_mapped(u as u64, 0x2000));
        // Past the end → EINVAL, before anything is mapped.
        // SAFETY: no MAP_FIXED.
        let r =
            unsafe { m.map_for_user(std::ptr::null_mut(), 0x2000, libc::PROT_READ, libc::MAP_SHARED, 0x2000, false) };
        assert_eq!(r, Err(Errno::EINVAL));
        // SAFETY: the user mapping made above; nothing borrows it.
        unsafe { sys::munmap(u as *mut c_void, 0x2000) };
    }

    /// The fallback: an object that keeps an fd still exports the same inode.
    #[test]
    fn fallback_keeps_one_fd_and_exports_it() {
        let fd = sys::memfd("kfdsim-syncobj", 4096).unwrap();
        let mut m = MemfdMap::new(fd.as_raw_fd(), 4096).unwrap();
        if !m.holds_fd() {
            // SAFETY: dup returns a fresh fd.
            m.fd = Some(unsafe { OwnedFd::from_raw_fd(sys::dup(fd.as_raw_fd(), true).unwrap()) });
        }
        drop(fd);
        let e = m.open(false).unwrap();
        assert_eq!(sys::fstat(e).map(|s| (s.st_dev, s.st_ino)), Ok(m.key()));
        // SAFETY: `e` is ours.
        drop(unsafe { OwnedFd::from_raw_fd(e) });
    }
}
