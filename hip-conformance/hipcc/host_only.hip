/* A hipcc program without kernels: host calls only, on our library. */
#include <hip/hip_runtime.h>
#include "check.h"

int main(void) {
  check_bound_to_expected_library((void*)&hipGetDeviceCount);
  int n = 0;
  CHECK_OK(hipGetDeviceCount(&n));
  CHECK(n >= 1);
  hipDeviceProp_t p;
  CHECK_OK(hipGetDeviceProperties(&p, 0));
  CHECK(strncmp(p.gcnArchName, "gfx", 3) == 0);
  enum { N = 1 << 20 };
  unsigned char* h = (unsigned char*)malloc(N);
  unsigned char* back = (unsigned char*)malloc(N);
  for (int i = 0; i < N; i++) h[i] = (unsigned char)(i * 7 + 3);
  void* d = NULL;
  CHECK_OK(hipMalloc(&d, N));
  CHECK_OK(hipMemcpy(d, h, N, hipMemcpyHostToDevice));
  memset(back, 0, N);
  CHECK_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
  CHECK(memcmp(h, back, N) == 0);
  CHECK_OK(hipFree(d));
  CHECK_ERR(hipMalloc(NULL, 16), hipErrorInvalidValue);
  CHECK_ERR(hipGetLastError(), hipErrorInvalidValue);
  CHECK_OK(hipGetLastError());
  free(h);
  free(back);
  return summary();
}
