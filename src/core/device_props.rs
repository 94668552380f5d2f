//! Device properties and attributes derived from the KFD topology, as clr derives them from
//! ROCr (`rocclr/device/rocm/rocdevice.cpp` `populateOCLDeviceConstants`,
//! `hipamd/src/hip_device.cpp` `ihipGetDeviceProperties` / `hipGetDevicePropertiesR0000`,
//! `hipamd/src/hip_device_runtime.cpp` `hipDeviceGetAttribute`). Pure functions: the device
//! code reads sysfs into a [`KfdNode`] once and calls [`device_props`],
//! [`device_props_r0000`] and [`device_attribute`].
//!
//! Where clr reports a runtime feature that hipkfd does not implement, we report it absent so
//! that callers (hip-tests) skip instead of failing: images (`ImageSupport` = 0). Pageable
//! memory access follows XNACK (`pageableMemoryAccess`, `:xnack+`), as in clr. `hipStreamWaitValue*`
//! (`CanUseStreamWaitValue` = 1) and VMM are supported
//! (`VirtualMemoryManagementSupported` = 1), and so is dma-buf sharing.
//!
//! Layer `core`: may call `abi` and its own layer.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int};

use crate::abi::types::{
    hipDeviceArch_t, hipDeviceAttribute_t, hipDeviceProp_t, hipDeviceProp_tR0000, hipError_t, hipUUID,
};

/// One GPU node of the KFD topology (`/sys/devices/virtual/kfd/kfd/topology/nodes/<node_id>/`),
/// as read by the device code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KfdNode {
    /// KFD node number (CPU is 0 on the usual topologies).
    pub node_id: u32,
    /// `gpu_id` file: the id used in KFD ioctls.
    pub gpu_id: u32,
    /// `properties` file: `simd_count`, `simd_per_cu`, `wave_front_size`, `lds_size_in_kb`,
    /// `max_waves_per_simd`, `max_engine_clk_fcompute` (MHz), `gfx_target_version`,
    /// `location_id`, `domain`, `device_id`, `unique_id`, `capability`, `num_xcc`,
    /// `cpu_cores_count`, ... (see [`parse_properties`]).
    pub props: BTreeMap<String, u64>,
    /// `name` file (e.g. `gfx90a`); used only when `gfx_target_version` is absent.
    pub name: String,
    /// Device memory in bytes (sum of the VRAM banks).
    pub vram_size: u64,
    /// PCI address `DDDD:BB:DD.F`, e.g. `0000:03:00.0`; used when `location_id` is absent.
    pub pci_bus_id: String,
    /// Product name, e.g. `AMD Instinct MI210` (ROCr's `HSA_AMD_AGENT_INFO_PRODUCT_NAME`).
    pub marketing_name: String,
    /// `mem_banks/0/properties`: `heap_type` (1 = FB_PUBLIC, i.e. large BAR), `size_in_bytes`,
    /// `width` (bits), `mem_clk_max` (MHz). Empty if unknown.
    pub mem_bank_props: BTreeMap<String, u64>,
    /// `caches/*/properties`, any order: `level`, `size` (KiB), ... Empty if unknown.
    pub caches: Vec<BTreeMap<String, u64>>,
    /// `io_links/*/properties`: `node_to`, `type`, `flags` (CRAT_IOLINK_FLAGS_*). Empty if
    /// unknown.
    pub io_links: Vec<BTreeMap<String, u64>>,
    /// Whether XNACK (GPU page-fault retry) is on for this process (`AMDKFD_IOC_SET_XNACK_MODE`
    /// query, or `HSA_XNACK`); decides `:xnack+` vs `:xnack-` in `gcnArchName`.
    pub xnack_enabled: bool,
}

/// Parses a KFD sysfs `properties` file: one `name value` pair per line, decimal. Lines whose
/// value is not a `u64` (e.g. a cache's `sibling_map 1,0,0`) are skipped.
pub fn parse_properties(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let k = it.next()?;
            let v = it.next()?.parse::<u64>().ok()?;
            Some((k.to_string(), v))
        })
        .collect()
}

/// kfd_topology.h `HSA_CAP_SRAM_EDCSUPPORTED` (bit 26; libhsakmt `HSA_CAPABILITY.SRAM_EDCSupport`,
/// which ROCr turns into `:sramecc+`). Bit 19 (0x0008_0000) held it until Linux 5.x moved it and
/// named bit 19 `HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED` ("old buggy user mode depends on this
/// being 0").
const HSA_CAP_SRAM_EDCSUPPORTED: u64 = 0x0400_0000;
/// kfd_topology.h `HSA_CAP_ASIC_REVISION_MASK` / `_SHIFT`.
const HSA_CAP_ASIC_REVISION_MASK: u64 = 0x03c0_0000;
const HSA_CAP_ASIC_REVISION_SHIFT: u32 = 22;
/// kfd_crat.h `CRAT_IOLINK_FLAGS_NO_ATOMICS_32_BIT | CRAT_IOLINK_FLAGS_NO_ATOMICS_64_BIT`.
const CRAT_IOLINK_FLAGS_NO_ATOMICS: u64 = (1 << 2) | (1 << 3);
/// kfd_topology.h `HSA_MEM_HEAP_TYPE_FB_PUBLIC`: all of VRAM is host-visible.
const HSA_MEM_HEAP_TYPE_FB_PUBLIC: u64 = 1;

