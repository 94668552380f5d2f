//! Memory management (HIP "Memory Management" group; clr `hip_memory.cpp`): allocation, copies,
//! fills, pointer queries.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, read_in, rocm5_caller, rt_dev, slice_in, stream_of, write_out};
use crate::core::copy::Block;
use crate::core::memory::{Backing, MemKind, HOST_MALLOC_FLAGS};
use crate::core::runtime::runtime;
use crate::graph::{check_sync_copy, check_unsafe_call, CParams, Op};
use kfd_ioctl::sdma;
use std::ffi::{c_int, c_uint, c_void};

/// `hipMalloc`: `size` bytes of device memory on the current device. `size == 0` gives a null
/// pointer and `hipSuccess`. Errors: `hipErrorInvalidValue` (null `ptr`), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    api(|| {
        check_unsafe_call()?;
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

/// `hipExtMallocWithFlags`: `hipMalloc` with a memory kind: `hipDeviceMallocDefault` (as
/// `hipMalloc`), `hipDeviceMallocFinegrained` (fine-grained VRAM, KFD `COHERENT`),
/// `hipDeviceMallocUncached` (`COHERENT | UNCACHED`), `hipDeviceMallocContiguous` (`UNCACHED`;
/// every BO of the simulated and real KFD is contiguous enough for SDMA), `hipMallocSignalMemory`
/// (8 bytes of coherent pinned system memory, CPU- and GPU-visible, as a ROCr signal's value).
/// `size == 0` gives a null pointer. Errors (clr `hipExtMallocWithFlags`; hip-tests
/// `hipExtMallocWithFlags.cc`): `hipErrorInvalidValue` (null `ptr`; other flags, combinations
/// included; signal memory of a size other than 8), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipExtMallocWithFlags(ptr: *mut *mut c_void, sizeBytes: usize, flags: c_uint) -> hipError_t {
    use kfd_ioctl::kfd::{KFD_IOC_ALLOC_MEM_FLAGS_COHERENT as COHERENT, KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED as UNCACHED};
    api(|| {
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        runtime()?;
        check_unsafe_call()?;
        #[allow(non_upper_case_globals)]
        let extra = match flags {
            hipDeviceMallocDefault => 0,
            hipDeviceMallocFinegrained => COHERENT,
            hipDeviceMallocUncached => COHERENT | UNCACHED,
            hipDeviceMallocContiguous => UNCACHED,
            hipMallocSignalMemory => {
                check(sizeBytes == 8)?;
                0
            }
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        check(!ptr.is_null())?;
        if sizeBytes == 0 {
            return write_out(ptr, std::ptr::null_mut());
        }
        let (rt, d) = rt_dev()?;
        write_out(ptr, std::ptr::null_mut())?;
        let base = if flags == hipMallocSignalMemory {
            rt.mem_alloc_host(d, 8, 0)?
        } else {
            rt.mem_alloc_device_with(d, sizeBytes as u64, extra)?
        };
        write_out(ptr, base as *mut c_void)
    })
}

/// `hipFree`: frees memory from `hipMalloc` (or `hipHostMalloc`), after waiting for the devices.
/// Null is a no-op; `hipMallocAsync` memory leaves its pool. Errors: `hipErrorInvalidValue` for a
/// pointer that is not an allocation's base, or a pool block already freed by `hipFreeAsync`.
#[no_mangle]
pub extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    api(|| {
        check_unsafe_call()?;
        if ptr.is_null() {
            return Ok(());
        }
        let rt = runtime()?;
        if rt.mempool_take_import(ptr as u64) {
            return rt.ipc_close_mem(ptr as u64);
        }
        rt.mempool_before_free(ptr as u64)?;
        rt.mem_free(ptr as u64)
    })
}

/// `hipHostMalloc`: `size` bytes of pinned host memory, accessible from every device.
/// Errors: `hipErrorInvalidValue` (null `ptr`, unknown flags), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    api(|| {
        check_unsafe_call()?;
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
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        runtime()?;
        check_unsafe_call()?;
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

/// `hipMallocHost` (deprecated spelling): `hipHostMalloc(ptr, size, 0)`.
#[no_mangle]
pub extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hipHostMalloc(ptr, size, 0)
}

/// `hipMemAllocHost` (driver spelling): `hipHostMalloc(ptr, size, 0)` (clr `hip_memory.cpp`).
#[no_mangle]
pub extern "C" fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hipHostMalloc(ptr, size, 0)
}

/// `hipHostAlloc` (deprecated spelling): `hipHostMalloc(ptr, size, flags)`.
#[no_mangle]
pub extern "C" fn hipHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> hipError_t {
    hipHostMalloc(ptr, size, flags)
}

/// `hipFreeHost` (deprecated spelling): `hipHostFree(ptr)`.
#[no_mangle]
pub extern "C" fn hipFreeHost(ptr: *mut c_void) -> hipError_t {
    hipHostFree(ptr)
}

pub(crate) fn memcpy(
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
        if sync {
            check_sync_copy()?;
            return rt.memcpy(dst as u64, src as u64, size as u64, kind, &s, true);
        }
        crate::core::copy::check_kind(kind)?;
        rt.enqueue(&s, Op::Memcpy { dst: dst as u64, src: src as u64, len: size as u64, kind })
    })
}

/// `hipMemcpy`: copies `sizeBytes` bytes, synchronously, on the null stream. Any direction,
/// pageable host memory included; `hipMemcpyDefault` infers it. As clr's `ihipMemcpy`, a copy
/// between two device allocations of one GPU returns once queued unless both have
/// `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` set (`hipPointerSetAttribute`); later work still runs
/// after it. Errors: `hipErrorInvalidValue`, `hipErrorInvalidMemcpyDirection`,
/// `hipErrorIllegalAddress`.
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

/// `hipMemcpyDtoD`: `hipMemcpy` of device memory (host-asynchronous as it is).
#[no_mangle]
pub extern "C" fn hipMemcpyDtoD(dst: hipDeviceptr_t, src: hipDeviceptr_t, sizeBytes: usize) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyDeviceToDevice, std::ptr::null_mut(), true)
}

