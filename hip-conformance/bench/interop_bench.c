/*
 * Interop benchmark (a report, not a test): latency from a producer's syncobj signal to the
 * completion of a stream that waited on it (hipWaitExternalSemaphoresAsync then a 4 KiB
 * hipMemsetAsync; target: p99 <= 100 us on kfd-sim), as median, p90, p99 and max over
 * N (default 2000; argv[1]) signals in three cases:
 *   idle 200 us   the wait is queued right after the last work, then the process sleeps 200 us
 *                 before the signal (the waiter thread and the engine are idle, as in a frame
 *                 loop);
 *   idle 3 ms     the engine has been idle 3 ms (its backoff at its longest) when the wait is
 *                 queued, and the signal comes 3 ms later;
 *   back-to-back  the signal right after the wait is queued;
 * next to the floor (the same fill with no wait, after 200 us idle); each on a stream of the
 * default wait policy (Auto: the runtime's syncobj waiter thread sleeps until the signal) and
 * on one of hipSyncPolicySpin (it polls the syncobj, and the host spins in the sync); then the
 * time to import and map a 256 MiB dma-buf. Usage: interop_bench [N].
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "../interop_producer.h"

#define HIP(call)                                                                          \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        if (e_ != hipSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts lat[0..n) and prints its median, p90, p99 and max (microseconds). */
static void report(const char *what, double *lat, int n)
{
    qsort(lat, n, sizeof lat[0], cmp);
    printf("interop: %-52s median %6.1f  p90 %6.1f  p99 %6.1f  max %7.1f us (%d)\n", what, lat[n / 2],
           lat[n * 90 / 100], lat[n * 99 / 100], lat[n - 1], n);
}

struct ctx {
    struct producer p;
    uint32_t h;
    hipExternalSemaphore_t s;
    hipStream_t st;
    void *d;
    uint64_t point;
};

/* One signal-to-completion latency (us): `before_us` of sleep, wait + fill queued, `idle_us` of
 * sleep, signal, sync. */
static double signal_to_completion(struct ctx *c, int before_us, int idle_us)
{
    if (before_us)
        usleep(before_us);
    hipExternalSemaphoreWaitParams w = {0};
    w.params.fence.value = ++c->point;
    HIP(hipWaitExternalSemaphoresAsync(&c->s, &w, 1, c->st));
    HIP(hipMemsetAsync(c->d, (int)(c->point & 0xff), 4096, c->st));
    if (idle_us)
        usleep(idle_us);
    int64_t t0 = mono_ns();
    psync_signal(&c->p, c->h, c->point);
    HIP(hipStreamSynchronize(c->st));
    return (double)(mono_ns() - t0) / 1e3;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 100)
        n = 100;
    struct ctx c = {.p = producer_open(0)};
    int sfd;
    c.h = psync_create(&c.p, &sfd);
    hipExternalSemaphoreHandleDesc sd = {.type = hipExternalSemaphoreHandleTypeTimelineSemaphoreFd};
    sd.handle.fd = sfd;
    HIP(hipImportExternalSemaphore(&c.s, &sd));
    HIP(hipMalloc(&c.d, 4096));
    double *lat = calloc((size_t)n, sizeof *lat);
    if (!lat)
        return 1;
    printf("interop: syncobj signal -> completion of the waiting stream (target: p99 <= 100 us)\n");
    hipStream_t streams[2];
    HIP(hipStreamCreateWithFlags(&streams[0], hipStreamNonBlocking));
    HIP(hipStreamCreateWithFlags(&streams[1], hipStreamNonBlocking));
    hipStreamAttrValue v = {0};
    v.syncPolicy = hipSyncPolicySpin;
    HIP(hipStreamSetAttribute(streams[1], hipStreamAttributeSynchronizationPolicy, &v));
    for (int k = 0; k < 2; k++) {
        const char *pol = k ? "spin" : "auto";
        char what[96];
        c.st = streams[k];
        for (int i = 0; i < n; i++)
            lat[i] = signal_to_completion(&c, 0, 200);
        snprintf(what, sizeof what, "%s: idle 200 us before the signal", pol);
        report(what, lat, n);
        for (int i = 0; i < n; i++)
            lat[i] = signal_to_completion(&c, 3000, 3000);
        snprintf(what, sizeof what, "%s: engine idle 3 ms, wait queued 3 ms before", pol);
        report(what, lat, n);
        for (int i = 0; i < n; i++)
            lat[i] = signal_to_completion(&c, 0, 0);
        snprintf(what, sizeof what, "%s: back-to-back (signal right after the wait)", pol);
        report(what, lat, n);
        /* The floor under that: the same fill with no wait, queued then synchronized. */
        for (int i = 0; i < n; i++) {
            usleep(200);
            int64_t t0 = mono_ns();
            HIP(hipMemsetAsync(c.d, i & 0xff, 4096, c.st));
            HIP(hipStreamSynchronize(c.st));
            lat[i] = (double)(mono_ns() - t0) / 1e3;
        }
        snprintf(what, sizeof what, "%s: floor: 4 KiB hipMemsetAsync + sync, no wait", pol);
        report(what, lat, n);
    }
    free(lat);

    const size_t big = 256u << 20;
    struct pbuf b = pbuf_alloc(&c.p, big, AMDGPU_GEM_DOMAIN_VRAM);
    int fd = pbuf_export(&b);
    int64_t t0 = mono_ns();
    hipExternalMemory_t mem;
    hipExternalMemoryHandleDesc md = {.type = hipExternalMemoryHandleTypeOpaqueFd, .size = big};
    md.handle.fd = fd;
    HIP(hipImportExternalMemory(&mem, &md));
    void *ptr;
    hipExternalMemoryBufferDesc bd = {.offset = 0, .size = big};
    HIP(hipExternalMemoryGetMappedBuffer(&ptr, mem, &bd));
    double imp = (double)(mono_ns() - t0) / 1e3;
    t0 = mono_ns();
    HIP(hipFree(ptr));
    HIP(hipDestroyExternalMemory(mem));
    double fr = (double)(mono_ns() - t0) / 1e3;
    printf("interop: import + map of a 256 MiB dma-buf on every GPU: %.1f us; hipFree + destroy: %.1f us\n", imp, fr);
    pbuf_free(&b);
    HIP(hipDestroyExternalSemaphore(c.s));
    HIP(hipStreamDestroy(streams[0]));
    HIP(hipStreamDestroy(streams[1]));
    HIP(hipFree(c.d));
    producer_close(&c.p);
    return 0;
}
