/*
 * Modules and execution control without hipcc: call configuration, fat-binary registration of a
 * bundle with no code object for the GPU, the module API's argument and image errors, launches
 * of unknown functions. (Launches of real kernels: hipcc/kernels.hip and hipcc/module.hip.)
 *
 * Expected behaviour: hip-tests catch/unit/module (hipModuleLoad*, hipModuleUnload,
 * hipModuleGetFunction, hipModuleLaunchKernel negative parameters) and
 * catch/unit/executionControl (hipLaunchKernel), ROCm 7; clr hip_platform.cpp for the
 * registration and call-configuration entry points.
 */
#define _GNU_SOURCE
#include "common.h"
#include "fatbin.h"

#include <string.h>

static void host_stub(void) {}
static void other_function(void) {}

TEST(call_configuration_is_a_per_thread_stack)
{
    dim3 g1 = {1, 2, 3}, b1 = {4, 5, 6}, g2 = {7, 1, 1}, b2 = {8, 1, 1}, g, b;
    size_t shm = 0;
    hipStream_t s = (hipStream_t)1;
    HIP_OK(__hipPushCallConfiguration(g1, b1, 11, NULL));
    HIP_OK(__hipPushCallConfiguration(g2, b2, 22, NULL));
    CHECK_HIP(__hipPopCallConfiguration(NULL, &b, &shm, &s), hipErrorInvalidValue);
    HIP_OK(__hipPopCallConfiguration(&g, &b, &shm, &s));
    CHECK(g.x == 7 && b.x == 8 && shm == 22 && s == NULL);
    HIP_OK(__hipPopCallConfiguration(&g, &b, &shm, &s));
    CHECK(g.x == 1 && g.y == 2 && g.z == 3 && b.x == 4 && b.y == 5 && b.z == 6 && shm == 11);
    CHECK_HIP(__hipPopCallConfiguration(&g, &b, &shm, &s), hipErrorMissingConfiguration);
    CHECK_HIP(hipGetLastError(), hipErrorMissingConfiguration);
    /* The legacy pair: the configuration and its arguments are consumed by hipLaunchByPtr. */
    int arg = 5;
    CHECK_HIP(hipSetupArgument(&arg, sizeof arg, 0), hipErrorMissingConfiguration);
    HIP_OK(hipConfigureCall(g1, b1, 0, NULL));
    HIP_OK(hipSetupArgument(&arg, sizeof arg, 0));
    CHECK_HIP(hipSetupArgument(&arg, sizeof arg, 4096), hipErrorInvalidValue);
    CHECK_HIP(hipLaunchByPtr((const void*)host_stub), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipLaunchByPtr((const void*)host_stub), hipErrorMissingConfiguration);
}

