/*
 * Events: hipEventCreate, hipEventCreateWithFlags, hipEventRecord,
 * hipEventSynchronize, hipEventQuery, hipEventElapsedTime, hipEventDestroy.
 *
 * Expected codes: hip-tests catch/unit/event/{Unit_hipEvent,
 * Unit_hipEventElapsedTime,Unit_hipEventRecord,Unit_hipEvent_Negative,
 * hipEventDestroy,hipEventCreateWithFlags}.cc; clr hip_event.cpp (DisableTiming and never-recorded
 * events in hipEventElapsedTime -> hipErrorInvalidHandle, not InvalidValue).
 */
#define _GNU_SOURCE
#include "common.h"

TEST(hipEventCreate_basic)
{
    hipEvent_t a = NULL, b = NULL;
    HIP_OK(hipEventCreate(&a));
    HIP_OK(hipEventCreate(&b));
    CHECK(a != NULL);
    CHECK(a != b);
    HIP_OK(hipEventDestroy(a));
    HIP_OK(hipEventDestroy(b));
}

TEST(hipEventCreate_null)
{
    CHECK_HIP(hipEventCreate(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipEventCreateWithFlags(NULL, hipEventDefault), hipErrorInvalidValue);
}

TEST(hipEventCreateWithFlags_valid)
{
    const unsigned flags[] = {hipEventDefault,
                              hipEventBlockingSync,
                              hipEventDisableTiming,
                              hipEventBlockingSync | hipEventDisableTiming,
                              hipEventInterprocess | hipEventDisableTiming,
                              hipEventReleaseToDevice,
                              hipEventReleaseToSystem,
                              hipEventDisableSystemFence,
                              hipEventDisableSystemFence | hipEventDisableTiming | hipEventBlockingSync};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        hipEvent_t e = NULL;
        hipError_t r = hipEventCreateWithFlags(&e, flags[i]);
        CHECKF(r == hipSuccess, "flags 0x%x: %s", flags[i], hipGetErrorName(r));
        if (r != hipSuccess)
            continue;
        HIP_OK(hipEventRecord(e, NULL));
        HIP_OK(hipEventSynchronize(e));
        CHECK_HIP(hipEventQuery(e), hipSuccess);
        HIP_OK(hipEventDestroy(e));
    }
}

TEST(hipEventCreateWithFlags_negative)
{
    hipEvent_t e = NULL;
    /* hip-tests Unit_hipEventCreate_IncompatibleFlags (AMD) */
    CHECK_HIP(hipEventCreateWithFlags(&e, hipEventInterprocess), hipErrorInvalidValue);
    CHECK_HIP(hipEventCreateWithFlags(&e, hipEventReleaseToDevice | hipEventReleaseToSystem),
              hipErrorInvalidValue);
    CHECK_HIP(hipEventCreateWithFlags(&e, hipEventBlockingSync | hipEventReleaseToSystem |
                                              hipEventReleaseToDevice | hipEventDisableTiming |
                                              hipEventInterprocess),
              hipErrorInvalidValue);
    CHECK_HIP(hipEventCreateWithFlags(&e, 0x08000000), hipErrorInvalidValue);
    /* clr ihipEventCreateWithFlags: at most one of the three release scopes */
    CHECK_HIP(hipEventCreateWithFlags(&e, hipEventDisableSystemFence | hipEventReleaseToDevice),
              hipErrorInvalidValue);
    CHECK_HIP(hipEventCreateWithFlags(&e, hipEventDisableSystemFence | hipEventReleaseToSystem),
              hipErrorInvalidValue);
    CHECK_HIP(hipEventCreateWithFlags(&e, hipEventDisableSystemFence | hipEventReleaseToSystem |
                                              hipEventReleaseToDevice),
              hipErrorInvalidValue);
}

/* hip-tests Unit_hipEventCreateWithFlags_{DisableSystemFence,DefaultFlg}_{HstVisMem,NonCohHstMem,
 * CohHstMem} without a kernel: device work on device, non-coherent and coherent host memory, an
 * event of each flag recorded after it, then each synchronisation; the host sees the data. */
