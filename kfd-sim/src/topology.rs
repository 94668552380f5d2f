//! The simulated machine: one CPU node and 1..N GPU nodes (gfx90a, AMD Instinct MI210 by
//! default), and the GPU<->GPU links between them.
//!
//! A `Topology` comes from a preset (`xgmi-N`, `pcie-N`, `pcie-p2p-N`) or from a TOML file. The
//! launcher writes it to `$KFDSIM_SESSION/topology.toml` (the canonical, fully explicit form of the
//! same TOML schema); the model reads it back once with [`current`].
//!
//! KFD node numbering follows the kernel (`kfd_topology.c`): node 0 is the CPU, GPUs are nodes
//! 1..=N in PCI order. Values a real kernel derives (`gpu_id` from `kfd_generate_gpu_id`,
//! `location_id` = `pci_dev_id()`, `simd_count`) are derived the same way unless a topology file
//! sets them.
//!
//! TOML schema (every GPU key is optional in a user file; unset keys take the MI210 defaults
//! for that GPU's index):
//! ```toml
//! [[gpu]]                    # one table per GPU, in KFD node order (node 1, 2, ...)
//! hive_id = 0x4a1f00c0ffee   # GPUs sharing a non-zero hive_id are joined by xGMI
//! [[gpu]]
//! hive_id = 0x4a1f00c0ffee
//! [[gpu]]
//! large_bar = true           # host can map all of VRAM (heap FB_PUBLIC)
//! pcie_p2p = true            # PCIe peer access to other large-BAR pcie_p2p GPUs
//! vram_size = 34359738368    # bytes
//!
//! # p2p_links = false         # top level: a kernel without p2p_links (no CONFIG_HSA_AMD_P2P)
//!
//! [[link]]                   # optional: if any [[link]] is given, links are not derived
//! from = 1                   # KFD node ids; one entry per GPU pair, both directions
//! to = 2
//! type = "xgmi"              # or "pcie" (PCIe peer-to-peer, published as p2p_links)
//! p2p = true
//! ```
//! Without `[[link]]` tables the links are derived as the kernel builds them: xGMI between every
//! pair of GPUs with the same non-zero `hive_id`, and a PCIe P2P link between every other pair of
//! GPUs that are both `large_bar` and `pcie_p2p` (`kfd_dev_create_p2p_links`,
//! `amdgpu_device_is_peer_accessible`).

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The topology used when neither `--gpus` nor `--topology` (nor `KFDSIM_TOPOLOGY`) is given:
/// 2 GPUs gfx90a joined by xGMI.
pub const DEFAULT_PRESET: &str = "xgmi-2";
/// Most GPUs a preset or a topology file may describe.
pub const MAX_GPUS: usize = 32;
/// Most GPUs in a preset (`xgmi-8`, `pcie-8`, `pcie-p2p-8`).
pub const MAX_PRESET_GPUS: usize = 8;
/// `hive_id` of the preset xGMI hives.
pub const PRESET_HIVE_ID: u64 = 0x4a1f_52c3_9d07_e1b5;

/// An error building, parsing or validating a topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyError(pub String);

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TopologyError {}

fn err<T>(msg: impl Into<String>) -> Result<T, TopologyError> {
    Err(TopologyError(msg.into()))
}

/// The CPU node (KFD node 0). Taken from the host when the topology is built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    /// Online CPU cores (`cpu_cores_count`).
    pub cores: u32,
    /// APIC id of the first core (`cpu_core_id_base`); libhsakmt matches it against /proc/cpuinfo.
    pub core_id_base: u32,
    /// System memory in bytes (the CPU node's `mem_banks/0` `size_in_bytes`, heap type SYSTEM).
    pub mem_size: u64,
    /// Maximum CPU clock in MHz (`max_engine_clk_ccompute`).
    pub max_engine_clk_ccompute: u32,
}

impl Cpu {
    /// The CPU node of this host: online cores (sysconf), first `apicid` of /proc/cpuinfo,
    /// `MemTotal` of /proc/meminfo, `cpuinfo_max_freq` of cpufreq (or the cpuinfo "cpu MHz").
    pub fn host() -> Cpu {
        // SAFETY: sysconf has no memory-safety preconditions.
        let cores = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as u32;
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        let core_id_base = field("apicid").and_then(|v| v.parse().ok()).unwrap_or(0);
        let mem_size = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines().find_map(|l| {
                    let rest = l.strip_prefix("MemTotal:")?;
                    rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
                })
            })
            .map(|kib| kib * 1024)
            .unwrap_or(16 << 30);
        let max_engine_clk_ccompute = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .map(|khz| khz / 1000)
            .or_else(|| field("cpu MHz").and_then(|v| v.parse::<f64>().ok()).map(|m| m as u32))
            .unwrap_or(2000);
        Cpu { cores, core_id_base, mem_size, max_engine_clk_ccompute }
    }
}

