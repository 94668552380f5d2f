//! User queues (linux `kfd_queue.c`, `kfd_process_queue_manager.c`, `kfd_doorbell.c`).
//!
//! A queue owns a doorbell slot in its pdd's 8 KiB doorbell slice and holds a `queue_refcount`
//! on the GPUVM mappings of its rptr, wptr and ring (`kfd_queue_acquire_buffers`), which makes
//! UNMAP of those BOs fail with EBUSY until the queue is destroyed. SDMA queues are executed by
//! the process's engine ([`super::sdma`]), AQL and PM4 compute queues by a processor thread
//! each ([`super::aql`], [`super::pm4`], run by the same worker loop).

use super::bo::Bo;
use super::gpuvm::Gpuvm;
use super::process::Pdd;
use super::svm::Svms;
use super::sys::PAGE_SIZE;
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Doorbells per process slice (8 KiB / 8 bytes).
pub const DOORBELLS_PER_SLICE: u32 = (kfd_ioctl::mmap::KFD_DOORBELL_PROCESS_SLICE / 8) as u32;

/// `KFD_MAX_NUM_OF_QUEUES_PER_PROCESS`.
pub const KFD_MAX_NUM_OF_QUEUES_PER_PROCESS: u32 = 1024;

/// What the engine needs to run one SDMA or AQL queue; shared between the ioctl side and the engine.
pub struct QueueRt {
    pub queue_id: u32,
    pub gpu_id: u32,
    pub vm: Arc<RwLock<Gpuvm>>,
    /// The ring: base VA and size in bytes (a power of two). UPDATE_QUEUE may move it
    /// (`pqm_update_queue_properties`); read it with [`QueueRt::ring`].
    pub(super) ring: Mutex<(u64, u64)>,
    /// `QUEUE_IS_ACTIVE` (kfd_priv.h) less eviction and suspension: a ring address, a ring size
    /// and a `queue_percentage` above 0. UPDATE_QUEUE with a NULL ring address (or percentage 0)
    /// clears it and the engine leaves the queue alone, doorbell or not, until an update makes it
    /// active again (kfdtest `Disable*QueueByUpdateWithNullAddress`).
    pub active: AtomicBool,
    pub rptr_va: u64,
    pub wptr_va: u64,
    /// The pdd's doorbell slice and this queue's byte offset in it.
    pub doorbell: Arc<Bo>,
    pub doorbell_off: u64,
    /// The engine's read index (bytes, monotonically increasing like the doorbell value).
    pub rptr: AtomicU64,
    /// Set on a VM fault (all queues of the GPU) or destroy: the engine no longer runs it, and a
    /// kernel dispatch it is running is abandoned (shared with the interpreter's cancel hook).
    pub stopped: Arc<AtomicBool>,
    /// Held by the engine while it executes this queue; DESTROY takes it to wait for the engine.
    pub exec: Mutex<()>,
    pub is_sdma: bool,
    /// An AQL compute queue (run by its own processor thread, [`super::aql`]); the read index
    /// and doorbell count packets.
    pub is_aql: bool,
    /// A PM4 compute queue (`KFD_IOC_QUEUE_TYPE_COMPUTE`, run by its own processor thread,
    /// [`super::pm4`]); the read pointer and doorbell count dwords.
    pub is_pm4: bool,
    /// The CP state of a PM4 queue (SH registers, an interrupted indirect buffer).
    pub pm4: Mutex<super::pm4::Pm4State>,
    /// The SDMA engine that runs it (`sdma_engine_id`: PCIe engines first, then xGMI).
    pub engine: u32,
    /// `queue_priority` (0..=15), from CREATE_QUEUE and UPDATE_QUEUE: an AQL queue's pipe
    /// priority ([`super::aql`]).
    pub priority: AtomicU32,
    /// The dispatches running on its GPU in this process (the pdd's; AQL queues only use it).
    pub pipes: Arc<super::aql::PipeLoad>,
    /// `q->gws`: the GPU's GWS, once ALLOC_QUEUE_GWS gave it to this queue; its dispatches run
    /// with it ([`amdgcn_isa::Options::gws`]).
    pub gws: Mutex<Option<Arc<amdgcn_isa::Gws>>>,
    /// When the engine last ran packets of it (ns on the model's monotonic clock,
    /// `sdma::now_ns`): an engine thread write-protects a GPU's doorbells only once every queue
    /// of that GPU has been quiet a while.
    pub last_run: AtomicU64,
    /// The pdd's second-level trap handler (SET_TRAP_HANDLER).
    pub trap_handler: Arc<super::process::TrapHandler>,
    /// `q->doorbell_id`: the slot in the process's doorbell slice (what a trap handler's
    /// `MSG_GET_DOORBELL` answers).
    pub doorbell_id: u32,
    /// The process, for what its waves' interrupts signal.
    pub process: std::sync::Weak<super::process::Process>,
}

