//! Memory kinds built on the core's allocations: host registration (`hipHostRegister`),
//! managed-memory advice and prefetch, arrays, stream-ordered pools (`hipMallocAsync`). May call
//! [`crate::core`] and [`crate::abi`].

pub mod advice;
pub mod array;
pub mod hostreg;
pub mod mempool;
