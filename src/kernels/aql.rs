//! Kernel dispatch: AQL compute queues, kernarg segments, and the ordering of kernels with the
//! stream's SDMA work. Each SDMA queue that streams submit to gets an AQL queue of its own on its
//! first launch (src/core/queue.rs, `SdmaQueue::aql`), so kernels are exactly as FIFO as the copies
//! around them: streams that share a pool queue share its AQL queue, and a stream with a queue of
//! its own (the null stream; one waiting on an external semaphore) holds no other stream's
//! kernels behind its waits.
//!
//! The queue (`AMDKFD_IOC_CREATE_QUEUE` type `COMPUTE_AQL`): a ring of [`SLOTS`] 64-byte packets
//! in GTT, its read index (u64, packets, written by the CP) and write index in one GTT page, an
//! EOP buffer and a CWSR area of the sizes the kernel checks (`kfd_queue_acquire_buffers`: the
//! node's `eop_buffer_size`, `ctl_stack_size` and `cwsr_size` from its sysfs properties, the area
//! `(cwsr_size + debug_memory_size) * num_xcc` bytes, as libhsakmt sizes it), and a doorbell.
//! Packets are written body first, then header and setup with one 32-bit release store, then
//! the write index goes to the write pointer and the last packet's index to the doorbell (ROCr
//! `AqlQueue`).
//!
//! Stream order, both ways, with the SDMA queue the stream runs on (src/core/stream.rs): each launch
//! takes a record of [`RECORD`] bytes from the queue's pool (a "go" `amd_signal_t`, a completion
//! `amd_signal_t`, the kernarg segment). When the stream has unfinished work, the stream's SDMA
//! queue first writes 0 into the go signal after that work (a FENCE, behind POLL_REGMEMs for
//! other queues' fences as every stream submission) and a BARRIER_AND packet on the AQL queue
//! waits for it. Unfinished work that is only the end of a kernel already on the same AQL queue
//! needs no go signal: every packet has the barrier bit, so the queue itself runs the next
//! kernel after it (back-to-back launches skip the round trip through the SDMA queue,
//! `AqlQueue::orders_after`). The dispatch packet's completion signal goes 1 → 0 when the
//! kernel is done, and the stream's SDMA queue then polls (POLL_REGMEM) for that 0 before its
//! seq completion. So the stream's last fence is the kernel's end: events, synchronisation,
//! graphs and later copies need nothing else. Every wait names work already submitted, so
//! nothing can deadlock. A record is reused once its fence is done.
//!
//! A kernel that faults stops the GPU's queues (kfd-sim / the CP raise a memory exception): the
//! waits on the stream then return `hipErrorIllegalAddress`, as after an SDMA fault.
//!
//! Sources (facts only): HSA Platform System Architecture / Runtime spec (AQL packet formats),
//! ROCr `amd_aql_queue.cpp`, `amd_hsa_signal.h`, `amd_hsa_kernel_code.h`; clr `rocvirtual.cpp`
//! (`VirtualGPU::submitKernelInternal`: hidden kernel arguments); LLVM `AMDGPUUsage` (code object
//! V5 hidden arguments); linux `kfd_queue.c`.
//!
//! Layer `kernels`: may call `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::{hipError_t, hipKernelNodeParams};
use crate::core::memory::{gtt_flags, Bo};
use crate::core::queue::SdmaQueue;
use crate::core::runtime::Runtime;
use crate::core::stream::{Fence, Stream};
use crate::kernels::module::{Function, KernelInfo, LaunchDims};
use kfd_ioctl::kfd::*;
use kfd_ioctl::sdma;
use parking_lot::Mutex;
use std::collections::{BTreeMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Packets in the ring.
pub const SLOTS: u64 = 256;
/// Bytes of one launch record: go signal at 0, completion signal at 64, kernarg at [`KERNARG_AT`].
pub const RECORD: u64 = 8192;
/// Records in a queue's pool.
const RECORDS: u64 = 128;
/// Offset of the kernarg segment in a record (its alignment, beyond the 16 the ABI asks).
const KERNARG_AT: u64 = 256;
/// Largest kernarg segment a launch may have (bytes).
pub const KERNARG_MAX: usize = (RECORD - KERNARG_AT) as usize;

/// `hsa_packet_type_t`.
const PACKET_KERNEL_DISPATCH: u16 = 2;
const PACKET_BARRIER_AND: u16 = 3;
const PACKET_INVALID: u16 = 1;
/// Header bits: barrier (8), acquire and release fences at system scope (2 at bits 9 and 11).
const HEADER_FLAGS: u16 = 1 << 8 | 2 << 9 | 2 << 11;

/// Where a launch's explicit arguments come from.
#[derive(Clone, Copy)]
pub enum Args<'a> {
    /// None given.
    None,
    /// `kernelParams`: one pointer per explicit argument, to its value.
    Params(*mut *mut c_void),
    /// A kernarg image of the explicit arguments (`extra`'s `HIP_LAUNCH_PARAM_BUFFER_POINTER`,
    /// `hipSetupArgument`'s buffer): copied to the segment's start.
    Buffer(&'a [u8]),
}

impl Args<'_> {
    /// Whether arguments were given.
    pub fn given(&self) -> bool {
        match self {
            Args::None => false,
            Args::Params(p) => !p.is_null(),
            Args::Buffer(b) => !b.is_empty(),
        }
    }
}

