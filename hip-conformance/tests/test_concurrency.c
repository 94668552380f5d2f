/*
 * Concurrency (issue 13): 16 threads sharing every visible GPU, each doing a random mix of
 * small and large hipMalloc, copies (sync, async on its own streams, D2D), peer copies, IPC
 * get/open/close, VMM create/reserve/map/set-access/unmap and event/stream traffic, checking
 * every byte it reads back; and 8 processes exchanging IPC handles in a ring. Afterwards the
 * sim's accounting (VRAM bytes of every GPU, dma-buf fds), hipMemGetInfo and /proc/self/fd
 * are back at their starting values.
 *
 * HIPCONF_STRESS_OPS sets the operations per thread (default 24: a few seconds in `make test`,
 * on 2 and 1 GPUs and on xgmi-4) and the rounds of the ring (default 6). HIPCONF_STRESS_SECONDS
 * (`make reliability`: STRESS_SECONDS, on 2 and 4 GPUs) runs each test for that long instead:
 * the threads until the time is up, the ring for as many rounds as fit (process 0 decides each
 * round and the decision travels round the ring with the handles). Each test prints a report:
 * operations, data checks (every buffer read back and compared), and fds, VmRSS, the sim's VRAM
 * bytes of every GPU and hipMemGetInfo before and after.
 *
 * concurrency_threads: IPC handles of other threads' live allocations (got concurrently with
 * their owners freeing and re-allocating; opening one in the same process is
 * hipErrorInvalidContext, as in AMD's runtime). concurrency_threads_with_exporter: the same
 * threads also open, read, write (their own slice) and close the IPC handles of a forked
 * process's allocations, which that process checks afterwards.
 */
#define _GNU_SOURCE
#include "common.h"
#include "proc.h"
#include "usage.h"
#include "../shared.h"

#include <pthread.h>

#define THREADS 16
#define PUB_SIZE (1 * MiB)
#define FOREIGN_BUFS 4
#define FOREIGN_SIZE (4 * MiB)
#define SLICE (FOREIGN_SIZE / THREADS)

static int stress_ops(int dflt)
{
    const char *e = getenv("HIPCONF_STRESS_OPS");
    return e && atoi(e) > 0 ? atoi(e) : dflt;
}

/* HIPCONF_STRESS_SECONDS, 0 when unset: the tests then run stress_ops operations. */
static double stress_seconds(void)
{
    const char *e = getenv("HIPCONF_STRESS_SECONDS");
    return e && atof(e) > 0 ? atof(e) : 0;
}

/* hc_fail is not thread-safe: the workers report through this lock. */
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
#define T_CHECK(expr, ...)                                                                        \
    do {                                                                                          \
        if (!(expr)) {                                                                            \
            pthread_mutex_lock(&fail_lock);                                                       \
            hc_fail(__FILE__, __LINE__, __VA_ARGS__);                                             \
            pthread_mutex_unlock(&fail_lock);                                                     \
            return 0;                                                                             \
        }                                                                                         \
    } while (0)
