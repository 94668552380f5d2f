/*
 * Peer to peer: hipDeviceCanAccessPeer, hipDevice/CtxEnable/DisablePeerAccess,
 * hipDeviceGetP2PAttribute, hipMemcpyPeer(Async), cross-device hipMemcpy(Async)
 * through unified addressing, hipMemGetAddressRange.
 *
 * Expected codes: hip-tests catch/unit/device/hipDeviceCanAccessPeer.cc,
 * hipDeviceEnableDisablePeerAccess.cc, hipDeviceGetP2PAttribute.cc,
 * catch/unit/memory/hipMemcpyPeer.cc, hipMemcpyPeerAsync.cc,
 * hipMemGetAddressRange.cc (reference: hip-tests-abi-issues.md A.4, A.7).
 *
 * Runs on every topology of `make test`: xGMI hives of 1, 2, 4 and 8 GPUs, PCIe
 * with P2P (p2p_links) and PCIe without (small BAR). HIPCONF_EXPECT_P2P=0|1
 * says whether the GPUs of the run can access each other. All test names start
 * with "peer_" (the Makefile's extra topologies run FILTER=peer_).
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>

static int ndev(void)
{
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    return n;
}

/* -1 when the run does not say. */
static int expect_p2p(void)
{
    const char *e = getenv("HIPCONF_EXPECT_P2P");
    return e && *e ? atoi(e) : -1;
}

static int can_access(int a, int b)
{
    int c = -1;
    HIP_OK(hipDeviceCanAccessPeer(&c, a, b));
    return c;
}

/* Device buffer of n bytes on device dev with pattern seed; leaves dev current. */
static void *dev_pattern_on(int dev, size_t n, unsigned seed)
{
    HIP_OK(hipSetDevice(dev));
    return dev_pattern(n, seed);
}

static void *dev_bytes_on(int dev, size_t n, uint8_t v)
{
    void *d = NULL;
    HIP_OK(hipSetDevice(dev));
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemset(d, v, n));
    return d;
}

/* ---------------------------------------------------------------- access */

TEST(peer_can_access_all_pairs)
{
    int n = ndev(), want = expect_p2p();
    for (int a = 0; a < n; a++) {
        CHECKF(can_access(a, a) == 0, "device %d can access itself as a peer", a);
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            int c = can_access(a, b), attr = -1;
            CHECKF(c == 0 || c == 1, "canAccessPeer(%d, %d) = %d", a, b, c);
            if (want >= 0)
                CHECKF(c == want, "canAccessPeer(%d, %d) = %d, topology says %d", a, b, c, want);
            CHECKF(c == can_access(b, a), "access %d->%d differs from %d->%d", a, b, b, a);
            HIP_OK(hipDeviceGetP2PAttribute(&attr, hipDevP2PAttrAccessSupported, a, b));
            CHECKF(attr == c, "P2P attribute AccessSupported(%d, %d) = %d, canAccessPeer %d", a, b, attr, c);
        }
    }
}

