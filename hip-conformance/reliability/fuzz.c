/*
 * Seeded, reproducible fuzzer of the C ABI: random sequences of memory (hipMalloc, managed,
 * pitched, hipMallocAsync/hipFreeAsync, hipHostRegister'd malloc buffers), copy (1D, 2D, 3D,
 * driver-style, peer), fill (1D, 2D, 3D; hipMalloc3D), stream, event, host-function, pointer-query
 * (hipPointerGetAttributes, hipPointerGetAttribute), device-query, dma-buf export and
 * external-memory import, IPC, VMM and bad kernel-launch calls with live, stale, interior, null and garbage pointers
 * (garbage only where the runtime does not read or write through it: see foreign_ptr),
 * sizes 0, 1, misaligned, past the end and huge, random device ordinals and stale stream and
 * event handles. Every device allocation has a host shadow copy: each call that succeeds updates
 * it, each call that fails must leave the memory as it was, and reads are compared with it.
 *
 *   kfdsim run [--gpus N] -- fuzz [CALLS [SEED [PROCESSES]]]   (defaults: 20000 calls, seed 1, 1)
 *
 * Also: external semaphores (binary and timeline DRM syncobjs made through the render node:
 * waits ahead of copies that must see the bytes written before the signal, signals after copies,
 * several in one call, destroy while waiting, stale, garbage and refused arguments), and the rest
 * of the exports (op_misc: element fills, driver copies, contexts, versions, errors, limits,
 * functions, modules, streams, events, memory pools, hints, VMM queries) with random and bad
 * arguments; graphs (op_graph: built node by node from memcpy, memset, empty, host and
 * event-record nodes on random dependencies, or captured from async copies, fills and host
 * functions on a random stream in a random capture mode; launched 1 to 3 times; synchronising
 * calls during a capture, which invalidate it, and null arguments, with AMD's exact codes);
 * arrays (op_array: hipMallocArray, hipArrayCreate, hipMalloc3DArray of random formats and
 * extents, sub-rectangles copied in and out from the host and live allocations, bad formats,
 * extents and ranges); hipMemsetD2D8/16/32(+Async) on pitched allocations (op_memset_d2d). PROCESSES 2: a partner forked before the runtime initialises opens what this process
 * shares over a socketpair (IPC memory and event handles, VMM shareable fds, dma-bufs, a timeline
 * syncobj) and works on the shared memory one request at a time, so the shadows stay exact;
 * forged and stale handles must be refused there. FUZZ_TRACE=1 prints each operation (2 and 3
 * more: see `trace`); FUZZ_SYNC=LO-HI synchronizes every device after operations LO..HI of op_table.
 *
 * op_peer_mix (issue 37): 2 to 13 steps left running, nothing waited for in between, on a few
 * hipMalloc buffers of any device and IPC imports: hipMemcpy DeviceToDevice/Default, hipMemcpyPeer
 * and hipMemcpyPeerAsync with a random current device (one that owns neither side, or a copy
 * within one GPU issued from another), hipMemset/D16/D32/hipMemsetAsync, host writes, peer
 * access enabled and disabled at random (a model of it checked against the answers), imports
 * opened, and the chain H2D on s1 → event → s2 waits → D2D on s2 → D2H on s2 on blocking
 * streams of one device with those steps in between; every synchronous read is checked against
 * the shadow (an import shares its exporter's), then every device synchronized and every buffer
 * read back. A failure prints the operation's numbered steps and which step's bytes the read saw
 * instead of which. op_import (PROCESSES 2): the partner exports a fresh hipMalloc (P_EXPORT),
 * we open it, later close it, and the partner frees it. FUZZ_MIX=null leaves out the chain and
 * the blocking streams (null-stream work only). FUZZ_OPS=I,J,... draws only those operations of
 * op_table (0,1,2,40,41,42: allocations, frees, op_peer_mix and op_import).
 *
 * CALLS counts API calls (every fuzzed call goes through the C() macro), not operations: an
 * operation makes 1 to 8 calls, and operations run until CALLS calls have been made.
 *
 * Checks: no crash or hang (the caller's timeout); a call that must fail (a stale or garbage
 * pointer or handle, a range past the end of an allocation, a huge size) does not return
 * hipSuccess; every byte read back equals the shadow; at the end, once everything is freed,
 * the sim's accounting (kfdsim_stat) shows the VRAM bytes, GPU mappings and dma-buf fds of
 * the start (and the fd count). Prints "fuzz: N API calls (+P by the partner process) in M
 * operations, ..., K must-fail calls checked, D data checks, L leaks, F failures" and
 * "RESULT: PASS|FAIL" (exit 0|1); the first failures name the call number (and the first one the
 * last 40 operations), so `fuzz N S` with a smaller N reproduces them.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include "../shared.h"
#include "../interop_producer.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
    uint8_t *prev; /* FUZZ_TRACE >= 2: the shadow after the last operation */
};

enum { ALLOC_DEVICE, ALLOC_MANAGED, ALLOC_ASYNC, ALLOC_IPC /* an import of the partner's (op_import), never in live */ };

static struct alloc live[MAXA];
/* hipHostRegister'd malloc buffers and their device pointers. */
static struct {
    uint8_t *p, *dev_p;
    size_t size;
    unsigned flags;
    uint8_t fill; /* the byte written over it once registered */
} hreg[MAXH];

/* The registered buffers unregistered and freed last, for failure reports: a host buffer that
 * reads back wrong may lie where one of them was. */
#define NFREED 8
static struct {
    uint8_t *p;
    size_t size;
    uint8_t fill;
    long call;
} hfreed[NFREED];
static int nhfreed;

/* Prints the registered buffers, live and freed lately, that overlap host range [h, h + n). */
static void host_overlaps(const uint8_t *h, size_t n)
{
    for (int i = 0; i < MAXH; i++)
        if (hreg[i].p && hreg[i].p < h + n && h < hreg[i].p + hreg[i].size)
            printf("  host buffer %p +%zu overlaps registered buffer %p +%zu (filled %#x)\n", (void *)h, n,
                   (void *)hreg[i].p, hreg[i].size, hreg[i].fill);
    for (int i = 0; i < NFREED; i++)
        if (hfreed[i].p && hfreed[i].p < h + n && h < hfreed[i].p + hfreed[i].size)
            printf("  host buffer %p +%zu overlaps a registered buffer %p +%zu (filled %#x) unregistered and freed at "
                   "call %ld\n",
                   (void *)h, n, (void *)hfreed[i].p, hfreed[i].size, hfreed[i].fill, hfreed[i].call);
}

static int in_import(const uint8_t *p);

/* A stale pointer that now lies in a registered host buffer's device mapping or in an IPC import
 * (VA reused) is not foreign. */
static int stale_is_foreign(const uint8_t *p)
{
    for (int i = 0; i < MAXH; i++)
        if (hreg[i].p && p >= hreg[i].dev_p && p < hreg[i].dev_p + hreg[i].size)
            return 0;
    return !in_import(p);
}
static int nlive;
static void *stale_ptr[MAXSTALE];
static int nstale;
static hipStream_t streams[MAXS], stale_stream;
static hipEvent_t events[MAXE], stale_event;
static int ndev, cur_dev;
static int st_dev[MAXS], ev_dev[MAXE];
static long calls, ops, failures_expected, bad, leaks;
static long data_checks; /* reads compared with the shadow (or with bytes known otherwise) */

/* FUZZ_TRACE: 1 prints each operation (its op_table index, first call, last pick); 2 also the byte
 * ranges of each allocation's shadow that it changed (slow: every shadow is compared); 3 also each
 * API call and the ranges and streams of some operations. */
static int trace;
/* Every fuzzed API call goes through C(): `C(hipMalloc)(&p, n)` counts one call, then makes it. */
#define C(f) (calls++, trace > 2 && printf("   call %ld %s\n", calls, #f), f)
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
static const char *const kind_name[] = {"hipMalloc", "hipMallocManaged", "hipMallocAsync", "hipIpcOpenMemHandle"};

/* The last operations (op_table index, first call, the allocation picked last), printed at the
 * first failure; '*' marks those that picked the failing operation's allocation. */
#define HIST 40
static struct {
    int op;
    long first;
    const void *pick;
} hist[HIST];
static long nhist;

/* Where the last data check that failed differed: printed with the failure. */
static char diff_at[256];

/* Whether n bytes at got differ from want (as memcmp), noting the first differing byte and how
 * many differ. */
static int differs(const void *got, const void *want, size_t n)
{
    const uint8_t *g = got, *w = want;
    size_t first = n, count = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i] && count++ == 0)
            first = i;
    if (count) {
        int k = snprintf(diff_at, sizeof diff_at, "; %zu of %zu bytes differ, the first at offset %zu: %#x, want %#x (got",
                         count, n, first, g[first], w[first]);
        for (size_t i = first; i < n && i < first + 8; i++) /* a fill or stale bytes? */
            k += snprintf(diff_at + k, sizeof diff_at - (size_t)k, " %02x", g[i]);
        k += snprintf(diff_at + k, sizeof diff_at - (size_t)k, ", want");
        for (size_t i = first; i < n && i < first + 8; i++)
            k += snprintf(diff_at + k, sizeof diff_at - (size_t)k, " %02x", w[i]);
        snprintf(diff_at + k, sizeof diff_at - (size_t)k, ")");
    }
    return count != 0;
}

/* Reads the whole allocation into `back` on the current device and prints how it compares
 * with the shadow, ending the line `reread` began. */
static void reread_one(const struct alloc *a, uint8_t *back)
{
    if (hipMemcpy(back, a->p, a->size, hipMemcpyDeviceToHost) != hipSuccess)
        printf("the copy failed\n");
    else if (differs(back, a->shadow, a->size))
        printf("%s\n", diff_at + 2);
    else
        printf("equals its shadow\n");
}

/* After a data check failed: every device synchronized, the whole allocation read again from
 * each device in turn and compared with its shadow. Tells a read that saw stale bytes (these
 * match) from memory that holds wrong ones, and a device that sees other bytes than the rest.
 * Not counted as fuzzed calls. */
static void reread(const struct alloc *a)
{
    int ndevs = 0, cur = 0;
    hipGetDeviceCount(&ndevs);
    hipGetDevice(&cur);
    uint8_t *back = malloc(a->size);
    char keep[sizeof diff_at];
    memcpy(keep, diff_at, sizeof keep);
    if (back) { /* before any synchronization: does the same read, made again, see the same? */
        printf("  the allocation read again at once from device %d: ", cur);
        reread_one(a, back);
    }
    for (int d = 0; d < ndevs; d++) {
        hipSetDevice(d);
        hipDeviceSynchronize();
    }
    for (int d = 0; back && d < ndevs; d++) {
        hipSetDevice(d);
        printf("  the allocation (device %d; current device %d) read again from device %d after every device "
               "synchronized: ", a->dev, cur, d);
        reread_one(a, back);
    }
    hipSetDevice(cur);
    memcpy(diff_at, keep, sizeof keep);
    free(back);
}

static void fail(long call, const char *what)
{
    bad++;
    if (bad == 1 && nhist) {
        printf("the last operations (op_table index: first call):");
        for (long k = nhist > HIST ? nhist - HIST : 0; k < nhist; k++)
            printf(" %d:%ld%s", hist[k % HIST].op, hist[k % HIST].first,
                   last_pick && hist[k % HIST].pick == last_pick->p ? "*" : "");
        printf("\n");
    }
    if (bad <= 30) {
        printf("FAIL at call %ld: %s", call, what);
        if (last_pick)
            printf(" (last picked: %s%s of %zu bytes at %p)", last_pick->pitch ? "hipMallocPitch" : kind_name[last_pick->kind],
                   last_pick->pitch ? "" : "", last_pick->size, (void *)last_pick->p);
        printf("%s\n", diff_at);
        if (diff_at[0] && last_pick)
            reread(last_pick);
    }
    diff_at[0] = 0;
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

/* After a synchronous call that returns before its work is done: a copy between two places of one
 * GPU's memory (CUDA's API synchronization behavior; clr ihipMemcpy isHostAsync) or a hipMemset*
 * of device memory (CUDA; clr ihipMemset, at least at an allocation's start). Only the null stream
 * of the current device and that device's blocking streams are ordered after it, and the
 * operations after this one may use any stream of any device: the work is waited for here. (A
 * fresh allocation's hipMemset on device 1's null stream, then a copy into it on a stream of
 * device 0: the fill landed after the copy, once in about 150 runs of seed 1.) settle_on waits
 * for stream s instead, for such a call made on s (hipMemcpyWithStream). */
static hipError_t settle_on(hipError_t e, hipStream_t s) { return e == hipSuccess ? C(hipStreamSynchronize)(s) : e; }
static hipError_t settle(hipError_t e) { return settle_on(e, NULL); }

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
    a->prev = NULL;
    a->p = p;
    a->size = size;
    a->dev = dev;
    a->pitch = 0;
    a->kind = ALLOC_DEVICE;
    a->shadow = malloc(size);
    uint8_t v = (uint8_t)rnd();
    memset(a->shadow, v, size);
    if (settle(C(hipMemset)(p, v, size)) != hipSuccess)
        fail(calls, "hipMemset of a fresh allocation");
}

static void op_malloc_bad(void)
{
    void *p = NULL;
    must_fail(C(hipMalloc)(&p, (size_t)1 << (50 + below(14))), "hipMalloc of a huge size");
    must_fail(C(hipMalloc)(NULL, 4096), "C(hipMalloc)(NULL)");
}

static void forget_ipc_owner(const uint8_t *p);

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
        forget_ipc_owner(live[i].p);
        free(live[i].shadow);
        free(live[i].prev);
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
    else if (data_checks++, differs(dst, a->shadow + off, len)) {
        char what[96];
        snprintf(what, sizeof what, "data read back of [%zu, +%zu) differs from the shadow", off, len);
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
    if (trace > 2)
        printf("   d2d %p+%zu -> %p+%zu len %zu\n", (void *)a->p, so, (void *)b->p, doff, len);
    if (a->dev != b->dev && below(2)) {
        /* Asynchronous to the host, and before later work of the current, source and destination
         * devices only (cudaMemcpyPeer): with another device left, its streams may overtake it. */
        e = C(hipMemcpyPeer)(b->p + doff, b->dev, a->p + so, a->dev, len);
        if ((1u << cur_dev | 1u << a->dev | 1u << b->dev) != (1u << ndev) - 1)
            e = settle(e);
    } else
        e = settle(C(hipMemcpy)(b->p + doff, a->p + so, len, hipMemcpyDeviceToDevice));
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
        e = settle(C(hipMemset)(a->p + off, v, len));
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
    a->prev = NULL;
    a->p = p;
    a->size = size;
    a->dev = dev;
    a->pitch = pitch;
    a->kind = kind;
    a->shadow = malloc(size);
    uint8_t v = (uint8_t)rnd();
    memset(a->shadow, v, size);
    hipError_t e = settle(C(hipMemset)(p, v, size));
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

static void sync_all(void);

/* Host writes to managed memory, then a device copy out of it. Every device is synchronized
 * first: work that returned before it was done (device-to-device copies, hipMemcpyPeer, fills)
 * may still read or write the managed range, and the host may touch managed memory only while
 * no GPU work does (CUDA, without concurrentManagedAccess). */
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
    sync_all();
    memset(m->p + off, v, len);
    memset(m->shadow + off, v, len);
    uint8_t *dst = malloc(len + 1);
    last_pick = m;
    hipError_t e = C(hipMemcpy)(dst, m->p + off, len, below(2) ? hipMemcpyDeviceToHost : hipMemcpyDefault);
    if (e != hipSuccess) {
        char what[96];
        snprintf(what, sizeof what, "managed memory: device copy back: %s", hipGetErrorName(e));
        fail(calls, what);
    } else if (data_checks++, differs(dst, m->shadow + off, len)) {
        char what[96];
        snprintf(what, sizeof what, "managed memory: host write of [%zu, +%zu), copy back differs", off, len);
        fail(calls, what);
    }
    free(dst);
}

/* A hipMallocPitch allocation (the first from a place that moves with the operation count), or
 * NULL. */
static struct alloc *pick_pitched(void)
{
    for (int i = 0; i < nlive; i++)
        if (live[(i + ops) % nlive].pitch)
            return &live[(i + ops) % nlive];
    return NULL;
}

