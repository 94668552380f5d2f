//! Buffer objects: the model's `amdgpu_bo`.
//!
//! Every VRAM, GTT, doorbell and MMIO BO is a sparse memfd (so a 64 GiB VRAM costs only the pages
//! touched) that the model keeps mapped `MAP_SHARED` for the SDMA engine, and not open (see
//! [`super::memfd`]: no fd per BO). The user maps the same pages through the render node
//! (`mmap(render_fd, mmap_offset)`) and shares them as a dma-buf (a new fd of the memfd, reopened
//! from the model's mapping). The memfd name records the allocating `gpu_id`, the KFD alloc flags and
//! the size, so that a process that receives the fd (SCM_RIGHTS, fork) can import it:
//! `kfdsim-bo gpu_id=0x1000 flags=0x80000001 size=0x200000`.
//!
//! USERPTR BOs have no memfd: the engine reads and writes the user's pages directly through
//! `process_vm_readv`/`writev`, so a stale pointer is a fault, never a crash. Atomics on them are
//! hardware atomics on the user's word once `MADV_POPULATE_WRITE` has found its page writable
//! ([`Bo::atomic_ptr`]); only a page the user unmaps in the instant between the two (a
//! use-after-free the GPU would fault on) could still crash.

use super::memfd::MemfdMap;
use super::sys;
use nix::errno::Errno;
use parking_lot::Mutex;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// Identity of an open file (`st_dev`, `st_ino`): survives dup, fork and SCM_RIGHTS.
pub type FileKey = (u64, u64);

/// How a BO's pages are reached.
pub enum Backing {
    /// A memfd, mapped (model-private mapping of `size` bytes), normally with no fd kept.
    Memfd(MemfdMap),
    /// USERPTR: the user's own pages at `addr` (same process).
    Userptr { addr: u64 },
}

/// One buffer object.
pub struct Bo {
    /// Size in bytes (page multiple; the kernel rounds BO sizes up to `PAGE_SIZE`).
    pub size: u64,
    /// `gpu_id` of the device the BO was allocated on (what GET_DMABUF_INFO reports).
    pub gpu_id: u32,
    /// KFD alloc flags (`KFD_IOC_ALLOC_MEM_FLAGS_*`).
    pub flags: u32,
    /// Pages.
    pub backing: Backing,
    /// Unique id within this process (debugging, identity).
    pub id: u64,
    /// False for a GEM BO created with `AMDGPU_GEM_CREATE_NO_CPU_ACCESS` and for USERPTR:
    /// render-node mmap then fails with EPERM (`amdgpu_gem_object_mmap`). KFD BOs never carry
    /// NO_CPU_ACCESS (see [`Bo::kfd_cpu_access`]).
    pub cpu_access: bool,
    /// Render-node files allowed to mmap this BO (`drm_vma_node_allow`).
    pub allowed_files: Mutex<Vec<FileKey>>,
    /// `AMDGPU_GEM_METADATA` state (this process only).
    pub metadata: Mutex<BoMetadata>,
    /// Imported from a dma-buf that amdgpu did not export (a udmabuf): system memory, a GTT
    /// scatter-gather BO to the KFD; GET_DMABUF_INFO refuses it (EINVAL).
    pub foreign: bool,
}

static NEXT_BO_ID: AtomicU64 = AtomicU64::new(1);

/// `amdgpu_bo` tiling flags and UMD metadata (`amdgpu_bo_set_tiling_flags`,
/// `amdgpu_bo_set_metadata`).
#[derive(Debug, Clone, Default)]
pub struct BoMetadata {
    pub tiling_info: u64,
    pub flags: u64,
    pub data: Vec<u8>,
}

/// Parsed memfd name of a model BO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoName {
    pub gpu_id: u32,
    pub flags: u32,
    pub size: u64,
}

impl BoName {
    pub fn format(&self) -> String {
        format!("kfdsim-bo gpu_id={:#x} flags={:#x} size={:#x}", self.gpu_id, self.flags, self.size)
    }

    /// Parses a `/proc/self/fd` link target such as
    /// `/memfd:kfdsim-bo gpu_id=0x1000 flags=0x1 size=0x1000 (deleted)`.
    pub fn parse_link(link: &str) -> Option<BoName> {
        let rest = link.strip_prefix("/memfd:kfdsim-bo ")?;
        let mut gpu_id = None;
        let mut flags = None;
        let mut size = None;
        for tok in rest.split_whitespace() {
            let (k, v) = match tok.split_once('=') {
                Some(kv) => kv,
                None => continue,
            };
            let v = u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()?;
            match k {
                "gpu_id" => gpu_id = Some(v as u32),
                "flags" => flags = Some(v as u32),
                "size" => size = Some(v),
                _ => {}
            }
        }
        Some(BoName { gpu_id: gpu_id?, flags: flags?, size: size? })
    }
}

