/*
 * AMD's own ROCr (Debian's libhsa-runtime64, ROCm 5.2) sharing VRAM between two processes on
 * kfd-sim, unmodified:
 *
 *   the program forks before hsa_init. The parent allocates VRAM from GPU0's coarse-grained
 *   pool, fills it with hsa_amd_memory_async_copy and makes an IPC handle of it
 *   (hsa_amd_ipc_memory_create), which it sends to the child. The child attaches the handle for
 *   both GPUs (hsa_amd_ipc_memory_attach), copies it to host memory through GPU1 (a peer read)
 *   and checks every byte, writes a second pattern through GPU0, detaches and exits. The parent
 *   copies its buffer back and checks the child's bytes.
 *
 * Under ROCr, libhsakmt's hsaKmtShareMemory and hsaKmtRegisterSharedHandleToNodes make ROCm's
 * out-of-tree AMDKFD_IOC_IPC_EXPORT_HANDLE and IPC_IMPORT_HANDLE (DKMS amdgpu, ROCK-Kernel-Driver
 * kfd_ipc.c), then the import's render-node mmap and MAP_MEMORY_TO_GPU. See kfd-sim/FIDELITY.md.
 *
 * Every step is one check; each process prints "N passed, N failed" (tools/run-tests sums the
 * last, the parent's, which counts a failed child as one failure).
 * Run: kfdsim run --gpus 2 -- build/fidelity/hsa_ipc [bytes]
 */
#include "hsa_common.h"

#include <sys/wait.h>
#include <unistd.h>

static uint8_t pattern(size_t i, int round)
{
    return (uint8_t)(i * 37 + (i >> 12) + round * 101 + 1);
}

/* Copies `bytes` of `src` (reached through `agent`) to `host` and checks them against pattern
 * `round`; 1 when every byte matches. */
static int copy_out_and_check(const char *who, uint8_t *host, hsa_agent_t cpu, void *src, hsa_agent_t agent,
                              size_t bytes, int round)
{
    char what[64];
    snprintf(what, sizeof what, "%s: copy to host", who);
    memset(host, 0xa5, bytes);
    copy_and_wait(what, host, cpu, src, agent, bytes);
    size_t i = 0;
    while (i < bytes && host[i] == pattern(i, round))
        i++;
    CHECK(i == bytes, "%s: byte %zu of %zu is %#x, want %#x", who, i, bytes, i < bytes ? host[i] : 0,
          i < bytes ? pattern(i, round) : 0);
    return i == bytes;
}

/* hsa_init, the CPU agent, two GPU agents and the system pool; 0 on failure. */
static int init(struct agents *a, hsa_amd_memory_pool_t *sys_pool)
{
    CHECK_HSA(hsa_init());
    CHECK_HSA(hsa_iterate_agents(collect_agent, a));
    CHECK(a->have_cpu && a->ngpus >= 2, "CPU agent %d, %d GPU agents (run under kfdsim run --gpus 2)", a->have_cpu,
          a->ngpus);
    if (!a->have_cpu || a->ngpus < 2)
        return 0;
    int f = find_pool(a->cpu, 1, sys_pool);
    CHECK(f, "no fine-grained system memory pool on the CPU agent");
    return f;
}

/* A host buffer of the system pool that both GPUs reach. */
static uint8_t *host_buffer(struct agents *a, hsa_amd_memory_pool_t pool, size_t bytes)
{
    uint8_t *p = NULL;
    CHECK_HSA(hsa_amd_memory_pool_allocate(pool, bytes, 0, (void **)&p));
    if (p)
        CHECK_HSA(hsa_amd_agents_allow_access(2, a->gpu, NULL, p));
    return p;
}

static int child(int fd, size_t bytes)
{
    struct agents a = { 0 };
    hsa_amd_memory_pool_t sys_pool;
    hsa_amd_ipc_memory_t h;
    CHECK(read(fd, &h, sizeof h) == (ssize_t)sizeof h, "reading the handle");
    if (!init(&a, &sys_pool))
        goto out;
    uint8_t *host = host_buffer(&a, sys_pool, bytes);
    void *shared = NULL;
    CHECK_HSA(hsa_amd_ipc_memory_attach(&h, bytes, 2, a.gpu, &shared));
    if (!host || !shared)
        goto out;
    copy_out_and_check("child, through GPU1", host, a.cpu, shared, a.gpu[1], bytes, 0);
    for (size_t i = 0; i < bytes; i++)
        host[i] = pattern(i, 1);
    copy_and_wait("child: host -> shared (GPU0)", shared, a.gpu[0], host, a.cpu, bytes);
    CHECK_HSA(hsa_amd_ipc_memory_detach(shared));
    CHECK_HSA(hsa_amd_memory_pool_free(host));
out:
    CHECK_HSA(hsa_shut_down());
    printf("child: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)(2 << 20);
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return 1;
    }
    fflush(stdout);
    pid_t pid = fork(); /* before ROCr initialises: each process opens /dev/kfd itself */
    if (pid == 0) {
        close(fds[1]);
        _exit(child(fds[0], bytes));
    }
    close(fds[0]);
    CHECK(pid > 0, "fork");

    struct agents a = { 0 };
    hsa_amd_memory_pool_t sys_pool, vram;
    hsa_amd_ipc_memory_t h;
    memset(&h, 0, sizeof h);
    int ok = init(&a, &sys_pool);
    if (ok) {
        ok = find_pool(a.gpu[0], 0, &vram);
        CHECK(ok, "no coarse-grained VRAM pool on GPU 0");
    }
    uint8_t *host = ok ? host_buffer(&a, sys_pool, bytes) : NULL;
    void *d = NULL;
    if (host)
        CHECK_HSA(hsa_amd_memory_pool_allocate(vram, bytes, 0, &d));
    if (d) {
        for (size_t i = 0; i < bytes; i++)
            host[i] = pattern(i, 0);
        copy_and_wait("parent: host -> VRAM", d, a.gpu[0], host, a.cpu, bytes);
        CHECK_HSA(hsa_amd_ipc_memory_create(d, bytes, &h));
    }
    /* The child reads a handle in any case, so that it never waits for one. */
    CHECK(write(fds[1], &h, sizeof h) == (ssize_t)sizeof h, "sending the handle");
    close(fds[1]);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the child's status is %#x", st);
    if (d) {
        int verified = copy_out_and_check("parent, the child's bytes", host, a.cpu, d, a.gpu[0], bytes, 1);
        printf("hsa_ipc: %zu bytes shared with another process %s\n", bytes, verified ? "verified" : "MISMATCH");
        CHECK_HSA(hsa_amd_memory_pool_free(d));
    }
    if (host)
        CHECK_HSA(hsa_amd_memory_pool_free(host));
    if (a.ngpus)
        CHECK_HSA(hsa_shut_down());
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
