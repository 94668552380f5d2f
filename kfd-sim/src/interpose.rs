//! libc interposers: what makes a preloaded process see the simulated devices.
//!
//! - Paths under the simulated prefixes (`sysfs::REDIRECT_PREFIXES`: `/dev/kfd`, `/dev/dri`, the
//!   KFD, DRM and amdgpu sysfs, `/proc/modules`) are redirected to `$KFDSIM_ROOT/<path>`; paths
//!   under `sysfs::OVERLAY_PREFIXES` (the PCI device directories) only if they exist there.
//! - Opening `/dev/kfd`, `/dev/udmabuf`, `/dev/dri/renderD<N>` or `/dev/dri/card<N>` (if the tree
//!   has it) returns a fresh memfd named `kfdsim-kfd`, `kfdsim-udmabuf`, `kfdsim-renderD<N>` or
//!   `kfdsim-card<N>`; all but the card nodes are registered with `model::register_open`.
//!   stat/fstat/statx of these paths and fds report a character device (`/dev/kfd` 234:0,
//!   `/dev/udmabuf` 10:125, DRM 226:<minor>, mode 0666).
//! - `ioctl`, `mmap` and `mmap64` on those fds go to `model::ioctl_file` / `model::mmap`.
//! - `munmap` also takes the pages out of SVM ranges (`model::svm::cpu_unmapped`); `ptrace`'s
//!   PEEK/POKE of TEXT/DATA that the kernel refuses on a BO mapping reach the BO
//!   (`model::ptrace`, amdgpu's `vm_ops->access`).
//! - Reading a dynamic attribute (`sysfs::DYNAMIC_ATTRIBUTES`, e.g. a GPU's `mem_info_vram_used`)
//!   with `open` or `fopen` returns a memfd holding its current text, made at that open as sysfs
//!   makes it at each read.
//!
//! A simulated fd is recognised without any table the process could lose: the memfd's `st_dev`
//! (learnt at the first device open) and mode (`model::DEVICE_FILE_MODE`, set at open), then
//! which device by inode from a small cache, filled at open (on a miss: its name in
//! /proc/self/fd). Before the first device open, fd calls cost nothing extra; afterwards one
//! fstat, which also gives the model the file's identity.
//!
//! The real operations are raw system calls, except for the stdio/dirent/realpath functions
//! (`fopen`, `opendir`, `scandir`, `realpath`), which call the next definition found with
//! `dlsym(RTLD_NEXT)`. Nothing here allocates, except the one-time copy of `KFDSIM_ROOT`, the
//! first read of a dynamic attribute (which loads the topology and maps the VRAM ledger), and
//! the exit record and test hooks of `KFDSIM_STATS` / `KFDSIM_FAULTS` (which are no interposers).
//!
//! Known gaps: relative paths resolved against a cwd inside the simulated tree are not
//! redirected; a device fd inherited across exec is not recognised; `card` nodes answer no ioctl
//! (ENOTTY); readlink of /proc/self/fd/<device fd> shows the memfd name; fchmod of a device fd
//! reaches the memfd and clears its mark (`model::DEVICE_FILE_MODE`): the fd stops being a device.

#![allow(clippy::missing_safety_doc)]

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use libc::{c_char, c_int, c_uint, c_ulong, c_void, off_t, size_t, ssize_t, DIR, FILE};

use crate::model::{self, DevKind};
use crate::sysfs::{DRM_MAJOR, KFD_MAJOR, MISC_MAJOR, OVERLAY_PREFIXES, REDIRECT_PREFIXES, UDMABUF_MINOR};

const PATH_MAX: usize = libc::PATH_MAX as usize;

// ---------------------------------------------------------------------------------------------
// Library constructor

/// Runs when libkfdsim.so is loaded: without the launcher (no KFDSIM_ROOT), creates the default
/// session and exports it, while the process is still single-threaded.
unsafe extern "C" fn kfdsim_init() {
    let _ = std::panic::catch_unwind(|| {
        crate::session::ensure_env();
    });
}

#[used]
#[link_section = ".init_array"]
static KFDSIM_INIT: unsafe extern "C" fn() = kfdsim_init;

/// Runs at exit (after the program's `atexit` handlers): the `KFDSIM_STATS` record.
unsafe extern "C" fn kfdsim_fini() {
    let _ = std::panic::catch_unwind(crate::stats::at_exit);
}

#[used]
#[link_section = ".fini_array"]
static KFDSIM_FINI: unsafe extern "C" fn() = kfdsim_fini;

// ---------------------------------------------------------------------------------------------
// Test hooks (found with `dlsym(RTLD_DEFAULT, ...)` by test drivers)