/// Explicit arguments: (offset, size) of each non-hidden `.args` entry, in order.
fn explicit(k: &KernelInfo) -> impl Iterator<Item = (usize, usize)> + '_ {
    k.args.iter().filter(|a| !a.2.starts_with("hidden_")).map(|a| (a.0 as usize, a.1 as usize))
}

/// The kernarg bytes of the explicit arguments, laid out at their metadata offsets (`len`
/// bytes at least). Errors: `hipErrorInvalidValue` (a null argument pointer, a segment over
/// [`KERNARG_MAX`]).
fn explicit_image(k: &KernelInfo, args: Args, len: usize) -> Result<Vec<u8>, hipError_t> {
    let end = explicit(k).map(|(o, s)| o + s).max().unwrap_or(0).max(len);
    if end > KERNARG_MAX {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    let mut buf = vec![0u8; end];
    match args {
        Args::None => {}
        Args::Params(p) if p.is_null() => {}
        Args::Params(p) => {
            for (i, (off, size)) in explicit(k).enumerate() {
                let v = crate::abi::ffi::read_in(p.wrapping_add(i) as *const *mut c_void)?;
                let bytes = crate::abi::ffi::slice_in(v as *const u8, size)?;
                buf[off..off + size].copy_from_slice(bytes);
            }
        }
        Args::Buffer(b) => {
            let n = b.len().min(end);
            buf[..n].copy_from_slice(&b[..n]);
        }
    }
    Ok(buf)
}

/// Dimensions of a launch (the packet's `setup`, `hidden_grid_dims`): 3 if any z extent is
/// over 1, else 2 if any y extent is, else 1 (clr).
fn grid_dims(d: &LaunchDims) -> u16 {
    if d.grid[2] > 1 || d.block[2] > 1 {
        3
    } else if d.grid[1] > 1 || d.block[1] > 1 {
        2
    } else {
        1
    }
}

/// Runtime buffers a kernel's hidden arguments point to (VAs; 0 where the kernel has none).
#[derive(Debug, Clone, Copy, Default)]
pub struct HiddenBuffers {
    /// `hidden_hostcall_buffer`: the device's hostcall buffer (src/kernels/hostcall.rs).
    pub hostcall: u64,
    /// `hidden_heap_v1`: the device's heap for code object v5 device `malloc` (src/kernels/hostcall.rs).
    pub heap: u64,
}

/// The whole kernarg segment of kernel `k` for a launch: the explicit arguments, then the hidden
/// ones by `.value_kind` (block counts, group sizes, remainders 0 as the grid is whole blocks,
/// grid dims, dynamic LDS size; the hostcall buffer and device heap from `bufs`; global offsets,
/// and the printf / multigrid / queue / completion pointers, which this runtime does not provide,
/// 0). Errors as [`explicit_image`].
pub fn kernarg(k: &KernelInfo, d: &LaunchDims, args: Args, bufs: HiddenBuffers) -> Result<Vec<u8>, hipError_t> {
    let hidden_end = k.args.iter().map(|a| (a.0 + a.1) as usize).max().unwrap_or(0);
    let mut buf = explicit_image(k, args, (k.kernarg_segment_size as usize).max(hidden_end))?;
    for (off, size, kind) in &k.args {
        let v: u64 = match kind.as_str() {
            "hidden_block_count_x" => d.grid[0] as u64,
            "hidden_block_count_y" => d.grid[1] as u64,
            "hidden_block_count_z" => d.grid[2] as u64,
            "hidden_group_size_x" => d.block[0] as u64,
            "hidden_group_size_y" => d.block[1] as u64,
            "hidden_group_size_z" => d.block[2] as u64,
            "hidden_grid_dims" => grid_dims(d) as u64,
            "hidden_dynamic_lds_size" => d.shared as u64,
            "hidden_hostcall_buffer" => bufs.hostcall,
            "hidden_heap_v1" => bufs.heap,
            k if k.starts_with("hidden_") => 0,
            _ => continue,
        };
        let (off, size) = (*off as usize, (*size as usize).min(8));
        buf[off..off + size].copy_from_slice(&v.to_le_bytes()[..size]);
    }
    Ok(buf)
}

/// A kernel launch as a graph node keeps it (`hipGraphAddKernelNode`, a captured launch): the
/// function, the parameters, and a copy of the explicit arguments taken when the node was made
/// (clr copies them too: the program's pointers need not outlive the call). The parameters it
/// reports point `kernelParams` at that copy.
pub struct KernelNode {
    pub func: Arc<Function>,
    params: hipKernelNodeParams,
    /// The explicit arguments at their kernarg offsets.
    image: Box<[u8]>,
    /// One pointer into `image` per explicit argument: what `params.kernelParams` points to.
    _ptrs: Box<[*mut c_void]>,
}

// SAFETY: `params` and `_ptrs` point into `image`, owned by the node and never written after
// construction; the function pointer in `params` is only compared, never called.
unsafe impl Send for KernelNode {}
// SAFETY: as above (shared reads only).
unsafe impl Sync for KernelNode {}

impl std::fmt::Debug for KernelNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KernelNode({})", self.func.name)
    }
}

