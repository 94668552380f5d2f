/*
 * ROCm 5.2 ABI of the interop entry points (issue 10): built against AMD's 5.2 header (Debian
 * libamdhip64-dev: 40-byte hipExternalMemoryHandleDesc, 24-byte hipExternalMemoryBufferDesc,
 * 32-byte hipExternalSemaphoreHandleDesc, 136-byte signal/wait parameters with `flags` at 64)
 * and linked against AMD's libamdhip64.so.5; tests/header_compat.rs runs it on our library
 * under that name. The other API is libdrm_amdgpu (../interop_producer.h).
 * Prints PASS when every check holds.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stddef.h>
#include <stdio.h>

#include "../interop_producer.h"

static int failures;
#define EXPECT(c)                                                        \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                  \
        }                                                                \
    } while (0)

int main(void)
{
    /* the 5.2 layouts this binary was built with */
    EXPECT(sizeof(hipExternalMemoryHandleDesc) == 40);
    EXPECT(sizeof(hipExternalSemaphoreWaitParams) == 136);
    EXPECT(offsetof(hipExternalSemaphoreWaitParams, flags) == 64);

    const size_t n = 64 * 1024;
    struct producer p = producer_open(0);
    struct pbuf b = pbuf_alloc(&p, n, AMDGPU_GEM_DOMAIN_GTT);
    for (size_t i = 0; i < n; i++)
        b.cpu[i] = (uint8_t)(i * 13);
    hipExternalMemoryHandleDesc md = {.type = hipExternalMemoryHandleTypeOpaqueFd, .size = n};
    md.handle.fd = pbuf_export(&b);
    hipExternalMemory_t m = NULL;
    EXPECT(hipImportExternalMemory(&m, &md) == hipSuccess);
    hipExternalMemoryBufferDesc bd = {.offset = 4096, .size = n - 4096};
    void *d = NULL;
    EXPECT(hipExternalMemoryGetMappedBuffer(&d, m, &bd) == hipSuccess);
    uint8_t *h = malloc(n);
    EXPECT(hipMemcpy(h, d, n - 4096, hipMemcpyDeviceToHost) == hipSuccess);
    EXPECT(memcmp(h, b.cpu + 4096, n - 4096) == 0);

    int fds[2];
    uint32_t hs[2];
    hipExternalSemaphore_t s[2];
    for (int i = 0; i < 2; i++) {
        hs[i] = psync_create(&p, &fds[i]);
        /* TimelineSemaphoreFd (9) is not in the 5.2 enum */
        hipExternalSemaphoreHandleDesc sd = {.type = (hipExternalSemaphoreHandleType)9};
        sd.handle.fd = fds[i];
        EXPECT(hipImportExternalSemaphore(&s[i], &sd) == hipSuccess);
    }
    hipStream_t st;
    EXPECT(hipStreamCreate(&st) == hipSuccess);
    hipExternalSemaphoreWaitParams wp[2];
    hipExternalSemaphoreSignalParams sp[2];
    memset(wp, 0, sizeof wp);
    memset(sp, 0, sizeof sp);
    wp[1].flags = 1; /* read at the 5.2 offset: refused */
    EXPECT(hipWaitExternalSemaphoresAsync(s, wp, 2, st) == hipErrorInvalidValue);
    wp[1].flags = 0;
    wp[0].params.fence.value = 2;
    wp[1].params.fence.value = 3; /* the second element at the 5.2 stride */
    sp[0].params.fence.value = 10;
    sp[1].params.fence.value = 20;
    EXPECT(hipWaitExternalSemaphoresAsync(s, wp, 2, st) == hipSuccess);
    EXPECT(hipMemsetAsync(d, 0x6b, 4096, st) == hipSuccess);
    EXPECT(hipSignalExternalSemaphoresAsync(s, sp, 2, st) == hipSuccess);
    psync_signal(&p, hs[0], 2);
    psync_signal(&p, hs[1], 2);
    usleep(30 * 1000);
    EXPECT(hipStreamQuery(st) == hipErrorNotReady);
    EXPECT(b.cpu[4096] != 0x6b);
    psync_signal(&p, hs[1], 3);
    EXPECT(hipStreamSynchronize(st) == hipSuccess);
    EXPECT(b.cpu[4096] == 0x6b);
    EXPECT(psync_wait(&p, hs[0], 10, 5000) == 0 && psync_point(&p, hs[0]) == 10);
    EXPECT(psync_wait(&p, hs[1], 20, 5000) == 0 && psync_point(&p, hs[1]) == 20);

    for (int i = 0; i < 2; i++)
        EXPECT(hipDestroyExternalSemaphore(s[i]) == hipSuccess);
    EXPECT(hipFree(d) == hipSuccess);
    EXPECT(hipDestroyExternalMemory(m) == hipSuccess);
    EXPECT(hipStreamDestroy(st) == hipSuccess);
    free(h);
    pbuf_free(&b);
    producer_close(&p);
    printf("%s: ROCm 5.2 interop ABI (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures != 0;
}
