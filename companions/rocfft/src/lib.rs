//! `librocfft.so.0` for a machine with hipkfd and no ROCm: a placeholder, not rocFFT.
//!
//! ROCm's builds of CuPy list `librocfft.so.0` as NEEDED by modules that call no rocFFT function
//! (`cupy_backends.cuda.api.runtime`, `driver`, `cupy.cuda.texture`, ...), so without some
//! `librocfft.so.0` `import cupy` fails. This library computes nothing: each entry point of
//! rocFFT's public API (ROCm/rocFFT `library/include/rocfft/rocfft.h`) that it exports returns
//! `rocfft_status_failure`, rocFFT's documented generic failure, and writes nothing through its
//! arguments; the first call says so on stderr. FFTs need ROCm's rocFFT (`cupy.fft` also needs
//! hipFFT, which hipkfd does not provide either).
//!
//! Where ROCm is installed, its library wins: the install tree keeps this one under
//! `lib/fallback/rocfft/`, which `hipkfd-env` adds to the loader's path only when the loader
//! finds no `librocfft.so.0` of its own (README, "CuPy").

use std::ffi::{c_char, c_double, c_int, c_void};
use std::sync::Once;

/// `rocfft_status_failure` (`rocfft_status`: success 0, failure 1, ...).
const ROCFFT_STATUS_FAILURE: c_int = 1;

/// Says once on stderr what this library is, then returns `rocfft_status_failure`.
fn failure(name: &str) -> c_int {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        eprintln!(
            "hipkfd: {name}: this librocfft.so.0 is hipkfd's placeholder, not rocFFT: every rocfft_* call \
             fails with rocfft_status_failure (install ROCm's rocFFT for FFTs)"
        )
    });
    ROCFFT_STATUS_FAILURE
}

/// `fn name(args) -> rocfft_status`, failing: see the crate documentation.
macro_rules! placeholder {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) -> c_int {
            let _ = ($($arg,)*);
            failure(stringify!($name))
        }
    )*};
}

type Handle = *mut c_void;

placeholder! {
    /// `rocfft_setup()`.
    fn rocfft_setup();
    /// `rocfft_cleanup()`.
    fn rocfft_cleanup();
    /// `rocfft_plan_create(plan, placement, transform_type, precision, dimensions, lengths,
    /// number_of_transforms, description)`: `*plan` is left as it was.
    fn rocfft_plan_create(plan: *mut Handle, placement: c_int, transform_type: c_int, precision: c_int,
        dimensions: usize, lengths: *const usize, number_of_transforms: usize, description: Handle);
    /// `rocfft_execute(plan, in_buffer, out_buffer, info)`: no buffer is read or written.
    fn rocfft_execute(plan: Handle, in_buffer: *mut *mut c_void, out_buffer: *mut *mut c_void, info: Handle);
    /// `rocfft_plan_destroy(plan)`.
    fn rocfft_plan_destroy(plan: Handle);
    /// `rocfft_plan_get_work_buffer_size(plan, size_in_bytes)`.
    fn rocfft_plan_get_work_buffer_size(plan: Handle, size_in_bytes: *mut usize);
    /// `rocfft_plan_get_print(plan)`.
    fn rocfft_plan_get_print(plan: Handle);
    /// `rocfft_plan_description_create(description)`.
    fn rocfft_plan_description_create(description: *mut Handle);
    /// `rocfft_plan_description_destroy(description)`.
    fn rocfft_plan_description_destroy(description: Handle);
    /// `rocfft_plan_description_set_scale_factor(description, scale_factor)`.
    fn rocfft_plan_description_set_scale_factor(description: Handle, scale_factor: c_double);
    /// `rocfft_plan_description_set_data_layout(description, in_array_type, out_array_type,
    /// in_offsets, out_offsets, in_strides_size, in_strides, in_distance, out_strides_size,
    /// out_strides, out_distance)`.
    fn rocfft_plan_description_set_data_layout(description: Handle, in_array_type: c_int, out_array_type: c_int,
        in_offsets: *const usize, out_offsets: *const usize, in_strides_size: usize, in_strides: *const usize,
        in_distance: usize, out_strides_size: usize, out_strides: *const usize, out_distance: usize);
    /// `rocfft_execution_info_create(info)`.
    fn rocfft_execution_info_create(info: *mut Handle);
    /// `rocfft_execution_info_destroy(info)`.
    fn rocfft_execution_info_destroy(info: Handle);
    /// `rocfft_execution_info_set_work_buffer(info, work_buffer, size_in_bytes)`.
    fn rocfft_execution_info_set_work_buffer(info: Handle, work_buffer: *mut c_void, size_in_bytes: usize);
    /// `rocfft_execution_info_set_stream(info, stream)`.
    fn rocfft_execution_info_set_stream(info: Handle, stream: *mut c_void);
    /// `rocfft_get_version_string(buf, len)`: `buf` is left as it was (this is no rocFFT version).
    fn rocfft_get_version_string(buf: *mut c_char, len: usize);
}
