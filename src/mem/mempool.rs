//! Stream-ordered allocation (`hipMallocAsync`, `hipFreeAsync`, `hipMemPool*`; clr
//! `hip_mempool.cpp`, CUDA's "Stream Ordered Memory Allocator").
//!
//! A pool hands out ordinary device allocations (`hipMalloc`'s path, so every other API sees
//! device memory) and keeps freed ones for reuse. A block freed on stream `s` is recorded with
//! the fence of `s`'s work queued before the free: an allocation on `s` may reuse it at once
//! (its later work runs after that work), an allocation on a stream that waited for an event
//! recorded after the free also may (`hipMemPoolReuseFollowEventDependencies`), an allocation
//! elsewhere only once the fence is done (`hipMemPoolReuseAllowOpportunistic`). Blocks are
//! reused whole, smallest fit first. When the pool makes a new block, kept blocks beyond the
//! release threshold whose fence is done go back to the system, after the new one is made (a new
//! allocation does not land at the address of a block it may not reuse, unless memory runs
//! short, idle kept blocks go first); `maxSize` bounds the reserved high-water mark, as in clr;
//! `hipMemPoolTrimTo` and
//! `hipMemPoolDestroy` release explicitly.
//!
//! Sharing (clr `MemoryPool::Export`/`Import`): a pool's shareable handle is a memfd describing
//! it ([`PoolExport`]), from which another process makes a pool of its own; a pool allocation
//! travels as its IPC handle (src/share/ipc.rs) and is imported through the IPC path.
//!
//! Layer `mem`: may call `core`, `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::runtime::Runtime;
use crate::core::stream::{Fence, Stream};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// A freed block waiting for reuse.
#[derive(Debug)]
struct FreeBlock {
    base: u64,
    /// Bytes (the size it was allocated with).
    size: u64,
    /// The freeing stream, by address, and its work queued before the free.
    stream: usize,
    fence: Option<Fence>,
}

impl FreeBlock {
    fn idle(&self) -> bool {
        self.fence.as_ref().is_none_or(|f| f.done())
    }
}

/// Pool attributes and counters (`hipMemPoolAttr`), bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct PoolCounters {
    pub release_threshold: u64,
    pub reserved_high: u64,
    pub used_high: u64,
}

#[derive(Debug, Default)]
struct PoolState {
    /// `hipMemPoolReuseFollowEventDependencies`, `ReuseAllowOpportunistic`,
    /// `ReuseAllowInternalDependencies` (all on by default, CUDA).
    reuse: [i32; 3],
    counters: PoolCounters,
    /// Live allocations: base → bytes.
    used: HashMap<u64, u64>,
    free: Vec<FreeBlock>,
    /// `hipMemAccessFlags` per device ordinal (the owner is always read-write).
    access: Vec<i32>,
}

impl PoolState {
    /// Whether `base` is a block the pool got back and keeps for reuse (freed for the caller).
    fn keeps(&self, base: u64) -> bool {
        self.free.iter().any(|b| b.base == base)
    }
    fn used_bytes(&self) -> u64 {
        self.used.values().sum()
    }
    fn reserved_bytes(&self) -> u64 {
        self.used_bytes() + self.free.iter().map(|b| b.size).sum::<u64>()
    }
}

/// One memory pool of device `dev`.
#[derive(Debug)]
pub struct MemPool {
    pub dev: usize,
    /// `hipMemPoolProps::handleTypes` (`hipMemAllocationHandleType` bits).
    pub handle_types: i32,
    /// `hipMemPoolProps::maxSize`: the most bytes the pool's reserved high-water mark may reach (0: no limit).
    pub max_size: u64,
    state: Mutex<PoolState>,
    /// The pool's shareable handle once exported (`hipMemPoolExportToShareableHandle`): a memfd
    /// holding its [`PoolExport`] description, closed with the pool (clr `MemoryPool::Export`).
    export: Mutex<Option<OwnedFd>>,
}

/// What a pool's shareable handle carries (clr's `SharedMemPool`: the pool's state and access
/// map), in the memfd: magic, owner GPU id, then `(gpu_id, hipMemAccessFlags)` per device.
/// GPU ids, not ordinals: the importer may see other devices (`HIP_VISIBLE_DEVICES`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolExport {
    pub gpu_id: u32,
    pub access: Vec<(u32, i32)>,
}

