//! Memory management (HIP "Memory Management" group; clr `hip_memory.cpp`): allocation, copies,
//! fills, pointer queries.

use crate::api::common::{api, check, rocm5_caller, rt_dev, stream_of, write_out};
use crate::api::types::*;
use crate::memory::{Backing, MemKind, HOST_MALLOC_FLAGS};
use crate::runtime::runtime;
use std::ffi::{c_int, c_uint, c_void};

/// `hipMalloc`: `size` bytes of device memory on the current device. `size == 0` gives a null
/// pointer and `hipSuccess`. Errors: `hipErrorInvalidValue` (null `ptr`), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    api(|| {
        check(!ptr.is_null())?;
        if size == 0 {
            return write_out(ptr, std::ptr::null_mut());
        }
        let (rt, d) = rt_dev()?;
        write_out(ptr, std::ptr::null_mut())?;
        let base = rt.mem_alloc_device(d, size as u64)?;
        write_out(ptr, base as *mut c_void)
    })
}

/// `hipFree`: frees memory from `hipMalloc` (or `hipHostMalloc`), after waiting for the devices.
/// Null is a no-op. Errors: `hipErrorInvalidValue` for a pointer that is not an allocation's base.
#[no_mangle]
pub extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    api(|| {
        if ptr.is_null() {
            return Ok(());
        }
        runtime()?.mem_free(ptr as u64)
    })
}

/// `hipHostMalloc`: `size` bytes of pinned host memory, accessible from every device.
/// Errors: `hipErrorInvalidValue` (null `ptr`, unknown flags), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    api(|| {
        check(!ptr.is_null())?;
        check(flags & !HOST_MALLOC_FLAGS == 0)?;
        check(
            flags & (hipHostMallocCoherent | hipHostMallocNonCoherent)
                != (hipHostMallocCoherent | hipHostMallocNonCoherent),
        )?;
        if size == 0 {
            return write_out(ptr, std::ptr::null_mut());
        }
        let (rt, d) = rt_dev()?;
        write_out(ptr, std::ptr::null_mut())?;
        let base = rt.mem_alloc_host(d, size as u64, flags)?;
        write_out(ptr, base as *mut c_void)
    })
}

/// `hipHostFree`: frees memory from `hipHostMalloc`. Null is a no-op. Errors:
/// `hipErrorInvalidValue` for anything else (device memory included).
#[no_mangle]
pub extern "C" fn hipHostFree(ptr: *mut c_void) -> hipError_t {
    api(|| {
        if ptr.is_null() {
            return Ok(());
        }
        let rt = runtime()?;
        match rt.allocs.get(ptr as u64) {
            Some(a) if a.kind == MemKind::Host => rt.mem_free(ptr as u64),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        rt.memcpy(dst as u64, src as u64, size as u64, kind, &s, sync)
    })
}

/// `hipMemcpy`: copies `sizeBytes` bytes, synchronously, on the null stream. Any direction,
/// pageable host memory included; `hipMemcpyDefault` infers it. Errors: `hipErrorInvalidValue`,
/// `hipErrorInvalidMemcpyDirection`, `hipErrorIllegalAddress`.
#[no_mangle]
pub extern "C" fn hipMemcpy(dst: *mut c_void, src: *const c_void, sizeBytes: usize, kind: hipMemcpyKind) -> hipError_t {
    memcpy(dst, src, sizeBytes, kind, std::ptr::null_mut(), true)
}

/// `hipMemcpyAsync`: as `hipMemcpy`, ordered on `stream`, asynchronous to the host when both
/// sides are device or pinned memory.
#[no_mangle]
pub extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    sizeBytes: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    memcpy(dst, src, sizeBytes, kind, stream, false)
}

/// `hipMemcpyHtoD`.
#[no_mangle]
pub extern "C" fn hipMemcpyHtoD(dst: hipDeviceptr_t, src: *mut c_void, sizeBytes: usize) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyHostToDevice, std::ptr::null_mut(), true)
}

/// `hipMemcpyDtoH`.
#[no_mangle]
pub extern "C" fn hipMemcpyDtoH(dst: *mut c_void, src: hipDeviceptr_t, sizeBytes: usize) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyDeviceToHost, std::ptr::null_mut(), true)
}

/// `hipMemcpyDtoD`.
#[no_mangle]
pub extern "C" fn hipMemcpyDtoD(dst: hipDeviceptr_t, src: hipDeviceptr_t, sizeBytes: usize) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyDeviceToDevice, std::ptr::null_mut(), true)
}

fn memset(dst: *mut c_void, value: u32, elem: u64, count: usize, stream: hipStream_t, sync: bool) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        rt.memset(dst as u64, value, elem, count as u64, &s, sync)
    })
}

/// `hipMemset`: sets `sizeBytes` bytes to the low byte of `value`, synchronously.
#[no_mangle]
pub extern "C" fn hipMemset(dst: *mut c_void, value: c_int, sizeBytes: usize) -> hipError_t {
    memset(dst, value as u8 as u32, 1, sizeBytes, std::ptr::null_mut(), true)
}

/// `hipMemsetAsync`.
#[no_mangle]
pub extern "C" fn hipMemsetAsync(dst: *mut c_void, value: c_int, sizeBytes: usize, stream: hipStream_t) -> hipError_t {
    memset(dst, value as u8 as u32, 1, sizeBytes, stream, false)
}

