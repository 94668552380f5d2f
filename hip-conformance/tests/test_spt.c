/*
 * The per-thread default stream (the `*_spt` entry points a program built with
 * -fgpu-default-stream=per-thread calls; clr's PER_THREAD_DEFAULT_STREAM: a null or legacy stream
 * means the calling thread's hipStreamPerThread) and the stream queries hipStreamGetId,
 * hipGetStreamDeviceId, hipStreamGet/SetAttribute and hipStreamCopyAttributes.
 *
 * Ordering is forced, not hoped for: a stream is held by hipStreamWaitValue32 on a host word the
 * test sets when it chooses (as test_ordering.c does), and every copy checks bytes. CUDA's
 * per-thread default stream is a blocking stream of its thread: it does not wait for other
 * blocking streams and they do not wait for it, while the legacy null stream orders with it
 * both ways. Expected codes: clr hip_stream.cpp (hipStreamGetId_common, hipStreamSetAttribute,
 * hipStreamGetAttribute, hipStreamCopyAttributes), hip_intercept.cpp (hipGetStreamDeviceId),
 * hip_device_runtime.cpp (hipGetDriverEntryPoint_spt); hip-tests catch/unit/stream/
 * {hipStreamGetId,hipStreamSetGetAttributes,hipStreamCopyAttributes}.cc. All names start with
 * "spt_".
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>

enum { N = 64 * 1024 };

/* Pinned host memory of N bytes with pattern seed. */
static uint8_t *pinned(unsigned seed)
{
    uint8_t *h = NULL;
    HIP_OK(hipHostMalloc((void **)&h, N, 0));
    pat_fill(h, N, seed);
    return h;
}

/* hipStreamQuery(s) stays hipErrorNotReady for a while: the stream waits for held work. */
static void check_still_waiting(hipStream_t s)
{
    for (int i = 0; i < 20; i++) {
        usleep(1000);
        CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    }
}

/* Waits up to 5 s for *flag; whether it was set. */
static int wait_flag(atomic_int *flag)
{
    for (int i = 0; i < 5000 && !atomic_load(flag); i++)
        usleep(1000);
    return atomic_load(flag);
}

/* A thread that sets the hold word after `ms` milliseconds. */
struct later {
    uint32_t *w;
    int ms;
};

static void *release_after(void *arg)
{
    struct later *l = arg;
    usleep((useconds_t)l->ms * 1000);
    release(l->w);
    return NULL;
}

/* ---- the null stream of an _spt call is this thread's per-thread stream -------------------- */

struct other_thread {
    uint8_t *d;          /* device buffer it fills */
    uint8_t *h;          /* its pinned source, pattern 2 */
    uint8_t *out;        /* where it copies d back */
    hipEvent_t e;        /* recorded on its per-thread stream */
    unsigned long long id;
    hipError_t query_spt, query_legacy, event;
    int copy_ok;
    atomic_int done;
};

/* With the main thread's per-thread stream held: this thread's per-thread stream runs. */
static void *other_thread_body(void *arg)
{
    struct other_thread *t = arg;
    t->copy_ok = hipSetDevice(0) == hipSuccess &&
                 hipMemcpyAsync_spt(t->d, t->h, N, hipMemcpyHostToDevice, NULL) == hipSuccess &&
                 hipStreamSynchronize_spt(NULL) == hipSuccess &&
                 hipMemcpy_spt(t->out, t->d, N, hipMemcpyDeviceToHost) == hipSuccess;
    t->query_spt = hipStreamQuery_spt(NULL);
    /* the legacy null stream waits for the main thread's held (blocking) per-thread stream */
    t->query_legacy = hipStreamQuery(NULL);
    t->event = hipEventRecord_spt(t->e, NULL);
    for (int i = 0; i < 5000 && t->event == hipSuccess; i++) {
        t->event = hipEventQuery(t->e);
        if (t->event != hipErrorNotReady)
            break;
        t->event = hipSuccess;
        usleep(1000);
    }
    if (hipStreamGetId(hipStreamPerThread, &t->id) != hipSuccess)
        t->id = 0;
    atomic_store(&t->done, 1);
    return NULL;
}

