/*
 * The number of open file descriptors of the calling process (entries of
 * /proc/self/fd, the directory's own fd included), for the leak checks of the
 * tests and benchmarks. -1 when /proc is not there.
 */
#ifndef HIPCONF_FDCOUNT_H
#define HIPCONF_FDCOUNT_H

#include <dirent.h>

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

#endif
