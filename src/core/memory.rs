//! Allocation: BOs (reserve VA → `ALLOC_MEMORY_OF_GPU` → CPU map through the render node →
//! `MAP_MEMORY_TO_GPU`, undone in reverse), and the one allocation registry, ordered by base
//! address so that any pointer is resolved to its allocation in O(log n).
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::runtime::Runtime;
use crate::core::va::{align_up, LARGE_ALIGN, PAGE_SIZE};
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// The BO's dma-buf, exported once for IPC and kept with the BO, as the kernel keeps
    /// `mem->dmabuf` (`kfd_mem_export_dmabuf`): every importer gets this one file
    /// ([`Bo::ipc_dmabuf`]).
    pub dmabuf: Mutex<Option<Arc<DmabufFd>>>,
    /// The VA range is the caller's (a graph allocation node's, src/graph/mem.rs): freeing the
    /// BO leaves it reserved.
    pub va_kept: bool,
    /// A dma-buf of the BO was ever exported ([`Bo::export_dmabuf`]): another process may hold
    /// it, so the BO is never reused for another allocation ([`Runtime::bo_cache_put`]).
    pub exported: std::sync::atomic::AtomicBool,
}

/// An exported dma-buf fd (`EXPORT_DMABUF`), closed when the last holder drops it.
#[derive(Debug)]
pub struct DmabufFd {
    pub fd: OwnedFd,
    /// Counted in [`DMABUFS_KEPT`] (kept by a BO).
    kept: bool,
}

/// How many exported dma-buf fds BOs keep open at most, so that exporting many allocations
/// cannot use up the fd table; past it, each request exports anew.
pub const DMABUF_KEEP_MAX: usize = 128;
static DMABUFS_KEPT: AtomicUsize = AtomicUsize::new(0);

