//! hipkfd: AMD's HIP runtime API for devices, memory, copies, streams and events, straight on
//! the Linux kernel's `/dev/kfd` and amdgpu render-node interface. Built as `libamdhip64.so.7`.

//! The layers, bottom to top; a module may name its own layer and those below it, never one
//! above (`tools/layers` checks it in `make lint`):
//! - [`abi`]: the C ABI types and codes (imports nothing of ours);
//! - [`core`]: the runtime object, devices, VA, allocations, signals, SDMA queues, streams,
//!   events, copies;
//! - [`mem`]: memory kinds on top of allocations: host registration, managed-memory advice,
//!   arrays, stream-ordered pools;
//! - [`share`]: the mission, memory shared across GPUs and processes: peer access, IPC, IPC
//!   event pages, VMM, external interop;
//! - [`kernels`]: code objects, AQL dispatch, hostcall, hiprtc;
//! - [`graph`]: graphs, stream capture and graph memory nodes;
//! - [`api`]: the `extern "C"` surface, one file per HIP API group.

pub mod abi;
pub mod api;
mod core;
mod graph;
mod kernels;
mod mem;
mod share;

/// The GPUs of the KFD topology as the runtime sees them (visible devices in ordinal order, with
/// their sysfs properties and io_links), for tools such as `hipkfd-info`; not part of the C ABI.
pub mod topology {
    pub use crate::core::device::{visible_gpus, TopologyGpu};
    pub use crate::share::peer::{IOLINK_TYPE_PCIE, IOLINK_TYPE_XGMI};
}
