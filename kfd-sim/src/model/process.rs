//! Per-process KFD state: the model's `kfd_process` and `kfd_process_device` (pdd).
//!
//! As in the kernel (`kfd_create_process` looks the process up by `mm`), there is one KFD process
//! per OS process, shared by every open of `/dev/kfd` in it. It holds one pdd per GPU of the
//! topology (created at open, like `kfd_create_process_device_data` for all devices); a pdd's
//! GPUVM exists from the start but is usable only after `AMDKFD_IOC_ACQUIRE_VM` bound it to a
//! render-node file (`kfd_bind_process_to_device` fails with ENODEV before).
//!
//! Locking: `Process::state` (a `parking_lot::Mutex`) guards everything except each pdd's GPUVM,
//! which sits in its own `RwLock` so the SDMA engine can translate addresses without the process
//! lock. Order: `state` → `vm`. The engine takes `vm` alone, releases it, then takes `state` to
//! signal events (never both the other way round).

use super::bo::{Bo, BoName, FileKey};
use super::drm::DrmFile;
use super::events::EventTable;
use super::gpus::{self, GpuInfo};
use super::gpuvm::{Gpuvm, Hmm};
use super::queue::Queue;
use super::sdma::Sdma;
use super::svm::Svms;
use super::sys;
use nix::errno::Errno;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::fd::RawFd;
use std::sync::{Arc, Weak};

/// First render-node mmap offset (`DRM_FILE_PAGE_OFFSET_START` in bytes: 4 GiB).
pub const DRM_FILE_OFFSET_START: u64 = 1 << 32;
/// Render-node offsets stay below 1 TiB: libhsakmt maps offsets ≥ 2^40 through /dev/kfd instead
/// (`fmm.c`: `mmap_offset >= (1ULL << 40) ? kfd_fd : drm_render_fd`).
pub const DRM_FILE_OFFSET_END: u64 = 1 << 40;

/// Fewest entries at which [`ProcState`] drops the dead BOs from its offset and identity maps.
const PRUNE_MIN: usize = 64;

/// A KFD memory object (`kgd_mem`), referenced by a handle `gpu_id << 32 | idr`.
pub struct KgdMem {
    pub bo: Arc<Bo>,
    /// GPU VA given at ALLOC/IMPORT (0 = no VA: VMM physical handle).
    pub va: u64,
    /// KFD alloc flags (imports: forced WRITABLE|EXECUTABLE plus the domain).
    pub flags: u32,
    /// gpu_ids whose VM this BO was ever attached to (`kfd_mem_attach`).
    pub attached: BTreeSet<u32>,
    /// gpu_ids where it is currently mapped (`entry->is_mapped`); `len()` is
    /// `mapped_to_gpu_memory`.
    pub mapped: BTreeSet<u32>,
    /// Bytes counted in the owning pdd's `vram_usage`.
    pub vram_accounted: u64,
    /// Bytes counted in [`MemLimit`] (GTT and USERPTR BOs; 0 for imports, VRAM, doorbell, MMIO).
    pub sys_accounted: u64,
    /// The IPC share handle this BO references (`kgd_mem->ipc_obj`; ROCm's out-of-tree IPC,
    /// [`super::ipc`]).
    pub ipc: Option<super::ipc::IpcRef>,
}

/// `kfd_mem_limit` (amdgpu_amdkfd_gpuvm.c): system memory that KFD BOs may pin. GTT BOs count
/// in both `system_mem_used` and `ttm_mem_used`, USERPTR BOs in `system_mem_used` only
/// (`amdgpu_amdkfd_reserve_mem_limit`); an allocation past either limit is ENOMEM. The limits
/// are [`mem_limits`]. The kernel keeps one ledger for all processes; the model keeps one per
/// process (each kfdsim process is its own KFD client, so another process's pinned memory does
/// not count here).
#[derive(Default)]
pub struct MemLimit {
    pub system_used: u64,
    pub ttm_used: u64,
}

/// `AMDGPU_RESERVE_MEM_LIMIT`: system memory kept back from KFD BOs on machines of 2 GiB or more.
const RESERVE_MEM_LIMIT: u64 = 1 << 30;

