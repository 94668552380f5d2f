/*
 * Devices: hipInit, hipGetDeviceCount, hipSetDevice, hipGetDevice, hipDeviceGet,
 * hipDeviceSynchronize, hipDeviceReset, hipGetDeviceProperties (and the
 * hipGetDevicePropertiesR0600 symbol), hipDeviceGetAttribute,
 * hipDriverGetVersion, hipRuntimeGetVersion, HIP_VISIBLE_DEVICES and
 * ROCR_VISIBLE_DEVICES.
 *
 * Expected codes follow AMD's hip-tests (catch/unit/device/) and, where they
 * only assert "!= hipSuccess", clr's hip_device*.cpp.
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

/* Set by the Makefile to the --gpus value given to kfdsim. */
static int expected_gpus(void)
{
    const char *e = getenv("HIPCONF_EXPECT_GPUS");
    return e ? atoi(e) : 0;
}

TEST(hipInit_flags)
{
    HIP_OK(hipInit(0));
    HIP_OK(hipInit(0)); /* idempotent */
    CHECK_HIP(hipInit(1), hipErrorInvalidValue);
    CHECK_HIP(hipInit(~0u), hipErrorInvalidValue);
    HIP_OK(hipInit(0)); /* a failed call changes nothing */
}

TEST(hipGetDeviceCount_basic)
{
    int n = -1;
    HIP_OK(hipGetDeviceCount(&n));
    CHECK(n >= 1);
    if (expected_gpus() > 0)
        CHECKF(n == expected_gpus(), "hipGetDeviceCount = %d, kfdsim runs %d GPUs", n,
               expected_gpus());
    int n2 = -1;
    HIP_OK(hipGetDeviceCount(&n2));
    CHECK(n2 == n);
}

TEST(hipGetDeviceCount_null)
{
    CHECK_HIP(hipGetDeviceCount(NULL), hipErrorInvalidValue);
}

TEST(hipSetDevice_hipGetDevice_basic)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    int d = -1;
    REQUIRE(n >= 1);
    HIP_OK(hipGetDevice(&d));
    CHECK(d == 0); /* the default device is 0 */
    for (int i = 0; i < n; i++) {
        HIP_OK(hipSetDevice(i));
        HIP_OK(hipGetDevice(&d));
        CHECK(d == i);
    }
    HIP_OK(hipSetDevice(0));
}

TEST(hipSetDevice_invalid_ordinal)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    int d = -1;
    REQUIRE(n >= 1);
    HIP_OK(hipSetDevice(n - 1));
    CHECK_HIP(hipSetDevice(-1), hipErrorInvalidDevice);
    CHECK_HIP(hipSetDevice(n), hipErrorInvalidDevice);
    CHECK_HIP(hipSetDevice(n + 100), hipErrorInvalidDevice);
    CHECK_HIP(hipSetDevice(INT32_MIN), hipErrorInvalidDevice);
    /* a failed hipSetDevice leaves the current device as it was */
    HIP_OK(hipGetDevice(&d));
    CHECK(d == n - 1);
}

TEST(hipGetDevice_null)
{
    CHECK_HIP(hipGetDevice(NULL), hipErrorInvalidValue);
}

static void *thread_get_device(void *arg)
{
    int *out = arg;
    if (hipGetDevice(&out[0]) != hipSuccess)
        out[0] = -100;
    out[1] = hipSetDevice(0);
    return NULL;
}

TEST(hipSetDevice_is_per_thread)
{
    REQUIRE_GPUS(2);
    pthread_t th;
    int res[2] = {-1, -1};
    int d = -1;
    HIP_OK(hipSetDevice(1));
    REQUIRE(pthread_create(&th, NULL, thread_get_device, res) == 0);
    pthread_join(th, NULL);
    CHECKF(res[0] == 0, "a new thread starts on device %d, expected 0", res[0]);
    CHECK(res[1] == hipSuccess);
    /* the other thread's hipSetDevice(0) does not change this thread's device */
    HIP_OK(hipGetDevice(&d));
    CHECK(d == 1);
}