impl PoolExport {
    /// "hkfdpool".
    const MAGIC: u64 = u64::from_le_bytes(*b"hkfdpool");
    /// The most devices a description names (the memfd's size is bounded).
    const MAX_DEVICES: usize = 64;

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + 8 * self.access.len());
        b.extend_from_slice(&Self::MAGIC.to_le_bytes());
        b.extend_from_slice(&self.gpu_id.to_le_bytes());
        b.extend_from_slice(&(self.access.len() as u32).to_le_bytes());
        for (g, f) in &self.access {
            b.extend_from_slice(&g.to_le_bytes());
            b.extend_from_slice(&f.to_le_bytes());
        }
        b
    }

    /// Parses [`to_bytes`](Self::to_bytes)'s output; `None` for anything else.
    pub fn parse(b: &[u8]) -> Option<PoolExport> {
        let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
        if b.get(0..8)? != Self::MAGIC.to_le_bytes() {
            return None;
        }
        let n = u32_at(12)? as usize;
        if n > Self::MAX_DEVICES || b.len() != 16 + 8 * n {
            return None;
        }
        let access = (0..n).map(|i| Some((u32_at(16 + 8 * i)?, u32_at(20 + 8 * i)? as i32))).collect::<Option<_>>()?;
        Some(PoolExport { gpu_id: u32_at(8)?, access })
    }
}

/// The pools of the process: each device's default and current pool, and every pool by handle.
#[derive(Debug, Default)]
pub struct MemPools {
    /// Handle (the `Arc`'s address) → pool; the default pools included.
    all: Mutex<HashMap<usize, Arc<MemPool>>>,
    /// Per device: its default and current pool.
    per_dev: Mutex<HashMap<usize, DevicePools>>,
    /// Pointers `hipMemPoolImportPointer` mapped into this process from another's pool, with
    /// their count of imports (IPC opens, each closed by one `hipFree`/`hipFreeAsync`, whether
    /// or not their pool still exists).
    pub(crate) imported: Mutex<HashMap<u64, u32>>,
}

/// A device's (default, current) pools.
type DevicePools = (Arc<MemPool>, Arc<MemPool>);

/// `hipMemPoolAttr` values (`hip_runtime_api.h`).
pub mod attr {
    pub const REUSE_FOLLOW_EVENT_DEPENDENCIES: i32 = 1;
    pub const REUSE_ALLOW_INTERNAL_DEPENDENCIES: i32 = 3;
    pub const RELEASE_THRESHOLD: i32 = 4;
    pub const RESERVED_MEM_CURRENT: i32 = 5;
    pub const RESERVED_MEM_HIGH: i32 = 6;
    pub const USED_MEM_CURRENT: i32 = 7;
    pub const USED_MEM_HIGH: i32 = 8;
}

/// A pool attribute's value: the three reuse flags are `int`, the rest `uint64_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrValue {
    Int(i32),
    U64(u64),
}

impl Runtime {
    /// A new pool on device `dev` (`hipMemPoolCreate`) whose allocations may be exported as
    /// `handle_types` and which holds at most `max_size` bytes (0: no limit), registered under
    /// its handle.
    pub fn mempool_create(&self, dev: usize, handle_types: i32, max_size: u64) -> Arc<MemPool> {
        let mut access = vec![0; self.devices.len()];
        access[dev] = 3;
        let st = PoolState { reuse: [1, 1, 1], access, ..Default::default() };
        let p = Arc::new(MemPool { dev, handle_types, max_size, state: Mutex::new(st), export: Mutex::new(None) });
        self.mempools().all.lock().insert(Arc::as_ptr(&p) as usize, p.clone());
        p
    }

    /// The pool a handle names. Errors: `hipErrorInvalidValue` (unknown or destroyed).
    pub fn mempool_of(&self, h: usize) -> Result<Arc<MemPool>, hipError_t> {
        self.mempools().all.lock().get(&h).cloned().ok_or(hipError_t::hipErrorInvalidValue)
    }

    fn mempool_dev(&self, dev: usize) -> DevicePools {
        if let Some(p) = self.mempools().per_dev.lock().get(&dev) {
            return p.clone();
        }
        let p = self.mempool_create(dev, 0, 0);
        self.mempools().per_dev.lock().entry(dev).or_insert((p.clone(), p)).clone()
    }

    /// Device `dev`'s default pool (`hipDeviceGetDefaultMemPool`).
    pub fn mempool_default(&self, dev: usize) -> Arc<MemPool> {
        self.mempool_dev(dev).0
    }

