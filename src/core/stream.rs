//! Streams: ordered work on one device, run by an SDMA queue of that device.
//!
//! Each device has a null stream with a queue of its own, and a small pool of queues that the
//! other streams share round-robin (a queue is FIFO, so sharing only adds order; waits always
//! name work already queued, so it cannot deadlock). Legacy null-stream semantics: work on the
//! null stream first waits (POLL_REGMEM) for the last work of every blocking stream of its
//! device, and work on a blocking stream first waits for the null stream's last work.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::queue::SdmaQueue;
use crate::core::runtime::Runtime;
use crate::core::wait::WaitPolicy;
use kfd_ioctl::sdma;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Weak};

/// `hipStreamNonBlocking`.
pub const STREAM_NON_BLOCKING: u32 = 0x1;
/// Queues shared by the non-null streams of a device.
pub const QUEUES_PER_DEVICE: usize = 4;
/// `hipSyncPolicyAuto`: the synchronization policy a stream starts with.
pub const SYNC_POLICY_AUTO: i32 = 1;

/// The next stream id (`hipStreamGetId`): ids start at 1 and are never reused in a process.
static NEXT_STREAM_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The KFD `queue_priority` of the AQL queue that runs the kernels of streams of HIP priority
/// `priority` (-1 high, 0 normal, 1 low; `hipDeviceGetStreamPriorityRange`): 11, 7 and 0, as
/// clr's streams get them (clr `Device::acquireQueue` → ROCr `hsa_amd_queue_set_priority`:
/// HIGH, NORMAL, MINIMUM → libhsakmt's `priority_map`). The KFD gives the CP pipe priority by
/// it (`pipe_priority_map`: high, medium, low).
pub fn aql_priority(priority: i32) -> u32 {
    match priority {
        p if p < 0 => 11,
        0 => 7,
        _ => 0,
    }
}

/// The pool of streams of HIP priority `priority`: 0 high, 1 normal, 2 low.
fn pool_of(priority: i32) -> usize {
    (priority.signum() + 1) as usize
}

/// A point in a queue: done when the queue's signal reaches `seq`.
#[derive(Debug, Clone)]
pub struct Fence {
    pub queue: Arc<SdmaQueue>,
    pub seq: u64,
}

impl Fence {
    pub fn done(&self) -> bool {
        self.queue.done(self.seq)
    }
}

#[derive(Debug)]
pub struct Stream {
    /// HIP ordinal of the stream's device.
    pub dev: usize,
    /// `hipStreamDefault` / `hipStreamNonBlocking`.
    pub flags: u32,
    pub priority: i32,
    pub is_null: bool,
    /// The stream's id (`hipStreamGetId`; clr `Stream::GetStreamId`): unique in the process.
    pub id: u64,
    /// The `hipSynchronizationPolicy` the program set (`hipStreamSetAttribute`), initially
    /// [`SYNC_POLICY_AUTO`]: how `hipStreamSynchronize` waits ([`Runtime::stream_wait_policy`]).
    pub sync_policy: std::sync::atomic::AtomicI32,
    /// The queue the stream submits to: a shared pool queue, or one of its own after an
    /// external semaphore wait ([`Runtime::stream_detach`]).
    queue: Mutex<Arc<SdmaQueue>>,
    own_queue: std::sync::atomic::AtomicBool,
    /// The stream's last submission.
    last: Mutex<Option<Fence>>,
    /// The CU mask given to `hipExtStreamCreateWithCUMask` (32 CUs a word), if any. Recorded
    /// only: SDMA queues have no CUs.
    pub cu_mask: std::sync::OnceLock<Vec<u32>>,
    /// The capture the stream takes part in, if any: an `Option<StreamCapture>` of src/graph.
    pub capture: crate::core::runtime::Slot,
    /// Streams on other devices that run this stream's work on their memory
    /// ([`Runtime::stream_proxy`]); they go with it.
    proxies: Mutex<Vec<Arc<Stream>>>,
    /// The latest fence of each queue the stream waited for through `hipStreamWaitEvent`: its
    /// later work runs after them (what `hipMemPoolReuseFollowEventDependencies` follows).
    waited: Mutex<Vec<Fence>>,
}

impl Stream {
    /// The fence of the stream's last submission, if any.
    pub fn last_fence(&self) -> Option<Fence> {
        self.last.lock().clone()
    }

    fn new(dev: usize, flags: u32, priority: i32, is_null: bool, queue: Arc<SdmaQueue>) -> Stream {
        let own_queue = std::sync::atomic::AtomicBool::new(is_null);
        Stream {
            dev,
            flags,
            priority,
            is_null,
            id: NEXT_STREAM_ID.fetch_add(1, Ordering::Relaxed),
            sync_policy: std::sync::atomic::AtomicI32::new(SYNC_POLICY_AUTO),
            queue: Mutex::new(queue),
            own_queue,
            last: Mutex::new(None),
            cu_mask: Default::default(),
            capture: Default::default(),
            proxies: Mutex::new(Vec::new()),
            waited: Mutex::new(Vec::new()),
        }
    }

    /// Whether the stream's later work runs after `f`: it waited for `f`, or for later work
    /// of `f`'s queue, through `hipStreamWaitEvent`.
    pub fn waited_for(&self, f: &Fence) -> bool {
        self.waited.lock().iter().any(|w| Arc::ptr_eq(&w.queue, &f.queue) && w.seq >= f.seq)
    }

