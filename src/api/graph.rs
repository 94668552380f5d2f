//! Graph management and stream capture (HIP "Graph Management" and "Stream Capture" groups; clr
//! `hip_graph.cpp`). Error codes follow clr and AMD's hip-tests (`catch/unit/graph/`): nearly
//! every bad argument (null or unknown graph, node, executable graph, event) is
//! `hipErrorInvalidValue`. The core is src/graph/mod.rs.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, event_of, read_in, rt_dev, slice_in, stream_of, write_out, write_slice, Handles};
use crate::core::event::Event;
use crate::core::memory::MemKind;
use crate::graph::{self, BatchMemOps, CParams, Exec, ExtSemNode, Graph, Node, Op};
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

/// Graphs the program owns (`hipGraphCreate`, `hipStreamEndCapture`, `hipGraphClone`) until
/// `hipGraphDestroy`.
static OWNED: Handles<Graph> = Handles::new();

/// Executable graphs until `hipGraphExecDestroy`.
static EXECS: Handles<Exec> = Handles::new();

fn own(g: Arc<Graph>) -> hipGraph_t {
    OWNED.insert(g) as hipGraph_t
}

/// The live graph `h` names. Errors: `hipErrorInvalidValue`.
fn graph_in(h: hipGraph_t) -> Result<Arc<Graph>, hipError_t> {
    graph::graph_of(h as usize).ok_or(hipError_t::hipErrorInvalidValue)
}

/// The live node `h` names. Errors: `hipErrorInvalidValue`.
fn node_in(h: hipGraphNode_t) -> Result<Arc<Node>, hipError_t> {
    graph::node_of(h as usize).ok_or(hipError_t::hipErrorInvalidValue)
}

/// The live executable graph `h` names. Errors: `hipErrorInvalidValue`.
fn exec_in(h: hipGraphExec_t) -> Result<Arc<Exec>, hipError_t> {
    EXECS.get(h as usize).ok_or(hipError_t::hipErrorInvalidValue)
}

/// The nodes of a `(pointer, count)` array. Errors: `hipErrorInvalidValue` (null with a count,
/// an unknown node).
fn nodes_in(p: *const hipGraphNode_t, n: usize) -> Result<Vec<Arc<Node>>, hipError_t> {
    if n == 0 {
        return Ok(vec![]);
    }
    slice_in(p, n)?.iter().map(|h| node_in(*h)).collect()
}

/// An event argument of a graph API. Errors: `hipErrorInvalidValue` (null, unknown).
fn event_in(e: hipEvent_t) -> Result<Arc<Event>, hipError_t> {
    event_of(e).map_err(|_| hipError_t::hipErrorInvalidValue)
}

/// The first `n` handles of `nodes`, padded with nulls.
fn handles<'a>(nodes: impl Iterator<Item = &'a Arc<Node>>, n: usize) -> Vec<hipGraphNode_t> {
    let mut v: Vec<hipGraphNode_t> = nodes.take(n).map(|x| x.handle() as hipGraphNode_t).collect();
    v.resize(n, std::ptr::null_mut());
    v
}

/// Writes node handles as clr does: only the count when `out` is null; else `*num` entries, the
/// ones past the list null and `*num` lowered to the list's length.
fn fill_nodes(out: *mut hipGraphNode_t, num: *mut usize, nodes: &[Arc<Node>]) -> Result<(), hipError_t> {
    let n = read_in(num)?;
    if out.is_null() {
        return write_out(num, nodes.len());
    }
    write_slice(out, &handles(nodes.iter(), n))?;
    if n > nodes.len() {
        write_out(num, nodes.len())?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Node parameters → operations (each validated as clr validates them when a node is added)
// ---------------------------------------------------------------------------------------------

fn memcpy_op(p: *const hipMemcpy3DParms) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    let (dst, src, block) = crate::api::memory::memcpy_3d_args(&p)?;
    crate::core::copy::check_kind(p.kind)?;
    Ok(Op::Memcpy3D { parms: CParams(p), dst, src, block, drv: None })
}

fn memcpy_1d_op(dst: *mut c_void, src: *const c_void, count: usize, kind: hipMemcpyKind) -> Result<Op, hipError_t> {
    let (rt, _) = rt_dev()?;
    rt.memcpy_check(dst as u64, src as u64, count as u64, kind)?;
    Ok(Op::Memcpy { dst: dst as u64, src: src as u64, len: count as u64, kind })
}

fn to_symbol_op(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> Result<Op, hipError_t> {
    let dst = crate::api::module::symbol_range(symbol, count, offset)?;
    memcpy_1d_op(dst as *mut c_void, src, count, kind)
}

fn from_symbol_op(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> Result<Op, hipError_t> {
    let src = crate::api::module::symbol_range(symbol, count, offset)?;
    memcpy_1d_op(dst, src as *const c_void, count, kind)
}

/// clr's checks when a symbol copy node's parameters are set
/// (`hipGraph[Exec]MemcpyNodeSetParams{To,From}Symbol`, `GraphMemcpyNode{To,From}Symbol::SetParams`)
/// on `p`, the other side of the copy (its source for a copy to the symbol, its destination for
/// one from it): a null symbol is `hipErrorInvalidSymbol`; `p` must not be null (nor `count` 0)
/// and may be neither the symbol itself nor another variable's symbol covering
/// `[offset, offset + count)`; then the symbol is looked up (`hipErrorInvalidSymbol`, or
/// `hipErrorInvalidValue` for a range past it); then the direction must fit `p`: memory hipkfd does not know
/// (pageable) is copied host-to-device (to) or device-to-host (from), `hipMalloc` memory
/// device-to-device; `hipMemcpyDefault` fits both; host-to-host and the opposite direction never.
/// Errors: `hipErrorInvalidValue`; a direction that does not fit a copy from the symbol:
/// `hipErrorInvalidMemcpyDirection` (clr).
fn symbol_node_checks(
    p: *const c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
    to_symbol: bool,
) -> Result<(), hipError_t> {
    use hipMemcpyKind as K;
    if symbol.is_null() {
        return Err(hipError_t::hipErrorInvalidSymbol);
    }
    check(!p.is_null() && count != 0 && p != symbol && crate::api::module::symbol_range(p, count, offset).is_err())?;
    crate::api::module::symbol_range(symbol, count, offset)?;
    let (rt, _) = rt_dev()?;
    let (host_side, opposite) = if to_symbol {
        (K::hipMemcpyHostToDevice, K::hipMemcpyDeviceToHost)
    } else {
        (K::hipMemcpyDeviceToHost, K::hipMemcpyHostToDevice)
    };
    let is = |ks: &[hipMemcpyKind]| ks.contains(&kind);
    let fits = match rt.allocs.find(p as u64) {
        None => is(&[host_side, K::hipMemcpyDefault]),
        Some(a) if a.kind == MemKind::Device => {
            is(&[K::hipMemcpyDeviceToDevice, K::hipMemcpyDeviceToDeviceNoCU, K::hipMemcpyDefault])
        }
        Some(_) => true,
    };
    if fits && !is(&[K::hipMemcpyHostToHost, opposite]) {
        Ok(())
    } else if to_symbol {
        Err(hipError_t::hipErrorInvalidValue)
    } else {
        Err(hipError_t::hipErrorInvalidMemcpyDirection)
    }
}

/// clr `ihipGraphAddMemsetNode`'s checks: element size 1, 2 or 4, nonzero width and height,
/// `pitch >= width * elementSize` for several rows, the whole block inside device or pinned
/// memory.
fn memset_op(p: *const hipMemsetParams) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    check(matches!(p.elementSize, 1 | 2 | 4) && p.width != 0 && p.height != 0 && !p.dst.is_null())?;
    let row = p.width.checked_mul(p.elementSize as usize).ok_or(hipError_t::hipErrorInvalidValue)?;
    check(p.height == 1 || p.pitch >= row)?;
    let span =
        (p.height - 1).checked_mul(p.pitch).and_then(|v| v.checked_add(row)).ok_or(hipError_t::hipErrorInvalidValue)?;
    let (rt, _) = rt_dev()?;
    rt.memset_check(p.dst as u64, span as u64)?;
    Ok(Op::Memset { p: CParams(p), depth: 1, ysize: p.height })
}

fn host_op(p: *const hipHostNodeParams) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    let f = p.r#fn.ok_or(hipError_t::hipErrorInvalidValue)?;
    Ok(Op::Host { fn_: f, data: p.userData as usize })
}

/// A kernel node's operation: the function and a copy of the arguments (`kernelParams`, or
/// `extra`'s buffer), for the current device's code object, checked as clr's
/// `ihipGraphAddKernelNode` / `GraphKernelNode::validateKernelParams` check it: as a launch on the
/// current device would be (`ihipLaunchKernel_validate`). Errors: `hipErrorInvalidValue` (null
/// params or `func`, both `kernelParams` and `extra`, a malformed `extra`, an empty grid or block,
/// a block over `maxThreadsPerBlock`, too much dynamic LDS, no arguments for a kernel that has
/// some), `hipErrorInvalidDeviceFunction` (unknown kernel), `hipErrorNoBinaryForGpu`, the launch
/// checks' codes ([`crate::kernels::module::validate_launch`]), `hipErrorInvalidConfiguration` (grid ×
/// block past 32 bits in a dimension).
fn kernel_op(p: *const hipKernelNodeParams) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    check(!p.func.is_null())?;
    let f = crate::api::module::host_function(p.func)?;
    check(p.kernelParams.is_null() || p.extra.is_null())?;
    let d = crate::kernels::module::LaunchDims {
        grid: [p.gridDim.x, p.gridDim.y, p.gridDim.z],
        block: [p.blockDim.x, p.blockDim.y, p.blockDim.z],
        shared: p.sharedMemBytes as usize,
    };
    let work = |i: usize| d.grid[i] as u64 * d.block[i] as u64;
    check((0..3).all(|i| work(i) != 0))?;
    let (rt, dev) = rt_dev()?;
    let props = &rt.devices[dev].props;
    check(d.threads() <= props.maxThreadsPerBlock as u64)?;
    crate::kernels::module::validate_launch(&f, props, &d, !p.kernelParams.is_null() || !p.extra.is_null())?;
    if (0..3).any(|i| work(i) > u32::MAX as u64) {
        return Err(hipError_t::hipErrorInvalidConfiguration);
    }
    let args = if !p.kernelParams.is_null() {
        crate::kernels::aql::Args::Params(p.kernelParams)
    } else if !p.extra.is_null() {
        crate::api::module::extra_args(p.extra)?
    } else {
        crate::kernels::aql::Args::None
    };
    let arch = crate::core::device_props::arch_name(props);
    Ok(Op::Kernel(Arc::new(crate::kernels::aql::KernelNode::new(f, p, args, &arch)?)))
}

/// Adds a node made by `op` to `graph` after `pDependencies[numDependencies]` and writes its
/// handle. Errors: `hipErrorInvalidValue` (null `pGraphNode`, unknown graph or dependency, null
/// dependencies with a count, a dependency of another graph or named twice), `op`'s.
fn add_node(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    op: impl FnOnce() -> Result<Op, hipError_t>,
) -> hipError_t {
    api(|| {
        check(!pGraphNode.is_null())?;
        let g = graph_in(graph)?;
        let deps = nodes_in(pDependencies, numDependencies)?;
        let n = g.add(op()?, &deps)?;
        write_out(pGraphNode, n.handle() as hipGraphNode_t)
    })
}

// ---------------------------------------------------------------------------------------------
// Stream capture
// ---------------------------------------------------------------------------------------------

/// Whether `h` is the null stream or `hipStreamLegacy`, which cannot capture.
/// `hipStreamPerThread` can (hip-tests capture it): it is a stream of its own (`stream_of`).
fn is_null_stream(h: hipStream_t) -> bool {
    (h as usize) <= 1
}

/// `hipStreamBeginCapture`: later async work on `stream` (and on streams that join through
/// captured events) is recorded into a new graph instead of running. Errors (clr, hip-tests
/// `Unit_hipStreamBeginCapture_Negative_Parameters`): `hipErrorContextIsDestroyed` (unknown
/// stream), `hipErrorStreamCaptureUnsupported` (the null stream, `hipStreamLegacy`),
/// `hipErrorInvalidValue` (unknown mode),
/// `hipErrorIllegalState` (already capturing).
#[no_mangle]
pub extern "C" fn hipStreamBeginCapture(stream: hipStream_t, mode: hipStreamCaptureMode) -> hipError_t {
    api(|| begin_capture(stream, mode, None))
}

