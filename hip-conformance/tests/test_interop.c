/*
 * External interop (issue 10): hipImportExternalMemory on dma-bufs and external semaphores on
 * DRM syncobj, with libdrm_amdgpu used directly as the other API (../interop_producer.h).
 */
#define _GNU_SOURCE
#include "../harness.h"
#include "common.h"
#include "extsem.h"

#define PRODUCER_REQUIRE(cond) REQUIRE(cond)
#include "../fdpass.h"
#include "../interop_producer.h"

#include <linux/udmabuf.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

static int fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

static hipExternalMemory_t import_mem(int fd, size_t size)
{
    hipExternalMemoryHandleDesc d;
    hipExternalMemory_t m = NULL;
    memset(&d, 0, sizeof d);
    d.type = hipExternalMemoryHandleTypeOpaqueFd;
    d.handle.fd = fd;
    d.size = size;
    HIP_OK(hipImportExternalMemory(&m, &d));
    return m;
}

static void *map_buf(hipExternalMemory_t m, size_t off, size_t size)
{
    hipExternalMemoryBufferDesc b;
    void *p = NULL;
    memset(&b, 0, sizeof b);
    b.offset = off;
    b.size = size;
    HIP_OK(hipExternalMemoryGetMappedBuffer(&p, m, &b));
    return p;
}

/* A producer BO of n bytes in `domain`, filled with pattern `seed` by the producer's CPU, and
 * HIP's import of it. */
struct shared_bo {
    struct producer p;
    struct pbuf b;
    hipExternalMemory_t m;
};

static struct shared_bo shared_bo_open(size_t n, uint32_t domain, unsigned seed)
{
    struct shared_bo x;
    x.p = producer_open(0);
    x.b = pbuf_alloc(&x.p, n, domain);
    pat_fill(x.b.cpu, n, seed);
    x.m = import_mem(pbuf_export(&x.b), n);
    return x;
}

static void shared_bo_close(struct shared_bo *x)
{
    HIP_OK(hipDestroyExternalMemory(x->m));
    pbuf_free(&x->b);
    producer_close(&x->p);
}

TEST(interop_struct_layouts)
{
    CHECK(sizeof(hipExternalMemoryHandleDesc) == 104);
    CHECK(offsetof(hipExternalMemoryHandleDesc, size) == 24);
    CHECK(offsetof(hipExternalMemoryHandleDesc, flags) == 32);
    CHECK(sizeof(hipExternalMemoryBufferDesc) == 88);
    CHECK(sizeof(hipExternalMemoryMipmappedArrayDesc) == 64);
    CHECK(sizeof(hipExternalSemaphoreHandleDesc) == 96);
    CHECK(offsetof(hipExternalSemaphoreHandleDesc, flags) == 24);
    CHECK(sizeof(hipExternalSemaphoreSignalParams) == 144);
    CHECK(offsetof(hipExternalSemaphoreSignalParams, flags) == 72);
    CHECK(sizeof(hipExternalSemaphoreWaitParams) == 144);
    CHECK(offsetof(hipExternalSemaphoreWaitParams, flags) == 72);
    CHECK(hipExternalSemaphoreHandleTypeTimelineSemaphoreFd == 9);
    CHECK(hipExternalMemoryDedicated == 1);
}

/* Data both ways, GTT and VRAM producers: the producer's CPU writes are seen by hipMemcpy, and
 * HIP's copies and fills are seen by the producer's CPU mapping. */
TEST(interop_mem_data_both_ways)
{
    const size_t n = 1 * MiB + 4096;
    uint32_t domains[2] = {AMDGPU_GEM_DOMAIN_GTT, AMDGPU_GEM_DOMAIN_VRAM};
    for (int i = 0; i < 2; i++) {
        struct shared_bo x = shared_bo_open(n, domains[i], 11 + i);
        struct pbuf b = x.b;
        uint8_t *d = map_buf(x.m, 0, n);
        check_dev_pattern(d, n, 11 + i);
        uint8_t *src = xmalloc(n);
        pat_fill(src, n, 21 + i);
        HIP_OK(hipMemcpy(d, src, n, hipMemcpyHostToDevice));
        CHECK_PATTERN(b.cpu, n, 21 + i);
        HIP_OK(hipMemset(d + 4096, 0x5a, 8192)); /* asynchronous on device memory */
        HIP_OK(hipDeviceSynchronize());
        CHECK_BYTES(b.cpu + 4096, 8192, 0x5a);
        /* device to device, both directions */
        void *own = NULL;
        HIP_OK(hipMalloc(&own, n));
        HIP_OK(hipMemcpy(own, d, n, hipMemcpyDeviceToDevice));
        HIP_OK(hipMemset(d, 0, n));
        HIP_OK(hipMemcpy(d, own, n, hipMemcpyDefault));
        CHECK(b.cpu[4096] == 0x5a);
        HIP_OK(hipFree(own));
        HIP_OK(hipFree(d));
        free(src);
        shared_bo_close(&x);
    }
}

