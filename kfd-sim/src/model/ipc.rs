//! ROCm's out-of-tree KFD IPC handles: `AMDKFD_IOC_IPC_EXPORT_HANDLE` and
//! `AMDKFD_IOC_IPC_IMPORT_HANDLE` (nr 0x81 and 0x80 of the DKMS amdgpu that ROCm 5.x ships,
//! ROCK-Kernel-Driver `kfd_ipc.c`; not in upstream Linux). libhsakmt's `hsaKmtShareMemory` and
//! `hsaKmtRegisterSharedHandle` use them, and through them ROCr's `hsa_amd_ipc_memory_*` (stock
//! HIP 5.2's `hipIpc*`) and kfdtest's `KFDIPCTest.BasicTest`.
//!
//! The kernel: export (`kfd_ipc_export_as_handle`) finds the BO in the process device of
//! `gpu_id` (unknown GPU or handle → EINVAL), exports it as a dma-buf once and files a
//! `kfd_ipc_obj` under 128 random bits (`get_random_bytes`) with the caller's `flags`; exporting
//! the same BO again gives the same handle. Import (`kfd_ipc_import_handle`) finds the object by
//! all 128 bits (none → EINVAL) and imports its dma-buf on `gpu_id` at `va_addr` as
//! IMPORT_DMABUF does, returning the KFD handle, the render-node mmap offset and the stored
//! flags. The object is referenced by the exporter's BO and by each importer's BO, and leaves the
//! table when the last of them is freed.
//!
//! The model: the table is the session directory's `ipc/`, one directory per share handle
//! (its 32 hex digits) holding one entry per process BO that references it (the exporter's and
//! each importer's; named `<pid>-<n>`, `n` counting this process's entries): where that process
//! keeps the BO's memfd
//! ([`MemfdMap::proc_path`](super::memfd::MemfdMap::proc_path)), its inode and the flags. An
//! import opens the first live entry's file (a new open file of the BO's inode, as
//! `dma_buf_get` takes a reference) and checks the inode; entries of dead processes, or whose
//! file is no longer that inode, are skipped and removed. A BO's entry goes when the BO is
//! freed ([`IpcRef`]'s drop, in the process that made it). As in the kernel, a handle outlives
//! its exporter while an importer's BO holds it.

use super::bo::{Bo, FileKey};
use super::sys;
use nix::errno::Errno;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Name of the table's directory in the session directory.
pub const IPC_DIR: &str = "ipc";

/// One BO's reference on a share handle (the kernel's `kgd_mem->ipc_obj`): its entry in the
/// table, removed on drop by the process that filed it (a forked child's copy removes nothing).
#[derive(Debug)]
pub struct IpcRef {
    /// The 128-bit share handle.
    pub share_handle: [u32; 4],
    /// The exporter's flags, returned by every import.
    pub flags: u32,
    entry: PathBuf,
    pid: u32,
}

impl Drop for IpcRef {
    fn drop(&mut self) {
        if sys::getpid() != self.pid {
            return;
        }
        let _ = std::fs::remove_file(&self.entry);
        // The last entry takes the handle's directory with it (ENOTEMPTY otherwise).
        if let Some(dir) = self.entry.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The table's directory for `share_handle`: ENOMEM without a session (the kernel's table
/// always exists; a process without a session has nobody to share with).
fn handle_dir(share_handle: &[u32; 4]) -> Result<PathBuf, Errno> {
    let session = std::env::var_os(crate::session::ENV_SESSION).ok_or(Errno::ENOMEM)?;
    let hex: String = share_handle.iter().map(|w| format!("{w:08x}")).collect();
    Ok(PathBuf::from(session).join(IPC_DIR).join(hex))
}

/// 128 random bits (`get_random_bytes`).
fn random_handle() -> Result<[u32; 4], Errno> {
    let mut h = [0u32; 4];
    let b = sys::as_bytes_mut(&mut h);
    // SAFETY: getrandom writes at most `b.len()` bytes into `b`, which we own.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        return Err(Errno::ENOMEM);
    }
    Ok(h)
}

/// Files `bo` of this process under `share_handle` with `flags`. Errors: ENOMEM (no session,
/// the entry cannot be written), EPERM (a USERPTR BO: `amdgpu_gem_prime_export`).
pub fn file(share_handle: [u32; 4], flags: u32, bo: &Bo) -> Result<IpcRef, Errno> {
    let m = bo.memfd().ok_or(Errno::EPERM)?;
    let pid = sys::getpid();
    let dir = handle_dir(&share_handle)?;
    let (dev, ino) = m.key();
    static ENTRIES: AtomicU64 = AtomicU64::new(0);
    let entry = dir.join(format!("{pid}-{}", ENTRIES.fetch_add(1, Ordering::Relaxed)));
    let text = format!("{}\n{dev} {ino} {flags}\n", m.proc_path(pid));
    std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&entry, text)).map_err(|_| Errno::ENOMEM)?;
    Ok(IpcRef { share_handle, flags, entry, pid })
}

/// `kfd_ipc_export_as_handle` for `bo` with no handle yet: a new random share handle.
pub fn export(flags: u32, bo: &Bo) -> Result<IpcRef, Errno> {
    file(random_handle()?, flags, bo)
}

/// The BO of `share_handle`, opened: a new open file of its memfd and the exporter's flags.
/// No live entry → EINVAL (`kfd_ipc_import_handle`).
pub fn open(share_handle: &[u32; 4]) -> Result<(OwnedFd, u32), Errno> {
    let dir = handle_dir(share_handle).map_err(|_| Errno::EINVAL)?;
    let entries = std::fs::read_dir(&dir).map_err(|_| Errno::EINVAL)?;
    for e in entries.flatten() {
        let Some((path, key, flags)) = parse_entry(&e.path()) else { continue };
        let pid = e.file_name().to_str().and_then(|n| n.split_once('-')).and_then(|(p, _)| p.parse::<i32>().ok());
        let mismatch = match sys::open(&path, libc::O_RDWR | libc::O_CLOEXEC) {
            Ok(f) if sys::fstat(f.as_raw_fd()).is_ok_and(|st| (st.st_dev, st.st_ino) == key) => return Ok((f, flags)),
            Ok(_) => true,
            Err(_) => false,
        };
        // A stale entry: its process is gone, or that fd or mapping is another file now.
        let dead = pid.is_none_or(|p| !sys::pid_alive(p as u32));
        if dead || mismatch {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let _ = std::fs::remove_dir(&dir);
    Err(Errno::EINVAL)
}

/// An entry's file path, inode and flags.
fn parse_entry(entry: &std::path::Path) -> Option<(String, FileKey, u32)> {
    let text = std::fs::read_to_string(entry).ok()?;
    let mut lines = text.lines();
    let path = lines.next()?.to_owned();
    let mut f = lines.next()?.split_whitespace().map(|v| v.parse::<u64>().ok());
    let (dev, ino, flags) = (f.next()??, f.next()??, f.next()??);
    Some((path, (dev, ino), flags as u32))
}
