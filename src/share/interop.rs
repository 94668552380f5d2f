//! External interop: memory and synchronisation shared with other Linux GPU APIs (Vulkan,
//! OpenGL, VA-API, V4L2, RDMA NICs) as **dma-buf** fds and **DRM syncobj** fds.
//!
//! # Memory (`hipImportExternalMemory`, `hipExternalMemoryGetMappedBuffer`)
//!
//! An external memory object owns the user's dma-buf fd (CUDA's rule: after a successful import
//! the runtime owns the fd and closes it in `hipDestroyExternalMemory`; a failed import leaves it
//! untouched). amdgpu dma-bufs are identified with `AMDKFD_IOC_GET_DMABUF_INFO`, as ROCm does.
//! Any other dma-buf (udmabuf, another driver's) makes `GET_DMABUF_INFO` fail with `EINVAL`; ROCm
//! stops there, we take its size from `lseek(SEEK_END)` and let `IMPORT_DMABUF` decide (the
//! kernel imports it as a GTT scatter-gather BO: system memory the GPU reaches). The import is
//! checked once at `hipImportExternalMemory` (an import that is freed at once), so a non-dma-buf
//! fails there.
//!
//! Each mapped buffer is an import of its own: reserve VA → `IMPORT_DMABUF` → `MAP_MEMORY_TO_GPU`
//! on every device, registered as a `MemKind::External` allocation at `VA + offset` (any byte
//! offset). The KFD BO holds its own dma-buf reference, so the buffer stays valid after
//! `hipDestroyExternalMemory` until `hipFree`, and the producer's memory is never freed by us.
//!
//! # Semaphores (`hipImportExternalSemaphore`, `hipSignal/WaitExternalSemaphoresAsync`)
//!
//! Stock HIP has none on Linux; ours are DRM syncobjs, imported with
//! `DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE` on the first device's render node (one DRM file, so one
//! `SYNCOBJ_TIMELINE_WAIT` can cover them all). `OpaqueFd` is a binary syncobj, `TimelineSemaphoreFd`
//! a timeline one.
//!
//! * **Wait**: the stream gets an SDMA `POLL_REGMEM` on a zeroed signal word (pinned system
//!   memory mapped on every GPU); the process's one syncobj waiter thread (`hipkfd-syncobj`)
//!   sleeps in `SYNCOBJ_TIMELINE_WAIT(WAIT_FOR_SUBMIT)` on every pending wait plus a private
//!   "wake" syncobj (signalled when a wait is added), and writes 1 to the word once the syncobj
//!   is signalled (binary) or reaches `params.fence.value` (timeline). The host thread never
//!   blocks, only the stream's queue waits, and the stream gets a queue of its own for that (see
//!   `Runtime::stream_detach`), so streams that shared its queue keep running. A binary wait
//!   consumes the signal (`SYNCOBJ_RESET`), as CUDA and Vulkan specify.
//! * **Signal**: a host function of the stream (`Runtime::stream_host_func`): once all earlier
//!   work is done, the completion thread does `SYNCOBJ_SIGNAL` (binary) or
//!   `SYNCOBJ_TIMELINE_SIGNAL(value)` (timeline), and the stream's later work,
//!   `hipStreamSynchronize` and `hipStreamQuery` wait for that (CUDA: the signal is an operation
//!   of the stream; when the signal came after the stream's fence only, a synchronised stream
//!   could still have its signal to come, and a process killed then never gave it).
//! * **Destroy while a stream waits**: `hipDestroyExternalSemaphore` releases the pending waits
//!   on it at once (their words are written, the streams go on as if it had been signalled; no
//!   hang, no crash), closes the fd, and destroys the syncobj handle; signals already queued on a
//!   stream still happen (the waiter of the other API may rely on them).
//! * **The signalling process dies** (killed while a stream here waits on its syncobj): nothing
//!   signals the syncobj any more, and the wait stays pending, as CUDA's does (a syncobj has no
//!   owner process whose death would signal it). Other streams keep running (the waiting stream
//!   has a queue of its own), `hipStreamQuery` on the waiting stream says `hipErrorNotReady`;
//!   what waits for every stream waits for it too (`hipStreamSynchronize` of it,
//!   `hipDeviceSynchronize`, `hipFree`: CUDA's implicit synchronisation), so free memory after
//!   releasing the wait; `hipDestroyExternalSemaphore` releases the
//!   wait (above); `hipStreamDestroy` of a stream held by a pending wait returns at once (CUDA's
//!   rule: the stream's resources go once its work is done, here once the wait is released or
//!   the process ends); the process exits cleanly with the wait still pending.
//!
//! Layer `share`: may call `mem`, `core`, `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::{Allocation, DmabufInfo, MemKind};
use crate::core::runtime::{runtime, Runtime};
use crate::core::signal::Signal;
use crate::core::stream::Stream;
use crate::core::wait::{Polling, WaitPolicy};
use kfd_ioctl::drm::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
use kfd_ioctl::sdma;
use nix::errno::Errno;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// An imported dma-buf (`hipExternalMemory_t`).
#[derive(Debug)]
pub struct ExternalMemory {
    fd: OwnedFd,
    info: DmabufInfo,
    /// The size the user declared (bytes, ≤ the dma-buf's).
    pub size: u64,
    /// The device that imported it (owner of a foreign dma-buf's mappings).
    dev: usize,
}

