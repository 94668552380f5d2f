/*
 * Managed memory: hipMallocManaged (system memory every GPU maps at one address, no migration),
 * hipMemPrefetchAsync, hipMemAdvise (remembered per page), hipMemRangeGetAttribute(s),
 * hipStreamAttachMemAsync, the
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
    CHECK(acc[0] == 0 && acc[1] == hipInvalidDeviceId && acc[2] == hipInvalidDeviceId);
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

/* One 4-byte attribute of [p, p + n). */
static int range_attr(void *p, size_t n, hipMemRangeAttribute a)
{
    int v = 12345;
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof(v), a, p, n));
    return v;
}

/* hip-tests hipMemRangeGetAttribute.cc: advice and prefetch locations are remembered per page
 * and a range answers what all its pages have in common. */
TEST(hipMemAdvise_remembered_per_page)
{
    const size_t pg = 4 * KiB, n = 4 * pg;
    char *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachGlobal));
    /* defaults */
    CHECK(range_attr(m, n, hipMemRangeAttributeReadMostly) == 0);
    CHECK(range_attr(m, n, hipMemRangeAttributePreferredLocation) == hipInvalidDeviceId);
    CHECK(range_attr(m, n, hipMemRangeAttributeLastPrefetchLocation) == hipInvalidDeviceId);
    CHECK(range_attr(m, n, hipMemRangeAttributeCoherencyMode) == 0);
    /* read-mostly on the first page only */
    HIP_OK(hipMemAdvise(m, pg, hipMemAdviseSetReadMostly, 0));
    CHECK(range_attr(m, pg, hipMemRangeAttributeReadMostly) == 1);
    CHECK(range_attr(m + 100, 200, hipMemRangeAttributeReadMostly) == 1); /* inside the page */
    CHECK(range_attr(m, 2 * pg, hipMemRangeAttributeReadMostly) == 0);   /* partial range */
    HIP_OK(hipMemAdvise(m, pg, hipMemAdviseUnsetReadMostly, 99));        /* device ignored */
    CHECK(range_attr(m, pg, hipMemRangeAttributeReadMostly) == 0);
    /* preferred location: device, CPU, unset, partial */
    HIP_OK(hipMemAdvise(m, 2 * pg, hipMemAdviseSetPreferredLocation, 0));
    CHECK(range_attr(m, 2 * pg, hipMemRangeAttributePreferredLocation) == 0);
    CHECK(range_attr(m, 3 * pg, hipMemRangeAttributePreferredLocation) == hipInvalidDeviceId);
    HIP_OK(hipMemAdvise(m + pg, pg, hipMemAdviseSetPreferredLocation, hipCpuDeviceId));
    CHECK(range_attr(m + pg, pg, hipMemRangeAttributePreferredLocation) == hipCpuDeviceId);
    CHECK(range_attr(m, pg, hipMemRangeAttributePreferredLocation) == 0);
    CHECK(range_attr(m, 2 * pg, hipMemRangeAttributePreferredLocation) == hipInvalidDeviceId);
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseUnsetPreferredLocation, 0));
    CHECK(range_attr(m, n, hipMemRangeAttributePreferredLocation) == hipInvalidDeviceId);
    /* accessed-by: CPU and device 0 on the first page, listed GPUs first, then the CPU */
    HIP_OK(hipMemAdvise(m, pg, hipMemAdviseSetAccessedBy, hipCpuDeviceId));
    HIP_OK(hipMemAdvise(m, pg, hipMemAdviseSetAccessedBy, 0));
    int acc[4] = {7, 7, 7, 7};
    HIP_OK(hipMemRangeGetAttribute(acc, sizeof(acc), hipMemRangeAttributeAccessedBy, m, pg));
    CHECK(acc[0] == 0 && acc[1] == hipCpuDeviceId && acc[2] == hipInvalidDeviceId && acc[3] == hipInvalidDeviceId);
    int one = 7;
    HIP_OK(hipMemRangeGetAttribute(&one, sizeof(one), hipMemRangeAttributeAccessedBy, m, pg));
    CHECK(one == 0); /* as many as fit */
    HIP_OK(hipMemRangeGetAttribute(acc, sizeof(acc), hipMemRangeAttributeAccessedBy, m, 2 * pg));
    CHECK(acc[0] == hipInvalidDeviceId && acc[1] == hipInvalidDeviceId);
    HIP_OK(hipMemAdvise(m, pg, hipMemAdviseUnsetAccessedBy, 0));
    HIP_OK(hipMemRangeGetAttribute(acc, sizeof(acc), hipMemRangeAttributeAccessedBy, m, pg));
    CHECK(acc[0] == hipCpuDeviceId && acc[1] == hipInvalidDeviceId);
    /* coarse grain: all, none, mixed */
    HIP_OK(hipMemAdvise(m + 2 * pg, pg, hipMemAdviseSetCoarseGrain, 0));
    CHECK(range_attr(m + 2 * pg, pg, hipMemRangeAttributeCoherencyMode) == 1);
    CHECK(range_attr(m, n, hipMemRangeAttributeCoherencyMode) == 2);
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseUnsetCoarseGrain, 0));
    CHECK(range_attr(m, n, hipMemRangeAttributeCoherencyMode) == 0);
    /* last prefetch location */
    HIP_OK(hipMemPrefetchAsync(m, pg, 0, NULL));
    CHECK(range_attr(m, pg, hipMemRangeAttributeLastPrefetchLocation) == 0);
    CHECK(range_attr(m, 2 * pg, hipMemRangeAttributeLastPrefetchLocation) == hipInvalidDeviceId);
    HIP_OK(hipMemPrefetchAsync(m, n, hipCpuDeviceId, NULL));
    CHECK(range_attr(m, n, hipMemRangeAttributeLastPrefetchLocation) == hipCpuDeviceId);
    /* failed calls change nothing */
    CHECK_HIP(hipMemAdvise(m, n + 1, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemPrefetchAsync(m, n + 1, 0, NULL), hipErrorInvalidValue);
    CHECK(range_attr(m, n, hipMemRangeAttributeReadMostly) == 0);
    CHECK(range_attr(m, n, hipMemRangeAttributeLastPrefetchLocation) == hipCpuDeviceId);

    /* hipMemRangeGetAttributes: several at once */
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseSetReadMostly, 0));
    int rm = 5, pl = 5, lp = 5, ab[2] = {5, 5};
    void *data[4] = {&rm, &pl, ab, &lp};
    size_t sizes[4] = {4, 4, sizeof(ab), 4};
    hipMemRangeAttribute attrs[4] = {hipMemRangeAttributeReadMostly, hipMemRangeAttributePreferredLocation,
                                     hipMemRangeAttributeAccessedBy, hipMemRangeAttributeLastPrefetchLocation};
    HIP_OK(hipMemRangeGetAttributes(data, sizes, attrs, 4, m, n));
    CHECK(rm == 1 && pl == hipInvalidDeviceId && lp == hipCpuDeviceId);
    CHECK(ab[0] == hipInvalidDeviceId && ab[1] == hipInvalidDeviceId);
    CHECK_HIP(hipMemRangeGetAttributes(NULL, sizes, attrs, 4, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttributes(data, NULL, attrs, 4, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, NULL, 4, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 0, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, NULL, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, m, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, m, n + 1), hipErrorInvalidValue);
    data[2] = NULL;
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, m, n), hipErrorInvalidValue);
    data[2] = ab;
    sizes[0] = 8;
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, m, n), hipErrorInvalidValue);
    sizes[0] = 4;
    attrs[3] = (hipMemRangeAttribute)999;
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, m, n), hipErrorInvalidValue);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    attrs[3] = hipMemRangeAttributeReadMostly;
    CHECK_HIP(hipMemRangeGetAttributes(data, sizes, attrs, 4, d, n), hipErrorInvalidValue); /* not managed */
    /* hip-tests size negatives */
    int v = 0;
    CHECK_HIP(hipMemRangeGetAttribute(&v, 8, hipMemRangeAttributePreferredLocation, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(&v, 8, hipMemRangeAttributeLastPrefetchLocation, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(acc, 10, hipMemRangeAttributeAccessedBy, m, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(&v, 4, hipMemRangeAttributeReadMostly, NULL, n), hipErrorInvalidValue);
    HIP_OK(hipFree(d));

    /* advice dies with its allocation: a new one at the same address starts clean */
    HIP_OK(hipFree(m));
    char *m2 = NULL;
    HIP_OK(hipMallocManaged((void **)&m2, n, hipMemAttachGlobal));
    CHECK(range_attr(m2, n, hipMemRangeAttributeReadMostly) == 0);
    CHECK(range_attr(m2, n, hipMemRangeAttributeLastPrefetchLocation) == hipInvalidDeviceId);
    HIP_OK(hipFree(m2));
}

TEST(hipMemAdvise_two_gpus)
{
    REQUIRE_GPUS(2);
    const size_t n = 64 * KiB;
    char *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachGlobal));
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseSetAccessedBy, 1));
    HIP_OK(hipMemAdvise(m, n / 2, hipMemAdviseSetAccessedBy, 0));
    int acc[3];
    HIP_OK(hipMemRangeGetAttribute(acc, sizeof(acc), hipMemRangeAttributeAccessedBy, m, n / 2));
    CHECK(acc[0] == 0 && acc[1] == 1 && acc[2] == hipInvalidDeviceId);
    HIP_OK(hipMemRangeGetAttribute(acc, sizeof(acc), hipMemRangeAttributeAccessedBy, m, n));
    CHECK(acc[0] == 1 && acc[1] == hipInvalidDeviceId);
    HIP_OK(hipMemAdvise(m, n, hipMemAdviseSetPreferredLocation, 1));
    CHECK(range_attr(m, n, hipMemRangeAttributePreferredLocation) == 1);
    HIP_OK(hipMemPrefetchAsync(m + n / 2, n / 2, 1, NULL));
    CHECK(range_attr(m + n / 2, n / 2, hipMemRangeAttributeLastPrefetchLocation) == 1);
    HIP_OK(hipFree(m));
}

