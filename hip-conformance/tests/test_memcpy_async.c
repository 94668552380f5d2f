/*
 * The async copy family and pointer queries: hipMemcpyHtoDAsync, hipMemcpyDtoHAsync,
 * hipMemcpyDtoDAsync, hipMemcpyWithStream, hipMemPtrGetInfo, hipPointerGetAttribute.
 *
 * Expected codes: hip-tests catch/unit/memory/{hipMemcpyAsync_derivatives,hipMemcpyWithStream,
 * hipMemPtrGetInfo,hipPointerGetAttribute}.cc; clr hip_memory.cpp (ihipPointerGetAttributes).
 */
#define _GNU_SOURCE
#include "common.h"

#include <fcntl.h>
#include <unistd.h>

static hipStream_t destroyed_stream(void)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    return s;
}

TEST(hipMemcpyAsync_derivatives_roundtrip)
{
    const size_t n = 5 * MiB + 3;
    uint8_t *h = NULL, *back = NULL;
    HIP_OK(hipHostMalloc((void **)&h, n, 0));
    HIP_OK(hipHostMalloc((void **)&back, n, 0));
    void *a = NULL, *b = NULL;
    HIP_OK(hipMalloc(&a, n));
    HIP_OK(hipMalloc(&b, n));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    pat_fill(h, n, 11);
    HIP_OK(hipMemcpyHtoDAsync(a, h, n, s));
    HIP_OK(hipMemcpyDtoDAsync(b, a, n, s));
    HIP_OK(hipMemcpyDtoHAsync(back, b, n, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_PATTERN(back, n, 11);
    /* pageable host memory too, on the null stream */
    uint8_t *pg = xmalloc(n);
    pat_fill(pg, n, 12);
    HIP_OK(hipMemcpyHtoDAsync(a, pg, n, NULL));
    memset(pg, 0, n);
    HIP_OK(hipMemcpyDtoHAsync(pg, a, n, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
    CHECK_PATTERN(pg, n, 12);
    /* hipMemcpyWithStream is done when it returns */
    pat_fill(h, n, 13);
    HIP_OK(hipMemcpyWithStream(a, h, n, hipMemcpyHostToDevice, s));
    HIP_OK(hipMemcpyWithStream(pg, a, n, hipMemcpyDeviceToHost, s));
    CHECK_PATTERN(pg, n, 13);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipHostFree(back));
    free(pg);
}

TEST(hipMemcpyAsync_derivatives_negative)
{
    void *d = NULL, *h = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipHostMalloc(&h, 4096, 0));
    CHECK_HIP(hipMemcpyHtoDAsync(NULL, h, 4096, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyHtoDAsync(d, NULL, 4096, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoHAsync(NULL, d, 4096, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoHAsync(h, NULL, 4096, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoDAsync(NULL, d, 4096, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoDAsync(d, NULL, 4096, NULL), hipErrorInvalidValue);
    /* past the end of the device allocation */
    CHECK_HIP(hipMemcpyHtoDAsync(d, h, 4097, NULL), hipErrorInvalidValue);
    hipStream_t bad = destroyed_stream();
    CHECK_HIP(hipMemcpyHtoDAsync(d, h, 4096, bad), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemcpyDtoHAsync(h, d, 4096, bad), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemcpyDtoDAsync(d, d, 4096, bad), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemcpyWithStream(d, h, 4096, hipMemcpyHostToDevice, bad), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemcpyWithStream(NULL, h, 4096, hipMemcpyHostToDevice, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyWithStream(d, h, 4096, (hipMemcpyKind)9, NULL), hipErrorInvalidMemcpyDirection);
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
}

TEST(hipMemcpyDtoDAsync_two_gpus)
{
    REQUIRE_GPUS(2);
    const size_t n = 2 * MiB;
    void *a = dev_pattern(n, 21), *b = NULL;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMalloc(&b, n));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemcpyDtoDAsync(b, a, n, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(b, n, 21);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(b));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipFree(a));
}

TEST(hipMemPtrGetInfo_sizes)
{
    void *d = NULL, *h = NULL;
    size_t sz = 0;
    HIP_OK(hipMalloc(&d, 1000));
    HIP_OK(hipMemPtrGetInfo((char *)d + 999, &sz));
    CHECK(sz == 1000);
    HIP_OK(hipHostMalloc(&h, 3000, 0));
    HIP_OK(hipMemPtrGetInfo(h, &sz));
    CHECK(sz == 3000);
    CHECK_HIP(hipMemPtrGetInfo(d, NULL), hipErrorInvalidValue);
    int x;
    CHECK_HIP(hipMemPtrGetInfo(&x, &sz), hipErrorInvalidValue);
    CHECK_HIP(hipMemPtrGetInfo(NULL, &sz), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
    CHECK_HIP(hipMemPtrGetInfo(d, &sz), hipErrorInvalidValue);
    HIP_OK(hipHostFree(h));
}

TEST(hipPointerGetAttribute_each)
{
    HIP_OK(hipSetDevice(0));
    char *d = NULL, *h = NULL;
    HIP_OK(hipMalloc((void **)&d, 5000));
    HIP_OK(hipHostMalloc((void **)&h, 100, 0));
    unsigned u = 99;
    HIP_OK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)(d + 4)));
    CHECK(u == hipMemoryTypeDevice);
    HIP_OK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)h));
    CHECK(u == hipMemoryTypeHost);
    void *p = NULL;
    HIP_OK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, (hipDeviceptr_t)(d + 4)));
    CHECK(p == d + 4);
    HIP_OK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_HOST_POINTER, (hipDeviceptr_t)(h + 1)));
    CHECK(p == h + 1);
    CHECK_HIP(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_HOST_POINTER, (hipDeviceptr_t)d),
              hipErrorInvalidValue);
    HIP_OK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, (hipDeviceptr_t)(d + 4999)));
    CHECK(p == d);
    u = 0;
    HIP_OK(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, (hipDeviceptr_t)(d + 7)));
    CHECK(u == 5000);
    int ord = 7;
    HIP_OK(hipPointerGetAttribute(&ord, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (hipDeviceptr_t)d));
    CHECK(ord == 0);
    unsigned char b = 9;
    HIP_OK(hipPointerGetAttribute(&b, HIP_POINTER_ATTRIBUTE_MAPPED, (hipDeviceptr_t)d));
    CHECK(b == 1);
    HIP_OK(hipPointerGetAttribute(&b, HIP_POINTER_ATTRIBUTE_IS_MANAGED, (hipDeviceptr_t)d));
    CHECK(b == 0);
    unsigned id1 = 0, id2 = 0;
    HIP_OK(hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)d));
    HIP_OK(hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)h));
    CHECK(id1 != id2);
    /* unknown memory: invalid, with the out value cleared (-2 for the ordinal) */
    int x;
    ord = 7;
    CHECK_HIP(hipPointerGetAttribute(&ord, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (hipDeviceptr_t)&x),
              hipErrorInvalidValue);
    CHECK(ord == hipInvalidDeviceId);
    u = 5;
    CHECK_HIP(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)&x),
              hipErrorInvalidValue);
    CHECK(u == 0);
    CHECK_HIP(hipPointerGetAttribute(NULL, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (hipDeviceptr_t)d),
              hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttribute(&u, HIP_POINTER_ATTRIBUTE_CONTEXT, (hipDeviceptr_t)d), hipErrorNotSupported);
    CHECK_HIP(hipPointerGetAttribute(&u, (hipPointer_attribute)0, (hipDeviceptr_t)d), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttribute(&u, (hipPointer_attribute)99, (hipDeviceptr_t)d), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
}

