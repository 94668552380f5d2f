//! Graphs and stream capture (HIP "Graph Management" and "Stream Capture"; clr `hip_graph.cpp`,
//! `hip_graph_internal.{hpp,cpp}`, `hip_stream.cpp`).
//!
//! A [`Graph`] is a set of [`Node`]s, each one stream operation ([`Op`]), and dependency edges
//! between them. Instantiating a graph ([`Exec`]) snapshots its nodes in a topological order;
//! launching it runs them one after another on the launch stream, each through the same runtime
//! operation as its API (`hipMemcpyAsync`, `hipMemsetAsync`, `hipLaunchHostFunc`, ...), so the
//! launch is asynchronous and stream-ordered, and independent branches run serially.
//!
//! Stream capture: while a stream captures, the async operations issued to it are recorded as
//! nodes of the capture's graph instead of running. [`Runtime::enqueue`] is the one place where
//! an operation is either run or recorded. Events recorded on a capturing stream remember the
//! stream's last nodes, and `hipStreamWaitEvent` on such an event joins the waiting stream to the
//! capture (fork/join across streams). The capture-mode rules (which calls are refused while
//! something captures, and which captures that invalidates) follow clr's
//! `CHECK_STREAM_CAPTURE_SUPPORTED`, `CHECK_STREAM_CAPTURING`, `CHECK_SUPPORTED_DURING_CAPTURE` and
//! `Stream::StreamCaptureOngoing`.

//!
//! Layer: the top of the runtime, below [`crate::api`]; it may call every layer below it
//! ([`crate::kernels`], [`crate::share`], [`crate::mem`], [`crate::core`], [`crate::abi`]).

pub mod mem;

use crate::abi::types::*;
use crate::core::copy::Block;
use crate::core::event::Event;
use crate::core::runtime::Runtime;
use crate::core::stream::{Stream, StreamMemOp};
use crate::share::interop::ExternalSemaphore;
use kfd_ioctl::sdma::Pitched;
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// A C parameter struct kept in a node as given. Its pointers are the program's: hipkfd hands
/// them back (`hip*NodeGetParams`) or uses them as addresses, never dereferences them itself.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct CParams<T: Copy>(pub T);
// SAFETY: plain data whose pointers are never dereferenced by hipkfd (see above).
unsafe impl<T: Copy> Send for CParams<T> {}
// SAFETY: as above; shared reads only copy the struct.
unsafe impl<T: Copy> Sync for CParams<T> {}

/// What a node does when its graph runs.
#[derive(Clone)]
pub enum Op {
    /// No operation (`hipGraphAddEmptyNode`).
    Empty,
    /// A 1D copy of `len` bytes (`hipMemcpyAsync`, `hipGraphAddMemcpyNode1D`, the symbol copies
    /// with the symbol resolved to its device address).
    Memcpy { dst: u64, src: u64, len: u64, kind: hipMemcpyKind },
    /// A pitched block copy (`hipGraphAddMemcpyNode`, `hipMemcpy2DAsync`, `hipMemcpy3DAsync`):
    /// the parameters as given and the blocks they name; `drv`: the `HIP_MEMCPY3D` of a copy
    /// made in the driver form (`hipDrvGraphAddMemcpyNode`), as given.
    Memcpy3D {
        parms: CParams<hipMemcpy3DParms>,
        dst: Pitched,
        src: Pitched,
        block: Block,
        drv: Option<Box<CParams<HIP_MEMCPY3D>>>,
    },
    /// A fill of `depth` slices of `p`, each `ysize` rows of `pitch` bytes
    /// (`hipGraphAddMemsetNode`, `hipMemset*Async`).
    Memset { p: CParams<hipMemsetParams>, depth: usize, ysize: usize },
    /// `fn_(userData)` on the completion thread (`hipGraphAddHostNode`, `hipLaunchHostFunc`).
    Host { fn_: unsafe extern "C" fn(*mut c_void), data: usize },
    /// `hipEventRecord` of the event (`hipGraphAddEventRecordNode`).
    EventRecord(Weak<Event>),
    /// `hipStreamWaitEvent` on the event (`hipGraphAddEventWaitNode`).
    EventWait(Weak<Event>),
    /// The nodes of a graph of the node's own (`hipGraphAddChildGraphNode` clones the graph).
    Child(Arc<Graph>),
    /// A kernel launch (`hipGraphAddKernelNode`, a captured launch) with its own copy of the
    /// arguments (src/kernels/aql.rs).
    Kernel(Arc<crate::kernels::aql::KernelNode>),
    /// Allocates graph memory at the node's address (`hipGraphAddMemAllocNode`, a captured
    /// `hipMallocAsync`; src/graph/mem.rs).
    MemAlloc(Arc<crate::graph::mem::GraphAlloc>),
    /// Frees the graph memory at this address (`hipGraphAddMemFreeNode`, a captured
    /// `hipFreeAsync`).
    MemFree(u64),
    /// Stream memory operations run one after another (`hipGraphAddBatchMemOpNode`, a captured
    /// `hipStreamBatchMemOp`).
    BatchMemOps(Arc<BatchMemOps>),
    /// Signals external semaphores (`hipGraphAddExternalSemaphoresSignalNode`), as
    /// `hipSignalExternalSemaphoresAsync`.
    ExtSemSignal(Arc<ExtSemNode>),
    /// Waits for external semaphores (`hipGraphAddExternalSemaphoresWaitNode`), as
    /// `hipWaitExternalSemaphoresAsync`.
    ExtSemWait(Arc<ExtSemNode>),
}

/// The operations of a batch memory operation node: the node's own copy of the
/// `hipStreamBatchMemOpParams` elements (HIP: the `paramArray` that
/// `hipGraphBatchMemOpNodeGetParams` returns is owned by the node, valid until the node is
/// destroyed or its parameters change) and the same elements decoded.
pub struct BatchMemOps {
    params: Vec<CParams<hipStreamBatchMemOpParams>>,
    /// The elements, decoded, in array order.
    pub ops: Vec<StreamMemOp>,
    /// `ctx` and `flags` of the node parameters, as given.
    ctx: usize,
    flags: u32,
}

impl BatchMemOps {
    /// A node's operations from the context and flags of its `hipBatchMemOpNodeParams` and a
    /// copy of its elements. Errors: those of [`StreamMemOp::from_params`].
    pub fn new(ctx: hipCtx_t, flags: u32, elems: &[hipStreamBatchMemOpParams]) -> Result<BatchMemOps, hipError_t> {
        let ops = elems.iter().map(StreamMemOp::from_params).collect::<Result<Vec<_>, _>>()?;
        Ok(BatchMemOps { params: elems.iter().copied().map(CParams).collect(), ops, ctx: ctx as usize, flags })
    }

    /// The node parameters to report: `paramArray` points at the node's copy.
    pub fn node_params(&self) -> hipBatchMemOpNodeParams {
        hipBatchMemOpNodeParams {
            ctx: self.ctx as hipCtx_t,
            count: self.params.len() as c_uint,
            // CParams is transparent: the copy is an array of the C structs.
            paramArray: self.params.as_ptr() as *mut hipStreamBatchMemOpParams,
            flags: self.flags,
        }
    }
}

/// The semaphores of an external semaphore node, and the node's own copies of the program's
/// arrays (CUDA: the arrays that `*NodeGetParams` returns are owned by the node).
pub struct ExtSemNode {
    /// The semaphores, in order, and the fence value of each (`params.fence.value`).
    pub sems: Vec<Arc<ExternalSemaphore>>,
    pub values: Vec<u64>,
    /// The `hipExternalSemaphore_t` handles as given.
    handles: Vec<usize>,
    /// The parameter structs as given (`stride` bytes each), as 8-byte words.
    params: Vec<u64>,
}

impl ExtSemNode {
    /// `sems[i]`, given as `handles[i]`, with fence value `values[i]`; `params` the bytes of
    /// the caller's parameter array, as words.
    pub fn new(
        sems: Vec<Arc<ExternalSemaphore>>,
        values: Vec<u64>,
        handles: Vec<usize>,
        params: Vec<u64>,
    ) -> ExtSemNode {
        ExtSemNode { sems, values, handles, params }
    }