/* hipMemcpy2D/2DAsync and hipMemset2D on a pitched allocation, valid and invalid shapes. */
static void op_2d(void)
{
    struct alloc *a = pick_pitched();
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
        data_checks++;
        for (size_t r = 0; r < h; r++)
            if (differs(host + r * hp, a->shadow + (r0 + r) * a->pitch + c0, w)) {
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
            /* asynchronous to the host on device memory: later work on a non-blocking stream
             * must not overtake it */
            e = C(hipMemset2D)(d, a->pitch, v, w, h);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(NULL);
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
        last_pick = a; /* the allocation a failure report names and reads again */
        memset(buf, 0xee, len + 80); /* bytes the copy did not write read 0xee */
        int async = (int)below(2);
        if (trace > 2)
            printf("   read %p [%zu, +%zu)\n", (void *)a->p, off, len);
        if (async) {
            hipStream_t s = any_stream();
            e = C(hipMemcpyDtoHAsync)(buf, (hipDeviceptr_t)(a->p + off), len, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
        } else {
            e = C(hipMemcpyDtoH)(buf, (hipDeviceptr_t)(a->p + off), len);
        }
        if (e != hipSuccess || (data_checks++, differs(buf, a->shadow + off, len))) {
            uint8_t *seen = malloc(len);
            if (seen)
                memcpy(seen, buf, len);
            fail(calls, async ? "in-bounds hipMemcpyDtoHAsync + hipStreamSynchronize, data checked"
                              : "in-bounds hipMemcpyDtoH, data checked");
            host_overlaps(buf, len);
            if (seen && memcmp(seen, buf, len)) /* written after the call returned? */
                printf("  the host buffer changed after the check%s\n", differs(buf, seen, len) ? diff_at : "");
            free(seen);
        }
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
            (data_checks++, differs(back, a->shadow + bd.offset, bd.size)))
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
        /* Again at the same base, within the size, it stacks (clr): one more unregister then. */
        if (C(hipHostRegister)(p, size, flags) != hipSuccess ||
            C(hipHostUnregister)(p) != hipSuccess)
            fail(calls, "hipHostRegister twice at one base");
        if (size > 1)
            must_fail(C(hipHostRegister)(p + 1, size, flags), "hipHostRegister overlapping a registration");
        void *dp = NULL;
        if (C(hipHostGetDevicePointer)(&dp, p, 0) != hipSuccess)
            fail(calls, "hipHostGetDevicePointer of a fresh registration");
        hreg[i].dev_p = dp;
        hreg[i].fill = (uint8_t)rnd();
        memset(p, hreg[i].fill, size);
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
                (data_checks++, differs(tmp, hreg[i].p + off, len)))
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
        hfreed[nhfreed % NFREED].p = hreg[i].p;
        hfreed[nhfreed % NFREED].size = hreg[i].size;
        hfreed[nhfreed % NFREED].fill = hreg[i].fill;
        hfreed[nhfreed++ % NFREED].call = calls;
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

static int mix_handle(const void *h);

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
            if (trace > 2)
                printf("   stream %p on device %d\n", (void *)streams[i], cur_dev);
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
        if (mix_handle(stale_stream)) /* by op_peer_mix's */
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
        if (mix_handle(stale_event))
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
                for (size_t i = (data_checks++, 0); i < sizeof back; i++)
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

/* ---- external semaphores: DRM syncobjs made through the render node, as a Vulkan driver does
 * (interop_producer.h), imported with hipImportExternalSemaphore ---- */

#define MAXX 4
#define PIN_SIZE (256 << 10)
static struct {
    hipExternalSemaphore_t s;
    uint32_t h;      /* the syncobj in prod's render-node file */
    int timeline;
    uint64_t point;  /* timeline: the last point signalled */
    int set;         /* binary: signalled and not yet consumed by a wait */
} xsem[MAXX];
static hipExternalSemaphore_t stale_sem;
static hipExternalSemaphore_t psem; /* the semaphore shared with the partner (op_partner) */
static struct producer prod;
static int have_prod;
static uint8_t *pinned; /* hipHostMalloc'd staging of PIN_SIZE bytes: the GPU reads it when the copy runs */
/* One more read compared with the shadow. */
static void checked(void) { data_checks++; }

/* hipSignalExternalSemaphoresAsync (signal) or hipWaitExternalSemaphoresAsync of one semaphore at
 * value v; the two parameter structs share one layout (test_interop checks it). */
static hipError_t sem_call(int signal, hipExternalSemaphore_t s, uint64_t v, unsigned flags, hipStream_t st)
{
    hipExternalSemaphoreSignalParams p;
    memset(&p, 0, sizeof p);
    p.params.fence.value = v;
    p.flags = flags;
    return signal ? C(hipSignalExternalSemaphoresAsync)(&s, &p, 1, st)
                  : C(hipWaitExternalSemaphoresAsync)(&s, (hipExternalSemaphoreWaitParams *)(void *)&p, 1, st);
}

/* A created stream (never the null stream: it would wait for the stream held by a semaphore). */
static hipStream_t created_stream(hipStream_t not)
{
    for (int k = 0, i = (int)below(MAXS); k < MAXS; k++, i = (i + 1) % MAXS)
        if (streams[i] && streams[i] != not)
            return streams[i];
    return NULL;
}

static void sem_import(int i)
{
    int fd = -1, timeline = (int)below(2);
    uint32_t h = psync_create(&prod, &fd);
    hipExternalSemaphoreHandleDesc d;
    memset(&d, 0, sizeof d);
    d.type = timeline ? hipExternalSemaphoreHandleTypeTimelineSemaphoreFd : hipExternalSemaphoreHandleTypeOpaqueFd;
    d.handle.fd = fd;
    hipExternalSemaphore_t s = NULL;
    switch (below(6)) { /* a bad descriptor first: must fail and leave the fd to us */
    case 0: {
        hipExternalSemaphoreHandleDesc b = d;
        b.flags = 1 + (unsigned)below(8);
        must_fail(C(hipImportExternalSemaphore)(&s, &b), "hipImportExternalSemaphore with flags");
        break;
    }
    case 1: {
        hipExternalSemaphoreHandleDesc b = d;
        b.type = (hipExternalSemaphoreHandleType)(below(2) ? 10 + below(1000) : -1);
        must_fail(C(hipImportExternalSemaphore)(&s, &b), "hipImportExternalSemaphore of an unknown type");
        break;
    }
    case 2: {
        hipExternalSemaphoreHandleDesc b = d;
        int mfd = memfd_create("fuzz-not-a-syncobj", MFD_CLOEXEC);
        b.handle.fd = below(2) ? mfd : (below(2) ? -1 : 100000 + (int)below(1000));
        must_fail(C(hipImportExternalSemaphore)(&s, &b), "hipImportExternalSemaphore of a non-syncobj fd");
        if (fcntl(mfd, F_GETFD) < 0)
            fail(calls, "a refused hipImportExternalSemaphore closed the fd");
        close(mfd);
        break;
    }
    case 3:
        must_fail(C(hipImportExternalSemaphore)(NULL, &d), "hipImportExternalSemaphore(NULL)");
        must_fail(C(hipImportExternalSemaphore)(&s, NULL), "hipImportExternalSemaphore(desc NULL)");
        break;
    default:
        break;
    }
    if (fcntl(fd, F_GETFD) < 0)
        fail(calls, "a refused hipImportExternalSemaphore closed the syncobj fd");
    if (C(hipImportExternalSemaphore)(&s, &d) != hipSuccess) {
        fail(calls, "hipImportExternalSemaphore of a syncobj");
        close(fd);
        drmSyncobjDestroy(prod.fd, h);
        return;
    }
    xsem[i].s = s;
    xsem[i].h = h;
    xsem[i].timeline = timeline;
    xsem[i].point = 0;
    xsem[i].set = 0;
}

static void sem_destroy(int i)
{
    if (C(hipDestroyExternalSemaphore)(xsem[i].s) != hipSuccess)
        fail(calls, "hipDestroyExternalSemaphore");
    stale_sem = xsem[i].s;
    drmSyncobjDestroy(prod.fd, xsem[i].h);
    xsem[i].s = NULL;
}

/* The next value to wait for (timeline: past the last point, so nobody has signalled it yet). */
static uint64_t sem_next(int i) { return xsem[i].timeline ? xsem[i].point + 1 + below(3) : 0; }

/* Wait then copy: a stream waits on semaphore i, then copies pinned host memory into an
 * allocation; the host writes the bytes only after queueing both, then signals (from the host, or
 * from another stream, or by destroying the semaphore, which releases the stream): the copy must
 * see the bytes written before the signal. */
static void sem_wait_copy(int i)
{
    struct alloc *a = pick();
    hipStream_t s = created_stream(NULL);
    if (!a || !s)
        return;
    size_t off, len;
    range(a, &off, &len);
    if (len > PIN_SIZE)
        len = PIN_SIZE;
    int reached = (xsem[i].timeline && xsem[i].point && !below(4)) || (!xsem[i].timeline && xsem[i].set);
    uint64_t v = reached ? (xsem[i].timeline ? 1 + below(xsem[i].point) : 0) : sem_next(i);
    if (reached) /* the wait is satisfied at once: the bytes must be there before the copy is queued */
        for (size_t k = 0; k < len; k++)
            pinned[k] = (uint8_t)rnd();
    if (sem_call(0, xsem[i].s, v, 0, s) != hipSuccess) {
        fail(calls, "hipWaitExternalSemaphoresAsync");
        return;
    }
    hipError_t e = C(hipMemcpyAsync)(a->p + off, pinned, len, hipMemcpyHostToDevice, s);
    if (!reached)
        for (size_t k = 0; k < len; k++)
            pinned[k] = (uint8_t)rnd();
    int how = reached ? -1 : (int)below(4);
    hipStream_t other = created_stream(s);
    if (how == 1 && !other)
        how = 0;
    switch (how) {
    case 0:
        psync_signal(&prod, xsem[i].h, v);
        break;
    case 1:
        if (sem_call(1, xsem[i].s, v, 0, other) != hipSuccess) {
            fail(calls, "hipSignalExternalSemaphoresAsync from another stream");
            psync_signal(&prod, xsem[i].h, v); /* the wait ends, so the failure does not hang the run */
        }
        break;
    case 2:
        sem_destroy(i); /* releases the waiting stream */
        break;
    case 3:
        if (xsem[i].timeline) { /* past the value waited for */
            v += below(5);
            psync_signal(&prod, xsem[i].h, v);
        } else
            psync_signal(&prod, xsem[i].h, 0);
        break;
    default:
        break;
    }
    if (xsem[i].s && xsem[i].timeline && v > xsem[i].point)
        xsem[i].point = v;
    if (xsem[i].s && !xsem[i].timeline)
        xsem[i].set = 0; /* the wait consumed it */
    if (e == hipSuccess)
        e = C(hipStreamSynchronize)(s);
    if (how == 1 && C(hipStreamSynchronize)(other) != hipSuccess)
        fail(calls, "hipStreamSynchronize of the signalling stream");
    if (e != hipSuccess) {
        fail(calls, "hipMemcpyAsync after an external-semaphore wait");
        return;
    }
    memcpy(a->shadow + off, pinned, len);
    uint8_t *back = malloc(len + 1);
    checked();
    if (C(hipMemcpy)(back, a->p + off, len, hipMemcpyDeviceToHost) != hipSuccess ||
        differs(back, a->shadow + off, len))
        fail(calls, "a copy queued after an external-semaphore wait ran before the signal");
    free(back);
}

/* Copy then signal: a stream copies an allocation into pinned memory, then signals; once the host
 * sees the signal, the bytes are there. */
static void sem_copy_signal(int i)
{
    struct alloc *a = pick();
    hipStream_t s = below(4) ? created_stream(NULL) : NULL;
    if (!a)
        return;
    size_t off, len;
    range(a, &off, &len);
    if (len > PIN_SIZE)
        len = PIN_SIZE;
    if (!xsem[i].timeline && xsem[i].set) { /* else the old signal would answer the wait below; before the signal is queued */
        drmSyncobjReset(prod.fd, &xsem[i].h, 1);
        xsem[i].set = 0;
    }
    memset(pinned, ~(a->shadow[off]), len);
    uint64_t v = xsem[i].timeline ? xsem[i].point + 1 + below(3) : 0;
    hipError_t e = C(hipMemcpyAsync)(pinned, a->p + off, len, hipMemcpyDeviceToHost, s);
    if (e != hipSuccess || sem_call(1, xsem[i].s, v, 0, s) != hipSuccess) {
        fail(calls, "hipMemcpyAsync + hipSignalExternalSemaphoresAsync");
        C(hipStreamSynchronize)(s);
        return;
    }
    if (psync_wait(&prod, xsem[i].h, v, 20000) != 0) {
        hipError_t qe = C(hipStreamQuery)(s);
        C(hipStreamSynchronize)(s); /* the copy still writes pinned memory */
        char what[200];
        snprintf(what, sizeof what,
                 "hipSignalExternalSemaphoresAsync: the syncobj was not signalled in 20 s (%s, point %llu, stream %s; "
                 "after a stream sync: %s)",
                 xsem[i].timeline ? "timeline" : "binary", (unsigned long long)v, hipGetErrorName(qe),
                 psync_wait(&prod, xsem[i].h, v, 0) == 0 ? "signalled" : "not signalled");
        fail(calls, what);
        return;
    }
    checked();
    if (differs(pinned, a->shadow + off, len))
        fail(calls, "a semaphore signalled before the copy queued ahead of it was done");
    if (xsem[i].timeline) {
        xsem[i].point = v;
        if (psync_point(&prod, xsem[i].h) != v)
            fail(calls, "the timeline point after hipSignalExternalSemaphoresAsync");
    } else
        xsem[i].set = 1;
    if (C(hipStreamSynchronize)(s) != hipSuccess)
        fail(calls, "hipStreamSynchronize after a signal");
}

static void op_extsem(void)
{
    if (!have_prod)
        return;
    int i = (int)below(MAXX);
    if (!xsem[i].s) {
        sem_import(i);
        return;
    }
    switch (below(6)) {
    case 0:
        sem_destroy(i);
        must_fail(C(hipDestroyExternalSemaphore)(stale_sem), "hipDestroyExternalSemaphore twice");
        break;
    case 1:
    case 2:
        sem_wait_copy(i);
        break;
    case 3:
        sem_copy_signal(i);
        break;
    case 4: { /* refused calls: flags, null arrays, stale and garbage handles, a destroyed stream */
        hipStream_t s = any_stream();
        hipExternalSemaphore_t bad = (hipExternalSemaphore_t)foreign_ptr(0);
        for (int k = 0; k < MAXX; k++)
            if (xsem[k].s == stale_sem) /* the handle's memory was reused */
                stale_sem = NULL;
        if (psem == stale_sem) /* by the partner's semaphore */
            stale_sem = NULL;
        if (below(2) && stale_sem)
            bad = stale_sem;
        if (bad) {
            must_fail(sem_call(1, bad, 1, 0, s), "hipSignalExternalSemaphoresAsync of a stale or garbage semaphore");
            must_fail(sem_call(0, bad, 1, 0, s), "hipWaitExternalSemaphoresAsync of a stale or garbage semaphore");
            must_fail(C(hipDestroyExternalSemaphore)(bad), "hipDestroyExternalSemaphore of a stale or garbage semaphore");
        }
        must_fail(sem_call(1, xsem[i].s, 1, 1 + (unsigned)below(4), s), "hipSignalExternalSemaphoresAsync with flags");
        must_fail(sem_call(0, xsem[i].s, 1, 1 + (unsigned)below(4), s), "hipWaitExternalSemaphoresAsync with flags");
        hipExternalSemaphoreSignalParams sp;
        memset(&sp, 0, sizeof sp);
        must_fail(C(hipSignalExternalSemaphoresAsync)(NULL, &sp, 1, s), "hipSignalExternalSemaphoresAsync(NULL)");
        must_fail(C(hipSignalExternalSemaphoresAsync)(&xsem[i].s, NULL, 1, s),
                  "hipSignalExternalSemaphoresAsync(params NULL)");
        for (int k = 0; k < MAXS; k++)
            if (streams[k] == stale_stream)
                stale_stream = NULL;
        if (mix_handle(stale_stream))
            stale_stream = NULL;
        if (stale_stream) {
            must_fail(sem_call(0, xsem[i].s, 1, 0, stale_stream), "hipWaitExternalSemaphoresAsync on a destroyed stream");
            must_fail(sem_call(1, xsem[i].s, 1, 0, stale_stream),
                      "hipSignalExternalSemaphoresAsync on a destroyed stream");
        }
        break;
    }
    default: { /* several semaphores in one wait, all signalled from the host in random order */
        hipExternalSemaphore_t ss[MAXX];
        hipExternalSemaphoreWaitParams wp[MAXX];
        int idx[MAXX], n = 0;
        memset(wp, 0, sizeof wp);
        for (int k = 0; k < MAXX; k++)
            if (xsem[k].s && !xsem[k].set) {
                idx[n] = k;
                ss[n] = xsem[k].s;
                wp[n].params.fence.value = sem_next(k);
                n++;
            }
        hipStream_t s = created_stream(NULL);
        struct alloc *a = pick();
        if (!n || !s || !a)
            break;
        if (C(hipWaitExternalSemaphoresAsync)(ss, wp, (unsigned)n, s) != hipSuccess) {
            fail(calls, "hipWaitExternalSemaphoresAsync of several");
            break;
        }
        size_t len = a->size < PIN_SIZE ? a->size : PIN_SIZE;
        hipError_t e = C(hipMemcpyAsync)(a->p, pinned, len, hipMemcpyHostToDevice, s);
        for (size_t k = 0; k < len; k++)
            pinned[k] = (uint8_t)rnd();
        for (int k = n - 1; k >= 0; k--) {
            psync_signal(&prod, xsem[idx[k]].h, wp[k].params.fence.value);
            if (xsem[idx[k]].timeline)
                xsem[idx[k]].point = wp[k].params.fence.value;
        }
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
        if (e != hipSuccess) {
            fail(calls, "copy after a wait on several semaphores");
            break;
        }
        memcpy(a->shadow, pinned, len);
        uint8_t *back = malloc(len);
        checked();
        if (C(hipMemcpy)(back, a->p, len, hipMemcpyDeviceToHost) != hipSuccess || differs(back, a->shadow, len))
            fail(calls, "a copy queued after a wait on several semaphores ran before the last signal");
        free(back);
        break;
    }
    }
}

/* ---- two processes: a partner process, forked before the runtime initialises, opens what this
 * one shares over a socketpair (IPC memory and event handles, VMM shareable fds, dma-bufs, a
 * syncobj fd) and works on the shared memory as asked; one request at a time, so the shadow
 * copies stay exact ---- */

enum { P_QUIT, P_IPC, P_IPC_BAD, P_EVENT, P_VMM, P_DMABUF, P_SEM, P_EXPORT, P_UNEXPORT };
enum { ACT_WRITE, ACT_FILL, ACT_READ }; /* pattern from a seed, hipMemset, read back (hash) */

struct preq {
    int cmd, act, dev, has_fd;
    uint64_t off, len, val, size, point;
    hipIpcMemHandle_t mh;
    hipIpcEventHandle_t eh;
};
struct prep {
    int e;          /* hipError_t of the call the request is about */
    uint64_t hash;  /* ACT_READ: of the bytes read */
    long calls;     /* P_QUIT: the partner's API calls; -1 when its own checks failed */
    hipIpcMemHandle_t mh; /* P_EXPORT: the handle of the partner's allocation */
};

static int psock = -1;
static pid_t partner_pid;
static long partner_calls, partner_bad;

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* ACT_WRITE's bytes: a xorshift stream from `seed`. */
static void pattern(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)x;
    }
}

