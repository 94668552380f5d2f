//! The SDMA engines: execute the user SDMA queues of one process.
//!
//! Engines: as `allocate_sdma_queue` (`kfd_device_queue_manager.c`) places them, a type SDMA
//! queue lands on PCIe engine `sdma_id % num_sdma_engines` and an SDMA_XGMI queue on engine
//! `num_sdma_engines + xgmi_id % num_sdma_xgmi_engines`, `sdma_id` being the lowest id free on
//! that GPU (in this process: the model keeps no device-wide bitmap); SDMA_BY_ENG_ID names its
//! engine. Queues on one engine run in turn, as the hardware's queue arbitration does.
//!
//! Threading: engine threads, each running the queues of the engines given to it. The first
//! `threads` engines of the process (in order of first queue) get a thread each and later ones
//! share them round robin; `threads` is `KFDSIM_SDMA_THREADS` (a positive integer), by default
//! unbounded (one thread per engine: copies on different engines run in parallel) on a machine
//! with at least [`PER_ENGINE_MIN_CPUS`] CPUs and 1 (one thread for all, as a 2-core CI machine
//! runs fastest) below that. A thread loops over its queues; for each it reads the 64-bit
//! doorbell (byte index published by the user), decodes the packets between its read index and
//! that value with `kfd_ioctl::sdma::Packet::decode`, executes them through the queue GPU's
//! GPUVM, and writes the read index back to the queue's rptr location. Each packet runs under a
//! read lock of that VM only; TRAPs and faults take the process lock afterwards (lock order
//! `state` → `vm` is never inverted). When no queue made progress the thread lingers
//! ([`LINGER`]) re-reading its doorbells, then parks on a condvar with an exponential backoff
//! (20 µs doubling to 2 ms, cut short when [`QUIET`] is reached); once every queue of its GPUs
//! has been idle for [`QUIET`] it write-protects their doorbell pages ([`DoorbellWatch`]) and
//! sleeps until a store faults (at most [`WATCHED_SLEEP`]), so an idle engine costs about one
//! wake-up a second, and a process without SDMA queues none (no thread is started before its
//! first queue); every KFD ioctl of the process but memory management (WAIT_EVENTS in
//! particular) wakes at once each thread that has a queue with unread doorbell work
//! ([`Sdma::kick`]). A queue waiting in a memory poll (POLL_REGMEM, an AQL barrier, a PM4
//! WAIT_REG_MEM) is re-read every [`POLL_PERIOD`] from the first pause on, however long the
//! engine idled before, and the engine threads sleep without timer slack ([`TIMER_SLACK_NS`]):
//! the hardware re-reads at the packet's interval and never backs off.
//!
//! Faults: a translation miss, a write to a read-only mapping, or a packet the decoder rejects is
//! a VM fault. As `kfd_int_process_v9.c` does for a GPU VM fault, every queue of the process on
//! that GPU stops (`kfd_dqm_evict_pasid`) and the process's MEMORY events are set with
//! `kfd_hsa_memory_exception_data { va (page), gpu_id, NotPresent | ReadOnly }`
//! (`kfd_signal_vm_fault_event`). Garbage never panics the host process.

use super::dbwatch::DoorbellWatch;
use super::gpuvm::{Fault, FaultKind, Gpuvm};
use super::process::Process;
use super::queue::QueueRt;
use kfd_ioctl::kfd::{kfd_hsa_memory_exception_data, kfd_memory_exception_failure};
use kfd_ioctl::sdma::Packet;
use parking_lot::{Condvar, Mutex, RwLock};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

const BACKOFF_MIN: Duration = Duration::from_micros(20);
/// After a pass that made progress the engine keeps re-reading the doorbells this long before it
/// parks: the next submission of a stream of small copies is picked up at once, as a hardware
/// engine reacts to a doorbell write, instead of after a park and wake-up.
const LINGER: Duration = Duration::from_micros(100);
const BACKOFF_MAX: Duration = Duration::from_millis(2);
/// How long every queue of a GPU must have been idle before an engine thread write-protects that
/// GPU's doorbell page. A protected page makes every store to it fault, and the fault round trip
/// (the watch thread lifting the protection) costs 100-150 µs on a 16-vCPU VM: a thread with
/// nothing to do must not protect the page under another engine of the same GPU that is busy
/// with a stream of small copies (4 KiB peer copy + sync: 7.6 µs unprotected, 150-470 µs with
/// idle engines protecting). Until then an idle thread polls with the backoff.
const QUIET: Duration = Duration::from_millis(5);

/// Engine-key bit of an AQL or PM4 queue's processor (`(gpu_id, AQL_ENGINE | queue_id)`).
const AQL_ENGINE: u32 = 0x8000_0000;

