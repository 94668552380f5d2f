/*
 * Wait policies (src/core/wait.rs): hipSetDeviceFlags' schedule, hipEventBlockingSync events and
 * a stream's hipSynchronizationPolicy choose how a host thread waits for GPU work. Polling waits
 * (Spin, Yield, Auto) make no AMDKFD_IOC_WAIT_EVENTS at all, and neither does
 * hipDeviceSynchronize: VM faults reach the runtime through its fault watcher thread
 * (hipkfd-vmfault, src/core/signal.rs), which makes one WAIT_EVENTS, at init, and sleeps in it.
 * Blocking waits (BlockingSync) poll for BLOCK_POLL (20 us) first, so short copies do not sleep
 * either, and sleep in WAIT_EVENTS, using little CPU, when the work is held for longer.
 * Counted with kfd-sim's per-call counters (kfdsim_stat("calls.WAIT_EVENTS"),
 * kfd-sim/src/calls.rs) and getrusage(RUSAGE_THREAD).
 * The runtime's syncobj waiter thread follows the policy of the stream whose external semaphore
 * wait it serves: it polls for a Spin stream, sleeps for an Auto one.
 * The flag checks themselves: test_device_extra.c (hipDeviceFlags_set_get).
 */
#define _GNU_SOURCE
#include "common.h"
#include "extsem.h"
#include "../interop_producer.h"
#include "../shared.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { N = 4096, CYCLES = 100 };

static uint64_t wait_events(void)
{
    return kfdsim_counter("calls.WAIT_EVENTS");
}

/* CPU time of the calling thread, ms. */
static double thread_cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The /proc/self/task/<tid>/stat of this process's thread named `name`: its scheduler state
 * letter (0 if there is no such thread) and its CPU time in ms (-1 if none). */
static char named_thread(const char *name, double *cpu_ms)
{
    *cpu_ms = -1;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    char state = 0;
    long tick = sysconf(_SC_CLK_TCK);
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], comm[64] = "", stat[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name) != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = 0;
        /* fields after the ")" that ends comm: state is field 3, utime 14, stime 15 */
        char *p = strrchr(stat, ')');
        unsigned long ut = 0, st = 0;
        char c = 0;
        if (p && sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &c, &ut, &st) == 3) {
            state = c;
            *cpu_ms = (double)(ut + st) * 1000.0 / (double)tick;
        }
    }
    closedir(d);
    return state;
}

/* CPU time (ms) of this process's thread named `name`, -1 if none. */
static double named_thread_cpu_ms(const char *name)
{
    double ms;
    named_thread(name, &ms);
    return ms;
}

/* The scheduler state letter of this process's thread named `name`, 0 if none. */
static char named_thread_state(const char *name)
{
    double ms;
    return named_thread(name, &ms);
}

