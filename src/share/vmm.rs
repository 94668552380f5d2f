//! Virtual memory management: `hipMemCreate`, `hipMemAddressReserve`, `hipMemMap`,
//! `hipMemSetAccess`, shareable handles (HIP doc "Virtual Memory Management"; CUDA's `cuMem*`
//! semantics where HIP is silent).
//!
//! How it reaches the kernel (as ROCr's `VMemory*`, `rocm-internals.md` §4, minus ROCr's gaps):
//! - A **chunk** (`hipMemCreate`) is a BO with no VA and no mapping:
//!   `AMDKFD_IOC_ALLOC_MEMORY_OF_GPU {va_addr = 0}` (VRAM, or GTT for host chunks).
//! - A **reservation** (`hipMemAddressReserve`) is a range of the one VA manager's `PROT_NONE`
//!   aperture (`src/core/va.rs`): no ioctl, and no other allocation can land on it.
//! - A **mapping** (`hipMemMap`) is an entry of the one allocation registry
//!   (`MemKind::Vmm`), so every other API treats it as device memory; no GPU mapping yet.
//! - **Access** (`hipMemSetAccess`) for device `d`: the chunk is exported once as a dma-buf
//!   (`AMDKFD_IOC_EXPORT_DMABUF`), imported on `d`'s render node (`DRM_IOCTL_PRIME_FD_TO_HANDLE`
//!   on the fd `AMDKFD_IOC_ACQUIRE_VM` bound, so its GEM handle maps into `d`'s compute VM) and
//!   the fd is closed at once; then `DRM_IOCTL_AMDGPU_GEM_VA` maps the range with
//!   `AMDGPU_VM_PAGE_READABLE|EXECUTABLE`, plus `WRITEABLE` only for `ProtReadWrite` (a read-only
//!   range really is read-only on the GPU; libdrm and so ROCm map everything writable). The CPU
//!   maps the range through the owner's render node (`DRM_IOCTL_AMDGPU_GEM_MMAP`) with the
//!   widest access any location has, when the memory is host-mappable (large-BAR VRAM, host
//!   chunks).
//! - The runtime keeps GEM handles, never fds: no fd per chunk.
//!
//! Handles (`hipMemGenericAllocationHandle_t`) are ids into a table, never pointers, so a stale
//! or forged handle is `hipErrorInvalidValue`, not a crash. A chunk lives while it has handle
//! references (create, retain, import) or mappings: release before unmap is legal.
//!
//! Layer `share`: may call `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::core::caller::rocm5_caller;
use crate::core::memory::{Allocation, Backing, MemKind};
use crate::core::runtime::Runtime;
use crate::core::va::{LARGE_ALIGN, PAGE_SIZE};
use kfd_ioctl::amdgpu::*;
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd, RawFd};
use std::sync::Arc;

type HipResult<T> = Result<T, hipError_t>;
const INVALID: hipError_t = hipError_t::hipErrorInvalidValue;

/// `hipMemAllocationGranularityMinimum`: the page (bytes), as ROCr's `RUNTIME_ALLOC_GRANULE`.
pub const GRANULARITY_MIN: u64 = PAGE_SIZE;
/// `hipMemAllocationGranularityRecommended`: the GPUVM fragment (2 MiB), as ROCr's
/// `RUNTIME_ALLOC_REC_GRANULE`.
pub const GRANULARITY_RECOMMENDED: u64 = LARGE_ALIGN;

/// A `hipMemAllocationProp`, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocProp {
    pub ty: hipMemAllocationType,
    pub handle_types: hipMemAllocationHandleType,
    pub location: hipMemLocation,
    /// Whether the caller used the ROCm ≤ 5.2 layout (answered in the same layout); `None` when
    /// no caller gave it (an imported handle): answered in [`caller_layout_is_legacy`]'s.
    pub legacy: Option<bool>,
}

