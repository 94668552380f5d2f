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
