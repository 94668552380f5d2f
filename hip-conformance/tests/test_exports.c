/*
 * Entry points AMD's hip-tests call (issue 17): mipmapped arrays, hipStreamWaitValue/WriteValue,
 * hipExtMallocWithFlags, hipExtGetLinkTypeAndHopCount, hipDrvPointerGetAttributes,
 * hipMemAllocPitch, kernel node attributes, and sharing memory pools between processes.
 *
 * Expected codes: clr hip_memory.cpp (ihipMipmapArrayCreate, hipExtMallocWithFlags,
 * hipDrvPointerGetAttributes, hipMemAllocPitch), hip_stream_ops.cpp, hip_peer.cpp,
 * hip_graph.cpp / hip_graph_internal.hpp (GraphKernelNode::SetAttrParams), hip_mempool.cpp;
 * hip-tests catch/unit/memory/{hipMallocMipmappedArray,hipFreeMipmappedArray,
 * hipExtMallocWithFlags,hipDrvPtrGetAttributes,hipMemPool*ShareableHandle,hipMemPool*Pointer}.cc,
 * stream/hipStreamValue.cc, device/hipExtGetLinkTypeAndHopCount.cc,
 * graph/hipGraphKernelNode{Get,Set}Attribute.cc.
 */
#define _GNU_SOURCE
#include "common.h"
#include "proc.h"
#include "../fdpass.h"

#include <stdatomic.h>

/* ---- mipmapped arrays ------------------------------------------------------------------- */

