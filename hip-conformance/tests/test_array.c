/*
 * Arrays (linear pitched VRAM behind a hipArray_t): hipMallocArray, hipMalloc3DArray,
 * hipArrayCreate, hipArray3DCreate, hipFreeArray/hipArrayDestroy, hipArrayGetInfo,
 * hipArray(3D)GetDescriptor, hipCreate/GetChannelDesc, and every copy that names an array
 * (hipMemcpy2DToArray/FromArray(+Async), hipMemcpyToArray/FromArray, hipMemcpyAtoH/HtoA(+Async),
 * hipMemcpyAtoD/DtoA/AtoA,
 * hipMemcpy2DArrayToArray, hipMemcpy3D, hipDrvMemcpy3D(+Async), hipMemcpyParam2D(+Async)), with
 * data round trips over several formats and extents, and AMD's negative cases.
 *
 * Expected codes: hip-tests catch/unit/memory/{hipMallocArray,hipMalloc3DArray,hipArrayCreate,
 * hipFreeArray,hipArrayGetInfo,hipMemcpy2DToArray,hipMemcpy2DFromArray,hipMemcpyAtoH,
 * hipMemcpyHtoA,hipMemcpyParam2D,hipDrvMemcpy2DUnaligned,hipMemcpyAtoD,hipMemcpyAtoA,
 * hipArrayGetDescriptor,hipArray3DGetDescriptor}.cc; clr hip_memory.cpp
 * (ihipArrayCreate, ihipArrayDestroy, hipMemcpy2DValidate*, ihipMemcpyParam3D).
 */
#define _GNU_SOURCE
#include "common.h"

static hipExtent ext3(size_t w, size_t h, size_t d)
{
    return (hipExtent){w, h, d};
}

static hipPos pos3(size_t x, size_t y, size_t z)
{
    return (hipPos){x, y, z};
}

static hipPitchedPtr pitched_ptr(void *p, size_t pitch, size_t xsize, size_t ysize)
{
    return (hipPitchedPtr){p, pitch, xsize, ysize};
}

static size_t vram_free(void)
{
    size_t f = 0, t = 0;
    HIP_OK(hipMemGetInfo(&f, &t));
    return f;
}

/* Element `i` of a test image as bytes. */
static void image_fill(uint8_t *p, size_t n, unsigned seed)
{
    pat_fill(p, n, seed);
}

TEST(hipArray_struct_layouts)
{
    CHECK(sizeof(hipChannelFormatDesc) == 20);
    CHECK(sizeof(HIP_ARRAY_DESCRIPTOR) == 24);
    CHECK(sizeof(HIP_ARRAY3D_DESCRIPTOR) == 40);
    CHECK(offsetof(HIP_ARRAY3D_DESCRIPTOR, Flags) == 32);
    CHECK(sizeof(hip_Memcpy2D) == 128);
    CHECK(offsetof(hip_Memcpy2D, dstXInBytes) == 56);
    CHECK(offsetof(hip_Memcpy2D, WidthInBytes) == 112);
    CHECK(sizeof(HIP_MEMCPY3D) == 184);
    CHECK(offsetof(HIP_MEMCPY3D, dstMemoryType) == 112);
    CHECK(offsetof(HIP_MEMCPY3D, Depth) == 176);
    CHECK(HIP_AD_FORMAT_FLOAT == 0x20 && HIP_AD_FORMAT_SIGNED_INT32 == 0x0a);
    CHECK(hipArrayLayered == 1 && hipArraySurfaceLoadStore == 2 && hipArrayCubemap == 4 &&
          hipArrayTextureGather == 8);
    hipChannelFormatDesc d = hipCreateChannelDesc(16, 16, 0, 0, hipChannelFormatKindSigned);
    CHECK(d.x == 16 && d.y == 16 && d.z == 0 && d.w == 0 && d.f == hipChannelFormatKindSigned);
}

/* Round trip through a 2D array: host → array (at an offset) → device → host, for a format of
 * `elem` bytes. */
static void roundtrip_2d(hipChannelFormatDesc desc, size_t elem, size_t w, size_t h, unsigned seed)
{
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &desc, w, h, hipArrayDefault));
    REQUIRE(a != NULL);
    size_t row = w * elem, n = row * h;
    uint8_t *src = xmalloc(n), *out = xmalloc(n);
    image_fill(src, n, seed);
    HIP_OK(hipMemcpy2DToArray(a, 0, 0, src, row, row, h, hipMemcpyHostToDevice));
    void *d = NULL;
    size_t dp = 0;
    HIP_OK(hipMallocPitch(&d, &dp, row, h));
    HIP_OK(hipMemcpy2DFromArray(d, dp, a, 0, 0, row, h, hipMemcpyDeviceToDevice));
    memset(out, 0, n);
    HIP_OK(hipMemcpy2D(out, row, d, dp, row, h, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, n, seed);
    /* straight back to the host, and the channel description */
    memset(out, 0, n);
    HIP_OK(hipMemcpy2DFromArray(out, row, a, 0, 0, row, h, hipMemcpyDefault));
    CHECK_PATTERN(out, n, seed);
    hipChannelFormatDesc got;
    HIP_OK(hipGetChannelDesc(&got, a));
    CHECK(got.x == desc.x && got.y == desc.y && got.z == desc.z && got.w == desc.w && got.f == desc.f);
    HIP_OK(hipFree(d));
    HIP_OK(hipFreeArray(a));
    free(src);
    free(out);
}

