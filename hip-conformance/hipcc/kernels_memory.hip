/* Kernels on memory that is not a plain hipMalloc, results checked on the host:
 * - IPC: a forked importer process (forked before either initialises the runtime) opens the
 *   exporter's allocation and runs a kernel on it; the exporter sees the kernel's writes;
 * - VMM: a kernel on device 0 writes a reserved range whose first chunk is device 0's memory and
 *   second device 1's (skipped with one GPU or without peer access);
 * - external memory: a kernel reads a dma-buf (udmabuf over a sealed memfd) imported with
 *   hipImportExternalMemory, queued behind hipWaitExternalSemaphoresAsync on a DRM syncobj: it
 *   runs only after the host has written the input and signalled the syncobj, while kernels of
 *   other streams run meanwhile. */
#include <hip/hip_runtime.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libdrm/drm.h>
#include "check.h"

/* p[i] = p[i] * m + a for i < n (grid-stride). */
__global__ void scale_add(int* p, int n, int m, int a) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = p[i] * m + a;
}

/* out[i] = in[i] * 3 for i < n. */
__global__ void triple(const int* in, int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] * 3;
}

/* p[i] = base + i for i < n. */
__global__ void iota(int* p, int n, int base) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = base + i;
}

enum { IPC_N = 65536 };

/* The importer: reads the handle, runs the kernel on the imported memory, reports by exit status. */
static void ipc_child(int rd, int wr) {
  hipIpcMemHandle_t h;
  if (read(rd, &h, sizeof h) != (ssize_t)sizeof h) _exit(3);
  int* p = NULL;
  CHECK_OK(hipIpcOpenMemHandle((void**)&p, h, hipIpcMemLazyEnablePeerAccess));
  scale_add<<<32, 256>>>(p, IPC_N, 2, 1);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipDeviceSynchronize());
  CHECK_OK(hipIpcCloseMemHandle(p));
  char done = 1;
  if (write(wr, &done, 1) != 1) _exit(4);
  _exit(g_failed != 0);
}

static void ipc_case(pid_t child, int rd, int wr) {
  int* d = NULL;
  static int h[IPC_N];
  for (int i = 0; i < IPC_N; i++) h[i] = i;
  CHECK_OK(hipMalloc((void**)&d, sizeof h));
  CHECK_OK(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice));
  hipIpcMemHandle_t mh;
  hipError_t e = hipIpcGetMemHandle(&mh, d);
  CHECK_OK(e);
  if (e != hipSuccess) { /* no handle: the importer sees the pipe close and exits; go on */
    close(wr);
    waitpid(child, NULL, 0);
    CHECK_OK(hipFree(d));
    return;
  }
  CHECK(write(wr, &mh, sizeof mh) == (ssize_t)sizeof mh);
  char done = 0;
  CHECK(read(rd, &done, 1) == 1 && done == 1);
  int status = -1;
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < IPC_N; i++) bad += h[i] != 2 * i + 1;
  CHECK(bad == 0);
  CHECK_OK(hipFree(d));
}