pub(crate) fn memset(
    dst: *mut c_void,
    value: u32,
    elem: u64,
    count: usize,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        if sync {
            check_sync_copy()?;
            return rt.memset(dst as u64, value, elem, count as u64, &s, true);
        }
        let p = hipMemsetParams { dst, elementSize: elem as c_uint, height: 1, pitch: 0, value, width: count };
        rt.enqueue(&s, Op::Memset { p: CParams(p), depth: 1, ysize: 1 })
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
const ROCM5_MEMORY_TYPE_UNIFIED: c_int = 3;

/// A `hipMemoryType` from the caller (a `hip_Memcpy2D`/`HIP_MEMCPY3D` side) in ROCm 7's values:
/// [`rocm5_caller`]s pass ROCm 5's (Host 0, Device 1, Array 2, Unified 3).
pub(crate) fn memory_type_from_caller(t: hipMemoryType) -> hipMemoryType {
    match t.0 {
        _ if !rocm5_caller() => t,
        ROCM5_MEMORY_TYPE_HOST => hipMemoryType::hipMemoryTypeHost,
        ROCM5_MEMORY_TYPE_DEVICE => hipMemoryType::hipMemoryTypeDevice,
        2 => hipMemoryType::hipMemoryTypeArray,
        ROCM5_MEMORY_TYPE_UNIFIED => hipMemoryType::hipMemoryTypeUnified,
        _ => hipMemoryType(-1),
    }
}

/// `t` in the caller's ABI: ROCm 5's values for [`rocm5_caller`]s.
fn memory_type_for_caller(t: hipMemoryType) -> hipMemoryType {
    match t {
        _ if !rocm5_caller() => t,
        hipMemoryType::hipMemoryTypeDevice => hipMemoryType(ROCM5_MEMORY_TYPE_DEVICE),
        hipMemoryType::hipMemoryTypeManaged => hipMemoryType(ROCM5_MEMORY_TYPE_UNIFIED),
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
        let Some(a) = rt.allocs.span(ptr as u64) else {
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
        let host_memory = a.host;
        let managed = a.kind == MemKind::Managed;
        let (ty, host) = match (managed, host_memory) {
            (true, _) => (hipMemoryType::hipMemoryTypeManaged, ptr as *mut c_void),
            (false, true) => (hipMemoryType::hipMemoryTypeHost, ptr as *mut c_void),
            (false, false) => (hipMemoryType::hipMemoryTypeDevice, std::ptr::null_mut()),
        };
        write_out(
            attributes,
            hipPointerAttribute_t {
                r#type: memory_type_for_caller(ty),
                device: a.owner as c_int,
                devicePointer: ptr as *mut c_void,
                hostPointer: host,
                isManaged: managed as c_int,
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
        let a = rt.allocs.span(dptr as u64).ok_or(hipError_t::hipErrorNotFound)?;
        if !pbase.is_null() {
            write_out(pbase, a.base as hipDeviceptr_t)?;
        }
        if !psize.is_null() {
            write_out(psize, a.size as usize)?;
        }
        Ok(())
    })
}

/// Every `hipHostRegister` flag clr accepts (`flags > 15` is invalid, `ihipHostRegister`):
/// `Portable` 1, `Mapped` 2, `IoMemory` 4, `ReadOnly` 8.
const HOST_REGISTER_FLAGS: c_uint = 0xf;

/// `hipHostRegister`: pins the caller's `[hostPtr, hostPtr + sizeBytes)` and maps it on every
/// device at the same address (the device pointer is the host pointer; `Portable` and `Mapped`
/// are implied, `ReadOnly` maps it read-only for the GPUs, `IoMemory` is accepted as clr does
/// and works where the kernel can pin the pages). With XNACK on (`HSA_XNACK=1`) nothing is
/// pinned: the GPUs reach the pages through retry faults, and registering only checks that the
/// range is mapped and records it (`HSA_USE_SVM=0`: pinned as without XNACK). Errors (clr `ihipHostRegister`, hip-tests
/// `Unit_hipHostRegister_Negative`/`_Flags`): `hipErrorInvalidValue` (null, size 0, flags > 15,
/// pages not mapped or too large), `hipErrorHostMemoryAlreadyRegistered` (overlaps a
/// registration or `hipHostMalloc` memory: CUDA's rule).
#[no_mangle]
pub extern "C" fn hipHostRegister(hostPtr: *mut c_void, sizeBytes: usize, flags: c_uint) -> hipError_t {
    api(|| {
        check_unsafe_call()?;
        check(!hostPtr.is_null() && sizeBytes != 0 && flags & !HOST_REGISTER_FLAGS == 0)?;
        let (rt, d) = rt_dev()?;
        rt.host_register(d, hostPtr as u64, sizeBytes as u64, flags)
    })
}

/// `hipHostUnregister`: undoes `hipHostRegister` of exactly `hostPtr`, after the devices' queued
/// work. Errors: `hipErrorInvalidValue` (null), `hipErrorHostMemoryNotRegistered` (anything
/// else, an interior pointer or a second unregister included; hip-tests
/// `Unit_hipHostUnregister_*`).
#[no_mangle]
pub extern "C" fn hipHostUnregister(hostPtr: *mut c_void) -> hipError_t {
    api(|| {
        check_unsafe_call()?;
        check(!hostPtr.is_null())?;
        runtime()?.host_unregister(hostPtr as u64)
    })
}

/// `hipHostGetDevicePointer`: the device address of host memory (`hipHostMalloc`, registered or
/// managed memory, or any other allocation as clr answers): with GPU VA == CPU VA, `hostPointer`
/// itself. Errors (clr, hip-tests `Unit_hipHostGetDevicePointer_Negative`):
/// `hipErrorInvalidValue` (null out-pointer, `flags != 0`, memory the runtime does not know).
#[no_mangle]
pub extern "C" fn hipHostGetDevicePointer(
    devicePointer: *mut *mut c_void,
    hostPointer: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!devicePointer.is_null() && flags == 0)?;
        runtime()?.allocs.find(hostPointer as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
        write_out(devicePointer, hostPointer)
    })
}

/// `hipHostGetFlags`: the flags `hostPtr`'s memory was made with: `hipHostMalloc` flags, or
/// `hipHostRegister` flags (CUDA's `cudaHostGetFlags` answers for registered memory too; clr
/// refuses it). Errors: `hipErrorInvalidValue` (null, device or unknown memory; hip-tests
/// `Unit_hipHostGetFlags_InvalidArgs`).
#[no_mangle]
pub extern "C" fn hipHostGetFlags(flagsPtr: *mut c_uint, hostPtr: *mut c_void) -> hipError_t {
    api(|| {
        check(!flagsPtr.is_null() && !hostPtr.is_null())?;
        let a = runtime()?.allocs.find(hostPtr as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
        check(matches!(a.kind, MemKind::Host | MemKind::Registered))?;
        write_out(flagsPtr, a.flags)
    })
}

/// `hipMemPtrGetInfo`: the size (bytes) of the allocation containing `ptr`. Errors:
/// `hipErrorInvalidValue` (null `size`, unknown memory, pool memory freed with `hipFreeAsync`
/// that its pool keeps; clr `hipMemPtrGetInfo`, hip-tests `hipGetProcAddress_Memory_APIs.cc`).
#[no_mangle]
pub extern "C" fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) -> hipError_t {
    api(|| {
        check(!size.is_null())?;
        let rt = runtime()?;
        check(!rt.mempool_keeps(ptr as u64))?;
        let a = rt.allocs.find(ptr as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
        write_out(size, a.size as usize)
    })
}

/// `hipMemcpyHtoDAsync`: host to device, ordered on `stream` (as `hipMemcpyAsync`). Errors as
/// `hipMemcpyAsync`; a destroyed stream is `hipErrorContextIsDestroyed`.
#[no_mangle]
pub extern "C" fn hipMemcpyHtoDAsync(
    dst: hipDeviceptr_t,
    src: *mut c_void,
    sizeBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyHostToDevice, stream, false)
}

/// `hipMemcpyDtoHAsync`: device to host, ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: hipDeviceptr_t,
    sizeBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyDeviceToHost, stream, false)
}

