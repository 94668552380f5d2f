//! Allocation: BOs (reserve VA → `ALLOC_MEMORY_OF_GPU` → CPU map through the render node →
//! `MAP_MEMORY_TO_GPU`, undone in reverse), and the one allocation registry, ordered by base
//! address so that any pointer is resolved to its allocation in O(log n).

use crate::api::types::hipError_t;
use crate::runtime::Runtime;
use crate::va::{align_up, LARGE_ALIGN, PAGE_SIZE};
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};

/// A KFD BO at a VA of our aperture.
#[derive(Debug)]
pub struct Bo {
    /// GPU VA == CPU VA, bytes.
    pub va: u64,
    /// Bytes, page-rounded.
    pub size: u64,
    /// KFD handle (`gpu_id << 32 | idr`).
    pub handle: u64,
    /// HIP ordinal of the device the BO belongs to.
    pub owner: usize,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*`.
    pub flags: u32,
    /// `gpu_id`s whose GPUVM maps the BO.
    pub mapped: Mutex<Vec<u32>>,
    /// Whether `[va, va+size)` is CPU-mapped (through the owner's render node).
    pub cpu_mapped: bool,
}

fn alloc_errno(e: Errno) -> hipError_t {
    match e {
        Errno::EINVAL => hipError_t::hipErrorInvalidValue,
        _ => hipError_t::hipErrorOutOfMemory,
    }
}

/// The HIP error for a failed `IMPORT_DMABUF`: the kernel running out of memory, VA or fds
/// (`ENOMEM`, `ENOSPC`, `EMFILE`, `ENFILE`) is `hipErrorOutOfMemory`; anything else means the fd
/// is not a dma-buf the GPU can import: `hipErrorInvalidValue`.
pub(crate) fn import_errno(e: Errno) -> hipError_t {
    match e {
        Errno::ENOMEM | Errno::ENOSPC | Errno::EMFILE | Errno::ENFILE => hipError_t::hipErrorOutOfMemory,
        _ => hipError_t::hipErrorInvalidValue,
    }
}

impl Runtime {
    /// Allocates a BO of `size` bytes on device `owner` with `flags`, CPU-maps it if `cpu`, and
    /// GPU-maps it on the devices `map_on`. Nothing is left behind on failure.
    /// Errors: `hipErrorOutOfMemory` (VA or memory exhausted), `hipErrorInvalidValue`.
    pub fn bo_alloc(&self, owner: usize, size: u64, flags: u32, map_on: &[usize], cpu: bool) -> Result<Bo, hipError_t> {
        if size > self.va.aperture().1 {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        let size = align_up(size.max(1), PAGE_SIZE);
        let align = if size >= LARGE_ALIGN { LARGE_ALIGN } else { PAGE_SIZE };
        let va = self.va.alloc(size, align).ok_or(hipError_t::hipErrorOutOfMemory)?;
        let dev = &self.devices[owner];
        let mut args =
            kfd_ioctl_alloc_memory_of_gpu_args { va_addr: va, size, gpu_id: dev.gpu_id, flags, ..Default::default() };
        if let Err(e) = self.kfd.alloc_memory_of_gpu(&mut args) {
            self.va.free(va, size);
            crate::log::hipkfd_log!(
                "ALLOC_MEMORY_OF_GPU size {size} flags {} failed: {e}",
                alloc_flags_to_string(flags)
            );
            return Err(alloc_errno(e));
        }
        let bo = Bo { va, size, handle: args.handle, owner, flags, mapped: Mutex::new(vec![]), cpu_mapped: cpu };
        let undo = |bo: &Bo, cpu_done: bool| {
            if cpu_done {
                self.va.unmap_cpu(bo.va, bo.size);
            }
            let _ = self.kfd.free_memory_of_gpu(bo.handle);
            self.va.free(bo.va, bo.size);
        };
        // The MMIO remap page is mapped through /dev/kfd (`kfd_mmap`, KFD_MMAP_TYPE_MMIO), every
        // other BO through the render node.
        let map_fd = if flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 { self.kfd.fd() } else { dev.render.fd() };
        if cpu && self.va.map_cpu(va, size, map_fd, args.mmap_offset).is_err() {
            undo(&bo, false);
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        let gpus: Vec<u32> = map_on.iter().map(|&d| self.devices[d].gpu_id).collect();
        if let Err((e, n)) = self.kfd.map_memory_to_gpu(bo.handle, &gpus) {
            let _ = self.kfd.unmap_memory_from_gpu(bo.handle, &gpus[..n as usize]);
            undo(&bo, cpu);
            return Err(alloc_errno(e));
        }
        *bo.mapped.lock() = gpus;
        Ok(bo)
    }

    /// Unmaps and frees a BO made by [`bo_alloc`](Self::bo_alloc). The caller has made sure no
    /// queued work still uses it.
    pub fn bo_free(&self, bo: &Bo) {
        let gpus = std::mem::take(&mut *bo.mapped.lock());
        if let Err((e, _)) = self.kfd.unmap_memory_from_gpu(bo.handle, &gpus) {
            crate::log::hipkfd_log!("UNMAP_MEMORY_FROM_GPU {:#x}: {e}", bo.handle);
        }
        if bo.cpu_mapped {
            self.va.unmap_cpu(bo.va, bo.size);
        }
        if let Err(e) = self.kfd.free_memory_of_gpu(bo.handle) {
            crate::log::hipkfd_log!("FREE_MEMORY_OF_GPU {:#x}: {e}", bo.handle);
        }
        self.va.free(bo.va, bo.size);
    }
}

/// What `AMDKFD_IOC_GET_DMABUF_INFO` (or, for a foreign dma-buf, `lseek`) says of a dma-buf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmabufInfo {
    /// Bytes.
    pub size: u64,
    /// HIP ordinal of the GPU whose memory it is (amdgpu dma-bufs of a visible GPU).
    pub owner: Option<usize>,
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*` (VRAM or GTT; GTT for a foreign dma-buf).
    pub flags: u32,
    /// Not exported by amdgpu (udmabuf, another driver): system memory.
    pub foreign: bool,
}

