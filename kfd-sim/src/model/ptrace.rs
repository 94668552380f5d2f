//! A debugger's access to another process's BO mappings: amdgpu's `vm_ops->access`.
//!
//! `ptrace(PTRACE_PEEKDATA/POKEDATA)` reaches the tracee's memory through `access_remote_vm`.
//! Where the pages cannot be had with `get_user_pages` (a BO's VMA is `VM_IO | VM_PFNMAP`), the
//! kernel calls the VMA's `access` operation: `ttm_bo_vm_access`, which reads and writes the BO
//! itself (`amdgpu_ttm_access_memory` for VRAM, through the MM_INDEX/MM_DATA window or SDMA),
//! whatever the VMA's protection. So a debugger reads and writes VRAM that libhsakmt maps
//! `PROT_NONE` for it (`fmm_allocate_device`: a BO without HostAccess is mapped
//! `PROT_NONE, MAP_PRIVATE|MAP_FIXED` from the render node), and the GPU sees the bytes written.
//!
//! In kfd-sim a BO mapping is a `MAP_SHARED` mapping of the BO's memfd; the real kernel's forced
//! access reads it whatever its protection, but refuses to write a shared mapping without write
//! permission (`check_vma_flags`: only a COW mapping may be written by force). [`bo_vm_access`]
//! does the write (and the read) on the memfd itself, found from `/proc/<pid>/maps` (a mapping of
//! a `/memfd:kfdsim-bo ...` file) and opened through `/proc/<pid>/map_files` or, where that open
//! is not permitted (see `memfd.rs`), the tracee's own fd of the same inode. The interposed
//! `ptrace` calls it only after the real call failed with EIO or EFAULT, so the kernel has
//! already checked that the caller traces a stopped `pid` (ESRCH otherwise).
//!
//! Not modelled: `/proc/<pid>/mem` (`mem_rw` also ends in `vm_ops->access`), and a word that
//! straddles a BO mapping and another mapping.

use super::sys;
use libc::{c_uint, c_void};
use nix::errno::Errno;
use std::os::fd::OwnedFd;

/// A mapping of a BO memfd in another process: `[start, end)`, file offset of `start`, inode.
struct BoMapping {
    start: u64,
    end: u64,
    offset: u64,
    inode: u64,
    path: String,
}

/// The mapping of `/proc/<pid>/maps` holding `[addr, addr+len)`, if it maps a BO memfd.
fn bo_mapping(pid: i32, addr: u64, len: u64) -> Option<BoMapping> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let end = addr.checked_add(len)?;
    maps.lines().find_map(|line| {
        // start-end perms offset dev inode path
        let mut f = line.splitn(6, ' ');
        let (lo, hi) = f.next()?.split_once('-')?;
        let (lo, hi) = (u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?);
        if !(lo <= addr && end <= hi) {
            return None;
        }
        let _perms = f.next()?;
        let offset = u64::from_str_radix(f.next()?, 16).ok()?;
        let _dev = f.next()?;
        let inode = f.next()?.parse().ok()?;
        let path = f.next()?.trim_start().to_owned();
        path.starts_with("/memfd:kfdsim-bo ").then_some(BoMapping { start: lo, end: hi, offset, inode, path })
    })
}

/// The BO's file, opened read-write: `/proc/<pid>/map_files/<start>-<end>`, else the tracee's
/// fd of the same name and inode.
fn open_bo(pid: i32, m: &BoMapping) -> Option<OwnedFd> {
    let flags = libc::O_RDWR | libc::O_CLOEXEC;
    if let Ok(f) = sys::open(&format!("/proc/{pid}/map_files/{:x}-{:x}", m.start, m.end), flags) {
        return Some(f);
    }
    let dir = format!("/proc/{pid}/fd");
    std::fs::read_dir(&dir).ok()?.flatten().find_map(|e| {
        let path = format!("{dir}/{}", e.file_name().to_str()?);
        if sys::readlink(&path)? != m.path {
            return None;
        }
        let f = sys::open(&path, flags).ok()?;
        (sys::fstat(std::os::fd::AsRawFd::as_raw_fd(&f)).ok()?.st_ino == m.inode).then_some(f)
    })
}

/// `ttm_bo_vm_access` for one ptrace word: reads (`write` None) or writes the 8 bytes at `addr`
/// of process `pid` where they lie in a BO mapping, and returns the word read (or written).
/// None where `addr` is not in a BO mapping (the caller's error stands); EIO where the BO cannot
/// be opened or the access is short (`ptrace_access_vm` → EIO).
pub fn bo_vm_access(pid: i32, addr: u64, write: Option<u64>) -> Option<Result<u64, Errno>> {
    let m = bo_mapping(pid, addr, 8)?;
    let Some(f) = open_bo(pid, &m) else { return Some(Err(Errno::EIO)) };
    let off = (m.offset + (addr - m.start)) as i64;
    let r = match write {
        Some(w) => nix::sys::uio::pwrite(&f, &w.to_ne_bytes(), off).map(|n| (n, w)),
        None => {
            let mut b = [0u8; 8];
            nix::sys::uio::pread(&f, &mut b, off).map(|n| (n, u64::from_ne_bytes(b)))
        }
    };
    Some(match r {
        Ok((8, v)) => Ok(v),
        _ => Err(Errno::EIO),
    })
}

/// glibc's `ptrace(request, pid, addr, data)` with the word of a PEEK request as the value;
/// errors as `errno`. Where the real PEEKTEXT/PEEKDATA/POKETEXT/POKEDATA fails with EIO or
/// EFAULT on a word of a BO mapping, [`bo_vm_access`] does it on the BO.
///
/// # Safety
/// As `ptrace(2)`: for requests that write through `data` (GETREGS, ...), `data` must point to
/// memory of the size the request writes.
pub unsafe fn ptrace(request: c_uint, pid: i32, addr: *mut c_void, data: *mut c_void) -> Result<libc::c_long, Errno> {
    let peek = matches!(request, libc::PTRACE_PEEKTEXT | libc::PTRACE_PEEKDATA);
    let poke = matches!(request, libc::PTRACE_POKETEXT | libc::PTRACE_POKEDATA);
    let mut word: libc::c_long = 0;
    let arg = if peek { &mut word as *mut libc::c_long as *mut c_void } else { data };
    // SAFETY: our caller upholds ptrace(2)'s contract for `data`; a PEEK writes one word to `arg`.
    let r = unsafe { libc::syscall(libc::SYS_ptrace, request as libc::c_long, pid as libc::c_long, addr, arg) };
    if r >= 0 {
        return Ok(if peek { word } else { r });
    }
    let e = Errno::last();
    if !(peek || poke) || !matches!(e, Errno::EIO | Errno::EFAULT) {
        return Err(e);
    }
    match bo_vm_access(pid, addr as u64, poke.then_some(data as u64)) {
        Some(Ok(v)) => Ok(if peek { v as libc::c_long } else { 0 }),
        Some(Err(e)) => Err(e),
        None => Err(e),
    }
}
