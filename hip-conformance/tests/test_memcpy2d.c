/*
 * Pitched memory: hipMallocPitch, hipMalloc3D, hipMemcpy2D(Async), hipMemcpy3D(Async),
 * hipMemset2D(Async), hipMemset3D(Async), with data round trips through every memory kind, wide
 * pitches (the SDMA sub-window packet's fallback), two GPUs, and the negative matrices.
 *
 * Expected codes: hip-tests catch/unit/memory/{hipMallocPitch,hipMemcpy2D,hipMemcpy3D,
 * hipMemsetNegative}.cc; clr hip_memory.cpp (ihipMallocPitch, hipMemcpy2D_common,
 * ihipMemcpy3D_validate).
 */
#define _GNU_SOURCE
#include "common.h"

/* Byte (x, y, z) of a test volume. */
static uint8_t vol(size_t x, size_t y, size_t z, unsigned seed)
{
    return (uint8_t)(x * 7 + y * 131 + z * 29 + seed * 17);
}

/* A host surface of `pitch` × `rows` × `slices` bytes: the block [w × h × d] holds vol(), the rest
 * `fill`. */
static uint8_t *host_surface(size_t pitch, size_t rows, size_t slices, size_t w, size_t h, size_t d,
                             unsigned seed, uint8_t fill)
{
    uint8_t *p = xmalloc(pitch * rows * slices);
    memset(p, fill, pitch * rows * slices);
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                p[z * pitch * rows + y * pitch + x] = vol(x, y, z, seed);
    return p;
}

/* Counts bytes of a host surface that differ from host_surface()'s. */
static size_t surface_mismatch(const uint8_t *p, size_t pitch, size_t rows, size_t slices, size_t w,
                               size_t h, size_t d, unsigned seed, uint8_t fill)
{
    size_t bad = 0;
    for (size_t z = 0; z < slices; z++)
        for (size_t y = 0; y < rows; y++)
            for (size_t x = 0; x < pitch; x++) {
                uint8_t want = (x < w && y < h && z < d) ? vol(x, y, z, seed) : fill;
                bad += p[z * pitch * rows + y * pitch + x] != want;
            }
    return bad;
}

TEST(hipMallocPitch_pitch_and_size)
{
    const size_t widths[] = {1, 255, 256, 257, 1000, 70000};
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        void *p = NULL;
        size_t pitch = 0;
        HIP_OK(hipMallocPitch(&p, &pitch, widths[i], 5));
        CHECK(pitch >= widths[i] && pitch % 256 == 0 && pitch < widths[i] + 256);
        void *base = NULL;
        size_t size = 0;
        HIP_OK(hipMemGetAddressRange(&base, &size, (char *)p + 3));
        CHECK(base == p && size == pitch * 5);
        HIP_OK(hipFree(p));
    }
    hipPitchedPtr pp;
    HIP_OK(hipMalloc3D(&pp, (hipExtent){300, 4, 3}));
    CHECK(pp.pitch == 512 && pp.xsize == 300 && pp.ysize == 4 && pp.ptr != NULL);
    size_t size = 0;
    HIP_OK(hipMemPtrGetInfo(pp.ptr, &size));
    CHECK(size == 512 * 4 * 3);
    HIP_OK(hipFree(pp.ptr));
}

