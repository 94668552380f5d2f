/* The second translation unit of hipcc/rdc.hip (built with -fgpu-rdc). */
#include <hip/hip_runtime.h>

__device__ int rdc_scale = 1;

__device__ int rdc_twice(int v) { return 2 * v; }

__global__ void rdc_fill(int* out, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v * rdc_scale;
}

void rdc_lib_set_scale(int v) { (void)hipMemcpyToSymbol(HIP_SYMBOL(rdc_scale), &v, sizeof(int)); }

int rdc_lib_get_scale() {
  int v = -1;
  (void)hipMemcpyFromSymbol(&v, HIP_SYMBOL(rdc_scale), sizeof(int));
  return v;
}

void* rdc_lib_scale_address() {
  void* p = NULL;
  (void)hipGetSymbolAddress(&p, HIP_SYMBOL(rdc_scale));
  return p;
}

hipError_t rdc_lib_launch_fill(int* out, int n, int v) {
  hipLaunchKernelGGL(rdc_fill, dim3((n + 63) / 64), dim3(64), 0, 0, out, n, v);
  return hipGetLastError();
}
