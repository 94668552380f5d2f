/*
 * Textures, surfaces and OpenGL interop: hipkfd has no image path
 * (hipDeviceAttributeImageSupport = 0), so every texture, surface and GL entry point checks its
 * arguments as clr does (hip_texture.cpp, hip_surface.cpp, hip_gl.cpp, hipModuleGetTexRef of
 * hip_module.cpp: null pointers, flags, dims, with clr's codes and in clr's order) and then
 * answers hipErrorNotSupported, recorded as the thread's last error, with nothing written and
 * nothing changed. Plus the ROCm 7 layouts of the texture structs in our header.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stddef.h>

/* A pointer that is not null and never dereferenced by the runtime. */
#define FAKE(type) ((type)(uintptr_t)0x1000)

/* `call` returns `expected`, and so does hipGetLastError after it (errors are recorded). */
#define CHECK_RECORDED(call, expected)                                                         \
    do {                                                                                       \
        (void)hipGetLastError();                                                               \
        CHECK_HIP(call, expected);                                                             \
        CHECK_HIP(hipGetLastError(), expected);                                                \
    } while (0)

#define NS hipErrorNotSupported
#define INVAL hipErrorInvalidValue

TEST(tex_image_support_is_zero)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int d = 0; d < n; d++) {
        int v = -1;
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeImageSupport, d));
        CHECKF(v == 0, "device %d: ImageSupport = %d", d, v);
    }
}

TEST(tex_struct_layouts_are_rocm7)
{
    /* gcc on AMD's driver_types.h / texture_types.h (ROCm 5.2 .. 7: unchanged), x86-64. */
    CHECK(sizeof(hipResourceDesc) == 64);
    CHECK(offsetof(hipResourceDesc, res) == 8);
    CHECK(offsetof(hipResourceDesc, res.pitch2D.desc) == 16);
    CHECK(offsetof(hipResourceDesc, res.pitch2D.pitchInBytes) == 56);
    CHECK(sizeof(HIP_RESOURCE_DESC) == 144);
    CHECK(offsetof(HIP_RESOURCE_DESC, flags) == 136);
    CHECK(offsetof(HIP_RESOURCE_DESC, res.pitch2D.width) == 24);
    CHECK(sizeof(hipTextureDesc) == 64);
    CHECK(offsetof(hipTextureDesc, borderColor) == 24);
    CHECK(offsetof(hipTextureDesc, maxMipmapLevelClamp) == 60);
    CHECK(sizeof(HIP_TEXTURE_DESC) == 104);
    CHECK(offsetof(HIP_TEXTURE_DESC, borderColor) == 40);
    CHECK(sizeof(struct hipResourceViewDesc) == 48);
    CHECK(offsetof(struct hipResourceViewDesc, lastLayer) == 44);
    CHECK(sizeof(HIP_RESOURCE_VIEW_DESC) == 112);
    CHECK(sizeof(textureReference) == 88);
    CHECK(offsetof(textureReference, channelDesc) == 24);
    CHECK(offsetof(textureReference, textureObject) == 72);
    CHECK(offsetof(textureReference, format) == 84);
    CHECK(sizeof(struct surfaceReference) == 8);
    CHECK(sizeof(hipTextureObject_t) == 8 && sizeof(hipSurfaceObject_t) == 8);
    CHECK(HIP_TRSA_OVERRIDE_FORMAT == 1 && HIP_TRSF_NORMALIZED_COORDINATES == 2 && HIP_TRSF_SRGB == 0x10);
}

/* Descriptors a texture of 256 floats in device memory would be made from. */
struct tex_args {
    void *mem;
    hipResourceDesc res;
    hipTextureDesc tex;
    struct hipResourceViewDesc view;
};