/* Any byte offset; several buffers of one object; attributes and address range. */
TEST(interop_mem_offsets_and_attributes)
{
    const size_t n = 256 * KiB;
    struct shared_bo x = shared_bo_open(n, AMDGPU_GEM_DOMAIN_VRAM, 3);
    struct pbuf b = x.b;
    hipExternalMemory_t m = x.m;
    size_t offs[3] = {0, 4097, n - 100};
    for (int i = 0; i < 3; i++) {
        size_t len = n - offs[i];
        uint8_t *d = map_buf(m, offs[i], len);
        uint8_t *h = xmalloc(len);
        HIP_OK(hipMemcpy(h, d, len, hipMemcpyDeviceToHost));
        CHECK(memcmp(h, b.cpu + offs[i], len) == 0);
        hipPointerAttribute_t a;
        HIP_OK(hipPointerGetAttributes(&a, d + 1));
        CHECK(a.type == hipMemoryTypeDevice);
        CHECK(a.device == 0);
        CHECK(a.devicePointer == d + 1);
        hipDeviceptr_t base = NULL;
        size_t sz = 0;
        HIP_OK(hipMemGetAddressRange(&base, &sz, d + 5));
        CHECK(base == d && sz == len);
        HIP_OK(hipFree(d));
        CHECK_HIP(hipPointerGetAttributes(&a, d), hipErrorInvalidValue);
        free(h);
    }
    shared_bo_close(&x);
}

/* The buffer stays valid after hipDestroyExternalMemory; the fd is closed by destroy; the
 * producer's memory stays valid and its own after hipFree. */
TEST(interop_mem_lifetime_and_fd_ownership)
{
    const size_t n = 64 * KiB;
    struct producer p = producer_open(0);
    struct pbuf b = pbuf_alloc(&p, n, AMDGPU_GEM_DOMAIN_GTT);
    pat_fill(b.cpu, n, 5);
    int fd = pbuf_export(&b);
    hipExternalMemory_t m = import_mem(fd, n);
    CHECK(fd_open(fd));
    uint8_t *d = map_buf(m, 0, n);
    HIP_OK(hipDestroyExternalMemory(m));
    CHECKF(!fd_open(fd) && errno == EBADF, "hipDestroyExternalMemory must close the fd");
    CHECK_HIP(hipDestroyExternalMemory(m), hipErrorInvalidValue);
    check_dev_pattern(d, n, 5);
    HIP_OK(hipMemset(d, 0x77, n));
    CHECK_BYTES(b.cpu, n, 0x77);
    HIP_OK(hipFree(d));
    memset(b.cpu, 0x12, n); /* still the producer's */
    CHECK_BYTES(b.cpu, n, 0x12);
    /* failure: the fd is untouched */
    int fd2 = pbuf_export(&b);
    hipExternalMemoryHandleDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = hipExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = fd2;
    desc.size = n + 4096;
    hipExternalMemory_t m2 = NULL;
    CHECK_HIP(hipImportExternalMemory(&m2, &desc), hipErrorInvalidValue);
    CHECK(fd_open(fd2));
    close(fd2);
    pbuf_free(&b);
    producer_close(&p);
}

