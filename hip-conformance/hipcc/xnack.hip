/* XNACK and pageable memory (HMM). `xnack` runs with HSA_XNACK=1: the runtime turns XNACK on
 * (AMDKFD_IOC_SET_XNACK_MODE), gcnArchName ends in ":xnack+", pageableMemoryAccess is 1, and
 * kernels use malloc'd, mmap'd and stack memory by its host address on every device, atomics
 * included (atomic against the host); advice, prefetch and range attributes apply to that memory
 * as to managed memory, attach follows clr; hipHostRegister pins nothing and still registers. Three child processes (forked before the runtime starts) show that a kernel writing
 * a page the process does not have, may not touch, or may only read still faults
 * (hipErrorIllegalAddress).
 * `xnack off` runs without HSA_XNACK (or with HSA_XNACK=0): ":xnack-", pageableMemoryAccess 0,
 * a kernel on malloc'd memory faults, and advice on it is refused. */
#include <hip/hip_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

/* p[i] = p[i] * m + a for i < n (grid-stride). */
__global__ void scale_add(int* p, int n, int m, int a) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = p[i] * m + a;
}

/* Every thread adds 1 to *counter. */
__global__ void count(unsigned* counter) { atomicAdd(counter, 1u); }

/* *p = 1, then waits (bounded) for the host to answer 2 and answers 3. */
__global__ void ping(volatile int* p, int* seen) {
  atomicAdd((int*)p, 1);
  int s = 0;
  for (long i = 0; i < 10000000L && s != 2; i++) s = atomicCAS((int*)p, 2, 3);
  *seen = s;
}

enum { N = 1 << 16 };

static int arch_has(int dev, const char* feature) {
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, dev) != hipSuccess) return -1;
  return strstr(prop.gcnArchName, feature) != NULL;
}

static int attribute(hipDeviceAttribute_t a, int dev) {
  int v = -1;
  CHECK_OK(hipDeviceGetAttribute(&v, a, dev));
  return v;
}