/// Monotonic ns since the model's first use (for `QueueRt::last_run`).
pub fn now_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
}
/// Longest sleep of a thread whose doorbell pages are write-protected and whose queues are
/// drained: a store wakes it (`DoorbellWatch::protect` says why none is missed), so this bound
/// only caps the cost of a protection the kernel dropped unseen; long, so that an idle process
/// costs next to no CPU (one cheap wake-up a second per engine thread).
const WATCHED_SLEEP: Duration = Duration::from_secs(1);
/// Longest pause while a queue waits in a memory POLL_REGMEM (or an AQL barrier, a PM4
/// WAIT_REG_MEM): the hardware re-reads the word every `interval` of the packet, whoever writes
/// it (the CPU, another process, another engine), and never backs off. The intervals drivers
/// use are small (ROCr and the kernel put 4 or 10 in the 16-bit field): microseconds on
/// hardware, shorter than a host thread can sleep, so the model re-reads at this period (its
/// shortest pause, [`BACKOFF_MIN`]),
/// from the first pause on: a write is seen within it plus one thread wake-up, however long the
/// engine was idle before.
pub const POLL_PERIOD: Duration = Duration::from_micros(20);
/// Timer slack of the engine threads (ns): Linux lets a sleep of a normal thread run 50 µs
/// late by default (`timer_slack_ns`), which stretched a 40 µs pause to 90-130 µs on the dev
/// VM; the engine asks for its wake-ups on time, as the hardware's poll timer keeps its
/// interval.
pub const TIMER_SLACK_NS: u64 = 1_000;
/// The engine's pause between passes that found nothing to do: [`BACKOFF_MIN`] doubling up to
/// [`BACKOFF_MAX`] while its queues are empty, at most [`POLL_PERIOD`] while one waits in a
/// poll (also for the first pause after a long idle spell, when the current step is long).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Backoff {
    cur: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { cur: BACKOFF_MIN }
    }
}

impl Backoff {
    /// Back to the shortest pause (the engine made progress, or was kicked for work).
    fn reset(&mut self) {
        self.cur = BACKOFF_MIN;
    }

    /// The next pause; `polling`: a queue waits in a poll (its word is re-read after the pause).
    fn next(&mut self, polling: bool) -> Duration {
        let max = if polling { POLL_PERIOD } else { BACKOFF_MAX };
        let pause = self.cur.min(max);
        self.cur = (pause * 2).min(max);
        pause
    }
}

/// Whether an idle engine thread's doorbell pages are watched ([`Worker::protect_doorbells`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watch {
    /// Write-protected: every store to them wakes the thread.
    On,
    /// A queue of its GPUs ran within [`QUIET`]: they may be protected after this long.
    Later(Duration),
    /// Not watched (no userfaultfd, a page that could not be protected, or a queue polling).
    Off,
}

/// Makes the calling engine thread's timed sleeps end on time ([`TIMER_SLACK_NS`]); returns
/// the slack the thread has now (ns).
fn exact_timers() -> u64 {
    // SAFETY: PR_SET_TIMERSLACK and PR_GET_TIMERSLACK take integers and touch only the calling
    // thread's slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS, 0u64, 0u64, 0u64);
        libc::prctl(libc::PR_GET_TIMERSLACK, 0u64, 0u64, 0u64, 0u64) as u64
    }
}

/// Copy chunk for ranges that cross BO boundaries or touch userptr pages.
const CHUNK: usize = 1 << 20;
/// CPUs from which each engine gets a thread of its own by default.
pub const PER_ENGINE_MIN_CPUS: usize = 4;
/// Environment variable: most engine threads per process (a positive integer).
pub const ENV_THREADS: &str = "KFDSIM_SDMA_THREADS";

/// Engine threads per process: `KFDSIM_SDMA_THREADS` when it is a positive integer, else one
/// per engine with at least [`PER_ENGINE_MIN_CPUS`] CPUs and 1 below.
fn thread_limit() -> usize {
    if let Some(n) = std::env::var(ENV_THREADS).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|n| *n > 0) {
        return n;
    }
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if cpus >= PER_ENGINE_MIN_CPUS {
        usize::MAX
    } else {
        1
    }
}

/// What every engine thread of the process shares.
struct Shared {
    process: Weak<Process>,
    /// Every SDMA queue of the process with the thread that runs it.
    queues: Mutex<Vec<(Arc<QueueRt>, Arc<Worker>)>>,
    /// Doorbell stores seen as they happen (None where userfaultfd is refused). Made with the
    /// process, so that its fd is there from the first KFD call on, as the process's others.
    watch: Option<Arc<DoorbellWatch>>,
}

