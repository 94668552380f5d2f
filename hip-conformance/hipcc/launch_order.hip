/* Kernel launches and stream order, as AMD's hip-tests use them (catch/unit/device/
 * hipDeviceSynchronize.cc, HipTest::BlockingContext): the first launch of a kernel (which loads
 * its code object) behind a null stream held by a host callback must return at once, run only
 * once the callback returns, and see the copy queued before it; hipMemset on device memory
 * (catch/unit/memory/hipMemsetSync.cc), hipMemset2D and hipMemset3D return while the kernel
 * before them still runs; a copy of device 0's memory on a stream of device 1 follows device 0's
 * null stream. */
#include <hip/hip_runtime.h>
#include <sched.h>
#include <unistd.h>
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

  /* So are hipMemset2D and hipMemset3D (catch/unit/memory/hipMemsetSync.cc,
   * Unit_hipMemset2DSync/3DSync; clr ihipMemset3D). */
  for (int three = 0; three < 2; three++) {
    go[0] = 0;
    hipLaunchKernelGGL(wait_flag, dim3(1), dim3(1), 0, NULL, go, d);
    CHECK_OK(hipGetLastError());
    if (three) {
      hipPitchedPtr pp = make_hipPitchedPtr(d, sizeof(int), sizeof(int), 1);
      CHECK_OK(hipMemset3D(pp, 9, make_hipExtent(sizeof(int), 1, 1)));
    } else {
      CHECK_OK(hipMemset2D(d, sizeof(int), 9, sizeof(int), 1));
    }
    CHECK_ERR(hipStreamQuery(NULL), hipErrorNotReady);
    __atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
    CHECK_OK(hipDeviceSynchronize());
    CHECK_OK(hipMemcpy(h, d, sizeof(int), hipMemcpyDeviceToHost));
    CHECK(h[0] == 0x09090909);
  }
  /* A pitched block of many rows (4096, not contiguous; one fill a row would fill the 256 KiB
   * ring and block the host) too; its padding stays as it was. */
  {
    const size_t pitch = 256, w = 128, rows = 128, depth = 32, n = pitch * rows * depth;
    char* blk = NULL;
    CHECK_OK(hipMalloc((void**)&blk, n));
    CHECK_OK(hipMemset(blk, 1, n));
    go[0] = 0;
    hipLaunchKernelGGL(wait_flag, dim3(1), dim3(1), 0, NULL, go, d);
    CHECK_OK(hipGetLastError());
    hipPitchedPtr pp = make_hipPitchedPtr(blk, pitch, w, rows);
    CHECK_OK(hipMemset3D(pp, 0x5a, make_hipExtent(w, rows, depth)));
    CHECK_ERR(hipStreamQuery(NULL), hipErrorNotReady);
    __atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
    CHECK_OK(hipDeviceSynchronize());
    char* back = (char*)malloc(n);
    CHECK_OK(hipMemcpy(back, blk, n, hipMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += back[i] != ((i % pitch) < w ? 0x5a : 1);
    CHECK(bad == 0);
    free(back);
    CHECK_OK(hipFree(blk));
  }
  /* On pinned host memory the host waits. */
  CHECK_OK(hipMemset2D(h, sizeof(int), 3, sizeof(int), 1));
  CHECK(h[0] == 0x03030303);

  /* A copy between two buffers of device 0 queued on a stream of device 1 runs where clr runs
   * it: on device 0, behind device 0's null stream (hip_memory.cpp ihipMemcpyCommand), here
   * behind the kernel still waiting for the host (catch/include/memcpy1d_tests_common.hh,
   * MemcpyDeviceToDeviceShell with a stream created while device 1 was current). */
  int ndev = 0;
  CHECK_OK(hipGetDeviceCount(&ndev));
  if (ndev >= 2) {
    int* d2 = NULL;
    CHECK_OK(hipMalloc((void**)&d2, sizeof(int)));
    CHECK_OK(hipMemset(d2, 0, sizeof(int)));
    CHECK_OK(hipMemset(d, 0, sizeof(int)));
    CHECK_OK(hipDeviceSynchronize());
    go[0] = 0;
    hipLaunchKernelGGL(wait_flag, dim3(1), dim3(1), 0, NULL, go, d);
    CHECK_OK(hipGetLastError());
    CHECK_OK(hipSetDevice(1));
    hipStream_t s1 = NULL;
    CHECK_OK(hipStreamCreate(&s1));
    CHECK_OK(hipMemcpyAsync(d2, d, sizeof(int), hipMemcpyDeviceToDevice, s1));
    CHECK_ERR(hipStreamQuery(s1), hipErrorNotReady); /* the copy waits for the kernel */
    usleep(100000); /* time for a copy that does not wait to run, so that it shows */
    __atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
    CHECK_OK(hipStreamSynchronize(s1));
    CHECK_OK(hipStreamDestroy(s1));
    CHECK_OK(hipSetDevice(0));
    CHECK_OK(hipMemcpy(h, d2, sizeof(int), hipMemcpyDeviceToHost));
    CHECK(h[0] == 1); /* the kernel's store, copied after it */

    /* The null stream of device 1 reading device 0's memory follows device 0's blocking
     * streams, as clr's copy on device 0's null stream does. */
    hipStream_t s0 = NULL;
    CHECK_OK(hipStreamCreate(&s0));
    go[0] = 0;
    h[0] = 5;
    hipLaunchKernelGGL(wait_flag, dim3(1), dim3(1), 0, s0, go, d2);
    CHECK_OK(hipGetLastError());
    CHECK_OK(hipSetDevice(1));
    CHECK_OK(hipMemcpyAsync(h, d2, sizeof(int), hipMemcpyDeviceToHost, NULL));
    CHECK_ERR(hipStreamQuery(NULL), hipErrorNotReady);
    usleep(100000);
    CHECK(h[0] == 5);
    __atomic_store_n(go, 1, __ATOMIC_SEQ_CST);
    CHECK_OK(hipStreamSynchronize(NULL));
    CHECK(h[0] == 1);
    CHECK_OK(hipSetDevice(0));
    CHECK_OK(hipStreamDestroy(s0));
    CHECK_OK(hipFree(d2));
  }
  CHECK_OK(hipHostFree(go));
  CHECK_OK(hipFree(d));
  CHECK_OK(hipHostFree(h));
  return summary();
}
