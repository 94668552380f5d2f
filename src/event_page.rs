//! The shared page of an IPC event (`hipEventInterprocess`): its layout, mapping, records and
//! waits. Below both src/event.rs (which records and waits on it) and src/ipc.rs (which makes,
//! exports and opens it).

use crate::api::types::hipError_t;
use crate::memory::ExportToken;
use crate::runtime::{runtime, Runtime};
use crate::stream::{Fence, Stream};
use crate::va::PAGE_SIZE;
use kfd_ioctl::kfd::*;
use kfd_ioctl::sdma;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes of an IPC event's shared page.
pub const EVENT_PAGE: u64 = PAGE_SIZE;
/// Magic in the first 8 bytes of an IPC event page (2: the completion counter has its biased
/// copy, so pages of the older layout are refused).
const EVENT_MAGIC: u64 = u64::from_le_bytes(*b"HKIPEVT2");
/// Offset of the record counter in the event page.
const EVENT_RECORDED: u64 = 8;
/// Offset of the completion counter (u64, then its biased copy; its low 32 bits are the futex
/// word: FUTEX_WAIT compares for equality, so their wrap is harmless) in the event page.
const EVENT_DONE: u64 = 64;

/// The shared page of an IPC event, mapped in each process at a VA of our aperture and registered
/// there as a USERPTR BO on every GPU, so that SDMA writes the record's completion into it and
/// POLL_REGMEM waits on it.
///
/// Layout: u64 magic at 0; u64 record counter at [`EVENT_RECORDED`] (bumped by whichever process
/// records); a sequence counter at [`EVENT_DONE`] (the u64 completion counter and its biased copy
/// at `EVENT_DONE + 8`), raised with `sdma::seq_signal` (two SDMA `ATOMIC UMAX64`) to the
/// record's number when the record's work is done, polled on the GPU with `sdma::poll_seq_ge`.
/// Both counters are u64 and start at the exporter's `seq_start` (0 unless `HIPKFD_SEQ_START`).
/// The low 32 bits of the completion counter are the futex word waiters sleep on; the recording
/// process's waker thread does the FUTEX_WAKE.
pub struct EventPage {
    pub memfd: OwnedFd,
    /// CPU address == GPU VA of the page.
    pub va: u64,
    /// USERPTR BO handle.
    handle: u64,
    gpus: Vec<u32>,
    /// The export token (exporter side).
    pub token: ExportToken,
}

impl std::fmt::Debug for EventPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EventPage({:#x})", self.va)
    }
}

impl EventPage {
    fn word(&self, off: u64) -> &AtomicU64 {
        // SAFETY: `va + off` is an 8-aligned word in our MAP_SHARED page, which stays mapped until
        // `drop`; other processes and the GPU only touch it with aligned atomic accesses.
        unsafe { &*((self.va + off) as *const AtomicU64) }
    }
    pub fn recorded(&self) -> u64 {
        self.word(EVENT_RECORDED).load(Ordering::Acquire)
    }
    pub fn done(&self) -> u64 {
        self.word(EVENT_DONE).load(Ordering::Acquire)
    }
    pub fn done_addr(&self) -> u64 {
        self.va + EVENT_DONE
    }
    /// Lays out a fresh page: both counters at `seq_start` (and the biased copy), then the magic.
    pub fn init(&self, seq_start: u64) {
        self.word(EVENT_RECORDED).store(seq_start, Ordering::Release);
        self.word(EVENT_DONE).store(seq_start, Ordering::Release);
        self.word(EVENT_DONE + 8).store(seq_start + sdma::SEQ_BIAS, Ordering::Release);
        self.word(0).store(EVENT_MAGIC, Ordering::Release);
    }
    /// Whether the page has our layout (its magic).
    pub fn valid(&self) -> bool {
        self.word(0).load(Ordering::Acquire) == EVENT_MAGIC
    }
    /// Claims the next record number.
    pub fn next_seq(&self) -> u64 {
        // u64: never wraps (2^64 records).
        self.word(EVENT_RECORDED).fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Sleeps until the completion counter reaches `target` (FUTEX_WAIT on its low 32 bits; a
    /// 1 s timeout only guards against a waker that died).
    fn wait(&self, target: u64) {
        loop {
            let d = self.done();
            if d >= target {
                return;
            }
            let ts = libc::timespec { tv_sec: 1, tv_nsec: 0 };
            // SAFETY: FUTEX_WAIT on an aligned u32 of our mapped page, with a valid timeout; the
            // kernel only reads the word.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.done_addr() as *const u32,
                    libc::FUTEX_WAIT,
                    d as u32,
                    &ts as *const libc::timespec,
                    std::ptr::null::<u32>(),
                    0u32,
                )
            };
        }
    }

