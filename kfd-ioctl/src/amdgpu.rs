//! amdgpu render-node uapi: upstream `include/uapi/drm/amdgpu_drm.h` (libdrm 2.4.114 copy), the
//! part that KFD userspace (libhsakmt, ROCr, libdrm_amdgpu) and our runtime use.
#![allow(non_camel_case_types)]

use crate::kfd::Ioctl;
use core::fmt;
use core::mem::size_of;
use nix::{request_code_readwrite, request_code_write};

/// `DRM_COMMAND_BASE`: driver ioctls start here.
pub const DRM_COMMAND_BASE: u8 = 0x40;

pub const DRM_AMDGPU_GEM_CREATE: u8 = 0x00;
pub const DRM_AMDGPU_GEM_MMAP: u8 = 0x01;
pub const DRM_AMDGPU_CTX: u8 = 0x02;
pub const DRM_AMDGPU_BO_LIST: u8 = 0x03;
pub const DRM_AMDGPU_CS: u8 = 0x04;
pub const DRM_AMDGPU_INFO: u8 = 0x05;
pub const DRM_AMDGPU_GEM_METADATA: u8 = 0x06;
pub const DRM_AMDGPU_GEM_WAIT_IDLE: u8 = 0x07;
pub const DRM_AMDGPU_GEM_VA: u8 = 0x08;
pub const DRM_AMDGPU_WAIT_CS: u8 = 0x09;
pub const DRM_AMDGPU_GEM_OP: u8 = 0x10;
pub const DRM_AMDGPU_GEM_USERPTR: u8 = 0x11;

pub const AMDGPU_GEM_DOMAIN_CPU: u64 = 0x1;
pub const AMDGPU_GEM_DOMAIN_GTT: u64 = 0x2;
pub const AMDGPU_GEM_DOMAIN_VRAM: u64 = 0x4;
pub const AMDGPU_GEM_DOMAIN_GDS: u64 = 0x8;
pub const AMDGPU_GEM_DOMAIN_GWS: u64 = 0x10;
pub const AMDGPU_GEM_DOMAIN_OA: u64 = 0x20;
pub const AMDGPU_GEM_DOMAIN_MASK: u64 = 0x3f;

pub const AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED: u64 = 1 << 0;
pub const AMDGPU_GEM_CREATE_NO_CPU_ACCESS: u64 = 1 << 1;
pub const AMDGPU_GEM_CREATE_CPU_GTT_USWC: u64 = 1 << 2;
pub const AMDGPU_GEM_CREATE_VRAM_CLEARED: u64 = 1 << 3;
pub const AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS: u64 = 1 << 5;
pub const AMDGPU_GEM_CREATE_VM_ALWAYS_VALID: u64 = 1 << 6;
pub const AMDGPU_GEM_CREATE_EXPLICIT_SYNC: u64 = 1 << 7;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_create_in {
    /// Bytes.
    pub bo_size: u64,
    /// Bytes.
    pub alignment: u64,
    /// `AMDGPU_GEM_DOMAIN_*`.
    pub domains: u64,
    /// `AMDGPU_GEM_CREATE_*`.
    pub domain_flags: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_create_out {
    pub handle: u32,
    pub _pad: u32,
}

/// `union drm_amdgpu_gem_create`: `in_` before the ioctl, `out` after.
#[repr(C)]
#[derive(Clone, Copy)]
pub union drm_amdgpu_gem_create {
    pub in_: drm_amdgpu_gem_create_in,
    pub out: drm_amdgpu_gem_create_out,
}

impl drm_amdgpu_gem_create {
    pub fn new(in_: drm_amdgpu_gem_create_in) -> Self {
        Self { in_ }
    }
    pub fn input(&self) -> drm_amdgpu_gem_create_in {
        // SAFETY: every bit pattern of the union's 32 bytes is a valid `drm_amdgpu_gem_create_in`.
        unsafe { self.in_ }
    }
    pub fn output(&self) -> drm_amdgpu_gem_create_out {
        // SAFETY: plain integers; any bit pattern is valid.
        unsafe { self.out }
    }
}

impl Default for drm_amdgpu_gem_create {
    fn default() -> Self {
        Self::new(Default::default())
    }
}

impl fmt::Debug for drm_amdgpu_gem_create {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} / {:?}", self.input(), self.output())
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_mmap_in {
    pub handle: u32,
    pub _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_mmap_out {
    /// The fake offset to pass to `mmap(render_fd)`.
    pub addr_ptr: u64,
}

/// `union drm_amdgpu_gem_mmap`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union drm_amdgpu_gem_mmap {
    pub in_: drm_amdgpu_gem_mmap_in,
    pub out: drm_amdgpu_gem_mmap_out,
}

impl drm_amdgpu_gem_mmap {
    pub fn new(handle: u32) -> Self {
        Self { in_: drm_amdgpu_gem_mmap_in { handle, _pad: 0 } }
    }
    pub fn input(&self) -> drm_amdgpu_gem_mmap_in {
        // SAFETY: plain integers; any bit pattern is valid.
        unsafe { self.in_ }
    }
    pub fn output(&self) -> drm_amdgpu_gem_mmap_out {
        // SAFETY: plain integers; any bit pattern is valid.
        unsafe { self.out }
    }
}

impl Default for drm_amdgpu_gem_mmap {
    fn default() -> Self {
        Self::new(0)
    }
}

impl fmt::Debug for drm_amdgpu_gem_mmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} / {:?}", self.input(), self.output())
    }
}