/// One GPU (one KFD node). Field names follow the KFD sysfs node `properties` keys where one
/// exists. Defaults ([`Gpu::mi210`]) are an AMD Instinct MI210 (Aldebaran, gfx90a).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// KFD node id: 1..=N (node 0 is the CPU).
    pub node_id: u32,
    /// KFD `gpu_id`: non-zero, 16 bits, unique (kernel `kfd_generate_gpu_id` hash).
    pub gpu_id: u32,
    /// KFD node `name` (lower-case ASIC name, "aldebaran").
    pub name: String,
    /// `gfx_target_version`: major*10000 + minor*100 + stepping (90010 = gfx90a).
    pub gfx_target_version: u32,
    /// Marketing name (libdrm amdgpu.ids: 740F,02 = "AMD Instinct MI210").
    pub marketing_name: String,
    /// PCI vendor id (0x1002).
    pub vendor_id: u32,
    /// PCI device id (0x740f = MI210).
    pub device_id: u32,
    /// PCI revision id.
    pub revision_id: u32,
    /// PCI subsystem vendor id.
    pub subsystem_vendor_id: u32,
    /// PCI subsystem device id.
    pub subsystem_device_id: u32,
    /// VRAM size in bytes (default 64 GiB). Memfd-backed, so it costs only the pages touched.
    pub vram_size: u64,
    /// VRAM bus width in bits (mem bank `width`).
    pub vram_width: u32,
    /// Maximum memory clock in MHz (mem bank `mem_clk_max`).
    pub mem_clk_max: u32,
    /// GTT (system memory the GPU can map) size in bytes, for AMDGPU_INFO_VRAM_GTT / MEMORY.
    pub gtt_size: u64,
    /// Large BAR: the host can map all of VRAM. Mem bank heap FB_PUBLIC (1) if true, else
    /// FB_PRIVATE (2); small BAR means no CPU->GPU io_link and no PCIe P2P (kfd_crat.c).
    pub large_bar: bool,
    /// PCIe peer-to-peer DMA possible (amdgpu `pcie_p2p` and a P2PDMA path). Only used to derive
    /// PCIe P2P links; needs `large_bar` on both ends.
    pub pcie_p2p: bool,
    /// DRM render node minor: /dev/dri/renderD<minor> (128 + index).
    pub drm_render_minor: u32,
    /// DRM primary node minor: /dev/dri/card<minor> (index).
    pub drm_card_minor: u32,
    /// PCI address "dddd:bb:dd.f".
    pub pci_bdf: String,
    /// `location_id` = bus << 8 | devfn (kernel `pci_dev_id`).
    pub location_id: u32,
    /// PCI domain.
    pub domain: u32,
    /// xGMI hive id; 0 = not in a hive. GPUs with the same non-zero id are joined by xGMI.
    pub hive_id: u64,
    /// `unique_id` (the ASIC serial the kernel publishes).
    pub unique_id: u64,
    /// SDMA engines reachable over PCIe (queue type SDMA).
    pub num_sdma_engines: u32,
    /// SDMA engines dedicated to xGMI (queue type SDMA_XGMI).
    pub num_sdma_xgmi_engines: u32,
    /// SDMA queues per engine.
    pub num_sdma_queues_per_engine: u32,
    /// Compute (CP) queues.
    pub num_cp_queues: u32,
    /// Global wave syncs.
    pub num_gws: u32,
    /// XCCs (compute dies) on the node.
    pub num_xcc: u32,
    /// SIMDs = array_count * cu_per_simd_array * simd_per_cu.
    pub simd_count: u32,
    pub simd_per_cu: u32,
    /// Shader arrays (shader engines * arrays per engine).
    pub array_count: u32,
    pub simd_arrays_per_engine: u32,
    pub cu_per_simd_array: u32,
    pub max_waves_per_simd: u32,
    pub wave_front_size: u32,
    pub lds_size_in_kb: u32,
    pub gds_size_in_kb: u32,
    pub max_slots_scratch_cu: u32,
    /// First compute-unit processor id (kernel counter from 0x80001000, + CUs per GPU).
    pub simd_id_base: u32,
    /// Maximum engine clock in MHz.
    pub max_engine_clk_fcompute: u32,
    /// MEC firmware version (`fw_version`).
    pub fw_version: u32,
    pub sdma_fw_version: u32,
    /// HSA_CAP_* bits (kfd_topology.h).
    pub capability: u32,
    /// HSA_DBG_* bits.
    pub debug_prop: u64,
    /// L1 vector data cache per CU, KiB.
    pub l1_cache_kb: u32,
    /// L1 instruction cache (shared by 2 CUs), KiB.
    pub l1_inst_cache_kb: u32,
    /// L1 scalar data cache (shared by 2 CUs), KiB.
    pub l1_scalar_cache_kb: u32,
    /// L2 cache, KiB.
    pub l2_cache_kb: u32,
    /// The VBIOS part number the PCI device's `vbios_version` attribute shows (amdgpu
    /// `amdgpu_atombios_get_vbios_version`); rocm-smi counts a card only if the file exists.
    #[serde(default = "mi210_vbios_version")]
    pub vbios_version: String,
}

fn mi210_vbios_version() -> String {
    "113-D67301-063".into()
}

/// A node's compute-queue buffer sizes ([`Gpu::queue_sizes`]), bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSizes {
    pub ctl_stack_size: u32,
    pub cwsr_size: u32,
    pub debug_memory_size: u32,
    pub eop_buffer_size: u32,
}

impl QueueSizes {
    /// The CWSR area a queue maps: `(cwsr_size + debug_memory_size) * num_xcc`, page aligned.
    pub fn total_cwsr(&self, num_xcc: u32) -> u64 {
        ((self.cwsr_size as u64 + self.debug_memory_size as u64) * num_xcc.max(1) as u64).div_ceil(4096) * 4096
    }
}

/// HSA_CAP_* bits from the kernel's `kfd_topology.h`.
pub mod cap {
    pub const WATCH_POINTS_SUPPORTED: u32 = 0x0000_0080;
    pub const WATCH_POINTS_TOTALBITS_SHIFT: u32 = 8;
    pub const DOORBELL_TYPE_TOTALBITS_SHIFT: u32 = 12;
    pub const DOORBELL_TYPE_2_0: u32 = 0x2;
    pub const TRAP_DEBUG_SUPPORT: u32 = 0x0000_8000;
    pub const TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED: u32 = 0x0001_0000;
    pub const TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED: u32 = 0x0002_0000;
    pub const TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED: u32 = 0x0004_0000;
    pub const MEM_EDCSUPPORTED: u32 = 0x0010_0000;
    pub const RASEVENTNOTIFY: u32 = 0x0020_0000;
    pub const SRAM_EDCSUPPORTED: u32 = 0x0400_0000;
    /// Set by `kfd_topology_add_device` where `KFD_IS_SVM_API_SUPPORTED` (CONFIG_HSA_AMD_SVM
    /// and device memory for HMM, as on an MI200 host): the model answers AMDKFD_IOC_SVM
    /// (`model::svm`), so libhsakmt registers CWSR areas as SVM ranges, ROCr enables its SVM
    /// API and kfdtest runs its SVM suites.
    pub const SVMAPI_SUPPORTED: u32 = 0x0800_0000;
    /// `kfd_topology_set_dbg_firmware_support`: GC 9.4.2 with MEC firmware 51 or later; the
    /// model has the debugger interface (`model::debug`), which libhsakmt's
    /// `hsaKmtCheckRuntimeDebugSupport` wants this bit for.
    pub const TRAP_DEBUG_FIRMWARE_SUPPORTED: u32 = 0x2000_0000;
}

