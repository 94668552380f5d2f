//! The fake file tree of a session (`$KFDSIM_ROOT`): the KFD topology in sysfs, the amdgpu DRM
//! and PCI sysfs, `/sys/module/amdgpu`, `/proc/modules` and the `/dev` placeholders, laid out and
//! formatted as the kernel publishes them and as libhsakmt 5.2 (`topology.c`), ROCr 5.2 and
//! libdrm 2.4.114 (`xf86drm.c`) read them.
//!
//! Sources: kernel `drivers/gpu/drm/amd/amdkfd/kfd_topology.c` (`node_show`, `iolink_show`,
//! `mem_show`, `kfd_cache_show`, `kfd_dev_create_p2p_links`, `kfd_fill_iolink_non_crat_info`),
//! `kfd_crat.c` (`kfd_parse_subtype_iolink`: PCIe weight 20, xGMI 15 per hop;
//! `kfd_fill_gpu_direct_io_link_to_cpu`: CPU->GPU link only for large BAR;
//! `kfd_create_vcrat_image_gpu`: FB_PUBLIC for large BAR, else FB_PRIVATE).
//!
//! Paths in the tree are the real ones below the root; symlinks are relative, exactly as in
//! sysfs, so they resolve inside the root.

use std::fmt::Write as _;
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use crate::topology::{Gpu, LinkType, Topology};

/// Character-device major of /dev/kfd (dynamic on real systems; 234 here).
pub const KFD_MAJOR: u32 = 234;
/// Character-device major of DRM nodes.
pub const DRM_MAJOR: u32 = 226;
/// `/dev/udmabuf`: a misc device (major 10) with a dynamic minor; 125 here.
pub const MISC_MAJOR: u32 = 10;
pub const UDMABUF_MINOR: u32 = 125;

/// Path prefixes always redirected into the root. A prefix ending in '/' or ':' matches any path
/// starting with it; otherwise the path must equal the prefix or continue with '/'.
pub const REDIRECT_PREFIXES: &[&str] = &[
    "/dev/kfd",
    "/dev/udmabuf",
    "/dev/dri",
    "/sys/devices/virtual/kfd",
    "/sys/class/kfd",
    "/sys/class/drm",
    "/sys/module/amdgpu",
    "/sys/bus/pci/drivers/amdgpu",
    "/sys/dev/char/226:",
    "/sys/dev/char/234:",
    "/proc/modules",
];

/// Path prefixes redirected only if the path exists in the root (the simulated PCI devices live
/// among the host's real ones).
pub const OVERLAY_PREFIXES: &[&str] = &["/sys/devices/pci", "/sys/bus/pci/devices"];

/// KFD topology directory (libhsakmt `KFD_SYSFS_PATH_NODES` is `<this>/nodes`).
pub const KFD_TOPOLOGY_DIR: &str = "/sys/devices/virtual/kfd/kfd/topology";

/// io_link `flags` bits (kfd_crat.h CRAT_IOLINK_FLAGS_*).
pub mod iolink_flags {
    pub const ENABLED: u32 = 1 << 0;
    pub const NON_COHERENT: u32 = 1 << 1;
    pub const NO_ATOMICS_32_BIT: u32 = 1 << 2;
    pub const NO_ATOMICS_64_BIT: u32 = 1 << 3;
    pub const NO_PEER_TO_PEER_DMA: u32 = 1 << 4;
}

/// io_link `type` of a PCIe link (HSA_IOLINKTYPE_PCIEXPRESS).
pub const IOLINK_TYPE_PCIEXPRESS: u32 = 2;
/// io_link `type` of an xGMI link (HSA_IOLINK_TYPE_XGMI).
pub const IOLINK_TYPE_XGMI: u32 = 11;
/// mem bank `heap_type` values (HSA_MEM_HEAP_TYPE_*).
pub const HEAP_TYPE_SYSTEM: u32 = 0;
pub const HEAP_TYPE_FB_PUBLIC: u32 = 1;
pub const HEAP_TYPE_FB_PRIVATE: u32 = 2;

/// PCIe gen4 x16 bandwidth in MB/s (amdgpu_amdkfd_get_pcie_bandwidth_mbytes: min = gen1 x1).
const PCIE_MIN_BW: u32 = 312;
const PCIE_MAX_BW: u32 = 32000;
/// xGMI bandwidth in MB/s (25 Gb/s x16 per link, 2 links).
const XGMI_MIN_BW: u32 = 50000;
const XGMI_MAX_BW: u32 = 100000;

/// One io_link or p2p_link as `iolink_show` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoLink {
    pub link_type: u32,
    pub node_from: u32,
    pub node_to: u32,
    pub weight: u32,
    pub min_latency: u32,
    pub max_latency: u32,
    pub min_bandwidth: u32,
    pub max_bandwidth: u32,
    pub recommended_transfer_size: u32,
    pub recommended_sdma_engine_id_mask: u32,
    pub flags: u32,
}

impl IoLink {
    /// The `properties` file text.
    pub fn properties(&self) -> String {
        let mut s = String::new();
        let mut p = |k: &str, v: u64| writeln!(s, "{k} {v}").unwrap();
        p("type", self.link_type.into());
        p("version_major", 0);
        p("version_minor", 0);
        p("node_from", self.node_from.into());
        p("node_to", self.node_to.into());
        p("weight", self.weight.into());
        p("min_latency", self.min_latency.into());
        p("max_latency", self.max_latency.into());
        p("min_bandwidth", self.min_bandwidth.into());
        p("max_bandwidth", self.max_bandwidth.into());
        p("recommended_transfer_size", self.recommended_transfer_size.into());
        p("recommended_sdma_engine_id_mask", self.recommended_sdma_engine_id_mask.into());
        p("flags", self.flags.into());
        s
    }
}

