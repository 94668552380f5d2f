//! Small exports of clr's platform layer that compiled programs and tools call: the IEEE half
//! conversions `__gnu_f2h_ieee` / `__gnu_h2f_ieee` (clr `hip_platform.cpp`, for host code that
//! converts `_Float16` without compiler-rt), `__hipGetPCH` (hiprtc's precompiled header) and the
//! build description `amd_dbgapi_get_build_name` / `_git_hash` / `_build_id` (clr
//! `hip_global.cpp`, read by the debugger). None is declared in `hip_runtime_api.h`.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::HIP_VERSION_BUILD_ID;
use crate::api::common::write_out;
use std::ffi::{c_char, c_uint, CStr, CString};
use std::sync::OnceLock;

/// IEEE 754 binary32 → binary16, rounding to nearest, ties to even: values beyond the largest
/// half (65504) round to ±infinity from 65520 up, results below the smallest normal (2^-14)
/// become denormals (or ±0 under 2^-25), infinities stay infinities, and every NaN becomes the
/// quiet NaN `0x7e00` with its sign (clr's `__convert_float_to_half`).
pub fn f32_to_f16(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | if frac == 0 { 0x7c00 } else { 0x7e00 };
    }
    if exp == 0 {
        // Zero or a float denormal (< 2^-126): far below half's smallest denormal.
        return sign;
    }
    // The value is m × 2^(exp - 150) with a 24-bit significand m; in half it has the biased
    // exponent e (normal when e ≥ 1).
    let m = frac | 0x80_0000;
    let e = exp - 127 + 15;
    if e > 30 {
        return sign | 0x7c00;
    }
    // Drop 13 significand bits for a normal result, more for a denormal one; a carry out of
    // the rounding moves into the exponent field, up to infinity, as IEEE wants.
    let shift = (if e >= 1 { 13 } else { 14 - e }) as u32;
    if shift > 24 {
        return sign; // below half the smallest denormal
    }
    let q = m >> shift;
    let rest = m & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let rounded = q + u32::from(rest > half || (rest == half && q & 1 == 1));
    let magnitude = if e >= 1 { ((e as u32 - 1) << 10) + rounded } else { rounded };
    sign | magnitude as u16
}

/// IEEE 754 binary16 → binary32, exactly (every half is a float): denormals become normal
/// floats, infinities stay infinities, a NaN keeps its sign and payload with the quiet bit set
/// (what clr's `__convert_half_to_float` gives on x86-64).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // frac × 2^-24: shift the leading one into the implicit bit.
            let shift = frac.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | (((frac << shift) & 0x3ff) << 13)
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// `unsigned short __gnu_f2h_ieee(float f)`: [`f32_to_f16`].
#[no_mangle]
pub extern "C" fn __gnu_f2h_ieee(f: f32) -> u16 {
    f32_to_f16(f)
}

/// `float __gnu_h2f_ieee(unsigned short h)`: [`f16_to_f32`].
#[no_mangle]
pub extern "C" fn __gnu_h2f_ieee(h: u16) -> f32 {
    f16_to_f32(h)
}

/// `void __hipGetPCH(const char** pch, unsigned int* size)`: the precompiled HIP header clr
/// embeds for hiprtc. hipkfd embeds none (its hiprtc compiles without one): `*pch` = null,
/// `*size` = 0; a null pointer is skipped.
#[no_mangle]
pub extern "C" fn __hipGetPCH(pch: *mut *const c_char, size: *mut c_uint) {
    if !pch.is_null() {
        let _ = write_out(pch, std::ptr::null());
    }
    if !size.is_null() {
        let _ = write_out(size, 0);
    }
}

