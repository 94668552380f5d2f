/*
 * Graph memory nodes and user objects: hipGraphAddMemAllocNode/FreeNode and their GetParams,
 * hipMallocAsync/hipFreeAsync captured into a graph, hipDeviceGet/SetGraphMemAttribute,
 * hipDeviceGraphMemTrim, hipGraphInstantiateWithParams; hipUserObjectCreate/Retain/Release,
 * hipGraphRetain/ReleaseUserObject.
 *
 * Expected codes: hip-tests catch/unit/graph/{hipGraphAddMemAllocNode,hipGraphAddMemFreeNode,
 * hipGraphMemAllocNodeGetParams,hipGraphMemFreeNodeGetParams,hipDeviceGetGraphMemAttribute,
 * hipDeviceSetGraphMemAttribute,hipDeviceGraphMemTrim,hipGraphInstantiateWithParams,
 * hipUserObjectCreate,hipGraphRetainUserObject,hipGraphReleaseUserObject}.cc; clr hip_graph.cpp.
 */
#define _GNU_SOURCE
#include "common.h"

static size_t graph_attr(int dev, hipGraphMemAttributeType a)
{
    size_t v = (size_t)-1;
    HIP_OK(hipDeviceGetGraphMemAttribute(dev, a, &v));
    return v;
}

static void reset_highs(int dev)
{
    size_t zero = 0;
    HIP_OK(hipDeviceSetGraphMemAttribute(dev, hipGraphMemAttrUsedMemHigh, &zero));
    HIP_OK(hipDeviceSetGraphMemAttribute(dev, hipGraphMemAttrReservedMemHigh, &zero));
}

static hipMemAllocNodeParams alloc_params(int dev, size_t bytes)
{
    hipMemAllocNodeParams p;
    memset(&p, 0, sizeof(p));
    p.bytesize = bytes;
    p.poolProps.allocType = hipMemAllocationTypePinned;
    p.poolProps.location.type = hipMemLocationTypeDevice;
    p.poolProps.location.id = dev;
    return p;
}

/* alloc → memset → D2H copy → free, launched three times: the address is fixed when the node
 * is made, the data round-trips, and the counters show the memory only while it lives. */
