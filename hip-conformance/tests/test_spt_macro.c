/*
 * Our hip_runtime_api.h under HIP_API_PER_THREAD_DEFAULT_STREAM (what hipcc's
 * -fgpu-default-stream=per-thread defines; ROCm's amd_hip_runtime_pt_api.h): the stream-ordered
 * calls of this file go to their _spt entry points, so its default stream is the per-thread
 * stream. Names start with "spt_".
 */
#define HIP_API_PER_THREAD_DEFAULT_STREAM 1
#include "common.h"

TEST(spt_header_renames_calls_to_spt)
{
    /* the names are the _spt entry points */
    CHECK((void *)hipMemcpy == (void *)hipMemcpy_spt);
    CHECK((void *)hipStreamGetCaptureInfo_v2 == (void *)hipStreamGetCaptureInfo_v2_spt);
    CHECK((void *)hipLaunchKernel == (void *)hipLaunchKernel_spt);
    /* hipStreamGetFlags(NULL) is refused by the plain call, answered by the _spt one */
    unsigned flags = 77;
    HIP_OK(hipStreamGetFlags(NULL, &flags));
    CHECK(flags == hipStreamDefault);
    /* the null stream of these calls is the per-thread stream: held, it holds hipMemcpy */
    enum { N = 4096 };
    uint32_t *w = NULL;
    uint8_t *d = NULL, *h = NULL, *out = xmalloc(N);
    HIP_OK(hipHostMalloc((void **)&w, 64, 0));
    HIP_OK(hipHostMalloc((void **)&h, N, 0));
    HIP_OK(hipMalloc((void **)&d, N));
    pat_fill(h, N, 61);
    __atomic_store_n(w, 0, __ATOMIC_RELEASE);
    HIP_OK(hipStreamWaitValue32(hipStreamPerThread, w, 1, hipStreamWaitValueGte, ~0u));
    HIP_OK(hipMemcpyAsync(d, h, N, hipMemcpyHostToDevice, NULL));
    CHECK_HIP(hipStreamQuery(NULL), hipErrorNotReady);
    __atomic_store_n(w, 1, __ATOMIC_RELEASE);
    HIP_OK(hipMemcpy(out, d, N, hipMemcpyDeviceToHost));
    CHECK_PATTERN(out, N, 61);
    HIP_OK(hipStreamQuery(hipStreamPerThread));
    free(out);
}
