//! The process-wide runtime: the KFD, the devices, the VA manager, the allocation registry, the
//! signal pool, the event page and per-device stream state. Initialised once, on the first HIP
//! call (or `hipInit`). It is the context object every layer extends with `impl Runtime`; the
//! layers above the core keep their process state in its feature slots ([`Feature`]) and their
//! per-object state in [`Slot`]s of core objects, so the core names none of their types.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::copy::Staging;
use crate::core::device::{visible_gpus, Device};
use crate::core::device_props;
use crate::core::memory::Registry;
use crate::core::signal::{EventPage, Signal, SignalPool};
use crate::core::small::SmallPool;
use crate::core::stream::{DeviceStreams, Fence};
use crate::core::va::VaManager;
use kfd_ioctl::kfd::kfd_hsa_memory_exception_data;
use kfd_ioctl::{Kfd, RenderNode};
use parking_lot::Mutex;
use std::any::Any;
use std::sync::OnceLock;

/// Bytes of GPU VA reserved at start-up (shrinks if the address space is smaller).
const APERTURE: u64 = 2 << 40;

#[derive(Debug)]
pub struct Runtime {
    pub kfd: Kfd,
    /// XNACK is on for this process (`HSA_XNACK=1`, see [`xnack_mode`]): every GPU reaches
    /// pageable host memory (clr's `hmmCpuMemoryAccessible_`).
    pub xnack: bool,
    pub devices: Vec<Device>,
    pub va: VaManager,
    pub allocs: Registry,
    /// Blocks that small `hipMalloc`s are slots of, the threads' caches of their free slots,
    /// and the BO cache (src/core/small.rs).
    pub small: SmallPool,
    pub signals: SignalPool,
    pub event_page: OnceLock<EventPage>,
    pub streams: Vec<DeviceStreams>,
    pub staging: Vec<Staging>,
    /// Signal slots (memset edges, host-function flags, event timestamps) waiting for every
    /// fence that may still write or read them.
    pub deferred: Mutex<Vec<(Vec<Fence>, Signal)>>,
    /// The first VM fault a GPU reported (sticky; stored by the fault watcher or a sleeping
    /// wait, src/core/signal.rs).
    pub fault: OnceLock<kfd_hsa_memory_exception_data>,
    /// Where sequence numbers start (queue seqs, IPC event record counters): 0, or
    /// `HIPKFD_SEQ_START` (a debug knob to run across 2^32 quickly).
    pub seq_start: u64,
    /// The state of the layers above the core, one slot per [`Feature`].
    features: [OnceLock<Box<dyn Any + Send + Sync>>; Feature::COUNT],
}

/// The layers above the core that keep process-wide state in the runtime, each in a slot of
/// its own ([`Runtime::feature`]): the core holds that state without naming its type, so it
/// imports nothing above it. Each feature module has one accessor (`Runtime::peer`, ...).
#[derive(Clone, Copy, Debug)]
pub enum Feature {
    /// `hipMemAdvise` advice and prefetch locations of managed memory (src/mem/advice.rs).
    Advice,
    /// Mipmapped arrays (src/mem/array.rs).
    Mipmaps,
    /// Registered host pages (src/mem/hostreg.rs).
    UserPages,
    /// Stream-ordered memory pools (src/mem/mempool.rs).
    MemPools,
    /// Peer access: which GPUVM maps which device's memory, peer-copy queues (src/share/peer.rs).
    Peer,
    /// Virtual memory management: chunks, reservations (src/share/vmm.rs).
    Vmm,
    /// Hostcall buffers and their listener (src/kernels/hostcall.rs).
    Hostcalls,
    /// Graph allocation nodes' memory (src/graph/mem.rs).
    GraphMem,
}

impl Feature {
    const COUNT: usize = Feature::GraphMem as usize + 1;
}

/// Applies `HSA_XNACK` as ROCr does before it creates a queue: "1" turns XNACK on, "0" off,
/// anything else (or unset) keeps the kernel's default (`amdgpu.noretry`); a refusal (EPERM: a
/// GPU without per-process XNACK) is logged and the mode queried. Returns whether it is on
/// (`AMDKFD_IOC_SET_XNACK_MODE` with -1; false when that fails).
fn xnack_mode(kfd: &Kfd) -> bool {
    let want = match std::env::var("HSA_XNACK").as_deref() {
        Ok("1") => Some(1),
        Ok("0") => Some(0),
        _ => None,
    };
    if let Some(w) = want {
        if let Err(e) = kfd.set_xnack_mode(w) {
            crate::core::log::hipkfd_log!("HSA_XNACK={w}: SET_XNACK_MODE: {e}");
        }
    }
    let on = kfd.set_xnack_mode(-1).unwrap_or(false);
    crate::core::log::hipkfd_log!("XNACK {}", if on { "on" } else { "off" });
    on
}