TEST(hipEventCreateWithFlags_DisableSystemFence_coherency)
{
    const size_t n = 256 * KiB;
    const unsigned flags[] = {hipEventDefault, hipEventDisableSystemFence};
    uint8_t *h = xmalloc(n);
    for (int mem = 0; mem < 3; mem++)
        for (size_t f = 0; f < 2; f++)
            for (int sync = 0; sync < 3; sync++) {
                void *buf = NULL;
                if (mem == 0)
                    HIP_OK(hipMalloc(&buf, n));
                else
                    HIP_OK(hipHostMalloc(&buf, n, mem == 1 ? hipHostMallocNonCoherent : hipHostMallocCoherent));
                hipEvent_t e = NULL;
                hipStream_t s = NULL;
                HIP_OK(hipEventCreateWithFlags(&e, flags[f]));
                HIP_OK(hipStreamCreateWithFlags(&s, 0));
                for (int iter = 0; iter < 3; iter++) {
                    int v = 0x10 + mem * 16 + (int)f * 4 + sync + iter;
                    HIP_OK(hipMemsetAsync(buf, v, n, s));
                    HIP_OK(hipEventRecord(e, s));
                    if (sync == 0)
                        HIP_OK(hipStreamSynchronize(s));
                    else if (sync == 1)
                        HIP_OK(hipDeviceSynchronize());
                    else
                        HIP_OK(hipEventSynchronize(e));
                    const uint8_t *seen = buf;
                    if (mem == 0) {
                        HIP_OK(hipMemcpy(h, buf, n, hipMemcpyDeviceToHost));
                        seen = h;
                    }
                    CHECKF(seen[0] == v && seen[n - 1] == v && seen[n / 2] == v, "mem %d flags 0x%x sync %d",
                           mem, flags[f], sync);
                }
                HIP_OK(hipStreamDestroy(s));
                HIP_OK(hipEventDestroy(e));
                if (mem == 0)
                    HIP_OK(hipFree(buf));
                else
                    HIP_OK(hipHostFree(buf));
            }
    free(h);
}

TEST(hipEventDestroy_negative)
{
    hipEvent_t e;
    CHECK_HIP(hipEventDestroy(NULL), hipErrorInvalidResourceHandle);
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipEventDestroy(e));
    CHECK_HIP(hipEventDestroy(e), hipErrorContextIsDestroyed);
}

TEST(hipEventDestroy_with_pending_work)
{
    /* hip-tests Unit_hipEventDestroy_WithWaitingStream */
    hipStream_t s;
    hipEvent_t e;
    struct busy b = busy_begin();
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreate(&e));
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipEventRecord(e, s));
    CHECK_HIP(hipEventQuery(e), hipErrorNotReady);
    HIP_OK(hipEventDestroy(e));
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipStreamDestroy(s));
    busy_end(&b);
}

TEST(hipEventDestroy_earlier_record_still_queued)
{
    /* An event recorded on a stream that is blocked (hipStreamWaitValue32 on a host word), then
     * again on an idle stream whose record finishes, then destroyed: the first record still
     * writes its timestamp once the blocked stream runs. Whatever the runtime reuses the event's
     * storage for must not receive it. Events made after the destroy take that storage first
     * if it was freed: their finished records' elapsed times must not change when the blocked
     * stream is released. (The fuzz found the old form: the storage became a queue's completion
     * signal, the late timestamp ended that queue's waits early, and a hipMemcpyDtoH returned
     * the staging buffer's stale bytes.) */
    enum { N = 16 };
    hipStream_t blocked, idle;
    hipEvent_t e, ev[N];
    uint32_t *word;
    float before[N], after[N];
    HIP_OK(hipHostMalloc((void **)&word, 4096, 0));
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    HIP_OK(hipStreamCreate(&blocked));
    HIP_OK(hipStreamCreate(&idle));
    HIP_OK(hipStreamWaitValue32(blocked, word, 1, hipStreamWaitValueGte, ~0u));
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipEventRecord(e, blocked));
    HIP_OK(hipEventRecord(e, idle));
    HIP_OK(hipStreamSynchronize(idle));
    CHECK_HIP(hipStreamQuery(blocked), hipErrorNotReady);
    HIP_OK(hipEventDestroy(e));
    for (int i = 0; i < N; i++) {
        HIP_OK(hipEventCreate(&ev[i]));
        HIP_OK(hipEventRecord(ev[i], idle));
    }
    HIP_OK(hipStreamSynchronize(idle));
    for (int i = 0; i < N; i++)
        HIP_OK(hipEventElapsedTime(&before[i], ev[0], ev[i]));
    usleep(20000); /* the late timestamp, if it lands, is 20 ms after these */
    __atomic_store_n(word, 1, __ATOMIC_RELEASE);
    HIP_OK(hipStreamSynchronize(blocked));
    for (int i = 0; i < N; i++) {
        HIP_OK(hipEventElapsedTime(&after[i], ev[0], ev[i]));
        CHECKF(after[i] == before[i], "event %d: elapsed %.3f ms from event 0 before the blocked stream ran, %.3f ms after",
               i, before[i], after[i]);
    }
    for (int i = 0; i < N; i++)
        HIP_OK(hipEventDestroy(ev[i]));
    HIP_OK(hipStreamDestroy(blocked));
    HIP_OK(hipStreamDestroy(idle));
    HIP_OK(hipHostFree(word));
}