/* A 4 KiB pageable copy up and back down, then a sync of the null stream; checks the bytes. */
static void copy_cycle(void *d, uint8_t *h, uint8_t *back, int i)
{
    memset(h, i & 0xff, N);
    HIP_OK(hipMemcpy(d, h, N, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
    HIP_OK(hipStreamSynchronize(NULL));
    REQUIREF(memcmp(h, back, N) == 0, "cycle %d: bytes differ", i);
}

/* WAIT_EVENTS made by CYCLES copy cycles (3 waits each) after a warm-up, under the current
 * flags. */
static uint64_t cycles_wait_events(void)
{
    void *d = NULL;
    uint8_t *h = malloc(N), *back = malloc(N);
    HIP_OK(hipMalloc(&d, N));
    for (int i = 0; i < 10; i++)
        copy_cycle(d, h, back, i);
    uint64_t w0 = wait_events();
    for (int i = 0; i < CYCLES; i++)
        copy_cycle(d, h, back, i);
    uint64_t n = wait_events() - w0;
    HIP_OK(hipFree(d));
    free(h);
    free(back);
    return n;
}

/* Initialises the runtime and waits (at most 2 s) until its fault watcher has made its one
 * WAIT_EVENTS and sleeps in it (it starts at init, asynchronously, and names itself once it
 * runs), so that later counts are the waits' own. */
static void require_sim_counters(void)
{
    HIP_OK(hipInit(0));
    if (kfdsim_counter("calls.total") == 0)
        SKIP("not under kfdsim: no per-call counters");
    double t0 = wall_ms();
    while ((named_thread_state("hipkfd-vmfault") != 'S' || wait_events() == 0) && wall_ms() - t0 < 2000)
        usleep(1000);
}

TEST(wait_spin_copy_sync_makes_no_wait_events)
{
    require_sim_counters();
    unsigned f = 99;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleSpin);
    uint64_t n = cycles_wait_events();
    CHECKF(n == 0, "Spin: %llu WAIT_EVENTS in %d copy + sync cycles", (unsigned long long)n, CYCLES);
}

TEST(wait_yield_and_auto_make_no_wait_events)
{
    require_sim_counters();
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleYield));
    uint64_t n = cycles_wait_events();
    CHECKF(n == 0, "Yield: %llu WAIT_EVENTS in %d cycles", (unsigned long long)n, CYCLES);
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleAuto));
    n = cycles_wait_events();
    CHECKF(n == 0, "Auto: %llu WAIT_EVENTS in %d cycles", (unsigned long long)n, CYCLES);
}

/* Releases the hold word after `ms` milliseconds. */
struct release_later {
    uint32_t *w;
    int ms;
};

static void *release_thread(void *arg)
{
    struct release_later *r = arg;
    usleep((useconds_t)r->ms * 1000);
    release(r->w);
    return NULL;
}

/* Work on `s` held for `ms` milliseconds: the WAIT_EVENTS made and the CPU used by `sync` waiting
 * for it, and its wall time. With `ev`, the event is recorded after the held work and `sync` is
 * hipEventSynchronize on it; else hipStreamSynchronize(s). */
static void held_wait(hipStream_t s, hipEvent_t ev, int ms, uint64_t *waits, double *cpu, double *wall)
{
    void *d = NULL;
    uint32_t *w = hold_word();
    HIP_OK(hipMalloc(&d, N));
    hold(s, w);
    HIP_OK(hipMemsetAsync(d, 0x3c, N, s));
    if (ev)
        HIP_OK(hipEventRecord(ev, s));
    struct release_later r = {w, ms};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, release_thread, &r) == 0);
    uint64_t w0 = wait_events();
    double c0 = thread_cpu_ms(), t0 = wall_ms();
    if (ev)
        HIP_OK(hipEventSynchronize(ev));
    else
        HIP_OK(hipStreamSynchronize(s));
    *wall = wall_ms() - t0;
    *cpu = thread_cpu_ms() - c0;
    *waits = wait_events() - w0;
    pthread_join(t, NULL);
    uint8_t back[N];
    HIP_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
    CHECK(back[0] == 0x3c && back[N - 1] == 0x3c);
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(w));
}

static void check_slept(const char *what, int ms, uint64_t waits, double cpu, double wall)
{
    CHECKF(wall >= ms / 2, "%s: returned after %.1f ms, before the work was released", what, wall);
    CHECKF(waits >= 1, "%s: no WAIT_EVENTS in a %.1f ms wait", what, wall);
    CHECKF(cpu < wall / 4, "%s: %.1f ms CPU in a %.1f ms wait", what, cpu, wall);
}

TEST(wait_blocking_sync_stream_sync_sleeps)
{
    require_sim_counters();
    hipStream_t s;
    uint64_t waits;
    double cpu, wall;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
    HIP_OK(hipStreamCreate(&s));
    held_wait(s, NULL, 200, &waits, &cpu, &wall);
    check_slept("BlockingSync hipStreamSynchronize", 200, waits, cpu, wall);
    HIP_OK(hipStreamDestroy(s));
}

