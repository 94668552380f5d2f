/* A hipcc program with kernels: registration parses its fat binary; launches are validated with
 * AMD's error codes and run on the simulated GPU (kfd-sim's AQL queues and gfx90a interpreter),
 * their results checked on the host: SAXPY, a reduction with LDS, barriers and atomicAdd, stream
 * order with copies both ways and across streams through events, graphs with kernel nodes
 * (captured and added); device globals are loaded with their initial values and copied to and
 * from. `kernels fault` runs one kernel that writes through a bad pointer: the next
 * synchronisation returns hipErrorIllegalAddress. A kernel spinning on a host flag does not hold
 * up allocations, host registration or copies on other streams. 8- and 16-bit integers convert
 * to __half exactly as the host rounds them (v_cvt_f16_i16/u16, CuPy's int -> float16 casts);
 * the minimum and maximum of three shorts (v_min3/v_max3_i16/u16, rocPRIM's int16 reductions). */
#include <hip/hip_runtime.h>
#include <hip/hip_ext.h>
#include <hip/hip_fp16.h>
#include <pthread.h>
#include "check.h"

__device__ int table[16] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

__global__ void __launch_bounds__(256) fill(int* p, int v) { p[threadIdx.x] = v + table[0]; }
__global__ void nop() {}

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

/* Sum of `in` into *out: per-block tree in LDS with barriers, then one atomicAdd per block. */
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

/* p[i] = p[i] * m + a for i < n (grid-stride). */
__global__ void scale_add(int* p, int n, int m, int a) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = p[i] * m + a;
}

/* Dynamic LDS: each block reverses its slice through extern shared memory. */
__global__ void reverse_block(int* p) {
  extern __shared__ int tmp[];
  int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  tmp[t] = p[base + t];
  __syncthreads();
  p[base + t] = tmp[blockDim.x - 1 - t];
}

__global__ void write_bad(int* p) { p[threadIdx.x] = 1; }

/* Spins until the host sets *flag (system-scope load), then writes *out = *flag + 1. */
__global__ void wait_flag(volatile int* flag, int* out) {
  while (__atomic_load_n((int*)flag, __ATOMIC_ACQUIRE) == 0) __builtin_amdgcn_s_sleep(10);
  *out = *flag + 1;
}

/* While a kernel runs, the driver keeps working: a kernel spinning on a host flag does not hold
 * up hipMalloc of a new BO, hipHostRegister (a USERPTR BO), stream creation or a copy on another
 * stream, and
 * sees the flag the host sets after them (kfd-sim gives the VM up while a kernel runs). */
/* A launch on a stream of another device than the current one runs on the stream's device (clr
 * ihipLaunchKernel; hip-tests hipMemcpyPeerAsync.cc launch on a stream made before hipSetDevice). */
static void other_device_stream_case(void) {
  int n = 0;
  CHECK_OK(hipGetDeviceCount(&n));
  if (n < 2) return;
  int* d0 = NULL;
  hipStream_t s0;
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipMalloc((void**)&d0, 64 * sizeof(int)));
  CHECK_OK(hipStreamCreate(&s0));
  CHECK_OK(hipMemset(d0, 0, 64 * sizeof(int)));
  CHECK_OK(hipDeviceSynchronize());
  CHECK_OK(hipSetDevice(1));
  scale_add<<<1, 64, 0, s0>>>(d0, 64, 1, 30);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipStreamSynchronize(s0));
  int back[64] = {0}, bad = 0;
  CHECK_OK(hipMemcpy(back, d0, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) bad += back[i] != 30;
  CHECK(bad == 0);
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipStreamDestroy(s0));
  CHECK_OK(hipFree(d0));
}

/* hipExtLaunchMultiKernelMultiDevice / hipLaunchCooperativeKernelMultiDevice: one launch per
 * device on its own stream; the list is checked before anything runs (clr). */
