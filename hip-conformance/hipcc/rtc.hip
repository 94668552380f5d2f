/* hiprtc (HIP 5.2 exports it from libamdhip64): compile a kernel template and a __device__
 * variable from source at run time, with a header given at creation and -D options; lowered names
 * of name expressions; load the code object with hipModuleLoadData and launch it, results checked;
 * a failing compile's log; -fgpu-rdc bitcode; clr's error codes, and INVALID_PROGRAM where clr
 * would crash; nothing left behind in $TMPDIR; the compile cache (HIPKFD_RTC_CACHE_DIR): a hit,
 * a miss after a header on disk changed, HIPKFD_RTC_CACHE=0. */
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

/* ROCm 5.3+ (HIP 5.2's hiprtc.h predates them). */
extern "C" hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char* bitcode);
extern "C" hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t* bitcode_size);

#define CHECK_RTC(call, code)                                                       \
  do {                                                                              \
    hiprtcResult r_ = (call);                                                       \
    if (r_ == (code)) {                                                             \
      g_passed++;                                                                   \
    } else {                                                                        \
      g_failed++;                                                                   \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__,   \
              #call, hiprtcGetErrorString(r_), hiprtcGetErrorString(code));         \
    }                                                                               \
  } while (0)
#define CHECK_RTC_OK(call) CHECK_RTC(call, HIPRTC_SUCCESS)

static const char* kHeader =
    "template <typename T> __device__ T twice(T x) { return x + x; }\n";

/* No #include <hip/hip_runtime.h>: hiprtc provides threadIdx and __global__. */
static const char* kSource =
    "#include \"ops/twice.h\"\n"
    "__device__ float scale = 1.0f;\n"
    "template <typename T>\n"
    "__global__ void axpy(T a, const T* x, T* y, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = twice(a) * scale * x[i] + y[i] + OFFSET;\n"
    "}\n"
    "namespace ns { __global__ void plain(int* p) { *p = __LINE__; } }\n";

static unsigned sign_of(float f) {
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return u >> 31;
}

/* The entries of directory `dir` other than . and .., or -1. */
static int entries(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent* e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* Compiles `source` with `opt`, loads it and runs its `extern "C" k(int*)` once → what k wrote
 * (-1 on any failure). */
static int compile_and_run(const char* source, const char* opt) {
  hiprtcProgram p = NULL;
  int v = -1;
  size_t n = 0;
  char* code = NULL;
  hipModule_t m = NULL;
  hipFunction_t f = NULL;
  int* d = NULL;
  void* args[] = {&d};
  if (hiprtcCreateProgram(&p, source, "cached.cu", 0, NULL, NULL) != HIPRTC_SUCCESS) return -1;
  int ok = hiprtcCompileProgram(p, 1, &opt) == HIPRTC_SUCCESS && hiprtcGetCodeSize(p, &n) == HIPRTC_SUCCESS &&
           (code = (char*)malloc(n)) && hiprtcGetCode(p, code) == HIPRTC_SUCCESS &&
           hipModuleLoadData(&m, code) == hipSuccess && hipModuleGetFunction(&f, m, "k") == hipSuccess &&
           hipMalloc((void**)&d, sizeof v) == hipSuccess &&
           hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) == hipSuccess &&
           hipMemcpy(&v, d, sizeof v, hipMemcpyDeviceToHost) == hipSuccess;
  if (!ok) v = -1;
  if (d) hipFree(d);
  if (m) hipModuleUnload(m);
  free(code);
  hiprtcDestroyProgram(&p);
  return v;
}

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The path of the one entry of `dir` (its only file), or "" when it has not exactly one. */
static void only_entry(const char* dir, char* path, size_t size) {
  path[0] = 0;
  DIR* d = opendir(dir);
  if (!d) return;
  int n = 0;
  for (struct dirent* e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && n++ == 0) snprintf(path, size, "%s/%s", dir, e->d_name);
  closedir(d);
  if (n != 1) path[0] = 0;
}

static char* log_of(hiprtcProgram p) {
  size_t n = 0;
  if (hiprtcGetProgramLogSize(p, &n) != HIPRTC_SUCCESS || n == 0) return NULL;
  char* log = (char*)malloc(n);
  if (hiprtcGetProgramLog(p, log) != HIPRTC_SUCCESS) log[0] = 0;
  return log;
}

