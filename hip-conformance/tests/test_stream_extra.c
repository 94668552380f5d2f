/*
 * Stream and event extras: hipLaunchHostFunc and hipStreamAddCallback (stream order both
 * ways), hipStreamGetDevice, hipStreamGetFlags on the null stream, stream priorities,
 * hipExtStreamCreateWithCUMask / hipExtStreamGetCUMask, hipEventRecordWithFlags, hipStreamLegacy.
 *
 * Expected codes: hip-tests catch/unit/stream/{hipLaunchHostFunc,hipStreamAddCallback,
 * hipStreamGetDevice,hipStreamGetFlags,hipDeviceGetStreamPriorityRange,hipStreamWithCUMask,
 * hipStreamGetCUMask,hipStreamLegacy}.cc; clr hip_stream.cpp, hip_event.cpp.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define BOGUS_STREAM ((hipStream_t)(uintptr_t)0xFFFF)

/* What a host function saw: the first bad byte of the buffer it checks (n = all good). */
struct seen {
    const uint8_t *buf;
    size_t n;
    unsigned seed;
    _Atomic size_t bad;
    _Atomic int calls;
};

static void check_copy_done(void *p)
{
    struct seen *s = p;
    atomic_store(&s->bad, pat_mismatch(s->buf, s->n, s->seed));
    atomic_fetch_add(&s->calls, 1);
}

TEST(hipLaunchHostFunc_runs_after_prior_work)
{
    /* The host function sees the result of a copy queued before it, on a busy stream. */
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    struct busy b = busy_begin();
    size_t n = 16 * MiB;
    void *d = dev_pattern(n, 41);
    uint8_t *h = NULL;
    HIP_OK(hipHostMalloc((void **)&h, n, 0));
    memset(h, 0, n);
    struct seen seen = {h, n, 41, 0, 0};
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
    HIP_OK(hipLaunchHostFunc(s, check_copy_done, &seen));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(atomic_load(&seen.calls) == 1);
    CHECKF(atomic_load(&seen.bad) == n, "host function saw byte %zu not yet copied", atomic_load(&seen.bad));
    busy_end(&b);
    HIP_OK(hipHostFree(h));
    HIP_OK(hipFree(d));
    HIP_OK(hipStreamDestroy(s));
}

/* A host function that blocks until the test lets it go. */
struct gate {
    _Atomic int entered, release, left;
};

static void gate_fn(void *p)
{
    struct gate *g = p;
    atomic_store(&g->entered, 1);
    while (!atomic_load(&g->release))
        usleep(100);
    atomic_store(&g->left, 1);
}

static void wait_flag(_Atomic int *f)
{
    /* bounded only so that a broken runtime fails the test instead of hanging it */
    for (long i = 0; i < 600000 && !atomic_load(f); i++)
        usleep(50);
    REQUIRE(atomic_load(f));
}

static void later_work_waits(hipStream_t s, int use_callback);

static void gate_cb(hipStream_t stream, hipError_t status, void *p)
{
    (void)stream;
    (void)status;
    gate_fn(p);
}

static void later_work_waits(hipStream_t s, int use_callback)
{
    /* Work queued after the host function starts only once it has returned: while it is
     * held, a fill queued after it must not land (read back through another stream), and the
     * stream is not idle. */
    hipStream_t other;
    HIP_OK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
    size_t n = 64 * KiB;
    void *d = NULL;
    uint8_t *h = xmalloc(n);
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemset(d, 0x11, n));
    struct gate g = {0, 0, 0};
    if (use_callback)
        HIP_OK(hipStreamAddCallback(s, gate_cb, &g, 0));
    else
        HIP_OK(hipLaunchHostFunc(s, gate_fn, &g));
    HIP_OK(hipMemsetAsync(d, 0x22, n, s));
    hipEvent_t after;
    HIP_OK(hipEventCreate(&after));
    HIP_OK(hipEventRecord(after, s));
    wait_flag(&g.entered);
    for (int round = 0; round < 50; round++) {
        HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, other));
        HIP_OK(hipStreamSynchronize(other));
        CHECK_BYTES(h, n, 0x11);
        CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
        CHECK_HIP(hipEventQuery(after), hipErrorNotReady);
    }
    CHECK(!atomic_load(&g.left));
    atomic_store(&g.release, 1);
    HIP_OK(hipStreamSynchronize(s));
    CHECK(atomic_load(&g.left));
    HIP_OK(hipEventSynchronize(after));
    check_dev_bytes(d, n, 0x22);
    HIP_OK(hipEventDestroy(after));
    HIP_OK(hipFree(d));
    free(h);
    HIP_OK(hipStreamDestroy(other));
}

