//! Reading the caller's C memory: the in-pointer helpers every layer that takes user arrays
//! uses (the API's entry points, kernel argument arrays). Imports nothing of ours but the types.
//!
//! Layer `abi`: imports nothing of ours but the ABI itself.

use crate::abi::types::hipError_t;

fn check(cond: bool) -> Result<(), hipError_t> {
    if cond {
        Ok(())
    } else {
        Err(hipError_t::hipErrorInvalidValue)
    }
}

/// Reads a `T` through an in-pointer. Errors: `hipErrorInvalidValue` when it is null.
/// (Safe by the FFI contract: every caller passes a pointer it got from C.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn read_in<T>(p: *const T) -> Result<T, hipError_t> {
    check(!p.is_null())?;
    // SAFETY: non-null in-pointer from the caller, who promises it points to a readable `T`
    // (the HIP API contract); unaligned reads are tolerated.
    Ok(unsafe { p.read_unaligned() })
}

/// The `n` elements an in-pointer points to. Errors: `hipErrorInvalidValue` when it is null.
/// (Safe by the FFI contract, as [`read_in`]; `T` must be a plain C struct, aligned as C aligns it.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn slice_in<'a, T>(p: *const T, n: usize) -> Result<&'a [T], hipError_t> {
    check(!p.is_null() && p.is_aligned())?;
    // SAFETY: non-null, aligned array of `n` elements from the caller (HIP API contract), only
    // read during the call.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}