TEST(hipMallocArray_roundtrip_formats)
{
    roundtrip_2d(hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindUnsigned), 1, 33, 7, 1);
    roundtrip_2d(hipCreateChannelDesc(16, 16, 0, 0, hipChannelFormatKindSigned), 4, 100, 9, 2);
    roundtrip_2d(hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat), 4, 1024, 3, 3);
    roundtrip_2d(hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindFloat), 16, 300, 40, 4);
    roundtrip_2d(hipCreateChannelDesc(16, 16, 16, 16, hipChannelFormatKindFloat), 8, 1, 1, 5);
}

TEST(hipMemcpy2DToArray_subblock_and_async)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindUnsigned);
    const size_t w = 64, h = 16;
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &desc, w, h, hipArrayDefault));
    uint32_t *zero = calloc(w * h, 4);
    HIP_OK(hipMemcpy2DToArray(a, 0, 0, zero, w * 4, w * 4, h, hipMemcpyHostToDevice));
    /* a 10 × 5 block at element (3, 2), from a pinned source with a wide pitch, on a stream */
    uint32_t *pin = NULL;
    HIP_OK(hipHostMalloc((void **)&pin, 4096, 0));
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 10; x++)
            pin[y * 64 + x] = 1000 + y * 10 + x;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemcpy2DToArrayAsync(a, 3 * 4, 2, pin, 256, 40, 5, hipMemcpyHostToDevice, s));
    uint32_t *out = calloc(w * h, 4);
    HIP_OK(hipMemcpy2DFromArrayAsync(out, w * 4, a, 0, 0, w * 4, h, hipMemcpyDeviceToHost, s));
    HIP_OK(hipStreamSynchronize(s));
    size_t bad = 0;
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) {
            uint32_t want = (x >= 3 && x < 13 && y >= 2 && y < 7) ? 1000 + (y - 2) * 10 + (x - 3) : 0;
            bad += out[y * w + x] != want;
        }
    CHECK(bad == 0);
    /* the block back out of the array at its offset */
    uint32_t blk[50] = {0};
    HIP_OK(hipMemcpy2DFromArray(blk, 40, a, 3 * 4, 2, 40, 5, hipMemcpyDeviceToHost));
    CHECK(blk[0] == 1000 && blk[49] == 1049 && blk[12] == 1012);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipHostFree(pin));
    HIP_OK(hipFreeArray(a));
    free(zero);
    free(out);
}