/// `hipMemcpyDtoDAsync`: device to device (peers included), ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpyDtoDAsync(
    dst: hipDeviceptr_t,
    src: hipDeviceptr_t,
    sizeBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    memcpy(dst, src, sizeBytes, hipMemcpyKind::hipMemcpyDeviceToDevice, stream, false)
}

/// `hipMemcpyWithStream`: as `hipMemcpy` but ordered on `stream`, and synchronous: returns when
/// the copy is done (clr `ihipMemcpy(..., isAsync = false)`; the device-to-device exception of
/// `hipMemcpy` included). Errors as `hipMemcpy`;
/// `hipErrorContextIsDestroyed` for a destroyed stream (checked first, as clr).
#[no_mangle]
pub extern "C" fn hipMemcpyWithStream(
    dst: *mut c_void,
    src: *const c_void,
    sizeBytes: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    memcpy(dst, src, sizeBytes, kind, stream, true)
}

/// `hipPointerGetAttribute`: one attribute of `ptr` (CUDA's `cuPointerGetAttribute`), written
/// with the width clr writes: `MEMORY_TYPE`, `BUFFER_ID`, `RANGE_SIZE`, `ACCESS_FLAGS` 32-bit;
/// `IS_MANAGED`, `MAPPED`, `SYNC_MEMOPS` one byte (bool); `DEVICE_ORDINAL` int; pointers
/// pointer-sized. Memory type: `hipMemoryTypeHost` for host, registered and managed memory (clr
/// reports fine-grained memory so), else `hipMemoryTypeDevice` (ROCm 5's values for a caller built
/// against ROCm 5). `BUFFER_ID` is the allocation's unique id, never reused (clr `getUniqueId`).
/// Errors (clr
/// `ihipPointerGetAttributes`): `hipErrorInvalidValue` (null, memory the runtime does not know:
/// the out value is zeroed, `DEVICE_ORDINAL` -2; `HOST_POINTER` of device memory; unknown
/// attribute), `hipErrorNotSupported` (`CONTEXT`, `P2P_TOKENS`, `IS_LEGACY_HIP_IPC_CAPABLE`,
/// `ALLOWED_HANDLE_TYPES`, `IS_GPU_DIRECT_RDMA_CAPABLE`, `MEMPOOL_HANDLE`).
#[no_mangle]
pub extern "C" fn hipPointerGetAttribute(
    data: *mut c_void,
    attribute: hipPointer_attribute,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    api(|| pointer_attribute(data, attribute, ptr))
}

/// `hipPointerSetAttribute`: sets `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` (an `unsigned int`, 0 or
/// 1, at `value`) of the allocation holding `ptr` (device or pinned host memory); the only
/// attribute clr lets a program set. With it set on both sides, a device-to-device `hipMemcpy`
/// returns only once the copy is done. Errors (clr `hipPointerSetAttribute`,
/// `ihipPointerSetAttribute`, in order; hip-tests `hipPointerSetAttribute.cc`):
/// `hipErrorInvalidValue` (null `ptr` or `value`, any other attribute, a value other than 0
/// or 1), `hipErrorInvalidDevicePointer` (memory the runtime does not know, freed memory).
#[no_mangle]
pub extern "C" fn hipPointerSetAttribute(
    value: *const c_void,
    attribute: hipPointer_attribute,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    api(|| {
        check(!ptr.is_null() && !value.is_null())?;
        check(attribute == hipPointer_attribute::HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS)?;
        let v = read_in(value as *const c_uint)?;
        check(v <= 1)?;
        let found = runtime()?.allocs.set_sync_memops(ptr as u64, v == 1);
        found.then_some(()).ok_or(hipError_t::hipErrorInvalidDevicePointer)
    })
}

/// The body of [`hipPointerGetAttribute`].
fn pointer_attribute(
    data: *mut c_void,
    attribute: hipPointer_attribute,
    ptr: hipDeviceptr_t,
) -> Result<(), hipError_t> {
    check(!ptr.is_null() && !data.is_null())?;
    let rt = runtime()?;
    let a = rt.allocs.find(ptr as u64);
    type P = hipPointer_attribute;
    let host = a.as_ref().is_some_and(|a| a.is_host_memory());
    let found = a.is_some();
    let u32_out = |v: u32| {
        write_out(data as *mut u32, v)?;
        check(found)
    };
    let bool_out = |v: bool| {
        write_out(data as *mut u8, v as u8)?;
        check(found)
    };
    let ptr_out = |v: u64| {
        write_out(data as *mut *mut c_void, v as *mut c_void)?;
        check(found)
    };
    match attribute {
        P::HIP_POINTER_ATTRIBUTE_MEMORY_TYPE => {
            let t = if host { hipMemoryType::hipMemoryTypeHost } else { hipMemoryType::hipMemoryTypeDevice };
            u32_out(if found { memory_type_for_caller(t).0 as u32 } else { 0 })
        }
        P::HIP_POINTER_ATTRIBUTE_DEVICE_POINTER => ptr_out(if found { ptr as u64 } else { 0 }),
        P::HIP_POINTER_ATTRIBUTE_HOST_POINTER => {
            ptr_out(if host { ptr as u64 } else { 0 })?;
            check(host)
        }
        P::HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS => {
            bool_out(a.as_ref().is_some_and(|a| a.sync_memops.load(std::sync::atomic::Ordering::Relaxed)))
        }
        P::HIP_POINTER_ATTRIBUTE_BUFFER_ID => u32_out(a.as_ref().map_or(0, |a| a.id as u32)),
        P::HIP_POINTER_ATTRIBUTE_IS_MANAGED => bool_out(a.as_ref().is_some_and(|a| a.kind == MemKind::Managed)),
        P::HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL => {
            write_out(data as *mut c_int, a.as_ref().map_or(hipInvalidDeviceId, |a| a.owner as c_int))?;
            check(found)
        }
        P::HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR => ptr_out(a.as_ref().map_or(0, |a| a.base)),
        P::HIP_POINTER_ATTRIBUTE_RANGE_SIZE => u32_out(a.as_ref().map_or(0, |a| a.size as u32)),
        P::HIP_POINTER_ATTRIBUTE_MAPPED => bool_out(found),
        P::HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS => write_out(data as *mut u32, a.as_ref().map_or(0, |a| a.flags)),
        P::HIP_POINTER_ATTRIBUTE_CONTEXT
        | P::HIP_POINTER_ATTRIBUTE_P2P_TOKENS
        | P::HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE
        | P::HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES
        | P::HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE
        | P::HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => Err(hipError_t::hipErrorNotSupported),
        _ => Err(hipError_t::hipErrorInvalidValue),
    }
}