static int psend(int sock, const void *m, size_t n, int fd)
{
    struct iovec iov = {(void *)m, n};
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr h;
    memset(&h, 0, sizeof h);
    memset(cbuf, 0, sizeof cbuf);
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    if (fd >= 0) {
        h.msg_control = cbuf;
        h.msg_controllen = sizeof cbuf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return sendmsg(sock, &h, 0) == (ssize_t)n;
}

/* Receives one message of n bytes (and its fd, else -1); 0 when the other side is gone. */
static int precv(int sock, void *m, size_t n, int *fd)
{
    struct iovec iov = {m, n};
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr h;
    memset(&h, 0, sizeof h);
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = cbuf;
    h.msg_controllen = sizeof cbuf;
    *fd = -1;
    if (recvmsg(sock, &h, MSG_CMSG_CLOEXEC) != (ssize_t)n)
        return 0;
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    if (c && c->cmsg_type == SCM_RIGHTS)
        memcpy(fd, CMSG_DATA(c), sizeof(int));
    return 1;
}

/* The partner's work on [p, p + len): write a pattern, fill, or read (hash into r). Synchronous. */
static hipError_t partner_act(const struct preq *q, uint8_t *p, struct prep *r)
{
    hipError_t e = hipSuccess;
    uint8_t *buf = malloc(q->len + 1);
    switch (q->act) {
    case ACT_WRITE:
        pattern(buf, q->len, q->val);
        e = C(hipMemcpy)(p, buf, q->len, hipMemcpyHostToDevice);
        break;
    case ACT_FILL:
        e = C(hipMemset)(p, (int)q->val, q->len);
        break;
    default:
        e = C(hipMemcpy)(buf, p, q->len, hipMemcpyDeviceToHost);
        r->hash = fnv(buf, q->len);
        break;
    }
    if (e == hipSuccess)
        e = C(hipDeviceSynchronize)();
    free(buf);
    return e;
}

static int partner_main(int sock)
{
    struct preq q;
    struct prep r;
    int fd;
    /* A stream per device; what an asynchronous request (P_EVENT, P_SEM) left on `st` is
     * finished at the next request. */
    hipStream_t dst[8] = {NULL}, st = NULL;
    void *open_mem = NULL;
    hipEvent_t open_ev = NULL;
    hipExternalSemaphore_t sem = NULL;
    void *exported[8] = {NULL}; /* P_EXPORT's allocations, by slot (q.off) */
    while (precv(sock, &q, sizeof q, &fd)) {
        memset(&r, 0, sizeof r);
        if (st && C(hipStreamSynchronize)(st) != hipSuccess)
            partner_bad++;
        if (open_mem && C(hipIpcCloseMemHandle)(open_mem) != hipSuccess)
            partner_bad++;
        if (open_ev && C(hipEventDestroy)(open_ev) != hipSuccess)
            partner_bad++;
        open_mem = NULL;
        open_ev = NULL;
        if (q.cmd == P_QUIT) {
            if (sem && C(hipDestroyExternalSemaphore)(sem) != hipSuccess)
                partner_bad++;
            for (int k = 0; k < 8; k++)
                if (exported[k] && C(hipFree)(exported[k]) != hipSuccess)
                    partner_bad++;
            for (int d = 0; d < 8; d++)
                if (dst[d] && C(hipStreamDestroy)(dst[d]) != hipSuccess)
                    partner_bad++;
            r.calls = partner_bad ? -1 : calls;
            psend(sock, &r, sizeof r, -1);
            return partner_bad ? 1 : 0;
        }
        if (q.dev < 0 || q.dev >= 8 || C(hipSetDevice)(q.dev) != hipSuccess) {
            partner_bad++;
            q.dev = 0;
        }
        if (!dst[q.dev] && C(hipStreamCreateWithFlags)(&dst[q.dev], hipStreamNonBlocking) != hipSuccess)
            partner_bad++;
        st = dst[q.dev];
        void *p = NULL;
        switch (q.cmd) {
        case P_IPC:
            r.e = C(hipIpcOpenMemHandle)(&p, q.mh, hipIpcMemLazyEnablePeerAccess);
            if (r.e == hipSuccess) {
                r.e = partner_act(&q, (uint8_t *)p + q.off, &r);
                if (C(hipIpcCloseMemHandle)(p) != hipSuccess)
                    partner_bad++;
            }
            break;
        case P_IPC_BAD: {
            hipEvent_t ev = NULL;
            r.e = C(hipIpcOpenMemHandle)(&p, q.mh, hipIpcMemLazyEnablePeerAccess);
            if (r.e == hipSuccess)
                C(hipIpcCloseMemHandle)(p);
            else if (C(hipIpcOpenEventHandle)(&ev, q.eh) == hipSuccess) {
                r.e = hipSuccess;
                C(hipEventDestroy)(ev);
            }
            break;
        }
        case P_EVENT:
            r.e = C(hipIpcOpenMemHandle)(&open_mem, q.mh, hipIpcMemLazyEnablePeerAccess);
            if (r.e == hipSuccess)
                r.e = C(hipIpcOpenEventHandle)(&open_ev, q.eh);
            if (r.e == hipSuccess)
                r.e = C(hipMemsetAsync)((uint8_t *)open_mem + q.off, (int)q.val, q.len, st);
            if (r.e == hipSuccess)
                r.e = C(hipEventRecord)(open_ev, st); /* replies before the fill is done */
            break;
        case P_VMM: {
            hipMemGenericAllocationHandle_t h;
            r.e = C(hipMemImportFromShareableHandle)(&h, (void *)(intptr_t)fd, hipMemHandleTypePosixFileDescriptor);
            if (r.e != hipSuccess)
                break;
            void *va = NULL;
            hipMemAccessDesc acc = vmm_access_desc(q.dev, hipMemAccessFlagsProtReadWrite);
            if ((r.e = C(hipMemAddressReserve)(&va, q.size, 0, NULL, 0)) == hipSuccess) {
                if ((r.e = C(hipMemMap)(va, q.size, 0, h, 0)) == hipSuccess) {
                    if ((r.e = C(hipMemSetAccess)(va, q.size, &acc, 1)) == hipSuccess)
                        r.e = partner_act(&q, (uint8_t *)va + q.off, &r);
                    C(hipMemUnmap)(va, q.size);
                }
                C(hipMemAddressFree)(va, q.size);
            }
            if (C(hipMemRelease)(h) != hipSuccess)
                partner_bad++;
            break;
        }
        case P_DMABUF: {
            hipExternalMemoryHandleDesc d = dmabuf_import_desc(fd, q.size);
            hipExternalMemory_t m = NULL;
            r.e = C(hipImportExternalMemory)(&m, &d);
            if (r.e != hipSuccess)
                break;
            fd = -1; /* the import owns it */
            hipExternalMemoryBufferDesc bd;
            memset(&bd, 0, sizeof bd);
            bd.size = q.size;
            if ((r.e = C(hipExternalMemoryGetMappedBuffer)(&p, m, &bd)) == hipSuccess) {
                r.e = partner_act(&q, (uint8_t *)p + q.off, &r);
                C(hipFree)(p);
            }
            if (C(hipDestroyExternalMemory)(m) != hipSuccess)
                partner_bad++;
            break;
        }
        case P_SEM:
            if (fd >= 0) { /* the syncobj, once */
                hipExternalSemaphoreHandleDesc d;
                memset(&d, 0, sizeof d);
                d.type = hipExternalSemaphoreHandleTypeTimelineSemaphoreFd;
                d.handle.fd = fd;
                if (C(hipImportExternalSemaphore)(&sem, &d) != hipSuccess)
                    partner_bad++;
                else
                    fd = -1;
            }
            r.e = C(hipIpcOpenMemHandle)(&open_mem, q.mh, hipIpcMemLazyEnablePeerAccess);
            if (r.e == hipSuccess)
                r.e = C(hipMemsetAsync)((uint8_t *)open_mem + q.off, (int)q.val, q.len, st);
            if (r.e == hipSuccess) { /* the fill, then the signal: replies before either ran */
                hipExternalSemaphoreSignalParams sp;
                memset(&sp, 0, sizeof sp);
                sp.params.fence.value = q.point;
                r.e = C(hipSignalExternalSemaphoresAsync)(&sem, &sp, 1, st);
            }
            break;
        case P_EXPORT: /* a fresh allocation filled with one byte, for us to open (op_import) */
            if (q.off >= 8 || exported[q.off]) {
                partner_bad++;
                r.e = hipErrorInvalidValue;
                break;
            }
            r.e = C(hipMalloc)(&p, q.size);
            if (r.e == hipSuccess && (r.e = C(hipMemset)(p, (int)q.val, q.size)) == hipSuccess &&
                (r.e = C(hipDeviceSynchronize)()) == hipSuccess)
                r.e = C(hipIpcGetMemHandle)(&r.mh, p);
            if (r.e == hipSuccess)
                exported[q.off] = p;
            else if (p)
                C(hipFree)(p);
            break;
        case P_UNEXPORT:
            if (q.off >= 8 || !exported[q.off]) {
                partner_bad++;
                r.e = hipErrorInvalidValue;
                break;
            }
            r.e = C(hipFree)(exported[q.off]);
            exported[q.off] = NULL;
            break;
        default:
            partner_bad++;
            break;
        }
        if (fd >= 0)
            close(fd);
        if (!psend(sock, &r, sizeof r, -1))
            return 1;
    }
    return 1;
}

/* Every device idle: the partner's work on shared memory then races nothing of ours. */
static void sync_all(void)
{
    for (int d = 0; d < ndev; d++) {
        C(hipSetDevice)(d);
        C(hipDeviceSynchronize)();
    }
    C(hipSetDevice)(cur_dev);
}

static struct prep ask(struct preq *q, int fd)
{
    struct prep r;
    int rfd;
    memset(&r, 0, sizeof r);
    if (!psend(psock, q, sizeof *q, fd) || !precv(psock, &r, sizeof r, &rfd)) {
        fail(calls, "the partner process is gone");
        close(psock);
        psock = -1;
        r.e = hipErrorUnknown;
    }
    return r;
}

/* The request's action on [off, +len) of memory whose shadow is sh: the expected effect. */
static void plan_act(struct preq *q, size_t room)
{
    q->act = (int)below(3);
    q->off = below(room);
    q->len = below(room - q->off + 1);
    q->val = rnd();
    q->dev = (int)below((size_t)ndev);
}

/* After the partner's answer: the shadow takes its write, a read must match the shadow. */
static void apply_act(const struct preq *q, const struct prep *r, uint8_t *sh, const char *what)
{
    char msg[128];
    if (r->e != hipSuccess) {
        snprintf(msg, sizeof msg, "partner: %s: %s", what, hipGetErrorName((hipError_t)r->e));
        fail(calls, msg);
        return;
    }
    if (q->act == ACT_WRITE)
        pattern(sh + q->off, q->len, q->val);
    else if (q->act == ACT_FILL)
        memset(sh + q->off, (int)(uint8_t)q->val, q->len);
    else {
        data_checks++;
        if (r->hash != fnv(sh + q->off, q->len)) {
            snprintf(msg, sizeof msg, "partner: %s: the bytes read differ from the shadow", what);
            fail(calls, msg);
        }
    }
}

#define MAXSTALEH 8
static hipIpcMemHandle_t stale_mh[MAXSTALEH];
static const uint8_t *stale_mh_owner[MAXSTALEH]; /* NULL once hipFree'd (op_free) */
static int nstale_mh;
static hipIpcEventHandle_t stale_eh;
static int have_stale_eh;
static uint32_t psem_h;       /* the syncobj shared with the partner (prod's file) */
static uint64_t psem_point;
static int psem_sent;

static void op_partner(void)
{
    if (psock < 0)
        return;
    struct alloc *a = pick();
    struct preq q;
    struct prep r;
    memset(&q, 0, sizeof q);
    sync_all();
    int op = (int)below(7);
    if (a && a->kind != ALLOC_DEVICE && (op <= 1 || op == 3 || op == 6))
        return;
    switch (op) {
    case 0:
    case 1: { /* IPC memory, at an interior pointer sometimes */
        if (!a)
            return;
        size_t ioff = below(2) ? below(a->size) : 0;
        if (C(hipIpcGetMemHandle)(&q.mh, a->p + ioff) != hipSuccess) {
            fail(calls, "hipIpcGetMemHandle of a live hipMalloc");
            return;
        }
        q.cmd = P_IPC;
        plan_act(&q, a->size - ioff);
        r = ask(&q, -1);
        apply_act(&q, &r, a->shadow + ioff, "hipIpcOpenMemHandle + work");
        if (nstale_mh < MAXSTALEH && !below(4)) { /* freed later: kept as a stale handle */
            int k = nstale_mh;
            for (int j = 0; j < nstale_mh; j++)
                if (!memcmp(&stale_mh[j], &q.mh, sizeof q.mh))
                    k = -1;
            if (k >= 0) {
                stale_mh_owner[nstale_mh] = a->p;
                stale_mh[nstale_mh++] = q.mh;
            }
        }
        break;
    }
    case 2: { /* forged and stale handles: both opens must fail */
        q.cmd = P_IPC_BAD;
        int which = (int)below(3);
        uint8_t *b = (uint8_t *)&q.mh;
        int k = nstale_mh ? (int)below((size_t)nstale_mh) : -1;
        if (which == 2 && (k < 0 || stale_mh_owner[k]))
            which = 0; /* its allocation is live still */
        if (which == 0 || (which == 1 && (!a || a->kind != ALLOC_DEVICE))) {
            for (size_t k = 0; k < sizeof q.mh; k++)
                b[k] = (uint8_t)rnd();
        } else if (which == 1) { /* a live handle with one byte changed */
            C(hipIpcGetMemHandle)(&q.mh, a->p);
            b[8 + below(32)] ^= (uint8_t)(1 + below(255)); /* exporter id or token */
        } else {
            q.mh = stale_mh[k];
        }
        if (have_stale_eh && below(2))
            q.eh = stale_eh;
        else
            for (size_t k = 0; k < sizeof q.eh; k++)
                ((uint8_t *)&q.eh)[k] = (uint8_t)rnd();
        r = ask(&q, -1);
        must_fail((hipError_t)r.e, "partner: hipIpcOpenMemHandle/hipIpcOpenEventHandle of a forged or stale handle");
        break;
    }
    case 3: { /* the partner fills, records an IPC event; we wait for the event, then read */
        if (!a)
            return;
        hipEvent_t ev;
        C(hipSetDevice)(a->dev);
        if (C(hipEventCreateWithFlags)(&ev, hipEventDisableTiming | hipEventInterprocess) != hipSuccess) {
            fail(calls, "hipEventCreateWithFlags(interprocess)");
            break;
        }
        if (C(hipIpcGetEventHandle)(&q.eh, ev) != hipSuccess || C(hipIpcGetMemHandle)(&q.mh, a->p) != hipSuccess) {
            fail(calls, "hipIpcGetEventHandle/hipIpcGetMemHandle");
            C(hipEventDestroy)(ev);
            break;
        }
        q.cmd = P_EVENT;
        plan_act(&q, a->size);
        q.act = ACT_FILL;
        r = ask(&q, -1);
        if (r.e == hipSuccess) {
            hipError_t e = below(2) ? C(hipEventSynchronize)(ev) : C(hipStreamWaitEvent)(NULL, ev, 0);
            uint8_t *back = malloc(q.len + 1);
            memset(a->shadow + q.off, (int)(uint8_t)q.val, q.len);
            data_checks++;
            if (e != hipSuccess || C(hipMemcpy)(back, a->p + q.off, q.len, hipMemcpyDeviceToHost) != hipSuccess ||
                differs(back, a->shadow + q.off, q.len))
                fail(calls, "partner's fill before its IPC event record not seen after the event");
            free(back);
        } else
            apply_act(&q, &r, a->shadow, "IPC event");
        if (C(hipEventDestroy)(ev) != hipSuccess)
            fail(calls, "hipEventDestroy of an IPC event");
        stale_eh = q.eh;
        have_stale_eh = 1;
        C(hipSetDevice)(cur_dev);
        break;
    }
    case 4: { /* VMM: a shareable fd; the partner maps it and works on it */
        int dev = (int)below((size_t)ndev);
        hipMemAllocationProp prop = vmm_device_prop(dev);
        size_t gran = 0;
        C(hipMemGetAllocationGranularity)(&gran, &prop, hipMemAllocationGranularityMinimum);
        size_t size = gran * (1 + below(3));
        hipMemGenericAllocationHandle_t h;
        if (!gran || C(hipMemCreate)(&h, size, &prop, 0) != hipSuccess) {
            fail(calls, "hipMemCreate (shareable)");
            break;
        }
        void *va = NULL;
        int fd = -1;
        hipMemAccessDesc acc = vmm_access_desc(dev, hipMemAccessFlagsProtReadWrite);
        uint8_t *sh = malloc(size), v = (uint8_t)rnd();
        memset(sh, v, size);
        if (C(hipMemAddressReserve)(&va, size, 0, NULL, 0) != hipSuccess || C(hipMemMap)(va, size, 0, h, 0) != hipSuccess ||
            C(hipMemSetAccess)(va, size, &acc, 1) != hipSuccess || C(hipMemset)(va, v, size) != hipSuccess ||
            C(hipMemExportToShareableHandle)(&fd, h, hipMemHandleTypePosixFileDescriptor, 0) != hipSuccess) {
            fail(calls, "VMM create, map, fill, export");
        } else {
            C(hipDeviceSynchronize)();
            q.cmd = P_VMM;
            q.size = size;
            plan_act(&q, size);
            r = ask(&q, fd);
            close(fd);
            apply_act(&q, &r, sh, "VMM import + work");
            uint8_t *back = malloc(size);
            data_checks++;
            if (C(hipMemcpy)(back, va, size, hipMemcpyDeviceToHost) != hipSuccess || differs(back, sh, size))
                fail(calls, "VMM memory after the partner's work differs from the shadow");
            free(back);
        }
        if (va) {
            C(hipMemUnmap)(va, size);
            C(hipMemAddressFree)(va, size);
        }
        if (C(hipMemRelease)(h) != hipSuccess)
            fail(calls, "hipMemRelease");
        free(sh);
        C(hipSetDevice)(cur_dev);
        break;
    }
    case 5: { /* a dma-buf of an allocation, imported by the partner as external memory */
        if (!a || a->kind == ALLOC_ASYNC)
            return;
        size_t size = (a->size + 4095) & ~(size_t)4095;
        int fd = -1;
        if (C(hipMemGetHandleForAddressRange)(&fd, (hipDeviceptr_t)a->p, size, hipMemRangeHandleTypeDmaBufFd, 0) !=
            hipSuccess)
            return; /* small allocations share a block: not every one can be exported */
        q.cmd = P_DMABUF;
        q.size = size;
        plan_act(&q, a->size);
        r = ask(&q, fd);
        close(fd);
        apply_act(&q, &r, a->shadow, "dma-buf import + work");
        break;
    }
    default: { /* the partner fills then signals a timeline syncobj; we wait on the GPU, then copy */
        hipStream_t s = created_stream(NULL);
        if (!a || !have_prod || !s)
            return;
        int fd = -1;
        if (!psem) {
            int myfd = -1;
            psem_h = psync_create(&prod, &myfd);
            hipExternalSemaphoreHandleDesc d;
            memset(&d, 0, sizeof d);
            d.type = hipExternalSemaphoreHandleTypeTimelineSemaphoreFd;
            d.handle.fd = myfd;
            if (C(hipImportExternalSemaphore)(&psem, &d) != hipSuccess) {
                fail(calls, "hipImportExternalSemaphore (shared with the partner)");
                close(myfd);
                psem = NULL;
                return;
            }
        }
        if (!psem_sent) {
            drmSyncobjHandleToFD(prod.fd, psem_h, &fd);
            psem_sent = 1;
        }
        if (C(hipIpcGetMemHandle)(&q.mh, a->p) != hipSuccess) {
            fail(calls, "hipIpcGetMemHandle");
            if (fd >= 0)
                close(fd);
            return;
        }
        q.cmd = P_SEM;
        plan_act(&q, a->size);
        q.point = ++psem_point;
        size_t len = q.len < PIN_SIZE ? q.len : PIN_SIZE;
        if (sem_call(0, psem, q.point, 0, s) != hipSuccess) {
            fail(calls, "hipWaitExternalSemaphoresAsync (partner's semaphore)");
            if (fd >= 0)
                close(fd);
            return;
        }
        hipError_t e = C(hipMemcpyAsync)(pinned, a->p + q.off, len, hipMemcpyDeviceToHost, s);
        r = ask(&q, fd);
        if (fd >= 0)
            close(fd);
        if (r.e != hipSuccess) {
            fail(calls, "partner: fill + hipSignalExternalSemaphoresAsync");
            psync_signal(&prod, psem_h, q.point); /* release our stream */
        } else
            memset(a->shadow + q.off, (int)(uint8_t)q.val, q.len);
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
        data_checks++;
        if (e != hipSuccess || differs(pinned, a->shadow + q.off, len))
            fail(calls, "a copy after a wait on the partner's semaphore ran before the partner's fill");
        break;
    }
    }
}

/* hipFree(p): the IPC handles kept of p are stale now. */
static void forget_ipc_owner(const uint8_t *p)
{
    for (int k = 0; k < nstale_mh; k++)
        if (stale_mh_owner[k] == p)
            stale_mh_owner[k] = NULL;
}

/* Ends the partner: its answer and exit status. */
static void partner_end(void)
{
    if (psock < 0 || !partner_pid)
        return;
    struct preq q;
    memset(&q, 0, sizeof q);
    q.cmd = P_QUIT;
    struct prep r = ask(&q, -1);
    int status = 0;
    pid_t pid = partner_pid;
    partner_pid = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        r.calls < 0)
        fail(calls, "the partner process failed its own checks");
    partner_calls = r.calls > 0 ? r.calls : 0;
    /* psock stays open: it was in the fd baseline */
}

