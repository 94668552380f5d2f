//! Generic DRM uapi (`include/uapi/drm/drm.h`) used on the amdgpu render node: VERSION, caps,
//! GEM_CLOSE, PRIME and SYNCOBJ.
//!
//! The structs come from drm-ffi (its `drm_sys` bindings). The request numbers are ours, and all
//! ioctls go through `libc::ioctl` (drm-ffi's own wrappers use raw syscalls through rustix, which
//! an `LD_PRELOAD` kernel model cannot see). The kernel's `drm_ioctl` dispatches on `_IOC_NR`
//! alone and copies `min(user size, kernel size)`, so structs that grew upstream (e.g.
//! `drm_syncobj_wait.deadline_nsec`) interoperate with callers built against older headers.
#![allow(non_camel_case_types)]

use crate::kfd::Ioctl;
use core::mem::size_of;
use nix::{request_code_readwrite, request_code_write};

pub use drm_ffi::drm_sys::{
    drm_gem_close, drm_get_cap, drm_prime_handle, drm_set_client_cap, drm_syncobj_array, drm_syncobj_create,
    drm_syncobj_destroy, drm_syncobj_handle, drm_syncobj_timeline_array, drm_syncobj_timeline_wait,
    drm_syncobj_transfer, drm_syncobj_wait, drm_unique, drm_version, DRM_CAP_PRIME, DRM_CAP_SYNCOBJ,
    DRM_CAP_SYNCOBJ_TIMELINE, DRM_CLOEXEC, DRM_RDWR, DRM_SYNCOBJ_CREATE_SIGNALED,
    DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE,
    DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE,
    DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
};

/// `DRM_PRIME_CAP_IMPORT` / `DRM_PRIME_CAP_EXPORT` bits of `DRM_CAP_PRIME`.
pub const DRM_PRIME_CAP_IMPORT: u64 = 0x1;
pub const DRM_PRIME_CAP_EXPORT: u64 = 0x2;

/// The major number of DRM character devices; render nodes are minors 128 and up.
pub const DRM_MAJOR: u32 = 226;
pub const DRM_RENDER_MINOR_BASE: u32 = 128;

const D: u8 = b'd';
const fn sz<T>() -> usize {
    size_of::<T>()
}

pub const DRM_IOCTL_VERSION: Ioctl = request_code_readwrite!(D, 0x00, sz::<drm_version>());
pub const DRM_IOCTL_GET_UNIQUE: Ioctl = request_code_readwrite!(D, 0x01, sz::<drm_unique>());
pub const DRM_IOCTL_GEM_CLOSE: Ioctl = request_code_write!(D, 0x09, sz::<drm_gem_close>());
pub const DRM_IOCTL_GET_CAP: Ioctl = request_code_readwrite!(D, 0x0c, sz::<drm_get_cap>());
pub const DRM_IOCTL_SET_CLIENT_CAP: Ioctl = request_code_write!(D, 0x0d, sz::<drm_set_client_cap>());
pub const DRM_IOCTL_PRIME_HANDLE_TO_FD: Ioctl = request_code_readwrite!(D, 0x2d, sz::<drm_prime_handle>());
pub const DRM_IOCTL_PRIME_FD_TO_HANDLE: Ioctl = request_code_readwrite!(D, 0x2e, sz::<drm_prime_handle>());
pub const DRM_IOCTL_SYNCOBJ_CREATE: Ioctl = request_code_readwrite!(D, 0xBF, sz::<drm_syncobj_create>());
pub const DRM_IOCTL_SYNCOBJ_DESTROY: Ioctl = request_code_readwrite!(D, 0xC0, sz::<drm_syncobj_destroy>());
pub const DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD: Ioctl = request_code_readwrite!(D, 0xC1, sz::<drm_syncobj_handle>());
pub const DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE: Ioctl = request_code_readwrite!(D, 0xC2, sz::<drm_syncobj_handle>());
pub const DRM_IOCTL_SYNCOBJ_WAIT: Ioctl = request_code_readwrite!(D, 0xC3, sz::<drm_syncobj_wait>());
pub const DRM_IOCTL_SYNCOBJ_RESET: Ioctl = request_code_readwrite!(D, 0xC4, sz::<drm_syncobj_array>());
pub const DRM_IOCTL_SYNCOBJ_SIGNAL: Ioctl = request_code_readwrite!(D, 0xC5, sz::<drm_syncobj_array>());
pub const DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT: Ioctl = request_code_readwrite!(D, 0xCA, sz::<drm_syncobj_timeline_wait>());
pub const DRM_IOCTL_SYNCOBJ_QUERY: Ioctl = request_code_readwrite!(D, 0xCB, sz::<drm_syncobj_timeline_array>());
pub const DRM_IOCTL_SYNCOBJ_TRANSFER: Ioctl = request_code_readwrite!(D, 0xCC, sz::<drm_syncobj_transfer>());
pub const DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL: Ioctl =
    request_code_readwrite!(D, 0xCD, sz::<drm_syncobj_timeline_array>());

/// Every generic DRM request number this crate defines, with its uapi name.
pub const DRM_IOCTLS: &[(Ioctl, &str)] = &[
    (DRM_IOCTL_VERSION, "DRM_IOCTL_VERSION"),
    (DRM_IOCTL_GET_UNIQUE, "DRM_IOCTL_GET_UNIQUE"),
    (DRM_IOCTL_GEM_CLOSE, "DRM_IOCTL_GEM_CLOSE"),
    (DRM_IOCTL_GET_CAP, "DRM_IOCTL_GET_CAP"),
    (DRM_IOCTL_SET_CLIENT_CAP, "DRM_IOCTL_SET_CLIENT_CAP"),
    (DRM_IOCTL_PRIME_HANDLE_TO_FD, "DRM_IOCTL_PRIME_HANDLE_TO_FD"),
    (DRM_IOCTL_PRIME_FD_TO_HANDLE, "DRM_IOCTL_PRIME_FD_TO_HANDLE"),
    (DRM_IOCTL_SYNCOBJ_CREATE, "DRM_IOCTL_SYNCOBJ_CREATE"),
    (DRM_IOCTL_SYNCOBJ_DESTROY, "DRM_IOCTL_SYNCOBJ_DESTROY"),
    (DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD"),
    (DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE"),
    (DRM_IOCTL_SYNCOBJ_WAIT, "DRM_IOCTL_SYNCOBJ_WAIT"),
    (DRM_IOCTL_SYNCOBJ_RESET, "DRM_IOCTL_SYNCOBJ_RESET"),
    (DRM_IOCTL_SYNCOBJ_SIGNAL, "DRM_IOCTL_SYNCOBJ_SIGNAL"),
    (DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT"),
    (DRM_IOCTL_SYNCOBJ_QUERY, "DRM_IOCTL_SYNCOBJ_QUERY"),
    (DRM_IOCTL_SYNCOBJ_TRANSFER, "DRM_IOCTL_SYNCOBJ_TRANSFER"),
    (DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL"),
];