TEST(interop_mem_negative)
{
    const size_t n = 64 * KiB;
    struct producer p = producer_open(0);
    struct pbuf b = pbuf_alloc(&p, n, AMDGPU_GEM_DOMAIN_GTT);
    int fd = pbuf_export(&b);
    hipExternalMemoryHandleDesc d;
    hipExternalMemory_t m = NULL;
    memset(&d, 0, sizeof d);
    d.type = hipExternalMemoryHandleTypeOpaqueFd;
    d.handle.fd = fd;
    d.size = n;
    CHECK_HIP(hipImportExternalMemory(NULL, &d), hipErrorInvalidValue);
    CHECK_HIP(hipImportExternalMemory(&m, NULL), hipErrorInvalidValue);
    d.size = 0;
    CHECK_HIP(hipImportExternalMemory(&m, &d), hipErrorInvalidValue);
    d.size = n;
    d.flags = 2;
    CHECK_HIP(hipImportExternalMemory(&m, &d), hipErrorInvalidValue);
    d.flags = 0;
    int bad_types[3] = {-1, 0, 9};
    for (int i = 0; i < 3; i++) {
        d.type = (hipExternalMemoryHandleType)bad_types[i];
        CHECK_HIP(hipImportExternalMemory(&m, &d), hipErrorInvalidValue);
    }
    for (int t = 2; t <= 8; t++) {
        d.type = (hipExternalMemoryHandleType)t;
        CHECK_HIP(hipImportExternalMemory(&m, &d), hipErrorNotSupported);
    }
    d.type = hipExternalMemoryHandleTypeOpaqueFd;
    d.size = n + 1;
    CHECK_HIP(hipImportExternalMemory(&m, &d), hipErrorInvalidValue);
    /* not dma-bufs: a pipe, a plain memfd, a closed fd */
    int pp[2];
    REQUIRE(pipe(pp) == 0);
    int mfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
    REQUIRE(mfd >= 0 && ftruncate(mfd, n) == 0);
    int notbufs[3] = {pp[0], mfd, 1000};
    d.size = 4096;
    for (int i = 0; i < 3; i++) {
        d.handle.fd = notbufs[i];
        CHECK_HIP(hipImportExternalMemory(&m, &d), hipErrorInvalidValue);
    }
    CHECK(fd_open(pp[0]) && fd_open(mfd));
    d.handle.fd = fd;
    d.size = n;
    m = NULL;
    HIP_OK(hipImportExternalMemory(&m, &d));
    hipExternalMemoryBufferDesc bd;
    void *ptr = NULL;
    memset(&bd, 0, sizeof bd);
    bd.size = n;
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(NULL, m, &bd), hipErrorInvalidValue);
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, m, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, NULL, &bd), hipErrorInvalidValue);
    bd.flags = 1;
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, m, &bd), hipErrorInvalidValue);
    bd.flags = 0;
    bd.offset = 1;
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, m, &bd), hipErrorInvalidValue);
    bd.offset = 0;
    bd.size = 0;
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, m, &bd), hipErrorInvalidValue);
    bd.offset = ~0ull;
    bd.size = 2;
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, m, &bd), hipErrorInvalidValue);
    hipMipmappedArray_t mm = NULL;
    hipExternalMemoryMipmappedArrayDesc md;
    memset(&md, 0, sizeof md);
    CHECK_HIP(hipExternalMemoryGetMappedMipmappedArray(&mm, m, &md), hipErrorNotSupported);
    CHECK_HIP(hipExternalMemoryGetMappedMipmappedArray(NULL, m, &md), hipErrorInvalidValue);
    CHECK_HIP(hipDestroyExternalMemory(NULL), hipErrorInvalidValue);
    HIP_OK(hipDestroyExternalMemory(m));
    CHECK_HIP(hipExternalMemoryGetMappedBuffer(&ptr, m, &bd), hipErrorInvalidValue);
    close(pp[0]);
    close(pp[1]);
    close(mfd);
    pbuf_free(&b);
    producer_close(&p);
}

/* Peer copies out of imported memory: GPU 0's VRAM, read from GPU 1. */
TEST(interop_mem_peer_copy)
{
    REQUIRE_GPUS(2);
    const size_t n = 2 * MiB;
    struct shared_bo x = shared_bo_open(n, AMDGPU_GEM_DOMAIN_VRAM, 9);
    struct pbuf b = x.b;
    uint8_t *d = map_buf(x.m, 4096, n - 4096);
    hipPointerAttribute_t a;
    HIP_OK(hipPointerGetAttributes(&a, d));
    CHECK(a.device == 0);
    HIP_OK(hipSetDevice(1));
    void *d1 = NULL;
    HIP_OK(hipMalloc(&d1, n));
    HIP_OK(hipMemcpyPeer(d1, 1, d, 0, n - 4096));
    uint8_t *h = xmalloc(n);
    HIP_OK(hipMemcpy(h, d1, n - 4096, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, b.cpu + 4096, n - 4096) == 0);
    HIP_OK(hipMemset(d1, 0x3c, n));
    HIP_OK(hipMemcpy(d, d1, 4096, hipMemcpyDeviceToDevice));
    CHECK_BYTES(b.cpu + 4096, 4096, 0x3c);
    HIP_OK(hipFree(d1));
    HIP_OK(hipFree(d));
    free(h);
    shared_bo_close(&x);
}

