/*
 * hipkfd VMM demo: a buffer that grows without copying, spread over the GPUs,
 * shared with a second process.
 *
 *   make -C hip-conformance demo     (under `kfdsim run --gpus 2 --`)
 *
 * The owner reserves 1 GiB of virtual addresses once, then grows a buffer in
 * 16 MiB steps: each step creates a chunk (alternating GPU 0 and GPU 1), maps
 * it right after the last one, gives every GPU read-write access and fills the
 * new part. The buffer's address never changes and nothing is ever copied to
 * grow it. Then it exports every chunk as a dma-buf fd (SCM_RIGHTS over a Unix
 * socket); the reader process imports them, maps them into one contiguous
 * range of its own, checks every byte and writes a checksum back into the
 * shared memory, which the owner verifies.
 * Prints a PASS/FAIL line per step; exits with status 1 if any failed.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include "../fdpass.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEP ((size_t)16 << 20)
#define STEPS 6
#define RESERVE ((size_t)1 << 30)

static int failed;

#define TRY(call)                                                                  \
    do {                                                                           \
        hipError_t err_ = (call);                                                  \
        if (err_ != hipSuccess) {                                                  \
            printf("         %s -> %s\n", #call, hipGetErrorName(err_));            \
            return 0;                                                              \
        }                                                                          \
    } while (0)

static void step(const char *who, const char *what, int ok)
{
    printf("  [%s] %-64s %s\n", who, what, ok ? "PASS" : "FAIL");
    fflush(stdout);
    if (!ok)
        failed = 1;
}

static uint32_t word(size_t i) { return (uint32_t)(i * 2654435761u) ^ 0x5eed; }

static int fill(void *dst, size_t first_word, size_t bytes)
{
    uint32_t *h = malloc(bytes);
    if (!h)
        return 0;
    for (size_t i = 0; i < bytes / 4; i++)
        h[i] = word(first_word + i);
    hipError_t e = hipMemcpy(dst, h, bytes, hipMemcpyHostToDevice);
    free(h);
    return e == hipSuccess;
}

/* Checks the whole buffer; stores a checksum of it in *sum. */
static int verify(const void *src, size_t bytes, uint64_t *sum)
{
    uint32_t *h = malloc(bytes);
    if (!h || hipMemcpy(h, src, bytes, hipMemcpyDeviceToHost) != hipSuccess) {
        free(h);
        return 0;
    }
    uint64_t s = 0;
    size_t i = 0;
    while (i < bytes / 4 && h[i] == word(i)) {
        s += h[i];
        i++;
    }
    free(h);
    *sum = s;
    return i == bytes / 4;
}

static int access_all(void *va, size_t size, int ndev)
{
    hipMemAccessDesc d[8];
    memset(d, 0, sizeof d);
    for (int i = 0; i < ndev && i < 8; i++) {
        d[i].location.type = hipMemLocationTypeDevice;
        d[i].location.id = i;
        d[i].flags = hipMemAccessFlagsProtReadWrite;
    }
    return hipMemSetAccess(va, size, d, ndev < 8 ? ndev : 8) == hipSuccess;
}

/* The second process: import the chunks, map them contiguously, check, write a checksum. */
static int reader(int sock)
{
    int fds[STEPS];
    if (!fdpass_recv(sock, fds, STEPS))
        return 0;
    int ndev = 0;
    TRY(hipGetDeviceCount(&ndev));
    int dev = ndev - 1;
    TRY(hipSetDevice(dev));
    void *va = NULL;
    TRY(hipMemAddressReserve(&va, STEPS * STEP, 0, NULL, 0));
    hipMemGenericAllocationHandle_t h[STEPS];
    for (int i = 0; i < STEPS; i++) {
        TRY(hipMemImportFromShareableHandle(&h[i], (void *)(uintptr_t)fds[i], hipMemHandleTypePosixFileDescriptor));
        close(fds[i]);
        TRY(hipMemMap((char *)va + i * STEP, STEP, 0, h[i], 0));
        TRY(hipMemRelease(h[i]));
    }
    hipMemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = hipMemLocationTypeDevice;
    d.location.id = dev;
    d.flags = hipMemAccessFlagsProtReadWrite;
    TRY(hipMemSetAccess(va, STEPS * STEP, &d, 1));
    uint64_t sum = 0;
    int ok = verify(va, (STEPS - 1) * STEP, &sum);
    char what[96];
    snprintf(what, sizeof what, "imported %d chunks, mapped them at %p, every byte checked", STEPS, va);
    step("reader", what, ok);
    /* The last chunk is the mailbox: the checksum goes there. */
    TRY(hipMemcpy((char *)va + (STEPS - 1) * STEP, &sum, sizeof sum, hipMemcpyHostToDevice));
    TRY(hipMemUnmap(va, STEPS * STEP));
    TRY(hipMemAddressFree(va, STEPS * STEP));
    char b = 'd';
    return ok && write(sock, &b, 1) == 1;
}