/// clr `kMaxAsyncQueues` (rocdefs.hpp) → `asyncEngineCount`.
const MAX_ASYNC_QUEUES: c_int = 8;
/// ROCr `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE` / `_MAX_DIM` on every AMD GPU.
const MAX_WORK_GROUP_SIZE: c_int = 1024;
/// clr `timeStampFrequency_` (kHz) → `clockInstructionRate`.
const TIMESTAMP_FREQUENCY_KHZ: c_int = 1_000_000;
/// Constant GPU wall clock of gfx9+ parts, 100 MHz (the SDMA/KFD clock counter), in kHz.
const WALL_CLOCK_KHZ: c_int = 100_000;
/// ROCr's gfx9+ image limits (HSA_EXT_AGENT_INFO_IMAGE_*), reported as clr does.
const IMAGE_1D_MAX: c_int = 16384;
const IMAGE_2D_MAX: [c_int; 2] = [16384, 16384];
const IMAGE_3D_MAX: [c_int; 3] = [16384, 16384, 8192];
const IMAGE_ARRAY_MAX_LAYERS: c_int = 2048;
const IMAGE_1DB_MAX: u64 = 1 << 27;
/// clr `imageBaseAddressAlignment_` / `imagePitchAlignment_`.
const IMAGE_ALIGNMENT: usize = 256;

impl KfdNode {
    fn prop(&self, k: &str) -> Option<u64> {
        self.props.get(k).copied()
    }

    /// (major, minor, stepping) of the gfx ISA, from `gfx_target_version` (e.g. 90010 →
    /// 9.0.10) or, failing that, the `name` file (`gfx90a`).
    pub fn gfx_version(&self) -> (u32, u32, u32) {
        if let Some(v) = self.prop("gfx_target_version").filter(|v| *v != 0) {
            let v = v as u32;
            return (v / 10000, (v / 100) % 100, v % 100);
        }
        parse_gfx_name(&self.name).unwrap_or((0, 0, 0))
    }

    /// Processor name, e.g. `gfx90a`, `gfx942`, `gfx1100`.
    pub fn gfx_name(&self) -> String {
        let (ma, mi, st) = self.gfx_version();
        format!("gfx{ma}{mi}{st:x}")
    }

    /// LLVM target ID as clr prints it in `gcnArchName`: the processor plus `:sramecc±` and
    /// `:xnack±` for ISAs that have those features, e.g. `gfx90a:sramecc+:xnack-`.
    pub fn target_id(&self) -> String {
        let gfx = self.gfx_name();
        let mut id = gfx.clone();
        if SRAMECC_ISAS.contains(&gfx.as_str()) {
            let on = self.prop("capability").unwrap_or(0) & HSA_CAP_SRAM_EDCSUPPORTED != 0;
            id.push_str(if on { ":sramecc+" } else { ":sramecc-" });
        }
        if XNACK_ISAS.contains(&gfx.as_str()) {
            id.push_str(if self.xnack_enabled { ":xnack+" } else { ":xnack-" });
        }
        id
    }

    /// Compute units: `simd_count / simd_per_cu` (ROCr `HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT`).
    pub fn compute_units(&self) -> u32 {
        (self.prop("simd_count").unwrap_or(0) / self.simd_per_cu() as u64) as u32
    }

    /// SIMDs per CU (the node's `simd_per_cu`, 4 when absent).
    pub fn simd_per_cu(&self) -> u32 {
        self.prop("simd_per_cu").filter(|v| *v != 0).unwrap_or(4) as u32
    }

    /// VGPRs per SIMD lane and their allocation granule (clr `rocdevice.cpp` `vgprsPerSimd_`,
    /// `vgprAllocGranularity_`).
    pub fn vgpr_file(&self) -> (u32, u32) {
        match self.gfx_version() {
            (9, ..) if WIDE_VGPR_ISAS.contains(&self.gfx_name().as_str()) => (512, 8),
            (0..=9, ..) => (256, 4),
            (10, 0 | 1, _) => (1024, 8),
            (11, 0, 0 | 1) | (11, 5, 1) => (1536, 24),
            _ => (1024, 16),
        }
    }

    /// PCI (domain, bus, device, function) from `domain` + `location_id` (bus<<8 | dev<<3 |
    /// fn), or parsed from `pci_bus_id`.
    pub fn pci_location(&self) -> (u32, u32, u32, u32) {
        if let Some(loc) = self.prop("location_id") {
            let loc = loc as u32;
            let domain = self.prop("domain").unwrap_or(0) as u32;
            return (domain, (loc >> 8) & 0xff, (loc >> 3) & 0x1f, loc & 0x7);
        }
        parse_pci_bus_id(&self.pci_bus_id).unwrap_or((0, 0, 0, 0))
    }

    fn is_apu(&self) -> bool {
        self.prop("cpu_cores_count").unwrap_or(0) > 0
    }

    fn l2_cache_bytes(&self) -> u64 {
        self.caches.iter().find(|c| c.get("level") == Some(&2)).and_then(|c| c.get("size")).map_or(0, |kib| kib * 1024)
    }

    /// VGPRs a CU can hand out (clr `availableVGPRs_` = AddressableNumVGPRs × SIMDs per CU).
    fn available_vgprs(&self) -> u64 {
        let per_simd = if WIDE_VGPR_ISAS.contains(&self.gfx_name().as_str()) { 512 } else { 256 };
        per_simd * self.simd_per_cu() as u64
    }

    fn host_atomics(&self) -> bool {
        self.io_links
            .iter()
            .find(|l| l.get("node_to") == Some(&0))
            .is_some_and(|l| l.get("flags").copied().unwrap_or(0) & CRAT_IOLINK_FLAGS_NO_ATOMICS == 0)
    }
}

/// ISAs with the `sramecc` target feature (LLVM AMDGPUUsage "Processors").
const SRAMECC_ISAS: &[&str] = &["gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"];
/// ISAs with the `xnack` target feature.
const XNACK_ISAS: &[&str] = &[
    "gfx801", "gfx810", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx940",
    "gfx941", "gfx942", "gfx950", "gfx1010", "gfx1011", "gfx1012", "gfx1013",
];
/// ISAs with 512 addressable VGPRs per wave (unified VGPR/AGPR file).
const WIDE_VGPR_ISAS: &[&str] = &["gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"];

