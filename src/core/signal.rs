//! Signals: u64 words in pinned system memory that SDMA engines write (FENCE, TIMESTAMP) and
//! POLL_REGMEM reads, mapped on every GPU and on the CPU at the same VA. And the KFD event page
//! with the process's memory-exception event, through which the runtime sleeps on GPU work and
//! learns of VM faults.
//!
//! **VM faults.** A GPU VM fault stops every queue of the process on that GPU (the KFD's
//! `kfd_dqm_evict_pasid`) and sets the process's memory-exception event with the fault's data
//! (`kfd_signal_vm_fault_event`); the work that faulted, and all work behind it on that GPU,
//! never completes. As ROCr does (`Runtime::VMFaultHandler`, run by its async-events thread
//! blocked in `hsaKmtWaitOnMultipleEvents` on the memory event), one process-wide thread,
//! `hipkfd-vmfault`, started at runtime init, sleeps in `AMDKFD_IOC_WAIT_EVENTS` on that event
//! with no timeout; when it wakes with a fault it stores it (sticky: `hipErrorIllegalAddress`
//! from then on) and ends (the event is not auto-reset: waiting again would return at once).
//! So looking for a fault ([`Runtime::check_fault`], [`Runtime::poll_fault`]) costs no syscall.
//! What holds: a wait for work that faulted (or that is queued behind it, or waits on it) ends
//! with `hipErrorIllegalAddress`, since that work never completes and every wait looks at the
//! sticky fault (a sleeping wait is woken by the memory event itself); a fault becomes visible
//! to every other call within a thread wake-up of the fault, so a call that waits only for work
//! that completed (another GPU's, say) right after a fault elsewhere may still succeed, and the
//! next one reports it. Should the thread not start, or its wait fail, [`Runtime::poll_fault`]
//! falls back to one non-blocking `WAIT_EVENTS` per call, as before.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::{gtt_flags, Bo};
use crate::core::runtime::Runtime;
use kfd_ioctl::kfd::*;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bytes of one chunk of signal slots.
const CHUNK: u64 = 64 << 10;
/// Bytes of one slot: the u64 word, and the biased second word of a sequence counter
/// (`kfd_ioctl::sdma::seq_signal`; unused by other signals).
const SLOT: u64 = 16;

/// A signal word; `addr` is both its GPU VA and CPU address (16-aligned; the slot's second word
/// at `addr + 8` holds a sequence counter's biased copy, see [`Signal::seed_seq`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    pub addr: u64,
}

impl Signal {
    fn word(&self) -> &AtomicU64 {
        // SAFETY: `addr` is an 8-byte aligned slot inside a signal chunk that stays CPU-mapped for
        // the life of the process (chunks are never freed); the GPU writes it only with aligned
        // stores, so an AtomicU64 view is sound.
        unsafe { &*(self.addr as *const AtomicU64) }
    }
    pub fn load(&self) -> u64 {
        self.word().load(Ordering::Acquire)
    }
    pub fn store(&self, v: u64) {
        self.word().store(v, Ordering::Release)
    }

    /// Starts a sequence counter (`kfd_ioctl::sdma::seq_signal` / `poll_seq_ge`) at `seq`: the
    /// word and its biased copy.
    pub fn seed_seq(&self, seq: u64) {
        // SAFETY: `addr + 8` is the second, 8-aligned word of this 16-byte slot (see `word`).
        let biased = unsafe { &*((self.addr + 8) as *const AtomicU64) };
        biased.store(seq.wrapping_add(kfd_ioctl::sdma::SEQ_BIAS), Ordering::Release);
        self.store(seq);
    }
}

/// The pool of signal slots (grows a 64 KiB chunk at a time; chunks live as long as the process).
#[derive(Debug, Default)]
pub struct SignalPool {
    free: Mutex<Vec<u64>>,
    chunks: Mutex<Vec<Bo>>,
}