/// (max_system_mem_limit, max_ttm_mem_limit) in bytes for `total` bytes of RAM (`totalram -
/// totalhigh`), as `amdgpu_amdkfd_gpuvm_init_mem_limits` sets them: RAM less 1/64, less
/// [`RESERVE_MEM_LIMIT`] (halved instead below twice that); TTM's page limit
/// (`ttm_tt_pages_limit`: `ttm_pages_limit`, half of RAM by default). Kernels before 6.5 took
/// free RAM less 1/16, once, when the driver loaded; the model does not follow them: free RAM
/// at a process's start depends on the page cache, and made the limit vary from run to run.
pub fn mem_limits_for(total: u64) -> (u64, u64) {
    let mut system = total - (total >> 6);
    if system < 2 * RESERVE_MEM_LIMIT {
        system >>= 1;
    } else {
        system -= RESERVE_MEM_LIMIT;
    }
    (system, total / 2)
}

/// [`mem_limits_for`] this machine's RAM, taken once per process.
pub fn mem_limits() -> (u64, u64) {
    static L: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
    *L.get_or_init(|| {
        // SAFETY: `si` is a valid sysinfo struct for the kernel to fill.
        let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::sysinfo(&mut si) } != 0 {
            return (u64::MAX, u64::MAX);
        }
        let unit = si.mem_unit.max(1) as u64;
        mem_limits_for((si.totalram as u64).saturating_sub(si.totalhigh as u64) * unit)
    })
}

impl MemLimit {
    /// `amdgpu_amdkfd_reserve_mem_limit` for a BO of `size` bytes with KFD alloc `flags`:
    /// returns the bytes reserved (0 for BO types that do not count), ENOMEM past a limit.
    pub fn reserve(&mut self, size: u64, flags: u32) -> Result<u64, Errno> {
        use kfd_ioctl::kfd::{KFD_IOC_ALLOC_MEM_FLAGS_GTT, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR};
        let (system, ttm) = if flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
            (size, size)
        } else if flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
            (size, 0)
        } else {
            return Ok(0);
        };
        let (max_system, max_ttm) = mem_limits();
        if self.system_used + system > max_system || self.ttm_used + ttm > max_ttm {
            return Err(Errno::ENOMEM);
        }
        self.system_used += system;
        self.ttm_used += ttm;
        Ok(size)
    }

    /// `amdgpu_amdkfd_unreserve_mem_limit`: gives back what [`MemLimit::reserve`] took.
    pub fn unreserve(&mut self, reserved: u64, flags: u32) {
        if reserved == 0 {
            return;
        }
        self.system_used -= reserved;
        if flags & kfd_ioctl::kfd::KFD_IOC_ALLOC_MEM_FLAGS_GTT != 0 {
            self.ttm_used -= reserved;
        }
    }
}

/// The process's 8 KiB doorbell slice on one GPU (`qpd.proc_doorbells`): a memfd page that the
/// user maps through `/dev/kfd` and the engine reads.
pub struct Doorbells {
    pub bo: Arc<Bo>,
    /// Slots in use (64-bit doorbells, 1024 per slice).
    pub used: BTreeSet<u32>,
}

/// A pdd's second-level trap handler and its TMA (0: none), and the first-level handler's
/// state for it.
#[derive(Default)]
pub struct TrapHandler {
    pub tba: std::sync::atomic::AtomicU64,
    pub tma: std::sync::atomic::AtomicU64,
    /// Host traps go on to the second-level handler (the first-level TMA's
    /// `KFD_TRAP_TYPE_BIT` HOST, set while a PC sampling session of the process is started;
    /// [`super::pc_sampling`]).
    pub host_trap_enabled: std::sync::atomic::AtomicBool,
    /// Waves in the second-level handler for a host trap.
    pub host_traps_running: std::sync::atomic::AtomicU32,
}

/// Per-(process, GPU) state.
pub struct Pdd {
    pub gpu: &'static GpuInfo,
    /// Render-node file bound by ACQUIRE_VM (`pdd->drm_file`).
    pub drm_file: Option<FileKey>,
    pub vm: Arc<RwLock<Gpuvm>>,
    /// The dispatches running on the GPU, by pipe priority (shared with its AQL queues).
    pub pipes: Arc<super::aql::PipeLoad>,
    /// `pdd->alloc_idr`.
    pub alloc_idr: BTreeMap<u32, KgdMem>,
    pub doorbells: Option<Doorbells>,
    /// `pdd->vram_usage` (bytes).
    pub vram_usage: u64,
    /// What this process's VRAM BOs reserve of the device's limit: each BO's accounted size
    /// rounded up to `VRAM_AVAILABLE_ALIGNMENT` (bytes). Published to the session's ledger
    /// ([`super::vram`]).
    pub vram_reserved: u64,
    pub scratch_backing_va: u64,
    /// `qpd.num_gws`: the GWS resources a queue of this process on the GPU holds (0: none).
    pub num_gws: u32,
    /// SET_TRAP_HANDLER's second-level trap handler (`tba_addr`, `tma_addr`), shared with the
    /// pdd's queues, whose dispatches enter it at `s_trap` ([`amdgcn_isa::Trap`]).
    pub trap_handler: Arc<TrapHandler>,
    pub mmio_page: Option<Arc<Bo>>,
}

