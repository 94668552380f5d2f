//! Contexts (HIP "Context Management" group, deprecated; clr `hip_context.cpp`). As in clr, a
//! context is its device: `hipCtx_t` names a device's primary context (`peer::ctx_handle`), and
//! each thread has a stack of them. Pushing or setting a context makes its device current;
//! popping makes the new top's device current (CUDA's rule; clr leaves the device as it was).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, set_current_device, write_out};
use crate::api::peer::{ctx_device, ctx_handle};
use crate::core::runtime::runtime;
use std::cell::RefCell;
use std::ffi::{c_int, c_uint};

thread_local! {
    /// This thread's context stack (device ordinals), top last.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

fn with_stack<T>(f: impl FnOnce(&mut Vec<usize>) -> T) -> T {
    STACK.with(|s| f(&mut s.borrow_mut()))
}

/// `hipCtxCreate`: pushes `device`'s (primary) context on this thread's stack, makes it current
/// and sets the device's flags to `flags` (what `hipGetDeviceFlags` then reports, clr).
/// Errors: `hipErrorInvalidValue` (null `ctx`, `device` not a device, as clr).
#[no_mangle]
pub extern "C" fn hipCtxCreate(ctx: *mut hipCtx_t, flags: c_uint, device: hipDevice_t) -> hipError_t {
    api(|| {
        check(!ctx.is_null())?;
        let rt = runtime()?;
        let d = rt.device(device).map_err(|_| hipError_t::hipErrorInvalidValue)?.ordinal;
        rt.devices[d].config.lock().flags = flags;
        with_stack(|s| s.push(d));
        set_current_device(d);
        write_out(ctx, ctx_handle(d))
    })
}

/// `hipCtxDestroy`: pops `ctx` if it is on top of this thread's stack (a primary context itself
/// lives as long as the process). Errors: `hipErrorInvalidValue` (null),
/// `hipErrorInvalidContext` (not a context).
#[no_mangle]
pub extern "C" fn hipCtxDestroy(ctx: hipCtx_t) -> hipError_t {
    api(|| {
        let d = ctx_device(runtime()?, ctx)?;
        with_stack(|s| {
            if s.last() == Some(&d) {
                s.pop();
            }
        });
        Ok(())
    })
}

/// `hipCtxPushCurrent`: pushes `ctx` and makes its device current. Errors:
/// `hipErrorInvalidContext` (null or not a context).
#[no_mangle]
pub extern "C" fn hipCtxPushCurrent(ctx: hipCtx_t) -> hipError_t {
    api(|| {
        let d = ctx_device(runtime()?, ctx).map_err(|_| hipError_t::hipErrorInvalidContext)?;
        with_stack(|s| s.push(d));
        set_current_device(d);
        Ok(())
    })
}

/// `hipCtxPopCurrent`: pops this thread's top context into `*ctx` (if `ctx` is not null); the
/// new top's device becomes current. Errors: `hipErrorInvalidContext` (empty stack).
#[no_mangle]
pub extern "C" fn hipCtxPopCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    api(|| {
        runtime()?;
        let (top, next) = with_stack(|s| (s.pop(), s.last().copied()));
        let top = top.ok_or(hipError_t::hipErrorInvalidContext)?;
        if let Some(n) = next {
            set_current_device(n);
        }
        if !ctx.is_null() {
            write_out(ctx, ctx_handle(top))?;
        }
        Ok(())
    })
}

/// `hipCtxSetCurrent`: replaces this thread's top context with `ctx` and makes its device
/// current; null pops the top (clr). Errors: `hipErrorInvalidContext` (not a context).
#[no_mangle]
pub extern "C" fn hipCtxSetCurrent(ctx: hipCtx_t) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        if ctx.is_null() {
            with_stack(|s| s.pop());
            return Ok(());
        }
        let d = ctx_device(rt, ctx)?;
        with_stack(|s| {
            s.pop();
            s.push(d);
        });
        set_current_device(d);
        Ok(())
    })
}

/// `hipCtxGetDevice`: the current context's device, i.e. `hipGetDevice`. Errors:
/// `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipCtxGetDevice(device: *mut hipDevice_t) -> hipError_t {
    crate::api::device::hipGetDevice(device)
}

/// `hipCtxSynchronize`: waits for all work of the current context's device (CUDA's
/// `cuCtxSynchronize`; clr returns `hipErrorNotSupported`), then reports a VM fault as
/// `hipDeviceSynchronize` does.
#[no_mangle]
pub extern "C" fn hipCtxSynchronize() -> hipError_t {
    crate::api::device::hipDeviceSynchronize()
}