impl Drop for DmabufFd {
    fn drop(&mut self) {
        if self.kept {
            DMABUFS_KEPT.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Bo {
    fn new(va: u64, size: u64, handle: u64, owner: usize, flags: u32, mapped: Vec<u32>, cpu_mapped: bool) -> Bo {
        Bo {
            va,
            size,
            handle,
            owner,
            flags,
            mapped: Mutex::new(mapped),
            cpu_mapped,
            dmabuf: Mutex::new(None),
            va_kept: false,
            exported: Default::default(),
        }
    }

    /// `AMDKFD_IOC_EXPORT_DMABUF` of the BO, marking it [`exported`](Bo::exported) first.
    /// Errors: the ioctl's (`EMFILE`, ...).
    pub fn export_dmabuf(&self, kfd: &kfd_ioctl::Kfd) -> Result<OwnedFd, Errno> {
        self.exported.store(true, Ordering::Relaxed);
        kfd.export_dmabuf(self.handle)
    }

    /// The BO's dma-buf for IPC: the one it keeps, else a new export (`EXPORT_DMABUF`), kept if
    /// `keep` and fewer than [`DMABUF_KEEP_MAX`] are kept. Errors: the ioctl's (`EMFILE`, ...).
    pub fn ipc_dmabuf(&self, kfd: &kfd_ioctl::Kfd, keep: bool) -> Result<Arc<DmabufFd>, Errno> {
        let mut kept = self.dmabuf.lock();
        if let Some(fd) = &*kept {
            return Ok(fd.clone());
        }
        let keep = keep
            && DMABUFS_KEPT
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| (n < DMABUF_KEEP_MAX).then_some(n + 1))
                .is_ok();
        let fd = match self.export_dmabuf(kfd) {
            Ok(fd) => Arc::new(DmabufFd { fd, kept: keep }),
            Err(e) => {
                if keep {
                    DMABUFS_KEPT.fetch_sub(1, Ordering::Relaxed);
                }
                return Err(e);
            }
        };
        if keep {
            *kept = Some(fd.clone());
        }
        Ok(fd)
    }
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
        self.bo_alloc_in(owner, va, size, flags, map_on, cpu, false).inspect_err(|_| self.va.free(va, size))
    }

    /// [`bo_alloc`](Self::bo_alloc) at `va`, a page-aligned range of `size` bytes the caller
    /// has reserved in the VA manager and keeps: the BO is made with `va_kept`, and neither a
    /// failure nor [`bo_free`](Self::bo_free) gives the range back.
    pub fn bo_alloc_at(
        &self,
        owner: usize,
        va: u64,
        size: u64,
        flags: u32,
        map_on: &[usize],
        cpu: bool,
    ) -> Result<Bo, hipError_t> {
        self.bo_alloc_in(owner, va, size, flags, map_on, cpu, true)
    }

    /// The BO of [`bo_alloc`](Self::bo_alloc)/[`bo_alloc_at`](Self::bo_alloc_at) at the reserved
    /// range `va`, which it leaves reserved on failure; `va_kept` as the BO's field.
    #[allow(clippy::too_many_arguments)]
    fn bo_alloc_in(
        &self,
        owner: usize,
        va: u64,
        size: u64,
        flags: u32,
        map_on: &[usize],
        cpu: bool,
        va_kept: bool,
    ) -> Result<Bo, hipError_t> {
        let dev = &self.devices[owner];
        let mut args =
            kfd_ioctl_alloc_memory_of_gpu_args { va_addr: va, size, gpu_id: dev.gpu_id, flags, ..Default::default() };
        if let Err(e) = self.kfd.alloc_memory_of_gpu(&mut args) {
            crate::core::log::hipkfd_log!(
                "ALLOC_MEMORY_OF_GPU size {size} flags {} failed: {e}",
                alloc_flags_to_string(flags)
            );
            return Err(alloc_errno(e));
        }
        let mut bo = Bo::new(va, size, args.handle, owner, flags, vec![], cpu);
        bo.va_kept = va_kept;
        let undo = |bo: &Bo, cpu_done: bool| {
            if cpu_done {
                self.va.unmap_cpu(bo.va, bo.size);
            }
            let _ = self.kfd.free_memory_of_gpu(bo.handle);
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
        // The kept dma-buf (if no request is sending it right now) closes with the BO.
        drop(bo.dmabuf.lock().take());
        let gpus = std::mem::take(&mut *bo.mapped.lock());
        if let Err((e, _)) = self.kfd.unmap_memory_from_gpu(bo.handle, &gpus) {
            crate::core::log::hipkfd_log!("UNMAP_MEMORY_FROM_GPU {:#x}: {e}", bo.handle);
        }
        if bo.cpu_mapped {
            self.va.unmap_cpu(bo.va, bo.size);
        }
        if let Err(e) = self.kfd.free_memory_of_gpu(bo.handle) {
            crate::core::log::hipkfd_log!("FREE_MEMORY_OF_GPU {:#x}: {e}", bo.handle);
        }
        if bo.va_kept {
            self.graph_mem_released(bo.va);
        } else {
            self.va.free(bo.va, bo.size);
        }
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
                crate::core::log::hipkfd_log!("IMPORT_DMABUF: {e}");
                self.va.free(va, size);
                return Err(import_errno(e));
            }
        };
        let gpus: Vec<u32> = self.devices.iter().map(|d| d.gpu_id).collect();
        if let Err((e, n)) = self.kfd.map_memory_to_gpu(handle, &gpus) {
            crate::core::log::hipkfd_log!("MAP_MEMORY_TO_GPU of an import: {e}");
            let _ = self.kfd.unmap_memory_from_gpu(handle, &gpus[..n as usize]);
            let _ = self.kfd.free_memory_of_gpu(handle);
            self.va.free(va, size);
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        Ok(Bo::new(va, size, handle, owner, info.flags, gpus, false))
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
    /// `hipMemMap`: one mapping of a VMM chunk inside a `hipMemAddressReserve` range (src/share/vmm.rs);
    /// `owner` is the chunk's device. Device memory to every other API; freed only by
    /// `hipMemUnmap`.
    Vmm,
    /// `hipExternalMemoryGetMappedBuffer`: an imported dma-buf (src/share/interop.rs), mapped on every
    /// device; `owner` is the memory's GPU (the importing device for a foreign dma-buf). Device
    /// memory to every other API; freed with `hipFree`.
    External,
    /// `hipHostRegister`: the user's own pages, as USERPTR BOs at their own address on every
    /// device (src/mem/hostreg.rs); pinned host memory to every other API. Freed only by
    /// `hipHostUnregister`.
    Registered,
    /// `hipMallocManaged`: system memory (GTT) mapped on every device and the CPU at one address,
    /// so both may use it at any time with no migration; `owner` is the allocating device.
    /// Freed with `hipFree`.
    Managed,
    /// `hipMallocArray`/`hipArrayCreate`/`hipMalloc3DArray`/`hipArray3DCreate`: linear pitched
    /// VRAM of `owner` behind an array handle (src/mem/array.rs). Device memory to the copy paths;
    /// freed only by `hipFreeArray`/`hipArrayDestroy`.
    Array,
}

/// What backs an allocation.
#[derive(Debug)]
pub enum Backing {
    /// A BO of its own at `base` (device, host and IPC memory).
    Bo(Bo),
    /// A slot of a [`Block`] shared with other small `hipMalloc`s of its size class.
    Sub(Arc<Block>),
    /// A range of a VMM chunk (a `Mapping` of src/share/vmm.rs).
    Vmm(Arc<dyn Backed>),
    /// Spans of registered user pages (src/mem/hostreg.rs), by start address.
    UserPages(Vec<u64>),
    /// An array: its handle object (an `ArrayObj` of src/mem/array.rs), which owns the BO at
    /// `base`.
    Array(Box<dyn Backed>),
}

/// What the core asks of the allocation kinds that a layer above it backs (a VMM mapping, an
/// array): the core keeps them in the registry without naming their types; their layer
/// downcasts (`dyn Backed` upcasts to `dyn Any`).
pub trait Backed: std::any::Any + Send + Sync + std::fmt::Debug {
    /// The BO the allocation owns at its base, if any (freed with it).
    fn bo(&self) -> Option<&Bo> {
        None
    }
    /// Whether it is system memory.
    fn is_host_memory(&self) -> bool {
        false
    }
    /// The `hipArray_t` it answers to, if it is an array (the registry finds arrays by it).
    fn array_handle(&self) -> Option<u64> {
        None
    }
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
    /// Unique among the process's allocations, never reused (`HIP_POINTER_ATTRIBUTE_BUFFER_ID`,
    /// clr's `amd::Memory::getUniqueId`): set by [`Registry::insert`], 0 before.
    pub id: u64,
    /// `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` (`hipPointerSetAttribute`; clr `sync_mem_ops_`): a
    /// synchronous device-to-device `hipMemcpy` between two such allocations waits for the copy.
    pub sync_memops: std::sync::atomic::AtomicBool,
}

impl Allocation {
    /// Whether this is system memory: pinned (`hipHostMalloc`), registered, managed, or a VMM
    /// chunk of host memory.
    pub fn is_host_memory(&self) -> bool {
        match &self.backing {
            Backing::Vmm(m) => m.is_host_memory(),
            _ => matches!(self.kind, MemKind::Host | MemKind::Registered | MemKind::Managed),
        }
    }

    /// An allocation backed by a BO of its own at `bo.va`.
    pub fn with_bo(size: u64, kind: MemKind, flags: u32, bo: Bo) -> Allocation {
        Allocation {
            base: bo.va,
            size,
            kind,
            flags,
            owner: bo.owner,
            backing: Backing::Bo(bo),
            id: 0,
            sync_memops: Default::default(),
        }
    }

    /// An allocation at `base` (inside `bo`) backed by a BO of its own.
    pub fn with_bo_at(base: u64, size: u64, kind: MemKind, bo: Bo) -> Allocation {
        Allocation {
            base,
            size,
            kind,
            flags: 0,
            owner: bo.owner,
            backing: Backing::Bo(bo),
            id: 0,
            sync_memops: Default::default(),
        }
    }

    /// The BO behind it (its own, or the block it is a slot of), if it has one (every kind
    /// but `Vmm`).
    pub fn bo(&self) -> Option<&Bo> {
        match &self.backing {
            Backing::Bo(bo) => Some(bo),
            Backing::Sub(b) => Some(&b.bo),
            Backing::Array(a) => a.bo(),
            Backing::Vmm(_) | Backing::UserPages(_) => None,
        }
    }

    /// The `hipArray_t` of an array allocation.
    pub fn array_handle(&self) -> Option<u64> {
        match &self.backing {
            Backing::Array(obj) => obj.array_handle(),
            _ => None,
        }
    }

    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.base + self.size
    }
}

/// A random 16-byte token naming one exported allocation (src/share/ipc.rs puts it in handles).
pub type ExportToken = [u8; 16];

/// Memory exports: which token names which allocation. Kept by the registry, so that an
/// allocation's export dies with it: [`Registry::remove`] forgets it.
#[derive(Debug, Default)]
struct Exports {
    by_token: HashMap<ExportToken, Weak<Allocation>>,
    /// Allocation base → token of its export.
    by_base: HashMap<u64, ExportToken>,
}

/// Hashes a block VA (2 MiB-aligned, so its low bits are zero) with one multiply: the keys of
/// [`Index::slots`] need no SipHash.
#[derive(Debug, Default, Clone, Copy)]
struct BlockHasher(u64);

impl std::hash::Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v >> 21).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A block's slots: the allocation in each, and its size inline (0: free), so that a pointer
/// query reads one word instead of the allocation.
#[derive(Debug)]
struct SlotTable {
    /// Bytes per slot.
    slot: u64,
    /// HIP ordinal of the block's device.
    owner: usize,
    sizes: Vec<u64>,
    allocs: Vec<Option<Arc<Allocation>>>,
}