TEST(hipMallocPitch_negative)
{
    void *p = (void *)1;
    size_t pitch = 0;
    CHECK_HIP(hipMallocPitch(NULL, &pitch, 1, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMallocPitch(&p, NULL, 1, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMallocPitch(&p, &pitch, SIZE_MAX, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMallocPitch(&p, &pitch, 1, SIZE_MAX), hipErrorOutOfMemory);
    HIP_OK(hipMallocPitch(&p, &pitch, 0, 5));
    CHECK(p == NULL);
    p = (void *)1;
    HIP_OK(hipMallocPitch(&p, &pitch, 5, 0));
    CHECK(p == NULL);
    hipPitchedPtr pp;
    CHECK_HIP(hipMalloc3D(NULL, (hipExtent){1, 1, 1}), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc3D(&pp, (hipExtent){SIZE_MAX, 1, 1}), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc3D(&pp, (hipExtent){1, SIZE_MAX, 1}), hipErrorOutOfMemory);
    CHECK_HIP(hipMalloc3D(&pp, (hipExtent){1, 1, SIZE_MAX}), hipErrorOutOfMemory);
    CHECK_HIP(hipMalloc3D(&pp, (hipExtent){SIZE_MAX, SIZE_MAX, SIZE_MAX}), hipErrorInvalidValue);
}

/* Host (pageable) → pitched device → a second pitched device (other pitch) → pinned host with a
 * pitch of its own, for widths that exercise odd bytes, whole dwords and 16-byte elements. */
TEST(hipMemcpy2D_roundtrip_all_kinds)
{
    const size_t widths[] = {1, 13, 64, 300, 4096};
    const size_t h = 37;
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        size_t w = widths[i], hp = w + 5, pinned_pitch = w + 64;
        uint8_t *src = host_surface(hp, h, 1, w, h, 1, (unsigned)i, 0);
        void *d1 = NULL, *d2 = NULL;
        size_t p1 = 0, p2 = 0;
        HIP_OK(hipMallocPitch(&d1, &p1, w, h));
        HIP_OK(hipMallocPitch(&d2, &p2, w + 300, h));
        uint8_t *out = NULL;
        HIP_OK(hipHostMalloc((void **)&out, pinned_pitch * h, 0));
        memset(out, 0xcd, pinned_pitch * h);
        HIP_OK(hipMemcpy2D(d1, p1, src, hp, w, h, hipMemcpyHostToDevice));
        HIP_OK(hipMemcpy2D(d2, p2, d1, p1, w, h, hipMemcpyDeviceToDevice));
        HIP_OK(hipMemcpy2D(out, pinned_pitch, d2, p2, w, h, hipMemcpyDeviceToHost));
        CHECKF(surface_mismatch(out, pinned_pitch, h, 1, w, h, 1, (unsigned)i, 0xcd) == 0, "width %zu",
               w);
        /* back to pageable with hipMemcpyDefault */
        uint8_t *back = xmalloc(hp * h);
        memset(back, 0, hp * h);
        HIP_OK(hipMemcpy2D(back, hp, out, pinned_pitch, w, h, hipMemcpyDefault));
        CHECK(surface_mismatch(back, hp, h, 1, w, h, 1, (unsigned)i, 0) == 0);
        free(back);
        free(src);
        HIP_OK(hipHostFree(out));
        HIP_OK(hipFree(d1));
        HIP_OK(hipFree(d2));
    }
}

/* A pitch the sub-window packet cannot express (over 2^14 elements): the per-row fallback. And
 * the async variant on a created stream. */
TEST(hipMemcpy2DAsync_wide_pitch)
{
    const size_t w = 100, h = 9, pitch = 1 * MiB + 4;
    uint8_t *src = host_surface(w, h, 1, w, h, 1, 5, 0);
    void *wide = NULL, *narrow = NULL;
    HIP_OK(hipMalloc(&wide, pitch * h));
    HIP_OK(hipMalloc(&narrow, w * h));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemcpy2DAsync(wide, pitch, src, w, w, h, hipMemcpyHostToDevice, s));
    HIP_OK(hipMemcpy2DAsync(narrow, w, wide, pitch, w, h, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    uint8_t *out = xmalloc(w * h);
    HIP_OK(hipMemcpy(out, narrow, w * h, hipMemcpyDeviceToHost));
    CHECK(surface_mismatch(out, w, h, 1, w, h, 1, 5, 0) == 0);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(wide));
    HIP_OK(hipFree(narrow));
    free(src);
    free(out);
}

TEST(hipMemcpy2D_two_gpus)
{
    REQUIRE_GPUS(2);
    const size_t w = 333, h = 21;
    uint8_t *src = host_surface(w, h, 1, w, h, 1, 8, 0);
    void *a = NULL, *b = NULL;
    size_t pa = 0, pb = 0;
    HIP_OK(hipMallocPitch(&a, &pa, w, h));
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMallocPitch(&b, &pb, w + 1000, h));
    HIP_OK(hipMemcpy2D(a, pa, src, w, w, h, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy2D(b, pb, a, pa, w, h, hipMemcpyDeviceToDevice));
    uint8_t *out = xmalloc(w * h);
    HIP_OK(hipMemcpy2D(out, w, b, pb, w, h, hipMemcpyDeviceToHost));
    CHECK(surface_mismatch(out, w, h, 1, w, h, 1, 8, 0) == 0);
    HIP_OK(hipFree(b));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipFree(a));
    free(src);
    free(out);
}

TEST(hipMemcpy2D_negative)
{
    const size_t w = 64, h = 4;
    void *d = NULL;
    size_t pitch = 0;
    HIP_OK(hipMallocPitch(&d, &pitch, w, h));
    uint8_t *hbuf = xmalloc(pitch * h);
    int maxp = 0;
    HIP_OK(hipDeviceGetAttribute(&maxp, hipDeviceAttributeMaxPitch, 0));
    const hipMemcpyKind k = hipMemcpyHostToDevice;
    CHECK_HIP(hipMemcpy2D(NULL, pitch, hbuf, pitch, w, h, k), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2D(d, pitch, NULL, pitch, w, h, k), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2D(d, w - 1, hbuf, pitch, w, h, k), hipErrorInvalidPitchValue);
    CHECK_HIP(hipMemcpy2D(d, pitch, hbuf, w - 1, w, h, k), hipErrorInvalidPitchValue);
    CHECK_HIP(hipMemcpy2D(d, (size_t)maxp + 1, hbuf, pitch, w, h, k), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2D(d, pitch, hbuf, (size_t)maxp + 1, w, h, k), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2D(d, pitch, hbuf, pitch, w, h, (hipMemcpyKind)7), hipErrorInvalidMemcpyDirection);
    /* one row too many runs past the allocation: nothing is copied */
    CHECK_HIP(hipMemcpy2D(d, pitch, hbuf, pitch, w, h + 1, k), hipErrorInvalidValue);
    /* zero extents succeed, even with null pointers */
    HIP_OK(hipMemcpy2D(NULL, pitch, NULL, pitch, 0, h, k));
    HIP_OK(hipMemcpy2D(d, pitch, hbuf, pitch, w, 0, k));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipMemcpy2DAsync(d, pitch, hbuf, pitch, w, h, k, s), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
    free(hbuf);
}

/* make_hipPitchedPtr (an inline of AMD's header, not an export). */
static hipPitchedPtr pptr(void *d, size_t pitch, size_t xsize, size_t ysize)
{
    hipPitchedPtr p = {d, pitch, xsize, ysize};
    return p;
}

static hipMemcpy3DParms parms3d(void)
{
    hipMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    return p;
}

/* A 3D block at offsets inside two 3D allocations (sub-window packets across slices), then out to
 * pageable host memory, both with hipMemcpy3D and hipMemcpy3DAsync. */
TEST(hipMemcpy3D_offsets_roundtrip)
{
    const size_t W = 200, H = 12, D = 5;  /* the source volume */
    const size_t w = 150, h = 7, d = 3;   /* the block */
    uint8_t *src = host_surface(W, H, D, W, H, D, 2, 0);
    hipPitchedPtr a, b;
    HIP_OK(hipMalloc3D(&a, (hipExtent){W, H, D}));
    HIP_OK(hipMalloc3D(&b, (hipExtent){w + 40, h + 3, d + 1}));
    HIP_OK(hipMemset3D(b, 0x77, (hipExtent){w + 40, h + 3, d + 1}));
    hipMemcpy3DParms p = parms3d();
    p.srcPtr = pptr(src, W, W, H);
    p.dstPtr = a;
    p.extent = (hipExtent){W, H, D};
    p.kind = hipMemcpyHostToDevice;
    HIP_OK(hipMemcpy3D(&p));
    /* a[(3..3+w, 2..2+h, 1..1+d)] → b at (5, 1, 0) */
    p = parms3d();
    p.srcPtr = a;
    p.srcPos = (hipPos){3, 2, 1};
    p.dstPtr = b;
    p.dstPos = (hipPos){5, 1, 0};
    p.extent = (hipExtent){w, h, d};
    p.kind = hipMemcpyDeviceToDevice;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemcpy3DAsync(&p, s));
    HIP_OK(hipStreamSynchronize(s));
    /* b, whole, back to the host */
    size_t bw = w + 40, bh = h + 3, bd = d + 1;
    uint8_t *out = xmalloc(bw * bh * bd);
    p = parms3d();
    p.srcPtr = b;
    p.dstPtr = pptr(out, bw, bw, bh);
    p.extent = (hipExtent){bw, bh, bd};
    p.kind = hipMemcpyDeviceToHost;
    HIP_OK(hipMemcpy3D(&p));
    size_t bad = 0;
    for (size_t z = 0; z < bd; z++)
        for (size_t y = 0; y < bh; y++)
            for (size_t x = 0; x < bw; x++) {
                int in = x >= 5 && x < 5 + w && y >= 1 && y < 1 + h && z < d;
                uint8_t want = in ? vol(x - 5 + 3, y - 1 + 2, z + 1, 2) : 0x77;
                bad += out[(z * bh + y) * bw + x] != want;
            }
    CHECKF(bad == 0, "%zu bytes differ", bad);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(a.ptr));
    HIP_OK(hipFree(b.ptr));
    free(src);
    free(out);
}

