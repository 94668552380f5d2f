//! hiprtc: compiles HIP C++ source at run time into an AMDGPU code object that
//! `hipModuleLoadData` loads.
//!
//! ROCm's hiprtc (clr `hipamd/src/hiprtc/hiprtcInternal.cpp`) drives clang in-process through
//! comgr. We have no comgr, so we run the HIP clang that is installed (Debian's `hipcc` package
//! brings `clang++-15` and the device libraries; a ROCm install brings `llvm/bin/clang++`). The
//! command is the one comgr builds: device-only, one target, `-O3 -std=c++14` and the user's options
//! after ours, so theirs win. clr pre-includes its builtin header `hiprtc_runtime.h`, made of HIP's
//! device headers; ours includes the installed ones (`PRELUDE_HEADERS`), so kernels see
//! `threadIdx`, `__global__`, `__half`, `hipComplex` and the device library without an
//! `#include`, as under clr.
//!
//! The link API (`hiprtcLink*`, [`Link`]) joins `-fgpu-rdc` bitcode, also from clang offload
//! bundles and archives of them, with `llvm-link` and compiles it for the device with the same
//! clang, as comgr's link and codegen actions do for clr.
//!
//! Compiles are cached on disk, keyed on the preprocessed source, the clang command and the
//! toolchain's files (src/kernels/rtc_cache.rs).
//!
//! Name expressions (`hiprtcAddNameExpression`) work as in clr: each adds a device global that
//! holds the expression's address; after the compile, that global's relocation in the code object
//! names the symbol, whose name is the lowered (mangled) one.
//!
//! Where the toolchain is found: `HIP_CLANG_PATH` (the directory of `clang++`, as `hipcc` reads
//! it), else `$ROCM_PATH/llvm/bin`, `/opt/rocm/llvm/bin`, the newest `/usr/lib/llvm-*/bin`, then
//! `clang++` on `PATH`. The HIP headers: the first of `$ROCM_PATH`, `/opt/rocm`, `/usr` that has
//! `include/hip/amd_detail/amd_hip_runtime.h`. The device library: `HIP_DEVICE_LIB_PATH`, else
//! the first of `$ROCM_PATH/amdgcn/bitcode`, `/opt/rocm/amdgcn/bitcode`,
//! `/usr/lib/<multiarch>/amdgcn/bitcode` that holds `ocml.bc`. `HIPRTC_COMPILE_OPTIONS_APPEND`
//! (clr's flag) adds options to every compile, `HIPRTC_LINK_OPTIONS_APPEND` to every link's codegen.
//!
//! Layer `kernels`: may call `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::rtc::hiprtcResult;
use crate::core::log::hipkfd_log;
use object::{Object, ObjectSymbol, RelocationTarget};
use std::ffi::{CString, OsString};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// What clr passes before the user's options (`RTCCompileProgram::RTCCompileProgram`).
const DEFAULT_OPTIONS: [&str; 5] = ["-O3", "-mcumode", "-std=c++14", "-Wno-gnu-line-marker", "-Wno-missing-prototypes"];

/// The file name clr gives a program created without one (`hiprtcCreateProgram`).
const UNNAMED: &str = "CompileSource";

/// ROCm's header-only libraries, by the top directory of their headers: rocThrust, hipCUB and
/// rocPRIM, which ROCm installs under `$ROCM_PATH/include` and Debian's packages do not (Debian
/// has rocPRIM alone, `librocprim-dev`).
const ROCM_HEADER_LIBRARIES: [(&str, &str); 3] =
    [("thrust/", "rocThrust"), ("hipcub/", "hipCUB"), ("rocprim/", "rocPRIM")];

/// What a failed compile's log says about headers of [`ROCM_HEADER_LIBRARIES`] that were not
/// found (clang: `fatal error: 'thrust/...' file not found`), for the error line: which library
/// is missing, where ROCm keeps it, and how CuPy's kernels get a stand-in (README, "CuPy"). Empty
/// when the log names none.
fn missing_rocm_headers(log: &str) -> String {
    let mut said = String::new();
    for (dir, library) in ROCM_HEADER_LIBRARIES {
        if log.lines().any(|l| l.contains("file not found") && l.contains(&format!("'{dir}"))) {
            said.push_str(&format!(
                "; {library}'s headers ({dir}...) were not found: ROCm installs them under $ROCM_PATH/include \
                 (this machine has none); add their directory with -I or HIPRTC_COMPILE_OPTIONS_APPEND"
            ));
            if dir == "thrust/" {
                said.push_str(" (for CuPy: the CCCL headers bundled in its wheel stand in, README \"CuPy\")");
            }
        }
    }
    said
}

/// The headers (under `<rocm>/include/hip/`) whose content clr's builtin `hiprtc_runtime.h`
/// holds (clr `hipamd/src/hiprtc/cmake/HIPRTC.cmake`, `generate_hiprtc_header`: the runtime and
/// `hip_bfloat16.h`; `CMakeLists.txt`, `HIPRTC_HEADERS`: fp16, complex, cooperative groups, math
/// constants), as of ROCm 6.0; those installed are pre-included.
const PRELUDE_HEADERS: [&str; 6] = [
    "hip_runtime.h",
    "hip_bfloat16.h",
    "hip_fp16.h",
    "hip_complex.h",
    "hip_cooperative_groups.h",
    "hip_math_constants.h",
];

/// How many of [`PRELUDE_HEADERS`] a HIP 5 hiprtc pre-includes: its builtin header (Debian's
/// libhiprtc-builtins.so.5) has the runtime, `hip_bfloat16` and `__half`, not complex numbers
/// (5.x's `hip_complex.h` overloads `float2`'s operators, which makes `f2 += f2` ambiguous): the
/// prelude pre-includes our [`HIP5_COMPLEX`] instead.
const PRELUDE_HEADERS_HIP5: usize = 3;

/// The `__hip_internal` type traits that HIP 6+ headers define for every HIP compile
/// (`amd_detail/host_defines.h`), where hiprtc programs use them in place of `<type_traits>`
/// (hip-tests rtc `Unit_hipRTC_Ptrdiff_t_Check`); HIP 5's headers have none, so on HIP 5 the
/// prelude gets the common ones.
const HIP5_TYPE_TRAITS: &str = r#"
namespace __hip_internal {
template <class T, T v> struct integral_constant {
  static constexpr T value = v;
  typedef T value_type;
  typedef integral_constant type;
  constexpr operator value_type() const { return value; }
  constexpr value_type operator()() const { return value; }
};
template <bool B> using bool_constant = integral_constant<bool, B>;
typedef bool_constant<true> true_type;
typedef bool_constant<false> false_type;
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
template <class T, class U> struct is_same : false_type {};
template <class T> struct is_same<T, T> : true_type {};
template <class T> struct is_integral : bool_constant<__is_integral(T)> {};
template <class T> struct is_floating_point : bool_constant<__is_floating_point(T)> {};
template <class T> struct is_arithmetic : bool_constant<__is_integral(T) || __is_floating_point(T)> {};
}
"#;

/// What clr's ROCm 6+ builtin header has and HIP 5's headers lack, appended to the prelude on
/// HIP 5 (hip-tests rtc `Unit_hiprtc_half_shuffle`, `Unit_hiprtc_half_shuffle_sync`):
/// `__hmax`/`__hmin` and their NaN-propagating `_nan` forms (CUDA's semantics: the plain ones
/// return the other operand for one NaN); the warp shuffles on `__half` and `__half2` (through
/// the 32-bit ones, which otherwise make the call ambiguous); `__activemask` and the `_sync`
/// shuffles (ROCm 7's: a 64-bit integer mask, static-asserted; every active lane takes part, as
/// the mask promises); and `__llvm_amdgcn_rcp_f16`, which 5.x's `hrcp`/`h2rcp` call but newer
/// device libraries (Debian's) no longer define (a link error without it).
const HIP5_DEVICE_ADDITIONS: &str = r#"
__device__ inline __half __hmax(__half a, __half b) { return __float2half(fmaxf(__half2float(a), __half2float(b))); }
__device__ inline __half __hmin(__half a, __half b) { return __float2half(fminf(__half2float(a), __half2float(b))); }
__device__ inline __half __hmax_nan(__half a, __half b) { return __hisnan(a) ? a : __hisnan(b) ? b : __hmax(a, b); }
__device__ inline __half __hmin_nan(__half a, __half b) { return __hisnan(a) ? a : __hisnan(b) ? b : __hmin(a, b); }
#define __HIPKFD_SHFL_HALF(name, Arg)                                                       \
  __device__ inline __half name(__half v, Arg x, int width = warpSize) {                   \
    return __ushort_as_half((unsigned short)name((int)__half_as_ushort(v), x, width));     \
  }                                                                                        \
  __device__ inline __half2 name(__half2 v, Arg x, int width = warpSize) {                 \
    return __builtin_bit_cast(__half2, name(__builtin_bit_cast(unsigned int, v), x, width)); \
  }
