//! SDMA user queues: the copy and fill engine of every stream.
//!
//! Layout as ROCr's `BlitSdma` and the kernel's `kfd_queue_acquire_buffers` want it: the ring is
//! its own GTT BO of exactly `RING_SIZE` bytes, rptr and wptr (u64 byte indices) share one GTT page,
//! both GPU-mapped on the queue's device; the doorbell is a u64 in the process's doorbell page,
//! mmapped from `/dev/kfd`. Every submission ends with the 64-bit completion of its seq on the
//! queue's signal (`sdma::seq_signal`: two ATOMIC UMAX64), FENCE(event id → event slot) and
//! TRAP(event id), so waiters can sleep in `WAIT_EVENTS` (or poll the signal: src/core/wait.rs).
//! Sequence numbers are u64 and never wrap; other queues wait for them with `sdma::poll_seq_ge`
//! (wrap-safe over the 32-bit POLL_REGMEM).
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::{gtt_flags, Bo};
use crate::core::runtime::Runtime;
use crate::core::signal::{KfdEvent, Signal};
use crate::core::wait::{Polling, WaitPolicy, BACKGROUND_POLL, BLOCK_POLL, FAULT_POLL};
use kfd_ioctl::kfd::*;
use kfd_ioctl::mmap::KFD_DOORBELL_PROCESS_SLICE;
use kfd_ioctl::sdma;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes of each ring (power of two).
pub const RING_SIZE: u64 = 256 << 10;
/// How long one `WAIT_EVENTS` sleeps before the waiter re-checks (ms); wake-ups are by TRAP.
const WAIT_SLICE_MS: u32 = 100;

#[derive(Debug)]
struct QState {
    /// Bytes written so far (monotonic; ring offset = wptr % RING_SIZE).
    wptr: u64,
    /// Submissions so far; the completion signal reaches `seq` when they are all done.
    seq: u64,
}

/// One SDMA queue of one device.
#[derive(Debug)]
pub struct SdmaQueue {
    /// HIP ordinal.
    pub dev: usize,
    pub queue_id: u32,
    ring: Bo,
    rw: Bo,
    doorbell: u64,
    doorbell_page: u64,
    /// Completion signal: a sequence counter (`sdma::seq_signal`) holding the seq of the last
    /// finished submission.
    pub signal: Signal,
    event: KfdEvent,
    state: Mutex<QState>,
    /// The AQL queue that runs the kernels of the streams on this queue (src/kernels/aql.rs), made on
    /// their first launch: kernels are as FIFO as the copies around them, no more. An
    /// `Option<Arc<AqlQueue>>` of src/kernels/aql.rs.
    pub aql: crate::core::runtime::Slot,
    /// The KFD `queue_priority` that AQL queue gets (`stream::aql_priority` of its streams).
    pub aql_priority: u32,
}

impl SdmaQueue {
    fn rptr(&self) -> &AtomicU64 {
        // SAFETY: `rw.va` is a CPU-mapped, page-aligned GTT BO that lives as long as `self`.
        unsafe { &*(self.rw.va as *const AtomicU64) }
    }
    fn wptr_word(&self) -> &AtomicU64 {
        // SAFETY: as above, 8 bytes further in the same page.
        unsafe { &*((self.rw.va + 8) as *const AtomicU64) }
    }

    /// Whether submission `seq` has completed.
    pub fn done(&self, seq: u64) -> bool {
        self.signal.load() >= seq
    }

    /// The seq of the last submission.
    pub fn last_seq(&self) -> u64 {
        self.state.lock().seq
    }
}