/// What a pointer query needs of the allocation containing a pointer (a copy, made under the
/// registry lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub base: u64,
    pub size: u64,
    pub kind: MemKind,
    pub flags: u32,
    pub owner: usize,
    /// Host memory (`hipHostMalloc`, or a VMM chunk of host memory).
    pub host: bool,
}

/// The registry's index: every allocation by base, and, for the slots of blocks (small
/// `hipMalloc`s), the same entries by block and slot, so that a pointer into one is found in O(1)
/// however many there are.
#[derive(Debug, Default)]
struct Index {
    by_base: BTreeMap<u64, Arc<Allocation>>,
    /// Block VA → (slot bytes, the allocation in each slot); from the block's first allocation
    /// until the block is freed ([`Registry::forget_block`]).
    slots: HashMap<u64, SlotTable, std::hash::BuildHasherDefault<BlockHasher>>,
    /// Array handle (`hipArray_t`) → base of its allocation (`MemKind::Array`).
    arrays: HashMap<u64, u64>,
}

/// The allocation registry: base address → allocation, and the allocations' exports.
///
/// Lock order: `exports` before `map`; neither is held while taking the other in reverse.
#[derive(Debug, Default)]
pub struct Registry {
    map: RwLock<Index>,
    exports: Mutex<Exports>,
    /// Set (under `exports`' lock, before the allocation is looked up) by the first export:
    /// until then [`remove`](Self::remove) takes no export lock.
    any_export: AtomicBool,
}