impl Runtime {
    /// Identifies a dma-buf. amdgpu's: `GET_DMABUF_INFO`. Anything else (the kernel answers
    /// `EINVAL`, `amdgpu_amdkfd_get_dmabuf_info`) is taken as a foreign dma-buf of
    /// `lseek(SEEK_END)` bytes (`dma_buf_llseek`); whether it really is one, `IMPORT_DMABUF` says.
    /// Errors: `hipErrorInvalidValue` (bad fd, not seekable, empty).
    pub fn dmabuf_info(&self, fd: std::os::fd::RawFd) -> Result<DmabufInfo, hipError_t> {
        match self.kfd.get_dmabuf_info(fd) {
            Ok((size, gpu_id, flags)) => {
                let owner = self.device_of_gpu(gpu_id);
                Ok(DmabufInfo { size, owner, flags, foreign: false })
            }
            Err(Errno::EINVAL) => {
                // SAFETY: lseek on a caller's fd; no memory is passed.
                let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
                // SAFETY: as above; puts the file position back where dma-bufs keep it.
                unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
                if end <= 0 {
                    return Err(hipError_t::hipErrorInvalidValue);
                }
                Ok(DmabufInfo { size: end as u64, owner: None, flags: KFD_IOC_ALLOC_MEM_FLAGS_GTT, foreign: true })
            }
            Err(_) => Err(hipError_t::hipErrorInvalidValue),
        }
    }

