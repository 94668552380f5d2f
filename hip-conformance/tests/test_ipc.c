/*
 * IPC: hipIpcGetMemHandle, hipIpcOpenMemHandle, hipIpcCloseMemHandle,
 * hipIpcGetEventHandle, hipIpcOpenEventHandle.
 *
 * Expected codes: hip-tests catch/unit/device/{hipIpcGetMemHandle,
 * hipIpcOpenMemHandle,hipIpcCloseMemHandle}.cc, multiproc/{hipIpcMemAccessTest,
 * hipIpcEventHandle}.cc, event/Unit_hipEventIpc.cc (matrix in
 * hip-tests-abi-issues.md §A.7), and the "beat stock ROCm" items.
 *
 * Every multi-process test forks its exporter and importer(s) BEFORE any HIP
 * call in the test process (the runner itself never calls HIP); each process
 * initialises the runtime on its own. Processes talk over a socketpair
 * (handles travel by value, as bytes). The importer uses the last device, so
 * with 2 GPUs it is on a different device than the exporter (device 0).
 */
#define _GNU_SOURCE
#include "common.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- process plumbing ------------------------------------------------------ */

/* Device count, found by a throw-away child so that this process stays
 * uninitialised. */
static int ipc_gpu_count(void)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int n = 0;
        if (hipGetDeviceCount(&n) != hipSuccess)
            n = 0;
        _exit(n);
    }
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Number of entries in /proc/self/fd. */
/* ---- single-process checks (the §A.7 matrix) ------------------------------- */