/// The checks and start of both `hipStreamBeginCapture*`.
fn begin_capture(
    stream: hipStream_t,
    mode: hipStreamCaptureMode,
    into: Option<(Arc<Graph>, Vec<Arc<Node>>)>,
) -> Result<(), hipError_t> {
    let (rt, _) = rt_dev()?;
    let s = stream_of(rt, stream)?;
    if is_null_stream(stream) {
        return Err(hipError_t::hipErrorStreamCaptureUnsupported);
    }
    check((0..=2).contains(&mode.0))?;
    graph::capture_begin(&s, mode, into)
}

/// `hipStreamBeginCaptureToGraph`: as [`hipStreamBeginCapture`], capturing into the existing
/// `graph` after its nodes `dependencies[numDependencies]` (the graph's nodes do not make the
/// capture unjoined; `hipStreamEndCapture` gives `graph` back, still owned by the caller).
/// Errors (clr, in its order): `hipErrorNotSupported` (`dependencyData` given),
/// `hipErrorInvalidValue` (null or unknown graph, dependencies null with a count or given with
/// none, a dependency not in `graph`), then [`hipStreamBeginCapture`]'s.
#[no_mangle]
pub extern "C" fn hipStreamBeginCaptureToGraph(
    stream: hipStream_t,
    graph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    dependencyData: *const hipGraphEdgeData,
    numDependencies: usize,
    mode: hipStreamCaptureMode,
) -> hipError_t {
    api(|| {
        if !dependencyData.is_null() {
            return Err(hipError_t::hipErrorNotSupported);
        }
        let g = graph_in(graph)?;
        check(dependencies.is_null() == (numDependencies == 0))?;
        let deps = nodes_in(dependencies, numDependencies)?;
        begin_capture(stream, mode, Some((g, deps)))
    })
}

/// `hipStreamEndCapture`: ends the capture begun on `stream` and gives its graph (the caller
/// owns it: `hipGraphDestroy`). Errors (clr `hipStreamEndCapture_common`):
/// `hipErrorInvalidValue` (null `pGraph`), `hipErrorIllegalState` (null stream, not capturing),
/// `hipErrorContextIsDestroyed` (unknown stream), `hipErrorStreamCaptureUnmatched` (the stream
/// joined the capture but did not begin it), `hipErrorStreamCaptureWrongThread`, and, with the
/// capture ended and `*pGraph` null: `hipErrorStreamCaptureInvalidated`,
/// `hipErrorStreamCaptureUnjoined` (forked work not joined back).
#[no_mangle]
pub extern "C" fn hipStreamEndCapture(stream: hipStream_t, pGraph: *mut hipGraph_t) -> hipError_t {
    api(|| {
        check(!pGraph.is_null())?;
        if is_null_stream(stream) {
            return Err(hipError_t::hipErrorIllegalState);
        }
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        match graph::capture_end(&s) {
            Ok(g) => write_out(pGraph, own(g)),
            Err(e) => {
                if matches!(e, hipError_t::hipErrorStreamCaptureInvalidated | hipError_t::hipErrorStreamCaptureUnjoined)
                {
                    write_out(pGraph, std::ptr::null_mut())?;
                }
                Err(e)
            }
        }
    })
}

/// The capture state of `stream` for the capture queries. The null stream: `None` status, or
/// `hipErrorStreamCaptureImplicit` while a blocking stream captures (clr).
fn capture_query(stream: hipStream_t) -> Result<graph::CaptureInfo, hipError_t> {
    let (rt, _) = rt_dev()?;
    let s = stream_of(rt, stream)?;
    if is_null_stream(stream) {
        if graph::blocking_capture() {
            return Err(hipError_t::hipErrorStreamCaptureImplicit);
        }
        return Ok(graph::CaptureInfo::NONE);
    }
    Ok(graph::capture_info(&s))
}

/// `hipStreamIsCapturing`: None, Active or Invalidated. Errors: `hipErrorInvalidValue` (null
/// `pCaptureStatus`), `hipErrorContextIsDestroyed` (unknown stream),
/// `hipErrorStreamCaptureImplicit` (the null stream while a blocking stream captures).
#[no_mangle]
pub extern "C" fn hipStreamIsCapturing(stream: hipStream_t, pCaptureStatus: *mut hipStreamCaptureStatus) -> hipError_t {
    api(|| {
        check(!pCaptureStatus.is_null())?;
        write_out(pCaptureStatus, capture_query(stream)?.status)
    })
}

/// `hipStreamGetCaptureInfo`: status and, while active and `pId` is not null, the capture's
/// unique id. Errors as [`hipStreamIsCapturing`].
#[no_mangle]
pub extern "C" fn hipStreamGetCaptureInfo(
    stream: hipStream_t,
    pCaptureStatus: *mut hipStreamCaptureStatus,
    pId: *mut c_ulonglong,
) -> hipError_t {
    hipStreamGetCaptureInfo_v2(
        stream,
        pCaptureStatus,
        pId,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    )
}

/// `hipStreamGetCaptureInfo_v2`: [`hipStreamGetCaptureInfo`] plus, while active, the graph being
/// built and the stream's current dependencies (an array owned by the runtime, valid until the
/// stream's next captured operation); each out-pointer may be null. Errors as
/// [`hipStreamIsCapturing`].
#[no_mangle]
pub extern "C" fn hipStreamGetCaptureInfo_v2(
    stream: hipStream_t,
    captureStatus_out: *mut hipStreamCaptureStatus,
    id_out: *mut c_ulonglong,
    graph_out: *mut hipGraph_t,
    dependencies_out: *mut *const hipGraphNode_t,
    numDependencies_out: *mut usize,
) -> hipError_t {
    api(|| {
        check(!captureStatus_out.is_null())?;
        let c = capture_query(stream)?;
        write_out(captureStatus_out, c.status)?;
        if c.status != hipStreamCaptureStatus::hipStreamCaptureStatusActive {
            return Ok(());
        }
        if !id_out.is_null() {
            write_out(id_out, c.id)?;
        }
        if let (false, Some(g)) = (graph_out.is_null(), c.graph) {
            write_out(graph_out, g.handle() as hipGraph_t)?;
        }
        if !dependencies_out.is_null() {
            write_out(dependencies_out, c.deps as *const hipGraphNode_t)?;
        }
        if !numDependencies_out.is_null() {
            write_out(numDependencies_out, c.count)?;
        }
        Ok(())
    })
}

/// `hipStreamUpdateCaptureDependencies`: adds `dependencies[numDependencies]` to the capturing
/// stream's dependency set (`hipStreamAddCaptureDependencies`) or replaces the set
/// (`hipStreamSetCaptureDependencies`). Errors (clr): `hipErrorContextIsDestroyed` (unknown
/// stream), `hipErrorIllegalState` (not capturing), `hipErrorInvalidValue` (more nodes than the
/// graph has, null array with a count, unknown flags, a node not in the capture's graph).
#[no_mangle]
pub extern "C" fn hipStreamUpdateCaptureDependencies(
    stream: hipStream_t,
    dependencies: *mut hipGraphNode_t,
    numDependencies: usize,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        let count = graph::capture_node_count(&s).ok_or(hipError_t::hipErrorIllegalState)?;
        check(numDependencies <= count && flags <= 1)?;
        let nodes = nodes_in(dependencies, numDependencies)?;
        graph::update_deps(&s, &nodes, flags == 1)
    })
}

/// `hipThreadExchangeStreamCaptureMode`: sets the calling thread's capture interaction mode to
/// `*mode` and writes the previous one back. Errors: `hipErrorInvalidValue` (null, unknown mode).
#[no_mangle]
pub extern "C" fn hipThreadExchangeStreamCaptureMode(mode: *mut hipStreamCaptureMode) -> hipError_t {
    api(|| {
        let m = read_in(mode)?;
        check((0..=2).contains(&m.0))?;
        write_out(mode, graph::exchange_mode(m))
    })
}

// ---------------------------------------------------------------------------------------------
// Graphs and nodes
// ---------------------------------------------------------------------------------------------

/// `hipGraphCreate`: an empty graph. Errors: `hipErrorInvalidValue` (null, `flags` ≠ 0).
#[no_mangle]
pub extern "C" fn hipGraphCreate(pGraph: *mut hipGraph_t, flags: c_uint) -> hipError_t {
    api(|| {
        check(!pGraph.is_null() && flags == 0)?;
        let (_, d) = rt_dev()?;
        write_out(pGraph, own(Graph::new(d, false)))
    })
}

/// `hipGraphDestroy`: releases the graph and its nodes (executable graphs made from it stay).
/// Errors: `hipErrorInvalidValue` (null), `hipErrorIllegalState` (destroyed, or not the
/// program's: a child graph node's graph).
#[no_mangle]
pub extern "C" fn hipGraphDestroy(graph: hipGraph_t) -> hipError_t {
    api(|| {
        check(!graph.is_null())?;
        let g = OWNED.remove(graph as usize);
        g.map(drop).ok_or(hipError_t::hipErrorIllegalState)
    })
}

/// `hipGraphAddEmptyNode`. Errors as every `hipGraphAdd*Node`: `hipErrorInvalidValue` (null
/// `pGraphNode`, unknown graph or dependency, null dependencies with a count, a dependency of
/// another graph or named twice).
#[no_mangle]
pub extern "C" fn hipGraphAddEmptyNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || Ok(Op::Empty))
}

/// `hipGraphAddMemcpyNode`: a pitched copy as `hipMemcpy3DAsync`'s parameters. Errors: as
/// `hipMemcpy3D`'s checks, and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddMemcpyNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pCopyParams: *const hipMemcpy3DParms,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || memcpy_op(pCopyParams))
}

/// `hipGraphAddMemcpyNode1D`: a copy of `count` bytes. Errors: `hipErrorInvalidValue` (`count`
/// 0, null pointers, a range past its allocation), `hipErrorInvalidMemcpyDirection`, and as
/// [`hipGraphAddEmptyNode`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipGraphAddMemcpyNode1D(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || memcpy_1d_op(dst, src, count, kind))
}

/// `hipGraphAddMemcpyNodeToSymbol`: a copy of `count` bytes to a `__device__` variable at
/// `offset` (resolved now, on the current device). Errors: `hipErrorInvalidSymbol`, as
/// [`hipGraphAddMemcpyNode1D`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipGraphAddMemcpyNodeToSymbol(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || to_symbol_op(symbol, src, count, offset, kind))
}

/// `hipGraphAddMemcpyNodeFromSymbol`: as [`hipGraphAddMemcpyNodeToSymbol`], from the variable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipGraphAddMemcpyNodeFromSymbol(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || from_symbol_op(dst, symbol, count, offset, kind))
}

/// `hipGraphAddMemsetNode`: fills `height` rows of `width` elements of `elementSize` (1, 2 or
/// 4) bytes, rows `pitch` bytes apart. Errors: `hipErrorInvalidValue` (null params or `dst`,
/// other element sizes, zero width or height, pitch below a row, a block past device or pinned
/// memory), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddMemsetNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pMemsetParams: *const hipMemsetParams,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || memset_op(pMemsetParams))
}

/// `hipGraphAddHostNode`: `fn(userData)` on a runtime thread, as `hipLaunchHostFunc`. Errors:
/// `hipErrorInvalidValue` (null params or `fn`), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddHostNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pNodeParams: *const hipHostNodeParams,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || host_op(pNodeParams))
}

/// `hipGraphAddKernelNode`: a kernel launch, with a copy of its arguments taken now; the
/// parameters reported later point `kernelParams` at that copy. Errors as `kernel_op`
/// (`hipErrorInvalidValue`, `hipErrorInvalidDeviceFunction`), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddKernelNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pNodeParams: *const hipKernelNodeParams,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || kernel_op(pNodeParams))
}

/// `hipGraphAddEventRecordNode`: records `event` (as `hipEventRecord`) when the node runs.
/// Errors: `hipErrorInvalidValue` (null or unknown event), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddEventRecordNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    event: hipEvent_t,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || {
        Ok(Op::EventRecord(Arc::downgrade(&event_in(event)?)))
    })
}

/// `hipGraphAddEventWaitNode`: later nodes wait for `event`'s last record (as
/// `hipStreamWaitEvent`). Errors as [`hipGraphAddEventRecordNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddEventWaitNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    event: hipEvent_t,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || Ok(Op::EventWait(Arc::downgrade(&event_in(event)?))))
}

/// `hipGraphAddChildGraphNode`: runs a copy of `childGraph` (taken now) as one node.
/// `childGraph` may be `graph` itself: the node then runs the graph as it was before the node
/// was added (clr clones the child). Errors: `hipErrorInvalidValue` (null or unknown child
/// graph), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddChildGraphNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    childGraph: hipGraph_t,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || Ok(Op::Child(graph_in(childGraph)?.deep_clone())))
}