    /// Imports a dma-buf: reserve VA → `IMPORT_DMABUF` on the memory's own GPU (else `dev`) →
    /// `MAP_MEMORY_TO_GPU` on every device. The BO holds its own reference to the dma-buf (the fd
    /// stays the caller's). Nothing is left behind on failure. Errors: `hipErrorInvalidValue`
    /// (the kernel refuses the import), `hipErrorOutOfMemory` (VA, mapping, or the kernel out of
    /// memory: [`import_errno`]).
    pub fn dmabuf_import(&self, fd: std::os::fd::RawFd, info: &DmabufInfo, dev: usize) -> Result<Bo, hipError_t> {
        let owner = info.owner.unwrap_or(dev);
        let size = align_up(info.size, PAGE_SIZE);
        let align = if size >= LARGE_ALIGN { LARGE_ALIGN } else { PAGE_SIZE };
        let va = self.va.alloc(size, align).ok_or(hipError_t::hipErrorOutOfMemory)?;
        let handle = match self.kfd.import_dmabuf(fd, self.devices[owner].gpu_id, va) {
            Ok(h) => h,
            Err(e) => {
                crate::log::hipkfd_log!("IMPORT_DMABUF: {e}");
                self.va.free(va, size);
                return Err(import_errno(e));
            }
        };
        let gpus: Vec<u32> = self.devices.iter().map(|d| d.gpu_id).collect();
        if let Err((e, n)) = self.kfd.map_memory_to_gpu(handle, &gpus) {
            crate::log::hipkfd_log!("MAP_MEMORY_TO_GPU of an import: {e}");
            let _ = self.kfd.unmap_memory_from_gpu(handle, &gpus[..n as usize]);
            let _ = self.kfd.free_memory_of_gpu(handle);
            self.va.free(va, size);
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        Ok(Bo { va, size, handle, owner, flags: info.flags, mapped: Mutex::new(gpus), cpu_mapped: false })
    }
}

/// What kind of memory an allocation is, as `hipPointerGetAttributes` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// `hipMalloc`: VRAM of `Allocation::bo.owner`.
    Device,
    /// `hipHostMalloc`: pinned system memory (GTT), mapped on every device.
    Host,
    /// `hipIpcOpenMemHandle`: another process's VRAM, imported as a dma-buf and mapped on every
    /// device; `owner` is the device of the memory. Freed only by `hipIpcCloseMemHandle`.
    Ipc,
    /// `hipMemMap`: one mapping of a VMM chunk inside a `hipMemAddressReserve` range (src/vmm.rs);
    /// `owner` is the chunk's device. Device memory to every other API; freed only by
    /// `hipMemUnmap`.
    Vmm,
    /// `hipExternalMemoryGetMappedBuffer`: an imported dma-buf (src/interop.rs), mapped on every
    /// device; `owner` is the memory's GPU (the importing device for a foreign dma-buf). Device
    /// memory to every other API; freed with `hipFree`.
    External,
}

/// What backs an allocation.
#[derive(Debug)]
pub enum Backing {
    /// A BO of its own at `base` (device, host and IPC memory).
    Bo(Bo),
    /// A range of a VMM chunk (src/vmm.rs).
    Vmm(Arc<crate::vmm::Mapping>),
}

/// One user allocation.
#[derive(Debug)]
pub struct Allocation {
    /// The pointer the user got, bytes.
    pub base: u64,
    /// The size the user asked for, bytes.
    pub size: u64,
    pub kind: MemKind,
    /// `hipHostMalloc` flags (0 for device memory).
    pub flags: u32,
    /// HIP ordinal of the device whose memory this is (for host memory: the device that
    /// allocated it).
    pub owner: usize,
    pub backing: Backing,
}

impl Allocation {
    /// An allocation backed by a BO of its own at `bo.va`.
    pub fn with_bo(size: u64, kind: MemKind, flags: u32, bo: Bo) -> Allocation {
        Allocation { base: bo.va, size, kind, flags, owner: bo.owner, backing: Backing::Bo(bo) }
    }

    /// An allocation at `base` (inside `bo`) backed by a BO of its own.
    pub fn with_bo_at(base: u64, size: u64, kind: MemKind, bo: Bo) -> Allocation {
        Allocation { base, size, kind, flags: 0, owner: bo.owner, backing: Backing::Bo(bo) }
    }

    /// The BO of its own, if it has one (every kind but `Vmm`).
    pub fn bo(&self) -> Option<&Bo> {
        match &self.backing {
            Backing::Bo(bo) => Some(bo),
            Backing::Vmm(_) => None,
        }
    }

    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.base + self.size
    }
}