/* A kernel on memory the runtime never saw, on every device: malloc, mmap, the stack. */
static void pageable_kernels(int ndev) {
  int* m = (int*)malloc(N * sizeof(int));
  int* a = (int*)mmap(NULL, N * sizeof(int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int s[1024];
  CHECK(m != NULL && a != MAP_FAILED);
  for (int i = 0; i < N; i++) m[i] = a[i] = i;
  for (int i = 0; i < 1024; i++) s[i] = -i;
  for (int d = 0; d < ndev; d++) {
    CHECK_OK(hipSetDevice(d));
    scale_add<<<64, 256>>>(m, N, 2, d);
    scale_add<<<64, 256>>>(a, N, 3, 0);
    scale_add<<<4, 256>>>(s, 1024, 1, 1);
    CHECK_OK(hipGetLastError());
    CHECK_OK(hipDeviceSynchronize());
  }
  /* m: i*2+0 on device 0, then *2+1 on device 1 ...; a: i*3^ndev; s: -i + ndev. */
  int want_m_ok = 1, want_a_ok = 1, want_s_ok = 1;
  for (int i = 0; i < N; i++) {
    long wm = i, wa = i;
    for (int d = 0; d < ndev; d++) {
      wm = wm * 2 + d;
      wa = wa * 3;
    }
    want_m_ok &= m[i] == (int)wm;
    want_a_ok &= a[i] == (int)wa;
  }
  for (int i = 0; i < 1024; i++) want_s_ok &= s[i] == -i + ndev;
  CHECK(want_m_ok);
  CHECK(want_a_ok);
  CHECK(want_s_ok);
  CHECK_OK(hipSetDevice(0));
  free(m);
  munmap(a, N * sizeof(int));
}

/* 256 blocks of 256 threads each add 1 to a malloc'd counter while the host adds 1 to it until
 * the kernel is done: none of either is lost. */
static void pageable_atomics(void) {
  unsigned* c = (unsigned*)malloc(sizeof(unsigned));
  *c = 7;
  count<<<256, 256>>>(c);
  unsigned host = 0;
  while (hipStreamQuery(NULL) == hipErrorNotReady || host < 1000) {
    __atomic_fetch_add(c, 1u, __ATOMIC_RELAXED);
    host++;
  }
  CHECK_OK(hipDeviceSynchronize());
  CHECK(*c == 7 + 256 * 256 + host);
  if (*c != 7 + 256 * 256 + host) fprintf(stderr, "counter %u, want %u\n", *c, 7 + 256 * 256 + host);
  free(c);
}

/* The host and a running kernel take turns on one malloc'd word (fine-grained coherence). */
static void pageable_coherence(void) {
  int* p = (int*)malloc(sizeof(int));
  int* seen = (int*)malloc(sizeof(int));
  *p = 0;
  *seen = -1;
  hipStream_t st;
  CHECK_OK(hipStreamCreate(&st));
  ping<<<1, 1, 0, st>>>(p, seen);
  int ok = 0;
  for (long i = 0; i < 2000000000L; i++) {
    if (__atomic_load_n(p, __ATOMIC_ACQUIRE) == 1) {
      __atomic_store_n(p, 2, __ATOMIC_RELEASE);
      ok = 1;
      break;
    }
  }
  CHECK(ok);
  CHECK_OK(hipStreamSynchronize(st));
  CHECK(*p == 3 && *seen == 2);
  CHECK_OK(hipStreamDestroy(st));
  free(p);
  free(seen);
}

/* hipHostRegister with XNACK: nothing to pin, the range is still registered memory to every
 * API (a kernel, an SDMA copy into it); a range with a hole is refused. */
static void register_pageable(void) {
  enum { M = 3 * 4096 + 8 };
  int* h = (int*)malloc(M * sizeof(int));
  for (int i = 0; i < M; i++) h[i] = i;
  CHECK_OK(hipHostRegister(h, M * sizeof(int), hipHostRegisterDefault));
  int* dp = NULL;
  CHECK_OK(hipHostGetDevicePointer((void**)&dp, h, 0));
  CHECK(dp == h);
  unsigned flags = 99;
  CHECK_OK(hipHostGetFlags(&flags, h));
  scale_add<<<16, 256>>>(h, M, 2, 0);
  CHECK_OK(hipDeviceSynchronize());
  int* d = NULL;
  CHECK_OK(hipMalloc((void**)&d, M * sizeof(int)));
  CHECK_OK(hipMemset(d, 0, M * sizeof(int)));
  CHECK_OK(hipMemcpyAsync(d, h, M * sizeof(int), hipMemcpyHostToDevice, NULL));
  CHECK_OK(hipMemsetAsync(h, 0, M * sizeof(int), NULL));
  CHECK_OK(hipMemcpyAsync(h, d, M * sizeof(int), hipMemcpyDeviceToHost, NULL));
  CHECK_OK(hipStreamSynchronize(NULL));
  int ok = 1;
  for (int i = 0; i < M; i++) ok &= h[i] == 2 * i;
  CHECK(ok);
  CHECK_ERR(hipHostRegister(h + 8, 64, 0), hipErrorHostMemoryAlreadyRegistered);
  CHECK_OK(hipHostUnregister(h));
  CHECK_ERR(hipHostUnregister(h), hipErrorHostMemoryNotRegistered);
  /* A range with a hole: refused (with or without HSA_USE_SVM=0). */
  char* gap = (char*)mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gap + 4096, 4096);
  CHECK_ERR(hipHostRegister(gap, 3 * 4096, 0), hipErrorInvalidValue);
  /* A PROT_NONE range: the KFD checks only that SVM ranges are mapped (svm_range_is_valid), while
   * pinning it (HSA_USE_SVM=0) fails. */
  CHECK_ERR(hipHostRegister(gap, 4096, 0), hipSuccess);
  CHECK_OK(hipHostUnregister(gap));
  mprotect(gap, 4096, PROT_NONE);
  const char* use_svm = getenv("HSA_USE_SVM");
  CHECK_ERR(hipHostRegister(gap, 4096, 0), use_svm && strcmp(use_svm, "0") == 0 ? hipErrorInvalidValue : hipSuccess);
  hipHostUnregister(gap);
  munmap(gap, 4096);
  munmap(gap + 2 * 4096, 4096);
  CHECK_OK(hipFree(d));
  free(h);
}

/* Advice, range attributes, prefetch and attach on pageable memory, XNACK on. */
static void pageable_apis(int ndev) {
  size_t len = 4 * 4096;
  char* m = (char*)aligned_alloc(4096, len);
  int v = -5;
  CHECK_OK(hipMemAdvise(m, len, hipMemAdviseSetPreferredLocation, 0));
  CHECK_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributePreferredLocation, m, len));
  CHECK(v == 0);
  CHECK_OK(hipMemAdvise(m, 4096, hipMemAdviseSetCoarseGrain, 0));
  CHECK_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeCoherencyMode, m, 4096));
  CHECK(v == 1);
  CHECK_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeCoherencyMode, m, len));
  CHECK(v == 2); /* mixed */
  CHECK_OK(hipMemAdvise(m, len, hipMemAdviseSetReadMostly, 0));
  CHECK_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, m, len));
  CHECK(v == 1);
  CHECK_ERR(hipMemAdvise(m, len, hipMemAdviseSetPreferredLocation, 99), hipErrorInvalidDevice);
  /* Prefetch moves nothing and is remembered (clr; hip-tests hipMemAdviseTstAlignedAllocMem). */
  CHECK_OK(hipMemPrefetchAsync(m, len, 1 % ndev, NULL));
  CHECK_OK(hipStreamSynchronize(NULL));
  CHECK_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeLastPrefetchLocation, m, len));
  CHECK(v == 1 % ndev);
  CHECK_OK(hipMemPrefetchAsync(m, 4096, hipCpuDeviceId, NULL));
  CHECK_OK(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeLastPrefetchLocation, m, len));
  CHECK(v == hipInvalidDeviceId);
  CHECK_OK(hipStreamAttachMemAsync(NULL, m, len, hipMemAttachGlobal));
  CHECK_ERR(hipStreamAttachMemAsync(NULL, m, 0, hipMemAttachGlobal), hipErrorInvalidValue);
  /* A copy between two pointers the runtime does not know, whatever the kind says. */
  char* n = (char*)malloc(len);
  memset(m, 0x5a, len);
  CHECK_OK(hipMemcpy(n, m, len, hipMemcpyDeviceToDevice));
  CHECK(n[0] == 0x5a && n[len - 1] == 0x5a);
  /* Device memory still refuses advice, freed device memory and unmapped memory too. */
  void* d = NULL;
  CHECK_OK(hipMalloc(&d, 4096));
  CHECK_ERR(hipMemAdvise(d, 4096, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  CHECK_OK(hipFree(d));
  CHECK_ERR(hipMemAdvise(d, 4096, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  char* gone = (char*)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, 4096);
  CHECK_ERR(hipMemAdvise(gone, 4096, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  CHECK_ERR(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, gone, 4096), hipErrorInvalidValue);
  CHECK_ERR(hipMemPrefetchAsync(gone, 4096, 0, NULL), hipErrorInvalidValue);
  free(n);
  free(m);
}

/* A forked child (no runtime yet): a kernel writes page `p`; the child exits 0 when the
 * synchronisation reports hipErrorIllegalAddress. */
static pid_t fault_child(int* p) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  scale_add<<<1, 64>>>(p, 64, 1, 1);
  hipError_t launch = hipGetLastError();
  hipError_t sync = hipDeviceSynchronize();
  if (launch != hipSuccess || sync != hipErrorIllegalAddress)
    fprintf(stderr, "child: launch %s, sync %s\n", hipGetErrorName(launch), hipGetErrorName(sync));
  _exit(launch == hipSuccess && sync == hipErrorIllegalAddress ? 0 : 1);
}

static void check_child(pid_t pid) {
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int xnack_on(void) {
  /* Children first, before this process initialises the runtime: a page no process has (below
   * mmap_min_addr), one the process may not touch (PROT_NONE), one it may only read. (A page
   * unmapped before the child starts would not do: the child's runtime may map it again.) */
  pid_t c_low = fault_child((int*)0x1000);
  int* none = (int*)mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pid_t c_none = fault_child(none);
  int* ro = (int*)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pid_t c_ro = fault_child(ro);

  check_bound_to_expected_library((void*)&hipGetDeviceCount);
  int ndev = 0;
  CHECK_OK(hipGetDeviceCount(&ndev));
  for (int d = 0; d < ndev; d++) {
    CHECK(arch_has(d, ":xnack+") == 1);
    CHECK(attribute(hipDeviceAttributePageableMemoryAccess, d) == 1);
  }
  pageable_kernels(ndev);
  pageable_atomics();
  pageable_coherence();
  pageable_apis(ndev);
  register_pageable();
  check_child(c_low);
  check_child(c_none);
  check_child(c_ro);
  return summary();
}

static int xnack_off(void) {
  pid_t c = fork();
  if (c == 0) {
    /* A kernel on malloc'd memory faults without XNACK. */
    int* m = (int*)calloc(64, sizeof(int));
    scale_add<<<1, 64>>>(m, 64, 1, 1);
    _exit(hipDeviceSynchronize() == hipErrorIllegalAddress && m[0] == 0 ? 0 : 1);
  }
  check_bound_to_expected_library((void*)&hipGetDeviceCount);
  CHECK(arch_has(0, ":xnack-") == 1);
  CHECK(attribute(hipDeviceAttributePageableMemoryAccess, 0) == 0);
  char* m = (char*)aligned_alloc(4096, 4096);
  int v = 0;
  CHECK_ERR(hipMemAdvise(m, 4096, hipMemAdviseSetPreferredLocation, 0), hipErrorInvalidValue);
  CHECK_ERR(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributePreferredLocation, m, 4096), hipErrorInvalidValue);
  CHECK_ERR(hipMemPrefetchAsync(m, 4096, 0, NULL), hipErrorNotSupported);
  CHECK_ERR(hipStreamAttachMemAsync(NULL, m, 4096, hipMemAttachGlobal), hipErrorInvalidValue);
  free(m);
  check_child(c);
  return summary();
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "off") == 0) return xnack_off();
  return xnack_on();
}
