/*
 * AMD's own ROCr (Debian's libhsa-runtime64, ROCm 5.2) on kfd-sim, unmodified:
 *
 *   hsa_init; find the CPU agent and two GPU agents and their pools; allocate VRAM from each
 *   GPU's global (coarse-grained) pool with hsa_amd_memory_pool_allocate; allow the peer GPU
 *   (and the CPU) access with hsa_amd_agents_allow_access; copy host -> GPU0 -> GPU1 -> host with
 *   hsa_amd_memory_async_copy, each copy with its own completion signal waited on with
 *   hsa_signal_wait_scacquire; verify every byte; copy GPU1 -> a malloc buffer pinned with
 *   hsa_amd_memory_lock (a USERPTR BO) and verify it; free; hsa_shut_down.
 *
 * ROCr 5.2 routes each of these copies to an SDMA engine (Runtime::CopyMemory picks the source
 * GPU agent, else the destination; GpuAgent::GetBlitObject picks its host-to-device,
 * device-to-host/PCIe or xGMI SDMA blit: only a copy within one GPU uses the blit kernel, which
 * kfd-sim does not run). No environment variable is set. See kfd-sim/FIDELITY.md.
 *
 * Every step is one check; the last line is "N passed, N failed" (tools/run-tests sums it).
 * Run: kfdsim run --gpus 2 -- build/fidelity/hsa_copy [bytes]
 */
#include "hsa_common.h"

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)(4 << 20) + 4096 + 123;

    CHECK_HSA(hsa_init());

    struct agents a = { 0 };
    CHECK_HSA(hsa_iterate_agents(collect_agent, &a));
    CHECK(a.have_cpu, "no CPU agent");
    CHECK(a.ngpus >= 2, "%d GPU agents, expected at least 2 (run under kfdsim run --gpus 2)", a.ngpus);
    if (!a.have_cpu || a.ngpus < 2)
        goto out;

    for (int i = 0; i < 2; i++) {
        char name[64] = { 0 };
        CHECK_HSA(hsa_agent_get_info(a.gpu[i], HSA_AGENT_INFO_NAME, name));
        CHECK(strcmp(name, "gfx90a") == 0, "GPU %d is %s, expected gfx90a", i, name);
    }

    hsa_amd_memory_pool_t sys_pool, vram[2];
    CHECK(find_pool(a.cpu, 1, &sys_pool), "no fine-grained system memory pool on the CPU agent");
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        int f = find_pool(a.gpu[i], 0, &vram[i]);
        CHECK(f, "no coarse-grained VRAM pool on GPU %d", i);
        ok &= f;
    }
    if (!ok)
        goto out;

    /* Host buffers from the system pool, visible to both GPUs (SDMA reads/writes them). */
    uint8_t *src = NULL, *dst = NULL;
    CHECK_HSA(hsa_amd_memory_pool_allocate(sys_pool, bytes, 0, (void **)&src));
    CHECK_HSA(hsa_amd_memory_pool_allocate(sys_pool, bytes, 0, (void **)&dst));
    void *d[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++)
        CHECK_HSA(hsa_amd_memory_pool_allocate(vram[i], bytes, 0, &d[i]));
    if (!src || !dst || !d[0] || !d[1])
        goto out;
    CHECK(d[0] != d[1], "both VRAM buffers at %p", d[0]);

    hsa_agent_t gpus[2] = { a.gpu[0], a.gpu[1] };
    CHECK_HSA(hsa_amd_agents_allow_access(2, gpus, NULL, src));
    CHECK_HSA(hsa_amd_agents_allow_access(2, gpus, NULL, dst));
    /* Each GPU's VRAM to its peer, so GPU0's SDMA can write GPU1's buffer. */
    CHECK_HSA(hsa_amd_agents_allow_access(1, &gpus[1], NULL, d[0]));
    CHECK_HSA(hsa_amd_agents_allow_access(1, &gpus[0], NULL, d[1]));

    for (size_t i = 0; i < bytes; i++)
        src[i] = (uint8_t)(i * 131 + (i >> 12) * 7 + 1);
    memset(dst, 0xa5, bytes);

    copy_and_wait("host -> GPU0", d[0], a.gpu[0], src, a.cpu, bytes);
    copy_and_wait("GPU0 -> GPU1", d[1], a.gpu[1], d[0], a.gpu[0], bytes);
    copy_and_wait("GPU1 -> host", dst, a.cpu, d[1], a.gpu[1], bytes);

    size_t bad = first_mismatch(dst, src, bytes);
    CHECK(bad == bytes, "byte %zu of %zu: got %#x, want %#x", bad, bytes, bad < bytes ? dst[bad] : 0,
          bad < bytes ? src[bad] : 0);
    printf("hsa_copy: %zu bytes host -> GPU0 -> GPU1 -> host %s\n", bytes,
           bad == bytes ? "verified" : "MISMATCH");

    /* Pageable memory pinned with hsa_amd_memory_lock (libhsakmt registers it as a USERPTR BO):
     * GPU1 -> locked buffer through its agent address. */
    uint8_t *plain = malloc(bytes);
    CHECK(plain != NULL, "malloc");
    if (plain) {
        memset(plain, 0x5a, bytes);
        void *agent_ptr = NULL;
        CHECK_HSA(hsa_amd_memory_lock(plain, bytes, gpus, 2, &agent_ptr));
        if (agent_ptr) {
            copy_and_wait("GPU1 -> locked host", agent_ptr, a.cpu, d[1], a.gpu[1], bytes);
            bad = first_mismatch(plain, src, bytes);
            CHECK(bad == bytes, "locked buffer byte %zu of %zu: got %#x, want %#x", bad, bytes,
                  bad < bytes ? plain[bad] : 0, bad < bytes ? src[bad] : 0);
            CHECK_HSA(hsa_amd_memory_unlock(plain));
        }
        free(plain);
    }

    for (int i = 0; i < 2; i++)
        CHECK_HSA(hsa_amd_memory_pool_free(d[i]));
    CHECK_HSA(hsa_amd_memory_pool_free(src));
    CHECK_HSA(hsa_amd_memory_pool_free(dst));

out:
    CHECK_HSA(hsa_shut_down());
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