/// `hipDrvPointerGetAttributes`: `hipPointerGetAttribute(data[i], attributes[i], ptr)` for
/// each of the `numAttributes` attributes; their errors are ignored (an attribute of unknown
/// memory gets its default value), as clr does. Errors (clr): `hipErrorInvalidValue` (zero
/// `numAttributes`, null `attributes`, `data` or `ptr`).
#[no_mangle]
pub extern "C" fn hipDrvPointerGetAttributes(
    numAttributes: c_uint,
    attributes: *mut hipPointer_attribute,
    data: *mut *mut c_void,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    api(|| {
        check(numAttributes != 0 && !ptr.is_null())?;
        let attrs = slice_in(attributes, numAttributes as usize)?;
        let outs = slice_in(data as *const *mut c_void, numAttributes as usize)?;
        for (&a, &d) in attrs.iter().zip(outs) {
            let _ = pointer_attribute(d, a, ptr);
        }
        Ok(())
    })
}

/// Row pitch alignment of `hipMallocPitch`/`hipMalloc3D`, bytes (clr: the device's
/// `imagePitchAlignment_`, 256 on every ROCm device, `rocdevice.cpp`).
const PITCH_ALIGN: usize = 256;

/// clr `ihipMallocPitch`: rows of `width` bytes padded to [`PITCH_ALIGN`], `height * depth` of
/// them, one device allocation of `pitch * height * depth` bytes. A zero extent gives a null
/// pointer and `hipSuccess` (the pitch is left as it was). Errors: `hipErrorInvalidValue`
/// (width too large to pad), `hipErrorOutOfMemory` (the size overflows or does not fit).
fn malloc_pitch(ptr: *mut *mut c_void, width: usize, height: usize, depth: usize) -> Result<usize, hipError_t> {
    check_unsafe_call()?;
    check(!ptr.is_null())?;
    if width == 0 || height == 0 || depth == 0 {
        write_out(ptr, std::ptr::null_mut())?;
        return Ok(0);
    }
    check(width <= usize::MAX - PITCH_ALIGN)?;
    let pitch = width.div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
    let size = pitch.checked_mul(height).and_then(|v| v.checked_mul(depth)).ok_or(hipError_t::hipErrorOutOfMemory)?;
    let (rt, d) = rt_dev()?;
    write_out(ptr, std::ptr::null_mut())?;
    let base = rt.mem_alloc_device(d, size as u64)?;
    write_out(ptr, base as *mut c_void)?;
    Ok(pitch)
}

/// `hipMallocPitch`: `height` rows of `width` bytes, each row starting `*pitch` bytes after the
/// previous (`width` rounded up to 256). Freed with `hipFree`. Errors (clr `ihipMallocPitch`,
/// hip-tests `Unit_hipMallocPitch_Negative`): `hipErrorInvalidValue` (null `ptr` or `pitch`,
/// `width` near `SIZE_MAX`), `hipErrorOutOfMemory` (the size overflows or does not fit).
#[no_mangle]
pub extern "C" fn hipMallocPitch(ptr: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) -> hipError_t {
    api(|| {
        check(!ptr.is_null() && !pitch.is_null())?;
        match malloc_pitch(ptr, width, height, 1)? {
            0 => Ok(()),
            p => write_out(pitch, p),
        }
    })
}

/// `hipMemAllocPitch`: `hipMallocPitch` (driver spelling) with an element size that clr only
/// checks. Errors (clr `hipMemAllocPitch`): `hipErrorInvalidValue` (zero width or height, an
/// element size other than 4, 8 or 16), then as `hipMallocPitch`.
#[no_mangle]
pub extern "C" fn hipMemAllocPitch(
    dptr: *mut hipDeviceptr_t,
    pitch: *mut usize,
    widthInBytes: usize,
    height: usize,
    elementSizeBytes: c_uint,
) -> hipError_t {
    let e = api(|| {
        check_unsafe_call()?;
        check(widthInBytes != 0 && height != 0 && matches!(elementSizeBytes, 4 | 8 | 16))
    });
    if e != hipError_t::hipSuccess {
        return e;
    }
    hipMallocPitch(dptr, pitch, widthInBytes, height)
}

/// `hipMalloc3D`: as `hipMallocPitch` with `extent.depth` slices of `extent.height` rows;
/// returns `{ptr, pitch, extent.width, extent.height}`. Errors as `hipMallocPitch` (clr).
#[no_mangle]
pub extern "C" fn hipMalloc3D(pitchedDevPtr: *mut hipPitchedPtr, extent: hipExtent) -> hipError_t {
    api(|| {
        check(!pitchedDevPtr.is_null())?;
        let mut p: *mut c_void = std::ptr::null_mut();
        let pitch = malloc_pitch(&mut p, extent.width, extent.height, extent.depth)?;
        write_out(pitchedDevPtr, hipPitchedPtr { ptr: p, pitch, xsize: extent.width, ysize: extent.height })
    })
}

/// The largest row pitch copies accept on the current device (`hipDeviceAttributeMaxPitch`).
pub(crate) fn max_pitch() -> Result<usize, hipError_t> {
    let (rt, d) = rt_dev()?;
    Ok(rt.devices[d].props.memPitch)
}

/// A linear pitched surface at `ptr` (`pitch` bytes per row, `rows` rows per slice), with the
/// block origin `pos` folded into its address.
pub(crate) fn pitched(ptr: *const c_void, pitch: usize, rows: usize, pos: hipPos) -> Result<sdma::Pitched, hipError_t> {
    let inv = hipError_t::hipErrorInvalidValue;
    let slice = (pitch as u64).checked_mul(rows as u64).ok_or(inv)?;
    let off = (pos.z as u64)
        .checked_mul(slice)
        .and_then(|z| (pos.y as u64).checked_mul(pitch as u64).and_then(|y| z.checked_add(y)))
        .and_then(|v| v.checked_add(pos.x as u64))
        .ok_or(inv)?;
    let addr = if ptr.is_null() { 0 } else { (ptr as u64).checked_add(off).ok_or(inv)? };
    Ok(sdma::Pitched { addr, pitch: pitch as u64, slice })
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn memcpy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    api(|| {
        crate::core::copy::check_kind(kind)?;
        let (rt, _) = rt_dev()?;
        // clr hipMemcpy2DValidateParams: a bad stream is hipErrorInvalidValue here.
        let s = stream_of(rt, stream).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        if width == 0 || height == 0 {
            return Ok(());
        }
        if width > dpitch || width > spitch {
            return Err(hipError_t::hipErrorInvalidPitchValue);
        }
        let maxp = max_pitch()?;
        check(!dst.is_null() && !src.is_null() && dpitch <= maxp && spitch <= maxp)?;
        let origin = hipPos { x: 0, y: 0, z: 0 };
        let b = Block { width: width as u64, height: height as u64, depth: 1 };
        let (d, sr) = (pitched(dst, dpitch, height, origin)?, pitched(src, spitch, height, origin)?);
        if sync {
            check_sync_copy()?;
            return rt.memcpy_3d(d, sr, b, kind, &s, true);
        }
        let ptr = |p: *mut c_void, pitch| hipPitchedPtr { ptr: p, pitch, xsize: width, ysize: height };
        let parms = hipMemcpy3DParms {
            srcArray: std::ptr::null_mut(),
            srcPos: origin,
            srcPtr: ptr(src as *mut c_void, spitch),
            dstArray: std::ptr::null_mut(),
            dstPos: origin,
            dstPtr: ptr(dst, dpitch),
            extent: hipExtent { width, height, depth: 1 },
            kind,
        };
        rt.enqueue(&s, Op::Memcpy3D { parms: CParams(parms), dst: d, src: sr, block: b, drv: None })
    })
}

