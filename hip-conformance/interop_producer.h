/*
 * The "other API" of the interop tests, demo and benchmark: libdrm_amdgpu used directly, as a
 * Vulkan driver does underneath. Buffers are amdgpu GEM BOs (amdgpu_bo_alloc) exported as
 * dma-buf fds; semaphores are DRM syncobjs (drmSyncobjCreate) exported as fds.
 * Everything here aborts the calling test (or program) on failure through PRODUCER_REQUIRE.
 */
#ifndef HIPCONF_INTEROP_PRODUCER_H
#define HIPCONF_INTEROP_PRODUCER_H

#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#ifndef PRODUCER_REQUIRE
#define PRODUCER_REQUIRE(cond)                                                           \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: producer: %s failed (%s)\n", __FILE__, __LINE__, #cond, \
                    strerror(errno));                                                    \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)
#endif

struct producer {
    int fd; /* the render node */
    amdgpu_device_handle dev;
};

struct pbuf {
    amdgpu_bo_handle bo;
    uint8_t *cpu;
    size_t size;
};

/* Opens /dev/dri/renderD<128 + gpu> and initialises libdrm_amdgpu on it. */
static inline struct producer producer_open(int gpu)
{
    struct producer p;
    char path[64];
    uint32_t major, minor;
    snprintf(path, sizeof path, "/dev/dri/renderD%d", 128 + gpu);
    p.fd = open(path, O_RDWR | O_CLOEXEC);
    PRODUCER_REQUIRE(p.fd >= 0);
    PRODUCER_REQUIRE(amdgpu_device_initialize(p.fd, &major, &minor, &p.dev) == 0);
    return p;
}

static inline void producer_close(struct producer *p)
{
    amdgpu_device_deinitialize(p->dev);
    close(p->fd);
}

/* A CPU-mapped BO of `size` bytes in `domain` (AMDGPU_GEM_DOMAIN_GTT or _VRAM). */
static inline struct pbuf pbuf_alloc(struct producer *p, size_t size, uint32_t domain)
{
    struct pbuf b = {0};
    struct amdgpu_bo_alloc_request req = {0};
    void *cpu = NULL;
    req.alloc_size = size;
    req.phys_alignment = 4096;
    req.preferred_heap = domain;
    req.flags = domain == AMDGPU_GEM_DOMAIN_VRAM ? AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED : 0;
    PRODUCER_REQUIRE(amdgpu_bo_alloc(p->dev, &req, &b.bo) == 0);
    PRODUCER_REQUIRE(amdgpu_bo_cpu_map(b.bo, &cpu) == 0);
    b.cpu = cpu;
    b.size = size;
    return b;
}

/* A new dma-buf fd of the BO (the caller owns it). */
static inline int pbuf_export(struct pbuf *b)
{
    uint32_t fd = 0;
    PRODUCER_REQUIRE(amdgpu_bo_export(b->bo, amdgpu_bo_handle_type_dma_buf_fd, &fd) == 0);
    return (int)fd;
}

static inline void pbuf_free(struct pbuf *b)
{
    amdgpu_bo_cpu_unmap(b->bo);
    amdgpu_bo_free(b->bo);
}

/* A syncobj (unsignaled) and a new fd of it (the caller owns the fd). */
static inline uint32_t psync_create(struct producer *p, int *fd)
{
    uint32_t h = 0;
    PRODUCER_REQUIRE(drmSyncobjCreate(p->fd, 0, &h) == 0);
    PRODUCER_REQUIRE(drmSyncobjHandleToFD(p->fd, h, fd) == 0);
    return h;
}

static inline void psync_signal(struct producer *p, uint32_t h, uint64_t point)
{
    if (point == 0)
        PRODUCER_REQUIRE(drmSyncobjSignal(p->fd, &h, 1) == 0);
    else
        PRODUCER_REQUIRE(drmSyncobjTimelineSignal(p->fd, &h, &point, 1) == 0);
}

static inline int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits at most timeout_ms for `point` (0: a binary signal); 0 when it came, else -errno. */
static inline int psync_wait(struct producer *p, uint32_t h, uint64_t point, int timeout_ms)
{
    uint32_t first = 0;
    int64_t abs = timeout_ms == 0 ? 0 : mono_ns() + (int64_t)timeout_ms * 1000000;
    int r = drmSyncobjTimelineWait(p->fd, &h, &point, 1, abs, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
                                   &first);
    return r == 0 ? 0 : -errno;
}

/* The last signaled point of a timeline syncobj. */
static inline uint64_t psync_point(struct producer *p, uint32_t h)
{
    uint64_t v = 0;
    PRODUCER_REQUIRE(drmSyncobjQuery(p->fd, &h, &v, 1) == 0);
    return v;
}

#endif