    /// `(extSemArray, paramsArray, numExtSems)` pointing at the node's copies (null when empty).
    pub fn arrays(&self) -> (*mut hipExternalSemaphore_t, *const c_void, c_uint) {
        if self.handles.is_empty() {
            return (std::ptr::null_mut(), std::ptr::null(), 0);
        }
        // `usize` and `hipExternalSemaphore_t` (a pointer) have the same layout.
        (
            self.handles.as_ptr() as *mut hipExternalSemaphore_t,
            self.params.as_ptr() as *const c_void,
            self.handles.len() as c_uint,
        )
    }

    /// Errors: `hipErrorInvalidValue` when a semaphore was destroyed (`hipDestroyExternalSemaphore`)
    /// since the node was made.
    fn check(&self) -> Result<(), hipError_t> {
        if self.sems.iter().any(|x| x.is_destroyed()) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        Ok(())
    }
}

impl Op {
    /// The node type `hipGraphNodeGetType` reports (clr reports symbol copies as Memcpy).
    pub fn node_type(&self) -> hipGraphNodeType {
        match self {
            Op::Empty => hipGraphNodeType::hipGraphNodeTypeEmpty,
            Op::Memcpy { .. } | Op::Memcpy3D { .. } => hipGraphNodeType::hipGraphNodeTypeMemcpy,
            Op::Memset { .. } => hipGraphNodeType::hipGraphNodeTypeMemset,
            Op::Host { .. } => hipGraphNodeType::hipGraphNodeTypeHost,
            Op::EventRecord(_) => hipGraphNodeType::hipGraphNodeTypeEventRecord,
            Op::EventWait(_) => hipGraphNodeType::hipGraphNodeTypeWaitEvent,
            Op::Child(_) => hipGraphNodeType::hipGraphNodeTypeGraph,
            Op::Kernel(_) => hipGraphNodeType::hipGraphNodeTypeKernel,
            Op::MemAlloc(_) => hipGraphNodeType::hipGraphNodeTypeMemAlloc,
            Op::MemFree(_) => hipGraphNodeType::hipGraphNodeTypeMemFree,
            Op::BatchMemOps(_) => hipGraphNodeType::hipGraphNodeTypeBatchMemOp,
            Op::ExtSemSignal(_) => hipGraphNodeType::hipGraphNodeTypeExtSemaphoreSignal,
            Op::ExtSemWait(_) => hipGraphNodeType::hipGraphNodeTypeExtSemaphoreWait,
        }
    }

    /// The direction of a copy.
    fn copy_kind(&self) -> Option<hipMemcpyKind> {
        match self {
            Op::Memcpy { kind, .. } => Some(*kind),
            Op::Memcpy3D { parms, .. } => Some(parms.0.kind),
            _ => None,
        }
    }