__HIPKFD_SHFL_HALF(__shfl, int)
__HIPKFD_SHFL_HALF(__shfl_up, unsigned int)
__HIPKFD_SHFL_HALF(__shfl_down, unsigned int)
__HIPKFD_SHFL_HALF(__shfl_xor, int)
#undef __HIPKFD_SHFL_HALF
__device__ inline unsigned long long __activemask() { return __builtin_amdgcn_read_exec(); }
#define __HIPKFD_SHFL_SYNC(name, plain, Arg)                                                 \
  template <class MaskT, class T>                                                          \
  __device__ inline T name(MaskT mask, T v, Arg x, int width = warpSize) {                 \
    static_assert(__hip_internal::is_integral<MaskT>::value && sizeof(MaskT) == 8,         \
                  "The mask must be a 64-bit integer.");                                   \
    return plain(v, x, width);                                                             \
  }
__HIPKFD_SHFL_SYNC(__shfl_sync, __shfl, int)
__HIPKFD_SHFL_SYNC(__shfl_up_sync, __shfl_up, unsigned int)
__HIPKFD_SHFL_SYNC(__shfl_down_sync, __shfl_down, unsigned int)
__HIPKFD_SHFL_SYNC(__shfl_xor_sync, __shfl_xor, int)
#undef __HIPKFD_SHFL_SYNC
extern "C" __device__ __attribute__((weak, const)) _Float16 __llvm_amdgcn_rcp_f16(_Float16 x) {
  return __builtin_amdgcn_rcph(x);
}
"#;

/// `<hip/hip_math_constants.h>` where the HIP headers lack it (HIP 5): CUDA's
/// `math_constants.h` set under HIP's names, as ROCm 6's `amd_hip_math_constants.h` defines
/// them (hip-tests rtc `Unit_Rtc_MathConstants_header` checks 93 of the 95). Written into the
/// compile's include directory and pre-included, like the headers that exist.
const HIP_MATH_CONSTANTS: &str = r#"#ifndef HIP_MATH_CONSTANTS_H
#define HIP_MATH_CONSTANTS_H
// single precision
#define HIP_INF_F            __int_as_float(0x7f800000U)
#define HIP_NAN_F            __int_as_float(0x7fffffffU)
#define HIP_MIN_DENORM_F     __int_as_float(0x00000001U)
#define HIP_MAX_NORMAL_F     __int_as_float(0x7f7fffffU)
#define HIP_NEG_ZERO_F       __int_as_float(0x80000000U)
#define HIP_ZERO_F           0.0F
#define HIP_ONE_F            1.0F
#define HIP_SQRT_HALF_F      0.707106781F
#define HIP_SQRT_HALF_HI_F   0.707106781F
#define HIP_SQRT_HALF_LO_F   1.210161749e-08F
#define HIP_SQRT_TWO_F       1.414213562F
#define HIP_THIRD_F          0.333333333F
#define HIP_PIO4_F           0.785398163F
#define HIP_PIO2_F           1.570796327F
#define HIP_3PIO4_F          2.356194490F
#define HIP_2_OVER_PI_F      0.636619772F
#define HIP_SQRT_2_OVER_PI_F 0.797884561F
#define HIP_PI_F             3.141592654F
#define HIP_L2E_F            1.442695041F
#define HIP_L2T_F            3.321928094F
#define HIP_LG2_F            0.301029996F
#define HIP_LGE_F            0.434294482F
#define HIP_LN2_F            0.693147181F
#define HIP_LNT_F            2.302585093F
#define HIP_LNPI_F           1.144729886F
#define HIP_TWO_TO_M126_F    1.175494351e-38F
#define HIP_TWO_TO_126_F     8.507059173e37F
#define HIP_NORM_HUGE_F      3.402823466e38F
#define HIP_TWO_TO_23_F      8388608.0F
#define HIP_TWO_TO_24_F      16777216.0F
#define HIP_TWO_TO_31_F      2147483648.0F
#define HIP_TWO_TO_32_F      4294967296.0F
#define HIP_REMQUO_BITS_F    3U
#define HIP_REMQUO_MASK_F    (~((~0U) << HIP_REMQUO_BITS_F))
#define HIP_TRIG_PLOSS_F     105615.0F
// double precision
#define HIP_INF              __longlong_as_double(0x7ff0000000000000ULL)
#define HIP_NAN              __longlong_as_double(0xfff8000000000000ULL)
#define HIP_NEG_ZERO         __longlong_as_double(0x8000000000000000ULL)
#define HIP_MIN_DENORM       __longlong_as_double(0x0000000000000001ULL)
#define HIP_ZERO             0.0
#define HIP_ONE              1.0
#define HIP_SQRT_TWO         1.4142135623730951e+0
#define HIP_SQRT_HALF        7.0710678118654757e-1
#define HIP_SQRT_HALF_HI     7.0710678118654757e-1
#define HIP_SQRT_HALF_LO     (-4.8336466567264567e-17)
#define HIP_THIRD            3.3333333333333333e-1
#define HIP_TWOTHIRD         6.6666666666666667e-1
#define HIP_PIO4             7.8539816339744828e-1
#define HIP_PIO4_HI          7.8539816339744828e-1
#define HIP_PIO4_LO          3.0616169978683830e-17
#define HIP_PIO2             1.5707963267948966e+0
#define HIP_PIO2_HI          1.5707963267948966e+0
#define HIP_PIO2_LO          6.1232339957367660e-17
#define HIP_3PIO4            2.3561944901923448e+0
#define HIP_2_OVER_PI        6.3661977236758138e-1
#define HIP_PI               3.1415926535897931e+0
#define HIP_PI_HI            3.1415926535897931e+0
#define HIP_PI_LO            1.2246467991473532e-16
#define HIP_SQRT_2PI         2.5066282746310007e+0
#define HIP_SQRT_2PI_HI      2.5066282746310007e+0
#define HIP_SQRT_2PI_LO      (-1.8328579980459167e-16)
#define HIP_SQRT_PIO2        1.2533141373155003e+0
#define HIP_SQRT_PIO2_HI     1.2533141373155003e+0
#define HIP_SQRT_PIO2_LO     (-9.1642899902295834e-17)
#define HIP_SQRT_2OPI        7.9788456080286536e-1
#define HIP_L2E              1.4426950408889634e+0
#define HIP_L2E_HI           1.4426950408889634e+0
#define HIP_L2E_LO           2.0355273740931033e-17
#define HIP_L2T              3.3219280948873622e+0
#define HIP_LG2              3.0102999566398120e-1
#define HIP_LG2_HI           3.0102999566398120e-1
#define HIP_LG2_LO           (-2.8037281277851704e-18)
#define HIP_LGE              4.3429448190325182e-1
#define HIP_LGE_HI           4.3429448190325182e-1
#define HIP_LGE_LO           1.09831965021676510e-17
#define HIP_LN2              6.9314718055994529e-1
#define HIP_LN2_HI           6.9314718055994529e-1
#define HIP_LN2_LO           2.3190468138462996e-17
#define HIP_LNT              2.3025850929940459e+0
#define HIP_LNT_HI           2.3025850929940459e+0
#define HIP_LNT_LO           (-2.1707562233822494e-16)
#define HIP_LNPI             1.1447298858494002e+0
#define HIP_LN2_X_1024       7.0978271289338397e+2
#define HIP_LN2_X_1025       7.1047586007394398e+2
#define HIP_LN2_X_1075       7.4513321910194122e+2
#define HIP_LG2_X_1024       3.0825471555991675e+2
#define HIP_LG2_X_1075       3.2360724533877976e+2
#define HIP_TWO_TO_23        8388608.0
#define HIP_TWO_TO_52        4503599627370496.0
#define HIP_TWO_TO_53        9007199254740992.0
#define HIP_TWO_TO_54        18014398509481984.0
#define HIP_TWO_TO_M54       5.5511151231257827e-17
#define HIP_TWO_TO_M1022     2.22507385850720140e-308
#define HIP_TRIG_PLOSS       2147483648.0
#define HIP_DBL2INT_CVT      6755399441055744.0
#endif
"#;