/* A foreign dma-buf (udmabuf over a sealed memfd): system memory the GPUs reach. */
TEST(interop_mem_udmabuf)
{
    const size_t n = 128 * KiB;
    int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
    if (dev < 0)
        SKIP("no /dev/udmabuf");
    int mfd = memfd_create("interop-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    REQUIRE(mfd >= 0 && ftruncate(mfd, n) == 0);
    struct udmabuf_create c = {.memfd = (uint32_t)mfd, .flags = UDMABUF_FLAGS_CLOEXEC, .offset = 0, .size = n};
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &c) < 0 && errno == EINVAL); /* not sealed */
    REQUIRE(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
    c.offset = 100;
    CHECK(ioctl(dev, UDMABUF_CREATE, &c) < 0 && errno == EINVAL); /* not page aligned */
    c.offset = 0;
    int buf = ioctl(dev, UDMABUF_CREATE, &c);
    REQUIRE(buf >= 0);
    uint8_t *cpu = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    REQUIRE(cpu != MAP_FAILED);
    pat_fill(cpu, n, 17);
    hipExternalMemory_t m = import_mem(buf, n);
    uint8_t *d = map_buf(m, 8, n - 8);
    uint8_t *h = xmalloc(n);
    HIP_OK(hipMemcpy(h, d, n - 8, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, cpu + 8, n - 8) == 0);
    HIP_OK(hipMemset(d, 0xe1, 4096));
    CHECK_BYTES(cpu + 8, 4096, 0xe1);
    HIP_OK(hipFree(d));
    HIP_OK(hipDestroyExternalMemory(m));
    CHECK(!fd_open(buf));
    /* CREATE_LIST: two ranges of two memfds, back to back in the dma-buf */
    int mfd2 = memfd_create("interop-udmabuf-2", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    REQUIRE(mfd2 >= 0 && ftruncate(mfd2, n) == 0 && fcntl(mfd2, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
    uint8_t *cpu2 = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, mfd2, 0);
    REQUIRE(cpu2 != MAP_FAILED);
    pat_fill(cpu2, n, 18);
    struct {
        struct udmabuf_create_list h;
        struct udmabuf_create_item it[2];
    } l = {{UDMABUF_FLAGS_CLOEXEC, 2}, {{(uint32_t)mfd, 0, 4096, 8192}, {(uint32_t)mfd2, 0, 0, 16384}}};
    int lbuf = ioctl(dev, UDMABUF_CREATE_LIST, &l);
    REQUIRE(lbuf >= 0);
    CHECK(lseek(lbuf, 0, SEEK_END) == 8192 + 16384);
    m = import_mem(lbuf, 8192 + 16384);
    d = map_buf(m, 0, 8192 + 16384);
    HIP_OK(hipMemcpy(h, d, 8192 + 16384, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, cpu + 4096, 8192) == 0);
    CHECK(memcmp(h + 8192, cpu2, 16384) == 0);
    HIP_OK(hipFree(d));
    HIP_OK(hipDestroyExternalMemory(m));
    /* udmabuf.c's errnos */
    struct udmabuf_create e = {.memfd = 1000, .flags = 0, .offset = 0, .size = 4096};
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &e) < 0 && errno == EBADF);
    int pp[2];
    REQUIRE(pipe(pp) == 0);
    e.memfd = (uint32_t)pp[0];
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &e) < 0 && errno == EBADFD);
    e.memfd = (uint32_t)mfd;
    e.size = 0;
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &e) < 0 && errno == EINVAL);
    e.size = 2 * n;
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &e) < 0 && errno == EINVAL); /* past the end */
    e.size = 4096;
    int mfd3 = memfd_create("interop-udmabuf-3", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    REQUIRE(mfd3 >= 0 && ftruncate(mfd3, n) == 0);
    e.memfd = (uint32_t)mfd3;
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &e) < 0 && errno == EINVAL); /* no F_SEAL_SHRINK */
    REQUIRE(fcntl(mfd3, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_WRITE) == 0);
    errno = 0;
    CHECK(ioctl(dev, UDMABUF_CREATE, &e) < 0 && errno == EINVAL); /* F_SEAL_WRITE denied */
    close(mfd3);
    close(pp[0]);
    close(pp[1]);
    free(h);
    munmap(cpu, n);
    munmap(cpu2, n);
    close(mfd);
    close(mfd2);
    close(dev);
}

