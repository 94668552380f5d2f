/*
 * Pointer queries: hipPointerGetAttributes, hipMemGetAddressRange, hipPointerSetAttribute.
 *
 * Expected behaviour: hip-tests catch/unit/memory/{hipPointerGetAttributes,
 * hipMemGetAddressRange,hipPointerSetAttribute}.cc; clr hip_memory.cpp. A host pointer HIP does not
 * know is not an error: hipSuccess with type hipMemoryTypeUnregistered and
 * device hipInvalidDeviceId (HIP >= 6.0). Unknown pointers in
 * hipMemGetAddressRange -> hipErrorNotFound.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

TEST(hipMemoryType_rocm7_values)
{
    /* ROCm 6+ renumbered hipMemoryType (5.x: Host 0, Device 1, ...) */
    CHECK((int)hipMemoryTypeUnregistered == 0);
    CHECK((int)hipMemoryTypeHost == 1);
    CHECK((int)hipMemoryTypeDevice == 2);
    CHECK((int)hipMemoryTypeManaged == 3);
    CHECK((int)hipMemoryTypeArray == 10);
    CHECK((int)hipMemoryTypeUnified == 11);
}

TEST(hipPointerGetAttributes_device_memory)
{
    size_t n = 1000;
    char *d = NULL;
    int cur = -1;
    hipPointerAttribute_t a, b;
    HIP_OK(hipGetDevice(&cur));
    HIP_OK(hipMalloc((void **)&d, n));
    memset(&a, 0xcc, sizeof(a));
    HIP_OK(hipPointerGetAttributes(&a, d));
    CHECK(a.type == hipMemoryTypeDevice);
    CHECK(a.devicePointer == d);
    CHECK(a.hostPointer == NULL);
    CHECK(a.device == cur);
    CHECK(a.isManaged == 0);
    /* interior pointers: hip-tests Unit_hipPointerGetAttributes_Basic */
    HIP_OK(hipPointerGetAttributes(&b, d + 100));
    CHECK((char *)b.devicePointer == d + 100);
    CHECK(b.type == hipMemoryTypeDevice);
    HIP_OK(hipPointerGetAttributes(&b, d + n - 1));
    CHECK((char *)b.devicePointer == d + n - 1);
    /* one past the end (inside the 256-byte alignment padding) is not this
     * allocation: unknown -> success with type Unregistered (or InvalidValue) */
    memset(&b, 0, sizeof(b));
    hipError_t e = hipPointerGetAttributes(&b, d + n);
    CHECKF(e == hipErrorInvalidValue || (e == hipSuccess && b.type == hipMemoryTypeUnregistered),
           "one-past-end pointer: %s, type %d", hipGetErrorName(e), (int)b.type);
    HIP_OK(hipFree(d));
}

TEST(hipPointerGetAttributes_host_malloc_memory)
{
    const unsigned flags[] = {hipHostMallocDefault, hipHostMallocMapped, hipHostMallocPortable};
    for (int i = 0; i < 3; i++) {
        char *h = NULL;
        hipPointerAttribute_t a, b;
        size_t n = 64 * KiB;
        HIP_OK(hipHostMalloc((void **)&h, n, flags[i]));
        HIP_OK(hipPointerGetAttributes(&a, h));
        CHECKF(a.type == hipMemoryTypeHost, "flags 0x%x: type %d", flags[i], (int)a.type);
        CHECK(a.hostPointer == h);
        CHECK(a.devicePointer != NULL);
        CHECK(a.isManaged == 0);
        HIP_OK(hipPointerGetAttributes(&b, h + n / 2));
        CHECK((char *)b.hostPointer == h + n / 2);
        CHECK(b.type == hipMemoryTypeHost);
        HIP_OK(hipHostFree(h));
    }
}

TEST(hipPointerGetAttributes_unregistered_host_memory)
{
    /* hip-tests Unit_hipPointerGetAttributes_GpuIter_Unregistered_Memory */
    char stack_buf[1000];
    char *heap = xmalloc(20);
    void *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    const void *ptrs[] = {stack_buf, heap, map, (const void *)&hc_now_ms};
    for (int i = 0; i < 4; i++) {
        hipPointerAttribute_t a;
        memset(&a, 0xcc, sizeof(a));
        HIP_OK(hipPointerGetAttributes(&a, ptrs[i]));
        CHECKF(a.type == hipMemoryTypeUnregistered, "pointer %d: type %d", i, (int)a.type);
        CHECK(a.devicePointer == NULL);
        CHECK(a.hostPointer == NULL);
        CHECK(a.isManaged == 0);
        CHECKF(a.device == hipInvalidDeviceId, "pointer %d: device %d", i, a.device);
    }
    munmap(map, 4096);
    free(heap);
}

