/*
 * Allocation: hipMalloc, hipFree, hipHostMalloc, hipHostFree, hipMemGetInfo,
 * allocations on a second GPU, and concurrent allocation from several threads.
 *
 * Expected codes: hip-tests catch/unit/memory/{hipMalloc,hipFree,hipHostFree,
 * hipHostMalloc,hipMemGetInfo}.cc; clr hip_memory.cpp where they are silent.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>

TEST(hipMalloc_sizes_alignment_roundtrip)
{
    const size_t sizes[] = {1, 10, 2048, 4096, 6144, 8192, 1 * MiB + 3, 3 * MiB};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        void *d = NULL;
        HIP_OK(hipMalloc(&d, sizes[i]));
        REQUIRE(d != NULL);
        CHECKF((uintptr_t)d % 256 == 0, "hipMalloc(%zu) = %p is not 256-byte aligned", sizes[i],
               d);
        void *h = xmalloc(sizes[i]);
        pat_fill(h, sizes[i], (unsigned)i + 1);
        HIP_OK(hipMemcpy(d, h, sizes[i], hipMemcpyHostToDevice));
        check_dev_pattern(d, sizes[i], (unsigned)i + 1);
        free(h);
        HIP_OK(hipFree(d));
    }
}

TEST(hipMalloc_zero_size)
{
    void *d = (void *)0x1;
    HIP_OK(hipMalloc(&d, 0));
    CHECK(d == NULL);
}

TEST(hipMalloc_negative)
{
    void *d = NULL;
    size_t free_b = 0, total = 0;
    CHECK_HIP(hipMalloc(NULL, 4096), hipErrorInvalidValue);
    CHECK_HIP(hipMalloc(&d, SIZE_MAX), hipErrorOutOfMemory);
    HIP_OK(hipMemGetInfo(&free_b, &total));
    CHECK_HIP(hipMalloc(&d, total + 4096), hipErrorOutOfMemory);
    /* the failures leaked nothing and the allocator still works */
    void *ok = dev_pattern(4096, 3);
    check_dev_pattern(ok, 4096, 3);
    HIP_OK(hipFree(ok));
}

TEST(hipMalloc_allocations_do_not_overlap)
{
    enum { N = 64 };
    void *p[N];
    size_t sz[N];
    for (int i = 0; i < N; i++) {
        sz[i] = (size_t)(i * 7919 % 20000) + 1;
        HIP_OK(hipMalloc(&p[i], sz[i]));
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            if (i == j)
                continue;
            uintptr_t a = (uintptr_t)p[i], b = (uintptr_t)p[j];
            CHECKF(a + sz[i] <= b || b + sz[j] <= a, "allocations %d and %d overlap", i, j);
        }
    /* each keeps its own data */
    for (int i = 0; i < N; i++) {
        void *h = xmalloc(sz[i]);
        pat_fill(h, sz[i], (unsigned)(100 + i));
        HIP_OK(hipMemcpy(p[i], h, sz[i], hipMemcpyHostToDevice));
        free(h);
    }
    for (int i = 0; i < N; i++) {
        check_dev_pattern(p[i], sz[i], (unsigned)(100 + i));
        HIP_OK(hipFree(p[i]));
    }
}

TEST(hipMalloc_large_sparse)
{
    /* 4 GiB of simulated VRAM; only the pages touched are real */
    void *d = NULL;
    size_t n = 4 * GiB;
    HIP_OK(hipMalloc(&d, n));
    char h[4096];
    pat_fill(h, sizeof(h), 5);
    HIP_OK(hipMemcpy((char *)d + n - sizeof(h), h, sizeof(h), hipMemcpyHostToDevice));
    memset(h, 0, sizeof(h));
    HIP_OK(hipMemcpy(h, (char *)d + n - sizeof(h), sizeof(h), hipMemcpyDeviceToHost));
    CHECK_PATTERN(h, sizeof(h), 5);
    HIP_OK(hipFree(d));
}

TEST(hipFree_null_is_success)
{
    HIP_OK(hipFree(NULL));
    HIP_OK(hipFree(NULL));
}

TEST(hipFree_negative)
{
    char stack_byte;
    void *d = NULL;
    void *h = xmalloc(64);
    CHECK_HIP(hipFree(&stack_byte), hipErrorInvalidValue);
    CHECK_HIP(hipFree(h), hipErrorInvalidValue);
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipFree(d));
    CHECK_HIP(hipFree(d), hipErrorInvalidValue); /* double free */
    free(h);
}

TEST(hipFree_waits_for_pending_work)
{
    /* hip-tests Unit_hipFreeImplicitSyncDev: hipFree synchronises the device */
    struct busy b = busy_begin();
    hipStream_t s;
    void *d = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMalloc(&d, 1 * MiB));
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipMemsetAsync(d, 1, 1 * MiB, s));
    HIP_OK(hipFree(d));
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    HIP_OK(hipStreamDestroy(s));
    busy_end(&b);
}