/// `enum amdgpu_ras_block` bits (amdgpu_ras.h; the enum of kernels whose last block is MPIO,
/// `AMDGPU_RAS_BLOCK_COUNT` 19), the units of `adev->ras_enabled` and `ras->features`.
pub mod ras {
    pub const UMC: u32 = 1 << 0;
    pub const SDMA: u32 = 1 << 1;
    pub const GFX: u32 = 1 << 2;
    pub const MMHUB: u32 = 1 << 3;
    pub const PCIE_BIF: u32 = 1 << 5;
    pub const HDP: u32 = 1 << 6;
    pub const XGMI_WAFL: u32 = 1 << 7;
    pub const DF: u32 = 1 << 8;
    pub const MP0: u32 = 1 << 11;
    pub const MP1: u32 = 1 << 12;
    pub const VCN: u32 = 1 << 15;
    pub const JPEG: u32 = 1 << 16;
    pub const MPIO: u32 = 1 << 18;
    /// `AMDGPU_RAS_BLOCK_MASK`.
    pub const BLOCK_MASK: u32 = (1 << 19) - 1;
}

/// The kernel's `hash_32(val, bits)` (include/linux/hash.h, GOLDEN_RATIO_32).
fn hash_32(val: u32, bits: u32) -> u32 {
    val.wrapping_mul(0x61C8_8647) >> (32 - bits)
}

/// Parses "dddd:bb:dd.f" into (domain, bus, device, function).
pub fn parse_bdf(bdf: &str) -> Option<(u32, u32, u32, u32)> {
    let (domain, rest) = bdf.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    let p = |s: &str, max: u32| u32::from_str_radix(s, 16).ok().filter(|v| *v <= max);
    if domain.len() != 4 || bus.len() != 2 || dev.len() != 2 || func.len() != 1 {
        return None;
    }
    Some((p(domain, 0xffff)?, p(bus, 0xff)?, p(dev, 0x1f)?, p(func, 7)?))
}

impl Gpu {
    /// An AMD Instinct MI210 (gfx90a, 104 CUs, 64 GiB HBM2e, large BAR) as GPU `index`
    /// (0-based): KFD node index+1, renderD(128+index), card(index), PCI 0000:(03+0x20*index):00.0,
    /// not in a hive, no PCIe P2P. Derived fields (`gpu_id`, `location_id`, ...) are filled in.
    pub fn mi210(index: u32) -> Gpu {
        let bus = 0x03 + 0x20 * (index % 8) + (index / 8);
        let mut g = Gpu {
            node_id: index + 1,
            gpu_id: 0,
            name: "aldebaran".into(),
            gfx_target_version: 90010,
            marketing_name: "AMD Instinct MI210".into(),
            vendor_id: 0x1002,
            device_id: 0x740f,
            revision_id: 0x02,
            subsystem_vendor_id: 0x1002,
            subsystem_device_id: 0x0c34,
            vram_size: 64 << 30,
            vram_width: 4096,
            mem_clk_max: 1600,
            gtt_size: 64 << 30,
            large_bar: true,
            pcie_p2p: false,
            drm_render_minor: 128 + index,
            drm_card_minor: index,
            pci_bdf: format!("0000:{bus:02x}:00.0"),
            location_id: 0,
            domain: 0,
            hive_id: 0,
            unique_id: 0x2c6a_1d80_5e37_0000 | (u64::from(index) * 0x1_0001),
            num_sdma_engines: 2,
            num_sdma_xgmi_engines: 3,
            num_sdma_queues_per_engine: 8,
            num_cp_queues: 24,
            num_gws: 64,
            num_xcc: 1,
            simd_count: 0,
            simd_per_cu: 4,
            array_count: 8,
            simd_arrays_per_engine: 1,
            cu_per_simd_array: 13,
            max_waves_per_simd: 8,
            wave_front_size: 64,
            lds_size_in_kb: 64,
            gds_size_in_kb: 0,
            max_slots_scratch_cu: 32,
            simd_id_base: 0,
            max_engine_clk_fcompute: 1700,
            fw_version: 78,
            sdma_fw_version: 8,
            capability: cap::WATCH_POINTS_SUPPORTED
                | (2 << cap::WATCH_POINTS_TOTALBITS_SHIFT)
                | (cap::DOORBELL_TYPE_2_0 << cap::DOORBELL_TYPE_TOTALBITS_SHIFT)
                | cap::TRAP_DEBUG_SUPPORT
                | cap::TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED
                | cap::TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED
                | cap::TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED
                | cap::MEM_EDCSUPPORTED
                | cap::RASEVENTNOTIFY
                | cap::SRAM_EDCSUPPORTED
                | cap::SVMAPI_SUPPORTED
                | cap::TRAP_DEBUG_FIRMWARE_SUPPORTED,
            debug_prop: 0x5d7,
            l1_cache_kb: 16,
            l1_inst_cache_kb: 64,
            l1_scalar_cache_kb: 16,
            l2_cache_kb: 8192,
            vbios_version: mi210_vbios_version(),
        };
        g.derive(index, &[]);
        g
    }

    /// `adev->ras_enabled`: the RAS blocks the driver runs, as `amdgpu_ras_check_supported`
    /// composes them from the VBIOS's ECC flags on a dGPU (with `amdgpu.ras_enable` and
    /// `ras_mask` at their defaults): memory ECC active → UMC and DF; SRAM ECC active → every
    /// other block of `AMDGPU_RAS_BLOCK_MASK` but VCN and JPEG (aldebaran has no VCN/JPEG RAS).
    /// `kfd_topology_add_device` publishes the same state as `capability` bits (GFX →
    /// SRAM_EDCSUPPORTED, UMC → MEM_EDCSUPPORTED, any → RASEVENTNOTIFY), so the model reads the
    /// two ECC flags back from those bits: the topology's capability and the AMDGPU_INFO query
    /// ([`Gpu::ras_enabled_features`]) cannot disagree. 0: RAS off (no RAS context).
    pub fn ras_enabled(&self) -> u32 {
        let mut m = 0;
        if self.capability & cap::MEM_EDCSUPPORTED != 0 {
            m |= ras::UMC | ras::DF;
        }
        if self.capability & cap::SRAM_EDCSUPPORTED != 0 {
            m |= !(ras::UMC | ras::DF) & !(ras::VCN | ras::JPEG);
        }
        m & ras::BLOCK_MASK
    }

