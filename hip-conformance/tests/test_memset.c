/*
 * Fills: hipMemset, hipMemsetD8, hipMemsetD16, hipMemsetD32 and their Async
 * forms: values, unaligned starts and tails, bytes around the range untouched,
 * large fills, host (hipHostMalloc) memory, second GPU, invalid arguments.
 *
 * Expected codes: hip-tests catch/unit/memory/{hipMemsetNegative,hipMemsetD32,
 * hipMemsetD8Async}.cc; clr ihipMemset_validate (size 0 succeeds before any
 * check; null, host or out-of-range destination -> hipErrorInvalidValue).
 */
#define _GNU_SOURCE
#include "common.h"

enum fill_fn { F_MEMSET, F_D8, F_D16, F_D32 };

static const char *fill_name(enum fill_fn f)
{
    static const char *names[] = {"hipMemset", "hipMemsetD8", "hipMemsetD16", "hipMemsetD32"};
    return names[f];
}

static size_t elem_size(enum fill_fn f)
{
    return f == F_D16 ? 2 : f == F_D32 ? 4 : 1;
}

/* Issue one fill of `count` elements (bytes for hipMemset) at dst. */
static hipError_t do_fill(enum fill_fn f, void *dst, uint32_t value, size_t count, int async,
                          hipStream_t s)
{
    switch (f) {
    case F_MEMSET:
        return async ? hipMemsetAsync(dst, (int)value, count, s) : hipMemset(dst, (int)value, count);
    case F_D8:
        return async ? hipMemsetD8Async((hipDeviceptr_t)dst, (unsigned char)value, count, s)
                     : hipMemsetD8((hipDeviceptr_t)dst, (unsigned char)value, count);
    case F_D16:
        return async ? hipMemsetD16Async((hipDeviceptr_t)dst, (unsigned short)value, count, s)
                     : hipMemsetD16((hipDeviceptr_t)dst, (unsigned short)value, count);
    case F_D32:
    default:
        return async ? hipMemsetD32Async((hipDeviceptr_t)dst, (int)value, count, s)
                     : hipMemsetD32((hipDeviceptr_t)dst, (int)value, count);
    }
}

/* Expected byte at index i (from the start of the fill) of a fill with value. */
static uint8_t fill_byte(enum fill_fn f, uint32_t value, size_t i)
{
    size_t es = elem_size(f);
    return (uint8_t)(value >> (8 * (i % es))); /* little-endian elements */
}

/*
 * Fill `count` elements at byte offset `off` of a buffer pre-filled with a
 * pattern, then check the filled bytes and that the pattern around them
 * survived.
 */
static void fill_and_verify(enum fill_fn f, size_t off, size_t count, uint32_t value, int async,
                            hipStream_t s)
{
    size_t es = elem_size(f);
    size_t n = off + count * es + 96;
    unsigned seed = (unsigned)(off * 13 + count);
    uint8_t *d = dev_pattern(n, seed);
    uint8_t *h = xmalloc(n);
    HIP_OK(do_fill(f, d + off, value, count, async, s));
    if (async)
        HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemcpy(h, d, n, hipMemcpyDeviceToHost));
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < n && bad == SIZE_MAX; i++) {
        uint8_t want = (i >= off && i < off + count * es) ? fill_byte(f, value, i - off)
                                                          : pat_byte(i, seed);
        if (h[i] != want)
            bad = i;
    }
    CHECKF(bad == SIZE_MAX,
           "%s%s(offset %zu, value 0x%x, count %zu): byte %zu is 0x%02x, expected 0x%02x",
           fill_name(f), async ? "Async" : "", off, value, count, bad,
           bad != SIZE_MAX ? h[bad] : 0,
           bad != SIZE_MAX ? ((bad >= off && bad < off + count * es)
                                  ? fill_byte(f, value, bad - off)
                                  : pat_byte(bad, seed))
                           : 0);
    free(h);
    HIP_OK(hipFree(d));
}

