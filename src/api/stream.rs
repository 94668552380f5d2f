//! Stream management (HIP "Stream Management" group; clr `hip_stream.cpp`).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{
    api, check, event_of, read_in, rt_dev, slice_in, stream_handle, stream_of, stream_take, write_out, write_slice,
};
use std::ffi::{c_int, c_uint, c_void};

/// clr's stream priorities (`hip::Stream::Priority`): High -1, Normal 0, Low 1.
const PRIORITY_HIGH: c_int = -1;
const PRIORITY_LOW: c_int = 1;

/// `hipStreamCreateWithPriority`-style creation on the current device; the priority is clamped
/// to [`PRIORITY_HIGH`, `PRIORITY_LOW`] as clr does.
fn create(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> hipError_t {
    api(|| {
        check(!stream.is_null())?;
        check(flags & !hipStreamNonBlocking == 0)?;
        let (rt, d) = rt_dev()?;
        let s = rt.stream_create(d, flags, priority.clamp(PRIORITY_HIGH, PRIORITY_LOW))?;
        write_out(stream, stream_handle(s))
    })
}

/// `hipDeviceGetStreamPriorityRange`: least 1, greatest -1 (clr); either pointer may be null.
#[no_mangle]
pub extern "C" fn hipDeviceGetStreamPriorityRange(
    leastPriority: *mut c_int,
    greatestPriority: *mut c_int,
) -> hipError_t {
    api(|| {
        rt_dev()?;
        if !leastPriority.is_null() {
            write_out(leastPriority, PRIORITY_LOW)?;
        }
        if !greatestPriority.is_null() {
            write_out(greatestPriority, PRIORITY_HIGH)?;
        }
        Ok(())
    })
}

/// `hipStreamCreate`: a blocking stream on the current device. Null: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    create(stream, hipStreamDefault, 0)
}

/// `hipStreamCreateWithFlags`: `flags` is `hipStreamDefault` or `hipStreamNonBlocking`
/// (anything else: `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipStreamCreateWithFlags(stream: *mut hipStream_t, flags: c_uint) -> hipError_t {
    create(stream, flags, 0)
}

/// `hipStreamCreateWithPriority`: the priority, clamped to [-1, 1]
/// (`hipDeviceGetStreamPriorityRange`), sets the queue priority the stream's kernels run at: KFD
/// priority 11 (high), 7 (normal) or 0 (low), as clr's; copies run at the KFD's maximum, as ROCr's.
#[no_mangle]
pub extern "C" fn hipStreamCreateWithPriority(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> hipError_t {
    create(stream, flags, priority)
}

/// `hipStreamDestroy`: waits for the stream's work, then releases it; a stream whose work waits
/// on an external semaphore (`hipWaitExternalSemaphoresAsync`, possibly never signalled: its
/// signaller may have died) is released at once, as CUDA's `cudaStreamDestroy`, and its work runs
/// once the wait is released. Errors: `hipErrorInvalidHandle` for null, unknown or already
/// destroyed streams.
#[no_mangle]
pub extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    api(|| {
        if (stream as usize) <= 2 {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        let (rt, _) = rt_dev()?;
        let s = stream_take(stream)?;
        crate::graph::stream_destroyed(&s);
        if rt.ext_sem_wait_pending(&s) {
            // CUDA's cudaStreamDestroy: returns at once; the work runs once the wait is released.
            return Ok(());
        }
        rt.stream_sync(&s)
    })
}

/// `hipStreamSynchronize`: waits for all work on `stream` (null = the current device's null
/// stream, which includes the blocking streams' work).
#[no_mangle]
pub extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        crate::graph::check_stream_sync(&s)?;
        rt.stream_sync(&s)
    })
}

/// `hipStreamQuery`: `hipSuccess` when all work on `stream` is done, else `hipErrorNotReady`.
#[no_mangle]
pub extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        crate::graph::check_stream_sync(&s)?;
        if rt.stream_query(&s)? {
            Ok(())
        } else {
            Err(hipError_t::hipErrorNotReady)
        }
    })
}