TEST(peer_can_access_negative)
{
    int n = ndev(), c = 7;
    CHECK_HIP(hipDeviceCanAccessPeer(NULL, 0, n > 1 ? 1 : 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceCanAccessPeer(&c, -1, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceCanAccessPeer(&c, n, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceCanAccessPeer(&c, 0, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceCanAccessPeer(&c, 0, n), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceCanAccessPeer(&c, 0, 0), hipSuccess);
    CHECK(c == 0);
}

TEST(peer_enable_disable_every_pair)
{
    int n = ndev();
    for (int a = 0; a < n; a++) {
        HIP_OK(hipSetDevice(a));
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            if (can_access(a, b)) {
                CHECK_HIP(hipDeviceEnablePeerAccess(b, 0), hipSuccess);
                CHECK_HIP(hipDeviceDisablePeerAccess(b), hipSuccess);
            } else {
                CHECK_HIP(hipDeviceEnablePeerAccess(b, 0), hipErrorInvalidDevice);
                CHECK_HIP(hipDeviceDisablePeerAccess(b), hipErrorInvalidDevice);
            }
        }
    }
}

TEST(peer_enable_negative)
{
    int n = ndev();
    CHECK_HIP(hipDeviceEnablePeerAccess(-1, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceEnablePeerAccess(n, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceEnablePeerAccess(0, (unsigned)-1), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceEnablePeerAccess(0, 0), hipErrorInvalidDevice);
    REQUIRE_GPUS(2);
    if (!can_access(0, 1))
        SKIP("GPUs 0 and 1 cannot access each other");
    CHECK_HIP(hipDeviceEnablePeerAccess(1, 1), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceEnablePeerAccess(1, 0), hipSuccess);
    CHECK_HIP(hipDeviceEnablePeerAccess(1, 0), hipErrorPeerAccessAlreadyEnabled);
    CHECK_HIP(hipGetLastError(), hipErrorPeerAccessAlreadyEnabled);
    /* access is one-directional: 1 -> 0 is still off */
    HIP_OK(hipSetDevice(1));
    CHECK_HIP(hipDeviceDisablePeerAccess(0), hipErrorPeerAccessNotEnabled);
    CHECK_HIP(hipDeviceEnablePeerAccess(0, 0), hipSuccess);
}

TEST(peer_disable_negative)
{
    int n = ndev();
    CHECK_HIP(hipDeviceDisablePeerAccess(-1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceDisablePeerAccess(n), hipErrorInvalidDevice);
    REQUIRE_GPUS(2);
    if (!can_access(0, 1))
        SKIP("GPUs 0 and 1 cannot access each other");
    CHECK_HIP(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
    HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    CHECK_HIP(hipDeviceDisablePeerAccess(1), hipSuccess);
    CHECK_HIP(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
}

TEST(peer_ctx_enable_disable)
{
    hipCtx_t cur = NULL, peer = NULL;
    CHECK_HIP(hipCtxEnablePeerAccess(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipCtxDisablePeerAccess(NULL), hipErrorInvalidValue);
    HIP_OK(hipCtxGetCurrent(&cur));
    REQUIRE(cur != NULL);
    CHECK_HIP(hipCtxEnablePeerAccess(cur, 0), hipErrorInvalidDevice);
    REQUIRE_GPUS(2);
    HIP_OK(hipDevicePrimaryCtxRetain(&peer, 1));
    REQUIRE(peer != NULL && peer != cur);
    if (!can_access(0, 1)) {
        CHECK_HIP(hipCtxEnablePeerAccess(peer, 0), hipErrorInvalidDevice);
        return;
    }
    CHECK_HIP(hipCtxEnablePeerAccess(peer, 1), hipErrorInvalidValue);
    CHECK_HIP(hipCtxDisablePeerAccess(peer), hipErrorPeerAccessNotEnabled);
    CHECK_HIP(hipCtxEnablePeerAccess(peer, 0), hipSuccess);
    CHECK_HIP(hipCtxEnablePeerAccess(peer, 0), hipErrorPeerAccessAlreadyEnabled);
    /* the context and the device calls share one state */
    CHECK_HIP(hipDeviceEnablePeerAccess(1, 0), hipErrorPeerAccessAlreadyEnabled);
    CHECK_HIP(hipCtxDisablePeerAccess(peer), hipSuccess);
    CHECK_HIP(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
}

TEST(peer_p2p_attribute)
{
    int n = ndev(), v = -1;
    CHECK_HIP(hipDeviceGetP2PAttribute(NULL, hipDevP2PAttrAccessSupported, 0, n > 1 ? 1 : 0),
              hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, -1, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, n), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, n, 0), hipErrorInvalidDevice);
    REQUIRE_GPUS(2);
    CHECK_HIP(hipDeviceGetP2PAttribute(&v, (hipDeviceP2PAttr)-1, 0, 1), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetP2PAttribute(&v, (hipDeviceP2PAttr)4, 0, 1), hipErrorInvalidValue);
    int access = can_access(0, 1), rank = -1, atomics = -1, arrays = -1;
    HIP_OK(hipDeviceGetP2PAttribute(&rank, hipDevP2PAttrPerformanceRank, 0, 1));
    HIP_OK(hipDeviceGetP2PAttribute(&atomics, hipDevP2PAttrNativeAtomicSupported, 0, 1));
    HIP_OK(hipDeviceGetP2PAttribute(&arrays, hipDevP2PAttrHipArrayAccessSupported, 0, 1));
    CHECK(rank >= 0);
    CHECK(atomics == 0 || (atomics == 1 && access));
    CHECK(arrays == 0);
}

/* ---------------------------------------------------------------- copies */

/*
 * n bytes (at offsets soff/doff) from device s to device d with `how`:
 * 0 hipMemcpyPeer, 1 hipMemcpyPeerAsync on a created stream of the current
 * device, 2 hipMemcpy DeviceToDevice, 3 hipMemcpy Default, 4 hipMemcpyAsync
 * Default on hipStreamPerThread. Checks the bytes and the guards around them.
 */
static void peer_copy_check(int s, int d, size_t n, size_t soff, size_t doff, int how)
{
    size_t guard = 256;
    unsigned seed = (unsigned)(n * 13 + s * 7 + d * 3 + how);
    uint8_t *src = dev_pattern_on(s, n + soff, seed);
    uint8_t *dst = dev_bytes_on(d, n + doff + guard, 0xc3);
    hipStream_t st = NULL;
    HIP_OK(hipSetDevice(s));
    switch (how) {
    case 0:
        HIP_OK(hipMemcpyPeer(dst + doff, d, src + soff, s, n));
        HIP_OK(hipDeviceSynchronize());
        break;
    case 1:
        HIP_OK(hipStreamCreate(&st));
        HIP_OK(hipMemcpyPeerAsync(dst + doff, d, src + soff, s, n, st));
        HIP_OK(hipStreamSynchronize(st));
        HIP_OK(hipStreamDestroy(st));
        break;
    case 2:
        HIP_OK(hipMemcpy(dst + doff, src + soff, n, hipMemcpyDeviceToDevice));
        break;
    case 3:
        HIP_OK(hipMemcpy(dst + doff, src + soff, n, hipMemcpyDefault));
        break;
    default:
        HIP_OK(hipMemcpyAsync(dst + doff, src + soff, n, hipMemcpyDefault, hipStreamPerThread));
        HIP_OK(hipStreamSynchronize(hipStreamPerThread));
        break;
    }
    uint8_t *h = xmalloc(n + doff + guard);
    HIP_OK(hipMemcpy(h, dst, n + doff + guard, hipMemcpyDeviceToHost));
    CHECK_BYTES(h, doff, 0xc3);
    /* the pattern was written at src offset 0; soff shifts it */
    uint8_t *want = xmalloc(n + soff);
    pat_fill(want, n + soff, seed);
    CHECKF(memcmp(h + doff, want + soff, n) == 0, "%d->%d n=%zu how=%d: data differs", s, d, n, how);
    CHECK_BYTES(h + doff + n, guard, 0xc3);
    free(want);
    free(h);
    HIP_OK(hipFree(src));
    HIP_OK(hipFree(dst));
}

static void enable_both(int a, int b)
{
    HIP_OK(hipSetDevice(a));
    HIP_OK(hipDeviceEnablePeerAccess(b, 0));
    HIP_OK(hipSetDevice(b));
    HIP_OK(hipDeviceEnablePeerAccess(a, 0));
}

/* Every ordered pair, 2/4/8 KiB (hip-tests' sizes), peer access enabled where possible. */
TEST(peer_memcpy_all_pairs_enabled)
{
    REQUIRE_GPUS(2);
    int n = ndev();
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (can_access(a, b))
                enable_both(a, b);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b)
                for (size_t sz = 2 * KiB; sz <= 8 * KiB; sz *= 2)
                    peer_copy_check(a, b, sz, 0, 0, (int)(sz / KiB) % 5);
}

/* Same without peer access (staging through the host), unaligned sizes and offsets. */
TEST(peer_memcpy_all_pairs_not_enabled)
{
    REQUIRE_GPUS(2);
    int n = ndev();
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b)
                peer_copy_check(a, b, 4097 + (size_t)a * 3, (size_t)b, 5, (a + b) % 5);
}

/* Large copies: split over packets, engines (enabled) or staging chunks (not enabled). */
TEST(peer_memcpy_large)
{
    REQUIRE_GPUS(2);
    int n = ndev();
    for (int how = 0; how < 5; how++)
        peer_copy_check(0, n - 1, 17 * MiB + 4096 + 3, 1, 7, how);
    if (!can_access(0, n - 1))
        return;
    enable_both(0, n - 1);
    for (int how = 0; how < 5; how++)
        peer_copy_check(n - 1, 0, 17 * MiB + 4096 + 3, 3, 1, how);
    peer_copy_check(0, n - 1, 32 * MiB, 0, 0, 0);
}

/* Allocations made before and after hipDeviceEnablePeerAccess are both reachable. */
TEST(peer_enable_maps_existing_and_later_allocations)
{
    REQUIRE_GPUS(2);
    if (!can_access(0, 1))
        SKIP("GPUs 0 and 1 cannot access each other");
    size_t n = 1 * MiB + 17;
    void *before = dev_pattern_on(1, n, 11);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    void *later = dev_pattern_on(1, n, 12);
    void *d0 = dev_bytes_on(0, n, 0);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpy(d0, before, n, hipMemcpyDefault));
    check_dev_pattern(d0, n, 11);
    HIP_OK(hipMemcpyPeer(d0, 0, later, 1, n));
    HIP_OK(hipDeviceSynchronize());
    check_dev_pattern(d0, n, 12);
    /* and into the peer */
    void *src = dev_pattern_on(0, n, 13);
    HIP_OK(hipMemcpy(later, src, n, hipMemcpyDeviceToDevice));
    check_dev_pattern(later, n, 13);
    /* freeing peer-mapped memory works, and so does disabling afterwards */
    HIP_OK(hipFree(before));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceDisablePeerAccess(1));
    HIP_OK(hipMemcpy(later, d0, n, hipMemcpyDefault));
    check_dev_pattern(later, n, 12);
    HIP_OK(hipFree(later));
    HIP_OK(hipFree(d0));
    HIP_OK(hipFree(src));
}

/* After disable, copies still work (host staging) and re-enable works. */
TEST(peer_disable_then_copy)
{
    REQUIRE_GPUS(2);
    if (!can_access(0, 1))
        SKIP("GPUs 0 and 1 cannot access each other");
    HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    peer_copy_check(1, 0, 3 * MiB + 1, 0, 0, 0);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceDisablePeerAccess(1));
    peer_copy_check(1, 0, 3 * MiB + 1, 0, 0, 1);
    peer_copy_check(0, 1, 3 * MiB + 1, 0, 0, 3);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    peer_copy_check(0, 1, 3 * MiB + 1, 0, 0, 2);
}

/*
 * hipMemcpyPeer returns once the copy is done, as clr's does (isAsync = false):
 * device 1 reads the bytes right after it with no synchronization of its own
 * (a read-back that checks the bytes); and it runs after the work queued
 * before it on both devices (fills of the source and the destination), here
 * kept busy so that the fills are still queued when it is called.
 */
static void ordering_behaviour(int enable)
{
    REQUIRE_GPUS(2);
    if (enable && !can_access(0, 1))
        SKIP("GPUs 0 and 1 cannot access each other");
    size_t n = 8 * MiB;
    void *src = dev_bytes_on(0, n, 0);
    void *dst = dev_bytes_on(1, n, 0);
    if (enable) {
        HIP_OK(hipSetDevice(0));
        HIP_OK(hipDeviceEnablePeerAccess(1, 0));
    }
    HIP_OK(hipSetDevice(1));
    struct busy b1 = busy_begin();
    HIP_OK(hipSetDevice(0));
    struct busy b0 = busy_begin();
    for (int attempt = 0; attempt < 4; attempt++) {
        uint8_t v = (uint8_t)(0x40 + attempt);
        HIP_OK(hipSetDevice(1));
        REQUIRE_BUSY(&b1, NULL);
        HIP_OK(hipMemsetAsync(dst, 0x11, n, NULL));
        HIP_OK(hipSetDevice(0));
        REQUIRE_BUSY(&b0, NULL);
        HIP_OK(hipMemsetAsync(src, v, n, NULL));
        HIP_OK(hipMemcpyPeer(dst, 1, src, 0, n));
        HIP_OK(hipSetDevice(1));
        check_dev_bytes(dst, n, v);
    }
    busy_end(&b1);
    HIP_OK(hipSetDevice(0));
    busy_end(&b0);
}

TEST(peer_memcpy_after_queued_work_enabled)
{
    ordering_behaviour(1);
}

TEST(peer_memcpy_after_queued_work_staged)
{
    ordering_behaviour(0);
}

TEST(peer_memcpy_zero_size)
{
    REQUIRE_GPUS(2);
    size_t n = 64 * KiB;
    void *src = dev_pattern_on(0, n, 5);
    void *dst = dev_bytes_on(1, n, 0x77);
    HIP_OK(hipSetDevice(0));
    CHECK_HIP(hipMemcpyPeer(dst, 1, src, 0, 0), hipSuccess);
    CHECK_HIP(hipMemcpyPeerAsync(dst, 1, src, 0, 0, NULL), hipSuccess);
    HIP_OK(hipDeviceSynchronize());
    check_dev_bytes(dst, n, 0x77);
}

TEST(peer_memcpy_negative)
{
    int n = ndev();
    size_t sz = 64 * KiB;
    int p = n > 1 ? 1 : 0;
    void *src = dev_pattern_on(0, sz, 5);
    void *dst = dev_bytes_on(p, sz, 0x77);
    HIP_OK(hipSetDevice(0));
    CHECK_HIP(hipMemcpyPeer(NULL, p, src, 0, sz), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyPeer(dst, p, NULL, 0, sz), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyPeer(dst, p, src, 0, sz + 1), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyPeer(dst, n, src, 0, sz), hipErrorInvalidDevice);
    CHECK_HIP(hipMemcpyPeer(dst, p, src, n, sz), hipErrorInvalidDevice);
    CHECK_HIP(hipMemcpyPeer(dst, -1, src, 0, sz), hipErrorInvalidDevice);
    CHECK_HIP(hipMemcpyPeerAsync(NULL, p, src, 0, sz, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyPeerAsync(dst, p, NULL, 0, sz, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyPeerAsync(dst, p, src, 0, sz + 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipMemcpyPeerAsync(dst, n, src, 0, sz, NULL), hipErrorInvalidDevice);
    CHECK_HIP(hipMemcpyPeerAsync(dst, p, src, n, sz, NULL), hipErrorInvalidDevice);
    hipStream_t s = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipMemcpyPeerAsync(dst, p, src, 0, sz, s), hipErrorContextIsDestroyed);
    HIP_OK(hipDeviceSynchronize());
    check_dev_bytes(dst, sz, 0x77);
}

/* Streams: created on the source, on the destination, per-thread; order on the stream. */
TEST(peer_memcpy_async_streams)
{
    REQUIRE_GPUS(2);
    size_t n = 2 * MiB + 3;
    void *a = dev_pattern_on(0, n, 21);
    void *b = dev_bytes_on(1, n, 0);
    void *c = dev_bytes_on(0, n, 0);
    hipStream_t s0 = NULL, s1 = NULL;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipStreamCreate(&s0));
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s1));
    /* a -> b on device 0's stream, then b -> c on the same stream: ordered */
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpyPeerAsync(b, 1, a, 0, n, s0));
    HIP_OK(hipMemcpyPeerAsync(c, 0, b, 1, n, s0));
    HIP_OK(hipStreamSynchronize(s0));
    check_dev_pattern(c, n, 21);
    /* a stream of the destination device, current device 0 */
    HIP_OK(hipMemset(c, 0, n));
    HIP_OK(hipMemcpyPeerAsync(c, 0, b, 1, n, s1));
    HIP_OK(hipStreamSynchronize(s1));
    check_dev_pattern(c, n, 21);
    /* hipStreamPerThread */
    HIP_OK(hipMemset(c, 0, n));
    HIP_OK(hipMemcpyPeerAsync(c, 0, b, 1, n, hipStreamPerThread));
    HIP_OK(hipStreamSynchronize(hipStreamPerThread));
    check_dev_pattern(c, n, 21);
    HIP_OK(hipStreamDestroy(s0));
    HIP_OK(hipStreamDestroy(s1));
}

/* Copies to and from pinned host memory with another current device. */
TEST(peer_memcpy_pinned_other_device)
{
    REQUIRE_GPUS(2);
    size_t n = 1 * MiB + 5;
    void *d1 = dev_pattern_on(1, n, 31);
    uint8_t *h = NULL;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipHostMalloc((void **)&h, n, 0));
    HIP_OK(hipMemcpy(h, d1, n, hipMemcpyDefault));
    CHECK_PATTERN(h, n, 31);
    HIP_OK(hipHostFree(h));
}

