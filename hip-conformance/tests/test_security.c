/*
 * Security (issue 13; threat model in ../README.md "Threat model"): a process that guesses or
 * forges IPC handles (random bytes, the right header with a random token, a real handle with
 * one byte changed, the handle of freed memory) or VMM shareable handles (closed or foreign
 * fds) gets an error and nothing else: no memory, no fd, no VRAM, and the exporter's data and
 * fd server are intact; raw garbage sent to an exporter's fd server changes nothing. An
 * importer cannot reach a byte outside the exported allocation through any API (copies of
 * every kind, memsets, 2D copies and memsets, peer copies, hipMemGetAddressRange,
 * hipPointerGetAttributes), including for a small hipMalloc that is a slot of a 2 MiB block
 * shared with neighbours. A read-only VMM mapping cannot be written by any API.
 */
#define _GNU_SOURCE
#include "common.h"
#include "proc.h"
#include "usage.h"
#include "../fdpass.h"
#include "../shared.h"

#include <sys/mman.h>
#include <sys/un.h>

#define SLOT 3000                     /* a small hipMalloc: a slot of a shared 2 MiB block */
#define BIG (2 * MiB + 3000)          /* a dedicated BO, rounded up past its end */

/* What the exporter expects to find in X and BIG at the end. */
struct expect {
    unsigned x, big;
};

/* The exporter: three neighbouring slots L, X, R (patterns 1, 2, 3), BIG (pattern 4) and a slot
 * after them (pattern 6); sends the handles of X, BIG and of a freed allocation. At the end
 * (message 1) it checks that L, R and the last slot are untouched and that X and BIG hold the
 * patterns of `arg` (a struct expect), then answers 2. */
static void exporter(int fd, void *arg)
{
    const struct expect *want = arg;
    HIP_OK(hipSetDevice(0));
    void *l = dev_pattern(SLOT, 1), *x = dev_pattern(SLOT, 2), *r = dev_pattern(SLOT, 3);
    void *big = dev_pattern(BIG, 4), *gone = dev_pattern(SLOT, 5), *after = dev_pattern(SLOT, 6);
    CHECKF((uintptr_t)l >> 21 == (uintptr_t)x >> 21 && (uintptr_t)x >> 21 == (uintptr_t)r >> 21,
           "L %p, X %p, R %p are not in one 2 MiB block: the neighbour checks prove less", l, x, r);
    hipIpcMemHandle_t h[3];
    HIP_OK(hipIpcGetMemHandle(&h[0], x));
    HIP_OK(hipIpcGetMemHandle(&h[1], big));
    HIP_OK(hipIpcGetMemHandle(&h[2], gone));
    HIP_OK(hipFree(gone));
    xsend(fd, h, sizeof h);
    CHECK(recv_u64(fd) == 1);
    check_dev_pattern(l, SLOT, 1);
    check_dev_pattern(r, SLOT, 3);
    check_dev_pattern(after, SLOT, 6);
    check_dev_pattern(x, SLOT, want->x);
    check_dev_pattern(big, BIG, want->big);
    void *all[] = {l, x, r, big, after};
    for (int i = 0; i < 5; i++)
        HIP_OK(hipFree(all[i]));
    send_u64(fd, 2);
}

static void fill_random(void *b, size_t n, unsigned *seed)
{
    uint8_t *p = b;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rand_r(seed) >> 7);
}

/* Opens h expecting a refusal: hipErrorInvalidValue (not a handle) or
 * hipErrorInvalidDevicePointer (a well-formed handle the exporter refuses). */
static void check_refused(hipIpcMemHandle_t h, const char *what, int i)
{
    void *p = (void *)0x1;
    hipError_t e = hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess);
    CHECKF(e == hipErrorInvalidValue || e == hipErrorInvalidDevicePointer, "%s %d: hipIpcOpenMemHandle gave %s",
           what, i, hipGetErrorName(e));
    if (e == hipSuccess)
        (void)hipIpcCloseMemHandle(p);
}

/* Sends `n` bytes as one request to the fd server of the exporter of handle h (abstract
 * socket "hipkfd-ipc-<instance hex>", src/share/ipc.rs) and returns whether an fd came back. */