impl Shared {
    /// Wakes the threads that run a queue of `gpu_id` (a store to its doorbell page), or every
    /// thread for None (a store to a doorbell page of unknown GPU).
    fn wake_gpu(&self, gpu_id: Option<u32>) {
        for (q, w) in self.queues.lock().iter() {
            if gpu_id.is_none_or(|g| g == q.gpu_id) {
                w.kick();
            }
        }
    }

    fn watch(&self) -> Option<&Arc<DoorbellWatch>> {
        self.watch.as_ref()
    }
}

/// The SDMA engines of one process.
pub struct Sdma {
    shared: Arc<Shared>,
    workers: Mutex<Workers>,
    limit: usize,
}

/// The engine threads of a process.
#[derive(Default)]
struct Workers {
    threads: Vec<Arc<Worker>>,
    /// The thread (index in `threads`) of each engine `(gpu_id, engine id)`.
    by_engine: Vec<((u32, u32), usize)>,
}

struct Ctl {
    kicked: bool,
}

/// One engine thread: the queues of the engines given to it.
struct Worker {
    shared: Arc<Shared>,
    queues: Mutex<Vec<Arc<QueueRt>>>,
    ctl: Mutex<Ctl>,
    cv: Condvar,
    /// Set by a pass that left a queue waiting in a memory POLL_REGMEM.
    polling: AtomicBool,
    /// Set while the thread sleeps on `cv` (so that a lingering sibling kicks it only then).
    parked: AtomicBool,
    /// Longest pause (ns) the thread took while a queue waited in a poll ([`Backoff::next`]).
    longest_poll_pause_ns: AtomicU64,
    /// The thread's timer slack (ns) as the kernel reports it after [`exact_timers`].
    timer_slack_ns: AtomicU64,
}

impl Sdma {
    pub fn new(process: Weak<Process>) -> Sdma {
        Sdma {
            shared: Arc::new(Shared {
                process,
                queues: Mutex::new(Vec::new()),
                watch: DoorbellWatch::new().map(Arc::new),
            }),
            workers: Mutex::new(Workers::default()),
            limit: thread_limit(),
        }
    }

    /// Wakes every parked engine thread that has a queue with doorbell work it has not read
    /// (or that waits in a POLL_REGMEM, whose word the caller may just have written).
    pub fn kick(&self) {
        for (q, w) in self.shared.queues.lock().iter() {
            if q.pending() {
                w.kick();
            }
        }
    }

    /// The user mapped `gpu_id`'s doorbell slice at `[start, start+len)`: watch it for stores.
    pub fn doorbell_mapped(&self, start: u64, len: u64, gpu_id: u32) {
        let Some(w) = self.shared.watch() else { return };
        let shared = Arc::downgrade(&self.shared);
        w.register(start, len, gpu_id, move |g| {
            if let Some(s) = shared.upgrade() {
                s.wake_gpu(g);
            }
        });
        // Threads asleep behind the older mappings protect this one too when they next park.
        self.shared.wake_gpu(Some(gpu_id));
    }

    /// In a child after fork, for the parent's model that the child abandons: closes the
    /// inherited userfaultfd (it watches the parent's memory), so that the child's own, made
    /// with its model, leaves its fd count as it was.
    pub fn close_inherited(&self) {
        if let Some(w) = self.shared.watch() {
            w.close_inherited();
        }
    }

    /// Adds a queue to the thread of its engine, starting the thread if needed.
    ///
    /// An AQL or PM4 compute queue gets a thread of its own whatever the limit (its command
    /// processor: a long kernel must not hold SDMA queues, and a barrier waiting for an SDMA
    /// signal must not wait behind itself).
    pub fn add_queue(&self, q: Arc<QueueRt>) {
        let own = q.is_aql || q.is_pm4;
        let key = (q.gpu_id, if own { AQL_ENGINE | q.queue_id } else { q.engine });
        let w = {
            let mut ws = self.workers.lock();
            let Workers { threads, by_engine } = &mut *ws;
            let i = match by_engine.iter().find(|(k, _)| *k == key) {
                Some((_, i)) => *i,
                None => {
                    // The SDMA threads (AQL threads are never shared), in order of creation.
                    let mut sdma: Vec<usize> =
                        by_engine.iter().filter(|(k, _)| k.1 & AQL_ENGINE == 0).map(|(_, i)| *i).collect();
                    sdma.sort_unstable();
                    sdma.dedup();
                    let i = if own || sdma.len() < self.limit {
                        let w = Arc::new(Worker {
                            shared: self.shared.clone(),
                            queues: Mutex::new(Vec::new()),
                            ctl: Mutex::new(Ctl { kicked: false }),
                            cv: Condvar::new(),
                            polling: AtomicBool::new(false),
                            parked: AtomicBool::new(false),
                            longest_poll_pause_ns: AtomicU64::new(0),
                            timer_slack_ns: AtomicU64::new(u64::MAX),
                        });
                        let me = w.clone();
                        // The JoinHandle is dropped (detached): the thread lives as long as the
                        // process.
                        let name = if q.is_aql {
                            "kfdsim-aql"
                        } else if q.is_pm4 {
                            "kfdsim-pm4"
                        } else {
                            "kfdsim-sdma"
                        };
                        let _ = std::thread::Builder::new().name(name.into()).spawn(move || me.run());
                        threads.push(w);
                        threads.len() - 1
                    } else {
                        // Round robin over the SDMA threads.
                        sdma[by_engine.iter().filter(|(k, _)| k.1 & AQL_ENGINE == 0).count() % sdma.len()]
                    };
                    by_engine.push((key, i));
                    i
                }
            };
            threads[i].clone()
        };
        w.queues.lock().push(q.clone());
        self.shared.queues.lock().push((q, w.clone()));
        w.kick();
    }