TEST(hipDeviceGet_basic)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int i = 0; i < n; i++) {
        hipDevice_t dev = -1;
        HIP_OK(hipDeviceGet(&dev, i));
        CHECK(dev == i);
    }
}

TEST(hipDeviceGet_negative)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    hipDevice_t dev = 0;
    REQUIRE(n >= 1);
    CHECK_HIP(hipDeviceGet(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGet(&dev, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGet(&dev, n), hipErrorInvalidDevice);
}

TEST(hipDeviceSynchronize_empty)
{
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipDeviceSynchronize());
}

TEST(hipDeviceSynchronize_waits_for_all_streams)
{
    hipStream_t s1, s2;
    struct busy b = busy_begin();
    size_t n = 4 * MiB;
    void *d1 = NULL, *d2 = NULL;
    HIP_OK(hipMalloc(&d1, n));
    HIP_OK(hipMalloc(&d2, n));
    HIP_OK(hipStreamCreate(&s1));
    HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    REQUIRE_BUSY(&b, s1);
    HIP_OK(hipMemsetAsync(d1, 0x5a, n, s1));
    busy_enqueue(&b, s2, 2);
    HIP_OK(hipMemsetAsync(d2, 0xa5, n, s2));
    HIP_OK(hipDeviceSynchronize());
    CHECK_HIP(hipStreamQuery(s1), hipSuccess);
    CHECK_HIP(hipStreamQuery(s2), hipSuccess);
    CHECK_HIP(hipStreamQuery(NULL), hipSuccess);
    check_dev_bytes(d1, n, 0x5a);
    check_dev_bytes(d2, n, 0xa5);
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipStreamDestroy(s2));
    HIP_OK(hipFree(d1));
    HIP_OK(hipFree(d2));
    busy_end(&b);
}

TEST(hipDeviceReset_releases_allocations)
{
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 1 * MiB));
    HIP_OK(hipDeviceReset());
    /* hip-tests Unit_hipDeviceReset_Positive_Basic: the allocation is gone */
    CHECK_HIP(hipFree(d), hipErrorInvalidValue);
    /* and the device is usable again */
    void *d2 = dev_pattern(64 * KiB, 7);
    check_dev_pattern(d2, 64 * KiB, 7);
    HIP_OK(hipFree(d2));
}

/* hip-tests Unit_hipDeviceReset_Positive_Basic: the reset device's flags and cache config are
 * back to their defaults (CUDA: cudaDeviceReset destroys the primary context's state). */
TEST(hipDeviceReset_restores_flags_and_cache_config)
{
    unsigned before = 99, after = 99;
    hipFuncCache_t c = hipFuncCachePreferShared;
    HIP_OK(hipGetDeviceFlags(&before));
    CHECK(before == 0);
    HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
    HIP_OK(hipDeviceSetCacheConfig(hipFuncCachePreferL1));
    HIP_OK(hipGetDeviceFlags(&after));
    CHECK(after == hipDeviceScheduleBlockingSync);
    HIP_OK(hipDeviceReset());
    HIP_OK(hipGetDeviceFlags(&after));
    CHECK(after == before);
    HIP_OK(hipDeviceGetCacheConfig(&c));
    CHECK(c == hipFuncCachePreferNone);
}

TEST(hipGetDeviceProperties_fields)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int i = 0; i < n; i++) {
        hipDeviceProp_t p;
        memset(&p, 0xcc, sizeof(p));
        HIP_OK(hipGetDeviceProperties(&p, i));
        CHECKF(p.name[0] != '\0' && memchr(p.name, 0, sizeof(p.name)) != NULL,
               "device %d: name is empty or not terminated", i);
        CHECKF(strncmp(p.gcnArchName, "gfx90a", 6) == 0, "device %d: gcnArchName \"%.64s\"", i,
               p.gcnArchName);
        CHECKF(p.totalGlobalMem > 0, "device %d: totalGlobalMem 0", i);
        CHECK(p.major == 9);
        CHECK(p.minor == 0);
        CHECK(p.warpSize == 64);
        CHECK(p.multiProcessorCount > 0);
        CHECK(p.maxThreadsPerBlock > 0);
        printf("    device %d: \"%s\" %s, %zu MiB, pci %04x:%02x:%02x\n", i, p.name,
               p.gcnArchName, p.totalGlobalMem / MiB, (unsigned)p.pciDomainID,
               (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
    }
}

TEST(hipGetDeviceProperties_distinct_pci)
{
    REQUIRE_GPUS(2);
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            hipDeviceProp_t a, b;
            HIP_OK(hipGetDeviceProperties(&a, i));
            HIP_OK(hipGetDeviceProperties(&b, j));
            CHECKF(a.pciBusID != b.pciBusID || a.pciDomainID != b.pciDomainID ||
                       a.pciDeviceID != b.pciDeviceID,
                   "devices %d and %d report the same PCI location", i, j);
        }
}

