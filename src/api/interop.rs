//! External resource interoperability (HIP "External Resource Interoperability" group; clr
//! `hip_memory.cpp`): dma-buf memory and DRM syncobj semaphores shared with other Linux GPU
//! APIs. How they work, and what differs from stock ROCm, is in `crate::share::interop`.
//!
//! # ROCm 5.2 binaries
//! The descriptors are read field by field at their offsets, never as whole structs: the
//! handle and buffer descriptors of the 5.2 header are the ROCm 7 ones without the trailing
//! `reserved` words (same offsets, `reserved` is never read). The signal and wait parameters
//! differ inside: 5.2 has no `nvSciSync` member, so `flags` is at 64 and an element is 136
//! bytes, not 72 and 144. A binary built against the 5.2 header links `libamdhip64.so.5`; when
//! this library was loaded under a `.so.5` (or older) name (`dladdr`), those calls use the 5.2
//! layout, else ROCm 6/7's.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, rocm5_caller, rt_dev, stream_of, write_out};
use crate::share::interop::ExternalSemaphore;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

/// Reads a `T` at byte `off` of a caller's struct.
fn field<T: Copy>(p: *const c_void, off: usize) -> T {
    // SAFETY: `p` is a non-null descriptor from the caller (checked by every entry point), at
    // least `off + size_of::<T>()` bytes long in every header version we accept.
    unsafe { (p as *const u8).add(off).cast::<T>().read_unaligned() }
}

/// (element size, offset of `flags`) of `hipExternalSemaphoreSignalParams` and
/// `hipExternalSemaphoreWaitParams` for the header the caller was built against.
pub(crate) fn sem_params_layout() -> (usize, usize) {
    if rocm5_caller() {
        (136, 64)
    } else {
        (144, 72)
    }
}

/// `hipImportExternalMemory`: imports the dma-buf fd of `memHandleDesc` (type
/// `hipExternalMemoryHandleTypeOpaqueFd`, `size` bytes, `flags` 0 or
/// `hipExternalMemoryDedicated`) and writes the object to `*extMem_out`. amdgpu dma-bufs and,
/// beyond stock ROCm, foreign ones (udmabuf, other drivers: system memory). On success the
/// runtime owns the fd (closed by `hipDestroyExternalMemory`); on failure it is untouched.
/// Errors: `hipErrorInvalidValue` (null arguments, size 0, other flags, type out of range, not a
/// dma-buf, size larger than the dma-buf), `hipErrorNotSupported` (Win32, D3D and NvSciBuf
/// types), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipImportExternalMemory(
    extMem_out: *mut hipExternalMemory_t,
    memHandleDesc: *const hipExternalMemoryHandleDesc,
) -> hipError_t {
    api(|| {
        check(!extMem_out.is_null() && !memHandleDesc.is_null())?;
        let d = memHandleDesc as *const c_void;
        let (ty, fd, size, flags) =
            (field::<c_int>(d, 0), field::<c_int>(d, 8), field::<u64>(d, 24), field::<c_uint>(d, 32));
        check(size != 0 && (flags == 0 || flags == hipExternalMemoryDedicated))?;
        match hipExternalMemoryHandleType(ty) {
            hipExternalMemoryHandleType::hipExternalMemoryHandleTypeOpaqueFd => {}
            t if (2..=8).contains(&t.0) => return Err(hipError_t::hipErrorNotSupported),
            _ => return Err(hipError_t::hipErrorInvalidValue),
        }
        let (rt, dev) = rt_dev()?;
        let h = rt.ext_mem_import(fd, size, dev)?;
        write_out(extMem_out, h as hipExternalMemory_t)
    })
}

