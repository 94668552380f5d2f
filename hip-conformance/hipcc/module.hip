/* The module API on a code object file (`hipcc --genco`, argv[1]): load from file and from
 * memory, look up functions (found / hipErrorNotFound, as hip-tests expect), launch (validated
 * with AMD's codes; arguments from kernelParams or `extra`, results checked), globals in device
 * memory, unload. */
#include <hip/hip_runtime.h>
#include <hip/hip_ext.h>
#include "check.h"

static char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char* b = (char*)malloc(*len);
  if (fread(b, 1, *len, f) != *len) *len = 0;
  fclose(f);
  return b;
}

int main(int argc, char** argv) {
  check_bound_to_expected_library((void*)&hipModuleLoad);
  if (argc < 2) return 2;
  hipModule_t m = NULL;
  CHECK_OK(hipModuleLoad(&m, argv[1]));
  CHECK(m != NULL);

  /* hip-tests Unit_hipModuleGetFunction_*. */
  hipFunction_t k42 = NULL, k42b = NULL, nop = NULL, f = NULL;
  CHECK_OK(hipModuleGetFunction(&k42, m, "Kernel42"));
  CHECK(k42 != NULL);
  CHECK_OK(hipModuleGetFunction(&k42b, m, "Kernel42"));
  CHECK(k42 == k42b);
  CHECK_OK(hipModuleGetFunction(&nop, m, "NOPKernel"));
  CHECK_ERR(hipModuleGetFunction(&f, m, "NonExistentKernel"), hipErrorNotFound);
  CHECK_ERR(hipModuleGetFunction(&f, m, "_Z5twicei"), hipErrorNotFound);
  CHECK_ERR(hipModuleGetFunction(NULL, m, "Kernel42"), hipErrorInvalidValue);
  CHECK_ERR(hipModuleGetFunction(&f, m, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleGetFunction(&f, NULL, "Kernel42"), hipErrorInvalidResourceHandle);

  /* Launches (arguments from kernelParams, then from extra's buffer), then hip-tests
   * ModuleLaunchKernelNegativeParameters (ROCm 7). */
  int* d = NULL;
  CHECK_OK(hipMalloc((void**)&d, sizeof(int)));
  void* params[] = {&d};
  size_t size = sizeof d;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &d, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  void* bad_extra[] = {HIP_LAUNCH_PARAM_BUFFER_SIZE, &d, HIP_LAUNCH_PARAM_BUFFER_POINTER, &size, HIP_LAUNCH_PARAM_END};
  int got = 0;
  (void)hipGetLastError(); /* the lookup errors above are the sticky last error */
  CHECK_OK(hipMemset(d, 0, sizeof(int)));
  CHECK_OK(hipModuleLaunchKernel(k42, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipMemcpy(&got, d, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got == 43);
  CHECK_OK(hipMemset(d, 0, sizeof(int)));
  CHECK_OK(hipModuleLaunchKernel(k42, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
  CHECK_OK(hipMemcpy(&got, d, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got == 43);
  hipFunction_t tw = NULL;
  CHECK_OK(hipModuleGetFunction(&tw, m, "Twice"));
  hipStream_t ts;
  CHECK_OK(hipStreamCreate(&ts));
  CHECK_OK(hipModuleLaunchKernel(tw, 1, 1, 1, 1, 1, 1, 0, ts, NULL, extra));
  CHECK_OK(hipModuleLaunchKernel(tw, 1, 1, 1, 1, 1, 1, 0, ts, params, NULL));
  CHECK_OK(hipMemcpyAsync(&got, d, sizeof got, hipMemcpyDeviceToHost, ts));
  CHECK_OK(hipStreamSynchronize(ts));
  CHECK(got == 43 * 4);
  /* hipExtModuleLaunchKernel: the grid in work-items, events recorded around the kernel. */
  hipEvent_t start, stop;
  CHECK_OK(hipEventCreate(&start));
  CHECK_OK(hipEventCreate(&stop));
  CHECK_OK(hipExtModuleLaunchKernel(tw, 1, 1, 1, 4, 4, 4, 0, ts, params, NULL, start, stop, 0));
  CHECK_OK(hipMemcpyAsync(&got, d, sizeof got, hipMemcpyDeviceToHost, ts));
  CHECK_OK(hipStreamSynchronize(ts));
  CHECK(got == 43 * 8);
  float ms = -1;
  CHECK_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0);
  CHECK_ERR(hipExtModuleLaunchKernel(tw, 3, 1, 1, 2, 1, 1, 0, ts, params, NULL, NULL, NULL, 0), hipErrorInvalidValue);
  CHECK_ERR(hipExtModuleLaunchKernel(tw, 0, 1, 1, 1, 1, 1, 0, ts, params, NULL, NULL, NULL, 0), hipErrorInvalidValue);
  CHECK_OK(hipEventDestroy(start));
  CHECK_OK(hipEventDestroy(stop));
  CHECK_OK(hipStreamDestroy(ts));
  CHECK_OK(hipModuleLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
  CHECK_ERR(hipModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidResourceHandle);
  CHECK_ERR(hipModuleLaunchKernel(nop, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(nop, 1, 1, 1, 1, 0, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(nop, 1, 1, 1, 1025, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(nop, 1, 1, 1, 11, 11, 11, 0, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(nop, 1, 65537, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 65537, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(k42, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(k42, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLaunchKernel(k42, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, bad_extra), hipErrorInvalidValue);
  int ndev = 0;
  CHECK_OK(hipGetDeviceCount(&ndev));
  if (ndev > 1) {
    hipStream_t s1;
    CHECK_OK(hipSetDevice(1));
    CHECK_OK(hipStreamCreate(&s1));
    CHECK_OK(hipSetDevice(0));
    CHECK_ERR(hipModuleLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL), hipErrorInvalidResourceHandle);
    CHECK_OK(hipStreamDestroy(s1));
  }
  int attr = 0;
  CHECK_OK(hipFuncGetAttribute(&attr, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k42));
  CHECK(attr == 1024);
  CHECK_ERR(hipFuncGetAttribute(&attr, HIP_FUNC_ATTRIBUTE_MAX, k42), hipErrorInvalidValue);

  /* Globals: loaded into device memory with their initial values, pointers relocated. */
  size_t bytes = 0;
  hipDeviceptr_t dp = NULL, sp = NULL;
  CHECK_OK(hipModuleGetGlobal(NULL, &bytes, m, "counter"));
  CHECK(bytes == 8 * sizeof(int));
  CHECK_OK(hipModuleGetGlobal(&dp, &bytes, m, "counter"));
  int c[8] = {0};
  CHECK_OK(hipMemcpy(c, dp, sizeof c, hipMemcpyDeviceToHost));
  CHECK(c[0] == 1 && c[7] == 8);
  CHECK_OK(hipModuleGetGlobal(&sp, NULL, m, "second"));
  void* second = NULL;
  CHECK_OK(hipMemcpy(&second, sp, sizeof second, hipMemcpyDeviceToHost));
  CHECK((char*)second == (char*)dp + sizeof(int));
  /* The kernel reads the global the host wrote. */
  int hundred = 100;
  CHECK_OK(hipMemcpy(dp, &hundred, sizeof hundred, hipMemcpyHostToDevice));
  CHECK_OK(hipModuleLaunchKernel(k42, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
  CHECK_OK(hipMemcpy(&got, d, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got == 142);
  CHECK_ERR(hipModuleGetGlobal(NULL, &bytes, m, "nothing"), hipErrorNotFound);
  CHECK_ERR(hipModuleGetGlobal(NULL, NULL, m, "counter"), hipErrorInvalidValue);

  /* Unload: the module and its functions are gone. */
  CHECK_OK(hipModuleUnload(m));
  CHECK_ERR(hipModuleUnload(m), hipErrorNotFound);
  CHECK_ERR(hipModuleLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidResourceHandle);
  CHECK_ERR(hipModuleUnload(NULL), hipErrorInvalidResourceHandle);

  /* From memory, and the load errors of hip-tests Unit_hipModuleLoad*_Negative_*. */
  size_t len = 0;
  char* image = read_file(argv[1], &len);
  CHECK(image != NULL && len > 0);
  CHECK_OK(hipModuleLoadData(&m, image));
  CHECK_OK(hipModuleGetFunction(&f, m, "Twice"));
  CHECK_OK(hipModuleUnload(m));
  CHECK_OK(hipModuleLoadDataEx(&m, image, 0, NULL, NULL));
  CHECK_OK(hipModuleUnload(m));
  free(image);
  CHECK_ERR(hipModuleLoadData(&m, ""), hipErrorInvalidImage);
  CHECK_ERR(hipModuleLoadData(&m, "this is not a code object"), hipErrorInvalidImage);
  CHECK_ERR(hipModuleLoadData(NULL, "x"), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLoadData(&m, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLoad(&m, "/nonexistent/module.co"), hipErrorFileNotFound);
  CHECK_ERR(hipModuleLoad(&m, ""), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLoad(&m, NULL), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLoad(NULL, argv[1]), hipErrorInvalidValue);
  CHECK_ERR(hipModuleLoad(&m, argv[0]), hipErrorInvalidImage); /* an x86 ELF */
  CHECK_ERR(hipModuleLoad(&m, "/dev/null"), hipErrorInvalidImage);
  CHECK_OK(hipFree(d));
  return summary();
}
