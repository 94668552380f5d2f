/*
 * Range checks of every copy and fill path against sizes near 0, allocation
 * ends and 2^64 (issue 18: hostile sizes once aborted the process or drove the
 * host into the OOM killer). A call either copies exactly the bytes asked for
 * or returns hipErrorInvalidValue at once, allocating nothing. The runner
 * gives each test child a data-size limit (HIPCONF_DATA_LIMIT_MB), so a
 * runaway allocation fails the test instead of the machine.
 */
#include "common.h"

#include <stdint.h>

#define BUF (4 * MiB)

/* Offsets into a BUF-byte allocation (not BUF itself: one past the end may be the next
 * allocation's first byte). */
static const size_t offsets[] = {0, 1, 8, BUF / 2, BUF - 1};

struct range {
    size_t off, len;
};

/* Every (offset, size) pair to try on a BUF-byte allocation at `base`: sizes 0, 1, to the end,
 * one past it, BUF, near SIZE_MAX, 2^63, and two that wrap past 2^64 (to exactly 0 and to 8).
 * Returns the number of pairs written to `out` (at most MAX_RANGES). */
#define MAX_RANGES 64
static size_t range_cases(uintptr_t base, struct range *out)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        size_t off = offsets[i];
        size_t lens[] = {0, 1, BUF - off, BUF - off + 1, BUF, SIZE_MAX, SIZE_MAX - 4,
                         SIZE_MAX - (base + off) + 1, SIZE_MAX - (base + off) + 9, (size_t)1 << 63};
        for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++)
            out[n++] = (struct range){off, lens[j]};
    }
    return n;
}

static int in_bounds(size_t off, size_t len) { return off <= BUF && len <= BUF - off; }

/* hipError_t of a copy/fill of `len` bytes at offset `off`: success iff in bounds. */
#define EXPECT_RANGE(call, off, len)                                                          \
    do {                                                                                      \
        hipError_t want_ = in_bounds((off), (len)) ? hipSuccess : hipErrorInvalidValue;       \
        hipError_t got_ = (call);                                                             \
        CHECKF(got_ == want_, "%s at offset %zu, %zu bytes: %s, expected %s", #call,          \
               (size_t)(off), (size_t)(len), hipGetErrorName(got_), hipGetErrorName(want_));  \
    } while (0)