TEST(hipIpcGetMemHandle_negative)
{
    hipIpcMemHandle_t h;
    void *p = NULL, *hp = NULL;
    HIP_OK(hipMalloc(&p, 1024));
    CHECK_HIP(hipIpcGetMemHandle(NULL, p), hipErrorInvalidValue);
    CHECK_HIP(hipIpcGetMemHandle(&h, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipIpcGetMemHandle(NULL, NULL), hipErrorInvalidValue);
    /* one past the end */
    CHECK_HIP(hipIpcGetMemHandle(&h, (char *)p + 1024), hipErrorInvalidValue);
    /* host memory: neither hipHostMalloc nor pageable */
    HIP_OK(hipHostMalloc(&hp, 4096, 0));
    CHECK_HIP(hipIpcGetMemHandle(&h, hp), hipErrorInvalidValue);
    CHECK_HIP(hipIpcGetMemHandle(&h, &h), hipErrorInvalidValue);
    HIP_OK(hipHostFree(hp));
    /* last byte is fine */
    CHECK_HIP(hipIpcGetMemHandle(&h, (char *)p + 1023), hipSuccess);
    HIP_OK(hipFree(p));
    /* freed */
    CHECK_HIP(hipIpcGetMemHandle(&h, p), hipErrorInvalidValue);
}

TEST(hipIpcGetMemHandle_unique_handles)
{
    hipIpcMemHandle_t h1, h2, h1b, hi;
    void *a = NULL, *b = NULL;
    HIP_OK(hipMalloc(&a, 1024));
    HIP_OK(hipMalloc(&b, 1024));
    HIP_OK(hipIpcGetMemHandle(&h1, a));
    HIP_OK(hipIpcGetMemHandle(&h2, b));
    CHECK(memcmp(&h1, &h2, sizeof h1) != 0);
    /* the same pointer gives the same handle; an interior pointer another */
    HIP_OK(hipIpcGetMemHandle(&h1b, a));
    CHECK(memcmp(&h1, &h1b, sizeof h1) == 0);
    HIP_OK(hipIpcGetMemHandle(&hi, (char *)a + 100));
    CHECK(memcmp(&h1, &hi, sizeof h1) != 0);
    HIP_OK(hipFree(b));

    /* Recycled VA: hip-tests ..._Unique_Handles_Reused_Memory, and until it
     * is actually reused. */
    int reused = 0;
    for (int i = 0; i < 16 && !reused; i++) {
        void *old = a;
        hipIpcMemHandle_t ho, hn;
        HIP_OK(hipIpcGetMemHandle(&ho, old));
        HIP_OK(hipFree(old));
        HIP_OK(hipMalloc(&a, 1024));
        HIP_OK(hipIpcGetMemHandle(&hn, a));
        if (a == old) {
            reused = 1;
            CHECKF(memcmp(&ho, &hn, sizeof ho) != 0, "same handle for a new allocation at a recycled VA");
        }
    }
    CHECKF(reused, "the VA was never recycled: the test proved nothing");
    HIP_OK(hipFree(a));
}

TEST(hipIpcOpenMemHandle_negative_same_process)
{
    hipIpcMemHandle_t h;
    void *p = NULL, *q = (void *)0x1;
    HIP_OK(hipMalloc(&p, 4096));
    HIP_OK(hipIpcGetMemHandle(&h, p));
    CHECK_HIP(hipIpcOpenMemHandle(NULL, h, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
    /* flags are checked before the same-process check (AMD) */
    CHECK_HIP(hipIpcOpenMemHandle(&q, h, 123), hipErrorInvalidValue);
    CHECK_HIP(hipIpcOpenMemHandle(&q, h, 2), hipErrorInvalidValue);
    CHECK_HIP(hipIpcOpenMemHandle(&q, h, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidContext);
    CHECK_HIP(hipIpcOpenMemHandle(&q, h, 0), hipErrorInvalidContext);
    /* garbage and zeroed handles */
    hipIpcMemHandle_t junk;
    memset(&junk, 0, sizeof junk);
    CHECK_HIP(hipIpcOpenMemHandle(&q, junk, 1), hipErrorInvalidValue);
    for (size_t i = 0; i < sizeof junk; i++)
        ((unsigned char *)&junk)[i] = (unsigned char)(i * 37 + 11);
    hipError_t e = hipIpcOpenMemHandle(&q, junk, 1);
    CHECKF(e == hipErrorInvalidValue || e == hipErrorInvalidDevicePointer, "garbage handle: %s",
           hipGetErrorName(e));
    /* closing what was not imported */
    CHECK_HIP(hipIpcCloseMemHandle(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipIpcCloseMemHandle(p), hipErrorInvalidValue);
    CHECK_HIP(hipIpcCloseMemHandle(&h), hipErrorInvalidValue);
    /* the exporter's memory is untouched by all this */
    HIP_OK(hipMemset(p, 0x5a, 4096));
    check_dev_bytes(p, 4096, 0x5a);
    HIP_OK(hipFree(p));
}

TEST(hipIpcEventHandle_negative_same_process)
{
    hipIpcEventHandle_t h;
    hipEvent_t ipc_ev = NULL, plain = NULL, timed = NULL, opened = NULL;
    HIP_OK(hipEventCreateWithFlags(&ipc_ev, hipEventInterprocess | hipEventDisableTiming));
    HIP_OK(hipEventCreateWithFlags(&plain, hipEventDisableTiming));
    HIP_OK(hipEventCreate(&timed));
    CHECK_HIP(hipIpcGetEventHandle(NULL, ipc_ev), hipErrorInvalidValue);
    CHECK_HIP(hipIpcGetEventHandle(&h, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipIpcGetEventHandle(NULL, NULL), hipErrorInvalidValue);
    hipError_t e = hipIpcGetEventHandle(&h, plain);
    CHECKF(e == hipErrorInvalidConfiguration || e == hipErrorInvalidResourceHandle,
           "event without hipEventInterprocess: %s", hipGetErrorName(e));
    e = hipIpcGetEventHandle(&h, timed);
    CHECKF(e == hipErrorInvalidConfiguration || e == hipErrorInvalidResourceHandle,
           "event with timing: %s", hipGetErrorName(e));
    HIP_OK(hipIpcGetEventHandle(&h, ipc_ev));
    CHECK_HIP(hipIpcOpenEventHandle(NULL, h), hipErrorInvalidValue);
    CHECK_HIP(hipIpcOpenEventHandle(&opened, h), hipErrorInvalidContext);
    hipIpcEventHandle_t zero;
    memset(&zero, 0, sizeof zero);
    e = hipIpcOpenEventHandle(&opened, zero);
    CHECKF(e == hipErrorInvalidValue || e == hipErrorMapFailed, "zeroed handle: %s", hipGetErrorName(e));
    /* Unit_hipEventIpc: timing is disabled on IPC events */
    float ms = 0;
    HIP_OK(hipEventRecord(ipc_ev, NULL));
    HIP_OK(hipEventSynchronize(ipc_ev));
    CHECK_HIP(hipEventQuery(ipc_ev), hipSuccess);
    CHECK(hipEventElapsedTime(&ms, ipc_ev, ipc_ev) != hipSuccess);
    HIP_OK(hipEventDestroy(ipc_ev));
    HIP_OK(hipEventDestroy(plain));
    HIP_OK(hipEventDestroy(timed));
}

/* ---- memory round trips ------------------------------------------------------ */

#define RT_SIZE (3 * MiB + 4096 + 100) /* not a page or 2 MiB multiple */

struct rt_arg {
    unsigned flags;
};

static void rt_importer(int fd, void *arg)
{
    struct rt_arg *a = arg;
    hipIpcMemHandle_t h;
    xrecv(fd, &h, sizeof h);
    int dev = importer_device();
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, h, a->flags));
    REQUIRE(p != NULL);
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, p));
    CHECK(at.type == hipMemoryTypeDevice);
    CHECK(at.devicePointer == p);
    void *base = NULL;
    size_t size = 0;
    HIP_OK(hipMemGetAddressRange(&base, &size, p));
    CHECK(base == p && size == RT_SIZE);
    /* read it directly (D2H) and through a D2D copy to our own device */
    check_dev_pattern(p, RT_SIZE, 11);
    void *mine = NULL;
    HIP_OK(hipMalloc(&mine, RT_SIZE));
    HIP_OK(hipMemcpy(mine, p, RT_SIZE, hipMemcpyDeviceToDevice));
    check_dev_pattern(mine, RT_SIZE, 11);
    /* write back: from our device's memory into the exporter's */
    void *h2 = xmalloc(RT_SIZE);
    pat_fill(h2, RT_SIZE, 12);
    HIP_OK(hipMemcpy(mine, h2, RT_SIZE, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(p, mine, RT_SIZE, hipMemcpyDeviceToDevice));
    HIP_OK(hipMemset((char *)p + RT_SIZE - 100, 0xee, 100));
    HIP_OK(hipDeviceSynchronize());
    (void)dev;
    send_u64(fd, 1);
    (void)recv_u64(fd); /* exporter verified */
    HIP_OK(hipIpcCloseMemHandle(p));
    CHECK_HIP(hipPointerGetAttributes(&at, p), hipErrorInvalidValue);
    HIP_OK(hipFree(mine));
    free(h2);
}

static void roundtrip(unsigned flags)
{
    struct rt_arg a = {flags};
    struct peer imp = spawn(rt_importer, &a);
    void *p = dev_pattern(RT_SIZE, 11);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    xsend(imp.fd, &h, sizeof h);
    CHECK(recv_u64(imp.fd) == 1);
    void *host = xmalloc(RT_SIZE);
    HIP_OK(hipMemcpy(host, p, RT_SIZE, hipMemcpyDeviceToHost));
    CHECK_PATTERN(host, RT_SIZE - 100, 12);
    CHECK_BYTES((char *)host + RT_SIZE - 100, 100, 0xee);
    send_u64(imp.fd, 2);
    join(&imp, "importer");
    free(host);
    HIP_OK(hipFree(p));
}

TEST(hipIpcMem_roundtrip_lazy_flag)
{
    roundtrip(hipIpcMemLazyEnablePeerAccess);
}

/* flags == 0: hipIpcMemLazyEnablePeerAccess in the ROCm <= 5.7 headers */
TEST(hipIpcMem_roundtrip_legacy_flag0)
{
    roundtrip(0);
}

/* Every exporter device x importer device (hipIpcMemAccess_Semaphores): D2H,
 * D2D to every device, and writes from every device. */
static void any_importer(int fd, void *arg)
{
    (void)arg;
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    for (int round = 0; round < n * n; round++) {
        hipIpcMemHandle_t h;
        xrecv(fd, &h, sizeof h);
        int idev = round % n;
        HIP_OK(hipSetDevice(idev));
        void *p = NULL;
        HIP_OK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
        check_dev_pattern(p, 1 * MiB, 20 + round);
        for (int d = 0; d < n; d++) {
            HIP_OK(hipSetDevice(d));
            void *mine = NULL;
            HIP_OK(hipMalloc(&mine, 1 * MiB));
            HIP_OK(hipMemcpy(mine, p, 1 * MiB, hipMemcpyDeviceToDevice));
            check_dev_pattern(mine, 1 * MiB, 20 + round);
            HIP_OK(hipFree(mine));
        }
        /* the last device writes a new pattern into the exporter's memory */
        void *src = dev_pattern(1 * MiB, 100 + round);
        HIP_OK(hipMemcpy(p, src, 1 * MiB, hipMemcpyDeviceToDevice));
        HIP_OK(hipFree(src));
        HIP_OK(hipSetDevice(idev));
        HIP_OK(hipIpcCloseMemHandle(p));
        send_u64(fd, 1);
    }
}

TEST(hipIpcMem_any_device)
{
    struct peer imp = spawn(any_importer, NULL);
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    for (int round = 0; round < n * n; round++) {
        HIP_OK(hipSetDevice(round / n));
        void *p = dev_pattern(1 * MiB, 20 + round);
        hipIpcMemHandle_t h;
        HIP_OK(hipIpcGetMemHandle(&h, p));
        xsend(imp.fd, &h, sizeof h);
        CHECK(recv_u64(imp.fd) == 1);
        check_dev_pattern(p, 1 * MiB, 100 + round);
        HIP_OK(hipFree(p));
    }
    join(&imp, "importer");
}

/* ---- interior pointers and reference counting ------------------------------- */

#define IN_SIZE (4 * MiB)
#define IN_OFF (1 * MiB + 4096 + 123)

static void interior_importer(int fd, void *arg)
{
    (void)arg;
    hipIpcMemHandle_t hb, hi;
    xrecv(fd, &hb, sizeof hb);
    xrecv(fd, &hi, sizeof hi);
    importer_device();
    void *pi = NULL, *pb = NULL, *pi2 = NULL, *pb2 = NULL;
    HIP_OK(hipIpcOpenMemHandle(&pi, hi, 1));
    /* the interior handle opens to base + offset, with the bytes that are there */
    void *base = NULL;
    size_t size = 0;
    HIP_OK(hipMemGetAddressRange(&base, &size, pi));
    CHECK((char *)pi - (char *)base == IN_OFF);
    CHECK(size == IN_SIZE);
    uint8_t *host = xmalloc(IN_SIZE);
    HIP_OK(hipMemcpy(host, pi, IN_SIZE - IN_OFF, hipMemcpyDeviceToHost));
    uint8_t *want = xmalloc(IN_SIZE);
    pat_fill(want, IN_SIZE, 30);
    CHECKF(memcmp(host, want + IN_OFF, IN_SIZE - IN_OFF) == 0, "interior pointer does not show the bytes at its offset");
    /* base handle: same import, base pointer; repeated opens: same pointers */
    HIP_OK(hipIpcOpenMemHandle(&pb, hb, 1));
    CHECK(pb == base);
    HIP_OK(hipIpcOpenMemHandle(&pi2, hi, 1));
    HIP_OK(hipIpcOpenMemHandle(&pb2, hb, 0));
    CHECK(pi2 == pi);
    CHECK(pb2 == pb);
    hipPointerAttribute_t at;
    /* 4 references: the memory stays until the last close */
    HIP_OK(hipIpcCloseMemHandle(pi));
    HIP_OK(hipPointerGetAttributes(&at, pi));
    HIP_OK(hipIpcCloseMemHandle(pb));
    HIP_OK(hipPointerGetAttributes(&at, pb));
    check_dev_pattern(pb, IN_SIZE, 30);
    HIP_OK(hipIpcCloseMemHandle(pi2));
    HIP_OK(hipPointerGetAttributes(&at, pb));
    /* an interior pointer that was never returned by open cannot be closed */
    CHECK_HIP(hipIpcCloseMemHandle((char *)pb + 8), hipErrorInvalidValue);
    /* hipFree does not free imported memory */
    CHECK_HIP(hipFree(pb), hipErrorInvalidValue);
    HIP_OK(hipIpcCloseMemHandle(pb2));
    CHECK_HIP(hipPointerGetAttributes(&at, pb), hipErrorInvalidValue);
    CHECK_HIP(hipPointerGetAttributes(&at, pi), hipErrorInvalidValue);
    CHECK_HIP(hipIpcCloseMemHandle(pb), hipErrorInvalidValue);
    /* reopening after the last close maps it again */
    void *again = NULL;
    HIP_OK(hipIpcOpenMemHandle(&again, hi, 1));
    HIP_OK(hipMemcpy(host, again, IN_SIZE - IN_OFF, hipMemcpyDeviceToHost));
    CHECK(memcmp(host, want + IN_OFF, IN_SIZE - IN_OFF) == 0);
    HIP_OK(hipIpcCloseMemHandle(again));
    free(host);
    free(want);
    send_u64(fd, 1);
}

TEST(hipIpcMem_interior_pointer_and_refcount)
{
    struct peer imp = spawn(interior_importer, NULL);
    void *p = dev_pattern(IN_SIZE, 30);
    hipIpcMemHandle_t hb, hi;
    HIP_OK(hipIpcGetMemHandle(&hb, p));
    HIP_OK(hipIpcGetMemHandle(&hi, (char *)p + IN_OFF));
    xsend(imp.fd, &hb, sizeof hb);
    xsend(imp.fd, &hi, sizeof hi);
    CHECK(recv_u64(imp.fd) == 1);
    join(&imp, "importer");
    /* the exporter's pointer is unaffected */
    hipPointerAttribute_t at;
    HIP_OK(hipPointerGetAttributes(&at, p));
    check_dev_pattern(p, IN_SIZE, 30);
    HIP_OK(hipFree(p));
}

/* ---- forged, stale and dead ------------------------------------------------- */

/* Opens `h`, expecting a failure within 1 s. */
static void expect_refused(hipIpcMemHandle_t h, const char *what)
{
    void *p = NULL;
    double t0 = hc_now_ms();
    hipError_t e = hipIpcOpenMemHandle(&p, h, 1);
    double dt = hc_now_ms() - t0;
    CHECKF(e == hipErrorInvalidDevicePointer || e == hipErrorInvalidValue, "%s: open returned %s", what,
           hipGetErrorName(e));
    CHECKF(dt < 1000.0, "%s: open took %.0f ms", what, dt);
    if (e == hipSuccess)
        hipIpcCloseMemHandle(p);
}

static void stale_importer(int fd, void *arg)
{
    (void)arg;
    hipIpcMemHandle_t h, hfree;
    xrecv(fd, &h, sizeof h);
    xrecv(fd, &hfree, sizeof hfree);
    importer_device();
    /* forged: a flipped bit in the token (bytes 24..40), in the instance id
     * (8..24), or another size */
    hipIpcMemHandle_t f = h;
    ((unsigned char *)&f)[30] ^= 0x10;
    expect_refused(f, "forged token");
    f = h;
    ((unsigned char *)&f)[12] ^= 0x01;
    expect_refused(f, "unknown exporter");
    f = h;
    ((unsigned char *)&f)[41] ^= 0x01;
    expect_refused(f, "wrong size");
    /* the genuine handle works; opened memory outlives the exporter's hipFree */
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, hfree, 1));
    send_u64(fd, 1); /* exporter frees both buffers now */
    CHECK(recv_u64(fd) == 2);
    /* stale: the other buffer was freed before we opened it */
    expect_refused(h, "freed allocation");
    check_dev_pattern(p, 1 * MiB, 41);
    HIP_OK(hipMemset(p, 0x77, 1 * MiB));
    check_dev_bytes(p, 1 * MiB, 0x77);
    HIP_OK(hipIpcCloseMemHandle(p));
    send_u64(fd, 3);
}

TEST(hipIpcMem_forged_and_stale_handles)
{
    struct peer imp = spawn(stale_importer, NULL);
    void *a = dev_pattern(1 * MiB, 40);
    void *b = dev_pattern(1 * MiB, 41);
    hipIpcMemHandle_t ha, hb;
    HIP_OK(hipIpcGetMemHandle(&ha, a));
    HIP_OK(hipIpcGetMemHandle(&hb, b));
    xsend(imp.fd, &ha, sizeof ha);
    xsend(imp.fd, &hb, sizeof hb);
    CHECK(recv_u64(imp.fd) == 1);
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
    /* a new allocation, maybe at a's VA, must not answer to a's handle */
    void *c = dev_pattern(1 * MiB, 42);
    send_u64(imp.fd, 2);
    CHECK(recv_u64(imp.fd) == 3);
    join(&imp, "importer");
    check_dev_pattern(c, 1 * MiB, 42);
    HIP_OK(hipFree(c));
}

static void dead_exporter(int fd, void *arg)
{
    (void)arg;
    void *a = dev_pattern(2 * MiB, 50);
    void *b = dev_pattern(2 * MiB, 51);
    hipIpcMemHandle_t ha, hb;
    HIP_OK(hipIpcGetMemHandle(&ha, a));
    HIP_OK(hipIpcGetMemHandle(&hb, b));
    xsend(fd, &ha, sizeof ha);
    xsend(fd, &hb, sizeof hb);
    (void)recv_u64(fd); /* importer opened a; we exit without freeing anything */
    hc_end_test();
}

TEST(hipIpcMem_dead_exporter)
{
    struct peer exp = spawn(dead_exporter, NULL);
    hipIpcMemHandle_t ha, hb;
    xrecv(exp.fd, &ha, sizeof ha);
    xrecv(exp.fd, &hb, sizeof hb);
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    HIP_OK(hipSetDevice(n - 1));
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, ha, 1));
    send_u64(exp.fd, 1);
    join(&exp, "exporter");
    /* opened memory stays valid and intact after the exporter is gone */
    check_dev_pattern(p, 2 * MiB, 50);
    void *src = dev_pattern(2 * MiB, 52);
    HIP_OK(hipMemcpy(p, src, 2 * MiB, hipMemcpyDeviceToDevice));
    check_dev_pattern(p, 2 * MiB, 52);
    /* the handle not yet opened fails fast, never hangs */
    expect_refused(hb, "exporter exited");
    /* and so does a reopen of the one we hold, through another process? no:
     * in this process it is still open, so it is reused */
    void *p2 = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p2, ha, 1));
    CHECK(p2 == p);
    HIP_OK(hipIpcCloseMemHandle(p2));
    HIP_OK(hipIpcCloseMemHandle(p));
    /* after the last close the handle is dead for good */
    expect_refused(ha, "exporter exited, after close");
    HIP_OK(hipFree(src));
}