static void vmm_case(void) {
  int ndev = 0, can = 0;
  CHECK_OK(hipGetDeviceCount(&ndev));
  if (ndev < 2) {
    printf("vmm: one GPU, skipped\n");
    return;
  }
  CHECK_OK(hipDeviceCanAccessPeer(&can, 0, 1));
  if (!can) {
    printf("vmm: no peer access, skipped\n");
    return;
  }
  hipMemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  size_t g = 0;
  CHECK_OK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
  if (g == 0) return;
  g = (256 * 1024 + g - 1) / g * g; /* chunks of 256 KiB at least */
  hipMemGenericAllocationHandle_t c0 = NULL, c1 = NULL;
  prop.location.id = 0;
  CHECK_OK(hipMemCreate(&c0, g, &prop, 0));
  prop.location.id = 1;
  CHECK_OK(hipMemCreate(&c1, g, &prop, 0));
  char* va = NULL;
  CHECK_OK(hipMemAddressReserve((void**)&va, 2 * g, 0, NULL, 0));
  CHECK_OK(hipMemMap(va, g, 0, c0, 0));
  CHECK_OK(hipMemMap(va + g, g, 0, c1, 0));
  hipMemAccessDesc acc[2];
  memset(acc, 0, sizeof acc);
  for (int i = 0; i < 2; i++) {
    acc[i].location.type = hipMemLocationTypeDevice;
    acc[i].location.id = i;
    acc[i].flags = hipMemAccessFlagsProtReadWrite;
  }
  CHECK_OK(hipMemSetAccess(va, 2 * g, acc, 2));
  /* 64 KiB on each side of the chunk boundary. */
  enum { HALF = 16384 };
  int* p = (int*)(va + g) - HALF;
  CHECK_OK(hipMemset(p, 0, 2 * HALF * sizeof(int)));
  iota<<<32, 256>>>(p, 2 * HALF, 1000);
  CHECK_OK(hipGetLastError());
  static int back[2 * HALF];
  CHECK_OK(hipMemcpy(back, p, sizeof back, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 2 * HALF; i++) bad += back[i] != 1000 + i;
  CHECK(bad == 0);
  /* Device 1 reads its own chunk's part through its own copy engine. */
  CHECK_OK(hipSetDevice(1));
  memset(back, 0, sizeof back);
  CHECK_OK(hipMemcpy(back, va + g, HALF * sizeof(int), hipMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < HALF; i++) bad += back[i] != 1000 + HALF + i;
  CHECK(bad == 0);
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipMemUnmap(va, g));
  CHECK_OK(hipMemUnmap(va + g, g));
  CHECK_OK(hipMemAddressFree(va, 2 * g));
  CHECK_OK(hipMemRelease(c0));
  CHECK_OK(hipMemRelease(c1));
}

static void external_case(void) {
  enum { N = 32768 };
  const size_t bytes = N * sizeof(int);
  int udev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
  int render = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
  CHECK(udev >= 0 && render >= 0);
  if (udev < 0 || render < 0) return;
  int mfd = memfd_create("kernels-external", MFD_ALLOW_SEALING | MFD_CLOEXEC);
  CHECK(mfd >= 0 && ftruncate(mfd, bytes) == 0 && fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
  struct udmabuf_create c = {(uint32_t)mfd, UDMABUF_FLAGS_CLOEXEC, 0, bytes};
  int buf = ioctl(udev, UDMABUF_CREATE, &c);
  CHECK(buf >= 0);
  int* cpu = (int*)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  CHECK(cpu != MAP_FAILED);

  hipExternalMemoryHandleDesc md;
  memset(&md, 0, sizeof md);
  md.type = hipExternalMemoryHandleTypeOpaqueFd;
  md.handle.fd = buf;
  md.size = bytes;
  hipExternalMemory_t em = NULL;
  CHECK_OK(hipImportExternalMemory(&em, &md));
  hipExternalMemoryBufferDesc bd;
  memset(&bd, 0, sizeof bd);
  bd.size = bytes;
  int* in = NULL;
  CHECK_OK(hipExternalMemoryGetMappedBuffer((void**)&in, em, &bd));

  struct drm_syncobj_create sc = {0, 0};
  CHECK(ioctl(render, DRM_IOCTL_SYNCOBJ_CREATE, &sc) == 0);
  struct drm_syncobj_handle sh = {sc.handle, 0, -1, 0};
  CHECK(ioctl(render, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh) == 0);
  hipExternalSemaphoreHandleDesc sd;
  memset(&sd, 0, sizeof sd);
  sd.type = hipExternalSemaphoreHandleTypeOpaqueFd;
  sd.handle.fd = sh.fd;
  hipExternalSemaphore_t sem = NULL;
  CHECK_OK(hipImportExternalSemaphore(&sem, &sd));

  int *out = NULL, *host = NULL;
  CHECK_OK(hipMalloc((void**)&out, bytes));
  CHECK_OK(hipMemset(out, 0, bytes));
  CHECK_OK(hipDeviceSynchronize()); /* hipMemset is asynchronous on device memory */
  CHECK_OK(hipHostMalloc((void**)&host, bytes, 0));
  memset(host, 0, bytes);
  memset(cpu, 0, bytes);
  hipStream_t st;
  CHECK_OK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
  hipExternalSemaphoreWaitParams wp;
  memset(&wp, 0, sizeof wp);
  CHECK_OK(hipWaitExternalSemaphoresAsync(&sem, &wp, 1, st));
  triple<<<16, 256, 0, st>>>(in, out, N);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpyAsync(host, out, bytes, hipMemcpyDeviceToHost, st));
  usleep(20 * 1000);
  CHECK_ERR(hipStreamQuery(st), hipErrorNotReady);
  /* Kernels of other streams (the null stream, and a stream made after `st`) run meanwhile. */
  hipStream_t other;
  CHECK_OK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
  int* tmp = NULL;
  CHECK_OK(hipMalloc((void**)&tmp, 1024 * sizeof(int)));
  iota<<<4, 256, 0, other>>>(tmp, 1024, 5);
  CHECK_OK(hipStreamSynchronize(other));
  iota<<<4, 256>>>(tmp, 1024, 9);
  CHECK_OK(hipStreamSynchronize(0));
  int probe[2] = {0, 0};
  CHECK_OK(hipMemcpy(probe, tmp + 1022, sizeof probe, hipMemcpyDeviceToHost));
  CHECK(probe[0] == 9 + 1022 && probe[1] == 9 + 1023);
  CHECK_ERR(hipStreamQuery(st), hipErrorNotReady);
  /* The producer writes the input, then signals: the kernel sees what was written. */
  for (int i = 0; i < N; i++) cpu[i] = i - 7;
  uint32_t handle = sc.handle;
  struct drm_syncobj_array sa;
  memset(&sa, 0, sizeof sa);
  sa.handles = (uint64_t)(uintptr_t)&handle;
  sa.count_handles = 1;
  CHECK(ioctl(render, DRM_IOCTL_SYNCOBJ_SIGNAL, &sa) == 0);
  CHECK_OK(hipStreamSynchronize(st));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += host[i] != (i - 7) * 3;
  CHECK(bad == 0);

  CHECK_OK(hipStreamDestroy(st));
  CHECK_OK(hipStreamDestroy(other)); /* hipFree waits for every stream: after the signal */
  CHECK_OK(hipFree(tmp));
  CHECK_OK(hipFree(out));
  CHECK_OK(hipHostFree(host));
  CHECK_OK(hipFree(in));
  CHECK_OK(hipDestroyExternalMemory(em));
  CHECK_OK(hipDestroyExternalSemaphore(sem));
  struct drm_syncobj_destroy sdel = {sc.handle, 0};
  CHECK(ioctl(render, DRM_IOCTL_SYNCOBJ_DESTROY, &sdel) == 0);
  munmap(cpu, bytes);
  close(mfd);
  close(udev);
  close(render);
}

int main(void) {
  /* Fork before the runtime initialises in either process. */
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) return 2;
  pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    ipc_child(to_child[0], to_parent[1]);
  }
  close(to_child[0]);
  close(to_parent[1]);
  check_bound_to_expected_library((void*)&hipLaunchKernel);
  ipc_case(child, to_parent[0], to_child[1]);
  vmm_case();
  external_case();
  return summary();
}
