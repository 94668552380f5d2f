/* Device code for module.hip, built with `hipcc --genco`. */
#include <hip/hip_runtime.h>

__device__ int counter[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ int* second = &counter[1];
extern "C" __global__ void Kernel42(int* p) { *p = 42 + counter[0]; }
extern "C" __global__ void NOPKernel() {}
__device__ int twice(int x) { return 2 * x; }
extern "C" __global__ void Twice(int* p) { *p = twice(*p); }