/* ---- op_peer_mix and op_import (issue 37): legacy null-stream work left running across
 * devices (nothing settled between steps): copies whose current device owns one side, both
 * (a copy within one GPU issued from another) or neither (hipMemcpy DeviceToDevice/Default,
 * hipMemcpyPeer, hipMemcpyPeerAsync), fills (hipMemset, hipMemsetD16/D32, hipMemsetAsync),
 * host writes, peer access enabled and disabled at random while those copies run, IPC imports
 * of the partner's allocations (PROCESSES 2) as sources and destinations, and a chain on two
 * blocking streams of one device, H2D on s1 → hipEventRecord → hipStreamWaitEvent(s2) → D2D on
 * s2 → D2H on s2, with other steps in between, then both streams synchronized. Every
 * synchronous device-to-host read is checked against the shadow when it returns, and every
 * buffer of the operation once every device is synchronized.
 *
 * Why the shadows stay exact with nothing waited for: each step is null-stream work, or work of
 * a blocking stream of the memory's device (legacy semantics order it with that device's null
 * stream), on memory of some device B, which is ordered like B's null-stream work whatever
 * device is current (clr runs it on B's null stream); or a copy between two devices, which is
 * ordered after the earlier work of both and before their later work (hipMemcpyPeer as
 * cudaMemcpyPeer, cross-device hipMemcpy likewise; hipMemcpyPeerAsync, which CUDA leaves
 * unordered with other devices, is fenced here with events both ways). So the work on B's memory
 * runs in the order of the calls, and a synchronous read of it (ordered like B's null-stream
 * work too) sees the shadow of the moment it is made. Two blocking streams of one device are not
 * ordered with each other: the chain's s2 waits for s1 through the event, only s1 takes other
 * work (hipMemsetAsync, hipMemcpyPeerAsync) and only outside a chain, and a chain ends with
 * both streams synchronized. An import is its own buffer: nothing else writes the partner's
 * allocation, so its shadow is kept while it is closed and reopened. ---- */

#define MAXI 4
static struct alloc imp[MAXI]; /* kind ALLOC_IPC; size 0: no export in the slot; p NULL: closed */
static hipIpcMemHandle_t imp_mh[MAXI];
static uint8_t *imp_base[MAXI]; /* the VA range the open import takes (hipMemGetAddressRange) */
static size_t imp_span[MAXI];
static int imported; /* an import was opened */
static hipStream_t mix_s[8][2]; /* per device: the chain's s1 and s2 (blocking streams) */
static hipEvent_t mix_ev[8], chain_ev[8];
static int peer_on[8][8]; /* the model: device a has enabled access to device b */
static int mix_null_only; /* FUZZ_MIX=null: no chain, no blocking stream (null-stream work only) */
static const char *mix_op = "op_peer_mix"; /* the operation, in failure messages */

/* The sockets whose peer has hung up, but for the one to the partner. */
static int hung_sockets(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) {
        if (fd == psock)
            continue;
        char path[64], target[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = 0;
        struct pollfd pf = {.fd = fd, .events = POLLIN | POLLRDHUP};
        if (!strncmp(target, "socket:", 7) && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLRDHUP)))
            n++;
    }
    return n;
}

static int in_import(const uint8_t *p)
{
    for (int i = 0; i < MAXI; i++)
        if (imp[i].p && p >= imp_base[i] && p < imp_base[i] + imp_span[i])
            return 1;
    return 0;
}

/* After hipDeviceEnablePeerAccess (enable) or hipDeviceDisablePeerAccess of b on device a:
 * the model follows the answer, which must agree with it. */
static void peer_note(int a, int b, hipError_t e, int enable)
{
    char what[128];
    int can = 0;
    hipDeviceCanAccessPeer(&can, a, b);
    if ((e == hipSuccess && peer_on[a][b] == enable) || (e == hipErrorPeerAccessAlreadyEnabled && !peer_on[a][b]) ||
        (e == hipErrorPeerAccessNotEnabled && peer_on[a][b]) ||
        (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled && e != hipErrorPeerAccessNotEnabled && can)) {
        snprintf(what, sizeof what, "hipDevice%sPeerAccess(%d) on device %d: %s, access was %s", enable ? "Enable" : "Disable",
                 b, a, hipGetErrorName(e), peer_on[a][b] ? "enabled" : "disabled");
        fail(calls, what);
    }
    if (e == hipSuccess)
        peer_on[a][b] = enable;
    else if (e == hipErrorPeerAccessAlreadyEnabled)
        peer_on[a][b] = 1;
    else if (e == hipErrorPeerAccessNotEnabled)
        peer_on[a][b] = 0;
}

/* Whether h is one of op_peer_mix's streams or events (a destroyed handle's memory reused). */
static int mix_handle(const void *h)
{
    for (int d = 0; h && d < 8; d++)
        if (h == mix_s[d][0] || h == mix_s[d][1] || h == mix_ev[d] || h == chain_ev[d])
            return 1;
    return 0;
}

static void set_cur(int d)
{
    if (C(hipSetDevice)(d) != hipSuccess)
        fail(calls, "hipSetDevice of a valid ordinal");
    cur_dev = d;
}

/* A buffer's name in the step log: L<index in live> or I<import slot>, its device and address. */
static const char *bname(const struct alloc *a)
{
    static char b[4][64];
    static int k;
    char *s = b[k++ % 4];
    if (a->kind == ALLOC_IPC)
        snprintf(s, 64, "I%d(dev %d, %p, %zu B)", (int)(a - imp), a->dev, (void *)a->p, a->size);
    else
        snprintf(s, 64, "L%d(dev %d, %p, %zu B)", (int)(a - live), a->dev, (void *)a->p, a->size);
    return s;
}

/* This operation's steps, numbered, printed with its failures. */
static char mixlog[16384];
static size_t mixlen;
static int mixstep;

static void mlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mlog(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (mixlen < sizeof mixlog - 1) {
        int k = snprintf(mixlog + mixlen, sizeof mixlog - mixlen, "%4d", ++mixstep);
        mixlen = k < 0 ? mixlen : mixlen + (size_t)k < sizeof mixlog ? mixlen + (size_t)k : sizeof mixlog - 1;
        k = vsnprintf(mixlog + mixlen, sizeof mixlog - mixlen, fmt, ap);
        mixlen = k < 0 ? mixlen : mixlen + (size_t)k < sizeof mixlog ? mixlen + (size_t)k : sizeof mixlog - 1;
    }
    va_end(ap);
    if (trace > 2) {
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
}

/* The writes of this operation so far, with the bytes each left (NULL past a budget), for the
 * failure reports: which step's bytes a read saw instead of which. */
#define MAXHW 96
static struct {
    const struct alloc *a, *src; /* src: a copy's source, else NULL */
    size_t off, len, soff;
    uint8_t *bytes;
    int step;
} hw[MAXHW];
static int nhw;
static size_t hw_bytes;

static void hw_clear(void)
{
    for (int k = 0; k < nhw; k++)
        free(hw[k].bytes);
    nhw = 0;
    hw_bytes = 0;
}

/* Where the m bytes `got` read at a+x came from: the step whose bytes belong there before step
 * `before` (want) and the step whose bytes they are (got); where want is a copy, the same
 * question about its source at the time of the copy, up to `depth` copies back. */
static void provenance_at(const struct alloc *a, size_t x, const uint8_t *got, size_t m, int before, int depth)
{
    int w = -1, gstep = 0;
    for (int k = nhw - 1; k >= 0; k--) {
        if (hw[k].step >= before || hw[k].a != a || x < hw[k].off || x >= hw[k].off + hw[k].len)
            continue;
        if (w < 0)
            w = k;
        size_t n = hw[k].off + hw[k].len - x < m ? hw[k].off + hw[k].len - x : m;
        if (hw[k].bytes && !memcmp(got, hw[k].bytes + (x - hw[k].off), n)) {
            gstep = hw[k].step;
            break;
        }
    }
    printf(" %s+%zu", bname(a), x);
    if (w < 0)
        printf(" wants bytes from before this operation");
    else
        printf(" wants the bytes of step %d", hw[w].step);
    if (gstep) {
        printf(", got those of step %d\n", gstep);
        return;
    }
    if (w >= 0 && hw[w].src && depth > 0) {
        size_t sx = hw[w].soff + (x - hw[w].off);
        printf(", got none this operation wrote there; step %d copied them from", hw[w].step);
        provenance_at(hw[w].src, sx, got, m, hw[w].step, depth - 1);
        return;
    }
    printf(", got none this operation wrote there (older bytes, or others)\n");
}

/* The provenance of the first and the last byte where got differs from want (a's bytes at off),
 * read at step `at`. */
static void provenance(const struct alloc *a, size_t off, const uint8_t *got, const uint8_t *want, size_t len, int at)
{
    size_t first = len, last = len;
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i]) {
            if (first == len)
                first = i;
            last = i;
        }
    for (int pass = 0; pass < 2 && first < len; pass++) {
        size_t i = pass ? last : first, m = len - i < 16 ? len - i : 16;
        printf("  %s differing byte:", pass ? "the last" : "the first");
        provenance_at(a, off + i, got + i, m, at, 4);
        if (first == last)
            break;
    }
}

static void mix_fail(const char *what)
{
    long before = bad;
    fail(calls, what);
    if (before < 3)
        printf("  the steps of this operation so far:\n%s", mixlog);
}

/* mix_fail for a read of [off, +len) of a, made at step `at`, that got `got` instead of `want`. */
static void mix_fail_data(const char *what, const struct alloc *a, size_t off, const uint8_t *got, const uint8_t *want,
                          size_t len, int at)
{
    long before = bad;
    mix_fail(what);
    if (before < 3)
        provenance(a, off, got, want, len, at);
}

/* The device's chain stream k (created on first use), or the null stream if it cannot be made. */
static hipStream_t mix_stream(int d, int k)
{
    if (!mix_s[d][k]) {
        int was = cur_dev;
        set_cur(d);
        if (C(hipStreamCreate)(&mix_s[d][k]) != hipSuccess) {
            fail(calls, "hipStreamCreate");
            mix_s[d][k] = NULL;
        }
        set_cur(was);
    }
    return mix_s[d][k];
}

static hipEvent_t mix_event(hipEvent_t *ev, int d)
{
    if (!ev[d]) {
        int was = cur_dev;
        set_cur(d);
        if (C(hipEventCreateWithFlags)(&ev[d], hipEventDisableTiming) != hipSuccess) {
            fail(calls, "hipEventCreateWithFlags");
            ev[d] = NULL;
        }
        set_cur(was);
    }
    return ev[d];
}

/* The buffers the operation works on (device hipMalloc and open imports), and the last range
 * written, which reads favour. */
#define MAXW 5
static struct alloc *mixw[MAXW];
static int nmixw;
static struct alloc *lw;
static size_t lw_off, lw_len;

static void wrote_copy(struct alloc *a, size_t off, size_t len, const struct alloc *src, size_t soff)
{
    if (!len)
        return;
    lw = a;
    lw_off = off;
    lw_len = len;
    if (nhw == MAXHW)
        return;
    hw[nhw].a = a;
    hw[nhw].src = src;
    hw[nhw].soff = soff;
    hw[nhw].off = off;
    hw[nhw].len = len;
    hw[nhw].step = mixstep;
    hw[nhw].bytes = hw_bytes + len <= (64 << 20) ? malloc(len) : NULL;
    if (hw[nhw].bytes) {
        memcpy(hw[nhw].bytes, a->shadow + off, len);
        hw_bytes += len;
    }
    nhw++;
}

static void wrote(struct alloc *a, size_t off, size_t len) { wrote_copy(a, off, len, NULL, 0); }

static struct alloc *mix_pick(void) { return (struct alloc *)(last_pick = mixw[below((size_t)nmixw)]); }

/* A buffer of the working set on device d other than `not`, or NULL. */
static struct alloc *mix_pick_on(int d, const struct alloc *not)
{
    for (int k = 0, i = (int)below((size_t)nmixw); k < nmixw; k++, i = (i + 1) % nmixw)
        if (mixw[i]->dev == d && mixw[i] != not)
            return mixw[i];
    return NULL;
}

/* The current device for work on memory of devices x and y: as it is, x, y, or one owning
 * neither side (with 3 or more GPUs, or for one GPU's memory). */
static int pick_cur(int x, int y)
{
    switch (below(4)) {
    case 0:
        return cur_dev;
    case 1:
        return x;
    case 2:
        return y;
    default: {
        int c = (int)below((size_t)ndev);
        for (int k = 0; k < ndev; k++, c = (c + 1) % ndev)
            if (c != x && c != y)
                return c;
        return cur_dev;
    }
    }
}

static size_t mix_len(size_t max)
{
    return below(4) ? below((max < 65536 ? max : 65536) + 1) : below(max + 1);
}

/* Reads [off, +len) of a synchronously on the current device and compares it with `want`. */
static void mix_check(struct alloc *a, size_t off, size_t len, const uint8_t *want, const char *how)
{
    uint8_t *dst = malloc(len + 1);
    int kind = (int)below(2);
    last_pick = a;
    hipError_t e = C(hipMemcpy)(dst, a->p + off, len, kind ? hipMemcpyDeviceToHost : hipMemcpyDefault);
    mlog("    %s: hipMemcpy(host, %s+%zu, %zu, %s), device %d current\n", how, bname(a), off, len,
         kind ? "DeviceToHost" : "Default", cur_dev);
    char what[256];
    if (e != hipSuccess) {
        snprintf(what, sizeof what, "%s: %s: hipMemcpy device to host: %s", mix_op, how, hipGetErrorName(e));
        mix_fail(what);
    } else if (data_checks++, differs(dst, want, len)) {
        snprintf(what, sizeof what, "%s: %s: %s [%zu, +%zu) read with device %d current differs from the shadow", mix_op,
                 how, bname(a), off, len, cur_dev);
        mix_fail_data(what, a, off, dst, want, len, mixstep);
    }
    free(dst);
}

static void mix_read(void)
{
    struct alloc *a = lw && below(3) ? lw : mix_pick();
    size_t off, len;
    if (a == lw && lw) { /* around the last range written */
        size_t pre = below((lw_off < 4096 ? lw_off : 4096) + 1);
        off = lw_off - pre;
        len = pre + lw_len + below(4097);
        if (len > a->size - off)
            len = a->size - off;
    } else
        range(a, &off, &len);
    set_cur(below(2) ? cur_dev : (int)below((size_t)ndev));
    mix_check(a, off, len, a->shadow + off, "read");
}

static void mix_toggle(void)
{
    if (ndev < 2)
        return;
    int a = (int)below((size_t)ndev), b = (a + 1 + (int)below((size_t)ndev - 1)) % ndev;
    set_cur(a);
    int en = below(4) ? !peer_on[a][b] : (int)below(2);
    hipError_t e = en ? C(hipDeviceEnablePeerAccess)(b, 0) : C(hipDeviceDisablePeerAccess)(b);
    mlog("    device %d current: hipDevice%sPeerAccess(%d): %s\n", a, en ? "Enable" : "Disable", b, hipGetErrorName(e));
    peer_note(a, b, e, en);
}

/* hipMemcpyPeerAsync on the current device's null stream or s1, fenced with events: it waits
 * for the earlier work of both sides' devices, and their null streams wait for it. */
static hipError_t peer_async(struct alloc *b, size_t doff, struct alloc *a, size_t so, size_t len, int in_chain)
{
    int A = cur_dev, devs[2] = {a->dev, b->dev};
    hipStream_t s = !in_chain && !mix_null_only && below(2) ? mix_stream(A, 0) : NULL;
    hipError_t e = hipSuccess;
    for (int k = 0; k < 2; k++) {
        int d = devs[k];
        if (d == A || (k == 1 && d == devs[0]))
            continue;
        set_cur(d);
        hipEvent_t ev = mix_event(mix_ev, d);
        if (!ev || C(hipEventRecord)(ev, NULL) != hipSuccess)
            fail(calls, "hipEventRecord on a null stream");
        set_cur(A);
        if (ev && C(hipStreamWaitEvent)(s, ev, 0) != hipSuccess)
            fail(calls, "hipStreamWaitEvent of another device's event");
    }
    e = C(hipMemcpyPeerAsync)(b->p + doff, b->dev, a->p + so, a->dev, len, s);
    mlog("    device %d current: hipMemcpyPeerAsync(%s+%zu, %d, %s+%zu, %d, %zu, %s)%s\n", A, bname(b), doff, b->dev,
         bname(a), so, a->dev, len, s ? "s1" : "null stream", devs[0] != A || devs[1] != A ? " between event waits" : "");
    hipEvent_t ev = mix_event(mix_ev, A);
    if (!ev || C(hipEventRecord)(ev, s) != hipSuccess)
        fail(calls, "hipEventRecord after hipMemcpyPeerAsync");
    for (int k = 0; k < 2; k++) {
        int d = devs[k];
        if (d == A || (k == 1 && d == devs[0]))
            continue;
        set_cur(d);
        if (ev && C(hipStreamWaitEvent)(NULL, ev, 0) != hipSuccess)
            fail(calls, "hipStreamWaitEvent of another device's event on the null stream");
    }
    return e;
}

static void mix_copy(int in_chain)
{
    struct alloc *a = mix_pick(), *b = mix_pick();
    if (a == b)
        return;
    size_t len = mix_len(a->size < b->size ? a->size : b->size);
    size_t so = below(a->size - len + 1), doff = below(b->size - len + 1);
    set_cur(pick_cur(a->dev, b->dev));
    hipError_t e;
    int how = (int)below(5);
    if (how == 3 && a->dev != b->dev)
        how = 4;
    switch (how) {
    case 0:
    case 1: {
        int k = (int)below(2);
        e = C(hipMemcpy)(b->p + doff, a->p + so, len, k ? hipMemcpyDeviceToDevice : hipMemcpyDefault);
        mlog("    device %d current: hipMemcpy(%s+%zu, %s+%zu, %zu, %s)\n", cur_dev, bname(b), doff, bname(a), so, len,
             k ? "DeviceToDevice" : "Default");
        break;
    }
    case 2:
        e = C(hipMemcpyPeer)(b->p + doff, b->dev, a->p + so, a->dev, len);
        mlog("    device %d current: hipMemcpyPeer(%s+%zu, %d, %s+%zu, %d, %zu)\n", cur_dev, bname(b), doff, b->dev,
             bname(a), so, a->dev, len);
        break;
    case 3: /* one GPU's memory: the null stream of the current device, which may be another */
        e = C(hipMemcpyAsync)(b->p + doff, a->p + so, len, hipMemcpyDeviceToDevice, NULL);
        mlog("    device %d current: hipMemcpyAsync(%s+%zu, %s+%zu, %zu, DeviceToDevice, null stream)\n", cur_dev,
             bname(b), doff, bname(a), so, len);
        break;
    default:
        e = peer_async(b, doff, a, so, len, in_chain);
        break;
    }
    last_pick = b;
    if (e != hipSuccess) {
        char what[128];
        snprintf(what, sizeof what, "op_peer_mix: in-bounds device-to-device copy: %s", hipGetErrorName(e));
        mix_fail(what);
    } else {
        memmove(b->shadow + doff, a->shadow + so, len);
        wrote_copy(b, doff, len, a, so);
    }
}

