/*
 * Copies: hipMemcpy of every kind (H2D, D2H, D2D, H2H, Default) with pageable
 * and hipHostMalloc host memory, unaligned sizes and offsets, 64 MiB copies,
 * hipMemcpyAsync on the null stream and on created streams, stream ordering,
 * null-stream semantics and copies between GPUs.
 *
 * Expected codes: hip-tests catch/include/memcpy1d_tests_common.hh,
 * catch/unit/memory/{hipMemcpyAsync,hipMemcpyAllApiNegative}.cc; clr
 * ihipMemcpy_validate (0 bytes succeed before any check, bad kind ->
 * hipErrorInvalidMemcpyDirection, size beyond the allocation -> InvalidValue).
 */
#define _GNU_SOURCE
#include "common.h"

enum host_kind { HOST_PAGEABLE, HOST_PINNED };

static void *host_alloc(enum host_kind k, size_t n)
{
    void *p = NULL;
    if (k == HOST_PINNED)
        HIP_OK(hipHostMalloc(&p, n ? n : 1, hipHostMallocDefault));
    else
        p = xmalloc(n);
    return p;
}

static void host_free(enum host_kind k, void *p)
{
    if (k == HOST_PINNED)
        HIP_OK(hipHostFree(p));
    else
        free(p);
}

static const char *host_name(enum host_kind k)
{
    return k == HOST_PINNED ? "pinned" : "pageable";
}

/*
 * H2D (kind h2d) from host+soff into dev+doff, D2D to a second device buffer,
 * D2H (kind d2h) back into another host buffer at offset; checks every byte
 * and that bytes around the destination ranges were not touched.
 */
static void roundtrip(enum host_kind hk, size_t n, size_t soff, size_t doff, hipMemcpyKind h2d,
                      hipMemcpyKind d2d, hipMemcpyKind d2h, hipStream_t s, int async)
{
    size_t guard = 64;
    uint8_t *src = host_alloc(hk, n + soff);
    uint8_t *dst = host_alloc(hk, n + soff + guard);
    uint8_t *d1 = NULL, *d2 = NULL;
    unsigned seed = (unsigned)(n * 31 + soff * 7 + doff);
    HIP_OK(hipMalloc((void **)&d1, n + doff + guard));
    HIP_OK(hipMalloc((void **)&d2, n + doff + guard));
    /* known background in both device buffers */
    HIP_OK(hipMemset(d1, 0xee, n + doff + guard));
    HIP_OK(hipMemset(d2, 0xdd, n + doff + guard));
    pat_fill(src + soff, n, seed);
    memset(dst, 0xcc, n + soff + guard);
    /* hipMemset of device memory returns once queued, and a non-blocking stream does not wait
     * for the null stream (README, ordering rules 2 and 5) */
    if (async)
        HIP_OK(hipStreamSynchronize(NULL));

    if (async) {
        HIP_OK(hipMemcpyAsync(d1 + doff, src + soff, n, h2d, s));
        HIP_OK(hipMemcpyAsync(d2 + doff, d1 + doff, n, d2d, s));
        HIP_OK(hipMemcpyAsync(dst + soff, d2 + doff, n, d2h, s));
        HIP_OK(hipStreamSynchronize(s));
    } else {
        HIP_OK(hipMemcpy(d1 + doff, src + soff, n, h2d));
        HIP_OK(hipMemcpy(d2 + doff, d1 + doff, n, d2d));
        HIP_OK(hipMemcpy(dst + soff, d2 + doff, n, d2h));
    }
    size_t bad = pat_mismatch(dst + soff, n, seed);
    CHECKF(bad == n,
           "%s %s n=%zu soff=%zu doff=%zu kinds %d/%d/%d: byte %zu is 0x%02x, expected 0x%02x",
           async ? "async" : "sync", host_name(hk), n, soff, doff, h2d, d2d, d2h, bad,
           bad < n ? dst[soff + bad] : 0, bad < n ? pat_byte(bad, seed) : 0);
    CHECK_BYTES(dst, soff, 0xcc);
    CHECK_BYTES(dst + soff + n, guard, 0xcc);

    /* bytes around the device destination are untouched */
    uint8_t *back = xmalloc(n + doff + guard);
    HIP_OK(hipMemcpy(back, d2, n + doff + guard, hipMemcpyDeviceToHost));
    CHECK_BYTES(back, doff, 0xdd);
    CHECK_BYTES(back + doff + n, guard, 0xdd);
    free(back);

    HIP_OK(hipFree(d1));
    HIP_OK(hipFree(d2));
    host_free(hk, src);
    host_free(hk, dst);
}