TEST(hipEventRecord_negative)
{
    hipStream_t dead;
    hipEvent_t e;
    CHECK_HIP(hipEventRecord(NULL, NULL), hipErrorInvalidResourceHandle);
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    CHECK_HIP(hipEventRecord(e, dead), hipErrorContextIsDestroyed);
    HIP_OK(hipEventDestroy(e));
}

TEST(multigpu_hipEventRecord_other_device)
{
    /* hip-tests Unit_hipEventRecord_Negative "Different devices" */
    REQUIRE_GPUS(2);
    hipEvent_t e;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipSetDevice(1));
    CHECK_HIP(hipEventRecord(e, NULL), hipErrorInvalidHandle);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipEventDestroy(e));
}

TEST(hipEventQuery_and_Synchronize_unrecorded)
{
    hipEvent_t e;
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipEventQuery(e));
    HIP_OK(hipEventSynchronize(e)); /* returns at once */
    HIP_OK(hipEventDestroy(e));
}

TEST(hipEventQuery_Synchronize_null)
{
    CHECK_HIP(hipEventQuery(NULL), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipEventSynchronize(NULL), hipErrorInvalidResourceHandle);
}

TEST(hipEventQuery_not_ready_then_ready)
{
    hipStream_t s;
    hipEvent_t e;
    struct busy b = busy_begin();
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreate(&e));
    for (int round = 0; round < 2; round++) { /* re-recording works too */
        REQUIRE_BUSY(&b, s);
        HIP_OK(hipEventRecord(e, s));
        CHECK_HIP(hipEventQuery(e), hipErrorNotReady);
        HIP_OK(hipEventSynchronize(e));
        CHECK_HIP(hipEventQuery(e), hipSuccess);
        /* the event completing means everything before it completed */
        CHECK_HIP(hipStreamQuery(s), hipSuccess);
    }
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(s));
    busy_end(&b);
}

TEST(hipEventSynchronize_waits_for_preceding_work)
{
    hipStream_t s;
    hipEvent_t e;
    struct busy b = busy_begin();
    size_t n = 8 * MiB;
    uint8_t *d = NULL, *h = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreateWithFlags(&e, hipEventBlockingSync));
    HIP_OK(hipMalloc((void **)&d, n));
    HIP_OK(hipHostMalloc((void **)&h, n, hipHostMallocDefault));
    memset(h, 0, n);
    REQUIRE_BUSY(&b, s);
    HIP_OK(hipMemsetAsync(d, 0x4b, n, s));
    HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
    HIP_OK(hipEventRecord(e, s));
    HIP_OK(hipEventSynchronize(e));
    CHECK_BYTES(h, n, 0x4b);
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
    busy_end(&b);
}

TEST(hipEventElapsedTime_basic)
{
    /* hip-tests Unit_hipEventElapsedTime and Unit_hipEvent */
    hipEvent_t start, stop;
    float t = -1.0f;
    HIP_OK(hipEventCreate(&start));
    HIP_OK(hipEventCreate(&stop));
    HIP_OK(hipEventRecord(start, NULL));
    HIP_OK(hipEventSynchronize(start));
    HIP_OK(hipEventRecord(stop, NULL));
    HIP_OK(hipEventSynchronize(stop));
    HIP_OK(hipEventElapsedTime(&t, start, stop));
    CHECKF(t >= 0.0f, "elapsed %f ms", (double)t);
    HIP_OK(hipEventElapsedTime(&t, start, start));
    CHECK(t == 0.0f);
    HIP_OK(hipEventDestroy(start));
    HIP_OK(hipEventDestroy(stop));
}

TEST(hipEventElapsedTime_measures_work)
{
    /* around a known amount of device work: 0 < t <= host wall time; reversed < 0 */
    hipStream_t s;
    hipEvent_t start, stop;
    struct busy b = busy_begin();
    float t = -1.0f, rev = 1.0f;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreate(&start));
    HIP_OK(hipEventCreate(&stop));
    HIP_OK(hipStreamSynchronize(s));
    double t0 = hc_now_ms();
    HIP_OK(hipEventRecord(start, s));
    busy_enqueue(&b, s, 8);
    HIP_OK(hipEventRecord(stop, s));
    HIP_OK(hipEventSynchronize(stop));
    double wall = hc_now_ms() - t0;
    HIP_OK(hipEventElapsedTime(&t, start, stop));
    CHECKF(t > 0.0f, "elapsed %f ms for 8 fills of %zu MiB", (double)t, b.size / MiB);
    CHECKF((double)t <= wall * 1.05 + 2.0, "elapsed %f ms but only %f ms passed on the host",
           (double)t, wall);
    HIP_OK(hipEventElapsedTime(&rev, stop, start));
    CHECKF(rev <= 0.0f, "reversed elapsed time %f ms", (double)rev);
    printf("    8 x %zu MiB fills: %.3f ms (host wall %.3f ms)\n", b.size / MiB, (double)t, wall);
    HIP_OK(hipEventDestroy(start));
    HIP_OK(hipEventDestroy(stop));
    HIP_OK(hipStreamDestroy(s));
    busy_end(&b);
}

