/*
 * Passing file descriptors between processes over a Unix socket (SCM_RIGHTS),
 * for the tests, examples and benchmarks that share dma-bufs.
 *
 *   fdpass_send(sock, fds, n)  sends one byte carrying n fds; returns 1 on success
 *   fdpass_recv(sock, fds, n)  receives exactly n fds; returns 1 on success
 */
#ifndef HIPCONF_FDPASS_H
#define HIPCONF_FDPASS_H

#include <string.h>
#include <sys/socket.h>

#define FDPASS_MAX 64

static inline int fdpass_send(int sock, const int *fds, int n)
{
    char byte = 'f';
    struct iovec iov = {&byte, 1};
    char cbuf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
    struct msghdr m;
    if (n < 1 || n > FDPASS_MAX)
        return 0;
    memset(cbuf, 0, sizeof cbuf);
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = cbuf;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    return sendmsg(sock, &m, 0) == 1;
}

static inline int fdpass_recv(int sock, int *fds, int n)
{
    char byte = 0;
    struct iovec iov = {&byte, 1};
    char cbuf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
    struct msghdr m;
    if (n < 1 || n > FDPASS_MAX)
        return 0;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = cbuf;
    m.msg_controllen = sizeof cbuf;
    if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
        return 0;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * n))
        return 0;
    memcpy(fds, CMSG_DATA(c), sizeof(int) * n);
    return 1;
}

#endif /* HIPCONF_FDPASS_H */
