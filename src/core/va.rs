//! The VA manager: one reserved range of the process's address space from which every GPU VA is
//! handed out, so that GPU VA == CPU VA for every allocation (as libhsakmt's SVM aperture does,
//! `fmm.c`). The range is an anonymous `PROT_NONE`, `MAP_NORESERVE` mapping: reserving it costs no
//! memory; a sub-range gets pages only when a BO is mapped over it with `MAP_FIXED`.
//!
//! Layer `core`: may call `abi` and its own layer.

use nix::errno::Errno;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// Bytes in a page.
pub const PAGE_SIZE: u64 = 4096;
/// The alignment given to allocations of at least this size (bytes): the GPUVM fragment size.
pub const LARGE_ALIGN: u64 = 2 << 20;

pub fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// Whether every page of `[start, start + len)` lies in a mapping of the process, whatever its
/// protection, as the KFD checks an SVM range (`svm_range_is_valid`: VMAs only): `mincore`
/// fails with ENOMEM on a hole. O(pages) with no page-table population, where pinning
/// (`MADV_POPULATE_READ`, get_user_pages) costs about 100x more.
pub fn pages_mapped(start: u64, len: u64) -> bool {
    const WINDOW: u64 = 1 << 16; // pages per mincore call (256 MiB)
    let Some(end) = start.checked_add(len).map(|e| align_up(e, PAGE_SIZE)) else { return false };
    let mut at = start & !(PAGE_SIZE - 1);
    let mut vec = vec![0u8; WINDOW.min((end - at) / PAGE_SIZE) as usize];
    while at < end {
        let n = ((end - at) / PAGE_SIZE).min(WINDOW);
        // SAFETY: `vec` has a byte for each of the `n` pages asked about; mincore writes nothing
        // else and reads no memory.
        if unsafe { libc::mincore(at as *mut libc::c_void, (n * PAGE_SIZE) as usize, vec.as_mut_ptr()) } != 0 {
            return false;
        }
        at += n * PAGE_SIZE;
    }
    true
}

/// A first-fit allocator over a reserved aperture `[base, base + size)`.
#[derive(Debug)]
pub struct VaManager {
    base: u64,
    size: u64,
    /// Free ranges: start → length (bytes), coalesced.
    free: Mutex<BTreeMap<u64, u64>>,
}

