//! amdgpu command submission on a render node: contexts (`DRM_AMDGPU_CTX`, `amdgpu_ctx.c`), BO
//! lists (`DRM_AMDGPU_BO_LIST`, `amdgpu_bo_list.c`), `DRM_AMDGPU_CS` and `DRM_AMDGPU_WAIT_CS`
//! (`amdgpu_cs.c`), for IBs on the DMA (SDMA) rings.
//!
//! - A context holds one scheduler entity per (IP, ring) used; an entity numbers its jobs from 1
//!   (`amdgpu_ctx_add_fence`) and keeps the fences of its last [`SCHED_JOBS`] jobs
//!   (`amdgpu_sched_jobs`); an older sequence number reads as signaled, a future one is EINVAL
//!   (`amdgpu_ctx_get_fence`). The kernel's wait for the fence `SCHED_JOBS` back
//!   (`amdgpu_ctx_wait_prev_fence`) is implied: a job runs only after the previous one ended.
//! - A job runs on its own thread, in entity order: it waits for its dependencies (DEPENDENCIES,
//!   SYNCOBJ_IN, SYNCOBJ_TIMELINE_WAIT), runs its IBs through the file's VM
//!   ([`sdma::run_indirect`]), writes its sequence number to the user fence (FENCE chunk), then
//!   signals its SYNCOBJ_OUT / TIMELINE_SIGNAL syncobjs and its fence. It holds its BOs (the BO
//!   list, the user fence BO) until it ends, as the kernel fences them.
//! - A POLL_REGMEM that never passes times the job out after the SDMA lockup timeout
//!   (`amdgpu.lockup_timeout`, 10 s: the fence gets -ETIME, as `amdgpu_job_timedout`); a VM fault
//!   ends the IB there (the job still signals; the kernel reports the fault and the dummy page
//!   takes the access).
//!
//! Not modelled: IBs for the GFX and COMPUTE rings (PM4 on kernel rings): EINVAL; TTM validation
//! of the BO list (VRAM is never evicted, so a submission never moves a KFD BO); context
//! priorities beyond their range check; gang submission (IBs for several entities: EINVAL, as
//! before gang submit); a SYNCOBJ_IN without a fence, which the kernel refuses (EINVAL), waits
//! for one here, and a SYNCOBJ_OUT holds no fence until the job ends (the kernel gives it the job's
//! unsignaled fence at once: a wait without WAIT_FOR_SUBMIT times out there, is EINVAL here).
//! The model's syncobjs have no pending fences to tell apart.

use super::bo::Bo;
use super::drm::{read_u64s, DrmFile};
use super::gpus::GpuInfo;
use super::gpuvm::Gpuvm;
use super::lowest_free_id;
use super::sdma;
use super::syncobj::{self, Syncobj};
use super::sys::{self, as_bytes_mut};
use kfd_ioctl::amdgpu::*;
use nix::errno::Errno;
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

type R = Result<libc::c_int, Errno>;

/// `amdgpu_sched_jobs`: jobs in flight per entity (the fences a context keeps).
pub const SCHED_JOBS: u64 = 32;
/// `AMDGPU_VM_MAX_NUM_CTX`: context ids are below this.
const MAX_NUM_CTX: u32 = 4096;
/// `amdgpu.lockup_timeout` for SDMA rings.
const LOCKUP_TIMEOUT: Duration = Duration::from_secs(10);
/// `AMDGPU_CTX_PRIORITY_*`: the values `amdgpu_ctx_priority_is_valid` accepts.
const CTX_PRIORITIES: [i32; 6] = [-2048, -1023, -512, 0, 512, 1023];

/// A job's finished fence: None while running, then Some(error) (0 or a negative errno).
#[derive(Default)]
pub struct Fence {
    done: Mutex<Option<i32>>,
    cv: Condvar,
}

impl Fence {
    fn signal(&self, error: i32) {
        *self.done.lock() = Some(error);
        self.cv.notify_all();
    }

    /// Waits until signaled or `deadline` (None: forever); the fence's error, or None at the
    /// deadline.
    fn wait(&self, deadline: Option<Instant>) -> Option<i32> {
        let mut d = self.done.lock();
        while d.is_none() {
            match deadline {
                None => self.cv.wait(&mut d),
                Some(t) => {
                    if self.cv.wait_until(&mut d, t).timed_out() {
                        break;
                    }
                }
            }
        }
        *d
    }
}