impl Bo {
    /// A new memfd-backed BO of `size` bytes (rounded up to a page).
    pub fn new_memfd(gpu_id: u32, flags: u32, size: u64) -> Result<Bo, Errno> {
        let size = sys::page_align(size);
        let name = BoName { gpu_id, flags, size };
        let fd = sys::memfd(&name.format(), size).map_err(|_| Errno::ENOMEM)?;
        let st = sys::fstat(fd.as_raw_fd()).map_err(|_| Errno::ENOMEM)?;
        Self::from_fd(fd.as_raw_fd(), (st.st_dev, st.st_ino), name)
        // `fd` closes here: the mapping holds the memfd.
    }

    /// Maps an existing memfd of identity `key` named `name` (an imported dma-buf: the caller's
    /// fd, neither kept nor closed). Mapping fails → ENOMEM.
    pub fn from_fd(fd: RawFd, key: FileKey, name: BoName) -> Result<Bo, Errno> {
        let BoName { gpu_id, flags, size } = name;
        Ok(Bo {
            size,
            gpu_id,
            flags,
            backing: Backing::Memfd(MemfdMap::with_key(fd, size, key)?),
            id: NEXT_BO_ID.fetch_add(1, Ordering::Relaxed),
            cpu_access: Self::kfd_cpu_access(flags),
            allowed_files: Mutex::new(Vec::new()),
            metadata: Mutex::new(BoMetadata::default()),
            foreign: false,
        })
    }

    /// A USERPTR BO over the user's `[addr, addr+size)`.
    pub fn new_userptr(gpu_id: u32, flags: u32, addr: u64, size: u64) -> Bo {
        Bo {
            size,
            gpu_id,
            flags,
            backing: Backing::Userptr { addr },
            id: NEXT_BO_ID.fetch_add(1, Ordering::Relaxed),
            cpu_access: false,
            allowed_files: Mutex::new(Vec::new()),
            metadata: Mutex::new(BoMetadata::default()),
            foreign: false,
        }
    }

    /// A BO over a foreign dma-buf's pages (`map`: the model's mapping of them), as
    /// `amdgpu_gem_prime_import` makes of a dma-buf another driver exported.
    pub fn new_foreign(gpu_id: u32, map: MemfdMap, size: u64) -> Bo {
        Bo {
            size,
            gpu_id,
            flags: 0,
            backing: Backing::Memfd(map),
            id: NEXT_BO_ID.fetch_add(1, Ordering::Relaxed),
            cpu_access: true,
            allowed_files: Mutex::new(Vec::new()),
            metadata: Mutex::new(BoMetadata::default()),
            foreign: true,
        }
    }

    /// KFD BOs are never `NO_CPU_ACCESS`: `amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu` gives VRAM
    /// `CPU_ACCESS_REQUIRED` with PUBLIC and no placement flag without it (kernels since the
    /// NO_CPU_ACCESS alternative was dropped, i.e. every kernel with KFD 1.17). So a render-node
    /// mmap of non-PUBLIC VRAM is accepted: libhsakmt 5.2 (`fmm_allocate_device`) maps every VRAM
    /// BO it allocates without HostAccess `PROT_NONE, MAP_PRIVATE|MAP_FIXED` and gives the
    /// allocation up when that fails. `_flags`: the `KFD_IOC_ALLOC_MEM_FLAGS_*` of the BO.
    pub fn kfd_cpu_access(_flags: u32) -> bool {
        true
    }

    /// Lets render-node file `key` mmap this BO.
    pub fn allow(&self, key: FileKey) {
        let mut a = self.allowed_files.lock();
        if !a.contains(&key) {
            a.push(key);
        }
    }

    /// `drm_vma_node_is_allowed`.
    pub fn is_allowed(&self, key: FileKey) -> bool {
        self.allowed_files.lock().contains(&key)
    }

    /// The memfd mapping, if any (user mappings: [`MemfdMap::map_for_user`]).
    pub fn memfd(&self) -> Option<&MemfdMap> {
        match &self.backing {
            Backing::Memfd(m) => Some(m),
            Backing::Userptr { .. } => None,
        }
    }

    /// `(st_dev, st_ino)` of the memfd, if any.
    pub fn key(&self) -> Option<FileKey> {
        self.memfd().map(MemfdMap::key)
    }

    /// A new fd of the memfd for a dma-buf export (`amdgpu_gem_prime_export` + `dma_buf_fd`),
    /// `O_CLOEXEC` if `cloexec`, owned by the caller. USERPTR → EPERM; at the fd limit EMFILE.
    pub fn export_fd(&self, cloexec: bool) -> Result<RawFd, Errno> {
        self.memfd().ok_or(Errno::EPERM)?.open(cloexec)
    }

    /// True for USERPTR BOs.
    pub fn is_userptr(&self) -> bool {
        matches!(self.backing, Backing::Userptr { .. })
    }