/// A random 16-byte token naming one exported allocation (src/ipc.rs puts it in handles).
pub type ExportToken = [u8; 16];

/// Memory exports: which token names which allocation. Kept by the registry, so that an
/// allocation's export dies with it: [`Registry::remove`] forgets it.
#[derive(Debug, Default)]
struct Exports {
    by_token: HashMap<ExportToken, Weak<Allocation>>,
    /// Allocation base → token of its export.
    by_base: HashMap<u64, ExportToken>,
}

/// The allocation registry: base address → allocation, and the allocations' exports.
///
/// Lock order: `exports` before `map`; neither is held while taking the other in reverse.
#[derive(Debug, Default)]
pub struct Registry {
    map: RwLock<BTreeMap<u64, Arc<Allocation>>>,
    exports: Mutex<Exports>,
}

impl Registry {
    pub fn insert(&self, a: Allocation) -> Arc<Allocation> {
        let a = Arc::new(a);
        self.map.write().insert(a.base, a.clone());
        a
    }

    /// Removes the allocation whose base is exactly `base`, and forgets its export: its token
    /// stops being served. Done before the caller frees the BO, so no export of a freed BO is
    /// ever made ([`with_export`](Self::with_export) holds the export lock while exporting).
    pub fn remove(&self, base: u64) -> Option<Arc<Allocation>> {
        let a = self.map.write().remove(&base)?;
        let mut ex = self.exports.lock();
        if let Some(t) = ex.by_base.remove(&base) {
            ex.by_token.remove(&t);
        }
        Some(a)
    }

    /// The export token of `a`: the one it already has, else `new_token()` (a recycled base gets
    /// a new token, never the freed allocation's). `None` when `a` is no longer in the registry
    /// (a concurrent free).
    pub fn export_token(&self, a: &Arc<Allocation>, new_token: impl FnOnce() -> ExportToken) -> Option<ExportToken> {
        let mut ex = self.exports.lock();
        // Re-check under the lock: a concurrent `remove` may have taken it out.
        match self.get(a.base) {
            Some(cur) if Arc::ptr_eq(&cur, a) => {}
            _ => return None,
        }
        let existing = ex
            .by_base
            .get(&a.base)
            .copied()
            .filter(|t| ex.by_token.get(t).and_then(Weak::upgrade).is_some_and(|x| Arc::ptr_eq(&x, a)));
        Some(match existing {
            Some(t) => t,
            None => {
                let t = new_token();
                if let Some(old) = ex.by_base.insert(a.base, t) {
                    ex.by_token.remove(&old);
                }
                ex.by_token.insert(t, Arc::downgrade(a));
                t
            }
        })
    }

    /// Runs `f` on the live allocation exported as `token`, holding the export lock meanwhile:
    /// a concurrent [`remove`](Self::remove) (hipFree) waits, so the BO stays live inside `f`.
    /// `None` for an unknown, forgotten or dead token.
    pub fn with_export<R>(&self, token: &ExportToken, f: impl FnOnce(&Allocation) -> R) -> Option<R> {
        let ex = self.exports.lock();
        let a = ex.by_token.get(token)?.upgrade()?;
        Some(f(&a))
    }

    /// The allocation containing `ptr` (`base <= ptr < base + size`), in O(log n).
    pub fn find(&self, ptr: u64) -> Option<Arc<Allocation>> {
        let m = self.map.read();
        let (_, a) = m.range(..=ptr).next_back()?;
        (ptr < a.base + a.size.max(1)).then(|| a.clone())
    }

    /// The first allocation that intersects `[start, start + len)`, if any, in O(log n).
    pub fn find_in(&self, start: u64, len: u64) -> Option<Arc<Allocation>> {
        let end = start.saturating_add(len.max(1));
        let m = self.map.read();
        if let Some((_, a)) = m.range(..=start).next_back() {
            if a.end() > start {
                return Some(a.clone());
            }
        }
        m.range(start..end).next().map(|(_, a)| a.clone())
    }

