/*
 * Stream-ordered allocation: hipMallocAsync, hipFreeAsync, hipMallocFromPoolAsync, memory pools
 * (create/destroy, default/current pool, trim, attributes and counters, access), on 1 and 2 GPUs.
 *
 * Expected codes: clr hip_mempool.cpp / hip_mempool_impl.cpp (MemoryPool::SetAttribute);
 * hip-tests catch/unit/memory/{hipMallocAsync,hipFreeAsync,hipMemPoolApi,hipMemPoolCreate,
 * hipMemPoolSetGetAttribute}.cc (ROCm 7: hipMemPoolProps::maxSize).
 */
#define _GNU_SOURCE
#include "common.h"

static uint64_t pool_u64(hipMemPool_t p, hipMemPoolAttr a)
{
    uint64_t v = 0xdead;
    HIP_OK(hipMemPoolGetAttribute(p, a, &v));
    return v;
}

TEST(hipMallocAsync_roundtrip_and_reuse)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    const size_t n = 1 * MiB + 100;
    void *a = NULL;
    HIP_OK(hipMallocAsync(&a, n, s));
    REQUIRE(a != NULL);
    uint8_t *h = xmalloc(n), *back = xmalloc(n);
    pat_fill(h, n, 3);
    HIP_OK(hipMemcpyAsync(a, h, n, hipMemcpyHostToDevice, s));
    HIP_OK(hipMemcpyAsync(back, a, n, hipMemcpyDeviceToHost, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_PATTERN(back, n, 3);
    /* freed then allocated again on the same stream: the same block, in stream order */
    HIP_OK(hipFreeAsync(a, s));
    void *b = NULL;
    HIP_OK(hipMallocAsync(&b, n, s));
    CHECK(b == a);
    HIP_OK(hipMemsetAsync(b, 0x42, n, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(b, n, 0x42);
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, b));
    CHECK(at.type == hipMemoryTypeDevice && at.device == 0);
    HIP_OK(hipFreeAsync(b, s));
    HIP_OK(hipStreamSynchronize(s));
    /* another stream reuses it once the freeing stream's work is done */
    hipStream_t s2;
    HIP_OK(hipStreamCreate(&s2));
    void *c = NULL;
    HIP_OK(hipMallocAsync(&c, n, s2));
    CHECK(c == a);
    HIP_OK(hipFreeAsync(c, s2));
    HIP_OK(hipStreamSynchronize(s2));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipStreamDestroy(s2));
    free(h);
    free(back);
}

/* The reuse flags (CUDA's cudaMemPoolReuse*, hip-tests hipMemPoolSetGetAttribute.cc
 * Unit_hipMemPoolSetAttribute_Opportunistic / _EventDependencies): with every flag off, a stream
 * the free is not ordered before gets a new block, even once the freeing stream is idle (the pool
 * may give the old block back to the system, but the new one never lands at its address); with
 * Opportunistic on, it gets the idle block; with FollowEventDependencies on, a block freed on a
 * busy stream goes to a stream that waited for an event recorded after the free. */
TEST(hipMallocAsync_reuse_flags)
{
    hipMemPoolProps props = {0};
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;
    hipMemPool_t p;
    HIP_OK(hipMemPoolCreate(&p, &props));
    hipStream_t s1, s2;
    HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    const size_t n = 32 * MiB;
    int off = 0, on = 1;
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolReuseFollowEventDependencies, &off));
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolReuseAllowOpportunistic, &off));
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolReuseAllowInternalDependencies, &off));
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    HIP_OK(hipMallocFromPoolAsync(&a, n, p, s1));
    HIP_OK(hipFreeAsync(a, s1));
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMallocFromPoolAsync(&b, n, p, s2));
    CHECK(b != NULL && b != a);
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolReuseAllowOpportunistic, &on));
    HIP_OK(hipFreeAsync(b, s2));
    HIP_OK(hipStreamSynchronize(s2));
    HIP_OK(hipMallocFromPoolAsync(&c, n, p, s1));
    CHECK(c == b);
    /* s1 held by a host function: the free stays pending, only the event orders it */
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolReuseAllowOpportunistic, &off));
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolReuseFollowEventDependencies, &on));
    static atomic_int hold;
    atomic_store(&hold, 1);
    HIP_OK(hipLaunchHostFunc(s1, hold_while_set, &hold));
    HIP_OK(hipFreeAsync(c, s1));
    hipEvent_t e;
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipEventRecord(e, s1));
    HIP_OK(hipStreamWaitEvent(s2, e, 0));
    HIP_OK(hipMallocFromPoolAsync(&d, n, p, s2));
    CHECK(d == c);
    atomic_store(&hold, 0);
    HIP_OK(hipFreeAsync(d, s2));
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipStreamDestroy(s2));
    HIP_OK(hipMemPoolDestroy(p));
}