/// One counter of this process's `KFDSIM_STATS` record (`"bos"`, `"gpu0.vram_bytes"`,
/// `"faults.total"`, ...); 0 if unknown or NULL.
#[no_mangle]
pub unsafe extern "C" fn kfdsim_stat(key: *const c_char) -> u64 {
    if key.is_null() {
        return 0;
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let key = unsafe { CStr::from_ptr(key) }.to_string_lossy();
    std::panic::catch_unwind(|| crate::stats::get(&key)).unwrap_or(0)
}

/// Switches `KFDSIM_FAULTS` injection off (0) or on (non-zero) in this process; rules do not
/// count calls while off.
#[no_mangle]
pub extern "C" fn kfdsim_faults_enable(on: c_int) {
    crate::faults::set_enabled(on != 0);
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn errno() -> c_int {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() }
}

static ROOT: OnceLock<&'static [u8]> = OnceLock::new();

/// `$KFDSIM_ROOT` without a trailing '/', once it is set (re-checked until then, because the
/// constructor sets it after the library may already have been asked).
fn root() -> Option<&'static [u8]> {
    if let Some(r) = ROOT.get() {
        return Some(r);
    }
    // SAFETY: getenv returns NULL or a NUL-terminated string that we copy at once.
    let p = unsafe { libc::getenv(c"KFDSIM_ROOT".as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null result of getenv.
    let mut s = unsafe { CStr::from_ptr(p) }.to_bytes();
    while s.len() > 1 && s.ends_with(b"/") {
        s = &s[..s.len() - 1];
    }
    if s.len() < 2 || s.len() > PATH_MAX / 2 || s[0] != b'/' {
        return None;
    }
    Some(ROOT.get_or_init(|| Box::leak(s.to_vec().into_boxed_slice())))
}

fn prefix_match(path: &[u8], prefix: &[u8]) -> bool {
    path.starts_with(prefix)
        && (matches!(prefix.last(), Some(b'/' | b':')) || path.len() == prefix.len() || path[prefix.len()] == b'/')
}

/// The bytes of a C path if it could be a simulated one (absolute, starts with /d, /s or /p).
unsafe fn candidate<'a>(path: *const c_char) -> Option<&'a [u8]> {
    if path.is_null() || *path != b'/' as c_char {
        return None;
    }
    if !matches!(*path.add(1) as u8, b'd' | b's' | b'p') {
        return None;
    }
    Some(CStr::from_ptr(path).to_bytes())
}

/// A stack buffer for a redirected path.
struct RBuf(MaybeUninit<[u8; PATH_MAX]>);

impl RBuf {
    fn new() -> RBuf {
        RBuf(MaybeUninit::uninit())
    }

    fn ptr(&self) -> *const c_char {
        self.0.as_ptr().cast()
    }

    /// Writes `root + path` NUL-terminated; false if too long.
    fn set(&mut self, root: &[u8], path: &[u8]) -> bool {
        let n = root.len() + path.len();
        if n + 1 > PATH_MAX {
            return false;
        }
        let dst: *mut u8 = self.0.as_mut_ptr().cast();
        // SAFETY: n + 1 <= PATH_MAX bytes are written inside the buffer; sources are valid.
        unsafe {
            std::ptr::copy_nonoverlapping(root.as_ptr(), dst, root.len());
            std::ptr::copy_nonoverlapping(path.as_ptr(), dst.add(root.len()), path.len());
            *dst.add(n) = 0;
        }
        true
    }

    /// If `path` is simulated, fills the buffer with its location below the root and returns the
    /// caller's (virtual) path.
    unsafe fn redirect<'a>(&mut self, path: *const c_char) -> Option<&'a [u8]> {
        let p = candidate(path)?;
        let fixed = REDIRECT_PREFIXES.iter().any(|pre| prefix_match(p, pre.as_bytes()));
        let overlay = !fixed && OVERLAY_PREFIXES.iter().any(|pre| p.starts_with(pre.as_bytes()));
        if !fixed && !overlay {
            return None;
        }
        let root = root()?;
        if !self.set(root, p) {
            return None;
        }
        if overlay {
            let mut st = MaybeUninit::<libc::stat>::uninit();
            let r = libc::syscall(
                libc::SYS_newfstatat,
                libc::AT_FDCWD,
                self.ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            );
            if r != 0 {
                return None;
            }
        }
        Some(p)
    }
}

/// A simulated device node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SimDev {
    Kfd,
    Render(u32),
    Card(u32),
    Udmabuf,
}

impl SimDev {
    fn rdev(self) -> libc::dev_t {
        match self {
            SimDev::Kfd => libc::makedev(KFD_MAJOR, 0),
            SimDev::Render(m) | SimDev::Card(m) => libc::makedev(DRM_MAJOR, m),
            SimDev::Udmabuf => libc::makedev(MISC_MAJOR, UDMABUF_MINOR),
        }
    }

    fn major_minor(self) -> (u32, u32) {
        match self {
            SimDev::Kfd => (KFD_MAJOR, 0),
            SimDev::Render(m) | SimDev::Card(m) => (DRM_MAJOR, m),
            SimDev::Udmabuf => (MISC_MAJOR, UDMABUF_MINOR),
        }
    }

    /// Cache code (never 0 or 1).
    fn code(self) -> u64 {
        match self {
            SimDev::Kfd => 2,
            SimDev::Udmabuf => 3,
            SimDev::Render(m) => 0x1000 | m as u64,
            SimDev::Card(m) => 0x2000 | m as u64,
        }
    }

    fn from_code(c: u64) -> Option<SimDev> {
        match c {
            2 => Some(SimDev::Kfd),
            3 => Some(SimDev::Udmabuf),
            c if c & 0xf000 == 0x1000 => Some(SimDev::Render((c & 0xfff) as u32)),
            c if c & 0xf000 == 0x2000 => Some(SimDev::Card((c & 0xfff) as u32)),
            _ => None,
        }
    }
}

fn parse_minor(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = s.iter().fold(0u32, |v, d| v * 10 + (d - b'0') as u32);
    (v <= 255).then_some(v)
}

/// The device a name below /dev/dri denotes ("renderD128", "card0").
fn dri_device(name: &[u8]) -> Option<SimDev> {
    if let Some(m) = name.strip_prefix(b"renderD") {
        return parse_minor(m).map(SimDev::Render);
    }
    parse_minor(name.strip_prefix(b"card")?).map(SimDev::Card)
}

/// The device an absolute virtual path denotes.
fn device_of(vpath: &[u8]) -> Option<SimDev> {
    if vpath == b"/dev/kfd" {
        return Some(SimDev::Kfd);
    }
    if vpath == b"/dev/udmabuf" {
        return Some(SimDev::Udmabuf);
    }
    dri_device(vpath.strip_prefix(b"/dev/dri/")?)
}

/// The device a redirected path denotes: `device_of`, or for a /dev/dri/by-path/ symlink (unless
/// `nofollow`), the node its target names. `real` is the redirected (NUL-terminated) path.
unsafe fn device_of_redirected(vpath: &[u8], real: *const c_char, nofollow: bool) -> Option<SimDev> {
    if let Some(d) = device_of(vpath) {
        return Some(d);
    }
    if nofollow || !vpath.starts_with(b"/dev/dri/by-path/") {
        return None;
    }
    let mut buf = [0u8; 256];
    let n = libc::syscall(libc::SYS_readlinkat, libc::AT_FDCWD, real, buf.as_mut_ptr(), buf.len());
    if n <= 0 {
        return None;
    }
    let target = &buf[..n as usize];
    dri_device(target.strip_prefix(b"../")?)
}

/// Writes the decimal digits of `n` to `out`; returns how many.
fn fmt_u32(n: u32, out: &mut [u8]) -> usize {
    fmt_u64(n.into(), out)
}

/// Writes the decimal digits of `n` to `out`; returns how many.
fn fmt_u64(mut n: u64, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 20];
    let mut k = 0;
    loop {
        digits[k] = b'0' + (n % 10) as u8;
        k += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..k {
        out[i] = digits[k - 1 - i];
    }
    k
}

/// Writes "/proc/self/fd/<fd>\0" into `buf`.
fn proc_fd_path(fd: c_int, buf: &mut [u8; 32]) {
    let prefix = b"/proc/self/fd/";
    buf[..prefix.len()].copy_from_slice(prefix);
    let k = fmt_u32(fd.max(0) as u32, &mut buf[prefix.len()..]);
    buf[prefix.len() + k] = 0;
}

/// readlink of /proc/self/fd/<fd> into `out`; the link text.
unsafe fn fd_link(fd: c_int, out: &mut [u8; PATH_MAX]) -> Option<&[u8]> {
    let mut p = [0u8; 32];
    proc_fd_path(fd, &mut p);
    let n = libc::syscall(libc::SYS_readlinkat, libc::AT_FDCWD, p.as_ptr(), out.as_mut_ptr(), out.len());
    (n > 0).then(|| &out[..n as usize])
}

/// For a relative `name` looked up from directory fd `dirfd`: the device it denotes if `dirfd`
/// is the simulated /dev or /dev/dri.
unsafe fn device_at(dirfd: c_int, name: *const c_char) -> Option<SimDev> {
    if dirfd < 0 || name.is_null() || *name == 0 || *name == b'/' as c_char {
        return None;
    }
    let name = CStr::from_ptr(name).to_bytes();
    let in_dev = name == b"kfd" || name == b"udmabuf" || name.starts_with(b"dri/");
    let dev = if in_dev { None } else { dri_device(name) };
    if !in_dev && dev.is_none() {
        return None;
    }
    let root = root()?;
    let mut buf = [0u8; PATH_MAX];
    let dir = fd_link(dirfd, &mut buf)?;
    let rel = dir.strip_prefix(root)?;
    match rel {
        b"/dev" if name == b"kfd" => Some(SimDev::Kfd),
        b"/dev" if name == b"udmabuf" => Some(SimDev::Udmabuf),
        b"/dev" => dri_device(name.strip_prefix(b"dri/")?),
        b"/dev/dri" => dev,
        _ => None,
    }
}

/// `st_dev` of memfds (0 until this process opened a simulated device).
static SHM_DEV: AtomicU64 = AtomicU64::new(0);
/// Inode -> device cache: `ino << 16 | code` (code 1 = not a device).
static FD_CACHE: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

fn cache_lookup(ino: u64) -> Option<u64> {
    if ino >= 1 << 48 {
        return None;
    }
    let v = FD_CACHE[(ino % 64) as usize].load(Ordering::Acquire);
    (v != 0 && v >> 16 == ino).then_some(v & 0xffff)
}

/// Remembers what inode `ino` is. A "not a device" entry never evicts a device entry, so device
/// fds (the ioctl hot path) stay cached however many BO memfds come and go.
fn cache_store(ino: u64, code: u64) {
    if ino >= 1 << 48 {
        return;
    }
    let slot = &FD_CACHE[(ino % 64) as usize];
    let old = slot.load(Ordering::Acquire);
    if code == 1 && old != 0 && SimDev::from_code(old & 0xffff).is_some() {
        return;
    }
    slot.store((ino << 16) | code, Ordering::Release);
}

/// The simulated device behind `fd`, given the identity fstat/statx reported for it: a memfd
/// with the device mode (`model::DEVICE_FILE_MODE`), then which device by the inode cache (its
/// name in /proc/self/fd on a miss).
unsafe fn fd_device_ident(fd: c_int, dev: u64, ino: u64, mode: u32) -> Option<SimDev> {
    let shm = SHM_DEV.load(Ordering::Relaxed);
    if shm == 0 || dev != shm || !model::is_device_mode(mode) {
        return None;
    }
    if let Some(code) = cache_lookup(ino) {
        return SimDev::from_code(code);
    }
    let mut buf = [0u8; PATH_MAX];
    let found = fd_link(fd, &mut buf).and_then(|l| {
        let name = l.strip_prefix(b"/memfd:kfdsim-")?;
        let name = name.strip_suffix(b" (deleted)").unwrap_or(name);
        if name == b"kfd" {
            Some(SimDev::Kfd)
        } else if name == b"udmabuf" {
            Some(SimDev::Udmabuf)
        } else {
            dri_device(name)
        }
    });
    cache_store(ino, found.map_or(1, SimDev::code));
    found
}

/// The simulated device behind `fd`, if any, and the file's identity (the model's key). One
/// fstat once a device has been opened.
unsafe fn fd_device(fd: c_int) -> Option<(SimDev, model::FileKey)> {
    if fd < 0 || SHM_DEV.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let mut st = MaybeUninit::<libc::stat>::uninit();
    if libc::syscall(libc::SYS_fstat, fd, st.as_mut_ptr()) != 0 {
        return None;
    }
    let st = st.assume_init();
    let dev = fd_device_ident(fd, st.st_dev, st.st_ino, st.st_mode)?;
    Some((dev, (st.st_dev, st.st_ino)))
}

fn fake_stat(st: &mut libc::stat, dev: SimDev) {
    st.st_mode = libc::S_IFCHR | 0o666;
    st.st_rdev = dev.rdev();
    st.st_size = 0;
    st.st_blocks = 0;
    st.st_blksize = 4096;
}

fn fake_statx(stx: &mut libc::statx, dev: SimDev) {
    let (maj, min) = dev.major_minor();
    stx.stx_mode = (libc::S_IFCHR | 0o666) as u16;
    stx.stx_rdev_major = maj;
    stx.stx_rdev_minor = min;
    stx.stx_size = 0;
    stx.stx_blocks = 0;
    stx.stx_blksize = 4096;
}

/// A new memfd named `name` (NUL-terminated) to stand for a file opened with `flags`: close-on-exec
/// if they have O_CLOEXEC. -1 with errno set on failure.
unsafe fn memfd_for_open(name: *const c_char, flags: c_int) -> c_int {
    let mfd_flags = if flags & libc::O_CLOEXEC != 0 { libc::MFD_CLOEXEC } else { 0 };
    libc::syscall(libc::SYS_memfd_create, name, mfd_flags) as c_int
}

/// Opens a simulated device node: checks the placeholder exists in the tree (at `real`, relative
/// to `dirfd`), then returns a new memfd named after it.
unsafe fn open_device(dev: SimDev, dirfd: c_int, real: *const c_char, flags: c_int) -> c_int {
    if libc::syscall(libc::SYS_faccessat, dirfd, real, libc::F_OK) != 0 {
        return -1;
    }
    if flags & libc::O_DIRECTORY != 0 {
        set_errno(libc::ENOTDIR);
        return -1;
    }
    // memfd name: "kfdsim-kfd", "kfdsim-renderD<N>", "kfdsim-card<N>" (NUL-terminated).
    let mut name = [0u8; 32];
    let (kind, minor): (&[u8], Option<u32>) = match dev {
        SimDev::Kfd => (b"kfdsim-kfd", None),
        SimDev::Udmabuf => (b"kfdsim-udmabuf", None),
        SimDev::Render(m) => (b"kfdsim-renderD", Some(m)),
        SimDev::Card(m) => (b"kfdsim-card", Some(m)),
    };
    name[..kind.len()].copy_from_slice(kind);
    if let Some(m) = minor {
        fmt_u32(m, &mut name[kind.len()..]);
    }
    let fd = memfd_for_open(name.as_ptr().cast(), flags);
    if fd < 0 {
        return -1;
    }
    if flags & libc::O_NONBLOCK != 0 {
        libc::syscall(libc::SYS_fcntl, fd, libc::F_SETFL, libc::O_NONBLOCK);
    }
    let saved = errno();
    let marked = match dev {
        SimDev::Kfd => model::register_open(fd, DevKind::Kfd),
        SimDev::Render(minor) => model::register_open(fd, DevKind::Render { minor }),
        SimDev::Udmabuf => model::register_open(fd, DevKind::Udmabuf),
        SimDev::Card(_) => model::mark_device_file(fd),
    };
    match marked {
        Ok(st) => {
            SHM_DEV.store(st.st_dev, Ordering::Relaxed);
            cache_store(st.st_ino, dev.code());
        }
        Err(e) => {
            libc::syscall(libc::SYS_close, fd);
            set_errno(e as c_int);
            return -1;
        }
    }
    match dev {
        SimDev::Kfd => crate::kfdsim_trace!("open /dev/kfd flags={flags:#o} = {fd}"),
        SimDev::Render(m) => crate::kfdsim_trace!("open /dev/dri/renderD{m} flags={flags:#o} = {fd}"),
        SimDev::Card(m) => crate::kfdsim_trace!("open /dev/dri/card{m} flags={flags:#o} = {fd}"),
        SimDev::Udmabuf => crate::kfdsim_trace!("open /dev/udmabuf flags={flags:#o} = {fd}"),
    }
    set_errno(saved);
    fd
}

/// Opens a dynamic attribute ([`crate::sysfs::DYNAMIC_ATTRIBUTES`]) for reading: `vpath` is the
/// caller's path, `real` its place in the tree. Returns None when `vpath` names no such attribute
/// (or is opened for writing), else the result of the open: a fresh memfd (O_CLOEXEC honoured)
/// holding the attribute's current text, read from offset 0, or -1 with errno set (the tree's
/// placeholder is missing: ENOENT, as for any path).
unsafe fn open_dynamic(vpath: &[u8], real: *const c_char, flags: c_int) -> Option<c_int> {
    if flags & libc::O_ACCMODE != libc::O_RDONLY || flags & libc::O_DIRECTORY != 0 {
        return None;
    }
    let name = &vpath[vpath.iter().rposition(|&c| c == b'/')? + 1..];
    if !crate::sysfs::DYNAMIC_ATTRIBUTES.iter().any(|a| a.as_bytes() == name) {
        return None;
    }
    // The placeholder's real location names the PCI device: <root>/sys/devices/.../<bdf>/<name>.
    let fd = libc::syscall(libc::SYS_openat, libc::AT_FDCWD, real, libc::O_RDONLY | libc::O_CLOEXEC) as c_int;
    if fd < 0 {
        return Some(-1);
    }
    let mut link = [0u8; PATH_MAX];
    let bdf = fd_link(fd, &mut link).and_then(|l| {
        let dir = &l[..l.iter().rposition(|&c| c == b'/')?];
        Some(&dir[dir.iter().rposition(|&c| c == b'/')? + 1..])
    });
    libc::syscall(libc::SYS_close, fd);
    let gpu = model::gpus::all().iter().find(|g| Some(g.pci_bdf.as_bytes()) == bdf)?;
    let mut text = [0u8; 24];
    let n = fmt_u64(model::vram::used(gpu.gpu_id), &mut text);
    text[n] = b'\n';
    let mfd = memfd_for_open(c"kfdsim-sysfs".as_ptr(), flags);
    if mfd < 0 {
        return Some(-1);
    }
    if libc::syscall(libc::SYS_pwrite64, mfd, text.as_ptr(), n + 1, 0) != (n + 1) as i64 {
        let e = errno();
        libc::syscall(libc::SYS_close, mfd);
        set_errno(e);
        return Some(-1);
    }
    Some(mfd)
}

unsafe fn open_impl(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    let mut rb = RBuf::new();
    if let Some(v) = rb.redirect(path) {
        let nofollow = flags & libc::O_NOFOLLOW != 0;
        if let Some(dev) = device_of_redirected(v, rb.ptr(), nofollow) {
            return open_device(dev, libc::AT_FDCWD, rb.ptr(), flags);
        }
        if let Some(fd) = open_dynamic(v, rb.ptr(), flags) {
            return fd;
        }
        return libc::syscall(libc::SYS_openat, libc::AT_FDCWD, rb.ptr(), flags, mode) as c_int;
    }
    if dirfd != libc::AT_FDCWD {
        if let Some(dev) = device_at(dirfd, path) {
            return open_device(dev, dirfd, path, flags);
        }
    }
    libc::syscall(libc::SYS_openat, dirfd, path, flags, mode) as c_int
}

unsafe fn stat_impl(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int {
    if !path.is_null() && *path == 0 && flags & libc::AT_EMPTY_PATH != 0 {
        return fstat_impl(dirfd, buf);
    }
    let mut rb = RBuf::new();
    let nofollow = flags & libc::AT_SYMLINK_NOFOLLOW != 0;
    let (p, dev) = match rb.redirect(path) {
        Some(v) => (rb.ptr(), device_of_redirected(v, rb.ptr(), nofollow)),
        None => (path, if dirfd != libc::AT_FDCWD { device_at(dirfd, path) } else { None }),
    };
    let r = libc::syscall(libc::SYS_newfstatat, dirfd, p, buf, flags) as c_int;
    if r == 0 {
        if let Some(d) = dev {
            fake_stat(&mut *buf, d);
        }
    }
    r
}

unsafe fn fstat_impl(fd: c_int, buf: *mut libc::stat) -> c_int {
    let r = libc::syscall(libc::SYS_fstat, fd, buf) as c_int;
    if r == 0 && !buf.is_null() {
        let st = &mut *buf;
        if let Some(d) = fd_device_ident(fd, st.st_dev, st.st_ino, st.st_mode) {
            fake_stat(st, d);
        }
    }
    r
}

unsafe fn faccessat_impl(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int {
    let mut rb = RBuf::new();
    let p = if rb.redirect(path).is_some() { rb.ptr() } else { path };
    if flags == 0 {
        libc::syscall(libc::SYS_faccessat, dirfd, p, mode) as c_int
    } else {
        libc::syscall(libc::SYS_faccessat2, dirfd, p, mode, flags) as c_int
    }
}

unsafe fn readlinkat_impl(dirfd: c_int, path: *const c_char, buf: *mut c_char, len: size_t) -> ssize_t {
    let mut rb = RBuf::new();
    let p = if rb.redirect(path).is_some() { rb.ptr() } else { path };
    libc::syscall(libc::SYS_readlinkat, dirfd, p, buf, len) as ssize_t
}

/// Cached `dlsym(RTLD_NEXT, name)`.
macro_rules! next {
    ($name:literal as $ty:ty) => {{
        static P: AtomicUsize = AtomicUsize::new(0);
        let mut p = P.load(Ordering::Relaxed);
        if p == 0 {
            p = libc::dlsym(libc::RTLD_NEXT, concat!($name, "\0").as_ptr().cast()) as usize;
            P.store(p, Ordering::Relaxed);
        }
        // SAFETY: the symbol named $name has the C signature $ty.
        (p != 0).then(|| std::mem::transmute::<usize, $ty>(p))
    }};
}

/// Removes the root prefix from a path realpath() produced inside the tree.
unsafe fn strip_root(resolved: *mut c_char) {
    let Some(root) = root() else { return };
    if resolved.is_null() {
        return;
    }
    let s = CStr::from_ptr(resolved).to_bytes();
    if !s.starts_with(root) || !(s.len() == root.len() || s[root.len()] == b'/') {
        return;
    }
    let rest = s.len() - root.len();
    if rest == 0 {
        *resolved = b'/' as c_char;
        *resolved.add(1) = 0;
    } else {
        // SAFETY: moves rest + 1 bytes (with the NUL) to the start of the same buffer.
        std::ptr::copy(resolved.add(root.len()), resolved, rest + 1);
    }
}

// ---------------------------------------------------------------------------------------------
// open

#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    open_impl(libc::AT_FDCWD, path, flags, mode)
}

#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    open_impl(libc::AT_FDCWD, path, flags, mode)
}

#[no_mangle]
pub unsafe extern "C" fn openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    open_impl(dirfd, path, flags, mode)
}