    /// A copy whose child graph (if any) is a deep copy, so that later edits of either side do
    /// not reach the other.
    fn deep_clone(&self) -> Op {
        match self {
            Op::Child(g) => Op::Child(g.deep_clone()),
            o => o.clone(),
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An edge: `(from, to)`.
pub type Edge = (Arc<Node>, Arc<Node>);

/// One node of a graph.
pub struct Node {
    /// Unique among all nodes.
    pub id: u64,
    /// The id of the node this one was cloned from, transitively (its own id otherwise):
    /// `hipGraphNodeFindInClone`.
    pub origin: u64,
    /// The graph the node belongs to.
    pub graph: Weak<Graph>,
    op: Mutex<Op>,
    /// A kernel node's attributes (`hipGraphKernelNodeSetAttribute`).
    pub attrs: Mutex<KernelAttrs>,
}

/// The attributes of a kernel node, as clr's `GraphKernelNode` keeps them (`kernelAttr_`, and
/// `kernelAttrInUse_`: the last attribute set, 0 for none). Recorded only: an SDMA runtime has
/// no L2 persistence window, and a cooperative or prioritised launch runs as any other.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelAttrs {
    /// The `hipLaunchAttributeID` last set (0: none).
    pub in_use: i32,
    /// `accessPolicyWindow`: `base_ptr`, `hitProp`, `hitRatio`, `missProp`, `num_bytes`.
    pub window: (u64, i32, f32, i32, u64),
    pub cooperative: i32,
    pub priority: i32,
}

impl Node {
    pub fn op(&self) -> Op {
        self.op.lock().clone()
    }

    /// Replaces the node's operation; `Err(hipErrorInvalidValue)` if `op` is of another type.
    pub fn set_op(&self, op: Op) -> Result<(), hipError_t> {
        let mut cur = self.op.lock();
        if cur.node_type() != op.node_type() {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        *cur = op;
        Ok(())
    }

    pub fn node_type(&self) -> hipGraphNodeType {
        self.op.lock().node_type()
    }

    /// The node's handle (its address).
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let me = self as *const Node as usize;
        registry().nodes.lock().remove(&me);
    }
}

#[derive(Default)]
struct Inner {
    nodes: Vec<Arc<Node>>,
    /// `(from, to)` node ids, in the order they were added.
    edges: Vec<(u64, u64)>,
}

/// A graph: nodes and the edges between them.
pub struct Graph {
    /// HIP ordinal of the device current at creation.
    pub dev: usize,
    /// Made by `hipGraphClone` (or as a child graph's copy): `hipGraphNodeFindInClone` needs one.
    pub cloned: bool,
    inner: Mutex<Inner>,
    /// References the graph owns to user objects: handle → count (`hipGraphRetainUserObject`).
    user_objects: Mutex<HashMap<usize, u32>>,
    /// Held by the executable graph made from this one while it lives (graphs with memory nodes
    /// have one at a time: CUDA; hip-tests `Unit_hipGraphAddMemAllocNode_Negative_NotSupported`).
    exec_token: Mutex<Weak<()>>,
}

impl Drop for Graph {
    fn drop(&mut self) {
        let me = self as *const Graph as usize;
        registry().graphs.lock().remove(&me);
        for (h, n) in std::mem::take(&mut *self.user_objects.lock()) {
            user_object_release(h, n);
        }
    }
}

/// The live graphs and nodes by handle (weak: a handle is valid while its object lives).
#[derive(Default)]
struct Registry {
    graphs: Mutex<HashMap<usize, Weak<Graph>>>,
    nodes: Mutex<HashMap<usize, Weak<Node>>>,
}

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// The graph a handle names, if it lives.
pub fn graph_of(h: usize) -> Option<Arc<Graph>> {
    let w = registry().graphs.lock().get(&h).cloned();
    w.and_then(|w| w.upgrade())
}

/// The node a handle names, if it lives.
pub fn node_of(h: usize) -> Option<Arc<Node>> {
    let w = registry().nodes.lock().get(&h).cloned();
    w.and_then(|w| w.upgrade())
}

impl Graph {
    pub fn new(dev: usize, cloned: bool) -> Arc<Graph> {
        let g = Arc::new(Graph {
            dev,
            cloned,
            inner: Mutex::new(Inner::default()),
            user_objects: Mutex::default(),
            exec_token: Mutex::default(),
        });
        registry().graphs.lock().insert(Arc::as_ptr(&g) as usize, Arc::downgrade(&g));
        g
    }

    /// The graph's handle (its address).
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    fn new_node(self: &Arc<Self>, op: Op, origin: Option<u64>) -> Arc<Node> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let n = Arc::new(Node {
            id,
            origin: origin.unwrap_or(id),
            graph: Arc::downgrade(self),
            op: Mutex::new(op),
            attrs: Mutex::new(KernelAttrs::default()),
        });
        registry().nodes.lock().insert(n.handle(), Arc::downgrade(&n));
        n
    }

    /// Whether `n` is a node of this graph.
    pub fn owns(self: &Arc<Self>, n: &Node) -> bool {
        n.graph.upgrade().is_some_and(|g| Arc::ptr_eq(&g, self))
    }

    /// Adds a node running `op` after `deps` (clr `ihipGraphAddNode`). Errors:
    /// `hipErrorInvalidValue` when a dependency is of another graph or named twice.
    pub fn add(self: &Arc<Self>, op: Op, deps: &[Arc<Node>]) -> Result<Arc<Node>, hipError_t> {
        let mut seen = HashSet::new();
        for d in deps {
            if !self.owns(d) || !seen.insert(d.id) {
                return Err(hipError_t::hipErrorInvalidValue);
            }
        }
        let n = self.new_node(op, None);
        let mut inner = self.inner.lock();
        inner.nodes.push(n.clone());
        inner.edges.extend(deps.iter().map(|d| (d.id, n.id)));
        drop(inner);
        note_manual_node(self, &n);
        Ok(n)
    }

    /// The nodes in the order they were added.
    pub fn nodes(&self) -> Vec<Arc<Node>> {
        self.inner.lock().nodes.clone()
    }

    fn by_id(inner: &Inner) -> HashMap<u64, Arc<Node>> {
        inner.nodes.iter().map(|n| (n.id, n.clone())).collect()
    }

    /// The edges as node pairs, in the order they were added.
    pub fn edges(&self) -> Vec<Edge> {
        let inner = self.inner.lock();
        let ids = Self::by_id(&inner);
        inner.edges.iter().map(|(a, b)| (ids[a].clone(), ids[b].clone())).collect()
    }

    /// Nodes without dependencies.
    pub fn roots(&self) -> Vec<Arc<Node>> {
        let inner = self.inner.lock();
        let to: HashSet<u64> = inner.edges.iter().map(|e| e.1).collect();
        inner.nodes.iter().filter(|n| !to.contains(&n.id)).cloned().collect()
    }

    /// Nodes nothing depends on.
    pub fn leaves(&self) -> Vec<Arc<Node>> {
        let inner = self.inner.lock();
        let from: HashSet<u64> = inner.edges.iter().map(|e| e.0).collect();
        inner.nodes.iter().filter(|n| !from.contains(&n.id)).cloned().collect()
    }

    /// The nodes `n` depends on (`to == true`: the nodes depending on `n`).
    pub fn neighbours(&self, n: &Node, dependents: bool) -> Vec<Arc<Node>> {
        let inner = self.inner.lock();
        let ids = Self::by_id(&inner);
        inner
            .edges
            .iter()
            .filter_map(|&(a, b)| match dependents {
                false if b == n.id => Some(ids[&a].clone()),
                true if a == n.id => Some(ids[&b].clone()),
                _ => None,
            })
            .collect()
    }

    /// Adds the edge `from → to` (`hipGraphAddDependencies`). Errors: `hipErrorInvalidValue`
    /// when it exists already.
    pub fn add_edge(&self, from: &Node, to: &Node) -> Result<(), hipError_t> {
        let mut inner = self.inner.lock();
        if inner.edges.contains(&(from.id, to.id)) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        inner.edges.push((from.id, to.id));
        Ok(())
    }

    /// Removes the edge `from → to` (`hipGraphRemoveDependencies`). Errors:
    /// `hipErrorInvalidValue` when there is none.
    pub fn remove_edge(&self, from: &Node, to: &Node) -> Result<(), hipError_t> {
        let mut inner = self.inner.lock();
        let i = inner.edges.iter().position(|e| *e == (from.id, to.id)).ok_or(hipError_t::hipErrorInvalidValue)?;
        inner.edges.remove(i);
        Ok(())
    }

    /// Removes node `n` and its edges (`hipGraphDestroyNode`).
    pub fn remove(&self, n: &Node) {
        let removed = {
            let mut inner = self.inner.lock();
            inner.edges.retain(|e| e.0 != n.id && e.1 != n.id);
            let i = inner.nodes.iter().position(|m| m.id == n.id);
            i.map(|i| inner.nodes.remove(i))
        };
        // Dropped here, outside the graph's lock.
        drop(removed);
    }

    /// The nodes in a topological order (Kahn's, ties in the order added). Errors:
    /// `hipErrorInvalidValue` when the edges make a cycle (clr `TopologicalOrder`).
    pub fn topo(&self) -> Result<Vec<Arc<Node>>, hipError_t> {
        let inner = self.inner.lock();
        let mut indeg: HashMap<u64, usize> = inner.nodes.iter().map(|n| (n.id, 0)).collect();
        for (_, b) in &inner.edges {
            *indeg.get_mut(b).expect("edge to a node of the graph") += 1;
        }
        let mut order = Vec::with_capacity(inner.nodes.len());
        let mut done = HashSet::new();
        while order.len() < inner.nodes.len() {
            let next = inner.nodes.iter().find(|n| !done.contains(&n.id) && indeg[&n.id] == 0);
            let Some(n) = next else { return Err(hipError_t::hipErrorInvalidValue) };
            done.insert(n.id);
            for (_, b) in inner.edges.iter().filter(|e| e.0 == n.id) {
                *indeg.get_mut(b).expect("edge to a node of the graph") -= 1;
            }
            order.push(n.clone());
        }
        Ok(order)
    }

    /// A copy of the graph with fresh nodes that remember the nodes they copy (`hipGraphClone`);
    /// child graphs are copied too.
    pub fn deep_clone(self: &Arc<Self>) -> Arc<Graph> {
        let g = Graph::new(self.dev, true);
        let (nodes, edges) = {
            let inner = self.inner.lock();
            (inner.nodes.clone(), inner.edges.clone())
        };
        let mut map = HashMap::new();
        let mut new_nodes = Vec::with_capacity(nodes.len());
        for n in &nodes {
            let c = g.new_node(n.op().deep_clone(), Some(n.origin));
            *c.attrs.lock() = *n.attrs.lock();
            map.insert(n.id, c.id);
            new_nodes.push(c);
        }
        let mut inner = g.inner.lock();
        inner.nodes = new_nodes;
        inner.edges = edges.iter().map(|(a, b)| (map[a], map[b])).collect();
        drop(inner);
        // The clone owns one reference to each user object the original owns (clr
        // `Graph::clone`).
        *g.user_objects.lock() = self.retain_user_objects_once().into_iter().map(|h| (h, 1)).collect();
        g
    }

    /// Takes one more reference to each live user object the graph owns → their handles (for a
    /// clone or an executable graph made from it).
    fn retain_user_objects_once(&self) -> Vec<usize> {
        let objects: Vec<usize> = self.user_objects.lock().keys().copied().collect();
        objects.into_iter().filter(|&h| user_object_retain(h, 1)).collect()
    }

    /// `hipGraphRetainUserObject`: the graph takes `count` references to user object `h`, new
    /// ones, or (`take`: `hipGraphUserObjectMove`) the caller's. A destroyed object is ignored
    /// (clr).
    pub fn retain_user_object(&self, h: usize, count: u32, take: bool) {
        if take && !user_object_live(h) || !take && !user_object_retain(h, count) {
            return;
        }
        let mut m = self.user_objects.lock();
        let held = m.entry(h).or_insert(0);
        *held = held.saturating_add(count);
    }

    /// `hipGraphReleaseUserObject`: gives back up to `count` of the references the graph owns to
    /// `h` (none owned: nothing happens, as clr).
    pub fn release_user_object(&self, h: usize, count: u32) {
        let n = {
            let mut m = self.user_objects.lock();
            let Some(held) = m.get_mut(&h) else { return };
            let n = count.min(*held);
            *held -= n;
            if *held == 0 {
                m.remove(&h);
            }
            n
        };
        user_object_release(h, n);
    }

    /// `hipGraphDebugDotPrint`'s text: a DOT digraph with one dashed cluster per graph (child
    /// graphs after their parent), a node per graph node labelled with its id, its kind as clr
    /// names it (`MEMCPY`, `MEMSET`, `KERNEL`, ...) and, for copies and fills, direction or
    /// value and bytes; one edge per dependency (the layout of clr's `Graph::GenerateDOT`).
    /// `flags` (`hipGraphDebugDotFlags`) add nothing here.
    pub fn dot(&self, flags: u32) -> String {
        let _ = flags;
        let mut out = String::from("digraph dot {\n");
        let mut clusters = vec![(0usize, self.nodes(), self.inner.lock().edges.clone())];
        let mut next = 1;
        while let Some((gid, nodes, edges)) = clusters.pop() {
            out += &format!("subgraph cluster_{gid} {{\nlabel=\"graph_{gid}\"graph[style=\"dashed\"];\n");
            let name = |id: u64| format!("graph_{gid}_node_{id}");
            for n in &nodes {
                let op = n.op();
                let (shape, mut label) = match &op {
                    Op::Memcpy { .. } | Op::Memcpy3D { .. } => ("trapezium", "MEMCPY".to_string()),
                    Op::Memset { .. } => ("invtrapezium", "MEMSET".to_string()),
                    Op::Kernel(k) => ("octagon", format!("KERNEL\n{}", k.func.name)),
                    Op::Child(g) => {
                        clusters.push((next, g.nodes(), g.inner.lock().edges.clone()));
                        next += 1;
                        ("rectangle", format!("graph_{}", next - 1))
                    }
                    Op::Empty => ("rectangle", "EMPTY".into()),
                    Op::Host { .. } => ("rectangle", "HOST".into()),
                    Op::EventRecord(_) => ("rectangle", "EVENT_RECORD".into()),
                    Op::EventWait(_) => ("rectangle", "EVENT_WAIT".into()),
                    Op::MemAlloc(_) => ("rectangle", "MEM_ALLOC".into()),
                    Op::MemFree(_) => ("rectangle", "MEM_FREE".into()),
                    Op::BatchMemOps(_) => ("rectangle", "BATCH_MEM_OP_NODE".into()),
                    Op::ExtSemSignal(_) => ("rectangle", "EXTERNAL_SEMAPHORE_SIGNAL".into()),
                    Op::ExtSemWait(_) => ("rectangle", "EXTERNAL_SEMAPHORE_WAIT".into()),
                };
                match &op {
                    Op::Memcpy { len, kind, .. } => {
                        label += &format!("\n({},{len})", dot_direction(*kind, false, false))
                    }
                    Op::Memcpy3D { parms, block, .. } => {
                        let p = &parms.0;
                        let dir = dot_direction(p.kind, !p.srcArray.is_null(), !p.dstArray.is_null());
                        label += &format!("\n({dir},{})", block.width * block.height * block.depth);
                    }
                    Op::Memset { p, depth, .. } => {
                        let bytes = p.0.width * p.0.height * depth * p.0.elementSize as usize;
                        label += &format!("\n({},{bytes})", p.0.value);
                    }
                    _ => {}
                }
                let style = if matches!(op, Op::Kernel(_)) { "bold" } else { "solid" };
                out +=
                    &format!("\n\"{}\"[style=\"{style}\"shape=\"{shape}\"label=\"{}\n{label}\"];\n", name(n.id), n.id);
            }
            out += "\n";
            for (a, b) in edges {
                out += &format!("\"{}\" -> \"{}\"\n", name(a), name(b));
            }
            out += "}\n";
        }
        out += "}\n";
        out
    }

    /// The node of this graph (a clone) copied from `original` (`hipGraphNodeFindInClone`).
    pub fn find_clone_of(&self, original: &Node) -> Option<Arc<Node>> {
        self.inner.lock().nodes.iter().find(|n| n.origin == original.origin).cloned()
    }
}

/// One step of an executable graph: an operation, and the ids of the graph nodes it came from
/// (`hipGraphExec*NodeSetParams` name those).
#[derive(Clone)]
struct Step {
    ids: Vec<u64>,
    op: Op,
    /// `hipGraphNodeSetEnabled`: a disabled step does nothing.
    enabled: bool,
}

/// An executable graph (`hipGraphInstantiate`): the graph's operations in a topological order,
/// plus the edges as positions, which `hipGraphExecUpdate` compares.
pub struct Exec {
    pub dev: usize,
    /// The flags it was instantiated with (`hipGraphExecGetFlags`).
    pub flags: u64,
    steps: Mutex<Vec<Step>>,
    edges: Vec<(usize, usize)>,
    /// One reference to each user object of the graph, released with the executable graph
    /// (CUDA: an executable graph owns the references of the graph it was made from).
    user_objects: Vec<usize>,
    /// Keeps a graph with memory nodes from a second instantiation while this one lives.
    _mem_token: Option<Arc<()>>,
}

impl Drop for Exec {
    fn drop(&mut self) {
        for &h in &self.user_objects {
            user_object_release(h, 1);
        }
    }
}

/// A graph's nodes in topological order and its edges as positions in that order.
type Snapshot = (Vec<Arc<Node>>, Vec<(usize, usize)>);

fn snapshot(g: &Graph) -> Result<Snapshot, hipError_t> {
    let order = g.topo()?;
    let pos: HashMap<u64, usize> = order.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut edges: Vec<(usize, usize)> = g.inner.lock().edges.iter().map(|(a, b)| (pos[a], pos[b])).collect();
    edges.sort_unstable();
    Ok((order, edges))
}

impl Exec {
    /// Instantiates `g` with `flags`. Errors: `hipErrorInvalidValue` (a cycle),
    /// `hipErrorNotSupported` (`g` has graph memory nodes and an executable graph made from it
    /// lives: CUDA allows one).
    pub fn new(g: &Graph, flags: u64) -> Result<Exec, hipError_t> {
        use hipGraphNodeType as T;
        let (order, edges) = snapshot(g)?;
        let mem_nodes =
            order.iter().any(|n| matches!(n.node_type(), T::hipGraphNodeTypeMemAlloc | T::hipGraphNodeTypeMemFree));
        let mem_token = if mem_nodes {
            let mut t = g.exec_token.lock();
            if t.upgrade().is_some() {
                return Err(hipError_t::hipErrorNotSupported);
            }
            let token = Arc::new(());
            *t = Arc::downgrade(&token);
            Some(token)
        } else {
            None
        };
        let steps = order.iter().map(|n| Step { ids: vec![n.id], op: n.op().deep_clone(), enabled: true }).collect();
        let user_objects = g.retain_user_objects_once();
        Ok(Exec { dev: g.dev, flags, steps: Mutex::new(steps), edges, user_objects, _mem_token: mem_token })
    }

