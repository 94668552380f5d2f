/*
 * What the ROCr fidelity programs (hsa_copy.c, hsa_ipc.c) share: one check per step, counted
 * and reported as "N passed, N failed" (tools/run-tests sums it); agent and pool lookup; an
 * asynchronous copy waited on with a 10 s limit.
 */
#ifndef HSA_COMMON_H
#define HSA_COMMON_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static inline const char *status_str(hsa_status_t s)
{
    const char *str = NULL;
    if (hsa_status_string(s, &str) != HSA_STATUS_SUCCESS || !str)
        return "?";
    return str;
}

#define CHECK_HSA(call)                                                                   \
    do {                                                                                  \
        hsa_status_t s_ = (call);                                                         \
        CHECK(s_ == HSA_STATUS_SUCCESS, "%s = %#x (%s)", #call, (unsigned)s_, status_str(s_)); \
    } while (0)

#define MAX_GPUS 8

struct agents {
    hsa_agent_t cpu;
    int have_cpu;
    hsa_agent_t gpu[MAX_GPUS];
    int ngpus;
};

static inline hsa_status_t collect_agent(hsa_agent_t agent, void *data)
{
    struct agents *a = data;
    hsa_device_type_t type;
    hsa_status_t s = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (s != HSA_STATUS_SUCCESS)
        return s;
    if (type == HSA_DEVICE_TYPE_CPU && !a->have_cpu) {
        a->cpu = agent;
        a->have_cpu = 1;
    } else if (type == HSA_DEVICE_TYPE_GPU && a->ngpus < MAX_GPUS) {
        a->gpu[a->ngpus++] = agent;
    }
    return HSA_STATUS_SUCCESS;
}

struct pool_pick {
    hsa_amd_memory_pool_t pool;
    int found;
    int want_fine; /* 1: fine-grained (system memory), 0: coarse-grained (VRAM) */
};

static inline hsa_status_t pick_pool(hsa_amd_memory_pool_t pool, void *data)
{
    struct pool_pick *p = data;
    hsa_amd_segment_t seg;
    uint32_t flags = 0;
    bool alloc_ok = false;
    if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) != HSA_STATUS_SUCCESS ||
        seg != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc_ok) !=
            HSA_STATUS_SUCCESS || !alloc_ok)
        return HSA_STATUS_SUCCESS;
    if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags) != HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    int fine = (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) != 0;
    int coarse = (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) != 0;
    if ((p->want_fine && fine) || (!p->want_fine && coarse)) {
        p->pool = pool;
        p->found = 1;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static inline int find_pool(hsa_agent_t agent, int want_fine, hsa_amd_memory_pool_t *out)
{
    struct pool_pick p = { .want_fine = want_fine };
    hsa_status_t s = hsa_amd_agent_iterate_memory_pools(agent, pick_pool, &p);
    if ((s != HSA_STATUS_SUCCESS && s != HSA_STATUS_INFO_BREAK) || !p.found)
        return 0;
    *out = p.pool;
    return 1;
}

/* One asynchronous copy with its own completion signal, waited on to 0. */
static inline void copy_and_wait(const char *what, void *dst, hsa_agent_t dst_agent, const void *src,
                          hsa_agent_t src_agent, size_t bytes)
{
    hsa_signal_t done;
    hsa_status_t s = hsa_signal_create(1, 0, NULL, &done);
    CHECK(s == HSA_STATUS_SUCCESS, "%s: hsa_signal_create = %#x", what, (unsigned)s);
    if (s != HSA_STATUS_SUCCESS)
        return;
    s = hsa_amd_memory_async_copy(dst, dst_agent, src, src_agent, bytes, 0, NULL, done);
    CHECK(s == HSA_STATUS_SUCCESS, "%s: hsa_amd_memory_async_copy = %#x (%s)", what, (unsigned)s,
          status_str(s));
    if (s == HSA_STATUS_SUCCESS) {
        /* 10 s in the system timestamp domain, so a lost completion fails instead of hanging. */
        uint64_t freq = 0;
        hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq);
        hsa_signal_value_t v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1,
                                                         freq ? 10 * freq : UINT64_MAX,
                                                         HSA_WAIT_STATE_BLOCKED);
        CHECK(v == 0, "%s: completion signal is %ld, expected 0", what, (long)v);
    }
    CHECK_HSA(hsa_signal_destroy(done));
}

static inline size_t first_mismatch(const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            return i;
    return n;
}

#endif
