/*
 * Fault driver: calls every API group in a loop while kfd-sim injects the faults of
 * KFDSIM_FAULTS, then checks that nothing was lost or left behind.
 *
 *   KFDSIM_FAULTS=ALLOC_MEMORY_OF_GPU:ENOMEM:every=3 kfdsim run -- fault_driver [ITERATIONS]
 *
 * 1. Warm-up with injection off (kfdsim_faults_enable(0)): one pass of every step, so that the
 *    runtime's own lazily made objects (staging buffers, queues, event pages) exist; a
 *    "keeper" buffer on GPU 0 is filled with a known pattern.
 * 2. Baseline: the sim's accounting (kfdsim_stat: live BOs, bytes per GPU and domain, GPU
 *    mappings, GEM handles, queues, events, syncobjs, dma-buf and device fds) and the
 *    process's open fd count.
 * 3. ITERATIONS passes with injection on. Each step either succeeds (then its data is checked
 *    byte by byte) or fails with an error code; whatever it made before failing is released.
 *    The keeper is read back after every pass: data written before a fault stays intact.
 * 4. Injection off: the keeper is checked once more and the accounting must equal the
 *    baseline: a failed call left no BO, GPU mapping, queue, event, syncobj or fd behind.
 * With FAULT_DRIVER_EXPECT=<hipError name>, every failed call must have failed with that error
 * (e.g. hipErrorOutOfMemory when only ENOMEM-class faults are injected); with
 * FAULT_DRIVER_EXPECT=none, no call may fail (EINTR-class faults are retried, invisible).
 * Prints the figures (steps, failures by error, faults injected, leaks) and
 * "RESULT: PASS" or "RESULT: FAIL"; exits 1 on FAIL, 2 when the sim's hooks are missing.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include "../shared.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t (*sim_stat)(const char *);
static void (*sim_faults_enable)(int);

static int ndev;
static size_t gran;
static void *keeper;
#define KEEPER_BYTES ((size_t)1 << 20)

static long steps, failures, corruptions;
static long by_error[1024];

static uint8_t pat(size_t i, unsigned seed) { return (uint8_t)((i * 131u + seed * 7u) ^ (i >> 8)); }

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pat(i, seed);
}

static int check(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(i, seed))
            return 0;
    return 1;
}

/* Counts one API call; true if it succeeded. */
static int ok(hipError_t e)
{
    steps++;
    if (e == hipSuccess)
        return 1;
    failures++;
    by_error[(unsigned)e < 1024 ? (unsigned)e : 1023]++;
    return 0;
}

static void corrupt(const char *what, int iter)
{
    corruptions++;
    printf("CORRUPTION: %s (pass %d)\n", what, iter);
}

/* hipMalloc, copy a pattern in and out, memset, free. */
static void step_malloc(int iter, size_t size)
{
    void *d = NULL;
    uint8_t *h = malloc(size), *back = malloc(size);
    fill(h, size, iter);
    if (ok(hipMalloc(&d, size))) {
        if (ok(hipMemcpy(d, h, size, hipMemcpyHostToDevice)) &&
            ok(hipMemcpy(back, d, size, hipMemcpyDeviceToHost)) && !check(back, size, iter))
            corrupt("hipMalloc round trip", iter);
        if (ok(hipMemset(d, 0x5a, size)) && ok(hipMemcpy(back, d, size, hipMemcpyDeviceToHost))) {
            for (size_t i = 0; i < size; i++)
                if (back[i] != 0x5a) {
                    corrupt("hipMemset", iter);
                    break;
                }
        }
        if (!ok(hipFree(d)))
            printf("hipFree failed (pass %d)\n", iter);
    }
    free(h);
    free(back);
}

/* Pinned host memory as the destination of a device copy. */
static void step_host(int iter)
{
    void *h = NULL;
    if (ok(hipHostMalloc(&h, 256 << 10, 0))) {
        if (ok(hipMemcpy(h, keeper, 256 << 10, hipMemcpyDeviceToHost)) && !check(h, 256 << 10, 0))
            corrupt("hipHostMalloc copy", iter);
        ok(hipHostFree(h));
    }
}

/* A stream with an async copy and an event. */
static void step_stream(int iter)
{
    hipStream_t s;
    hipEvent_t e;
    uint8_t *h = malloc(64 << 10);
    if (ok(hipStreamCreate(&s))) {
        if (ok(hipEventCreate(&e))) {
            memset(h, 0, 64 << 10);
            if (ok(hipMemcpyAsync(h, keeper, 64 << 10, hipMemcpyDeviceToHost, s)) && ok(hipEventRecord(e, s)) &&
                ok(hipEventSynchronize(e)) && !check(h, 64 << 10, 0))
                corrupt("async copy", iter);
            ok(hipStreamSynchronize(s));
            ok(hipEventDestroy(e));
        }
        ok(hipStreamDestroy(s));
    }
    free(h);
}

