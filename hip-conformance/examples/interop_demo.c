/*
 * Interop demo: a producer process (libdrm_amdgpu, as a Vulkan driver underneath) renders
 * frames into a ring of dma-buf BOs and signals a timeline DRM syncobj `ready` (point = frame);
 * this HIP process imports the dma-bufs (hipImportExternalMemory) and the syncobj
 * (hipImportExternalSemaphore, TimelineSemaphoreFd), waits on the GPU for each frame, copies
 * it out, checks it, and signals a second timeline `done` (point = frame) so that the producer
 * may reuse the frame's slot.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fdpass.h"
#include "../interop_producer.h"

#define FRAMES 32
#define SLOTS 3
#define W 640
#define H 360
#define FRAME_BYTES ((size_t)W * H * 4)

#define HIP(call)                                                                          \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        if (e_ != hipSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static uint32_t pixel(int frame, size_t i) { return (uint32_t)(frame * 2654435761u) ^ (uint32_t)i; }

/* hipStreamSynchronize that gives up when the producer has failed: its frames (and semaphore
 * signals) will never come, and a GPU wait on them would never end. */
static void sync_or_producer_gone(hipStream_t st, pid_t producer)
{
    for (;;) {
        hipError_t e = hipStreamQuery(st);
        if (e == hipSuccess)
            return;
        if (e != hipErrorNotReady) {
            fprintf(stderr, "hipStreamQuery -> %s\n", hipGetErrorName(e));
            exit(1);
        }
        siginfo_t info;
        memset(&info, 0, sizeof info);
        /* WNOWAIT: main() still reaps it. A producer that exited 0 had signalled everything. */
        if (waitid(P_PID, (id_t)producer, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == producer &&
            (info.si_code != CLD_EXITED || info.si_status != 0)) {
            fprintf(stderr, "the producer failed before signalling\n");
            exit(1);
        }
        usleep(1000);
    }
}

static void render(uint32_t *px, int frame)
{
    for (size_t i = 0; i < (size_t)W * H; i++)
        px[i] = pixel(frame, i);
}

static void producer(int sock)
{
    struct producer p = producer_open(0);
    struct pbuf bufs[SLOTS];
    int fds[SLOTS + 2];
    for (int i = 0; i < SLOTS; i++) {
        bufs[i] = pbuf_alloc(&p, FRAME_BYTES, AMDGPU_GEM_DOMAIN_VRAM);
        fds[i] = pbuf_export(&bufs[i]);
    }
    uint32_t ready = psync_create(&p, &fds[SLOTS]);
    uint32_t done = psync_create(&p, &fds[SLOTS + 1]);
    PRODUCER_REQUIRE(fdpass_send(sock, fds, SLOTS + 2));
    for (int i = 0; i < SLOTS + 2; i++)
        close(fds[i]);
    for (int f = 1; f <= FRAMES; f++) {
        if (f > SLOTS) /* the consumer is done with this slot's previous frame */
            PRODUCER_REQUIRE(psync_wait(&p, done, f - SLOTS, 10000) == 0);
        render((uint32_t *)bufs[f % SLOTS].cpu, f);
        psync_signal(&p, ready, f);
    }
    PRODUCER_REQUIRE(psync_wait(&p, done, FRAMES, 10000) == 0);
    for (int i = 0; i < SLOTS; i++)
        pbuf_free(&bufs[i]);
    producer_close(&p);
    exit(0);
}

int main(void)
{
    int sv[2];
    PRODUCER_REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    pid_t pid = fork(); /* before the runtime starts */
    PRODUCER_REQUIRE(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        producer(sv[1]);
    }
    close(sv[1]);
    int fds[SLOTS + 2];
    PRODUCER_REQUIRE(fdpass_recv(sv[0], fds, SLOTS + 2));

    void *frames[SLOTS];
    hipExternalMemory_t mems[SLOTS];
    for (int i = 0; i < SLOTS; i++) {
        hipExternalMemoryHandleDesc d = {.type = hipExternalMemoryHandleTypeOpaqueFd, .size = FRAME_BYTES};
        d.handle.fd = fds[i];
        HIP(hipImportExternalMemory(&mems[i], &d));
        hipExternalMemoryBufferDesc b = {.offset = 0, .size = FRAME_BYTES};
        HIP(hipExternalMemoryGetMappedBuffer(&frames[i], mems[i], &b));
    }
    hipExternalSemaphore_t ready, done;
    hipExternalSemaphoreHandleDesc sd = {.type = hipExternalSemaphoreHandleTypeTimelineSemaphoreFd};
    sd.handle.fd = fds[SLOTS];
    HIP(hipImportExternalSemaphore(&ready, &sd));
    sd.handle.fd = fds[SLOTS + 1];
    HIP(hipImportExternalSemaphore(&done, &sd));

    uint32_t *host;
    HIP(hipHostMalloc((void **)&host, FRAME_BYTES, 0));
    hipStream_t st;
    HIP(hipStreamCreate(&st));
    int bad = 0;
    double t0 = (double)mono_ns();
    for (int f = 1; f <= FRAMES; f++) {
        hipExternalSemaphoreWaitParams w = {0};
        hipExternalSemaphoreSignalParams s = {0};
        w.params.fence.value = f;
        s.params.fence.value = f;
        HIP(hipWaitExternalSemaphoresAsync(&ready, &w, 1, st));
        HIP(hipMemcpyAsync(host, frames[f % SLOTS], FRAME_BYTES, hipMemcpyDeviceToHost, st));
        HIP(hipSignalExternalSemaphoresAsync(&done, &s, 1, st));
        sync_or_producer_gone(st, pid);
        for (size_t i = 0; i < (size_t)W * H; i++)
            if (host[i] != pixel(f, i)) {
                bad++;
                break;
            }
    }
    double ms = ((double)mono_ns() - t0) / 1e6;
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < SLOTS; i++) {
        HIP(hipFree(frames[i]));
        HIP(hipDestroyExternalMemory(mems[i]));
    }
    HIP(hipDestroyExternalSemaphore(ready));
    HIP(hipDestroyExternalSemaphore(done));
    HIP(hipStreamDestroy(st));
    HIP(hipHostFree(host));
    int ok = bad == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("%s: interop demo: %d frames of %dx%d RGBA from a producer process through %d dma-bufs and a "
           "timeline syncobj each way, waited on the GPU, copied and checked (%d bad), %.1f ms\n",
           ok ? "PASS" : "FAIL", FRAMES, W, H, SLOTS, bad, ms);
    return ok ? 0 : 1;
}
