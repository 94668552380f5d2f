// Test kernels for the amdgcn-isa interpreter (built with hipcc -O3 for gfx90a at test time).
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void vadd_int(const int* a, const int* b, int* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void reduce_sum(const int* in, int* out, int n) {
    __shared__ int s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, s[0]);
}

extern "C" __global__ void index2d(int* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = x * 1000 + y;
}

extern "C" __global__ void collatz(const unsigned* in, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = in[i], steps = 0;
    while (v != 1 && steps < 1000) {
        if (v & 1) v = 3 * v + 1;
        else v >>= 1;
        steps++;
    }
    out[i] = steps;
}

extern "C" __global__ void dbl_half(const double* a, const __half* h, double* od, __half* oh, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double x = a[i];
        od[i] = x * x + sqrt(x) - x / 3.0;
        __half y = h[i];
        oh[i] = __hadd(__hmul(y, y), __float2half(1.0f));
    }
}

extern "C" __global__ void scratch_array(const int* idx, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int arr[48];
    for (int k = 0; k < 48; k++) arr[k] = k * i + 7;
    volatile int j = idx[i] % 48;
    out[i] = arr[j] + arr[(j + 5) % 48];
}

extern "C" __global__ void cas_add(unsigned* counter, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned old = *counter, assumed;
    do {
        assumed = old;
        old = atomicCAS(counter, assumed, assumed + (unsigned)(i % 7));
    } while (old != assumed);
}

extern "C" __global__ void grid_stride(float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = x[i] * 2.0f + 1.0f;
}

extern "C" __global__ void copy64(const uint2* src, uint2* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

extern "C" __global__ void copy128(const uint4* src, uint4* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { uint4 v = src[i]; v.x ^= 1; dst[i] = v; }
}

extern "C" __global__ void memset8(unsigned char* p, unsigned char v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}

extern "C" __global__ void shfl_ballot(const int* in, int* out) {
    int t = threadIdx.x;
    int v = in[blockIdx.x * blockDim.x + t];
    int s = v;
    for (int k = 32; k > 0; k >>= 1) s += __shfl_xor(s, k);
    unsigned long long b = __ballot(v & 1);
    int from = __shfl(v, (t + 3) % 64);
    int base = (blockIdx.x * blockDim.x + t) * 4;
    out[base] = s;
    out[base + 1] = (int)__popcll(b);
    out[base + 2] = from;
    out[base + 3] = __shfl_down(v, 1);
}

extern "C" __global__ void oob_read(const int* p, int* out) {
    out[threadIdx.x] = p[threadIdx.x + (1 << 26)];
}

extern "C" __global__ void fmath(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = a[i], y = b[i];
        out[4 * i] = x / y;
        out[4 * i + 1] = sqrtf(fabsf(x)) + fminf(x, y);
        out[4 * i + 2] = (float)(int)(x * 3.5f) + (float)(unsigned)(y * 10.f);
        out[4 * i + 3] = x > y ? x - y : y * 0.25f;
    }
}

extern "C" __global__ void atomics(int* ia, unsigned* ua, unsigned long long* u64, float* f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&ia[0], i);
    atomicSub(&ia[1], 1);
    atomicMin(&ia[2], i - 100);
    atomicMax(&ia[3], i);
    atomicAnd(&ua[0], ~(1u << (i % 32)));
    atomicOr(&ua[1], 1u << (i % 32));
    atomicXor(&ua[2], (unsigned)i);
    atomicInc(&ua[3], 16u);
    atomicExch(&ua[4], 77u);
    atomicAdd(&u64[0], (unsigned long long)i << 20);
    atomicAdd(&f[0], 0.5f);
    atomicMin(&ua[5], (unsigned)i + 5);
}

extern "C" __global__ void lds_transpose(const float* in, float* out, int w) {
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    int tx = blockIdx.y * 16 + threadIdx.x, ty = blockIdx.x * 16 + threadIdx.y;
    out[ty * w + tx] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void int_div(const int* a, const int* b, int* q, unsigned long long* q64, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[2 * i] = a[i] / b[i];
        q[2 * i + 1] = a[i] % b[i];
        q64[i] = ((unsigned long long)(unsigned)a[i] << 20) / (unsigned long long)(unsigned)b[i];
    }
}

// Wave 0 (which runs first) waits for a flag wave 1 sets in LDS, without a barrier.
extern "C" __global__ void lds_flag_spin(int* out) {
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        int n = 0;
        while (flag == 0) n++;
        out[1] = flag;
    }
    if (threadIdx.x == 64) {
        for (int i = 0; i < 100000; i++) out[2] += 1;
        flag = 42;
    }
}

extern "C" __global__ void index3d(int* out, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < w && y < h && z < d) out[(z * h + y) * w + x] = x + 100 * y + 10000 * z + 1000000 * (int)gridDim.z;
}

// Every workgroup waits for the next one to have started (a chain across the grid): needs
// workgroups to take turns when there are more of them than host threads.
extern "C" __global__ void wait_for_next(volatile int* flags, int n) {
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        flags[b] = 1;
        if (b + 1 < n) while (flags[b + 1] == 0) {}
        flags[n + b] = 2;
    }
}

// A software grid barrier: every block counts itself in, then waits for all the others, so all
// blocks must be resident at once (as on a GPU, up to its wave slots).
extern "C" __global__ void all_arrive(int* count, int* out, int n) {
    if (threadIdx.x == 0) {
        atomicAdd(count, 1);
        while (*(volatile int*)count < n) {}
        out[blockIdx.x] = *(volatile int*)count;
    }
}

// Real calls: a recursive non-inlined function (dynamic stack in scratch, s_swappc/s_setpc).
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

extern "C" __global__ void recurse(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fib(in[i]);
}

// hip-tests' HipTest::addCountReverse (Unit_hipEvent's kernel): a 64-bit index walked down by
// the grid stride, `count` times over. hipcc keeps the index pair in VGPRs (v_pk_mov_b32,
// 64-bit carry chains, v_cmp_*_i64).
extern "C" __global__ void count_reverse(const int* a, int* c, long long n, int count) {
    size_t offset = blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = blockDim.x * gridDim.x;
    for (int k = 0; k < count; k++)
        for (long long i = n - stride + offset; i >= 0; i -= stride) c[i] = a[i] + count;
}