TEST(wait_blocking_sync_event_sleeps_on_a_spinning_device)
{
    require_sim_counters();
    hipStream_t s;
    hipEvent_t blocking, plain;
    uint64_t waits;
    double cpu, wall;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreateWithFlags(&blocking, hipEventBlockingSync));
    HIP_OK(hipEventCreate(&plain));
    held_wait(s, blocking, 200, &waits, &cpu, &wall);
    check_slept("hipEventBlockingSync event", 200, waits, cpu, wall);
    /* A plain event on the same device spins: short waits make no WAIT_EVENTS. */
    void *d = NULL;
    HIP_OK(hipMalloc(&d, N));
    uint64_t w0 = wait_events();
    for (int i = 0; i < CYCLES; i++) {
        HIP_OK(hipMemsetAsync(d, i & 0xff, N, s));
        HIP_OK(hipEventRecord(plain, s));
        HIP_OK(hipEventSynchronize(plain));
    }
    uint64_t n = wait_events() - w0;
    CHECKF(n == 0, "plain event on a Spin device: %llu WAIT_EVENTS", (unsigned long long)n);
    HIP_OK(hipFree(d));
    HIP_OK(hipEventDestroy(blocking));
    HIP_OK(hipEventDestroy(plain));
    HIP_OK(hipStreamDestroy(s));
}

/* VM faults come from the fault watcher thread: it sleeps in its one WAIT_EVENTS (made at init)
 * and uses no CPU; hipDeviceSynchronize, with or without work before it, and hipMemcpyPeer
 * (between two devices where there are two) make no WAIT_EVENTS (they made one each, the fault
 * poll, before the watcher). */
TEST(wait_device_sync_and_peer_copy_make_no_wait_events)
{
    require_sim_counters();
    int n_dev = 0;
    HIP_OK(hipGetDeviceCount(&n_dev));
    int peer = n_dev > 1 ? 1 : 0;
    void *a = NULL, *b = NULL;
    uint8_t h[N], back[N];
    HIP_OK(hipSetDevice(peer));
    HIP_OK(hipMalloc(&b, N));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMalloc(&a, N));
    double c0 = named_thread_cpu_ms("hipkfd-vmfault");
    CHECKF(c0 >= 0, "no thread named hipkfd-vmfault");
    CHECKF(wait_events() == 1, "%llu WAIT_EVENTS after init (want the fault watcher's one)",
           (unsigned long long)wait_events());
    uint64_t w0 = wait_events();
    double t0 = wall_ms();
    for (int i = 0; i < CYCLES; i++) {
        memset(h, i, N);
        HIP_OK(hipMemcpy(a, h, N, hipMemcpyHostToDevice));
        HIP_OK(hipMemcpyPeer(b, peer, a, 0, N));
        HIP_OK(hipDeviceSynchronize());
        HIP_OK(hipDeviceSynchronize());
        HIP_OK(hipMemcpy(back, b, N, hipMemcpyDeviceToHost));
        REQUIREF(memcmp(h, back, N) == 0, "cycle %d: the peer copy's bytes differ", i);
    }
    uint64_t n = wait_events() - w0;
    double wall = wall_ms() - t0, used = named_thread_cpu_ms("hipkfd-vmfault") - c0;
    CHECKF(n == 0, "%llu WAIT_EVENTS in %d x (hipMemcpyPeer 4 KiB + 2 hipDeviceSynchronize)",
           (unsigned long long)n, CYCLES);
    /* asleep (on kfd-sim it wakes every 50 ms for a moment: look a few times) */
    char state = 0;
    for (int i = 0; i < 20 && (state = named_thread_state("hipkfd-vmfault")) != 'S'; i++)
        usleep(1000);
    CHECKF(state == 'S', "the fault watcher is not asleep (state %c)", state ? state : '-');
    /* clock ticks: 10 ms; a polling thread would use most of a CPU */
    CHECKF(used <= 20 + wall / 10, "the fault watcher used %.0f ms CPU in %.0f ms", used, wall);
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}

/* src/core/wait.rs BLOCK_POLL, microseconds. */
#define BLOCK_POLL_US 20.0

/* Blocking waits: how many, how many ended within BLOCK_POLL, how many slept (made a
 * WAIT_EVENTS), and how many did both (which BlockingSync must never do). */
