//! The shared page of an IPC event (`hipEventInterprocess`): its layout, mapping, records and
//! waits. Below both src/core/event.rs (which records and waits on it) and src/share/ipc.rs (which makes,
//! exports and opens it).
//!
//! Layer `share`: may call `mem`, `core`, `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::ExportToken;
use crate::core::runtime::{runtime, Runtime};
use crate::core::stream::{Fence, Stream};
use crate::core::va::PAGE_SIZE;
use kfd_ioctl::kfd::*;
use kfd_ioctl::sdma;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

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
/// Offset of the recorder table: [`RECORDER_SLOTS`] slots of four u64 (pid, with [`SLOT_BUSY`]
/// while its owner fills it in; pid-namespace inode; process start time in clock ticks, field 22
/// of `/proc/<pid>/stat`; the highest record number the process claimed). Zero: a free slot.
const EVENT_RECORDERS: u64 = 256;
const RECORDER_SLOTS: u64 = 64;
const SLOT_BYTES: u64 = 32;
const SLOT_BUSY: u64 = 1 << 63;
/// How often the watcher thread looks for dead recorders while a stream waits on an IPC event.
const WATCH_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

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
///
/// **A recorder that dies** (killed with records queued) never completes them: each recording
/// process has a slot of the page's recorder table ([`EVENT_RECORDERS`]) with the highest record
/// number it claimed, and a process that waits (`hipEventSynchronize`, `hipEventQuery`, and
/// `hipStreamWaitEvent`, through the `hipkfd-ipcwatch` thread while the GPU wait is pending)
/// cancels the records of a recorder whose process is gone (no `/proc/<pid>`, a zombie, or a new
/// process with that pid: another start time), as [`Runtime::ipc_event_cancel`] does for a record
/// that could not be queued: so no stream or thread waits for ever on work that died with its
/// process (the bytes that work was to write are not there). The counter is a maximum, so that
/// also completes another live process's earlier record still in flight (records of one event
/// from several processes at once are unordered anyway). Processes of another pid namespace are
/// never judged dead; a recorder killed between claiming a number and writing its slot (a few
/// instructions), or with the table full (64 recorders), is not seen.
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
    /// Claims the next record number (noted in this process's recorder slot).
    pub fn next_seq(&self) -> u64 {
        let slot = self.recorder_slot();
        // u64: never wraps (2^64 records).
        let seq = self.word(EVENT_RECORDED).fetch_add(1, Ordering::AcqRel) + 1;
        if let Some(b) = slot {
            self.word(b + 24).fetch_max(seq, Ordering::AcqRel);
        }
        seq
    }

    /// This process's slot of the recorder table (claimed on its first record), if any is free.
    fn recorder_slot(&self) -> Option<u64> {
        let me = identity()?;
        let slots = (0..RECORDER_SLOTS).map(|i| EVENT_RECORDERS + i * SLOT_BYTES);
        if let Some(b) = slots.clone().find(|&b| {
            self.word(b).load(Ordering::Acquire) == me.pid
                && self.word(b + 8).load(Ordering::Acquire) == me.ns
                && self.word(b + 16).load(Ordering::Acquire) == me.start
        }) {
            return Some(b);
        }
        let b = slots.into_iter().find(|&b| {
            self.word(b).compare_exchange(0, me.pid | SLOT_BUSY, Ordering::AcqRel, Ordering::Acquire).is_ok()
        })?;
        self.word(b + 8).store(me.ns, Ordering::Release);
        self.word(b + 16).store(me.start, Ordering::Release);
        self.word(b + 24).store(0, Ordering::Release);
        self.word(b).store(me.pid, Ordering::Release);
        Some(b)
    }

    /// Cancels the records of recorders whose process is gone (see the type's docs) and frees
    /// their slots.
    fn reap_dead_recorders(&self) {
        let Some(me) = identity() else { return };
        for b in (0..RECORDER_SLOTS).map(|i| EVENT_RECORDERS + i * SLOT_BYTES) {
            let pid = self.word(b).load(Ordering::Acquire);
            if pid == 0 || pid & SLOT_BUSY != 0 || pid == me.pid || self.word(b + 8).load(Ordering::Acquire) != me.ns {
                continue;
            }
            if !process_gone(pid, self.word(b + 16).load(Ordering::Acquire)) {
                continue;
            }
            let claimed = self.word(b + 24).load(Ordering::Acquire);
            if claimed > self.done() {
                crate::core::log::hipkfd_log!(
                    "IPC event: recorder {pid} is gone; its records up to {claimed} are cancelled"
                );
                Runtime::ipc_event_cancel(self, claimed);
            }
            let _ = self.word(b).compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// Sleeps until the completion counter reaches `target` (FUTEX_WAIT on its low 32 bits; on
    /// each timeout, 1 s, it looks for recorders that died: a longer sleep than the watcher's, so
    /// that a long wait stays a sleep, not a poll).
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
            if self.done() < target {
                self.reap_dead_recorders();
            }
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
            crate::core::log::hipkfd_log!("USERPTR BO of an IPC event page: {e}");
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

    /// Whether every record of an IPC event (in any process) is done (the records of a
    /// recorder that died count as done).
    pub fn ipc_event_done(page: &EventPage) -> bool {
        if page.done() >= page.recorded() {
            return true;
        }
        // At most once a WATCH_PERIOD, so that a hipEventQuery loop stays cheap.
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        static LAST_MS: AtomicU64 = AtomicU64::new(u64::MAX);
        let now = EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64;
        let last = LAST_MS.load(Ordering::Relaxed);
        if last == u64::MAX || now.saturating_sub(last) >= WATCH_PERIOD.as_millis() as u64 {
            LAST_MS.store(now, Ordering::Relaxed);
            page.reap_dead_recorders();
        }
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
    /// a GPU fault). While the GPU waits, the `hipkfd-ipcwatch` thread looks for recorders that
    /// died.
    pub fn ipc_event_stream_wait(&self, page: &Arc<EventPage>, s: &Stream) -> Result<(), hipError_t> {
        let target = page.recorded();
        if page.done() >= target {
            return Ok(());
        }
        let f = self.stream_submit(s, &[], |pk| sdma::poll_seq_ge(pk, page.done_addr(), target))?;
        watch(page, target);
        let keep = page.clone();
        self.after_fence(f, Box::new(move || drop(keep)));
        Ok(())
    }
}

impl crate::core::event::SharedEvent for EventPage {
    fn next_seq(&self) -> u64 {
        EventPage::next_seq(self)
    }
    fn record_packet(&self, pk: &mut Vec<u32>, seq: u64) -> Result<(), sdma::EncodeError> {
        Runtime::ipc_event_record_packet(pk, self, seq)
    }
    fn cancel(&self, seq: u64) {
        Runtime::ipc_event_cancel(self, seq)
    }
    fn recorded(self: Arc<Self>, rt: &Runtime, f: Fence) {
        rt.ipc_event_recorded(f, self)
    }
    fn done(&self) -> bool {
        Runtime::ipc_event_done(self)
    }
    fn sync(&self) {
        Runtime::ipc_event_sync(self)
    }
    fn stream_wait(self: Arc<Self>, rt: &Runtime, s: &Stream) -> Result<(), hipError_t> {
        rt.ipc_event_stream_wait(&self, s)
    }
    fn unexport(&self, rt: &Runtime) {
        rt.ipc_event_unexport(self)
    }
}

/// The pending GPU waits on IPC events: (page, record number), for the watcher thread.
static WATCHED: parking_lot::Mutex<Vec<(std::sync::Weak<EventPage>, u64)>> = parking_lot::Mutex::new(Vec::new());
static WATCH_CV: parking_lot::Condvar = parking_lot::Condvar::new();

/// Hands a pending GPU wait to the watcher thread (`hipkfd-ipcwatch`, started on first use),
/// which cancels the records of its recorders that die while it is pending. The watcher holds the
/// page weakly: once the event is destroyed and the stream's poll has run, nobody waits and the
/// page (its memfd and mapping) goes at once, not at the watcher's next look.
fn watch(page: &Arc<EventPage>, target: u64) {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new().name("hipkfd-ipcwatch".into()).spawn(|| {
            let mut w = WATCHED.lock();
            loop {
                if w.is_empty() {
                    WATCH_CV.wait(&mut w);
                    continue;
                }
                // Sleeps unlocked: new waits are added meanwhile without waking it.
                parking_lot::MutexGuard::unlocked(&mut w, || std::thread::sleep(WATCH_PERIOD));
                w.retain(|(p, t)| {
                    let Some(p) = p.upgrade() else { return false };
                    if p.done() < *t {
                        p.reap_dead_recorders();
                    }
                    p.done() < *t
                });
            }
        });
        if spawned.is_err() {
            crate::core::log::hipkfd_log!("hipkfd-ipcwatch: no thread; waits on dead recorders are not released");
        }
    });
    let mut w = WATCHED.lock();
    w.push((Arc::downgrade(page), target));
    if w.len() == 1 {
        WATCH_CV.notify_one();
    }
}

