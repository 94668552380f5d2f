//! Tracing and profiling hooks: `hipApiName`, `hipGetCmdName`, `hipProfilerStart`/`Stop`, the
//! roctracer hook `hipRegisterTracerCallback`, and HIP 5.2's callback and activity entry points
//! (clr `hip_intercept.cpp`, `hip_activity.cpp`, `hip_profile.cpp`; the callback table of
//! `hip_prof_api.h` before ROCm 5.4).
//!
//! hipkfd has no tracing layer: it never calls an API callback, never produces an activity
//! record and never reports to a tracer. The names are real (AMD's tables); registering a
//! callback says `hipErrorNotSupported`, and the `void` hooks do nothing.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::api_id::{api_name, HIP_API_ID_FIRST, HIP_API_ID_LAST};
use crate::abi::types::hipError_t;
use crate::api::common::{api, check};
use crate::core::runtime::runtime;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `const char* hipApiName(uint32_t id)`: the name of the API function with tracing id `id`
/// (`hip_api_id_t`, src/abi/api_id.rs), e.g. `"hipMalloc"` for 108; `"unknown"` for an id that
/// names none (0, reserved, beyond the last), as clr's `hip_api_name`. Static; never null.
#[no_mangle]
pub extern "C" fn hipApiName(id: u32) -> *const c_char {
    api_name(id).unwrap_or(c"unknown").as_ptr()
}

/// rocclr's command kinds (`cl_command_type`: OpenCL's `CL_COMMAND_*` values and rocclr's stream
/// wait/write) and the names `getOclCommandKindString` gives them.
const COMMAND_NAMES: &[(c_uint, &CStr)] = &[
    (0, c"InternalMarker"),
    (0x11FE, c"Marker"),
    (0x11F0, c"KernelExecution"),
    (0x11F3, c"CopyDeviceToHost"),
    (0x11F4, c"CopyHostToDevice"),
    (0x11F5, c"CopyDeviceToDevice"),
    (0x1201, c"CopyDeviceToHost2D"),
    (0x1202, c"CopyHostToDevice2D"),
    (0x1203, c"CopyDeviceToDevice2D"),
    (0x1207, c"FillBuffer"),
    (0x11F1, c"Task"),
    (0x11F2, c"NativeKernel"),
    (0x11F6, c"ReadImage"),
    (0x11F7, c"WriteImage"),
    (0x11F8, c"CopyImage"),
    (0x11F9, c"CopyImageToBuffer"),
    (0x11FA, c"CopyBufferToImage"),
    (0x11FB, c"MapBuffer"),
    (0x11FC, c"MapImage"),
    (0x11FD, c"UnmapMemObject"),
    (0x11FF, c"AcquireGLObjects"),
    (0x1200, c"ReleaseGLObjects"),
    (0x1204, c"User"),
    (0x1205, c"Barrier"),
    (0x1206, c"MigrateMemObjects"),
    (0x1208, c"FillImage"),
    (0x1209, c"SvmFree"),
    (0x120A, c"SvmMemcpy"),
    (0x120B, c"SvmMemFill"),
    (0x120C, c"SvmMap"),
    (0x120D, c"SvmUnmap"),
    (0x4501, c"StreamWait"),
    (0x4502, c"StreamWrite"),
];

/// `const char* hipGetCmdName(unsigned op)`: the name of a rocclr command kind, the `op` of an
/// activity record (`0x11F0` → `"KernelExecution"`, `0x11F5` → `"CopyDeviceToDevice"`, ...;
/// clr `getOclCommandKindString`), `"Unknown command kind"` for any other value. Static; never
/// null. (Not in `hip_runtime_api.h`: `hip/amd_detail/hip_runtime_prof.h`.)
#[no_mangle]
pub extern "C" fn hipGetCmdName(op: c_uint) -> *const c_char {
    COMMAND_NAMES.iter().find(|(k, _)| *k == op).map_or(c"Unknown command kind", |(_, n)| n).as_ptr()
}

/// `hipError_t hipProfilerStart(void)`: starts recording for an attached profiler. Nothing
/// records here; the call succeeds once the runtime is up (CUDA's `cudaProfilerStart` without a
/// profiler; clr: `hipSuccess`). Errors: the runtime's (`hipErrorNoDevice`, ...).
#[no_mangle]
pub extern "C" fn hipProfilerStart() -> hipError_t {
    api(|| runtime().map(drop))
}

/// `hipError_t hipProfilerStop(void)`: as [`hipProfilerStart`].
#[no_mangle]
pub extern "C" fn hipProfilerStop() -> hipError_t {
    api(|| runtime().map(drop))
}

