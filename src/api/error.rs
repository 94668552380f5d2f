//! Error reporting: `hipGetLastError`, `hipExtGetLastError`, `hipPeekAtLastError`, `hipGetErrorName`,
//! `hipGetErrorString`, `hipDrvGetErrorName`, `hipDrvGetErrorString`, and the per-thread
//! last-error slot every API records into through [`set_last_error`].
//!
//! Semantics follow clr (`hipamd/src/hip_error.cpp`, `hip_internal.hpp` `HIP_RETURN` /
//! `HIP_UPDATE_ERROR_STATE`, rocm-systems 2025-26): the slot is thread-local and sticky; an API
//! that fails with anything but `hipErrorNotReady` overwrites it, successes leave it alone;
//! `hipGetLastError` returns it and resets it to `hipSuccess`, `hipPeekAtLastError` only
//! returns it. Name and description strings are clr's, byte for byte, including its fallbacks
//! (codes without a case → `"hipErrorUnknown"` / `"unknown error"`).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.
#![allow(non_snake_case)]

use std::cell::Cell;
use std::ffi::{c_char, CStr};

use crate::abi::types::hipError_t;

thread_local! {
    static LAST_ERROR: Cell<hipError_t> = const { Cell::new(hipError_t::hipSuccess) };
}

/// Records `e` as this thread's last error unless it is `hipSuccess` or `hipErrorNotReady`
/// (clr `HIP_UPDATE_ERROR_STATE`), and returns `e`, so an API can end with
/// `return set_last_error(err);`.
pub(crate) fn set_last_error(e: hipError_t) -> hipError_t {
    if e != hipError_t::hipSuccess && e != hipError_t::hipErrorNotReady {
        LAST_ERROR.with(|c| c.set(e));
    }
    e
}

/// This thread's last recorded error, without resetting it.
pub(crate) fn peek_last_error() -> hipError_t {
    LAST_ERROR.with(|c| c.get())
}

/// `hipError_t hipGetLastError(void)`: returns the last error recorded by a HIP call on this
/// thread and resets it to `hipSuccess`.
#[no_mangle]
pub extern "C" fn hipGetLastError() -> hipError_t {
    LAST_ERROR.with(|c| c.replace(hipError_t::hipSuccess))
}

/// `hipError_t hipExtGetLastError(void)`: as [`hipGetLastError`] (clr `hip_error.cpp`): returns
/// this thread's last error and resets it to `hipSuccess`.
#[no_mangle]
pub extern "C" fn hipExtGetLastError() -> hipError_t {
    hipGetLastError()
}

/// `hipError_t hipPeekAtLastError(void)`: returns the last error recorded by a HIP call on this
/// thread; does not reset it.
#[no_mangle]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    peek_last_error()
}

/// `const char* hipGetErrorName(hipError_t hip_error)`: the enumerator name, e.g.
/// `"hipErrorInvalidValue"`; `"hipErrorUnknown"` for codes clr has no case for. The string is
/// static; never null.
#[no_mangle]
pub extern "C" fn hipGetErrorName(hip_error: hipError_t) -> *const c_char {
    error_name(hip_error).as_ptr()
}

/// `const char* hipGetErrorString(hipError_t hipError)`: the description, e.g.
/// `"invalid argument"`; `"unknown error"` for codes clr has no case for. Static; never null.
#[no_mangle]
pub extern "C" fn hipGetErrorString(hipError: hipError_t) -> *const c_char {
    error_string(hipError).as_ptr()
}

/// `hipError_t hipDrvGetErrorName(hipError_t hipError, const char** errorString)`: stores the
/// name; returns `hipErrorInvalidValue` if `errorString` is null or the code is unknown (the
/// name `"hipErrorUnknown"` is still stored), as clr does.
///
/// # Safety
/// `errorString` is null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hipDrvGetErrorName(hipError: hipError_t, errorString: *mut *const c_char) -> hipError_t {
    if errorString.is_null() {
        return hipError_t::hipErrorInvalidValue;
    }
    let s = error_name(hipError);
    // SAFETY: non-null and, per the contract, valid for a pointer write.
    unsafe { *errorString = s.as_ptr() };
    if hipError == hipError_t::hipErrorUnknown || s != c"hipErrorUnknown" {
        hipError_t::hipSuccess
    } else {
        hipError_t::hipErrorInvalidValue
    }
}

