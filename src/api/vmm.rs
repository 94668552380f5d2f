//! Virtual memory management: the 14 `hipMem*` VMM entry points (clr's `hip_vm.cpp` group).
//! The core is `src/share/vmm.rs`; see there for how each maps to KFD and DRM ioctls.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, current_device, read_in, rt_dev, slice_in, stream_of, write_out};
use crate::core::runtime::runtime;
use crate::share::vmm::{os_handle_fd, AllocProp};
use std::ffi::{c_uint, c_ulonglong, c_void};

fn handle_id(h: hipMemGenericAllocationHandle_t) -> Result<u64, hipError_t> {
    check(!h.is_null())?;
    Ok(h as u64)
}

/// `hipMemGetAllocationGranularity`: the granularity (bytes) of chunks with properties `prop`:
/// 4 KiB (`hipMemAllocationGranularityMinimum`) or 2 MiB (`...Recommended`). Errors:
/// `hipErrorInvalidValue` (null pointers, option, type, location, device id).
#[no_mangle]
pub extern "C" fn hipMemGetAllocationGranularity(
    granularity: *mut usize,
    prop: *const hipMemAllocationProp,
    option: hipMemAllocationGranularity_flags,
) -> hipError_t {
    api(|| {
        check(!granularity.is_null())?;
        let p = AllocProp::read(prop)?;
        let g = runtime()?.vmm_granularity(&p, option)?;
        write_out(granularity, g as usize)
    })
}

/// `hipMemAddressReserve`: reserves `size` bytes of virtual addresses (a multiple of the
/// minimum granularity) aligned to `alignment` (0 = default), at `addr` when that range is free
/// (a hint), and stores the base in `*ptr`. `flags` must be 0. Errors: `hipErrorInvalidValue`
/// (null `ptr`, size, alignment, flags; ROCm 6 returned `hipErrorMemoryAllocation` for bad sizes,
/// ROCm 7 and we `hipErrorInvalidValue`), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMemAddressReserve(
    ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    addr: *mut c_void,
    flags: c_ulonglong,
) -> hipError_t {
    api(|| {
        check(!ptr.is_null() && flags == 0)?;
        let va = runtime()?.vmm_reserve(size as u64, alignment as u64, addr as u64)?;
        write_out(ptr, va as *mut c_void)
    })
}

/// `hipMemAddressFree`: gives back a whole reservation (`devPtr` and `size` as reserved), which
/// must no longer be mapped. Errors: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipMemAddressFree(devPtr: *mut c_void, size: usize) -> hipError_t {
    api(|| {
        check(!devPtr.is_null() && size != 0)?;
        runtime()?.vmm_address_free(devPtr as u64, size as u64)
    })
}

/// `hipMemCreate`: a physical chunk of `size` bytes (a multiple of the minimum granularity) on
/// `prop->location` (a device, or the host), not mapped anywhere; `flags` must be 0. Errors:
/// `hipErrorInvalidValue` (null pointers, size, flags, type, location type),
/// `hipErrorInvalidDevice` (`location.id` out of range, ROCm 7), `hipErrorNotSupported` (Win32 or
/// fabric handle types), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMemCreate(
    handle: *mut hipMemGenericAllocationHandle_t,
    size: usize,
    prop: *const hipMemAllocationProp,
    flags: c_ulonglong,
) -> hipError_t {
    api(|| {
        check(!handle.is_null() && size != 0 && flags == 0)?;
        let p = AllocProp::read(prop)?;
        let rt = runtime()?;
        let id = rt.vmm_create(size as u64, &p, current_device().min(rt.devices.len() - 1))?;
        write_out(handle, id as hipMemGenericAllocationHandle_t)
    })
}

/// `hipMemRelease`: drops one reference to a chunk; it is freed once no handle reference and no
/// mapping is left (releasing before unmapping is legal). Errors: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipMemRelease(handle: hipMemGenericAllocationHandle_t) -> hipError_t {
    api(|| runtime()?.vmm_release(handle_id(handle)?))
}

/// `hipMemMap`: maps `size` bytes of chunk `handle` from byte `offset` on (both multiples of the
/// minimum granularity; ROCm allows offset 0 only) at `ptr`, inside one reservation and over no
/// other mapping. `flags` must be 0. No device has access until `hipMemSetAccess`. Errors:
/// `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipMemMap(
    ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: hipMemGenericAllocationHandle_t,
    flags: c_ulonglong,
) -> hipError_t {
    api(|| {
        check(!ptr.is_null() && size != 0 && flags == 0)?;
        runtime()?.vmm_map(ptr as u64, size as u64, offset as u64, handle_id(handle)?)
    })
}

/// `hipMemUnmap`: unmaps the whole mappings that make up `[ptr, ptr + size)` once the devices
/// that could access them are idle. Errors: `hipErrorInvalidValue` (null, size 0, a range that is
/// not exactly whole mappings).
#[no_mangle]
pub extern "C" fn hipMemUnmap(ptr: *mut c_void, size: usize) -> hipError_t {
    api(|| {
        check(!ptr.is_null() && size != 0)?;
        runtime()?.vmm_unmap(ptr as u64, size as u64)
    })
}