    fn note_waited(&self, f: Fence) {
        let mut w = self.waited.lock();
        match w.iter_mut().find(|w| Arc::ptr_eq(&w.queue, &f.queue)) {
            Some(w) => w.seq = w.seq.max(f.seq),
            None => w.push(f),
        }
    }

    /// Whether all work submitted to the stream so far is done.
    pub fn idle(&self) -> bool {
        self.last_fence().is_none_or(|f| f.done())
    }

    fn blocking(&self) -> bool {
        self.flags & STREAM_NON_BLOCKING == 0
    }
}

/// Per-device stream state.
#[derive(Debug, Default)]
pub struct DeviceStreams {
    pub null: Mutex<Option<Arc<Stream>>>,
    /// The queues streams share, up to [`QUEUES_PER_DEVICE`] per priority ([`pool_of`]), as clr
    /// keeps a pool of hardware queues per priority; and the next of each to hand out.
    pub pools: Mutex<[Vec<Arc<SdmaQueue>>; 3]>,
    pub next: Mutex<[usize; 3]>,
    /// Every live non-null stream of the device.
    pub streams: Mutex<Vec<Weak<Stream>>>,
    /// The live proxies of other devices' null streams on this device ([`Runtime::stream_proxy`]),
    /// also in `streams`: their work is null-stream work of this device (legacy default-stream
    /// work on this device's memory), which its blocking streams wait for.
    pub proxies: Mutex<Vec<Weak<Stream>>>,
    /// Queues of their own given to streams by [`Runtime::stream_detach`], with their stream;
    /// reused once that stream is gone and the queue idle.
    pub private: Mutex<Vec<(Weak<Stream>, Arc<SdmaQueue>)>>,
    /// Set when making a queue for `private` failed: the KFD has no SDMA queue left for the
    /// device, and queues are never destroyed, so later detaches take spares only.
    pub no_more_queues: std::sync::atomic::AtomicBool,
    /// Submissions to the device's streams so far (counted after each sets its stream's last
    /// fence), and a value of it at which [`Runtime::device_sync`] found every one done: while
    /// the two are equal, the device has nothing to wait for and `device_sync` (every `hipFree`
    /// makes one per device) takes no lock.
    submitted: AtomicU64,
    idle_at: AtomicU64,
}

impl Runtime {
    /// The null stream of device `dev` (created with its queue on first use).
    pub fn null_stream(&self, dev: usize) -> Result<Arc<Stream>, hipError_t> {
        let mut n = self.streams[dev].null.lock();
        if let Some(s) = &*n {
            return Ok(s.clone());
        }
        let q = Arc::new(self.queue_create(dev)?);
        let s = Arc::new(Stream::new(dev, 0, 0, true, q));
        *n = Some(s.clone());
        Ok(s)
    }

    /// A queue for streams of HIP priority `priority` on device `dev` ([`aql_priority`]).
    /// Errors: `hipErrorOutOfMemory`.
    fn queue_create_for(&self, dev: usize, priority: i32) -> Result<SdmaQueue, hipError_t> {
        let mut q = self.queue_create(dev)?;
        q.aql_priority = aql_priority(priority);
        Ok(q)
    }

    /// The next pool queue of device `dev` for streams of HIP priority `priority` (round
    /// robin, made on first use). Errors: `hipErrorOutOfMemory`.
    fn pool_queue(&self, dev: usize, priority: i32) -> Result<Arc<SdmaQueue>, hipError_t> {
        let ds = &self.streams[dev];
        let k = pool_of(priority);
        let mut pools = ds.pools.lock();
        let pool = &mut pools[k];
        let mut next = ds.next.lock();
        let i = next[k] % QUEUES_PER_DEVICE;
        if i >= pool.len() {
            pool.push(Arc::new(self.queue_create_for(dev, priority)?));
        }
        next[k] = next[k].wrapping_add(1);
        Ok(pool[i].clone())
    }