/// An imported DRM syncobj (`hipExternalSemaphore_t`).
#[derive(Debug)]
pub struct ExternalSemaphore {
    /// The user's fd; taken (closed) by destroy.
    fd: Mutex<Option<OwnedFd>>,
    /// Syncobj handle in the first device's render node file.
    handle: u32,
    pub timeline: bool,
    destroyed: AtomicBool,
}

impl ExternalSemaphore {
    /// Whether `hipDestroyExternalSemaphore` destroyed it (an object still held, e.g. by a graph
    /// node, outlives its handle).
    pub fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }
}

impl Drop for ExternalSemaphore {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            let _ = rt.devices[0].render.syncobj_destroy(self.handle);
        }
    }
}

/// One pending `hipWaitExternalSemaphoresAsync` on one semaphore.
struct WaitJob {
    sem: Arc<ExternalSemaphore>,
    /// Timeline point; 0 for a binary syncobj.
    point: u64,
    /// The word the stream's POLL_REGMEM waits on.
    word: Signal,
    /// The waiting stream (for [`Runtime::ext_sem_wait_pending`]).
    stream: Weak<Stream>,
    /// The stream's wait policy when the wait was queued ([`Runtime::stream_wait_policy`]):
    /// `Spin` or `Yield` make the waiter thread poll instead of sleeping ([`waiter_thread`]).
    policy: WaitPolicy,
}

/// The syncobj waiter thread's state.
struct Waiter {
    jobs: Mutex<Vec<WaitJob>>,
    /// Private syncobj signalled to make the thread look at `jobs` again.
    wake: u32,
}

/// Process-wide interop state: the handles given out.
#[derive(Default)]
struct Objects {
    mems: HashMap<usize, Arc<ExternalMemory>>,
    sems: HashMap<usize, Arc<ExternalSemaphore>>,
}

fn objects() -> &'static Mutex<Objects> {
    static O: OnceLock<Mutex<Objects>> = OnceLock::new();
    O.get_or_init(Default::default)
}

static WAITER: OnceLock<Result<Waiter, hipError_t>> = OnceLock::new();

fn now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// What a semaphore waits for: a point of a timeline, or (0) a binary signal.
fn wait_point(sem: &ExternalSemaphore, value: u64) -> u64 {
    if sem.timeline {
        value
    } else {
        0
    }
}

impl Runtime {
    // ---- memory ----------------------------------------------------------------------------