TEST(interop_sem_negative)
{
    struct producer p = producer_open(0);
    int fd = -1;
    uint32_t sh = psync_create(&p, &fd);
    hipExternalSemaphoreHandleDesc d;
    hipExternalSemaphore_t s = NULL;
    memset(&d, 0, sizeof d);
    d.type = hipExternalSemaphoreHandleTypeOpaqueFd;
    d.handle.fd = fd;
    CHECK_HIP(hipImportExternalSemaphore(NULL, &d), hipErrorInvalidValue);
    CHECK_HIP(hipImportExternalSemaphore(&s, NULL), hipErrorInvalidValue);
    d.type = (hipExternalSemaphoreHandleType)-1;
    CHECK_HIP(hipImportExternalSemaphore(&s, &d), hipErrorInvalidValue);
    d.type = (hipExternalSemaphoreHandleType)11;
    CHECK_HIP(hipImportExternalSemaphore(&s, &d), hipErrorInvalidValue);
    for (int t = 2; t <= 8; t++) {
        d.type = (hipExternalSemaphoreHandleType)t;
        CHECK_HIP(hipImportExternalSemaphore(&s, &d), hipErrorNotSupported);
    }
    d.type = hipExternalSemaphoreHandleTypeOpaqueFd;
    d.flags = 1;
    CHECK_HIP(hipImportExternalSemaphore(&s, &d), hipErrorInvalidValue);
    d.flags = 0;
    int mfd = memfd_create("not-a-syncobj", MFD_CLOEXEC);
    d.handle.fd = mfd;
    CHECK_HIP(hipImportExternalSemaphore(&s, &d), hipErrorInvalidValue);
    CHECK(fd_open(mfd));
    close(mfd);
    d.handle.fd = fd;
    HIP_OK(hipImportExternalSemaphore(&s, &d));
    hipExternalSemaphoreSignalParams sp;
    hipExternalSemaphoreWaitParams wp;
    memset(&sp, 0, sizeof sp);
    memset(&wp, 0, sizeof wp);
    CHECK_HIP(hipSignalExternalSemaphoresAsync(NULL, &sp, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipSignalExternalSemaphoresAsync(&s, NULL, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipWaitExternalSemaphoresAsync(NULL, &wp, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipWaitExternalSemaphoresAsync(&s, NULL, 1, NULL), hipErrorInvalidValue);
    sp.flags = 1;
    wp.flags = 1;
    CHECK_HIP(hipSignalExternalSemaphoresAsync(&s, &sp, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipWaitExternalSemaphoresAsync(&s, &wp, 1, NULL), hipErrorInvalidValue);
    sp.flags = 0;
    wp.flags = 0;
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    HIP_OK(hipStreamDestroy(st));
    CHECK_HIP(hipSignalExternalSemaphoresAsync(&s, &sp, 1, st), hipErrorInvalidValue);
    CHECK_HIP(hipWaitExternalSemaphoresAsync(&s, &wp, 1, st), hipErrorInvalidValue);
    /* nothing was queued by the refused calls: the syncobj was never signalled */
    usleep(10 * 1000);
    CHECK(psync_wait(&p, sh, 0, 0) != 0);
    CHECK_HIP(hipDestroyExternalSemaphore(NULL), hipErrorInvalidValue);
    HIP_OK(hipDestroyExternalSemaphore(s));
    CHECK(!fd_open(fd));
    CHECK_HIP(hipDestroyExternalSemaphore(s), hipErrorInvalidValue);
    CHECK_HIP(hipSignalExternalSemaphoresAsync(&s, &sp, 1, NULL), hipErrorInvalidValue);
    producer_close(&p);
}

/* A copy queued after a GPU-side wait on `s` (at `v`; 0 = binary) must not run before the
 * producer's signal; the host and another stream are not held meanwhile. */
static void wait_case(int timeline)
{
    const size_t n = 1 * MiB;
    struct producer p = producer_open(0);
    int sfd;
    uint32_t h = psync_create(&p, &sfd);
    hipExternalSemaphore_t s = import_sem(sfd, timeline);
    /* `other` is created 4 streams after `st`, so that it gets the same pool queue (the runtime
     * shares 4 SDMA queues per device round-robin): the wait must not hold it. */
    hipStream_t st, other, fill[3];
    HIP_OK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
    for (int i = 0; i < 3; i++)
        HIP_OK(hipStreamCreateWithFlags(&fill[i], hipStreamNonBlocking));
    HIP_OK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
    uint8_t *pinned, *d;
    HIP_OK(hipHostMalloc((void **)&pinned, n, 0));
    HIP_OK(hipMalloc((void **)&d, n));
    HIP_OK(hipMemset(d, 0, n));
    pat_fill(pinned, n, 2);
    double t0 = hc_now_ms();
    HIP_OK(sem_wait(s, 5, st));
    HIP_OK(hipMemcpyAsync(d, pinned, n, hipMemcpyHostToDevice, st));
    CHECKF(hc_now_ms() - t0 < 100, "the wait must not block the host (%.1f ms)", hc_now_ms() - t0);
    if (timeline)
        psync_signal(&p, h, 3); /* not enough */
    usleep(50 * 1000);
    CHECK_HIP(hipStreamQuery(st), hipErrorNotReady);
    /* another stream runs meanwhile */
    void *o = NULL;
    HIP_OK(hipMalloc(&o, n));
    HIP_OK(hipMemsetAsync(o, 1, n, other));
    double t1 = hc_now_ms();
    while (hipStreamQuery(other) == hipErrorNotReady && hc_now_ms() - t1 < 2000)
        usleep(1000);
    CHECKF(hipStreamQuery(other) == hipSuccess, "another stream is held by the external wait");
    check_dev_bytes(o, n, 1);
    uint8_t *h0 = xmalloc(n);
    HIP_OK(hipMemcpy(h0, d, 4096, hipMemcpyDeviceToHost));
    CHECK_BYTES(h0, 4096, 0);
    CHECK_HIP(hipStreamQuery(st), hipErrorNotReady);
    psync_signal(&p, h, timeline ? 5 : 0);
    HIP_OK(hipStreamSynchronize(st));
    check_dev_pattern(d, n, 2);
    if (!timeline)
        CHECKF(psync_wait(&p, h, 0, 0) != 0, "a binary wait consumes the signal");
    HIP_OK(hipDestroyExternalSemaphore(s));
    HIP_OK(hipStreamDestroy(st));
    HIP_OK(hipStreamDestroy(other));
    for (int i = 0; i < 3; i++)
        HIP_OK(hipStreamDestroy(fill[i]));
    HIP_OK(hipFree(o));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(pinned));
    free(h0);
    producer_close(&p);
}

TEST(interop_sem_binary_wait_on_gpu) { wait_case(0); }
TEST(interop_sem_timeline_wait_on_gpu) { wait_case(1); }

/* Signals come after the earlier work of the stream, not before. */
static void signal_case(int timeline)
{
    struct producer p = producer_open(0);
    int sfd;
    uint32_t h = psync_create(&p, &sfd);
    hipExternalSemaphore_t s = import_sem(sfd, timeline);
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    struct busy b = busy_begin();
    REQUIRE_BUSY(&b, st);
    HIP_OK(sem_signal(s, 7, st));
    int early = psync_wait(&p, h, timeline ? 7 : 0, 0) == 0;
    if (hipStreamQuery(st) == hipErrorNotReady)
        CHECKF(!early, "signalled before the stream's earlier work completed");
    CHECK(psync_wait(&p, h, timeline ? 7 : 0, 5000) == 0);
    /* the stream is done once its signal has been given (not necessarily at the same instant) */
    HIP_OK(hipStreamSynchronize(st));
    HIP_OK(hipStreamQuery(st));
    if (timeline)
        CHECK(psync_point(&p, h) == 7);
    busy_end(&b);
    HIP_OK(hipDestroyExternalSemaphore(s));
    HIP_OK(hipStreamDestroy(st));
    producer_close(&p);
}

TEST(interop_sem_binary_signal_after_work) { signal_case(0); }
TEST(interop_sem_timeline_signal_after_work) { signal_case(1); }

static atomic_int hold_released;

/* A host function that holds the completion thread until hold_released is set. */
static void hold_host_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&hold_released))
        usleep(1000);
}