/* Device memory is not HMM memory: hipMemAdvise refuses it (hip-tests
 * Unit_hipMemAdvise_Negative_Parameters) and hipMemRangeGetAttribute answers only the coherency
 * mode, the memory's grain (coarse for hipMalloc, fine for coherent pinned memory; hip-tests
 * Unit_hipMalloc_CoherentTst), refusing the other attributes (Unit_hipMemRangeGetAttribute). */
TEST(hipMemAdvise_hipMemRangeGetAttribute_non_managed)
{
    void *d = NULL, *h = NULL, *nc = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipHostMalloc(&h, 4096, 0));
    HIP_OK(hipHostMalloc(&nc, 4096, hipHostMallocNonCoherent));
    CHECK_HIP(hipMemAdvise(d, 4096, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAdvise(d, 4096, hipMemAdviseSetAccessedBy, 0), hipErrorInvalidValue);
    HIP_OK(hipMemAdvise(h, 4096, hipMemAdviseSetReadMostly, 0));
    uint32_t mode = 7;
    HIP_OK(hipMemRangeGetAttribute(&mode, sizeof mode, hipMemRangeAttributeCoherencyMode, d, 4));
    CHECK(mode == 1); /* hipMemRangeCoherencyModeCoarseGrain */
    HIP_OK(hipMemRangeGetAttribute(&mode, sizeof mode, hipMemRangeAttributeCoherencyMode, h, 4096));
    CHECK(mode == 0); /* hipMemRangeCoherencyModeFineGrain */
    HIP_OK(hipMemRangeGetAttribute(&mode, sizeof mode, hipMemRangeAttributeCoherencyMode, nc, 4096));
    CHECK(mode == 1); /* hipMemRangeCoherencyModeCoarseGrain */
    int rm = 7;
    CHECK_HIP(hipMemRangeGetAttribute(&rm, sizeof rm, hipMemRangeAttributeReadMostly, d, 4096),
              hipErrorInvalidValue);
    CHECK_HIP(hipMemRangeGetAttribute(&mode, sizeof mode, hipMemRangeAttributeCoherencyMode, d, 8192),
              hipErrorInvalidValue);
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipHostFree(nc));
}

