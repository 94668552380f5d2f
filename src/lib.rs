//! hipkfd: AMD's HIP runtime API for devices, memory, copies, streams and events, straight on
//! the Linux kernel's `/dev/kfd` and amdgpu render-node interface. Built as `libamdhip64.so.7`.

mod advice;
pub mod api;
mod aql;
mod array;
mod coexist;
mod copy;
mod device;
mod event;
mod event_page;
mod graph;
mod graph_mem;
mod hostcall;
mod hostreg;
mod interop;
mod ipc;
mod log;
mod memory;
mod mempool;
mod module;
mod peer;
mod queue;
mod rtc;
mod rtc_cache;
mod runtime;
mod signal;
mod stream;
pub(crate) mod va;
mod vmm;

/// The GPUs of the KFD topology as the runtime sees them (visible devices in ordinal order, with
/// their sysfs properties and io_links), for tools such as `hipkfd-info`; not part of the C ABI.
pub mod topology {
    pub use crate::device::{visible_gpus, TopologyGpu};
    pub use crate::peer::{IOLINK_TYPE_PCIE, IOLINK_TYPE_XGMI};
}
