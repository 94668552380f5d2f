// Host-only HIP program for Debian's hipcc 5.2 (tests/dropin.rs): device count and properties, a
// hipMalloc / hipMemcpy round trip. Built against stock libamdhip64.so.5, run on ours.
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess || n < 1) { printf("FAIL count %d\n", n); return 1; }
  hipDeviceProp_t p;
  if (hipGetDeviceProperties(&p, 0) != hipSuccess) { printf("FAIL props\n"); return 1; }
  char in[4096], out[4096];
  for (int i = 0; i < 4096; i++) in[i] = (char)(i * 7);
  void *d = NULL;
  if (hipMalloc(&d, sizeof in) != hipSuccess) { printf("FAIL malloc\n"); return 1; }
  if (hipMemcpy(d, in, sizeof in, hipMemcpyHostToDevice) != hipSuccess) { printf("FAIL h2d\n"); return 1; }
  memset(out, 0, sizeof out);
  if (hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost) != hipSuccess) { printf("FAIL d2h\n"); return 1; }
  if (memcmp(in, out, sizeof in)) { printf("FAIL data\n"); return 1; }
  if (hipFree(d) != hipSuccess) { printf("FAIL free\n"); return 1; }
  printf("PASS %d devices %s\n", n, p.gcnArchName);
  return 0;
}
