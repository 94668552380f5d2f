//! Graph memory nodes (`hipGraphAddMemAllocNode`, `hipGraphAddMemFreeNode`, `hipMallocAsync` and
//! `hipFreeAsync` captured into a graph) and the device graph-memory counters
//! (`hipDeviceGetGraphMemAttribute`, `hipDeviceSetGraphMemAttribute`, `hipDeviceGraphMemTrim`);
//! CUDA programming guide "Graph Memory Nodes", clr `GraphMemAllocNode`/`GraphMemFreeNode`.
//!
//! An allocation node has its address from the moment it is made: a VA range reserved in the
//! one VA manager ([`GraphAlloc`]), kept while any node names it (the graph's, a clone's, an
//! executable graph's step). Running the node allocates a VRAM BO at that address (mapped on
//! the owner, on the devices with peer access to it, and on the node's `accessDescs` devices)
//! and enters it in the allocation registry, so every other API sees device memory. A free node,
//! `hipFreeAsync` or `hipFree` takes it out of the registry and gives the BO back: `hipFree`
//! at once (it waits for the devices), the stream-ordered frees once the freeing stream's
//! earlier work is done. The VA range stays reserved for the next run, and is given back with the
//! last node, or, if the memory is still allocated then, when it is freed.
//!
//! Counters per device (bytes, page-rounded): used = live graph allocations; reserved = used
//! plus freed ones whose BO still waits for its stream. Freed memory is given back, never kept,
//! so reserved equals used once the streams are idle (AMD's hip-tests expect exactly that) and
//! `hipDeviceGraphMemTrim` has only finished frees to complete.
//!
//! Layer `graph`: may call `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::core::memory::{vram_flags, Allocation, MemKind};
use crate::core::runtime::Runtime;
use crate::core::stream::{Fence, Stream};
use crate::core::va::{align_up, LARGE_ALIGN, PAGE_SIZE};
use crate::graph::CParams;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Weak};

/// The address of one allocation node: its reserved VA range and what to allocate there.
pub struct GraphAlloc {
    /// HIP ordinal of the owning device.
    pub dev: usize,
    /// The node's `dptr`.
    pub va: u64,
    /// Reserved bytes (page-rounded `bytesize`).
    pub size: u64,
    /// HIP ordinals of the other devices given read-write access (`accessDescs`).
    pub access: Vec<usize>,
    /// The parameters as given, `dptr` filled in (`hipGraphMemAllocNodeGetParams`).
    pub params: CParams<hipMemAllocNodeParams>,
    /// A free node names this allocation (clr allows one, in any graph).
    pub freed_by_node: AtomicBool,
}

impl Drop for GraphAlloc {
    fn drop(&mut self) {
        if let Ok(rt) = crate::core::runtime::runtime() {
            rt.graph_mem_forget(self.va, self.size);
        }
    }
}

/// A graph allocation freed in stream order: its BO waits for `fence`.
struct Pending {
    alloc: Arc<Allocation>,
    fence: Option<Fence>,
}

#[derive(Default)]
struct State {
    /// Reserved VA → its node address (weak: the nodes own it).
    nodes: HashMap<u64, Weak<GraphAlloc>>,
    /// Allocated now: VA → (device, bytes).
    live: HashMap<u64, (usize, u64)>,
    pending: Vec<Pending>,
    /// VA ranges whose nodes are gone while their memory was allocated: VA → bytes, given back
    /// with the BO.
    orphans: HashMap<u64, u64>,
    /// Per device: (used high, reserved high).
    high: HashMap<usize, (u64, u64)>,
}

impl State {
    fn used(&self, dev: usize) -> u64 {
        self.live.values().filter(|(d, _)| *d == dev).map(|(_, n)| n).sum()
    }
    fn reserved(&self, dev: usize) -> u64 {
        let pending: u64 = self.pending.iter().filter(|p| p.alloc.owner == dev).map(|p| p.alloc.size).sum();
        self.used(dev) + pending
    }
}

/// The process's graph memory.
#[derive(Default)]
pub struct GraphMem {
    st: Mutex<State>,
    /// Held while finished frees are given back, so that an allocation node never runs while
    /// its VA's old BO is still being freed by another thread (the completion thread's reap).
    reaping: Mutex<()>,
}

impl std::fmt::Debug for GraphMem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.st.lock();
        write!(f, "GraphMem {{ nodes: {}, live: {}, pending: {} }}", st.nodes.len(), st.live.len(), st.pending.len())
    }
}