impl KernelNode {
    /// Copies a launch of `func` for a device of target `target`. Errors: as
    /// [`Function::kernel`], `hipErrorInvalidValue` (no arguments for a kernel that has some,
    /// a null argument pointer).
    pub fn new(
        func: Arc<Function>,
        params: hipKernelNodeParams,
        args: Args,
        target: &str,
    ) -> Result<KernelNode, hipError_t> {
        let (co, i) = func.kernel(target)?;
        let k = &co.kernels[i];
        if k.explicit_args() > 0 && !args.given() {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let image = explicit_image(k, args, 0)?.into_boxed_slice();
        let base = image.as_ptr() as *mut u8;
        let ptrs: Box<[*mut c_void]> = explicit(k).map(|(o, _)| base.wrapping_add(o) as *mut c_void).collect();
        let mut params = params;
        params.kernelParams = ptrs.as_ptr() as *mut *mut c_void;
        params.extra = std::ptr::null_mut();
        Ok(KernelNode { func, params, image, _ptrs: ptrs })
    }

    /// The parameters, `kernelParams` pointing at the node's copy of the arguments.
    pub fn params(&self) -> hipKernelNodeParams {
        self.params
    }

    pub fn dims(&self) -> LaunchDims {
        let p = &self.params;
        LaunchDims {
            grid: [p.gridDim.x, p.gridDim.y, p.gridDim.z],
            block: [p.blockDim.x, p.blockDim.y, p.blockDim.z],
            shared: p.sharedMemBytes as usize,
        }
    }
}

#[derive(Debug)]
struct AqlState {
    /// Packets written so far.
    wptr: u64,
    /// Records free, and in use until their fence is done.
    free: Vec<u64>,
    /// Records in use: (fence, record, whether the fence is the end of a kernel dispatched on
    /// this queue).
    inflight: VecDeque<(Fence, u64, bool)>,
}

/// One device's AQL queue.
#[derive(Debug)]
pub struct AqlQueue {
    pub dev: usize,
    pub queue_id: u32,
    ring: Bo,
    /// Read index at 0 (the CP writes it), write index at 8.
    rw: Bo,
    /// EOP buffer and CWSR area: the CP's, held for the queue's life.
    _bufs: Vec<Bo>,
    records: Bo,
    doorbell: u64,
    /// The doorbell page's mapping (kept for the process's life, as the queue).
    _doorbell_page: u64,
    state: Mutex<AqlState>,
}

/// The compute-queue sizes of a node from its sysfs properties: (`eop_buffer_size`,
/// `ctl_stack_size`, `cwsr_size`, CWSR area bytes), as libhsakmt computes the area:
/// `(cwsr_size + debug_memory_size) * num_xcc`, page aligned, `debug_memory_size` being 32 bytes
/// per wave (`kfd_queue_ctx_save_restore_size`). None when the kernel publishes no `cwsr_size`
/// (an older kernel, which checks none of them).
fn queue_sizes(p: &BTreeMap<String, u64>) -> Option<(u64, u32, u32, u64)> {
    let cwsr = *p.get("cwsr_size")?;
    let ctl = *p.get("ctl_stack_size")?;
    let get = |k: &str| p.get(k).copied().unwrap_or(0);
    let (gfxv, xcc) = (get("gfx_target_version"), get("num_xcc").max(1));
    let cu = get("simd_count") / get("simd_per_cu").max(1) / xcc;
    let waves = if gfxv < 100100 {
        (cu * 40).min(get("array_count") / get("simd_arrays_per_engine").max(1) * 512)
    } else {
        cu * 32
    };
    let debug = (waves * 32).div_ceil(64) * 64;
    let total = ((cwsr + debug) * xcc).div_ceil(4096) * 4096;
    let eop = if gfxv == 80002 { 0x8000 } else { 4096 };
    Some((eop, ctl as u32, cwsr as u32, total))
}

impl AqlQueue {
    fn rptr(&self) -> u64 {
        // SAFETY: `rw` is a CPU-mapped, page-aligned GTT BO that lives as long as `self`.
        unsafe { &*(self.rw.va as *const AtomicU64) }.load(Ordering::Acquire)
    }