static struct tex_args tex_args(void)
{
    struct tex_args a;
    memset(&a, 0, sizeof a);
    HIP_OK(hipMalloc(&a.mem, 256 * sizeof(float)));
    a.res.resType = hipResourceTypeLinear;
    a.res.res.linear.devPtr = a.mem;
    a.res.res.linear.desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    a.res.res.linear.sizeInBytes = 256 * sizeof(float);
    a.tex.readMode = hipReadModeElementType;
    a.tex.filterMode = hipFilterModePoint;
    return a;
}

TEST(tex_objects_not_supported)
{
    struct tex_args a = tex_args();
    hipTextureObject_t obj = FAKE(hipTextureObject_t), before = obj;
    CHECK_RECORDED(hipCreateTextureObject(&obj, &a.res, &a.tex, NULL), NS);
    CHECK(obj == before);
    /* clr checks image support before the arguments: null ones say NotSupported too. */
    CHECK_RECORDED(hipCreateTextureObject(NULL, &a.res, &a.tex, NULL), NS);
    CHECK_RECORDED(hipCreateTextureObject(&obj, NULL, NULL, NULL), NS);

    CHECK_RECORDED(hipDestroyTextureObject(NULL), hipSuccess); /* a no-op, as clr */
    CHECK_RECORDED(hipDestroyTextureObject(FAKE(hipTextureObject_t)), NS);

    hipResourceDesc res;
    hipTextureDesc tex;
    struct hipResourceViewDesc view;
    memset(&res, 0xab, sizeof res);
    memset(&tex, 0xab, sizeof tex);
    memset(&view, 0xab, sizeof view);
    CHECK_RECORDED(hipGetTextureObjectResourceDesc(&res, FAKE(hipTextureObject_t)), NS);
    CHECK_RECORDED(hipGetTextureObjectResourceDesc(NULL, FAKE(hipTextureObject_t)), INVAL);
    CHECK_RECORDED(hipGetTextureObjectResourceDesc(&res, NULL), INVAL);
    CHECK_RECORDED(hipGetTextureObjectTextureDesc(&tex, FAKE(hipTextureObject_t)), NS);
    CHECK_RECORDED(hipGetTextureObjectTextureDesc(NULL, FAKE(hipTextureObject_t)), INVAL);
    CHECK_RECORDED(hipGetTextureObjectTextureDesc(&tex, NULL), INVAL);
    CHECK_RECORDED(hipGetTextureObjectResourceViewDesc(&view, FAKE(hipTextureObject_t)), NS);
    CHECK_RECORDED(hipGetTextureObjectResourceViewDesc(NULL, FAKE(hipTextureObject_t)), INVAL);
    CHECK_RECORDED(hipGetTextureObjectResourceViewDesc(&view, NULL), INVAL);
    CHECK_BYTES(&res, sizeof res, 0xab);
    CHECK_BYTES(&tex, sizeof tex, 0xab);
    CHECK_BYTES(&view, sizeof view, 0xab);
    HIP_OK(hipFree(a.mem));
}

