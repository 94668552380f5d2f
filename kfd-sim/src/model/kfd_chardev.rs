//! `/dev/kfd` ioctls and mmap, laid out like linux `drivers/gpu/drm/amd/amdkfd/kfd_chardev.c`:
//! one `kfd_ioctl_<name>` per ioctl, each validating first with the kernel's errno (in the
//! kernel's order), then acting under the process lock. Memory-manager checks follow
//! `amdgpu/amdgpu_amdkfd_gpuvm.c`, queue buffer checks `kfd_queue.c`, events `kfd_events.c`.

use super::bo::{Bo, FileKey};
use super::events::{self, SIGNAL_PAGE_SIZE};
use super::gpus;
use super::gpuvm::{Hmm, Mapping};
use super::process::{self, bo_from_dmabuf, Doorbells, ProcState, Process};
use super::queue::{self, Queue, QueueRt, DOORBELLS_PER_SLICE, KFD_MAX_NUM_OF_QUEUES_PER_PROCESS};
use super::sys::{self, PAGE_SIZE};
use super::{with_args, DevKind, FileEntry};
use kfd_ioctl::kfd::*;
use kfd_ioctl::mmap::*;
use libc::{c_int, c_ulong, c_void};
use nix::errno::Errno;
use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

type R = Result<c_int, Errno>;

/// `ENOTSUPP` (524), the kernel-internal errno CREATE_QUEUE returns for an unknown queue type.
/// `nix::Errno` cannot carry it; the closest user-visible value is used.
const ENOTSUPP: Errno = Errno::EOPNOTSUPP;

/// `MAKE_HANDLE`.
fn make_handle(gpu_id: u32, idr: u32) -> u64 {
    (gpu_id as u64) << 32 | idr as u64
}
/// `GET_GPU_ID`.
fn get_gpu_id(handle: u64) -> u32 {
    (handle >> 32) as u32
}
/// `GET_IDR_HANDLE`.
fn get_idr_handle(handle: u64) -> u32 {
    handle as u32
}

/// GPUVM aperture of a gfx9 dGPU process (`kfd_flat_memory.c` `kfd_init_apertures_v9`):
/// user-managed SVM from 16 MiB (`SVM_USER_BASE` of kernels ≤ 5.14, non-zero) to the 47-bit
/// canonical limit (`gpuvm_size - 1` with `gpuvm_size = AMDGPU_GMC_HOLE_START`).
pub const GPUVM_BASE: u64 = 0x100_0000;
pub const GPUVM_LIMIT: u64 = 0x7fff_ffff_ffff;
/// `MAKE_LDS_APP_BASE_V9` / `MAKE_SCRATCH_APP_BASE_V9`, limits `base | 0xffffffff`.
pub const LDS_BASE: u64 = 1 << 48;
pub const SCRATCH_BASE: u64 = 2 << 48;
/// GPU VA space end (48-bit `max_pfn`): mappings must end below it (`amdgpu_vm_bo_map`).
const VM_END: u64 = 1 << 48;
/// `VRAM_AVAILABLE_ALIGNMENT` (`amdgpu_amdkfd_gpuvm.c`).
const VRAM_AVAILABLE_ALIGNMENT: u64 = 2 << 20;

// ------------------------------------------------------------------------------------------
// Dispatcher
// ------------------------------------------------------------------------------------------

/// `kfd_ioctl`: dispatch on `_IOC_NR` alone (the kernel's own command gives direction and size),
/// nr outside `[AMDKFD_COMMAND_START, AMDKFD_COMMAND_END)` → ENOTTY, but for ROCm DKMS's IPC pair
/// (0x80, 0x81; `ipc.rs`) and PC sampling (0x85); caller not the opener → EBADF.
pub fn kfd_ioctl(_key: FileKey, entry: FileEntry, req: c_ulong, arg: u64) -> R {
    let nr = (req & 0xff) as u32;
    let dkms = [AMDKFD_IOC_IPC_IMPORT_HANDLE, AMDKFD_IOC_IPC_EXPORT_HANDLE, AMDKFD_IOC_PC_SAMPLE]
        .iter()
        .any(|&r| nr == ioc_nr(r));
    if !(AMDKFD_COMMAND_START..AMDKFD_COMMAND_END).contains(&nr) && !dkms {
        super::trace_line::<()>(&format!("KFD ioctl nr {nr:#x}"), None, Err(Errno::ENOTTY), None);
        return Err(Errno::ENOTTY);
    }
    if entry.opener_pid != sys::getpid() {
        let name = kfd_ioctl::ioctl_name(req).unwrap_or("AMDKFD_IOC_?");
        super::trace_line::<()>(name, None, Err(Errno::EBADF), None);
        return Err(Errno::EBADF);
    }
    let p = process::current();
    // Any ioctl of the process but memory management (ALLOC/FREE/MAP/UNMAP, GET_DMABUF_INFO,
    // IMPORT/EXPORT_DMABUF, AVAILABLE_MEMORY: none makes queue work runnable) wakes the SDMA
    // engine from its backoff. Kicks from those kept the engine polling every 20 µs through
    // IPC open/close loops: several thread wake-ups per cycle.
    if !matches!(nr, 0x16..=0x19 | 0x1c | 0x1d | 0x23 | 0x24 | 0x80 | 0x81) {
        p.engine.kick();
    }
    macro_rules! h {
        ($kreq:expr, $name:literal, $f:ident) => {
            with_args(concat!("AMDKFD_IOC_", $name), req, $kreq, arg, |a| $f(&p, a))
        };
    }
    match nr {
        0x01 => h!(AMDKFD_IOC_GET_VERSION, "GET_VERSION", kfd_ioctl_get_version),
        0x02 => h!(AMDKFD_IOC_CREATE_QUEUE, "CREATE_QUEUE", kfd_ioctl_create_queue),
        0x03 => h!(AMDKFD_IOC_DESTROY_QUEUE, "DESTROY_QUEUE", kfd_ioctl_destroy_queue),
        0x04 => h!(AMDKFD_IOC_SET_MEMORY_POLICY, "SET_MEMORY_POLICY", kfd_ioctl_set_memory_policy),
        0x05 => h!(AMDKFD_IOC_GET_CLOCK_COUNTERS, "GET_CLOCK_COUNTERS", kfd_ioctl_get_clock_counters),
        0x06 => h!(AMDKFD_IOC_GET_PROCESS_APERTURES, "GET_PROCESS_APERTURES", kfd_ioctl_get_process_apertures),
        0x07 => h!(AMDKFD_IOC_UPDATE_QUEUE, "UPDATE_QUEUE", kfd_ioctl_update_queue),
        0x08 => h!(AMDKFD_IOC_CREATE_EVENT, "CREATE_EVENT", kfd_ioctl_create_event),
        0x09 => h!(AMDKFD_IOC_DESTROY_EVENT, "DESTROY_EVENT", kfd_ioctl_destroy_event),
        0x0a => h!(AMDKFD_IOC_SET_EVENT, "SET_EVENT", kfd_ioctl_set_event),
        0x0b => h!(AMDKFD_IOC_RESET_EVENT, "RESET_EVENT", kfd_ioctl_reset_event),
        0x0c => h!(AMDKFD_IOC_WAIT_EVENTS, "WAIT_EVENTS", kfd_ioctl_wait_events),
        // DBG_REGISTER/UNREGISTER/ADDRESS_WATCH/WAVE_CONTROL (deprecated): -EPERM.
        0x0d..=0x10 => {
            super::trace_line::<()>("AMDKFD_IOC_DBG_*_DEPRECATED", None, Err(Errno::EPERM), None);
            Err(Errno::EPERM)
        }
        0x11 => h!(AMDKFD_IOC_SET_SCRATCH_BACKING_VA, "SET_SCRATCH_BACKING_VA", kfd_ioctl_set_scratch_backing_va),
        0x12 => h!(AMDKFD_IOC_GET_TILE_CONFIG, "GET_TILE_CONFIG", kfd_ioctl_get_tile_config),
        0x13 => h!(AMDKFD_IOC_SET_TRAP_HANDLER, "SET_TRAP_HANDLER", kfd_ioctl_set_trap_handler),
        0x14 => {
            h!(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, "GET_PROCESS_APERTURES_NEW", kfd_ioctl_get_process_apertures_new)
        }
        0x15 => h!(AMDKFD_IOC_ACQUIRE_VM, "ACQUIRE_VM", kfd_ioctl_acquire_vm),
        0x16 => h!(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, "ALLOC_MEMORY_OF_GPU", kfd_ioctl_alloc_memory_of_gpu),
        0x17 => h!(AMDKFD_IOC_FREE_MEMORY_OF_GPU, "FREE_MEMORY_OF_GPU", kfd_ioctl_free_memory_of_gpu),
        0x18 => h!(AMDKFD_IOC_MAP_MEMORY_TO_GPU, "MAP_MEMORY_TO_GPU", kfd_ioctl_map_memory_to_gpu),
        0x19 => h!(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, "UNMAP_MEMORY_FROM_GPU", kfd_ioctl_unmap_memory_from_gpu),
        0x1a => h!(AMDKFD_IOC_SET_CU_MASK, "SET_CU_MASK", kfd_ioctl_set_cu_mask),
        0x1b => h!(AMDKFD_IOC_GET_QUEUE_WAVE_STATE, "GET_QUEUE_WAVE_STATE", kfd_ioctl_get_queue_wave_state),
        0x1c => h!(AMDKFD_IOC_GET_DMABUF_INFO, "GET_DMABUF_INFO", kfd_ioctl_get_dmabuf_info),
        0x1d => h!(AMDKFD_IOC_IMPORT_DMABUF, "IMPORT_DMABUF", kfd_ioctl_import_dmabuf),
        0x1e => h!(AMDKFD_IOC_ALLOC_QUEUE_GWS, "ALLOC_QUEUE_GWS", kfd_ioctl_alloc_queue_gws),
        0x1f => with_args("AMDKFD_IOC_SMI_EVENTS", req, AMDKFD_IOC_SMI_EVENTS, arg, |a| kfd_ioctl_smi_events(&p, a)),
        0x20 => kfd_ioctl_svm(&p, req, arg),
        0x21 => h!(AMDKFD_IOC_SET_XNACK_MODE, "SET_XNACK_MODE", kfd_ioctl_set_xnack_mode),
        // AMDKFD_IOC_CRIU_OP: needs CAP_CHECKPOINT_RESTORE; checkpointing is not modelled.
        0x22 => {
            // SAFETY: geteuid has no preconditions.
            let e = if unsafe { libc::geteuid() } != 0 { Errno::EACCES } else { Errno::EINVAL };
            super::trace_line::<()>("AMDKFD_IOC_CRIU_OP", None, Err(e), None);
            Err(e)
        }
        0x23 => h!(AMDKFD_IOC_AVAILABLE_MEMORY, "AVAILABLE_MEMORY", kfd_ioctl_get_available_memory),
        0x24 => h!(AMDKFD_IOC_EXPORT_DMABUF, "EXPORT_DMABUF", kfd_ioctl_export_dmabuf),
        0x25 => h!(AMDKFD_IOC_RUNTIME_ENABLE, "RUNTIME_ENABLE", kfd_ioctl_runtime_enable),
        0x26 => h!(AMDKFD_IOC_DBG_TRAP, "DBG_TRAP", kfd_ioctl_set_debug_trap),
        0x80 => h!(AMDKFD_IOC_IPC_IMPORT_HANDLE, "IPC_IMPORT_HANDLE", kfd_ioctl_ipc_import_handle),
        0x81 => h!(AMDKFD_IOC_IPC_EXPORT_HANDLE, "IPC_EXPORT_HANDLE", kfd_ioctl_ipc_export_handle),
        0x85 => h!(AMDKFD_IOC_PC_SAMPLE, "PC_SAMPLE", kfd_ioctl_pc_sample),
        _ => {
            super::trace_line::<()>(&format!("KFD ioctl nr {nr:#x}"), None, Err(Errno::EINVAL), None);
            Err(Errno::EINVAL)
        }
    }
}

