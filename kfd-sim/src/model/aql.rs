//! The command processor of AQL compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`): reads the
//! 64-byte packets of the HSA queue ring and runs kernel dispatches with the gfx90a interpreter
//! ([`amdgcn_isa`]).
//!
//! Ring and indices: the ring is `ring_size` bytes of 64-byte packets. The write index (packets
//! reserved so far) is the u64 at the queue's write-pointer location (`amd_queue_t`'s
//! `write_dispatch_id`: ROCr bumps it before it writes a packet, and the gfx9 CP polls it); the
//! doorbell, which takes the index of the last packet written (HSA spec; ROCr's
//! `AqlQueue::StoreRelaxed`), only wakes the processor. The read index, in packets, is published
//! to the queue's read-pointer location after every packet, and every consumed packet's header is
//! set back to INVALID (as the CP does, so that the producer sees a free slot). A slot whose
//! header type is still INVALID stalls the queue until it changes (the producer stores the
//! header last). Packets (HSA spec "AQL packets", `hsa.h`):
//! - header (u16): type in bits 7:0 (VENDOR_SPECIFIC 0, INVALID 1, KERNEL_DISPATCH 2,
//!   BARRIER_AND 3, AGENT_DISPATCH 4, BARRIER_OR 5), barrier bit 8, acquire and release fence
//!   scopes in bits 10:9 and 12:11. The model runs one packet at a time, in order, with host
//!   coherent memory: the barrier bit and the fences need nothing more.
//! - KERNEL_DISPATCH: setup (dims) at +2, workgroup_size x/y/z (u16) at +4, grid_size x/y/z
//!   (u32) at +12, private_segment_size at +24, group_segment_size at +28, kernel_object at
//!   +32, kernarg_address at +40, completion_signal at +56.
//! - BARRIER_AND / BARRIER_OR: dep_signal[5] (u64) at +8, completion_signal at +56; waits
//!   until every (AND) or any (OR) non-null dependency's value is 0 (an OR with none passes).
//! - VENDOR_SPECIFIC with `AmdFormat` (byte 2) BARRIER_VALUE (2), ROCr's
//!   `hsa_amd_barrier_value_packet_t`: signal at +8, value at +16, mask at +24, condition (u32:
//!   EQ 0, NE 1, LT 2, GTE 3) at +32, completion_signal at +56; waits until
//!   `(signal.value & mask) cond value`.
//! - VENDOR_SPECIFIC with `AmdFormat` PM4_IB (1): a PM4 indirect buffer; the model accepts one
//!   holding only NOP and ACQUIRE_MEM (cache invalidates, as ROCr's blit path sends them).
//! - anything else is an invalid packet: the queue stops with a VM fault at the packet.
//!
//! Signals (`amd_signal_t`, ROCr `amd_hsa_signal.h`): value (i64) at +8, event_mailbox_ptr at
//! +16, event_id (u32) at +24. Completion decrements the value atomically, then, when the
//! mailbox is non-null, writes the event id to it and raises the KFD event (as the SDMA TRAP
//! path: `kfd_signal_event_interrupt`).
//!
//! Pipe priority: the CP gives each queue the pipe priority of its `queue_priority` (linux
//! `kfd_mqd_manager.c`, `pipe_priority_map`: 0-6 LOW, 7-10 MEDIUM, 11-15 HIGH; clr's low,
//! normal and high priority streams get 0, 7 and 11 through ROCr). While a dispatch of a higher
//! pipe priority runs on the same GPU (in this process), each host thread of a lower one sleeps
//! [`YIELD`] before it takes a workgroup: the lower queue slows down and never stops, as the
//! hardware still gives it the CUs the higher one leaves free, so a kernel that waits for a
//! lower-priority one still finishes.
//!
//! Faults: a dispatch whose memory access faults is a GPU VM fault (every queue of the process
//! on that GPU stops, MEMORY events set) like an SDMA fault; a kernel the interpreter cannot run
//! (an unsupported instruction, an invalid descriptor) prints one line on stderr and stops the
//! queues the same way, so the waiting program sees a failed GPU instead of a hang.

use super::bo::Bo;
use super::gpuvm::{Fault, FaultKind, Gpuvm};
use super::queue::QueueRt;
use super::sdma::{read_dwords, read_va, write_va};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes per AQL packet.
pub const PACKET: u64 = 64;

