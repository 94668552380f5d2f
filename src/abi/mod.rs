//! The C ABI: the types, enums, constants and error codes of the HIP runtime API as ROCm 7
//! defines them. Owns no state and imports nothing of ours; every layer may use it.

pub mod api_id;
pub mod ffi;
pub mod rtc;
pub mod types;