TEST(launch_of_unknown_functions)
{
    dim3 one = {1, 1, 1};
    CHECK_HIP(hipLaunchKernel(NULL, one, one, NULL, 0, NULL), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipLaunchKernel((const void*)other_function, one, one, NULL, 0, NULL),
              hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipLaunchCooperativeKernel(NULL, one, one, NULL, 0, NULL), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
              hipErrorInvalidResourceHandle);
    CHECK_HIP(hipModuleLaunchKernel((hipFunction_t)other_function, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
              hipErrorInvalidResourceHandle);
    CHECK_HIP(hipModuleLaunchKernel(NULL, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
    hipFuncAttributes a;
    int v;
    CHECK_HIP(hipFuncGetAttributes(NULL, (const void*)host_stub), hipErrorInvalidValue);
    CHECK_HIP(hipFuncGetAttributes(&a, NULL), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipFuncGetAttributes(&a, (const void*)other_function), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_NUM_REGS, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipFuncGetAttribute(NULL, HIP_FUNC_ATTRIBUTE_NUM_REGS, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipFuncSetAttribute(NULL, hipFuncAttributeMaxDynamicSharedMemorySize, 0),
              hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipFuncSetCacheConfig((const void*)other_function, hipFuncCachePreferNone),
              hipErrorInvalidDeviceFunction);
    size_t size;
    void* p;
    CHECK_HIP(hipGetSymbolSize(&size, &v), hipErrorInvalidSymbol);
    CHECK_HIP(hipGetSymbolAddress(&p, &v), hipErrorInvalidSymbol);
    CHECK_HIP(hipGetSymbolSize(NULL, &v), hipErrorInvalidValue);
}

TEST(fat_binary_without_code_for_the_gpu)
{
    struct fatbin_wrapper bad = {0x12345678, 1, host_only_bundle, NULL};
    CHECK(__hipRegisterFatBinary(&bad) == NULL);
    CHECK(__hipRegisterFatBinary(NULL) == NULL);
    struct fatbin_wrapper w = {FATBIN_MAGIC, 1, host_only_bundle, NULL};
    void** h = __hipRegisterFatBinary(&w);
    REQUIRE(h != NULL);
    __hipRegisterFunction(h, (const void*)host_stub, (char*)"k", "k", (unsigned)-1, NULL, NULL,
                          NULL, NULL, NULL);
    __hipRegisterFunction(NULL, (const void*)other_function, (char*)"k", "k", 0, NULL, NULL, NULL,
                          NULL, NULL); /* ignored */
    dim3 one = {1, 1, 1}, zero = {0, 1, 1};
    /* Registered, but the bundle has nothing for the GPU: clr's hipErrorNoBinaryForGpu. */
    CHECK_HIP(hipLaunchKernel((const void*)host_stub, one, one, NULL, 0, NULL), hipErrorNoBinaryForGpu);
    CHECK_HIP(hipLaunchKernel((const void*)host_stub, zero, one, NULL, 0, NULL), hipErrorInvalidConfiguration);
    CHECK_HIP(hipLaunchKernel((const void*)other_function, one, one, NULL, 0, NULL),
              hipErrorInvalidDeviceFunction);
    hipFuncAttributes a;
    CHECK_HIP(hipFuncGetAttributes(&a, (const void*)host_stub), hipErrorNoBinaryForGpu);
    hipFunction_t f = NULL;
    CHECK_HIP(hipGetFuncBySymbol(&f, (const void*)host_stub), hipSuccess);
    CHECK(f != NULL);
    __hipUnregisterFatBinary(h);
    CHECK_HIP(hipLaunchKernel((const void*)host_stub, one, one, NULL, 0, NULL), hipErrorInvalidDeviceFunction);
    CHECK_HIP(hipGetFuncBySymbol(&f, (const void*)host_stub), hipErrorInvalidDeviceFunction);
    __hipUnregisterFatBinary(h); /* unknown now: ignored */
}

TEST(module_load_errors)
{
    hipModule_t m = NULL;
    hipFunction_t f = NULL;
    static const char truncated[] = "__CLANG_OFFLOAD_BUNDLE__\xff\xff\xff\xff\xff\xff\xff\x7f";
    static const char compressed[] = "CCOB\x02\0\x01\0\0\x10\0\0\0\0\0\0";
    static const char elf_header_only[64] = "\x7f" "ELF\x02\x01";
    CHECK_HIP(hipModuleLoadData(&m, ""), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoadData(&m, "__CLANG"), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoadData(&m, "definitely not a code object"), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoadData(&m, truncated), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoadData(&m, elf_header_only), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoadData(&m, compressed), hipErrorNotSupported);
    CHECK_HIP(hipModuleLoadData(&m, host_only_bundle), hipErrorNoBinaryForGpu);
    CHECK_HIP(hipModuleLoadData(NULL, host_only_bundle), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoadData(&m, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoadDataEx(&m, "", 0, NULL, NULL), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoad(&m, "/nonexistent/file.co"), hipErrorFileNotFound);
    CHECK_HIP(hipModuleLoad(&m, ""), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoad(&m, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoad(NULL, "/dev/null"), hipErrorInvalidValue);
    CHECK_HIP(hipModuleLoad(&m, "/dev/null"), hipErrorInvalidImage);
    CHECK_HIP(hipModuleLoad(&m, "/proc/self/exe"), hipErrorInvalidImage); /* an x86-64 ELF */
    CHECK(m == NULL);
    CHECK_HIP(hipModuleUnload(NULL), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipModuleUnload((hipModule_t)&m), hipErrorNotFound);
    CHECK_HIP(hipModuleGetFunction(&f, NULL, "k"), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipModuleGetFunction(&f, (hipModule_t)&m, "k"), hipErrorNotFound);
    CHECK_HIP(hipModuleGetFunction(&f, (hipModule_t)&m, ""), hipErrorInvalidValue);
    CHECK_HIP(hipModuleGetFunction(NULL, (hipModule_t)&m, "k"), hipErrorInvalidValue);
    size_t bytes;
    CHECK_HIP(hipModuleGetGlobal(NULL, NULL, (hipModule_t)&m, "g"), hipErrorInvalidValue);
    CHECK_HIP(hipModuleGetGlobal(NULL, &bytes, NULL, "g"), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipModuleGetGlobal(NULL, &bytes, (hipModule_t)&m, "g"), hipErrorNotFound);
}