static void multi_device_case(void) {
  int n = 0;
  CHECK_OK(hipGetDeviceCount(&n));
  if (n < 2) return;
  int* d[2] = {NULL, NULL};
  hipStream_t s[2];
  for (int i = 0; i < 2; i++) {
    CHECK_OK(hipSetDevice(i));
    CHECK_OK(hipMalloc((void**)&d[i], 64 * sizeof(int)));
    CHECK_OK(hipMemset(d[i], 0, 64 * sizeof(int)));
    CHECK_OK(hipStreamCreate(&s[i]));
  }
  CHECK_OK(hipSetDevice(0));
  int len = 64, mul = 1, add[2] = {5, 7};
  void* args0[] = {&d[0], &len, &mul, &add[0]};
  void* args1[] = {&d[1], &len, &mul, &add[1]};
  hipLaunchParams p[2];
  for (int i = 0; i < 2; i++) {
    p[i].func = (void*)scale_add;
    p[i].gridDim = dim3(1);
    p[i].blockDim = dim3(64);
    p[i].args = i == 0 ? args0 : args1;
    p[i].sharedMem = 0;
    p[i].stream = s[i];
  }
  CHECK_OK(hipExtLaunchMultiKernelMultiDevice(p, 2, 0));
  CHECK_OK(hipLaunchCooperativeKernelMultiDevice(p, 2, hipCooperativeLaunchMultiDeviceNoPreSync));
  for (int i = 0; i < 2; i++) CHECK_OK(hipStreamSynchronize(s[i]));
  for (int i = 0; i < 2; i++) {
    int back[64] = {0}, bad = 0;
    CHECK_OK(hipMemcpy(back, d[i], sizeof back, hipMemcpyDeviceToHost));
    for (int j = 0; j < 64; j++) bad += back[j] != 2 * add[i];
    CHECK(bad == 0);
  }
  CHECK_ERR(hipExtLaunchMultiKernelMultiDevice(NULL, 2, 0), hipErrorInvalidValue);
  CHECK_ERR(hipExtLaunchMultiKernelMultiDevice(p, 0, 0), hipErrorInvalidValue);
  CHECK_ERR(hipExtLaunchMultiKernelMultiDevice(p, n + 1, 0), hipErrorInvalidValue);
  CHECK_ERR(hipExtLaunchMultiKernelMultiDevice(p, 2, 4), hipErrorInvalidValue);
  p[1].stream = s[0];
  CHECK_ERR(hipLaunchCooperativeKernelMultiDevice(p, 2, 0), hipErrorInvalidDevice);
  p[1].stream = NULL;
  CHECK_ERR(hipLaunchCooperativeKernelMultiDevice(p, 2, 0), hipErrorInvalidResourceHandle);
  for (int i = 0; i < 2; i++) {
    CHECK_OK(hipStreamDestroy(s[i]));
    CHECK_OK(hipFree(d[i]));
  }
}

/* Occupancy from the kernels' metadata, as clr computes it: LDS limits blocks per CU, the
 * register file the rest; the potential block size fills a CU within the device's limit. */
static void occupancy_case(void) {
  int n = -1, g = -1, b = -1;
  CHECK_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, reverse_block, 64, 32768));
  CHECK(n == 2); /* 64 KiB of LDS per CU, 32 KiB per block */
  CHECK_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, scale_add, 256, 0));
  CHECK(n >= 1 && n * 256 <= 2048); /* at most 8 waves per SIMD, 4 SIMDs */
  CHECK_OK(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, scale_add, 2048, 0, hipOccupancyDefault));
  CHECK(n == 0); /* larger than a block may be */
  CHECK_OK(hipOccupancyMaxPotentialBlockSize(&g, &b, scale_add, 0, 0));
  hipDeviceProp_t p;
  CHECK_OK(hipGetDeviceProperties(&p, 0));
  CHECK(b > 0 && b <= 1024 && b % 64 == 0 && g > 0 && g % p.multiProcessorCount == 0);
  CHECK_OK(hipOccupancyMaxPotentialBlockSize(&g, &b, scale_add, 0, 100));
  CHECK(b == 128); /* the limit, rounded up to whole waves */
  CHECK_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessor(NULL, scale_add, 64, 0), hipErrorInvalidValue);
  CHECK_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, scale_add, 0, 0), hipErrorInvalidValue);
  CHECK_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, scale_add, 64, 0, 7), hipErrorInvalidValue);
  CHECK_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void*)&g_passed, 64, 0), hipErrorInvalidDeviceFunction);
  CHECK_ERR(hipOccupancyMaxPotentialBlockSize(NULL, &b, scale_add, 0, 0), hipErrorInvalidValue);
}

/* hipMemPoolSetAccess maps the pool's blocks, present and future, for the device given access:
 * a kernel on device 1 writes a device-0 pool's memory without peer access (CUDA's
 * cudaMemPoolSetAccess; hip-tests Unit_hipMemPoolSetAccess_SetAccess). */