    /// Creates a stream on device `dev`.
    pub fn stream_create(&self, dev: usize, flags: u32, priority: i32) -> Result<Arc<Stream>, hipError_t> {
        let ds = &self.streams[dev];
        let queue = self.pool_queue(dev, priority)?;
        let s = Arc::new(Stream::new(dev, flags, priority, false, queue));
        let mut all = ds.streams.lock();
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&s));
        Ok(s)
    }

    /// The fences a submission to `s` must wait for first (null-stream semantics, and the
    /// `hipMemcpyPeer` copies still pending on its device: `PeerState::pending_for`).
    pub(crate) fn implicit_waits(&self, s: &Stream) -> Vec<Fence> {
        let mut v = self.null_stream_waits(s);
        v.extend(self.peer().pending_for(s.dev));
        v
    }

    /// Legacy default-stream order on `s`'s device: the null stream waits for every blocking
    /// stream (proxies included); a blocking stream waits for the null stream's work and for the
    /// work of other devices' null streams on this device's memory (their proxies here), which
    /// clr runs on this device's null stream.
    fn null_stream_waits(&self, s: &Stream) -> Vec<Fence> {
        let ds = &self.streams[s.dev];
        if s.is_null {
            self.blocking_fences(s.dev)
        } else if s.blocking() {
            let null = ds.null.lock().clone();
            let mut v: Vec<Fence> = null.and_then(|n| n.last_fence()).into_iter().collect();
            let mut proxies = ds.proxies.lock();
            if !proxies.is_empty() {
                proxies.retain(|w| w.strong_count() > 0);
                let others = proxies.iter().filter_map(|w| w.upgrade()).filter(|p| !std::ptr::eq(&**p, s));
                v.extend(others.filter_map(|p| p.last_fence()).filter(|f| !f.done()));
            }
            v
        } else {
            vec![]
        }
    }

    /// The last work of each blocking non-null stream of device `dev`: what work on `dev`'s null
    /// stream waits for.
    pub(crate) fn blocking_fences(&self, dev: usize) -> Vec<Fence> {
        self.device_streams(dev).iter().filter(|o| o.blocking()).filter_map(|o| o.last_fence()).collect()
    }

    /// The live user streams of device `dev`, as they are now. The device's stream list is
    /// locked only to copy it: a stream's fence is read after (its lock is held through a whole
    /// submission, and waiting for it under the list's lock would make every `hipFree`,
    /// `hipDeviceSynchronize`, stream creation and blocking-stream submission of the device wait
    /// for each submission in flight).
    fn device_streams(&self, dev: usize) -> Vec<Arc<Stream>> {
        self.streams[dev].streams.lock().iter().filter_map(|w| w.upgrade()).collect()
    }

    /// Submits work to stream `s` after `waits` (and the implicit null-stream waits) → its fence.
    pub fn stream_submit(
        &self,
        s: &Stream,
        waits: &[Fence],
        build: impl FnOnce(&mut Vec<u32>) -> Result<(), sdma::EncodeError>,
    ) -> Result<Fence, hipError_t> {
        let mut all = self.implicit_waits(s);
        all.extend(waits.iter().cloned());
        let mut last = s.last.lock();
        self.stream_submit_locked(s, &mut last, all, build)
    }

    /// The body of [`stream_submit`](Self::stream_submit), with the stream's `last` lock held by
    /// the caller (`last` is its guard) and the waits (`all`, the implicit ones included)
    /// computed before that lock was taken.
    pub(crate) fn stream_submit_locked(
        &self,
        s: &Stream,
        last: &mut Option<Fence>,
        mut all: Vec<Fence>,
        build: impl FnOnce(&mut Vec<u32>) -> Result<(), sdma::EncodeError>,
    ) -> Result<Fence, hipError_t> {
        let q = s.queue.lock().clone();
        // After a move to a queue of its own, the stream's earlier work is on the old queue.
        all.extend(last.iter().filter(|l| !Arc::ptr_eq(&l.queue, &q)).cloned());
        let seq = self.queue_submit(&q, |pk| {
            for f in &all {
                if !Arc::ptr_eq(&f.queue, &q) && !f.done() {
                    sdma::poll_seq_ge(pk, f.queue.signal.addr, f.seq)?;
                }
            }
            build(pk)
        })?;
        let f = Fence { queue: q, seq };
        *last = Some(f.clone());
        self.streams[s.dev].submitted.fetch_add(1, Ordering::Release);
        Ok(f)
    }

    /// Locks stream `s` for a submission made of several steps (a kernel launch: src/kernels/aql.rs);
    /// the guard's `Option<Fence>` is the stream's last submission, and the queue the stream
    /// submits to comes with it.
    pub(crate) fn stream_lock<'a>(
        &self,
        s: &'a Stream,
    ) -> (parking_lot::MutexGuard<'a, Option<Fence>>, Arc<SdmaQueue>) {
        let last = s.last.lock();
        let q = s.queue.lock().clone();
        (last, q)
    }

    /// `s`'s proxy on device `dev` (made on first use): a blocking stream of `dev` that runs the
    /// work of `s` on `dev`'s memory (copies and fills of memory `s`'s device does not map), each
    /// batch after a GPU wait for `s` (src/core/copy.rs, `exec_stream`). Being blocking, it keeps the
    /// order clr gives such work by running it on `dev`'s null stream (hip_memory.cpp
    /// `ihipMemcpyCommand`): after `dev`'s null-stream work so far, and before its later
    /// null-stream work. The proxy of a null stream is also waited for by `dev`'s blocking
    /// streams (`DeviceStreams::proxies`): legacy default-stream work on `dev`'s memory is
    /// `dev`'s legacy work. A user stream's proxy is not: that work belongs to the user's
    /// stream, which `dev`'s blocking streams are not ordered with (a blocking stream of `dev`
    /// may signal the semaphore that stream waits for). It has a queue of its own
    /// when `s` has (the null stream, or after an external-semaphore wait or a host function), so
    /// that a long wait on `s` holds no other stream's queue. Errors: `hipErrorOutOfMemory`.
    pub fn stream_proxy(&self, s: &Arc<Stream>, dev: usize) -> Result<Arc<Stream>, hipError_t> {
        let p = {
            let mut proxies = s.proxies.lock();
            match proxies.iter().find(|p| p.dev == dev) {
                Some(p) => p.clone(),
                None => {
                    let p = self.stream_create(dev, 0, s.priority)?;
                    if s.is_null {
                        self.streams[dev].proxies.lock().push(Arc::downgrade(&p));
                    }
                    proxies.push(p.clone());
                    p
                }
            }
        };
        if s.own_queue.load(Ordering::Acquire) {
            self.stream_detach(&p)?;
        }
        Ok(p)
    }

    /// Gives stream `s` a queue of its own (once; the null stream has one already), so that a
    /// wait that may last long (an external semaphore) holds no other stream that shared its
    /// pool queue. Later work waits (POLL_REGMEM) for the work left on the old queue. The queue
    /// is a spare one (its stream gone), a new one, or, when the KFD has no queue left, one
    /// taken back from a live stream that has nothing queued on it (that stream returns to a
    /// pool queue until it needs one of its own again). Errors: `hipErrorOutOfMemory` (every
    /// queue busy).
    pub fn stream_detach(&self, s: &Arc<Stream>) -> Result<(), hipError_t> {
        if s.own_queue.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut private = self.streams[s.dev].private.lock();
        if s.own_queue.load(Ordering::Acquire) {
            return Ok(());
        }
        let spare = private.iter().position(|(w, q)| {
            w.strong_count() == 0 && q.done(q.last_seq()) && q.aql_priority == aql_priority(s.priority)
        });
        let no_more = &self.streams[s.dev].no_more_queues;
        let made = match spare {
            Some(i) => Ok(i),
            None if no_more.load(Ordering::Relaxed) => Err(hipError_t::hipErrorOutOfMemory),
            None => self.queue_create_for(s.dev, s.priority).map(|q| {
                private.push((Weak::new(), Arc::new(q)));
                private.len() - 1
            }),
        };
        let i = match made {
            Ok(i) => i,
            Err(e) => {
                no_more.store(true, Ordering::Relaxed);
                self.reclaim_idle(&private, s).ok_or(e)?
            }
        };
        private[i].0 = Arc::downgrade(s);
        *s.queue.lock() = private[i].1.clone();
        s.own_queue.store(true, Ordering::Release);
        Ok(())
    }

    /// The index in `private` (the device's queues of their own) of one of priority like `s`'s
    /// whose live stream has nothing queued on it and is not submitting: that stream is moved
    /// back to a pool queue. None when every such queue is busy (or no pool queue can be had).
    fn reclaim_idle(&self, private: &[(Weak<Stream>, Arc<SdmaQueue>)], s: &Arc<Stream>) -> Option<usize> {
        private.iter().position(|(w, q)| {
            let Some(o) = w.upgrade().filter(|o| !Arc::ptr_eq(o, s)) else { return false };
            // Holding `last` keeps `o` from submitting; one mid-submission is passed over.
            let Some(_last) = o.last.try_lock() else { return false };
            if q.aql_priority != aql_priority(s.priority) || !q.done(q.last_seq()) {
                return false;
            }
            let Ok(pool) = self.pool_queue(o.dev, o.priority) else { return false };
            *o.queue.lock() = pool;
            o.own_queue.store(false, Ordering::Release);
            crate::core::log::hipkfd_log!("device {}: an idle stream's own SDMA queue goes to another stream", s.dev);
            true
        })
    }

    /// `hipLaunchHostFunc` / `hipStreamAddCallback`: runs `job` on the completion thread
    /// (`after_fence`) once all work queued on `s` so far is done; work queued on `s` later
    /// waits until `job` has returned: the stream polls (SDMA `POLL_REGMEM`) a fresh signal
    /// word that the completion thread writes after `job`. The stream gets a queue of its own
    /// first ([`stream_detach`](Self::stream_detach)), so a slow host function holds no other
    /// stream's GPU work. When the device has no SDMA queue left for that, the stream stays on
    /// its pool queue, as clr's streams share its few hardware queues: the streams sharing it
    /// then wait for the function too, which costs time but cannot deadlock (only the host
    /// releases the poll). Host functions of all streams run one at a time, in the order they were
    /// queued (as clr runs them on one ROCr signal-handler thread).
    /// Errors: `hipErrorOutOfMemory` (signal word, queue).
    pub fn stream_host_func(&self, s: &Arc<Stream>, job: Box<dyn FnOnce() + Send>) -> Result<(), hipError_t> {
        // The completion thread runs jobs in the order they are handed over, each after its
        // fence: so hand them over in queue order. Without this lock, two threads adding host
        // functions to one stream could queue A's poll before B's fence but hand B's job over
        // first, and B's job would wait for A's poll, which waits for A's job behind it.
        static ORDER: Mutex<()> = Mutex::new(());
        let _order = ORDER.lock();
        let word = self.signal_alloc()?;
        let detached = match self.stream_detach(s) {
            Err(hipError_t::hipErrorOutOfMemory) => {
                crate::core::log::hipkfd_log!(
                    "host function: no SDMA queue left on device {}; the stream keeps its pool queue",
                    s.dev
                );
                Ok(())
            }
            r => r,
        };
        let submitted = detached.and_then(|_| {
            let before = self.stream_submit(s, &[], |_| Ok(()))?;
            // The word is fresh (0) and written 1 once: a flag, so a 32-bit poll is exact.
            let after = self.stream_submit(s, &[], |pk| sdma::poll_regmem_ge(pk, word.addr, 1, u32::MAX))?;
            Ok((before, after))
        });
        let (before, after) = match submitted {
            Ok(f) => f,
            Err(e) => {
                // No poll of the word was queued.
                self.signal_free(word);
                return Err(e);
            }
        };
        self.defer_free(after, word);
        self.after_fence(
            before,
            Box::new(move || {
                job();
                word.store(1);
            }),
        );
        Ok(())
    }

    /// Waits for a fence as its queue's device's flags say (src/core/wait.rs). Errors:
    /// `hipErrorIllegalAddress` after a VM fault.
    pub fn fence_wait(&self, f: &Fence) -> Result<(), hipError_t> {
        self.queue_wait(&f.queue, f.seq)
    }

    /// Waits for a fence under `policy`. Errors: `hipErrorIllegalAddress` after a VM fault.
    pub fn fence_wait_with(&self, f: &Fence, policy: WaitPolicy) -> Result<(), hipError_t> {
        self.queue_wait_with(&f.queue, f.seq, policy)
    }

    /// How a host thread waits for `s`: its `hipSynchronizationPolicy` unless that is
    /// `hipSyncPolicyAuto`, else its device's flags (src/core/wait.rs).
    pub fn stream_wait_policy(&self, s: &Stream) -> WaitPolicy {
        WaitPolicy::from_sync_policy(s.sync_policy.load(std::sync::atomic::Ordering::Relaxed))
            .unwrap_or_else(|| self.device_wait_policy(s.dev))
    }

    /// `hipStreamSynchronize`: all work of `s` (for the null stream, also of the blocking
    /// streams), waited for under the stream's policy ([`Runtime::stream_wait_policy`]).
    pub fn stream_sync(&self, s: &Stream) -> Result<(), hipError_t> {
        let policy = self.stream_wait_policy(s);
        for f in self.implicit_waits(s).into_iter().chain(s.last_fence()) {
            self.fence_wait_with(&f, policy)?;
        }
        Ok(())
    }

    /// `hipStreamQuery`: whether all of `s`'s work is done.
    pub fn stream_query(&self, s: &Stream) -> Result<bool, hipError_t> {
        self.check_fault()?;
        Ok(s.idle() && (!s.is_null || self.implicit_waits(s).iter().all(|f| f.done())))
    }

    /// Whether device `dev` has no queued work left: [`device_sync`](Self::device_sync) would
    /// return at once (reads two counters, writes nothing).
    pub fn device_idle(&self, dev: usize) -> bool {
        let ds = &self.streams[dev];
        let n = ds.submitted.load(Ordering::Acquire);
        ds.idle_at.load(Ordering::Acquire) == n
    }

    /// The last fences, not yet done, of every stream of device `dev` (null stream included),
    /// as they are now.
    pub fn device_last_fences(&self, dev: usize) -> Vec<Fence> {
        let null = self.streams[dev].null.lock().clone();
        let mut v: Vec<Fence> =
            self.device_streams(dev).iter().chain(null.iter()).filter_map(|s| s.last_fence()).collect();
        v.retain(|f| !f.done());
        v
    }

    /// `hipDeviceSynchronize`: every stream of device `dev`.
    pub fn device_sync(&self, dev: usize) -> Result<(), hipError_t> {
        let ds = &self.streams[dev];
        // Every submission counted in `n` had set its stream's last fence, which the snapshot
        // below reads (or a later fence of that stream, done only after it).
        let n = ds.submitted.load(Ordering::Acquire);
        if ds.idle_at.load(Ordering::Acquire) == n {
            return Ok(());
        }
        // The last fences as they are now, read before any wait: a fence a stream gets while
        // this thread waits is work submitted after the call, which it must not wait for (16
        // threads each freeing while the others keep submitting would chase each other's newer
        // fences). Per queue only the latest counts: a queue's fences complete in order.
        let mut fences: Vec<Fence> = Vec::new();
        for f in self.device_last_fences(dev) {
            match fences.iter_mut().find(|g| Arc::ptr_eq(&g.queue, &f.queue)) {
                Some(g) => g.seq = g.seq.max(f.seq),
                None => fences.push(f),
            }
        }
        for f in &fences {
            self.fence_wait(f)?;
        }
        ds.idle_at.fetch_max(n, Ordering::Release);
        Ok(())
    }
}