TEST(spt_null_stream_is_this_threads_per_thread_stream)
{
    uint32_t *w = hold_word();
    uint8_t *d = NULL, *d2 = NULL;
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMalloc((void **)&d2, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    uint8_t *h1 = pinned(1), *out = xmalloc(N);
    hipEvent_t ea;
    HIP_OK(hipEventCreate(&ea));

    hold(hipStreamPerThread, w);
    HIP_OK(hipMemcpyAsync_spt(d, h1, N, hipMemcpyHostToDevice, NULL)); /* behind the hold */
    CHECK_HIP(hipStreamQuery_spt(NULL), hipErrorNotReady);
    CHECK_HIP(hipStreamQuery_spt(hipStreamLegacy), hipErrorNotReady); /* it waits for the held one */
    CHECK_HIP(hipStreamQuery(hipStreamPerThread), hipErrorNotReady);
    HIP_OK(hipEventRecord_spt(ea, NULL));
    CHECK_HIP(hipEventQuery(ea), hipErrorNotReady);

    struct other_thread t = {.d = d2, .h = pinned(2), .out = xmalloc(N)};
    memset(t.out, 0, N);
    atomic_init(&t.done, 0);
    HIP_OK(hipEventCreate(&t.e));
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, other_thread_body, &t) == 0);
    CHECKF(wait_flag(&t.done), "the other thread's per-thread stream waited for this one's");
    check_still_waiting(hipStreamPerThread);
    release(w); /* lets the other thread finish even if it was wrongly held */
    pthread_join(th, NULL);
    CHECK(t.copy_ok);
    CHECK_PATTERN(t.out, N, 2);
    CHECK_HIP(t.query_spt, hipSuccess);
    CHECK_HIP(t.query_legacy, hipErrorNotReady);
    CHECK_HIP(t.event, hipSuccess);
    unsigned long long mine = 0;
    HIP_OK(hipStreamGetId(hipStreamPerThread, &mine));
    CHECK(mine != 0 && t.id != 0 && mine != t.id);

    HIP_OK(hipEventSynchronize(ea));
    HIP_OK(hipStreamSynchronize_spt(NULL));
    HIP_OK(hipMemcpy_spt(out, d, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 1);
    HIP_OK(hipEventDestroy(ea));
    HIP_OK(hipEventDestroy(t.e));
    free(out);
    free(t.out);
}

/* ---- the per-thread stream is a blocking stream -------------------------------------------- */

/* Held, it holds neither a non-blocking stream nor another blocking stream (CUDA: the per-thread
 * default stream does not synchronize with other streams), but the legacy null stream runs after
 * its earlier work. */
TEST(spt_per_thread_stream_orders_only_with_the_legacy_stream)
{
    uint32_t *w = hold_word();
    uint8_t *d = NULL, *x = NULL, *y = NULL, *z = NULL;
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMalloc((void **)&x, N));
    HIP_OK(hipMalloc((void **)&y, N));
    HIP_OK(hipMalloc((void **)&z, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    uint8_t *h1 = pinned(11), *h2 = pinned(12), *h3 = pinned(13), *out = pinned(0);
    hipStream_t nb, bs;
    HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    HIP_OK(hipStreamCreate(&bs));

    hold(hipStreamPerThread, w);
    HIP_OK(hipMemcpyAsync_spt(d, h1, N, hipMemcpyHostToDevice, NULL));
    /* a non-blocking stream runs */
    HIP_OK(hipMemcpyAsync(x, h2, N, hipMemcpyHostToDevice, nb));
    HIP_OK(hipStreamSynchronize(nb));
    HIP_OK(hipMemcpyAsync(out, x, N, hipMemcpyDeviceToHost, nb));
    HIP_OK(hipStreamSynchronize(nb));
    CHECK_PATTERN(out, N, 12);
    /* a blocking user stream runs too */
    HIP_OK(hipMemcpyAsync(y, h3, N, hipMemcpyHostToDevice, bs));
    HIP_OK(hipStreamSynchronize(bs));
    HIP_OK(hipMemcpyAsync(out, y, N, hipMemcpyDeviceToHost, bs));
    HIP_OK(hipStreamSynchronize(bs));
    CHECK_PATTERN(out, N, 13);
    CHECK_HIP(hipStreamQuery_spt(NULL), hipErrorNotReady);
    /* the legacy stream waits: its copy of d sees the held copy's bytes */
    HIP_OK(hipMemcpyAsync(z, d, N, hipMemcpyDeviceToDevice, hipStreamLegacy));
    HIP_OK(hipMemcpyAsync(out, z, N, hipMemcpyDeviceToHost, hipStreamLegacy));
    check_still_waiting(hipStreamLegacy);
    release(w);
    HIP_OK(hipStreamSynchronize(hipStreamLegacy));
    CHECK_PATTERN(out, N, 11);
    /* and the per-thread stream waits for the legacy stream's earlier work */
    hold(hipStreamLegacy, (w = hold_word()));
    HIP_OK(hipMemsetAsync(z, 0x5a, N, hipStreamLegacy));
    HIP_OK(hipMemcpyAsync_spt(out, z, N, hipMemcpyDeviceToHost, NULL));
    check_still_waiting(hipStreamPerThread);
    release(w);
    HIP_OK(hipStreamSynchronize_spt(NULL));
    CHECK_BYTES(out, N, 0x5a);
    HIP_OK(hipStreamDestroy(nb));
    HIP_OK(hipStreamDestroy(bs));
}

/* ---- the synchronous _spt calls wait for the per-thread stream's earlier work -------------- */

/* Holds the per-thread stream, lets `prepare` queue work behind the hold, releases it 50 ms
 * later from another thread; the caller's synchronous call that follows must see that work. */
static pthread_t hold_then_release(uint32_t **w, struct later *l)
{
    *w = hold_word();
    hold(hipStreamPerThread, *w);
    l->w = *w;
    l->ms = 50;
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, release_after, l) == 0);
    return th;
}