/// `hipMemcpy2D`: copies `height` rows of `width` bytes from `src` (rows `spitch` bytes apart) to
/// `dst` (rows `dpitch` apart), synchronously; any memory kinds (pageable host memory through
/// staging). Device/pinned rows go as SDMA sub-window copies. Errors (clr `hipMemcpy2D_common`,
/// hip-tests `Unit_hipMemcpy2D_Negative_Parameters`, in this order):
/// `hipErrorInvalidMemcpyDirection`, `hipErrorInvalidValue` (destroyed stream); a zero
/// `width`/`height` succeeds; `hipErrorInvalidPitchValue` (`width` > a pitch);
/// `hipErrorInvalidValue` (null pointers, a pitch above `hipDeviceAttributeMaxPitch`, rows past
/// an allocation).
#[no_mangle]
pub extern "C" fn hipMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    memcpy_2d(dst, dpitch, src, spitch, width, height, kind, std::ptr::null_mut(), true)
}

/// `hipMemcpy2DAsync`: `hipMemcpy2D` ordered on `stream`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream, false)
}

/// clr `ihipMemcpy3D_validate`, in its order → the destination and source blocks. Errors as
/// [`hipMemcpy3D`]'s, but the direction's.
/// Array copies are refused here (`hipErrorNotSupported`: graph memcpy nodes of arrays);
/// [`hipMemcpy3D`] takes them to [`crate::api::array::memcpy_3d_array`].
pub(crate) fn memcpy_3d_args(p: &hipMemcpy3DParms) -> Result<(sdma::Pitched, sdma::Pitched, Block), hipError_t> {
    memcpy_3d_check(p)?;
    if !p.srcArray.is_null() || !p.dstArray.is_null() {
        return Err(hipError_t::hipErrorNotSupported);
    }
    let e = p.extent;
    check(e.width.checked_add(p.dstPos.x).is_some_and(|w| w <= p.dstPtr.pitch))?;
    check(e.width.checked_add(p.srcPos.x).is_some_and(|w| w <= p.srcPtr.pitch))?;
    // A slice is `ysize` rows: more than one slice needs it.
    check(e.depth <= 1 || (p.srcPtr.ysize != 0 && p.dstPtr.ysize != 0))?;
    let b = Block { width: e.width as u64, height: e.height as u64, depth: e.depth as u64 };
    let d = pitched(p.dstPtr.ptr, p.dstPtr.pitch, p.dstPtr.ysize, p.dstPos)?;
    let sr = pitched(p.srcPtr.ptr, p.srcPtr.pitch, p.srcPtr.ysize, p.srcPos)?;
    Ok((d, sr, b))
}

/// The checks of clr's `ihipMemcpy3D_validate` common to pointer and array copies, in its order:
/// one of array and pointer on each side, pitches.
fn memcpy_3d_check(p: &hipMemcpy3DParms) -> Result<(), hipError_t> {
    check(p.srcArray.is_null() || p.srcPtr.ptr.is_null())?;
    check(p.dstArray.is_null() || p.dstPtr.ptr.is_null())?;
    let has_src = !p.srcArray.is_null() || !p.srcPtr.ptr.is_null();
    let has_dst = !p.dstArray.is_null() || !p.dstPtr.ptr.is_null();
    check(has_src && has_dst)?;
    if p.srcPtr.pitch < p.srcPtr.xsize || p.dstPtr.pitch < p.dstPtr.xsize {
        return Err(hipError_t::hipErrorInvalidPitchValue);
    }
    let maxp = max_pitch()?.min(i32::MAX as usize);
    check(p.srcPtr.pitch < maxp && p.dstPtr.pitch < maxp)
}

pub(crate) fn memcpy_3d(p: *const hipMemcpy3DParms, stream: hipStream_t, sync: bool) -> hipError_t {
    api(|| {
        let p = read_in(p)?;
        if !p.srcArray.is_null() || !p.dstArray.is_null() {
            memcpy_3d_check(&p)?;
            crate::core::copy::check_kind(p.kind)?;
            return crate::api::array::memcpy_3d_array(&p, stream, sync);
        }
        let (d, sr, b) = memcpy_3d_args(&p)?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        if sync {
            check_sync_copy()?;
            return rt.memcpy_3d(d, sr, b, p.kind, &s, true);
        }
        crate::core::copy::check_kind(p.kind)?;
        rt.enqueue(&s, Op::Memcpy3D { parms: CParams(p), dst: d, src: sr, block: b, drv: None })
    })
}

/// `hipMemcpy3D`: copies `p->extent` (width in bytes × height rows × depth slices) between two
/// pitched pointers (`srcPtr`/`dstPtr` at `srcPos`/`dstPos`; a slice is `ysize` rows),
/// synchronously, as `hipMemcpy2D` does per slice. With an array on a side (`srcArray` or
/// `dstArray`), that side's `pos.x` and the extent's width count elements (clr
/// `getDrvMemcpy3DDesc`). Errors (clr `ihipMemcpy3D_validate`): `hipErrorInvalidValue` (null `p`, both or neither
/// of array and pointer on a side, a pitch at or above the maximum, `width + pos.x` past the
/// pitch, several slices without `ysize`, blocks past their allocation),
/// `hipErrorInvalidPitchValue` (pitch below `xsize`), `hipErrorInvalidMemcpyDirection`.
#[no_mangle]
pub extern "C" fn hipMemcpy3D(p: *const hipMemcpy3DParms) -> hipError_t {
    memcpy_3d(p, std::ptr::null_mut(), true)
}

/// `hipMemcpy3DAsync`: `hipMemcpy3D` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpy3DAsync(p: *const hipMemcpy3DParms, stream: hipStream_t) -> hipError_t {
    memcpy_3d(p, stream, false)
}

/// Fills `extent` (width in bytes, a multiple of `elem`) of `p` with `elem`-byte elements of
/// `value`.
pub(crate) fn memset_3d(
    p: hipPitchedPtr,
    value: u32,
    elem: u64,
    extent: hipExtent,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    api(|| {
        let b = Block { width: extent.width as u64, height: extent.height as u64, depth: extent.depth as u64 };
        if b.width == 0 || b.height == 0 || b.depth == 0 {
            return Ok(());
        }
        check(!p.ptr.is_null() && p.pitch >= extent.width)?;
        check(extent.depth <= 1 || p.ysize != 0)?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        if sync {
            check_sync_copy()?;
            let d = pitched(p.ptr, p.pitch, p.ysize, hipPos { x: 0, y: 0, z: 0 })?;
            return rt.memset_3d(d, value, elem, b, &s, true);
        }
        check((extent.width as u64).is_multiple_of(elem))?;
        let m = hipMemsetParams {
            dst: p.ptr,
            elementSize: elem as c_uint,
            height: extent.height,
            pitch: p.pitch,
            value,
            width: extent.width / elem as usize,
        };
        rt.enqueue(&s, Op::Memset { p: CParams(m), depth: extent.depth, ysize: p.ysize })
    })
}