    /// `ras->features`: the blocks whose RAS feature late init enabled through the RAS TA
    /// (`amdgpu_ras_feature_enable_on_boot` from each block's `ras_late_init`). On aldebaran those
    /// are the blocks with RAS handlers: UMC (umc_v6_7), SDMA (sdma_v4_4), GFX (gfx_v9_4_2),
    /// MMHUB (mmhub_v1_7), PCIE_BIF (nbio_v7_4), HDP (hdp_v4_0), MP0/MP1/MPIO (mca_v3_0), and
    /// XGMI_WAFL only in a hive (`amdgpu_xgmi_ras_late_init` returns early without xGMI
    /// nodes); each only where `ras_enabled` has it.
    pub fn ras_features(&self) -> u32 {
        let mut f =
            ras::UMC | ras::SDMA | ras::GFX | ras::MMHUB | ras::PCIE_BIF | ras::HDP | ras::MP0 | ras::MP1 | ras::MPIO;
        if self.hive_id != 0 {
            f |= ras::XGMI_WAFL;
        }
        f & self.ras_enabled()
    }

    /// The answer to AMDGPU_INFO_RAS_ENABLED_FEATURES (`amdgpu_info_ioctl`):
    /// `ras_enabled << 32 | ras->features`; None where RAS is off (`amdgpu_ras_init` drops the
    /// context when `ras_enabled` is 0, and the query answers EINVAL).
    pub fn ras_enabled_features(&self) -> Option<u64> {
        let en = self.ras_enabled();
        (en != 0).then(|| (en as u64) << 32 | self.ras_features() as u64)
    }

    /// Compute units (array_count * cu_per_simd_array).
    pub fn cu_count(&self) -> u32 {
        self.array_count * self.cu_per_simd_array
    }

    /// The ISA name from `gfx_target_version`: 90010 -> "gfx90a", 110000 -> "gfx1100".
    pub fn gfx_name(&self) -> String {
        let v = self.gfx_target_version;
        format!("gfx{}{:x}{:x}", v / 10000, (v / 100) % 100, v % 100)
    }

    /// PCI bus number from `pci_bdf`.
    pub fn pci_bus(&self) -> u32 {
        parse_bdf(&self.pci_bdf).map(|b| b.1).unwrap_or(0)
    }

    /// PCI devfn (device << 3 | function) from `pci_bdf`.
    pub fn pci_devfn(&self) -> u32 {
        parse_bdf(&self.pci_bdf).map(|b| (b.2 << 3) | b.3).unwrap_or(0)
    }

    /// The kernel's `kfd_generate_gpu_id` hash over the PCI identity and VRAM size
    /// (kfd_topology.c), before uniqueness fix-up.
    pub fn kernel_gpu_id_hash(&self) -> u32 {
        let (domain, bus, dev, func) = parse_bdf(&self.pci_bdf).unwrap_or((0, 0, 0, 0));
        let buf = [
            (dev << 3) | func,
            self.subsystem_vendor_id | (self.subsystem_device_id << 16),
            domain,
            self.device_id,
            bus,
            self.vram_size as u32,
            (self.vram_size >> 32) as u32,
        ];
        buf.iter().fold(0, |h, v| h ^ hash_32(*v, 16))
    }

    /// The compute-queue buffer sizes the kernel computes for the node
    /// (`kfd_queue_ctx_save_restore_size`, kfd_queue.c) and checks in CREATE_QUEUE
    /// (`kfd_queue_acquire_buffers`); `cwsr_size` and `ctl_stack_size` are published in the
    /// node's properties. None below gfx8 (no CWSR).
    pub fn queue_sizes(&self) -> Option<QueueSizes> {
        let gfxv = self.gfx_target_version;
        if gfxv < 80001 {
            return None;
        }
        let align = |v: u32, a: u32| v.div_ceil(a) * a;
        let cu_num = self.simd_count / self.simd_per_cu.max(1) / self.num_xcc.max(1);
        let wave_num = if gfxv < 100100 {
            (cu_num * 40).min(self.array_count / self.simd_arrays_per_engine.max(1) * 512)
        } else {
            cu_num * 32
        };
        let vgpr: u32 = if gfxv / 100 * 100 == 90400 || gfxv == 90010 || gfxv == 90008 || gfxv == 90500 {
            0x80000
        } else if matches!(gfxv, 110000 | 110001 | 120000 | 120001) {
            0x60000
        } else {
            0x40000
        };
        let lds = if gfxv == 90500 { self.lds_size_in_kb << 10 } else { 0x10000 };
        let wg_data_size = align(cu_num * (vgpr + 0x4000 + lds + 0x1000), 4096);
        let per_wave = if gfxv >= 100100 { 12 } else { 8 };
        let mut ctl_stack_size = align(40 + wave_num * per_wave + 8, 4096);
        if gfxv / 10000 * 10000 == 100000 {
            ctl_stack_size = ctl_stack_size.min(0x7000);
        }
        Some(QueueSizes {
            ctl_stack_size,
            cwsr_size: ctl_stack_size + wg_data_size,
            debug_memory_size: align(wave_num * 32, 64),
            eop_buffer_size: if gfxv == 80002 { 0x8000 } else { 4096 },
        })
    }

    /// Fills the fields a kernel derives, except those named in `explicit`.
    fn derive(&mut self, index: u32, explicit: &[&str]) {
        let set = |k: &str| explicit.contains(&k);
        if !set("domain") {
            self.domain = parse_bdf(&self.pci_bdf).map(|b| b.0).unwrap_or(0);
        }
        if !set("location_id") {
            self.location_id = (self.pci_bus() << 8) | self.pci_devfn();
        }
        if !set("simd_count") {
            self.simd_count = self.cu_count() * self.simd_per_cu;
        }
        if !set("simd_id_base") {
            // get_and_inc_gpu_processor_id(): starts at 0x80001000, + total CUs per GPU.
            self.simd_id_base = 0x8000_1000u32.wrapping_add(index * self.cu_count());
        }
        if !set("gpu_id") {
            self.gpu_id = self.kernel_gpu_id_hash();
        }
    }
}

/// Kind of a GPU<->GPU link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkType {
    /// xGMI (io_link type 11, CRAT_IOLINK_TYPE_XGMI), within a hive; published in io_links.
    Xgmi,
    /// PCIe peer-to-peer (io_link type 2, CRAT_IOLINK_TYPE_PCIEXPRESS); published in p2p_links.
    Pcie,
}