impl Pdd {
    /// `kfd_bind_process_to_device`: ENODEV until ACQUIRE_VM.
    pub fn bound(&self) -> Result<(), Errno> {
        if self.drm_file.is_none() {
            Err(Errno::ENODEV)
        } else {
            Ok(())
        }
    }

    /// Files a new memory object (`bo` at `va`, with `flags`; attached and mapped nowhere yet)
    /// at the lowest free idr and returns the idr (the caller counts what it accounted).
    pub fn add_mem(&mut self, bo: Arc<Bo>, va: u64, flags: u32, vram_accounted: u64, sys_accounted: u64) -> u32 {
        let idr = self.next_idr();
        let mem = KgdMem {
            bo,
            va,
            flags,
            attached: BTreeSet::new(),
            mapped: BTreeSet::new(),
            vram_accounted,
            sys_accounted,
            ipc: None,
        };
        self.alloc_idr.insert(idr, mem);
        idr
    }

    /// Lowest free idr (`idr_alloc(..., 0, 0)`).
    fn next_idr(&self) -> u32 {
        let mut id = 0u32;
        for k in self.alloc_idr.keys() {
            if *k != id {
                break;
            }
            id += 1;
        }
        id
    }
}

/// Everything under the process lock.
pub struct ProcState {
    pub pid: u32,
    /// In topology order (the kernel's `p->pdds[]`).
    pub pdds: Vec<Pdd>,
    pub events: EventTable,
    pub queues: BTreeMap<u32, Queue>,
    /// XNACK on (`p->xnack_enabled`): the retry-fault service its compute VMs share.
    pub xnack: Option<Arc<Hmm>>,
    /// SVM ranges (`p->svms`).
    pub svms: Arc<Svms>,
    pub runtime_enabled: bool,
    /// Render-node mmap offsets → BO.
    pub offsets: BTreeMap<u64, Weak<Bo>>,
    /// The reverse of `offsets`: BO (`Arc::as_ptr`) → offset. The `Weak` in `offsets` keeps the
    /// BO's allocation, so no other BO has that address while the entry is there.
    offset_by_bo: HashMap<usize, u64>,
    pub offset_cursor: u64,
    /// memfd identity → BO, so one dma-buf imported twice yields the same object, and the
    /// memfd's parsed name (model BOs), which outlives the BO: importing the same dma-buf again
    /// after the import was freed needs no readlink. (A memfd's identity is never reused while
    /// the system runs: the kernel's internal shmem mount numbers inodes with a 64-bit counter.)
    bo_by_key: HashMap<FileKey, (Weak<Bo>, Option<BoName>)>,
    /// Sizes of `offsets` and `bo_by_key` at which their dead entries are next dropped (twice
    /// the live count after the last pass: amortised O(1) per BO).
    prune_offsets_at: usize,
    prune_keys_at: usize,
    /// Per render-node file state (GEM handles), keyed by file identity.
    pub drm_files: HashMap<FileKey, DrmFile>,
    /// System memory pinned by this process's GTT and USERPTR BOs (`kfd_mem_limit`).
    pub mem_limit: MemLimit,
}

/// One KFD process.
pub struct Process {
    pub pid: u32,
    pub state: Mutex<ProcState>,
    pub engine: Sdma,
}

