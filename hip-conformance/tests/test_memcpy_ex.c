/*
 * The ROCm 7.1 copy and managed-memory entry points: hipMemcpy3DPeer(Async), hipMemcpyBatchAsync,
 * hipMemcpy3DBatchAsync (failIdx, nothing copied on a refused batch), hipMemAdvise_v2 and
 * hipMemPrefetchAsync_v2 (a hipMemLocation for a device ordinal).
 *
 * Expected behaviour: clr hip_peer.cpp (hipMemcpy3DPeer), hip_hmm.cpp (the _v2 calls); hip-tests
 * catch/unit/memory/hipMemcpyBatchAsync.cc (Unit_hipMemcpyBatchAsync_Negative, _Attrs_Negative);
 * CUDA's cudaMemcpyBatchAsync / cudaMemcpy3DBatchAsync for failIdx.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdint.h>

/* A W x H x D byte block at (x, y, z) of a pitched surface (pitch bytes a row, rows a slice). */
#define W 40
#define H 5
#define D 3

static size_t at(size_t pitch, size_t rows, size_t x, size_t y, size_t z) { return (z * rows + y) * pitch + x; }

TEST(memex_3d_peer_copy_between_two_devices)
{
    REQUIRE_GPUS(2);
    const size_t pitch = 64, rows = 8, slices = 4, n = pitch * rows * slices;
    void *src = NULL, *dst = NULL;
    HIP_OK(hipSetDevice(0));
    src = dev_pattern(n, 11);
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMalloc(&dst, n));
    HIP_OK(hipMemset(dst, 0x5a, n));
    HIP_OK(hipSetDevice(0));
    hipMemcpy3DPeerParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (hipPitchedPtr){src, pitch, pitch, rows};
    p.srcPos = (hipPos){3, 1, 1};
    p.srcDevice = 0;
    p.dstPtr = (hipPitchedPtr){dst, pitch, pitch, rows};
    p.dstPos = (hipPos){10, 2, 0};
    p.dstDevice = 1;
    p.extent = (hipExtent){W, H, D};
    HIP_OK(hipMemcpy3DPeer(&p));
    uint8_t *h = xmalloc(n), *want = xmalloc(n), *pat = xmalloc(n);
    pat_fill(pat, n, 11);
    memset(want, 0x5a, n);
    for (size_t z = 0; z < D; z++)
        for (size_t y = 0; y < H; y++)
            memcpy(want + at(pitch, rows, 10, 2 + y, z), pat + at(pitch, rows, 3, 1 + y, 1 + z), W);
    HIP_OK(hipMemcpy(h, dst, n, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, want, n) == 0);

    /* Back the other way, ordered on a stream of device 1. */
    hipStream_t s;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemset(src, 0, n));
    hipMemcpy3DPeerParms back = p;
    back.srcPtr = p.dstPtr;
    back.srcPos = p.dstPos;
    back.srcDevice = 1;
    back.dstPtr = p.srcPtr;
    back.dstPos = (hipPos){0, 0, 0};
    back.dstDevice = 0;
    HIP_OK(hipMemcpy3DPeerAsync(&back, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemcpy(h, src, n, hipMemcpyDeviceToHost));
    memset(want, 0, n);
    for (size_t z = 0; z < D; z++)
        for (size_t y = 0; y < H; y++)
            memcpy(want + at(pitch, rows, 0, y, z), pat + at(pitch, rows, 3, 1 + y, 1 + z), W);
    CHECK(memcmp(h, want, n) == 0);

    /* Errors (clr hipMemcpy3DPeer): nothing copied. */
    CHECK_HIP(hipMemcpy3DPeer(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy3DPeerAsync(NULL, s), hipErrorInvalidValue);
    hipMemcpy3DPeerParms bad = p;
    bad.srcDevice = hc_device_count();
    CHECK_HIP(hipMemcpy3DPeer(&bad), hipErrorInvalidDevice);
    bad = p;
    bad.dstDevice = -1;
    CHECK_HIP(hipMemcpy3DPeerAsync(&bad, s), hipErrorInvalidDevice);
    bad = p;
    bad.extent.width = pitch; /* past the row */
    CHECK_HIP(hipMemcpy3DPeer(&bad), hipErrorInvalidValue);
    HIP_OK(hipMemcpy(h, src, n, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, want, n) == 0);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(src));
    HIP_OK(hipFree(dst));
    free(h);
    free(want);
    free(pat);
}