impl Runtime {
    /// `hipStreamWaitEvent`: later work on `s` waits (on the GPU, POLL_REGMEM) for the event's
    /// last record; a never-recorded event is a no-op. IPC events wait for every record of any
    /// process.
    pub fn stream_wait_event(&self, s: &Stream, e: &crate::core::event::Event) -> Result<(), hipError_t> {
        let f = e.fence.lock().clone();
        if let Some(f) = f {
            if !f.done() {
                self.stream_submit(s, std::slice::from_ref(&f), |_| Ok(()))?;
            }
            s.note_waited(f);
        }
        if let Some(p) = e.ipc.get() {
            p.clone().stream_wait(self, s)?;
        }
        Ok(())
    }
}

/// A job for the completion thread: run once the fence is done.
type AfterFence = (Fence, Box<dyn FnOnce() + Send>);

/// The process's completion thread (`hipkfd-waker`), started on first use.
static WAKER: Mutex<Option<mpsc::Sender<AfterFence>>> = Mutex::new(None);

impl Runtime {
    /// Runs `job` on the process's one completion thread once `f` is done (at once after a VM
    /// fault, which ends every wait). Jobs run in the order they were handed over. Used for IPC
    /// event wake-ups (src/share/event_page.rs) and host functions (`stream_host_func`: external semaphore
    /// signals among them, src/share/interop.rs).
    pub fn after_fence(&self, f: Fence, job: Box<dyn FnOnce() + Send>) {
        let mut w = WAKER.lock();
        if w.is_none() {
            let (tx, rx) = mpsc::channel::<AfterFence>();
            let spawned = std::thread::Builder::new().name("hipkfd-waker".into()).spawn(move || {
                for (f, job) in rx {
                    if let Ok(rt) = crate::core::runtime::runtime() {
                        // Polls briefly, then sleeps: a host function behind long work costs
                        // no CPU while it waits (src/core/wait.rs).
                        let _ = rt.fence_wait_with(&f, WaitPolicy::Background);
                    }
                    job();
                }
            });
            if spawned.is_err() {
                // No thread: run it here.
                drop(w);
                let _ = self.fence_wait(&f);
                job();
                return;
            }
            *w = Some(tx);
        }
        let _ = w.as_ref().expect("set above").send((f, job));
    }
}