pub const TYPE_VENDOR_SPECIFIC: u8 = 0;
pub const TYPE_INVALID: u8 = 1;
pub const TYPE_KERNEL_DISPATCH: u8 = 2;
pub const TYPE_BARRIER_AND: u8 = 3;
pub const TYPE_BARRIER_OR: u8 = 5;
/// `AMD_AQL_FORMAT_BARRIER_VALUE` (ROCr `amd_hsa_queue.h` / `hsa_ext_amd.h`).
pub const AMD_FORMAT_BARRIER_VALUE: u8 = 2;
/// `AMD_AQL_FORMAT_PM4_IB`: a PM4 indirect buffer in an AQL slot (`amd_aql_pm4_ib_packet_t`).
pub const AMD_FORMAT_PM4_IB: u8 = 1;

/// PM4 type-3 opcodes an indirect buffer may hold: NOP and ACQUIRE_MEM (a cache invalidate,
/// nothing to do with coherent host memory).
const PM4_NOP: u32 = 0x10;
const PM4_ACQUIRE_MEM: u32 = 0x58;

/// Runs a PM4_IB vendor packet: the INDIRECT_BUFFER command at +4 (IB address at +8, size in
/// dwords in bits 19:0 of +16). The model runs only cache operations (what ROCr's blit path
/// puts there); any other PM4 packet is an error.
fn pm4_ib(vm: &Gpuvm, p: &[u8; 64]) -> Result<(), String> {
    let (addr, dwords) = (u64_at(p, 8) & 0xffff_ffff_fffc, (u32_at(p, 16) & 0xf_ffff) as usize);
    let dw = read_dwords(vm, addr, dwords).map_err(|f| format!("IB at {:#x} unreadable ({:#x})", addr, f.va))?;
    let mut i = 0;
    while i < dw.len() {
        let h = dw[i];
        let (ty, count, op) = (h >> 30, ((h >> 16) & 0x3fff) as usize, (h >> 8) & 0xff);
        if ty != 3 || !(op == PM4_NOP || op == PM4_ACQUIRE_MEM) {
            return Err(format!("PM4 packet {h:#010x} is not modelled"));
        }
        i += count + 2;
    }
    Ok(())
}

/// Environment variable: host threads that run the workgroups of one dispatch (a positive
/// integer; default: the machine's available parallelism).
pub const ENV_CU_THREADS: &str = "KFDSIM_CU_THREADS";

fn cu_threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::env::var(ENV_CU_THREADS)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
    })
}

/// Kernel dispatches run by this process: count, lane-instructions, wall nanoseconds in the
/// interpreter, and those nanoseconds times the host threads that ran workgroups.
static DISPATCHES: AtomicU64 = AtomicU64::new(0);
static LANE_INSTRUCTIONS: AtomicU64 = AtomicU64::new(0);
static DISPATCH_NS: AtomicU64 = AtomicU64::new(0);
static DISPATCH_THREAD_NS: AtomicU64 = AtomicU64::new(0);

fn count_dispatch(s: Option<&amdgcn_isa::Stats>, dt: std::time::Duration, workgroups: u64) {
    let ns = dt.as_nanos() as u64;
    let threads = (cu_threads() as u64).min(workgroups).max(1);
    DISPATCHES.fetch_add(1, Ordering::Relaxed);
    LANE_INSTRUCTIONS.fetch_add(s.map_or(0, |s| s.lane_instructions), Ordering::Relaxed);
    DISPATCH_NS.fetch_add(ns, Ordering::Relaxed);
    DISPATCH_THREAD_NS.fetch_add(ns * threads, Ordering::Relaxed);
}

/// The dispatch counters for `kfdsim_stat`: `aql.dispatches`, `aql.lane_instructions`,
/// `aql.dispatch_ns` (wall time in the interpreter), `aql.dispatch_thread_ns` (that time times
/// the host threads running workgroups); `None` for another key.
pub fn dispatch_stat(key: &str) -> Option<u64> {
    let c = match key {
        "aql.dispatches" => &DISPATCHES,
        "aql.lane_instructions" => &LANE_INSTRUCTIONS,
        "aql.dispatch_ns" => &DISPATCH_NS,
        "aql.dispatch_thread_ns" => &DISPATCH_THREAD_NS,
        _ => return None,
    };
    Some(c.load(Ordering::Relaxed))
}

