/* Kernel launches and stream order, as AMD's hip-tests use them (catch/unit/device/
 * hipDeviceSynchronize.cc, HipTest::BlockingContext): the first launch of a kernel (which loads
 * its code object) behind a null stream held by a host callback must return at once, run only
 * once the callback returns, and see the copy queued before it. */
#include <hip/hip_runtime.h>
#include <sched.h>
#include <atomic>

#include "check.h"

__global__ void add_n(int* a, int n) {
  if (threadIdx.x + blockIdx.x * blockDim.x == 0) a[0] += n;
}

static std::atomic<int> g_blocked;

static void block_cb(hipStream_t, hipError_t, void*) {
  while (g_blocked.load()) sched_yield();
}

int main(void) {
  check_bound_to_expected_library((void*)&hipDeviceSynchronize);
  int* h = NULL;
  int* d = NULL;
  CHECK_OK(hipHostMalloc((void**)&h, sizeof(int), hipHostMallocDefault));
  CHECK_OK(hipMalloc((void**)&d, sizeof(int)));
  h[0] = 1;
  CHECK_OK(hipMemcpyAsync(d, h, sizeof(int), hipMemcpyHostToDevice, NULL));
  g_blocked.store(1);
  CHECK_OK(hipStreamAddCallback(NULL, block_cb, NULL, 0));
  CHECK_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  /* The first launch of add_n: its code object loads now, out of the null stream's order. */
  hipLaunchKernelGGL(add_n, dim3(1), dim3(1), 0, NULL, d, 41);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpyAsync(h, d, sizeof(int), hipMemcpyDeviceToHost, NULL));
  CHECK_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  CHECK(h[0] == 1); /* nothing after the callback ran yet */
  g_blocked.store(0);
  CHECK_OK(hipDeviceSynchronize());
  CHECK(h[0] == 42);
  CHECK_OK(hipFree(d));
  CHECK_OK(hipHostFree(h));
  return summary();
}