/// HIP 5's `__float2half_rz/rd/ru` round to nearest (5.x `amd_hip_fp16.h`); ROCm 6+ and CUDA
/// round as named (hip-tests rtc `Unit_hiprtc_fp16_header`: `__float2half_ru(3.1234)` is
/// 3.125). The prelude renames 5.x's before its headers ([`HIP5_FP16_RENAME`]) and defines
/// these after them: round to nearest, then one step of the half's bit pattern where that
/// went the wrong way (a half converts to float exactly, so the comparison is exact).
///
/// Three more of 5.x's half functions give wrong results with Debian's clang 15 and device
/// library, so the prelude replaces them the same way (hip-tests rtc `Unit_Rtc_fp16_header`,
/// indices 190, 208, 216): `hsin` and `h2sin` return NaN for every finite input (the device
/// library's `__ocml_sin_f16` selects NaN when `llvm.amdgcn.class.f16(|x|, 0x1f8)`, i.e. when
/// `x` is finite), and `h2rcp` (5.x's `__llvm_amdgcn_rcp_2f16`) comes out as the high lane's
/// reciprocal in both lanes. Ours compute through `sinf` and per-lane `hrcp`.
const HIP5_FP16_RENAME: &str = "#define __float2half_rz __hip5_float2half_rz\n\
                                #define __float2half_rd __hip5_float2half_rd\n\
                                #define __float2half_ru __hip5_float2half_ru\n\
                                #define hsin __hip5_hsin\n\
                                #define h2sin __hip5_h2sin\n\
                                #define h2rcp __hip5_h2rcp\n";
const HIP5_FP16_ROUNDING: &str = r#"
#undef __float2half_rz
#undef __float2half_rd
#undef __float2half_ru
#undef hsin
#undef h2sin
#undef h2rcp
__device__ inline __half hsin(__half x) { return __float2half(sinf(__half2float(x))); }
__device__ inline __half2 h2sin(__half2 x) { return __halves2half2(hsin(__low2half(x)), hsin(__high2half(x))); }
__device__ inline __half2 h2rcp(__half2 x) { return __halves2half2(hrcp(__low2half(x)), hrcp(__high2half(x))); }
// One step of a finite half's bits away from zero (+1) or towards it (-1); 0 has no sign to step
// towards, so a step up from a zero of either sign gives the smallest positive subnormal.
__host__ __device__ inline __half __hipkfd_half_step(__half h, float to) {
  unsigned short b = __half_as_ushort(h);
  float f = __half2float(h);
  if (f == 0.0f) return __ushort_as_half(to > 0.0f ? 0x0001 : 0x8001);
  bool away = (to > f) == (f > 0.0f);
  return __ushort_as_half((unsigned short)(away ? b + 1 : b - 1));
}
__host__ __device__ inline __half __float2half_rz(float x) {
  __half h = __float2half_rn(x);
  float f = __half2float(h);
  return (x == x && fabsf(f) > fabsf(x)) ? __hipkfd_half_step(h, 0.0f * x) : h;
}
__host__ __device__ inline __half __float2half_rd(float x) {
  __half h = __float2half_rn(x);
  return __half2float(h) > x ? __hipkfd_half_step(h, -__builtin_inff()) : h;
}
__host__ __device__ inline __half __float2half_ru(float x) {
  __half h = __float2half_rn(x);
  return __half2float(h) < x ? __hipkfd_half_step(h, __builtin_inff()) : h;
}
"#;

/// `<hip/hip_complex.h>` on HIP 5, in place of 5.x's: ROCm 6+'s content (clr
/// `amd_hip_complex.h`), the `hipFloatComplex`/`hipDoubleComplex`/`hipComplex` types and their
/// functions, without 5.x's operators on them. Those overload `float2`'s and `double2`'s own
/// operators, which makes `f2 += f2` ambiguous in every program once they are pre-included, and
/// `*` and `/` would multiply and divide as complex numbers where ROCm 6+ does it element-wise.
/// Written into each compile's include directory, so that it is found before 5.x's by `#include`
/// too (and 5.x's include guards keep that one out), and pre-included, as clr's builtin header
/// holds it (hip-tests rtc `Unit_Rtc_HipComplex_header`).
const HIP5_COMPLEX: &str = r#"#ifndef HIP_INCLUDE_HIP_HIP_COMPLEX_H
#define HIP_INCLUDE_HIP_HIP_COMPLEX_H
#define HIP_INCLUDE_HIP_AMD_DETAIL_HIP_COMPLEX_H
typedef float2 hipFloatComplex;
typedef double2 hipDoubleComplex;
typedef hipFloatComplex hipComplex;
#define __HIPKFD_COMPLEX(T, R, f)                                                             \
  __host__ __device__ static inline R hipCreal##f(T z) { return z.x; }                         \
  __host__ __device__ static inline R hipCimag##f(T z) { return z.y; }                         \
  __host__ __device__ static inline T hipConj##f(T z) { T c; c.x = z.x; c.y = -z.y; return c; } \
  __host__ __device__ static inline R hipCsqabs##f(T z) { return z.x * z.x + z.y * z.y; }      \
  __host__ __device__ static inline T __hipkfd_cplx##f(R x, R y) { T c; c.x = x; c.y = y; return c; } \
  __host__ __device__ static inline T hipCadd##f(T p, T q) { return __hipkfd_cplx##f(p.x + q.x, p.y + q.y); } \
  __host__ __device__ static inline T hipCsub##f(T p, T q) { return __hipkfd_cplx##f(p.x - q.x, p.y - q.y); } \
  __host__ __device__ static inline T hipCmul##f(T p, T q) {                                   \
    return __hipkfd_cplx##f(p.x * q.x - p.y * q.y, p.y * q.x + p.x * q.y);                   \
  }                                                                                          \
  __host__ __device__ static inline T hipCdiv##f(T p, T q) {                                   \
    R n = hipCsqabs##f(q);                                                                   \
    return __hipkfd_cplx##f((p.x * q.x + p.y * q.y) / n, (p.y * q.x - p.x * q.y) / n);       \
  }                                                                                          \
  __host__ __device__ static inline T hipCfma##f(T p, T q, T r) {                              \
    R re = p.x * q.x + r.x, im = q.x * p.y + r.y;                                            \
    return __hipkfd_cplx##f(re - p.y * q.y, im + p.x * q.y);                                 \
  }
__HIPKFD_COMPLEX(hipFloatComplex, float, f)
__HIPKFD_COMPLEX(hipDoubleComplex, double, )
#undef __HIPKFD_COMPLEX
__host__ __device__ static inline hipFloatComplex make_hipFloatComplex(float x, float y) { return __hipkfd_cplxf(x, y); }
__host__ __device__ static inline hipDoubleComplex make_hipDoubleComplex(double x, double y) { return __hipkfd_cplx(x, y); }
__host__ __device__ static inline hipComplex make_hipComplex(float x, float y) { return __hipkfd_cplxf(x, y); }
__host__ __device__ static inline float hipCabsf(hipFloatComplex z) { return sqrtf(hipCsqabsf(z)); }
__host__ __device__ static inline double hipCabs(hipDoubleComplex z) { return sqrt(hipCsqabs(z)); }
__host__ __device__ static inline hipFloatComplex hipComplexDoubleToFloat(hipDoubleComplex z) {
  return __hipkfd_cplxf((float)z.x, (float)z.y);
}
__host__ __device__ static inline hipDoubleComplex hipComplexFloatToDouble(hipFloatComplex z) {
  return __hipkfd_cplx((double)z.x, (double)z.y);
}
#endif
"#;

