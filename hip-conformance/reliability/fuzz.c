/*
 * Seeded, reproducible fuzzer of the C ABI: random sequences of memory (hipMalloc, managed,
 * pitched, hipMallocAsync/hipFreeAsync, hipHostRegister'd malloc buffers), copy (1D, 2D,
 * driver-style, peer), fill (1D, 2D), stream, event, host-function, pointer-query
 * (hipPointerGetAttributes, hipPointerGetAttribute), device-query, dma-buf export and
 * external-memory import, IPC, VMM and bad kernel-launch calls with live, stale, interior, null and garbage pointers
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
#include <unistd.h>

#define MAXA 24
#define MAXH 4
#define MAXS 4
#define MAXE 4
#define MAXSTALE 64

struct alloc {
    uint8_t *p;
    size_t size;
    uint8_t *shadow;
    int dev;
    size_t pitch;  /* hipMallocPitch: row pitch (size = pitch * rows), else 0 */
    int kind;      /* ALLOC_DEVICE, ALLOC_MANAGED (host-writable), ALLOC_ASYNC (hipMallocAsync) */
};

enum { ALLOC_DEVICE, ALLOC_MANAGED, ALLOC_ASYNC };

static struct alloc live[MAXA];
/* hipHostRegister'd malloc buffers and their device pointers. */
static struct {
    uint8_t *p, *dev_p;
    size_t size;
    unsigned flags;
} hreg[MAXH];

/* A stale pointer that now lies in a registered host buffer's device mapping (VA reused) is not
 * foreign. */
static int stale_is_foreign(const uint8_t *p)
{
    for (int i = 0; i < MAXH; i++)
        if (hreg[i].p && p >= hreg[i].dev_p && p < hreg[i].dev_p + hreg[i].size)
            return 0;
    return 1;
}
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

static const struct alloc *last_pick; /* the allocation the current operation picked last */
static const char *const kind_name[] = {"hipMalloc", "hipMallocManaged", "hipMallocAsync"};

static void fail(long call, const char *what)
{
    bad++;
    if (bad <= 30) {
        printf("FAIL at call %ld: %s", call, what);
        if (last_pick)
            printf(" (last picked: %s%s of %zu bytes)", last_pick->pitch ? "hipMallocPitch" : kind_name[last_pick->kind],
                   last_pick->pitch ? "" : "", last_pick->size);
        printf("\n");
    }
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
        if (!stale_is_foreign(p))
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

static hipStream_t any_stream(void) { return below(3) ? streams[below(MAXS)] : NULL; }

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
    a->pitch = 0;
    a->kind = ALLOC_DEVICE;
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
        hipError_t e;
        if (live[i].kind == ALLOC_ASYNC) {
            /* Its block may hold a stale pointer's VA, and a pool keeps it after hipFreeAsync:
             * those pointers are no longer foreign. */
            hipDeviceptr_t base = NULL;
            size_t bsize = 0;
            if (C(hipMemGetAddressRange)(&base, &bsize, (hipDeviceptr_t)live[i].p) != hipSuccess)
                fail(calls, "hipMemGetAddressRange of a hipMallocAsync allocation");
            for (int k = 0; k < nstale; k++)
                if ((uint8_t *)stale_ptr[k] >= (uint8_t *)base && (uint8_t *)stale_ptr[k] < (uint8_t *)base + bsize)
                    stale_ptr[k--] = stale_ptr[--nstale];
        }
        if (live[i].kind == ALLOC_ASYNC && below(2)) {
            hipStream_t s = any_stream();
            e = C(hipFreeAsync)(live[i].p, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
        } else {
            e = C(hipFree)(live[i].p);
        }
        if (e != hipSuccess)
            fail(calls, "hipFree/hipFreeAsync of a live allocation");
        if (live[i].kind != ALLOC_ASYNC) /* a pool keeps freed blocks mapped for reuse */
            remember_stale(live[i].p);
        free(live[i].shadow);
        live[i] = live[--nlive];
        return;
    }
    void *p = foreign_ptr(0);
    if (p)
        must_fail(C(hipFree)(p), "hipFree of a pointer the runtime does not own");
}