/// `hipError_t hipDrvGetErrorString(hipError_t hipError, const char** errorString)`: stores
/// the description; `hipErrorInvalidValue` if `errorString` is null or the code is unknown.
///
/// # Safety
/// `errorString` is null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn hipDrvGetErrorString(hipError: hipError_t, errorString: *mut *const c_char) -> hipError_t {
    if errorString.is_null() {
        return hipError_t::hipErrorInvalidValue;
    }
    let s = error_string(hipError);
    // SAFETY: non-null and, per the contract, valid for a pointer write.
    unsafe { *errorString = s.as_ptr() };
    if hipError == hipError_t::hipErrorUnknown || s != c"unknown error" {
        hipError_t::hipSuccess
    } else {
        hipError_t::hipErrorInvalidValue
    }
}

/// clr `ihipGetErrorName`: the primary enumerator name. clr has no case for 914, 915, 916 and
/// 1054, so they read `"hipErrorUnknown"` there and here.
pub fn error_name(e: hipError_t) -> &'static CStr {
    use hipError_t as E;
    match e {
        E::hipSuccess => c"hipSuccess",
        E::hipErrorInvalidValue => c"hipErrorInvalidValue",
        E::hipErrorOutOfMemory => c"hipErrorOutOfMemory",
        E::hipErrorNotInitialized => c"hipErrorNotInitialized",
        E::hipErrorDeinitialized => c"hipErrorDeinitialized",
        E::hipErrorProfilerDisabled => c"hipErrorProfilerDisabled",
        E::hipErrorProfilerNotInitialized => c"hipErrorProfilerNotInitialized",
        E::hipErrorProfilerAlreadyStarted => c"hipErrorProfilerAlreadyStarted",
        E::hipErrorProfilerAlreadyStopped => c"hipErrorProfilerAlreadyStopped",
        E::hipErrorInvalidConfiguration => c"hipErrorInvalidConfiguration",
        E::hipErrorInvalidSymbol => c"hipErrorInvalidSymbol",
        E::hipErrorInvalidDevicePointer => c"hipErrorInvalidDevicePointer",
        E::hipErrorInvalidMemcpyDirection => c"hipErrorInvalidMemcpyDirection",
        E::hipErrorInsufficientDriver => c"hipErrorInsufficientDriver",
        E::hipErrorMissingConfiguration => c"hipErrorMissingConfiguration",
        E::hipErrorPriorLaunchFailure => c"hipErrorPriorLaunchFailure",
        E::hipErrorInvalidDeviceFunction => c"hipErrorInvalidDeviceFunction",
        E::hipErrorNoDevice => c"hipErrorNoDevice",
        E::hipErrorInvalidDevice => c"hipErrorInvalidDevice",
        E::hipErrorInvalidPitchValue => c"hipErrorInvalidPitchValue",
        E::hipErrorInvalidImage => c"hipErrorInvalidImage",
        E::hipErrorInvalidContext => c"hipErrorInvalidContext",
        E::hipErrorContextAlreadyCurrent => c"hipErrorContextAlreadyCurrent",
        E::hipErrorMapFailed => c"hipErrorMapFailed",
        E::hipErrorUnmapFailed => c"hipErrorUnmapFailed",
        E::hipErrorArrayIsMapped => c"hipErrorArrayIsMapped",
        E::hipErrorAlreadyMapped => c"hipErrorAlreadyMapped",
        E::hipErrorNoBinaryForGpu => c"hipErrorNoBinaryForGpu",
        E::hipErrorAlreadyAcquired => c"hipErrorAlreadyAcquired",
        E::hipErrorNotMapped => c"hipErrorNotMapped",
        E::hipErrorNotMappedAsArray => c"hipErrorNotMappedAsArray",
        E::hipErrorNotMappedAsPointer => c"hipErrorNotMappedAsPointer",
        E::hipErrorECCNotCorrectable => c"hipErrorECCNotCorrectable",
        E::hipErrorUnsupportedLimit => c"hipErrorUnsupportedLimit",
        E::hipErrorContextAlreadyInUse => c"hipErrorContextAlreadyInUse",
        E::hipErrorPeerAccessUnsupported => c"hipErrorPeerAccessUnsupported",
        E::hipErrorInvalidKernelFile => c"hipErrorInvalidKernelFile",
        E::hipErrorInvalidGraphicsContext => c"hipErrorInvalidGraphicsContext",
        E::hipErrorInvalidSource => c"hipErrorInvalidSource",
        E::hipErrorFileNotFound => c"hipErrorFileNotFound",
        E::hipErrorSharedObjectSymbolNotFound => c"hipErrorSharedObjectSymbolNotFound",
        E::hipErrorSharedObjectInitFailed => c"hipErrorSharedObjectInitFailed",
        E::hipErrorOperatingSystem => c"hipErrorOperatingSystem",
        E::hipErrorInvalidHandle => c"hipErrorInvalidHandle",
        E::hipErrorIllegalState => c"hipErrorIllegalState",
        E::hipErrorNotFound => c"hipErrorNotFound",
        E::hipErrorNotReady => c"hipErrorNotReady",
        E::hipErrorIllegalAddress => c"hipErrorIllegalAddress",
        E::hipErrorLaunchOutOfResources => c"hipErrorLaunchOutOfResources",
        E::hipErrorLaunchTimeOut => c"hipErrorLaunchTimeOut",
        E::hipErrorPeerAccessAlreadyEnabled => c"hipErrorPeerAccessAlreadyEnabled",
        E::hipErrorPeerAccessNotEnabled => c"hipErrorPeerAccessNotEnabled",
        E::hipErrorSetOnActiveProcess => c"hipErrorSetOnActiveProcess",
        E::hipErrorContextIsDestroyed => c"hipErrorContextIsDestroyed",
        E::hipErrorAssert => c"hipErrorAssert",
        E::hipErrorHostMemoryAlreadyRegistered => c"hipErrorHostMemoryAlreadyRegistered",
        E::hipErrorHostMemoryNotRegistered => c"hipErrorHostMemoryNotRegistered",
        E::hipErrorLaunchFailure => c"hipErrorLaunchFailure",
        E::hipErrorNotSupported => c"hipErrorNotSupported",
        E::hipErrorUnknown => c"hipErrorUnknown",
        E::hipErrorRuntimeMemory => c"hipErrorRuntimeMemory",
        E::hipErrorRuntimeOther => c"hipErrorRuntimeOther",
        E::hipErrorCooperativeLaunchTooLarge => c"hipErrorCooperativeLaunchTooLarge",
        E::hipErrorStreamCaptureUnsupported => c"hipErrorStreamCaptureUnsupported",
        E::hipErrorStreamCaptureInvalidated => c"hipErrorStreamCaptureInvalidated",
        E::hipErrorStreamCaptureMerge => c"hipErrorStreamCaptureMerge",
        E::hipErrorStreamCaptureUnmatched => c"hipErrorStreamCaptureUnmatched",
        E::hipErrorStreamCaptureUnjoined => c"hipErrorStreamCaptureUnjoined",
        E::hipErrorStreamCaptureIsolation => c"hipErrorStreamCaptureIsolation",
        E::hipErrorStreamCaptureImplicit => c"hipErrorStreamCaptureImplicit",
        E::hipErrorCapturedEvent => c"hipErrorCapturedEvent",
        E::hipErrorStreamCaptureWrongThread => c"hipErrorStreamCaptureWrongThread",
        E::hipErrorGraphExecUpdateFailure => c"hipErrorGraphExecUpdateFailure",
        E::hipErrorInvalidChannelDescriptor => c"hipErrorInvalidChannelDescriptor",
        E::hipErrorInvalidTexture => c"hipErrorInvalidTexture",
        E::hipErrorTbd => c"hipErrorTbd",
        _ => c"hipErrorUnknown",
    }
}