static void stopped_exporter(int fd, void *arg)
{
    (void)arg;
    void *a = dev_pattern(1 * MiB, 55);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, a));
    xsend(fd, &h, sizeof h);
    CHECK(recv_u64(fd) == 1);
    check_dev_pattern(a, 1 * MiB, 56);
    HIP_OK(hipFree(a));
}

/* A live exporter that does not answer (stopped with SIGSTOP): the open gives
 * up after the 1 s I/O timeout instead of hanging (rocm-systems#9827), and
 * works again once the exporter runs. */
TEST(hipIpcMem_stopped_exporter_never_hangs)
{
    struct peer exp = spawn(stopped_exporter, NULL);
    hipIpcMemHandle_t h;
    xrecv(exp.fd, &h, sizeof h);
    importer_device();
    REQUIRE(kill(exp.pid, SIGSTOP) == 0);
    int st = 0;
    REQUIRE(waitpid(exp.pid, &st, WUNTRACED) == exp.pid && WIFSTOPPED(st)); /* really stopped */
    void *p = NULL;
    double t0 = hc_now_ms();
    hipError_t e = hipIpcOpenMemHandle(&p, h, 1);
    double dt = hc_now_ms() - t0;
    kill(exp.pid, SIGCONT);
    CHECKF(e == hipErrorInvalidDevicePointer, "open with a stopped exporter: %s", hipGetErrorName(e));
    CHECKF(dt < 1500.0, "open with a stopped exporter took %.0f ms", dt);
    HIP_OK(hipIpcOpenMemHandle(&p, h, 1));
    check_dev_pattern(p, 1 * MiB, 55);
    void *src = dev_pattern(1 * MiB, 56);
    HIP_OK(hipMemcpy(p, src, 1 * MiB, hipMemcpyDeviceToDevice));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipFree(src));
    send_u64(exp.fd, 1);
    join(&exp, "exporter");
}

