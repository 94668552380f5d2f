/*
 * Long runs (issue 13): IPC_CYCLES hipIpcOpenMemHandle/hipIpcCloseMemHandle cycles of a forked
 * exporter's allocations, then ALLOC_CYCLES hipMalloc/hipFree cycles, each phase reporting, before,
 * every tenth of the way and after: open fds (/proc/self/fd), VmRSS, malloc's bytes in use
 * (mallinfo2: the runtime's and the in-process sim's heap), and the sim's counters
 * (VRAM bytes of GPU 0 and 1, live BOs, GPU VA mappings, dma-buf fds: kfdsim_counter).
 *
 *   kfdsim run --gpus 2 -- longrun [IPC_CYCLES [ALLOC_CYCLES]]      (default 1000000 each)
 *
 * Each IPC cycle opens and closes (the last reference: the import is unmapped and freed) one
 * of three handles: a 4 KiB slot of a shared block, a 1 MiB and a 6 MiB allocation; the first
 * bytes are checked on every 64th open, all of them on every 65536th. Each alloc cycle is one
 * hipMalloc + hipFree of 256 B, 64 KiB, 1 MiB or 4 MiB (a memset and a readback on every 4096th).
 * Checks (after a warm-up of 1000 cycles): fds, VRAM bytes, BOs, VA mappings and dma-buf fds
 * equal at the end and at the baseline, heap in use grown by less than 1 MiB, VmRSS by less
 * than 16 MiB (glibc keeps freed heap pages), data intact. Prints
 * "LEAK ..." or "CORRUPTION ..." lines and "RESULT: PASS|FAIL"; exits 1 on FAIL.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include "../shared.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NBUF 3
static const size_t buf_size[NBUF] = {4096, 1 << 20, 6 << 20};
static int bad;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct figures {
    long fds, rss_kib, anon_kib, shmem_kib;
    long heap_kib; /* malloc's bytes in use (mallinfo2: the main arena), not RSS */
    uint64_t vram0, vram1, bos, va, dmabuf;
};

static struct figures figures_now(void)
{
    struct figures f = {fd_count(), status_kib("VmRSS"), status_kib("RssAnon"), status_kib("RssShmem"),
                        (long)(mallinfo2().uordblks >> 10), kfdsim_counter("gpu0.vram_bytes"), kfdsim_counter("gpu1.vram_bytes"),
                        kfdsim_counter("bos"), kfdsim_counter("va_mappings"), kfdsim_counter("fds.dmabuf")};
    return f;
}

static void print_figures(const char *phase, const char *when, long cycles, struct figures f)
{
    printf("%-6s %-9s %9ld cycles: fds %ld, VmRSS %ld KiB (anon %ld, shmem %ld), heap in use %ld KiB, VRAM gpu0 %llu B, "
           "gpu1 %llu B, BOs %llu, VA mappings %llu, dma-buf fds %llu\n",
           phase, when, cycles, f.fds, f.rss_kib, f.anon_kib, f.shmem_kib, f.heap_kib, (unsigned long long)f.vram0, (unsigned long long)f.vram1,
           (unsigned long long)f.bos, (unsigned long long)f.va, (unsigned long long)f.dmabuf);
    fflush(stdout);
}

static void compare(const char *phase, struct figures a, struct figures b)
{
#define SAME(field)                                                                                 \
    if (a.field != b.field) {                                                                       \
        printf("LEAK %s: " #field " %lld at the start, %lld at the end\n", phase, (long long)a.field, \
               (long long)b.field);                                                                 \
        bad = 1;                                                                                    \
    }
    SAME(fds);
    SAME(vram0);
    SAME(vram1);
    SAME(bos);
    SAME(va);
    SAME(dmabuf);
#undef SAME
    if (b.heap_kib - a.heap_kib >= 1024) {
        printf("LEAK %s: malloc's bytes in use grew by %ld KiB\n", phase, b.heap_kib - a.heap_kib);
        bad = 1;
    }
    if (b.rss_kib - a.rss_kib >= 16 * 1024) {
        printf("LEAK %s: VmRSS grew by %ld KiB\n", phase, b.rss_kib - a.rss_kib);
        bad = 1;
    }
}

static uint8_t pat(size_t i, unsigned b) { return (uint8_t)(i * 31u + b * 101u + (i >> 12)); }

static int check_import(void *p, unsigned b, size_t n)
{
    static uint8_t h[6 << 20];
    if (hipMemcpy(h, p, n, hipMemcpyDeviceToHost) != hipSuccess)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (h[i] != pat(i, b))
            return 0;
    return 1;
}

/* The exporter: NBUF allocations (pattern pat(i, b)) on device 0, their handles sent to the
 * parent; waits until the parent is done, then checks its data is unchanged. */
static int exporter(int sock)
{
    void *p[NBUF];
    hipIpcMemHandle_t h[NBUF];
    static uint8_t host[6 << 20];
    for (unsigned b = 0; b < NBUF; b++) {
        for (size_t i = 0; i < buf_size[b]; i++)
            host[i] = pat(i, b);
        if (hipMalloc(&p[b], buf_size[b]) != hipSuccess ||
            hipMemcpy(p[b], host, buf_size[b], hipMemcpyHostToDevice) != hipSuccess ||
            hipIpcGetMemHandle(&h[b], p[b]) != hipSuccess)
            return 1;
    }
    if (send(sock, h, sizeof h, 0) != (ssize_t)sizeof h)
        return 1;
    char c;
    if (recv(sock, &c, 1, 0) != 1)
        return 1;
    for (unsigned b = 0; b < NBUF; b++)
        if (!check_import(p[b], b, buf_size[b])) {
            printf("CORRUPTION: the exporter's buffer %u changed\n", b);
            return 1;
        }
    return 0;
}