TEST(hipMallocAsync_pool_counters_and_trim)
{
    hipMemPool_t p = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&p, 0));
    hipMemPool_t cur = NULL;
    HIP_OK(hipDeviceGetMemPool(&cur, 0));
    CHECK(cur == p);
    HIP_OK(hipMemPoolTrimTo(p, 0));
    uint64_t zero = 0;
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrUsedMemHigh, &zero));
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrReservedMemHigh, &zero));
    uint64_t used0 = pool_u64(p, hipMemPoolAttrUsedMemCurrent);
    void *a = NULL, *b = NULL;
    HIP_OK(hipMallocAsync(&a, 1 * MiB, NULL));
    HIP_OK(hipMallocAsync(&b, 2 * MiB, NULL));
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemCurrent) == used0 + 3 * MiB);
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemHigh) >= used0 + 3 * MiB);
    HIP_OK(hipFreeAsync(b, NULL));
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemCurrent) == used0 + 1 * MiB);
    CHECK(pool_u64(p, hipMemPoolAttrReservedMemCurrent) >= used0 + 3 * MiB);
    HIP_OK(hipStreamSynchronize(NULL));
    HIP_OK(hipMemPoolTrimTo(p, 0));
    CHECK(pool_u64(p, hipMemPoolAttrReservedMemCurrent) == pool_u64(p, hipMemPoolAttrUsedMemCurrent));
    /* a high mark resets to 0, not to the current value (clr; hip-tests
     * Unit_hipMemPoolSetAttribute_ResetMemHighAttr) */
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemCurrent) == used0 + 1 * MiB);
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrUsedMemHigh, &zero));
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrReservedMemHigh, &zero));
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemHigh) == 0);
    CHECK(pool_u64(p, hipMemPoolAttrReservedMemHigh) == 0);
    /* the release threshold round-trips; the counters are read-only; high marks reset to 0 only */
    uint64_t t = 64 * MiB;
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrReleaseThreshold, &t));
    CHECK(pool_u64(p, hipMemPoolAttrReleaseThreshold) == 64 * MiB);
    CHECK_HIP(hipMemPoolSetAttribute(p, hipMemPoolAttrUsedMemCurrent, &zero), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolSetAttribute(p, hipMemPoolAttrReservedMemCurrent, &zero), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolSetAttribute(p, hipMemPoolAttrUsedMemHigh, &t), hipErrorInvalidValue);
    int on = 7;
    HIP_OK(hipMemPoolGetAttribute(p, hipMemPoolReuseAllowOpportunistic, &on));
    CHECK(on == 1);
    CHECK_HIP(hipMemPoolGetAttribute(p, (hipMemPoolAttr)9, &on), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolGetAttribute(p, hipMemPoolAttrUsedMemHigh, NULL), hipErrorInvalidValue);
    t = 0;
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrReleaseThreshold, &t));
    HIP_OK(hipFreeAsync(a, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
    HIP_OK(hipMemPoolTrimTo(p, 0));
}

/* Pinned memory of device `dev`, no handle types, no size limit. */
static hipMemPoolProps device_pool_props(int dev)
{
    hipMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = hipMemAllocationTypePinned;
    props.handleTypes = hipMemHandleTypeNone;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = dev;
    return props;
}

TEST(hipMemPoolCreate_from_pool_and_destroy)
{
    hipMemPoolProps props = device_pool_props(0);
    hipMemPool_t p = NULL;
    HIP_OK(hipMemPoolCreate(&p, &props));
    const size_t n = 300 * KiB;
    void *a = NULL;
    HIP_OK(hipMallocFromPoolAsync(&a, n, p, NULL));
    HIP_OK(hipMemset(a, 0x19, n));
    check_dev_bytes(a, n, 0x19);
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemCurrent) == n);
    /* made current: hipMallocAsync draws from it */
    HIP_OK(hipDeviceSetMemPool(0, p));
    hipMemPool_t cur = NULL;
    HIP_OK(hipDeviceGetMemPool(&cur, 0));
    CHECK(cur == p);
    void *b = NULL;
    HIP_OK(hipMallocAsync(&b, n, NULL));
    CHECK(pool_u64(p, hipMemPoolAttrUsedMemCurrent) == 2 * n);
    HIP_OK(hipFreeAsync(a, NULL));
    HIP_OK(hipFreeAsync(b, NULL));
    /* access: own device read-write */
    hipMemLocation loc = {hipMemLocationTypeDevice, 0};
    hipMemAccessFlags f = hipMemAccessFlagsProtNone;
    HIP_OK(hipMemPoolGetAccess(&f, p, &loc));
    CHECK(f == hipMemAccessFlagsProtReadWrite);
    /* destroying the current pool puts the default back */
    HIP_OK(hipMemPoolDestroy(p));
    hipMemPool_t def = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&def, 0));
    HIP_OK(hipDeviceGetMemPool(&cur, 0));
    CHECK(cur == def);
    CHECK_HIP(hipMemPoolDestroy(p), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolDestroy(def), hipErrorInvalidValue);
    CHECK_HIP(hipMallocFromPoolAsync(&a, n, p, NULL), hipErrorInvalidValue);
}