/* A signal is an operation of its stream (CUDA): once hipStreamQuery says the stream is done, or
 * hipStreamSynchronize has returned, the semaphore has been signalled. Here the signal is held
 * back behind a host function of another stream (host functions and signals run one at a time on
 * the completion thread): the stream must not read as done meanwhile. (It did: the signal came
 * after the stream's fence only, so a process could synchronise, report the point reached, and
 * die before the signal was given; found by test_death_sync.c under the fault sweep.) */
TEST(interop_sem_signal_is_a_stream_operation)
{
    struct producer p = producer_open(0);
    int fd;
    uint32_t h = psync_create(&p, &fd);
    hipExternalSemaphore_t s = import_sem(fd, 1);
    hipStream_t a, b;
    HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    HIP_OK(hipLaunchHostFunc(a, hold_host_thread, NULL));
    HIP_OK(sem_signal(s, 3, b));
    usleep(20 * 1000);
    if (hipStreamQuery(b) == hipSuccess)
        CHECKF(psync_wait(&p, h, 3, 0) == 0, "the stream reads as done before its signal was given");
    CHECK(psync_point(&p, h) == 0);
    atomic_store(&hold_released, 1);
    HIP_OK(hipStreamSynchronize(b));
    CHECKF(psync_point(&p, h) == 3, "hipStreamSynchronize returned before the signal was given");
    HIP_OK(hipStreamSynchronize(a));
    HIP_OK(hipDestroyExternalSemaphore(s));
    HIP_OK(hipStreamDestroy(a));
    HIP_OK(hipStreamDestroy(b));
    producer_close(&p);
}

