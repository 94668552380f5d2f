/*
 * Wait policies (src/core/wait.rs): hipSetDeviceFlags' schedule, hipEventBlockingSync events and
 * a stream's hipSynchronizationPolicy choose how a host thread waits for GPU work. Polling waits
 * (Spin, Yield, Auto) make no sleeping AMDKFD_IOC_WAIT_EVENTS: only the fault check, a
 * non-blocking one per FAULT_POLL (100 ms) of waiting, which a loaded machine reaches (each
 * cycle's allowance is its wall time / 100 ms, rounded down: a fast cycle gets none, so a
 * sleeping wait still fails the check); blocking waits that are not done at once
 * sleep in it and use little CPU. Counted with kfd-sim's per-call counters
 * (kfdsim_stat("calls.WAIT_EVENTS"), kfd-sim/src/calls.rs) and getrusage(RUSAGE_THREAD).
 * The flag checks themselves: test_device_extra.c (hipDeviceFlags_set_get).
 */
#define _GNU_SOURCE
#include "common.h"
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

/* A 4 KiB pageable copy up and back down, then a sync of the null stream; checks the bytes. */
static void copy_cycle(void *d, uint8_t *h, uint8_t *back, int i)
{
    memset(h, i & 0xff, N);
    HIP_OK(hipMemcpy(d, h, N, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(back, d, N, hipMemcpyDeviceToHost));
    HIP_OK(hipStreamSynchronize(NULL));
    REQUIREF(memcmp(h, back, N) == 0, "cycle %d: bytes differ", i);
}

/* The fault checks a polling wait of `ms` milliseconds may make (wait.rs FAULT_POLL). */
static uint64_t fault_polls(double ms)
{
    return (uint64_t)(ms / 100.0);
}

/* WAIT_EVENTS made by CYCLES copy cycles after a warm-up, under the current flags, less the
 * fault checks their wall times allow. */
static uint64_t cycles_wait_events(void)
{
    void *d = NULL;
    uint8_t *h = malloc(N), *back = malloc(N);
    HIP_OK(hipMalloc(&d, N));
    for (int i = 0; i < 10; i++)
        copy_cycle(d, h, back, i);
    uint64_t w0 = wait_events(), allowed = 0;
    for (int i = 0; i < CYCLES; i++) {
        double t0 = wall_ms();
        copy_cycle(d, h, back, i);
        allowed += fault_polls(wall_ms() - t0);
    }
    uint64_t n = wait_events() - w0;
    n = n > allowed ? n - allowed : 0;
    HIP_OK(hipFree(d));
    free(h);
    free(back);
    return n;
}

static void require_sim_counters(void)
{
    HIP_OK(hipInit(0));
    if (kfdsim_counter("calls.total") == 0)
        SKIP("not under kfdsim: no per-call counters");
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

TEST(wait_blocking_sync_copies_sleep)
{
    require_sim_counters();
    unsigned f = 99;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync | hipDeviceMapHost));
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleBlockingSync);
    /* The copies take tens of microseconds on kfd-sim: their waits are not done at once. */
    uint64_t n = cycles_wait_events();
    CHECKF(n >= 1, "BlockingSync: no WAIT_EVENTS in %d copy + sync cycles", CYCLES);
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

/* Work on `s` held for ~200 ms: the WAIT_EVENTS made and the CPU used by `sync` waiting for it,
 * and its wall time. With `ev`, the event is recorded after the held work and `sync` is
 * hipEventSynchronize on it; else hipStreamSynchronize(s). */
static void held_wait(hipStream_t s, hipEvent_t ev, uint64_t *waits, double *cpu, double *wall)
{
    void *d = NULL;
    uint32_t *w = hold_word();
    HIP_OK(hipMalloc(&d, N));
    hold(s, w);
    HIP_OK(hipMemsetAsync(d, 0x3c, N, s));
    if (ev)
        HIP_OK(hipEventRecord(ev, s));
    struct release_later r = {w, 200};
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

static void check_slept(const char *what, uint64_t waits, double cpu, double wall)
{
    CHECKF(wall >= 100, "%s: returned after %.1f ms, before the work was released", what, wall);
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
    held_wait(s, NULL, &waits, &cpu, &wall);
    check_slept("BlockingSync hipStreamSynchronize", waits, cpu, wall);
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
    held_wait(s, blocking, &waits, &cpu, &wall);
    check_slept("hipEventBlockingSync event", waits, cpu, wall);
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
    held_wait(block, NULL, &waits, &cpu, &wall);
    check_slept("hipSyncPolicyBlockingSync stream", waits, cpu, wall);
    /* A Spin stream on a BlockingSync device polls; an Auto one follows the device. */
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
    HIP_OK(hipStreamCreate(&spin));
    set_policy(spin, hipSyncPolicySpin);
    void *d = NULL;
    HIP_OK(hipMalloc(&d, N));
    uint64_t w0 = wait_events(), allowed = 0;
    for (int i = 0; i < CYCLES; i++) {
        double t0 = wall_ms();
        HIP_OK(hipMemsetAsync(d, i & 0xff, N, spin));
        HIP_OK(hipStreamSynchronize(spin));
        allowed += fault_polls(wall_ms() - t0);
    }
    uint64_t n = wait_events() - w0;
    n = n > allowed ? n - allowed : 0;
    CHECKF(n == 0, "hipSyncPolicySpin stream on a BlockingSync device: %llu WAIT_EVENTS", (unsigned long long)n);
    set_policy(spin, hipSyncPolicyAuto);
    w0 = wait_events();
    for (int i = 0; i < CYCLES; i++) {
        HIP_OK(hipMemsetAsync(d, i & 0xff, N, spin));
        HIP_OK(hipStreamSynchronize(spin));
    }
    n = wait_events() - w0;
    CHECKF(n >= 1, "hipSyncPolicyAuto stream on a BlockingSync device: no WAIT_EVENTS");
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

/* CPU time (ms) of this process's thread named `name` (/proc/self/task/<tid>/stat), -1 if none. */
static double named_thread_cpu_ms(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    double ms = -1;
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
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            ms = (double)(ut + st) * 1000.0 / (double)tick;
    }
    closedir(d);
    return ms;
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