/// `hipMemsetD8`: `count` bytes.
#[no_mangle]
pub extern "C" fn hipMemsetD8(dest: hipDeviceptr_t, value: u8, count: usize) -> hipError_t {
    memset(dest, value as u32, 1, count, std::ptr::null_mut(), true)
}

/// `hipMemsetD8Async`.
#[no_mangle]
pub extern "C" fn hipMemsetD8Async(dest: hipDeviceptr_t, value: u8, count: usize, stream: hipStream_t) -> hipError_t {
    memset(dest, value as u32, 1, count, stream, false)
}

/// `hipMemsetD16`: `count` 16-bit elements.
#[no_mangle]
pub extern "C" fn hipMemsetD16(dest: hipDeviceptr_t, value: u16, count: usize) -> hipError_t {
    memset(dest, value as u32, 2, count, std::ptr::null_mut(), true)
}

/// `hipMemsetD16Async`.
#[no_mangle]
pub extern "C" fn hipMemsetD16Async(dest: hipDeviceptr_t, value: u16, count: usize, stream: hipStream_t) -> hipError_t {
    memset(dest, value as u32, 2, count, stream, false)
}

/// `hipMemsetD32`: `count` 32-bit elements.
#[no_mangle]
pub extern "C" fn hipMemsetD32(dest: hipDeviceptr_t, value: c_int, count: usize) -> hipError_t {
    memset(dest, value as u32, 4, count, std::ptr::null_mut(), true)
}

/// `hipMemsetD32Async`.
#[no_mangle]
pub extern "C" fn hipMemsetD32Async(
    dest: hipDeviceptr_t,
    value: c_int,
    count: usize,
    stream: hipStream_t,
) -> hipError_t {
    memset(dest, value as u32, 4, count, stream, false)
}

/// `hipMemoryTypeHost` / `hipMemoryTypeDevice` in the ROCm 5 headers (`hip_runtime_api.h` 5.2:
/// `enum hipMemoryType { hipMemoryTypeHost, hipMemoryTypeDevice, hipMemoryTypeArray,
/// hipMemoryTypeUnified }`).
const ROCM5_MEMORY_TYPE_HOST: c_int = 0;
const ROCM5_MEMORY_TYPE_DEVICE: c_int = 1;

/// `t` in the caller's ABI: ROCm 5's values for [`rocm5_caller`]s.
fn memory_type_for_caller(t: hipMemoryType) -> hipMemoryType {
    match t {
        _ if !rocm5_caller() => t,
        hipMemoryType::hipMemoryTypeDevice => hipMemoryType(ROCM5_MEMORY_TYPE_DEVICE),
        _ => hipMemoryType(ROCM5_MEMORY_TYPE_HOST),
    }
}

/// `hipPointerGetAttributes`: what `ptr` points into. Host memory the runtime does not know is
/// reported as `hipMemoryTypeUnregistered` on `hipInvalidDeviceId` (HIP ≥ 6, CUDA's rule); an
/// address inside the GPU aperture that no allocation holds (freed, closed) is
/// `hipErrorInvalidValue`, as are null arguments. Callers built against ROCm 5 (this library loaded
/// through the `libamdhip64.so.5` compat link) get ROCm 5's `hipMemoryType` values in
/// the same field (`memoryType`): Host 0 (unregistered host memory too), Device 1.
#[no_mangle]
pub extern "C" fn hipPointerGetAttributes(attributes: *mut hipPointerAttribute_t, ptr: *const c_void) -> hipError_t {
    api(|| {
        check(!attributes.is_null() && !ptr.is_null())?;
        let rt = runtime()?;
        let Some(a) = rt.allocs.find(ptr as u64) else {
            check(!rt.va.contains(ptr as u64, 1))?;
            return write_out(
                attributes,
                hipPointerAttribute_t {
                    r#type: memory_type_for_caller(hipMemoryType::hipMemoryTypeUnregistered),
                    device: hipInvalidDeviceId,
                    ..Default::default()
                },
            );
        };
        let host_memory = match &a.backing {
            Backing::Vmm(m) => m.chunk.host,
            Backing::Bo(_) => a.kind == MemKind::Host,
        };
        let (ty, host) = if host_memory {
            (hipMemoryType::hipMemoryTypeHost, ptr as *mut c_void)
        } else {
            (hipMemoryType::hipMemoryTypeDevice, std::ptr::null_mut())
        };
        write_out(
            attributes,
            hipPointerAttribute_t {
                r#type: memory_type_for_caller(ty),
                device: a.owner as c_int,
                devicePointer: ptr as *mut c_void,
                hostPointer: host,
                isManaged: 0,
                allocationFlags: a.flags,
            },
        )
    })
}

/// `hipMemGetAddressRange`: base and size (bytes) of the allocation containing `dptr`, found in
/// O(log n). Either out-pointer may be null. Errors: `hipErrorNotFound` when `dptr` is in no
/// allocation (one past the end included).
#[no_mangle]
pub extern "C" fn hipMemGetAddressRange(
    pbase: *mut hipDeviceptr_t,
    psize: *mut usize,
    dptr: hipDeviceptr_t,
) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        let a = rt.allocs.find(dptr as u64).ok_or(hipError_t::hipErrorNotFound)?;
        if !pbase.is_null() {
            write_out(pbase, a.base as hipDeviceptr_t)?;
        }
        if !psize.is_null() {
            write_out(psize, a.size as usize)?;
        }
        Ok(())
    })
}