/// HIP 5's `hip_bfloat16` cannot be assigned a `float`; ROCm 6.1+'s has `operator=(float)`
/// (round to nearest even, as its `float` constructor; hip-tests rtc `Unit_Rtc_bfloat16_header`:
/// `x.operator=(11.6)` gives 16698). A member cannot be added from outside, so on HIP 5 the
/// prelude renames 5.x's struct before its headers ([`HIP5_BF16_RENAME`]) and defines
/// `hip_bfloat16` after them as that struct plus the member: same layout, 5.x's constructors,
/// and conversions both ways so that 5.x's operators (which take and return the renamed
/// struct) serve it.
const HIP5_BF16_RENAME: &str = "#define hip_bfloat16 __hip5_bfloat16\n";
const HIP5_BF16_ASSIGN: &str = r#"
#undef hip_bfloat16
struct hip_bfloat16 : __hip5_bfloat16 {
  using __hip5_bfloat16::__hip5_bfloat16;
  hip_bfloat16() = default;
  __host__ __device__ hip_bfloat16(const __hip5_bfloat16& b) : __hip5_bfloat16(b) {}
  __host__ __device__ hip_bfloat16& operator=(const __hip5_bfloat16& b) { data = b.data; return *this; }
  __host__ __device__ hip_bfloat16& operator=(float f) { data = round_to_bfloat16(f).data; return *this; }
};
static_assert(sizeof(hip_bfloat16) == 2, "hip_bfloat16 keeps 5.x's layout");
"#;

/// Prefix of the device globals that carry name expressions.
const NAME_EXPR_VAR: &str = "__hiprtc_name_expr_";

/// One `hiprtcProgram`: the source and headers given at creation, the name expressions, and what
/// the last `hiprtcCompileProgram` left (log, code object, lowered names).
pub struct Program {
    source: String,
    name: String,
    /// (include name, contents), written under the compile's include directory.
    headers: Vec<(String, String)>,
    /// (name expression as clr strips it, lowered name after a compile that resolved it).
    exprs: Vec<(String, Option<CString>)>,
    log: String,
    code: Vec<u8>,
    /// The last successful `-fgpu-rdc` compile's LLVM bitcode, empty otherwise.
    bitcode: Vec<u8>,
    /// Lowered names of earlier compiles: kept, since callers may still hold them (they live
    /// until hiprtcDestroyProgram).
    retired: Vec<CString>,
}

impl Program {
    /// `hiprtcCreateProgram`'s checks (clr `addSource`/`addHeader`): the source and every header
    /// non-empty, header names relative paths without `..`. Errors: `HIPRTC_ERROR_INVALID_INPUT`.
    pub fn new(source: String, name: Option<String>, headers: Vec<(String, String)>) -> Result<Program, hiprtcResult> {
        if source.is_empty() {
            return Err(hiprtcResult::HIPRTC_ERROR_INVALID_INPUT);
        }
        for (name, text) in &headers {
            let p = Path::new(name);
            let relative = p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            if name.is_empty() || text.is_empty() || !relative {
                return Err(hiprtcResult::HIPRTC_ERROR_INVALID_INPUT);
            }
        }
        let name = name.filter(|n| !n.is_empty()).unwrap_or_else(|| UNNAMED.to_owned());
        Ok(Program {
            source,
            name,
            headers,
            exprs: Vec::new(),
            log: String::new(),
            code: Vec::new(),
            bitcode: Vec::new(),
            retired: Vec::new(),
        })
    }

    /// `hiprtcAddNameExpression`: tracks `expr` (see [`strip_name_expression`]). Errors:
    /// `HIPRTC_ERROR_INVALID_INPUT` when nothing is left of it.
    pub fn add_name_expression(&mut self, expr: &str) -> Result<(), hiprtcResult> {
        let e = strip_name_expression(expr);
        if e.is_empty() {
            return Err(hiprtcResult::HIPRTC_ERROR_INVALID_INPUT);
        }
        if !self.exprs.iter().any(|(x, _)| *x == e) {
            self.exprs.push((e, None));
        }
        Ok(())
    }

    /// `hiprtcGetLoweredName`: the mangled name the last compile found for `expr`. Errors:
    /// `HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID` for an expression never added, or before a compile
    /// resolved it (clr's code).
    pub fn lowered_name(&self, expr: &str) -> Result<&CString, hiprtcResult> {
        let e = strip_name_expression(expr);
        self.exprs
            .iter()
            .find(|(x, _)| *x == e)
            .and_then(|(_, l)| l.as_ref())
            .ok_or(hiprtcResult::HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID)
    }

    /// The last compile's log (clang's diagnostics), empty before one.
    pub fn log(&self) -> &str {
        &self.log
    }

    /// The last successful compile's code object (an AMDGPU ELF), empty otherwise.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The last `-fgpu-rdc` compile's LLVM bitcode (`hiprtcGetBitcode`); `None` when the last
    /// compile was not one or failed.
    pub fn bitcode(&self) -> Option<&[u8]> {
        Some(&self.bitcode[..]).filter(|b| !b.is_empty())
    }

    /// `hiprtcCompileProgram`: compiles for the `--offload-arch=` (or nvcc's
    /// `--gpu-architecture=`) the options name, else for the current device's `gcnArchName`
    /// (`default_arch`); with `-fgpu-rdc`, to LLVM bitcode instead (clr's `compileToBitCode`).
    /// Errors: `HIPRTC_ERROR_COMPILATION` when no architecture or compiler is found or clang
    /// fails, with the reason in the log.
    pub fn compile(
        &mut self,
        options: &[String],
        default_arch: impl FnOnce() -> Option<String>,
    ) -> Result<(), hiprtcResult> {
        self.log.clear();
        self.code.clear();
        self.bitcode.clear();
        self.retired.extend(self.exprs.iter_mut().filter_map(|(_, l)| l.take()));
        let append = std::env::var("HIPRTC_COMPILE_OPTIONS_APPEND").unwrap_or_default();
        let mut user: Vec<String> = Vec::new();
        let mut arch = None;
        let mut prelude = true;
        for o in options.iter().map(String::as_str).chain(append.split_whitespace()) {
            if let Some(a) = o.strip_prefix("--offload-arch=").or_else(|| o.strip_prefix("--gpu-architecture=")) {
                arch.get_or_insert_with(|| a.to_owned());
            } else if o == "--hiprtc-no-builtin-header" {
                prelude = false;
            } else if o != "-hip-pch" {
                user.push(o.to_owned());
            }
        }
        let Some(arch) = arch.or_else(default_arch) else {
            self.log = "hiprtc: no GPU found to compile for: pass --offload-arch=<gfx...>\n".into();
            return Err(hiprtcResult::HIPRTC_ERROR_COMPILATION);
        };
        let Some(tc) = toolchain() else {
            self.log = "hiprtc: no HIP clang found: install Debian's hipcc or ROCm, or set HIP_CLANG_PATH to the \
                        directory of clang++\n"
                .into();
            return Err(hiprtcResult::HIPRTC_ERROR_COMPILATION);
        };
        let rdc = user.iter().any(|o| o == "-fgpu-rdc");
        self.run_clang(tc, &arch, &user, prelude, rdc).map_err(|e| {
            self.log.push_str(&e);
            hiprtcResult::HIPRTC_ERROR_COMPILATION
        })
    }