#define T_OK(call)                                                                                \
    do {                                                                                          \
        hipError_t w_e_ = (call);                                                                 \
        T_CHECK(w_e_ == hipSuccess, "%s: %s", #call, hipGetErrorName(w_e_));                      \
    } while (0)
#define T_PAT(buf, n, seed)                                                                       \
    do {                                                                                          \
        size_t w_i_ = pat_mismatch((buf), (n), (seed));                                           \
        k->checks++;                                                                              \
        T_CHECK(w_i_ == (n), "%s: byte %zu of %zu wrong (seed %u)", #buf, w_i_, (size_t)(n),      \
                (unsigned)(seed));                                                                \
    } while (0)

/* Each thread publishes one allocation (pattern `seed`) and its IPC handle; the others get
 * handles of it under the read lock while the owner replaces it under the write lock. */
struct slot {
    pthread_rwlock_t lock;
    void *p;
    unsigned seed;
    hipIpcMemHandle_t h;
};

/* The handles of a forked exporter's buffers (pattern 700 + i, each thread owning one SLICE
 * of buffer 0 to write). */
struct foreign {
    hipIpcMemHandle_t h[FOREIGN_BUFS];
};

struct world {
    int ndev, ops, with_foreign;
    double deadline_ms; /* hc_now_ms() at which the threads stop (0: after `ops` operations) */
    struct slot slots[THREADS];
    struct foreign fh;
};

struct worker {
    struct world *w;
    int id;
    unsigned rng;
    hipStream_t s[8];
    uint8_t *h, *back; /* 32 MiB host buffers */
    long done, checks; /* operations, buffers read back and compared */
};

static unsigned rnd(struct worker *k)
{
    k->rng = k->rng * 1103515245u + 12345u;
    return k->rng >> 8;
}

#define HOST_BUF (32 * MiB)

/* *p = hipMalloc of `n` bytes on device d (made current) holding pattern `seed`. */
static int t_dev_pattern(struct worker *k, int d, size_t n, unsigned seed, void **p)
{
    T_OK(hipSetDevice(d));
    T_OK(hipMalloc(p, n));
    pat_fill(k->h, n, seed);
    T_OK(hipMemcpy(*p, k->h, n, hipMemcpyHostToDevice));
    return 1;
}

/* hipMalloc of `n` bytes on device d, H2D pattern, D2H check, free. */
static int op_alloc(struct worker *k, int d, size_t n)
{
    unsigned seed = rnd(k);
    void *p = NULL;
    if (!t_dev_pattern(k, d, n, seed, &p))
        return 0;
    memset(k->back, 0, n);
    T_OK(hipMemcpy(k->back, p, n, hipMemcpyDeviceToHost));
    T_PAT(k->back, n, seed);
    uint8_t v = (uint8_t)seed;
    T_OK(hipMemset(p, v, n));
    T_OK(hipMemcpy(k->back, p, n, hipMemcpyDeviceToHost));
    k->checks++;
    T_CHECK(byte_mismatch(k->back, n, v) == n, "memset of %zu bytes", n);
    T_OK(hipFree(p));
    return 1;
}

/* Async H2D, D2D and D2H on the thread's stream of device d, an event between two streams. */
static int op_stream(struct worker *k, int d)
{
    size_t n = (size_t)(rnd(k) % (4 * MiB)) + 1;
    unsigned seed = rnd(k);
    void *a = NULL, *b = NULL;
    hipStream_t s2;
    hipEvent_t ev;
    T_OK(hipSetDevice(d));
    T_OK(hipMalloc(&a, n));
    T_OK(hipMalloc(&b, n));
    T_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    T_OK(hipEventCreateWithFlags(&ev, rnd(k) & 1 ? hipEventDisableTiming : 0));
    pat_fill(k->h, n, seed);
    T_OK(hipMemcpyAsync(a, k->h, n, hipMemcpyHostToDevice, k->s[d]));
    T_OK(hipEventRecord(ev, k->s[d]));
    T_OK(hipStreamWaitEvent(s2, ev, 0));
    T_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s2));
    T_OK(hipMemcpyAsync(k->back, b, n, hipMemcpyDeviceToHost, s2));
    T_OK(hipStreamSynchronize(s2));
    hipError_t q = hipEventQuery(ev);
    T_CHECK(q == hipSuccess, "hipEventQuery after the waiting stream finished: %s", hipGetErrorName(q));
    T_PAT(k->back, n, seed);
    T_OK(hipEventDestroy(ev));
    T_OK(hipStreamDestroy(s2));
    T_OK(hipFree(a));
    T_OK(hipFree(b));
    return 1;
}

/* hipMemcpyPeer and hipMemcpyPeerAsync between two random devices. */
static int op_peer(struct worker *k)
{
    int a = (int)(rnd(k) % (unsigned)k->w->ndev), b = (int)(rnd(k) % (unsigned)k->w->ndev);
    size_t n = (size_t)(rnd(k) % (8 * MiB)) + 1;
    unsigned seed = rnd(k);
    void *pa = NULL, *pb = NULL;
    if (!t_dev_pattern(k, a, n, seed, &pa))
        return 0;
    T_OK(hipSetDevice(b));
    T_OK(hipMalloc(&pb, n));
    if (rnd(k) & 1) {
        T_OK(hipMemcpyPeer(pb, b, pa, a, n));
    } else {
        T_OK(hipMemcpyPeerAsync(pb, b, pa, a, n, k->s[b]));
        T_OK(hipStreamSynchronize(k->s[b]));
    }
    memset(k->back, 0, n);
    T_OK(hipMemcpy(k->back, pb, n, hipMemcpyDeviceToHost));
    T_PAT(k->back, n, seed);
    T_OK(hipFree(pa));
    T_OK(hipFree(pb));
    return 1;
}

