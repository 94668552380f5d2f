//! Kernels: code objects and fat binaries, AQL dispatch, hostcall (device `printf`/`malloc`),
//! hiprtc and its cache. May call [`crate::share`], [`crate::mem`], [`crate::core`] and
//! [`crate::abi`].

pub mod aql;
pub mod hostcall;
pub mod module;
pub mod rtc;
pub mod rtc_cache;
