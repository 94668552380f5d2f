/*
 * Virtual memory management: hipMemGetAllocationGranularity, hipMemAddressReserve,
 * hipMemAddressFree, hipMemCreate, hipMemRelease, hipMemMap, hipMemUnmap,
 * hipMemSetAccess, hipMemGetAccess, hipMemExportToShareableHandle,
 * hipMemImportFromShareableHandle, hipMemGetAllocationPropertiesFromHandle,
 * hipMemRetainAllocationHandle, hipMemMapArrayAsync.
 *
 * Expected codes: hip-tests catch/unit/virtualMemoryManagement (7.x where
 * 6.3 and 7.x differ; matrix in hip-tests-abi-issues.md §A.7) and the issue's
 * "beat stock ROCm" items: enforced read-only access, map offsets, both
 * import conventions, the address hint, the same dma-buf imported twice, host
 * chunks, no fd per chunk.
 *
 * Multi-process tests fork before any HIP call in the test process; the fd
 * travels over a socketpair with SCM_RIGHTS.
 */
#define _GNU_SOURCE
#include "proc.h"
#include "../fdpass.h"
#include "../shared.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <unistd.h>

#define RW hipMemAccessFlagsProtReadWrite
#define RO hipMemAccessFlagsProtRead

static hipMemAllocationProp dev_prop(int dev) { return vmm_device_prop(dev); }

static size_t granularity(int dev)
{
    hipMemAllocationProp p = dev_prop(dev);
    size_t g = 0;
    HIP_OK(hipMemGetAllocationGranularity(&g, &p, hipMemAllocationGranularityMinimum));
    return g;
}

static hipMemAccessDesc dev_desc(int dev, hipMemAccessFlags f) { return vmm_access_desc(dev, f); }

static void set_access(void *va, size_t size, int dev, hipMemAccessFlags f)
{
    hipMemAccessDesc d = dev_desc(dev, f);
    HIP_OK(hipMemSetAccess(va, size, &d, 1));
}

static unsigned long long get_access(void *va, int dev)
{
    hipMemLocation loc = {hipMemLocationTypeDevice, dev};
    unsigned long long f = 99;
    HIP_OK(hipMemGetAccess(&f, &loc, va));
    return f;
}

static hipMemGenericAllocationHandle_t create(int dev, size_t size)
{
    hipMemAllocationProp p = dev_prop(dev);
    hipMemGenericAllocationHandle_t h = NULL;
    HIP_OK(hipMemCreate(&h, size, &p, 0));
    REQUIRE(h != NULL);
    return h;
}

/* reserve + create on `dev` + map + read-write access for `dev`. */
struct vmm {
    void *va;
    size_t size;
    hipMemGenericAllocationHandle_t h;
};

static struct vmm vmm_alloc(int dev, size_t size)
{
    struct vmm v = {NULL, size, NULL};
    HIP_OK(hipMemAddressReserve(&v.va, size, 0, NULL, 0));
    v.h = create(dev, size);
    HIP_OK(hipMemMap(v.va, size, 0, v.h, 0));
    set_access(v.va, size, dev, RW);
    return v;
}

static void vmm_free(struct vmm *v)
{
    HIP_OK(hipMemUnmap(v->va, v->size));
    HIP_OK(hipMemRelease(v->h));
    HIP_OK(hipMemAddressFree(v->va, v->size));
}

static void h2d_pattern(void *d, size_t n, unsigned seed)
{
    void *h = xmalloc(n);
    pat_fill(h, n, seed);
    HIP_OK(hipMemcpy(d, h, n, hipMemcpyHostToDevice));
    free(h);
}

/* Maps chunk h at va (n bytes), gives `dev` read-write access, checks an H2D/D2H
 * round trip with pattern `seed`, and unmaps. */
static void roundtrip_at(void *va, size_t n, hipMemGenericAllocationHandle_t h, int dev, unsigned seed)
{
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    set_access(va, n, dev, RW);
    HIP_OK(hipSetDevice(dev));
    h2d_pattern(va, n, seed);
    check_dev_pattern(va, n, seed);
    HIP_OK(hipMemUnmap(va, n));
}

/* Whether the host can map all of device `dev`'s VRAM (large BAR): only then is
 * device VMM memory CPU-mapped. */
static int large_bar(int dev)
{
    int v = 0;
    HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeIsLargeBar, dev));
    return v;
}

static size_t vram_free(void)
{
    size_t fr = 0, total = 0;
    HIP_OK(hipMemGetInfo(&fr, &total));
    return fr;
}

/* ---- granularity ------------------------------------------------------------- */

TEST(vmm_granularity)
{
    int n = hc_device_count();
    for (int dev = 0; dev < n; dev++) {
        hipMemAllocationProp p = dev_prop(dev);
        size_t min = 0, rec = 0;
        HIP_OK(hipMemGetAllocationGranularity(&min, &p, hipMemAllocationGranularityMinimum));
        HIP_OK(hipMemGetAllocationGranularity(&rec, &p, hipMemAllocationGranularityRecommended));
        CHECK(min > 0 && (min & (min - 1)) == 0);
        CHECK(rec > 0 && (rec & (rec - 1)) == 0);
        CHECK(rec % min == 0);
        CHECK(min == 4096);
        CHECK(rec == 2 * MiB);
    }
    hipMemAllocationProp host = dev_prop(0);
    host.location.type = hipMemLocationTypeHost;
    size_t g = 0;
    HIP_OK(hipMemGetAllocationGranularity(&g, &host, hipMemAllocationGranularityMinimum));
    CHECK(g == 4096);
}

