/*
 * hipkfd demo: move memory around two (simulated) GPUs with the HIP runtime.
 *
 *   make -C hip-conformance demo     (runs under `kfdsim run --gpus 2 --`)
 *
 * What it does, each step verified byte by byte by reading the data back:
 *   1. allocate a buffer on GPU 0 and one on GPU 1 and fill them (hipMemset)
 *   2. copy host -> GPU 0                    (hipMemcpy, pageable host memory)
 *   3. copy GPU 0 -> GPU 0                   (hipMemcpy, device to device)
 *   4. copy GPU 0 -> GPU 1                   (hipMemcpy, across GPUs)
 *   5. copy GPU 1 -> host                    (hipMemcpy, hipHostMalloc memory)
 *   6. async on two streams ordered by an event: stream A (GPU 0) copies
 *      host -> GPU 0 -> GPU 0 and records an event; stream B (GPU 1) waits
 *      for that event, then copies GPU 0 -> GPU 1 -> host
 *   7. async fill on stream B (hipMemsetD32Async), read back on stream B
 * It prints the devices, a PASS/FAIL line per step and the bytes moved, and
 * exits with status 1 if any step failed.
 */
#include <hip/hip_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)
#define BUF_SIZE (64 * MiB) /* bytes per buffer */

static size_t bytes_copied; /* by hipMemcpy*, including read-backs */
static size_t bytes_filled; /* by hipMemset* */
static int steps_run, steps_failed;

/* Run a HIP call; on error print it and make the enclosing step fail. */
#define TRY(call)                                                                  \
    do {                                                                           \
        hipError_t err_ = (call);                                                  \
        if (err_ != hipSuccess) {                                                  \
            printf("         %s\n         -> %s (%d): %s\n", #call,                \
                   hipGetErrorName(err_), (int)err_, hipGetErrorString(err_));      \
            return 0;                                                              \
        }                                                                          \
    } while (0)

static void step(const char *what, int ok)
{
    steps_run++;
    if (!ok)
        steps_failed++;
    printf("  [%s] %s\n", ok ? "PASS" : "FAIL", what);
}

/* Test data: byte i of pattern `seed`. */
static uint8_t pattern(size_t i, unsigned seed)
{
    return (uint8_t)(i * 131 + (i >> 12) * 7 + seed * 29);
}

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(i, seed);
}

/* 1 if p holds pattern `seed`; otherwise print the first bad byte. */
static int check_pattern(const uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(i, seed)) {
            printf("         byte %zu is 0x%02x, expected 0x%02x\n", i, p[i], pattern(i, seed));
            return 0;
        }
    return 1;
}

static int check_value(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) {
            printf("         byte %zu is 0x%02x, expected 0x%02x\n", i, p[i], v);
            return 0;
        }
    return 1;
}

/* Host buffers, and the device buffers: a and a2 on GPU 0, b on GPU 1. */
static uint8_t *host_in, *host_out;     /* pageable (malloc) */
static uint8_t *pinned_in, *pinned_out; /* page-locked (hipHostMalloc) */
static uint8_t *a, *a2, *b;

/* Copy a device buffer to host_out (synchronously). */
static int read_back(const void *dev)
{
    memset(host_out, 0, BUF_SIZE);
    TRY(hipMemcpy(host_out, dev, BUF_SIZE, hipMemcpyDeviceToHost));
    bytes_copied += BUF_SIZE;
    return 1;
}

