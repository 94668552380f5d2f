// Device math library paths (ocml): transcendental f32/f64, f16 arithmetic, funnel shifts,
// bit intrinsics, __syncthreads_count-style reductions.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

extern "C" __global__ void math_f32(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    out[8 * i + 0] = sinf(x);
    out[8 * i + 1] = cosf(x);
    out[8 * i + 2] = expf(x * 0.1f);
    out[8 * i + 3] = logf(fabsf(x) + 1.0f);
    out[8 * i + 4] = powf(fabsf(x) + 0.5f, 1.7f);
    out[8 * i + 5] = tanhf(x * 0.2f);
    out[8 * i + 6] = floorf(x) + ceilf(x * 0.3f) + truncf(-x);
    out[8 * i + 7] = fmaf(x, x, -1.0f) + rsqrtf(fabsf(x) + 1.0f);
}

extern "C" __global__ void math_f64(const double* a, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i];
    out[4 * i + 0] = sin(x);
    out[4 * i + 1] = exp(x * 0.1);
    out[4 * i + 2] = log(fabs(x) + 1.0);
    out[4 * i + 3] = x / (x * x + 1.0) + floor(x);
}

extern "C" __global__ void bits(const unsigned* a, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i];
    unsigned long long y = ((unsigned long long)x << 32) | (x * 2654435761u);
    out[8 * i + 0] = __popc(x);
    out[8 * i + 1] = __clz(x);
    out[8 * i + 2] = __ffs(x);
    out[8 * i + 3] = __brev(x);
    out[8 * i + 4] = __funnelshift_l(x, x * 3u, i % 32);
    out[8 * i + 5] = __popcll(y) + __clzll(y);
    out[8 * i + 6] = __byte_perm(x, x * 7u, 0x5140);
    out[8 * i + 7] = (x >> 5) & 0x3ff;
}

extern "C" __global__ void half_math(const __half* a, __half* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i];
    __half2 p = __halves2half2(x, __hneg(x));
    __half2 q = __hmul2(p, p);
    out[4 * i + 0] = __low2half(q);
    out[4 * i + 1] = __high2half(__hadd2(q, p));
    out[4 * i + 2] = __hdiv(x, __float2half(3.0f));
    out[4 * i + 3] = __hgt(x, __float2half(0.5f)) ? x : __hsub(x, __float2half(2.0f));
}

extern "C" __global__ void sync_count(const int* in, int* out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int c = __syncthreads_count(v > 10);
    int a = __syncthreads_and(v > -1);
    int o = __syncthreads_or(v == 77);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x] = c;
        out[3 * blockIdx.x + 1] = a;
        out[3 * blockIdx.x + 2] = o;
    }
}