impl QueueRt {
    /// The ring's base VA and size in bytes.
    pub fn ring(&self) -> (u64, u64) {
        *self.ring.lock()
    }

    /// Moves the ring (UPDATE_QUEUE). An engine pass already under way finishes on the ring it
    /// read; moving a ring with unconsumed packets is the caller's race, as on hardware.
    pub fn set_ring(&self, base: u64, size: u64) {
        *self.ring.lock() = (base, size);
    }

    /// Whether the doorbell holds work the engine has not finished (a live SDMA queue whose
    /// doorbell value differs from its read index, e.g. one waiting in a POLL_REGMEM).
    pub fn pending(&self) -> bool {
        if self.stopped.load(Ordering::Acquire) || !self.active.load(Ordering::Acquire) {
            return false;
        }
        let written = if self.is_aql {
            self.aql_write_index()
        } else if self.is_sdma || self.is_pm4 {
            self.doorbell.read_u64(self.doorbell_off).ok()
        } else {
            None
        };
        written.is_some_and(|v| v != self.rptr.load(Ordering::Acquire))
    }

    /// An AQL queue's write index (packets): the u64 at its write-pointer location
    /// (`amd_queue_t.write_dispatch_id`, which ROCr bumps before writing a packet and the CP
    /// polls); None where that location no longer translates.
    pub fn aql_write_index(&self) -> Option<u64> {
        let vm = self.vm.read();
        let mut b = [0u8; 8];
        super::sdma::read_va(&vm, self.wptr_va, &mut b).ok()?;
        Some(u64::from_le_bytes(b))
    }
}

/// One queue in the process queue manager.
pub struct Queue {
    pub rt: Arc<QueueRt>,
    pub queue_type: u32,
    pub doorbell_slot: u32,
    /// Mapping starts (in the queue GPU's VM) whose `queue_refcount` we hold.
    pub held: Vec<u64>,
    /// A CWSR area in SVM memory: the ranges over `[va, va + len)` whose `queue_refcount` we
    /// hold (`kfd_queue_buffer_svm_get`).
    pub cwsr_svm: Option<SvmHeld>,
    pub sdma_engine_id: u32,
    /// `sdma_id` (PCIe) or `xgmi_sdma_id` (xGMI) of an SDMA or SDMA_XGMI queue: the lowest free
    /// on its GPU when created (`allocate_sdma_queue`); `u32::MAX` for other queues.
    pub sdma_id: u32,
    pub percentage: u32,
    /// CREATE_QUEUE's CWSR area (a debugger's queue snapshot shows it).
    pub ctx_save_restore_address: u64,
    pub ctx_save_restore_area_size: u32,
}

/// `kfd_queue_buffer_get`: `addr` must lie in a mapping that starts at its page and, when
/// `expected_size != 0`, is exactly `expected_size` long. Returns the mapping start.
pub fn queue_buffer_get(vm: &mut Gpuvm, addr: u64, expected_size: u64) -> Result<u64, Errno> {
    let page = addr & !(PAGE_SIZE - 1);
    let m = vm.lookup(addr).ok_or(Errno::EINVAL)?;
    let size_pages = expected_size / PAGE_SIZE;
    if m.start != page || (size_pages != 0 && page + size_pages * PAGE_SIZE != m.end()) {
        return Err(Errno::EINVAL);
    }
    let start = m.start;
    vm.get_mut(start).unwrap().queue_refcount += 1;
    Ok(start)
}

