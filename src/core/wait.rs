//! Wait policies: how a host thread waits for GPU work (`hipDeviceSynchronize`,
//! `hipStreamSynchronize`, `hipEventSynchronize`, synchronous copies, and the runtime's own
//! waits), chosen as clr chooses between ROCr's `HSA_WAIT_STATE_ACTIVE` and
//! `HSA_WAIT_STATE_BLOCKED` (`WaitForSignal`, `Device::IsHwEventReady`), with CUDA's meaning of
//! each `hipDeviceSchedule*` flag:
//!
//! | policy | chosen by | waits by |
//! |---|---|---|
//! | [`WaitPolicy::Spin`] | `hipDeviceScheduleSpin`, `hipSyncPolicySpin` | polling the completion signal (no syscall) |
//! | [`WaitPolicy::Yield`] | `hipDeviceScheduleYield`, `hipSyncPolicyYield` | polling it between `sched_yield`s |
//! | [`WaitPolicy::Block`] | `hipDeviceScheduleBlockingSync`, `hipSyncPolicyBlockingSync`, `hipEventBlockingSync` events | polling it between `sched_yield`s for [`BLOCK_POLL`], then sleeping in `AMDKFD_IOC_WAIT_EVENTS` until the engine's TRAP (ROCr's `HSA_WAIT_STATE_BLOCKED`: poll, then `hsaKmtWaitOnEvent`) |
//! | [`WaitPolicy::Auto`] | `hipDeviceScheduleAuto` (the default), `hipSyncPolicyAuto` on a device in `Auto` | CUDA's heuristic: spins while fewer threads of the process are in a polling wait than it has CPUs, else yields; a spinning wait yields once every [`AUTO_SPIN`] |
//!
//! The runtime's own completion thread (host functions, IPC event wake-ups) waits as
//! [`WaitPolicy::Background`]: it polls between yields for [`BACKGROUND_POLL`], then sleeps, so
//! a host function queued behind long work costs no CPU while it waits. The syncobj waiter thread
//! (src/share/interop.rs) polls, as an `Auto` wait steps, while a wait queued on a `Spin` or
//! `Yield` stream is pending, and sleeps otherwise.
//!
//! A stream's policy other than `hipSyncPolicyAuto` overrides its device's for
//! `hipStreamSynchronize`; an event made with `hipEventBlockingSync` always blocks in
//! `hipEventSynchronize` (clr: `active_wait = !(flags & hipEventBlockingSync) && ActiveWait()`);
//! everything else waits as its device's flags say.
//!
//! A VM fault ends every wait with `hipErrorIllegalAddress` (the faulting work never completes):
//! a polling wait looks at the sticky fault that the runtime's fault watcher thread stores
//! (src/core/signal.rs) as it polls, with no syscall; a sleeping wait is woken by the
//! memory-exception event itself. So the only syscall of any wait is its sleep.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::{
    hipDeviceScheduleBlockingSync, hipDeviceScheduleMask, hipDeviceScheduleSpin, hipDeviceScheduleYield,
    hipSynchronizationPolicy,
};
use crate::core::runtime::Runtime;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often a polling wait calls `Runtime::poll_fault`, for the case the fault watcher thread
/// does not cover (it could not start, or its wait failed): then that is one `WAIT_EVENTS` with
/// timeout 0 on the memory-exception event, and this bounds how long a spinning wait for a
/// queue that faulted takes to report `hipErrorIllegalAddress`. With the watcher (always, but
/// for those failures) it costs no syscall: the wait looks at the sticky fault anyway.
pub const FAULT_POLL: Duration = Duration::from_millis(100);

/// How long a [`WaitPolicy::Block`] wait polls (between `sched_yield`s) before it sleeps in
/// `WAIT_EVENTS`: about what a sleep costs, so by the spin-then-block rule a wait costs at most
/// twice what the best choice made with hindsight would (a wait shorter than this never
/// sleeps; a longer one pays the window plus the sleep). A sleep costs the `WAIT_EVENTS` entry
/// and exit, the TRAP's interrupt and wake-up, and a context switch each way: a few µs to
/// tens of µs (on the 16-CPU bench machine a 4 KiB copy + sync took 10.4 µs sleeping at once,
/// stock HIP's polling wait 6.2 µs); 20 µs bounds it. A small copy ends within it. Stock HIP
/// polls far longer: 100 µs actively (clr `WaitForSignal`, `kTimeout100us`), then up to 200 µs
/// more in ROCr's blocked wait (`InterruptSignal::WaitRelaxed`, `kMaxElapsed`), before
/// `hsaKmtWaitOnEvent`: up to 15 times the CPU for a wait that ends up sleeping.
pub const BLOCK_POLL: Duration = Duration::from_micros(20);

