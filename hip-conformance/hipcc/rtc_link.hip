/* hiprtc's link API (ROCm's hiprtcLink*, declared by our include/hip/hiprtc.h; HIP 5.2's header
 * predates it): two programs compiled with -fgpu-rdc, one calling a device function of the other,
 * linked from memory and from a file with codegen options and log buffers, loaded and launched,
 * results checked; a hipcc-built offload bundle (argv[1]) and an archive of it (argv[2]) as inputs; an undefined symbol's error log; clr's error codes (hip-tests rtc/linker.cc),
 * and INVALID_INPUT where clr would dereference a dead handle. */
#include <hip/hip_runtime.h>
#include <unistd.h>
#include "../../include/hip/hiprtc.h"
#include "check.h"

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

static const char* kMul = "__device__ float mul(float a, float b) { return a * b + 1.0f; }\n";
static const char* kScale =
    "__device__ float mul(float a, float b);\n"
    "extern \"C\" __global__ void scale(float* x, float s, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = mul(x[i], s);\n"
    "}\n";

/* The -fgpu-rdc bitcode of `src`; *size gets its bytes. */
static char* bitcode_of(const char* src, const char* name, size_t* size) {
  hiprtcProgram p = NULL;
  const char* opts[] = {"-fgpu-rdc"};
  *size = 0;
  CHECK_RTC_OK(hiprtcCreateProgram(&p, src, name, 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcCompileProgram(p, 1, opts));
  CHECK_RTC_OK(hiprtcGetBitcodeSize(p, size));
  char* bc = (char*)malloc(*size ? *size : 1);
  CHECK_RTC_OK(hiprtcGetBitcode(p, bc));
  CHECK_RTC_OK(hiprtcDestroyProgram(&p));
  return bc;
}

/* x[i] = i * 2 + 1 through `scale` of the module at `image`, launched over N elements. */
static void run_scale(const void* image) {
  enum { N = 300 };
  hipModule_t m = NULL;
  hipFunction_t f = NULL;
  CHECK_OK(hipModuleLoadData(&m, image));
  CHECK_OK(hipModuleGetFunction(&f, m, "scale"));
  float hx[N];
  for (int i = 0; i < N; i++) hx[i] = (float)i;
  float* dx = NULL;
  CHECK_OK(hipMalloc((void**)&dx, sizeof hx));
  CHECK_OK(hipMemcpy(dx, hx, sizeof hx, hipMemcpyHostToDevice));
  float s = 2.0f;
  unsigned n = N;
  void* args[] = {&dx, &s, &n};
  CHECK_OK(hipModuleLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
  CHECK_OK(hipMemcpy(hx, dx, sizeof hx, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += hx[i] != 2.0f * (float)i + 1.0f;
  CHECK(bad == 0);
  CHECK_OK(hipFree(dx));
  CHECK_OK(hipModuleUnload(m));
}

int main(int argc, char** argv) {
  check_bound_to_expected_library((void*)&hiprtcLinkCreate);

  size_t mul_size = 0, scale_size = 0;
  char* mul_bc = bitcode_of(kMul, "mul.cu", &mul_size);
  char* scale_bc = bitcode_of(kScale, "scale.cu", &scale_size);
  CHECK(mul_size > 4 && scale_size > 4);

  /* The scale module from memory, mul from a file; -O2 and codegen options as hip-tests pass
   * them; the info log buffer named. */
  char path[] = "/tmp/hiprtc-link-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && write(fd, mul_bc, mul_size) == (ssize_t)mul_size);
  close(fd);
  char info[256], error[256];
  memset(info, 'x', sizeof info);
  memset(error, 'x', sizeof error);
  const char* isa[] = {"-mllvm", "-inline-threshold=1"};
  hiprtcJIT_option opts[] = {HIPRTC_JIT_OPTIMIZATION_LEVEL, HIPRTC_JIT_IR_TO_ISA_OPT_EXT,
                             HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT, HIPRTC_JIT_INFO_LOG_BUFFER,
                             HIPRTC_JIT_INFO_LOG_BUFFER_SIZE_BYTES, HIPRTC_JIT_ERROR_LOG_BUFFER,
                             HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, HIPRTC_JIT_WALL_TIME};
  float wall = 0;
  void* vals[] = {(void*)(size_t)2, (void*)isa, (void*)(size_t)2, info, (void*)sizeof info,
                  error, (void*)sizeof error, &wall};
  hiprtcLinkState link = NULL;
  CHECK_RTC_OK(hiprtcLinkCreate(8, opts, vals, &link));
  CHECK(link != NULL);
  CHECK_RTC_OK(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, scale_bc, scale_size, "scale", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcLinkAddFile(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, path, 0, NULL, NULL));
  void* bin = NULL;
  size_t bin_size = 0;
  CHECK_RTC_OK(hiprtcLinkComplete(link, &bin, &bin_size));
  CHECK(bin != NULL && bin_size > 64 && memcmp(bin, "\177ELF", 4) == 0);
  CHECK(memchr(info, 0, sizeof info) != NULL); /* NUL-terminated, whatever the tools said */
  CHECK(error[0] == 0);
  /* Loaded from the link's buffer; the module outlives the link. */
  hipModule_t m = NULL;
  hipFunction_t f = NULL;
  CHECK_OK(hipModuleLoadData(&m, bin));
  CHECK_RTC_OK(hiprtcLinkDestroy(link));
  CHECK_OK(hipModuleGetFunction(&f, m, "scale"));
  CHECK_OK(hipModuleUnload(m));
  unlink(path);

  /* No options (hip-tests' RtcFunctions.cpp), both from memory, and a launch. */
  CHECK_RTC_OK(hiprtcLinkCreate(0, NULL, NULL, &link));
  CHECK_RTC_OK(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, mul_bc, mul_size, NULL, 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, scale_bc, scale_size, NULL, 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcLinkComplete(link, &bin, &bin_size));
  run_scale(bin);
  CHECK_RTC_OK(hiprtcLinkDestroy(link));

  /* scale alone: mul is undefined, HIPRTC_ERROR_LINKING, and the linker's message in the error
   * log buffer. */
  memset(error, 'x', sizeof error);
  hiprtcJIT_option eopts[] = {HIPRTC_JIT_ERROR_LOG_BUFFER, HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* evals[] = {error, (void*)sizeof error};
  CHECK_RTC_OK(hiprtcLinkCreate(2, eopts, evals, &link));
  CHECK_RTC(hiprtcLinkComplete(link, &bin, &bin_size), HIPRTC_ERROR_LINKING); /* nothing added */
  CHECK_RTC_OK(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, scale_bc, scale_size, "scale", 0, NULL, NULL));
  CHECK_RTC(hiprtcLinkComplete(link, &bin, &bin_size), HIPRTC_ERROR_LINKING);
  CHECK(memchr(error, 0, sizeof error) != NULL && strstr(error, "undefined") && strstr(error, "mul"));
  if (!strstr(error, "mul")) fprintf(stderr, "error log: %.255s\n", error);
  /* A second link of the same state, now complete, succeeds. */
  CHECK_RTC_OK(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, mul_bc, mul_size, "mul", 0, NULL, NULL));
  CHECK_RTC_OK(hiprtcLinkComplete(link, &bin, &bin_size));
  CHECK(error[0] == 0);
  run_scale(bin);

  /* mul from hipcc's offload bundle (argv[1]), then from an archive of it (argv[2]): the
   * device's entry is taken. */
  for (int i = 1; i <= 2; i++) {
    hiprtcJITInputType type =
        i == 1 ? HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE : HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE;
    hiprtcLinkState l = NULL;
    CHECK(argc > i);
    if (argc <= i) break;
    CHECK_RTC_OK(hiprtcLinkCreate(0, NULL, NULL, &l));
    CHECK_RTC_OK(hiprtcLinkAddData(l, HIPRTC_JIT_INPUT_LLVM_BITCODE, scale_bc, scale_size, "scale", 0, NULL, NULL));
    CHECK_RTC_OK(hiprtcLinkAddFile(l, type, argv[i], 0, NULL, NULL));
    /* Each kind checks its bytes: plain bitcode is neither a bundle nor an archive. */
    CHECK_RTC(hiprtcLinkAddData(l, type, mul_bc, mul_size, "mul", 0, NULL, NULL), HIPRTC_ERROR_PROGRAM_CREATION_FAILURE);
    CHECK_RTC_OK(hiprtcLinkComplete(l, &bin, &bin_size));
    run_scale(bin);
    CHECK_RTC_OK(hiprtcLinkDestroy(l));
  }

  /* Argument checks, in clr's order (hip-tests rtc/linker.cc). */
  CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, NULL, 0, "code", 0, NULL, NULL),
            HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, mul_bc, 0, "code", 0, NULL, NULL),
            HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_CUBIN, mul_bc, mul_size, "code", 0, NULL, NULL),
            HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkAddData(link, (hiprtcJITInputType)77, mul_bc, mul_size, "code", 0, NULL, NULL),
            HIPRTC_ERROR_INVALID_INPUT);
  /* Bytes that are not bitcode, and a missing file: the state is unchanged, the link still works. */
  CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, (void*)kMul, 8, "text", 0, NULL, NULL),
            HIPRTC_ERROR_PROGRAM_CREATION_FAILURE);
  CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE, mul_bc, mul_size, "bc", 0, NULL, NULL),
            HIPRTC_ERROR_PROGRAM_CREATION_FAILURE);
  CHECK_RTC(hiprtcLinkAddFile(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, "/nonexistent/bitcode_file", 0, NULL, NULL),
            HIPRTC_ERROR_PROGRAM_CREATION_FAILURE);
  CHECK_RTC(hiprtcLinkAddFile(link, HIPRTC_JIT_INPUT_NVVM, "bitcode_file", 0, NULL, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkAddFile(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, NULL, 0, NULL, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC_OK(hiprtcLinkComplete(link, &bin, &bin_size));
  CHECK_RTC(hiprtcLinkComplete(link, NULL, &bin_size), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkComplete(link, &bin, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC_OK(hiprtcLinkDestroy(link));

  /* Dead and null handles: INVALID_INPUT, never a dereference. */
  CHECK_RTC(hiprtcLinkDestroy(link), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkDestroy(NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkAddData(link, HIPRTC_JIT_INPUT_LLVM_BITCODE, mul_bc, mul_size, "m", 0, NULL, NULL),
            HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkAddFile(NULL, HIPRTC_JIT_INPUT_LLVM_BITCODE, "bitcode_file", 0, NULL, NULL),
            HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkComplete(link, &bin, &bin_size), HIPRTC_ERROR_INVALID_INPUT);
  hiprtcLinkState garbage = (hiprtcLinkState)(size_t)0xdeadbeef0;
  CHECK_RTC(hiprtcLinkDestroy(garbage), HIPRTC_ERROR_INVALID_INPUT);

  /* Creation checks. */
  CHECK_RTC(hiprtcLinkCreate(0, NULL, NULL, NULL), HIPRTC_ERROR_INVALID_INPUT);
  CHECK_RTC(hiprtcLinkCreate(1, NULL, NULL, &link), HIPRTC_ERROR_INVALID_INPUT);
  void* null_vals[] = {NULL, (void*)sizeof error};
  CHECK_RTC(hiprtcLinkCreate(2, eopts, null_vals, &link), HIPRTC_ERROR_INVALID_OPTION);
  hiprtcJIT_option isa_only[] = {HIPRTC_JIT_IR_TO_ISA_OPT_COUNT_EXT};
  void* isa_count[] = {(void*)(size_t)2};
  CHECK_RTC(hiprtcLinkCreate(1, isa_only, isa_count, &link), HIPRTC_ERROR_INVALID_OPTION);

  free(mul_bc);
  free(scale_bc);
  return summary();
}
