/*
 * VMM benchmark (a report, not a test):
 *   1. N full cycles (default 100,000) of hipMemCreate / hipMemAddressReserve /
 *      hipMemMap / hipMemSetAccess / hipMemUnmap / hipMemRelease / hipMemAddressFree
 *      on a 2 MiB chunk: median and p99 per cycle, and the fds, VRAM and VA
 *      before and after (nothing may leak);
 *   2. a 1 GiB chunk and a 64 GiB reservation: time to create, map and give access;
 *   3. export in one process + import, map and access in another (fd over
 *      SCM_RIGHTS): median and p99 of the importer's side, and the round trip.
 *
 *   make -C hip-conformance vmm-bench [VMM_CYCLES=100000]
 */
#define _GNU_SOURCE
#include "bench.h"
#include "../fdpass.h"
#include "../shared.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void report(const char *what, double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_d);
    printf("  %-58s median %8.1f us   p99 %8.1f us   (n=%d)\n", what, v[n / 2], v[(int)(n * 0.99)], n);
}

static hipMemAllocationProp prop(int dev) { return vmm_device_prop(dev); }

static void access_rw(void *va, size_t n, int dev)
{
    hipMemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = hipMemLocationTypeDevice;
    d.location.id = dev;
    d.flags = hipMemAccessFlagsProtReadWrite;
    OK(hipMemSetAccess(va, n, &d, 1));
}

/* One create/reserve/map/access/unmap/release/free cycle; returns the VA it reserved. */
static void *cycle(const hipMemAllocationProp *p, size_t sz)
{
    hipMemGenericAllocationHandle_t h;
    void *va = NULL;
    OK(hipMemCreate(&h, sz, p, 0));
    OK(hipMemAddressReserve(&va, sz, 0, NULL, 0));
    OK(hipMemMap(va, sz, 0, h, 0));
    access_rw(va, sz, 0);
    OK(hipMemUnmap(va, sz));
    OK(hipMemRelease(h));
    OK(hipMemAddressFree(va, sz));
    return va;
}

static void cycles(int n)
{
    const size_t sz = 2 << 20;
    hipMemAllocationProp p = prop(0);
    double *t = malloc(sizeof(double) * n);
    size_t free0, free1, total;
    void *first = cycle(&p, sz); /* warm-up: queues, first-use state */
    OK(hipMemGetInfo(&free0, &total));
    int fds0 = fd_count();
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        cycle(&p, sz);
        t[i] = now_us() - t0;
    }
    int fds1 = fd_count();
    OK(hipMemGetInfo(&free1, &total));
    void *va = NULL;
    OK(hipMemAddressReserve(&va, sz, 0, NULL, 0));
    report("2 MiB create..free cycle (target <= 50 us)", t, n);
    printf("  after %d cycles: VRAM free %zu -> %zu bytes, fds %d -> %d, VA %s\n", n, free0, free1, fds0, fds1,
           va == first ? "handed out again at the same address" : "MOVED (leak?)");
    OK(hipMemAddressFree(va, sz));
    free(t);
}

static void big(void)
{
    hipMemAllocationProp p = prop(0);
    hipMemGenericAllocationHandle_t h;
    void *va = NULL;
    double t0 = now_us();
    OK(hipMemAddressReserve(&va, (size_t)64 << 30, 0, NULL, 0));
    double t1 = now_us();
    OK(hipMemCreate(&h, (size_t)1 << 30, &p, 0));
    OK(hipMemMap(va, (size_t)1 << 30, 0, h, 0));
    access_rw(va, (size_t)1 << 30, 0);
    double t2 = now_us();
    OK(hipMemUnmap(va, (size_t)1 << 30));
    OK(hipMemRelease(h));
    OK(hipMemAddressFree(va, (size_t)64 << 30));
    printf("  64 GiB reservation: %.1f us; 1 GiB chunk create + map + access: %.1f us\n", t1 - t0, t2 - t1);
}

#define SHARE_REPS 500

/* Exporter: per rep, create a 2 MiB chunk, export, send the fd, wait for the
 * importer, release. Importer: import + reserve + map + access, time it. */
static void share(int ndev)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        exit(1);
    const size_t sz = 2 << 20;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        int dev = ndev - 1;
        OK(hipSetDevice(dev));
        double t[SHARE_REPS];
        for (int i = 0; i < SHARE_REPS; i++) {
            int fd = -1;
            if (!fdpass_recv(sv[1], &fd, 1))
                _exit(1);
            double t0 = now_us();
            hipMemGenericAllocationHandle_t h;
            void *va;
            OK(hipMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor));
            OK(hipMemAddressReserve(&va, sz, 0, NULL, 0));
            OK(hipMemMap(va, sz, 0, h, 0));
            access_rw(va, sz, dev);
            t[i] = now_us() - t0;
            OK(hipMemUnmap(va, sz));
            OK(hipMemRelease(h));
            OK(hipMemAddressFree(va, sz));
            close(fd);
            char b = 'k';
            if (write(sv[1], &b, 1) != 1)
                _exit(1);
        }
        char what[96];
        snprintf(what, sizeof what, "import + reserve + map + access, 2nd process (GPU %d)", dev);
        report(what, t, SHARE_REPS);
        fflush(stdout);
        _exit(0);
    }
    close(sv[1]);
    hipMemAllocationProp p = prop(0);
    double t[SHARE_REPS];
    for (int i = 0; i < SHARE_REPS; i++) {
        hipMemGenericAllocationHandle_t h;
        OK(hipMemCreate(&h, sz, &p, 0));
        double t0 = now_us();
        int fd = -1;
        OK(hipMemExportToShareableHandle(&fd, h, hipMemHandleTypePosixFileDescriptor, 0));
        if (!fdpass_send(sv[0], &fd, 1))
            exit(1);
        close(fd);
        char b;
        if (read(sv[0], &b, 1) != 1)
            exit(1);
        t[i] = now_us() - t0;
        OK(hipMemRelease(h));
    }
    int st;
    waitpid(pid, &st, 0);
    report("export -> import, map, access, unmap in the 2nd process -> ack", t, SHARE_REPS);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int sv_ndev[2];
    /* Device count from a throw-away child, so that this process forks the
     * sharing test before it initialises HIP. */
    if (pipe(sv_ndev) != 0)
        return 1;
    pid_t c = fork();
    if (c == 0) {
        int k = 0;
        hipGetDeviceCount(&k);
        _exit(k);
    }
    int st = 0;
    waitpid(c, &st, 0);
    int ndev = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    printf("hipkfd VMM benchmark (%d GPU(s))\n", ndev);
    share(ndev);
    cycles(n);
    big();
    return 0;
}