static RUNTIME: OnceLock<Result<Runtime, hipError_t>> = OnceLock::new();

/// The runtime, initialised on first use. Errors: `hipErrorNoDevice` when there is no KFD or no
/// visible GPU, `hipErrorInitializationError` when a GPU cannot be set up.
pub fn runtime() -> Result<&'static Runtime, hipError_t> {
    RUNTIME.get_or_init(Runtime::init).as_ref().map_err(|e| *e)
}

impl Runtime {
    fn init() -> Result<Runtime, hipError_t> {
        crate::core::coexist::check();
        let gpus = visible_gpus();
        if gpus.is_empty() {
            crate::core::log::hipkfd_log!("no visible GPU in the KFD topology");
            return Err(hipError_t::hipErrorNoDevice);
        }
        let kfd = Kfd::open().map_err(|e| {
            crate::core::log::hipkfd_log!("open /dev/kfd: {e}");
            hipError_t::hipErrorNoDevice
        })?;
        let init_err = |what: &str, e: nix::errno::Errno| {
            crate::core::log::hipkfd_log!("{what}: {e}");
            hipError_t::hipErrorInitializationError
        };
        let (major, minor) = kfd.get_version().map_err(|e| init_err("GET_VERSION", e))?;
        crate::core::log::hipkfd_log!("KFD ioctl version {major}.{minor}, {} GPU(s)", gpus.len());
        // No AMDKFD_IOC_RUNTIME_ENABLE: with mode_mask 0 it is `runtime_disable`
        // (kfd_chardev.c, kfd_ioctl_runtime_enable), and enabling only hands a debugger the
        // runtime's r_debug for code objects, which this runtime never loads. ROCr 5.2 does not
        // call it either (kfd-sim/FIDELITY.md).
        let xnack = xnack_mode(&kfd);
        let mut devices = Vec::with_capacity(gpus.len());
        for (ordinal, mut topo) in gpus.into_iter().enumerate() {
            topo.node.xnack_enabled = xnack;
            let gpu_id = topo.node.gpu_id;
            let render = RenderNode::open(topo.drm_render_minor).map_err(|e| init_err("open render node", e))?;
            kfd.acquire_vm(&render, gpu_id).map_err(|e| init_err("ACQUIRE_VM", e))?;
            let props = device_props::device_props(&topo.node);
            let large_bar = topo.large_bar;
            devices.push(Device {
                ordinal,
                gpu_id,
                render,
                apertures: Default::default(),
                props,
                large_bar,
                topo,
                config: Default::default(),
                mmio: None,
            });
        }
        let apertures = kfd.get_process_apertures().map_err(|e| init_err("GET_PROCESS_APERTURES_NEW", e))?;
        let (mut lo, mut hi) = (0u64, u64::MAX);
        for d in devices.iter_mut() {
            if let Some(a) = apertures.iter().find(|a| a.gpu_id == d.gpu_id) {
                d.apertures = *a;
                lo = lo.max(a.gpuvm_base);
                hi = hi.min(a.gpuvm_limit);
            }
        }
        let va = VaManager::reserve(lo, hi, APERTURE).map_err(|e| init_err("reserve the GPUVM aperture", e))?;
        let n = devices.len();
        let mut rt = Runtime {
            kfd,
            xnack,
            devices,
            va,
            allocs: Registry::default(),
            small: SmallPool::default(),
            signals: SignalPool::default(),
            event_page: OnceLock::new(),
            streams: (0..n).map(|_| DeviceStreams::default()).collect(),
            staging: (0..n).map(|_| Staging::default()).collect(),
            deferred: Mutex::new(vec![]),
            fault: OnceLock::new(),
            features: Default::default(),
            seq_start: seq_start(),
        };
        let page = rt.event_page_init().map_err(|e| {
            crate::core::log::hipkfd_log!("the KFD event page: {e:?}");
            hipError_t::hipErrorInitializationError
        })?;
        let _ = rt.event_page.set(page);
        for d in 0..n {
            rt.map_mmio_remap(d);
        }
        // Last: nothing after it can fail, so the thread finds the runtime initialised.
        rt.fault_watcher_start();
        Ok(rt)
    }

