//! hiprtc, HIP's runtime compilation (`hip/hiprtc.h`): the 11 calls that HIP 5.2's
//! libamdhip64.so.5 exports (`hip_4.2`), so programs built by Debian's hipcc find them in us, and
//! `hiprtcGetBitcode`/`hiprtcGetBitcodeSize` (`hip_5.3`). (ROCm 7 moved them to libhiprtc.so.7.)
//! The compile itself is in `crate::rtc`. Codes and checks follow clr
//! `hipamd/src/hiprtc/hiprtc.cpp`; where clr dereferences a null or stale handle, we return
//! `HIPRTC_ERROR_INVALID_PROGRAM` or `HIPRTC_ERROR_INVALID_INPUT` instead.
//! This file is the source of `include/hip/hiprtc.h` (tests/header.rs).
#![allow(non_camel_case_types)]

use crate::api::common;
use crate::api::types::{c_enum, render_enum};
use crate::rtc::Program;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

c_enum! {
    /// `hiprtcResult` (`hip/hiprtc.h`; `HIPRTC_ERROR_LINKING` as in ROCm 7).
    pub struct hiprtcResult {
        HIPRTC_SUCCESS = 0,
        HIPRTC_ERROR_OUT_OF_MEMORY = 1,
        HIPRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
        HIPRTC_ERROR_INVALID_INPUT = 3,
        HIPRTC_ERROR_INVALID_PROGRAM = 4,
        HIPRTC_ERROR_INVALID_OPTION = 5,
        HIPRTC_ERROR_COMPILATION = 6,
        HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
        HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8,
        HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9,
        HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10,
        HIPRTC_ERROR_INTERNAL_ERROR = 11,
        HIPRTC_ERROR_LINKING = 100,
    }
}

/// What `include/hip/hiprtc.h` declares before the functions: the `hiprtcResult` enum.
pub fn c_header_prelude() -> String {
    let mut s = String::from("\n");
    render_enum(&mut s, "hiprtcResult", "", hiprtcResult::ENUMERATORS);
    s
}

const HIPRTC_SUCCESS: hiprtcResult = hiprtcResult::HIPRTC_SUCCESS;
const HIPRTC_ERROR_INVALID_INPUT: hiprtcResult = hiprtcResult::HIPRTC_ERROR_INVALID_INPUT;
const HIPRTC_ERROR_INVALID_PROGRAM: hiprtcResult = hiprtcResult::HIPRTC_ERROR_INVALID_PROGRAM;
const HIPRTC_ERROR_INTERNAL_ERROR: hiprtcResult = hiprtcResult::HIPRTC_ERROR_INTERNAL_ERROR;

/// Opaque program object behind [`hiprtcProgram`] (`typedef struct _hiprtcProgram* hiprtcProgram;`).
pub struct _hiprtcProgram {
    _opaque: [u8; 0],
}

/// A program created by [`hiprtcCreateProgram`].
pub type hiprtcProgram = *mut _hiprtcProgram;

/// The live programs, by handle (the address of their `Arc`'s value, stable while registered).
fn programs() -> &'static Mutex<HashMap<usize, Arc<Mutex<Program>>>> {
    static P: OnceLock<Mutex<HashMap<usize, Arc<Mutex<Program>>>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

/// The program behind a handle. Errors: `HIPRTC_ERROR_INVALID_PROGRAM` for null or one not live.
fn program(prog: hiprtcProgram) -> Result<Arc<Mutex<Program>>, hiprtcResult> {
    programs().lock().get(&(prog as usize)).cloned().ok_or(HIPRTC_ERROR_INVALID_PROGRAM)
}

/// Runs an entry point's body; a panic becomes `HIPRTC_ERROR_INTERNAL_ERROR`.
fn rtc(f: impl FnOnce() -> Result<(), hiprtcResult>) -> hiprtcResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => HIPRTC_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => HIPRTC_ERROR_INTERNAL_ERROR,
    }
}

/// A C string argument ([`common::cstr_in`]). Errors: `HIPRTC_ERROR_INVALID_INPUT` when null.
fn string_in(p: *const c_char) -> Result<String, hiprtcResult> {
    common::cstr_in(p).map(|s| s.to_string_lossy().into_owned()).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)
}

/// Writes through an out-pointer ([`common::write_out`]). Errors: `HIPRTC_ERROR_INVALID_INPUT`
/// when null.
fn write_out<T>(p: *mut T, v: T) -> Result<(), hiprtcResult> {
    common::write_out(p, v).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)
}

/// Copies `bytes` to the caller's buffer. Errors: `HIPRTC_ERROR_INVALID_INPUT` when it is null.
fn copy_out(dst: *mut c_char, bytes: &[u8]) -> Result<(), hiprtcResult> {
    if dst.is_null() {
        return Err(HIPRTC_ERROR_INVALID_INPUT);
    }
    // SAFETY: the caller sized `dst` with the matching ...Size call (hiprtc API contract);
    // `bytes` is our own buffer, which cannot overlap theirs.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast::<u8>(), bytes.len()) };
    Ok(())
}

