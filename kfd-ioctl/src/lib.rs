//! The amdgpu KFD and render-node uapi: `#[repr(C)]` structs, ioctl request numbers, mmap offsets
//! and flags (upstream `include/uapi/linux/kfd_ioctl.h` at KFD 1.17, `include/uapi/drm/amdgpu_drm.h`,
//! `include/uapi/drm/drm.h`), thin safe wrappers, and the SDMA packet encoders and decoder.
//!
//! Names are the kernel's, so a struct or constant can be set beside its uapi counterpart.

pub mod amdgpu;
pub mod drm;
pub mod kfd;
pub mod mmap;
pub mod sdma;
pub mod wrappers;

pub use kfd::{ioctl_name, Ioctl};
pub use wrappers::{Kfd, RenderNode};
