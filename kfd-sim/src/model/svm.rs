//! SVM ranges (`kfd_svm.c`): `AMDKFD_IOC_SVM` `SET_ATTR` / `GET_ATTR` on ranges of the
//! process's own pages, and what a GPU reaches through them.
//!
//! A range is a run of pages with one set of attributes (preferred and prefetch location,
//! access per GPU, flags, migration granularity), split and created as `svm_range_add` does:
//! a call over `[start, last]` splits the ranges it cuts, creates ranges with the default
//! attributes (`svm_range_new`) in the gaps, then applies the attributes to every range in
//! `[start, last]`. Ranges are never merged (neither are the kernel's).
//!
//! A GPU reaches a range's pages at their own virtual addresses when it has ACCESS or
//! ACCESS_IN_PLACE to the range: with XNACK off `svm_range_validate_and_map` maps them when the
//! attributes are set; with XNACK on a retry fault maps them (`svm_range_restore_pages`), and a
//! GPU without access keeps the fault (`svm_range_best_restore_location` → -1). GPU_RO maps
//! them read-only. What the model does not do: move pages. "Migration" to VRAM
//! (`svm_migrate_to_vram`) updates `actual_loc` and sends the SMI migration events, but the
//! pages stay the process's pages, which both CPU and GPU keep reaching, so the bytes every
//! access sees are those the kernel's migrations preserve; CPU page faults on VRAM pages
//! (`svm_migrate_to_ram`) do not happen, and migrated ranges use no VRAM.
//!
//! `munmap` removes the unmapped pages from the ranges, as the MMU notifier does
//! (`svm_range_unmap_from_cpu`), when the process calls it through its PLT (the interposer
//! sees it); libc-internal unmaps (`free` of a large block) are seen only as pages that are
//! gone, or reserved `PROT_NONE` again, when next needed ([`Svms::overlaps`]).

use super::bo::Bo;
use super::gpus::{self, GpuInfo};
use super::gpuvm::{Fault, FaultKind, Gpuvm, Segment, HMM_LIMIT};
use super::smi;
use super::sys::{self, PAGE_SIZE};
use kfd_ioctl::kfd::*;
use nix::errno::Errno;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

const PAGE_SHIFT: u32 = 12;

/// One range (`struct svm_range`); pages `start..=last`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SvmRange {
    pub start: u64,
    pub last: u64,
    pub preferred_loc: u32,
    pub prefetch_loc: u32,
    /// Where the pages are (`KFD_IOCTL_SVM_LOCATION_SYSMEM` or a gpu_id); bookkeeping only.
    pub actual_loc: u32,
    pub granularity: u8,
    pub flags: u32,
    /// `bitmap_access` / `bitmap_aip`, bit = gpuidx (the process's GPUs in topology order).
    pub access: u64,
    pub aip: u64,
    /// Compute queues whose CWSR area lies in the range (`queue_refcount`).
    pub queue_refcount: u32,
}

impl SvmRange {
    /// `svm_range_new` with `svm_range_set_default_attributes`: access on every GPU with XNACK
    /// on (`bitmap_supported`), none with it off.
    fn new(start: u64, last: u64, default_access: u64) -> SvmRange {
        SvmRange {
            start,
            last,
            preferred_loc: KFD_IOCTL_SVM_LOCATION_UNDEFINED,
            prefetch_loc: KFD_IOCTL_SVM_LOCATION_UNDEFINED,
            actual_loc: KFD_IOCTL_SVM_LOCATION_SYSMEM,
            granularity: 9,
            flags: KFD_IOCTL_SVM_FLAG_HOST_ACCESS | KFD_IOCTL_SVM_FLAG_COHERENT,
            access: default_access,
            aip: 0,
            queue_refcount: 0,
        }
    }

    fn reaches(&self, gpuidx: usize) -> bool {
        (self.access | self.aip) & (1 << gpuidx) != 0
    }
}

/// The process's ranges (`struct svm_range_list`).
pub struct Svms {
    /// The process's address space as a USERPTR BO (offset = VA): what a range's pages are.
    bo: Arc<Bo>,
    /// By first page.
    ranges: RwLock<BTreeMap<u64, SvmRange>>,
    /// Whether any range exists (a GPU access outside every mapping checks it first).
    any: AtomicBool,
    /// gpu_id of each gpuidx.
    gpu_ids: Vec<u32>,
}

