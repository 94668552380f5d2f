/*
 * Streams: hipStreamCreate, hipStreamCreateWithFlags, hipStreamDestroy,
 * hipStreamSynchronize, hipStreamQuery, hipStreamWaitEvent, null-stream
 * semantics, streams on a second GPU, streams from several threads.
 *
 * Expected codes: hip-tests catch/unit/stream/{hipStreamCreate,
 * hipStreamCreateWithFlags,hipStreamDestroy,hipStreamQuery,hipStreamSynchronize,
 * hipStreamWaitEvent}.cc (AMD branches); clr hip_stream.cpp.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>

/* A handle value that was never a stream (hip-tests use 0xFFFF). */
#define BOGUS_STREAM ((hipStream_t)(uintptr_t)0xFFFF)

TEST(hipStreamCreate_basic)
{
    hipStream_t a = NULL, b = NULL;
    HIP_OK(hipStreamCreate(&a));
    HIP_OK(hipStreamCreate(&b));
    CHECK(a != NULL);
    CHECK(b != NULL);
    CHECK(a != b);
    CHECK_HIP(hipStreamQuery(a), hipSuccess);
    HIP_OK(hipStreamDestroy(a));
    HIP_OK(hipStreamDestroy(b));
}

TEST(hipStreamCreate_null)
{
    CHECK_HIP(hipStreamCreate(NULL), hipErrorInvalidValue);
}

TEST(hipStreamCreateWithFlags_valid_flags)
{
    const unsigned flags[] = {hipStreamDefault, hipStreamNonBlocking};
    for (int i = 0; i < 2; i++) {
        hipStream_t s = NULL;
        HIP_OK(hipStreamCreateWithFlags(&s, flags[i]));
        CHECK(s != NULL);
        void *d = NULL;
        HIP_OK(hipMalloc(&d, 4096));
        HIP_OK(hipMemsetAsync(d, 0x21 + i, 4096, s));
        HIP_OK(hipStreamSynchronize(s));
        check_dev_bytes(d, 4096, (uint8_t)(0x21 + i));
        HIP_OK(hipFree(d));
        HIP_OK(hipStreamDestroy(s));
    }
}

TEST(hipStreamCreateWithFlags_negative)
{
    hipStream_t s = NULL;
    CHECK_HIP(hipStreamCreateWithFlags(NULL, hipStreamDefault), hipErrorInvalidValue);
    CHECK_HIP(hipStreamCreateWithFlags(&s, 0xFF), hipErrorInvalidValue);
    CHECK_HIP(hipStreamCreateWithFlags(&s, 0x2), hipErrorInvalidValue);
    CHECK_HIP(hipStreamCreateWithFlags(&s, ~0u), hipErrorInvalidValue);
}

TEST(hipStreamDestroy_negative)
{
    hipStream_t s;
    /* hip-tests: NULL -> hipErrorInvalidResourceHandle, twice -> ContextIsDestroyed */
    CHECK_HIP(hipStreamDestroy(NULL), hipErrorInvalidResourceHandle);
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipStreamDestroy(s), hipErrorContextIsDestroyed);
}

TEST(hipStreamDestroy_with_pending_work)
{
    /* hip-tests Unit_hipStreamDestroy_WithPendingWork: destroy returns, the
     * queued work still completes */
    hipStream_t s;
    struct busy b = busy_begin();
    size_t n = 4 * MiB;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipStreamCreate(&s));
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipMemsetAsync(d, 0x71, n, s));
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipDeviceSynchronize());
    check_dev_bytes(d, n, 0x71);
    HIP_OK(hipFree(d));
    busy_end(&b);
}

TEST(hipStreamSynchronize_basic)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamSynchronize(s)); /* empty */
    HIP_OK(hipStreamSynchronize(NULL));
    size_t n = 2 * MiB;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemsetAsync(d, 0x13, n, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    check_dev_bytes(d, n, 0x13);
    HIP_OK(hipFree(d));
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipStreamSynchronize_negative)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipStreamSynchronize(s), hipErrorContextIsDestroyed);
    /* hip-tests Unit_hipStreamSynchronize_UninitializedStream (AMD) */
    CHECK_HIP(hipStreamSynchronize(BOGUS_STREAM), hipErrorContextIsDestroyed);
}