    /// The address of record `r`.
    fn record(&self, r: u64) -> u64 {
        self.records.va + r * RECORD
    }

    /// Writes packets (body first, header last) and rings the doorbell; waits for room in the
    /// ring. Errors: `hipErrorIllegalAddress` when the GPU faulted (the ring no longer drains).
    fn submit(&self, rt: &Runtime, packets: &[[u8; 64]]) -> Result<(), hipError_t> {
        let mut st = self.state.lock();
        let n = packets.len() as u64;
        while st.wptr + n - self.rptr() > SLOTS {
            rt.poll_fault()?;
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        for p in packets {
            let at = self.ring.va + (st.wptr % SLOTS) * 64;
            // SAFETY: the ring BO is CPU-mapped for SLOTS * 64 bytes; the slot was consumed by
            // the CP (read index checked above), so nothing else touches it.
            unsafe {
                std::ptr::copy_nonoverlapping(p[4..].as_ptr(), (at + 4) as *mut u8, 60);
                let head = u32::from_le_bytes(p[..4].try_into().unwrap());
                (*(at as *const AtomicU32)).store(head, Ordering::Release);
            }
            st.wptr += 1;
        }
        // The write index at the queue's write pointer (what the CP reads), then the doorbell
        // with the last packet's index (HSA spec; ROCr `AqlQueue::StoreRelaxed`).
        // SAFETY: the write index word at 8 of the rw page, and the queue's doorbell.
        unsafe {
            (*((self.rw.va + 8) as *const AtomicU64)).store(st.wptr, Ordering::Release);
            std::ptr::write_volatile(self.doorbell as *mut u64, st.wptr - 1);
        }
        Ok(())
    }

    /// A free record, waiting for the oldest in use when none is. Errors: the wait's.
    fn take_record(&self, rt: &Runtime) -> Result<u64, hipError_t> {
        loop {
            let oldest = {
                let mut st = self.state.lock();
                while st.inflight.front().is_some_and(|(f, _, _)| f.done()) {
                    let (_, r, _) = st.inflight.pop_front().expect("checked");
                    st.free.push(r);
                }
                if let Some(r) = st.free.pop() {
                    return Ok(r);
                }
                st.inflight.front().expect("records are free or in flight").0.clone()
            };
            rt.fence_wait(&oldest)?;
        }
    }

    /// Record `r` is in use until `f` is done.
    fn release_after(&self, r: u64, f: Option<Fence>, end: bool) {
        let mut st = self.state.lock();
        match f {
            Some(f) => st.inflight.push_back((f, r, end)),
            None => st.free.push(r),
        }
    }

    /// Whether `f` is the end of a kernel dispatched on this queue: every later packet here
    /// runs after that kernel (each packet has the barrier bit), so a launch needs no go signal
    /// for it.
    fn orders_after(&self, f: &Fence) -> bool {
        let st = self.state.lock();
        st.inflight.iter().any(|(g, _, end)| *end && g.seq == f.seq && Arc::ptr_eq(&g.queue, &f.queue))
    }
}

/// Writes an `amd_signal_t` (kind user, `value`, no mailbox) at `va`.
fn signal_init(va: u64, value: i64) {
    // SAFETY: `va` is a 64-byte aligned signal in a CPU-mapped record no queued work uses.
    unsafe {
        std::ptr::write_bytes(va as *mut u8, 0, 64);
        (*(va as *const AtomicU64)).store(1, Ordering::Relaxed);
        (*((va + 8) as *const AtomicU64)).store(value as u64, Ordering::Release);
    }
}

fn barrier_and(dep: u64) -> [u8; 64] {
    let mut p = [0u8; 64];
    p[..2].copy_from_slice(&(PACKET_BARRIER_AND | HEADER_FLAGS).to_le_bytes());
    p[8..16].copy_from_slice(&dep.to_le_bytes());
    p
}

fn dispatch(k: &KernelInfo, kernel_object: u64, d: &LaunchDims, kernarg: u64, signal: u64) -> [u8; 64] {
    let mut p = [0u8; 64];
    p[..2].copy_from_slice(&(PACKET_KERNEL_DISPATCH | HEADER_FLAGS).to_le_bytes());
    p[2..4].copy_from_slice(&grid_dims(d).to_le_bytes());
    for i in 0..3 {
        p[4 + 2 * i..6 + 2 * i].copy_from_slice(&(d.block[i] as u16).to_le_bytes());
        p[12 + 4 * i..16 + 4 * i].copy_from_slice(&(d.grid[i].wrapping_mul(d.block[i])).to_le_bytes());
    }
    p[24..28].copy_from_slice(&k.private_segment_fixed_size.to_le_bytes());
    let group = k.group_segment_fixed_size.saturating_add(d.shared as u32);
    p[28..32].copy_from_slice(&group.to_le_bytes());
    p[32..40].copy_from_slice(&kernel_object.to_le_bytes());
    p[40..48].copy_from_slice(&kernarg.to_le_bytes());
    p[56..64].copy_from_slice(&signal.to_le_bytes());
    p
}

impl Runtime {
    /// The AQL queue paired with SDMA queue `sq` (on its device), made on first use. Errors:
    /// `hipErrorOutOfMemory`.
    pub fn aql_queue(&self, sq: &SdmaQueue) -> Result<Arc<AqlQueue>, hipError_t> {
        let mut q = sq.aql.lock::<Option<Arc<AqlQueue>>>();
        if let Some(q) = &*q {
            return Ok(q.clone());
        }
        let made = Arc::new(self.aql_create(sq.dev, sq.aql_priority)?);
        *q = Some(made.clone());
        Ok(made)
    }