    /// The longest pause any engine thread of the process took between two reads of a word a
    /// queue waited on in a poll (at most [`POLL_PERIOD`]), and the largest timer slack of those
    /// threads (ns; `u64::MAX` before a thread has started).
    pub fn poll_timing(&self) -> (Duration, u64) {
        let ws = self.workers.lock();
        let pause = ws.threads.iter().map(|w| w.longest_poll_pause_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
        let slack = ws.threads.iter().map(|w| w.timer_slack_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
        (Duration::from_nanos(pause), slack)
    }

    /// Removes a queue and waits until its engine is not executing it.
    pub fn remove_queue(&self, q: &Arc<QueueRt>) {
        q.stopped.store(true, Ordering::Release);
        let w = {
            let mut all = self.shared.queues.lock();
            let w = all.iter().find(|(x, _)| Arc::ptr_eq(x, q)).map(|(_, w)| w.clone());
            all.retain(|(x, _)| !Arc::ptr_eq(x, q));
            w
        };
        if let Some(w) = w {
            w.queues.lock().retain(|x| !Arc::ptr_eq(x, q));
        }
        drop(q.exec.lock());
    }
}

impl Worker {
    /// Wakes the thread if it is parked.
    fn kick(&self) {
        let mut c = self.ctl.lock();
        c.kicked = true;
        self.cv.notify_one();
    }

    fn run(self: Arc<Self>) {
        self.timer_slack_ns.store(exact_timers(), Ordering::Relaxed);
        let mut backoff = Backoff::default();
        let mut last_progress = std::time::Instant::now();
        loop {
            let queues: Vec<Arc<QueueRt>> = self.queues.lock().clone();
            let mut progress = false;
            for q in &queues {
                if self.run_queue(q) {
                    q.last_run.store(now_ns(), Ordering::Relaxed);
                    progress = true;
                }
            }
            if progress {
                backoff.reset();
                last_progress = std::time::Instant::now();
                continue;
            }
            if last_progress.elapsed() < LINGER {
                // A lingering engine watches every doorbell of the process, as hardware notices
                // each at once: a sleeping sibling whose queue got work is woken now, not after
                // its backoff (a stream of copies taken in turn by several engines).
                self.kick_parked_siblings();
                std::thread::yield_now();
                continue;
            }
            let polling = self.polling.swap(false, Ordering::Relaxed);
            // With the doorbell pages write-protected, a store wakes the thread: it may sleep
            // until then, once a last look after protecting finds no work.
            let watch = if polling || queues.is_empty() { Watch::Off } else { self.protect_doorbells(&queues) };
            let watched = watch == Watch::On;
            if watched && queues.iter().any(|q| q.pending()) {
                continue;
            }
            let mut c = self.ctl.lock();
            self.parked.store(true, Ordering::Release);
            if !c.kicked {
                if queues.is_empty() {
                    // No queue: sleep until add_queue (or any ioctl) kicks.
                    self.cv.wait(&mut c);
                } else if watched {
                    self.cv.wait_for(&mut c, WATCHED_SLEEP);
                } else {
                    let mut pause = backoff.next(polling);
                    if let Watch::Later(quiet) = watch {
                        // Wake when the pages may be protected: from then on a store wakes the
                        // thread at once, instead of at the end of a long backoff step.
                        pause = pause.min(quiet.max(BACKOFF_MIN));
                    }
                    if polling {
                        self.longest_poll_pause_ns.fetch_max(pause.as_nanos() as u64, Ordering::Relaxed);
                    }
                    self.cv.wait_for(&mut c, pause);
                }
            }
            self.parked.store(false, Ordering::Release);
            if c.kicked {
                // Woken for work: linger as after progress (a doorbell store completes just
                // after the wake-up).
                backoff.reset();
                last_progress = std::time::Instant::now();
            }
            c.kicked = false;
        }
    }

    /// Kicks each parked thread that has a queue with doorbell work it has not read.
    fn kick_parked_siblings(&self) {
        let Some(all) = self.shared.queues.try_lock() else { return };
        for (q, w) in all.iter() {
            if w.parked.load(Ordering::Acquire) && !std::ptr::eq(&**w, self) && q.pending() {
                w.kick();
            }
        }
    }

    /// Write-protects the doorbell pages of the GPUs of `queues` unless a queue of theirs ran
    /// within [`QUIET`].
    fn protect_doorbells(&self, queues: &[Arc<QueueRt>]) -> Watch {
        let Some(w) = self.shared.watch() else { return Watch::Off };
        let mut gpus: Vec<u32> = queues.iter().map(|q| q.gpu_id).collect();
        gpus.sort_unstable();
        gpus.dedup();
        // Not while any queue of these GPUs (on any thread) ran within QUIET.
        let now = now_ns();
        let last = self
            .shared
            .queues
            .lock()
            .iter()
            .filter(|(q, _)| gpus.binary_search(&q.gpu_id).is_ok())
            .map(|(q, _)| q.last_run.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let quiet_at = last.saturating_add(QUIET.as_nanos() as u64);
        if quiet_at > now {
            return Watch::Later(Duration::from_nanos(quiet_at - now));
        }
        // Every GPU is protected (no short cut): a later store to any of them must fault.
        let mut all = true;
        for g in gpus {
            all &= w.protect(g);
        }
        if all {
            Watch::On
        } else {
            Watch::Off
        }
    }

    /// Runs `q` as far as its doorbell allows. True if any packet was consumed. TRAPs and a
    /// fault are delivered after the queue's exec lock is released (DESTROY_QUEUE waits on that
    /// lock, and delivering takes the process lock).
    fn run_queue(&self, q: &Arc<QueueRt>) -> bool {
        let mut traps = Vec::new();
        let (progress, fault) = {
            let Some(_guard) = q.exec.try_lock() else { return false };
            self.run_locked(q, &mut traps)
        };
        for ctx in traps {
            self.trap(ctx);
        }
        if let Some(f) = fault {
            self.fault(q, f);
            return true;
        }
        progress
    }

    fn run_locked(&self, q: &Arc<QueueRt>, traps: &mut Vec<u32>) -> (bool, Option<Fault>) {
        if q.stopped.load(Ordering::Acquire) || !q.active.load(Ordering::Acquire) {
            return (false, None);
        }
        if q.is_aql || q.is_pm4 {
            let pass = if q.is_aql { super::aql::run(q) } else { super::pm4::run(q) };
            if pass.waiting {
                self.polling.store(true, Ordering::Relaxed);
            }
            traps.extend(pass.events);
            return (pass.progress || pass.fault.is_some(), pass.fault);
        }
        if !q.is_sdma {
            return (false, None);
        }
        let wptr = match q.doorbell.read_u64(q.doorbell_off) {
            Ok(v) => v,
            Err(_) => return (false, None),
        };
        let mut rptr = q.rptr.load(Ordering::Acquire);
        if wptr == rptr {
            return (false, None);
        }
        let (ring_base, ring_size) = q.ring();
        let ring_va = |rptr: u64| ring_base + (rptr & (ring_size - 1));
        let pending = wptr.wrapping_sub(rptr);
        if pending > ring_size || pending % 4 != 0 {
            // A doorbell value the ring cannot hold: an invalid command stream.
            return (true, Some(Fault { va: ring_va(rptr) & !0xfff, kind: FaultKind::NotPresent }));
        }
        // Gather the published dwords (wrapping at the ring end).
        let mut dw = vec![0u32; (pending / 4) as usize];
        {
            let vm = q.vm.read();
            let mut filled = 0usize;
            let mut idx = rptr;
            while filled < dw.len() {
                let off = idx & (ring_size - 1);
                let n = (((ring_size - off) / 4) as usize).min(dw.len() - filled);
                let mut bytes = vec![0u8; n * 4];
                if let Err(f) = read_va(&vm, ring_base + off, &mut bytes) {
                    return (true, Some(f));
                }
                for (i, c) in bytes.chunks_exact(4).enumerate() {
                    dw[filled + i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
                filled += n;
                idx += (n * 4) as u64;
            }
        }
        let mut pos = 0usize;
        let mut progress = false;
        let mut fault = None;
        while pos < dw.len() {
            if q.stopped.load(Ordering::Acquire) {
                break;
            }
            let (pkt, n) = match Packet::decode(&dw[pos..]) {
                Ok(x) => x,
                Err(e) => {
                    if crate::model::trace_enabled() {
                        crate::trace::emit(format_args!(
                            "SDMA queue {} gpu {:#x}: bad packet at rptr {:#x}: {e}",
                            q.queue_id, q.gpu_id, rptr
                        ));
                    }
                    fault = Some(Fault { va: ring_va(rptr) & !0xfff, kind: FaultKind::NotPresent });
                    break;
                }
            };
            let r = {
                let vm = q.vm.read();
                exec(&vm, &pkt)
            };
            if crate::model::trace_enabled() && !matches!(r, Exec::Wait) {
                // One line per executed packet (a POLL_REGMEM still waiting is traced once it passes).
                crate::trace::emit(format_args!(
                    "SDMA queue {} gpu {:#x} rptr {:#x}: {:?}",
                    q.queue_id, q.gpu_id, rptr, pkt
                ));
            }
            match r {
                Exec::Done => {}
                Exec::Wait => {
                    self.polling.store(true, Ordering::Relaxed);
                    break;
                }
                Exec::Trap(ctx) => traps.push(ctx),
                Exec::Fault(f) => {
                    fault = Some(f);
                    break;
                }
            }
            rptr += (n * 4) as u64;
            pos += n;
            progress = true;
        }
        if progress {
            self.publish_rptr(q, rptr);
        }
        (progress || fault.is_some(), fault)
    }

    fn publish_rptr(&self, q: &QueueRt, rptr: u64) {
        q.rptr.store(rptr, Ordering::Release);
        let vm = q.vm.read();
        let _ = write_va(&vm, q.rptr_va, &rptr.to_le_bytes());
    }

    fn trap(&self, int_ctx: u32) {
        let Some(p) = self.shared.process.upgrade() else { return };
        p.state.lock().events.signal_interrupt(int_ctx & 0x0fff_ffff);
    }

    fn fault(&self, q: &QueueRt, f: Fault) {
        q.stopped.store(true, Ordering::Release);
        let Some(p) = self.shared.process.upgrade() else { return };
        // kfd_dqm_evict_pasid: every queue of the process on this GPU stops.
        for (other, _) in self.shared.queues.lock().iter() {
            if other.gpu_id == q.gpu_id {
                other.stopped.store(true, Ordering::Release);
            }
        }
        if crate::model::trace_enabled() {
            crate::trace::emit(format_args!(
                "GPU VM fault gpu {:#x} va {:#x} {:?} (queue {})",
                q.gpu_id, f.va, f.kind, q.queue_id
            ));
        }
        let data = kfd_hsa_memory_exception_data {
            failure: kfd_memory_exception_failure {
                NotPresent: (f.kind == FaultKind::NotPresent) as u32,
                ReadOnly: (f.kind == FaultKind::ReadOnly) as u32,
                NoExecute: 0,
                imprecise: 0,
            },
            va: f.va,
            gpu_id: q.gpu_id,
            ErrorType: 0,
        };
        // kfd_set_dbg_ev_from_interrupt: a debugger subscribed to memory violations gets the
        // fault instead of the runtime.
        let (np, ro) = (f.kind == FaultKind::NotPresent, f.kind == FaultKind::ReadOnly);
        if super::debug::raise_memory_violation(q.gpu_id, f.va, np, ro) {
            return;
        }
        p.state.lock().events.signal_memory_exception(data);
    }
}

enum Exec {
    Done,
    /// POLL_REGMEM not satisfied yet: retry later from the same packet.
    Wait,
    Trap(u32),
    Fault(Fault),
}

/// Executes one packet against `vm`.
fn exec(vm: &Gpuvm, pkt: &Packet) -> Exec {
    let r = match pkt {
        Packet::Nop { .. } => Ok(()),
        Packet::CopyLinear { count, src, dst } => copy_va(vm, *src, *dst, *count as u64),
        Packet::CopyLinearBroadcast { count, src, dst } => {
            dst.iter().try_for_each(|d| copy_va(vm, *src, *d, *count as u64))
        }
        Packet::CopySubWindow { elem, src, dst, rect_x, rect_y, rect_z } => {
            // Row by row through the GPUVM, as COPY_LINEAR; the first fault stops the packet.
            let row = (*rect_x as u64) << elem;
            (0..*rect_z as u64).flat_map(|z| (0..*rect_y as u64).map(move |y| (y, z))).try_for_each(|(y, z)| {
                copy_va(vm, src.element_addr(*elem, 0, y, z), dst.element_addr(*elem, 0, y, z), row)
            })
        }
        Packet::ConstFill { dst, data, count } => fill_va(vm, *dst, *data, *count as u64),
        Packet::Fence { addr, data } => write_va(vm, *addr, &data.to_le_bytes()),
        Packet::Trap { int_ctx } => return Exec::Trap(*int_ctx),
        Packet::PollRegmem { addr, reference, mask, func, mem_poll, .. } => {
            if !*mem_poll {
                // Register polls (HDP flush): the model has no registers; satisfied at once.
                return Exec::Done;
            }
            let mut b = [0u8; 4];
            match read_va(vm, *addr, &mut b) {
                Ok(()) => {
                    if func.test(u32::from_le_bytes(b), *mask, *reference) {
                        return Exec::Done;
                    }
                    return Exec::Wait;
                }
                Err(f) => Err(f),
            }
        }
        Packet::Atomic { op, addr, src, cmp, .. } => atomic_va(vm, *op, *addr, *src, *cmp),
        Packet::Timestamp { addr } => write_va(vm, *addr, &super::sys::gpu_clock().to_le_bytes()),
        Packet::WriteLinear { dst, data } => {
            let bytes: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
            write_va(vm, *dst, &bytes)
        }
    };
    match r {
        Ok(()) => Exec::Done,
        Err(f) => Exec::Fault(f),
    }
}

/// Runs an indirect buffer of `dwords` SDMA dwords at GPU VA `va` through `vm` to its end, as a
/// kernel SDMA ring runs a CS job's IB (`sdma_v4_0_ring_emit_ib`): a POLL_REGMEM that does not
/// pass is re-read every `POLL_PERIOD` until `deadline` (then `Err(None)`: the job timed out);
/// TRAP raises nothing (no KFD event on a kernel ring). The first fault or bad packet stops the
/// IB (`Err(Some(fault))`).
pub fn run_indirect(vm: &RwLock<Gpuvm>, va: u64, dwords: u32, deadline: Instant) -> Result<(), Option<Fault>> {
    let dw = read_dwords(&vm.read(), va, dwords as usize).map_err(Some)?;
    let mut pos = 0;
    while pos < dw.len() {
        let bad = Fault { va: (va + pos as u64 * 4) & !0xfff, kind: FaultKind::NotPresent };
        let (pkt, n) = Packet::decode(&dw[pos..]).map_err(|_| Some(bad))?;
        loop {
            match exec(&vm.read(), &pkt) {
                Exec::Done | Exec::Trap(_) => break,
                Exec::Fault(f) => return Err(Some(f)),
                Exec::Wait if Instant::now() >= deadline => return Err(None),
                Exec::Wait => std::thread::sleep(POLL_PERIOD),
            }
        }
        pos += n;
    }
    Ok(())
}

/// Reads `n` little-endian dwords at `va` through `vm` (an indirect buffer).
pub fn read_dwords(vm: &Gpuvm, va: u64, n: usize) -> Result<Vec<u32>, Fault> {
    let mut bytes = vec![0u8; n * 4];
    read_va(vm, va, &mut bytes)?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Reads `[va, va+len)` through `vm`.
pub fn read_va(vm: &Gpuvm, va: u64, dst: &mut [u8]) -> Result<(), Fault> {
    let segs = vm.translate(va, dst.len() as u64, false)?;
    let mut off = 0usize;
    for s in segs {
        let n = s.len as usize;
        s.bo.read(s.bo_offset, &mut dst[off..off + n])
            .map_err(|_| Fault { va: (va + off as u64) & !0xfff, kind: FaultKind::NotPresent })?;
        off += n;
    }
    Ok(())
}

/// Writes `src` at `va` through `vm`.
pub fn write_va(vm: &Gpuvm, va: u64, src: &[u8]) -> Result<(), Fault> {
    let segs = vm.translate(va, src.len() as u64, true)?;
    let mut off = 0usize;
    for s in segs {
        let n = s.len as usize;
        s.bo.write(s.bo_offset, &src[off..off + n]).map_err(|_| write_fault(vm, va + off as u64))?;
        off += n;
    }
    Ok(())
}

/// The fault of a write at `va` that its segment's pages refused (a USERPTR or XNACK page that
/// is gone, or read-only).
fn write_fault(vm: &Gpuvm, va: u64) -> Fault {
    Fault { va: va & !0xfff, kind: vm.fault_kind(va, true) }
}

/// Serializes the read-modify-write copies that stand in for atomics the model cannot do in
/// hardware (unaligned words, user pages that are not writable): atomic against each other, not
/// against the CPU.
pub static SLOW_ATOMICS: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// COPY_LINEAR: `len` bytes from `src` to `dst`, both translated before anything is written
/// (a fault leaves the destination untouched). Overlapping ranges copy like memmove.
fn copy_va(vm: &Gpuvm, src: u64, dst: u64, len: u64) -> Result<(), Fault> {
    let s = vm.translate(src, len, false)?;
    let d = vm.translate(dst, len, true)?;
    // Fast path: both sides are single memfd segments.
    if s.len() == 1 && d.len() == 1 {
        if let (Some(sp), Some(dp)) = (s[0].bo.ptr(s[0].bo_offset), d[0].bo.ptr(d[0].bo_offset)) {
            // SAFETY: both ranges were validated against their BO sizes by `translate`; the
            // model-private mappings live as long as the Arc<Bo>s held in `s`/`d`.
            unsafe { std::ptr::copy(sp, dp, len as usize) };
            return Ok(());
        }
    }
    let mut buf = vec![0u8; (len as usize).min(CHUNK)];
    let mut done = 0u64;
    while done < len {
        let n = ((len - done) as usize).min(CHUNK);
        read_va(vm, src + done, &mut buf[..n])?;
        write_va(vm, dst + done, &buf[..n])?;
        done += n as u64;
    }
    Ok(())
}

/// CONST_FILL: `count` bytes of the dword `data` at `dst`.
fn fill_va(vm: &Gpuvm, dst: u64, data: u32, count: u64) -> Result<(), Fault> {
    let segs = vm.translate(dst, count, true)?;
    let pattern = data.to_le_bytes();
    let mut off = 0u64;
    for s in segs {
        if let Some(p) = s.bo.ptr(s.bo_offset) {
            for i in 0..s.len {
                // SAFETY: within the segment validated by `translate`.
                unsafe { *p.add(i as usize) = pattern[((off + i) % 4) as usize] };
            }
        } else {
            let chunk: Vec<u8> = (0..s.len).map(|i| pattern[((off + i) % 4) as usize]).collect();
            s.bo.write(s.bo_offset, &chunk).map_err(|_| write_fault(vm, dst + off))?;
        }
        off += s.len;
    }
    Ok(())
}

/// ATOMIC: read-modify-write of 4 or 8 bytes at `addr` (atomic against other engine packets and
/// CPU atomics for memfd BOs).
fn atomic_va(vm: &Gpuvm, op: kfd_ioctl::sdma::AtomicOp, addr: u64, src: u64, cmp: u64) -> Result<(), Fault> {
    let w = op.width();
    let segs = vm.translate(addr, w, true)?;
    if segs.len() == 1 && addr.is_multiple_of(w) {
        if let Some(p) = segs[0].bo.atomic_ptr(segs[0].bo_offset, w) {
            if w == 8 {
                // SAFETY: aligned, in range of a live shared mapping, or a user page `atomic_ptr` just
                // found writable.
                let a = unsafe { &*(p as *const std::sync::atomic::AtomicU64) };
                let _ = a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(op.apply(old, src, cmp)));
            } else {
                // SAFETY: as above, 4-byte aligned.
                let a = unsafe { &*(p as *const std::sync::atomic::AtomicU32) };
                let _ = a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                    Some(op.apply(old as u64, src, cmp) as u32)
                });
            }
            return Ok(());
        }
    }
    let _serial = SLOW_ATOMICS.lock();
    let mut b = [0u8; 8];
    read_va(vm, addr, &mut b[..w as usize])?;
    let old = u64::from_le_bytes(b);
    let new = op.apply(old, src, cmp);
    if new == old {
        return Ok(()); // nothing to store (a failed compare-and-swap stores nothing)
    }
    write_va(vm, addr, &new.to_le_bytes()[..w as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine idle long enough for its pause to reach [`BACKOFF_MAX`] that then finds a
    /// queue waiting in a poll re-reads the word after [`POLL_PERIOD`] at most, from the first
    /// pause on (it used to sleep out the idle step first: up to 2 ms); back to idle, the pause
    /// grows again.
    #[test]
    fn a_poll_pause_never_exceeds_the_poll_period_even_after_a_long_idle() {
        let mut b = Backoff::default();
        let idle: Vec<Duration> = (0..12).map(|_| b.next(false)).collect();
        assert_eq!(idle[0], BACKOFF_MIN);
        assert!(idle.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*idle.last().unwrap(), BACKOFF_MAX);
        for _ in 0..8 {
            let p = b.next(true);
            assert!(p <= POLL_PERIOD && !p.is_zero(), "{p:?}");
        }
        assert!(b.next(false) <= POLL_PERIOD * 2);
        assert_eq!((0..12).map(|_| b.next(false)).last(), Some(BACKOFF_MAX));
        b.reset();
        assert_eq!(b.next(true), BACKOFF_MIN.min(POLL_PERIOD));
    }
}
