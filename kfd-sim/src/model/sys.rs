//! Raw system calls the model makes on its own behalf.
//!
//! The interposer hooks `mmap`, `ioctl`, `fstat`, `open` and friends; the model must not re-enter
//! it for its own memfds and mappings, so everything here goes through `libc::syscall` directly.
//! User memory is read and written with `process_vm_readv`/`process_vm_writev` on our own pid,
//! which the kernel answers with `EFAULT` for unmapped addresses instead of a SIGSEGV: this is
//! the model's `copy_from_user`/`copy_to_user`. Only the caller's own live stack (where ioctl
//! argument structs usually sit), which cannot fault, is copied directly.

use libc::{c_int, c_void};
use nix::errno::Errno;
use std::cell::Cell;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Page size the model assumes (x86-64, and the kernel's `PAGE_SIZE` in the KFD checks).
pub const PAGE_SIZE: u64 = 4096;

/// Rounds `v` up to a multiple of `PAGE_SIZE` (saturating).
pub fn page_align(v: u64) -> u64 {
    v.checked_add(PAGE_SIZE - 1).map(|x| x & !(PAGE_SIZE - 1)).unwrap_or(!(PAGE_SIZE - 1))
}

fn ret(r: libc::c_long) -> Result<libc::c_long, Errno> {
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r)
    }
}

/// `fstat(fd)` by raw syscall → `(st_dev, st_ino, st_size)`.
pub fn fstat(fd: RawFd) -> Result<libc::stat, Errno> {
    // SAFETY: `st` is a valid, writable `struct stat`; the kernel fills it or fails.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        ret(libc::syscall(libc::SYS_fstat, fd as libc::c_long, &mut st as *mut libc::stat))?;
        Ok(st)
    }
}

/// `fchmod(fd, mode)` by raw syscall.
pub fn fchmod(fd: RawFd, mode: u32) -> Result<(), Errno> {
    // SAFETY: plain syscall on a caller-provided fd.
    unsafe { ret(libc::syscall(libc::SYS_fchmod, fd as libc::c_long, mode as libc::c_long)) }.map(drop)
}

/// `memfd_create(name, MFD_CLOEXEC)` + `ftruncate(size)`. The file is sparse: pages cost memory
/// only once touched.
pub fn memfd(name: &str, size: u64) -> Result<OwnedFd, Errno> {
    let cname = std::ffi::CString::new(name).map_err(|_| Errno::EINVAL)?;
    // SAFETY: `cname` is a valid NUL-terminated string; the returned fd is owned by us.
    let fd = unsafe {
        ret(libc::syscall(libc::SYS_memfd_create, cname.as_ptr(), libc::MFD_CLOEXEC as libc::c_long))? as RawFd
    };
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on our own fd.
    unsafe { ret(libc::syscall(libc::SYS_ftruncate, fd as libc::c_long, size as libc::c_long))? };
    Ok(owned)
}

/// Raw `mmap`.
///
/// # Safety
/// As `mmap(2)`: with `MAP_FIXED`, `[addr, addr+len)` must be a range the caller owns and may
/// replace (nothing in it is borrowed); without it, `addr` is only a hint.
pub unsafe fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: RawFd,
    off: i64,
) -> Result<*mut c_void, Errno> {
    // SAFETY: the kernel validates every argument; the caller upholds the MAP_FIXED contract.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mmap,
            addr,
            len,
            prot as libc::c_long,
            flags as libc::c_long,
            fd as libc::c_long,
            off as libc::c_long,
        )
    };
    if r == -1 {
        Err(Errno::last())
    } else {
        Ok(r as *mut c_void)
    }
}

/// Raw `munmap`.
///
/// # Safety
/// `[addr, addr+len)` must be a mapping the caller created and nothing still borrows.
pub unsafe fn munmap(addr: *mut c_void, len: usize) {
    // SAFETY: the caller owns the mapping (see above).
    unsafe {
        libc::syscall(libc::SYS_munmap, addr, len);
    }
}