    /// `hipGraphNodeSetEnabled` (`Some`) / `hipGraphNodeGetEnabled` (`None`) of the step made from
    /// `n` → whether it is enabled. Errors: `hipErrorInvalidValue` (`n` not instantiated here, or
    /// not a kernel, copy or fill node: clr).
    pub fn enabled(&self, n: &Node, set: Option<bool>) -> Result<bool, hipError_t> {
        let mut steps = self.steps.lock();
        let s = steps.iter_mut().find(|s| s.ids.contains(&n.id)).ok_or(hipError_t::hipErrorInvalidValue)?;
        use hipGraphNodeType as T;
        let t = s.op.node_type();
        if t != T::hipGraphNodeTypeKernel && t != T::hipGraphNodeTypeMemcpy && t != T::hipGraphNodeTypeMemset {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        if let Some(e) = set {
            s.enabled = e;
        }
        Ok(s.enabled)
    }

    /// Whether graph node `n` was instantiated as a step of this executable graph.
    pub fn contains(&self, n: &Node) -> bool {
        self.steps.lock().iter().any(|s| s.ids.contains(&n.id))
    }

    /// The copy direction of the step made from graph node `n` (`None`: not a copy). Errors:
    /// `hipErrorInvalidValue` when `n` is not in the executable graph.
    pub fn copy_kind(&self, n: &Node) -> Result<Option<hipMemcpyKind>, hipError_t> {
        let steps = self.steps.lock();
        let s = steps.iter().find(|s| s.ids.contains(&n.id)).ok_or(hipError_t::hipErrorInvalidValue)?;
        Ok(s.op.copy_kind())
    }

    /// Replaces the operation of the step made from graph node `n` (`hipGraphExec*NodeSetParams`).
    /// Errors: `hipErrorInvalidValue` when `n` is not in the executable graph or `op` is of
    /// another type than the step's.
    pub fn set_op(&self, n: &Node, op: Op) -> Result<(), hipError_t> {
        let mut steps = self.steps.lock();
        let s = steps.iter_mut().find(|s| s.ids.contains(&n.id)).ok_or(hipError_t::hipErrorInvalidValue)?;
        if s.op.node_type() != op.node_type() {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        s.op = op.deep_clone();
        Ok(())
    }

    /// `hipGraphExecUpdate`: takes the operations of `g`, matched to the steps in topological
    /// order, as clr checks them: the same node count (else TopologyChanged, no node), then per
    /// node the same type (NodeTypeChanged), unless a host or empty node the same device as the
    /// instantiated graph's (UnsupportedFunctionChange), the same copy direction (ParametersChanged), the
    /// same number of dependencies (TopologyChanged); finally the same edges (TopologyChanged).
    /// On a mismatch → `(why, the node of g)` and the executable graph is left as it was.
    pub fn update(&self, g: &Graph) -> Result<(), (hipGraphExecUpdateResult, Option<Arc<Node>>)> {
        use hipGraphExecUpdateResult as R;
        let (order, edges) = snapshot(g).map_err(|_| (R::hipGraphExecUpdateError, None))?;
        let mut steps = self.steps.lock();
        if order.len() != steps.len() {
            return Err((R::hipGraphExecUpdateErrorTopologyChanged, None));
        }
        let indeg = |e: &[(usize, usize)], i: usize| e.iter().filter(|x| x.1 == i).count();
        for (i, (n, s)) in order.iter().zip(steps.iter()).enumerate() {
            let op = n.op();
            let t = op.node_type();
            let why = if t != s.op.node_type() {
                Some(R::hipGraphExecUpdateErrorNodeTypeChanged)
            } else if g.dev != self.dev
                && t != hipGraphNodeType::hipGraphNodeTypeHost
                && t != hipGraphNodeType::hipGraphNodeTypeEmpty
            {
                Some(R::hipGraphExecUpdateErrorUnsupportedFunctionChange)
            } else if op.copy_kind() != s.op.copy_kind() {
                Some(R::hipGraphExecUpdateErrorParametersChanged)
            } else if indeg(&edges, i) != indeg(&self.edges, i) {
                Some(R::hipGraphExecUpdateErrorTopologyChanged)
            } else {
                None
            };
            if let Some(why) = why {
                return Err((why, Some(n.clone())));
            }
        }
        if edges != self.edges {
            return Err((R::hipGraphExecUpdateErrorTopologyChanged, None));
        }
        for (n, s) in order.iter().zip(steps.iter_mut()) {
            s.op = n.op().deep_clone();
            s.ids.push(n.id);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Running operations
// ---------------------------------------------------------------------------------------------

impl Runtime {
    /// Runs `op` on stream `s`, or, while `s` captures, records it as a node of the capture's
    /// graph after the stream's current capture dependencies (clr's `STREAM_CAPTURE` macro and
    /// `capturehip*`): the one place where an async operation is run or recorded. Errors:
    /// `hipErrorStreamCaptureInvalidated` (the capture was invalidated), the operation's.
    pub fn enqueue(&self, s: &Arc<Stream>, op: Op) -> Result<(), hipError_t> {
        match capture_op(s, op)? {
            Some(op) => self.op_run(&op, s),
            None => Ok(()),
        }
    }

    /// Runs one operation on `s`, asynchronously, in stream order.
    fn op_run(&self, op: &Op, s: &Arc<Stream>) -> Result<(), hipError_t> {
        match op {
            Op::Empty => Ok(()),
            Op::Memcpy { dst, src, len, kind } => self.memcpy(*dst, *src, *len, *kind, s, false),
            Op::Memcpy3D { parms, dst, src, block, .. } => self.memcpy_3d(*dst, *src, *block, parms.0.kind, s, false),
            Op::Memset { p, depth, ysize } => self.memset_params(&p.0, *depth, *ysize, s),
            Op::Host { fn_, data } => {
                let (f, data) = (*fn_, *data);
                // SAFETY: the program's host function with the pointer it gave (HIP contract).
                self.stream_host_func(s, Box::new(move || unsafe { f(data as *mut c_void) }))
            }
            Op::EventRecord(e) => self.event_record(&*record_event(e, s)?, s),
            Op::EventWait(e) => self.stream_wait_event(s, &*wait_event(e)?),
            Op::Child(g) => self.graph_run(g, s),
            Op::Kernel(n) => self.kernel_node_run(s, n),
            Op::MemAlloc(a) => self.graph_mem_alloc(a),
            // Graph memory the program freed already has nothing left to free; other memory (a
            // captured hipFreeAsync of it) is freed as hipFreeAsync frees it.
            Op::MemFree(ptr) => match self.graph_mem_node(*ptr) {
                Some(_) => {
                    self.graph_mem_free(*ptr, s);
                    Ok(())
                }
                None => self.mempool_free(*ptr, s),
            },
            Op::BatchMemOps(b) => self.stream_mem_ops(s, &b.ops),
            Op::ExtSemSignal(n) if n.sems.is_empty() => Ok(()),
            Op::ExtSemSignal(n) => {
                n.check()?;
                self.ext_sem_signal(&n.sems, &n.values, s)
            }
            Op::ExtSemWait(n) if n.sems.is_empty() => Ok(()),
            Op::ExtSemWait(n) => {
                n.check()?;
                self.ext_sem_wait(&n.sems, &n.values, s)
            }
        }
    }

    /// A `hipMemsetParams` fill of `depth` slices of `ysize` rows, through
    /// [`memset_3d`](Self::memset_3d).
    fn memset_params(
        &self,
        p: &hipMemsetParams,
        depth: usize,
        ysize: usize,
        s: &Arc<Stream>,
    ) -> Result<(), hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        let (elem, pitch, dst) = (p.elementSize as u64, p.pitch as u64, p.dst as u64);
        let slice = pitch.checked_mul(ysize as u64).ok_or(inv)?;
        let value = match elem {
            1 => p.value & 0xff,
            2 => p.value & 0xffff,
            _ => p.value,
        };
        let width = (p.width as u64).checked_mul(elem).ok_or(inv)?;
        let b = Block { width, height: p.height as u64, depth: depth as u64 };
        self.memset_3d(Pitched { addr: dst, pitch, slice }, value, elem, b, s, false)
    }

    /// Runs a graph's nodes in topological order on `s`.
    fn graph_run(&self, g: &Graph, s: &Arc<Stream>) -> Result<(), hipError_t> {
        for n in g.topo()? {
            self.op_run(&n.op(), s)?;
        }
        Ok(())
    }

    /// `hipGraphLaunch`: runs the executable graph's steps on `s`, asynchronously and in stream
    /// order. Errors: `hipErrorInvalidValue` (memory of an allocation node is still allocated
    /// from the last launch, unless instantiated with `hipGraphInstantiateFlagAutoFreeOnLaunch`:
    /// CUDA), the first failing step's (later steps are not queued).
    pub fn exec_launch(&self, x: &Exec, s: &Arc<Stream>) -> Result<(), hipError_t> {
        let steps = x.steps.lock().clone();
        let auto_free = x.flags & hipGraphInstantiateFlags::hipGraphInstantiateFlagAutoFreeOnLaunch.0 as u64 != 0;
        // Refused launches queue nothing: what would fail at a later node is checked first.
        for st in steps.iter().filter(|st| st.enabled) {
            if let Op::MemAlloc(a) = &st.op {
                if !auto_free && self.graph_mem_live(a.va) {
                    return Err(hipError_t::hipErrorInvalidValue);
                }
            }
            op_check(&st.op, s)?;
        }
        for st in steps.iter().filter(|st| st.enabled) {
            self.op_run(&st.op, s)?;
        }
        Ok(())
    }
}

/// What [`Runtime::op_run`] would refuse about `op` on `s` before queuing anything: a destroyed
/// event (also inside child graphs), a kernel node whose geometry or kernel does not suit `s`'s
/// device, a memory operation on a word `s` cannot reach, a destroyed external semaphore.
/// Errors: `hipErrorInvalidHandle`, as [`Runtime::kernel_node_check`] and
/// [`Runtime::stream_mem_op_check`], `hipErrorInvalidValue` (a destroyed semaphore).
fn op_check(op: &Op, s: &Arc<Stream>) -> Result<(), hipError_t> {
    match op {
        Op::EventRecord(e) => record_event(e, s).map(drop),
        Op::EventWait(e) => wait_event(e).map(drop),
        Op::Child(g) => g.topo()?.iter().try_for_each(|n| op_check(&n.op(), s)),
        Op::Kernel(n) => crate::core::runtime::runtime()?.kernel_node_check(s, n),
        Op::BatchMemOps(b) => {
            let rt = crate::core::runtime::runtime()?;
            b.ops.iter().try_for_each(|o| rt.stream_mem_op_check(s, o))
        }
        Op::ExtSemSignal(n) | Op::ExtSemWait(n) => n.check(),
        _ => Ok(()),
    }
}

/// The event an event-record node records on `s`, if still live. An event of another device
/// than `s`'s is recorded too: clr's `GraphEventRecordNode` adds its marker to whatever stream
/// the graph runs on (hip-tests `Unit_hipGraphExecEventRecordNodeSetEvent_Positive_DifferentDevices`),
/// where `hipEventRecord` refuses the pair. Errors: `hipErrorInvalidHandle`.
fn record_event(e: &Weak<Event>, _s: &Stream) -> Result<Arc<Event>, hipError_t> {
    e.upgrade().ok_or(hipError_t::hipErrorInvalidHandle)
}

/// The event an event-wait node waits for, if still live. Errors: `hipErrorInvalidHandle`.
fn wait_event(e: &Weak<Event>) -> Result<Arc<Event>, hipError_t> {
    e.upgrade().ok_or(hipError_t::hipErrorInvalidHandle)
}

// ---------------------------------------------------------------------------------------------
// Stream capture
// ---------------------------------------------------------------------------------------------

static NEXT_CAPTURE: AtomicU64 = AtomicU64::new(1);

/// One capture sequence: the graph being built and the streams taking part.
pub struct Capture {
    pub graph: Arc<Graph>,
    /// The capture's unique id (`hipStreamGetCaptureInfo`).
    pub id: u64,
    pub mode: hipStreamCaptureMode,
    thread: std::thread::ThreadId,
    invalid: AtomicBool,
    /// The stream that began the capture (its address).
    origin: usize,
    /// Every stream taking part, the origin included.
    streams: Mutex<Vec<Weak<Stream>>>,
    /// Events recorded during the capture.
    events: Mutex<Vec<Weak<Event>>>,
    /// Nodes added with `hipGraphAdd*Node` during the capture, and nodes dropped from a stream's
    /// dependencies (`hipStreamUpdateCaptureDependencies`): neither makes the capture unjoined.
    exempt: Mutex<HashSet<u64>>,
}

impl Capture {
    pub fn invalid(&self) -> bool {
        self.invalid.load(Ordering::Acquire)
    }

    fn invalidate(&self) {
        self.invalid.store(true, Ordering::Release);
    }
}

/// A capturing stream's state: its capture, and the nodes its next operation will depend on.
pub struct StreamCapture {
    pub cap: Arc<Capture>,
    deps: Vec<Arc<Node>>,
    /// `deps` as handles, for `hipStreamGetCaptureInfo_v2` (valid until the next change).
    handles: Vec<usize>,
}

impl std::fmt::Debug for StreamCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "capture {} ({} dependencies)", self.cap.id, self.deps.len())
    }
}

impl std::fmt::Debug for EventCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "recorded in a capture after {} nodes", self.nodes.len())
    }
}