/* Replaces this thread's published allocation (new device, new pattern, new handle). */
static int op_republish(struct worker *k, int first)
{
    struct slot *sl = &k->w->slots[k->id];
    int d = (int)(rnd(k) % (unsigned)k->w->ndev);
    unsigned seed = rnd(k);
    void *p = NULL;
    if (!t_dev_pattern(k, d, PUB_SIZE, seed, &p))
        return 0;
    hipIpcMemHandle_t h;
    T_OK(hipIpcGetMemHandle(&h, p));
    pthread_rwlock_wrlock(&sl->lock);
    void *old = sl->p;
    sl->p = p;
    sl->seed = seed;
    sl->h = h;
    pthread_rwlock_unlock(&sl->lock);
    if (!first)
        T_OK(hipFree(old));
    return 1;
}

/* Another thread's allocation: its handle (of the base pointer) is the published one, it holds
 * its pattern, and opening it in this process is refused. */
static int op_ipc_local(struct worker *k)
{
    struct slot *sl = &k->w->slots[rnd(k) % THREADS];
    size_t off = (size_t)(rnd(k) % (PUB_SIZE / 4096)) * 4096;
    hipIpcMemHandle_t h;
    pthread_rwlock_rdlock(&sl->lock);
    hipError_t e = hipIpcGetMemHandle(&h, (char *)sl->p + off);
    int same = memcmp(&h, &sl->h, sizeof h) == 0;
    void *q = NULL;
    hipError_t eo = hipIpcOpenMemHandle(&q, h, hipIpcMemLazyEnablePeerAccess);
    hipError_t ec = hipMemcpy(k->back, sl->p, PUB_SIZE, hipMemcpyDeviceToHost);
    unsigned seed = sl->seed;
    pthread_rwlock_unlock(&sl->lock);
    T_CHECK(e == hipSuccess, "hipIpcGetMemHandle of another thread's allocation: %s", hipGetErrorName(e));
    T_CHECK(same || off, "two handles of one allocation differ");
    T_CHECK(eo == hipErrorInvalidContext, "hipIpcOpenMemHandle in the same process: %s", hipGetErrorName(eo));
    T_CHECK(ec == hipSuccess, "copy of another thread's allocation: %s", hipGetErrorName(ec));
    T_PAT(k->back, PUB_SIZE, seed);
    return 1;
}

/* A forked process's buffer: open on a random device, read (sync or async), write this
 * thread's slice of buffer 0 and read it back, close. */
static int op_ipc_foreign(struct worker *k)
{
    int d = (int)(rnd(k) % (unsigned)k->w->ndev), b = (int)(rnd(k) % FOREIGN_BUFS);
    void *p = NULL;
    T_OK(hipSetDevice(d));
    T_OK(hipIpcOpenMemHandle(&p, k->w->fh.h[b], hipIpcMemLazyEnablePeerAccess));
    memset(k->back, 0, FOREIGN_SIZE);
    if (b == 0) {
        /* only this thread's slice of buffer 0 is stable */
        unsigned seed = 900 + (unsigned)k->id + (rnd(k) % 50) * THREADS;
        char *mine = (char *)p + (size_t)k->id * SLICE;
        pat_fill(k->h, SLICE, seed);
        T_OK(hipMemcpy(mine, k->h, SLICE, hipMemcpyHostToDevice));
        T_OK(hipMemcpyAsync(k->back, mine, SLICE, hipMemcpyDeviceToHost, k->s[d]));
        T_OK(hipStreamSynchronize(k->s[d]));
        T_PAT(k->back, SLICE, seed);
        /* leave the slice as the exporter checks it at the end */
        pat_fill(k->h, SLICE, 800 + (unsigned)k->id);
        T_OK(hipMemcpy(mine, k->h, SLICE, hipMemcpyHostToDevice));
    } else {
        T_OK(hipMemcpy(k->back, p, FOREIGN_SIZE, hipMemcpyDeviceToHost));
        T_PAT(k->back, FOREIGN_SIZE, 700 + (unsigned)b);
    }
    T_OK(hipIpcCloseMemHandle(p));
    return 1;
}