/// `mremap(src, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst)`: a second mapping of the pages of
/// the shared mapping at `src` (`old_size` 0 duplicates a `VM_SHARED` mapping, `vma_to_resize`),
/// at `dst`, with `src`'s protection. A private mapping at `src` → EINVAL, nothing mapped there →
/// EFAULT.
///
/// # Safety
/// `[dst, dst+len)` must be a range the caller owns and may replace (nothing in it is borrowed).
pub unsafe fn mremap_dup(src: *mut c_void, len: usize, dst: *mut c_void) -> Result<(), Errno> {
    let flags = (libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED) as libc::c_long;
    // SAFETY: the kernel validates `src`; the caller owns the target range.
    unsafe { ret(libc::syscall(libc::SYS_mremap, src, 0usize, len, flags, dst)) }.map(drop)
}

/// Raw `mprotect`.
///
/// # Safety
/// `[addr, addr+len)` must be a mapping the caller owns; nothing may rely on its old protection.
pub unsafe fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> Result<(), Errno> {
    // SAFETY: the caller owns the mapping.
    unsafe { ret(libc::syscall(libc::SYS_mprotect, addr, len, prot as libc::c_long)) }.map(drop)
}

/// `openat(AT_FDCWD, path, flags)` by raw syscall (not through the interposer).
pub fn open(path: &str, flags: c_int) -> Result<OwnedFd, Errno> {
    let cpath = std::ffi::CString::new(path).map_err(|_| Errno::EINVAL)?;
    // SAFETY: `cpath` is NUL-terminated; the returned fd is owned by nobody else.
    unsafe {
        let fd = ret(libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD as libc::c_long,
            cpath.as_ptr(),
            flags as libc::c_long,
        ))?;
        Ok(OwnedFd::from_raw_fd(fd as RawFd))
    }
}

/// Maps `len` bytes of `fd` shared and read-write at a kernel-chosen address (the model's private
/// view of a BO). `MAP_NORESERVE`: a 64 GiB VRAM BO costs address space only.
pub fn map_shared(fd: RawFd, len: u64) -> Result<*mut u8, Errno> {
    if len == 0 || len > isize::MAX as u64 {
        return Err(Errno::EINVAL);
    }
    // SAFETY: no MAP_FIXED: the kernel picks a fresh range, which aliases nothing.
    let p = unsafe {
        mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd,
            0,
        )
    }?;
    Ok(p as *mut u8)
}

/// A table of `len` bytes that every process of the session shares: the session directory's file
/// `name`, created on first use (a new file reads as zeroes; every process sets the same length),
/// mapped shared for the rest of the process's life. Without a session directory (or where the
/// file cannot be made): an anonymous shared mapping if `anonymous` (seen by this process and
/// the children it forks later), else None.
pub fn session_table(name: &str, len: usize, anonymous: bool) -> Option<*mut u8> {
    let file = std::env::var_os(crate::session::ENV_SESSION).and_then(|dir| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(std::path::Path::new(&dir).join(name))
            .ok()?;
        f.set_len(len as u64).ok()?;
        Some(f)
    });
    use std::os::fd::AsRawFd;
    let (flags, fd) = match &file {
        Some(f) => (libc::MAP_SHARED, f.as_raw_fd()),
        None if anonymous => (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1),
        None => return None,
    };
    // SAFETY: no MAP_FIXED: the kernel picks a fresh range, which aliases nothing; the mapping
    // is never unmapped (the file may close: the mapping keeps it).
    let p = unsafe { mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, 0) }.ok()?;
    Some(p as *mut u8)
}

/// Whether this process holds capability `cap` (`capable()`: its effective set, from
/// `/proc/self/status`).
pub fn has_capability(cap: u32) -> bool {
    std::fs::read_to_string("/proc/self/status").ok().is_some_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|eff| eff >> cap & 1 != 0)
    })
}

/// Whether process `pid` exists (a zombie counts; 0 never does).
pub fn pid_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid != 0 && (unsafe { libc::kill(pid as libc::pid_t, 0) } == 0 || Errno::last() == Errno::EPERM)
}