static const size_t odd_sizes[] = {1, 3, 255, 4095, 4096, 4097, 65537, 1 * MiB + 7};

TEST(hipMemcpy_explicit_kinds_pageable)
{
    for (size_t i = 0; i < sizeof(odd_sizes) / sizeof(odd_sizes[0]); i++)
        roundtrip(HOST_PAGEABLE, odd_sizes[i], 0, 0, hipMemcpyHostToDevice,
                  hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, NULL, 0);
}

TEST(hipMemcpy_explicit_kinds_pinned)
{
    for (size_t i = 0; i < sizeof(odd_sizes) / sizeof(odd_sizes[0]); i++)
        roundtrip(HOST_PINNED, odd_sizes[i], 0, 0, hipMemcpyHostToDevice,
                  hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, NULL, 0);
}

TEST(hipMemcpy_default_kind)
{
    for (size_t i = 0; i < sizeof(odd_sizes) / sizeof(odd_sizes[0]); i++) {
        roundtrip(HOST_PAGEABLE, odd_sizes[i], 0, 0, hipMemcpyDefault, hipMemcpyDefault,
                  hipMemcpyDefault, NULL, 0);
        roundtrip(HOST_PINNED, odd_sizes[i], 0, 0, hipMemcpyDefault, hipMemcpyDefault,
                  hipMemcpyDefault, NULL, 0);
    }
}

TEST(hipMemcpy_unaligned_offsets)
{
    const size_t offs[] = {1, 3, 5, 7, 13, 4093};
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
        for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j += 2) {
            roundtrip(HOST_PAGEABLE, 10000 + i, offs[i], offs[j], hipMemcpyHostToDevice,
                      hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, NULL, 0);
            roundtrip(HOST_PINNED, 777 + j, offs[j], offs[i], hipMemcpyDefault,
                      hipMemcpyDefault, hipMemcpyDefault, NULL, 0);
        }
}

TEST(hipMemcpy_64MiB)
{
    roundtrip(HOST_PAGEABLE, 64 * MiB, 0, 0, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice,
              hipMemcpyDeviceToHost, NULL, 0);
    roundtrip(HOST_PINNED, 64 * MiB + 3, 1, 5, hipMemcpyDefault, hipMemcpyDefault,
              hipMemcpyDefault, NULL, 0);
}

TEST(hipMemcpy_host_to_host)
{
    const hipMemcpyKind kinds[] = {hipMemcpyHostToHost, hipMemcpyDefault};
    for (int k = 0; k < 2; k++)
        for (int sk = 0; sk < 2; sk++)
            for (int dk = 0; dk < 2; dk++) {
                size_t n = 100003;
                uint8_t *s = host_alloc((enum host_kind)sk, n);
                uint8_t *d = host_alloc((enum host_kind)dk, n);
                pat_fill(s, n, 9);
                memset(d, 0, n);
                HIP_OK(hipMemcpy(d, s, n, kinds[k]));
                CHECK_PATTERN(d, n, 9);
                host_free((enum host_kind)sk, s);
                host_free((enum host_kind)dk, d);
            }
}

TEST(hipMemcpy_same_pointer)
{
    void *d = dev_pattern(4096, 4);
    HIP_OK(hipMemcpy(d, d, 2048, hipMemcpyDefault));
    HIP_OK(hipMemcpy(d, d, 4096, hipMemcpyDeviceToDevice));
    check_dev_pattern(d, 4096, 4);
    HIP_OK(hipFree(d));
}