struct thread_arg {
    int s, d;
    int ok;
};

static void *copy_thread(void *p)
{
    struct thread_arg *t = p;
    size_t n = 3 * MiB + 11;
    unsigned seed = (unsigned)(t->s * 10 + t->d);
    void *src = NULL, *dst = NULL;
    uint8_t *h = malloc(n), *w = malloc(n);
    t->ok = h && w && hipSetDevice(t->s) == hipSuccess && hipMalloc(&src, n) == hipSuccess &&
            hipSetDevice(t->d) == hipSuccess && hipMalloc(&dst, n) == hipSuccess;
    if (t->ok) {
        pat_fill(w, n, seed);
        t->ok = hipMemcpy(src, w, n, hipMemcpyHostToDevice) == hipSuccess;
        for (int i = 0; i < 4 && t->ok; i++)
            t->ok = hipMemcpyPeerAsync(dst, t->d, src, t->s, n, hipStreamPerThread) == hipSuccess &&
                    hipStreamSynchronize(hipStreamPerThread) == hipSuccess &&
                    hipMemcpy(h, dst, n, hipMemcpyDeviceToHost) == hipSuccess && memcmp(h, w, n) == 0;
    }
    hipFree(src);
    hipFree(dst);
    free(h);
    free(w);
    return NULL;
}