/// What one pass over a queue did.
pub struct Pass {
    /// Packets consumed.
    pub progress: bool,
    /// A barrier waits on a signal (re-read it soon).
    pub waiting: bool,
    /// Event ids to raise (completion signals with a mailbox).
    pub events: Vec<u32>,
    pub fault: Option<Fault>,
}

/// A queue GPU's VM as the interpreter sees it: reads, writes and real host atomics on the BOs.
/// The VM's lock is taken per access, never for the whole dispatch: the driver keeps working
/// while a kernel runs (a kernel may spin on a flag the host sets after a `hipMalloc`, whose
/// ioctls take the VM for writing). The BOs behind the host pointers handed to the
/// interpreter's TLB are pinned until the dispatch ends, so a BO freed meanwhile stays backed
/// for it (like a real GPU's stale TLB entry; the page is not reused under the kernel).
pub struct VmMemory<'a> {
    pub vm: &'a RwLock<Gpuvm>,
    pins: Mutex<Vec<Arc<Bo>>>,
}

impl<'a> VmMemory<'a> {
    pub fn new(vm: &'a RwLock<Gpuvm>) -> Self {
        VmMemory { vm, pins: Mutex::new(Vec::new()) }
    }

    /// The model's fault for an interpreter fault: a write to a mapped page is ReadOnly.
    fn fault_of(&self, f: amdgcn_isa::Fault) -> Fault {
        Fault { va: f.va & !0xfff, kind: self.vm.read().fault_kind(f.va, f.write) }
    }

    /// Keeps `bo` (and so its mapping) alive until the dispatch ends.
    fn pin(&self, bo: &Arc<Bo>) {
        let mut pins = self.pins.lock();
        if !pins.iter().rev().any(|b| Arc::ptr_eq(b, bo)) {
            pins.push(bo.clone());
        }
    }
}

fn isa_fault(f: Fault, write: bool) -> amdgcn_isa::Fault {
    amdgcn_isa::Fault { va: f.va, write }
}

impl amdgcn_isa::Memory for VmMemory<'_> {
    fn read(&self, va: u64, dst: &mut [u8]) -> Result<(), amdgcn_isa::Fault> {
        read_va(&self.vm.read(), va, dst).map_err(|f| isa_fault(f, false))
    }

    fn write(&self, va: u64, src: &[u8]) -> Result<(), amdgcn_isa::Fault> {
        write_va(&self.vm.read(), va, src).map_err(|f| isa_fault(f, true))
    }

    fn atomic(&self, va: u64, width: u32, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, amdgcn_isa::Fault> {
        let w = if width == 8 { 8u64 } else { 4 };
        let vm = self.vm.read();
        let segs = vm.translate(va, w, true).map_err(|f| isa_fault(f, true))?;
        if segs.len() == 1 && va.is_multiple_of(w) {
            if let Some(p) = segs[0].bo.atomic_ptr(segs[0].bo_offset, w) {
                let old = if w == 8 {
                    // SAFETY: aligned, inside the live memfd mapping `translate` validated (the
                    // VM lock is held, so the BO stays mapped), or a user page `atomic_ptr` just
                    // found writable.
                    let a = unsafe { &*(p as *const AtomicU64) };
                    a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |o| Some(op(o))).unwrap_or_else(|o| o)
                } else {
                    // SAFETY: as above, 4-byte aligned.
                    let a = unsafe { &*(p as *const AtomicU32) };
                    a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |o| Some(op(o as u64) as u32))
                        .unwrap_or_else(|o| o) as u64
                };
                return Ok(old);
            }
        }
        // An unaligned word, or user pages that are not writable: not atomic against the host.
        let _serial = super::sdma::SLOW_ATOMICS.lock();
        let mut b = [0u8; 8];
        read_va(&vm, va, &mut b[..w as usize]).map_err(|f| isa_fault(f, false))?;
        let old = u64::from_le_bytes(b);
        let new = op(old);
        // A failed compare-and-swap (or any op that changes nothing) stores nothing, so a host
        // store in between is not undone.
        if new != old {
            write_va(&vm, va, &new.to_le_bytes()[..w as usize]).map_err(|f| isa_fault(f, true))?;
        }
        Ok(old)
    }

    fn host_ptr(&self, va: u64, len: u64, write: bool) -> Result<Option<*mut u8>, amdgcn_isa::Fault> {
        let segs = self.vm.read().translate(va, len, write).map_err(|f| isa_fault(f, write))?;
        if segs.len() == 1 {
            let p = segs[0].bo.ptr(segs[0].bo_offset);
            if p.is_some() {
                self.pin(&segs[0].bo);
            }
            return Ok(p);
        }
        Ok(None)
    }
}