impl LinkType {
    /// The sysfs io_link `type` value (HSA_IOLINKTYPE_*).
    pub fn sysfs_type(self) -> u32 {
        match self {
            LinkType::Xgmi => 11,
            LinkType::Pcie => 2,
        }
    }
}

/// A direct GPU<->GPU link. One entry per GPU pair (`from` < `to`); it holds in both directions.
/// GPU<->CPU PCIe links are implicit (every GPU has one) and not listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// KFD node id of one end.
    pub from: u32,
    /// KFD node id of the other end.
    pub to: u32,
    #[serde(rename = "type")]
    pub link_type: LinkType,
    /// Peer access (GPU A can map and DMA GPU B's VRAM) over this link.
    pub p2p: bool,
}

impl Link {
    /// True if this link joins nodes `a` and `b` (either order).
    pub fn joins(&self, a: u32, b: u32) -> bool {
        (self.from == a && self.to == b) || (self.from == b && self.to == a)
    }

    /// The other end of the link as seen from `node`, if `node` is an end.
    pub fn peer_of(&self, node: u32) -> Option<u32> {
        if self.from == node {
            Some(self.to)
        } else if self.to == node {
            Some(self.from)
        } else {
            None
        }
    }
}

/// The whole simulated machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Whether the kernel publishes `p2p_links` (built with `CONFIG_HSA_AMD_P2P`; every node's
    /// properties then carry `p2p_links_count`). `false` models an older kernel: no `p2p_links`
    /// directories and no `p2p_links_count` key, so PCIe peer links are not visible at all
    /// (libhsakmt then synthesises indirect links). Top-level TOML key `p2p_links`, default true.
    #[serde(default = "p2p_links_default")]
    pub p2p_links: bool,
    /// KFD node 0.
    pub cpu: Cpu,
    /// KFD nodes 1..=N, in node order (`gpus[i].node_id == i + 1`).
    #[serde(rename = "gpu")]
    pub gpus: Vec<Gpu>,
    /// GPU<->GPU links only, one per pair.
    #[serde(rename = "link", default)]
    pub links: Vec<Link>,
}

fn p2p_links_default() -> bool {
    true
}

/// Names of all presets, in a stable order.
pub fn preset_names() -> Vec<String> {
    let mut v = Vec::new();
    for n in 1..=MAX_PRESET_GPUS {
        v.push(format!("xgmi-{n}"));
    }
    for n in 1..=MAX_PRESET_GPUS {
        v.push(format!("pcie-{n}"));
    }
    for n in 2..=MAX_PRESET_GPUS {
        v.push(format!("pcie-p2p-{n}"));
    }
    v
}

impl Topology {
    /// A preset, with the CPU node of this host:
    /// - `xgmi-N` (N = 1..=8): N MI210 in one xGMI hive, fully connected, large BAR;
    /// - `pcie-N` (N = 1..=8): N MI210 on PCIe, small BAR (VRAM heap FB_PRIVATE), no P2P;
    /// - `pcie-p2p-N` (N = 2..=8): N MI210 on PCIe, large BAR, PCIe P2P between all pairs
    ///   (published as p2p_links).
    pub fn preset(name: &str) -> Result<Topology, TopologyError> {
        let (kind, n) = name
            .rsplit_once('-')
            .and_then(|(k, n)| Some((k, n.parse::<usize>().ok()?)))
            .ok_or_else(|| TopologyError(format!("unknown topology preset '{name}'")))?;
        let min = if kind == "pcie-p2p" { 2 } else { 1 };
        if !matches!(kind, "xgmi" | "pcie" | "pcie-p2p") {
            return err(format!("unknown topology preset '{name}' (try: kfdsim presets)"));
        }
        if n < min || n > MAX_PRESET_GPUS {
            return err(format!("preset '{name}': {kind} takes {min}..={MAX_PRESET_GPUS} GPUs"));
        }
        let mut gpus: Vec<Gpu> = (0..n as u32).map(Gpu::mi210).collect();
        for g in &mut gpus {
            match kind {
                "xgmi" => g.hive_id = PRESET_HIVE_ID,
                "pcie" => g.large_bar = false,
                _ => g.pcie_p2p = true,
            }
        }
        let mut t = Topology { p2p_links: true, cpu: Cpu::host(), gpus, links: Vec::new() };
        t.links = t.derived_links();
        t.fix_gpu_ids(&[]);
        t.validate()?;
        Ok(t)
    }

    /// `--gpus N`: the preset `xgmi-N`.
    pub fn with_gpus(n: usize) -> Result<Topology, TopologyError> {
        if n == 0 || n > MAX_PRESET_GPUS {
            return err(format!("--gpus takes 1..={MAX_PRESET_GPUS}, not {n}"));
        }
        Topology::preset(&format!("xgmi-{n}"))
    }

    /// A preset name, or else a path to a TOML topology file.
    pub fn from_arg(arg: &str) -> Result<Topology, TopologyError> {
        if preset_names().iter().any(|p| p == arg) {
            return Topology::preset(arg);
        }
        let path = Path::new(arg);
        if !path.exists() {
            return err(format!("'{arg}' is neither a preset (kfdsim presets) nor a file"));
        }
        Topology::load(path)
    }