/* The dma-buf of a device allocation, imported back as external memory: the same bytes. */
TEST(hipMemGetHandleForAddressRange_dmabuf)
{
    const size_t n = 2 * MiB;
    void *d = dev_pattern(n, 41);
    int fd = -1;
    HIP_OK(hipMemGetHandleForAddressRange(&fd, d, n, hipMemRangeHandleTypeDmaBufFd, 0));
    REQUIRE(fd >= 0);
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK(lseek(fd, 0, SEEK_END) == (off_t)n);
    hipExternalMemoryHandleDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = hipExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = fd;
    desc.size = n;
    hipExternalMemory_t m = NULL;
    HIP_OK(hipImportExternalMemory(&m, &desc));
    hipExternalMemoryBufferDesc b;
    memset(&b, 0, sizeof b);
    b.size = n;
    void *view = NULL;
    HIP_OK(hipExternalMemoryGetMappedBuffer(&view, m, &b));
    check_dev_pattern(view, n, 41);
    /* writes through the import land in the original allocation */
    HIP_OK(hipMemset(view, 0x3e, 4096));
    check_dev_bytes(d, 4096, 0x3e);
    HIP_OK(hipFree(view));
    HIP_OK(hipDestroyExternalMemory(m));
    close(fd);
    HIP_OK(hipFree(d));
}

TEST(hipMemGetHandleForAddressRange_negative)
{
    /* above the sub-allocation sizes: a BO of its own */
    const size_t n = 1 * MiB;
    char *d = NULL;
    HIP_OK(hipMalloc((void **)&d, n));
    int fd = -1;
    const hipMemRangeHandleType t = hipMemRangeHandleTypeDmaBufFd;
    CHECK_HIP(hipMemGetHandleForAddressRange(NULL, d, n, t, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, NULL, n, t, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, 0, t, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, n, (hipMemRangeHandleType)2, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, n, t, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d + 1, 4096, t, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, 100, t, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d + 4096, 4096, t, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, n + 4096, t, 0), hipErrorInvalidValue);
    void *host = NULL;
    CHECK(posix_memalign(&host, 4096, 4096) == 0);
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, host, 4096, t, 0), hipErrorInvalidValue);
    HIP_OK(hipHostRegister(host, 4096, 0));
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, host, 4096, t, 0), hipErrorInvalidValue);
    HIP_OK(hipHostUnregister(host));
    free(host);
    CHECK(fd == -1);
    HIP_OK(hipFree(d));
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, n, t, 0), hipErrorInvalidValue);
    /* a small allocation is a slot of a shared 2 MiB block: its dma-buf would start at the
     * block and carry the neighbours' bytes */
    HIP_OK(hipMalloc((void **)&d, 64 * KiB));
    CHECK_HIP(hipMemGetHandleForAddressRange(&fd, d, 64 * KiB, t, 0), hipErrorInvalidValue);
    CHECK(fd == -1);
    HIP_OK(hipFree(d));
}