struct tally {
    int calls, fast, slept, slept_fast;
};

/* Runs `call` (a blocking wait) and counts it in `t`. */
#define TALLY(t, call)                                                                             \
    do {                                                                                           \
        uint64_t w_ = wait_events();                                                               \
        double t_ = wall_ms();                                                                     \
        HIP_OK(call);                                                                              \
        int fast_ = (wall_ms() - t_) * 1e3 < BLOCK_POLL_US, slept_ = wait_events() != w_;          \
        (t).calls++;                                                                               \
        (t).fast += fast_;                                                                         \
        (t).slept += slept_;                                                                       \
        (t).slept_fast += fast_ && slept_;                                                         \
    } while (0)

static void check_tally(const char *what, struct tally t)
{
    CHECKF(t.slept_fast == 0, "%s: %d of %d waits slept and still returned within %.0f us (%d slept)", what,
           t.slept_fast, t.calls, BLOCK_POLL_US, t.slept);
    /* Else nothing was short: the machine kept the engine off the CPU for all but a few. */
    CHECKF(t.fast >= t.calls / 10, "%s: only %d of %d waits ended within %.0f us", what, t.fast, t.calls,
           BLOCK_POLL_US);
}

/* BlockingSync polls for BLOCK_POLL (20 us) before it sleeps: a wait that sleeps has polled that
 * long first, so a wait that returns sooner made no WAIT_EVENTS (sleeping at once, the sim's
 * wake-up returns within a few us). Unheld 4 KiB copies and hipEventBlockingSync events after
 * memsets take a few us on kfd-sim, and so sleep only when the machine keeps the engine off
 * the CPU past the window. Held for 50 ms, the same waits sleep and use little CPU. */
TEST(wait_blocking_sync_polls_short_waits_and_sleeps_long_ones)
{
    require_sim_counters();
    unsigned f = 99;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync | hipDeviceMapHost));
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleBlockingSync);
    hipStream_t s;
    hipEvent_t ev;
    void *d = NULL;
    uint8_t *h = malloc(N), *back = malloc(N);
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipEventCreateWithFlags(&ev, hipEventBlockingSync));
    HIP_OK(hipMalloc(&d, N));
    for (int i = 0; i < 10; i++)
        copy_cycle(d, h, back, i);
    struct tally copies = {0}, events = {0};
    for (int i = 0; i < CYCLES; i++) {
        memset(h, i & 0xff, N);
        TALLY(copies, hipMemcpy(d, h, N, hipMemcpyHostToDevice));
        TALLY(copies, hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
        REQUIREF(memcmp(h, back, N) == 0, "cycle %d: bytes differ", i);
    }
    check_tally("BlockingSync hipMemcpy", copies);
    for (int i = 0; i < CYCLES; i++) {
        HIP_OK(hipMemsetAsync(d, i & 0xff, N, s));
        HIP_OK(hipEventRecord(ev, s));
        TALLY(events, hipEventSynchronize(ev));
    }
    check_tally("hipEventBlockingSync hipEventSynchronize", events);
    HIP_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
    CHECK(back[0] == (CYCLES - 1) && back[N - 1] == (CYCLES - 1));
    uint64_t waits;
    double cpu, wall;
    held_wait(s, NULL, 50, &waits, &cpu, &wall);
    check_slept("BlockingSync hipStreamSynchronize held 50 ms", 50, waits, cpu, wall);
    held_wait(s, ev, 50, &waits, &cpu, &wall);
    check_slept("hipEventBlockingSync held 50 ms", 50, waits, cpu, wall);
    HIP_OK(hipFree(d));
    HIP_OK(hipEventDestroy(ev));
    HIP_OK(hipStreamDestroy(s));
    free(h);
    free(back);
}

static void set_policy(hipStream_t s, hipSynchronizationPolicy p)
{
    hipStreamAttrValue v;
    memset(&v, 0, sizeof v);
    v.syncPolicy = p;
    HIP_OK(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &v));
}