/// The compare of `hipStreamWaitValue32/64` (`hipStreamWaitValueGte` … `Nor`, clr
/// `hip_stream_ops.cpp` `ihipStreamOperation`; the conditions as clr's stream-ops wait kernel
/// and CUDA's `cuStreamWaitValue32` define them, `x` the word, `m` the mask, `v` the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOp {
    /// `(x & m) >= v` (unsigned).
    Gte,
    /// `(x & m) == v`.
    Eq,
    /// `(x & m & v) != 0`.
    And,
    /// `!((x & m) | v) & m != 0`.
    Nor,
}

impl WaitOp {
    /// From `hipStreamWaitValueGte` (0), `Eq` (1), `And` (2), `Nor` (3).
    pub fn from_flags(flags: u32) -> Option<WaitOp> {
        use crate::abi::types::{
            hipStreamWaitValueAnd, hipStreamWaitValueEq, hipStreamWaitValueGte, hipStreamWaitValueNor,
        };
        #[allow(non_upper_case_globals)]
        Some(match flags {
            hipStreamWaitValueGte => WaitOp::Gte,
            hipStreamWaitValueEq => WaitOp::Eq,
            hipStreamWaitValueAnd => WaitOp::And,
            hipStreamWaitValueNor => WaitOp::Nor,
            _ => return None,
        })
    }