/// What [`amd_dbgapi_get_build_name`] returns: `"hipkfd <version>"`.
const BUILD_NAME: &CStr =
    match CStr::from_bytes_with_nul(concat!("hipkfd ", env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("build name"),
    };

/// `const char* amd_dbgapi_get_build_name(void)`: the build's name (clr:
/// `HIP_VERSION_BUILD_NAME`): `"hipkfd 0.1.0"`. Static.
#[no_mangle]
pub extern "C" fn amd_dbgapi_get_build_name() -> *const c_char {
    BUILD_NAME.as_ptr()
}

/// `const char* amd_dbgapi_get_git_hash(void)`: the commit built (clr: `HIP_VERSION_GITHASH`):
/// `HIPKFD_GIT_HASH` from the build's environment (a packager's choice, e.g.
/// `HIPKFD_GIT_HASH=$(git rev-parse --short HEAD) make build`), else `""`; read at compile time
/// only, so commits do not force rebuilds. Static.
#[no_mangle]
pub extern "C" fn amd_dbgapi_get_git_hash() -> *const c_char {
    static HASH: OnceLock<CString> = OnceLock::new();
    HASH.get_or_init(|| CString::new(option_env!("HIPKFD_GIT_HASH").unwrap_or("")).unwrap_or_default()).as_ptr()
}

/// `size_t amd_dbgapi_get_build_id(void)`: the build number (clr: `HIP_VERSION_BUILD_ID`): 0,
/// the header's `HIP_VERSION_BUILD_ID` (hipkfd builds are not numbered).
#[no_mangle]
pub extern "C" fn amd_dbgapi_get_build_id() -> usize {
    HIP_VERSION_BUILD_ID as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The half `h` as an f64, from its fields (independent of [`f16_to_f32`]).
    fn half_value(h: u16) -> f64 {
        let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
        let e = i32::from((h >> 10) & 0x1f);
        let f = f64::from(h & 0x3ff);
        match e {
            0 => s * f * 2f64.powi(-24),
            0x1f if f == 0.0 => s * f64::INFINITY,
            0x1f => f64::NAN,
            _ => s * (1024.0 + f) * 2f64.powi(e - 25),
        }
    }

    /// Round-to-nearest-even binary16 of a finite float, by search: the two neighbouring halves
    /// and their distances (exact in f64), ties to the even significand, overflow from 65520.
    fn reference_f2h(f: f32) -> u16 {
        let sign = if f.is_sign_negative() { 0x8000 } else { 0 };
        let x = f64::from(f.abs());
        if x >= 65520.0 {
            return sign | 0x7c00;
        }
        // Largest non-negative half ≤ x (halves 0..=0x7bff increase with their bits).
        let (mut lo, mut hi) = (0u16, 0x7bffu16);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if half_value(mid) <= x {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let below = lo;
        if half_value(below) == x {
            return sign | below;
        }
        let above = below + 1; // 0x7c00 (infinity) stands for 65536 here
        let (d_lo, d_hi) = (x - half_value(below), half_value(above).min(65536.0) - x);
        let pick = if d_lo < d_hi || (d_lo == d_hi && below & 1 == 0) { below } else { above };
        sign | pick
    }

    #[test]
    fn every_half_round_trips() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            let v = half_value(h);
            if v.is_nan() {
                assert!(f.is_nan(), "{h:#06x}");
                assert_eq!(f.to_bits() & 0x8000_0000 != 0, h & 0x8000 != 0, "{h:#06x}: sign");
                assert_eq!(f.to_bits() & 0x7f_ffff, 0x40_0000 | (u32::from(h & 0x3ff) << 13), "{h:#06x}: payload");
                assert_eq!(f32_to_f16(f), (h & 0x8000) | 0x7e00, "{h:#06x}");
            } else {
                assert_eq!(f64::from(f), v, "{h:#06x}");
                assert_eq!(f.is_sign_negative(), h & 0x8000 != 0, "{h:#06x}: sign");
                assert_eq!(f32_to_f16(f), h, "{h:#06x} -> {f:e}");
            }
        }
    }

    #[test]
    fn selected_floats() {
        let p2 = |e: i32| 2f32.powi(e);
        let cases: &[(f32, u16)] = &[
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (1.0 / 3.0, 0x3555),
            (65504.0, 0x7bff),
            (65520.0 - 1.0 / 256.0, 0x7bff), // just under the overflow threshold
            (65520.0, 0x7c00),               // the tie between 65504 and 65536 goes to the even: infinity
            (1.0e6, 0x7c00),                 // overflow
            (-1.0e6, 0xfc00),
            (f32::MAX, 0x7c00),
            (f32::INFINITY, 0x7c00),
            (f32::NEG_INFINITY, 0xfc00),
            (1.0 + 1.0 / 2048.0, 0x3c00), // tie between 0x3c00 and 0x3c01: even
            (1.0 + 3.0 / 2048.0, 0x3c02), // tie between 0x3c01 and 0x3c02: even
            (1.0 + 1.0 / 2048.0 + 1.0 / 65536.0, 0x3c01), // just above the tie
            (p2(-14), 0x0400),            // 2^-14, the smallest normal
            (1023.0 * p2(-24), 0x03ff),   // the largest denormal
            (p2(-24), 0x0001),            // 2^-24, the smallest denormal
            (p2(-25), 0x0000),            // 2^-25: the tie with 0 goes to the even (0)
            (p2(-25) * (1.0 + f32::EPSILON), 0x0001), // just above 2^-25
            (3.0 * p2(-25), 0x0002),      // 3 × 2^-25: tie between 1 and 2 goes to 2
            (-p2(-24), 0x8001),
            (1.0e-10, 0x0000), // underflow to 0
            (-1.0e-10, 0x8000),
            (f32::from_bits(1), 0x0000), // float denormal
            (f32::NAN, 0x7e00),
            (-f32::NAN, 0xfe00),
            (f32::from_bits(0x7f80_0001), 0x7e00), // signalling NaN
        ];
        for &(f, h) in cases {
            assert_eq!(__gnu_f2h_ieee(f), h, "{f:e} ({:#010x})", f.to_bits());
            if !f.is_nan() {
                assert_eq!(reference_f2h(f), h, "reference, {f:e}");
            }
        }
        assert_eq!(__gnu_h2f_ieee(0x3555), 1365.0 / 4096.0);
        assert_eq!(__gnu_h2f_ieee(0x0001), p2(-24));
        assert_eq!(__gnu_h2f_ieee(0xfc00), f32::NEG_INFINITY);
        assert_eq!(__gnu_h2f_ieee(0x7e00).to_bits(), 0x7fc0_0000);
    }

    /// Floats spread over every exponent, and every tie and its neighbours between two halves,
    /// against the search above.
    #[test]
    fn floats_match_the_reference() {
        let mut bits = 0u32;
        while let Some(next) = bits.checked_add(65_521) {
            let f = f32::from_bits(bits);
            if !f.is_nan() {
                assert_eq!(f32_to_f16(f), reference_f2h(f), "{bits:#010x}");
            }
            bits = next;
        }
        for h in 0..0x7bffu16 {
            let mid = ((half_value(h) + half_value(h + 1)) / 2.0) as f32; // exact: 12 bits
            for f in [mid, f32::from_bits(mid.to_bits() - 1), f32::from_bits(mid.to_bits() + 1), -mid] {
                assert_eq!(f32_to_f16(f), reference_f2h(f), "between {h:#06x} and the next: {f:e}");
            }
        }
    }

    #[test]
    fn build_description() {
        // SAFETY: static NUL-terminated strings.
        let name = unsafe { CStr::from_ptr(amd_dbgapi_get_build_name()) }.to_str().unwrap();
        assert_eq!(name, concat!("hipkfd ", env!("CARGO_PKG_VERSION")));
        // SAFETY: as above.
        let hash = unsafe { CStr::from_ptr(amd_dbgapi_get_git_hash()) }.to_str().unwrap();
        assert!(hash.is_empty() || (hash.len() >= 7 && hash.bytes().all(|b| b.is_ascii_hexdigit())), "{hash}");
        assert_eq!(amd_dbgapi_get_build_id(), 0);
        let mut pch: *const c_char = c"x".as_ptr();
        let mut size: c_uint = 7;
        __hipGetPCH(&mut pch, &mut size);
        assert!(pch.is_null());
        assert_eq!(size, 0);
        __hipGetPCH(std::ptr::null_mut(), std::ptr::null_mut());
    }
}