static void mix_fill(int in_chain)
{
    struct alloc *a = mix_pick();
    set_cur(pick_cur(a->dev, a->dev));
    size_t off, len, w = 1;
    int how = (int)below(5);
    uint32_t v = (uint32_t)rnd();
    hipError_t e;
    if (how == 1 || how == 2) { /* elements: an aligned start */
        w = how == 1 ? 2 : 4;
        off = below(a->size / w) * w;
        len = below((a->size - off) / w + 1) * w;
    } else
        range(a, &off, &len);
    hipStream_t s = NULL;
    switch (how) {
    case 0:
        e = C(hipMemset)(a->p + off, (int)(uint8_t)v, len);
        mlog("    device %d current: hipMemset(%s+%zu, %#x, %zu)\n", cur_dev, bname(a), off, (uint8_t)v, len);
        break;
    case 1:
        e = C(hipMemsetD16)((hipDeviceptr_t)(a->p + off), (uint16_t)v, len / 2);
        mlog("    device %d current: hipMemsetD16(%s+%zu, %#x, %zu)\n", cur_dev, bname(a), off, (uint16_t)v, len / 2);
        break;
    case 2:
        e = C(hipMemsetD32)((hipDeviceptr_t)(a->p + off), (int)v, len / 4);
        mlog("    device %d current: hipMemsetD32(%s+%zu, %#x, %zu)\n", cur_dev, bname(a), off, v, len / 4);
        break;
    default:
        s = in_chain || mix_null_only || below(2) ? NULL : mix_stream(a->dev, 0);
        e = C(hipMemsetAsync)(a->p + off, (int)(uint8_t)v, len, s);
        mlog("    device %d current: hipMemsetAsync(%s+%zu, %#x, %zu, %s)\n", cur_dev, bname(a), off, (uint8_t)v, len,
             s ? "s1 of its device" : "null stream");
        break;
    }
    last_pick = a;
    if (e != hipSuccess) {
        char what[128];
        snprintf(what, sizeof what, "op_peer_mix: in-bounds fill: %s", hipGetErrorName(e));
        mix_fail(what);
        return;
    }
    for (size_t i = 0; i < len; i++)
        a->shadow[off + i] = (uint8_t)(v >> 8 * (i % w));
    wrote(a, off, len);
}

static void mix_write(void)
{
    struct alloc *a = mix_pick();
    size_t off, len;
    range(a, &off, &len);
    set_cur(pick_cur(a->dev, a->dev));
    uint8_t *src = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        src[i] = (uint8_t)rnd();
    hipError_t e;
    if (below(2)) {
        e = C(hipMemcpy)(a->p + off, src, len, hipMemcpyHostToDevice);
        mlog("    device %d current: hipMemcpy(%s+%zu, host, %zu, HostToDevice)\n", cur_dev, bname(a), off, len);
    } else {
        e = C(hipMemcpyAsync)(a->p + off, src, len, hipMemcpyDefault, NULL);
        mlog("    device %d current: hipMemcpyAsync(%s+%zu, host, %zu, Default, null stream)\n", cur_dev, bname(a), off, len);
    }
    last_pick = a;
    if (e != hipSuccess)
        mix_fail("op_peer_mix: in-bounds host-to-device copy");
    else {
        memcpy(a->shadow + off, src, len);
        wrote(a, off, len);
    }
    free(src);
}

static void import_open(int i);
static void mix_step(int in_chain);

/* 0 to 2 other steps between two of the chain's. */
static void interleave(void)
{
    for (int k = (int)below(3); k > 0; k--)
        mix_step(1);
}

/* H2D on s1 → event → s2 waits → D2D on s2 → D2H on s2, on blocking streams of one device
 * and memory of that device, other steps in between; the D2H's bytes are checked once both
 * streams are synchronized. */
static void mix_chain(void)
{
    int d = (int)below((size_t)ndev);
    struct alloc *t = NULL, *z = NULL;
    for (int k = 0; k < ndev && !z; k++, d = (d + 1) % ndev) /* a device with two buffers */
        if ((t = mix_pick_on(d, NULL)))
            z = mix_pick_on(d, t);
    if (!z)
        return;
    d = z->dev;
    hipStream_t s1 = mix_stream(d, 0), s2 = mix_stream(d, 1);
    hipEvent_t ev = mix_event(chain_ev, d);
    if (!s1 || !s2 || !ev)
        return;
    char what[160];
    mlog("    chain on device %d (s1 %p, s2 %p):\n", d, (void *)s1, (void *)s2);
    /* 1: host to t on s1 */
    size_t to, tn;
    range(t, &to, &tn);
    uint8_t *src = malloc(tn + 1);
    for (size_t i = 0; i < tn; i++)
        src[i] = (uint8_t)rnd();
    set_cur(below(2) ? d : (int)below((size_t)ndev));
    int k = (int)below(2);
    hipError_t e = C(hipMemcpyAsync)(t->p + to, src, tn, k ? hipMemcpyHostToDevice : hipMemcpyDefault, s1);
    mlog("    device %d current: hipMemcpyAsync(%s+%zu, host, %zu, %s, s1)\n", cur_dev, bname(t), to, tn,
         k ? "HostToDevice" : "Default");
    last_pick = t;
    if (e != hipSuccess)
        mix_fail("op_peer_mix: chain: host-to-device copy on s1");
    else {
        memcpy(t->shadow + to, src, tn);
        wrote(t, to, tn);
    }
    free(src); /* a copy from pageable memory has read it when it returns */
    interleave();
    /* 2: s1 → s2 */
    e = C(hipEventRecord)(ev, s1);
    mlog("    hipEventRecord(ev, s1): %s\n", hipGetErrorName(e));
    interleave();
    hipError_t e2 = C(hipStreamWaitEvent)(s2, ev, 0);
    mlog("    hipStreamWaitEvent(s2, ev): %s\n", hipGetErrorName(e2));
    if (e != hipSuccess || e2 != hipSuccess)
        fail(calls, "op_peer_mix: chain: hipEventRecord on s1 + hipStreamWaitEvent on s2");
    interleave();
    /* 3: t to z on s2, from around the bytes step 1 wrote */
    size_t n = mix_len(t->size < z->size ? t->size : z->size);
    size_t so = to < t->size - n ? to : t->size - n, zo = below(z->size - n + 1);
    k = (int)below(2);
    e = C(hipMemcpyAsync)(z->p + zo, t->p + so, n, k ? hipMemcpyDeviceToDevice : hipMemcpyDefault, s2);
    mlog("    device %d current: hipMemcpyAsync(%s+%zu, %s+%zu, %zu, %s, s2)\n", cur_dev, bname(z), zo, bname(t), so, n,
         k ? "DeviceToDevice" : "Default");
    last_pick = z;
    if (e != hipSuccess) {
        snprintf(what, sizeof what, "op_peer_mix: chain: device-to-device copy on s2: %s", hipGetErrorName(e));
        mix_fail(what);
    } else {
        memmove(z->shadow + zo, t->shadow + so, n);
        wrote_copy(z, zo, n, t, so);
    }
    interleave();
    /* 4: z to the host on s2; what it must see is the shadow now */
    size_t pre = below((zo < 4096 ? zo : 4096) + 1), ro = zo - pre, rn = pre + n + below(4097);
    if (rn > z->size - ro)
        rn = z->size - ro;
    uint8_t *want = malloc(rn + 1), *back = malloc(rn + 1);
    memcpy(want, z->shadow + ro, rn);
    memset(back, 0xee, rn);
    e = C(hipMemcpyAsync)(back, z->p + ro, rn, hipMemcpyDeviceToHost, s2);
    mlog("    device %d current: hipMemcpyAsync(host, %s+%zu, %zu, DeviceToHost, s2)\n", cur_dev, bname(z), ro, rn);
    int at = mixstep;
    interleave();
    /* 5: both streams synchronized */
    hipError_t e3 = C(hipStreamSynchronize)(s1), e4 = C(hipStreamSynchronize)(s2);
    mlog("    hipStreamSynchronize(s1), hipStreamSynchronize(s2)\n");
    last_pick = z;
    if (e != hipSuccess || e3 != hipSuccess || e4 != hipSuccess) {
        snprintf(what, sizeof what, "op_peer_mix: chain: device-to-host copy on s2 %s, synchronize s1 %s, s2 %s",
                 hipGetErrorName(e), hipGetErrorName(e3), hipGetErrorName(e4));
        mix_fail(what);
    } else if (data_checks++, differs(back, want, rn)) {
        snprintf(what, sizeof what, "op_peer_mix: chain: %s [%zu, +%zu) read on s2 after s1 → event → s2 differs from the shadow",
                 bname(z), ro, rn);
        mix_fail_data(what, z, ro, back, want, rn, at);
    }
    free(want);
    free(back);
}

static void mix_step(int in_chain)
{
    switch (below(in_chain ? 16 : mix_null_only ? 17 : 20)) {
    case 0:
    case 1:
        set_cur((int)below((size_t)ndev));
        mlog("    hipSetDevice(%d)\n", cur_dev);
        break;
    case 2:
    case 3:
    case 4:
        mix_toggle();
        break;
    case 5:
    case 6:
    case 7:
    case 8:
    case 9:
        mix_copy(in_chain);
        break;
    case 10:
    case 11:
    case 12:
        mix_fill(in_chain);
        break;
    case 13:
        mix_write();
        break;
    case 14:
    case 15:
        mix_read();
        break;
    case 16:
        if (psock >= 0 && nmixw < MAXW) { /* an import opened while the other work runs */
            int i = (int)below(MAXI);
            if (!imp[i].p) {
                import_open(i);
                if (imp[i].p)
                    mixw[nmixw++] = &imp[i];
            }
        }
        break;
    default:
        mix_chain();
        break;
    }
}

static void op_peer_mix(void)
{
    struct alloc *cand[MAXA + MAXI];
    int n = 0;
    for (int i = 0; i < nlive; i++)
        if (live[i].kind == ALLOC_DEVICE)
            cand[n++] = &live[i];
    for (int i = 0; i < MAXI; i++)
        if (imp[i].p)
            cand[n++] = &imp[i];
    if (n < 2)
        return;
    /* a few buffers, so that the steps meet on them */
    nmixw = 0;
    for (int want = 2 + (int)below(3); nmixw < want && n; nmixw++) {
        int i = (int)below((size_t)n);
        mixw[nmixw] = cand[i];
        cand[i] = cand[--n];
    }
    lw = NULL;
    mix_op = "op_peer_mix";
    mixlen = 0;
    mixstep = 0;
    mixlog[0] = 0;
    hw_clear();
    for (int k = 0; k < nmixw; k++)
        mlog("    buffer %s\n", bname(mixw[k]));
    for (int steps = 2 + (int)below(12); steps > 0; steps--)
        mix_step(0);
    /* everything done: every buffer holds its shadow, seen from a random device */
    sync_all();
    mlog("    every device synchronized\n");
    for (int k = 0; k < nmixw; k++) {
        set_cur((int)below((size_t)ndev));
        mix_check(mixw[k], 0, mixw[k]->size, mixw[k]->shadow, "after every device synchronized");
    }
    hw_clear();
}

/* Exports (through the partner) and opens import slot i: the partner's hipMalloc of a random
 * size on a random device, filled with one byte. */
static void import_open(int i)
{
    struct alloc *m = &imp[i];
    if (!m->size) {
        struct preq q;
        memset(&q, 0, sizeof q);
        q.cmd = P_EXPORT;
        q.dev = (int)below((size_t)ndev);
        q.size = 1 + (below(4) ? below(256 << 10) : below(4 << 20));
        q.val = rnd();
        q.off = (uint64_t)i;
        struct prep r = ask(&q, -1);
        if (r.e != hipSuccess) {
            char what[96];
            snprintf(what, sizeof what, "partner: hipMalloc + hipMemset + hipIpcGetMemHandle: %s",
                     hipGetErrorName((hipError_t)r.e));
            fail(calls, what);
            return;
        }
        memset(m, 0, sizeof *m);
        m->size = q.size;
        m->dev = q.dev;
        m->kind = ALLOC_IPC;
        m->shadow = malloc(q.size);
        memset(m->shadow, (int)(uint8_t)q.val, q.size);
        imp_mh[i] = r.mh;
    }
    void *p = NULL;
    set_cur((int)below((size_t)ndev));
    hipError_t e = C(hipIpcOpenMemHandle)(&p, imp_mh[i], hipIpcMemLazyEnablePeerAccess);
    mlog("    device %d current: hipIpcOpenMemHandle of the partner's allocation (dev %d, %zu B): %s, %p\n", cur_dev,
         m->dev, m->size, hipGetErrorName(e), p);
    if (e != hipSuccess) {
        char what[96];
        snprintf(what, sizeof what, "hipIpcOpenMemHandle of the partner's allocation: %s", hipGetErrorName(e));
        fail(calls, what);
        return;
    }
    m->p = p;
    imported = 1;
    hipDeviceptr_t base = NULL;
    size_t span = 0;
    if (C(hipMemGetAddressRange)(&base, &span, (hipDeviceptr_t)p) != hipSuccess || (uint8_t *)base > m->p ||
        (uint8_t *)base + span < m->p + m->size)
        fail(calls, "hipMemGetAddressRange of an IPC import");
    imp_base[i] = base ? (uint8_t *)base : m->p;
    imp_span[i] = base ? span : m->size;
    if (imp_base[i] > m->p) {
        imp_base[i] = m->p;
        imp_span[i] = m->size;
    }
    hipPointerAttribute_t at;
    if (C(hipPointerGetAttributes)(&at, p) != hipSuccess || at.device != m->dev)
        fail(calls, "hipPointerGetAttributes of an IPC import: not the exporting allocation's device");
}

/* IPC imports: one exported by the partner and opened, or an open one closed (once every device
 * is synchronized: nothing may use the mapping then) and sometimes freed by the partner. */
static void op_import(void)
{
    if (psock < 0)
        return;
    int i = (int)below(MAXI);
    struct alloc *m = &imp[i];
    mix_op = "op_import";
    mixlen = 0;
    mixstep = 0;
    mixlog[0] = 0;
    hw_clear();
    if (!m->p) {
        import_open(i);
        if (m->p) { /* what it holds, read on a random device */
            last_pick = m;
            set_cur((int)below((size_t)ndev));
            mix_check(m, 0, m->size, m->shadow, "import opened");
        }
        return;
    }
    sync_all();
    last_pick = m;
    if (C(hipIpcCloseMemHandle)(m->p) != hipSuccess)
        fail(calls, "hipIpcCloseMemHandle of an import");
    m->p = NULL;
    if (below(2)) {
        struct preq q;
        memset(&q, 0, sizeof q);
        q.cmd = P_UNEXPORT;
        q.off = (uint64_t)i;
        struct prep r = ask(&q, -1);
        if (r.e != hipSuccess)
            fail(calls, "partner: hipFree of an exported allocation");
        free(m->shadow);
        memset(m, 0, sizeof *m);
    }
}

/* The end: every open import checked against its shadow and closed, the streams and events
 * destroyed (before the partner ends: it frees the exported allocations). */
static void mix_end(void)
{
    for (int i = 0; i < MAXI; i++) {
        struct alloc *m = &imp[i];
        if (m->p) {
            uint8_t *back = malloc(m->size);
            last_pick = m;
            if (C(hipMemcpy)(back, m->p, m->size, hipMemcpyDeviceToHost) != hipSuccess ||
                (data_checks++, differs(back, m->shadow, m->size)))
                fail(calls, "final check: an IPC import differs from the shadow");
            free(back);
            if (C(hipIpcCloseMemHandle)(m->p) != hipSuccess)
                fail(calls, "hipIpcCloseMemHandle of an import");
        }
        free(m->shadow);
        memset(m, 0, sizeof *m);
    }
    last_pick = NULL;
    for (int d = 0; d < 8; d++) {
        for (int k = 0; k < 2; k++)
            if (mix_s[d][k])
                C(hipStreamDestroy)(mix_s[d][k]);
        if (mix_ev[d])
            C(hipEventDestroy)(mix_ev[d]);
        if (chain_ev[d])
            C(hipEventDestroy)(chain_ev[d]);
    }
}

/* ---- the rest of the surface: device, context, version, error, limit, function, stream and
 * pool queries and setters with random (often bad) arguments; the element fills and the copies
 * not called elsewhere, checked against the shadow ---- */

static void cb_fn(hipStream_t s, hipError_t e, void *arg)
{
    (void)s;
    (void)e;
    __atomic_add_fetch((long *)arg, 1, __ATOMIC_SEQ_CST);
}

/* hipMemsetD8/D16/D32 (+Async): an element fill of a 4-byte-aligned range. */
static void misc_memset_d(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    int elem = 1 << below(3);
    size_t off = below(a->size) & ~(size_t)3;
    size_t count = below((a->size - off) / (size_t)elem + 1);
    uint32_t v = (uint32_t)rnd();
    hipDeviceptr_t d = (hipDeviceptr_t)(a->p + off);
    int async = (int)below(2);
    hipStream_t s = any_stream();
    hipError_t e;
    if (elem == 1)
        e = async ? C(hipMemsetD8Async)(d, (uint8_t)v, count, s) : C(hipMemsetD8)(d, (uint8_t)v, count);
    else if (elem == 2)
        e = async ? C(hipMemsetD16Async)(d, (uint16_t)v, count, s) : C(hipMemsetD16)(d, (uint16_t)v, count);
    else
        e = async ? C(hipMemsetD32Async)(d, v, count, s) : C(hipMemsetD32)(d, v, count);
    e = settle_on(e, async ? s : NULL);
    if (e != hipSuccess) {
        char what[128];
        snprintf(what, sizeof what, "in-bounds hipMemsetD%d%s of %zu elements at offset %zu: %s", 8 * elem,
                 async ? "Async" : "", count, off, hipGetErrorName(e));
        fail(calls, what);
        return;
    }
    for (size_t i = 0; i < count * (size_t)elem; i++)
        a->shadow[off + i] = (uint8_t)(v >> (8 * (i % (size_t)elem)));
    if (bounds_exact(a))
        must_fail(C(hipMemsetD32)((hipDeviceptr_t)(a->p + off), v, (a->size - off) / 4 + 1 + below(64)),
                  "hipMemsetD32 past the end");
}

/* hipMemcpyDtoD, hipMemcpyPeerAsync, hipMemcpyWithStream between two allocations. */
static void misc_copy(void)
{
    struct alloc *a = pick(), *b = pick();
    if (!a || !b || a == b)
        return;
    size_t len = below((a->size < b->size ? a->size : b->size) + 1);
    size_t so = below(a->size - len + 1), doff = below(b->size - len + 1);
    hipStream_t s = any_stream();
    hipError_t e;
    if (trace > 2)
        printf("   misc_copy %p+%zu -> %p+%zu len %zu stream %p\n", (void *)a->p, so, (void *)b->p, doff, len, (void *)s);
    switch (below(3)) {
    case 0:
        e = C(hipMemcpyDtoD)((hipDeviceptr_t)(b->p + doff), (hipDeviceptr_t)(a->p + so), len);
        if (e == hipSuccess)
            e = C(hipDeviceSynchronize)();
        break;
    case 1:
        e = C(hipMemcpyPeerAsync)(b->p + doff, b->dev, a->p + so, a->dev, len, s);
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
        must_fail(C(hipMemcpyPeerAsync)(b->p, ndev + (int)below(4), a->p, a->dev, 1, s),
                  "hipMemcpyPeerAsync to a bad device");
        break;
    default: /* asynchronous to the host between two places of one GPU's memory (clr ihipMemcpy) */
        e = settle_on(C(hipMemcpyWithStream)(b->p + doff, a->p + so, len, hipMemcpyDeviceToDevice, s), s);
        break;
    }
    if (e != hipSuccess)
        fail(calls, "in-bounds hipMemcpyDtoD/hipMemcpyPeerAsync/hipMemcpyWithStream");
    else
        memmove(b->shadow + doff, a->shadow + so, len);
}

/* A call that must fail with exactly `want` (AMD's code, from hip-tests / the conformance tests). */
static void must_fail_with(hipError_t e, hipError_t want, const char *what)
{
    failures_expected++;
    if (e != want) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s: %s, not %s", what, hipGetErrorName(e), hipGetErrorName(want));
        fail(calls, msg);
    }
}

static _Atomic long graph_host_runs;
static void graph_host_fn(void *arg) { graph_host_runs += (long)(intptr_t)arg; }