TEST(hipGetDeviceProperties_totalGlobalMem_matches_hipMemGetInfo)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int i = 0; i < n; i++) {
        hipDeviceProp_t p;
        size_t free_b = 0, total = 0;
        HIP_OK(hipSetDevice(i));
        HIP_OK(hipGetDeviceProperties(&p, i));
        HIP_OK(hipMemGetInfo(&free_b, &total));
        CHECKF(total == p.totalGlobalMem, "device %d: hipMemGetInfo total %zu, props %zu", i,
               total, p.totalGlobalMem);
    }
}

TEST(hipGetDeviceProperties_negative)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    hipDeviceProp_t p;
    REQUIRE(n >= 1);
    CHECK_HIP(hipGetDeviceProperties(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGetDeviceProperties(&p, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipGetDeviceProperties(&p, n), hipErrorInvalidDevice);
}

/* ROCm 6+ exports hipGetDevicePropertiesR0600 (the header maps the
 * unversioned name to it); look it up by name so the test does not depend on
 * the header's macros. */
typedef hipError_t (*props_fn)(hipDeviceProp_t *, int);

TEST(hipGetDevicePropertiesR0600_symbol)
{
    props_fn f = (props_fn)dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600");
    REQUIREF(f != NULL, "libamdhip64 does not export hipGetDevicePropertiesR0600");
    hipDeviceProp_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    HIP_OK(f(&a, 0));
    HIP_OK(hipGetDeviceProperties(&b, 0));
    CHECK(strcmp(a.name, b.name) == 0);
    CHECK(strcmp(a.gcnArchName, b.gcnArchName) == 0);
    CHECK(strncmp(a.gcnArchName, "gfx90a", 6) == 0);
    CHECK(a.totalGlobalMem == b.totalGlobalMem);
    CHECK(a.pciBusID == b.pciBusID);
    CHECK_HIP(f(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(f(&a, -1), hipErrorInvalidDevice);
}

TEST(hipDeviceGetAttribute_values)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    for (int i = 0; i < n; i++) {
        hipDeviceProp_t p;
        int v = -1;
        HIP_OK(hipGetDeviceProperties(&p, i));

        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeVirtualMemoryManagementSupported, i));
        CHECKF(v == 1, "device %d: VirtualMemoryManagementSupported = %d", i, v);

        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, i));
        CHECK(v == p.multiProcessorCount);
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeComputeCapabilityMajor, i));
        CHECK(v == p.major);
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeComputeCapabilityMinor, i));
        CHECK(v == p.minor);
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, i));
        CHECK(v == p.warpSize);
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxThreadsPerBlock, i));
        CHECK(v == p.maxThreadsPerBlock);
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributePciBusId, i));
        CHECK(v == p.pciBusID);
        HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributePciDeviceId, i));
        CHECK(v == p.pciDeviceID);
    }
}

