//! The kernel model: the amdgpu KFD (`/dev/kfd`) and render-node (`/dev/dri/renderD*`)
//! interface, answered in user space.
//!
//! Layout (each file is set beside its kernel counterpart):
//! - [`kfd_chardev`]: one `kfd_ioctl_<name>` per KFD ioctl, the dispatcher `kfd_ioctl` and
//!   `kfd_mmap` (linux `amdkfd/kfd_chardev.c`);
//! - [`process`]: `kfd_process` / `kfd_process_device` state;
//! - [`bo`], [`gpuvm`]: memfd-backed BOs and per-(process, GPU) address spaces;
//! - [`memfd`]: the memfds behind BOs and syncobjs, mapped but not kept open;
//! - [`events`] (`kfd_events.c`), [`queue`] (`kfd_queue.c`), [`sdma`] (the SDMA engine),
//!   [`aql`] (the compute queues' command processor);
//! - [`drm`]: render-node ioctls and mmap (`amdgpu_gem.c`, `amdgpu_kms.c`, `drm_prime.c`);
//! - [`syncobj`]: DRM syncobjs shared across processes (`drm_syncobj.c`);
//! - [`vram`]: VRAM use per GPU across the processes of a session (`adev->kfd.vram_used`).
//!
//! Files are identified by `(st_dev, st_ino)` of the fd the interposer created, so dup, fork and
//! SCM_RIGHTS keep working; one `fstat` tells a device file from any other fd by its mode
//! ([`DEVICE_FILE_MODE`]). A `/dev/kfd` file remembers its opener: an ioctl from another process
//! (a forked child) gets EBADF, as in `kfd_ioctl`.
//!
//! mmap-offset scheme: render-node offsets of BOs start at 4 GiB (`DRM_FILE_PAGE_OFFSET_START`)
//! and stay below 1 TiB, one page-aligned range per BO; `/dev/kfd` offsets use the kernel's
//! encoding (`kfd_ioctl::mmap`: type in bits 63:62, gpu_id in 61:46).

pub mod aql;
pub mod bo;
pub mod cs;
pub mod dbwatch;
pub mod debug;
pub mod drm;
pub mod events;
pub mod gpus;
pub mod gpuvm;
pub mod ipc;
pub mod kfd_chardev;
pub mod memfd;
pub mod pc_sampling;
pub mod pm4;
pub mod process;
pub mod ptrace;
pub mod queue;
pub mod sdma;
pub mod smi;
pub mod svm;
pub mod syncobj;
pub mod sys;
pub mod udmabuf;
pub mod vram;

pub use bo::FileKey;
use libc::{c_int, c_ulong, c_void};
use nix::errno::Errno;
use parking_lot::RwLock;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::os::fd::RawFd;
use std::sync::Once;

/// Which simulated device a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevKind {
    Kfd,
    Render {
        minor: u32,
    },
    /// `/dev/udmabuf` (udmabuf.rs).
    Udmabuf,
}

/// A simulated open file.
#[derive(Clone, Copy, Debug)]
pub struct FileEntry {
    pub kind: DevKind,
    /// pid (thread-group id) that opened it.
    pub opener_pid: u32,
}

static FILES: RwLock<Option<HashMap<FileKey, FileEntry>>> = RwLock::new(None);
static ATFORK: Once = Once::new();

extern "C" fn atfork_prepare() {
    std::mem::forget(FILES.write());
    process::atfork_prepare();
}

extern "C" fn atfork_parent() {
    process::atfork_release();
    // SAFETY: paired with the guard forgotten in `atfork_prepare` on this thread.
    unsafe { FILES.force_unlock_write() };
}

extern "C" fn atfork_child() {
    sys::refresh_pid();
    process::atfork_release();
    // SAFETY: the child's only thread is the one that ran `atfork_prepare`.
    unsafe { FILES.force_unlock_write() };
}

fn install_atfork() {
    ATFORK.call_once(|| {
        // SAFETY: registering plain extern "C" fns with no captured state.
        unsafe { libc::pthread_atfork(Some(atfork_prepare), Some(atfork_parent), Some(atfork_child)) };
    });
}

/// Permission bits of a simulated device file (the interposer's memfd, set with `fchmod` at
/// open). Every other memfd (a BO, a dma-buf, the user's own) keeps `memfd_create`'s 0777 (0666
/// under a noexec seal), so one `fstat` tells a device file apart, even from a memfd that got the
/// inode number of a closed one. The user never sees these bits: stat of a device fd reports a
/// character device, 0666.
pub const DEVICE_FILE_MODE: u32 = 0o1600;