#[no_mangle]
pub unsafe extern "C" fn openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    open_impl(dirfd, path, flags, mode)
}

#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    open_impl(libc::AT_FDCWD, path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    open_impl(libc::AT_FDCWD, path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    open_impl(dirfd, path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    open_impl(dirfd, path, flags, 0)
}

// ---------------------------------------------------------------------------------------------
// stdio, dirent, realpath (real functions via dlsym)

type FopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut FILE;
type OpendirFn = unsafe extern "C" fn(*const c_char) -> *mut DIR;
type ScandirFn = unsafe extern "C" fn(*const c_char, *mut c_void, *const c_void, *const c_void) -> c_int;
type RealpathFn = unsafe extern "C" fn(*const c_char, *mut c_char) -> *mut c_char;
type RealpathChkFn = unsafe extern "C" fn(*const c_char, *mut c_char, size_t) -> *mut c_char;
type CanonFn = unsafe extern "C" fn(*const c_char) -> *mut c_char;

unsafe fn fopen_with(real: Option<FopenFn>, path: *const c_char, mode: *const c_char) -> *mut FILE {
    let Some(real) = real else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    let mut rb = RBuf::new();
    let Some(v) = rb.redirect(path) else { return real(path, mode) };
    // A read-only fopen ("r", "re", "rb", ...) of a dynamic attribute gets its generated text.
    if !mode.is_null() && *mode == b'r' as c_char && CStr::from_ptr(mode).to_bytes().iter().all(|&c| c != b'+') {
        let cloexec = CStr::from_ptr(mode).to_bytes().contains(&b'e');
        let flags = libc::O_RDONLY | if cloexec { libc::O_CLOEXEC } else { 0 };
        if let Some(fd) = open_dynamic(v, rb.ptr(), flags) {
            if fd < 0 {
                return std::ptr::null_mut();
            }
            let f = libc::fdopen(fd, c"r".as_ptr());
            if f.is_null() {
                let e = errno();
                libc::syscall(libc::SYS_close, fd);
                set_errno(e);
            }
            return f;
        }
    }
    real(rb.ptr(), mode)
}

