/*
 * The sim's accounting seen from a test (kfdsim_counter, ../shared.h): the VRAM bytes of every
 * GPU and dma-buf fds of this process as one comparable figure, for the "everything given back"
 * checks (test_death.c, test_death_sync.c, test_concurrency.c, test_security.c); and the free
 * VRAM every device has as a fresh (forked) process sees it, which counts every live process.
 */
#ifndef HIPCONF_USAGE_H
#define HIPCONF_USAGE_H

#include "common.h"
#include "proc.h"
#include "../shared.h"

#include <stdio.h>

/* VRAM bytes of every GPU and dma-buf fds of this process, as one comparable figure each. */
struct usage {
    uint64_t vram[8], dmabuf_fds;
};

static inline struct usage usage_now(void)
{
    struct usage u = {{0}, kfdsim_counter("fds.dmabuf")};
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    for (int d = 0; d < n && d < 8; d++) {
        char k[32];
        snprintf(k, sizeof k, "gpu%d.vram_bytes", d);
        u.vram[d] = kfdsim_counter(k);
    }
    return u;
}

static inline void check_usage_back(struct usage before)
{
    struct usage now = usage_now();
    for (int d = 0; d < 8; d++)
        CHECKF(now.vram[d] == before.vram[d], "GPU %d VRAM bytes: %llu after, %llu before", d,
               (unsigned long long)now.vram[d], (unsigned long long)before.vram[d]);
    CHECKF(now.dmabuf_fds == before.dmabuf_fds, "dma-buf fds: %llu after, %llu before",
           (unsigned long long)now.dmabuf_fds, (unsigned long long)before.dmabuf_fds);
}

/* The free VRAM of every device as a fresh process sees it (hipMemGetInfo: the sim counts every
 * live process's VRAM). */
static inline void mem_info_probe(int fd, void *arg)
{
    (void)arg;
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    send_u64(fd, (uint64_t)n);
    for (int d = 0; d < n; d++) {
        size_t fr = 0, total = 0;
        HIP_OK(hipSetDevice(d));
        HIP_OK(hipMemGetInfo(&fr, &total));
        send_u64(fd, fr);
    }
}

struct free_vram {
    uint64_t n, fr[8];
};

static inline struct free_vram probe_free(void)
{
    struct free_vram f = {0, {0}};
    struct peer pr = spawn(mem_info_probe, NULL);
    f.n = recv_u64(pr.fd);
    for (uint64_t d = 0; d < f.n && d < 8; d++)
        f.fr[d] = recv_u64(pr.fd);
    join(&pr, "hipMemGetInfo probe");
    return f;
}

/* Every device's free VRAM is back at `before` (the dead and the finished processes hold none). */
static inline void check_free_back(struct free_vram before)
{
    struct free_vram now = probe_free();
    for (uint64_t d = 0; d < before.n && d < 8; d++)
        CHECKF(now.fr[d] == before.fr[d], "device %llu: hipMemGetInfo free %llu after, %llu before",
               (unsigned long long)d, (unsigned long long)now.fr[d], (unsigned long long)before.fr[d]);
}

#endif
