//! Managed memory (HIP "Managed Memory" group; clr `hip_hmm.cpp`). Managed memory is coherent
//! system memory mapped on the CPU and every GPU at one address (src/core/memory.rs,
//! `MemKind::Managed`): every access is correct without migration, so prefetch and advice move
//! nothing; they are remembered (src/mem/advice.rs) for `hipMemRangeGetAttribute(s)`.
//!
//! With XNACK on (`HSA_XNACK=1`, `Runtime::xnack`) every GPU also reaches pageable memory
//! (`malloc`, `mmap`) through retry faults, so advice and range attributes apply to it as to
//! managed memory (KFD SVM ranges); without XNACK they refuse memory the runtime does not know,
//! as CUDA does without `pageableMemoryAccess`.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, read_in, rt_dev, stream_of, write_out};
use crate::core::memory::MemKind;
use crate::core::runtime::runtime;
use crate::core::va::pages_mapped;
use crate::mem::advice::{device_bit, PageAdvice, RangeAdvice, INVALID_DEVICE};
use std::ffi::{c_int, c_uint, c_void};

/// `hipMallocManaged`: `size` bytes of managed memory. Errors (clr): `hipErrorInvalidValue`
/// (null `dev_ptr`, `size == 0`, `flags` other than `hipMemAttachGlobal` or `hipMemAttachHost`),
/// `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMallocManaged(dev_ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null() && size != 0)?;
        check(flags == hipMemAttachGlobal || flags == hipMemAttachHost)?;
        let (rt, d) = rt_dev()?;
        write_out(dev_ptr, std::ptr::null_mut())?;
        let base = rt.mem_alloc_managed(d, size as u64, flags)?;
        write_out(dev_ptr, base as *mut c_void)
    })
}

/// Validates `[dev_ptr, dev_ptr + count)` as clr's prefetch and advice do: non-null, non-empty,
/// and not past the end of the allocation it starts in. Returns whether advice applies to it:
/// managed memory, or with XNACK on, pageable memory (registered or not the runtime's at all).
fn check_range(dev_ptr: *const c_void, count: usize) -> Result<bool, hipError_t> {
    check(!dev_ptr.is_null() && count != 0)?;
    let rt = runtime()?;
    match rt.allocs.find(dev_ptr as u64) {
        Some(a) => {
            check(count as u64 <= a.end() - dev_ptr as u64)?;
            Ok(a.kind == MemKind::Managed || rt.xnack && a.kind == MemKind::Registered)
        }
        // Pageable memory: with XNACK a mapped range of it outside the runtime's GPU aperture
        // (freed device memory), as the KFD's SVM attribute calls check a range.
        None if rt.xnack => {
            let (p, n) = (dev_ptr as u64, count as u64);
            check(!rt.va.contains(p, n) && pages_mapped(p, n)).map(|_| true)
        }
        None => Ok(false),
    }
}

/// `hipMemPrefetchAsync`: nothing to move (every device maps managed memory); the destination
/// is remembered as the range's last prefetch location (`hipMemRangeAttributeLastPrefetchLocation`)
/// for managed memory. Errors (clr, in its order): `hipErrorInvalidValue` (null, `count == 0`,
/// past the allocation's end), `hipErrorContextIsDestroyed` (destroyed stream),
/// `hipErrorInvalidDevice` (neither a device nor `hipCpuDeviceId`), `hipErrorNotSupported`
/// (memory the runtime does not know, to a device, XNACK off). With XNACK on, pageable memory
/// prefetches like managed memory (clr since e829ef68e; hip-tests' `hipMemAdviseTstAlignedAllocMem`,
/// while the older `Unit_hipMemAdvise_TstAlignedAllocMem` still expects `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipMemPrefetchAsync(
    dev_ptr: *const c_void,
    count: usize,
    device: c_int,
    stream: hipStream_t,
) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null() && count != 0)?;
        let rt = runtime()?;
        stream_of(rt, stream)?;
        let managed = check_range(dev_ptr, count)?;
        if device != hipCpuDeviceId {
            rt.device(device)?;
            if rt.allocs.find(dev_ptr as u64).is_none() {
                check(rt.xnack).map_err(|_| hipError_t::hipErrorNotSupported)?;
            }
        }
        if managed {
            rt.advice().update(dev_ptr as u64, count as u64, |a| a.last_prefetch = device);
        }
        Ok(())
    })
}

