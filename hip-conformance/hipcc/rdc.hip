/* Relocatable device code (`hipcc -fgpu-rdc`, as AMD's hip-tests build memory/InlineVarTest):
 * two translation units, this one and rdc_lib.hip, whose device code hipcc links into one code
 * object. The program registers that fat binary once (__hipRegisterFatBinary), with the kernels
 * and variables of both units: a kernel here calls a device function of rdc_lib.hip and reads
 * its __device__ variable, which both units' host code reach by hipMemcpyToSymbol/FromSymbol
 * and hipGetSymbolAddress at the same address, and a kernel of rdc_lib.hip is launched from
 * that unit's host code. */
#include <hip/hip_runtime.h>

#include "check.h"

extern __device__ int rdc_scale;  /* defined in rdc_lib.hip */
extern __device__ int rdc_twice(int v);
void rdc_lib_set_scale(int v);
int rdc_lib_get_scale();
void* rdc_lib_scale_address();
hipError_t rdc_lib_launch_fill(int* out, int n, int v);

__global__ void rdc_apply(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = rdc_twice(in[i]) * rdc_scale;
}

int main(void) {
  check_bound_to_expected_library((void*)&hipDeviceSynchronize);
  const int n = 300;
  int h[n];
  int *in = NULL, *out = NULL;
  CHECK_OK(hipMalloc((void**)&in, n * sizeof(int)));
  CHECK_OK(hipMalloc((void**)&out, n * sizeof(int)));
  for (int i = 0; i < n; i++) h[i] = i - 100;
  CHECK_OK(hipMemcpy(in, h, sizeof(h), hipMemcpyHostToDevice));

  /* The variable written from this unit is the one the other unit reads, and back. */
  int three = 3;
  CHECK_OK(hipMemcpyToSymbol(HIP_SYMBOL(rdc_scale), &three, sizeof(int)));
  CHECK(rdc_lib_get_scale() == 3);
  rdc_lib_set_scale(5);
  int got = 0;
  CHECK_OK(hipMemcpyFromSymbol(&got, HIP_SYMBOL(rdc_scale), sizeof(int)));
  CHECK(got == 5);
  void* here = NULL;
  size_t size = 0;
  CHECK_OK(hipGetSymbolAddress(&here, HIP_SYMBOL(rdc_scale)));
  CHECK_OK(hipGetSymbolSize(&size, HIP_SYMBOL(rdc_scale)));
  CHECK(here != NULL && here == rdc_lib_scale_address());
  CHECK(size == sizeof(int));

  /* A kernel of this unit calling across units: out = 2 * in * scale. */
  hipLaunchKernelGGL(rdc_apply, dim3((n + 127) / 128), dim3(128), 0, 0, in, out, n);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpy(h, out, sizeof(h), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += h[i] != 2 * (i - 100) * 5;
  CHECK(bad == 0);

  /* A kernel of the other unit, launched from its host code. */
  CHECK_OK(rdc_lib_launch_fill(out, n, 9));
  CHECK_OK(hipMemcpy(h, out, sizeof(h), hipMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; i++) bad += h[i] != 9 * 5;
  CHECK(bad == 0);

  CHECK_OK(hipFree(in));
  CHECK_OK(hipFree(out));
  return summary();
}