/* Connects to the exporter's fd server without saying anything. The socket
 * name is hipkfd's: "\0hipkfd-ipc-" + hex of handle bytes 8..24. */
static int silent_client(const hipIpcMemHandle_t *h)
{
    struct sockaddr_un { sa_family_t sun_family; char sun_path[108]; } a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "hipkfd-ipc-");
    for (int i = 8; i < 24; i++)
        n += snprintf(a.sun_path + 1 + n, sizeof a.sun_path - 1 - n, "%02x", ((const unsigned char *)h)[i]);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    REQUIRE(s >= 0);
    REQUIREF(connect(s, (struct sockaddr *)&a, (socklen_t)(sizeof(sa_family_t) + 1 + n)) == 0, "connect: %s",
             strerror(errno));
    return s;
}

/* Clients that connect and stay silent do not hold up other importers. */
TEST(hipIpcMem_silent_clients_do_not_block_others)
{
    struct peer exp = spawn(stopped_exporter, NULL);
    hipIpcMemHandle_t h;
    xrecv(exp.fd, &h, sizeof h);
    int silent[16];
    for (int i = 0; i < 16; i++)
        silent[i] = silent_client(&h);
    importer_device();
    void *p = NULL;
    double t0 = hc_now_ms();
    HIP_OK(hipIpcOpenMemHandle(&p, h, 1));
    double dt = hc_now_ms() - t0;
    CHECKF(dt < 500.0, "open behind 16 silent clients took %.0f ms", dt);
    check_dev_pattern(p, 1 * MiB, 55);
    void *src = dev_pattern(1 * MiB, 56);
    HIP_OK(hipMemcpy(p, src, 1 * MiB, hipMemcpyDeviceToDevice));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipFree(src));
    for (int i = 0; i < 16; i++)
        close(silent[i]);
    send_u64(exp.fd, 1);
    join(&exp, "exporter");
}

/* ---- PID namespaces ------------------------------------------------------- */

/* Runs fn in a new PID namespace as its pid 1 (unshare(CLONE_NEWPID) + fork),
 * i.e. `unshare --pid --fork`. */
struct ns_arg {
    peer_fn fn;
};

static void in_new_pidns(int fd, void *arg)
{
    struct ns_arg *a = arg;
    if (unshare(CLONE_NEWPID) != 0) {
        int err = errno;
        hc_fail(__FILE__, __LINE__, "unshare(CLONE_NEWPID) failed as root: %s", strerror(err));
        send_u64(fd, 0);
        hc_end_test();
    }
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        CHECKF(getpid() == 1, "not pid 1 in the new namespace (pid %d)", (int)getpid());
        /* LeakSanitizer stops the other threads with ptrace on the tids of /proc/self/task,
         * which name them in the outer PID namespace: it cannot scan their stacks here and
         * reports what only they point to (the runtime's thread handles) as leaked. */
        hc_no_leak_check();
        a->fn(fd, NULL);
        hc_end_test();
    }
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    /* propagate a skip (77) as is */
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

static void ns_exporter(int fd, void *arg)
{
    (void)arg;
    send_u64(fd, (uint64_t)getpid());
    void *p = dev_pattern(2 * MiB, 60);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    xsend(fd, &h, sizeof h);
    CHECK(recv_u64(fd) == 1);
    check_dev_pattern(p, 2 * MiB, 61);
    HIP_OK(hipFree(p));
    send_u64(fd, 2);
}

static void ns_importer(int fd, void *arg)
{
    (void)arg;
    send_u64(fd, (uint64_t)getpid());
    hipIpcMemHandle_t h;
    xrecv(fd, &h, sizeof h);
    importer_device();
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, h, 1));
    check_dev_pattern(p, 2 * MiB, 60);
    void *src = dev_pattern(2 * MiB, 61);
    HIP_OK(hipMemcpy(p, src, 2 * MiB, hipMemcpyDeviceToDevice));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipFree(src));
    send_u64(fd, 1);
}

/* Exporter and importer each in their own PID namespace, both pid 1: a handle
 * naming the exporter by pid would collide with the importer's own pid. They
 * share the network namespace (abstract sockets) and the device files. */