TEST(wait_stream_sync_policy_overrides_the_device)
{
    require_sim_counters();
    hipStream_t spin, block;
    uint64_t waits;
    double cpu, wall;
    /* A BlockingSync stream on a Spin device sleeps. */
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
    HIP_OK(hipStreamCreate(&block));
    set_policy(block, hipSyncPolicyBlockingSync);
    held_wait(block, NULL, 200, &waits, &cpu, &wall);
    check_slept("hipSyncPolicyBlockingSync stream", 200, waits, cpu, wall);
    /* A Spin stream on a BlockingSync device polls; an Auto one follows the device. */
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
    HIP_OK(hipStreamCreate(&spin));
    set_policy(spin, hipSyncPolicySpin);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, N));
    uint64_t w0 = wait_events();
    for (int i = 0; i < CYCLES; i++) {
        HIP_OK(hipMemsetAsync(d, i & 0xff, N, spin));
        HIP_OK(hipStreamSynchronize(spin));
    }
    uint64_t n = wait_events() - w0;
    CHECKF(n == 0, "hipSyncPolicySpin stream on a BlockingSync device: %llu WAIT_EVENTS", (unsigned long long)n);
    /* A Spin stream's held wait polls: no WAIT_EVENTS, however long. */
    held_wait(spin, NULL, 50, &waits, &cpu, &wall);
    CHECKF(waits == 0, "hipSyncPolicySpin stream held 50 ms: %llu WAIT_EVENTS", (unsigned long long)waits);
    /* An Auto stream on a BlockingSync device blocks: held, it sleeps. */
    set_policy(spin, hipSyncPolicyAuto);
    held_wait(spin, NULL, 50, &waits, &cpu, &wall);
    check_slept("hipSyncPolicyAuto stream on a BlockingSync device", 50, waits, cpu, wall);
    HIP_OK(hipFree(d));
    HIP_OK(hipStreamDestroy(spin));
    HIP_OK(hipStreamDestroy(block));
}

TEST(wait_invalid_flags_change_nothing)
{
    unsigned f = 99;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
    CHECK_HIP(hipSetDeviceFlags(hipDeviceScheduleSpin | hipDeviceScheduleBlockingSync), hipErrorInvalidValue);
    CHECK_HIP(hipSetDeviceFlags(hipDeviceScheduleYield | 0x100), hipErrorInvalidValue);
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleBlockingSync);
    HIP_OK(hipDeviceReset());
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleAuto);
}

static void host_noop(void *arg)
{
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

/* The runtime's completion thread (hipkfd-waker) runs host functions once the work before them
 * is done: it polls briefly, then sleeps, so a host function behind held work costs no CPU while
 * it waits, whatever the device's policy. */
TEST(wait_completion_thread_sleeps_behind_long_work)
{
    hipStream_t s;
    int ran = 0;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
    HIP_OK(hipStreamCreate(&s));
    /* once, so that the thread exists */
    HIP_OK(hipLaunchHostFunc(s, host_noop, &ran));
    HIP_OK(hipStreamSynchronize(s));
    REQUIRE(ran == 1);
    double c0 = named_thread_cpu_ms("hipkfd-waker");
    if (c0 < 0)
        SKIP("no thread named hipkfd-waker");
    uint32_t *w = hold_word();
    hold(s, w);
    ran = 0;
    HIP_OK(hipLaunchHostFunc(s, host_noop, &ran));
    usleep(1000 * 1000);
    double used = named_thread_cpu_ms("hipkfd-waker") - c0;
    CHECK(__atomic_load_n(&ran, __ATOMIC_ACQUIRE) == 0);
    release(w);
    HIP_OK(hipStreamSynchronize(s));
    CHECK(ran == 1);
    /* a polling thread would use its whole share of a CPU: 1000 ms, or 100 ms at a load of 20 on 2 CPUs */
    CHECKF(used < 50, "the completion thread used %.0f ms CPU in a 1000 ms wait", used);
    HIP_OK(hipHostFree(w));
    HIP_OK(hipStreamDestroy(s));
}

/* Of `n` looks at the scheduler state of the thread named `name`, one every ms, how many found
 * it sleeping ('S'). */
static int sleeping_looks(const char *name, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        k += named_thread_state(name) == 'S';
        usleep(1000);
    }
    return k;
}