    /// `hipImportExternalMemory` of a dma-buf fd of at least `size` bytes, on device `dev`. On
    /// success the object owns `fd`; on failure `fd` is untouched. Errors: `hipErrorInvalidValue`
    /// (not a dma-buf, or smaller than `size`), `hipErrorOutOfMemory`.
    pub fn ext_mem_import(&self, fd: RawFd, size: u64, dev: usize) -> Result<usize, hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        // SAFETY: fcntl(F_GETFD) on a caller's fd number only asks whether it is open.
        if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return Err(inv);
        }
        let info = self.dmabuf_info(fd)?;
        if size > info.size {
            return Err(inv);
        }
        if info.foreign {
            // Whether the kernel takes it at all: one import, freed at once.
            let bo = self.dmabuf_import(fd, &info, dev)?;
            self.bo_free(&bo);
        }
        // SAFETY: the import succeeded: CUDA's rule hands the fd to us; nobody else closes it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let m = Arc::new(ExternalMemory { fd, info, size, dev });
        let h = Arc::as_ptr(&m) as usize;
        objects().lock().mems.insert(h, m);
        crate::core::log::hipkfd_log!(
            "hipImportExternalMemory: {} dma-buf of {} bytes ({})",
            if info.foreign { "foreign" } else { "amdgpu" },
            info.size,
            size
        );
        Ok(h)
    }

    /// The external memory object behind a handle. Errors: `hipErrorInvalidValue`.
    pub fn ext_mem(&self, h: usize) -> Result<Arc<ExternalMemory>, hipError_t> {
        objects().lock().mems.get(&h).cloned().ok_or(hipError_t::hipErrorInvalidValue)
    }

    /// `hipExternalMemoryGetMappedBuffer`: `size` bytes at byte `offset` of `m`, mapped on every
    /// device → the device pointer (an allocation of its own, freed with `hipFree`). Errors:
    /// `hipErrorInvalidValue` (`size` 0, `offset + size` past the object), `hipErrorOutOfMemory`.
    pub fn ext_mem_map(&self, m: &ExternalMemory, offset: u64, size: u64) -> Result<u64, hipError_t> {
        let end = offset.checked_add(size).ok_or(hipError_t::hipErrorInvalidValue)?;
        if size == 0 || end > m.size {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let bo = self.dmabuf_import(m.fd.as_raw_fd(), &m.info, m.dev)?;
        let p = bo.va + offset;
        self.allocs.insert(Allocation::with_bo_at(p, size, MemKind::External, bo));
        crate::core::log::hipkfd_log!("hipExternalMemoryGetMappedBuffer: {size} bytes at {p:#x}");
        Ok(p)
    }

    /// `hipDestroyExternalMemory`: forgets the object and closes its fd; mapped buffers stay
    /// valid until `hipFree`. Errors: `hipErrorInvalidValue` (unknown or destroyed).
    pub fn ext_mem_destroy(&self, h: usize) -> Result<(), hipError_t> {
        let m = objects().lock().mems.remove(&h).ok_or(hipError_t::hipErrorInvalidValue)?;
        drop(m);
        Ok(())
    }

    // ---- semaphores ------------------------------------------------------------------------

    /// `hipImportExternalSemaphore` of a syncobj fd (`timeline`: a timeline semaphore). On
    /// success the object owns `fd`. Errors: `hipErrorInvalidValue` (not a syncobj fd).
    pub fn ext_sem_import(&self, fd: RawFd, timeline: bool) -> Result<usize, hipError_t> {
        if fd < 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let handle = self.devices[0].render.syncobj_fd_to_handle(fd).map_err(|e| {
            crate::core::log::hipkfd_log!("SYNCOBJ_FD_TO_HANDLE: {e}");
            hipError_t::hipErrorInvalidValue
        })?;
        // SAFETY: the import succeeded, so the fd is ours now (CUDA's rule).
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let s = Arc::new(ExternalSemaphore {
            fd: Mutex::new(Some(fd)),
            handle,
            timeline,
            destroyed: AtomicBool::new(false),
        });
        let h = Arc::as_ptr(&s) as usize;
        objects().lock().sems.insert(h, s);
        Ok(h)
    }

    /// The semaphore behind a handle. Errors: `hipErrorInvalidValue`.
    pub fn ext_sem(&self, h: usize) -> Result<Arc<ExternalSemaphore>, hipError_t> {
        objects().lock().sems.get(&h).cloned().ok_or(hipError_t::hipErrorInvalidValue)
    }

    /// `hipDestroyExternalSemaphore`: releases the streams still waiting on it (as if it had been
    /// signalled), closes the fd; the syncobj handle goes when the last queued signal has run.
    /// Errors: `hipErrorInvalidValue` (unknown or destroyed).
    pub fn ext_sem_destroy(&self, h: usize) -> Result<(), hipError_t> {
        let s = objects().lock().sems.remove(&h).ok_or(hipError_t::hipErrorInvalidValue)?;
        s.destroyed.store(true, Ordering::Release);
        if let Some(Ok(w)) = WAITER.get() {
            let mut jobs = w.jobs.lock();
            jobs.retain(|j| {
                let mine = Arc::ptr_eq(&j.sem, &s);
                if mine {
                    crate::core::log::hipkfd_log!(
                        "hipDestroyExternalSemaphore: releasing a stream still waiting on it"
                    );
                    j.word.store(1);
                }
                !mine
            });
            drop(jobs);
            self.waiter_kick(w);
        }
        drop(s.fd.lock().take());
        Ok(())
    }

    /// `hipSignalExternalSemaphoresAsync`: once the work queued on `s` so far is done, each
    /// `sems[i]` is signalled (binary) or moved to `values[i]` (timeline); work queued on `s`
    /// later, and `hipStreamSynchronize`, come after the signals. Errors: `hipErrorOutOfMemory`
    /// (signal word, queue).
    pub fn ext_sem_signal(
        &self,
        sems: &[Arc<ExternalSemaphore>],
        values: &[u64],
        s: &Arc<Stream>,
    ) -> Result<(), hipError_t> {
        let jobs: Vec<(Arc<ExternalSemaphore>, u64)> = sems.iter().cloned().zip(values.iter().copied()).collect();
        self.stream_host_func(
            s,
            Box::new(move || {
                let Ok(rt) = runtime() else { return };
                let render = &rt.devices[0].render;
                for (sem, v) in jobs {
                    let r = if sem.timeline {
                        render.syncobj_timeline_signal(&[sem.handle], &[v])
                    } else {
                        render.syncobj_signal_or_reset(&[sem.handle], false)
                    };
                    if let Err(e) = r {
                        crate::core::log::hipkfd_log!("signalling external semaphore: {e}");
                    }
                }
            }),
        )
    }

    /// `hipWaitExternalSemaphoresAsync`: work queued on `s` after this waits, on the GPU, until
    /// each `sems[i]` is signalled (binary) or reaches `values[i]` (timeline). Never blocks.
    /// Errors: `hipErrorOutOfMemory` (signal words, queue).
    pub fn ext_sem_wait(
        &self,
        sems: &[Arc<ExternalSemaphore>],
        values: &[u64],
        s: &Arc<Stream>,
    ) -> Result<(), hipError_t> {
        let w = self.waiter()?;
        let mut words = Vec::with_capacity(sems.len());
        for _ in sems {
            match self.signal_alloc() {
                Ok(x) => words.push(x),
                Err(e) => {
                    words.into_iter().for_each(|x| self.signal_free(x));
                    return Err(e);
                }
            }
        }
        let submitted = self.stream_detach(s).and_then(|_| {
            self.stream_submit(s, &[], |pk| {
                // Each word is fresh (0) and written 1 once by the waiter thread: a flag, not a
                // counter, so a plain 32-bit poll is exact (timeline values are u64 in the kernel).
                words.iter().try_for_each(|x| sdma::poll_regmem_ge(pk, x.addr, 1, u32::MAX))
            })
        });
        let f = match submitted {
            Ok(f) => f,
            Err(e) => {
                words.into_iter().for_each(|x| self.signal_free(x));
                return Err(e);
            }
        };
        let policy = self.stream_wait_policy(s);
        let mut jobs = w.jobs.lock();
        for ((sem, v), word) in sems.iter().zip(values).zip(&words) {
            if sem.destroyed.load(Ordering::Acquire) {
                word.store(1);
            } else {
                jobs.push(WaitJob {
                    sem: sem.clone(),
                    point: wait_point(sem, *v),
                    word: *word,
                    stream: Arc::downgrade(s),
                    policy,
                });
            }
        }
        drop(jobs);
        for word in words {
            self.defer_free(f.clone(), word);
        }
        self.waiter_kick(w);
        Ok(())
    }

    /// Whether stream `s` still waits on an external semaphore (`hipStreamDestroy` then returns
    /// without waiting: the signaller may never signal, e.g. when its process died).
    pub fn ext_sem_wait_pending(&self, s: &Arc<Stream>) -> bool {
        match WAITER.get() {
            Some(Ok(w)) => w.jobs.lock().iter().any(|j| std::ptr::eq(j.stream.as_ptr(), Arc::as_ptr(s))),
            _ => false,
        }
    }

    fn waiter_kick(&self, w: &Waiter) {
        if let Err(e) = self.devices[0].render.syncobj_signal_or_reset(&[w.wake], false) {
            crate::core::log::hipkfd_log!("SYNCOBJ_SIGNAL of the waiter's wake syncobj: {e}");
        }
    }

    /// The syncobj waiter thread (started once). Errors: `hipErrorOutOfMemory`.
    fn waiter(&self) -> Result<&'static Waiter, hipError_t> {
        WAITER
            .get_or_init(|| {
                let wake = self.devices[0].render.syncobj_create(0).map_err(|e| {
                    crate::core::log::hipkfd_log!("SYNCOBJ_CREATE: {e}");
                    hipError_t::hipErrorOutOfMemory
                })?;
                std::thread::Builder::new()
                    .name("hipkfd-syncobj".into())
                    .spawn(waiter_thread)
                    .map_err(|_| hipError_t::hipErrorOutOfMemory)?;
                Ok(Waiter { jobs: Mutex::new(vec![]), wake })
            })
            .as_ref()
            .map_err(|e| *e)
    }
}

