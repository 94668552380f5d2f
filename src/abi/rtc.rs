//! hiprtc's C enums (`hip/hiprtc.h`, ROCm 7), rendered into that header's prelude.
//!
//! Layer `abi`: imports nothing of ours but the ABI itself.
#![allow(non_camel_case_types)]

use crate::abi::types::{c_enum, render_enum};
use std::ffi::c_int;
use std::fmt;

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

c_enum! {
    /// `hiprtcJIT_option` (`hip/hiprtc.h`, ROCm 7): what `hiprtcLinkCreate`'s option values are.
    pub struct hiprtcJIT_option {
        HIPRTC_JIT_MAX_REGISTERS = 0,
        HIPRTC_JIT_THREADS_PER_BLOCK = 1,
        HIPRTC_JIT_WALL_TIME = 2,
        HIPRTC_JIT_INFO_LOG_BUFFER = 3,
        HIPRTC_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
        HIPRTC_JIT_ERROR_LOG_BUFFER = 5,
        HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
        HIPRTC_JIT_OPTIMIZATION_LEVEL = 7,
        HIPRTC_JIT_TARGET_FROM_HIPCONTEXT = 8,
        HIPRTC_JIT_TARGET = 9,
        HIPRTC_JIT_FALLBACK_STRATEGY = 10,
        HIPRTC_JIT_GENERATE_DEBUG_INFO = 11,
        HIPRTC_JIT_LOG_VERBOSE = 12,
        HIPRTC_JIT_GENERATE_LINE_INFO = 13,
        HIPRTC_JIT_CACHE_MODE = 14,
        HIPRTC_JIT_NEW_SM3X_OPT = 15,
        HIPRTC_JIT_FAST_COMPILE = 16,
        HIPRTC_JIT_GLOBAL_SYMBOL_NAMES = 17,
        HIPRTC_JIT_GLOBAL_SYMBOL_ADDRESS = 18,
        HIPRTC_JIT_GLOBAL_SYMBOL_COUNT = 19,
        HIPRTC_JIT_LTO = 20,
        HIPRTC_JIT_FTZ = 21,
        HIPRTC_JIT_PREC_DIV = 22,
        HIPRTC_JIT_PREC_SQRT = 23,
        HIPRTC_JIT_FMA = 24,
        HIPRTC_JIT_NUM_OPTIONS = 25,
        HIPRTC_JIT_IR_TO_ISA_OPT_EXT = 10000,
        HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT = 10001,
    }
}

c_enum! {
    /// `hiprtcJITInputType` (`hip/hiprtc.h`, ROCm 7): what a link input is. Only the LLVM kinds
    /// (100 to 102) link on AMD.
    pub struct hiprtcJITInputType {
        HIPRTC_JIT_INPUT_CUBIN = 0,
        HIPRTC_JIT_INPUT_PTX = 1,
        HIPRTC_JIT_INPUT_FATBINARY = 2,
        HIPRTC_JIT_INPUT_OBJECT = 3,
        HIPRTC_JIT_INPUT_LIBRARY = 4,
        HIPRTC_JIT_INPUT_NVVM = 5,
        HIPRTC_JIT_NUM_LEGACY_INPUT_TYPES = 6,
        HIPRTC_JIT_INPUT_LLVM_BITCODE = 100,
        HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE = 101,
        HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE = 102,
        HIPRTC_JIT_NUM_INPUT_TYPES = 9,
    }
}

/// What `include/hip/hiprtc.h` declares before the functions: the `hiprtcResult`,
/// `hiprtcJIT_option` and `hiprtcJITInputType` enums.
pub fn c_header_prelude() -> String {
    let mut s = String::from("\n");
    render_enum(&mut s, "hiprtcResult", "", hiprtcResult::ENUMERATORS);
    render_enum(&mut s, "hiprtcJIT_option", "", hiprtcJIT_option::ENUMERATORS);
    render_enum(&mut s, "hiprtcJITInputType", "", hiprtcJITInputType::ENUMERATORS);
    s
}