// ------------------------------------------------------------------------------------------
// Handlers
// ------------------------------------------------------------------------------------------

/// `kfd_ioctl_get_version`: KFD 1.17.
fn kfd_ioctl_get_version(_p: &Arc<Process>, args: &mut kfd_ioctl_get_version_args) -> R {
    args.major_version = KFD_IOCTL_MAJOR_VERSION;
    args.minor_version = KFD_IOCTL_MINOR_VERSION;
    Ok(0)
}

/// `set_queue_properties_from_user` + `kfd_ioctl_create_queue` + `kfd_queue_acquire_buffers` +
/// `pqm_create_queue`. Returns `queue_id` and `doorbell_offset =
/// KFD_MMAP_TYPE_DOORBELL | gpu_id << 46 | byte offset in the process doorbell slice`.
fn kfd_ioctl_create_queue(p: &Arc<Process>, args: &mut kfd_ioctl_create_queue_args) -> R {
    if args.queue_percentage & 0xff > KFD_MAX_QUEUE_PERCENTAGE {
        return Err(Errno::EINVAL);
    }
    if args.queue_priority > KFD_MAX_QUEUE_PRIORITY {
        return Err(Errno::EINVAL);
    }
    if args.ring_base_address != 0 && !sys::access_ok(args.ring_base_address, 8) {
        return Err(Errno::EFAULT);
    }
    if !args.ring_size.is_power_of_two() && args.ring_size != 0 {
        return Err(Errno::EINVAL);
    }
    if args.ring_size < KFD_MIN_QUEUE_RING_SIZE {
        args.ring_size = KFD_MIN_QUEUE_RING_SIZE;
    }
    if !sys::access_ok(args.read_pointer_address, 4) || !sys::access_ok(args.write_pointer_address, 4) {
        return Err(Errno::EFAULT);
    }
    if args.eop_buffer_address != 0 && !sys::access_ok(args.eop_buffer_address, 4) {
        return Err(Errno::EFAULT);
    }
    if args.ctx_save_restore_address != 0 && !sys::access_ok(args.ctx_save_restore_address, 4) {
        return Err(Errno::EFAULT);
    }
    let is_sdma = match args.queue_type {
        KFD_IOC_QUEUE_TYPE_COMPUTE | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => false,
        KFD_IOC_QUEUE_TYPE_SDMA | KFD_IOC_QUEUE_TYPE_SDMA_XGMI | KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID => true,
        _ => return Err(ENOTSUPP),
    };

    let mut st = p.state.lock();
    let pdd = st.pdd(args.gpu_id).ok_or(Errno::EINVAL)?;
    // kfd_bind_process_to_device failure is reported as ESRCH here.
    pdd.bound().map_err(|_| Errno::ESRCH)?;
    let gpu = pdd.gpu;
    if args.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID {
        let max = gpu.sdma_engines() as i64 - 1;
        if args.sdma_engine_id as i64 > max {
            return Err(Errno::EINVAL);
        }
    }
    // kfd_alloc_process_doorbells
    let pdd_gpu = args.gpu_id;
    if st.pdd(pdd_gpu).unwrap().doorbells.is_none() {
        let bo = Arc::new(Bo::new_memfd(pdd_gpu, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, KFD_DOORBELL_PROCESS_SLICE)?);
        st.pdd_mut(pdd_gpu).unwrap().doorbells = Some(Doorbells { bo, used: BTreeSet::new() });
    }
    let (held, cwsr_svm) = queue::acquire_buffers(st.pdd(pdd_gpu).unwrap(), &st.svms, args)?;

    // pqm_create_queue: queue id, SDMA queue budget, doorbell slot.
    let fail = |st: &mut ProcState, e: Errno| {
        let pdd = st.pdd(pdd_gpu).unwrap();
        queue::queue_buffers_put(&mut pdd.vm.write(), &held);
        queue::queue_svm_put(&cwsr_svm);
        Err(e)
    };
    let Some(queue_id) = (0..KFD_MAX_NUM_OF_QUEUES_PER_PROCESS).find(|i| !st.queues.contains_key(i)) else {
        return fail(&mut st, Errno::ENOMEM);
    };
    if is_sdma {
        let xgmi = args.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI
            || (args.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID && args.sdma_engine_id >= gpu.num_sdma_engines);
        let budget =
            if xgmi { gpu.num_sdma_xgmi_engines } else { gpu.num_sdma_engines } * gpu.num_sdma_queues_per_engine;
        let in_use = st
            .queues
            .values()
            .filter(|q| q.rt.gpu_id == pdd_gpu && q.rt.is_sdma)
            .filter(|q| {
                let qx = q.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI
                    || (q.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID && q.sdma_engine_id >= gpu.num_sdma_engines);
                qx == xgmi
            })
            .count() as u32;
        if in_use >= budget {
            return fail(&mut st, Errno::ENOMEM);
        }
    }
    // allocate_sdma_queue: the lowest free sdma_id (xgmi_sdma_id) of the GPU, and its engine.
    let (sdma_id, engine) = match args.queue_type {
        KFD_IOC_QUEUE_TYPE_SDMA | KFD_IOC_QUEUE_TYPE_SDMA_XGMI => {
            let ty = args.queue_type;
            let used: BTreeSet<u32> = st
                .queues
                .values()
                .filter(|q| q.rt.gpu_id == pdd_gpu && q.queue_type == ty)
                .map(|q| q.sdma_id)
                .collect();
            let id = (0..).find(|i| !used.contains(i)).unwrap_or(0);
            if ty == KFD_IOC_QUEUE_TYPE_SDMA {
                (id, id % gpu.num_sdma_engines.max(1))
            } else {
                (id, gpu.num_sdma_engines + id % gpu.num_sdma_xgmi_engines.max(1))
            }
        }
        _ => (u32::MAX, args.sdma_engine_id),
    };
    let pdd = st.pdd_mut(pdd_gpu).unwrap();
    let db = pdd.doorbells.as_mut().unwrap();
    let Some(slot) = (0..DOORBELLS_PER_SLICE).find(|s| !db.used.contains(s)) else {
        return fail(&mut st, Errno::ENOMEM);
    };
    db.used.insert(slot);
    let doorbell_off = slot as u64 * DOORBELL_SIZE;
    // A new queue starts with doorbell and rptr at 0.
    let _ = db.bo.write_u64(doorbell_off, 0);
    let rt = Arc::new(QueueRt {
        queue_id,
        gpu_id: pdd_gpu,
        vm: pdd.vm.clone(),
        ring: parking_lot::Mutex::new((args.ring_base_address, args.ring_size as u64)),
        active: AtomicBool::new(args.ring_base_address != 0 && args.queue_percentage & 0xff != 0),
        rptr_va: args.read_pointer_address,
        wptr_va: args.write_pointer_address,
        doorbell: db.bo.clone(),
        doorbell_off,
        rptr: AtomicU64::new(0),
        stopped: Arc::new(AtomicBool::new(false)),
        exec: parking_lot::Mutex::new(()),
        is_sdma,
        is_aql: args.queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        is_pm4: args.queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE,
        pm4: parking_lot::Mutex::new(Default::default()),
        engine,
        priority: std::sync::atomic::AtomicU32::new(args.queue_priority),
        pipes: pdd.pipes.clone(),
        gws: parking_lot::Mutex::new(None),
        last_run: AtomicU64::new(0),
        trap_handler: pdd.trap_handler.clone(),
        doorbell_id: slot,
        process: Arc::downgrade(p),
    });
    st.queues.insert(
        queue_id,
        Queue {
            rt: rt.clone(),
            queue_type: args.queue_type,
            doorbell_slot: slot,
            held,
            cwsr_svm,
            sdma_engine_id: args.sdma_engine_id,
            sdma_id,
            percentage: args.queue_percentage,
            ctx_save_restore_address: args.ctx_save_restore_address,
            ctx_save_restore_area_size: args.ctx_save_restore_size,
        },
    );
    let info = queue_info(&st.queues[&queue_id]);
    drop(st);
    super::debug::queue_created(&info);
    if is_sdma || rt.is_aql || rt.is_pm4 {
        p.engine.add_queue(rt);
    }
    args.queue_id = queue_id;
    args.doorbell_offset = KFD_MMAP_TYPE_DOORBELL | kfd_mmap_gpu_id_bits(pdd_gpu) | doorbell_off;
    Ok(0)
}

