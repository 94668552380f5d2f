//! ABI test: the Rust uapi definitions of `kfd-ioctl` against the system's C headers.
//!
//! One Rust-side table (the `structs!`, `ioctls!` and `consts!` invocations below) lists every
//! struct (with every field), every ioctl request number and every constant. From it this test
//! generates a C program (`$CARGO_TARGET_TMPDIR/abi_probe.c`) that includes
//! `/usr/include/linux/kfd_ioctl.h` (Debian bookworm: KFD 1.11) and libdrm's `drm.h` +
//! `amdgpu_drm.h` (`-I/usr/include/libdrm`, libdrm 2.4.114), compiles it with the system `cc`,
//! runs it, and compares what C prints (sizeof, _Alignof, offsetof/sizeof/alignof of every
//! member, ioctl numbers, constants) with `size_of` / `align_of` / `offset_of!` and the Rust
//! constants. The two sides cannot drift: both come from the same table.
//!
//! Items newer than the system headers carry the size / offset / value that the kernel source
//! states, with the source quoted next to them; for an ioctl whose struct grew, the test also
//! checks that only the size bits differ from the system header's number.
//!
//! A missing C compiler or header is a failure, never a skip (CI installs gcc, linux-libc-dev and
//! libdrm-dev).

// The `values!` tables push entry by entry.
#![allow(clippy::vec_init_then_push)]

use kfd_ioctl::{amdgpu, drm, kfd};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Headers the probe includes; each must exist (package in parentheses, for the error message).
const HEADERS: &[(&str, &str)] = &[
    ("/usr/include/linux/kfd_ioctl.h", "linux-libc-dev"),
    ("/usr/include/libdrm/drm.h", "libdrm-dev"),
    ("/usr/include/libdrm/amdgpu_drm.h", "libdrm-dev"),
];

/// `_IOC_SIZEMASK << _IOC_SIZESHIFT` (asm-generic/ioctl.h).
const IOC_SIZE_BITS: u64 = 0x3fff << 16;

struct FieldSpec {
    rust: &'static str,
    /// C member designator (defaults to the Rust name).
    c: &'static str,
    offset: usize,
    size: usize,
    /// Offset stated by the kernel source for a field the system header lacks.
    fixed_offset: Option<usize>,
}

struct StructSpec {
    rust: String,
    /// C type (`struct x`, `union x`, or a `__typeof__` expression); empty = not in the system
    /// header at all.
    c: &'static str,
    size: usize,
    align: usize,
    /// Size stated by the kernel source when it differs from / is absent in the system header.
    fixed_size: Option<usize>,
    why: &'static str,
    fields: Vec<FieldSpec>,
}