/* VMM: create a chunk on device d, reserve, map, give access to every device that can have it,
 * copy in through d and out through the next device (when it has access), unmap, release. */
static int op_vmm(struct worker *k, int d)
{
    hipMemAllocationProp prop = vmm_device_prop(d);
    size_t g = 0;
    T_OK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
    size_t n = g * (1 + rnd(k) % 4);
    unsigned seed = rnd(k);
    hipMemGenericAllocationHandle_t h = NULL;
    void *va = NULL;
    T_OK(hipMemCreate(&h, n, &prop, 0));
    T_OK(hipMemAddressReserve(&va, n, 0, NULL, 0));
    T_OK(hipMemMap(va, n, 0, h, 0));
    /* access for d and every device that can reach d's memory (all of them in a hive; none
     * on PCIe without P2P, where hipMemSetAccess refuses them) */
    hipMemAccessDesc acc[8];
    size_t nacc = 0;
    int reader = d;
    for (int i = 0; i < k->w->ndev; i++) {
        int can = i == d;
        if (!can)
            T_OK(hipDeviceCanAccessPeer(&can, i, d));
        if (can) {
            acc[nacc++] = vmm_access_desc(i, hipMemAccessFlagsProtReadWrite);
            if (i == (d + 1) % k->w->ndev)
                reader = i;
        }
    }
    T_OK(hipMemSetAccess(va, n, acc, nacc));
    pat_fill(k->h, n, seed);
    T_OK(hipSetDevice(d));
    T_OK(hipMemcpy(va, k->h, n, hipMemcpyHostToDevice));
    T_OK(hipSetDevice(reader));
    memset(k->back, 0, n);
    T_OK(hipMemcpy(k->back, va, n, hipMemcpyDeviceToHost));
    T_PAT(k->back, n, seed);
    T_OK(hipMemUnmap(va, n));
    T_OK(hipMemAddressFree(va, n));
    T_OK(hipMemRelease(h));
    return 1;
}

static int one_op(struct worker *k)
{
    int d = (int)(rnd(k) % (unsigned)k->w->ndev);
    switch (rnd(k) % (k->w->with_foreign ? 10 : 9)) {
    case 0:
    case 1:
        return op_alloc(k, d, (size_t)(rnd(k) % (64 * KiB)) + 1);
    case 2:
        return op_alloc(k, d, 4 * MiB + (size_t)(rnd(k) % (24 * MiB)));
    case 3:
        return op_stream(k, d);
    case 4:
        return op_peer(k);
    case 5:
        return op_republish(k, 0);
    case 6:
    case 7:
        return op_ipc_local(k);
    case 8:
        return op_vmm(k, d);
    default:
        return op_ipc_foreign(k);
    }
}

static void *worker_main(void *arg)
{
    struct worker *k = arg;
    k->h = xmalloc(HOST_BUF);
    k->back = xmalloc(HOST_BUF);
    for (int d = 0; d < k->w->ndev; d++) {
        hipError_t e;
        if ((e = hipSetDevice(d)) != hipSuccess || (e = hipStreamCreate(&k->s[d])) != hipSuccess) {
            pthread_mutex_lock(&fail_lock);
            hc_fail(__FILE__, __LINE__, "thread %d: stream on device %d: %s", k->id, d, hipGetErrorName(e));
            pthread_mutex_unlock(&fail_lock);
            return NULL;
        }
    }
    for (int i = 0; k->w->deadline_ms ? hc_now_ms() < k->w->deadline_ms : i < k->w->ops; i++) {
        if (!one_op(k))
            break;
        k->done++;
    }
    for (int d = 0; d < k->w->ndev; d++)
        if (hipStreamDestroy(k->s[d]) != hipSuccess) {
            pthread_mutex_lock(&fail_lock);
            hc_fail(__FILE__, __LINE__, "thread %d: hipStreamDestroy", k->id);
            pthread_mutex_unlock(&fail_lock);
        }
    free(k->h);
    free(k->back);
    return NULL;
}

/* One pass of every operation on one thread, so that the runtime's lazily made objects
 * (staging buffers, SDMA queues of every device) exist before the baseline. */