    /// Reads a TOML topology file (user form or the canonical topology.toml).
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let text = std::fs::read_to_string(path).map_err(|e| TopologyError(format!("{}: {e}", path.display())))?;
        Topology::from_toml(&text).map_err(|e| TopologyError(format!("{}: {e}", path.display())))
    }

    /// Parses the TOML schema described in the module docs. GPU keys left out take the MI210
    /// defaults of that GPU's index; `cpu` left out is this host's CPU.
    pub fn from_toml(text: &str) -> Result<Topology, TopologyError> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| TopologyError(format!("invalid TOML: {e}")))?;
        for key in table.keys() {
            if !matches!(key.as_str(), "gpu" | "link" | "cpu" | "p2p_links") {
                return err(format!("unknown top-level key '{key}' (expected gpu, link, cpu, p2p_links)"));
            }
        }
        let p2p_links = match table.remove("p2p_links") {
            Some(toml::Value::Boolean(b)) => b,
            Some(_) => return err("'p2p_links' must be true or false"),
            None => true,
        };
        let cpu = match table.remove("cpu") {
            Some(v) => v.try_into::<Cpu>().map_err(|e| TopologyError(format!("[cpu]: {e}")))?,
            None => Cpu::host(),
        };
        let gpu_tables = match table.remove("gpu") {
            Some(toml::Value::Array(a)) => a,
            Some(_) => return err("'gpu' must be an array of tables ([[gpu]])"),
            None => return err("a topology needs at least one [[gpu]]"),
        };
        if gpu_tables.is_empty() || gpu_tables.len() > MAX_GPUS {
            return err(format!("a topology has 1..={MAX_GPUS} GPUs, not {}", gpu_tables.len()));
        }
        let mut gpus = Vec::new();
        let mut explicit_ids = Vec::new();
        for (i, v) in gpu_tables.into_iter().enumerate() {
            let toml::Value::Table(user) = v else {
                return err(format!("gpu[{i}] must be a table"));
            };
            let template = Gpu::mi210(i as u32);
            let mut merged = toml::Table::try_from(&template).map_err(|e| TopologyError(format!("gpu[{i}]: {e}")))?;
            for (k, v) in &user {
                if !merged.contains_key(k) {
                    return err(format!("gpu[{i}]: unknown key '{k}'"));
                }
                merged.insert(k.clone(), v.clone());
            }
            let mut gpu: Gpu =
                toml::Value::Table(merged).try_into().map_err(|e| TopologyError(format!("gpu[{i}]: {e}")))?;
            let explicit: Vec<&str> = user.keys().map(String::as_str).collect();
            gpu.derive(i as u32, &explicit);
            explicit_ids.push(user.contains_key("gpu_id"));
            gpus.push(gpu);
        }
        let mut t = Topology { p2p_links, cpu, gpus, links: Vec::new() };
        t.fix_gpu_ids(&explicit_ids);
        t.links = match table.remove("link") {
            Some(v) => v
                .try_into::<Vec<Link>>()
                .map_err(|e| TopologyError(format!("[[link]]: {e}")))?
                .into_iter()
                .map(|l| if l.from > l.to { Link { from: l.to, to: l.from, ..l } } else { l })
                .collect(),
            None => t.derived_links(),
        };
        t.validate()?;
        Ok(t)
    }

    /// The canonical TOML form: every field explicit (what the launcher writes to
    /// `$KFDSIM_SESSION/topology.toml`). `from_toml(to_toml(t)) == t`.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a Topology always serializes")
    }

    /// Links as the kernel would build them from `hive_id`, `large_bar` and `pcie_p2p`.
    pub fn derived_links(&self) -> Vec<Link> {
        let mut links = Vec::new();
        for (i, a) in self.gpus.iter().enumerate() {
            for b in &self.gpus[i + 1..] {
                if a.hive_id != 0 && a.hive_id == b.hive_id {
                    links.push(Link { from: a.node_id, to: b.node_id, link_type: LinkType::Xgmi, p2p: true });
                } else if a.large_bar && b.large_bar && a.pcie_p2p && b.pcie_p2p {
                    links.push(Link { from: a.node_id, to: b.node_id, link_type: LinkType::Pcie, p2p: true });
                }
            }
        }
        links
    }

    /// Makes derived `gpu_id`s non-zero and unique by bumping collisions (as newer kernels do);
    /// ids marked in `explicit` are left as given (validate() rejects duplicates).
    fn fix_gpu_ids(&mut self, explicit: &[bool]) {
        for i in 0..self.gpus.len() {
            if explicit.get(i).copied().unwrap_or(false) {
                continue;
            }
            let mut id = self.gpus[i].gpu_id & 0xffff;
            while id == 0 || self.gpus[..i].iter().any(|g| g.gpu_id == id) {
                id = (id + 1) & 0xffff;
            }
            self.gpus[i].gpu_id = id;
        }
    }

    /// Checks the invariants the model and the sysfs tree rely on.
    pub fn validate(&self) -> Result<(), TopologyError> {
        if self.gpus.is_empty() || self.gpus.len() > MAX_GPUS {
            return err(format!("a topology has 1..={MAX_GPUS} GPUs, not {}", self.gpus.len()));
        }
        if self.cpu.cores == 0 {
            return err("cpu.cores must be > 0");
        }
        for (i, g) in self.gpus.iter().enumerate() {
            let at = format!("gpu[{i}] (node {})", g.node_id);
            if g.node_id != i as u32 + 1 {
                return err(format!("{at}: node_id must be {} (GPUs are nodes 1..=N in order)", i + 1));
            }
            if g.gpu_id == 0 || g.gpu_id > 0xffff {
                return err(format!("{at}: gpu_id must be 1..=0xffff (KFD_MMAP_GPU_ID is 16 bits)"));
            }
            if !(128..=255).contains(&g.drm_render_minor) {
                return err(format!("{at}: drm_render_minor must be 128..=255"));
            }
            if g.drm_card_minor > 63 {
                return err(format!("{at}: drm_card_minor must be 0..=63"));
            }
            if parse_bdf(&g.pci_bdf).is_none() {
                return err(format!("{at}: pci_bdf '{}' is not dddd:bb:dd.f", g.pci_bdf));
            }
            if g.vram_size == 0 || g.vram_size % 4096 != 0 {
                return err(format!("{at}: vram_size must be a non-zero multiple of 4096"));
            }
            if g.simd_per_cu == 0 || g.cu_count() == 0 || g.simd_count != g.cu_count() * g.simd_per_cu {
                return err(format!(
                    "{at}: simd_count {} != array_count * cu_per_simd_array * simd_per_cu",
                    g.simd_count
                ));
            }
            if g.gfx_target_version < 70000 {
                return err(format!("{at}: gfx_target_version {} is not a GFX version", g.gfx_target_version));
            }
            if g.num_sdma_engines == 0 || g.num_sdma_queues_per_engine == 0 {
                return err(format!("{at}: needs at least one SDMA engine and queue"));
            }
            for h in &self.gpus[..i] {
                let dup = |what: &str| err(format!("{at}: {what} also used by node {}", h.node_id));
                if h.gpu_id == g.gpu_id {
                    return dup("gpu_id");
                }
                if h.drm_render_minor == g.drm_render_minor {
                    return dup("drm_render_minor");
                }
                if h.drm_card_minor == g.drm_card_minor {
                    return dup("drm_card_minor");
                }
                if h.pci_bdf == g.pci_bdf {
                    return dup("pci_bdf");
                }
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            let at = format!("link[{i}] {}-{}", l.from, l.to);
            let (Some(a), Some(b)) = (self.gpu_by_node(l.from), self.gpu_by_node(l.to)) else {
                return err(format!("{at}: ends must be GPU nodes 1..={}", self.gpus.len()));
            };
            if l.from >= l.to {
                return err(format!("{at}: from must be < to (one entry per pair)"));
            }
            if self.links[..i].iter().any(|m| m.joins(l.from, l.to)) {
                return err(format!("{at}: duplicate link"));
            }
            match l.link_type {
                LinkType::Xgmi if a.hive_id == 0 || a.hive_id != b.hive_id => {
                    return err(format!("{at}: xgmi links join GPUs of the same non-zero hive_id"));
                }
                LinkType::Pcie if !(a.large_bar && b.large_bar) => {
                    return err(format!("{at}: PCIe P2P needs large_bar on both GPUs"));
                }
                LinkType::Pcie if a.hive_id != 0 && a.hive_id == b.hive_id => {
                    return err(format!("{at}: GPUs of one hive are joined by xgmi, not pcie"));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Number of KFD nodes (CPU + GPUs).
    pub fn num_nodes(&self) -> u32 {
        self.gpus.len() as u32 + 1
    }

    /// The GPU of KFD node `node_id` (1..=N).
    pub fn gpu_by_node(&self, node_id: u32) -> Option<&Gpu> {
        self.gpus.get((node_id as usize).checked_sub(1)?)
    }

    /// The GPU with this KFD `gpu_id`.
    pub fn gpu_by_id(&self, gpu_id: u32) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.gpu_id == gpu_id)
    }

    /// The GPU whose render node is /dev/dri/renderD<minor>.
    pub fn gpu_by_minor(&self, minor: u32) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.drm_render_minor == minor)
    }

    /// The direct link between GPU nodes `a` and `b`, if any.
    pub fn link_between(&self, a: u32, b: u32) -> Option<&Link> {
        self.links.iter().find(|l| l.joins(a, b))
    }

    /// True if GPU node `a` can access GPU node `b`'s VRAM directly (a p2p link joins them).
    pub fn peer_accessible(&self, a: u32, b: u32) -> bool {
        a == b || self.link_between(a, b).is_some_and(|l| l.p2p)
    }

    /// (peer node, link) for every GPU linked to GPU node `node`, in peer node order.
    pub fn peers(&self, node: u32) -> Vec<(u32, &Link)> {
        let mut v: Vec<(u32, &Link)> = self.links.iter().filter_map(|l| Some((l.peer_of(node)?, l))).collect();
        v.sort_by_key(|(n, _)| *n);
        v
    }
}

