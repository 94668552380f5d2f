/*
 * hipkfd IPC benchmark (not a test): latency of hipIpcGetMemHandle,
 * hipIpcOpenMemHandle and hipIpcCloseMemHandle, median and 99th percentile.
 *
 *   make bench        (top level; runs under `kfdsim run --gpus 2 --`)
 *
 * The process forks before initialising HIP: the parent exports, the child
 * imports on the last device. Timings are per call, wall clock (CLOCK_MONOTONIC).
 *   get (first)   hipIpcGetMemHandle on a fresh allocation (makes its token;
 *                 the first call of the process also starts the fd server)
 *   get (again)   hipIpcGetMemHandle on an allocation already exported
 *   open          hipIpcOpenMemHandle of a handle not open in the importer:
 *                 connect, token check, SCM_RIGHTS, IMPORT_DMABUF, MAP_MEMORY_TO_GPU
 *   open (again)  hipIpcOpenMemHandle of a handle already open (refcount)
 *   close         hipIpcCloseMemHandle of the last reference (unmap, free)
 * Env: IPC_BENCH_N (iterations, default 2000), IPC_BENCH_SIZE (bytes, default 2 MiB).
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int p99 = (int)(0.99 * (n - 1) + 0.5);
    printf("  %-14s median %8.1f us   p99 %8.1f us   (n=%d)\n", what, v[n / 2], v[p99], n);
}

static void xio(ssize_t r, size_t want)
{
    if (r != (ssize_t)want) {
        perror("socketpair i/o");
        exit(1);
    }
}

int main(void)
{
    int n = getenv("IPC_BENCH_N") ? atoi(getenv("IPC_BENCH_N")) : 2000;
    size_t size = getenv("IPC_BENCH_SIZE") ? (size_t)atoll(getenv("IPC_BENCH_SIZE")) : 2u << 20;
    if (n < 1)
        n = 1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        /* importer */
        close(sv[0]);
        int ndev = 0;
        OK(hipGetDeviceCount(&ndev));
        OK(hipSetDevice(ndev - 1));
        hipIpcMemHandle_t h;
        xio(read(sv[1], &h, sizeof h), sizeof h);
        double *open = calloc((size_t)n, sizeof(double));
        double *again = calloc((size_t)n, sizeof(double));
        double *cl = calloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; i++) {
            void *p = NULL, *q = NULL;
            double t0 = now_us();
            OK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
            double t1 = now_us();
            OK(hipIpcOpenMemHandle(&q, h, hipIpcMemLazyEnablePeerAccess));
            double t2 = now_us();
            OK(hipIpcCloseMemHandle(q));
            double t3 = now_us();
            OK(hipIpcCloseMemHandle(p));
            double t4 = now_us();
            open[i] = t1 - t0;
            again[i] = t2 - t1;
            cl[i] = t4 - t3;
        }
        report("open", open, n);
        report("open (again)", again, n);
        report("close", cl, n);
        fflush(stdout);
        char done = 1;
        xio(write(sv[1], &done, 1), 1);
        _exit(0);
    }
    /* exporter */
    close(sv[1]);
    printf("hipkfd IPC latency, %zu-byte buffer, exporter on device 0, importer on the last device\n", size);
    void **bufs = calloc((size_t)n, sizeof(void *));
    double *first = calloc((size_t)n, sizeof(double));
    double *again = calloc((size_t)n, sizeof(double));
    int nb = n < 256 ? n : 256; /* live allocations at a time */
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        hipIpcMemHandle_t h;
        OK(hipMalloc(&p, 4096));
        double t0 = now_us();
        OK(hipIpcGetMemHandle(&h, p));
        double t1 = now_us();
        OK(hipIpcGetMemHandle(&h, p));
        double t2 = now_us();
        first[i] = t1 - t0;
        again[i] = t2 - t1;
        if (bufs[i % nb])
            OK(hipFree(bufs[i % nb]));
        bufs[i % nb] = p;
    }
    report("get (first)", first, n);
    report("get (again)", again, n);
    fflush(stdout);
    void *buf = NULL;
    OK(hipMalloc(&buf, size));
    hipIpcMemHandle_t h;
    OK(hipIpcGetMemHandle(&h, buf));
    xio(write(sv[0], &h, sizeof h), sizeof h);
    char done;
    xio(read(sv[0], &done, 1), 1);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
