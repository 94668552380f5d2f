/*
 * The ordering rules of README.md "Ordering rules", one test (or more) per rule, each checking
 * bytes. Races are forced, not hoped for: a stream is held by hipStreamWaitValue32 (an SDMA
 * POLL_REGMEM) on a host word that the test sets when it chooses, so work that must wait is
 * still queued behind the hold and work that may run has run. Issue 37 (a synchronous copy that
 * read stale bytes) found the rules these tests pin down. All names start with "order_".
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>

enum { N = 64 * 1024 };

/* A hipMalloc of N bytes on device dev holding pattern seed (dev left current, all done). */
static uint8_t *dev_buf(int dev, unsigned seed)
{
    HIP_OK(hipSetDevice(dev));
    uint8_t *d = dev_pattern(N, seed);
    HIP_OK(hipDeviceSynchronize());
    return d;
}

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

/* Rule: null-stream work on memory only another device's engines reach runs on that device as
 * null-stream work of it (clr: that device's null stream), so a blocking stream of that device
 * issued later waits for it. Device 1 current, hipMemcpy between two buffers of device 0 runs on
 * device 0 after device 1's null stream (held); a blocking stream of device 0 then writes the
 * destination: its write lands last. (Issue 37, case B: the blocking stream ran first and the
 * held copy overwrote its bytes.) */
TEST(order_blocking_stream_waits_for_other_device_null_stream_work_on_its_memory)
{
    REQUIRE_GPUS(2);
    uint32_t *w = hold_word();
    uint8_t *z = dev_buf(0, 1), *y = dev_buf(0, 2);
    uint8_t *h = pinned(3), *out = malloc(N);
    hipStream_t s1;
    HIP_OK(hipStreamCreate(&s1)); /* device 0, blocking */
    HIP_OK(hipSetDevice(1));
    hold(0, w);
    HIP_OK(hipMemcpy(z, y, N, hipMemcpyDeviceToDevice)); /* asynchronous to the host */
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpyAsync(z, h, N, hipMemcpyHostToDevice, s1));
    check_still_waiting(s1);
    release(w);
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMemcpy(out, z, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 3);
    HIP_OK(hipStreamDestroy(s1));
    free(out);
}

/* Rule: a non-blocking stream does not wait for null-stream work, that of a proxy included. */
TEST(order_non_blocking_stream_does_not_wait_for_other_device_null_stream_work)
{
    REQUIRE_GPUS(2);
    uint32_t *w = hold_word();
    uint8_t *z = dev_buf(0, 4), *y = dev_buf(0, 5), *x = dev_buf(0, 6);
    uint8_t *h = pinned(7), *out = malloc(N);
    hipStream_t nb;
    HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
    HIP_OK(hipSetDevice(1));
    hold(0, w);
    HIP_OK(hipMemcpy(z, y, N, hipMemcpyDeviceToDevice));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpyAsync(x, h, N, hipMemcpyHostToDevice, nb));
    HIP_OK(hipStreamSynchronize(nb)); /* returns while the held copy still waits */
    HIP_OK(hipMemcpyAsync(out, x, N, hipMemcpyDeviceToHost, nb));
    HIP_OK(hipStreamSynchronize(nb));
    CHECK_PATTERN(out, N, 7);
    release(w);
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpy(out, z, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 5);
    HIP_OK(hipStreamDestroy(nb));
    free(out);
}

/* Rule: work of a user stream on another device's memory stays that stream's work: a blocking
 * stream of the memory's device does not wait for it (CUDA orders different streams only through
 * events and the legacy stream). Were it waited for, a program whose blocking stream releases the
 * user stream (signals the semaphore it waits on) would deadlock: the fuzzer's external-semaphore
 * case. The user stream is held; the blocking stream's work completes meanwhile. */