enum Expect {
    /// Compare with the C header.
    C,
    /// Not in the system header: compare with this value (from the kernel source, see `why`).
    Fixed(u64, &'static str),
    /// The struct grew after the system header: compare with this value, and check that the C
    /// header's number differs only in the size bits.
    Grown(u64, &'static str),
}

struct ValueSpec {
    rust: String,
    c: &'static str,
    value: u64,
    expect: Expect,
}

/// `size_of` the field `p` points at; the closure is never called.
fn field_size<T, F>(_f: fn(*const T) -> *const F) -> usize {
    size_of::<F>()
}

macro_rules! opt {
    () => {
        None
    };
    ($v:expr) => {
        Some($v)
    };
}

macro_rules! or_default {
    ($d:expr) => {
        $d
    };
    ($d:expr, $v:expr) => {
        $v
    };
}

macro_rules! c_type {
    (struct, $name:ident) => {
        concat!("struct ", stringify!($name))
    };
    (union, $name:ident) => {
        concat!("union ", stringify!($name))
    };
    ($kind:ident, $name:ident, $c:literal) => {
        $c
    };
}

/// Compile-time check that the table names every field of a Rust struct (a pattern without `..`).
macro_rules! exhaustive {
    (struct, $m:ident :: $name:ident, $($f:ident),*) => {{
        #[allow(dead_code)]
        fn all_fields_listed(v: $m::$name) {
            let $m::$name { $($f: _),* } = v;
        }
    }};
    (union, $m:ident :: $name:ident, $($f:ident),*) => {{}};
}

/// `kind module::Type [= "C type"] [[size = N, "source"]] { field [as "c member"] [@ offset], ... }`
macro_rules! structs {
    ($(
        $kind:ident $m:ident :: $name:ident $(= $cty:literal)?
            $([size = $size:literal, $why:literal])?
            { $( $f:ident $(as $cf:literal)? $(@ $off:literal)? ),* $(,)? }
    )*) => {
        vec![$({
            exhaustive!($kind, $m::$name, $($f),*);
            StructSpec {
                rust: concat!(stringify!($m), "::", stringify!($name)).to_string(),
                c: c_type!($kind, $name $(, $cty)?),
                size: size_of::<$m::$name>(),
                align: align_of::<$m::$name>(),
                fixed_size: opt!($($size)?),
                why: or_default!("" $(, $why)?),
                fields: vec![$(FieldSpec {
                    rust: stringify!($f),
                    c: or_default!(stringify!($f) $(, $cf)?),
                    offset: offset_of!($m::$name, $f),
                    // SAFETY: only the pointee type is used; the fn is never called.
                    size: field_size::<$m::$name, _>(|p| unsafe { std::ptr::addr_of!((*p).$f) }),
                    fixed_offset: opt!($($off)?),
                }),*],
            }
        }),*]
    };
}

/// `checked [ m::NAME, ... ] newer [ m::NAME = value, "source", ... ] grown [ ... ]`; the C name is
/// the Rust name.
macro_rules! values {
    (
        checked [ $($cm:ident :: $cn:ident),* $(,)? ]
        newer [ $($nm:ident :: $nn:ident = $nv:expr, $nwhy:literal),* $(,)? ]
        grown [ $($gm:ident :: $gn:ident = $gv:expr, $gwhy:literal),* $(,)? ]
    ) => {{
        #[allow(unused_mut)]
        let mut v: Vec<ValueSpec> = Vec::new();
        $(v.push(ValueSpec {
            rust: concat!(stringify!($cm), "::", stringify!($cn)).to_string(),
            c: stringify!($cn),
            value: $cm::$cn as u64,
            expect: Expect::C,
        });)*
        $(v.push(ValueSpec {
            rust: concat!(stringify!($nm), "::", stringify!($nn)).to_string(),
            c: "",
            value: $nm::$nn as u64,
            expect: Expect::Fixed($nv, $nwhy),
        });)*
        $(v.push(ValueSpec {
            rust: concat!(stringify!($gm), "::", stringify!($gn)).to_string(),
            c: stringify!($gn),
            value: $gm::$gn as u64,
            expect: Expect::Grown($gv, $gwhy),
        });)*
        v
    }};
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

fn struct_table() -> Vec<StructSpec> {
    structs! {
        // ---- /dev/kfd: linux/kfd_ioctl.h ----
        struct kfd::kfd_ioctl_get_version_args { major_version, minor_version }
        // KFD 1.17 appended sdma_engine_id + pad: 88 -> 96 bytes.
        struct kfd::kfd_ioctl_create_queue_args
            [size = 96, "KFD 1.17 added sdma_engine_id (kfd_ioctl.h 1.17; rocm-internals.md §6: 96 bytes, 88 before)"] {
            ring_base_address, write_pointer_address, read_pointer_address, doorbell_offset,
            ring_size, gpu_id, queue_type, queue_percentage, queue_priority, queue_id,
            eop_buffer_address, eop_buffer_size, ctx_save_restore_address, ctx_save_restore_size,
            ctl_stack_size, sdma_engine_id @ 88, pad @ 92,
        }
        struct kfd::kfd_ioctl_destroy_queue_args { queue_id, pad }
        struct kfd::kfd_ioctl_update_queue_args {
            ring_base_address, queue_id, ring_size, queue_percentage, queue_priority,
        }
        struct kfd::kfd_ioctl_set_cu_mask_args { queue_id, num_cu_mask, cu_mask_ptr }
        struct kfd::kfd_ioctl_get_queue_wave_state_args {
            ctl_stack_address, ctl_stack_used_size, save_area_used_size, queue_id, pad,
        }
        struct kfd::kfd_ioctl_get_available_memory_args { available, gpu_id, pad }
        struct kfd::kfd_ioctl_set_memory_policy_args {
            alternate_aperture_base, alternate_aperture_size, gpu_id, default_policy,
            alternate_policy, pad,
        }
        struct kfd::kfd_ioctl_get_clock_counters_args {
            gpu_clock_counter, cpu_clock_counter, system_clock_counter, system_clock_freq, gpu_id, pad,
        }
        struct kfd::kfd_process_device_apertures {
            lds_base, lds_limit, scratch_base, scratch_limit, gpuvm_base, gpuvm_limit, gpu_id, pad,
        }
        struct kfd::kfd_ioctl_get_process_apertures_args { process_apertures, num_of_nodes, pad }
        struct kfd::kfd_ioctl_get_process_apertures_new_args {
            kfd_process_device_apertures_ptr, num_of_nodes, pad,
        }
        struct kfd::kfd_ioctl_create_event_args {
            event_page_offset, event_trigger_data, event_type, auto_reset, node_id, event_id,
            event_slot_index,
        }
        struct kfd::kfd_ioctl_destroy_event_args { event_id, pad }
        struct kfd::kfd_ioctl_set_event_args { event_id, pad }
        struct kfd::kfd_ioctl_reset_event_args { event_id, pad }
        struct kfd::kfd_memory_exception_failure { NotPresent, ReadOnly, NoExecute, imprecise }
        struct kfd::kfd_hsa_memory_exception_data { failure, va, gpu_id, ErrorType }
        struct kfd::kfd_hsa_hw_exception_data { reset_type, reset_cause, memory_lost, gpu_id }
        // `payload` is the anonymous union; its largest member is memory_exception_data.
        struct kfd::kfd_event_data {
            payload as "memory_exception_data", kfd_event_data_ext, event_id, pad,
        }
        struct kfd::kfd_ioctl_wait_events_args {
            events_ptr, num_events, wait_for_all, timeout, wait_result,
        }
        struct kfd::kfd_ioctl_set_scratch_backing_va_args { va_addr, gpu_id, pad }
        struct kfd::kfd_ioctl_get_tile_config_args {
            tile_config_ptr, macro_tile_config_ptr, num_tile_configs, num_macro_tile_configs,
            gpu_id, gb_addr_config, num_banks, num_ranks,
        }
        struct kfd::kfd_ioctl_set_trap_handler_args { tba_addr, tma_addr, gpu_id, pad }
        struct kfd::kfd_ioctl_acquire_vm_args { drm_fd, gpu_id }
        struct kfd::kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr, size, handle, mmap_offset, gpu_id, flags,
        }
        struct kfd::kfd_ioctl_free_memory_of_gpu_args { handle }
        struct kfd::kfd_ioctl_map_memory_to_gpu_args {
            handle, device_ids_array_ptr, n_devices, n_success,
        }
        struct kfd::kfd_ioctl_unmap_memory_from_gpu_args {
            handle, device_ids_array_ptr, n_devices, n_success,
        }
        struct kfd::kfd_ioctl_alloc_queue_gws_args { queue_id, num_gws, first_gws, pad }
        struct kfd::kfd_ioctl_get_dmabuf_info_args {
            size, metadata_ptr, metadata_size, gpu_id, flags, dmabuf_fd,
        }
        struct kfd::kfd_ioctl_import_dmabuf_args { va_addr, handle, gpu_id, dmabuf_fd }
        struct kfd::kfd_ioctl_set_xnack_mode_args { xnack_enabled }
        struct kfd::kfd_ioctl_smi_events_args { gpuid, anon_fd }
        // The head; `attrs[]` (a flexible array) follows it.
        struct kfd::kfd_ioctl_svm_args { start_addr, size, op, nattr }
        struct kfd::kfd_ioctl_svm_attribute { type_ as "type", value }
        // Not in KFD 1.11.
        struct kfd::kfd_ioctl_export_dmabuf_args = ""
            [size = 16, "KFD 1.12 (kfd_ioctl.h 1.17: __u64 handle; __u32 flags; __u32 dmabuf_fd; AMDKFD_IOWR(0x24) = 0xc0104b24 in rocm-internals.md §6)"] {
            handle @ 0, flags @ 8, dmabuf_fd @ 12,
        }
        struct kfd::kfd_ioctl_runtime_enable_args = ""
            [size = 16, "KFD 1.14 (kfd_ioctl.h 1.17: __u64 r_debug; __u32 mode_mask; __u32 capabilities_mask; AMDKFD_IOWR(0x25) = 0xc0104b25 in rocm-internals.md §6)"] {
            r_debug @ 0, mode_mask @ 8, capabilities_mask @ 12,
        }

        // ---- amdgpu render node: libdrm amdgpu_drm.h ----
        struct amdgpu::drm_amdgpu_gem_create_in { bo_size, alignment, domains, domain_flags }
        struct amdgpu::drm_amdgpu_gem_create_out { handle, _pad }
        union amdgpu::drm_amdgpu_gem_create { in_ as "in", out }
        struct amdgpu::drm_amdgpu_gem_mmap_in { handle, _pad }
        struct amdgpu::drm_amdgpu_gem_mmap_out { addr_ptr }
        union amdgpu::drm_amdgpu_gem_mmap { in_ as "in", out }
        // The anonymous struct `data` of drm_amdgpu_gem_metadata.
        struct amdgpu::drm_amdgpu_gem_metadata_data
            = "__typeof__(((struct drm_amdgpu_gem_metadata *)0)->data)" {
            flags, tiling_info, data_size_bytes, data,
        }
        struct amdgpu::drm_amdgpu_gem_metadata { handle, op, data }
        struct amdgpu::drm_amdgpu_gem_va {
            handle, _pad, operation, flags, va_address, offset_in_bo, map_size,
        }
        struct amdgpu::drm_amdgpu_gem_userptr { addr, size, flags, handle }
        struct amdgpu::drm_amdgpu_gem_op { handle, op, value }
        struct amdgpu::drm_amdgpu_bo_list_in { operation, list_handle, bo_number, bo_info_size, bo_info_ptr }
        struct amdgpu::drm_amdgpu_bo_list_entry { bo_handle, bo_priority }
        struct amdgpu::drm_amdgpu_cs_in { ctx_id, bo_list_handle, num_chunks, flags, chunks }
        struct amdgpu::drm_amdgpu_cs_chunk { chunk_id, length_dw, chunk_data }
        struct amdgpu::drm_amdgpu_cs_chunk_ib { _pad, flags, va_start, ib_bytes, ip_type, ip_instance, ring }
        struct amdgpu::drm_amdgpu_cs_chunk_dep { ip_type, ip_instance, ring, ctx_id, handle }
        struct amdgpu::drm_amdgpu_cs_chunk_fence { handle, offset }
        struct amdgpu::drm_amdgpu_cs_chunk_sem { handle }
        struct amdgpu::drm_amdgpu_cs_chunk_syncobj { handle, flags, point }
        struct amdgpu::drm_amdgpu_wait_cs_in { handle, timeout, ip_type, ip_instance, ring, ctx_id }
        struct amdgpu::drm_amdgpu_query_fw { fw_type, ip_instance, index, _pad }
        // `query_args` is the anonymous union; its largest member is read_mmr_reg (16 bytes).
        struct amdgpu::drm_amdgpu_info {
            return_pointer, return_size, query, query_args as "read_mmr_reg",
        }
        struct amdgpu::drm_amdgpu_info_vram_gtt { vram_size, vram_cpu_accessible_size, gtt_size }
        struct amdgpu::drm_amdgpu_heap_info {
            total_heap_size, usable_heap_size, heap_usage, max_allocation,
        }
        struct amdgpu::drm_amdgpu_memory_info { vram, cpu_accessible_vram, gtt }
        struct amdgpu::drm_amdgpu_info_firmware { ver, feature }
        struct amdgpu::drm_amdgpu_info_hw_ip {
            hw_ip_version_major, hw_ip_version_minor, capabilities_flags, ib_start_alignment,
            ib_size_alignment, available_rings, _pad,
        }
        struct amdgpu::drm_amdgpu_info_device {
            device_id, chip_rev, external_rev, pci_rev, family, num_shader_engines,
            num_shader_arrays_per_engine, gpu_counter_freq, max_engine_clock, max_memory_clock,
            cu_active_number, cu_ao_mask, cu_bitmap, enabled_rb_pipes_mask, num_rb_pipes,
            num_hw_gfx_contexts, _pad, ids_flags, virtual_address_offset, virtual_address_max,
            virtual_address_alignment, pte_fragment_size, gart_page_size, ce_ram_size, vram_type,
            vram_bit_width, vce_harvest_config, gc_double_offchip_lds_buf, prim_buf_gpu_addr,
            pos_buf_gpu_addr, cntl_sb_buf_gpu_addr, param_buf_gpu_addr, prim_buf_size,
            pos_buf_size, cntl_sb_buf_size, param_buf_size, wave_front_size,
            num_shader_visible_vgprs, num_cu_per_sh, num_tcc_blocks, gs_vgt_table_depth,
            gs_prim_buffer_depth, max_gs_waves_per_vgt, _pad1, cu_ao_bitmap, high_va_offset,
            high_va_max, pa_sc_tile_steering_override, tcc_disabled_mask,
        }

        // ---- generic DRM: libdrm drm.h (structs from drm-ffi's drm_sys) ----
        struct drm::drm_version {
            version_major, version_minor, version_patchlevel, name_len, name, date_len, date,
            desc_len, desc,
        }
        struct drm::drm_unique { unique_len, unique }
        struct drm::drm_gem_close { handle, pad }
        struct drm::drm_get_cap { capability, value }
        struct drm::drm_set_client_cap { capability, value }
        struct drm::drm_prime_handle { handle, flags, fd }
        struct drm::drm_syncobj_create { handle, flags }
        struct drm::drm_syncobj_destroy { handle, pad }
        struct drm::drm_syncobj_handle
            [size = 24, "drm.h gained `__u64 point` with DRM_SYNCOBJ_*_FLAGS_TIMELINE (patch 'drm/syncobj: Extend EXPORT_SYNC_FILE for timeline syncobjs', 2025); libdrm 2.4.114 has 16 bytes"] {
            handle, flags, fd, pad, point @ 16,
        }
        struct drm::drm_syncobj_transfer {
            src_handle, dst_handle, src_point, dst_point, flags, pad,
        }
        struct drm::drm_syncobj_wait
            [size = 40, "drm.h gained `__u64 deadline_nsec` (linux 6.8, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE); libdrm 2.4.114 has 32 bytes"] {
            handles, timeout_nsec, count_handles, flags, first_signaled, pad, deadline_nsec @ 32,
        }
        struct drm::drm_syncobj_timeline_wait
            [size = 48, "drm.h gained `__u64 deadline_nsec` (linux 6.8); libdrm 2.4.114 has 40 bytes"] {
            handles, points, timeout_nsec, count_handles, flags, first_signaled, pad,
            deadline_nsec @ 40,
        }
        struct drm::drm_syncobj_array { handles, count_handles, pad }
        struct drm::drm_syncobj_timeline_array { handles, points, count_handles, flags }
    }
}

fn ioctl_table() -> Vec<ValueSpec> {
    values! {
        checked [
            kfd::AMDKFD_IOC_GET_VERSION,
            kfd::AMDKFD_IOC_DESTROY_QUEUE,
            kfd::AMDKFD_IOC_SET_MEMORY_POLICY,
            kfd::AMDKFD_IOC_GET_CLOCK_COUNTERS,
            kfd::AMDKFD_IOC_GET_PROCESS_APERTURES,
            kfd::AMDKFD_IOC_UPDATE_QUEUE,
            kfd::AMDKFD_IOC_CREATE_EVENT,
            kfd::AMDKFD_IOC_DESTROY_EVENT,
            kfd::AMDKFD_IOC_SET_EVENT,
            kfd::AMDKFD_IOC_RESET_EVENT,
            kfd::AMDKFD_IOC_WAIT_EVENTS,
            kfd::AMDKFD_IOC_SET_SCRATCH_BACKING_VA,
            kfd::AMDKFD_IOC_GET_TILE_CONFIG,
            kfd::AMDKFD_IOC_SET_TRAP_HANDLER,
            kfd::AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
            kfd::AMDKFD_IOC_ACQUIRE_VM,
            kfd::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU,
            kfd::AMDKFD_IOC_FREE_MEMORY_OF_GPU,
            kfd::AMDKFD_IOC_MAP_MEMORY_TO_GPU,
            kfd::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU,
            kfd::AMDKFD_IOC_SET_CU_MASK,
            kfd::AMDKFD_IOC_GET_QUEUE_WAVE_STATE,
            kfd::AMDKFD_IOC_GET_DMABUF_INFO,
            kfd::AMDKFD_IOC_IMPORT_DMABUF,
            kfd::AMDKFD_IOC_ALLOC_QUEUE_GWS,
            kfd::AMDKFD_IOC_SMI_EVENTS,
            kfd::AMDKFD_IOC_SVM,
            kfd::AMDKFD_IOC_SET_XNACK_MODE,
            kfd::AMDKFD_IOC_AVAILABLE_MEMORY,
            amdgpu::DRM_IOCTL_AMDGPU_GEM_CREATE,
            amdgpu::DRM_IOCTL_AMDGPU_GEM_MMAP,
            amdgpu::DRM_IOCTL_AMDGPU_CTX,
            amdgpu::DRM_IOCTL_AMDGPU_BO_LIST,
            amdgpu::DRM_IOCTL_AMDGPU_CS,
            amdgpu::DRM_IOCTL_AMDGPU_WAIT_CS,
            amdgpu::DRM_IOCTL_AMDGPU_INFO,
            amdgpu::DRM_IOCTL_AMDGPU_GEM_METADATA,
            amdgpu::DRM_IOCTL_AMDGPU_GEM_VA,
            amdgpu::DRM_IOCTL_AMDGPU_GEM_OP,
            amdgpu::DRM_IOCTL_AMDGPU_GEM_USERPTR,
            drm::DRM_IOCTL_VERSION,
            drm::DRM_IOCTL_GET_UNIQUE,
            drm::DRM_IOCTL_GEM_CLOSE,
            drm::DRM_IOCTL_GET_CAP,
            drm::DRM_IOCTL_SET_CLIENT_CAP,
            drm::DRM_IOCTL_PRIME_HANDLE_TO_FD,
            drm::DRM_IOCTL_PRIME_FD_TO_HANDLE,
            drm::DRM_IOCTL_SYNCOBJ_CREATE,
            drm::DRM_IOCTL_SYNCOBJ_DESTROY,
            drm::DRM_IOCTL_SYNCOBJ_RESET,
            drm::DRM_IOCTL_SYNCOBJ_SIGNAL,
            drm::DRM_IOCTL_SYNCOBJ_QUERY,
            drm::DRM_IOCTL_SYNCOBJ_TRANSFER,
            drm::DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
        ]
        newer [
            kfd::AMDKFD_IOC_EXPORT_DMABUF = 0xc0104b24, "KFD 1.12; rocm-internals.md §6 table",
            kfd::AMDKFD_IOC_RUNTIME_ENABLE = 0xc0104b25, "KFD 1.14; rocm-internals.md §6 table",
            kfd::AMDKFD_IOC_DBG_TRAP = 0xc0204b26,
                "KFD 1.13: ROCT-Thunk-Interface rocm-6.2.4 kfd_ioctl.h, AMDKFD_IOWR(0x26, 32 bytes)",
            kfd::AMDKFD_IOC_IPC_IMPORT_HANDLE = 0xc0304b80,
                "ROCm DKMS only: ROCT-Thunk-Interface rocm-5.3.3 kfd_ioctl.h, _IOWR('K', 0x80, 48)",
            kfd::AMDKFD_IOC_IPC_EXPORT_HANDLE = 0xc0204b81,
                "ROCm DKMS only: ROCT-Thunk-Interface rocm-5.3.3 kfd_ioctl.h, _IOWR('K', 0x81, 32)",
            kfd::AMDKFD_IOC_PC_SAMPLE = 0xc0204b85,
                "ROCm 6.2 DKMS only: ROCT-Thunk-Interface rocm-6.2.4 kfd_ioctl.h, _IOWR('K', 0x85, 32)",
        ]
        grown [
            kfd::AMDKFD_IOC_CREATE_QUEUE = 0xc0604b02,
                "KFD 1.17 struct is 96 bytes; rocm-internals.md §6 table",
            // _IOWR('d', nr, size) with the sizes of the current drm.h (see the structs above).
            drm::DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD = 0xc01864c1,
                "_IOWR('d', 0xC1, 24): drm_syncobj_handle with `point`",
            drm::DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE = 0xc01864c2,
                "_IOWR('d', 0xC2, 24): drm_syncobj_handle with `point`",
            drm::DRM_IOCTL_SYNCOBJ_WAIT = 0xc02864c3,
                "_IOWR('d', 0xC3, 40): drm_syncobj_wait with `deadline_nsec` (linux 6.8)",
            drm::DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT = 0xc03064ca,
                "_IOWR('d', 0xCA, 48): drm_syncobj_timeline_wait with `deadline_nsec` (linux 6.8)",
        ]
    }
}

fn const_table() -> Vec<ValueSpec> {
    values! {
        checked [
            kfd::KFD_IOCTL_MAJOR_VERSION,
            kfd::KFD_IOC_QUEUE_TYPE_COMPUTE,
            kfd::KFD_IOC_QUEUE_TYPE_SDMA,
            kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
            kfd::KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
            kfd::KFD_MAX_QUEUE_PERCENTAGE,
            kfd::KFD_MAX_QUEUE_PRIORITY,
            kfd::KFD_MIN_QUEUE_RING_SIZE,
            kfd::KFD_IOC_CACHE_POLICY_COHERENT,
            kfd::KFD_IOC_CACHE_POLICY_NONCOHERENT,
            kfd::NUM_OF_SUPPORTED_GPUS,
            kfd::KFD_INVALID_FD,
            kfd::KFD_IOC_EVENT_SIGNAL,
            kfd::KFD_IOC_EVENT_NODECHANGE,
            kfd::KFD_IOC_EVENT_DEVICESTATECHANGE,
            kfd::KFD_IOC_EVENT_HW_EXCEPTION,
            kfd::KFD_IOC_EVENT_SYSTEM_EVENT,
            kfd::KFD_IOC_EVENT_DEBUG_EVENT,
            kfd::KFD_IOC_EVENT_PROFILE_EVENT,
            kfd::KFD_IOC_EVENT_QUEUE_EVENT,
            kfd::KFD_IOC_EVENT_MEMORY,
            kfd::KFD_IOC_WAIT_RESULT_COMPLETE,
            kfd::KFD_IOCTL_SVM_OP_SET_ATTR,
            kfd::KFD_IOCTL_SVM_OP_GET_ATTR,
            kfd::KFD_IOCTL_SVM_LOCATION_SYSMEM,
            kfd::KFD_IOCTL_SVM_LOCATION_UNDEFINED,
            kfd::KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
            kfd::KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
            kfd::KFD_IOCTL_SVM_ATTR_ACCESS,
            kfd::KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
            kfd::KFD_IOCTL_SVM_ATTR_NO_ACCESS,
            kfd::KFD_IOCTL_SVM_ATTR_SET_FLAGS,
            kfd::KFD_IOCTL_SVM_ATTR_CLR_FLAGS,
            kfd::KFD_IOCTL_SVM_ATTR_GRANULARITY,
            kfd::KFD_IOCTL_SVM_FLAG_HOST_ACCESS,
            kfd::KFD_IOCTL_SVM_FLAG_COHERENT,
            kfd::KFD_IOCTL_SVM_FLAG_HIVE_LOCAL,
            kfd::KFD_IOCTL_SVM_FLAG_GPU_RO,
            kfd::KFD_IOCTL_SVM_FLAG_GPU_EXEC,
            kfd::KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY,
            kfd::KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED,
            kfd::KFD_SMI_EVENT_VMFAULT,
            kfd::KFD_SMI_EVENT_MIGRATE_START,
            kfd::KFD_SMI_EVENT_MIGRATE_END,
            kfd::KFD_SMI_EVENT_ALL_PROCESS,
            kfd::KFD_SMI_EVENT_MSG_SIZE,
            kfd::KFD_MIGRATE_TRIGGER_PREFETCH,
            kfd::KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU,
            kfd::KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU,
            kfd::KFD_MIGRATE_TRIGGER_TTM_EVICTION,
            kfd::KFD_IOC_WAIT_RESULT_TIMEOUT,
            kfd::KFD_IOC_WAIT_RESULT_FAIL,
            kfd::KFD_SIGNAL_EVENT_LIMIT,
            kfd::KFD_HW_EXCEPTION_WHOLE_GPU_RESET,
            kfd::KFD_HW_EXCEPTION_PER_ENGINE_RESET,
            kfd::KFD_HW_EXCEPTION_GPU_HANG,
            kfd::KFD_HW_EXCEPTION_ECC,
            kfd::KFD_MEM_ERR_NO_RAS,
            kfd::KFD_MEM_ERR_SRAM_ECC,
            kfd::KFD_MEM_ERR_POISON_CONSUMED,
            kfd::KFD_MEM_ERR_GPU_HANG,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_GTT,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_COHERENT,
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED,
            kfd::AMDKFD_COMMAND_START,
            amdgpu::DRM_COMMAND_BASE,
            amdgpu::DRM_AMDGPU_GEM_CREATE,
            amdgpu::DRM_AMDGPU_GEM_MMAP,
            amdgpu::DRM_AMDGPU_CTX,
            amdgpu::DRM_AMDGPU_BO_LIST,
            amdgpu::DRM_AMDGPU_CS,
            amdgpu::DRM_AMDGPU_INFO,
            amdgpu::DRM_AMDGPU_GEM_METADATA,
            amdgpu::DRM_AMDGPU_GEM_WAIT_IDLE,
            amdgpu::DRM_AMDGPU_GEM_VA,
            amdgpu::DRM_AMDGPU_WAIT_CS,
            amdgpu::DRM_AMDGPU_GEM_OP,
            amdgpu::DRM_AMDGPU_GEM_USERPTR,
            amdgpu::AMDGPU_GEM_DOMAIN_CPU,
            amdgpu::AMDGPU_GEM_DOMAIN_GTT,
            amdgpu::AMDGPU_GEM_DOMAIN_VRAM,
            amdgpu::AMDGPU_GEM_DOMAIN_GDS,
            amdgpu::AMDGPU_GEM_DOMAIN_GWS,
            amdgpu::AMDGPU_GEM_DOMAIN_OA,
            amdgpu::AMDGPU_GEM_DOMAIN_MASK,
            amdgpu::AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
            amdgpu::AMDGPU_GEM_CREATE_NO_CPU_ACCESS,
            amdgpu::AMDGPU_GEM_CREATE_CPU_GTT_USWC,
            amdgpu::AMDGPU_GEM_CREATE_VRAM_CLEARED,
            amdgpu::AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS,
            amdgpu::AMDGPU_GEM_CREATE_VM_ALWAYS_VALID,
            amdgpu::AMDGPU_GEM_CREATE_EXPLICIT_SYNC,
            amdgpu::AMDGPU_GEM_METADATA_OP_SET_METADATA,
            amdgpu::AMDGPU_GEM_METADATA_OP_GET_METADATA,
            amdgpu::AMDGPU_VA_OP_MAP,
            amdgpu::AMDGPU_VA_OP_UNMAP,
            amdgpu::AMDGPU_VA_OP_CLEAR,
            amdgpu::AMDGPU_VA_OP_REPLACE,
            amdgpu::AMDGPU_VM_DELAY_UPDATE,
            amdgpu::AMDGPU_VM_PAGE_READABLE,
            amdgpu::AMDGPU_VM_PAGE_WRITEABLE,
            amdgpu::AMDGPU_VM_PAGE_EXECUTABLE,
            amdgpu::AMDGPU_VM_PAGE_PRT,
            amdgpu::AMDGPU_HW_IP_GFX,
            amdgpu::AMDGPU_HW_IP_COMPUTE,
            amdgpu::AMDGPU_HW_IP_DMA,
            amdgpu::AMDGPU_HW_IP_UVD,
            amdgpu::AMDGPU_HW_IP_VCE,
            amdgpu::AMDGPU_HW_IP_UVD_ENC,
            amdgpu::AMDGPU_HW_IP_VCN_DEC,
            amdgpu::AMDGPU_HW_IP_VCN_ENC,
            amdgpu::AMDGPU_HW_IP_VCN_JPEG,
            amdgpu::AMDGPU_HW_IP_NUM,
            amdgpu::AMDGPU_CTX_OP_ALLOC_CTX,
            amdgpu::AMDGPU_CTX_OP_FREE_CTX,
            amdgpu::AMDGPU_CTX_OP_QUERY_STATE,
            amdgpu::AMDGPU_CTX_OP_QUERY_STATE2,
            amdgpu::AMDGPU_BO_LIST_OP_CREATE,
            amdgpu::AMDGPU_BO_LIST_OP_DESTROY,
            amdgpu::AMDGPU_BO_LIST_OP_UPDATE,
            amdgpu::AMDGPU_CHUNK_ID_IB,
            amdgpu::AMDGPU_CHUNK_ID_FENCE,
            amdgpu::AMDGPU_CHUNK_ID_DEPENDENCIES,
            amdgpu::AMDGPU_CHUNK_ID_SYNCOBJ_IN,
            amdgpu::AMDGPU_CHUNK_ID_SYNCOBJ_OUT,
            amdgpu::AMDGPU_CHUNK_ID_BO_HANDLES,
            amdgpu::AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES,
            amdgpu::AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT,
            amdgpu::AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL,
            amdgpu::AMDGPU_IDS_FLAGS_FUSION,
            amdgpu::AMDGPU_IDS_FLAGS_PREEMPTION,
            amdgpu::AMDGPU_IDS_FLAGS_TMZ,
            amdgpu::AMDGPU_INFO_ACCEL_WORKING,
            amdgpu::AMDGPU_INFO_CRTC_FROM_ID,
            amdgpu::AMDGPU_INFO_HW_IP_INFO,
            amdgpu::AMDGPU_INFO_HW_IP_COUNT,
            amdgpu::AMDGPU_INFO_TIMESTAMP,
            amdgpu::AMDGPU_INFO_FW_VERSION,
            amdgpu::AMDGPU_INFO_NUM_BYTES_MOVED,
            amdgpu::AMDGPU_INFO_VRAM_USAGE,
            amdgpu::AMDGPU_INFO_GTT_USAGE,
            amdgpu::AMDGPU_INFO_GDS_CONFIG,
            amdgpu::AMDGPU_INFO_VRAM_GTT,
            amdgpu::AMDGPU_INFO_READ_MMR_REG,
            amdgpu::AMDGPU_INFO_DEV_INFO,
            amdgpu::AMDGPU_INFO_VIS_VRAM_USAGE,
            amdgpu::AMDGPU_INFO_NUM_EVICTIONS,
            amdgpu::AMDGPU_INFO_MEMORY,
            amdgpu::AMDGPU_INFO_VBIOS,
            amdgpu::AMDGPU_INFO_NUM_HANDLES,
            amdgpu::AMDGPU_INFO_SENSOR,
            amdgpu::AMDGPU_INFO_VRAM_LOST_COUNTER,
            amdgpu::AMDGPU_INFO_RAS_ENABLED_FEATURES,
            amdgpu::AMDGPU_INFO_VIDEO_CAPS,
            amdgpu::AMDGPU_INFO_FW_GMC,
            amdgpu::AMDGPU_INFO_FW_GFX_ME,
            amdgpu::AMDGPU_INFO_FW_GFX_PFP,
            amdgpu::AMDGPU_INFO_FW_GFX_CE,
            amdgpu::AMDGPU_INFO_FW_GFX_RLC,
            amdgpu::AMDGPU_INFO_FW_GFX_MEC,
            amdgpu::AMDGPU_INFO_FW_SMC,
            amdgpu::AMDGPU_INFO_FW_SDMA,
            amdgpu::AMDGPU_FAMILY_AI,
            amdgpu::AMDGPU_VRAM_TYPE_HBM,
            drm::DRM_CAP_PRIME,
            drm::DRM_CAP_SYNCOBJ,
            drm::DRM_CAP_SYNCOBJ_TIMELINE,
            drm::DRM_PRIME_CAP_IMPORT,
            drm::DRM_PRIME_CAP_EXPORT,
            drm::DRM_CLOEXEC,
            drm::DRM_RDWR,
            drm::DRM_SYNCOBJ_CREATE_SIGNALED,
            drm::DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
            drm::DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
            drm::DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED,
            drm::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
            drm::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
            drm::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
        ]
        newer [
            kfd::KFD_IOCTL_MINOR_VERSION = 17,
                "upstream include/uapi/linux/kfd_ioctl.h at KFD 1.17 (the system header is 1.11)",
            kfd::AMDKFD_COMMAND_END = 0x27,
                "KFD 1.17 (last ioctl AMDKFD_IOC_DBG_TRAP = 0x26; kfd_chardev.c dispatch range, rocm-internals.md §6)",
            kfd::KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID = 0x4, "KFD 1.17: KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID 0x4",
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT = 1 << 24, "kfd_ioctl.h 1.17: (1 << 24)",
            kfd::KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS_BEST_EFFORT = 1 << 23,
                "KFD 1.16: (1 << 23) (named ..._CONTIGUOUS in later kernels; libhsakmt keeps _CONTIGUOUS_BEST_EFFORT)",
            kfd::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK = 1, "KFD 1.14 kfd_ioctl.h",
            kfd::KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK = 2, "KFD 1.14 kfd_ioctl.h",
            drm::DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE = 1 << 1,
                "drm.h (1 << 1), 'drm/syncobj: Extend EXPORT_SYNC_FILE for timeline syncobjs'",
            drm::DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE = 1 << 1,
                "drm.h (1 << 1), 'drm/syncobj: Extend EXPORT_SYNC_FILE for timeline syncobjs'",
        ]
        grown []
    }
}

// ---------------------------------------------------------------------------------------------
// The probe
// ---------------------------------------------------------------------------------------------

fn c_source(structs: &[StructSpec], ioctls: &[ValueSpec], consts: &[ValueSpec]) -> String {
    let mut s = String::new();
    s.push_str(
        "/* Generated by kfd-ioctl/tests/abi.rs from its Rust-side table. Do not edit. */\n\
         #include <stddef.h>\n#include <stdio.h>\n#include <fcntl.h>\n\
         /* libdrm's drm.h first (-I/usr/include/libdrm), so that kfd_ioctl.h's\n\
          * #include <drm/drm.h> finds its include guard already defined. */\n\
         #include <drm.h>\n#include <amdgpu_drm.h>\n#include <linux/kfd_ioctl.h>\n\n\
         int main(void)\n{\n",
    );
    for (i, st) in structs.iter().enumerate() {
        if st.c.is_empty() {
            continue;
        }
        let t = st.c;
        writeln!(s, "    printf(\"S|{i}|%zu|%zu\\n\", sizeof({t}), (size_t)_Alignof({t}));").unwrap();
        for (j, f) in st.fields.iter().enumerate() {
            if f.fixed_offset.is_some() {
                continue;
            }
            let m = f.c;
            writeln!(
                s,
                "    printf(\"F|{i}|{j}|%zu|%zu|%zu\\n\", offsetof({t}, {m}), sizeof((({t} *)0)->{m}), \
                 (size_t)__alignof__((({t} *)0)->{m}));"
            )
            .unwrap();
        }
    }
    for (tag, list) in [("I", ioctls), ("C", consts)] {
        for (i, v) in list.iter().enumerate() {
            if v.c.is_empty() {
                continue;
            }
            // Truncate to the C expression's width: `(1 << 31)` is an int, and must read
            // 0x80000000 as it does in the 32-bit uapi field, not sign-extended.
            let n = v.c;
            writeln!(
                s,
                "    printf(\"{tag}|{i}|%llu\\n\", (unsigned long long)({n}) & (sizeof({n}) >= 8 ? ~0ULL : \
                 (1ULL << (8 * sizeof({n}))) - 1));"
            )
            .unwrap();
        }
    }
    s.push_str("    return 0;\n}\n");
    s
}

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi");
    std::fs::create_dir_all(&d).expect("create CARGO_TARGET_TMPDIR/abi");
    d
}

/// Compiles and runs the probe; panics (never skips) if the compiler or a header is missing.
fn run_probe(src: &str, dir: &Path) -> String {
    for (h, pkg) in HEADERS {
        assert!(
            Path::new(h).exists(),
            "ABI test needs {h} (Debian package {pkg}); it is missing. Install it: apt-get install {pkg}"
        );
    }
    // Debian's linux-libc-dev does not ship include/drm/ (libdrm-dev ships those uapi headers
    // under /usr/include/libdrm), but kfd_ioctl.h does `#include <drm/drm.h>`: point that name at
    // libdrm's drm.h, the one this probe checks.
    let shim = dir.join("shim");
    std::fs::create_dir_all(shim.join("drm")).expect("create shim dir");
    std::fs::write(shim.join("drm/drm.h"), "#include <drm.h>\n").expect("write shim drm/drm.h");
    let c = dir.join("abi_probe.c");
    let exe = dir.join("abi_probe");
    std::fs::write(&c, src).expect("write abi_probe.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I/usr/include/libdrm"])
        .arg(format!("-I{}", shim.display()))
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output()
        .unwrap_or_else(|e| panic!("ABI test needs a C compiler: running `{cc}` failed ({e}). Install gcc (CI does)."));
    assert!(
        out.status.success(),
        "compiling {} with `{cc}` failed:\n{}",
        c.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run abi_probe");
    assert!(run.status.success(), "abi_probe failed: {:?}", run.status);
    String::from_utf8(run.stdout).expect("probe output is UTF-8")
}

#[derive(Default)]
struct CLayout {
    size: usize,
    align: usize,
    fields: BTreeMap<usize, (usize, usize, usize)>, // field index -> (offset, size, align)
}

struct Probe {
    structs: BTreeMap<usize, CLayout>,
    ioctls: BTreeMap<usize, u64>,
    consts: BTreeMap<usize, u64>,
}

fn parse(out: &str) -> Probe {
    let mut p = Probe { structs: BTreeMap::new(), ioctls: BTreeMap::new(), consts: BTreeMap::new() };
    for line in out.lines() {
        let v: Vec<&str> = line.split('|').collect();
        let n = |i: usize| -> u64 { v[i].parse().unwrap_or_else(|_| panic!("bad probe line {line:?}")) };
        match v[0] {
            "S" => {
                let e = p.structs.entry(n(1) as usize).or_default();
                e.size = n(2) as usize;
                e.align = n(3) as usize;
            }
            "F" => {
                let e = p.structs.entry(n(1) as usize).or_default();
                e.fields.insert(n(2) as usize, (n(3) as usize, n(4) as usize, n(5) as usize));
            }
            "I" => {
                p.ioctls.insert(n(1) as usize, n(2));
            }
            "C" => {
                p.consts.insert(n(1) as usize, n(2));
            }
            _ => panic!("unexpected probe line {line:?}"),
        }
    }
    p
}

/// Every C member listed, in offset order, must tile the C struct: a gap is allowed only where it
/// is alignment padding (smaller than the next member's alignment, or than the struct's at the
/// end). A member missing from the table leaves a larger gap.
fn check_c_coverage(st: &StructSpec, c: &CLayout, errs: &mut Vec<String>) {
    if st.fixed_size.is_some() {
        return; // grown structs: the new tail is checked against the kernel-stated offsets
    }
    let mut members: Vec<(usize, usize, usize, &str)> =
        st.fields.iter().enumerate().filter_map(|(j, f)| c.fields.get(&j).map(|&(o, s, a)| (o, s, a, f.c))).collect();
    members.sort();
    let mut end = 0usize;
    for &(o, s, a, name) in &members {
        if o > end && o - end >= a {
            errs.push(format!(
                "{} ({}): {} bytes before `{name}` at offset {o} are not covered by the table \
                 (a member is missing)",
                st.rust,
                st.c,
                o - end
            ));
        }
        end = end.max(o + s);
    }
    if c.size > end && c.size - end >= c.align {
        errs.push(format!(
            "{} ({}): trailing {} bytes (offset {end}..{}) not covered by the table",
            st.rust,
            st.c,
            c.size - end,
            c.size
        ));
    }
}

#[test]
fn abi_matches_system_headers() {
    let structs = struct_table();
    let ioctls = ioctl_table();
    let consts = const_table();
    let dir = out_dir();
    let src = c_source(&structs, &ioctls, &consts);
    let probe = parse(&run_probe(&src, &dir));

    let mut errs: Vec<String> = Vec::new();
    let mut checked = (0usize, 0usize, 0usize, 0usize); // structs, fields, ioctls, consts

    for (i, st) in structs.iter().enumerate() {
        checked.0 += 1;
        let c = probe.structs.get(&i);
        if st.c.is_empty() || st.fixed_size.is_some() {
            assert!(!st.why.is_empty(), "table error: {} has a kernel-stated size but no source", st.rust);
        }
        // Size and alignment.
        match (st.fixed_size, c) {
            (Some(want), c) => {
                if st.size != want {
                    errs.push(format!("{}: size_of = {}, kernel source states {want} ({})", st.rust, st.size, st.why));
                }
                if let Some(c) = c {
                    if c.size >= want {
                        errs.push(format!(
                            "{}: marked as grown since the system header, but C sizeof = {} \
                             (not smaller than {want}); drop the override",
                            st.rust, c.size
                        ));
                    }
                }
            }
            (None, Some(c)) => {
                if st.size != c.size {
                    errs.push(format!("{}: size_of = {}, C sizeof({}) = {}", st.rust, st.size, st.c, c.size));
                }
            }
            (None, None) => errs.push(format!("{}: no C layout printed", st.rust)),
        }
        if let Some(c) = c.filter(|_| st.fixed_size.is_none()) {
            if st.align != c.align {
                errs.push(format!("{}: align_of = {}, C _Alignof({}) = {}", st.rust, st.align, st.c, c.align));
            }
            check_c_coverage(st, c, &mut errs);
        }
        // Fields.
        for (j, f) in st.fields.iter().enumerate() {
            checked.1 += 1;
            match (f.fixed_offset, c.and_then(|c| c.fields.get(&j))) {
                (Some(want), _) => {
                    if f.offset != want {
                        errs.push(format!(
                            "{}.{}: offset_of = {}, kernel source states {want} ({})",
                            st.rust, f.rust, f.offset, st.why
                        ));
                    }
                }
                (None, Some(&(off, size, _))) => {
                    if f.offset != off {
                        errs.push(format!(
                            "{}.{}: offset_of = {}, C offsetof({}, {}) = {off}",
                            st.rust, f.rust, f.offset, st.c, f.c
                        ));
                    }
                    if f.size != size {
                        errs.push(format!(
                            "{}.{}: field size = {}, C sizeof({}.{}) = {size}",
                            st.rust, f.rust, f.size, st.c, f.c
                        ));
                    }
                }
                (None, None) => errs.push(format!(
                    "table error: {}.{} has neither a C member nor a kernel-stated offset",
                    st.rust, f.rust
                )),
            }
        }
    }

    for (tag, list, got) in [("ioctl", &ioctls, &probe.ioctls), ("constant", &consts, &probe.consts)] {
        for (i, v) in list.iter().enumerate() {
            if tag == "ioctl" {
                checked.2 += 1;
            } else {
                checked.3 += 1;
            }
            match &v.expect {
                Expect::C => match got.get(&i) {
                    Some(&c) if c == v.value => {}
                    Some(&c) => errs.push(format!("{tag} {}: Rust {:#x}, C {} = {c:#x}", v.rust, v.value, v.c)),
                    None => errs.push(format!("{tag} {}: C printed nothing", v.rust)),
                },
                Expect::Fixed(want, why) => {
                    if v.value != *want {
                        errs.push(format!(
                            "{tag} {}: Rust {:#x}, kernel source states {want:#x} ({why})",
                            v.rust, v.value
                        ));
                    }
                }
                Expect::Grown(want, why) => {
                    if v.value != *want {
                        errs.push(format!(
                            "{tag} {}: Rust {:#x}, kernel source states {want:#x} ({why})",
                            v.rust, v.value
                        ));
                    }
                    match got.get(&i) {
                        Some(&c) if (c ^ v.value) & !IOC_SIZE_BITS == 0 && c != v.value => {}
                        Some(&c) => errs.push(format!(
                            "{tag} {}: Rust {:#x} and C {} = {c:#x} must differ in the size bits only",
                            v.rust, v.value, v.c
                        )),
                        None => errs.push(format!("{tag} {}: C printed nothing", v.rust)),
                    }
                }
            }
        }
    }

    // Drift guard: everything the crate lists for traces is covered by this table.
    let names: BTreeSet<String> = ioctls.iter().map(|v| v.rust.rsplit("::").next().unwrap().to_string()).collect();
    for (_, n) in kfd::KFD_IOCTLS.iter().chain(drm::DRM_IOCTLS).chain(amdgpu::AMDGPU_IOCTLS) {
        if !names.contains(*n) {
            errs.push(format!("ioctl {n} is defined by kfd-ioctl but not checked by tests/abi.rs"));
        }
    }
    let cnames: BTreeSet<String> = consts.iter().map(|v| v.rust.rsplit("::").next().unwrap().to_string()).collect();
    for (bit, n) in kfd::ALLOC_MEM_FLAG_NAMES {
        let full = format!("KFD_IOC_ALLOC_MEM_FLAGS_{n}");
        if !cnames.contains(&full) {
            errs.push(format!("constant {full} ({bit:#x}) is not checked by tests/abi.rs"));
        }
    }

    assert!(
        errs.is_empty(),
        "{} ABI mismatches (probe: {}):\n  {}",
        errs.len(),
        dir.join("abi_probe.c").display(),
        errs.join("\n  ")
    );
    eprintln!(
        "ABI ok: {} structs, {} fields, {} ioctls, {} constants checked",
        checked.0, checked.1, checked.2, checked.3
    );
}

/// The generated probe must be deterministic and list every table entry, so a change to the
/// table shows up in the C program.
#[test]
fn probe_source_covers_table() {
    let structs = struct_table();
    let ioctls = ioctl_table();
    let consts = const_table();
    let src = c_source(&structs, &ioctls, &consts);
    assert_eq!(src, c_source(&struct_table(), &ioctl_table(), &const_table()));
    for (i, st) in structs.iter().enumerate() {
        if !st.c.is_empty() {
            assert!(src.contains(&format!("\"S|{i}|")), "{} missing from probe", st.rust);
        }
    }
    for v in ioctls.iter().chain(&consts) {
        if !v.c.is_empty() {
            assert!(src.contains(&format!("({}) &", v.c)), "{} missing from probe", v.rust);
        }
    }
    // Sanity of the size-bits mask used for grown ioctls.
    assert_eq!(
        kfd::ioc_size(kfd::AMDKFD_IOC_CREATE_QUEUE) as u64,
        (kfd::AMDKFD_IOC_CREATE_QUEUE & IOC_SIZE_BITS) >> 16
    );
}
