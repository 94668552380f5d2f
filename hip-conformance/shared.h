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

#endif
