/*
 * Small hipMallocs share blocks (issue 12): the rules that must hold whatever
 * backs them. Each allocation is its own allocation to every API: interior
 * frees fail, address ranges and attributes are the user's, copies and fills
 * stop at the user's size, IPC of one opens exactly that one, and freed memory
 * comes back (hipMemGetInfo). Plus 200,000 live allocations with correct
 * lookups.
 */
#include "proc.h"
#include "../shared.h"


/* Sizes that land in different size classes, the edges of classes included. */
static const size_t small_sizes[] = {1, 255, 256, 257, 300, 1000, 4096, 4097, 65536, 100000, 262144};
#define NSMALL (sizeof small_sizes / sizeof small_sizes[0])

/* Whether the bytes just past an allocation of n bytes are in no allocation: n
 * does not fill its power-of-two size class (the next slot starts right after a
 * full one). */
static int gap_after(size_t n)
{
    return n < 256 || (n & (n - 1)) != 0;
}

static void check_range(void *p, size_t size)
{
    hipDeviceptr_t base = NULL;
    size_t got = 0;
    for (size_t off = 0; off < size; off += size / 3 + 1) {
        HIP_OK(hipMemGetAddressRange(&base, &got, (char *)p + off));
        CHECKF(base == p && got == size, "range of %p+%zu: %p, %zu (want %p, %zu)", p, off, base, got, p, size);
        hipPointerAttribute_t at;
        HIP_OK(hipPointerGetAttributes(&at, (char *)p + off));
        CHECK(at.type == hipMemoryTypeDevice);
        CHECK(at.devicePointer == (char *)p + off);
    }
    /* one past the user's end: in no allocation, even where the slot goes on */
    if (gap_after(size))
        CHECK_HIP(hipMemGetAddressRange(&base, &got, (char *)p + size), hipErrorNotFound);
}

TEST(suballoc_ranges_interior_free_bounds)
{
    void *p[NSMALL][3];
    for (size_t i = 0; i < NSMALL; i++)
        for (int k = 0; k < 3; k++) {
            HIP_OK(hipMalloc(&p[i][k], small_sizes[i]));
            CHECKF(((uintptr_t)p[i][k] & 255) == 0, "hipMalloc(%zu) = %p: not 256-byte aligned", small_sizes[i],
                   p[i][k]);
        }
    for (size_t i = 0; i < NSMALL; i++) {
        size_t n = small_sizes[i];
        for (int k = 0; k < 3; k++) {
            check_range(p[i][k], n);
            if (n > 1)
                CHECK_HIP(hipFree((char *)p[i][k] + 1), hipErrorInvalidValue);
            if (gap_after(n))
                CHECK_HIP(hipFree((char *)p[i][k] + n), hipErrorInvalidValue);
            /* bounds: the user's size, not the slot's */
            CHECK_HIP(hipMemset(p[i][k], 1, n + 1), hipErrorInvalidValue);
            void *h = xmalloc(n + 1);
            CHECK_HIP(hipMemcpy(h, p[i][k], n + 1, hipMemcpyDeviceToHost), hipErrorInvalidValue);
            CHECK_HIP(hipMemcpy(p[i][k], h, n + 1, hipMemcpyHostToDevice), hipErrorInvalidValue);
            free(h);
        }
        /* data round trips, and a fill of one leaves its neighbours alone */
        for (int k = 0; k < 3; k++) {
            void *h = xmalloc(n);
            pat_fill(h, n, (unsigned)(i * 3 + k));
            HIP_OK(hipMemcpy(p[i][k], h, n, hipMemcpyHostToDevice));
            free(h);
        }
        HIP_OK(hipMemset(p[i][1], 0xab, n));
        for (int k = 0; k < 3; k++) {
            void *h = xmalloc(n);
            HIP_OK(hipMemcpy(h, p[i][k], n, hipMemcpyDeviceToHost));
            if (k == 1)
                CHECK_BYTES(h, n, 0xab);
            else
                CHECK_PATTERN(h, n, (unsigned)(i * 3 + k));
            free(h);
        }
    }
    for (size_t i = 0; i < NSMALL; i++)
        for (int k = 0; k < 3; k++) {
            HIP_OK(hipFree(p[i][k]));
            CHECK_HIP(hipFree(p[i][k]), hipErrorInvalidValue);
        }
}