/// `kfd_ioctl_destroy_queue` → `pqm_destroy_queue`: unknown id → EINVAL.
fn kfd_ioctl_destroy_queue(p: &Arc<Process>, args: &mut kfd_ioctl_destroy_queue_args) -> R {
    let q = {
        let mut st = p.state.lock();
        let q = st.queues.remove(&args.queue_id).ok_or(Errno::EINVAL)?;
        super::debug::queue_destroyed(q.rt.queue_id);
        // `pqm_destroy_queue`: a queue holding the GWS gives it back (`qpd.num_gws = 0`).
        let had_gws = q.rt.gws.lock().take().is_some();
        if let Some(pdd) = st.pdd_mut(q.rt.gpu_id) {
            if had_gws {
                pdd.num_gws = 0;
            }
            if let Some(db) = pdd.doorbells.as_mut() {
                db.used.remove(&q.doorbell_slot);
            }
        }
        q
    };
    // Wait for the engine outside the process lock (the engine takes it to deliver traps).
    p.engine.remove_queue(&q.rt);
    queue::queue_buffers_put(&mut q.rt.vm.write(), &q.held);
    queue::queue_svm_put(&q.cwsr_svm);
    Ok(0)
}

/// `kfd_ioctl_update_queue` → `pqm_update_queue_properties` → `update_queue` (dqm).
///
/// UPDATE_QUEUE is `_IOW`: nothing goes back to the caller (the clamped `ring_size` stays in the
/// kernel's copy). Unknown queue → EFAULT. A ring address with a size is a new ring, which must
/// again be one GPU mapping of exactly that size (`kfd_queue_buffer_get`, else EFAULT); its
/// `queue_refcount` replaces the old ring's. A NULL ring address is accepted and disables the
/// queue ("Update with NULL ring address is used to disable the queue"): `QUEUE_IS_ACTIVE`
/// (ring address, size and `queue_percentage` non-zero) goes false and the CP leaves the queue
/// alone until an update makes it active again, when it resumes from its read pointer.
fn kfd_ioctl_update_queue(p: &Arc<Process>, args: &mut kfd_ioctl_update_queue_args) -> R {
    if args.queue_percentage & 0xff > KFD_MAX_QUEUE_PERCENTAGE || args.queue_priority > KFD_MAX_QUEUE_PRIORITY {
        return Err(Errno::EINVAL);
    }
    if args.ring_base_address != 0 && !sys::access_ok(args.ring_base_address, 8) {
        return Err(Errno::EFAULT);
    }
    if !args.ring_size.is_power_of_two() && args.ring_size != 0 {
        return Err(Errno::EINVAL);
    }
    if args.ring_size < KFD_MIN_QUEUE_RING_SIZE {
        args.ring_size = KFD_MIN_QUEUE_RING_SIZE;
    }
    let mut st = p.state.lock();
    let q = st.queues.get_mut(&args.queue_id).ok_or(Errno::EFAULT)?;
    let rt = q.rt.clone();
    if args.ring_base_address != 0 {
        let (old_base, old_size) = rt.ring();
        if (args.ring_base_address, args.ring_size as u64) != (old_base, old_size) {
            let mut vm = rt.vm.write();
            let start = queue::queue_buffer_get(&mut vm, args.ring_base_address, args.ring_size as u64)
                .map_err(|_| Errno::EFAULT)?;
            // held[2] is the ring's mapping (acquire_buffers' order: wptr, rptr, ring, ...).
            let old = std::mem::replace(&mut q.held[2], start);
            queue::queue_buffers_put(&mut vm, &[old]);
            rt.set_ring(args.ring_base_address, args.ring_size as u64);
        }
    }
    q.percentage = args.queue_percentage;
    rt.priority.store(args.queue_priority, Ordering::Relaxed);
    let active = args.ring_base_address != 0 && args.queue_percentage & 0xff != 0;
    rt.active.store(active, Ordering::Release);
    drop(st);
    if active {
        // Work published while the queue was disabled runs now.
        p.engine.kick();
    }
    Ok(0)
}

/// `kfd_ioctl_set_memory_policy`: policies must be COHERENT or NONCOHERENT; unknown gpu EINVAL;
/// no VM yet ESRCH.
fn kfd_ioctl_set_memory_policy(p: &Arc<Process>, args: &mut kfd_ioctl_set_memory_policy_args) -> R {
    let ok = |v| v == KFD_IOC_CACHE_POLICY_COHERENT || v == KFD_IOC_CACHE_POLICY_NONCOHERENT;
    if !ok(args.default_policy) || !ok(args.alternate_policy) {
        return Err(Errno::EINVAL);
    }
    let st = p.state.lock();
    let pdd = st.pdd(args.gpu_id).ok_or(Errno::EINVAL)?;
    pdd.bound().map_err(|_| Errno::ESRCH)?;
    Ok(0)
}

/// `kfd_ioctl_get_clock_counters`: GPU counter at 100 MHz (0 for an unknown gpu_id), CPU counter
/// `CLOCK_MONOTONIC_RAW` ns, system counter `CLOCK_BOOTTIME` ns, frequency 1 GHz.
fn kfd_ioctl_get_clock_counters(p: &Arc<Process>, args: &mut kfd_ioctl_get_clock_counters_args) -> R {
    let known = p.state.lock().pdd(args.gpu_id).is_some();
    args.gpu_clock_counter = if known { sys::gpu_clock() } else { 0 };
    args.cpu_clock_counter = sys::clock_ns(libc::CLOCK_MONOTONIC_RAW);
    args.system_clock_counter = sys::clock_ns(libc::CLOCK_BOOTTIME);
    args.system_clock_freq = 1_000_000_000;
    Ok(0)
}

pub(super) fn apertures(gpu_id: u32) -> kfd_process_device_apertures {
    kfd_process_device_apertures {
        lds_base: LDS_BASE,
        lds_limit: LDS_BASE | 0xffff_ffff,
        scratch_base: SCRATCH_BASE,
        scratch_limit: SCRATCH_BASE | 0xffff_ffff,
        gpuvm_base: GPUVM_BASE,
        gpuvm_limit: GPUVM_LIMIT,
        gpu_id,
        pad: 0,
    }
}

/// `kfd_ioctl_get_process_apertures` (deprecated fixed array of `NUM_OF_SUPPORTED_GPUS`).
fn kfd_ioctl_get_process_apertures(p: &Arc<Process>, args: &mut kfd_ioctl_get_process_apertures_args) -> R {
    let st = p.state.lock();
    args.num_of_nodes = 0;
    for pdd in &st.pdds {
        args.process_apertures[args.num_of_nodes as usize] = apertures(pdd.gpu.gpu_id);
        args.num_of_nodes += 1;
        if args.num_of_nodes as usize >= NUM_OF_SUPPORTED_GPUS {
            break;
        }
    }
    Ok(0)
}