/// `hipStreamWaitEvent`: later work on `stream` waits (on the GPU, POLL_REGMEM) for the event's
/// last record. A never-recorded event is a no-op. An event recorded in a stream capture in
/// progress makes `stream` join that capture instead (src/graph/mod.rs; its next captured work
/// depends on what preceded the record, `flags` unchecked as clr). `flags` must be 0
/// (`hipErrorInvalidValue`); null or unknown event: `hipErrorInvalidHandle`.
#[no_mangle]
pub extern "C" fn hipStreamWaitEvent(stream: hipStream_t, event: hipEvent_t, flags: c_uint) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let e = event_of(event)?;
        // hip-tests (AMD): a bad stream here is hipErrorInvalidHandle, not ContextIsDestroyed.
        let s = stream_of(rt, stream).map_err(|_| hipError_t::hipErrorInvalidHandle)?;
        if crate::graph::capture_wait_event(&s, &e)? {
            return Ok(());
        }
        check(flags == 0)?;
        rt.stream_wait_event(&s, &e)
    })
}

/// `hipStreamGetFlags`. Errors (clr): `hipErrorInvalidValue` (null `flags`, and the null
/// stream, `Unit_hipStreamGetFlags_Negative`), `hipErrorContextIsDestroyed` (unknown stream).
#[no_mangle]
pub extern "C" fn hipStreamGetFlags(stream: hipStream_t, flags: *mut c_uint) -> hipError_t {
    api(|| {
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        crate::core::runtime::runtime()?;
        check(!flags.is_null() && !stream.is_null())?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        write_out(flags, s.flags)
    })
}

/// `hipStreamGetPriority`.
#[no_mangle]
pub extern "C" fn hipStreamGetPriority(stream: hipStream_t, priority: *mut c_int) -> hipError_t {
    api(|| {
        check(!priority.is_null())?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        write_out(priority, s.priority)
    })
}

/// `hipStreamGetDevice`: the stream's device (null stream: the current device). Errors:
/// `hipErrorInvalidValue` (null `device`), `hipErrorContextIsDestroyed` (unknown stream).
#[no_mangle]
pub extern "C" fn hipStreamGetDevice(stream: hipStream_t, device: *mut hipDevice_t) -> hipError_t {
    api(|| {
        check(!device.is_null())?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        write_out(device, s.dev as hipDevice_t)
    })
}

/// The stream a handle names, for the calls that answer `hipErrorInvalidResourceHandle` for an
/// unknown or destroyed one (clr `hip::isValid` in `hipStreamGetId` and the attribute calls).
fn valid_stream(stream: hipStream_t) -> Result<std::sync::Arc<crate::core::stream::Stream>, hipError_t> {
    let (rt, _) = rt_dev()?;
    stream_of(rt, stream).map_err(|_| hipError_t::hipErrorInvalidResourceHandle)
}

/// `hipStreamGetId`: `*streamId` = the stream's id, unique in the process and never reused
/// (clr `Stream::GetStreamId`). The null stream and `hipStreamLegacy` name the current device's
/// null stream (one id), `hipStreamPerThread` this thread's per-thread stream. Errors (clr
/// `hipStreamGetId_common`): `hipErrorInvalidValue` (null `streamId`),
/// `hipErrorInvalidResourceHandle` (unknown or destroyed stream).
#[no_mangle]
pub extern "C" fn hipStreamGetId(stream: hipStream_t, streamId: *mut std::ffi::c_ulonglong) -> hipError_t {
    api(|| {
        check(!streamId.is_null())?;
        write_out(streamId, valid_stream(stream)?.id)
    })
}