static CURRENT: OnceLock<Topology> = OnceLock::new();

/// The topology of this session, loaded once from `$KFDSIM_SESSION/topology.toml`. If the
/// library runs without the launcher and no session exists yet, the default session is created
/// first (see `session::ensure_env`). If the file cannot be read, falls back to the default
/// preset (with a message on stderr).
pub fn current() -> &'static Topology {
    CURRENT.get_or_init(|| {
        let dir = match std::env::var_os(crate::session::ENV_SESSION) {
            Some(d) => Some(std::path::PathBuf::from(d)),
            None => crate::session::ensure_env(),
        };
        let loaded = match dir {
            Some(d) => Topology::load(&d.join(crate::session::TOPOLOGY_FILE)),
            None => err("no kfd-sim session"),
        };
        loaded.unwrap_or_else(|e| {
            eprintln!("kfdsim: {e}; using preset {DEFAULT_PRESET}");
            Topology::preset(DEFAULT_PRESET).expect("the default preset is valid")
        })
    })
}

/// The GPU with this KFD `gpu_id` in the session topology.
pub fn gpu_by_id(gpu_id: u32) -> Option<&'static Gpu> {
    current().gpu_by_id(gpu_id)
}

/// The GPU of /dev/dri/renderD<minor> in the session topology.
pub fn gpu_by_minor(minor: u32) -> Option<&'static Gpu> {
    current().gpu_by_minor(minor)
}