/* VMM: create, reserve, map, set access, copy through, unmap, free; export the chunk as a
 * dma-buf and import it back as external memory. */
static void step_vmm(int iter, int dev)
{
    hipMemAllocationProp prop = vmm_device_prop(dev);
    hipMemGenericAllocationHandle_t h;
    if (!ok(hipMemCreate(&h, gran, &prop, 0)))
        return;
    void *va = NULL;
    if (ok(hipMemAddressReserve(&va, gran, 0, NULL, 0))) {
        if (ok(hipMemMap(va, gran, 0, h, 0))) {
            hipMemAccessDesc acc = {.location = {.type = hipMemLocationTypeDevice, .id = dev},
                                    .flags = hipMemAccessFlagsProtReadWrite};
            if (ok(hipMemSetAccess(va, gran, &acc, 1)) &&
                ok(hipMemcpy(va, keeper, gran, hipMemcpyDeviceToDevice))) {
                uint8_t *back = malloc(gran);
                if (ok(hipMemcpy(back, va, gran, hipMemcpyDeviceToHost)) && !check(back, gran, 0))
                    corrupt("VMM copy", iter);
                free(back);
            }
            ok(hipMemUnmap(va, gran));
        }
        ok(hipMemAddressFree(va, gran));
    }
    int fd = -1;
    if (ok(hipMemExportToShareableHandle(&fd, h, hipMemHandleTypePosixFileDescriptor, 0))) {
        hipExternalMemoryHandleDesc d = {.type = hipExternalMemoryHandleTypeOpaqueFd, .size = gran};
        d.handle.fd = fd;
        hipExternalMemory_t em;
        if (ok(hipImportExternalMemory(&em, &d))) {
            hipExternalMemoryBufferDesc b = {.offset = 0, .size = gran};
            void *p = NULL;
            if (ok(hipExternalMemoryGetMappedBuffer(&p, em, &b))) {
                if (ok(hipMemcpy(p, keeper, 4096, hipMemcpyDeviceToDevice))) {
                    uint8_t back[4096];
                    if (ok(hipMemcpy(back, p, sizeof back, hipMemcpyDeviceToHost)) && !check(back, sizeof back, 0))
                        corrupt("external memory copy", iter);
                }
                ok(hipFree(p));
            }
            ok(hipDestroyExternalMemory(em)); /* the import owns the fd and closes it */
        } else {
            close(fd);
        }
    }
    ok(hipMemRelease(h));
}

/* IPC handles of a device allocation and of an event (the export side). */
static void step_ipc(int iter)
{
    void *d = NULL;
    (void)iter;
    if (ok(hipMalloc(&d, 2 << 20))) {
        hipIpcMemHandle_t mh;
        ok(hipIpcGetMemHandle(&mh, d));
        ok(hipFree(d));
    }
    hipEvent_t e;
    if (ok(hipEventCreateWithFlags(&e, hipEventInterprocess | hipEventDisableTiming))) {
        hipIpcEventHandle_t eh;
        ok(hipIpcGetEventHandle(&eh, e));
        ok(hipEventDestroy(e));
    }
}

/* GPU 1 reads the keeper (peer copy) when there is a second GPU. */
static void step_peer(int iter)
{
    if (ndev < 2)
        return;
    void *d = NULL;
    if (!ok(hipSetDevice(1)))
        return;
    if (ok(hipMalloc(&d, 512 << 10))) {
        uint8_t *back = malloc(512 << 10);
        if (ok(hipMemcpyPeer(d, 1, keeper, 0, 512 << 10)) &&
            ok(hipMemcpy(back, d, 512 << 10, hipMemcpyDeviceToHost)) && !check(back, 512 << 10, 0))
            corrupt("peer copy", iter);
        free(back);
        ok(hipFree(d));
    }
    hipSetDevice(0);
}

static void pass(int iter)
{
    static const size_t sizes[] = {1, 4096, (64 << 10) + 123, (2 << 20) + 7};
    step_malloc(iter, sizes[iter % 4]);
    step_host(iter);
    step_stream(iter);
    step_vmm(iter, iter % ndev);
    step_ipc(iter);
    step_peer(iter);
    /* Data written before any fault of this pass is still intact. */
    uint8_t *back = malloc(KEEPER_BYTES);
    if (ok(hipMemcpy(back, keeper, KEEPER_BYTES, hipMemcpyDeviceToHost)) && !check(back, KEEPER_BYTES, 0))
        corrupt("keeper buffer", iter);
    free(back);
}

#define MAX_KEYS 64
static const char *keys[MAX_KEYS];
static int nkeys;