/// The `hipMemAllocationProp` layout this process's callers last passed in: 0 none yet, 1 ROCm
/// 5.3+, 2 ROCm ≤ 5.2 (set by [`AllocProp::read`] when it tells them apart).
static SEEN_LAYOUT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The layout to answer in when no caller gave one (the properties of an imported handle, issue
/// 39): the layout this process's callers last passed in (`hipMemCreate`,
/// `hipMemGetAllocationGranularity`, ...), else ROCm ≤ 5.2's for a ROCm 5 caller
/// ([`rocm5_caller`]: ours loaded as `libamdhip64.so.5`, or a ROCm 5 program with ours
/// preloaded), else ROCm 7's.
pub fn caller_layout_is_legacy() -> bool {
    match SEEN_LAYOUT.load(std::sync::atomic::Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => rocm5_caller(),
    }
}

impl AllocProp {
    /// Reads a `hipMemAllocationProp` in either ABI. The ROCm 5.3+ layout has `type` at 0 and
    /// `location` at 8; the ROCm ≤ 5.2 one has `compressionType` (a byte) at 0, `location` at 4,
    /// `requestedHandleType` at 12 and `type` at 16. A struct whose first word is a valid
    /// allocation type is the new layout; otherwise, if the word at 16 is a valid type and the
    /// word at 4 a valid location type, the old one (in the new layout those are the low half of
    /// `win32HandleMetaData`, null on Linux, and the handle type); anything else is read as the
    /// new layout and fails validation. Errors: `hipErrorInvalidValue` for null.
    pub fn read(p: *const hipMemAllocationProp) -> HipResult<AllocProp> {
        if p.is_null() {
            return Err(INVALID);
        }
        // SAFETY: non-null pointer to a 32-byte hipMemAllocationProp from the caller (HIP API
        // contract); read as plain bytes, unaligned reads tolerated.
        let b: [u8; 32] = unsafe { std::ptr::read_unaligned(p as *const [u8; 32]) };
        let w = |o: usize| i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let valid_ty = |t: i32| {
            [hipMemAllocationType::hipMemAllocationTypePinned, hipMemAllocationType::hipMemAllocationTypeUncached]
                .contains(&hipMemAllocationType(t))
        };
        let valid_loc = |t: i32| (1..=4).contains(&t);
        let seen = |layout: u8| SEEN_LAYOUT.store(layout, std::sync::atomic::Ordering::Relaxed);
        if !valid_ty(w(0)) && valid_ty(w(16)) && valid_loc(w(4)) {
            seen(2);
            return Ok(AllocProp {
                ty: hipMemAllocationType(w(16)),
                handle_types: hipMemAllocationHandleType(w(12)),
                location: hipMemLocation { r#type: hipMemLocationType(w(4)), id: w(8) },
                legacy: Some(true),
            });
        }
        if valid_ty(w(0)) {
            seen(1);
        }
        Ok(AllocProp {
            ty: hipMemAllocationType(w(0)),
            handle_types: hipMemAllocationHandleType(w(4)),
            location: hipMemLocation { r#type: hipMemLocationType(w(8)), id: w(12) },
            legacy: Some(false),
        })
    }

    /// Writes the properties in the layout the caller uses (for an imported handle:
    /// [`caller_layout_is_legacy`]). Errors: `hipErrorInvalidValue`.
    pub fn write(&self, p: *mut hipMemAllocationProp) -> HipResult<()> {
        if p.is_null() {
            return Err(INVALID);
        }
        let mut b = [0u8; 32];
        let mut put = |o: usize, v: i32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
        if self.legacy.unwrap_or_else(caller_layout_is_legacy) {
            put(4, self.location.r#type.0);
            put(8, self.location.id);
            put(12, self.handle_types.0);
            put(16, self.ty.0);
        } else {
            put(0, self.ty.0);
            put(4, self.handle_types.0);
            put(8, self.location.r#type.0);
            put(12, self.location.id);
        }
        // SAFETY: non-null out-pointer to a 32-byte hipMemAllocationProp (HIP API contract).
        unsafe { std::ptr::write_unaligned(p as *mut [u8; 32], b) };
        Ok(())
    }

    fn is_host(&self) -> bool {
        self.location.r#type != hipMemLocationType::hipMemLocationTypeDevice
    }

    /// Checks type and location for `hipMemCreate` / `hipMemGetAllocationGranularity`; returns
    /// the owning device (for host memory: `current`). Errors: `hipErrorInvalidValue` (type,
    /// location type), `bad_id` (device id out of range).
    fn check(&self, devices: usize, current: usize, bad_id: hipError_t) -> HipResult<usize> {
        if !matches!(
            self.ty,
            hipMemAllocationType::hipMemAllocationTypePinned | hipMemAllocationType::hipMemAllocationTypeUncached
        ) {
            return Err(INVALID);
        }
        match self.location.r#type {
            hipMemLocationType::hipMemLocationTypeDevice => {
                usize::try_from(self.location.id).ok().filter(|&d| d < devices).ok_or(bad_id)
            }
            hipMemLocationType::hipMemLocationTypeHost
            | hipMemLocationType::hipMemLocationTypeHostNuma
            | hipMemLocationType::hipMemLocationTypeHostNumaCurrent => Ok(current),
            _ => Err(INVALID),
        }
    }
}

/// A physical chunk (`hipMemCreate`, `hipMemImportFromShareableHandle`).
#[derive(Debug)]
pub struct Chunk {
    /// The `hipMemGenericAllocationHandle_t` value.
    pub id: u64,
    /// KFD handle (`gpu_id << 32 | idr`) of the BO (ALLOC or IMPORT_DMABUF, `va_addr` 0).
    pub kfd_handle: u64,
    /// HIP ordinal of the device whose memory it is (host chunks: the device that made the BO).
    pub owner: usize,
    /// Bytes.
    pub size: u64,
    /// System memory (GTT) rather than VRAM.
    pub host: bool,
    pub prop: AllocProp,
    /// The owner's render-node mmap offset that ALLOC_MEMORY_OF_GPU returned (the kernel allows
    /// the pdd's DRM file, our render fd, to map it): a CPU mapping needs no GEM_MMAP. None for
    /// imports (IMPORT_DMABUF returns no offset).
    mmap_offset: Option<u64>,
    st: Mutex<ChunkState>,
}

#[derive(Debug)]
struct ChunkState {
    /// Handle references: create/import/retain add one, `hipMemRelease` drops one.
    refs: u32,
    /// Live `hipMemMap`s.
    maps: u32,
    /// GEM handle of the chunk on each device's render node, once imported there.
    gem: Vec<Option<u32>>,
    /// dma-buf identity (`st_dev`, `st_ino`) once exported or imported.
    dmabuf: Option<(u64, u64)>,
}

/// One `hipMemMap`: `size` bytes at `va`, backed by `chunk` from `offset` on.
#[derive(Debug)]
pub struct Mapping {
    pub va: u64,
    pub size: u64,
    pub offset: u64,
    pub chunk: Arc<Chunk>,
    access: Mutex<Access>,
}

#[derive(Debug, Clone)]
struct Access {
    /// Per device ordinal.
    dev: Vec<hipMemAccessFlags>,
    host: hipMemAccessFlags,
    /// `PROT_*` of the CPU mapping now in place (`PROT_NONE`: the aperture's placeholder).
    cpu: libc::c_int,
}

impl Mapping {
    /// Devices (bit per ordinal) that may read (`write == false`) or write the mapping.
    pub fn device_mask(&self, write: bool) -> u64 {
        let a = self.access.lock();
        a.dev.iter().enumerate().filter(|(_, f)| allows(**f, write)).fold(0, |m, (d, _)| m | 1 << d)
    }
}

fn allows(f: hipMemAccessFlags, write: bool) -> bool {
    if write {
        f == hipMemAccessFlags::hipMemAccessFlagsProtReadWrite
    } else {
        f != hipMemAccessFlags::hipMemAccessFlagsProtNone
    }
}

/// The process's VMM state: chunks by handle id, reservations, dma-buf identities.
#[derive(Debug, Default)]
pub struct VmmState {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    chunks: HashMap<u64, Arc<Chunk>>,
    /// Reservation base → size (bytes).
    reservations: BTreeMap<u64, u64>,
    /// dma-buf identity → chunk id (same dma-buf imported twice → same handle).
    by_dmabuf: HashMap<(u64, u64), u64>,
    next_id: u64,
}

impl Inner {
    /// A chunk the caller holds a reference to. Errors: `hipErrorInvalidValue`.
    fn live(&self, id: u64) -> HipResult<Arc<Chunk>> {
        let c = self.chunks.get(&id).ok_or(INVALID)?;
        if c.st.lock().refs == 0 {
            return Err(INVALID);
        }
        Ok(c.clone())
    }

    /// A handle id no live chunk has: `0x4d4d` (`MM`) in the top 16 bits, a 44-bit counter in
    /// bits 4..48, so ids look like no pointer and no small integer. The counter wraps after 2^44
    /// creates (≈ 200 days at a million a second); a wrapped id skips those still in the table.
    fn new_id(&mut self) -> u64 {
        const COUNTER: u64 = (1 << 44) - 1;
        loop {
            self.next_id = self.next_id.wrapping_add(1) & COUNTER;
            let id = 0x4d4d_0000_0000_0000 | self.next_id << 4;
            if self.next_id != 0 && !self.chunks.contains_key(&id) {
                return id;
            }
        }
    }
}

fn dmabuf_identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat on an fd number the caller gave; the kernel validates it.
    let st = nix::sys::stat::fstat(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    Some((st.st_dev, st.st_ino))
}

/// The largest fd number the system can hand out (`fs.nr_open`, 1,048,576 by default).
fn max_fd() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(1 << 20)
}

/// `osHandle` of `hipMemImportFromShareableHandle`: CUDA and ROCm 7 pass the fd cast to a
/// pointer, ROCm ≤ 6 a pointer to an `int` fd. A value below `fs.nr_open` cannot be a user-space
/// pointer (nothing is mapped that low: `vm.mmap_min_addr` and non-PIE text start above it), so
/// it is the fd; anything else is dereferenced. Errors: `hipErrorInvalidValue` for null.
pub fn os_handle_fd(os_handle: *mut libc::c_void) -> HipResult<RawFd> {
    let v = os_handle as u64;
    if v == 0 {
        return Err(INVALID);
    }
    if v < max_fd() {
        return Ok(v as RawFd);
    }
    // SAFETY: not a small integer, so the caller's pointer to an int fd (ROCm ≤ 6 convention).
    Ok(unsafe { std::ptr::read_unaligned(os_handle as *const RawFd) })
}

impl Runtime {
    /// `hipMemGetAllocationGranularity`: [`GRANULARITY_MIN`] or [`GRANULARITY_RECOMMENDED`]
    /// bytes. Errors: `hipErrorInvalidValue` (option, type, location, device id).
    pub fn vmm_granularity(&self, prop: &AllocProp, option: hipMemAllocationGranularity_flags) -> HipResult<u64> {
        prop.check(self.devices.len(), 0, INVALID)?;
        match option {
            hipMemAllocationGranularity_flags::hipMemAllocationGranularityMinimum => Ok(GRANULARITY_MIN),
            hipMemAllocationGranularity_flags::hipMemAllocationGranularityRecommended => Ok(GRANULARITY_RECOMMENDED),
            _ => Err(INVALID),
        }
    }

    /// `hipMemAddressReserve`: `size` bytes of VA aligned to `align` (0: 2 MiB for sizes of at
    /// least 2 MiB, else a page), at `hint` when that range is free and aligned. Errors:
    /// `hipErrorInvalidValue` (size 0 or not a page multiple, alignment not a power of two),
    /// `hipErrorOutOfMemory` (aperture full).
    pub fn vmm_reserve(&self, size: u64, align: u64, hint: u64) -> HipResult<u64> {
        if size == 0 || !size.is_multiple_of(GRANULARITY_MIN) || (align != 0 && !align.is_power_of_two()) {
            return Err(INVALID);
        }
        let align = match align {
            0 if size >= LARGE_ALIGN => LARGE_ALIGN,
            0 => PAGE_SIZE,
            a => a.max(PAGE_SIZE),
        };
        let mut inner = self.vmm().inner.lock();
        let va = if hint != 0 && hint.is_multiple_of(align) && self.va.alloc_at(hint, size) {
            hint
        } else {
            self.va.alloc(size, align).ok_or(hipError_t::hipErrorOutOfMemory)?
        };
        inner.reservations.insert(va, size);
        crate::core::log::hipkfd_log!("hipMemAddressReserve {size} bytes at {va:#x}");
        Ok(va)
    }

    /// `hipMemAddressFree`: gives back a whole reservation. Errors: `hipErrorInvalidValue` (not
    /// the base and size of a reservation, or still mapped: unmap first).
    pub fn vmm_address_free(&self, va: u64, size: u64) -> HipResult<()> {
        let mut inner = self.vmm().inner.lock();
        if inner.reservations.get(&va) != Some(&size) {
            return Err(INVALID);
        }
        if self.allocs.find_in(va, size).is_some() {
            return Err(INVALID);
        }
        inner.reservations.remove(&va);
        self.va.free(va, size);
        Ok(())
    }

    /// `hipMemCreate`: a chunk of `size` bytes with no mapping; `current` owns host chunks.
    /// Errors: `hipErrorInvalidValue` (size, type, location, flags), `hipErrorInvalidDevice`
    /// (device id), `hipErrorNotSupported` (Win32 / fabric handle types), `hipErrorOutOfMemory`.
    pub fn vmm_create(&self, size: u64, prop: &AllocProp, current: usize) -> HipResult<u64> {
        let owner = prop.check(self.devices.len(), current, hipError_t::hipErrorInvalidDevice)?;
        let fd_type = hipMemAllocationHandleType::hipMemHandleTypePosixFileDescriptor.0;
        let known = fd_type | 2 | 4 | 8;
        if prop.handle_types.0 & !known != 0 {
            return Err(INVALID);
        }
        if prop.handle_types.0 & !fd_type != 0 {
            return Err(hipError_t::hipErrorNotSupported);
        }
        if size == 0 || !size.is_multiple_of(GRANULARITY_MIN) {
            return Err(INVALID);
        }
        let d = &self.devices[owner];
        let host = prop.is_host();
        let mut flags =
            if host { crate::core::memory::gtt_flags(true) } else { crate::core::memory::vram_flags(d.large_bar) };
        if prop.ty == hipMemAllocationType::hipMemAllocationTypeUncached {
            flags |= KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
        }
        if !host && size > d.topo.node.vram_size {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        let mut args =
            kfd_ioctl_alloc_memory_of_gpu_args { va_addr: 0, size, gpu_id: d.gpu_id, flags, ..Default::default() };
        self.kfd.alloc_memory_of_gpu(&mut args).map_err(|e| {
            crate::core::log::hipkfd_log!("hipMemCreate: ALLOC_MEMORY_OF_GPU {size} bytes: {e}");
            if e == Errno::EINVAL {
                INVALID
            } else {
                hipError_t::hipErrorOutOfMemory
            }
        })?;
        let mut inner = self.vmm().inner.lock();
        let id = inner.new_id();
        let prop = AllocProp { location: hipMemLocation { id: prop.location.id, ..prop.location }, ..*prop };
        let c = self.new_chunk(id, args.handle, owner, size, host, prop, Some(args.mmap_offset));
        inner.chunks.insert(id, c);
        crate::core::log::hipkfd_log!("hipMemCreate {size} bytes on device {owner} (host {host}): handle {id:#x}");
        Ok(id)
    }

    #[allow(clippy::too_many_arguments)]
    fn new_chunk(
        &self,
        id: u64,
        kfd_handle: u64,
        owner: usize,
        size: u64,
        host: bool,
        prop: AllocProp,
        mmap_offset: Option<u64>,
    ) -> Arc<Chunk> {
        let st = ChunkState { refs: 1, maps: 0, gem: vec![None; self.devices.len()], dmabuf: None };
        Arc::new(Chunk { id, kfd_handle, owner, size, host, prop, mmap_offset, st: Mutex::new(st) })
    }

    /// Frees the chunk's BO once nothing references or maps it. Called with the state locked.
    fn chunk_maybe_free(&self, inner: &mut Inner, c: &Arc<Chunk>) {
        let mut st = c.st.lock();
        if st.refs > 0 || st.maps > 0 {
            return;
        }
        for (d, h) in st.gem.iter_mut().enumerate() {
            if let Some(h) = h.take() {
                if let Err(e) = self.devices[d].render.gem_close(h) {
                    crate::core::log::hipkfd_log!("GEM_CLOSE {h} on device {d}: {e}");
                }
            }
        }
        if let Err(e) = self.kfd.free_memory_of_gpu(c.kfd_handle) {
            crate::core::log::hipkfd_log!("FREE_MEMORY_OF_GPU {:#x}: {e}", c.kfd_handle);
        }
        if let Some(k) = st.dmabuf.take() {
            if inner.by_dmabuf.get(&k) == Some(&c.id) {
                inner.by_dmabuf.remove(&k);
            }
        }
        inner.chunks.remove(&c.id);
    }

    /// `hipMemRelease`: drops one handle reference; the chunk goes once unmapped everywhere.
    /// Errors: `hipErrorInvalidValue` (unknown or fully released handle).
    pub fn vmm_release(&self, id: u64) -> HipResult<()> {
        let mut inner = self.vmm().inner.lock();
        let c = inner.live(id)?;
        c.st.lock().refs -= 1;
        self.chunk_maybe_free(&mut inner, &c);
        Ok(())
    }

    /// `hipMemGetAllocationPropertiesFromHandle`. Errors: `hipErrorInvalidValue`.
    pub fn vmm_props(&self, id: u64) -> HipResult<AllocProp> {
        Ok(self.vmm().inner.lock().live(id)?.prop)
    }

    /// `hipMemMap`: maps `[offset, offset + size)` of chunk `id` at `va`, inside one reservation
    /// and over no other mapping. `offset` may be any page multiple (ROCm requires 0). No device
    /// has access until `hipMemSetAccess`. `id` may be a handle already released whose chunk is
    /// still mapped somewhere. Errors: `hipErrorInvalidValue`.
    pub fn vmm_map(&self, va: u64, size: u64, offset: u64, id: u64) -> HipResult<()> {
        if va == 0 || size == 0 || !(va | size | offset).is_multiple_of(GRANULARITY_MIN) {
            return Err(INVALID);
        }
        let inner = self.vmm().inner.lock();
        // A handle released while still mapped names its chunk until the last unmap: clr maps
        // through the handle's object, which the mappings keep alive (hip-tests map such a
        // handle again, Unit_hipMemSetAccess_Vmm2VMMInterDevMemCpy).
        let c = inner.chunks.get(&id).cloned().ok_or(INVALID)?;
        if offset.checked_add(size).is_none_or(|e| e > c.size) {
            return Err(INVALID);
        }
        let (&rbase, &rsize) = inner.reservations.range(..=va).next_back().ok_or(INVALID)?;
        if va.checked_add(size).is_none_or(|e| e > rbase + rsize) {
            return Err(INVALID);
        }
        if self.allocs.find_in(va, size).is_some() {
            return Err(INVALID);
        }
        let n = self.devices.len();
        let access = Access {
            dev: vec![hipMemAccessFlags::hipMemAccessFlagsProtNone; n],
            host: hipMemAccessFlags::hipMemAccessFlagsProtNone,
            cpu: libc::PROT_NONE,
        };
        let m = Arc::new(Mapping { va, size, offset, chunk: c.clone(), access: Mutex::new(access) });
        c.st.lock().maps += 1;
        self.allocs.insert(Allocation {
            base: va,
            size,
            kind: MemKind::Vmm,
            flags: 0,
            owner: c.owner,
            backing: Backing::Vmm(m),
            id: 0,
            sync_memops: Default::default(),
        });
        Ok(())
    }

    /// The mappings that exactly tile `[va, va + size)`, in order. Errors:
    /// `hipErrorInvalidValue` when the range does not start and end at mapping boundaries or has
    /// a hole.
    fn vmm_tiles(&self, va: u64, size: u64) -> HipResult<Vec<Arc<Mapping>>> {
        let end = va.checked_add(size).filter(|_| va != 0 && size != 0).ok_or(INVALID)?;
        let mut out = vec![];
        let mut cur = va;
        while cur < end {
            let a = self.allocs.get(cur).ok_or(INVALID)?;
            let Some(m) = mapping_arc(&a) else { return Err(INVALID) };
            if m.va + m.size > end {
                return Err(INVALID);
            }
            cur = m.va + m.size;
            out.push(m);
        }
        Ok(out)
    }

    /// The GEM handle of chunk `c` on device `d`'s render node, importing it there first
    /// (EXPORT_DMABUF → PRIME_FD_TO_HANDLE → close).
    fn chunk_gem(&self, c: &Chunk, d: usize) -> Result<u32, Errno> {
        let mut st = c.st.lock();
        if let Some(h) = st.gem[d] {
            return Ok(h);
        }
        let fd = self.kfd.export_dmabuf(c.kfd_handle)?;
        let h = self.devices[d].render.prime_fd_to_handle(fd.as_raw_fd())?;
        st.gem[d] = Some(h);
        Ok(h)
    }

    fn gem_va(&self, d: usize, gem: u32, op: u32, m: &Mapping, f: hipMemAccessFlags) -> Result<(), Errno> {
        let mut flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_EXECUTABLE;
        if f == hipMemAccessFlags::hipMemAccessFlagsProtReadWrite {
            flags |= AMDGPU_VM_PAGE_WRITEABLE;
        }
        if op == AMDGPU_VA_OP_UNMAP {
            flags = 0;
        }
        let mut a = drm_amdgpu_gem_va {
            handle: gem,
            operation: op,
            flags,
            va_address: m.va,
            offset_in_bo: m.offset,
            map_size: m.size,
            ..Default::default()
        };
        self.devices[d].render.gem_va(&mut a)
    }

    /// Moves device `d`'s access to mapping `m` from what it is to `f`: GEM_VA unmap and/or map.
    fn set_dev_access(&self, m: &Mapping, d: usize, f: hipMemAccessFlags) -> HipResult<()> {
        let old = m.access.lock().dev[d];
        if old == f {
            return Ok(());
        }
        let fail = |e: Errno| {
            crate::core::log::hipkfd_log!("hipMemSetAccess {:#x} device {d}: {e}", m.va);
            hipError_t::hipErrorOutOfMemory
        };
        let gem = self.chunk_gem(&m.chunk, d).map_err(fail)?;
        if old != hipMemAccessFlags::hipMemAccessFlagsProtNone {
            // Work queued on `d` may still use the old mapping.
            self.device_sync(d)?;
            self.gem_va(d, gem, AMDGPU_VA_OP_UNMAP, m, old).map_err(fail)?;
        }
        if f != hipMemAccessFlags::hipMemAccessFlagsProtNone {
            if let Err(e) = self.gem_va(d, gem, AMDGPU_VA_OP_MAP, m, f) {
                if old != hipMemAccessFlags::hipMemAccessFlagsProtNone {
                    let _ = self.gem_va(d, gem, AMDGPU_VA_OP_MAP, m, old);
                }
                return Err(fail(e));
            }
        }
        m.access.lock().dev[d] = f;
        Ok(())
    }

    /// Puts the CPU mapping of `m` in line with its access: read-write if any location may
    /// write, read-only if any may read, the `PROT_NONE` placeholder otherwise. Only for memory
    /// the host can map (host chunks, large-BAR VRAM).
    fn sync_cpu_access(&self, m: &Mapping) -> HipResult<()> {
        let c = &m.chunk;
        if !c.host && !self.devices[c.owner].large_bar {
            return Ok(());
        }
        let mut a = m.access.lock();
        let widest = a.dev.iter().chain(std::iter::once(&a.host)).map(|f| f.0).max().unwrap_or(0);
        let prot = match hipMemAccessFlags(widest) {
            hipMemAccessFlags::hipMemAccessFlagsProtReadWrite => libc::PROT_READ | libc::PROT_WRITE,
            hipMemAccessFlags::hipMemAccessFlagsProtRead => libc::PROT_READ,
            _ => libc::PROT_NONE,
        };
        if prot == a.cpu {
            return Ok(());
        }
        if prot == libc::PROT_NONE {
            self.va.unmap_cpu(m.va, m.size);
        } else {
            drop(a);
            let owner = &self.devices[c.owner];
            let off = match c.mmap_offset {
                Some(off) => Ok(off),
                None => self.chunk_gem(c, c.owner).and_then(|h| owner.render.gem_mmap_offset(h)),
            };
            let off = off.and_then(|off| self.va.map_cpu_prot(m.va, m.size, owner.render.fd(), off + m.offset, prot));
            if let Err(e) = off {
                crate::core::log::hipkfd_log!("VMM CPU mapping of {:#x}: {e}", m.va);
                return Err(hipError_t::hipErrorOutOfMemory);
            }
            a = m.access.lock();
        }
        a.cpu = prot;
        Ok(())
    }

    /// `hipMemSetAccess`: gives each location of `descs` its access to every mapping of
    /// `[va, va + size)` (whole mappings). Errors: `hipErrorInvalidValue` (range, location,
    /// flags, host access to device memory), `hipErrorInvalidDevice` (a device that cannot reach
    /// the chunk's GPU), `hipErrorOutOfMemory` (the kernel refused a mapping).
    pub fn vmm_set_access(&self, va: u64, size: u64, descs: &[hipMemAccessDesc]) -> HipResult<()> {
        if descs.is_empty() {
            return Err(INVALID);
        }
        let _inner = self.vmm().inner.lock();
        let maps = self.vmm_tiles(va, size)?;
        let mut plan = Vec::with_capacity(descs.len());
        for d in descs {
            if !matches!(
                d.flags,
                hipMemAccessFlags::hipMemAccessFlagsProtNone
                    | hipMemAccessFlags::hipMemAccessFlagsProtRead
                    | hipMemAccessFlags::hipMemAccessFlagsProtReadWrite
            ) {
                return Err(INVALID);
            }
            match d.location.r#type {
                hipMemLocationType::hipMemLocationTypeDevice => {
                    let dev = usize::try_from(d.location.id).ok().filter(|&x| x < self.devices.len()).ok_or(INVALID)?;
                    let unreachable = |m: &Arc<Mapping>| {
                        !m.chunk.host && m.chunk.owner != dev && !self.can_access_peer(dev, m.chunk.owner)
                    };
                    if d.flags != hipMemAccessFlags::hipMemAccessFlagsProtNone && maps.iter().any(unreachable) {
                        return Err(hipError_t::hipErrorInvalidDevice);
                    }
                    plan.push((Some(dev), d.flags));
                }
                hipMemLocationType::hipMemLocationTypeHost => {
                    if maps.iter().any(|m| !m.chunk.host) {
                        return Err(INVALID);
                    }
                    plan.push((None, d.flags));
                }
                _ => return Err(INVALID),
            }
        }
        let befores: Vec<Access> = maps.iter().map(|m| m.access.lock().clone()).collect();
        let apply = |m: &Mapping, plan: &[(Option<usize>, hipMemAccessFlags)]| -> HipResult<()> {
            for &(dev, f) in plan {
                match dev {
                    Some(dev) => self.set_dev_access(m, dev, f)?,
                    None => m.access.lock().host = f,
                }
            }
            self.sync_cpu_access(m)
        };
        for (i, m) in maps.iter().enumerate() {
            if let Err(e) = apply(m, &plan) {
                // A failed call leaves every mapping as it was.
                for (m, before) in maps.iter().zip(&befores).take(i + 1) {
                    let undo: Vec<_> = before.dev.iter().enumerate().map(|(d, f)| (Some(d), *f)).collect();
                    let _ = apply(m, &undo);
                    m.access.lock().host = before.host;
                    let _ = self.sync_cpu_access(m);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// `hipMemGetAccess`: what `location` may do at `va` (inside a mapping); `ProtNone` for a
    /// location never given access. Errors: `hipErrorInvalidValue`.
    pub fn vmm_get_access(&self, location: &hipMemLocation, va: u64) -> HipResult<hipMemAccessFlags> {
        let a = self.allocs.find(va).ok_or(INVALID)?;
        let Some(m) = mapping(&a) else { return Err(INVALID) };
        let acc = m.access.lock();
        match location.r#type {
            hipMemLocationType::hipMemLocationTypeDevice => {
                usize::try_from(location.id).ok().and_then(|d| acc.dev.get(d).copied()).ok_or(INVALID)
            }
            hipMemLocationType::hipMemLocationTypeHost => Ok(acc.host),
            _ => Err(INVALID),
        }
    }

    /// `hipMemUnmap`: unmaps whole mappings tiling `[va, va + size)` after the devices with
    /// access are idle; a chunk whose handles were all released goes with its last mapping.
    /// After it, the range is reserved VA again (a copy to it is `hipErrorInvalidValue`).
    /// Errors: `hipErrorInvalidValue`.
    pub fn vmm_unmap(&self, va: u64, size: u64) -> HipResult<()> {
        let mut inner = self.vmm().inner.lock();
        let maps = self.vmm_tiles(va, size)?;
        let users = maps.iter().fold(0u64, |acc, m| acc | m.device_mask(false));
        for d in (0..self.devices.len()).filter(|d| users & 1 << d != 0) {
            self.device_sync(d)?;
        }
        for m in maps {
            self.allocs.remove(m.va);
            let acc =
                std::mem::replace(&mut *m.access.lock(), Access { dev: vec![], host: Default::default(), cpu: 0 });
            for (d, f) in acc.dev.iter().enumerate() {
                if *f != hipMemAccessFlags::hipMemAccessFlagsProtNone {
                    let gem = m.chunk.st.lock().gem[d];
                    if let Some(gem) = gem {
                        if let Err(e) = self.gem_va(d, gem, AMDGPU_VA_OP_UNMAP, &m, *f) {
                            crate::core::log::hipkfd_log!("hipMemUnmap {:#x} device {d}: {e}", m.va);
                        }
                    }
                }
            }
            if acc.cpu != libc::PROT_NONE {
                self.va.unmap_cpu(m.va, m.size);
            }
            m.chunk.st.lock().maps -= 1;
            self.chunk_maybe_free(&mut inner, &m.chunk);
        }
        Ok(())
    }

    /// `hipMemRetainAllocationHandle`: the handle of the chunk mapped at `va` (anywhere inside a
    /// mapping), with one more reference. Errors: `hipErrorInvalidValue`.
    pub fn vmm_retain(&self, va: u64) -> HipResult<u64> {
        let _inner = self.vmm().inner.lock();
        let a = self.allocs.find(va).ok_or(INVALID)?;
        let Some(m) = mapping(&a) else { return Err(INVALID) };
        m.chunk.st.lock().refs += 1;
        Ok(m.chunk.id)
    }

    /// `hipMemExportToShareableHandle`: a new dma-buf fd of chunk `id` (`O_CLOEXEC`), owned by
    /// the caller. Errors: `hipErrorInvalidValue` (handle, type other than POSIX fd, flags, a
    /// chunk not created with `hipMemHandleTypePosixFileDescriptor`), `hipErrorOutOfMemory`.
    pub fn vmm_export(&self, id: u64, ty: hipMemAllocationHandleType) -> HipResult<RawFd> {
        let mut inner = self.vmm().inner.lock();
        let c = inner.live(id)?;
        let fd_type = hipMemAllocationHandleType::hipMemHandleTypePosixFileDescriptor;
        if ty != fd_type || c.prop.handle_types.0 & fd_type.0 == 0 {
            return Err(INVALID);
        }
        let fd = self.kfd.export_dmabuf(c.kfd_handle).map_err(|e| {
            crate::core::log::hipkfd_log!("hipMemExportToShareableHandle: EXPORT_DMABUF: {e}");
            hipError_t::hipErrorOutOfMemory
        })?;
        if let Some(k) = dmabuf_identity(fd.as_raw_fd()) {
            c.st.lock().dmabuf = Some(k);
            inner.by_dmabuf.insert(k, id);
        }
        Ok(fd.into_raw_fd())
    }

    /// `hipMemImportFromShareableHandle`: a handle for the chunk behind dma-buf `fd` (the caller
    /// keeps the fd). The same dma-buf imported again (or one exported from this process) gives
    /// the same handle with one more reference. `current` is used when the memory's GPU is not
    /// visible here. Errors: `hipErrorInvalidValue` (not an amdgpu dma-buf), `hipErrorOutOfMemory`.
    pub fn vmm_import(&self, fd: RawFd, current: usize) -> HipResult<u64> {
        let key = dmabuf_identity(fd).ok_or(INVALID)?;
        let mut inner = self.vmm().inner.lock();
        if let Some(c) = inner.by_dmabuf.get(&key).and_then(|id| inner.chunks.get(id)).cloned() {
            c.st.lock().refs += 1;
            return Ok(c.id);
        }
        let (size, gpu_id, flags) = self.kfd.get_dmabuf_info(fd).map_err(|_| INVALID)?;
        let owner = self.device_of_gpu(gpu_id).unwrap_or(current);
        let handle = self.kfd.import_dmabuf(fd, self.devices[owner].gpu_id, 0).map_err(|e| {
            crate::core::log::hipkfd_log!("hipMemImportFromShareableHandle: IMPORT_DMABUF: {e}");
            crate::core::memory::import_errno(e)
        })?;
        let host = flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM == 0;
        let loc_type = if host {
            hipMemLocationType::hipMemLocationTypeHost
        } else {
            hipMemLocationType::hipMemLocationTypeDevice
        };
        let prop = AllocProp {
            ty: hipMemAllocationType::hipMemAllocationTypePinned,
            handle_types: hipMemAllocationHandleType::hipMemHandleTypePosixFileDescriptor,
            location: hipMemLocation { r#type: loc_type, id: owner as i32 },
            legacy: None,
        };
        let id = inner.new_id();
        let c = self.new_chunk(id, handle, owner, size, host, prop, None);
        c.st.lock().dmabuf = Some(key);
        inner.chunks.insert(id, c);
        inner.by_dmabuf.insert(key, id);
        crate::core::log::hipkfd_log!(
            "hipMemImportFromShareableHandle: {size} bytes of device {owner}: handle {id:#x}"
        );
        Ok(id)
    }

    /// Whether device `dev` may read (or write) `[ptr, ptr + len)` as far as VMM access goes:
    /// true for memory that is not VMM.
    pub fn vmm_reaches(&self, dev: usize, ptr: u64, len: u64, write: bool) -> bool {
        match self.allocs.find(ptr) {
            Some(a) => match &a.backing {
                Backing::Vmm(_) => self.vmm_span_devices(&a, ptr, len, write).is_ok_and(|mask| mask & 1 << dev != 0),
                Backing::Bo(_) | Backing::Sub(_) | Backing::UserPages(_) | Backing::Array(_) => true,
            },
            None => true,
        }
    }

    /// For copies: when `[ptr, ptr + len)` runs from VMM mapping into adjacent ones and no one
    /// device may read (`write == false`) or write all of it, though one may the first mapping's
    /// part, the length of that part: the copy is then made piece by piece, each by a device that
    /// may (CUDA copies any range every byte of which is accessible; hip-tests
    /// Unit_hipMemSetAccess_MapPhysChksFromMulDev copies across chunks of two devices, each
    /// accessible by its own device only).
    pub fn vmm_first_piece(&self, ptr: u64, len: u64, write: bool) -> Option<u64> {
        let a = self.allocs.find(ptr)?;
        let m = mapping(&a)?;
        let first = m.va + m.size - ptr;
        (len > first && m.device_mask(write) != 0 && self.span_devices(m, ptr, len, write) == Ok(0)).then_some(first)
    }

    /// [`span_devices`](Self::span_devices) from allocation `first`, a VMM mapping (the core's
    /// copies ask this of the VMM allocations they meet). Errors: `hipErrorInvalidValue` when
    /// `first` is not a mapping, and as `span_devices`.
    pub fn vmm_span_devices(&self, first: &Allocation, ptr: u64, len: u64, write: bool) -> HipResult<u64> {
        self.span_devices(mapping(first).ok_or(INVALID)?, ptr, len, write)
    }

    /// For copies and fills: the devices (bit per ordinal) that may read (`write == false`) or
    /// write all of `[ptr, ptr + len)`, which starts in VMM mapping `first` and may run on through
    /// adjacent mappings. Errors: `hipErrorInvalidValue` (a hole, or the end of the mappings).
    fn span_devices(&self, first: &Mapping, ptr: u64, len: u64, write: bool) -> HipResult<u64> {
        let end = ptr.checked_add(len).ok_or(INVALID)?;
        let mut mask = first.device_mask(write);
        let mut cur = first.va + first.size;
        while cur < end {
            let a = self.allocs.get(cur).ok_or(INVALID)?;
            let Some(m) = mapping(&a) else { return Err(INVALID) };
            mask &= m.device_mask(write);
            cur = m.va + m.size;
        }
        Ok(mask)
    }
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::Vmm`](crate::core::runtime::Feature) slot.
    pub fn vmm(&self) -> &VmmState {
        self.feature(crate::core::runtime::Feature::Vmm, |_| VmmState::default())
    }
}

/// The VMM mapping allocation `a` is, if it is one.
fn mapping(a: &Allocation) -> Option<&Mapping> {
    match &a.backing {
        Backing::Vmm(m) => (&**m as &dyn std::any::Any).downcast_ref(),
        _ => None,
    }
}

/// [`mapping`], shared.
fn mapping_arc(a: &Allocation) -> Option<Arc<Mapping>> {
    match &a.backing {
        Backing::Vmm(m) => (m.clone() as Arc<dyn std::any::Any + Send + Sync>).downcast().ok(),
        _ => None,
    }
}

impl crate::core::memory::Backed for Mapping {
    fn is_host_memory(&self) -> bool {
        self.chunk.host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(words: &[(usize, i32)]) -> [u8; 32] {
        let mut b = [0u8; 32];
        for &(o, v) in words {
            b[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    #[test]
    fn prop_layouts_are_told_apart() {
        // ROCm 5.3+: type@0 = Pinned, handle@4 = fd, location {Device, 1}@8.
        let new = raw(&[(0, 1), (4, 1), (8, 1), (12, 1)]);
        let p = AllocProp::read(new.as_ptr() as *const hipMemAllocationProp).unwrap();
        assert_eq!(p.legacy, Some(false));
        assert_eq!(p.location, hipMemLocation { r#type: hipMemLocationType::hipMemLocationTypeDevice, id: 1 });
        assert_eq!(p.handle_types, hipMemAllocationHandleType::hipMemHandleTypePosixFileDescriptor);
        // ROCm 5.2: compressionType@0 = 0, location {Device, 1}@4, handle@12, type@16.
        let old = raw(&[(4, 1), (8, 1), (12, 1), (16, 1)]);
        let q = AllocProp::read(old.as_ptr() as *const hipMemAllocationProp).unwrap();
        assert_eq!(q.legacy, Some(true));
        assert_eq!(q.location, p.location);
        assert_eq!((q.ty, q.handle_types), (p.ty, p.handle_types));
        // Written back in the layout it came in.
        for (src, prop) in [(new, p), (old, q)] {
            let mut out = [0xffu8; 32];
            prop.write(out.as_mut_ptr() as *mut hipMemAllocationProp).unwrap();
            let mut want = src;
            want[20..].fill(0);
            assert_eq!(out[..20], want[..20]);
        }
        // Invalid type in the new layout stays new (and fails validation later).
        let bad = raw(&[(8, 1)]);
        let r = AllocProp::read(bad.as_ptr() as *const hipMemAllocationProp).unwrap();
        assert_eq!(r.legacy, Some(false));
        assert_eq!(r.check(2, 0, INVALID), Err(INVALID));
        assert!(AllocProp::read(std::ptr::null()).is_err());
    }

    #[test]
    fn os_handle_conventions() {
        assert_eq!(os_handle_fd(std::ptr::null_mut()), Err(INVALID));
        assert_eq!(os_handle_fd(7 as *mut libc::c_void), Ok(7));
        let mut fd: RawFd = 9;
        assert_eq!(os_handle_fd(&mut fd as *mut RawFd as *mut libc::c_void), Ok(9));
        let boxed = Box::new(11 as RawFd);
        assert_eq!(os_handle_fd(&*boxed as *const RawFd as *mut libc::c_void), Ok(11));
    }
}
