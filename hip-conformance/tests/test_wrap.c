/*
 * Long-lived processes: streams and events across 2^32 submissions.
 *
 * HIPKFD_SEQ_START (README, Logs and debug knobs) starts every queue's sequence
 * numbers and every IPC event's record counter WRAP_BELOW submissions below
 * 2^32, so a few thousand rounds carry them across the 32-bit wrap: work on
 * streams, legacy null-stream ordering, hipStreamWaitEvent (local and IPC),
 * hipEventSynchronize, hipEventQuery and hipStreamQuery, data checked every
 * round. The runner forks each test before HIP initialises, so setting the
 * variable first is enough; peers forked afterwards inherit it.
 */
#define _GNU_SOURCE
#include "common.h"
#include "proc.h"

/* 2^32 - 1500: each queue crosses 2^32 after 1500 submissions. */
#define WRAP_SEED "4294965796"
#define WRAP_ROUNDS 2000
#define WRAP_SIZE (64 * KiB)

static void wrap_seed(void) { REQUIRE(setenv("HIPKFD_SEQ_START", WRAP_SEED, 1) == 0); }

static uint8_t round_byte(int i) { return (uint8_t)(i * 7 + 1); }

/* a → b on a non-blocking stream after an event of s1, b → c on a blocking
 * stream after an event of that, c → host on the null stream, which waits for
 * the blocking stream (legacy semantics) and for nothing else. */
TEST(wrap_streams_and_events)
{
    wrap_seed();
    const size_t n = WRAP_SIZE;
    hipStream_t s1, s2, s3;
    HIP_OK(hipStreamCreate(&s1));
    HIP_OK(hipStreamCreate(&s2));
    HIP_OK(hipStreamCreateWithFlags(&s3, hipStreamNonBlocking));
    hipEvent_t e1, e2;
    HIP_OK(hipEventCreate(&e1));
    HIP_OK(hipEventCreateWithFlags(&e2, hipEventDisableTiming));
    void *a, *b, *c;
    HIP_OK(hipMalloc(&a, n));
    HIP_OK(hipMalloc(&b, n));
    HIP_OK(hipMalloc(&c, n));
    uint8_t *h = xmalloc(n);
    for (int i = 0; i < WRAP_ROUNDS; i++) {
        uint8_t v = round_byte(i);
        HIP_OK(hipMemsetAsync(a, v, n, s1));
        HIP_OK(hipEventRecord(e1, s1));
        HIP_OK(hipStreamWaitEvent(s3, e1, 0));
        HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s3));
        HIP_OK(hipEventRecord(e2, s3));
        HIP_OK(hipStreamWaitEvent(s2, e2, 0));
        HIP_OK(hipMemcpyAsync(c, b, n, hipMemcpyDeviceToDevice, s2));
        memset(h, 0, n);
        HIP_OK(hipMemcpyAsync(h, c, n, hipMemcpyDeviceToHost, NULL));
        HIP_OK(hipStreamSynchronize(NULL));
        size_t bad = byte_mismatch(h, n, v);
        REQUIREF(bad == n, "round %d: byte %zu is 0x%02x, expected 0x%02x", i, bad, h[bad], v);
        HIP_OK(hipEventSynchronize(e1));
        HIP_OK(hipEventSynchronize(e2));
        REQUIRE_HIP(hipEventQuery(e1), hipSuccess);
        REQUIRE_HIP(hipEventQuery(e2), hipSuccess);
        REQUIRE_HIP(hipStreamQuery(s1), hipSuccess);
        REQUIRE_HIP(hipStreamQuery(s2), hipSuccess);
        REQUIRE_HIP(hipStreamQuery(s3), hipSuccess);
        REQUIRE_HIP(hipStreamQuery(NULL), hipSuccess);
        if (i % 500 == 0) {
            float ms = -1;
            HIP_OK(hipEventElapsedTime(&ms, e1, e1));
            CHECK(ms == 0);
        }
    }
    HIP_OK(hipDeviceSynchronize());
    free(h);
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
    HIP_OK(hipFree(c));
    HIP_OK(hipEventDestroy(e1));
    HIP_OK(hipEventDestroy(e2));
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipStreamDestroy(s2));
    HIP_OK(hipStreamDestroy(s3));
}

/* The importer: even rounds order a copy after the exporter's record on the
 * GPU (hipStreamWaitEvent), odd rounds wait on the host (hipEventSynchronize). */
static void wrap_importer(int fd, void *arg)
{
    (void)arg;
    const size_t n = WRAP_SIZE;
    hipEvent_t ev = NULL;
    void *p = NULL;
    recv_event_and_mem(fd, &ev, &p);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    void *mine = NULL;
    HIP_OK(hipMalloc(&mine, n));
    uint8_t *h = xmalloc(n);
    for (int i = 0; i < WRAP_ROUNDS; i++) {
        REQUIRE(recv_u64(fd) == (uint64_t)i);
        memset(h, 0, n);
        if (i % 2 == 0) {
            HIP_OK(hipStreamWaitEvent(s, ev, 0));
            HIP_OK(hipMemcpyAsync(mine, p, n, hipMemcpyDeviceToDevice, s));
            HIP_OK(hipMemcpyAsync(h, mine, n, hipMemcpyDeviceToHost, s));
            HIP_OK(hipStreamSynchronize(s));
        } else {
            HIP_OK(hipEventSynchronize(ev));
            HIP_OK(hipMemcpy(h, p, n, hipMemcpyDeviceToHost));
        }
        REQUIRE_HIP(hipEventQuery(ev), hipSuccess);
        size_t bad = byte_mismatch(h, n, round_byte(i));
        REQUIREF(bad == n, "importer round %d: byte %zu is 0x%02x, expected 0x%02x", i, bad, h[bad],
                 round_byte(i));
        send_u64(fd, (uint64_t)i);
    }
    free(h);
    HIP_OK(hipFree(mine));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipEventDestroy(ev));
}

/* The exporter records the IPC event after each round's fill; the importer
 * checks the data through the event and answers before the next fill. */
TEST(wrap_ipc_event_cross_process)
{
    wrap_seed();
    struct peer imp = spawn(wrap_importer, NULL);
    const size_t n = WRAP_SIZE;
    hipEvent_t ev = NULL;
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
    void *p = NULL;
    HIP_OK(hipMalloc(&p, n));
    send_event_and_mem(imp.fd, ev, p);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    for (int i = 0; i < WRAP_ROUNDS; i++) {
        HIP_OK(hipMemsetAsync(p, round_byte(i), n, s));
        HIP_OK(hipEventRecord(ev, s));
        send_u64(imp.fd, (uint64_t)i);
        REQUIRE(recv_u64(imp.fd) == (uint64_t)i);
        REQUIRE_HIP(hipEventQuery(ev), hipSuccess);
    }
    join(&imp, "importer");
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(p));
    HIP_OK(hipEventDestroy(ev));
}
