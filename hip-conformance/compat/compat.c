/*
 * Source-compatibility probe for include/hip/hip_runtime_api.h (issue 2, item 5).
 *
 * Uses only the APIs of the runtime core (devices, memory, copies, fills, streams, events,
 * errors) and must compile unchanged against hipkfd's header and against AMD's own
 * hip/hip_runtime_api.h (-D__HIP_PLATFORM_AMD__), as C. tests/header_compat.rs compiles it both
 * ways; the C suite links and runs it against libamdhip64.so.7 under kfdsim.
 *
 * Exit status 0 when every call behaves; prints one line per failed check.
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(call)                                                                    \
  do {                                                                                 \
    hipError_t e_ = (call);                                                            \
    if (e_ != hipSuccess) {                                                            \
      fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call,             \
              hipGetErrorName(e_), hipGetErrorString(e_));                             \
      failures++;                                                                      \
    }                                                                                  \
  } while (0)

#define EXPECT(cond)                                                                   \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);              \
      failures++;                                                                      \
    }                                                                                  \
  } while (0)

int main(void) {
  enum { N = 1 << 20 };
  int count = 0, dev = -1, value = 0, version = 0;
  size_t free_bytes = 0, total_bytes = 0, range_size = 0;
  hipDevice_t device;
  hipDeviceProp_t prop;
  hipPointerAttribute_t attr;
  hipStream_t stream, nonblocking;
  hipEvent_t start, stop;
  float ms = 0.0f;
  unsigned char *host, *pinned;
  void *d_a = NULL, *d_b = NULL;
  hipDeviceptr_t base = NULL;

  CHECK(hipInit(0));
  CHECK(hipGetDeviceCount(&count));
  EXPECT(count > 0);
  CHECK(hipSetDevice(0));
  CHECK(hipGetDevice(&dev));
  EXPECT(dev == 0);
  CHECK(hipDeviceGet(&device, 0));
  CHECK(hipGetDeviceProperties(&prop, 0));
  printf("device 0: %s (%s), %d CUs, %zu bytes\n", prop.name, prop.gcnArchName,
         prop.multiProcessorCount, prop.totalGlobalMem);
  CHECK(hipDeviceGetAttribute(&value, hipDeviceAttributeMultiprocessorCount, 0));
  EXPECT(value == prop.multiProcessorCount);
  CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
  EXPECT(free_bytes <= total_bytes);
  CHECK(hipDriverGetVersion(&version));
  CHECK(hipRuntimeGetVersion(&version));
  EXPECT(version > 0);

  host = (unsigned char *)malloc(N);
  EXPECT(host != NULL);
  if (host == NULL) return 1;
  CHECK(hipHostMalloc((void **)&pinned, N, hipHostMallocDefault));
  CHECK(hipMalloc(&d_a, N));
  CHECK(hipMalloc(&d_b, N));
  CHECK(hipPointerGetAttributes(&attr, d_a));
  EXPECT(attr.device == 0);
#if HIP_VERSION_MAJOR < 6
  /* Built against ROCm 5 (tests/header_compat.rs runs it through the libamdhip64.so.5 compat
   * link): ROCm 5's hipMemoryType values, in ROCm 5's field name. */
  EXPECT(attr.memoryType == hipMemoryTypeDevice);
  CHECK(hipPointerGetAttributes(&attr, pinned));
  EXPECT(attr.memoryType == hipMemoryTypeHost);
#else
  EXPECT(attr.type == hipMemoryTypeDevice);
  CHECK(hipPointerGetAttributes(&attr, pinned));
  EXPECT(attr.type == hipMemoryTypeHost);