/* Several semaphores in one call, both directions. */
TEST(interop_sem_several_in_one_call)
{
    struct producer p = producer_open(0);
    int fds[3];
    uint32_t hs[3];
    hipExternalSemaphore_t s[3];
    for (int i = 0; i < 3; i++) {
        hs[i] = psync_create(&p, &fds[i]);
        s[i] = import_sem(fds[i], i != 2);
    }
    hipExternalSemaphoreWaitParams wp[3];
    hipExternalSemaphoreSignalParams sp[3];
    memset(wp, 0, sizeof wp);
    memset(sp, 0, sizeof sp);
    wp[0].params.fence.value = 2;
    wp[1].params.fence.value = 4;
    sp[0].params.fence.value = 10;
    sp[1].params.fence.value = 20;
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    HIP_OK(hipWaitExternalSemaphoresAsync(s, wp, 3, st));
    HIP_OK(hipSignalExternalSemaphoresAsync(s, sp, 3, st));
    psync_signal(&p, hs[0], 2);
    psync_signal(&p, hs[2], 0);
    usleep(30 * 1000);
    CHECK_HIP(hipStreamQuery(st), hipErrorNotReady);
    CHECK(psync_point(&p, hs[0]) == 2);
    psync_signal(&p, hs[1], 4);
    HIP_OK(hipStreamSynchronize(st));
    CHECK(psync_wait(&p, hs[0], 10, 5000) == 0);
    CHECK(psync_wait(&p, hs[1], 20, 5000) == 0);
    CHECK(psync_wait(&p, hs[2], 0, 5000) == 0);
    for (int i = 0; i < 3; i++)
        HIP_OK(hipDestroyExternalSemaphore(s[i]));
    HIP_OK(hipStreamDestroy(st));
    producer_close(&p);
}

/* Destroying a semaphore a stream still waits on releases the stream: no hang, no crash. */
TEST(interop_sem_destroy_while_waiting)
{
    struct producer p = producer_open(0);
    int fd;
    psync_create(&p, &fd);
    hipExternalSemaphore_t s = import_sem(fd, 1);
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    HIP_OK(sem_wait(s, 1, st));
    usleep(20 * 1000);
    CHECK_HIP(hipStreamQuery(st), hipErrorNotReady);
    HIP_OK(hipDestroyExternalSemaphore(s));
    double t0 = hc_now_ms();
    HIP_OK(hipStreamSynchronize(st));
    CHECK(hc_now_ms() - t0 < 2000);
    HIP_OK(hipStreamDestroy(st));
    producer_close(&p);
}

/* ---- a producer in another process ---- */