/// `hipMemAdvise`: remembered for managed memory, and with XNACK for pageable memory
/// (read-mostly, preferred location, accessed-by, coarse grain, and their unset forms), and
/// reported by `hipMemRangeGetAttribute(s)`; no advice changes where memory lives (it is
/// system memory every device reaches). Advice on other system memory the runtime knows
/// (pinned; registered without XNACK) is accepted and forgotten. Errors (clr):
/// `hipErrorInvalidDevice` (bad device, except for the read-mostly advice),
/// `hipErrorInvalidValue` (null, `count == 0`, past the allocation's end, memory the runtime
/// does not know with XNACK off, device memory (clr's `SetSvmAttributes` fails on a `hipMalloc`
/// range; hip-tests Unit_hipMemAdvise_Negative_Parameters), unknown advice).
#[no_mangle]
pub extern "C" fn hipMemAdvise(
    dev_ptr: *const c_void,
    count: usize,
    advice: hipMemoryAdvise,
    device: c_int,
) -> hipError_t {
    api(|| {
        type M = hipMemoryAdvise;
        let read_mostly = advice == M::hipMemAdviseSetReadMostly || advice == M::hipMemAdviseUnsetReadMostly;
        let rt = runtime()?;
        if !read_mostly && device != hipCpuDeviceId {
            rt.device(device)?;
        }
        let advised = check_range(dev_ptr, count)?;
        let known = rt.allocs.find(dev_ptr as u64);
        check(advice.name().is_some() && (known.as_ref().map_or(advised, |a| a.is_host_memory())))?;
        if !advised {
            return Ok(());
        }
        let bit = device_bit(device);
        let set: &dyn Fn(&mut PageAdvice) = match advice {
            M::hipMemAdviseSetReadMostly => &|a| a.read_mostly = true,
            M::hipMemAdviseUnsetReadMostly => &|a| a.read_mostly = false,
            M::hipMemAdviseSetPreferredLocation => &|a| a.preferred = device,
            M::hipMemAdviseUnsetPreferredLocation => &|a| a.preferred = INVALID_DEVICE,
            M::hipMemAdviseSetAccessedBy => &|a| a.accessed_by |= bit,
            M::hipMemAdviseUnsetAccessedBy => &|a| a.accessed_by &= !bit,
            M::hipMemAdviseSetCoarseGrain => &|a| a.coarse = true,
            _ => &|a| a.coarse = false,
        };
        rt.advice().update(dev_ptr as u64, count as u64, set);
        Ok(())
    })
}

/// Writes `attribute` of `r` to `data` (`data_size` bytes), as rocclr's
/// `Device::GetSvmAttributes`: 4-byte values; accessed-by fills `data_size / 4` slots with the
/// advised devices (GPUs by ordinal, then `hipCpuDeviceId`) and `hipInvalidDeviceId` after
/// them. Errors: `hipErrorInvalidValue` (a size that does not fit the attribute, an unknown
/// attribute).
fn write_attr(
    data: *mut c_void,
    data_size: usize,
    attribute: hipMemRangeAttribute,
    r: &RangeAdvice,
    devices: usize,
) -> Result<(), hipError_t> {
    check(!data.is_null())?;
    type A = hipMemRangeAttribute;
    let one = |v: c_int| {
        check(data_size == 4)?;
        write_out(data as *mut c_int, v)
    };
    match attribute {
        A::hipMemRangeAttributeReadMostly => one(r.read_mostly as c_int),
        A::hipMemRangeAttributePreferredLocation => one(r.preferred),
        A::hipMemRangeAttributeLastPrefetchLocation => one(r.last_prefetch),
        A::hipMemRangeAttributeCoherencyMode => one(r.coherency),
        A::hipMemRangeAttributeAccessedBy => {
            check(data_size.is_multiple_of(4))?;
            let ids = (0..devices.min(63) as c_int).chain([hipCpuDeviceId]);
            let mut set = ids.filter(|&d| r.accessed_by & device_bit(d) != 0);
            for i in 0..data_size / 4 {
                write_out((data as *mut c_int).wrapping_add(i), set.next().unwrap_or(hipInvalidDeviceId))?;
            }
            Ok(())
        }
        _ => Err(hipError_t::hipErrorInvalidValue),
    }
}

