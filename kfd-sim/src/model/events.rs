//! KFD events (linux `drivers/gpu/drm/amd/amdkfd/kfd_events.c`).
//!
//! Signal events own an 8-byte slot in the process's signal page, initialised to
//! `UNSIGNALED_EVENT_SLOT` (-1). On dGPUs the page is the user's GTT BO whose KFD handle is passed
//! in `event_page_offset` of the first CREATE_EVENT (`kfd_kmap_event_page`); otherwise the model
//! allocates it and the user maps it with `KFD_MMAP_TYPE_EVENTS` (`kfd_event_mmap`). An SDMA TRAP
//! with `int_ctx = event_id` fires the event only if its slot is not -1
//! (`kfd_signal_event_interrupt` → `lookup_signaled_event_by_partial_id`), rewriting the slot to
//! -1 (`acknowledge_signal`). Waits follow `kfd_wait_on_events`: auto-reset events are consumed by
//! the waiter they wake, timeouts are in ms (0 = poll, 0xffffffff = infinite), memory-exception
//! data is copied back to the caller's array. As the kernel's per-event wait queues do, setting or
//! destroying an event wakes only the threads waiting on it (each wait sleeps on a condvar of its
//! own that the event's waiters point to): a thread asleep on the memory-exception event is not
//! woken by every TRAP.

use super::bo::Bo;
use super::process::{ProcState, Process};
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::Condvar;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `KFD_FIRST_NONSIGNAL_EVENT_ID` (`kfd_events.h`): ids of non-signal events start here.
pub const KFD_FIRST_NONSIGNAL_EVENT_ID: u32 = 0x8000_0000;
/// Bytes of the signal page (`KFD_SIGNAL_EVENT_LIMIT * 8`).
pub const SIGNAL_PAGE_SIZE: u64 = KFD_SIGNAL_EVENT_LIMIT as u64 * 8;

/// One waiter's view of one event (`struct kfd_event_waiter`).
pub struct Waiter {
    pub activated: AtomicBool,
    /// `event_age_enabled`: a SIGNAL event waited for with a nonzero `last_event_age` (KFD 1.14),
    /// whose age is copied back when it activates.
    pub event_age_enabled: bool,
    /// Set when the event is destroyed under the waiter (`waiter->event = NULL`).
    pub destroyed: AtomicBool,
    /// What the waiting thread sleeps on (with the process lock), shared by the waiters of one
    /// wait: notified when this event is set or destroyed (`wake_up_all(&ev->wq)`).
    pub wake: Arc<Condvar>,
}

/// `struct kfd_event`.
pub struct Event {
    pub id: u32,
    pub event_type: u32,
    pub auto_reset: bool,
    pub signaled: bool,
    /// `event_age`: 1 at creation, one more at every `set_event` (0 skipped: wraps to 2).
    pub event_age: u64,
    pub memory_exception_data: kfd_hsa_memory_exception_data,
    pub waiters: Vec<Arc<Waiter>>,
}

/// The process's signal page (`struct kfd_signal_page`).
pub struct SignalPage {
    pub bo: Arc<Bo>,
    /// User KFD handle it came from (`p->signal_handle`), 0 for a model-allocated page.
    pub user_handle: u64,
}

/// Events of one process.
pub struct EventTable {
    pub events: BTreeMap<u32, Event>,
    pub signal_page: Option<SignalPage>,
    /// `p->signal_mapped_size`.
    pub signal_mapped_size: u64,
    /// `p->signal_event_count` (starts at 1: id 0 is reserved).
    pub signal_event_count: u64,
}

impl EventTable {
    pub fn new() -> EventTable {
        EventTable { events: BTreeMap::new(), signal_page: None, signal_mapped_size: 0, signal_event_count: 1 }
    }

    fn slot(&self, id: u32) -> Option<u64> {
        let page = self.signal_page.as_ref()?;
        let off = id as u64 * 8;
        if off + 8 > page.bo.size {
            return None;
        }
        page.bo.read_u64(off).ok()
    }