TEST(memex_batch_copies_and_fail_index)
{
    const size_t n = 8 * KiB;
    void *d0 = dev_pattern(n, 21), *d1 = NULL, *d2 = NULL;
    HIP_OK(hipMalloc(&d1, n));
    HIP_OK(hipMalloc(&d2, n));
    HIP_OK(hipMemset(d1, 0, n));
    HIP_OK(hipMemset(d2, 0, n));
    uint8_t *h_src = xmalloc(n), *h_dst = xmalloc(n);
    pat_fill(h_src, n, 22);
    memset(h_dst, 0, n);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    /* D2D, H2D (pageable), D2H in one batch, two attribute ranges. */
    void *dsts[3] = {d1, d2, h_dst};
    void *srcs[3] = {d0, h_src, d0};
    size_t sizes[3] = {n, n, n / 2};
    hipMemcpyAttributes attrs[2];
    memset(attrs, 0, sizeof attrs);
    attrs[0].srcAccessOrder = hipMemcpySrcAccessOrderStream;
    attrs[1].srcAccessOrder = hipMemcpySrcAccessOrderDuringApiCall;
    attrs[1].flags = hipMemcpyFlagPreferOverlapWithCompute;
    size_t idxs[2] = {0, 1};
    size_t fail = 77;
    HIP_OK(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 2, &fail, s));
    /* DuringApiCall: the pageable source is read by now. */
    memset(h_src, 0, n);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(d1, n, 21);
    check_dev_pattern(d2, n, 22);
    CHECK_PATTERN(h_dst, n / 2, 21);
    CHECK_BYTES(h_dst + n / 2, n / 2, 0);

    /* A refused batch copies nothing; failIdx names the copy at fault (hip-tests
     * Unit_hipMemcpyBatchAsync_Negative) or SIZE_MAX. */
    HIP_OK(hipMemset(d1, 0, n));
    void *dd[3] = {d1, d2, d2};
    void *ss[3] = {d0, d0, d0};
    size_t sz[3] = {n, 0, n};
    fail = 77;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, NULL, NULL, 0, &fail, s), hipErrorInvalidValue);
    CHECK(fail == 1);
    sz[1] = n;
    ss[2] = NULL;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, NULL, NULL, 0, &fail, s), hipErrorInvalidValue);
    CHECK(fail == 2);
    ss[2] = (uint8_t *)d0 + 1; /* one byte past the allocation */
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, NULL, NULL, 0, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, NULL, NULL, 0, &fail, s), hipErrorInvalidValue);
    CHECK(fail == 2);
    ss[2] = d0;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 0, NULL, NULL, 0, &fail, s), hipErrorInvalidValue);
    CHECK(fail == SIZE_MAX);
    CHECK_HIP(hipMemcpyBatchAsync(NULL, ss, sz, 3, NULL, NULL, 0, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, NULL, sz, 3, NULL, NULL, 0, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, NULL, 3, NULL, NULL, 0, NULL, s), hipErrorInvalidValue);
    /* Attribute arrays (hip-tests Unit_hipMemcpyBatchAsync_Attrs_Negative). */
    size_t three[3] = {0, 1, 2};
    hipMemcpyAttributes a3[3];
    memset(a3, 0, sizeof a3);
    for (int i = 0; i < 3; i++)
        a3[i].srcAccessOrder = hipMemcpySrcAccessOrderAny;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, NULL, three, 1, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, NULL, 1, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 2, a3, three, 3, NULL, s), hipErrorInvalidValue);
    size_t nonzero[1] = {1}, flat[2] = {0, 0}, past[2] = {0, 3};
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, nonzero, 1, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, flat, 2, NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, past, 2, NULL, s), hipErrorInvalidValue);
    a3[1].srcAccessOrder = hipMemcpySrcAccessOrderInvalid;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, three, 3, &fail, s), hipErrorInvalidValue);
    CHECK(fail == 1);
    a3[1].srcAccessOrder = hipMemcpySrcAccessOrderStream;
    a3[2].flags = hipMemcpyFlagExtOpSwap;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, three, 3, NULL, s), hipErrorNotSupported);
    a3[2].flags = 0x40;
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, a3, three, 3, NULL, s), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d1, n, 0);
    /* A destroyed stream. */
    hipStream_t gone;
    HIP_OK(hipStreamCreate(&gone));
    HIP_OK(hipStreamDestroy(gone));
    CHECK_HIP(hipMemcpyBatchAsync(dd, ss, sz, 3, NULL, NULL, 0, &fail, gone), hipErrorContextIsDestroyed);
    CHECK(fail == SIZE_MAX);
    check_dev_bytes(d1, n, 0);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d0));
    HIP_OK(hipFree(d1));
    HIP_OK(hipFree(d2));
    free(h_src);
    free(h_dst);
}