TEST(hipGraphMemAllocNode_roundtrip_and_counters)
{
    const size_t n = 4 * MiB;
    hipStream_t s;
    uint32_t *host = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipHostMalloc((void **)&host, n, 0));
    HIP_OK(hipDeviceGraphMemTrim(0));
    reset_highs(0);
    CHECK(graph_attr(0, hipGraphMemAttrUsedMemCurrent) == 0);

    hipGraph_t g;
    hipGraphNode_t alloc, set, copy, freen;
    HIP_OK(hipGraphCreate(&g, 0));
    hipMemAllocNodeParams p = alloc_params(0, n);
    HIP_OK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p));
    CHECK(p.dptr != NULL);
    hipMemAllocNodeParams out;
    HIP_OK(hipGraphMemAllocNodeGetParams(alloc, &out));
    CHECK(out.dptr == p.dptr && out.bytesize == n);
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(alloc, &t));
    CHECK(t == hipGraphNodeTypeMemAlloc);

    hipMemsetParams mp = {0};
    mp.dst = p.dptr;
    mp.elementSize = 4;
    mp.width = n / 4;
    mp.height = 1;
    mp.value = 0x5A5A0001u;
    HIP_OK(hipGraphAddMemsetNode(&set, g, &alloc, 1, &mp));
    HIP_OK(hipGraphAddMemcpyNode1D(&copy, g, &set, 1, host, p.dptr, n, hipMemcpyDeviceToHost));
    HIP_OK(hipGraphAddMemFreeNode(&freen, g, &copy, 1, p.dptr));
    void *freed = NULL;
    HIP_OK(hipGraphMemFreeNodeGetParams(freen, &freed));
    CHECK(freed == p.dptr);
    HIP_OK(hipGraphNodeGetType(freen, &t));
    CHECK(t == hipGraphNodeTypeMemFree);
    /* One free node per allocation; the address is not memory before the node runs. */
    hipGraphNode_t extra;
    CHECK_HIP(hipGraphAddMemFreeNode(&extra, g, &copy, 1, p.dptr), hipErrorInvalidValue);
    hipPointerAttribute_t attr;
    CHECK_HIP(hipPointerGetAttributes(&attr, p.dptr), hipErrorInvalidValue);

    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    hipGraphExec_t x2;
    CHECK_HIP(hipGraphInstantiate(&x2, g, NULL, NULL, 0), hipErrorNotSupported);
    for (uint32_t round = 0; round < 3; round++) {
        mp.value = 0x5A5A0001u + round;
        HIP_OK(hipGraphExecMemsetNodeSetParams(x, set, &mp));
        memset(host, 0, n);
        HIP_OK(hipGraphLaunch(x, s));
        HIP_OK(hipStreamSynchronize(s));
        int bad = 0;
        for (size_t i = 0; i < n / 4; i++)
            bad += host[i] != 0x5A5A0001u + round;
        CHECKF(bad == 0, "round %u: %d words wrong", round, bad);
        CHECK(graph_attr(0, hipGraphMemAttrUsedMemCurrent) == 0);
        CHECK(graph_attr(0, hipGraphMemAttrReservedMemCurrent) == 0);
        CHECK(graph_attr(0, hipGraphMemAttrUsedMemHigh) == n);
        CHECK(graph_attr(0, hipGraphMemAttrReservedMemHigh) == n);
    }
    CHECK_HIP(hipPointerGetAttributes(&attr, p.dptr), hipErrorInvalidValue);
    HIP_OK(hipGraphExecDestroy(x));
    /* The executable graph is gone: the graph may be instantiated again. */
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    reset_highs(0);
    CHECK(graph_attr(0, hipGraphMemAttrUsedMemHigh) == 0);
    HIP_OK(hipHostFree(host));
    HIP_OK(hipStreamDestroy(s));
}

/* Memory a graph allocates and does not free outlives the graph: other APIs see device memory,
 * a second launch without hipGraphInstantiateFlagAutoFreeOnLaunch is refused while it lives,
 * and hipFree / hipFreeAsync / a free node of another graph give it back. */