    /// Pointer to byte `off` of the model-private mapping (memfd BOs only).
    pub fn ptr(&self, off: u64) -> Option<*mut u8> {
        match &self.backing {
            // SAFETY: callers keep `off` < size (checked by the GPUVM translation).
            Backing::Memfd(m) if off <= self.size => Some(unsafe { m.base().add(off as usize) }),
            _ => None,
        }
    }

    /// Pointer to the `width`-byte word at byte offset `off`, for a hardware atomic on it: memfd
    /// BOs always (the caller checked `off` against the size), USERPTR pages when the word is
    /// aligned and the page is there and writable (`MADV_POPULATE_WRITE` faults it in writable or
    /// fails: EFAULT for a read-only or `PROT_NONE` page, ENOMEM for none), so that GPU atomics
    /// on the user's pages are atomic against the CPU's. None: use a read-modify-write copy.
    pub fn atomic_ptr(&self, off: u64, width: u64) -> Option<*mut u8> {
        match &self.backing {
            Backing::Memfd(_) => self.ptr(off),
            Backing::Userptr { addr } => {
                let va = addr.checked_add(off)?;
                if !va.is_multiple_of(width) || off.checked_add(width)? > self.size {
                    return None;
                }
                let page = va & !(sys::PAGE_SIZE - 1);
                // SAFETY: madvise only populates page tables of mappings the process already has
                // (or fails); it changes no contents.
                let r = unsafe {
                    libc::madvise(page as *mut libc::c_void, sys::PAGE_SIZE as usize, libc::MADV_POPULATE_WRITE)
                };
                (r == 0).then_some(va as *mut u8)
            }
        }
    }

    /// Reads `dst.len()` bytes at byte offset `off`. Userptr pages that vanished → EFAULT.
    pub fn read(&self, off: u64, dst: &mut [u8]) -> Result<(), Errno> {
        if off.checked_add(dst.len() as u64).is_none_or(|e| e > self.size) {
            return Err(Errno::EFAULT);
        }
        match &self.backing {
            Backing::Memfd(m) => {
                // SAFETY: range checked against the mapping size above.
                unsafe { std::ptr::copy(m.base().add(off as usize), dst.as_mut_ptr(), dst.len()) };
                Ok(())
            }
            Backing::Userptr { addr } => sys::copy_from_user(dst, addr + off),
        }
    }

    /// Writes `src` at byte offset `off`.
    pub fn write(&self, off: u64, src: &[u8]) -> Result<(), Errno> {
        if off.checked_add(src.len() as u64).is_none_or(|e| e > self.size) {
            return Err(Errno::EFAULT);
        }
        match &self.backing {
            Backing::Memfd(m) => {
                // SAFETY: range checked against the mapping size above.
                unsafe { std::ptr::copy(src.as_ptr(), m.base().add(off as usize), src.len()) };
                Ok(())
            }
            Backing::Userptr { addr } => sys::copy_to_user(addr + off, src),
        }
    }

    /// Reads a u64 atomically (8-aligned offsets in memfd BOs; userptr falls back to a copy).
    pub fn read_u64(&self, off: u64) -> Result<u64, Errno> {
        if off.is_multiple_of(8) {
            if let Some(p) = self.ptr(off).filter(|_| off + 8 <= self.size) {
                // SAFETY: aligned, in range, inside a live MAP_SHARED mapping.
                return Ok(unsafe { (*(p as *const AtomicU64)).load(Ordering::Acquire) });
            }
        }
        let mut b = [0u8; 8];
        self.read(off, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes a u64 atomically where possible.
    pub fn write_u64(&self, off: u64, v: u64) -> Result<(), Errno> {
        if off.is_multiple_of(8) {
            if let Some(p) = self.ptr(off).filter(|_| off + 8 <= self.size) {
                // SAFETY: aligned, in range, inside a live MAP_SHARED mapping.
                unsafe { (*(p as *const AtomicU64)).store(v, Ordering::Release) };
                return Ok(());
            }
        }
        self.write(off, &v.to_le_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_round_trips() {
        let n = BoName { gpu_id: 0x1234, flags: 0x8000_0001, size: 0x20_0000 };
        let link = format!("/memfd:{} (deleted)", n.format());
        assert_eq!(BoName::parse_link(&link), Some(n));
        assert_eq!(BoName::parse_link("/memfd:other (deleted)"), None);
    }

    #[test]
    fn memfd_bo_reads_back_and_is_sparse() {
        let bo = Bo::new_memfd(1, 1, 64 << 30).unwrap();
        bo.write(5 << 30, b"hello").unwrap();
        let mut b = [0u8; 5];
        bo.read(5 << 30, &mut b).unwrap();
        assert_eq!(&b, b"hello");
        assert_eq!(bo.read(64 << 30, &mut b), Err(Errno::EFAULT));
        let fd = bo.export_fd(true).unwrap();
        let link = sys::fd_link(fd).unwrap();
        // SAFETY: `fd` is ours, from export_fd.
        drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        assert_eq!(BoName::parse_link(&link).unwrap().size, 64 << 30);
    }
}