TEST(hipHostMalloc_flags_cpu_access_roundtrip)
{
    const unsigned flags[] = {hipHostMallocDefault,  hipHostMallocPortable,
                              hipHostMallocMapped,   hipHostMallocWriteCombined,
                              hipHostMallocCoherent, hipHostMallocNonCoherent,
                              hipHostMallocPortable | hipHostMallocMapped};
    size_t n = 256 * KiB + 13;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        uint8_t *h = NULL;
        HIP_OK(hipHostMalloc((void **)&h, n, flags[i]));
        REQUIRE(h != NULL);
        /* host memory is directly usable by the CPU */
        pat_fill(h, n, (unsigned)(20 + i));
        CHECK_PATTERN(h, n, (unsigned)(20 + i));
        HIP_OK(hipMemcpy(d, h, n, hipMemcpyHostToDevice));
        memset(h, 0, n);
        HIP_OK(hipMemcpy(h, d, n, hipMemcpyDeviceToHost));
        CHECKF(pat_mismatch(h, n, (unsigned)(20 + i)) == n, "flags 0x%x: round trip corrupted",
               flags[i]);
        HIP_OK(hipHostFree(h));
    }
    HIP_OK(hipFree(d));
}

TEST(hipHostMalloc_zero_size)
{
    void *h = (void *)0x1;
    HIP_OK(hipHostMalloc(&h, 0, hipHostMallocDefault));
    CHECK(h == NULL);
}

TEST(hipHostMalloc_negative)
{
    void *h = NULL;
    CHECK_HIP(hipHostMalloc(NULL, 4096, hipHostMallocDefault), hipErrorInvalidValue);
    /* hip-tests Unit_hipHostMalloc_Negative (AMD): both coherence flags */
    CHECK_HIP(hipHostMalloc(&h, 4096, hipHostMallocCoherent | hipHostMallocNonCoherent),
              hipErrorInvalidValue);
    CHECK(h == NULL);
    CHECK_HIP(hipHostMalloc(&h, SIZE_MAX, hipHostMallocDefault), hipErrorOutOfMemory);
}

TEST(hipHostFree_negative)
{
    char stack_byte;
    void *h = NULL;
    void *m = xmalloc(64);
    HIP_OK(hipHostFree(NULL));
    CHECK_HIP(hipHostFree(&stack_byte), hipErrorInvalidValue);
    CHECK_HIP(hipHostFree(m), hipErrorInvalidValue);
    HIP_OK(hipHostMalloc(&h, 4096, hipHostMallocDefault));
    HIP_OK(hipHostFree(h));
    CHECK_HIP(hipHostFree(h), hipErrorInvalidValue); /* double free */
    free(m);
}

TEST(hipMemGetInfo_free_le_total_and_decreasing)
{
    size_t free0 = 0, total0 = 0, free1 = 0, total1 = 0, free2 = 0, total2 = 0;
    size_t n = 512 * MiB;
    void *d = NULL;
    HIP_OK(hipMemGetInfo(&free0, &total0));
    CHECK(total0 > 0);
    CHECK(free0 <= total0);
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemGetInfo(&free1, &total1));
    CHECK(total1 == total0);
    CHECK(free1 < total1);
    CHECKF(free1 + n <= free0, "free went %zu -> %zu after hipMalloc(%zu)", free0, free1, n);
    HIP_OK(hipFree(d));
    HIP_OK(hipMemGetInfo(&free2, &total2));
    CHECK(total2 == total0);
    CHECKF(free2 > free1, "free did not grow after hipFree: %zu -> %zu", free1, free2);
}

TEST(hipMemGetInfo_null_args)
{
    size_t v = 0;
    HIP_OK(hipMemGetInfo(NULL, NULL)); /* clr: nothing asked, nothing done */
    HIP_OK(hipMemGetInfo(&v, NULL));
    CHECK(v > 0);
    v = 0;
    HIP_OK(hipMemGetInfo(NULL, &v));
    CHECK(v > 0);
}

TEST(hipMemGetInfo_per_device)
{
    REQUIRE_GPUS(2);
    size_t f0a, t0a, f1a, t1a, f1b, t1b;
    size_t n = 512 * MiB;
    void *d = NULL;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMemGetInfo(&f1a, &t1a));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemGetInfo(&f0a, &t0a));
    HIP_OK(hipMalloc(&d, n)); /* on device 0 */
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMemGetInfo(&f1b, &t1b));
    CHECKF(f1b + n / 2 > f1a, "device 1 free dropped %zu -> %zu by an allocation on device 0",
           f1a, f1b);
    HIP_OK(hipFree(d));
}

TEST(multigpu_hipMalloc_on_device1)
{
    REQUIRE_GPUS(2);
    size_t n = 8 * MiB + 5;
    HIP_OK(hipSetDevice(1));
    void *d = dev_pattern(n, 42);
    hipPointerAttribute_t a;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipPointerGetAttributes(&a, d));
    CHECK(a.type == hipMemoryTypeDevice);
    CHECK(a.device == 1);
    /* copy back while device 0 is current: unified addressing */
    check_dev_pattern(d, n, 42);
    HIP_OK(hipMemset(d, 0x3c, n));
    check_dev_bytes(d, n, 0x3c);
    HIP_OK(hipFree(d));
}