    /// The allocation whose base is exactly `base`.
    pub fn get(&self, base: u64) -> Option<Arc<Allocation>> {
        self.map.read().get(&base).cloned()
    }

    /// Every allocation, for `hipDeviceReset`.
    pub fn all(&self) -> Vec<Arc<Allocation>> {
        self.map.read().values().cloned().collect()
    }
}

/// Flags of device memory (`hipMalloc`): like libhsakmt's `hsakmt_fmm_allocate_device` for a
/// host-accessible (large BAR) VRAM allocation.
pub fn vram_flags(large_bar: bool) -> u32 {
    let mut f = KFD_IOC_ALLOC_MEM_FLAGS_VRAM
        | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
    if large_bar {
        f |= KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
    }
    f
}

/// Flags of pinned system memory (`hipHostMalloc`, and the runtime's own rings and signals).
pub fn gtt_flags(coherent: bool) -> u32 {
    let mut f = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
    if coherent {
        f |= KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
    }
    f
}

/// Every `hipHostMalloc` flag we know (`hipHostMallocPortable|Mapped|WriteCombined|Uncached|
/// NumaUser|Coherent|NonCoherent`, `hipHostMallocDefault` = 0).
pub const HOST_MALLOC_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x1000_0000 | 0x2000_0000 | 0x4000_0000 | 0x8000_0000;

impl Runtime {
    /// `hipMalloc`: `size` bytes of VRAM on device `dev`, GPU-mapped there and CPU-mapped when
    /// the BAR is large. Returns the base address.
    pub fn mem_alloc_device(&self, dev: usize, size: u64) -> Result<u64, hipError_t> {
        let d = &self.devices[dev];
        if size > d.topo.node.vram_size {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        // Mapped at once on every device that enabled peer access to `dev` (one MAP ioctl with
        // the device list); the guard keeps hipDeviceEnable/DisablePeerAccess out until the
        // allocation is in the registry.
        let (_peers, map_on) = self.peer_alloc_targets(dev);
        let bo = self.bo_alloc(dev, size, vram_flags(d.large_bar), &map_on, d.large_bar)?;
        let base = bo.va;
        self.allocs.insert(Allocation::with_bo(size, MemKind::Device, 0, bo));
        crate::log::hipkfd_log!("hipMalloc {size} bytes on device {dev} at {base:#x}");
        Ok(base)
    }

    /// `hipHostMalloc`: `size` bytes of pinned system memory, mapped on every device; `dev` (the
    /// current device) owns the BO and is the device `hipPointerGetAttributes` reports.
    pub fn mem_alloc_host(&self, dev: usize, size: u64, flags: u32) -> Result<u64, hipError_t> {
        let coherent = flags & 0x8000_0000 == 0;
        let all: Vec<usize> = (0..self.devices.len()).collect();
        let bo = self.bo_alloc(dev, size, gtt_flags(coherent), &all, true)?;
        let base = bo.va;
        self.allocs.insert(Allocation::with_bo(size, MemKind::Host, flags, bo));
        Ok(base)
    }

    /// `hipFree`/`hipHostFree` (and `hipFree` of an external memory's mapped buffer): waits for
    /// every device (as `hipFree` implies), then unmaps and frees the allocation whose base is
    /// `base`. Errors: `hipErrorInvalidValue` for anything else.
    pub fn mem_free(&self, base: u64) -> Result<(), hipError_t> {
        let a = self.allocs.get(base).ok_or(hipError_t::hipErrorInvalidValue)?;
        if !matches!(a.kind, MemKind::Device | MemKind::Host | MemKind::External) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        drop(a);
        for d in 0..self.devices.len() {
            self.device_sync(d)?;
        }
        // Keeps hipDeviceEnablePeerAccess from mapping the BO while it is being freed.
        let _peers = self.peer_guard();
        // Also forgets its IPC export, before the BO is freed.
        let a = self.allocs.remove(base).ok_or(hipError_t::hipErrorInvalidValue)?;
        if let Some(bo) = a.bo() {
            self.bo_free(bo);
        }
        Ok(())
    }
}
