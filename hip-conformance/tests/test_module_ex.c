/*
 * The ROCm 6.4 .. 7.2 module entry points: libraries (hipLibrary*), the JIT linker (hipLink*),
 * function counts, hipModuleLoadFatBinary, the extensible launches (hipLaunchKernelExC,
 * hipDrvLaunchKernelEx), kernel names, hipModuleLaunchCooperativeKernelMultiDevice and
 * hipOccupancyAvailableDynamicSMemPerBlock. Kernels come from hiprtc at run time (our library
 * compiles with the installed HIP clang; the test is skipped when there is none).
 *
 * Expected behaviour: clr hip_library.cpp, hip_module.cpp, hip_platform.cpp, hip_intercept.cpp
 * (ROCm 7); hip-tests catch/unit/library/library_negative.cc, catch/unit/module/hipLinkAPIs.cc,
 * hipModuleGetFunctionCount.cc, hipModuleLoadFatBinary.cc.
 */
#define _GNU_SOURCE
#include "common.h"
#include "fatbin.h"

#include <hip/hiprtc.h>
#include <string.h>

static const char kSource[] =
    "extern \"C\" __global__ void fill(int* p, int v) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  p[i] = v + i;\n"
    "}\n"
    "extern \"C\" __global__ void add_one(int* p) { p[threadIdx.x] += 1; }\n"
    "extern \"C\" __global__ void reverse_lds(int* p) {\n"
    "  extern __shared__ int s[];\n"
    "  s[threadIdx.x] = p[threadIdx.x];\n"
    "  __syncthreads();\n"
    "  p[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "__device__ int twice(int x) { return 2 * x; }\n";

#define KERNELS 3

/* The code object of kSource for the current device (malloc'd), through hiprtc; skips the test
 * when no HIP clang is installed. */
static char *code_object(size_t *n)
{
    hiprtcProgram p = NULL;
    REQUIRE(hiprtcCreateProgram(&p, kSource, "modex.hip", 0, NULL, NULL) == HIPRTC_SUCCESS);
    if (hiprtcCompileProgram(p, 0, NULL) != HIPRTC_SUCCESS) {
        size_t ln = 0;
        hiprtcGetProgramLogSize(p, &ln);
        char *log = xmalloc(ln + 1);
        log[0] = 0;
        hiprtcGetProgramLog(p, log);
        if (strstr(log, "no HIP clang found"))
            SKIP("hiprtc has no HIP clang to compile with");
        REQUIREF(0, "hiprtc compile failed: %s", log);
    }
    REQUIRE(hiprtcGetCodeSize(p, n) == HIPRTC_SUCCESS && *n > 0);
    char *code = xmalloc(*n);
    REQUIRE(hiprtcGetCode(p, code) == HIPRTC_SUCCESS);
    hiprtcDestroyProgram(&p);
    return code;
}

/* `code` in a clang offload bundle with a host entry and one for `arch` (processor only). */
static unsigned char *bundle_of(const char *code, size_t n, const char *arch, size_t *out_len)
{
    char id[128];
    snprintf(id, sizeof id, "hipv4-amdgcn-amd-amdhsa--%s", arch);
    const char *ids[2] = {"host-x86_64-unknown-linux", id};
    size_t header = 24 + 8;
    for (int i = 0; i < 2; i++)
        header += 24 + strlen(ids[i]);
    size_t at = (header + 4095) / 4096 * 4096;
    unsigned char *b = calloc(1, at + n);
    REQUIRE(b != NULL);
    memcpy(b, "__CLANG_OFFLOAD_BUNDLE__", 24);
    uint64_t v = 2, off = 24 + 8;
    memcpy(b + 24, &v, 8);
    for (int i = 0; i < 2; i++) {
        uint64_t o = i ? at : 0, sz = i ? n : 0, len = strlen(ids[i]);
        memcpy(b + off, &o, 8);
        memcpy(b + off + 8, &sz, 8);
        memcpy(b + off + 16, &len, 8);
        memcpy(b + off + 24, ids[i], len);
        off += 24 + len;
    }
    memcpy(b + at, code, n);
    *out_len = at + n;
    return b;
}