impl Runtime {
    /// Reserves the address of a new allocation node of `bytesize` bytes on `dev` (`access`:
    /// other devices given access) and writes it into `params.dptr`. Errors:
    /// `hipErrorOutOfMemory` (no VA left).
    pub fn graph_mem_reserve(
        &self,
        dev: usize,
        access: Vec<usize>,
        mut params: hipMemAllocNodeParams,
    ) -> Result<Arc<GraphAlloc>, hipError_t> {
        let bytes = params.bytesize as u64;
        if bytes > self.devices[dev].topo.node.vram_size {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        let size = align_up(bytes, PAGE_SIZE);
        let align = if size >= LARGE_ALIGN { LARGE_ALIGN } else { PAGE_SIZE };
        let va = self.va.alloc(size, align).ok_or(hipError_t::hipErrorOutOfMemory)?;
        params.dptr = va as *mut std::ffi::c_void;
        let a = Arc::new(GraphAlloc {
            dev,
            va,
            size,
            access,
            params: CParams(params),
            freed_by_node: AtomicBool::new(false),
        });
        self.graph_mem().st.lock().nodes.insert(va, Arc::downgrade(&a));
        Ok(a)
    }

    /// The allocation node whose address is `ptr`, if one lives.
    pub fn graph_mem_node(&self, ptr: u64) -> Option<Arc<GraphAlloc>> {
        let w = self.graph_mem().st.lock().nodes.get(&ptr).cloned();
        w.and_then(|w| w.upgrade())
    }

    /// The allocation node whose range holds `ptr`: (device, address, bytes asked for).
    pub fn graph_mem_range(&self, ptr: u64) -> Option<(usize, u64, u64)> {
        // Upgraded outside the lock's use: the last reference may be dropped here, and its drop
        // takes the lock.
        let nodes: Vec<Arc<GraphAlloc>> = self.graph_mem().st.lock().nodes.values().filter_map(Weak::upgrade).collect();
        nodes.iter().find(|a| ptr >= a.va && ptr - a.va < a.size).map(|a| (a.dev, a.va, a.params.0.bytesize as u64))
    }

    /// Whether the memory of the node at `va` is allocated now.
    pub fn graph_mem_live(&self, va: u64) -> bool {
        self.graph_mem().st.lock().live.contains_key(&va)
    }

    /// Runs an allocation node: allocates its memory at its address (memory still allocated
    /// from an earlier run stays, as `hipGraphInstantiateFlagAutoFreeOnLaunch` has it). Errors:
    /// `hipErrorOutOfMemory`.
    pub fn graph_mem_alloc(&self, a: &GraphAlloc) -> Result<(), hipError_t> {
        self.graph_mem_reap(Some(a.va))?;
        if self.graph_mem_live(a.va) {
            return Ok(());
        }
        let d = &self.devices[a.dev];
        let (_peers, mut map_on) = self.peer_alloc_targets(a.dev);
        map_on.extend(a.access.iter().filter(|x| !map_on.contains(x)).copied().collect::<Vec<_>>());
        let bo = self.bo_alloc_at(a.dev, a.va, a.size, vram_flags(d.large_bar), &map_on, d.large_bar)?;
        self.allocs.insert(Allocation::with_bo(a.params.0.bytesize as u64, MemKind::Device, 0, bo));
        let mut st = self.graph_mem().st.lock();
        st.live.insert(a.va, (a.dev, a.size));
        let (used, reserved) = (st.used(a.dev), st.reserved(a.dev));
        let h = st.high.entry(a.dev).or_default();
        *h = (h.0.max(used), h.1.max(reserved));
        crate::core::log::hipkfd_log!("graph alloc {} bytes on device {} at {:#x}", a.size, a.dev, a.va);
        Ok(())
    }

    /// Frees graph memory at `ptr` in `s`'s order (a free node, `hipFreeAsync`) → whether `ptr`
    /// was allocated graph memory.
    pub fn graph_mem_free(&self, ptr: u64, s: &Stream) -> bool {
        let mut st = self.graph_mem().st.lock();
        if st.live.remove(&ptr).is_none() {
            return false;
        }
        let Some(alloc) = self.allocs.remove(ptr) else { return true };
        let fence = s.last_fence();
        st.pending.push(Pending { alloc, fence: fence.clone() });
        drop(st);
        match fence {
            Some(f) if !f.done() => self.after_fence(
                f,
                Box::new(|| {
                    if let Ok(rt) = crate::core::runtime::runtime() {
                        let _ = rt.graph_mem_reap(None);
                    }
                }),
            ),
            _ => {
                let _ = self.graph_mem_reap(None);
            }
        }
        true
    }

    /// Gives back the BOs of stream-ordered frees whose work is done; `wait_for`: also the one
    /// at that VA, waiting for its work first (an allocation node runs again). Errors:
    /// `hipErrorIllegalAddress` (the wait saw a VM fault).
    fn graph_mem_reap(&self, wait_for: Option<u64>) -> Result<(), hipError_t> {
        if let Some(va) = wait_for {
            let f = {
                let st = self.graph_mem().st.lock();
                st.pending.iter().find(|p| p.alloc.base == va).and_then(|p| p.fence.clone())
            };
            if let Some(f) = f {
                self.fence_wait(&f)?;
            }
        }
        // Never while waiting for a fence above: a fence may need the completion thread,
        // which may be waiting for this lock.
        let _reaping = self.graph_mem().reaping.lock();
        let done: Vec<Pending> = {
            let mut st = self.graph_mem().st.lock();
            let (done, keep) =
                std::mem::take(&mut st.pending).into_iter().partition(|p| p.fence.as_ref().is_none_or(|f| f.done()));
            st.pending = keep;
            done
        };
        if !done.is_empty() {
            let _peers = self.peer_guard();
            for p in done {
                self.release(&p.alloc);
            }
        }
        Ok(())
    }

    /// A graph allocation's BO is gone (`bo_free` of a `va_kept` BO): its VA range goes back
    /// too if no node names it any more.
    pub fn graph_mem_released(&self, va: u64) {
        let mut st = self.graph_mem().st.lock();
        st.live.remove(&va);
        if let Some(size) = st.orphans.remove(&va) {
            self.va.free(va, size);
        }
    }

    /// The last node naming the range at `va` is gone: the range goes back now, or with its
    /// memory if that is still allocated.
    fn graph_mem_forget(&self, va: u64, size: u64) {
        // Not while a reap frees this VA's BO: the range must outlive it.
        let _reaping = self.graph_mem().reaping.lock();
        let mut st = self.graph_mem().st.lock();
        if st.nodes.get(&va).is_some_and(|w| w.strong_count() == 0) {
            st.nodes.remove(&va);
        }
        if st.live.contains_key(&va) || st.pending.iter().any(|p| p.alloc.base == va) {
            st.orphans.insert(va, size);
        } else {
            self.va.free(va, size);
        }
    }

    /// `hipDeviceGetGraphMemAttribute` of device `dev` (bytes). Errors: `hipErrorInvalidValue`
    /// (not an attribute).
    pub fn graph_mem_attr(&self, dev: usize, attr: hipGraphMemAttributeType) -> Result<u64, hipError_t> {
        let _ = self.graph_mem_reap(None);
        let st = self.graph_mem().st.lock();
        let high = st.high.get(&dev).copied().unwrap_or_default();
        use hipGraphMemAttributeType as A;
        Ok(match attr {
            A::hipGraphMemAttrUsedMemCurrent => st.used(dev),
            A::hipGraphMemAttrUsedMemHigh => high.0,
            A::hipGraphMemAttrReservedMemCurrent => st.reserved(dev),
            A::hipGraphMemAttrReservedMemHigh => high.1,
            _ => return Err(hipError_t::hipErrorInvalidValue),
        })
    }

    /// `hipDeviceSetGraphMemAttribute` (the caller checked the attribute and the value 0):
    /// resets the used (`used_mark`) or reserved high-water mark of device `dev` to the current
    /// value, the reset CUDA describes as "to zero".
    pub fn graph_mem_reset_high(&self, dev: usize, used_mark: bool) {
        let _ = self.graph_mem_reap(None);
        let mut st = self.graph_mem().st.lock();
        let (used, reserved) = (st.used(dev), st.reserved(dev));
        let h = st.high.entry(dev).or_default();
        if used_mark {
            h.0 = used;
        } else {
            h.1 = reserved;
        }
    }

    /// `hipDeviceGraphMemTrim`: completes the frees whose work is done (no freed memory is
    /// kept otherwise).
    pub fn graph_mem_trim(&self) {
        let _ = self.graph_mem_reap(None);
    }
}

/// Whether `s` is capturing (a `hipMallocAsync`/`hipFreeAsync` on it becomes a graph node).
pub fn capturing(s: &Stream) -> bool {
    s.capture.lock::<Option<crate::graph::StreamCapture>>().is_some()
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::GraphMem`](crate::core::runtime::Feature) slot.
    pub fn graph_mem(&self) -> &GraphMem {
        self.feature(crate::core::runtime::Feature::GraphMem, |_| GraphMem::default())
    }
}