/* Concurrent peer copies from several threads, both directions. */
TEST(peer_memcpy_threads)
{
    REQUIRE_GPUS(2);
    int n = ndev();
    if (can_access(0, 1))
        enable_both(0, 1);
    struct thread_arg args[4] = {{0, 1, 0}, {1, 0, 0}, {0, n - 1, 0}, {n - 1, 0, 0}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        REQUIRE(pthread_create(&th[i], NULL, copy_thread, &args[i]) == 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECKF(args[i].ok, "thread %d (%d -> %d) failed", i, args[i].s, args[i].d);
    }
}

/* ---------------------------------------------------------------- address range */

TEST(peer_mem_get_address_range)
{
    void *base = NULL;
    size_t size = 0;
    uint8_t *d = NULL, *h = NULL;
    HIP_OK(hipMalloc((void **)&d, 2 * KiB));
    HIP_OK(hipHostMalloc((void **)&h, 3 * KiB + 1, 0));
    for (size_t off = 0; off <= 80; off += 8) {
        HIP_OK(hipMemGetAddressRange(&base, &size, d + off));
        CHECK(base == d && size == 2 * KiB);
        HIP_OK(hipMemGetAddressRange(&base, &size, h + off));
        CHECK(base == h && size == 3 * KiB + 1);
    }
    HIP_OK(hipMemGetAddressRange(&base, &size, d + 2 * KiB - 1));
    CHECK(base == d);
    CHECK_HIP(hipMemGetAddressRange(&base, &size, NULL), hipErrorNotFound);
    CHECK_HIP(hipMemGetAddressRange(&base, &size, d + 4096 * sizeof(int)), hipErrorNotFound);
    int local = 0;
    CHECK_HIP(hipMemGetAddressRange(&base, &size, &local), hipErrorNotFound);
    /* memory of another device, through unified addressing */
    if (ndev() > 1) {
        uint8_t *d1 = NULL;
        HIP_OK(hipSetDevice(1));
        HIP_OK(hipMalloc((void **)&d1, 5 * MiB));
        HIP_OK(hipSetDevice(0));
        HIP_OK(hipMemGetAddressRange(&base, &size, d1 + 3 * MiB));
        CHECK(base == d1 && size == 5 * MiB);
        HIP_OK(hipFree(d1));
        CHECK_HIP(hipMemGetAddressRange(&base, &size, d1), hipErrorNotFound);
    }
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
    CHECK_HIP(hipMemGetAddressRange(&base, &size, d), hipErrorNotFound);
}

/* hipDeviceReset ends the device's peer access (both directions). */
TEST(peer_device_reset_ends_access)
{
    REQUIRE_GPUS(2);
    if (!can_access(0, 1))
        SKIP("GPUs 0 and 1 cannot access each other");
    enable_both(0, 1);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceReset());
    CHECK_HIP(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
    HIP_OK(hipSetDevice(1));
    CHECK_HIP(hipDeviceDisablePeerAccess(0), hipErrorPeerAccessNotEnabled);
    HIP_OK(hipSetDevice(0));
    CHECK_HIP(hipDeviceEnablePeerAccess(1, 0), hipSuccess);
    peer_copy_check(1, 0, 1 * MiB + 3, 0, 0, 0);
}

/* hipMemcpyPeer is asynchronous to the host (clr's ihipMemcpy with isHostAsync; CUDA), yet later
 * work on the destination device, even on a non-blocking stream that knows nothing of device 0's
 * null stream, follows it and reads its bytes (CUDA: "serialized with respect to all pending and
 * future asynchronous work to the current device, srcDevice, and dstDevice"; the 2-GPU fuzzer
 * failure: stale bytes read back after a peer copy). */
TEST(peer_memcpy_visible_to_later_work_on_the_destination_device)
{
    REQUIRE_GPUS(2);
    const size_t n = 32 << 20;
    HIP_OK(hipSetDevice(0));
    void *src = dev_pattern(n, 91);
    HIP_OK(hipSetDevice(1));
    void *dst = NULL;
    HIP_OK(hipMalloc(&dst, n));
    HIP_OK(hipMemset(dst, 0, n));
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    uint8_t *h = xmalloc(n);
    for (int round = 0; round < 4; round++) {
        HIP_OK(hipSetDevice(0));
        HIP_OK(hipMemcpyPeer(dst, 1, src, 0, n));
        HIP_OK(hipSetDevice(1));
        memset(h, 0, n);
        HIP_OK(hipMemcpyAsync(h, dst, n, hipMemcpyDeviceToHost, s));
        HIP_OK(hipStreamSynchronize(s));
        CHECK_PATTERN(h, n, 91);
        HIP_OK(hipMemset(dst, 0, n));
    }
    free(h);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(dst));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipFree(src));
}
