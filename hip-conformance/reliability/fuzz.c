/*
 * Seeded, reproducible fuzzer of the C ABI: random sequences of memory, copy, fill, stream,
 * event, pointer-query, IPC and VMM calls with live, stale, interior, null and garbage pointers
 * (garbage only where the runtime does not read or write through it: see foreign_ptr),
 * sizes 0, 1, misaligned, past the end and huge, random device ordinals and stale stream and
 * event handles. Every device allocation has a host shadow copy: each call that succeeds updates
 * it, each call that fails must leave the memory as it was, and reads are compared with it.
 *
 *   kfdsim run -- fuzz [CALLS [SEED]]        (defaults: 20000 calls, seed 1)
 *
 * CALLS counts API calls (every fuzzed call goes through the C() macro), not operations: an
 * operation makes 1 to 8 calls, and operations run until CALLS calls have been made.
 *
 * Checks: no crash or hang (the caller's timeout); a call that must fail (a stale or garbage
 * pointer or handle, a range past the end of an allocation, a huge size) does not return
 * hipSuccess; every byte read back equals the shadow; at the end, once everything is freed,
 * the sim's accounting (kfdsim_stat) shows the VRAM bytes, GPU mappings and dma-buf fds of
 * the start. Prints "fuzz: N API calls in M operations, seed S, ..." and "RESULT: PASS|FAIL" (exit 0|1); the first
 * few failures name the call number, so `fuzz N S` with a smaller N reproduces them.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include "../shared.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXA 24
#define MAXS 4
#define MAXE 4
#define MAXSTALE 64

struct alloc {
    uint8_t *p;
    size_t size;
    uint8_t *shadow;
    int dev;
};

static struct alloc live[MAXA];
static int nlive;
static void *stale_ptr[MAXSTALE];
static int nstale;
static hipStream_t streams[MAXS], stale_stream;
static hipEvent_t events[MAXE], stale_event;
static int ndev, cur_dev;
static int st_dev[MAXS], ev_dev[MAXE];
static long calls, ops, failures_expected, bad;

/* Every fuzzed API call goes through C(): `C(hipMalloc)(&p, n)` counts one call, then makes it. */
#define C(f) (calls++, f)
static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void fail(long call, const char *what)
{
    bad++;
    if (bad <= 30)
        printf("FAIL at call %ld: %s\n", call, what);
}

/* A call that must not succeed. */
static void must_fail(hipError_t e, const char *what)
{
    failures_expected++;
    if (e == hipSuccess)
        fail(calls, what);
}

static size_t rand_size(void)
{
    switch (below(8)) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return 1 + below(4096);
    case 3:
        return 4096 * (1 + below(64)) + below(3);
    case 4:
        return (size_t)(1 + below(4)) << 20;
    default:
        return 1 + below(256 << 10);
    }
}

/* A pointer the runtime does not own: a stale device pointer (freed: inside the runtime's GPU
 * aperture), or, unless `deref`, garbage or a host stack/heap address. A call that would read
 * or write through the pointer gets only stale ones: like CLR (and memcpy), the runtime takes
 * any other address for pageable host memory, which is the caller's to get right. */
static void *foreign_ptr(int deref)
{
    static int on_heap;
    if (deref || below(2)) {
        if (!nstale)
            return NULL;
        /* A freed range may have been handed out again (VA is reused): only a stale pointer
         * outside every live allocation is foreign. */
        uint8_t *p = stale_ptr[below((size_t)nstale)];
        for (int i = 0; i < nlive; i++)
            if (p >= live[i].p && p < live[i].p + live[i].size)
                return NULL;
        return p;
    }
    switch (below(3)) {
    case 0:
        return (void *)(uintptr_t)(rnd() | 1);
    case 1:
        return &on_heap;
    default:
        return (void *)(uintptr_t)0xdead0000u;
    }
}

static void remember_stale(void *p)
{
    if (nstale < MAXSTALE)
        stale_ptr[nstale++] = p;
    else
        stale_ptr[below(MAXSTALE)] = p;
}