TEST(hipMemcpy_zero_bytes)
{
    void *d = dev_pattern(4096, 6);
    uint8_t h[16];
    memset(h, 0x77, sizeof(h));
    /* clr: 0 bytes return hipSuccess before any argument check */
    HIP_OK(hipMemcpy(d, h, 0, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(h, d, 0, hipMemcpyDeviceToHost));
    HIP_OK(hipMemcpy(d, d, 0, hipMemcpyDeviceToDevice));
    HIP_OK(hipMemcpy(d, h, 0, hipMemcpyDefault));
    HIP_OK(hipMemcpy(NULL, NULL, 0, hipMemcpyDefault));
    HIP_OK(hipMemcpy(NULL, h, 0, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpyAsync(d, h, 0, hipMemcpyDefault, NULL));
    check_dev_pattern(d, 4096, 6); /* destination untouched */
    CHECK_BYTES(h, sizeof(h), 0x77);
    HIP_OK(hipFree(d));
}

TEST(hipMemcpy_null_pointers)
{
    void *d = NULL;
    uint8_t h[4096];
    HIP_OK(hipMalloc(&d, sizeof(h)));
    const hipMemcpyKind kinds[] = {hipMemcpyHostToDevice, hipMemcpyDeviceToHost,
                                   hipMemcpyDeviceToDevice, hipMemcpyHostToHost,
                                   hipMemcpyDefault};
    for (int k = 0; k < 5; k++) {
        CHECK_HIP(hipMemcpy(NULL, d, sizeof(h), kinds[k]), hipErrorInvalidValue);
        CHECK_HIP(hipMemcpy(d, NULL, sizeof(h), kinds[k]), hipErrorInvalidValue);
        CHECK_HIP(hipMemcpy(NULL, NULL, sizeof(h), kinds[k]), hipErrorInvalidValue);
        CHECK_HIP(hipMemcpy(NULL, h, sizeof(h), kinds[k]), hipErrorInvalidValue);
        CHECK_HIP(hipMemcpy(h, NULL, sizeof(h), kinds[k]), hipErrorInvalidValue);
    }
    HIP_OK(hipFree(d));
}

TEST(hipMemcpy_invalid_kind)
{
    void *d = dev_pattern(4096, 8);
    uint8_t h[4096];
    memset(h, 0x11, sizeof(h));
    CHECK_HIP(hipMemcpy(d, h, sizeof(h), (hipMemcpyKind)-1), hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpy(d, h, sizeof(h), (hipMemcpyKind)5), hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpy(h, d, sizeof(h), (hipMemcpyKind)0x1234), hipErrorInvalidMemcpyDirection);
    /* nothing was copied */
    check_dev_pattern(d, 4096, 8);
    CHECK_BYTES(h, sizeof(h), 0x11);
    HIP_OK(hipFree(d));
}

TEST(hipMemcpy_size_beyond_allocation)
{
    size_t n = 4096;
    void *d = dev_pattern(n, 10);
    uint8_t *h = xmalloc(2 * n);
    memset(h, 0x22, 2 * n);
    CHECK_HIP(hipMemcpy(d, h, n + 1, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy(h, d, n + 1, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy((char *)d + 1, h, n, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy(h, (char *)d + n - 8, 16, hipMemcpyDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAsync(d, h, 2 * n, hipMemcpyHostToDevice, NULL), hipErrorInvalidValue);
    check_dev_pattern(d, n, 10);
    CHECK_BYTES(h, 2 * n, 0x22);
    free(h);
    HIP_OK(hipFree(d));
}

TEST(hipMemcpy_freed_device_pointer)
{
    void *d = NULL, *live = dev_pattern(4096, 12);
    uint8_t h[4096];
    memset(h, 0x33, sizeof(h));
    HIP_OK(hipMalloc(&d, sizeof(h)));
    HIP_OK(hipFree(d));
    /* the freed range is no longer device memory: an explicit device kind is invalid */
    CHECK_HIP(hipMemcpy(d, h, sizeof(h), hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy(h, d, sizeof(h), hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_BYTES(h, sizeof(h), 0x33);
    check_dev_pattern(live, 4096, 12);
    HIP_OK(hipFree(live));
}

/* ---- hipMemcpyAsync -------------------------------------------------------- */

TEST(hipMemcpyAsync_null_stream_all_kinds)
{
    const size_t sizes[] = {1, 4097, 1 * MiB + 7};
    for (int i = 0; i < 3; i++) {
        roundtrip(HOST_PINNED, sizes[i], 0, 0, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice,
                  hipMemcpyDeviceToHost, NULL, 1);
        roundtrip(HOST_PAGEABLE, sizes[i], 3, 1, hipMemcpyDefault, hipMemcpyDefault,
                  hipMemcpyDefault, NULL, 1);
    }
}

TEST(hipMemcpyAsync_created_stream_all_kinds)
{
    hipStream_t s, nb;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    const size_t sizes[] = {1, 4097, 1 * MiB + 7, 64 * MiB};
    for (int i = 0; i < 4; i++) {
        roundtrip(HOST_PINNED, sizes[i], 0, 0, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice,
                  hipMemcpyDeviceToHost, s, 1);
        roundtrip(HOST_PAGEABLE, sizes[i], 5, 3, hipMemcpyHostToDevice,
                  hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost, s, 1);
        roundtrip(HOST_PINNED, sizes[i], 1, 0, hipMemcpyDefault, hipMemcpyDefault,
                  hipMemcpyDefault, nb, 1);
    }
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipStreamDestroy(nb));
}

TEST(hipMemcpyAsync_host_to_host)
{
    hipStream_t s;
    size_t n = 300001;
    uint8_t *a = xmalloc(n), *b = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipHostMalloc((void **)&b, n, hipHostMallocDefault));
    pat_fill(a, n, 14);
    HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyHostToHost, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_PATTERN(b, n, 14);
    HIP_OK(hipHostFree(b));
    HIP_OK(hipStreamDestroy(s));
    free(a);
}

TEST(hipMemcpyAsync_negative)
{
    hipStream_t s, dead;
    size_t n = 4096;
    void *d = dev_pattern(n, 15);
    void *h = NULL;
    HIP_OK(hipHostMalloc(&h, n, hipHostMallocDefault));
    memset(h, 0x44, n);
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));

    CHECK_HIP(hipMemcpyAsync(NULL, h, n, hipMemcpyHostToDevice, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAsync(d, NULL, n, hipMemcpyHostToDevice, s), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAsync(h, d, n, (hipMemcpyKind)-1, s), hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpyAsync(d, h, n, (hipMemcpyKind)-1, NULL),
              hipErrorInvalidMemcpyDirection);
    /* hip-tests Unit_hipMemcpyAsync_Negative_Parameters: destroyed stream */
    CHECK_HIP(hipMemcpyAsync(d, h, n, hipMemcpyHostToDevice, dead), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, dead), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemcpyAsync(h, d, n, hipMemcpyDefault, dead), hipErrorContextIsDestroyed);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(d, n, 15);
    CHECK_BYTES(h, n, 0x44);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipFree(d));
}

TEST(hipMemcpyAsync_in_order_on_one_stream)
{
    /* H2D A, D2D A->B, overwrite A, D2H B: B must hold the first contents */
    hipStream_t s;
    size_t n = 16 * MiB + 9;
    uint8_t *h = NULL, *out = NULL, *a = NULL, *b = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));
    HIP_OK(hipHostMalloc((void **)&out, n, hipHostMallocDefault));
    HIP_OK(hipMalloc((void **)&a, n));
    HIP_OK(hipMalloc((void **)&b, n));
    pat_fill(h, n, 16);
    memset(out, 0, n);
    for (int round = 0; round < 4; round++) {
        HIP_OK(hipMemcpyAsync(a, h, n, hipMemcpyHostToDevice, s));
        HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s));
        HIP_OK(hipMemsetAsync(a, 0, n, s));
        HIP_OK(hipMemcpyAsync(out, b, n, hipMemcpyDeviceToHost, s));
        HIP_OK(hipMemsetAsync(b, 0xff, n, s));
    }
    HIP_OK(hipStreamSynchronize(s));
    CHECK_PATTERN(out, n, 16);
    check_dev_bytes(a, n, 0);
    check_dev_bytes(b, n, 0xff);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipHostFree(out));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}