static int raw_request(const hipIpcMemHandle_t *h, const void *req, size_t n)
{
    const uint8_t *b = (const uint8_t *)h;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "hipkfd-ipc-");
    for (int i = 8; i < 24; i++)
        len += snprintf(a.sun_path + 1 + len, sizeof a.sun_path - 1 - (size_t)len, "%02x", b[i]);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    REQUIRE(s >= 0);
    REQUIREF(connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) == 0,
             "connect to the exporter's fd server: %s", strerror(errno));
    int got_fd = 0;
    if (send(s, req, n, MSG_NOSIGNAL) == (ssize_t)n) {
        char reply[64], cbuf[CMSG_SPACE(sizeof(int) * 4)];
        struct iovec iov = {reply, sizeof reply};
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = cbuf;
        m.msg_controllen = sizeof cbuf;
        struct pollfd pf = {s, POLLIN, 0};
        if (poll(&pf, 1, 3000) == 1 && recvmsg(s, &m, MSG_CMSG_CLOEXEC) > 0)
            for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                    int fds[4];
                    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                    memcpy(fds, CMSG_DATA(c), k * sizeof(int));
                    for (size_t j = 0; j < k; j++)
                        close(fds[j]);
                    got_fd = 1;
                }
    }
    close(s);
    return got_fd;
}

TEST(security_forged_ipc_handles_get_nothing)
{
    static struct expect want = {12, 14}; /* written at the end, through the real handles */
    struct peer ex = spawn(exporter, &want);
    hipIpcMemHandle_t h[3];
    xrecv(ex.fd, h, sizeof h);
    importer_device();
    /* warm-up: one legitimate open (the connection to the exporter's server stays) */
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, h[0], hipIpcMemLazyEnablePeerAccess));
    HIP_OK(hipIpcCloseMemHandle(p));
    struct usage u0 = usage_now();
    int fds0 = fd_count();
    unsigned seed = 13;
    /* 1. random bytes */
    for (int i = 0; i < 2000; i++) {
        hipIpcMemHandle_t f;
        fill_random(&f, sizeof f, &seed);
        check_refused(f, "random handle", i);
    }
    /* 2. the real header (magic, kind, the live exporter's instance, size) with a random
     * token: what a process that watches /proc/net/unix could forge */
    for (int i = 0; i < 500; i++) {
        hipIpcMemHandle_t f = h[0];
        fill_random((uint8_t *)&f + 24, 16, &seed);
        check_refused(f, "random token", i);
    }
    /* 3. a real handle with one byte changed: refused, or (a changed offset inside the
     * allocation) exactly the exported allocation */
    void *base = NULL;
    for (int pos = 0; pos < 64; pos++)
        for (int bit = 0; bit < 8; bit += 7) {
            hipIpcMemHandle_t f = h[0];
            ((uint8_t *)&f)[pos] ^= (uint8_t)(1u << bit);
            void *q = NULL;
            hipError_t e = hipIpcOpenMemHandle(&q, f, hipIpcMemLazyEnablePeerAccess);
            if (e != hipSuccess) {
                CHECKF(e == hipErrorInvalidValue || e == hipErrorInvalidDevicePointer,
                       "byte %d bit %d changed: %s", pos, bit, hipGetErrorName(e));
                continue;
            }
            CHECKF(pos >= 48 && pos < 56, "byte %d bit %d changed: the handle still opened", pos, bit);
            hipDeviceptr_t b = NULL;
            size_t n = 0;
            HIP_OK(hipMemGetAddressRange(&b, &n, q));
            CHECKF(n == SLOT && (!base || b == base), "a changed offset opened %zu bytes at %p", n, b);
            base = b;
            HIP_OK(hipIpcCloseMemHandle(q));
        }
    /* 4. the handle of freed memory */
    CHECK_HIP(hipIpcOpenMemHandle(&p, h[2], hipIpcMemLazyEnablePeerAccess), hipErrorInvalidDevicePointer);
    /* 5. raw requests to the exporter's fd server: garbage, short, long, a random token */
    for (int i = 0; i < 200; i++) {
        uint8_t req[80];
        fill_random(req, sizeof req, &seed);
        if (i % 2)
            memcpy(req, &h[0], 8); /* the right magic and kind */
        CHECKF(!raw_request(&h[0], req, 1 + (size_t)i % sizeof req), "raw request %d got an fd", i);
    }
    /* a well-formed request (magic, kind, token: src/share/ipc.rs) for the freed allocation gets
     * nothing; the same for the live one gets its fd (the probe works) */
    uint8_t req[24];
    memcpy(req, &h[2], 8);
    memcpy(req + 8, (uint8_t *)&h[2] + 24, 16);
    CHECK(!raw_request(&h[2], req, sizeof req));
    memcpy(req, &h[0], 8);
    memcpy(req + 8, (uint8_t *)&h[0] + 24, 16);
    CHECK(raw_request(&h[0], req, sizeof req));
    /* nothing was imported, no fd or VRAM stayed */
    check_usage_back(u0);
    CHECKF(fd_count() == fds0, "fds: %d after, %d before", fd_count(), fds0);
    /* the exporter still serves its real handles, and its data is intact */
    HIP_OK(hipIpcOpenMemHandle(&p, h[0], hipIpcMemLazyEnablePeerAccess));
    check_dev_pattern(p, SLOT, 2);
    void *q = dev_pattern(SLOT, 12);
    HIP_OK(hipMemcpy(p, q, SLOT, hipMemcpyDeviceToDevice));
    HIP_OK(hipFree(q));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipIpcOpenMemHandle(&p, h[1], hipIpcMemLazyEnablePeerAccess));
    q = dev_pattern(BIG, 14);
    HIP_OK(hipMemcpy(p, q, BIG, hipMemcpyDeviceToDevice));
    HIP_OK(hipFree(q));
    HIP_OK(hipIpcCloseMemHandle(p));
    send_u64(ex.fd, 1);
    CHECK(recv_u64(ex.fd) == 2);
    join(&ex, "exporter");
}