static int ipc_cycle(const hipIpcMemHandle_t *h, long i)
{
    unsigned b = (unsigned)(i % NBUF);
    void *p = NULL;
    hipError_t e = hipIpcOpenMemHandle(&p, h[b], hipIpcMemLazyEnablePeerAccess);
    if (e != hipSuccess) {
        printf("UNEXPECTED: cycle %ld: hipIpcOpenMemHandle: %s\n", i, hipGetErrorName(e));
        return 0;
    }
    if (i % 65536 == 0 ? !check_import(p, b, buf_size[b]) : i % 64 == 0 ? !check_import(p, b, 64) : 0) {
        printf("CORRUPTION: cycle %ld: imported buffer %u\n", i, b);
        return 0;
    }
    if ((e = hipIpcCloseMemHandle(p)) != hipSuccess) {
        printf("UNEXPECTED: cycle %ld: hipIpcCloseMemHandle: %s\n", i, hipGetErrorName(e));
        return 0;
    }
    return 1;
}

static int alloc_cycle(long i)
{
    static const size_t sizes[] = {256, 64 << 10, 1 << 20, 4 << 20};
    size_t n = sizes[i % 4];
    void *p = NULL;
    hipError_t e = hipMalloc(&p, n);
    if (e != hipSuccess) {
        printf("UNEXPECTED: cycle %ld: hipMalloc(%zu): %s\n", i, n, hipGetErrorName(e));
        return 0;
    }
    if (i % 4096 == 0) {
        uint8_t back[256];
        uint8_t v = (uint8_t)(i >> 12);
        if (hipMemset(p, v, n) != hipSuccess ||
            hipMemcpy(back, (char *)p + n - sizeof back, sizeof back, hipMemcpyDeviceToHost) != hipSuccess) {
            printf("UNEXPECTED: cycle %ld: memset/readback failed\n", i);
            return 0;
        }
        for (size_t k = 0; k < sizeof back; k++)
            if (back[k] != v) {
                printf("CORRUPTION: cycle %ld: byte %zu of the readback\n", i, k);
                return 0;
            }
    }
    if ((e = hipFree(p)) != hipSuccess) {
        printf("UNEXPECTED: cycle %ld: hipFree: %s\n", i, hipGetErrorName(e));
        return 0;
    }
    return 1;
}

/* Runs `cycles` cycles of `one` after 1000 warm-up cycles, with figures every tenth. */
static void phase(const char *name, long cycles, int (*one)(const hipIpcMemHandle_t *, long),
                  const hipIpcMemHandle_t *h)
{
    for (long i = 0; i < 1000; i++)
        if (!one(h, i)) {
            bad = 1;
            return;
        }
    struct figures f0 = figures_now();
    print_figures(name, "before", 0, f0);
    double t0 = now_s();
    long step = cycles / 10 ? cycles / 10 : 1;
    for (long i = 0; i < cycles; i++) {
        if (!one(h, i)) {
            bad = 1;
            break;
        }
        if ((i + 1) % step == 0 && i + 1 < cycles)
            print_figures(name, "during", i + 1, figures_now());
    }
    struct figures f1 = figures_now();
    print_figures(name, "after", cycles, f1);
    printf("%-6s %ld cycles in %.1f s (%.1f us each)\n", name, cycles, now_s() - t0,
           (now_s() - t0) * 1e6 / (double)(cycles ? cycles : 1));
    compare(name, f0, f1);
}

static int alloc_adapter(const hipIpcMemHandle_t *h, long i)
{
    (void)h;
    return alloc_cycle(i);
}

int main(int argc, char **argv)
{
    long ipc_cycles = argc > 1 ? atol(argv[1]) : 1000000;
    long alloc_cycles = argc > 2 ? atol(argv[2]) : 1000000;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    fflush(stdout);
    pid_t pid = fork(); /* before the runtime initialises */
    if (pid < 0)
        return 1;
    if (pid == 0) {
        close(sv[0]);
        exit(exporter(sv[1]));
    }
    close(sv[1]);
    hipIpcMemHandle_t h[NBUF];
    if (recv(sv[0], h, sizeof h, MSG_WAITALL) != (ssize_t)sizeof h) {
        printf("RESULT: FAIL (no handles from the exporter)\n");
        return 1;
    }
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess || hipSetDevice(n - 1) != hipSuccess)
        return 1;
    printf("long runs: %ld IPC open/close cycles (importer on device %d, exporter on device 0), "
           "%ld alloc/free cycles\n", ipc_cycles, n - 1, alloc_cycles);
    phase("ipc", ipc_cycles, ipc_cycle, h);
    if (send(sv[0], "x", 1, 0) != 1)
        bad = 1;
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("UNEXPECTED: the exporter failed (status %#x)\n", st);
        bad = 1;
    }
    phase("alloc", alloc_cycles, alloc_adapter, NULL);
    printf("RESULT: %s\n", bad ? "FAIL" : "PASS");
    return bad;
}