/// `amdgpu_ctx_entity`: the next sequence number and the fences of the last [`SCHED_JOBS`].
struct Entity {
    next: u64,
    fences: VecDeque<Arc<Fence>>,
}

impl Entity {
    /// `amdgpu_ctx_get_fence`: EINVAL for a sequence number not yet given, None (signaled) for
    /// one older than the fences kept.
    fn fence(&self, seq: u64) -> Result<Option<Arc<Fence>>, Errno> {
        if seq >= self.next {
            return Err(Errno::EINVAL);
        }
        let oldest = self.next - self.fences.len() as u64;
        Ok(if seq < oldest { None } else { Some(self.fences[(seq - oldest) as usize].clone()) })
    }
}

/// `amdgpu_ctx`: its entities by (IP type, ring).
#[derive(Default)]
pub struct Ctx {
    entities: Mutex<HashMap<(u32, u32), Entity>>,
}

impl Ctx {
    fn fence(&self, ip: u32, ring: u32, seq: u64) -> Result<Option<Arc<Fence>>, Errno> {
        match self.entities.lock().get(&(ip, ring)) {
            Some(e) => e.fence(seq),
            // A fresh entity's next sequence number is 1: every handle is in its future.
            None => Err(Errno::EINVAL),
        }
    }
}

/// A render file's contexts and BO lists (`amdgpu_fpriv`'s `ctx_mgr` and `bo_list_handles`).
#[derive(Default)]
pub struct CsState {
    ctxs: BTreeMap<u32, Arc<Ctx>>,
    bo_lists: BTreeMap<u32, Arc<Vec<Arc<Bo>>>>,
}

/// `amdgpu_ctx_get_entity`: the ring of an IP this model runs jobs on; EINVAL otherwise.
fn check_ring(gpu: &GpuInfo, ip_type: u32, ip_instance: u32, ring: u32) -> Result<(), Errno> {
    if ip_type != AMDGPU_HW_IP_DMA || ip_instance != 0 || ring >= gpu.sdma_engines() {
        return Err(Errno::EINVAL);
    }
    Ok(())
}

