/*
 * Graph node parameter updates and child graphs as clr checks them: a graph added as its own
 * child graph, hipGraph[Exec]MemcpyNodeSetParams1D with source == destination, the executable
 * graph's copy steps keeping their direction (hipGraphExecMemcpyNodeSetParams{,1D}), and the
 * direction check of the symbol copies, made before the symbol is looked up.
 *
 * Expected codes: hip-tests catch/unit/graph/{hipGraphAddChildGraphNode (OrgGraphAsChildGraph),
 * hipGraphMemcpyNodeSetParams1D_old, hipGraphExecMemcpyNodeSetParams1D{,_old},
 * hipGraphExecMemcpyNodeSetParams (Negative_Changing_Memcpy_Direction)}.cc,
 * catch/unit/memory/hipMemcpyFromSymbol.cc (Invalid Direction); clr hip_graph.cpp
 * (hipGraphAddChildGraphNode, hipGraph[Exec]MemcpyNodeSetParams*), hip_memory.cpp
 * (hipMemcpy{To,From}Symbol[Async]_common).
 */
#include "common.h"

/* A graph given as its own child: the child node runs the graph as it was before the node was
 * added (two copies), the graph then has three nodes and runs. */
TEST(hipGraphAddChildGraphNode_graph_as_own_child)
{
    enum { N = 4096 };
    uint8_t *d = NULL, h_in[N], h_out[N];
    HIP_OK(hipMalloc((void **)&d, N));
    for (int i = 0; i < N; i++) {
        h_in[i] = (uint8_t)(i * 7 + 1);
        h_out[i] = 0;
    }
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t h2d, d2h, child;
    HIP_OK(hipGraphAddMemcpyNode1D(&h2d, g, NULL, 0, d, h_in, N, hipMemcpyHostToDevice));
    HIP_OK(hipGraphAddMemcpyNode1D(&d2h, g, &h2d, 1, h_out, d, N, hipMemcpyDeviceToHost));
    HIP_OK(hipGraphAddChildGraphNode(&child, g, NULL, 0, g));
    size_t n = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 3);
    hipGraph_t inner = NULL;
    HIP_OK(hipGraphChildGraphNodeGetGraph(child, &inner));
    CHECK(inner != g);
    n = 0;
    HIP_OK(hipGraphGetNodes(inner, NULL, &n));
    CHECK(n == 2);

    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(x, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(memcmp(h_in, h_out, N) == 0);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
}

/* hipGraphMemcpyNodeSetParams1D / hipGraphExecMemcpyNodeSetParams1D refuse src == dst (clr,
 * AMD only); the node keeps its parameters. */
