/*
 * Small helpers shared by the VMM tests, the VMM benchmark and the reliability drivers.
 */
#ifndef HIPCONF_SHARED_H
#define HIPCONF_SHARED_H

#include <hip/hip_runtime_api.h>
#include "fdcount.h"
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* One counter of kfd-sim's accounting for this process (kfdsim_stat, found with dlsym; see
 * kfd-sim/src/stats.rs for the keys), 0 without kfd-sim. */
static inline uint64_t kfdsim_counter(const char *key)
{
    uint64_t (*f)(const char *) = (uint64_t(*)(const char *))dlsym(RTLD_DEFAULT, "kfdsim_stat");
    return f ? f(key) : 0;
}

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

/* Access `f` for device `dev`, for hipMemSetAccess. */
static inline hipMemAccessDesc vmm_access_desc(int dev, hipMemAccessFlags f)
{
    hipMemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = hipMemLocationTypeDevice;
    d.location.id = dev;
    d.flags = f;
    return d;
}

/* The descriptor that imports dma-buf `fd` (`size` bytes) with hipImportExternalMemory. */
static inline hipExternalMemoryHandleDesc dmabuf_import_desc(int fd, unsigned long long size)
{
    hipExternalMemoryHandleDesc d;
    memset(&d, 0, sizeof d);
    d.type = hipExternalMemoryHandleTypeOpaqueFd;
    d.handle.fd = fd;
    d.size = size;
    return d;
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
