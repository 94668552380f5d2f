//! `/dev/kfd` uapi: upstream `include/uapi/linux/kfd_ioctl.h` at KFD ioctl version 1.17.
//!
//! Struct, field and constant names are the kernel's. Items newer than Debian bookworm's header
//! (1.11) are marked with the version that added them.
#![allow(non_camel_case_types, non_snake_case)]

use core::mem::size_of;
use nix::{request_code_read, request_code_readwrite, request_code_write};

/// An ioctl request number, as `ioctl(2)` takes it.
pub type Ioctl = libc::c_ulong;

pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;
pub const KFD_IOCTL_MINOR_VERSION: u32 = 17;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_version_args {
    pub major_version: u32,
    pub minor_version: u32,
}

pub const KFD_IOC_QUEUE_TYPE_COMPUTE: u32 = 0x0;
pub const KFD_IOC_QUEUE_TYPE_SDMA: u32 = 0x1;
pub const KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: u32 = 0x2;
pub const KFD_IOC_QUEUE_TYPE_SDMA_XGMI: u32 = 0x3;
/// KFD 1.17.
pub const KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: u32 = 0x4;

pub const KFD_MAX_QUEUE_PERCENTAGE: u32 = 100;
pub const KFD_MAX_QUEUE_PRIORITY: u32 = 15;
/// Bytes.
pub const KFD_MIN_QUEUE_RING_SIZE: u32 = 1024;