/// `amdgpu_ctx_ioctl` on `union drm_amdgpu_ctx` (`a`: op, flags, ctx_id, priority in; out over it).
pub fn ctx_ioctl(f: &mut DrmFile, a: &mut [u32; 4]) -> R {
    let (op, ctx_id, priority) = (a[0], a[2], a[3] as i32);
    match op {
        AMDGPU_CTX_OP_ALLOC_CTX => {
            if !CTX_PRIORITIES.contains(&priority) {
                return Err(Errno::EINVAL);
            }
            let id = lowest_free_id(&f.cs.ctxs);
            if id >= MAX_NUM_CTX {
                return Err(Errno::ENOMEM);
            }
            f.cs.ctxs.insert(id, Arc::default());
            *a = [id, 0, 0, 0];
            Ok(0)
        }
        AMDGPU_CTX_OP_FREE_CTX => {
            f.cs.ctxs.remove(&ctx_id).ok_or(Errno::EINVAL)?;
            Ok(0)
        }
        AMDGPU_CTX_OP_QUERY_STATE | AMDGPU_CTX_OP_QUERY_STATE2 => {
            f.cs.ctxs.get(&ctx_id).ok_or(Errno::EINVAL)?;
            // flags, hangs, reset_status: AMDGPU_CTX_NO_RESET, nothing lost.
            *a = [0, 0, 0, 0];
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// `amdgpu_bo_create_list_entry_array` + `amdgpu_bo_list_create`: the BOs of `n` entries of
/// `size` bytes at `ptr` (EFAULT), each a GEM handle of `f` (ENOENT).
fn bo_list(f: &DrmFile, ptr: u64, n: u32, size: u32) -> Result<Vec<Arc<Bo>>, Errno> {
    if n > 1 << 20 {
        return Err(Errno::ENOMEM);
    }
    let entry = std::mem::size_of::<drm_amdgpu_bo_list_entry>();
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n as u64 {
        let mut e = [0u8; 8];
        let take = (size as usize).min(entry);
        sys::copy_from_user(&mut e[..take], ptr + i * size as u64).map_err(|_| Errno::EFAULT)?;
        let handle = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        out.push(f.handles.get(&handle).cloned().ok_or(Errno::ENOENT)?);
    }
    Ok(out)
}

/// `amdgpu_bo_list_ioctl`: CREATE (handle from 1), DESTROY (unknown handles ignored), UPDATE
/// (ENOENT for an unknown list); the whole union is zeroed and `out.list_handle` written.
pub fn bo_list_ioctl(f: &mut DrmFile, a: &mut drm_amdgpu_bo_list_in) -> R {
    let bos = bo_list(f, a.bo_info_ptr, a.bo_number, a.bo_info_size)?;
    let handle = match a.operation {
        AMDGPU_BO_LIST_OP_CREATE => {
            let h = lowest_free_id(&f.cs.bo_lists);
            f.cs.bo_lists.insert(h, Arc::new(bos));
            h
        }
        AMDGPU_BO_LIST_OP_DESTROY => {
            f.cs.bo_lists.remove(&a.list_handle);
            0
        }
        AMDGPU_BO_LIST_OP_UPDATE => {
            let l = f.cs.bo_lists.get_mut(&a.list_handle).ok_or(Errno::ENOENT)?;
            *l = Arc::new(bos);
            a.list_handle
        }
        _ => return Err(Errno::EINVAL),
    };
    *a = drm_amdgpu_bo_list_in { operation: handle, ..Default::default() };
    Ok(0)
}

/// What a job waits for before it runs.
enum Dep {
    Fence(Arc<Fence>),
    Syncobj(Arc<Syncobj>, u64),
}

/// A parsed submission.
struct Job {
    ibs: Vec<drm_amdgpu_cs_chunk_ib>,
    deps: Vec<Dep>,
    signals: Vec<(Arc<Syncobj>, u64)>,
    user_fence: Option<(Arc<Bo>, u64)>,
    /// Held until the job ends.
    bos: Option<Arc<Vec<Arc<Bo>>>>,
}

fn read_struct<T: Copy + Default>(chunk: &[u8]) -> T {
    let mut t = T::default();
    let n = chunk.len().min(std::mem::size_of::<T>());
    // SAFETY: T is a plain uapi struct (integers only); at most its size is written.
    unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), &mut t as *mut T as *mut u8, n) };
    t
}

fn read_array<T: Copy + Default>(chunk: &[u8]) -> Vec<T> {
    chunk.chunks_exact(std::mem::size_of::<T>()).map(read_struct).collect()
}