TEST(order_blocking_stream_does_not_wait_for_a_user_stream_on_its_memory)
{
    REQUIRE_GPUS(2);
    uint32_t *w = hold_word();
    uint8_t *z = dev_buf(0, 20), *x = dev_buf(0, 21), *h = pinned(22), *out = malloc(N);
    hipStream_t s0, u1;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipStreamCreate(&s0)); /* device 0, blocking */
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&u1)); /* device 1, blocking */
    hold(u1, w);
    HIP_OK(hipMemcpyAsync(z, h, N, hipMemcpyHostToDevice, u1)); /* device 0's memory, held */
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpyAsync(x, h, N, hipMemcpyHostToDevice, s0));
    HIP_OK(hipStreamSynchronize(s0)); /* returns while u1 is held */
    CHECK_HIP(hipStreamQuery(u1), hipErrorNotReady);
    HIP_OK(hipMemcpyAsync(out, x, N, hipMemcpyDeviceToHost, s0));
    HIP_OK(hipStreamSynchronize(s0));
    CHECK_PATTERN(out, N, 22);
    release(w);
    HIP_OK(hipStreamSynchronize(u1));
    HIP_OK(hipMemcpy(out, z, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 22);
    HIP_OK(hipStreamDestroy(s0));
    HIP_OK(hipStreamDestroy(u1));
    free(out);
}

/* Rule: the null stream of a device waits for that device's blocking streams, and a copy on
 * memory of another device issued from it runs there after them. */
TEST(order_null_stream_copy_on_other_device_memory_follows_blocking_streams)
{
    REQUIRE_GPUS(2);
    uint32_t *w = hold_word();
    uint8_t *x = dev_buf(1, 8), *h = pinned(9), *out = malloc(N);
    hipStream_t s0;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipStreamCreate(&s0)); /* device 0, blocking */
    hold(s0, w);
    HIP_OK(hipMemcpyAsync(x, h, N, hipMemcpyHostToDevice, s0)); /* held, on device 1's engines */
    /* Device 0's null stream: a read of x must see s0's copy. Read from another thread of ours
     * would deadlock the test, so check that it is queued behind, then release. */
    uint8_t *pin_out = NULL;
    HIP_OK(hipHostMalloc((void **)&pin_out, N, 0));
    memset(pin_out, 0, N);
    HIP_OK(hipMemcpyAsync(pin_out, x, N, hipMemcpyDeviceToHost, 0));
    check_still_waiting(0);
    release(w);
    HIP_OK(hipStreamSynchronize(0));
    CHECK_PATTERN(pin_out, N, 9);
    HIP_OK(hipMemcpy(out, x, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 9);
    HIP_OK(hipStreamDestroy(s0));
    free(out);
}

/* Rule: the legacy null stream orders work within one device only (CUDA): device 0's null
 * stream does not wait for device 1's. */
TEST(order_null_streams_of_two_devices_are_independent)
{
    REQUIRE_GPUS(2);
    uint32_t *w = hold_word();
    uint8_t *x = dev_buf(0, 10), *h = pinned(11), *out = malloc(N);
    HIP_OK(hipSetDevice(1));
    hold(0, w);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpy(x, h, N, hipMemcpyHostToDevice)); /* returns: device 1 is not waited for */
    HIP_OK(hipMemcpy(out, x, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 11);
    HIP_OK(hipSetDevice(1));
    CHECK_HIP(hipStreamQuery(0), hipErrorNotReady);
    release(w);
    HIP_OK(hipDeviceSynchronize());
    free(out);
}

/* A thread that sets the hold word after `ms` milliseconds, and says when it did. */
struct releaser {
    uint32_t *w;
    int ms;
    atomic_int released;
    pthread_t t;
};

static void *release_later(void *arg)
{
    struct releaser *r = arg;
    usleep(r->ms * 1000);
    atomic_store(&r->released, 1);
    release(r->w);
    return NULL;
}

static void release_after(struct releaser *r, uint32_t *w, int ms)
{
    r->w = w;
    r->ms = ms;
    atomic_store(&r->released, 0);
    REQUIRE(pthread_create(&r->t, NULL, release_later, r) == 0);
}

/* Rule: hipMemcpy between two buffers of one device returns once queued (clr, CUDA); a later
 * synchronous hipMemcpy to the host on the same null stream returns once everything before it
 * is done, so it sees the copy. The null stream is held: the first call must return while held,
 * the second only after the release, with the copied bytes. */
TEST(order_sync_d2h_sees_an_earlier_host_async_d2d)
{
    uint32_t *w = hold_word();
    uint8_t *x = dev_buf(0, 12), *y = dev_buf(0, 13), *out = malloc(N);
    struct releaser r;
    hold(0, w);
    release_after(&r, w, 100);
    HIP_OK(hipMemcpy(x, y, N, hipMemcpyDeviceToDevice));
    CHECK(!atomic_load(&r.released)); /* returned while held */
    HIP_OK(hipMemcpy(out, x, N, hipMemcpyDeviceToHost));
    CHECK(atomic_load(&r.released));
    CHECK_PATTERN(out, N, 13);
    pthread_join(r.t, NULL);
    free(out);
}