impl Registry {
    pub fn insert(&self, mut a: Allocation) -> Arc<Allocation> {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        a.id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let a = Arc::new(a);
        let mut m = self.map.write();
        if let Backing::Sub(b) = &a.backing {
            let t = m.slots.entry(b.bo.va).or_insert_with(|| SlotTable {
                slot: b.slot,
                owner: a.owner,
                sizes: vec![0; b.slots()],
                allocs: vec![None; b.slots()],
            });
            let i = ((a.base - b.bo.va) / b.slot) as usize;
            t.sizes[i] = a.size;
            t.allocs[i] = Some(a.clone());
        }
        if let Some(h) = a.array_handle() {
            m.arrays.insert(h, a.base);
        }
        m.by_base.insert(a.base, a.clone());
        a
    }

    /// Removes the allocation whose base is exactly `base`, and forgets its export: its token
    /// stops being served. Done before the caller frees the BO, so no export of a freed BO is
    /// ever made ([`with_export`](Self::with_export) holds the export lock while exporting).
    pub fn remove(&self, base: u64) -> Option<Arc<Allocation>> {
        let a = {
            let mut m = self.map.write();
            let a = m.by_base.remove(&base)?;
            if let Backing::Sub(b) = &a.backing {
                if let Some(t) = m.slots.get_mut(&b.bo.va) {
                    let i = ((a.base - b.bo.va) / b.slot) as usize;
                    t.sizes[i] = 0;
                    t.allocs[i] = None;
                }
            }
            if let Some(h) = a.array_handle() {
                m.arrays.remove(&h);
            }
            a
        };
        // An export that found `a` set `any_export` before its lookup, which came before the
        // removal above: this load sees it.
        if self.any_export.load(Ordering::SeqCst) {
            let mut ex = self.exports.lock();
            if let Some(t) = ex.by_base.remove(&base) {
                ex.by_token.remove(&t);
            }
        }
        Some(a)
    }

