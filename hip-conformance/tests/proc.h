/*
 * Process plumbing shared by the multi-process tests (test_ipc.c, test_wrap.c):
 * a forked peer that runs like a test, joined with a timeout, and a socketpair
 * to talk to it. Fork peers BEFORE any HIP call in the test process.
 */
#ifndef HIPCONF_PROC_H
#define HIPCONF_PROC_H

#include "common.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct peer {
    pid_t pid;
    int fd; /* our end of the socketpair */
};

typedef void (*peer_fn)(int fd, void *arg);

/* Forks a process that runs fn(fd, arg) and ends like a test (exit 0/1). */
static inline struct peer spawn(peer_fn fn, void *arg)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        fn(sv[1], arg);
        hc_end_test();
    }
    close(sv[1]);
    struct peer p = {pid, sv[0]};
    return p;
}

/* Waits (at most timeout_s) for a peer and CHECKs that it passed. */
static inline void join_timeout(struct peer *p, const char *what, double timeout_s)
{
    double t0 = hc_now_ms();
    int st = 0;
    for (;;) {
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid)
            break;
        if (hc_now_ms() - t0 > timeout_s * 1e3) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
            hc_fail(__FILE__, __LINE__, "%s did not finish in %.0f s", what, timeout_s);
            close(p->fd);
            return;
        }
        usleep(2000);
    }
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status 0x%x)", what, st);
    close(p->fd);
}

static inline void join(struct peer *p, const char *what)
{
    join_timeout(p, what, 50);
}

/* SIGKILLs a peer, reaps it (CHECKs that the signal ended it) and closes our end. */
static inline void kill_and_reap(struct peer *p)
{
    int st = 0;
    REQUIRE(kill(p->pid, SIGKILL) == 0);
    REQUIRE(waitpid(p->pid, &st, 0) == p->pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    close(p->fd);
}

static inline void xsend(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        REQUIREF(k > 0, "send: %s", strerror(errno));
        p += k;
        n -= (size_t)k;
    }
}

/* Receives exactly n bytes within timeout_ms (-1: no limit; the harness's timeout bounds the
 * test), or ends the test. */
static inline void xrecv_within(int fd, void *buf, size_t n, int timeout_ms)
{
    char *p = buf;
    while (n) {
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        REQUIREF(r == 1, "peer did not answer in %d ms", timeout_ms);
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        REQUIREF(k > 0, "peer hung up");
        p += k;
        n -= (size_t)k;
    }
}

/* Receives exactly n bytes within 30 s, or ends the test. */
static inline void xrecv(int fd, void *buf, size_t n) { xrecv_within(fd, buf, n, 30000); }

/* A u64 with no time limit (a peer that works for as long as the test runs). */
static inline uint64_t recv_u64_untimed(int fd)
{
    uint64_t v;
    xrecv_within(fd, &v, sizeof v, -1);
    return v;
}

static inline void send_u64(int fd, uint64_t v) { xsend(fd, &v, sizeof v); }
static inline uint64_t recv_u64(int fd)
{
    uint64_t v;
    xrecv(fd, &v, sizeof v);
    return v;
}

/* The importer's device: the last one (≠ the exporter's device 0 when there are 2). */
static inline int importer_device(void)
{
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    HIP_OK(hipSetDevice(n - 1));
    return n - 1;
}

/* Sends the IPC handles of event ev and of the allocation p to a peer. */
static inline void send_event_and_mem(int fd, hipEvent_t ev, void *p)
{
    hipIpcEventHandle_t he;
    hipIpcMemHandle_t hm;
    HIP_OK(hipIpcGetEventHandle(&he, ev));
    HIP_OK(hipIpcGetMemHandle(&hm, p));
    xsend(fd, &he, sizeof he);
    xsend(fd, &hm, sizeof hm);
}

/* The peer side of send_event_and_mem: selects importer_device() and opens both. */
static inline void recv_event_and_mem(int fd, hipEvent_t *ev, void **p)
{
    hipIpcEventHandle_t he;
    hipIpcMemHandle_t hm;
    xrecv(fd, &he, sizeof he);
    xrecv(fd, &hm, sizeof hm);
    importer_device();
    HIP_OK(hipIpcOpenEventHandle(ev, he));
    HIP_OK(hipIpcOpenMemHandle(p, hm, hipIpcMemLazyEnablePeerAccess));
}

#endif