TEST(interop_producer_in_another_process)
{
    const size_t n = 512 * KiB;
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    fflush(stdout);
    pid_t pid = fork(); /* before the runtime initialises */
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        struct producer p = producer_open(0);
        struct pbuf b = pbuf_alloc(&p, n, AMDGPU_GEM_DOMAIN_VRAM);
        int fds[2];
        fds[0] = pbuf_export(&b);
        uint32_t h = psync_create(&p, &fds[1]);
        REQUIRE(fdpass_send(sv[1], fds, 2));
        close(fds[0]);
        close(fds[1]);
        usleep(30 * 1000); /* the consumer is waiting on the GPU by now */
        pat_fill(b.cpu, n, 41);
        psync_signal(&p, h, 1);
        REQUIRE(psync_wait(&p, h, 2, 10000) == 0); /* the consumer's answer */
        CHECK_BYTES(b.cpu, n, 0x42);
        pbuf_free(&b);
        producer_close(&p);
        hc_end_test();
    }
    close(sv[1]);
    int fds[2];
    REQUIRE(fdpass_recv(sv[0], fds, 2));
    hipExternalMemory_t m = import_mem(fds[0], n);
    hipExternalSemaphore_t s = import_sem(fds[1], 1);
    uint8_t *d = map_buf(m, 0, n);
    void *copy = NULL;
    HIP_OK(hipMalloc(&copy, n));
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    HIP_OK(sem_wait(s, 1, st));
    HIP_OK(hipMemcpyAsync(copy, d, n, hipMemcpyDeviceToDevice, st));
    HIP_OK(hipMemsetAsync(d, 0x42, n, st));
    HIP_OK(sem_signal(s, 2, st));
    HIP_OK(hipStreamSynchronize(st));
    check_dev_pattern(copy, n, 41);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "producer process failed (%#x)", status);
    HIP_OK(hipDestroyExternalSemaphore(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipDestroyExternalMemory(m));
    HIP_OK(hipFree(copy));
    HIP_OK(hipStreamDestroy(st));
    close(sv[0]);
}

/* ---- found by the fuzzer (reliability/fuzz.c) ---- */

/* A stream that waited on a binary semaphore signals it next: the signal must not be lost to the
 * reset that consumes the one waited for (the runtime reset it after releasing the stream, so a
 * signal queued in between was wiped out; the fuzzer's seed 1 on 2 GPUs, once in a few runs). */
TEST(interop_sem_binary_wait_then_signal_same)
{
    struct producer p = producer_open(0);
    int fd;
    uint32_t h = psync_create(&p, &fd);
    hipExternalSemaphore_t s = import_sem(fd, 0);
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    for (int i = 0; i < 200; i++) {
        HIP_OK(sem_wait(s, 0, st));
        psync_signal(&p, h, 0);
        HIP_OK(hipStreamSynchronize(st));
        HIP_OK(sem_signal(s, 0, st));
        HIP_OK(hipStreamSynchronize(st));
        REQUIREF(psync_wait(&p, h, 0, 5000) == 0, "iteration %d: the stream's signal was lost", i);
        REQUIRE(drmSyncobjReset(p.fd, &h, 1) == 0);
    }
    HIP_OK(hipDestroyExternalSemaphore(s));
    HIP_OK(hipStreamDestroy(st));
    producer_close(&p);
}

/* A copy into another device's memory, queued behind an external-semaphore wait, must not block
 * the host: the signal comes after the call returns (hipMemcpyAsync drained the stream on the host
 * first, which never ended; found by the fuzzer). The copy still sees the bytes of the signal. */
TEST(interop_sem_wait_then_copy_to_other_device)
{
    REQUIRE_GPUS(2);
    const size_t n = 256 * KiB;
    struct producer p = producer_open(0);
    int fd;
    uint32_t h = psync_create(&p, &fd);
    hipExternalSemaphore_t s = import_sem(fd, 1);
    uint8_t *pinned, *d1;
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipMalloc((void **)&d1, n));
    HIP_OK(hipMemset(d1, 0, n));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipHostMalloc((void **)&pinned, n, 0));
    memset(pinned, 0, n);
    hipStream_t st, other;
    HIP_OK(hipStreamCreate(&st));
    HIP_OK(hipStreamCreate(&other));
    HIP_OK(sem_wait(s, 1, st));
    HIP_OK(hipMemcpyAsync(d1, pinned, n, hipMemcpyHostToDevice, st));
    HIP_OK(hipMemsetAsync(d1, 0x11, 4096, st));
    pat_fill(pinned, n, 9); /* after the copy was queued, before the signal */
    HIP_OK(sem_signal(s, 1, other)); /* from another stream of the same device */
    HIP_OK(hipStreamSynchronize(st));
    CHECK(psync_point(&p, h) == 1);
    uint8_t *back = xmalloc(n);
    HIP_OK(hipMemcpy(back, d1, n, hipMemcpyDeviceToHost));
    CHECK_BYTES(back, 4096, 0x11);
    memset(pinned, 0x11, 4096);
    CHECK(memcmp(back, pinned, n) == 0);
    free(back);
    HIP_OK(hipStreamDestroy(st));
    HIP_OK(hipStreamDestroy(other));
    HIP_OK(hipDestroyExternalSemaphore(s));
    HIP_OK(hipFree(d1));
    HIP_OK(hipHostFree(pinned));
    producer_close(&p);
}
