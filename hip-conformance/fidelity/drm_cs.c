// libdrm_amdgpu (Debian libdrm-amdgpu1 2.4.114, unmodified) submits SDMA work on a render node
// the way kfdtest's KFDEvictTest does (amdgpu_cs_ctx_create, amdgpu_bo_alloc + amdgpu_va_range_alloc
// + amdgpu_bo_va_op, amdgpu_bo_list_create, amdgpu_cs_submit on AMDGPU_HW_IP_DMA ring 0,
// amdgpu_cs_query_fence_status). The first IB waits (POLL_REGMEM) on a word this program holds,
// then writes 4 dwords (WRITE_LINEAR): the fence must stay unsignaled and the words unwritten until
// the word is written. Then 100 IBs of 16 NOPs each complete in order.
// Prints "drm_cs: PASS" and exits 0, or says what differed and exits 1.
#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(x)                                                                         \
    do {                                                                                 \
        int r_ = (x);                                                                    \
        if (r_) {                                                                        \
            fprintf(stderr, "drm_cs: %s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_);   \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)
#define EXPECT(c, ...)                                       \
    do {                                                     \
        if (!(c)) {                                          \
            fprintf(stderr, "drm_cs: line %d: ", __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                    \
            fputc('\n', stderr);                             \
            exit(1);                                         \
        }                                                    \
    } while (0)

// SDMA 4.x packets (sdma_v4_0 / kfdtest SDMAPacket.hpp).
#define SDMA_OP_WRITE 2
#define SDMA_OP_POLL_REGMEM 8
#define POLL_FUNC_EQ 3

struct buf {
    amdgpu_bo_handle bo;
    amdgpu_va_handle va_handle;
    uint64_t va;
    void *cpu;
    uint64_t size;
};

static void alloc_map(amdgpu_device_handle dev, uint64_t size, uint32_t heap, struct buf *b) {
    struct amdgpu_bo_alloc_request req = {.alloc_size = size, .phys_alignment = 4096, .preferred_heap = heap};
    b->size = size;
    CHECK(amdgpu_bo_alloc(dev, &req, &b->bo));
    CHECK(amdgpu_va_range_alloc(dev, amdgpu_gpu_va_range_general, size, 4096, 0, &b->va, &b->va_handle, 0));
    CHECK(amdgpu_bo_va_op(b->bo, 0, size, b->va, 0, AMDGPU_VA_OP_MAP));
    CHECK(amdgpu_bo_cpu_map(b->bo, &b->cpu));
}

static void unmap_free(struct buf *b) {
    CHECK(amdgpu_bo_cpu_unmap(b->bo));
    CHECK(amdgpu_bo_va_op(b->bo, 0, b->size, b->va, 0, AMDGPU_VA_OP_UNMAP));
    CHECK(amdgpu_va_range_free(b->va_handle));
    CHECK(amdgpu_bo_free(b->bo));
}

static uint64_t submit(amdgpu_context_handle ctx, amdgpu_bo_list_handle list, uint64_t ib_va, uint32_t ndw) {
    struct amdgpu_cs_ib_info ib = {.ib_mc_address = ib_va, .size = ndw};
    struct amdgpu_cs_request req = {
        .ip_type = AMDGPU_HW_IP_DMA, .ring = 0, .number_of_ibs = 1, .ibs = &ib, .resources = list};
    CHECK(amdgpu_cs_submit(ctx, 0, &req, 1));
    return req.seq_no;
}

static uint32_t expired_after(amdgpu_context_handle ctx, uint64_t seq, uint64_t timeout_ns) {
    struct amdgpu_cs_fence f = {.context = ctx, .ip_type = AMDGPU_HW_IP_DMA, .ring = 0, .fence = seq};
    uint32_t expired = 0;
    CHECK(amdgpu_cs_query_fence_status(&f, timeout_ns, 0, &expired));
    return expired;
}

int main(void) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    EXPECT(fd >= 0, "open /dev/dri/renderD128 failed");
    uint32_t major, minor;
    amdgpu_device_handle dev;
    CHECK(amdgpu_device_initialize(fd, &major, &minor, &dev));
    amdgpu_context_handle ctx;
    CHECK(amdgpu_cs_ctx_create(dev, &ctx));

    struct buf ib, data;
    alloc_map(dev, 4096, AMDGPU_GEM_DOMAIN_GTT, &ib);
    alloc_map(dev, 4096, AMDGPU_GEM_DOMAIN_VRAM, &data);
    amdgpu_bo_handle res[] = {ib.bo, data.bo};
    amdgpu_bo_list_handle list;
    CHECK(amdgpu_bo_list_create(dev, 2, res, NULL, &list));

    volatile uint32_t *d = data.cpu;
    uint64_t held = data.va + 0x100;
    uint32_t *p = ib.cpu, n = 0;
    // POLL_REGMEM: memory, (*held & ~0) == 1, re-read every 10 us, forever.
    p[n++] = SDMA_OP_POLL_REGMEM | POLL_FUNC_EQ << 28 | 1u << 31;
    p[n++] = (uint32_t)held;
    p[n++] = (uint32_t)(held >> 32);
    p[n++] = 1;
    p[n++] = 0xffffffff;
    p[n++] = 10 | 0xfff << 16;
    // WRITE_LINEAR of 4 dwords at data + 0.
    p[n++] = SDMA_OP_WRITE;
    p[n++] = (uint32_t)data.va;
    p[n++] = (uint32_t)(data.va >> 32);
    p[n++] = 4 - 1;
    for (uint32_t i = 0; i < 4; i++)
        p[n++] = 0xc0de0000 + i;
    while (n % 8)
        p[n++] = 0; // NOP
    uint32_t first = n;
    for (int i = 0; i < 16; i++)
        p[n++] = 0; // 16 NOPs, as KFDEvictTest's IB

    uint64_t s1 = submit(ctx, list, ib.va, first);
    EXPECT(s1 == 1, "first sequence number %llu, expected 1", (unsigned long long)s1);
    EXPECT(!expired_after(ctx, s1, 50000000), "the IB completed while its POLL_REGMEM was held");
    EXPECT(d[0] == 0 && d[3] == 0, "written before the held word: %#x %#x", d[0], d[3]);
    d[0x100 / 4] = 1;
    EXPECT(expired_after(ctx, s1, 5000000000ull), "the IB did not complete within 5 s of the release");
    for (uint32_t i = 0; i < 4; i++)
        EXPECT(d[i] == 0xc0de0000 + i, "word %u = %#x", i, d[i]);

    uint64_t last = 0;
    for (int i = 0; i < 100; i++)
        last = submit(ctx, list, ib.va + first * 4, 16);
    EXPECT(last == 101, "sequence number after 100 more submissions %llu, expected 101", (unsigned long long)last);
    EXPECT(expired_after(ctx, last, 5000000000ull), "the NOP IBs did not complete");
    EXPECT(expired_after(ctx, 50, 0), "an earlier job is not signaled after a later one");

    CHECK(amdgpu_bo_list_destroy(list));
    unmap_free(&ib);
    unmap_free(&data);
    CHECK(amdgpu_cs_ctx_free(ctx));
    CHECK(amdgpu_device_deinitialize(dev));
    close(fd);
    printf("drm_cs: PASS\n");
    return 0;
}