/// `fcntl(fd, F_DUPFD_CLOEXEC or F_DUPFD, 0)`.
pub fn dup(fd: RawFd, cloexec: bool) -> Result<RawFd, Errno> {
    let cmd = if cloexec { libc::F_DUPFD_CLOEXEC } else { libc::F_DUPFD };
    // SAFETY: plain fcntl on a caller-provided fd.
    unsafe { Ok(ret(libc::syscall(libc::SYS_fcntl, fd as libc::c_long, cmd as libc::c_long, 0))? as RawFd) }
}

/// The target of `/proc/self/fd/<fd>` (e.g. `/memfd:kfdsim-bo ... (deleted)`).
pub fn fd_link(fd: RawFd) -> Option<String> {
    readlink(&format!("/proc/self/fd/{fd}"))
}

/// `readlink(path)` by raw syscall (not through the interposer); None on any error.
pub fn readlink(path: &str) -> Option<String> {
    let path = std::ffi::CString::new(path).ok()?;
    let mut buf = vec![0u8; 512];
    // SAFETY: `path` is NUL-terminated, `buf` is writable for its length.
    let n = unsafe {
        libc::syscall(libc::SYS_readlinkat, libc::AT_FDCWD as libc::c_long, path.as_ptr(), buf.as_mut_ptr(), buf.len())
    };
    if n <= 0 {
        return None;
    }
    buf.truncate(n as usize);
    String::from_utf8(buf).ok()
}

/// The page that caches our pid: `MADV_WIPEONFORK`, so the child of any fork (`fork`, `_Fork`,
/// a raw `clone` without `CLONE_VM`) reads 0 there and asks the kernel again; null until first
/// use, `usize::MAX` where the page could not be had (then every call is a syscall).
static PID_PAGE: AtomicUsize = AtomicUsize::new(0);

fn pid_page() -> Option<&'static AtomicU32> {
    let mut p = PID_PAGE.load(Ordering::Acquire);
    if p == 0 {
        p = usize::MAX;
        // SAFETY: a fresh anonymous private page (no MAP_FIXED), then madvise on that page only.
        unsafe {
            let m = libc::syscall(
                libc::SYS_mmap,
                std::ptr::null_mut::<c_void>(),
                PAGE_SIZE as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1 as libc::c_long,
                0 as libc::c_long,
            );
            if m != -1 {
                if libc::syscall(libc::SYS_madvise, m, PAGE_SIZE as usize, libc::MADV_WIPEONFORK) == 0 {
                    p = m as usize;
                } else {
                    libc::syscall(libc::SYS_munmap, m, PAGE_SIZE as usize);
                }
            }
        }
        // Two threads racing here: the loser gives its page back.
        if let Err(won) = PID_PAGE.compare_exchange(0, p, Ordering::AcqRel, Ordering::Acquire) {
            if p != usize::MAX {
                // SAFETY: our own page, never published.
                unsafe { libc::syscall(libc::SYS_munmap, p, PAGE_SIZE as usize) };
            }
            p = won;
        }
    }
    // SAFETY: a live page of this process that is never unmapped once published; AtomicU32 has
    // the alignment and size of u32 and every bit pattern is valid.
    (p != usize::MAX).then(|| unsafe { &*(p as *const AtomicU32) })
}

/// Our pid (the thread-group id; the kernel's `current->group_leader`). One syscall per process
/// and fork: the value is cached in a `MADV_WIPEONFORK` page, which a forked child sees zeroed.
/// The model's pthread_atfork child handler refills it ([`refresh_pid`]), so that a `CLONE_VM`
/// child (`vfork`, `posix_spawn`), which shares the page until it execs, finds it set and never
/// stores its own pid there.
pub fn getpid() -> u32 {
    let page = pid_page();
    if let Some(pid) = page.map(|a| a.load(Ordering::Relaxed)).filter(|&v| v != 0) {
        return pid;
    }
    refresh_pid()
}

/// Asks the kernel for our pid and caches it (see [`getpid`]).
pub fn refresh_pid() -> u32 {
    // SAFETY: getpid has no preconditions. Raw syscall, exact across fork/clone.
    let pid = unsafe { libc::syscall(libc::SYS_getpid) as u32 };
    if let Some(a) = pid_page() {
        a.store(pid, Ordering::Relaxed);
    }
    pid
}

