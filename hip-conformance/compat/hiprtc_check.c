// Built against a `make install` tree (tests/install.rs) as a ROCm 7 program uses hiprtc: only
// <hip/hiprtc.h> and -lhiprtc (DT_NEEDED libhiprtc.so.7). Creates a program, compiles it for
// argv[1] (an --offload-arch= value) when argv[2] is "compile" (the kernel uses __half and device
// malloc, which need the HIP headers' fp16 and version), checks the code object's ELF magic and the
// lowered name of a template kernel, and prints PASS.
#include <hip/hiprtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call)                                                                      \
  do {                                                                                 \
    hiprtcResult r_ = (call);                                                          \
    if (r_ != HIPRTC_SUCCESS) {                                                        \
      printf("FAIL %s: %s\n", #call, hiprtcGetErrorString(r_));                        \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(int argc, char** argv) {
  int major = 0, minor = 0;
  TRY(hiprtcVersion(&major, &minor));
  hiprtcProgram p = NULL;
  TRY(hiprtcCreateProgram(&p, "template <int N> __global__ void k(int* p) {\n"
                          "  __half h = 1.0f;\n"
                          "  int* q = (int*)malloc(4);\n"
                          "  *p = N + (int)(float)h + (q != 0);\n"
                          "  free(q);\n"
                          "}\n", "k.cu", 0, NULL, NULL));
  TRY(hiprtcAddNameExpression(p, "k<7>"));
  if (argc > 2 && strcmp(argv[2], "compile") == 0) {
    char arch[256];
    snprintf(arch, sizeof arch, "--offload-arch=%s", argv[1]);
    const char* opts[] = {arch};
    hiprtcResult r = hiprtcCompileProgram(p, 1, opts);
    size_t n = 0;
    TRY(hiprtcGetProgramLogSize(p, &n));
    char* log = malloc(n);
    TRY(hiprtcGetProgramLog(p, log));
    if (r != HIPRTC_SUCCESS) { printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(r), log); return 1; }
    free(log);
    TRY(hiprtcGetCodeSize(p, &n));
    char* code = malloc(n);
    TRY(hiprtcGetCode(p, code));
    if (n < 64 || memcmp(code, "\177ELF", 4) != 0) { printf("FAIL code object (%zu bytes)\n", n); return 1; }
    free(code);
    const char* lowered = NULL;
    TRY(hiprtcGetLoweredName(p, "k<7>", &lowered));
    if (strcmp(lowered, "_Z1kILi7EEvPi") != 0) { printf("FAIL lowered name %s\n", lowered); return 1; }
  }
  TRY(hiprtcDestroyProgram(&p));
  printf("PASS hiprtc %d.%d\n", major, minor);
  return 0;
}