TEST(mipmap_levels_extents_and_data)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    size_t free0 = 0, free1 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    hipMipmappedArray_t m = NULL;
    hipExtent e = {64, 40, 0};
    HIP_OK(hipMallocMipmappedArray(&m, &desc, e, 3, hipArrayDefault));
    REQUIRE(m != NULL);
    size_t want_w[3] = {64, 32, 16}, want_h[3] = {40, 20, 10};
    hipArray_t lv[3];
    for (unsigned l = 0; l < 3; l++) {
        HIP_OK(hipGetMipmappedArrayLevel(&lv[l], m, l));
        hipExtent got;
        unsigned fl = 99;
        HIP_OK(hipArrayGetInfo(NULL, &got, &fl, lv[l]));
        CHECK(got.width == want_w[l] && got.height == want_h[l] && got.depth == 0 && fl == 0);
    }
    CHECK(lv[0] != lv[1] && lv[1] != lv[2]);
    /* the same level twice: the same array */
    hipArray_t again;
    HIP_OK(hipGetMipmappedArrayLevel(&again, m, 1));
    CHECK(again == lv[1]);
    /* data round trip through level 1 (32 x 20 floats) */
    size_t row = 32 * sizeof(float), n = row * 20;
    uint8_t *h = xmalloc(n), *back = xmalloc(n);
    pat_fill(h, n, 7);
    memset(back, 0, n);
    HIP_OK(hipMemcpy2DToArray(lv[1], 0, 0, h, row, row, 20, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy2DFromArray(back, row, lv[1], 0, 0, row, 20, hipMemcpyDeviceToHost));
    CHECK_PATTERN(back, n, 7);
    /* level past the last; null arguments */
    hipArray_t x;
    CHECK_HIP(hipGetMipmappedArrayLevel(&x, m, 3), hipErrorInvalidValue);
    CHECK_HIP(hipGetMipmappedArrayLevel(NULL, m, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGetMipmappedArrayLevel(&x, NULL, 0), hipErrorInvalidResourceHandle);
    HIP_OK(hipFreeMipmappedArray(m));
    CHECK_HIP(hipFreeMipmappedArray(m), hipErrorContextIsDestroyed);
    CHECK_HIP(hipGetMipmappedArrayLevel(&x, m, 0), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipFreeMipmappedArray(NULL), hipErrorInvalidValue);
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECK(free1 == free0);
    free(h);
    free(back);
}

TEST(mipmap_negative)
{
    hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipMipmappedArray_t m = (hipMipmappedArray_t)0x1;
    hipExtent e = {6, 6, 6};
    /* 6 allows floor(log2(6)) + 1 = 3 levels */
    CHECK_HIP(hipMallocMipmappedArray(&m, &f, e, 4, hipArrayDefault), hipErrorInvalidValue);
    CHECK(m == NULL);
    CHECK_HIP(hipMallocMipmappedArray(NULL, &f, e, 1, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocMipmappedArray(&m, NULL, e, 1, hipArrayDefault), hipErrorInvalidValue);
    hipExtent zw = {0, 6, 6};
    CHECK_HIP(hipMallocMipmappedArray(&m, &f, zw, 1, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocMipmappedArray(&m, &f, e, 1, 0xDEADBEEF), hipErrorInvalidValue);
    CHECK_HIP(hipMallocMipmappedArray(&m, &f, e, 1, hipArrayCubemap), hipErrorInvalidValue);
    hipChannelFormatDesc bad = hipCreateChannelDesc(8, 16, 0, 0, hipChannelFormatKindSigned);
    CHECK_HIP(hipMallocMipmappedArray(&m, &bad, e, 1, hipArrayDefault), hipErrorInvalidValue);
    hipExtent huge = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    CHECK_HIP(hipMallocMipmappedArray(&m, &f, huge, 1, hipArrayDefault), hipErrorInvalidValue);
    /* the full chain is fine: 3 levels of 6, 3, 1 */
    HIP_OK(hipMallocMipmappedArray(&m, &f, e, 3, hipArrayDefault));
    hipArray_t l2;
    HIP_OK(hipGetMipmappedArrayLevel(&l2, m, 2));
    hipExtent got;
    HIP_OK(hipArrayGetInfo(NULL, &got, NULL, l2));
    CHECK(got.width == 1 && got.height == 1 && got.depth == 1);
    HIP_OK(hipFreeMipmappedArray(m));
}

/* ---- hipStreamWaitValue / hipStreamWriteValue --------------------------------------------- */

TEST(stream_write_value_roundtrip)
{
    int v = 0;
    HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeCanUseStreamWaitValue, 0));
    CHECK(v == 1);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    uint64_t *d = NULL;
    HIP_OK(hipMalloc((void **)&d, 64));
    HIP_OK(hipMemset(d, 0, 64));
    HIP_OK(hipStreamWriteValue32(s, d + 1, 0x70F0F0FFu, 0));
    HIP_OK(hipStreamWriteValue64(s, d + 3, 0x7FFF0000FFFF0000ull, 0));
    HIP_OK(hipStreamSynchronize(s));
    uint64_t back[8];
    HIP_OK(hipMemcpy(back, d, 64, hipMemcpyDeviceToHost));
    CHECK(back[0] == 0 && back[1] == 0x70F0F0FFu && back[2] == 0 && back[3] == 0x7FFF0000FFFF0000ull);
    /* pinned host memory: seen by the host */
    uint64_t *hp = NULL;
    HIP_OK(hipHostMalloc((void **)&hp, 16, 0));
    hp[0] = hp[1] = 0;
    HIP_OK(hipStreamWriteValue64(s, hp + 1, 0x1122334455667788ull, 0));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(hp[0] == 0 && hp[1] == 0x1122334455667788ull);
    /* errors: null, unknown memory, misaligned, one past the end, bad stream */
    uint64_t local = 0;
    CHECK_HIP(hipStreamWriteValue32(s, NULL, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWriteValue32(s, &local, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWriteValue64(s, (char *)d + 4, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWriteValue32(s, d + 8, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWriteValue32((hipStream_t)0xFFFF, d, 1, 0), hipErrorContextIsDestroyed);
    HIP_OK(hipMemcpy(back, d, 64, hipMemcpyDeviceToHost));
    CHECK(back[0] == 0);
    HIP_OK(hipHostFree(hp));
    HIP_OK(hipFree(d));
    HIP_OK(hipStreamDestroy(s));
}

/* Work after a wait runs only once the word passes: events before and after the wait, the
 * word written by the host. `wide`: a 64-bit compare over both halves (the host-polled path). */
static void wait_blocks_until(int wide)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    uint64_t *word = NULL, *out = NULL;
    HIP_OK(hipHostMalloc((void **)&word, 8, 0));
    HIP_OK(hipHostMalloc((void **)&out, 16, 0));
    *word = 0;
    out[0] = out[1] = 0;
    hipEvent_t before, after;
    HIP_OK(hipEventCreate(&before));
    HIP_OK(hipEventCreate(&after));
    HIP_OK(hipStreamWriteValue32(s, &out[0], 1, 0));
    HIP_OK(hipEventRecord(before, s));
    if (wide)
        HIP_OK(hipStreamWaitValue64(s, word, 0x100000002ull, hipStreamWaitValueGte, ~0ull));
    else
        HIP_OK(hipStreamWaitValue32(s, word, 0x11, hipStreamWaitValueEq, 0xFF));
    HIP_OK(hipStreamWriteValue32(s, &out[1], 2, 0));
    HIP_OK(hipEventRecord(after, s));
    HIP_OK(hipEventSynchronize(before));
    CHECK(out[0] == 1);
    CHECK_HIP(hipEventQuery(after), hipErrorNotReady);
    CHECK(out[1] == 0);
    /* a value that does not pass: still blocked (the masked byte differs / below) */
    atomic_store((_Atomic uint64_t *)word, wide ? 0xFFFFFFFFull : 0x1225);
    CHECK_HIP(hipEventQuery(after), hipErrorNotReady);
    CHECK(out[1] == 0);
    atomic_store((_Atomic uint64_t *)word, wide ? 0x100000002ull : 0xAB11);
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipEventQuery(after));
    CHECK(out[1] == 2);
    HIP_OK(hipEventDestroy(before));
    HIP_OK(hipEventDestroy(after));
    HIP_OK(hipHostFree(word));
    HIP_OK(hipHostFree(out));
    HIP_OK(hipStreamDestroy(s));
}

TEST(stream_wait_value32_blocks_until_equal)
{
    wait_blocks_until(0);
}

TEST(stream_wait_value64_both_halves)
{
    wait_blocks_until(1);
}

TEST(stream_wait_value_negative)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    uint64_t *hp = NULL;
    HIP_OK(hipHostMalloc((void **)&hp, 8, 0));
    *hp = 0;
    CHECK_HIP(hipStreamWaitValue32(s, NULL, 0, hipStreamWaitValueGte, ~0u), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWaitValue64(s, NULL, 0, hipStreamWaitValueGte, ~0ull), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWaitValue32(s, hp, 0, (unsigned)-1, ~0u), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWaitValue64(s, hp, 0, 4, ~0ull), hipErrorInvalidValue);
    CHECK_HIP(hipStreamWaitValue32((hipStream_t)0xFFFF, hp, 0, hipStreamWaitValueGte, ~0u),
              hipErrorContextIsDestroyed);
    /* nothing was queued by the failed calls: the stream is idle */
    HIP_OK(hipStreamQuery(s));
    /* a wait that passes at once (Gte 0) */
    HIP_OK(hipStreamWaitValue32(s, hp, 0, hipStreamWaitValueGte, ~0u));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipHostFree(hp));
    HIP_OK(hipStreamDestroy(s));
}

/* ---- hipExtMallocWithFlags ------------------------------------------------------------------ */

TEST(ext_malloc_with_flags)
{
    unsigned flags[] = {hipDeviceMallocDefault, hipDeviceMallocFinegrained, hipDeviceMallocUncached};
    for (unsigned i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        void *d = NULL;
        size_t n = 3 * MiB + 10;
        HIP_OK(hipExtMallocWithFlags(&d, n, flags[i]));
        REQUIRE(d != NULL);
        CHECK((uintptr_t)d % 256 == 0);
        uint8_t *h = xmalloc(n);
        pat_fill(h, n, 20 + i);
        HIP_OK(hipMemcpy(d, h, n, hipMemcpyHostToDevice));
        check_dev_pattern(d, n, 20 + i);
        hipPointerAttribute_t at;
        HIP_OK(hipPointerGetAttributes(&at, d));
        CHECK(at.type == hipMemoryTypeDevice && at.device == 0);
        HIP_OK(hipFree(d));
        free(h);
    }
    /* signal memory: 8 bytes the host reads and writes */
    uint64_t *sig = NULL;
    HIP_OK(hipExtMallocWithFlags((void **)&sig, 8, hipMallocSignalMemory));
    REQUIRE(sig != NULL);
    *sig = 5;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamWriteValue64(s, sig, 0xABCDEF0123ull, 0));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(*sig == 0xABCDEF0123ull);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(sig));
    /* zero size: null */
    void *z = (void *)0x1;
    HIP_OK(hipExtMallocWithFlags(&z, 0, hipDeviceMallocFinegrained));
    CHECK(z == NULL);
    void *p = NULL;
    CHECK_HIP(hipExtMallocWithFlags(&p, 16, hipMallocSignalMemory), hipErrorInvalidValue);
    CHECK_HIP(hipExtMallocWithFlags(&p, 0, hipMallocSignalMemory), hipErrorInvalidValue);
    /* Default | Signal is signal memory, which is 8 bytes; 5 and 0x10 are no flag value */
    CHECK_HIP(hipExtMallocWithFlags(&p, 4096, hipDeviceMallocDefault | hipMallocSignalMemory), hipErrorInvalidValue);
    CHECK_HIP(hipExtMallocWithFlags(&p, 4096, 5), hipErrorInvalidValue);
    CHECK_HIP(hipExtMallocWithFlags(&p, 4096, 0x10), hipErrorInvalidValue);
    CHECK_HIP(hipExtMallocWithFlags(NULL, 4096, hipDeviceMallocDefault), hipErrorInvalidValue);
    CHECK_HIP(hipExtMallocWithFlags(&p, SIZE_MAX, hipDeviceMallocDefault), hipErrorOutOfMemory);
    CHECK_HIP(hipExtMallocWithFlags(&p, SIZE_MAX, hipDeviceMallocFinegrained), hipErrorOutOfMemory);
}