/// What a VA no BO mapping covers is, for a GPU's access.
pub enum Reach {
    /// In a range this GPU reaches: the segment of `[va, ...)` up to the range's end.
    Range(Segment),
    /// In no range; the next range starts at this VA (`u64::MAX`: none).
    Gap(u64),
}

/// The arguments of one `AMDKFD_IOC_SVM` call that need the process: its XNACK mode and its
/// GPUs' VMs (for `svm_range_check_vm`).
pub struct Ctx<'a> {
    pub pid: u32,
    pub xnack: bool,
    pub vms: &'a [Arc<RwLock<Gpuvm>>],
}

impl Svms {
    pub fn new(gpus: &[&GpuInfo]) -> Arc<Svms> {
        Arc::new(Svms {
            bo: Arc::new(Bo::new_userptr(0, 0, 0, HMM_LIMIT)),
            ranges: RwLock::new(BTreeMap::new()),
            any: AtomicBool::new(false),
            gpu_ids: gpus.iter().map(|g| g.gpu_id).collect(),
        })
    }

    /// `kfd_process_gpuidx_from_gpuid`.
    pub fn gpuidx(&self, gpu_id: u32) -> Option<usize> {
        self.gpu_ids.iter().position(|&g| g == gpu_id)
    }

    /// `bitmap_supported`: every GPU of the process.
    fn all_gpus(&self) -> u64 {
        (1u64 << self.gpu_ids.len()) - 1
    }

    /// What GPU `gpuidx` reaches at `va` (outside its BO mappings) for a read or `write`.
    /// Err: a range covers `va` but this GPU has no access to it, or (`write`) it is GPU_RO.
    pub fn reach(&self, gpuidx: usize, va: u64, end: u64, write: bool) -> Result<Reach, Fault> {
        if !self.any.load(Ordering::Acquire) {
            return Ok(Reach::Gap(u64::MAX));
        }
        let ranges = self.ranges.read();
        let page = va >> PAGE_SHIFT;
        if let Some((_, r)) = ranges.range(..=page).next_back().filter(|(_, r)| r.last >= page) {
            if !r.reaches(gpuidx) {
                return Err(Fault { va: va & !(PAGE_SIZE - 1), kind: FaultKind::NotPresent });
            }
            if write && r.flags & KFD_IOCTL_SVM_FLAG_GPU_RO != 0 {
                return Err(Fault { va: va & !(PAGE_SIZE - 1), kind: FaultKind::ReadOnly });
            }
            let range_end = (r.last + 1) << PAGE_SHIFT;
            return Ok(Reach::Range(Segment { bo: self.bo.clone(), bo_offset: va, len: range_end.min(end) - va }));
        }
        let next = ranges.range(page..).next().map_or(u64::MAX, |(s, _)| s << PAGE_SHIFT);
        Ok(Reach::Gap(next))
    }

    /// Whether any range has a page in `[va, va + len)` whose pages are still the process's
    /// memory (`kfd_ioctl_alloc_memory_of_gpu`'s "already allocated by SVM" check, EADDRINUSE).
    /// Ranges whose pages are gone are dropped on the way. Pages mapped but without access
    /// (`PROT_NONE`) count as gone: an unmap the model did not see (glibc's `free` of a large
    /// block unmaps it inside libc, where no interposer sees it; the kernel's MMU notifier does)
    /// followed by a VA reservation at the same place, which is how libhsakmt reserves the VA of
    /// the BO about to be allocated, looks like that. A live range made `PROT_NONE` on purpose
    /// is allocated over where the kernel would refuse: the cost of not seeing those unmaps.
    pub fn overlaps(&self, va: u64, len: u64) -> bool {
        if !self.any.load(Ordering::Acquire) || len == 0 {
            return false;
        }
        let (first, last) = (va >> PAGE_SHIFT, (va + len - 1) >> PAGE_SHIFT);
        let mut ranges = self.ranges.write();
        let hits: Vec<u64> = overlapping(&ranges, first, last);
        let mut live = false;
        for s in hits {
            let r = &ranges[&s];
            if sys::user_pages_access(r.start << PAGE_SHIFT, (r.last - r.start + 1) << PAGE_SHIFT, false).is_ok() {
                live = true;
            } else if r.queue_refcount == 0 {
                ranges.remove(&s);
            }
        }
        self.any.store(!ranges.is_empty(), Ordering::Release);
        live
    }