TEST(hipGraphMemAllocNode_memory_outlives_graph)
{
    const size_t n = 2 * MiB;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipDeviceGraphMemTrim(0));
    reset_highs(0);

    for (int how = 0; how < 3; how++) {
        hipGraph_t g;
        hipGraphNode_t alloc;
        HIP_OK(hipGraphCreate(&g, 0));
        hipMemAllocNodeParams p = alloc_params(0, n);
        HIP_OK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p));
        hipGraphExec_t x;
        HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
        HIP_OK(hipGraphDestroy(g));
        HIP_OK(hipGraphLaunch(x, s));
        HIP_OK(hipStreamSynchronize(s));
        CHECK(graph_attr(0, hipGraphMemAttrUsedMemCurrent) == n);
        CHECK(graph_attr(0, hipGraphMemAttrReservedMemCurrent) == n);
        CHECK_HIP(hipGraphLaunch(x, s), hipErrorInvalidValue);

        hipPointerAttribute_t attr;
        HIP_OK(hipPointerGetAttributes(&attr, p.dptr));
        CHECK(attr.type == hipMemoryTypeDevice && attr.device == 0);
        uint8_t *buf = malloc(n), *back = malloc(n);
        pat_fill(buf, n, 7 + how);
        HIP_OK(hipMemcpy(p.dptr, buf, n, hipMemcpyHostToDevice));
        HIP_OK(hipMemcpy(back, p.dptr, n, hipMemcpyDeviceToHost));
        CHECK_PATTERN(back, n, 7 + how);
        free(buf);
        free(back);

        if (how == 0) {
            HIP_OK(hipGraphExecDestroy(x));
            HIP_OK(hipFree(p.dptr));
        } else if (how == 1) {
            HIP_OK(hipFreeAsync(p.dptr, s));
            HIP_OK(hipStreamSynchronize(s));
            /* Freed: the next launch allocates it again at the same address. */
            HIP_OK(hipGraphLaunch(x, s));
            HIP_OK(hipStreamSynchronize(s));
            HIP_OK(hipPointerGetAttributes(&attr, p.dptr));
            HIP_OK(hipGraphExecDestroy(x));
            HIP_OK(hipFreeAsync(p.dptr, s));
            HIP_OK(hipStreamSynchronize(s));
        } else {
            hipGraph_t g2;
            hipGraphNode_t f;
            HIP_OK(hipGraphCreate(&g2, 0));
            HIP_OK(hipGraphAddMemFreeNode(&f, g2, NULL, 0, p.dptr));
            hipGraphExec_t x2;
            HIP_OK(hipGraphInstantiate(&x2, g2, NULL, NULL, 0));
            HIP_OK(hipGraphLaunch(x2, s));
            HIP_OK(hipStreamSynchronize(s));
            HIP_OK(hipGraphExecDestroy(x2));
            HIP_OK(hipGraphDestroy(g2));
            HIP_OK(hipGraphExecDestroy(x));
        }
        CHECK_HIP(hipPointerGetAttributes(&attr, p.dptr), hipErrorInvalidValue);
        HIP_OK(hipDeviceGraphMemTrim(0));
        CHECK(graph_attr(0, hipGraphMemAttrUsedMemCurrent) == 0);
        CHECK(graph_attr(0, hipGraphMemAttrReservedMemCurrent) == 0);
        CHECK(graph_attr(0, hipGraphMemAttrUsedMemHigh) == n);
    }
    /* hipGraphInstantiateFlagAutoFreeOnLaunch: the live allocation is taken over. */
    hipGraph_t g;
    hipGraphNode_t alloc;
    HIP_OK(hipGraphCreate(&g, 0));
    hipMemAllocNodeParams p = alloc_params(0, n);
    HIP_OK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p));
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiateWithFlags(&x, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
    for (int i = 0; i < 3; i++) {
        HIP_OK(hipGraphLaunch(x, s));
        HIP_OK(hipStreamSynchronize(s));
        CHECK(graph_attr(0, hipGraphMemAttrUsedMemCurrent) == n);
    }
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(p.dptr));
    CHECK(graph_attr(0, hipGraphMemAttrUsedMemCurrent) == 0);
    reset_highs(0);
    HIP_OK(hipStreamDestroy(s));
}

/* hipMallocAsync / hipFreeAsync on a capturing stream become allocation and free nodes. */
TEST(hipStreamCapture_mallocasync_becomes_mem_nodes)
{
    const size_t n = 1 * MiB;
    hipStream_t s;
    uint8_t *src = malloc(n), *dst = malloc(n);
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    void *d = NULL;
    HIP_OK(hipMallocAsync(&d, n, s));
    CHECK(d != NULL);
    HIP_OK(hipMemcpyAsync(d, src, n, hipMemcpyHostToDevice, s));
    HIP_OK(hipMemcpyAsync(dst, d, n, hipMemcpyDeviceToHost, s));
    HIP_OK(hipFreeAsync(d, s));
    hipGraph_t g;
    HIP_OK(hipStreamEndCapture(s, &g));
    hipGraphNode_t nodes[8];
    size_t count = 8;
    HIP_OK(hipGraphGetNodes(g, nodes, &count));
    CHECK(count == 4);
    hipGraphNodeType first, last;
    HIP_OK(hipGraphNodeGetType(nodes[0], &first));
    HIP_OK(hipGraphNodeGetType(nodes[count - 1], &last));
    CHECK(first == hipGraphNodeTypeMemAlloc && last == hipGraphNodeTypeMemFree);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    for (int round = 0; round < 2; round++) {
        pat_fill(src, n, 60 + round);
        memset(dst, 0, n);
        HIP_OK(hipGraphLaunch(x, s));
        HIP_OK(hipStreamSynchronize(s));
        CHECK_PATTERN(dst, n, 60 + round);
    }
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    free(src);
    free(dst);
}