    /// Writes the source and headers to a fresh directory, runs clang, keeps its diagnostics as the
    /// log and its output as the code (the bitcode with `rdc`), and fills the lowered names from
    /// that output. Err: why the compile failed (appended to the log).
    fn run_clang(
        &mut self,
        tc: &Toolchain,
        arch: &str,
        user: &[String],
        prelude: bool,
        rdc: bool,
    ) -> Result<(), String> {
        let dir = tempfile::Builder::new()
            .prefix("hiprtc-")
            .tempdir()
            .map_err(|e| format!("hiprtc: temporary directory: {e}\n"))?;
        let include = dir.path().join("include");
        let own = |n: &str| self.headers.iter().any(|(name, _)| name == n);
        let added = tc.headers.iter().copied().filter(|(n, _)| prelude && !own(n));
        for (name, text) in self.headers.iter().map(|(n, t)| (n.as_str(), t.as_str())).chain(added) {
            let path = include.join(name);
            std::fs::create_dir_all(path.parent().unwrap_or(&include))
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|e| format!("hiprtc: header {name}: {e}\n"))?;
        }
        // `#line` names the program as the user did in diagnostics and __FILE__.
        let quoted = self.name.replace('\\', "\\\\").replace('"', "\\\"");
        let mut text = format!("#line 1 \"{quoted}\"\n{}\n", self.source);
        for (i, (e, _)) in self.exprs.iter().enumerate() {
            text.push_str(&format!(
                "#line {} \"hiprtc name expression\"\nextern \"C\" __device__ __attribute__((used)) const void* {NAME_EXPR_VAR}{i} = (const void*)&{e};\n",
                i + 1
            ));
        }
        // `--hiprtc-no-builtin-header` (clr): the program includes what it needs itself.
        let body = if prelude { tc.prelude.as_str() } else { "" };
        std::fs::write(dir.path().join("hiprtc_runtime.h"), body).map_err(|e| format!("hiprtc: prelude: {e}\n"))?;
        let src = dir.path().join("source.hip");
        let out = dir.path().join("code.o");
        std::fs::write(&src, text).map_err(|e| format!("hiprtc: source: {e}\n"))?;
        let mut args: Vec<OsString> =
            ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"].map(Into::into).into();
        args.push(format!("--offload-arch={arch}").into());
        args.push(format!("--rocm-path={}", tc.rocm.display()).into());
        if let Some(lib) = &tc.device_lib {
            args.push(format!("--hip-device-lib-path={}", lib.display()).into());
        }
        if let Some(v) = &tc.hip_version {
            args.push(format!("--hip-version={v}").into());
        }
        args.extend(DEFAULT_OPTIONS.map(Into::into));
        if ptrdiff_is_long_long(user) {
            args.extend(["-D__PTRDIFF_TYPE__=long long", "-Wno-builtin-macro-redefined"].map(Into::into));
        }
        args.extend(["-include".into(), dir.path().join("hiprtc_runtime.h").into(), "-I".into(), include.into()]);
        args.extend(user.iter().map(Into::into));
        if rdc {
            args.extend(["-c", "-emit-llvm"].map(Into::into));
        }
        let clang = |extra: &[&Path]| {
            let mut cmd = Command::new(&tc.clang);
            // clang's driver leaves an empty `source-XXXXXX` directory in $TMPDIR on every
            // compile; in ours it goes with the rest.
            cmd.env("TMPDIR", dir.path()).args(&args).args(extra).arg(&src);
            hipkfd_log!("hiprtc: {cmd:?}");
            cmd.output().map_err(|e| format!("hiprtc: running {}: {e}\n", tc.clang.display()))
        };
        // The cache's key needs the preprocessed source; a program that does not preprocess is
        // compiled (for its log) and not cached.
        let cache =
            crate::kernels::rtc_cache::Cache::from_env().filter(|_| !asks_llvm_to_print(user) && !saves_temps(user));
        let cached = cache.and_then(|c| {
            let pp = dir.path().join("source.ii");
            let run = clang(&[Path::new("-E"), Path::new("-o"), &pp]).ok()?;
            let text = std::fs::read(&pp).ok().filter(|_| run.status.success())?;
            Some((c, crate::kernels::rtc_cache::key(&tc.id, dir.path(), &args, &text)))
        });
        let output = match cached.as_ref().and_then(|(c, k)| c.load(k).map(|hit| (k, hit))) {
            Some((k, hit)) => {
                hipkfd_log!("hiprtc: cache hit {k}");
                self.log = hit.log;
                if rdc {
                    // The bitcode's names are read from the file.
                    std::fs::write(&out, &hit.output).map_err(|e| format!("hiprtc: output: {e}\n"))?;
                }
                hit.output
            }
            None => {
                let run = clang(&[Path::new("-o"), &out])?;
                self.log = String::from_utf8_lossy(&run.stderr).into_owned();
                self.log.push_str(&String::from_utf8_lossy(&run.stdout));
                if asks_llvm_to_print(user) {
                    use std::io::Write;
                    let _ = std::io::stderr().write_all(&run.stderr);
                }
                if !run.status.success() {
                    return Err(format!(
                        "hiprtc: compilation failed ({}){}\n",
                        run.status,
                        missing_rocm_headers(&self.log)
                    ));
                }
                let output = std::fs::read(&out).map_err(|e| format!("hiprtc: output: {e}\n"))?;
                if let Some((c, k)) = &cached {
                    if let Err(e) = c.store(k, &self.log, &output) {
                        hipkfd_log!("hiprtc: cache store {k}: {e}");
                    }
                }
                output
            }
        };
        if rdc {
            self.bitcode = output;
            self.resolve_names_in_bitcode(tc, &out);
            Ok(())
        } else {
            self.code = output;
            self.resolve_names()
        }
    }

    /// The lowered names of an `-fgpu-rdc` compile, from the bitcode at `bc` as `llvm-dis` (beside
    /// clang) prints it: `@__hiprtc_name_expr_<i> = ... global ptr @<name>` (or a cast of it).
    /// Without `llvm-dis` they stay unresolved, which the log says.
    fn resolve_names_in_bitcode(&mut self, tc: &Toolchain, bc: &Path) {
        if self.exprs.is_empty() {
            return;
        }
        let dis = tc.clang.with_file_name("llvm-dis");
        let ir = match Command::new(&dis).arg(bc).arg("-o").arg("-").output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            _ => {
                self.log.push_str(&format!("hiprtc: no {} to read name expressions from the bitcode\n", dis.display()));
                return;
            }
        };
        for (i, (_, lowered)) in self.exprs.iter_mut().enumerate() {
            let prefix = format!("@{NAME_EXPR_VAR}{i} = ");
            let target = ir.lines().find_map(|l| {
                let init = l.strip_prefix(&prefix)?.split_once(" global ")?.1;
                let name = init.split_once('@')?.1;
                let end = name.find(|c: char| !(c.is_ascii_alphanumeric() || "_.$".contains(c))).unwrap_or(name.len());
                Some(name[..end].to_owned())
            });
            *lowered = target.filter(|n| !n.is_empty()).and_then(|n| CString::new(n).ok());
        }
    }

    /// Fills the lowered names from the code object: `__hiprtc_name_expr_<i>` holds the address
    /// of expression i, through a dynamic relocation (`R_AMDGPU_RELATIVE64`'s addend, or
    /// `R_AMDGPU_ABS64`'s symbol); the function or object symbol there is the lowered name.
    /// Err: why the code object does not parse (for the log).
    fn resolve_names(&mut self) -> Result<(), String> {
        if self.exprs.is_empty() {
            return Ok(());
        }
        let file = object::File::parse(&*self.code).map_err(|e| format!("hiprtc: code object: {e}\n"))?;
        let symbols: Vec<_> = file.dynamic_symbols().chain(file.symbols()).collect();
        let named = |addr: u64| {
            symbols
                .iter()
                .filter(|s| s.address() == addr && s.is_definition() && !s.is_local())
                .filter_map(|s| s.name().ok())
                .find(|n| !n.ends_with(".kd") && !n.starts_with(NAME_EXPR_VAR))
                .map(str::to_owned)
        };
        let relocs: Vec<_> = file.dynamic_relocations().map(|r| r.collect()).unwrap_or_default();
        for (i, (_, lowered)) in self.exprs.iter_mut().enumerate() {
            let var = format!("{NAME_EXPR_VAR}{i}");
            let Some(at) = symbols.iter().find(|s| s.name() == Ok(var.as_str())).map(|s| s.address()) else {
                continue;
            };
            let target = relocs.iter().find(|(off, _)| *off == at).and_then(|(_, r)| match r.target() {
                RelocationTarget::Symbol(idx) => {
                    file.symbol_by_index(idx).ok().and_then(|s| s.name().ok().map(str::to_owned))
                }
                _ => named(r.addend() as u64),
            });
            *lowered = target.and_then(|n| CString::new(n).ok());
        }
        Ok(())
    }
}

/// What kind of input a link takes (`hiprtcJITInputType`, `hip/hiprtc.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkInput {
    /// `HIPRTC_JIT_INPUT_LLVM_BITCODE`: one LLVM bitcode module (an `-fgpu-rdc` compile's output).
    Bitcode,
    /// `HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE`: a clang offload bundle with bitcode per target
    /// (`clang -x hip -fgpu-rdc -c -emit-llvm`).
    BundledBitcode,
    /// `HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE`: an `ar` archive of such bundles.
    ArchiveOfBundledBitcode,
    /// `hipJitInputSpirv` (HIP's `hipLink*`): a SPIR-V module (`--offload-arch=amdgcnspirv`),
    /// bare or in a clang offload bundle. clr turns it into bitcode with comgr's SPIR-V
    /// translator; the toolchains we run have none, so a link of SPIR-V fails in
    /// [`Link::complete`] (its log says so).
    Spirv,
}