/// How long a spinning `Auto` wait spins between two `sched_yield`s: a thread woken on this
/// CPU gets it within this (on kfd-sim, the engine that runs the awaited copy is such a thread:
/// measured on a loaded 2-CPU machine, a waiter that never yields keeps it off the CPU, and a
/// 4 KiB copy + sync takes 0.1-3 ms instead of 2 µs); a yield with nothing else to run returns
/// at once, so on hardware this costs well under a µs per interval.
pub const AUTO_SPIN: Duration = Duration::from_micros(10);

/// How a host thread waits for GPU work (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Spin while fewer threads poll than there are CPUs, else yield (CUDA's `Auto`); a spin
    /// yields once every [`AUTO_SPIN`].
    Auto,
    /// Poll the completion signal.
    Spin,
    /// Poll it between `sched_yield`s.
    Yield,
    /// Poll between `sched_yield`s for [`BLOCK_POLL`], then sleep in `AMDKFD_IOC_WAIT_EVENTS`.
    Block,
    /// Poll between `sched_yield`s for [`BACKGROUND_POLL`], then sleep (the runtime's own
    /// completion thread; no flag selects it).
    Background,
}

/// How long a [`WaitPolicy::Background`] wait polls before it sleeps: a small copy ends within
/// it, and a sleep plus wake-up costs more than that.
pub const BACKGROUND_POLL: Duration = Duration::from_micros(200);

impl WaitPolicy {
    /// The policy of `hipSetDeviceFlags`' schedule bits (`flags & hipDeviceScheduleMask`; an
    /// invalid mix, which only `hipCtxCreate` can store, is `Auto`).
    pub fn from_device_flags(flags: u32) -> WaitPolicy {
        match flags & hipDeviceScheduleMask {
            f if f == hipDeviceScheduleSpin => WaitPolicy::Spin,
            f if f == hipDeviceScheduleYield => WaitPolicy::Yield,
            f if f == hipDeviceScheduleBlockingSync => WaitPolicy::Block,
            _ => WaitPolicy::Auto,
        }
    }

    /// The policy a stream's `hipSynchronizationPolicy` asks for; `None` for
    /// `hipSyncPolicyAuto` (the device's policy applies).
    pub fn from_sync_policy(policy: i32) -> Option<WaitPolicy> {
        match hipSynchronizationPolicy(policy) {
            hipSynchronizationPolicy::hipSyncPolicySpin => Some(WaitPolicy::Spin),
            hipSynchronizationPolicy::hipSyncPolicyYield => Some(WaitPolicy::Yield),
            hipSynchronizationPolicy::hipSyncPolicyBlockingSync => Some(WaitPolicy::Block),
            _ => None,
        }
    }
}

/// Threads of the process in a polling (`Auto`, `Spin`, `Yield`) wait now.
static POLLING: AtomicUsize = AtomicUsize::new(0);

/// CPUs this process may run on (`sched_getaffinity`, cgroup quota), at least 1.
fn cpus() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A thread's presence in a polling wait: counted in [`POLLING`] while it lives.
pub struct Polling {
    /// When this wait last yielded (or began).
    yielded: Instant,
}

impl Polling {
    pub fn enter() -> Polling {
        POLLING.fetch_add(1, Ordering::Relaxed);
        Polling { yielded: Instant::now() }
    }

    /// One step of a polling wait under `policy` (`Auto`, `Spin` or `Yield`): a spin-loop hint,
    /// or a `sched_yield`. `Auto` spins only while the polling threads (this one included) are
    /// fewer than the CPUs, so one CPU stays free for other work (on a 2-CPU machine one waiter
    /// spins), and yields once every [`AUTO_SPIN`] even then.
    pub fn step(&mut self, policy: WaitPolicy) {
        let spin = match policy {
            WaitPolicy::Spin => true,
            WaitPolicy::Auto => POLLING.load(Ordering::Relaxed) < cpus() && self.yielded.elapsed() < AUTO_SPIN,
            _ => false,
        };
        if spin {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
            self.yielded = Instant::now();
        }
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        POLLING.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Runtime {
    /// The wait policy of device `dev`'s flags (`hipSetDeviceFlags`, `hipCtxCreate`).
    pub fn device_wait_policy(&self, dev: usize) -> WaitPolicy {
        self.devices.get(dev).map_or(WaitPolicy::Auto, |d| WaitPolicy::from_device_flags(d.config.lock().flags))
    }
}
