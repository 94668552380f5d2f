//! Host memory registration (`hipHostRegister`): the user's own pages become KFD USERPTR BOs,
//! GPU-mapped on every device at their own address, so GPU VA == CPU VA holds for registered
//! memory too and every copy, fill and kernel uses the host pointer as the device pointer.
//!
//! The BOs cover whole pages, and two registrations may share a page (adjacent buffers of one
//! heap page, or chunks of one buffer). A GPUVM cannot map one VA twice (`amdgpu_vm_bo_map`:
//! overlap → EINVAL), so pages are held in *spans*: disjoint page ranges, each one USERPTR BO
//! with a count of the registrations using it. A registration makes BOs only for the pages no
//! span covers yet and takes a reference on the spans it overlaps; the last reference frees the
//! span. Each registration is an `MemKind::Registered` allocation in the one registry.
//!
//! With XNACK on, the GPUs already reach every page of the process through retry faults (HMM),
//! so a registration makes no BO at all: it checks that the range is mapped and records it, as
//! ROCr registers through SVM when XNACK is on (`HSA_USE_SVM=0` turns that off there and here).
//! Read-only registrations keep their read-only USERPTR BOs.
//!
//! Layer `mem`: may call `core`, `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::{Allocation, Backing, MemKind};
use crate::core::runtime::Runtime;
use crate::core::va::{align_up, pages_mapped, PAGE_SIZE};
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// `hipHostRegisterReadOnly`: the GPUs map the pages read-only.
const REGISTER_READ_ONLY: u32 = 0x8;

/// Whether registrations go through XNACK instead of USERPTR BOs: not with `HSA_USE_SVM=0`
/// (read once, as ROCr reads it at start).
fn svm_register() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("HSA_USE_SVM").as_deref() != Ok("0"))
}

/// One span of registered pages: a USERPTR BO at `[start, end)`.
#[derive(Debug)]
struct Span {
    end: u64,
    handle: u64,
    gpus: Vec<u32>,
    /// Registrations using the span.
    refs: usize,
}

/// The spans of registered pages, by start address.
#[derive(Debug, Default)]
pub struct UserPages {
    spans: Mutex<BTreeMap<u64, Span>>,
    /// Registrations made again at the base of a live one, within its size, by base: each needs
    /// its own `hipHostUnregister` before the first one goes.
    again: Mutex<BTreeMap<u64, usize>>,
}

