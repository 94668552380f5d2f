//! Streams: ordered work on one device, run by an SDMA queue of that device.
//!
//! Each device has a null stream with a queue of its own, and a small pool of queues that the
//! other streams share round-robin (a queue is FIFO, so sharing only adds order; waits always
//! name work already queued, so it cannot deadlock). Legacy null-stream semantics: work on the
//! null stream first waits (POLL_REGMEM) for the last work of every blocking stream of its
//! device, and work on a blocking stream first waits for the null stream's last work.

use crate::api::types::hipError_t;
use crate::queue::SdmaQueue;
use crate::runtime::Runtime;
use kfd_ioctl::sdma;
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

/// `hipStreamNonBlocking`.
pub const STREAM_NON_BLOCKING: u32 = 0x1;
/// Queues shared by the non-null streams of a device.
pub const QUEUES_PER_DEVICE: usize = 4;

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
    pub queue: Arc<SdmaQueue>,
    /// The stream's last submission.
    last: Mutex<u64>,
}

impl Stream {
    /// The fence of the stream's last submission, if any.
    pub fn last_fence(&self) -> Option<Fence> {
        let seq = *self.last.lock();
        (seq > 0).then(|| Fence { queue: self.queue.clone(), seq })
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
    pub pool: Mutex<Vec<Arc<SdmaQueue>>>,
    pub next: Mutex<usize>,
    /// Every live non-null stream of the device.
    pub streams: Mutex<Vec<Weak<Stream>>>,
}

impl Runtime {
    /// The null stream of device `dev` (created with its queue on first use).
    pub fn null_stream(&self, dev: usize) -> Result<Arc<Stream>, hipError_t> {
        let mut n = self.streams[dev].null.lock();
        if let Some(s) = &*n {
            return Ok(s.clone());
        }
        let q = Arc::new(self.queue_create(dev)?);
        let s = Arc::new(Stream { dev, flags: 0, priority: 0, is_null: true, queue: q, last: Mutex::new(0) });
        *n = Some(s.clone());
        Ok(s)
    }

    /// Creates a stream on device `dev`.
    pub fn stream_create(&self, dev: usize, flags: u32, priority: i32) -> Result<Arc<Stream>, hipError_t> {
        let ds = &self.streams[dev];
        let queue = {
            let mut pool = ds.pool.lock();
            let mut next = ds.next.lock();
            let i = *next % QUEUES_PER_DEVICE;
            *next += 1;
            if i >= pool.len() {
                pool.push(Arc::new(self.queue_create(dev)?));
                pool.last().cloned().expect("just pushed")
            } else {
                pool[i].clone()
            }
        };
        let s = Arc::new(Stream { dev, flags, priority, is_null: false, queue, last: Mutex::new(0) });
        let mut all = ds.streams.lock();
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&s));
        Ok(s)
    }

    /// The fences a submission to `s` must wait for first (null-stream semantics).
    fn implicit_waits(&self, s: &Stream) -> Vec<Fence> {
        let ds = &self.streams[s.dev];
        if s.is_null {
            ds.streams
                .lock()
                .iter()
                .filter_map(|w| w.upgrade())
                .filter(|o| o.blocking())
                .filter_map(|o| o.last_fence())
                .collect()
        } else if s.blocking() {
            ds.null.lock().as_ref().and_then(|n| n.last_fence()).into_iter().collect()
        } else {
            vec![]
        }
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
        let seq = self.queue_submit(&s.queue, |pk| {
            for f in &all {
                if !Arc::ptr_eq(&f.queue, &s.queue) && !f.done() {
                    sdma::poll_regmem_ge(pk, f.queue.signal.addr, f.seq as u32, u32::MAX)?;
                }
            }
            build(pk)
        })?;
        *last = seq;
        Ok(Fence { queue: s.queue.clone(), seq })
    }

    /// Waits for a fence. Errors: `hipErrorIllegalAddress` after a VM fault.
    pub fn fence_wait(&self, f: &Fence) -> Result<(), hipError_t> {
        self.queue_wait(&f.queue, f.seq)
    }

    /// `hipStreamSynchronize`: all work of `s` (for the null stream, also of the blocking streams).
    pub fn stream_sync(&self, s: &Stream) -> Result<(), hipError_t> {
        for f in self.implicit_waits(s).into_iter().chain(s.last_fence()) {
            self.fence_wait(&f)?;
        }
        Ok(())
    }

    /// `hipStreamQuery`: whether all of `s`'s work is done.
    pub fn stream_query(&self, s: &Stream) -> Result<bool, hipError_t> {
        self.check_fault()?;
        Ok(s.idle() && (!s.is_null || self.implicit_waits(s).iter().all(|f| f.done())))
    }

    /// `hipDeviceSynchronize`: every stream of device `dev`.
    pub fn device_sync(&self, dev: usize) -> Result<(), hipError_t> {
        let ds = &self.streams[dev];
        let streams: Vec<Arc<Stream>> = ds.streams.lock().iter().filter_map(|w| w.upgrade()).collect();
        let null = ds.null.lock().clone();
        for s in streams.iter().chain(null.iter()) {
            if let Some(f) = s.last_fence() {
                self.fence_wait(&f)?;
            }
        }
        Ok(())
    }
}
