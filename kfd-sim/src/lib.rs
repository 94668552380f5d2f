//! kfd-sim: a userspace model of the amdgpu KFD and render-node kernel interface.
//!
//! Loaded with `LD_PRELOAD` (usually by the `kfdsim run` launcher), it answers the ioctls and
//! mmaps of `/dev/kfd` and `/dev/dri/renderD*` and presents the KFD topology in sysfs.

pub mod calls;
pub mod faults;
#[cfg(not(test))]
pub(crate) mod interpose;
pub mod model;
pub mod session;
pub mod stats;
pub mod sysfs;
pub mod topology;
pub mod trace;