TEST(hipMemset_values_offsets_tails)
{
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 1; len <= 17; len++)
            fill_and_verify(F_MEMSET, off, len, 0xa5, 0, NULL);
    const size_t lens[] = {255, 4095, 4096, 4097, 65535, 1 * MiB + 5};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        fill_and_verify(F_MEMSET, 0, lens[i], 0x00, 0, NULL);
        fill_and_verify(F_MEMSET, 3, lens[i], 0xff, 0, NULL);
    }
    /* only the low byte of the int value is used */
    fill_and_verify(F_MEMSET, 1, 100, 0x1234, 0, NULL);
    fill_and_verify(F_MEMSET, 0, 100, -1, 0, NULL);
}

TEST(hipMemsetD8_values_offsets_tails)
{
    for (size_t off = 0; off < 8; off++)
        for (size_t count = 1; count <= 17; count++)
            fill_and_verify(F_D8, off, count, 0x5c, 0, NULL);
    fill_and_verify(F_D8, 1, 1 * MiB + 3, 0x81, 0, NULL);
}

TEST(hipMemsetD16_values_offsets_tails)
{
    for (size_t off = 0; off < 16; off += 2)
        for (size_t count = 1; count <= 17; count++)
            fill_and_verify(F_D16, off, count, 0xbeef, 0, NULL);
    fill_and_verify(F_D16, 2, 1 * MiB + 3, 0x1357, 0, NULL);
    fill_and_verify(F_D16, 0, 4097, 0x00ff, 0, NULL);
}

TEST(hipMemsetD32_values_offsets_tails)
{
    for (size_t off = 0; off < 32; off += 4)
        for (size_t count = 1; count <= 17; count++)
            fill_and_verify(F_D32, off, count, 0xdeadbeef, 0, NULL);
    fill_and_verify(F_D32, 4, 1 * MiB + 3, 0x01020304, 0, NULL);
    fill_and_verify(F_D32, 0, 4097, 0x80000001, 0, NULL);
}

TEST(hipMemset_async_forms_null_and_created_stream)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    for (int f = F_MEMSET; f <= F_D32; f++) {
        size_t es = elem_size((enum fill_fn)f);
        const size_t counts[] = {1, 3, 1000, 65537};
        for (int i = 0; i < 4; i++) {
            fill_and_verify((enum fill_fn)f, es * (size_t)i, counts[i], 0xc3a59617u, 1, NULL);
            fill_and_verify((enum fill_fn)f, es * (size_t)(3 - i), counts[i], 0x3c5a6971u, 1, s);
        }
    }
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipMemset_64MiB)
{
    size_t n = 64 * MiB;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n + 8));
    HIP_OK(hipMemset(d, 0x99, n + 8));
    HIP_OK(hipMemsetD32(d, 0x12345678, n / 4));
    uint32_t *h = xmalloc(n + 8);
    HIP_OK(hipMemcpy(h, d, n + 8, hipMemcpyDeviceToHost));
    size_t bad = n / 4;
    for (size_t i = 0; i < n / 4; i++)
        if (h[i] != 0x12345678u) {
            bad = i;
            break;
        }
    CHECKF(bad == n / 4, "word %zu is 0x%08x", bad, bad < n / 4 ? h[bad] : 0);
    CHECK_BYTES((uint8_t *)h + n, 8, 0x99);
    free(h);
    HIP_OK(hipFree(d));
}

