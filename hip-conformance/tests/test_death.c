/*
 * Process death: a peer sharing memory (IPC, or a VMM chunk shared as a dma-buf fd) is killed
 * (SIGKILL) in the middle of copies or after an export. The
 * survivor keeps correct data and working APIs, and gives everything back: the sim's accounting
 * (kfdsim_stat, found with dlsym; KFDSIM_STATS) shows the VRAM bytes of every GPU (its own
 * allocations and its imports of the peer's memory) and its dma-buf fds back at their starting
 * values once it has closed or freed what it used. (The runtime keeps the SDMA queues it made
 * for reuse, so BO and queue counts may grow; the fault driver checks those.)
 */
#define _GNU_SOURCE
#include "common.h"
#include "proc.h"
#include "../fdpass.h"
#include "../shared.h"
#include "usage.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHARED (16 * MiB)

/* One pass of what the test uses, so that the runtime's own lazily made objects (staging
 * buffers, queues) exist before the baseline is taken. */
static void warm_up(void)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    void *d = dev_pattern(1 * MiB, 1);
    void *e = NULL;
    HIP_OK(hipMalloc(&e, 1 * MiB));
    HIP_OK(hipMemcpyAsync(e, d, 1 * MiB, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(e, 1 * MiB, 1);
    HIP_OK(hipFree(d));
    HIP_OK(hipFree(e));
    HIP_OK(hipStreamDestroy(s));
}

/* The survivor's APIs keep working on `dst`: a fresh pattern `seed` copied in reads back. */
static void rewrite_and_check(void *dst, unsigned seed)
{
    void *src = dev_pattern(SHARED, seed);
    HIP_OK(hipMemcpy(dst, src, SHARED, hipMemcpyDeviceToDevice));
    check_dev_pattern(dst, SHARED, seed);
    HIP_OK(hipFree(src));
}

/* Exporter: fills SHARED bytes on device 0 with pattern 41, sends the IPC handle, then keeps
 * the allocation until it is killed. */
static void exporter_until_killed(int fd, void *arg)
{
    (void)arg;
    HIP_OK(hipSetDevice(0));
    void *p = dev_pattern(SHARED, 41);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    xsend(fd, &h, sizeof h);
    for (;;)
        pause();
}

/* The importer (this test) copies from the exporter's memory on a stream while the exporter is
 * killed: the imported memory stays valid (the import holds the dma-buf), every copy before and
 * after the kill reads the pattern, and closing the handle gives back every byte and fd. */
TEST(death_exporter_killed_while_importer_copies)
{
    struct peer ex = spawn(exporter_until_killed, NULL);
    hipIpcMemHandle_t h;
    xrecv(ex.fd, &h, sizeof h);
    importer_device();
    warm_up();
    struct usage u0 = usage_now();
    void *mine = NULL, *p = NULL;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
    HIP_OK(hipMalloc(&mine, SHARED));
    for (int i = 0; i < 8; i++)
        HIP_OK(hipMemcpyAsync(mine, p, SHARED, hipMemcpyDeviceToDevice, s));
    kill_and_reap(&ex); /* while those copies are queued or running */
    for (int i = 0; i < 8; i++)
        HIP_OK(hipMemcpyAsync(mine, p, SHARED, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(mine, SHARED, 41);
    check_dev_pattern(p, SHARED, 41);
    rewrite_and_check(p, 42); /* the orphaned import */
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipFree(mine));
    HIP_OK(hipStreamDestroy(s));
    check_usage_back(u0);
}

/* Importer: opens the handle it receives, says so, then writes pattern 51 into the exporter's
 * memory over and over until it is killed. */
static void importer_writes_until_killed(int fd, void *arg)
{
    (void)arg;
    hipIpcMemHandle_t h;
    xrecv(fd, &h, sizeof h);
    importer_device();
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
    void *src = dev_pattern(SHARED, 51);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipMemcpyAsync(p, src, SHARED, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    send_u64(fd, 1);
    for (;;)
        HIP_OK(hipMemcpyAsync(p, src, SHARED, hipMemcpyDeviceToDevice, s));
}

/* The exporter (this test) kills the importer while it copies into the shared buffer: the
 * exporter's memory, copies and frees keep working, its own writes afterwards read back
 * exactly, and its VRAM bytes return to their starting values. */
TEST(death_importer_killed_while_exporter_copies)
{
    struct peer im = spawn(importer_writes_until_killed, NULL);
    HIP_OK(hipSetDevice(0));
    warm_up();
    struct usage u0 = usage_now();
    void *p = dev_pattern(SHARED, 50);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    xsend(im.fd, &h, sizeof h);
    CHECK(recv_u64(im.fd) == 1);
    check_dev_pattern(p, SHARED, 51); /* the importer's writes arrived */
    void *src = dev_pattern(SHARED, 52);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    for (int i = 0; i < 4; i++)
        HIP_OK(hipMemcpyAsync(p, src, SHARED, hipMemcpyDeviceToDevice, s));
    kill_and_reap(&im);
    HIP_OK(hipMemcpyAsync(p, src, SHARED, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(p, SHARED, 52);
    /* A new export of the same memory and new allocations work after the peer's death. */
    HIP_OK(hipIpcGetMemHandle(&h, p));
    void *q = dev_pattern(SHARED, 53);
    check_dev_pattern(q, SHARED, 53);
    HIP_OK(hipFree(q));
    HIP_OK(hipFree(src));
    HIP_OK(hipFree(p));
    HIP_OK(hipStreamDestroy(s));
    check_usage_back(u0);
}

/* Maps chunk `h` (`size` bytes) at a new reservation, read-write for device `dev`. */
static void *vmm_map_rw(hipMemGenericAllocationHandle_t h, size_t size, int dev)
{
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, size, 0, NULL, 0));
    HIP_OK(hipMemMap(va, size, 0, h, 0));
    hipMemAccessDesc acc = {.location = {.type = hipMemLocationTypeDevice, .id = dev},
                            .flags = hipMemAccessFlagsProtReadWrite};
    HIP_OK(hipMemSetAccess(va, size, &acc, 1));
    return va;
}

/* A VMM chunk of `size` bytes on device `dev`, mapped read-write for `dev` at *va. */
static hipMemGenericAllocationHandle_t vmm_mapped_chunk(int dev, size_t size, void **va)
{
    hipMemAllocationProp prop = vmm_device_prop(dev);
    hipMemGenericAllocationHandle_t h;
    HIP_OK(hipMemCreate(&h, size, &prop, 0));
    *va = vmm_map_rw(h, size, dev);
    return h;
}

/* A chunk on device 0 filled with pattern `seed`, mapped at *va, exported: its dma-buf fd. */
static int filled_chunk_fd(unsigned seed, hipMemGenericAllocationHandle_t *h, void **va)
{
    *h = vmm_mapped_chunk(0, SHARED, va);
    rewrite_and_check(*va, seed);
    int chunk_fd = -1;
    HIP_OK(hipMemExportToShareableHandle(&chunk_fd, *h, hipMemHandleTypePosixFileDescriptor, 0));
    return chunk_fd;
}

static void vmm_unmap_release(hipMemGenericAllocationHandle_t h, void *va, size_t size)
{
    HIP_OK(hipMemUnmap(va, size));
    HIP_OK(hipMemAddressFree(va, size));
    HIP_OK(hipMemRelease(h));
}

/* The device that maps an imported chunk of device 0: the importer's device when it can reach
 * device 0's memory (xGMI, PCIe P2P), else device 0 itself (small-BAR PCIe without P2P, where a
 * mapping for the other GPU is hipErrorInvalidDevice). */
static int vmm_importer_device(void)
{
    int dev = importer_device(), can = 0;
    if (dev != 0 && (hipDeviceCanAccessPeer(&can, dev, 0) != hipSuccess || !can)) {
        dev = 0;
        HIP_OK(hipSetDevice(0));
    }
    return dev;
}

/* VMM importer: imports the chunk fd it receives, maps it, says so, then reads it over and over
 * until it is killed. */
static void vmm_importer_reads_until_killed(int fd, void *arg)
{
    (void)arg;
    int chunk_fd = -1;
    REQUIRE(fdpass_recv(fd, &chunk_fd, 1));
    int dev = vmm_importer_device();
    hipMemGenericAllocationHandle_t h;
    HIP_OK(hipMemImportFromShareableHandle(&h, (void *)(uintptr_t)chunk_fd, hipMemHandleTypePosixFileDescriptor));
    void *va = vmm_map_rw(h, SHARED, dev);
    check_dev_pattern(va, SHARED, 61);
    void *mine = NULL;
    HIP_OK(hipMalloc(&mine, SHARED));
    send_u64(fd, 1);
    for (;;)
        HIP_OK(hipMemcpy(mine, va, SHARED, hipMemcpyDeviceToDevice));
}

/* The VMM exporter (this test) kills the importer while it has the chunk mapped and reads it:
 * the exporter's mapping keeps its data, unmaps and releases cleanly, and its VRAM bytes and
 * dma-buf fds return to their starting values. */
TEST(death_vmm_importer_killed_while_mapped)
{
    struct peer im = spawn(vmm_importer_reads_until_killed, NULL);
    HIP_OK(hipSetDevice(0));
    warm_up();
    struct usage u0 = usage_now();
    void *va = NULL;
    hipMemGenericAllocationHandle_t h;
    int chunk_fd = filled_chunk_fd(61, &h, &va);
    REQUIRE(fdpass_send(im.fd, &chunk_fd, 1));
    close(chunk_fd);
    CHECK(recv_u64(im.fd) == 1);
    kill_and_reap(&im);
    check_dev_pattern(va, SHARED, 61);
    rewrite_and_check(va, 62);
    vmm_unmap_release(h, va, SHARED);
    check_usage_back(u0);
}

/* VMM exporter: makes and fills a chunk, sends its fd, then keeps it until it is killed. */
static void vmm_exporter_until_killed(int fd, void *arg)
{
    (void)arg;
    HIP_OK(hipSetDevice(0));
    void *va = NULL;
    hipMemGenericAllocationHandle_t h;
    int chunk_fd = filled_chunk_fd(63, &h, &va);
    REQUIRE(fdpass_send(fd, &chunk_fd, 1));
    for (;;)
        pause();
}

/* The importer (this test) imports and maps the chunk, the exporter is killed: the mapping keeps
 * the exporter's data (the import holds the dma-buf), takes new writes, and unmapping and
 * releasing it gives back every byte and fd. */
TEST(death_vmm_exporter_killed_after_export)
{
    struct peer ex = spawn(vmm_exporter_until_killed, NULL);
    int chunk_fd = -1;
    REQUIRE(fdpass_recv(ex.fd, &chunk_fd, 1));
    int dev = vmm_importer_device();
    warm_up();
    struct usage u0 = usage_now();
    hipMemGenericAllocationHandle_t h;
    HIP_OK(hipMemImportFromShareableHandle(&h, (void *)(uintptr_t)chunk_fd, hipMemHandleTypePosixFileDescriptor));
    close(chunk_fd); /* counted in the baseline; the import keeps no fd of its own */
    u0.dmabuf_fds--;
    kill_and_reap(&ex);
    void *va = vmm_map_rw(h, SHARED, dev);
    check_dev_pattern(va, SHARED, 63);
    rewrite_and_check(va, 64);
    vmm_unmap_release(h, va, SHARED);
    check_usage_back(u0);
}
