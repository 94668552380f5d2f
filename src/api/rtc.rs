//! hiprtc, HIP's runtime compilation (`hip/hiprtc.h`): the 11 calls that HIP 5.2's
//! libamdhip64.so.5 exports (`hip_4.2`), so programs built by Debian's hipcc find them in us;
//! `hiprtcGetBitcode`/`hiprtcGetBitcodeSize` (`hip_5.3`); and the link API, `hiprtcLink*`
//! (`hip_4.2` in ROCm's map, though 5.2 did not export it). (ROCm 7 moved them all to
//! libhiprtc.so.7.) The compile and the link themselves are in `crate::kernels::rtc`. Codes and checks follow clr
//! `hipamd/src/hiprtc/hiprtc.cpp`, pointer arguments checked before the handle as there (a null
//! one is `HIPRTC_ERROR_INVALID_INPUT` whatever the handle); where clr dereferences a null or
//! stale handle, we return `HIPRTC_ERROR_INVALID_PROGRAM` or `HIPRTC_ERROR_INVALID_INPUT` instead.
//! This file is the source of `include/hip/hiprtc.h` (tests/header.rs).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.
#![allow(non_camel_case_types)]

use crate::api::common::{self, Handles};
use crate::kernels::rtc::{Link, LinkInput, Program};
use parking_lot::Mutex;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

pub use crate::abi::rtc::{c_header_prelude, hiprtcJITInputType, hiprtcJIT_option, hiprtcResult};

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

/// Opaque link object behind [`hiprtcLinkState`] (`typedef struct ihiprtcLinkState*
/// hiprtcLinkState;`).
pub struct ihiprtcLinkState {
    _opaque: [u8; 0],
}

/// A link created by [`hiprtcLinkCreate`].
pub type hiprtcLinkState = *mut ihiprtcLinkState;

static PROGRAMS: Handles<Mutex<Program>> = Handles::new();
static LINKS: Handles<Mutex<LinkState>> = Handles::new();

/// The program behind a handle. Errors: `HIPRTC_ERROR_INVALID_PROGRAM` for null or one not live.
fn program(prog: hiprtcProgram) -> Result<Arc<Mutex<Program>>, hiprtcResult> {
    PROGRAMS.get(prog as usize).ok_or(HIPRTC_ERROR_INVALID_PROGRAM)
}

/// The link behind a handle. Errors: `HIPRTC_ERROR_INVALID_INPUT` for null or one not live
/// (clr's `isLinkerValid`).
fn link_state(state: hiprtcLinkState) -> Result<Arc<Mutex<LinkState>>, hiprtcResult> {
    LINKS.get(state as usize).ok_or(HIPRTC_ERROR_INVALID_INPUT)
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

/// The `n` elements of a caller's array ([`common::read_in`], element by element, unaligned).
/// Errors: `HIPRTC_ERROR_INVALID_INPUT` when `p` is null and `n > 0`.
fn array_in<T>(p: *const T, n: usize) -> Result<Vec<T>, hiprtcResult> {
    (0..n).map(|i| common::read_in(p.wrapping_add(i)).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)).collect()
}

/// Writes through an out-pointer ([`common::write_out`]). Errors: `HIPRTC_ERROR_INVALID_INPUT`
/// when null.
fn write_out<T>(p: *mut T, v: T) -> Result<(), hiprtcResult> {
    common::write_out(p, v).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)
}

/// Errors: `HIPRTC_ERROR_INVALID_INPUT` when `p` is null. clr checks pointer arguments before the
/// program, so a null one gives this code even with a bad handle (hip-tests rtc/linker.cc).
fn non_null<T>(p: *const T) -> Result<(), hiprtcResult> {
    if p.is_null() {
        Err(HIPRTC_ERROR_INVALID_INPUT)
    } else {
        Ok(())
    }
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
        let hdrs = array_in(includeNames, n)?
            .into_iter()
            .zip(array_in(headers, n)?)
            .map(|(iname, h)| Ok((string_in(iname)?, string_in(h)?)))
            .collect::<Result<Vec<_>, hiprtcResult>>()?;
        let name = if name.is_null() { None } else { Some(string_in(name)?) };
        let handle = PROGRAMS.insert(Arc::new(Mutex::new(Program::new(string_in(src)?, name, hdrs)?)));
        write_out(prog, handle as hiprtcProgram)
    })
}