static void op_malloc(void)
{
    if (nlive == MAXA)
        return;
    size_t size = rand_size();
    int dev = (int)below((size_t)ndev);
    void *p = NULL;
    if (C(hipSetDevice)(dev) != hipSuccess)
        fail(calls, "hipSetDevice valid");
    cur_dev = dev;
    hipError_t e = C(hipMalloc)(&p, size);
    if (size == 0) {
        if (e != hipSuccess || p != NULL)
            fail(calls, "C(hipMalloc)(0) is success with NULL");
        return;
    }
    if (e != hipSuccess) {
        fail(calls, "hipMalloc of a small size failed");
        return;
    }
    struct alloc *a = &live[nlive++];
    a->p = p;
    a->size = size;
    a->dev = dev;
    a->shadow = malloc(size);
    uint8_t v = (uint8_t)rnd();
    memset(a->shadow, v, size);
    if (C(hipMemset)(p, v, size) != hipSuccess)
        fail(calls, "hipMemset of a fresh allocation");
}

static void op_malloc_bad(void)
{
    void *p = NULL;
    must_fail(C(hipMalloc)(&p, (size_t)1 << (50 + below(14))), "hipMalloc of a huge size");
    must_fail(C(hipMalloc)(NULL, 4096), "C(hipMalloc)(NULL)");
}

static void op_free(void)
{
    if (nlive && below(4)) {
        int i = (int)below((size_t)nlive);
        if (C(hipFree)(live[i].p) != hipSuccess)
            fail(calls, "hipFree of a live allocation");
        remember_stale(live[i].p);
        free(live[i].shadow);
        live[i] = live[--nlive];
        return;
    }
    void *p = foreign_ptr(0);
    if (p)
        must_fail(C(hipFree)(p), "hipFree of a pointer the runtime does not own");
}

static struct alloc *pick(void) { return nlive ? &live[below((size_t)nlive)] : NULL; }

/* A random in-bounds range of a: offset and length (length may be 0). */
static void range(struct alloc *a, size_t *off, size_t *len)
{
    *off = below(a->size);
    *len = below(a->size - *off + 1);
}

static hipStream_t any_stream(void) { return below(3) ? streams[below(MAXS)] : NULL; }

static void op_write(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    size_t off, len;
    range(a, &off, &len);
    uint8_t *src = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        src[i] = (uint8_t)rnd();
    hipError_t e;
    if (below(2)) {
        hipStream_t s = any_stream();
        e = C(hipMemcpyAsync)(a->p + off, src, len, hipMemcpyHostToDevice, s);
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
    } else {
        e = C(hipMemcpy)(a->p + off, src, len, below(2) ? hipMemcpyHostToDevice : hipMemcpyDefault);
    }
    if (e != hipSuccess)
        fail(calls, "in-bounds host-to-device copy");
    else
        memcpy(a->shadow + off, src, len);
    /* Past the end: must fail and change nothing. */
    size_t over = 1 + below(8192);
    if (a->size + over <= (1 << 23)) {
        uint8_t *big = calloc(1, a->size + over);
        must_fail(C(hipMemcpy)(a->p, big, a->size + over, hipMemcpyHostToDevice), "copy past the end");
        free(big);
    }
    free(src);
}

static void op_read(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    size_t off, len;
    range(a, &off, &len);
    uint8_t *dst = malloc(len + 1);
    if (C(hipMemcpy)(dst, a->p + off, len, hipMemcpyDeviceToHost) != hipSuccess)
        fail(calls, "in-bounds device-to-host copy");
    else if (memcmp(dst, a->shadow + off, len) != 0)
        fail(calls, "data read back differs from the shadow");
    free(dst);
}