    /// Whether word `x` passes the wait for `value` under `mask`.
    pub fn test(self, x: u64, value: u64, mask: u64) -> bool {
        let x = x & mask;
        match self {
            WaitOp::Gte => x >= value,
            WaitOp::Eq => x == value,
            WaitOp::And => x & value != 0,
            WaitOp::Nor => !(x | value) & mask != 0,
        }
    }

    /// The SDMA POLL_REGMEM `(func, reference, mask)` that waits for this condition on one dword
    /// whose relevant bits are `mask` (32-bit `value`/`mask`): Gte and Eq directly, And as "bits
    /// `m & v` not all clear", Nor as "bits `m & !v` not all set".
    fn poll(self, value: u32, mask: u32) -> (sdma::PollFunc, u32, u32) {
        use sdma::PollFunc;
        match self {
            WaitOp::Gte => (PollFunc::Ge, value, mask),
            WaitOp::Eq => (PollFunc::Eq, value, mask),
            WaitOp::And => (PollFunc::Ne, 0, mask & value),
            WaitOp::Nor => (PollFunc::Ne, mask & !value, mask & !value),
        }
    }

    /// The one-dword POLL_REGMEM `(byte offset, func, reference, mask)` equal to this 64-bit
    /// condition, when it depends on one half of the word only; `None` otherwise.
    fn poll64(self, value: u64, mask: u64) -> Option<(u64, sdma::PollFunc, u32, u32)> {
        let halves = |bits: u64, other: u64| -> Option<u64> {
            // Little-endian: the low half is at offset 0, the high half at 4.
            if bits >> 32 == 0 && other >> 32 == 0 {
                Some(0)
            } else if bits as u32 == 0 && other as u32 == 0 {
                Some(4)
            } else {
                None
            }
        };
        let off = match self {
            WaitOp::Gte | WaitOp::Eq => halves(mask, value)?,
            WaitOp::And => halves(mask & value, 0)?,
            WaitOp::Nor => halves(mask & !value, 0)?,
        };
        let shift = off * 8;
        let (f, r, m) = self.poll((value >> shift) as u32, (mask >> shift) as u32);
        Some((off, f, r, m))
    }
}