/// `hipGraphAddDependencies` (`add`) / `hipGraphRemoveDependencies`: checks that every pair is
/// two distinct nodes of the graph, then adds or removes the edges `from[i] → to[i]` in order.
fn edit_edges(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    n: usize,
    add: bool,
) -> hipError_t {
    api(|| {
        let g = graph_in(graph)?;
        let (a, b) = (nodes_in(from, n)?, nodes_in(to, n)?);
        for (x, y) in a.iter().zip(&b) {
            check(x.id != y.id && g.owns(x) && g.owns(y))?;
        }
        for (x, y) in a.iter().zip(&b) {
            if add {
                g.add_edge(x, y)?;
            } else {
                g.remove_edge(x, y)?;
            }
        }
        Ok(())
    })
}

/// `hipGraphAddDependencies`: adds the edges `from[i] → to[i]`. Errors: `hipErrorInvalidValue`
/// (unknown graph or node, null arrays with a count, a node to itself, nodes of another graph,
/// an existing edge); nothing is added then (clr checks all pairs first, then adds up to a
/// duplicate).
#[no_mangle]
pub extern "C" fn hipGraphAddDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    numDependencies: usize,
) -> hipError_t {
    edit_edges(graph, from, to, numDependencies, true)
}

/// `hipGraphRemoveDependencies`: removes the edges `from[i] → to[i]`. Errors:
/// `hipErrorInvalidValue` (as [`hipGraphAddDependencies`], and an edge that does not exist).
#[no_mangle]
pub extern "C" fn hipGraphRemoveDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    numDependencies: usize,
) -> hipError_t {
    edit_edges(graph, from, to, numDependencies, false)
}

/// `hipGraphGetNodes`: the graph's nodes in a topological order (clr), written as
/// [`fill_nodes`] does. Errors: `hipErrorInvalidValue` (unknown graph, null `numNodes`, a cycle).
#[no_mangle]
pub extern "C" fn hipGraphGetNodes(graph: hipGraph_t, nodes: *mut hipGraphNode_t, numNodes: *mut usize) -> hipError_t {
    api(|| {
        check(!numNodes.is_null())?;
        fill_nodes(nodes, numNodes, &graph_in(graph)?.topo()?)
    })
}

/// `hipGraphGetRootNodes`: the nodes without dependencies. Errors: `hipErrorInvalidValue`
/// (unknown graph, null count).
#[no_mangle]
pub extern "C" fn hipGraphGetRootNodes(
    graph: hipGraph_t,
    pRootNodes: *mut hipGraphNode_t,
    pNumRootNodes: *mut usize,
) -> hipError_t {
    api(|| {
        check(!pNumRootNodes.is_null())?;
        fill_nodes(pRootNodes, pNumRootNodes, &graph_in(graph)?.roots())
    })
}

/// `hipGraphGetEdges`: the edges as `from[i] → to[i]`; both arrays null: only the count.
/// Errors: `hipErrorInvalidValue` (unknown graph, null count, one array null but not the other).
#[no_mangle]
pub extern "C" fn hipGraphGetEdges(
    graph: hipGraph_t,
    from: *mut hipGraphNode_t,
    to: *mut hipGraphNode_t,
    numEdges: *mut usize,
) -> hipError_t {
    api(|| {
        let n = read_in(numEdges)?;
        check(from.is_null() == to.is_null())?;
        let edges = graph_in(graph)?.edges();
        if from.is_null() {
            return write_out(numEdges, edges.len());
        }
        write_slice(from, &handles(edges.iter().map(|e| &e.0), n))?;
        write_slice(to, &handles(edges.iter().map(|e| &e.1), n))?;
        if n > edges.len() {
            write_out(numEdges, edges.len())?;
        }
        Ok(())
    })
}

/// `hipGraphNodeGetType`. Errors: `hipErrorInvalidValue` (unknown node, null `pType`).
#[no_mangle]
pub extern "C" fn hipGraphNodeGetType(node: hipGraphNode_t, pType: *mut hipGraphNodeType) -> hipError_t {
    api(|| {
        check(!pType.is_null())?;
        write_out(pType, node_in(node)?.node_type())
    })
}

fn neighbours(node: hipGraphNode_t, out: *mut hipGraphNode_t, num: *mut usize, dependents: bool) -> hipError_t {
    api(|| {
        let n = node_in(node)?;
        check(!num.is_null())?;
        let g = n.graph.upgrade().ok_or(hipError_t::hipErrorInvalidValue)?;
        fill_nodes(out, num, &g.neighbours(&n, dependents))
    })
}

/// `hipGraphNodeGetDependencies`: the nodes `node` depends on. Errors: `hipErrorInvalidValue`
/// (unknown node, null count).
#[no_mangle]
pub extern "C" fn hipGraphNodeGetDependencies(
    node: hipGraphNode_t,
    pDependencies: *mut hipGraphNode_t,
    pNumDependencies: *mut usize,
) -> hipError_t {
    neighbours(node, pDependencies, pNumDependencies, false)
}

/// `hipGraphNodeGetDependentNodes`: the nodes depending on `node`. Errors as
/// [`hipGraphNodeGetDependencies`].
#[no_mangle]
pub extern "C" fn hipGraphNodeGetDependentNodes(
    node: hipGraphNode_t,
    pDependentNodes: *mut hipGraphNode_t,
    pNumDependentNodes: *mut usize,
) -> hipError_t {
    neighbours(node, pDependentNodes, pNumDependentNodes, true)
}

/// `hipGraphDestroyNode`: removes the node and its edges from its graph. Errors:
/// `hipErrorInvalidValue` (unknown node).
#[no_mangle]
pub extern "C" fn hipGraphDestroyNode(node: hipGraphNode_t) -> hipError_t {
    api(|| {
        let n = node_in(node)?;
        let g = n.graph.upgrade().ok_or(hipError_t::hipErrorInvalidValue)?;
        g.remove(&n);
        Ok(())
    })
}

/// `hipGraphClone`: a copy of the graph (child graphs copied too), owned by the caller.
/// Errors: `hipErrorInvalidValue` (null, unknown graph).
#[no_mangle]
pub extern "C" fn hipGraphClone(pGraphClone: *mut hipGraph_t, originalGraph: hipGraph_t) -> hipError_t {
    api(|| {
        check(!pGraphClone.is_null())?;
        let g = graph_in(originalGraph)?;
        write_out(pGraphClone, own(g.deep_clone()))
    })
}

/// `hipGraphNodeFindInClone`: the node of `clonedGraph` copied from `originalNode`. Errors:
/// `hipErrorInvalidValue` (null or unknown arguments, a graph that is not a clone, no such node).
#[no_mangle]
pub extern "C" fn hipGraphNodeFindInClone(
    pNode: *mut hipGraphNode_t,
    originalNode: hipGraphNode_t,
    clonedGraph: hipGraph_t,
) -> hipError_t {
    api(|| {
        check(!pNode.is_null())?;
        let (n, g) = (node_in(originalNode)?, graph_in(clonedGraph)?);
        check(g.cloned)?;
        let c = g.find_clone_of(&n).ok_or(hipError_t::hipErrorInvalidValue)?;
        write_out(pNode, c.handle() as hipGraphNode_t)
    })
}

// ---------------------------------------------------------------------------------------------
// Node parameters
// ---------------------------------------------------------------------------------------------

/// The node's operation when it is of type `t`. Errors: `hipErrorInvalidValue`.
fn op_of(node: hipGraphNode_t, t: hipGraphNodeType) -> Result<Op, hipError_t> {
    let op = node_in(node)?.op();
    check(op.node_type() == t)?;
    Ok(op)
}

/// Sets a node's operation (made by `op`, of the node's type). Errors: `hipErrorInvalidValue`
/// (unknown node, another type), `op`'s.
fn set_node(node: hipGraphNode_t, op: impl FnOnce() -> Result<Op, hipError_t>) -> hipError_t {
    api(|| {
        let n = node_in(node)?;
        n.set_op(op()?)
    })
}

/// Sets the operation of the executable graph's step made from `node`. A copy (`kind` given)
/// must keep the step's direction, checked before the new parameters as clr does
/// (`hipGraphExecMemcpyNodeSetParams*`: `oldkind != kind`). Errors: `hipErrorInvalidValue`
/// (unknown executable graph or node, a node not instantiated in it, another type, another
/// direction), `op`'s.
fn set_exec_node(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    kind: Option<hipMemcpyKind>,
    op: impl FnOnce() -> Result<Op, hipError_t>,
) -> hipError_t {
    api(|| {
        let x = exec_in(exec)?;
        let n = node_in(node)?;
        if let Some(k) = kind {
            check(x.copy_kind(&n)? == Some(k))?;
        }
        x.set_op(&n, op()?)
    })
}