impl Process {
    fn new(pid: u32) -> Arc<Process> {
        let pdds = gpus::all()
            .iter()
            .map(|g| Pdd {
                gpu: g,
                drm_file: None,
                vm: Arc::new(RwLock::new(Gpuvm::default())),
                pipes: Arc::default(),
                alloc_idr: BTreeMap::new(),
                doorbells: None,
                vram_usage: 0,
                vram_reserved: 0,
                scratch_backing_va: 0,
                num_gws: 0,
                trap_handler: Arc::default(),
                mmio_page: None,
            })
            .collect();
        Arc::new_cyclic(|weak: &Weak<Process>| Process {
            pid,
            state: Mutex::new(ProcState {
                pid,
                pdds,
                events: EventTable::new(),
                queues: BTreeMap::new(),
                xnack: None,
                svms: Svms::new(&gpus::all().iter().collect::<Vec<_>>()),
                runtime_enabled: false,
                offsets: BTreeMap::new(),
                offset_by_bo: HashMap::new(),
                offset_cursor: DRM_FILE_OFFSET_START,
                bo_by_key: HashMap::new(),
                prune_offsets_at: PRUNE_MIN,
                prune_keys_at: PRUNE_MIN,
                drm_files: HashMap::new(),
                mem_limit: MemLimit::default(),
            }),
            engine: Sdma::new(weak.clone()),
        })
    }
}

impl ProcState {
    /// `kfd_process_device_data_by_id`.
    pub fn pdd(&self, gpu_id: u32) -> Option<&Pdd> {
        self.pdds.iter().find(|p| p.gpu.gpu_id == gpu_id)
    }

    pub fn pdd_mut(&mut self, gpu_id: u32) -> Option<&mut Pdd> {
        self.pdds.iter_mut().find(|p| p.gpu.gpu_id == gpu_id)
    }

    /// The pdd whose VM was acquired with render file `key`.
    pub fn pdd_by_drm_file(&self, key: FileKey) -> Option<&Pdd> {
        self.pdds.iter().find(|p| p.drm_file == Some(key))
    }

    /// Assigns a render-node mmap offset to `bo` (`drm_vma_offset_add`), page granular, below
    /// 1 TiB.
    pub fn alloc_mmap_offset(&mut self, bo: &Arc<Bo>) -> Result<u64, Errno> {
        if let Some(off) = self.offset_of(bo) {
            return Ok(off);
        }
        if self.offsets.len() >= self.prune_offsets_at {
            self.prune_offsets();
        }
        let size = bo.size.max(super::sys::PAGE_SIZE);
        let off = if self.offset_cursor + size > DRM_FILE_OFFSET_END {
            // Reclaim dead entries and first-fit from the start.
            self.prune_offsets();
            let mut cur = DRM_FILE_OFFSET_START;
            let mut found = None;
            for (start, w) in &self.offsets {
                if *start >= cur + size {
                    found = Some(cur);
                    break;
                }
                let len = w.upgrade().map(|b| b.size.max(super::sys::PAGE_SIZE)).unwrap_or(0);
                cur = cur.max(start + len);
            }
            match found {
                Some(o) => o,
                None if cur + size <= DRM_FILE_OFFSET_END => cur,
                None => return Err(Errno::ENOMEM),
            }
        } else {
            let off = self.offset_cursor;
            self.offset_cursor += size;
            off
        };
        self.offsets.insert(off, Arc::downgrade(bo));
        self.offset_by_bo.insert(Arc::as_ptr(bo) as usize, off);
        Ok(off)
    }

    /// Drops the offsets of BOs that no longer exist (`drm_vma_offset_remove` at BO release).
    fn prune_offsets(&mut self) {
        let by_bo = &mut self.offset_by_bo;
        self.offsets.retain(|_, w| {
            let live = w.strong_count() > 0;
            if !live {
                by_bo.remove(&(w.as_ptr() as usize));
            }
            live
        });
        self.prune_offsets_at = (2 * self.offsets.len()).max(PRUNE_MIN);
    }

    /// The render-node offset already assigned to `bo`.
    pub fn offset_of(&self, bo: &Arc<Bo>) -> Option<u64> {
        self.offset_by_bo.get(&(Arc::as_ptr(bo) as usize)).copied()
    }

    /// The BO whose offset range contains `[off, off+len)` (`drm_vma_offset_lookup_locked`).
    pub fn bo_at_offset(&self, off: u64, len: u64) -> Option<(u64, Arc<Bo>)> {
        let (start, w) = self.offsets.range(..=off).next_back()?;
        let bo = w.upgrade()?;
        (off + len <= start + bo.size.max(super::sys::PAGE_SIZE)).then_some((*start, bo))
    }