TEST(hipStreamSynchronize_null_stream_waits_for_blocking_streams)
{
    /* hip-tests Unit_hipStreamSynchronize_NullStreamSynchronization */
    enum { N = 4 };
    hipStream_t s[N];
    struct busy b = busy_begin();
    HIP_OK(hipStreamCreate(&s[0]));
    REQUIRE_BUSY(&b, s[0]);
    for (int i = 1; i < N; i++) {
        HIP_OK(hipStreamCreate(&s[i]));
        busy_enqueue(&b, s[i], 1);
    }
    CHECK_HIP(hipStreamQuery(NULL), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(NULL));
    for (int i = 0; i < N; i++) {
        CHECK_HIP(hipStreamQuery(s[i]), hipSuccess);
        HIP_OK(hipStreamDestroy(s[i]));
    }
    busy_end(&b);
}

TEST(hipStreamQuery_pending_then_done)
{
    /* hip-tests Unit_hipStreamQuery_WithPendingWork */
    hipStream_t s;
    struct busy b = busy_begin();
    HIP_OK(hipStreamCreate(&s));
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    REQUIRE_BUSY(&b, s);
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    HIP_OK(hipStreamDestroy(s));
    busy_end(&b);
}

TEST(hipStreamQuery_null_stream)
{
    /* hip-tests Unit_hipStreamQuery_NullStreamQuery and
     * ..._SubmitWorkOnStreamAndQueryNullStream */
    hipStream_t s;
    struct busy b = busy_begin();
    CHECK_HIP(hipStreamQuery(NULL), hipSuccess);
    REQUIRE_BUSY(&b, NULL);
    CHECK_HIP(hipStreamQuery(NULL), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(NULL));
    CHECK_HIP(hipStreamQuery(NULL), hipSuccess);

    /* work on a blocking stream makes the null stream not ready */
    HIP_OK(hipStreamCreate(&s));
    REQUIRE_BUSY(&b, s);
    CHECK_HIP(hipStreamQuery(NULL), hipErrorNotReady);
    HIP_OK(hipDeviceSynchronize());
    CHECK_HIP(hipStreamQuery(NULL), hipSuccess);
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    HIP_OK(hipStreamDestroy(s));
    busy_end(&b);
}

TEST(hipStreamQuery_negative)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    /* hip-tests Unit_hipStreamQuery_WithDestroyedStream / _WithUninitializedStream (AMD) */
    CHECK_HIP(hipStreamQuery(s), hipErrorContextIsDestroyed);
    CHECK_HIP(hipStreamQuery(BOGUS_STREAM), hipErrorContextIsDestroyed);
}

TEST(nonblocking_stream_does_not_wait_for_null_stream)
{
    /* hip-tests Unit_hipStreamCreateWithFlags_DefaultStreamInteraction: work on
     * a non-blocking stream does not make the null stream busy */
    hipStream_t nb;
    struct busy b = busy_begin();
    HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    REQUIRE_BUSY(&b, nb);
    CHECK_HIP(hipStreamQuery(NULL), hipSuccess);
    HIP_OK(hipStreamSynchronize(nb));
    HIP_OK(hipStreamDestroy(nb));
    busy_end(&b);
}

TEST(hipStreamWaitEvent_negative)
{
    hipStream_t s, dead;
    hipEvent_t e;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipEventRecord(e, s));
    const hipStream_t streams[] = {NULL, s};
    for (int i = 0; i < 2; i++) {
        CHECK_HIP(hipStreamWaitEvent(streams[i], NULL, 0), hipErrorInvalidResourceHandle);
        CHECK_HIP(hipStreamWaitEvent(streams[i], e, ~0u), hipErrorInvalidValue);
    }
    /* hip-tests Unit_hipStreamWaitEvent_UninitializedStream_Negative (AMD) */
    CHECK_HIP(hipStreamWaitEvent(BOGUS_STREAM, e, 0), hipErrorInvalidHandle);
    CHECK_HIP(hipStreamWaitEvent(dead, e, 0), hipErrorInvalidHandle);
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipStreamWaitEvent_unrecorded_event_is_noop)
{
    hipStream_t s;
    hipEvent_t e;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipStreamWaitEvent(s, e, 0));
    HIP_OK(hipStreamSynchronize(s));
    CHECK_HIP(hipStreamQuery(s), hipSuccess);
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipStreamWaitEvent_orders_two_streams)
{
    /* stream A: long work, then fill X with 0x11, record ev.
     * stream B: wait ev, copy X to host.  B must see 0x11, never stale data. */
    hipStream_t a, bstr;
    hipEvent_t ev;
    struct busy b = busy_begin();
    size_t n = 8 * MiB;
    uint8_t *x = NULL, *h = NULL;
    HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    HIP_OK(hipStreamCreateWithFlags(&bstr, hipStreamNonBlocking));
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    HIP_OK(hipMalloc((void **)&x, n));
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));
    HIP_OK(hipMemset(x, 0, n));
    HIP_OK(hipDeviceSynchronize()); /* hipMemset is asynchronous on device memory */
    memset(h, 0xee, n);

    REQUIRE_BUSY(&b, a);
    HIP_OK(hipMemsetAsync(x, 0x11, n, a));
    HIP_OK(hipEventRecord(ev, a));
    CHECK_HIP(hipEventQuery(ev), hipErrorNotReady);
    HIP_OK(hipStreamWaitEvent(bstr, ev, 0));
    HIP_OK(hipMemcpyAsync(h, x, n, hipMemcpyDeviceToHost, bstr));
    /* B is held back by A */
    CHECK_HIP(hipStreamQuery(bstr), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(bstr));
    CHECK_BYTES(h, n, 0x11);
    CHECK_HIP(hipEventQuery(ev), hipSuccess);
    CHECK_HIP(hipStreamQuery(a), hipSuccess);

    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipStreamDestroy(a));
    HIP_OK(hipStreamDestroy(bstr));
    HIP_OK(hipFree(x));
    HIP_OK(hipHostFree(h));
    busy_end(&b);
}