/// `hipMemset2D`: sets `height` rows of `width` bytes, `pitch` bytes apart, to the low byte of
/// `value` on the null stream; the host waits unless `dst` is device memory (as `hipMemset`).
/// Errors (hip-tests `hipMemsetNegative.cc`): `hipErrorInvalidValue`
/// (null, host or unknown memory, `pitch < width`, rows past the allocation, sizes that
/// overflow); a zero `width` or `height` succeeds.
#[no_mangle]
pub extern "C" fn hipMemset2D(dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) -> hipError_t {
    let p = hipPitchedPtr { ptr: dst, pitch, xsize: width, ysize: height };
    memset_3d(p, value as u8 as u32, 1, hipExtent { width, height, depth: 1 }, std::ptr::null_mut(), true)
}

/// `hipMemset2DAsync`: `hipMemset2D` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemset2DAsync(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    let p = hipPitchedPtr { ptr: dst, pitch, xsize: width, ysize: height };
    memset_3d(p, value as u8 as u32, 1, hipExtent { width, height, depth: 1 }, stream, false)
}

/// `hipMemset3D`: sets `extent` (width bytes × height rows × depth slices of `ysize` rows) of
/// `pitchedDevPtr` to the low byte of `value`, as `hipMemset2D`. Errors as `hipMemset2D`, and
/// `hipErrorInvalidValue` for several slices without `ysize`.
#[no_mangle]
pub extern "C" fn hipMemset3D(pitchedDevPtr: hipPitchedPtr, value: c_int, extent: hipExtent) -> hipError_t {
    memset_3d(pitchedDevPtr, value as u8 as u32, 1, extent, std::ptr::null_mut(), true)
}

/// `hipMemset3DAsync`: `hipMemset3D` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemset3DAsync(
    pitchedDevPtr: hipPitchedPtr,
    value: c_int,
    extent: hipExtent,
    stream: hipStream_t,
) -> hipError_t {
    memset_3d(pitchedDevPtr, value as u8 as u32, 1, extent, stream, false)
}

/// `hipMemsetD2D*`: `height` rows of `width` elements of `elem` bytes, rows `dstPitch` bytes
/// apart. Errors: `hipErrorInvalidValue` (a row wider than the pitch, sizes that overflow), and
/// those of `hipMemset2D`.
#[allow(clippy::too_many_arguments)]
fn memset_d2d(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u32,
    elem: usize,
    width: usize,
    height: usize,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    let Some(bytes) = width.checked_mul(elem) else { return hipError_t::hipErrorInvalidValue };
    let p = hipPitchedPtr { ptr: dst, pitch: dstPitch, xsize: bytes, ysize: height };
    memset_3d(p, value, elem as u64, hipExtent { width: bytes, height, depth: 1 }, stream, sync)
}

/// `hipMemsetD2D8`: sets `height` rows of `width` bytes, `dstPitch` bytes apart, to `value`,
/// synchronously (CUDA `cuMemsetD2D8`). Errors: `hipErrorInvalidValue` (null, host or unknown
/// memory, `dstPitch` below the row, rows past the allocation); zero extents succeed.
#[no_mangle]
pub extern "C" fn hipMemsetD2D8(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u8,
    width: usize,
    height: usize,
) -> hipError_t {
    memset_d2d(dst, dstPitch, value as u32, 1, width, height, std::ptr::null_mut(), true)
}

/// `hipMemsetD2D8Async`: `hipMemsetD2D8` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemsetD2D8Async(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u8,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    memset_d2d(dst, dstPitch, value as u32, 1, width, height, stream, false)
}

/// `hipMemsetD2D16`: `hipMemsetD2D8` with `width` 16-bit elements a row.
#[no_mangle]
pub extern "C" fn hipMemsetD2D16(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u16,
    width: usize,
    height: usize,
) -> hipError_t {
    memset_d2d(dst, dstPitch, value as u32, 2, width, height, std::ptr::null_mut(), true)
}

/// `hipMemsetD2D16Async`: `hipMemsetD2D16` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemsetD2D16Async(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u16,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    memset_d2d(dst, dstPitch, value as u32, 2, width, height, stream, false)
}

/// `hipMemsetD2D32`: `hipMemsetD2D8` with `width` 32-bit elements a row.
#[no_mangle]
pub extern "C" fn hipMemsetD2D32(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u32,
    width: usize,
    height: usize,
) -> hipError_t {
    memset_d2d(dst, dstPitch, value, 4, width, height, std::ptr::null_mut(), true)
}

/// `hipMemsetD2D32Async`: `hipMemsetD2D32` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemsetD2D32Async(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: u32,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    memset_d2d(dst, dstPitch, value, 4, width, height, stream, false)
}