/// `hipMemSetAccess`: gives each of the `count` locations in `desc` its access
/// (`ProtNone`/`ProtRead`/`ProtReadWrite`) to the mappings that make up `[ptr, ptr + size)`.
/// `ProtRead` is enforced: the GPU mapping has no write permission. Errors:
/// `hipErrorInvalidValue` (null, size 0, count 0, range, location, flags, host access to device
/// memory), `hipErrorInvalidDevice` (a device with no path to the memory's GPU).
#[no_mangle]
pub extern "C" fn hipMemSetAccess(
    ptr: *mut c_void,
    size: usize,
    desc: *const hipMemAccessDesc,
    count: usize,
) -> hipError_t {
    api(|| {
        check(!ptr.is_null() && size != 0 && !desc.is_null() && count != 0 && count <= 1 << 16)?;
        runtime()?.vmm_set_access(ptr as u64, size as u64, slice_in(desc, count)?)
    })
}

/// `hipMemGetAccess`: stores in `*flags` the access `location` has at `ptr` (any address inside
/// a mapping); `ProtNone` for a location never given access. Errors: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipMemGetAccess(
    flags: *mut c_ulonglong,
    location: *const hipMemLocation,
    ptr: *mut c_void,
) -> hipError_t {
    api(|| {
        check(!flags.is_null() && !location.is_null() && !ptr.is_null())?;
        let loc = read_in(location)?;
        let f = runtime()?.vmm_get_access(&loc, ptr as u64)?;
        write_out(flags, f.0 as c_ulonglong)
    })
}

/// `hipMemRetainAllocationHandle`: stores in `*handle` the handle of the chunk mapped at `addr`
/// (anywhere inside a mapping) and takes a reference that `hipMemRelease` drops. Errors:
/// `hipErrorInvalidValue` (null, not mapped).
#[no_mangle]
pub extern "C" fn hipMemRetainAllocationHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    addr: *mut c_void,
) -> hipError_t {
    api(|| {
        check(!handle.is_null() && !addr.is_null())?;
        let rt = runtime()?;
        let id = rt.vmm_retain(addr as u64)?;
        write_out(handle, id as hipMemGenericAllocationHandle_t).inspect_err(|_| {
            let _ = rt.vmm_release(id);
        })
    })
}

/// `hipMemGetAllocationPropertiesFromHandle`: the properties of chunk `handle` (for an imported
/// chunk: a device location naming the memory's GPU), in the `hipMemAllocationProp` layout the
/// chunk was created with. Errors: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipMemGetAllocationPropertiesFromHandle(
    prop: *mut hipMemAllocationProp,
    handle: hipMemGenericAllocationHandle_t,
) -> hipError_t {
    api(|| {
        check(!prop.is_null())?;
        runtime()?.vmm_props(handle_id(handle)?)?.write(prop)
    })
}

/// `hipMemExportToShareableHandle`: for `handleType` `hipMemHandleTypePosixFileDescriptor`,
/// writes a new dma-buf fd (an `int`, 4 bytes) to `shareableHandle`; the caller owns and closes
/// it. The chunk must have been created with that requested handle type; `flags` must be 0.
/// Errors: `hipErrorInvalidValue`, `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMemExportToShareableHandle(
    shareableHandle: *mut c_void,
    handle: hipMemGenericAllocationHandle_t,
    handleType: hipMemAllocationHandleType,
    flags: c_ulonglong,
) -> hipError_t {
    api(|| {
        check(!shareableHandle.is_null() && flags == 0)?;
        let fd = runtime()?.vmm_export(handle_id(handle)?, handleType)?;
        write_out(shareableHandle as *mut i32, fd)
    })
}

/// `hipMemImportFromShareableHandle`: a handle for the chunk behind a dma-buf fd, usable in this
/// process like its own (map it, give any device that reaches the memory's GPU access). The
/// caller keeps the fd. `osHandle` is the fd cast to a pointer (CUDA, ROCm 7) or a pointer to an
/// `int` fd (ROCm ≤ 6): values below `fs.nr_open` (1,048,576 by default) are fds, anything else
/// is dereferenced. The same dma-buf imported again gives the same handle with one more
/// reference. Errors: `hipErrorInvalidValue` (null, type, not an amdgpu dma-buf).
#[no_mangle]
pub extern "C" fn hipMemImportFromShareableHandle(
    handle: *mut hipMemGenericAllocationHandle_t,
    osHandle: *mut c_void,
    shHandleType: hipMemAllocationHandleType,
) -> hipError_t {
    api(|| {
        check(!handle.is_null() && shHandleType == hipMemAllocationHandleType::hipMemHandleTypePosixFileDescriptor)?;
        let fd = os_handle_fd(osHandle)?;
        let (rt, dev) = rt_dev()?;
        let id = rt.vmm_import(fd, dev)?;
        write_out(handle, id as hipMemGenericAllocationHandle_t)
    })
}

/// `hipMemMapArrayAsync`: sparse arrays do not exist here. Errors: `hipErrorInvalidValue` (null
/// list, count 0, destroyed stream), `hipErrorNotSupported` otherwise (as clr).
#[no_mangle]
pub extern "C" fn hipMemMapArrayAsync(
    mapInfoList: *mut hipArrayMapInfo,
    count: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    api(|| {
        check(!mapInfoList.is_null() && count != 0)?;
        stream_of(runtime()?, stream).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        Err(hipError_t::hipErrorNotSupported)
    })
}