TEST(hipPointerGetAttributes_freed_pointer)
{
    void *d = NULL;
    hipPointerAttribute_t a;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipFree(d));
    memset(&a, 0, sizeof(a));
    hipError_t e = hipPointerGetAttributes(&a, d);
    CHECKF(e == hipErrorInvalidValue || (e == hipSuccess && a.type == hipMemoryTypeUnregistered),
           "freed pointer: %s, type %d", hipGetErrorName(e), (int)a.type);
}

TEST(hipPointerGetAttributes_negative)
{
    void *d = NULL;
    hipPointerAttribute_t a;
    HIP_OK(hipMalloc(&d, 4));
    CHECK_HIP(hipPointerGetAttributes(NULL, d), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttributes(&a, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttributes(NULL, NULL), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
}

TEST(multigpu_hipPointerGetAttributes_device_of_allocation)
{
    /* hip-tests Unit_hipPointerGetAttributes_GpuIter */
    REQUIRE_GPUS(2);
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int i = 0; i < n; i++) {
        void *d = NULL, *h = NULL;
        hipPointerAttribute_t a;
        HIP_OK(hipSetDevice(i));
        HIP_OK(hipMalloc(&d, 64));
        HIP_OK(hipHostMalloc(&h, 64, hipHostMallocDefault));
        HIP_OK(hipSetDevice((i + 1) % n)); /* query from another device */
        HIP_OK(hipPointerGetAttributes(&a, d));
        CHECK(a.device == i);
        CHECK(a.type == hipMemoryTypeDevice);
        HIP_OK(hipPointerGetAttributes(&a, h));
        CHECK(a.device == i);
        CHECK(a.type == hipMemoryTypeHost);
        HIP_OK(hipFree(d));
        HIP_OK(hipHostFree(h));
    }
}

/* ---- hipMemGetAddressRange ------------------------------------------------- */

static void check_range(void *base, size_t size, size_t off)
{
    hipDeviceptr_t b = NULL;
    size_t s = 0;
    HIP_OK(hipMemGetAddressRange(&b, &s, (hipDeviceptr_t)((char *)base + off)));
    CHECKF(b == base && s == size, "range of %p+%zu = (%p, %zu), expected (%p, %zu)", base, off,
           b, s, base, size);
}

TEST(hipMemGetAddressRange_device_and_host)
{
    /* hip-tests Unit_hipMemGetAddressRange_Positive: size is the requested size */
    const size_t sizes[] = {1, 100, 1000, 4096, 4097, 3 * MiB + 5};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        void *d = NULL, *h = NULL;
        HIP_OK(hipMalloc(&d, n));
        HIP_OK(hipHostMalloc(&h, n, hipHostMallocDefault));
        const size_t offs[] = {0, 20, 40, 60, 80, n / 2, n - 1};
        for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
            if (offs[k] >= n)
                continue;
            check_range(d, n, offs[k]);
            check_range(h, n, offs[k]);
        }
        HIP_OK(hipFree(d));
        HIP_OK(hipHostFree(h));
    }
}

TEST(hipMemGetAddressRange_negative)
{
    hipDeviceptr_t b = (hipDeviceptr_t)0x1;
    size_t s = 7;
    char stack_byte;
    char *d = NULL, *freed = NULL;
    HIP_OK(hipMalloc((void **)&d, 2048));
    HIP_OK(hipMalloc((void **)&freed, 4096));
    HIP_OK(hipFree(freed));
    CHECK_HIP(hipMemGetAddressRange(&b, &s, NULL), hipErrorNotFound);
    /* 16 KiB past the start of a 2 KiB allocation (hip-tests) */
    CHECK_HIP(hipMemGetAddressRange(&b, &s, d + 4096 * sizeof(int)), hipErrorNotFound);
    CHECK_HIP(hipMemGetAddressRange(&b, &s, &stack_byte), hipErrorNotFound);
    CHECK_HIP(hipMemGetAddressRange(&b, &s, freed), hipErrorNotFound);
    CHECK(b == (hipDeviceptr_t)0x1 && s == 7); /* untouched on failure */
    HIP_OK(hipFree(d));
}