TEST(hipMemcpy3D_negative)
{
    hipPitchedPtr a;
    HIP_OK(hipMalloc3D(&a, (hipExtent){64, 4, 2}));
    uint8_t *h = xmalloc(a.pitch * 4 * 2);
    hipMemcpy3DParms p = parms3d();
    p.srcPtr = pptr(h, a.pitch, 64, 4);
    p.dstPtr = a;
    p.extent = (hipExtent){64, 4, 2};
    p.kind = hipMemcpyHostToDevice;
    HIP_OK(hipMemcpy3D(&p));
    CHECK_HIP(hipMemcpy3D(NULL), hipErrorInvalidValue);
    hipMemcpy3DParms q = p;
    q.srcArray = (hipArray_t)h;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidValue); /* array and pointer */
    q.srcPtr.ptr = NULL;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidValue); /* not a live array */
    q = p;
    q.dstPtr.ptr = NULL;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidValue); /* neither */
    q = p;
    q.srcPtr.xsize = a.pitch + 1;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidPitchValue);
    q = p;
    q.dstPos.x = 1;
    q.extent.width = a.pitch;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidValue); /* width + x past the pitch */
    q = p;
    q.extent.depth = 3;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidValue); /* past the allocation */
    q = p;
    q.kind = (hipMemcpyKind)9;
    CHECK_HIP(hipMemcpy3D(&q), hipErrorInvalidMemcpyDirection);
    q = p;
    q.extent.height = 0;
    HIP_OK(hipMemcpy3D(&q));
    HIP_OK(hipFree(a.ptr));
    free(h);
}