/// `hipMemRangeGetAttribute`: one attribute of a managed range (or with XNACK, a pageable one),
/// what all its pages have in
/// common: read-mostly (1 only if every page is), preferred and last-prefetch location (the
/// common one, else `hipInvalidDeviceId`), accessed-by (devices advised for every page),
/// coherency mode (0 fine-grain, 1 coarse-grain advice on every page, 2 mixed). The coherency
/// mode of other memory the runtime knows is its grain (clr `GetSvmAttributes` asks ROCr's
/// pointer info): device memory 1, pinned host memory 0 (1 if `hipHostMallocNonCoherent`).
/// Errors: `hipErrorInvalidValue` (null, zero sizes, for the other attributes memory neither
/// managed nor (with XNACK) pageable, a range past the allocation, a `data_size` that does not
/// fit the attribute, unknown attribute).
#[no_mangle]
pub extern "C" fn hipMemRangeGetAttribute(
    data: *mut c_void,
    data_size: usize,
    attribute: hipMemRangeAttribute,
    dev_ptr: *const c_void,
    count: usize,
) -> hipError_t {
    api(|| {
        check(!data.is_null() && data_size != 0)?;
        let advised = check_range(dev_ptr, count)?;
        let rt = runtime()?;
        if !advised && attribute == hipMemRangeAttribute::hipMemRangeAttributeCoherencyMode {
            // clr answers this one for allocations ROCr knows from their pool's grain: device
            // memory coarse (1), pinned host memory fine (0) unless allocated non-coherent.
            let a = rt.allocs.find(dev_ptr as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
            let fine = a.is_host_memory() && a.flags & hipHostMallocNonCoherent == 0;
            check(data_size == 4)?;
            return write_out(data as *mut c_int, if fine { 0 } else { 1 });
        }
        check(advised)?;
        let r = rt.advice().query(dev_ptr as u64, count as u64);
        write_attr(data, data_size, attribute, &r, rt.devices.len())
    })
}

/// `hipMemRangeGetAttributes`: `num_attributes` attributes of a managed range at once, each
/// `attributes[i]` written to `data[i]` (`data_sizes[i]` bytes) as `hipMemRangeGetAttribute`
/// does. Errors (clr): `hipErrorInvalidValue` (null arrays or `dev_ptr`, zero counts, a null
/// `data[i]`, not managed memory, and those of `hipMemRangeGetAttribute`); outputs before a
/// failing attribute may have been written.
#[no_mangle]
pub extern "C" fn hipMemRangeGetAttributes(
    data: *mut *mut c_void,
    data_sizes: *mut usize,
    attributes: *mut hipMemRangeAttribute,
    num_attributes: usize,
    dev_ptr: *const c_void,
    count: usize,
) -> hipError_t {
    api(|| {
        check(!data.is_null() && !data_sizes.is_null() && !attributes.is_null() && num_attributes != 0)?;
        check(check_range(dev_ptr, count)?)?;
        let rt = runtime()?;
        // clr: only for memory it allocated, even with XNACK.
        check(rt.allocs.find(dev_ptr as u64).is_some_and(|a| a.kind == MemKind::Managed))?;
        let r = rt.advice().query(dev_ptr as u64, count as u64);
        for i in 0..num_attributes {
            let d = read_in(data.wrapping_add(i) as *const *mut c_void)?;
            let size = read_in(data_sizes.wrapping_add(i) as *const usize)?;
            let attr = read_in(attributes.wrapping_add(i) as *const hipMemRangeAttribute)?;
            write_attr(d, size, attr, &r, rt.devices.len())?;
        }
        Ok(())
    })
}

/// `hipStreamAttachMemAsync`: validated and accepted (clr: "unclear what should be done in AMD
/// HMM"). Errors (clr): `hipErrorInvalidValue` (null, unknown flags, `hipMemAttachSingle` on the
/// null stream, memory the runtime does not know unless XNACK is on and `length` is not 0, a
/// length other than 0 or the managed allocation's size), `hipErrorContextIsDestroyed`.
#[no_mangle]
pub extern "C" fn hipStreamAttachMemAsync(
    stream: hipStream_t,
    dev_ptr: *mut c_void,
    length: usize,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null())?;
        let rt = runtime()?;
        stream_of(rt, stream)?;
        check(flags == hipMemAttachGlobal || flags == hipMemAttachHost || flags == hipMemAttachSingle)?;
        check(!(flags == hipMemAttachSingle && stream.is_null()))?;
        match rt.allocs.find(dev_ptr as u64) {
            Some(a) => check(a.kind != MemKind::Managed || length == 0 || length as u64 == a.size),
            // Pageable memory: with XNACK, a non-empty range of it (clr `hmmCpuMemoryAccessible_`).
            None => check(rt.xnack && length != 0),
        }
    })
}