    fn set_slot(&self, id: u32, v: u64) {
        if let Some(page) = &self.signal_page {
            let off = id as u64 * 8;
            if off + 8 <= page.bo.size {
                let _ = page.bo.write_u64(off, v);
            }
        }
    }

    /// `kfd_event_page_set`: installs `bo` as the signal page, all slots unsignaled.
    pub fn page_set(&mut self, bo: Arc<Bo>, user_handle: u64) -> Result<(), Errno> {
        if self.signal_page.is_some() {
            return Err(Errno::EBUSY);
        }
        let n = SIGNAL_PAGE_SIZE.min(bo.size);
        let ones = vec![0xffu8; n as usize];
        bo.write(0, &ones)?;
        self.signal_mapped_size = bo.size;
        self.signal_page = Some(SignalPage { bo, user_handle });
        Ok(())
    }

    /// `allocate_signal_page` (APU path): a model-owned page, mappable through /dev/kfd.
    fn allocate_signal_page(&mut self) -> Result<(), Errno> {
        let bo = Arc::new(Bo::new_memfd(0, KFD_IOC_ALLOC_MEM_FLAGS_GTT, SIGNAL_PAGE_SIZE)?);
        let ones = vec![0xffu8; SIGNAL_PAGE_SIZE as usize];
        bo.write(0, &ones)?;
        self.signal_page = Some(SignalPage { bo, user_handle: 0 });
        // "Oldest user mode expects 256 event slots".
        self.signal_mapped_size = 256 * 8;
        Ok(())
    }

    /// `kfd_event_create`. Returns `(event_id, event_page_offset, event_slot_index)`.
    pub fn create(&mut self, event_type: u32, auto_reset: bool) -> Result<(u32, u64, u32), Errno> {
        let mut ev = Event {
            id: 0,
            event_type,
            auto_reset,
            signaled: false,
            event_age: 1,
            memory_exception_data: Default::default(),
            waiters: Vec::new(),
        };
        match event_type {
            KFD_IOC_EVENT_SIGNAL | KFD_IOC_EVENT_DEBUG_EVENT => {
                // create_signal_event
                if self.signal_mapped_size != 0 && self.signal_event_count == self.signal_mapped_size / 8 {
                    return Err(Errno::ENOSPC);
                }
                if self.signal_page.is_none() {
                    self.allocate_signal_page()?;
                }
                let limit = (self.signal_mapped_size / 8).min(KFD_SIGNAL_EVENT_LIMIT as u64) as u32;
                let id = (1..limit).find(|i| !self.events.contains_key(i)).ok_or(Errno::ENOSPC)?;
                ev.id = id;
                self.set_slot(id, UNSIGNALED_EVENT_SLOT);
                self.signal_event_count += 1;
                self.events.insert(id, ev);
                Ok((id, kfd_ioctl::mmap::KFD_MMAP_TYPE_EVENTS, id))
            }
            _ => {
                // create_other_event
                let mut id = KFD_FIRST_NONSIGNAL_EVENT_ID;
                for k in self.events.range(KFD_FIRST_NONSIGNAL_EVENT_ID..).map(|(k, _)| *k) {
                    if k != id {
                        break;
                    }
                    id = id.checked_add(1).ok_or(Errno::ENOSPC)?;
                }
                ev.id = id;
                self.events.insert(id, ev);
                Ok((id, 0, 0))
            }
        }
    }

    /// `kfd_event_destroy` / `destroy_event`: wakes its waiters, who then fail.
    pub fn destroy(&mut self, id: u32) -> Result<(), Errno> {
        let ev = self.events.remove(&id).ok_or(Errno::EINVAL)?;
        for w in &ev.waiters {
            w.destroyed.store(true, Ordering::Release);
            w.wake.notify_all();
        }
        if ev.event_type == KFD_IOC_EVENT_SIGNAL || ev.event_type == KFD_IOC_EVENT_DEBUG_EVENT {
            self.signal_event_count -= 1;
        }
        Ok(())
    }