/* Fills of a block inside pitched memory leave the padding and everything outside alone. */
TEST(hipMemset2D_3D_block)
{
    const size_t w = 70, h = 9;
    void *d = NULL;
    size_t pitch = 0;
    HIP_OK(hipMallocPitch(&d, &pitch, w, h));
    HIP_OK(hipMemset(d, 0, pitch * h));
    HIP_OK(hipMemset2D(d, pitch, 0x5a, w - 3, h - 1));
    uint8_t *out = xmalloc(pitch * h);
    HIP_OK(hipMemcpy(out, d, pitch * h, hipMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < pitch; x++)
            bad += out[y * pitch + x] != ((x < w - 3 && y < h - 1) ? 0x5a : 0);
    CHECK(bad == 0);
    /* async on a stream, then 3D */
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemset2DAsync(d, pitch, 0x11, pitch, h, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, pitch * h, 0x11);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    free(out);

    hipPitchedPtr v;
    HIP_OK(hipMalloc3D(&v, (hipExtent){100, 6, 4}));
    size_t n = v.pitch * 6 * 4;
    HIP_OK(hipMemset(v.ptr, 0, n));
    HIP_OK(hipMemset3DAsync(v, 0xa5, (hipExtent){99, 5, 3}, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
    out = xmalloc(n);
    HIP_OK(hipMemcpy(out, v.ptr, n, hipMemcpyDeviceToHost));
    bad = 0;
    for (size_t z = 0; z < 4; z++)
        for (size_t y = 0; y < 6; y++)
            for (size_t x = 0; x < v.pitch; x++)
                bad += out[(z * 6 + y) * v.pitch + x] != ((x < 99 && y < 5 && z < 3) ? 0xa5 : 0);
    CHECK(bad == 0);
    HIP_OK(hipFree(v.ptr));
    free(out);
}

TEST(hipMemset2D_3D_negative)
{
    const size_t w = 64, h = 4;
    void *d = NULL;
    size_t pitch = 0;
    HIP_OK(hipMallocPitch(&d, &pitch, w, h));
    CHECK_HIP(hipMemset2D(NULL, pitch, 1, w, h), hipErrorInvalidValue);
    uint8_t *host = xmalloc(pitch * h);
    CHECK_HIP(hipMemset2D(host, pitch, 1, w, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemset2DAsync(host, pitch, 1, w, h, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemset2D(d, 1, 1, w, h), hipErrorInvalidValue);          /* pitch < width */
    CHECK_HIP(hipMemset2D(d, pitch, 1, pitch + 1, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemset2D(d, pitch, 1, w, h + 1), hipErrorInvalidValue);  /* past the end */
    CHECK_HIP(hipMemset2D(d, pitch, 1, SIZE_MAX, h), hipErrorInvalidValue);
    HIP_OK(hipMemset2D(d, pitch, 1, 0, h));
    hipPitchedPtr v = pptr(d, pitch, w, h);
    CHECK_HIP(hipMemset3D(v, 1, (hipExtent){w, h, 2}), hipErrorInvalidValue);
    CHECK_HIP(hipMemset3D(v, 1, (hipExtent){w, SIZE_MAX, 1}), hipErrorInvalidValue);
    CHECK_HIP(hipMemset3D(v, 1, (hipExtent){w, h, SIZE_MAX}), hipErrorInvalidValue);
    HIP_OK(hipMemset3D(v, 1, (hipExtent){0, 0, 0}));
    hipPitchedPtr zero = {0};
    CHECK_HIP(hipMemset3D(zero, 1, (hipExtent){w, h, 1}), hipErrorInvalidValue);
    /* the failed fills wrote nothing */
    HIP_OK(hipMemset(d, 0, pitch * h));
    HIP_OK(hipMemset2D(d, pitch, 9, w, h));
    uint8_t *out = xmalloc(pitch * h);
    HIP_OK(hipMemcpy(out, d, pitch * h, hipMemcpyDeviceToHost));
    CHECK(out[w] == 0 && out[0] == 9 && out[pitch * h - 1] == 0);
    HIP_OK(hipFree(d));
    free(host);
    free(out);
}

/* hipMemcpyParam2D / hipDrvMemcpy2DUnaligned / hipDrvMemcpy3D between pointers of every memory
 * type (hip-tests hipMemcpyParam2D.cc, hipDrvMemcpy3D.cc, hipDrvMemcpy2DUnaligned.cc). */
TEST(hipMemcpyParam2D_hipDrvMemcpy3D_pointers)
{
    const size_t w = 300, h = 9, d = 3;
    void *dev = NULL;
    size_t dp = 0;
    HIP_OK(hipMallocPitch(&dev, &dp, w, h * d));
    uint8_t *src = host_surface(w + 20, h, d, w, h, d, 41, 0);
    uint8_t *out = xmalloc(w * h * d);
    /* host (pitch w + 20) → device, 2D, one slice at a time through the driver struct */
    hip_Memcpy2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeHost;
    c.srcHost = src;
    c.srcPitch = w + 20;
    c.dstMemoryType = hipMemoryTypeDevice;
    c.dstDevice = dev;
    c.dstPitch = dp;
    c.WidthInBytes = w;
    c.Height = h * d;
    HIP_OK(hipMemcpyParam2D(&c));
    /* device → host, 3D, with pitched slices */
    HIP_MEMCPY3D c3;
    memset(&c3, 0, sizeof(c3));
    c3.srcMemoryType = hipMemoryTypeDevice;
    c3.srcDevice = dev;
    c3.srcPitch = dp;
    c3.srcHeight = h;
    c3.dstMemoryType = hipMemoryTypeHost;
    c3.dstHost = out;
    c3.dstPitch = w;
    c3.dstHeight = h;
    c3.WidthInBytes = w;
    c3.Height = h;
    c3.Depth = d;
    memset(out, 0, w * h * d);
    HIP_OK(hipDrvMemcpy3D(&c3));
    CHECK(surface_mismatch(out, w, h, d, w, h, d, 41, 0) == 0);
    /* a sub-block at (5, 2, 1) of the device surface, async, to a unified (pinned) destination */
    uint8_t *pin = NULL;
    HIP_OK(hipHostMalloc((void **)&pin, 64 * 4 * 2, 0));
    memset(&c3, 0, sizeof(c3));
    c3.srcMemoryType = hipMemoryTypeUnified;
    c3.srcDevice = dev;
    c3.srcXInBytes = 5;
    c3.srcY = 2;
    c3.srcZ = 1;
    c3.srcPitch = dp;
    c3.srcHeight = h;
    c3.dstMemoryType = hipMemoryTypeUnified;
    c3.dstDevice = pin;
    c3.dstPitch = 64;
    c3.dstHeight = 4;
    c3.WidthInBytes = 64;
    c3.Height = 4;
    c3.Depth = 2;
    HIP_OK(hipDrvMemcpy3DAsync(&c3, NULL));
    HIP_OK(hipDeviceSynchronize());
    size_t bad = 0;
    for (size_t z = 0; z < 2; z++)
        for (size_t y = 0; y < 4; y++)
            for (size_t x = 0; x < 64; x++)
                bad += pin[z * 256 + y * 64 + x] != vol(x + 5, y + 2, z + 1, 41);
    CHECK(bad == 0);
    /* zero extents succeed */
    c3.Depth = 0;
    HIP_OK(hipDrvMemcpy3D(&c3));
    /* negatives */
    CHECK_HIP(hipMemcpyParam2D(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvMemcpy3D(NULL), hipErrorInvalidValue);
    hip_Memcpy2D q = c;
    q.dstDevice = NULL;
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    q = c;
    q.srcHost = NULL;
    CHECK_HIP(hipDrvMemcpy2DUnaligned(&q), hipErrorInvalidValue);
    q = c;
    q.dstPitch = w - 1;
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    q = c;
    q.srcPitch = w - 1;
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    int maxp = 0;
    HIP_OK(hipDeviceGetAttribute(&maxp, hipDeviceAttributeMaxPitch, 0));
    q = c;
    q.dstPitch = (size_t)maxp + 1;
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    q = c;
    q.Height = h * d + 1; /* past the device allocation */
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    q = c;
    q.dstMemoryType = hipMemoryTypeDevice;
    q.dstDevice = out; /* device memory the runtime does not know */
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    q = c;
    q.dstMemoryType = (hipMemoryType)7;
    CHECK_HIP(hipMemcpyParam2D(&q), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyParam2DAsync(&c, (hipStream_t)0x1234), hipErrorContextIsDestroyed);
    HIP_OK(hipHostFree(pin));
    HIP_OK(hipFree(dev));
    free(src);
    free(out);
}

/* hipMemsetD2D8/16/32 (+Async): element fills of pitched rows, the bytes around them untouched
 * (hip-tests hipMemsetD2D8.cc and the 16/32 forms). */
TEST(hipMemsetD2D_fills_and_negative)
{
    const size_t w = 77, h = 13;
    void *d = NULL;
    size_t pitch = 0;
    HIP_OK(hipMallocPitch(&d, &pitch, w * 4, h));
    uint8_t *out = xmalloc(pitch * h);
    for (int e = 0; e < 3; e++) {
        const size_t elem = (size_t)1 << e;
        HIP_OK(hipMemset(d, 0xee, pitch * h));
        hipStream_t s;
        HIP_OK(hipStreamCreate(&s));
        if (elem == 1)
            HIP_OK(hipMemsetD2D8Async(d, pitch, 0x5a, w, h, s));
        else if (elem == 2)
            HIP_OK(hipMemsetD2D16Async(d, pitch, 0x1234, w, h, s));
        else
            HIP_OK(hipMemsetD2D32Async(d, pitch, 0xdeadbeef, w, h, s));
        HIP_OK(hipStreamSynchronize(s));
        HIP_OK(hipStreamDestroy(s));
        HIP_OK(hipMemcpy(out, d, pitch * h, hipMemcpyDeviceToHost));
        const uint32_t v = elem == 1 ? 0x5a : elem == 2 ? 0x1234 : 0xdeadbeef;
        size_t bad = 0;
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < pitch; x++) {
                uint8_t want = x < w * elem ? (uint8_t)(v >> (8 * (x % elem))) : 0xee;
                bad += out[y * pitch + x] != want;
            }
        CHECK(bad == 0);
    }
    /* synchronous forms on an unaligned start: one row in, one element in */
    HIP_OK(hipMemset(d, 0, pitch * h));
    HIP_OK(hipMemsetD2D32((char *)d + pitch + 4, pitch, 0x01020304, 3, 2));
    HIP_OK(hipMemsetD2D16((char *)d + 3 * pitch + 2, pitch, 0xa0b0, 5, 1));
    HIP_OK(hipMemsetD2D8((char *)d + 5 * pitch + 1, pitch, 0x77, 9, 1));
    HIP_OK(hipMemcpy(out, d, pitch * h, hipMemcpyDeviceToHost));
    CHECK(out[pitch + 4] == 0x04 && out[pitch + 7] == 0x01 && out[pitch + 15] == 0x01 && out[pitch + 16] == 0);
    CHECK(out[2 * pitch + 4] == 0x04 && out[2 * pitch + 3] == 0);
    CHECK(out[3 * pitch + 2] == 0xb0 && out[3 * pitch + 11] == 0xa0 && out[3 * pitch + 12] == 0);
    CHECK(out[5 * pitch + 1] == 0x77 && out[5 * pitch + 9] == 0x77 && out[5 * pitch + 10] == 0 && out[5 * pitch] == 0);
    /* zero extents */
    HIP_OK(hipMemsetD2D8(d, pitch, 1, 0, h));
    HIP_OK(hipMemsetD2D32(d, pitch, 1, w, 0));
    /* hip-tests Unit_hipMemsetD2D8_NegTsts */
    uint8_t *host = xmalloc(pitch * h);
    CHECK_HIP(hipMemsetD2D8(NULL, pitch, 1, w, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD2D8((char *)d + pitch * h + 1, pitch, 1, w, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD2D8(host, pitch, 1, w, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD2D8(d, 1, 1, w, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD2D8(d, pitch, 1, w, (size_t)-10), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD2D8(d, pitch, 1, (size_t)-10, h), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD2D32(d, pitch, 1, pitch / 4 + 1, 1), hipErrorInvalidValue); /* row wider than the pitch */
    CHECK_HIP(hipMemsetD2D16(d, pitch, 1, SIZE_MAX / 2 + 1, 1), hipErrorInvalidValue); /* bytes overflow */
    CHECK_HIP(hipMemsetD2D16(d, pitch, 1, w, h + 1), hipErrorInvalidValue); /* past the allocation */
    free(host);
    free(out);
    HIP_OK(hipFree(d));
}