    /// The export token of `a`: the one it already has, else `new_token()` (a recycled base gets
    /// a new token, never the freed allocation's). `None` when `a` is no longer in the registry
    /// (a concurrent free).
    pub fn export_token(&self, a: &Arc<Allocation>, new_token: impl FnOnce() -> ExportToken) -> Option<ExportToken> {
        let mut ex = self.exports.lock();
        self.any_export.store(true, Ordering::SeqCst);
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

    /// The allocation containing `ptr` (`base <= ptr < base + size`): O(1) in a block of small
    /// allocations, else O(log n).
    pub fn find(&self, ptr: u64) -> Option<Arc<Allocation>> {
        let m = self.map.read();
        if let Some(t) = m.slots.get(&(ptr & !(BLOCK_SIZE - 1))) {
            // A block holds nothing but its slots: a pointer between allocations is in none.
            let a = t.allocs.get(((ptr & (BLOCK_SIZE - 1)) / t.slot) as usize)?.as_ref()?;
            return (ptr < a.base + a.size).then(|| a.clone());
        }
        let (_, a) = m.by_base.range(..=ptr).next_back()?;
        (ptr < a.base + a.size.max(1)).then(|| a.clone())
    }

    /// [`find`](Self::find) for pointer queries (`hipPointerGetAttributes`,
    /// `hipMemGetAddressRange`): a copy of what they report, read under the lock without
    /// touching the allocation when `ptr` is in a block of small allocations (a lookup among
    /// 200,000 of them reads one hash bucket and one word).
    pub fn span(&self, ptr: u64) -> Option<Span> {
        let m = self.map.read();
        if let Some(t) = m.slots.get(&(ptr & !(BLOCK_SIZE - 1))) {
            let off = ptr & (BLOCK_SIZE - 1);
            let size = *t.sizes.get((off / t.slot) as usize)?;
            let base = ptr - off % t.slot;
            return (ptr < base + size).then_some(Span {
                base,
                size,
                kind: MemKind::Device,
                flags: 0,
                owner: t.owner,
                host: false,
            });
        }
        let (_, a) = m.by_base.range(..=ptr).next_back()?;
        (ptr < a.base + a.size.max(1)).then(|| Span {
            base: a.base,
            size: a.size,
            kind: a.kind,
            flags: a.flags,
            owner: a.owner,
            host: a.is_host_memory(),
        })
    }

    /// Forgets the slot table of the block at `va`, which is being freed (its VA may be reused).
    pub fn forget_block(&self, va: u64) {
        self.map.write().slots.remove(&va);
    }

    /// The first allocation that intersects `[start, start + len)`, if any, in O(log n).
    pub fn find_in(&self, start: u64, len: u64) -> Option<Arc<Allocation>> {
        let end = start.saturating_add(len.max(1));
        let m = self.map.read();
        if let Some((_, a)) = m.by_base.range(..=start).next_back() {
            if a.end() > start {
                return Some(a.clone());
            }
        }
        m.by_base.range(start..end).next().map(|(_, a)| a.clone())
    }

    /// The allocation whose base is exactly `base`.
    pub fn get(&self, base: u64) -> Option<Arc<Allocation>> {
        self.map.read().by_base.get(&base).cloned()
    }

    /// The array allocation whose handle is `handle` (`hipArray_t`), if it is live.
    pub fn array(&self, handle: u64) -> Option<Arc<Allocation>> {
        let m = self.map.read();
        m.arrays.get(&handle).and_then(|b| m.by_base.get(b)).cloned()
    }

    /// Every allocation, for `hipDeviceReset`.
    pub fn all(&self) -> Vec<Arc<Allocation>> {
        self.map.read().by_base.values().cloned().collect()
    }
}

// ---- sub-allocation of small hipMallocs ----------------------------------------------------

/// Bytes of a block that small `hipMalloc`s share: one `ALLOC_MEMORY_OF_GPU` +
/// `MAP_MEMORY_TO_GPU` for many allocations (the GPUVM fragment size, [`LARGE_ALIGN`]).
pub const BLOCK_SIZE: u64 = LARGE_ALIGN;
/// The smallest size class, bytes: the alignment every `hipMalloc` pointer keeps (clr aligns
/// device memory to at least 256 bytes).
pub const SMALL_MIN: u64 = 256;
/// The largest sub-allocated `hipMalloc`, bytes; larger ones get a BO of their own. With
/// power-of-two classes a block holds at least 8 slots, and the waste is bounded (under half of
/// a slot per allocation, one partly used block per class and device); above 256 KiB the kernel
/// round trip (tens of µs on hardware) is small next to what filling the memory costs.
pub const SMALL_MAX: u64 = 256 << 10;

/// The size class (slot bytes, a power of two) of a `hipMalloc` of `size` bytes, if it is
/// sub-allocated.
pub fn small_class(size: u64) -> Option<u64> {
    (size <= SMALL_MAX).then(|| size.max(SMALL_MIN).next_power_of_two())
}

/// A VRAM BO of [`BLOCK_SIZE`] bytes cut into equal slots of one size class, each slot one
/// `hipMalloc` (an [`Allocation`] with `Backing::Sub`). The registry holds one entry per slot in
/// use; the block itself is in no registry entry of its own.
#[derive(Debug)]
pub struct Block {
    pub bo: Bo,
    /// Bytes per slot.
    pub slot: u64,
    /// Free slot indices; changed only under [`SmallPool`]'s lock.
    free: Mutex<Vec<u32>>,
}

impl Block {
    fn slots(&self) -> usize {
        (self.bo.size / self.slot) as usize
    }
}

type BlockList = Vec<Arc<Block>>;

/// The blocks with free slots, per (device, size class). Full blocks are held only by their
/// allocations; the last free of a block releases it unless it is the only block of its class
/// with room (then it stays, empty, for the next `hipMalloc`, until [`Runtime::small_trim`]).
#[derive(Debug, Default)]
pub struct SmallPool {
    /// (device, slot bytes) → blocks with a free slot.
    classes: Mutex<HashMap<(usize, u64), BlockList>>,
    /// Freed `hipMalloc` BOs kept for reuse ([`Runtime::bo_cache_put`]).
    cache: Mutex<BoCache>,
}

/// The largest `hipMalloc` (bytes, page-rounded) whose BO [`hipFree`](Runtime::mem_free) keeps
/// for the next `hipMalloc` of the same page-rounded size, so that a steady-state
/// allocate/free cycle of up to this size makes no ioctl (ROCr keeps freed VRAM in its
/// fragment allocator's blocks the same way; CUDA's allocator caches too).
pub const BO_CACHE_MAX: u64 = 4 << 20;
/// VRAM bytes the cache keeps per device at most; past it, `hipFree` frees.
pub const BO_CACHE_BYTES: u64 = 64 << 20;

/// Idle whole BOs of freed `hipMalloc`s: each was one allocation, is mapped as it was then, and
/// was never exported. Given back by [`Runtime::small_trim`] (hipMemGetInfo, out of memory,
/// peer access changes, hipDeviceReset).
#[derive(Debug, Default)]
struct BoCache {
    /// (device, page-rounded bytes) → BOs.
    bos: HashMap<(usize, u64), Vec<Bo>>,
    /// Bytes kept per device.
    bytes: HashMap<usize, u64>,
}

impl Runtime {
    /// A slot of `slot` bytes in a block of device `dev` (a new block, GPU-mapped on `map_on`
    /// and CPU-mapped if `cpu`, when none has room). Returns the block and the slot's offset in
    /// it. Errors: those of [`bo_alloc`](Self::bo_alloc).
    fn small_alloc(&self, dev: usize, slot: u64, map_on: &[usize], cpu: bool) -> Result<(Arc<Block>, u64), hipError_t> {
        let mut classes = self.small.classes.lock();
        let list = classes.entry((dev, slot)).or_default();
        if list.is_empty() {
            let bo = self.bo_alloc(dev, BLOCK_SIZE, vram_flags(self.devices[dev].large_bar), map_on, cpu)?;
            let n = (BLOCK_SIZE / slot) as u32;
            list.push(Arc::new(Block { bo, slot, free: Mutex::new((0..n).rev().collect()) }));
        }
        let b = list.last().expect("a block with room").clone();
        let mut free = b.free.lock();
        let i = free.pop().expect("listed blocks have a free slot");
        if free.is_empty() {
            list.pop();
        }
        drop(free);
        Ok((b, i as u64 * slot))
    }