TEST(hipMemGetAddressRange_one_past_end_odd_size)
{
    char *d = NULL;
    hipDeviceptr_t b;
    size_t s;
    HIP_OK(hipMalloc((void **)&d, 1000));
    check_range(d, 1000, 999);
    CHECK_HIP(hipMemGetAddressRange(&b, &s, d + 1000), hipErrorNotFound);
    HIP_OK(hipFree(d));
}

TEST(hipMemGetAddressRange_many_allocations)
{
    /* lookups stay right among many live allocations (and after some are freed) */
    enum { N = 512 };
    static char *p[N];
    static size_t sz[N];
    for (int i = 0; i < N; i++) {
        sz[i] = (size_t)((i * 2654435761u) % 70000) + 1;
        HIP_OK(hipMalloc((void **)&p[i], sz[i]));
    }
    for (int i = 0; i < N; i += 3) {
        HIP_OK(hipFree(p[i]));
        p[i] = NULL;
    }
    double t0 = hc_now_ms();
    int lookups = 0;
    for (int round = 0; round < 20; round++)
        for (int i = 0; i < N; i++) {
            if (!p[i])
                continue;
            size_t off = (size_t)((i * 7 + round * 131) % (int)sz[i]);
            hipDeviceptr_t b = NULL;
            size_t s = 0;
            hipError_t e = hipMemGetAddressRange(&b, &s, p[i] + off);
            lookups++;
            if (e != hipSuccess || b != p[i] || s != sz[i]) {
                CHECKF(0, "allocation %d (+%zu): %s (%p, %zu), expected (%p, %zu)", i, off,
                       hipGetErrorName(e), b, s, (void *)p[i], sz[i]);
                round = 20;
                break;
            }
        }
    printf("    %d lookups among %d allocations: %.3f us each\n", lookups, N - (N + 2) / 3,
           (hc_now_ms() - t0) * 1000.0 / lookups);
    for (int i = 0; i < N; i++)
        if (p[i])
            HIP_OK(hipFree(p[i]));
}

struct range_thr {
    int id;
    int errors;
};

static void *range_thread(void *arg)
{
    struct range_thr *r = arg;
    for (int i = 0; i < 100; i++) {
        size_t n = (size_t)(r->id * 100 + i) * 37 + 1;
        char *d = NULL;
        hipDeviceptr_t b = NULL;
        size_t s = 0;
        if (hipMalloc((void **)&d, n) != hipSuccess) {
            r->errors++;
            continue;
        }
        if (hipMemGetAddressRange(&b, &s, d + n - 1) != hipSuccess || b != d || s != n)
            r->errors++;
        if (hipFree(d) != hipSuccess)
            r->errors++;
    }
    return NULL;
}

TEST(threads_hipMemGetAddressRange_concurrent)
{
    enum { T = 6 };
    pthread_t th[T];
    struct range_thr r[T];
    for (int i = 0; i < T; i++) {
        r[i] = (struct range_thr){i, 0};
        REQUIRE(pthread_create(&th[i], NULL, range_thread, &r[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECKF(r[i].errors == 0, "thread %d saw %d errors", i, r[i].errors);
    }
}

/* HIP_POINTER_ATTRIBUTE_BUFFER_ID is never reused: an allocation made at the address of a freed
 * one gets another id (hip-tests Unit_hipPointerGetAttribute_BufferID; clr getUniqueId), and an
 * interior pointer reports its allocation's id. */
TEST(hipPointerGetAttribute_buffer_id_not_reused)
{
    unsigned int id1 = 0, id2 = 0, id3 = 0;
    char *a = NULL, *b = NULL;
    HIP_OK(hipMalloc((void **)&a, 4096));
    HIP_OK(hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)a));
    HIP_OK(hipPointerGetAttribute(&id3, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)(a + 100)));
    CHECK(id1 != 0 && id3 == id1);
    HIP_OK(hipFree(a));
    HIP_OK(hipMalloc((void **)&b, 4096));
    HIP_OK(hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)b));
    CHECK(id2 != 0 && id2 != id1);
    HIP_OK(hipFree(b));
}

/* A host function that holds its stream until the gate opens. */
struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open, ran;
};

static void gate_wait(void *p)
{
    struct gate *g = p;
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    g->ran = 1;
    pthread_mutex_unlock(&g->mu);
}

