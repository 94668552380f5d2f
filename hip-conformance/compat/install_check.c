// Built against a `make install` tree (tests/install.rs), with pkg-config and with CMake's
// find_package(hip): includes <hip/hip_runtime.h> as HIP programs do, then a device count and a
// hipMalloc / hipMemcpy round trip on the installed libamdhip64.so.7.
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int n = 0, v = 0;
  if (hipGetDeviceCount(&n) != hipSuccess || n < 1) { printf("FAIL hipGetDeviceCount %d\n", n); return 1; }
  if (hipRuntimeGetVersion(&v) != hipSuccess || v != HIP_VERSION) { printf("FAIL version %d\n", v); return 1; }
  unsigned char in[8192], out[8192];
  for (size_t i = 0; i < sizeof in; i++) in[i] = (unsigned char)(i * 13 + 1);
  void *d = NULL;
  if (hipMalloc(&d, sizeof in) != hipSuccess) { printf("FAIL hipMalloc\n"); return 1; }
  if (hipMemcpy(d, in, sizeof in, hipMemcpyHostToDevice) != hipSuccess) { printf("FAIL H2D\n"); return 1; }
  memset(out, 0, sizeof out);
  if (hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost) != hipSuccess) { printf("FAIL D2H\n"); return 1; }
  if (memcmp(in, out, sizeof in) != 0) { printf("FAIL data\n"); return 1; }
  if (hipFree(d) != hipSuccess) { printf("FAIL hipFree\n"); return 1; }
  printf("PASS %d devices, HIP %d\n", n, v);
  return 0;
}