static void op_d2d(void)
{
    struct alloc *a = pick(), *b = pick();
    if (!a || !b || a == b)
        return;
    size_t len = below((a->size < b->size ? a->size : b->size) + 1);
    size_t so = below(a->size - len + 1), doff = below(b->size - len + 1);
    hipError_t e;
    if (a->dev != b->dev && below(2))
        e = C(hipMemcpyPeer)(b->p + doff, b->dev, a->p + so, a->dev, len);
    else
        e = C(hipMemcpy)(b->p + doff, a->p + so, len, hipMemcpyDeviceToDevice);
    if (e != hipSuccess)
        fail(calls, "in-bounds device-to-device copy");
    else
        memmove(b->shadow + doff, a->shadow + so, len);
}

static void op_memset(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    size_t off, len;
    range(a, &off, &len);
    uint8_t v = (uint8_t)rnd();
    hipError_t e;
    if (below(2)) {
        hipStream_t s = any_stream();
        e = C(hipMemsetAsync)(a->p + off, v, len, s);
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
    } else {
        e = C(hipMemset)(a->p + off, v, len);
    }
    if (e != hipSuccess)
        fail(calls, "in-bounds hipMemset");
    else
        memset(a->shadow + off, v, len);
    must_fail(C(hipMemset)(a->p + a->size - 1, v, 2 + below(4096)), "hipMemset past the end");
}

static void op_foreign(void)
{
    uint8_t buf[64];
    int op = (int)below(5);
    void *p = foreign_ptr(op <= 1);
    if (!p)
        return;
    switch (op) {
    case 0:
        must_fail(C(hipMemcpy)(buf, p, sizeof buf, hipMemcpyDeviceToHost), "copy from a foreign pointer");
        break;
    case 1:
        must_fail(C(hipMemset)(p, 0, sizeof buf), "hipMemset of a foreign pointer");
        break;
    case 2: {
        hipPointerAttribute_t at;
        C(hipPointerGetAttributes)(&at, p); /* any answer but a crash */
        must_fail(C(hipPointerGetAttributes)(NULL, p), "C(hipPointerGetAttributes)(NULL)");
        break;
    }
    case 3: {
        hipDeviceptr_t base;
        size_t size;
        if (C(hipMemGetAddressRange)(&base, &size, (hipDeviceptr_t)p) == hipSuccess)
            fail(calls, "hipMemGetAddressRange of a foreign pointer");
        failures_expected++;
        break;
    }
    default: {
        hipIpcMemHandle_t h;
        must_fail(C(hipIpcGetMemHandle)(&h, p), "hipIpcGetMemHandle of a foreign pointer");
        break;
    }
    }
}

static void op_query(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    size_t off = below(a->size);
    hipDeviceptr_t base = NULL;
    size_t size = 0;
    if (C(hipMemGetAddressRange)(&base, &size, (hipDeviceptr_t)(a->p + off)) != hipSuccess || base != a->p ||
        size < a->size)
        fail(calls, "hipMemGetAddressRange of an interior pointer");
    hipPointerAttribute_t at;
    if (C(hipPointerGetAttributes)(&at, a->p + off) != hipSuccess || at.device != a->dev)
        fail(calls, "hipPointerGetAttributes of an interior pointer");
    if (off)
        must_fail(C(hipFree)(a->p + off), "hipFree of an interior pointer");
}