/// `void hipRegisterTracerCallback(int (*function)(activity_domain_t, uint32_t, void*))`: how
/// roctracer asks clr to report API calls and activity. hipkfd reports nothing, so the function
/// is never called; the call does nothing.
#[no_mangle]
pub extern "C" fn hipRegisterTracerCallback(
    function: Option<unsafe extern "C" fn(domain: u32, operation_id: u32, data: *mut c_void) -> c_int>,
) {
    let _ = function;
}

/// HIP 5.2's check of a callback id (`api_callbacks_table_t`): `HIP_API_ID_FIRST` ..=
/// `HIP_API_ID_LAST`. Errors: `hipErrorInvalidValue`.
fn callback_id(id: u32) -> Result<(), hipError_t> {
    check((HIP_API_ID_FIRST..=HIP_API_ID_LAST).contains(&id))
}

/// `hipError_t hipRegisterApiCallback(uint32_t id, void* fun, void* arg)` (HIP 5.2; ROCm 5.4
/// moved API callbacks into roctracer): would call `fun` around each call of API `id`. Errors:
/// `hipErrorInvalidValue` (not an API id), else `hipErrorNotSupported`: no API callbacks here.
#[no_mangle]
pub extern "C" fn hipRegisterApiCallback(id: u32, fun: *mut c_void, arg: *mut c_void) -> hipError_t {
    let _ = (fun, arg);
    api(|| {
        callback_id(id)?;
        Err(hipError_t::hipErrorNotSupported)
    })
}

/// `hipError_t hipRemoveApiCallback(uint32_t id)` (HIP 5.2): no callback is ever registered, so
/// there is none to remove and the call succeeds. Errors: `hipErrorInvalidValue` (not an API
/// id).
#[no_mangle]
pub extern "C" fn hipRemoveApiCallback(id: u32) -> hipError_t {
    api(|| callback_id(id))
}

/// `hipError_t hipRegisterActivityCallback(uint32_t id, void* fun, void* arg)` (HIP 5.2): would
/// report the activity of API `id` to `fun`. Errors: `hipErrorInvalidValue` (not an API id),
/// else `hipErrorNotSupported`: no activity records here.
#[no_mangle]
pub extern "C" fn hipRegisterActivityCallback(id: u32, fun: *mut c_void, arg: *mut c_void) -> hipError_t {
    let _ = (fun, arg);
    api(|| {
        callback_id(id)?;
        Err(hipError_t::hipErrorNotSupported)
    })
}

/// `hipError_t hipRemoveActivityCallback(uint32_t id)` (HIP 5.2): as [`hipRemoveApiCallback`].
#[no_mangle]
pub extern "C" fn hipRemoveActivityCallback(id: u32) -> hipError_t {
    api(|| callback_id(id))
}

/// `void hipInitActivityCallback(void* id_callback, void* op_callback, void* arg)` (HIP 5.2,
/// `hip_runtime_prof.h`): would set the functions activity records go to. None is ever
/// produced, so the call does nothing.
#[no_mangle]
pub extern "C" fn hipInitActivityCallback(id_callback: *mut c_void, op_callback: *mut c_void, arg: *mut c_void) {
    let _ = (id_callback, op_callback, arg);
}

/// `bool hipEnableActivityCallback(uint32_t op, bool enable)` (HIP 5.2): turns activity records
/// of operation kind `op` (`HipVdiOpId`: 0 dispatch, 1 copy, 2 barrier) on or off; true when
/// done. Turning one on fails (false): no activity records here; turning one off succeeds.
/// False for another `op`, as HIP 5.2. (`enable` is read as a byte, non-zero = true.)
#[no_mangle]
pub extern "C" fn hipEnableActivityCallback(op: u32, enable: u8) -> bool {
    op < 3 && enable == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(p: *const c_char) -> &'static str {
        // SAFETY: both functions return pointers to static NUL-terminated strings.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(s(hipApiName(108)), "hipMalloc");
        assert_eq!(s(hipApiName(0)), "unknown");
        assert_eq!(s(hipApiName(50)), "unknown");
        assert_eq!(s(hipApiName(100_000)), "unknown");
        assert_eq!(s(hipGetCmdName(0x11F0)), "KernelExecution");
        assert_eq!(s(hipGetCmdName(0)), "InternalMarker");
        assert_eq!(s(hipGetCmdName(0x4502)), "StreamWrite");
        assert_eq!(s(hipGetCmdName(0x11EF)), "Unknown command kind");
        let kinds: std::collections::HashSet<_> = COMMAND_NAMES.iter().map(|(k, _)| k).collect();
        assert_eq!(kinds.len(), COMMAND_NAMES.len());
    }

    #[test]
    fn activity_switches() {
        for op in 0..3 {
            assert!(hipEnableActivityCallback(op, 0));
            assert!(!hipEnableActivityCallback(op, 1));
        }
        assert!(!hipEnableActivityCallback(3, 0));
    }
}