TEST(hipMemset_host_malloc_memory)
{
    /* hip-tests Unit_hipMemsetD8Async_ValidBuffer "Host Buffer" */
    size_t n = 1 * MiB + 3;
    uint8_t *h = NULL;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));
    memset(h, 0, n);
    HIP_OK(hipMemset(h, 0x4e, n));
    CHECK_BYTES(h, n, 0x4e);
    HIP_OK(hipMemsetD8Async((hipDeviceptr_t)(h + 1), 0x17, n - 2, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(h[0] == 0x4e);
    CHECK_BYTES(h + 1, n - 2, 0x17);
    CHECK(h[n - 1] == 0x4e);
    HIP_OK(hipHostFree(h));
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipMemset_zero_size)
{
    uint8_t *d = dev_pattern(4096, 50);
    /* clr: size 0 returns hipSuccess before any check, even for NULL */
    for (int f = F_MEMSET; f <= F_D32; f++) {
        HIP_OK(do_fill((enum fill_fn)f, d, 0, 0, 0, NULL));
        HIP_OK(do_fill((enum fill_fn)f, d, 0, 0, 1, NULL));
        HIP_OK(do_fill((enum fill_fn)f, NULL, 0, 0, 0, NULL));
    }
    check_dev_pattern(d, 4096, 50);
    HIP_OK(hipFree(d));
}

/* hip-tests hipMemsetNegative.cc testHipMemsetApis: all 8 entry points */
static void all_fills_fail(void *dst, size_t count, const char *what)
{
    for (int f = F_MEMSET; f <= F_D32; f++)
        for (int async = 0; async < 2; async++) {
            hipError_t e = do_fill((enum fill_fn)f, dst, 0x42, count, async, NULL);
            CHECKF(e == hipErrorInvalidValue, "%s%s on %s returned %d (%s), expected %s",
                   fill_name((enum fill_fn)f), async ? "Async" : "", what, (int)e,
                   hipGetErrorName(e), "hipErrorInvalidValue");
        }
}

TEST(hipMemset_negative_pointers)
{
    size_t width = 184;
    uint8_t *host = xmalloc(width);
    uint8_t *d = NULL, *freed = NULL;
    memset(host, 0x10, width);
    HIP_OK(hipMalloc((void **)&d, width));
    HIP_OK(hipMalloc((void **)&freed, width));
    HIP_OK(hipFree(freed));
    HIP_OK(hipMemset(d, 0x20, width));

    all_fills_fail(NULL, width, "NULL");
    all_fills_fail(host, width, "a pageable host pointer");
    all_fills_fail(d + width + 1, width, "a pointer past the allocation");
    all_fills_fail(freed, width, "a freed pointer");
    HIP_OK(hipDeviceSynchronize());
    CHECK_BYTES(host, width, 0x10);
    check_dev_bytes(d, width, 0x20);
    free(host);
    HIP_OK(hipFree(d));
}

TEST(hipMemset_negative_size_beyond_allocation)
{
    /* clr checks the size against the allocation (hip-tests only assert this on
     * NVIDIA, where the runtime checks too) */
    size_t n = 4096;
    uint8_t *d = NULL;
    HIP_OK(hipMalloc((void **)&d, n));
    HIP_OK(hipMemset(d, 0x31, n));
    CHECK_HIP(hipMemset(d, 0, n + 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(d + 1, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD16(d, 0, n / 2 + 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD32(d, 0, n / 4 + 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD32Async(d + 4, 0, n / 4, NULL), hipErrorInvalidValue);
    HIP_OK(hipDeviceSynchronize());
    check_dev_bytes(d, n, 0x31);
    HIP_OK(hipFree(d));
}

TEST(multigpu_hipMemset_on_device1)
{
    REQUIRE_GPUS(2);
    hipStream_t s1;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s1));
    fill_and_verify(F_MEMSET, 1, 3 * MiB + 1, 0x66, 0, NULL);
    fill_and_verify(F_D32, 4, 65537, 0xa1b2c3d4, 1, s1);
    HIP_OK(hipStreamDestroy(s1));
    /* a fill of device 1 memory issued while device 0 is current */
    HIP_OK(hipSetDevice(1));
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 1 * MiB));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemset(d, 0x7e, 1 * MiB));
    check_dev_bytes(d, 1 * MiB, 0x7e);
    HIP_OK(hipFree(d));
}