    /// Device `dev`'s current pool (`hipDeviceGetMemPool`, what `hipMallocAsync` uses).
    pub fn mempool_current(&self, dev: usize) -> Arc<MemPool> {
        self.mempool_dev(dev).1
    }

    /// `hipDeviceSetMemPool`. Errors: `hipErrorInvalidDevice` (the pool is another device's).
    pub fn mempool_set_current(&self, dev: usize, p: Arc<MemPool>) -> Result<(), hipError_t> {
        if p.dev != dev {
            return Err(hipError_t::hipErrorInvalidDevice);
        }
        let d = self.mempool_default(dev);
        self.mempools().per_dev.lock().insert(dev, (d, p));
        Ok(())
    }

    /// `hipMallocAsync`/`hipMallocFromPoolAsync`: `size` bytes from pool `p` for use on `s`: a
    /// kept block that is free in `s`'s order (as the pool's reuse flags allow), else a new
    /// device allocation. Errors:
    /// `hipErrorOutOfMemory`, also when a new block would take the pool's reserved high-water
    /// mark (`hipMemPoolAttrReservedMemHigh`) past its `maxSize`: clr's rule
    /// (`MemoryPool::AllocateMemory` compares `max_total_size_ + size` with `maxSize`), which
    /// hip-tests check (`Unit_hipGetProcAddress_MemoryApisStreamOrderedMemory`: out of memory
    /// after a free and a trim). A trim does not lower the mark; resetting the attribute to 0
    /// does, down to what the pool holds now (clr: to 0, which lets a pool grow past `maxSize`).
    pub fn mempool_alloc(&self, p: &MemPool, size: u64, s: &Stream) -> Result<u64, hipError_t> {
        let sid = s as *const Stream as usize;
        // The queue `s` last used: work after a fence on it runs after that fence (FIFO).
        let queue = s.last_fence().map(|f| f.queue);
        let in_order = |b: &FreeBlock| {
            b.idle() || b.fence.as_ref().zip(queue.as_ref()).is_some_and(|(f, q)| Arc::ptr_eq(&f.queue, q))
        };
        // An event `s` waited for orders the block's free before `s`'s later work.
        let after_event = |b: &FreeBlock| b.fence.as_ref().is_some_and(|f| s.waited_for(f));
        let mut st = p.state.lock();
        let [follow_events, opportunistic, _] = st.reuse.map(|r| r != 0);
        let pick = st
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.size >= size && b.size <= size.saturating_mul(2).max(size + (64 << 10)))
            .filter(|(_, b)| {
                (b.stream == sid && in_order(b)) || (opportunistic && b.idle()) || (follow_events && after_event(b))
            })
            .min_by_key(|(_, b)| b.size)
            .map(|(i, _)| i);
        if let Some(i) = pick {
            let b = st.free.swap_remove(i);
            st.used.insert(b.base, b.size);
            Self::mempool_high_marks(&mut st);
            return Ok(b.base);
        }
        let high = st.counters.reserved_high.max(st.reserved_bytes());
        if p.max_size != 0 && high.saturating_add(size) > p.max_size {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        let access: Vec<usize> = (0..st.access.len()).filter(|&d| d != p.dev && st.access[d] != 0).collect();
        drop(st);
        // The new block is made while the kept ones are still held, so it never lands at the
        // address of a block this allocation may not reuse (hip-tests
        // Unit_hipMemPoolSetAttribute_Opportunistic "No Reuse"); kept blocks past the release
        // threshold go back afterwards. Out of memory: they go first, and it tries again.
        let base = match self.mem_alloc_device(p.dev, size) {
            Err(hipError_t::hipErrorOutOfMemory) => {
                self.mempool_release(&mut p.state.lock(), 0);
                self.mem_alloc_device(p.dev, size)?
            }
            r => r?,
        };
        // Devices given access to the pool map its new blocks too.
        if let Err(e) = access.iter().try_for_each(|&d| self.mempool_map_block(base, d)) {
            let _ = self.mem_free(base);
            return Err(e);
        }
        let mut st = p.state.lock();
        st.used.insert(base, size);
        Self::mempool_high_marks(&mut st);
        let keep = st.counters.release_threshold;
        self.mempool_release(&mut st, keep);
        Ok(base)
    }

