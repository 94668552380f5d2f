//! The GPUs the model presents, as the model needs them (read from the session topology).

use std::sync::OnceLock;

/// What the model needs to know about one simulated GPU.
#[derive(Debug, Clone)]
pub struct GpuInfo {
    pub node_id: u32,
    pub gpu_id: u32,
    pub gfx_target_version: u32,
    pub device_id: u32,
    pub vram_size: u64,
    pub large_bar: bool,
    pub drm_render_minor: u32,
    pub num_sdma_engines: u32,
    pub num_sdma_xgmi_engines: u32,
    pub num_sdma_queues_per_engine: u32,
    pub simd_count: u32,
    pub max_engine_clk_fcompute: u32,
    pub pci_bdf: String,
    pub unique_id: u64,
    /// xGMI hive (`adev->gmc.xgmi.hive_id`); 0: none.
    pub hive_id: u64,
    /// Compute-queue buffer sizes (`kfd_queue_ctx_save_restore_size`).
    pub queue_sizes: Option<crate::topology::QueueSizes>,
    pub num_xcc: u32,
    /// AMDGPU_INFO_RAS_ENABLED_FEATURES ([`crate::topology::Gpu::ras_enabled_features`]).
    pub ras_enabled_features: Option<u64>,
    /// The topology's `num_gws` (`adev->gds.gws_size`); 0: no GWS (`dev->gws` NULL).
    pub num_gws: u32,
    /// The GPU's GWS resources (`dev->gws`): the state of their semaphores, kept across
    /// dispatches; ALLOC_QUEUE_GWS hands them to one queue, whose dispatches use them.
    pub gws: std::sync::Arc<amdgcn_isa::Gws>,
}

impl GpuInfo {
    /// Every SDMA engine, PCIe and xGMI (`adev->sdma.num_instances`): the engine ids of
    /// SDMA_BY_ENG_ID queues and the DMA rings of command submission.
    pub fn sdma_engines(&self) -> u32 {
        self.num_sdma_engines + self.num_sdma_xgmi_engines
    }
}

static GPUS: OnceLock<Vec<GpuInfo>> = OnceLock::new();

fn load() -> Vec<GpuInfo> {
    crate::topology::current()
        .gpus
        .iter()
        .map(|g| GpuInfo {
            node_id: g.node_id,
            gpu_id: g.gpu_id,
            gfx_target_version: g.gfx_target_version,
            device_id: g.device_id,
            vram_size: g.vram_size,
            large_bar: g.large_bar,
            drm_render_minor: g.drm_render_minor,
            num_sdma_engines: g.num_sdma_engines,
            num_sdma_xgmi_engines: g.num_sdma_xgmi_engines,
            num_sdma_queues_per_engine: g.num_sdma_queues_per_engine,
            simd_count: g.simd_count,
            max_engine_clk_fcompute: g.max_engine_clk_fcompute,
            pci_bdf: g.pci_bdf.clone(),
            unique_id: g.unique_id,
            hive_id: g.hive_id,
            queue_sizes: g.queue_sizes(),
            num_xcc: g.num_xcc,
            ras_enabled_features: g.ras_enabled_features(),
            num_gws: g.num_gws,
            gws: Default::default(),
        })
        .collect()
}

/// All GPUs, in KFD node order.
pub fn all() -> &'static [GpuInfo] {
    GPUS.get_or_init(load)
}

/// `kfd_device_by_id`.
pub fn by_id(gpu_id: u32) -> Option<&'static GpuInfo> {
    all().iter().find(|g| g.gpu_id == gpu_id)
}

/// Index of GPU `gpu_id` in topology order, if it is among the first `max` (the slots of a
/// per-GPU table shared across processes).
pub fn index_below(gpu_id: u32, max: usize) -> Option<usize> {
    all().iter().position(|g| g.gpu_id == gpu_id).filter(|&i| i < max)
}

/// The GPU behind render minor `minor`.
pub fn by_minor(minor: u32) -> Option<&'static GpuInfo> {
    all().iter().find(|g| g.drm_render_minor == minor)
}

/// `KFD_SUPPORT_XNACK_PER_PROCESS`-style check: gfx90a (9.0.10) and gfx94x support per-process
/// XNACK; other gfx9 parts depend on `noretry`, which defaults to on (XNACK off).
pub fn supports_xnack(g: &GpuInfo) -> bool {
    matches!(g.gfx_target_version, 90010 | 90400..=90499)
}

/// `svm_nodes_in_same_hive`: the same GPU, or two in one xGMI hive.
pub fn same_hive(a: &GpuInfo, b: &GpuInfo) -> bool {
    a.gpu_id == b.gpu_id || (a.hive_id != 0 && a.hive_id == b.hive_id)
}