static void warm_up_all(struct world *w)
{
    struct worker k = {w, 0, 1, {0}, NULL, NULL, 0, 0};
    k.h = xmalloc(HOST_BUF);
    k.back = xmalloc(HOST_BUF);
    for (int d = 0; d < w->ndev; d++) {
        HIP_OK(hipSetDevice(d));
        HIP_OK(hipStreamCreate(&k.s[d]));
    }
    for (int d = 0; d < w->ndev; d++) {
        REQUIRE(op_alloc(&k, d, 4 * KiB));
        REQUIRE(op_alloc(&k, d, 8 * MiB));
        REQUIRE(op_stream(&k, d));
        REQUIRE(op_vmm(&k, d));
    }
    for (int i = 0; i < 2 * w->ndev * w->ndev; i++)
        REQUIRE(op_peer(&k));
    /* the first export starts the IPC fd server (its listening socket stays) */
    void *p = dev_pattern(4 * KiB, 3);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    HIP_OK(hipFree(p));
    if (w->with_foreign)
        for (int i = 0; i < 4 * w->ndev; i++)
            REQUIRE(op_ipc_foreign(&k));
    for (int d = 0; d < w->ndev; d++)
        HIP_OK(hipStreamDestroy(k.s[d]));
    free(k.h);
    free(k.back);
}

static void run_threads(struct world *w)
{
    HIP_OK(hipGetDeviceCount(&w->ndev));
    if (w->ndev > 8)
        w->ndev = 8;
    warm_up_all(w);
    size_t free0 = 0, total = 0;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemGetInfo(&free0, &total));
    struct usage u0 = usage_now();
    int fds0 = fd_count();
    long rss0 = status_kib("VmRSS");

    static struct worker k[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        pthread_rwlock_init(&w->slots[i].lock, NULL);
        k[i] = (struct worker){w, i, 0x9e3779b9u * (unsigned)(i + 1), {0}, NULL, NULL, 0, 0};
        k[i].h = xmalloc(HOST_BUF);
        k[i].back = k[i].h; /* op_republish only fills h */
        REQUIRE(op_republish(&k[i], 1));
        free(k[i].h);
    }
    double t0 = hc_now_ms();
    double secs = stress_seconds();
    w->deadline_ms = secs > 0 ? t0 + secs * 1e3 : 0;
    for (int i = 0; i < THREADS; i++)
        REQUIRE(pthread_create(&th[i], NULL, worker_main, &k[i]) == 0);
    long total_ops = 0, checks = 0, least = -1;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total_ops += k[i].done;
        checks += k[i].checks;
        least = least < 0 || k[i].done < least ? k[i].done : least;
    }
    printf("    %d threads on %d GPU(s): %ld operations (%ld the fewest of a thread), %ld data checks in %.1f s\n",
           THREADS, w->ndev, total_ops, least, checks, (hc_now_ms() - t0) / 1e3);
    if (w->deadline_ms)
        CHECKF(least > 0, "a thread did no operation in %.0f s", secs);
    else
        CHECKF(total_ops == (long)THREADS * w->ops, "%ld of %ld operations done", total_ops, (long)THREADS * w->ops);
    for (int i = 0; i < THREADS; i++) {
        check_dev_pattern(w->slots[i].p, PUB_SIZE, w->slots[i].seed);
        HIP_OK(hipFree(w->slots[i].p));
        pthread_rwlock_destroy(&w->slots[i].lock);
    }
    size_t free1 = 0;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemGetInfo(&free1, &total));
    struct usage u1 = usage_now();
    printf("    before/after: fds %d/%d, VmRSS %ld/%ld KiB, device 0 hipMemGetInfo free %zu/%zu B, dma-buf fds "
           "%llu/%llu\n",
           fds0, fd_count(), rss0, status_kib("VmRSS"), free0, free1, (unsigned long long)u0.dmabuf_fds,
           (unsigned long long)u1.dmabuf_fds);
    for (int d = 0; d < w->ndev; d++)
        printf("    before/after: GPU %d VRAM %llu/%llu B\n", d, (unsigned long long)u0.vram[d],
               (unsigned long long)u1.vram[d]);
    CHECKF(free1 == free0, "hipMemGetInfo free: %zu after, %zu before", free1, free0);
    check_usage_back(u0);
    CHECKF(fd_count() == fds0, "open fds: %d after, %d before", fd_count(), fds0);
}