thread_local! {
    /// `[low, high)` of this thread's stack (`pthread_getattr_np`), `(0, 0)` until asked,
    /// `(1, 1)` where it could not be had.
    static STACK: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// `[low, high)` of the calling thread's stack.
fn thread_stack() -> Option<(usize, usize)> {
    let mut b = STACK.with(Cell::get);
    if b == (0, 0) {
        b = (1, 1);
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        // SAFETY: `attr` is initialised by pthread_getattr_np on success and destroyed once.
        unsafe {
            if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) == 0 {
                let mut addr = std::ptr::null_mut();
                let mut size = 0usize;
                if libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) == 0 && !addr.is_null() {
                    b = (addr as usize, addr as usize + size);
                }
                libc::pthread_attr_destroy(attr.as_mut_ptr());
            }
        }
        STACK.with(|c| c.set(b));
    }
    (b.0 < b.1).then_some(b)
}

/// True if `[addr, addr+len)` lies between this frame and the top of the calling thread's stack
/// (and this frame is on that stack, not on a signal stack): memory that stays mapped and
/// writable while this call runs, so a plain copy there cannot fault. The ioctl argument structs
/// of a caller on its own stack take this path; any other address goes through the kernel.
#[inline(never)]
fn on_live_stack(addr: u64, len: usize) -> bool {
    let here = std::hint::black_box(0u8);
    let sp = std::ptr::addr_of!(here) as usize;
    let Some((low, high)) = thread_stack() else { return false };
    let addr = addr as usize;
    (low..high).contains(&sp) && addr >= sp && addr.checked_add(len).is_some_and(|e| e <= high)
}

