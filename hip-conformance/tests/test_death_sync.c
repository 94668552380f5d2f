/*
 * Process death around cross-process synchronisation (issue 13): external semaphores (DRM
 * syncobj fds, ../interop_producer.h as the other API) and IPC events. A process is SIGKILLed
 * while a stream of another process waits on what it was to signal or record, or while it waits
 * itself, or in the middle of hipSignalExternalSemaphoresAsync traffic. The survivor's other
 * streams, the null stream and allocations keep working with correct data; its semaphores,
 * events and streams destroy without hanging; its sim counters (VRAM bytes of every GPU, dma-buf
 * and syncobj fds, syncobj handles, open fds) return to their starting values; and a fresh
 * process's hipMemGetInfo shows the dead process's VRAM given back (the sim's session ledger).
 *
 * What a stream waiting on a dead process sees (src/share/interop.rs, src/share/event_page.rs):
 * - an external semaphore wait stays pending (CUDA's semantics: a syncobj has no owner whose
 *   death signals it); hipDestroyExternalSemaphore releases it, hipStreamDestroy of the waiting
 *   stream returns at once, and the process exits cleanly with the wait still pending;
 * - an IPC event wait on records of a dead process is released (the records are cancelled, as a
 *   record that could not be queued), so that no stream waits for ever on work that is gone.
 *
 * Every process is forked before the runtime initialises; the test process only relays.
 */
#define _GNU_SOURCE
#include "common.h"
#include "extsem.h"
#include "proc.h"
#include "usage.h"
#include "../fdpass.h"
#include "../shared.h"

#define PRODUCER_REQUIRE(cond) REQUIRE(cond)
#include "../interop_producer.h"

#include <stdatomic.h>

#define N (1 * MiB)

/* What the survivor holds: VRAM and dma-buf fds (usage.h), syncobj fds and handles, all fds. */
struct sync_usage {
    struct usage u;
    uint64_t sync_fds, syncobjs;
    int fds;
};

static struct sync_usage sync_usage_now(void)
{
    release_cached_blocks();
    struct sync_usage s = {usage_now(), kfdsim_counter("fds.syncobj"), kfdsim_counter("syncobjs"), fd_count()};
    return s;
}

static int sync_usage_equal(struct sync_usage a, struct sync_usage b)
{
    return memcmp(&a.u, &b.u, sizeof a.u) == 0 && a.sync_fds == b.sync_fds && a.syncobjs == b.syncobjs &&
           a.fds == b.fds;
}

/* Everything is back at `a`. Some of it goes back on the runtime's threads, just after the call
 * that gave it up: a destroyed semaphore's syncobj handle once the syncobj waiter thread and the
 * signals queued on it let go of it, the fd server's connection from a dead importer once the
 * server sees it hang up. So the figures are read again until they match, for at most 5 s. */
static void check_sync_usage_back(struct sync_usage a)
{
    struct sync_usage b = sync_usage_now();
    for (double t0 = hc_now_ms(); !sync_usage_equal(a, b) && hc_now_ms() - t0 < 5000; b = sync_usage_now())
        usleep(1000);
    check_usage_back(a.u);
    CHECKF(b.sync_fds == a.sync_fds, "syncobj fds: %llu after, %llu before", (unsigned long long)b.sync_fds,
           (unsigned long long)a.sync_fds);
    CHECKF(b.syncobjs == a.syncobjs, "syncobj handles: %llu after, %llu before", (unsigned long long)b.syncobjs,
           (unsigned long long)a.syncobjs);
    CHECKF(b.fds == a.fds, "open fds: %d after, %d before", b.fds, a.fds);
}

/* One pass of what the tests use, so that the runtime's lazily made objects exist before the
 * baseline: staging buffers, pool queues, the syncobj waiter thread and its wake syncobj, the
 * queues of their own that waiting streams get (three), the IPC fd server. */