/// `hipGraphMemcpyNodeGetParams`: a copy node's parameters (a 1D copy as a one-row block).
/// Errors: `hipErrorInvalidValue` (unknown node, not a copy, null `pNodeParams`).
#[no_mangle]
pub extern "C" fn hipGraphMemcpyNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipMemcpy3DParms) -> hipError_t {
    api(|| {
        check(!pNodeParams.is_null())?;
        let p = match op_of(node, hipGraphNodeType::hipGraphNodeTypeMemcpy)? {
            Op::Memcpy3D { parms, .. } => parms.0,
            Op::Memcpy { dst, src, len, kind } => {
                let pos = hipPos { x: 0, y: 0, z: 0 };
                let ptr = |p: u64| hipPitchedPtr {
                    ptr: p as *mut c_void,
                    pitch: len as usize,
                    xsize: len as usize,
                    ysize: 1,
                };
                hipMemcpy3DParms {
                    srcArray: std::ptr::null_mut(),
                    srcPos: pos,
                    srcPtr: ptr(src),
                    dstArray: std::ptr::null_mut(),
                    dstPos: pos,
                    dstPtr: ptr(dst),
                    extent: hipExtent { width: len as usize, height: 1, depth: 1 },
                    kind,
                }
            }
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        write_out(pNodeParams, p)
    })
}

/// `hipGraphMemcpyNodeSetParams`. Errors: as [`hipGraphAddMemcpyNode`]'s checks, and
/// `hipErrorInvalidValue` (unknown node, not a copy).
#[no_mangle]
pub extern "C" fn hipGraphMemcpyNodeSetParams(
    node: hipGraphNode_t,
    pNodeParams: *const hipMemcpy3DParms,
) -> hipError_t {
    set_node(node, || memcpy_op(pNodeParams))
}

/// `hipGraphMemcpyNodeSetParams1D`. Errors as [`hipGraphAddMemcpyNode1D`] and
/// [`hipGraphMemcpyNodeSetParams`].
#[no_mangle]
pub extern "C" fn hipGraphMemcpyNodeSetParams1D(
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    set_node(node, || {
        check(!std::ptr::eq(src, dst))?;
        memcpy_1d_op(dst, src, count, kind)
    })
}

/// `hipGraphMemcpyNodeSetParamsToSymbol`. Errors as [`hipGraphAddMemcpyNodeToSymbol`].
#[no_mangle]
pub extern "C" fn hipGraphMemcpyNodeSetParamsToSymbol(
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    set_node(node, || {
        symbol_node_checks(src, symbol, count, offset, kind, true)?;
        to_symbol_op(symbol, src, count, offset, kind)
    })
}

/// `hipGraphMemcpyNodeSetParamsFromSymbol`. Errors as [`hipGraphAddMemcpyNodeFromSymbol`].
#[no_mangle]
pub extern "C" fn hipGraphMemcpyNodeSetParamsFromSymbol(
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    set_node(node, || {
        symbol_node_checks(dst, symbol, count, offset, kind, false)?;
        from_symbol_op(dst, symbol, count, offset, kind)
    })
}

/// `hipGraphMemsetNodeGetParams`. Errors: `hipErrorInvalidValue` (unknown node, not a memset,
/// null `pNodeParams`).
#[no_mangle]
pub extern "C" fn hipGraphMemsetNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipMemsetParams) -> hipError_t {
    api(|| {
        check(!pNodeParams.is_null())?;
        match op_of(node, hipGraphNodeType::hipGraphNodeTypeMemset)? {
            Op::Memset { p, .. } => write_out(pNodeParams, p.0),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// `hipGraphMemsetNodeSetParams`. Errors as [`hipGraphAddMemsetNode`]'s checks, and
/// `hipErrorInvalidValue` (unknown node, not a memset).
#[no_mangle]
pub extern "C" fn hipGraphMemsetNodeSetParams(node: hipGraphNode_t, pNodeParams: *const hipMemsetParams) -> hipError_t {
    set_node(node, || memset_op(pNodeParams))
}

/// `hipGraphHostNodeGetParams`. Errors: `hipErrorInvalidValue` (unknown node, not a host node,
/// null `pNodeParams`).
#[no_mangle]
pub extern "C" fn hipGraphHostNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipHostNodeParams) -> hipError_t {
    api(|| {
        check(!pNodeParams.is_null())?;
        match op_of(node, hipGraphNodeType::hipGraphNodeTypeHost)? {
            Op::Host { fn_, data } => {
                write_out(pNodeParams, hipHostNodeParams { r#fn: Some(fn_), userData: data as *mut c_void })
            }
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// `hipGraphHostNodeSetParams`. Errors: `hipErrorInvalidValue` (unknown node, not a host node,
/// null params or `fn`).
#[no_mangle]
pub extern "C" fn hipGraphHostNodeSetParams(node: hipGraphNode_t, pNodeParams: *const hipHostNodeParams) -> hipError_t {
    set_node(node, || host_op(pNodeParams))
}

/// `hipGraphKernelNodeGetParams`. Errors: `hipErrorInvalidValue` (unknown node, not a kernel
/// node, null `pNodeParams`).
#[no_mangle]
pub extern "C" fn hipGraphKernelNodeGetParams(
    node: hipGraphNode_t,
    pNodeParams: *mut hipKernelNodeParams,
) -> hipError_t {
    api(|| {
        check(!pNodeParams.is_null())?;
        match op_of(node, hipGraphNodeType::hipGraphNodeTypeKernel)? {
            Op::Kernel(n) => write_out(pNodeParams, n.params()),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// The kernel node `h` names, for the attribute calls, after clr's checks of `attr`
/// (`AccessPolicyWindow`, `Cooperative`, `Priority`). Errors: `hipErrorInvalidValue` (unknown
/// node or attribute, not a kernel node).
fn kernel_node(h: hipGraphNode_t, attr: hipKernelNodeAttrID) -> Result<Arc<Node>, hipError_t> {
    type A = hipLaunchAttributeID;
    check(matches!(
        attr,
        A::hipLaunchAttributeAccessPolicyWindow | A::hipLaunchAttributeCooperative | A::hipLaunchAttributePriority
    ))?;
    let n = node_in(h)?;
    check(n.node_type() == hipGraphNodeType::hipGraphNodeTypeKernel)?;
    Ok(n)
}

/// `hipGraphKernelNodeSetAttribute`: records attribute `attr` of kernel node `hNode` (the last
/// one set is the node's attribute in use). Recorded only: there is no L2 persistence window or
/// cooperative launch mode to apply. Errors (clr `hipGraphKernelNodeSetAttribute`,
/// `GraphKernelNode::SetAttrParams`; hip-tests `hipGraphKernelNodeSetAttribute.cc`):
/// `hipErrorInvalidValue` (null node or value, unknown node or attribute, not a kernel node; an
/// access policy window with a hit ratio outside [0, 1], a `missProp` of
/// `hipAccessPropertyPersisting`, bytes but a zero hit ratio, more bytes than
/// `hipDeviceAttributeAccessPolicyMaxWindowSize`; a priority outside [-1, 1]).
#[no_mangle]
pub extern "C" fn hipGraphKernelNodeSetAttribute(
    hNode: hipGraphNode_t,
    attr: hipKernelNodeAttrID,
    value: *const hipKernelNodeAttrValue,
) -> hipError_t {
    api(|| {
        check(!hNode.is_null() && !value.is_null())?;
        let n = kernel_node(hNode, attr)?;
        let mut a = *n.attrs.lock();
        type A = hipLaunchAttributeID;
        match attr {
            A::hipLaunchAttributeAccessPolicyWindow => {
                let w = read_in(value as *const hipAccessPolicyWindow)?;
                let (rt, d) = rt_dev()?;
                let max = rt.devices[d].props.accessPolicyMaxWindowSize.max(0) as usize;
                check((0.0..=1.0).contains(&w.hitRatio))?;
                check(w.missProp != hipAccessProperty::hipAccessPropertyPersisting)?;
                check(w.num_bytes == 0 || w.hitRatio != 0.0)?;
                check(w.num_bytes <= max)?;
                a.window = (w.base_ptr as u64, w.hitProp.0, w.hitRatio, w.missProp.0, w.num_bytes as u64);
            }
            A::hipLaunchAttributeCooperative => a.cooperative = read_in(value as *const c_int)?,
            _ => {
                // clr tests `priority < Low (1) || priority > High (-1)`, which refuses every
                // value; the intended range is High..=Low.
                let p = read_in(value as *const c_int)?;
                check((-1..=1).contains(&p))?;
                a.priority = p;
            }
        }
        a.in_use = attr.0;
        *n.attrs.lock() = a;
        Ok(())
    })
}

/// `hipGraphKernelNodeGetAttribute`: attribute `attr` of kernel node `hNode` (zero when never
/// set); only the member of `attr` is written. Errors (clr `GraphKernelNode::GetAttrParams`;
/// hip-tests `hipGraphKernelNodeGetAttribute.cc`): `hipErrorInvalidValue` (null node or value,
/// unknown node or attribute, not a kernel node, another attribute in use).
#[no_mangle]
pub extern "C" fn hipGraphKernelNodeGetAttribute(
    hNode: hipGraphNode_t,
    attr: hipKernelNodeAttrID,
    value: *mut hipKernelNodeAttrValue,
) -> hipError_t {
    api(|| {
        check(!hNode.is_null() && !value.is_null())?;
        let a = *kernel_node(hNode, attr)?.attrs.lock();
        check(a.in_use == 0 || a.in_use == attr.0)?;
        type A = hipLaunchAttributeID;
        match attr {
            A::hipLaunchAttributeAccessPolicyWindow => {
                let (base, hit, ratio, miss, bytes) = a.window;
                let w = hipAccessPolicyWindow {
                    base_ptr: base as *mut c_void,
                    hitProp: hipAccessProperty(hit),
                    hitRatio: ratio,
                    missProp: hipAccessProperty(miss),
                    num_bytes: bytes as usize,
                };
                write_out(value as *mut hipAccessPolicyWindow, w)
            }
            A::hipLaunchAttributeCooperative => write_out(value as *mut c_int, a.cooperative),
            _ => write_out(value as *mut c_int, a.priority),
        }
    })
}

/// `hipGraphKernelNodeCopyAttributes`: gives kernel node `hDst` the attributes of kernel node
/// `hSrc`. Errors (clr `GraphKernelNode::CopyAttr`): `hipErrorInvalidValue` (null or unknown
/// nodes, not kernel nodes), `hipErrorInvalidContext` (`hDst` has an attribute in use that
/// `hSrc` has not).
#[no_mangle]
pub extern "C" fn hipGraphKernelNodeCopyAttributes(hSrc: hipGraphNode_t, hDst: hipGraphNode_t) -> hipError_t {
    api(|| {
        check(!hSrc.is_null() && !hDst.is_null())?;
        let (src, dst) = (node_in(hSrc)?, node_in(hDst)?);
        let kernel = hipGraphNodeType::hipGraphNodeTypeKernel;
        check(src.node_type() == kernel && dst.node_type() == kernel)?;
        let s = *src.attrs.lock();
        let mut d = dst.attrs.lock();
        if d.in_use != 0 && d.in_use != s.in_use {
            return Err(hipError_t::hipErrorInvalidContext);
        }
        *d = s;
        Ok(())
    })
}

/// `hipGraphKernelNodeSetParams`. Errors as [`hipGraphAddKernelNode`]'s checks, and
/// `hipErrorInvalidValue` (unknown node, not a kernel node).
#[no_mangle]
pub extern "C" fn hipGraphKernelNodeSetParams(
    node: hipGraphNode_t,
    pNodeParams: *const hipKernelNodeParams,
) -> hipError_t {
    set_node(node, || kernel_op(pNodeParams))
}

/// The event of an event node of type `t`.
fn node_event(node: hipGraphNode_t, t: hipGraphNodeType, out: *mut hipEvent_t) -> hipError_t {
    api(|| {
        check(!out.is_null())?;
        match op_of(node, t)? {
            Op::EventRecord(e) | Op::EventWait(e) => write_out(out, e.as_ptr() as hipEvent_t),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

fn event_op(event: hipEvent_t, record: bool) -> Result<Op, hipError_t> {
    let e = Arc::downgrade(&event_in(event)?);
    Ok(if record { Op::EventRecord(e) } else { Op::EventWait(e) })
}

/// `hipGraphEventRecordNodeGetEvent`. Errors: `hipErrorInvalidValue` (unknown node, not an
/// event record node, null `event_out`).
#[no_mangle]
pub extern "C" fn hipGraphEventRecordNodeGetEvent(node: hipGraphNode_t, event_out: *mut hipEvent_t) -> hipError_t {
    node_event(node, hipGraphNodeType::hipGraphNodeTypeEventRecord, event_out)
}

/// `hipGraphEventRecordNodeSetEvent`. Errors: `hipErrorInvalidValue` (unknown node, not an
/// event record node, null or unknown event).
#[no_mangle]
pub extern "C" fn hipGraphEventRecordNodeSetEvent(node: hipGraphNode_t, event: hipEvent_t) -> hipError_t {
    set_node(node, || event_op(event, true))
}

/// `hipGraphEventWaitNodeGetEvent`. Errors as [`hipGraphEventRecordNodeGetEvent`].
#[no_mangle]
pub extern "C" fn hipGraphEventWaitNodeGetEvent(node: hipGraphNode_t, event_out: *mut hipEvent_t) -> hipError_t {
    node_event(node, hipGraphNodeType::hipGraphNodeTypeWaitEvent, event_out)
}

/// `hipGraphEventWaitNodeSetEvent`. Errors as [`hipGraphEventRecordNodeSetEvent`].
#[no_mangle]
pub extern "C" fn hipGraphEventWaitNodeSetEvent(node: hipGraphNode_t, event: hipEvent_t) -> hipError_t {
    set_node(node, || event_op(event, false))
}

/// `hipGraphChildGraphNodeGetGraph`: the child graph node's own graph (owned by the node).
/// Errors: `hipErrorInvalidValue` (unknown node, not a child graph node, null `pGraph`).
#[no_mangle]
pub extern "C" fn hipGraphChildGraphNodeGetGraph(node: hipGraphNode_t, pGraph: *mut hipGraph_t) -> hipError_t {
    api(|| {
        check(!pGraph.is_null())?;
        match op_of(node, hipGraphNodeType::hipGraphNodeTypeGraph)? {
            Op::Child(g) => write_out(pGraph, g.handle() as hipGraph_t),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Executable graphs
// ---------------------------------------------------------------------------------------------

fn instantiate(pGraphExec: *mut hipGraphExec_t, graph: hipGraph_t, flags: u64) -> Result<(), hipError_t> {
    check(!pGraphExec.is_null())?;
    let g = graph_in(graph)?;
    let x = Arc::new(Exec::new(&g, flags)?);
    let h = EXECS.insert(x);
    write_out(pGraphExec, h as hipGraphExec_t)
}

/// `hipGraphInstantiate`: an executable snapshot of the graph (later edits of the graph do not
/// reach it). `pErrorNode` and `pLogBuffer` are not written. Errors: `hipErrorInvalidValue`
/// (null, unknown graph, a cycle).
#[no_mangle]
pub extern "C" fn hipGraphInstantiate(
    pGraphExec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    pErrorNode: *mut hipGraphNode_t,
    pLogBuffer: *mut c_char,
    bufferSize: usize,
) -> hipError_t {
    let _ = (pErrorNode, pLogBuffer, bufferSize);
    api(|| instantiate(pGraphExec, graph, 0))
}

/// `hipGraphInstantiateWithFlags`: `flags` 0, `hipGraphInstantiateFlagAutoFreeOnLaunch` or
/// `hipGraphInstantiateFlagUseNodePriority` (accepted; neither changes anything here). Errors:
/// as [`hipGraphInstantiate`], `hipErrorInvalidValue` for other flags.
#[no_mangle]
pub extern "C" fn hipGraphInstantiateWithFlags(
    pGraphExec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    flags: c_ulonglong,
) -> hipError_t {
    api(|| {
        check(matches!(flags, 0 | 1 | 8))?;
        instantiate(pGraphExec, graph, flags)
    })
}

/// `hipGraphLaunch`: queues the executable graph's nodes on `stream`, in a topological order,
/// asynchronously and in stream order (independent branches run one after another); kernel nodes
/// run as `hipLaunchKernel` with the arguments copied when the node was made. Errors:
/// `hipErrorInvalidValue` (null or destroyed executable graph), `hipErrorContextIsDestroyed`
/// (unknown stream), the nodes' operations'.
#[no_mangle]
pub extern "C" fn hipGraphLaunch(graphExec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    api(|| {
        let x = exec_in(graphExec)?;
        let (rt, _) = rt_dev()?;
        let s = stream_of(rt, stream)?;
        rt.exec_launch(&x, &s)
    })
}

/// `hipGraphUpload`: nothing to do ahead of a launch here; checks its arguments. Errors:
/// `hipErrorInvalidValue` (null or destroyed executable graph), `hipErrorContextIsDestroyed`
/// (unknown stream).
#[no_mangle]
pub extern "C" fn hipGraphUpload(graphExec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    api(|| {
        check(!graphExec.is_null())?;
        let (rt, _) = rt_dev()?;
        stream_of(rt, stream)?;
        exec_in(graphExec).map(drop)
    })
}

/// `hipGraphExecDestroy`: releases the executable graph (launches already queued go on).
/// Errors: `hipErrorInvalidValue` (null, destroyed).
#[no_mangle]
pub extern "C" fn hipGraphExecDestroy(graphExec: hipGraphExec_t) -> hipError_t {
    api(|| {
        let x = EXECS.remove(graphExec as usize);
        x.map(drop).ok_or(hipError_t::hipErrorInvalidValue)
    })
}

/// `hipGraphExecMemcpyNodeSetParams`: the copy the executable graph's step made from `node`
/// does from the next launch on. Errors: `hipErrorInvalidValue` (unknown executable graph or
/// node, a node not instantiated in it or not a copy), as [`hipGraphAddMemcpyNode`]'s checks.
#[no_mangle]
pub extern "C" fn hipGraphExecMemcpyNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipMemcpy3DParms,
) -> hipError_t {
    set_exec_node(hGraphExec, node, read_in(pNodeParams).ok().map(|p| p.kind), || memcpy_op(pNodeParams))
}

/// `hipGraphExecMemcpyNodeSetParams1D`. Errors as [`hipGraphExecMemcpyNodeSetParams`] and
/// [`hipGraphAddMemcpyNode1D`].
#[no_mangle]
pub extern "C" fn hipGraphExecMemcpyNodeSetParams1D(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    set_exec_node(hGraphExec, node, Some(kind), || {
        check(!std::ptr::eq(src, dst))?;
        memcpy_1d_op(dst, src, count, kind)
    })
}

/// `hipGraphExecMemcpyNodeSetParamsToSymbol`. Errors as [`hipGraphExecMemcpyNodeSetParams`] and
/// [`hipGraphAddMemcpyNodeToSymbol`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipGraphExecMemcpyNodeSetParamsToSymbol(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    set_exec_node(hGraphExec, node, Some(kind), || {
        symbol_node_checks(src, symbol, count, offset, kind, true)?;
        to_symbol_op(symbol, src, count, offset, kind)
    })
}

/// `hipGraphExecMemcpyNodeSetParamsFromSymbol`. Errors as [`hipGraphExecMemcpyNodeSetParams`]
/// and [`hipGraphAddMemcpyNodeFromSymbol`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipGraphExecMemcpyNodeSetParamsFromSymbol(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    set_exec_node(hGraphExec, node, Some(kind), || {
        symbol_node_checks(dst, symbol, count, offset, kind, false)?;
        from_symbol_op(dst, symbol, count, offset, kind)
    })
}

/// `hipGraphExecMemsetNodeSetParams`. Errors as [`hipGraphExecMemcpyNodeSetParams`] and
/// [`hipGraphAddMemsetNode`].
#[no_mangle]
pub extern "C" fn hipGraphExecMemsetNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipMemsetParams,
) -> hipError_t {
    set_exec_node(hGraphExec, node, None, || memset_op(pNodeParams))
}

/// `hipGraphExecHostNodeSetParams`. Errors as [`hipGraphExecMemcpyNodeSetParams`] and
/// [`hipGraphAddHostNode`].
#[no_mangle]
pub extern "C" fn hipGraphExecHostNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipHostNodeParams,
) -> hipError_t {
    set_exec_node(hGraphExec, node, None, || host_op(pNodeParams))
}

/// `hipGraphExecKernelNodeSetParams`. Errors as [`hipGraphExecMemcpyNodeSetParams`] and
/// [`hipGraphAddKernelNode`].
#[no_mangle]
pub extern "C" fn hipGraphExecKernelNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipKernelNodeParams,
) -> hipError_t {
    set_exec_node(hGraphExec, node, None, || kernel_op(pNodeParams))
}

/// `hipGraphExecEventRecordNodeSetEvent`. Errors as [`hipGraphExecMemcpyNodeSetParams`] and
/// [`hipGraphAddEventRecordNode`].
#[no_mangle]
pub extern "C" fn hipGraphExecEventRecordNodeSetEvent(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    set_exec_node(hGraphExec, hNode, None, || event_op(event, true))
}

/// `hipGraphExecEventWaitNodeSetEvent`. Errors as [`hipGraphExecEventRecordNodeSetEvent`].
#[no_mangle]
pub extern "C" fn hipGraphExecEventWaitNodeSetEvent(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    set_exec_node(hGraphExec, hNode, None, || event_op(event, false))
}

/// `hipGraphExecChildGraphNodeSetParams`: the executable graph's child graph step made from
/// `node` runs a copy of `childGraph` from the next launch on; `childGraph` must have the same
/// topology and node types as the child graph instantiated. Errors: `hipErrorInvalidValue`
/// (unknown arguments, `node` not a child graph node, the node's own graph, another topology).
#[no_mangle]
pub extern "C" fn hipGraphExecChildGraphNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    childGraph: hipGraph_t,
) -> hipError_t {
    set_exec_node(hGraphExec, node, None, || {
        let n = node_in(node)?;
        let g = graph_in(childGraph)?;
        check(n.graph.upgrade().is_none_or(|p| !Arc::ptr_eq(&p, &g)))?;
        let Op::Child(cur) = n.op() else { return Err(hipError_t::hipErrorInvalidValue) };
        // The new child must fit the one instantiated: an update of a one-step executable graph.
        Exec::new(&cur, 0)?.update(&g).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        Ok(Op::Child(g.deep_clone()))
    })
}

/// `hipGraphExecUpdate`: takes the node parameters of `hGraph`, which must have the executable
/// graph's topology, node types and copy directions (nodes matched in topological order, clr's
/// checks). On a mismatch nothing changes, `*updateResult_out` says why
/// (`hipGraphExecUpdateErrorTopologyChanged`, `...NodeTypeChanged`, `...ParametersChanged`),
/// `*hErrorNode_out` is the first differing node (or null), and the call fails with
/// `hipErrorGraphExecUpdateFailure`. Errors: `hipErrorInvalidValue` (unknown executable graph or
/// graph, null out-pointers).
#[no_mangle]
pub extern "C" fn hipGraphExecUpdate(
    hGraphExec: hipGraphExec_t,
    hGraph: hipGraph_t,
    hErrorNode_out: *mut hipGraphNode_t,
    updateResult_out: *mut hipGraphExecUpdateResult,
) -> hipError_t {
    api(|| {
        check(!updateResult_out.is_null() && !hErrorNode_out.is_null())?;
        let (x, g) = (exec_in(hGraphExec)?, graph_in(hGraph)?);
        match x.update(&g) {
            Ok(()) => write_out(updateResult_out, hipGraphExecUpdateResult::hipGraphExecUpdateSuccess),
            Err((r, n)) => {
                write_out(updateResult_out, r)?;
                write_out(hErrorNode_out, n.map_or(std::ptr::null_mut(), |n| n.handle() as hipGraphNode_t))?;
                Err(hipError_t::hipErrorGraphExecUpdateFailure)
            }
        }
    })
}

/// `hipGraphNodeSetEnabled`: enables (`isEnabled` ≠ 0) or disables the executable graph's step
/// made from `hNode`; a disabled step does nothing when launched. Errors: `hipErrorInvalidValue`
/// (unknown executable graph or node, a node not instantiated in it, not a kernel, copy or fill
/// node: clr).
#[no_mangle]
pub extern "C" fn hipGraphNodeSetEnabled(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    isEnabled: c_uint,
) -> hipError_t {
    api(|| {
        let n = node_in(hNode)?;
        exec_in(hGraphExec)?.enabled(&n, Some(isEnabled != 0)).map(drop)
    })
}

/// `hipGraphNodeGetEnabled`: 1 when the step made from `hNode` is enabled, else 0. Errors as
/// [`hipGraphNodeSetEnabled`], and `hipErrorInvalidValue` for a null `isEnabled`.
#[no_mangle]
pub extern "C" fn hipGraphNodeGetEnabled(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    isEnabled: *mut c_uint,
) -> hipError_t {
    api(|| {
        check(!isEnabled.is_null())?;
        let n = node_in(hNode)?;
        let e = exec_in(hGraphExec)?.enabled(&n, None)?;
        write_out(isEnabled, e as c_uint)
    })
}

/// `hipGraphExecGetFlags`: the flags the executable graph was instantiated with. Errors:
/// `hipErrorInvalidValue` (null, unknown executable graph).
#[no_mangle]
pub extern "C" fn hipGraphExecGetFlags(graphExec: hipGraphExec_t, flags: *mut c_ulonglong) -> hipError_t {
    api(|| {
        check(!flags.is_null())?;
        write_out(flags, exec_in(graphExec)?.flags)
    })
}

// ---------------------------------------------------------------------------------------------
// User objects
// ---------------------------------------------------------------------------------------------

/// A count argument of the user object calls: 1 to `INT_MAX` (clr). Errors:
/// `hipErrorInvalidValue`.
fn ref_count(count: c_uint) -> Result<u32, hipError_t> {
    check(count != 0 && count <= c_int::MAX as c_uint)?;
    Ok(count)
}

/// `hipUserObjectCreate`: a user object whose destructor `destroy(ptr)` runs when its last
/// reference goes, with `initialRefcount` references. Errors: `hipErrorInvalidValue` (null
/// `object_out` or `destroy`, a count of 0 or above `INT_MAX`, `flags` other than
/// `hipUserObjectNoDestructorSync`).
#[no_mangle]
pub extern "C" fn hipUserObjectCreate(
    object_out: *mut hipUserObject_t,
    ptr: *mut c_void,
    destroy: hipHostFn_t,
    initialRefcount: c_uint,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!object_out.is_null() && flags == hipUserObjectFlags::hipUserObjectNoDestructorSync.0 as c_uint)?;
        let destroy = destroy.ok_or(hipError_t::hipErrorInvalidValue)?;
        let refs = ref_count(initialRefcount)?;
        rt_dev()?;
        write_out(object_out, graph::user_object_create(destroy, ptr as usize, refs) as hipUserObject_t)
    })
}

/// `hipUserObjectRelease`: `count` fewer references; the last runs the destructor. Releasing
/// more than the object has, or a destroyed object, does nothing (clr). Errors:
/// `hipErrorInvalidValue` (null, a count of 0 or above `INT_MAX`).
#[no_mangle]
pub extern "C" fn hipUserObjectRelease(object: hipUserObject_t, count: c_uint) -> hipError_t {
    api(|| {
        check(!object.is_null())?;
        graph::user_object_release(object as usize, ref_count(count)?);
        Ok(())
    })
}

/// `hipUserObjectRetain`: `count` more references (a destroyed object is ignored, as clr).
/// Errors: as [`hipUserObjectRelease`].
#[no_mangle]
pub extern "C" fn hipUserObjectRetain(object: hipUserObject_t, count: c_uint) -> hipError_t {
    api(|| {
        check(!object.is_null())?;
        graph::user_object_retain(object as usize, ref_count(count)?);
        Ok(())
    })
}

/// `hipGraphRetainUserObject`: `graph` owns `count` more references to `object`, new ones, or
/// with `hipGraphUserObjectMove` the caller's. Executable graphs made from it and its clones own
/// one each. Errors: `hipErrorInvalidValue` (null or unknown graph, null object, a count of 0
/// or above `INT_MAX`, `flags` other than 0 and `hipGraphUserObjectMove`).
#[no_mangle]
pub extern "C" fn hipGraphRetainUserObject(
    graph: hipGraph_t,
    object: hipUserObject_t,
    count: c_uint,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        let g = graph_in(graph)?;
        let count = ref_count(count)?;
        let take = hipUserObjectRetainFlags::hipGraphUserObjectMove.0 as c_uint;
        check(!object.is_null() && (flags == 0 || flags == take))?;
        g.retain_user_object(object as usize, count, flags == take);
        Ok(())
    })
}

/// `hipGraphReleaseUserObject`: `graph` gives back up to `count` of its references to `object`
/// (none held: nothing happens). Errors: `hipErrorInvalidValue` (null or unknown graph, null
/// object, a count of 0 or above `INT_MAX`).
#[no_mangle]
pub extern "C" fn hipGraphReleaseUserObject(graph: hipGraph_t, object: hipUserObject_t, count: c_uint) -> hipError_t {
    api(|| {
        let g = graph_in(graph)?;
        let count = ref_count(count)?;
        check(!object.is_null())?;
        g.release_user_object(object as usize, count);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Graph memory nodes
// ---------------------------------------------------------------------------------------------

/// `hipGraphAddMemAllocNode`: a node that allocates `pNodeParams->bytesize` bytes of pinned
/// device memory at an address fixed now and written to `pNodeParams->dptr`; the memory exists
/// from the node's run until a free node, `hipFreeAsync` or `hipFree` (src/graph/mem.rs). The
/// devices of `accessDescs` with read or read-write access map it too. Errors:
/// `hipErrorInvalidValue` (null arguments, `bytesize` 0, `allocType` other than pinned, a location
/// or access descriptor that is not a visible device, more descriptors than devices), and as
/// [`hipGraphAddEmptyNode`]; `hipErrorOutOfMemory` (more than the device's VRAM).
#[no_mangle]
pub extern "C" fn hipGraphAddMemAllocNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pNodeParams: *mut hipMemAllocNodeParams,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || {
        let mut p = read_in(pNodeParams)?;
        p.dptr = std::ptr::null_mut();
        write_out(pNodeParams, p)?;
        check(p.bytesize != 0 && p.poolProps.allocType == hipMemAllocationType::hipMemAllocationTypePinned)?;
        let dev = crate::api::mempool::location_device(&p.poolProps.location)?;
        let rt = crate::core::runtime::runtime()?;
        check(p.accessDescCount <= rt.devices.len())?;
        let mut access = vec![];
        let descs = if p.accessDescCount == 0 { &[][..] } else { slice_in(p.accessDescs, p.accessDescCount)? };
        for d in descs {
            let peer = crate::api::mempool::location_device(&d.location)?;
            if peer != dev && d.flags != hipMemAccessFlags::hipMemAccessFlagsProtNone {
                access.push(peer);
            }
        }
        let a = rt.graph_mem_reserve(dev, access, p)?;
        write_out(pNodeParams, a.params.0)?;
        Ok(Op::MemAlloc(a))
    })
}

/// `hipGraphMemAllocNodeGetParams`: the parameters the allocation node was made with, `dptr`
/// its address. Errors: `hipErrorInvalidValue` (null, unknown node, not an allocation node).
#[no_mangle]
pub extern "C" fn hipGraphMemAllocNodeGetParams(
    node: hipGraphNode_t,
    pNodeParams: *mut hipMemAllocNodeParams,
) -> hipError_t {
    api(|| {
        check(!pNodeParams.is_null())?;
        match op_of(node, hipGraphNodeType::hipGraphNodeTypeMemAlloc)? {
            Op::MemAlloc(a) => write_out(pNodeParams, a.params.0),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// `hipGraphAddMemFreeNode`: a node that frees the memory of the allocation node whose address
/// is `dev_ptr`. Errors: `hipErrorInvalidValue` (null arguments, a null or empty dependency
/// list with the other given, `dev_ptr` not the address of a live allocation node or already
/// named by a free node: clr), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddMemFreeNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dev_ptr: *mut c_void,
) -> hipError_t {
    if !pDependencies.is_null() && numDependencies == 0 || dev_ptr.is_null() {
        return hipError_t::hipErrorInvalidValue;
    }
    add_node(pGraphNode, graph, pDependencies, numDependencies, || {
        let rt = crate::core::runtime::runtime()?;
        let a = rt.graph_mem_node(dev_ptr as u64).ok_or(hipError_t::hipErrorInvalidValue)?;
        check(!a.freed_by_node.swap(true, std::sync::atomic::Ordering::Relaxed))?;
        Ok(Op::MemFree(a.va))
    })
}

/// `hipGraphMemFreeNodeGetParams`: writes the address a free node frees to `*(void**)dev_ptr`.
/// Errors: `hipErrorInvalidValue` (null, unknown node, not a free node).
#[no_mangle]
pub extern "C" fn hipGraphMemFreeNodeGetParams(node: hipGraphNode_t, dev_ptr: *mut c_void) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null())?;
        match op_of(node, hipGraphNodeType::hipGraphNodeTypeMemFree)? {
            Op::MemFree(p) => write_out(dev_ptr as *mut *mut c_void, p as *mut c_void),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// The device argument of the graph-memory device calls. Errors: `hipErrorInvalidDevice`.
fn graph_mem_dev(device: c_int) -> Result<(&'static crate::core::runtime::Runtime, usize), hipError_t> {
    let rt = crate::core::runtime::runtime()?;
    Ok((rt, rt.device(device)?.ordinal))
}

/// `hipDeviceGetGraphMemAttribute`: writes a `size_t` of bytes to `value`: graph memory in use
/// now (`hipGraphMemAttrUsedMemCurrent`), reserved now (the same, plus freed memory still waiting
/// for its stream), or their high-water marks since the last reset. Errors:
/// `hipErrorInvalidDevice`, `hipErrorInvalidValue` (null `value`, not an attribute).
#[no_mangle]
pub extern "C" fn hipDeviceGetGraphMemAttribute(
    device: c_int,
    attr: hipGraphMemAttributeType,
    value: *mut c_void,
) -> hipError_t {
    api(|| {
        let (rt, d) = graph_mem_dev(device)?;
        check(!value.is_null())?;
        write_out(value as *mut usize, rt.graph_mem_attr(d, attr)? as usize)
    })
}

/// `hipDeviceSetGraphMemAttribute`: resets `hipGraphMemAttrUsedMemHigh` or
/// `hipGraphMemAttrReservedMemHigh`; `*(size_t*)value` must be 0 (CUDA: "can only be reset to
/// zero"; the mark then restarts from the current value). Errors: `hipErrorInvalidDevice`,
/// `hipErrorInvalidValue` (null `value`, another attribute, a value other than 0).
#[no_mangle]
pub extern "C" fn hipDeviceSetGraphMemAttribute(
    device: c_int,
    attr: hipGraphMemAttributeType,
    value: *mut c_void,
) -> hipError_t {
    api(|| {
        let (rt, d) = graph_mem_dev(device)?;
        check(!value.is_null())?;
        // The attribute first: `value` is not read for the others (clr; hip-tests pass -1).
        use hipGraphMemAttributeType as A;
        check(matches!(attr, A::hipGraphMemAttrUsedMemHigh | A::hipGraphMemAttrReservedMemHigh))?;
        check(read_in(value as *const usize)? == 0)?;
        rt.graph_mem_reset_high(d, attr == A::hipGraphMemAttrUsedMemHigh);
        Ok(())
    })
}

/// `hipDeviceGraphMemTrim`: gives back graph memory that is freed and whose work is done (freed
/// graph memory is never kept otherwise). Errors: `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDeviceGraphMemTrim(device: c_int) -> hipError_t {
    api(|| {
        let (rt, _) = graph_mem_dev(device)?;
        rt.graph_mem_trim();
        Ok(())
    })
}

/// `hipGraphInstantiateWithParams`: [`hipGraphInstantiateWithFlags`] with
/// `instantiateParams->flags`; `result_out` says whether it worked, `errNode_out` is null.
/// `hipGraphInstantiateFlagUpload` also checks `uploadStream` as [`hipGraphUpload`]. Errors:
/// `hipErrorInvalidValue` (null arguments, flags other than one of
/// `hipGraphInstantiateFlags`), and as [`hipGraphInstantiate`].
#[no_mangle]
pub extern "C" fn hipGraphInstantiateWithParams(
    pGraphExec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    instantiateParams: *mut hipGraphInstantiateParams,
) -> hipError_t {
    api(|| {
        check(!pGraphExec.is_null() && !graph.is_null())?;
        let p = read_in(instantiateParams)?;
        let set = |r: hipGraphInstantiateResult| {
            let out = hipGraphInstantiateParams { result_out: r, errNode_out: std::ptr::null_mut(), ..p };
            let _ = write_out(instantiateParams, out);
        };
        let result = check(matches!(p.flags, 0 | 1 | 2 | 4 | 8)).and_then(|_| instantiate(pGraphExec, graph, p.flags));
        if let Err(e) = result {
            set(hipGraphInstantiateResult::hipGraphInstantiateError);
            return Err(e);
        }
        set(hipGraphInstantiateResult::hipGraphInstantiateSuccess);
        if p.flags == hipGraphInstantiateFlags::hipGraphInstantiateFlagUpload.0 as u64 {
            let (rt, _) = rt_dev()?;
            stream_of(rt, p.uploadStream)?;
        }
        Ok(())
    })
}

/// `hipGraphDebugDotPrint`: writes a DOT description of `graph` (its nodes, edges and child
/// graphs; src/graph/mod.rs `Graph::dot`) to the file at `path`, replacing it. `flags`
/// (`hipGraphDebugDotFlags`, any value accepted as clr does) add no detail here. Errors:
/// `hipErrorInvalidValue` (null or unknown graph, null path), `hipErrorOperatingSystem` (the file
/// cannot be written, an empty path among others).
#[no_mangle]
pub extern "C" fn hipGraphDebugDotPrint(graph: hipGraph_t, path: *const c_char, flags: c_uint) -> hipError_t {
    api(|| {
        let g = graph_in(graph)?;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(crate::api::common::cstr_in(path)?.to_bytes()));
        std::fs::write(path, g.dot(flags)).map_err(|_| hipError_t::hipErrorOperatingSystem)
    })
}

/// `hipGraphAddNode`: adds a node of `nodeParams->type` with the parameters in its union, as
/// the matching `hipGraphAdd*Node` does (an allocation node's address goes to
/// `nodeParams->alloc.dptr`). Errors: `hipErrorInvalidValue` (null `nodeParams`, a type with
/// no such call or none in the union, as `hipGraphNodeTypeBatchMemOp`: clr; a copy with
/// `flags` ≠ 0), and those of the matching call.
#[no_mangle]
pub extern "C" fn hipGraphAddNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    nodeParams: *mut hipGraphNodeParams,
) -> hipError_t {
    let Ok(p) = read_in(nodeParams) else { return hipError_t::hipErrorInvalidValue };
    // The union's address: its fields are read there by the call for the node type.
    let u = nodeParams as usize + std::mem::offset_of!(hipGraphNodeParams, params);
    let word = |i: usize| p.params[i] as usize as *mut c_void;
    let (node, deps, n) = (pGraphNode, pDependencies, numDependencies);
    use hipGraphNodeType as T;
    match p.r#type {
        T::hipGraphNodeTypeKernel => hipGraphAddKernelNode(node, graph, deps, n, u as *const hipKernelNodeParams),
        T::hipGraphNodeTypeMemcpy => {
            if p.params[0] as c_int != 0 {
                return hipError_t::hipErrorInvalidValue;
            }
            let copy = u + std::mem::offset_of!(hipMemcpyNodeParams, copyParams);
            hipGraphAddMemcpyNode(node, graph, deps, n, copy as *const hipMemcpy3DParms)
        }
        T::hipGraphNodeTypeMemset => hipGraphAddMemsetNode(node, graph, deps, n, u as *const hipMemsetParams),
        T::hipGraphNodeTypeHost => hipGraphAddHostNode(node, graph, deps, n, u as *const hipHostNodeParams),
        T::hipGraphNodeTypeGraph => hipGraphAddChildGraphNode(node, graph, deps, n, word(0) as hipGraph_t),
        T::hipGraphNodeTypeWaitEvent => hipGraphAddEventWaitNode(node, graph, deps, n, word(0) as hipEvent_t),
        T::hipGraphNodeTypeEventRecord => hipGraphAddEventRecordNode(node, graph, deps, n, word(0) as hipEvent_t),
        T::hipGraphNodeTypeMemAlloc => hipGraphAddMemAllocNode(node, graph, deps, n, u as *mut hipMemAllocNodeParams),
        T::hipGraphNodeTypeMemFree => hipGraphAddMemFreeNode(node, graph, deps, n, word(0)),
        T::hipGraphNodeTypeEmpty => hipGraphAddEmptyNode(node, graph, deps, n),
        T::hipGraphNodeTypeExtSemaphoreSignal => hipGraphAddExternalSemaphoresSignalNode(
            node,
            graph,
            deps,
            n,
            u as *const hipExternalSemaphoreSignalNodeParams,
        ),
        T::hipGraphNodeTypeExtSemaphoreWait => {
            hipGraphAddExternalSemaphoresWaitNode(node, graph, deps, n, u as *const hipExternalSemaphoreWaitNodeParams)
        }
        _ => hipError_t::hipErrorInvalidValue,
    }
}

/// `hipGraphNodeSetParams` (`exec` None) and `hipGraphExecNodeSetParams`: the typed setter of
/// `nodeParams->type` with the parameters in its union (clr `ihipGraphNodeSetParams`).
fn node_set_params(
    exec: Option<hipGraphExec_t>,
    node: hipGraphNode_t,
    nodeParams: *mut hipGraphNodeParams,
) -> hipError_t {
    let pre = || -> Result<hipGraphNodeParams, hipError_t> {
        check(!node.is_null() && exec.is_none_or(|x| !x.is_null()))?;
        let p = read_in(nodeParams)?;
        let n = node_in(node)?;
        if let Some(x) = exec {
            check(exec_in(x)?.contains(&n))?;
        }
        Ok(p)
    };
    let p = match pre() {
        Ok(p) => p,
        Err(e) => return e,
    };
    let u = nodeParams as usize + std::mem::offset_of!(hipGraphNodeParams, params);
    let word = |i: usize| p.params[i] as usize as *mut c_void;
    use hipGraphNodeType as T;
    match (p.r#type, exec) {
        (T::hipGraphNodeTypeKernel, None) => hipGraphKernelNodeSetParams(node, u as *const hipKernelNodeParams),
        (T::hipGraphNodeTypeKernel, Some(x)) => {
            hipGraphExecKernelNodeSetParams(x, node, u as *const hipKernelNodeParams)
        }
        (T::hipGraphNodeTypeMemcpy, _) => {
            let copy = (u + std::mem::offset_of!(hipMemcpyNodeParams, copyParams)) as *const hipMemcpy3DParms;
            match exec {
                None => hipGraphMemcpyNodeSetParams(node, copy),
                Some(x) => hipGraphExecMemcpyNodeSetParams(x, node, copy),
            }
        }
        (T::hipGraphNodeTypeMemset, None) => hipGraphMemsetNodeSetParams(node, u as *const hipMemsetParams),
        (T::hipGraphNodeTypeMemset, Some(x)) => hipGraphExecMemsetNodeSetParams(x, node, u as *const hipMemsetParams),
        (T::hipGraphNodeTypeHost, _) => {
            // clr refuses a null `userData` here (not in hipGraph[Exec]HostNodeSetParams).
            if p.params[0] == 0 || p.params[1] == 0 {
                return hipError_t::hipErrorInvalidValue;
            }
            let h = u as *const hipHostNodeParams;
            exec.map_or_else(|| hipGraphHostNodeSetParams(node, h), |x| hipGraphExecHostNodeSetParams(x, node, h))
        }
        (T::hipGraphNodeTypeGraph, None) => child_graph_set(node, word(0) as hipGraph_t),
        (T::hipGraphNodeTypeGraph, Some(x)) => hipGraphExecChildGraphNodeSetParams(x, node, word(0) as hipGraph_t),
        (T::hipGraphNodeTypeWaitEvent | T::hipGraphNodeTypeEventRecord, _) if word(0).is_null() => {
            hipError_t::hipErrorInvalidValue
        }
        (T::hipGraphNodeTypeWaitEvent, None) => hipGraphEventWaitNodeSetEvent(node, word(0) as hipEvent_t),
        (T::hipGraphNodeTypeWaitEvent, Some(x)) => hipGraphExecEventWaitNodeSetEvent(x, node, word(0) as hipEvent_t),
        (T::hipGraphNodeTypeEventRecord, None) => hipGraphEventRecordNodeSetEvent(node, word(0) as hipEvent_t),
        (T::hipGraphNodeTypeEventRecord, Some(x)) => {
            hipGraphExecEventRecordNodeSetEvent(x, node, word(0) as hipEvent_t)
        }
        (T::hipGraphNodeTypeExtSemaphoreSignal, _) => {
            let e = u as *const hipExternalSemaphoreSignalNodeParams;
            match exec {
                None => hipGraphExternalSemaphoresSignalNodeSetParams(node, e),
                Some(x) => hipGraphExecExternalSemaphoresSignalNodeSetParams(x, node, e),
            }
        }
        (T::hipGraphNodeTypeExtSemaphoreWait, _) => {
            let e = u as *const hipExternalSemaphoreWaitNodeParams;
            match exec {
                None => hipGraphExternalSemaphoresWaitNodeSetParams(node, e),
                Some(x) => hipGraphExecExternalSemaphoresWaitNodeSetParams(x, node, e),
            }
        }
        (T::hipGraphNodeTypeMemAlloc | T::hipGraphNodeTypeMemFree, _) => hipError_t::hipErrorNotSupported,
        _ => hipError_t::hipErrorInvalidValue,
    }
}

/// A child graph node of a graph (not an executable graph) runs a copy of `child` (taken now)
/// from now on: the generic setter's child graph case (clr `ChildGraphNode::SetParams`).
/// Errors: `hipErrorInvalidValue` (null or unknown graph, not a child graph node),
/// `hipErrorUnknown` (`child` is the node's own graph: clr `validateChildGraphNodeSetParams`).
fn child_graph_set(node: hipGraphNode_t, child: hipGraph_t) -> hipError_t {
    set_node(node, || {
        let n = node_in(node)?;
        let g = graph_in(child)?;
        check(n.node_type() == hipGraphNodeType::hipGraphNodeTypeGraph)?;
        if n.graph.upgrade().is_some_and(|p| Arc::ptr_eq(&p, &g)) {
            return Err(hipError_t::hipErrorUnknown);
        }
        Ok(Op::Child(g.deep_clone()))
    })
}

/// `hipGraphNodeSetParams`: sets the parameters of `node` from `nodeParams->type` and its union,
/// through the typed setter of that type (`hipGraphKernelNodeSetParams`,
/// `hipGraphMemcpyNodeSetParams` with `memcpy.copyParams`, ..., the external semaphore
/// setters); a child graph node takes a copy of `graph.graph`. Errors (clr
/// `hipGraphNodeSetParams`, `ihipGraphNodeSetParams`): `hipErrorInvalidValue` (null or unknown
/// node, null `nodeParams`, a type other than the node's, a type with no setter such as empty
/// and batch memory operation nodes, a host node with a null `fn` or `userData`, a null event),
/// `hipErrorNotSupported` (memory allocation and free nodes), `hipErrorUnknown` (a child graph
/// node given its own graph), and those of the typed setter.
#[no_mangle]
pub extern "C" fn hipGraphNodeSetParams(node: hipGraphNode_t, nodeParams: *mut hipGraphNodeParams) -> hipError_t {
    node_set_params(None, node, nodeParams)
}

/// `hipGraphExecNodeSetParams`: as [`hipGraphNodeSetParams`], for the step of `graphExec` made
/// from `node` (from its next launch on), through the typed `hipGraphExec*SetParams` setters (a
/// copy keeps its direction; a child graph must keep its topology). Errors: as
/// [`hipGraphNodeSetParams`], `hipErrorInvalidValue` also for a null or unknown executable graph
/// and a node not instantiated in it.
#[no_mangle]
pub extern "C" fn hipGraphExecNodeSetParams(
    graphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    nodeParams: *mut hipGraphNodeParams,
) -> hipError_t {
    node_set_params(Some(graphExec), node, nodeParams)
}

/// The context argument of the driver-style node calls: a live context (its device is not
/// used: nodes run on the launch stream's device). Errors: `hipErrorInvalidValue` (null).
fn drv_ctx(ctx: hipCtx_t) -> Result<(), hipError_t> {
    check(!ctx.is_null())
}

/// `hipDrvGraphAddMemcpyNode`: a copy node from `HIP_MEMCPY3D` parameters, as
/// `hipDrvMemcpy3D` copies (sides resolved when the node is made). Errors:
/// `hipErrorInvalidValue` (null arguments or context), those of `hipDrvMemcpy3D`'s checks, and
/// as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipDrvGraphAddMemcpyNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    copyParams: *const HIP_MEMCPY3D,
    ctx: hipCtx_t,
) -> hipError_t {
    add_node(phGraphNode, hGraph, dependencies, numDependencies, || {
        drv_ctx(ctx)?;
        crate::api::array::drv_copy_op(copyParams)
    })
}

/// `hipDrvGraphAddMemsetNode`: [`hipGraphAddMemsetNode`] with `HIP_MEMSET_NODE_PARAMS`.
/// Errors: as it, and `hipErrorInvalidValue` for a null context.
#[no_mangle]
pub extern "C" fn hipDrvGraphAddMemsetNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    memsetParams: *const HIP_MEMSET_NODE_PARAMS,
    ctx: hipCtx_t,
) -> hipError_t {
    add_node(phGraphNode, hGraph, dependencies, numDependencies, || {
        drv_ctx(ctx)?;
        let p = read_in(memsetParams)?;
        let m = hipMemsetParams {
            dst: p.dst,
            elementSize: p.elementSize,
            height: p.height,
            pitch: p.pitch,
            value: p.value,
            width: p.width,
        };
        memset_op(&m)
    })
}

/// `hipDrvGraphAddMemFreeNode`: [`hipGraphAddMemFreeNode`] in the driver API's spelling (clr
/// `hipDrvGraphAddMemFreeNode`). Errors: as it.
#[no_mangle]
pub extern "C" fn hipDrvGraphAddMemFreeNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dptr: hipDeviceptr_t,
) -> hipError_t {
    hipGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies, dptr)
}

/// The `HIP_MEMCPY3D` of a copy whose sides are pitched memory (arrays are linear): both sides
/// `hipMemoryTypeUnified` pointers at the block's first byte, `srcPitch`/`srcHeight` the row
/// pitch and rows per slice.
fn drv_params_of(
    dst: &kfd_ioctl::sdma::Pitched,
    src: &kfd_ioctl::sdma::Pitched,
    b: &crate::core::copy::Block,
) -> HIP_MEMCPY3D {
    let rows = |p: &kfd_ioctl::sdma::Pitched| p.slice.checked_div(p.pitch).unwrap_or(0) as usize;
    HIP_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: hipMemoryType::hipMemoryTypeUnified,
        srcHost: std::ptr::null(),
        srcDevice: src.addr as hipDeviceptr_t,
        srcArray: std::ptr::null_mut(),
        srcPitch: src.pitch as usize,
        srcHeight: rows(src),
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: hipMemoryType::hipMemoryTypeUnified,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst.addr as hipDeviceptr_t,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst.pitch as usize,
        dstHeight: rows(dst),
        WidthInBytes: b.width as usize,
        Height: b.height as usize,
        Depth: b.depth as usize,
    }
}

