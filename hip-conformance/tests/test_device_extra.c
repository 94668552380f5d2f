/*
 * Device queries and settings beyond properties: hipDeviceGetName, hipDeviceTotalMem,
 * hipDeviceComputeCapability, hipDeviceGetUuid, hipDeviceGetPCIBusId,
 * hipDeviceGetByPCIBusId, hipChooseDevice(R0000/R0600), hipGet/SetDeviceFlags,
 * hipDeviceGet/SetCacheConfig, hipDeviceGet/SetSharedMemConfig, hipDeviceGet/SetLimit,
 * hipSetValidDevices, the HDP flush attributes, hipGetProcAddress (every memory API hip-tests
 * resolves), hipGetDriverEntryPoint,
 * and the deprecated context APIs.
 *
 * Expected codes: hip-tests catch/unit/device/{hipDeviceGetName,hipDeviceTotalMem,
 * hipDeviceComputeCapability,hipDeviceGetUuid,hipDeviceGetPCIBusId,hipDeviceGetByPCIBusId,
 * hipChooseDevice,hipGetSetDeviceFlags,hipDeviceSetGetCacheConfig,
 * hipDeviceSetGetSharedMemConfig,hipDeviceSetGetLimit,hipGetDeviceAttribute}.cc; clr
 * hip_device.cpp, hip_device_runtime.cpp, hip_context.cpp.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>

/* The unversioned ROCm 5 symbols, which the header renames to their R0600 versions. */
static void *unversioned(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    REQUIREF(p != NULL, "dlsym(%s)", name);
    return p;
}

static hipDeviceProp_t props_of(int d)
{
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    HIP_OK(hipGetDeviceProperties(&p, d));
    return p;
}

TEST(hipDeviceGetName_matches_props)
{
    int n = hc_device_count();
    for (int d = 0; d < n; d++) {
        char name[256];
        hipDeviceProp_t p = props_of(d);
        HIP_OK(hipDeviceGetName(name, sizeof name, d));
        CHECK(strcmp(name, p.name) == 0);
        CHECK(strlen(name) > 0);
    }
}

TEST(hipDeviceGetName_partial_fill)
{
    /* hip-tests Unit_hipDeviceGetName_PartialFill: len-1 bytes and a NUL, the rest untouched */
    char full[256], part[256];
    HIP_OK(hipDeviceGetName(full, sizeof full, 0));
    size_t len = strlen(full);
    REQUIRE(len >= 2);
    memset(part, 'x', sizeof part);
    int fill = (int)(len / 2);
    HIP_OK(hipDeviceGetName(part, fill, 0));
    CHECK(memcmp(part, full, (size_t)fill - 1) == 0);
    CHECK(part[fill - 1] == 0);
    CHECK(byte_mismatch(part + fill, sizeof part - (size_t)fill, 'x') == sizeof part - (size_t)fill);
}

