//! The per-thread default stream entry points (`NAME_spt`; clr's `*_spt` functions in
//! `hip_memory.cpp`, `hip_stream.cpp`, `hip_event.cpp`, `hip_module.cpp`, `hip_graph.cpp`,
//! `hip_device_runtime.cpp`). A program built with `-fgpu-default-stream=per-thread` (or
//! `HIP_API_PER_THREAD_DEFAULT_STREAM` defined before the HIP headers) calls these instead of
//! the plain names. Each is its plain entry point with the default stream meaning this thread's
//! per-thread stream of the current device (`hipStreamPerThread`): the synchronous calls run on
//! it and wait for it, the stream-taking calls map a null `stream` to it. `hipStreamLegacy` stays
//! the legacy null stream, as in CUDA and as hip-tests expect
//! (`Unit_hipStreamLegacy_TwoThreadsDiffOperationWithSptCompOption`: two threads' copies on
//! `hipStreamLegacy`, ordered); clr's `PER_THREAD_DEFAULT_STREAM` maps it to the per-thread
//! stream too, which leaves those copies unordered. The per-thread
//! stream is a blocking stream: it does not wait for other streams, and the legacy null stream
//! (work on `hipStreamLegacy`, or on the null stream through the plain entry points) waits for
//! it and it for that (README "Ordering rules"). Errors: those of the plain entry point.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::{array, device, event, graph, memory, module, stream};
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

/// The null stream means `hipStreamPerThread`; any other handle, `hipStreamLegacy` included, is
/// itself (see the module documentation).
fn per_thread(stream: hipStream_t) -> hipStream_t {
    if stream.is_null() {
        hipStreamPerThread
    } else {
        stream
    }
}

// ---- copies and fills (clr hip_memory.cpp) ---------------------------------------------------

/// `hipMemcpy` on this thread's per-thread stream: runs after its earlier work and returns once
/// done (a copy between memory of one device once queued, as `hipMemcpy`).
#[no_mangle]
pub extern "C" fn hipMemcpy_spt(
    dst: *mut c_void,
    src: *const c_void,
    sizeBytes: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    memory::memcpy(dst, src, sizeBytes, kind, hipStreamPerThread, true)
}

/// `hipMemcpyAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpyAsync_spt(
    dst: *mut c_void,
    src: *const c_void,
    sizeBytes: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    memory::hipMemcpyAsync(dst, src, sizeBytes, kind, per_thread(stream))
}

/// `hipMemset` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemset_spt(dst: *mut c_void, value: c_int, sizeBytes: usize) -> hipError_t {
    memory::memset(dst, value as u8 as u32, 1, sizeBytes, hipStreamPerThread, true)
}

/// `hipMemsetAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemsetAsync_spt(
    dst: *mut c_void,
    value: c_int,
    sizeBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    memory::hipMemsetAsync(dst, value, sizeBytes, per_thread(stream))
}

/// `hipMemset2D` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemset2D_spt(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
) -> hipError_t {
    let p = hipPitchedPtr { ptr: dst, pitch, xsize: width, ysize: height };
    memory::memset_3d(p, value as u8 as u32, 1, hipExtent { width, height, depth: 1 }, hipStreamPerThread, true)
}

/// `hipMemset2DAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemset2DAsync_spt(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    memory::hipMemset2DAsync(dst, pitch, value, width, height, per_thread(stream))
}

/// `hipMemset3D` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemset3D_spt(pitchedDevPtr: hipPitchedPtr, value: c_int, extent: hipExtent) -> hipError_t {
    memory::memset_3d(pitchedDevPtr, value as u8 as u32, 1, extent, hipStreamPerThread, true)
}

/// `hipMemset3DAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemset3DAsync_spt(
    pitchedDevPtr: hipPitchedPtr,
    value: c_int,
    extent: hipExtent,
    stream: hipStream_t,
) -> hipError_t {
    memory::hipMemset3DAsync(pitchedDevPtr, value, extent, per_thread(stream))
}

/// `hipMemcpy2D` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpy2D_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    memory::memcpy_2d(dst, dpitch, src, spitch, width, height, kind, hipStreamPerThread, true)
}

/// `hipMemcpy2DAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DAsync_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    memory::hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, per_thread(stream))
}