/// `amdgpu_cs_ioctl` on `a` (out: the sequence number, a u64 over `ctx_id`/`bo_list_handle`).
pub fn cs_ioctl(f: &mut DrmFile, gpu: &GpuInfo, a: &mut drm_amdgpu_cs_in) -> R {
    if a.num_chunks == 0 {
        return Err(Errno::EINVAL);
    }
    let ctx = f.cs.ctxs.get(&a.ctx_id).cloned().ok_or(Errno::EINVAL)?;
    let ptrs = read_u64s(a.chunks, a.num_chunks)?;
    let mut chunks = Vec::with_capacity(ptrs.len());
    for p in ptrs {
        let mut c = drm_amdgpu_cs_chunk::default();
        sys::copy_from_user(as_bytes_mut(std::slice::from_mut(&mut c)), p).map_err(|_| Errno::EFAULT)?;
        let mut data = vec![0u8; c.length_dw as usize * 4];
        sys::copy_from_user(&mut data, c.chunk_data).map_err(|_| Errno::EFAULT)?;
        chunks.push((c.chunk_id, data));
    }
    let mut job = Job { ibs: Vec::new(), deps: Vec::new(), signals: Vec::new(), user_fence: None, bos: None };
    // amdgpu_cs_pass1: sizes, the user fence BO, a BO_HANDLES list; unknown chunks → EINVAL.
    for (id, data) in &chunks {
        let need = match *id {
            AMDGPU_CHUNK_ID_IB => std::mem::size_of::<drm_amdgpu_cs_chunk_ib>(),
            AMDGPU_CHUNK_ID_FENCE => std::mem::size_of::<drm_amdgpu_cs_chunk_fence>(),
            AMDGPU_CHUNK_ID_BO_HANDLES => std::mem::size_of::<drm_amdgpu_bo_list_in>(),
            AMDGPU_CHUNK_ID_DEPENDENCIES
            | AMDGPU_CHUNK_ID_SYNCOBJ_IN
            | AMDGPU_CHUNK_ID_SYNCOBJ_OUT
            | AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES
            | AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT
            | AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL => 0,
            _ => return Err(Errno::EINVAL),
        };
        if data.len() < need {
            return Err(Errno::EINVAL);
        }
        match *id {
            AMDGPU_CHUNK_ID_IB => job.ibs.push(read_struct(data)),
            AMDGPU_CHUNK_ID_FENCE => {
                // amdgpu_cs_p1_user_fence: a one-page BO, not USERPTR, room for 8 bytes.
                let uf: drm_amdgpu_cs_chunk_fence = read_struct(data);
                let bo = f.handles.get(&uf.handle).cloned().ok_or(Errno::EINVAL)?;
                if bo.size != sys::PAGE_SIZE || uf.offset as u64 + 8 > bo.size || bo.is_userptr() {
                    return Err(Errno::EINVAL);
                }
                job.user_fence = Some((bo, uf.offset as u64));
            }
            AMDGPU_CHUNK_ID_BO_HANDLES => {
                let l: drm_amdgpu_bo_list_in = read_struct(data);
                job.bos = Some(Arc::new(bo_list(f, l.bo_info_ptr, l.bo_number, l.bo_info_size)?));
            }
            _ => {}
        }
    }
    // amdgpu_cs_p1_ib / amdgpu_ctx_get_entity: one entity per submission.
    let first = *job.ibs.first().ok_or(Errno::EINVAL)?;
    for ib in &job.ibs {
        check_ring(gpu, ib.ip_type, ib.ip_instance, ib.ring)?;
        if (ib.ip_type, ib.ring) != (first.ip_type, first.ring) {
            return Err(Errno::EINVAL);
        }
    }
    // amdgpu_cs_dependencies.
    for (id, data) in &chunks {
        match *id {
            AMDGPU_CHUNK_ID_DEPENDENCIES | AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES => {
                for d in read_array::<drm_amdgpu_cs_chunk_dep>(data) {
                    let c = f.cs.ctxs.get(&d.ctx_id).ok_or(Errno::EINVAL)?;
                    check_ring(gpu, d.ip_type, d.ip_instance, d.ring)?;
                    if let Some(fence) = c.fence(d.ip_type, d.ring, d.handle)? {
                        job.deps.push(Dep::Fence(fence));
                    }
                }
            }
            AMDGPU_CHUNK_ID_SYNCOBJ_IN => {
                for s in read_array::<drm_amdgpu_cs_chunk_sem>(data) {
                    job.deps.push(Dep::Syncobj(f.syncobjs.get(s.handle).map_err(|_| Errno::ENOENT)?, 0));
                }
            }
            AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT => {
                for s in read_array::<drm_amdgpu_cs_chunk_syncobj>(data) {
                    job.deps.push(Dep::Syncobj(f.syncobjs.get(s.handle).map_err(|_| Errno::ENOENT)?, s.point));
                }
            }
            AMDGPU_CHUNK_ID_SYNCOBJ_OUT => {
                for s in read_array::<drm_amdgpu_cs_chunk_sem>(data) {
                    job.signals.push((f.syncobjs.get(s.handle).map_err(|_| Errno::EINVAL)?, 0));
                }
            }
            AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL => {
                for s in read_array::<drm_amdgpu_cs_chunk_syncobj>(data) {
                    job.signals.push((f.syncobjs.get(s.handle).map_err(|_| Errno::EINVAL)?, s.point));
                }
            }
            _ => {}
        }
    }
    // amdgpu_cs_parser_bos: a list by handle, or the BO_HANDLES chunk's, not both.
    if a.bo_list_handle != 0 {
        if job.bos.is_some() {
            return Err(Errno::EINVAL);
        }
        job.bos = Some(f.cs.bo_lists.get(&a.bo_list_handle).cloned().ok_or(Errno::ENOENT)?);
    }
    // amdgpu_cs_submit: the sequence number; the job runs behind the entity's previous one.
    let fence = Arc::new(Fence::default());
    let (seq, prev) = {
        let mut ents = ctx.entities.lock();
        let e = ents.entry((first.ip_type, first.ring)).or_insert(Entity { next: 1, fences: VecDeque::new() });
        let seq = e.next;
        e.next += 1;
        let prev = e.fences.back().cloned();
        e.fences.push_back(fence.clone());
        if e.fences.len() as u64 > SCHED_JOBS {
            e.fences.pop_front();
        }
        (seq, prev)
    };
    // The kernel replaces a SYNCOBJ_OUT's fence with the job's at submission.
    for (s, point) in &job.signals {
        if *point == 0 {
            s.reset();
        }
    }
    let vm = f.vm.clone();
    // Without a thread for it the job fails at once, as a job the scheduler could not run: its
    // fence and its SYNCOBJ_OUTs signal with the error, so nothing waits on them forever.
    let (signals, failed) = (job.signals.clone(), fence.clone());
    let run = move || run_job(job, &vm, seq, prev, &fence);
    if std::thread::Builder::new().name("kfdsim-cs".into()).spawn(run).is_err() {
        for (s, point) in &signals {
            s.signal_point(*point);
        }
        failed.signal(-libc::ENOMEM);
        return Err(Errno::ENOMEM);
    }
    *a = drm_amdgpu_cs_in::default();
    a.ctx_id = seq as u32;
    a.bo_list_handle = (seq >> 32) as u32;
    Ok(0)
}

