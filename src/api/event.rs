//! Event management (HIP "Event Management" group; clr `hip_event.cpp`).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, event_handle, event_of, event_take, rt_dev, stream_of, write_out};
use std::ffi::c_uint;
use std::sync::Arc;

const EVENT_FLAGS: c_uint = hipEventBlockingSync
    | hipEventDisableTiming
    | hipEventInterprocess
    | hipEventDisableSystemFence
    | hipEventReleaseToDevice
    | hipEventReleaseToSystem;

/// `hipEventCreateWithFlags`. Errors (clr `ihipEventCreateWithFlags`): `hipErrorInvalidValue`
/// (null, unknown flags, more than one of `hipEventReleaseToDevice`, `hipEventReleaseToSystem`
/// and `hipEventDisableSystemFence`, `hipEventInterprocess` without `hipEventDisableTiming`).
#[no_mangle]
pub extern "C" fn hipEventCreateWithFlags(event: *mut hipEvent_t, flags: c_uint) -> hipError_t {
    api(|| {
        check(!event.is_null())?;
        check(flags & !EVENT_FLAGS == 0)?;
        check(flags & hipEventInterprocess == 0 || flags & hipEventDisableTiming != 0)?;
        // At most one of the release scopes (clr `ihipEventCreateWithFlags`).
        check(
            (flags & (hipEventReleaseToDevice | hipEventReleaseToSystem | hipEventDisableSystemFence)).count_ones()
                <= 1,
        )?;
        let (rt, _) = rt_dev()?;
        let e = rt.event_create(flags, crate::api::common::current_device())?;
        write_out(event, event_handle(Arc::new(e)))
    })
}

/// `hipEventCreate`: an event with timing.
#[no_mangle]
pub extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t {
    hipEventCreateWithFlags(event, hipEventDefault)
}

/// `hipEventRecord`: records the event at the current end of `stream` (null: the current device's
/// null stream). Errors: `hipErrorInvalidHandle` (null/unknown event or stream).
#[no_mangle]
pub extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    api(|| {
        let e = event_of(event)?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        if crate::graph::capture_event_record(&e, &s) {
            return Ok(());
        }
        if s.dev != e.dev {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        rt.event_record(&e, &s)
    })
}

/// `hipEventRecordWithFlags`: [`hipEventRecord`] with `flags` `hipEventRecordDefault` or
/// `hipEventRecordExternal` (which matters only in stream capture; a plain record here). Errors:
/// as `hipEventRecord`; `hipErrorInvalidValue` for other flags.
#[no_mangle]
pub extern "C" fn hipEventRecordWithFlags(event: hipEvent_t, stream: hipStream_t, flags: c_uint) -> hipError_t {
    if flags != hipEventRecordDefault && flags != hipEventRecordExternal {
        return api(|| Err(hipError_t::hipErrorInvalidValue));
    }
    hipEventRecord(event, stream)
}

/// `hipEventSynchronize`: waits for the last record (never recorded: returns at once).
#[no_mangle]
pub extern "C" fn hipEventSynchronize(event: hipEvent_t) -> hipError_t {
    api(|| {
        let e = event_of(event)?;
        let (rt, _) = rt_dev()?;
        crate::graph::check_event_sync(&e)?;
        rt.event_sync(&e)
    })
}

/// `hipEventQuery`: `hipSuccess` when the last record is done (or there is none), else
/// `hipErrorNotReady`.
#[no_mangle]
pub extern "C" fn hipEventQuery(event: hipEvent_t) -> hipError_t {
    api(|| {
        let e = event_of(event)?;
        let (rt, _) = rt_dev()?;
        crate::graph::check_event_sync(&e)?;
        if rt.event_done(&e)? {
            Ok(())
        } else {
            Err(hipError_t::hipErrorNotReady)
        }
    })
}

/// `hipEventElapsedTime`: milliseconds between two completed records. Errors:
/// `hipErrorInvalidValue` (null `ms`), `hipErrorInvalidHandle` (null/unknown events, timing
/// disabled, never recorded), `hipErrorNotReady` (a record still pending).
#[no_mangle]
pub extern "C" fn hipEventElapsedTime(ms: *mut f32, start: hipEvent_t, stop: hipEvent_t) -> hipError_t {
    api(|| {
        check(!ms.is_null())?;
        let (a, b) = (event_of(start)?, event_of(stop)?);
        let (rt, _) = rt_dev()?;
        write_out(ms, rt.event_elapsed(&a, &b)?)
    })
}

/// `hipEventDestroy`. Errors: `hipErrorInvalidHandle` (null, unknown or destroyed).
#[no_mangle]
pub extern "C" fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
    api(|| {
        let e = event_take(event)?;
        let (rt, _) = rt_dev()?;
        rt.event_destroy(&e);
        Ok(())
    })
}