fn pcie_link(from: u32, to: u32, flags: u32, sdma_mask: u32) -> IoLink {
    IoLink {
        link_type: IOLINK_TYPE_PCIEXPRESS,
        node_from: from,
        node_to: to,
        weight: 20,
        min_latency: 0,
        max_latency: 0,
        min_bandwidth: PCIE_MIN_BW,
        max_bandwidth: PCIE_MAX_BW,
        recommended_transfer_size: 0,
        recommended_sdma_engine_id_mask: sdma_mask,
        flags,
    }
}

/// Mask of the PCIe SDMA engines of a GPU (engines 0..num_sdma_engines).
fn pcie_sdma_mask(g: &Gpu) -> u32 {
    (1u32 << g.num_sdma_engines.min(31)) - 1
}

/// A node's `io_links`, in the kernel's order. CPU node: a PCIe link to each large-BAR GPU
/// (flags ENABLED|NON_COHERENT). GPU node: first its PCIe link to the CPU (ENABLED), then an xGMI
/// link (weight 15, one hop) to each GPU of its hive, in node order.
pub fn io_links(topo: &Topology, node: u32) -> Vec<IoLink> {
    use iolink_flags::*;
    if node == 0 {
        return topo
            .gpus
            .iter()
            .filter(|g| g.large_bar)
            .map(|g| pcie_link(0, g.node_id, ENABLED | NON_COHERENT, 0))
            .collect();
    }
    let Some(g) = topo.gpu_by_node(node) else { return Vec::new() };
    let mut v = vec![pcie_link(node, 0, ENABLED, pcie_sdma_mask(g))];
    let xgmi_engines = g.num_sdma_xgmi_engines.max(1);
    for (i, (peer, _)) in topo.peers(node).into_iter().filter(|(_, l)| l.link_type == LinkType::Xgmi).enumerate() {
        let engine = if g.num_sdma_xgmi_engines == 0 {
            i as u32 % g.num_sdma_engines.max(1)
        } else {
            g.num_sdma_engines + i as u32 % xgmi_engines
        };
        v.push(IoLink {
            link_type: IOLINK_TYPE_XGMI,
            node_from: node,
            node_to: peer,
            weight: 15,
            min_latency: 0,
            max_latency: 0,
            min_bandwidth: XGMI_MIN_BW,
            max_bandwidth: XGMI_MAX_BW,
            recommended_transfer_size: 0,
            recommended_sdma_engine_id_mask: 1 << engine.min(31),
            flags: ENABLED,
        });
    }
    v
}

/// A node's `p2p_links`: for each PCIe P2P peer, the kernel's `kfd_add_peer_prop` link (type
/// PCIe, weight = sum of both GPU->CPU weights = 40, flags ENABLED|NON_COHERENT). xGMI peers are
/// not repeated here (same-hive pairs are skipped by `kfd_dev_create_p2p_links`).
pub fn p2p_links(topo: &Topology, node: u32) -> Vec<IoLink> {
    use iolink_flags::*;
    if !topo.p2p_links {
        return Vec::new();
    }
    let Some(g) = topo.gpu_by_node(node) else { return Vec::new() };
    topo.peers(node)
        .into_iter()
        .filter(|(_, l)| l.link_type == LinkType::Pcie && l.p2p)
        .map(|(peer, _)| IoLink { weight: 40, ..pcie_link(node, peer, ENABLED | NON_COHERENT, pcie_sdma_mask(g)) })
        .collect()
}

/// One GPU cache (`kfd_cache_show`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    pub processor_id_low: u32,
    pub level: u32,
    /// KiB.
    pub size: u32,
    pub cache_line_size: u32,
    pub cache_lines_per_tag: u32,
    pub association: u32,
    pub latency: u32,
    /// HSA_CACHE_TYPE_*: DATA 1, INSTRUCTION 2, CPU 4, HSACU 8.
    pub cache_type: u32,
    /// CUs sharing the cache, as a bitmap from `processor_id_low` (32 bits printed).
    pub sibling_map: u32,
}

impl Cache {
    /// The `properties` file text.
    pub fn properties(&self) -> String {
        let mut s = String::new();
        for (k, v) in [
            ("processor_id_low", self.processor_id_low),
            ("level", self.level),
            ("size", self.size),
            ("cache_line_size", self.cache_line_size),
            ("cache_lines_per_tag", self.cache_lines_per_tag),
            ("association", self.association),
            ("latency", self.latency),
            ("type", self.cache_type),
        ] {
            writeln!(s, "{k} {v}").unwrap();
        }
        s.push_str("sibling_map ");
        let bits: Vec<String> = (0..32).map(|j| ((self.sibling_map >> j) & 1).to_string()).collect();
        s.push_str(&bits.join(","));
        s.push('\n');
        s
    }
}

