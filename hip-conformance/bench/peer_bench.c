/*
 * hipMemcpyPeer benchmark (a report, not a test): bandwidth GPU 0 -> GPU 1
 * from 4 KiB to 1 GiB, and the latency of a small copy, each next to host
 * memcpy of the same size measured in the same run (on kfd-sim, host memcpy
 * is the physical limit: the simulated SDMA engine copies with the CPU).
 *
 * Two modes: peer access enabled (direct copy on SDMA engines of the source,
 * xGMI queues in an xGMI hive, spread over engines when large) and not enabled
 * (double-buffered staging through pinned host memory).
 *
 *   make bench                      # top level: builds, runs under kfdsim --gpus 2
 *   kfdsim run --topology pcie-p2p-2 -- hip-conformance/build/peer_bench [max_MiB]
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KiB ((size_t)1024)
#define MiB (KiB * KiB)

#define TRY(call)                                                                   \
    do {                                                                            \
        hipError_t e_ = (call);                                                     \
        if (e_ != hipSuccess) {                                                     \
            fprintf(stderr, "%s: %s\n", #call, hipGetErrorName(e_));                \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Repetitions so that one measurement moves ~256 MiB (at least 3, at most 2000). */
static int reps_for(size_t n)
{
    size_t r = (256 * MiB) / n;
    return r < 3 ? 3 : r > 2000 ? 2000 : (int)r;
}

static volatile uint8_t sink;

static double host_memcpy_s(uint8_t *dst, const uint8_t *src, size_t n, int reps)
{
    memcpy(dst, src, n); /* warm */
    double t = now_s();
    for (int i = 0; i < reps; i++) {
        memcpy(dst, src, n);
        sink ^= dst[i % n];
    }
    return (now_s() - t) / reps;
}

/* Pipelined: `reps` copies queued, then one synchronize. */
static double peer_bw_s(void *dst, void *src, size_t n, int reps)
{
    TRY(hipMemcpyPeer(dst, 1, src, 0, n)); /* warm */
    TRY(hipDeviceSynchronize());
    double t = now_s();
    for (int i = 0; i < reps; i++)
        TRY(hipMemcpyPeer(dst, 1, src, 0, n));
    TRY(hipDeviceSynchronize());
    return (now_s() - t) / reps;
}

/* Latency: each copy waited for before the next. */
static double peer_lat_s(void *dst, void *src, size_t n, int reps)
{
    TRY(hipMemcpyPeer(dst, 1, src, 0, n));
    TRY(hipDeviceSynchronize());
    double t = now_s();
    for (int i = 0; i < reps; i++) {
        TRY(hipMemcpyPeer(dst, 1, src, 0, n));
        TRY(hipDeviceSynchronize());
    }
    return (now_s() - t) / reps;
}

static void run(const char *mode, void *d0, void *d1, uint8_t *h0, uint8_t *h1, size_t max)
{
    printf("\n%s\n", mode);
    printf("%10s %14s %14s %8s\n", "size", "memcpy GB/s", "peer GB/s", "ratio");
    for (size_t n = 4 * KiB; n <= max; n *= 4) {
        int reps = reps_for(n);
        double h = host_memcpy_s(h1, h0, n, reps);
        double p = peer_bw_s(d1, d0, n, reps);
        char sz[32];
        if (n >= MiB)
            snprintf(sz, sizeof sz, "%zu MiB", n / MiB);
        else
            snprintf(sz, sizeof sz, "%zu KiB", n / KiB);
        printf("%10s %14.2f %14.2f %8.3f\n", sz, n / h / 1e9, n / p / 1e9, h / p);
        fflush(stdout);
    }
    for (size_t n = 4; n <= 4 * KiB; n *= 1024) {
        int reps = 200;
        double h = host_memcpy_s(h1, h0, n, 100000);
        double p = peer_lat_s(d1, d0, n, reps);
        printf("latency %zu B: memcpy %.3f us, hipMemcpyPeer+sync %.1f us, ratio %.5f\n", n, h * 1e6,
               p * 1e6, h / p);
    }
}

int main(int argc, char **argv)
{
    size_t max = (argc > 1 ? (size_t)atol(argv[1]) : 1024) * MiB;
    int count = 0, can = 0;
    TRY(hipGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "peer_bench needs 2 GPUs\n");
        return 1;
    }
    void *d0 = NULL, *d1 = NULL;
    uint8_t *h0 = malloc(max), *h1 = malloc(max);
    if (!h0 || !h1)
        return 1;
    memset(h0, 0x5a, max);
    memset(h1, 0, max);
    TRY(hipSetDevice(1));
    TRY(hipMalloc(&d1, max));
    TRY(hipSetDevice(0));
    TRY(hipMalloc(&d0, max));
    TRY(hipMemcpy(d0, h0, max, hipMemcpyHostToDevice));
    TRY(hipDeviceCanAccessPeer(&can, 0, 1));
    printf("hipMemcpyPeer GPU 0 -> GPU 1, up to %zu MiB; ratio = peer bandwidth / host memcpy "
           "bandwidth (latency: memcpy time / peer time)\n", max / MiB);
    run("peer access not enabled (staged through pinned host memory)", d0, d1, h0, h1, max);
    if (can) {
        TRY(hipDeviceEnablePeerAccess(1, 0));
        run("peer access enabled (direct SDMA copy)", d0, d1, h0, h1, max);
    }
    /* the last copy landed */
    TRY(hipMemcpy(h1, d1, max, hipMemcpyDeviceToHost));
    if (memcmp(h0, h1, max) != 0) {
        fprintf(stderr, "peer_bench: data check failed\n");
        return 1;
    }
    printf("\ndata check: OK\n");
    return 0;
}