/// `const char* hiprtcGetErrorString(hiprtcResult result)`: the code's name
/// (`"HIPRTC_ERROR_COMPILATION"`); for a value that is no code, `"HIPRTC_ERROR unknown"` (clr
/// returns null there).
#[no_mangle]
pub extern "C" fn hiprtcGetErrorString(result: hiprtcResult) -> *const c_char {
    static NAMES: OnceLock<Vec<(hiprtcResult, std::ffi::CString)>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        hiprtcResult::ENUMERATORS.iter().map(|(n, v)| (*v, std::ffi::CString::new(*n).unwrap())).collect()
    });
    let s: &CStr = names.iter().find(|(v, _)| *v == result).map_or(c"HIPRTC_ERROR unknown", |(_, n)| n);
    s.as_ptr()
}

/// `hiprtcResult hiprtcVersion(int* major, int* minor)`: clr's 9.0. Errors:
/// `HIPRTC_ERROR_INVALID_INPUT` when either pointer is null.
#[no_mangle]
pub extern "C" fn hiprtcVersion(major: *mut c_int, minor: *mut c_int) -> hiprtcResult {
    rtc(|| {
        if major.is_null() || minor.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        write_out(major, 9)?;
        write_out(minor, 0)
    })
}

/// `hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name,
/// int numHeaders, const char** headers, const char** includeNames)`: a program of `src`, named
/// `name` in diagnostics (null or empty: `CompileSource`), with `numHeaders` headers that
/// `#include "includeNames[i]"` finds. No GPU is needed. Errors: `HIPRTC_ERROR_INVALID_PROGRAM`
/// when `prog` is null; `HIPRTC_ERROR_INVALID_INPUT` for a null or empty `src`, `numHeaders < 0`,
/// null arrays with `numHeaders > 0`, or a null, empty, absolute or `..` header.
#[no_mangle]
pub extern "C" fn hiprtcCreateProgram(
    prog: *mut hiprtcProgram,
    src: *const c_char,
    name: *const c_char,
    numHeaders: c_int,
    headers: *const *const c_char,
    includeNames: *const *const c_char,
) -> hiprtcResult {
    rtc(|| {
        if prog.is_null() {
            return Err(HIPRTC_ERROR_INVALID_PROGRAM);
        }
        let n = usize::try_from(numHeaders).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)?;
        if n > 0 && (headers.is_null() || includeNames.is_null()) {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let mut hdrs = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: both arrays are non-null and hold numHeaders pointers (hiprtc API contract).
            let (h, iname) = unsafe { (*headers.add(i), *includeNames.add(i)) };
            hdrs.push((string_in(iname)?, string_in(h)?));
        }
        let name = if name.is_null() { None } else { Some(string_in(name)?) };
        let p = Arc::new(Mutex::new(Program::new(string_in(src)?, name, hdrs)?));
        let handle = Arc::as_ptr(&p) as usize;
        programs().lock().insert(handle, p);
        write_out(prog, handle as hiprtcProgram)
    })
}

/// `hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog)`: frees the program; names from
/// [`hiprtcGetLoweredName`] die with it. Errors: `HIPRTC_ERROR_INVALID_INPUT` when `prog` is null,
/// `HIPRTC_ERROR_INVALID_PROGRAM` when `*prog` is not a live program.
#[no_mangle]
pub extern "C" fn hiprtcDestroyProgram(prog: *mut hiprtcProgram) -> hiprtcResult {
    rtc(|| {
        if prog.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: non-null pointer to the caller's handle (hiprtc API contract).
        let handle = unsafe { prog.read_unaligned() };
        programs().lock().remove(&(handle as usize)).map(drop).ok_or(HIPRTC_ERROR_INVALID_PROGRAM)
    })
}

/// `hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char* name_expression)`: asks
/// the next compile for the lowered name of a `__global__` function or `__device__` variable
/// (`"my_kernel<3, float>"`, `"&N::var"`). Errors: `HIPRTC_ERROR_INVALID_PROGRAM` for a bad
/// handle; `HIPRTC_ERROR_INVALID_INPUT` for a null or empty expression.
#[no_mangle]
pub extern "C" fn hiprtcAddNameExpression(prog: hiprtcProgram, name_expression: *const c_char) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let e = string_in(name_expression)?;
        let r = p.lock().add_name_expression(&e);
        r
    })
}

/// `hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions, const char** options)`:
/// compiles to a code object for `--offload-arch=gfx...` (or `--gpu-architecture=`), else for the
/// current device; options are clang's (`-D`, `-I`, `-std=`, `-O`, `-ffast-math`, ...). Takes
/// seconds: it runs the installed HIP clang (`crate::rtc`). Errors:
/// `HIPRTC_ERROR_INVALID_PROGRAM` for a bad handle; `HIPRTC_ERROR_INVALID_INPUT` for
/// `numOptions < 0` or a null option; `HIPRTC_ERROR_COMPILATION` when it fails (the log says
/// why). With `-fgpu-rdc` the result is LLVM bitcode ([`hiprtcGetBitcode`]), not a code object.
#[no_mangle]
pub extern "C" fn hiprtcCompileProgram(
    prog: hiprtcProgram,
    numOptions: c_int,
    options: *const *const c_char,
) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let n = usize::try_from(numOptions).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)?;
        if n > 0 && options.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: non-null array of numOptions C strings (hiprtc API contract).
        let opts = (0..n).map(|i| string_in(unsafe { *options.add(i) })).collect::<Result<Vec<_>, _>>()?;
        let default_arch = || {
            let (rt, d) = common::rt_dev().ok()?;
            Some(crate::api::device_props::arch_name(&rt.devices[d].props))
        };
        let r = p.lock().compile(&opts, default_arch);
        r
    })
}