TEST(hipGraphMem_negative)
{
    hipGraph_t g;
    hipGraphNode_t alloc, node;
    HIP_OK(hipGraphCreate(&g, 0));
    hipMemAllocNodeParams p = alloc_params(0, 4096);
    CHECK_HIP(hipGraphAddMemAllocNode(NULL, g, NULL, 0, &p), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, NULL, NULL, 0, &p), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 3, &p), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, NULL), hipErrorInvalidValue);
    p.bytesize = 0;
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p), hipErrorInvalidValue);
    CHECK(p.dptr == NULL);
    p = alloc_params(0, 4096);
    p.poolProps.allocType = hipMemAllocationTypeInvalid;
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p), hipErrorInvalidValue);
    p = alloc_params(0, 4096);
    p.poolProps.location.type = hipMemLocationTypeInvalid;
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p), hipErrorInvalidValue);
    int ndev = 0;
    HIP_OK(hipGetDeviceCount(&ndev));
    p = alloc_params(ndev, 4096);
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p), hipErrorInvalidValue);
    p = alloc_params(0, 4096);
    hipMemAccessDesc descs[9] = {0};
    p.accessDescs = descs;
    p.accessDescCount = (size_t)ndev + 1;
    CHECK_HIP(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p), hipErrorInvalidValue);
    p = alloc_params(0, 4096);
    HIP_OK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &p));

    int local = 0;
    void *plain = NULL;
    HIP_OK(hipMalloc(&plain, 4096));
    CHECK_HIP(hipGraphAddMemFreeNode(&node, g, &alloc, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemFreeNode(&node, g, &alloc, 1, &local), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemFreeNode(&node, g, &alloc, 1, plain), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemFreeNode(&node, g, &alloc, 0, p.dptr), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemFreeNode(NULL, g, &alloc, 1, p.dptr), hipErrorInvalidValue);

    hipMemAllocNodeParams out;
    void *ptr = NULL;
    CHECK_HIP(hipGraphMemAllocNodeGetParams(NULL, &out), hipErrorInvalidValue);
    CHECK_HIP(hipGraphMemAllocNodeGetParams(alloc, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphMemFreeNodeGetParams(alloc, &ptr), hipErrorInvalidValue);
    HIP_OK(hipGraphAddEmptyNode(&node, g, NULL, 0));
    CHECK_HIP(hipGraphMemAllocNodeGetParams(node, &out), hipErrorInvalidValue);

    size_t v = 0;
    CHECK_HIP(hipDeviceGetGraphMemAttribute(ndev, hipGraphMemAttrUsedMemCurrent, &v), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetGraphMemAttribute(-1, hipGraphMemAttrUsedMemCurrent, &v), hipErrorInvalidDevice);
    CHECK_HIP(hipDeviceGetGraphMemAttribute(0, (hipGraphMemAttributeType)7, &v), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGetGraphMemAttribute(0, hipGraphMemAttrUsedMemCurrent, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemCurrent, &v), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrReservedMemCurrent, &v), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemHigh, NULL), hipErrorInvalidValue);
    v = 1;
    CHECK_HIP(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemHigh, &v), hipErrorInvalidValue);
    CHECK_HIP(hipDeviceGraphMemTrim(ndev), hipErrorInvalidDevice);

    hipGraphExec_t x = NULL;
    hipGraphInstantiateParams ip;
    memset(&ip, 0, sizeof(ip));
    CHECK_HIP(hipGraphInstantiateWithParams(NULL, g, &ip), hipErrorInvalidValue);
    CHECK_HIP(hipGraphInstantiateWithParams(&x, NULL, &ip), hipErrorInvalidValue);
    CHECK_HIP(hipGraphInstantiateWithParams(&x, g, NULL), hipErrorInvalidValue);
    ip.flags = 3;
    CHECK_HIP(hipGraphInstantiateWithParams(&x, g, &ip), hipErrorInvalidValue);
    CHECK(ip.result_out == hipGraphInstantiateError);
    ip.flags = 0;
    HIP_OK(hipGraphInstantiateWithParams(&x, g, &ip));
    CHECK(ip.result_out == hipGraphInstantiateSuccess && ip.errNode_out == NULL);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(plain));
}

