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
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

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
    pub(crate) fn new(
        va: u64,
        size: u64,
        handle: u64,
        owner: usize,
        flags: u32,
        mapped: Vec<u32>,
        cpu_mapped: bool,
    ) -> Bo {
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

    /// Whether it is a slot of a [`Block`] (a small `hipMalloc`).
    pub fn is_slot(&self) -> bool {
        matches!(self.backing, Backing::Sub(_))
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

/// Memory exports: which token names which allocation, by base and [`Allocation::id`] (a slot
/// of a block has no `Arc` of its own to point to). Kept by the registry, so that an
/// allocation's export dies with it: [`Registry::remove`] forgets it.
#[derive(Debug, Default)]
struct Exports {
    /// Token → (base, id) of the allocation it names.
    by_token: HashMap<ExportToken, (u64, u64)>,
    /// Allocation base → token of its export.
    by_base: HashMap<u64, ExportToken>,
}

/// Hashes a block VA (2 MiB-aligned, so its low bits are zero) with one multiply: the keys of
/// [`Index::blocks`] need no SipHash.
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

/// The registry's index: every allocation with a registry entry of its own by base, and the
/// blocks of small `hipMalloc`s by VA. A slot of a block has no entry: its state word in the
/// block says whether it is live, so a pointer into one is found in O(1) however many there
/// are, and `hipMalloc`/`hipFree` of one write nothing here.
#[derive(Debug, Default)]
struct Index {
    by_base: BTreeMap<u64, Arc<Allocation>>,
    /// Block VA → block; from the block's creation until it is freed
    /// ([`Registry::add_block`], [`Registry::forget_block`]).
    blocks: HashMap<u64, Arc<Block>, std::hash::BuildHasherDefault<BlockHasher>>,
    /// The same blocks' VAs, in order (range queries).
    block_vas: BTreeSet<u64>,
    /// Array handle (`hipArray_t`) → base of its allocation (`MemKind::Array`).
    arrays: HashMap<u64, u64>,
}

impl Index {
    /// The block whose VA range holds `ptr`, if any.
    fn block(&self, ptr: u64) -> Option<&Arc<Block>> {
        self.blocks.get(&(ptr & !(BLOCK_SIZE - 1)))
    }

    /// The first live slot of a block that intersects `[start, end)`.
    fn first_slot_in(&self, start: u64, end: u64) -> Option<Arc<Allocation>> {
        for &va in self.block_vas.range(start.saturating_sub(BLOCK_SIZE - 1)..end) {
            let b = &self.blocks[&va];
            let (first, last) = (b.index(start.max(va)), b.index((end - 1).min(va + BLOCK_SIZE - 1)));
            for i in first..=last {
                let w = b.word(i);
                if w.is_live() && b.slot_base(i) + w.size().max(1) > start {
                    return Some(Arc::new(b.allocation(i, w)));
                }
            }
        }
        None
    }
}

/// Allocation ids (`Allocation::id`) not handed out yet.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// `n` allocation ids of the process's unique sequence (a thread takes a batch for its small
/// `hipMalloc`s, src/core/small.rs).
pub(crate) fn new_ids(n: u64) -> std::ops::Range<u64> {
    let first = NEXT_ID.fetch_add(n, Ordering::Relaxed);
    first..first + n
}

/// The allocation registry: base address → allocation, the blocks of small allocations, and
/// the allocations' exports.
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
    /// Registers an allocation with a registry entry of its own (every kind but a slot of a
    /// block, which [`Block`] tracks) and gives it its id.
    pub fn insert(&self, mut a: Allocation) -> Arc<Allocation> {
        debug_assert!(!a.is_slot(), "slots of blocks are live by their state word, not by an entry");
        a.id = new_ids(1).start;
        let a = Arc::new(a);
        let mut m = self.map.write();
        if let Some(h) = a.array_handle() {
            m.arrays.insert(h, a.base);
        }
        m.by_base.insert(a.base, a.clone());
        a
    }

    /// Registers a new block of small allocations (all its slots free).
    pub fn add_block(&self, b: Arc<Block>) {
        let mut m = self.map.write();
        m.block_vas.insert(b.bo.va);
        m.blocks.insert(b.bo.va, b);
    }

    /// Forgets the block at `va`, which is being freed (its VA may be reused).
    pub fn forget_block(&self, va: u64) {
        let mut m = self.map.write();
        m.blocks.remove(&va);
        m.block_vas.remove(&va);
    }

    /// Every registered block.
    pub fn blocks(&self) -> Vec<Arc<Block>> {
        self.map.read().blocks.values().cloned().collect()
    }

    /// The block whose VA range holds `ptr`, if any.
    pub fn block_of(&self, ptr: u64) -> Option<Arc<Block>> {
        self.map.read().block(ptr).cloned()
    }

    /// Removes the allocation whose base is exactly `base` (a slot: marks it free), and forgets
    /// its export: its token stops being served. Done before the caller frees the memory, so no
    /// export of freed memory is ever made ([`with_export`](Self::with_export) holds the export
    /// lock while exporting).
    pub fn remove(&self, base: u64) -> Option<Arc<Allocation>> {
        let a = match self.block_of(base) {
            Some(b) => {
                let i = b.index(base);
                let w = loop {
                    let w = b.word(i);
                    if !w.is_live() || b.slot_base(i) != base {
                        return None;
                    }
                    // Fails only if a concurrent call changed the word (freed it, or set its
                    // sync flag): look again.
                    if b.clear(i, w) {
                        break w;
                    }
                };
                Arc::new(b.allocation(i, w))
            }
            None => {
                let mut m = self.map.write();
                let a = m.by_base.remove(&base)?;
                if let Some(h) = a.array_handle() {
                    m.arrays.remove(&h);
                }
                a
            }
        };
        self.forget_export(base);
        Some(a)
    }

    /// Frees slot `i` of `b` if its state word is still `w` (a live allocation a caller found);
    /// forgets the allocation's export. Returns whether it did. The slot is the caller's to
    /// give back.
    pub fn free_slot(&self, b: &Block, i: usize, w: SlotWord) -> bool {
        if !b.clear(i, w) {
            return false;
        }
        self.forget_export(b.slot_base(i));
        true
    }

    /// Forgets the export of the allocation at `base` (being removed).
    fn forget_export(&self, base: u64) {
        // An export that found the allocation set `any_export` before its lookup, which came
        // before the removal (SeqCst both): this load sees it.
        if self.any_export.load(Ordering::SeqCst) {
            let mut ex = self.exports.lock();
            if let Some(t) = ex.by_base.remove(&base) {
                ex.by_token.remove(&t);
            }
        }
    }

    /// The export token of `a`: the one it already has, else `new_token()` (a recycled base gets
    /// a new token, never the freed allocation's). `None` when `a` is no longer in the registry
    /// (a concurrent free).
    pub fn export_token(&self, a: &Allocation, new_token: impl FnOnce() -> ExportToken) -> Option<ExportToken> {
        let mut ex = self.exports.lock();
        self.any_export.store(true, Ordering::SeqCst);
        // Re-check under the lock: a concurrent `remove` may have taken it out.
        if self.get(a.base).is_none_or(|cur| cur.id != a.id) {
            return None;
        }
        let me = (a.base, a.id);
        let existing = ex.by_base.get(&a.base).copied().filter(|t| ex.by_token.get(t) == Some(&me));
        Some(match existing {
            Some(t) => t,
            None => {
                let t = new_token();
                if let Some(old) = ex.by_base.insert(a.base, t) {
                    ex.by_token.remove(&old);
                }
                ex.by_token.insert(t, me);
                t
            }
        })
    }

    /// Runs `f` on the live allocation exported as `token`, holding the export lock meanwhile:
    /// a concurrent [`remove`](Self::remove) (hipFree) waits, so the memory stays live inside
    /// `f`. `None` for an unknown, forgotten or dead token.
    pub fn with_export<R>(&self, token: &ExportToken, f: impl FnOnce(&Allocation) -> R) -> Option<R> {
        let ex = self.exports.lock();
        let &(base, id) = ex.by_token.get(token)?;
        let a = self.get(base).filter(|a| a.id == id)?;
        Some(f(&a))
    }

    /// The allocation containing `ptr` (`base <= ptr < base + size`): O(1) in a block of small
    /// allocations (a copy of the slot's allocation, made from its state word), else O(log n).
    pub fn find(&self, ptr: u64) -> Option<Arc<Allocation>> {
        let m = self.map.read();
        if let Some(b) = m.block(ptr) {
            // A block holds nothing but its slots: a pointer between allocations is in none.
            let i = b.index(ptr);
            let w = b.word(i);
            return (w.is_live() && ptr < b.slot_base(i) + w.size()).then(|| Arc::new(b.allocation(i, w)));
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
        if let Some(b) = m.block(ptr) {
            let i = b.index(ptr);
            let (w, base) = (b.word(i), b.slot_base(i));
            return (w.is_live() && ptr < base + w.size()).then_some(Span {
                base,
                size: w.size(),
                kind: MemKind::Device,
                flags: 0,
                owner: b.bo.owner,
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

    /// Sets `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` of the allocation containing `ptr`. Returns
    /// whether there is one.
    pub fn set_sync_memops(&self, ptr: u64, v: bool) -> bool {
        let m = self.map.read();
        if let Some(b) = m.block(ptr) {
            return b.set_sync_memops(b.index(ptr), ptr, v);
        }
        let Some((_, a)) = m.by_base.range(..=ptr).next_back() else { return false };
        if ptr >= a.base + a.size.max(1) {
            return false;
        }
        a.sync_memops.store(v, Ordering::Relaxed);
        true
    }

    /// The first allocation that intersects `[start, start + len)`, if any: O(log n), plus the
    /// slots of the blocks in the range.
    pub fn find_in(&self, start: u64, len: u64) -> Option<Arc<Allocation>> {
        let end = start.saturating_add(len.max(1));
        let m = self.map.read();
        let whole = match m.by_base.range(..=start).next_back() {
            Some((_, a)) if a.end() > start => Some(a.clone()),
            _ => m.by_base.range(start..end).next().map(|(_, a)| a.clone()),
        };
        match (whole, m.first_slot_in(start, end)) {
            (Some(a), Some(s)) => Some(if s.base < a.base { s } else { a }),
            (a, s) => a.or(s),
        }
    }

    /// The allocation whose base is exactly `base`.
    pub fn get(&self, base: u64) -> Option<Arc<Allocation>> {
        let m = self.map.read();
        if let Some(b) = m.block(base) {
            let i = b.index(base);
            let w = b.word(i);
            return (w.is_live() && b.slot_base(i) == base).then(|| Arc::new(b.allocation(i, w)));
        }
        m.by_base.get(&base).cloned()
    }

    /// The array allocation whose handle is `handle` (`hipArray_t`), if it is live.
    pub fn array(&self, handle: u64) -> Option<Arc<Allocation>> {
        let m = self.map.read();
        m.arrays.get(&handle).and_then(|b| m.by_base.get(b)).cloned()
    }

    /// Every allocation, the live slots of blocks included (`hipDeviceReset`).
    pub fn all(&self) -> Vec<Arc<Allocation>> {
        let m = self.map.read();
        let slots = m.blocks.values().flat_map(|b| b.live().map(|(i, w)| Arc::new(b.allocation(i, w))));
        m.by_base.values().cloned().chain(slots).collect()
    }

    /// Every allocation with a registry entry of its own: all but the slots of blocks, whose
    /// memory is the blocks' ([`blocks`](Self::blocks)).
    pub fn all_but_slots(&self) -> Vec<Arc<Allocation>> {
        self.map.read().by_base.values().cloned().collect()
    }
}

// ---- blocks of small hipMallocs ------------------------------------------------------------

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

/// Bits of a [`SlotWord`] that hold the allocation's size.
const SLOT_SIZE_BITS: u32 = 20;
const _: () = assert!(SMALL_MAX < 1 << SLOT_SIZE_BITS);
/// The [`SlotWord`] bit of `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS`.
const SLOT_SYNC: u64 = 1 << SLOT_SIZE_BITS;
/// Where a [`SlotWord`]'s allocation id starts (43 bits of id).
const SLOT_ID_SHIFT: u32 = SLOT_SIZE_BITS + 1;

/// The state of one slot of a [`Block`], one word so that it is written and read whole: 0 while
/// the slot is free (in its block's pool list or in a thread's cache, src/core/small.rs), else
/// the live allocation's size in bytes (bits 0-19), `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` (bit 20)
/// and [`Allocation::id`] (bits 21-63; ids start at 1, so a live word is never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotWord(u64);

impl SlotWord {
    /// A live allocation of `size` bytes with id `id`.
    pub fn live(size: u64, id: u64) -> SlotWord {
        debug_assert!(size <= SMALL_MAX && id > 0 && id < 1 << (64 - SLOT_ID_SHIFT));
        SlotWord(id << SLOT_ID_SHIFT | size)
    }
    pub fn is_live(self) -> bool {
        self.0 != 0
    }
    /// Bytes the user asked for.
    pub fn size(self) -> u64 {
        self.0 & (SLOT_SYNC - 1)
    }
    pub fn sync_memops(self) -> bool {
        self.0 & SLOT_SYNC != 0
    }
    pub fn id(self) -> u64 {
        self.0 >> SLOT_ID_SHIFT
    }
}

/// A VRAM BO of [`BLOCK_SIZE`] bytes cut into equal slots of one size class, each slot one
/// small `hipMalloc`. The block is registered once ([`Registry::add_block`]), from its creation
/// until it is freed; each slot's liveness, size and attributes are its [`SlotWord`], written by
/// the thread that allocates or frees it, so that neither takes a lock another thread takes.
#[derive(Debug)]
pub struct Block {
    pub bo: Bo,
    /// Bytes per slot.
    pub slot: u64,
    /// Each slot's state.
    words: Box<[AtomicU64]>,
    /// Slot indices free in the shared pool (in no thread's cache, not live); changed only
    /// under the pool's lock (src/core/small.rs).
    pub(crate) free: Mutex<Vec<u32>>,
}

impl Block {
    /// A block of `slot`-byte slots in `bo` ([`BLOCK_SIZE`] bytes), every slot free in the pool.
    pub fn new(bo: Bo, slot: u64) -> Block {
        let n = (bo.size / slot) as u32;
        Block { bo, slot, words: (0..n).map(|_| AtomicU64::new(0)).collect(), free: Mutex::new((0..n).rev().collect()) }
    }

    /// How many slots it has.
    pub fn slots(&self) -> usize {
        self.words.len()
    }

    /// The index of the slot holding `ptr` (inside the block).
    pub fn index(&self, ptr: u64) -> usize {
        ((ptr - self.bo.va) / self.slot) as usize
    }

    /// The address of slot `i`.
    pub fn slot_base(&self, i: usize) -> u64 {
        self.bo.va + i as u64 * self.slot
    }

    /// Slot `i`'s state.
    pub fn word(&self, i: usize) -> SlotWord {
        SlotWord(self.words[i].load(Ordering::SeqCst))
    }

    /// Makes slot `i` (free, and the caller's: taken from a thread's cache or the pool) live.
    pub(crate) fn set_live(&self, i: usize, w: SlotWord) {
        self.words[i].store(w.0, Ordering::Release);
    }

    /// Frees slot `i` if its word is still `w`; returns whether it did.
    fn clear(&self, i: usize, w: SlotWord) -> bool {
        w.is_live() && self.words[i].compare_exchange(w.0, 0, Ordering::SeqCst, Ordering::Relaxed).is_ok()
    }

    /// Sets the sync-memops bit of slot `i` if it is live and holds `ptr`; returns whether it
    /// did.
    fn set_sync_memops(&self, i: usize, ptr: u64, v: bool) -> bool {
        let r = self.words[i].fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| {
            let s = SlotWord(w);
            (s.is_live() && ptr < self.slot_base(i) + s.size()).then_some(if v {
                w | SLOT_SYNC
            } else {
                w & !SLOT_SYNC
            })
        });
        r.is_ok()
    }

    /// The live slots and their words.
    pub fn live(&self) -> impl Iterator<Item = (usize, SlotWord)> + '_ {
        (0..self.slots()).map(|i| (i, self.word(i))).filter(|(_, w)| w.is_live())
    }

    /// The allocation in slot `i`, whose word is `w`, as every API sees it (a copy: its
    /// sync-memops flag is set through [`Registry::set_sync_memops`]).
    pub fn allocation(self: &Arc<Self>, i: usize, w: SlotWord) -> Allocation {
        Allocation {
            base: self.slot_base(i),
            size: w.size(),
            kind: MemKind::Device,
            flags: 0,
            owner: self.bo.owner,
            backing: Backing::Sub(self.clone()),
            id: w.id(),
            sync_memops: AtomicBool::new(w.sync_memops()),
        }
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
        // Small ones are slots of a shared block, from this thread's cache (src/core/small.rs):
        // no lock another thread takes, no registry entry. Out of memory, every cached slot and
        // BO is given back (`small_trim`) and the allocation tried once more.
        if let Some(slot) = small_class(size).filter(|_| extra == 0) {
            let base = match self.small_alloc(dev, slot, size) {
                Err(hipError_t::hipErrorOutOfMemory) => {
                    // Other threads' cached slots of this class count too: try again after any trim.
                    self.small_trim();
                    self.small_alloc(dev, slot, size)?
                }
                r => r?,
            };
            crate::core::log::hipkfd_log!("hipMalloc {size} bytes on device {dev} at {base:#x} (a slot)");
            return Ok(base);
        }
        // Mapped at once on every device that enabled peer access to `dev` (one MAP ioctl with
        // the device list); the guard keeps hipDeviceEnable/DisablePeerAccess out until the
        // allocation is in the registry.
        let (_peers, map_on) = self.peer_alloc_targets(dev);
        let mut retried = false;
        let a = loop {
            let cached = (extra == 0).then(|| self.bo_cache_take(dev, align_up(size, PAGE_SIZE), &map_on));
            let a = match cached.flatten() {
                Some(bo) => Ok(bo),
                None => self.bo_alloc(dev, size, vram_flags(d.large_bar) | extra, &map_on, d.large_bar),
            }
            .map(|bo| Allocation::with_bo(size, MemKind::Device, 0, bo));
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
        // A slot of a block this thread caches slots of, on idle devices: freed into the cache.
        if let Some(r) = self.small_free_cached(base) {
            return r;
        }
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
    /// (small `hipMalloc`) or its own BO (a `hipMalloc`'s to the BO cache,
    /// [`crate::core::small::BO_CACHE_MAX`]). VMM mappings and registered pages are released by
    /// their own paths (`hipMemUnmap`, `hipHostUnregister`).
    pub(crate) fn release(&self, a: &Allocation) {
        if a.kind == MemKind::Managed {
            self.advice().forget(a.base, a.size);
        }
        match &a.backing {
            Backing::Sub(b) => self.small_free(b, b.index(a.base)),
            Backing::Bo(bo) if a.kind == MemKind::Device => self.bo_cache_put(bo),
            Backing::Bo(bo) => self.bo_free(bo),
            Backing::Array(obj) => obj.bo().into_iter().for_each(|bo| self.bo_free(bo)),
            Backing::Vmm(_) | Backing::UserPages(_) => {}
        }
    }
}