TEST(concurrency_threads)
{
    static struct world w;
    w.ops = stress_ops(24);
    run_threads(&w);
}

/* The forked exporter: FOREIGN_BUFS buffers of pattern 700 + i on devices 0..; buffer 0 holds
 * pattern 800 + t in slice t, written by the importer's thread t, and must end so. */
static void foreign_exporter(int fd, void *arg)
{
    (void)arg;
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    struct foreign f;
    void *p[FOREIGN_BUFS];
    uint8_t *h = xmalloc(FOREIGN_SIZE);
    for (int b = 0; b < FOREIGN_BUFS; b++) {
        HIP_OK(hipSetDevice(b % n));
        p[b] = dev_pattern(FOREIGN_SIZE, 700 + (unsigned)b);
        HIP_OK(hipIpcGetMemHandle(&f.h[b], p[b]));
    }
    for (int t = 0; t < THREADS; t++)
        pat_fill(h + (size_t)t * SLICE, SLICE, 800 + (unsigned)t);
    HIP_OK(hipMemcpy(p[0], h, FOREIGN_SIZE, hipMemcpyHostToDevice));
    xsend(fd, &f, sizeof f);
    CHECK(recv_u64_untimed(fd) == 1); /* the importer is done */
    memset(h, 0, FOREIGN_SIZE);
    HIP_OK(hipMemcpy(h, p[0], FOREIGN_SIZE, hipMemcpyDeviceToHost));
    for (int t = 0; t < THREADS; t++)
        CHECK_PATTERN(h + (size_t)t * SLICE, SLICE, 800 + (unsigned)t);
    free(h);
    for (int b = 1; b < FOREIGN_BUFS; b++)
        check_dev_pattern(p[b], FOREIGN_SIZE, 700 + (unsigned)b);
    for (int b = 0; b < FOREIGN_BUFS; b++)
        HIP_OK(hipFree(p[b]));
    send_u64(fd, 2);
}

TEST(concurrency_threads_with_exporter)
{
    struct peer ex = spawn(foreign_exporter, NULL);
    static struct world w;
    w.ops = stress_ops(24);
    w.with_foreign = 1;
    xrecv(ex.fd, &w.fh, sizeof w.fh);
    run_threads(&w);
    send_u64(ex.fd, 1);
    CHECK(recv_u64(ex.fd) == 2);
    join_timeout(&ex, "exporter", 120);
}

/* ---- 8 processes in a ring ------------------------------------------------------------ */

#define RING 8
#define RING_SIZE (3 * MiB + 4096)

static int ring_sock[RING][2]; /* [i][0]: process i's end to i+1; [i][1]: i+1's end to i */

/* What goes round the ring each round: whether the round runs (process 0 decides), and the
 * handle of the sender's buffer. */
struct ring_msg {
    uint64_t go;
    hipIpcMemHandle_t h;
};

/* Process i, each round: exports a fresh buffer (pattern round*RING+i) to process i+1, opens
 * the one of process i-1 on its device, copies it into its own memory, checks it, writes its
 * own mark into it, closes it and acknowledges; then checks that its own buffer carries the
 * mark of i+1 and frees it. Process 0 decides whether a round runs (stress_ops rounds, or until
 * HIPCONF_STRESS_SECONDS have passed) and sends first; the others pass the decision on with their
 * handle. VRAM bytes and fds end where they started (after round 0), checked while the whole
 * ring is alive; hipMemGetInfo of a fresh process before and after the ring. */