/// True if `st_mode` is that of a simulated device file (a regular file with [`DEVICE_FILE_MODE`]).
pub fn is_device_mode(mode: u32) -> bool {
    mode & libc::S_IFMT == libc::S_IFREG && mode & 0o7777 == DEVICE_FILE_MODE
}

/// Marks `fd` (a memfd the interposer created for an open of a device node) as a device file;
/// its `fstat` afterwards. Errors: those of `fchmod` / `fstat`.
pub fn mark_device_file(fd: RawFd) -> Result<libc::stat, Errno> {
    sys::fchmod(fd, DEVICE_FILE_MODE)?;
    sys::fstat(fd)
}

/// Records that `fd` (created by the interposer for an open of a simulated device node) is
/// `kind`, marking it ([`mark_device_file`]); returns its `fstat`. Opening /dev/kfd also creates
/// this process's KFD state if needed (`kfd_open` → `kfd_create_process`).
pub fn register_open(fd: RawFd, kind: DevKind) -> Result<libc::stat, Errno> {
    install_atfork();
    let st = mark_device_file(fd)?;
    let key = (st.st_dev, st.st_ino);
    let pid = sys::getpid();
    FILES.write().get_or_insert_with(HashMap::new).insert(key, FileEntry { kind, opener_pid: pid });
    if kind == DevKind::Kfd {
        let _ = process::current();
    }
    Ok(st)
}

/// The registry entry of the device file with identity `key` (the caller checked the file's
/// mode with [`is_device_mode`]).
pub fn file_by_key(key: FileKey) -> Option<FileEntry> {
    FILES.read().as_ref()?.get(&key).copied()
}

/// The registry entry of `fd`, if it is a simulated file: one `fstat`.
pub fn file_of(fd: RawFd) -> Option<(FileKey, FileEntry)> {
    let st = sys::fstat(fd).ok()?;
    if !is_device_mode(st.st_mode) {
        return None;
    }
    let key = (st.st_dev, st.st_ino);
    Some((key, file_by_key(key)?))
}

/// What simulated device `fd` is, if any. Cheap for other fds: one `fstat`.
pub fn dev_kind(fd: RawFd) -> Option<DevKind> {
    file_of(fd).map(|(_, e)| e.kind)
}

/// Answers `ioctl(fd, request, arg)` on a simulated file.
pub fn ioctl(fd: RawFd, request: c_ulong, arg: *mut c_void) -> Result<c_int, Errno> {
    let Some((key, _)) = file_of(fd) else { return Err(Errno::ENOTTY) };
    ioctl_file(key, request, arg)
}

/// Answers an ioctl on the device file with identity `key` (the interposer's path: it has
/// already `fstat`ed the fd).
pub fn ioctl_file(key: FileKey, request: c_ulong, arg: *mut c_void) -> Result<c_int, Errno> {
    let Some(entry) = file_by_key(key) else { return Err(Errno::ENOTTY) };
    crate::calls::count_ioctl(entry.kind, request);
    if let Some(e) = crate::faults::check(|| ioctl_uapi_name(entry.kind, request)) {
        return Err(Errno::from_raw(e));
    }
    match entry.kind {
        DevKind::Kfd => kfd_chardev::kfd_ioctl(key, entry, request, arg as u64),
        DevKind::Render { minor } => drm::drm_ioctl(key, minor, request, arg as u64),
        DevKind::Udmabuf => udmabuf::ioctl(request, arg as u64),
    }
}

/// The uapi name of `request` on a device of `kind` (what `KFDSIM_FAULTS` names it by).
fn ioctl_uapi_name(kind: DevKind, request: c_ulong) -> Option<&'static str> {
    match kind {
        DevKind::Udmabuf => match request {
            udmabuf::UDMABUF_CREATE => Some("UDMABUF_CREATE"),
            udmabuf::UDMABUF_CREATE_LIST => Some("UDMABUF_CREATE_LIST"),
            _ => None,
        },
        _ => kfd_ioctl::ioctl_name(request),
    }
}