TEST(null_stream_waits_for_blocking_stream)
{
    /* legacy default stream: hipMemcpy (null stream) after work on a blocking
     * stream sees that work, with no explicit synchronisation */
    hipStream_t s;
    struct busy b = busy_begin();
    size_t n = 8 * MiB;
    uint8_t *d = NULL;
    uint8_t *h = xmalloc(n);
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMalloc((void **)&d, n));
    HIP_OK(hipMemset(d, 0, n));
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipMemsetAsync(d, 0x6b, n, s));
    HIP_OK(hipMemcpy(h, d, n, hipMemcpyDeviceToHost));
    CHECK_BYTES(h, n, 0x6b);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    free(h);
    busy_end(&b);
}

TEST(blocking_stream_waits_for_null_stream)
{
    hipStream_t s;
    struct busy b = busy_begin();
    size_t n = 8 * MiB;
    uint8_t *d = NULL, *h = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMalloc((void **)&d, n));
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));
    HIP_OK(hipMemset(d, 0, n));
    memset(h, 0, n);
    REQUIRE_BUSY(&b, NULL);
    HIP_OK(hipMemsetAsync(d, 0x2d, n, NULL));
    HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_BYTES(h, n, 0x2d);
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
    busy_end(&b);
}

TEST(hipMemcpyAsync_returns_before_completion)
{
    /* a device-to-device copy is asynchronous to the host */
    hipStream_t s;
    struct busy b = busy_begin();
    size_t n = 4 * MiB;
    void *x = dev_pattern(n, 17), *y = NULL;
    HIP_OK(hipMalloc(&y, n));
    HIP_OK(hipStreamCreate(&s));
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipMemcpyAsync(y, x, n, hipMemcpyDeviceToDevice, s));
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    check_dev_pattern(y, n, 17);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(x));
    HIP_OK(hipFree(y));
    busy_end(&b);
}