    /// Maps device `d`'s MMIO remap page (one page, `KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP`, CPU
    /// mapping through /dev/kfd at `KFD_MMAP_TYPE_MMIO`) on the CPU and on `d`'s GPUVM, as
    /// libhsakmt does (`fmm.c` `map_mmio`), and points `hdpMemFlushCntl` / `hdpRegFlushCntl`
    /// at its first two words (`KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL` = 0, `..._REG_...` = 4;
    /// ROCr `GpuAgent::InitRegionList`, `HSA_HEAPTYPE_MMIO_REMAP`). A kernel without the page
    /// (APUs, old kernels) leaves both null, as ROCr does.
    fn map_mmio_remap(&mut self, d: usize) {
        use kfd_ioctl::kfd::*;
        let flags =
            KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
        match self.bo_alloc(d, 4096, flags, &[d], true) {
            Ok(bo) => {
                let dev = &mut self.devices[d];
                dev.props.hdpMemFlushCntl = bo.va as *mut std::ffi::c_uint;
                dev.props.hdpRegFlushCntl = (bo.va + 4) as *mut std::ffi::c_uint;
                dev.mmio = Some(bo);
            }
            Err(e) => {
                crate::core::log::hipkfd_log!("device {d}: no MMIO remap page ({e:?}); HDP flush addresses stay null")
            }
        }
    }

    /// Feature `f`'s state, made by `init` on first use. Each feature keeps one type in its
    /// slot, so the downcast cannot fail (a panic here is a bug in the feature's accessor).
    pub fn feature<T: Any + Send + Sync>(&self, f: Feature, init: impl FnOnce(&Runtime) -> T) -> &T {
        let state = self.features[f as usize].get_or_init(|| Box::new(init(self)));
        state.downcast_ref().expect("a feature slot holds its feature's type")
    }

    /// Feature `f`'s state if something made it already ([`feature`](Self::feature)), without
    /// making it: for hot paths that only consult a feature a program may never use.
    pub fn feature_if<T: Any + Send + Sync>(&self, f: Feature) -> Option<&T> {
        let state = self.features[f as usize].get()?;
        Some(state.downcast_ref().expect("a feature slot holds its feature's type"))
    }

    /// The KFD event page (made during init).
    pub fn event_page(&self) -> Result<&EventPage, hipError_t> {
        self.event_page.get().ok_or(hipError_t::hipErrorNotInitialized)
    }

    /// Device `d`. Errors: `hipErrorInvalidDevice`.
    pub fn device(&self, d: i32) -> Result<&Device, hipError_t> {
        usize::try_from(d).ok().and_then(|d| self.devices.get(d)).ok_or(hipError_t::hipErrorInvalidDevice)
    }

    /// The HIP ordinal of the visible device with KFD `gpu_id`, if any.
    pub fn device_of_gpu(&self, gpu_id: u32) -> Option<usize> {
        self.devices.iter().position(|d| d.gpu_id == gpu_id)
    }
}

/// `HIPKFD_SEQ_START=<n>` (decimal or `0x` hex; read once at init): the first sequence number of
/// every queue and IPC event counter, e.g. a few thousand below 2^32 to test the wrap. Unset or
/// unparsable: 0.
fn seq_start() -> u64 {
    let Ok(v) = std::env::var("HIPKFD_SEQ_START") else { return 0 };
    let v = v.trim();
    let n = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    };
    match n {
        Ok(n) if n < 1 << 62 => {
            crate::core::log::hipkfd_log!("HIPKFD_SEQ_START: sequence numbers start at {n:#x}");
            n
        }
        _ => {
            crate::core::log::hipkfd_log!("HIPKFD_SEQ_START={v:?} ignored (want an integer below 2^62)");
            0
        }
    }
}

/// State that a layer above the core keeps in a core object (a stream's or an event's capture,
/// src/graph; an SDMA queue's AQL queue, src/kernels/aql.rs): the core stores it without naming
/// its type. Empty until first used.
#[derive(Debug, Default)]
pub struct Slot(Mutex<Option<Box<dyn Any + Send>>>);

impl Slot {
    /// The slot's value as a `T` (made with `T::default()` on first use), locked. A slot holds
    /// one type, its layer's, so the downcast cannot fail.
    pub fn lock<T: Any + Send + Default>(&self) -> parking_lot::MappedMutexGuard<'_, T> {
        parking_lot::MutexGuard::map(self.0.lock(), |b| {
            b.get_or_insert_with(|| Box::new(T::default())).downcast_mut().expect("a slot holds its layer's type")
        })
    }
}