/* The cases the issue found, each once. */
TEST(ranges_huge_sizes_are_invalid_value)
{
    char *d = NULL, *d1 = NULL;
    HIP_OK(hipMalloc((void **)&d, BUF));
    CHECK_HIP(hipMemcpy(d + 8, d, SIZE_MAX - 4, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(d + 8, 0, SIZE_MAX - 4), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(d, 0, SIZE_MAX), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD32((hipDeviceptr_t)(d + 8), 0, SIZE_MAX / 4), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetD16((hipDeviceptr_t)(d + 8), 0, SIZE_MAX / 2), hipErrorInvalidValue);
    CHECK_HIP(hipMemsetAsync(d + 8, 0, SIZE_MAX - 4, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyAsync(d + 8, d, SIZE_MAX - 4, hipMemcpyDeviceToDevice, NULL), hipErrorInvalidValue);
    if (hc_device_count() >= 2) {
        HIP_OK(hipSetDevice(1));
        HIP_OK(hipMalloc((void **)&d1, BUF));
        HIP_OK(hipSetDevice(0));
        CHECK_HIP(hipMemcpyPeer(d1 + 8, 1, d, 0, SIZE_MAX - 4), hipErrorInvalidValue);
        CHECK_HIP(hipMemcpyPeerAsync(d1 + 8, 1, d, 0, SIZE_MAX - 4, NULL), hipErrorInvalidValue);
        HIP_OK(hipFree(d1));
    }
    HIP_OK(hipDeviceSynchronize()); /* nothing was queued, nothing faulted */
    HIP_OK(hipFree(d));
}

/* Every copy kind and direction over (offset, size) pairs: in bounds copies
 * exactly (checked for the small ones), out of bounds is InvalidValue. */
TEST(ranges_copies_property)
{
    char *a = NULL, *b = NULL, *pinned = NULL;
    HIP_OK(hipMalloc((void **)&a, BUF));
    HIP_OK(hipMalloc((void **)&b, BUF));
    HIP_OK(hipHostMalloc((void **)&pinned, BUF, 0));
    char *pageable = xmalloc(BUF);
    struct range r[MAX_RANGES];
    size_t nr = range_cases((uintptr_t)a, r);
    for (size_t k = 0; k < nr; k++) {
        size_t off = r[k].off, len = r[k].len;
        EXPECT_RANGE(hipMemcpy(a + off, b, len, hipMemcpyDeviceToDevice), off, len);
        EXPECT_RANGE(hipMemcpy(a, b + off, len, hipMemcpyDeviceToDevice), off, len);
        EXPECT_RANGE(hipMemcpy(a + off, pinned, len, hipMemcpyHostToDevice), off, len);
        EXPECT_RANGE(hipMemcpy(pinned, a + off, len, hipMemcpyDeviceToHost), off, len);
        EXPECT_RANGE(hipMemcpy(a + off, pageable, len, hipMemcpyHostToDevice), off, len);
        EXPECT_RANGE(hipMemcpy(pageable, a + off, len, hipMemcpyDeviceToHost), off, len);
        EXPECT_RANGE(hipMemcpy(a + off, b, len, hipMemcpyDefault), off, len);
        EXPECT_RANGE(hipMemcpyAsync(a + off, b, len, hipMemcpyDeviceToDevice, NULL), off, len);
        EXPECT_RANGE(hipMemcpy(pinned + off, a, len, hipMemcpyDefault), off, len);
    }
    HIP_OK(hipDeviceSynchronize());
    /* A bounded copy is exact: the bytes before and after are untouched. */
    pat_fill(pageable, BUF, 5);
    HIP_OK(hipMemcpy(a, pageable, BUF, hipMemcpyHostToDevice));
    HIP_OK(hipMemset(b, 0xcd, BUF));
    HIP_OK(hipMemcpy(b + 1, a + 1, BUF - 2, hipMemcpyDeviceToDevice));
    HIP_OK(hipMemcpy(pageable, b, BUF, hipMemcpyDeviceToHost));
    CHECK((uint8_t)pageable[0] == 0xcd && (uint8_t)pageable[BUF - 1] == 0xcd);
    for (size_t k = 1; k < BUF - 1; k += 4093)
        CHECKF((uint8_t)pageable[k] == pat_byte(k, 5), "byte %zu", k);
    free(pageable);
    HIP_OK(hipHostFree(pinned));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}

/* Every fill width over the same pairs (sizes in bytes; element counts derived). */
TEST(ranges_fills_property)
{
    char *a = NULL;
    HIP_OK(hipMalloc((void **)&a, BUF));
    struct range r[MAX_RANGES];
    size_t nr = range_cases((uintptr_t)a, r);
    for (size_t k = 0; k < nr; k++) {
        size_t off = r[k].off, len = r[k].len;
        EXPECT_RANGE(hipMemset(a + off, 0x11, len), off, len);
        EXPECT_RANGE(hipMemsetAsync(a + off, 0x11, len, NULL), off, len);
        EXPECT_RANGE(hipMemsetD8((hipDeviceptr_t)(a + off), 0x22, len), off, len);
        EXPECT_RANGE(hipMemsetD16((hipDeviceptr_t)(a + off), 0x3333, len / 2), off, len / 2 * 2);
        EXPECT_RANGE(hipMemsetD32((hipDeviceptr_t)(a + off), 0x44444444, len / 4), off, len / 4 * 4);
    }
    HIP_OK(hipDeviceSynchronize());
    /* A bounded fill is exact. */
    HIP_OK(hipMemset(a, 0, BUF));
    HIP_OK(hipMemsetD32((hipDeviceptr_t)(a + 4), 0x01020304, BUF / 4 - 2));
    uint32_t *h = xmalloc(BUF);
    HIP_OK(hipMemcpy(h, a, BUF, hipMemcpyDeviceToHost));
    CHECK(h[0] == 0 && h[1] == 0x01020304 && h[BUF / 4 - 2] == 0x01020304 && h[BUF / 4 - 1] == 0);
    free(h);
    HIP_OK(hipFree(a));
}

/* Peer copies over the same pairs, both directions. */
TEST(ranges_peer_property)
{
    REQUIRE_GPUS(2);
    char *a = NULL, *b = NULL;
    HIP_OK(hipMalloc((void **)&a, BUF));
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMalloc((void **)&b, BUF));
    HIP_OK(hipSetDevice(0));
    struct range r[MAX_RANGES];
    size_t nr = range_cases((uintptr_t)a, r);
    for (size_t k = 0; k < nr; k++) {
        size_t off = r[k].off, len = r[k].len;
        EXPECT_RANGE(hipMemcpyPeer(b + off, 1, a, 0, len), off, len);
        EXPECT_RANGE(hipMemcpyPeer(b, 1, a + off, 0, len), off, len);
        EXPECT_RANGE(hipMemcpyPeerAsync(a + off, 0, b, 1, len, NULL), off, len);
    }
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}