/// `hipExternalMemoryGetMappedBuffer`: `bufferDesc.size` bytes at byte `bufferDesc.offset` of
/// `extMem` (any offset with `offset + size` ≤ the imported size), mapped on every device; the
/// pointer is device memory to every API and is freed with `hipFree`; it stays valid after
/// `hipDestroyExternalMemory`. Errors: `hipErrorInvalidValue` (null arguments, unknown or
/// destroyed `extMem`, `flags` ≠ 0, size 0, range past the end), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipExternalMemoryGetMappedBuffer(
    devPtr: *mut *mut c_void,
    extMem: hipExternalMemory_t,
    bufferDesc: *const hipExternalMemoryBufferDesc,
) -> hipError_t {
    api(|| {
        check(!devPtr.is_null() && !extMem.is_null() && !bufferDesc.is_null())?;
        let d = bufferDesc as *const c_void;
        let (offset, size, flags) = (field::<u64>(d, 0), field::<u64>(d, 8), field::<c_uint>(d, 16));
        check(flags == 0)?;
        let (rt, _) = rt_dev()?;
        let m = rt.ext_mem(extMem as usize)?;
        let p = rt.ext_mem_map(&m, offset, size)?;
        write_out(devPtr, p as *mut c_void)
    })
}

/// `hipExternalMemoryGetMappedMipmappedArray`: hipkfd has no mipmapped arrays. Errors:
/// `hipErrorInvalidValue` (null arguments, unknown `extMem`), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipExternalMemoryGetMappedMipmappedArray(
    mipmap: *mut hipMipmappedArray_t,
    extMem: hipExternalMemory_t,
    mipmapDesc: *const hipExternalMemoryMipmappedArrayDesc,
) -> hipError_t {
    api(|| {
        check(!mipmap.is_null() && !extMem.is_null() && !mipmapDesc.is_null())?;
        let (rt, _) = rt_dev()?;
        rt.ext_mem(extMem as usize)?;
        Err(hipError_t::hipErrorNotSupported)
    })
}

/// `hipDestroyExternalMemory`: closes the object's fd. Buffers mapped from it stay valid until
/// `hipFree`. Errors: `hipErrorInvalidValue` (null, unknown or destroyed).
#[no_mangle]
pub extern "C" fn hipDestroyExternalMemory(extMem: hipExternalMemory_t) -> hipError_t {
    api(|| {
        check(!extMem.is_null())?;
        let (rt, _) = rt_dev()?;
        rt.ext_mem_destroy(extMem as usize)
    })
}

/// `hipImportExternalSemaphore`: imports a DRM syncobj fd (`handle.fd`):
/// `hipExternalSemaphoreHandleTypeOpaqueFd` (1) is a binary syncobj,
/// `hipExternalSemaphoreHandleTypeTimelineSemaphoreFd` (9) a timeline one (stock HIP on Linux:
/// `hipErrorNotSupported`). On success the runtime owns the fd; on failure it is untouched.
/// Errors: `hipErrorInvalidValue` (null arguments, type out of range, `flags` ≠ 0, fd not a
/// syncobj), `hipErrorNotSupported` (Win32, D3D, NvSciSync, keyed-mutex types).
#[no_mangle]
pub extern "C" fn hipImportExternalSemaphore(
    extSem_out: *mut hipExternalSemaphore_t,
    semHandleDesc: *const hipExternalSemaphoreHandleDesc,
) -> hipError_t {
    api(|| {
        check(!extSem_out.is_null() && !semHandleDesc.is_null())?;
        let d = semHandleDesc as *const c_void;
        let (ty, fd, flags) = (field::<c_int>(d, 0), field::<c_int>(d, 8), field::<c_uint>(d, 24));
        type T = hipExternalSemaphoreHandleType;
        let timeline = match hipExternalSemaphoreHandleType(ty) {
            T::hipExternalSemaphoreHandleTypeOpaqueFd => false,
            T::hipExternalSemaphoreHandleTypeTimelineSemaphoreFd => true,
            t if (2..=10).contains(&t.0) => return Err(hipError_t::hipErrorNotSupported),
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        check(flags == 0 && fd >= 0)?;
        let (rt, _) = rt_dev()?;
        let h = rt.ext_sem_import(fd, timeline)?;
        write_out(extSem_out, h as hipExternalSemaphore_t)
    })
}

/// The semaphores and fence values of `n` (`sems[i]`, `params[i]`) pairs of a signal or wait
/// call or node, in the caller's layout of the parameter structs ([`sem_params_layout`]).
/// Errors: `hipErrorInvalidValue` (a `flags` ≠ 0, a null, unknown or destroyed semaphore), in
/// array order, flags first.
pub(crate) fn sem_args(
    sems: *const hipExternalSemaphore_t,
    params: *const c_void,
    n: c_uint,
) -> Result<(Vec<Arc<ExternalSemaphore>>, Vec<u64>), hipError_t> {
    let (rt, _) = rt_dev()?;
    let (stride, flags_off) = sem_params_layout();
    let mut objs = Vec::with_capacity(n as usize);
    let mut values = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        // SAFETY: the caller passes `n` semaphores and `n` parameter structs.
        let h = unsafe { sems.add(i).read_unaligned() };
        let p = (params as *const u8).wrapping_add(i * stride) as *const c_void;
        check(field::<c_uint>(p, flags_off) == 0)?;
        check(!h.is_null())?;
        objs.push(rt.ext_sem(h as usize)?);
        values.push(field::<u64>(p, 0));
    }
    Ok((objs, values))
}