fn parse_gfx_name(name: &str) -> Option<(u32, u32, u32)> {
    let digits = name.trim().strip_prefix("gfx")?;
    let digits = digits.split(':').next()?;
    if digits.len() < 3 || !digits.is_ascii() {
        return None;
    }
    let (head, tail) = digits.split_at(digits.len() - 2);
    let major = head.parse().ok()?;
    let minor = u32::from_str_radix(&tail[..1], 16).ok()?;
    let stepping = u32::from_str_radix(&tail[1..], 16).ok()?;
    Some((major, minor, stepping))
}

fn parse_pci_bus_id(s: &str) -> Option<(u32, u32, u32, u32)> {
    let (domain, rest) = s.trim().split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    Some((
        u32::from_str_radix(domain, 16).ok()?,
        u32::from_str_radix(bus, 16).ok()?,
        u32::from_str_radix(dev, 16).ok()?,
        u32::from_str_radix(func, 16).ok()?,
    ))
}

/// The device's target id as `gcnArchName` holds it (`gfx90a:sramecc+:xnack-`).
pub fn arch_name(p: &hipDeviceProp_t) -> String {
    p.gcnArchName.iter().take_while(|c| **c != 0).map(|c| *c as u8 as char).collect()
}

/// Copies `s` into a C `char` array, truncating so that a NUL always ends it.
pub(crate) fn put_cstr(dst: &mut [c_char], s: &str) {
    dst.fill(0);
    let n = dst.len().saturating_sub(1);
    for (d, b) in dst.iter_mut().zip(s.bytes().take(n)) {
        *d = b as c_char;
    }
}

fn clamp_i32(v: u64) -> c_int {
    v.min(i32::MAX as u64) as c_int
}

/// ROCr `HSA_AMD_AGENT_INFO_UUID` is `"GPU-"` + the 16 lowercase hex digits of `unique_id`
/// (`"GPU-XX"` when 0); clr keeps the 16 characters after `"GPU-"`.
fn uuid_from_unique_id(unique_id: u64) -> hipUUID {
    let text = if unique_id == 0 { "XX".to_string() } else { format!("{unique_id:016x}") };
    let mut uuid = hipUUID::default();
    for (d, b) in uuid.bytes.iter_mut().zip(text.bytes()) {
        *d = b as c_char;
    }
    uuid
}

