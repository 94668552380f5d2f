//! The core runtime: the process's [`runtime::Runtime`] (the context object every layer extends
//! with `impl Runtime` blocks), devices and their properties, the VA manager, BOs and the
//! allocation registry, signals, SDMA queues, streams (legacy null-stream order), events, and
//! copies and fills. It may call only [`crate::abi`]; the layers above keep their state in the
//! runtime's feature slots ([`runtime::Feature`]) and in the typed slots of core objects
//! ([`runtime::Slot`]), which the core stores without naming their types.

pub mod caller;
pub mod coexist;
pub mod copy;
pub mod device;
pub mod device_props;
pub mod event;
pub mod log;
pub mod memory;
pub mod queue;
pub mod runtime;
pub mod signal;
pub mod small;
pub mod stream;
pub mod va;
pub mod wait;