#[no_mangle]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut FILE {
    fopen_with(next!("fopen" as FopenFn), path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut FILE {
    fopen_with(next!("fopen64" as FopenFn), path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut DIR {
    let Some(real) = next!("opendir" as OpendirFn) else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    let mut rb = RBuf::new();
    let p = if rb.redirect(path).is_some() { rb.ptr() } else { path };
    real(p)
}

unsafe fn scandir_with(
    real: Option<ScandirFn>,
    path: *const c_char,
    namelist: *mut c_void,
    filter: *const c_void,
    compar: *const c_void,
) -> c_int {
    let Some(real) = real else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    let mut rb = RBuf::new();
    let p = if rb.redirect(path).is_some() { rb.ptr() } else { path };
    real(p, namelist, filter, compar)
}

#[no_mangle]
pub unsafe extern "C" fn scandir(
    path: *const c_char,
    namelist: *mut c_void,
    filter: *const c_void,
    compar: *const c_void,
) -> c_int {
    scandir_with(next!("scandir" as ScandirFn), path, namelist, filter, compar)
}

#[no_mangle]
pub unsafe extern "C" fn scandir64(
    path: *const c_char,
    namelist: *mut c_void,
    filter: *const c_void,
    compar: *const c_void,
) -> c_int {
    scandir_with(next!("scandir64" as ScandirFn), path, namelist, filter, compar)
}

#[no_mangle]
pub unsafe extern "C" fn realpath(path: *const c_char, resolved: *mut c_char) -> *mut c_char {
    let Some(real) = next!("realpath" as RealpathFn) else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    let mut rb = RBuf::new();
    if rb.redirect(path).is_some() {
        let r = real(rb.ptr(), resolved);
        strip_root(r);
        r
    } else {
        real(path, resolved)
    }
}

#[no_mangle]
pub unsafe extern "C" fn __realpath_chk(path: *const c_char, resolved: *mut c_char, len: size_t) -> *mut c_char {
    let Some(real) = next!("__realpath_chk" as RealpathChkFn) else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    let mut rb = RBuf::new();
    if rb.redirect(path).is_some() {
        let r = real(rb.ptr(), resolved, len);
        strip_root(r);
        r
    } else {
        real(path, resolved, len)
    }
}

#[no_mangle]
pub unsafe extern "C" fn canonicalize_file_name(path: *const c_char) -> *mut c_char {
    let Some(real) = next!("canonicalize_file_name" as CanonFn) else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    let mut rb = RBuf::new();
    if rb.redirect(path).is_some() {
        let r = real(rb.ptr());
        strip_root(r);
        r
    } else {
        real(path)
    }
}

// ---------------------------------------------------------------------------------------------
// stat family (glibc >= 2.33 exports stat/fstat/lstat/fstatat; older binaries use __xstat*)

#[no_mangle]
pub unsafe extern "C" fn stat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, 0)
}

#[no_mangle]
pub unsafe extern "C" fn stat64(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, 0)
}