/// `hipDrvGraphMemcpyNodeGetParams`: a copy node's parameters as `HIP_MEMCPY3D`: those it was
/// given for a node of the driver form (`hipDrvGraphAddMemcpyNode`,
/// `hipDrvGraphMemcpyNodeSetParams`); for another copy node, the same copy with both sides as
/// unified pointers. Errors: `hipErrorInvalidValue` (null or unknown node, not a copy node,
/// null `nodeParams`).
#[no_mangle]
pub extern "C" fn hipDrvGraphMemcpyNodeGetParams(hNode: hipGraphNode_t, nodeParams: *mut HIP_MEMCPY3D) -> hipError_t {
    api(|| {
        check(!nodeParams.is_null())?;
        let p = match op_of(hNode, hipGraphNodeType::hipGraphNodeTypeMemcpy)? {
            Op::Memcpy3D { drv: Some(d), .. } => d.0,
            Op::Memcpy3D { dst, src, block, .. } => drv_params_of(&dst, &src, &block),
            Op::Memcpy { dst, src, len, .. } => {
                let side = |addr: u64| kfd_ioctl::sdma::Pitched { addr, pitch: len, slice: len };
                let b = crate::core::copy::Block { width: len, height: 1, depth: 1 };
                drv_params_of(&side(dst), &side(src), &b)
            }
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        write_out(nodeParams, p)
    })
}

/// `hipDrvGraphMemcpyNodeSetParams`: the copy node does the `HIP_MEMCPY3D` copy `nodeParams`
/// from now on (checked as [`hipDrvGraphAddMemcpyNode`] checks it). Errors:
/// `hipErrorInvalidValue` (null or unknown node, not a copy node, null `nodeParams`), those of
/// `hipDrvMemcpy3D`'s checks.
#[no_mangle]
pub extern "C" fn hipDrvGraphMemcpyNodeSetParams(hNode: hipGraphNode_t, nodeParams: *const HIP_MEMCPY3D) -> hipError_t {
    set_node(hNode, || crate::api::array::drv_copy_op(nodeParams))
}

/// `hipDrvGraphExecMemcpyNodeSetParams`: the step of `hGraphExec` made from copy node `hNode`
/// does the `HIP_MEMCPY3D` copy `copyParams` from the next launch on. `ctx` is not used (clr).
/// Errors: `hipErrorInvalidValue` for all (clr): null or unknown executable graph or node, a
/// node not instantiated in it or not a copy, parameters `hipDrvMemcpy3D` refuses.
#[no_mangle]
pub extern "C" fn hipDrvGraphExecMemcpyNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    copyParams: *const HIP_MEMCPY3D,
    ctx: hipCtx_t,
) -> hipError_t {
    let _ = ctx;
    set_exec_node(hGraphExec, hNode, None, || {
        crate::api::array::drv_copy_op(copyParams).map_err(|_| hipError_t::hipErrorInvalidValue)
    })
}