TEST(hipLaunchHostFunc_later_work_waits)
{
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    later_work_waits(s, 0);
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipStreamAddCallback_later_work_waits)
{
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    later_work_waits(s, 1);
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipLaunchHostFunc_held_stream_does_not_hold_others)
{
    /* Streams share queues; a held host function must not stall another stream's work. */
    hipStream_t s[6];
    for (int i = 0; i < 6; i++)
        HIP_OK(hipStreamCreateWithFlags(&s[i], hipStreamNonBlocking));
    struct gate g = {0, 0, 0};
    HIP_OK(hipLaunchHostFunc(s[0], gate_fn, &g));
    wait_flag(&g.entered);
    size_t n = 64 * KiB;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    for (int i = 1; i < 6; i++) {
        HIP_OK(hipMemsetAsync(d, 0x30 + i, n, s[i]));
        HIP_OK(hipStreamSynchronize(s[i]));
        check_dev_bytes(d, n, (uint8_t)(0x30 + i));
    }
    atomic_store(&g.release, 1);
    HIP_OK(hipStreamSynchronize(s[0]));
    HIP_OK(hipFree(d));
    for (int i = 0; i < 6; i++)
        HIP_OK(hipStreamDestroy(s[i]));
}

struct order {
    _Atomic int next;
    int got[8];
};

static void record_order(void *p)
{
    struct order *o = p;
    int i = atomic_fetch_add(&o->next, 1);
    if (i < 8)
        o->got[i] = i;
}

TEST(hipLaunchHostFunc_null_stream_and_order)
{
    struct order o = {0, {0}};
    for (int i = 0; i < 8; i++)
        HIP_OK(hipLaunchHostFunc(NULL, record_order, &o));
    HIP_OK(hipDeviceSynchronize());
    CHECK(atomic_load(&o.next) == 8);
    CHECK_HIP(hipLaunchHostFunc(NULL, NULL, NULL), hipErrorInvalidValue);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipLaunchHostFunc(s, record_order, &o), hipErrorContextIsDestroyed);
}

struct cb_args {
    hipStream_t stream;
    hipError_t status;
    void *data;
    _Atomic int calls;
};

static struct cb_args g_cb;

static void record_cb(hipStream_t stream, hipError_t status, void *data)
{
    g_cb.stream = stream;
    g_cb.status = status;
    g_cb.data = data;
    atomic_fetch_add(&g_cb.calls, 1);
}

TEST(hipStreamAddCallback_arguments)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    memset(&g_cb, 0, sizeof g_cb);
    g_cb.status = hipErrorUnknown;
    HIP_OK(hipStreamAddCallback(s, record_cb, (void *)(uintptr_t)0xff, 0));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(atomic_load(&g_cb.calls) == 1);
    CHECK(g_cb.stream == s && g_cb.status == hipSuccess && g_cb.data == (void *)(uintptr_t)0xff);
    HIP_OK(hipStreamAddCallback(NULL, record_cb, NULL, 0));
    HIP_OK(hipStreamSynchronize(NULL));
    CHECK(atomic_load(&g_cb.calls) == 2 && g_cb.stream == NULL);
    /* hip-tests Unit_hipStreamAddCallback_ParamTst_Negative */
    CHECK_HIP(hipStreamAddCallback(s, NULL, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamAddCallback(NULL, NULL, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamAddCallback(s, record_cb, NULL, 10), hipErrorInvalidValue);
    CHECK_HIP(hipStreamAddCallback(NULL, record_cb, NULL, 10), hipErrorInvalidValue);
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipStreamAddCallback(s, record_cb, NULL, 0), hipErrorContextIsDestroyed);
    CHECK(atomic_load(&g_cb.calls) == 2);
}

