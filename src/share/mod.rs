//! The mission: memory shared across GPUs and processes. Peer access and peer copies, IPC of
//! memory and events (dma-bufs, the fd server, IPC event pages), virtual memory management,
//! external memory and semaphores. May call [`crate::mem`], [`crate::core`] and [`crate::abi`].

pub mod event_page;
pub mod interop;
pub mod ipc;
pub mod peer;
pub mod vmm;
