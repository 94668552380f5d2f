//! GPUVM: one GPU virtual address space per (process, GPU), the model's `amdgpu_vm`.
//!
//! Mappings live in a `BTreeMap` keyed by start VA, so translating an address is an O(log n)
//! range query (`amdgpu_vm_bo_lookup_mapping` uses an interval tree for the same job). A mapping
//! points at a BO and an offset in it; a BO of GPU A mapped in GPU B's VM is peer access.
//!
//! With XNACK on (`AMDKFD_IOC_SET_XNACK_MODE`), an access that no mapping covers is a retry fault
//! that the kernel serves from the process's own pages (`svm_range_restore_pages` →
//! `svm_range_create_unregistered_range`): the VM then reaches any pageable memory of the
//! process (HMM), through one USERPTR-like BO over the whole address space ([`Hmm`]). A VA that
//! another GPU of the process has a BO mapped at is not served (`svm_range_check_vm`:
//! -EADDRINUSE), so the fault stands: device memory is reached through mappings only.

use super::bo::Bo;
use super::svm::{Reach, Svms};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// One GPU VA mapping (`amdgpu_bo_va_mapping`).
#[derive(Clone)]
pub struct Mapping {
    /// First byte (page aligned).
    pub start: u64,
    /// Length in bytes (page multiple).
    pub len: u64,
    pub bo: Arc<Bo>,
    /// Byte offset of `start` inside the BO.
    pub bo_offset: u64,
    pub writable: bool,
    pub executable: bool,
    /// User queues whose rptr/wptr/ring live in this mapping (`bo_va->queue_refcount`):
    /// unmapping is refused with EBUSY while non-zero.
    pub queue_refcount: u32,
}

impl Mapping {
    pub fn end(&self) -> u64 {
        self.start + self.len
    }
}

/// Why a GPU access failed (becomes a KFD memory exception).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// No mapping (`failure.NotPresent`).
    NotPresent,
    /// Write to a mapping without write permission (`failure.ReadOnly`).
    ReadOnly,
}

/// A VM fault at `va`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub va: u64,
    pub kind: FaultKind,
}

/// End of the user address space (x86-64, 4-level paging: `TASK_SIZE`): the VAs an XNACK
/// retry fault can resolve to process pages.
pub const HMM_LIMIT: u64 = 1 << 47;

/// One piece of a translated range: `len` bytes at `bo_offset` of `bo`.
pub struct Segment {
    pub bo: Arc<Bo>,
    pub bo_offset: u64,
    pub len: u64,
}

/// A GPU virtual address space.
#[derive(Default)]
pub struct Gpuvm {
    map: BTreeMap<u64, Mapping>,
    /// XNACK on: the retry-fault service of the process, which serves the accesses no mapping
    /// covers. None: such an access is a VM fault.
    hmm: Option<Arc<Hmm>>,
    /// The process's SVM ranges and this VM's gpuidx among them (set at ACQUIRE_VM): a range
    /// this GPU has access to is reached where no mapping covers it, before (and instead of)
    /// the retry-fault service.
    svm: Option<(Arc<Svms>, usize)>,
}

/// The retry-fault service that a process's compute VMs share while XNACK is on.
pub struct Hmm {
    /// The process's address space as a USERPTR BO (offset = VA).
    bo: Arc<Bo>,
    /// The process's compute VMs: a VA with a BO mapping in any of them is not served.
    vms: RwLock<Vec<Weak<RwLock<Gpuvm>>>>,
}

impl Hmm {
    pub fn new() -> Arc<Hmm> {
        Arc::new(Hmm { bo: Arc::new(Bo::new_userptr(0, 0, 0, HMM_LIMIT)), vms: RwLock::new(Vec::new()) })
    }

    /// Makes `hmm` (the process's service, None with XNACK off) serve compute VM `vm`: with
    /// XNACK on, `vm`'s mappings also bound what the other VMs are served.
    pub fn serve(hmm: &Option<Arc<Hmm>>, vm: &Arc<RwLock<Gpuvm>>) {
        if let Some(h) = hmm {
            h.add_vm(vm);
        }
        vm.write().set_xnack(hmm.clone());
    }