/* ---- bounds ------------------------------------------------------------------------ */

/* Every copy API reading (write = 0) or writing (write = 1) the device range [q, q + len) on
 * device dev, the other side being the host buffer h or `local`, a device buffer of ours on
 * device ldev (each at least len bytes): each call fails with hipErrorInvalidValue. */
static void check_copies_refused(char *q, size_t len, int write, int dev, void *local, int ldev, void *h,
                                 hipStream_t s)
{
    hipError_t inv = hipErrorInvalidValue;
    void *dh = write ? (void *)q : h, *sh = write ? h : (void *)q;
    void *dd = write ? (void *)q : local, *sd = write ? local : (void *)q;
    int ddev = write ? dev : ldev, sdev = write ? ldev : dev;
    hipMemcpyKind kind = write ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost;
    CHECK_HIP(hipMemcpy(dh, sh, len, kind), inv);
    CHECK_HIP(hipMemcpy(dh, sh, len, hipMemcpyDefault), inv);
    CHECK_HIP(write ? hipMemcpyHtoD(q, h, len) : hipMemcpyDtoH(h, q, len), inv);
    CHECK_HIP(hipMemcpyAsync(dh, sh, len, kind, s), inv);
    CHECK_HIP(hipMemcpyWithStream(dh, sh, len, kind, s), inv);
    CHECK_HIP(hipMemcpy(dd, sd, len, hipMemcpyDeviceToDevice), inv);
    CHECK_HIP(hipMemcpyDtoD(dd, sd, len), inv);
    CHECK_HIP(hipMemcpyDtoDAsync(dd, sd, len, s), inv);
    CHECK_HIP(hipMemcpyPeer(dd, ddev, sd, sdev, len), inv);
    CHECK_HIP(hipMemcpyPeerAsync(dd, ddev, sd, sdev, len, s), inv);
    CHECK_HIP(hipMemcpy2D(dh, len, sh, len, len, 1, kind), inv);
    CHECK_HIP(hipMemcpy2DAsync(dd, len, sd, len, len, 1, hipMemcpyDeviceToDevice, s), inv);
    HIP_OK(hipStreamSynchronize(s));
}