/// The caches published for a GPU node: one entry per cache kind (L1 vector per CU, L1
/// instruction and L1 scalar shared by 2 CUs, L2 shared by all) rather than one per CU group.
pub fn gpu_caches(g: &Gpu) -> Vec<Cache> {
    const DATA: u32 = 1;
    const INST: u32 = 2;
    const HSACU: u32 = 8;
    let all = if g.cu_count() >= 32 { u32::MAX } else { (1 << g.cu_count()) - 1 };
    let c = |level, size, line, ty, sib| Cache {
        processor_id_low: g.simd_id_base,
        level,
        size,
        cache_line_size: line,
        cache_lines_per_tag: 1,
        association: 0,
        latency: 0,
        cache_type: ty,
        sibling_map: sib,
    };
    vec![
        c(1, g.l1_cache_kb, 64, DATA | HSACU, 0b1),
        c(1, g.l1_inst_cache_kb, 64, INST | HSACU, 0b11),
        c(1, g.l1_scalar_cache_kb, 64, DATA | HSACU, 0b11),
        c(2, g.l2_cache_kb, 128, DATA | HSACU, all),
    ]
}

/// The node `properties` file text, keys and order of the kernel's `node_show` (6.x).
pub fn node_properties(topo: &Topology, node: u32) -> String {
    let mut s = String::new();
    let mut p = |k: &str, v: u64| writeln!(s, "{k} {v}").unwrap();
    let io = io_links(topo, node).len() as u64;
    let p2p = p2p_links(topo, node).len() as u64;
    match topo.gpu_by_node(node) {
        None => {
            let c = &topo.cpu;
            p("cpu_cores_count", c.cores.into());
            p("simd_count", 0);
            p("mem_banks_count", 1);
            p("caches_count", 0);
            p("io_links_count", io);
            if topo.p2p_links {
                p("p2p_links_count", p2p);
            }
            p("cpu_core_id_base", c.core_id_base.into());
            for k in [
                "simd_id_base",
                "max_waves_per_simd",
                "lds_size_in_kb",
                "gds_size_in_kb",
                "num_gws",
                "wave_front_size",
                "array_count",
                "simd_arrays_per_engine",
                "cu_per_simd_array",
                "simd_per_cu",
                "max_slots_scratch_cu",
                "gfx_target_version",
                "vendor_id",
                "device_id",
                "location_id",
                "domain",
                "drm_render_minor",
                "hive_id",
                "num_sdma_engines",
                "num_sdma_xgmi_engines",
                "num_sdma_queues_per_engine",
                "num_cp_queues",
            ] {
                p(k, 0);
            }
            p("max_engine_clk_ccompute", c.max_engine_clk_ccompute.into());
        }
        Some(g) => {
            p("cpu_cores_count", 0);
            p("simd_count", g.simd_count.into());
            p("mem_banks_count", 1);
            p("caches_count", gpu_caches(g).len() as u64);
            p("io_links_count", io);
            if topo.p2p_links {
                p("p2p_links_count", p2p);
            }
            p("cpu_core_id_base", 0);
            p("simd_id_base", g.simd_id_base.into());
            p("max_waves_per_simd", g.max_waves_per_simd.into());
            p("lds_size_in_kb", g.lds_size_in_kb.into());
            p("gds_size_in_kb", g.gds_size_in_kb.into());
            p("num_gws", g.num_gws.into());
            p("wave_front_size", g.wave_front_size.into());
            p("array_count", g.array_count.into());
            p("simd_arrays_per_engine", g.simd_arrays_per_engine.into());
            p("cu_per_simd_array", g.cu_per_simd_array.into());
            p("simd_per_cu", g.simd_per_cu.into());
            p("max_slots_scratch_cu", g.max_slots_scratch_cu.into());
            p("gfx_target_version", g.gfx_target_version.into());
            p("vendor_id", g.vendor_id.into());
            p("device_id", g.device_id.into());
            p("location_id", g.location_id.into());
            p("domain", g.domain.into());
            p("drm_render_minor", g.drm_render_minor.into());
            p("hive_id", g.hive_id);
            p("num_sdma_engines", g.num_sdma_engines.into());
            p("num_sdma_xgmi_engines", g.num_sdma_xgmi_engines.into());
            p("num_sdma_queues_per_engine", g.num_sdma_queues_per_engine.into());
            p("num_cp_queues", g.num_cp_queues.into());
            if let Some(q) = g.queue_sizes() {
                p("cwsr_size", q.cwsr_size.into());
                p("ctl_stack_size", q.ctl_stack_size.into());
            }
            p("max_engine_clk_fcompute", g.max_engine_clk_fcompute.into());
            p("local_mem_size", 0);
            p("fw_version", g.fw_version.into());
            p("capability", g.capability.into());
            p("debug_prop", g.debug_prop);
            p("sdma_fw_version", g.sdma_fw_version.into());
            p("unique_id", g.unique_id);
            p("num_xcc", g.num_xcc.into());
            p("max_engine_clk_ccompute", topo.cpu.max_engine_clk_ccompute.into());
        }
    }
    s
}

/// The node's `mem_banks/0/properties` (`mem_show`).
pub fn mem_bank_properties(topo: &Topology, node: u32) -> String {
    let (heap_type, size, width, clk) = match topo.gpu_by_node(node) {
        None => (HEAP_TYPE_SYSTEM, topo.cpu.mem_size, 0, 0),
        Some(g) => (
            if g.large_bar { HEAP_TYPE_FB_PUBLIC } else { HEAP_TYPE_FB_PRIVATE },
            g.vram_size,
            g.vram_width,
            g.mem_clk_max,
        ),
    };
    format!("heap_type {heap_type}\nsize_in_bytes {size}\nflags 0\nwidth {width}\nmem_clk_max {clk}\n")
}

/// `/sys/devices/virtual/kfd/kfd/topology/system_properties`: the OEM ids of the kernel's
/// virtual CRAT ("AMD   ", "AMD CRAT").
pub fn system_properties() -> String {
    let platform_id = u64::from_le_bytes(*b"AMD   \0\0") & 0xffff_ffff_ffff;
    let platform_oem = u64::from_le_bytes(*b"AMD CRAT");
    format!("platform_oem {platform_oem}\nplatform_id {platform_id}\nplatform_rev 1\n")
}