TEST(hipIpcMem_different_pid_namespaces)
{
    if (geteuid() != 0) {
        /* Not root: skip only if this process may not make PID namespaces. As
         * root (CI) a failing unshare fails the test. */
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
            _exit(unshare(CLONE_NEWPID) == 0 ? 0 : 1);
        int st = 0;
        REQUIRE(waitpid(pid, &st, 0) == pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            SKIP("not root and unshare(CLONE_NEWPID) is not permitted: cannot test PID namespaces");
    }
    struct ns_arg ea = {ns_exporter}, ia = {ns_importer};
    struct peer exp = spawn(in_new_pidns, &ea);
    struct peer imp = spawn(in_new_pidns, &ia);
    uint64_t epid = recv_u64(exp.fd), ipid = recv_u64(imp.fd);
    if (epid == 0 || ipid == 0) {
        join(&exp, "exporter namespace");
        join(&imp, "importer namespace");
        REQUIREF(0, "could not create PID namespaces");
    }
    CHECK(epid == 1 && ipid == 1);
    hipIpcMemHandle_t h;
    xrecv(exp.fd, &h, sizeof h);
    xsend(imp.fd, &h, sizeof h);
    CHECK(recv_u64(imp.fd) == 1);
    send_u64(exp.fd, 1);
    CHECK(recv_u64(exp.fd) == 2);
    join(&exp, "exporter (own PID namespace)");
    join(&imp, "importer (own PID namespace)");
}

/* ---- resources ------------------------------------------------------------ */

#define VR_SIZE (64 * MiB + 12 * KiB)
#define VR_TAG "size=0x4003000"

/* Whether /proc/self/maps or /proc/self/fd mention the simulated BO of
 * VR_SIZE bytes (kfd-sim backs each BO with a memfd named after its size):
 * while anything in this process holds those pages. */
static int holds_bo(void)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    REQUIRE(f != NULL);
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "kfdsim-bo") && strstr(line, VR_TAG))
            found = 1;
    fclose(f);
    DIR *d = opendir("/proc/self/fd");
    REQUIRE(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], link[512];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = 0;
            if (strstr(link, "kfdsim-bo") && strstr(link, VR_TAG))
                found = 1;
        }
    }
    closedir(d);
    return found;
}

static void vram_importer(int fd, void *arg)
{
    (void)arg;
    hipIpcMemHandle_t h;
    xrecv(fd, &h, sizeof h);
    importer_device();
    REQUIRE(!holds_bo());
    void *p = NULL;
    HIP_OK(hipIpcOpenMemHandle(&p, h, 1));
    CHECKF(holds_bo(), "the import does not hold the exporter's pages (test cannot see them)");
    send_u64(fd, 1);
    CHECK(recv_u64(fd) == 2); /* exporter freed */
    /* still ours, intact */
    check_dev_pattern(p, VR_SIZE, 70);
    HIP_OK(hipIpcCloseMemHandle(p));
    CHECKF(!holds_bo(), "the importer still holds the pages after the last close");
    send_u64(fd, 3);
}

/* hip#3886: after hipFree of an exported buffer, its VRAM comes back once every
 * importer has closed. kfd-sim counts VRAM per process (AVAILABLE_MEMORY), so:
 * the exporter's free memory returns at hipFree, and neither process holds the
 * pages (the BO's memfd) once the importer has closed. */
TEST(hipIpcMem_vram_returned_after_free_and_close)
{
    struct peer imp = spawn(vram_importer, NULL);
    size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    void *p = dev_pattern(VR_SIZE, 70);
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECK(free1 < free0);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    xsend(imp.fd, &h, sizeof h);
    CHECK(recv_u64(imp.fd) == 1);
    HIP_OK(hipFree(p));
    HIP_OK(hipMemGetInfo(&free2, &total));
    CHECKF(free2 == free0, "exporter's free VRAM %zu after hipFree, %zu before the allocation", free2, free0);
    CHECKF(!holds_bo(), "the exporter still holds the pages after hipFree");
    send_u64(imp.fd, 2);
    CHECK(recv_u64(imp.fd) == 3);
    join(&imp, "importer");
}

#define CYCLES 10000

static void leak_importer(int fd, void *arg)
{
    (void)arg;
    hipIpcMemHandle_t h;
    xrecv(fd, &h, sizeof h);
    importer_device();
    void *p = NULL;
    /* warm up: the runtime's own fds (queues, staging) */
    HIP_OK(hipIpcOpenMemHandle(&p, h, 1));
    check_dev_pattern(p, 64 * KiB, 80);
    HIP_OK(hipIpcCloseMemHandle(p));
    int before = fd_count();
    double t0 = hc_now_ms();
    for (int i = 0; i < CYCLES; i++) {
        hipError_t e = hipIpcOpenMemHandle(&p, h, 1);
        if (e != hipSuccess) {
            hc_fail(__FILE__, __LINE__, "cycle %d: open: %s", i, hipGetErrorName(e));
            break;
        }
        e = hipIpcCloseMemHandle(p);
        if (e != hipSuccess) {
            hc_fail(__FILE__, __LINE__, "cycle %d: close: %s", i, hipGetErrorName(e));
            break;
        }
    }
    double dt = hc_now_ms() - t0;
    int after = fd_count();
    CHECKF(after == before, "importer: %d fds before %d open/close cycles, %d after", before, CYCLES, after);
    printf("    %d open/close cycles in %.0f ms, importer fds %d -> %d\n", CYCLES, dt, before, after);
    HIP_OK(hipIpcOpenMemHandle(&p, h, 1));
    check_dev_pattern(p, 64 * KiB, 80);
    HIP_OK(hipIpcCloseMemHandle(p));
    send_u64(fd, 1);
}

TEST(hipIpcMem_no_fd_leak_10000_cycles)
{
    struct peer imp = spawn(leak_importer, NULL);
    void *p = dev_pattern(64 * KiB, 80);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    int before = fd_count();
    xsend(imp.fd, &h, sizeof h);
    CHECK(recv_u64(imp.fd) == 1);
    /* the fd server keeps the importer's connection open for its next request (and may still
     * be closing the fd it sent last: give it a moment) */
    for (int i = 0; i < 200 && fd_count() > before + 1; i++)
        usleep(10000);
    int after = fd_count();
    CHECKF(after <= before + 1, "exporter: %d fds before the cycles, %d after", before, after);
    join_timeout(&imp, "importer", 55);
    /* the importer is gone: its connection is closed as soon as the server sees it (and join
     * closed our end of the socketpair to it) */
    int expect = before - 1;
    for (int i = 0; i < 200 && fd_count() != expect; i++)
        usleep(10000);
    after = fd_count();
    CHECKF(after == expect, "exporter: %d fds before the cycles (socketpair included), %d after the importer exited",
           before, after);
    HIP_OK(hipFree(p));
}

/* An exporter that lives for one round: waits for "go", exports a buffer of pattern 90 + its
 * number, sends the handle, waits for "done" and exits (freeing the buffer). */
static void short_lived_exporter(int fd, void *arg)
{
    unsigned k = (unsigned)(uintptr_t)arg;
    recv_u64(fd);
    void *p = dev_pattern(64 * KiB, 90 + k);
    hipIpcMemHandle_t h;
    HIP_OK(hipIpcGetMemHandle(&h, p));
    xsend(fd, &h, sizeof h);
    recv_u64(fd);
    HIP_OK(hipFree(p));
}