TEST(hipGraphMemcpyNodeSetParams1D_same_pointer)
{
    enum { N = 1024 };
    uint8_t *a = NULL, *b = NULL;
    HIP_OK(hipMalloc((void **)&a, N));
    HIP_OK(hipMalloc((void **)&b, N));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t node;
    HIP_OK(hipGraphAddMemcpyNode1D(&node, g, NULL, 0, b, a, N, hipMemcpyDeviceToDevice));
    CHECK_HIP(hipGraphMemcpyNodeSetParams1D(node, a, a, N, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
    hipMemcpy3DParms p;
    HIP_OK(hipGraphMemcpyNodeGetParams(node, &p));
    CHECK(p.dstPtr.ptr == b && p.srcPtr.ptr == a);
    HIP_OK(hipGraphMemcpyNodeSetParams1D(node, a, b, N, hipMemcpyDeviceToDevice));

    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    CHECK_HIP(hipGraphExecMemcpyNodeSetParams1D(x, node, b, b, N, hipMemcpyDeviceToDevice),
              hipErrorInvalidValue);
    HIP_OK(hipGraphExecMemcpyNodeSetParams1D(x, node, b, a, N, hipMemcpyDeviceToDevice));
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}

/* An executable graph's copy step keeps its direction: another kind (hipMemcpyDefault and an
 * unknown kind included) is hipErrorInvalidValue, for 1D and 3D copies, and the step still
 * copies as before. */
TEST(hipGraphExecMemcpyNodeSetParams_direction_is_kept)
{
    enum { N = 256 };
    uint8_t *d = NULL, *h = NULL, back[N];
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipHostMalloc((void **)&h, N, 0));
    for (int i = 0; i < N; i++)
        h[i] = (uint8_t)(255 - i);
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t c1, c3;
    HIP_OK(hipGraphAddMemcpyNode1D(&c1, g, NULL, 0, d, h, N, hipMemcpyHostToDevice));
    hipMemcpy3DParms p = {0};
    p.srcPtr.ptr = d;
    p.srcPtr.pitch = p.srcPtr.xsize = N;
    p.srcPtr.ysize = 1;
    p.dstPtr = p.srcPtr;
    p.dstPtr.ptr = back;
    p.extent.width = N;
    p.extent.height = p.extent.depth = 1;
    p.kind = hipMemcpyDeviceToHost;
    HIP_OK(hipGraphAddMemcpyNode(&c3, g, &c1, 1, &p));
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));

    const hipMemcpyKind other[] = {hipMemcpyHostToHost, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice,
                                   hipMemcpyDefault, (hipMemcpyKind)-1};
    for (unsigned i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        CHECK_HIP(hipGraphExecMemcpyNodeSetParams1D(x, c1, d, h, N, other[i]), hipErrorInvalidValue);
    HIP_OK(hipGraphExecMemcpyNodeSetParams1D(x, c1, d, h, N, hipMemcpyHostToDevice));
    hipMemcpy3DParms q = p;
    q.kind = hipMemcpyDefault;
    CHECK_HIP(hipGraphExecMemcpyNodeSetParams(x, c3, &q), hipErrorInvalidValue);
    q.kind = hipMemcpyDeviceToHost;
    HIP_OK(hipGraphExecMemcpyNodeSetParams(x, c3, &q));

    memset(back, 0, N);
    HIP_OK(hipGraphLaunch(x, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(memcmp(back, h, N) == 0);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
}

/* The symbol copies check the direction first (clr): to a symbol only host-to-device or
 * device-to-device, from one only device-to-host or device-to-device; the symbol (here not a
 * registered variable) is looked up only then. */
TEST(hipMemcpySymbol_direction_checked_first)
{
    static int not_a_symbol;
    int v = 0;
    CHECK_HIP(hipMemcpyToSymbol(&not_a_symbol, &v, sizeof v, 0, hipMemcpyDeviceToHost),
              hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpyToSymbol(&not_a_symbol, &v, sizeof v, 0, hipMemcpyDefault),
              hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpyToSymbolAsync(&not_a_symbol, &v, sizeof v, 0, hipMemcpyHostToHost, NULL),
              hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpyFromSymbol(&v, &not_a_symbol, sizeof v, 0, hipMemcpyHostToDevice),
              hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpyFromSymbolAsync(&v, &not_a_symbol, sizeof v, 0, hipMemcpyDefault, NULL),
              hipErrorInvalidMemcpyDirection);
    CHECK_HIP(hipMemcpyToSymbol(&not_a_symbol, &v, sizeof v, 0, hipMemcpyHostToDevice), hipErrorInvalidSymbol);
    CHECK_HIP(hipMemcpyFromSymbol(&v, &not_a_symbol, sizeof v, 0, hipMemcpyDeviceToDevice),
              hipErrorInvalidSymbol);
}

/* Setting a symbol copy node's parameters checks, in clr's order: a null symbol
 * (hipErrorInvalidSymbol), a null pointer, a zero count or the symbol as the other side
 * (hipErrorInvalidValue), then looks the symbol up (here not a registered variable). */
TEST(hipGraphMemcpyNodeSetParamsSymbol_check_order)
{
    static int not_a_symbol;
    int v[4] = {0};
    void *d = NULL;
    HIP_OK(hipMalloc(&d, sizeof v));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t node;
    HIP_OK(hipGraphAddMemcpyNode1D(&node, g, NULL, 0, d, v, sizeof v, hipMemcpyHostToDevice));
    CHECK_HIP(hipGraphMemcpyNodeSetParamsToSymbol(node, NULL, v, sizeof v, 0, hipMemcpyHostToDevice),
              hipErrorInvalidSymbol);
    CHECK_HIP(hipGraphMemcpyNodeSetParamsToSymbol(node, &not_a_symbol, NULL, sizeof v, 0, hipMemcpyHostToDevice),
              hipErrorInvalidValue);
    CHECK_HIP(hipGraphMemcpyNodeSetParamsToSymbol(node, &not_a_symbol, v, 0, 0, hipMemcpyHostToDevice),
              hipErrorInvalidValue);
    CHECK_HIP(hipGraphMemcpyNodeSetParamsToSymbol(node, &not_a_symbol, &not_a_symbol, sizeof v, 0,
                                                  hipMemcpyHostToDevice),
              hipErrorInvalidValue);
    CHECK_HIP(hipGraphMemcpyNodeSetParamsToSymbol(node, &not_a_symbol, v, sizeof v, 0, hipMemcpyDeviceToHost),
              hipErrorInvalidSymbol);
    CHECK_HIP(hipGraphMemcpyNodeSetParamsFromSymbol(node, NULL, &not_a_symbol, sizeof v, 0, hipMemcpyDeviceToHost),
              hipErrorInvalidValue);
    CHECK_HIP(hipGraphMemcpyNodeSetParamsFromSymbol(node, v, &not_a_symbol, sizeof v, 0, hipMemcpyHostToDevice),
              hipErrorInvalidSymbol);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    CHECK_HIP(hipGraphExecMemcpyNodeSetParamsFromSymbol(x, node, NULL, &not_a_symbol, sizeof v, 0,
                                                        hipMemcpyHostToDevice),
              hipErrorInvalidValue);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
}

/* hipGraphExecUpdate with a graph made on another device: the first node that is neither a host
 * nor an empty node is refused as hipGraphExecUpdateErrorUnsupportedFunctionChange (clr compares
 * the nodes' graphs' devices); a graph of host and empty nodes only is taken. */
TEST(hipGraphExecUpdate_other_device)
{
    int n = 0;
    HIP_OK(hipGetDeviceCount(&n));
    if (n < 2)
        SKIP("needs two GPUs");
    enum { N = 64 };
    uint8_t h[N];
    void *d = NULL;
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMalloc(&d, N));
    hipGraph_t g0, g1, e0, e1;
    hipGraphNode_t a, b, c, bad = NULL;
    HIP_OK(hipGraphCreate(&g0, 0));
    HIP_OK(hipGraphAddEmptyNode(&a, g0, NULL, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&b, g0, &a, 1, d, h, N, hipMemcpyHostToDevice));
    HIP_OK(hipGraphCreate(&e0, 0));
    HIP_OK(hipGraphAddEmptyNode(&a, e0, NULL, 0));
    hipGraphExec_t x, y;
    HIP_OK(hipGraphInstantiate(&x, g0, NULL, NULL, 0));
    HIP_OK(hipGraphInstantiate(&y, e0, NULL, NULL, 0));

    HIP_OK(hipSetDevice(1));
    HIP_OK(hipGraphCreate(&g1, 0));
    HIP_OK(hipGraphAddEmptyNode(&a, g1, NULL, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&c, g1, &a, 1, d, h, N, hipMemcpyHostToDevice));
    HIP_OK(hipGraphCreate(&e1, 0));
    HIP_OK(hipGraphAddEmptyNode(&a, e1, NULL, 0));
    hipGraphExecUpdateResult r = hipGraphExecUpdateSuccess;
    CHECK_HIP(hipGraphExecUpdate(x, g1, &bad, &r), hipErrorGraphExecUpdateFailure);
    CHECK(r == hipGraphExecUpdateErrorUnsupportedFunctionChange);
    CHECK(bad == c);
    HIP_OK(hipGraphExecUpdate(y, e1, &bad, &r));
    CHECK(r == hipGraphExecUpdateSuccess);

    HIP_OK(hipSetDevice(0));
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphExecDestroy(y));
    HIP_OK(hipGraphDestroy(g0));
    HIP_OK(hipGraphDestroy(g1));
    HIP_OK(hipGraphDestroy(e0));
    HIP_OK(hipGraphDestroy(e1));
    HIP_OK(hipFree(d));
}