impl Runtime {
    /// Registers `[va, va + size)` (page aligned, mapped in this process) as a USERPTR BO with
    /// `flags` (`KFD_IOC_ALLOC_MEM_FLAGS_*`, USERPTR implied) at GPU VA `va`, mapped on every
    /// device. Returns the handle and the `gpu_id`s. Nothing is left behind on failure.
    /// Errors: the `ALLOC_MEMORY_OF_GPU` errno (EFAULT: pages not mapped), or the
    /// `MAP_MEMORY_TO_GPU` one.
    pub fn userptr_bo(&self, va: u64, size: u64, flags: u32) -> Result<(u64, Vec<u32>), Errno> {
        let mut args = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: va,
            size,
            mmap_offset: va,
            gpu_id: self.devices[0].gpu_id,
            flags: flags | KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
            ..Default::default()
        };
        self.kfd.alloc_memory_of_gpu(&mut args)?;
        let gpus: Vec<u32> = self.devices.iter().map(|d| d.gpu_id).collect();
        if let Err((e, n)) = self.kfd.map_memory_to_gpu(args.handle, &gpus) {
            let _ = self.kfd.unmap_memory_from_gpu(args.handle, &gpus[..n as usize]);
            let _ = self.kfd.free_memory_of_gpu(args.handle);
            return Err(e);
        }
        Ok((args.handle, gpus))
    }

    /// Unmaps and frees a BO made by [`userptr_bo`](Self::userptr_bo).
    pub fn userptr_free(&self, handle: u64, gpus: &[u32]) {
        if let Err((e, _)) = self.kfd.unmap_memory_from_gpu(handle, gpus) {
            crate::core::log::hipkfd_log!("UNMAP_MEMORY_FROM_GPU(USERPTR) {handle:#x}: {e}");
        }
        if let Err(e) = self.kfd.free_memory_of_gpu(handle) {
            crate::core::log::hipkfd_log!("FREE_MEMORY_OF_GPU(USERPTR) {handle:#x}: {e}");
        }
    }

    /// `hipHostRegister`: registers the user's `[ptr, ptr + size)` (any alignment) with
    /// `hipHostRegister*` `flags` (already validated), on behalf of device `dev`. Afterwards the
    /// range is pinned host memory to every API, at the same address on every device.
    /// A registration at the base of a live one and within its size succeeds and stacks on it
    /// (clr registers the same pages again; hip-tests such as `Unit_hipFreeNegativeHost` and
    /// `Unit_hipStreamWaitValue_Default` register a heap block, free it without unregistering,
    /// and register the block the allocator hands out again at that address).
    /// Errors: `hipErrorHostMemoryAlreadyRegistered` (any other overlap with a registration or
    /// `hipHostMalloc` memory, CUDA's rule), `hipErrorInvalidValue` (wraps, inside the GPU
    /// aperture, outside the GPUVM range, or pages not mapped: clr's answer when
    /// `amd::Memory::create` fails), `hipErrorOutOfMemory`.
    pub fn host_register(&self, dev: usize, ptr: u64, size: u64, flags: u32) -> Result<(), hipError_t> {
        let end = ptr.checked_add(size).ok_or(hipError_t::hipErrorInvalidValue)?;
        // Held from the overlap check to the insert: concurrent registrations serialise.
        let mut spans = self.userpages().spans.lock();
        if let Some(a) = self.allocs.find_in(ptr, size) {
            if a.kind == MemKind::Registered && a.base == ptr && size <= a.size {
                *self.userpages().again.lock().entry(ptr).or_default() += 1;
                return Ok(());
            }
            return Err(match a.kind {
                MemKind::Registered | MemKind::Host => hipError_t::hipErrorHostMemoryAlreadyRegistered,
                _ => hipError_t::hipErrorInvalidValue,
            });
        }
        if self.va.contains(ptr, size) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let (ps, pe) = (ptr & !(PAGE_SIZE - 1), align_up(end, PAGE_SIZE));
        if self.devices.iter().any(|d| ps < d.apertures.gpuvm_base || pe - 1 > d.apertures.gpuvm_limit) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        if self.xnack && flags & REGISTER_READ_ONLY == 0 && svm_register() {
            if !pages_mapped(ps, pe - ps) {
                return Err(hipError_t::hipErrorInvalidValue);
            }
            self.insert_registration(dev, ptr, size, flags, vec![]);
            return Ok(());
        }
        let mut kfd_flags = KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
        if flags & REGISTER_READ_ONLY == 0 {
            kfd_flags |= KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
        }
        // The spans overlapping [ps, pe), then the gaps between them.
        let first = spans.range(..ps).next_back().filter(|(_, s)| s.end > ps).map(|(k, _)| *k);
        let old: Vec<u64> = first.into_iter().chain(spans.range(ps..pe).map(|(k, _)| *k)).collect();
        let mut gaps = vec![];
        let mut cur = ps;
        for k in &old {
            if *k > cur {
                gaps.push((cur, *k));
            }
            cur = cur.max(spans[k].end);
        }
        if cur < pe {
            gaps.push((cur, pe));
        }
        let mut made: Vec<(u64, Span)> = vec![];
        for (s, e) in gaps {
            match self.userptr_bo(s, e - s, kfd_flags) {
                Ok((handle, gpus)) => made.push((s, Span { end: e, handle, gpus, refs: 1 })),
                Err(err) => {
                    crate::core::log::hipkfd_log!("hipHostRegister {ptr:#x}+{size}: USERPTR {s:#x}..{e:#x}: {err}");
                    for (_, sp) in made {
                        self.userptr_free(sp.handle, &sp.gpus);
                    }
                    return Err(match err {
                        Errno::ENOMEM => hipError_t::hipErrorOutOfMemory,
                        _ => hipError_t::hipErrorInvalidValue,
                    });
                }
            }
        }
        for k in &old {
            spans.get_mut(k).expect("span listed above").refs += 1;
        }
        let mut starts = old;
        for (s, sp) in made {
            starts.push(s);
            spans.insert(s, sp);
        }
        self.insert_registration(dev, ptr, size, flags, starts);
        Ok(())
    }

    /// Records the registration of `[ptr, ptr + size)` by device `dev`, on the spans starting
    /// at `starts` (none with XNACK).
    fn insert_registration(&self, dev: usize, ptr: u64, size: u64, flags: u32, starts: Vec<u64>) {
        self.allocs.insert(Allocation {
            base: ptr,
            size,
            kind: MemKind::Registered,
            flags,
            owner: dev,
            backing: Backing::UserPages(starts),
            id: 0,
            sync_memops: Default::default(),
        });
    }

    /// `hipHostUnregister`: waits for every device (clr syncs the registering device's streams;
    /// queued copies may use the pages), then drops the registration whose base is `ptr` (the
    /// latest one stacked there first, see [`host_register`](Self::host_register)), freeing
    /// the spans no other registration uses. Errors: `hipErrorHostMemoryNotRegistered` for any
    /// other pointer (an interior one included).
    pub fn host_unregister(&self, ptr: u64) -> Result<(), hipError_t> {
        let not_reg = hipError_t::hipErrorHostMemoryNotRegistered;
        match self.allocs.get(ptr) {
            Some(a) if a.kind == MemKind::Registered => {}
            _ => return Err(not_reg),
        }
        for d in 0..self.devices.len() {
            self.device_sync(d)?;
        }
        {
            let mut again = self.userpages().again.lock();
            if let Some(n) = again.get_mut(&ptr) {
                *n -= 1;
                if *n == 0 {
                    again.remove(&ptr);
                }
                return Ok(());
            }
        }
        let a = self.allocs.remove(ptr).ok_or(not_reg)?;
        let Backing::UserPages(starts) = &a.backing else { return Err(not_reg) };
        let mut spans = self.userpages().spans.lock();
        for k in starts {
            let Some(sp) = spans.get_mut(k) else { continue };
            sp.refs -= 1;
            if sp.refs == 0 {
                let sp = spans.remove(k).expect("span present");
                self.userptr_free(sp.handle, &sp.gpus);
            }
        }
        Ok(())
    }
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::UserPages`](crate::core::runtime::Feature) slot.
    pub fn userpages(&self) -> &UserPages {
        self.feature(crate::core::runtime::Feature::UserPages, |_| UserPages::default())
    }
}
