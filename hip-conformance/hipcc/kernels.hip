/* A hipcc program with kernels: registration parses its fat binary; every launch is validated
 * and then refused with hipErrorNotSupported (kernels cannot run yet), which is also the sticky
 * last error; host copies around the launches still work; device globals are loaded with their
 * initial values and copied to and from. */
#include <hip/hip_runtime.h>
#include "check.h"

__device__ int table[16] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

__global__ void __launch_bounds__(256) fill(int* p, int v) { p[threadIdx.x] = v + table[0]; }
__global__ void nop() {}

static int not_a_kernel(void) { return 0; }

/* hipGetFuncBySymbol (ROCm 6.1+) is not in ROCm 5.2's header nor library: looked up at run time,
 * so this program also links against AMD's 5.2 library (and runs with ours preloaded). */
typedef hipError_t (*get_func_by_symbol_t)(hipFunction_t*, const void*);

int main(void) {
  check_bound_to_expected_library((void*)&hipLaunchKernel);
  enum { N = 256 };
  int h[N], back[N];
  for (int i = 0; i < N; i++) h[i] = i;
  int* d = NULL;
  CHECK_OK(hipMalloc((void**)&d, sizeof h));
  CHECK_OK(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice));

  /* <<<>>> and hipLaunchKernelGGL go through __hipPush/PopCallConfiguration + hipLaunchKernel. */
  CHECK_OK(hipGetLastError());
  fill<<<1, 64>>>(d, 7);
  CHECK_ERR(hipPeekAtLastError(), hipErrorNotSupported);
  CHECK_ERR(hipGetLastError(), hipErrorNotSupported);
  CHECK_OK(hipGetLastError());
  hipLaunchKernelGGL(nop, dim3(2), dim3(32), 0, 0);
  CHECK_ERR(hipGetLastError(), hipErrorNotSupported);

  int val = 7;
  void* args[] = {&d, &val};
  CHECK_ERR(hipLaunchKernel((const void*)fill, dim3(1), dim3(64), args, 0, 0), hipErrorNotSupported);
  /* hip-tests Unit_hipLaunchKernel_Negative_Parameters (ROCm 7). */
  CHECK_ERR(hipLaunchKernel(NULL, dim3(1), dim3(1), NULL, 0, 0), hipErrorInvalidDeviceFunction);
  CHECK_ERR(hipLaunchKernel((const void*)not_a_kernel, dim3(1), dim3(1), NULL, 0, 0), hipErrorInvalidDeviceFunction);
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(0), dim3(1), NULL, 0, 0), hipErrorInvalidConfiguration);
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(1, 0, 1), NULL, 0, 0), hipErrorInvalidConfiguration);
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(1025), NULL, 0, 0), hipErrorInvalidConfiguration);
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(11, 11, 11), NULL, 0, 0), hipErrorInvalidConfiguration);
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(1), NULL, 65537, 0), hipErrorInvalidValue);
  CHECK_ERR(hipLaunchKernel((const void*)fill, dim3(1), dim3(1), NULL, 0, 0), hipErrorInvalidValue);
  CHECK_ERR(hipLaunchKernel((const void*)fill, dim3(1), dim3(512), args, 0, 0), hipErrorLaunchFailure);
  hipStream_t s;
  CHECK_OK(hipStreamCreate(&s));
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(1), NULL, 0, s), hipErrorNotSupported);
  CHECK_OK(hipStreamDestroy(s));
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(1), NULL, 0, s), hipErrorInvalidValue);
  CHECK_ERR(hipLaunchCooperativeKernel((const void*)nop, dim3(1), dim3(1), NULL, 0, 0), hipErrorNotSupported);
  CHECK_ERR(hipLaunchCooperativeKernel((const void*)nop, dim3(0), dim3(1), NULL, 0, 0), hipErrorInvalidConfiguration);
  CHECK_ERR(hipLaunchCooperativeKernel(NULL, dim3(1), dim3(1), NULL, 0, 0), hipErrorInvalidDeviceFunction);

  /* Call configuration stack: push/pop in LIFO order, per thread. */
  dim3 g, b;
  size_t shm;
  hipStream_t st;
  CHECK_OK(__hipPushCallConfiguration(dim3(1, 2, 3), dim3(4, 5, 6), 7, 0));
  CHECK_OK(__hipPushCallConfiguration(dim3(8), dim3(9), 10, 0));
  CHECK_OK(__hipPopCallConfiguration(&g, &b, &shm, &st));
  CHECK(g.x == 8 && b.x == 9 && shm == 10);
  CHECK_OK(__hipPopCallConfiguration(&g, &b, &shm, &st));
  CHECK(g.x == 1 && g.y == 2 && g.z == 3 && b.x == 4 && b.y == 5 && b.z == 6 && shm == 7 && st == 0);
  CHECK_ERR(__hipPopCallConfiguration(&g, &b, &shm, &st), hipErrorMissingConfiguration);

  /* Attributes and symbols come from the parsed code object. */
  hipFuncAttributes a;
  CHECK_OK(hipFuncGetAttributes(&a, (const void*)fill));
  CHECK(a.maxThreadsPerBlock == 256);
  CHECK(a.binaryVersion == 90);
  CHECK_ERR(hipFuncGetAttributes(&a, (const void*)not_a_kernel), hipErrorInvalidDeviceFunction);
  CHECK_ERR(hipFuncGetAttributes(NULL, (const void*)fill), hipErrorInvalidValue);
  CHECK_OK(hipFuncSetCacheConfig((const void*)fill, hipFuncCachePreferL1));
  CHECK_ERR(hipFuncSetCacheConfig(NULL, hipFuncCachePreferL1), hipErrorInvalidDeviceFunction);
  hipFunction_t hf;
  get_func_by_symbol_t get_func = (get_func_by_symbol_t)dlsym(RTLD_DEFAULT, "hipGetFuncBySymbol");
  CHECK(get_func != NULL);
  if (get_func == NULL) return summary();
  CHECK_OK(get_func(&hf, (const void*)fill));
  int v = 0;
  CHECK_OK(hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, hf));
  CHECK(v == 256);
  size_t sz = 0;
  CHECK_OK(hipGetSymbolSize(&sz, HIP_SYMBOL(table)));
  CHECK(sz == sizeof(int) * 16);
  CHECK_ERR(hipGetSymbolSize(&sz, (const void*)&h), hipErrorInvalidSymbol);

  /* Device globals: the code object is loaded into device memory with its initial values. */
  int t[16] = {0}, t2[16] = {0};
  CHECK_OK(hipMemcpyFromSymbol(t, HIP_SYMBOL(table), sizeof t, 0, hipMemcpyDeviceToHost));
  CHECK(t[0] == 5 && t[15] == 20);
  void* addr = NULL;
  CHECK_OK(hipGetSymbolAddress(&addr, HIP_SYMBOL(table)));
  CHECK(addr != NULL);
  CHECK_OK(hipMemcpy(t2, addr, sizeof t2, hipMemcpyDeviceToHost));
  CHECK(memcmp(t, t2, sizeof t) == 0);
  int nine[2] = {90, 91};
  CHECK_OK(hipMemcpyToSymbol(HIP_SYMBOL(table), nine, sizeof nine, 4 * sizeof(int), hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(t2, addr, sizeof t2, hipMemcpyDeviceToHost));
  CHECK(t2[3] == 8 && t2[4] == 90 && t2[5] == 91 && t2[6] == 11);
  CHECK_OK(hipMemcpyFromSymbolAsync(t, HIP_SYMBOL(table), sizeof(int), 5 * sizeof(int), hipMemcpyDeviceToHost, 0));
  CHECK_OK(hipStreamSynchronize(0));
  CHECK(t[0] == 91);
  CHECK_ERR(hipMemcpyToSymbol(HIP_SYMBOL(table), nine, sizeof nine, 15 * sizeof(int), hipMemcpyHostToDevice),
            hipErrorInvalidValue);
  CHECK_ERR(hipMemcpyFromSymbol(t, (const void*)&h, 4, 0, hipMemcpyDeviceToHost), hipErrorInvalidSymbol);
  CHECK_ERR(hipGetSymbolAddress(&addr, (const void*)&h), hipErrorInvalidSymbol);

  /* The copies still work after the refused launches. */
  memset(back, 0, sizeof back);
  CHECK_OK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
  CHECK(memcmp(h, back, sizeof h) == 0);
  CHECK_OK(hipFree(d));

  /* hipDeviceReset frees device memory, the loaded globals included: they load again. */
  CHECK_OK(hipDeviceReset());
  memset(t, 0, sizeof t);
  CHECK_OK(hipMemcpyFromSymbol(t, HIP_SYMBOL(table), sizeof t, 0, hipMemcpyDeviceToHost));
  CHECK(t[4] == 9 && t[5] == 10);
  return summary();
}