    fn mempool_high_marks(st: &mut PoolState) {
        st.counters.used_high = st.counters.used_high.max(st.used_bytes());
        st.counters.reserved_high = st.counters.reserved_high.max(st.reserved_bytes());
    }

    /// Frees kept blocks whose work is done until at most `keep` bytes stay reserved.
    fn mempool_release(&self, st: &mut PoolState, keep: u64) {
        let mut i = 0;
        while st.reserved_bytes() > keep && i < st.free.len() {
            if st.free[i].idle() {
                let b = st.free.swap_remove(i);
                self.mem_free_idle(b.base);
            } else {
                i += 1;
            }
        }
    }

    /// `hipFreeAsync`: gives `base` back to its pool in `s`'s order. Memory of no pool is freed
    /// at once after `s`'s work (clr falls back to `hipFree`). Errors: `hipErrorInvalidValue`
    /// (not an allocation's base, or a block its pool already got back).
    pub fn mempool_free(&self, base: u64, s: &Arc<Stream>) -> Result<(), hipError_t> {
        if self.graph_mem_free(base, s) {
            return Ok(());
        }
        if self.mempool_take_import(base) {
            self.stream_sync(s)?;
            return self.ipc_close_mem(base);
        }
        for p in self.mempools_all() {
            let mut st = p.state.lock();
            if let Some(size) = st.used.remove(&base) {
                let stream = Arc::as_ptr(s) as usize;
                st.free.push(FreeBlock { base, size, stream, fence: s.last_fence() });
                return Ok(());
            }
            // Freed already: the pool keeps it for reuse (hip-tests
            // Unit_hipFreeAsync_Negative_Parameters "Double free"; freeing it for real would
            // leave the pool handing out freed memory).
            if st.keeps(base) {
                return Err(hipError_t::hipErrorInvalidValue);
            }
        }
        self.stream_sync(s)?;
        self.mem_free(base)
    }

    /// Whether `ptr` is a pointer `hipMemPoolImportPointer` imported; it is forgotten (the caller
    /// closes the import).
    pub fn mempool_take_import(&self, ptr: u64) -> bool {
        let Some(pools) = self.mempools_if() else { return false };
        let mut im = pools.imported.lock();
        let Some(n) = im.get_mut(&ptr) else { return false };
        *n -= 1;
        if *n == 0 {
            im.remove(&ptr);
        }
        true
    }

    fn mempools_all(&self) -> Vec<Arc<MemPool>> {
        self.mempools_if().map_or_else(Vec::new, |p| p.all.lock().values().cloned().collect())
    }

    /// The pools' state if any pool API was used yet: `hipFree` of a program that never used
    /// one takes none of their locks.
    fn mempools_if(&self) -> Option<&MemPools> {
        self.feature_if(crate::core::runtime::Feature::MemPools)
    }

    /// Whether `ptr` lies in a block a pool keeps for reuse: memory its program freed
    /// (`hipFreeAsync`), which the pointer queries no longer know (hip-tests
    /// `hipGetProcAddress_Memory_APIs.cc`: `hipMemPtrGetInfo` after `hipFreeAsync`).
    pub fn mempool_keeps(&self, ptr: u64) -> bool {
        self.mempools_all().iter().any(|p| p.state.lock().free.iter().any(|b| ptr >= b.base && ptr - b.base < b.size))
    }

    /// Before `hipFree(base)`: pool memory in use leaves its pool (`hipFree` of `hipMallocAsync`
    /// memory frees it, as clr's does). Errors: `hipErrorInvalidValue` for a block a pool keeps
    /// for reuse: the caller freed it already (`hipFreeAsync`), and freeing it would leave the
    /// pool handing out freed memory; the pool keeps it.
    pub fn mempool_before_free(&self, base: u64) -> Result<(), hipError_t> {
        for p in self.mempools_all() {
            let mut st = p.state.lock();
            if st.keeps(base) {
                return Err(hipError_t::hipErrorInvalidValue);
            }
            st.used.remove(&base);
        }
        Ok(())
    }

    /// `hipMemPoolTrimTo`: releases kept blocks whose work is done until at most `keep` bytes
    /// stay reserved (blocks in use are never released).
    pub fn mempool_trim(&self, p: &MemPool, keep: u64) {
        let mut st = p.state.lock();
        self.mempool_release(&mut st, keep);
    }