static void gate_open(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void *gate_open_later(void *p)
{
    usleep(100 * 1000); /* only gives a hipMemcpy that does not wait the chance to return early */
    gate_open(p);
    return NULL;
}

/* hip-tests Unit_hipPointerSetAttribute_Positive_SyncMemops; clr ihipMemcpy: a device-to-device
 * hipMemcpy returns before the copy is done unless both sides have SYNC_MEMOPS set. The blocking
 * stream `s` is held by a host function, so the null-stream copy waits for it on the GPU. */
TEST(hipPointerSetAttribute_sync_memops)
{
    const size_t n = 1 << 20;
    char *src = NULL, *dst = NULL;
    HIP_OK(hipMalloc((void **)&src, n));
    HIP_OK(hipMalloc((void **)&dst, n));
    HIP_OK(hipMemset(src, 0x11, n));
    HIP_OK(hipMemset(dst, 0, n));
    HIP_OK(hipDeviceSynchronize());
    unsigned char flag = 0xff;
    HIP_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, src));
    CHECK(flag == 0);
    hipStream_t s = NULL;
    HIP_OK(hipStreamCreate(&s));

    struct gate g1 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    HIP_OK(hipLaunchHostFunc(s, gate_wait, &g1));
    HIP_OK(hipMemcpy(dst, src, n, hipMemcpyDeviceToDevice)); /* returns: the copy is queued */
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    CHECK(!g1.ran);
    gate_open(&g1);
    HIP_OK(hipDeviceSynchronize());
    char *h = xmalloc(n);
    HIP_OK(hipMemcpy(h, dst, n, hipMemcpyDeviceToHost));
    CHECK(h[0] == 0x11 && h[n - 1] == 0x11);

    unsigned v = 1;
    HIP_OK(hipPointerSetAttribute(&v, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, src));
    HIP_OK(hipPointerSetAttribute(&v, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, dst + 64)); /* inside */
    flag = 0;
    HIP_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, dst));
    CHECK(flag == 1);
    HIP_OK(hipMemset(src, 0x22, n));
    struct gate g2 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    HIP_OK(hipLaunchHostFunc(s, gate_wait, &g2));
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, gate_open_later, &g2) == 0);
    HIP_OK(hipMemcpy(dst, src, n, hipMemcpyDeviceToDevice)); /* waits for the copy, so for s */
    pthread_mutex_lock(&g2.mu);
    CHECK(g2.ran);
    pthread_mutex_unlock(&g2.mu);
    HIP_OK(hipStreamQuery(s));
    pthread_join(t, NULL);
    HIP_OK(hipMemcpy(h, dst, n, hipMemcpyDeviceToHost));
    CHECK(h[0] == 0x22 && h[n - 1] == 0x22);

    /* clearing it again */
    v = 0;
    HIP_OK(hipPointerSetAttribute(&v, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, dst));
    flag = 1;
    HIP_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, dst));
    CHECK(flag == 0);
    free(h);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(src));
    HIP_OK(hipFree(dst));
}

/* hip-tests Unit_hipPointerSetAttribute_Negative_Parameters; clr ihipPointerSetAttribute. */
TEST(hipPointerSetAttribute_negative)
{
    int *mem = NULL;
    HIP_OK(hipMalloc((void **)&mem, 4));
    unsigned value = 0;
    CHECK_HIP(hipPointerSetAttribute(NULL, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, mem), hipErrorInvalidValue);
    CHECK_HIP(hipPointerSetAttribute(&value, (hipPointer_attribute)-1, mem), hipErrorInvalidValue);
    CHECK_HIP(hipPointerSetAttribute(&value, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, mem), hipErrorInvalidValue);
    CHECK_HIP(hipPointerSetAttribute(&value, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, NULL), hipErrorInvalidValue);
    value = 2;
    CHECK_HIP(hipPointerSetAttribute(&value, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, mem), hipErrorInvalidValue);
    value = 0;
    int mem_host;
    CHECK_HIP(hipPointerSetAttribute(&value, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, &mem_host),
              hipErrorInvalidDevicePointer);
    /* pinned host memory is memory the runtime knows */
    void *pinned = NULL;
    HIP_OK(hipHostMalloc(&pinned, 64, 0));
    HIP_OK(hipPointerSetAttribute(&value, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, pinned));
    HIP_OK(hipHostFree(pinned));
    HIP_OK(hipFree(mem));
    CHECK_HIP(hipPointerSetAttribute(&value, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, mem), hipErrorInvalidDevicePointer);
}