/// `hipDrvGraphExecMemsetNodeSetParams`: [`hipGraphExecMemsetNodeSetParams`] in the driver
/// API's spelling (ROCm 7 takes a `hipMemsetParams`); `ctx` is not used (clr). Errors:
/// `hipErrorInvalidValue` for all (clr): as [`hipGraphExecMemsetNodeSetParams`].
#[no_mangle]
pub extern "C" fn hipDrvGraphExecMemsetNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    memsetParams: *const hipMemsetParams,
    ctx: hipCtx_t,
) -> hipError_t {
    let _ = ctx;
    set_exec_node(hGraphExec, hNode, None, || memset_op(memsetParams).map_err(|_| hipError_t::hipErrorInvalidValue))
}

// ---------------------------------------------------------------------------------------------
// External semaphore nodes
// ---------------------------------------------------------------------------------------------

/// An external semaphore node's operation from `numExtSems` semaphores and parameter structs
/// (the caller's layout), the node keeping copies of both arrays; none is an empty node of its
/// type (clr queues nothing for it). Errors: `hipErrorInvalidValue` (null arrays with a count;
/// as `hipSignalExternalSemaphoresAsync`: a `flags` ≠ 0, a null, unknown or destroyed semaphore).
fn ext_sem_node(
    sems: *mut hipExternalSemaphore_t,
    params: *const c_void,
    n: c_uint,
) -> Result<Arc<ExtSemNode>, hipError_t> {
    if n == 0 {
        return Ok(Arc::new(ExtSemNode::new(vec![], vec![], vec![], vec![])));
    }
    check(!sems.is_null() && !params.is_null())?;
    let (objs, values) = crate::api::interop::sem_args(sems, params, n)?;
    let handles = slice_in(sems as *const hipExternalSemaphore_t, n as usize)?.iter().map(|h| *h as usize).collect();
    let (stride, _) = crate::api::interop::sem_params_layout();
    let words = slice_in(params as *const u64, stride / 8 * n as usize)?.to_vec();
    Ok(Arc::new(ExtSemNode::new(objs, values, handles, words)))
}