TEST(hipEventElapsedTime_negative)
{
    hipEvent_t start, stop, no_timing, never_recorded;
    float t = 1.0f;
    HIP_OK(hipEventCreate(&start));
    HIP_OK(hipEventCreate(&stop));
    HIP_OK(hipEventCreate(&never_recorded));
    HIP_OK(hipEventCreateWithFlags(&no_timing, hipEventDisableTiming));
    HIP_OK(hipEventRecord(no_timing, NULL));
    HIP_OK(hipEventRecord(start, NULL));
    HIP_OK(hipEventRecord(stop, NULL));
    HIP_OK(hipEventSynchronize(stop));

    CHECK_HIP(hipEventElapsedTime(NULL, start, stop), hipErrorInvalidValue);
    CHECK_HIP(hipEventElapsedTime(&t, NULL, stop), hipErrorInvalidHandle);
    CHECK_HIP(hipEventElapsedTime(&t, start, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipEventElapsedTime(&t, no_timing, stop), hipErrorInvalidHandle);
    CHECK_HIP(hipEventElapsedTime(&t, start, no_timing), hipErrorInvalidHandle);
    CHECK_HIP(hipEventElapsedTime(&t, never_recorded, stop), hipErrorInvalidHandle);
    CHECK_HIP(hipEventElapsedTime(&t, start, never_recorded), hipErrorInvalidHandle);
    /* the failure is also the thread's last error */
    CHECK_HIP(hipGetLastError(), hipErrorInvalidHandle);

    HIP_OK(hipEventDestroy(start));
    HIP_OK(hipEventDestroy(stop));
    HIP_OK(hipEventDestroy(no_timing));
    HIP_OK(hipEventDestroy(never_recorded));
}

TEST(hipEventElapsedTime_disable_timing_pair)
{
    /* hip-tests Unit_hipEventElapsedTime_DisableTiming: both DisableTiming,
     * even never recorded -> hipErrorInvalidHandle */
    hipEvent_t a, b;
    float t = 1.0f;
    HIP_OK(hipEventCreateWithFlags(&a, hipEventDisableTiming));
    HIP_OK(hipEventCreateWithFlags(&b, hipEventDisableTiming));
    CHECK_HIP(hipEventElapsedTime(&t, a, b), hipErrorInvalidHandle);
    HIP_OK(hipEventDestroy(a));
    HIP_OK(hipEventDestroy(b));
}

TEST(hipEventElapsedTime_not_ready)
{
    /* hip-tests Unit_hipEventElapsedTime_NotReady_Negative (AMD) */
    hipEvent_t start, stop;
    struct busy b = busy_begin();
    float t = 1.0f;
    HIP_OK(hipEventCreate(&start));
    HIP_OK(hipEventCreate(&stop));
    HIP_OK(hipEventRecord(start, NULL));
    REQUIRE_BUSY(&b, NULL);
    HIP_OK(hipEventRecord(stop, NULL));
    CHECK_HIP(hipEventQuery(stop), hipErrorNotReady);
    CHECK_HIP(hipEventElapsedTime(&t, start, stop), hipErrorNotReady);
    CHECK_HIP(hipEventElapsedTime(&t, stop, stop), hipErrorNotReady);
    HIP_OK(hipStreamSynchronize(NULL));
    HIP_OK(hipEventElapsedTime(&t, start, stop));
    CHECK(t >= 0.0f);
    HIP_OK(hipEventDestroy(start));
    HIP_OK(hipEventDestroy(stop));
    busy_end(&b);
}

TEST(multigpu_hipEventElapsedTime_different_devices)
{
    /* hip-tests Unit_hipEventElapsedTime_DifferentDevices */
    REQUIRE_GPUS(2);
    hipEvent_t start, stop;
    float t = 1.0f;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipEventCreate(&start));
    HIP_OK(hipEventRecord(start, NULL));
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipEventCreate(&stop));
    HIP_OK(hipEventRecord(stop, NULL));
    HIP_OK(hipEventSynchronize(stop));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipEventSynchronize(start));
    CHECK_HIP(hipEventElapsedTime(&t, start, stop), hipErrorInvalidHandle);
    HIP_OK(hipEventDestroy(start));
    HIP_OK(hipEventDestroy(stop));
}