    /// Serves (and checks against) `vm` too: call before handing `vm` this service.
    fn add_vm(&self, vm: &Arc<RwLock<Gpuvm>>) {
        let mut vms = self.vms.write();
        vms.retain(|w| w.strong_count() > 0);
        if !vms.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(vm))) {
            vms.push(Arc::downgrade(vm));
        }
    }

    /// From `va` (which `this` VM does not map), the end of the run of VAs up to `end` that no
    /// other VM of the process maps either; None when one maps `va` itself (the fault stands).
    /// The other VMs are read with recursive read locks (a waiting writer does not block them),
    /// and one held for writing longer than a second counts as mapping nothing.
    fn free_run(&self, this: &Gpuvm, va: u64, end: u64) -> Option<u64> {
        let mut run_end = end;
        for w in self.vms.read().iter() {
            let Some(vm) = w.upgrade() else { continue };
            if std::ptr::eq(vm.data_ptr(), this) {
                continue;
            }
            let Some(vm) = vm.try_read_recursive_for(Duration::from_secs(1)) else { continue };
            if vm.lookup(va).is_some() {
                return None;
            }
            if let Some((s, _)) = vm.map.range(va..run_end).next() {
                run_end = *s;
            }
        }
        Some(run_end)
    }
}

impl Gpuvm {
    /// The mapping containing `va` (`amdgpu_vm_bo_lookup_mapping`).
    pub fn lookup(&self, va: u64) -> Option<&Mapping> {
        let (_, m) = self.map.range(..=va).next_back()?;
        (va < m.end()).then_some(m)
    }

    /// Mutable lookup by exact start.
    pub fn get_mut(&mut self, start: u64) -> Option<&mut Mapping> {
        self.map.get_mut(&start)
    }

    /// True if `[start, start+len)` overlaps an existing mapping.
    pub fn overlaps(&self, start: u64, len: u64) -> bool {
        let end = start.saturating_add(len);
        if let Some(m) = self.lookup(start) {
            let _ = m;
            return true;
        }
        self.map.range(start..end).next().is_some()
    }

    /// Inserts a mapping; the caller has checked `overlaps`.
    pub fn insert(&mut self, m: Mapping) {
        self.map.insert(m.start, m);
    }

    /// Removes the mapping that starts at `start`.
    pub fn remove(&mut self, start: u64) -> Option<Mapping> {
        self.map.remove(&start)
    }

    /// Mappings intersecting `[start, start+len)`, in VA order.
    pub fn range(&self, start: u64, len: u64) -> impl Iterator<Item = &Mapping> {
        let end = start.saturating_add(len);
        let first = self.lookup(start).map(|m| m.start).unwrap_or(start);
        self.map.range(first..end).map(|(_, m)| m)
    }

    /// All mappings.
    pub fn iter(&self) -> impl Iterator<Item = &Mapping> {
        self.map.values()
    }

    /// Number of mappings.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Turns retry-fault service (XNACK, HMM) on (`Some`, after [`Hmm::add_vm`]) or off.
    fn set_xnack(&mut self, hmm: Option<Arc<Hmm>>) {
        self.hmm = hmm;
    }

    /// Makes the process's SVM ranges reachable from this VM, which is GPU `gpuidx`'s.
    pub fn set_svm(&mut self, svms: Arc<Svms>, gpuidx: usize) {
        self.svm = Some((svms, gpuidx));
    }

    /// What `[va, end)` (from a VA no mapping of this VM covers, up to the next mapping) is:
    /// an SVM range's pages, or the retry-fault service's, or a fault.
    fn unmapped_segment(&self, va: u64, end: u64, write: bool) -> Result<Segment, Fault> {
        let next = self.map.range(va..).next().map_or(u64::MAX, |(s, _)| *s).min(end);
        let gap_end = match &self.svm {
            Some((svms, gpuidx)) => match svms.reach(*gpuidx, va, next, write)? {
                Reach::Range(seg) => return Ok(seg),
                Reach::Gap(n) => n.min(next),
            },
            None => next,
        };
        self.hmm_segment(va, gap_end).ok_or(Fault { va: va & !0xfff, kind: FaultKind::NotPresent })
    }

    /// The process's own pages from `va` up to `end` (which no mapping of this VM covers: the
    /// caller bounds it, [`Self::unmapped_segment`]) or to the next mapping of any other VM of
    /// the process, as a segment of the XNACK BO. None: no
    /// retry-fault service there (XNACK off, past [`HMM_LIMIT`], or another GPU's mapping at
    /// `va`), so an access faults.
    fn hmm_segment(&self, va: u64, end: u64) -> Option<Segment> {
        let hmm = self.hmm.as_ref().filter(|_| va < HMM_LIMIT)?;
        let run_end = hmm.free_run(self, va, end.min(HMM_LIMIT))?;
        Some(Segment { bo: hmm.bo.clone(), bo_offset: va, len: run_end - va })
    }

