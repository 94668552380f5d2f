/* The scoreboard's kernel (bench/scoreboard.c, section "kernel"), built with `hipcc --genco`. */
#include <hip/hip_runtime.h>

extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