int main(void) {
  check_bound_to_expected_library((void*)&hiprtcCreateProgram);
  /* Every compile and link below runs with a TMPDIR of its own; at the end it must be empty
   * (clang's driver leaves a directory in $TMPDIR per compile, and hiprtc must clean it up). */
  char tmpdir[] = "/tmp/rtc-tmpdir-XXXXXX";
  CHECK(mkdtemp(tmpdir) != NULL);
  setenv("TMPDIR", tmpdir, 1);
  /* A compile cache of the test's own, so that the compiles below run clang. */
  char cache[] = "/tmp/rtc-cache-XXXXXX";
  CHECK(mkdtemp(cache) != NULL);
  setenv("HIPKFD_RTC_CACHE_DIR", cache, 1);

  int major = -1, minor = -1;
  CHECK_RTC_OK(hiprtcVersion(&major, &minor));
  CHECK(major == 9 && minor == 0);
  CHECK_RTC(hiprtcVersion(NULL, &minor), HIPRTC_ERROR_INVALID_INPUT);
  CHECK(strcmp(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION), "HIPRTC_ERROR_COMPILATION") == 0);
  CHECK(hiprtcGetErrorString((hiprtcResult)12345) != NULL);

  /* Creation checks (clr hiprtc.cpp). */
  hiprtcProgram p = NULL;
  const char* headers[] = {kHeader};
  const char* names[] = {"ops/twice.h"};
  CHECK_RTC(hiprtcCreateProgram(NULL, kSource, "axpy.cu", 0, NULL, NULL), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC(hiprtcCreateProgram(&p, NULL, "axpy.cu", 0, NULL, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcCreateProgram(&p, "", "axpy.cu", 0, NULL, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcCreateProgram(&p, kSource, "axpy.cu", -1, NULL, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcCreateProgram(&p, kSource, "axpy.cu", 1, NULL, names), HIPRTC_ERROR_INVALID_INPUT);
  CHECK(p == NULL);
  CHECK_RTC_OK(hiprtcCreateProgram(&p, kSource, "axpy.cu", 1, headers, names));
  CHECK(p != NULL);

  /* Name expressions: a kernel template instance (with and without '&') and a variable. */
  const char* lowered = NULL;
  CHECK_RTC_OK(hiprtcAddNameExpression(p, "axpy<float>"));
  CHECK_RTC_OK(hiprtcAddNameExpression(p, "&scale"));
  CHECK_RTC_OK(hiprtcAddNameExpression(p, "ns::plain"));
  CHECK_RTC(hiprtcAddNameExpression(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcAddNameExpression(NULL, "axpy<float>"), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC(hiprtcGetLoweredName(p, "axpy<float>", &lowered), HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID);

  /* Compile for the current device (no --offload-arch), OFFSET from -D. */
  const char* opts[] = {"-DOFFSET=0.5f"};
  CHECK_RTC(hiprtcCompileProgram(p, 1, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcCompileProgram(p, -1, opts), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC_OK(hiprtcCompileProgram(p, 1, opts));
  char* log = log_of(p);
  CHECK(log != NULL);
  if (log && log[0]) fprintf(stderr, "compile log: %s\n", log);
  free(log);

  CHECK_RTC_OK(hiprtcGetLoweredName(p, "axpy<float>", &lowered));
  CHECK(lowered && strcmp(lowered, "_Z4axpyIfEvT_PKS0_PS0_j") == 0);
  const char* same = NULL;
  CHECK_RTC_OK(hiprtcGetLoweredName(p, "&axpy<float>", &same));
  CHECK(same == lowered);
  const char* var = NULL;
  CHECK_RTC_OK(hiprtcGetLoweredName(p, "scale", &var));
  CHECK(var && strcmp(var, "scale") == 0);
  const char* plain = NULL;
  CHECK_RTC_OK(hiprtcGetLoweredName(p, "ns::plain", &plain));
  CHECK(plain && strcmp(plain, "_ZN2ns5plainEPi") == 0);
  CHECK_RTC(hiprtcGetLoweredName(p, "axpy<double>", &lowered), HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID);
  CHECK_RTC(hiprtcGetLoweredName(p, "axpy<float>", NULL), HIPRTC_ERROR_INVALID_INPUT);

  size_t code_size = 0;
  CHECK_RTC_OK(hiprtcGetCodeSize(p, &code_size));
  CHECK(code_size > 64);
  CHECK_RTC(hiprtcGetCodeSize(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcGetCode(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  char* code = (char*)malloc(code_size);
  CHECK_RTC_OK(hiprtcGetCode(p, code));
  CHECK(memcmp(code, "\177ELF", 4) == 0);

  /* Load and run it: y = 2a * scale * x + y + 0.5, with scale set to 3 through the lowered name. */
  hipModule_t m = NULL;
  hipFunction_t f = NULL, fp = NULL;
  CHECK_OK(hipModuleLoadData(&m, code));
  CHECK_OK(hipModuleGetFunction(&f, m, lowered));
  CHECK_OK(hipModuleGetFunction(&fp, m, plain));
  hipDeviceptr_t scale_ptr = 0;
  size_t scale_size = 0;
  CHECK_OK(hipModuleGetGlobal(&scale_ptr, &scale_size, m, var));
  CHECK(scale_size == sizeof(float));
  float three = 3.0f;
  CHECK_OK(hipMemcpyHtoD(scale_ptr, &three, sizeof three));

  enum { N = 1000 };
  float hx[N], hy[N];
  for (int i = 0; i < N; i++) { hx[i] = (float)i; hy[i] = 1.0f; }
  float *dx = NULL, *dy = NULL;
  CHECK_OK(hipMalloc((void**)&dx, sizeof hx));
  CHECK_OK(hipMalloc((void**)&dy, sizeof hy));
  CHECK_OK(hipMemcpy(dx, hx, sizeof hx, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(dy, hy, sizeof hy, hipMemcpyHostToDevice));
  float a = 2.0f;
  unsigned n = N;
  void* args[] = {&a, &dx, &dy, &n};
  CHECK_OK(hipModuleLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK_OK(hipMemcpy(hy, dy, sizeof hy, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += hy[i] != 12.0f * (float)i + 1.5f;
  CHECK(bad == 0);
  int* dline = NULL;
  int line = 0;
  CHECK_OK(hipMalloc((void**)&dline, sizeof line));
  void* pargs[] = {&dline};
  CHECK_OK(hipModuleLaunchKernel(fp, 1, 1, 1, 1, 1, 1, 0, NULL, pargs, NULL));
  CHECK_OK(hipMemcpy(&line, dline, sizeof line, hipMemcpyDeviceToHost));
  CHECK(line == 8); /* __LINE__ counts the program's own lines. */
  CHECK_OK(hipModuleUnload(m));
  CHECK_OK(hipFree(dx));
  CHECK_OK(hipFree(dy));
  CHECK_OK(hipFree(dline));
  free(code);

  /* Destroyed: the handle is dead. */
  CHECK_RTC_OK(hiprtcDestroyProgram(&p));
  CHECK_RTC(hiprtcDestroyProgram(&p), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC(hiprtcDestroyProgram(NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcGetCodeSize(p, &code_size), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC(hiprtcCompileProgram(p, 0, NULL), HIPRTC_ERROR_INVALID_PROGRAM);
  /* A null argument is INVALID_INPUT whatever the handle: clr checks it first (hip-tests
   * rtc/linker.cc passes an uninitialised program). */
  CHECK_RTC(hiprtcGetCodeSize(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcGetBitcodeSize(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcGetBitcode(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcGetProgramLogSize(p, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcAddNameExpression(p, NULL), HIPRTC_ERROR_INVALID_INPUT);

  /* A failing compile: HIPRTC_ERROR_COMPILATION, clang's diagnostics in the log under the
   * program's name, no code. An explicit --offload-arch (nvcc's spelling) is taken. */
  hipDeviceProp_t props;
  CHECK_OK(hipGetDeviceProperties(&props, 0));
  char arch[300];
  snprintf(arch, sizeof arch, "--gpu-architecture=%s", props.gcnArchName);
  const char* arch_opt[] = {arch};
  hiprtcProgram q = NULL;
  CHECK_RTC_OK(hiprtcCreateProgram(&q, "__global__ void k(int* p) { *p = undeclared; }\n", "bad.cu", 0, NULL, NULL));
  CHECK_RTC(hiprtcCompileProgram(q, 1, arch_opt), HIPRTC_ERROR_COMPILATION);
  log = log_of(q);
  CHECK(log && strstr(log, "bad.cu:1:") && strstr(log, "error:") && strstr(log, "undeclared"));
  if (log && !strstr(log, "bad.cu:1:")) fprintf(stderr, "log: %s\n", log);
  free(log);
  CHECK_RTC_OK(hiprtcGetCodeSize(q, &code_size));
  CHECK(code_size == 0);
  size_t bc_size = 0;
  CHECK_RTC(hiprtcGetBitcodeSize(q, &bc_size), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));

  /* -fgpu-rdc: LLVM bitcode, where an undefined device function is fine (hip-tests
   * Unit_hiprtc_bitcode_undefined_function); the code object stays empty. */
  const char* rdc[] = {arch, "-fgpu-rdc"};
  CHECK_RTC_OK(hiprtcCreateProgram(&q,
                                   "__device__ void foo();\n"
                                   "extern \"C\" __global__ void k() { foo(); }\n"
                                   "template <int N> __global__ void t(int* p) { *p = N; foo(); }\n"
                                   "__device__ int var;\n",
                                   "rdc.cu", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcAddNameExpression(q, "t<3>"));
  CHECK_RTC_OK(hiprtcAddNameExpression(q, "&var"));
  CHECK_RTC(hiprtcGetBitcodeSize(q, &bc_size), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC_OK(hiprtcCompileProgram(q, 2, rdc));
  /* Lowered names come from the bitcode here. */
  CHECK_RTC_OK(hiprtcGetLoweredName(q, "t<3>", &lowered));
  CHECK(lowered && strcmp(lowered, "_Z1tILi3EEvPi") == 0);
  CHECK_RTC_OK(hiprtcGetLoweredName(q, "var", &lowered));
  CHECK(lowered && strcmp(lowered, "var") == 0);
  CHECK_RTC_OK(hiprtcGetCodeSize(q, &code_size));
  CHECK(code_size == 0);
  CHECK_RTC_OK(hiprtcGetBitcodeSize(q, &bc_size));
  CHECK(bc_size > 4);
  CHECK_RTC(hiprtcGetBitcodeSize(q, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcGetBitcode(q, NULL), HIPRTC_ERROR_INVALID_INPUT);
  char* bc = (char*)malloc(bc_size);
  CHECK_RTC_OK(hiprtcGetBitcode(q, bc));
  CHECK(memcmp(bc, "BC\xc0\xde", 4) == 0);
  free(bc);
  /* Without -fgpu-rdc the undefined function fails the link, and the bitcode is gone. */
  CHECK_RTC(hiprtcCompileProgram(q, 1, arch_opt), HIPRTC_ERROR_COMPILATION);
  CHECK_RTC(hiprtcGetBitcodeSize(q, &bc_size), HIPRTC_ERROR_INVALID_PROGRAM);
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));

  /* -mllvm -print-after=...: LLVM's IR dump reaches the process's stderr, as from clr's
   * in-process LLVM (hip-tests' RtcFunctions.cpp captures it there). */
  {
    char path[] = "/tmp/hiprtc-stderr-XXXXXX";
    int fd = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    const char* dump[] = {arch, "-mllvm", "-print-after=constmerge"};
    CHECK_RTC_OK(hiprtcCreateProgram(&q, "extern \"C\" __global__ void dumped(float* p) { *p *= 2.0f; }\n",
                                     "dump.cu", 0, NULL, NULL));
    hiprtcResult r = hiprtcCompileProgram(q, 3, dump);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK_RTC(r, HIPRTC_SUCCESS);
    char text[4096] = {0};
    ssize_t got = pread(fd, text, sizeof text - 1, 0);
    CHECK(got > 0 && strstr(text, "IR Dump After") && strstr(text, "dumped"));
    close(fd);
    unlink(path);
    CHECK_RTC_OK(hiprtcDestroyProgram(&q));
  }

  /* hip_bfloat16 without an #include, as clr's builtin header has it (hip-tests
   * Unit_hiprtc_test_hip_bfloat16), and __hip_internal's type traits (hip-tests
   * Unit_hipRTC_Ptrdiff_t_Check). */
  CHECK_RTC_OK(hiprtcCreateProgram(&q,
                                   "__global__ void bf(float* p) { hip_bfloat16 b(*p); *p = float(b) * 2.0f; }\n"
                                   "static_assert(__hip_internal::is_same<ptrdiff_t, long>::value, \"LP64\");\n"
                                   "static_assert(!__hip_internal::is_same<int, long>::value, \"distinct\");\n"
                                   "static_assert(__hip_internal::is_integral<unsigned char>::value, \"integral\");\n"
                                   "static_assert(__hip_internal::is_arithmetic<double>::value, \"arithmetic\");\n"
                                   "static_assert(__hip_internal::is_same<__hip_internal::conditional<false, int, float>::type, float>::value, \"\");\n",
                                   "bf16.cu", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcCompileProgram(q, 1, arch_opt));
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));

  /* __half in warp shuffles (plain and _sync), __activemask, __hmax/__hmin(_nan) and hrcp,
   * without an #include (clr's ROCm 6+ builtin header; on HIP 5 headers our prelude adds them).
   * Lane i holds i/4: a __shfl_xor butterfly of __hmax leaves the maximum, 15.75, in every lane
   * of the 64. */
  CHECK_RTC_OK(hiprtcCreateProgram(
      &q,
      "extern \"C\" __global__ void hk(float* out) {\n"
      "  __half v = __float2half(threadIdx.x * 0.25f);\n"
      "  for (int m = 32; m > 0; m >>= 1)\n"
      "    v = __hmax(v, m > 4 ? __shfl_xor(v, m) : __shfl_xor_sync(__activemask(), v, m));\n"
      "  __half2 p = __halves2half2(v, __float2half(2.0f));\n"
      "  p = __shfl(p, 3);\n"
      "  __half nan = __float2half(__builtin_nanf(\"\"));\n"
      "  out[threadIdx.x] = __half2float(v) + __half2float(__high2half(p))\n"
      "      + __half2float(__hmin(nan, __float2half(1.0f))) + (__hisnan(__hmax_nan(nan, v)) ? 100.0f : 0.0f)\n"
      "      + __half2float(hrcp(__float2half(4.0f))) + (__activemask() == ~0ull ? 1000.0f : 0.0f);\n"
      "}\n",
      "half.cu", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcCompileProgram(q, 1, arch_opt));
  log = log_of(q);
  if (log && strstr(log, "error")) fprintf(stderr, "half.cu log: %s\n", log);
  free(log);
  CHECK_RTC_OK(hiprtcGetCodeSize(q, &code_size));
  code = (char*)malloc(code_size ? code_size : 1);
  CHECK_RTC_OK(hiprtcGetCode(q, code));
  {
    hipModule_t hm = NULL;
    hipFunction_t hk = NULL;
    float* dout = NULL;
    float hout[64] = {0};
    CHECK_OK(hipModuleLoadData(&hm, code));
    CHECK_OK(hipModuleGetFunction(&hk, hm, "hk"));
    CHECK_OK(hipMalloc((void**)&dout, sizeof hout));
    void* hargs[] = {&dout};
    CHECK_OK(hipModuleLaunchKernel(hk, 1, 1, 1, 64, 1, 1, 0, NULL, hargs, NULL));
    CHECK_OK(hipMemcpy(hout, dout, sizeof hout, hipMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < 64; i++) wrong += hout[i] != 15.75f + 2.0f + 1.0f + 100.0f + 0.25f + 1000.0f;
    CHECK(wrong == 0);
    if (wrong) fprintf(stderr, "half kernel: lane 0 %g\n", hout[0]);
    CHECK_OK(hipFree(dout));
    CHECK_OK(hipModuleUnload(hm));
  }
  free(code);
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));

  /* -D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=1: ptrdiff_t is long long (clr 6.1+; hip-tests
   * Unit_hipRTC_Ptrdiff_t_Check); =0 keeps Linux's long (checked above without the macro). */
  {
    const char* ll[] = {arch, "-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=1"};
    CHECK_RTC_OK(hiprtcCreateProgram(&q,
                                     "static_assert(__hip_internal::is_same<ptrdiff_t, long long>::value, \"LLP\");\n"
                                     "__global__ void k(ptrdiff_t* p) { *p = p - p; }\n",
                                     "ptrdiff.cu", 0, NULL, NULL));
    CHECK_RTC_OK(hiprtcCompileProgram(q, 2, ll));
    log = log_of(q);
    if (log && strstr(log, "error")) fprintf(stderr, "ptrdiff.cu log: %s\n", log);
    free(log);
    CHECK_RTC_OK(hiprtcDestroyProgram(&q));
    ll[1] = "-D__HIPRTC_PTRDIFF_T_IS_LONG_LONG__=0";
    CHECK_RTC_OK(hiprtcCreateProgram(&q, "static_assert(__hip_internal::is_same<ptrdiff_t, long>::value, \"LP64\");\n",
                                     "ptrdiff0.cu", 0, NULL, NULL));
    CHECK_RTC_OK(hiprtcCompileProgram(q, 2, ll));
    CHECK_RTC_OK(hiprtcDestroyProgram(&q));
  }

  /* HIP's math constants, pre-included and by #include (hip-tests
   * Unit_Rtc_MathConstants_header; HIP 5 has no hip_math_constants.h, the prelude brings one),
   * and __float2half_rz/rd/ru rounding as named (hip-tests Unit_hiprtc_fp16_header; HIP 5's
   * round to nearest): both signs, ties away from the representable halves, underflow to the
   * smallest subnormal, overflow to 65504 or infinity. And hip_bfloat16 assigned a float (ROCm
   * 6.1+, hip-tests Unit_Rtc_bfloat16_header; HIP 5's has no operator=(float), the prelude adds
   * it), mixed with 5.x's operators and std::iszero. */
  CHECK_RTC_OK(hiprtcCreateProgram(
      &q,
      "#include <hip/hip_math_constants.h>\n"
      "#include <hip/hip_complex.h>\n"
      "extern \"C\" __global__ void mc(float* o) {\n"
      "  o[0] = (HIP_PI_F == 3.141592654F) + (HIP_INF_F == __int_as_float(0x7f800000U))\n"
      "       + (HIP_REMQUO_MASK_F == 7U) + (HIP_NAN_F != HIP_NAN_F) + (HIP_PI == 3.1415926535897931e+0)\n"
      "       + (HIP_SQRT_HALF_LO == -4.8336466567264567e-17) + (HIP_TWO_TO_M1022 == 0x1p-1022)\n"
      "       + (HIP_INF == __longlong_as_double(0x7ff0000000000000ULL)) + (HIP_LN2_F == 0.693147181F);\n"
      "  const float x[] = {3.1234f, -3.1234f, 1e-10f, -1e-10f, 70000.0f, -70000.0f, 65505.0f, 2.0f};\n"
      "  for (int i = 0; i < 8; i++) {\n"
      "    o[1 + 3 * i] = __half2float(__float2half_rz(x[i]));\n"
      "    o[2 + 3 * i] = __half2float(__float2half_rd(x[i]));\n"
      "    o[3 + 3 * i] = __half2float(__float2half_ru(x[i]));\n"
      "  }\n"
      "  hip_bfloat16 b(11.3f), c = b + b;\n"
      "  o[25] = b.data;\n"
      "  b.operator=(11.6);\n"
      "  o[26] = b.data;\n"
      "  c = b * hip_bfloat16(2.0f);\n"
      "  o[27] = float(c);\n"
      "  b = 0.0f;\n"
      "  hip_bfloat16 t = hip_bfloat16::round_to_bfloat16(1.5f, hip_bfloat16::truncate);\n"
      "  o[28] = std::iszero(b) + 2 * std::iszero(t) + 4 * (++t == hip_bfloat16(2.5f));\n"
      "  hipFloatComplex p = make_hipFloatComplex(2.5f, 3.5f), q = make_hipComplex(4.5f, 5.5f);\n"
      "  hipFloatComplex m = hipCmulf(p, q), d = hipCdivf(m, q), f = hipCfmaf(p, q, make_hipFloatComplex(1.5f, 4.5f));\n"
      "  float2 e = p * q;\n"
      "  e += p;\n"
      "  hipDoubleComplex w = hipComplexFloatToDouble(hipConjf(p));\n"
      "  o[29] = m.x; o[30] = m.y; o[31] = d.x; o[32] = d.y; o[33] = f.x; o[34] = f.y;\n"
      "  o[35] = e.x; o[36] = e.y; o[37] = (float)hipCabs(hipCsub(w, make_hipDoubleComplex(2.5, 0.5)));\n"
      "  __half2 s2 = h2sin(__half2{0, 0.5}), r2 = h2rcp(__half2{4, 5});\n"
      "  o[38] = __half2float(hsin(x[7] - 2.0f)); o[39] = __half2float(hsin(0.5f));\n"
      "  o[40] = __half2float(__low2half(s2)); o[41] = __half2float(__high2half(s2));\n"
      "  o[42] = __half2float(__low2half(r2)); o[43] = __half2float(__high2half(r2));\n"
      "}\n",
      "consts.cu", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcCompileProgram(q, 1, arch_opt));
  log = log_of(q);
  if (log && strstr(log, "error")) fprintf(stderr, "consts.cu log: %s\n", log);
  free(log);
  CHECK_RTC_OK(hiprtcGetCodeSize(q, &code_size));
  code = (char*)malloc(code_size ? code_size : 1);
  CHECK_RTC_OK(hiprtcGetCode(q, code));
  {
    hipModule_t hm = NULL;
    hipFunction_t k = NULL;
    float* dout = NULL;
    float o[44] = {0};
    const float sub = 5.9604644775390625e-8f, inf = __builtin_inff();
    /* (rz, rd, ru) of each input */
    const float want[24] = {3.123046875f, 3.123046875f, 3.125f, -3.123046875f, -3.125f, -3.123046875f,
                            0.0f, 0.0f, sub, -0.0f, -sub, -0.0f,
                            65504.0f, 65504.0f, inf, -65504.0f, -inf, -65504.0f,
                            65504.0f, 65504.0f, inf, 2.0f, 2.0f, 2.0f};
    CHECK_OK(hipModuleLoadData(&hm, code));
    CHECK_OK(hipModuleGetFunction(&k, hm, "mc"));
    CHECK_OK(hipMalloc((void**)&dout, sizeof o));
    void* kargs[] = {&dout};
    CHECK_OK(hipModuleLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, kargs, NULL));
    CHECK_OK(hipMemcpy(o, dout, sizeof o, hipMemcpyDeviceToHost));
    CHECK(o[0] == 9.0f);
    if (o[0] != 9.0f) fprintf(stderr, "math constants: %g of 9 compare equal\n", o[0]);
    for (int i = 0; i < 24; i++) {
      CHECK(o[1 + i] == want[i] && sign_of(o[1 + i]) == sign_of(want[i]));
      if (o[1 + i] != want[i]) fprintf(stderr, "__float2half_%s(input %d): %g, want %g\n", &"rz\0rd\0ru"[i % 3 * 3], i / 3, o[1 + i], want[i]);
    }
    /* bfloat16: 11.3 is 0x4135 (16693), 11.6 rounds to 0x413a (16698, 11.625), twice that is
     * 23.25; zero is zero, 1.5 is not, and 1.5 + 1 is 2.5 */
    CHECK(o[25] == 16693.0f && o[26] == 16698.0f && o[27] == 23.25f && o[28] == 5.0f);
    if (o[26] != 16698.0f || o[28] != 5.0f)
      fprintf(stderr, "hip_bfloat16: %g %g %g %g\n", o[25], o[26], o[27], o[28]);
    /* complex numbers: (2.5+3.5i)(4.5+5.5i) = -8+29.5i, divided by 4.5+5.5i again, plus 1.5+4.5i
     * by fma; float2's own * and += stay element-wise (11.25, 19.25, then + p); |conj(p) - (2.5+0.5i)|
     * = 4 */
    const float cw[9] = {-8.0f, 29.5f, 2.5f, 3.5f, -6.5f, 34.0f, 13.75f, 22.75f, 4.0f};
    for (int i = 0; i < 9; i++) {
      CHECK(o[29 + i] == cw[i]);
      if (o[29 + i] != cw[i]) fprintf(stderr, "complex %d: %.9g, want %g\n", i, o[29 + i], cw[i]);
    }
    /* hsin, h2sin and h2rcp (HIP 5 with Debian's clang 15: NaN for every finite input, and the
     * high lane's reciprocal in both lanes; the prelude replaces them): sin(0) = 0, sin(0.5) is
     * 0.4794 in half precision, 1/4 and 1/5 (0.199951171875) */
    const float hw[6] = {0.0f, 0.4794921875f, 0.0f, 0.4794921875f, 0.25f, 0.199951171875f};
    for (int i = 0; i < 6; i++) {
      CHECK(o[38 + i] == hw[i]);
      if (o[38 + i] != hw[i]) fprintf(stderr, "half sin/rcp %d: %.9g, want %.9g\n", i, o[38 + i], hw[i]);
    }
    CHECK_OK(hipFree(dout));
    CHECK_OK(hipModuleUnload(hm));
  }
  free(code);
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));

  /* --hiprtc-no-builtin-header (clr): nothing pre-included, the program includes HIP itself. */
  const char* bare[] = {"--hiprtc-no-builtin-header", arch};
  CHECK_RTC_OK(hiprtcCreateProgram(&q, "__global__ void k(int* p) { *p = threadIdx.x; }\n", "bare.cu", 0, NULL, NULL));
  CHECK_RTC(hiprtcCompileProgram(q, 2, bare), HIPRTC_ERROR_COMPILATION);
  log = log_of(q);
  CHECK(log && strstr(log, "threadIdx"));
  free(log);
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));
  CHECK_RTC_OK(hiprtcCreateProgram(
      &q, "#include <hip/hip_runtime.h>\n__global__ void k(int* p) { *p = threadIdx.x; }\n", "bare.cu", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcCompileProgram(q, 2, bare));
  CHECK_RTC_OK(hiprtcDestroyProgram(&q));

  /* The compile cache. A program that includes a header from an -I directory on disk. */
  {
    char dir[] = "/tmp/rtc-cached-XXXXXX", inc[64], header[96], opt[80], entry[160];
    CHECK(mkdtemp(dir) != NULL);
    char fresh[] = "/tmp/rtc-cache-XXXXXX";
    CHECK(mkdtemp(fresh) != NULL);
    setenv("HIPKFD_RTC_CACHE_DIR", fresh, 1);
    snprintf(inc, sizeof inc, "%s/inc", dir);
    CHECK(mkdir(inc, 0700) == 0);
    snprintf(header, sizeof header, "%s/val.h", inc);
    snprintf(opt, sizeof opt, "-I%s", inc);
    const char* src = "#include \"val.h\"\nextern \"C\" __global__ void k(int* p) { *p = VAL; }\n";
    write_file(header, "#define VAL 7\n");
    CHECK(compile_and_run(src, opt) == 7);
    CHECK(entries(fresh) == 1);
    /* The same compile again is a hit: the entry is the same file, its mtime refreshed. */
    only_entry(fresh, entry, sizeof entry);
    struct stat before, after;
    CHECK(stat(entry, &before) == 0);
    struct timespec old[2] = {{1000, 0}, {1000, 0}};
    CHECK(utimensat(AT_FDCWD, entry, old, 0) == 0);
    CHECK(compile_and_run(src, opt) == 7);
    CHECK(entries(fresh) == 1);
    CHECK(stat(entry, &after) == 0 && after.st_ino == before.st_ino && after.st_mtime > 1000);
    /* The header changes: a new key, compiled, and the kernel sees the new value. */
    write_file(header, "#define VAL 12345\n");
    CHECK(compile_and_run(src, opt) == 12345);
    CHECK(entries(fresh) == 2);
    /* HIPKFD_RTC_CACHE=0: compiled without the cache. */
    write_file(header, "#define VAL 99\n");
    setenv("HIPKFD_RTC_CACHE", "0", 1);
    CHECK(compile_and_run(src, opt) == 99);
    CHECK(entries(fresh) == 2);
    unsetenv("HIPKFD_RTC_CACHE");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, fresh);
    CHECK(system(cmd) == 0);
  }
  /* The compiles before used the first cache: their entries, and nothing else, are there. */
  CHECK(entries(cache) > 0);
  char rm_cache[64];
  snprintf(rm_cache, sizeof rm_cache, "rm -rf %s", cache);
  CHECK(system(rm_cache) == 0);

  int left = entries(tmpdir);
  CHECK(left == 0);
  if (left != 0) fprintf(stderr, "%d entries left in %s\n", left, tmpdir);
  rmdir(tmpdir);
  return summary();
}