TEST(suballoc_meminfo_comes_back)
{
    size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    enum { N = 5000 };
    void **p = calloc(N, sizeof(void *));
    REQUIRE(p);
    for (int i = 0; i < N; i++)
        HIP_OK(hipMalloc(&p[i], small_sizes[i % NSMALL]));
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECKF(free1 < free0, "free %zu while holding %d allocations, %zu before", free1, N, free0);
    /* free in an order that empties blocks from the middle */
    for (int i = 0; i < N; i += 2)
        HIP_OK(hipFree(p[i]));
    for (int i = 1; i < N; i += 2)
        HIP_OK(hipFree(p[i]));
    HIP_OK(hipMemGetInfo(&free2, &total));
    CHECKF(free2 == free0, "free %zu after freeing everything, %zu before", free2, free0);
    free(p);
}

/* ---- IPC of a sub-allocation --------------------------------------------- */

static void sub_importer(int fd, void *arg)
{
    (void)arg;
    hipIpcMemHandle_t h, hi;
    xrecv(fd, &h, sizeof h);
    xrecv(fd, &hi, sizeof hi);
    importer_device();
    void *p = NULL, *q = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
    hipDeviceptr_t base = NULL;
    size_t size = 0;
    HIP_OK(hipMemGetAddressRange(&base, &size, p));
    CHECKF(base == p && size == 256, "opened range %p, %zu (want %p, 256)", base, size, p);
    HIP_OK(hipMemGetAddressRange(&base, &size, (char *)p + 255));
    CHECK(base == p && size == 256);
    CHECK_HIP(hipMemGetAddressRange(&base, &size, (char *)p + 256), hipErrorNotFound);
    CHECK_HIP(hipMemGetAddressRange(&base, &size, (char *)p - 1), hipErrorNotFound);
    /* an interior pointer's handle opens into the same import */
    HIP_OK(hipIpcOpenMemHandle(&q, hi, hipIpcMemLazyEnablePeerAccess));
    CHECK(q == (char *)p + 100);
    uint8_t buf[512];
    HIP_OK(hipMemcpy(buf, p, 256, hipMemcpyDeviceToHost));
    CHECK_PATTERN(buf, 256, 2);
    /* the neighbours are out of reach */
    CHECK_HIP(hipMemcpy(buf, p, 257, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy(buf, (char *)p - 256, 256, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy(buf, (char *)p + 256, 256, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(p, 0, 257), hipErrorInvalidValue);
    CHECK_HIP(hipMemset((char *)p - 1, 0, 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpy((char *)p + 200, buf, 100, hipMemcpyHostToDevice), hipErrorInvalidValue);
    hipPointerAttribute_t at;
    CHECK_HIP(hipPointerGetAttributes(&at, (char *)p + 256), hipErrorInvalidValue);
    /* write the whole allocation */
    pat_fill(buf, 256, 9);
    HIP_OK(hipMemcpy(p, buf, 256, hipMemcpyHostToDevice));
    HIP_OK(hipIpcCloseMemHandle(q));
    HIP_OK(hipIpcCloseMemHandle(p));
    send_u64(fd, 1);
}

TEST(suballoc_ipc_opens_exactly_the_allocation)
{
    struct peer imp = spawn(sub_importer, NULL);
    void *p[3];
    for (int k = 0; k < 3; k++) {
        HIP_OK(hipMalloc(&p[k], 256));
        uint8_t h[256];
        pat_fill(h, 256, (unsigned)(k + 1));
        HIP_OK(hipMemcpy(p[k], h, 256, hipMemcpyHostToDevice));
    }
    hipIpcMemHandle_t h, hi;
    HIP_OK(hipIpcGetMemHandle(&h, p[1]));
    HIP_OK(hipIpcGetMemHandle(&hi, (char *)p[1] + 100));
    xsend(imp.fd, &h, sizeof h);
    xsend(imp.fd, &hi, sizeof hi);
    CHECK(recv_u64(imp.fd) == 1);
    uint8_t b[256];
    for (int k = 0; k < 3; k++) {
        HIP_OK(hipMemcpy(b, p[k], 256, hipMemcpyDeviceToHost));
        CHECK_PATTERN(b, 256, k == 1 ? 9u : (unsigned)(k + 1));
    }
    join(&imp, "importer");
    for (int k = 0; k < 3; k++)
        HIP_OK(hipFree(p[k]));
}

/* ---- scale ------------------------------------------------------------------ */

TEST(suballoc_200k_live_allocations)
{
    enum { N = 200000 };
    size_t free0 = 0, free1 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    void *warm = NULL;
    HIP_OK(hipMalloc(&warm, 256)); /* the runtime's own fds are open from here */
    HIP_OK(hipFree(warm));
    int fds0 = fd_count();
    void **p = calloc(N, sizeof(void *));
    REQUIRE(p);
    for (int i = 0; i < N; i++) {
        hipError_t e = hipMalloc(&p[i], 256);
        REQUIREF(e == hipSuccess, "hipMalloc #%d: %s", i, hipGetErrorName(e));
    }
    int fds1 = fd_count();
    CHECKF(fds1 - fds0 < 16, "%d fds open with %d live allocations, %d before", fds1, N, fds0);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < 20000; t++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        int i = (int)(seed % N);
        size_t off = (size_t)(seed >> 40) % 256;
        hipDeviceptr_t base = NULL;
        size_t size = 0;
        HIP_OK(hipMemGetAddressRange(&base, &size, (char *)p[i] + off));
        REQUIREF(base == p[i] && size == 256, "range of allocation %d + %zu: %p, %zu (want %p, 256)", i, off, base,
                 size, p[i]);
        hipPointerAttribute_t at;
        HIP_OK(hipPointerGetAttributes(&at, (char *)p[i] + off));
        REQUIRE(at.type == hipMemoryTypeDevice && at.device == 0 && at.devicePointer == (char *)p[i] + off);
    }
    /* data round trips through some of them */
    for (int t = 0; t < 200; t++) {
        int i = (int)((uint64_t)t * 7919 % N);
        uint8_t h[256];
        pat_fill(h, 256, (unsigned)i);
        HIP_OK(hipMemcpy(p[i], h, 256, hipMemcpyHostToDevice));
    }
    for (int t = 0; t < 200; t++) {
        int i = (int)((uint64_t)t * 7919 % N);
        uint8_t h[256];
        HIP_OK(hipMemcpy(h, p[i], 256, hipMemcpyDeviceToHost));
        CHECK_PATTERN(h, 256, (unsigned)i);
    }
    for (int i = 0; i < N; i++)
        HIP_OK(hipFree(p[i]));
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECKF(free1 == free0, "free %zu after freeing %d allocations, %zu before", free1, N, free0);
    CHECK(fd_count() == fds0);
    free(p);
}

/* ---- VRAM is counted per GPU across processes ------------------------------------------- */

static void meminfo_watcher(int fd, void *arg)
{
    (void)arg;
    size_t f0 = 0, f1 = 0, f2 = 0, total = 0;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemGetInfo(&f0, &total));
    send_u64(fd, 1);
    CHECK(recv_u64(fd) == 2); /* the other process holds 1 GiB now */
    HIP_OK(hipMemGetInfo(&f1, &total));
    CHECKF(f1 + 1 * GiB <= f0, "free %zu while another process holds 1 GiB, %zu before", f1, f0);
    /* and an allocation of what is left fails here */
    void *p = NULL;
    CHECK_HIP(hipMalloc(&p, f1 + 64 * MiB), hipErrorOutOfMemory);
    send_u64(fd, 3);
    CHECK(recv_u64(fd) == 4); /* freed */
    HIP_OK(hipMemGetInfo(&f2, &total));
    CHECKF(f2 == f0, "free %zu after the other process freed, %zu before", f2, f0);
    send_u64(fd, 5);
}

TEST(meminfo_counts_other_processes)
{
    struct peer w = spawn(meminfo_watcher, NULL);
    CHECK(recv_u64(w.fd) == 1);
    void *p = NULL;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMalloc(&p, 1 * GiB));
    send_u64(w.fd, 2);
    CHECK(recv_u64(w.fd) == 3);
    HIP_OK(hipFree(p));
    send_u64(w.fd, 4);
    CHECK(recv_u64(w.fd) == 5);
    join(&w, "watcher");
}

/* ---- the BO cache (src/core/memory.rs BO_CACHE_MAX): hipFree keeps the BO of a plain
 * hipMalloc of up to 4 MiB for the next hipMalloc of the same page-rounded size ---- */

static const size_t cached_sizes[] = {(256 << 10) + 1, 512 << 10, 1 << 20, (1 << 20) + 1, 2 << 20, 4 << 20};
#define NCACHED (sizeof cached_sizes / sizeof cached_sizes[0])

static void require_sim_counters(void)
{
    HIP_OK(hipInit(0));
    if (kfdsim_counter("calls.total") == 0)
        SKIP("not under kfdsim: no per-call counters");
}

TEST(bo_cache_malloc_free_cycles_make_no_ioctl)
{
    require_sim_counters();
    /* the null stream's queue and the staging buffers exist before counting */
    uint8_t b = 0;
    void *w = NULL;
    HIP_OK(hipMalloc(&w, 4096));
    HIP_OK(hipMemset(w, 1, 4096));
    HIP_OK(hipMemcpy(&b, w, 1, hipMemcpyDeviceToHost));
    HIP_OK(hipFree(w));
    for (size_t i = 0; i < NCACHED; i++) {
        size_t n = cached_sizes[i];
        void *p = NULL;
        HIP_OK(hipMalloc(&p, n));
        HIP_OK(hipFree(p));
        uint64_t c0 = kfdsim_counter("calls.total");
        for (int k = 0; k < 100; k++) {
            HIP_OK(hipMalloc(&p, n));
            /* each one is still its own allocation to every API */
            if (k == 0) {
                hipDeviceptr_t base = NULL;
                size_t got = 0;
                HIP_OK(hipMemGetAddressRange(&base, &got, (char *)p + n - 1));
                CHECKF(base == p && got == n, "range of a reused %zu-byte allocation: %p, %zu", n, base, got);
                HIP_OK(hipMemset(p, 0x5a, n));
                uint8_t last = 0;
                HIP_OK(hipMemcpy(&last, (char *)p + n - 1, 1, hipMemcpyDeviceToHost));
                CHECK(last == 0x5a);
            }
            HIP_OK(hipFree(p));
        }
        uint64_t calls = kfdsim_counter("calls.total") - c0;
        /* the k == 0 memset + copy may queue and wait; allocation and free make none */
        CHECKF(calls <= 2, "%zu bytes: %llu ioctls/mmaps in 100 hipMalloc + hipFree cycles", n,
               (unsigned long long)calls);
    }
}

TEST(bo_cache_meminfo_and_reset_give_it_back)
{
    require_sim_counters();
    size_t free0 = 0, free1 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    uint64_t vram0 = kfdsim_counter("gpu0.vram_bytes");
    void *p = NULL;
    HIP_OK(hipMalloc(&p, 2 << 20));
    HIP_OK(hipFree(p));
    /* kept by the cache ... */
    CHECKF(kfdsim_counter("gpu0.vram_bytes") == vram0 + (2 << 20), "VRAM %llu after a cached free, %llu before",
           (unsigned long long)kfdsim_counter("gpu0.vram_bytes"), (unsigned long long)vram0);
    /* ... and hipMemGetInfo does not count it as used: it gives it back first */
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECKF(free1 == free0, "free %zu after hipFree, %zu before", free1, free0);
    CHECK(kfdsim_counter("gpu0.vram_bytes") == vram0);
    /* hipDeviceReset gives it back too */
    HIP_OK(hipMalloc(&p, 1 << 20));
    HIP_OK(hipFree(p));
    CHECK(kfdsim_counter("gpu0.vram_bytes") == vram0 + (1 << 20));
    HIP_OK(hipDeviceReset());
    CHECKF(kfdsim_counter("gpu0.vram_bytes") == vram0, "VRAM %llu after hipDeviceReset, %llu before",
           (unsigned long long)kfdsim_counter("gpu0.vram_bytes"), (unsigned long long)vram0);
}

TEST(bo_cache_never_reuses_an_exported_bo)
{
    require_sim_counters();
    void *p = NULL;
    hipIpcMemHandle_t h;
    HIP_OK(hipMalloc(&p, 1 << 20));
    HIP_OK(hipFree(p));
    /* not exported: the next one reuses the BO (no ALLOC) */
    uint64_t a0 = kfdsim_counter("calls.ALLOC_MEMORY_OF_GPU");
    HIP_OK(hipMalloc(&p, 1 << 20));
    CHECK(kfdsim_counter("calls.ALLOC_MEMORY_OF_GPU") == a0);
    /* exported: another process may hold its dma-buf, so it is freed, never handed out again */
    HIP_OK(hipIpcGetMemHandle(&h, p));
    HIP_OK(hipFree(p));
    a0 = kfdsim_counter("calls.ALLOC_MEMORY_OF_GPU");
    uint64_t f0 = kfdsim_counter("calls.FREE_MEMORY_OF_GPU");
    HIP_OK(hipMalloc(&p, 1 << 20));
    CHECK(kfdsim_counter("calls.ALLOC_MEMORY_OF_GPU") == a0 + 1);
    CHECK(kfdsim_counter("calls.FREE_MEMORY_OF_GPU") == f0);
    HIP_OK(hipFree(p));
}

/* ---- threads: each thread keeps free slots of its own (src/core/small.rs) ------------------ */

#include <pthread.h>

/* hc_fail is not thread-safe: worker threads report through this lock. */
static pthread_mutex_t t_fail_lock = PTHREAD_MUTEX_INITIALIZER;
#define T_CHECK(expr, ...)                                                                        \
    do {                                                                                          \
        if (!(expr)) {                                                                            \
            pthread_mutex_lock(&t_fail_lock);                                                     \
            hc_fail(__FILE__, __LINE__, __VA_ARGS__);                                             \
            pthread_mutex_unlock(&t_fail_lock);                                                   \
            return NULL;                                                                          \
        }                                                                                         \
    } while (0)
#define T_HIP(call, want)                                                                         \
    do {                                                                                          \
        hipError_t t_e_ = (call);                                                                 \
        T_CHECK(t_e_ == (want), "%s: %s, want %s", #call, hipGetErrorName(t_e_), hipGetErrorName(want)); \
    } while (0)
#define T_OK(call) T_HIP(call, hipSuccess)

enum { MT_THREADS = 8, MT_LIVE = 16, MT_ROUNDS = 12 };

/* Each round's allocations: thread t's are freed, half by t and half by thread t + 1. */
static void *mt_ptr[MT_THREADS][MT_LIVE];
static size_t mt_len[MT_THREADS][MT_LIVE];
static pthread_barrier_t mt_barrier;

static unsigned mt_seed(int t, int r, int j)
{
    return (unsigned)(t * 100003 + r * 1009 + j + 1);
}

/* One worker of suballoc_threads_never_overlap (its index is arg). */
static void *mt_worker(void *arg)
{
    int t = (int)(intptr_t)arg, next = (t + 1) % MT_THREADS;
    T_OK(hipSetDevice(0));
    uint8_t *h = malloc(256 << 10); /* the largest of small_sizes */
    T_CHECK(h != NULL, "malloc");
    for (int r = 0; r < MT_ROUNDS; r++) {
        for (int j = 0; j < MT_LIVE; j++) {
            size_t n = small_sizes[(size_t)(t + r + j) % NSMALL];
            void *p = NULL;
            T_OK(hipMalloc(&p, n));
            T_CHECK(((uintptr_t)p & 255) == 0, "hipMalloc(%zu) = %p: not 256-byte aligned", n, p);
            hipDeviceptr_t base = NULL;
            size_t got = 0;
            T_OK(hipMemGetAddressRange(&base, &got, (char *)p + n - 1));
            T_CHECK(base == p && got == n, "range of %p (%zu B) + %zu: %p, %zu", p, n, n - 1, base, got);
            pat_fill(h, n, mt_seed(t, r, j));
            T_OK(hipMemcpy(p, h, n, hipMemcpyHostToDevice));
            mt_ptr[t][j] = p;
            mt_len[t][j] = n;
        }
        /* Every thread's allocations are live and written: two that overlapped would show the
         * bytes of whichever was written last. */
        pthread_barrier_wait(&mt_barrier);
        for (int j = 0; j < MT_LIVE; j++) {
            size_t n = mt_len[t][j];
            T_OK(hipMemcpy(h, mt_ptr[t][j], n, hipMemcpyDeviceToHost));
            size_t bad = pat_mismatch(h, n, mt_seed(t, r, j));
            T_CHECK(bad == n, "round %d: allocation %d (%p, %zu B): byte %zu overwritten", r, j, mt_ptr[t][j], n, bad);
            /* an interior pointer is no allocation to hipFree, and changes nothing */
            if (n > 1)
                T_HIP(hipFree((char *)mt_ptr[t][j] + 1), hipErrorInvalidValue);
        }
        pthread_barrier_wait(&mt_barrier);
        /* even ones by their owner, odd ones of the next thread by this one */
        for (int j = 0; j < MT_LIVE; j += 2)
            T_OK(hipFree(mt_ptr[t][j]));
        for (int j = 1; j < MT_LIVE; j += 2)
            T_OK(hipFree(mt_ptr[next][j]));
        pthread_barrier_wait(&mt_barrier);
        /* all freed: a second hipFree of any is an error, whichever thread caches the slot now */
        for (int j = 0; j < MT_LIVE; j++) {
            T_HIP(hipFree(mt_ptr[t][j]), hipErrorInvalidValue);
            hipPointerAttribute_t at;
            T_HIP(hipPointerGetAttributes(&at, mt_ptr[t][j]), hipErrorInvalidValue);
        }
        pthread_barrier_wait(&mt_barrier);
    }
    free(h);
    return NULL;
}

/* Runs `fn` on `n` (at most MT_THREADS) threads that meet on `barrier`, each given its index,
 * and joins them; the barrier is made for them and destroyed after. */
static void run_threads(pthread_barrier_t *barrier, int n, void *(*fn)(void *))
{
    pthread_t th[MT_THREADS];
    REQUIRE(n <= MT_THREADS && pthread_barrier_init(barrier, NULL, (unsigned)n) == 0);
    for (int t = 0; t < n; t++)
        REQUIRE(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(barrier);
}

/* Threads allocating and freeing small allocations of every class at once, each freeing some of
 * another thread's: no two live allocations share a byte (each holds its own pattern until it
 * is freed), frees of interior pointers and second frees fail, and everything comes back. */
TEST(suballoc_threads_never_overlap)
{
    size_t free0 = 0, free1 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    run_threads(&mt_barrier, MT_THREADS, mt_worker);
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECKF(free1 == free0, "free %zu after the threads freed everything, %zu before", free1, free0);
}

/* Two threads in step (suballoc_thread_exit_gives_cached_slots_back,
 * suballoc_trim_takes_slots_other_threads_cache). */
static pthread_barrier_t step;

enum { EXIT_THREADS = 4, BIG_SLOT = 256 << 10 };

/* Takes two slots of 256 KiB (a refill of that class) at once with the other threads, so
 * that together they hold one block's 8, then frees them into its cache and exits. */
static void *exit_worker(void *arg)
{
    (void)arg;
    void *p = NULL, *q = NULL;
    T_OK(hipSetDevice(0));
    T_OK(hipMalloc(&p, BIG_SLOT));
    T_OK(hipMalloc(&q, BIG_SLOT));
    pthread_barrier_wait(&step);
    T_OK(hipFree(p));
    T_OK(hipFree(q));
    return NULL;
}

/* A thread that exits with free slots in its cache gives them back: the next allocation of
 * their class reuses them (no new block), and hipMemGetInfo counts them as free. */
TEST(suballoc_thread_exit_gives_cached_slots_back)
{
    size_t free0 = 0, free1 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    run_threads(&step, EXIT_THREADS, exit_worker);
    uint64_t allocs0 = kfdsim_counter("calls.ALLOC_MEMORY_OF_GPU");
    void *p = NULL;
    HIP_OK(hipMalloc(&p, BIG_SLOT));
    if (allocs0 != 0) /* under kfdsim: a slot the threads left, not a new block */
        CHECKF(kfdsim_counter("calls.ALLOC_MEMORY_OF_GPU") == allocs0,
               "a new block for a 256 KiB hipMalloc: the exited threads' slots did not come back");
    uint8_t *h = xmalloc(BIG_SLOT);
    pat_fill(h, BIG_SLOT, 77);
    HIP_OK(hipMemcpy(p, h, BIG_SLOT, hipMemcpyHostToDevice));
    memset(h, 0, BIG_SLOT);
    HIP_OK(hipMemcpy(h, p, BIG_SLOT, hipMemcpyDeviceToHost));
    CHECK_PATTERN(h, BIG_SLOT, 77);
    free(h);
    HIP_OK(hipFree(p));
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECKF(free1 == free0, "free %zu after the threads exited, %zu before", free1, free0);
}

/* Fills its cache (frees what it allocated), waits while the main thread asks hipMemGetInfo,
 * then allocates from its emptied cache again, with data checked. */
static void *cacher(void *arg)
{
    (void)arg;
    enum { N = 40 };
    static const size_t sizes[] = {256, 4096, 65536};
    void *p[N];
    T_OK(hipSetDevice(0));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            T_OK(hipMalloc(&p[i], sizes[i % 3]));
        for (int i = 0; i < N; i++) {
            uint8_t h[256], g[256];
            pat_fill(h, sizeof h, (unsigned)(round * N + i));
            T_OK(hipMemcpy(p[i], h, sizeof h, hipMemcpyHostToDevice));
            T_OK(hipMemcpy(g, p[i], sizeof g, hipMemcpyDeviceToHost));
            T_CHECK(memcmp(h, g, sizeof h) == 0, "round %d, allocation %d: bytes differ", round, i);
        }
        for (int i = 0; i < N; i++)
            T_OK(hipFree(p[i]));
        pthread_barrier_wait(&step); /* its cache holds slots now */
        pthread_barrier_wait(&step); /* hipMemGetInfo asked */
    }
    return NULL;
}

/* hipMemGetInfo counts the free slots a live thread keeps as free: it takes them from that
 * thread's cache and frees their blocks; the thread allocates on as before. */
TEST(suballoc_trim_takes_slots_other_threads_cache)
{
    size_t free0 = 0, free1 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    uint64_t vram0 = kfdsim_counter("gpu0.vram_bytes");
    REQUIRE(pthread_barrier_init(&step, NULL, 2) == 0);
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, cacher, NULL) == 0);
    for (int round = 0; round < 2; round++) {
        pthread_barrier_wait(&step);
        HIP_OK(hipMemGetInfo(&free1, &total));
        CHECKF(free1 == free0, "round %d: free %zu while another thread keeps freed slots, %zu before", round, free1,
               free0);
        if (vram0 != 0)
            CHECKF(kfdsim_counter("gpu0.vram_bytes") == vram0, "round %d: VRAM %llu held, %llu before", round,
                   (unsigned long long)kfdsim_counter("gpu0.vram_bytes"), (unsigned long long)vram0);
        pthread_barrier_wait(&step);
    }
    pthread_join(th, NULL);
    pthread_barrier_destroy(&step);
}

/* HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS and BUFFER_ID belong to one small allocation: not to its
 * neighbours in the block, not to the next allocation in its slot. */
TEST(suballoc_attributes_are_the_allocations)
{
    char *p = NULL, *q = NULL, *r = NULL;
    unsigned v = 1, id_p = 0, id_r = 0;
    unsigned char flag = 0;
    HIP_OK(hipMalloc((void **)&p, 200));
    HIP_OK(hipMalloc((void **)&q, 200));
    HIP_OK(hipPointerSetAttribute(&v, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, p + 199));
    HIP_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
    CHECK(flag == 1);
    HIP_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, q));
    CHECK(flag == 0);
    /* past the user's 200 bytes: no allocation */
    CHECK_HIP(hipPointerSetAttribute(&v, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, p + 200), hipErrorInvalidDevicePointer);
    HIP_OK(hipPointerGetAttribute(&id_p, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)p));
    HIP_OK(hipFree(p));
    CHECK_HIP(hipPointerSetAttribute(&v, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, p), hipErrorInvalidDevicePointer);
    HIP_OK(hipMalloc((void **)&r, 200));
    HIP_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, r));
    CHECK(flag == 0);
    HIP_OK(hipPointerGetAttribute(&id_r, HIP_POINTER_ATTRIBUTE_BUFFER_ID, (hipDeviceptr_t)r));
    CHECK(id_r != 0 && id_r != id_p);
    CHECKF(r == p, "the freed slot was not the next one handed out (%p, %p): the test proved less", r, p);
    HIP_OK(hipFree(q));
    HIP_OK(hipFree(r));
}