/// An `amd_signal_t`'s value word as an atomic (the signal lives in a memfd BO), or None.
fn signal_word(vm: &Gpuvm, signal: u64) -> Result<Option<*mut u8>, Fault> {
    let segs = vm.translate(signal + 8, 8, true)?;
    Ok(if segs.len() == 1 && (signal + 8).is_multiple_of(8) { segs[0].bo.ptr(segs[0].bo_offset) } else { None })
}

/// The signal's current value.
fn signal_value(vm: &Gpuvm, signal: u64) -> Result<i64, Fault> {
    if let Some(p) = signal_word(vm, signal)? {
        // SAFETY: 8-byte aligned inside a live memfd mapping.
        return Ok(unsafe { &*(p as *const AtomicU64) }.load(Ordering::Acquire) as i64);
    }
    let mut b = [0u8; 8];
    read_va(vm, signal + 8, &mut b)?;
    Ok(i64::from_le_bytes(b))
}

/// Completes `signal`: value -= 1 (atomically), then the mailbox write; returns the event id
/// to raise, if any.
fn complete(vm: &Gpuvm, signal: u64) -> Result<Option<u32>, Fault> {
    if signal == 0 {
        return Ok(None);
    }
    if let Some(p) = signal_word(vm, signal)? {
        // SAFETY: as in signal_value.
        unsafe { &*(p as *const AtomicU64) }.fetch_sub(1, Ordering::AcqRel);
    } else {
        let v = signal_value(vm, signal)?;
        write_va(vm, signal + 8, &(v - 1).to_le_bytes())?;
    }
    let mut b = [0u8; 16];
    read_va(vm, signal + 16, &mut b)?;
    let mailbox = u64::from_le_bytes(b[..8].try_into().unwrap());
    let event_id = u32::from_le_bytes(b[8..12].try_into().unwrap());
    if mailbox == 0 {
        return Ok(None);
    }
    write_va(vm, mailbox, &(event_id as u64).to_le_bytes())?;
    Ok(Some(event_id))
}

fn u16_at(p: &[u8; 64], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}
fn u32_at(p: &[u8; 64], at: usize) -> u32 {
    u32::from_le_bytes(p[at..at + 4].try_into().unwrap())
}
fn u64_at(p: &[u8; 64], at: usize) -> u64 {
    u64::from_le_bytes(p[at..at + 8].try_into().unwrap())
}

/// The pipe priority of queue priority `p` (`pipe_priority_map`): 0 LOW, 1 MEDIUM, 2 HIGH.
fn pipe_priority(p: u32) -> usize {
    match p {
        0..=6 => 0,
        7..=10 => 1,
        _ => 2,
    }
}

/// How long a host thread of a dispatch sleeps before each workgroup while a dispatch of a
/// higher pipe priority runs on its GPU.
pub const YIELD: std::time::Duration = std::time::Duration::from_millis(2);

/// The dispatches running on one GPU of the process, by pipe priority (LOW, MEDIUM, HIGH); the
/// pdd holds it and each of its AQL queues shares it ([`QueueRt::pipes`]).
#[derive(Debug, Default)]
pub struct PipeLoad([AtomicU32; 3]);

impl PipeLoad {
    /// Whether a dispatch of pipe priority `pipe` gives way: one of a higher pipe priority runs.
    fn outranks(&self, pipe: usize) -> bool {
        self.0[pipe + 1..].iter().any(|c| c.load(Ordering::Relaxed) > 0)
    }
}

/// A dispatch counted in its GPU's [`PipeLoad`] while it lives.
struct Running {
    load: Arc<PipeLoad>,
    pipe: usize,
}