impl StreamCapture {
    fn new(cap: Arc<Capture>, deps: Vec<Arc<Node>>) -> StreamCapture {
        let mut sc = StreamCapture { cap, deps: vec![], handles: vec![] };
        sc.set_deps(deps);
        sc
    }

    fn set_deps(&mut self, deps: Vec<Arc<Node>>) {
        self.handles = deps.iter().map(|n| n.handle()).collect();
        self.deps = deps;
    }

    fn add_deps(&mut self, more: &[Arc<Node>]) {
        let mut deps = std::mem::take(&mut self.deps);
        for n in more {
            if !deps.iter().any(|d| d.id == n.id) {
                deps.push(n.clone());
            }
        }
        self.set_deps(deps);
    }
}

/// An event recorded on a capturing stream: the capture and the stream's nodes at that point.
pub struct EventCapture {
    cap: Weak<Capture>,
    nodes: Vec<Weak<Node>>,
}

/// Every capture in progress (clr `g_allCapturingStreams`; those in Global mode are clr's
/// `g_captureStreams`).
static ACTIVE: Mutex<Vec<Weak<Capture>>> = Mutex::new(Vec::new());
/// `ACTIVE`'s length, kept under its lock: calls checked against captures (every `hipMalloc`
/// and `hipFree`) take no lock while no capture was ever begun or all were forgotten.
static ACTIVE_LEN: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's captures in Global or ThreadLocal mode (clr `tls.capture_streams_`).
    static MINE: RefCell<Vec<Weak<Capture>>> = const { RefCell::new(Vec::new()) };
    /// This thread's capture interaction mode (`hipThreadExchangeStreamCaptureMode`).
    static MODE: Cell<c_int> = const { Cell::new(0) };
}