/* The same, the copy issued with the other device current (it runs on the buffers' device):
 * the read issued from that device's side or from the issuing device sees it. (Issue 37,
 * case A's shape: peer access toggled between the copy and the read.) */
TEST(order_sync_d2h_sees_an_earlier_d2d_issued_from_another_device)
{
    REQUIRE_GPUS(2);
    uint32_t *w = hold_word();
    uint8_t *x = dev_buf(1, 14), *y = dev_buf(1, 15), *out = malloc(N);
    struct releaser r;
    int p2p = 0;
    HIP_OK(hipDeviceCanAccessPeer(&p2p, 0, 1));
    HIP_OK(hipSetDevice(0));
    if (p2p)
        HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    hold(0, w);
    release_after(&r, w, 100);
    HIP_OK(hipMemcpy(x, y, N, hipMemcpyDeviceToDevice));
    CHECK(!atomic_load(&r.released));
    if (p2p) {
        HIP_OK(hipDeviceDisablePeerAccess(1));
        HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    }
    HIP_OK(hipMemcpy(out, x, N, hipMemcpyDeviceToHost));
    CHECK(atomic_load(&r.released));
    CHECK_PATTERN(out, N, 15);
    pthread_join(r.t, NULL);
    HIP_OK(hipSetDevice(1));
    memset(out, 0, N);
    HIP_OK(hipMemcpy(out, x, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 15);
    if (p2p) {
        HIP_OK(hipSetDevice(0));
        HIP_OK(hipDeviceDisablePeerAccess(1));
    }
    free(out);
}

/* Rule: hipDeviceDisablePeerAccess waits for the runtime's copies that use the mapping, then
 * unmaps: a peer copy queued (and held) before the disable completes with the right bytes. */
TEST(order_peer_disable_waits_for_a_queued_peer_copy)
{
    REQUIRE_GPUS(2);
    int p2p = 0;
    HIP_OK(hipDeviceCanAccessPeer(&p2p, 0, 1));
    if (!p2p)
        SKIP("no peer access between devices 0 and 1");
    uint32_t *w = hold_word();
    uint8_t *src = dev_buf(0, 16), *dst = dev_buf(1, 17), *out = malloc(N);
    struct releaser r;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    hold(0, w);
    release_after(&r, w, 100);
    HIP_OK(hipMemcpyPeerAsync(dst, 1, src, 0, N, 0)); /* after the hold: direct, 0 → 1 */
    HIP_OK(hipDeviceDisablePeerAccess(1));
    CHECK(atomic_load(&r.released));
    HIP_OK(hipMemcpy(out, dst, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 16);
    pthread_join(r.t, NULL);
    free(out);
}

/* Rule: hipDeviceSynchronize and hipFree wait for every stream's work queued before them, also
 * right after a sync that found the device idle (the runtime then skips its walk over the
 * streams until something is submitted: DeviceStreams::submitted). A user stream is held; a
 * copy into a buffer queued behind the hold must be done (its bytes there) when
 * hipDeviceSynchronize returns, and a hipFree of a source behind a second hold must wait for it. */
TEST(order_device_sync_after_an_idle_sync_waits_for_new_work)
{
    uint32_t *w = hold_word(), *w2 = hold_word();
    uint8_t *x = dev_buf(0, 21), *y = dev_buf(0, 22), *h = pinned(23), *out = malloc(N);
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    struct releaser r;
    HIP_OK(hipDeviceSynchronize()); /* idle: the next syncs may take the fast path */
    HIP_OK(hipDeviceSynchronize());
    hold(s, w);
    release_after(&r, w, 100);
    HIP_OK(hipMemcpyAsync(x, y, N, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipDeviceSynchronize());
    CHECK(atomic_load(&r.released));
    pthread_join(r.t, NULL);
    HIP_OK(hipMemcpy(out, x, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 22);
    /* hipFree of the copy's destination waits for the held copy into it */
    HIP_OK(hipDeviceSynchronize());
    hold(s, w2);
    release_after(&r, w2, 100);
    HIP_OK(hipMemcpyAsync(h, y, N, hipMemcpyDeviceToHost, s));
    HIP_OK(hipFree(x));
    CHECK(atomic_load(&r.released));
    pthread_join(r.t, NULL);
    CHECK_PATTERN(h, N, 22);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(y));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipHostFree(w));
    HIP_OK(hipHostFree(w2));
    free(out);
}

/* A thread that calls hipDeviceSynchronize (device 0) or hipFree(ptr) and says when it returned. */
struct syncer {
    void *ptr;
    atomic_int done;
    hipError_t err;
    pthread_t t;
};

static void *sync_in_thread(void *arg)
{
    struct syncer *y = arg;
    hipError_t e = hipSetDevice(0);
    if (e == hipSuccess)
        e = y->ptr ? hipFree(y->ptr) : hipDeviceSynchronize();
    y->err = e;
    atomic_store(&y->done, 1);
    return NULL;
}

/* Whether y's call returned within about 10 s (a deadline for a wait that must end, not a
 * speed goal). */
static int returned_soon(struct syncer *y)
{
    for (int i = 0; i < 10000 && !atomic_load(&y->done); i++)
        usleep(1000);
    return atomic_load(&y->done);
}

/* Rule: hipDeviceSynchronize and hipFree wait for the work queued before the call, not for work
 * other threads queue while they wait (CUDA: "all preceding requested tasks"). A thread syncs
 * (then frees) while stream s1 is held; then stream s2, made after s1, gets held work and s1 is
 * released: the call returns with s1's copy done (its bytes there) and s2 still held. Before the
 * fix the wait re-read each stream's last fence as it came to it and so waited for s2's new work
 * too; with 16 threads freeing while the others copied, each hipFree chased the others' copies
 * (bench/scoreboard.c "contention": 16 threads slower than one). */
TEST(order_device_sync_does_not_wait_for_work_queued_after_it)
{
    for (int freeing = 0; freeing < 2; freeing++) {
        uint32_t *w1 = hold_word(), *w2 = hold_word();
        uint8_t *x = dev_buf(0, 24), *y = dev_buf(0, 25), *z = dev_buf(0, 26), *h = pinned(27);
        uint8_t *victim = dev_buf(0, 28);
        hipStream_t s1, s2;
        HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
        HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
        HIP_OK(hipMemcpyAsync(z, y, N, hipMemcpyDeviceToDevice, s2)); /* s2 has a (done) fence */
        HIP_OK(hipStreamSynchronize(s2));
        hold(s1, w1);
        HIP_OK(hipMemcpyAsync(x, y, N, hipMemcpyDeviceToDevice, s1));
        struct syncer t = {.ptr = freeing ? victim : NULL};
        REQUIRE(pthread_create(&t.t, NULL, sync_in_thread, &t) == 0);
        usleep(100 * 1000); /* the thread is waiting for s1 */
        CHECK(!atomic_load(&t.done));
        hold(s2, w2);
        HIP_OK(hipMemcpyAsync(z, h, N, hipMemcpyHostToDevice, s2));
        release(w1);
        CHECK(returned_soon(&t));
        CHECK_HIP(t.err, hipSuccess);
        CHECK_HIP(hipStreamQuery(s2), hipErrorNotReady);
        uint8_t *out = malloc(N);
        HIP_OK(hipMemcpyAsync(out, x, N, hipMemcpyDeviceToHost, s1));
        HIP_OK(hipStreamSynchronize(s1));
        CHECK_PATTERN(out, N, 25);
        release(w2);
        pthread_join(t.t, NULL);
        HIP_OK(hipStreamSynchronize(s2));
        HIP_OK(hipMemcpy(out, z, N, hipMemcpyDeviceToHost));
        CHECK_PATTERN(out, N, 27);
        free(out);
        HIP_OK(hipStreamDestroy(s1));
        HIP_OK(hipStreamDestroy(s2));
        HIP_OK(hipFree(x));
        HIP_OK(hipFree(y));
        HIP_OK(hipFree(z));
        if (!freeing)
            HIP_OK(hipFree(victim));
        HIP_OK(hipHostFree(h));
        HIP_OK(hipHostFree(w1));
        HIP_OK(hipHostFree(w2));
    }
}