TEST(spt_sync_copies_wait_for_per_thread_stream_work)
{
    const size_t W = 256, H = 64, pitch = 512;
    uint8_t *d = NULL, *e = NULL;
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMalloc((void **)&e, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    uint8_t *h = pinned(21), *out = xmalloc(N);
    uint32_t *w;
    struct later l;
    pthread_t th;

    /* hipMemcpy_spt */
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemcpyAsync_spt(d, h, N, hipMemcpyHostToDevice, NULL));
    memset(out, 0, N);
    HIP_OK(hipMemcpy_spt(out, d, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 21);
    pthread_join(th, NULL);

    /* hipMemset_spt after a held copy: the fill lands last */
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemcpyAsync_spt(d, h, N, hipMemcpyHostToDevice, NULL));
    HIP_OK(hipMemset_spt(d, 0x33, N));
    HIP_OK(hipMemcpy_spt(out, d, N, hipMemcpyDeviceToHost));
    CHECK_BYTES(out, N, 0x33);
    pthread_join(th, NULL);

    /* hipMemcpy2D_spt reads what a held hipMemset2DAsync_spt wrote */
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemset2DAsync_spt(d, pitch, 0x44, W, H, NULL));
    memset(out, 0, N);
    HIP_OK(hipMemcpy2D_spt(out, W, d, pitch, W, H, hipMemcpyDeviceToHost));
    CHECK_BYTES(out, W * H, 0x44);
    pthread_join(th, NULL);

    /* hipMemset2D_spt after a held hipMemcpy2DAsync_spt */
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemcpy2DAsync_spt(d, pitch, h, W, W, H, hipMemcpyHostToDevice, NULL));
    HIP_OK(hipMemset2D_spt(d, pitch, 0x55, W, H));
    HIP_OK(hipMemcpy2D_spt(out, W, d, pitch, W, H, hipMemcpyDeviceToHost));
    CHECK_BYTES(out, W * H, 0x55);
    pthread_join(th, NULL);

    /* hipMemcpy3D_spt reads what a held hipMemset3DAsync_spt wrote; hipMemset3D_spt after a held
     * hipMemcpy3DAsync_spt lands last */
    hipPitchedPtr pd = {d, pitch, W, H}, po = {out, W, W, H}, ph = {h, W, W, H};
    hipExtent ext = {W, H, 2};
    hipMemcpy3DParms p;
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemset3DAsync_spt(pd, 0x66, ext, NULL));
    memset(&p, 0, sizeof p);
    p.srcPtr = pd;
    p.dstPtr = po;
    p.extent = ext;
    p.kind = hipMemcpyDeviceToHost;
    memset(out, 0, N);
    HIP_OK(hipMemcpy3D_spt(&p));
    CHECK_BYTES(out, W * H * 2, 0x66);
    pthread_join(th, NULL);
    th = hold_then_release(&w, &l);
    memset(&p, 0, sizeof p);
    p.srcPtr = ph;
    p.dstPtr = pd;
    p.extent = ext;
    p.kind = hipMemcpyHostToDevice;
    HIP_OK(hipMemcpy3DAsync_spt(&p, NULL));
    HIP_OK(hipMemset3D_spt(pd, 0x77, ext));
    HIP_OK(hipMemcpy2D_spt(out, W, d, pitch, W, 2 * H, hipMemcpyDeviceToHost));
    CHECK_BYTES(out, W * H * 2, 0x77);
    pthread_join(th, NULL);

    /* arrays: a held hipMemcpy2DToArrayAsync_spt, then the synchronous reads */
    hipChannelFormatDesc desc = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindUnsigned);
    hipArray_t a = NULL;
    HIP_OK(hipMallocArray(&a, &desc, W, H, hipArrayDefault));
    HIP_OK(hipMemcpy2DToArray_spt(a, 0, 0, out, W, W, H, hipMemcpyHostToDevice)); /* 0x77 */
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemcpy2DToArrayAsync_spt(a, 0, 0, h, W, W, H, hipMemcpyHostToDevice, NULL));
    memset(out, 0, N);
    HIP_OK(hipMemcpy2DFromArray_spt(out, W, a, 0, 0, W, H, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, W * H, 21);
    pthread_join(th, NULL);
    memset(out, 0, N);
    HIP_OK(hipMemcpyFromArray_spt(out, a, 0, 0, W * H, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, W * H, 21);
    memset(out, 0, N);
    HIP_OK(hipMemcpy2DFromArrayAsync_spt(out, W, a, 0, 0, W, H, hipMemcpyDeviceToHost, NULL));
    HIP_OK(hipStreamSynchronize_spt(NULL));
    CHECK_PATTERN(out, W * H, 21);
    HIP_OK(hipFreeArray(a));
    /* device-to-device on the per-thread stream */
    th = hold_then_release(&w, &l);
    HIP_OK(hipMemcpyAsync_spt(d, h, N, hipMemcpyHostToDevice, NULL));
    HIP_OK(hipMemcpy_spt(e, d, N, hipMemcpyDeviceToDevice));
    HIP_OK(hipMemcpy_spt(out, e, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 21);
    pthread_join(th, NULL);
    free(out);
}

/* ---- events, waits, host functions and queries ---------------------------------------------- */

static void note_order(void *arg)
{
    atomic_int *v = arg;
    int expect = 0;
    atomic_compare_exchange_strong(v, &expect, 1);
}

static void note_order_cb(hipStream_t s, hipError_t status, void *arg)
{
    (void)s;
    atomic_int *v = arg;
    int expect = 1;
    if (status == hipSuccess)
        atomic_compare_exchange_strong(v, &expect, 2);
}

TEST(spt_stream_calls_use_the_per_thread_stream)
{
    unsigned flags = 77;
    int prio = 77;
    CHECK_HIP(hipStreamGetFlags(NULL, &flags), hipErrorInvalidValue); /* plain: refused */
    HIP_OK(hipStreamGetFlags_spt(NULL, &flags));
    CHECK(flags == hipStreamDefault);
    HIP_OK(hipStreamGetPriority_spt(NULL, &prio));
    CHECK(prio == 0);
    hipStream_t nb, hi;
    HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    HIP_OK(hipStreamGetFlags_spt(nb, &flags));
    CHECK(flags == hipStreamNonBlocking);
    HIP_OK(hipStreamCreateWithPriority(&hi, hipStreamDefault, -1));
    HIP_OK(hipStreamGetPriority_spt(hi, &prio));
    CHECK(prio == -1);
    CHECK_HIP(hipStreamGetFlags_spt(NULL, NULL), hipErrorInvalidValue);

    /* hipStreamWaitEvent_spt(NULL, e): the per-thread stream waits for a held stream's event */
    uint32_t *w = hold_word();
    uint8_t *d = NULL, *h = pinned(31), *out = pinned(0);
    HIP_OK(hipMalloc((void **)&d, N));
    hipEvent_t e;
    HIP_OK(hipEventCreate(&e));
    hold(nb, w);
    HIP_OK(hipMemcpyAsync(d, h, N, hipMemcpyHostToDevice, nb));
    HIP_OK(hipEventRecord(e, nb));
    HIP_OK(hipStreamWaitEvent_spt(NULL, e, 0));
    HIP_OK(hipMemcpyAsync_spt(out, d, N, hipMemcpyDeviceToHost, NULL));
    check_still_waiting(hipStreamPerThread);
    /* host functions on the per-thread stream run in order, after the wait */
    atomic_int order;
    atomic_init(&order, 0);
    HIP_OK(hipLaunchHostFunc_spt(NULL, note_order, &order));
    HIP_OK(hipStreamAddCallback_spt(NULL, note_order_cb, &order, 0));
    usleep(20000);
    CHECK(atomic_load(&order) == 0);
    release(w);
    HIP_OK(hipStreamSynchronize_spt(NULL));
    CHECK_PATTERN(out, N, 31);
    CHECK(atomic_load(&order) == 2);
    CHECK_HIP(hipLaunchHostFunc_spt(NULL, NULL, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipStreamAddCallback_spt(NULL, note_order_cb, &order, 1), hipErrorInvalidValue);
    CHECK_HIP(hipEventRecord_spt(NULL, NULL), hipErrorInvalidHandle);
    /* a destroyed stream passed to an _spt call is still refused as by the plain call */
    hipStream_t dead;
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    CHECK_HIP(hipStreamQuery_spt(dead), hipErrorContextIsDestroyed);
    CHECK_HIP(hipMemsetAsync_spt(d, 0, N, dead), hipErrorContextIsDestroyed);
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(nb));
    HIP_OK(hipStreamDestroy(hi));
}

/* hipStreamBeginCapture_spt(NULL) captures this thread's per-thread stream; the graph launched
 * with hipGraphLaunch_spt(NULL) runs on it. */
TEST(spt_capture_of_the_per_thread_stream)
{
    uint8_t *d = NULL, *h = pinned(41), *out = pinned(0);
    memset(out, 0, N);
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipStreamBeginCapture_spt(NULL, hipStreamCaptureModeThreadLocal));
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    HIP_OK(hipStreamIsCapturing_spt(NULL, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    HIP_OK(hipStreamIsCapturing(hipStreamPerThread, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    /* a blocking stream captures: the legacy null stream's query is refused (clr) */
    CHECK_HIP(hipStreamIsCapturing(NULL, &st), hipErrorStreamCaptureImplicit);
    HIP_OK(hipMemcpyAsync_spt(d, h, N, hipMemcpyHostToDevice, NULL));
    HIP_OK(hipMemcpyAsync_spt(out, d, N, hipMemcpyDeviceToHost, NULL));
    unsigned long long id = 0, id2 = 0;
    size_t ndeps = 0;
    hipGraph_t cg = NULL;
    HIP_OK(hipStreamGetCaptureInfo_spt(NULL, &st, &id));
    CHECK(st == hipStreamCaptureStatusActive && id != 0);
    HIP_OK(hipStreamGetCaptureInfo_v2_spt(NULL, &st, &id2, &cg, NULL, &ndeps));
    CHECK(id2 == id && cg != NULL && ndeps == 1);
    hipGraph_t g = NULL;
    HIP_OK(hipStreamEndCapture_spt(NULL, &g));
    REQUIRE(g != NULL);
    HIP_OK(hipStreamIsCapturing_spt(NULL, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    CHECK_BYTES(out, N, 0); /* captured, not run */
    size_t n = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 2);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch_spt(x, NULL));
    HIP_OK(hipStreamSynchronize_spt(NULL));
    CHECK_PATTERN(out, N, 41);
    CHECK_HIP(hipStreamEndCapture_spt(NULL, &g), hipErrorIllegalState);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
}

/* A thread's per-thread stream goes with the thread, but its queued work still runs and the
 * legacy null stream and hipDeviceSynchronize still wait for it (clr destroys the stream at the
 * thread's exit, which finishes its work). */
struct ended_thread {
    uint32_t *w;
    uint8_t *d, *h;
    int ok;
};

static void *ended_thread_body(void *arg)
{
    struct ended_thread *t = arg;
    t->ok = hipSetDevice(0) == hipSuccess &&
            hipStreamWaitValue32(hipStreamPerThread, t->w, 1, hipStreamWaitValueGte, ~0u) == hipSuccess &&
            hipMemcpyAsync_spt(t->d, t->h, N, hipMemcpyHostToDevice, NULL) == hipSuccess;
    return NULL;
}

TEST(spt_work_of_an_ended_thread_still_orders_with_the_legacy_stream)
{
    uint8_t *d = NULL, *out = pinned(0);
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    struct ended_thread t = {.w = hold_word(), .d = d, .h = pinned(51)};
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, ended_thread_body, &t) == 0);
    pthread_join(th, NULL);
    REQUIRE(t.ok);
    HIP_OK(hipMemcpyAsync(out, d, N, hipMemcpyDeviceToHost, hipStreamLegacy));
    check_still_waiting(hipStreamLegacy);
    release(t.w);
    HIP_OK(hipStreamSynchronize(hipStreamLegacy));
    CHECK_PATTERN(out, N, 51);
    /* the same through hipDeviceSynchronize */
    struct ended_thread t2 = {.w = hold_word(), .d = d, .h = pinned(52)};
    REQUIRE(pthread_create(&th, NULL, ended_thread_body, &t2) == 0);
    pthread_join(th, NULL);
    REQUIRE(t2.ok);
    struct later l = {t2.w, 50};
    REQUIRE(pthread_create(&th, NULL, release_after, &l) == 0);
    HIP_OK(hipDeviceSynchronize());
    pthread_join(th, NULL);
    HIP_OK(hipMemcpy(out, d, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 52);
}

/* ---- entry points by name -------------------------------------------------------------------- */

TEST(spt_entry_points_by_name)
{
    void *f = NULL;
    hipDriverEntryPointQueryResult st = (hipDriverEntryPointQueryResult)77;
    HIP_OK(hipGetDriverEntryPoint_spt("hipMemcpy", &f, hipEnableDefault, &st));
    CHECK(f == (void *)hipMemcpy_spt && st == hipDriverEntryPointSuccess);
    HIP_OK(hipGetDriverEntryPoint_spt("hipStreamSynchronize", &f, hipEnablePerThreadDefaultStream, NULL));
    CHECK(f == (void *)hipStreamSynchronize_spt);
    HIP_OK(hipGetDriverEntryPoint_spt("hipMemcpy", &f, hipEnableLegacyStream, NULL));
    CHECK(f == (void *)hipMemcpy);
    HIP_OK(hipGetDriverEntryPoint_spt("hipMalloc", &f, hipEnableDefault, NULL)); /* no _spt */
    CHECK(f == (void *)hipMalloc);
    HIP_OK(hipGetDriverEntryPoint("hipLaunchKernel", &f, hipEnablePerThreadDefaultStream, NULL));
    CHECK(f == (void *)hipLaunchKernel_spt);
    HIP_OK(hipGetDriverEntryPoint("hipLaunchKernel", &f, hipEnableDefault, NULL));
    CHECK(f == (void *)hipLaunchKernel);
    CHECK_HIP(hipGetDriverEntryPoint_spt("hipNoSuch", &f, hipEnableDefault, &st), hipErrorInvalidValue);
    CHECK(st == hipDriverEntryPointSymbolNotFound);
    CHECK_HIP(hipGetDriverEntryPoint_spt("hipMemcpy", &f, 3, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetDriverEntryPoint_spt(NULL, &f, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetDriverEntryPoint_spt("hipMemcpy", NULL, 0, NULL), hipErrorInvalidValue);

    /* hipGetProcAddress resolves the _spt variant with the per-thread flag (clr 7.x) */
    hipDriverProcAddressQueryResult q;
    HIP_OK(hipGetProcAddress("hipMemcpyAsync", &f, HIP_VERSION, HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    CHECK(f == (void *)hipMemcpyAsync_spt && q == HIP_GET_PROC_ADDRESS_SUCCESS);
    HIP_OK(hipGetProcAddress("hipMemcpyAsync", &f, HIP_VERSION, HIP_GET_PROC_ADDRESS_LEGACY_STREAM, NULL));
    CHECK(f == (void *)hipMemcpyAsync);
    HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &f, 600, HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    CHECK(f == (void *)hipGetDevicePropertiesR0600);
    HIP_OK(hipGetProcAddress("hipFree", &f, HIP_VERSION, HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    CHECK(f == (void *)hipFree);
    CHECK_HIP(hipGetProcAddress("hipMemcpy", &f, HIP_VERSION, 4, NULL), hipErrorInvalidValue);
}

/* ---- hipStreamGetId ------------------------------------------------------------------------ */

TEST(spt_hipStreamGetId)
{
    hipStream_t a, b, nb;
    HIP_OK(hipStreamCreate(&a));
    HIP_OK(hipStreamCreate(&b));
    HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    unsigned long long ia = 0, ia2 = 0, ib = 0, inb = 0, inull = 0, ilegacy = 0, ipt = 0, ipt2 = 0;
    HIP_OK(hipStreamGetId(a, &ia));
    HIP_OK(hipStreamGetId(a, &ia2));
    HIP_OK(hipStreamGetId(b, &ib));
    HIP_OK(hipStreamGetId(nb, &inb));
    HIP_OK(hipStreamGetId(NULL, &inull));
    HIP_OK(hipStreamGetId(hipStreamLegacy, &ilegacy));
    HIP_OK(hipStreamGetId(hipStreamPerThread, &ipt));
    HIP_OK(hipStreamGetId(hipStreamPerThread, &ipt2));
    CHECK(ia != 0 && ia == ia2);         /* stable */
    CHECK(ia != ib && ia != inb && ib != inb);
    CHECK(inull == ilegacy && inull != 0); /* one null stream */
    CHECK(ipt != 0 && ipt == ipt2 && ipt != inull && ipt != ia && ipt != ib);
    /* a new stream never reuses a destroyed one's id */
    HIP_OK(hipStreamDestroy(a));
    hipStream_t c;
    HIP_OK(hipStreamCreate(&c));
    unsigned long long ic = 0;
    HIP_OK(hipStreamGetId(c, &ic));
    CHECK(ic != ia && ic != ib && ic != inb && ic != inull && ic != ipt);
    if (hc_device_count() >= 2) {
        HIP_OK(hipSetDevice(1));
        unsigned long long i1 = 0, ipt1 = 0;
        HIP_OK(hipStreamGetId(NULL, &i1));
        HIP_OK(hipStreamGetId(hipStreamPerThread, &ipt1));
        CHECK(i1 != inull && ipt1 != ipt && i1 != ipt1); /* device 1's own null and per-thread streams */
        HIP_OK(hipSetDevice(0));
    }
    /* errors: null out-pointer first, then the stream (hip-tests Unit_hipStreamGetId_Negative) */
    CHECK_HIP(hipStreamGetId(b, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipStreamGetId(a, NULL), hipErrorInvalidValue);
    ia2 = 12345;
    CHECK_HIP(hipStreamGetId(a, &ia2), hipErrorInvalidResourceHandle); /* destroyed */
    CHECK(ia2 == 12345);
    CHECK_HIP(hipStreamGetId((hipStream_t)(uintptr_t)0xdead0, &ia2), hipErrorInvalidResourceHandle);
    HIP_OK(hipStreamDestroy(b));
    HIP_OK(hipStreamDestroy(c));
    HIP_OK(hipStreamDestroy(nb));
}

/* ---- hipGetStreamDeviceId ------------------------------------------------------------------ */

TEST(spt_hipGetStreamDeviceId)
{
    hipStream_t s0, dead;
    HIP_OK(hipStreamCreate(&s0));
    CHECK(hipGetStreamDeviceId(s0) == 0);
    CHECK(hipGetStreamDeviceId(NULL) == 0);
    CHECK(hipGetStreamDeviceId(hipStreamLegacy) == 0);
    CHECK(hipGetStreamDeviceId(hipStreamPerThread) == 0);
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    (void)hipGetLastError();
    CHECK(hipGetStreamDeviceId(dead) == -1);
    CHECK(hipGetStreamDeviceId((hipStream_t)(uintptr_t)0xdead0) == -1);
    CHECK_HIP(hipGetLastError(), hipSuccess); /* an int answer: no last error */
    if (hc_device_count() >= 2) {
        HIP_OK(hipSetDevice(1));
        hipStream_t s1;
        HIP_OK(hipStreamCreate(&s1));
        CHECK(hipGetStreamDeviceId(s1) == 1);
        CHECK(hipGetStreamDeviceId(NULL) == 1); /* the current device */
        CHECK(hipGetStreamDeviceId(hipStreamPerThread) == 1);
        CHECK(hipGetStreamDeviceId(s0) == 0);   /* a stream keeps its device */
        HIP_OK(hipSetDevice(0));
        CHECK(hipGetStreamDeviceId(s1) == 1);
        HIP_OK(hipStreamDestroy(s1));
    }
    HIP_OK(hipStreamDestroy(s0));
}

/* ---- stream attributes --------------------------------------------------------------------- */

/* Every byte of the union after its first `keep` bytes is still 0xab. */
static int tail_untouched(const hipStreamAttrValue *v, size_t keep)
{
    const uint8_t *p = (const uint8_t *)v;
    for (size_t i = keep; i < sizeof *v; i++)
        if (p[i] != 0xab)
            return 0;
    return 1;
}

static hipSynchronizationPolicy policy_of(hipStream_t s)
{
    hipStreamAttrValue v;
    memset(&v, 0xab, sizeof v);
    HIP_OK(hipStreamGetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v));
    CHECK(tail_untouched(&v, sizeof v.syncPolicy));
    return v.syncPolicy;
}

TEST(spt_stream_attributes)
{
    CHECK(sizeof(hipStreamAttrValue) == 64);
    hipStream_t s, t, hi;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreate(&t));
    HIP_OK(hipStreamCreateWithPriority(&hi, hipStreamDefault, -1));
    CHECK(policy_of(s) == hipSyncPolicyAuto); /* the default */
    hipStreamAttrValue v;
    for (int p = hipSyncPolicyAuto; p <= hipSyncPolicyBlockingSync; p++) {
        memset(&v, 0, sizeof v);
        v.syncPolicy = (hipSynchronizationPolicy)p;
        HIP_OK(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v));
        CHECK(policy_of(s) == p);
        HIP_OK(hipStreamCopyAttributes(t, s));
        CHECK(policy_of(t) == p);
    }
    CHECK(policy_of(hi) == hipSyncPolicyAuto); /* per stream */
    /* the null, legacy and per-thread streams have attributes too */
    v.syncPolicy = hipSyncPolicyYield;
    HIP_OK(hipStreamSetAttribute(hipStreamPerThread, hipStreamAttributeSynchronizationPolicy, &v));
    CHECK(policy_of(hipStreamPerThread) == hipSyncPolicyYield);
    CHECK(policy_of(NULL) == hipSyncPolicyAuto);
    HIP_OK(hipStreamCopyAttributes(NULL, hipStreamPerThread));
    CHECK(policy_of(hipStreamLegacy) == hipSyncPolicyYield);
    /* priority: read only */
    memset(&v, 0xab, sizeof v);
    HIP_OK(hipStreamGetAttribute(hi, hipStreamAttributePriority, &v));
    CHECK(v.priority == -1 && tail_untouched(&v, sizeof v.priority));
    HIP_OK(hipStreamGetAttribute(NULL, hipStreamAttributePriority, &v));
    CHECK(v.priority == 0);
    CHECK_HIP(hipStreamSetAttribute(hi, hipStreamAttributePriority, &v), hipErrorInvalidValue);

    /* errors (hip-tests Unit_hipStreamGet/SetAttribute_Negative); a failed call changes nothing */
    v.syncPolicy = hipSyncPolicySpin;
    HIP_OK(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v));
    hipStream_t bad = (hipStream_t)(uintptr_t)-1, dead;
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    CHECK_HIP(hipStreamGetAttribute(bad, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamGetAttribute(dead, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamGetAttribute(s, (hipStreamAttrID)-1, &v), hipErrorInvalidValue);
    CHECK_HIP(hipStreamGetAttribute(s, hipStreamAttributeAccessPolicyWindow, &v), hipErrorInvalidValue);
    CHECK_HIP(hipStreamGetAttribute(s, hipStreamAttributeSynchronizationPolicy, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipStreamGetAttribute(bad, hipStreamAttributeSynchronizationPolicy, NULL), hipErrorInvalidValue);
    v.syncPolicy = hipSyncPolicyBlockingSync;
    CHECK_HIP(hipStreamSetAttribute(bad, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamSetAttribute(dead, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamSetAttribute(s, (hipStreamAttrID)-1, &v), hipErrorInvalidValue);
    CHECK_HIP(hipStreamSetAttribute(s, hipStreamAttributeAccessPolicyWindow, &v), hipErrorInvalidValue);
    CHECK_HIP(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, NULL), hipErrorInvalidValue);
    v.syncPolicy = (hipSynchronizationPolicy)-1;
    CHECK_HIP(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidValue);
    v.syncPolicy = (hipSynchronizationPolicy)0;
    CHECK_HIP(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidValue);
    v.syncPolicy = (hipSynchronizationPolicy)5;
    CHECK_HIP(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v), hipErrorInvalidValue);
    CHECK(policy_of(s) == hipSyncPolicySpin);
    CHECK_HIP(hipStreamCopyAttributes(s, bad), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamCopyAttributes(bad, s), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamCopyAttributes(bad, bad), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipStreamCopyAttributes(dead, s), hipErrorInvalidResourceHandle);
    CHECK(policy_of(s) == hipSyncPolicySpin);

    /* a capturing stream's attributes cannot change: the capture is invalidated (clr) */
    HIP_OK(hipStreamBeginCapture(t, hipStreamCaptureModeGlobal));
    v.syncPolicy = hipSyncPolicyAuto;
    CHECK_HIP(hipStreamSetAttribute(t, hipStreamAttributeSynchronizationPolicy, &v), hipErrorStreamCaptureUnsupported);
    hipStreamCaptureStatus st;
    HIP_OK(hipStreamIsCapturing(t, &st));
    CHECK(st == hipStreamCaptureStatusInvalidated);
    hipGraph_t g = (hipGraph_t)1;
    CHECK_HIP(hipStreamEndCapture(t, &g), hipErrorStreamCaptureInvalidated);
    CHECK(g == NULL);
    CHECK(policy_of(t) == hipSyncPolicyBlockingSync); /* unchanged, from the loop above */
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipStreamDestroy(t));
    HIP_OK(hipStreamDestroy(hi));
}

/* ---- hipStreamLegacy stays the legacy stream in _spt calls ---------------------------------- */

static atomic_int legacy_gate;

/* A host function that holds its stream until the test opens the gate. */
static void wait_for_gate(void *arg)
{
    (void)arg;
    while (!atomic_load(&legacy_gate))
        usleep(100);
}

struct legacy_copy {
    void *dst;
    const void *src;
    hipMemcpyKind kind;
    int gated; /* queue the gate first, as the _spt call would */
    hipError_t err;
};

static void *legacy_copy_body(void *arg)
{
    struct legacy_copy *c = arg;
    c->err = hipSetDevice(0);
    if (c->err == hipSuccess && c->gated)
        c->err = hipLaunchHostFunc_spt(hipStreamLegacy, wait_for_gate, NULL);
    if (c->err == hipSuccess)
        c->err = hipMemcpyAsync_spt(c->dst, c->src, N, c->kind, hipStreamLegacy);
    return NULL;
}

/* hip-tests Unit_hipStreamLegacy_TwoThreadsDiffOperationWithSptCompOption, with the race forced:
 * thread A queues, through _spt calls on hipStreamLegacy, a host function that holds the stream
 * and then H2D into d; thread B then D2H from d, also on hipStreamLegacy. On the legacy stream B's
 * copy waits for A's (the bytes arrive); had hipStreamLegacy meant each thread's per-thread stream
 * (clr's mapping), B's copy would run at once and read d before A's copy. */
TEST(spt_legacy_stream_stays_the_legacy_stream)
{
    uint8_t *d = NULL, *h1 = pinned(7), *out = NULL;
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipHostMalloc((void **)&out, N, 0));
    memset(out, 0xee, N);
    HIP_OK(hipDeviceSynchronize());
    atomic_store(&legacy_gate, 0);

    struct legacy_copy a = {d, h1, hipMemcpyHostToDevice, 1, hipErrorUnknown};
    struct legacy_copy b = {out, d, hipMemcpyDeviceToHost, 0, hipErrorUnknown};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, legacy_copy_body, &a) == 0 && pthread_join(t, NULL) == 0);
    CHECK(pthread_create(&t, NULL, legacy_copy_body, &b) == 0 && pthread_join(t, NULL) == 0);
    HIP_OK(a.err);
    HIP_OK(b.err);
    usleep(20000);
    CHECK_BYTES(out, N, 0xee); /* B's copy waits behind A's gate */
    atomic_store(&legacy_gate, 1);
    HIP_OK(hipStreamSynchronize_spt(hipStreamLegacy));
    HIP_OK(hipDeviceSynchronize());
    CHECK_PATTERN(out, N, 7);
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h1));
    HIP_OK(hipHostFree(out));
}