static int owner(int sock)
{
    int ndev = 0;
    TRY(hipGetDeviceCount(&ndev));
    printf("hipkfd VMM demo: a growable buffer over %d GPU(s), shared with a second process\n", ndev);
    size_t gran = 0;
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.requestedHandleTypes = hipMemHandleTypePosixFileDescriptor;
    prop.location.type = hipMemLocationTypeDevice;
    TRY(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityRecommended));
    void *buf = NULL;
    TRY(hipMemAddressReserve(&buf, RESERVE, gran, NULL, 0));
    char what[96];
    snprintf(what, sizeof what, "reserved 1 GiB of VA at %p (granularity %zu KiB)", buf, gran >> 10);
    step("owner", what, 1);
    hipMemGenericAllocationHandle_t h[STEPS];
    size_t size = 0;
    for (int i = 0; i < STEPS; i++) {
        prop.location.id = i % ndev;
        TRY(hipMemCreate(&h[i], STEP, &prop, 0));
        TRY(hipMemMap((char *)buf + size, STEP, 0, h[i], 0));
        if (!access_all((char *)buf + size, STEP, ndev))
            return 0;
        int ok = fill((char *)buf + size, size / 4, STEP);
        size += STEP;
        uint64_t sum;
        ok = ok && verify(buf, size, &sum);
        snprintf(what, sizeof what, "grew to %3zu MiB: chunk %d on GPU %d, old data in place, no copy", size >> 20, i,
                 i % ndev);
        step("owner", what, ok);
    }
    int fds[STEPS];
    for (int i = 0; i < STEPS; i++)
        TRY(hipMemExportToShareableHandle(&fds[i], h[i], hipMemHandleTypePosixFileDescriptor, 0));
    step("owner", "exported every chunk as a dma-buf fd, sent with SCM_RIGHTS", fdpass_send(sock, fds, STEPS));
    for (int i = 0; i < STEPS; i++)
        close(fds[i]);
    char b;
    int got = read(sock, &b, 1) == 1;
    uint64_t want = 0, sum = 0;
    verify(buf, (STEPS - 1) * STEP, &want);
    TRY(hipMemcpy(&sum, (char *)buf + (STEPS - 1) * STEP, sizeof sum, hipMemcpyDeviceToHost));
    step("owner", "the reader's checksum arrived through the shared memory", got && sum == want);
    TRY(hipMemUnmap(buf, size));
    for (int i = 0; i < STEPS; i++)
        TRY(hipMemRelease(h[i]));
    TRY(hipMemAddressFree(buf, RESERVE));
    return 1;
}

int main(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    fflush(stdout);
    pid_t pid = fork(); /* before either process touches HIP */
    if (pid == 0) {
        close(sv[0]);
        int ok = reader(sv[1]);
        if (!ok)
            step("reader", "import, map and check", 0);
        _exit(ok && !failed ? 0 : 1);
    }
    close(sv[1]);
    int ok = owner(sv[0]);
    if (!ok)
        step("owner", "grow, export and verify", 0);
    close(sv[0]); /* a reader still waiting for the fds (the owner failed) sees EOF */
    int st = 0;
    waitpid(pid, &st, 0);
    int pass = ok && !failed && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("VMM demo: %s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