fn sem_signal_op(p: *const hipExternalSemaphoreSignalNodeParams) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    Ok(Op::ExtSemSignal(ext_sem_node(p.extSemArray, p.paramsArray as *const c_void, p.numExtSems)?))
}

fn sem_wait_op(p: *const hipExternalSemaphoreWaitNodeParams) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    Ok(Op::ExtSemWait(ext_sem_node(p.extSemArray, p.paramsArray as *const c_void, p.numExtSems)?))
}

/// `hipGraphAddExternalSemaphoresSignalNode`: a node that signals `nodeParams->extSemArray[i]`
/// (binary) or moves it to `paramsArray[i].params.fence.value` (timeline) once the work before
/// it is done, as `hipSignalExternalSemaphoresAsync` on the launch stream. Both arrays are
/// copied. Errors: `hipErrorInvalidValue` (null `nodeParams`; a `flags` ≠ 0, a null, unknown or
/// destroyed semaphore, null arrays with a count), and as [`hipGraphAddEmptyNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddExternalSemaphoresSignalNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    nodeParams: *const hipExternalSemaphoreSignalNodeParams,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || sem_signal_op(nodeParams))
}

/// `hipGraphAddExternalSemaphoresWaitNode`: a node after which the graph's work waits, on the
/// GPU, until each semaphore is signalled (binary; the wait consumes the signal) or reaches
/// `paramsArray[i].params.fence.value` (timeline), as `hipWaitExternalSemaphoresAsync`. Errors:
/// as [`hipGraphAddExternalSemaphoresSignalNode`].
#[no_mangle]
pub extern "C" fn hipGraphAddExternalSemaphoresWaitNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    nodeParams: *const hipExternalSemaphoreWaitNodeParams,
) -> hipError_t {
    add_node(pGraphNode, graph, pDependencies, numDependencies, || sem_wait_op(nodeParams))
}