static void warm_up_sync(void)
{
    struct producer p = producer_open(0);
    int fd;
    uint32_t h = psync_create(&p, &fd);
    hipExternalSemaphore_t s = import_sem(fd, 1);
    hipStream_t st[3];
    void *d = NULL;
    HIP_OK(hipMalloc(&d, N));
    for (int i = 0; i < 3; i++) {
        HIP_OK(hipStreamCreateWithFlags(&st[i], hipStreamNonBlocking));
        HIP_OK(sem_wait(s, 1, st[i]));
        HIP_OK(hipMemsetAsync(d, i, N, st[i]));
    }
    psync_signal(&p, h, 1);
    for (int i = 0; i < 3; i++) {
        HIP_OK(hipStreamSynchronize(st[i]));
        HIP_OK(hipStreamDestroy(st[i]));
    }
    HIP_OK(hipDestroyExternalSemaphore(s));
    drmSyncobjDestroy(p.fd, h);
    producer_close(&p);
    void *q = dev_pattern(N, 1);
    HIP_OK(hipMemcpy(d, q, N, hipMemcpyDeviceToDevice));
    check_dev_pattern(d, N, 1);
    hipEvent_t ev;
    hipIpcEventHandle_t he;
    hipIpcMemHandle_t hm;
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventInterprocess | hipEventDisableTiming));
    HIP_OK(hipIpcGetEventHandle(&he, ev));
    HIP_OK(hipIpcGetMemHandle(&hm, q));
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipFree(q));
    HIP_OK(hipFree(d));
}

/* The survivor's other work keeps going while a stream of it waits for ever: a stream of its own,
 * the null stream, new allocations. (hipFree waits for every stream, as CUDA's implicit
 * synchronisation: the buffers are freed with free_other once the wait is released.) */
struct other {
    void *src, *dst;
};

static struct other other_work(unsigned seed)
{
    struct other o = {dev_pattern(N, seed), NULL};
    hipStream_t c;
    HIP_OK(hipStreamCreate(&c));
    HIP_OK(hipMalloc(&o.dst, N));
    HIP_OK(hipMemcpyAsync(o.dst, o.src, N, hipMemcpyDeviceToDevice, c));
    HIP_OK(hipStreamSynchronize(c));
    check_dev_pattern(o.dst, N, seed);
    HIP_OK(hipMemset(o.dst, 0x3c, N));
    check_dev_bytes(o.dst, N, 0x3c);
    HIP_OK(hipStreamDestroy(c));
    return o;
}

static void free_other(struct other o)
{
    HIP_OK(hipFree(o.src));
    HIP_OK(hipFree(o.dst));
}

/* ---- the signalling process dies while a stream waits on its syncobjs ------------------- */

/* The other API's process: a binary, a timeline and a spare timeline syncobj; the timeline at
 * point 1 before the fds go out; then nothing more until it is killed. */
static void syncobj_owner_until_killed(int fd, void *arg)
{
    (void)arg;
    struct producer p = producer_open(0);
    int fds[3];
    uint32_t h[3];
    for (int i = 0; i < 3; i++)
        h[i] = psync_create(&p, &fds[i]);
    psync_signal(&p, h[1], 1);
    REQUIRE(fdpass_send(fd, fds, 3));
    for (;;)
        pause();
}

