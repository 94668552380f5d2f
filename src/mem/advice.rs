//! What `hipMemAdvise` and `hipMemPrefetchAsync` said of managed memory, for
//! `hipMemRangeGetAttribute(s)`. Managed memory never moves (src/core/memory.rs, `MemKind::Managed`),
//! so advice changes no placement; it is remembered per page, as runs of pages with the same
//! advice, and answered with AMD's semantics (rocclr `Device::GetSvmAttributes` over KFD's SVM
//! attributes): a value holds for a range only when every page of it has it.
//!
//! Runs live from the first advice on a page until the allocation is freed (`forget`).
//!
//! Layer `mem`: may call `core`, `abi` and its own layer.

use crate::core::va::PAGE_SIZE;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// `hipInvalidDeviceId`.
pub const INVALID_DEVICE: i32 = -2;
/// `hipCpuDeviceId`.
pub const CPU_DEVICE: i32 = -1;
/// The bit of the CPU in [`PageAdvice::accessed_by`] (devices use bits 0..63).
const CPU_BIT: u64 = 1 << 63;

/// The advice of one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageAdvice {
    pub read_mostly: bool,
    /// A device ordinal, [`CPU_DEVICE`], or [`INVALID_DEVICE`] (none).
    pub preferred: i32,
    /// Devices (bit per ordinal, bit 63 the CPU) advised `hipMemAdviseSetAccessedBy`.
    pub accessed_by: u64,
    /// Where `hipMemPrefetchAsync` last sent the page ([`INVALID_DEVICE`]: never).
    pub last_prefetch: i32,
    /// `hipMemAdviseSetCoarseGrain`.
    pub coarse: bool,
}

impl Default for PageAdvice {
    fn default() -> Self {
        PageAdvice {
            read_mostly: false,
            preferred: INVALID_DEVICE,
            accessed_by: 0,
            last_prefetch: INVALID_DEVICE,
            coarse: false,
        }
    }
}

/// The bit of `device` (an ordinal below 63, or [`CPU_DEVICE`]) in `accessed_by`.
pub fn device_bit(device: i32) -> u64 {
    match device {
        CPU_DEVICE => CPU_BIT,
        d if (0..63).contains(&d) => 1 << d,
        _ => 0,
    }
}

/// What a range's pages have in common, as `hipMemRangeGetAttribute` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeAdvice {
    /// Every page is read-mostly.
    pub read_mostly: bool,
    /// The preferred location of every page, else [`INVALID_DEVICE`].
    pub preferred: i32,
    /// Devices every page is advised accessed-by (bit per ordinal, bit 63 the CPU).
    pub accessed_by: u64,
    /// The last prefetch location of every page, else [`INVALID_DEVICE`].
    pub last_prefetch: i32,
    /// `hipMemRangeCoherencyMode`: 0 fine-grained, 1 coarse-grained, 2 both (indeterminate).
    pub coherency: i32,
}

/// Runs of pages with their advice: run start → (run end, advice); pages in no run have the
/// default advice.
#[derive(Debug, Default)]
pub struct AdviceMap {
    runs: Mutex<BTreeMap<u64, (u64, PageAdvice)>>,
}