pub const AMDGPU_GEM_METADATA_OP_SET_METADATA: u32 = 1;
pub const AMDGPU_GEM_METADATA_OP_GET_METADATA: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct drm_amdgpu_gem_metadata_data {
    pub flags: u64,
    pub tiling_info: u64,
    /// Bytes used in `data` (at most 256).
    pub data_size_bytes: u32,
    pub data: [u32; 64],
}

impl Default for drm_amdgpu_gem_metadata_data {
    fn default() -> Self {
        Self { flags: 0, tiling_info: 0, data_size_bytes: 0, data: [0; 64] }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_metadata {
    pub handle: u32,
    /// `AMDGPU_GEM_METADATA_OP_*`.
    pub op: u32,
    pub data: drm_amdgpu_gem_metadata_data,
}

pub const AMDGPU_VA_OP_MAP: u32 = 1;
pub const AMDGPU_VA_OP_UNMAP: u32 = 2;
pub const AMDGPU_VA_OP_CLEAR: u32 = 3;
pub const AMDGPU_VA_OP_REPLACE: u32 = 4;

pub const AMDGPU_VM_DELAY_UPDATE: u32 = 1 << 0;
pub const AMDGPU_VM_PAGE_READABLE: u32 = 1 << 1;
pub const AMDGPU_VM_PAGE_WRITEABLE: u32 = 1 << 2;
pub const AMDGPU_VM_PAGE_EXECUTABLE: u32 = 1 << 3;
pub const AMDGPU_VM_PAGE_PRT: u32 = 1 << 4;

/// `DRM_IOCTL_AMDGPU_GEM_VA` (libdrm 2.4.114 layout, 40 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_va {
    pub handle: u32,
    pub _pad: u32,
    /// `AMDGPU_VA_OP_*`.
    pub operation: u32,
    /// `AMDGPU_VM_PAGE_*`.
    pub flags: u32,
    pub va_address: u64,
    /// Bytes.
    pub offset_in_bo: u64,
    /// Bytes.
    pub map_size: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_userptr {
    pub addr: u64,
    pub size: u64,
    pub flags: u32,
    pub handle: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_gem_op {
    pub handle: u32,
    pub op: u32,
    pub value: u64,
}

/// `DRM_IOCTL_AMDGPU_BO_LIST` in (`union drm_amdgpu_bo_list`, 24 bytes; out: `list_handle` at 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_bo_list_in {
    /// `AMDGPU_BO_LIST_OP_*`.
    pub operation: u32,
    pub list_handle: u32,
    pub bo_number: u32,
    /// Bytes per entry at `bo_info_ptr`.
    pub bo_info_size: u32,
    pub bo_info_ptr: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_bo_list_entry {
    pub bo_handle: u32,
    pub bo_priority: u32,
}

pub const AMDGPU_CTX_OP_ALLOC_CTX: u32 = 1;
pub const AMDGPU_CTX_OP_FREE_CTX: u32 = 2;
pub const AMDGPU_CTX_OP_QUERY_STATE: u32 = 3;
pub const AMDGPU_CTX_OP_QUERY_STATE2: u32 = 4;

pub const AMDGPU_BO_LIST_OP_CREATE: u32 = 0;
pub const AMDGPU_BO_LIST_OP_DESTROY: u32 = 1;
pub const AMDGPU_BO_LIST_OP_UPDATE: u32 = 2;

/// `DRM_IOCTL_AMDGPU_CS` in (`union drm_amdgpu_cs`, 24 bytes; out: the sequence number `handle`,
/// a u64 at 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_in {
    pub ctx_id: u32,
    pub bo_list_handle: u32,
    pub num_chunks: u32,
    pub flags: u32,
    /// User address of `num_chunks` u64 pointers, each to a [`drm_amdgpu_cs_chunk`].
    pub chunks: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_chunk {
    /// `AMDGPU_CHUNK_ID_*`.
    pub chunk_id: u32,
    pub length_dw: u32,
    pub chunk_data: u64,
}

pub const AMDGPU_CHUNK_ID_IB: u32 = 0x01;
pub const AMDGPU_CHUNK_ID_FENCE: u32 = 0x02;
pub const AMDGPU_CHUNK_ID_DEPENDENCIES: u32 = 0x03;
pub const AMDGPU_CHUNK_ID_SYNCOBJ_IN: u32 = 0x04;
pub const AMDGPU_CHUNK_ID_SYNCOBJ_OUT: u32 = 0x05;
pub const AMDGPU_CHUNK_ID_BO_HANDLES: u32 = 0x06;
pub const AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES: u32 = 0x07;
pub const AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT: u32 = 0x08;
pub const AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL: u32 = 0x09;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_chunk_ib {
    pub _pad: u32,
    /// `AMDGPU_IB_FLAG_*`.
    pub flags: u32,
    /// GPU VA of the IB.
    pub va_start: u64,
    pub ib_bytes: u32,
    /// `AMDGPU_HW_IP_*`.
    pub ip_type: u32,
    pub ip_instance: u32,
    pub ring: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_chunk_dep {
    pub ip_type: u32,
    pub ip_instance: u32,
    pub ring: u32,
    pub ctx_id: u32,
    /// Sequence number of the submission waited for.
    pub handle: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_chunk_fence {
    /// GEM handle of a one-page BO; the sequence number (u64) lands at `offset`.
    pub handle: u32,
    pub offset: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_chunk_sem {
    pub handle: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_cs_chunk_syncobj {
    pub handle: u32,
    pub flags: u32,
    pub point: u64,
}

/// `DRM_IOCTL_AMDGPU_WAIT_CS` in (`union drm_amdgpu_wait_cs`, 32 bytes; out: `status`, a u64 at
/// 0: 0 signaled, 1 still busy at the timeout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_wait_cs_in {
    /// Sequence number from CS.
    pub handle: u64,
    /// Absolute CLOCK_MONOTONIC ns (`amdgpu_gem_timeout`); `u64::MAX`: forever.
    pub timeout: u64,
    pub ip_type: u32,
    pub ip_instance: u32,
    pub ring: u32,
    pub ctx_id: u32,
}

pub const AMDGPU_HW_IP_GFX: u32 = 0;
pub const AMDGPU_HW_IP_COMPUTE: u32 = 1;
pub const AMDGPU_HW_IP_DMA: u32 = 2;
pub const AMDGPU_HW_IP_UVD: u32 = 3;
pub const AMDGPU_HW_IP_VCE: u32 = 4;
pub const AMDGPU_HW_IP_UVD_ENC: u32 = 5;
pub const AMDGPU_HW_IP_VCN_DEC: u32 = 6;
pub const AMDGPU_HW_IP_VCN_ENC: u32 = 7;
pub const AMDGPU_HW_IP_VCN_JPEG: u32 = 8;
pub const AMDGPU_HW_IP_NUM: u32 = 9;

pub const AMDGPU_IDS_FLAGS_FUSION: u64 = 0x1;
pub const AMDGPU_IDS_FLAGS_PREEMPTION: u64 = 0x2;
pub const AMDGPU_IDS_FLAGS_TMZ: u64 = 0x4;

pub const AMDGPU_INFO_ACCEL_WORKING: u32 = 0x00;
pub const AMDGPU_INFO_CRTC_FROM_ID: u32 = 0x01;
pub const AMDGPU_INFO_HW_IP_INFO: u32 = 0x02;
pub const AMDGPU_INFO_HW_IP_COUNT: u32 = 0x03;
pub const AMDGPU_INFO_TIMESTAMP: u32 = 0x05;
pub const AMDGPU_INFO_FW_VERSION: u32 = 0x0e;
pub const AMDGPU_INFO_NUM_BYTES_MOVED: u32 = 0x0f;
pub const AMDGPU_INFO_VRAM_USAGE: u32 = 0x10;
pub const AMDGPU_INFO_GTT_USAGE: u32 = 0x11;
pub const AMDGPU_INFO_GDS_CONFIG: u32 = 0x13;
pub const AMDGPU_INFO_VRAM_GTT: u32 = 0x14;
pub const AMDGPU_INFO_READ_MMR_REG: u32 = 0x15;
pub const AMDGPU_INFO_DEV_INFO: u32 = 0x16;
pub const AMDGPU_INFO_VIS_VRAM_USAGE: u32 = 0x17;
pub const AMDGPU_INFO_NUM_EVICTIONS: u32 = 0x18;
pub const AMDGPU_INFO_MEMORY: u32 = 0x19;
pub const AMDGPU_INFO_VBIOS: u32 = 0x1b;
pub const AMDGPU_INFO_NUM_HANDLES: u32 = 0x1c;
pub const AMDGPU_INFO_SENSOR: u32 = 0x1d;
pub const AMDGPU_INFO_VRAM_LOST_COUNTER: u32 = 0x1f;
pub const AMDGPU_INFO_RAS_ENABLED_FEATURES: u32 = 0x20;
pub const AMDGPU_INFO_VIDEO_CAPS: u32 = 0x21;

pub const AMDGPU_INFO_FW_GMC: u32 = 0x03;
pub const AMDGPU_INFO_FW_GFX_ME: u32 = 0x04;
pub const AMDGPU_INFO_FW_GFX_PFP: u32 = 0x05;
pub const AMDGPU_INFO_FW_GFX_CE: u32 = 0x06;
pub const AMDGPU_INFO_FW_GFX_RLC: u32 = 0x07;
pub const AMDGPU_INFO_FW_GFX_MEC: u32 = 0x08;
pub const AMDGPU_INFO_FW_SMC: u32 = 0x0a;
pub const AMDGPU_INFO_FW_SDMA: u32 = 0x0b;

/// `struct drm_amdgpu_query_fw`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_query_fw {
    pub fw_type: u32,
    pub ip_instance: u32,
    pub index: u32,
    pub _pad: u32,
}

/// `DRM_IOCTL_AMDGPU_INFO` (32 bytes). The kernel's anonymous union of per-query arguments
/// (`query_hw_ip`, `read_mmr_reg`, `query_fw`, ...) is `query_args`, four u32s; the accessors
/// give it the names of its members.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_info {
    /// User pointer the answer is written to.
    pub return_pointer: u64,
    /// Bytes available at `return_pointer`.
    pub return_size: u32,
    /// `AMDGPU_INFO_*`.
    pub query: u32,
    pub query_args: [u32; 4],
}

impl drm_amdgpu_info {
    /// `query_hw_ip.{type, ip_instance}`.
    pub fn query_hw_ip(&self) -> (u32, u32) {
        (self.query_args[0], self.query_args[1])
    }
    /// `query_fw` (`AMDGPU_INFO_FW_VERSION`).
    pub fn query_fw(&self) -> drm_amdgpu_query_fw {
        let a = self.query_args;
        drm_amdgpu_query_fw { fw_type: a[0], ip_instance: a[1], index: a[2], _pad: a[3] }
    }
    /// `read_mmr_reg.{dword_offset, count, instance, flags}`.
    pub fn read_mmr_reg(&self) -> [u32; 4] {
        self.query_args
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_info_vram_gtt {
    pub vram_size: u64,
    pub vram_cpu_accessible_size: u64,
    pub gtt_size: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_heap_info {
    pub total_heap_size: u64,
    pub usable_heap_size: u64,
    pub heap_usage: u64,
    pub max_allocation: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_memory_info {
    pub vram: drm_amdgpu_heap_info,
    pub cpu_accessible_vram: drm_amdgpu_heap_info,
    pub gtt: drm_amdgpu_heap_info,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_info_firmware {
    pub ver: u32,
    pub feature: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_info_hw_ip {
    pub hw_ip_version_major: u32,
    pub hw_ip_version_minor: u32,
    pub capabilities_flags: u64,
    pub ib_start_alignment: u32,
    pub ib_size_alignment: u32,
    pub available_rings: u32,
    pub _pad: u32,
}

/// `AMDGPU_INFO_DEV_INFO` answer (libdrm 2.4.114 layout; newer kernels append fields and copy
/// `min(return_size, sizeof)`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct drm_amdgpu_info_device {
    pub device_id: u32,
    pub chip_rev: u32,
    pub external_rev: u32,
    pub pci_rev: u32,
    pub family: u32,
    pub num_shader_engines: u32,
    pub num_shader_arrays_per_engine: u32,
    /// kHz.
    pub gpu_counter_freq: u32,
    /// kHz.
    pub max_engine_clock: u64,
    /// kHz.
    pub max_memory_clock: u64,
    pub cu_active_number: u32,
    pub cu_ao_mask: u32,
    pub cu_bitmap: [[u32; 4]; 4],
    pub enabled_rb_pipes_mask: u32,
    pub num_rb_pipes: u32,
    pub num_hw_gfx_contexts: u32,
    pub _pad: u32,
    pub ids_flags: u64,
    pub virtual_address_offset: u64,
    pub virtual_address_max: u64,
    pub virtual_address_alignment: u32,
    pub pte_fragment_size: u32,
    pub gart_page_size: u32,
    pub ce_ram_size: u32,
    pub vram_type: u32,
    pub vram_bit_width: u32,
    pub vce_harvest_config: u32,
    pub gc_double_offchip_lds_buf: u32,
    pub prim_buf_gpu_addr: u64,
    pub pos_buf_gpu_addr: u64,
    pub cntl_sb_buf_gpu_addr: u64,
    pub param_buf_gpu_addr: u64,
    pub prim_buf_size: u32,
    pub pos_buf_size: u32,
    pub cntl_sb_buf_size: u32,
    pub param_buf_size: u32,
    pub wave_front_size: u32,
    pub num_shader_visible_vgprs: u32,
    pub num_cu_per_sh: u32,
    pub num_tcc_blocks: u32,
    pub gs_vgt_table_depth: u32,
    pub gs_prim_buffer_depth: u32,
    pub max_gs_waves_per_vgt: u32,
    pub _pad1: u32,
    pub cu_ao_bitmap: [[u32; 4]; 4],
    pub high_va_offset: u64,
    pub high_va_max: u64,
    pub pa_sc_tile_steering_override: u32,
    pub tcc_disabled_mask: u64,
}

/// `AMDGPU_FAMILY_AI` (Vega, gfx9 incl. gfx90a).
pub const AMDGPU_FAMILY_AI: u32 = 141;
pub const AMDGPU_VRAM_TYPE_HBM: u32 = 6;

const D: u8 = b'd';
const B: u8 = DRM_COMMAND_BASE;
const fn sz<T>() -> usize {
    size_of::<T>()
}

pub const DRM_IOCTL_AMDGPU_GEM_CREATE: Ioctl =
    request_code_readwrite!(D, B + DRM_AMDGPU_GEM_CREATE, sz::<drm_amdgpu_gem_create>());
pub const DRM_IOCTL_AMDGPU_GEM_MMAP: Ioctl =
    request_code_readwrite!(D, B + DRM_AMDGPU_GEM_MMAP, sz::<drm_amdgpu_gem_mmap>());
/// `union drm_amdgpu_ctx` is 16 bytes.
pub const DRM_IOCTL_AMDGPU_CTX: Ioctl = request_code_readwrite!(D, B + DRM_AMDGPU_CTX, 16);
pub const DRM_IOCTL_AMDGPU_BO_LIST: Ioctl =
    request_code_readwrite!(D, B + DRM_AMDGPU_BO_LIST, sz::<drm_amdgpu_bo_list_in>());
pub const DRM_IOCTL_AMDGPU_CS: Ioctl = request_code_readwrite!(D, B + DRM_AMDGPU_CS, sz::<drm_amdgpu_cs_in>());
pub const DRM_IOCTL_AMDGPU_WAIT_CS: Ioctl =
    request_code_readwrite!(D, B + DRM_AMDGPU_WAIT_CS, sz::<drm_amdgpu_wait_cs_in>());
pub const DRM_IOCTL_AMDGPU_INFO: Ioctl = request_code_write!(D, B + DRM_AMDGPU_INFO, sz::<drm_amdgpu_info>());
pub const DRM_IOCTL_AMDGPU_GEM_METADATA: Ioctl =
    request_code_readwrite!(D, B + DRM_AMDGPU_GEM_METADATA, sz::<drm_amdgpu_gem_metadata>());
pub const DRM_IOCTL_AMDGPU_GEM_VA: Ioctl = request_code_write!(D, B + DRM_AMDGPU_GEM_VA, sz::<drm_amdgpu_gem_va>());
pub const DRM_IOCTL_AMDGPU_GEM_OP: Ioctl = request_code_readwrite!(D, B + DRM_AMDGPU_GEM_OP, sz::<drm_amdgpu_gem_op>());
pub const DRM_IOCTL_AMDGPU_GEM_USERPTR: Ioctl =
    request_code_readwrite!(D, B + DRM_AMDGPU_GEM_USERPTR, sz::<drm_amdgpu_gem_userptr>());

/// Every amdgpu request number this crate defines, with its uapi name.
pub const AMDGPU_IOCTLS: &[(Ioctl, &str)] = &[
    (DRM_IOCTL_AMDGPU_GEM_CREATE, "DRM_IOCTL_AMDGPU_GEM_CREATE"),
    (DRM_IOCTL_AMDGPU_GEM_MMAP, "DRM_IOCTL_AMDGPU_GEM_MMAP"),
    (DRM_IOCTL_AMDGPU_CTX, "DRM_IOCTL_AMDGPU_CTX"),
    (DRM_IOCTL_AMDGPU_BO_LIST, "DRM_IOCTL_AMDGPU_BO_LIST"),
    (DRM_IOCTL_AMDGPU_CS, "DRM_IOCTL_AMDGPU_CS"),
    (DRM_IOCTL_AMDGPU_WAIT_CS, "DRM_IOCTL_AMDGPU_WAIT_CS"),
    (DRM_IOCTL_AMDGPU_INFO, "DRM_IOCTL_AMDGPU_INFO"),
    (DRM_IOCTL_AMDGPU_GEM_METADATA, "DRM_IOCTL_AMDGPU_GEM_METADATA"),
    (DRM_IOCTL_AMDGPU_GEM_VA, "DRM_IOCTL_AMDGPU_GEM_VA"),
    (DRM_IOCTL_AMDGPU_GEM_OP, "DRM_IOCTL_AMDGPU_GEM_OP"),
    (DRM_IOCTL_AMDGPU_GEM_USERPTR, "DRM_IOCTL_AMDGPU_GEM_USERPTR"),
];