TEST(hipDeviceGetName_negative)
{
    char name[64];
    int n = hc_device_count();
    CHECK_HIP(hipDeviceGetName(NULL, sizeof name, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetName(name, 0, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetName(name, -1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetName(name, sizeof name, n), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetName(name, sizeof name, -1), hipErrorInvalidDevice);
    /* clr checks the device first */
    CHECK_HIP(hipDeviceGetName(NULL, 0, n), hipErrorInvalidDevice);
}

TEST(hipDeviceTotalMem_matches_props)
{
    int n = hc_device_count();
    for (int d = 0; d < n; d++) {
        size_t total = 0, free_ = 0, mem_total = 0;
        HIP_OK(hipDeviceTotalMem(&total, d));
        CHECK(total == props_of(d).totalGlobalMem);
        CHECK(total > 0);
        HIP_OK(hipSetDevice(d));
        HIP_OK(hipMemGetInfo(&free_, &mem_total));
        CHECK(mem_total == total);
    }
    size_t t;
    CHECK_HIP(hipDeviceTotalMem(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceTotalMem(&t, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceTotalMem(&t, n), hipErrorInvalidDevice);
}

TEST(hipDeviceComputeCapability_matches_props)
{
    int n = hc_device_count(), major = -1, minor = -1;
    for (int d = 0; d < n; d++) {
        hipDeviceProp_t p = props_of(d);
        HIP_OK(hipDeviceComputeCapability(&major, &minor, d));
        CHECK(major == p.major && minor == p.minor);
        CHECK(major > 0);
    }
    CHECK_HIP(hipDeviceComputeCapability(NULL, &minor, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceComputeCapability(&major, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceComputeCapability(&major, &minor, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceComputeCapability(&major, &minor, n), hipErrorInvalidDevice);
}

TEST(hipDeviceGetUuid_matches_props)
{
    int n = hc_device_count();
    for (int d = 0; d < n; d++) {
        hipUUID u;
        memset(&u, 0, sizeof u);
        HIP_OK(hipDeviceGetUuid(&u, d));
        CHECK(memcmp(u.bytes, props_of(d).uuid.bytes, 16) == 0);
        CHECK(u.bytes[0] != 0);
    }
    hipUUID u;
    CHECK_HIP(hipDeviceGetUuid(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetUuid(&u, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetUuid(&u, n), hipErrorInvalidDevice);
}

TEST(hipDeviceGetPCIBusId_format_and_round_trip)
{
    int n = hc_device_count();
    for (int d = 0; d < n; d++) {
        char id[32];
        unsigned dom = 99, bus = 99, dev = 99, fn = 99;
        int pci_bus = -1, pci_dev = -1, pci_dom = -1, back = -1;
        HIP_OK(hipDeviceGetPCIBusId(id, sizeof id, d));
        CHECKF(strlen(id) == 12, "bus id %s", id);
        REQUIRE(sscanf(id, "%04x:%02x:%02x.%01x", &dom, &bus, &dev, &fn) == 4);
        HIP_OK(hipDeviceGetAttribute(&pci_bus, hipDeviceAttributePciBusId, d));
        HIP_OK(hipDeviceGetAttribute(&pci_dev, hipDeviceAttributePciDeviceId, d));
        HIP_OK(hipDeviceGetAttribute(&pci_dom, hipDeviceAttributePciDomainID, d));
        CHECK((int)bus == pci_bus && (int)dev == pci_dev && (int)dom == pci_dom);
        HIP_OK(hipDeviceGetByPCIBusId(&back, id));
        CHECK(back == d);
        /* CUDA's short form, bus:device.function, means domain 0 */
        if (dom == 0) {
            back = -1;
            HIP_OK(hipDeviceGetByPCIBusId(&back, id + 5));
            CHECKF(back == d, "%s -> %d", id + 5, back);
        }
        /* exactly 13 bytes fit */
        char exact[13];
        HIP_OK(hipDeviceGetPCIBusId(exact, sizeof exact, d));
        CHECK(strcmp(exact, id) == 0);
    }
}

TEST(hipDeviceGetPCIBusId_negative)
{
    /* hip-tests: len <= 12 fails after writing the truncated, terminated string */
    char full[32], buf[32];
    int n = hc_device_count();
    HIP_OK(hipDeviceGetPCIBusId(full, sizeof full, 0));
    memset(buf, 'x', sizeof buf);
    CHECK_HIP(hipDeviceGetPCIBusId(buf, 6, 0), hipErrorInvalidValue);
    CHECK(memcmp(buf, full, 5) == 0 && buf[5] == 0 && buf[6] == 'x');
    CHECK_HIP(hipDeviceGetPCIBusId(buf, 12, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetPCIBusId(NULL, 32, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetPCIBusId(buf, 0, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetPCIBusId(buf, -1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetPCIBusId(buf, 32, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetPCIBusId(buf, 32, n), hipErrorInvalidDevice);
}

TEST(hipDeviceGetByPCIBusId_negative)
{
    int d = -7;
    CHECK_HIP(hipDeviceGetByPCIBusId(NULL, "0000:03:00.0"), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetByPCIBusId(&d, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetByPCIBusId(&d, ""), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetByPCIBusId(&d, "0000:"), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetByPCIBusId(&d, "not a bus id"), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetByPCIBusId(&d, "ffff:ff:1f.7"), hipErrorInvalidValue);
    CHECK(d == -7);
}

TEST(hipChooseDevice_picks_a_matching_device)
{
    int n = hc_device_count(), dev = -1;
    hipDeviceProp_t want;
    memset(&want, 0, sizeof want);
    HIP_OK(hipChooseDevice(&dev, &want));
    CHECK(dev == 0);
    hipDeviceProp_t p = props_of(n - 1);
    want.major = p.major;
    want.multiProcessorCount = p.multiProcessorCount;
    want.totalGlobalMem = p.totalGlobalMem;
    dev = -1;
    HIP_OK(hipChooseDevice(&dev, &want));
    REQUIRE(dev >= 0 && dev < n);
    hipDeviceProp_t got = props_of(dev);
    CHECK(got.major >= want.major && got.totalGlobalMem >= want.totalGlobalMem);
    /* nothing has that much memory: device 0, hipSuccess (clr) */
    want.totalGlobalMem = (size_t)1 << 62;
    dev = -1;
    HIP_OK(hipChooseDevice(&dev, &want));
    CHECK(dev == 0);
    CHECK_HIP(hipChooseDevice(NULL, &want), hipErrorInvalidValue);
    CHECK_HIP(hipChooseDevice(&dev, NULL), hipErrorInvalidValue);
}

TEST(hipChooseDeviceR0000_legacy_layout)
{
    /* The ROCm 5 layout: zeroed asks for nothing; warpSize at its R0000 place must match. */
    hipDeviceProp_tR0000 want;
    int dev = -1;
    memset(&want, 0, sizeof want);
    want.warpSize = props_of(0).warpSize;
    HIP_OK(hipChooseDeviceR0000(&dev, &want));
    CHECK(dev == 0);
    want.warpSize = 1 << 30;
    dev = -1;
    HIP_OK(hipChooseDeviceR0000(&dev, &want));
    CHECK(dev == 0);
    CHECK_HIP(hipChooseDeviceR0000(NULL, &want), hipErrorInvalidValue);
    CHECK_HIP(hipChooseDeviceR0000(&dev, NULL), hipErrorInvalidValue);
}

TEST(hipDeviceFlags_set_get)
{
    unsigned f = 99;
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleAuto);
    const unsigned sched[] = {hipDeviceScheduleAuto, hipDeviceScheduleSpin, hipDeviceScheduleYield,
                              hipDeviceScheduleBlockingSync};
    for (int i = 0; i < 4; i++)
        for (unsigned extra = 0; extra <= (hipDeviceMapHost | hipDeviceLmemResizeToMax); extra += 8) {
            unsigned set = sched[i] | (extra & (hipDeviceMapHost | hipDeviceLmemResizeToMax));
            HIP_OK(hipSetDeviceFlags(set));
            HIP_OK(hipGetDeviceFlags(&f));
            CHECKF(f == (set & hipDeviceScheduleMask), "set %#x got %#x", set, f);
        }
    CHECK_HIP(hipGetDeviceFlags(NULL), hipErrorInvalidValue);
    const unsigned bad[] = {0x3, 0x5, 0x6, 0x7, 0x20, 0xffff};
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
    for (int i = 0; i < 6; i++)
        CHECK_HIP(hipSetDeviceFlags(bad[i]), hipErrorInvalidValue);
    HIP_OK(hipGetDeviceFlags(&f));
    CHECK(f == hipDeviceScheduleSpin);
}

TEST(hipDeviceCacheConfig_set_get)
{
    int n = hc_device_count();
    hipFuncCache_t c = (hipFuncCache_t)77;
    HIP_OK(hipDeviceGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferNone);
    for (int d = 0; d < n; d++) {
        HIP_OK(hipSetDevice(d));
        for (int v = hipFuncCachePreferNone; v <= hipFuncCachePreferEqual; v++) {
            HIP_OK(hipDeviceSetCacheConfig((hipFuncCache_t)v));
            HIP_OK(hipDeviceGetCacheConfig(&c));
            CHECK((int)c == v);
        }
    }
    CHECK_HIP(hipDeviceSetCacheConfig((hipFuncCache_t)-1), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetCacheConfig((hipFuncCache_t)4), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetCacheConfig(NULL), hipErrorInvalidValue);
    HIP_OK(hipDeviceGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferEqual);
}

TEST(hipDeviceSharedMemConfig_is_four_bytes)
{
    hipSharedMemConfig c = (hipSharedMemConfig)77;
    for (int v = hipSharedMemBankSizeDefault; v <= hipSharedMemBankSizeEightByte; v++) {
        HIP_OK(hipDeviceSetSharedMemConfig((hipSharedMemConfig)v));
        HIP_OK(hipDeviceGetSharedMemConfig(&c));
        CHECK(c == hipSharedMemBankSizeFourByte);
    }
    CHECK_HIP(hipDeviceSetSharedMemConfig((hipSharedMemConfig)-1), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetSharedMemConfig((hipSharedMemConfig)3), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetSharedMemConfig(NULL), hipErrorInvalidValue);
}

/* hip-tests hipDeviceSetGetLimit.cc, hipDeviceSetLimit_old.cc (clr hipDeviceSetLimit/GetLimit):
 * set then get on every device; a limit at or past hipLimitRange is hipErrorInvalidValue. */
TEST(hipDeviceLimit_hip_tests_cases)
{
    size_t v = 0, old = 0;
    int n = hc_device_count();
    for (int d = 0; d < n; d++) {
        HIP_OK(hipSetDevice(d));
        HIP_OK(hipDeviceSetLimit(hipLimitStackSize, 512));
        HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
        CHECK(v >= 512);
        HIP_OK(hipDeviceSetLimit(hipLimitStackSize, 16 * KiB));
        HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
        CHECK(v >= 16 * KiB);
    }
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipDeviceGetLimit(&old, hipLimitStackSize));
    CHECK(old != 0);
    HIP_OK(hipDeviceSetLimit(hipLimitStackSize, old + 8));
    HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
    CHECK(v >= old + 8);
    /* the other negatives are in hipDeviceLimit_negative */
    HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
    CHECK_HIP(hipDeviceSetLimit((hipLimit_t)0xffff, v / 2), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetLimit(&v, (hipLimit_t)0xffff), hipErrorInvalidValue);
    /* a failed set leaves the value as it was */
    HIP_OK(hipDeviceGetLimit(&old, hipLimitStackSize));
    CHECK_HIP(hipDeviceSetLimit(hipLimitStackSize, (size_t)-1), hipErrorInvalidValue);
    HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
    CHECK(v == old);
}

TEST(hipDeviceLimit_set_get)
{
    size_t v = 0;
    HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
    CHECK(v == 1024);
    HIP_OK(hipDeviceSetLimit(hipLimitStackSize, v + 8));
    HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
    CHECK(v == 1040); /* rounded up to 16 */
    CHECK_HIP(hipDeviceSetLimit(hipLimitStackSize, 128 * KiB), hipErrorInvalidValue);
    HIP_OK(hipDeviceSetLimit(hipLimitStackSize, 128 * KiB - 16));
    HIP_OK(hipDeviceGetLimit(&v, hipLimitStackSize));
    CHECK(v == 128 * KiB - 16);

    HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
    CHECK(v == 8 * MiB);
    HIP_OK(hipDeviceSetLimit(hipLimitMallocHeapSize, 64 * MiB));
    HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
    CHECK(v == 64 * MiB);
    CHECK_HIP(hipDeviceSetLimit(hipLimitMallocHeapSize, props_of(0).totalGlobalMem), hipErrorInvalidValue);
    HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
    CHECK(v == 64 * MiB);
    if (hc_device_count() > 1) {
        /* limits are per device */
        HIP_OK(hipSetDevice(1));
        HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
        CHECK(v == 8 * MiB);
    }
}

TEST(hipDeviceLimit_negative)
{
    size_t v;
    CHECK_HIP(hipDeviceGetLimit(NULL, hipLimitStackSize), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetLimit(&v, (hipLimit_t)-1), hipErrorUnsupportedLimit);
    CHECK_HIP(hipDeviceSetLimit((hipLimit_t)-1, 1024), hipErrorUnsupportedLimit);
    CHECK_HIP(hipDeviceGetLimit(&v, hipLimitPrintfFifoSize), hipErrorUnsupportedLimit);
    CHECK_HIP(hipDeviceSetLimit(hipLimitPrintfFifoSize, 1024), hipErrorUnsupportedLimit);
    CHECK_HIP(hipDeviceGetLimit(&v, hipLimitRange), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetLimit(hipLimitRange, 1024), hipErrorInvalidValue);
}

static void *valid_devices_thread(void *arg)
{
    int *out = arg;
    int list[] = {1, 0};
    out[0] = hipSetValidDevices(list, 2);
    out[1] = hipGetDevice(&out[2]);
    /* after hipSetDevice, the list no longer moves the current device */
    out[3] = hipSetDevice(0);
    out[4] = hipSetValidDevices(list, 1);
    out[5] = hipGetDevice(&out[6]);
    return NULL;
}

TEST(hipSetValidDevices)
{
    REQUIRE_GPUS(2);
    int list[] = {0, 99};
    CHECK_HIP(hipSetValidDevices(NULL, 0), hipSuccess);
    CHECK_HIP(hipSetValidDevices(NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipSetValidDevices(list, -1), hipErrorInvalidValue);
    CHECK_HIP(hipSetValidDevices(list, 99), hipErrorInvalidValue);
    CHECK_HIP(hipSetValidDevices(list, 2), hipErrorInvalidDevice);
    int r[7] = {-1, -1, -1, -1, -1, -1, -1};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, valid_devices_thread, r) == 0);
    pthread_join(t, NULL);
    CHECK(r[0] == hipSuccess && r[1] == hipSuccess && r[2] == 1);
    CHECK(r[3] == hipSuccess && r[4] == hipSuccess && r[5] == hipSuccess && r[6] == 0);
}

TEST(hipDeviceGetAttribute_hdp_flush_registers)
{
    /* hip-tests Unit_hipGetDeviceAttribute_CheckAttrValues: the attribute is a pointer, the
     * same as hipDeviceProp_t.hdpMemFlushCntl / hdpRegFlushCntl (clr writes 8 bytes) */
    int n = hc_device_count();
    for (int d = 0; d < n; d++) {
        hipDeviceProp_t p = props_of(d);
        unsigned *mem = NULL, *reg = NULL;
        HIP_OK(hipDeviceGetAttribute((int *)&mem, hipDeviceAttributeHdpMemFlushCntl, d));
        HIP_OK(hipDeviceGetAttribute((int *)&reg, hipDeviceAttributeHdpRegFlushCntl, d));
        CHECK(mem != NULL && mem == p.hdpMemFlushCntl);
        CHECK(reg == p.hdpRegFlushCntl && reg == mem + 1);
        hipDeviceProp_tR0000 old;
        HIP_OK(hipGetDevicePropertiesR0000(&old, d));
        CHECK(old.hdpMemFlushCntl == mem && old.hdpRegFlushCntl == reg);
        if (d > 0)
            CHECK(mem != props_of(0).hdpMemFlushCntl);
    }
    unsigned *x;
    CHECK_HIP(hipDeviceGetAttribute((int *)&x, hipDeviceAttributeHdpMemFlushCntl, n), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetAttribute(NULL, hipDeviceAttributeHdpMemFlushCntl, 0), hipErrorInvalidValue);
}

TEST(hipGetProcAddress_returns_our_functions)
{
    void *f = NULL;
    hipDriverProcAddressQueryResult st = (hipDriverProcAddressQueryResult)77;
    HIP_OK(hipGetProcAddress("hipMalloc", &f, HIP_VERSION, 0, &st));
    CHECK(f == (void *)hipMalloc);
    CHECK(st == HIP_GET_PROC_ADDRESS_SUCCESS);
    HIP_OK(hipGetProcAddress("hipLaunchHostFunc", &f, HIP_VERSION, 0, NULL));
    CHECK(f == (void *)hipLaunchHostFunc);
    /* a function got this way works */
    int count = 0;
    HIP_OK(hipGetProcAddress("hipGetDeviceCount", &f, HIP_VERSION, 0, NULL));
    HIP_OK(((hipError_t(*)(int *))f)(&count));
    CHECK(count == hc_device_count());
    /* clr: the ROCm 6 names for hipVersion >= 600, the unversioned ones before */
    HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &f, 600, 0, NULL));
    CHECK(f == (void *)hipGetDevicePropertiesR0600);
    HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &f, 502, 0, NULL));
    CHECK(f == unversioned("hipGetDeviceProperties"));
    HIP_OK(hipGetProcAddress("hipChooseDevice", &f, 700, 0, NULL));
    CHECK(f == (void *)hipChooseDeviceR0600);
    HIP_OK(hipGetProcAddress("hipChooseDevice", &f, 500, 0, NULL));
    CHECK(f == unversioned("hipChooseDevice"));
}

/* Every name hip-tests' hipGetProcAddress_Memory_APIs.cc (ROCm 7) asks for. */
#define HIP_TESTS_MEMORY_APIS(X) \
    X(hipArray3DCreate) X(hipArray3DGetDescriptor) X(hipArrayCreate) X(hipArrayDestroy) \
    X(hipArrayGetDescriptor) X(hipArrayGetInfo) X(hipDrvMemcpy3D) X(hipDrvMemcpy3DAsync) \
    X(hipDrvPointerGetAttributes) X(hipExtMallocWithFlags) X(hipFree) X(hipFreeArray) \
    X(hipFreeAsync) X(hipFreeHost) X(hipGetProcAddress) X(hipHostAlloc) X(hipHostFree) \
    X(hipHostGetDevicePointer) X(hipHostGetFlags) X(hipHostMalloc) X(hipHostRegister) \
    X(hipHostUnregister) X(hipMalloc) X(hipMalloc3D) X(hipMalloc3DArray) X(hipMallocArray) \
    X(hipMallocAsync) X(hipMallocFromPoolAsync) X(hipMallocHost) X(hipMallocManaged) \
    X(hipMallocPitch) X(hipMemAdvise) X(hipMemAllocHost) X(hipMemAllocPitch) \
    X(hipMemGetAddressRange) X(hipMemGetInfo) X(hipMemPoolCreate) X(hipMemPoolDestroy) \
    X(hipMemPoolGetAccess) X(hipMemPoolGetAttribute) X(hipMemPoolSetAccess) \
    X(hipMemPoolSetAttribute) X(hipMemPoolTrimTo) X(hipMemPrefetchAsync) X(hipMemPtrGetInfo) \
    X(hipMemRangeGetAttribute) X(hipMemRangeGetAttributes) X(hipMemcpy) X(hipMemcpy2D) \
    X(hipMemcpy2DAsync) X(hipMemcpy2DFromArray) X(hipMemcpy2DFromArrayAsync) X(hipMemcpy2DToArray) \
    X(hipMemcpy2DToArrayAsync) X(hipMemcpy3D) X(hipMemcpy3DAsync) X(hipMemcpyAsync) \
    X(hipMemcpyAtoH) X(hipMemcpyDtoD) X(hipMemcpyDtoDAsync) X(hipMemcpyDtoH) X(hipMemcpyDtoHAsync) \
    X(hipMemcpyFromArray) X(hipMemcpyHtoA) X(hipMemcpyHtoD) X(hipMemcpyHtoDAsync) \
    X(hipMemcpyParam2D) X(hipMemcpyParam2DAsync) X(hipMemcpyPeer) X(hipMemcpyPeerAsync) \
    X(hipMemcpyToArray) X(hipMemcpyWithStream) X(hipMemset) X(hipMemset2D) X(hipMemset2DAsync) \
    X(hipMemset3D) X(hipMemset3DAsync) X(hipMemsetAsync) X(hipMemsetD16) X(hipMemsetD16Async) \
    X(hipMemsetD32) X(hipMemsetD32Async) X(hipMemsetD8) X(hipMemsetD8Async) \
    X(hipPointerGetAttribute) X(hipPointerGetAttributes) X(hipPointerSetAttribute) \
    X(hipStreamAttachMemAsync)

#define MEMORY_API_ENTRY(f) {#f, (void *)f},
static const struct {
    const char *name;
    void *fn;
} memory_apis[] = {HIP_TESTS_MEMORY_APIS(MEMORY_API_ENTRY)};

/* hip-tests Unit_hipGetProcAddress_MemoryApis*: each memory API resolves to our own entry point
 * (hipGetProcAddress answers for every export), and the driver-style hipMemAllocHost got this
 * way allocates pinned memory that hipMemPtrGetInfo sizes and hipFree frees. */
TEST(hipGetProcAddress_memory_apis)
{
    int ver = 0;
    HIP_OK(hipRuntimeGetVersion(&ver));
    for (size_t i = 0; i < sizeof(memory_apis) / sizeof(memory_apis[0]); i++) {
        void *f = NULL;
        hipDriverProcAddressQueryResult st = (hipDriverProcAddressQueryResult)77;
        hipError_t r = hipGetProcAddress(memory_apis[i].name, &f, ver, 0, &st);
        CHECKF(r == hipSuccess && f == memory_apis[i].fn && st == HIP_GET_PROC_ADDRESS_SUCCESS,
               "hipGetProcAddress(%s): %s, %p (want %p)", memory_apis[i].name, hipGetErrorName(r), f,
               memory_apis[i].fn);
    }
    void *f = NULL;
    HIP_OK(hipGetProcAddress("hipMemAllocHost", &f, ver, 0, NULL));
    void *h = NULL;
    HIP_OK(((hipError_t(*)(void **, size_t))f)(&h, 256));
    REQUIRE(h != NULL);
    size_t size = 0;
    HIP_OK(hipMemPtrGetInfo(h, &size));
    CHECK(size == 256);
    unsigned flags = 77;
    HIP_OK(hipHostGetFlags(&flags, h));
    CHECK(flags == hipHostMallocDefault);
    memset(h, 0x5a, 256); /* host memory */
    HIP_OK(hipFree(h));
    CHECK_HIP(hipMemPtrGetInfo(h, &size), hipErrorInvalidValue);
    CHECK_HIP(hipMemAllocHost(NULL, 256), hipErrorInvalidValue);
}

TEST(hipGetProcAddress_negative)
{
    void *f = (void *)1;
    hipDriverProcAddressQueryResult st = (hipDriverProcAddressQueryResult)77;
    CHECK_HIP(hipGetProcAddress("hipNoSuchFunction", &f, HIP_VERSION, 0, &st), hipErrorInvalidValue);
    CHECK(st == HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && f == NULL);
    /* only our own exports: not libc's, nor a dependency's */
    st = (hipDriverProcAddressQueryResult)77;
    CHECK_HIP(hipGetProcAddress("malloc", &f, HIP_VERSION, 0, &st), hipErrorInvalidValue);
    CHECK(st == HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK_HIP(hipGetProcAddress(NULL, &f, HIP_VERSION, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetProcAddress("", &f, HIP_VERSION, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetProcAddress("hipMalloc", NULL, HIP_VERSION, 0, NULL), hipErrorInvalidValue);
}

TEST(hipGetDriverEntryPoint)
{
    void *f = NULL;
    hipDriverEntryPointQueryResult st = (hipDriverEntryPointQueryResult)77;
    HIP_OK(hipGetDriverEntryPoint("hipMemcpy", &f, hipEnableDefault, &st));
    CHECK(f == (void *)hipMemcpy && st == hipDriverEntryPointSuccess);
    HIP_OK(hipGetDriverEntryPoint("hipStreamSynchronize", &f, hipEnableLegacyStream, NULL));
    CHECK(f == (void *)hipStreamSynchronize);
    /* the _spt variant where there is one, else the plain function, as clr falls back */
    HIP_OK(hipGetDriverEntryPoint("hipStreamSynchronize", &f, hipEnablePerThreadDefaultStream, NULL));
    CHECK(f == (void *)hipStreamSynchronize_spt);
    HIP_OK(hipGetDriverEntryPoint("hipMalloc", &f, hipEnablePerThreadDefaultStream, NULL));
    CHECK(f == (void *)hipMalloc);
    CHECK_HIP(hipGetDriverEntryPoint("hipMemcpy", &f, 3, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetDriverEntryPoint("hipNoSuch", &f, hipEnableDefault, &st), hipErrorInvalidValue);
    CHECK(st == hipDriverEntryPointSymbolNotFound);
    CHECK_HIP(hipGetDriverEntryPoint(NULL, &f, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetDriverEntryPoint("", &f, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGetDriverEntryPoint("hipMemcpy", NULL, 0, NULL), hipErrorInvalidValue);
}

TEST(hipCtx_create_push_pop)
{
    /* hip-tests Unit_hipGetDeviceFlags_Positive_Context: hipCtxCreate sets the device flags */
    hipCtx_t ctx = NULL, popped = NULL, cur = NULL;
    unsigned flags = 0, want = hipDeviceScheduleYield | hipDeviceMapHost;
    HIP_OK(hipInit(0));
    HIP_OK(hipCtxCreate(&ctx, want, 0));
    REQUIRE(ctx != NULL);
    HIP_OK(hipGetDeviceFlags(&flags));
    CHECK(flags == want);
    HIP_OK(hipCtxGetCurrent(&cur));
    CHECK(cur == ctx);
    HIP_OK(hipCtxPopCurrent(&popped));
    CHECK(popped == ctx);
    HIP_OK(hipCtxDestroy(ctx));
    CHECK_HIP(hipCtxPopCurrent(&popped), hipErrorInvalidContext);
    /* the primary context is the same object */
    hipCtx_t prim = NULL;
    HIP_OK(hipDevicePrimaryCtxRetain(&prim, 0));
    CHECK(prim == ctx);
    HIP_OK(hipDevicePrimaryCtxRelease(0));
}

TEST(hipCtx_switches_device)
{
    REQUIRE_GPUS(2);
    hipCtx_t c0 = NULL, c1 = NULL, popped = NULL;
    int d = -1;
    HIP_OK(hipDevicePrimaryCtxRetain(&c0, 0));
    HIP_OK(hipDevicePrimaryCtxRetain(&c1, 1));
    CHECK(c0 != c1);
    HIP_OK(hipCtxPushCurrent(c0));
    HIP_OK(hipCtxPushCurrent(c1));
    HIP_OK(hipCtxGetDevice(&d));
    CHECK(d == 1);
    HIP_OK(hipGetDevice(&d));
    CHECK(d == 1);
    HIP_OK(hipCtxPopCurrent(&popped));
    CHECK(popped == c1);
    HIP_OK(hipCtxGetDevice(&d));
    CHECK(d == 0);
    HIP_OK(hipCtxSetCurrent(c1));
    HIP_OK(hipGetDevice(&d));
    CHECK(d == 1);
    HIP_OK(hipCtxSetCurrent(NULL));
    CHECK_HIP(hipCtxPopCurrent(NULL), hipErrorInvalidContext);
    HIP_OK(hipCtxSynchronize());
}

TEST(hipCtx_negative)
{
    hipCtx_t ctx;
    int n = hc_device_count();
    unsigned flags = 7;
    int active = 7;
    CHECK_HIP(hipCtxCreate(&ctx, 0, n), hipErrorInvalidValue);
    CHECK_HIP(hipCtxCreate(&ctx, 0, -1), hipErrorInvalidValue);
    CHECK_HIP(hipCtxCreate(NULL, 0, 0), hipErrorInvalidValue);
    CHECK_HIP(hipCtxDestroy(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipCtxDestroy((hipCtx_t)&ctx), hipErrorInvalidContext);
    CHECK_HIP(hipCtxPushCurrent(NULL), hipErrorInvalidContext);
    CHECK_HIP(hipCtxPushCurrent((hipCtx_t)&ctx), hipErrorInvalidContext);
    CHECK_HIP(hipCtxSetCurrent((hipCtx_t)&ctx), hipErrorInvalidContext);
    CHECK_HIP(hipCtxGetDevice(NULL), hipErrorInvalidValue);
    HIP_OK(hipDevicePrimaryCtxRetain(&ctx, 0));
    int v;
    CHECK_HIP(hipCtxGetApiVersion(ctx, &v), hipErrorNotSupported);
    CHECK_HIP(hipCtxGetApiVersion(ctx, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDevicePrimaryCtxRelease(n), hipErrorInvalidDevice);
    CHECK_HIP(hipDevicePrimaryCtxReset(n), hipErrorInvalidDevice);
    HIP_OK(hipDevicePrimaryCtxReset(0));
    CHECK_HIP(hipDevicePrimaryCtxSetFlags(0, 0), hipErrorContextAlreadyInUse);
    CHECK_HIP(hipDevicePrimaryCtxSetFlags(n, 0), hipErrorInvalidDevice);
    CHECK_HIP(hipDevicePrimaryCtxGetState(n, &flags, &active), hipErrorInvalidDevice);
    HIP_OK(hipDevicePrimaryCtxGetState(0, &flags, &active));
    CHECK(flags == 0 && active == 0);
    HIP_OK(hipStreamSynchronize(NULL));
    HIP_OK(hipDevicePrimaryCtxGetState(0, NULL, &active));
    CHECK(active == 1);
}

/* HIP_HIDDEN_FREE_MEM (MiB, clr flag) lowers the free memory hipMemGetInfo reports, on every
 * device, and not the total; a value larger than the free memory hides nothing (hip-tests
 * multiproc/hipMemGetInfoMProc.cc). */
TEST(hipMemGetInfo_HIP_HIDDEN_FREE_MEM)
{
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    for (int d = 0; d < n; d++) {
        HIP_OK(hipSetDevice(d));
        size_t free0 = 0, total0 = 0, free1 = 0, total1 = 0, free2 = 0;
        unsetenv("HIP_HIDDEN_FREE_MEM");
        HIP_OK(hipMemGetInfo(&free0, &total0));
        REQUIRE(free0 > ((size_t)1 << 30));
        setenv("HIP_HIDDEN_FREE_MEM", "1024", 1);
        HIP_OK(hipMemGetInfo(&free1, &total1));
        setenv("HIP_HIDDEN_FREE_MEM", "100000000", 1);
        HIP_OK(hipMemGetInfo(&free2, NULL));
        unsetenv("HIP_HIDDEN_FREE_MEM");
        CHECKF(total1 == total0 && free1 == free0 - ((size_t)1 << 30), "device %d: free %zu -> %zu", d,
               free0, free1);
        CHECK(free2 == free0);
    }
    HIP_OK(hipSetDevice(0));
}