/* Graphs: a graph built node by node (a host-to-device copy into a live allocation, a fill of
 * part of it, a device-to-host copy back, plus empty, host and event-record nodes, each on
 * random earlier nodes) or the same work captured on a random stream in a random mode;
 * instantiated and launched 1 to 3 times on a random stream; the bytes read back and the
 * allocation must match the shadow. Then sync calls during a capture (refused, the capture
 * invalidated) and null or bad arguments, with AMD's codes (test_graph.c). */
static void op_graph(void)
{
    struct alloc *a = pick();
    if (!a)
        return;
    size_t off, len;
    range(a, &off, &len);
    if (!len)
        len = 1, off = 0;
    size_t foff = off + below(len), flen = 1 + below(off + len - foff);
    uint8_t v = (uint8_t)rnd();
    uint8_t *src = malloc(len), *dst = malloc(len);
    for (size_t i = 0; i < len; i++)
        src[i] = (uint8_t)rnd();
    memset(dst, 0, len);
    hipGraph_t g = NULL;
    hipGraphExec_t x = NULL;
    hipEvent_t ev = NULL;
    long host_want = 0;
    hipStream_t cs = streams[below(MAXS)];
    hipError_t e = hipSuccess;
    graph_host_runs = 0;
    int captured = !(below(2) || !cs);
    if (!captured) { /* built node by node */
        hipGraphNode_t nodes[12], deps[12];
        int nn = 0, prev = -1;
        if (C(hipGraphCreate)(&g, 0) != hipSuccess) {
            fail(calls, "hipGraphCreate");
            goto out;
        }
        for (int step = 0; step < 3 && e == hipSuccess; step++) {
            /* Extra nodes before this data node, on random earlier nodes. */
            for (int k = (int)below(3); k > 0 && e == hipSuccess && nn < 10; k--) {
                size_t nd = 0;
                for (int j = 0; j < nn; j++)
                    if (below(2))
                        deps[nd++] = nodes[j];
                switch (below(3)) {
                case 0:
                    e = C(hipGraphAddEmptyNode)(&nodes[nn], g, deps, nd);
                    break;
                case 1: {
                    hipHostNodeParams hp = {graph_host_fn, (void *)(intptr_t)1};
                    e = C(hipGraphAddHostNode)(&nodes[nn], g, deps, nd, &hp);
                    host_want++;
                    break;
                }
                default:
                    if (!ev && C(hipEventCreate)(&ev) != hipSuccess) {
                        fail(calls, "hipEventCreate");
                        ev = NULL;
                        e = hipErrorUnknown;
                        break;
                    }
                    e = C(hipGraphAddEventRecordNode)(&nodes[nn], g, deps, nd, ev);
                    break;
                }
                if (e == hipSuccess)
                    nn++;
            }
            if (e != hipSuccess)
                break;
            /* The data node: on the previous data node and random earlier ones. */
            size_t nd = 0;
            for (int j = 0; j < nn; j++)
                if (j == prev || below(3) == 0)
                    deps[nd++] = nodes[j];
            if (step == 0) {
                e = C(hipGraphAddMemcpyNode1D)(&nodes[nn], g, deps, nd, a->p + off, src, len,
                                               below(2) ? hipMemcpyHostToDevice : hipMemcpyDefault);
            } else if (step == 1) {
                hipMemsetParams mp = {0};
                mp.dst = a->p + foff;
                mp.elementSize = 1;
                mp.width = flen;
                mp.height = 1;
                mp.value = v;
                e = C(hipGraphAddMemsetNode)(&nodes[nn], g, deps, nd, &mp);
            } else {
                e = C(hipGraphAddMemcpyNode1D)(&nodes[nn], g, deps, nd, dst, a->p + off, len, hipMemcpyDeviceToHost);
            }
            if (e == hipSuccess)
                prev = nn++;
        }
        if (e != hipSuccess) {
            fail(calls, "adding graph nodes");
            goto out;
        }
        /* Bad nodes: refused, the graph as it was. */
        must_fail_with(C(hipGraphAddMemcpyNode1D)(&deps[0], g, NULL, 0, a->p, src, 0, hipMemcpyDefault),
                       hipErrorInvalidValue, "hipGraphAddMemcpyNode1D of 0 bytes");
        must_fail_with(C(hipGraphAddMemcpyNode1D)(&deps[0], g, NULL, 0, a->p, src, 1, (hipMemcpyKind)(5 + below(90))),
                       hipErrorInvalidMemcpyDirection, "hipGraphAddMemcpyNode1D with a bad kind");
        must_fail_with(C(hipGraphAddEmptyNode)(&deps[0], g, NULL, 1), hipErrorInvalidValue,
                       "hipGraphAddEmptyNode, NULL dependencies with a count");
    } else { /* captured */
        static const hipStreamCaptureMode modes[] = {hipStreamCaptureModeGlobal, hipStreamCaptureModeThreadLocal,
                                                     hipStreamCaptureModeRelaxed};
        if (C(hipStreamBeginCapture)(cs, modes[below(3)]) != hipSuccess) {
            fail(calls, "hipStreamBeginCapture");
            goto out;
        }
        e = C(hipMemcpyAsync)(a->p + off, src, len, hipMemcpyHostToDevice, cs);
        if (e == hipSuccess && below(2)) {
            hipHostFn_t fn = graph_host_fn;
            e = C(hipLaunchHostFunc)(cs, fn, (void *)(intptr_t)1);
            host_want++;
        }
        if (e == hipSuccess)
            e = C(hipMemsetAsync)(a->p + foff, v, flen, cs);
        if (e == hipSuccess)
            e = C(hipMemcpyAsync)(dst, a->p + off, len, hipMemcpyDeviceToHost, cs);
        hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
        if (C(hipStreamIsCapturing)(cs, &st) != hipSuccess || st != hipStreamCaptureStatusActive)
            fail(calls, "hipStreamIsCapturing during a capture");
        hipError_t e2 = C(hipStreamEndCapture)(cs, &g);
        if (e != hipSuccess || e2 != hipSuccess) {
            fail(calls, "captured copies and fills / hipStreamEndCapture");
            goto out;
        }
        /* Nothing ran during the capture. */
        data_checks++;
        for (size_t i = 0; i < len; i++)
            if (dst[i]) {
                fail(calls, "a captured copy ran during the capture");
                break;
            }
    }
    if (C(hipGraphInstantiate)(&x, g, NULL, NULL, 0) != hipSuccess) {
        fail(calls, "hipGraphInstantiate");
        x = NULL;
        goto out;
    }
    int launches = 1 + (int)below(3);
    for (int l = 0; l < launches; l++) {
        /* Event-record nodes are launched on a stream of their event's device (hipkfd records
         * another device's event too, as clr's graph nodes do; the shadow model keeps to one). */
        hipStream_t s = any_stream();
        for (int i = 0; ev && s && i < MAXS; i++)
            if (streams[i] == s && st_dev[i] != cur_dev)
                s = NULL;
        if (trace > 2)
            printf("   graph launch on stream %p\n", (void *)s);
        hipError_t el = C(hipGraphLaunch)(x, s), es = el ? hipSuccess : C(hipStreamSynchronize)(s);
        if (el != hipSuccess || es != hipSuccess) {
            char msg[160];
            snprintf(msg, sizeof msg, "hipGraphLaunch (%s) + hipStreamSynchronize (%s) on %s stream, graph %s",
                     hipGetErrorName(el), hipGetErrorName(es), s ? "a" : "the null", captured ? "captured" : "built");
            fail(calls, msg);
            goto out;
        }
    }
    memcpy(a->shadow + off, src, len);
    memset(a->shadow + foff, v, flen);
    data_checks++;
    if (differs(dst, a->shadow + off, len))
        fail(calls, "the graph's device-to-host copy differs from the shadow");
    if (graph_host_runs != host_want * launches)
        fail(calls, "graph host nodes ran a wrong number of times");
out:
    if (x && C(hipGraphExecDestroy)(x) != hipSuccess)
        fail(calls, "hipGraphExecDestroy");
    if (g && C(hipGraphDestroy)(g) != hipSuccess)
        fail(calls, "hipGraphDestroy");
    if (ev)
        C(hipEventDestroy)(ev);
    free(src);
    free(dst);
    /* Null and bad arguments. */
    switch (below(4)) {
    case 0:
        must_fail_with(C(hipGraphCreate)(NULL, 0), hipErrorInvalidValue, "hipGraphCreate(NULL)");
        must_fail_with(C(hipGraphCreate)(&g, 1 + (unsigned)below(8)), hipErrorInvalidValue, "hipGraphCreate, flags");
        break;
    case 1:
        must_fail_with(C(hipGraphDestroy)(NULL), hipErrorInvalidValue, "hipGraphDestroy(NULL)");
        must_fail_with(C(hipGraphExecDestroy)(NULL), hipErrorInvalidValue, "hipGraphExecDestroy(NULL)");
        must_fail_with(C(hipGraphLaunch)(NULL, any_stream()), hipErrorInvalidValue, "hipGraphLaunch(NULL)");
        break;
    case 2:
        must_fail_with(C(hipStreamBeginCapture)(NULL, hipStreamCaptureModeGlobal), hipErrorStreamCaptureUnsupported,
                       "hipStreamBeginCapture(NULL stream)");
        if (cs)
            must_fail_with(C(hipStreamEndCapture)(cs, &g), hipErrorIllegalState, "hipStreamEndCapture, not capturing");
        break;
    default: { /* a synchronising call during a capture: refused, the capture invalidated */
        hipStream_t s;
        if (C(hipStreamCreate)(&s) != hipSuccess) {
            fail(calls, "hipStreamCreate");
            break;
        }
        if (C(hipStreamBeginCapture)(s, (hipStreamCaptureMode)below(3)) != hipSuccess) {
            fail(calls, "hipStreamBeginCapture");
        } else {
            uint8_t h[16] = {0};
            switch (below(5)) {
            case 0:
                must_fail_with(C(hipStreamSynchronize)(s), hipErrorStreamCaptureUnsupported,
                               "hipStreamSynchronize during capture");
                break;
            case 1:
                must_fail_with(C(hipStreamQuery)(s), hipErrorStreamCaptureUnsupported, "hipStreamQuery during capture");
                break;
            case 2:
                must_fail_with(C(hipDeviceSynchronize)(), hipErrorStreamCaptureUnsupported,
                               "hipDeviceSynchronize during capture");
                break;
            case 3:
                must_fail_with(C(hipMemcpy)(a->p, h, 1 + below(sizeof h < a->size ? sizeof h : a->size),
                                            hipMemcpyHostToDevice),
                               hipErrorStreamCaptureImplicit, "hipMemcpy during capture");
                break;
            default:
                must_fail_with(C(hipMemset)(a->p, 0, 1 + below(a->size)), hipErrorStreamCaptureImplicit,
                               "hipMemset during capture");
                break;
            }
            g = (hipGraph_t)1;
            must_fail_with(C(hipStreamEndCapture)(s, &g), hipErrorStreamCaptureInvalidated,
                           "hipStreamEndCapture of an invalidated capture");
            if (g)
                fail(calls, "hipStreamEndCapture of an invalidated capture left a graph");
        }
        if (C(hipStreamDestroy)(s) != hipSuccess)
            fail(calls, "hipStreamDestroy");
        break;
    }
    }
}

/* Arrays: hipMallocArray, hipArrayCreate or hipMalloc3DArray (depth 0) of a random format and
 * extent (1D when the height is 0); filled from the host, a random sub-rectangle written from
 * the host (hipMemcpy2DToArray(+Async), hipMemcpyHtoA for 1D) or from a live allocation, and
 * copied into a live allocation (hipMemcpy2DFromArray), everything read back
 * (hipMemcpy2DFromArray(+Async), hipMemcpyAtoH) and checked against a host copy; bad formats,
 * extents and ranges refused with AMD's codes (test_array.c); hipFreeArray/hipArrayDestroy. */
static void op_array(void)
{
    static const int bits[] = {8, 16, 32}, chans[] = {1, 2, 4};
    int b = bits[below(3)], ch = chans[below(3)];
    hipChannelFormatKind kind = b == 32 && below(2) ? hipChannelFormatKindFloat
                                                    : (below(2) ? hipChannelFormatKindUnsigned : hipChannelFormatKindSigned);
    hipChannelFormatDesc desc = hipCreateChannelDesc(b, ch > 1 ? b : 0, ch > 2 ? b : 0, ch > 2 ? b : 0, kind);
    size_t elem = (size_t)b / 8 * (size_t)ch, w = 1 + below(300), h = below(3) ? 1 + below(64) : 0;
    size_t rows = h ? h : 1, rb = w * elem, n = rb * rows;
    hipArray_t arr = NULL;
    hipError_t e;
    switch (below(3)) {
    case 0:
        e = C(hipMallocArray)(&arr, &desc, w, h, hipArrayDefault);
        break;
    case 1: {
        HIP_ARRAY_DESCRIPTOR d = {0};
        d.Width = w;
        d.Height = h;
        d.Format = kind == hipChannelFormatKindFloat ? HIP_AD_FORMAT_FLOAT
                   : b == 8  ? (kind == hipChannelFormatKindUnsigned ? HIP_AD_FORMAT_UNSIGNED_INT8 : HIP_AD_FORMAT_SIGNED_INT8)
                   : b == 16 ? (kind == hipChannelFormatKindUnsigned ? HIP_AD_FORMAT_UNSIGNED_INT16 : HIP_AD_FORMAT_SIGNED_INT16)
                             : (kind == hipChannelFormatKindUnsigned ? HIP_AD_FORMAT_UNSIGNED_INT32 : HIP_AD_FORMAT_SIGNED_INT32);
        d.NumChannels = (unsigned)ch;
        e = C(hipArrayCreate)(&arr, &d);
        break;
    }
    default:
        e = C(hipMalloc3DArray)(&arr, &desc, (hipExtent){w, h, 0}, hipArrayDefault);
        break;
    }
    if (e != hipSuccess) {
        fail(calls, "hipMallocArray/hipArrayCreate/hipMalloc3DArray");
        arr = NULL;
        goto bad_args;
    }
    uint8_t *ash = malloc(n), *host = malloc(n + 2 * elem), *out = malloc(n + 64);
    for (size_t i = 0; i < n; i++)
        ash[i] = (uint8_t)rnd();
    if (C(hipMemcpy2DToArray)(arr, 0, 0, ash, rb, rb, rows, hipMemcpyHostToDevice) != hipSuccess)
        fail(calls, "hipMemcpy2DToArray of the whole array");
    /* A sub-rectangle, element-aligned. */
    size_t x0 = below(w), y0 = below(rows), ww = (1 + below(w - x0)) * elem, hh = 1 + below(rows - y0);
    size_t wo = x0 * elem;
    struct alloc *a = pick();
    int from_dev = a && !a->pitch && ww * hh <= a->size && below(2);
    size_t aoff = from_dev ? below(a->size - ww * hh + 1) : 0;
    if (from_dev) {
        e = settle(
            C(hipMemcpy2DToArray)(arr, wo, y0, a->p + aoff, ww, ww, hh, below(2) ? hipMemcpyDeviceToDevice : hipMemcpyDefault));
        if (e != hipSuccess)
            fail(calls, "hipMemcpy2DToArray from a live allocation");
        else
            for (size_t r = 0; r < hh; r++)
                memcpy(ash + (y0 + r) * rb + wo, a->shadow + aoff + r * ww, ww);
    } else {
        for (size_t i = 0; i < ww * hh; i++)
            host[i] = (uint8_t)rnd();
        if (!h && below(2)) {
            e = C(hipMemcpyHtoA)(arr, wo, host, ww);
        } else if (below(2)) {
            hipStream_t s = any_stream();
            e = C(hipMemcpy2DToArrayAsync)(arr, wo, y0, host, ww, ww, hh, hipMemcpyHostToDevice, s);
            if (e == hipSuccess)
                e = C(hipStreamSynchronize)(s);
        } else {
            e = C(hipMemcpy2DToArray)(arr, wo, y0, host, ww, ww, hh, hipMemcpyHostToDevice);
        }
        if (e != hipSuccess)
            fail(calls, "hipMemcpy2DToArray(+Async)/hipMemcpyHtoA of a sub-rectangle");
        else
            for (size_t r = 0; r < hh; r++)
                memcpy(ash + (y0 + r) * rb + wo, host + r * ww, ww);
    }
    /* Past the row or the last row, or a null array: refused, the array as it was. */
    must_fail_with(C(hipMemcpy2DToArray)(arr, wo, y0, host, rb + elem, rb - wo + elem, 1, hipMemcpyHostToDevice),
                   hipErrorInvalidValue, "hipMemcpy2DToArray past the row");
    if (!h)
        must_fail_with(C(hipMemcpyAtoH)(out, arr, 0, n + 1 + below(64)), hipErrorInvalidValue, "hipMemcpyAtoH past the end");
    must_fail_with(C(hipMemcpyHtoA)(NULL, 0, host, 1), hipErrorInvalidValue, "hipMemcpyHtoA(NULL array)");
    /* Read everything back. */
    memset(out, 0, n);
    if (!h && below(2)) {
        e = C(hipMemcpyAtoH)(out, arr, 0, n);
    } else if (below(2)) {
        hipStream_t s = any_stream();
        e = C(hipMemcpy2DFromArrayAsync)(out, rb, arr, 0, 0, rb, rows, hipMemcpyDeviceToHost, s);
        if (e == hipSuccess)
            e = C(hipStreamSynchronize)(s);
    } else {
        e = C(hipMemcpy2DFromArray)(out, rb, arr, 0, 0, rb, rows, below(2) ? hipMemcpyDeviceToHost : hipMemcpyDefault);
    }
    data_checks++;
    if (e != hipSuccess)
        fail(calls, "reading the array back");
    else if (differs(out, ash, n))
        fail(calls, "an array read back differs from its host copy");
    /* The sub-rectangle into a live allocation. */
    if (a && !a->pitch && ww * hh <= a->size && below(2)) {
        aoff = below(a->size - ww * hh + 1);
        if (settle(C(hipMemcpy2DFromArray)(a->p + aoff, ww, arr, wo, y0, ww, hh, hipMemcpyDeviceToDevice)) != hipSuccess)
            fail(calls, "hipMemcpy2DFromArray into a live allocation");
        else
            for (size_t r = 0; r < hh; r++)
                memcpy(a->shadow + aoff + r * ww, ash + (y0 + r) * rb + wo, ww);
    }
    if ((below(2) ? C(hipFreeArray)(arr) : C(hipArrayDestroy)(arr)) != hipSuccess)
        fail(calls, "hipFreeArray/hipArrayDestroy");
    free(ash);
    free(host);
    free(out);
bad_args:
    switch (below(4)) {
    case 0: {
        static const hipChannelFormatDesc bad[] = {
            {8, 16, 0, 0, hipChannelFormatKindUnsigned}, {8, 0, 8, 0, hipChannelFormatKindUnsigned},
            {32, 32, 32, 0, hipChannelFormatKindSigned}, {8, 0, 0, 0, hipChannelFormatKindFloat},
            {64, 0, 0, 0, hipChannelFormatKindUnsigned}, {7, 0, 0, 0, hipChannelFormatKindSigned},
            {32, 0, 0, 0, hipChannelFormatKindNone},     {32, 0, 0, 0, (hipChannelFormatKind)0x55},
        };
        must_fail_with(C(hipMallocArray)(&arr, &bad[below(8)], w, h, hipArrayDefault), hipErrorInvalidValue,
                       "hipMallocArray of a bad format");
        break;
    }
    case 1:
        must_fail_with(C(hipMallocArray)(&arr, &desc, 0, h, hipArrayDefault), hipErrorInvalidValue,
                       "hipMallocArray of width 0");
        must_fail_with(C(hipMallocArray)(NULL, &desc, w, h, hipArrayDefault), hipErrorInvalidValue,
                       "hipMallocArray(NULL)");
        break;
    case 2:
        must_fail_with(C(hipMalloc3DArray)(&arr, &desc, (hipExtent){w, 0, 1 + below(8)}, hipArrayDefault),
                       hipErrorInvalidValue, "hipMalloc3DArray of height 0 and a depth");
        must_fail_with(C(hipMallocArray)(&arr, &desc, SIZE_MAX, SIZE_MAX, hipArrayDefault), hipErrorInvalidValue,
                       "hipMallocArray, huge");
        break;
    default: {
        HIP_ARRAY_DESCRIPTOR d = {0};
        d.Width = w;
        d.Height = h;
        d.Format = HIP_AD_FORMAT_FLOAT;
        d.NumChannels = 3;
        must_fail_with(C(hipArrayCreate)(&arr, &d), hipErrorInvalidValue, "hipArrayCreate, 3 channels");
        must_fail_with(C(hipArrayCreate)(&arr, NULL), hipErrorInvalidValue, "hipArrayCreate(NULL descriptor)");
        break;
    }
    }
}