    pub fn wake(&self) {
        // SAFETY: FUTEX_WAKE on an aligned u32 of our mapped page.
        unsafe { libc::syscall(libc::SYS_futex, self.done_addr() as *const u32, libc::FUTEX_WAKE, i32::MAX) };
    }
}

impl Drop for EventPage {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            rt.userptr_free(self.handle, &self.gpus);
            rt.va.unmap_cpu(self.va, EVENT_PAGE);
            rt.va.free(self.va, EVENT_PAGE);
        }
    }
}

impl Runtime {
    /// Maps an event page memfd into our aperture and registers it as a USERPTR BO on every GPU.
    pub fn event_page_map(&self, memfd: OwnedFd, token: ExportToken) -> Result<EventPage, hipError_t> {
        let oom = hipError_t::hipErrorOutOfMemory;
        let va = self.va.alloc(EVENT_PAGE, PAGE_SIZE).ok_or(oom)?;
        if self.va.map_cpu(va, EVENT_PAGE, memfd.as_raw_fd(), 0).is_err() {
            self.va.free(va, EVENT_PAGE);
            return Err(oom);
        }
        let undo_cpu = || {
            self.va.unmap_cpu(va, EVENT_PAGE);
            self.va.free(va, EVENT_PAGE);
        };
        let flags =
            KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
        let (handle, gpus) = self.userptr_bo(va, EVENT_PAGE, flags).map_err(|e| {
            crate::log::hipkfd_log!("USERPTR BO of an IPC event page: {e}");
            undo_cpu();
            oom
        })?;
        Ok(EventPage { memfd, va, handle, gpus, token })
    }

    /// The SDMA packet a record of an IPC event appends: completion counter := max(counter, seq).
    pub fn ipc_event_record_packet(pk: &mut Vec<u32>, page: &EventPage, seq: u64) -> Result<(), sdma::EncodeError> {
        sdma::seq_signal(pk, page.done_addr(), seq)
    }

    /// After a record of an IPC event was submitted with fence `f`: the completion thread waits
    /// for it and wakes the event's sleepers in every process.
    pub fn ipc_event_recorded(&self, f: Fence, page: Arc<EventPage>) {
        self.after_fence(f, Box::new(move || page.wake()));
    }

    /// A record that could not be queued: marks its number complete and wakes sleepers.
    pub fn ipc_event_cancel(page: &EventPage, seq: u64) {
        page.word(EVENT_DONE + 8).fetch_max(seq + sdma::SEQ_BIAS, Ordering::AcqRel);
        page.word(EVENT_DONE).fetch_max(seq, Ordering::AcqRel);
        page.wake();
    }

    /// Whether every record of an IPC event (in any process) is done.
    pub fn ipc_event_done(page: &EventPage) -> bool {
        page.done() >= page.recorded()
    }

    /// Sleeps until the records issued so far are done.
    pub fn ipc_event_sync(page: &EventPage) {
        page.wait(page.recorded());
    }

    /// `hipStreamWaitEvent` on an IPC event: later work on `s` waits on the GPU (`sdma::poll_seq_ge`
    /// on the completion counter, wrap-safe) for the records issued so far. The page stays mapped
    /// until the poll has run, even if the event is destroyed first (the fuzzer's two-process
    /// run: a hipEventDestroy right after hipStreamWaitEvent unmapped the page under the poll,
    /// a GPU fault).
    pub fn ipc_event_stream_wait(&self, page: &Arc<EventPage>, s: &Stream) -> Result<(), hipError_t> {
        let target = page.recorded();
        if page.done() >= target {
            return Ok(());
        }
        let f = self.stream_submit(s, &[], |pk| sdma::poll_seq_ge(pk, page.done_addr(), target))?;
        let keep = page.clone();
        self.after_fence(f, Box::new(move || drop(keep)));
        Ok(())
    }
}