    /// Records `bo` as the object behind memfd identity `key`.
    pub fn remember_bo(&mut self, bo: &Arc<Bo>) {
        if self.bo_by_key.len() >= self.prune_keys_at {
            self.bo_by_key.retain(|_, (w, _)| w.strong_count() > 0);
            self.prune_keys_at = (2 * self.bo_by_key.len()).max(PRUNE_MIN);
        }
        if let Some(k) = bo.key() {
            let name = (!bo.foreign && !bo.is_userptr()).then_some(BoName {
                gpu_id: bo.gpu_id,
                flags: bo.flags,
                size: bo.size,
            });
            self.bo_by_key.insert(k, (Arc::downgrade(bo), name));
        }
    }

    /// The BO of this process behind memfd identity `key` if still alive (`Ok`), else the
    /// memfd name of the model BO it was, if known (`Err(Some)`).
    pub fn bo_by_key(&self, key: FileKey) -> Result<Arc<Bo>, Option<BoName>> {
        let (w, name) = self.bo_by_key.get(&key).ok_or(None)?;
        w.upgrade().ok_or(*name)
    }
}

// ------------------------------------------------------------------------------------------
// Global registry: the current KFD process and the simulated files.
// ------------------------------------------------------------------------------------------

/// The KFD process of this OS process (if any). After fork the child sees the parent's entry
/// with a foreign pid and replaces it on first use.
static CURRENT: Mutex<Option<Arc<Process>>> = Mutex::new(None);

/// The process for `getpid()`, created on first use (a render-node ioctl may come before any
/// /dev/kfd open; the kernel's DRM state does not need a KFD process, ours lives in the same
/// struct for simplicity).
pub fn current() -> Arc<Process> {
    let pid = super::sys::getpid();
    let mut cur = CURRENT.lock();
    if let Some(p) = cur.as_ref() {
        if p.pid == pid {
            return p.clone();
        }
        // Inherited from the parent across fork: abandon it without running destructors that
        // could touch the parent's (non-existent here) threads.
        if let Some(old) = cur.take() {
            old.engine.close_inherited();
            std::mem::forget(old);
        }
    }
    super::debug::process_started(pid);
    super::pc_sampling::process_started(pid);
    let p = Process::new(pid);
    *cur = Some(p.clone());
    p
}

/// The current process only if it already exists for this pid.
pub fn current_if_exists() -> Option<Arc<Process>> {
    let pid = super::sys::getpid();
    CURRENT.lock().as_ref().filter(|p| p.pid == pid).cloned()
}

/// pthread_atfork handlers: hold the global lock across fork so the child never inherits it
/// locked by a thread that does not exist there.
pub(super) fn atfork_prepare() {
    std::mem::forget(CURRENT.lock());
}

pub(super) fn atfork_release() {
    // SAFETY: paired with the `forget`ed guard taken in `atfork_prepare` by this same thread
    // (the parent), or by the thread that became the child's only thread.
    unsafe { CURRENT.force_unlock() };
}

/// Identifies a dma-buf fd: a memfd of a model BO. Returns the BO of this process (same inode →
/// same object, like `drm_gem_prime_fd_to_handle` on one device) or a new import parsed from
/// the memfd name, which maps the memfd and keeps no fd (the caller may close `fd` at once, as
/// the kernel's import holds the dma-buf, not the fd). Bad fd → EBADF; not a model dma-buf →
/// EINVAL (`dma_buf_get`).
pub fn bo_from_dmabuf(st: &mut ProcState, fd: RawFd) -> Result<Arc<Bo>, Errno> {
    let stat = sys::fstat(fd).map_err(|_| Errno::EBADF)?;
    let key = (stat.st_dev, stat.st_ino);
    let known = match st.bo_by_key(key) {
        Ok(bo) => return Ok(bo),
        Err(name) => name,
    };
    if known.is_none() {
        if let Some((map, size)) = super::udmabuf::open_pages(fd, &stat) {
            // Another driver's dma-buf: amdgpu_gem_prime_import makes a GTT sg BO of it.
            let bo = Arc::new(Bo::new_foreign(0, map, size));
            st.remember_bo(&bo);
            return Ok(bo);
        }
    }
    let name = match known {
        Some(name) => name,
        None => BoName::parse_link(&sys::fd_link(fd).ok_or(Errno::EINVAL)?).ok_or(Errno::EINVAL)?,
    };
    if stat.st_size as u64 != name.size || name.size == 0 {
        return Err(Errno::EINVAL);
    }
    let bo = Arc::new(Bo::from_fd(fd, key, name)?);
    st.remember_bo(&bo);
    Ok(bo)
}
