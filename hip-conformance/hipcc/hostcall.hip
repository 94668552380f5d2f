/* Kernels that call the host (the hostcall buffer; built as code object v4, Debian's hipcc 5.2
 * default, and as v5, whose device malloc keeps its state in the runtime's heap buffer):
 * - device printf: several formats from several lanes of one wave (lane order within a wave),
 *   a string argument longer than one message part, a format with no arguments, `*` widths, and
 *   printf's return value; stdout is captured in a file and compared with the host's printf of
 *   the same values; the same from a kernel on device 1 (its own buffer);
 * - device malloc/free: every thread of 4 blocks allocates a small block (the device library's
 *   slabs, which it asks the host for) and some a large one (one host allocation each), writes
 *   them, a second kernel reads and frees them, also after hipDeviceReset; new[]/delete[]
 *   likewise. */
#include <hip/hip_runtime.h>
#include <unistd.h>
#include "check.h"

__global__ void print_lanes(int* ret, const char* tag) {
  int t = threadIdx.x;
  if (t < 4) {
    ret[t] = printf("lane %d: %s %5.2f %x %c|%-4d|%*d|%%|%lld\n", t, tag, 1.5 * t, 255 + t, 'A' + t, t, 3 + t, t,
                    (long long)t << 40);
  }
  /* One lane, so that the two come in program order (divergent lanes' order is the compiler's). */
  if (t == 1) {
    printf("no arguments\n");
    printf("long: %s!\n", "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789");
  }
}

/* Each thread: a small block (slab) holding 16 ints; every 16th also a 64 KiB block. */
__global__ void alloc_blocks(int** small, int** large) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int* p = (int*)malloc(16 * sizeof(int));
  if (p)
    for (int i = 0; i < 16; i++) p[i] = t * 16 + i;
  small[t] = p;
  int* q = nullptr;
  if (t % 16 == 0) {
    q = (int*)malloc(65536);
    if (q)
      for (int i = 0; i < 16384; i += 1024) q[i] = t + i;
  }
  large[t] = q;
}

/* ok[t] = 1 when both blocks of thread t hold what alloc_blocks wrote; then frees them. */
__global__ void check_and_free(int** small, int** large, int* ok) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int good = small[t] != nullptr;
  for (int i = 0; good && i < 16; i++) good = small[t][i] == t * 16 + i;
  if (t % 16 == 0) {
    good = good && large[t] != nullptr;
    for (int i = 0; good && i < 16384; i += 1024) good = large[t][i] == t + i;
    free(large[t]);
  }
  free(small[t]);
  ok[t] = good;
}

__global__ void new_delete(int* ok) {
  int t = threadIdx.x;
  long* a = new long[4];
  for (int i = 0; i < 4; i++) a[i] = (long)t << 33 | i;
  int good = 1;
  for (int i = 0; i < 4; i++) good &= a[i] == ((long)t << 33 | i);
  delete[] a;
  ok[t] = good;
}

/* Runs print_lanes on the current device with stdout going to a file; returns what it printed. */
static char* printed_by_kernel(int* ret_d, const char* tag_d) {
  char path[] = "/tmp/hipkfd-hostcall-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return strdup("");
  unlink(path);
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  print_lanes<<<1, 64>>>(ret_d, tag_d);
  CHECK_OK(hipDeviceSynchronize());
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  static char buf[4096];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  close(fd);
  buf[n > 0 ? n : 0] = 0;
  return strdup(buf);
}

static void printf_case(int dev) {
  CHECK_OK(hipSetDevice(dev));
  int* ret_d = NULL;
  char* tag_d = NULL;
  CHECK_OK(hipMalloc((void**)&ret_d, 4 * sizeof(int)));
  CHECK_OK(hipMalloc((void**)&tag_d, 8));
  CHECK_OK(hipMemcpy(tag_d, "tag", 4, hipMemcpyHostToDevice));
  char* got = printed_by_kernel(ret_d, tag_d);
  /* The same on the host. The string argument comes from device memory. */
  char want[4096], *w = want;
  int want_ret[4];
  for (int t = 0; t < 4; t++) {
    want_ret[t] = sprintf(w, "lane %d: %s %5.2f %x %c|%-4d|%*d|%%|%lld\n", t, "tag", 1.5 * t, 255 + t, 'A' + t, t,
                          3 + t, t, (long long)t << 40);
    w += want_ret[t];
  }
  w += sprintf(w, "no arguments\n");
  sprintf(w, "long: %s!\n", "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789");
  if (strcmp(got, want) != 0) fprintf(stderr, "device %d printed:\n%s\nwanted:\n%s\n", dev, got, want);
  CHECK(strcmp(got, want) == 0);
  int ret[4];
  CHECK_OK(hipMemcpy(ret, ret_d, sizeof ret, hipMemcpyDeviceToHost));
  CHECK(memcmp(ret, want_ret, sizeof ret) == 0);
  free(got);
  CHECK_OK(hipFree(ret_d));
  CHECK_OK(hipFree(tag_d));
}

static void malloc_case(void) {
  CHECK_OK(hipSetDevice(0));
  enum { N = 256 };
  int **small = NULL, **large = NULL, *ok = NULL;
  CHECK_OK(hipMalloc((void**)&small, N * sizeof(int*)));
  CHECK_OK(hipMalloc((void**)&large, N * sizeof(int*)));
  CHECK_OK(hipMalloc((void**)&ok, N * sizeof(int)));
  for (int round = 0; round < 3; round++) {
    if (round == 2) {
      /* hipDeviceReset frees the heap's slabs: malloc starts afresh (code object v5: the
       * runtime's heap buffer is emptied; v4: the code object is loaded again). */
      CHECK_OK(hipDeviceReset());
      CHECK_OK(hipMalloc((void**)&small, N * sizeof(int*)));
      CHECK_OK(hipMalloc((void**)&large, N * sizeof(int*)));
      CHECK_OK(hipMalloc((void**)&ok, N * sizeof(int)));
    }
    CHECK_OK(hipMemset(ok, 0, N * sizeof(int)));
    alloc_blocks<<<N / 64, 64>>>(small, large);
    check_and_free<<<N / 64, 64>>>(small, large, ok);
    CHECK_OK(hipDeviceSynchronize());
    int h[N], good = 0;
    CHECK_OK(hipMemcpy(h, ok, sizeof h, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) good += h[i] == 1;
    CHECK(good == N);
  }
  new_delete<<<1, 64>>>(ok);
  CHECK_OK(hipDeviceSynchronize());
  int h[64], good = 0;
  CHECK_OK(hipMemcpy(h, ok, sizeof h, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) good += h[i] == 1;
  CHECK(good == 64);
  CHECK_OK(hipFree(small));
  CHECK_OK(hipFree(large));
  CHECK_OK(hipFree(ok));
}

int main(void) {
  check_bound_to_expected_library((void*)&hipLaunchKernel);
  int n = 0;
  CHECK_OK(hipGetDeviceCount(&n));
  printf_case(0);
  if (n > 1) printf_case(1);
  malloc_case();
  return summary();
}