/// `hipCtxGetApiVersion`: not supported, as in clr. Errors: `hipErrorInvalidValue` (null
/// `apiVersion`), `hipErrorInvalidContext` (not a context), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipCtxGetApiVersion(ctx: hipCtx_t, apiVersion: *mut c_int) -> hipError_t {
    api(|| {
        check(!apiVersion.is_null())?;
        ctx_device(runtime()?, ctx)?;
        Err(hipError_t::hipErrorNotSupported)
    })
}

/// `hipDevicePrimaryCtxRelease`: primary contexts live as long as the process; this only checks
/// `dev`. Errors: `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxRelease(dev: hipDevice_t) -> hipError_t {
    api(|| runtime()?.device(dev).map(drop))
}

/// `hipDevicePrimaryCtxGetState`: `*flags` = 0 (clr) and `*active` = 1 once the device has a
/// stream (its null stream included), else 0; either pointer may be null. Errors:
/// `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxGetState(dev: hipDevice_t, flags: *mut c_uint, active: *mut c_int) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        let d = rt.device(dev)?.ordinal;
        if !flags.is_null() {
            write_out(flags, 0)?;
        }
        if !active.is_null() {
            let ds = &rt.streams[d];
            let used = ds.null.lock().is_some() || ds.streams.lock().iter().any(|w| w.strong_count() > 0);
            write_out(active, used as c_int)?;
        }
        Ok(())
    })
}

/// `hipDevicePrimaryCtxSetFlags`: a primary context is always active, so its flags cannot
/// change (clr). Errors: `hipErrorInvalidDevice`, else `hipErrorContextAlreadyInUse`.
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxSetFlags(dev: hipDevice_t, flags: c_uint) -> hipError_t {
    let _ = flags;
    api(|| {
        runtime()?.device(dev)?;
        Err(hipError_t::hipErrorContextAlreadyInUse)
    })
}

/// `hipDevicePrimaryCtxReset`: checks `dev` and returns, as clr does (use `hipDeviceReset` to
/// release a device's resources). Errors: `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxReset(dev: hipDevice_t) -> hipError_t {
    api(|| runtime()?.device(dev).map(drop))
}

/// `hipCtxGetCacheConfig(hipFuncCache_t* cacheConfig)`: the current context's cache preference,
/// i.e. its device's (`hipDeviceGetCacheConfig`; CUDA's `cuCtxGetCacheConfig`: a context is its
/// device here, as for [`hipCtxSynchronize`]; clr answers `hipErrorNotSupported`). Errors:
/// `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipCtxGetCacheConfig(cacheConfig: *mut hipFuncCache_t) -> hipError_t {
    crate::api::device::hipDeviceGetCacheConfig(cacheConfig)
}

/// `hipCtxSetCacheConfig(hipFuncCache_t cacheConfig)`: sets the current context's (its device's)
/// preference, as `hipDeviceSetCacheConfig`: stored, no effect on AMD GPUs (CUDA's
/// `cuCtxSetCacheConfig`; clr validates the value, then answers `hipErrorNotSupported`).
/// Errors: `hipErrorInvalidValue` (not a `hipFuncCache_t`, as clr).
#[no_mangle]
pub extern "C" fn hipCtxSetCacheConfig(cacheConfig: hipFuncCache_t) -> hipError_t {
    crate::api::device::hipDeviceSetCacheConfig(cacheConfig)
}

/// `hipCtxGetSharedMemConfig(hipSharedMemConfig* pConfig)`: `hipSharedMemBankSizeFourByte`, as
/// `hipDeviceGetSharedMemConfig` (clr). Errors: `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipCtxGetSharedMemConfig(pConfig: *mut hipSharedMemConfig) -> hipError_t {
    crate::api::device::hipDeviceGetSharedMemConfig(pConfig)
}

/// `hipCtxSetSharedMemConfig(hipSharedMemConfig config)`: accepted, no effect (LDS banks are 4
/// bytes wide), as `hipDeviceSetSharedMemConfig` (CUDA's `cuCtxSetSharedMemConfig`; clr answers
/// `hipErrorNotSupported`). Errors: `hipErrorInvalidValue` (not a `hipSharedMemConfig`).
#[no_mangle]
pub extern "C" fn hipCtxSetSharedMemConfig(config: hipSharedMemConfig) -> hipError_t {
    crate::api::device::hipDeviceSetSharedMemConfig(config)
}

/// `hipCtxGetFlags(unsigned int* flags)`: the current context's flags, i.e. its device's: what
/// `hipCtxCreate` or `hipSetDeviceFlags` set (`hipGetDeviceFlags`; CUDA's `cuCtxGetFlags`; clr
/// answers `hipErrorNotSupported`). Errors: `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipCtxGetFlags(flags: *mut c_uint) -> hipError_t {
    crate::api::device::hipGetDeviceFlags(flags)
}