static int show_devices(int *count)
{
    TRY(hipGetDeviceCount(count));
    printf("devices: %d\n", *count);
    for (int i = 0; i < *count; i++) {
        hipDeviceProp_t p;
        TRY(hipGetDeviceProperties(&p, i));
        printf("  GPU %d: %s, %s, %.1f GiB VRAM, PCI %04x:%02x:%02x\n", i, p.name, p.gcnArchName,
               (double)p.totalGlobalMem / (double)(1u << 30), (unsigned)p.pciDomainID,
               (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
    }
    return 1;
}

static int step_alloc_and_fill(void)
{
    TRY(hipSetDevice(0));
    TRY(hipMalloc((void **)&a, BUF_SIZE));
    TRY(hipMalloc((void **)&a2, BUF_SIZE));
    TRY(hipMemset(a, 0xa0, BUF_SIZE));
    TRY(hipSetDevice(1));
    TRY(hipMalloc((void **)&b, BUF_SIZE));
    TRY(hipMemset(b, 0xb1, BUF_SIZE));
    bytes_filled += 2 * BUF_SIZE;
    TRY(hipSetDevice(0));
    return read_back(a) && check_value(host_out, BUF_SIZE, 0xa0) && read_back(b) &&
           check_value(host_out, BUF_SIZE, 0xb1);
}

static int step_h2d(void)
{
    fill_pattern(host_in, BUF_SIZE, 1);
    TRY(hipMemcpy(a, host_in, BUF_SIZE, hipMemcpyHostToDevice));
    bytes_copied += BUF_SIZE;
    return read_back(a) && check_pattern(host_out, BUF_SIZE, 1);
}

static int step_d2d_same_gpu(void)
{
    TRY(hipMemcpy(a2, a, BUF_SIZE, hipMemcpyDeviceToDevice));
    bytes_copied += BUF_SIZE;
    return read_back(a2) && check_pattern(host_out, BUF_SIZE, 1);
}

static int step_d2d_across_gpus(void)
{
    TRY(hipMemcpy(b, a2, BUF_SIZE, hipMemcpyDeviceToDevice));
    bytes_copied += BUF_SIZE;
    return read_back(b) && check_pattern(host_out, BUF_SIZE, 1);
}

static int step_d2h(void)
{
    /* the read-backs above go to pageable memory; this one to pinned memory */
    memset(pinned_out, 0, BUF_SIZE);
    TRY(hipMemcpy(pinned_out, b, BUF_SIZE, hipMemcpyDeviceToHost));
    bytes_copied += BUF_SIZE;
    return check_pattern(pinned_out, BUF_SIZE, 1);
}

/*
 * Stream A (GPU 0): pinned_in -> a -> a2, record `ready`.
 * Stream B (GPU 1): wait for `ready`, a2 -> b -> pinned_out.
 * a2 and b still hold pattern 1 from the synchronous steps, so if B did not
 * wait for A it would deliver pattern 1 instead of pattern 2.
 */
static int step_async_two_streams(hipStream_t sa, hipStream_t sb, float *ms_a, float *ms_b)
{
    hipEvent_t a_start, ready, b_start, b_done;
    fill_pattern(pinned_in, BUF_SIZE, 2);
    memset(pinned_out, 0, BUF_SIZE);

    TRY(hipSetDevice(0));
    TRY(hipEventCreate(&a_start));
    TRY(hipEventCreate(&ready));
    TRY(hipEventRecord(a_start, sa));
    TRY(hipMemcpyAsync(a, pinned_in, BUF_SIZE, hipMemcpyHostToDevice, sa));
    TRY(hipMemcpyAsync(a2, a, BUF_SIZE, hipMemcpyDeviceToDevice, sa));
    TRY(hipEventRecord(ready, sa));

    TRY(hipSetDevice(1));
    TRY(hipEventCreate(&b_start));
    TRY(hipEventCreate(&b_done));
    TRY(hipStreamWaitEvent(sb, ready, 0));
    TRY(hipEventRecord(b_start, sb));
    TRY(hipMemcpyAsync(b, a2, BUF_SIZE, hipMemcpyDeviceToDevice, sb));
    TRY(hipMemcpyAsync(pinned_out, b, BUF_SIZE, hipMemcpyDeviceToHost, sb));
    TRY(hipEventRecord(b_done, sb));

    TRY(hipEventSynchronize(b_done));
    bytes_copied += 4 * BUF_SIZE;
    TRY(hipEventElapsedTime(ms_a, a_start, ready));
    TRY(hipEventElapsedTime(ms_b, b_start, b_done));
    TRY(hipEventDestroy(a_start));
    TRY(hipEventDestroy(ready));
    TRY(hipEventDestroy(b_start));
    TRY(hipEventDestroy(b_done));
    TRY(hipSetDevice(0));
    return check_pattern(pinned_out, BUF_SIZE, 2);
}

static int step_async_fill(hipStream_t sb)
{
    const uint32_t word = 0xc0ffee11u;
    TRY(hipMemsetD32Async((hipDeviceptr_t)b, (int)word, BUF_SIZE / 4, sb));
    TRY(hipMemcpyAsync(pinned_out, b, BUF_SIZE, hipMemcpyDeviceToHost, sb));
    TRY(hipStreamSynchronize(sb));
    bytes_filled += BUF_SIZE;
    bytes_copied += BUF_SIZE;
    for (size_t i = 0; i < BUF_SIZE / 4; i++) {
        uint32_t w;
        memcpy(&w, pinned_out + 4 * i, 4);
        if (w != word) {
            printf("         word %zu is 0x%08x, expected 0x%08x\n", i, w, word);
            return 0;
        }
    }
    return 1;
}

/*
 * Peer to peer: GPU 0 enables access to GPU 1's memory (a GPUVM mapping), then
 * hipMemcpyPeer GPU 1 -> GPU 0 runs on an SDMA engine (an xGMI one when the
 * GPUs share a hive), asynchronously; hipDeviceSynchronize waits for it.
 */
static int step_peer(void)
{
    int can = 0;
    TRY(hipSetDevice(1));
    TRY(hipMemset(b, 0, BUF_SIZE));
    TRY(hipMemcpy(b, pinned_in, BUF_SIZE, hipMemcpyHostToDevice));
    bytes_copied += BUF_SIZE;
    TRY(hipSetDevice(0));
    TRY(hipDeviceCanAccessPeer(&can, 0, 1));
    printf("         GPU 0 %s access GPU 1's memory\n", can ? "can" : "cannot");
    if (can)
        TRY(hipDeviceEnablePeerAccess(1, 0));
    TRY(hipMemset(a, 0, BUF_SIZE));
    TRY(hipMemcpyPeer(a, 0, b, 1, BUF_SIZE));
    TRY(hipDeviceSynchronize());
    bytes_copied += BUF_SIZE;
    if (can)
        TRY(hipDeviceDisablePeerAccess(1));
    return read_back(a) && check_pattern(host_out, BUF_SIZE, 3);
}

int main(void)
{
    int count = 0;
    hipStream_t sa = NULL, sb = NULL;
    float ms_a = 0, ms_b = 0;

    printf("hipkfd demo: %zu MiB buffers on two GPUs\n\n", BUF_SIZE / MiB);
    if (!show_devices(&count) || count < 2) {
        printf("\nFAIL: this demo needs 2 GPUs (run it with `kfdsim run --gpus 2 -- ...`)\n");
        return 1;
    }
    host_in = malloc(BUF_SIZE);
    host_out = malloc(BUF_SIZE);
    if (!host_in || !host_out || hipHostMalloc((void **)&pinned_in, BUF_SIZE, 0) != hipSuccess ||
        hipHostMalloc((void **)&pinned_out, BUF_SIZE, 0) != hipSuccess) {
        printf("FAIL: cannot allocate host buffers\n");
        return 1;
    }
    if (hipSetDevice(0) != hipSuccess || hipStreamCreate(&sa) != hipSuccess ||
        hipSetDevice(1) != hipSuccess || hipStreamCreate(&sb) != hipSuccess ||
        hipSetDevice(0) != hipSuccess) {
        printf("FAIL: cannot create streams\n");
        return 1;
    }

    printf("\nsteps (each one verified byte by byte):\n");
    step("1. hipMalloc on GPU 0 and GPU 1, hipMemset both", step_alloc_and_fill());
    step("2. hipMemcpy host -> GPU 0 (pageable host memory)", step_h2d());
    step("3. hipMemcpy GPU 0 -> GPU 0", step_d2d_same_gpu());
    step("4. hipMemcpy GPU 0 -> GPU 1", step_d2d_across_gpus());
    step("5. hipMemcpy GPU 1 -> host (pinned host memory)", step_d2h());
    step("6. async: stream A (GPU 0) host -> GPU 0 -> GPU 0, event;\n"
         "            stream B (GPU 1) waits for it, GPU 0 -> GPU 1 -> host (pinned)",
         step_async_two_streams(sa, sb, &ms_a, &ms_b));
    step("7. async: hipMemsetD32Async on GPU 1, read back on stream B", step_async_fill(sb));
    fill_pattern(pinned_in, BUF_SIZE, 3);
    step("8. peer: hipDeviceEnablePeerAccess, hipMemcpyPeer GPU 1 -> GPU 0", step_peer());

    hipStreamDestroy(sa);
    hipStreamDestroy(sb);
    hipFree(a);
    hipFree(a2);
    hipFree(b);
    hipHostFree(pinned_in);
    hipHostFree(pinned_out);
    free(host_in);
    free(host_out);

    printf("\nmoved: %zu MiB copied, %zu MiB filled", bytes_copied / MiB, bytes_filled / MiB);
    printf(" (stream A %.2f ms, stream B %.2f ms by hipEventElapsedTime)\n", (double)ms_a,
           (double)ms_b);
    if (steps_failed) {
        printf("RESULT: FAIL (%d of %d steps failed)\n", steps_failed, steps_run);
        return 1;
    }
    printf("RESULT: PASS (%d of %d steps)\n", steps_run, steps_run);
    return 0;
}