static void pool_access_case(void) {
  int n = 0;
  CHECK_OK(hipGetDeviceCount(&n));
  if (n < 2) return;
  hipMemPoolProps props = {};
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  hipMemPool_t pool;
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipMemPoolCreate(&pool, &props));
  hipStream_t s0, s1;
  CHECK_OK(hipStreamCreate(&s0));
  int *before = NULL, *after = NULL;
  CHECK_OK(hipMallocFromPoolAsync((void**)&before, 4 << 20, pool, s0));
  CHECK_OK(hipMemsetAsync(before, 0, 4 << 20, s0));
  hipMemAccessDesc d = {};
  d.location.type = hipMemLocationTypeDevice;
  d.location.id = 1;
  d.flags = hipMemAccessFlagsProtReadWrite;
  CHECK_OK(hipMemPoolSetAccess(pool, &d, 1));
  CHECK_OK(hipMallocFromPoolAsync((void**)&after, 4 << 20, pool, s0));
  CHECK_OK(hipMemsetAsync(after, 0, 4 << 20, s0));
  CHECK_OK(hipStreamSynchronize(s0));
  CHECK_OK(hipSetDevice(1));
  CHECK_OK(hipStreamCreate(&s1));
  scale_add<<<4, 256, 0, s1>>>(before, 1024, 1, 7);
  scale_add<<<4, 256, 0, s1>>>(after, 1024, 1, 9);
  CHECK_OK(hipStreamSynchronize(s1));
  int b[2] = {0, 0};
  CHECK_OK(hipMemcpy(&b[0], before + 1023, sizeof(int), hipMemcpyDeviceToHost));
  CHECK_OK(hipMemcpy(&b[1], after + 1023, sizeof(int), hipMemcpyDeviceToHost));
  CHECK(b[0] == 7 && b[1] == 9);
  CHECK_OK(hipStreamDestroy(s1));
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipFreeAsync(before, s0));
  CHECK_OK(hipFreeAsync(after, s0));
  CHECK_OK(hipStreamSynchronize(s0));
  CHECK_OK(hipStreamDestroy(s0));
  CHECK_OK(hipMemPoolDestroy(pool));
}

static void busy_kernel_case(void) {
  int *flag = NULL, *out = NULL, *d = NULL, *h2 = NULL;
  CHECK_OK(hipHostMalloc((void**)&flag, sizeof(int), hipHostMallocCoherent));
  CHECK_OK(hipMalloc((void**)&out, sizeof(int)));
  *flag = 0;
  hipStream_t s1, s2;
  CHECK_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  wait_flag<<<1, 1, 0, s1>>>(flag, out);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMalloc((void**)&d, 64 << 20));
  h2 = (int*)aligned_alloc(4096, 1 << 20);
  CHECK_OK(hipHostRegister(h2, 1 << 20, 0)); /* a USERPTR BO mapped on every GPU */
  CHECK_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  for (int i = 0; i < 256; i++) h2[i] = i * 3;
  CHECK_OK(hipMemcpyAsync(d, h2, 1 << 20, hipMemcpyHostToDevice, s2));
  CHECK_OK(hipStreamSynchronize(s2));
  CHECK_ERR(hipStreamQuery(s1), hipErrorNotReady);
  __atomic_store_n(flag, 41, __ATOMIC_RELEASE);
  CHECK_OK(hipStreamSynchronize(s1));
  int got = 0, back = 0;
  CHECK_OK(hipMemcpy(&got, out, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got == 42);
  CHECK_OK(hipMemcpy(&back, d + 255, sizeof back, hipMemcpyDeviceToHost));
  CHECK(back == 255 * 3);
  CHECK_OK(hipStreamDestroy(s1));
  CHECK_OK(hipStreamDestroy(s2));
  CHECK_OK(hipFree(d));
  CHECK_OK(hipFree(out));
  CHECK_OK(hipHostUnregister(h2));
  free(h2);
  CHECK_OK(hipHostFree(flag));
}

/* Stream priorities (hip-tests Unit_hipStreamCreateWithPriority_ValidateWithEvents): a
 * high-priority stream's kernel runs ahead of a low-priority stream's on the same GPU, as the
 * CP favours the higher pipe priority of its queue (clr's high and low streams get KFD queue
 * priorities 11 and 0). Both streams wait for a host flag, so that neither kernel starts before
 * both are queued; the low stream's kernel is queued first, the high one's ends first. */