TEST(tex_driver_objects_not_supported)
{
    HIP_RESOURCE_DESC res;
    HIP_TEXTURE_DESC tex;
    HIP_RESOURCE_VIEW_DESC view;
    memset(&res, 0, sizeof res);
    memset(&tex, 0, sizeof tex);
    memset(&view, 0, sizeof view);
    void *mem;
    HIP_OK(hipMalloc(&mem, 4096));
    res.resType = HIP_RESOURCE_TYPE_PITCH2D;
    res.res.pitch2D.devPtr = mem;
    res.res.pitch2D.format = HIP_AD_FORMAT_FLOAT;
    res.res.pitch2D.numChannels = 1;
    res.res.pitch2D.width = 16;
    res.res.pitch2D.height = 16;
    res.res.pitch2D.pitchInBytes = 256;
    hipTextureObject_t obj = NULL;
    CHECK_RECORDED(hipTexObjectCreate(&obj, &res, &tex, NULL), NS);
    CHECK_RECORDED(hipTexObjectCreate(&obj, &res, &tex, &view), NS);
    CHECK(obj == NULL);
    /* clr says hipSuccess and makes nothing for an empty pitch-2D resource; here: NotSupported. */
    res.res.pitch2D.width = 0;
    CHECK_RECORDED(hipTexObjectCreate(&obj, &res, &tex, NULL), NS);
    CHECK(obj == NULL);
    CHECK_RECORDED(hipTexObjectCreate(NULL, &res, &tex, NULL), INVAL);
    CHECK_RECORDED(hipTexObjectCreate(&obj, NULL, &tex, NULL), INVAL);
    CHECK_RECORDED(hipTexObjectCreate(&obj, &res, NULL, NULL), INVAL);

    CHECK_RECORDED(hipTexObjectDestroy(NULL), hipSuccess);
    CHECK_RECORDED(hipTexObjectDestroy(FAKE(hipTextureObject_t)), NS);

    memset(&res, 0xcd, sizeof res);
    CHECK_RECORDED(hipTexObjectGetResourceDesc(&res, FAKE(hipTextureObject_t)), NS);
    CHECK_RECORDED(hipTexObjectGetResourceDesc(NULL, FAKE(hipTextureObject_t)), INVAL);
    CHECK_RECORDED(hipTexObjectGetResourceDesc(&res, NULL), INVAL);
    CHECK_BYTES(&res, sizeof res, 0xcd);
    CHECK_RECORDED(hipTexObjectGetTextureDesc(&tex, FAKE(hipTextureObject_t)), NS);
    CHECK_RECORDED(hipTexObjectGetTextureDesc(NULL, FAKE(hipTextureObject_t)), INVAL);
    CHECK_RECORDED(hipTexObjectGetTextureDesc(&tex, NULL), INVAL);
    CHECK_RECORDED(hipTexObjectGetResourceViewDesc(&view, FAKE(hipTextureObject_t)), NS);
    CHECK_RECORDED(hipTexObjectGetResourceViewDesc(NULL, FAKE(hipTextureObject_t)), INVAL);
    CHECK_RECORDED(hipTexObjectGetResourceViewDesc(&view, NULL), INVAL);
    HIP_OK(hipFree(mem));
}

static textureReference texref_fresh(void)
{
    textureReference t;
    memset(&t, 0, sizeof t);
    t.filterMode = hipFilterModeLinear;
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = hipAddressModeClamp;
    t.channelDesc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    t.numChannels = 1;
    t.format = HIP_AD_FORMAT_FLOAT;
    return t;
}