    /// Gives the slot at `offset` of `b` back (its allocation is out of the registry and no
    /// queued work uses it). A block left empty is freed (`FREE_MEMORY_OF_GPU`) unless it is the
    /// only one of its class with room.
    fn small_free(&self, owner: usize, b: &Arc<Block>, offset: u64) {
        let mut classes = self.small.classes.lock();
        let list = classes.entry((owner, b.slot)).or_default();
        let mut free = b.free.lock();
        free.push((offset / b.slot) as u32);
        let (was_full, empty) = (free.len() == 1, free.len() == b.slots());
        drop(free);
        if was_full {
            list.push(b.clone());
        }
        if empty && list.len() > 1 {
            list.retain(|x| !Arc::ptr_eq(x, b));
            self.allocs.forget_block(b.bo.va);
            self.bo_free(&b.bo);
        }
    }

    /// Keeps the BO of a freed `hipMalloc` (removed from the registry, no queued work on it)
    /// for reuse, if it is plain device memory of at most [`BO_CACHE_MAX`] bytes that was never
    /// exported and the device's cache has room; else gives it back. Either way `bo` is spent:
    /// the caller must not free it again.
    fn bo_cache_put(&self, bo: &Bo) {
        let plain = bo.flags == vram_flags(self.devices[bo.owner].large_bar)
            && bo.size <= BO_CACHE_MAX
            && !bo.va_kept
            && !bo.exported.load(Ordering::Relaxed)
            && bo.dmabuf.lock().is_none();
        let mut c = self.small.cache.lock();
        let kept = c.bytes.get(&bo.owner).copied().unwrap_or(0);
        if !plain || kept + bo.size > BO_CACHE_BYTES {
            drop(c);
            return self.bo_free(bo);
        }
        *c.bytes.entry(bo.owner).or_default() += bo.size;
        let mapped = std::mem::take(&mut *bo.mapped.lock());
        let copy = Bo::new(bo.va, bo.size, bo.handle, bo.owner, bo.flags, mapped, bo.cpu_mapped);
        c.bos.entry((bo.owner, bo.size)).or_default().push(copy);
    }