/// `AMDKFD_IOC_CREATE_QUEUE`. 96 bytes since KFD 1.17 (`sdma_engine_id`), 88 before.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_create_queue_args {
    pub ring_base_address: u64,
    pub write_pointer_address: u64,
    pub read_pointer_address: u64,
    pub doorbell_offset: u64,
    pub ring_size: u32,
    pub gpu_id: u32,
    pub queue_type: u32,
    pub queue_percentage: u32,
    pub queue_priority: u32,
    pub queue_id: u32,
    pub eop_buffer_address: u64,
    pub eop_buffer_size: u64,
    pub ctx_save_restore_address: u64,
    pub ctx_save_restore_size: u32,
    pub ctl_stack_size: u32,
    /// KFD 1.17.
    pub sdma_engine_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_destroy_queue_args {
    pub queue_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_update_queue_args {
    pub ring_base_address: u64,
    pub queue_id: u32,
    pub ring_size: u32,
    pub queue_percentage: u32,
    pub queue_priority: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_set_cu_mask_args {
    pub queue_id: u32,
    pub num_cu_mask: u32,
    pub cu_mask_ptr: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_queue_wave_state_args {
    pub ctl_stack_address: u64,
    pub ctl_stack_used_size: u32,
    pub save_area_used_size: u32,
    pub queue_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_available_memory_args {
    /// Bytes.
    pub available: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

pub const KFD_IOC_CACHE_POLICY_COHERENT: u32 = 0;
pub const KFD_IOC_CACHE_POLICY_NONCOHERENT: u32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_set_memory_policy_args {
    pub alternate_aperture_base: u64,
    pub alternate_aperture_size: u64,
    pub gpu_id: u32,
    pub default_policy: u32,
    pub alternate_policy: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_clock_counters_args {
    pub gpu_clock_counter: u64,
    pub cpu_clock_counter: u64,
    pub system_clock_counter: u64,
    /// Hz.
    pub system_clock_freq: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

/// One element of the array `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW` fills (56 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_process_device_apertures {
    pub lds_base: u64,
    pub lds_limit: u64,
    pub scratch_base: u64,
    pub scratch_limit: u64,
    pub gpuvm_base: u64,
    pub gpuvm_limit: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

pub const NUM_OF_SUPPORTED_GPUS: usize = 7;

/// Deprecated `AMDKFD_IOC_GET_PROCESS_APERTURES`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_process_apertures_args {
    pub process_apertures: [kfd_process_device_apertures; NUM_OF_SUPPORTED_GPUS],
    pub num_of_nodes: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_process_apertures_new_args {
    /// User pointer to `num_of_nodes` × [`kfd_process_device_apertures`].
    pub kfd_process_device_apertures_ptr: u64,
    /// In: array length (0 asks for the count). Out: entries filled.
    pub num_of_nodes: u32,
    pub pad: u32,
}

pub const KFD_INVALID_FD: u32 = 0xffff_ffff;

pub const KFD_IOC_EVENT_SIGNAL: u32 = 0;
pub const KFD_IOC_EVENT_NODECHANGE: u32 = 1;
pub const KFD_IOC_EVENT_DEVICESTATECHANGE: u32 = 2;
pub const KFD_IOC_EVENT_HW_EXCEPTION: u32 = 3;
pub const KFD_IOC_EVENT_SYSTEM_EVENT: u32 = 4;
pub const KFD_IOC_EVENT_DEBUG_EVENT: u32 = 5;
pub const KFD_IOC_EVENT_PROFILE_EVENT: u32 = 6;
pub const KFD_IOC_EVENT_QUEUE_EVENT: u32 = 7;
pub const KFD_IOC_EVENT_MEMORY: u32 = 8;

pub const KFD_IOC_WAIT_RESULT_COMPLETE: u32 = 0;
pub const KFD_IOC_WAIT_RESULT_TIMEOUT: u32 = 1;
pub const KFD_IOC_WAIT_RESULT_FAIL: u32 = 2;

/// Signal event slots per process; the event page is `KFD_SIGNAL_EVENT_LIMIT * 8` bytes.
pub const KFD_SIGNAL_EVENT_LIMIT: u32 = 4096;
/// Value of an unsignalled slot in the event page (`kfd_events.c`, `UNSIGNALED_EVENT_SLOT`).
pub const UNSIGNALED_EVENT_SLOT: u64 = u64::MAX;
/// `timeout` of `AMDKFD_IOC_WAIT_EVENTS` that never expires (`KFD_EVENT_TIMEOUT_INFINITE`).
pub const KFD_EVENT_TIMEOUT_INFINITE: u32 = 0xffff_ffff;
pub const KFD_EVENT_TIMEOUT_IMMEDIATE: u32 = 0;

pub const KFD_HW_EXCEPTION_WHOLE_GPU_RESET: u32 = 0;
pub const KFD_HW_EXCEPTION_PER_ENGINE_RESET: u32 = 1;
pub const KFD_HW_EXCEPTION_GPU_HANG: u32 = 0;
pub const KFD_HW_EXCEPTION_ECC: u32 = 1;
pub const KFD_MEM_ERR_NO_RAS: u32 = 0;
pub const KFD_MEM_ERR_SRAM_ECC: u32 = 1;
pub const KFD_MEM_ERR_POISON_CONSUMED: u32 = 2;
pub const KFD_MEM_ERR_GPU_HANG: u32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_create_event_args {
    /// In (dGPU, first signal event): KFD handle of the user's event-page BO. Out: mmap offset.
    pub event_page_offset: u64,
    pub event_trigger_data: u32,
    pub event_type: u32,
    pub auto_reset: u32,
    pub node_id: u32,
    pub event_id: u32,
    pub event_slot_index: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_destroy_event_args {
    pub event_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_set_event_args {
    pub event_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_reset_event_args {
    pub event_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_memory_exception_failure {
    pub NotPresent: u32,
    pub ReadOnly: u32,
    pub NoExecute: u32,
    pub imprecise: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_hsa_memory_exception_data {
    pub failure: kfd_memory_exception_failure,
    pub va: u64,
    pub gpu_id: u32,
    pub ErrorType: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_hsa_hw_exception_data {
    pub reset_type: u32,
    pub reset_cause: u32,
    pub memory_lost: u32,
    pub gpu_id: u32,
}

/// One element of the `AMDKFD_IOC_WAIT_EVENTS` array (48 bytes). The kernel's anonymous union of
/// [`kfd_hsa_memory_exception_data`] and [`kfd_hsa_hw_exception_data`] is `payload`; read it with
/// the accessors.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_event_data {
    pub payload: [u64; 4],
    pub kfd_event_data_ext: u64,
    pub event_id: u32,
    pub pad: u32,
}

impl kfd_event_data {
    /// The union viewed as `memory_exception_data`.
    pub fn memory_exception_data(&self) -> kfd_hsa_memory_exception_data {
        let p = &self.payload;
        kfd_hsa_memory_exception_data {
            failure: kfd_memory_exception_failure {
                NotPresent: p[0] as u32,
                ReadOnly: (p[0] >> 32) as u32,
                NoExecute: p[1] as u32,
                imprecise: (p[1] >> 32) as u32,
            },
            va: p[2],
            gpu_id: p[3] as u32,
            ErrorType: (p[3] >> 32) as u32,
        }
    }

    /// Stores `d` in the union.
    pub fn set_memory_exception_data(&mut self, d: &kfd_hsa_memory_exception_data) {
        let f = &d.failure;
        self.payload = [
            f.NotPresent as u64 | (f.ReadOnly as u64) << 32,
            f.NoExecute as u64 | (f.imprecise as u64) << 32,
            d.va,
            d.gpu_id as u64 | (d.ErrorType as u64) << 32,
        ];
    }

    /// The union viewed as `hw_exception_data`.
    pub fn hw_exception_data(&self) -> kfd_hsa_hw_exception_data {
        let p = &self.payload;
        kfd_hsa_hw_exception_data {
            reset_type: p[0] as u32,
            reset_cause: (p[0] >> 32) as u32,
            memory_lost: p[1] as u32,
            gpu_id: (p[1] >> 32) as u32,
        }
    }

    /// `signal_event_data.last_event_age` (KFD 1.14 event age; shares the union's first u64).
    pub fn last_event_age(&self) -> u64 {
        self.payload[0]
    }

    /// Stores `signal_event_data.last_event_age`.
    pub fn set_last_event_age(&mut self, age: u64) {
        self.payload[0] = age;
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_wait_events_args {
    /// User pointer to `num_events` × [`kfd_event_data`].
    pub events_ptr: u64,
    pub num_events: u32,
    pub wait_for_all: u32,
    /// Milliseconds; [`KFD_EVENT_TIMEOUT_INFINITE`] never expires, 0 only tests.
    pub timeout: u32,
    pub wait_result: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_set_scratch_backing_va_args {
    pub va_addr: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_tile_config_args {
    pub tile_config_ptr: u64,
    pub macro_tile_config_ptr: u64,
    pub num_tile_configs: u32,
    pub num_macro_tile_configs: u32,
    pub gpu_id: u32,
    pub gb_addr_config: u32,
    pub num_banks: u32,
    pub num_ranks: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_set_trap_handler_args {
    pub tba_addr: u64,
    pub tma_addr: u64,
    pub gpu_id: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_acquire_vm_args {
    pub drm_fd: u32,
    pub gpu_id: u32,
}

pub const KFD_IOC_ALLOC_MEM_FLAGS_VRAM: u32 = 1 << 0;
pub const KFD_IOC_ALLOC_MEM_FLAGS_GTT: u32 = 1 << 1;
pub const KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: u32 = 1 << 2;
pub const KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: u32 = 1 << 3;
pub const KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: u32 = 1 << 4;
pub const KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE: u32 = 1 << 31;
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE: u32 = 1 << 30;
pub const KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC: u32 = 1 << 29;
pub const KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE: u32 = 1 << 28;
pub const KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM: u32 = 1 << 27;
pub const KFD_IOC_ALLOC_MEM_FLAGS_COHERENT: u32 = 1 << 26;
pub const KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED: u32 = 1 << 25;
/// KFD 1.15.
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT: u32 = 1 << 24;
/// KFD 1.16.
pub const KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS_BEST_EFFORT: u32 = 1 << 23;

/// Names of the `KFD_IOC_ALLOC_MEM_FLAGS_*` bits, for traces.
pub const ALLOC_MEM_FLAG_NAMES: &[(u32, &str)] = &[
    (KFD_IOC_ALLOC_MEM_FLAGS_VRAM, "VRAM"),
    (KFD_IOC_ALLOC_MEM_FLAGS_GTT, "GTT"),
    (KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, "USERPTR"),
    (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, "DOORBELL"),
    (KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, "MMIO_REMAP"),
    (KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS_BEST_EFFORT, "CONTIGUOUS_BEST_EFFORT"),
    (KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT, "EXT_COHERENT"),
    (KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED, "UNCACHED"),
    (KFD_IOC_ALLOC_MEM_FLAGS_COHERENT, "COHERENT"),
    (KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM, "AQL_QUEUE_MEM"),
    (KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE, "NO_SUBSTITUTE"),
    (KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, "PUBLIC"),
    (KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, "EXECUTABLE"),
    (KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, "WRITABLE"),
];

/// `A|B|C` rendering of `KFD_IOC_ALLOC_MEM_FLAGS_*` bits.
pub fn alloc_flags_to_string(flags: u32) -> String {
    let mut parts: Vec<String> =
        ALLOC_MEM_FLAG_NAMES.iter().filter(|(bit, _)| flags & bit != 0).map(|(_, n)| n.to_string()).collect();
    let known: u32 = ALLOC_MEM_FLAG_NAMES.iter().map(|(b, _)| b).fold(0, |a, b| a | b);
    if flags & !known != 0 {
        parts.push(format!("{:#x}", flags & !known));
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join("|")
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_alloc_memory_of_gpu_args {
    /// GPU VA (0 = no VA, the VMM "handle only" case).
    pub va_addr: u64,
    /// Bytes.
    pub size: u64,
    /// Out: `gpu_id << 32 | idr`.
    pub handle: u64,
    /// In (USERPTR): the CPU address. Out: the render-node mmap offset.
    pub mmap_offset: u64,
    pub gpu_id: u32,
    pub flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_free_memory_of_gpu_args {
    pub handle: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_map_memory_to_gpu_args {
    pub handle: u64,
    /// User pointer to `n_devices` × u32 `gpu_id`.
    pub device_ids_array_ptr: u64,
    pub n_devices: u32,
    /// In: devices already mapped (restart point). Out: devices mapped.
    pub n_success: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_unmap_memory_from_gpu_args {
    pub handle: u64,
    pub device_ids_array_ptr: u64,
    pub n_devices: u32,
    pub n_success: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_alloc_queue_gws_args {
    pub queue_id: u32,
    pub num_gws: u32,
    pub first_gws: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_get_dmabuf_info_args {
    /// Out: bytes.
    pub size: u64,
    pub metadata_ptr: u64,
    pub metadata_size: u32,
    pub gpu_id: u32,
    /// Out: `KFD_IOC_ALLOC_MEM_FLAGS_*`.
    pub flags: u32,
    pub dmabuf_fd: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_import_dmabuf_args {
    pub va_addr: u64,
    pub handle: u64,
    pub gpu_id: u32,
    pub dmabuf_fd: u32,
}

/// `AMDKFD_IOC_SET_XNACK_MODE` (in: -1 queries).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_set_xnack_mode_args {
    pub xnack_enabled: i32,
}

/// `AMDKFD_IOC_SVM` (KFD 1.5): the fixed head of `struct kfd_ioctl_svm_args`; `nattr`
/// [`kfd_ioctl_svm_attribute`]s follow it in the same buffer, and the request's `_IOC_SIZE`
/// counts them (libhsakmt's `hsaKmtSVMSetAttr` issues `AMDKFD_IOC_SVM + (attr bytes << 16)`).
/// `start_addr` and `size` are bytes, page aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_svm_args {
    pub start_addr: u64,
    pub size: u64,
    /// `KFD_IOCTL_SVM_OP_*`.
    pub op: u32,
    pub nattr: u32,
}

/// One `(type, value)` pair of an `AMDKFD_IOC_SVM` call: `type` is a
/// `KFD_IOCTL_SVM_ATTR_*`, `value` a gpu_id, a `KFD_IOCTL_SVM_LOCATION_*`, flags or a
/// granularity (log2 pages).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_svm_attribute {
    pub type_: u32,
    pub value: u32,
}

pub const KFD_IOCTL_SVM_OP_SET_ATTR: u32 = 0;
pub const KFD_IOCTL_SVM_OP_GET_ATTR: u32 = 1;
pub const KFD_IOCTL_SVM_LOCATION_SYSMEM: u32 = 0;
pub const KFD_IOCTL_SVM_LOCATION_UNDEFINED: u32 = 0xffff_ffff;
pub const KFD_IOCTL_SVM_ATTR_PREFERRED_LOC: u32 = 0;
pub const KFD_IOCTL_SVM_ATTR_PREFETCH_LOC: u32 = 1;
pub const KFD_IOCTL_SVM_ATTR_ACCESS: u32 = 2;
pub const KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE: u32 = 3;
pub const KFD_IOCTL_SVM_ATTR_NO_ACCESS: u32 = 4;
pub const KFD_IOCTL_SVM_ATTR_SET_FLAGS: u32 = 5;
pub const KFD_IOCTL_SVM_ATTR_CLR_FLAGS: u32 = 6;
pub const KFD_IOCTL_SVM_ATTR_GRANULARITY: u32 = 7;
pub const KFD_IOCTL_SVM_FLAG_HOST_ACCESS: u32 = 0x1;
pub const KFD_IOCTL_SVM_FLAG_COHERENT: u32 = 0x2;
pub const KFD_IOCTL_SVM_FLAG_HIVE_LOCAL: u32 = 0x4;
pub const KFD_IOCTL_SVM_FLAG_GPU_RO: u32 = 0x8;
pub const KFD_IOCTL_SVM_FLAG_GPU_EXEC: u32 = 0x10;
pub const KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY: u32 = 0x20;
pub const KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED: u32 = 0x40;

/// `AMDKFD_IOC_SMI_EVENTS`: the device's gpu_id in, an fd out that reports that device's
/// events as text lines (`KFD_SMI_EVENT_*`, enabled by writing a u64 mask of
/// `1 << (event - 1)` bits to the fd).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_smi_events_args {
    pub gpuid: u32,
    pub anon_fd: u32,
}

pub const KFD_SMI_EVENT_VMFAULT: u32 = 1;
pub const KFD_SMI_EVENT_MIGRATE_START: u32 = 5;
pub const KFD_SMI_EVENT_MIGRATE_END: u32 = 6;
/// A client that also sets this bit (and has CAP_SYS_ADMIN) gets every process's events.
pub const KFD_SMI_EVENT_ALL_PROCESS: u32 = 64;
/// Largest message, bytes (`KFD_SMI_EVENT_MSG_SIZE`).
pub const KFD_SMI_EVENT_MSG_SIZE: usize = 96;
pub const KFD_MIGRATE_TRIGGER_PREFETCH: u32 = 0;
pub const KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU: u32 = 1;
pub const KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU: u32 = 2;
pub const KFD_MIGRATE_TRIGGER_TTM_EVICTION: u32 = 3;

/// KFD 1.12: `AMDKFD_IOC_EXPORT_DMABUF`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_export_dmabuf_args {
    pub handle: u64,
    /// `O_CLOEXEC` and friends for the new fd.
    pub flags: u32,
    pub dmabuf_fd: u32,
}

/// KFD 1.14: `AMDKFD_IOC_RUNTIME_ENABLE`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_runtime_enable_args {
    pub r_debug: u64,
    pub mode_mask: u32,
    pub capabilities_mask: u32,
}

/// ROCm's out-of-tree `AMDKFD_IOC_IPC_EXPORT_HANDLE` (DKMS amdgpu of ROCm 5.x, ROCK-Kernel-Driver
/// `kfd_ipc.c`; ROCT-Thunk-Interface's `kfd_ioctl.h`, "non-upstream ioctls").
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_ipc_export_handle_args {
    /// KFD BO handle (to KFD).
    pub handle: u64,
    /// The 128-bit share handle (from KFD).
    pub share_handle: [u32; 4],
    /// GPU whose process device holds the BO (to KFD).
    pub gpu_id: u32,
    /// Opaque to the kernel, returned by every import (to KFD; libhsakmt passes `HsaMemFlags`).
    pub flags: u32,
}

/// ROCm's out-of-tree `AMDKFD_IOC_IPC_IMPORT_HANDLE` (see [`kfd_ioctl_ipc_export_handle_args`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_ipc_import_handle_args {
    /// KFD BO handle of the import (from KFD).
    pub handle: u64,
    /// GPU VA of the import (to KFD).
    pub va_addr: u64,
    /// Render-node mmap offset of the BO (from KFD).
    pub mmap_offset: u64,
    /// The share handle (to KFD).
    pub share_handle: [u32; 4],
    /// GPU to import on (to KFD).
    pub gpu_id: u32,
    /// The exporter's `flags` (from KFD).
    pub flags: u32,
}

/// KFD 1.13: `struct kfd_runtime_info`, what DBG_TRAP_ENABLE and QUERY_EXCEPTION_INFO
/// (`EC_PROCESS_RUNTIME`) copy out: the target's `runtime_enable` state.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_runtime_info {
    pub r_debug: u64,
    /// `DEBUG_RUNTIME_STATE_*`.
    pub runtime_state: u32,
    pub ttmp_setup: u32,
}

pub const DEBUG_RUNTIME_STATE_DISABLED: u32 = 0;
pub const DEBUG_RUNTIME_STATE_ENABLED: u32 = 1;
pub const DEBUG_RUNTIME_STATE_ENABLED_BUSY: u32 = 2;
pub const DEBUG_RUNTIME_STATE_ENABLED_ERROR: u32 = 3;

/// KFD 1.13: `AMDKFD_IOC_DBG_TRAP` (`struct kfd_ioctl_dbg_trap_args`, 32 bytes). `data` is the
/// union of the per-`op` argument structs (at most 24 bytes); read and write its fields with
/// [`kfd_ioctl_dbg_trap_args::u32_at`] and friends at the uapi byte offsets, e.g. for
/// `KFD_IOC_DBG_TRAP_ENABLE`: `exception_mask` @0 (u64), `rinfo_ptr` @8, `rinfo_size` @16 (u32),
/// `dbg_fd` @20.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_dbg_trap_args {
    /// Target process (to KFD).
    pub pid: u32,
    /// `KFD_IOC_DBG_TRAP_*`.
    pub op: u32,
    pub data: [u32; 6],
}

impl kfd_ioctl_dbg_trap_args {
    /// The u32 of the op's arguments at byte offset `off` (a multiple of 4, below 24).
    pub fn u32_at(&self, off: usize) -> u32 {
        self.data[off / 4]
    }
    /// The u64 at byte offset `off` (a multiple of 8, below 24).
    pub fn u64_at(&self, off: usize) -> u64 {
        self.data[off / 4] as u64 | (self.data[off / 4 + 1] as u64) << 32
    }
    pub fn set_u32(&mut self, off: usize, v: u32) {
        self.data[off / 4] = v;
    }
    pub fn set_u64(&mut self, off: usize, v: u64) {
        self.data[off / 4] = v as u32;
        self.data[off / 4 + 1] = (v >> 32) as u32;
    }
}

pub const KFD_IOC_DBG_TRAP_ENABLE: u32 = 0;
pub const KFD_IOC_DBG_TRAP_DISABLE: u32 = 1;
pub const KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT: u32 = 2;
pub const KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED: u32 = 3;
pub const KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE: u32 = 4;
pub const KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE: u32 = 5;
pub const KFD_IOC_DBG_TRAP_SUSPEND_QUEUES: u32 = 6;
pub const KFD_IOC_DBG_TRAP_RESUME_QUEUES: u32 = 7;
pub const KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH: u32 = 8;
pub const KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH: u32 = 9;
pub const KFD_IOC_DBG_TRAP_SET_FLAGS: u32 = 10;
pub const KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT: u32 = 11;
pub const KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO: u32 = 12;
pub const KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT: u32 = 13;
pub const KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT: u32 = 14;

pub const KFD_DBG_TRAP_OVERRIDE_OR: u32 = 0;
pub const KFD_DBG_TRAP_OVERRIDE_REPLACE: u32 = 1;
pub const KFD_DBG_TRAP_MASK_FP_INVALID: u32 = 1;
pub const KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL: u32 = 2;
pub const KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO: u32 = 4;
pub const KFD_DBG_TRAP_MASK_FP_OVERFLOW: u32 = 8;
pub const KFD_DBG_TRAP_MASK_FP_UNDERFLOW: u32 = 16;
pub const KFD_DBG_TRAP_MASK_FP_INEXACT: u32 = 32;
pub const KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO: u32 = 64;
pub const KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH: u32 = 128;
pub const KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION: u32 = 256;
pub const KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START: u32 = 1 << 30;
pub const KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END: u32 = 1 << 31;
pub const KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL: u32 = 0;
pub const KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT: u32 = 1;
pub const KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG: u32 = 3;
pub const KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP: u32 = 1;

/// Exception codes (`enum kfd_dbg_trap_exception_code`) this model raises.
pub const EC_QUEUE_WAVE_ABORT: u32 = 1;
pub const EC_QUEUE_WAVE_TRAP: u32 = 2;
pub const EC_QUEUE_NEW: u32 = 31;
pub const EC_DEVICE_QUEUE_DELETE: u32 = 32;
pub const EC_DEVICE_MEMORY_VIOLATION: u32 = 33;
pub const EC_DEVICE_NEW: u32 = 36;
pub const EC_PROCESS_RUNTIME: u32 = 48;
pub const EC_PROCESS_DEVICE_REMOVE: u32 = 49;

/// `KFD_EC_MASK(ecode)`: `1 << (ecode - 1)`.
pub const fn kfd_ec_mask(ecode: u32) -> u64 {
    1u64 << (ecode - 1)
}
/// `KFD_EC_MASK_QUEUE`: exception codes 1..=14 and `EC_QUEUE_NEW`.
pub const KFD_EC_MASK_QUEUE: u64 = 0x3fff | kfd_ec_mask(EC_QUEUE_NEW);
/// `KFD_EC_MASK_DEVICE`: `EC_DEVICE_QUEUE_DELETE` ..= `EC_DEVICE_NEW` (32..=36).
pub const KFD_EC_MASK_DEVICE: u64 = 0x1f << 31;
/// `KFD_EC_MASK_PROCESS`: `EC_PROCESS_RUNTIME`, `EC_PROCESS_DEVICE_REMOVE`.
pub const KFD_EC_MASK_PROCESS: u64 = kfd_ec_mask(EC_PROCESS_RUNTIME) | kfd_ec_mask(EC_PROCESS_DEVICE_REMOVE);

/// KFD 1.13: one GPU of DBG_TRAP_GET_DEVICE_SNAPSHOT.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_dbg_device_info_entry {
    pub exception_status: u64,
    pub lds_base: u64,
    pub lds_limit: u64,
    pub scratch_base: u64,
    pub scratch_limit: u64,
    pub gpuvm_base: u64,
    pub gpuvm_limit: u64,
    pub gpu_id: u32,
    pub location_id: u32,
    pub vendor_id: u32,
    pub device_id: u32,
    pub revision_id: u32,
    pub subsystem_vendor_id: u32,
    pub subsystem_device_id: u32,
    pub fw_version: u32,
    pub gfx_target_version: u32,
    pub simd_count: u32,
    pub max_waves_per_simd: u32,
    pub array_count: u32,
    pub simd_arrays_per_engine: u32,
    pub num_xcc: u32,
    pub capability: u32,
    pub debug_prop: u32,
}

/// KFD 1.13: one queue of DBG_TRAP_GET_QUEUE_SNAPSHOT.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_queue_snapshot_entry {
    pub exception_status: u64,
    pub ring_base_address: u64,
    pub write_pointer_address: u64,
    pub read_pointer_address: u64,
    pub ctx_save_restore_address: u64,
    pub queue_id: u32,
    pub gpu_id: u32,
    pub ring_size: u32,
    pub queue_type: u32,
    pub ctx_save_restore_area_size: u32,
    pub reserved: u32,
}

pub const KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK: u32 = 1;
pub const KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK: u32 = 2;

const K: u8 = b'K';
const fn sz<T>() -> usize {
    size_of::<T>()
}

pub const AMDKFD_IOC_GET_VERSION: Ioctl = request_code_read!(K, 0x01, sz::<kfd_ioctl_get_version_args>());
pub const AMDKFD_IOC_CREATE_QUEUE: Ioctl = request_code_readwrite!(K, 0x02, sz::<kfd_ioctl_create_queue_args>());
pub const AMDKFD_IOC_DESTROY_QUEUE: Ioctl = request_code_readwrite!(K, 0x03, sz::<kfd_ioctl_destroy_queue_args>());
pub const AMDKFD_IOC_SET_MEMORY_POLICY: Ioctl = request_code_write!(K, 0x04, sz::<kfd_ioctl_set_memory_policy_args>());
pub const AMDKFD_IOC_GET_CLOCK_COUNTERS: Ioctl =
    request_code_readwrite!(K, 0x05, sz::<kfd_ioctl_get_clock_counters_args>());
pub const AMDKFD_IOC_GET_PROCESS_APERTURES: Ioctl =
    request_code_read!(K, 0x06, sz::<kfd_ioctl_get_process_apertures_args>());
pub const AMDKFD_IOC_UPDATE_QUEUE: Ioctl = request_code_write!(K, 0x07, sz::<kfd_ioctl_update_queue_args>());
pub const AMDKFD_IOC_CREATE_EVENT: Ioctl = request_code_readwrite!(K, 0x08, sz::<kfd_ioctl_create_event_args>());
pub const AMDKFD_IOC_DESTROY_EVENT: Ioctl = request_code_write!(K, 0x09, sz::<kfd_ioctl_destroy_event_args>());
pub const AMDKFD_IOC_SET_EVENT: Ioctl = request_code_write!(K, 0x0A, sz::<kfd_ioctl_set_event_args>());
pub const AMDKFD_IOC_RESET_EVENT: Ioctl = request_code_write!(K, 0x0B, sz::<kfd_ioctl_reset_event_args>());
pub const AMDKFD_IOC_WAIT_EVENTS: Ioctl = request_code_readwrite!(K, 0x0C, sz::<kfd_ioctl_wait_events_args>());
pub const AMDKFD_IOC_SET_SCRATCH_BACKING_VA: Ioctl =
    request_code_readwrite!(K, 0x11, sz::<kfd_ioctl_set_scratch_backing_va_args>());
pub const AMDKFD_IOC_GET_TILE_CONFIG: Ioctl = request_code_readwrite!(K, 0x12, sz::<kfd_ioctl_get_tile_config_args>());
pub const AMDKFD_IOC_SET_TRAP_HANDLER: Ioctl = request_code_write!(K, 0x13, sz::<kfd_ioctl_set_trap_handler_args>());
pub const AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: Ioctl =
    request_code_readwrite!(K, 0x14, sz::<kfd_ioctl_get_process_apertures_new_args>());
pub const AMDKFD_IOC_ACQUIRE_VM: Ioctl = request_code_write!(K, 0x15, sz::<kfd_ioctl_acquire_vm_args>());
pub const AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: Ioctl =
    request_code_readwrite!(K, 0x16, sz::<kfd_ioctl_alloc_memory_of_gpu_args>());
pub const AMDKFD_IOC_FREE_MEMORY_OF_GPU: Ioctl =
    request_code_write!(K, 0x17, sz::<kfd_ioctl_free_memory_of_gpu_args>());
pub const AMDKFD_IOC_MAP_MEMORY_TO_GPU: Ioctl =
    request_code_readwrite!(K, 0x18, sz::<kfd_ioctl_map_memory_to_gpu_args>());
pub const AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: Ioctl =
    request_code_readwrite!(K, 0x19, sz::<kfd_ioctl_unmap_memory_from_gpu_args>());
pub const AMDKFD_IOC_SET_CU_MASK: Ioctl = request_code_write!(K, 0x1A, sz::<kfd_ioctl_set_cu_mask_args>());
pub const AMDKFD_IOC_GET_QUEUE_WAVE_STATE: Ioctl =
    request_code_readwrite!(K, 0x1B, sz::<kfd_ioctl_get_queue_wave_state_args>());
pub const AMDKFD_IOC_GET_DMABUF_INFO: Ioctl = request_code_readwrite!(K, 0x1C, sz::<kfd_ioctl_get_dmabuf_info_args>());
pub const AMDKFD_IOC_IMPORT_DMABUF: Ioctl = request_code_readwrite!(K, 0x1D, sz::<kfd_ioctl_import_dmabuf_args>());
pub const AMDKFD_IOC_ALLOC_QUEUE_GWS: Ioctl = request_code_readwrite!(K, 0x1E, sz::<kfd_ioctl_alloc_queue_gws_args>());
pub const AMDKFD_IOC_SMI_EVENTS: Ioctl = request_code_readwrite!(K, 0x1F, sz::<kfd_ioctl_smi_events_args>());
/// ROCm's out-of-tree `AMDKFD_IOC_PC_SAMPLE` (DKMS amdgpu of ROCm 6.2 on, ROCK-Kernel-Driver
/// `kfd_pc_sampling.c`; libhsakmt calls it where KFD reports 1.16 or later). `op` is one of
/// [`KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES`] .. `STOP`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_ioctl_pc_sample_args {
    /// User pointer to `num_sample_info` × `struct kfd_pc_sample_info` (40 bytes each).
    pub sample_info_ptr: u64,
    pub num_sample_info: u32,
    pub op: u32,
    pub gpu_id: u32,
    pub trace_id: u32,
    pub flags: u32,
    /// `version` in later DKMS trees (the PC sampling revision, from KFD).
    pub reserved: u32,
}

pub const KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES: u32 = 0;
pub const KFD_IOCTL_PCS_OP_CREATE: u32 = 1;
pub const KFD_IOCTL_PCS_OP_DESTROY: u32 = 2;
pub const KFD_IOCTL_PCS_OP_START: u32 = 3;
pub const KFD_IOCTL_PCS_OP_STOP: u32 = 4;
/// `kfd_ioctl_pc_sample_args.flags` of QUERY_CAPABILITIES: every format of the GPU, not only
/// the one of the session running on it.
pub const KFD_IOCTL_PCS_QUERY_TYPE_FULL: u32 = 1 << 0;
/// `kfd_pc_sample_info.flags`: the interval must be a power of 2.
pub const KFD_IOCTL_PCS_FLAG_POWER_OF_2: u64 = 0x1;
pub const KFD_IOCTL_PCS_METHOD_HOSTTRAP: u32 = 1;
pub const KFD_IOCTL_PCS_METHOD_STOCHASTIC: u32 = 2;
pub const KFD_IOCTL_PCS_TYPE_TIME_US: u32 = 0;
pub const KFD_IOCTL_PCS_TYPE_CLOCK_CYCLES: u32 = 1;
pub const KFD_IOCTL_PCS_TYPE_INSTRUCTIONS: u32 = 2;

/// One sampling format of a GPU, or a session's parameters (`struct kfd_pc_sample_info`, 40
/// bytes). `interval` is in the unit of `type` (µs for [`KFD_IOCTL_PCS_TYPE_TIME_US`]);
/// `interval_min`, `interval_max` and `flags` are what the GPU allows.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct kfd_pc_sample_info {
    pub interval: u64,
    pub interval_min: u64,
    pub interval_max: u64,
    pub flags: u64,
    pub method: u32,
    pub r#type: u32,
}

/// With no attributes; a call with `n` attributes adds `8 * n` to `_IOC_SIZE`.
pub const AMDKFD_IOC_SVM: Ioctl = request_code_readwrite!(K, 0x20, sz::<kfd_ioctl_svm_args>());
pub const AMDKFD_IOC_SET_XNACK_MODE: Ioctl = request_code_readwrite!(K, 0x21, sz::<kfd_ioctl_set_xnack_mode_args>());
pub const AMDKFD_IOC_AVAILABLE_MEMORY: Ioctl =
    request_code_readwrite!(K, 0x23, sz::<kfd_ioctl_get_available_memory_args>());
/// KFD 1.12.
pub const AMDKFD_IOC_EXPORT_DMABUF: Ioctl = request_code_readwrite!(K, 0x24, sz::<kfd_ioctl_export_dmabuf_args>());
/// KFD 1.14.
pub const AMDKFD_IOC_RUNTIME_ENABLE: Ioctl = request_code_readwrite!(K, 0x25, sz::<kfd_ioctl_runtime_enable_args>());
/// KFD 1.13.
pub const AMDKFD_IOC_DBG_TRAP: Ioctl = request_code_readwrite!(K, 0x26, sz::<kfd_ioctl_dbg_trap_args>());
/// ROCm DKMS only (non-upstream).
pub const AMDKFD_IOC_IPC_IMPORT_HANDLE: Ioctl =
    request_code_readwrite!(K, 0x80, sz::<kfd_ioctl_ipc_import_handle_args>());
/// ROCm DKMS only (non-upstream).
pub const AMDKFD_IOC_IPC_EXPORT_HANDLE: Ioctl =
    request_code_readwrite!(K, 0x81, sz::<kfd_ioctl_ipc_export_handle_args>());
/// ROCm DKMS only (non-upstream, ROCm 6.2 on).
pub const AMDKFD_IOC_PC_SAMPLE: Ioctl = request_code_readwrite!(K, 0x85, sz::<kfd_ioctl_pc_sample_args>());

/// First KFD ioctl nr (`kfd_chardev.c`).
pub const AMDKFD_COMMAND_START: u32 = 0x01;
/// One past the last KFD ioctl nr at 1.17 (`kfd_chardev.c`).
pub const AMDKFD_COMMAND_END: u32 = 0x27;

/// `_IOC_NR(req)`.
pub const fn ioc_nr(req: Ioctl) -> u32 {
    (req & 0xff) as u32
}
/// `_IOC_TYPE(req)`.
pub const fn ioc_type(req: Ioctl) -> u8 {
    ((req >> 8) & 0xff) as u8
}
/// `_IOC_SIZE(req)` in bytes.
pub const fn ioc_size(req: Ioctl) -> usize {
    ((req >> 16) & 0x3fff) as usize
}

/// Every KFD request number this crate defines, with its uapi name.
pub const KFD_IOCTLS: &[(Ioctl, &str)] = &[
    (AMDKFD_IOC_GET_VERSION, "AMDKFD_IOC_GET_VERSION"),
    (AMDKFD_IOC_CREATE_QUEUE, "AMDKFD_IOC_CREATE_QUEUE"),
    (AMDKFD_IOC_DESTROY_QUEUE, "AMDKFD_IOC_DESTROY_QUEUE"),
    (AMDKFD_IOC_SET_MEMORY_POLICY, "AMDKFD_IOC_SET_MEMORY_POLICY"),
    (AMDKFD_IOC_GET_CLOCK_COUNTERS, "AMDKFD_IOC_GET_CLOCK_COUNTERS"),
    (AMDKFD_IOC_GET_PROCESS_APERTURES, "AMDKFD_IOC_GET_PROCESS_APERTURES"),
    (AMDKFD_IOC_UPDATE_QUEUE, "AMDKFD_IOC_UPDATE_QUEUE"),
    (AMDKFD_IOC_CREATE_EVENT, "AMDKFD_IOC_CREATE_EVENT"),
    (AMDKFD_IOC_DESTROY_EVENT, "AMDKFD_IOC_DESTROY_EVENT"),
    (AMDKFD_IOC_SET_EVENT, "AMDKFD_IOC_SET_EVENT"),
    (AMDKFD_IOC_RESET_EVENT, "AMDKFD_IOC_RESET_EVENT"),
    (AMDKFD_IOC_WAIT_EVENTS, "AMDKFD_IOC_WAIT_EVENTS"),
    (AMDKFD_IOC_SET_SCRATCH_BACKING_VA, "AMDKFD_IOC_SET_SCRATCH_BACKING_VA"),
    (AMDKFD_IOC_GET_TILE_CONFIG, "AMDKFD_IOC_GET_TILE_CONFIG"),
    (AMDKFD_IOC_SET_TRAP_HANDLER, "AMDKFD_IOC_SET_TRAP_HANDLER"),
    (AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW"),
    (AMDKFD_IOC_ACQUIRE_VM, "AMDKFD_IOC_ACQUIRE_VM"),
    (AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"),
    (AMDKFD_IOC_FREE_MEMORY_OF_GPU, "AMDKFD_IOC_FREE_MEMORY_OF_GPU"),
    (AMDKFD_IOC_MAP_MEMORY_TO_GPU, "AMDKFD_IOC_MAP_MEMORY_TO_GPU"),
    (AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU"),
    (AMDKFD_IOC_SET_CU_MASK, "AMDKFD_IOC_SET_CU_MASK"),
    (AMDKFD_IOC_GET_QUEUE_WAVE_STATE, "AMDKFD_IOC_GET_QUEUE_WAVE_STATE"),
    (AMDKFD_IOC_GET_DMABUF_INFO, "AMDKFD_IOC_GET_DMABUF_INFO"),
    (AMDKFD_IOC_IMPORT_DMABUF, "AMDKFD_IOC_IMPORT_DMABUF"),
    (AMDKFD_IOC_ALLOC_QUEUE_GWS, "AMDKFD_IOC_ALLOC_QUEUE_GWS"),
    (AMDKFD_IOC_SMI_EVENTS, "AMDKFD_IOC_SMI_EVENTS"),
    (AMDKFD_IOC_SVM, "AMDKFD_IOC_SVM"),
    (AMDKFD_IOC_SET_XNACK_MODE, "AMDKFD_IOC_SET_XNACK_MODE"),
    (AMDKFD_IOC_AVAILABLE_MEMORY, "AMDKFD_IOC_AVAILABLE_MEMORY"),
    (AMDKFD_IOC_EXPORT_DMABUF, "AMDKFD_IOC_EXPORT_DMABUF"),
    (AMDKFD_IOC_RUNTIME_ENABLE, "AMDKFD_IOC_RUNTIME_ENABLE"),
    (AMDKFD_IOC_DBG_TRAP, "AMDKFD_IOC_DBG_TRAP"),
    (AMDKFD_IOC_IPC_IMPORT_HANDLE, "AMDKFD_IOC_IPC_IMPORT_HANDLE"),
    (AMDKFD_IOC_IPC_EXPORT_HANDLE, "AMDKFD_IOC_IPC_EXPORT_HANDLE"),
    (AMDKFD_IOC_PC_SAMPLE, "AMDKFD_IOC_PC_SAMPLE"),
];

/// The uapi name of a KFD, generic DRM or amdgpu DRM request number, for traces. Matches on
/// `_IOC_TYPE` and `_IOC_NR` only, as the kernel's dispatchers do, so callers built against older
/// or newer struct sizes are named too.
pub fn ioctl_name(req: Ioctl) -> Option<&'static str> {
    KFD_IOCTLS
        .iter()
        .chain(crate::drm::DRM_IOCTLS)
        .chain(crate::amdgpu::AMDGPU_IOCTLS)
        .find(|(r, _)| ioc_type(*r) == ioc_type(req) && ioc_nr(*r) == ioc_nr(req))
        .map(|(_, n)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings from the reference table (rocm-internals.md §6, computed from kfd_ioctl.h 1.17).
    #[test]
    fn request_numbers_match_reference() {
        assert_eq!(AMDKFD_IOC_GET_VERSION, 0x80084b01);
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE, 0xc0604b02);
        assert_eq!(AMDKFD_IOC_DESTROY_QUEUE, 0xc0084b03);
        assert_eq!(AMDKFD_IOC_CREATE_EVENT, 0xc0204b08);
        assert_eq!(AMDKFD_IOC_DESTROY_EVENT, 0x40084b09);
        assert_eq!(AMDKFD_IOC_SET_EVENT, 0x40084b0a);
        assert_eq!(AMDKFD_IOC_RESET_EVENT, 0x40084b0b);
        assert_eq!(AMDKFD_IOC_WAIT_EVENTS, 0xc0184b0c);
        assert_eq!(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, 0xc0104b14);
        assert_eq!(AMDKFD_IOC_ACQUIRE_VM, 0x40084b15);
        assert_eq!(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, 0xc0284b16);
        assert_eq!(AMDKFD_IOC_FREE_MEMORY_OF_GPU, 0x40084b17);
        assert_eq!(AMDKFD_IOC_MAP_MEMORY_TO_GPU, 0xc0184b18);
        assert_eq!(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, 0xc0184b19);
        assert_eq!(AMDKFD_IOC_GET_DMABUF_INFO, 0xc0204b1c);
        assert_eq!(AMDKFD_IOC_IMPORT_DMABUF, 0xc0184b1d);
        assert_eq!(AMDKFD_IOC_AVAILABLE_MEMORY, 0xc0104b23);
        assert_eq!(AMDKFD_IOC_EXPORT_DMABUF, 0xc0104b24);
        assert_eq!(AMDKFD_IOC_RUNTIME_ENABLE, 0xc0104b25);
        assert_eq!(AMDKFD_IOC_DBG_TRAP, 0xc0204b26);
        assert_eq!(size_of::<kfd_dbg_device_info_entry>(), 120);
        assert_eq!(size_of::<kfd_queue_snapshot_entry>(), 64);
        assert_eq!(size_of::<kfd_runtime_info>(), 16);
        assert_eq!(size_of::<kfd_pc_sample_info>(), 40);
        // ROCT-Thunk-Interface rocm-5.3.3 kfd_ioctl.h: structs of 48 and 32 bytes.
        assert_eq!(AMDKFD_IOC_IPC_IMPORT_HANDLE, 0xc0304b80);
        assert_eq!(AMDKFD_IOC_IPC_EXPORT_HANDLE, 0xc0204b81);
        // ROCT-Thunk-Interface rocm-6.2.4 kfd_ioctl.h: a struct of 32 bytes.
        assert_eq!(AMDKFD_IOC_PC_SAMPLE, 0xc0204b85);
    }

    #[test]
    fn event_data_union_round_trips() {
        let d = kfd_hsa_memory_exception_data {
            failure: kfd_memory_exception_failure { NotPresent: 1, ReadOnly: 0, NoExecute: 0, imprecise: 1 },
            va: 0x7f00_dead_b000,
            gpu_id: 0x1234,
            ErrorType: 0,
        };
        let mut e = kfd_event_data::default();
        e.set_memory_exception_data(&d);
        assert_eq!(e.memory_exception_data(), d);
        assert_eq!(size_of::<kfd_event_data>(), 48);
    }

    #[test]
    fn alloc_flags_render() {
        let f = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
        assert_eq!(alloc_flags_to_string(f), "VRAM|WRITABLE");
    }
}