/// `hipDeviceProp_t` (R0600 layout) of one GPU, as clr's `ihipGetDeviceProperties` fills it
/// from ROCr's agent info. Units: bytes, kHz. Fields clr zeroes stay zero.
pub fn device_props(k: &KfdNode) -> hipDeviceProp_t {
    let mut p = hipDeviceProp_t::default();
    let (major, minor, _) = k.gfx_version();
    let cus = k.compute_units() as c_int;
    let wave = k.prop("wave_front_size").filter(|v| *v != 0).unwrap_or(64);
    let simd_per_cu = k.prop("simd_per_cu").filter(|v| *v != 0).unwrap_or(4);
    let waves_per_simd = k.prop("max_waves_per_simd").filter(|v| *v != 0).unwrap_or(8);
    let lds = k.prop("lds_size_in_kb").filter(|v| *v != 0).unwrap_or(64) * 1024;
    let (domain, bus, dev, _) = k.pci_location();
    let global_mem =
        if k.vram_size != 0 { k.vram_size } else { k.mem_bank_props.get("size_in_bytes").copied().unwrap_or(0) };
    // clr: maxMemAllocSize_ = globalMemSize_ aligned down to 8 (GPU_SINGLE_ALLOC_PERCENT 100).
    let max_alloc = global_mem & !7;
    let l2 = clamp_i32(k.l2_cache_bytes());
    let threads_per_cu = wave * waves_per_simd * simd_per_cu;
    let regs = clamp_i32(k.available_vgprs() * 64);
    let integrated = k.is_apu();
    let coop = 1;

    let name = if !k.marketing_name.is_empty() {
        k.marketing_name.clone()
    } else if !k.name.is_empty() {
        k.name.clone()
    } else {
        k.gfx_name()
    };
    put_cstr(&mut p.name, &name);
    put_cstr(&mut p.gcnArchName, &k.target_id());
    p.uuid = uuid_from_unique_id(k.prop("unique_id").unwrap_or(0));
    p.totalGlobalMem = global_mem as usize;
    p.sharedMemPerBlock = lds as usize;
    p.sharedMemPerMultiprocessor = (lds * cus.max(0) as u64) as usize;
    p.regsPerBlock = regs;
    p.regsPerMultiprocessor = regs;
    p.warpSize = wave as c_int;
    p.maxThreadsPerBlock = MAX_WORK_GROUP_SIZE;
    p.maxThreadsDim = [MAX_WORK_GROUP_SIZE; 3];
    p.maxGridSize = [i32::MAX, 65536, 65536];
    p.clockRate = clamp_i32(k.prop("max_engine_clk_fcompute").unwrap_or(0) * 1000);
    p.memoryClockRate = clamp_i32(k.mem_bank_props.get("mem_clk_max").copied().unwrap_or(0) * 1000);
    p.memoryBusWidth = clamp_i32(k.mem_bank_props.get("width").copied().unwrap_or(0));
    p.totalConstMem = clamp_i32(max_alloc) as usize;
    p.major = major as c_int;
    p.minor = minor as c_int;
    p.multiProcessorCount = cus;
    p.l2CacheSize = l2;
    p.persistingL2CacheMaxSize = l2;
    p.maxThreadsPerMultiProcessor = clamp_i32(threads_per_cu);
    p.maxBlocksPerMultiProcessor = clamp_i32(threads_per_cu / MAX_WORK_GROUP_SIZE as u64);
    p.computeMode = 0;
    p.clockInstructionRate = TIMESTAMP_FREQUENCY_KHZ;
    p.arch = hipDeviceArch_t::with(&[
        "hasGlobalInt32Atomics",
        "hasGlobalFloatAtomicExch",
        "hasSharedInt32Atomics",
        "hasSharedFloatAtomicExch",
        "hasFloatAtomicAdd",
        "hasGlobalInt64Atomics",
        "hasSharedInt64Atomics",
        "hasDoubles",
        "hasWarpVote",
        "hasWarpBallot",
        "hasWarpShuffle",
        "hasThreadFenceSystem",
        "has3dGrid",
    ]);
    p.hostNativeAtomicSupported = k.host_atomics() as c_int;
    p.concurrentKernels = 1;
    p.pciDomainID = domain as c_int;
    p.pciBusID = bus as c_int;
    p.pciDeviceID = dev as c_int;
    p.multiGpuBoardGroupID = dev as c_int;
    p.maxSharedMemoryPerMultiProcessor = lds as usize;
    p.canMapHostMemory = 1;
    p.cooperativeLaunch = coop;
    p.cooperativeMultiDeviceLaunch = coop;
    p.cooperativeMultiDeviceUnmatchedFunc = coop;
    p.cooperativeMultiDeviceUnmatchedGridDim = coop;
    p.cooperativeMultiDeviceUnmatchedBlockDim = coop;
    p.cooperativeMultiDeviceUnmatchedSharedMem = coop;

    let tex_linear = clamp_i32(16 * IMAGE_1DB_MAX);
    p.maxTexture1DLinear = tex_linear;
    p.maxTexture1DMipmap = tex_linear;
    p.maxTexture1D = IMAGE_1D_MAX;
    p.maxSurface1D = IMAGE_1D_MAX;
    p.maxTexture2D = IMAGE_2D_MAX;
    p.maxSurface2D = IMAGE_2D_MAX;
    p.maxTexture3D = IMAGE_3D_MAX;
    p.maxSurface3D = IMAGE_3D_MAX;
    p.maxTexture1DLayered = [IMAGE_1D_MAX, IMAGE_ARRAY_MAX_LAYERS];
    p.maxSurface1DLayered = [IMAGE_1D_MAX, IMAGE_ARRAY_MAX_LAYERS];
    p.maxTexture2DLayered = [IMAGE_2D_MAX[0], IMAGE_2D_MAX[1], IMAGE_ARRAY_MAX_LAYERS];
    p.maxSurface2DLayered = [IMAGE_2D_MAX[0], IMAGE_2D_MAX[1], IMAGE_ARRAY_MAX_LAYERS];

    p.memPitch = clamp_i32(max_alloc) as usize;
    p.textureAlignment = IMAGE_ALIGNMENT;
    p.surfaceAlignment = IMAGE_ALIGNMENT;
    p.texturePitchAlignment = IMAGE_ALIGNMENT;
    p.kernelExecTimeoutEnabled = 0;
    p.ECCEnabled = 0;
    p.isLargeBar = (k.mem_bank_props.get("heap_type") == Some(&HSA_MEM_HEAP_TYPE_FB_PUBLIC)) as c_int;
    p.asicRevision =
        ((k.prop("capability").unwrap_or(0) & HSA_CAP_ASIC_REVISION_MASK) >> HSA_CAP_ASIC_REVISION_SHIFT) as c_int;
    p.ipcEventSupported = 1;
    p.streamPrioritiesSupported = 1;

    p.asyncEngineCount = MAX_ASYNC_QUEUES;
    p.deviceOverlap = 1;
    // SVM accessible by default only with XNACK or on an APU (ROCr
    // HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT).
    p.unifiedAddressing = (k.xnack_enabled || integrated) as c_int;
    // hipMallocManaged is coherent system memory every GPU maps (src/core/memory.rs): clr reports
    // both from ROCr's HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, true on every KFD with SVM; ours needs
    // no KFD SVM range, so 1 also where a node lacks HSA_CAP_SVMAPI_SUPPORTED (a kernel without
    // CONFIG_HSA_AMD_SVM).
    p.managedMemory = 1;
    p.concurrentManagedAccess = 1;
    p.directManagedMemAccessFromHost = 0;
    // With XNACK a GPU reaches pageable memory through retry faults (clr
    // `hmmCpuMemoryAccessible_`, ROCr HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT).
    p.pageableMemoryAccess = k.xnack_enabled as c_int;
    p.pageableMemoryAccessUsesHostPageTables = 0;
    p.canUseHostPointerForRegisteredMem = integrated as c_int;
    p.hostRegisterSupported = 1;
    // hipMallocAsync and memory pools (src/mem/mempool.rs).
    p.memoryPoolsSupported = 1;
    p.memoryPoolSupportedHandleTypes = 0;

    p.globalL1CacheSupported = 1;
    p.localL1CacheSupported = 1;
    p.reservedSharedMemPerBlock = 0;
    p.sharedMemPerBlockOptin = lds as usize;
    p.integrated = integrated as c_int;
    p
}