/// `copy_from_user`: reads `dst.len()` bytes at user address `src`. `EFAULT` if any byte is not
/// readable. The caller's live stack is read directly ([`on_live_stack`]), anything else with
/// `process_vm_readv`, which fails with EFAULT where a read would fault.
pub fn copy_from_user(dst: &mut [u8], src: u64) -> Result<(), Errno> {
    if dst.is_empty() {
        return Ok(());
    }
    if src == 0 {
        return Err(Errno::EFAULT);
    }
    if on_live_stack(src, dst.len()) {
        // SAFETY: the source is mapped and readable for the whole call (see `on_live_stack`);
        // `dst` is our own buffer.
        unsafe { std::ptr::copy(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        return Ok(());
    }
    let local = libc::iovec { iov_base: dst.as_mut_ptr() as *mut c_void, iov_len: dst.len() };
    let remote = libc::iovec { iov_base: src as *mut c_void, iov_len: dst.len() };
    // SAFETY: `local` describes our own writable buffer; the kernel checks `remote`.
    let n = unsafe { libc::process_vm_readv(getpid() as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        let e = Errno::last();
        if e == Errno::ENOSYS || e == Errno::EPERM {
            return fallback_copy(dst.as_mut_ptr(), src as *const u8, dst.len());
        }
        return Err(Errno::EFAULT);
    }
    if n as usize != dst.len() {
        return Err(Errno::EFAULT);
    }
    Ok(())
}

/// `copy_to_user`: writes `src` at user address `dst`. `EFAULT` if any byte is not writable.
/// The caller's live stack is written directly, anything else with `process_vm_writev`.
pub fn copy_to_user(dst: u64, src: &[u8]) -> Result<(), Errno> {
    if src.is_empty() {
        return Ok(());
    }
    if dst == 0 {
        return Err(Errno::EFAULT);
    }
    if on_live_stack(dst, src.len()) {
        // SAFETY: the destination is mapped and writable for the whole call (see
        // `on_live_stack`); `src` is our own buffer.
        unsafe { std::ptr::copy(src.as_ptr(), dst as *mut u8, src.len()) };
        return Ok(());
    }
    let local = libc::iovec { iov_base: src.as_ptr() as *mut c_void, iov_len: src.len() };
    let remote = libc::iovec { iov_base: dst as *mut c_void, iov_len: src.len() };
    // SAFETY: `local` describes our own readable buffer; the kernel checks `remote`.
    let n = unsafe { libc::process_vm_writev(getpid() as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        let e = Errno::last();
        if e == Errno::ENOSYS || e == Errno::EPERM {
            return fallback_copy(dst as *mut u8, src.as_ptr(), src.len());
        }
        return Err(Errno::EFAULT);
    }
    if n as usize != src.len() {
        return Err(Errno::EFAULT);
    }
    Ok(())
}

/// Where `process_vm_*` is forbidden (seccomp), fall back to a plain copy after checking that
/// the range is mapped (`mincore` fails with ENOMEM on holes).
fn fallback_copy(dst: *mut u8, src: *const u8, len: usize) -> Result<(), Errno> {
    for p in [dst as u64, src as u64] {
        if !is_mapped(p, len as u64) {
            return Err(Errno::EFAULT);
        }
    }
    // SAFETY: both ranges were just checked to be mapped; permissions are the caller's
    // responsibility as for any user copy (the kernel path is preferred when available).
    unsafe { std::ptr::copy(src, dst, len) };
    Ok(())
}

/// True if every page of `[addr, addr+len)` is mapped in this process.
pub fn is_mapped(addr: u64, len: u64) -> bool {
    if len == 0 {
        return true;
    }
    let start = addr & !(PAGE_SIZE - 1);
    let Some(end) = addr.checked_add(len) else { return false };
    let end = page_align(end);
    let pages = ((end - start) / PAGE_SIZE) as usize;
    // One byte per page; cap the probe at 1 GiB chunks to bound the vector.
    let mut off = 0usize;
    while off < pages {
        let n = (pages - off).min(1 << 18);
        let mut vec = vec![0u8; n];
        // SAFETY: `vec` has one byte per probed page.
        let r = unsafe {
            libc::mincore((start + off as u64 * PAGE_SIZE) as *mut c_void, n * PAGE_SIZE as usize, vec.as_mut_ptr())
        };
        if r != 0 {
            return false;
        }
        off += n;
    }
    true
}

/// What pinning the user's pages `[addr, addr+len)` for a GPU needs (`amdgpu_ttm_tt_get_user_pages`
/// → `hmm_range_fault` with `HMM_PFN_REQ_FAULT`, plus `HMM_PFN_REQ_WRITE` when `write`): every
/// page mapped and readable, else EFAULT; writable too when `write`, else EPERM. Read from
/// `/proc/self/maps`, which shows the protections (`mincore` does not: it counts a `PROT_NONE`
/// page as mapped).
pub fn user_pages_access(addr: u64, len: u64, write: bool) -> Result<(), Errno> {
    let start = addr & !(PAGE_SIZE - 1);
    let end = page_align(addr.checked_add(len).ok_or(Errno::EFAULT)?);
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|_| Errno::EFAULT)?;
    let mut cur = start;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { continue };
        let Some((lo, hi)) = range.split_once('-') else { continue };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else { continue };
        if hi <= cur || cur >= end {
            continue;
        }
        if lo > cur || !perms.starts_with('r') {
            return Err(Errno::EFAULT); // a hole, or a page that cannot be read
        }
        if write && perms.as_bytes().get(1) != Some(&b'w') {
            return Err(Errno::EPERM);
        }
        cur = hi;
    }
    if cur < end {
        return Err(Errno::EFAULT);
    }
    Ok(())
}

/// `access_ok`: the range lies below the user address-space limit (x86-64 `TASK_SIZE_MAX`).
pub fn access_ok(addr: u64, len: u64) -> bool {
    const TASK_SIZE_MAX: u64 = (1 << 47) - PAGE_SIZE;
    addr.checked_add(len).is_some_and(|e| e <= TASK_SIZE_MAX)
}

/// Nanoseconds of `clock`.
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The simulated GPU clock: a 100 MHz counter (`CLOCK_MONOTONIC` / 10 ns), used by SDMA
/// TIMESTAMP and `GET_CLOCK_COUNTERS.gpu_clock_counter`.
pub fn gpu_clock() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC) / 10
}

/// Bytes of a slice of plain uapi structs.
pub(crate) fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is a plain-old-data uapi type; viewing its bytes is sound.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// Mutable bytes of a slice of plain uapi structs.
pub(crate) fn as_bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: T is a plain-old-data uapi type with no invalid bit patterns.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}