/// `hipMemGetHandleForAddressRange`: a dma-buf fd (written as an `int` to `handle`, owned by the
/// caller, `O_CLOEXEC`) for `[dptr, dptr + size)`, for RDMA NICs (`ibv_reg_dmabuf_mr`) and other
/// importers: `AMDKFD_IOC_EXPORT_DMABUF` of the BO behind the range. The fd is the whole
/// allocation, so the range must start at an allocation's base (fd offset 0 is `dptr`) and lie
/// inside it; `dptr` and `size` page aligned (CUDA's `cuMemGetHandleForAddressRange` rule).
/// Device (`hipMalloc`), pinned (`hipHostMalloc`) and managed memory. Errors:
/// `hipErrorInvalidValue` (null, size 0, unaligned, unknown memory, a range not starting at an
/// allocation's base or past its end, other memory kinds, `flags != 0`, a handle type other than
/// `hipMemRangeHandleTypeDmaBufFd`, an allocation of at most 256 KiB, which is a slot of a
/// shared 2 MiB block), `hipErrorOutOfMemory` (the export failed: fd limit).
#[no_mangle]
pub extern "C" fn hipMemGetHandleForAddressRange(
    handle: *mut c_void,
    dptr: hipDeviceptr_t,
    size: usize,
    handleType: hipMemRangeHandleType,
    flags: u64,
) -> hipError_t {
    api(|| {
        check(!handle.is_null() && !dptr.is_null() && size != 0 && flags == 0)?;
        check(handleType == hipMemRangeHandleType::hipMemRangeHandleTypeDmaBufFd)?;
        let page = crate::core::va::PAGE_SIZE;
        check((dptr as u64).is_multiple_of(page) && (size as u64).is_multiple_of(page))?;
        let rt = runtime()?;
        let a = rt.allocs.find(dptr as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
        check(a.base == dptr as u64 && matches!(a.kind, MemKind::Device | MemKind::Host | MemKind::Managed))?;
        // A small hipMalloc is a slot of a shared block: its BO's dma-buf starts at the block, not
        // at `dptr`, and holds other allocations' bytes, so it cannot be handed out.
        let Backing::Bo(bo) = &a.backing else {
            crate::core::log::hipkfd_log!("hipMemGetHandleForAddressRange: {dptr:?} is a slot of a shared block");
            return Err(hipError_t::hipErrorInvalidValue);
        };
        check(size as u64 <= a.size.next_multiple_of(page).min(bo.size))?;
        let fd = bo.export_dmabuf(&rt.kfd).map_err(|e| {
            crate::core::log::hipkfd_log!("hipMemGetHandleForAddressRange: EXPORT_DMABUF: {e}");
            hipError_t::hipErrorOutOfMemory
        })?;
        write_out(handle as *mut c_int, std::os::fd::IntoRawFd::into_raw_fd(fd))
    })
}

// ---------------------------------------------------------------------------------------------
// Batch copies (ROCm 7.1)
// ---------------------------------------------------------------------------------------------

/// What `failIdx` says when an error is about no copy in particular (CUDA's `SIZE_MAX`).
const NO_COPY: usize = usize::MAX;

/// A batch copy's `srcAccessOrder` and `flags` (`hipMemcpyAttributes`, `hipMemcpy3DBatchOp`).
/// Every order reads the source in stream order or during the call, which each allows:
/// pageable sources are staged before the call returns (src/core/copy.rs). Errors:
/// `hipErrorInvalidValue` (`hipMemcpySrcAccessOrderInvalid` or no order, an unknown flag),
/// `hipErrorNotSupported` (`hipMemcpyFlagExtOpSwap`: SDMA swaps are not implemented; hip-tests
/// `Unit_hipMemcpyBatchAsync_D2D_Swap` accepts that).
fn batch_copy_attrs(order: hipMemcpySrcAccessOrder, flags: c_uint) -> Result<(), hipError_t> {
    type F = hipMemcpyFlags;
    check((1..=3).contains(&order.0))?;
    let known = (F::hipMemcpyFlagPreferOverlapWithCompute.0
        | F::hipMemcpyFlagExtPreferCE.0
        | F::hipMemcpyFlagExtOpSwap.0) as c_uint;
    check(flags & !known == 0)?;
    if flags & F::hipMemcpyFlagExtOpSwap.0 as c_uint != 0 {
        return Err(hipError_t::hipErrorNotSupported);
    }
    Ok(())
}

/// Runs `f`, writing the index of the copy an error is about (`NO_COPY` when none) to `failIdx`
/// when it is not null.
fn with_fail_index(failIdx: *mut usize, f: impl FnOnce() -> Result<(), (usize, hipError_t)>) -> hipError_t {
    api(|| {
        f().map_err(|(i, e)| {
            if !failIdx.is_null() {
                let _ = write_out(failIdx, i);
            }
            e
        })
    })
}

/// `hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count,
/// hipMemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, hipStream_t
/// stream)` (ROCm 7.1): `count` copies of `sizes[i]` bytes from `srcs[i]` to `dsts[i]` (any
/// memory, direction inferred as `hipMemcpyDefault`), queued on `stream` in order. `attrs[k]`
/// applies to copies `attrsIdxs[k]` .. `attrsIdxs[k+1] - 1` (the last to the end); they are
/// hints here, checked for validity. The whole batch is checked before anything is queued, so
/// a failed call has copied nothing; `*failIdx` (when not null) is then the index of the copy at
/// fault, or `SIZE_MAX` for an error about no copy. Errors (hip-tests
/// `Unit_hipMemcpyBatchAsync_Negative`, `_Attrs_Negative`): `hipErrorInvalidValue` (null
/// arrays, `count` 0; with `numAttrs > 0`: null `attrs` or `attrsIdxs`, `numAttrs > count`,
/// `attrsIdxs[0] != 0`, indices not increasing or past `count`, an invalid source access order
/// or flag; a null pointer, a zero size, a range past its allocation), `hipErrorNotSupported`
/// (`hipMemcpyFlagExtOpSwap`), `hipErrorContextIsDestroyed` (destroyed stream), then the
/// copies' (`hipErrorStreamCaptureInvalidated`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpyBatchAsync(
    dsts: *mut *mut c_void,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    attrs: *mut hipMemcpyAttributes,
    attrsIdxs: *mut usize,
    numAttrs: usize,
    failIdx: *mut usize,
    stream: hipStream_t,
) -> hipError_t {
    with_fail_index(failIdx, || {
        let all = |e: hipError_t| (NO_COPY, e);
        check(!dsts.is_null() && !srcs.is_null() && !sizes.is_null() && count > 0).map_err(all)?;
        let (dsts, srcs, sizes) = (
            slice_in(dsts, count).map_err(all)?,
            slice_in(srcs, count).map_err(all)?,
            slice_in(sizes, count).map_err(all)?,
        );
        if numAttrs > 0 {
            check(!attrs.is_null() && !attrsIdxs.is_null() && numAttrs <= count).map_err(all)?;
            let (attrs, idxs) = (slice_in(attrs, numAttrs).map_err(all)?, slice_in(attrsIdxs, numAttrs).map_err(all)?);
            check(idxs[0] == 0 && idxs.windows(2).all(|w| w[0] < w[1]) && idxs.iter().all(|i| *i < count))
                .map_err(all)?;
            for (k, a) in attrs.iter().enumerate() {
                batch_copy_attrs(a.srcAccessOrder, a.flags).map_err(|e| (idxs[k], e))?;
            }
        }
        let (rt, _) = rt_dev().map_err(all)?;
        let s = stream_of(rt, stream).map_err(all)?;
        let kind = hipMemcpyKind::hipMemcpyDefault;
        for i in 0..count {
            let (d, sr, n) = (dsts[i] as u64, srcs[i] as u64, sizes[i] as u64);
            rt.memcpy_check(d, sr, n, kind).map_err(|e| (i, e))?;
        }
        for i in 0..count {
            let op = Op::Memcpy { dst: dsts[i] as u64, src: srcs[i] as u64, len: sizes[i] as u64, kind };
            rt.enqueue(&s, op).map_err(|e| (i, e))?;
        }
        Ok(())
    })
}