/// How long a polling (`Spin`, `Yield`) waiter thread waits between two looks at its syncobjs:
/// each look is one `SYNCOBJ_TIMELINE_WAIT` with timeout 0 (a syncobj has no word the host can
/// read), so this bounds the crossings of a polled wait to one per this.
const SPIN_LOOK: std::time::Duration = std::time::Duration::from_micros(2);

/// How the waiter thread waits for the pending `jobs`: it polls (`Spin` or `Yield`) while any of
/// them was queued on a stream whose wait policy is `Spin` or `Yield` (the user asked for the
/// lowest latency, and a sleeping thread's wake-up is the largest part of a signal's latency);
/// else it sleeps (`Auto`, `BlockingSync`: no crossing while nothing is signalled).
fn poll_policy(jobs: &[WaitJob]) -> Option<WaitPolicy> {
    let mut p = None;
    for j in jobs {
        match j.policy {
            WaitPolicy::Spin => return Some(WaitPolicy::Spin),
            WaitPolicy::Yield => p = Some(WaitPolicy::Yield),
            _ => {}
        }
    }
    p
}

/// The syncobj waiter: sleeps in one `SYNCOBJ_TIMELINE_WAIT(WAIT_FOR_SUBMIT)` on the wake syncobj
/// and every pending wait (wait-any, 1 s at a time), then releases the waits that are satisfied.
/// While a pending wait's stream waits by `Spin` or `Yield` ([`poll_policy`]) it polls instead:
/// one wait-any with timeout 0 on the pending waits, then [`SPIN_LOOK`] of spinning (`Spin`) or
/// yielding (`Yield`) before the next, and a new wait is seen at the next look.
fn waiter_thread() {
    let w = loop {
        match WAITER.get() {
            Some(Ok(w)) => break w,
            Some(Err(_)) => return,
            None => std::thread::yield_now(),
        }
    };
    let Ok(rt) = runtime() else { return };
    let render = &rt.devices[0].render;
    let mut polling: Option<Polling> = None;
    loop {
        let poll = poll_policy(&w.jobs.lock());
        if poll.is_none() {
            polling = None;
            // Reset before the snapshot: a wait queued after it kicks the wake syncobj again.
            let _ = render.syncobj_signal_or_reset(&[w.wake], true);
        }
        let (mut handles, mut points) = if poll.is_none() { (vec![w.wake], vec![0u64]) } else { (vec![], vec![]) };
        // Index of the first pending wait in `handles` (after the wake syncobj when sleeping).
        let base = handles.len();
        let pending: Vec<Arc<ExternalSemaphore>> = {
            let jobs = w.jobs.lock();
            for j in jobs.iter() {
                handles.push(j.sem.handle);
                points.push(j.point);
            }
            jobs.iter().map(|j| j.sem.clone()).collect()
        };
        if handles.is_empty() {
            // The polled waits were released meanwhile (destroy): sleep again.
            continue;
        }
        let deadline = if poll.is_some() { 0 } else { now_ns() + 1_000_000_000 };
        let r = render.syncobj_timeline_wait(&handles, &points, deadline, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
        drop(pending);
        let first = match r {
            Ok(i) if i as usize >= base && (i as usize) < handles.len() => {
                Some((handles[i as usize], points[i as usize]))
            }
            _ => None,
        };
        match r {
            Ok(_) => {}
            Err(Errno::ETIME) if poll.is_some() => {
                // Nothing signalled: the next look after SPIN_LOOK of polling as an `Auto` wait
                // does for `Spin` (it spins while fewer threads poll than there are CPUs, and
                // yields every AUTO_SPIN even then: this thread must not keep the thread that
                // signals, or an engine the host runs, off a CPU), between yields for `Yield`.
                let p = polling.get_or_insert_with(Polling::enter);
                let step = if poll == Some(WaitPolicy::Spin) { WaitPolicy::Auto } else { WaitPolicy::Yield };
                let t = std::time::Instant::now();
                while t.elapsed() < SPIN_LOOK {
                    p.step(step);
                }
                continue;
            }
            Err(Errno::ETIME) => {}
            Err(e) => {
                // A handle destroyed between the snapshot and the wait (ENOENT): look again.
                crate::core::log::hipkfd_log!("SYNCOBJ_TIMELINE_WAIT: {e}");
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
        let mut jobs = w.jobs.lock();
        // The one the wait named is released without asking again (one ioctl less on the
        // signal-to-GPU path); the others are polled.
        let mut first = first;
        jobs.retain(|j| {
            let named = first == Some((j.sem.handle, j.point));
            if named {
                first = None;
            }
            let ready = named
                || render
                    .syncobj_timeline_wait(&[j.sem.handle], &[j.point], 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)
                    .is_ok();
            if ready {
                if !j.sem.timeline {
                    // A binary wait consumes the signal (before any other job on it is polled),
                    // and before the stream goes on: a signal the stream queues next must not
                    // be the one reset.
                    let _ = render.syncobj_signal_or_reset(&[j.sem.handle], true);
                }
                j.word.store(1);
            }
            !ready
        });
    }
}