    /// The CPU unmapped `[va, va + len)`: those pages leave every range
    /// (`svm_range_unmap_from_cpu`).
    pub fn unmap(&self, va: u64, len: u64) {
        if !self.any.load(Ordering::Acquire) || len == 0 {
            return;
        }
        let first = va >> PAGE_SHIFT;
        let last = (sys::page_align(va.saturating_add(len)) >> PAGE_SHIFT) - 1;
        let mut ranges = self.ranges.write();
        split_at(&mut ranges, first);
        split_at(&mut ranges, last + 1);
        for s in overlapping(&ranges, first, last) {
            ranges.remove(&s);
        }
        self.any.store(!ranges.is_empty(), Ordering::Release);
    }

    /// `kfd_queue_buffer_svm_get`: the CWSR area `[va, va + len)` of a queue on GPU `gpuidx` may be
    /// SVM memory: ranges covering it all, each GPU_ALWAYS_MAPPED and reached by that GPU; their
    /// `queue_refcount` goes up. Else EINVAL.
    pub fn queue_buffer_get(&self, gpuidx: usize, va: u64, len: u64) -> Result<(), Errno> {
        let mut ranges = self.ranges.write();
        let (first, last) = (va >> PAGE_SHIFT, (va + len.max(1) - 1) >> PAGE_SHIFT);
        let mut cur = first;
        let mut starts = vec![];
        while cur <= last {
            let Some((s, r)) = ranges.range(..=cur).next_back().filter(|(_, r)| r.last >= cur) else {
                return Err(Errno::EINVAL);
            };
            if !r.reaches(gpuidx) || r.flags & KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED == 0 {
                return Err(Errno::EINVAL);
            }
            starts.push(*s);
            cur = r.last + 1;
        }
        for s in starts {
            ranges.get_mut(&s).expect("found above").queue_refcount += 1;
        }
        Ok(())
    }

    /// `kfd_queue_buffer_svm_put`.
    pub fn queue_buffer_put(&self, va: u64, len: u64) {
        let mut ranges = self.ranges.write();
        let (first, last) = (va >> PAGE_SHIFT, (va + len.max(1) - 1) >> PAGE_SHIFT);
        for s in overlapping(&ranges, first, last) {
            let r = ranges.get_mut(&s).expect("listed");
            r.queue_refcount = r.queue_refcount.saturating_sub(1);
        }
    }

    /// `svm_range_check_attr`: each type known, each gpu_id one of the process's GPUs (a
    /// location may also be SYSMEM, a preferred location UNDEFINED). Else EINVAL.
    fn check_attr(&self, attrs: &[kfd_ioctl_svm_attribute]) -> Result<(), Errno> {
        for a in attrs {
            let gpu = match a.type_ {
                KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => (a.value != KFD_IOCTL_SVM_LOCATION_SYSMEM
                    && a.value != KFD_IOCTL_SVM_LOCATION_UNDEFINED)
                    .then_some(a.value),
                KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => (a.value != KFD_IOCTL_SVM_LOCATION_SYSMEM).then_some(a.value),
                KFD_IOCTL_SVM_ATTR_ACCESS | KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE | KFD_IOCTL_SVM_ATTR_NO_ACCESS => {
                    Some(a.value)
                }
                KFD_IOCTL_SVM_ATTR_SET_FLAGS | KFD_IOCTL_SVM_ATTR_CLR_FLAGS | KFD_IOCTL_SVM_ATTR_GRANULARITY => None,
                _ => return Err(Errno::EINVAL),
            };
            if gpu.is_some_and(|g| self.gpuidx(g).is_none()) {
                return Err(Errno::EINVAL);
            }
        }
        Ok(())
    }