/// clr `ihipGetErrorString`: the human description (CUDA's wording where CUDA has the error).
pub fn error_string(e: hipError_t) -> &'static CStr {
    use hipError_t as E;
    match e {
        E::hipSuccess => c"no error",
        E::hipErrorInvalidValue => c"invalid argument",
        E::hipErrorOutOfMemory => c"out of memory",
        E::hipErrorNotInitialized => c"initialization error",
        E::hipErrorDeinitialized => c"driver shutting down",
        E::hipErrorProfilerDisabled => c"profiler disabled while using external profiling tool",
        E::hipErrorProfilerNotInitialized => c"profiler is not initialized",
        E::hipErrorProfilerAlreadyStarted => c"profiler already started",
        E::hipErrorProfilerAlreadyStopped => c"profiler already stopped",
        E::hipErrorInvalidConfiguration => c"invalid configuration argument",
        E::hipErrorInvalidPitchValue => c"invalid pitch argument",
        E::hipErrorInvalidSymbol => c"invalid device symbol",
        E::hipErrorInvalidDevicePointer => c"invalid device pointer",
        E::hipErrorInvalidMemcpyDirection => c"invalid copy direction for memcpy",
        E::hipErrorInsufficientDriver => c"driver version is insufficient for runtime version",
        E::hipErrorMissingConfiguration => c"__global__ function call is not configured",
        E::hipErrorPriorLaunchFailure => c"unspecified launch failure in prior launch",
        E::hipErrorInvalidDeviceFunction => c"invalid device function",
        E::hipErrorNoDevice => c"no ROCm-capable device is detected",
        E::hipErrorInvalidDevice => c"invalid device ordinal",
        E::hipErrorInvalidImage => c"device kernel image is invalid",
        E::hipErrorInvalidContext => c"invalid device context",
        E::hipErrorContextAlreadyCurrent => c"context is already current context",
        E::hipErrorMapFailed => c"mapping of buffer object failed",
        E::hipErrorUnmapFailed => c"unmapping of buffer object failed",
        E::hipErrorArrayIsMapped => c"array is mapped",
        E::hipErrorAlreadyMapped => c"resource already mapped",
        E::hipErrorNoBinaryForGpu => c"no kernel image is available for execution on the device",
        E::hipErrorAlreadyAcquired => c"resource already acquired",
        E::hipErrorNotMapped => c"resource not mapped",
        E::hipErrorNotMappedAsArray => c"resource not mapped as array",
        E::hipErrorNotMappedAsPointer => c"resource not mapped as pointer",
        E::hipErrorECCNotCorrectable => c"uncorrectable ECC error encountered",
        E::hipErrorUnsupportedLimit => c"limit is not supported on this architecture",
        E::hipErrorContextAlreadyInUse => {
            c"exclusive-thread device already in use by a different thread"
        }
        E::hipErrorPeerAccessUnsupported => {
            c"peer access is not supported between these two devices"
        }
        E::hipErrorInvalidKernelFile => c"invalid kernel file",
        E::hipErrorInvalidGraphicsContext => c"invalid OpenGL or DirectX context",
        E::hipErrorInvalidSource => c"device kernel image is invalid",
        E::hipErrorFileNotFound => c"file not found",
        E::hipErrorSharedObjectSymbolNotFound => c"shared object symbol not found",
        E::hipErrorSharedObjectInitFailed => c"shared object initialization failed",
        E::hipErrorOperatingSystem => c"OS call failed or operation not supported on this OS",
        E::hipErrorInvalidHandle => c"invalid resource handle",
        E::hipErrorIllegalState => c"the operation cannot be performed in the present state",
        E::hipErrorNotFound => c"named symbol not found",
        E::hipErrorNotReady => c"device not ready",
        E::hipErrorIllegalAddress => c"an illegal memory access was encountered",
        E::hipErrorLaunchOutOfResources => c"too many resources requested for launch",
        E::hipErrorLaunchTimeOut => c"the launch timed out and was terminated",
        E::hipErrorPeerAccessAlreadyEnabled => c"peer access is already enabled",
        E::hipErrorPeerAccessNotEnabled => c"peer access has not been enabled",
        E::hipErrorSetOnActiveProcess => c"cannot set while device is active in this process",
        E::hipErrorContextIsDestroyed => c"context is destroyed",
        E::hipErrorAssert => c"device-side assert triggered",
        E::hipErrorHostMemoryAlreadyRegistered => {
            c"part or all of the requested memory range is already mapped"
        }
        E::hipErrorHostMemoryNotRegistered => {
            c"pointer does not correspond to a registered memory region"
        }
        E::hipErrorLaunchFailure => c"unspecified launch failure",
        E::hipErrorCooperativeLaunchTooLarge => c"too many blocks in cooperative launch",
        E::hipErrorNotSupported => c"operation not supported",
        E::hipErrorStreamCaptureUnsupported => c"operation not permitted when stream is capturing",
        E::hipErrorStreamCaptureInvalidated => {
            c"operation failed due to a previous error during capture"
        }
        E::hipErrorStreamCaptureMerge => {
            c"operation would result in a merge of separate capture sequences"
        }
        E::hipErrorStreamCaptureUnmatched => {
            c"capture was not ended in the same stream as it began"
        }
        E::hipErrorStreamCaptureUnjoined => c"capturing stream has unjoined work",
        E::hipErrorStreamCaptureIsolation => {
            c"dependency created on uncaptured work in another stream"
        }
        E::hipErrorStreamCaptureImplicit => {
            c"operation would make the legacy stream depend on a capturing blocking stream"
        }
        E::hipErrorCapturedEvent => {
            c"operation not permitted on an event last recorded in a capturing stream"
        }
        E::hipErrorStreamCaptureWrongThread => {
            c"attempt to terminate a thread-local capture sequence from another thread"
        }
        E::hipErrorGraphExecUpdateFailure => {
            c"the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"
        }
        E::hipErrorInvalidChannelDescriptor => {
            c"invalid resource description of texture passed to the api"
        }
        E::hipErrorInvalidTexture => c"invalid texture object passed to the api",
        E::hipErrorRuntimeMemory => c"runtime memory call returned error",
        E::hipErrorRuntimeOther => c"runtime call other than memory returned error",
        E::hipErrorInvalidClusterSize => {
            c"a kernel launch error has occurred due to cluster misconfiguration"
        }
        _ => c"unknown error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(e: hipError_t) -> &'static str {
        // SAFETY: hipGetErrorName returns a pointer to a static NUL-terminated string.
        unsafe { CStr::from_ptr(hipGetErrorName(e)) }.to_str().unwrap()
    }
    fn desc(e: hipError_t) -> &'static str {
        // SAFETY: hipGetErrorString returns a pointer to a static NUL-terminated string.
        unsafe { CStr::from_ptr(hipGetErrorString(e)) }.to_str().unwrap()
    }

    #[test]
    fn last_error_is_sticky_per_thread() {
        assert_eq!(hipGetLastError(), hipError_t::hipSuccess);
        assert_eq!(set_last_error(hipError_t::hipErrorInvalidValue), hipError_t::hipErrorInvalidValue);
        // Successes and NotReady do not overwrite the sticky error.
        assert_eq!(set_last_error(hipError_t::hipSuccess), hipError_t::hipSuccess);
        assert_eq!(set_last_error(hipError_t::hipErrorNotReady), hipError_t::hipErrorNotReady);
        assert_eq!(hipPeekAtLastError(), hipError_t::hipErrorInvalidValue);
        assert_eq!(hipPeekAtLastError(), hipError_t::hipErrorInvalidValue);
        // Another thread has its own slot.
        std::thread::spawn(|| {
            assert_eq!(hipPeekAtLastError(), hipError_t::hipSuccess);
            set_last_error(hipError_t::hipErrorInvalidDevice);
            assert_eq!(hipGetLastError(), hipError_t::hipErrorInvalidDevice);
        })
        .join()
        .unwrap();
        set_last_error(hipError_t::hipErrorNoDevice);
        assert_eq!(hipGetLastError(), hipError_t::hipErrorNoDevice);
        assert_eq!(hipGetLastError(), hipError_t::hipSuccess);
        assert_eq!(hipPeekAtLastError(), hipError_t::hipSuccess);
    }

    #[test]
    fn names_and_strings_match_clr() {
        assert_eq!(name(hipError_t::hipSuccess), "hipSuccess");
        assert_eq!(desc(hipError_t::hipSuccess), "no error");
        assert_eq!(name(hipError_t::hipErrorMemoryAllocation), "hipErrorOutOfMemory");
        assert_eq!(desc(hipError_t::hipErrorInvalidValue), "invalid argument");
        assert_eq!(name(hipError_t::hipErrorInvalidResourceHandle), "hipErrorInvalidHandle");
        assert_eq!(desc(hipError_t::hipErrorInvalidHandle), "invalid resource handle");
        assert_eq!(desc(hipError_t::hipErrorNoDevice), "no ROCm-capable device is detected");
        assert_eq!(desc(hipError_t::hipErrorNotReady), "device not ready");
        assert_eq!(name(hipError_t::hipErrorTbd), "hipErrorTbd");
        assert_eq!(desc(hipError_t::hipErrorTbd), "unknown error");
        // Unknown codes (and the codes clr has no case for) fall back.
        for e in [hipError_t(-1), hipError_t(12345), hipError_t::hipErrorStreamDetached] {
            assert_eq!(name(e), "hipErrorUnknown");
            assert_eq!(desc(e), "unknown error");
        }
        assert_eq!(name(hipError_t::hipErrorInvalidClusterSize), "hipErrorUnknown");
        assert_ne!(desc(hipError_t::hipErrorInvalidClusterSize), "unknown error");
    }

    #[test]
    fn every_named_code_has_its_own_name() {
        // Each primary enumerator clr knows maps back to exactly its own spelling.
        let unnamed = [914, 915, 916, 1054];
        for (n, v) in hipError_t::ENUMERATORS {
            if v.name() != Some(*n) || unnamed.contains(&v.0) {
                continue; // alias spelling, or a code clr has no case for
            }
            assert_eq!(name(*v), *n);
        }
    }

    #[test]
    fn drv_variants() {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: &mut p is valid for a pointer write.
        let r = unsafe { hipDrvGetErrorName(hipError_t::hipErrorNotReady, &mut p) };
        assert_eq!(r, hipError_t::hipSuccess);
        // SAFETY: p points to a static C string.
        assert_eq!(unsafe { CStr::from_ptr(p) }, c"hipErrorNotReady");
        // SAFETY: as above.
        let r = unsafe { hipDrvGetErrorString(hipError_t(4242), &mut p) };
        assert_eq!(r, hipError_t::hipErrorInvalidValue);
        // SAFETY: p points to a static C string.
        assert_eq!(unsafe { CStr::from_ptr(p) }, c"unknown error");
        // SAFETY: null is allowed and rejected.
        let r = unsafe { hipDrvGetErrorName(hipError_t::hipSuccess, std::ptr::null_mut()) };
        assert_eq!(r, hipError_t::hipErrorInvalidValue);
    }
}