fn run_job(job: Job, vm: &RwLock<Gpuvm>, seq: u64, prev: Option<Arc<Fence>>, fence: &Fence) {
    if let Some(f) = prev {
        f.wait(None);
    }
    for d in &job.deps {
        match d {
            Dep::Fence(f) => {
                f.wait(None);
            }
            Dep::Syncobj(s, point) => {
                let _ = syncobj::wait(std::slice::from_ref(s), &[*point], true, true, i64::MAX);
            }
        }
    }
    let deadline = Instant::now() + LOCKUP_TIMEOUT;
    let mut error = 0;
    for ib in &job.ibs {
        match sdma::run_indirect(vm, ib.va_start, ib.ib_bytes / 4, deadline) {
            Ok(()) => {}
            Err(Some(fault)) => {
                if super::trace_enabled() {
                    crate::trace::emit(format_args!("CS job {seq}: GPU VM fault va {:#x} {:?}", fault.va, fault.kind));
                }
                break;
            }
            Err(None) => {
                error = -libc::ETIME;
                break;
            }
        }
    }
    if let Some((bo, off)) = &job.user_fence {
        let _ = bo.write(*off, &seq.to_le_bytes());
    }
    for (s, point) in &job.signals {
        s.signal_point(*point);
    }
    drop(job.bos);
    fence.signal(error);
}

/// `amdgpu_cs_wait_ioctl`, first half (under the process lock): the fence of `a`'s submission,
/// None where it is known signaled; EINVAL for an unknown context, a ring no job runs on, or a
/// sequence number not yet given.
pub fn wait_cs_fence(f: &DrmFile, gpu: &GpuInfo, a: &drm_amdgpu_wait_cs_in) -> Result<Option<Arc<Fence>>, Errno> {
    let ctx = f.cs.ctxs.get(&a.ctx_id).ok_or(Errno::EINVAL)?;
    check_ring(gpu, a.ip_type, a.ip_instance, a.ring)?;
    ctx.fence(a.ip_type, a.ring, a.handle)
}

/// `amdgpu_cs_wait_ioctl`, second half: waits for `fence` until `a.timeout` (`amdgpu_gem_timeout`:
/// negative as i64 → forever, else absolute CLOCK_MONOTONIC ns), then zeroes the union and
/// writes `out.status` (a u64 at 0: 1 still busy). A job that failed returns its error.
pub fn wait_cs(fence: Option<Arc<Fence>>, a: &mut drm_amdgpu_wait_cs_in) -> R {
    let deadline = if (a.timeout as i64) < 0 {
        None
    } else {
        let now = sys::clock_ns(libc::CLOCK_MONOTONIC);
        Some(Instant::now() + Duration::from_nanos(a.timeout.saturating_sub(now)))
    };
    let busy = match fence.map(|f| f.wait(deadline)) {
        None | Some(Some(0)) => false,
        Some(None) => true,
        Some(Some(e)) => return Err(Errno::from_raw(-e)),
    };
    *a = drm_amdgpu_wait_cs_in { handle: busy as u64, ..Default::default() };
    Ok(0)
}