    /// Creates an AQL queue on device `dev` with KFD `queue_priority` `priority`.
    fn aql_create(&self, dev: usize, priority: u32) -> Result<AqlQueue, hipError_t> {
        let d = &self.devices[dev];
        let mut bos: Vec<Bo> = Vec::new();
        let made = (|| {
            let shared = gtt_flags(true) | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
            bos.push(self.bo_alloc(dev, SLOTS * 64, shared, &[dev], true)?);
            bos.push(self.bo_alloc(dev, 4096, shared, &[dev], true)?);
            bos.push(self.bo_alloc(dev, RECORD * RECORDS, shared, &[dev], true)?);
            let mut a = kfd_ioctl_create_queue_args {
                ring_base_address: bos[0].va,
                read_pointer_address: bos[1].va,
                write_pointer_address: bos[1].va + 8,
                ring_size: (SLOTS * 64) as u32,
                gpu_id: d.gpu_id,
                queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
                queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
                queue_priority: priority,
                ..Default::default()
            };
            if let Some((eop, ctl, cwsr, total)) = queue_sizes(&d.topo.node.props) {
                bos.push(self.bo_alloc(dev, eop, gtt_flags(false), &[dev], false)?);
                bos.push(self.bo_alloc(dev, total, gtt_flags(false), &[dev], false)?);
                a.eop_buffer_address = bos[3].va;
                a.eop_buffer_size = eop;
                a.ctx_save_restore_address = bos[4].va;
                a.ctx_save_restore_size = cwsr;
                a.ctl_stack_size = ctl;
            }
            // A fresh ring holds INVALID packets only (ROCr fills it so).
            for i in 0..SLOTS {
                // SAFETY: the ring BO is CPU-mapped for SLOTS * 64 bytes.
                unsafe { *((bos[0].va + i * 64) as *mut u16) = PACKET_INVALID };
            }
            self.kfd.create_queue(&mut a).map_err(|e| {
                crate::core::log::hipkfd_log!("CREATE_QUEUE (AQL) on gpu {:#x}: {e}", d.gpu_id);
                hipError_t::hipErrorOutOfMemory
            })?;
            match self.doorbell_map(a.doorbell_offset) {
                Ok(m) => Ok((a.queue_id, m)),
                Err(e) => {
                    let _ = self.kfd.destroy_queue(a.queue_id);
                    Err(e)
                }
            }
        })();
        let (queue_id, (doorbell_page, doorbell)) = match made {
            Ok(x) => x,
            Err(e) => {
                for b in &bos {
                    self.bo_free(b);
                }
                return Err(e);
            }
        };
        crate::core::log::hipkfd_log!("AQL queue {queue_id} on device {dev}: ring {:#x}", bos[0].va);
        let mut it = bos.into_iter();
        let (ring, rw, records) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
        Ok(AqlQueue {
            dev,
            queue_id,
            ring,
            rw,
            _bufs: it.collect(),
            records,
            doorbell,
            _doorbell_page: doorbell_page,
            state: Mutex::new(AqlState { wptr: 0, free: (0..RECORDS).rev().collect(), inflight: VecDeque::new() }),
        })
    }