/* ---- hipExtGetLinkTypeAndHopCount, hipDrvPointerGetAttributes, hipMemAllocPitch --------------- */

TEST(ext_link_type_and_hop_count)
{
    int n = hc_device_count();
    uint32_t t = 0, h = 0;
    CHECK_HIP(hipExtGetLinkTypeAndHopCount(0, 0, &t, &h), hipErrorInvalidValue);
    CHECK_HIP(hipExtGetLinkTypeAndHopCount(-1, 0, &t, &h), hipErrorInvalidValue);
    CHECK_HIP(hipExtGetLinkTypeAndHopCount(n, 0, &t, &h), hipErrorInvalidDevice);
    CHECK_HIP(hipExtGetLinkTypeAndHopCount(0, n, &t, &h), hipErrorInvalidDevice);
    CHECK_HIP(hipExtGetLinkTypeAndHopCount(0, 1, NULL, &h), hipErrorInvalidValue);
    CHECK_HIP(hipExtGetLinkTypeAndHopCount(0, 1, &t, NULL), hipErrorInvalidValue);
    REQUIRE_GPUS(2);
    uint32_t t2 = 0, h2 = 0;
    HIP_OK(hipExtGetLinkTypeAndHopCount(0, 1, &t, &h));
    HIP_OK(hipExtGetLinkTypeAndHopCount(1, 0, &t2, &h2));
    CHECK(t == t2 && h == h2 && h >= 1);
    int peer = 0;
    HIP_OK(hipDeviceCanAccessPeer(&peer, 0, 1));
    /* HSA_AMD_LINK_INFO_TYPE_PCIE 2 or _XGMI 4; a direct link is one hop */
    CHECK(t == 2 || t == 4);
    CHECK(peer ? h == 1 : h == 2);
}