/// The node's `(extSemArray, paramsArray, numExtSems)` when it is of type `t`. Errors:
/// `hipErrorInvalidValue` (unknown node, another type).
fn ext_sem_arrays(
    node: hipGraphNode_t,
    t: hipGraphNodeType,
) -> Result<(*mut hipExternalSemaphore_t, *const c_void, c_uint), hipError_t> {
    match op_of(node, t)? {
        Op::ExtSemSignal(n) | Op::ExtSemWait(n) => Ok(n.arrays()),
        _ => Err(hipError_t::hipErrorInvalidValue),
    }
}

/// `hipGraphExternalSemaphoresSignalNodeGetParams`: the node's parameters; the arrays are the
/// node's copies (valid until the node is destroyed or its parameters are set; null when
/// `numExtSems` is 0). Errors: `hipErrorInvalidValue` (null or unknown node, not a semaphore
/// signal node, null `params_out`).
#[no_mangle]
pub extern "C" fn hipGraphExternalSemaphoresSignalNodeGetParams(
    hNode: hipGraphNode_t,
    params_out: *mut hipExternalSemaphoreSignalNodeParams,
) -> hipError_t {
    api(|| {
        check(!params_out.is_null())?;
        let (extSemArray, paramsArray, numExtSems) =
            ext_sem_arrays(hNode, hipGraphNodeType::hipGraphNodeTypeExtSemaphoreSignal)?;
        let paramsArray = paramsArray as *const hipExternalSemaphoreSignalParams;
        write_out(params_out, hipExternalSemaphoreSignalNodeParams { extSemArray, paramsArray, numExtSems })
    })
}

/// `hipGraphExternalSemaphoresWaitNodeGetParams`: as
/// [`hipGraphExternalSemaphoresSignalNodeGetParams`], for a semaphore wait node.
#[no_mangle]
pub extern "C" fn hipGraphExternalSemaphoresWaitNodeGetParams(
    hNode: hipGraphNode_t,
    params_out: *mut hipExternalSemaphoreWaitNodeParams,
) -> hipError_t {
    api(|| {
        check(!params_out.is_null())?;
        let (extSemArray, paramsArray, numExtSems) =
            ext_sem_arrays(hNode, hipGraphNodeType::hipGraphNodeTypeExtSemaphoreWait)?;
        let paramsArray = paramsArray as *const hipExternalSemaphoreWaitParams;
        write_out(params_out, hipExternalSemaphoreWaitNodeParams { extSemArray, paramsArray, numExtSems })
    })
}

/// `hipGraphExternalSemaphoresSignalNodeSetParams`: the node signals the semaphores of
/// `nodeParams` from now on. Errors: `hipErrorInvalidValue` (null or unknown node, not a
/// semaphore signal node), as [`hipGraphAddExternalSemaphoresSignalNode`].
#[no_mangle]
pub extern "C" fn hipGraphExternalSemaphoresSignalNodeSetParams(
    hNode: hipGraphNode_t,
    nodeParams: *const hipExternalSemaphoreSignalNodeParams,
) -> hipError_t {
    set_node(hNode, || sem_signal_op(nodeParams))
}

/// `hipGraphExternalSemaphoresWaitNodeSetParams`: as
/// [`hipGraphExternalSemaphoresSignalNodeSetParams`], for a semaphore wait node.
#[no_mangle]
pub extern "C" fn hipGraphExternalSemaphoresWaitNodeSetParams(
    hNode: hipGraphNode_t,
    nodeParams: *const hipExternalSemaphoreWaitNodeParams,
) -> hipError_t {
    set_node(hNode, || sem_wait_op(nodeParams))
}

/// `hipGraphExecExternalSemaphoresSignalNodeSetParams`: the step of `hGraphExec` made from
/// semaphore signal node `hNode` signals the semaphores of `nodeParams` from the next launch on.
/// Errors: `hipErrorInvalidValue` (null or unknown executable graph or node, a node not
/// instantiated in it or of another type: clr), as [`hipGraphAddExternalSemaphoresSignalNode`].
#[no_mangle]
pub extern "C" fn hipGraphExecExternalSemaphoresSignalNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    nodeParams: *const hipExternalSemaphoreSignalNodeParams,
) -> hipError_t {
    set_exec_node(hGraphExec, hNode, None, || sem_signal_op(nodeParams))
}

/// `hipGraphExecExternalSemaphoresWaitNodeSetParams`: as
/// [`hipGraphExecExternalSemaphoresSignalNodeSetParams`], for a semaphore wait node.
#[no_mangle]
pub extern "C" fn hipGraphExecExternalSemaphoresWaitNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    nodeParams: *const hipExternalSemaphoreWaitNodeParams,
) -> hipError_t {
    set_exec_node(hGraphExec, hNode, None, || sem_wait_op(nodeParams))
}

// ---------------------------------------------------------------------------------------------
// Batch memory operation nodes
// ---------------------------------------------------------------------------------------------

/// A batch memory operation node's operation from `hipBatchMemOpNodeParams` (the elements are
/// copied). Errors (clr `hipGraphAddBatchMemOpNode`): `hipErrorInvalidValue` (null
/// `nodeParams`, `count` 0 or above 256, null `paramArray`, `flags` ≠ 0, null `ctx`; an element
/// `hipStreamBatchMemOp` refuses: a barrier or flush, an unknown operation or compare, a null
/// address).
pub(crate) fn batch_op(p: *const hipBatchMemOpNodeParams) -> Result<Op, hipError_t> {
    let p = read_in(p)?;
    check((1..=256).contains(&p.count) && !p.paramArray.is_null() && p.flags == 0 && !p.ctx.is_null())?;
    let elems = slice_in(p.paramArray as *const hipStreamBatchMemOpParams, p.count as usize)?;
    Ok(Op::BatchMemOps(Arc::new(BatchMemOps::new(p.ctx, p.flags, elems)?)))
}

/// `hipGraphAddBatchMemOpNode`: a node that runs the `nodeParams->count` stream memory
/// operations of `paramArray` (waits and writes of 32- and 64-bit words, as
/// `hipStreamWaitValue*`/`hipStreamWriteValue*`) one after another in array order, as
/// `hipStreamBatchMemOp` on the launch stream. The elements are copied. Errors: as `batch_op`,
/// and as [`hipGraphAddEmptyNode`]; at launch, a word the launch stream cannot reach:
/// `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipGraphAddBatchMemOpNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    nodeParams: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    add_node(phGraphNode, hGraph, dependencies, numDependencies, || batch_op(nodeParams))
}

/// `hipGraphBatchMemOpNodeGetParams`: the node's parameters; `paramArray` is the node's copy of
/// the elements (HIP: owned by the node, valid until it is destroyed or its parameters are set).
/// Errors: `hipErrorInvalidValue` (null or unknown node, not a batch memory operation node, null
/// `nodeParams_out`).
#[no_mangle]
pub extern "C" fn hipGraphBatchMemOpNodeGetParams(
    hNode: hipGraphNode_t,
    nodeParams_out: *mut hipBatchMemOpNodeParams,
) -> hipError_t {
    api(|| {
        check(!nodeParams_out.is_null())?;
        match op_of(hNode, hipGraphNodeType::hipGraphNodeTypeBatchMemOp)? {
            Op::BatchMemOps(b) => write_out(nodeParams_out, b.node_params()),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    })
}

/// `hipGraphBatchMemOpNodeSetParams`: the node runs the operations of `nodeParams` from now on.
/// Errors: `hipErrorInvalidValue` (null or unknown node, not a batch memory operation node), as
/// [`hipGraphAddBatchMemOpNode`].
#[no_mangle]
pub extern "C" fn hipGraphBatchMemOpNodeSetParams(
    hNode: hipGraphNode_t,
    nodeParams: *mut hipBatchMemOpNodeParams,
) -> hipError_t {
    set_node(hNode, || batch_op(nodeParams))
}

/// `hipGraphExecBatchMemOpNodeSetParams`: the step of `hGraphExec` made from batch memory
/// operation node `hNode` runs the operations of `nodeParams` from the next launch on. Errors:
/// `hipErrorInvalidValue` (null or unknown executable graph or node, a node not instantiated in
/// it or of another type), as [`hipGraphAddBatchMemOpNode`].
#[no_mangle]
pub extern "C" fn hipGraphExecBatchMemOpNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    nodeParams: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    set_exec_node(hGraphExec, hNode, None, || batch_op(nodeParams))
}