/// One side of a batch 3D copy as a `hipMemcpy3DParms` side: (array, position, pitched
/// pointer). A pointer's `rowLength` and `layerHeight` count elements of `elem` bytes (0: the
/// extent's); an array's offset is its position. Errors: `hipErrorInvalidValue` (another
/// operand type, an overflow).
fn batch_operand(
    o: &hipMemcpy3DOperand,
    e: &hipExtent,
    elem: usize,
) -> Result<(hipArray_t, hipPos, hipPitchedPtr), hipError_t> {
    let inv = hipError_t::hipErrorInvalidValue;
    let origin = hipPos { x: 0, y: 0, z: 0 };
    match o.r#type {
        hipMemcpy3DOperandType::hipMemcpyOperandTypePointer => {
            // SAFETY: the operand type says which member of the union the caller filled.
            let p = unsafe { o.op.ptr };
            let row = if p.rowLength == 0 { e.width } else { p.rowLength };
            let pitch = row.checked_mul(elem).ok_or(inv)?;
            let ysize = if p.layerHeight == 0 { e.height } else { p.layerHeight };
            Ok((std::ptr::null_mut(), origin, hipPitchedPtr { ptr: p.ptr, pitch, xsize: pitch, ysize }))
        }
        hipMemcpy3DOperandType::hipMemcpyOperandTypeArray => {
            // SAFETY: as above.
            let a = unsafe { o.op.array };
            check(!a.array.is_null())?;
            let pos = hipPos { x: a.offset.x, y: a.offset.y, z: a.offset.z };
            let none = hipPitchedPtr { ptr: std::ptr::null_mut(), pitch: 0, xsize: 0, ysize: 0 };
            Ok((a.array, pos, none))
        }
        _ => Err(inv),
    }
}

/// The element size and dimensions (width, height, depth; at least 1 each) of an array
/// operand. Errors: `hipErrorInvalidValue` (a freed or unknown array).
fn batch_array(a: hipArray_t) -> Result<(usize, [usize; 3]), hipError_t> {
    let mut d = std::mem::MaybeUninit::<HIP_ARRAY3D_DESCRIPTOR>::zeroed();
    if crate::api::array::hipArray3DGetDescriptor(d.as_mut_ptr(), a) != hipError_t::hipSuccess {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    // SAFETY: hipArray3DGetDescriptor filled it (and zeroed is a valid descriptor anyway).
    let d = unsafe { d.assume_init() };
    let elem = crate::mem::array::format_bytes(d.Format).ok_or(hipError_t::hipErrorInvalidValue)? as usize;
    Ok((elem * d.NumChannels as usize, [d.Width.max(1), d.Height.max(1), d.Depth.max(1)]))
}

/// One `hipMemcpy3DBatchOp` as the `hipMemcpy3DParms` of [`hipMemcpy3DAsync`], checked as far
/// as can be before queuing (as `hipMemcpy3D` validates, plus the blocks inside their arrays
/// or allocations). Errors: `hipErrorInvalidValue`, `hipErrorNotSupported` (as
/// [`batch_copy_attrs`]), `hipErrorInvalidPitchValue`.
fn batch_op_parms(op: &hipMemcpy3DBatchOp) -> Result<hipMemcpy3DParms, hipError_t> {
    batch_copy_attrs(op.srcAccessOrder, op.flags)?;
    let array_of = |o: &hipMemcpy3DOperand| {
        if o.r#type != hipMemcpy3DOperandType::hipMemcpyOperandTypeArray {
            return None;
        }
        // SAFETY: the operand type says the caller filled the union's array member.
        Some(unsafe { o.op.array.array })
    };
    let arrays = [array_of(&op.src), array_of(&op.dst)];
    let mut elem = 1;
    for (a, o) in arrays.iter().zip([&op.src, &op.dst]) {
        let Some(a) = a else { continue };
        let (e, dims) = batch_array(*a)?;
        elem = e;
        // SAFETY: an array operand.
        let off = unsafe { o.op.array.offset };
        let fits = |at: usize, n: usize, dim: usize| at.checked_add(n).is_some_and(|end| end <= dim);
        let x = &op.extent;
        check(fits(off.x, x.width, dims[0]) && fits(off.y, x.height, dims[1]) && fits(off.z, x.depth, dims[2]))?;
    }
    let (sa, spos, sptr) = batch_operand(&op.src, &op.extent, elem)?;
    let (da, dpos, dptr) = batch_operand(&op.dst, &op.extent, elem)?;
    let p = hipMemcpy3DParms {
        srcArray: sa,
        srcPos: spos,
        srcPtr: sptr,
        dstArray: da,
        dstPos: dpos,
        dstPtr: dptr,
        extent: op.extent,
        kind: hipMemcpyKind::hipMemcpyDefault,
    };
    let rt = runtime()?;
    if sa.is_null() && da.is_null() {
        let (d, sr, b) = memcpy_3d_args(&p)?;
        rt.node_block_check(&d, &b)?;
        rt.node_block_check(&sr, &b)?;
    } else {
        memcpy_3d_check(&p)?;
        let b = Block {
            width: (op.extent.width * elem) as u64,
            height: op.extent.height as u64,
            depth: op.extent.depth as u64,
        };
        for (ptr, pos) in [(sptr, spos), (dptr, dpos)] {
            if !ptr.ptr.is_null() {
                rt.node_block_check(&pitched(ptr.ptr, ptr.pitch, ptr.ysize, pos)?, &b)?;
            }
        }
    }
    Ok(p)
}

/// `hipError_t hipMemcpy3DBatchAsync(size_t numOps, hipMemcpy3DBatchOp* opList, size_t* failIdx,
/// unsigned long long flags, hipStream_t stream)` (ROCm 7.1): `numOps` 3D copies queued on
/// `stream` in order, each as [`hipMemcpy3DAsync`] of its operands: a pointer (`rowLength` and
/// `layerHeight` in elements, 0 for the extent's) or an array at an offset (elements); the
/// extent counts elements when an array takes part, else bytes. Every operation is checked
/// before any is queued (a failed call has copied nothing); `*failIdx` (when not null) is the
/// index of the operation at fault, `SIZE_MAX` for an error about none. Errors:
/// `hipErrorInvalidValue` (`numOps` 0, null `opList`, `flags` not 0; per operation: an unknown
/// operand type, an invalid source access order or flag, a block past its array or allocation,
/// and [`hipMemcpy3D`]'s checks), `hipErrorNotSupported` (`hipMemcpyFlagExtOpSwap`),
/// `hipErrorInvalidPitchValue`, `hipErrorContextIsDestroyed` (destroyed stream), then the
/// copies'.
#[no_mangle]
pub extern "C" fn hipMemcpy3DBatchAsync(
    numOps: usize,
    opList: *mut hipMemcpy3DBatchOp,
    failIdx: *mut usize,
    flags: u64,
    stream: hipStream_t,
) -> hipError_t {
    with_fail_index(failIdx, || {
        let all = |e: hipError_t| (NO_COPY, e);
        check(numOps > 0 && !opList.is_null() && flags == 0).map_err(all)?;
        let ops = slice_in(opList, numOps).map_err(all)?;
        let (rt, _) = rt_dev().map_err(all)?;
        stream_of(rt, stream).map_err(all)?;
        let parms: Vec<hipMemcpy3DParms> =
            ops.iter().enumerate().map(|(i, op)| batch_op_parms(op).map_err(|e| (i, e))).collect::<Result<_, _>>()?;
        for (i, p) in parms.iter().enumerate() {
            match memcpy_3d(p, stream, false) {
                hipError_t::hipSuccess => {}
                e => return Err((i, e)),
            }
        }
        Ok(())
    })
}
