/*
 * The sim's accounting seen from a test: single counters of kfd-sim (kfdsim_stat, found with
 * dlsym; 0 without kfd-sim) and the VRAM bytes of every GPU and dma-buf fds of this process as
 * one comparable figure, for the "everything given back" checks (test_death.c,
 * test_concurrency.c, test_security.c).
 */
#ifndef HIPCONF_USAGE_H
#define HIPCONF_USAGE_H

#include "common.h"

#include <dlfcn.h>
#include <stdio.h>

/* One counter of the sim's accounting for this process (0 without kfd-sim). */
static inline uint64_t sim_stat(const char *key)
{
    uint64_t (*f)(const char *) = (uint64_t(*)(const char *))dlsym(RTLD_DEFAULT, "kfdsim_stat");
    return f ? f(key) : 0;
}

/* VRAM bytes of every GPU and dma-buf fds of this process, as one comparable figure each. */
struct usage {
    uint64_t vram[8], dmabuf_fds;
};

static inline struct usage usage_now(void)
{
    struct usage u = {{0}, sim_stat("fds.dmabuf")};
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    for (int d = 0; d < n && d < 8; d++) {
        char k[32];
        snprintf(k, sizeof k, "gpu%d.vram_bytes", d);
        u.vram[d] = sim_stat(k);
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
