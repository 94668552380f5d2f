/*
 * Managed memory: hipMallocManaged (system memory every GPU maps at one address, no migration),
 * hipMemPrefetchAsync, hipMemAdvise, hipMemRangeGetAttribute, hipStreamAttachMemAsync, the
 * managed-memory device attributes, and hipPointerGetAttribute(s) on it.
 *
 * Expected codes: clr hip_hmm.cpp (hipMallocManaged, hipMemPrefetchAsync, hipMemAdvise,
 * hipMemRangeGetAttribute, hipStreamAttachMemAsync); hip-tests catch/unit/memory/
 * hipMallocManaged.cc.
 */
#define _GNU_SOURCE
#include "common.h"

TEST(hipMallocManaged_cpu_and_device_roundtrip)
{
    const size_t n = 2 * MiB + 77;
    uint8_t *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachGlobal));
    REQUIRE(m != NULL);
    /* the CPU writes, a device copies it out */
    pat_fill(m, n, 4);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemcpy(d, m, n, hipMemcpyDefault));
    check_dev_pattern(d, n, 4);
    /* a device writes, the CPU reads in place */
    HIP_OK(hipMemset(m, 0x3c, n));
    CHECK_BYTES(m, n, 0x3c);
    HIP_OK(hipMemcpy(m, d, n, hipMemcpyDeviceToDevice));
    CHECK_PATTERN(m, n, 4);
    HIP_OK(hipFree(d));
    HIP_OK(hipFree(m));
}

TEST(hipMallocManaged_two_gpus)
{
    REQUIRE_GPUS(2);
    const size_t n = 1 * MiB;
    uint8_t *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachHost));
    for (int dev = 0; dev < 2; dev++) {
        HIP_OK(hipSetDevice(dev));
        HIP_OK(hipMemPrefetchAsync(m, n, dev, NULL));
        HIP_OK(hipMemset(m, 0x40 + dev, n));
        CHECK_BYTES(m, n, 0x40 + dev);
        void *d = NULL;
        HIP_OK(hipMalloc(&d, n));
        pat_fill(m, n, 30 + dev);
        HIP_OK(hipMemcpy(d, m, n, hipMemcpyDefault));
        check_dev_pattern(d, n, 30 + dev);
        HIP_OK(hipFree(d));
    }
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipFree(m));
}

TEST(hipMallocManaged_attributes)
{
    const size_t n = 4 * KiB;
    char *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachGlobal));
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, m + 8));
    CHECK(at.type == hipMemoryTypeManaged);
    CHECK(at.isManaged == 1);
    CHECK(at.devicePointer == m + 8 && at.hostPointer == m + 8);
    CHECK(at.allocationFlags == hipMemAttachGlobal);
    unsigned char managed = 0;
    HIP_OK(hipPointerGetAttribute(&managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, (hipDeviceptr_t)(m + 1)));
    CHECK(managed == 1);
    void *start = NULL;
    HIP_OK(hipPointerGetAttribute(&start, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, (hipDeviceptr_t)(m + 1)));
    CHECK(start == m);
    int v = 0;
    HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeManagedMemory, 0));
    CHECK(v == 1);
    HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeConcurrentManagedAccess, 0));
    CHECK(v == 1);
    hipDeviceProp_t p;
    HIP_OK(hipGetDeviceProperties(&p, 0));
    CHECK(p.managedMemory == 1);
    HIP_OK(hipFree(m));
}

TEST(hipMallocManaged_negative)
{
    void *m = NULL;
    CHECK_HIP(hipMallocManaged(NULL, 64, hipMemAttachGlobal), hipErrorInvalidValue);
    CHECK_HIP(hipMallocManaged(&m, 0, hipMemAttachGlobal), hipErrorInvalidValue);
    CHECK_HIP(hipMallocManaged(&m, 64, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMallocManaged(&m, 64, hipMemAttachSingle), hipErrorInvalidValue);
    CHECK_HIP(hipMallocManaged(&m, 64, hipMemAttachGlobal | hipMemAttachHost), hipErrorInvalidValue);
    CHECK_HIP(hipMallocManaged(&m, SIZE_MAX, hipMemAttachGlobal), hipErrorOutOfMemory);
    /* hipHostFree is not the way to free it */
    HIP_OK(hipMallocManaged(&m, 64, hipMemAttachGlobal));
    CHECK_HIP(hipHostFree(m), hipErrorInvalidValue);
    HIP_OK(hipFree(m));
    CHECK_HIP(hipFree(m), hipErrorInvalidValue);
}

TEST(hipMemPrefetch_advise_rangeattr)
{
    const size_t n = 8 * KiB;
    char *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachGlobal));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemPrefetchAsync(m, n, 0, s));
    HIP_OK(hipMemPrefetchAsync(m, n, hipCpuDeviceId, s));
    CHECK_HIP(hipMemPrefetchAsync(NULL, n, 0, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemPrefetchAsync(m, 0, 0, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemPrefetchAsync(m, n + 1, 0, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemPrefetchAsync(m, n, 99, s), hipErrorInvalidDevice);
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipMemPrefetchAsync(m, n, 0, s), hipErrorContextIsDestroyed);

    HIP_OK(hipMemAdvise(m, n, hipMemAdviseSetReadMostly, 0));
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseSetPreferredLocation, hipCpuDeviceId));
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseSetAccessedBy, 0));
    CHECK_HIP(hipMemAdvise(m, n, hipMemAdviseSetAccessedBy, 99), hipErrorInvalidDevice);
    CHECK_HIP(hipMemAdvise(NULL, n, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAdvise(m, 0, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAdvise(m, n + 1, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAdvise(m, n, (hipMemoryAdvise)77, 0), hipErrorInvalidValue);

    int v = 5;
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof(v), hipMemRangeAttributeCoherencyMode, m, n));
    CHECK(v == 0);
    int acc[3] = {1, 1, 1};
    HIP_OK(hipMemRangeGetAttribute(acc, sizeof(acc), hipMemRangeAttributeAccessedBy, m, n));
    CHECK(acc[0] == hipInvalidDeviceId && acc[2] == hipInvalidDeviceId);
    CHECK_HIP(hipMemRangeGetAttribute(NULL, 4, hipMemRangeAttributeReadMostly, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(&v, 0, hipMemRangeAttributeReadMostly, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, m, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(&v, 4, (hipMemRangeAttribute)9, m, n), hipErrorInvalidValue);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 64));
    CHECK_HIP(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, d, 64), hipErrorInvalidValue);
    HIP_OK(hipFree(d));

    HIP_OK(hipStreamAttachMemAsync(NULL, m, 0, hipMemAttachGlobal));
    HIP_OK(hipStreamAttachMemAsync(NULL, m, n, hipMemAttachHost));
    CHECK_HIP(hipStreamAttachMemAsync(NULL, m, n - 1, hipMemAttachHost), hipErrorInvalidValue);
    CHECK_HIP(hipStreamAttachMemAsync(NULL, m, 0, hipMemAttachSingle), hipErrorInvalidValue);
    CHECK_HIP(hipStreamAttachMemAsync(NULL, NULL, 0, hipMemAttachGlobal), hipErrorInvalidValue);
    HIP_OK(hipFree(m));
}
