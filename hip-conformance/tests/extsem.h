/*
 * HIP's side of external semaphores on DRM syncobj fds (test_interop.c, test_death_sync.c):
 * import, and one wait or signal queued on a stream.
 */
#ifndef HIPCONF_EXTSEM_H
#define HIPCONF_EXTSEM_H

#include "common.h"

/* Imports syncobj fd `fd` (the runtime owns it from then on) as a binary or timeline semaphore. */
static inline hipExternalSemaphore_t import_sem(int fd, int timeline)
{
    hipExternalSemaphoreHandleDesc d;
    hipExternalSemaphore_t s = NULL;
    memset(&d, 0, sizeof d);
    d.type = timeline ? hipExternalSemaphoreHandleTypeTimelineSemaphoreFd : hipExternalSemaphoreHandleTypeOpaqueFd;
    d.handle.fd = fd;
    HIP_OK(hipImportExternalSemaphore(&s, &d));
    return s;
}

/* Later work on `st` waits for `s` (at timeline point `v`; ignored for a binary one). */
static inline hipError_t sem_wait(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
    hipExternalSemaphoreWaitParams p;
    memset(&p, 0, sizeof p);
    p.params.fence.value = v;
    return hipWaitExternalSemaphoresAsync(&s, &p, 1, st);
}

/* `s` is signalled (moved to point `v`) once the work queued on `st` so far is done. */
static inline hipError_t sem_signal(hipExternalSemaphore_t s, uint64_t v, hipStream_t st)
{
    hipExternalSemaphoreSignalParams p;
    memset(&p, 0, sizeof p);
    p.params.fence.value = v;
    return hipSignalExternalSemaphoresAsync(&s, &p, 1, st);
}

#endif