    /// Launches `f` on stream `s` (`dims` already validated), in stream order with the stream's
    /// other work (see the module doc). Errors: as [`crate::kernels::module::Image::load`] and
    /// [`kernarg`], `hipErrorInvalidDeviceFunction` (no such kernel), `hipErrorOutOfMemory`
    /// (no queue), `hipErrorIllegalAddress` after a GPU fault.
    pub fn kernel_launch(
        &self,
        s: &Arc<Stream>,
        f: &Function,
        dims: &LaunchDims,
        args: Args,
    ) -> Result<(), hipError_t> {
        let (co, base) = f.image.load(self, s.dev)?;
        let k = co.kernel(&f.name).ok_or(hipError_t::hipErrorInvalidDeviceFunction)?;
        // A kernel that may call the host (device printf, malloc) gets its device's buffer.
        let has = |kind: &str| k.args.iter().any(|a| a.2 == kind);
        let hostcall = has("hidden_hostcall_buffer");
        let bufs = HiddenBuffers {
            hostcall: if hostcall { self.hostcall_buffer(s.dev)? } else { 0 },
            heap: if has("hidden_heap_v1") { self.device_heap(s.dev)? } else { 0 },
        };
        let image = kernarg(k, dims, args, bufs)?;
        let implicit = self.implicit_waits(s);
        let (mut last, sq) = self.stream_lock(s);
        let q = self.aql_queue(&sq)?;
        let r = q.take_record(self)?;
        let (go, done, ka) = (q.record(r), q.record(r) + 64, q.record(r) + KERNARG_AT);
        signal_init(go, 1);
        signal_init(done, 1);
        // SAFETY: the record's kernarg area is CPU-mapped and KERNARG_MAX bytes long (checked by
        // kernarg()); no queued work uses this record.
        unsafe { std::ptr::copy_nonoverlapping(image.as_ptr(), ka as *mut u8, image.len()) };
        // A go signal only for unfinished work that this queue does not already order: the
        // stream's previous kernel on this queue (back-to-back launches) needs none.
        let need_go = implicit.iter().chain(last.iter()).any(|f| !f.done() && !q.orders_after(f));
        let mut packets = Vec::with_capacity(2);
        if need_go {
            // The go signal's value (i64 at +8) is 1: its low word 0 makes it 0.
            match self.stream_submit_locked(s, &mut last, implicit, |pk| sdma::fence(pk, go + 8, 0)) {
                Ok(_) => packets.push(barrier_and(go)),
                Err(e) => {
                    q.release_after(r, None, false);
                    return Err(e);
                }
            }
        }
        packets.push(dispatch(k, base + k.kd_address, dims, ka, done));
        crate::core::log::hipkfd_log!(
            "launch {} on device {} grid {:?} block {:?} lds {} (after go: {need_go})",
            f.name,
            s.dev,
            dims.grid,
            dims.block,
            dims.shared
        );
        if let Err(e) = q.submit(self, &packets) {
            q.release_after(r, last.clone(), false);
            return Err(e);
        }
        // The kernel's end in stream order: the completion signal's value (1 → 0) polled.
        let end = self.stream_submit_locked(s, &mut last, vec![], |pk| sdma::poll_regmem_eq(pk, done + 8, 0, u32::MAX));
        q.release_after(r, last.clone(), end.is_ok());
        let end = end?;
        if hostcall {
            self.hostcall_watch(end);
        }
        Ok(())
    }