    /// `svm_range_set_attr`. Errors: EINVAL (attributes), EFAULT (a page of the range is not
    /// mapped: `svm_range_is_valid`), EADDRINUSE (a BO is mapped in the range on some GPU:
    /// `svm_range_check_vm`). `start`, `size`: bytes, page aligned, non-zero.
    pub fn set_attr(
        self: &Arc<Self>,
        cx: &Ctx,
        start: u64,
        size: u64,
        attrs: &[kfd_ioctl_svm_attribute],
    ) -> Result<(), Errno> {
        self.check_attr(attrs)?;
        is_valid(cx, start, size)?;
        let (first, last) = (start >> PAGE_SHIFT, ((start + size) >> PAGE_SHIFT) - 1);
        let default_access = if cx.xnack { self.all_gpus() } else { 0 };
        let mut migrations = vec![];
        {
            let mut ranges = self.ranges.write();
            split_at(&mut ranges, first);
            split_at(&mut ranges, last + 1);
            // The gaps get new ranges (`svm_range_add`).
            let mut cur = first;
            for s in overlapping(&ranges, first, last) {
                if s > cur {
                    ranges.insert(cur, SvmRange::new(cur, s - 1, default_access));
                }
                cur = ranges[&s].last + 1;
            }
            if cur <= last {
                ranges.insert(cur, SvmRange::new(cur, last, default_access));
            }
            let prefetch = attrs.iter().any(|a| a.type_ == KFD_IOCTL_SVM_ATTR_PREFETCH_LOC);
            for s in overlapping(&ranges, first, last) {
                let r = ranges.get_mut(&s).expect("listed");
                self.apply_attrs(r, attrs);
                if prefetch {
                    let best = self.best_prefetch_location(r, cx.xnack);
                    // `svm_range_trigger_migration`: nothing to do for UNDEFINED, for system
                    // memory already there, or for the GPU the pages are on.
                    if best != KFD_IOCTL_SVM_LOCATION_UNDEFINED && best != r.actual_loc {
                        migrations.push((r.clone(), best));
                        r.actual_loc = best;
                    }
                }
            }
            self.any.store(true, Ordering::Release);
        }
        {
            let mut target = UNMAP_TARGET.lock();
            if target.as_ref().is_none_or(|(p, _)| *p != cx.pid) {
                *target = Some((cx.pid, Arc::downgrade(self)));
            }
            UNMAP_ANY.store(true, Ordering::Release);
        }
        for (r, to) in migrations {
            migration_events(cx.pid, &r, to, KFD_MIGRATE_TRIGGER_PREFETCH);
        }
        Ok(())
    }

    /// `svm_range_apply_attrs` (granularity capped at 0x3f).
    fn apply_attrs(&self, r: &mut SvmRange, attrs: &[kfd_ioctl_svm_attribute]) {
        for a in attrs {
            match a.type_ {
                KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => r.preferred_loc = a.value,
                KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => r.prefetch_loc = a.value,
                KFD_IOCTL_SVM_ATTR_ACCESS | KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE | KFD_IOCTL_SVM_ATTR_NO_ACCESS => {
                    let bit = 1u64 << self.gpuidx(a.value).expect("checked by check_attr");
                    r.access &= !bit;
                    r.aip &= !bit;
                    match a.type_ {
                        KFD_IOCTL_SVM_ATTR_ACCESS => r.access |= bit,
                        KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE => r.aip |= bit,
                        _ => {}
                    }
                }
                KFD_IOCTL_SVM_ATTR_SET_FLAGS => r.flags |= a.value,
                KFD_IOCTL_SVM_ATTR_CLR_FLAGS => r.flags &= !a.value,
                KFD_IOCTL_SVM_ATTR_GRANULARITY => r.granularity = a.value.min(0x3f) as u8,
                _ => unreachable!("checked by check_attr"),
            }
        }
    }

    /// `svm_range_best_prefetch_location`: the prefetch location, but system memory when a GPU
    /// that maps the range (ACCESS_IN_PLACE with XNACK on; ACCESS or ACCESS_IN_PLACE with it
    /// off) is another one outside the prefetch GPU's xGMI hive.
    fn best_prefetch_location(&self, r: &SvmRange, xnack: bool) -> u32 {
        let best = r.prefetch_loc;
        if best == KFD_IOCTL_SVM_LOCATION_UNDEFINED || best == KFD_IOCTL_SVM_LOCATION_SYSMEM {
            return best;
        }
        let Some(bo_gpu) = gpus::by_id(best) else { return KFD_IOCTL_SVM_LOCATION_SYSMEM };
        let users = if xnack { r.aip } else { r.access | r.aip };
        for (i, &g) in self.gpu_ids.iter().enumerate() {
            if users & (1 << i) != 0 && gpus::by_id(g).is_some_and(|g| !gpus::same_hive(g, bo_gpu)) {
                return KFD_IOCTL_SVM_LOCATION_SYSMEM;
            }
        }
        best
    }