fn active() -> Vec<Arc<Capture>> {
    if ACTIVE_LEN.load(Ordering::Acquire) == 0 {
        return Vec::new();
    }
    let mut all = ACTIVE.lock();
    all.retain(|w| w.strong_count() > 0);
    ACTIVE_LEN.store(all.len(), Ordering::Release);
    all.iter().filter_map(|w| w.upgrade()).collect()
}

fn mine() -> Vec<Arc<Capture>> {
    MINE.with(|m| m.borrow().iter().filter_map(|w| w.upgrade()).collect())
}

/// Invalidates `caps`; `Err(e)` if there were any.
fn refuse(caps: Vec<Arc<Capture>>, e: hipError_t) -> Result<(), hipError_t> {
    if caps.is_empty() {
        return Ok(());
    }
    caps.iter().for_each(|c| c.invalidate());
    Err(e)
}

/// `hipThreadExchangeStreamCaptureMode`: sets this thread's mode, returns the old one.
pub fn exchange_mode(mode: hipStreamCaptureMode) -> hipStreamCaptureMode {
    hipStreamCaptureMode(MODE.with(|m| m.replace(mode.0)))
}

fn thread_mode() -> hipStreamCaptureMode {
    hipStreamCaptureMode(MODE.with(|m| m.get()))
}

/// Calls that are unsafe during capture (`hipMalloc`, `hipFree`, `hipHostRegister`, ...; clr
/// `CHECK_STREAM_CAPTURE_SUPPORTED`): in this thread's Global mode, refused while this thread
/// captures in Global or ThreadLocal mode or any thread captures in Global mode; in ThreadLocal
/// mode, while this thread captures in those modes; never in Relaxed mode. Refusing invalidates
/// those captures. Errors: `hipErrorStreamCaptureUnsupported`.
pub fn check_unsafe_call() -> Result<(), hipError_t> {
    let e = hipError_t::hipErrorStreamCaptureUnsupported;
    match thread_mode() {
        hipStreamCaptureMode::hipStreamCaptureModeRelaxed => Ok(()),
        hipStreamCaptureMode::hipStreamCaptureModeThreadLocal => refuse(mine(), e),
        _ => {
            refuse(mine(), e)?;
            refuse(global_captures(), e)
        }
    }
}

/// Calls clr refuses while this thread captures in Global or ThreadLocal mode or any thread
/// captures in Global mode, without ending those captures (`hipMemPoolCreate`, ROCm 7). Errors:
/// `hipErrorStreamCaptureUnsupported`.
pub fn check_no_capture() -> Result<(), hipError_t> {
    if mine().is_empty() && global_captures().is_empty() {
        Ok(())
    } else {
        Err(hipError_t::hipErrorStreamCaptureUnsupported)
    }
}

fn global_captures() -> Vec<Arc<Capture>> {
    active().into_iter().filter(|c| c.mode == hipStreamCaptureMode::hipStreamCaptureModeGlobal).collect()
}

/// Synchronous copies and fills (`hipMemcpy`, `hipMemset`, ...; clr `CHECK_STREAM_CAPTURING`):
/// refused while anything captures, in any mode, which invalidates every capture. Errors:
/// `hipErrorStreamCaptureImplicit`.
pub fn check_sync_copy() -> Result<(), hipError_t> {
    refuse(active(), hipError_t::hipErrorStreamCaptureImplicit)
}

/// `hipDeviceSynchronize` (clr `CHECK_SUPPORTED_DURING_CAPTURE`): refused while anything
/// captures, which invalidates every capture. Errors: `hipErrorStreamCaptureUnsupported`.
pub fn check_device_sync() -> Result<(), hipError_t> {
    refuse(active(), hipError_t::hipErrorStreamCaptureUnsupported)
}

