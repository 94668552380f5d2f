/*
 * props_dump LIB: prints what the HIP library at path LIB reports as hipDeviceProp_t for
 * every device, one "DEVICE.FIELD VALUE" line per field, through the unversioned
 * hipGetDeviceProperties symbol, which both ROCm 5 (Debian's stock libamdhip64.so.5, as
 * hipGetDeviceProperties@hip_4.2) and hipkfd export with the ROCm 5 (R0000) layout.
 * Linked to no HIP library: the library is dlopen()ed by path, so one run sees one runtime.
 * Pointer fields print as "null"/"set" (addresses differ between runs). Used by
 * tests/props_vs_stock.rs.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <hip/hip_runtime_api.h>

typedef int (*count_fn)(int *);
typedef int (*props_fn)(hipDeviceProp_tR0000 *, int);

#define I(f) printf("%d." #f " %lld\n", d, (long long)p.f)
#define A(f, n)                                                                                    \
    for (int i = 0; i < (n); i++)                                                                  \
    printf("%d." #f "[%d] %lld\n", d, i, (long long)p.f[i])
#define S(f) printf("%d." #f " %s\n", d, p.f)
#define P(f) printf("%d." #f " %s\n", d, p.f ? "set" : "null")

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBAMDHIP64\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    count_fn count = (count_fn)dlsym(h, "hipGetDeviceCount");
    props_fn props = (props_fn)dlsym(h, "hipGetDeviceProperties");
    if (!count || !props) {
        fprintf(stderr, "%s lacks hipGetDeviceCount/hipGetDeviceProperties\n", argv[1]);
        return 1;
    }
    int n = 0, e = count(&n);
    printf("count %d\n", n);
    if (e != 0) {
        fprintf(stderr, "hipGetDeviceCount: %d\n", e);
        return 1;
    }
    for (int d = 0; d < n; d++) {
        hipDeviceProp_tR0000 p;
        memset(&p, 0, sizeof p);
        if ((e = props(&p, d)) != 0) {
            fprintf(stderr, "hipGetDeviceProperties(%d): %d\n", d, e);
            return 1;
        }
        unsigned arch;
        memcpy(&arch, &p.arch, sizeof arch);
        S(name);
        I(totalGlobalMem); I(sharedMemPerBlock); I(regsPerBlock); I(warpSize);
        I(maxThreadsPerBlock); A(maxThreadsDim, 3); A(maxGridSize, 3); I(clockRate);
        I(memoryClockRate); I(memoryBusWidth); I(totalConstMem); I(major); I(minor);
        I(multiProcessorCount); I(l2CacheSize); I(maxThreadsPerMultiProcessor); I(computeMode);
        I(clockInstructionRate);
        printf("%d.arch %#x\n", d, arch);
        I(concurrentKernels); I(pciDomainID); I(pciBusID); I(pciDeviceID);
        I(maxSharedMemoryPerMultiProcessor); I(isMultiGpuBoard); I(canMapHostMemory); I(gcnArch);
        S(gcnArchName); I(integrated); I(cooperativeLaunch); I(cooperativeMultiDeviceLaunch);
        I(maxTexture1DLinear); I(maxTexture1D); A(maxTexture2D, 2); A(maxTexture3D, 3);
        P(hdpMemFlushCntl); P(hdpRegFlushCntl);
        I(memPitch); I(textureAlignment); I(texturePitchAlignment); I(kernelExecTimeoutEnabled);
        I(ECCEnabled); I(tccDriver); I(cooperativeMultiDeviceUnmatchedFunc);
        I(cooperativeMultiDeviceUnmatchedGridDim); I(cooperativeMultiDeviceUnmatchedBlockDim);
        I(cooperativeMultiDeviceUnmatchedSharedMem); I(isLargeBar); I(asicRevision);
        I(managedMemory); I(directManagedMemAccessFromHost); I(concurrentManagedAccess);
        I(pageableMemoryAccess); I(pageableMemoryAccessUsesHostPageTables);
    }
    return 0;
}
