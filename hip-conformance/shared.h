/*
 * Small helpers shared by the VMM tests, the VMM benchmark and the reliability drivers.
 */
#ifndef HIPCONF_SHARED_H
#define HIPCONF_SHARED_H

#include <hip/hip_runtime_api.h>
#include <dirent.h>
#include <string.h>

/* Pinned device memory of `dev`, exportable as a POSIX fd. */
static inline hipMemAllocationProp vmm_device_prop(int dev)
{
    hipMemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = hipMemAllocationTypePinned;
    p.requestedHandleTypes = hipMemHandleTypePosixFileDescriptor;
    p.location.type = hipMemLocationTypeDevice;
    p.location.id = dev;
    return p;
}

/* Entries of /proc/self/fd (the open fds, plus the directory's own), -1 if unreadable. */
static inline int open_fd_count(void)
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