TEST(drv_pointer_get_attributes)
{
    size_t n = 1000 * sizeof(int);
    int *d = NULL;
    HIP_OK(hipMalloc((void **)&d, n));
    unsigned type = 0, size = 0;
    int ord = -1;
    void *dp = NULL, *start = NULL;
    hipPointer_attribute at[] = {HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, HIP_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR};
    void *data[] = {&type, &ord, &dp, &size, &start};
    HIP_OK(hipDrvPointerGetAttributes(5, at, data, (hipDeviceptr_t)(d + 100)));
    CHECK(type == hipMemoryTypeDevice && ord == 0 && dp == d + 100 && size == n && start == d);
    /* errors of single attributes are ignored: HOST_POINTER of device memory is null */
    void *hp = (void *)0x1;
    hipPointer_attribute at2[] = {HIP_POINTER_ATTRIBUTE_HOST_POINTER, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data2[] = {&hp, &ord};
    HIP_OK(hipDrvPointerGetAttributes(2, at2, data2, (hipDeviceptr_t)d));
    CHECK(hp == NULL && ord == 0);
    CHECK_HIP(hipDrvPointerGetAttributes(0, at, data, (hipDeviceptr_t)d), hipErrorInvalidValue);
    CHECK_HIP(hipDrvPointerGetAttributes(2, NULL, data, (hipDeviceptr_t)d), hipErrorInvalidValue);
    CHECK_HIP(hipDrvPointerGetAttributes(2, at, NULL, (hipDeviceptr_t)d), hipErrorInvalidValue);
    CHECK_HIP(hipDrvPointerGetAttributes(2, at, data, (hipDeviceptr_t)0), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
}

TEST(mem_alloc_pitch)
{
    hipDeviceptr_t p = 0;
    size_t pitch = 0;
    HIP_OK(hipMemAllocPitch(&p, &pitch, 100, 7, 4));
    CHECK(p != 0 && pitch >= 100 && pitch % 256 == 0);
    size_t base = 0, sz = 0;
    HIP_OK(hipMemGetAddressRange((hipDeviceptr_t *)&base, &sz, p));
    CHECK(base == (size_t)p && sz == pitch * 7);
    HIP_OK(hipFree((void *)p));
    CHECK_HIP(hipMemAllocPitch(&p, &pitch, 100, 7, 2), hipErrorInvalidValue);
    CHECK_HIP(hipMemAllocPitch(&p, &pitch, 0, 7, 4), hipErrorInvalidValue);
    CHECK_HIP(hipMemAllocPitch(&p, &pitch, 100, 0, 8), hipErrorInvalidValue);
    CHECK_HIP(hipMemAllocPitch(NULL, &pitch, 100, 7, 16), hipErrorInvalidValue);
}

/* ---- memory pools shared between processes ----------------------------------------------------- */

#define POOL_N (2 * MiB + 4096)

static void sync_byte_send(int sock)
{
    char b = 's';
    REQUIRE(write(sock, &b, 1) == 1);
}

static void sync_byte_recv(int sock)
{
    char b = 0;
    REQUIRE(read(sock, &b, 1) == 1);
}

/* The importer: gets the pool's fd and a pointer export, checks pattern 41, writes 42. */
static void pool_importer(int sock, void *arg)
{
    (void)arg;
    int fd = -1;
    REQUIRE(fdpass_recv(sock, &fd, 1));
    hipMemPoolPtrExportData ex;
    xrecv(sock, &ex, sizeof ex);
    hipMemPool_t pool = NULL;
    HIP_OK(hipMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
    int ndev = hc_device_count();
    for (int d = 0; d < ndev; d++) {
        hipMemAccessFlags f = hipMemAccessFlagsProtNone;
        hipMemLocation loc = {hipMemLocationTypeDevice, d};
        HIP_OK(hipMemPoolGetAccess(&f, pool, &loc));
        CHECK(f == hipMemAccessFlagsProtReadWrite);
    }
    void *p = NULL;
    HIP_OK(hipMemPoolImportPointer(&p, pool, &ex));
    REQUIRE(p != NULL);
    /* a second import is the same pointer; each import is closed by one hipFree */
    void *p2 = NULL;
    HIP_OK(hipMemPoolImportPointer(&p2, pool, &ex));
    CHECK(p2 == p);
    HIP_OK(hipFree(p2));
    check_dev_pattern(p, POOL_N, 41);
    uint8_t *h = xmalloc(POOL_N);
    pat_fill(h, POOL_N, 42);
    HIP_OK(hipMemcpy(p, h, POOL_N, hipMemcpyHostToDevice));
    free(h);
    /* the pool goes first: its import stays until hipFree */
    HIP_OK(hipMemPoolDestroy(pool));
    check_dev_pattern(p, POOL_N, 42);
    HIP_OK(hipFree(p));
    /* freed: the pointer is gone here */
    hipPointerAttribute_t at;
    CHECK_HIP(hipPointerGetAttributes(&at, p), hipErrorInvalidValue);
    CHECK_HIP(hipFree(p), hipErrorInvalidValue);
    close(fd);
    sync_byte_send(sock);
}

TEST(mempool_export_import_two_processes)
{
    struct peer imp = spawn(pool_importer, NULL);
    hipMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = hipMemAllocationTypePinned;
    props.handleTypes = hipMemHandleTypePosixFileDescriptor;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;
    hipMemPool_t pool = NULL;
    HIP_OK(hipMemPoolCreate(&pool, &props));
    int ndev = hc_device_count();
    for (int d = 0; d < ndev; d++) {
        hipMemAccessDesc a = {{hipMemLocationTypeDevice, d}, hipMemAccessFlagsProtReadWrite};
        HIP_OK(hipMemPoolSetAccess(pool, &a, 1));
    }
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    void *p = NULL;
    HIP_OK(hipMallocFromPoolAsync(&p, POOL_N, pool, s));
    uint8_t *h = xmalloc(POOL_N);
    pat_fill(h, POOL_N, 41);
    HIP_OK(hipMemcpyAsync(p, h, POOL_N, hipMemcpyHostToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    int fd = -1, fd2 = -1;
    HIP_OK(hipMemPoolExportToShareableHandle(&fd, pool, hipMemHandleTypePosixFileDescriptor, 0));
    REQUIRE(fd >= 0);
    /* the same fd on a second export */
    HIP_OK(hipMemPoolExportToShareableHandle(&fd2, pool, hipMemHandleTypePosixFileDescriptor, 0));
    CHECK(fd2 == fd);
    hipMemPoolPtrExportData ex;
    HIP_OK(hipMemPoolExportPointer(&ex, p));
    REQUIRE(fdpass_send(imp.fd, &fd, 1));
    xsend(imp.fd, &ex, sizeof ex);
    sync_byte_recv(imp.fd);
    join(&imp, "importer");
    check_dev_pattern(p, POOL_N, 42);
    /* in the exporting process, an import of its own pointer is that pointer */
    hipMemPool_t self = NULL;
    HIP_OK(hipMemPoolImportFromShareableHandle(&self, (void *)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor, 0));
    void *q = NULL;
    HIP_OK(hipMemPoolImportPointer(&q, self, &ex));
    CHECK(q == p);
    HIP_OK(hipMemPoolDestroy(self));
    HIP_OK(hipFreeAsync(p, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipMemPoolDestroy(pool));
    free(h);
}

TEST(mempool_export_negative)
{
    hipMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;
    hipMemPool_t none = NULL, pfd = NULL;
    HIP_OK(hipMemPoolCreate(&none, &props));
    props.handleTypes = hipMemHandleTypePosixFileDescriptor;
    HIP_OK(hipMemPoolCreate(&pfd, &props));
    int fd = -1;
    CHECK_HIP(hipMemPoolExportToShareableHandle(NULL, pfd, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolExportToShareableHandle(&fd, NULL, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolExportToShareableHandle(&fd, pfd, hipMemHandleTypeNone, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolExportToShareableHandle(&fd, pfd, hipMemHandleTypePosixFileDescriptor, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolExportToShareableHandle(&fd, none, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK(fd == -1);
    hipMemPool_t imp = NULL;
    CHECK_HIP(hipMemPoolImportFromShareableHandle(NULL, (void *)3, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolImportFromShareableHandle(&imp, NULL, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolImportFromShareableHandle(&imp, (void *)3, hipMemHandleTypeNone, 0), hipErrorInvalidValue);
    /* an fd that is no pool's handle: clr's Import fails → hipErrorOutOfMemory */
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    CHECK_HIP(hipMemPoolImportFromShareableHandle(&imp, (void *)(uintptr_t)fds[0], hipMemHandleTypePosixFileDescriptor, 0),
              hipErrorOutOfMemory);
    close(fds[0]);
    close(fds[1]);
    hipMemPoolPtrExportData ex;
    int local = 0;
    CHECK_HIP(hipMemPoolExportPointer(NULL, &local), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolExportPointer(&ex, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolExportPointer(&ex, &local), hipErrorOutOfMemory);
    void *q = NULL;
    memset(&ex, 0x5a, sizeof ex);
    CHECK_HIP(hipMemPoolImportPointer(&q, pfd, &ex), hipErrorOutOfMemory);
    CHECK_HIP(hipMemPoolImportPointer(NULL, pfd, &ex), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolImportPointer(&q, NULL, &ex), hipErrorInvalidValue);
    CHECK_HIP(hipMemPoolImportPointer(&q, pfd, NULL), hipErrorInvalidValue);
    HIP_OK(hipMemPoolDestroy(none));
    HIP_OK(hipMemPoolDestroy(pfd));
}