/// Answers `mmap(addr, len, prot, flags, fd, offset)` on the device file with identity `key`
/// (from the interposer's `fstat`, or [`file_of`]); `fd` only names it in the trace.
///
/// # Safety
/// As `mmap(2)`: with `MAP_FIXED`, `[addr, addr+len)` must be a range the caller owns and may
/// replace (nothing in it is borrowed); without it, `addr` is only a hint.
pub unsafe fn mmap(
    key: FileKey,
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: RawFd,
    offset: i64,
) -> Result<*mut c_void, Errno> {
    let Some(entry) = file_by_key(key) else { return Err(Errno::ENODEV) };
    crate::calls::count_mmap();
    if let Some(e) = crate::faults::check(|| Some("mmap")) {
        return Err(Errno::from_raw(e));
    }
    if len == 0 {
        return Err(Errno::EINVAL);
    }
    if offset as u64 & (sys::PAGE_SIZE - 1) != 0 {
        return Err(Errno::EINVAL);
    }
    let r = match entry.kind {
        // SAFETY: our caller upholds mmap(2)'s MAP_FIXED contract for `addr`.
        DevKind::Kfd => unsafe { kfd_chardev::kfd_mmap(addr, len, prot, flags, offset as u64) },
        // SAFETY: as above.
        DevKind::Render { .. } => unsafe { drm::drm_mmap(key, addr, len, prot, flags, offset as u64) },
        // misc_open gives udmabuf no mmap.
        DevKind::Udmabuf => Err(Errno::ENODEV),
    };
    if trace_enabled() {
        crate::trace::emit(format_args!(
            "mmap({:?}, {:#x}, prot={:#x}, flags={:#x}, fd={} ({:?}), off={:#x}) = {:?}",
            addr, len, prot, flags, fd, entry.kind, offset, r
        ));
    }
    r
}

/// The lowest id ≥ 1 that `map` does not hold, as `idr_alloc(idr, ptr, 1, 0, ...)` gives GEM
/// handles, syncobj handles, amdgpu contexts and BO lists.
pub(crate) fn lowest_free_id<T>(map: &BTreeMap<u32, T>) -> u32 {
    let mut id = 1;
    for k in map.keys() {
        if *k != id {
            break;
        }
        id += 1;
    }
    id
}

/// `KFDSIM_TRACE=1`.
pub(crate) fn trace_enabled() -> bool {
    crate::trace::enabled()
}

const IOC_WRITE: c_ulong = 1; // user → kernel (`IOC_IN`)
const IOC_READ: c_ulong = 2; // kernel → user (`IOC_OUT`)

/// `_IOC_DIR`.
fn ioc_dir(req: c_ulong) -> c_ulong {
    (req >> 30) & 3
}

/// `_IOC_SIZE`.
pub(crate) fn ioc_size(req: c_ulong) -> usize {
    ((req >> 16) & 0x3fff) as usize
}

/// The common argument handling of `kfd_ioctl` / `drm_ioctl`: copy `max(user, kernel)` bytes
/// (zero-extended) in if the kernel's command is `IOC_IN`, run `f`, copy the user's size back out
/// if `IOC_OUT` (also after a failing handler, as the kernel does), and trace.
pub(crate) fn with_args<T: Copy + Default + Debug>(
    name: &str,
    user_req: c_ulong,
    kernel_req: c_ulong,
    arg: u64,
    f: impl FnOnce(&mut T) -> Result<c_int, Errno>,
) -> Result<c_int, Errno> {
    let usize_ = ioc_size(user_req);
    let ksize = std::mem::size_of::<T>();
    let asize = usize_.max(ksize);
    let dir = ioc_dir(kernel_req);
    let mut buf = vec![0u8; asize];
    if dir & IOC_WRITE != 0 {
        if let Err(e) = sys::copy_from_user(&mut buf[..usize_], arg) {
            trace_line(name, None::<&T>, Err(e), None);
            return Err(e);
        }
    }
    // SAFETY: `buf` holds at least size_of::<T>() initialised bytes and T is a plain uapi struct
    // (integers only), for which every bit pattern is valid.
    let mut t: T = unsafe { std::ptr::read_unaligned(buf.as_ptr() as *const T) };
    let before = trace_enabled().then_some(t);
    let mut r = f(&mut t);
    // SAFETY: writing the plain struct back over its own bytes.
    unsafe { std::ptr::write_unaligned(buf.as_mut_ptr() as *mut T, t) };
    if dir & IOC_READ != 0 && sys::copy_to_user(arg, &buf[..usize_]).is_err() {
        r = Err(Errno::EFAULT);
    }
    trace_line(name, before.as_ref(), r, Some(&t));
    r
}

/// One trace line: name, args in, result, args out.
pub(crate) fn trace_line<T: Debug>(name: &str, before: Option<&T>, r: Result<c_int, Errno>, after: Option<&T>) {
    if !trace_enabled() {
        return;
    }
    let res = match r {
        Ok(v) => format!("= {v}"),
        Err(e) => format!("= -1 {e:?} ({})", e.desc()),
    };
    match (before, after) {
        (Some(b), Some(a)) => crate::trace::emit(format_args!("{name} {b:?} {res} {a:?}")),
        _ => crate::trace::emit(format_args!("{name} {res}")),
    }
}

#[cfg(test)]
mod tests;