/* Every API that writes [q, q + len): copies and memsets, each hipErrorInvalidValue. */
static void check_writes_refused(char *q, size_t len, int dev, void *local, int ldev, void *h, hipStream_t s)
{
    hipError_t inv = hipErrorInvalidValue;
    check_copies_refused(q, len, 1, dev, local, ldev, h, s);
    CHECK_HIP(hipMemset(q, 0xee, len), inv);
    CHECK_HIP(hipMemsetAsync(q, 0xee, len, s), inv);
    CHECK_HIP(hipMemsetD8(q, 0xee, len), inv);
    CHECK_HIP(hipMemsetD8Async(q, 0xee, len, s), inv);
    CHECK_HIP(hipMemset2D(q, len, 0xee, len, 1), inv);
    if (len % 4 == 0 && (uintptr_t)q % 4 == 0) {
        CHECK_HIP(hipMemsetD16(q, 0xeeee, len / 2), inv);
        CHECK_HIP(hipMemsetD32(q, (int)0xeeeeeeee, len / 4), inv);
    }
    HIP_OK(hipStreamSynchronize(s));
}

static void check_out_of_reach(char *q, size_t len, int dev, void *local, int ldev, void *h, hipStream_t s)
{
    check_copies_refused(q, len, 0, dev, local, ldev, h, s);
    check_writes_refused(q, len, dev, local, ldev, h, s);
}

/* The window [p, p + n) of an import: reads and writes inside it work, every API refuses a
 * range that leaves it by one byte on either side or starts right after it, and 2D copies and
 * memsets whose last row leaves it are refused; hipMemGetAddressRange and
 * hipPointerGetAttributes know exactly the window. */
static void probe_window(char *p, size_t n, int dev, unsigned seed)
{
    int ldev = hc_device_count() - 1 - dev; /* a peer device when there are two */
    if (ldev < 0)
        ldev = dev;
    void *local = NULL, *h = xmalloc(2 * n);
    hipStream_t s;
    HIP_OK(hipSetDevice(ldev));
    HIP_OK(hipMalloc(&local, 2 * n));
    HIP_OK(hipSetDevice(dev));
    HIP_OK(hipStreamCreate(&s));
    hipDeviceptr_t b = NULL;
    size_t sz = 0;
    HIP_OK(hipMemGetAddressRange(&b, &sz, p + n - 1));
    CHECKF(b == p && sz == n, "hipMemGetAddressRange: %p, %zu (window %p, %zu)", b, sz, p, n);
    CHECK_HIP(hipMemGetAddressRange(&b, &sz, p + n), hipErrorNotFound);
    CHECK_HIP(hipMemGetAddressRange(&b, &sz, p - 1), hipErrorNotFound);
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, p + n - 1));
    CHECK(at.device == dev || at.device == 0);
    CHECK_HIP(hipPointerGetAttributes(&at, p + n), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttributes(&at, p - 1), hipErrorInvalidValue);
    /* inside: works */
    HIP_OK(hipMemcpy(h, p, n, hipMemcpyDeviceToHost));
    CHECK_PATTERN(h, n, seed);
    HIP_OK(hipMemcpyPeer(local, ldev, p, dev, n));
    check_dev_pattern(local, n, seed);
    /* outside by one byte, either side; right after the end; twice the window */
    check_out_of_reach(p - 1, 1, dev, local, ldev, h, s);
    check_out_of_reach(p - 1, n, dev, local, ldev, h, s);
    check_out_of_reach(p + n - 1, 2, dev, local, ldev, h, s);
    check_out_of_reach(p + n, 1, dev, local, ldev, h, s);
    check_out_of_reach(p, n + 1, dev, local, ldev, h, s);
    check_out_of_reach(p, 2 * n, dev, local, ldev, h, s);
    /* 2D: rows inside, the pitch walks the last row out */
    hipError_t inv = hipErrorInvalidValue;
    size_t pitch = n - 8;
    CHECK_HIP(hipMemcpy2D(h, 16, p, pitch, 16, 2, hipMemcpyDeviceToHost), inv);
    CHECK_HIP(hipMemcpy2D(p, pitch, h, 16, 16, 2, hipMemcpyHostToDevice), inv);
    CHECK_HIP(hipMemcpy2D(local, 16, p, pitch, 16, 2, hipMemcpyDeviceToDevice), inv);
    CHECK_HIP(hipMemcpy2DAsync(p, pitch, local, 16, 16, 2, hipMemcpyDeviceToDevice, s), inv);
    CHECK_HIP(hipMemset2D(p, pitch, 0xee, 16, 2), inv);
    CHECK_HIP(hipMemset2DAsync(p, pitch, 0xee, 16, 2, s), inv);
    /* D16/D32 memsets one element too many */
    CHECK_HIP(hipMemsetD16(p, 0xeeee, n / 2 + 1), inv);
    CHECK_HIP(hipMemsetD32(p, 0xeeeeeeee, n / 4 + 1), inv);
    HIP_OK(hipStreamSynchronize(s));
    /* nothing changed inside */
    HIP_OK(hipMemcpy(h, p, n, hipMemcpyDeviceToHost));
    CHECK_PATTERN(h, n, seed);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(local));
    free(h);
}

