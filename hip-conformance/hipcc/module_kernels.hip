/* Device code for module.hip, built with `hipcc --genco`. */
#include <hip/hip_runtime.h>

__device__ int counter[8];
extern "C" __global__ void Kernel42(int* p) { *p = 42 + counter[0]; }
extern "C" __global__ void NOPKernel() {}
__device__ int twice(int x) { return 2 * x; }
extern "C" __global__ void Twice(int* p) { *p = twice(*p); }