impl Runtime {
    /// A zeroed signal slot (16 bytes). Errors: `hipErrorOutOfMemory`.
    pub fn signal_alloc(&self) -> Result<Signal, hipError_t> {
        let mut free = self.signals.free.lock();
        if free.is_empty() {
            let all: Vec<usize> = (0..self.devices.len()).collect();
            let bo = self.bo_alloc(0, CHUNK, gtt_flags(true) | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED, &all, true)?;
            free.extend((0..CHUNK / SLOT).rev().map(|i| bo.va + i * SLOT));
            self.signals.chunks.lock().push(bo);
        }
        let s = Signal { addr: free.pop().expect("refilled above") };
        s.seed_seq(0);
        Ok(s)
    }

    /// Gives a slot back.
    pub fn signal_free(&self, s: Signal) {
        self.signals.free.lock().push(s.addr);
    }
}

/// The KFD event page (dGPU path: our own GTT BO, handed to the first `CREATE_EVENT`) and the
/// process's memory-exception event.
#[derive(Debug)]
pub struct EventPage {
    pub bo: Bo,
    pub memory_event: u32,
    /// The fault watcher thread (module docs) is waiting on `memory_event`: while it is,
    /// [`Runtime::poll_fault`] makes no syscall.
    pub watched: AtomicBool,
}

/// One KFD signal event with its slot in the event page.
#[derive(Debug, Clone, Copy)]
pub struct KfdEvent {
    pub event_id: u32,
    /// GPU VA (== CPU address) of the event's u64 slot.
    pub slot_addr: u64,
}

impl Runtime {
    /// Allocates the event page, mapped on all GPUs, and creates the memory-exception event.
    pub fn event_page_init(&self) -> Result<EventPage, hipError_t> {
        let size = KFD_SIGNAL_EVENT_LIMIT as u64 * 8;
        let all: Vec<usize> = (0..self.devices.len()).collect();
        let bo = self.bo_alloc(0, size, gtt_flags(true) | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED, &all, true)?;
        let mut a = kfd_ioctl_create_event_args {
            event_page_offset: bo.handle,
            event_type: KFD_IOC_EVENT_MEMORY,
            auto_reset: 0,
            node_id: 0,
            ..Default::default()
        };
        if let Err(e) = self.kfd.create_event(&mut a) {
            crate::core::log::hipkfd_log!("CREATE_EVENT(MEMORY): {e}");
            self.bo_free(&bo);
            return Err(hipError_t::hipErrorOutOfMemory);
        }
        Ok(EventPage { bo, memory_event: a.event_id, watched: AtomicBool::new(false) })
    }

    /// Creates an auto-reset signal event; `TRAP(event_id)` after a FENCE of `event_id` to
    /// `slot_addr` fires it. Errors: `hipErrorOutOfMemory` (the KFD's 4096 slots are used up).
    pub fn kfd_event_create(&self) -> Result<KfdEvent, hipError_t> {
        let page = self.event_page()?;
        // The event page was handed over with the first CREATE_EVENT (the memory event); the
        // kernel refuses it a second time (kfd_events.c, kfd_kmap_event_page: EINVAL).
        let mut a = kfd_ioctl_create_event_args {
            event_page_offset: 0,
            event_type: KFD_IOC_EVENT_SIGNAL,
            auto_reset: 1,
            ..Default::default()
        };
        self.kfd.create_event(&mut a).map_err(|_| hipError_t::hipErrorOutOfMemory)?;
        Ok(KfdEvent { event_id: a.event_id, slot_addr: page.bo.va + a.event_slot_index as u64 * 8 })
    }

    /// Sleeps in `AMDKFD_IOC_WAIT_EVENTS` on `ev` and the memory-exception event, at most
    /// `timeout_ms`. A VM fault becomes sticky: `hipErrorIllegalAddress` from then on.
    pub fn kfd_event_wait(&self, ev: &KfdEvent, timeout_ms: u32) -> Result<(), hipError_t> {
        self.check_fault()?;
        let page = self.event_page()?;
        let mut evs = [
            kfd_event_data { event_id: ev.event_id, ..Default::default() },
            kfd_event_data { event_id: page.memory_event, ..Default::default() },
        ];
        match self.kfd.wait_events(&mut evs, false, timeout_ms) {
            Ok(_) => {}
            Err(e) => {
                crate::core::log::hipkfd_log!("WAIT_EVENTS: {e}");
                return Err(hipError_t::hipErrorUnknown);
            }
        }
        self.note_fault(&evs[1])
    }