static void op_stream_event(void)
{
    int i = (int)below(MAXS), j = (int)below(MAXE);
    switch (below(6)) {
    case 0:
        if (streams[i]) {
            if (C(hipStreamDestroy)(streams[i]) != hipSuccess)
                fail(calls, "hipStreamDestroy");
            stale_stream = streams[i];
            streams[i] = NULL;
        } else if (C(hipStreamCreate)(&streams[i]) != hipSuccess) {
            fail(calls, "hipStreamCreate");
        } else {
            st_dev[i] = cur_dev;
        }
        break;
    case 1:
        if (events[j]) {
            if (C(hipEventDestroy)(events[j]) != hipSuccess)
                fail(calls, "hipEventDestroy");
            stale_event = events[j];
            events[j] = NULL;
        } else if (C(hipEventCreate)(&events[j]) != hipSuccess) {
            fail(calls, "hipEventCreate");
        } else {
            ev_dev[j] = cur_dev;
        }
        break;
    case 2:
        if (events[j]) {
            /* An event is recorded on a stream of its own device (else hipErrorInvalidHandle). */
            hipStream_t st = streams[i] && st_dev[i] == ev_dev[j] ? streams[i] : NULL;
            if (!st && cur_dev != ev_dev[j]) {
                C(hipSetDevice)(ev_dev[j]);
                cur_dev = ev_dev[j];
            }
            hipError_t e1 = C(hipEventRecord)(events[j], st), e2 = C(hipEventSynchronize)(events[j]);
            if (e1 != hipSuccess || e2 != hipSuccess) {
                char what[128];
                snprintf(what, sizeof what, "hipEventRecord %s + hipEventSynchronize %s", hipGetErrorName(e1),
                         hipGetErrorName(e2));
                fail(calls, what);
            }
        }
        break;
    case 3:
        if (events[j] && C(hipStreamWaitEvent)(any_stream(), events[j], 0) != hipSuccess)
            fail(calls, "hipStreamWaitEvent");
        break;
    case 4:
        for (int k = 0; k < MAXS; k++)
            if (streams[k] == stale_stream) /* the handle's memory was reused */
                stale_stream = NULL;
        if (stale_stream) {
            must_fail(C(hipStreamSynchronize)(stale_stream), "hipStreamSynchronize of a destroyed stream");
            must_fail(C(hipStreamDestroy)(stale_stream), "hipStreamDestroy of a destroyed stream");
        }
        break;
    default:
        for (int k = 0; k < MAXE; k++)
            if (events[k] == stale_event)
                stale_event = NULL;
        if (stale_event) {
            must_fail(C(hipEventRecord)(stale_event, NULL), "hipEventRecord of a destroyed event");
            must_fail(C(hipEventDestroy)(stale_event), "hipEventDestroy of a destroyed event");
        }
        break;
    }
}

static void op_device(void)
{
    static const int bad_ids[] = {-1, -2, 8, 1000, 0x7fffffff};
    must_fail(C(hipSetDevice)(bad_ids[below(5)]), "hipSetDevice of a bad ordinal");
    if (ndev < 8)
        must_fail(C(hipSetDevice)(ndev), "C(hipSetDevice)(count)");
    cur_dev = (int)below((size_t)ndev);
    if (C(hipSetDevice)(cur_dev) != hipSuccess)
        fail(calls, "hipSetDevice of a valid ordinal");
}

static void op_vmm(void)
{
    hipMemAllocationProp prop = vmm_device_prop((int)below((size_t)ndev + 1)); /* ndev: a bad ordinal */
    size_t gran = 0;
    if (C(hipMemGetAllocationGranularity)(&gran, &prop, hipMemAllocationGranularityMinimum) != hipSuccess)
        gran = 4096;
    size_t size = below(4) ? gran * (1 + below(4)) : rand_size();
    hipMemGenericAllocationHandle_t h;
    hipError_t e = C(hipMemCreate)(&h, size, &prop, 0);
    int valid = prop.location.id < ndev && size && size % gran == 0;
    if (!valid) {
        must_fail(e, "hipMemCreate of a bad size or device");
        return;
    }
    if (e != hipSuccess) {
        fail(calls, "hipMemCreate");
        return;
    }
    void *va = NULL;
    if (C(hipMemAddressReserve)(&va, size, 0, NULL, 0) == hipSuccess) {
        if (C(hipMemMap)(va, size, 0, h, 0) == hipSuccess) {
            hipMemAccessDesc acc = {.location = {.type = hipMemLocationTypeDevice, .id = prop.location.id},
                                    .flags = hipMemAccessFlagsProtReadWrite};
            uint8_t v = (uint8_t)rnd(), back[256];
            if (C(hipMemSetAccess)(va, size, &acc, 1) != hipSuccess || C(hipMemset)(va, v, size) != hipSuccess ||
                C(hipMemcpy)(back, (uint8_t *)va + size - sizeof back, sizeof back, hipMemcpyDeviceToHost) != hipSuccess)
                fail(calls, "VMM map, access, fill, read");
            else
                for (size_t i = 0; i < sizeof back; i++)
                    if (back[i] != v) {
                        fail(calls, "VMM data differs");
                        break;
                    }
            if (C(hipMemUnmap)(va, size) != hipSuccess)
                fail(calls, "hipMemUnmap");
            must_fail(C(hipMemUnmap)(va, size), "hipMemUnmap twice");
        } else {
            fail(calls, "hipMemMap");
        }
        if (C(hipMemAddressFree)(va, size) != hipSuccess)
            fail(calls, "hipMemAddressFree");
    } else {
        fail(calls, "hipMemAddressReserve");
    }
    if (C(hipMemRelease)(h) != hipSuccess)
        fail(calls, "hipMemRelease");
    must_fail(C(hipMemRelease)(h), "hipMemRelease twice");
}