#[no_mangle]
pub unsafe extern "C" fn lstat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW)
}

#[no_mangle]
pub unsafe extern "C" fn lstat64(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW)
}

#[no_mangle]
pub unsafe extern "C" fn fstatat(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int {
    stat_impl(dirfd, path, buf, flags)
}

#[no_mangle]
pub unsafe extern "C" fn fstatat64(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int {
    stat_impl(dirfd, path, buf, flags)
}

#[no_mangle]
pub unsafe extern "C" fn fstat(fd: c_int, buf: *mut libc::stat) -> c_int {
    fstat_impl(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn fstat64(fd: c_int, buf: *mut libc::stat) -> c_int {
    fstat_impl(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn __xstat(_ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __xstat64(_ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __lxstat(_ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW)
}

#[no_mangle]
pub unsafe extern "C" fn __lxstat64(_ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_impl(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW)
}

#[no_mangle]
pub unsafe extern "C" fn __fxstat(_ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int {
    fstat_impl(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn __fxstat64(_ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int {
    fstat_impl(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn __fxstatat(
    _ver: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    stat_impl(dirfd, path, buf, flags)
}

#[no_mangle]
pub unsafe extern "C" fn __fxstatat64(
    _ver: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    stat_impl(dirfd, path, buf, flags)
}

#[no_mangle]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    let mut rb = RBuf::new();
    let empty = !path.is_null() && *path == 0 && flags & libc::AT_EMPTY_PATH != 0;
    let nofollow = flags & libc::AT_SYMLINK_NOFOLLOW != 0;
    let (p, dev) = match rb.redirect(path) {
        Some(v) => (rb.ptr(), device_of_redirected(v, rb.ptr(), nofollow)),
        None if empty => (path, None),
        None => (path, if dirfd != libc::AT_FDCWD { device_at(dirfd, path) } else { None }),
    };
    let r = libc::syscall(libc::SYS_statx, dirfd, p, flags, mask, buf) as c_int;
    if r == 0 && !buf.is_null() {
        let stx = &mut *buf;
        let dev = if empty {
            let sdev = libc::makedev(stx.stx_dev_major, stx.stx_dev_minor);
            fd_device_ident(dirfd, sdev, stx.stx_ino, stx.stx_mode as u32)
        } else {
            dev
        };
        if let Some(d) = dev {
            fake_statx(stx, d);
        }
    }
    r
}

// ---------------------------------------------------------------------------------------------
// access, readlink

#[no_mangle]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    faccessat_impl(libc::AT_FDCWD, path, mode, 0)
}

#[no_mangle]
pub unsafe extern "C" fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int {
    faccessat_impl(dirfd, path, mode, flags)
}

#[no_mangle]
pub unsafe extern "C" fn euidaccess(path: *const c_char, mode: c_int) -> c_int {
    faccessat_impl(libc::AT_FDCWD, path, mode, libc::AT_EACCESS)
}

#[no_mangle]
pub unsafe extern "C" fn eaccess(path: *const c_char, mode: c_int) -> c_int {
    faccessat_impl(libc::AT_FDCWD, path, mode, libc::AT_EACCESS)
}

#[no_mangle]
pub unsafe extern "C" fn readlink(path: *const c_char, buf: *mut c_char, len: size_t) -> ssize_t {
    readlinkat_impl(libc::AT_FDCWD, path, buf, len)
}

#[no_mangle]
pub unsafe extern "C" fn readlinkat(dirfd: c_int, path: *const c_char, buf: *mut c_char, len: size_t) -> ssize_t {
    readlinkat_impl(dirfd, path, buf, len)
}

#[no_mangle]
pub unsafe extern "C" fn __readlink_chk(path: *const c_char, buf: *mut c_char, len: size_t, buflen: size_t) -> ssize_t {
    if len > buflen {
        libc::abort();
    }
    readlinkat_impl(libc::AT_FDCWD, path, buf, len)
}

#[no_mangle]
pub unsafe extern "C" fn __readlinkat_chk(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut c_char,
    len: size_t,
    buflen: size_t,
) -> ssize_t {
    if len > buflen {
        libc::abort();
    }
    readlinkat_impl(dirfd, path, buf, len)
}

// ---------------------------------------------------------------------------------------------
// ioctl, mmap

/// `lseek` on a udmabuf fd (a socket in the model, `model::udmabuf`) answers as
/// `dma_buf_llseek`; every other fd goes to the kernel.
#[no_mangle]
pub unsafe extern "C" fn lseek(fd: c_int, off: off_t, whence: c_int) -> off_t {
    if fd >= 0 && SHM_DEV.load(Ordering::Relaxed) != 0 {
        if let Some(r) = model::udmabuf::llseek(fd, off, whence) {
            return match r {
                Ok(v) => v,
                Err(e) => {
                    set_errno(e as c_int);
                    -1
                }
            };
        }
    }
    libc::syscall(libc::SYS_lseek, fd, off, whence) as off_t
}

#[no_mangle]
pub unsafe extern "C" fn lseek64(fd: c_int, off: off_t, whence: c_int) -> off_t {
    lseek(fd, off, whence)
}

#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    match fd_device(fd) {
        None => libc::syscall(libc::SYS_ioctl, fd, request, arg) as c_int,
        Some((SimDev::Card(_), _)) => {
            set_errno(libc::ENOTTY);
            -1
        }
        Some((_, key)) => match model::ioctl_file(key, request, arg) {
            Ok(r) => r,
            Err(e) => {
                set_errno(e as c_int);
                -1
            }
        },
    }
}

unsafe fn mmap_impl(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void {
    if fd >= 0 && flags & libc::MAP_ANONYMOUS == 0 {
        match fd_device(fd) {
            None => {}
            Some((SimDev::Card(_), _)) => {
                set_errno(libc::ENODEV);
                return libc::MAP_FAILED;
            }
            Some((_, key)) => {
                // SAFETY: we are the process's mmap(2); the caller's contract is the model's.
                return match unsafe { model::mmap(key, addr, len, prot, flags, fd, off) } {
                    Ok(p) => p,
                    Err(e) => {
                        set_errno(e as c_int);
                        libc::MAP_FAILED
                    }
                };
            }
        }
    }
    libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, off) as *mut c_void
}

/// `munmap(2)`, then the model's MMU-notifier work: the pages leave the process's SVM ranges.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    let r = libc::syscall(libc::SYS_munmap, addr, len) as c_int;
    if r == 0 {
        model::svm::cpu_unmapped(addr as u64, len as u64);
    }
    r
}

/// `ptrace(2)`: `model::ptrace::ptrace` (a debugger's access to BO mappings). C declares
/// `ptrace(request, ...)`; on x86-64 the four arguments arrive in the same registers either way.
#[no_mangle]
pub unsafe extern "C" fn ptrace(
    request: c_uint,
    pid: libc::pid_t,
    addr: *mut c_void,
    data: *mut c_void,
) -> libc::c_long {
    match std::panic::catch_unwind(|| model::ptrace::ptrace(request, pid, addr, data)) {
        Ok(Ok(v)) => {
            set_errno(0);
            v
        }
        Ok(Err(e)) => {
            set_errno(e as c_int);
            -1
        }
        Err(_) => {
            set_errno(libc::EIO);
            -1
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    mmap_impl(addr, len, prot, flags, fd, off)
}

#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    mmap_impl(addr, len, prot, flags, fd, off)
}

// ---------------------------------------------------------------------------------------------
// extended attributes (ls -l asks for them)

unsafe fn getxattr_impl(
    nr: libc::c_long,
    path: *const c_char,
    name: *const c_char,
    value: *mut c_void,
    size: size_t,
) -> ssize_t {
    let mut rb = RBuf::new();
    let p = if rb.redirect(path).is_some() { rb.ptr() } else { path };
    libc::syscall(nr, p, name, value, size) as ssize_t
}

unsafe fn listxattr_impl(nr: libc::c_long, path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t {
    let mut rb = RBuf::new();
    let p = if rb.redirect(path).is_some() { rb.ptr() } else { path };
    libc::syscall(nr, p, list, size) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn getxattr(
    path: *const c_char,
    name: *const c_char,
    value: *mut c_void,
    size: size_t,
) -> ssize_t {
    getxattr_impl(libc::SYS_getxattr, path, name, value, size)
}

#[no_mangle]
pub unsafe extern "C" fn lgetxattr(
    path: *const c_char,
    name: *const c_char,
    value: *mut c_void,
    size: size_t,
) -> ssize_t {
    getxattr_impl(libc::SYS_lgetxattr, path, name, value, size)
}

#[no_mangle]
pub unsafe extern "C" fn listxattr(path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t {
    listxattr_impl(libc::SYS_listxattr, path, list, size)
}

#[no_mangle]
pub unsafe extern "C" fn llistxattr(path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t {
    listxattr_impl(libc::SYS_llistxattr, path, list, size)
}