    /// `svm_range_get_attr`: over the ranges in `[start, start + size)` (the defaults where
    /// there are none): a location all of them share (else UNDEFINED), ACCESS / ACCESS_IN_PLACE
    /// / NO_ACCESS (in `type_`) as all of them give the GPU in `value`, SET_FLAGS the flags all
    /// have, CLR_FLAGS those none has, the smallest granularity. Errors: EFAULT / EADDRINUSE
    /// as [`set_attr`](Self::set_attr); EINVAL for ACCESS_IN_PLACE, NO_ACCESS or an unknown
    /// type asked for, or an ACCESS of a GPU not the process's.
    pub fn get_attr(
        &self,
        cx: &Ctx,
        start: u64,
        size: u64,
        attrs: &mut [kfd_ioctl_svm_attribute],
    ) -> Result<(), Errno> {
        is_valid(cx, start, size)?;
        let (mut get_preferred, mut get_prefetch, mut get_access, mut get_flags, mut get_gran) =
            (false, false, false, false, false);
        for a in attrs.iter() {
            match a.type_ {
                KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => get_preferred = true,
                KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => get_prefetch = true,
                KFD_IOCTL_SVM_ATTR_ACCESS => get_access = true,
                KFD_IOCTL_SVM_ATTR_SET_FLAGS | KFD_IOCTL_SVM_ATTR_CLR_FLAGS => get_flags = true,
                KFD_IOCTL_SVM_ATTR_GRANULARITY => get_gran = true,
                _ => return Err(Errno::EINVAL),
            }
        }
        let (first, last) = (start >> PAGE_SHIFT, ((start + size) >> PAGE_SHIFT) - 1);
        let mut location = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
        let mut prefetch = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
        let mut granularity = 0xffu8;
        let (mut flags_and, mut flags_or) = (u32::MAX, 0u32);
        let (mut access, mut aip);
        {
            let ranges = self.ranges.read();
            let hits = overlapping(&ranges, first, last);
            if hits.is_empty() {
                let d = SvmRange::new(0, 0, if cx.xnack { self.all_gpus() } else { 0 });
                (granularity, flags_and, flags_or, access, aip) = (d.granularity, d.flags, d.flags, d.access, 0);
            } else {
                (access, aip) = (self.all_gpus(), self.all_gpus());
                for s in hits {
                    let r = &ranges[&s];
                    merge_location(&mut get_preferred, &mut location, r.preferred_loc);
                    merge_location(&mut get_prefetch, &mut prefetch, r.prefetch_loc);
                    if get_access {
                        access &= r.access;
                        aip &= r.aip;
                    }
                    if get_flags {
                        flags_and &= r.flags;
                        flags_or |= r.flags;
                    }
                    if get_gran {
                        granularity = granularity.min(r.granularity);
                    }
                }
            }
        }
        for a in attrs.iter_mut() {
            match a.type_ {
                KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => a.value = location,
                KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => a.value = prefetch,
                KFD_IOCTL_SVM_ATTR_ACCESS => {
                    let bit = 1u64 << self.gpuidx(a.value).ok_or(Errno::EINVAL)?;
                    a.type_ = if access & bit != 0 {
                        KFD_IOCTL_SVM_ATTR_ACCESS
                    } else if aip & bit != 0 {
                        KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
                    } else {
                        KFD_IOCTL_SVM_ATTR_NO_ACCESS
                    };
                }
                KFD_IOCTL_SVM_ATTR_SET_FLAGS => a.value = flags_and,
                KFD_IOCTL_SVM_ATTR_CLR_FLAGS => a.value = !flags_or,
                KFD_IOCTL_SVM_ATTR_GRANULARITY => a.value = granularity as u32,
                _ => {}
            }
        }
        Ok(())
    }

    /// The ranges, in VA order (for tests and traces).
    pub fn ranges(&self) -> Vec<SvmRange> {
        self.ranges.read().values().cloned().collect()
    }
}

/// The ranges of the process that made one last (pid, ranges), for [`cpu_unmapped`]: a lock of
/// its own, never held while another is taken, so an `munmap` from inside the model cannot
/// deadlock on it.
static UNMAP_TARGET: parking_lot::Mutex<Option<(u32, Weak<Svms>)>> = parking_lot::Mutex::new(None);
static UNMAP_ANY: AtomicBool = AtomicBool::new(false);

/// The process unmapped `[va, va + len)` (the interposed `munmap`): the MMU notifier's
/// `svm_range_unmap_from_cpu`. Costs one atomic load while no range was ever made.
pub fn cpu_unmapped(va: u64, len: u64) {
    if !UNMAP_ANY.load(Ordering::Acquire) {
        return;
    }
    let target = UNMAP_TARGET.lock().as_ref().filter(|(pid, _)| *pid == sys::getpid()).and_then(|(_, w)| w.upgrade());
    if let Some(svms) = target {
        svms.unmap(va, len);
    }
}

