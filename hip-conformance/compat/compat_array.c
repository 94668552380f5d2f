/*
 * Arrays and driver copies from a program built against ROCm 5.2's header and linked against
 * AMD's libamdhip64.so.5, run on hipkfd (tests/header_compat.rs): the public `struct hipArray` of
 * HIP 5.2 read through the handle, and `hip_Memcpy2D`/`HIP_MEMCPY3D` with ROCm 5's
 * `hipMemoryType` values (Host 0, Device 1, Array 2, Unified 3). Prints PASS.
 */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                                        \
    do {                                                                                \
        hipError_t e_ = (call);                                                         \
        if (e_ != hipSuccess) {                                                         \
            printf("FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #call, (int)e_);        \
            return 1;                                                                   \
        }                                                                               \
    } while (0)
#define CHECK(c)                                                                        \
    do {                                                                                \
        if (!(c)) {                                                                     \
            printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c);                          \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

int main(void)
{
    const size_t w = 64, h = 8, row = w * 4;
    hipChannelFormatDesc desc = hipCreateChannelDesc(16, 16, 0, 0, hipChannelFormatKindSigned);
    hipArray *a = NULL;
    OK(hipMallocArray(&a, &desc, w, h, hipArrayDefault));
    /* HIP 5.2's public struct, filled in as clr fills it */
    CHECK(a->width == w && a->height == h && a->depth == 0);
    CHECK(a->NumChannels == 2 && a->Format == HIP_AD_FORMAT_SIGNED_INT16);
    CHECK(a->desc.x == 16 && a->desc.y == 16 && a->desc.z == 0 && a->desc.f == hipChannelFormatKindSigned);
    CHECK(a->data != NULL);

    unsigned char *src = malloc(row * h), *out = malloc(row * h);
    for (size_t i = 0; i < row * h; i++)
        src[i] = (unsigned char)(i * 13 + 5);
    hip_Memcpy2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeHost; /* 0 in this header */
    c.srcHost = src;
    c.srcPitch = row;
    c.dstMemoryType = hipMemoryTypeArray; /* 2 in this header */
    c.dstArray = a;
    c.WidthInBytes = row;
    c.Height = h;
    OK(hipMemcpyParam2D(&c));
    void *dev = NULL;
    OK(hipMalloc(&dev, row * h));
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = hipMemoryTypeArray;
    c.srcArray = a;
    c.dstMemoryType = hipMemoryTypeDevice; /* 1 in this header */
    c.dstDevice = dev;
    c.dstPitch = row;
    c.WidthInBytes = row;
    c.Height = h;
    OK(hipMemcpyParam2D(&c));
    HIP_MEMCPY3D c3;
    memset(&c3, 0, sizeof(c3));
    c3.srcMemoryType = hipMemoryTypeUnified; /* 3 in this header */
    c3.srcDevice = dev;
    c3.srcPitch = row;
    c3.dstMemoryType = hipMemoryTypeHost;
    c3.dstHost = out;
    c3.dstPitch = row;
    c3.WidthInBytes = row;
    c3.Height = h;
    c3.Depth = 1;
    memset(out, 0, row * h);
    OK(hipDrvMemcpy3D(&c3));
    CHECK(memcmp(out, src, row * h) == 0);
    OK(hipFree(dev));
    OK(hipFreeArray(a));
    free(src);
    free(out);
    printf("PASS\n");
    return 0;
}