/// `hipMemcpy3D` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpy3D_spt(p: *const hipMemcpy3DParms) -> hipError_t {
    memory::memcpy_3d(p, hipStreamPerThread, true)
}

/// `hipMemcpy3DAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpy3DAsync_spt(p: *const hipMemcpy3DParms, stream: hipStream_t) -> hipError_t {
    memory::hipMemcpy3DAsync(p, per_thread(stream))
}

/// `hipMemcpyToSymbol` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpyToSymbol_spt(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    module::symbol_copy(symbol, src, sizeBytes, offset, kind, true, hipStreamPerThread, true)
}

/// `hipMemcpyFromSymbol` on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpyFromSymbol_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    module::symbol_copy(symbol, dst, sizeBytes, offset, kind, false, hipStreamPerThread, true)
}

/// `hipMemcpyToSymbolAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpyToSymbolAsync_spt(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    module::hipMemcpyToSymbolAsync(symbol, src, sizeBytes, offset, kind, per_thread(stream))
}

/// `hipMemcpyFromSymbolAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpyFromSymbolAsync_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    module::hipMemcpyFromSymbolAsync(dst, symbol, sizeBytes, offset, kind, per_thread(stream))
}

/// `hipMemcpy2DToArray` on the per-thread stream.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DToArray_spt(
    dst: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    array::to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, hipStreamPerThread, true)
}

/// `hipMemcpy2DToArrayAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DToArrayAsync_spt(
    dst: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    array::hipMemcpy2DToArrayAsync(dst, wOffset, hOffset, src, spitch, width, height, kind, per_thread(stream))
}

/// `hipMemcpy2DFromArray` on the per-thread stream.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DFromArray_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    array::from_array(dst, dpitch, src, wOffsetSrc, hOffset, width, height, kind, hipStreamPerThread, true)
}

/// `hipMemcpy2DFromArrayAsync` with a null `stream` meaning the per-thread stream.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DFromArrayAsync_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffsetSrc: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    array::hipMemcpy2DFromArrayAsync(dst, dpitch, src, wOffsetSrc, hOffsetSrc, width, height, kind, per_thread(stream))
}

/// `hipMemcpyFromArray` (deprecated) on the per-thread stream.
#[no_mangle]
pub extern "C" fn hipMemcpyFromArray_spt(
    dst: *mut c_void,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffset: usize,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    array::from_array_legacy(dst, src, wOffsetSrc, hOffset, count, kind, hipStreamPerThread)
}

// ---- streams and events (clr hip_stream.cpp, hip_event.cpp) ---------------------------------

/// `hipStreamQuery`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamQuery_spt(stream: hipStream_t) -> hipError_t {
    stream::hipStreamQuery(per_thread(stream))
}

/// `hipStreamSynchronize`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamSynchronize_spt(stream: hipStream_t) -> hipError_t {
    stream::hipStreamSynchronize(per_thread(stream))
}

/// `hipStreamGetPriority`: a null `stream` is the per-thread stream (priority 0).
#[no_mangle]
pub extern "C" fn hipStreamGetPriority_spt(stream: hipStream_t, priority: *mut c_int) -> hipError_t {
    stream::hipStreamGetPriority(per_thread(stream), priority)
}

/// `hipStreamGetFlags`: a null `stream` is the per-thread stream (`hipStreamDefault`;
/// the plain call refuses a null stream).
#[no_mangle]
pub extern "C" fn hipStreamGetFlags_spt(stream: hipStream_t, flags: *mut c_uint) -> hipError_t {
    stream::hipStreamGetFlags(per_thread(stream), flags)
}

/// `hipStreamWaitEvent`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamWaitEvent_spt(stream: hipStream_t, event: hipEvent_t, flags: c_uint) -> hipError_t {
    stream::hipStreamWaitEvent(per_thread(stream), event, flags)
}

/// `hipStreamAddCallback`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamAddCallback_spt(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    userData: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    stream::hipStreamAddCallback(per_thread(stream), callback, userData, flags)
}

/// `hipLaunchHostFunc`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipLaunchHostFunc_spt(stream: hipStream_t, fn_: hipHostFn_t, userData: *mut c_void) -> hipError_t {
    stream::hipLaunchHostFunc(per_thread(stream), fn_, userData)
}