TEST(hipMemPool_two_gpus)
{
    REQUIRE_GPUS(2);
    hipMemPool_t p1 = NULL, p0 = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&p1, 1));
    HIP_OK(hipDeviceGetDefaultMemPool(&p0, 0));
    CHECK(p0 != p1);
    CHECK_HIP(hipDeviceSetMemPool(0, p1), hipErrorInvalidDevice);
    /* a stream of device 1 allocates on device 1 */
    HIP_OK(hipSetDevice(1));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipSetDevice(0));
    void *a = NULL;
    HIP_OK(hipMallocAsync(&a, 1 * MiB, s));
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, a));
    CHECK(at.device == 1);
    void *src = dev_pattern(1 * MiB, 9);
    HIP_OK(hipMemcpyAsync(a, src, 1 * MiB, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(a, 1 * MiB, 9);
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemPoolTrimTo(p1, 0));
    HIP_OK(hipFree(src));
    /* access from device 1 to a device-0 pool */
    hipMemAccessDesc d = {{hipMemLocationTypeDevice, 1}, hipMemAccessFlagsProtReadWrite};
    HIP_OK(hipMemPoolSetAccess(p0, &d, 1));
    hipMemAccessFlags f = hipMemAccessFlagsProtNone;
    hipMemLocation loc = {hipMemLocationTypeDevice, 1};
    HIP_OK(hipMemPoolGetAccess(&f, p0, &loc));
    CHECK(f == hipMemAccessFlagsProtReadWrite);
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipSetDevice(0));
}