/// SVM ranges a queue's CWSR area holds: (the process's ranges, va, len).
pub type SvmHeld = (Arc<Svms>, u64, u64);

/// Drops the `queue_refcount`s an SVM CWSR area took (`kfd_queue_buffer_svm_put`).
pub fn queue_svm_put(cwsr: &Option<SvmHeld>) {
    if let Some((svms, va, len)) = cwsr {
        svms.queue_buffer_put(*va, *len);
    }
}

/// Drops the `queue_refcount`s taken by `queue_buffer_get` (`kfd_queue_unref_bo_vas`).
pub fn queue_buffers_put(vm: &mut Gpuvm, held: &[u64]) {
    for s in held {
        if let Some(m) = vm.get_mut(*s) {
            m.queue_refcount = m.queue_refcount.saturating_sub(1);
        }
    }
}

/// `kfd_queue_acquire_buffers` for the parts that apply to SDMA and compute queues: wptr and
/// rptr each in a one-page mapping starting at their page, the ring in one mapping of exactly
/// `ring_size` bytes (AQL on gfx7/gfx8 would be half; the model presents gfx9+ only).
///
/// Compute queues (COMPUTE, COMPUTE_AQL) also: an EOP buffer, when given, of exactly the node's
/// `eop_buffer_size` in one mapping of that size; `ctl_stack_size` and `ctx_save_restore_size`
/// equal to the node's `ctl_stack_size` and `cwsr_size` (published in its sysfs properties); the
/// CWSR area one mapping of `(cwsr_size + debug_memory_size) * num_xcc` bytes, page aligned, or
/// else SVM ranges over it that are GPU_ALWAYS_MAPPED on this GPU (`kfd_queue_buffer_svm_get`,
/// as libhsakmt registers the area when the node has the SVM API). Any miss is EINVAL.
pub fn acquire_buffers(
    pdd: &Pdd,
    svms: &Arc<Svms>,
    args: &kfd_ioctl_create_queue_args,
) -> Result<(Vec<u64>, Option<SvmHeld>), Errno> {
    let mut vm = pdd.vm.write();
    let mut held = Vec::with_capacity(5);
    let mut cwsr_svm = None;
    let compute = matches!(args.queue_type, KFD_IOC_QUEUE_TYPE_COMPUTE | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
    let r = (|| {
        held.push(queue_buffer_get(&mut vm, args.write_pointer_address, PAGE_SIZE)?);
        held.push(queue_buffer_get(&mut vm, args.read_pointer_address, PAGE_SIZE)?);
        held.push(queue_buffer_get(&mut vm, args.ring_base_address, args.ring_size as u64)?);
        if !compute {
            return Ok(());
        }
        let sizes = pdd.gpu.queue_sizes.ok_or(Errno::EINVAL)?;
        if args.eop_buffer_address != 0 {
            if args.eop_buffer_size != sizes.eop_buffer_size as u64 {
                return Err(Errno::EINVAL);
            }
            held.push(queue_buffer_get(&mut vm, args.eop_buffer_address, args.eop_buffer_size)?);
        }
        if args.ctl_stack_size != sizes.ctl_stack_size || args.ctx_save_restore_size != sizes.cwsr_size {
            return Err(Errno::EINVAL);
        }
        let total = sizes.total_cwsr(pdd.gpu.num_xcc);
        match queue_buffer_get(&mut vm, args.ctx_save_restore_address, total) {
            Ok(s) => held.push(s),
            Err(_) => {
                let gpuidx = svms.gpuidx(pdd.gpu.gpu_id).ok_or(Errno::EINVAL)?;
                svms.queue_buffer_get(gpuidx, args.ctx_save_restore_address, total)?;
                cwsr_svm = Some((svms.clone(), args.ctx_save_restore_address, total));
            }
        }
        Ok(())
    })();
    match r {
        Ok(()) => Ok((held, cwsr_svm)),
        Err(e) => {
            queue_buffers_put(&mut vm, &held);
            Err(e)
        }
    }
}
