//! Stream management (HIP "Stream Management" group; clr `hip_stream.cpp`).

use crate::api::common::{api, check, event_of, rt_dev, stream_handle, stream_of, stream_take, write_out};
use crate::api::types::*;
use std::ffi::{c_int, c_uint};

/// `hipStreamCreateWithPriority`-style creation on the current device.
fn create(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> hipError_t {
    api(|| {
        check(!stream.is_null())?;
        check(flags & !hipStreamNonBlocking == 0)?;
        let (rt, d) = rt_dev()?;
        let s = rt.stream_create(d, flags, priority)?;
        write_out(stream, stream_handle(s))
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

/// `hipStreamCreateWithPriority` (priorities are accepted and recorded; SDMA queues all run at the
/// KFD's maximum priority).
#[no_mangle]
pub extern "C" fn hipStreamCreateWithPriority(stream: *mut hipStream_t, flags: c_uint, priority: c_int) -> hipError_t {
    create(stream, flags, priority)
}

/// `hipStreamDestroy`: waits for the stream's work, then releases it. Errors:
/// `hipErrorInvalidHandle` for null, unknown or already destroyed streams.
#[no_mangle]
pub extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    api(|| {
        if (stream as usize) <= 2 {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        let (rt, _) = rt_dev()?;
        let s = stream_take(stream)?;
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
        rt.stream_sync(&s)
    })
}

/// `hipStreamQuery`: `hipSuccess` when all work on `stream` is done, else `hipErrorNotReady`.
#[no_mangle]
pub extern "C" fn hipStreamQuery(stream: hipStream_t) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        if rt.stream_query(&s)? {
            Ok(())
        } else {
            Err(hipError_t::hipErrorNotReady)
        }
    })
}

/// `hipStreamWaitEvent`: later work on `stream` waits (on the GPU, POLL_REGMEM) for the event's
/// last record. A never-recorded event is a no-op. `flags` must be 0 (`hipErrorInvalidValue`);
/// null or unknown event: `hipErrorInvalidHandle`.
#[no_mangle]
pub extern "C" fn hipStreamWaitEvent(stream: hipStream_t, event: hipEvent_t, flags: c_uint) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let e = event_of(event)?;
        check(flags == 0)?;
        // hip-tests (AMD): a bad stream here is hipErrorInvalidHandle, not ContextIsDestroyed.
        let s = stream_of(rt, stream).map_err(|_| hipError_t::hipErrorInvalidHandle)?;
        let f = e.fence.lock().clone();
        if let Some(f) = f {
            if !f.done() {
                rt.stream_submit(&s, &[f], |_| Ok(()))?;
            }
        }
        if let Some(p) = e.ipc.get() {
            rt.ipc_event_stream_wait(p, &s)?;
        }
        Ok(())
    })
}

/// `hipStreamGetFlags`.
#[no_mangle]
pub extern "C" fn hipStreamGetFlags(stream: hipStream_t, flags: *mut c_uint) -> hipError_t {
    api(|| {
        check(!flags.is_null())?;
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
