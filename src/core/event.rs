//! HIP events: a recorded event is a fence in a stream's queue, plus a TIMESTAMP written by the
//! SDMA engine when timing is enabled. Timestamps tick at 100 MHz (the SDMA
//! `GET_GLOBAL_TIMESTAMP` reference clock of gfx9).
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::runtime::Runtime;
use crate::core::signal::Signal;
use crate::core::stream::{Fence, Stream};
use crate::core::wait::WaitPolicy;
use kfd_ioctl::sdma;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// `hipEventBlockingSync`.
pub const EVENT_BLOCKING_SYNC: u32 = 0x1;
/// `hipEventDisableTiming`.
pub const EVENT_DISABLE_TIMING: u32 = 0x2;
/// `hipEventInterprocess`.
pub const EVENT_INTERPROCESS: u32 = 0x4;
/// SDMA timestamp ticks per millisecond.
pub const TICKS_PER_MS: f64 = 100_000.0;

#[derive(Debug)]
pub struct Event {
    pub flags: u32,
    /// HIP ordinal of the device current at creation; records go to its streams only.
    pub dev: usize,
    /// Where the engine writes the timestamp (none when timing is disabled).
    pub ts: Option<Signal>,
    /// The last record.
    pub fence: Mutex<Option<Fence>>,
    /// Every record not known to be done, the last one included: each writes `ts` when it runs,
    /// and records on two streams may finish in either order. The slot is given back only
    /// after all of them ([`Runtime::event_destroy`]).
    ts_writers: Mutex<Vec<Fence>>,
    /// The page shared with other processes (`hipIpcGetEventHandle` / `hipIpcOpenEventHandle`:
    /// an `EventPage` of src/share/event_page.rs).
    pub ipc: OnceLock<Arc<dyn SharedEvent>>,
    /// The capture in progress the event was last recorded in, if any: an
    /// `Option<EventCapture>` of src/graph.
    pub capture: crate::core::runtime::Slot,
}

/// What the core's event calls ask of an event shared with other processes (an IPC event's
/// page, src/share/event_page.rs), whose records and completions count across processes. The
/// core keeps it without naming its type.
pub trait SharedEvent: std::any::Any + Send + Sync + std::fmt::Debug {
    /// Claims the number of a new record.
    fn next_seq(&self) -> u64;
    /// Appends to `pk` the packets that complete record `seq` (after the work before them).
    fn record_packet(&self, pk: &mut Vec<u32>, seq: u64) -> Result<(), sdma::EncodeError>;
    /// Record `seq` could not be queued: completes its number.
    fn cancel(&self, seq: u64);
    /// Record `seq` was queued and ends with fence `f`: wake the sleepers once it is done.
    fn recorded(self: Arc<Self>, rt: &Runtime, f: Fence);
    /// Whether every record of any process is done.
    fn done(&self) -> bool;
    /// Sleeps until the records issued so far, in any process, are done.
    fn sync(&self);
    /// Later work on `s` waits (on the GPU) for the records issued so far.
    fn stream_wait(self: Arc<Self>, rt: &Runtime, s: &Stream) -> Result<(), hipError_t>;
    /// The event is destroyed: its handle is refused from now on.
    fn unexport(&self, rt: &Runtime);
}

impl Runtime {
    pub fn event_create(&self, flags: u32, dev: usize) -> Result<Event, hipError_t> {
        let ts = if flags & EVENT_DISABLE_TIMING == 0 { Some(self.signal_alloc()?) } else { None };
        Ok(Event {
            flags,
            dev,
            ts,
            fence: Mutex::new(None),
            ts_writers: Mutex::new(vec![]),
            ipc: OnceLock::new(),
            capture: Default::default(),
        })
    }

    /// Releases an event without waiting for its records; the timestamp slot is given back once
    /// no engine can write it any more: after every record, not only the last (an earlier one
    /// on a stream still blocked would otherwise write a timestamp into the slot's next owner,
    /// a queue's completion signal say, and end its waits early).
    pub fn event_destroy(&self, e: &Event) {
        if let Some(p) = e.ipc.get() {
            p.unexport(self);
        }
        e.fence.lock().take();
        let writers: Vec<Fence> = std::mem::take(&mut *e.ts_writers.lock());
        if let Some(s) = e.ts {
            self.defer_free_after(writers.into_iter().filter(|f| !f.done()).collect(), s);
        }
    }