TEST(tex_binding_not_supported)
{
    textureReference t = texref_fresh(), orig = t;
    hipChannelFormatDesc desc = t.channelDesc;
    void *mem;
    size_t offset = 77;
    HIP_OK(hipMalloc(&mem, 1 << 16));

    CHECK_RECORDED(hipBindTexture(&offset, &t, mem, &desc, 4096), NS);
    CHECK_RECORDED(hipBindTexture(NULL, &t, mem, &desc, 4096), NS);
    CHECK_RECORDED(hipBindTexture(&offset, NULL, mem, &desc, 4096), hipErrorInvalidSymbol);
    CHECK_RECORDED(hipBindTexture(&offset, &t, NULL, &desc, 4096), hipErrorNotFound);
    CHECK_RECORDED(hipBindTexture(&offset, &t, mem, NULL, 4096), INVAL);

    CHECK_RECORDED(hipBindTexture2D(&offset, &t, mem, &desc, 16, 16, 256), NS);
    CHECK_RECORDED(hipBindTexture2D(&offset, NULL, mem, &desc, 16, 16, 256), hipErrorUnknown);
    CHECK_RECORDED(hipBindTexture2D(&offset, &t, NULL, &desc, 16, 16, 256), hipErrorNotFound);
    CHECK_RECORDED(hipBindTexture2D(&offset, &t, mem, NULL, 16, 16, 256), INVAL);
    CHECK_RECORDED(hipBindTexture2D(&offset, &t, mem, &desc, 16, 16, 0), INVAL);
    CHECK(offset == 77);

    hipArray_t arr;
    HIP_OK(hipMallocArray(&arr, &desc, 16, 16, 0));
    CHECK_RECORDED(hipBindTextureToArray(&t, arr, &desc), NS);
    CHECK_RECORDED(hipBindTextureToArray(NULL, arr, &desc), INVAL);
    CHECK_RECORDED(hipBindTextureToArray(&t, NULL, &desc), INVAL);
    CHECK_RECORDED(hipBindTextureToArray(&t, arr, NULL), INVAL);

    hipMipmappedArray_t mip;
    hipExtent ext = {16, 16, 0};
    HIP_OK(hipMallocMipmappedArray(&mip, &desc, ext, 2, 0));
    CHECK_RECORDED(hipBindTextureToMipmappedArray(&t, mip, &desc), NS);
    CHECK_RECORDED(hipBindTextureToMipmappedArray(NULL, mip, &desc), hipErrorInvalidSymbol);
    CHECK_RECORDED(hipBindTextureToMipmappedArray(&t, NULL, &desc), INVAL);
    CHECK_RECORDED(hipBindTextureToMipmappedArray(&t, mip, NULL), INVAL);

    CHECK_RECORDED(hipUnbindTexture(&t), NS);
    CHECK_RECORDED(hipUnbindTexture(NULL), INVAL);

    const textureReference *got = FAKE(const textureReference *);
    CHECK_RECORDED(hipGetTextureReference(&got, &t), NS);
    CHECK_RECORDED(hipGetTextureReference(NULL, &t), INVAL);
    CHECK(got == FAKE(const textureReference *));

    CHECK_RECORDED(hipGetTextureAlignmentOffset(&offset, &t), NS);
    CHECK_RECORDED(hipGetTextureAlignmentOffset(&offset, NULL), hipErrorInvalidTexture);
    CHECK_RECORDED(hipGetTextureAlignmentOffset(NULL, &t), INVAL);
    CHECK(offset == 77);

    textureReference *mref = FAKE(textureReference *);
    CHECK_RECORDED(hipModuleGetTexRef(&mref, FAKE(hipModule_t), "tex"), NS);
    CHECK_RECORDED(hipModuleGetTexRef(NULL, FAKE(hipModule_t), "tex"), INVAL);
    CHECK_RECORDED(hipModuleGetTexRef(&mref, FAKE(hipModule_t), NULL), INVAL);
    CHECK_RECORDED(hipModuleGetTexRef(&mref, FAKE(hipModule_t), ""), INVAL);
    CHECK_RECORDED(hipModuleGetTexRef(&mref, NULL, "tex"), hipErrorInvalidHandle);
    CHECK(mref == FAKE(textureReference *));

    CHECK(memcmp(&t, &orig, sizeof t) == 0); /* nothing bound, nothing changed */
    HIP_OK(hipFreeMipmappedArray(mip));
    HIP_OK(hipFreeArray(arr));
    HIP_OK(hipFree(mem));
}