TEST(vmm_granularity_negative)
{
    hipMemAllocationProp p = dev_prop(0);
    size_t g = 0;
    CHECK_HIP(hipMemGetAllocationGranularity(NULL, &p, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAllocationGranularity(&g, NULL, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAllocationGranularity(&g, &p, (hipMemAllocationGranularity_flags)0xff), hipErrorInvalidValue);
    p.location.id = hc_device_count();
    CHECK_HIP(hipMemGetAllocationGranularity(&g, &p, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
    p.location.id = -1;
    CHECK_HIP(hipMemGetAllocationGranularity(&g, &p, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
    p = dev_prop(0);
    p.type = hipMemAllocationTypeInvalid;
    CHECK_HIP(hipMemGetAllocationGranularity(&g, &p, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
    p = dev_prop(0);
    p.location.type = hipMemLocationTypeInvalid;
    CHECK_HIP(hipMemGetAllocationGranularity(&g, &p, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
}

/* ---- create / release ---------------------------------------------------------- */

TEST(vmm_create_release_sizes)
{
    size_t g = granularity(0);
    for (int k = 1; k < 64; k++) {
        hipMemGenericAllocationHandle_t h = create(0, g * k);
        HIP_OK(hipMemRelease(h));
    }
}

TEST(vmm_create_negative)
{
    hipMemAllocationProp p = dev_prop(0);
    hipMemGenericAllocationHandle_t h = NULL;
    size_t g = granularity(0);
    CHECK_HIP(hipMemCreate(NULL, g, &p, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemCreate(&h, g, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemCreate(&h, 0, &p, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemCreate(&h, g - 1, &p, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemCreate(&h, g, &p, 1), hipErrorInvalidValue);
    p.type = hipMemAllocationTypeInvalid;
    CHECK_HIP(hipMemCreate(&h, g, &p, 0), hipErrorInvalidValue);
    p = dev_prop(0);
    p.location.type = hipMemLocationTypeInvalid;
    CHECK_HIP(hipMemCreate(&h, g, &p, 0), hipErrorInvalidValue);
    p = dev_prop(0);
    p.location.id = -1;
    CHECK_HIP(hipMemCreate(&h, g, &p, 0), hipErrorInvalidDevice);
    p.location.id = hc_device_count();
    CHECK_HIP(hipMemCreate(&h, g, &p, 0), hipErrorInvalidDevice);
    p = dev_prop(0);
    p.requestedHandleTypes = hipMemHandleTypeWin32;
    CHECK_HIP(hipMemCreate(&h, g, &p, 0), hipErrorNotSupported);
    p.requestedHandleTypes = (hipMemAllocationHandleType)0x100;
    CHECK_HIP(hipMemCreate(&h, g, &p, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemRelease(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemRelease((hipMemGenericAllocationHandle_t)&p), hipErrorInvalidValue);
    h = create(0, g);
    HIP_OK(hipMemRelease(h));
    CHECK_HIP(hipMemRelease(h), hipErrorInvalidValue);
}

/* A struct laid out as ROCm <= 5.2 declared hipMemAllocationProp (same 32 bytes):
 * compressionType@0, location@4, requestedHandleType@12, type@16, usage@20. */
TEST(vmm_rocm52_prop_layout)
{
    unsigned char raw[32];
    memset(raw, 0, sizeof raw);
    int loc_type = hipMemLocationTypeDevice, id = hc_device_count() - 1, fdt = 1, type = 1;
    memcpy(raw + 4, &loc_type, 4);
    memcpy(raw + 8, &id, 4);
    memcpy(raw + 12, &fdt, 4);
    memcpy(raw + 16, &type, 4);
    size_t g = 0;
    HIP_OK(hipMemGetAllocationGranularity(&g, (hipMemAllocationProp *)raw, hipMemAllocationGranularityMinimum));
    hipMemGenericAllocationHandle_t h = NULL;
    HIP_OK(hipMemCreate(&h, 2 * g, (hipMemAllocationProp *)raw, 0));
    unsigned char out[32];
    memset(out, 0xee, sizeof out);
    HIP_OK(hipMemGetAllocationPropertiesFromHandle((hipMemAllocationProp *)out, h));
    CHECK(memcmp(out, raw, 20) == 0);
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, 2 * g, 0, NULL, 0));
    roundtrip_at(va, 2 * g, h, id, 52);
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, 2 * g));
}

/* ---- reserve / free ------------------------------------------------------------ */

TEST(vmm_reserve_alignment_and_hint)
{
    size_t g = granularity(0);
    for (size_t a = 2; a <= 1 * GiB; a *= 2) {
        void *va = NULL;
        HIP_OK(hipMemAddressReserve(&va, g, a, NULL, 0));
        CHECKF((uintptr_t)va % a == 0, "alignment %zu: %p", a, va);
        HIP_OK(hipMemAddressFree(va, g));
    }
    /* The hint is honoured when the range is free. */
    void *a = NULL, *b = NULL, *c = NULL;
    HIP_OK(hipMemAddressReserve(&a, 4 * MiB, 2 * MiB, NULL, 0));
    HIP_OK(hipMemAddressFree(a, 4 * MiB));
    HIP_OK(hipMemAddressReserve(&b, 4 * MiB, 2 * MiB, a, 0));
    CHECK(b == a);
    /* ... and not when it is taken. */
    HIP_OK(hipMemAddressReserve(&c, 4 * MiB, 2 * MiB, a, 0));
    CHECK(c != NULL && c != a);
    HIP_OK(hipMemAddressFree(b, 4 * MiB));
    HIP_OK(hipMemAddressFree(c, 4 * MiB));
    /* 64 GiB of VA. */
    void *big = NULL;
    HIP_OK(hipMemAddressReserve(&big, 64 * GiB, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(0, 2 * MiB);
    roundtrip_at((char *)big + 64 * GiB - 2 * MiB, 2 * MiB, h, 0, 64);
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(big, 64 * GiB));
}

TEST(vmm_reserve_free_negative)
{
    size_t g = granularity(0);
    void *va = NULL;
    CHECK_HIP(hipMemAddressReserve(NULL, g, 0, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressReserve(&va, 0, 0, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressReserve(&va, g - 1, 0, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressReserve(&va, g, 3, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressReserve(&va, g, 0, NULL, 1), hipErrorInvalidValue);
    HIP_OK(hipMemAddressReserve(&va, 2 * g, 0, NULL, 0));
    CHECK_HIP(hipMemAddressFree(NULL, 2 * g), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressFree(va, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressFree(va, g), hipErrorInvalidValue);
    CHECK_HIP(hipMemAddressFree((char *)va + g, g), hipErrorInvalidValue);
    hipMemGenericAllocationHandle_t h = create(0, g);
    HIP_OK(hipMemMap(va, g, 0, h, 0));
    CHECK_HIP(hipMemAddressFree(va, 2 * g), hipErrorInvalidValue); /* still mapped */
    HIP_OK(hipMemUnmap(va, g));
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, 2 * g));
    CHECK_HIP(hipMemAddressFree(va, 2 * g), hipErrorInvalidValue);
}

/* ---- map / unmap --------------------------------------------------------------- */

TEST(vmm_basic_roundtrip)
{
    size_t n = 4 * MiB;
    struct vmm v = vmm_alloc(0, n);
    h2d_pattern(v.va, n, 1);
    check_dev_pattern(v.va, n, 1);
    HIP_OK(hipMemset((char *)v.va + 100, 0x5a, 1000));
    unsigned char *h = xmalloc(n);
    HIP_OK(hipMemcpy(h, v.va, n, hipMemcpyDeviceToHost));
    CHECK_BYTES(h + 100, 1000, 0x5a);
    CHECK(h[99] == pat_byte(99, 1) && h[1100] == pat_byte(1100, 1));
    /* Device memory to every other API. */
    void *d = dev_pattern(n, 2);
    HIP_OK(hipMemcpy(v.va, d, n, hipMemcpyDeviceToDevice));
    check_dev_pattern(v.va, n, 2);
    HIP_OK(hipMemcpy(d, v.va, n, hipMemcpyDefault));
    check_dev_pattern(d, n, 2);
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, (char *)v.va + 5));
    CHECK(at.type == hipMemoryTypeDevice && at.device == 0);
    void *base = NULL;
    size_t size = 0;
    HIP_OK(hipMemGetAddressRange(&base, &size, (char *)v.va + n - 1));
    CHECK(base == v.va && size == n);
    CHECK_HIP(hipFree(v.va), hipErrorInvalidValue);
    CHECK_HIP(hipIpcGetMemHandle((hipIpcMemHandle_t *)h, v.va), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy(h, v.va, n + 1, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    HIP_OK(hipMemUnmap(v.va, n));
    /* After unmap the VA is reserved but not memory. */
    CHECK_HIP(hipMemcpy(v.va, h, n, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(v.va, 0, 16), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttributes(&at, v.va), hipErrorInvalidValue);
    HIP_OK(hipMemRelease(v.h));
    HIP_OK(hipMemAddressFree(v.va, n));
    HIP_OK(hipFree(d));
    free(h);
}

TEST(vmm_release_before_unmap)
{
    size_t n = 8 * MiB;
    size_t free0 = vram_free();
    struct vmm v = vmm_alloc(0, n);
    CHECK(vram_free() <= free0 - n);
    HIP_OK(hipMemRelease(v.h));
    h2d_pattern(v.va, n, 3); /* still alive: mapped */
    check_dev_pattern(v.va, n, 3);
    CHECK(vram_free() <= free0 - n);
    HIP_OK(hipMemUnmap(v.va, n));
    CHECK(vram_free() == free0); /* the last mapping took the chunk with it */
    CHECK_HIP(hipMemRelease(v.h), hipErrorInvalidValue);
    HIP_OK(hipMemAddressFree(v.va, n));
}

TEST(vmm_map_unmap_negative)
{
    size_t g = granularity(0);
    void *va = NULL, *va2 = NULL;
    HIP_OK(hipMemAddressReserve(&va, 4 * g, 0, NULL, 0));
    HIP_OK(hipMemAddressReserve(&va2, 4 * g, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(0, 2 * g);
    int stack = 0;
    CHECK_HIP(hipMemMap(NULL, 2 * g, 0, h, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemMap(va, 0, 0, h, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemMap(&stack, 2 * g, 0, h, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemMap(va, 2 * g, 0, h, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemMap(va, 2 * g, 0, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemMap(va, 2 * g, 1, h, 0), hipErrorInvalidValue);        /* unaligned offset */
    CHECK_HIP(hipMemMap(va, 2 * g, g, h, 0), hipErrorInvalidValue);        /* past the chunk */
    CHECK_HIP(hipMemMap(va, 3 * g, 0, h, 0), hipErrorInvalidValue);        /* larger than the chunk */
    CHECK_HIP(hipMemMap((char *)va + 1, g, 0, h, 0), hipErrorInvalidValue); /* unaligned VA */
    CHECK_HIP(hipMemMap((char *)va + 3 * g, 2 * g, 0, h, 0), hipErrorInvalidValue); /* past the reservation */
    HIP_OK(hipMemMap(va, 2 * g, 0, h, 0));
    CHECK_HIP(hipMemMap((char *)va + g, g, 0, h, 0), hipErrorInvalidValue); /* overlap */
    CHECK_HIP(hipMemUnmap(NULL, 2 * g), hipErrorInvalidValue);
    CHECK_HIP(hipMemUnmap(va, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemUnmap(va, 2 * g - 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemUnmap(va, g), hipErrorInvalidValue);                    /* part of a mapping */
    CHECK_HIP(hipMemUnmap(va, 3 * g), hipErrorInvalidValue);                /* past the mapping */
    CHECK_HIP(hipMemUnmap((char *)va + g, g), hipErrorInvalidValue);
    CHECK_HIP(hipMemUnmap(va2, g), hipErrorInvalidValue);                   /* reserved, unmapped */
    HIP_OK(hipMemUnmap(va, 2 * g));
    CHECK_HIP(hipMemUnmap(va, 2 * g), hipErrorInvalidValue);
    HIP_OK(hipMemRelease(h));
    CHECK_HIP(hipMemMap(va, 2 * g, 0, h, 0), hipErrorInvalidValue);        /* released handle */
    HIP_OK(hipMemAddressFree(va, 4 * g));
    HIP_OK(hipMemAddressFree(va2, 4 * g));
}

/* CUDA allows a granularity-aligned offset and a smaller size; ROCm requires offset 0. */
TEST(vmm_map_with_offset)
{
    size_t g = granularity(0), n = 8 * g;
    struct vmm whole = vmm_alloc(0, n);
    h2d_pattern(whole.va, n, 7);
    void *part = NULL;
    HIP_OK(hipMemAddressReserve(&part, 2 * g, 0, NULL, 0));
    HIP_OK(hipMemMap(part, 2 * g, 3 * g, whole.h, 0));
    set_access(part, 2 * g, 0, RW);
    unsigned char *h = xmalloc(n), *want = xmalloc(n);
    pat_fill(want, n, 7);
    HIP_OK(hipMemcpy(h, part, 2 * g, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, want + 3 * g, 2 * g) == 0);
    HIP_OK(hipMemset(part, 0xab, g)); /* visible through the whole mapping at 3g */
    HIP_OK(hipMemcpy(h, whole.va, n, hipMemcpyDeviceToHost));
    CHECK_BYTES(h + 3 * g, g, 0xab);
    CHECK(memcmp(h, want, 3 * g) == 0 && memcmp(h + 4 * g, want + 4 * g, 4 * g) == 0);
    HIP_OK(hipMemUnmap(part, 2 * g));
    HIP_OK(hipMemAddressFree(part, 2 * g));
    vmm_free(&whole);
    free(h);
    free(want);
}

TEST(vmm_one_chunk_many_vas)
{
    size_t n = 2 * MiB;
    hipMemGenericAllocationHandle_t h = create(0, n);
    void *va[3];
    for (int i = 0; i < 3; i++) {
        HIP_OK(hipMemAddressReserve(&va[i], n, 0, NULL, 0));
        HIP_OK(hipMemMap(va[i], n, 0, h, 0));
        set_access(va[i], n, 0, RW);
    }
    for (int i = 0; i < 3; i++) {
        h2d_pattern(va[i], n, 10 + i);
        for (int j = 0; j < 3; j++)
            check_dev_pattern(va[j], n, 10 + i); /* aliases see each other's writes */
    }
    for (int i = 0; i < 3; i++) {
        HIP_OK(hipMemUnmap(va[i], n));
        HIP_OK(hipMemAddressFree(va[i], n));
    }
    /* Remapped many times at one VA. */
    void *v = NULL;
    HIP_OK(hipMemAddressReserve(&v, n, 0, NULL, 0));
    for (int i = 0; i < 20; i++) {
        HIP_OK(hipMemMap(v, n, 0, h, 0));
        set_access(v, n, 0, RW);
        if (i > 0)
            check_dev_pattern(v, n, 100 + i - 1);
        h2d_pattern(v, n, 100 + i);
        HIP_OK(hipMemUnmap(v, n));
    }
    HIP_OK(hipMemAddressFree(v, n));
    HIP_OK(hipMemRelease(h));
}

/* Three chunks back one contiguous range; copies and fills run across them. */
TEST(vmm_contiguous_range_of_chunks)
{
    size_t c = 2 * MiB, n = 3 * c;
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h[3];
    int order[3] = {2, 0, 1};
    for (int i = 0; i < 3; i++) {
        h[i] = create(0, c);
        HIP_OK(hipMemMap((char *)va + order[i] * c, c, 0, h[i], 0));
    }
    set_access(va, n, 0, RW); /* one call over three mappings */
    CHECK(get_access((char *)va + n - 1, 0) == RW);
    h2d_pattern(va, n, 21);
    check_dev_pattern(va, n, 21);
    HIP_OK(hipMemset((char *)va + c - 10, 0x11, 20)); /* across a chunk boundary */
    unsigned char *b = xmalloc(n);
    HIP_OK(hipMemcpy(b, va, n, hipMemcpyDeviceToHost));
    CHECK_BYTES(b + c - 10, 20, 0x11);
    /* Unmapping the whole range at once. */
    HIP_OK(hipMemUnmap(va, n));
    for (int i = 0; i < 3; i++)
        HIP_OK(hipMemRelease(h[i]));
    HIP_OK(hipMemAddressFree(va, n));
    free(b);
}

/* hip-tests GrowVMM: unmap, free the range, reserve a bigger one, map the old chunk
 * and a new one: the old data is where it was, relative to the new base. */
TEST(vmm_grow_by_reserving_again)
{
    size_t c = 2 * MiB;
    struct vmm v = vmm_alloc(0, c);
    h2d_pattern(v.va, c, 33);
    HIP_OK(hipMemUnmap(v.va, c));
    HIP_OK(hipMemAddressFree(v.va, c));
    void *big = NULL;
    HIP_OK(hipMemAddressReserve(&big, 2 * c, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h2 = create(0, c);
    HIP_OK(hipMemMap(big, c, 0, v.h, 0));
    HIP_OK(hipMemMap((char *)big + c, c, 0, h2, 0));
    set_access(big, 2 * c, 0, RW);
    check_dev_pattern(big, c, 33);
    h2d_pattern((char *)big + c, c, 34);
    check_dev_pattern((char *)big + c, c, 34);
    HIP_OK(hipMemUnmap(big, 2 * c));
    HIP_OK(hipMemRelease(v.h));
    HIP_OK(hipMemRelease(h2));
    HIP_OK(hipMemAddressFree(big, 2 * c));
}

/* hipMemAllocationTypeUncached (AMD, ROCm 7): an uncached VRAM chunk works like any other. */
TEST(vmm_uncached_chunk)
{
    hipMemAllocationProp p = dev_prop(0);
    p.type = hipMemAllocationTypeUncached;
    size_t g = 0;
    HIP_OK(hipMemGetAllocationGranularity(&g, &p, hipMemAllocationGranularityMinimum));
    hipMemGenericAllocationHandle_t h = NULL;
    HIP_OK(hipMemCreate(&h, 4 * g, &p, 0));
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, 4 * g, 0, NULL, 0));
    roundtrip_at(va, 4 * g, h, 0, 35);
    hipMemAllocationProp q;
    HIP_OK(hipMemGetAllocationPropertiesFromHandle(&q, h));
    CHECK(q.type == hipMemAllocationTypeUncached);
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, 4 * g));
    p.type = hipMemAllocationTypeManaged; /* not a VMM type */
    CHECK_HIP(hipMemCreate(&h, 4 * g, &p, 0), hipErrorInvalidValue);
}

/* ---- access ------------------------------------------------------------------- */

TEST(vmm_get_set_access)
{
    int ndev = hc_device_count();
    size_t n = 4 * MiB;
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(0, n);
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    for (int d = 0; d < ndev; d++)
        CHECK(get_access(va, d) == hipMemAccessFlagsProtNone);
    set_access(va, n, 0, RW);
    CHECK(get_access(va, 0) == RW);
    CHECK(get_access((char *)va + n - 1, 0) == RW);
    for (int d = 1; d < ndev; d++)
        CHECK(get_access(va, d) == hipMemAccessFlagsProtNone);
    hipMemLocation loc = {hipMemLocationTypeDevice, 0};
    unsigned long long f = 0;
    CHECK_HIP(hipMemGetAccess(NULL, &loc, va), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAccess(&f, NULL, va), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAccess(&f, &loc, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAccess(&f, &loc, (char *)va + n), hipErrorInvalidValue);
    /* Transitions: RW -> R -> RW, None -> RW. */
    set_access(va, n, 0, RO);
    CHECK(get_access(va, 0) == RO);
    set_access(va, n, 0, RW);
    h2d_pattern(va, n, 31);
    set_access(va, n, 0, hipMemAccessFlagsProtNone);
    CHECK(get_access(va, 0) == hipMemAccessFlagsProtNone);
    unsigned char *b = xmalloc(n);
    CHECK_HIP(hipMemcpy(b, va, n, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    set_access(va, n, 0, RW);
    check_dev_pattern(va, n, 31);
    HIP_OK(hipMemUnmap(va, n));
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, n));
    free(b);
}

TEST(vmm_set_access_negative)
{
    int ndev = hc_device_count();
    size_t g = granularity(0), n = 4 * g;
    void *va = NULL, *free_va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    HIP_OK(hipMemAddressReserve(&free_va, n, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(0, n);
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    hipMemAccessDesc d = dev_desc(0, RW);
    int stack = 0;
    CHECK_HIP(hipMemSetAccess(NULL, n, &d, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(&stack, n, &d, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(va, 0, &d, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(va, n + 1, &d, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(va, n - 1, &d, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(va, n - g, &d, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(va, n, NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(va, n, &d, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemSetAccess(free_va, n, &d, 1), hipErrorInvalidValue);
    d.location.type = hipMemLocationTypeInvalid;
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue);
    d.location.type = hipMemLocationTypeHost; /* host access to device memory */
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue);
    d.location.type = hipMemLocationTypeDevice;
    d.location.id = -1;
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue);
    d.location.id = ndev;
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue);
    d.location.id = 0;
    d.flags = (hipMemAccessFlags)-1;
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue);
    d.flags = (hipMemAccessFlags)2;
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue);
    /* A failed call changed nothing. */
    CHECK(get_access(va, 0) == hipMemAccessFlagsProtNone);
    HIP_OK(hipMemUnmap(va, n));
    d.flags = RW;
    CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidValue); /* after unmap */
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, n));
    HIP_OK(hipMemAddressFree(free_va, n));
}

/* The CPU reaches the VA after hipMemSetAccess (hip-tests AccessDirectlyFromHost). */
TEST(vmm_host_dereference)
{
    if (!large_bar(0))
        SKIP("small BAR: the host cannot map device 0's VRAM");
    size_t n = 2 * MiB;
    struct vmm v = vmm_alloc(0, n);
    volatile uint32_t *p = v.va;
    for (size_t i = 0; i < n / 4; i += 1021)
        p[i] = (uint32_t)i * 3u;
    uint32_t *h = xmalloc(n);
    HIP_OK(hipMemcpy(h, v.va, n, hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n / 4; i += 1021)
        CHECKF(h[i] == (uint32_t)i * 3u, "word %zu", i);
    HIP_OK(hipMemset(v.va, 0x42, n));
    CHECK(p[12345] == 0x42424242u);
    vmm_free(&v);
    free(h);
}

/* ProtRead is read-only for real: a write is refused, the memory is unchanged. */
TEST(vmm_read_only_enforced)
{
    size_t n = 2 * MiB;
    struct vmm v = vmm_alloc(0, n);
    h2d_pattern(v.va, n, 41);
    set_access(v.va, n, 0, RO);
    unsigned char *h = xmalloc(n);
    memset(h, 0x77, n);
    CHECK_HIP(hipMemcpy(v.va, h, n, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy((char *)v.va + n - 4, h, 4, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(v.va, 0, n), hipErrorInvalidValue);
    void *d = dev_pattern(n, 42);
    CHECK_HIP(hipMemcpy(v.va, d, n, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    /* Reads still work, and nothing was written. */
    check_dev_pattern(v.va, n, 41);
    HIP_OK(hipMemcpy(d, v.va, n, hipMemcpyDeviceToDevice));
    check_dev_pattern(d, n, 41);
    /* The CPU mapping is read-only too: a write faults. */
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* AddressSanitizer (`make asan`) would catch it */
        ((volatile unsigned char *)v.va)[0] = 1;
        _exit(0);
    }
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "child status %#x", st);
    set_access(v.va, n, 0, RW);
    HIP_OK(hipMemcpy(v.va, h, n, hipMemcpyHostToDevice));
    check_dev_bytes(v.va, n, 0x77);
    vmm_free(&v);
    HIP_OK(hipFree(d));
    free(h);
}

/* ---- handles ------------------------------------------------------------------ */

TEST(vmm_retain_and_properties)
{
    size_t n = 4 * MiB;
    struct vmm v = vmm_alloc(0, n);
    hipMemGenericAllocationHandle_t r = NULL;
    HIP_OK(hipMemRetainAllocationHandle(&r, (char *)v.va + n / 2 + 3));
    CHECK(r == v.h);
    hipMemAllocationProp p;
    memset(&p, 0xcc, sizeof p);
    HIP_OK(hipMemGetAllocationPropertiesFromHandle(&p, r));
    CHECK(p.type == hipMemAllocationTypePinned);
    CHECK(p.location.type == hipMemLocationTypeDevice && p.location.id == 0);
    CHECK(p.requestedHandleTypes == hipMemHandleTypePosixFileDescriptor);
    HIP_OK(hipMemRelease(r));
    CHECK_HIP(hipMemRetainAllocationHandle(NULL, v.va), hipErrorInvalidValue);
    CHECK_HIP(hipMemRetainAllocationHandle(&r, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemRetainAllocationHandle(&r, (char *)v.va + n), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAllocationPropertiesFromHandle(NULL, v.h), hipErrorInvalidValue);
    CHECK_HIP(hipMemGetAllocationPropertiesFromHandle(&p, NULL), hipErrorInvalidValue);
    /* Release, then retain from the mapping: the reference comes back. */
    HIP_OK(hipMemRelease(v.h));
    CHECK_HIP(hipMemGetAllocationPropertiesFromHandle(&p, v.h), hipErrorInvalidValue);
    HIP_OK(hipMemRetainAllocationHandle(&r, v.va));
    CHECK(r == v.h);
    HIP_OK(hipMemUnmap(v.va, n));
    CHECK_HIP(hipMemRetainAllocationHandle(&r, v.va), hipErrorInvalidValue);
    HIP_OK(hipMemRelease(r));
    HIP_OK(hipMemAddressFree(v.va, n));
}

TEST(vmm_export_import_same_process)
{
    size_t n = 2 * MiB;
    struct vmm v = vmm_alloc(0, n);
    h2d_pattern(v.va, n, 51);
    int fd = -1;
    HIP_OK(hipMemExportToShareableHandle(&fd, v.h, hipMemHandleTypePosixFileDescriptor, 0));
    REQUIRE(fd > 2);
    /* Both conventions, and the same dma-buf twice: one chunk, one more reference each. */
    hipMemGenericAllocationHandle_t a = NULL, b = NULL;
    HIP_OK(hipMemImportFromShareableHandle(&a, (void *)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor));
    HIP_OK(hipMemImportFromShareableHandle(&b, &fd, hipMemHandleTypePosixFileDescriptor));
    CHECK(a == b);
    CHECK(a == v.h);
    CHECK(fcntl(fd, F_GETFD) >= 0); /* the caller keeps the fd */
    void *va2 = NULL;
    HIP_OK(hipMemAddressReserve(&va2, n, 0, NULL, 0));
    HIP_OK(hipMemMap(va2, n, 0, a, 0));
    set_access(va2, n, 0, RW);
    check_dev_pattern(va2, n, 51);
    HIP_OK(hipMemUnmap(va2, n));
    HIP_OK(hipMemAddressFree(va2, n));
    HIP_OK(hipMemRelease(a));
    HIP_OK(hipMemRelease(b));
    close(fd);
    /* Negatives. */
    int out = -1;
    CHECK_HIP(hipMemExportToShareableHandle(NULL, v.h, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemExportToShareableHandle(&out, NULL, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemExportToShareableHandle(&out, v.h, hipMemHandleTypeWin32, 0), hipErrorInvalidValue);
    CHECK_HIP(hipMemExportToShareableHandle(&out, v.h, hipMemHandleTypePosixFileDescriptor, 1), hipErrorInvalidValue);
    hipMemAllocationProp p = dev_prop(0);
    p.requestedHandleTypes = hipMemHandleTypeNone;
    hipMemGenericAllocationHandle_t plain = NULL;
    HIP_OK(hipMemCreate(&plain, n, &p, 0));
    CHECK_HIP(hipMemExportToShareableHandle(&out, plain, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
    HIP_OK(hipMemRelease(plain));
    CHECK_HIP(hipMemImportFromShareableHandle(NULL, (void *)3, hipMemHandleTypePosixFileDescriptor), hipErrorInvalidValue);
    CHECK_HIP(hipMemImportFromShareableHandle(&a, NULL, hipMemHandleTypePosixFileDescriptor), hipErrorInvalidValue);
    CHECK_HIP(hipMemImportFromShareableHandle(&a, (void *)3, hipMemHandleTypeWin32), hipErrorInvalidValue);
    int pipefd[2];
    REQUIRE(pipe(pipefd) == 0);
    CHECK_HIP(hipMemImportFromShareableHandle(&a, (void *)(uintptr_t)pipefd[0], hipMemHandleTypePosixFileDescriptor),
              hipErrorInvalidValue);
    CHECK_HIP(hipMemImportFromShareableHandle(&a, (void *)(uintptr_t)9999, hipMemHandleTypePosixFileDescriptor),
              hipErrorInvalidValue);
    close(pipefd[0]);
    close(pipefd[1]);
    vmm_free(&v);
}

static void sync_byte(int sock, int send)
{
    char b = 's';
    if (send)
        REQUIRE(write(sock, &b, 1) == 1);
    else
        REQUIRE(read(sock, &b, 1) == 1);
}

/* The owner exports a chunk; another process imports it, maps it, gives the
 * last device access (with 2 GPUs: the other GPU), reads and writes. */
/* The owner: a chunk on device 0 with pattern 61, exported; checks the importer's pattern 62. */
static void vmm_owner(int sock, void *arg)
{
    size_t n = *(size_t *)arg;
    struct vmm v = vmm_alloc(0, n);
    h2d_pattern(v.va, n, 61);
    int fd = -1;
    HIP_OK(hipMemExportToShareableHandle(&fd, v.h, hipMemHandleTypePosixFileDescriptor, 0));
    REQUIRE(fdpass_send(sock, &fd, 1));
    close(fd);
    sync_byte(sock, 0); /* the importer wrote */
    check_dev_pattern(v.va, n, 62);
    vmm_free(&v);
}

TEST(vmm_export_import_two_processes)
{
    size_t n = 8 * MiB;
    struct peer owner = spawn(vmm_owner, &n);
    int fd = -1;
    REQUIRE(fdpass_recv(owner.fd, &fd, 1));
    int ndev = hc_device_count();
    int dev = ndev - 1, p2p = 1;
    if (dev > 0)
        HIP_OK(hipDeviceCanAccessPeer(&p2p, dev, 0));
    hipMemGenericAllocationHandle_t h = NULL;
    HIP_OK(hipMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor));
    hipMemAllocationProp p;
    HIP_OK(hipMemGetAllocationPropertiesFromHandle(&p, h));
    CHECK(p.location.type == hipMemLocationTypeDevice && p.location.id == 0); /* the owner GPU */
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    if (!p2p) {
        /* No path from the last GPU to the owner GPU: access is refused, device 0 is used. */
        hipMemAccessDesc d = dev_desc(dev, RW);
        CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidDevice);
        dev = 0;
    }
    HIP_OK(hipSetDevice(dev));
    set_access(va, n, dev, RW);
    check_dev_pattern(va, n, 61);
    h2d_pattern(va, n, 62);
    HIP_OK(hipDeviceSynchronize());
    sync_byte(owner.fd, 1);
    join(&owner, "owner");
    /* The memory outlives its exporter while mapped here. */
    check_dev_pattern(va, n, 62);
    HIP_OK(hipMemUnmap(va, n));
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, n));
    close(fd);
}

/* ---- several GPUs --------------------------------------------------------------- */

/* One VA range backed by chunks of two GPUs, accessed by both; peer copies. */
TEST(vmm_range_over_two_gpus)
{
    REQUIRE_GPUS(2);
    int p01 = 0;
    HIP_OK(hipDeviceCanAccessPeer(&p01, 0, 1));
    if (!p01)
        SKIP("no P2P between devices 0 and 1");
    size_t c = 4 * MiB, n = 2 * c;
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h0 = create(0, c), h1 = create(1, c);
    HIP_OK(hipMemMap(va, c, 0, h0, 0));
    HIP_OK(hipMemMap((char *)va + c, c, 0, h1, 0));
    hipMemAccessDesc d[2];
    memset(d, 0, sizeof d);
    for (int i = 0; i < 2; i++) {
        d[i].location.type = hipMemLocationTypeDevice;
        d[i].location.id = i;
        d[i].flags = RW;
    }
    HIP_OK(hipMemSetAccess(va, n, d, 2));
    h2d_pattern(va, n, 71);
    check_dev_pattern(va, n, 71);
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, (char *)va + c));
    CHECK(at.device == 1);
    /* Peer copies in and out, both directions. */
    HIP_OK(hipSetDevice(1));
    void *d1 = dev_pattern(n, 72);
    HIP_OK(hipMemcpyPeer(va, 0, d1, 1, n));
    check_dev_pattern(va, n, 72);
    HIP_OK(hipSetDevice(0));
    void *d0 = NULL;
    HIP_OK(hipMalloc(&d0, n));
    HIP_OK(hipMemcpyPeer(d0, 0, (char *)va + c, 1, c));
    unsigned char *b = xmalloc(n), *want = xmalloc(n);
    pat_fill(want, n, 72);
    HIP_OK(hipMemcpy(b, d0, c, hipMemcpyDeviceToHost));
    CHECK(memcmp(b, want + c, c) == 0);
    HIP_OK(hipMemcpy(d1, va, n, hipMemcpyDefault));
    HIP_OK(hipMemcpy(b, d1, n, hipMemcpyDefault));
    CHECK(memcmp(b, want, n) == 0);
    HIP_OK(hipMemUnmap(va, n));
    HIP_OK(hipMemRelease(h0));
    HIP_OK(hipMemRelease(h1));
    HIP_OK(hipMemAddressFree(va, n));
    HIP_OK(hipFree(d0));
    HIP_OK(hipFree(d1));
    free(b);
    free(want);
}

static atomic_int peer_hold;

/* hipMemcpyPeer out of a VMM chunk both devices may access is a copy device 1 makes alone (the
 * destination's device); it still keeps cudaMemcpyPeer's order: after the work of both devices
 * (here a host function holding device 0's null stream) and before later work of the
 * destination device on any stream (here an upload on a stream of device 1). Found by the fuzz
 * (reliability/fuzz.c, seed 1): the upload ran first and the peer copy overwrote it. */
TEST(vmm_memcpy_peer_order)
{
    REQUIRE_GPUS(2);
    int p10 = 0;
    HIP_OK(hipDeviceCanAccessPeer(&p10, 1, 0));
    if (!p10)
        SKIP("no P2P between devices 1 and 0");
    size_t n = 2 * MiB;
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(0, n);
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    hipMemAccessDesc d[2] = {dev_desc(0, RW), dev_desc(1, RW)};
    HIP_OK(hipMemSetAccess(va, n, d, 2));
    h2d_pattern(va, n, 91);
    HIP_OK(hipSetDevice(1));
    void *d1 = NULL;
    hipStream_t s1 = NULL;
    HIP_OK(hipMalloc(&d1, n));
    HIP_OK(hipStreamCreate(&s1));
    HIP_OK(hipSetDevice(0));
    atomic_store(&peer_hold, 1);
    HIP_OK(hipLaunchHostFunc(NULL, hold_while_set, &peer_hold));
    HIP_OK(hipMemcpyPeer(d1, 1, va, 0, n));
    unsigned char *up = xmalloc(n), *b = xmalloc(n), *want = xmalloc(n);
    pat_fill(up, n, 92);
    HIP_OK(hipMemcpyHtoDAsync(d1, up, n, s1));
    CHECK_HIP(hipStreamQuery(s1), hipErrorNotReady); /* behind the peer copy, behind the hold */
    usleep(100000);
    atomic_store(&peer_hold, 0);
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMemcpy(b, d1, n, hipMemcpyDeviceToHost));
    pat_fill(want, n, 92);
    CHECK(memcmp(b, want, n) == 0); /* the upload, after the peer copy */
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipFree(d1));
    HIP_OK(hipMemUnmap(va, n));
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, n));
    free(up);
    free(b);
    free(want);
}

/* A chunk of device 1 that only device 0 may access. */
TEST(vmm_access_from_peer_only)
{
    REQUIRE_GPUS(2);
    int p01 = 0;
    HIP_OK(hipDeviceCanAccessPeer(&p01, 0, 1));
    size_t n = 2 * MiB;
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(1, n);
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    hipMemAccessDesc d = dev_desc(0, RW);
    if (!p01) {
        CHECK_HIP(hipMemSetAccess(va, n, &d, 1), hipErrorInvalidDevice);
    } else {
        HIP_OK(hipMemSetAccess(va, n, &d, 1));
        CHECK(get_access(va, 1) == hipMemAccessFlagsProtNone);
        h2d_pattern(va, n, 81);
        check_dev_pattern(va, n, 81);
        HIP_OK(hipSetDevice(1)); /* the stream's device has no access: the copy runs on device 0 */
        check_dev_pattern(va, n, 81);
    }
    HIP_OK(hipMemUnmap(va, n));
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, n));
}

/* ---- host chunks ----------------------------------------------------------------- */

TEST(vmm_host_chunk)
{
    size_t n = 2 * MiB;
    hipMemAllocationProp p = dev_prop(0);
    p.location.type = hipMemLocationTypeHost;
    p.location.id = 0;
    hipMemGenericAllocationHandle_t h = NULL;
    HIP_OK(hipMemCreate(&h, n, &p, 0));
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    HIP_OK(hipMemMap(va, n, 0, h, 0));
    hipMemAccessDesc d[2];
    memset(d, 0, sizeof d);
    d[0].location.type = hipMemLocationTypeHost;
    d[0].flags = RW;
    d[1].location.type = hipMemLocationTypeDevice;
    d[1].location.id = hc_device_count() - 1;
    d[1].flags = RW;
    HIP_OK(hipMemSetAccess(va, n, d, 2));
    hipMemLocation host = {hipMemLocationTypeHost, 0};
    unsigned long long f = 0;
    HIP_OK(hipMemGetAccess(&f, &host, va));
    CHECK(f == RW);
    pat_fill(va, n, 91); /* the CPU writes at the VA */
    HIP_OK(hipSetDevice(hc_device_count() - 1));
    void *dv = NULL;
    HIP_OK(hipMalloc(&dv, n));
    HIP_OK(hipMemcpy(dv, va, n, hipMemcpyDefault)); /* the GPU reads it */
    check_dev_pattern(dv, n, 91);
    HIP_OK(hipMemset(va, 0x3c, n)); /* the GPU writes, the CPU sees it */
    CHECK_BYTES(va, n, 0x3c);
    HIP_OK(hipMemGetAllocationPropertiesFromHandle(&p, h));
    CHECK(p.location.type == hipMemLocationTypeHost);
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, (char *)va + 8));
    CHECK(at.type == hipMemoryTypeHost && at.hostPointer == (char *)va + 8);
    HIP_OK(hipMemUnmap(va, n));
    HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(va, n));
    HIP_OK(hipFree(dv));
}

/* ---- scale, leaks, threads --------------------------------------------------------- */

TEST(vmm_1gib_chunk)
{
    size_t n = 1 * GiB;
    struct vmm v = vmm_alloc(0, n);
    HIP_OK(hipMemset(v.va, 0xa5, n));
    h2d_pattern((char *)v.va + n - 4 * MiB, 4 * MiB, 99);
    unsigned char *b = xmalloc(4 * MiB);
    HIP_OK(hipMemcpy(b, v.va, 4 * MiB, hipMemcpyDeviceToHost));
    CHECK_BYTES(b, 4 * MiB, 0xa5);
    HIP_OK(hipMemcpy(b, (char *)v.va + n / 2, 4 * MiB, hipMemcpyDeviceToHost));
    CHECK_BYTES(b, 4 * MiB, 0xa5);
    check_dev_pattern((char *)v.va + n - 4 * MiB, 4 * MiB, 99);
    vmm_free(&v);
    free(b);
}

TEST(vmm_cycles_leak_nothing)
{
    size_t n = 2 * MiB;
    /* Warm up (queues, staging), then count. */
    struct vmm w = vmm_alloc(0, n);
    h2d_pattern(w.va, 4096, 1);
    vmm_free(&w);
    int fds = fd_count();
    size_t fr = vram_free();
    void *first = NULL;
    for (int i = 0; i < 1000; i++) {
        struct vmm v = vmm_alloc(0, n);
        if (i == 0)
            first = v.va;
        if (i % 100 == 0) {
            h2d_pattern(v.va, 4096, i);
            check_dev_pattern(v.va, 4096, i);
        }
        vmm_free(&v);
    }
    CHECK(fd_count() == fds);
    CHECK(vram_free() == fr);
    /* The VA comes back too: the same range is handed out again. */
    struct vmm v = vmm_alloc(0, n);
    CHECK(v.va == first);
    vmm_free(&v);
}

/* 10,000 chunks mapped at once under the default soft fd limit (1024): no fd
 * per chunk in the runtime or the kernel model. */
TEST(vmm_10000_chunks_default_fd_limit)
{
    struct rlimit rl;
    REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
    REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    const int N = 10000;
    size_t g = granularity(0);
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, N * g, 0, NULL, 0));
    hipMemGenericAllocationHandle_t *h = xmalloc(N * sizeof *h);
    int fds = fd_count();
    for (int i = 0; i < N; i++) {
        h[i] = create(0, g);
        HIP_OK(hipMemMap((char *)va + (size_t)i * g, g, 0, h[i], 0));
        HIP_OK(hipMemRelease(h[i]));
    }
    set_access(va, N * g, 0, RW); /* 10,000 mappings in one call */
    CHECKF(fd_count() == fds, "fds %d -> %d", fds, fd_count());
    HIP_OK(hipMemset(va, 0x6b, N * g));
    check_dev_bytes((char *)va + (N - 1) * g, g, 0x6b);
    if (large_bar(0))
        CHECK(((volatile unsigned char *)va)[5000 * g + 17] == 0x6b);
    HIP_OK(hipMemUnmap(va, N * g));
    CHECK(fd_count() == fds);
    HIP_OK(hipMemAddressFree(va, N * g));
    free(h);
}

static void *vmm_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 20; i++) {
        struct vmm v = vmm_alloc(0, 2 * MiB);
        h2d_pattern(v.va, 64 * KiB, seed + i);
        check_dev_pattern(v.va, 64 * KiB, seed + i);
        vmm_free(&v);
    }
    return NULL;
}

TEST(vmm_five_threads)
{
    pthread_t t[5];
    for (int i = 0; i < 5; i++)
        REQUIRE(pthread_create(&t[i], NULL, vmm_thread, (void *)(uintptr_t)(i * 100)) == 0);
    for (int i = 0; i < 5; i++)
        pthread_join(t[i], NULL);
}

TEST(vmm_map_array_async)
{
    unsigned char info[128];
    memset(info, 0, sizeof info);
    CHECK_HIP(hipMemMapArrayAsync(NULL, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemMapArrayAsync((hipArrayMapInfo *)info, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemMapArrayAsync((hipArrayMapInfo *)info, 1, NULL), hipErrorNotSupported);
}

/* A handle released while its chunk is still mapped may be mapped again (clr maps through the
 * handle's object, kept alive by the mapping): both VAs alias the chunk, and the chunk lives
 * until the last unmap; once unmapped everywhere the handle is gone (hip-tests
 * Unit_hipMemSetAccess_Vmm2VMMInterDevMemCpy maps such a handle). */
TEST(vmm_map_released_but_mapped_handle)
{
    size_t g = granularity(0);
    void *a = NULL, *b = NULL;
    HIP_OK(hipMemAddressReserve(&a, g, 0, NULL, 0));
    HIP_OK(hipMemAddressReserve(&b, g, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h = create(0, g);
    HIP_OK(hipMemMap(a, g, 0, h, 0));
    HIP_OK(hipMemRelease(h));
    set_access(a, g, 0, RW);
    h2d_pattern(a, g, 7);
    HIP_OK(hipMemMap(b, g, 0, h, 0));
    set_access(b, g, 0, RW);
    check_dev_pattern(b, g, 7);
    CHECK_HIP(hipMemRelease(h), hipErrorInvalidValue);
    HIP_OK(hipMemUnmap(a, g));
    check_dev_pattern(b, g, 7);
    HIP_OK(hipMemUnmap(b, g));
    CHECK_HIP(hipMemMap(a, g, 0, h, 0), hipErrorInvalidValue);
    HIP_OK(hipMemAddressFree(a, g));
    HIP_OK(hipMemAddressFree(b, g));
}

/* One reservation holding a chunk of each of two devices, each accessible by its own device
 * only: host copies across both run piece by piece, each piece by the device that may access it
 * (hip-tests Unit_hipMemSetAccess_MapPhysChksFromMulDev); a range with a part no device may
 * access is still refused. */
TEST(vmm_copy_across_chunks_of_two_devices)
{
    if (hc_device_count() < 2)
        SKIP("needs two GPUs");
    size_t g0 = granularity(0), g1 = granularity(1);
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, g0 + g1, 0, NULL, 0));
    char *p = va;
    hipMemGenericAllocationHandle_t h0 = create(0, g0), h1 = create(1, g1);
    HIP_OK(hipMemMap(p, g0, 0, h0, 0));
    HIP_OK(hipMemMap(p + g0, g1, 0, h1, 0));
    HIP_OK(hipMemRelease(h0));
    HIP_OK(hipMemRelease(h1));
    set_access(p, g0, 0, RW);
    void *h = xmalloc(g0 + g1);
    CHECK_HIP(hipMemcpyHtoD(p, h, g0 + g1), hipErrorInvalidValue); /* p + g0: no access yet */
    free(h);
    set_access(p + g0, g1, 1, RW);
    size_t n = g0 + g1 - 4096, off = 4096;
    h2d_pattern(p + off, n - off, 11);
    check_dev_pattern(p + off, n - off, 11);
    /* Each device sees its own part. */
    check_dev_pattern(p + off, g0 - off, 11);
    HIP_OK(hipMemUnmap(p, g0));
    HIP_OK(hipMemUnmap(p + g0, g1));
    HIP_OK(hipMemAddressFree(va, g0 + g1));
}