TEST(security_importer_cannot_reach_outside_the_allocation)
{
    static struct expect want = {2, 4}; /* every write out of reach failed: all unchanged */
    struct peer ex = spawn(exporter, &want);
    hipIpcMemHandle_t h[3];
    xrecv(ex.fd, h, sizeof h);
    int dev = importer_device();
    void *x = NULL, *big = NULL;
    HIP_OK(hipIpcOpenMemHandle(&x, h[0], hipIpcMemLazyEnablePeerAccess));
    HIP_OK(hipIpcOpenMemHandle(&big, h[1], hipIpcMemLazyEnablePeerAccess));
    probe_window(x, SLOT, dev, 2);
    probe_window(big, BIG, dev, 4);
    HIP_OK(hipIpcCloseMemHandle(x));
    HIP_OK(hipIpcCloseMemHandle(big));
    /* a closed import is out of reach altogether */
    uint8_t b[16];
    CHECK_HIP(hipMemcpy(b, x, 16, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    CHECK_HIP(hipMemset(big, 0, 16), hipErrorInvalidValue);
    send_u64(ex.fd, 1);
    CHECK(recv_u64(ex.fd) == 2);
    join(&ex, "exporter");
}

/* ---- VMM ----------------------------------------------------------------------------- */

static void check_read_only(char *va, size_t n, int dev, const char *what)
{
    int ldev = hc_device_count() - 1 - dev;
    if (ldev < 0)
        ldev = dev;
    void *local = NULL, *h = xmalloc(n);
    hipStream_t s;
    HIP_OK(hipSetDevice(ldev));
    HIP_OK(hipMalloc(&local, n));
    HIP_OK(hipMemset(local, 0xee, n));
    HIP_OK(hipSetDevice(dev));
    HIP_OK(hipStreamCreate(&s));
    memset(h, 0xee, n);
    size_t sizes[] = {n, 1, 4096};
    for (int i = 0; i < 3; i++)
        check_writes_refused(va + n - sizes[i], sizes[i], dev, local, ldev, h, s);
    HIP_OK(hipStreamSynchronize(s));
    /* reads work */
    HIP_OK(hipMemcpy(h, va, n, hipMemcpyDeviceToHost));
    CHECKF(pat_mismatch(h, n, 41) == n, "%s: the read-only memory changed", what);
    HIP_OK(hipMemcpyPeer(local, ldev, va, dev, n));
    check_dev_pattern(local, n, 41);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(local));
    free(h);
}

#define CHUNK (2 * MiB)

/* Maps chunk hd (CHUNK bytes of device 0) at a fresh VA with `f` access for device 0 and every
 * device that can reach its memory (on PCIe without P2P, hipMemSetAccess refuses the others). */
static void *map_chunk(hipMemGenericAllocationHandle_t hd, hipMemAccessFlags f)
{
    void *va = NULL;
    HIP_OK(hipMemAddressReserve(&va, CHUNK, 0, NULL, 0));
    HIP_OK(hipMemMap(va, CHUNK, 0, hd, 0));
    int ndev = hc_device_count();
    hipMemAccessDesc acc[8];
    size_t n = 0;
    for (int i = 0; i < ndev && i < 8; i++) {
        int can = i == 0;
        if (!can)
            HIP_OK(hipDeviceCanAccessPeer(&can, i, 0));
        if (can)
            acc[n++] = vmm_access_desc(i, f);
    }
    HIP_OK(hipMemSetAccess(va, CHUNK, acc, n));
    return va;
}

static void unmap_chunk(void *va, hipMemGenericAllocationHandle_t hd)
{
    HIP_OK(hipMemUnmap(va, CHUNK));
    HIP_OK(hipMemAddressFree(va, CHUNK));
    HIP_OK(hipMemRelease(hd));
}

/* A chunk on device 0 holding pattern 41, mapped read-write at *va. */
static hipMemGenericAllocationHandle_t chunk_with_pattern(void **va)
{
    hipMemAllocationProp prop = vmm_device_prop(0);
    hipMemGenericAllocationHandle_t hd = NULL;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemCreate(&hd, CHUNK, &prop, 0));
    *va = map_chunk(hd, hipMemAccessFlagsProtReadWrite);
    void *h = xmalloc(CHUNK);
    pat_fill(h, CHUNK, 41);
    HIP_OK(hipMemcpy(*va, h, CHUNK, hipMemcpyHostToDevice));
    free(h);
    return hd;
}