static void waits_on_dead_signaller(int fd, void *arg)
{
    (void)arg;
    HIP_OK(hipSetDevice(0));
    warm_up_sync();
    struct sync_usage u0 = sync_usage_now();
    int fds[3];
    REQUIRE(fdpass_recv(fd, fds, 3));
    hipExternalSemaphore_t sb = import_sem(fds[0], 0), st = import_sem(fds[1], 1);
    hipStream_t a, b;
    HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    uint8_t *pinned = NULL, *da = NULL, *db = NULL;
    HIP_OK(hipHostMalloc((void **)&pinned, N, 0));
    pat_fill(pinned, N, 71);
    HIP_OK(hipMalloc((void **)&da, N));
    HIP_OK(hipMalloc((void **)&db, N));
    HIP_OK(hipMemset(db, 0, N));
    hipEvent_t eb;
    HIP_OK(hipEventCreate(&eb));
    /* the point signalled before the death lets work through */
    HIP_OK(sem_wait(st, 1, a));
    HIP_OK(hipMemsetAsync(da, 0x11, N, a));
    HIP_OK(hipStreamSynchronize(a));
    check_dev_bytes(da, N, 0x11);
    HIP_OK(sem_wait(st, 2, a));
    HIP_OK(hipMemcpyAsync(da, pinned, N, hipMemcpyHostToDevice, a));
    HIP_OK(sem_wait(sb, 0, b));
    HIP_OK(hipMemsetAsync(db, 0x5b, N, b));
    HIP_OK(hipEventRecord(eb, b));
    send_u64(fd, 1);
    CHECK(recv_u64(fd) == 2); /* the signaller is dead and reaped */
    /* the waits stay pending; everything else works */
    CHECK_HIP(hipStreamQuery(a), hipErrorNotReady);
    CHECK_HIP(hipStreamQuery(b), hipErrorNotReady);
    CHECK_HIP(hipEventQuery(eb), hipErrorNotReady);
    struct other o = other_work(72);
    check_dev_bytes(da, N, 0x11);
    check_dev_bytes(db, N, 0);
    CHECK_HIP(hipStreamQuery(a), hipErrorNotReady);
    /* destroying the semaphore releases the wait on it */
    HIP_OK(hipDestroyExternalSemaphore(st));
    HIP_OK(hipStreamSynchronize(a));
    check_dev_pattern(da, N, 71);
    /* a stream still held by the dead signaller's semaphore is destroyed at once; its work runs
     * once the wait is released */
    HIP_OK(hipStreamDestroy(b));
    CHECK_HIP(hipEventQuery(eb), hipErrorNotReady);
    HIP_OK(hipDestroyExternalSemaphore(sb));
    HIP_OK(hipEventSynchronize(eb));
    check_dev_bytes(db, N, 0x5b);
    free_other(o);
    HIP_OK(hipEventDestroy(eb));
    HIP_OK(hipStreamDestroy(a));
    HIP_OK(hipFree(da));
    HIP_OK(hipFree(db));
    HIP_OK(hipHostFree(pinned));
    /* the spare timeline's fd is still ours */
    u0.fds++;
    u0.sync_fds++;
    check_sync_usage_back(u0);
    /* the process ends with a stream still waiting on the dead signaller: it exits cleanly */
    hipExternalSemaphore_t spare = import_sem(fds[2], 1);
    hipStream_t e;
    HIP_OK(hipStreamCreateWithFlags(&e, hipStreamNonBlocking));
    HIP_OK(sem_wait(spare, 1, e));
    void *x = NULL;
    HIP_OK(hipMalloc(&x, N));
    HIP_OK(hipMemsetAsync(x, 0, N, e));
    CHECK_HIP(hipStreamQuery(e), hipErrorNotReady);
}

TEST(death_sem_signaller_killed_while_streams_wait)
{
    struct peer owner = spawn(syncobj_owner_until_killed, NULL);
    struct peer w = spawn(waits_on_dead_signaller, NULL);
    int fds[3];
    REQUIRE(fdpass_recv(owner.fd, fds, 3));
    REQUIRE(fdpass_send(w.fd, fds, 3));
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    CHECK(recv_u64(w.fd) == 1);
    kill_and_reap(&owner);
    send_u64(w.fd, 2);
    join(&w, "the waiting survivor");
}

/* ---- the waiting process dies; the signaller goes on ------------------------------------ */

/* Imports the two syncobjs it receives, holds VRAM, and leaves two streams waiting on them
 * (timeline point 5, the binary signal) until it is killed. */
static void waiter_until_killed(int fd, void *arg)
{
    (void)arg;
    int fds[2];
    REQUIRE(fdpass_recv(fd, fds, 2));
    importer_device();
    hipExternalSemaphore_t sb = import_sem(fds[0], 0), st = import_sem(fds[1], 1);
    void *d = dev_pattern(16 * MiB, 91);
    hipStream_t a, b;
    HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
    HIP_OK(hipStreamCreate(&b));
    HIP_OK(sem_wait(st, 5, a));
    HIP_OK(hipMemsetAsync(d, 1, 16 * MiB, a));
    HIP_OK(sem_wait(sb, 0, b));
    HIP_OK(hipMemsetAsync(d, 2, 16 * MiB, b));
    CHECK_HIP(hipStreamQuery(a), hipErrorNotReady);
    send_u64(fd, 1);
    for (;;)
        pause();
}