/// `hipStreamSynchronize`/`hipStreamQuery` on `s` (clr `Stream::StreamCaptureOngoing`): refused
/// when `s` takes part in a capture (invalidating it), or, unless this thread is in Relaxed mode,
/// while any thread captures in Global mode or this thread captures in ThreadLocal/Global mode
/// (invalidating those). The null stream, which never captures, is not refused. Errors: `hipErrorStreamCaptureUnsupported`.
pub fn check_stream_sync(s: &Stream) -> Result<(), hipError_t> {
    let e = hipError_t::hipErrorStreamCaptureUnsupported;
    if let Some(sc) = s.capture.lock::<Option<StreamCapture>>().as_ref() {
        sc.cap.invalidate();
        return Err(e);
    }
    if s.is_null {
        return Ok(());
    }
    if thread_mode() == hipStreamCaptureMode::hipStreamCaptureModeRelaxed {
        return Ok(());
    }
    refuse(global_captures(), e)?;
    refuse(mine(), e)
}

/// `hipEventSynchronize`/`hipEventQuery` on an event recorded in a capture still in progress:
/// invalidates it. Errors: `hipErrorCapturedEvent`.
pub fn check_event_sync(e: &Event) -> Result<(), hipError_t> {
    let cap = e.capture.lock::<Option<EventCapture>>().as_ref().and_then(|c| c.cap.upgrade());
    match cap {
        Some(c) => {
            c.invalidate();
            Err(hipError_t::hipErrorCapturedEvent)
        }
        None => Ok(()),
    }
}

/// Whether a blocking stream of any device captures (clr `StreamCaptureBlocking`): the null
/// stream's capture queries are `hipErrorStreamCaptureImplicit` then.
pub fn blocking_capture() -> bool {
    active().iter().any(|c| {
        c.streams
            .lock()
            .iter()
            .filter_map(|w| w.upgrade())
            .any(|s| s.flags & crate::core::stream::STREAM_NON_BLOCKING == 0)
    })
}

/// `hipStreamBeginCapture` on `s` (not the null stream) in `mode`, into a new graph, or
/// (`hipStreamBeginCaptureToGraph`) into `into` after its nodes `deps` (the nodes `into` holds
/// already count as added by hand: they do not make the capture unjoined). Errors:
/// `hipErrorIllegalState` (already capturing, or joined to a capture), `hipErrorInvalidValue`
/// (a dependency not in `into`).
pub fn capture_begin(
    s: &Arc<Stream>,
    mode: hipStreamCaptureMode,
    into: Option<(Arc<Graph>, Vec<Arc<Node>>)>,
) -> Result<(), hipError_t> {
    let mut c = s.capture.lock::<Option<StreamCapture>>();
    if c.is_some() {
        return Err(hipError_t::hipErrorIllegalState);
    }
    let (graph, deps) = into.unwrap_or_else(|| (Graph::new(s.dev, false), vec![]));
    if deps.iter().any(|n| !graph.owns(n)) {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    let exempt = graph.nodes().iter().map(|n| n.id).collect();
    let cap = Arc::new(Capture {
        graph,
        id: NEXT_CAPTURE.fetch_add(1, Ordering::Relaxed),
        mode,
        thread: std::thread::current().id(),
        invalid: AtomicBool::new(false),
        origin: Arc::as_ptr(s) as usize,
        streams: Mutex::new(vec![Arc::downgrade(s)]),
        events: Mutex::new(vec![]),
        exempt: Mutex::new(exempt),
    });
    if mode != hipStreamCaptureMode::hipStreamCaptureModeRelaxed {
        MINE.with(|m| m.borrow_mut().push(Arc::downgrade(&cap)));
    }
    let mut all = ACTIVE.lock();
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(&cap));
    ACTIVE_LEN.store(all.len(), Ordering::Release);
    *c = Some(StreamCapture::new(cap, deps));
    Ok(())
}

/// Ends capture `cap` on every stream and event taking part, and forgets it.
fn capture_finish(cap: &Arc<Capture>) {
    let mut all = ACTIVE.lock();
    all.retain(|w| w.upgrade().is_some_and(|c| !Arc::ptr_eq(&c, cap)));
    ACTIVE_LEN.store(all.len(), Ordering::Release);
    drop(all);
    MINE.with(|m| m.borrow_mut().retain(|w| w.upgrade().is_some_and(|c| !Arc::ptr_eq(&c, cap))));
    let streams = std::mem::take(&mut *cap.streams.lock());
    for s in streams.iter().filter_map(|w| w.upgrade()) {
        let mut c = s.capture.lock::<Option<StreamCapture>>();
        if c.as_ref().is_some_and(|sc| Arc::ptr_eq(&sc.cap, cap)) {
            *c = None;
        }
    }
    let events = std::mem::take(&mut *cap.events.lock());
    for e in events.iter().filter_map(|w| w.upgrade()) {
        let mut c = e.capture.lock::<Option<EventCapture>>();
        if c.as_ref().is_some_and(|ec| ec.cap.upgrade().is_some_and(|c| Arc::ptr_eq(&c, cap))) {
            *c = None;
        }
    }
}

/// `hipStreamEndCapture` on `s` → the captured graph. Errors (clr
/// `hipStreamEndCapture_common`, in its order): `hipErrorIllegalState` (not capturing),
/// `hipErrorStreamCaptureUnmatched` (`s` joined the capture but did not begin it),
/// `hipErrorStreamCaptureWrongThread` (Global/ThreadLocal capture begun by another thread);
/// then the capture ends on every stream, and: `hipErrorStreamCaptureInvalidated` (it was
/// invalidated), `hipErrorStreamCaptureUnjoined` (a joined stream's work does not lead back into
/// `s`); the graph is dropped in both cases.
pub fn capture_end(s: &Arc<Stream>) -> Result<Arc<Graph>, hipError_t> {
    let (cap, deps) = {
        let c = s.capture.lock::<Option<StreamCapture>>();
        let sc = c.as_ref().ok_or(hipError_t::hipErrorIllegalState)?;
        (sc.cap.clone(), sc.deps.iter().map(|n| n.id).collect::<HashSet<u64>>())
    };
    if cap.origin != Arc::as_ptr(s) as usize {
        return Err(hipError_t::hipErrorStreamCaptureUnmatched);
    }
    if cap.mode != hipStreamCaptureMode::hipStreamCaptureModeRelaxed && cap.thread != std::thread::current().id() {
        return Err(hipError_t::hipErrorStreamCaptureWrongThread);
    }
    capture_finish(&cap);
    if cap.invalid() {
        return Err(hipError_t::hipErrorStreamCaptureInvalidated);
    }
    let exempt = cap.exempt.lock().clone();
    if cap.graph.leaves().iter().any(|n| !deps.contains(&n.id) && !exempt.contains(&n.id)) {
        return Err(hipError_t::hipErrorStreamCaptureUnjoined);
    }
    Ok(cap.graph.clone())
}

/// A stream being destroyed leaves its capture (the whole capture ends when it began it).
pub fn stream_destroyed(s: &Arc<Stream>) {
    let sc = s.capture.lock::<Option<StreamCapture>>().take();
    if let Some(sc) = sc {
        if sc.cap.origin == Arc::as_ptr(s) as usize {
            capture_finish(&sc.cap);
        }
    }
}

/// What `hipStreamGetCaptureInfo(_v2)` reports of a stream.
pub struct CaptureInfo {
    pub status: hipStreamCaptureStatus,
    /// The capture's id (0 unless active).
    pub id: u64,
    /// The graph being built (while active).
    pub graph: Option<Arc<Graph>>,
    /// The stream's capture dependencies as handles: `count` of them at `deps`, an array that
    /// stays valid until the stream's next captured operation.
    pub deps: *const usize,
    pub count: usize,
}

impl CaptureInfo {
    pub const NONE: CaptureInfo = CaptureInfo {
        status: hipStreamCaptureStatus::hipStreamCaptureStatusNone,
        id: 0,
        graph: None,
        deps: std::ptr::null(),
        count: 0,
    };
}

/// `hipStreamGetCaptureInfo(_v2)` of `s`.
pub fn capture_info(s: &Stream) -> CaptureInfo {
    let c = s.capture.lock::<Option<StreamCapture>>();
    match c.as_ref() {
        None => CaptureInfo::NONE,
        Some(sc) if sc.cap.invalid() => {
            CaptureInfo { status: hipStreamCaptureStatus::hipStreamCaptureStatusInvalidated, ..CaptureInfo::NONE }
        }
        Some(sc) => CaptureInfo {
            status: hipStreamCaptureStatus::hipStreamCaptureStatusActive,
            id: sc.cap.id,
            graph: Some(sc.cap.graph.clone()),
            deps: sc.handles.as_ptr(),
            count: sc.handles.len(),
        },
    }
}