#endif
  CHECK(hipMemGetAddressRange(&base, &range_size, (hipDeviceptr_t)((char *)d_a + 16)));
  EXPECT(base == d_a && range_size >= N);

  for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 7);
  CHECK(hipMemcpy(d_a, host, N, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_b, d_a, N, hipMemcpyDeviceToDevice));
  memset(host, 0, N);
  CHECK(hipMemcpy(host, d_b, N, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    if (host[i] != (unsigned char)(i * 7)) {
      fprintf(stderr, "H2D/D2D/D2H mismatch at %d\n", i);
      failures++;
      break;
    }
  }

  CHECK(hipMemset(d_a, 0x5a, N));
  CHECK(hipMemsetD8((hipDeviceptr_t)d_b, 0x11, N));
  CHECK(hipMemsetD16((hipDeviceptr_t)d_b, 0x2222, N / 2));
  CHECK(hipMemsetD32((hipDeviceptr_t)d_b, 0x33333333u, N / 4));

  CHECK(hipStreamCreate(&stream));
  CHECK(hipStreamCreateWithFlags(&nonblocking, hipStreamNonBlocking));
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreateWithFlags(&stop, hipEventDefault));
  CHECK(hipEventRecord(start, stream));
  CHECK(hipMemcpyAsync(pinned, d_a, N, hipMemcpyDeviceToHost, stream));
  CHECK(hipMemsetAsync(d_b, 0, N, stream));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)d_b, 1u, N / 4, stream));
  CHECK(hipEventRecord(stop, stream));
  CHECK(hipStreamWaitEvent(nonblocking, stop, 0));
  CHECK(hipEventSynchronize(stop));
  CHECK(hipEventQuery(stop));
  CHECK(hipEventElapsedTime(&ms, start, stop));
  CHECK(hipStreamSynchronize(nonblocking));
  CHECK(hipStreamQuery(stream));
  EXPECT(pinned[0] == 0x5a && pinned[N - 1] == 0x5a);
  CHECK(hipDeviceSynchronize());

  /* Negative cases: documented codes, recorded as the thread's last error. */
  EXPECT(hipMalloc(NULL, 16) == hipErrorInvalidValue);
  EXPECT(hipPeekAtLastError() == hipErrorInvalidValue);
  EXPECT(hipGetLastError() == hipErrorInvalidValue);
  EXPECT(hipGetLastError() == hipSuccess);
  EXPECT(hipSetDevice(count) == hipErrorInvalidDevice);
  EXPECT(strcmp(hipGetErrorName(hipErrorInvalidDevice), "hipErrorInvalidDevice") == 0);
  (void)hipGetLastError();

  /* VMM: the ROCm <= 5.2 header lays hipMemAllocationProp out differently from ours (same 32
   * bytes); a binary built against either must work. */
  {
    hipMemAllocationProp prop;
    hipMemAccessDesc access;
    hipMemGenericAllocationHandle_t handle = NULL, again = NULL;
    hipMemLocation loc;
    unsigned long long flags = 0;
    size_t gran = 0;
    void *va = NULL;
    int fd = -1;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
    CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum));
    EXPECT(gran > 0);
    CHECK(hipMemAddressReserve(&va, 2 * gran, 0, NULL, 0));
    CHECK(hipMemCreate(&handle, 2 * gran, &prop, 0));
    CHECK(hipMemMap(va, 2 * gran, 0, handle, 0));
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(va, 2 * gran, &access, 1));
    loc = prop.location;
    CHECK(hipMemGetAccess(&flags, &loc, va));
    EXPECT(flags == hipMemAccessFlagsProtReadWrite);
    memset(host, 0x3c, 2 * gran);
    CHECK(hipMemcpy(va, host, 2 * gran, hipMemcpyHostToDevice));
    memset(host, 0, 2 * gran);
    CHECK(hipMemcpy(host, va, 2 * gran, hipMemcpyDeviceToHost));
    EXPECT(host[0] == 0x3c && host[2 * gran - 1] == 0x3c);
    memset(&prop, 0, sizeof prop);
    CHECK(hipMemGetAllocationPropertiesFromHandle(&prop, handle));
    EXPECT(prop.type == hipMemAllocationTypePinned && prop.location.type == hipMemLocationTypeDevice);
    EXPECT(prop.requestedHandleType == hipMemHandleTypePosixFileDescriptor);
    CHECK(hipMemExportToShareableHandle(&fd, handle, hipMemHandleTypePosixFileDescriptor, 0));
    CHECK(hipMemImportFromShareableHandle(&again, &fd, hipMemHandleTypePosixFileDescriptor));
    EXPECT(again == handle);
    CHECK(hipMemRelease(again));
    CHECK(hipMemUnmap(va, 2 * gran));
    CHECK(hipMemRelease(handle));
    CHECK(hipMemAddressFree(va, 2 * gran));
  }

  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipStreamDestroy(nonblocking));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(d_a));
  CHECK(hipFree(d_b));
  CHECK(hipHostFree(pinned));
  free(host);
  CHECK(hipDeviceReset());

  printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