/// `kfd_ioctl_get_process_apertures_new`: `num_of_nodes == 0` → returns the count; else fills
/// `min(n_pdds, num_of_nodes)` entries (copy fault → EFAULT).
fn kfd_ioctl_get_process_apertures_new(p: &Arc<Process>, args: &mut kfd_ioctl_get_process_apertures_new_args) -> R {
    let st = p.state.lock();
    if args.num_of_nodes == 0 {
        args.num_of_nodes = st.pdds.len() as u32;
        return Ok(0);
    }
    let n = st.pdds.len().min(args.num_of_nodes as usize);
    let v: Vec<kfd_process_device_apertures> = st.pdds[..n].iter().map(|pdd| apertures(pdd.gpu.gpu_id)).collect();
    drop(st);
    args.num_of_nodes = n as u32;
    sys::copy_to_user(args.kfd_process_device_apertures_ptr, as_bytes(&v)).map_err(|_| Errno::EFAULT)?;
    Ok(0)
}

/// `kfd_ioctl_create_event` (+ `kfd_kmap_event_page` when `event_page_offset` carries the handle
/// of the user's event page BO).
fn kfd_ioctl_create_event(p: &Arc<Process>, args: &mut kfd_ioctl_create_event_args) -> R {
    let mut st = p.state.lock();
    if args.event_page_offset != 0 {
        // kfd_kmap_event_page
        if st.events.signal_page.is_some() {
            return Err(Errno::EINVAL);
        }
        let handle = args.event_page_offset;
        let pdd = st.pdd(get_gpu_id(handle)).ok_or(Errno::EINVAL)?;
        pdd.bound()?;
        let mem = pdd.alloc_idr.get(&get_idr_handle(handle)).ok_or(Errno::EINVAL)?;
        // amdgpu_amdkfd_gpuvm_map_gtt_bo_to_kernel: userptr → EINVAL; must pin in GTT.
        if mem.bo.is_userptr() || mem.flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT == 0 {
            return Err(Errno::EINVAL);
        }
        let bo = mem.bo.clone();
        st.events.page_set(bo, handle)?;
    }
    let (id, page_off, slot) = st.events.create(args.event_type, args.auto_reset != 0)?;
    args.event_page_offset = page_off;
    if page_off != 0 {
        args.event_slot_index = slot;
    }
    args.event_id = id;
    args.event_trigger_data = id;
    Ok(0)
}

/// `kfd_ioctl_destroy_event`: unknown id → EINVAL; waiters wake and fail.
fn kfd_ioctl_destroy_event(p: &Arc<Process>, args: &mut kfd_ioctl_destroy_event_args) -> R {
    p.state.lock().events.destroy(args.event_id)?;
    Ok(0)
}

/// `kfd_ioctl_set_event`: unknown id or not a SIGNAL event → EINVAL.
fn kfd_ioctl_set_event(p: &Arc<Process>, args: &mut kfd_ioctl_set_event_args) -> R {
    p.state.lock().events.set_event(args.event_id)?;
    Ok(0)
}

/// `kfd_ioctl_reset_event`.
fn kfd_ioctl_reset_event(p: &Arc<Process>, args: &mut kfd_ioctl_reset_event_args) -> R {
    p.state.lock().events.reset_event(args.event_id)?;
    Ok(0)
}

/// `kfd_ioctl_wait_events` → `kfd_wait_on_events`. The process lock is released while sleeping.
fn kfd_ioctl_wait_events(p: &Arc<Process>, args: &mut kfd_ioctl_wait_events_args) -> R {
    let n = args.num_events as usize;
    if n > (1 << 20) {
        args.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
        return Err(Errno::ENOMEM);
    }
    let mut evs = vec![kfd_event_data::default(); n];
    if let Err(e) = sys::copy_from_user(as_bytes_mut(&mut evs), args.events_ptr) {
        args.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
        return Err(e);
    }
    let before = evs.clone();
    let r = {
        let mut st = p.state.lock();
        events::wait_on_events(p, &mut st, &mut evs, args.wait_for_all != 0, args.timeout)
    };
    match r {
        Ok(res) => {
            args.wait_result = res;
            for (i, (a, b)) in evs.iter().zip(before.iter()).enumerate() {
                if a.payload != b.payload {
                    let addr = args.events_ptr + (i * std::mem::size_of::<kfd_event_data>()) as u64;
                    sys::copy_to_user(addr, as_bytes(&a.payload)).map_err(|_| Errno::EFAULT)?;
                }
            }
            Ok(0)
        }
        Err(e) => {
            args.wait_result = KFD_IOC_WAIT_RESULT_FAIL;
            Err(e)
        }
    }
}

/// `kfd_ioctl_set_scratch_backing_va`: unknown gpu EINVAL, no VM ENODEV.
fn kfd_ioctl_set_scratch_backing_va(p: &Arc<Process>, args: &mut kfd_ioctl_set_scratch_backing_va_args) -> R {
    let mut st = p.state.lock();
    let pdd = st.pdd_mut(args.gpu_id).ok_or(Errno::EINVAL)?;
    pdd.bound()?;
    pdd.scratch_backing_va = args.va_addr;
    Ok(0)
}

/// `kfd_ioctl_get_tile_config` (`amdgpu_amdkfd_get_tile_config`): gfx9 has 32 tile-mode and 16
/// macro-tile registers, all zero; banks/ranks are gfx8-only fields (0).
fn kfd_ioctl_get_tile_config(p: &Arc<Process>, args: &mut kfd_ioctl_get_tile_config_args) -> R {
    if p.state.lock().pdd(args.gpu_id).is_none() {
        return Err(Errno::EINVAL);
    }
    args.gb_addr_config = 0x2a11_4042;
    args.num_banks = 0;
    args.num_ranks = 0;
    args.num_tile_configs = args.num_tile_configs.min(32);
    if let Err(_e) = sys::copy_to_user(args.tile_config_ptr, &vec![0u8; args.num_tile_configs as usize * 4]) {
        args.num_tile_configs = 0;
        return Err(Errno::EFAULT);
    }
    args.num_macro_tile_configs = args.num_macro_tile_configs.min(16);
    if let Err(_e) = sys::copy_to_user(args.macro_tile_config_ptr, &vec![0u8; args.num_macro_tile_configs as usize * 4])
    {
        args.num_macro_tile_configs = 0;
        return Err(Errno::EFAULT);
    }
    Ok(0)
}

/// `kfd_ioctl_set_trap_handler`: unknown gpu EINVAL, no VM ESRCH.
fn kfd_ioctl_set_trap_handler(p: &Arc<Process>, args: &mut kfd_ioctl_set_trap_handler_args) -> R {
    let mut st = p.state.lock();
    let pdd = st.pdd_mut(args.gpu_id).ok_or(Errno::EINVAL)?;
    pdd.bound().map_err(|_| Errno::ESRCH)?;
    pdd.trap_handler.tba.store(args.tba_addr, Ordering::Release);
    pdd.trap_handler.tma.store(args.tma_addr, Ordering::Release);
    Ok(0)
}

/// `kfd_ioctl_acquire_vm` + `kfd_process_device_init_vm`: `drm_fd` must be an open render node
/// of that GPU (else EINVAL), not already a compute VM of another pdd (EINVAL); a pdd already
/// bound to another file → EBUSY, to the same file → 0.
fn kfd_ioctl_acquire_vm(p: &Arc<Process>, args: &mut kfd_ioctl_acquire_vm_args) -> R {
    let (key, entry) = super::file_of(args.drm_fd as RawFd).ok_or(Errno::EINVAL)?;
    let mut st = p.state.lock();
    let pdd = st.pdd(args.gpu_id).ok_or(Errno::EINVAL)?;
    if let Some(f) = pdd.drm_file {
        return if f == key { Ok(0) } else { Err(Errno::EBUSY) };
    }
    // amdgpu_file_to_fpriv: must be an amdgpu DRM file of this device.
    match entry.kind {
        DevKind::Render { minor } if minor == pdd.gpu.drm_render_minor => {}
        _ => return Err(Errno::EINVAL),
    }
    // amdgpu_vm_make_compute: the file's VM is already a compute VM.
    if st.pdd_by_drm_file(key).is_some() {
        return Err(Errno::EINVAL);
    }
    // The render file's VM becomes the pdd's VM: GEM_VA on that file and KFD mappings edit the
    // same address space (KFD 1.15 "GEM_VA in compute VMs").
    let minor = pdd.gpu.drm_render_minor;
    let vm = st.drm_files.entry(key).or_insert_with(|| super::drm::DrmFile::new(minor)).vm.clone();
    Hmm::serve(&st.xnack, &vm);
    let gpuidx = st.svms.gpuidx(args.gpu_id).expect("a pdd's GPU");
    vm.write().set_svm(st.svms.clone(), gpuidx);
    let pdd = st.pdd_mut(args.gpu_id).unwrap();
    pdd.vm = vm;
    pdd.drm_file = Some(key);
    Ok(0)
}

