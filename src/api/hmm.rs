//! Managed memory (HIP "Managed Memory" group; clr `hip_hmm.cpp`). Managed memory is coherent
//! system memory mapped on the CPU and every GPU at one address (src/memory.rs,
//! `MemKind::Managed`): every access is correct without migration, so prefetch and advice are
//! validated and then have nothing to do.

use crate::api::common::{api, check, rt_dev, stream_of, write_out};
use crate::api::types::*;
use crate::memory::MemKind;
use crate::runtime::runtime;
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
/// and not past the end of the allocation it starts in. Returns whether it starts in managed
/// memory.
fn check_range(dev_ptr: *const c_void, count: usize) -> Result<bool, hipError_t> {
    check(!dev_ptr.is_null() && count != 0)?;
    let rt = runtime()?;
    match rt.allocs.find(dev_ptr as u64) {
        Some(a) => {
            check(count as u64 <= a.end() - dev_ptr as u64)?;
            Ok(a.kind == MemKind::Managed)
        }
        None => Ok(false),
    }
}

/// `hipMemPrefetchAsync`: nothing to move (every device maps managed memory). Errors (clr, in
/// its order): `hipErrorInvalidValue` (null, `count == 0`, past the allocation's end),
/// `hipErrorContextIsDestroyed` (destroyed stream), `hipErrorInvalidDevice` (neither a device
/// nor `hipCpuDeviceId`), `hipErrorNotSupported` (memory the runtime does not know, to a
/// device: needs XNACK).
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
        check_range(dev_ptr, count)?;
        if device != hipCpuDeviceId {
            rt.device(device)?;
            if rt.allocs.find(dev_ptr as u64).is_none() {
                return Err(hipError_t::hipErrorNotSupported);
            }
        }
        Ok(())
    })
}

/// `hipMemAdvise`: validated and accepted; no advice changes where managed memory lives (it is
/// fine-grained system memory on every device). Errors (clr): `hipErrorInvalidDevice` (bad
/// device, except for the read-mostly advice), `hipErrorInvalidValue` (null, `count == 0`, past
/// the allocation's end, memory the runtime does not know, unknown advice).
#[no_mangle]
pub extern "C" fn hipMemAdvise(
    dev_ptr: *const c_void,
    count: usize,
    advice: hipMemoryAdvise,
    device: c_int,
) -> hipError_t {
    api(|| {
        let read_mostly = advice == hipMemoryAdvise::hipMemAdviseSetReadMostly
            || advice == hipMemoryAdvise::hipMemAdviseUnsetReadMostly;
        let rt = runtime()?;
        if !read_mostly && device != hipCpuDeviceId {
            rt.device(device)?;
        }
        check_range(dev_ptr, count)?;
        check(advice.name().is_some() && rt.allocs.find(dev_ptr as u64).is_some())
    })
}

/// `hipMemRangeGetAttribute`: one attribute of a managed range, as it stays with no advice
/// applied: read-mostly 0, preferred and last-prefetch location `hipInvalidDeviceId`, accessed-by
/// none (every 4-byte slot `hipInvalidDeviceId`), coherency fine-grain. Errors:
/// `hipErrorInvalidValue` (null, zero sizes, not managed memory, a `data_size` that does not fit
/// the attribute, unknown attribute).
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
        check(check_range(dev_ptr, count)?)?;
        type A = hipMemRangeAttribute;
        let one = |v: c_int| {
            check(data_size == 4)?;
            write_out(data as *mut c_int, v)
        };
        match attribute {
            A::hipMemRangeAttributeReadMostly => one(0),
            A::hipMemRangeAttributePreferredLocation | A::hipMemRangeAttributeLastPrefetchLocation => {
                one(hipInvalidDeviceId)
            }
            A::hipMemRangeAttributeCoherencyMode => one(0),
            A::hipMemRangeAttributeAccessedBy => {
                check(data_size.is_multiple_of(4))?;
                for i in 0..data_size / 4 {
                    write_out((data as *mut c_int).wrapping_add(i), hipInvalidDeviceId)?;
                }
                Ok(())
            }
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// `hipStreamAttachMemAsync`: validated and accepted (clr: "unclear what should be done in AMD
/// HMM"). Errors (clr): `hipErrorInvalidValue` (null, unknown flags, `hipMemAttachSingle` on the
/// null stream, memory the runtime does not know, a length other than 0 or the managed
/// allocation's size), `hipErrorContextIsDestroyed`.
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
        let a = rt.allocs.find(dev_ptr as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
        check(a.kind != MemKind::Managed || length == 0 || length as u64 == a.size)
    })
}