/// The amdgpu line of `/proc/modules`.
pub const AMDGPU_MODULE_LINE: &str = "amdgpu 15622144 0 - Live 0x0000000000000000";

/// `/proc/modules`: the amdgpu line, then the host's modules (if any) without an amdgpu line.
pub fn proc_modules(host: &str) -> String {
    let mut s = format!("{AMDGPU_MODULE_LINE}\n");
    for l in host.lines().filter(|l| !l.starts_with("amdgpu ")) {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// The PCI host-bridge directory of a GPU ("pci0000:00").
pub fn pci_host_dir(g: &Gpu) -> String {
    format!("pci{:04x}:00", g.domain)
}

/// The GPU's PCI device path in sysfs, e.g. "/sys/devices/pci0000:00/0000:03:00.0".
pub fn pci_device_path(g: &Gpu) -> String {
    format!("/sys/devices/{}/{}", pci_host_dir(g), g.pci_bdf)
}

/// The first 64 bytes of the PCI config space (type 0 header) of a GPU.
pub fn pci_config(g: &Gpu) -> Vec<u8> {
    let mut c = vec![0u8; 256];
    c[0..2].copy_from_slice(&(g.vendor_id as u16).to_le_bytes());
    c[2..4].copy_from_slice(&(g.device_id as u16).to_le_bytes());
    c[4..6].copy_from_slice(&0x0406u16.to_le_bytes()); // command: memory space, bus master
    c[6..8].copy_from_slice(&0x0010u16.to_le_bytes()); // status: capabilities list
    c[8] = g.revision_id as u8;
    c[9] = 0x00; // prog-if
    c[10] = 0x80; // subclass: other display controller
    c[11] = 0x03; // class: display controller
    c[0x2c..0x2e].copy_from_slice(&(g.subsystem_vendor_id as u16).to_le_bytes());
    c[0x2e..0x30].copy_from_slice(&(g.subsystem_device_id as u16).to_le_bytes());
    c
}

/// `/sys/module/amdgpu/parameters/*`.
fn amdgpu_parameters(topo: &Topology) -> Vec<(&'static str, String)> {
    let p2p = topo.gpus.iter().any(|g| g.pcie_p2p);
    vec![
        ("pcie_p2p", if p2p { "Y" } else { "N" }.into()),
        ("sched_policy", "0".into()),
        ("hws_max_conc_proc", "8".into()),
        ("cwsr_enable", "1".into()),
        ("max_num_of_queues_per_device", "4096".into()),
        ("noretry", "-1".into()),
        ("debug_largebar", "0".into()),
        ("ignore_crat", "0".into()),
        ("halt_if_hws_hang", "0".into()),
        ("queue_preemption_timeout_ms", "9000".into()),
        ("send_sigterm", "0".into()),
        ("vm_size", "-1".into()),
        ("vramlimit", "0".into()),
        ("gttsize", "-1".into()),
    ]
}

struct Tree<'a> {
    root: &'a Path,
}

impl Tree<'_> {
    fn path(&self, p: &str) -> std::path::PathBuf {
        self.root.join(p.trim_start_matches('/'))
    }

    fn dir(&self, p: &str) -> io::Result<()> {
        std::fs::create_dir_all(self.path(p))
    }

    fn file(&self, p: &str, content: impl AsRef<[u8]>) -> io::Result<()> {
        let path = self.path(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)
    }

    fn link(&self, p: &str, target: &str) -> io::Result<()> {
        let path = self.path(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        symlink(target, path)
    }

    /// An empty placeholder for a device node, mode 0666 (stat/open are faked on top of it).
    fn device(&self, p: &str) -> io::Result<()> {
        self.file(p, b"")?;
        std::fs::set_permissions(self.path(p), std::fs::Permissions::from_mode(0o666))
    }
}

/// Board power limit of the model (`power1_cap`, `power1_cap_max`), µW: an MI210's 300 W.
pub const POWER_CAP_UW: u64 = 300_000_000;
/// Idle board power the model reports (`power1_average`), µW.
pub const POWER_IDLE_UW: u64 = 42_000_000;
/// Temperatures the model reports (`temp1..3`: label, `_input`, `_crit`), millidegrees Celsius.
pub const TEMPS_MC: [(&str, i32, i32); 3] =
    [("edge", 35_000, 100_000), ("junction", 38_000, 110_000), ("mem", 36_000, 95_000)];
/// Lowest engine clock level (`pp_dpm_sclk` level 0), MHz.
pub const SCLK_MIN_MHZ: u32 = 500;

/// The power-management attributes amdgpu publishes for a GPU (`amdgpu_pm.c`): the DPM clock
/// levels (`pp_dpm_sclk`, `pp_dpm_mclk`: "N: <MHz>Mhz" with " *" on the current level), the
/// performance level, the busy percentages, and the hwmon device `hwmon/hwmon<index>` with the
/// edge/junction/mem temperatures, average power and power cap, the sclk/mclk frequencies and the
/// vddgfx voltage (`amdgpu_hwmon_attributes`). No fan: an MI210 is passively cooled, and the
/// kernel hides the fan attributes when `pm.no_fan`, which `smu_sw_init` sets for an SMU without
/// `get_fan_control_mode`, as aldebaran's has none. The values are the model's idle GPU, fixed, at
/// the lowest clock level; only `mem_info_vram_used` is live (see [`DYNAMIC_ATTRIBUTES`]).
fn pm_attributes(t: &Tree, g: &Gpu, dev: &str, index: usize) -> io::Result<()> {
    let levels = |clocks: &[u32]| {
        let mut s = String::new();
        for (i, mhz) in clocks.iter().enumerate() {
            let _ = writeln!(s, "{i}: {mhz}Mhz {}", if i == 0 { "*" } else { "" });
        }
        s
    };
    let sclk_max = g.max_engine_clk_fcompute.max(SCLK_MIN_MHZ);
    let mclk_max = g.mem_clk_max;
    t.file(&format!("{dev}/pp_dpm_sclk"), levels(&[SCLK_MIN_MHZ, sclk_max]))?;
    t.file(&format!("{dev}/pp_dpm_mclk"), levels(&[mclk_max / 4, mclk_max / 2, mclk_max * 3 / 4, mclk_max]))?;
    t.file(&format!("{dev}/power_dpm_force_performance_level"), "auto\n")?;
    t.file(&format!("{dev}/gpu_busy_percent"), "0\n")?;
    t.file(&format!("{dev}/mem_busy_percent"), "0\n")?;
    t.file(&format!("{dev}/mem_info_vram_used"), "0\n")?;
    t.file(&format!("{dev}/mem_info_vis_vram_used"), "0\n")?;
    t.file(&format!("{dev}/mem_info_gtt_used"), "0\n")?;
    let hw = format!("{dev}/hwmon/hwmon{index}");
    t.file(&format!("{hw}/name"), "amdgpu\n")?;
    t.link(&format!("{hw}/device"), "../..")?;
    for (i, (label, mc, crit)) in TEMPS_MC.iter().enumerate() {
        let n = i + 1;
        t.file(&format!("{hw}/temp{n}_input"), format!("{mc}\n"))?;
        t.file(&format!("{hw}/temp{n}_label"), format!("{label}\n"))?;
        t.file(&format!("{hw}/temp{n}_crit"), format!("{crit}\n"))?;
    }
    t.file(&format!("{hw}/power1_average"), format!("{POWER_IDLE_UW}\n"))?;
    t.file(&format!("{hw}/power1_cap"), format!("{POWER_CAP_UW}\n"))?;
    t.file(&format!("{hw}/power1_cap_max"), format!("{POWER_CAP_UW}\n"))?;
    t.file(&format!("{hw}/power1_cap_min"), "0\n")?;
    t.file(&format!("{hw}/power1_cap_default"), format!("{POWER_CAP_UW}\n"))?;
    t.file(&format!("{hw}/freq1_input"), format!("{}\n", u64::from(SCLK_MIN_MHZ) * 1_000_000))?;
    t.file(&format!("{hw}/freq1_label"), "sclk\n")?;
    t.file(&format!("{hw}/freq2_input"), format!("{}\n", u64::from(mclk_max / 4) * 1_000_000))?;
    t.file(&format!("{hw}/freq2_label"), "mclk\n")?;
    t.file(&format!("{hw}/in0_input"), "800\n")?;
    t.file(&format!("{hw}/in0_label"), "vddgfx\n")
}

/// Attributes of a GPU's PCI device directory whose content the interposer makes at each open
/// from the live model (the tree holds a placeholder): `mem_info_vram_used`, the VRAM that the
/// session's processes hold on that GPU (the VRAM ledger, [`crate::model::vram::used`]).
pub const DYNAMIC_ATTRIBUTES: &[&str] = &["mem_info_vram_used"];

/// Writes the whole tree for `topo` below `root` (which must not exist yet or be empty).
pub fn write_tree(root: &Path, topo: &Topology) -> io::Result<()> {
    let t = Tree { root };
    t.dir("")?;

    // /dev
    t.device("/dev/kfd")?;
    t.device("/dev/udmabuf")?;
    for g in &topo.gpus {
        t.device(&format!("/dev/dri/renderD{}", g.drm_render_minor))?;
        t.device(&format!("/dev/dri/card{}", g.drm_card_minor))?;
        t.link(&format!("/dev/dri/by-path/pci-{}-render", g.pci_bdf), &format!("../renderD{}", g.drm_render_minor))?;
        t.link(&format!("/dev/dri/by-path/pci-{}-card", g.pci_bdf), &format!("../card{}", g.drm_card_minor))?;
    }

    // /sys/devices/virtual/kfd/kfd and its topology
    let kfd = "/sys/devices/virtual/kfd/kfd";
    t.file(&format!("{kfd}/dev"), format!("{KFD_MAJOR}:0\n"))?;
    t.file(&format!("{kfd}/uevent"), format!("MAJOR={KFD_MAJOR}\nMINOR=0\nDEVNAME=kfd\n"))?;
    t.link(&format!("{kfd}/subsystem"), "../../../../class/kfd")?;
    t.link("/sys/class/kfd/kfd", "../../devices/virtual/kfd/kfd")?;
    t.link(&format!("/sys/dev/char/{KFD_MAJOR}:0"), "../../devices/virtual/kfd/kfd")?;
    let topo_dir = KFD_TOPOLOGY_DIR;
    t.file(&format!("{topo_dir}/generation_id"), format!("{}\n", topo.gpus.len() + 1))?;
    t.file(&format!("{topo_dir}/system_properties"), system_properties())?;
    for node in 0..topo.num_nodes() {
        let nd = format!("{topo_dir}/nodes/{node}");
        let gpu = topo.gpu_by_node(node);
        t.file(&format!("{nd}/gpu_id"), format!("{}\n", gpu.map_or(0, |g| g.gpu_id)))?;
        t.file(&format!("{nd}/name"), format!("{}\n", gpu.map_or("", |g| g.name.as_str())))?;
        t.file(&format!("{nd}/properties"), node_properties(topo, node))?;
        t.file(&format!("{nd}/mem_banks/0/properties"), mem_bank_properties(topo, node))?;
        t.dir(&format!("{nd}/caches"))?;
        if let Some(g) = gpu {
            for (i, c) in gpu_caches(g).iter().enumerate() {
                t.file(&format!("{nd}/caches/{i}/properties"), c.properties())?;
            }
        }
        t.dir(&format!("{nd}/io_links"))?;
        for (i, l) in io_links(topo, node).iter().enumerate() {
            t.file(&format!("{nd}/io_links/{i}/properties"), l.properties())?;
        }
        if topo.p2p_links {
            t.dir(&format!("{nd}/p2p_links"))?;
        }
        for (i, l) in p2p_links(topo, node).iter().enumerate() {
            t.file(&format!("{nd}/p2p_links/{i}/properties"), l.properties())?;
        }
        t.dir(&format!("{nd}/perf"))?;
    }

    // PCI devices, DRM minors, /sys/class/drm, /sys/dev/char
    t.dir("/sys/bus/pci/drivers/amdgpu")?;
    t.link("/sys/bus/pci/drivers/amdgpu/module", "../../../../module/amdgpu")?;
    t.file("/sys/class/drm/version", "drm 1.1.0 20060810\n")?;
    for (index, g) in topo.gpus.iter().enumerate() {
        let host = pci_host_dir(g);
        let bdf = &g.pci_bdf;
        let dev = pci_device_path(g);
        let hex4 = |v: u32| format!("0x{v:04x}\n");
        t.file(&format!("{dev}/vendor"), hex4(g.vendor_id))?;
        t.file(&format!("{dev}/device"), hex4(g.device_id))?;
        t.file(&format!("{dev}/subsystem_vendor"), hex4(g.subsystem_vendor_id))?;
        t.file(&format!("{dev}/subsystem_device"), hex4(g.subsystem_device_id))?;
        t.file(&format!("{dev}/revision"), format!("0x{:02x}\n", g.revision_id))?;
        t.file(&format!("{dev}/class"), "0x038000\n")?;
        t.file(&format!("{dev}/config"), pci_config(g))?;
        t.file(&format!("{dev}/enable"), "1\n")?;
        t.file(&format!("{dev}/numa_node"), "-1\n")?;
        t.file(
            &format!("{dev}/uevent"),
            format!(
                "DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_ID={:04X}:{:04X}\nPCI_SUBSYS_ID={:04X}:{:04X}\n\
                 PCI_SLOT_NAME={bdf}\nMODALIAS=pci:v{:08X}d{:08X}sv{:08X}sd{:08X}bc03sc80i00\n",
                g.vendor_id,
                g.device_id,
                g.subsystem_vendor_id,
                g.subsystem_device_id,
                g.vendor_id,
                g.device_id,
                g.subsystem_vendor_id,
                g.subsystem_device_id,
            ),
        )?;
        t.file(&format!("{dev}/mem_info_vram_total"), format!("{}\n", g.vram_size))?;
        let vis = if g.large_bar { g.vram_size } else { 256 << 20 };
        t.file(&format!("{dev}/mem_info_vis_vram_total"), format!("{vis}\n"))?;
        t.file(&format!("{dev}/mem_info_gtt_total"), format!("{}\n", g.gtt_size))?;
        t.file(&format!("{dev}/unique_id"), format!("{:016x}\n", g.unique_id))?;
        t.file(&format!("{dev}/vbios_version"), format!("{}\n", g.vbios_version))?;
        pm_attributes(&t, g, &dev, index)?;
        t.link(&format!("{dev}/subsystem"), "../../../bus/pci")?;
        t.link(&format!("{dev}/driver"), "../../../bus/pci/drivers/amdgpu")?;
        t.link(&format!("/sys/bus/pci/drivers/amdgpu/{bdf}"), &format!("../../../../devices/{host}/{bdf}"))?;
        t.link(&format!("/sys/bus/pci/devices/{bdf}"), &format!("../../../devices/{host}/{bdf}"))?;
        for (name, minor) in [
            (format!("card{}", g.drm_card_minor), g.drm_card_minor),
            (format!("renderD{}", g.drm_render_minor), g.drm_render_minor),
        ] {
            let m = format!("{dev}/drm/{name}");
            t.file(&format!("{m}/dev"), format!("{DRM_MAJOR}:{minor}\n"))?;
            t.file(
                &format!("{m}/uevent"),
                format!("MAJOR={DRM_MAJOR}\nMINOR={minor}\nDEVNAME=dri/{name}\nDEVTYPE=drm_minor\n"),
            )?;
            t.link(&format!("{m}/device"), &format!("../../../{bdf}"))?;
            t.link(&format!("{m}/subsystem"), "../../../../../class/drm")?;
            let target = format!("../../devices/{host}/{bdf}/drm/{name}");
            t.link(&format!("/sys/class/drm/{name}"), &target)?;
            t.link(&format!("/sys/dev/char/{DRM_MAJOR}:{minor}"), &target)?;
        }
    }
    t.dir("/sys/bus/pci/devices")?;
    // The directory is redirected as a whole (lspci and other programs list it): the host's own
    // PCI devices stay listed beside the simulated ones, each a link to its real directory.
    if let Ok(rd) = std::fs::read_dir("/sys/bus/pci/devices") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if topo.gpus.iter().any(|g| g.pci_bdf == name) {
                continue;
            }
            if let Ok(real) = std::fs::canonicalize(e.path()) {
                let _ = t.link(&format!("/sys/bus/pci/devices/{name}"), &real.to_string_lossy());
            }
        }
    }

    // /sys/module/amdgpu
    let m = "/sys/module/amdgpu";
    t.file(&format!("{m}/initstate"), "live\n")?;
    t.file(&format!("{m}/refcnt"), "0\n")?;
    t.file(&format!("{m}/coresize"), "15622144\n")?;
    t.file(&format!("{m}/initsize"), "0\n")?;
    t.file(&format!("{m}/taint"), "\n")?;
    t.file(&format!("{m}/version"), "6.12.12\n")?;
    t.dir(&format!("{m}/holders"))?;
    t.link(&format!("{m}/drivers/pci:amdgpu"), "../../../bus/pci/drivers/amdgpu")?;
    for (k, v) in amdgpu_parameters(topo) {
        t.file(&format!("{m}/parameters/{k}"), format!("{v}\n"))?;
    }

    // /proc/modules (the host's, if readable, plus amdgpu)
    let host = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    t.file("/proc/modules", proc_modules(&host))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Topology;

    fn props(text: &str) -> Vec<(String, u64)> {
        text.lines()
            .filter(|l| !l.starts_with("sibling_map"))
            .map(|l| {
                let (k, v) = l.split_once(' ').unwrap();
                (k.to_string(), v.parse().unwrap())
            })
            .collect()
    }

    fn get(text: &str, key: &str) -> u64 {
        props(text).into_iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no {key}")).1
    }

    #[test]
    fn gpu_node_properties_have_libhsakmt_keys() {
        let t = Topology::preset("xgmi-2").unwrap();
        let p = node_properties(&t, 1);
        for key in [
            "cpu_cores_count",
            "simd_count",
            "mem_banks_count",
            "caches_count",
            "io_links_count",
            "p2p_links_count",
            "cpu_core_id_base",
            "simd_id_base",
            "max_waves_per_simd",
            "lds_size_in_kb",
            "gds_size_in_kb",
            "num_gws",
            "wave_front_size",
            "array_count",
            "simd_arrays_per_engine",
            "cu_per_simd_array",
            "simd_per_cu",
            "max_slots_scratch_cu",
            "vendor_id",
            "device_id",
            "location_id",
            "domain",
            "drm_render_minor",
            "hive_id",
            "num_sdma_engines",
            "num_sdma_xgmi_engines",
            "num_sdma_queues_per_engine",
            "num_cp_queues",
            "max_engine_clk_fcompute",
            "local_mem_size",
            "capability",
            "debug_prop",
            "sdma_fw_version",
            "unique_id",
            "gfx_target_version",
            "max_engine_clk_ccompute",
            "fw_version",
        ] {
            get(&p, key);
        }
        assert_eq!(get(&p, "gfx_target_version"), 90010);
        assert_eq!(get(&p, "vendor_id"), 0x1002);
        assert_eq!(get(&p, "device_id"), 0x740f);
        assert_eq!(get(&p, "drm_render_minor"), 128);
        assert_eq!(get(&p, "io_links_count"), 2);
        assert_eq!(get(&p, "p2p_links_count"), 0);
        assert_eq!(get(&p, "hive_id"), crate::topology::PRESET_HIVE_ID);
        assert_eq!(get(&p, "cpu_cores_count"), 0);
        // libhsakmt reads the file with one fread of PAGE_SIZE.
        assert!(p.len() < 4096);
        let cpu = node_properties(&t, 0);
        assert!(get(&cpu, "cpu_cores_count") > 0);
        assert_eq!(get(&cpu, "simd_count"), 0);
        assert_eq!(get(&cpu, "drm_render_minor"), 0);
        assert_eq!(get(&cpu, "io_links_count"), 2);
    }

    #[test]
    fn kernels_without_p2p_links_publish_no_count_and_no_links() {
        let mut t = Topology::preset("pcie-p2p-3").unwrap();
        assert_eq!(p2p_links(&t, 1).len(), 2);
        t.p2p_links = false;
        assert!(p2p_links(&t, 1).is_empty());
        let props = node_properties(&t, 1);
        assert!(!props.contains("p2p_links_count"), "{props}");
        assert!(props.contains("io_links_count"));
        assert!(!node_properties(&t, 0).contains("p2p_links_count"));
    }

    #[test]
    fn io_links_follow_the_kernel() {
        let t = Topology::preset("xgmi-4").unwrap();
        let l = io_links(&t, 2);
        assert_eq!(l.len(), 4);
        assert_eq!((l[0].link_type, l[0].node_to, l[0].weight, l[0].flags), (2, 0, 20, 1));
        let peers: Vec<u32> = l[1..].iter().map(|x| x.node_to).collect();
        assert_eq!(peers, vec![1, 3, 4]);
        assert!(l[1..].iter().all(|x| x.link_type == 11 && x.weight == 15 && x.node_from == 2));
        let cpu = io_links(&t, 0);
        assert_eq!(cpu.len(), 4);
        assert!(cpu.iter().all(|x| x.flags == 3 && x.node_from == 0));
        assert!(p2p_links(&t, 1).is_empty());

        // Small BAR: no CPU->GPU link, FB_PRIVATE heap.
        let s = Topology::preset("pcie-3").unwrap();
        assert!(io_links(&s, 0).is_empty());
        assert_eq!(io_links(&s, 1).len(), 1);
        assert_eq!(get(&mem_bank_properties(&s, 1), "heap_type"), 2);
        assert_eq!(get(&mem_bank_properties(&t, 1), "heap_type"), 1);
        assert_eq!(get(&mem_bank_properties(&t, 1), "size_in_bytes"), 64 << 30);

        let p = Topology::preset("pcie-p2p-3").unwrap();
        let pl = p2p_links(&p, 3);
        assert_eq!(pl.iter().map(|x| x.node_to).collect::<Vec<_>>(), vec![1, 2]);
        assert!(pl.iter().all(|x| x.link_type == 2 && x.weight == 40 && x.flags == 3));
        assert_eq!(get(&node_properties(&p, 3), "p2p_links_count"), 2);
        assert_eq!(get(&node_properties(&p, 3), "io_links_count"), 1);
    }

    #[test]
    fn cache_properties_format() {
        let g = crate::topology::Gpu::mi210(0);
        let c = &gpu_caches(&g)[3];
        let text = c.properties();
        assert_eq!(get(&text, "level"), 2);
        assert_eq!(get(&text, "size"), 8192);
        let sib = text.lines().last().unwrap();
        assert!(sib.starts_with("sibling_map 1,1,"));
        assert_eq!(sib.split(',').count(), 32);
    }

    #[test]
    fn write_tree_creates_the_layout() {
        let t = Topology::preset("xgmi-2").unwrap();
        let root = std::env::temp_dir().join(format!("kfdsim-sysfs-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        write_tree(&root, &t).unwrap();
        let r = |p: &str| std::fs::read_to_string(root.join(p.trim_start_matches('/'))).unwrap();
        let nodes = root.join("sys/devices/virtual/kfd/kfd/topology/nodes");
        let mut names: Vec<String> =
            std::fs::read_dir(&nodes).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, vec!["0", "1", "2"]);
        assert_eq!(r("/sys/devices/virtual/kfd/kfd/topology/nodes/0/gpu_id"), "0\n");
        assert_eq!(r("/sys/devices/virtual/kfd/kfd/topology/nodes/2/gpu_id"), format!("{}\n", t.gpus[1].gpu_id));
        assert_eq!(r("/sys/class/kfd/kfd/topology/generation_id"), "3\n");
        assert_eq!(r("/sys/dev/char/226:128/device/vendor"), "0x1002\n");
        assert_eq!(r("/sys/class/drm/renderD129/device/device"), "0x740f\n");
        assert!(r("/sys/dev/char/226:129/device/uevent").contains("PCI_SLOT_NAME=0000:23:00.0\n"));
        let sub = std::fs::read_link(root.join("sys/dev/char/226:128/device/subsystem")).unwrap();
        assert_eq!(sub.file_name().unwrap(), "pci");
        let real = std::fs::canonicalize(root.join("sys/dev/char/226:128/device")).unwrap();
        assert_eq!(real, std::fs::canonicalize(&root).unwrap().join("sys/devices/pci0000:00/0000:03:00.0"));
        let drm: Vec<String> = std::fs::read_dir(root.join("sys/dev/char/226:128/device/drm"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(drm.contains(&"card0".to_string()) && drm.contains(&"renderD128".to_string()));
        assert!(r("/proc/modules").starts_with("amdgpu "));
        assert_eq!(r("/sys/module/amdgpu/initstate"), "live\n");
        assert!(root.join("dev/kfd").exists() && root.join("dev/dri/renderD129").exists());
        assert!(!root.join("dev/dri/renderD130").exists());
        // What rocm-smi reads: vbios_version (a card without it is not a GPU to it), the DPM
        // levels and the hwmon device with its labelled sensors, reached through the DRM class.
        assert_eq!(r("/sys/class/drm/card1/device/vbios_version"), "113-D67301-063\n");
        assert_eq!(r("/sys/class/drm/card0/device/pp_dpm_sclk"), "0: 500Mhz *\n1: 1700Mhz \n");
        assert_eq!(r("/sys/class/drm/card0/device/pp_dpm_mclk").lines().last(), Some("3: 1600Mhz "));
        assert_eq!(r("/sys/class/drm/card1/device/hwmon/hwmon1/name"), "amdgpu\n");
        assert_eq!(r("/sys/class/drm/card1/device/hwmon/hwmon1/temp2_label"), "junction\n");
        assert_eq!(r("/sys/class/drm/card1/device/hwmon/hwmon1/power1_cap"), "300000000\n");
        assert_eq!(r("/sys/class/drm/card1/device/hwmon/hwmon1/device/vendor"), "0x1002\n");
        assert!(!root.join("sys/class/drm/card1/device/hwmon/hwmon1/fan1_input").exists());
        let cfg = std::fs::read(root.join("sys/bus/pci/devices/0000:03:00.0/config")).unwrap();
        assert_eq!(&cfg[0..4], &[0x02, 0x10, 0x0f, 0x74]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn proc_modules_has_one_amdgpu_line() {
        let m = proc_modules("amdgpu 1 0 - Live 0x0\nloop 4 0 - Live 0x0\n");
        assert_eq!(m.lines().filter(|l| l.starts_with("amdgpu ")).count(), 1);
        assert!(m.contains("loop 4"));
    }

    #[test]
    fn system_properties_are_the_vcrat_oem_ids() {
        let s = system_properties();
        assert!(s.contains("platform_oem 6071224220929772865\n"), "{s}");
        assert!(s.contains("platform_id 35322352389441\n"), "{s}");
    }
}