static void add_key(const char *k) { keys[nkeys++] = strdup(k); }

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 50;
    setvbuf(stdout, NULL, _IOLBF, 0);
    sim_stat = (uint64_t(*)(const char *))dlsym(RTLD_DEFAULT, "kfdsim_stat");
    sim_faults_enable = (void (*)(int))dlsym(RTLD_DEFAULT, "kfdsim_faults_enable");
    if (!sim_stat || !sim_faults_enable) {
        printf("fault_driver: run me under kfdsim (kfdsim_stat not found)\nRESULT: FAIL\n");
        return 2;
    }
    const char *spec = getenv("KFDSIM_FAULTS");
    printf("fault_driver: %d passes, KFDSIM_FAULTS=%s\n", iters, spec ? spec : "(none)");

    sim_faults_enable(0);
    if (hipGetDeviceCount(&ndev) != hipSuccess || ndev < 1 || hipSetDevice(0) != hipSuccess) {
        printf("no device\nRESULT: FAIL\n");
        return 1;
    }
    hipMemAllocationProp prop = vmm_device_prop(0);
    if (hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum) != hipSuccess ||
        hipMalloc(&keeper, KEEPER_BYTES) != hipSuccess) {
        printf("setup failed\nRESULT: FAIL\n");
        return 1;
    }
    uint8_t *h = malloc(KEEPER_BYTES);
    fill(h, KEEPER_BYTES, 0);
    hipMemcpy(keeper, h, KEEPER_BYTES, hipMemcpyHostToDevice);
    free(h);
    for (int i = 0; i < 4; i++)
        pass(i);

    static const char *global[] = {"bos", "gem_handles", "gem_bytes", "va_mappings", "queues",
                                   "events", "syncobjs", "fds.device", "fds.dmabuf", "fds.syncobj"};
    for (size_t i = 0; i < sizeof global / sizeof *global; i++)
        add_key(global[i]);
    static const char *per_gpu[] = {"bos", "vram_bytes", "gtt_bytes", "userptr_bytes", "vram_usage", "mapped"};
    for (int g = 0; g < ndev; g++)
        for (size_t i = 0; i < sizeof per_gpu / sizeof *per_gpu; i++) {
            char k[64];
            snprintf(k, sizeof k, "gpu%d.%s", g, per_gpu[i]);
            add_key(k);
        }
    uint64_t base[MAX_KEYS];
    release_cached_blocks();
    for (int i = 0; i < nkeys; i++)
        base[i] = sim_stat(keys[i]);
    long base_fds = fd_count();
    long warm_steps = steps, warm_failures = failures;
    if (warm_failures) {
        printf("warm-up: %ld of %ld calls failed without faults\nRESULT: FAIL\n", warm_failures, warm_steps);
        return 1;
    }
    steps = failures = 0;

    sim_faults_enable(1);
    for (int i = 0; i < iters; i++)
        pass(i);
    sim_faults_enable(0);

    hipDeviceSynchronize();
    uint8_t *back = malloc(KEEPER_BYTES);
    if (hipMemcpy(back, keeper, KEEPER_BYTES, hipMemcpyDeviceToHost) != hipSuccess || !check(back, KEEPER_BYTES, 0))
        corrupt("keeper buffer at the end", iters);
    free(back);

    int leaks = 0;
    release_cached_blocks();
    for (int i = 0; i < nkeys; i++) {
        uint64_t now = sim_stat(keys[i]);
        if (now != base[i]) {
            printf("LEAK: %s = %llu, baseline %llu\n", keys[i], (unsigned long long)now, (unsigned long long)base[i]);
            leaks++;
        }
    }
    long fds = fd_count();
    if (fds != base_fds) {
        printf("LEAK: open fds = %ld, baseline %ld\n", fds, base_fds);
        leaks++;
    }
    printf("calls: %ld, failed: %ld", steps, failures);
    for (int e = 0; e < 1024; e++)
        if (by_error[e])
            printf(", %s x%ld", hipGetErrorName((hipError_t)e), by_error[e]);
    printf("\nfaults injected: %llu\n", (unsigned long long)sim_stat("faults.total"));
    printf("baseline: %llu BOs, %llu GPU mappings, %llu queues, %llu events, %ld fds; leaks: %d, corruptions: %ld\n",
           (unsigned long long)base[0], (unsigned long long)base[3], (unsigned long long)base[4],
           (unsigned long long)base[5], base_fds, leaks, corruptions);
    hipFree(keeper);
    long unexpected = 0;
    const char *expect = getenv("FAULT_DRIVER_EXPECT");
    if (expect && *expect) {
        for (int e = 0; e < 1024; e++)
            if (by_error[e] && (strcmp(expect, "none") == 0 || strcmp(expect, hipGetErrorName((hipError_t)e)) != 0)) {
                printf("UNEXPECTED: %ld calls failed with %s (expected %s)\n", by_error[e],
                       hipGetErrorName((hipError_t)e), expect);
                unexpected += by_error[e];
            }
    }
    int pass_ok = leaks == 0 && corruptions == 0 && unexpected == 0;
    printf("RESULT: %s\n", pass_ok ? "PASS" : "FAIL");
    return pass_ok ? 0 : 1;
}
