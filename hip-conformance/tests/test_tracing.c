/*
 * Tracing, profiling and small ABI entry points: hipApiName (clr hip_api_name over
 * hip_prof_str.h's ids), hipGetCmdName (rocclr getOclCommandKindString), hipProfilerStart/Stop,
 * hipExtGetLastError, the tracer hook and HIP 5.2's callback/activity entry points (no tracing
 * layer here: registering says hipErrorNotSupported), the context cache/shared-memory
 * configuration and flags (a context is its device), the IEEE half conversions
 * __gnu_f2h_ieee/__gnu_h2f_ieee, __hipGetPCH and the amd_dbgapi build description.
 */
#define _GNU_SOURCE
#include "common.h"

#include <math.h>
#include <stdbool.h>

/* Exported by libamdhip64 but, as in AMD's headers, not declared in hip_runtime_api.h. */
const char *hipGetCmdName(unsigned op);
void hipRegisterTracerCallback(int (*function)(uint32_t domain, uint32_t operation_id, void *data));
hipError_t hipRegisterApiCallback(uint32_t id, void *fun, void *arg);
hipError_t hipRemoveApiCallback(uint32_t id);
hipError_t hipRegisterActivityCallback(uint32_t id, void *fun, void *arg);
hipError_t hipRemoveActivityCallback(uint32_t id);
void hipInitActivityCallback(void *id_callback, void *op_callback, void *arg);
bool hipEnableActivityCallback(uint32_t op, bool enable);
unsigned short __gnu_f2h_ieee(float f);
float __gnu_h2f_ieee(unsigned short h);
void __hipGetPCH(const char **pch, unsigned int *size);
const char *amd_dbgapi_get_build_name(void);
const char *amd_dbgapi_get_git_hash(void);
size_t amd_dbgapi_get_build_id(void);

TEST(trace_api_names)
{
    CHECK(strcmp(hipApiName(1), "__hipPopCallConfiguration") == 0);
    CHECK(strcmp(hipApiName(108), "hipMalloc") == 0);
    CHECK(strcmp(hipApiName(125), "hipMemcpy") == 0);
    CHECK(strcmp(hipApiName(206), "hipCreateSurfaceObject") == 0);
    CHECK(strcmp(hipApiName(379), "hipExtGetLastError") == 0);
    CHECK(strcmp(hipApiName(446), "hipModuleGetLoadingMode") == 0);
    /* HIP_API_ID_NONE, reserved ids and ids past the last are "unknown", as clr */
    CHECK(strcmp(hipApiName(0), "unknown") == 0);
    CHECK(strcmp(hipApiName(50), "unknown") == 0);
    CHECK(strcmp(hipApiName(407), "unknown") == 0);
    CHECK(strcmp(hipApiName(447), "unknown") == 0);
    CHECK(strcmp(hipApiName(0xffffffffu), "unknown") == 0);
}

TEST(trace_cmd_names)
{
    CHECK(strcmp(hipGetCmdName(0x11F0), "KernelExecution") == 0);
    CHECK(strcmp(hipGetCmdName(0x11F3), "CopyDeviceToHost") == 0);
    CHECK(strcmp(hipGetCmdName(0x1203), "CopyDeviceToDevice2D") == 0);
    CHECK(strcmp(hipGetCmdName(0x1207), "FillBuffer") == 0);
    CHECK(strcmp(hipGetCmdName(0x4501), "StreamWait") == 0);
    CHECK(strcmp(hipGetCmdName(0), "InternalMarker") == 0);
    CHECK(strcmp(hipGetCmdName(0x1234), "Unknown command kind") == 0);
}

static int tracer_calls;
static int count_tracer(uint32_t domain, uint32_t op, void *data)
{
    (void)domain, (void)op, (void)data;
    return ++tracer_calls;
}
static void count_api(void) { tracer_calls++; }