/// `[start, start + len)` widened to whole pages.
fn pages(start: u64, len: u64) -> (u64, u64) {
    let s = start & !(PAGE_SIZE - 1);
    let e = start.saturating_add(len).saturating_add(PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    (s, e)
}

/// Makes `at` a run boundary (splits the run containing it).
fn split(m: &mut BTreeMap<u64, (u64, PageAdvice)>, at: u64) {
    if let Some((&s, &(e, a))) = m.range(..at).next_back() {
        if e > at {
            m.insert(s, (at, a));
            m.insert(at, (e, a));
        }
    }
}

impl AdviceMap {
    /// Applies `f` to the advice of every page of `[start, start + len)`.
    pub fn update(&self, start: u64, len: u64, f: impl Fn(&mut PageAdvice)) {
        let (s, e) = pages(start, len);
        let mut m = self.runs.lock();
        split(&mut m, s);
        split(&mut m, e);
        // Fill the gaps with default runs, then change every run inside.
        let mut at = s;
        let inside: Vec<(u64, u64)> = m.range(s..e).map(|(&rs, &(re, _))| (rs, re)).collect();
        for (rs, re) in inside {
            if rs > at {
                m.insert(at, (rs, PageAdvice::default()));
            }
            at = re;
        }
        if at < e {
            m.insert(at, (e, PageAdvice::default()));
        }
        for (_, (_, a)) in m.range_mut(s..e) {
            f(a);
        }
    }

    /// What every page of `[start, start + len)` has in common.
    pub fn query(&self, start: u64, len: u64) -> RangeAdvice {
        let (s, e) = pages(start, len);
        let m = self.runs.lock();
        let mut runs: Vec<PageAdvice> = vec![];
        let mut at = s;
        let first = m.range(..s).next_back().filter(|(_, &(re, _))| re > s).map(|(&rs, v)| (rs, *v));
        for (rs, (re, a)) in first.into_iter().chain(m.range(s..e).map(|(&rs, v)| (rs, *v))) {
            if rs > at {
                runs.push(PageAdvice::default());
            }
            runs.push(a);
            at = re;
        }
        if at < e {
            runs.push(PageAdvice::default());
        }
        let same = |f: fn(&PageAdvice) -> i32| {
            let v = f(&runs[0]);
            if runs.iter().all(|a| f(a) == v) {
                v
            } else {
                INVALID_DEVICE
            }
        };
        let coarse = runs.iter().filter(|a| a.coarse).count();
        RangeAdvice {
            read_mostly: runs.iter().all(|a| a.read_mostly),
            preferred: same(|a| a.preferred),
            accessed_by: runs.iter().fold(u64::MAX, |m, a| m & a.accessed_by),
            last_prefetch: same(|a| a.last_prefetch),
            coherency: match coarse {
                0 => 0,
                n if n == runs.len() => 1,
                _ => 2,
            },
        }
    }

    /// Forgets the advice of `[start, start + len)` (its allocation is being freed).
    pub fn forget(&self, start: u64, len: u64) {
        let (s, e) = pages(start, len);
        let mut m = self.runs.lock();
        split(&mut m, s);
        split(&mut m, e);
        let keys: Vec<u64> = m.range(s..e).map(|(&k, _)| k).collect();
        for k in keys {
            m.remove(&k);
        }
    }
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::Advice`](crate::core::runtime::Feature) slot.
    pub fn advice(&self) -> &AdviceMap {
        self.feature(crate::core::runtime::Feature::Advice, |_| AdviceMap::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = PAGE_SIZE;

    #[test]
    fn partial_ranges_and_gaps() {
        let m = AdviceMap::default();
        let base = 0x1000_0000;
        assert_eq!(
            m.query(base, 2 * P),
            RangeAdvice {
                read_mostly: false,
                preferred: INVALID_DEVICE,
                accessed_by: 0,
                last_prefetch: INVALID_DEVICE,
                coherency: 0,
            }
        );
        m.update(base, P, |a| a.read_mostly = true);
        assert!(m.query(base, P).read_mostly);
        assert!(m.query(base + 10, 5).read_mostly);
        assert!(!m.query(base, 2 * P).read_mostly);
        assert!(!m.query(base - P, 2 * P).read_mostly);
        // a run inside another splits it
        m.update(base + 3 * P, 4 * P, |a| a.preferred = 1);
        m.update(base + 4 * P, P, |a| a.preferred = CPU_DEVICE);
        assert_eq!(m.query(base + 3 * P, P).preferred, 1);
        assert_eq!(m.query(base + 4 * P, P).preferred, CPU_DEVICE);
        assert_eq!(m.query(base + 5 * P, 2 * P).preferred, 1);
        assert_eq!(m.query(base + 3 * P, 4 * P).preferred, INVALID_DEVICE);
        // a gap between two runs with the same value is the default
        m.update(base + 10 * P, P, |a| a.preferred = 1);
        assert_eq!(m.query(base + 6 * P, 5 * P).preferred, INVALID_DEVICE);
        // accessed-by intersects; coherency mixes
        m.update(base, 2 * P, |a| a.accessed_by |= device_bit(0) | device_bit(CPU_DEVICE));
        m.update(base + P, P, |a| a.accessed_by &= !device_bit(0));
        assert_eq!(m.query(base, 2 * P).accessed_by, device_bit(CPU_DEVICE));
        m.update(base, P, |a| a.coarse = true);
        assert_eq!(m.query(base, P).coherency, 1);
        assert_eq!(m.query(base, 2 * P).coherency, 2);
        m.forget(base, 20 * P);
        assert_eq!(m.query(base, 20 * P), m.query(base + 100 * P, P));
        assert!(m.runs.lock().is_empty());
    }
}
