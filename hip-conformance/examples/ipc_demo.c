/*
 * hipkfd IPC demo: two processes share GPU memory and an event.
 *
 *   make -C hip-conformance demo     (after demo.c, under `kfdsim run --gpus 2 --`)
 *
 * The program forks before either process touches HIP; each initialises the
 * runtime on its own. Handles travel by value over a pipe pair.
 *   exporter (GPU 0)                       importer (last GPU)
 *   1. hipMalloc 64 MiB, fill a pattern
 *      hipIpcGetMemHandle, event handle -> 2. hipIpcOpenMemHandle, hipIpcOpenEventHandle
 *                                            check the pattern (D2H), write a new one
 *                                            back (D2D from its own GPU) and record
 *                                            the event, hipIpcCloseMemHandle
 *   3. hipEventSynchronize on the event,
 *      verify the importer's bytes
 * Prints a PASS/FAIL line per step; exits with status 1 if any failed.
 */
#include <hip/hip_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIZE ((size_t)64 << 20)

static int failed;

#define TRY(call)                                                                  \
    do {                                                                           \
        hipError_t err_ = (call);                                                  \
        if (err_ != hipSuccess) {                                                  \
            printf("         %s -> %s\n", #call, hipGetErrorName(err_));            \
            return 0;                                                              \
        }                                                                          \
    } while (0)

static uint8_t pat(size_t i, unsigned seed) { return (uint8_t)((i * 2654435761u + seed * 40503u) >> 13); }

static void step(const char *who, const char *what, int ok)
{
    printf("  [%s] %-62s %s\n", who, what, ok ? "PASS" : "FAIL");
    fflush(stdout);
    if (!ok)
        failed = 1;
}

static int check(const void *dev, unsigned seed)
{
    uint8_t *h = malloc(SIZE);
    if (!h || hipMemcpy(h, dev, SIZE, hipMemcpyDeviceToHost) != hipSuccess) {
        free(h);
        return 0;
    }
    size_t i = 0;
    while (i < SIZE && h[i] == pat(i, seed))
        i++;
    free(h);
    return i == SIZE;
}

static int fill(void *dev, unsigned seed)
{
    uint8_t *h = malloc(SIZE);
    if (!h)
        return 0;
    for (size_t i = 0; i < SIZE; i++)
        h[i] = pat(i, seed);
    hipError_t e = hipMemcpy(dev, h, SIZE, hipMemcpyHostToDevice);
    free(h);
    return e == hipSuccess;
}

struct msg {
    hipIpcMemHandle_t mem;
    hipIpcEventHandle_t ev;
};

static int importer(int rd, int wr)
{
    struct msg m;
    if (read(rd, &m, sizeof m) != sizeof m)
        return 0;
    int n = 0;
    TRY(hipGetDeviceCount(&n));
    TRY(hipSetDevice(n - 1));
    void *p = NULL, *mine = NULL;
    hipEvent_t ev = NULL;
    hipStream_t s = NULL;
    TRY(hipIpcOpenMemHandle(&p, m.mem, hipIpcMemLazyEnablePeerAccess));
    TRY(hipIpcOpenEventHandle(&ev, m.ev));
    step("importer", "open the exporter's buffer and event", 1);
    int ok = check(p, 1);
    step("importer", "read the exporter's 64 MiB pattern (GPU memory -> host)", ok);
    TRY(hipMalloc(&mine, SIZE));
    ok = fill(mine, 2);
    TRY(hipStreamCreate(&s));
    TRY(hipMemcpyAsync(p, mine, SIZE, hipMemcpyDeviceToDevice, s));
    TRY(hipEventRecord(ev, s));
    step("importer", "write a new pattern back from its own GPU, record the event", ok);
    char c = 1;
    if (write(wr, &c, 1) != 1)
        return 0;
    TRY(hipStreamSynchronize(s));
    TRY(hipIpcCloseMemHandle(p));
    TRY(hipEventDestroy(ev));
    TRY(hipStreamDestroy(s));
    TRY(hipFree(mine));
    step("importer", "close", 1);
    return 1;
}

static int exporter(int rd, int wr, pid_t child)
{
    void *p = NULL;
    hipEvent_t ev = NULL;
    struct msg m;
    TRY(hipSetDevice(0));
    TRY(hipMalloc(&p, SIZE));
    int ok = fill(p, 1);
    TRY(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
    TRY(hipIpcGetMemHandle(&m.mem, p));
    TRY(hipIpcGetEventHandle(&m.ev, ev));
    step("exporter", "allocate 64 MiB on GPU 0, fill it, export buffer and event", ok);
    if (write(wr, &m, sizeof m) != sizeof m)
        return 0;
    char c;
    if (read(rd, &c, 1) != 1)
        return 0;
    TRY(hipEventSynchronize(ev));
    step("exporter", "hipEventSynchronize on the importer's record", 1);
    step("exporter", "verify the importer's pattern in its own buffer", check(p, 2));
    int st = 0;
    waitpid(child, &st, 0);
    step("exporter", "importer exited cleanly", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    TRY(hipEventDestroy(ev));
    TRY(hipFree(p));
    return 1;
}

int main(void)
{
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent))
        return 1;
    printf("hipkfd IPC demo: two processes, one buffer, one event\n");
    fflush(stdout);
    pid_t pid = fork(); /* before any HIP call */
    if (pid < 0)
        return 1;
    if (pid == 0) {
        close(to_child[1]);
        close(to_parent[0]);
        int ok = importer(to_child[0], to_parent[1]);
        if (!ok)
            step("importer", "a HIP call failed", 0);
        _exit(ok && !failed ? 0 : 1);
    }
    /* Only the other process holds the far ends: either side sees EOF if the other fails. */
    close(to_child[0]);
    close(to_parent[1]);
    int ok = exporter(to_parent[0], to_child[1], pid);
    if (!ok) {
        step("exporter", "a HIP call failed", 0);
        kill(pid, 9);
        waitpid(pid, NULL, 0);
    }
    printf("%s\n", ok && !failed ? "IPC demo: PASS" : "IPC demo: FAIL");
    return ok && !failed ? 0 : 1;
}