impl Runtime {
    /// Creates an SDMA queue on device `dev` for streams (`AMDKFD_IOC_CREATE_QUEUE`): type SDMA,
    /// or SDMA_XGMI once the PCIe engines' queues are all taken. The KFD gives a process
    /// `num_sdma_engines × num_sdma_queues_per_engine` queues of each kind per GPU
    /// (`kfd_device_queue_manager.c`, `allocate_sdma_queue`: ENOMEM past them; 16 and 24 on
    /// gfx90a), and an xGMI engine runs any copy. On 8 GPUs a device's null stream, its pool
    /// and the proxies of the 7 other null streams already hold 12 of the 16. Errors:
    /// `hipErrorOutOfMemory`.
    pub fn queue_create(&self, dev: usize) -> Result<SdmaQueue, hipError_t> {
        self.queue_create_typed(dev, KFD_IOC_QUEUE_TYPE_SDMA)
            .or_else(|e| self.queue_create_typed(dev, KFD_IOC_QUEUE_TYPE_SDMA_XGMI).map_err(|_| e))
    }

    /// Creates an SDMA queue of `queue_type` (`KFD_IOC_QUEUE_TYPE_SDMA` or `_SDMA_XGMI`) on
    /// device `dev`. Errors: `hipErrorOutOfMemory` (no BO, no queue left on the engines).
    pub fn queue_create_typed(&self, dev: usize, queue_type: u32) -> Result<SdmaQueue, hipError_t> {
        let d = &self.devices[dev];
        let ring = self.bo_alloc(dev, RING_SIZE, gtt_flags(false), &[dev], true)?;
        let rw = match self.bo_alloc(dev, 4096, gtt_flags(true) | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED, &[dev], true) {
            Ok(b) => b,
            Err(e) => {
                self.bo_free(&ring);
                return Err(e);
            }
        };
        let cleanup = |sig: Option<Signal>| {
            self.bo_free(&rw);
            self.bo_free(&ring);
            if let Some(s) = sig {
                self.signal_free(s);
            }
        };
        let signal = match self.signal_alloc() {
            Ok(s) => {
                s.seed_seq(self.seq_start);
                s
            }
            Err(e) => {
                cleanup(None);
                return Err(e);
            }
        };
        let event = match self.kfd_event_create() {
            Ok(e) => e,
            Err(e) => {
                cleanup(Some(signal));
                return Err(e);
            }
        };
        let mut a = kfd_ioctl_create_queue_args {
            ring_base_address: ring.va,
            write_pointer_address: rw.va + 8,
            read_pointer_address: rw.va,
            ring_size: RING_SIZE as u32,
            gpu_id: d.gpu_id,
            queue_type,
            queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
            queue_priority: KFD_MAX_QUEUE_PRIORITY,
            ..Default::default()
        };
        if let Err(e) = self.kfd.create_queue(&mut a) {
            crate::core::log::hipkfd_log!("CREATE_QUEUE type {queue_type} on gpu {:#x}: {e}", d.gpu_id);
            let _ = self.kfd.destroy_event(event.event_id);
            cleanup(Some(signal));
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        let (page, doorbell) = match self.doorbell_map(a.doorbell_offset) {
            Ok(m) => m,
            Err(e) => {
                let _ = self.kfd.destroy_queue(a.queue_id);
                let _ = self.kfd.destroy_event(event.event_id);
                cleanup(Some(signal));
                return Err(e);
            }
        };
        crate::core::log::hipkfd_log!("SDMA queue {} on device {dev}: ring {:#x}", a.queue_id, ring.va);
        Ok(SdmaQueue {
            dev,
            queue_id: a.queue_id,
            ring,
            rw,
            doorbell,
            doorbell_page: page,
            signal,
            event,
            state: Mutex::new(QState { wptr: 0, seq: self.seq_start }),
            aql: Default::default(),
            aql_priority: crate::core::stream::aql_priority(0),
        })
    }

    /// Maps the process's doorbell page holding the doorbell at `doorbell_offset` (what
    /// CREATE_QUEUE returned) from `/dev/kfd`; returns the page and the doorbell's address.
    /// Errors: `hipErrorOutOfMemory`.
    pub fn doorbell_map(&self, doorbell_offset: u64) -> Result<(u64, u64), hipError_t> {
        let page_off = doorbell_offset & !(KFD_DOORBELL_PROCESS_SLICE - 1);
        // SAFETY: maps the process's doorbell page of this GPU from /dev/kfd at the offset the
        // KFD returned; a fresh mapping the kernel places.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                KFD_DOORBELL_PROCESS_SLICE as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.kfd.fd(),
                page_off as libc::off_t,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        Ok((page as u64, page as u64 + (doorbell_offset & (KFD_DOORBELL_PROCESS_SLICE - 1))))
    }

    /// Unmaps a page mapped by [`doorbell_map`](Self::doorbell_map).
    pub fn doorbell_unmap(&self, page: u64) {
        // SAFETY: unmapping the doorbell page mapped by doorbell_map.
        unsafe { libc::munmap(page as *mut libc::c_void, KFD_DOORBELL_PROCESS_SLICE as usize) };
    }

    /// Destroys a queue made by [`queue_create`](Self::queue_create) after its work is done.
    pub fn queue_destroy(&self, q: &SdmaQueue) {
        let _ = self.queue_wait(q, q.last_seq());
        let _ = self.kfd.destroy_queue(q.queue_id);
        self.doorbell_unmap(q.doorbell_page);
        let _ = self.kfd.destroy_event(q.event.event_id);
        self.bo_free(&q.rw);
        self.bo_free(&q.ring);
        self.signal_free(q.signal);
    }

    /// Submits the packets `build` writes, plus the completion FENCEs and TRAP; returns the seq
    /// that the queue's signal reaches when they are done.
    pub fn queue_submit(
        &self,
        q: &SdmaQueue,
        build: impl FnOnce(&mut Vec<u32>) -> Result<(), sdma::EncodeError>,
    ) -> Result<u64, hipError_t> {
        self.queue_submit_with(q, true, build)
    }

    /// As [`Runtime::queue_submit`]; without `trap` the submission ends with the signal only (no
    /// FENCE and TRAP of the queue's event), for a submission that only other queues wait for
    /// (POLL_REGMEM) and that a later trapping submission on `q` follows: a host waiter sleeping
    /// on the event is not woken by every step of a long chain (the event wakes every
    /// `WAIT_EVENTS` of the process).
    pub fn queue_submit_with(
        &self,
        q: &SdmaQueue,
        trap: bool,
        build: impl FnOnce(&mut Vec<u32>) -> Result<(), sdma::EncodeError>,
    ) -> Result<u64, hipError_t> {
        self.check_fault()?;
        let mut pk = Vec::with_capacity(64);
        build(&mut pk).map_err(|e| {
            crate::core::log::hipkfd_log!("SDMA packet: {e:?}");
            hipError_t::hipErrorInvalidValue
        })?;
        let mut st = q.state.lock();
        // u64: 2^64 submissions do not happen (≈ 5.8 million years at 100,000 a second).
        let seq = st.seq + 1;
        let tail = |pk: &mut Vec<u32>| -> Result<(), sdma::EncodeError> {
            sdma::seq_signal(pk, q.signal.addr, seq)?;
            if !trap {
                return Ok(());
            }
            sdma::fence(pk, q.event.slot_addr, q.event.event_id)?;
            sdma::trap(pk, q.event.event_id)
        };
        tail(&mut pk).expect("signal and event slots are 8-byte aligned");
        let bytes = pk.len() as u64 * 4;
        assert!(bytes < RING_SIZE / 2, "one submission must fit in half a ring");
        let off = st.wptr % RING_SIZE;
        let pad = if off + bytes > RING_SIZE { RING_SIZE - off } else { 0 };
        let end = st.wptr + pad + bytes;
        // Wait for room: the engine's rptr must be within RING_SIZE of the new wptr.
        while end - q.rptr().load(Ordering::Acquire) > RING_SIZE {
            self.kfd_event_wait(&q.event, 1)?;
        }
        let ring = q.ring.va as *mut u32;
        // SAFETY: the ring BO is CPU-mapped for RING_SIZE bytes; [off, off+pad) and the packet's
        // range lie inside it, and the engine has consumed them (rptr check above).
        unsafe {
            if pad > 0 {
                std::ptr::write_bytes(ring.add((off / 4) as usize), 0, (pad / 4) as usize);
            }
            let start = (st.wptr + pad) % RING_SIZE;
            std::ptr::copy_nonoverlapping(pk.as_ptr(), ring.add((start / 4) as usize), pk.len());
        }
        st.wptr = end;
        st.seq = seq;
        q.wptr_word().store(end, Ordering::Release);
        // SAFETY: `doorbell` is the queue's u64 slot in the mapped doorbell page.
        unsafe { std::ptr::write_volatile(q.doorbell as *mut u64, end) };
        Ok(seq)
    }

    /// Waits until submission `seq` of `q` is done, as its device's flags say
    /// ([`Runtime::device_wait_policy`]). Errors: `hipErrorIllegalAddress` after a VM fault.
    pub fn queue_wait(&self, q: &SdmaQueue, seq: u64) -> Result<(), hipError_t> {
        self.queue_wait_with(q, seq, self.device_wait_policy(q.dev))
    }

    /// Waits until submission `seq` of `q` is done under `policy` (src/core/wait.rs): `Block`
    /// polls between `sched_yield`s for [`BLOCK_POLL`], `Background` for [`BACKGROUND_POLL`],
    /// then each sleeps in `AMDKFD_IOC_WAIT_EVENTS` (on the queue's event and the
    /// memory-exception event) until the engine's TRAP; the others poll the completion signal.
    /// Every wait looks at the sticky VM fault as it polls (no syscall, src/core/signal.rs); a
    /// submission already done, or done within the polling window, costs no syscall.
    /// Errors: `hipErrorIllegalAddress` after a VM fault.
    pub fn queue_wait_with(&self, q: &SdmaQueue, seq: u64, policy: WaitPolicy) -> Result<(), hipError_t> {
        if q.done(seq) {
            return Ok(());
        }
        self.check_fault()?;
        match policy {
            WaitPolicy::Block => self.queue_poll_then_sleep(q, seq, BLOCK_POLL),
            WaitPolicy::Background => self.queue_poll_then_sleep(q, seq, BACKGROUND_POLL),
            _ => self.queue_poll(q, seq, policy),
        }
    }

    /// Polls `q`'s completion signal between `sched_yield`s for `window`, then sleeps in
    /// `WAIT_EVENTS` until submission `seq` is done (spin, then block).
    fn queue_poll_then_sleep(&self, q: &SdmaQueue, seq: u64, window: Duration) -> Result<(), hipError_t> {
        let t0 = Instant::now();
        {
            let mut polling = Polling::enter();
            while !q.done(seq) {
                if t0.elapsed() >= window {
                    break;
                }
                polling.step(WaitPolicy::Yield);
                self.check_fault()?;
            }
        }
        while !q.done(seq) {
            self.kfd_event_wait(&q.event, WAIT_SLICE_MS)?;
        }
        Ok(())
    }

    /// Polls `q`'s completion signal under `policy` (`Auto`, `Spin` or `Yield`) until
    /// submission `seq` is done, looking at the sticky VM fault every 64 steps, and calling
    /// [`Runtime::poll_fault`] every [`FAULT_POLL`] (a syscall only without the fault watcher).
    fn queue_poll(&self, q: &SdmaQueue, seq: u64, policy: WaitPolicy) -> Result<(), hipError_t> {
        let mut polling = Polling::enter();
        let mut next_fault_poll = Instant::now() + FAULT_POLL;
        let mut n = 0u32;
        while !q.done(seq) {
            polling.step(policy);
            // Every 64 steps: a step is tens of ns, a clock read about as much.
            n = n.wrapping_add(1);
            if n.is_multiple_of(64) {
                self.check_fault()?;
                if Instant::now() >= next_fault_poll {
                    self.poll_fault()?;
                    next_fault_poll += FAULT_POLL;
                }
            }
        }
        Ok(())
    }
}