/* A long-lived importer of short-lived exporters (issue 42, item 5: a service importing from
 * worker after worker) holds a flat number of fds: the connection to each exporter's fd server
 * is kept for the next open, and closed once the exporter has gone, when the next connection is
 * made. The old form kept one socket per exporter it ever opened from. */
TEST(hipIpcMem_importer_fds_flat_while_exporters_come_and_go)
{
    enum { ROUNDS = 12 };
    struct peer ex[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) /* forked before this process initialises HIP */
        ex[k] = spawn(short_lived_exporter, (void *)(uintptr_t)k);
    int first = 0;
    for (int k = 0; k < ROUNDS; k++) {
        hipIpcMemHandle_t h;
        void *p = NULL;
        send_u64(ex[k].fd, 1);
        xrecv(ex[k].fd, &h, sizeof h);
        HIP_OK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
        check_dev_pattern(p, 64 * KiB, 90 + (unsigned)k);
        HIP_OK(hipIpcCloseMemHandle(p));
        send_u64(ex[k].fd, 1);
        join_timeout(&ex[k], "exporter", 30); /* also closes our socketpair to it */
        /* counted from the second round on: the first brought the runtime's own fds */
        int now = fd_count() - (ROUNDS - 1 - k); /* less the socketpairs of exporters still to come */
        if (k == 1)
            first = now;
        else if (k > 1)
            CHECKF(now <= first, "round %d: %d fds (socketpairs of later exporters aside), %d after round 1", k,
                   now, first);
    }
}

/* The exporter keeps each exported BO's dma-buf open from hipIpcGetMemHandle until the BO is
 * freed (as the kernel keeps mem->dmabuf), at most KEEP_MAX of them (src/core/memory.rs
 * DMABUF_KEEP_MAX); past that its fd server exports per request. Handles on both sides of the
 * limit open with their data, and fail once freed. */
#define KEEP_MAX 128
#define KEEP_N (KEEP_MAX + 8)
#define KEEP_SIZE (512 * KiB) /* over the small-allocation limit: a BO of its own */

static void keep_importer(int fd, void *arg)
{
    (void)arg;
    static hipIpcMemHandle_t h[KEEP_N];
    xrecv(fd, h, sizeof h);
    importer_device();
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < KEEP_N; i++) {
            void *p = NULL;
            hipError_t e = hipIpcOpenMemHandle(&p, h[i], hipIpcMemLazyEnablePeerAccess);
            CHECKF(e == hipSuccess, "round %d, handle %d: %s", round, i, hipGetErrorName(e));
            if (e != hipSuccess)
                continue;
            if (i == 0 || i == KEEP_N - 1)
                check_dev_pattern(p, KEEP_SIZE, 90 + (unsigned)i);
            HIP_OK(hipIpcCloseMemHandle(p));
        }
    send_u64(fd, 1);
    CHECK(recv_u64(fd) == 2); /* the first and the last freed */
    void *p = NULL;
    CHECK_HIP(hipIpcOpenMemHandle(&p, h[0], hipIpcMemLazyEnablePeerAccess), hipErrorInvalidDevicePointer);
    CHECK_HIP(hipIpcOpenMemHandle(&p, h[KEEP_N - 1], hipIpcMemLazyEnablePeerAccess), hipErrorInvalidDevicePointer);
    HIP_OK(hipIpcOpenMemHandle(&p, h[1], hipIpcMemLazyEnablePeerAccess));
    HIP_OK(hipIpcCloseMemHandle(p));
    send_u64(fd, 3);
}

TEST(hipIpcMem_exporter_keeps_bounded_dmabufs_until_free)
{
    struct peer imp = spawn(keep_importer, NULL);
    static void *p[KEEP_N];
    static hipIpcMemHandle_t h[KEEP_N];
    /* warm-up: the fd server's socket, and a kept dma-buf that closes with its BO */
    void *w = NULL;
    hipIpcMemHandle_t hw;
    HIP_OK(hipMalloc(&w, KEEP_SIZE));
    int fds_w = fd_count();
    HIP_OK(hipIpcGetMemHandle(&hw, w));
    HIP_OK(hipFree(w));
    int fds0 = fd_count();
    CHECKF(fds0 == fds_w + 1, "%d fds after the first handle and its free, %d before (want the server socket alone)",
           fds0, fds_w);
    for (int i = 0; i < KEEP_N; i++)
        p[i] = (i == 0 || i == KEEP_N - 1) ? dev_pattern(KEEP_SIZE, 90 + (unsigned)i) : NULL;
    for (int i = 1; i < KEEP_N - 1; i++)
        HIP_OK(hipMalloc(&p[i], KEEP_SIZE));
    CHECK(fd_count() == fds0);
    for (int i = 0; i < KEEP_N; i++)
        HIP_OK(hipIpcGetMemHandle(&h[i], p[i]));
    /* again: the same handle, no new fd */
    HIP_OK(hipIpcGetMemHandle(&h[0], p[0]));
    int fds1 = fd_count();
    CHECKF(fds1 == fds0 + KEEP_MAX, "%d fds with %d exported allocations, %d before (want %d kept)", fds1, KEEP_N, fds0,
           KEEP_MAX);
    xsend(imp.fd, h, sizeof h);
    CHECK(recv_u64(imp.fd) == 1);
    /* 2 x KEEP_N opens cost no fd beyond the importer's connection */
    int fds2 = fd_count();
    CHECKF(fds2 <= fds1 + 1, "%d fds after the opens, %d before", fds2, fds1);
    HIP_OK(hipFree(p[0]));
    HIP_OK(hipFree(p[KEEP_N - 1]));
    CHECKF(fd_count() == fds2 - 1, "%d fds after freeing a kept and an unkept export, %d before", fd_count(), fds2);
    send_u64(imp.fd, 2);
    CHECK(recv_u64(imp.fd) == 3);
    join(&imp, "importer");
    for (int i = 1; i < KEEP_N - 1; i++)
        HIP_OK(hipFree(p[i]));
    int expect = fds0 - 1; /* join closed our end of the socketpair; the connection closes too */
    for (int i = 0; i < 200 && fd_count() != expect; i++)
        usleep(10000);
    CHECKF(fd_count() == expect, "%d fds after freeing every export, %d before them (socketpair included)", fd_count(),
           fds0);
}

/* ---- concurrency ------------------------------------------------------------ */

#define CC_BUFS 6
#define CC_SIZE (256 * KiB)
#define CC_PROCS 3
#define CC_THREADS 4
#define CC_ROUNDS 40

struct cc_shared {
    hipIpcMemHandle_t h[CC_BUFS];      /* handles of the bases */
    hipIpcMemHandle_t hi[CC_BUFS];     /* handles of base + 4096 */
};

static struct cc_shared cc;
static int cc_errors;
static int cc_dev;

