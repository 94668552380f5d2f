/* A program built with -fgpu-default-stream=per-thread: clang sends <<<...>>> to
 * hipLaunchKernel_spt and defines HIP_API_PER_THREAD_DEFAULT_STREAM, under which the HIP headers
 * (Debian's HIP 5.2 amd_hip_runtime_pt_api.h) rename hipMemcpy, hipMemcpyAsync, hipMemset,
 * hipMemcpyToSymbol/FromSymbol, hipStreamSynchronize, hipStreamQuery, ... to their _spt entry
 * points (the Makefile checks with nm that the binary references them). Its default stream is
 * then each thread's per-thread stream: held in the main thread, it holds neither the kernels
 * and copies of another thread nor a non-blocking stream; the main thread's synchronous copies
 * wait for its own kernels. Bytes are checked throughout. */
#include <hip/hip_runtime.h>
#include <sched.h>
#include <unistd.h>
#include <atomic>
#include <thread>

#include "check.h"

#ifndef HIP_API_PER_THREAD_DEFAULT_STREAM
#error "build with -fgpu-default-stream=per-thread"
#endif

enum { N = 256 };

__device__ int g_table[N];

/* a[i] = a[i] * 2 + add */
__global__ void twice_plus(int* a, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) a[i] = a[i] * 2 + add;
}

/* a[i] += g_table[i] */
__global__ void add_table(int* a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) a[i] += g_table[i];
}

static int all_equal(const int* a, int v) {
  for (int i = 0; i < N; i++)
    if (a[i] != v) return 0;
  return 1;
}

/* The other thread: its own per-thread stream, not held by the main thread's. */
static void other_thread(int* d, std::atomic<int>* ok) {
  int h[N];
  for (int i = 0; i < N; i++) h[i] = 5;
  bool good = hipSetDevice(0) == hipSuccess && hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice) == hipSuccess;
  twice_plus<<<N / 64, 64>>>(d, 1);                   /* default stream: this thread's */
  good = good && hipGetLastError() == hipSuccess;
  good = good && hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost) == hipSuccess; /* waits for it */
  good = good && all_equal(h, 11) && hipStreamQuery(0) == hipSuccess;
  ok->store(good ? 1 : 2);
}

int main(void) {
  check_bound_to_expected_library((void*)&hipLaunchKernel_spt);
  int h[N];
  int *d = NULL, *d2 = NULL, *d3 = NULL;
  CHECK_OK(hipMalloc((void**)&d, N * sizeof(int)));
  CHECK_OK(hipMalloc((void**)&d2, N * sizeof(int)));
  CHECK_OK(hipMalloc((void**)&d3, N * sizeof(int)));
  for (int i = 0; i < N; i++) h[i] = i;
  CHECK_OK(hipMemcpyToSymbol(HIP_SYMBOL(g_table), h, sizeof h)); /* hipMemcpyToSymbol_spt */
  int back[N] = {0};
  CHECK_OK(hipMemcpyFromSymbol(back, HIP_SYMBOL(g_table), sizeof back));
  int same = 1;
  for (int i = 0; i < N; i++) same &= back[i] == i;
  CHECK(same);

  /* hold the main thread's per-thread stream on a host word */
  unsigned* word = NULL;
  CHECK_OK(hipHostMalloc((void**)&word, 64, hipHostMallocDefault));
  __atomic_store_n(word, 0u, __ATOMIC_RELEASE);
  CHECK_OK(hipStreamWaitValue32(hipStreamPerThread, word, 1, hipStreamWaitValueGte, ~0u));
  CHECK_OK(hipMemset(d, 0, N * sizeof(int)));   /* hipMemset_spt: behind the hold */
  twice_plus<<<N / 64, 64>>>(d, 3);             /* hipLaunchKernel_spt: behind the hold */
  CHECK_OK(hipGetLastError());
  add_table<<<N / 64, 64, 0, 0>>>(d);           /* an explicit 0 is the per-thread stream too */
  CHECK_OK(hipGetLastError());
  CHECK_ERR(hipStreamQuery(0), hipErrorNotReady); /* hipStreamQuery_spt */

  /* another thread's default stream runs meanwhile */
  std::atomic<int> other{0};
  std::thread t(other_thread, d2, &other);
  for (int i = 0; i < 5000 && other.load() == 0; i++) usleep(1000);
  CHECK(other.load() == 1);

  /* so does a non-blocking stream */
  hipStream_t nb;
  CHECK_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
  for (int i = 0; i < N; i++) h[i] = 7;
  CHECK_OK(hipMemcpyAsync(d3, h, sizeof h, hipMemcpyHostToDevice, nb));
  twice_plus<<<N / 64, 64, 0, nb>>>(d3, 0);
  CHECK_OK(hipStreamSynchronize(nb));
  CHECK_OK(hipMemcpyAsync(h, d3, sizeof h, hipMemcpyDeviceToHost, nb));
  CHECK_OK(hipStreamSynchronize(nb));
  CHECK(all_equal(h, 14));
  CHECK_ERR(hipStreamQuery(0), hipErrorNotReady);

  /* release: the main thread's synchronous copy waits for its kernels */
  __atomic_store_n(word, 1u, __ATOMIC_RELEASE);
  CHECK_OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost)); /* hipMemcpy_spt */
  int good = 1;
  for (int i = 0; i < N; i++) good &= h[i] == 3 + i;
  CHECK(good);
  CHECK_OK(hipStreamSynchronize(0));
  CHECK_OK(hipStreamQuery(0));
  t.join();
  CHECK_OK(hipStreamDestroy(nb));
  CHECK_OK(hipFree(d));
  CHECK_OK(hipFree(d2));
  CHECK_OK(hipFree(d3));
  CHECK_OK(hipHostFree(word));
  return summary();
}