impl Runtime {
    /// Checks that stream `s` may read or write the `bytes`-byte word at `addr`: inside one live
    /// allocation, aligned to its size, mapped on `s`'s device. Errors: `hipErrorInvalidValue`.
    fn stream_word(
        &self,
        s: &Stream,
        addr: u64,
        bytes: u64,
    ) -> Result<Arc<crate::core::memory::Allocation>, hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        let a = self.allocs.find(addr).ok_or(inv)?;
        let inside = addr.checked_add(bytes).is_some_and(|e| e <= a.end());
        let gpu = self.devices[s.dev].gpu_id;
        let mapped = a.bo().is_none_or(|bo| a.is_host_memory() || bo.mapped.lock().contains(&gpu));
        if !inside || !addr.is_multiple_of(bytes) || !mapped {
            return Err(inv);
        }
        Ok(a)
    }

    /// `hipStreamWriteValue32/64`: after the work queued on `s` so far, the GPU writes the low
    /// `bytes` (4 or 8) bytes of `value` at `addr` (SDMA WRITE_LINEAR). Errors:
    /// `hipErrorInvalidValue` (an address outside a live allocation of the stream's device or of
    /// host memory, misaligned).
    pub fn stream_write_value(&self, s: &Stream, addr: u64, value: u64, bytes: u64) -> Result<(), hipError_t> {
        self.stream_word(s, addr, bytes)?;
        let words = [value as u32, (value >> 32) as u32];
        self.stream_submit(s, &[], |pk| sdma::write_linear(pk, addr, &words[..(bytes / 4) as usize]).map(|_| ()))?;
        Ok(())
    }

    /// `hipStreamWaitValue32/64`: work queued on `s` later starts only once the `bytes`-byte word
    /// at `addr` passes `op` against `value` under `mask`. The stream gets a queue of its own
    /// first (the wait may last long). A 32-bit wait, and a 64-bit one that depends on one half
    /// of the word, is an SDMA POLL_REGMEM on that dword; any other 64-bit wait (POLL_REGMEM
    /// compares one dword) is a host function that polls the word from the CPU (host memory, or
    /// device memory with a CPU mapping; `hipErrorNotSupported` without one). Errors:
    /// `hipErrorInvalidValue` as [`stream_write_value`](Self::stream_write_value),
    /// `hipErrorOutOfMemory`.
    pub fn stream_wait_value(
        &self,
        s: &Arc<Stream>,
        addr: u64,
        op: WaitOp,
        value: u64,
        mask: u64,
        bytes: u64,
    ) -> Result<(), hipError_t> {
        if let Some((off, f, r, m)) = self.wait_plan(s, addr, op, value, mask, bytes)? {
            self.stream_detach(s)?;
            self.stream_submit(s, &[], |pk| sdma::poll_regmem(pk, addr + off, f, r, m))?;
            return Ok(());
        }
        let job = move || {
            let mut nap = std::time::Duration::from_micros(1);
            // SAFETY: `addr` is an 8-aligned word inside a live allocation that the CPU maps at
            // the same address (checked above). It stays mapped while this job runs: every path
            // that frees or unmaps memory (hipFree, hipHostUnregister, hipMemUnmap,
            // hipIpcCloseMemHandle) first waits for all devices' queued work, which includes
            // this stream's poll of the word written after this job. Other agents write the word
            // concurrently, hence an atomic load.
            let word = unsafe { &*(addr as *const std::sync::atomic::AtomicU64) };
            while !op.test(word.load(std::sync::atomic::Ordering::Acquire), value, mask) {
                std::thread::sleep(nap);
                nap = (nap * 2).min(std::time::Duration::from_millis(1));
            }
        };
        self.stream_host_func(s, Box::new(job))
    }

    /// How [`stream_wait_value`](Self::stream_wait_value) waits on `s` for the word at `addr`:
    /// `Some((byte offset, func, reference, mask))`, one SDMA POLL_REGMEM, or `None`, a host
    /// function polling it from the CPU. Errors: `hipErrorInvalidValue` (as
    /// [`stream_write_value`](Self::stream_write_value)), `hipErrorNotSupported` (a CPU poll of
    /// memory the CPU does not map).
    #[allow(clippy::type_complexity)]
    fn wait_plan(
        &self,
        s: &Stream,
        addr: u64,
        op: WaitOp,
        value: u64,
        mask: u64,
        bytes: u64,
    ) -> Result<Option<(u64, sdma::PollFunc, u32, u32)>, hipError_t> {
        let a = self.stream_word(s, addr, bytes)?;
        let poll = if bytes == 4 {
            let (f, r, m) = op.poll(value as u32, mask as u32);
            Some((0, f, r, m))
        } else {
            op.poll64(value, mask)
        };
        if poll.is_none() && !a.is_host_memory() && !a.bo().is_some_and(|bo| bo.cpu_mapped) {
            return Err(hipError_t::hipErrorNotSupported);
        }
        Ok(poll)
    }

    /// Whether `s` can run `op` (what [`stream_mem_ops`](Self::stream_mem_ops) would refuse
    /// before queuing anything). Errors: as [`stream_wait_value`](Self::stream_wait_value) and
    /// [`stream_write_value`](Self::stream_write_value).
    pub fn stream_mem_op_check(&self, s: &Stream, op: &StreamMemOp) -> Result<(), hipError_t> {
        match *op {
            StreamMemOp::Wait { addr, op, value, bytes } => {
                self.wait_plan(s, addr, op, value, StreamMemOp::mask(bytes), bytes).map(drop)
            }
            StreamMemOp::Write { addr, bytes, .. } => self.stream_word(s, addr, bytes).map(drop),
        }
    }

    /// `hipStreamBatchMemOp`: queues `ops` on `s` one after another, in array order (each wait
    /// holds the later elements and the stream's later work), after checking them all, so that a
    /// refused batch queues nothing. Errors: as [`stream_mem_op_check`](Self::stream_mem_op_check),
    /// `hipErrorOutOfMemory`.
    pub fn stream_mem_ops(&self, s: &Arc<Stream>, ops: &[StreamMemOp]) -> Result<(), hipError_t> {
        ops.iter().try_for_each(|op| self.stream_mem_op_check(s, op))?;
        for op in ops {
            match *op {
                StreamMemOp::Wait { addr, op, value, bytes } => {
                    self.stream_wait_value(s, addr, op, value, StreamMemOp::mask(bytes), bytes)?
                }
                StreamMemOp::Write { addr, value, bytes } => self.stream_write_value(s, addr, value, bytes)?,
            }
        }
        Ok(())
    }
}

/// One element of a `hipStreamBatchMemOp` batch (`hipStreamBatchMemOpParams`), decoded: a wait
/// as `hipStreamWaitValue32/64` with every bit of the word compared (clr's batch kernel passes an
/// all-ones mask), or a write as `hipStreamWriteValue32/64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMemOp {
    /// Wait until the `bytes`-byte word at `addr` passes `op` against `value`.
    Wait { addr: u64, op: WaitOp, value: u64, bytes: u64 },
    /// Write the low `bytes` bytes of `value` at `addr`.
    Write { addr: u64, value: u64, bytes: u64 },
}

