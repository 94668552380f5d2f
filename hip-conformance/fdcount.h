/*
 * The number of open file descriptors of the calling process (entries of
 * /proc/self/fd, the directory's own fd included), for the leak checks of the
 * tests and benchmarks. -1 when /proc is not there. And fields of
 * /proc/self/status (VmRSS, ...).
 */
#ifndef HIPCONF_FDCOUNT_H
#define HIPCONF_FDCOUNT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Writes each open fd and what it names ("fd 7 -> /dev/kfd"), a line each prefixed by `tag`, into
 * `out` (`size` bytes, NUL-terminated, cut short when full): for leak reports, which print the
 * baseline's list beside the current one. */
static inline void fd_list_into(const char *tag, char *out, size_t size)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[288], target[256];
    size_t used = 0;
    if (size)
        out[0] = 0;
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n < 0 ? 0 : n] = 0;
        if (used < size)
            used += (size_t)snprintf(out + used, size - used, "%sfd %s -> %s\n", tag, e->d_name, target);
    }
    closedir(d);
}

/* Prints each open fd and what it names, prefixed by `tag`: for leak reports. */
static inline void fd_list(const char *tag)
{
    char buf[16384];
    fd_list_into(tag, buf, sizeof buf);
    fputs(buf, stdout);
}

/* A "Name:   N kB" field of /proc/self/status (KiB), -1 if absent. */
static inline long status_kib(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            kib = atol(line + n + 1);
            break;
        }
    if (f)
        fclose(f);
    return kib;
}

#endif