/// `hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog)`: frees the program; names from
/// [`hiprtcGetLoweredName`] die with it. Errors: `HIPRTC_ERROR_INVALID_INPUT` when `prog` is null,
/// `HIPRTC_ERROR_INVALID_PROGRAM` when `*prog` is not a live program.
#[no_mangle]
pub extern "C" fn hiprtcDestroyProgram(prog: *mut hiprtcProgram) -> hiprtcResult {
    rtc(|| {
        let handle = common::read_in(prog).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)?;
        PROGRAMS.remove(handle as usize).map(drop).ok_or(HIPRTC_ERROR_INVALID_PROGRAM)
    })
}

/// `hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char* name_expression)`: asks
/// the next compile for the lowered name of a `__global__` function or `__device__` variable
/// (`"my_kernel<3, float>"`, `"&N::var"`). Errors: `HIPRTC_ERROR_INVALID_PROGRAM` for a bad
/// handle; `HIPRTC_ERROR_INVALID_INPUT` for a null or empty expression.
#[no_mangle]
pub extern "C" fn hiprtcAddNameExpression(prog: hiprtcProgram, name_expression: *const c_char) -> hiprtcResult {
    rtc(|| {
        let e = string_in(name_expression)?;
        let p = program(prog)?;
        let r = p.lock().add_name_expression(&e);
        r
    })
}

/// `hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions, const char** options)`:
/// compiles to a code object for `--offload-arch=gfx...` (or `--gpu-architecture=`), else for the
/// current device; options are clang's (`-D`, `-I`, `-std=`, `-O`, `-ffast-math`, ...). Takes
/// seconds: it runs the installed HIP clang (`kernels::rtc`). Errors:
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
        let opts = array_in(options, n)?.into_iter().map(string_in).collect::<Result<Vec<_>, _>>()?;
        let r = p.lock().compile(&opts, current_arch);
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
        let e = string_in(name_expression)?;
        if lowered_name.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let p = program(prog)?;
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
        non_null(logSizeRet)?;
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
        non_null(log)?;
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
        non_null(codeSizeRet)?;
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
        non_null(code)?;
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
        non_null(bitcode_size)?;
        let p = program(prog)?;
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
        non_null(bitcode)?;
        let p = program(prog)?;
        let g = p.lock();
        copy_out(bitcode, g.bitcode().ok_or(HIPRTC_ERROR_INVALID_PROGRAM)?)
    })
}

/// The current device's `gcnArchName` (`gfx90a:sramecc+:xnack-`), what clr's `findIsa` compiles
/// and links for when no architecture is named. None without a device.
fn current_arch() -> Option<String> {
    let (rt, d) = common::rt_dev().ok()?;
    Some(crate::core::device_props::arch_name(&rt.devices[d].props))
}

/// A link and the log buffers its creation named, as (address, bytes); (0, 0) when none.
struct LinkState {
    link: Link,
    info_log: (usize, usize),
    error_log: (usize, usize),
}

/// Copies as much of `log` as fits, NUL-terminated, into a log buffer of `hiprtcLinkCreate`.
fn write_log((buf, bytes): (usize, usize), log: &str) {
    if buf == 0 || bytes == 0 {
        return;
    }
    let n = log.len().min(bytes - 1);
    // SAFETY: the caller named a writable buffer of `bytes` bytes with
    // HIPRTC_JIT_{INFO,ERROR}_LOG_BUFFER(_SIZE_BYTES) and keeps it for the link's life (CUDA's
    // cuLinkCreate contract, which hiprtc follows); n < bytes, and our log cannot overlap it.
    unsafe {
        std::ptr::copy_nonoverlapping(log.as_ptr(), buf as *mut u8, n);
        (buf as *mut u8).add(n).write(0);
    }
}

/// The link input kind of a `hiprtcJITInputType`. Errors: `HIPRTC_ERROR_INVALID_INPUT` for the
/// CUDA kinds (cubin, PTX, fatbinary, object, library, NVVM; clr's code) and values that are no
/// kind.
fn link_input(input_type: hiprtcJITInputType) -> Result<LinkInput, hiprtcResult> {
    match input_type {
        hiprtcJITInputType::HIPRTC_JIT_INPUT_LLVM_BITCODE => Ok(LinkInput::Bitcode),
        hiprtcJITInputType::HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE => Ok(LinkInput::BundledBitcode),
        hiprtcJITInputType::HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE => Ok(LinkInput::ArchiveOfBundledBitcode),
        _ => Err(HIPRTC_ERROR_INVALID_INPUT),
    }
}