    /// Starts the fault watcher (module docs): a detached thread, `hipkfd-vmfault`, that
    /// sleeps in `WAIT_EVENTS` on the memory-exception event until a GPU faults. Called once, at
    /// the end of runtime init (after any fork a test makes before using HIP; the thread blocks
    /// on the runtime's initialisation until `init` has returned). Without a thread (spawn
    /// failed) [`Runtime::poll_fault`] polls instead.
    pub(crate) fn fault_watcher_start(&self) {
        let Ok(page) = self.event_page() else { return };
        page.watched.store(true, Ordering::Release);
        // Detached: it never keeps the process alive, and exit ends it in its wait.
        let spawned = std::thread::Builder::new().name("hipkfd-vmfault".into()).spawn(|| {
            if let Ok(rt) = crate::core::runtime::runtime() {
                rt.fault_watch();
            }
        });
        if let Err(e) = spawned {
            crate::core::log::hipkfd_log!("no fault watcher thread ({e}): VM faults are polled");
            page.watched.store(false, Ordering::Release);
        }
    }

    /// The fault watcher's body: waits on the memory-exception event with no timeout until it
    /// reports a fault, stores it, and returns. A wait that fails (or returns without fault data,
    /// which would spin) hands the job back to [`Runtime::poll_fault`].
    fn fault_watch(&self) {
        let Ok(page) = self.event_page() else { return };
        loop {
            let mut evs = [kfd_event_data { event_id: page.memory_event, ..Default::default() }];
            match self.kfd.wait_events(&mut evs, false, KFD_EVENT_TIMEOUT_INFINITE) {
                Ok(r) => {
                    if self.note_fault(&evs[0]).is_err() {
                        // Stored; the event stays set, so there is nothing more to wait for.
                        return;
                    }
                    if r == KFD_IOC_WAIT_RESULT_COMPLETE {
                        crate::core::log::hipkfd_log!("memory event set without fault data: VM faults are polled");
                        break;
                    }
                }
                Err(e) => {
                    crate::core::log::hipkfd_log!("fault watcher: WAIT_EVENTS: {e}; VM faults are polled");
                    break;
                }
            }
        }
        page.watched.store(false, Ordering::Release);
    }

    /// Reports a VM fault of any work on the GPUs, also work the runtime did not submit: the
    /// sticky fault the fault watcher stored (module docs; no syscall). Only while no watcher
    /// waits (it could not start, or its wait failed): one `AMDKFD_IOC_WAIT_EVENTS` on the
    /// memory-exception event alone, timeout 0. Errors: `hipErrorIllegalAddress`.
    pub fn poll_fault(&self) -> Result<(), hipError_t> {
        self.check_fault()?;
        let page = self.event_page()?;
        if page.watched.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut evs = [kfd_event_data { event_id: page.memory_event, ..Default::default() }];
        if let Err(e) = self.kfd.wait_events(&mut evs, false, 0) {
            crate::core::log::hipkfd_log!("WAIT_EVENTS: {e}");
            return Err(hipError_t::hipErrorUnknown);
        }
        self.note_fault(&evs[0])
    }

    /// Makes a memory exception in `ev` (the memory-exception event's data) sticky; the first
    /// one stored stays.
    fn note_fault(&self, ev: &kfd_event_data) -> Result<(), hipError_t> {
        let m = ev.memory_exception_data();
        if m.va != 0 || m.failure.NotPresent != 0 || m.failure.ReadOnly != 0 {
            crate::core::log::hipkfd_log!(
                "GPU memory access fault: va {:#x} gpu_id {:#x} {:?}",
                m.va,
                m.gpu_id,
                m.failure
            );
            let _ = self.fault.set(m);
        }
        self.check_fault()
    }

    /// `hipErrorIllegalAddress` once any GPU reported a VM fault to this process (an atomic
    /// load: no syscall, no lock).
    pub fn check_fault(&self) -> Result<(), hipError_t> {
        match self.fault.get() {
            Some(_) => Err(hipError_t::hipErrorIllegalAddress),
            None => Ok(()),
        }
    }
}
