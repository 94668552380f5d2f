/*
 * hipkfd C conformance suite: test runner.
 *
 * The runner (parent) never calls HIP. For each selected test it forks a child,
 * which becomes its own process group, runs the test body and exits with
 * 0 (passed), 1 (failed) or 77 (skipped). A child killed by a signal failed;
 * a child still running after the timeout is killed with its whole process
 * group and failed.
 *
 * Usage: hip-conformance [--list] [--timeout=SECONDS] [FILTER...]
 *   FILTER  run only the tests whose name contains one of the FILTER strings.
 *   HIPCONF_TIMEOUT=SECONDS sets the default timeout (60 s).
 *   HIPCONF_DATA_LIMIT_MB caps each test's host data (RLIMIT_DATA, default 8192 MiB).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HC_EXIT_PASS 0
#define HC_EXIT_FAIL 1
#define HC_EXIT_SKIP 77

static struct hc_test *hc_head;
static struct hc_test **hc_tail = &hc_head;

void hc_register(struct hc_test *t)
{
    t->next = NULL;
    *hc_tail = t;
    hc_tail = &t->next;
}

/* ---- child side ---------------------------------------------------------- */

static int hc_failures;
static const char *hc_current;

void hc_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    hc_failures++;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

#ifdef __SANITIZE_ADDRESS__
/* `make asan`: LeakSanitizer runs at exit(3), but tests end with _exit: check here. */
int __lsan_do_recoverable_leak_check(void);
#endif

static int hc_leak_check = 1;

void hc_no_leak_check(void) { hc_leak_check = 0; }

void hc_end_test(void)
{
#ifdef __SANITIZE_ADDRESS__
    if (hc_leak_check && __lsan_do_recoverable_leak_check())
        hc_fail(__FILE__, __LINE__, "LeakSanitizer found leaks (above)");
#endif
    fflush(stdout);
    fflush(stderr);
    _exit(hc_failures ? HC_EXIT_FAIL : HC_EXIT_PASS);
}

void hc_skip(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    (void)file;
    (void)line;
    fprintf(stdout, "    skipped: ");
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    /* A test that already failed before deciding to skip stays failed. */
    _exit(hc_failures ? HC_EXIT_FAIL : HC_EXIT_SKIP);
}

int hc_check_hip(const char *file, int line, const char *expr, hipError_t got,
                 hipError_t expected)
{
    if (got == expected)
        return 1;
    hc_fail(file, line, "%s returned %d (%s), expected %d (%s)", expr, (int)got,
            hipGetErrorName(got), (int)expected, hipGetErrorName(expected));
    return 0;
}

int hc_device_count(void)
{
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess)
        return 0;
    return n;
}

double hc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Caps the child's data segment and private writable mappings (RLIMIT_DATA;
 * HIPCONF_DATA_LIMIT_MB, default 8192, 0 = no cap), so that a runaway host
 * allocation fails its test instead of driving the machine into the OOM killer.
 * GPU memory (shared mappings) and reserved VA do not count against it. */
static void hc_limit_data(void)
{
    const char *env = getenv("HIPCONF_DATA_LIMIT_MB");
    long mb = env ? atol(env) : 8192;
    if (mb <= 0)
        return;
    struct rlimit rl = {(rlim_t)mb << 20, (rlim_t)mb << 20};
    struct rlimit cur;
    if (getrlimit(RLIMIT_DATA, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
        rl.rlim_cur = rl.rlim_max = cur.rlim_max;
    setrlimit(RLIMIT_DATA, &rl);
}

static void hc_run_child(struct hc_test *t)
{
    hc_current = t->name;
    hc_failures = 0;
    hc_limit_data();
    t->fn();
    hc_end_test();
}

/* ---- parent side --------------------------------------------------------- */

enum hc_result { HC_PASS, HC_FAIL, HC_SKIP };

static void hc_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static enum hc_result hc_run_one(struct hc_test *t, double timeout_s)
{
    double start = hc_now_ms();
    pid_t pid;
    int status = 0;
    long nap = 1;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        printf("FAIL %s: fork: %s\n", t->name, strerror(errno));
        return HC_FAIL;
    }
    if (pid == 0) {
        setpgid(0, 0);
        hc_run_child(t);
    }
    setpgid(pid, pid);

    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            printf("FAIL %s: waitpid: %s\n", t->name, strerror(errno));
            return HC_FAIL;
        }
        if (hc_now_ms() - start > timeout_s * 1e3) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            printf("FAIL %s: timed out after %.0f s\n", t->name, timeout_s);
            return HC_FAIL;
        }
        hc_sleep_ms(nap);
        if (nap < 20)
            nap *= 2;
    }
    /* Reap anything the test left running in its process group. */
    kill(-pid, SIGKILL);

    double ms = hc_now_ms() - start;
    if (WIFSIGNALED(status)) {
        printf("FAIL %s: killed by signal %d (%s) (%.0f ms)\n", t->name, WTERMSIG(status),
               strsignal(WTERMSIG(status)), ms);
        return HC_FAIL;
    }
    switch (WEXITSTATUS(status)) {
    case HC_EXIT_PASS:
        printf("PASS %s (%.0f ms)\n", t->name, ms);
        return HC_PASS;
    case HC_EXIT_SKIP:
        printf("SKIP %s\n", t->name);
        return HC_SKIP;
    case HC_EXIT_FAIL:
        printf("FAIL %s (%.0f ms)\n", t->name, ms);
        return HC_FAIL;
    default:
        printf("FAIL %s: exited with status %d (%.0f ms)\n", t->name, WEXITSTATUS(status), ms);
        return HC_FAIL;
    }
}

static int hc_selected(const struct hc_test *t, int nfilters, char **filters)
{
    if (nfilters == 0)
        return 1;
    for (int i = 0; i < nfilters; i++)
        if (strstr(t->name, filters[i]))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    double timeout_s = 60;
    int list = 0;
    char **filters = calloc((size_t)argc + 1, sizeof(char *));
    int nfilters = 0;
    int passed = 0, failed = 0, skipped = 0;
    const char *env = getenv("HIPCONF_TIMEOUT");

    if (!filters)
        return 2;
    if (env && atof(env) > 0)
        timeout_s = atof(env);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0)
            list = 1;
        else if (strncmp(argv[i], "--timeout=", 10) == 0 && atof(argv[i] + 10) > 0)
            timeout_s = atof(argv[i] + 10);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--list] [--timeout=SECONDS] [FILTER...]\n", argv[0]);
            free(filters);
            return 0;
        } else
            filters[nfilters++] = argv[i];
    }

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (struct hc_test *t = hc_head; t; t = t->next) {
        if (!hc_selected(t, nfilters, filters))
            continue;
        if (list) {
            printf("%s\n", t->name);
            continue;
        }
        switch (hc_run_one(t, timeout_s)) {
        case HC_PASS:
            passed++;
            break;
        case HC_FAIL:
            failed++;
            break;
        case HC_SKIP:
            skipped++;
            break;
        }
    }
    free(filters);
    if (list)
        return 0;
    if (skipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