    /// `hipMemPoolDestroy`: waits for the kept blocks' work, frees them and forgets the pool; a
    /// device using it as its current pool goes back to its default. Allocations still in use
    /// stay valid until `hipFree` (CUDA frees them with the pool; clr keeps them). Errors:
    /// `hipErrorInvalidValue` (a default pool).
    pub fn mempool_destroy(&self, p: &Arc<MemPool>) -> Result<(), hipError_t> {
        let (def, cur) = self.mempool_dev(p.dev);
        if Arc::ptr_eq(&def, p) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let blocks = std::mem::take(&mut p.state.lock().free);
        for b in blocks {
            if let Some(f) = &b.fence {
                self.fence_wait(f)?;
            }
            self.mem_free_idle(b.base);
        }
        if Arc::ptr_eq(&cur, p) {
            self.mempools().per_dev.lock().insert(p.dev, (def.clone(), def));
        }
        self.mempools().all.lock().remove(&(Arc::as_ptr(p) as usize));
        Ok(())
    }

    /// `hipDeviceReset` of device `dev`: its pools forget their blocks (the reset frees every
    /// device allocation of `dev`, the pools' among them); the pools stay usable.
    pub fn mempool_reset(&self, dev: usize) {
        let pools: Vec<Arc<MemPool>> = self.mempools().all.lock().values().filter(|p| p.dev == dev).cloned().collect();
        for p in pools {
            let mut st = p.state.lock();
            st.used.clear();
            st.free.clear();
        }
    }

    /// `hipMemPoolSetAttribute` (clr `MemoryPool::SetAttribute`): the reuse flags and the
    /// release threshold are set; the high marks only reset, to 0 (clr: `max_total_size_ = 0`,
    /// not the current value as CUDA; the next allocation or free raises them again); the current
    /// counters are read-only. Errors: `hipErrorInvalidValue` otherwise.
    pub fn mempool_set_attr(&self, p: &MemPool, a: i32, v: AttrValue) -> Result<(), hipError_t> {
        let mut st = p.state.lock();
        match (a, v) {
            (attr::REUSE_FOLLOW_EVENT_DEPENDENCIES..=attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES, AttrValue::Int(i)) => {
                st.reuse[(a - 1) as usize] = i
            }
            (attr::RELEASE_THRESHOLD, AttrValue::U64(t)) => st.counters.release_threshold = t,
            (attr::RESERVED_MEM_HIGH, AttrValue::U64(0)) => st.counters.reserved_high = 0,
            (attr::USED_MEM_HIGH, AttrValue::U64(0)) => st.counters.used_high = 0,
            _ => return Err(hipError_t::hipErrorInvalidValue),
        }
        Ok(())
    }

    /// `hipMemPoolGetAttribute`. Errors: `hipErrorInvalidValue` (unknown attribute).
    pub fn mempool_get_attr(&self, p: &MemPool, a: i32) -> Result<AttrValue, hipError_t> {
        let st = p.state.lock();
        Ok(match a {
            attr::REUSE_FOLLOW_EVENT_DEPENDENCIES..=attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                AttrValue::Int(st.reuse[(a - 1) as usize])
            }
            attr::RELEASE_THRESHOLD => AttrValue::U64(st.counters.release_threshold),
            attr::RESERVED_MEM_CURRENT => AttrValue::U64(st.reserved_bytes()),
            attr::RESERVED_MEM_HIGH => AttrValue::U64(st.counters.reserved_high),
            attr::USED_MEM_CURRENT => AttrValue::U64(st.used_bytes()),
            attr::USED_MEM_HIGH => AttrValue::U64(st.counters.used_high),
            _ => return Err(hipError_t::hipErrorInvalidValue),
        })
    }

    /// `hipMemPoolSetAccess` for one device: records `flags` (the owner stays read-write) and
    /// maps the pool's blocks, those it holds and those it will hand out, into that device's
    /// GPUVM, so its kernels and copies reach them without `hipDeviceEnablePeerAccess` (CUDA's
    /// `cudaMemPoolSetAccess`; hip-tests `Unit_hipMemPoolSetAccess_SetAccess`). Errors:
    /// `hipErrorOutOfMemory` (a map failed; the blocks mapped before stay mapped).
    pub fn mempool_set_access(&self, p: &MemPool, dev: usize, flags: i32) -> Result<(), hipError_t> {
        if dev == p.dev {
            return Ok(());
        }
        let mut st = p.state.lock();
        if flags != 0 {
            let blocks: Vec<u64> = st.used.keys().copied().chain(st.free.iter().map(|b| b.base)).collect();
            for base in blocks {
                self.mempool_map_block(base, dev)?;
            }
        }
        st.access[dev] = flags;
        Ok(())
    }

    /// Maps the BO behind pool block `base` into device `dev`'s GPUVM (a pool another device
    /// may access: `hipMemPoolSetAccess`), unless it is there already (peer access, an earlier
    /// block of the same small-allocation BO). Errors: `hipErrorOutOfMemory` (the map failed).
    fn mempool_map_block(&self, base: u64, dev: usize) -> Result<(), hipError_t> {
        let gpu = self.devices[dev].gpu_id;
        let Some(a) = self.allocs.get(base) else { return Ok(()) };
        match a.bo() {
            Some(bo) => self.bo_map_on(bo, gpu).map(drop),
            None => Ok(()),
        }
    }

    /// `hipMemPoolGetAccess` for one device.
    pub fn mempool_get_access(&self, p: &MemPool, dev: usize) -> i32 {
        p.state.lock().access[dev]
    }
}