    /// Runs a kernel node on `s` (`hipGraphLaunch`, an un-captured launch): the geometry and the
    /// kernel checked for `s`'s device (`hipErrorInvalidConfiguration`; as
    /// [`crate::kernels::module::validate_launch`]), then [`kernel_launch`](Self::kernel_launch).
    pub fn kernel_node_run(&self, s: &Arc<Stream>, n: &KernelNode) -> Result<(), hipError_t> {
        self.kernel_node_check(s, n)?;
        self.kernel_launch(s, &n.func, &n.dims(), Args::Buffer(&n.image))
    }

    /// Whether kernel node `n` can run on `s`: the geometry within `s`'s device's limits
    /// (`hipErrorInvalidConfiguration`), then [`crate::kernels::module::validate_launch`].
    pub fn kernel_node_check(&self, s: &Stream, n: &KernelNode) -> Result<(), hipError_t> {
        let d = n.dims();
        let props = &self.devices[s.dev].props;
        if !d.valid_for(props) {
            return Err(hipError_t::hipErrorInvalidConfiguration);
        }
        crate::kernels::module::validate_launch(&n.func, props, &d, true).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(args: &[(u32, u32, &str)], size: u32) -> KernelInfo {
        KernelInfo {
            kernarg_segment_size: size,
            args: args.iter().map(|(o, s, k)| (*o, *s, k.to_string())).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn kernarg_explicit_then_hidden() {
        let k = kernel(
            &[
                (0, 8, "global_buffer"),
                (8, 4, "by_value"),
                (16, 4, "hidden_block_count_x"),
                (20, 4, "hidden_block_count_y"),
                (24, 4, "hidden_block_count_z"),
                (28, 2, "hidden_group_size_x"),
                (30, 2, "hidden_group_size_y"),
                (32, 2, "hidden_group_size_z"),
                (34, 2, "hidden_remainder_x"),
                (40, 8, "hidden_global_offset_x"),
                (64, 2, "hidden_grid_dims"),
                (72, 4, "hidden_dynamic_lds_size"),
                (80, 8, "hidden_hostcall_buffer"),
            ],
            256,
        );
        let d = LaunchDims { grid: [7, 3, 1], block: [64, 2, 1], shared: 1024 };
        let p: u64 = 0x1234_5678_9abc;
        let v: u32 = 42;
        let mut ptrs = [&p as *const u64 as *mut c_void, &v as *const u32 as *mut c_void];
        let ka = kernarg(&k, &d, Args::Params(ptrs.as_mut_ptr()), HiddenBuffers::default()).unwrap();
        assert_eq!(ka.len(), 256);
        assert_eq!(u64::from_le_bytes(ka[0..8].try_into().unwrap()), p);
        assert_eq!(u32::from_le_bytes(ka[8..12].try_into().unwrap()), 42);
        let u32_at = |o: usize| u32::from_le_bytes(ka[o..o + 4].try_into().unwrap());
        let u16_at = |o: usize| u16::from_le_bytes(ka[o..o + 2].try_into().unwrap());
        assert_eq!((u32_at(16), u32_at(20), u32_at(24)), (7, 3, 1));
        assert_eq!((u16_at(28), u16_at(30), u16_at(32), u16_at(34)), (64, 2, 1, 0));
        assert_eq!((u16_at(64), u32_at(72)), (2, 1024));
        assert!(ka[40..48].iter().chain(&ka[80..88]).all(|b| *b == 0));
        // The runtime's buffers where the kernel has them.
        let bufs = HiddenBuffers { hostcall: 0x7000_1000, heap: 0x7000_2000 };
        let with = kernarg(&k, &d, Args::Params(ptrs.as_mut_ptr()), bufs).unwrap();
        assert_eq!(u64::from_le_bytes(with[80..88].try_into().unwrap()), 0x7000_1000);
        assert_eq!(with[..80], ka[..80]);
        // The same from a buffer (extra); too few bytes leave the rest 0.
        let mut buf = vec![0u8; 12];
        buf[..8].copy_from_slice(&p.to_le_bytes());
        buf[8..12].copy_from_slice(&v.to_le_bytes());
        assert_eq!(kernarg(&k, &d, Args::Buffer(&buf), HiddenBuffers::default()).unwrap(), ka);
        // A null argument pointer, a segment over the limit.
        let mut bad = [std::ptr::null_mut::<c_void>(); 2];
        assert_eq!(
            kernarg(&k, &d, Args::Params(bad.as_mut_ptr()), HiddenBuffers::default()),
            Err(hipError_t::hipErrorInvalidValue)
        );
        let big = kernel(&[(0, 8, "global_buffer")], KERNARG_MAX as u32 + 8);
        assert_eq!(kernarg(&big, &d, Args::None, HiddenBuffers::default()), Err(hipError_t::hipErrorInvalidValue));
    }

    #[test]
    fn dispatch_packet_layout() {
        let k = KernelInfo { group_segment_fixed_size: 512, private_segment_fixed_size: 16, ..Default::default() };
        let d = LaunchDims { grid: [4, 1, 1], block: [256, 1, 1], shared: 100 };
        let p = dispatch(&k, 0x7000_0100, &d, 0x8000_0100, 0x9000_0040);
        assert_eq!(u16::from_le_bytes([p[0], p[1]]), 2 | 1 << 8 | 2 << 9 | 2 << 11);
        assert_eq!(u16::from_le_bytes([p[2], p[3]]), 1);
        assert_eq!(u16::from_le_bytes([p[4], p[5]]), 256);
        assert_eq!(u32::from_le_bytes(p[12..16].try_into().unwrap()), 1024);
        assert_eq!(u32::from_le_bytes(p[16..20].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(p[24..28].try_into().unwrap()), 16);
        assert_eq!(u32::from_le_bytes(p[28..32].try_into().unwrap()), 612);
        assert_eq!(u64::from_le_bytes(p[32..40].try_into().unwrap()), 0x7000_0100);
        assert_eq!(u64::from_le_bytes(p[40..48].try_into().unwrap()), 0x8000_0100);
        assert_eq!(u64::from_le_bytes(p[56..64].try_into().unwrap()), 0x9000_0040);
        let b = barrier_and(0x9000_0000);
        assert_eq!(u16::from_le_bytes([b[0], b[1]]) & 0xff, 3);
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 0x9000_0000);
    }

    #[test]
    fn queue_sizes_as_the_kernel_checks_them() {
        // An MI210 node (gfx90a, 104 CUs): the figures kfd_queue_ctx_save_restore_size gives.
        let props: BTreeMap<String, u64> = [
            ("gfx_target_version", 90010),
            ("simd_count", 416),
            ("simd_per_cu", 4),
            ("num_xcc", 1),
            ("array_count", 8),
            ("simd_arrays_per_engine", 1),
            ("cwsr_size", 0x9000 + 104 * 0x95000),
            ("ctl_stack_size", 0x9000),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let (eop, ctl, cwsr, total) = queue_sizes(&props).unwrap();
        assert_eq!((eop, ctl, cwsr), (4096, 0x9000, 0x9000 + 104 * 0x95000));
        assert_eq!(total, (0x9000 + 104 * 0x95000 + 4096 * 32) as u64);
        let mut old = props.clone();
        old.remove("cwsr_size");
        assert_eq!(queue_sizes(&old), None);
    }
}