TEST(hipStreamWaitEvent_null_stream_waits)
{
    hipStream_t a;
    hipEvent_t ev;
    struct busy b = busy_begin();
    size_t n = 4 * MiB;
    uint8_t *x = NULL;
    uint8_t *h = xmalloc(n);
    HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    HIP_OK(hipEventCreate(&ev));
    HIP_OK(hipMalloc((void **)&x, n));
    HIP_OK(hipMemset(x, 0, n));
    HIP_OK(hipDeviceSynchronize()); /* hipMemset is asynchronous on device memory */
    REQUIRE_BUSY(&b, a);
    HIP_OK(hipMemsetAsync(x, 0x3a, n, a));
    HIP_OK(hipEventRecord(ev, a));
    HIP_OK(hipStreamWaitEvent(NULL, ev, 0));
    HIP_OK(hipMemcpy(h, x, n, hipMemcpyDeviceToHost)); /* null stream */
    CHECK_BYTES(h, n, 0x3a);
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipStreamDestroy(a));
    HIP_OK(hipFree(x));
    free(h);
    busy_end(&b);
}

TEST(multigpu_hipStreamWaitEvent_across_devices)
{
    REQUIRE_GPUS(2);
    hipStream_t s0, s1;
    hipEvent_t ev;
    size_t n = 8 * MiB;
    uint8_t *h = NULL;
    HIP_OK(hipSetDevice(0));
    struct busy b = busy_begin();
    HIP_OK(hipStreamCreate(&s0));
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    void *x0 = NULL;
    HIP_OK(hipMalloc(&x0, n));
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s1));
    void *x1 = NULL;
    HIP_OK(hipMalloc(&x1, n));
    HIP_OK(hipMemset(x1, 0, n));
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));

    REQUIRE_BUSY(&b, s0);
    HIP_OK(hipMemsetAsync(x0, 0x5e, n, s0));
    HIP_OK(hipEventRecord(ev, s0));
    HIP_OK(hipStreamWaitEvent(s1, ev, 0)); /* device 1 stream waits for device 0 */
    HIP_OK(hipMemcpyAsync(x1, x0, n, hipMemcpyDeviceToDevice, s1));
    HIP_OK(hipMemcpyAsync(h, x1, n, hipMemcpyDeviceToHost, s1));
    HIP_OK(hipStreamSynchronize(s1));
    CHECK_BYTES(h, n, 0x5e);

    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipStreamDestroy(s0));
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipFree(x0));
    HIP_OK(hipFree(x1));
    HIP_OK(hipHostFree(h));
    busy_end(&b);
}

TEST(multigpu_stream_on_device1)
{
    REQUIRE_GPUS(2);
    hipStream_t s;
    size_t n = 2 * MiB + 1;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s));
    void *d = dev_pattern(n, 60);
    void *e = NULL;
    HIP_OK(hipMalloc(&e, n));
    HIP_OK(hipSetDevice(0));
    /* the stream belongs to device 1 even when device 0 is current */
    HIP_OK(hipMemcpyAsync(e, d, n, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(e, n, 60);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipFree(e));
}

static void *stream_thread(void *arg)
{
    int *errors = arg;
    for (int i = 0; i < 20; i++) {
        hipStream_t s;
        void *d = NULL;
        uint8_t h[4096];
        if (hipStreamCreate(&s) != hipSuccess || hipMalloc(&d, sizeof(h)) != hipSuccess) {
            (*errors)++;
            return NULL;
        }
        if (hipMemsetAsync(d, i, sizeof(h), s) != hipSuccess ||
            hipMemcpyAsync(h, d, sizeof(h), hipMemcpyDeviceToHost, s) != hipSuccess ||
            hipStreamSynchronize(s) != hipSuccess)
            (*errors)++;
        if (byte_mismatch(h, sizeof(h), (uint8_t)i) != sizeof(h))
            (*errors)++;
        if (hipStreamDestroy(s) != hipSuccess || hipFree(d) != hipSuccess)
            (*errors)++;
    }
    return NULL;
}