/// `hipEventRecord`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipEventRecord_spt(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    event::hipEventRecord(event, per_thread(stream))
}

// ---- launches (clr hip_module.cpp) -----------------------------------------------------------

/// `hipLaunchKernel` (what `<<<...>>>` calls under `-fgpu-default-stream=per-thread`): a null
/// `stream` is the per-thread stream (`hipStreamLegacy` stays the legacy stream).
#[no_mangle]
pub extern "C" fn hipLaunchKernel_spt(
    function_address: *const c_void,
    numBlocks: dim3,
    dimBlocks: dim3,
    args: *mut *mut c_void,
    sharedMemBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    module::hipLaunchKernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes, per_thread(stream))
}

/// `hipLaunchCooperativeKernel`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipLaunchCooperativeKernel_spt(
    f: *const c_void,
    gridDim: dim3,
    blockDim: dim3,
    kernelParams: *mut *mut c_void,
    sharedMemBytes: c_uint,
    hStream: hipStream_t,
) -> hipError_t {
    module::hipLaunchCooperativeKernel(f, gridDim, blockDim, kernelParams, sharedMemBytes, per_thread(hStream))
}

// ---- graphs and stream capture (clr hip_graph.cpp) -------------------------------------------

/// `hipGraphLaunch`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipGraphLaunch_spt(graphExec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    graph::hipGraphLaunch(graphExec, per_thread(stream))
}

/// `hipStreamBeginCapture`: a null `stream` is the per-thread stream, which can
/// capture (a blocking stream: while it captures, the legacy null stream's capture queries
/// are `hipErrorStreamCaptureImplicit`).
#[no_mangle]
pub extern "C" fn hipStreamBeginCapture_spt(stream: hipStream_t, mode: hipStreamCaptureMode) -> hipError_t {
    graph::hipStreamBeginCapture(per_thread(stream), mode)
}

/// `hipStreamEndCapture`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamEndCapture_spt(stream: hipStream_t, pGraph: *mut hipGraph_t) -> hipError_t {
    graph::hipStreamEndCapture(per_thread(stream), pGraph)
}

/// `hipStreamIsCapturing`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamIsCapturing_spt(
    stream: hipStream_t,
    pCaptureStatus: *mut hipStreamCaptureStatus,
) -> hipError_t {
    graph::hipStreamIsCapturing(per_thread(stream), pCaptureStatus)
}

/// `hipStreamGetCaptureInfo`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamGetCaptureInfo_spt(
    stream: hipStream_t,
    pCaptureStatus: *mut hipStreamCaptureStatus,
    pId: *mut c_ulonglong,
) -> hipError_t {
    graph::hipStreamGetCaptureInfo(per_thread(stream), pCaptureStatus, pId)
}

/// `hipStreamGetCaptureInfo_v2`: a null `stream` is the per-thread stream.
#[no_mangle]
pub extern "C" fn hipStreamGetCaptureInfo_v2_spt(
    stream: hipStream_t,
    captureStatus_out: *mut hipStreamCaptureStatus,
    id_out: *mut c_ulonglong,
    graph_out: *mut hipGraph_t,
    dependencies_out: *mut *const hipGraphNode_t,
    numDependencies_out: *mut usize,
) -> hipError_t {
    let s = per_thread(stream);
    graph::hipStreamGetCaptureInfo_v2(s, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out)
}

// ---- entry points (clr hip_device_runtime.cpp) ----------------------------------------------

/// `hipGetDriverEntryPoint` whose `hipEnableDefault` means `hipEnablePerThreadDefaultStream`:
/// the `_spt` variant of `symbol` where there is one, else the plain entry point (clr
/// `hipGetDriverEntryPoint_spt`). Errors as `hipGetDriverEntryPoint`.
#[no_mangle]
pub extern "C" fn hipGetDriverEntryPoint_spt(
    symbol: *const c_char,
    funcPtr: *mut *mut c_void,
    flags: u64,
    driverStatus: *mut hipDriverEntryPointQueryResult,
) -> hipError_t {
    let flags = if flags == hipEnableDefault { hipEnablePerThreadDefaultStream } else { flags };
    device::driver_entry_point(symbol, funcPtr, flags, driverStatus)
}