static int destroyed[4];

static void destroy_obj(void *p)
{
    destroyed[(intptr_t)p]++;
}

/* User objects: the destructor runs once, when the program's, the graph's, a clone's and an
 * executable graph's references are all gone; over-release and released handles are no-ops. */
TEST(hipUserObject_lifetime)
{
    memset(destroyed, 0, sizeof(destroyed));
    hipUserObject_t o;
    CHECK_HIP(hipUserObjectCreate(NULL, (void *)0, destroy_obj, 1, hipUserObjectNoDestructorSync),
              hipErrorInvalidValue);
    CHECK_HIP(hipUserObjectCreate(&o, (void *)0, NULL, 1, hipUserObjectNoDestructorSync), hipErrorInvalidValue);
    CHECK_HIP(hipUserObjectCreate(&o, (void *)0, destroy_obj, 0, hipUserObjectNoDestructorSync), hipErrorInvalidValue);
    CHECK_HIP(hipUserObjectCreate(&o, (void *)0, destroy_obj, 1, 0), hipErrorInvalidValue);

    /* Program references only. */
    HIP_OK(hipUserObjectCreate(&o, (void *)0, destroy_obj, 2, hipUserObjectNoDestructorSync));
    HIP_OK(hipUserObjectRetain(o, 3));
    HIP_OK(hipUserObjectRelease(o, 4));
    CHECK(destroyed[0] == 0);
    HIP_OK(hipUserObjectRelease(o, 9)); /* more than it has: nothing */
    CHECK(destroyed[0] == 0);
    HIP_OK(hipUserObjectRelease(o, 1));
    CHECK(destroyed[0] == 1);
    HIP_OK(hipUserObjectRelease(o, 1)); /* destroyed: nothing */
    HIP_OK(hipUserObjectRetain(o, 1));
    CHECK(destroyed[0] == 1);
    CHECK_HIP(hipUserObjectRelease(NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipUserObjectRelease(o, 0), hipErrorInvalidValue);

    /* A graph takes the program's reference (move); a clone and an executable graph hold their
     * own; the last of them to go runs the destructor. */
    hipGraph_t g, c;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t e;
    HIP_OK(hipGraphAddEmptyNode(&e, g, NULL, 0));
    HIP_OK(hipUserObjectCreate(&o, (void *)1, destroy_obj, 1, hipUserObjectNoDestructorSync));
    CHECK_HIP(hipGraphRetainUserObject(NULL, o, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphRetainUserObject(g, NULL, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphRetainUserObject(g, o, 0, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphRetainUserObject(g, o, 1, 2), hipErrorInvalidValue);
    HIP_OK(hipGraphRetainUserObject(g, o, 1, hipGraphUserObjectMove));
    HIP_OK(hipGraphClone(&c, g));
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipGraphDestroy(g));
    CHECK(destroyed[1] == 0);
    HIP_OK(hipGraphDestroy(c));
    CHECK(destroyed[1] == 0);
    HIP_OK(hipGraphExecDestroy(x));
    CHECK(destroyed[1] == 1);

    /* A graph's own references (no move), given back by hipGraphReleaseUserObject. */
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipUserObjectCreate(&o, (void *)2, destroy_obj, 1, hipUserObjectNoDestructorSync));
    HIP_OK(hipGraphRetainUserObject(g, o, 2, 0));
    CHECK_HIP(hipGraphReleaseUserObject(g, o, 0), hipErrorInvalidValue);
    HIP_OK(hipUserObjectRelease(o, 1));
    CHECK(destroyed[2] == 0);
    HIP_OK(hipGraphReleaseUserObject(g, o, 1));
    CHECK(destroyed[2] == 0);
    HIP_OK(hipGraphReleaseUserObject(g, o, 5)); /* only what the graph holds */
    CHECK(destroyed[2] == 1);
    HIP_OK(hipGraphReleaseUserObject(g, o, 1));
    HIP_OK(hipGraphDestroy(g));
    CHECK(destroyed[2] == 1);
}

/* hipGraphAddNode: each node type through the one call; the ROCm 7 layout of its struct. */
TEST(hipGraphAddNode_by_type)
{
    CHECK(sizeof(hipGraphNodeParams) == 256);
    CHECK(offsetof(hipGraphNodeParams, kernel) == 16 && offsetof(hipGraphNodeParams, reserved2) == 248);
    CHECK(offsetof(hipGraphNodeParams, alloc.dptr) == 16 + 112);
    const size_t n = 64 * 1024;
    hipStream_t s;
    uint8_t *host = NULL;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipHostMalloc((void **)&host, n, 0));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));

    hipGraphNodeParams p;
    hipGraphNode_t alloc, set, copy, freen, node;
    memset(&p, 0, sizeof(p));
    p.type = hipGraphNodeTypeMemAlloc;
    p.alloc = alloc_params(0, n);
    HIP_OK(hipGraphAddNode(&alloc, g, NULL, 0, &p));
    void *d = p.alloc.dptr;
    CHECK(d != NULL);

    memset(&p, 0, sizeof(p));
    p.type = hipGraphNodeTypeMemset;
    p.memset.dst = d;
    p.memset.elementSize = 1;
    p.memset.width = n;
    p.memset.height = 1;
    p.memset.value = 0x3C;
    HIP_OK(hipGraphAddNode(&set, g, &alloc, 1, &p));

    memset(&p, 0, sizeof(p));
    p.type = hipGraphNodeTypeMemcpy;
    p.memcpy.copyParams.srcPtr = (hipPitchedPtr){d, n, n, 1};
    p.memcpy.copyParams.dstPtr = (hipPitchedPtr){host, n, n, 1};
    p.memcpy.copyParams.extent = (hipExtent){n, 1, 1};
    p.memcpy.copyParams.kind = hipMemcpyDeviceToHost;
    p.memcpy.flags = 1;
    CHECK_HIP(hipGraphAddNode(&copy, g, &set, 1, &p), hipErrorInvalidValue);
    p.memcpy.flags = 0;
    HIP_OK(hipGraphAddNode(&copy, g, &set, 1, &p));

    memset(&p, 0, sizeof(p));
    p.type = hipGraphNodeTypeMemFree;
    p.free.dptr = d;
    HIP_OK(hipGraphAddNode(&freen, g, &copy, 1, &p));
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(freen, &t));
    CHECK(t == hipGraphNodeTypeMemFree);

    CHECK_HIP(hipGraphAddNode(&node, g, NULL, 0, NULL), hipErrorInvalidValue);
    p.type = (hipGraphNodeType)0x20;
    CHECK_HIP(hipGraphAddNode(&node, g, NULL, 0, &p), hipErrorInvalidValue);

    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    memset(host, 0, n);
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += host[i] != 0x3C;
    CHECKF(bad == 0, "%d bytes wrong", bad);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipHostFree(host));
    HIP_OK(hipStreamDestroy(s));
}