/// `hiprtcResult hiprtcGetLoweredName(hiprtcProgram prog, const char* name_expression, const
/// char** lowered_name)`: the mangled name of an expression added before the last compile; the
/// string lives until [`hiprtcDestroyProgram`]. Errors: `HIPRTC_ERROR_INVALID_PROGRAM` for a bad
/// handle; `HIPRTC_ERROR_INVALID_INPUT` for a null argument; `HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID`
/// for an expression not added or not compiled yet (clr's code).
#[no_mangle]
pub extern "C" fn hiprtcGetLoweredName(
    prog: hiprtcProgram,
    name_expression: *const c_char,
    lowered_name: *mut *const c_char,
) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let e = string_in(name_expression)?;
        if lowered_name.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let ptr = p.lock().lowered_name(&e)?.as_ptr();
        write_out(lowered_name, ptr)
    })
}

/// `hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t* logSizeRet)`: bytes of the
/// last compile's log including its trailing NUL (NVRTC's rule; 1 when the log is empty).
/// Errors: `HIPRTC_ERROR_INVALID_PROGRAM`, `HIPRTC_ERROR_INVALID_INPUT` (null out-pointer).
#[no_mangle]
pub extern "C" fn hiprtcGetProgramLogSize(prog: hiprtcProgram, logSizeRet: *mut usize) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let n = p.lock().log().len() + 1;
        write_out(logSizeRet, n)
    })
}

/// `hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char* log)`: copies the log and its NUL
/// (`hiprtcGetProgramLogSize` bytes). Errors: `HIPRTC_ERROR_INVALID_PROGRAM`,
/// `HIPRTC_ERROR_INVALID_INPUT` (null buffer).
#[no_mangle]
pub extern "C" fn hiprtcGetProgramLog(prog: hiprtcProgram, log: *mut c_char) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let g = p.lock();
        let mut bytes = g.log().as_bytes().to_vec();
        bytes.push(0);
        copy_out(log, &bytes)
    })
}

/// `hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t* codeSizeRet)`: bytes of the code
/// object (0 before a successful compile). Errors: `HIPRTC_ERROR_INVALID_PROGRAM`,
/// `HIPRTC_ERROR_INVALID_INPUT` (null out-pointer).
#[no_mangle]
pub extern "C" fn hiprtcGetCodeSize(prog: hiprtcProgram, codeSizeRet: *mut usize) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let n = p.lock().code().len();
        write_out(codeSizeRet, n)
    })
}

/// `hiprtcResult hiprtcGetCode(hiprtcProgram prog, char* code)`: copies the code object, an
/// AMDGPU ELF for `hipModuleLoadData`. Errors: `HIPRTC_ERROR_INVALID_PROGRAM`,
/// `HIPRTC_ERROR_INVALID_INPUT` (null buffer).
#[no_mangle]
pub extern "C" fn hiprtcGetCode(prog: hiprtcProgram, code: *mut c_char) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        let g = p.lock();
        copy_out(code, g.code())
    })
}

/// `hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t* bitcode_size)`: bytes of the
/// LLVM bitcode of the last compile, which must have been with `-fgpu-rdc`. Errors:
/// `HIPRTC_ERROR_INVALID_INPUT` (null out-pointer); `HIPRTC_ERROR_INVALID_PROGRAM` for a bad
/// handle or when there is no bitcode (clr's code).
#[no_mangle]
pub extern "C" fn hiprtcGetBitcodeSize(prog: hiprtcProgram, bitcode_size: *mut usize) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        if bitcode_size.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let n = p.lock().bitcode().map(<[u8]>::len).ok_or(HIPRTC_ERROR_INVALID_PROGRAM)?;
        write_out(bitcode_size, n)
    })
}

/// `hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char* bitcode)`: copies that bitcode
/// (`hiprtcGetBitcodeSize` bytes). Errors: as [`hiprtcGetBitcodeSize`] (null buffer:
/// `HIPRTC_ERROR_INVALID_INPUT`).
#[no_mangle]
pub extern "C" fn hiprtcGetBitcode(prog: hiprtcProgram, bitcode: *mut c_char) -> hiprtcResult {
    rtc(|| {
        let p = program(prog)?;
        if bitcode.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let g = p.lock();
        copy_out(bitcode, g.bitcode().ok_or(HIPRTC_ERROR_INVALID_PROGRAM)?)
    })
}