/* ---- between GPUs ---------------------------------------------------------- */

TEST(multigpu_hipMemcpy_device_to_device)
{
    REQUIRE_GPUS(2);
    const size_t sizes[] = {1, 4097, 3 * MiB + 1, 64 * MiB};
    const hipMemcpyKind kinds[] = {hipMemcpyDeviceToDevice, hipMemcpyDefault};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            size_t n = sizes[i];
            HIP_OK(hipSetDevice(0));
            void *a = dev_pattern(n, (unsigned)(30 + i));
            HIP_OK(hipSetDevice(1));
            void *b = NULL;
            HIP_OK(hipMalloc(&b, n));
            /* 0 -> 1 issued from device 1, then 1 -> 0 issued from device 0 */
            HIP_OK(hipMemcpy(b, a, n, kinds[k]));
            check_dev_pattern(b, n, (unsigned)(30 + i));
            HIP_OK(hipSetDevice(0));
            HIP_OK(hipMemset(a, 0, n));
            HIP_OK(hipMemcpy(a, b, n, kinds[k]));
            check_dev_pattern(a, n, (unsigned)(30 + i));
            HIP_OK(hipFree(a));
            HIP_OK(hipFree(b));
        }
}

TEST(multigpu_hipMemcpyAsync_streams_on_each_device)
{
    REQUIRE_GPUS(2);
    size_t n = 8 * MiB + 3;
    hipStream_t s0, s1;
    uint8_t *h = NULL;
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipStreamCreate(&s0));
    void *a = dev_pattern(n, 40);
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s1));
    void *b = NULL;
    HIP_OK(hipMalloc(&b, n));
    /* a stream of device 0 copies into device 1 memory, and back */
    HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s0));
    HIP_OK(hipStreamSynchronize(s0));
    HIP_OK(hipMemcpyAsync(h, b, n, hipMemcpyDeviceToHost, s1));
    HIP_OK(hipStreamSynchronize(s1));
    CHECK_PATTERN(h, n, 40);
    HIP_OK(hipStreamDestroy(s0));
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
    HIP_OK(hipHostFree(h));
}