/// `hipStreamUpdateCaptureDependencies`: adds `nodes` to `s`'s capture dependencies, or
/// (`replace`) makes them its dependencies. Errors: `hipErrorIllegalState` (not capturing),
/// `hipErrorInvalidValue` (a node not in the capture's graph).
pub fn update_deps(s: &Stream, nodes: &[Arc<Node>], replace: bool) -> Result<(), hipError_t> {
    let mut c = s.capture.lock::<Option<StreamCapture>>();
    let sc = c.as_mut().ok_or(hipError_t::hipErrorIllegalState)?;
    if nodes.iter().any(|n| !sc.cap.graph.owns(n)) {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    if replace {
        let dropped = sc.deps.iter().filter(|d| !nodes.iter().any(|n| n.id == d.id)).map(|d| d.id);
        sc.cap.exempt.lock().extend(dropped);
        sc.set_deps(nodes.to_vec());
    } else {
        sc.add_deps(nodes);
    }
    Ok(())
}

/// The node count of the graph `s` captures into (`hipStreamUpdateCaptureDependencies`' bound).
pub fn capture_node_count(s: &Stream) -> Option<usize> {
    s.capture.lock::<Option<StreamCapture>>().as_ref().map(|sc| sc.cap.graph.inner.lock().nodes.len())
}

/// A node added by hand to a graph that a capture builds does not make the capture unjoined.
fn note_manual_node(g: &Arc<Graph>, n: &Node) {
    for c in active() {
        if Arc::ptr_eq(&c.graph, g) && !CAPTURING.with(|f| f.get()) {
            c.exempt.lock().insert(n.id);
        }
    }
}

thread_local! {
    /// Set while [`Runtime::enqueue`] records a node, so that it is not taken for a manual one.
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

/// `hipEventRecord` of `e` on capturing stream `s`: the event remembers the stream's current
/// nodes (clr `Event::SetNodesPrevToRecorded`) → `true`; `false` when `s` does not capture, or
/// its capture was invalidated (clr records the event for real then).
pub fn capture_event_record(e: &Arc<Event>, s: &Stream) -> bool {
    let c = s.capture.lock::<Option<StreamCapture>>();
    let Some(sc) = c.as_ref().filter(|sc| !sc.cap.invalid()) else { return false };
    *e.capture.lock::<Option<EventCapture>>() =
        Some(EventCapture { cap: Arc::downgrade(&sc.cap), nodes: sc.deps.iter().map(Arc::downgrade).collect() });
    sc.cap.events.lock().push(Arc::downgrade(e));
    true
}

/// `hipStreamWaitEvent(s, e)` where `e` was recorded in a capture in progress: `s` joins the
/// capture (if it did not take part yet) and its next operation depends on the nodes before the
/// record (clr `hipStreamWaitEvent_common`) → `true`; `false` when `e` is not captured. Errors:
/// `hipErrorStreamCaptureMerge` (`s` captures into another graph).
pub fn capture_wait_event(s: &Arc<Stream>, e: &Event) -> Result<bool, hipError_t> {
    let (cap, nodes) = {
        let ec = e.capture.lock::<Option<EventCapture>>();
        let Some(ec) = ec.as_ref() else { return Ok(false) };
        let Some(cap) = ec.cap.upgrade() else { return Ok(false) };
        (cap, ec.nodes.iter().filter_map(|w| w.upgrade()).collect::<Vec<_>>())
    };
    let mut c = s.capture.lock::<Option<StreamCapture>>();
    match c.as_mut() {
        Some(sc) if Arc::ptr_eq(&sc.cap, &cap) => sc.add_deps(&nodes),
        Some(_) => return Err(hipError_t::hipErrorStreamCaptureMerge),
        None => {
            cap.streams.lock().push(Arc::downgrade(s));
            *c = Some(StreamCapture::new(cap, nodes));
        }
    }
    Ok(true)
}

/// Records `op` into the graph of the capture that `s` takes part in, after the stream's capture
/// dependencies → `None`; `Some(op)` back when `s` does not capture (used by
/// [`Runtime::enqueue`], and by kernel launches, which cannot run but can be captured). Errors:
/// `hipErrorStreamCaptureInvalidated`.
pub fn capture_op(s: &Stream, op: Op) -> Result<Option<Op>, hipError_t> {
    let mut c = s.capture.lock::<Option<StreamCapture>>();
    let Some(sc) = c.as_mut() else { return Ok(Some(op)) };
    if sc.cap.invalid() {
        return Err(hipError_t::hipErrorStreamCaptureInvalidated);
    }
    CAPTURING.with(|f| f.set(true));
    let n = sc.cap.graph.add(op, &sc.deps);
    CAPTURING.with(|f| f.set(false));
    sc.set_deps(vec![n?]);
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// User objects
// ---------------------------------------------------------------------------------------------

/// A user object (`hipUserObjectCreate`; CUDA "Graph Object Lifetime"; clr `hip::UserObject`):
/// a destructor and its argument, run once when the last reference (the program's, a graph's,
/// an executable graph's) is released.
struct UserObject {
    destroy: unsafe extern "C" fn(*mut c_void),
    ptr: usize,
    /// References, all owners together.
    refs: u32,
}

/// The live user objects by handle. Handles are never reused, so a handle kept by a graph
/// after its object was destroyed (the program released more than it should) names nothing.
fn user_objects() -> &'static Mutex<HashMap<usize, UserObject>> {
    static U: OnceLock<Mutex<HashMap<usize, UserObject>>> = OnceLock::new();
    U.get_or_init(Default::default)
}

/// `hipUserObjectCreate`: a user object with `refs` (≥ 1) references → its handle.
pub fn user_object_create(destroy: unsafe extern "C" fn(*mut c_void), ptr: usize, refs: u32) -> usize {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    // Handles are small multiples of 16, never null and never reused.
    let h = NEXT.fetch_add(1, Ordering::Relaxed) as usize * 16;
    user_objects().lock().insert(h, UserObject { destroy, ptr, refs });
    h
}

fn user_object_live(h: usize) -> bool {
    user_objects().lock().contains_key(&h)
}

/// `hipUserObjectRetain`: `count` more references → whether the object lives (a destroyed one
/// is ignored, as clr does).
pub fn user_object_retain(h: usize, count: u32) -> bool {
    match user_objects().lock().get_mut(&h) {
        Some(o) => {
            o.refs = o.refs.saturating_add(count);
            true
        }
        None => false,
    }
}

/// `hipUserObjectRelease`: `count` fewer references; the last one runs the destructor (on the
/// calling thread). Releasing more than there are, or a destroyed object, does nothing (clr).
pub fn user_object_release(h: usize, count: u32) {
    let gone = {
        let mut m = user_objects().lock();
        match m.get_mut(&h) {
            Some(o) if o.refs > count => {
                o.refs -= count;
                None
            }
            Some(o) if o.refs == count => m.remove(&h),
            _ => None,
        }
    };
    if let Some(o) = gone {
        // SAFETY: the program's destructor with the pointer it gave (HIP contract).
        unsafe { (o.destroy)(o.ptr as *mut c_void) };
    }
}

/// A copy's direction as clr's DOT labels name it (`HtoD`, `DtoA`, ...): an array side is `A`,
/// the rest follows the copy kind (`Default` when the kind leaves it to the pointers).
fn dot_direction(kind: hipMemcpyKind, src_array: bool, dst_array: bool) -> String {
    use hipMemcpyKind as K;
    let (src, dst) = match kind {
        K::hipMemcpyHostToHost => ('H', 'H'),
        K::hipMemcpyHostToDevice => ('H', 'D'),
        K::hipMemcpyDeviceToHost => ('D', 'H'),
        K::hipMemcpyDeviceToDevice | K::hipMemcpyDeviceToDeviceNoCU => ('D', 'D'),
        _ => return "Default".into(),
    };
    let side = |array: bool, c: char| if array { 'A' } else { c };
    format!("{}to{}", side(src_array, src), side(dst_array, dst))
}