/// LLVM bitcode's magic, raw and in its wrapper (LLVM `BitcodeReader.cpp`, `isBitcode`).
const BITCODE_MAGIC: [&[u8]; 2] = [b"BC\xC0\xDE", b"\xDE\xC0\x17\x0B"];
/// An uncompressed clang offload bundle's magic (clang `OffloadBundler.cpp`).
const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// An `ar` archive's magic.
const ARCHIVE_MAGIC: &[u8] = b"!<arch>\n";
/// A SPIR-V module's first word, 0x07230203, little-endian (SPIR-V spec, "Magic Number").
const SPIRV_MAGIC: &[u8] = &[0x03, 0x02, 0x23, 0x07];

/// One `hiprtcLinkState`: the inputs added so far, the codegen options, and what the last
/// `hiprtcLinkComplete` left (log, code object).
///
/// clr links with comgr (`AMD_COMGR_ACTION_LINK_BC_TO_BC`, then codegen and lld); we run the same
/// steps with the tools beside the HIP clang: `llvm-link` joins the modules, and
/// `clang --target=amdgcn-amd-amdhsa -mcpu=<device> -nogpulib` compiles and links the result
/// (the device library is in the modules already: the HIP compile links it in).
pub struct Link {
    /// Options for the codegen step: `-O<n>`, then `HIPRTC_JIT_IR_TO_ISA_OPT_EXT`'s.
    codegen: Vec<String>,
    /// (name, kind, bytes) in the order added.
    inputs: Vec<(String, LinkInput, Vec<u8>)>,
    log: String,
    code: Vec<u8>,
}

impl Link {
    /// A link with these codegen options (`-O3` is clr's default level).
    pub fn new(codegen: Vec<String>) -> Link {
        Link { codegen, inputs: Vec::new(), log: String::new(), code: Vec::new() }
    }

    /// `hiprtcLinkAddData`/`hiprtcLinkAddFile`: adds `data`, which must start with its kind's
    /// magic. Errors: `HIPRTC_ERROR_PROGRAM_CREATION_FAILURE` when it does not (clr takes
    /// anything here and fails in `hiprtcLinkComplete`).
    pub fn add(&mut self, name: String, kind: LinkInput, data: Vec<u8>) -> Result<(), hiprtcResult> {
        let ok = match kind {
            LinkInput::Bitcode => BITCODE_MAGIC.iter().any(|m| data.starts_with(m)),
            LinkInput::BundledBitcode => data.starts_with(BUNDLE_MAGIC),
            LinkInput::ArchiveOfBundledBitcode => data.starts_with(ARCHIVE_MAGIC),
            LinkInput::Spirv => data.starts_with(SPIRV_MAGIC) || data.starts_with(BUNDLE_MAGIC),
        };
        if !ok {
            return Err(hiprtcResult::HIPRTC_ERROR_PROGRAM_CREATION_FAILURE);
        }
        self.inputs.push((name, kind, data));
        Ok(())
    }

    /// The last `complete`'s log (the tools' diagnostics and ours), empty before one.
    pub fn log(&self) -> &str {
        &self.log
    }

    /// `hiprtcLinkComplete`: links every input into one code object for `arch` (the current
    /// device's `gcnArchName`, as clr's `findIsa`), which lives until the next call or the
    /// link's destruction. From a bundle, the entry whose target ID fits `arch` is taken.
    /// Errors: `HIPRTC_ERROR_LINKING` when there is no input, no device, no toolchain, no entry
    /// for `arch`, or a tool fails; the log says which.
    pub fn complete(&mut self, arch: Option<String>) -> Result<&[u8], hiprtcResult> {
        self.log.clear();
        self.code.clear();
        let run = || -> Result<Vec<u8>, String> {
            let arch = arch.ok_or("hiprtc: no GPU found to link for\n")?;
            if self.inputs.is_empty() {
                return Err("hiprtc: nothing to link: add bitcode first\n".into());
            }
            let mut modules: Vec<&[u8]> = Vec::new();
            for (name, kind, data) in &self.inputs {
                let missing = || format!("hiprtc: {name}: no bitcode for {arch}\n");
                match kind {
                    LinkInput::Bitcode => modules.push(data),
                    LinkInput::BundledBitcode => modules.push(bundle_entry(data, &arch).ok_or_else(missing)?),
                    LinkInput::Spirv => {
                        return Err(format!(
                            "hiprtc: {name}: SPIR-V needs comgr's SPIR-V translator, which this runtime does not \
                             have: link LLVM bitcode (hiprtcLink*) instead\n"
                        ))
                    }
                    LinkInput::ArchiveOfBundledBitcode => {
                        let ar = object::read::archive::ArchiveFile::parse(&data[..])
                            .map_err(|e| format!("hiprtc: {name}: {e}\n"))?;
                        let before = modules.len();
                        for member in ar.members() {
                            let member = member.map_err(|e| format!("hiprtc: {name}: {e}\n"))?;
                            let bytes = member.data(&data[..]).map_err(|e| format!("hiprtc: {name}: {e}\n"))?;
                            modules.extend(bundle_entry(bytes, &arch));
                        }
                        if modules.len() == before {
                            return Err(missing());
                        }
                    }
                }
            }
            let tc = toolchain().ok_or("hiprtc: no HIP clang found to link with\n")?;
            let dir = tempfile::Builder::new()
                .prefix("hiprtc-link-")
                .tempdir()
                .map_err(|e| format!("hiprtc: temporary directory: {e}\n"))?;
            let mut inputs = Vec::new();
            for (i, m) in modules.iter().enumerate() {
                let path = dir.path().join(format!("input{i}.bc"));
                std::fs::write(&path, m).map_err(|e| format!("hiprtc: {}: {e}\n", path.display()))?;
                inputs.push(path);
            }
            let linked = dir.path().join("linked.bc");
            let out = dir.path().join("code.o");
            let append = std::env::var("HIPRTC_LINK_OPTIONS_APPEND").unwrap_or_default();
            let mut link = Command::new(tc.clang.with_file_name("llvm-link"));
            link.args(&inputs).arg("-o").arg(&linked);
            let mut codegen = Command::new(&tc.clang);
            codegen
                .args(["--target=amdgcn-amd-amdhsa", "-nogpulib"])
                .arg(format!("-mcpu={arch}"))
                .args(&self.codegen)
                .args(append.split_whitespace())
                .arg(&linked)
                .arg("-o")
                .arg(&out);
            for mut cmd in [link, codegen] {
                cmd.env("TMPDIR", dir.path());
                hipkfd_log!("hiprtc: {cmd:?}");
                let tool = cmd.get_program().to_string_lossy().into_owned();
                let run = cmd.output().map_err(|e| format!("hiprtc: running {tool}: {e}\n"))?;
                self.log.push_str(&String::from_utf8_lossy(&run.stderr));
                self.log.push_str(&String::from_utf8_lossy(&run.stdout));
                if !run.status.success() {
                    return Err(format!("hiprtc: {tool} failed ({})\n", run.status));
                }
            }
            std::fs::read(&out).map_err(|e| format!("hiprtc: output: {e}\n"))
        };
        match run() {
            Ok(code) => {
                self.code = code;
                Ok(&self.code)
            }
            Err(e) => {
                self.log.push_str(&e);
                Err(hiprtcResult::HIPRTC_ERROR_LINKING)
            }
        }
    }
}

/// The bitcode in an uncompressed clang offload bundle (`__CLANG_OFFLOAD_BUNDLE__`, then the
/// entry count and per entry its offset, size, and ID length and ID, all u64 little-endian;
/// clang `OffloadBundler.cpp`) whose ID is a HIP AMDGPU target that `arch` runs
/// (`hip-amdgcn-amd-amdhsa-gfx90a` from clang 15, `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+` from
/// later ones): the same processor, and each feature the entry names also in `arch` (`gfx90a:sramecc+:xnack+`). None: no such entry, or a malformed bundle.
fn bundle_entry<'a>(bundle: &'a [u8], arch: &str) -> Option<&'a [u8]> {
    let word = |at: usize| -> Option<usize> {
        let b = bundle.get(at..at.checked_add(8)?)?;
        usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok()
    };
    let slice = |at: usize, len: usize| bundle.get(at..at.checked_add(len)?);
    if !bundle.starts_with(BUNDLE_MAGIC) {
        return None;
    }
    let (want_proc, want_features) = arch.split_once(':').unwrap_or((arch, ""));
    let mut at = BUNDLE_MAGIC.len() + 8;
    for _ in 0..word(BUNDLE_MAGIC.len())? {
        let (offset, size, id_len) = (word(at)?, word(at + 8)?, word(at + 16)?);
        let id = std::str::from_utf8(slice(at + 24, id_len)?).ok()?;
        at = at + 24 + id_len;
        let Some((kind, target)) = id.split_once("-amdgcn-amd-amdhsa-") else { continue };
        let target = target.trim_start_matches('-');
        let (proc, features) = target.split_once(':').unwrap_or((target, ""));
        let fits = kind.starts_with("hip")
            && proc == want_proc
            && features.split(':').filter(|f| !f.is_empty()).all(|f| want_features.split(':').any(|w| w == f));
        if fits {
            return slice(offset, size);
        }
    }
    None
}