/// A process as the recorder table names it.
#[derive(Clone, Copy)]
struct Identity {
    pid: u64,
    /// Inode of `/proc/self/ns/pid`.
    ns: u64,
    /// Start time (clock ticks after boot).
    start: u64,
}

/// This process's identity (looked up again after a fork).
fn identity() -> Option<Identity> {
    static ME: parking_lot::Mutex<Option<Identity>> = parking_lot::Mutex::new(None);
    let pid = std::process::id() as u64;
    let mut me = ME.lock();
    if let Some(m) = *me {
        if m.pid == pid {
            return Some(m);
        }
    }
    use std::os::unix::fs::MetadataExt;
    let ns = std::fs::metadata("/proc/self/ns/pid").ok()?.ino();
    let (_, start) = proc_stat(pid)?;
    *me = Some(Identity { pid, ns, start });
    *me
}

/// (state, start time) of process `pid` from `/proc/<pid>/stat` (fields 3 and 22).
fn proc_stat(pid: u64) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let mut f = text.get(text.rfind(')')? + 1..)?.split_whitespace();
    let state = f.next()?.chars().next()?;
    let start = f.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// Whether the process `pid` that started at `start` is gone: no such process, a zombie (killed,
/// not yet reaped), or another process with that pid.
fn process_gone(pid: u64, start: u64) -> bool {
    match proc_stat(pid) {
        None => true,
        Some((state, s)) => matches!(state, 'Z' | 'X' | 'x') || s != start,
    }
}