impl Running {
    fn start(load: &Arc<PipeLoad>, pipe: usize) -> Running {
        load.0[pipe].fetch_add(1, Ordering::Relaxed);
        Running { load: load.clone(), pipe }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.load.0[self.pipe].fetch_sub(1, Ordering::Relaxed);
    }
}

enum Step {
    Done(Option<u32>),
    Wait,
    Fault(Fault),
}

/// Runs the packets of AQL queue `q` between its read index and its write index.
pub fn run(q: &QueueRt) -> Pass {
    let mut pass = Pass { progress: false, waiting: false, events: Vec::new(), fault: None };
    let Some(wptr) = q.aql_write_index() else { return pass };
    let (ring_base, ring_size) = q.ring();
    let slots = ring_size / PACKET;
    let mut rptr = q.rptr.load(Ordering::Acquire);
    if wptr.wrapping_sub(rptr) > slots {
        // A write index the ring cannot hold: an invalid queue state.
        pass.fault = Some(Fault { va: ring_base & !0xfff, kind: FaultKind::NotPresent });
        return pass;
    }
    while rptr < wptr && !q.stopped.load(Ordering::Acquire) {
        let at = ring_base + (rptr % slots) * PACKET;
        let step = packet(q, at, rptr);
        match step {
            Step::Wait => {
                pass.waiting = true;
                break;
            }
            Step::Fault(f) => {
                pass.fault = Some(f);
                break;
            }
            Step::Done(ev) => {
                pass.events.extend(ev);
                rptr += 1;
                pass.progress = true;
                q.rptr.store(rptr, Ordering::Release);
                let vm = q.vm.read();
                let _ = write_va(&vm, q.rptr_va, &rptr.to_le_bytes());
            }
        }
    }
    pass
}

/// Runs dispatch `d` of queue `q` with the interpreter (the queue's pipe priority, the GPU's wave
/// slots, [`ENV_CU_THREADS`] host threads), through the queue GPU's VM taken per access. A
/// memory fault is the VM fault to raise; a kernel the interpreter cannot run prints one line
/// on stderr and is a fault at its code (the GPU's queues stop). A dispatch whose queue stops
/// while it runs (DESTROY_QUEUE) is abandoned at once and returns Ok with `q.stopped` set. Shared by AQL dispatches and
/// PM4 DISPATCH_DIRECT ([`super::pm4`]).
pub(super) fn run_kernel(q: &QueueRt, d: &amdgcn_isa::Dispatch) -> Result<(), Fault> {
    let pipe = pipe_priority(q.priority.load(Ordering::Relaxed));
    let running = Running::start(&q.pipes, pipe);
    let load = running.load.clone();
    let throttle = (pipe < 2).then(|| {
        amdgcn_isa::Throttle(Arc::new(move || {
            if load.outranks(pipe) {
                std::thread::sleep(YIELD);
            }
        }))
    });
    let mem = VmMemory::new(&q.vm);
    let max_wave_instructions = std::env::var("AMDGCN_ISA_MAX_WAVE_INSTRUCTIONS").ok().and_then(|v| v.parse().ok());
    let t0 = std::time::Instant::now();
    // The GPU's wave slots: its workgroups run side by side up to what it holds.
    let wave_slots = crate::topology::gpu_by_id(q.gpu_id).map(|g| g.simd_count as u64 * g.max_waves_per_simd as u64);
    // DESTROY_QUEUE (or a VM fault stopping the GPU's queues) ends a running dispatch: the CP
    // unmaps the queue with its waves preempted (`destroy_queue_cpsch` → `unmap_queues_cpsch`,
    // the waves saved to the CWSR area and dropped with the queue), endless loops included.
    let stopped = q.stopped.clone();
    let cancel = Some(amdgcn_isa::Cancel(Arc::new(move || stopped.load(Ordering::Acquire))));
    // The GWS, where ALLOC_QUEUE_GWS gave it to the queue (its semaphores persist between
    // dispatches).
    let gws = q.gws.lock().clone();
    let trap = trap_of(q);
    let opts = amdgcn_isa::Options { max_wave_instructions, wave_slots, throttle, cancel, gws, trap };
    let r = amdgcn_isa::run_with(&mem, d, cu_threads(), &opts);
    let wgs = (0..3).map(|k| (d.grid_size[k] as u64).div_ceil(d.workgroup_size[k].max(1) as u64)).product();
    count_dispatch(r.as_ref().ok(), t0.elapsed(), wgs);
    let code = d.registers.map_or(d.kernel_object, |r| r.pgm_addr);
    match r {
        Ok(_) => Ok(()),
        // The queue was stopped under it ([`QueueRt::stopped`]): no fault to raise; the caller
        // sees `stopped` and leaves the packet unconsumed.
        Err(amdgcn_isa::ExecError::Cancelled) => Ok(()),
        Err(amdgcn_isa::ExecError::Fault(f)) => Err(mem.fault_of(f)),
        Err(e) => {
            let what = if d.registers.is_some() { "program" } else { "kernel descriptor" };
            eprintln!(
                "kfdsim: kernel dispatch on gpu {:#x} ({what} {code:#x}) cannot run: {e}; the GPU's queues stop",
                q.gpu_id
            );
            Err(Fault { va: code & !0xfff, kind: FaultKind::NotPresent })
        }
    }
}