/* hipMalloc3D, and hipMemcpy3D/hipMemset3D (+Async) on a pitched allocation seen as slices of
 * `ysize` rows: a random block at a random position, data checked against the shadow; a block
 * past the slices must fail. */
static void op_3d(void)
{
    if (below(4) == 0) {
        hipPitchedPtr pp = {0};
        hipExtent ext = {1 + below(300), 1 + below(8), 1 + below(4)};
        if (C(hipMalloc3D)(&pp, ext) != hipSuccess || pp.ptr == NULL || pp.pitch < ext.width)
            fail(calls, "hipMalloc3D of a small extent");
        else if (C(hipFree)(pp.ptr) != hipSuccess)
            fail(calls, "hipFree of hipMalloc3D memory");
        must_fail(C(hipMalloc3D)(NULL, ext), "hipMalloc3D(NULL)");
        return;
    }
    struct alloc *a = pick_pitched();
    if (!a)
        return;
    size_t pitch = a->pitch, rows = a->size / pitch;
    size_t ysize = 1 + below(rows), slices = rows / ysize;
    size_t w = 1 + below(pitch), h = 1 + below(ysize), dep = 1 + below(slices);
    size_t c0 = below(pitch - w + 1), r0 = below(ysize - h + 1), z0 = below(slices - dep + 1);
    size_t slice = ysize * pitch;
    hipPitchedPtr dp = {a->p, pitch, pitch, ysize};
    hipExtent ext = {w, h, dep};
    hipStream_t s = any_stream();
    int async = (int)below(2);
    hipError_t e;
    if (below(2)) { /* fill */
        uint8_t v = (uint8_t)rnd();
        hipPitchedPtr at = {a->p + z0 * slice + r0 * pitch + c0, pitch, pitch, ysize};
        e = async ? C(hipMemset3DAsync)(at, v, ext, s) : C(hipMemset3D)(at, v, ext);
        if (e == hipSuccess) /* hipMemset3D is asynchronous to the host on device memory */
            e = C(hipStreamSynchronize)(async ? s : NULL);
        if (e != hipSuccess) {
            fail(calls, "in-bounds hipMemset3D");
            return;
        }
        for (size_t z = 0; z < dep; z++)
            for (size_t r = 0; r < h; r++)
                memset(a->shadow + (z0 + z) * slice + (r0 + r) * pitch + c0, v, w);
    } else { /* host to device, then the block back */
        size_t hp = w + below(32), n = hp * h * dep;
        uint8_t *host = malloc(n), *back = malloc(n);
        for (size_t i = 0; i < n; i++)
            host[i] = (uint8_t)rnd();
        hipMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.srcPtr = (hipPitchedPtr){host, hp, w, h};
        p.dstPtr = dp;
        p.dstPos = (hipPos){c0, r0, z0};
        p.extent = ext;
        p.kind = hipMemcpyHostToDevice;
        e = async ? C(hipMemcpy3DAsync)(&p, s) : C(hipMemcpy3D)(&p);
        if (e == hipSuccess && async)
            e = C(hipStreamSynchronize)(s);
        if (e != hipSuccess) {
            fail(calls, "in-bounds hipMemcpy3D host to device");
        } else {
            for (size_t z = 0; z < dep; z++)
                for (size_t r = 0; r < h; r++)
                    memcpy(a->shadow + (z0 + z) * slice + (r0 + r) * pitch + c0, host + (z * h + r) * hp, w);
            memset(&p, 0, sizeof p);
            p.srcPtr = dp;
            p.srcPos = (hipPos){c0, r0, z0};
            p.dstPtr = (hipPitchedPtr){back, hp, w, h};
            p.extent = ext;
            p.kind = hipMemcpyDeviceToHost;
            if (C(hipMemcpy3D)(&p) != hipSuccess) {
                fail(calls, "in-bounds hipMemcpy3D device to host");
            } else {
                data_checks++;
                for (size_t z = 0; z < dep; z++)
                    for (size_t r = 0; r < h; r++)
                        if (differs(back + (z * h + r) * hp, a->shadow + (z0 + z) * slice + (r0 + r) * pitch + c0, w)) {
                            fail(calls, "hipMemcpy3D read back differs from the shadow");
                            z = dep;
                            break;
                        }
            }
        }
        free(host);
        free(back);
    }
    /* One slice more than the allocation holds: must fail and change nothing. */
    hipExtent past = {1, 1, rows / ysize + 1 + (rows % ysize ? 1 : 0)};
    must_fail(C(hipMemset3D)(dp, 0, past), "hipMemset3D past the last slice");
}

/* hipMemsetD2D8/16/32(+Async): element fills of a random rectangle of a pitched allocation,
 * the shadow updated element by element; a row wider than the pitch, rows past the end and a
 * null pointer refused with hipErrorInvalidValue (test_memcpy2d.c). */
static void op_memset_d2d(void)
{
    struct alloc *a = pick_pitched();
    if (!a)
        return;
    last_pick = a;
    size_t es = (size_t)1 << below(3), rows = a->size / a->pitch, cols = a->pitch / es;
    size_t w = below(cols + 1), h = below(rows + 1), r0 = below(rows - h + 1), c0 = below(cols - w + 1);
    uint8_t *d = a->p + r0 * a->pitch + c0 * es;
    uint32_t v = (uint32_t)rnd();
    int async = (int)below(2);
    hipStream_t s = any_stream();
    hipError_t e;
    if (es == 1)
        e = async ? C(hipMemsetD2D8Async)(d, a->pitch, (uint8_t)v, w, h, s) : C(hipMemsetD2D8)(d, a->pitch, (uint8_t)v, w, h);
    else if (es == 2)
        e = async ? C(hipMemsetD2D16Async)(d, a->pitch, (uint16_t)v, w, h, s)
                  : C(hipMemsetD2D16)(d, a->pitch, (uint16_t)v, w, h);
    else
        e = async ? C(hipMemsetD2D32Async)(d, a->pitch, v, w, h, s) : C(hipMemsetD2D32)(d, a->pitch, v, w, h);
    e = settle_on(e, async ? s : NULL);
    if (e != hipSuccess) {
        fail(calls, "in-bounds hipMemsetD2D8/16/32(+Async)");
    } else {
        for (size_t r = 0; r < h; r++)
            for (size_t c = 0; c < w; c++)
                memcpy(a->shadow + (r0 + r) * a->pitch + (c0 + c) * es, &v, es); /* little-endian */
    }
    switch (below(3)) {
    case 0:
        must_fail_with(C(hipMemsetD2D32)(a->p, a->pitch, v, a->pitch / 4 + 1 + below(8), 1), hipErrorInvalidValue,
                       "hipMemsetD2D32, a row wider than the pitch");
        break;
    case 1:
        must_fail_with(C(hipMemsetD2D16)(a->p, a->pitch, (uint16_t)v, a->pitch / 2, rows + 1 + below(4)),
                       hipErrorInvalidValue, "hipMemsetD2D16, rows past the end");
        break;
    default:
        must_fail_with(C(hipMemsetD2D8)(NULL, a->pitch, (uint8_t)v, 1 + below(a->pitch), 1), hipErrorInvalidValue,
                       "hipMemsetD2D8(NULL)");
        break;
    }
}