/* The owner of a chunk (pattern 41) maps it read-only: no API writes it. */
TEST(security_read_only_vmm_mapping_not_writable)
{
    void *rw = NULL;
    hipMemGenericAllocationHandle_t hd = chunk_with_pattern(&rw);
    HIP_OK(hipMemRetainAllocationHandle(&hd, rw)); /* a second reference for the second VA */
    void *ro = map_chunk(hd, hipMemAccessFlagsProtRead);
    check_read_only(ro, CHUNK, 0, "read-only for every device");
    unmap_chunk(ro, hd);
    unmap_chunk(rw, hd);
}

/* A chunk shared as a dma-buf fd and mapped read-only by the importer: no API of the importer
 * writes it; the owner's data is intact. A closed or foreign fd imports nothing. */
static void ro_owner(int fd, void *arg)
{
    (void)arg;
    void *va = NULL;
    hipMemGenericAllocationHandle_t hd = chunk_with_pattern(&va);
    int dmabuf = -1;
    HIP_OK(hipMemExportToShareableHandle(&dmabuf, hd, hipMemHandleTypePosixFileDescriptor, 0));
    REQUIRE(fdpass_send(fd, &dmabuf, 1));
    close(dmabuf);
    CHECK(recv_u64(fd) == 1);
    check_dev_pattern(va, CHUNK, 41);
    unmap_chunk(va, hd);
    send_u64(fd, 2);
}

TEST(security_read_only_vmm_import_not_writable)
{
    struct peer ow = spawn(ro_owner, NULL);
    int dmabuf = -1;
    REQUIRE(fdpass_recv(ow.fd, &dmabuf, 1));
    HIP_OK(hipSetDevice(0)); /* the chunk's device: every topology lets it map the chunk */
    hipMemGenericAllocationHandle_t hd = NULL;
    HIP_OK(hipMemImportFromShareableHandle(&hd, (void *)(uintptr_t)dmabuf, hipMemHandleTypePosixFileDescriptor));
    void *va = map_chunk(hd, hipMemAccessFlagsProtRead);
    check_read_only(va, CHUNK, 0, "imported read-only");
    unmap_chunk(va, hd);
    /* the fd closed: its number imports nothing (nor does our own /dev/kfd fd or a memfd) */
    close(dmabuf);
    hipMemGenericAllocationHandle_t x = NULL;
    CHECK_HIP(hipMemImportFromShareableHandle(&x, (void *)(uintptr_t)dmabuf, hipMemHandleTypePosixFileDescriptor),
              hipErrorInvalidValue);
    int mfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
    REQUIRE(mfd >= 0 && ftruncate(mfd, (off_t)CHUNK) == 0);
    CHECK_HIP(hipMemImportFromShareableHandle(&x, (void *)(uintptr_t)mfd, hipMemHandleTypePosixFileDescriptor),
              hipErrorInvalidValue);
    close(mfd);
    for (int f = 0; f < 64; f++) {
        char path[64], target[128];
        snprintf(path, sizeof path, "/proc/self/fd/%d", f);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = 0;
        if (strncmp(target, "/dev/", 5) != 0)
            continue;
        CHECK_HIP(hipMemImportFromShareableHandle(&x, (void *)(uintptr_t)f, hipMemHandleTypePosixFileDescriptor),
                  hipErrorInvalidValue);
    }
    send_u64(ow.fd, 1);
    CHECK(recv_u64(ow.fd) == 2);
    join(&ow, "owner");
}