    /// `set_event`.
    fn set(ev: &mut Event) {
        ev.signaled = !ev.auto_reset || ev.waiters.is_empty();
        ev.event_age = ev.event_age.wrapping_add(1);
        if ev.event_age == 0 {
            ev.event_age = 2;
        }
        for w in &ev.waiters {
            w.activated.store(true, Ordering::Release);
            w.wake.notify_all();
        }
    }

    /// `kfd_set_event` (CPU signal: SIGNAL events only).
    pub fn set_event(&mut self, id: u32) -> Result<(), Errno> {
        let ev = self.events.get_mut(&id).ok_or(Errno::EINVAL)?;
        if ev.event_type != KFD_IOC_EVENT_SIGNAL {
            return Err(Errno::EINVAL);
        }
        Self::set(ev);
        Ok(())
    }

    /// `kfd_reset_event`.
    pub fn reset_event(&mut self, id: u32) -> Result<(), Errno> {
        let ev = self.events.get_mut(&id).ok_or(Errno::EINVAL)?;
        if ev.event_type != KFD_IOC_EVENT_SIGNAL {
            return Err(Errno::EINVAL);
        }
        ev.signaled = false;
        Ok(())
    }

    /// `kfd_signal_event_interrupt(pasid, int_ctx & 0xfffffff, 28)`: the SDMA TRAP path.
    /// Returns true if any event was set.
    pub fn signal_interrupt(&mut self, partial_id: u32) -> bool {
        if self.signal_page.is_none() {
            return false;
        }
        let gpu_signaled = |t: u32| t == KFD_IOC_EVENT_SIGNAL || t == KFD_IOC_EVENT_DEBUG_EVENT;
        // Fast path (28 valid bits ≥ log2(limit)): the slot of `partial_id` itself.
        if partial_id < KFD_SIGNAL_EVENT_LIMIT && self.slot(partial_id).is_some_and(|s| s != UNSIGNALED_EVENT_SLOT) {
            if let Some(ev) = self.events.get(&partial_id) {
                if gpu_signaled(ev.event_type) {
                    self.set_slot(partial_id, UNSIGNALED_EVENT_SLOT);
                    let ev = self.events.get_mut(&partial_id).unwrap();
                    Self::set(ev);
                    return true;
                }
                return false;
            }
        }
        // Partial id invalid or not signaled: exhaustive scan of signaled slots.
        let ids: Vec<u32> = self
            .events
            .range(..KFD_SIGNAL_EVENT_LIMIT)
            .filter(|(_, e)| gpu_signaled(e.event_type))
            .map(|(k, _)| *k)
            .collect();
        let mut any = false;
        for id in ids {
            if self.slot(id).is_some_and(|s| s != UNSIGNALED_EVENT_SLOT) {
                self.set_slot(id, UNSIGNALED_EVENT_SLOT);
                Self::set(self.events.get_mut(&id).unwrap());
                any = true;
            }
        }
        any
    }

    /// `kfd_signal_vm_fault_event`: sets every MEMORY event with `data`.
    pub fn signal_memory_exception(&mut self, data: kfd_hsa_memory_exception_data) {
        for ev in self.events.values_mut() {
            if ev.event_type == KFD_IOC_EVENT_MEMORY {
                ev.memory_exception_data = data;
                Self::set(ev);
            }
        }
    }
}

impl Default for EventTable {
    fn default() -> Self {
        Self::new()
    }
}