TEST(hipDeviceGetAttribute_negative)
{
    int n = hc_device_count();
    REQUIRE(n >= 1);
    int v = 1234;
    REQUIRE(n >= 1);
    CHECK_HIP(hipDeviceGetAttribute(NULL, hipDeviceAttributePciBusId, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetAttribute(&v, hipDeviceAttributePciBusId, -1), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetAttribute(&v, hipDeviceAttributePciBusId, n), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetAttribute(&v, (hipDeviceAttribute_t)-1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetAttribute(&v, (hipDeviceAttribute_t)0x7fffff, 0),
              hipErrorInvalidValue);
}

TEST(hipDriverGetVersion_hipRuntimeGetVersion)
{
    int drv = -1, rt = -1;
    HIP_OK(hipDriverGetVersion(&drv));
    HIP_OK(hipRuntimeGetVersion(&rt));
    CHECK(drv > 0);
    /* HIP_VERSION = major * 10000000 + minor * 100000 + patch; libamdhip64.so.7 is HIP 7.x */
    CHECKF(rt / 10000000 == 7, "hipRuntimeGetVersion = %d, expected HIP 7.x", rt);
    CHECK_HIP(hipDriverGetVersion(NULL), hipErrorInvalidValue);
    CHECK_HIP(hipRuntimeGetVersion(NULL), hipErrorInvalidValue);
}

/* ---- HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES ---------------------------- */

struct pci_loc {
    int domain, bus, dev;
};

struct probe {
    int count;
    struct pci_loc loc[16];
};

/* Ask a grandchild (forked before this process touches HIP, with the
 * visibility variables unset) for the full device list. */
static struct probe probe_all_devices(void)
{
    struct probe pr;
    int fds[2];
    memset(&pr, 0, sizeof(pr));
    REQUIRE(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        struct probe p;
        memset(&p, 0, sizeof(p));
        unsetenv("HIP_VISIBLE_DEVICES");
        unsetenv("ROCR_VISIBLE_DEVICES");
        unsetenv("CUDA_VISIBLE_DEVICES");
        if (hipGetDeviceCount(&p.count) != hipSuccess)
            p.count = 0;
        for (int i = 0; i < p.count && i < 16; i++) {
            hipDeviceProp_t props;
            if (hipGetDeviceProperties(&props, i) != hipSuccess)
                _exit(3);
            p.loc[i].domain = props.pciDomainID;
            p.loc[i].bus = props.pciBusID;
            p.loc[i].dev = props.pciDeviceID;
        }
        ssize_t w = write(fds[1], &p, sizeof(p));
        _exit(w == (ssize_t)sizeof(p) ? 0 : 4);
    }
    close(fds[1]);
    ssize_t r = read(fds[0], &pr, sizeof(pr));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIREF(r == (ssize_t)sizeof(pr) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "device probe process failed (status 0x%x)", status);
    return pr;
}

static int same_loc(const hipDeviceProp_t *p, const struct pci_loc *l)
{
    return p->pciDomainID == l->domain && p->pciBusID == l->bus && p->pciDeviceID == l->dev;
}

static void check_visible_maps(const struct probe *all, const int *order, int n)
{
    int count = -1;
    HIP_OK(hipGetDeviceCount(&count));
    REQUIREF(count == n, "hipGetDeviceCount = %d, expected %d", count, n);
    for (int i = 0; i < n; i++) {
        hipDeviceProp_t p;
        HIP_OK(hipGetDeviceProperties(&p, i));
        CHECKF(same_loc(&p, &all->loc[order[i]]),
               "visible device %d is pci %x:%x:%x, expected physical device %d (%x:%x:%x)", i,
               p.pciDomainID, p.pciBusID, p.pciDeviceID, order[i], all->loc[order[i]].domain,
               all->loc[order[i]].bus, all->loc[order[i]].dev);
    }
    /* the visible devices work: allocate and copy on the last one */
    HIP_OK(hipSetDevice(n - 1));
    void *d = dev_pattern(1 * MiB, 11);
    hipPointerAttribute_t a;
    HIP_OK(hipPointerGetAttributes(&a, d));
    CHECK(a.device == n - 1);
    check_dev_pattern(d, 1 * MiB, 11);
    HIP_OK(hipFree(d));
}

TEST(HIP_VISIBLE_DEVICES_selects_second_gpu)
{
    struct probe all = probe_all_devices();
    if (all.count < 2)
        SKIP("needs 2 GPUs, %d visible", all.count);
    setenv("HIP_VISIBLE_DEVICES", "1", 1);
    int order[] = {1};
    check_visible_maps(&all, order, 1);
    CHECK_HIP(hipSetDevice(1), hipErrorInvalidDevice);
}

TEST(HIP_VISIBLE_DEVICES_reorders)
{
    struct probe all = probe_all_devices();
    if (all.count < 2)
        SKIP("needs 2 GPUs, %d visible", all.count);
    setenv("HIP_VISIBLE_DEVICES", "1,0", 1);
    int order[] = {1, 0};
    check_visible_maps(&all, order, 2);
}

TEST(HIP_VISIBLE_DEVICES_stops_at_invalid_entry)
{
    /* clr (rocdevice.cpp): everything right of an invalid ordinal is discarded */
    struct probe all = probe_all_devices();
    REQUIRE(all.count >= 1);
    setenv("HIP_VISIBLE_DEVICES", "0,99,1", 1);
    int order[] = {0};
    check_visible_maps(&all, order, 1);
}

TEST(HIP_VISIBLE_DEVICES_invalid_gives_no_device)
{
    int count = -1;
    setenv("HIP_VISIBLE_DEVICES", "99", 1);
    CHECK_HIP(hipGetDeviceCount(&count), hipErrorNoDevice);
    CHECK(count == 0);
    CHECK_HIP(hipSetDevice(0), hipErrorNoDevice);
}

TEST(HIP_VISIBLE_DEVICES_negative_gives_no_device)
{
    int count = -1;
    setenv("HIP_VISIBLE_DEVICES", "-1", 1);
    CHECK_HIP(hipGetDeviceCount(&count), hipErrorNoDevice);
    CHECK(count == 0);
}

/* Without a device, entry points answer hipErrorNoDevice before looking at their arguments (clr's
 * HIP_INIT_API; hip-tests multiproc/hipNoGpuTsts.cc). */
TEST(no_device_answers_before_argument_checks)
{
    setenv("HIP_VISIBLE_DEVICES", "-1", 1);
    int dev = 0, anything = 0;
    unsigned flags = 0, mask = 1;
    hipStream_t s = NULL;
    void *p = NULL;
    CHECK_HIP(hipDeviceGetByPCIBusId(&dev, "0000:00:00.0"), hipErrorNoDevice);
    CHECK_HIP(hipStreamGetFlags(NULL, &flags), hipErrorNoDevice);
    CHECK_HIP(hipExtStreamCreateWithCUMask(&s, 1, &mask), hipErrorNoDevice);
    CHECK_HIP(hipExtMallocWithFlags(&p, 128, 0), hipErrorNoDevice);
    CHECK_HIP(hipHostFree(NULL), hipErrorNoDevice);
    CHECK_HIP(hipFuncSetCacheConfig(&anything, hipFuncCachePreferShared), hipErrorNoDevice);
    CHECK_HIP(hipFuncSetSharedMemConfig(&anything, hipSharedMemBankSizeFourByte), hipErrorNoDevice);
}

TEST(ROCR_VISIBLE_DEVICES_selects_second_gpu)
{
    struct probe all = probe_all_devices();
    if (all.count < 2)
        SKIP("needs 2 GPUs, %d visible", all.count);
    setenv("ROCR_VISIBLE_DEVICES", "1", 1);
    int order[] = {1};
    check_visible_maps(&all, order, 1);
}

TEST(ROCR_VISIBLE_DEVICES_invalid_gives_no_device)
{
    int count = -1;
    setenv("ROCR_VISIBLE_DEVICES", "99", 1);
    CHECK_HIP(hipGetDeviceCount(&count), hipErrorNoDevice);
    CHECK(count == 0);
}

TEST(ROCR_and_HIP_VISIBLE_DEVICES_compose)
{
    /* ROCr filters first, HIP then indexes what ROCr left: ROCR "1" + HIP "0"
     * is physical device 1. */
    struct probe all = probe_all_devices();
    if (all.count < 2)
        SKIP("needs 2 GPUs, %d visible", all.count);
    setenv("ROCR_VISIBLE_DEVICES", "1", 1);
    setenv("HIP_VISIBLE_DEVICES", "0", 1);
    int order[] = {1};
    check_visible_maps(&all, order, 1);
}