static void *cc_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t *host = malloc(4096);
    HIP_OK(hipSetDevice(cc_dev));
    for (int r = 0; r < CC_ROUNDS; r++) {
        int b = (t * 7 + r) % CC_BUFS;
        int interior = (r + t) & 1;
        void *p = NULL;
        hipError_t e = hipIpcOpenMemHandle(&p, interior ? cc.hi[b] : cc.h[b], 1);
        if (e != hipSuccess) {
            printf("    thread %d: open: %s\n", t, hipGetErrorName(e));
            __atomic_add_fetch(&cc_errors, 1, __ATOMIC_RELAXED);
            continue;
        }
        size_t off = interior ? 4096 : 0;
        /* the buffer's first page holds its number; check a page the pattern decides */
        size_t at = ((size_t)(r * 13 + t) % (CC_SIZE / 4096 - 2)) * 4096;
        e = hipMemcpy(host, (char *)p + at, 4096, hipMemcpyDeviceToHost);
        uint8_t want[4096];
        for (size_t i = 0; i < 4096; i++)
            want[i] = pat_byte(at + off + i, 90 + b);
        if (e != hipSuccess || memcmp(host, want, 4096) != 0) {
            printf("    thread %d round %d: buffer %d%s maps the wrong memory (%s)\n", t, r, b,
                   interior ? " (interior)" : "", hipGetErrorName(e));
            __atomic_add_fetch(&cc_errors, 1, __ATOMIC_RELAXED);
        }
        if (hipIpcCloseMemHandle(p) != hipSuccess)
            __atomic_add_fetch(&cc_errors, 1, __ATOMIC_RELAXED);
    }
    free(host);
    return NULL;
}