/// `hiprtcResult hiprtcLinkCreate(unsigned int num_options, hiprtcJIT_option* option_ptr, void**
/// option_vals_pptr, hiprtcLinkState* hip_link_state_ptr)`: a new link. The options it reads
/// (clr `RTCLinkProgram::AddLinkerOptions`): `HIPRTC_JIT_OPTIMIZATION_LEVEL` (the value itself,
/// 0 to 4, default 3), `HIPRTC_JIT_IR_TO_ISA_OPT_EXT` (an array of codegen option strings, such as
/// `"-mllvm", "-inline-threshold=1"`) with `HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT` (their count),
/// and `HIPRTC_JIT_INFO_LOG_BUFFER`/`HIPRTC_JIT_ERROR_LOG_BUFFER` with their `_SIZE_BYTES`, which
/// [`hiprtcLinkComplete`] fills with its log (info on success, error on failure). The others
/// are accepted and ignored, as in clr. Errors: `HIPRTC_ERROR_INVALID_INPUT` for a null
/// `hip_link_state_ptr`, or null arrays with `num_options > 0`; `HIPRTC_ERROR_INVALID_OPTION`
/// for a null log buffer, symbol table or ISA option array.
#[no_mangle]
pub extern "C" fn hiprtcLinkCreate(
    num_options: c_uint,
    option_ptr: *mut hiprtcJIT_option,
    option_vals_pptr: *mut *mut c_void,
    hip_link_state_ptr: *mut hiprtcLinkState,
) -> hiprtcResult {
    use hiprtcJIT_option as O;
    rtc(|| {
        let n = num_options as usize;
        if hip_link_state_ptr.is_null() || (n > 0 && (option_ptr.is_null() || option_vals_pptr.is_null())) {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let (mut level, mut isa, mut isa_count) = (3usize, 0usize, 0usize);
        let (mut info_log, mut error_log) = ((0, 0), (0, 0));
        for (option, value) in array_in(option_ptr, n)?.into_iter().zip(array_in(option_vals_pptr, n)?) {
            let value = value as usize;
            let pointer = || if value == 0 { Err(hiprtcResult::HIPRTC_ERROR_INVALID_OPTION) } else { Ok(value) };
            match option {
                O::HIPRTC_JIT_OPTIMIZATION_LEVEL => level = (value as u32).min(3) as usize,
                O::HIPRTC_JIT_IR_TO_ISA_OPT_EXT => isa = pointer()?,
                O::HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT => isa_count = value,
                O::HIPRTC_JIT_INFO_LOG_BUFFER => info_log.0 = pointer()?,
                O::HIPRTC_JIT_INFO_LOG_BUFFER_SIZE_BYTES => info_log.1 = value,
                O::HIPRTC_JIT_ERROR_LOG_BUFFER => error_log.0 = pointer()?,
                O::HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES => error_log.1 = value,
                O::HIPRTC_JIT_GLOBAL_SYMBOL_NAMES | O::HIPRTC_JIT_GLOBAL_SYMBOL_ADDRESS => {
                    pointer()?;
                }
                _ => {}
            }
        }
        let mut codegen = vec![format!("-O{level}")];
        if isa_count > 0 {
            let args = isa as *const *const c_char;
            if args.is_null() {
                return Err(hiprtcResult::HIPRTC_ERROR_INVALID_OPTION);
            }
            for i in 0..isa_count {
                // SAFETY: non-null array of HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT C strings (hiprtc
                // API contract).
                let arg = unsafe { args.add(i).read_unaligned() };
                codegen.push(string_in(arg).map_err(|_| hiprtcResult::HIPRTC_ERROR_INVALID_OPTION)?);
            }
        }
        let handle = LINKS.insert(Arc::new(Mutex::new(LinkState { link: Link::new(codegen), info_log, error_log })));
        write_out(hip_link_state_ptr, handle as hiprtcLinkState)
    })
}

/// `hiprtcResult hiprtcLinkAddData(hiprtcLinkState hip_link_state, hiprtcJITInputType input_type,
/// void* image, size_t image_size, const char* name, unsigned int num_options, hiprtcJIT_option*
/// options_ptr, void** option_values)`: adds `image_size` bytes of LLVM bitcode (100), a clang
/// offload bundle of it (101) or an archive of bundles (102), copied; `name` (may be null) names
/// it in the log; per-input options are ignored, as in clr. Errors: `HIPRTC_ERROR_INVALID_INPUT`
/// for a null or empty image, another input type, or a bad link (in that order, as clr);
/// `HIPRTC_ERROR_PROGRAM_CREATION_FAILURE` when the bytes are not of that type.
#[no_mangle]
pub extern "C" fn hiprtcLinkAddData(
    hip_link_state: hiprtcLinkState,
    input_type: hiprtcJITInputType,
    image: *mut c_void,
    image_size: usize,
    name: *const c_char,
    num_options: c_uint,
    options_ptr: *mut hiprtcJIT_option,
    option_values: *mut *mut c_void,
) -> hiprtcResult {
    let _ = (num_options, options_ptr, option_values);
    rtc(|| {
        if image.is_null() || image_size == 0 {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let kind = link_input(input_type)?;
        let l = link_state(hip_link_state)?;
        let name = if name.is_null() { String::from("LinkerProgram") } else { string_in(name)? };
        // SAFETY: non-null image of image_size readable bytes (hiprtc API contract), copied now.
        let data = unsafe { std::slice::from_raw_parts(image.cast::<u8>(), image_size) }.to_vec();
        let r = l.lock().link.add(name, kind, data);
        r
    })
}

/// `hiprtcResult hiprtcLinkAddFile(hiprtcLinkState hip_link_state, hiprtcJITInputType input_type,
/// const char* file_path, unsigned int num_options, hiprtcJIT_option* options_ptr, void**
/// option_values)`: [`hiprtcLinkAddData`] with the file's bytes. Errors:
/// `HIPRTC_ERROR_INVALID_INPUT` for a null link, another input type, a bad link or a null path;
/// `HIPRTC_ERROR_PROGRAM_CREATION_FAILURE` when the file cannot be read or is not of that type.
#[no_mangle]
pub extern "C" fn hiprtcLinkAddFile(
    hip_link_state: hiprtcLinkState,
    input_type: hiprtcJITInputType,
    file_path: *const c_char,
    num_options: c_uint,
    options_ptr: *mut hiprtcJIT_option,
    option_values: *mut *mut c_void,
) -> hiprtcResult {
    let _ = (num_options, options_ptr, option_values);
    rtc(|| {
        let kind = link_input(input_type)?;
        let l = link_state(hip_link_state)?;
        let path = string_in(file_path)?;
        let data = std::fs::read(&path).map_err(|_| hiprtcResult::HIPRTC_ERROR_PROGRAM_CREATION_FAILURE)?;
        let r = l.lock().link.add(path, kind, data);
        r
    })
}

/// `hiprtcResult hiprtcLinkComplete(hiprtcLinkState hip_link_state, void** bin_out, size_t*
/// size_out)`: links what was added into one code object for the current device, for
/// `hipModuleLoadData`; `*bin_out` stays valid until the next call on this link or
/// [`hiprtcLinkDestroy`]. The tools' log goes to the info log buffer, or on failure to the error
/// log buffer, if [`hiprtcLinkCreate`] named them. Takes about a second (`kernels::rtc::Link`).
/// Errors: `HIPRTC_ERROR_INVALID_INPUT` for a null out-pointer or a bad link;
/// `HIPRTC_ERROR_LINKING` when the link fails (nothing added, no device, a tool failed).
#[no_mangle]
pub extern "C" fn hiprtcLinkComplete(
    hip_link_state: hiprtcLinkState,
    bin_out: *mut *mut c_void,
    size_out: *mut usize,
) -> hiprtcResult {
    rtc(|| {
        if bin_out.is_null() || size_out.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let l = link_state(hip_link_state)?;
        let mut g = l.lock();
        let LinkState { link, info_log, error_log } = &mut *g;
        let r = link.complete(current_arch()).map(|code| (code.as_ptr() as *mut c_void, code.len()));
        write_log(*info_log, if r.is_ok() { link.log() } else { "" });
        write_log(*error_log, if r.is_ok() { "" } else { link.log() });
        let (code, size) = r?;
        write_out(bin_out, code)?;
        write_out(size_out, size)
    })
}

/// `hiprtcResult hiprtcLinkDestroy(hiprtcLinkState hip_link_state)`: frees the link and its code
/// object (a module loaded from it stays loaded). Errors: `HIPRTC_ERROR_INVALID_INPUT` for null
/// or a link not live.
#[no_mangle]
pub extern "C" fn hiprtcLinkDestroy(hip_link_state: hiprtcLinkState) -> hiprtcResult {
    rtc(|| LINKS.remove(hip_link_state as usize).map(drop).ok_or(HIPRTC_ERROR_INVALID_INPUT))
}