/// The GPU of KFD node `node_id` in the session topology.
pub fn gpu_by_node(node_id: u32) -> Option<&'static Gpu> {
    current().gpu_by_node(node_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_preset_is_two_gfx90a_joined_by_xgmi() {
        let t = Topology::preset(DEFAULT_PRESET).unwrap();
        assert_eq!(t.gpus.len(), 2);
        assert_eq!(t.num_nodes(), 3);
        for g in &t.gpus {
            assert_eq!(g.gfx_target_version, 90010);
            assert_eq!(g.gfx_name(), "gfx90a");
            assert_eq!(g.simd_count, 416);
            assert!(g.large_bar);
        }
        assert_eq!(t.links, vec![Link { from: 1, to: 2, link_type: LinkType::Xgmi, p2p: true }]);
        assert!(t.peer_accessible(1, 2) && t.peer_accessible(2, 1));
        assert_eq!(t.gpus[0].drm_render_minor, 128);
        assert_eq!(t.gpus[1].drm_render_minor, 129);
        assert_eq!(t.gpus[1].pci_bdf, "0000:23:00.0");
        assert_eq!(t.gpus[1].location_id, 0x2300);
    }

    #[test]
    fn presets_have_the_right_link_counts() {
        for n in 1..=8usize {
            let x = Topology::preset(&format!("xgmi-{n}")).unwrap();
            assert_eq!(x.links.len(), n * (n - 1) / 2);
            assert!(x.links.iter().all(|l| l.link_type == LinkType::Xgmi));
            let p = Topology::preset(&format!("pcie-{n}")).unwrap();
            assert!(p.links.is_empty());
            assert!(p.gpus.iter().all(|g| !g.large_bar && g.hive_id == 0));
            if n >= 2 {
                let q = Topology::preset(&format!("pcie-p2p-{n}")).unwrap();
                assert_eq!(q.links.len(), n * (n - 1) / 2);
                assert!(q.links.iter().all(|l| l.link_type == LinkType::Pcie && l.p2p));
                assert_eq!(q.peers(1).len(), n - 1);
            }
        }
        assert!(Topology::preset("pcie-p2p-1").is_err());
        assert!(Topology::preset("xgmi-9").is_err());
        assert!(Topology::preset("nvlink-2").is_err());
        assert!(Topology::with_gpus(0).is_err());
        assert_eq!(Topology::with_gpus(3).unwrap(), Topology::preset("xgmi-3").unwrap());
    }

    #[test]
    fn gpu_ids_are_nonzero_unique_16_bit_and_looked_up() {
        let t = Topology::preset("xgmi-8").unwrap();
        for (i, g) in t.gpus.iter().enumerate() {
            assert!(g.gpu_id != 0 && g.gpu_id <= 0xffff);
            assert!(t.gpus[..i].iter().all(|h| h.gpu_id != g.gpu_id));
            assert_eq!(t.gpu_by_id(g.gpu_id).unwrap().node_id, g.node_id);
            assert_eq!(t.gpu_by_minor(g.drm_render_minor).unwrap().node_id, g.node_id);
            assert_eq!(t.gpu_by_node(g.node_id).unwrap(), g);
        }
        assert!(t.gpu_by_id(0).is_none());
        assert!(t.gpu_by_minor(127).is_none());
        assert!(t.gpu_by_node(0).is_none());
        assert!(t.gpu_by_node(9).is_none());
    }

    #[test]
    fn kernel_gpu_id_hash_matches_hash_32() {
        // hash_32(1, 16) = 0x61C88647 >> 16.
        assert_eq!(hash_32(1, 16), 0x61C8);
        assert_eq!(hash_32(0, 16), 0);
        let g = Gpu::mi210(0);
        assert_eq!(g.gpu_id, g.kernel_gpu_id_hash());
    }

    #[test]
    fn canonical_toml_round_trips() {
        for name in preset_names() {
            let t = Topology::preset(&name).unwrap();
            let text = t.to_toml();
            assert_eq!(Topology::from_toml(&text).unwrap(), t, "{name}");
        }
    }

    #[test]
    fn user_file_overlays_defaults_and_derives_links() {
        let text = r#"
            [[gpu]]
            hive_id = 7
            [[gpu]]
            hive_id = 7
            vram_size = 34359738368
            [[gpu]]
            pcie_p2p = true
            [[gpu]]
            pcie_p2p = true
            [[gpu]]
            large_bar = false
        "#;
        let t = Topology::from_toml(text).unwrap();
        assert_eq!(t.gpus.len(), 5);
        assert_eq!(t.gpus[1].vram_size, 32 << 30);
        // gpu_id is derived from the final fields (vram_size feeds the kernel hash).
        assert_eq!(t.gpus[1].gpu_id, t.gpus[1].kernel_gpu_id_hash());
        assert_eq!(t.gpus[4].drm_render_minor, 132);
        let kinds: Vec<(u32, u32, LinkType)> = t.links.iter().map(|l| (l.from, l.to, l.link_type)).collect();
        assert_eq!(kinds, vec![(1, 2, LinkType::Xgmi), (3, 4, LinkType::Pcie)]);
        assert!(!t.peer_accessible(1, 3));
        assert!(!t.peer_accessible(5, 1));
    }

    #[test]
    fn user_file_explicit_links_and_errors() {
        let ok = "[[gpu]]\n[[gpu]]\n[[link]]\nfrom = 2\nto = 1\ntype = \"pcie\"\np2p = true\n";
        let t = Topology::from_toml(ok).unwrap();
        assert_eq!(t.links, vec![Link { from: 1, to: 2, link_type: LinkType::Pcie, p2p: true }]);

        let bad = [
            ("", "at least one"),
            ("[[gpu]]\nfoo = 1\n", "unknown key 'foo'"),
            ("[[gpu]]\nnode_id = 3\n", "node_id must be 1"),
            ("[[gpu]]\n[[gpu]]\ndrm_render_minor = 128\n", "drm_render_minor also used"),
            ("[[gpu]]\n[[gpu]]\n[[link]]\nfrom = 1\nto = 2\ntype = \"xgmi\"\np2p = true\n", "same non-zero hive_id"),
            ("[[gpu]]\n[[gpu]]\n[[link]]\nfrom = 1\nto = 3\ntype = \"pcie\"\np2p = true\n", "GPU nodes"),
            ("[[gpu]]\nsimd_count = 5\n", "simd_count"),
            ("[[gpu]]\ngpu_id = 0\n", "gpu_id must be"),
            ("[[gpu]]\npci_bdf = \"3:0.0\"\n", "pci_bdf"),
            ("[[gpu]]\n[network]\n", "unknown top-level key"),
            ("[[gpu]\n", "invalid TOML"),
        ];
        for (text, want) in bad {
            let e = Topology::from_toml(text).unwrap_err().0;
            assert!(e.contains(want), "{text:?}: got '{e}', want '{want}'");
        }
    }

    #[test]
    fn p2p_links_key_round_trips() {
        let t = Topology::from_toml("p2p_links = false\n[[gpu]]\npcie_p2p = true\n[[gpu]]\npcie_p2p = true\n").unwrap();
        assert!(!t.p2p_links);
        assert_eq!(t.links.len(), 1, "the link exists; only its sysfs entry is missing");
        assert_eq!(Topology::from_toml(&t.to_toml()).unwrap(), t);
        assert!(Topology::preset("pcie-p2p-2").unwrap().p2p_links);
        assert!(Topology::from_toml("p2p_links = 1\n[[gpu]]\n").is_err());
    }

    #[test]
    fn from_arg_takes_presets_and_files() {
        assert_eq!(Topology::from_arg("pcie-2").unwrap().gpus.len(), 2);
        assert!(Topology::from_arg("/nonexistent/topo.toml").unwrap_err().0.contains("neither"));
        let dir = std::env::temp_dir().join(format!("kfdsim-topo-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.toml");
        std::fs::write(&f, "[[gpu]]\n[[gpu]]\n[[gpu]]\n").unwrap();
        assert_eq!(Topology::from_arg(f.to_str().unwrap()).unwrap().gpus.len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bdf_parsing() {
        assert_eq!(parse_bdf("0000:03:00.0"), Some((0, 3, 0, 0)));
        assert_eq!(parse_bdf("0001:e3:1f.7"), Some((1, 0xe3, 0x1f, 7)));
        assert_eq!(parse_bdf("0000:03:20.0"), None);
        assert_eq!(parse_bdf("03:00.0"), None);
    }
}