impl VaManager {
    /// Reserves an aperture inside `[lo, hi)`, trying `want` bytes first and halving down to
    /// 16 GiB if the address space has no room.
    pub fn reserve(lo: u64, hi: u64, want: u64) -> Result<Self, Errno> {
        let mut size = want;
        loop {
            // SAFETY: a fresh anonymous PROT_NONE mapping at an address the kernel picks; it
            // aliases nothing.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    (size + LARGE_ALIGN) as usize,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                let raw = p as u64;
                let base = align_up(raw, LARGE_ALIGN);
                if base >= lo && base + size <= hi {
                    return Ok(Self { base, size, free: Mutex::new(BTreeMap::from([(base, size)])) });
                }
                // SAFETY: unmapping exactly the mapping created above.
                unsafe { libc::munmap(p, (size + LARGE_ALIGN) as usize) };
            }
            if size <= 16 << 30 {
                return Err(Errno::ENOMEM);
            }
            size /= 2;
        }
    }

    /// The aperture, `(base, size)` in bytes.
    pub fn aperture(&self) -> (u64, u64) {
        (self.base, self.size)
    }

    /// Whether `[ptr, ptr+len)` touches the aperture (where no host memory can be).
    pub fn contains(&self, ptr: u64, len: u64) -> bool {
        ptr < self.base + self.size && ptr.saturating_add(len.max(1)) > self.base
    }

    /// Takes `size` bytes aligned to `align` (a power of two). `None` when the aperture is full.
    pub fn alloc(&self, size: u64, align: u64) -> Option<u64> {
        let mut free = self.free.lock();
        let (start, len, at) = free.iter().find_map(|(&start, &len)| {
            let at = align_up(start, align);
            (at + size <= start + len).then_some((start, len, at))
        })?;
        free.remove(&start);
        if at > start {
            free.insert(start, at - start);
        }
        if at + size < start + len {
            free.insert(at + size, start + len - at - size);
        }
        Some(at)
    }

    /// Takes exactly `[va, va + size)` if it is free (the address hint of
    /// `hipMemAddressReserve`). Returns whether it was.
    pub fn alloc_at(&self, va: u64, size: u64) -> bool {
        let mut free = self.free.lock();
        let Some((&start, &len)) = free.range(..=va).next_back() else { return false };
        let Some(end) = va.checked_add(size) else { return false };
        if end > start + len {
            return false;
        }
        free.remove(&start);
        if va > start {
            free.insert(start, va - start);
        }
        if end < start + len {
            free.insert(end, start + len - end);
        }
        true
    }

    /// Gives back `[va, va + size)`, which [`alloc`](Self::alloc) returned.
    pub fn free(&self, va: u64, size: u64) {
        let mut free = self.free.lock();
        let (mut start, mut len) = (va, size);
        if let Some((&ps, &pl)) = free.range(..va).next_back() {
            if ps + pl == va {
                free.remove(&ps);
                start = ps;
                len += pl;
            }
        }
        if let Some(&nl) = free.get(&(va + size)) {
            free.remove(&(va + size));
            len += nl;
        }
        free.insert(start, len);
    }

    /// CPU-maps `size` bytes of `fd` at `offset` (a BO through the render node, or a shared
    /// memfd) read-write over `[va, va + size)`, a range [`alloc`](Self::alloc) returned.
    /// [`unmap_cpu`](Self::unmap_cpu) undoes it. Errors: the errno of `mmap(2)`.
    pub fn map_cpu(&self, va: u64, size: u64, fd: std::os::fd::RawFd, offset: u64) -> Result<(), Errno> {
        self.map_cpu_prot(va, size, fd, offset, libc::PROT_READ | libc::PROT_WRITE)
    }

    /// [`map_cpu`](Self::map_cpu) with the protection `prot` (`PROT_*`).
    pub fn map_cpu_prot(
        &self,
        va: u64,
        size: u64,
        fd: std::os::fd::RawFd,
        offset: u64,
        prot: libc::c_int,
    ) -> Result<(), Errno> {
        assert!(self.contains(va, size), "map_cpu outside the aperture");
        // SAFETY: `[va, va+size)` lies in our reserved aperture (checked above); MAP_FIXED replaces
        // only our own PROT_NONE reservation there with `fd`'s pages.
        let p = unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size as usize,
                prot,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            Err(Errno::last())
        } else {
            Ok(())
        }
    }

    /// Puts the `PROT_NONE` reservation back over `[va, va + size)` after a BO mapping there
    /// is gone, so the range stays reserved for us.
    pub fn unmap_cpu(&self, va: u64, size: u64) {
        // SAFETY: `[va, va+size)` lies in our aperture; MAP_FIXED replaces only our own mapping.
        unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_coalesces() {
        let va = VaManager::reserve(0, u64::MAX, 64 << 30).unwrap();
        let (base, size) = va.aperture();
        let a = va.alloc(PAGE_SIZE, PAGE_SIZE).unwrap();
        let b = va.alloc(LARGE_ALIGN, LARGE_ALIGN).unwrap();
        assert_eq!(b % LARGE_ALIGN, 0);
        assert!(a >= base && b + LARGE_ALIGN <= base + size);
        assert_ne!(a, b);
        va.free(a, PAGE_SIZE);
        va.free(b, LARGE_ALIGN);
        assert_eq!(*va.free.lock(), BTreeMap::from([(base, size)]));
    }

    #[test]
    fn alloc_at_takes_exactly_a_free_range() {
        let va = VaManager::reserve(0, u64::MAX, 64 << 30).unwrap();
        let (base, size) = va.aperture();
        let at = base + (1 << 30);
        assert!(va.alloc_at(at, LARGE_ALIGN));
        assert!(!va.alloc_at(at + PAGE_SIZE, PAGE_SIZE), "inside a taken range");
        assert!(!va.alloc_at(at - PAGE_SIZE, 2 * PAGE_SIZE), "overlapping a taken range");
        assert!(!va.alloc_at(base + size - PAGE_SIZE, 2 * PAGE_SIZE), "past the aperture");
        assert!(!va.alloc_at(u64::MAX - PAGE_SIZE, 2 * PAGE_SIZE), "wrapping");
        va.free(at, LARGE_ALIGN);
        assert_eq!(*va.free.lock(), BTreeMap::from([(base, size)]));
    }
}