impl StreamMemOp {
    /// Decodes one element (clr `ihipBatchMemOperation` and its batch kernel): a 32-bit
    /// operation uses the low half of the value. Errors: `hipErrorInvalidValue` for
    /// `hipStreamMemOpBarrier` and `hipStreamMemOpFlushRemoteWrites` (clr: "not supported"), an
    /// unknown operation, a null address, a wait compare other than `hipStreamWaitValueGte` ...
    /// `Nor`.
    pub fn from_params(p: &crate::abi::types::hipStreamBatchMemOpParams) -> Result<StreamMemOp, hipError_t> {
        use crate::abi::types::hipStreamBatchMemOpType as T;
        let inv = hipError_t::hipErrorInvalidValue;
        let (wait, bytes) = match p.operation {
            T::hipStreamMemOpWaitValue32 => (true, 4),
            T::hipStreamMemOpWaitValue64 => (true, 8),
            T::hipStreamMemOpWriteValue32 => (false, 4),
            T::hipStreamMemOpWriteValue64 => (false, 8),
            _ => return Err(inv),
        };
        let addr = p.address as u64;
        if addr == 0 {
            return Err(inv);
        }
        let value = if bytes == 4 { p.value64 & 0xffff_ffff } else { p.value64 };
        Ok(if wait {
            StreamMemOp::Wait { addr, op: WaitOp::from_flags(p.flags).ok_or(inv)?, value, bytes }
        } else {
            StreamMemOp::Write { addr, value, bytes }
        })
    }

    /// The compare mask of a wait on a `bytes`-byte word: all of it.
    fn mask(bytes: u64) -> u64 {
        if bytes == 4 {
            u32::MAX as u64
        } else {
            u64::MAX
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hip-tests `hipStreamValue.cc` cases: each op's POLL_REGMEM agrees with `test` on the
    /// "fail" and "pass" words.
    #[test]
    fn wait_ops_as_polls() {
        let cases32: &[(WaitOp, u32, u32, u32, u32)] = &[
            (WaitOp::Gte, 0xF, 0x4, 0x3, 0x6),
            (WaitOp::Eq, 0xFFFF, 0x1, 0x0FFF_0000, 0x0FFF_0001),
            (WaitOp::And, 0xFF, 0xF4A, 0xF35, 0x02),
            (WaitOp::Nor, u32::MAX, 0x7AAA_AAAA, 0x8555_5555, 0x9AAA_AAAA),
            (WaitOp::Gte, u32::MAX, 0x7FFF_0001, 0x7FFF_0000, 0x7FFF_0010),
        ];
        for &(op, mask, value, fail, pass) in cases32 {
            let (f, r, m) = op.poll(value, mask);
            assert!(!f.test(fail, m, r) && f.test(pass, m, r), "{op:?}");
            assert!(
                !op.test(fail as u64, value as u64, mask as u64) && op.test(pass as u64, value as u64, mask as u64)
            );
        }
        // 64-bit: one half → a poll; both halves → none.
        assert!(WaitOp::Gte.poll64(0x7FFF_0001, 0x0000_FFFF_FFFF_FFFF).is_none());
        assert_eq!(WaitOp::Eq.poll64(0x11, 0xFF).map(|p| p.0), Some(0));
        assert_eq!(WaitOp::Eq.poll64(0x11 << 32, 0xFF << 32).map(|p| (p.0, p.2)), Some((4, 0x11)));
        assert!(WaitOp::Nor.poll64(0x4724_7247_4724_7247, u64::MAX).is_none());
        assert!(WaitOp::Nor.test(0xbddb_ddbd_bddb_ddb3, 0x4724_7247_4724_7247, u64::MAX));
        assert!(!WaitOp::Nor.test(0xbddb_ddbd_bddb_ddbd, 0x4724_7247_4724_7247, u64::MAX));
    }

    /// `hipStreamBatchMemOpParams` elements decoded as clr's batch kernel reads them: a 32-bit
    /// operation takes the low half of the value, barrier and flush are refused.
    #[test]
    fn batch_elements_decoded() {
        use crate::abi::types::{hipStreamBatchMemOpParams, hipStreamBatchMemOpType as T};
        let p = |operation, address: usize, value64, flags| hipStreamBatchMemOpParams {
            operation,
            barrierFlags: 0,
            address: address as *mut std::ffi::c_void,
            value64,
            flags,
            alias: std::ptr::null_mut(),
            pad: 0,
        };
        let d = |x| StreamMemOp::from_params(&x);
        assert_eq!(
            d(p(T::hipStreamMemOpWaitValue32, 0x1000, 0xdead_0000_0007, 1)),
            Ok(StreamMemOp::Wait { addr: 0x1000, op: WaitOp::Eq, value: 7, bytes: 4 })
        );
        assert_eq!(
            d(p(T::hipStreamMemOpWriteValue64, 0x2000, 0x1_0000_0002, 0)),
            Ok(StreamMemOp::Write { addr: 0x2000, value: 0x1_0000_0002, bytes: 8 })
        );
        let inv = Err(hipError_t::hipErrorInvalidValue);
        assert_eq!(d(p(T::hipStreamMemOpBarrier, 0x1000, 0, 0)), inv);
        assert_eq!(d(p(T::hipStreamMemOpFlushRemoteWrites, 0x1000, 0, 0)), inv);
        assert_eq!(d(p(T(0), 0x1000, 0, 0)), inv);
        assert_eq!(d(p(T::hipStreamMemOpWaitValue64, 0x1000, 0, 4)), inv);
        assert_eq!(d(p(T::hipStreamMemOpWriteValue32, 0, 0, 0)), inv);
        assert_eq!(StreamMemOp::mask(4), 0xffff_ffff);
    }
}