static void priority_case(void) {
  int lo = 0, hi = 0, prio = 0;
  CHECK_OK(hipDeviceGetStreamPriorityRange(&lo, &hi));
  CHECK(lo == 1 && hi == -1);
  hipStream_t sl, sh;
  CHECK_OK(hipStreamCreateWithPriority(&sl, hipStreamNonBlocking, lo));
  CHECK_OK(hipStreamCreateWithPriority(&sh, hipStreamNonBlocking, hi));
  CHECK_OK(hipStreamGetPriority(sh, &prio));
  CHECK(prio == hi);
  const int n = 1 << 23;
  int *a = NULL, *b = NULL, *flag = NULL;
  CHECK_OK(hipHostMalloc((void**)&flag, sizeof(int), hipHostMallocCoherent));
  *flag = 0;
  CHECK_OK(hipMalloc((void**)&a, n * sizeof(int)));
  CHECK_OK(hipMalloc((void**)&b, n * sizeof(int)));
  CHECK_OK(hipMemset(a, 0, n * sizeof(int)));
  CHECK_OK(hipMemset(b, 0, n * sizeof(int)));
  CHECK_OK(hipDeviceSynchronize());
  hipEvent_t el, eh;
  CHECK_OK(hipEventCreate(&el));
  CHECK_OK(hipEventCreate(&eh));
  CHECK_OK(hipStreamWaitValue32(sl, flag, 1, hipStreamWaitValueEq, 0xffffffff));
  CHECK_OK(hipStreamWaitValue32(sh, flag, 1, hipStreamWaitValueEq, 0xffffffff));
  scale_add<<<512, 256, 0, sl>>>(a, n, 1, 1);
  scale_add<<<512, 256, 0, sh>>>(b, n, 1, 2);
  CHECK_OK(hipEventRecord(el, sl));
  CHECK_OK(hipEventRecord(eh, sh));
  __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
  CHECK_OK(hipEventSynchronize(el));
  CHECK_OK(hipEventSynchronize(eh));
  float ms = 0;
  CHECK_OK(hipEventElapsedTime(&ms, eh, el));
  CHECK(ms > 0);
  if (!(ms > 0)) fprintf(stderr, "the high-priority kernel ended %.3f ms after the low-priority one\n", -ms);
  int back[2] = {0, 0};
  CHECK_OK(hipMemcpy(&back[0], a + n - 1, sizeof(int), hipMemcpyDeviceToHost));
  CHECK_OK(hipMemcpy(&back[1], b + n - 1, sizeof(int), hipMemcpyDeviceToHost));
  CHECK(back[0] == 1 && back[1] == 2);
  CHECK_OK(hipEventDestroy(el));
  CHECK_OK(hipEventDestroy(eh));
  CHECK_OK(hipStreamDestroy(sl));
  CHECK_OK(hipStreamDestroy(sh));
  CHECK_OK(hipFree(a));
  CHECK_OK(hipFree(b));
  CHECK_OK(hipHostFree(flag));
}

/* `kernels fault`: a kernel writing through a pointer nothing maps faults the GPU; the launch
 * itself succeeds, the synchronisation after it reports hipErrorIllegalAddress, and so does
 * every later call that waits for the GPU. */
static int fault_case(void) {
  int* d = NULL;
  CHECK_OK(hipMalloc((void**)&d, 4096));
  CHECK_OK(hipMemset(d, 0, 4096));
  CHECK_OK(hipDeviceSynchronize());
  write_bad<<<1, 64>>>((int*)0x1000);
  CHECK_OK(hipGetLastError());
  CHECK_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
  int h = 0;
  CHECK_ERR(hipMemcpy(&h, d, sizeof h, hipMemcpyDeviceToHost), hipErrorIllegalAddress);
  return summary();
}

/* (__half)x of 16- and 8-bit integers: hipcc emits v_cvt_f16_i16 / v_cvt_f16_u16 (SDWA selects
 * for the bytes), whose source is an integer, not an f16. */
__global__ void int_to_half(const short* s, const unsigned short* u, const signed char* c, const unsigned char* b,
                            __half* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    o[4 * i] = __short2half_rn(s[i]);
    o[4 * i + 1] = __ushort2half_rn(u[i]);
    o[4 * i + 2] = __short2half_rn(c[i]);
    o[4 * i + 3] = __ushort2half_rn(b[i]);
  }
}

__device__ static short smin(short a, short b) { return a < b ? a : b; }
__device__ static short smax(short a, short b) { return a > b ? a : b; }
__device__ static unsigned short umin(unsigned short a, unsigned short b) { return a < b ? a : b; }
__device__ static unsigned short umax(unsigned short a, unsigned short b) { return a > b ? a : b; }

/* Minimum and maximum of s[i..i+2] and u[i..i+2]: hipcc emits v_min3/v_max3_i16/u16. */
__global__ void minmax3_16(const short* s, const unsigned short* u, short* os, unsigned short* ou, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 2 < n) {
    os[2 * i] = smin(smin(s[i], s[i + 1]), s[i + 2]);
    os[2 * i + 1] = smax(smax(s[i], s[i + 1]), s[i + 2]);
    ou[2 * i] = umin(umin(u[i], u[i + 1]), u[i + 2]);
    ou[2 * i + 1] = umax(umax(u[i], u[i + 1]), u[i + 2]);
  }
}

/* IEEE binary16 bits of integer n, rounded to nearest even (+-inf past 65519). */
static unsigned short half_bits_of_int(int n) {
  unsigned short sign = n < 0 ? 0x8000 : 0;
  unsigned m = n < 0 ? (unsigned)-n : (unsigned)n;
  if (m == 0) return sign;
  int e = 31 - __builtin_clz(m);
  if (e > 10) {
    unsigned shift = (unsigned)e - 10, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    m >>= shift;
    if (rem > half || (rem == half && (m & 1))) m++;
    if (m == 2048) {
      m = 1024;
      e++;
    }
    if (e > 15) return sign | 0x7c00;
  } else {
    m <<= 10 - e;
  }
  return (unsigned short)(sign | (e + 15) << 10 | (m & 0x3ff));
}

