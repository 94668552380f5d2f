//! The `extern "C"` surface: one file per HIP API group, each entry point thin (validate, then
//! call the core), in clr's grouping. Parameter names are AMD's.
#![allow(non_snake_case)]

pub mod array;
pub mod common;
pub mod context;
pub mod device;
pub mod error;
pub mod event;
pub mod gl;
pub mod graph;
pub mod hmm;
pub mod interop;
pub mod ipc;
pub mod library;
pub mod memory;
pub mod mempool;
pub mod module;
pub mod occupancy;
pub mod peer;
pub mod platform;
pub mod rtc;
pub mod spt;
pub mod stream;
pub mod texture;
pub mod tracing;
pub mod vmm;
