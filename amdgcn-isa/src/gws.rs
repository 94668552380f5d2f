//! Global wave sync (GWS) semaphores: the GPU's 64 sync resources as `ds_gws_init`,
//! `ds_gws_sema_v`, `ds_gws_sema_br`, `ds_gws_sema_p` and `ds_gws_sema_release_all` use them.
//!
//! Source: the ISA's "Global Wave Sync" section (GWS instruction table: each resource holds a
//! counter and a FIFO of waiting waves; `rid = (M0[21:16] + OFFSET0[5:0]) % 64`; INIT sets the
//! counter; SEMA_V and SEMA_BR release waves queued at the resource, or bank the release in the
//! counter when none is queued; SEMA_P takes a banked release or queues the wave;
//! SEMA_RELEASE_ALL releases every wave queued there), and LLVM's `SIISelLowering.cpp`
//! (`selectDSGWSIntrinsic`: "(<isa opaque base> + M0[21:16] + offset field) % 64"). The per-VMID
//! base is 0: KFD hands a queue all of the device's GWS (`kfd_ioctl_alloc_queue_gws`,
//! `first_gws = 0`).
//!
//! The state lives outside any dispatch ([`crate::Options::gws`]): it persists from one
//! dispatch to the next, as on the GPU (kfdtest `KFDGWSTest.Semaphore` initializes the counter
//! in one dispatch and uses it in the next).

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Sync resources per GPU (the ISA's 64; `num_gws` in the KFD topology).
pub const GWS_RESOURCES: usize = 64;

/// One sync resource used as a counting semaphore.
#[derive(Default)]
struct Resource {
    /// Releases banked for waves still to arrive.
    counter: u32,
    /// Waves queued by `ds_gws_sema_p`, oldest first (their wait ids).
    queue: VecDeque<u64>,
}

struct State {
    res: [Resource; GWS_RESOURCES],
    /// Waits that a release reached and whose wave has not yet taken it.
    granted: HashSet<u64>,
    next_id: u64,
}

impl Default for State {
    fn default() -> State {
        State { res: std::array::from_fn(|_| Resource::default()), granted: HashSet::new(), next_id: 0 }
    }
}

/// A GPU's GWS resources. Shared (`Arc`) between the dispatches of the queue that owns the GWS.
#[derive(Default)]
pub struct Gws {
    st: Mutex<State>,
    /// Counts the releases (SEMA_V, SEMA_BR, RELEASE_ALL, INIT); a waiting workgroup is worth
    /// retrying once it moved past the value seen when its wave queued.
    generation: AtomicU64,
}

impl std::fmt::Debug for Gws {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gws").field("generation", &self.generation()).finish_non_exhaustive()
    }
}

/// A wave queued at a semaphore by `ds_gws_sema_p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wait {
    pub rid: u8,
    pub id: u64,
    /// [`Gws::generation`] when the wave queued (or last found itself still queued).
    pub generation: u64,
}