    /// `hipEventRecord` on `s`.
    pub fn event_record(&self, e: &Event, s: &Stream) -> Result<(), hipError_t> {
        let mut fence = e.fence.lock();
        let page = e.ipc.get().cloned();
        let seq = page.as_ref().map(|p| p.next_seq());
        let f = self.stream_submit(s, &[], |pk| {
            if let (Some(p), Some(seq)) = (&page, seq) {
                p.record_packet(pk, seq)?;
            }
            match e.ts {
                Some(ts) => sdma::timestamp(pk, ts.addr),
                None => Ok(()),
            }
        });
        let f = match (f, &page, seq) {
            (Ok(f), _, _) => f,
            (Err(err), Some(p), Some(seq)) => {
                // Nothing was queued: complete the claimed record number so nobody waits for it.
                p.cancel(seq);
                return Err(err);
            }
            (Err(err), _, _) => return Err(err),
        };
        if let Some(p) = page {
            p.recorded(self, f.clone());
        }
        if e.ts.is_some() {
            let mut w = e.ts_writers.lock();
            w.retain(|x| !x.done());
            w.push(f.clone());
        }
        *fence = Some(f);
        Ok(())
    }

    /// Whether the last record is done (an event never recorded is done). An IPC event is done
    /// when its shared completion counter covers every record of any process, ours included:
    /// our record's own fence is written by a later packet of the same submission, so it can
    /// still read "not done" after another process has seen the record complete (found by the
    /// fault sweep: `wrap_ipc_event_cross_process` under EINTR-class faults).
    pub fn event_done(&self, e: &Event) -> Result<bool, hipError_t> {
        self.check_fault()?;
        Ok(match e.ipc.get() {
            // Every record of an IPC event, ours included, completes its page counter with its
            // own packet, after the work it follows and before the submission's fence: done
            // there is done (another process may see it, and answer us, before that fence lands).
            Some(p) => p.done(),
            None => e.fence.lock().as_ref().is_none_or(|f| f.done()),
        })
    }

    /// `hipEventSynchronize`: waits for the event's last record (every record of any process
    /// for an IPC event). An event made with `hipEventBlockingSync` sleeps in `WAIT_EVENTS`;
    /// others wait as the recording device's flags say (clr `Device::IsHwEventReady`; see
    /// src/core/wait.rs). Errors: `hipErrorIllegalAddress` after a VM fault.
    pub fn event_sync(&self, e: &Event) -> Result<(), hipError_t> {
        let f = e.fence.lock().clone();
        if let Some(f) = f {
            let policy = if e.flags & EVENT_BLOCKING_SYNC != 0 {
                WaitPolicy::Block
            } else {
                self.device_wait_policy(f.queue.dev)
            };
            self.fence_wait_with(&f, policy)?;
        }
        if let Some(p) = e.ipc.get() {
            p.sync();
        }
        self.check_fault()
    }

    /// Milliseconds between two completed records. Errors: `hipErrorInvalidHandle` when either
    /// event has timing disabled or was never recorded, `hipErrorNotReady` when either is pending.
    pub fn event_elapsed(&self, start: &Event, stop: &Event) -> Result<f32, hipError_t> {
        let (Some(t0), Some(t1)) = (start.ts, stop.ts) else { return Err(hipError_t::hipErrorInvalidHandle) };
        if start.dev != stop.dev {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        // One lock at a time: `start` and `stop` may be the same event.
        let f0 = start.fence.lock().clone();
        let f1 = stop.fence.lock().clone();
        let (Some(f0), Some(f1)) = (f0, f1) else { return Err(hipError_t::hipErrorInvalidHandle) };
        self.check_fault()?;
        if !f0.done() || !f1.done() {
            return Err(hipError_t::hipErrorNotReady);
        }
        let ticks = t1.load() as i64 - t0.load() as i64;
        Ok((ticks as f64 / TICKS_PER_MS) as f32)
    }
}