static void signals_after_waiter_died(int fd, void *arg)
{
    (void)arg;
    HIP_OK(hipSetDevice(0));
    warm_up_sync();
    struct producer p = producer_open(0);
    struct sync_usage u0 = sync_usage_now();
    int wfds[2];
    uint32_t hb = psync_create(&p, &wfds[0]), ht = psync_create(&p, &wfds[1]);
    REQUIRE(fdpass_send(fd, wfds, 2));
    close(wfds[0]);
    close(wfds[1]);
    CHECK(recv_u64(fd) == 2); /* the waiter is dead and reaped */
    /* signals from HIP (this process's import of the same timeline) and from the other API */
    int f2 = -1;
    REQUIRE(drmSyncobjHandleToFD(p.fd, ht, &f2) == 0);
    hipExternalSemaphore_t st = import_sem(f2, 1);
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    void *d = NULL;
    HIP_OK(hipMalloc(&d, N));
    HIP_OK(hipMemsetAsync(d, 0x21, N, s));
    HIP_OK(sem_signal(st, 5, s));
    CHECK(psync_wait(&p, ht, 5, 10000) == 0);
    CHECK(psync_point(&p, ht) == 5);
    psync_signal(&p, hb, 0);
    CHECK(psync_wait(&p, hb, 0, 0) == 0); /* nobody consumed it: the waiter is gone */
    /* this process's own waits on the timeline go on */
    HIP_OK(sem_wait(st, 5, s));
    HIP_OK(sem_wait(st, 6, s));
    HIP_OK(hipMemsetAsync(d, 0x22, N, s));
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    psync_signal(&p, ht, 6);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, N, 0x22);
    free_other(other_work(92));
    HIP_OK(hipDestroyExternalSemaphore(st));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    REQUIRE(drmSyncobjDestroy(p.fd, hb) == 0);
    REQUIRE(drmSyncobjDestroy(p.fd, ht) == 0);
    check_sync_usage_back(u0);
    producer_close(&p);
}

TEST(death_sem_waiter_killed_while_stream_waits)
{
    struct free_vram free0 = probe_free();
    struct peer sig = spawn(signals_after_waiter_died, NULL);
    struct peer w = spawn(waiter_until_killed, NULL);
    int fds[2];
    REQUIRE(fdpass_recv(sig.fd, fds, 2));
    REQUIRE(fdpass_send(w.fd, fds, 2));
    close(fds[0]);
    close(fds[1]);
    CHECK(recv_u64(w.fd) == 1);
    kill_and_reap(&w);
    send_u64(sig.fd, 2);
    join(&sig, "the signalling survivor");
    check_free_back(free0);
}

/* ---- killed in the middle of hipSignalExternalSemaphoresAsync traffic ------------------- */

/* Signals the timeline it receives at 1, 2, 3, ... behind memsets of its stream, reporting
 * every 16th point once it is signalled, until it is killed. */
static void signal_traffic_until_killed(int fd, void *arg)
{
    (void)arg;
    int sfd = -1;
    REQUIRE(fdpass_recv(fd, &sfd, 1));
    importer_device();
    hipExternalSemaphore_t st = import_sem(sfd, 1);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 8 * MiB));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    for (uint64_t v = 1;; v++) {
        HIP_OK(hipMemsetAsync(d, (int)v, 8 * MiB, s));
        HIP_OK(sem_signal(st, v, s));
        if (v % 16 == 0) {
            HIP_OK(hipStreamSynchronize(s));
            send_u64(fd, v);
        }
    }
}

/* This process (the survivor) made the timeline; its stream follows the other's signals. */
TEST(death_sem_signaller_killed_mid_signal_traffic)
{
    struct peer x = spawn(signal_traffic_until_killed, NULL);
    HIP_OK(hipSetDevice(0));
    warm_up_sync();
    struct producer p = producer_open(0);
    size_t free0 = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free0, &total));
    struct sync_usage u0 = sync_usage_now();
    int xfd = -1, myfd = -1;
    uint32_t h = psync_create(&p, &xfd);
    REQUIRE(drmSyncobjHandleToFD(p.fd, h, &myfd) == 0);
    REQUIRE(fdpass_send(x.fd, &xfd, 1));
    close(xfd);
    hipExternalSemaphore_t st = import_sem(myfd, 1);
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    uint8_t *d = NULL;
    HIP_OK(hipMalloc((void **)&d, N));
    /* follow the traffic on the GPU for a while, then kill the signaller in the middle of it */
    uint64_t seen = 0;
    while (seen < 128) {
        seen = recv_u64(x.fd);
        HIP_OK(sem_wait(st, seen, s));
        HIP_OK(hipMemsetAsync(d, (int)(seen & 0xff), N, s));
    }
    kill_and_reap(&x);
    u0.fds--; /* kill_and_reap closed our end of the socket */
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, N, (uint8_t)(seen & 0xff));
    uint64_t last = psync_point(&p, h);
    CHECKF(last >= seen, "timeline at %llu, %llu reported", (unsigned long long)last, (unsigned long long)seen);
    /* points up to the last one signalled let work through; the next one waits for this
     * process's own signal */
    HIP_OK(sem_wait(st, last, s));
    HIP_OK(hipMemsetAsync(d, 0x61, N, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, N, 0x61);
    HIP_OK(sem_wait(st, last + 1, s));
    HIP_OK(hipMemsetAsync(d, 0x62, N, s));
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    struct other o = other_work(93);
    psync_signal(&p, h, last + 1);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, N, 0x62);
    free_other(o);
    /* and HIP signals it further */
    HIP_OK(sem_signal(st, last + 2, s));
    CHECK(psync_wait(&p, h, last + 2, 10000) == 0);
    HIP_OK(hipDestroyExternalSemaphore(st));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    REQUIRE(drmSyncobjDestroy(p.fd, h) == 0);
    check_sync_usage_back(u0);
    /* the dead process's VRAM is given back */
    size_t free1 = 0;
    HIP_OK(hipMemGetInfo(&free1, &total));
    CHECKF(free1 == free0, "hipMemGetInfo free: %zu after, %zu before", free1, free0);
    producer_close(&p);
}