/// One range's location into the location a GET_ATTR reports (`svm_range_get_attr`): the first
/// one, kept while every range has it; UNDEFINED (and no more looking) once one has none or
/// another.
fn merge_location(looking: &mut bool, merged: &mut u32, range: u32) {
    if !*looking {
        return;
    }
    if range == KFD_IOCTL_SVM_LOCATION_UNDEFINED || (*merged != KFD_IOCTL_SVM_LOCATION_UNDEFINED && *merged != range) {
        *merged = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
        *looking = false;
    } else {
        *merged = range;
    }
}

/// First pages of the ranges with a page in `first..=last`, in VA order.
fn overlapping(ranges: &BTreeMap<u64, SvmRange>, first: u64, last: u64) -> Vec<u64> {
    let head = ranges.range(..first).next_back().filter(|(_, r)| r.last >= first).map(|(s, _)| *s);
    head.into_iter().chain(ranges.range(first..=last).map(|(s, _)| *s)).collect()
}

/// Splits the range holding page `page` (if it starts before it) so that one starts there
/// (`svm_range_split`: both halves keep the attributes).
fn split_at(ranges: &mut BTreeMap<u64, SvmRange>, page: u64) {
    let Some((_, r)) = ranges.range_mut(..page).next_back().filter(|(_, r)| r.last >= page) else { return };
    let mut tail = r.clone();
    r.last = page - 1;
    tail.start = page;
    ranges.insert(page, tail);
}

/// `svm_range_is_valid`: every page of `[start, start + size)` mapped (a VMA: `vma_lookup`), else
/// EFAULT; then `svm_range_check_vm`: no GPU of the process has a BO mapped there, else
/// EADDRINUSE.
fn is_valid(cx: &Ctx, start: u64, size: u64) -> Result<(), Errno> {
    let end = start.checked_add(size).ok_or(Errno::EOVERFLOW)?;
    if end > HMM_LIMIT || !sys::is_mapped(start, size) {
        return Err(Errno::EFAULT);
    }
    for vm in cx.vms {
        if vm.read().overlaps(start, size) {
            return Err(Errno::EADDRINUSE);
        }
    }
    Ok(())
}

/// The SMI events of moving range `r` from `r.actual_loc` to `to` (`svm_migrate_to_vram` /
/// `svm_migrate_vram_to_ram`; GPU to GPU goes through system memory, as
/// `svm_migrate_vram_to_vram` does): MIGRATE_START and MIGRATE_END on the GPU involved, fields
/// as `kfd_smi_event_migration_start` / `_end` print them (addresses and sizes in pages).
fn migration_events(pid: u32, r: &SvmRange, to: u32, trigger: u32) {
    let (start, npages) = (r.start, r.last - r.start + 1);
    let hop = |gpu: u32, from: u32, to: u32| {
        smi::add(
            pid,
            gpu,
            KFD_SMI_EVENT_MIGRATE_START,
            format_args!(
                "{} -{pid} @{start:x}({npages:x}) {from:x}->{to:x} {:x}:{:x} {trigger}\n",
                smi::boottime_ns(),
                r.prefetch_loc,
                r.preferred_loc
            ),
        );
        smi::add(
            pid,
            gpu,
            KFD_SMI_EVENT_MIGRATE_END,
            format_args!("{} -{pid} @{start:x}({npages:x}) {from:x}->{to:x} {trigger}\n", smi::boottime_ns()),
        );
    };
    if r.actual_loc != KFD_IOCTL_SVM_LOCATION_SYSMEM {
        hop(r.actual_loc, r.actual_loc, KFD_IOCTL_SVM_LOCATION_SYSMEM);
    }
    if to != KFD_IOCTL_SVM_LOCATION_SYSMEM {
        hop(to, KFD_IOCTL_SVM_LOCATION_SYSMEM, to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_gaps_keep_attributes_apart() {
        let mut m = BTreeMap::new();
        m.insert(10, SvmRange::new(10, 19, 0));
        split_at(&mut m, 15);
        split_at(&mut m, 10);
        split_at(&mut m, 25);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![10, 15]);
        assert_eq!((m[&10].last, m[&15].last), (14, 19));
        assert_eq!(overlapping(&m, 12, 16), vec![10, 15]);
        assert_eq!(overlapping(&m, 20, 30), Vec::<u64>::new());
    }
}
