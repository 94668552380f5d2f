/*
 * Helpers shared by the conformance tests: byte patterns, verified buffers,
 * and a way to keep a stream busy without kernels (SDMA fills).
 */
#ifndef HIPCONF_COMMON_H
#define HIPCONF_COMMON_H

#include "../fdcount.h"
#include "../harness.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)
#define GiB ((size_t)1024 * 1024 * 1024)

#ifndef hipInvalidDeviceId
#define hipInvalidDeviceId ((int)-2)
#endif

/* A host function (hipLaunchHostFunc) that holds its stream while *(atomic_int *)flag is set. */
static inline void hold_while_set(void *flag)
{
    while (atomic_load((atomic_int *)flag))
        usleep(1000);
}

/* Byte i of pattern `seed`: a cheap hash, so shifted or stale data is detected. */
static inline uint8_t pat_byte(size_t i, unsigned seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (uint32_t)(i >> 16) * 97u;
    return (uint8_t)(x >> 24 ^ x);
}

static inline void pat_fill(void *buf, size_t n, unsigned seed)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = pat_byte(i, seed);
}

/* Index of the first byte that differs from the pattern, or n. */
static inline size_t pat_mismatch(const void *buf, size_t n, unsigned seed)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat_byte(i, seed))
            return i;
    return n;
}

/* Index of the first byte != v, or n. */
static inline size_t byte_mismatch(const void *buf, size_t n, uint8_t v)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return i;
    return n;
}

/* CHECK that buf[0..n) holds pattern seed; report the first bad byte. */
#define CHECK_PATTERN(buf, n, seed)                                                     \
    do {                                                                                \
        size_t cp_n_ = (n);                                                             \
        size_t cp_i_ = pat_mismatch((buf), cp_n_, (seed));                              \
        CHECKF(cp_i_ == cp_n_, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", #buf,  \
               cp_i_, cp_n_, cp_i_ < cp_n_ ? ((const uint8_t *)(buf))[cp_i_] : 0,       \
               cp_i_ < cp_n_ ? pat_byte(cp_i_, (seed)) : 0);                            \
    } while (0)

#define CHECK_BYTES(buf, n, v)                                                          \
    do {                                                                                \
        size_t cb_n_ = (n);                                                             \
        size_t cb_i_ = byte_mismatch((buf), cb_n_, (uint8_t)(v));                       \
        CHECKF(cb_i_ == cb_n_, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", #buf,  \
               cb_i_, cb_n_, cb_i_ < cb_n_ ? ((const uint8_t *)(buf))[cb_i_] : 0,       \
               (unsigned)(uint8_t)(v));                                                 \
    } while (0)

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    REQUIREF(p != NULL, "malloc(%zu) failed", n);
    return p;
}

/* Device buffer filled with pattern `seed` (through a verified H2D copy). */
static inline void *dev_pattern(size_t n, unsigned seed)
{
    void *d = NULL;
    void *h = xmalloc(n);
    pat_fill(h, n, seed);
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemcpy(d, h, n, hipMemcpyHostToDevice));
    free(h);
    return d;
}

/* Copy a device buffer back and CHECK it holds pattern `seed`. */
static inline void check_dev_pattern(const void *d, size_t n, unsigned seed)
{
    void *h = xmalloc(n);
    memset(h, 0, n);
    HIP_OK(hipMemcpy(h, d, n, hipMemcpyDeviceToHost));
    CHECK_PATTERN(h, n, seed);
    free(h);
}

static inline void check_dev_bytes(const void *d, size_t n, uint8_t v)
{
    void *h = xmalloc(n);
    memset(h, (uint8_t)~v, n);
    HIP_OK(hipMemcpy(h, d, n, hipMemcpyDeviceToHost));
    CHECK_BYTES(h, n, v);
    free(h);
}

/*
 * Busy work without kernels: a queue of device fills on `stream`.
 * busy_begin() allocates a scratch buffer (size from HIPCONF_BUSY_MB, default
 * 128 MiB) on the current device. busy_enqueue() queues `reps` fills of it.
 */
struct busy {
    void *buf;
    size_t size;
};

static inline struct busy busy_begin(void)
{
    struct busy b = {NULL, 128 * MiB};
    const char *env = getenv("HIPCONF_BUSY_MB");
    if (env && atoi(env) > 0)
        b.size = (size_t)atoi(env) * MiB;
    HIP_OK(hipMalloc(&b.buf, b.size));
    return b;
}

static inline void busy_enqueue(struct busy *b, hipStream_t stream, int reps)
{
    for (int i = 0; i < reps; i++)
        HIP_OK(hipMemsetAsync(b->buf, i & 0xff, b->size, stream));
}

static inline void busy_end(struct busy *b)
{
    if (b->buf)
        HIP_OK(hipFree(b->buf));
    b->buf = NULL;
}

/*
 * Queue enough fills on `stream` that it is observably still running right
 * after the call: returns 1 once hipStreamQuery(stream) reported
 * hipErrorNotReady right after queueing (the work is left queued), 0 if even
 * 64 fills completed before the query (the runtime ran them synchronously).
 * Any other query result fails the test.
 */
static inline int busy_until_not_ready(struct busy *b, hipStream_t stream)
{
    for (int reps = 2; reps <= 64; reps *= 2) {
        busy_enqueue(b, stream, reps);
        hipError_t e = hipStreamQuery(stream);
        if (e == hipErrorNotReady)
            return 1;
        REQUIREF(e == hipSuccess, "hipStreamQuery returned %d (%s)", (int)e, hipGetErrorName(e));
        HIP_OK(hipStreamSynchronize(stream));
    }
    return 0;
}

#define REQUIRE_BUSY(b, stream)                                                      \
    REQUIREF(busy_until_not_ready((b), (stream)),                                    \
             "queued device fills always completed before hipStreamQuery: async "   \
             "operations seem to run synchronously")

/*
 * Forcing a race: hold(s, w) queues on stream s a wait (hipStreamWaitValue32, an SDMA
 * POLL_REGMEM) for the word w in pinned host memory (hold_word(), 0) to become 1; work queued on s
 * after it runs only once the test calls release(w).
 */
static inline uint32_t *hold_word(void)
{
    uint32_t *w = NULL;
    HIP_OK(hipHostMalloc((void **)&w, 64, 0));
    __atomic_store_n(w, 0, __ATOMIC_RELEASE);
    return w;
}

static inline void hold(hipStream_t s, uint32_t *w)
{
    HIP_OK(hipStreamWaitValue32(s, w, 1, hipStreamWaitValueGte, ~0u));
}

static inline void release(uint32_t *w)
{
    __atomic_store_n(w, 1, __ATOMIC_RELEASE);
}

#endif /* HIPCONF_COMMON_H */