/// The trap handling of `q`'s dispatches: its pdd's second-level handler and doorbell, and what
/// `s_sendmsg sendmsg(MSG_INTERRUPT)` does (`event_interrupt_wq_v9`, SQ_INTERRUPT_MSG): from a
/// trap handler (PRIV) with M0 = `doorbell_id | trap_code << 10`, a debug event on the queue
/// (`kfd_set_dbg_ev_from_interrupt`, the trap code being an exception mask); otherwise, or
/// when no debugger subscribed, `kfd_signal_event_interrupt` with the 24-bit data as event id.
///
/// None where the pdd has no second-level handler: then `s_trap` ends the dispatch (a VM fault
/// at its code) instead of being stepped over as the first-level handler would, so that a
/// kernel's trap (`__builtin_trap`, `abort`) is never lost silently.
fn trap_of(q: &QueueRt) -> Option<amdgcn_isa::Trap> {
    let (gpu_id, process) = (q.gpu_id, q.process.clone());
    let tba = q.trap_handler.tba.load(Ordering::Acquire);
    if tba == 0 {
        return None;
    }
    Some(amdgcn_isa::Trap {
        tba,
        tma: q.trap_handler.tma.load(Ordering::Acquire),
        doorbell_id: q.doorbell_id,
        interrupt: Arc::new(move |data, privileged| {
            let (doorbell, code) = (data & 0x3ff, (data & 0x7_fc00) >> 10);
            if privileged && super::debug::raise_queue(gpu_id, doorbell, code as u64) {
                return;
            }
            if let Some(p) = process.upgrade() {
                p.state.lock().events.signal_interrupt(data & 0xff_ffff);
            }
        }),
        host_trap: Some(amdgcn_isa::HostTrap {
            take: {
                let th = q.trap_handler.clone();
                Arc::new(move |hw_id, seen| super::pc_sampling::host_trap(gpu_id, &th, hw_id, seen))
            },
            returned: {
                let th = q.trap_handler.clone();
                Arc::new(move || {
                    th.host_traps_running.fetch_sub(1, Ordering::SeqCst);
                })
            },
        }),
    })
}