static void int_to_half_case(void) {
  enum { N = 1000 };
  static short s[N];
  static unsigned short u[N], got[4 * N];
  static signed char c[N];
  static unsigned char b[N];
  for (int i = 0; i < N; i++) {
    s[i] = (short)(i * 65 - 32768);
    u[i] = (unsigned short)(i * 131 + 7);
    c[i] = (signed char)(i - 128);
    b[i] = (unsigned char)(i * 3);
  }
  s[0] = -32765; /* rounds to -32768 */
  u[0] = 32771;  /* rounds to 32768 */
  u[1] = 65535;  /* +inf */
  short* ds;
  unsigned short *du, *dout;
  signed char* dc;
  unsigned char* db;
  CHECK_OK(hipMalloc((void**)&ds, sizeof s));
  CHECK_OK(hipMalloc((void**)&du, sizeof u));
  CHECK_OK(hipMalloc((void**)&dc, sizeof c));
  CHECK_OK(hipMalloc((void**)&db, sizeof b));
  CHECK_OK(hipMalloc((void**)&dout, sizeof got));
  CHECK_OK(hipMemcpy(ds, s, sizeof s, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(du, u, sizeof u, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(dc, c, sizeof c, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(db, b, sizeof b, hipMemcpyHostToDevice));
  int_to_half<<<(N + 127) / 128, 128>>>(ds, du, dc, db, (__half*)dout, N);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpy(got, dout, sizeof got, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    int want[4] = {half_bits_of_int(s[i]), half_bits_of_int(u[i]), half_bits_of_int(c[i]), half_bits_of_int(b[i])};
    for (int k = 0; k < 4; k++) {
      if (got[4 * i + k] != want[k] && bad++ < 5)
        fprintf(stderr, "int_to_half[%d].%d: got 0x%04x want 0x%04x\n", i, k, got[4 * i + k], want[k]);
    }
  }
  CHECK(bad == 0);
  CHECK(half_bits_of_int(-32765) == 0xf800 && half_bits_of_int(32771) == 0x7800 && half_bits_of_int(65535) == 0x7c00);
  CHECK_OK(hipFree(ds));
  CHECK_OK(hipFree(du));
  CHECK_OK(hipFree(dc));
  CHECK_OK(hipFree(db));
  CHECK_OK(hipFree(dout));
}

static void minmax3_16_case(void) {
  enum { N = 1000 };
  static short s[N], gs[2 * N];
  static unsigned short u[N], gu[2 * N];
  for (int i = 0; i < N; i++) {
    s[i] = (short)((i * 7919) % 65536 - 32768);
    u[i] = (unsigned short)((i * 40503u) % 65536);
  }
  short *ds, *dos;
  unsigned short *du, *dou;
  CHECK_OK(hipMalloc((void**)&ds, sizeof s));
  CHECK_OK(hipMalloc((void**)&du, sizeof u));
  CHECK_OK(hipMalloc((void**)&dos, sizeof gs));
  CHECK_OK(hipMalloc((void**)&dou, sizeof gu));
  CHECK_OK(hipMemcpy(ds, s, sizeof s, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(du, u, sizeof u, hipMemcpyHostToDevice));
  minmax3_16<<<(N + 127) / 128, 128>>>(ds, du, dos, dou, N);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpy(gs, dos, sizeof gs, hipMemcpyDeviceToHost));
  CHECK_OK(hipMemcpy(gu, dou, sizeof gu, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i + 2 < N; i++) {
    short smn = s[i], smx = s[i];
    unsigned short umn = u[i], umx = u[i];
    for (int k = 1; k < 3; k++) {
      smn = s[i + k] < smn ? s[i + k] : smn;
      smx = s[i + k] > smx ? s[i + k] : smx;
      umn = u[i + k] < umn ? u[i + k] : umn;
      umx = u[i + k] > umx ? u[i + k] : umx;
    }
    if ((gs[2 * i] != smn || gs[2 * i + 1] != smx || gu[2 * i] != umn || gu[2 * i + 1] != umx) && bad++ < 5)
      fprintf(stderr, "minmax3_16[%d]: got %d %d %u %u want %d %d %u %u\n", i, gs[2 * i], gs[2 * i + 1], gu[2 * i],
              gu[2 * i + 1], smn, smx, umn, umx);
  }
  CHECK(bad == 0);
  CHECK_OK(hipFree(ds));
  CHECK_OK(hipFree(du));
  CHECK_OK(hipFree(dos));
  CHECK_OK(hipFree(dou));
}

static float frand(unsigned* s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 256.0f - 128.0f;
}

/* SAXPY over a grid that is not a whole number of blocks (the kernel's bound check). */
static void saxpy_case(void) {
  enum { N = 10000 };
  static float x[N], y[N], want[N], got[N];
  unsigned seed = 1;
  for (int i = 0; i < N; i++) {
    x[i] = frand(&seed);
    y[i] = frand(&seed);
    want[i] = 2.5f * x[i] + y[i];
  }
  float *dx, *dy;
  CHECK_OK(hipMalloc((void**)&dx, sizeof x));
  CHECK_OK(hipMalloc((void**)&dy, sizeof y));
  CHECK_OK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
  CHECK_OK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
  saxpy<<<(N + 255) / 256, 256>>>(N, 2.5f, dx, dy);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpy(got, dy, sizeof got, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += got[i] != want[i];
  CHECK(bad == 0);
  CHECK_OK(hipFree(dx));
  CHECK_OK(hipFree(dy));
}

static void reduce_case(void) {
  enum { N = 100000 };
  static int in[N];
  unsigned long long want = 0, got = 0;
  for (int i = 0; i < N; i++) {
    in[i] = (i * 7919) % 1000 - 300;
    want += (unsigned long long)(long long)in[i];
  }
  int* d;
  unsigned long long* out;
  CHECK_OK(hipMalloc((void**)&d, sizeof in));
  CHECK_OK(hipMalloc((void**)&out, sizeof *out));
  CHECK_OK(hipMemcpy(d, in, sizeof in, hipMemcpyHostToDevice));
  CHECK_OK(hipMemset(out, 0, sizeof *out));
  hipLaunchKernelGGL(reduce, dim3(40), dim3(256), 0, 0, d, N, out);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpy(&got, out, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got == want);
  if (got != want) fprintf(stderr, "reduce: got %llu want %llu\n", got, want);
  CHECK_OK(hipFree(d));
  CHECK_OK(hipFree(out));
}

/* Stream order: a kernel after an async copy on the same stream sees the copy, a copy after the
 * kernel sees its writes; a second stream waits for the first one's event before its kernel. */
static void stream_order_case(void) {
  enum { N = 1 << 20 };
  int *h, *back, *d, *d2;
  CHECK_OK(hipHostMalloc((void**)&h, N * sizeof(int), 0));
  CHECK_OK(hipHostMalloc((void**)&back, N * sizeof(int), 0));
  CHECK_OK(hipMalloc((void**)&d, N * sizeof(int)));
  CHECK_OK(hipMalloc((void**)&d2, N * sizeof(int)));
  for (int i = 0; i < N; i++) h[i] = i;
  hipStream_t a, b;
  CHECK_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  CHECK_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  hipEvent_t ev;
  CHECK_OK(hipEventCreate(&ev));
  for (int round = 0; round < 3; round++) {
    memset(back, 0, N * sizeof(int));
    CHECK_OK(hipMemcpyAsync(d, h, N * sizeof(int), hipMemcpyHostToDevice, a));
    scale_add<<<64, 256, 0, a>>>(d, N, 3, round);
    CHECK_OK(hipEventRecord(ev, a));
    CHECK_OK(hipStreamWaitEvent(b, ev, 0));
    CHECK_OK(hipMemcpyAsync(d2, d, N * sizeof(int), hipMemcpyDeviceToDevice, b));
    scale_add<<<64, 256, 0, b>>>(d2, N, 1, 1);
    CHECK_OK(hipMemcpyAsync(back, d2, N * sizeof(int), hipMemcpyDeviceToHost, b));
    CHECK_OK(hipStreamSynchronize(b));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += back[i] != i * 3 + round + 1;
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "stream order round %d: %d wrong, back[1] = %d\n", round, bad, back[1]);
  }
  /* hipExtLaunchKernel records its events around the kernel. */
  hipEvent_t e0, e1;
  CHECK_OK(hipEventCreate(&e0));
  CHECK_OK(hipEventCreate(&e1));
  int n_ = 256, m = 1, add = 5;
  void* eargs[] = {&d2, &n_, &m, &add};
  CHECK_OK(hipExtLaunchKernel((const void*)scale_add, dim3(1), dim3(256), eargs, 0, b, e0, e1, 0));
  CHECK_OK(hipEventSynchronize(e1));
  CHECK_OK(hipEventQuery(e0));
  float ms = -1;
  CHECK_OK(hipEventElapsedTime(&ms, e0, e1));
  CHECK(ms >= 0);
  CHECK_OK(hipMemcpy(back, d2, 256 * sizeof(int), hipMemcpyDeviceToHost));
  CHECK(back[0] == 3 + 5 && back[255] == 255 * 3 + 3 + 5);
  CHECK_OK(hipEventDestroy(e0));
  CHECK_OK(hipEventDestroy(e1));

  /* Dynamic LDS (hidden_dynamic_lds_size, group segment = static + dynamic). */
  reverse_block<<<4, 128, 128 * sizeof(int), a>>>(d);
  CHECK_OK(hipMemcpyAsync(back, d, 512 * sizeof(int), hipMemcpyDeviceToHost, a));
  CHECK_OK(hipStreamSynchronize(a));
  int bad = 0;
  for (int i = 0; i < 512; i++) bad += back[i] != ((i / 128) * 128 + 127 - i % 128) * 3 + 2;
  CHECK(bad == 0);
  CHECK_OK(hipEventDestroy(ev));
  CHECK_OK(hipStreamDestroy(a));
  CHECK_OK(hipStreamDestroy(b));
  CHECK_OK(hipFree(d));
  CHECK_OK(hipFree(d2));
  CHECK_OK(hipHostFree(h));
  CHECK_OK(hipHostFree(back));
}

/* Many launches queued without a wait (more than a queue's launch records: later ones wait for
 * earlier ones), then four threads each running copy → kernel → copy rounds on streams of
 * their own. */
enum { MT_N = 8192, MT_ROUNDS = 40 };
static int g_mt_bad;
static void* mt_worker(void* arg) {
  int id = (int)(long)arg, *h = NULL, *d = NULL;
  hipStream_t s;
  if (hipStreamCreateWithFlags(&s, hipStreamNonBlocking) != hipSuccess ||
      hipHostMalloc((void**)&h, MT_N * sizeof(int), 0) != hipSuccess || hipMalloc((void**)&d, MT_N * sizeof(int)) != hipSuccess) {
    __atomic_add_fetch(&g_mt_bad, 1, __ATOMIC_RELAXED);
    return NULL;
  }
  for (int r = 0; r < MT_ROUNDS; r++) {
    for (int i = 0; i < MT_N; i++) h[i] = i + r;
    int bad = hipMemcpyAsync(d, h, MT_N * sizeof(int), hipMemcpyHostToDevice, s) != hipSuccess;
    scale_add<<<8, 256, 0, s>>>(d, MT_N, 2, id);
    bad += hipGetLastError() != hipSuccess;
    bad += hipMemcpyAsync(h, d, MT_N * sizeof(int), hipMemcpyDeviceToHost, s) != hipSuccess;
    bad += hipStreamSynchronize(s) != hipSuccess;
    for (int i = 0; i < MT_N; i++) bad += h[i] != (i + r) * 2 + id;
    if (bad) __atomic_add_fetch(&g_mt_bad, 1, __ATOMIC_RELAXED);
  }
  hipFree(d);
  hipHostFree(h);
  hipStreamDestroy(s);
  return NULL;
}

static void many_launches_case(void) {
  enum { N = 1024, LAUNCHES = 300 };
  int h[N], *d;
  for (int i = 0; i < N; i++) h[i] = i;
  CHECK_OK(hipMalloc((void**)&d, sizeof h));
  hipStream_t s;
  CHECK_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  CHECK_OK(hipMemcpyAsync(d, h, sizeof h, hipMemcpyHostToDevice, s));
  for (int i = 0; i < LAUNCHES; i++) scale_add<<<2, 128, 0, s>>>(d, N, 1, 1);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpyAsync(h, d, sizeof h, hipMemcpyDeviceToHost, s));
  CHECK_OK(hipStreamSynchronize(s));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += h[i] != i + LAUNCHES;
  CHECK(bad == 0);
  CHECK_OK(hipStreamDestroy(s));
  CHECK_OK(hipFree(d));
  pthread_t t[4];
  for (long i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, mt_worker, (void*)i) == 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  CHECK(g_mt_bad == 0);
}

/* Graphs: a captured copy → kernel → copy runs on each launch; a kernel node added by hand keeps a
 * copy of its arguments (the caller's may change after), and reports them. */
static void graph_case(void) {
  enum { N = 4096 };
  int *h, *back, *d;
  CHECK_OK(hipHostMalloc((void**)&h, N * sizeof(int), 0));
  CHECK_OK(hipHostMalloc((void**)&back, N * sizeof(int), 0));
  CHECK_OK(hipMalloc((void**)&d, N * sizeof(int)));
  hipStream_t s;
  CHECK_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipGraph_t g;
  CHECK_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  CHECK_OK(hipMemcpyAsync(d, h, N * sizeof(int), hipMemcpyHostToDevice, s));
  scale_add<<<16, 256, 0, s>>>(d, N, 5, 1);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpyAsync(back, d, N * sizeof(int), hipMemcpyDeviceToHost, s));
  CHECK_OK(hipStreamEndCapture(s, &g));
  size_t n = 0;
  CHECK_OK(hipGraphGetNodes(g, NULL, &n));
  CHECK(n == 3);
  hipGraphExec_t x;
  CHECK_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++) h[i] = i + round * 1000;
    CHECK_OK(hipGraphLaunch(x, s));
    CHECK_OK(hipStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += back[i] != (i + round * 1000) * 5 + 1;
    CHECK(bad == 0);
  }
  CHECK_OK(hipGraphExecDestroy(x));
  CHECK_OK(hipGraphDestroy(g));

  /* hipGraphAddKernelNode: arguments copied when the node is added. */
  CHECK_OK(hipGraphCreate(&g, 0));
  int n_ = N, m = 2, a = 7;
  void* args[] = {&d, &n_, &m, &a};
  hipKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = (void*)scale_add;
  p.gridDim = dim3(8);
  p.blockDim = dim3(128);
  p.kernelParams = args;
  hipGraphNode_t k;
  CHECK_OK(hipGraphAddKernelNode(&k, g, NULL, 0, &p));
  m = 1000;
  a = 1000;
  hipKernelNodeParams q;
  CHECK_OK(hipGraphKernelNodeGetParams(k, &q));
  CHECK(q.func == (void*)scale_add && q.gridDim.x == 8 && q.blockDim.x == 128);
  CHECK(q.kernelParams != NULL && *(int*)q.kernelParams[2] == 2 && *(int*)q.kernelParams[3] == 7);
  CHECK_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
  CHECK_OK(hipMemcpy(d, h, N * sizeof(int), hipMemcpyHostToDevice));
  CHECK_OK(hipGraphLaunch(x, s));
  CHECK_OK(hipStreamSynchronize(s));
  CHECK_OK(hipMemcpy(back, d, N * sizeof(int), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += back[i] != (i + 1000) * 2 + 7;
  CHECK(bad == 0);
  CHECK_OK(hipGraphExecDestroy(x));
  CHECK_OK(hipGraphDestroy(g));
  CHECK_OK(hipStreamDestroy(s));
  CHECK_OK(hipFree(d));
  CHECK_OK(hipHostFree(h));
  CHECK_OK(hipHostFree(back));
}

static int not_a_kernel(void) { return 0; }

/* hipGetFuncBySymbol (ROCm 6.1+) is not in ROCm 5.2's header nor library: looked up at run time,
 * so this program also links against AMD's 5.2 library (and runs with ours preloaded). */
typedef hipError_t (*get_func_by_symbol_t)(hipFunction_t*, const void*);

int main(int argc, char** argv) {
  check_bound_to_expected_library((void*)&hipLaunchKernel);
  if (argc > 1 && strcmp(argv[1], "fault") == 0) return fault_case();
  enum { N = 256 };
  int h[N], back[N];
  for (int i = 0; i < N; i++) h[i] = i;
  int* d = NULL;
  CHECK_OK(hipMalloc((void**)&d, sizeof h));
  CHECK_OK(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice));

  /* <<<>>> and hipLaunchKernelGGL go through __hipPush/PopCallConfiguration + hipLaunchKernel. */
  CHECK_OK(hipGetLastError());
  fill<<<1, 64>>>(d, 7);
  CHECK_OK(hipPeekAtLastError());
  CHECK_OK(hipGetLastError());
  hipLaunchKernelGGL(nop, dim3(2), dim3(32), 0, 0);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipDeviceSynchronize());
  CHECK_OK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
  {
    int bad = 0;
    for (int i = 0; i < N; i++) bad += back[i] != (i < 64 ? 7 + 5 : i);
    CHECK(bad == 0);
  }

  int val = 7;
  void* args[] = {&d, &val};
  CHECK_OK(hipLaunchKernel((const void*)fill, dim3(1), dim3(64), args, 0, 0));
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
  CHECK_OK(hipLaunchKernel((const void*)nop, dim3(1), dim3(1), NULL, 0, s));
  CHECK_OK(hipStreamDestroy(s));
  CHECK_ERR(hipLaunchKernel((const void*)nop, dim3(1), dim3(1), NULL, 0, s), hipErrorInvalidValue);
  CHECK_OK(hipLaunchCooperativeKernel((const void*)nop, dim3(1), dim3(1), NULL, 0, 0));
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

  /* A kernel reads the global the host wrote (table[0] = 91 now). */
  CHECK_OK(hipMemcpyToSymbol(HIP_SYMBOL(table), nine + 1, sizeof(int), 0, hipMemcpyHostToDevice));
  fill<<<1, 32>>>(d, 1);
  CHECK_OK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
  CHECK(back[0] == 92 && back[31] == 92 && back[32] == 12);
  CHECK_OK(hipFree(d));

  (void)hipGetLastError(); /* the symbol errors above are the sticky last error */
  saxpy_case();
  int_to_half_case();
  minmax3_16_case();
  reduce_case();
  stream_order_case();
  many_launches_case();
  graph_case();
  busy_kernel_case();
  priority_case();
  other_device_stream_case();
  multi_device_case();
  occupancy_case();
  pool_access_case();

  /* hipDeviceReset frees device memory, the loaded globals included: they load again. */
  CHECK_OK(hipDeviceReset());
  memset(t, 0, sizeof t);
  CHECK_OK(hipMemcpyFromSymbol(t, HIP_SYMBOL(table), sizeof t, 0, hipMemcpyDeviceToHost));
  CHECK(t[4] == 9 && t[5] == 10);
  return summary();
}