/// The device a `hipMemLocation` names for the `_v2` calls (clr `ihipMemAdvise`,
/// `ihipMemPrefetchAsync`): a device's ordinal (`hipMemLocationTypeDevice`, checked by the call
/// it is given to), or `hipCpuDeviceId` for the host, a host NUMA node and the current thread's
/// host NUMA node (the runtime sees one host node). Errors: `hipErrorInvalidValue` for another
/// type.
fn location_device(l: hipMemLocation) -> Result<c_int, hipError_t> {
    type T = hipMemLocationType;
    match l.r#type {
        T::hipMemLocationTypeDevice => Ok(l.id),
        T::hipMemLocationTypeHost | T::hipMemLocationTypeHostNuma | T::hipMemLocationTypeHostNumaCurrent => {
            Ok(hipCpuDeviceId)
        }
        _ => Err(hipError_t::hipErrorInvalidValue),
    }
}

/// `hipError_t hipMemPrefetchAsync_v2(const void* dev_ptr, size_t count, hipMemLocation location,
/// unsigned int flags, hipStream_t stream)` (ROCm 7.1): [`hipMemPrefetchAsync`] to the device
/// `location` names (host locations: `hipCpuDeviceId`). Errors: `hipErrorInvalidValue`
/// (`flags` not 0, a location type that is neither a device nor the host), then
/// [`hipMemPrefetchAsync`]'s.
#[no_mangle]
pub extern "C" fn hipMemPrefetchAsync_v2(
    dev_ptr: *const c_void,
    count: usize,
    location: hipMemLocation,
    flags: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    match (|| {
        check(flags == 0)?;
        location_device(location)
    })() {
        Ok(device) => hipMemPrefetchAsync(dev_ptr, count, device, stream),
        Err(e) => api(|| Err(e)),
    }
}

/// `hipError_t hipMemAdvise_v2(const void* dev_ptr, size_t count, hipMemoryAdvise advice,
/// hipMemLocation location)` (ROCm 7.1): [`hipMemAdvise`] for the device `location` names (host
/// locations: `hipCpuDeviceId`). Errors: `hipErrorInvalidValue` (a location type that is
/// neither a device nor the host), then [`hipMemAdvise`]'s.
#[no_mangle]
pub extern "C" fn hipMemAdvise_v2(
    dev_ptr: *const c_void,
    count: usize,
    advice: hipMemoryAdvise,
    location: hipMemLocation,
) -> hipError_t {
    match location_device(location) {
        Ok(device) => hipMemAdvise(dev_ptr, count, advice, device),
        Err(e) => api(|| Err(e)),
    }
}