/* The current device's processor name (gfx90a of gfx90a:sramecc+:xnack-). */
static void processor(char *out, size_t n)
{
    hipDeviceProp_t p;
    int d = 0;
    HIP_OK(hipGetDevice(&d));
    HIP_OK(hipGetDeviceProperties(&p, d));
    size_t len = strcspn(p.gcnArchName, ":");
    REQUIRE(len < n);
    memcpy(out, p.gcnArchName, len);
    out[len] = 0;
}

/* CHECK that d[0..n) holds v + i. */
static void check_filled(const int *d, int n, int v)
{
    int *h = xmalloc(n * sizeof(int));
    memset(h, 0xff, n * sizeof(int));
    HIP_OK(hipMemcpy(h, d, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        CHECKF(h[i] == v + i, "element %d is %d, expected %d", i, h[i], v + i);
    free(h);
}

TEST(modex_library_kernels_launch_and_unload)
{
    size_t n;
    char *code = code_object(&n);
    hipLibrary_t lib = NULL;
    HIP_OK(hipLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0));
    free(code); /* the library keeps its own copy */
    unsigned count = 0;
    HIP_OK(hipLibraryGetKernelCount(&count, lib));
    CHECK(count == KERNELS); /* __global__ functions only, not twice() */
    hipKernel_t k = NULL, k2 = NULL, none = NULL;
    HIP_OK(hipLibraryGetKernel(&k, lib, "fill"));
    HIP_OK(hipLibraryGetKernel(&k2, lib, "fill"));
    CHECK(k != NULL && k == k2);
    CHECK_HIP(hipLibraryGetKernel(&none, lib, "nope"), hipErrorNotFound);
    CHECK_HIP(hipLibraryGetKernel(&none, lib, "_Z5twicei"), hipErrorNotFound);
    const char *name = hipKernelNameRef((hipFunction_t)k);
    CHECK(name != NULL && strcmp(name, "fill") == 0);
    int *d = NULL;
    HIP_OK(hipMalloc((void **)&d, 128 * sizeof(int)));
    int v = 1000;
    void *params[] = {&d, &v};
    HIP_OK(hipModuleLaunchKernel((hipFunction_t)k, 2, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    check_filled(d, 128, 1000);
    HIP_OK(hipLibraryUnload(lib));
    CHECK(hipKernelNameRef((hipFunction_t)k) == NULL);
    CHECK_HIP(hipModuleLaunchKernel((hipFunction_t)k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
              hipErrorInvalidResourceHandle);
    CHECK_HIP(hipLibraryUnload(lib), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipLibraryGetKernelCount(&count, lib), hipErrorInvalidValue);
    HIP_OK(hipFree(d));
}

TEST(modex_library_lazy_load_and_errors)
{
    /* hip-tests Unit_library_negative. */
    CHECK_HIP(hipLibraryLoadData(NULL, NULL, NULL, NULL, 0, NULL, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipLibraryLoadFromFile(NULL, NULL, NULL, NULL, 0, NULL, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipLibraryUnload(NULL), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipLibraryGetKernel(NULL, NULL, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipLibraryGetKernelCount(NULL, NULL), hipErrorInvalidValue);
    hipLibrary_t lib = NULL;
    hipKernel_t k = NULL;
    /* Lazy: anything loads, and its first query fails. */
    HIP_OK(hipLibraryLoadData(&lib, "call me ishmael", NULL, NULL, 0, NULL, NULL, 0));
    CHECK_HIP(hipLibraryGetKernel(&k, lib, "moby"), hipErrorInvalidImage);
    unsigned count = 7;
    CHECK_HIP(hipLibraryGetKernelCount(&count, lib), hipErrorInvalidImage);
    CHECK(count == 7);
    HIP_OK(hipLibraryUnload(lib));
    /* JIT options are not supported (clr). */
    size_t n;
    char *code = code_object(&n);
    hipJitOption opt = hipJitOptionOptimizationLevel;
    void *val = (void *)3;
    lib = NULL;
    CHECK_HIP(hipLibraryLoadData(&lib, code, &opt, &val, 1, NULL, NULL, 0), hipErrorInvalidValue);
    CHECK(lib == NULL);
    CHECK_HIP(hipLibraryLoadFromFile(&lib, "/nonexistent/modex.co", NULL, NULL, 0, NULL, NULL, 0),
              hipErrorInvalidValue);
    /* From a file; library options are ignored, as in clr. */
    char path[] = "/tmp/modex-lib-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, code, n) == (ssize_t)n);
    close(fd);
    hipLibraryOption lopt = hipLibraryBinaryIsPreserved;
    void *lval = (void *)1;
    HIP_OK(hipLibraryLoadFromFile(&lib, path, NULL, NULL, 0, &lopt, &lval, 1));
    unlink(path);
    HIP_OK(hipLibraryGetKernelCount(&count, lib));
    CHECK(count == KERNELS);
    HIP_OK(hipLibraryGetKernel(&k, lib, "add_one"));
    CHECK_HIP(hipLibraryGetKernel(&k, lib, NULL), hipErrorInvalidValue);
    HIP_OK(hipLibraryUnload(lib));
    free(code);
}

TEST(modex_function_count_and_fat_binary)
{
    size_t n;
    char *code = code_object(&n);
    hipModule_t m = NULL;
    HIP_OK(hipModuleLoadData(&m, code));
    unsigned count = 0;
    HIP_OK(hipModuleGetFunctionCount(&count, m));
    CHECK(count == KERNELS);
    CHECK_HIP(hipModuleGetFunctionCount(NULL, m), hipErrorInvalidValue);
    CHECK_HIP(hipModuleGetFunctionCount(&count, NULL), hipErrorInvalidHandle);
    HIP_OK(hipModuleUnload(m));
    CHECK_HIP(hipModuleGetFunctionCount(&count, m), hipErrorNotFound);

    /* A fat binary (offload bundle) with the code object for this device. */
    char arch[64];
    processor(arch, sizeof arch);
    size_t blen;
    unsigned char *bundle = bundle_of(code, n, arch, &blen);
    CHECK_HIP(hipModuleLoadFatBinary(&m, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoadFatBinary(NULL, bundle), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoadFatBinary(&m, host_only_bundle), hipErrorNoBinaryForGpu);
    HIP_OK(hipModuleLoadFatBinary(&m, bundle));
    HIP_OK(hipModuleGetFunctionCount(&count, m));
    CHECK(count == KERNELS);
    hipFunction_t f = NULL;
    HIP_OK(hipModuleGetFunction(&f, m, "fill"));
    int *d = NULL;
    HIP_OK(hipMalloc((void **)&d, 64 * sizeof(int)));
    int v = -5;
    void *params[] = {&d, &v};
    HIP_OK(hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    check_filled(d, 64, -5);
    HIP_OK(hipModuleUnload(m));
    HIP_OK(hipFree(d));
    free(bundle);
    free(code);
}

TEST(modex_launch_kernel_exc)
{
    size_t n;
    char *code = code_object(&n);
    hipModule_t m = NULL;
    HIP_OK(hipModuleLoadData(&m, code));
    hipFunction_t fill = NULL, rev = NULL;
    HIP_OK(hipModuleGetFunction(&fill, m, "fill"));
    HIP_OK(hipModuleGetFunction(&rev, m, "reverse_lds"));
    int *d = NULL;
    HIP_OK(hipMalloc((void **)&d, 256 * sizeof(int)));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    int v = 7;
    void *args[] = {&d, &v};
    hipLaunchConfig_t c = {{4, 1, 1}, {64, 1, 1}, 0, s, NULL, 0};
    /* No attributes: hipLaunchKernel (clr takes a hipFunction_t too). */
    HIP_OK(hipLaunchKernelExC(&c, (const void *)fill, args));
    HIP_OK(hipStreamSynchronize(s));
    check_filled(d, 256, 7);
    /* Cooperative, and a one-block cluster. */
    hipLaunchAttribute a[2];
    memset(a, 0, sizeof a);
    a[0].id = hipLaunchAttributeClusterDimension;
    a[0].val.pad[0] = 1; /* clusterDim {1, 1, 1}, as three unsigned ints */
    a[0].val.pad[4] = 1;
    a[0].val.pad[8] = 1;
    a[1].id = hipLaunchAttributeCooperative;
    a[1].value.cooperative = 1;
    c.attrs = a;
    c.numAttrs = 2;
    v = 70;
    HIP_OK(hipLaunchKernelExC(&c, (const void *)fill, args));
    HIP_OK(hipStreamSynchronize(s));
    check_filled(d, 256, 70);
    /* Dynamic LDS from the configuration: the block reversed through shared memory. */
    int h[64];
    for (int i = 0; i < 64; i++)
        h[i] = i * 3;
    HIP_OK(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice));
    void *rargs[] = {&d};
    hipLaunchConfig_t rc = {{1, 1, 1}, {64, 1, 1}, 64 * sizeof(int), s, NULL, 0};
    HIP_OK(hipLaunchKernelExC(&rc, (const void *)rev, rargs));
    HIP_OK(hipStreamSynchronize(s));
    HIP_OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
        CHECKF(h[i] == (63 - i) * 3, "element %d is %d", i, h[i]);
    /* Errors (clr hipLaunchKernelExC). */
    CHECK_HIP(hipLaunchKernelExC(&c, NULL, args), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipLaunchKernelExC(NULL, (const void *)fill, args), hipErrorInvalidConfiguration);
    a[0].val.pad[0] = 2; /* a cluster of two blocks: gfx90a has none */
    c.numAttrs = 1;
    CHECK_HIP(hipLaunchKernelExC(&c, (const void *)fill, args), hipErrorInvalidClusterSize);
    a[0].val.pad[0] = 0;
    CHECK_HIP(hipLaunchKernelExC(&c, (const void *)fill, args), hipErrorInvalidConfiguration);
    a[0].id = hipLaunchAttributePriority;
    CHECK_HIP(hipLaunchKernelExC(&c, (const void *)fill, args), hipErrorInvalidValue);
    c.attrs = NULL;
    CHECK_HIP(hipLaunchKernelExC(&c, (const void *)fill, args), hipErrorInvalidValue);
    hipLaunchConfig_t zero = {{0, 1, 1}, {64, 1, 1}, 0, s, NULL, 0};
    CHECK_HIP(hipLaunchKernelExC(&zero, (const void *)fill, args), hipErrorInvalidConfiguration);
    CHECK_HIP(hipLaunchKernelExC(&rc, (const void *)host_only_bundle, rargs), hipErrorInvalidDeviceFunction);
    /* Nothing above launched: the data is as the reversal left it. */
    HIP_OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
    CHECK(h[0] == 63 * 3 && h[63] == 0);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipModuleUnload(m));
    HIP_OK(hipFree(d));
    free(code);
}

TEST(modex_drv_launch_kernel_ex)
{
    size_t n;
    char *code = code_object(&n);
    hipModule_t m = NULL;
    HIP_OK(hipModuleLoadData(&m, code));
    hipFunction_t fill = NULL;
    HIP_OK(hipModuleGetFunction(&fill, m, "fill"));
    int *d = NULL;
    HIP_OK(hipMalloc((void **)&d, 128 * sizeof(int)));
    int v = 3;
    void *params[] = {&d, &v};
    HIP_LAUNCH_CONFIG c = {2, 1, 1, 64, 1, 1, 0, NULL, NULL, 0};
    HIP_OK(hipDrvLaunchKernelEx(&c, fill, params, NULL));
    check_filled(d, 128, 3);
    /* Arguments from extra, cooperative. */
    struct {
        int *p;
        int v;
        int pad;
    } buf = {d, 30, 0};
    size_t size = sizeof buf;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    hipLaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = hipLaunchAttributeCooperative;
    a.value.cooperative = 1;
    c.attrs = &a;
    c.numAttrs = 1;
    HIP_OK(hipDrvLaunchKernelEx(&c, fill, NULL, extra));
    check_filled(d, 128, 30);
    /* Errors (clr hipDrvLaunchKernelEx). */
    CHECK_HIP(hipDrvLaunchKernelEx(&c, NULL, params, NULL), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipDrvLaunchKernelEx(NULL, fill, params, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvLaunchKernelEx(&c, fill, params, extra), hipErrorInvalidValue);
    a.id = hipLaunchAttributeAccessPolicyWindow;
    CHECK_HIP(hipDrvLaunchKernelEx(&c, fill, params, NULL), hipErrorInvalidValue);
    c.numAttrs = 0;
    c.gridDimY = 0;
    CHECK_HIP(hipDrvLaunchKernelEx(&c, fill, params, NULL), hipErrorInvalidConfiguration);
    c.gridDimY = 1;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    c.hStream = s;
    CHECK_HIP(hipDrvLaunchKernelEx(&c, fill, params, NULL), hipErrorContextIsDestroyed);
    check_filled(d, 128, 30);
    HIP_OK(hipModuleUnload(m));
    CHECK_HIP(hipDrvLaunchKernelEx(&c, fill, params, NULL), hipErrorContextIsDestroyed);
    c.hStream = NULL;
    CHECK_HIP(hipDrvLaunchKernelEx(&c, fill, params, NULL), hipErrorInvalidResourceHandle);
    HIP_OK(hipFree(d));
    free(code);
}

static void name_stub(void) {}

TEST(modex_kernel_names)
{
    CHECK(hipKernelNameRef(NULL) == NULL);
    CHECK(hipKernelNameRef((hipFunction_t)name_stub) == NULL);
    CHECK(hipKernelNameRefByPtr(NULL, NULL) == NULL);
    CHECK(hipKernelNameRefByPtr((const void *)name_stub, NULL) == NULL);
    struct fatbin_wrapper w = {FATBIN_MAGIC, 1, host_only_bundle, NULL};
    void **h = __hipRegisterFatBinary(&w);
    REQUIRE(h != NULL);
    __hipRegisterFunction(h, (const void *)name_stub, (char *)"_Z4stubv", "_Z4stubv", (unsigned)-1, NULL,
                          NULL, NULL, NULL, NULL);
    const char *name = hipKernelNameRefByPtr((const void *)name_stub, (hipStream_t)1);
    CHECK(name != NULL && strcmp(name, "_Z4stubv") == 0);
    hipFunction_t f = NULL;
    HIP_OK(hipGetFuncBySymbol(&f, (const void *)name_stub));
    name = hipKernelNameRef(f);
    CHECK(name != NULL && strcmp(name, "_Z4stubv") == 0);
    __hipUnregisterFatBinary(h);
    CHECK(hipKernelNameRefByPtr((const void *)name_stub, NULL) == NULL);
    CHECK(hipKernelNameRef(f) == NULL);
}

TEST(modex_cooperative_multi_device_module_launch)
{
    int ndev = hc_device_count();
    if (ndev > 2)
        ndev = 2;
    size_t n;
    char *code = code_object(&n);
    hipModule_t m = NULL;
    HIP_OK(hipModuleLoadData(&m, code));
    hipFunction_t fill = NULL;
    HIP_OK(hipModuleGetFunction(&fill, m, "fill"));
    int *d[2] = {NULL, NULL};
    int v[2] = {100, 200};
    void *params[2][2];
    hipStream_t s[2];
    hipFunctionLaunchParams l[2];
    for (int i = 0; i < ndev; i++) {
        HIP_OK(hipSetDevice(i));
        HIP_OK(hipMalloc((void **)&d[i], 64 * sizeof(int)));
        HIP_OK(hipStreamCreate(&s[i]));
        params[i][0] = &d[i];
        params[i][1] = &v[i];
        hipFunctionLaunchParams e = {fill, 1, 1, 1, 64, 1, 1, 0, s[i], params[i]};
        l[i] = e;
    }
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipModuleLaunchCooperativeKernelMultiDevice(l, ndev, 0));
    for (int i = 0; i < ndev; i++)
        check_filled(d[i], 64, v[i]);
    /* Errors (clr ihipModuleLaunchCooperativeKernelMultiDevice), nothing launched. */
    HIP_OK(hipMemset(d[0], 0, 64 * sizeof(int)));
    CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(NULL, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(l, 0, 0), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(l, hc_device_count() + 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(l, 1, 4), hipErrorInvalidValue);
    hipFunctionLaunchParams bad = l[0];
    bad.blockDimY = 0;
    CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(&bad, 1, 0), hipErrorInvalidConfiguration);
    bad = l[0];
    bad.hStream = NULL;
    CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(&bad, 1, 0), hipErrorInvalidResourceHandle);
    if (ndev == 2) {
        hipFunctionLaunchParams twice[2] = {l[0], l[0]};
        CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(twice, 2, 0), hipErrorInvalidDevice);
        hipFunctionLaunchParams uneven[2] = {l[0], l[1]};
        uneven[1].gridDimX = 2;
        CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(uneven, 2, 0), hipErrorInvalidValue);
        /* Entry i runs on device i (clr): device 1's stream first is refused. */
        hipFunctionLaunchParams swapped[2] = {l[1], l[0]};
        CHECK_HIP(hipModuleLaunchCooperativeKernelMultiDevice(swapped, 2, 0), hipErrorInvalidResourceHandle);
    }
    check_dev_bytes(d[0], 64 * sizeof(int), 0);
    for (int i = 0; i < ndev; i++) {
        HIP_OK(hipStreamDestroy(s[i]));
        HIP_OK(hipFree(d[i]));
    }
    HIP_OK(hipModuleUnload(m));
    free(code);
}

TEST(modex_occupancy_available_dynamic_smem)
{
    size_t n;
    char *code = code_object(&n);
    hipModule_t m = NULL;
    HIP_OK(hipModuleLoadData(&m, code));
    hipFunction_t fill = NULL;
    HIP_OK(hipModuleGetFunction(&fill, m, "fill"));
    hipDeviceProp_t p;
    HIP_OK(hipGetDeviceProperties(&p, 0));
    int stat = -1;
    HIP_OK(hipFuncGetAttribute(&stat, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fill));
    size_t got = 1;
    for (int blocks = 1; blocks <= 64; blocks *= 4) {
        /* clr's arithmetic, 64 threads a block. */
        long maxb = p.maxThreadsPerMultiProcessor / 64;
        long cu = (long)p.maxSharedMemoryPerMultiProcessor - (long)stat * (blocks < maxb ? blocks : maxb);
        long maxdyn = (long)p.sharedMemPerBlock - stat;
        long a = cu / maxb < maxdyn ? cu / maxb : maxdyn;
        long b = cu / blocks < maxdyn ? cu / blocks : maxdyn;
        long want = (a > b ? a : b) / 512 * 512;
        HIP_OK(hipOccupancyAvailableDynamicSMemPerBlock(&got, (const void *)fill, blocks, 64));
        CHECKF((long)got == want, "%d blocks: %zu bytes, expected %ld", blocks, got, want);
    }
    CHECK(got < (size_t)p.sharedMemPerBlock);
    CHECK_HIP(hipOccupancyAvailableDynamicSMemPerBlock(NULL, (const void *)fill, 1, 64), hipErrorInvalidValue);
    CHECK_HIP(hipOccupancyAvailableDynamicSMemPerBlock(&got, (const void *)fill, 0, 64), hipErrorInvalidValue);
    CHECK_HIP(hipOccupancyAvailableDynamicSMemPerBlock(&got, (const void *)fill, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipOccupancyAvailableDynamicSMemPerBlock(&got, (const void *)fill, 1, p.maxThreadsPerMultiProcessor + 1),
              hipErrorInvalidValue);
    CHECK_HIP(hipOccupancyAvailableDynamicSMemPerBlock(&got, (const void *)name_stub, 1, 64),
              hipErrorInvalidDeviceFunction);
    HIP_OK(hipModuleUnload(m));
    free(code);
}

TEST(modex_link_api)
{
    const char *isaopts[] = {"-mllvm", "-inline-threshold=1"};
    hipJitOption o[2] = {hipJitOptionIRtoISAOptExt, hipJitOptionIRtoISAOptCountExt};
    void *ov[2] = {(void *)isaopts, (void *)(size_t)2};
    hipLinkState_t st = NULL;
    /* hipLinkCreate (clr): CUDA-only options are refused. */
    CHECK_HIP(hipLinkCreate(2, o, ov, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipLinkCreate(2, NULL, ov, &st), hipErrorInvalidValue);
    hipJitOption cuda = hipJitOptionMaxRegisters;
    CHECK_HIP(hipLinkCreate(1, &cuda, ov, &st), hipErrorInvalidValue);
    cuda = hipJitOptionNumOptions;
    CHECK_HIP(hipLinkCreate(1, &cuda, ov, &st), hipErrorInvalidValue);
    CHECK(st == NULL);
    HIP_OK(hipLinkCreate(2, o, ov, &st));
    CHECK(st != NULL);
    /* hipLinkAddData / hipLinkAddFile, clr's codes in its order (hip-tests hipLinkAPIs.cc). */
    static const unsigned char spirv[] = {0x03, 0x02, 0x23, 0x07, 0x00, 0x00, 0x01, 0x00};
    void *data = (void *)spirv;
    CHECK_HIP(hipLinkAddData(NULL, hipJitInputSpirv, data, sizeof spirv, "s", 0, NULL, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipLinkAddData(NULL, hipJitInputSpirv, NULL, sizeof spirv, "s", 0, NULL, NULL), hipErrorInvalidImage);
    CHECK_HIP(hipLinkAddData(st, hipJitInputSpirv, data, 0, "s", 0, NULL, NULL), hipErrorInvalidImage);
    hipJitInputType refused[] = {hipJitInputCubin, hipJitInputPtx, hipJitInputFatBinary, hipJitInputObject,
                                 hipJitInputLibrary, hipJitInputNvvm, hipJitInputLLVMBitcode,
                                 hipJitInputLLVMBundledBitcode, hipJitInputLLVMArchivesOfBundledBitcode};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK_HIP(hipLinkAddData(st, refused[i], data, sizeof spirv, "s", 0, NULL, NULL), hipErrorInvalidValue);
        CHECK_HIP(hipLinkAddFile(st, refused[i], "/dev/null", 0, NULL, NULL), hipErrorInvalidValue);
    }
    CHECK_HIP(hipLinkAddData(st, hipJitInputSpirv, (void *)"not spir-v", 10, "s", 0, NULL, NULL),
              hipErrorInvalidConfiguration);
    CHECK_HIP(hipLinkAddFile(NULL, hipJitInputSpirv, "/dev/null", 0, NULL, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipLinkAddFile(st, hipJitInputSpirv, "/nonexistent/k.spv", 0, NULL, NULL), hipErrorInvalidConfiguration);
    void *out = NULL;
    size_t size = 0;
    /* Nothing added: the link fails. */
    CHECK_HIP(hipLinkComplete(st, &out, &size), hipErrorInvalidConfiguration);
    HIP_OK(hipLinkAddData(st, hipJitInputSpirv, data, sizeof spirv, NULL, 0, NULL, NULL));
    CHECK_HIP(hipLinkComplete(NULL, &out, &size), hipErrorInvalidValue);
    CHECK_HIP(hipLinkComplete(st, NULL, &size), hipErrorInvalidValue);
    CHECK_HIP(hipLinkComplete(st, &out, NULL), hipErrorInvalidValue);
    /* SPIR-V needs comgr's translator, which this runtime has not. */
    CHECK_HIP(hipLinkComplete(st, &out, &size), hipErrorInvalidConfiguration);
    CHECK(out == NULL && size == 0);
    HIP_OK(hipLinkDestroy(st));
    CHECK_HIP(hipLinkDestroy(st), hipErrorInvalidValue);
    CHECK_HIP(hipLinkDestroy(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipLinkAddFile(st, hipJitInputSpirv, "/dev/null", 0, NULL, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipLinkAddData(st, hipJitInputSpirv, data, sizeof spirv, "s", 0, NULL, NULL), hipErrorInvalidHandle);
}