TEST(trace_callbacks_are_not_supported)
{
    /* No tracing layer: registering a callback says so; nothing is ever called. */
    CHECK_HIP(hipRegisterApiCallback(108, (void *)count_api, NULL), hipErrorNotSupported);
    CHECK_HIP(hipGetLastError(), hipErrorNotSupported);
    CHECK_HIP(hipRegisterActivityCallback(108, (void *)count_api, NULL), hipErrorNotSupported);
    CHECK_HIP(hipRegisterApiCallback(0, (void *)count_api, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipRegisterApiCallback(447, (void *)count_api, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipRegisterActivityCallback(100000, (void *)count_api, NULL), hipErrorInvalidValue);
    /* Nothing registered, so removing leaves none: success for a valid id. */
    CHECK_HIP(hipRemoveApiCallback(108), hipSuccess);
    CHECK_HIP(hipRemoveActivityCallback(108), hipSuccess);
    CHECK_HIP(hipRemoveApiCallback(0), hipErrorInvalidValue);
    CHECK_HIP(hipRemoveActivityCallback(447), hipErrorInvalidValue);
    /* Activity records cannot be turned on; off succeeds for the three op kinds. */
    hipInitActivityCallback((void *)count_api, (void *)count_api, NULL);
    for (uint32_t op = 0; op < 3; op++) {
        CHECK(!hipEnableActivityCallback(op, true));
        CHECK(hipEnableActivityCallback(op, false));
    }
    CHECK(!hipEnableActivityCallback(3, false));
    hipRegisterTracerCallback(count_tracer);
    void *p;
    HIP_OK(hipMalloc(&p, 4096));
    HIP_OK(hipMemset(p, 1, 4096));
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipFree(p));
    CHECK(tracer_calls == 0);
    hipRegisterTracerCallback(NULL);
}

TEST(trace_profiler_start_stop)
{
    CHECK_HIP(hipProfilerStart(), hipSuccess);
    CHECK_HIP(hipProfilerStop(), hipSuccess);
    CHECK_HIP(hipProfilerStop(), hipSuccess);
}

TEST(trace_ext_get_last_error_returns_and_resets)
{
    CHECK_HIP(hipExtGetLastError(), hipSuccess);
    CHECK_HIP(hipMalloc(NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipPeekAtLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipExtGetLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipExtGetLastError(), hipSuccess);
    CHECK_HIP(hipGetLastError(), hipSuccess);
}

TEST(trace_ctx_cache_config_is_the_devices)
{
    int n = hc_device_count();
    hipFuncCache_t c = hipFuncCachePreferNone;
    HIP_OK(hipCtxGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferNone);
    HIP_OK(hipCtxSetCacheConfig(hipFuncCachePreferL1));
    HIP_OK(hipCtxGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferL1);
    HIP_OK(hipDeviceGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferL1);
    HIP_OK(hipDeviceSetCacheConfig(hipFuncCachePreferEqual));
    HIP_OK(hipCtxGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferEqual);
    CHECK_HIP(hipCtxSetCacheConfig((hipFuncCache_t)4), hipErrorInvalidValue);
    CHECK_HIP(hipCtxGetCacheConfig(NULL), hipErrorInvalidValue);
    HIP_OK(hipCtxGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferEqual); /* the failed set changed nothing */
    if (n >= 2) {
        /* The context of device 1 has its own setting. */
        hipCtx_t ctx;
        HIP_OK(hipCtxCreate(&ctx, 0, 1));
        HIP_OK(hipCtxGetCacheConfig(&c));
        CHECK(c == hipFuncCachePreferNone);
        HIP_OK(hipCtxSetCacheConfig(hipFuncCachePreferShared));
        HIP_OK(hipCtxDestroy(ctx));
        HIP_OK(hipSetDevice(0));
        HIP_OK(hipCtxGetCacheConfig(&c));
        CHECK(c == hipFuncCachePreferEqual);
        HIP_OK(hipSetDevice(1));
        HIP_OK(hipCtxGetCacheConfig(&c));
        CHECK(c == hipFuncCachePreferShared);
    }
}

TEST(trace_ctx_shared_mem_config_and_flags)
{
    hipSharedMemConfig m = hipSharedMemBankSizeEightByte;
    HIP_OK(hipCtxGetSharedMemConfig(&m));
    CHECK(m == hipSharedMemBankSizeFourByte);
    HIP_OK(hipCtxSetSharedMemConfig(hipSharedMemBankSizeEightByte));
    HIP_OK(hipCtxGetSharedMemConfig(&m));
    CHECK(m == hipSharedMemBankSizeFourByte); /* accepted, no effect: LDS banks are 4 bytes */
    CHECK_HIP(hipCtxSetSharedMemConfig((hipSharedMemConfig)7), hipErrorInvalidValue);
    CHECK_HIP(hipCtxGetSharedMemConfig(NULL), hipErrorInvalidValue);

    unsigned int f = 77;
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleYield));
    HIP_OK(hipCtxGetFlags(&f));
    CHECK(f == hipDeviceScheduleYield);
    hipCtx_t ctx;
    HIP_OK(hipCtxCreate(&ctx, hipDeviceScheduleBlockingSync, 0));
    HIP_OK(hipCtxGetFlags(&f));
    CHECK(f == hipDeviceScheduleBlockingSync);
    HIP_OK(hipCtxDestroy(ctx));
    CHECK_HIP(hipCtxGetFlags(NULL), hipErrorInvalidValue);
}