TEST(hipStreamGetDevice)
{
    int n = hc_device_count(), dev = -1;
    for (int d = 0; d < n; d++) {
        hipStream_t s;
        HIP_OK(hipSetDevice(d));
        HIP_OK(hipStreamCreate(&s));
        HIP_OK(hipStreamGetDevice(NULL, &dev));
        CHECK(dev == d);
        HIP_OK(hipStreamGetDevice(hipStreamPerThread, &dev));
        CHECK(dev == d);
        HIP_OK(hipSetDevice(0));
        HIP_OK(hipStreamGetDevice(s, &dev));
        CHECK(dev == d);
        CHECK_HIP(hipStreamGetDevice(s, NULL), hipErrorInvalidValue);
        HIP_OK(hipStreamDestroy(s));
        CHECK_HIP(hipStreamGetDevice(s, &dev), hipErrorContextIsDestroyed);
    }
    CHECK_HIP(hipStreamGetDevice(NULL, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipStreamGetDevice(hipStreamPerThread, NULL), hipErrorInvalidValue);
}

static void *stream_device_thread(void *p)
{
    hipStream_t s = NULL;
    int dev = -1;
    *(int *)p = hipStreamCreate(&s) == hipSuccess && hipStreamGetDevice(s, &dev) == hipSuccess && dev == 0 &&
                hipStreamDestroy(s) == hipSuccess;
    return NULL;
}

/* hip-tests hipStreamGetDevice.cc: hipStreamLegacy and 0 name the current device's null stream,
 * the ordinal matches hipDeviceGet's, new threads start on device 0, a stream keeps its device. */
TEST(hipStreamGetDevice_legacy_threads_other_device)
{
    int n = hc_device_count(), dev = -1;
    hipDevice_t ord = -1;
    for (int d = 0; d < n; d++) {
        HIP_OK(hipSetDevice(d));
        HIP_OK(hipStreamGetDevice(hipStreamLegacy, &dev));
        CHECK(dev == d);
        HIP_OK(hipStreamGetDevice(0, &dev));
        HIP_OK(hipDeviceGet(&ord, d));
        CHECK(dev == ord);
    }
    HIP_OK(hipSetDevice(n - 1));
    enum { T = 10 };
    pthread_t th[T];
    int ok[T] = {0};
    for (int i = 0; i < T; i++)
        REQUIRE(pthread_create(&th[i], NULL, stream_device_thread, &ok[i]) == 0);
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(ok[i]);
    }
    for (int i = 0; i < n; i++) {
        hipStream_t s = NULL;
        HIP_OK(hipSetDevice(i));
        HIP_OK(hipStreamCreate(&s));
        for (int j = 0; j < n; j++) {
            HIP_OK(hipSetDevice(j));
            HIP_OK(hipStreamGetDevice(s, &dev));
            CHECK(dev == i);
        }
        HIP_OK(hipStreamDestroy(s));
    }
}

TEST(hipStreamGetFlags_null_stream)
{
    /* hip-tests Unit_hipStreamGetFlags_Negative (clr: the null stream is InvalidValue) */
    unsigned f = 99;
    hipStream_t s;
    CHECK_HIP(hipStreamGetFlags(NULL, &f), hipErrorInvalidValue);
    CHECK(f == 99);
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK_HIP(hipStreamGetFlags(s, NULL), hipErrorInvalidValue);
    HIP_OK(hipStreamGetFlags(s, &f));
    CHECK(f == hipStreamNonBlocking);
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipStreamPriority_range_and_clamp)
{
    int least = 99, greatest = 99, p = 99;
    HIP_OK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 1 && greatest == -1);
    HIP_OK(hipDeviceGetStreamPriorityRange(NULL, &greatest));
    HIP_OK(hipDeviceGetStreamPriorityRange(&least, NULL));
    HIP_OK(hipDeviceGetStreamPriorityRange(NULL, NULL));
    const int asked[] = {-100, -1, 0, 1, 100};
    const int want[] = {-1, -1, 0, 1, 1};
    for (int i = 0; i < 5; i++) {
        hipStream_t s;
        HIP_OK(hipStreamCreateWithPriority(&s, hipStreamDefault, asked[i]));
        HIP_OK(hipStreamGetPriority(s, &p));
        CHECKF(p == want[i], "priority %d -> %d", asked[i], p);
        HIP_OK(hipStreamDestroy(s));
    }
}