/* ---- IPC events: a process dies while a stream waits on a record ------------------------ */

/* The two processes of an IPC event test talk over this pair ([0]: the recorder's end). */
static int ev_link[2];

static atomic_int hold_released;

/* A host function that holds its stream until hold_released is set. */
static void hold_stream(void *arg)
{
    (void)arg;
    while (!atomic_load(&hold_released))
        usleep(1000);
}

/* The recorder: an IPC event and a buffer (pattern 81) on device 0, both sent to the other
 * process; a record queued behind a host function that holds the stream, then a memset of the
 * buffer to 0x82 behind the same hold. Says "recorded" to the other process. */
static void record_held(int fd, hipEvent_t *ev, void **buf, hipStream_t *s)
{
    (void)fd;
    HIP_OK(hipEventCreateWithFlags(ev, hipEventInterprocess | hipEventDisableTiming));
    *buf = dev_pattern(N, 81);
    send_event_and_mem(ev_link[0], *ev, *buf);
    HIP_OK(hipStreamCreate(s));
    HIP_OK(hipLaunchHostFunc(*s, hold_stream, NULL));
    HIP_OK(hipMemsetAsync(*buf, 0x82, N, *s));
    HIP_OK(hipEventRecord(*ev, *s));
    send_u64(ev_link[0], 1);
}

/* The waiter: opens the event and buffer, and once the record is queued makes its stream wait
 * on it and copy the buffer after. */
static void wait_on_record(hipEvent_t *ev, void **p, void **mine, hipStream_t *ws)
{
    recv_event_and_mem(ev_link[1], ev, p);
    HIP_OK(hipMalloc(mine, N));
    HIP_OK(hipMemset(*mine, 0, N));
    HIP_OK(hipDeviceSynchronize()); /* the fill is asynchronous; *ws does not wait for it */
    HIP_OK(hipStreamCreateWithFlags(ws, hipStreamNonBlocking));
    CHECK(recv_u64(ev_link[1]) == 1);
    HIP_OK(hipStreamWaitEvent(*ws, *ev, 0));
    HIP_OK(hipMemcpyAsync(*mine, *p, N, hipMemcpyDeviceToDevice, *ws));
    usleep(20 * 1000);
    CHECK_HIP(hipStreamQuery(*ws), hipErrorNotReady);
    CHECK_HIP(hipEventQuery(*ev), hipErrorNotReady);
}

static void ipc_waiter_until_killed(int fd, void *arg)
{
    (void)arg;
    close(ev_link[0]); /* the other process's end: its death must hang the link up */
    hipEvent_t ev;
    void *p = NULL, *mine = NULL;
    hipStream_t ws;
    wait_on_record(&ev, &p, &mine, &ws);
    send_u64(fd, 1);
    for (;;)
        pause();
}