static hipMemcpy3DOperand ptr_operand(void *p, size_t row, size_t layer)
{
    hipMemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = hipMemcpyOperandTypePointer;
    o.op.ptr.ptr = p;
    o.op.ptr.rowLength = row;
    o.op.ptr.layerHeight = layer;
    return o;
}

TEST(memex_3d_batch_pointers_and_arrays)
{
    const size_t pitch = 64, rows = 8, slices = 2, n = pitch * rows * slices;
    void *src = dev_pattern(n, 31), *dst = NULL;
    HIP_OK(hipMalloc(&dst, n));
    HIP_OK(hipMemset(dst, 0, n));
    uint8_t *host = xmalloc(n), *pat = xmalloc(n), *h = xmalloc(n);
    pat_fill(pat, n, 32);
    memcpy(host, pat, n);
    /* A 16 x 4 int array, written from host rows and read back into a device surface. */
    hipArray_t arr = NULL;
    HIP_ARRAY_DESCRIPTOR ad = {16, 4, HIP_AD_FORMAT_SIGNED_INT32, 1};
    HIP_OK(hipArrayCreate(&arr, &ad));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    hipMemcpy3DBatchOp ops[3];
    memset(ops, 0, sizeof ops);
    /* 0: device to device, a 32 x 8 x 2 block (rowLength/layerHeight from the surfaces). */
    ops[0].src = ptr_operand(src, pitch, rows);
    ops[0].dst = ptr_operand(dst, pitch, rows);
    ops[0].extent = (hipExtent){32, rows, slices};
    ops[0].srcAccessOrder = hipMemcpySrcAccessOrderStream;
    /* 1: pageable host rows (16 ints a row) into the array at element (2, 1). */
    ops[1].src = ptr_operand(host, 16, 4);
    ops[1].dst.type = hipMemcpyOperandTypeArray;
    ops[1].dst.op.array.array = arr;
    ops[1].dst.op.array.offset = (hipOffset3D){2, 1, 0};
    ops[1].extent = (hipExtent){8, 2, 1};
    ops[1].srcAccessOrder = hipMemcpySrcAccessOrderDuringApiCall;
    size_t fail = 5;
    HIP_OK(hipMemcpy3DBatchAsync(2, ops, &fail, 0, s));
    HIP_OK(hipStreamSynchronize(s));
    uint8_t *want = xmalloc(n), *devpat = xmalloc(n);
    pat_fill(devpat, n, 31);
    memset(want, 0, n);
    for (size_t z = 0; z < slices; z++)
        for (size_t y = 0; y < rows; y++)
            memcpy(want + at(pitch, rows, 0, y, z), devpat + at(pitch, rows, 0, y, z), 32);
    HIP_OK(hipMemcpy(h, dst, n, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, want, n) == 0);
    /* 2: the array back into a host buffer, rows of 16 ints. */
    int back[64];
    memset(back, 0, sizeof back);
    memset(&ops[2], 0, sizeof ops[2]);
    ops[2].src.type = hipMemcpyOperandTypeArray;
    ops[2].src.op.array.array = arr;
    ops[2].dst = ptr_operand(back, 16, 4);
    ops[2].extent = (hipExtent){16, 4, 1};
    ops[2].srcAccessOrder = hipMemcpySrcAccessOrderStream;
    HIP_OK(hipMemcpy3DBatchAsync(1, &ops[2], NULL, 0, s));
    HIP_OK(hipStreamSynchronize(s));
    const int *rows_in = (const int *)pat;
    for (int y = 1; y < 3; y++)
        for (int x = 2; x < 10; x++)
            CHECKF(back[y * 16 + x] == rows_in[(y - 1) * 16 + (x - 2)], "array element (%d, %d)", x, y);

    /* A refused operation anywhere: nothing copied, failIdx names it. */
    HIP_OK(hipMemset(dst, 0, n));
    hipMemcpy3DBatchOp two[2] = {ops[0], ops[0]};
    two[1].srcAccessOrder = hipMemcpySrcAccessOrderInvalid;
    CHECK_HIP(hipMemcpy3DBatchAsync(2, two, &fail, 0, s), hipErrorInvalidValue);
    CHECK(fail == 1);
    two[1] = ops[0];
    two[1].extent.width = pitch + 1; /* past the row */
    CHECK_HIP(hipMemcpy3DBatchAsync(2, two, &fail, 0, s), hipErrorInvalidValue);
    CHECK(fail == 1);
    two[1] = ops[1];
    two[1].dst.op.array.offset.x = 10; /* 10 + 8 > 16 elements */
    CHECK_HIP(hipMemcpy3DBatchAsync(2, two, &fail, 0, s), hipErrorInvalidValue);
    CHECK(fail == 1);
    two[1] = ops[0];
    two[1].src.type = (hipMemcpy3DOperandType)7;
    CHECK_HIP(hipMemcpy3DBatchAsync(2, two, &fail, 0, s), hipErrorInvalidValue);
    CHECK(fail == 1);
    two[0].flags = hipMemcpyFlagExtOpSwap;
    CHECK_HIP(hipMemcpy3DBatchAsync(2, two, &fail, 0, s), hipErrorNotSupported);
    CHECK(fail == 0);
    CHECK_HIP(hipMemcpy3DBatchAsync(1, ops, &fail, 1, s), hipErrorInvalidValue);
    CHECK(fail == SIZE_MAX);
    CHECK_HIP(hipMemcpy3DBatchAsync(0, ops, NULL, 0, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy3DBatchAsync(1, NULL, NULL, 0, s), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(dst, n, 0);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipArrayDestroy(arr));
    HIP_OK(hipFree(src));
    HIP_OK(hipFree(dst));
    free(host);
    free(pat);
    free(h);
    free(want);
    free(devpat);
}

TEST(memex_advise_and_prefetch_v2)
{
    const size_t n = 64 * KiB;
    void *m = NULL;
    HIP_OK(hipMallocManaged(&m, n, hipMemAttachGlobal));
    int v = 99;
    hipMemLocation dev0 = {hipMemLocationTypeDevice, 0}, host = {hipMemLocationTypeHost, 7};
    hipMemLocation numa = {hipMemLocationTypeHostNuma, 0}, bad = {(hipMemLocationType)9, 0};
    HIP_OK(hipMemAdvise_v2(m, n, hipMemAdviseSetPreferredLocation, dev0));
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributePreferredLocation, m, n));
    CHECK(v == 0);
    HIP_OK(hipMemAdvise_v2(m, n, hipMemAdviseSetPreferredLocation, host));
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributePreferredLocation, m, n));
    CHECK(v == hipCpuDeviceId);
    HIP_OK(hipMemAdvise_v2(m, n, hipMemAdviseSetAccessedBy, numa));
    CHECK_HIP(hipMemAdvise_v2(m, n, hipMemAdviseSetPreferredLocation, bad), hipErrorInvalidValue);
    hipMemLocation nodev = {hipMemLocationTypeDevice, hc_device_count()};
    CHECK_HIP(hipMemAdvise_v2(m, n, hipMemAdviseSetPreferredLocation, nodev), hipErrorInvalidDevice);
    CHECK_HIP(hipMemAdvise_v2(NULL, n, hipMemAdviseSetPreferredLocation, dev0), hipErrorInvalidValue);
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributePreferredLocation, m, n));
    CHECK(v == hipCpuDeviceId);

    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemPrefetchAsync_v2(m, n, dev0, 0, s));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributeLastPrefetchLocation, m, n));
    CHECK(v == 0);
    HIP_OK(hipMemPrefetchAsync_v2(m, n, host, 0, s));
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributeLastPrefetchLocation, m, n));
    CHECK(v == hipCpuDeviceId);
    CHECK_HIP(hipMemPrefetchAsync_v2(m, n, dev0, 1, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemPrefetchAsync_v2(m, n, bad, 0, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemPrefetchAsync_v2(m, n, nodev, 0, s), hipErrorInvalidDevice);
    CHECK_HIP(hipMemPrefetchAsync_v2(m, 0, dev0, 0, s), hipErrorInvalidValue);
    HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributeLastPrefetchLocation, m, n));
    CHECK(v == hipCpuDeviceId);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(m));
}