    /// A cached BO of exactly `size` (page-rounded) bytes on device `dev` mapped on exactly the
    /// devices `map_on`, if there is one. A BO mapped otherwise (peer access changed since) is
    /// freed on the way.
    fn bo_cache_take(&self, dev: usize, size: u64, map_on: &[usize]) -> Option<Bo> {
        let mut c = self.small.cache.lock();
        let bo = c.bos.get_mut(&(dev, size))?.pop()?;
        *c.bytes.entry(dev).or_default() -= size;
        drop(c);
        let mut want: Vec<u32> = map_on.iter().map(|&d| self.devices[d].gpu_id).collect();
        let mut have = bo.mapped.lock().clone();
        want.sort_unstable();
        have.sort_unstable();
        if want != have {
            self.bo_free(&bo);
            return None;
        }
        Some(bo)
    }

    /// Frees every empty block and every cached BO ([`BO_CACHE_MAX`]) (for `hipMemGetInfo`,
    /// peer access changes, `hipDeviceReset`, and before an allocation that ran out of memory
    /// gives up). Returns how many were freed.
    pub fn small_trim(&self) -> usize {
        let cached: Vec<Bo> = {
            let mut c = self.small.cache.lock();
            c.bytes.clear();
            c.bos.drain().flat_map(|(_, v)| v).collect()
        };
        let mut n = cached.len();
        for bo in &cached {
            self.bo_free(bo);
        }
        let mut classes = self.small.classes.lock();
        for list in classes.values_mut() {
            list.retain(|b| {
                let empty = b.free.lock().len() == b.slots();
                if empty {
                    self.allocs.forget_block(b.bo.va);
                    self.bo_free(&b.bo);
                    n += 1;
                }
                !empty
            });
        }
        n
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
    /// Maps `bo` into the GPUVM of `gpu` too (peer access, a memory pool's access list), unless
    /// it is there already; returns whether it mapped it now. Errors: `hipErrorOutOfMemory` (the
    /// `MAP_MEMORY_TO_GPU` ioctl failed; nothing changed).
    pub fn bo_map_on(&self, bo: &Bo, gpu: u32) -> Result<bool, hipError_t> {
        let mut mapped = bo.mapped.lock();
        if mapped.contains(&gpu) {
            return Ok(false);
        }
        self.kfd.map_memory_to_gpu(bo.handle, &[gpu]).map_err(|(e, _)| {
            crate::core::log::hipkfd_log!("map {:#x} on gpu {gpu:#x}: {e}", bo.va);
            hipError_t::hipErrorOutOfMemory
        })?;
        mapped.push(gpu);
        Ok(true)
    }

    /// `hipMalloc`: `size` bytes of VRAM on device `dev`, GPU-mapped there and CPU-mapped when
    /// the BAR is large. Returns the base address.
    pub fn mem_alloc_device(&self, dev: usize, size: u64) -> Result<u64, hipError_t> {
        self.mem_alloc_device_with(dev, size, 0)
    }

    /// [`mem_alloc_device`](Self::mem_alloc_device) with `KFD_IOC_ALLOC_MEM_FLAGS_*` `extra`
    /// added to the VRAM flags (`hipExtMallocWithFlags`: fine-grained is `COHERENT`, uncached
    /// adds `UNCACHED`); such an allocation always has a BO of its own.
    pub fn mem_alloc_device_with(&self, dev: usize, size: u64, extra: u32) -> Result<u64, hipError_t> {
        let d = &self.devices[dev];
        if size > d.topo.node.vram_size {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        // Mapped at once on every device that enabled peer access to `dev` (one MAP ioctl with
        // the device list); the guard keeps hipDeviceEnable/DisablePeerAccess out until the
        // allocation is in the registry.
        // Small ones are slots of a shared block (`small_alloc`). Out of memory, the empty
        // blocks are given back and the allocation tried once more.
        let (_peers, map_on) = self.peer_alloc_targets(dev);
        let mut retried = false;
        let a = loop {
            let a = match small_class(size).filter(|_| extra == 0) {
                Some(slot) => self.small_alloc(dev, slot, &map_on, d.large_bar).map(|(b, off)| Allocation {
                    base: b.bo.va + off,
                    size,
                    kind: MemKind::Device,
                    flags: 0,
                    owner: dev,
                    backing: Backing::Sub(b),
                    id: 0,
                    sync_memops: Default::default(),
                }),
                None => {
                    let cached = (extra == 0).then(|| self.bo_cache_take(dev, align_up(size, PAGE_SIZE), &map_on));
                    match cached.flatten() {
                        Some(bo) => Ok(bo),
                        None => self.bo_alloc(dev, size, vram_flags(d.large_bar) | extra, &map_on, d.large_bar),
                    }
                    .map(|bo| Allocation::with_bo(size, MemKind::Device, 0, bo))
                }
            };
            match a {
                Err(hipError_t::hipErrorOutOfMemory) if !retried && self.small_trim() > 0 => retried = true,
                a => break a?,
            }
        };
        let base = a.base;
        self.allocs.insert(a);
        crate::core::log::hipkfd_log!("hipMalloc {size} bytes on device {dev} at {base:#x}");
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

    /// `hipMallocManaged`: `size` bytes of coherent system memory, CPU-mapped and GPU-mapped on
    /// every device at one address; `flags` (`hipMemAttachGlobal`/`Host`, validated by the
    /// caller) are kept for `hipPointerGetAttributes`. No migration: every access is correct where
    /// it is, as with `hipMemAdvise(..., hipMemAdviseSetCoarseGrain)` unset on clr.
    pub fn mem_alloc_managed(&self, dev: usize, size: u64, flags: u32) -> Result<u64, hipError_t> {
        let all: Vec<usize> = (0..self.devices.len()).collect();
        let bo = self.bo_alloc(dev, size, gtt_flags(true), &all, true)?;
        let base = bo.va;
        self.allocs.insert(Allocation::with_bo(size, MemKind::Managed, flags, bo));
        Ok(base)
    }

    /// Frees the allocation whose base is `base` without waiting for the devices: for callers
    /// that know no queued work uses it (a memory pool's kept block whose last use is done).
    /// Unknown bases are ignored.
    pub fn mem_free_idle(&self, base: u64) {
        let _peers = self.peer_guard();
        if let Some(a) = self.allocs.remove(base) {
            self.release(&a);
        }
    }

    /// `hipFree`/`hipHostFree` (and `hipFree` of an external memory's mapped buffer): waits for
    /// every device (as `hipFree` implies), then unmaps and frees the allocation whose base is
    /// `base`. Errors: `hipErrorInvalidValue` for anything else.
    pub fn mem_free(&self, base: u64) -> Result<(), hipError_t> {
        let a = self.allocs.get(base).ok_or(hipError_t::hipErrorInvalidValue)?;
        if !matches!(a.kind, MemKind::Device | MemKind::Host | MemKind::External | MemKind::Managed) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        drop(a);
        self.free_synced(base)
    }

    /// Waits for every device, then unmaps and frees the allocation whose base is `base`,
    /// whatever its kind (the caller has checked it). Errors: `hipErrorInvalidValue` (gone).
    pub fn free_synced(&self, base: u64) -> Result<(), hipError_t> {
        for d in 0..self.devices.len() {
            self.device_sync(d)?;
        }
        // Keeps hipDeviceEnablePeerAccess from mapping the BO while it is being freed.
        let _peers = self.peer_guard();
        // Also forgets its IPC export, before the BO is freed.
        let a = self.allocs.remove(base).ok_or(hipError_t::hipErrorInvalidValue)?;
        self.release(&a);
        Ok(())
    }

    /// Gives back what an allocation removed from the registry holds: its slot of a shared block
    /// (small `hipMalloc`) or its own BO (a `hipMalloc`'s to the BO cache, [`BO_CACHE_MAX`]). VMM mappings and registered pages are released by
    /// their own paths (`hipMemUnmap`, `hipHostUnregister`).
    pub(crate) fn release(&self, a: &Allocation) {
        if a.kind == MemKind::Managed {
            self.advice().forget(a.base, a.size);
        }
        match &a.backing {
            Backing::Sub(b) => self.small_free(a.owner, b, a.base - b.bo.va),
            Backing::Bo(bo) if a.kind == MemKind::Device => self.bo_cache_put(bo),
            Backing::Bo(bo) => self.bo_free(bo),
            Backing::Array(obj) => obj.bo().into_iter().for_each(|bo| self.bo_free(bo)),
            Backing::Vmm(_) | Backing::UserPages(_) => {}
        }
    }
}