/// `kfd_wait_on_events`. `events` is the user's array (already copied in); on return it holds
/// the memory-exception data of activated MEMORY events. Sleeps on a condvar of its own, which
/// the events it waits for notify, releasing the process lock. Returns `wait_result`, or the errno with `wait_result = FAIL` set by the caller.
pub fn wait_on_events(
    proc: &Process,
    st: &mut parking_lot::MutexGuard<'_, ProcState>,
    events: &mut [kfd_event_data],
    all: bool,
    timeout_ms: u32,
) -> Result<u32, Errno> {
    // init_event_waiter for each
    let mut waiters: Vec<(u32, Arc<Waiter>)> = Vec::with_capacity(events.len());
    let wake = Arc::new(Condvar::new());
    let mut err = None;
    for e in events.iter() {
        let Some(ev) = st.events.events.get_mut(&e.event_id) else {
            err = Some(Errno::EINVAL);
            break;
        };
        // A SIGNAL event waited for with its last seen age is activated when it has been set
        // since, signaled or not (init_event_waiter).
        let age = e.last_event_age();
        let event_age_enabled = ev.event_type == KFD_IOC_EVENT_SIGNAL && age != 0;
        let w = Arc::new(Waiter {
            activated: AtomicBool::new(ev.signaled || (event_age_enabled && ev.event_age != age)),
            event_age_enabled,
            destroyed: AtomicBool::new(false),
            wake: wake.clone(),
        });
        ev.signaled = ev.signaled && !ev.auto_reset;
        if !w.activated.load(Ordering::Relaxed) {
            ev.waiters.push(w.clone());
        }
        waiters.push((e.event_id, w));
    }

    let test = |waiters: &[(u32, Arc<Waiter>)]| -> u32 {
        let mut n = 0;
        for (_, w) in waiters {
            if w.destroyed.load(Ordering::Acquire) {
                return KFD_IOC_WAIT_RESULT_FAIL;
            }
            if w.activated.load(Ordering::Acquire) {
                if !all {
                    return KFD_IOC_WAIT_RESULT_COMPLETE;
                }
                n += 1;
            }
        }
        if n == waiters.len() {
            KFD_IOC_WAIT_RESULT_COMPLETE
        } else {
            KFD_IOC_WAIT_RESULT_TIMEOUT
        }
    };

    let mut result = KFD_IOC_WAIT_RESULT_FAIL;
    if err.is_none() {
        result = test(&waiters);
        if result == KFD_IOC_WAIT_RESULT_TIMEOUT && timeout_ms != KFD_EVENT_TIMEOUT_IMMEDIATE {
            let deadline = if timeout_ms == KFD_EVENT_TIMEOUT_INFINITE {
                None
            } else {
                Some(Instant::now() + Duration::from_millis(timeout_ms.min(0x7fff_ffff) as u64))
            };
            // The engine may be parked in its backoff: make it look at the rings now. Once is
            // enough: from then on it sees a doorbell store within its backoff (at once on a
            // watched page), as it does when nobody waits; a waiter that sleeps forever (the
            // runtime's fault watcher) costs no wake-ups.
            proc.engine.kick();
            loop {
                match deadline {
                    None => wake.wait(st),
                    Some(d) => {
                        let now = Instant::now();
                        if now >= d {
                            result = test(&waiters);
                            break;
                        }
                        wake.wait_for(st, d - now);
                    }
                }
                result = test(&waiters);
                if result != KFD_IOC_WAIT_RESULT_TIMEOUT {
                    break;
                }
            }
        }
        if result == KFD_IOC_WAIT_RESULT_COMPLETE {
            // copy_signaled_event_data
            for (i, (id, w)) in waiters.iter().enumerate() {
                if w.destroyed.load(Ordering::Acquire) {
                    err = Some(Errno::EINVAL);
                    break;
                }
                if w.activated.load(Ordering::Acquire) {
                    if let Some(ev) = st.events.events.get(id) {
                        if ev.event_type == KFD_IOC_EVENT_MEMORY {
                            events[i].set_memory_exception_data(&ev.memory_exception_data);
                        } else if w.event_age_enabled {
                            events[i].set_last_event_age(ev.event_age);
                        }
                    }
                }
            }
        }
    }

    // free_waiters
    for (id, w) in &waiters {
        if let Some(ev) = st.events.events.get_mut(id) {
            ev.waiters.retain(|x| !Arc::ptr_eq(x, w));
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    if result == KFD_IOC_WAIT_RESULT_FAIL {
        return Err(Errno::EIO);
    }
    Ok(result)
}