/// Whether the options define `__HIPRTC_PTRDIFF_T_IS_LONG_LONG__` to 1 (`-D<name>` alone defines
/// it to 1; the last `-D`/`-U` of it wins). clr's builtin header then typedefs `ptrdiff_t` as
/// `long long` (ROCm 6.1+, for Windows-compatible kernels; hip-tests rtc
/// `Unit_hipRTC_Ptrdiff_t_Check`); clang's `stddef.h` typedefs it from `__PTRDIFF_TYPE__`, so
/// [`Program::run_clang`] redefines that macro, which makes `::ptrdiff_t` and `std::ptrdiff_t`
/// alike `long long` (both 64-bit: no layout changes).
fn ptrdiff_is_long_long(options: &[String]) -> bool {
    const NAME: &str = "__HIPRTC_PTRDIFF_T_IS_LONG_LONG__";
    let mut on = false;
    let mut it = options.iter().map(String::as_str);
    while let Some(o) = it.next() {
        let (def, arg) = match o {
            "-D" | "-U" => (o == "-D", it.next().unwrap_or("")),
            _ if o.starts_with("-D") => (true, &o[2..]),
            _ if o.starts_with("-U") => (false, &o[2..]),
            _ => continue,
        };
        let (name, value) = arg.split_once('=').unwrap_or((arg, "1"));
        if name == NAME {
            on = def && value.trim() == "1";
        }
    }
    on
}

/// Whether the options ask LLVM itself to print (`-mllvm -print-after=...`, `-print-before`,
/// `-debug-only`, ...). Under clr, LLVM runs inside the process and prints such dumps to its
/// stderr, where programs capture them (hip-tests' rtc/RtcFunctions.cpp reads the IR that way);
/// here clang's stderr is then copied to ours as well as kept in the log.
fn asks_llvm_to_print(options: &[String]) -> bool {
    options.windows(2).any(|w| w[0] == "-mllvm" && (w[1].starts_with("-print-") || w[1].starts_with("-debug")))
}

/// Whether `options` ask clang to keep its intermediate files (`-save-temps`), which a compile
/// taken from the cache would not write.
fn saves_temps(options: &[String]) -> bool {
    options.iter().any(|o| o.starts_with("-save-temps"))
}

/// The key a name expression is tracked by: white space trimmed, parentheses around the whole
/// expression and then a leading `&` dropped (clr's `stripNamedExpression` drops the `&`), so
/// `"&k<1>"`, `"(&k<1>)"` and `"k<1>"` name the same expression.
fn strip_name_expression(expr: &str) -> String {
    let mut s = expr.trim();
    // Only a pair that encloses everything: not the two of `(a) + (b)`.
    let enclosed = |t: &str| {
        let mut depth = 0i32;
        t.starts_with('(')
            && t.ends_with(')')
            && t.char_indices().all(|(i, c)| {
                depth += (c == '(') as i32 - (c == ')') as i32;
                depth > 0 || i == t.len() - 1
            })
    };
    while enclosed(s) {
        s = s[1..s.len() - 1].trim();
    }
    s.strip_prefix('&').unwrap_or(s).trim().to_owned()
}

/// The HIP clang and where its headers and device library are.
struct Toolchain {
    clang: PathBuf,
    rocm: PathBuf,
    device_lib: Option<PathBuf>,
    /// `--hip-version=` from the headers' `hip/hip_version.h` (clang's HIP wrapper declares
    /// device `malloc`/`free` only when it knows the version is 4.5 or later).
    hip_version: Option<String>,
    /// The body of the pre-included `hiprtc_runtime.h`: an `#include` of each installed header
    /// that clr's builtin header holds (runtime, bfloat16, fp16, complex, cooperative groups,
    /// math constants).
    prelude: String,
    /// Headers the prelude includes that the HIP headers lack or that replace theirs, written
    /// into each compile's include directory (on HIP 5 `hip/hip_math_constants.h` and
    /// `hip/hip_complex.h`) unless the program brings its own of that name.
    headers: Vec<(&'static str, &'static str)>,
    /// Identifies clang, lld and the device library's files for the compile cache
    /// (`rtc_cache::toolchain_id`).
    id: Vec<u8>,
}