static void op_misc(void)
{
    int dev = (int)below((size_t)ndev + 2) - (int)below(2); /* -1 .. ndev + 1 */
    int valid = dev >= 0 && dev < ndev;
    int v = 0, w = 0;
    size_t sz = 0;
    hipError_t e = hipSuccess;
    switch (below(24)) {
    case 0:
        misc_memset_d();
        return;
    case 1:
        misc_copy();
        return;
    case 2: {
        hipUUID u;
        size_t total;
        int maj, min;
        e = C(hipDeviceGetUuid)(&u, dev);
        hipError_t e2 = C(hipDeviceTotalMem)(&total, dev), e3 = C(hipDeviceComputeCapability)(&maj, &min, dev);
        if (!valid) {
            must_fail(e2, "hipDeviceTotalMem of a bad ordinal");
            must_fail(e3, "hipDeviceComputeCapability of a bad ordinal");
        } else if (e2 != hipSuccess || e3 != hipSuccess)
            fail(calls, "hipDeviceTotalMem/hipDeviceComputeCapability of a valid ordinal");
        break;
    }
    case 3: {
        int d2 = (int)below((size_t)ndev), dd = 0;
        e = C(hipDeviceCanAccessPeer)(&v, dev, d2);
        C(hipDeviceGetP2PAttribute)(&w, (hipDeviceP2PAttr)below(6), dev, d2);
        char bus[32];
        if (C(hipDeviceGetPCIBusId)(bus, sizeof bus, d2) == hipSuccess &&
            (C(hipDeviceGetByPCIBusId)(&dd, bus) != hipSuccess || dd != d2))
            fail(calls, "hipDeviceGetByPCIBusId of a device's own bus id");
        must_fail(C(hipDeviceGetByPCIBusId)(&dd, "zzzz:99:99.9"), "hipDeviceGetByPCIBusId of a bad bus id");
        break;
    }
    case 4: { /* peer access on and off (every copy is synchronized already) */
        int d2 = (int)below((size_t)ndev);
        if (!valid) {
            must_fail(C(hipDeviceEnablePeerAccess)(dev, 0), "hipDeviceEnablePeerAccess of a bad device");
            break;
        }
        if (dev == d2) {
            C(hipSetDevice)(dev);
            must_fail(C(hipDeviceEnablePeerAccess)(d2, 0), "hipDeviceEnablePeerAccess of itself");
            C(hipSetDevice)(cur_dev);
            break;
        }
        C(hipSetDevice)(dev);
        C(hipDeviceSynchronize)();
        e = C(hipDeviceEnablePeerAccess)(d2, 0);
        peer_note(dev, d2, e, 1);
        must_fail(C(hipDeviceEnablePeerAccess)(d2, 1), "hipDeviceEnablePeerAccess with flags");
        if (below(2)) {
            C(hipDeviceSynchronize)();
            peer_note(dev, d2, C(hipDeviceDisablePeerAccess)(d2), 0);
            must_fail(C(hipDeviceDisablePeerAccess)(d2), "hipDeviceDisablePeerAccess twice");
        }
        C(hipSetDevice)(cur_dev);
        return;
    }
    case 5: {
        hipFuncCache_t c;
        hipSharedMemConfig m;
        C(hipDeviceGetCacheConfig)(&c);
        C(hipDeviceSetCacheConfig)((hipFuncCache_t)below(5));
        C(hipDeviceGetSharedMemConfig)(&m);
        C(hipDeviceSetSharedMemConfig)((hipSharedMemConfig)below(4));
        int lo, hi;
        if (C(hipDeviceGetStreamPriorityRange)(&lo, &hi) != hipSuccess)
            fail(calls, "hipDeviceGetStreamPriorityRange");
        break;
    }
    case 6: {
        hipLimit_t l = (hipLimit_t)below(8);
        if (C(hipDeviceGetLimit)(&sz, l) == hipSuccess && below(2))
            C(hipDeviceSetLimit)(l, sz);
        must_fail(C(hipDeviceGetLimit)(NULL, l), "hipDeviceGetLimit(NULL)");
        break;
    }
    case 7:
        if (C(hipDriverGetVersion)(&v) != hipSuccess || C(hipRuntimeGetVersion)(&w) != hipSuccess)
            fail(calls, "hipDriverGetVersion/hipRuntimeGetVersion");
        must_fail(C(hipDriverGetVersion)(NULL), "hipDriverGetVersion(NULL)");
        C(hipInit)(below(2) ? 0 : 1 + (unsigned)below(4));
        break;
    case 8: {
        hipError_t r = (hipError_t)(below(4) ? below(1100) : rnd());
        const char *s1 = C(hipGetErrorName)(r), *s2 = C(hipGetErrorString)(r), *s3 = NULL, *s4 = NULL;
        C(hipDrvGetErrorName)(r, &s3);
        C(hipDrvGetErrorString)(r, &s4);
        if (!s1 || !s2)
            fail(calls, "hipGetErrorName/hipGetErrorString returned NULL");
        C(hipPeekAtLastError)();
        C(hipGetLastError)();
        if (C(hipGetLastError)() != hipSuccess)
            fail(calls, "hipGetLastError twice: the second is not hipSuccess");
        break;
    }
    case 9: { /* contexts: the current device comes back */
        hipCtx_t ctx = NULL, got = NULL;
        hipDevice_t hd = 0;
        int api = 0;
        C(hipCtxGetCurrent)(&got);
        C(hipCtxGetDevice)(&hd);
        C(hipCtxGetApiVersion)(got, &api);
        if (valid && C(hipCtxCreate)(&ctx, 0, dev) == hipSuccess) {
            C(hipCtxSynchronize)();
            C(hipCtxPopCurrent)(&got);
            C(hipCtxPushCurrent)(ctx);
            if (C(hipCtxDestroy)(ctx) != hipSuccess)
                fail(calls, "hipCtxDestroy of a created context");
        } else if (!valid)
            must_fail(C(hipCtxCreate)(&ctx, 0, dev), "hipCtxCreate of a bad device");
        C(hipDevicePrimaryCtxRetain)(&ctx, valid ? dev : 0);
        unsigned fl = 0;
        int active = 0;
        C(hipDevicePrimaryCtxGetState)(dev, &fl, &active);
        C(hipDevicePrimaryCtxSetFlags)(dev, 0);
        C(hipDevicePrimaryCtxRelease)(valid ? dev : 0);
        C(hipCtxEnablePeerAccess)(NULL, 0);
        C(hipCtxDisablePeerAccess)(NULL);
        if (C(hipSetDevice)(cur_dev) != hipSuccess || C(hipGetDevice)(&v) != hipSuccess || v != cur_dev)
            fail(calls, "hipSetDevice + hipGetDevice after contexts");
        if (C(hipCtxGetCurrent)(&got) != hipSuccess)
            fail(calls, "hipCtxGetCurrent");
        else
            C(hipCtxSetCurrent)(got);
        return;
    }
    case 10: {
        unsigned fl = 0;
        C(hipGetDeviceFlags)(&fl);
        C(hipSetDeviceFlags)((unsigned)below(4) << (below(2) ? 0 : 4));
        C(hipDeviceGet)(&v, dev);
        hipDeviceProp_t prop;
        memset(&prop, 0, sizeof prop);
        prop.major = (int)below(12);
        if (C(hipChooseDevice)(&v, &prop) != hipSuccess || v < 0 || v >= ndev)
            fail(calls, "hipChooseDevice");
        must_fail(C(hipChooseDevice)(NULL, &prop), "hipChooseDevice(NULL)");
        int list[2] = {dev, 0};
        if (!valid)
            must_fail(C(hipSetValidDevices)(list, 1), "hipSetValidDevices of a bad device");
        break;
    }
    case 11: { /* function queries of null and garbage functions */
        const void *f = below(2) ? NULL : foreign_ptr(0);
        struct hipFuncAttributes fa;
        must_fail(C(hipFuncGetAttributes)(&fa, f), "hipFuncGetAttributes of a null or garbage function");
        must_fail(C(hipFuncGetAttribute)(&v, (hipFunction_attribute)below(10), (hipFunction_t)f),
                  "hipFuncGetAttribute of a null or garbage function");
        must_fail(C(hipFuncSetAttribute)(f, (hipFuncAttribute)below(3), 0), "hipFuncSetAttribute of a bad function");
        must_fail(C(hipFuncSetCacheConfig)(f, hipFuncCachePreferNone), "hipFuncSetCacheConfig of a bad function");
        must_fail(C(hipFuncSetSharedMemConfig)(f, hipSharedMemBankSizeDefault),
                  "hipFuncSetSharedMemConfig of a bad function");
        void *fp = NULL;
        must_fail(C(hipGetFuncBySymbol)((hipFunction_t *)&fp, f), "hipGetFuncBySymbol of a bad symbol");
        must_fail(C(hipGetSymbolAddress)(&fp, f), "hipGetSymbolAddress of a bad symbol");
        must_fail(C(hipGetSymbolSize)(&sz, f), "hipGetSymbolSize of a bad symbol");
        uint8_t b8[16];
        must_fail(C(hipMemcpyToSymbol)(f, b8, sizeof b8, 0, hipMemcpyHostToDevice), "hipMemcpyToSymbol of a bad symbol");
        must_fail(C(hipMemcpyFromSymbol)(b8, f, sizeof b8, 0, hipMemcpyDeviceToHost),
                  "hipMemcpyFromSymbol of a bad symbol");
        must_fail(C(hipMemcpyToSymbolAsync)(f, b8, sizeof b8, 0, hipMemcpyHostToDevice, NULL),
                  "hipMemcpyToSymbolAsync of a bad symbol");
        must_fail(C(hipMemcpyFromSymbolAsync)(b8, f, sizeof b8, 0, hipMemcpyDeviceToHost, NULL),
                  "hipMemcpyFromSymbolAsync of a bad symbol");
        return;
    }
    case 12: { /* launches of null and garbage functions, through every entry point */
        const void *f = below(2) ? NULL : foreign_ptr(0);
        dim3 g = {1, 1, 1}, b = {1 + (unsigned)below(64), 1, 1};
        hipStream_t s = any_stream();
        must_fail(C(hipLaunchCooperativeKernel)(f, g, b, NULL, 0, s), "hipLaunchCooperativeKernel of a bad function");
        must_fail(C(hipExtLaunchKernel)(f, g, b, NULL, 0, s, NULL, NULL, 0), "hipExtLaunchKernel of a bad function");
        must_fail(C(hipModuleLaunchCooperativeKernel)((hipFunction_t)f, 1, 1, 1, b.x, 1, 1, 0, s, NULL),
                  "hipModuleLaunchCooperativeKernel of a bad function");
        if (C(hipConfigureCall)(g, b, 0, s) == hipSuccess) {
            int arg = 1;
            C(hipSetupArgument)(&arg, sizeof arg, 0);
            must_fail(C(hipLaunchByPtr)(f), "hipLaunchByPtr of a bad function");
        }
        return;
    }
    case 13: { /* modules: files and images that are not code objects */
        hipModule_t m = NULL;
        hipFunction_t fn;
        uint8_t junk[64];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)rnd();
        must_fail(C(hipModuleLoad)(&m, below(2) ? "/nonexistent/x.co" : "/dev/null"), "hipModuleLoad of a non-module");
        must_fail(C(hipModuleLoadData)(&m, junk), "hipModuleLoadData of junk");
        must_fail(C(hipModuleLoadDataEx)(&m, junk, 0, NULL, NULL), "hipModuleLoadDataEx of junk");
        must_fail(C(hipModuleGetFunction)(&fn, (hipModule_t)foreign_ptr(0), "k"), "hipModuleGetFunction of a bad module");
        hipDeviceptr_t dp;
        must_fail(C(hipModuleGetGlobal)(&dp, &sz, (hipModule_t)foreign_ptr(0), "g"), "hipModuleGetGlobal of a bad module");
        must_fail(C(hipModuleUnload)((hipModule_t)foreign_ptr(0)), "hipModuleUnload of a bad module");
        return;
    }
    case 14: { /* stream creation variants and queries */
        hipStream_t s = NULL;
        int lo = 0, hi = 0;
        C(hipDeviceGetStreamPriorityRange)(&lo, &hi);
        switch (below(3)) {
        case 0:
            e = C(hipStreamCreateWithFlags)(&s, (unsigned)below(2));
            must_fail(C(hipStreamCreateWithFlags)(&s, 2 + (unsigned)below(100)), "hipStreamCreateWithFlags, bad flags");
            break;
        case 1:
            e = C(hipStreamCreateWithPriority)(&s, (unsigned)below(2), hi + (int)below(4) - 2);
            break;
        default: {
            uint32_t mask[2] = {(uint32_t)rnd() | 1, (uint32_t)rnd()};
            e = C(hipExtStreamCreateWithCUMask)(&s, 1 + (uint32_t)below(2), mask);
            must_fail(C(hipExtStreamCreateWithCUMask)(&s, 0, mask), "hipExtStreamCreateWithCUMask of 0 words");
            break;
        }
        }
        if (e != hipSuccess) {
            fail(calls, "hipStreamCreateWithFlags/WithPriority/hipExtStreamCreateWithCUMask");
            return;
        }
        unsigned fl;
        int pr;
        hipDevice_t sd;
        uint32_t cm[4];
        if (C(hipStreamGetFlags)(s, &fl) != hipSuccess || C(hipStreamGetPriority)(s, &pr) != hipSuccess ||
            C(hipStreamGetDevice)(s, &sd) != hipSuccess || sd != cur_dev)
            fail(calls, "hipStreamGetFlags/GetPriority/GetDevice");
        C(hipExtStreamGetCUMask)(s, 4, cm);
        long want = host_fn_count + 1;
        if (C(hipStreamAddCallback)(s, cb_fn, &host_fn_count, 0) != hipSuccess ||
            C(hipStreamSynchronize)(s) != hipSuccess || host_fn_count != want)
            fail(calls, "hipStreamAddCallback ran once before the sync returned");
        host_fn_count = want;
        must_fail(C(hipStreamAddCallback)(s, cb_fn, NULL, 1 + (unsigned)below(4)), "hipStreamAddCallback with flags");
        if (C(hipStreamQuery)(s) != hipSuccess)
            fail(calls, "hipStreamQuery of an idle stream");
        if (C(hipStreamDestroy)(s) != hipSuccess)
            fail(calls, "hipStreamDestroy");
        must_fail(C(hipStreamGetFlags)(s, &fl), "hipStreamGetFlags of a destroyed stream");
        return;
    }
    case 15: { /* events: flags, query, elapsed time */
        hipEvent_t a = NULL, b = NULL;
        float ms;
        if (C(hipEventCreateWithFlags)(&a, 0) != hipSuccess || C(hipEventCreateWithFlags)(&b, 0) != hipSuccess) {
            fail(calls, "hipEventCreateWithFlags");
            if (a)
                C(hipEventDestroy)(a);
            return;
        }
        must_fail(C(hipEventCreateWithFlags)(&a, 0x80000u << below(4)), "hipEventCreateWithFlags, unknown flags");
        if (C(hipEventRecord)(a, NULL) != hipSuccess || C(hipEventRecordWithFlags)(b, NULL, 0) != hipSuccess ||
            C(hipEventSynchronize)(b) != hipSuccess || C(hipEventQuery)(a) != hipSuccess ||
            C(hipEventElapsedTime)(&ms, a, b) != hipSuccess || ms < 0)
            fail(calls, "hipEventRecord/RecordWithFlags/Query/ElapsedTime");
        must_fail(C(hipEventElapsedTime)(NULL, a, b), "hipEventElapsedTime(NULL)");
        C(hipEventDestroy)(a);
        C(hipEventDestroy)(b);
        must_fail(C(hipEventQuery)(a), "hipEventQuery of a destroyed event");
        return;
    }
    case 16: { /* a memory pool of its own: allocate from it, trim, destroy */
        hipMemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = hipMemAllocationTypePinned;
        pp.location.type = hipMemLocationTypeDevice;
        pp.location.id = valid ? dev : 0;
        hipMemPool_t pool = NULL, dp = NULL;
        if (C(hipMemPoolCreate)(&pool, &pp) != hipSuccess) {
            fail(calls, "hipMemPoolCreate");
            return;
        }
        uint64_t thr = below(2) ? 0 : (uint64_t)1 << 20, got = 1;
        if (C(hipMemPoolSetAttribute)(pool, hipMemPoolAttrReleaseThreshold, &thr) != hipSuccess ||
            C(hipMemPoolGetAttribute)(pool, hipMemPoolAttrReleaseThreshold, &got) != hipSuccess || got != thr)
            fail(calls, "hipMemPoolSet/GetAttribute(ReleaseThreshold)");
        hipMemAccessDesc acc = vmm_access_desc((int)below((size_t)ndev), hipMemAccessFlagsProtReadWrite);
        C(hipMemPoolSetAccess)(pool, &acc, 1);
        hipMemAccessFlags af;
        hipMemLocation loc = acc.location;
        C(hipMemPoolGetAccess)(&af, pool, &loc);
        hipStream_t s = any_stream();
        void *p = NULL;
        size_t size = 1 + below(1 << 20);
        if (C(hipMallocFromPoolAsync)(&p, size, pool, s) != hipSuccess) {
            fail(calls, "hipMallocFromPoolAsync");
        } else {
            uint8_t v8 = (uint8_t)rnd(), back[64];
            size_t n = size < sizeof back ? size : sizeof back;
            if (C(hipMemsetAsync)(p, v8, size, s) != hipSuccess || C(hipStreamSynchronize)(s) != hipSuccess ||
                C(hipMemcpy)(back, (uint8_t *)p + size - n, n, hipMemcpyDeviceToHost) != hipSuccess)
                fail(calls, "fill and read of a hipMallocFromPoolAsync block");
            else {
                data_checks++;
                for (size_t i = 0; i < n; i++)
                    if (back[i] != v8) {
                        fail(calls, "hipMallocFromPoolAsync block: data differs");
                        break;
                    }
            }
            if (C(hipFreeAsync)(p, s) != hipSuccess || C(hipStreamSynchronize)(s) != hipSuccess)
                fail(calls, "hipFreeAsync of a pool block");
        }
        if (C(hipDeviceGetMemPool)(&dp, pp.location.id) != hipSuccess)
            fail(calls, "hipDeviceGetMemPool");
        if (below(4) == 0) { /* the pool becomes the device's, then the default comes back */
            hipMemPool_t def = NULL;
            C(hipDeviceGetDefaultMemPool)(&def, pp.location.id);
            C(hipDeviceSetMemPool)(pp.location.id, pool);
            C(hipDeviceSetMemPool)(pp.location.id, def);
        }
        C(hipMemPoolTrimTo)(pool, 0);
        if (C(hipMemPoolDestroy)(pool) != hipSuccess)
            fail(calls, "hipMemPoolDestroy");
        must_fail(C(hipMemPoolDestroy)(pool), "hipMemPoolDestroy twice");
        return;
    }
    case 17: { /* managed-memory hints on a random allocation (a range of managed memory or not) */
        struct alloc *a = pick();
        if (!a)
            return;
        size_t off, len;
        range(a, &off, &len);
        hipStream_t s = any_stream();
        C(hipMemAdvise)(a->p + off, len, (hipMemoryAdvise)(1 + below(6)), dev);
        if (C(hipMemPrefetchAsync)(a->p + off, len, dev, s) == hipSuccess)
            C(hipStreamSynchronize)(s);
        int attr = 0;
        C(hipMemRangeGetAttribute)(&attr, sizeof attr, (hipMemRangeAttribute)(1 + below(4)), a->p + off, len);
        if (C(hipStreamAttachMemAsync)(s, a->p, 0, hipMemAttachGlobal) == hipSuccess)
            C(hipStreamSynchronize)(s);
        if (C(hipMemPtrGetInfo)(a->p, &sz) != hipSuccess || sz < a->size)
            fail(calls, "hipMemPtrGetInfo of a live allocation");
        size_t fr, tot;
        if (C(hipMemGetInfo)(&fr, &tot) != hipSuccess || fr > tot)
            fail(calls, "hipMemGetInfo");
        return;
    }
    case 18: { /* VMM handle queries */
        hipMemAllocationProp prop = vmm_device_prop((int)below((size_t)ndev));
        size_t gran = 0;
        hipMemGenericAllocationHandle_t h, h2;
        if (C(hipMemGetAllocationGranularity)(&gran, &prop, hipMemAllocationGranularityMinimum) != hipSuccess ||
            C(hipMemCreate)(&h, gran, &prop, 0) != hipSuccess) {
            fail(calls, "hipMemCreate");
            return;
        }
        hipMemAllocationProp got;
        if (C(hipMemGetAllocationPropertiesFromHandle)(&got, h) != hipSuccess || got.location.id != prop.location.id)
            fail(calls, "hipMemGetAllocationPropertiesFromHandle");
        void *va = NULL;
        unsigned long long fl = 0;
        hipMemLocation loc = prop.location;
        if (C(hipMemAddressReserve)(&va, gran, 0, NULL, 0) == hipSuccess) {
            if (C(hipMemMap)(va, gran, 0, h, 0) == hipSuccess) {
                if (C(hipMemRetainAllocationHandle)(&h2, va) != hipSuccess || h2 != h)
                    fail(calls, "hipMemRetainAllocationHandle of a mapped address");
                else
                    C(hipMemRelease)(h2);
                C(hipMemGetAccess)(&fl, &loc, va);
                C(hipMemUnmap)(va, gran);
            }
            C(hipMemAddressFree)(va, gran);
        }
        must_fail(C(hipMemRetainAllocationHandle)(&h2, foreign_ptr(1) ? foreign_ptr(1) : (void *)0x1000),
                  "hipMemRetainAllocationHandle of an unmapped address");
        if (C(hipMemRelease)(h) != hipSuccess)
            fail(calls, "hipMemRelease");
        return;
    }
    case 19: {
        void *fn = NULL;
        hipDriverProcAddressQueryResult q;
        static const char *const names[] = {"hipMalloc", "hipFree", "hipNoSuchFunction", "", "cuMemAlloc"};
        C(hipGetProcAddress)(names[below(5)], &fn, 600 + (int)below(200), 0, &q);
        hipDriverEntryPointQueryResult dq;
        C(hipGetDriverEntryPoint)(names[below(5)], &fn, 0, &dq);
        return;
    }
    default: { /* the runtime's own pinned memory */
        void *p = NULL;
        size_t size = rand_size();
        unsigned fl = below(4) ? 0 : (unsigned)below(16);
        e = C(hipHostMalloc)(&p, size, fl);
        if (e == hipSuccess && p) {
            memset(p, 0x5a, size);
            struct alloc *a = pick();
            if (a) {
                size_t n = size < a->size ? size : a->size;
                if (C(hipMemcpy)(p, a->p, n, hipMemcpyDeviceToHost) != hipSuccess ||
                    (data_checks++, differs(p, a->shadow, n)))
                    fail(calls, "copy into hipHostMalloc memory");
            }
            if (C(hipHostFree)(p) != hipSuccess)
                fail(calls, "hipHostFree");
            must_fail(C(hipHostFree)(p), "hipHostFree twice");
        }
        must_fail(C(hipHostMalloc)(&p, 4096, 0x100u << below(8)), "hipHostMalloc with unknown flags");
        return;
    }
    }
    (void)e;
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

/* FUZZ_TRACE >= 2: prints, for each live allocation, the ranges of its shadow that the last
 * operation changed (runs closer than 64 bytes merged). */
static void trace_shadows(void)
{
    for (int i = 0; i < nlive; i++) {
        struct alloc *a = &live[i];
        if (!a->prev) {
            a->prev = malloc(a->size);
            memcpy(a->prev, a->shadow, a->size);
            printf("  new %p size %zu dev %d\n", (void *)a->p, a->size, a->dev);
            continue;
        }
        size_t k = 0;
        while (k < a->size) {
            while (k < a->size && a->prev[k] == a->shadow[k])
                k++;
            if (k == a->size)
                break;
            size_t lo = k, hi = k;
            while (k < a->size && k < hi + 64) {
                if (a->prev[k] != a->shadow[k])
                    hi = k + 1;
                k++;
            }
            printf("  changed %p [%zu, %zu) first %02x->%02x\n", (void *)a->p, lo, hi, a->prev[lo], a->shadow[lo]);
        }
        memcpy(a->prev, a->shadow, a->size);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    int procs = argc > 3 ? atoi(argv[3]) : 1;
    setvbuf(stdout, NULL, getenv("FUZZ_TRACE") ? _IOFBF : _IOLBF, 1 << 20);
    if (procs == 2) { /* the partner, forked before the runtime initialises */
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
            printf("socketpair failed\nRESULT: FAIL\n");
            return 1;
        }
        partner_pid = fork();
        if (partner_pid == 0) {
            close(sv[0]);
            _exit(partner_main(sv[1]));
        }
        close(sv[1]);
        psock = sv[0];
    }
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
            hipIpcMemHandle_t h; /* starts the IPC fd server (a socket, kept) */
            C(hipIpcGetMemHandle)(&h, p);
            C(hipMemset)(p, 0, 4096);
            C(hipFree)(p);
        }
    }
    C(hipSetDevice)(0);
    /* The render node of the syncobjs and the pinned staging of the semaphore operations. */
    if (access("/dev/dri/renderD128", R_OK | W_OK) == 0) {
        prod = producer_open(0);
        have_prod = C(hipHostMalloc)((void **)&pinned, PIN_SIZE, 0) == hipSuccess;
        if (!have_prod)
            fail(calls, "hipHostMalloc of the staging buffer");
    }
    uint64_t base[11], now[11];
    release_cached_blocks();
    usage_now(base);
    static char base_fds[16384]; /* printed beside the final list if the fd count differs */
    fd_list_into("LEAK:   baseline ", base_fds, sizeof base_fds);
    static void (*const op_table[])(void) = {op_malloc, op_malloc, op_free, op_write, op_write, op_read, op_read, op_d2d,
                                        op_memset, op_foreign, op_query, op_stream_event, op_stream_event, op_device,
                                        op_vmm, op_malloc_bad, op_malloc_more, op_managed, op_2d, op_2d,
                                        op_copy_driver, op_pointer_attribute, op_dmabuf, op_host_register,
                                        op_host_register, op_device_query, op_launch, op_extsem, op_extsem, op_partner, op_partner, op_misc, op_misc, op_misc,
                                        op_graph, op_graph, op_array, op_array, op_memset_d2d, op_3d, op_peer_mix,
                                        op_peer_mix, op_import};
    /* N counts API calls: operations (1 to 8 calls each) run until N calls have been made. */
    trace = getenv("FUZZ_TRACE") ? atoi(getenv("FUZZ_TRACE")) : 0;
    mix_null_only = getenv("FUZZ_MIX") && !strcmp(getenv("FUZZ_MIX"), "null");
    /* FUZZ_SYNC=LO-HI: every device synchronized after operations LO..HI of op_table (to bisect
     * an ordering failure). */
    long sync_lo = 1, sync_hi = 0;
    if (getenv("FUZZ_SYNC"))
        sscanf(getenv("FUZZ_SYNC"), "%ld-%ld", &sync_lo, &sync_hi);
    /* FUZZ_OPS=I,J,...: only these operations of op_table (e.g. 0,1,2,40,41,42: allocations and
     * op_peer_mix, op_import). */
    size_t only[64], nonly = 0;
    for (const char *o = getenv("FUZZ_OPS"); o && *o && nonly < 64; o += strcspn(o, ","), o += *o == ',') {
        size_t k = strtoul(o, NULL, 10);
        if (k < sizeof op_table / sizeof *op_table)
            only[nonly++] = k;
    }
    for (ops = 0; calls < n; ops++, last_pick = NULL) {
        long first = calls;
        size_t op = nonly ? only[below(nonly)] : below(sizeof op_table / sizeof *op_table);
        hist[nhist % HIST].op = (int)op;
        hist[nhist % HIST].pick = NULL;
        hist[nhist++ % HIST].first = first;
        op_table[op]();
        hist[(nhist - 1) % HIST].pick = last_pick ? last_pick->p : NULL;
        if (trace)
            printf("op %ld: #%zu calls %ld.. pick %p cur_dev %d\n", ops, op, first, last_pick ? (void *)last_pick->p : NULL, cur_dev);
        if (trace > 1)
            trace_shadows();
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
        last_pick = &live[i];
        if (C(hipMemcpy)(back, live[i].p, live[i].size, hipMemcpyDeviceToHost) != hipSuccess ||
            (data_checks++, differs(back, live[i].shadow, live[i].size))) {
            fail(calls, "final check: data differs from the shadow");
            host_overlaps(back, live[i].size);
        }
        free(back);
        C(hipFree)(live[i].p);
        free(live[i].shadow);
        free(live[i].prev);
    }
    last_pick = NULL;
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
    for (int i = 0; i < MAXX; i++)
        if (xsem[i].s)
            sem_destroy(i);
    mix_end();
    partner_end();
    if (psem) {
        C(hipDestroyExternalSemaphore)(psem);
        drmSyncobjDestroy(prod.fd, psem_h);
    }
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
    /* The exporter's IPC server closes a connection when it sees the partner's end hang up: on
     * its own thread, so a count taken just after the partner exited may hold it still. A leak
     * stays; that fd goes within the server's next poll. */
    for (int tries = 0; tries < 200 && now[10] != base[10]; tries++) {
        usleep(10000);
        usage_now(now);
    }
    /* As importer (op_import), the runtime keeps its connection to the exporter's server for the
     * next request (src/share/ipc.rs request_fd): one socket whose peer, the partner, has gone. */
    if (imported && now[10] == base[10] + 1 && hung_sockets() == 1)
        now[10]--;
    for (int i = 0; i < 11; i++)
        if (now[i] != base[i]) {
            printf("LEAK: counter %d = %llu, baseline %llu\n", i, (unsigned long long)now[i],
                   (unsigned long long)base[i]);
            if (i == 10) {
                fputs(base_fds, stdout);
                fd_list("LEAK:   now ");
            }
            leaks++;
            bad++;
        }
    if (have_prod) {
        C(hipHostFree)(pinned);
        producer_close(&prod);
    }
    printf("fuzz: %ld API calls (+%ld by the partner process) in %ld operations, seed %llu, %d GPU(s), %d process(es), "
           "%ld must-fail calls checked, %ld data checks, %ld leaks, %ld failures\n",
           calls, partner_calls, ops, (unsigned long long)seed, ndev, procs == 2 ? 2 : 1, failures_expected, data_checks,
           leaks, bad);
    printf("RESULT: %s\n", bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