static uint64_t (*sim_stat)(const char *);

static uint64_t stat_or_0(const char *k) { return sim_stat ? sim_stat(k) : 0; }

static void usage_now(uint64_t *u)
{
    char k[32];
    for (int d = 0; d < 8; d++) {
        snprintf(k, sizeof k, "gpu%d.vram_bytes", d);
        u[d] = stat_or_0(k);
    }
    u[8] = stat_or_0("fds.dmabuf");
    u[9] = stat_or_0("gem_handles");
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    rng = seed * 0x9e3779b97f4a7c15ull + 0x1234567;
    sim_stat = (uint64_t(*)(const char *))dlsym(RTLD_DEFAULT, "kfdsim_stat");
    if (C(hipGetDeviceCount)(&ndev) != hipSuccess || ndev < 1) {
        printf("no device\nRESULT: FAIL\n");
        return 1;
    }
    /* Warm up what the runtime makes once (queues, staging), then take the baseline. */
    for (int d = 0; d < ndev; d++) {
        void *p;
        C(hipSetDevice)(d);
        if (C(hipMalloc)(&p, 4096) == hipSuccess) {
            C(hipMemset)(p, 0, 4096);
            C(hipFree)(p);
        }
    }
    C(hipSetDevice)(0);
    uint64_t base[10], now[10];
    release_cached_blocks();
    usage_now(base);
    static void (*const op_table[])(void) = {op_malloc, op_malloc, op_free, op_write, op_write, op_read, op_read, op_d2d,
                                        op_memset, op_foreign, op_query, op_stream_event, op_stream_event, op_device,
                                        op_vmm, op_malloc_bad};
    /* N counts API calls: operations (1 to 8 calls each) run until N calls have been made. */
    for (ops = 0; calls < n; ops++)
        op_table[below(sizeof op_table / sizeof *op_table)]();
    /* Every live allocation still holds its shadow, then everything is given back. */
    for (int i = 0; i < nlive; i++) {
        uint8_t *back = malloc(live[i].size);
        if (C(hipMemcpy)(back, live[i].p, live[i].size, hipMemcpyDeviceToHost) != hipSuccess ||
            memcmp(back, live[i].shadow, live[i].size) != 0)
            fail(calls, "final check: data differs from the shadow");
        free(back);
        C(hipFree)(live[i].p);
        free(live[i].shadow);
    }
    for (int i = 0; i < MAXS; i++)
        if (streams[i])
            C(hipStreamDestroy)(streams[i]);
    for (int i = 0; i < MAXE; i++)
        if (events[i])
            C(hipEventDestroy)(events[i]);
    C(hipDeviceSynchronize)();
    release_cached_blocks();
    usage_now(now);
    for (int i = 0; i < 10; i++)
        if (now[i] != base[i]) {
            printf("LEAK: counter %d = %llu, baseline %llu\n", i, (unsigned long long)now[i],
                   (unsigned long long)base[i]);
            bad++;
        }
    printf("fuzz: %ld API calls in %ld operations, seed %llu, %d GPU(s), %ld must-fail calls checked, %ld failures\n",
           calls, ops, (unsigned long long)seed, ndev, failures_expected, bad);
    printf("RESULT: %s\n", bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