/* Whether the runtime knows a's exact size: a pool hands a freed block out again whole, so a
 * hipMallocAsync allocation may be larger than asked for (CUDA: no bound past the size asked). */
static int bounds_exact(const struct alloc *a) { return a->kind != ALLOC_ASYNC; }

static struct alloc *pick(void) { return (struct alloc *)(last_pick = nlive ? &live[below((size_t)nlive)] : NULL); }

/* A random in-bounds range of a: offset and length (length may be 0). */
static void range(struct alloc *a, size_t *off, size_t *len)
{
    *off = below(a->size);
    *len = below(a->size - *off + 1);
}

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
    if (a->size + over <= (1 << 23) && bounds_exact(a)) {
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
    else if (memcmp(dst, a->shadow + off, len) != 0) {
        size_t i = 0;
        while (dst[i] == a->shadow[off + i])
            i++;
        char what[160];
        snprintf(what, sizeof what, "data read back of [%zu, +%zu) differs from the shadow at %zu: %#x, not %#x", off,
                 len, off + i, dst[i], a->shadow[off + i]);
        fail(calls, what);
    }
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
    /* Device-to-device copies and hipMemcpyPeer are asynchronous to the host (CUDA): before the
     * host writes managed memory (op_managed), the copy must be done. */
    if (b->kind == ALLOC_MANAGED && C(hipDeviceSynchronize)() != hipSuccess)
        fail(calls, "hipDeviceSynchronize after a copy into managed memory");
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
    if (bounds_exact(a))
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

/* A new entry of `live` for `size` bytes at p, filled with one random byte through hipMemset. */
static void add_live(void *p, size_t size, int dev, size_t pitch, int kind)
{
    struct alloc *a = &live[nlive++];
    a->p = p;
    a->size = size;
    a->dev = dev;
    a->pitch = pitch;
    a->kind = kind;
    a->shadow = malloc(size);
    uint8_t v = (uint8_t)rnd();
    memset(a->shadow, v, size);
    hipError_t e = C(hipMemset)(p, v, size);
    if (e != hipSuccess) {
        char what[96];
        snprintf(what, sizeof what, "hipMemset of a fresh %s: %s", kind_name[kind], hipGetErrorName(e));
        fail(calls, what);
    }
}

/* hipMallocManaged (host writes go straight to it), hipMallocPitch, hipMallocAsync. */
static void op_malloc_more(void)
{
    if (nlive == MAXA)
        return;
    int dev = (int)below((size_t)ndev);
    if (C(hipSetDevice)(dev) != hipSuccess)
        fail(calls, "hipSetDevice valid");
    cur_dev = dev;
    void *p = NULL;
    switch (below(3)) {
    case 0: {
        size_t size = rand_size();
        must_fail(C(hipMallocManaged)(&p, 4096, 0x100u << below(8)), "hipMallocManaged with unknown flags");
        if (!size) {
            must_fail(C(hipMallocManaged)(&p, 0, hipMemAttachGlobal), "hipMallocManaged of 0 bytes");
            return;
        }
        if (C(hipMallocManaged)(&p, size, hipMemAttachGlobal) != hipSuccess) {
            fail(calls, "hipMallocManaged");
            return;
        }
        add_live(p, size, dev, 0, ALLOC_MANAGED);
        break;
    }
    case 1: {
        size_t w = below(4) ? 1 + below(5000) : 0, h = below(4) ? 1 + below(64) : 0, pitch = 0;
        must_fail(C(hipMallocPitch)(&p, NULL, 64, 4), "hipMallocPitch with a null pitch");
        hipError_t e = C(hipMallocPitch)(&p, &pitch, w, h);
        if (!w || !h) {
            if (e == hipSuccess && p)
                C(hipFree)(p);
            return;
        }
        if (e != hipSuccess || pitch < w) {
            fail(calls, "hipMallocPitch");
            return;
        }
        add_live(p, pitch * h, dev, pitch, ALLOC_DEVICE);
        break;
    }
    default: {
        size_t size = rand_size();
        hipStream_t s = any_stream();
        int sdev = dev;
        for (int k = 0; k < MAXS; k++)
            if (s && streams[k] == s)
                sdev = st_dev[k];
        must_fail(C(hipMallocAsync)(NULL, 4096, s), "hipMallocAsync(NULL)");
        hipError_t e = C(hipMallocAsync)(&p, size, s);
        if (!size)
            return;
        if (e != hipSuccess || C(hipStreamSynchronize)(s) != hipSuccess) {
            fail(calls, "hipMallocAsync");
            return;
        }
        add_live(p, size, sdev, 0, ALLOC_ASYNC);
        break;
    }
    }
}

/* Host writes to managed memory, then a device copy out of it. */
static void op_managed(void)
{
    struct alloc *m = NULL;
    for (int i = 0; i < nlive && !m; i++)
        if (live[(i + ops) % nlive].kind == ALLOC_MANAGED)
            m = &live[(i + ops) % nlive];
    if (!m)
        return;
    size_t off, len;
    range(m, &off, &len);
    uint8_t v = (uint8_t)rnd();
    memset(m->p + off, v, len);
    memset(m->shadow + off, v, len);
    uint8_t *dst = malloc(len + 1);
    last_pick = m;
    hipError_t e = C(hipMemcpy)(dst, m->p + off, len, below(2) ? hipMemcpyDeviceToHost : hipMemcpyDefault);
    if (e != hipSuccess) {
        char what[96];
        snprintf(what, sizeof what, "managed memory: device copy back: %s", hipGetErrorName(e));
        fail(calls, what);
    } else if (memcmp(dst, m->shadow + off, len) != 0) {
        size_t i = 0;
        while (dst[i] == m->shadow[off + i])
            i++;
        char what[160];
        snprintf(what, sizeof what, "managed memory: host write of [%zu, +%zu), copy back differs at %zu: %#x, not %#x",
                 off, len, off + i, dst[i], m->shadow[off + i]);
        fail(calls, what);
    }
    free(dst);
}

/* hipMemcpy2D/2DAsync and hipMemset2D on a pitched allocation, valid and invalid shapes. */
static void op_2d(void)
{
    struct alloc *a = NULL;
    for (int i = 0; i < nlive && !a; i++)
        if (live[(i + ops) % nlive].pitch)
            a = &live[(i + ops) % nlive];
    if (!a)
        return;
    size_t rows = a->size / a->pitch, w = below(a->pitch + 1), h = below(rows + 1);
    size_t r0 = below(rows - h + 1), c0 = below(a->pitch - w + 1);
    uint8_t *d = a->p + r0 * a->pitch + c0;
    size_t hp = w + below(64);
    uint8_t *host = malloc(hp * (h ? h : 1) + 1);
    hipError_t e;
    switch (below(3)) {
    case 0: /* host to device */
        for (size_t i = 0; i < hp * h; i++)
            host[i] = (uint8_t)rnd();
        if (below(2)) {
            hipStream_t s = any_stream();
            e = C(hipMemcpy2DAsync)(d, a->pitch, host, hp, w, h, hipMemcpyHostToDevice, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
        } else {
            e = C(hipMemcpy2D)(d, a->pitch, host, hp, w, h, hipMemcpyHostToDevice);
        }
        if (e != hipSuccess)
            fail(calls, "in-bounds hipMemcpy2D host to device");
        else
            for (size_t r = 0; r < h; r++)
                memcpy(a->shadow + (r0 + r) * a->pitch + c0, host + r * hp, w);
        break;
    case 1: /* device to host */
        if (C(hipMemcpy2D)(host, hp, d, a->pitch, w, h, hipMemcpyDeviceToHost) != hipSuccess) {
            fail(calls, "in-bounds hipMemcpy2D device to host");
            break;
        }
        for (size_t r = 0; r < h; r++)
            if (memcmp(host + r * hp, a->shadow + (r0 + r) * a->pitch + c0, w) != 0) {
                fail(calls, "hipMemcpy2D read back differs from the shadow");
                break;
            }
        break;
    default: {
        uint8_t v = (uint8_t)rnd();
        if (below(2)) {
            hipStream_t s = any_stream();
            e = C(hipMemset2DAsync)(d, a->pitch, v, w, h, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
        } else {
            e = C(hipMemset2D)(d, a->pitch, v, w, h);
        }
        if (e != hipSuccess)
            fail(calls, "in-bounds hipMemset2D/hipMemset2DAsync");
        else
            for (size_t r = 0; r < h; r++)
                memset(a->shadow + (r0 + r) * a->pitch + c0, v, w);
        break;
    }
    }
    /* A width over the pitch, and rows past the end: must fail and change nothing. */
    must_fail(C(hipMemset2D)(a->p, a->pitch, 0, a->pitch + 1 + below(64), 1), "hipMemset2D width > pitch");
    must_fail(C(hipMemcpy2D)(a->p, a->pitch, host, hp, a->pitch + 1, 1, hipMemcpyHostToDevice),
              "hipMemcpy2D width > pitch");
    must_fail(C(hipMemset2D)(a->p, a->pitch, 0, a->pitch, rows + 1 + below(4)), "hipMemset2D rows past the end");
    free(host);
}

/* The driver-style copies: hipMemcpyHtoD, hipMemcpyDtoH, hipMemcpyDtoDAsync. */
static void op_copy_driver(void)
{
    struct alloc *a = pick(), *b = pick();
    if (!a)
        return;
    size_t off, len;
    range(a, &off, &len);
    uint8_t *buf = malloc(len + 80); /* room for the past-the-end read below */
    switch (below(3)) {
    case 0:
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rnd();
        if (below(2)) {
            hipStream_t s = any_stream();
            hipError_t e = C(hipMemcpyHtoDAsync)((hipDeviceptr_t)(a->p + off), buf, len, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
            if (e != hipSuccess)
                fail(calls, "in-bounds hipMemcpyHtoDAsync");
            else
                memcpy(a->shadow + off, buf, len);
        } else if (C(hipMemcpyHtoD)((hipDeviceptr_t)(a->p + off), buf, len) != hipSuccess)
            fail(calls, "in-bounds hipMemcpyHtoD");
        else
            memcpy(a->shadow + off, buf, len);
        break;
    case 1: {
        hipError_t e;
        if (below(2)) {
            hipStream_t s = any_stream();
            e = C(hipMemcpyDtoHAsync)(buf, (hipDeviceptr_t)(a->p + off), len, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
        } else {
            e = C(hipMemcpyDtoH)(buf, (hipDeviceptr_t)(a->p + off), len);
        }
        if (e != hipSuccess || memcmp(buf, a->shadow + off, len) != 0)
            fail(calls, "in-bounds hipMemcpyDtoH/hipMemcpyDtoHAsync, data checked");
        break;
    }
    default: {
        if (a == b)
            break;
        size_t n = len < b->size ? len : b->size, doff = below(b->size - n + 1);
        hipStream_t s = any_stream();
        hipError_t e = C(hipMemcpyDtoDAsync)((hipDeviceptr_t)(b->p + doff), (hipDeviceptr_t)(a->p + off), n, s);
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
        if (e != hipSuccess)
            fail(calls, "in-bounds hipMemcpyDtoDAsync");
        else
            memmove(b->shadow + doff, a->shadow + off, n);
        break;
    }
    }
    if (bounds_exact(a))
        must_fail(C(hipMemcpyDtoH)(buf, (hipDeviceptr_t)(a->p + a->size - 1), 2 + below(64)),
                  "hipMemcpyDtoH past the end");
    free(buf);
}

/* hipPointerGetAttribute with random attributes, valid ones checked. */
static void op_pointer_attribute(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    uint64_t data[8] = {0};
    int attr = (int)below(20); /* 0, 18, 19: not attributes */
    size_t off = below(a->size);
    hipError_t e = C(hipPointerGetAttribute)(data, (hipPointer_attribute)attr, (hipDeviceptr_t)(a->p + off));
    if (attr == 0 || attr > 17)
        must_fail(e, "hipPointerGetAttribute of an unknown attribute");
    else if (attr == HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR && (e != hipSuccess || data[0] != (uintptr_t)a->p))
        fail(calls, "hipPointerGetAttribute RANGE_START_ADDR");
    else if (attr == HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL && (e != hipSuccess || (int)data[0] != a->dev))
        fail(calls, "hipPointerGetAttribute DEVICE_ORDINAL");
    must_fail(C(hipPointerGetAttribute)(NULL, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, (hipDeviceptr_t)a->p),
              "hipPointerGetAttribute(NULL data)");
}

/* hipMemGetHandleForAddressRange: a dma-buf of an allocation, closed, or imported back through
 * hipImportExternalMemory + hipExternalMemoryGetMappedBuffer and its bytes checked. */
static void op_dmabuf(void)
{
    struct alloc *a = pick();
    if (!a || a->kind == ALLOC_ASYNC)
        return;
    size_t size = (a->size + 4095) & ~(size_t)4095; /* allocations are whole pages */
    int fd = -1;
    hipError_t e = C(hipMemGetHandleForAddressRange)(&fd, (hipDeviceptr_t)a->p, size, hipMemRangeHandleTypeDmaBufFd, 0);
    must_fail(C(hipMemGetHandleForAddressRange)(&fd, (hipDeviceptr_t)(a->p + 1), 4096, hipMemRangeHandleTypeDmaBufFd, 0),
              "hipMemGetHandleForAddressRange of an unaligned pointer");
    if (e != hipSuccess) {
        if (size > (256 << 10) && a->kind == ALLOC_DEVICE && !a->pitch)
            fail(calls, "hipMemGetHandleForAddressRange of a large hipMalloc");
        return;
    }
    if (below(2)) {
        close(fd);
        return;
    }
    hipExternalMemoryHandleDesc desc = dmabuf_import_desc(fd, size);
    hipExternalMemory_t ext = NULL;
    if (C(hipImportExternalMemory)(&ext, &desc) != hipSuccess) {
        fail(calls, "hipImportExternalMemory of our own dma-buf");
        close(fd);
        return;
    }
    hipExternalMemoryBufferDesc bd;
    memset(&bd, 0, sizeof bd);
    bd.offset = below((a->size + 4095) / 4096) * 4096; /* the bytes the shadow holds */
    if (bd.offset >= a->size)
        bd.offset = 0;
    bd.size = 1 + below(a->size - bd.offset);
    void *m = NULL;
    if (C(hipExternalMemoryGetMappedBuffer)(&m, ext, &bd) != hipSuccess) {
        fail(calls, "hipExternalMemoryGetMappedBuffer");
    } else {
        uint8_t *back = malloc(bd.size);
        if (C(hipMemcpy)(back, m, bd.size, hipMemcpyDeviceToHost) != hipSuccess ||
            memcmp(back, a->shadow + bd.offset, bd.size) != 0)
            fail(calls, "imported dma-buf differs from the shadow");
        free(back);
        if (C(hipFree)(m) != hipSuccess)
            fail(calls, "hipFree of a mapped external buffer");
    }
    bd.offset = 0;
    bd.size = size + 1 + below(4096);
    must_fail(C(hipExternalMemoryGetMappedBuffer)(&m, ext, &bd), "hipExternalMemoryGetMappedBuffer past the end");
    if (C(hipDestroyExternalMemory)(ext) != hipSuccess)
        fail(calls, "hipDestroyExternalMemory");
}


/* hipHostRegister/Unregister/GetDevicePointer/GetFlags on malloc'd buffers. */
static void op_host_register(void)
{
    int i = (int)below(MAXH);
    if (!hreg[i].p) {
        size_t size = 1 + below(1 << 18);
        uint8_t *p = malloc(size);
        unsigned flags = (unsigned)below(16) & ~(unsigned)hipHostRegisterIoMemory;
        if (!below(8)) {
            must_fail(C(hipHostRegister)(p, size, 0x100u << below(8)), "hipHostRegister with unknown flags");
            must_fail(C(hipHostUnregister)(p), "hipHostUnregister of an unregistered buffer");
            free(p);
            return;
        }
        if (C(hipHostRegister)(p, size, flags) != hipSuccess) {
            fail(calls, "hipHostRegister of a malloc'd buffer");
            free(p);
            return;
        }
        must_fail(C(hipHostRegister)(p, size, flags), "hipHostRegister twice");
        void *dp = NULL;
        if (C(hipHostGetDevicePointer)(&dp, p, 0) != hipSuccess)
            fail(calls, "hipHostGetDevicePointer of a fresh registration");
        hreg[i].dev_p = dp;
        memset(p, (int)(rnd() & 0xff), size);
        hreg[i].p = p;
        hreg[i].size = size;
        hreg[i].flags = flags;
        return;
    }
    switch (below(3)) {
    case 0: {
        void *d = NULL;
        unsigned f = 0;
        if (C(hipHostGetDevicePointer)(&d, hreg[i].p, 0) != hipSuccess || !d)
            fail(calls, "hipHostGetDevicePointer of a registered buffer");
        else {
            /* Through the device pointer, then back to host memory. */
            size_t off = below(hreg[i].size), len = below(hreg[i].size - off + 1);
            uint8_t *tmp = malloc(len + 1);
            if (C(hipMemcpy)(tmp, (uint8_t *)d + off, len, hipMemcpyDeviceToHost) != hipSuccess ||
                memcmp(tmp, hreg[i].p + off, len) != 0)
                fail(calls, "registered buffer read through its device pointer");
            free(tmp);
        }
        if (C(hipHostGetFlags)(&f, hreg[i].p) != hipSuccess)
            fail(calls, "hipHostGetFlags of a registered buffer");
        break;
    }
    case 1: {
        struct alloc *a = pick();
        if (!a)
            break;
        size_t len = below((a->size < hreg[i].size ? a->size : hreg[i].size) + 1);
        if (C(hipMemcpy)(a->p, hreg[i].p, len, hipMemcpyHostToDevice) != hipSuccess)
            fail(calls, "copy from a registered buffer");
        else
            memcpy(a->shadow, hreg[i].p, len);
        break;
    }
    default:
        if (hreg[i].size > 1)
            must_fail(C(hipHostUnregister)(hreg[i].p + 1), "hipHostUnregister of an interior pointer");
        if (C(hipHostUnregister)(hreg[i].p) != hipSuccess)
            fail(calls, "hipHostUnregister");
        must_fail(C(hipHostUnregister)(hreg[i].p), "hipHostUnregister twice");
        free(hreg[i].p);
        hreg[i].p = NULL;
        break;
    }
}

/* Device queries with random ordinals and attributes. */
static void op_device_query(void)
{
    int dev = (int)below((size_t)ndev + 3) - 1; /* -1 .. ndev + 1 */
    int valid = dev >= 0 && dev < ndev;
    char name[256], bus[64];
    hipError_t e;
    switch (below(4)) {
    case 0:
        e = C(hipDeviceGetName)(name, (int)below(2) ? (int)sizeof name : 1 + (int)below(8), dev);
        break;
    case 1:
        e = C(hipDeviceGetPCIBusId)(bus, sizeof bus, dev);
        break;
    case 2: {
        hipDeviceProp_t prop;
        e = C(hipGetDeviceProperties)(&prop, dev);
        break;
    }
    default: {
        int v, attr = below(4) ? (int)below(120) : (int)below(20000) + 10000;
        e = C(hipDeviceGetAttribute)(&v, (hipDeviceAttribute_t)attr, dev);
        if (valid)
            must_fail(C(hipDeviceGetAttribute)(&v, (hipDeviceAttribute_t)(below(2) ? -1 : 0x7fffffff), dev),
                      "hipDeviceGetAttribute of a bad attribute");
        if (valid) /* the attribute ranges have gaps: any answer but a crash */
            return;
        break;
    }
    }
    if (!valid)
        must_fail(e, "device query of a bad ordinal");
    else if (e != hipSuccess) {
        char what[96];
        snprintf(what, sizeof what, "device query of a valid ordinal: %s", hipGetErrorName(e));
        fail(calls, what);
    }
}

static long host_fn_count;
static void host_fn(void *arg) { __atomic_add_fetch((long *)arg, 1, __ATOMIC_SEQ_CST); }

/* hipLaunchHostFunc (the counter checked after a sync) and launches of null and garbage functions. */
static void op_launch(void)
{
    hipStream_t s = any_stream();
    if (below(2)) {
        long want = host_fn_count + 1;
        if (C(hipLaunchHostFunc)(s, host_fn, &host_fn_count) != hipSuccess ||
            C(hipStreamSynchronize)(s) != hipSuccess || host_fn_count != want)
            fail(calls, "hipLaunchHostFunc ran once before the sync returned");
        host_fn_count = want;
        must_fail(C(hipLaunchHostFunc)(s, NULL, NULL), "hipLaunchHostFunc(NULL fn)");
        return;
    }
    void *f = below(3) ? foreign_ptr(0) : NULL;
    dim3 g = {1 + (unsigned)below(4), 1, 1}, b = {1 + (unsigned)below(256), 1, 1};
    if (below(2))
        must_fail(C(hipModuleLaunchKernel)((hipFunction_t)f, g.x, 1, 1, b.x, 1, 1, 0, s, NULL, NULL),
                  "hipModuleLaunchKernel of a null or garbage function");
    else
        must_fail(C(hipLaunchKernel)(f, g, b, NULL, 0, s), "hipLaunchKernel of a null or garbage function");
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
    u[10] = (uint64_t)fd_count(); /* the process's open fds (dma-bufs closed, imports destroyed) */
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
    uint64_t base[11], now[11];
    release_cached_blocks();
    usage_now(base);
    static void (*const op_table[])(void) = {op_malloc, op_malloc, op_free, op_write, op_write, op_read, op_read, op_d2d,
                                        op_memset, op_foreign, op_query, op_stream_event, op_stream_event, op_device,
                                        op_vmm, op_malloc_bad, op_malloc_more, op_managed, op_2d, op_2d,
                                        op_copy_driver, op_pointer_attribute, op_dmabuf, op_host_register,
                                        op_host_register, op_device_query, op_launch};
    /* N counts API calls: operations (1 to 8 calls each) run until N calls have been made. */
    int trace = getenv("FUZZ_TRACE") != NULL; /* each operation: its index, first call, last pick */
    /* FUZZ_SYNC=LO-HI: every device synchronized after operations LO..HI of op_table (to bisect
     * an ordering failure). */
    long sync_lo = 1, sync_hi = 0;
    if (getenv("FUZZ_SYNC"))
        sscanf(getenv("FUZZ_SYNC"), "%ld-%ld", &sync_lo, &sync_hi);
    for (ops = 0; calls < n; ops++, last_pick = NULL) {
        long first = calls;
        size_t op = below(sizeof op_table / sizeof *op_table);
        op_table[op]();
        if (trace)
            printf("op %ld: #%zu calls %ld.. pick %p cur_dev %d\n", ops, op, first, last_pick ? (void *)last_pick->p : NULL, cur_dev);
        if (sync_lo <= (long)op && (long)op <= sync_hi)
            for (int d = 0; d < ndev; d++) {
                hipSetDevice(d);
                hipDeviceSynchronize();
                hipSetDevice(cur_dev);
            }
    }
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
    for (int i = 0; i < MAXH; i++)
        if (hreg[i].p) {
            C(hipHostUnregister)(hreg[i].p);
            free(hreg[i].p);
        }
    for (int i = 0; i < MAXS; i++)
        if (streams[i])
            C(hipStreamDestroy)(streams[i]);
    for (int i = 0; i < MAXE; i++)
        if (events[i])
            C(hipEventDestroy)(events[i]);
    C(hipDeviceSynchronize)();
    for (int d = 0; d < ndev; d++) { /* the blocks the pools keep for reuse */
        hipMemPool_t pool;
        C(hipSetDevice)(d);
        C(hipDeviceSynchronize)();
        if (C(hipDeviceGetDefaultMemPool)(&pool, d) == hipSuccess)
            C(hipMemPoolTrimTo)(pool, 0);
    }
    release_cached_blocks();
    usage_now(now);
    for (int i = 0; i < 11; i++)
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