TEST(hipArray_1d_AtoH_HtoA_and_legacy)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
    const size_t w = 1000, n = w * 4;
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &desc, w, 0, hipArrayDefault));
    uint8_t *src = xmalloc(n), *out = xmalloc(n);
    pat_fill(src, n, 7);
    HIP_OK(hipMemcpyHtoA(a, 0, src, n));
    memset(out, 0, n);
    HIP_OK(hipMemcpyAtoH(out, a, 0, n));
    CHECK_PATTERN(out, n, 7);
    /* at an offset, async */
    HIP_OK(hipMemcpyHtoAAsync(a, 400, src, 40, NULL));
    HIP_OK(hipMemcpyAtoHAsync(out, a, 400, 40, NULL));
    HIP_OK(hipDeviceSynchronize());
    CHECK_PATTERN(out, 40, 7);
    /* the deprecated whole-array forms */
    pat_fill(src, n, 8);
    HIP_OK(hipMemcpyToArray(a, 0, 0, src, n, hipMemcpyHostToDevice));
    memset(out, 0, n);
    HIP_OK(hipMemcpyFromArray(out, a, 0, 0, n, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, n, 8);
    /* hip-tests hipMemcpyAtoH/HtoA negatives */
    CHECK_HIP(hipMemcpyAtoH(NULL, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoH(out, NULL, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoH(out, a, n + 10, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoH(out, a, 0, n + 10), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyHtoA(NULL, 0, src, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyHtoA(a, 0, NULL, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyHtoA(a, n + 10, src, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyHtoA(a, 0, src, n + 10), hipErrorInvalidValue);
    /* a 2D array's AtoH of the whole array: only the first row is addressed */
    hipArray_t b = NULL;
    HIP_OK(hipMallocArray(&b, &desc, 64, 4, hipArrayDefault));
    CHECK_HIP(hipMemcpyAtoH(out, b, 0, 64 * 4 * 4), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyHtoA(b, 0, src, 64 * 4 * 4), hipErrorInvalidValue);
    HIP_OK(hipFreeArray(b));
    HIP_OK(hipFreeArray(a));
    free(src);
    free(out);
}

TEST(hipMalloc3DArray_hipMemcpy3D_roundtrip)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(16, 0, 0, 0, hipChannelFormatKindUnsigned);
    const size_t w = 37, h = 11, dd = 5, elem = 2;
    hipArray_t a = NULL;
    HIP_OK(hipMalloc3DArray(&a, &desc, (hipExtent){w, h, dd}, hipArrayDefault));
    hipChannelFormatDesc gd;
    hipExtent ge;
    unsigned gf = 99;
    HIP_OK(hipArrayGetInfo(&gd, &ge, &gf, a));
    CHECK(gd.x == 16 && gd.y == 0 && gd.f == hipChannelFormatKindUnsigned);
    CHECK(ge.width == w && ge.height == h && ge.depth == dd && gf == 0);
    HIP_ARRAY3D_DESCRIPTOR d3;
    HIP_OK(hipArray3DGetDescriptor(&d3, a));
    CHECK(d3.Width == w && d3.Height == h && d3.Depth == dd && d3.Format == HIP_AD_FORMAT_UNSIGNED_INT16 &&
          d3.NumChannels == 1 && d3.Flags == 0);

    size_t n = w * elem * h * dd;
    uint8_t *src = xmalloc(n), *out = xmalloc(n);
    pat_fill(src, n, 11);
    hipMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = pitched_ptr(src, w * elem, w * elem, h);
    p.dstArray = a;
    p.extent = ext3(w, h, dd); /* elements, an array being involved */
    p.kind = hipMemcpyHostToDevice;
    HIP_OK(hipMemcpy3D(&p));
    /* array → pitched device memory → host */
    hipPitchedPtr dp;
    HIP_OK(hipMalloc3D(&dp, ext3(w * elem, h, dd)));
    memset(&p, 0, sizeof(p));
    p.srcArray = a;
    p.dstPtr = dp;
    p.extent = ext3(w, h, dd);
    p.kind = hipMemcpyDeviceToDevice;
    HIP_OK(hipMemcpy3DAsync(&p, NULL));
    memset(&p, 0, sizeof(p));
    p.srcPtr = dp;
    p.dstPtr = pitched_ptr(out, w * elem, w * elem, h);
    p.extent = ext3(w * elem, h, dd);
    p.kind = hipMemcpyDeviceToHost;
    memset(out, 0, n);
    HIP_OK(hipMemcpy3D(&p));
    CHECK_PATTERN(out, n, 11);
    /* a 3 × 2 × 2 sub-block at (5, 4, 1) read back through the driver API */
    uint16_t blk[12] = {0};
    HIP_MEMCPY3D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeArray;
    c.srcArray = a;
    c.srcXInBytes = 5 * elem;
    c.srcY = 4;
    c.srcZ = 1;
    c.dstMemoryType = hipMemoryTypeHost;
    c.dstHost = blk;
    c.dstPitch = 3 * elem;
    c.dstHeight = 2;
    c.WidthInBytes = 3 * elem;
    c.Height = 2;
    c.Depth = 2;
    HIP_OK(hipDrvMemcpy3D(&c));
    size_t bad = 0;
    for (size_t z = 0; z < 2; z++)
        for (size_t y = 0; y < 2; y++)
            for (size_t x = 0; x < 3; x++) {
                size_t off = (z + 1) * w * h * elem + (y + 4) * w * elem + (x + 5) * elem;
                uint16_t want;
                memcpy(&want, src + off, 2);
                bad += blk[z * 6 + y * 3 + x] != want;
            }
    CHECK(bad == 0);
    /* array to array of the same element size, then compare */
    hipArray_t b = NULL;
    HIP_OK(hipMalloc3DArray(&b, &desc, (hipExtent){w, h, dd}, hipArrayDefault));
    memset(&p, 0, sizeof(p));
    p.srcArray = a;
    p.dstArray = b;
    p.extent = ext3(w, h, dd);
    p.kind = hipMemcpyDeviceToDevice;
    HIP_OK(hipMemcpy3D(&p));
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeArray;
    c.srcArray = b;
    c.dstMemoryType = hipMemoryTypeHost;
    c.dstHost = out;
    c.WidthInBytes = w * elem;
    c.Height = h;
    c.Depth = dd;
    memset(out, 0, n);
    HIP_OK(hipDrvMemcpy3DAsync(&c, NULL));
    HIP_OK(hipDeviceSynchronize());
    CHECK_PATTERN(out, n, 11);
    /* element sizes differ: invalid; a block past the array: invalid */
    hipChannelFormatDesc d8 = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindUnsigned);
    hipArray_t e = NULL;
    HIP_OK(hipMalloc3DArray(&e, &d8, (hipExtent){w, h, dd}, hipArrayDefault));
    memset(&p, 0, sizeof(p));
    p.srcArray = a;
    p.dstArray = e;
    p.extent = ext3(w, h, dd);
    p.kind = hipMemcpyDeviceToDevice;
    CHECK_HIP(hipMemcpy3D(&p), hipErrorInvalidValue);
    p.dstArray = b;
    p.extent = ext3(w, h, dd + 1);
    CHECK_HIP(hipMemcpy3D(&p), hipErrorInvalidValue);
    p.extent = ext3(w, h, dd);
    p.srcPos = pos3(1, 0, 0);
    CHECK_HIP(hipMemcpy3D(&p), hipErrorInvalidValue);
    HIP_OK(hipFreeArray(e));
    HIP_OK(hipArrayDestroy(b));
    HIP_OK(hipFree(dp.ptr));
    HIP_OK(hipFreeArray(a));
    free(src);
    free(out);
}

TEST(hipArrayCreate_driver_descriptors)
{
    HIP_ARRAY_DESCRIPTOR d = {.Width = 128, .Height = 32, .Format = HIP_AD_FORMAT_HALF, .NumChannels = 2};
    hipArray_t a = NULL;
    HIP_OK(hipArrayCreate(&a, &d));
    HIP_ARRAY_DESCRIPTOR g;
    memset(&g, 0, sizeof(g));
    HIP_OK(hipArrayGetDescriptor(&g, a));
    CHECK(g.Width == 128 && g.Height == 32 && g.Format == HIP_AD_FORMAT_HALF && g.NumChannels == 2);
    hipChannelFormatDesc cd;
    HIP_OK(hipGetChannelDesc(&cd, a));
    CHECK(cd.x == 16 && cd.y == 16 && cd.z == 0 && cd.f == hipChannelFormatKindFloat);
    /* hipMemcpyParam2D: host → array, array → device, device → host */
    size_t row = 128 * 4, n = row * 32;
    uint8_t *src = xmalloc(n), *out = xmalloc(n);
    pat_fill(src, n, 21);
    hip_Memcpy2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeHost;
    c.srcHost = src;
    c.srcPitch = row;
    c.dstMemoryType = hipMemoryTypeArray;
    c.dstArray = a;
    c.WidthInBytes = row;
    c.Height = 32;
    HIP_OK(hipMemcpyParam2D(&c));
    void *dev = NULL;
    size_t dpitch = 0;
    HIP_OK(hipMallocPitch(&dev, &dpitch, row, 32));
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeArray;
    c.srcArray = a;
    c.dstMemoryType = hipMemoryTypeDevice;
    c.dstDevice = dev;
    c.dstPitch = dpitch;
    c.WidthInBytes = row;
    c.Height = 32;
    HIP_OK(hipMemcpyParam2DAsync(&c, NULL));
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeUnified;
    c.srcDevice = dev;
    c.srcPitch = dpitch;
    c.dstMemoryType = hipMemoryTypeUnified;
    c.dstDevice = out;
    c.dstPitch = row;
    c.WidthInBytes = row;
    c.Height = 32;
    memset(out, 0, n);
    HIP_OK(hipDrvMemcpy2DUnaligned(&c));
    CHECK_PATTERN(out, n, 21);
    /* 2D array to array */
    hipArray_t b = NULL;
    HIP_OK(hipArrayCreate(&b, &d));
    HIP_OK(hipMemcpy2DArrayToArray(b, 8, 1, a, 0, 0, row - 8, 31, hipMemcpyDeviceToDevice));
    uint8_t r[16];
    HIP_OK(hipMemcpy2DFromArray(r, 16, b, 8, 1, 16, 1, hipMemcpyDeviceToHost));
    CHECK(memcmp(r, src, 16) == 0);
    CHECK_HIP(hipMemcpy2DArrayToArray(b, 16, 0, a, 0, 0, row, 1, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DArrayToArray(NULL, 0, 0, a, 0, 0, 4, 1, hipMemcpyDeviceToDevice), hipErrorInvalidHandle);
    /* 3D descriptor with layers */
    HIP_ARRAY3D_DESCRIPTOR l = {.Width = 64, .Height = 0, .Depth = 6, .Format = HIP_AD_FORMAT_SIGNED_INT8,
                                .NumChannels = 4, .Flags = hipArrayLayered};
    hipArray_t la = NULL;
    HIP_OK(hipArray3DCreate(&la, &l));
    HIP_ARRAY3D_DESCRIPTOR lg;
    HIP_OK(hipArray3DGetDescriptor(&lg, la));
    CHECK(lg.Width == 64 && lg.Height == 0 && lg.Depth == 6 && lg.Flags == hipArrayLayered && lg.NumChannels == 4);
    HIP_OK(hipArrayDestroy(la));
    HIP_OK(hipFree(dev));
    HIP_OK(hipArrayDestroy(b));
    HIP_OK(hipArrayDestroy(a));
    free(src);
    free(out);
}

TEST(hipMallocArray_negative)
{
    size_t free0 = vram_free();
    hipArray_t a = (hipArray_t)0x1;
    hipChannelFormatDesc f4 = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindFloat);
    CHECK_HIP(hipMallocArray(NULL, &f4, 1024, 0, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocArray(&a, NULL, 1024, 0, hipArrayDefault), hipErrorInvalidValue);
    /* zero width (any height) */
    CHECK_HIP(hipMallocArray(&a, &f4, 0, 0, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocArray(&a, &f4, 0, 32, hipArrayDefault), hipErrorInvalidValue);
    /* channel descriptions AMD refuses */
    const hipChannelFormatDesc bad[] = {
        {8, 16, 0, 0, hipChannelFormatKindUnsigned},   /* different sizes */
        {8, 0, 8, 0, hipChannelFormatKindUnsigned},    /* a channel after a zero one */
        {32, 32, 32, 0, hipChannelFormatKindSigned},   /* 3 channels */
        {8, 0, 0, 0, hipChannelFormatKindFloat},       /* 8-bit float */
        {64, 0, 0, 0, hipChannelFormatKindUnsigned},   /* 64 bits */
        {7, 0, 0, 0, hipChannelFormatKindSigned},      /* 7 bits */
        {32, 0, 0, 0, hipChannelFormatKindNone},       /* no kind */
        {32, 0, 0, 0, (hipChannelFormatKind)0x55},     /* unknown kind */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_HIP(hipMallocArray(&a, &bad[i], 1024, 1024, hipArrayDefault), hipErrorInvalidValue);
    /* flags: layered needs a depth, cubemap is refused, unknown bits */
    const unsigned flags1d[] = {hipArrayLayered, hipArrayCubemap, hipArrayLayered | hipArrayCubemap,
                                hipArrayTextureGather, 0x40};
    for (size_t i = 0; i < sizeof(flags1d) / sizeof(flags1d[0]); i++)
        CHECK_HIP(hipMallocArray(&a, &f4, 1024, 0, flags1d[i]), hipErrorInvalidValue);
    CHECK_HIP(hipMallocArray(&a, &f4, 1024, 1024, hipArrayCubemap), hipErrorInvalidValue);
    /* limits: hipDeviceAttributeMaxTexture2DWidth/Height + 1, SIZE_MAX */
    int mw = 0, mh = 0, m1 = 0;
    HIP_OK(hipDeviceGetAttribute(&mw, hipDeviceAttributeMaxTexture2DWidth, 0));
    HIP_OK(hipDeviceGetAttribute(&mh, hipDeviceAttributeMaxTexture2DHeight, 0));
    HIP_OK(hipDeviceGetAttribute(&m1, hipDeviceAttributeMaxTexture1DWidth, 0));
    CHECK_HIP(hipMallocArray(&a, &f4, (size_t)mw + 1, 1, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocArray(&a, &f4, 1, (size_t)mh + 1, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocArray(&a, &f4, (size_t)m1 + 1, 0, hipArrayDefault), hipErrorInvalidValue);
    CHECK_HIP(hipMallocArray(&a, &f4, SIZE_MAX, SIZE_MAX, hipArrayDefault), hipErrorInvalidValue);
    CHECK(a == (hipArray_t)0x1); /* validation failures leave the output alone */
    /* the largest 1D array works */
    HIP_OK(hipMallocArray(&a, &f4, (size_t)m1, 0, hipArraySurfaceLoadStore));
    HIP_OK(hipFreeArray(a));
    a = (hipArray_t)0x1;
    /* hipMalloc3DArray: zero width, zero height without layers, depth past the limit */
    CHECK_HIP(hipMalloc3DArray(NULL, &f4, ext3(6, 6, 6), 0), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc3DArray(&a, NULL, ext3(6, 6, 6), 0), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc3DArray(&a, &f4, ext3(0, 6, 6), 0), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc3DArray(&a, &f4, ext3(6, 0, 6), 0), hipErrorInvalidValue);
    int md = 0;
    HIP_OK(hipDeviceGetAttribute(&md, hipDeviceAttributeMaxTexture3DDepth, 0));
    CHECK_HIP(hipMalloc3DArray(&a, &f4, ext3(6, 6, (size_t)md + 1), 0), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc3DArray(&a, &f4, ext3(6, 6, 6), hipArrayTextureGather), hipErrorInvalidValue);
    /* driver descriptors */
    HIP_ARRAY_DESCRIPTOR d = {.Width = 1024, .Height = 1024, .Format = HIP_AD_FORMAT_FLOAT, .NumChannels = 4};
    CHECK_HIP(hipArrayCreate(NULL, &d), hipErrorInvalidValue);
    CHECK_HIP(hipArrayCreate(&a, NULL), hipErrorInvalidValue);
    d.NumChannels = 3;
    CHECK_HIP(hipArrayCreate(&a, &d), hipErrorInvalidValue);
    d.NumChannels = 1;
    d.Format = (hipArray_Format)0x7;
    CHECK_HIP(hipArrayCreate(&a, &d), hipErrorInvalidValue);
    d.Format = HIP_AD_FORMAT_FLOAT;
    d.Width = 0;
    CHECK_HIP(hipArrayCreate(&a, &d), hipErrorInvalidValue);
    HIP_ARRAY3D_DESCRIPTOR d3 = {.Width = 8, .Height = 8, .Depth = 8, .Format = HIP_AD_FORMAT_FLOAT,
                                 .NumChannels = 1, .Flags = hipArrayCubemap};
    CHECK_HIP(hipArray3DCreate(&a, &d3), hipErrorInvalidValue);
    CHECK_HIP(hipArray3DCreate(&a, NULL), hipErrorInvalidValue);
    CHECK(a == (hipArray_t)0x1);
    CHECK(vram_free() == free0); /* nothing left behind */
}

TEST(hipFreeArray_and_queries_negative)
{
    hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    size_t free0 = vram_free();
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &f, 4096, 64, hipArrayDefault));
    CHECK(vram_free() < free0);
    hipChannelFormatDesc desc;
    hipExtent ext;
    unsigned flags;
    HIP_OK(hipArrayGetInfo(NULL, NULL, NULL, a));
    CHECK_HIP(hipArrayGetInfo(&desc, &ext, &flags, NULL), hipErrorInvalidHandle);
    HIP_ARRAY_DESCRIPTOR d;
    HIP_ARRAY3D_DESCRIPTOR d3;
    CHECK_HIP(hipArrayGetDescriptor(&d, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipArrayGetDescriptor(NULL, a), hipErrorInvalidValue);
    CHECK_HIP(hipArray3DGetDescriptor(&d3, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipArray3DGetDescriptor(NULL, a), hipErrorInvalidValue);
    CHECK_HIP(hipGetChannelDesc(NULL, a), hipErrorInvalidValue);
    CHECK_HIP(hipGetChannelDesc(&desc, NULL), hipErrorInvalidHandle);
    /* a pointer that is no array */
    int junk[32] = {0};
    CHECK_HIP(hipArrayGetInfo(&desc, &ext, &flags, (hipArray_t)junk), hipErrorInvalidHandle);
    CHECK_HIP(hipFreeArray((hipArray_t)junk), hipErrorContextIsDestroyed);
    /* free, then every use of the stale handle */
    HIP_OK(hipFreeArray(a));
    CHECK(vram_free() == free0);
    CHECK_HIP(hipFreeArray(a), hipErrorContextIsDestroyed);
    CHECK_HIP(hipArrayDestroy(a), hipErrorContextIsDestroyed);
    CHECK_HIP(hipFreeArray(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipArrayGetInfo(&desc, &ext, &flags, a), hipErrorInvalidHandle);
    CHECK_HIP(hipArrayGetDescriptor(&d, a), hipErrorInvalidHandle);
    uint8_t buf[64];
    CHECK_HIP(hipMemcpyAtoH(buf, a, 0, 4), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, buf, 64, 64, 1, hipMemcpyHostToDevice), hipErrorInvalidHandle);
    /* hipFree of memory that is no hipMalloc does not touch arrays */
    HIP_OK(hipMallocArray(&a, &f, 64, 0, hipArrayDefault));
    CHECK_HIP(hipFree((void *)a), hipErrorInvalidValue);
    HIP_OK(hipFreeArray(a));
}

TEST(hipMemcpy2DToArray_FromArray_negative)
{
    hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
    const size_t w = 32, h = 8, row = w * 4;
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &f, w, h, hipArrayDefault));
    uint8_t *hst = xmalloc(2 * row * h);
    void *dev = NULL;
    HIP_OK(hipMalloc(&dev, row * h));
    /* hip-tests order: kind, src, pitch, array handle, bounds */
    CHECK_HIP(hipMemcpy2DToArray(NULL, 0, 0, hst, 2 * row, row, h, hipMemcpyHostToDevice), hipErrorInvalidHandle);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, NULL, 2 * row, row, h, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, hst, row - 10, row, h, hipMemcpyHostToDevice), hipErrorInvalidPitchValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 4, 0, hst, 2 * row, row, h, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 1, hst, 2 * row, row, h, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, hst, 2 * row, row + 4, h, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, hst, 2 * row, row, h + 1, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, hst, 2 * row, row, h, (hipMemcpyKind)-1), hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpy2DToArray(a, 2, 0, hst, 2 * row, 8, 1, hipMemcpyHostToDevice), hipErrorInvalidValue); /* not whole elements */
    /* a device source whose rows run past its allocation */
    CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, dev, row + 256, row, h, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    /* zero extents succeed and copy nothing */
    HIP_OK(hipMemcpy2DToArray(a, 0, 0, hst, row, 0, h, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy2DToArray(a, 0, 0, hst, row, row, 0, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy2DToArrayAsync(a, 0, 0, hst, row, row, h, hipMemcpyHostToDevice, (hipStream_t)0x1234),
              hipErrorInvalidValue);

    CHECK_HIP(hipMemcpy2DFromArray(NULL, 2 * row, a, 0, 0, row, h, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DFromArray(hst, 2 * row, NULL, 0, 0, row, h, hipMemcpyDeviceToHost), hipErrorInvalidHandle);
    CHECK_HIP(hipMemcpy2DFromArray(hst, row - 10, a, 0, 0, row, h, hipMemcpyDeviceToHost), hipErrorInvalidPitchValue);
    CHECK_HIP(hipMemcpy2DFromArray(hst, 2 * row, a, 4, 0, row, h, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DFromArray(hst, 2 * row, a, 0, 1, row, h, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy2DFromArray(hst, 2 * row, a, 0, 0, row, h, (hipMemcpyKind)-1), hipErrorInvalidMemcpyDirection);
    HIP_OK(hipMemcpy2DFromArray(hst, row, a, 0, 0, 0, h, hipMemcpyDeviceToHost));
    HIP_OK(hipFree(dev));
    HIP_OK(hipFreeArray(a));
    free(hst);
}

TEST(hipArray_two_gpus)
{
    REQUIRE_GPUS(2);
    hipChannelFormatDesc f = hipCreateChannelDesc(8, 8, 0, 0, hipChannelFormatKindUnsigned);
    const size_t w = 200, h = 20, row = w * 2, n = row * h;
    HIP_OK(hipSetDevice(1));
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &f, w, h, hipArrayDefault));
    uint8_t *src = xmalloc(n), *out = xmalloc(n);
    pat_fill(src, n, 31);
    HIP_OK(hipMemcpy2DToArray(a, 0, 0, src, row, row, h, hipMemcpyHostToDevice));
    /* device 0's memory from device 1's array, copied while device 0 is current */
    HIP_OK(hipSetDevice(0));
    void *d0 = NULL;
    HIP_OK(hipMalloc(&d0, n));
    HIP_OK(hipMemcpy2DFromArray(d0, row, a, 0, 0, row, h, hipMemcpyDeviceToDevice));
    check_dev_pattern(d0, n, 31);
    memset(out, 0, n);
    HIP_OK(hipMemcpy2DFromArray(out, row, a, 0, 0, row, h, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, n, 31);
    HIP_OK(hipFreeArray(a));
    HIP_OK(hipFree(d0));
    free(src);
    free(out);
}

TEST(hipDeviceReset_frees_arrays)
{
    hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindUnsigned);
    size_t free0 = vram_free();
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &f, 8192, 16, hipArrayDefault));
    CHECK(vram_free() < free0);
    HIP_OK(hipDeviceReset());
    CHECK(vram_free() == free0);
    CHECK_HIP(hipFreeArray(a), hipErrorContextIsDestroyed);
}

/* hip-tests hipMemcpyAtoD.cc, hipMemcpyAtoA.cc (ROCm 7); clr ihipMemcpyAtoDValidate,
 * ihipMemcpyDtoAValidate, ihipMemcpyAtoAValidate: 1D copies between arrays and device memory. */
TEST(hipMemcpyAtoD_DtoA_AtoA)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
    const size_t cols[] = {3, 4, 100};
    for (size_t k = 0; k < 3; k++) {
        size_t col = cols[k], n = col * sizeof(int);
        int *a_h = xmalloc(n), *b_h = xmalloc(n);
        for (size_t i = 0; i < col; i++)
            a_h[i] = (int)(i * 7 + k);
        hipArray_t a = NULL, b = NULL;
        int *a_d = NULL;
        HIP_OK(hipMallocArray(&a, &desc, col, 1, hipArrayDefault));
        HIP_OK(hipMallocArray(&b, &desc, col, 1, hipArrayDefault));
        HIP_OK(hipMalloc((void **)&a_d, n));
        HIP_OK(hipMemcpy2DToArray(a, 0, 0, a_h, n, n, 1, hipMemcpyHostToDevice));
        HIP_OK(hipMemcpyAtoD(a_d, a, 0, n));
        memset(b_h, 0, n);
        HIP_OK(hipMemcpyDtoH(b_h, a_d, n));
        CHECK(memcmp(a_h, b_h, n) == 0);
        HIP_OK(hipMemcpyAtoA(b, 0, a, 0, n));
        memset(b_h, 0, n);
        HIP_OK(hipMemcpy2DFromArray(b_h, n, b, 0, 0, n, 1, hipMemcpyDeviceToHost));
        CHECK(memcmp(a_h, b_h, n) == 0);
        /* device → array at an offset: elements 1.. of b become a_d's first ones */
        HIP_OK(hipMemset(a_d, 0x5a, n));
        HIP_OK(hipMemcpyDtoA(b, sizeof(int), a_d, n - sizeof(int)));
        memset(b_h, 0, n);
        HIP_OK(hipMemcpyAtoH(b_h, b, 0, n));
        CHECK(b_h[0] == a_h[0]);
        for (size_t i = 1; i < col; i++)
            CHECK(b_h[i] == 0x5a5a5a5a);
        /* array → array at offsets */
        HIP_OK(hipMemcpyAtoA(b, 0, a, sizeof(int), n - sizeof(int)));
        HIP_OK(hipMemcpyAtoH(b_h, b, 0, n));
        for (size_t i = 0; i + 1 < col; i++)
            CHECK(b_h[i] == a_h[i + 1]);
        HIP_OK(hipFreeArray(a));
        HIP_OK(hipFreeArray(b));
        HIP_OK(hipFree(a_d));
        free(a_h);
        free(b_h);
    }
}

TEST(hipMemcpyAtoD_DtoA_AtoA_negative)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    const size_t n = 64 * sizeof(float);
    hipArray_t a = NULL, b = NULL;
    void *d = NULL;
    HIP_OK(hipMallocArray(&a, &desc, 64, 0, hipArrayDefault));
    HIP_OK(hipMallocArray(&b, &desc, 64, 0, hipArrayDefault));
    HIP_OK(hipMalloc(&d, n));
    int host[64];
    /* null or unknown arrays, device pointers the runtime does not know */
    CHECK_HIP(hipMemcpyAtoD(d, NULL, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoD(NULL, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoD(host, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoA(NULL, 0, d, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoA(a, 0, NULL, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoA(a, 0, host, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoA(NULL, 0, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoA(b, 0, NULL, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoA(b, 0, (hipArray_t)host, 0, n), hipErrorInvalidValue);
    /* spans past the array or the allocation */
    CHECK_HIP(hipMemcpyAtoD(d, a, 4, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoA(a, 4, d, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoD((char *)d + 4, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoA(b, 4, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAtoA(b, 0, a, 4, n), hipErrorInvalidValue);
    /* freed array */
    HIP_OK(hipFreeArray(b));
    CHECK_HIP(hipMemcpyAtoA(b, 0, a, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyDtoA(b, 0, d, n), hipErrorInvalidValue);
    HIP_OK(hipFreeArray(a));
    HIP_OK(hipFree(d));
}

/* hip-tests hipArrayGetInfo.cc, hipArrayGetDescriptor.cc, hipArray3DGetDescriptor.cc. */
TEST(hipArrayGetInfo_GetDescriptor_hip_tests_shapes)
{
    hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t a = NULL;
    HIP_OK(hipMalloc3DArray(&a, &f, ext3(1024, 4, 2), hipArrayDefault));
    hipChannelFormatDesc desc;
    hipExtent e;
    unsigned flags = 1;
    HIP_OK(hipArrayGetInfo(&desc, &e, &flags, a));
    CHECK(e.width == 1024 && e.height == 4 && e.depth == 2);
    CHECK(flags == 0);
    CHECK(desc.x == 32 && desc.y == 0 && desc.z == 0 && desc.w == 0 && desc.f == hipChannelFormatKindFloat);
    HIP_OK(hipFreeArray(a));
    CHECK_HIP(hipArrayGetInfo(&desc, &e, &flags, a), hipErrorInvalidHandle);

    /* driver arrays: 1D (Height 0) and 2D, every format and channel count */
    const hipArray_Format fmts[] = {HIP_AD_FORMAT_UNSIGNED_INT8, HIP_AD_FORMAT_UNSIGNED_INT16,
                                    HIP_AD_FORMAT_UNSIGNED_INT32, HIP_AD_FORMAT_SIGNED_INT8,
                                    HIP_AD_FORMAT_SIGNED_INT16,   HIP_AD_FORMAT_SIGNED_INT32,
                                    HIP_AD_FORMAT_HALF,           HIP_AD_FORMAT_FLOAT};
    const unsigned chans[] = {1, 2, 4};
    for (int h = 0; h < 2; h++)
        for (size_t i = 0; i < 8; i++)
            for (size_t c = 0; c < 3; c++) {
                HIP_ARRAY_DESCRIPTOR d = {.Width = h ? 4 : 16, .Height = h ? 4 : 0, .Format = fmts[i],
                                          .NumChannels = chans[c]};
                hipArray_t x = NULL;
                HIP_OK(hipArrayCreate(&x, &d));
                HIP_ARRAY_DESCRIPTOR g;
                memset(&g, 0xff, sizeof(g));
                HIP_OK(hipArrayGetDescriptor(&g, x));
                CHECK(g.Width == d.Width && g.Height == d.Height && g.Format == fmts[i] &&
                      g.NumChannels == chans[c]);
                HIP_OK(hipArrayDestroy(x));
            }

    /* 3D driver array of 1024 bytes × 4 × 2 floats */
    HIP_ARRAY3D_DESCRIPTOR d3 = {.Width = 1024 / sizeof(float), .Height = 4, .Depth = 2,
                                 .Format = HIP_AD_FORMAT_FLOAT, .NumChannels = 1, .Flags = 0};
    HIP_OK(hipArray3DCreate(&a, &d3));
    HIP_ARRAY3D_DESCRIPTOR g3;
    memset(&g3, 0xff, sizeof(g3));
    HIP_OK(hipArray3DGetDescriptor(&g3, a));
    CHECK(g3.Width == 256 && g3.Height == 4 && g3.Depth == 2 && g3.Format == HIP_AD_FORMAT_FLOAT &&
          g3.NumChannels == 1 && g3.Flags == 0);
    HIP_OK(hipArrayDestroy(a));
    CHECK_HIP(hipArray3DGetDescriptor(&g3, a), hipErrorInvalidHandle);

    /* hip-tests Unit_hipGetProcAddress_MemoryApisArrayRelated: a 2D driver array's info */
    HIP_ARRAY_DESCRIPTOR d2 = {.Width = 64, .Height = 64, .Format = HIP_AD_FORMAT_FLOAT, .NumChannels = 1};
    HIP_OK(hipArrayCreate(&a, &d2));
    flags = 1;
    memset(&e, 0xff, sizeof e);
    HIP_OK(hipArrayGetInfo(&desc, &e, &flags, a));
    CHECK(desc.x == 32 && desc.y == 0 && desc.z == 0 && desc.w == 0 && desc.f == hipChannelFormatKindFloat);
    CHECK(e.width == 64 && e.height == 64 && e.depth == 0 && flags == 0);
    HIP_OK(hipFreeArray(a));
    CHECK_HIP(hipArrayGetInfo(&desc, &e, &flags, a), hipErrorInvalidHandle);

    /* a device pointer is no array (Unit_hipArrayGetDescriptor_Negative_Scenarios) */
    void *dptr = NULL;
    HIP_OK(hipMalloc(&dptr, 1024));
    HIP_ARRAY_DESCRIPTOR g;
    CHECK_HIP(hipArrayGetDescriptor(&g, (hipArray_t)dptr), hipErrorInvalidHandle);
    CHECK_HIP(hipArray3DGetDescriptor(&g3, (hipArray_t)dptr), hipErrorInvalidHandle);
    CHECK_HIP(hipArrayGetInfo(&desc, &e, &flags, (hipArray_t)dptr), hipErrorInvalidHandle);
    HIP_OK(hipFree(dptr));
}