/// Found once per process (see the module doc for the order).
fn toolchain() -> Option<&'static Toolchain> {
    static TC: OnceLock<Option<Toolchain>> = OnceLock::new();
    TC.get_or_init(|| {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let rocm_env = env("ROCM_PATH");
        let mut bins: Vec<PathBuf> = env("HIP_CLANG_PATH").into_iter().collect();
        bins.extend(rocm_env.iter().map(|r| r.join("llvm/bin")));
        bins.push("/opt/rocm/llvm/bin".into());
        let mut llvm: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let v = e.file_name().to_str()?.strip_prefix("llvm-")?.parse().ok()?;
                Some((v, e.path().join("bin")))
            })
            .collect();
        llvm.sort_by_key(|e| std::cmp::Reverse(e.0));
        bins.extend(llvm.into_iter().map(|(_, p)| p));
        bins.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        let clang = bins.iter().map(|b| b.join("clang++")).find(|c| c.is_file())?;
        // The first that has HIP's device headers: not a hipkfd install tree (a user may point
        // ROCM_PATH at one for rocm-bindings-hip), whose hip_runtime.h is the host API alone.
        let rocm = rocm_env
            .iter()
            .cloned()
            .chain(["/opt/rocm".into(), "/usr".into()])
            .find(|p| p.join("include/hip/amd_detail/amd_hip_runtime.h").is_file())
            .unwrap_or_else(|| "/usr".into());
        let mut libs: Vec<PathBuf> = env("HIP_DEVICE_LIB_PATH").into_iter().collect();
        libs.extend(rocm_env.iter().map(|r| r.join("amdgcn/bitcode")));
        libs.push("/opt/rocm/amdgcn/bitcode".into());
        libs.push(format!("/usr/lib/{}-linux-gnu/amdgcn/bitcode", std::env::consts::ARCH).into());
        libs.push("/usr/lib/amdgcn/bitcode".into());
        let device_lib = libs.into_iter().find(|d| d.join("ocml.bc").is_file());
        let include = rocm.join("include/hip");
        let version = std::fs::read_to_string(include.join("hip_version.h")).unwrap_or_default();
        let define = |name: &str| {
            version.lines().find_map(|l| l.strip_prefix("#define ")?.strip_prefix(name)?.trim().parse::<u32>().ok())
        };
        let version = match (define("HIP_VERSION_MAJOR "), define("HIP_VERSION_MINOR "), define("HIP_VERSION_PATCH ")) {
            (Some(a), Some(b), Some(c)) => Some((a, b, c)),
            _ => None,
        };
        let hip_version = version.map(|(a, b, c)| format!("{a}.{b}.{c}"));
        let hip5 = version.is_some_and(|(major, _, _)| major < 6);
        let headers = if hip5 { &PRELUDE_HEADERS[..PRELUDE_HEADERS_HIP5] } else { &PRELUDE_HEADERS[..] };
        let mut prelude: String =
            headers.iter().filter(|h| include.join(h).is_file()).map(|h| format!("#include <hip/{h}>\n")).collect();
        let mut extra = vec![];
        if !prelude.is_empty() && !include.join("hip_math_constants.h").is_file() {
            extra.push(("hip/hip_math_constants.h", HIP_MATH_CONSTANTS));
            prelude.push_str("#include <hip/hip_math_constants.h>\n");
        }
        if hip5 && !prelude.is_empty() {
            extra.push(("hip/hip_complex.h", HIP5_COMPLEX));
            prelude.push_str("#include <hip/hip_complex.h>\n");
            prelude.push_str(HIP5_TYPE_TRAITS);
        }
        if hip5 && prelude.contains("hip_bfloat16.h") {
            prelude.insert_str(0, HIP5_BF16_RENAME);
            prelude.push_str(HIP5_BF16_ASSIGN);
        }
        if hip5 && prelude.contains("hip_fp16.h") {
            prelude.insert_str(0, HIP5_FP16_RENAME);
            prelude.push_str(HIP5_FP16_ROUNDING);
            prelude.push_str(HIP5_DEVICE_ADDITIONS);
        }
        hipkfd_log!(
            "hiprtc: clang {} rocm {} device library {device_lib:?} HIP {hip_version:?}",
            clang.display(),
            rocm.display()
        );
        let id =
            crate::kernels::rtc_cache::toolchain_id(&[&clang, &clang.with_file_name("ld.lld")], device_lib.as_deref());
        Some(Toolchain { clang, rocm, device_lib, hip_version, prelude, headers: extra, id })
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_rocthrust_header_is_named_in_the_error() {
        let log = "In file included from /tmp/x.cu:1:\n/v/cupy/complex/namespace.h:1:10: fatal error: \
                   'thrust/detail/config/namespace.h' file not found\n1 error generated when compiling for gfx90a.\n";
        let said = missing_rocm_headers(log);
        assert!(said.contains("rocThrust's headers (thrust/...) were not found"), "{said}");
        assert!(said.contains("HIPRTC_COMPILE_OPTIONS_APPEND") && said.contains("CuPy"), "{said}");
        assert!(!said.contains("hipCUB"), "{said}");
        assert!(missing_rocm_headers("x.cu:3:5: error: use of undeclared identifier 'thrust'\n").is_empty());
        assert!(missing_rocm_headers("fatal error: 'hipcub/hipcub.hpp' file not found").contains("hipCUB"));
    }

    #[test]
    fn name_expressions_strip_as_clr() {
        assert_eq!(strip_name_expression("&my_kernel<(int)3, float >"), "my_kernel<(int)3, float >");
        assert_eq!(strip_name_expression(" nontype_kernel<(2 + 3)> "), "nontype_kernel<(2 + 3)>");
        assert_eq!(strip_name_expression("(&N1::f)"), "N1::f");
        assert_eq!(strip_name_expression("(a) + (b)"), "(a) + (b)");
        assert_eq!(strip_name_expression("&"), "");
    }

    #[test]
    fn ptrdiff_macro_is_read_as_the_preprocessor_would() {
        let o = |v: &[&str]| ptrdiff_is_long_long(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert!(o(&["-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=1"]));
        assert!(o(&["-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__"]));
        assert!(o(&["-D", "__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=1", "-O2"]));
        assert!(!o(&["-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=0"]));
        assert!(!o(&["-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=1", "-U__HIPRTC_PTRDIFF_T_IS_LONG_LONG__"]));
        assert!(o(&["-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=0", "-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=1"]));
        assert!(!o(&["-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG___X=1", "-DOTHER=1", "-D"]));
    }

    #[test]
    fn creation_checks_source_and_headers() {
        let ok = Program::new("x".into(), None, vec![("a/b.h".into(), "int x;".into())]).unwrap();
        assert_eq!(ok.name, UNNAMED);
        for bad in [
            ("".to_owned(), "h".to_owned()),
            ("h".into(), "".into()),
            ("/abs.h".into(), "h".into()),
            ("../up.h".into(), "h".into()),
        ] {
            assert_eq!(Program::new("x".into(), None, vec![bad]).err(), Some(hiprtcResult::HIPRTC_ERROR_INVALID_INPUT));
        }
        assert_eq!(Program::new(String::new(), None, vec![]).err(), Some(hiprtcResult::HIPRTC_ERROR_INVALID_INPUT));
    }

    /// A clang offload bundle of (ID, bytes) entries, laid out as `OffloadBundler.cpp` writes it.
    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let header = BUNDLE_MAGIC.len() + 8 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut out = BUNDLE_MAGIC.to_vec();
        out.extend((entries.len() as u64).to_le_bytes());
        let mut offset = header;
        for (id, data) in entries {
            for w in [offset, data.len(), id.len()] {
                out.extend((w as u64).to_le_bytes());
            }
            out.extend(id.as_bytes());
            offset += data.len();
        }
        for (_, data) in entries {
            out.extend(*data);
        }
        out
    }

    #[test]
    fn bundle_entries_match_the_device_target_id() {
        let b = bundle(&[
            ("host-x86_64-pc-linux-gnu", b"host"),
            ("hip-amdgcn-amd-amdhsa-gfx1030", b"rdna2"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"xnack-on"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", b"xnack-off"),
        ]);
        assert_eq!(bundle_entry(&b, "gfx1030"), Some(&b"rdna2"[..]));
        assert_eq!(bundle_entry(&b, "gfx90a:sramecc+:xnack-"), Some(&b"xnack-off"[..]));
        assert_eq!(bundle_entry(&b, "gfx90a:sramecc-:xnack+"), Some(&b"xnack-on"[..]));
        assert_eq!(bundle_entry(&b, "gfx90a"), None, "a device without xnack+ runs neither gfx90a entry");
        assert_eq!(bundle_entry(&b, "gfx942"), None);
        // A feature-less entry runs anywhere on its processor; the host entry never matches.
        let any = bundle(&[("hip-amdgcn-amd-amdhsa-gfx90a", b"any")]);
        assert_eq!(bundle_entry(&any, "gfx90a:sramecc+:xnack-"), Some(&b"any"[..]));
        assert_eq!(bundle_entry(&bundle(&[("host-x86_64-pc-linux-gnu", b"h")]), "x86_64"), None);
        // Truncated or lying headers are no entry, never a panic.
        for cut in 0..b.len() {
            let _ = bundle_entry(&b[..cut], "gfx1030");
        }
        let mut lying = any.clone();
        lying[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(bundle_entry(&lying, "gfx90a"), None);
    }

    #[test]
    fn link_inputs_are_checked_and_a_link_needs_inputs_and_a_device() {
        let mut l = Link::new(vec!["-O3".into()]);
        let fail = Err(hiprtcResult::HIPRTC_ERROR_PROGRAM_CREATION_FAILURE);
        assert_eq!(l.add("t".into(), LinkInput::Bitcode, b"int x;".to_vec()), fail);
        assert_eq!(l.add("t".into(), LinkInput::BundledBitcode, b"BC\xC0\xDE".to_vec()), fail);
        assert_eq!(l.add("t".into(), LinkInput::ArchiveOfBundledBitcode, bundle(&[])), fail);
        assert_eq!(l.complete(Some("gfx90a".into())).err(), Some(hiprtcResult::HIPRTC_ERROR_LINKING));
        assert!(l.log().contains("nothing to link"), "{}", l.log());
        assert_eq!(l.add("w".into(), LinkInput::Bitcode, b"\xDE\xC0\x17\x0Bwrapped".to_vec()), Ok(()));
        assert_eq!(l.complete(None).err(), Some(hiprtcResult::HIPRTC_ERROR_LINKING));
        assert!(l.log().contains("no GPU"), "{}", l.log());
        // A bundle without this device's entry fails the link, naming the input.
        let mut l = Link::new(vec![]);
        l.add("b.bc".into(), LinkInput::BundledBitcode, bundle(&[("hip-amdgcn-amd-amdhsa-gfx1030", b"x")])).unwrap();
        assert_eq!(l.complete(Some("gfx90a".into())).err(), Some(hiprtcResult::HIPRTC_ERROR_LINKING));
        assert!(l.log().contains("b.bc: no bitcode for gfx90a"), "{}", l.log());
    }

    #[test]
    fn lowered_names_only_after_a_compile() {
        let mut p = Program::new("__global__ void k() {}".into(), Some("p.cu".into()), vec![]).unwrap();
        p.add_name_expression("&k").unwrap();
        assert_eq!(p.add_name_expression(" "), Err(hiprtcResult::HIPRTC_ERROR_INVALID_INPUT));
        assert_eq!(p.lowered_name("k").err(), Some(hiprtcResult::HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID));
        assert_eq!(p.compile(&[], || None), Err(hiprtcResult::HIPRTC_ERROR_COMPILATION));
        assert!(p.log().contains("--offload-arch"), "{}", p.log());
    }
}