/// `kfd_ioctl_get_available_memory` (`amdgpu_amdkfd_get_available_memory`): VRAM not yet used,
/// aligned down to 2 MiB.
fn kfd_ioctl_get_available_memory(p: &Arc<Process>, args: &mut kfd_ioctl_get_available_memory_args) -> R {
    let st = p.state.lock();
    let pdd = st.pdd(args.gpu_id).ok_or(Errno::EINVAL)?;
    args.available = vram_available(&st, pdd.gpu.gpu_id) & !(VRAM_AVAILABLE_ALIGNMENT - 1);
    Ok(0)
}

/// VRAM of `gpu_id` that no process of the session reserves (every allocation rounded up to
/// 2 MiB, `vram_used_aligned`): this process's own BOs and the others' from the ledger.
fn vram_available(st: &ProcState, gpu_id: u32) -> u64 {
    let pdd = st.pdd(gpu_id).unwrap();
    pdd.gpu.vram_size.saturating_sub(pdd.vram_reserved).saturating_sub(super::vram::others(gpu_id))
}

/// `kfd_ioctl_alloc_memory_of_gpu` + `amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu`.
///
/// Errors: size 0 → EINVAL; unknown gpu → EINVAL; PUBLIC|VRAM on a small-BAR GPU → EINVAL;
/// no VM (ACQUIRE_VM missing) → ENODEV; DOORBELL size ≠ 8 KiB → EINVAL; MMIO_REMAP size ≠ 4 KiB
/// → EINVAL; no domain flag → EINVAL; USERPTR without address → EINVAL, pages not mapped or
/// not readable → EFAULT, not writable → EPERM;
/// VRAM exhausted → ENOMEM; GTT or USERPTR past the system-memory limit ([`process::MemLimit`])
/// → ENOMEM. Returns `handle = gpu_id << 32 | idr` and the render-node
/// `mmap_offset` (MMIO: `KFD_MMAP_TYPE_MMIO | gpu_id << 46`).
fn kfd_ioctl_alloc_memory_of_gpu(p: &Arc<Process>, args: &mut kfd_ioctl_alloc_memory_of_gpu_args) -> R {
    if args.size == 0 {
        return Err(Errno::EINVAL);
    }
    let flags = args.flags;
    let mut st = p.state.lock();
    // "already allocated by SVM": the GPU VA, and a USERPTR's CPU address, in no SVM range.
    if st.svms.overlaps(args.va_addr, args.size)
        || (flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 && st.svms.overlaps(args.mmap_offset, args.size))
    {
        return Err(Errno::EADDRINUSE);
    }
    let pdd = st.pdd(args.gpu_id).ok_or(Errno::EINVAL)?;
    let gpu = pdd.gpu;
    if flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC != 0 && flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 && !gpu.large_bar {
        return Err(Errno::EINVAL);
    }
    pdd.bound()?;
    let drm_file = pdd.drm_file.unwrap();
    let size = sys::page_align(args.size);
    // amdgpu_amdkfd_reserve_mem_limit: GTT and USERPTR pin system memory (ENOMEM past the limit);
    // given back if the allocation fails further on.
    let sys_accounted = st.mem_limit.reserve(size, flags)?;
    let bo = alloc_bo(&mut st, args, flags, size);
    let bo = match bo {
        Ok(bo) => bo,
        Err(e) => {
            st.mem_limit.unreserve(sys_accounted, flags);
            return Err(e);
        }
    };
    let offset = st.alloc_mmap_offset(&bo)?;
    bo.allow(drm_file);
    st.remember_bo(&bo);
    let vram_accounted = if flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
        if flags & KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM != 0 {
            sys::page_align(args.size >> 1)
        } else {
            size
        }
    } else {
        0
    };
    let pdd = st.pdd_mut(args.gpu_id).unwrap();
    let idr = pdd.add_mem(bo, args.va_addr, flags, vram_accounted, sys_accounted);
    pdd.vram_usage += vram_accounted;
    if vram_accounted > 0 {
        pdd.vram_reserved += vram_accounted.next_multiple_of(VRAM_AVAILABLE_ALIGNMENT);
        super::vram::publish(pdd.gpu.gpu_id, pdd.vram_reserved);
    }
    args.handle = make_handle(args.gpu_id, idr);
    args.mmap_offset = if flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 {
        KFD_MMAP_TYPE_MMIO | kfd_mmap_gpu_id_bits(args.gpu_id)
    } else {
        offset
    };
    Ok(0)
}

/// The BO of an ALLOC_MEMORY_OF_GPU by type (`amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu`): the
/// pdd's doorbell slice or MMIO page, the user's pages (USERPTR), or a new VRAM/GTT memfd.
fn alloc_bo(
    st: &mut process::ProcState,
    args: &kfd_ioctl_alloc_memory_of_gpu_args,
    flags: u32,
    size: u64,
) -> Result<Arc<Bo>, Errno> {
    Ok(if flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL != 0 {
        if args.size != KFD_DOORBELL_PROCESS_SLICE {
            return Err(Errno::EINVAL);
        }
        let pdd = st.pdd_mut(args.gpu_id).unwrap();
        if pdd.doorbells.is_none() {
            let bo =
                Arc::new(Bo::new_memfd(args.gpu_id, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, KFD_DOORBELL_PROCESS_SLICE)?);
            pdd.doorbells = Some(Doorbells { bo, used: BTreeSet::new() });
        }
        pdd.doorbells.as_ref().unwrap().bo.clone()
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP != 0 {
        if args.size != PAGE_SIZE {
            return Err(Errno::EINVAL);
        }
        mmio_page(st.pdd_mut(args.gpu_id).unwrap())?
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
        let user_addr = args.mmap_offset;
        if user_addr == 0 {
            return Err(Errno::EINVAL);
        }
        // init_user_pages: KFD's USERPTR BOs are never read-only (`amdgpu_ttm_tt_set_userptr`
        // with flags 0), so the pages must be writable.
        sys::user_pages_access(user_addr, args.size, true)?;
        Arc::new(Bo::new_userptr(args.gpu_id, flags, user_addr, args.size))
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
        // amdgpu_amdkfd_reserve_mem_limit
        if size > vram_available(st, args.gpu_id) {
            return Err(Errno::ENOMEM);
        }
        Arc::new(Bo::new_memfd(args.gpu_id, flags, size)?)
    } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
        Arc::new(Bo::new_memfd(args.gpu_id, flags, size)?)
    } else {
        return Err(Errno::EINVAL);
    })
}

fn mmio_page(pdd: &mut process::Pdd) -> Result<Arc<Bo>, Errno> {
    if pdd.mmio_page.is_none() {
        pdd.mmio_page = Some(Arc::new(Bo::new_memfd(pdd.gpu.gpu_id, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, PAGE_SIZE)?));
    }
    Ok(pdd.mmio_page.clone().unwrap())
}

/// `kfd_ioctl_free_memory_of_gpu`: the event page → EPERM; unknown gpu or handle → EINVAL;
/// still mapped on any GPU → EBUSY (`amdgpu_amdkfd_gpuvm_free_memory_of_gpu`), handle kept.
fn kfd_ioctl_free_memory_of_gpu(p: &Arc<Process>, args: &mut kfd_ioctl_free_memory_of_gpu_args) -> R {
    let mut st = p.state.lock();
    if st.events.signal_page.as_ref().is_some_and(|s| s.user_handle == args.handle && s.user_handle != 0) {
        return Err(Errno::EPERM);
    }
    let pdd = st.pdd_mut(get_gpu_id(args.handle)).ok_or(Errno::EINVAL)?;
    let mem = pdd.alloc_idr.get(&get_idr_handle(args.handle)).ok_or(Errno::EINVAL)?;
    if !mem.mapped.is_empty() {
        return Err(Errno::EBUSY);
    }
    let mem = pdd.alloc_idr.remove(&get_idr_handle(args.handle)).unwrap();
    pdd.vram_usage -= mem.vram_accounted;
    if mem.vram_accounted > 0 {
        pdd.vram_reserved -= mem.vram_accounted.next_multiple_of(VRAM_AVAILABLE_ALIGNMENT);
        super::vram::publish(pdd.gpu.gpu_id, pdd.vram_reserved);
    }
    // amdgpu_amdkfd_release_notify → amdgpu_amdkfd_unreserve_mem_limit
    st.mem_limit.unreserve(mem.sys_accounted, mem.flags);
    drop(st);
    // Dropping the last reference unmaps the model's view and closes the memfd; exported dma-buf
    // fds and user CPU mappings keep the pages alive (memfd semantics).
    drop(mem);
    Ok(0)
}

/// Reads the `device_ids_array` of MAP/UNMAP.
fn read_devices(ptr: u64, n: u32) -> Result<Vec<u32>, Errno> {
    let mut v = vec![0u32; n as usize];
    sys::copy_from_user(as_bytes_mut(&mut v), ptr).map_err(|_| Errno::EFAULT)?;
    Ok(v)
}