static void ring_member(int fd, void *arg)
{
    int i = (int)(intptr_t)arg, rounds = stress_ops(6);
    int next = ring_sock[i][0], prev = ring_sock[(i + RING - 1) % RING][1];
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    HIP_OK(hipSetDevice(i % n));
    struct usage u0 = {{0}, 0};
    int fds0 = 0;
    long rss0 = 0, checks = 0;
    void *mine = NULL;
    double secs = stress_seconds(), t0 = hc_now_ms();
    int r;
    /* round 0 warms up (the IPC fd server, the connection to the previous process's server,
     * staging buffers); the baseline is taken after it */
    for (r = 0;; r++) {
        struct ring_msg out_msg = {0}, in_msg;
        if (i == 0)
            out_msg.go = r <= 1 || (secs > 0 ? hc_now_ms() - t0 < secs * 1e3 : r <= rounds);
        else
            xrecv_within(prev, &in_msg, sizeof in_msg, -1);
        if (i != 0)
            out_msg.go = in_msg.go;
        if (!out_msg.go) {
            xsend(next, &out_msg, sizeof out_msg);
            if (i == 0)
                xrecv_within(prev, &in_msg, sizeof in_msg, -1);
            break;
        }
        if (r == 1) {
            HIP_OK(hipFree(mine));
            u0 = usage_now();
            fds0 = fd_count();
            rss0 = status_kib("VmRSS");
        }
        if (r <= 1)
            HIP_OK(hipMalloc(&mine, RING_SIZE));
        unsigned seed = (unsigned)(r * RING + i);
        void *out = dev_pattern(RING_SIZE, seed);
        HIP_OK(hipIpcGetMemHandle(&out_msg.h, out));
        xsend(next, &out_msg, sizeof out_msg);
        if (i == 0)
            xrecv_within(prev, &in_msg, sizeof in_msg, -1);
        void *p = NULL;
        HIP_OK(hipIpcOpenMemHandle(&p, in_msg.h, hipIpcMemLazyEnablePeerAccess));
        HIP_OK(hipMemcpy(mine, p, RING_SIZE, hipMemcpyDeviceToDevice));
        check_dev_pattern(mine, RING_SIZE, (unsigned)(r * RING + (i + RING - 1) % RING));
        HIP_OK(hipMemset((char *)p + RING_SIZE - 4096, 0xa0 + i, 4096));
        HIP_OK(hipDeviceSynchronize());
        HIP_OK(hipIpcCloseMemHandle(p));
        send_u64(prev, 1);
        CHECK(recv_u64_untimed(next) == 1);
        check_dev_pattern(out, RING_SIZE - 4096, seed);
        check_dev_bytes((char *)out + RING_SIZE - 4096, 4096, 0xa0 + (i + 1) % RING);
        checks += 3;
        HIP_OK(hipFree(out));
    }
    HIP_OK(hipFree(mine));
    /* check while every process is alive: an fd server drops a kept connection when its
     * importer exits */
    send_u64(fd, 1);
    CHECK(recv_u64_untimed(fd) == 2);
    struct usage u1 = usage_now();
    if (i == 0)
        printf("    ring of %d processes: %d rounds (%d handles exported, opened, read, written, closed) in "
               "%.1f s; process 0: %ld data checks, fds %d/%d, VmRSS %ld/%ld KiB, GPU 0 VRAM %llu/%llu B "
               "(before/after)\n",
               RING, r, r * RING, (hc_now_ms() - t0) / 1e3, checks, fds0, fd_count(), rss0, status_kib("VmRSS"),
               (unsigned long long)u0.vram[0], (unsigned long long)u1.vram[0]);
    check_usage_back(u0);
    CHECKF(fd_count() == fds0, "process %d: fds %d after, %d before", i, fd_count(), fds0);
    send_u64(fd, 3);
    CHECK(recv_u64_untimed(fd) == 4);
}

TEST(concurrency_ipc_ring_8_processes)
{
    struct free_vram free0 = probe_free();
    for (int i = 0; i < RING; i++)
        REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, ring_sock[i]) == 0);
    struct peer p[RING];
    for (int i = 0; i < RING; i++)
        p[i] = spawn(ring_member, (void *)(intptr_t)i);
    /* two barriers: all done, then all checked */
    for (int step = 1; step <= 3; step += 2) {
        for (int i = 0; i < RING; i++)
            CHECK(recv_u64_untimed(p[i].fd) == (uint64_t)step);
        for (int i = 0; i < RING; i++)
            send_u64(p[i].fd, (uint64_t)step + 1);
    }
    for (int i = 0; i < RING; i++) {
        char what[32];
        snprintf(what, sizeof what, "ring process %d", i);
        join_timeout(&p[i], what, 300 + stress_seconds());
    }
    struct free_vram free1 = probe_free();
    printf("    hipMemGetInfo free of a fresh process, device 0: %llu B before the ring, %llu B after\n",
           (unsigned long long)free0.fr[0], (unsigned long long)free1.fr[0]);
    check_free_back(free0);
}