/// The ROCm 5.x (`hipDeviceProp_tR0000`) view of `p`, as clr's `hipGetDevicePropertiesR0000`
/// fills it: the same values, `name` cut to 127 bytes, and `gcnArch` = major·100 + minor·10 +
/// stepping (taken from `gcnArchName`).
pub fn device_props_r0000(p: &hipDeviceProp_t) -> hipDeviceProp_tR0000 {
    let mut o = hipDeviceProp_tR0000::default();
    o.name[..127].copy_from_slice(&p.name[..127]);
    o.totalGlobalMem = p.totalGlobalMem;
    o.sharedMemPerBlock = p.sharedMemPerBlock;
    o.regsPerBlock = p.regsPerBlock;
    o.warpSize = p.warpSize;
    o.maxThreadsPerBlock = p.maxThreadsPerBlock;
    o.maxThreadsDim = p.maxThreadsDim;
    o.maxGridSize = p.maxGridSize;
    o.clockRate = p.clockRate;
    o.memoryClockRate = p.memoryClockRate;
    o.memoryBusWidth = p.memoryBusWidth;
    o.totalConstMem = p.totalConstMem;
    o.major = p.major;
    o.minor = p.minor;
    o.multiProcessorCount = p.multiProcessorCount;
    o.l2CacheSize = p.l2CacheSize;
    o.maxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    o.computeMode = p.computeMode;
    o.clockInstructionRate = p.clockInstructionRate;
    o.arch = p.arch;
    o.concurrentKernels = p.concurrentKernels;
    o.pciDomainID = p.pciDomainID;
    o.pciBusID = p.pciBusID;
    o.pciDeviceID = p.pciDeviceID;
    o.maxSharedMemoryPerMultiProcessor = p.maxSharedMemoryPerMultiProcessor;
    o.isMultiGpuBoard = p.isMultiGpuBoard;
    o.canMapHostMemory = p.canMapHostMemory;
    o.gcnArchName = p.gcnArchName;
    let (ma, mi, st) = parse_gfx_name(&arch_name(p)).unwrap_or((0, 0, 0));
    o.gcnArch = (ma * 100 + mi * 10 + st) as c_int;
    o.integrated = p.integrated;
    o.cooperativeLaunch = p.cooperativeLaunch;
    o.cooperativeMultiDeviceLaunch = p.cooperativeMultiDeviceLaunch;
    o.maxTexture1DLinear = p.maxTexture1DLinear;
    o.maxTexture1D = p.maxTexture1D;
    o.maxTexture2D = p.maxTexture2D;
    o.maxTexture3D = p.maxTexture3D;
    o.hdpMemFlushCntl = p.hdpMemFlushCntl;
    o.hdpRegFlushCntl = p.hdpRegFlushCntl;
    o.memPitch = p.memPitch;
    o.textureAlignment = p.textureAlignment;
    o.texturePitchAlignment = p.texturePitchAlignment;
    o.kernelExecTimeoutEnabled = p.kernelExecTimeoutEnabled;
    o.ECCEnabled = p.ECCEnabled;
    o.tccDriver = p.tccDriver;
    o.cooperativeMultiDeviceUnmatchedFunc = p.cooperativeMultiDeviceUnmatchedFunc;
    o.cooperativeMultiDeviceUnmatchedGridDim = p.cooperativeMultiDeviceUnmatchedGridDim;
    o.cooperativeMultiDeviceUnmatchedBlockDim = p.cooperativeMultiDeviceUnmatchedBlockDim;
    o.cooperativeMultiDeviceUnmatchedSharedMem = p.cooperativeMultiDeviceUnmatchedSharedMem;
    o.isLargeBar = p.isLargeBar;
    o.asicRevision = p.asicRevision;
    o.managedMemory = p.managedMemory;
    o.directManagedMemAccessFromHost = p.directManagedMemAccessFromHost;
    o.concurrentManagedAccess = p.concurrentManagedAccess;
    o.pageableMemoryAccess = p.pageableMemoryAccess;
    // clr R0000 fills this from hostUnifiedMemory_ (APU), unlike R0600.
    o.pageableMemoryAccessUsesHostPageTables = p.integrated;
    o
}