static void cc_importer(int fd, void *arg)
{
    (void)arg;
    xrecv(fd, &cc, sizeof cc);
    cc_dev = importer_device();
    pthread_t th[CC_THREADS];
    for (int t = 0; t < CC_THREADS; t++)
        REQUIRE(pthread_create(&th[t], NULL, cc_thread, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < CC_THREADS; t++)
        pthread_join(th[t], NULL);
    CHECKF(cc_errors == 0, "%d bad opens or mappings", cc_errors);
    send_u64(fd, 1);
}

static void *cc_exporter_thread(void *arg)
{
    void **bufs = arg;
    for (int r = 0; r < 200; r++) {
        int b = r % CC_BUFS;
        hipIpcMemHandle_t h;
        if (hipIpcGetMemHandle(&h, bufs[b]) != hipSuccess || memcmp(&h, &cc.h[b], sizeof h) != 0)
            __atomic_add_fetch(&cc_errors, 1, __ATOMIC_RELAXED);
        /* churn: allocations come and go (VA reuse) while others import */
        void *tmp = NULL;
        if (hipMalloc(&tmp, CC_SIZE) == hipSuccess) {
            hipIpcMemHandle_t ht;
            if (hipIpcGetMemHandle(&ht, tmp) != hipSuccess)
                __atomic_add_fetch(&cc_errors, 1, __ATOMIC_RELAXED);
            hipFree(tmp);
        }
    }
    return NULL;
}

/* rocm-systems#11892: concurrent exports and imports of the same buffers, from
 * several threads in several processes, never map the wrong memory. */
TEST(hipIpcMem_concurrent_processes_and_threads)
{
    struct peer imp[CC_PROCS];
    for (int i = 0; i < CC_PROCS; i++)
        imp[i] = spawn(cc_importer, NULL);
    void *bufs[CC_BUFS];
    for (int b = 0; b < CC_BUFS; b++) {
        bufs[b] = dev_pattern(CC_SIZE, 90 + b);
        HIP_OK(hipIpcGetMemHandle(&cc.h[b], bufs[b]));
        HIP_OK(hipIpcGetMemHandle(&cc.hi[b], (char *)bufs[b] + 4096));
    }
    for (int i = 0; i < CC_PROCS; i++)
        xsend(imp[i].fd, &cc, sizeof cc);
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        REQUIRE(pthread_create(&th[t], NULL, cc_exporter_thread, bufs) == 0);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    CHECKF(cc_errors == 0, "exporter: %d bad handles", cc_errors);
    for (int i = 0; i < CC_PROCS; i++) {
        CHECK(recv_u64(imp[i].fd) == 1);
        join(&imp[i], "importer");
    }
    for (int b = 0; b < CC_BUFS; b++) {
        check_dev_pattern(bufs[b], CC_SIZE, 90 + b);
        HIP_OK(hipFree(bufs[b]));
    }
}

/* ---- events -------------------------------------------------------------- */

#define EV_SIZE (8 * MiB)

static long voluntary_switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

static void ev_importer(int fd, void *arg)
{
    (void)arg;
    hipEvent_t ev = NULL;
    void *p = NULL;
    recv_event_and_mem(fd, &ev, &p);
    /* never recorded yet: complete */
    CHECK_HIP(hipEventQuery(ev), hipSuccess);
    HIP_OK(hipEventSynchronize(ev));
    float ms;
    CHECK(hipEventElapsedTime(&ms, ev, ev) != hipSuccess);
    send_u64(fd, 1);

    /* Round 1: hipEventQuery + hipEventSynchronize (sleeping, not polling). */
    CHECK(recv_u64(fd) == 2); /* the exporter recorded after a long queue */
    CHECK_HIP(hipEventQuery(ev), hipErrorNotReady);
    long sw0 = voluntary_switches();
    double t0 = hc_now_ms();
    HIP_OK(hipEventSynchronize(ev));
    double dt = hc_now_ms() - t0;
    long sw = voluntary_switches() - sw0;
    CHECK_HIP(hipEventQuery(ev), hipSuccess);
    check_dev_pattern(p, EV_SIZE, 111);
    printf("    hipEventSynchronize on the opened event: %.1f ms, %ld voluntary context switches\n", dt, sw);
    CHECKF(dt < 20 || sw <= 3 + (long)(dt / 200), "waited %.0f ms with %ld wake-ups: polling, not sleeping", dt,
           sw);

    /* Round 2: hipStreamWaitEvent orders our copy after the exporter's work. */
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    void *mine = NULL;
    HIP_OK(hipMalloc(&mine, EV_SIZE));
    send_u64(fd, 3);
    CHECK(recv_u64(fd) == 4);
    HIP_OK(hipStreamWaitEvent(s, ev, 0));
    HIP_OK(hipMemcpyAsync(mine, p, EV_SIZE, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(mine, EV_SIZE, 112);

    /* Round 3: the importer records; the exporter sees it. */
    void *src = dev_pattern(EV_SIZE, 113);
    HIP_OK(hipMemcpyAsync(p, src, EV_SIZE, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipEventRecord(ev, s));
    send_u64(fd, 5);
    CHECK(recv_u64(fd) == 6);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(mine));
    HIP_OK(hipFree(src));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipEventDestroy(ev));
}

TEST(hipIpcEvent_cross_process)
{
    struct peer imp = spawn(ev_importer, NULL);
    hipEvent_t ev = NULL;
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
    void *p = dev_pattern(EV_SIZE, 110);
    void *src1 = dev_pattern(EV_SIZE, 111);
    void *src2 = dev_pattern(EV_SIZE, 112);
    send_event_and_mem(imp.fd, ev, p);
    CHECK(recv_u64(imp.fd) == 1);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    struct busy b = busy_begin();

    /* Round 1 */
    REQUIRE_BUSY(&b, s);
    busy_enqueue(&b, s, 8);
    HIP_OK(hipMemcpyAsync(p, src1, EV_SIZE, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipEventRecord(ev, s));
    send_u64(imp.fd, 2);
    HIP_OK(hipStreamSynchronize(s));

    /* Round 2 */
    CHECK(recv_u64(imp.fd) == 3);
    REQUIRE_BUSY(&b, s);
    busy_enqueue(&b, s, 8);
    HIP_OK(hipMemcpyAsync(p, src2, EV_SIZE, hipMemcpyDeviceToDevice, s));
    HIP_OK(hipEventRecord(ev, s));
    send_u64(imp.fd, 4);

    /* Round 3 */
    CHECK(recv_u64(imp.fd) == 5);
    HIP_OK(hipEventSynchronize(ev));
    CHECK_HIP(hipEventQuery(ev), hipSuccess);
    check_dev_pattern(p, EV_SIZE, 113);
    send_u64(imp.fd, 6);
    join(&imp, "importer");
    busy_end(&b);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipFree(p));
    HIP_OK(hipFree(src1));
    HIP_OK(hipFree(src2));
}

static void ev_stale_importer(int fd, void *arg)
{
    (void)arg;
    hipIpcEventHandle_t h1, h2;
    xrecv(fd, &h1, sizeof h1);
    xrecv(fd, &h2, sizeof h2);
    importer_device();
    hipEvent_t e = NULL;
    /* destroyed in the exporter */
    double t0 = hc_now_ms();
    CHECK_HIP(hipIpcOpenEventHandle(&e, h1), hipErrorInvalidValue);
    /* forged token */
    hipIpcEventHandle_t f = h2;
    ((unsigned char *)&f)[33] ^= 0x80;
    CHECK_HIP(hipIpcOpenEventHandle(&e, f), hipErrorInvalidValue);
    /* a memory handle is not an event handle */
    hipIpcEventHandle_t m;
    memcpy(&m, &h2, sizeof m);
    ((unsigned char *)&m)[4] = 1;
    CHECK_HIP(hipIpcOpenEventHandle(&e, m), hipErrorInvalidValue);
    send_u64(fd, 1);
    CHECK(recv_u64(fd) == 2); /* exporter exited */
    CHECK_HIP(hipIpcOpenEventHandle(&e, h2), hipErrorInvalidValue);
    CHECKF(hc_now_ms() - t0 < 3000, "refusals took %.0f ms", hc_now_ms() - t0);
}

static void ev_stale_exporter(int fd, void *arg)
{
    (void)arg;
    hipEvent_t e1, e2;
    hipIpcEventHandle_t h1, h2;
    HIP_OK(hipEventCreateWithFlags(&e1, hipEventInterprocess | hipEventDisableTiming));
    HIP_OK(hipEventCreateWithFlags(&e2, hipEventInterprocess | hipEventDisableTiming));
    HIP_OK(hipIpcGetEventHandle(&h1, e1));
    HIP_OK(hipIpcGetEventHandle(&h2, e2));
    CHECK(memcmp(&h1, &h2, sizeof h1) != 0);
    HIP_OK(hipEventDestroy(e1));
    xsend(fd, &h1, sizeof h1);
    xsend(fd, &h2, sizeof h2);
    CHECK(recv_u64(fd) == 1);
}

TEST(hipIpcEvent_stale_forged_and_dead)
{
    struct peer imp = spawn(ev_stale_importer, NULL);
    struct peer exp = spawn(ev_stale_exporter, NULL);
    hipIpcEventHandle_t h1, h2;
    xrecv(exp.fd, &h1, sizeof h1);
    xrecv(exp.fd, &h2, sizeof h2);
    xsend(imp.fd, &h1, sizeof h1);
    xsend(imp.fd, &h2, sizeof h2);
    CHECK(recv_u64(imp.fd) == 1);
    send_u64(exp.fd, 1);
    join(&exp, "exporter");
    send_u64(imp.fd, 2);
    join(&imp, "importer");
}

/* The device count is read without initialising this process. */
TEST(hipIpc_probe_fork_before_init)
{
    int n = ipc_gpu_count();
    CHECK(n >= 1);
    const char *want = getenv("HIPCONF_EXPECT_GPUS");
    if (want)
        CHECK(n == atoi(want));
}

/* ---- found by the fuzzer (reliability/fuzz.c, two-process mode) ---- */

static void hold_until_go(void *arg)
{
    char c;
    CHECK(read(*(int *)arg, &c, 1) == 1);
}

static void ev_wait_destroy_importer(int fd, void *arg)
{
    (void)arg;
    hipEvent_t ev, again = NULL;
    void *p;
    int go[2];
    REQUIRE(pipe(go) == 0);
    recv_event_and_mem(fd, &ev, &p);
    hipStream_t st;
    HIP_OK(hipStreamCreate(&st));
    HIP_OK(hipLaunchHostFunc(st, hold_until_go, &go[0])); /* the record stays pending until "go" */
    HIP_OK(hipMemsetAsync(p, 0x5a, EV_SIZE, st));
    HIP_OK(hipEventRecord(ev, st));
    send_u64(fd, 1);
    /* Destroyed in the exporter while its stream still waits on it: the handle is stale. */
    hipIpcEventHandle_t h;
    xrecv(fd, &h, sizeof h);
    CHECK_HIP(hipIpcOpenEventHandle(&again, h), hipErrorInvalidValue);
    send_u64(fd, 7);
    CHECK(recv_u64(fd) == 2);
    CHECK(write(go[1], "g", 1) == 1);
    HIP_OK(hipStreamSynchronize(st));
    CHECK(recv_u64(fd) == 3);
    HIP_OK(hipStreamDestroy(st));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipEventDestroy(ev));
    close(go[0]);
    close(go[1]);
}

/* A stream waits (on the GPU) for an IPC event that another process has yet to complete, and the
 * event is destroyed at once: the wait still ends, with no GPU fault (hipEventDestroy unmapped the
 * event page under the stream's poll of it), and the handle is stale at once (not only once the
 * poll is done). */
TEST(hipIpcEvent_destroyed_while_a_stream_waits)
{
    struct peer imp = spawn(ev_wait_destroy_importer, NULL);
    hipEvent_t ev = NULL;
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
    void *p = NULL, *back = NULL;
    HIP_OK(hipMalloc(&p, EV_SIZE));
    HIP_OK(hipMalloc(&back, EV_SIZE));
    HIP_OK(hipMemset(p, 0, EV_SIZE));
    /* hipMemset of device memory is asynchronous to the host, and nothing orders the importer's
     * fill after it: without this, our zeros could land after its 0x5a (seen in CI, 1 run in 50
     * with the CPUs busy). */
    HIP_OK(hipDeviceSynchronize());
    send_event_and_mem(imp.fd, ev, p);
    CHECK(recv_u64(imp.fd) == 1);
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamWaitEvent(s, ev, 0));
    HIP_OK(hipMemcpyAsync(back, p, EV_SIZE, hipMemcpyDeviceToDevice, s));
    hipIpcEventHandle_t h;
    HIP_OK(hipIpcGetEventHandle(&h, ev));
    HIP_OK(hipEventDestroy(ev));
    xsend(imp.fd, &h, sizeof h);
    CHECK(recv_u64(imp.fd) == 7);
    send_u64(imp.fd, 2); /* go */
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(back, EV_SIZE, 0x5a);
    HIP_OK(hipMemset(back, 1, EV_SIZE));
    HIP_OK(hipDeviceSynchronize());
    send_u64(imp.fd, 3);
    join(&imp, "importer");
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(p));
    HIP_OK(hipFree(back));
}