/* hip-tests Unit_hipGetProcAddress_MemoryApisManagedMemory, in its order: each advice read back
 * through hipMemRangeGetAttribute, the last prefetch location, and hipStreamAttachMemAsync with
 * every flag. */
TEST(hipMemAdvise_each_advice_read_back)
{
    const size_t n = 16 * sizeof(int);
    int *m = NULL, v = -2;
    unsigned flags[] = {hipMemAttachGlobal, hipMemAttachHost};
    for (int i = 0; i < 2; i++) {
        size_t size = 0;
        HIP_OK(hipMallocManaged((void **)&m, n, flags[i]));
        HIP_OK(hipMemPtrGetInfo(m, &size));
        CHECK(size == n);
        HIP_OK(hipMemset(m, 10, n));
        HIP_OK(hipDeviceSynchronize());
        CHECK(((unsigned char *)m)[n - 1] == 10);
        HIP_OK(hipFree(m));
    }
    HIP_OK(hipMallocManaged((void **)&m, n, hipMemAttachGlobal));
    struct {
        hipMemoryAdvise advice;
        hipMemRangeAttribute attr;
        int want, equal;
    } steps[] = {
        {hipMemAdviseSetReadMostly, hipMemRangeAttributeReadMostly, 1, 1},
        {hipMemAdviseUnsetReadMostly, hipMemRangeAttributeReadMostly, 0, 1},
        {hipMemAdviseSetPreferredLocation, hipMemRangeAttributePreferredLocation, 0, 1},
        {hipMemAdviseUnsetPreferredLocation, hipMemRangeAttributePreferredLocation, 0, 0},
        {hipMemAdviseSetAccessedBy, hipMemRangeAttributeAccessedBy, 0, 1},
        {hipMemAdviseUnsetAccessedBy, hipMemRangeAttributeAccessedBy, 0, 0},
        {hipMemAdviseSetCoarseGrain, hipMemRangeAttributeCoherencyMode, hipMemRangeCoherencyModeCoarseGrain, 1},
        {hipMemAdviseUnsetCoarseGrain, hipMemRangeAttributeCoherencyMode, hipMemRangeCoherencyModeFineGrain, 1},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        HIP_OK(hipMemAdvise(m, n, steps[i].advice, 0));
        v = -2;
        HIP_OK(hipMemRangeGetAttribute(&v, sizeof(int), steps[i].attr, m, n));
        CHECKF(steps[i].equal ? v == steps[i].want : v != steps[i].want, "advice %d: attribute %d is %d",
               (int)steps[i].advice, (int)steps[i].attr, v);
    }
    HIP_OK(hipMemPrefetchAsync(m, n, hipCpuDeviceId, NULL));
    v = -2;
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof(int), hipMemRangeAttributeLastPrefetchLocation, m, n));
    CHECK(v == hipCpuDeviceId);
    unsigned attach[] = {hipMemAttachGlobal, hipMemAttachHost, hipMemAttachSingle};
    for (int i = 0; i < 3; i++) {
        hipStream_t s = NULL;
        HIP_OK(hipStreamCreate(&s));
        HIP_OK(hipStreamAttachMemAsync(s, m, n, attach[i]));
        HIP_OK(hipStreamSynchronize(s));
        HIP_OK(hipStreamDestroy(s));
    }
    HIP_OK(hipFree(m));
}
