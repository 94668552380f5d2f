/* Kernel launches and stream order, as AMD's hip-tests use them (catch/unit/device/
 * hipDeviceSynchronize.cc, HipTest::BlockingContext): the first launch of a kernel (which loads
 * its code object) behind a null stream held by a host callback must return at once, run only
 * once the callback returns, and see the copy queued before it; hipMemset on device memory
 * (catch/unit/memory/hipMemsetSync.cc) returns while the kernel before it still runs. */
#include <hip/hip_runtime.h>
#include <sched.h>
#include <atomic>

#include "check.h"

__global__ void add_n(int* a, int n) {
  if (threadIdx.x + blockIdx.x * blockDim.x == 0) a[0] += n;
}

/* Spins until the host sets *go (pinned memory), then writes 1 to *out. */
__global__ void wait_flag(volatile int* go, int* out) {
  while (*go == 0) __builtin_amdgcn_s_sleep(10);
  *out = 1;
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

  /* hipMemset on hipMalloc memory is asynchronous to the host: it returns with the kernel that
   * precedes it on the null stream still waiting for the host. */
  int* go = NULL;
  CHECK_OK(hipHostMalloc((void**)&go, sizeof(int), hipHostMallocDefault));
  go[0] = 0;
  hipLaunchKernelGGL(wait_flag, dim3(1), dim3(1), 0, NULL, go, d);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemset(d, 7, sizeof(int)));
  CHECK_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  __atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
  CHECK_OK(hipDeviceSynchronize());
  CHECK_OK(hipMemcpy(h, d, sizeof(int), hipMemcpyDeviceToHost));
  CHECK(h[0] == 0x07070707); /* the memset ran after the kernel's store */
  CHECK_OK(hipHostFree(go));
  CHECK_OK(hipFree(d));
  CHECK_OK(hipHostFree(h));
  return summary();
}
