/*
 * The sim's accounting seen from a test (kfdsim_counter, ../shared.h): the VRAM bytes of every
 * GPU and dma-buf fds of this process as one comparable figure, for the "everything given back"
 * checks (test_death.c, test_concurrency.c, test_security.c).
 */
#ifndef HIPCONF_USAGE_H
#define HIPCONF_USAGE_H

#include "common.h"
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

#endif