/// `kfd_ioctl_map_memory_to_gpu` + `amdgpu_amdkfd_gpuvm_map_memory_to_gpu`.
///
/// `n_devices == 0` or `n_success > n_devices` → EINVAL; array fault → EFAULT; owner gpu unknown
/// → EINVAL, no VM → ENODEV; **handle not found → ENOMEM**; then devices `[n_success, n)` are
/// mapped in order, `n_success` advancing (restartable): unknown peer → EINVAL, peer without VM →
/// ENODEV, no VA (VMM handle) / unaligned / overlapping / beyond 2^48 → EINVAL
/// (`kfd_mem_attach`, `amdgpu_vm_bo_map`). Already mapped on that GPU → no-op.
fn kfd_ioctl_map_memory_to_gpu(p: &Arc<Process>, args: &mut kfd_ioctl_map_memory_to_gpu_args) -> R {
    if args.n_devices == 0 || args.n_success > args.n_devices {
        return Err(Errno::EINVAL);
    }
    if args.n_devices > (1 << 20) {
        return Err(Errno::ENOMEM);
    }
    let devices = read_devices(args.device_ids_array_ptr, args.n_devices)?;
    let mut st = p.state.lock();
    let owner = get_gpu_id(args.handle);
    let idr = get_idr_handle(args.handle);
    let pdd = st.pdd(owner).ok_or(Errno::EINVAL)?;
    pdd.bound()?;
    let mem = pdd.alloc_idr.get(&idr).ok_or(Errno::ENOMEM)?;
    let (bo, va, flags) = (mem.bo.clone(), mem.va, mem.flags);
    for (i, &gpu_id) in devices.iter().enumerate().skip(args.n_success as usize) {
        let peer = st.pdd(gpu_id).ok_or(Errno::EINVAL)?;
        peer.bound()?;
        let already = st.pdd(owner).unwrap().alloc_idr.get(&idr).unwrap().mapped.contains(&gpu_id);
        if !already {
            if va == 0 || va & (PAGE_SIZE - 1) != 0 || va.checked_add(bo.size).is_none_or(|e| e > VM_END) {
                return Err(Errno::EINVAL);
            }
            let peer = st.pdd(gpu_id).unwrap();
            let mut vm = peer.vm.write();
            if vm.overlaps(va, bo.size) {
                return Err(Errno::EINVAL);
            }
            vm.insert(Mapping {
                start: va,
                len: bo.size,
                bo: bo.clone(),
                bo_offset: 0,
                writable: flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE != 0,
                executable: flags & KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE != 0,
                queue_refcount: 0,
            });
            drop(vm);
            let mem = st.pdd_mut(owner).unwrap().alloc_idr.get_mut(&idr).unwrap();
            mem.attached.insert(gpu_id);
            mem.mapped.insert(gpu_id);
        }
        args.n_success = i as u32 + 1;
    }
    Ok(0)
}

/// `kfd_ioctl_unmap_memory_from_gpu` + `amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu`: same
/// argument checks as MAP (handle not found → ENOMEM); a peer VM the BO was never attached to →
/// EINVAL; a mapping holding a user queue's rptr/wptr/ring → EBUSY (`bo_va->queue_refcount`).
fn kfd_ioctl_unmap_memory_from_gpu(p: &Arc<Process>, args: &mut kfd_ioctl_unmap_memory_from_gpu_args) -> R {
    if args.n_devices == 0 || args.n_success > args.n_devices {
        return Err(Errno::EINVAL);
    }
    if args.n_devices > (1 << 20) {
        return Err(Errno::ENOMEM);
    }
    let devices = read_devices(args.device_ids_array_ptr, args.n_devices)?;
    let mut st = p.state.lock();
    let owner = get_gpu_id(args.handle);
    let idr = get_idr_handle(args.handle);
    let pdd = st.pdd(owner).ok_or(Errno::EINVAL)?;
    let mem = pdd.alloc_idr.get(&idr).ok_or(Errno::ENOMEM)?;
    let (bo, va) = (mem.bo.clone(), mem.va);
    for (i, &gpu_id) in devices.iter().enumerate().skip(args.n_success as usize) {
        let peer = st.pdd(gpu_id).ok_or(Errno::EINVAL)?;
        let mem = st.pdd(owner).unwrap().alloc_idr.get(&idr).unwrap();
        if peer.drm_file.is_none() || !mem.attached.contains(&gpu_id) {
            return Err(Errno::EINVAL);
        }
        if mem.mapped.contains(&gpu_id) {
            let mut vm = peer.vm.write();
            match vm.lookup(va) {
                Some(m) if m.start == va && Arc::ptr_eq(&m.bo, &bo) && m.queue_refcount > 0 => {
                    return Err(Errno::EBUSY);
                }
                _ => {}
            }
            if vm.lookup(va).is_some_and(|m| m.start == va && Arc::ptr_eq(&m.bo, &bo)) {
                vm.remove(va);
            }
            drop(vm);
            st.pdd_mut(owner).unwrap().alloc_idr.get_mut(&idr).unwrap().mapped.remove(&gpu_id);
        }
        args.n_success = i as u32 + 1;
    }
    Ok(0)
}

/// `kfd_ioctl_set_cu_mask`: `num_cu_mask` must be a non-zero multiple of 32; the mask is read
/// (EFAULT) and applied to the queue (unknown queue → EINVAL); the model has no CUs to mask.
fn kfd_ioctl_set_cu_mask(p: &Arc<Process>, args: &mut kfd_ioctl_set_cu_mask_args) -> R {
    if !args.num_cu_mask.is_multiple_of(32) || args.num_cu_mask == 0 {
        return Err(Errno::EINVAL);
    }
    let n = args.num_cu_mask.min(1024) as usize / 32;
    let mut mask = vec![0u32; n];
    sys::copy_from_user(as_bytes_mut(&mut mask), args.cu_mask_ptr).map_err(|_| Errno::EFAULT)?;
    if !p.state.lock().queues.contains_key(&args.queue_id) {
        return Err(Errno::EINVAL);
    }
    Ok(0)
}

