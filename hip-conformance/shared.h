/*
 * Small helpers shared by the VMM tests, the VMM benchmark and the reliability drivers.
 */
#ifndef HIPCONF_SHARED_H
#define HIPCONF_SHARED_H

#include <hip/hip_runtime_api.h>
#include "fdcount.h"
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

/* Gives the runtime's empty sub-allocation blocks back to the kernel (hipMemGetInfo frees every
 * empty 2 MiB block of small hipMallocs), so that the sim's BO and VRAM counters show exactly what
 * the program still holds: call before taking a leak baseline and before comparing with it. */
static inline void release_cached_blocks(void)
{
    size_t free_bytes, total_bytes;
    (void)hipMemGetInfo(&free_bytes, &total_bytes);
}

#endif