    /// The kind of a fault on a `write` (or read) at `va`: a write to a page that is there but
    /// read-only (a mapping without write permission, or with XNACK a read-only CPU page) is
    /// ReadOnly, anything else NotPresent.
    pub fn fault_kind(&self, va: u64, write: bool) -> FaultKind {
        let present = self.lookup(va).is_some()
            || match self.unmapped_segment(va, va.saturating_add(1), false) {
                Ok(s) => s.bo.read(va, &mut [0u8]).is_ok(),
                Err(_) => false,
            };
        if write && present {
            FaultKind::ReadOnly
        } else {
            FaultKind::NotPresent
        }
    }

    /// Translates `[va, va+len)` for a read (`write == false`) or write access into BO segments,
    /// crossing mapping boundaries as needed. The first unmapped (or, for writes, read-only) byte
    /// is the fault address, reported page aligned as the VM fault interrupt does
    /// (`kfd_signal_vm_fault_event`: `va = page_addr << PAGE_SHIFT`). With XNACK on, unmapped
    /// bytes below [`HMM_LIMIT`] translate to the process's own pages instead; whether those
    /// exist (and allow the access) shows when the segment's BO is read or written (EFAULT).
    pub fn translate(&self, va: u64, len: u64, write: bool) -> Result<Vec<Segment>, Fault> {
        let mut out = Vec::new();
        let mut cur = va;
        let Some(end) = va.checked_add(len) else {
            return Err(Fault { va: va & !0xfff, kind: FaultKind::NotPresent });
        };
        while cur < end {
            let Some(m) = self.lookup(cur) else {
                let seg = self.unmapped_segment(cur, end, write)?;
                cur += seg.len;
                out.push(seg);
                continue;
            };
            if write && !m.writable {
                return Err(Fault { va: cur & !0xfff, kind: FaultKind::ReadOnly });
            }
            let n = (m.end() - cur).min(end - cur);
            let off = m.bo_offset + (cur - m.start);
            if off + n > m.bo.size {
                // A mapping that outgrew its BO cannot exist; treat as not present.
                return Err(Fault { va: cur & !0xfff, kind: FaultKind::NotPresent });
            }
            out.push(Segment { bo: m.bo.clone(), bo_offset: off, len: n });
            cur += n;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bo(size: u64) -> Arc<Bo> {
        Arc::new(Bo::new_memfd(1, 0, size).unwrap())
    }

    /// A mapping of a fresh BO of its size at `start`.
    fn mapping(start: u64, len: u64, writable: bool) -> Mapping {
        Mapping { start, len, bo: bo(len), bo_offset: 0, writable, executable: false, queue_refcount: 0 }
    }

    #[test]
    fn lookup_and_translate_across_mappings() {
        let mut vm = Gpuvm::default();
        vm.insert(mapping(0x10000, 0x2000, true));
        vm.insert(mapping(0x12000, 0x1000, false));
        assert!(vm.lookup(0xffff).is_none());
        assert_eq!(vm.lookup(0x11fff).unwrap().start, 0x10000);
        assert_eq!(vm.lookup(0x12000).unwrap().start, 0x12000);
        assert!(vm.lookup(0x13000).is_none());
        let segs = vm.translate(0x11800, 0x1000, false).unwrap();
        assert_eq!(segs.len(), 2);
        assert_eq!((segs[0].bo_offset, segs[0].len), (0x1800, 0x800));
        assert_eq!((segs[1].bo_offset, segs[1].len), (0, 0x800));
        assert_eq!(
            vm.translate(0x11800, 0x1000, true).err().unwrap(),
            Fault { va: 0x12000, kind: FaultKind::ReadOnly }
        );
        assert_eq!(
            vm.translate(0x12800, 0x1000, false).err().unwrap(),
            Fault { va: 0x13000, kind: FaultKind::NotPresent }
        );
        assert!(vm.overlaps(0xf000, 0x1001));
        assert!(!vm.overlaps(0xf000, 0x1000));
        assert!(vm.overlaps(0x12fff, 1));
    }

    #[test]
    fn xnack_reaches_process_pages_between_mappings() {
        let mut vm = Gpuvm::default();
        let mut host = vec![7u8; 0x3000];
        let va = host.as_mut_ptr() as u64;
        assert_eq!(vm.translate(va, 16, false).err().unwrap().kind, FaultKind::NotPresent);
        vm.set_xnack(Some(Hmm::new()));
        // A mapping in the middle of the host buffer's VA hides the host pages under it.
        let mid = (va + 0xfff) & !0xfff;
        vm.insert(mapping(mid, 0x1000, true));
        let segs = vm.translate(va, mid + 0x1800 - va, false).unwrap();
        assert_eq!(segs.len(), 3);
        assert_eq!((segs[0].bo_offset, segs[0].len), (va, mid - va));
        assert_eq!((segs[1].bo_offset, segs[1].len), (0, 0x1000));
        assert_eq!((segs[2].bo_offset, segs[2].len), (mid + 0x1000, 0x800));
        let mut b = [0u8; 4];
        segs[0].bo.read(va, &mut b).unwrap();
        assert_eq!(b, [7; 4]);
        segs[0].bo.write(va, &[1, 2, 3, 4]).unwrap();
        assert_eq!(host[..4], [1, 2, 3, 4]);
        // Pages the process does not have: the access faults (EFAULT from the BO).
        assert!(segs[0].bo.read(0x1000, &mut b).is_err());
        assert_eq!(vm.fault_kind(0x1000, true), FaultKind::NotPresent);
        // Past the user address space: no retry-fault service.
        assert_eq!(vm.translate(HMM_LIMIT, 8, false).err().unwrap().kind, FaultKind::NotPresent);
        vm.set_xnack(None);
        assert!(vm.translate(va, 16, false).is_err());
    }

    #[test]
    fn xnack_write_to_read_only_page_is_read_only_fault() {
        let mut vm = Gpuvm::default();
        vm.set_xnack(Some(Hmm::new()));
        // SAFETY: a fresh private anonymous page, unmapped below.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        assert_ne!(p, libc::MAP_FAILED);
        let va = p as u64;
        let segs = vm.translate(va, 8, true).unwrap();
        assert!(segs[0].bo.write(va, &[1; 8]).is_err());
        assert_eq!(vm.fault_kind(va, true), FaultKind::ReadOnly);
        assert_eq!(vm.fault_kind(va, false), FaultKind::NotPresent);
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(p, 4096) };
        assert_eq!(vm.fault_kind(va, true), FaultKind::NotPresent);
    }

    #[test]
    fn xnack_does_not_serve_a_va_another_gpu_has_a_bo_at() {
        let hmm = Hmm::new();
        let vms: Vec<Arc<RwLock<Gpuvm>>> = (0..2).map(|_| Arc::new(RwLock::new(Gpuvm::default()))).collect();
        for vm in &vms {
            Hmm::serve(&Some(hmm.clone()), vm);
        }
        let host = vec![5u8; 0x4000];
        let va = (host.as_ptr() as u64 + 0xfff) & !0xfff;
        // GPU 0 maps a BO over the host buffer's second page (as device memory is mapped at its
        // CPU address): GPU 1 reaches the first page, and faults on the second.
        vms[0].write().insert(mapping(va + 0x1000, 0x1000, true));
        let vm1 = vms[1].read();
        let segs = vm1.translate(va, 0x1000, false).unwrap();
        assert_eq!((segs[0].bo_offset, segs[0].len), (va, 0x1000));
        assert_eq!(
            vm1.translate(va + 0x1000, 8, false).err().unwrap(),
            Fault { va: va + 0x1000, kind: FaultKind::NotPresent }
        );
        // A kernel's write there is a NotPresent fault too, not a ReadOnly one (the page behind
        // is readable to the CPU, but not served to this GPU).
        assert_eq!(vm1.fault_kind(va + 0x1000, true), FaultKind::NotPresent);
        // A run that reaches the other GPU's mapping stops there: the access faults at it.
        assert_eq!(vm1.translate(va + 0x800, 0x1000, false).err().unwrap().va, va + 0x1000);
        drop(vm1);
        // GPU 0 itself reads the BO there.
        let segs = vms[0].read().translate(va + 0x1000, 8, false).unwrap();
        assert_eq!(segs[0].bo_offset, 0);
    }
}
