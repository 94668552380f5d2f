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

/* Prints each open fd and what it names ("fd 7 -> /dev/kfd"), prefixed by `tag`: for leak reports. */
static inline void fd_list(const char *tag)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[288], target[256];
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n < 0 ? 0 : n] = 0;
        printf("%sfd %s -> %s\n", tag, e->d_name, target);
    }
    closedir(d);
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