/// Executes the packet at `at` (ring VA), dispatch id `id` (its read index). On completion its
/// header is INVALID again.
fn packet(q: &QueueRt, at: u64, id: u64) -> Step {
    // The VM lock, given up while a kernel runs (see VmMemory).
    let mut vm = q.vm.read();
    let mut p = [0u8; 64];
    if let Err(f) = read_va(&vm, at, &mut p) {
        return Step::Fault(f);
    }
    let header = u16_at(&p, 0);
    let ty = (header & 0xff) as u8;
    let trace = |what: &dyn std::fmt::Display| {
        if crate::model::trace_enabled() {
            crate::trace::emit(format_args!("AQL queue {} gpu {:#x} packet {at:#x}: {what}", q.queue_id, q.gpu_id));
        }
    };
    let signal = u64_at(&p, 56);
    let r = match ty {
        TYPE_INVALID => return Step::Wait,
        TYPE_BARRIER_AND | TYPE_BARRIER_OR => {
            let deps: Vec<u64> = (0..5).map(|i| u64_at(&p, 8 + i * 8)).filter(|s| *s != 0).collect();
            let mut zero = 0usize;
            for d in &deps {
                match signal_value(&vm, *d) {
                    Ok(0) => zero += 1,
                    Ok(_) => {}
                    Err(f) => return Step::Fault(f),
                }
            }
            let ready = if ty == TYPE_BARRIER_AND { zero == deps.len() } else { deps.is_empty() || zero > 0 };
            if !ready {
                return Step::Wait;
            }
            trace(&format_args!("barrier-{} {deps:x?}", if ty == TYPE_BARRIER_AND { "and" } else { "or" }));
            Ok(())
        }
        TYPE_VENDOR_SPECIFIC if p[2] == AMD_FORMAT_BARRIER_VALUE => {
            let (sig, value, mask) = (u64_at(&p, 8), u64_at(&p, 16) as i64, u64_at(&p, 24) as i64);
            let v = match signal_value(&vm, sig) {
                Ok(v) => v & mask,
                Err(f) => return Step::Fault(f),
            };
            let ready = match u32_at(&p, 32) {
                0 => v == value,
                1 => v != value,
                2 => v < value,
                3 => v >= value,
                c => {
                    trace(&format_args!("barrier-value: bad condition {c}"));
                    return Step::Fault(Fault { va: at & !0xfff, kind: FaultKind::NotPresent });
                }
            };
            if !ready {
                return Step::Wait;
            }
            trace(&format_args!("barrier-value {sig:#x} {v} vs {value}"));
            Ok(())
        }
        TYPE_VENDOR_SPECIFIC if p[2] == AMD_FORMAT_PM4_IB => match pm4_ib(&vm, &p) {
            Ok(()) => {
                trace(&"pm4-ib (cache operations only)");
                Ok(())
            }
            Err(e) => {
                trace(&format_args!("pm4-ib: {e}"));
                Err(Fault { va: at & !0xfff, kind: FaultKind::NotPresent })
            }
        },
        TYPE_KERNEL_DISPATCH => {
            let d = amdgcn_isa::Dispatch {
                kernel_object: u64_at(&p, 32),
                kernarg_address: u64_at(&p, 40),
                dispatch_ptr: at,
                queue_ptr: 0,
                grid_size: [u32_at(&p, 12), u32_at(&p, 16), u32_at(&p, 20)],
                workgroup_size: [u16_at(&p, 4), u16_at(&p, 6), u16_at(&p, 8)],
                group_segment_size: u32_at(&p, 28),
                private_segment_size: u32_at(&p, 24),
                registers: None,
                dispatch_id: id,
            };
            trace(&format_args!("dispatch {d:x?}"));
            let r = RwLockReadGuard::unlocked(&mut vm, || run_kernel(q, &d));
            if r.is_ok() && q.stopped.load(Ordering::Acquire) {
                // Abandoned by DESTROY_QUEUE: neither consumed nor completed.
                return Step::Wait;
            }
            r
        }
        _ => {
            trace(&format_args!("invalid packet type {ty}: {p:02x?}"));
            Err(Fault { va: at & !0xfff, kind: FaultKind::NotPresent })
        }
    };
    if let Err(f) = r {
        return Step::Fault(f);
    }
    // Consumed: the slot is free again (header INVALID), then the completion signal.
    if let Err(f) = write_va(&vm, at, &(TYPE_INVALID as u16).to_le_bytes()) {
        return Step::Fault(f);
    }
    match complete(&vm, signal) {
        Ok(ev) => Step::Done(ev),
        Err(f) => Step::Fault(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_priorities_follow_the_kernel_map() {
        let pipes: Vec<usize> = (0..16).map(pipe_priority).collect();
        assert_eq!(pipes, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    }

    #[test]
    fn lower_pipes_give_way_while_a_higher_one_runs_on_the_same_gpu() {
        let (gpu, other) = (Arc::new(PipeLoad::default()), PipeLoad::default());
        assert!(!gpu.outranks(0));
        let high = Running::start(&gpu, 2);
        assert!(gpu.outranks(0) && gpu.outranks(1) && !gpu.outranks(2));
        assert!(!other.outranks(0));
        let medium = Running::start(&gpu, 1);
        drop(high);
        assert!(gpu.outranks(0) && !gpu.outranks(1));
        drop(medium);
        assert!(!gpu.outranks(0));
    }
}