/// `hipDeviceGetAttribute` value of `attr` (a raw `hipDeviceAttribute_t`), following clr's
/// switch; attributes clr lacks but that have a meaning for us are filled too (marked below).
///
/// Errors: `hipErrorInvalidValue` for values that are not attributes, the reserved
/// `Unused*`/range-marker values, multi-dimensional attributes (e.g. `MaxTexture2DGather`, no
/// single int), `Luid`, and the pointer-valued `HdpMemFlushCntl`/`HdpRegFlushCntl` (no `int`:
/// `hipDeviceGetAttribute` stores those pointers itself, from `hipDeviceProp_t`).
pub fn device_attribute(p: &hipDeviceProp_t, k: &KfdNode, attr: hipDeviceAttribute_t) -> Result<c_int, hipError_t> {
    use hipDeviceAttribute_t as A;
    let v = match attr {
        A::hipDeviceAttributeMaxThreadsPerBlock => p.maxThreadsPerBlock,
        A::hipDeviceAttributeAsyncEngineCount => p.asyncEngineCount,
        A::hipDeviceAttributeMaxBlockDimX => p.maxThreadsDim[0],
        A::hipDeviceAttributeMaxBlockDimY => p.maxThreadsDim[1],
        A::hipDeviceAttributeMaxBlockDimZ => p.maxThreadsDim[2],
        A::hipDeviceAttributeMaxGridDimX => p.maxGridSize[0],
        A::hipDeviceAttributeMaxGridDimY => p.maxGridSize[1],
        A::hipDeviceAttributeMaxGridDimZ => p.maxGridSize[2],
        A::hipDeviceAttributeMaxSurface1D => p.maxSurface1D,
        A::hipDeviceAttributeMaxSharedMemoryPerBlock => clamp_i32(p.sharedMemPerBlock as u64),
        A::hipDeviceAttributeSharedMemPerBlockOptin => clamp_i32(p.sharedMemPerBlockOptin as u64),
        A::hipDeviceAttributeSharedMemPerMultiprocessor => clamp_i32(p.sharedMemPerMultiprocessor as u64),
        A::hipDeviceAttributeStreamPrioritiesSupported => p.streamPrioritiesSupported,
        A::hipDeviceAttributeSurfaceAlignment => clamp_i32(p.surfaceAlignment as u64),
        A::hipDeviceAttributeTotalConstantMemory => clamp_i32(p.totalConstMem as u64),
        A::hipDeviceAttributeTotalGlobalMem => clamp_i32(p.totalGlobalMem as u64),
        A::hipDeviceAttributeWarpSize => p.warpSize,
        A::hipDeviceAttributeMaxRegistersPerBlock => p.regsPerBlock,
        A::hipDeviceAttributeClockRate => p.clockRate,
        A::hipDeviceAttributeWallClockRate => WALL_CLOCK_KHZ,
        A::hipDeviceAttributeMemoryClockRate => p.memoryClockRate,
        A::hipDeviceAttributeMemoryBusWidth => p.memoryBusWidth,
        A::hipDeviceAttributeMultiprocessorCount => p.multiProcessorCount,
        A::hipDeviceAttributeComputeMode => p.computeMode,
        A::hipDeviceAttributeComputePreemptionSupported => p.computePreemptionSupported,
        A::hipDeviceAttributeL2CacheSize => p.l2CacheSize,
        A::hipDeviceAttributeLocalL1CacheSupported => p.localL1CacheSupported,
        A::hipDeviceAttributeLuidDeviceNodeMask => p.luidDeviceNodeMask as c_int,
        A::hipDeviceAttributeMaxThreadsPerMultiProcessor => p.maxThreadsPerMultiProcessor,
        A::hipDeviceAttributeComputeCapabilityMajor => p.major,
        A::hipDeviceAttributeComputeCapabilityMinor => p.minor,
        A::hipDeviceAttributeMultiGpuBoardGroupID => p.multiGpuBoardGroupID,
        A::hipDeviceAttributePciBusId => p.pciBusID,
        A::hipDeviceAttributeConcurrentKernels => p.concurrentKernels,
        A::hipDeviceAttributePciDeviceId => p.pciDeviceID,
        A::hipDeviceAttributePciDomainId => p.pciDomainID,
        A::hipDeviceAttributePciChipId => clamp_i32(k.prop("device_id").unwrap_or(0)),
        A::hipDeviceAttributePersistingL2CacheMaxSize => p.persistingL2CacheMaxSize,
        A::hipDeviceAttributeMaxRegistersPerMultiprocessor => p.regsPerMultiprocessor,
        A::hipDeviceAttributeReservedSharedMemPerBlock => clamp_i32(p.reservedSharedMemPerBlock as u64),
        A::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor => clamp_i32(p.maxSharedMemoryPerMultiProcessor as u64),
        A::hipDeviceAttributeIsMultiGpuBoard => p.isMultiGpuBoard,
        A::hipDeviceAttributeCooperativeLaunch => p.cooperativeLaunch,
        A::hipDeviceAttributeHostRegisterSupported => p.hostRegisterSupported,
        A::hipDeviceAttributeDeviceOverlap => (p.asyncEngineCount > 0) as c_int,
        A::hipDeviceAttributeCooperativeMultiDeviceLaunch => p.cooperativeMultiDeviceLaunch,
        A::hipDeviceAttributeIntegrated => p.integrated,
        A::hipDeviceAttributeMaxTexture1DWidth => p.maxTexture1D,
        A::hipDeviceAttributeMaxTexture1DLinear => p.maxTexture1DLinear,
        A::hipDeviceAttributeMaxTexture1DMipmap => p.maxTexture1DMipmap,
        A::hipDeviceAttributeMaxTextureCubemap => p.maxTextureCubemap,
        A::hipDeviceAttributeMaxTexture2DWidth => p.maxTexture2D[0],
        A::hipDeviceAttributeMaxTexture2DHeight => p.maxTexture2D[1],
        A::hipDeviceAttributeMaxTexture3DWidth => p.maxTexture3D[0],
        A::hipDeviceAttributeMaxTexture3DHeight => p.maxTexture3D[1],
        A::hipDeviceAttributeMaxTexture3DDepth => p.maxTexture3D[2],
        A::hipDeviceAttributeMaxPitch => clamp_i32(p.memPitch as u64),
        A::hipDeviceAttributeTextureAlignment => clamp_i32(p.textureAlignment as u64),
        A::hipDeviceAttributeTexturePitchAlignment => clamp_i32(p.texturePitchAlignment as u64),
        A::hipDeviceAttributeKernelExecTimeout => p.kernelExecTimeoutEnabled,
        A::hipDeviceAttributeCanMapHostMemory => p.canMapHostMemory,
        A::hipDeviceAttributeCanUseHostPointerForRegisteredMem => p.canUseHostPointerForRegisteredMem,
        A::hipDeviceAttributeEccEnabled => p.ECCEnabled,
        A::hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc => p.cooperativeMultiDeviceUnmatchedFunc,
        A::hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim => p.cooperativeMultiDeviceUnmatchedGridDim,
        A::hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim => p.cooperativeMultiDeviceUnmatchedBlockDim,
        A::hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem => p.cooperativeMultiDeviceUnmatchedSharedMem,
        A::hipDeviceAttributeAsicRevision => p.asicRevision,
        A::hipDeviceAttributeManagedMemory => p.managedMemory,
        A::hipDeviceAttributeMaxBlocksPerMultiProcessor => p.maxBlocksPerMultiProcessor,
        A::hipDeviceAttributeDirectManagedMemAccessFromHost => p.directManagedMemAccessFromHost,
        A::hipDeviceAttributeGlobalL1CacheSupported => p.globalL1CacheSupported,
        A::hipDeviceAttributeHostNativeAtomicSupported => p.hostNativeAtomicSupported,
        A::hipDeviceAttributeConcurrentManagedAccess => p.concurrentManagedAccess,
        A::hipDeviceAttributePageableMemoryAccess => p.pageableMemoryAccess,
        A::hipDeviceAttributePageableMemoryAccessUsesHostPageTables => p.pageableMemoryAccessUsesHostPageTables,
        A::hipDeviceAttributeIsLargeBar => p.isLargeBar,
        // clr: the runtime always uses SVM for host allocations.
        A::hipDeviceAttributeUnifiedAddressing => 1,
        // hipStreamWaitValue32/64 (SDMA POLL_REGMEM), as clr: 1.
        A::hipDeviceAttributeCanUseStreamWaitValue => 1,
        // Not implemented by hipkfd (clr: 1).
        A::hipDeviceAttributeImageSupport => 0,
        A::hipDeviceAttributePhysicalMultiProcessorCount => p.multiProcessorCount,
        A::hipDeviceAttributeFineGrainSupport => 1,
        A::hipDeviceAttributeMemoryPoolsSupported => p.memoryPoolsSupported,
        A::hipDeviceAttributeMemoryPoolSupportedHandleTypes => p.memoryPoolSupportedHandleTypes as c_int,
        A::hipDeviceAttributeVirtualMemoryManagementSupported => 1,
        A::hipDeviceAttributeAccessPolicyMaxWindowSize => p.accessPolicyMaxWindowSize,
        A::hipDeviceAttributeNumberOfXccs => clamp_i32(k.prop("num_xcc").filter(|v| *v != 0).unwrap_or(1)),
        A::hipDeviceAttributeMaxAvailableVgprsPerThread => clamp_i32(k.available_vgprs()),
        // Not in clr's switch; meaningful values for hipkfd:
        A::hipDeviceAttributeClockInstructionRate => p.clockInstructionRate,
        A::hipDeviceAttributeMaxSurfaceCubemap => p.maxSurfaceCubemap,
        A::hipDeviceAttributeSingleToDoublePrecisionPerfRatio => p.singleToDoublePrecisionPerfRatio,
        A::hipDeviceAttributeTccDriver => p.tccDriver,
        A::hipDeviceAttributeHostNumaId => -1,
        A::hipDeviceAttributeDmaBufSupported => 1,
        A::hipDeviceAttributeGPUDirectRDMAWithHipVMMSupported => 0,
        A::hipDeviceAttributeHandleTypeFabricSupported => 0,
        A::hipDeviceAttributeExpertSchedMode => 0,
        A::hipDeviceAttributeMaxDynDataPrefetchRegions => 0,
        _ => return Err(hipError_t::hipErrorInvalidValue),
    };
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    /// An MI210 node as the KFD of Linux 6.x publishes it.
    fn mi210() -> KfdNode {
        let props = parse_properties(
            "cpu_cores_count 0\nsimd_count 416\nmem_banks_count 1\ncaches_count 8\n\
             io_links_count 2\nlocation_id 768\ndomain 0\ndevice_id 29711\n\
             max_waves_per_simd 8\nlds_size_in_kb 64\nwave_front_size 64\nsimd_per_cu 4\n\
             max_engine_clk_fcompute 1700\nlocal_mem_size 68702699520\n\
             gfx_target_version 90010\nunique_id 12345678901234\ncapability 746094208\n\
             num_xcc 1\n",
        );
        KfdNode {
            node_id: 1,
            gpu_id: 0x1000,
            props,
            name: "gfx90a".into(),
            vram_size: 64 << 30,
            pci_bus_id: "0000:03:00.0".into(),
            marketing_name: "AMD Instinct MI210".into(),
            mem_bank_props: parse_properties(
                "heap_type 1\nsize_in_bytes 68702699520\nflags 0\nwidth 4096\nmem_clk_max 1600\n",
            ),
            caches: vec![
                parse_properties("processor_id_low 1\nlevel 1\nsize 16\nsibling_map 1,0,0\n"),
                parse_properties("processor_id_low 1\nlevel 2\nsize 8192\ntype 5\n"),
            ],
            io_links: vec![parse_properties("type 2\nnode_from 1\nnode_to 0\nflags 1\n")],
            xnack_enabled: false,
        }
    }

    fn cstr(a: &[c_char]) -> &str {
        // SAFETY: put_cstr always leaves a terminating NUL inside the array.
        unsafe { CStr::from_ptr(a.as_ptr()) }.to_str().unwrap()
    }

    #[test]
    fn parse_properties_skips_non_numbers() {
        let m = parse_properties("a 1\nsibling_map 1,0,1\n\nb 18446744073709551615\nc\n");
        assert_eq!(m.len(), 2);
        assert_eq!(m["b"], u64::MAX);
    }

    #[test]
    fn gfx90a_props() {
        let k = mi210();
        let p = device_props(&k);
        assert_eq!(cstr(&p.name), "AMD Instinct MI210");
        // capability 746094208 = 0x2c787e80 has HSA_CAP_SRAM_EDCSUPPORTED (bit 26).
        assert_eq!(cstr(&p.gcnArchName), "gfx90a:sramecc+:xnack-");
        assert_eq!((p.major, p.minor), (9, 0));
        assert_eq!(p.multiProcessorCount, 104);
        assert_eq!(p.clockRate, 1_700_000);
        assert_eq!(p.memoryClockRate, 1_600_000);
        assert_eq!(p.memoryBusWidth, 4096);
        assert_eq!(p.totalGlobalMem, 64 << 30);
        assert_eq!(p.sharedMemPerBlock, 65536);
        assert_eq!(p.sharedMemPerMultiprocessor, 65536 * 104);
        assert_eq!(p.l2CacheSize, 8 << 20);
        assert_eq!(p.warpSize, 64);
        assert_eq!(p.maxThreadsPerBlock, 1024);
        assert_eq!(p.maxThreadsDim, [1024; 3]);
        assert_eq!(p.maxGridSize, [i32::MAX, 65536, 65536]);
        assert_eq!(p.maxThreadsPerMultiProcessor, 2048);
        assert_eq!(p.maxBlocksPerMultiProcessor, 2);
        assert_eq!(p.regsPerBlock, 512 * 4 * 64);
        assert_eq!((p.pciDomainID, p.pciBusID, p.pciDeviceID), (0, 3, 0));
        assert_eq!(p.isLargeBar, 1);
        assert_eq!(p.integrated, 0);
        assert_eq!(p.asicRevision, 1);
        assert_eq!(p.totalConstMem, i32::MAX as usize);
        assert_eq!(p.clockInstructionRate, 1_000_000);
        assert_eq!(p.hostNativeAtomicSupported, 1);
        assert!(p.arch.get("hasDoubles") && !p.arch.get("hasFunnelShift"));
        // ROCr UUID: 16 lowercase hex digits of unique_id.
        let uuid: Vec<u8> = p.uuid.bytes.iter().map(|b| *b as u8).collect();
        assert_eq!(&uuid, b"00000b3a73ce2ff2");
    }

    #[test]
    fn other_isas_and_fallbacks() {
        let mut k = mi210();
        k.props.insert("gfx_target_version".into(), 110000);
        assert_eq!(k.target_id(), "gfx1100");
        k.props.insert("gfx_target_version".into(), 90402);
        k.xnack_enabled = true;
        k.props.insert("capability".into(), 0);
        assert_eq!(k.target_id(), "gfx942:sramecc-:xnack+");
        // Only bit 26 means SRAM ECC; bit 19 is the reserved old position.
        k.props.insert("capability".into(), 0x0008_0000);
        assert_eq!(k.target_id(), "gfx942:sramecc-:xnack+");
        k.props.insert("capability".into(), 0x0400_0000);
        assert_eq!(k.target_id(), "gfx942:sramecc+:xnack+");
        k.props.insert("capability".into(), 0);
        k.props.remove("gfx_target_version");
        k.name = "gfx1030".into();
        assert_eq!(k.gfx_version(), (10, 3, 0));
        assert_eq!(k.target_id(), "gfx1030");
        k.props.remove("location_id");
        k.pci_bus_id = "0001:c3:1f.2".into();
        assert_eq!(k.pci_location(), (1, 0xc3, 0x1f, 2));
        k.marketing_name.clear();
        k.name.clear();
        k.props.insert("gfx_target_version".into(), 90010);
        let p = device_props(&k);
        assert_eq!(cstr(&p.name), "gfx90a");
        // zero unique_id → ROCr's "GPU-XX"
        k.props.insert("unique_id".into(), 0);
        assert_eq!(device_props(&k).uuid.bytes[..3], [b'X' as c_char, b'X' as c_char, 0]);
    }

    #[test]
    fn r0000_conversion() {
        let mut k = mi210();
        k.marketing_name = "x".repeat(300);
        let p = device_props(&k);
        let o = device_props_r0000(&p);
        assert_eq!(cstr(&o.name).len(), 127);
        assert_eq!(o.gcnArch, 910);
        assert_eq!(cstr(&o.gcnArchName), "gfx90a:sramecc+:xnack-");
        assert_eq!(o.totalGlobalMem, p.totalGlobalMem);
        assert_eq!(o.multiProcessorCount, 104);
        assert_eq!(o.pciBusID, 3);
        assert_eq!(o.arch, p.arch);
        assert_eq!(o.isLargeBar, 1);
    }

    #[test]
    fn attributes() {
        let k = mi210();
        let p = device_props(&k);
        let a = |v: hipDeviceAttribute_t| device_attribute(&p, &k, v);
        use hipDeviceAttribute_t as A;
        assert_eq!(a(A::hipDeviceAttributeVirtualMemoryManagementSupported), Ok(1));
        assert_eq!(a(A::hipDeviceAttributeWarpSize), Ok(64));
        assert_eq!(a(A::hipDeviceAttributeMultiprocessorCount), Ok(104));
        assert_eq!(a(A::hipDeviceAttributeTotalGlobalMem), Ok(i32::MAX));
        assert_eq!(a(A::hipDeviceAttributePciDomainID), Ok(0));
        assert_eq!(a(A::hipDeviceAttributePciBusId), Ok(3));
        assert_eq!(a(A::hipDeviceAttributePciChipId), Ok(0x740f));
        assert_eq!(a(A::hipDeviceAttributeComputeCapabilityMajor), Ok(9));
        assert_eq!(a(A::hipDeviceAttributeClockInstructionRate), Ok(1_000_000));
        assert_eq!(a(A::hipDeviceAttributeManagedMemory), Ok(1));
        assert_eq!(a(A::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor), Ok(65536));
        for bad in [
            A::hipDeviceAttributeUnused1,
            A::hipDeviceAttributeUnused5,
            A::hipDeviceAttributeCudaCompatibleEnd,
            A::hipDeviceAttributeAmdSpecificEnd,
            A::hipDeviceAttributeVendorSpecificBegin,
            A::hipDeviceAttributeHdpMemFlushCntl,
            A::hipDeviceAttributeMaxTexture2DGather,
            A::hipDeviceAttributeLuid,
            hipDeviceAttribute_t(-1),
            hipDeviceAttribute_t(5000),
        ] {
            assert_eq!(a(bad), Err(hipError_t::hipErrorInvalidValue), "{bad:?}");
        }
        // Every defined, non-reserved single-valued attribute answers.
        let mut answered = 0;
        for (n, v) in hipDeviceAttribute_t::ENUMERATORS {
            if a(*v).is_ok() {
                answered += 1;
            } else {
                assert!(
                    n.contains("Unused")
                        || n.ends_with("End")
                        || n.ends_with("Begin") && v.0 != 0 && v.0 != 10000
                        || [
                            "Luid",
                            "Surface1DLayered",
                            "Surface2D",
                            "Surface2DLayered",
                            "Surface3D",
                            "SurfaceCubemapLayered",
                            "Texture1DLayered",
                            "Texture2DGather",
                            "Texture2DLayered",
                            "Texture2DLinear",
                            "Texture2DMipmap",
                            "Texture3DAlt",
                            "TextureCubemapLayered",
                            "ThreadsDim",
                            "HdpMemFlushCntl",
                            "HdpRegFlushCntl",
                        ]
                        .iter()
                        .any(|s| n.ends_with(&format!("Attribute{s}")) || n.ends_with(&format!("AttributeMax{s}"))),
                    "{n} unexpectedly unsupported"
                );
            }
        }
        assert!(answered > 80, "{answered}");
    }
}