/* ---- thread safety --------------------------------------------------------- */

struct thr_arg {
    int id;
    int ndev;
    int errors;
};

static void *alloc_copy_thread(void *p)
{
    struct thr_arg *a = p;
    int dev = a->id % a->ndev;
    hipStream_t s;
    if (hipSetDevice(dev) != hipSuccess || hipStreamCreate(&s) != hipSuccess) {
        a->errors++;
        return NULL;
    }
    for (int it = 0; it < 40; it++) {
        size_t n = (size_t)((a->id * 131 + it * 977) % (256 * 1024)) + 1;
        unsigned seed = (unsigned)(a->id * 1000 + it);
        void *d = NULL, *pinned = NULL;
        uint8_t *h = malloc(n);
        if (!h || hipMalloc(&d, n) != hipSuccess ||
            hipHostMalloc(&pinned, n, hipHostMallocDefault) != hipSuccess) {
            a->errors++;
            free(h);
            break;
        }
        pat_fill(h, n, seed);
        if (it % 2) {
            if (hipMemcpy(d, h, n, hipMemcpyHostToDevice) != hipSuccess ||
                hipMemcpy(pinned, d, n, hipMemcpyDeviceToHost) != hipSuccess)
                a->errors++;
        } else {
            if (hipMemcpyAsync(d, h, n, hipMemcpyHostToDevice, s) != hipSuccess ||
                hipMemcpyAsync(pinned, d, n, hipMemcpyDeviceToHost, s) != hipSuccess ||
                hipStreamSynchronize(s) != hipSuccess)
                a->errors++;
        }
        if (pat_mismatch(pinned, n, seed) != n)
            a->errors++;
        if (hipFree(d) != hipSuccess || hipHostFree(pinned) != hipSuccess)
            a->errors++;
        free(h);
    }
    if (hipStreamDestroy(s) != hipSuccess)
        a->errors++;
    return NULL;
}

TEST(threads_concurrent_alloc_copy_free)
{
    enum { T = 8 };
    pthread_t th[T];
    struct thr_arg args[T];
    int ndev = hc_device_count();
    REQUIRE(ndev >= 1);
    for (int i = 0; i < T; i++) {
        args[i].id = i;
        args[i].ndev = ndev;
        args[i].errors = 0;
        REQUIRE(pthread_create(&th[i], NULL, alloc_copy_thread, &args[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECKF(args[i].errors == 0, "thread %d saw %d errors", i, args[i].errors);
    }
}

struct shared_arg {
    uint8_t *dev;
    size_t chunk;
    int id;
    int errors;
};

static void *disjoint_chunk_thread(void *p)
{
    struct shared_arg *a = p;
    uint8_t *h = malloc(a->chunk);
    if (!h) {
        a->errors++;
        return NULL;
    }
    for (int it = 0; it < 20; it++) {
        unsigned seed = (unsigned)(a->id * 77 + it);
        pat_fill(h, a->chunk, seed);
        if (hipMemcpy(a->dev + a->id * a->chunk, h, a->chunk, hipMemcpyHostToDevice) !=
            hipSuccess)
            a->errors++;
        memset(h, 0, a->chunk);
        if (hipMemcpy(h, a->dev + a->id * a->chunk, a->chunk, hipMemcpyDeviceToHost) !=
            hipSuccess)
            a->errors++;
        if (pat_mismatch(h, a->chunk, seed) != a->chunk)
            a->errors++;
    }
    free(h);
    return NULL;
}

TEST(threads_disjoint_chunks_of_one_allocation)
{
    enum { T = 6 };
    size_t chunk = 1 * MiB + 17;
    uint8_t *d = NULL;
    pthread_t th[T];
    struct shared_arg args[T];
    HIP_OK(hipMalloc((void **)&d, chunk * T));
    for (int i = 0; i < T; i++) {
        args[i] = (struct shared_arg){d, chunk, i, 0};
        REQUIRE(pthread_create(&th[i], NULL, disjoint_chunk_thread, &args[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECKF(args[i].errors == 0, "thread %d saw %d errors", i, args[i].errors);
    }
    HIP_OK(hipFree(d));
}

/* The deprecated spellings hipMallocHost, hipHostAlloc and hipFreeHost (hip-tests call them) are
 * hipHostMalloc and hipHostFree: pinned memory the device reads, same errors. */
TEST(hipMallocHost_hipHostAlloc_hipFreeHost)
{
    char *a = NULL, *b = NULL;
    HIP_OK(hipMallocHost((void **)&a, 4096));
    HIP_OK(hipHostAlloc((void **)&b, 4096, hipHostMallocDefault));
    memset(a, 0x2d, 4096);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipMemcpy(d, a, 4096, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(b, d, 4096, hipMemcpyDeviceToHost));
    CHECK(memcmp(a, b, 4096) == 0);
    CHECK_HIP(hipMallocHost(NULL, 4096), hipErrorInvalidValue);
    CHECK_HIP(hipFreeHost(d), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
    HIP_OK(hipFreeHost(a));
    HIP_OK(hipFreeHost(b));
}