static void ipc_recorder_survives(int fd, void *arg)
{
    (void)arg;
    close(ev_link[1]); /* the other process's end: its death must hang the link up */
    HIP_OK(hipSetDevice(0));
    warm_up_sync();
    struct sync_usage u0 = sync_usage_now();
    hipEvent_t ev;
    void *buf = NULL;
    hipStream_t s;
    record_held(fd, &ev, &buf, &s);
    CHECK(recv_u64(fd) == 2); /* the waiter is dead and reaped */
    CHECK_HIP(hipEventQuery(ev), hipErrorNotReady);
    atomic_store(&hold_released, 1);
    HIP_OK(hipEventSynchronize(ev));
    check_dev_bytes(buf, N, 0x82);
    /* the event records and waits as before */
    hipStream_t s2;
    HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    HIP_OK(hipMemsetAsync(buf, 0x83, N, s));
    HIP_OK(hipEventRecord(ev, s));
    HIP_OK(hipStreamWaitEvent(s2, ev, 0));
    HIP_OK(hipMemsetAsync(buf, 0x84, N, s2));
    HIP_OK(hipStreamSynchronize(s2));
    HIP_OK(hipEventQuery(ev));
    check_dev_bytes(buf, N, 0x84);
    free_other(other_work(85));
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipStreamDestroy(s2));
    HIP_OK(hipFree(buf));
    close(ev_link[0]);
    u0.fds--;
    check_sync_usage_back(u0);
}

/* Runs `recorder` and `waiter` (linked by ev_link), kills the recorder (`kill_recorder`) or the
 * waiter once the waiter's stream waits, tells the survivor, and checks that it passes and that
 * every device's free VRAM is back. */
static void ipc_event_death(peer_fn recorder, peer_fn waiter, int kill_recorder)
{
    struct free_vram free0 = probe_free();
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ev_link) == 0);
    struct peer r = spawn(recorder, NULL);
    struct peer w = spawn(waiter, NULL);
    close(ev_link[0]);
    close(ev_link[1]);
    CHECK(recv_u64(w.fd) == 1);
    struct peer *dead = kill_recorder ? &r : &w, *survivor = kill_recorder ? &w : &r;
    kill_and_reap(dead);
    send_u64(survivor->fd, 2);
    join(survivor, "the survivor");
    check_free_back(free0);
}

/* The recorder survives the death of a process whose stream waited on its IPC event. */
TEST(death_ipc_event_waiter_killed_while_stream_waits)
{
    ipc_event_death(ipc_recorder_survives, ipc_waiter_until_killed, 0);
}

static void ipc_recorder_until_killed(int fd, void *arg)
{
    (void)arg;
    close(ev_link[1]); /* the other process's end: its death must hang the link up */
    hipEvent_t ev;
    void *buf = NULL;
    hipStream_t s;
    record_held(fd, &ev, &buf, &s);
    for (;;)
        pause();
}

static void ipc_waiter_survives(int fd, void *arg)
{
    (void)arg;
    close(ev_link[0]); /* the other process's end: its death must hang the link up */
    importer_device();
    warm_up_sync();
    struct sync_usage u0 = sync_usage_now();
    hipEvent_t ev;
    void *p = NULL, *mine = NULL;
    hipStream_t ws;
    wait_on_record(&ev, &p, &mine, &ws);
    send_u64(fd, 1);
    CHECK(recv_u64(fd) == 2); /* the recorder is dead and reaped */
    /* the dead process's record is cancelled: the wait and the event are released; the copy
     * after the wait reads the buffer as the recorder left it (its memset never ran) */
    HIP_OK(hipStreamSynchronize(ws));
    HIP_OK(hipEventSynchronize(ev));
    HIP_OK(hipEventQuery(ev));
    check_dev_pattern(mine, N, 81);
    free_other(other_work(86));
    /* the event still works here: a record of this process, a wait on it */
    HIP_OK(hipMemsetAsync(p, 0x87, N, ws));
    HIP_OK(hipEventRecord(ev, ws));
    HIP_OK(hipEventSynchronize(ev));
    check_dev_bytes(p, N, 0x87);
    HIP_OK(hipStreamWaitEvent(ws, ev, 0));
    HIP_OK(hipStreamSynchronize(ws));
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipIpcCloseMemHandle(p));
    HIP_OK(hipFree(mine));
    HIP_OK(hipStreamDestroy(ws));
    /* the link is closed; the connection to the dead recorder's fd server stays open (src/share/ipc.rs
     * keeps one per exporter for its next request) */
    close(ev_link[1]);
    check_sync_usage_back(u0);
}

/* A process's stream waits on an IPC event whose recorder is killed before the record's work
 * ran. */
TEST(death_ipc_event_recorder_killed_while_stream_waits)
{
    ipc_event_death(ipc_recorder_until_killed, ipc_waiter_survives, 1);
}
