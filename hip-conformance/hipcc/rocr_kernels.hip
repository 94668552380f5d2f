/* AMD's own HIP runtime (Debian's ROCm 5.2 libamdhip64.so.5 over ROCr and libhsakmt, not ours)
 * launching kernels on kfd-sim: its AQL queues (created with the EOP and CWSR sizes the kernel
 * checks), its blit kernels (hipMemset), PM4-IB cache packets and barriers run on the model's
 * command processor, the kernels on the gfx90a interpreter. Results checked on the host. */
#include <hip/hip_runtime.h>
#include "check.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void reduce(const int* in, int n, unsigned long long* out) {
  __shared__ int part[256];
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += in[i];
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, (unsigned long long)part[0]);
}

int main(void) {
  enum { N = 5000 };
  static float x[N], y[N], got[N];
  static int in[N];
  unsigned long long want = 0, sum = 0;
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 97) - 40.0f;
    y[i] = (float)(i % 13);
    in[i] = i % 101 - 50;
    want += (unsigned long long)(long long)in[i];
  }
  float *dx, *dy;
  int* din;
  unsigned long long* dout;
  CHECK_OK(hipMalloc((void**)&dx, sizeof x));
  CHECK_OK(hipMalloc((void**)&dy, sizeof y));
  CHECK_OK(hipMalloc((void**)&din, sizeof in));
  CHECK_OK(hipMalloc((void**)&dout, sizeof *dout));
  CHECK_OK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(din, in, sizeof in, hipMemcpyHostToDevice));
  CHECK_OK(hipMemset(dout, 0, sizeof *dout));
  hipLaunchKernelGGL(saxpy, dim3((N + 255) / 256), dim3(256), 0, 0, N, 3.0f, dx, dy);
  hipLaunchKernelGGL(reduce, dim3(8), dim3(256), 0, 0, din, N, dout);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipDeviceSynchronize());
  CHECK_OK(hipMemcpy(got, dy, sizeof got, hipMemcpyDeviceToHost));
  CHECK_OK(hipMemcpy(&sum, dout, sizeof sum, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += got[i] != 3.0f * x[i] + y[i];
  CHECK(bad == 0);
  CHECK(sum == want);
  CHECK_OK(hipFree(dx));
  CHECK_OK(hipFree(dy));
  CHECK_OK(hipFree(din));
  CHECK_OK(hipFree(dout));
  return summary();
}
