//! Inter-process communication (HIP "Device Memory Access" IPC functions; clr `hip_memory.cpp`,
//! `hip_event_ipc.cpp`): memory and event handles passed by value between processes. How handles
//! work, and what the two processes must share, is in `crate::share::ipc`.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, current_device, event_handle, event_of, rt_dev, write_out};
use crate::share::ipc::{Handle, KIND_EVENT, KIND_MEM};
use std::ffi::{c_uint, c_void};
use std::sync::Arc;

fn to_raw(h: Handle) -> [std::ffi::c_char; HIP_IPC_HANDLE_SIZE] {
    h.to_bytes().map(|b| b as std::ffi::c_char)
}

fn from_raw(r: &[std::ffi::c_char; HIP_IPC_HANDLE_SIZE]) -> [u8; HIP_IPC_HANDLE_SIZE] {
    r.map(|c| c as u8)
}

/// `hipIpcGetMemHandle`: a 64-byte handle for `devPtr`, any pointer inside a `hipMalloc`
/// allocation of this process; the importer gets the same offset into the allocation. Handles of
/// different allocations differ, even at a recycled VA. Errors: `hipErrorInvalidValue` (null
/// arguments; freed, one-past-end, host or imported pointers).
#[no_mangle]
pub extern "C" fn hipIpcGetMemHandle(handle: *mut hipIpcMemHandle_t, devPtr: *mut c_void) -> hipError_t {
    api(|| {
        check(!handle.is_null() && !devPtr.is_null())?;
        let (rt, _) = rt_dev()?;
        let h = rt.ipc_get_mem_handle(devPtr as u64)?;
        write_out(handle, hipIpcMemHandle_t { reserved: to_raw(h) })
    })
}

/// `hipIpcOpenMemHandle`: maps another process's exported memory into this one and writes the
/// pointer (allocation base + the exported pointer's offset) to `*devPtr`. Opening a handle again
/// returns the same pointer and counts a reference. The memory is mapped on every device.
/// `flags`: `hipIpcMemLazyEnablePeerAccess` (1) or 0 (its value in ROCm ≤ 5.7 headers).
/// Errors, in this order: `hipErrorInvalidValue` (null `devPtr`, other flags, not a handle of
/// ours), `hipErrorInvalidContext` (handle from this process), `hipErrorInvalidDevicePointer`
/// (exporter exited, memory freed, forged or stale token — within 1 s, never hangs).
#[no_mangle]
pub extern "C" fn hipIpcOpenMemHandle(
    devPtr: *mut *mut c_void,
    handle: hipIpcMemHandle_t,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!devPtr.is_null())?;
        check(flags == 0 || flags == hipIpcMemLazyEnablePeerAccess)?;
        let h = Handle::parse(&from_raw(&handle.reserved), KIND_MEM).ok_or(hipError_t::hipErrorInvalidValue)?;
        let (rt, d) = rt_dev()?;
        let p = rt.ipc_open_mem(&h, d)?;
        write_out(devPtr, p as *mut c_void)
    })
}

/// `hipIpcCloseMemHandle`: drops one open of `devPtr` (a pointer `hipIpcOpenMemHandle` returned);
/// the last close waits for the devices and unmaps the memory (its VA is given back;
/// `hipPointerGetAttributes` then fails). Errors: `hipErrorInvalidValue` (null, or not an open
/// imported pointer — e.g. the exporter's own allocation).
#[no_mangle]
pub extern "C" fn hipIpcCloseMemHandle(devPtr: *mut c_void) -> hipError_t {
    api(|| {
        check(!devPtr.is_null())?;
        let (rt, _) = rt_dev()?;
        rt.ipc_close_mem(devPtr as u64)
    })
}

/// `hipIpcGetEventHandle`: a 64-byte handle for an event created with
/// `hipEventInterprocess | hipEventDisableTiming`. Errors: `hipErrorInvalidValue` (null
/// arguments), `hipErrorInvalidHandle`/`hipErrorContextIsDestroyed` (unknown event),
/// `hipErrorInvalidConfiguration` (event without `hipEventInterprocess`, as clr).
#[no_mangle]
pub extern "C" fn hipIpcGetEventHandle(handle: *mut hipIpcEventHandle_t, event: hipEvent_t) -> hipError_t {
    api(|| {
        check(!handle.is_null() && !event.is_null())?;
        let e = event_of(event)?;
        let (rt, _) = rt_dev()?;
        let h = rt.ipc_get_event_handle(&e)?;
        write_out(handle, hipIpcEventHandle_t { reserved: to_raw(h) })
    })
}

/// `hipIpcOpenEventHandle`: an event of the current device sharing the exporter's event: records
/// in either process are seen by both; it supports `hipEventSynchronize` (sleeps on a futex),
/// `hipEventQuery`, `hipStreamWaitEvent` (waits on the GPU) and `hipEventRecord`. Release with
/// `hipEventDestroy`. Errors: `hipErrorInvalidValue` (null `event`, not a handle of ours,
/// exporter gone or event destroyed), `hipErrorInvalidContext` (handle from this process).
#[no_mangle]
pub extern "C" fn hipIpcOpenEventHandle(event: *mut hipEvent_t, handle: hipIpcEventHandle_t) -> hipError_t {
    api(|| {
        check(!event.is_null())?;
        let h = Handle::parse(&from_raw(&handle.reserved), KIND_EVENT).ok_or(hipError_t::hipErrorInvalidValue)?;
        let (rt, _) = rt_dev()?;
        let e = rt.ipc_open_event(&h, current_device())?;
        write_out(event, event_handle(Arc::new(e)))
    })
}