/* Peer access maps and unmaps the blocks of small allocations, whatever their slots hold: a
 * block whose slots are live, cached by a thread or free is mapped on the new peer once (its
 * next allocations are reachable there) and unmapped on disable. */
TEST(suballoc_peer_access_maps_and_unmaps_blocks)
{
    REQUIRE_GPUS(2);
    int can = 0;
    HIP_OK(hipDeviceCanAccessPeer(&can, 0, 1));
    if (!can)
        SKIP("GPUs 0 and 1 cannot access each other");
    require_sim_counters();
    void *keep = NULL, *p = NULL, *r = NULL, *d0 = NULL;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMalloc(&keep, 256)); /* a block of device 1, mapped there alone */
    HIP_OK(hipMalloc(&p, 256));
    HIP_OK(hipFree(p)); /* its slot cached by this thread */
    uint64_t m0 = kfdsim_counter("gpu0.mapped");
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    uint64_t m1 = kfdsim_counter("gpu0.mapped");
    CHECKF(m1 == m0 + 1, "%llu BOs mapped on GPU 0 after enabling access to GPU 1, %llu before (want its block)",
           (unsigned long long)m1, (unsigned long long)m0);
    /* the block's next allocation is reachable from device 0 */
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMalloc(&r, 256));
    uint8_t h[256];
    pat_fill(h, sizeof h, 31);
    HIP_OK(hipMemcpy(r, h, sizeof h, hipMemcpyHostToDevice));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMalloc(&d0, 256));
    HIP_OK(hipMemcpyPeer(d0, 0, r, 1, sizeof h));
    HIP_OK(hipDeviceSynchronize());
    memset(h, 0, sizeof h);
    HIP_OK(hipMemcpy(h, d0, sizeof h, hipMemcpyDeviceToHost));
    CHECK_PATTERN(h, sizeof h, 31);
    uint64_t m2 = kfdsim_counter("gpu0.mapped");
    HIP_OK(hipDeviceDisablePeerAccess(1));
    CHECKF(kfdsim_counter("gpu0.mapped") == m2 - 1, "%llu BOs mapped on GPU 0 after disabling, %llu before",
           (unsigned long long)kfdsim_counter("gpu0.mapped"), (unsigned long long)m2);
    HIP_OK(hipFree(d0));
    HIP_OK(hipFree(r));
    HIP_OK(hipFree(keep));
}