impl Gws {
    pub fn new() -> Gws {
        Gws::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Resource `rid`'s counter (banked releases) and the waves queued there.
    pub fn resource(&self, rid: usize) -> (u32, usize) {
        let st = self.lock();
        let r = &st.res[rid % GWS_RESOURCES];
        (r.counter, r.queue.len())
    }

    /// `ds_gws_init`: the counter becomes `count`.
    pub(crate) fn init(&self, rid: usize, count: u32) {
        let mut st = self.lock();
        st.res[rid % GWS_RESOURCES].counter = count;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// `ds_gws_sema_v` (`n` = 1) and `ds_gws_sema_br`: releases up to `n` queued waves, oldest
    /// first, and banks the rest in the counter.
    pub(crate) fn release(&self, rid: usize, n: u32) {
        let mut st = self.lock();
        let st = &mut *st;
        let r = &mut st.res[rid % GWS_RESOURCES];
        let mut left = n;
        while left > 0 {
            let Some(id) = r.queue.pop_front() else { break };
            st.granted.insert(id);
            left -= 1;
        }
        r.counter = r.counter.wrapping_add(left);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// `ds_gws_sema_release_all`: releases the waves queued at `rid` now.
    pub(crate) fn release_all(&self, rid: usize) {
        let mut st = self.lock();
        let st = &mut *st;
        st.granted.extend(st.res[rid % GWS_RESOURCES].queue.drain(..));
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// `ds_gws_sema_p`, first try (`wait` None) or a queued wave's retry: Ok once the wave may
    /// go on (a banked release taken, or a release reached its place in the queue), else the
    /// wait to retry later.
    pub(crate) fn acquire(&self, rid: usize, wait: Option<Wait>) -> Result<(), Wait> {
        let mut st = self.lock();
        let generation = self.generation();
        if let Some(w) = wait {
            if st.granted.remove(&w.id) {
                return Ok(());
            }
            return Err(Wait { generation, ..w });
        }
        let r = &mut st.res[rid % GWS_RESOURCES];
        if r.counter > 0 {
            r.counter -= 1;
            return Ok(());
        }
        let id = st.next_id;
        st.next_id += 1;
        st.res[rid % GWS_RESOURCES].queue.push_back(id);
        Err(Wait { rid: (rid % GWS_RESOURCES) as u8, id, generation })
    }

    /// Takes back the wait of a wave that will not run on (its dispatch failed or was
    /// cancelled): out of its queue, or a release it was given goes back to the counter.
    pub(crate) fn withdraw(&self, w: Wait) {
        let mut st = self.lock();
        let st = &mut *st;
        let r = &mut st.res[w.rid as usize];
        if let Some(k) = r.queue.iter().position(|&id| id == w.id) {
            r.queue.remove(k);
        } else if st.granted.remove(&w.id) {
            r.counter = r.counter.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_takes_a_banked_release_or_queues() {
        let g = Gws::new();
        g.init(3, 2);
        assert_eq!(g.acquire(3, None), Ok(()));
        assert_eq!(g.acquire(3, None), Ok(()));
        let w = g.acquire(3, None).unwrap_err();
        assert_eq!(g.resource(3), (0, 1));
        // Still queued: the retry fails, with the generation it saw.
        let w = g.acquire(3, Some(w)).unwrap_err();
        g.release(3, 1);
        assert!(g.generation() > w.generation);
        // The release went to the queued wave, not to the counter.
        assert_eq!(g.resource(3), (0, 0));
        assert_eq!(g.acquire(3, Some(w)), Ok(()));
        // Resource ids wrap at 64.
        g.release(64 + 3, 1);
        assert_eq!(g.resource(3), (1, 0));
    }

    #[test]
    fn bulk_release_serves_the_queue_in_order_then_banks() {
        let g = Gws::new();
        let w: Vec<Wait> = (0..3).map(|_| g.acquire(0, None).unwrap_err()).collect();
        g.release(0, 2);
        assert_eq!(g.acquire(0, Some(w[2])).map_err(|e| e.id), Err(w[2].id));
        assert_eq!(g.acquire(0, Some(w[0])), Ok(()));
        assert_eq!(g.acquire(0, Some(w[1])), Ok(()));
        g.release(0, 4);
        assert_eq!(g.resource(0), (3, 0));
        assert_eq!(g.acquire(0, Some(w[2])), Ok(()));
    }

    #[test]
    fn release_all_releases_only_the_queued_waves() {
        let g = Gws::new();
        let w: Vec<Wait> = (0..5).map(|_| g.acquire(9, None).unwrap_err()).collect();
        g.release_all(9);
        assert_eq!(g.resource(9), (0, 0));
        for x in &w {
            assert_eq!(g.acquire(9, Some(*x)), Ok(()));
        }
        // Nothing banked: a later arrival waits.
        assert!(g.acquire(9, None).is_err());
    }

    #[test]
    fn withdrawn_waits_leave_the_queue_and_return_their_release() {
        let g = Gws::new();
        let a = g.acquire(1, None).unwrap_err();
        let b = g.acquire(1, None).unwrap_err();
        g.withdraw(a);
        assert_eq!(g.resource(1), (0, 1));
        g.release(1, 1);
        g.withdraw(b);
        assert_eq!(g.resource(1), (1, 0));
    }
}
