//! hipkfd: AMD's HIP runtime API for devices, memory, copies, streams and events, straight on
//! the Linux kernel's `/dev/kfd` and amdgpu render-node interface. Built as `libamdhip64.so.7`.

pub mod api;
mod copy;
mod device;
mod event;
mod event_page;
mod hostreg;
mod interop;
mod ipc;
mod log;
mod memory;
mod mempool;
mod peer;
mod queue;
mod runtime;
mod signal;
mod stream;
pub(crate) mod va;
mod vmm;