TEST(hipMallocAsync_mempool_negative)
{
    void *a = NULL;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipMallocAsync(NULL, 64, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMallocAsync(&a, 64, s), hipErrorInvalidHandle);
    a = (void *)1;
    HIP_OK(hipMallocAsync(&a, 0, NULL));
    CHECK(a == NULL);
    CHECK_HIP(hipMallocAsync(&a, SIZE_MAX, NULL), hipErrorOutOfMemory);
    CHECK_HIP(hipFreeAsync(NULL, NULL), hipErrorInvalidValue);
    int x;
    CHECK_HIP(hipFreeAsync(&x, NULL), hipErrorInvalidValue);
    /* hipMalloc memory is freed after the stream's work (clr falls back to hipFree) */
    void *m = NULL;
    HIP_OK(hipMalloc(&m, 4096));
    HIP_OK(hipFreeAsync(m, NULL));
    CHECK_HIP(hipFree(m), hipErrorInvalidValue);
    HIP_OK(hipMallocAsync(&a, 64, NULL));
    CHECK_HIP(hipFreeAsync(a, s), hipErrorInvalidHandle);
    HIP_OK(hipFreeAsync(a, NULL));

    hipMemPoolProps props;
    memset(&props, 0, sizeof props);
    hipMemPool_t p = NULL;
    CHECK_HIP(hipMemPoolCreate(&p, &props), hipErrorInvalidValue); /* allocType invalid */
    props.allocType = hipMemAllocationTypePinned;
    CHECK_HIP(hipMemPoolCreate(&p, &props), hipErrorInvalidValue); /* location none */
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 99;
    CHECK_HIP(hipMemPoolCreate(&p, &props), hipErrorInvalidValue);
    props.location.id = 0;
    CHECK_HIP(hipMemPoolCreate(NULL, &props), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolCreate(&p, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetDefaultMemPool(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetDefaultMemPool(&p, 99), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetMemPool(&p, 99), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetMemPool(0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolTrimTo(NULL, 0), hipErrorInvalidValue);
    HIP_OK(hipDeviceGetDefaultMemPool(&p, 0));
    hipMemAccessDesc d = {{hipMemLocationTypeDevice, 0}, hipMemAccessFlagsProtNone};
    CHECK_HIP(hipMemPoolSetAccess(p, &d, 1), hipErrorInvalidDevice);
    d.location.id = 99;
    d.flags = hipMemAccessFlagsProtReadWrite;
    CHECK_HIP(hipMemPoolSetAccess(p, &d, 1), hipErrorInvalidDevice);
    CHECK_HIP(hipMemPoolSetAccess(p, &d, 100), hipErrorInvalidDevice);
    CHECK_HIP(hipMemPoolSetAccess(p, NULL, 1), hipErrorInvalidValue);
    d.location.id = 0;
    d.location.type = hipMemLocationTypeHost;
    CHECK_HIP(hipMemPoolSetAccess(p, &d, 1), hipErrorInvalidValue);
    hipMemAccessFlags f;
    hipMemLocation loc = {hipMemLocationTypeDevice, 99};
    CHECK_HIP(hipMemPoolGetAccess(&f, p, &loc), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolGetAccess(NULL, p, &loc), hipErrorInvalidValue);
    int dummy = 0;
    HIP_OK(hipDeviceGetAttribute(&dummy, hipDeviceAttributeMemoryPoolsSupported, 0));
    CHECK(dummy == 1);
}

/* hipDeviceReset frees the pools' memory with every other allocation: the pools forget it and
 * hand out fresh, working memory afterwards (never a freed block). */
TEST(hipMallocAsync_after_device_reset)
{
    void *a = NULL, *b = NULL;
    HIP_OK(hipMallocAsync(&a, 1 * MiB, NULL));
    HIP_OK(hipMallocAsync(&b, 1 * MiB, NULL));
    HIP_OK(hipFreeAsync(b, NULL));
    HIP_OK(hipDeviceReset());
    hipMemPool_t p = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&p, 0));
    uint64_t used = 7;
    HIP_OK(hipMemPoolGetAttribute(p, hipMemPoolAttrReservedMemCurrent, &used));
    CHECK(used == 0);
    void *c = NULL;
    HIP_OK(hipMallocAsync(&c, 1 * MiB, NULL));
    size_t size = 0;
    HIP_OK(hipMemPtrGetInfo(c, &size));
    CHECK(size == 1 * MiB);
    HIP_OK(hipMemset(c, 0x61, 1 * MiB));
    check_dev_bytes(c, 1 * MiB, 0x61);
    HIP_OK(hipFreeAsync(c, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
}

/* Found by the fuzzer (reliability/fuzz.c): hipFree of a block already given back with
 * hipFreeAsync freed it under the pool, which then handed the freed memory out again (a
 * hipMemset of the next hipMallocAsync failed with hipErrorInvalidValue). Now the second free is
 * hipErrorInvalidValue and the pool keeps the block; hipFree of pool memory in use frees it and
 * the pool forgets it (its counters drop). */
TEST(hipFree_of_pool_memory)
{
    hipMemPool_t p = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&p, 0));
    HIP_OK(hipStreamSynchronize(NULL));
    HIP_OK(hipMemPoolTrimTo(p, 0));
    const size_t n = 1 * MiB;
    void *a = NULL;
    HIP_OK(hipMallocAsync(&a, n, NULL));
    HIP_OK(hipFreeAsync(a, NULL));
    CHECK_HIP(hipFree(a), hipErrorInvalidValue);
    void *b = NULL;
    HIP_OK(hipMallocAsync(&b, n, NULL));
    CHECK(b == a); /* the kept block, still valid memory */
    HIP_OK(hipMemset(b, 0x5a, n));
    check_dev_bytes(b, n, 0x5a);
    uint64_t used = 7, reserved = 7;
    HIP_OK(hipFree(b));
    HIP_OK(hipMemPoolGetAttribute(p, hipMemPoolAttrUsedMemCurrent, &used));
    HIP_OK(hipMemPoolGetAttribute(p, hipMemPoolAttrReservedMemCurrent, &reserved));
    CHECK(used == 0 && reserved == 0);
    CHECK_HIP(hipFreeAsync(b, NULL), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(NULL));
}

/* hip-tests Unit_hipFreeAsync_Negative_Parameters "Double free": a second hipFreeAsync of a block
 * its pool got back is hipErrorInvalidValue, and the pool keeps the block (it used to be freed
 * for real under the pool, which then handed out freed memory). */
TEST(hipFreeAsync_twice)
{
    hipMemPool_t p = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&p, 0));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    const size_t n = 1024;
    void *a = NULL, *b = NULL;
    HIP_OK(hipMallocAsync(&a, n, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipFreeAsync(a, s), hipErrorInvalidValue);
    HIP_OK(hipMallocAsync(&b, n, s));
    CHECK(b == a); /* the kept block, still valid memory */
    HIP_OK(hipMemsetAsync(b, 0x3c, n, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(b, n, 0x3c);
    HIP_OK(hipFreeAsync(b, s));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipMemPoolTrimTo(p, 0));
}

/* ROCm 7 clr hipMemPoolCreate: refused while this thread captures in Global or ThreadLocal mode
 * (clr tls.capture_streams_), the capture goes on; allowed in Relaxed mode and after the end. */
TEST(hipMemPoolCreate_during_capture)
{
    hipMemPoolProps props = device_pool_props(0);
    hipStream_t s = NULL;
    HIP_OK(hipStreamCreate(&s));
    hipMemPool_t p = NULL;
    const hipStreamCaptureMode modes[] = {hipStreamCaptureModeGlobal, hipStreamCaptureModeThreadLocal,
                                          hipStreamCaptureModeRelaxed};
    for (int i = 0; i < 3; i++) {
        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        if (modes[i] == hipStreamCaptureModeRelaxed) {
            HIP_OK(hipMemPoolCreate(&p, &props));
            HIP_OK(hipMemPoolDestroy(p));
        } else {
            CHECK_HIP(hipMemPoolCreate(&p, &props), hipErrorStreamCaptureUnsupported);
        }
        hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
        HIP_OK(hipStreamIsCapturing(s, &st));
        CHECK(st == hipStreamCaptureStatusActive);
        hipGraph_t g = NULL;
        HIP_OK(hipStreamEndCapture(s, &g));
        HIP_OK(hipGraphDestroy(g));
    }
    HIP_OK(hipMemPoolCreate(&p, &props));
    HIP_OK(hipMemPoolDestroy(p));
    HIP_OK(hipStreamDestroy(s));
}

/* ROCm 7 hipMemPoolProps::maxSize (hip-tests Unit_hipMemPoolCreate_With_maxSize /
 * _Without_maxSize, Unit_hipGetProcAddress_MemoryApisStreamOrderedMemory; clr
 * MemoryPool::AllocateMemory): a new block that would take the pool's reserved high-water mark
 * past maxSize is hipErrorOutOfMemory, even after a free and a trim; resetting
 * hipMemPoolAttrReservedMemHigh lets it grow again. 0 is no limit. */
TEST(hipMemPoolCreate_maxSize)
{
    CHECK(offsetof(hipMemPoolProps, maxSize) == 24);
    CHECK(sizeof(hipMemPoolProps) == 88);
    hipMemPoolProps props = device_pool_props(0);
    props.maxSize = 1 * MiB;
    hipStream_t s = NULL;
    HIP_OK(hipStreamCreate(&s));
    hipMemPool_t p = NULL;
    HIP_OK(hipMemPoolCreate(&p, &props));
    void *a = NULL, *b = (void *)0x1;
    HIP_OK(hipMallocFromPoolAsync(&a, 768 * KiB, p, s));
    CHECK_HIP(hipMallocFromPoolAsync(&b, 512 * KiB, p, s), hipErrorOutOfMemory);
    HIP_OK(hipMallocFromPoolAsync(&b, 256 * KiB, p, s)); /* exactly up to the limit */
    CHECK(pool_u64(p, hipMemPoolAttrReservedMemCurrent) <= 1 * MiB);
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipFreeAsync(b, s));
    HIP_OK(hipStreamSynchronize(s));
    /* the high-water mark counts, not what the pool holds: no new 1 MiB block after the frees,
     * while a kept block that fits is reused; after a trim, no new block at all */
    void *kept = a;
    CHECK_HIP(hipMallocFromPoolAsync(&a, 1 * MiB, p, s), hipErrorOutOfMemory);
    HIP_OK(hipMallocFromPoolAsync(&a, 512 * KiB, p, s));
    CHECK(a == kept);
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemPoolTrimTo(p, 0));
    CHECK(pool_u64(p, hipMemPoolAttrReservedMemCurrent) == 0);
    CHECK(pool_u64(p, hipMemPoolAttrReservedMemHigh) == 1 * MiB);
    CHECK_HIP(hipMallocFromPoolAsync(&a, 1 * MiB, p, s), hipErrorOutOfMemory);
    CHECK_HIP(hipMallocFromPoolAsync(&a, 4 * KiB, p, s), hipErrorOutOfMemory);
    /* a reset of the mark: a whole 1 MiB fits */
    uint64_t zero = 0;
    HIP_OK(hipMemPoolSetAttribute(p, hipMemPoolAttrReservedMemHigh, &zero));
    HIP_OK(hipMallocFromPoolAsync(&a, 1 * MiB, p, s));
    HIP_OK(hipMemsetAsync(a, 0x3c, 1 * MiB, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(a, 1 * MiB, 0x3c);
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemPoolDestroy(p));

    /* hip-tests Unit_hipGetProcAddress_MemoryApisStreamOrderedMemory: a 1024-byte pool is full
     * after 1024 bytes; the reserved bytes of the props are not looked at */
    memset(props.reserved, 0xa5, sizeof props.reserved);
    props.maxSize = 1024;
    HIP_OK(hipMemPoolCreate(&p, &props));
    HIP_OK(hipMallocFromPoolAsync(&a, 1024, p, s));
    size_t got = 0;
    HIP_OK(hipMemPtrGetInfo(a, &got));
    CHECK(got == 1024);
    CHECK_HIP(hipMallocFromPoolAsync(&b, 1, p, s), hipErrorOutOfMemory);
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipMemPtrGetInfo(a, &got), hipErrorInvalidValue);
    HIP_OK(hipMemPoolDestroy(p));

    /* hip-tests' figures: 1 GiB pool, 512 MiB then 513 MiB */
    size_t free_b = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free_b, &total));
    if (free_b >= 1100 * MiB) {
        props.maxSize = 1024 * MiB;
        HIP_OK(hipMemPoolCreate(&p, &props));
        HIP_OK(hipMallocFromPoolAsync(&a, 512 * MiB, p, s));
        CHECK_HIP(hipMallocFromPoolAsync(&b, 513 * MiB, p, s), hipErrorOutOfMemory);
        HIP_OK(hipMemPoolDestroy(p)); /* as hip-tests: with `a` still allocated */
        HIP_OK(hipMemsetAsync(a, 1, 512 * MiB, s));
        HIP_OK(hipFreeAsync(a, s));
        HIP_OK(hipStreamSynchronize(s));
        size_t free_after = 0;
        HIP_OK(hipMemGetInfo(&free_after, &total));
        CHECKF(free_after == free_b, "%zu B not given back", free_b - free_after);
    }
    /* no limit */
    props.maxSize = 0;
    HIP_OK(hipMemPoolCreate(&p, &props));
    HIP_OK(hipMallocFromPoolAsync(&a, 768 * KiB, p, s));
    HIP_OK(hipMallocFromPoolAsync(&b, 768 * KiB, p, s));
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipFreeAsync(b, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemPoolDestroy(p));
    /* the default pool's memory too: unknown to the pointer queries once freed */
    HIP_OK(hipMallocAsync(&a, 256, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemPtrGetInfo(a, &got));
    CHECK(got == 256);
    HIP_OK(hipFreeAsync(a, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipMemPtrGetInfo(a, &got), hipErrorInvalidValue);
    HIP_OK(hipStreamDestroy(s));
}