TEST(tex_texref_getters_not_supported)
{
    textureReference t = texref_fresh();
    hipDeviceptr_t dptr = FAKE(hipDeviceptr_t);
    hipArray_t arr = FAKE(hipArray_t);
    /* clr reads the reference's texture object first: none bound is an invalid value */
    CHECK_RECORDED(hipTexRefGetAddress(&dptr, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetArray(&arr, &t), INVAL);
    t.textureObject = FAKE(hipTextureObject_t);
    CHECK_RECORDED(hipTexRefGetAddress(&dptr, &t), NS);
    CHECK_RECORDED(hipTexRefGetArray(&arr, &t), NS);
    CHECK_RECORDED(hipTexRefGetAddress(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetAddress(&dptr, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetArray(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetArray(&arr, NULL), INVAL);
    CHECK(dptr == FAKE(hipDeviceptr_t) && arr == FAKE(hipArray_t));

    float border[4] = {1, 2, 3, 4}, bias = 5, lo = 6, hi = 7;
    enum hipTextureFilterMode fm = hipFilterModeLinear;
    enum hipTextureAddressMode am = hipAddressModeBorder;
    unsigned int flags = 99;
    hipArray_Format fmt = HIP_AD_FORMAT_HALF;
    int channels = 3, aniso = 8;
    hipMipmappedArray_t mip = FAKE(hipMipmappedArray_t);
    CHECK_RECORDED(hipTexRefGetBorderColor(border, &t), NS);
    CHECK_RECORDED(hipTexRefGetBorderColor(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetBorderColor(border, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetFilterMode(&fm, &t), NS);
    CHECK_RECORDED(hipTexRefGetFilterMode(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetFilterMode(&fm, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetFlags(&flags, &t), NS);
    CHECK_RECORDED(hipTexRefGetFlags(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetFlags(&flags, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetFormat(&fmt, &channels, &t), NS);
    CHECK_RECORDED(hipTexRefGetFormat(NULL, &channels, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetFormat(&fmt, NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetFormat(&fmt, &channels, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetMaxAnisotropy(&aniso, &t), NS);
    CHECK_RECORDED(hipTexRefGetMaxAnisotropy(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetMaxAnisotropy(&aniso, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapFilterMode(&fm, &t), NS);
    CHECK_RECORDED(hipTexRefGetMipmapFilterMode(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapFilterMode(&fm, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapLevelBias(&bias, &t), NS);
    CHECK_RECORDED(hipTexRefGetMipmapLevelBias(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapLevelBias(&bias, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapLevelClamp(&lo, &hi, &t), NS);
    CHECK_RECORDED(hipTexRefGetMipmapLevelClamp(NULL, &hi, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapLevelClamp(&lo, NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetMipmapLevelClamp(&lo, &hi, NULL), INVAL);
    CHECK_RECORDED(hipTexRefGetMipMappedArray(&mip, &t), NS);
    CHECK_RECORDED(hipTexRefGetMipMappedArray(NULL, &t), INVAL);
    CHECK_RECORDED(hipTexRefGetMipMappedArray(&mip, NULL), INVAL);
    /* clr checks image support before dim */
    CHECK_RECORDED(hipTexRefGetAddressMode(&am, &t, 0), NS);
    CHECK_RECORDED(hipTexRefGetAddressMode(&am, &t, 7), NS);
    CHECK_RECORDED(hipTexRefGetAddressMode(NULL, &t, 0), INVAL);
    CHECK_RECORDED(hipTexRefGetAddressMode(&am, NULL, 0), INVAL);
    /* nothing written */
    CHECK(border[0] == 1 && border[3] == 4 && bias == 5 && lo == 6 && hi == 7);
    CHECK(fm == hipFilterModeLinear && am == hipAddressModeBorder && flags == 99);
    CHECK(fmt == HIP_AD_FORMAT_HALF && channels == 3 && aniso == 8);
    CHECK(mip == FAKE(hipMipmappedArray_t));
}

TEST(tex_texref_setters_not_supported)
{
    textureReference t = texref_fresh(), orig = t;
    float border[4] = {0, 0, 0, 1};
    HIP_ARRAY_DESCRIPTOR ad = {16, 16, HIP_AD_FORMAT_FLOAT, 1};
    CHECK_RECORDED(hipTexRefSetFormat(&t, HIP_AD_FORMAT_SIGNED_INT8, 4), NS);
    CHECK_RECORDED(hipTexRefSetFormat(NULL, HIP_AD_FORMAT_SIGNED_INT8, 4), INVAL);
    CHECK_RECORDED(hipTexRefSetFlags(&t, HIP_TRSF_NORMALIZED_COORDINATES), NS);
    CHECK_RECORDED(hipTexRefSetFlags(NULL, 0), INVAL);
    CHECK_RECORDED(hipTexRefSetFilterMode(&t, hipFilterModePoint), NS);
    CHECK_RECORDED(hipTexRefSetFilterMode(NULL, hipFilterModePoint), INVAL);
    CHECK_RECORDED(hipTexRefSetMaxAnisotropy(&t, 4), NS);
    CHECK_RECORDED(hipTexRefSetMaxAnisotropy(NULL, 4), INVAL);
    CHECK_RECORDED(hipTexRefSetMipmapFilterMode(&t, hipFilterModePoint), NS);
    CHECK_RECORDED(hipTexRefSetMipmapFilterMode(NULL, hipFilterModePoint), INVAL);
    CHECK_RECORDED(hipTexRefSetMipmapLevelBias(&t, 1.5f), NS);
    CHECK_RECORDED(hipTexRefSetMipmapLevelBias(NULL, 1.5f), INVAL);
    CHECK_RECORDED(hipTexRefSetMipmapLevelClamp(&t, 0.f, 4.f), NS);
    CHECK_RECORDED(hipTexRefSetMipmapLevelClamp(NULL, 0.f, 4.f), INVAL);
    CHECK_RECORDED(hipTexRefSetBorderColor(&t, border), NS);
    CHECK_RECORDED(hipTexRefSetBorderColor(NULL, border), INVAL);
    CHECK_RECORDED(hipTexRefSetBorderColor(&t, NULL), INVAL);
    CHECK_RECORDED(hipTexRefSetAddressMode(&t, 2, hipAddressModeWrap), NS);
    CHECK_RECORDED(hipTexRefSetAddressMode(&t, 3, hipAddressModeWrap), INVAL);
    CHECK_RECORDED(hipTexRefSetAddressMode(&t, -1, hipAddressModeWrap), INVAL);
    CHECK_RECORDED(hipTexRefSetAddressMode(NULL, 0, hipAddressModeWrap), INVAL);

    void *mem;
    size_t off = 55;
    HIP_OK(hipMalloc(&mem, 1 << 16));
    CHECK_RECORDED(hipTexRefSetAddress(&off, &t, mem, 4096), NS);
    CHECK_RECORDED(hipTexRefSetAddress(&off, NULL, mem, 4096), hipErrorInvalidHandle);
    CHECK(off == 55);
    CHECK_RECORDED(hipTexRefSetAddress2D(&t, &ad, mem, 256), NS);
    CHECK_RECORDED(hipTexRefSetAddress2D(NULL, &ad, mem, 256), INVAL);
    CHECK_RECORDED(hipTexRefSetAddress2D(&t, NULL, mem, 256), INVAL);

    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t arr;
    HIP_OK(hipMallocArray(&arr, &desc, 16, 16, 0));
    CHECK_RECORDED(hipTexRefSetArray(&t, arr, HIP_TRSA_OVERRIDE_FORMAT), NS);
    CHECK_RECORDED(hipTexRefSetArray(&t, arr, 0), INVAL);
    CHECK_RECORDED(hipTexRefSetArray(NULL, arr, HIP_TRSA_OVERRIDE_FORMAT), INVAL);
    CHECK_RECORDED(hipTexRefSetArray(&t, NULL, HIP_TRSA_OVERRIDE_FORMAT), INVAL);
    hipMipmappedArray_t mip;
    hipExtent ext = {16, 16, 0};
    HIP_OK(hipMallocMipmappedArray(&mip, &desc, ext, 2, 0));
    CHECK_RECORDED(hipTexRefSetMipmappedArray(&t, mip, HIP_TRSA_OVERRIDE_FORMAT), NS);
    CHECK_RECORDED(hipTexRefSetMipmappedArray(&t, mip, 2), INVAL);
    CHECK_RECORDED(hipTexRefSetMipmappedArray(NULL, mip, HIP_TRSA_OVERRIDE_FORMAT), INVAL);
    CHECK_RECORDED(hipTexRefSetMipmappedArray(&t, NULL, HIP_TRSA_OVERRIDE_FORMAT), INVAL);

    CHECK(memcmp(&t, &orig, sizeof t) == 0); /* a failed setter changes nothing */
    HIP_OK(hipFreeMipmappedArray(mip));
    HIP_OK(hipFreeArray(arr));
    HIP_OK(hipFree(mem));
}

TEST(tex_1d_linear_max_width_not_supported)
{
    int n = hc_device_count();
    hipChannelFormatDesc f4 = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindFloat);
    hipChannelFormatDesc none = hipCreateChannelDesc(0, 0, 0, 0, hipChannelFormatKindNone);
    hipChannelFormatDesc bits4 = hipCreateChannelDesc(4, 0, 0, 0, hipChannelFormatKindUnsigned);
    size_t w = 123;
    for (int d = 0; d < n; d++)
        CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(&w, &f4, d), NS);
    CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(NULL, &f4, 0), INVAL);
    CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(&w, NULL, 0), INVAL);
    CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(&w, &f4, n), hipErrorInvalidDevice);
    CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(&w, &f4, -1), hipErrorInvalidDevice);
    CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(&w, &none, 0), INVAL);
    CHECK_RECORDED(hipDeviceGetTexture1DLinearMaxWidth(&w, &bits4, 0), INVAL); /* 4/8 = 0 bytes */
    CHECK(w == 123);
}

TEST(tex_surfaces_not_supported)
{
    hipChannelFormatDesc desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t arr;
    HIP_OK(hipMallocArray(&arr, &desc, 16, 16, hipArraySurfaceLoadStore));
    hipResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = hipResourceTypeArray;
    res.res.array.array = arr;
    hipSurfaceObject_t s = FAKE(hipSurfaceObject_t);
    CHECK_RECORDED(hipCreateSurfaceObject(&s, &res), NS);
    /* clr checks image support before the arguments */
    CHECK_RECORDED(hipCreateSurfaceObject(NULL, &res), NS);
    CHECK_RECORDED(hipCreateSurfaceObject(&s, NULL), NS);
    CHECK(s == FAKE(hipSurfaceObject_t));
    CHECK_RECORDED(hipDestroySurfaceObject(NULL), hipSuccess);
    CHECK_RECORDED(hipDestroySurfaceObject(FAKE(hipSurfaceObject_t)), NS);
    HIP_OK(hipFreeArray(arr));
}

TEST(tex_gl_interop_not_supported)
{
    unsigned int count = 42;
    int devices[4] = {7, 7, 7, 7};
    CHECK_RECORDED(hipGLGetDevices(&count, devices, 4, hipGLDeviceListAll), NS);
    CHECK_RECORDED(hipGLGetDevices(&count, devices, 4, hipGLDeviceListCurrentFrame), NS);
    CHECK_RECORDED(hipGLGetDevices(&count, devices, 4, hipGLDeviceListNextFrame), NS);
    CHECK_RECORDED(hipGLGetDevices(NULL, devices, 4, hipGLDeviceListAll), INVAL);
    CHECK_RECORDED(hipGLGetDevices(&count, NULL, 4, hipGLDeviceListAll), INVAL);
    CHECK_RECORDED(hipGLGetDevices(&count, devices, 0, hipGLDeviceListAll), INVAL);
    CHECK_RECORDED(hipGLGetDevices(&count, devices, 4, (hipGLDeviceList)9), INVAL);
    CHECK(count == 42 && devices[0] == 7 && devices[3] == 7);

    hipGraphicsResource *r = FAKE(hipGraphicsResource *);
    CHECK_RECORDED(hipGraphicsGLRegisterBuffer(&r, 1, hipGraphicsRegisterFlagsNone), NS);
    CHECK_RECORDED(hipGraphicsGLRegisterBuffer(&r, 1, hipGraphicsRegisterFlagsWriteDiscard), NS);
    CHECK_RECORDED(hipGraphicsGLRegisterBuffer(&r, 1, hipGraphicsRegisterFlagsSurfaceLoadStore), INVAL);
    CHECK_RECORDED(hipGraphicsGLRegisterBuffer(&r, 1, hipGraphicsRegisterFlagsTextureGather), INVAL);
    CHECK_RECORDED(hipGraphicsGLRegisterBuffer(&r, 1, 3), INVAL);
    CHECK_RECORDED(hipGraphicsGLRegisterBuffer(NULL, 1, hipGraphicsRegisterFlagsNone), INVAL);
    CHECK_RECORDED(hipGraphicsGLRegisterImage(&r, 1, 0x0DE1 /* GL_TEXTURE_2D */, hipGraphicsRegisterFlagsSurfaceLoadStore), NS);
    CHECK_RECORDED(hipGraphicsGLRegisterImage(&r, 1, 0x0DE1, 16), INVAL);
    CHECK_RECORDED(hipGraphicsGLRegisterImage(NULL, 1, 0x0DE1, hipGraphicsRegisterFlagsReadOnly), INVAL);
    CHECK(r == FAKE(hipGraphicsResource *));

    hipGraphicsResource_t res[2] = {FAKE(hipGraphicsResource_t), FAKE(hipGraphicsResource_t)};
    hipGraphicsResource_t with_null[2] = {FAKE(hipGraphicsResource_t), NULL};
    hipStream_t s, dead;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    CHECK_RECORDED(hipGraphicsMapResources(2, res, s), NS);
    CHECK_RECORDED(hipGraphicsMapResources(1, res, NULL), NS);
    CHECK_RECORDED(hipGraphicsMapResources(2, res, dead), hipErrorContextIsDestroyed);
    CHECK_RECORDED(hipGraphicsMapResources(0, res, s), INVAL);
    CHECK_RECORDED(hipGraphicsMapResources(-1, res, s), INVAL);
    CHECK_RECORDED(hipGraphicsMapResources(1, NULL, s), INVAL);
    CHECK_RECORDED(hipGraphicsMapResources(2, with_null, s), INVAL);
    CHECK_RECORDED(hipGraphicsUnmapResources(2, res, s), NS);
    CHECK_RECORDED(hipGraphicsUnmapResources(2, res, dead), hipErrorContextIsDestroyed);
    CHECK_RECORDED(hipGraphicsUnmapResources(0, res, s), INVAL);
    CHECK_RECORDED(hipGraphicsUnmapResources(2, with_null, s), INVAL);

    void *ptr = FAKE(void *);
    size_t size = 9;
    hipArray_t arr = FAKE(hipArray_t);
    CHECK_RECORDED(hipGraphicsResourceGetMappedPointer(&ptr, &size, res[0]), NS);
    CHECK_RECORDED(hipGraphicsResourceGetMappedPointer(NULL, &size, res[0]), INVAL);
    CHECK_RECORDED(hipGraphicsResourceGetMappedPointer(&ptr, NULL, res[0]), INVAL);
    CHECK_RECORDED(hipGraphicsResourceGetMappedPointer(&ptr, &size, NULL), INVAL);
    CHECK_RECORDED(hipGraphicsSubResourceGetMappedArray(&arr, res[0], 0, 0), NS);
    CHECK_RECORDED(hipGraphicsSubResourceGetMappedArray(NULL, res[0], 0, 0), INVAL);
    CHECK_RECORDED(hipGraphicsSubResourceGetMappedArray(&arr, NULL, 0, 0), INVAL);
    CHECK(ptr == FAKE(void *) && size == 9 && arr == FAKE(hipArray_t));
    CHECK_RECORDED(hipGraphicsUnregisterResource(res[0]), NS);
    CHECK_RECORDED(hipGraphicsUnregisterResource(NULL), INVAL);
    HIP_OK(hipStreamDestroy(s));
}