/* The runtime's syncobj waiter thread (hipkfd-syncobj, src/share/interop.rs) waits as the
 * waiting stream's policy says: for a hipSyncPolicySpin or Yield stream it polls the syncobj (runnable,
 * never asleep, SYNCOBJ_TIMELINE_WAITs with timeout 0: no wake-up between the signal and the
 * GPU), for an Auto stream (the default) it sleeps in one SYNCOBJ_TIMELINE_WAIT; once no polled
 * wait is pending it sleeps again. Either way the copy behind the wait runs after the signal
 * only. (Thread states, not counts of looks: a polling thread on a loaded machine may get
 * little CPU, but it stays runnable.) */
TEST(wait_external_semaphore_follows_the_stream_policy)
{
    require_sim_counters();
    struct producer p = producer_open(0);
    uint8_t *pinned, *d, back[N];
    HIP_OK(hipHostMalloc((void **)&pinned, N, 0));
    HIP_OK(hipMalloc((void **)&d, N));
    const hipSynchronizationPolicy policy[3] = {hipSyncPolicyAuto, hipSyncPolicySpin, hipSyncPolicyYield};
    for (int k = 0; k < 3; k++) {
        const char *what = k == 0 ? "Auto" : k == 1 ? "hipSyncPolicySpin" : "hipSyncPolicyYield";
        int spin = k > 0;
        int sfd;
        uint32_t h = psync_create(&p, &sfd);
        hipExternalSemaphore_t s = import_sem(sfd, 1);
        hipStream_t st;
        HIP_OK(hipStreamCreateWithFlags(&st, hipStreamNonBlocking));
        set_policy(st, policy[k]);
        HIP_OK(hipMemset(d, 0, N));
        memset(pinned, 3 + k, N);
        uint64_t c0 = kfdsim_counter("calls.SYNCOBJ_TIMELINE_WAIT");
        HIP_OK(sem_wait(s, 1, st));
        HIP_OK(hipMemcpyAsync(d, pinned, N, hipMemcpyHostToDevice, st));
        usleep(10 * 1000);
        int asleep = sleeping_looks("hipkfd-syncobj", 40);
        uint64_t looks = kfdsim_counter("calls.SYNCOBJ_TIMELINE_WAIT") - c0;
        CHECK_HIP(hipStreamQuery(st), hipErrorNotReady);
        if (spin) {
            CHECKF(asleep <= 4, "%s: the waiter thread slept in %d of 40 looks (it must poll)", what, asleep);
        } else {
            CHECKF(asleep >= 36, "%s: the waiter thread slept in %d of 40 looks only", what, asleep);
            CHECKF(looks <= 4, "%s: %llu SYNCOBJ_TIMELINE_WAITs while one wait is pending", what,
                   (unsigned long long)looks);
        }
        HIP_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
        CHECK_BYTES(back, N, 0);
        psync_signal(&p, h, 1);
        HIP_OK(hipStreamSynchronize(st));
        HIP_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
        CHECK_BYTES(back, N, 3 + k);
        /* nothing pending: the thread sleeps again, whatever the last wait's policy was */
        double t0 = wall_ms();
        while (named_thread_state("hipkfd-syncobj") != 'S' && wall_ms() - t0 < 2000)
            usleep(1000);
        uint64_t c1 = kfdsim_counter("calls.SYNCOBJ_TIMELINE_WAIT");
        asleep = sleeping_looks("hipkfd-syncobj", 20);
        looks = kfdsim_counter("calls.SYNCOBJ_TIMELINE_WAIT") - c1;
        CHECKF(asleep >= 18 && looks <= 1, "%s, no wait pending: asleep in %d of 20 looks, %llu waits", what,
               asleep, (unsigned long long)looks);
        HIP_OK(hipDestroyExternalSemaphore(s));
        HIP_OK(hipStreamDestroy(st));
    }
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(pinned));
    producer_close(&p);
}
