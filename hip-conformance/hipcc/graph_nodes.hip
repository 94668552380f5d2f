/* Graph nodes that name kernels and device variables, checked when added or updated as clr
 * checks them (hip_graph.cpp ihipGraphAddKernelNode, GraphKernelNode::validateKernelParams,
 * GraphMemcpyNode{To,From}Symbol::SetParams, hipGraphExecMemcpyNodeSetParams{To,From}Symbol);
 * hip-tests catch/unit/graph/hipGraphAddKernelNode.cc (Negative),
 * hipGraph[Exec]MemcpyNodeSetParams{To,From}Symbol_old.cc (Negative); kernel node attributes.
 * Nothing is launched. */
#include <hip/hip_runtime.h>
#include "check.h"

__device__ int var_a[16];
__device__ int var_b[16];

__global__ void __launch_bounds__(256) fill(int* p, int v) { p[threadIdx.x] = v; }
__global__ void nop() {}

/* ROCm 6+ (not in HIP 5.2's header). */
extern "C" hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t hSrc, hipGraphNode_t hDst);

/* Kernel node attributes (hip-tests hipGraphKernelNode{Get,Set}Attribute.cc,
 * hipGraphKernelNodeCopyAttributes.cc; clr GraphKernelNode::SetAttrParams): recorded on the node,
 * checked, copied, and kept by a clone. */
static void kernel_node_attributes(void) {
  hipGraph_t g;
  CHECK_OK(hipGraphCreate(&g, 0));
  hipKernelNodeParams kp;
  memset(&kp, 0, sizeof kp);
  kp.func = (void*)nop;
  kp.gridDim.x = kp.gridDim.y = kp.gridDim.z = 1;
  kp.blockDim.x = kp.blockDim.y = kp.blockDim.z = 1;
  hipGraphNode_t k = NULL, k2 = NULL, empty = NULL;
  CHECK_OK(hipGraphAddKernelNode(&k, g, NULL, 0, &kp));
  CHECK_OK(hipGraphAddKernelNode(&k2, g, NULL, 0, &kp));
  CHECK_OK(hipGraphAddEmptyNode(&empty, g, NULL, 0));
  int maxw = 0;
  CHECK_OK(hipDeviceGetAttribute(&maxw, hipDeviceAttributeAccessPolicyMaxWindowSize, 0));
  hipKernelNodeAttrValue v, r;
  memset(&v, 0, sizeof v);
  v.accessPolicyWindow.base_ptr = (void *)0x1000;
  v.accessPolicyWindow.num_bytes = maxw > 0 ? (size_t)maxw : 0;
  v.accessPolicyWindow.hitRatio = 0.5f;
  v.accessPolicyWindow.hitProp = hipAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = hipAccessPropertyStreaming;
  CHECK_OK(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &v));
  memset(&r, 0, sizeof r);
  CHECK_OK(hipGraphKernelNodeGetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &r));
  CHECK(r.accessPolicyWindow.base_ptr == (void *)0x1000 && r.accessPolicyWindow.hitRatio == 0.5f &&
        r.accessPolicyWindow.hitProp == hipAccessPropertyPersisting &&
        r.accessPolicyWindow.missProp == hipAccessPropertyStreaming &&
        r.accessPolicyWindow.num_bytes == v.accessPolicyWindow.num_bytes);
  /* another attribute than the one in use */
  CHECK_ERR(hipGraphKernelNodeGetAttribute(k, hipKernelNodeAttributeCooperative, &r), hipErrorInvalidValue);
  /* bad windows leave the node as it was */
  hipKernelNodeAttrValue bad = v;
  bad.accessPolicyWindow.hitRatio = 1.5f;
  CHECK_ERR(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &bad), hipErrorInvalidValue);
  bad = v;
  bad.accessPolicyWindow.missProp = hipAccessPropertyPersisting;
  CHECK_ERR(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &bad), hipErrorInvalidValue);
  bad = v;
  bad.accessPolicyWindow.num_bytes = (size_t)maxw + 1;
  CHECK_ERR(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &bad), hipErrorInvalidValue);
  CHECK_OK(hipGraphKernelNodeGetAttribute(k, hipKernelNodeAttributeAccessPolicyWindow, &r));
  CHECK(r.accessPolicyWindow.hitRatio == 0.5f);
  CHECK_ERR(hipGraphKernelNodeSetAttribute(empty, hipKernelNodeAttributeCooperative, &v), hipErrorInvalidValue);
  CHECK_ERR(hipGraphKernelNodeSetAttribute(NULL, hipKernelNodeAttributeCooperative, &v), hipErrorInvalidValue);
  CHECK_ERR(hipGraphKernelNodeSetAttribute(k, (hipKernelNodeAttrID)-1, &v), hipErrorInvalidValue);
  CHECK_ERR(hipGraphKernelNodeSetAttribute(k, hipKernelNodeAttributeCooperative, NULL), hipErrorInvalidValue);
  /* cooperative on k2; copying k's window onto it: another attribute in use */
  hipKernelNodeAttrValue c;
  memset(&c, 0, sizeof c);
  c.cooperative = 2;
  CHECK_OK(hipGraphKernelNodeSetAttribute(k2, hipKernelNodeAttributeCooperative, &c));
  CHECK_ERR(hipGraphKernelNodeCopyAttributes(k, k2), hipErrorInvalidContext);
  CHECK_OK(hipGraphKernelNodeGetAttribute(k2, hipKernelNodeAttributeCooperative, &r));
  CHECK(r.cooperative == 2);
  /* a clone keeps the attributes */
  hipGraph_t cl;
  CHECK_OK(hipGraphClone(&cl, g));
  hipGraphNode_t kc = NULL;
  CHECK_OK(hipGraphNodeFindInClone(&kc, k, cl));
  CHECK_OK(hipGraphKernelNodeGetAttribute(kc, hipKernelNodeAttributeAccessPolicyWindow, &r));
  CHECK(r.accessPolicyWindow.base_ptr == (void *)0x1000);
  CHECK_OK(hipGraphDestroy(cl));
  CHECK_OK(hipGraphDestroy(g));
}

int main(void) {
  check_bound_to_expected_library((void*)&hipGraphAddKernelNode);
  kernel_node_attributes();
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