TEST(hipExtStreamCUMask)
{
    hipDeviceProp_t prop;
    HIP_OK(hipGetDeviceProperties(&prop, 0));
    unsigned cus = (unsigned)prop.multiProcessorCount, words = (cus + 31) / 32;
    REQUIRE(cus > 4 && words <= 16);
    uint32_t full[16], got[16];
    for (unsigned i = 0; i < words; i++)
        full[i] = (i + 1) * 32 <= cus ? 0xffffffffu : (1u << (cus % 32)) - 1;
    memset(got, 0, sizeof got);
    HIP_OK(hipExtStreamGetCUMask(NULL, words, got));
    CHECK(memcmp(got, full, words * 4) == 0);

    uint32_t mask[16];
    memcpy(mask, full, sizeof mask);
    mask[0] = 0xe;
    hipStream_t s;
    HIP_OK(hipExtStreamCreateWithCUMask(&s, words, mask));
    unsigned flags = 9;
    HIP_OK(hipStreamGetFlags(s, &flags));
    CHECK(flags == hipStreamDefault);
    memset(got, 0, sizeof got);
    HIP_OK(hipExtStreamGetCUMask(s, words, got));
    CHECK(memcmp(got, mask, words * 4) == 0);
    /* the stream works */
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipMemsetAsync(d, 0x5a, 4096, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, 4096, 0x5a);
    HIP_OK(hipFree(d));
    CHECK_HIP(hipExtStreamGetCUMask(s, words - 1, got), hipErrorInvalidValue);
    CHECK_HIP(hipExtStreamGetCUMask(s, words, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipExtStreamGetCUMask(s, 0, got), hipErrorInvalidValue);
    HIP_OK(hipStreamDestroy(s));
    /* a mask with no CU of the device: all CUs (clr) */
    uint32_t none[16] = {0};
    HIP_OK(hipExtStreamCreateWithCUMask(&s, words, none));
    HIP_OK(hipExtStreamGetCUMask(s, words, got));
    CHECK(memcmp(got, full, words * 4) == 0);
    HIP_OK(hipStreamDestroy(s));

    CHECK_HIP(hipExtStreamCreateWithCUMask(NULL, words, mask), hipErrorInvalidHandle);
    CHECK_HIP(hipExtStreamCreateWithCUMask(&s, 0, mask), hipErrorInvalidValue);
    CHECK_HIP(hipExtStreamCreateWithCUMask(&s, words, NULL), hipErrorInvalidValue);
}

TEST(hipEventRecordWithFlags)
{
    hipEvent_t e;
    hipStream_t s;
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipStreamCreate(&s));
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipMemsetAsync(d, 1, 4096, s));
    HIP_OK(hipEventRecordWithFlags(e, s, hipEventRecordDefault));
    HIP_OK(hipEventSynchronize(e));
    HIP_OK(hipEventRecordWithFlags(e, NULL, hipEventRecordExternal));
    HIP_OK(hipEventSynchronize(e));
    CHECK_HIP(hipEventQuery(e), hipSuccess);
    CHECK_HIP(hipEventRecordWithFlags(e, s, 2), hipErrorInvalidValue);
    CHECK_HIP(hipEventRecordWithFlags(NULL, s, 0), hipErrorInvalidHandle);
    HIP_OK(hipFree(d));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipEventDestroy(e));
}

static _Atomic int g_many;
static hipStream_t g_many_stream;

static void count_cb(hipStream_t stream, hipError_t status, void *data)
{
    (void)data;
    if (stream == g_many_stream && status == hipSuccess)
        atomic_fetch_add(&g_many, 1);
}

static void *add_callbacks(void *arg)
{
    long bad = 0;
    for (int i = 0; i < 50; i++)
        bad += hipStreamAddCallback(g_many_stream, count_cb, arg, 0) != hipSuccess;
    return (void *)bad;
}

TEST(hipStreamAddCallback_many_threads)
{
    /* hip-tests Unit_hipStreamAddCallback_MultipleThreads, smaller: every callback runs once */
    HIP_OK(hipStreamCreateWithFlags(&g_many_stream, hipStreamNonBlocking));
    atomic_store(&g_many, 0);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        REQUIRE(pthread_create(&t[i], NULL, add_callbacks, NULL) == 0);
    for (int i = 0; i < 8; i++) {
        void *bad = NULL;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL);
    }
    HIP_OK(hipStreamSynchronize(g_many_stream));
    CHECK(atomic_load(&g_many) == 400);
    HIP_OK(hipStreamDestroy(g_many_stream));
}