/// `int hipGetStreamDeviceId(hipStream_t stream)`: the device ordinal of `stream` (the null
/// stream, `hipStreamLegacy` and `hipStreamPerThread`: the current device), or -1 for an
/// unknown or destroyed stream or without a usable device (clr `hip_intercept.cpp`). Returns
/// an `int`, not a `hipError_t`, and sets no last error.
#[no_mangle]
pub extern "C" fn hipGetStreamDeviceId(stream: hipStream_t) -> c_int {
    let dev = std::panic::catch_unwind(|| {
        let rt = crate::core::runtime::runtime().ok()?;
        stream_of(rt, stream).ok().map(|s| s.dev as c_int)
    });
    dev.ok().flatten().unwrap_or(-1)
}

/// `hipStreamSetAttribute`: sets one attribute of `stream`. Only
/// `hipStreamAttributeSynchronizationPolicy` can be set (`value->syncPolicy`, `hipSyncPolicyAuto`
/// to `hipSyncPolicyBlockingSync`), as in clr: how `hipStreamSynchronize` waits for the stream
/// (CUDA's `cudaStreamAttributeSynchronizationPolicy`; `Spin`, `Yield` and `BlockingSync` as the
/// `hipDeviceSchedule*` flags, `Auto` as the device's flags say; src/core/wait.rs). Errors (clr `hipStreamSetAttribute`, in its order;
/// hip-tests `hipStreamSetGetAttributes.cc`): `hipErrorInvalidValue` (null `value`),
/// `hipErrorInvalidResourceHandle` (unknown or destroyed stream),
/// `hipErrorStreamCaptureUnsupported` (the stream captures: that capture is invalidated; or
/// another capture forbids it, as for `hipStreamSynchronize`), `hipErrorInvalidValue` (another
/// attribute, a policy out of range).
#[no_mangle]
pub extern "C" fn hipStreamSetAttribute(
    stream: hipStream_t,
    attr: hipStreamAttrID,
    value: *const hipStreamAttrValue,
) -> hipError_t {
    api(|| {
        check(!value.is_null())?;
        let s = valid_stream(stream)?;
        crate::graph::check_stream_sync(&s)?;
        check(attr == hipLaunchAttributeID::hipStreamAttributeSynchronizationPolicy)?;
        // The union's members all start at its offset 0: read only `syncPolicy`.
        let policy = read_in(value.cast::<hipSynchronizationPolicy>())?;
        let range =
            hipSynchronizationPolicy::hipSyncPolicyAuto.0..=hipSynchronizationPolicy::hipSyncPolicyBlockingSync.0;
        check(range.contains(&policy.0))?;
        s.sync_policy.store(policy.0, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })
}

/// `hipStreamGetAttribute`: one attribute of `stream` into `value_out`:
/// `hipStreamAttributeSynchronizationPolicy` (`syncPolicy`; `hipSyncPolicyAuto` until set) or
/// `hipStreamAttributePriority` (`priority`, as `hipStreamGetPriority`). Only that member is
/// written. Errors (clr `hipStreamGetAttribute`): `hipErrorInvalidValue` (null `value_out`,
/// another attribute), `hipErrorInvalidResourceHandle` (unknown or destroyed stream).
#[no_mangle]
pub extern "C" fn hipStreamGetAttribute(
    stream: hipStream_t,
    attr: hipStreamAttrID,
    value_out: *mut hipStreamAttrValue,
) -> hipError_t {
    api(|| {
        check(!value_out.is_null())?;
        let s = valid_stream(stream)?;
        match attr {
            hipLaunchAttributeID::hipStreamAttributeSynchronizationPolicy => {
                let policy = hipSynchronizationPolicy(s.sync_policy.load(std::sync::atomic::Ordering::Relaxed));
                // The union's members all start at its offset 0: write only the member.
                write_out(value_out.cast::<hipSynchronizationPolicy>(), policy)
            }
            hipLaunchAttributeID::hipStreamAttributePriority => write_out(value_out.cast::<c_int>(), s.priority),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// `hipStreamCopyAttributes`: gives `dst` the attributes of `src` that can be set (the
/// synchronization policy, as clr). Errors: `hipErrorInvalidResourceHandle` (either stream
/// unknown or destroyed).
#[no_mangle]
pub extern "C" fn hipStreamCopyAttributes(dst: hipStream_t, src: hipStream_t) -> hipError_t {
    api(|| {
        let (s, d) = (valid_stream(src)?, valid_stream(dst)?);
        let policy = s.sync_policy.load(std::sync::atomic::Ordering::Relaxed);
        d.sync_policy.store(policy, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })
}

/// Queues `job` on `stream` after its current work; later work waits for it to return.
fn host_func(stream: hipStream_t, job: Box<dyn FnOnce() + Send>) -> Result<(), hipError_t> {
    let (rt, _) = rt_dev()?;
    let s = stream_of(rt, stream)?;
    rt.stream_host_func(&s, job)
}

/// A C pointer carried to the completion thread (the program owns what it points to).
struct UserData(*mut c_void);
// SAFETY: an opaque pointer handed back to the program's own callback, never dereferenced here.
unsafe impl Send for UserData {}

/// `hipLaunchHostFunc`: `fn(userData)` runs on a runtime thread after all work queued on
/// `stream` so far, and work queued on `stream` later starts only after it has returned. The
/// function must not call HIP APIs that wait for GPU work (CUDA's rule; host functions run one at
/// a time). Errors: `hipErrorInvalidValue` (null `fn`), `hipErrorContextIsDestroyed` (unknown
/// stream), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipLaunchHostFunc(stream: hipStream_t, fn_: hipHostFn_t, userData: *mut c_void) -> hipError_t {
    api(|| {
        let f = fn_.ok_or(hipError_t::hipErrorInvalidValue)?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        rt.enqueue(&s, crate::graph::Op::Host { fn_: f, data: userData as usize })
    })
}

/// `hipStreamAddCallback`: [`hipLaunchHostFunc`] whose function also gets the stream (the
/// handle as passed) and the status (`hipSuccess`). Errors: `hipErrorInvalidValue` (null
/// `callback`, `flags` ≠ 0), `hipErrorContextIsDestroyed` (unknown stream).
#[no_mangle]
pub extern "C" fn hipStreamAddCallback(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    userData: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        let f = callback.ok_or(hipError_t::hipErrorInvalidValue)?;
        check(flags == 0)?;
        let (data, handle) = (UserData(userData), UserData(stream as *mut c_void));
        host_func(
            stream,
            Box::new(move || {
                let (data, handle) = (data, handle);
                // SAFETY: the program's callback with the stream and pointer it gave (HIP contract).
                unsafe { f(handle.0 as hipStream_t, hipError_t::hipSuccess, data.0) }
            }),
        )
    })
}

/// The CU mask with all `cus` CUs enabled, 32 CUs a word (clr `hipExtStreamGetCUMask`'s default).
fn full_cu_mask(cus: u32) -> Vec<u32> {
    (0..cus.div_ceil(32)).map(|i| if (i + 1) * 32 <= cus { u32::MAX } else { (1u32 << (cus % 32)) - 1 }).collect()
}

/// `hipExtStreamCreateWithCUMask`: a blocking stream on the current device that records
/// `cuMask[cuMaskSize]` (hipkfd's streams run on SDMA queues, which have no CUs, so the mask only
/// answers `hipExtStreamGetCUMask`). Errors (clr order): `hipErrorInvalidHandle` (null
/// `stream`), `hipErrorInvalidValue` (`cuMaskSize` 0, null `cuMask`).
#[no_mangle]
pub extern "C" fn hipExtStreamCreateWithCUMask(
    stream: *mut hipStream_t,
    cuMaskSize: u32,
    cuMask: *const u32,
) -> hipError_t {
    api(|| {
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        crate::core::runtime::runtime()?;
        if stream.is_null() {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        check(cuMaskSize != 0)?;
        let mask = slice_in(cuMask, cuMaskSize as usize)?.to_vec();
        let (rt, d) = rt_dev()?;
        let s = rt.stream_create(d, hipStreamDefault, 0)?;
        let _ = s.cu_mask.set(mask);
        write_out(stream, stream_handle(s))
    })
}

/// `hipExtStreamGetCUMask`: the CUs `stream` may use, 32 a word, into `cuMask[cuMaskSize]`:
/// all CUs of the current device for the null stream or a stream without a mask, else the
/// stream's mask AND all CUs (all CUs again if that is empty), as clr. Errors:
/// `hipErrorInvalidValue` (null `cuMask`, `cuMaskSize` below the device's CUs / 32),
/// `hipErrorContextIsDestroyed` (unknown stream).
#[no_mangle]
pub extern "C" fn hipExtStreamGetCUMask(stream: hipStream_t, cuMaskSize: u32, cuMask: *mut u32) -> hipError_t {
    api(|| {
        check(!cuMask.is_null())?;
        let (rt, d) = rt_dev()?;
        let full = full_cu_mask(rt.devices[d].props.multiProcessorCount as u32);
        check(cuMaskSize as usize >= full.len())?;
        let s = stream_of(rt, stream)?;
        let mask = match s.cu_mask.get() {
            Some(m) => {
                let and: Vec<u32> = m.iter().zip(&full).map(|(a, b)| a & b).collect();
                if and.iter().all(|w| *w == 0) {
                    full
                } else {
                    and
                }
            }
            None => full,
        };
        // mask.len() ≤ full.len() ≤ cuMaskSize, the caller's array length.
        write_slice(cuMask, &mask)
    })
}

// ---- stream memory operations (clr `hip_stream_ops.cpp`) ---------------------------------------

/// The checks `hipStreamWaitValue*`/`hipStreamWriteValue*` share (clr `ihipStreamOperation`):
/// `hipErrorInvalidValue` for a null `ptr`, `hipErrorContextIsDestroyed` for an unknown stream,
/// `hipErrorStreamCaptureUnsupported` on a capturing stream (no graph node for them).
fn value_op(
    stream: hipStream_t,
    ptr: *mut c_void,
) -> Result<(&'static crate::core::runtime::Runtime, std::sync::Arc<crate::core::stream::Stream>), hipError_t> {
    check(!ptr.is_null())?;
    let (rt, _) = rt_dev()?;
    let s = stream_of(rt, stream)?;
    if s.capture.lock::<Option<crate::graph::StreamCapture>>().is_some() {
        return Err(hipError_t::hipErrorStreamCaptureUnsupported);
    }
    Ok((rt, s))
}

/// Shared body of the two waits.
fn wait_value(stream: hipStream_t, ptr: *mut c_void, value: u64, flags: c_uint, mask: u64, bytes: u64) -> hipError_t {
    api(|| {
        let (rt, s) = value_op(stream, ptr)?;
        let op = crate::core::stream::WaitOp::from_flags(flags).ok_or(hipError_t::hipErrorInvalidValue)?;
        rt.stream_wait_value(&s, ptr as u64, op, value, mask, bytes)
    })
}

/// `hipStreamWaitValue32`: work queued on `stream` later waits until the 32-bit word at `ptr`
/// (device, pinned or registered memory, 4-aligned) passes `flags`' compare against `value`
/// under `mask`: `hipStreamWaitValueGte` `(*ptr & mask) >= value`, `Eq` `==`, `And`
/// `(*ptr & mask & value) != 0`, `Nor` `~((*ptr & mask) | value) & mask != 0`. Runs on the GPU
/// (SDMA POLL_REGMEM). Errors (clr `ihipStreamOperation`; hip-tests `hipStreamValue.cc`):
/// `hipErrorInvalidValue` (null or unknown `ptr`, other `flags`), `hipErrorContextIsDestroyed`
/// (unknown stream).
#[no_mangle]
pub extern "C" fn hipStreamWaitValue32(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: c_uint,
    mask: u32,
) -> hipError_t {
    wait_value(stream, ptr, value as u64, flags, mask as u64, 4)
}

/// `hipStreamWaitValue64`: `hipStreamWaitValue32` on a 64-bit word (8-aligned). A compare that
/// involves both halves of the word is polled by a runtime thread (SDMA compares 32 bits); it
/// needs memory the CPU maps (`hipErrorNotSupported` otherwise). Errors as
/// `hipStreamWaitValue32`.
#[no_mangle]
pub extern "C" fn hipStreamWaitValue64(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: c_uint,
    mask: u64,
) -> hipError_t {
    wait_value(stream, ptr, value, flags, mask, 8)
}

/// Shared body of the two writes (`flags` is unused, as in clr).
fn write_value(stream: hipStream_t, ptr: *mut c_void, value: u64, bytes: u64) -> hipError_t {
    api(|| {
        let (rt, s) = value_op(stream, ptr)?;
        rt.stream_write_value(&s, ptr as u64, value, bytes)
    })
}

/// `hipStreamWriteValue32`: after the work queued on `stream` so far, the GPU writes `value` to
/// the 32-bit word at `ptr` (device, pinned or registered memory, 4-aligned; SDMA
/// WRITE_LINEAR). `flags` is ignored (clr). Errors: `hipErrorInvalidValue` (null or unknown
/// `ptr`), `hipErrorContextIsDestroyed` (unknown stream).
#[no_mangle]
pub extern "C" fn hipStreamWriteValue32(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u32,
    flags: c_uint,
) -> hipError_t {
    let _ = flags;
    write_value(stream, ptr, value as u64, 4)
}

/// `hipStreamWriteValue64`: `hipStreamWriteValue32` of a 64-bit word (8-aligned).
#[no_mangle]
pub extern "C" fn hipStreamWriteValue64(
    stream: hipStream_t,
    ptr: *mut c_void,
    value: u64,
    flags: c_uint,
) -> hipError_t {
    let _ = flags;
    write_value(stream, ptr, value, 8)
}

/// `hipStreamBatchMemOp`: queues the `count` stream memory operations of `paramArray` on
/// `stream`, one after another in array order: `hipStreamMemOpWaitValue32/64` as
/// `hipStreamWaitValue32/64` with `waitValue.flags` the compare and every bit of the word
/// compared, `hipStreamMemOpWriteValue32/64` as `hipStreamWriteValue32/64` (`writeValue.flags`
/// unused, `alias` ignored). A wait holds the later elements and the stream's later work. The
/// whole batch is checked before anything is queued; on a capturing stream it is recorded as a
/// batch memory operation node. Errors (clr `ihipBatchMemOperation`, in its order):
/// `hipErrorInvalidValue` (null `paramArray`, `flags` ≠ 0, `count` 0 or above 256),
/// `hipErrorContextIsDestroyed` (unknown stream), `hipErrorInvalidValue` (`hipStreamMemOpBarrier`
/// and `hipStreamMemOpFlushRemoteWrites`, which clr does not support; an unknown operation or
/// compare; a null address or a word outside a live allocation the stream's device reaches, or
/// misaligned), `hipErrorNotSupported` (a 64-bit wait on both halves of a word the CPU does not
/// map, as `hipStreamWaitValue64`).
#[no_mangle]
pub extern "C" fn hipStreamBatchMemOp(
    stream: hipStream_t,
    count: c_uint,
    paramArray: *mut hipStreamBatchMemOpParams,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!paramArray.is_null() && flags == 0 && (1..=256).contains(&count))?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        let elems = slice_in(paramArray as *const hipStreamBatchMemOpParams, count as usize)?;
        let b = crate::graph::BatchMemOps::new(std::ptr::null_mut(), 0, elems)?;
        b.ops.iter().try_for_each(|op| rt.stream_mem_op_check(&s, op))?;
        rt.enqueue(&s, crate::graph::Op::BatchMemOps(std::sync::Arc::new(b)))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn full_cu_mask() {
        assert_eq!(super::full_cu_mask(104), vec![u32::MAX, u32::MAX, u32::MAX, 0xff]);
        assert_eq!(super::full_cu_mask(64), vec![u32::MAX, u32::MAX]);
        assert_eq!(super::full_cu_mask(1), vec![1]);
    }
}