TEST(trace_half_conversions)
{
    /* Every half round trips through float, NaNs as NaNs (clr's canonical 0x7e00 back). */
    int bad = 0;
    for (unsigned h = 0; h <= 0xffff; h++) {
        float f = __gnu_h2f_ieee((unsigned short)h);
        unsigned short back = __gnu_f2h_ieee(f);
        int nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
        unsigned short want = nan ? (unsigned short)((h & 0x8000) | 0x7e00) : (unsigned short)h;
        if (back != want || (nan && !isnan(f))) {
            if (bad++ < 5)
                hc_fail(__FILE__, __LINE__, "half 0x%04x -> %a -> 0x%04x", h, (double)f, back);
        }
    }
    CHECK(bad == 0);
    CHECK(__gnu_h2f_ieee(0x3c00) == 1.0f);
    CHECK(__gnu_h2f_ieee(0x0001) == ldexpf(1.0f, -24));
    CHECK(__gnu_h2f_ieee(0x7bff) == 65504.0f);
    CHECK(isinf(__gnu_h2f_ieee(0xfc00)) && __gnu_h2f_ieee(0xfc00) < 0);
    CHECK(__gnu_f2h_ieee(65519.99f) == 0x7bff);
    CHECK(__gnu_f2h_ieee(65520.0f) == 0x7c00);          /* ties to even: infinity */
    CHECK(__gnu_f2h_ieee(1.0f + ldexpf(1.0f, -11)) == 0x3c00); /* tie: even */
    CHECK(__gnu_f2h_ieee(1.0f + 3 * ldexpf(1.0f, -11)) == 0x3c02);
    CHECK(__gnu_f2h_ieee(ldexpf(1.0f, -25)) == 0x0000);  /* tie with 0 */
    CHECK(__gnu_f2h_ieee(3 * ldexpf(1.0f, -25)) == 0x0002);
    CHECK(__gnu_f2h_ieee(-ldexpf(1.0f, -24)) == 0x8001);
    CHECK(__gnu_f2h_ieee(1e-10f) == 0x0000);
    CHECK(__gnu_f2h_ieee(-INFINITY) == 0xfc00);
    CHECK(__gnu_f2h_ieee(NAN) == 0x7e00);
}

TEST(trace_pch_and_build_description)
{
    const char *pch = "x";
    unsigned int size = 5;
    __hipGetPCH(&pch, &size);
    CHECK(pch == NULL && size == 0);
    __hipGetPCH(NULL, NULL);
    const char *name = amd_dbgapi_get_build_name();
    const char *hash = amd_dbgapi_get_git_hash();
    REQUIRE(name != NULL && hash != NULL);
    CHECKF(strncmp(name, "hipkfd ", 7) == 0, "build name %s", name);
    CHECKF(strlen(hash) == 0 || strspn(hash, "0123456789abcdef") == strlen(hash), "git hash %s", hash);
    CHECK(amd_dbgapi_get_build_id() == 0);
}
