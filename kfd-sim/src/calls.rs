//! Per-call counters: how many times this process entered each simulated ioctl and `mmap` of a
//! simulated device file, counted at the dispatch entry (`model::ioctl_file`, `model::mmap`),
//! failed calls included. Read through `kfdsim_stat("calls.<NAME>")`, NAME as `KFDSIM_FAULTS`
//! names calls (`WAIT_EVENTS`, `ALLOC_MEMORY_OF_GPU`, `GEM_VA`, `UDMABUF_CREATE`, `mmap`), and
//! `calls.total` (every ioctl and mmap). Not in the `KFDSIM_STATS` exit record: these count
//! work done, not state held. A forked child starts with its parent's counts.

use crate::model::DevKind;
use kfd_ioctl::kfd::{ioc_nr, Ioctl};
use std::sync::atomic::{AtomicU64, Ordering};

/// One counter per (device kind, ioctl number): KFD, DRM (core and amdgpu share the `'d'` type,
/// told apart by number), udmabuf.
static IOCTLS: [AtomicU64; 3 * 256] = [const { AtomicU64::new(0) }; 3 * 256];
static MMAPS: AtomicU64 = AtomicU64::new(0);

fn kind_index(kind: DevKind) -> usize {
    match kind {
        DevKind::Kfd => 0,
        DevKind::Render { .. } => 1,
        DevKind::Udmabuf => 2,
    }
}

/// Counts one ioctl `request` on a device of `kind`.
pub fn count_ioctl(kind: DevKind, request: Ioctl) {
    let i = kind_index(kind) * 256 + (ioc_nr(request) as usize & 0xff);
    IOCTLS[i].fetch_add(1, Ordering::Relaxed);
}

/// Counts one `mmap` of a simulated device file.
pub fn count_mmap() {
    MMAPS.fetch_add(1, Ordering::Relaxed);
}

/// The counter `key` (`calls.<NAME>`, `calls.total`), or `None` when `key` names none.
pub fn stat(key: &str) -> Option<u64> {
    let name = key.strip_prefix("calls.")?;
    let load = |i: usize| IOCTLS[i].load(Ordering::Relaxed);
    match name {
        "total" => return Some((0..IOCTLS.len()).map(load).sum::<u64>() + MMAPS.load(Ordering::Relaxed)),
        "mmap" => return Some(MMAPS.load(Ordering::Relaxed)),
        "UDMABUF_CREATE" => return Some(load(2 * 256 + ioc_nr(crate::model::udmabuf::UDMABUF_CREATE) as usize)),
        "UDMABUF_CREATE_LIST" => {
            return Some(load(2 * 256 + ioc_nr(crate::model::udmabuf::UDMABUF_CREATE_LIST) as usize))
        }
        _ => {}
    }
    let kfd = kfd_ioctl::kfd::KFD_IOCTLS.iter().map(|e| (0, e));
    let drm = kfd_ioctl::drm::DRM_IOCTLS.iter().chain(kfd_ioctl::amdgpu::AMDGPU_IOCTLS).map(|e| (1, e));
    kfd.chain(drm)
        .find(|(_, (_, n))| crate::faults::short_name(n) == name)
        .map(|(k, (r, _))| load(k * 256 + (ioc_nr(*r) as usize & 0xff)))
}
