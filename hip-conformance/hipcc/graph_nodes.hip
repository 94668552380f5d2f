/* Graph nodes that name kernels and device variables, checked when added or updated as clr
 * checks them (hip_graph.cpp ihipGraphAddKernelNode, GraphKernelNode::validateKernelParams,
 * GraphMemcpyNode{To,From}Symbol::SetParams, hipGraphExecMemcpyNodeSetParams{To,From}Symbol);
 * hip-tests catch/unit/graph/hipGraphAddKernelNode.cc (Negative),
 * hipGraph[Exec]MemcpyNodeSetParams{To,From}Symbol_old.cc (Negative). Nothing is launched. */
#include <hip/hip_runtime.h>
#include "check.h"

__device__ int var_a[16];
__device__ int var_b[16];

__global__ void __launch_bounds__(256) fill(int* p, int v) { p[threadIdx.x] = v; }
__global__ void nop() {}

int main(void) {
  check_bound_to_expected_library((void*)&hipGraphAddKernelNode);
  hipGraph_t g;
  CHECK_OK(hipGraphCreate(&g, 0));
  int* d = NULL;
  CHECK_OK(hipMalloc((void**)&d, 64 * sizeof(int)));
  int v = 3;
  void* args[] = {&d, &v};

  /* Kernel nodes are validated as launches. */
  hipKernelNodeParams kp = {};
  kp.func = (void*)fill;
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(64);
  kp.kernelParams = args;
  hipGraphNode_t k;
  CHECK_OK(hipGraphAddKernelNode(&k, g, NULL, 0, &kp));
  hipKernelNodeParams bad = kp;
  bad.kernelParams = NULL; /* fill has arguments */
  CHECK_ERR(hipGraphAddKernelNode(&k, g, NULL, 0, &bad), hipErrorInvalidValue);
  CHECK_ERR(hipGraphKernelNodeSetParams(k, &bad), hipErrorInvalidValue);
  bad = kp;
  bad.extra = (void**)args; /* both kernelParams and extra */
  CHECK_ERR(hipGraphAddKernelNode(&k, g, NULL, 0, &bad), hipErrorInvalidValue);
  bad = kp;
  bad.gridDim = dim3(0);
  CHECK_ERR(hipGraphAddKernelNode(&k, g, NULL, 0, &bad), hipErrorInvalidValue);
  bad = kp;
  bad.blockDim = dim3(2048);
  CHECK_ERR(hipGraphAddKernelNode(&k, g, NULL, 0, &bad), hipErrorInvalidValue);
  bad = kp;
  bad.blockDim = dim3(512); /* past __launch_bounds__(256) */
  CHECK_ERR(hipGraphAddKernelNode(&k, g, NULL, 0, &bad), hipErrorLaunchFailure);
  bad = kp;
  bad.gridDim = dim3(0x1000000);
  bad.blockDim = dim3(256); /* 2^32 work-items in x */
  CHECK_ERR(hipGraphAddKernelNode(&k, g, NULL, 0, &bad), hipErrorInvalidConfiguration);
  hipKernelNodeParams np = {};
  np.func = (void*)nop;
  np.gridDim = dim3(1);
  np.blockDim = dim3(1);
  CHECK_OK(hipGraphAddKernelNode(&k, g, NULL, 0, &np)); /* no arguments needed */

  /* Symbol copy nodes: the other side may not be a symbol, and must fit the direction. */
  int h[16] = {0};
  hipGraphNode_t to, from;
  CHECK_OK(hipGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, HIP_SYMBOL(var_a), d, sizeof h, 0,
                                         hipMemcpyDeviceToDevice));
  CHECK_OK(hipGraphAddMemcpyNodeFromSymbol(&from, g, NULL, 0, h, HIP_SYMBOL(var_a), sizeof h, 0,
                                           hipMemcpyDeviceToHost));
  CHECK_ERR(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(var_a), HIP_SYMBOL(var_a), sizeof h, 0,
                                                hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  CHECK_ERR(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(var_a), HIP_SYMBOL(var_b), sizeof h, 0,
                                                hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  /* pageable source with a device-to-device kind; device source with a host-to-device kind */
  CHECK_ERR(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(var_a), h, sizeof h, 0,
                                                hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  CHECK_ERR(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(var_a), d, sizeof h, 0,
                                                hipMemcpyHostToDevice), hipErrorInvalidValue);
  CHECK_OK(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(var_a), d, sizeof h, 0, hipMemcpyDefault));
  CHECK_OK(hipGraphMemcpyNodeSetParamsToSymbol(to, HIP_SYMBOL(var_a), d, sizeof h, 0,
                                               hipMemcpyDeviceToDevice));
  CHECK_ERR(hipGraphMemcpyNodeSetParamsFromSymbol(from, HIP_SYMBOL(var_b), HIP_SYMBOL(var_a), sizeof h, 0,
                                                  hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  CHECK_ERR(hipGraphMemcpyNodeSetParamsFromSymbol(from, h, HIP_SYMBOL(var_a), sizeof h, 0,
                                                  hipMemcpyDeviceToDevice), hipErrorInvalidMemcpyDirection);
  CHECK_ERR(hipGraphMemcpyNodeSetParamsFromSymbol(from, h, HIP_SYMBOL(var_a), sizeof h, 0,
                                                  hipMemcpyHostToDevice), hipErrorInvalidMemcpyDirection);
  CHECK_OK(hipGraphMemcpyNodeSetParamsFromSymbol(from, h, HIP_SYMBOL(var_a), sizeof h, 0,
                                                 hipMemcpyDeviceToHost));

  /* The executable graph's symbol copy keeps its direction. */
  hipGraph_t g2;
  CHECK_OK(hipGraphCreate(&g2, 0));
  CHECK_OK(hipGraphAddMemcpyNodeFromSymbol(&from, g2, NULL, 0, h, HIP_SYMBOL(var_b), sizeof h, 0,
                                           hipMemcpyDeviceToHost));
  hipGraphExec_t x;
  CHECK_OK(hipGraphInstantiate(&x, g2, NULL, NULL, 0));
  CHECK_ERR(hipGraphExecMemcpyNodeSetParamsFromSymbol(x, from, h, HIP_SYMBOL(var_b), sizeof h, 0,
                                                      hipMemcpyDefault), hipErrorInvalidValue);
  CHECK_OK(hipGraphExecMemcpyNodeSetParamsFromSymbol(x, from, h, HIP_SYMBOL(var_a), sizeof h, 0,
                                                     hipMemcpyDeviceToHost));
  CHECK_OK(hipGraphExecDestroy(x));
  CHECK_OK(hipGraphDestroy(g2));
  CHECK_OK(hipGraphDestroy(g));
  CHECK_OK(hipFree(d));
  return summary();
}