/// `kfd_ioctl_get_queue_wave_state`: only compute queues with CWSR have wave state; the model
/// runs no waves (unknown queue or SDMA queue → EINVAL).
fn kfd_ioctl_get_queue_wave_state(p: &Arc<Process>, args: &mut kfd_ioctl_get_queue_wave_state_args) -> R {
    let st = p.state.lock();
    match st.queues.get(&args.queue_id) {
        Some(q) if !q.rt.is_sdma => {
            args.ctl_stack_used_size = 0;
            args.save_area_used_size = 0;
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// KFD flags GET_DMABUF_INFO reports for a BO: VRAM (+PUBLIC if allocated `CPU_ACCESS_REQUIRED`,
/// i.e. with PUBLIC) or GTT (`amdgpu_amdkfd_get_dmabuf_info`).
fn dmabuf_flags(bo: &Bo) -> u32 {
    if bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
        KFD_IOC_ALLOC_MEM_FLAGS_VRAM | (bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC)
    } else {
        KFD_IOC_ALLOC_MEM_FLAGS_GTT
    }
}

/// `kfd_ioctl_get_dmabuf_info` + `amdgpu_amdkfd_get_dmabuf_info`: size, owning `gpu_id`, flags
/// and the BO metadata (buffer smaller than the metadata → EINVAL).
fn kfd_ioctl_get_dmabuf_info(p: &Arc<Process>, args: &mut kfd_ioctl_get_dmabuf_info_args) -> R {
    if gpus::all().is_empty() {
        return Err(Errno::EINVAL);
    }
    let mut st = p.state.lock();
    let bo = bo_from_dmabuf(&mut st, args.dmabuf_fd as RawFd)?;
    if bo.is_userptr() || bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT) == 0 {
        return Err(Errno::EINVAL);
    }
    let md = bo.metadata.lock().data.clone();
    if args.metadata_ptr != 0 {
        if (args.metadata_size as usize) < md.len() {
            return Err(Errno::EINVAL);
        }
        sys::copy_to_user(args.metadata_ptr, &md).map_err(|_| Errno::EFAULT)?;
    }
    args.size = bo.size;
    args.metadata_size = md.len() as u32;
    args.gpu_id = if gpus::by_id(bo.gpu_id).is_some() { bo.gpu_id } else { gpus::all()[0].gpu_id };
    args.flags = dmabuf_flags(&bo);
    Ok(0)
}

/// `kfd_ioctl_import_dmabuf` + `amdgpu_amdkfd_gpuvm_import_dmabuf_fd`: unknown gpu EINVAL, no VM
/// ENODEV, bad fd EBADF, not an amdgpu VRAM/GTT dma-buf EINVAL. The import gets flags
/// `VRAM|GTT` + `WRITABLE|EXECUTABLE` and is not GPU-mapped until MAP_MEMORY_TO_GPU.
fn kfd_ioctl_import_dmabuf(p: &Arc<Process>, args: &mut kfd_ioctl_import_dmabuf_args) -> R {
    (args.handle, _) = import_dmabuf(p, args.gpu_id, args.dmabuf_fd as RawFd, args.va_addr, None)?;
    Ok(0)
}

/// `kfd_import_dmabuf_create_kfd_bo`: imports dma-buf `fd` on `gpu_id` at `va_addr` and returns
/// the KFD handle and the BO's render-node mmap offset. `ipc` (an IPC_IMPORT_HANDLE: the share
/// handle and its flags) files the new BO's reference on that handle; an entry that cannot be
/// written costs only the handle's outliving its exporter through this BO. Unknown gpu → EINVAL;
/// no VM → ENODEV; not a dma-buf of a BO, or of a USERPTR BO or of one without a VRAM/GTT domain
/// → EINVAL.
fn import_dmabuf(
    p: &Arc<Process>,
    gpu_id: u32,
    fd: RawFd,
    va_addr: u64,
    ipc: Option<([u32; 4], u32)>,
) -> Result<(u64, u64), Errno> {
    let mut st = p.state.lock();
    let pdd = st.pdd(gpu_id).ok_or(Errno::EINVAL)?;
    pdd.bound()?;
    let drm_file = pdd.drm_file.unwrap();
    let bo = bo_from_dmabuf(&mut st, fd)?;
    // A foreign dma-buf (udmabuf) imports as a GTT sg BO (amdgpu_gem_prime_import).
    if bo.is_userptr() || (!bo.foreign && bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT) == 0)
    {
        return Err(Errno::EINVAL);
    }
    let mmap_offset = st.alloc_mmap_offset(&bo)?;
    bo.allow(drm_file);
    let flags = (bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
        | if bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM == 0 { KFD_IOC_ALLOC_MEM_FLAGS_GTT } else { 0 }
        | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
    let ipc = ipc.and_then(|(share_handle, ipc_flags)| super::ipc::file(share_handle, ipc_flags, &bo).ok());
    let pdd = st.pdd_mut(gpu_id).unwrap();
    let idr = pdd.add_mem(bo, va_addr, flags, 0, 0);
    pdd.alloc_idr.get_mut(&idr).unwrap().ipc = ipc;
    Ok((make_handle(gpu_id, idr), mmap_offset))
}

/// `kfd_ioctl_ipc_export_handle` → `kfd_ipc_export_as_handle` (ROCm DKMS only; [`super::ipc`]):
/// unknown gpu, or no BO of that handle in the process device of `gpu_id` → EINVAL; a USERPTR
/// BO → EPERM (`amdgpu_gem_prime_export`). A BO exported (or imported through a handle) before
/// gives its handle again, with the flags of the first export.
fn kfd_ioctl_ipc_export_handle(p: &Arc<Process>, args: &mut kfd_ioctl_ipc_export_handle_args) -> R {
    let mut st = p.state.lock();
    let pdd = st.pdd_mut(args.gpu_id).ok_or(Errno::EINVAL)?;
    let mem = pdd.alloc_idr.get_mut(&get_idr_handle(args.handle)).ok_or(Errno::EINVAL)?;
    if mem.ipc.is_none() {
        mem.ipc = Some(super::ipc::export(args.flags, &mem.bo)?);
    }
    args.share_handle = mem.ipc.as_ref().unwrap().share_handle;
    Ok(0)
}

/// [`super::pc_sampling::pc_sample`].
fn kfd_ioctl_pc_sample(p: &Arc<Process>, args: &mut kfd_ioctl_pc_sample_args) -> R {
    super::pc_sampling::pc_sample(p, args)
}

/// `kfd_ioctl_ipc_import_handle` → `kfd_ipc_import_handle` (ROCm DKMS only; [`super::ipc`]):
/// unknown gpu or share handle → EINVAL; then IMPORT_DMABUF's errors. Returns the KFD handle,
/// the render-node mmap offset and the exporter's flags; the new BO references the handle.
fn kfd_ioctl_ipc_import_handle(p: &Arc<Process>, args: &mut kfd_ioctl_ipc_import_handle_args) -> R {
    if gpus::by_id(args.gpu_id).is_none() {
        return Err(Errno::EINVAL);
    }
    let (fd, flags) = super::ipc::open(&args.share_handle)?;
    // The importer's own reference, so that the handle outlives its exporter while this BO lives.
    let ipc = Some((args.share_handle, flags));
    (args.handle, args.mmap_offset) = import_dmabuf(p, args.gpu_id, fd.as_raw_fd(), args.va_addr, ipc)?;
    args.flags = flags;
    Ok(0)
}

/// `kfd_ioctl_export_dmabuf`: unknown gpu or handle → EINVAL; USERPTR → EPERM
/// (`amdgpu_gem_prime_export`); at the fd limit EMFILE. The fd is a new open file of the BO's
/// memfd (`O_CLOEXEC` honoured, [`Bo::export_fd`]), so it is recognisable in any process and
/// keeps the pages alive.
fn kfd_ioctl_export_dmabuf(p: &Arc<Process>, args: &mut kfd_ioctl_export_dmabuf_args) -> R {
    if gpus::by_id(get_gpu_id(args.handle)).is_none() {
        return Err(Errno::EINVAL);
    }
    let st = p.state.lock();
    let pdd = st.pdd(get_gpu_id(args.handle)).ok_or(Errno::EINVAL)?;
    let mem = pdd.alloc_idr.get(&get_idr_handle(args.handle)).ok_or(Errno::EINVAL)?;
    args.dmabuf_fd = mem.bo.export_fd(args.flags & libc::O_CLOEXEC as u32 != 0)? as u32;
    Ok(0)
}

/// `kfd_ioctl_alloc_queue_gws` → `pqm_set_gws`: unknown queue → EINVAL; SDMA queues cannot
/// own GWS (EINVAL); a GPU without GWS (`num_gws` 0, `dev->gws` NULL) → ENODEV. `num_gws` > 0
/// gives the GPU's GWS to the queue: EBUSY while another queue of the process on that GPU holds
/// it ("Only allow one queue per process can have GWS assigned"); 0 takes it back (EINVAL when
/// the process holds none there). `first_gws` is 0 (the queue gets all of them). The queue's
/// dispatches then run with the GPU's [`amdgcn_isa::Gws`].
fn kfd_ioctl_alloc_queue_gws(p: &Arc<Process>, args: &mut kfd_ioctl_alloc_queue_gws_args) -> R {
    let mut st = p.state.lock();
    let rt = match st.queues.get(&args.queue_id) {
        Some(q) if !q.rt.is_sdma => q.rt.clone(),
        _ => return Err(Errno::EINVAL),
    };
    let pdd = st.pdd_mut(rt.gpu_id).ok_or(Errno::EINVAL)?;
    if pdd.gpu.num_gws == 0 {
        return Err(Errno::ENODEV);
    }
    if args.num_gws != 0 {
        if pdd.num_gws != 0 {
            return Err(Errno::EBUSY);
        }
        *rt.gws.lock() = Some(pdd.gpu.gws.clone());
        pdd.num_gws = pdd.gpu.num_gws;
    } else {
        if pdd.num_gws == 0 {
            return Err(Errno::EINVAL);
        }
        *rt.gws.lock() = None;
        pdd.num_gws = 0;
    }
    args.first_gws = 0;
    Ok(0)
}

/// `kfd_ioctl_smi_events`: unknown gpu → EINVAL; otherwise a client fd of that GPU's SMI events
/// (`kfd_smi_event_open`, [`super::smi`]).
fn kfd_ioctl_smi_events(p: &Arc<Process>, args: &mut kfd_ioctl_smi_events_args) -> R {
    if p.state.lock().pdd(args.gpuid).is_none() {
        return Err(Errno::EINVAL);
    }
    args.anon_fd = super::smi::open(args.gpuid)? as u32;
    Ok(0)
}

/// `kfd_ioctl_svm` + `svm_ioctl`: the head of `kfd_ioctl_svm_args` and `nattr` attributes, all
/// within the request's `_IOC_SIZE` (else EINVAL), copied in and (IOWR) back out. Start and
/// size must be page aligned and non-zero (EINVAL); the op's own errors are
/// [`Svms::set_attr`](super::svm::Svms::set_attr)'s and `get_attr`'s. An unknown op returns
/// +EINVAL as a value, not an error, as `svm_ioctl` does (`r = EINVAL`).
fn kfd_ioctl_svm(p: &Arc<Process>, req: c_ulong, arg: u64) -> R {
    const HEAD: usize = std::mem::size_of::<kfd_ioctl_svm_args>();
    const ATTR: usize = std::mem::size_of::<kfd_ioctl_svm_attribute>();
    let usize_ = super::ioc_size(req);
    let mut buf = vec![0u8; usize_.max(HEAD)];
    let r = (|| {
        sys::copy_from_user(&mut buf[..usize_], arg)?;
        // SAFETY: `buf` holds at least HEAD bytes; the head is integers only.
        let head: kfd_ioctl_svm_args = unsafe { std::ptr::read_unaligned(buf.as_ptr().cast()) };
        let n = head.nattr as usize;
        if HEAD + n * ATTR > buf.len() {
            return Err(Errno::EINVAL);
        }
        let mut attrs: Vec<kfd_ioctl_svm_attribute> = (0..n)
            .map(|i| {
                let o = HEAD + i * ATTR;
                kfd_ioctl_svm_attribute {
                    type_: u32::from_le_bytes(buf[o..o + 4].try_into().unwrap()),
                    value: u32::from_le_bytes(buf[o + 4..o + 8].try_into().unwrap()),
                }
            })
            .collect();
        if !head.start_addr.is_multiple_of(PAGE_SIZE)
            || !head.size.is_multiple_of(PAGE_SIZE)
            || head.start_addr == 0
            || head.size == 0
        {
            return Err(Errno::EINVAL);
        }
        let (pid, xnack, vms, svms) = {
            let st = p.state.lock();
            let vms: Vec<_> = st.pdds.iter().filter(|d| d.drm_file.is_some()).map(|d| d.vm.clone()).collect();
            (st.pid, st.xnack.is_some(), vms, st.svms.clone())
        };
        let cx = super::svm::Ctx { pid, xnack, vms: &vms };
        let r = match head.op {
            KFD_IOCTL_SVM_OP_SET_ATTR => svms.set_attr(&cx, head.start_addr, head.size, &attrs).map(|_| 0),
            KFD_IOCTL_SVM_OP_GET_ATTR => svms.get_attr(&cx, head.start_addr, head.size, &mut attrs).map(|_| 0),
            _ => Ok(Errno::EINVAL as c_int),
        };
        for (i, a) in attrs.iter().enumerate() {
            let o = HEAD + i * ATTR;
            buf[o..o + 4].copy_from_slice(&a.type_.to_le_bytes());
            buf[o + 4..o + 8].copy_from_slice(&a.value.to_le_bytes());
        }
        if sys::copy_to_user(arg, &buf[..usize_]).is_err() {
            return Err(Errno::EFAULT);
        }
        r
    })();
    super::trace_line::<()>("AMDKFD_IOC_SVM", None, r, None);
    r
}

/// `kfd_ioctl_set_xnack_mode`: `xnack_enabled < 0` queries; changing it with queues → EBUSY;
/// enabling on a GPU without per-process XNACK → EPERM. With XNACK on, every GPU of the process
/// reaches its pageable memory (see [`super::gpuvm`]).
fn kfd_ioctl_set_xnack_mode(p: &Arc<Process>, args: &mut kfd_ioctl_set_xnack_mode_args) -> R {
    let mut st = p.state.lock();
    if args.xnack_enabled >= 0 {
        if !st.queues.is_empty() {
            return Err(Errno::EBUSY);
        }
        let want = args.xnack_enabled != 0;
        if st.xnack.is_some() == want {
            return Ok(0);
        }
        if want && !st.pdds.iter().all(|p| gpus::supports_xnack(p.gpu)) {
            return Err(Errno::EPERM);
        }
        st.xnack = want.then(Hmm::new);
        for pdd in &st.pdds {
            Hmm::serve(&st.xnack, &pdd.vm);
        }
    } else {
        args.xnack_enabled = st.xnack.is_some() as i32;
    }
    Ok(0)
}

/// `kfd_ioctl_runtime_enable` (`runtime_enable`, `runtime_disable`): a second enable → EBUSY,
/// an enable after CREATE_QUEUE → EEXIST; under a debugger both raise `EC_PROCESS_RUNTIME` and
/// wait for the debugger's answer ([`super::debug::runtime_enable`], outside the process lock).
fn kfd_ioctl_runtime_enable(p: &Arc<Process>, args: &mut kfd_ioctl_runtime_enable_args) -> R {
    let enable = args.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0;
    let (queues, mut enabled) = {
        let st = p.state.lock();
        (st.queues.len(), st.runtime_enabled)
    };
    let ttmp = args.mode_mask & KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK != 0;
    super::debug::runtime_enable(enable, args.r_debug, ttmp, queues, &mut enabled)?;
    p.state.lock().runtime_enabled = enabled;
    Ok(0)
}

/// `kfd_ioctl_set_debug_trap`: the debugger interface ([`super::debug::dbg_trap`]), told this
/// process's queues when it enables debugging of itself.
fn kfd_ioctl_set_debug_trap(p: &Arc<Process>, args: &mut kfd_ioctl_dbg_trap_args) -> R {
    let own: Vec<super::debug::QueueInfo> = if args.op == KFD_IOC_DBG_TRAP_ENABLE && args.pid == p.pid {
        p.state.lock().queues.values().map(queue_info).collect()
    } else {
        Vec::new()
    };
    super::debug::dbg_trap(args, &own)
}

/// What a debugger sees of queue `q` ([`super::debug::QueueInfo`]).
fn queue_info(q: &Queue) -> super::debug::QueueInfo {
    let (ring_base, ring_size) = q.rt.ring();
    super::debug::QueueInfo {
        queue_id: q.rt.queue_id,
        gpu_id: q.rt.gpu_id,
        doorbell_id: q.doorbell_slot,
        queue_type: q.queue_type,
        ring_base,
        ring_size: ring_size as u32,
        wptr: q.rt.wptr_va,
        rptr: q.rt.rptr_va,
        ctx_save_restore_address: q.ctx_save_restore_address,
        ctx_save_restore_area_size: q.ctx_save_restore_area_size,
    }
}

// ------------------------------------------------------------------------------------------
// mmap
// ------------------------------------------------------------------------------------------

/// `kfd_mmap`: dispatch on the offset type. DOORBELL (`kfd_doorbell_mmap`: length must be the
/// 8 KiB slice), EVENTS (`kfd_event_mmap`: ≤ 32 KiB, signal page must exist), RESERVED_MEM
/// (`kfd_reserved_mem_mmap`: the 2-page CWSR TBA/TMA), MMIO (`kfd_mmio_mmap`: one page). Unknown
/// gpu_id → ENODEV; no KFD process in this OS process → EINVAL.
/// # Safety
/// As [`super::mmap`].
pub unsafe fn kfd_mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    offset: u64,
) -> Result<*mut c_void, Errno> {
    let p = process::current_if_exists().ok_or(Errno::EINVAL)?;
    let gpu_id = kfd_mmap_gpu_id(offset);
    let dev = if gpu_id != 0 { gpus::by_id(gpu_id) } else { None };
    let mut st = p.state.lock();
    match kfd_mmap_type(offset) {
        KFD_MMAP_TYPE_DOORBELL => {
            let dev = dev.ok_or(Errno::ENODEV)?;
            if len as u64 != KFD_DOORBELL_PROCESS_SLICE {
                return Err(Errno::EINVAL);
            }
            let pdd = st.pdd_mut(dev.gpu_id).ok_or(Errno::EINVAL)?;
            if pdd.doorbells.is_none() {
                let bo =
                    Arc::new(Bo::new_memfd(dev.gpu_id, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, KFD_DOORBELL_PROCESS_SLICE)?);
                pdd.doorbells = Some(Doorbells { bo, used: BTreeSet::new() });
            }
            let bo = &pdd.doorbells.as_ref().unwrap().bo;
            // SAFETY: our caller upholds the MAP_FIXED contract for `addr`.
            let at = unsafe { bo.memfd().ok_or(Errno::EINVAL)?.map_for_user(addr, len, prot, flags, 0, true) }?;
            drop(st);
            p.engine.doorbell_mapped(at as u64, len as u64, dev.gpu_id);
            Ok(at)
        }
        KFD_MMAP_TYPE_EVENTS => {
            if len as u64 > SIGNAL_PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            let page = st.events.signal_page.as_ref().ok_or(Errno::EINVAL)?;
            // SAFETY: our caller upholds the MAP_FIXED contract for `addr`.
            let r = unsafe { page.bo.memfd().ok_or(Errno::EINVAL)?.map_for_user(addr, len, prot, flags, 0, true) }?;
            st.events.signal_mapped_size = len as u64;
            Ok(r)
        }
        KFD_MMAP_TYPE_RESERVED_MEM => {
            let dev = dev.ok_or(Errno::ENODEV)?;
            if len as u64 != 2 * PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            let _ = st.pdd(dev.gpu_id).ok_or(Errno::EINVAL)?;
            let bo = Bo::new_memfd(dev.gpu_id, 0, 2 * PAGE_SIZE)?;
            // The user's mapping keeps the pages; the model's Bo can go.
            // SAFETY: our caller upholds the MAP_FIXED contract for `addr`.
            unsafe { bo.memfd().ok_or(Errno::EINVAL)?.map_for_user(addr, len, prot, flags, 0, true) }
        }
        _ => {
            // KFD_MMAP_TYPE_MMIO
            let dev = dev.ok_or(Errno::ENODEV)?;
            if len as u64 != PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            let pdd = st.pdd_mut(dev.gpu_id).ok_or(Errno::EINVAL)?;
            let bo = mmio_page(pdd)?;
            // SAFETY: our caller upholds the MAP_FIXED contract for `addr`.
            unsafe { bo.memfd().ok_or(Errno::EINVAL)?.map_for_user(addr, len, prot, flags, 0, true) }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

pub(crate) use super::sys::{as_bytes, as_bytes_mut};