TEST(threads_create_use_destroy_streams)
{
    enum { T = 6 };
    pthread_t th[T];
    int errors[T] = {0};
    for (int i = 0; i < T; i++)
        REQUIRE(pthread_create(&th[i], NULL, stream_thread, &errors[i]) == 0);
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECKF(errors[i] == 0, "thread %d saw %d errors", i, errors[i]);
    }
}

/* A submission that waits for room in its queue's ring. */
enum { FILL_MAX = 20000 };
struct ring_filler {
    hipStream_t s;
    uint8_t *d;
    atomic_int queued; /* hipMemsetAsync calls returned */
};

static void *fill_ring(void *arg)
{
    struct ring_filler *f = arg;
    for (int i = 0; i < FILL_MAX; i++) {
        if (hipMemsetAsync(f->d, i & 0xff, 64, f->s) != hipSuccess)
            break;
        atomic_store(&f->queued, i + 1);
    }
    return NULL;
}

static void *device_sync_thread(void *arg)
{
    atomic_int *done = arg;
    hipDeviceSynchronize();
    atomic_store(done, 1);
    return NULL;
}

static void *create_destroy_thread(void *arg)
{
    atomic_int *done = arg;
    hipStream_t x;
    if (hipStreamCreate(&x) == hipSuccess && hipStreamDestroy(x) == hipSuccess)
        atomic_store(done, 1);
    else
        atomic_store(done, -1);
    return NULL;
}

/* A thread whose hipMemsetAsync waits for room in its queue's ring (the engine is held on a word
 * the test controls, and the ring has filled) holds its stream until the engine goes on.
 * hipDeviceSynchronize in a second thread waits for that stream, as it must; hipStreamCreate
 * and hipStreamDestroy in a third go on meanwhile (they did not: the synchronizing thread read
 * each stream's last fence with the device's stream list locked, so everything that takes the
 * list waited for the held engine too). After the release every fill has run, in order. */
TEST(stream_create_goes_on_while_a_submission_waits_for_ring_room)
{
    struct ring_filler f;
    memset(&f, 0, sizeof f);
    HIP_OK(hipStreamCreateWithFlags(&f.s, hipStreamNonBlocking));
    HIP_OK(hipMalloc((void **)&f.d, 64));
    uint32_t *w = hold_word();
    hold(f.s, w);
    pthread_t filler, syncer, creator;
    REQUIRE(pthread_create(&filler, NULL, fill_ring, &f) == 0);
    /* the ring is full once the filler stops making progress */
    int last = -1;
    for (int still = 0; still < 20;) {
        usleep(10 * 1000);
        int q = atomic_load(&f.queued);
        still = q == last ? still + 1 : 0;
        last = q;
    }
    CHECKF(last < FILL_MAX, "%d fills queued behind a held engine: the ring never filled", last);
    atomic_int synced = 0, created = 0;
    REQUIRE(pthread_create(&syncer, NULL, device_sync_thread, &synced) == 0);
    usleep(50 * 1000);
    CHECKF(atomic_load(&synced) == 0, "hipDeviceSynchronize returned while the engine is held");
    REQUIRE(pthread_create(&creator, NULL, create_destroy_thread, &created) == 0);
    double t0 = hc_now_ms();
    while (atomic_load(&created) == 0 && hc_now_ms() - t0 < 2000)
        usleep(1000);
    CHECKF(atomic_load(&created) == 1, "hipStreamCreate + hipStreamDestroy waited for a held engine (%d after 2 s)",
           atomic_load(&created));
    CHECK(atomic_load(&synced) == 0);
    release(w);
    pthread_join(filler, NULL);
    pthread_join(syncer, NULL);
    pthread_join(creator, NULL);
    CHECK(atomic_load(&f.queued) == FILL_MAX);
    CHECK(atomic_load(&synced) == 1);
    uint8_t back[64];
    HIP_OK(hipMemcpy(back, f.d, 64, hipMemcpyDeviceToHost));
    CHECK_BYTES(back, 64, (FILL_MAX - 1) & 0xff);
    HIP_OK(hipStreamDestroy(f.s));
    HIP_OK(hipFree(f.d));
    HIP_OK(hipHostFree(w));
}