/// Validates a signal or wait call: the semaphores, each element's `flags` (must be 0) and
/// `fence.value` ([`sem_args`]), the stream. Errors: `hipErrorInvalidValue` for all of them (a
/// destroyed stream included, as hip-tests expect).
fn sem_call(
    sems: *const hipExternalSemaphore_t,
    params: *const c_void,
    n: c_uint,
    stream: hipStream_t,
    run: impl FnOnce(&[Arc<ExternalSemaphore>], &[u64], &Arc<crate::core::stream::Stream>) -> Result<(), hipError_t>,
) -> hipError_t {
    api(|| {
        check(!sems.is_null() && !params.is_null())?;
        let (rt, _) = rt_dev()?;
        let (objs, values) = sem_args(sems, params, n)?;
        let s = stream_of(rt, stream).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        if objs.is_empty() {
            return Ok(());
        }
        run(&objs, &values, &s)
    })
}

/// `hipSignalExternalSemaphoresAsync`: once all work queued on `stream` so far has completed,
/// signals each semaphore (binary: `DRM_IOCTL_SYNCOBJ_SIGNAL`) or moves it to
/// `paramsArray[i].params.fence.value` (timeline: `SYNCOBJ_TIMELINE_SIGNAL`). Returns at once.
/// Errors: `hipErrorInvalidValue` (null arrays, unknown semaphore, `flags` ≠ 0, destroyed
/// stream).
#[no_mangle]
pub extern "C" fn hipSignalExternalSemaphoresAsync(
    extSemArray: *const hipExternalSemaphore_t,
    paramsArray: *const hipExternalSemaphoreSignalParams,
    numExtSems: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    sem_call(extSemArray, paramsArray as *const c_void, numExtSems, stream, |sems, values, s| {
        crate::core::runtime::runtime()?.ext_sem_signal(sems, values, s)
    })
}

/// `hipWaitExternalSemaphoresAsync`: work queued on `stream` after this call starts only once
/// each semaphore is signalled (binary; the wait consumes the signal) or has reached
/// `paramsArray[i].params.fence.value` (timeline). The wait is on the GPU: the host thread never
/// blocks and other streams keep running. Errors: `hipErrorInvalidValue` (null arrays, unknown
/// semaphore, `flags` ≠ 0, destroyed stream), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipWaitExternalSemaphoresAsync(
    extSemArray: *const hipExternalSemaphore_t,
    paramsArray: *const hipExternalSemaphoreWaitParams,
    numExtSems: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    sem_call(extSemArray, paramsArray as *const c_void, numExtSems, stream, |sems, values, s| {
        crate::core::runtime::runtime()?.ext_sem_wait(sems, values, s)
    })
}

/// `hipDestroyExternalSemaphore`: closes the fd and releases the syncobj. A stream still waiting
/// on it is released at once (the work after the wait runs, as if it had been signalled);
/// signals already queued still happen. Errors: `hipErrorInvalidValue` (null, unknown or
/// destroyed).
#[no_mangle]
pub extern "C" fn hipDestroyExternalSemaphore(extSem: hipExternalSemaphore_t) -> hipError_t {
    api(|| {
        check(!extSem.is_null())?;
        let (rt, _) = rt_dev()?;
        rt.ext_sem_destroy(extSem as usize)
    })
}