// ---- sharing pools between processes (clr `MemoryPool::Export`/`Import`, `hip_mempool.cpp`) ----

impl Runtime {
    /// `hipMemPoolExportToShareableHandle`: the pool's POSIX fd: a memfd describing the pool
    /// ([`PoolExport`]), made on the first export and the same fd on later ones (as clr), open
    /// until the pool is destroyed. Errors: `hipErrorInvalidValue` (the pool was not created
    /// for fd handles), `hipErrorOutOfMemory` (no memfd).
    pub fn mempool_export(&self, p: &MemPool) -> Result<RawFd, hipError_t> {
        use crate::abi::types::hipMemAllocationHandleType as H;
        if p.handle_types & H::hipMemHandleTypePosixFileDescriptor.0 == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let mut ex = p.export.lock();
        if let Some(fd) = &*ex {
            return Ok(fd.as_raw_fd());
        }
        let desc = PoolExport {
            gpu_id: self.devices[p.dev].gpu_id,
            access: p.state.lock().access.iter().enumerate().map(|(d, &f)| (self.devices[d].gpu_id, f)).collect(),
        };
        let name = c"hipkfd-mempool";
        // SAFETY: valid NUL-terminated name; returns a new fd or -1.
        let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        // SAFETY: `raw` is a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let bytes = desc.to_bytes();
        nix::sys::uio::pwrite(&fd, &bytes, 0)
            .ok()
            .filter(|&n| n == bytes.len())
            .ok_or(hipError_t::hipErrorOutOfMemory)?;
        let r = fd.as_raw_fd();
        *ex = Some(fd);
        Ok(r)
    }

    /// `hipMemPoolImportFromShareableHandle`: a new pool of this process with the exported
    /// pool's device (by GPU id; device 0 when it is not visible here, as clr's `g_devices[0]`)
    /// and access flags, able to import the exporter's pointers. `fd` stays the caller's.
    /// Errors: `hipErrorOutOfMemory` (not a pool handle: clr's `Import` failing).
    pub fn mempool_import(&self, fd: RawFd) -> Result<Arc<MemPool>, hipError_t> {
        let mut buf = [0u8; 16 + 8 * PoolExport::MAX_DEVICES + 1];
        // SAFETY: `fd` is the caller's open descriptor (HIP API contract), borrowed for this read.
        let bfd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let n = nix::sys::uio::pread(bfd, &mut buf, 0).map_err(|_| hipError_t::hipErrorOutOfMemory)?;
        let desc = PoolExport::parse(&buf[..n]).ok_or(hipError_t::hipErrorOutOfMemory)?;
        let ordinal = |gpu: u32| self.devices.iter().position(|d| d.gpu_id == gpu);
        let dev = ordinal(desc.gpu_id).unwrap_or(0);
        let p = self.mempool_create(
            dev,
            crate::abi::types::hipMemAllocationHandleType::hipMemHandleTypePosixFileDescriptor.0,
            0,
        );
        {
            let mut st = p.state.lock();
            for (g, f) in desc.access {
                if let Some(d) = ordinal(g) {
                    st.access[d] = if d == dev { 3 } else { f };
                }
            }
        }
        Ok(p)
    }
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::MemPools`](crate::core::runtime::Feature) slot.
    pub fn mempools(&self) -> &MemPools {
        self.feature(crate::core::runtime::Feature::MemPools, |_| MemPools::default())
    }
}