static void count_call(void *p) { atomic_fetch_add((_Atomic int *)p, 1); }

TEST(hipLaunchHostFunc_more_streams_than_sdma_queues)
{
    /* A stream with a host function gets an SDMA queue of its own. The KFD gives a process 16
     * queues of the PCIe engines per GPU (2 engines x 8); the null stream and the stream pool
     * hold 5, and on 8 GPUs the proxies of the other null streams 7 more. Then come the
     * queues of the xGMI engines, and when those run out too, the stream keeps its pool
     * queue (clr shares its few hardware queues the same way). 100 streams at once: each
     * call succeeds, each function runs once, and each stream's fill after it lands. */
    enum { N = 100 };
    hipStream_t s[N];
    _Atomic int calls = 0;
    uint8_t *d = NULL, h[N];
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    for (int i = 0; i < N; i++) {
        HIP_OK(hipStreamCreateWithFlags(&s[i], hipStreamNonBlocking));
        HIP_OK(hipLaunchHostFunc(s[i], count_call, &calls));
        HIP_OK(hipMemsetAsync(d + i, 0x40 + i, 1, s[i]));
    }
    for (int i = 0; i < N; i++)
        HIP_OK(hipStreamSynchronize(s[i]));
    CHECK(atomic_load(&calls) == N);
    HIP_OK(hipMemcpy(h, d, N, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        CHECKF(h[i] == 0x40 + i, "stream %d: byte %#x", i, h[i]);
    for (int i = 0; i < N; i++)
        HIP_OK(hipStreamDestroy(s[i]));
    HIP_OK(hipFree(d));
}

TEST(hipStreamWaitValue32_more_streams_than_sdma_queues)
{
    /* A GPU-released wait needs a queue of its own (it would hold every stream sharing a pool
     * queue). Once the KFD has no SDMA queue left, a live stream whose own queue is idle gives
     * it up and goes back to a pool queue. 100 live streams, each waiting on a word that is
     * already set, then filling its byte, one after another: every call succeeds. The last
     * stream's wait is then released by the host while all 100 live. */
    enum { N = 100 };
    hipStream_t s[N];
    uint8_t *d = NULL, h[N];
    uint32_t *flag = NULL;
    HIP_OK(hipHostMalloc((void **)&flag, 2 * sizeof *flag, 0));
    flag[0] = 1;
    flag[1] = 0;
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize());
    for (int i = 0; i < N; i++) {
        HIP_OK(hipStreamCreateWithFlags(&s[i], hipStreamNonBlocking));
        HIP_OK(hipStreamWaitValue32(s[i], &flag[0], 1, hipStreamWaitValueGte, 0xffffffffu));
        HIP_OK(hipMemsetAsync(d + i, 0x40 + i, 1, s[i]));
        HIP_OK(hipStreamSynchronize(s[i]));
    }
    HIP_OK(hipStreamWaitValue32(s[0], &flag[1], 1, hipStreamWaitValueEq, 0xffffffffu));
    HIP_OK(hipMemsetAsync(d, 0x7f, 1, s[0]));
    CHECK(hipStreamQuery(s[0]) == hipErrorNotReady);
    __atomic_store_n(&flag[1], 1, __ATOMIC_RELEASE);
    for (int i = 0; i < N; i++)
        HIP_OK(hipStreamSynchronize(s[i]));
    HIP_OK(hipMemcpy(h, d, N, hipMemcpyDeviceToHost));
    CHECKF(h[0] == 0x7f, "stream 0: byte %#x", h[0]);
    for (int i = 1; i < N; i++)
        CHECKF(h[i] == 0x40 + i, "stream %d: byte %#x", i, h[i]);
    for (int i = 0; i < N; i++)
        HIP_OK(hipStreamDestroy(s[i]));
    HIP_OK(hipHostFree(flag));
    HIP_OK(hipFree(d));
}

/* hip-tests hipStreamLegacy.cc (no kernel): hipStreamLegacy is the legacy null stream for
 * copies (H2H, H2 pinned, pinned 2H; H2D, D2D, D2H), prefetches and stream-ordered
 * allocation; it cannot capture, and while a blocking stream captures in global mode, asking
 * it for capture info is hipErrorStreamCaptureImplicit. */
TEST(hipStreamLegacy_copies_capture_info_pools)
{
    const size_t n = 1 << 20;
    int *a_h = xmalloc(n), *b_h = xmalloc(n), *a_p = NULL, *b_p = NULL, *a_d = NULL, *b_d = NULL;
    for (size_t i = 0; i < n / sizeof(int); i++)
        a_h[i] = (int)(i * 3 + 1);
    HIP_OK(hipHostMalloc((void **)&a_p, n, 0));
    HIP_OK(hipHostMalloc((void **)&b_p, n, 0));
    HIP_OK(hipMalloc((void **)&a_d, n));
    HIP_OK(hipMalloc((void **)&b_d, n));
    memset(b_h, 0, n);
    HIP_OK(hipMemcpyWithStream(b_h, a_h, n, hipMemcpyHostToHost, hipStreamLegacy));
    HIP_OK(hipMemcpyWithStream(a_p, b_h, n, hipMemcpyHostToHost, hipStreamLegacy));
    HIP_OK(hipMemcpyWithStream(b_p, a_p, n, hipMemcpyHostToHost, hipStreamLegacy));
    CHECK(memcmp(a_h, b_p, n) == 0);
    memset(b_h, 0, n);
    HIP_OK(hipMemcpyWithStream(a_d, a_h, n, hipMemcpyHostToDevice, hipStreamLegacy));
    HIP_OK(hipMemcpyWithStream(b_d, a_d, n, hipMemcpyDeviceToDevice, hipStreamLegacy));
    HIP_OK(hipMemcpyWithStream(b_h, b_d, n, hipMemcpyDeviceToHost, hipStreamLegacy));
    CHECK(memcmp(a_h, b_h, n) == 0);

    hipStream_t s = NULL;
    HIP_OK(hipStreamCreate(&s));
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    unsigned long long id = 0;
    CHECK_HIP(hipStreamBeginCapture(hipStreamLegacy, hipStreamCaptureModeGlobal),
              hipErrorStreamCaptureUnsupported);
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK_HIP(hipStreamGetCaptureInfo(hipStreamLegacy, &st, &id), hipErrorStreamCaptureImplicit);
    CHECK_HIP(hipStreamGetCaptureInfo_v2(hipStreamLegacy, &st, &id, NULL, NULL, NULL),
              hipErrorStreamCaptureImplicit);
    HIP_OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    HIP_OK(hipMemcpyAsync(a_d, a_h, n, hipMemcpyHostToDevice, s));
    hipGraph_t g = NULL;
    HIP_OK(hipStreamEndCapture(s, &g));
    CHECK(g != NULL);
    HIP_OK(hipStreamGetCaptureInfo(hipStreamLegacy, &st, &id));
    CHECK(st == hipStreamCaptureStatusNone);
    HIP_OK(hipStreamGetCaptureInfo_v2(hipStreamLegacy, &st, &id, NULL, NULL, NULL));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));

    /* managed memory prefetched to the CPU on hipStreamLegacy */
    int *m = NULL;
    HIP_OK(hipMallocManaged((void **)&m, 4096, hipMemAttachGlobal));
    for (int i = 0; i < 1024; i++)
        m[i] = 42;
    HIP_OK(hipMemPrefetchAsync(m, 4096, hipCpuDeviceId, hipStreamLegacy));
    HIP_OK(hipStreamSynchronize(NULL));
    CHECK(m[0] == 42 && m[1023] == 42);
    HIP_OK(hipFree(m));

    /* stream-ordered allocation on hipStreamLegacy from the default pool */
    hipMemPool_t pool = NULL;
    HIP_OK(hipDeviceGetDefaultMemPool(&pool, 0));
    HIP_OK(hipDeviceSetMemPool(0, pool));
    float *f = NULL;
    HIP_OK(hipMallocAsync((void **)&f, 64 * MiB, hipStreamLegacy));
    CHECK(f != NULL);
    HIP_OK(hipMemsetAsync(f, 0, 64 * MiB, hipStreamLegacy));
    HIP_OK(hipFreeAsync(f, hipStreamLegacy));
    HIP_OK(hipStreamSynchronize(hipStreamLegacy));

    HIP_OK(hipFree(a_d));
    HIP_OK(hipFree(b_d));
    HIP_OK(hipHostFree(a_p));
    HIP_OK(hipHostFree(b_p));
    free(a_h);
    free(b_h);
}
