/*
 * Graphs and stream capture: hipGraphCreate/Destroy, hipGraphAdd*Node (empty, memcpy,
 * memcpy 1D, memset, host, event record/wait, child graph, kernel), dependencies and edges,
 * node parameters, clone, instantiate/launch (repeated), hipGraphExec*NodeSetParams,
 * hipGraphExecUpdate; hipStreamBeginCapture/EndCapture of copies, fills and host functions,
 * cross-stream fork/join through events, the capture-mode rules and their error codes.
 *
 * Expected codes: hip-tests catch/unit/graph/{hipGraphCreate,hipGraphDestroy,
 * hipGraphAddDependencies,hipGraphRemoveDependencies,hipGraphAddHostNode,hipGraphAddMemcpyNode1D,
 * hipGraphAddEventRecordNode,hipGraphLaunch,hipGraphExecDestroy,hipGraphExecHostNodeSetParams,
 * hipStreamBeginCapture,hipStreamEndCapture,hipStreamIsCapturing,hipStreamGetCaptureInfo,
 * hipThreadExchangeStreamCaptureMode}.cc (AMD branches); clr hip_graph.cpp, hip_stream.cpp,
 * hip_internal.hpp (CHECK_STREAM_CAPTURE_SUPPORTED, CHECK_STREAM_CAPTURING).
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>

/* Host functions append their tag to a log, so the order they ran in can be checked. */
static atomic_int log_len;
static int log_buf[64];

static void log_tag(void *tag)
{
    int i = atomic_fetch_add(&log_len, 1);
    if (i < 64)
        log_buf[i] = (int)(intptr_t)tag;
}

static int log_pos(int tag)
{
    for (int i = 0; i < atomic_load(&log_len) && i < 64; i++)
        if (log_buf[i] == tag)
            return i;
    return -1;
}

static hipGraphNode_t add_host(hipGraph_t g, const hipGraphNode_t *deps, size_t n, int tag)
{
    hipGraphNode_t node = NULL;
    hipHostNodeParams p = {log_tag, (void *)(intptr_t)tag};
    HIP_OK(hipGraphAddHostNode(&node, g, deps, n, &p));
    return node;
}

static hipGraphNode_t add_memset(hipGraph_t g, const hipGraphNode_t *deps, size_t n, void *dst,
                                 unsigned elem, unsigned value, size_t width)
{
    hipGraphNode_t node = NULL;
    hipMemsetParams p = {0};
    p.dst = dst;
    p.elementSize = elem;
    p.width = width;
    p.height = 1;
    p.value = value;
    HIP_OK(hipGraphAddMemsetNode(&node, g, deps, n, &p));
    return node;
}

TEST(hipGraphCreate_destroy_negative)
{
    hipGraph_t g = NULL;
    CHECK_HIP(hipGraphCreate(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphCreate(&g, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphDestroy(NULL), hipErrorInvalidValue);
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphDestroy(g));
    CHECK_HIP(hipGraphDestroy(g), hipErrorIllegalState);
}

/* H2D copy → memset of the middle (32-bit elements) → D2H copy, launched three times with the
 * host source changed in between: every launch re-reads it. */
TEST(hipGraph_copy_memset_roundtrip_repeated)
{
    const size_t n = 1 * MiB;
    uint8_t *src = NULL, *dst = NULL;
    void *d = NULL;
    hipStream_t s;
    HIP_OK(hipHostMalloc((void **)&src, n, 0));
    HIP_OK(hipHostMalloc((void **)&dst, n, 0));
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipStreamCreate(&s));

    hipGraph_t g;
    hipGraphNode_t h2d, set, d2h;
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&h2d, g, NULL, 0, d, src, n, hipMemcpyHostToDevice));
    set = add_memset(g, &h2d, 1, (uint8_t *)d + 4096, 4, 0xA1B2C3D4u, 1024);
    HIP_OK(hipGraphAddMemcpyNode1D(&d2h, g, &set, 1, dst, d, n, hipMemcpyDeviceToHost));
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));

    for (unsigned round = 0; round < 3; round++) {
        pat_fill(src, n, 40 + round);
        memset(dst, 0, n);
        HIP_OK(hipGraphLaunch(x, s));
        HIP_OK(hipStreamSynchronize(s));
        CHECK_PATTERN(dst, 4096, 40 + round);
        uint32_t *w = (uint32_t *)(dst + 4096);
        int bad = 0;
        for (int i = 0; i < 1024; i++)
            bad += w[i] != 0xA1B2C3D4u;
        CHECKF(bad == 0, "round %u: %d filled words wrong", round, bad);
        size_t tail = 4096 + 4096;
        for (size_t i = tail; i < n; i++) {
            if (dst[i] != pat_byte(i, 40 + round)) {
                CHECKF(0, "round %u: byte %zu after the fill is wrong", round, i);
                break;
            }
        }
    }
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(src));
    HIP_OK(hipHostFree(dst));
}

/* A diamond of host nodes: A → {B, C} → D, plus the structure queries. */
TEST(hipGraph_dependency_order_and_queries)
{
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t d_deps[2];
    hipGraphNode_t a = add_host(g, NULL, 0, 1);
    d_deps[0] = add_host(g, &a, 1, 2);
    d_deps[1] = add_host(g, &a, 1, 3);
    hipGraphNode_t d = add_host(g, d_deps, 2, 4);

    size_t n = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 4);
    hipGraphNode_t roots[3] = {0, 0, (hipGraphNode_t)1};
    n = 3;
    HIP_OK(hipGraphGetRootNodes(g, roots, &n));
    CHECK(n == 1 && roots[0] == a && roots[1] == NULL && roots[2] == NULL);
    HIP_OK(hipGraphGetEdges(g, NULL, NULL, &n));
    CHECK(n == 4);
    hipGraphNode_t deps[2];
    n = 2;
    HIP_OK(hipGraphNodeGetDependencies(d, deps, &n));
    CHECK(n == 2 && ((deps[0] == d_deps[0] && deps[1] == d_deps[1]) ||
                     (deps[0] == d_deps[1] && deps[1] == d_deps[0])));
    HIP_OK(hipGraphNodeGetDependentNodes(a, NULL, &n));
    CHECK(n == 2);
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(d, &t));
    CHECK(t == hipGraphNodeTypeHost);

    hipGraphExec_t x;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    atomic_store(&log_len, 0);
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    REQUIRE(atomic_load(&log_len) == 4);
    CHECK(log_pos(1) == 0);
    CHECK(log_pos(4) == 3);
    CHECK(log_pos(2) > 0 && log_pos(3) > 0);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
}

TEST(hipGraph_dependencies_negative)
{
    hipGraph_t g, g2;
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphCreate(&g2, 0));
    hipGraphNode_t a, b, other;
    HIP_OK(hipGraphAddEmptyNode(&a, g, NULL, 0));
    HIP_OK(hipGraphAddEmptyNode(&b, g, NULL, 0));
    HIP_OK(hipGraphAddEmptyNode(&other, g2, NULL, 0));

    CHECK_HIP(hipGraphAddDependencies(NULL, &a, &b, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddDependencies(g, NULL, &b, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddDependencies(g, &a, NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddDependencies(g, &a, &a, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddDependencies(g, &a, &other, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddDependencies(g, &a, &b, 0), hipSuccess);
    HIP_OK(hipGraphAddDependencies(g, &a, &b, 1));
    CHECK_HIP(hipGraphAddDependencies(g, &a, &b, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphRemoveDependencies(g, &b, &a, 1), hipErrorInvalidValue);
    HIP_OK(hipGraphRemoveDependencies(g, &a, &b, 1));
    CHECK_HIP(hipGraphRemoveDependencies(g, &a, &b, 1), hipErrorInvalidValue);
    size_t n = 9;
    HIP_OK(hipGraphGetEdges(g, NULL, NULL, &n));
    CHECK(n == 0);

    /* A dependency of another graph, or named twice, when adding a node. */
    hipGraphNode_t c, twice[2] = {a, a};
    CHECK_HIP(hipGraphAddEmptyNode(&c, g, &other, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddEmptyNode(&c, g, twice, 2), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddEmptyNode(&c, g, NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddEmptyNode(NULL, g, NULL, 0), hipErrorInvalidValue);

    /* A cycle cannot be instantiated or listed. */
    HIP_OK(hipGraphAddDependencies(g, &a, &b, 1));
    HIP_OK(hipGraphAddDependencies(g, &b, &a, 1));
    hipGraphExec_t x;
    CHECK_HIP(hipGraphInstantiate(&x, g, NULL, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphGetNodes(g, NULL, &n), hipErrorInvalidValue);

    CHECK_HIP(hipGraphGetNodes(NULL, NULL, &n), hipErrorInvalidValue);
    CHECK_HIP(hipGraphGetNodes(g2, NULL, NULL), hipErrorInvalidValue);
    hipGraphNode_t from[1];
    CHECK_HIP(hipGraphGetEdges(g2, from, NULL, &n), hipErrorInvalidValue);
    CHECK_HIP(hipGraphNodeGetDependencies(NULL, NULL, &n), hipErrorInvalidValue);
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipGraphDestroy(g2));
}

TEST(hipGraph_node_params_negative)
{
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    hipGraphNode_t node, empty;
    HIP_OK(hipGraphAddEmptyNode(&empty, g, NULL, 0));
    hipHostNodeParams hp = {NULL, NULL};
    CHECK_HIP(hipGraphAddHostNode(&node, g, NULL, 0, &hp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddHostNode(&node, g, NULL, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddHostNode(&node, NULL, NULL, 0, &hp), hipErrorInvalidValue);
    hp.fn = log_tag;
    CHECK_HIP(hipGraphHostNodeSetParams(empty, &hp), hipErrorInvalidValue);

    uint8_t h[64];
    CHECK_HIP(hipGraphAddMemcpyNode1D(&node, g, NULL, 0, d, h, 0, hipMemcpyDefault),
              hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemcpyNode1D(&node, g, NULL, 0, d, h, 8192, hipMemcpyDefault),
              hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddMemcpyNode1D(&node, g, NULL, 0, d, h, 64, (hipMemcpyKind)77),
              hipErrorInvalidMemcpyDirection);

    hipMemsetParams mp = {0};
    mp.dst = d;
    mp.elementSize = 3;
    mp.width = 16;
    mp.height = 1;
    CHECK_HIP(hipGraphAddMemsetNode(&node, g, NULL, 0, &mp), hipErrorInvalidValue);
    mp.elementSize = 1;
    mp.width = 8192;
    CHECK_HIP(hipGraphAddMemsetNode(&node, g, NULL, 0, &mp), hipErrorInvalidValue);
    mp.width = 16;
    mp.height = 0;
    CHECK_HIP(hipGraphAddMemsetNode(&node, g, NULL, 0, &mp), hipErrorInvalidValue);

    hipEvent_t e;
    HIP_OK(hipEventCreate(&e));
    CHECK_HIP(hipGraphAddEventRecordNode(&node, g, NULL, 0, NULL), hipErrorInvalidValue);
    hipGraphNode_t rec;
    HIP_OK(hipGraphAddEventRecordNode(&rec, g, NULL, 0, e));
    CHECK_HIP(hipGraphEventWaitNodeSetEvent(rec, e), hipErrorInvalidValue);
    CHECK_HIP(hipGraphEventRecordNodeSetEvent(empty, e), hipErrorInvalidValue);
    hipEvent_t got = NULL;
    HIP_OK(hipGraphEventRecordNodeGetEvent(rec, &got));
    CHECK(got == e);

    hipKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    CHECK_HIP(hipGraphAddKernelNode(&node, g, NULL, 0, &kp), hipErrorInvalidValue);
    kp.func = (void *)h;
    CHECK_HIP(hipGraphAddKernelNode(&node, g, NULL, 0, &kp), hipErrorInvalidDeviceFunction);

    hipGraph_t child;
    CHECK_HIP(hipGraphChildGraphNodeGetGraph(empty, &child), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddChildGraphNode(&node, g, NULL, 0, NULL), hipErrorInvalidValue);

    size_t n = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 2); /* failed adds left nothing behind */
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
}

/* Instantiation snapshots the graph; hipGraphExec*NodeSetParams changes the executable graph
 * only; hipGraphExecUpdate takes a graph of the same shape, and refuses another shape. */
TEST(hipGraphExec_set_params_and_update)
{
    const size_t n = 64 * KiB;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t set = add_memset(g, NULL, 0, d, 1, 0x11, n);
    hipGraphNode_t host = add_host(g, &set, 1, 7);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));

    /* Editing the graph after instantiation does not reach the executable graph. */
    hipMemsetParams mp = {0};
    mp.dst = d;
    mp.elementSize = 1;
    mp.width = n;
    mp.height = 1;
    mp.value = 0x22;
    HIP_OK(hipGraphMemsetNodeSetParams(set, &mp));
    atomic_store(&log_len, 0);
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, n, 0x11);
    CHECK(atomic_load(&log_len) == 1 && log_buf[0] == 7);
    hipMemsetParams back;
    HIP_OK(hipGraphMemsetNodeGetParams(set, &back));
    CHECK(back.value == 0x22 && back.width == n && back.dst == d);

    mp.value = 0x33;
    HIP_OK(hipGraphExecMemsetNodeSetParams(x, set, &mp));
    hipHostNodeParams hp = {log_tag, (void *)(intptr_t)8};
    HIP_OK(hipGraphExecHostNodeSetParams(x, host, &hp));
    atomic_store(&log_len, 0);
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, n, 0x33);
    CHECK(atomic_load(&log_len) == 1 && log_buf[0] == 8);
    HIP_OK(hipGraphHostNodeGetParams(host, &hp));
    CHECK(hp.fn == log_tag && hp.userData == (void *)(intptr_t)7);

    /* Negative: a node added after instantiation, another node type, null arguments. */
    hipGraphNode_t late = add_host(g, NULL, 0, 9);
    CHECK_HIP(hipGraphExecHostNodeSetParams(x, late, &hp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecHostNodeSetParams(x, set, &hp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecHostNodeSetParams(NULL, host, &hp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecMemsetNodeSetParams(x, NULL, &mp), hipErrorInvalidValue);

    /* Update from a graph of the same shape, then a refused one of another shape. */
    hipGraph_t g2;
    HIP_OK(hipGraphCreate(&g2, 0));
    hipGraphNode_t s2 = add_memset(g2, NULL, 0, d, 1, 0x44, n);
    add_host(g2, &s2, 1, 10);
    hipGraphExecUpdateResult r = hipGraphExecUpdateError;
    hipGraphNode_t bad = (hipGraphNode_t)1;
    HIP_OK(hipGraphExecUpdate(x, g2, &bad, &r));
    CHECK(r == hipGraphExecUpdateSuccess);
    atomic_store(&log_len, 0);
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    check_dev_bytes(d, n, 0x44);
    CHECK(atomic_load(&log_len) == 1 && log_buf[0] == 10);
    CHECK_HIP(hipGraphExecUpdate(x, g, &bad, &r), hipErrorGraphExecUpdateFailure); /* 3 nodes */
    CHECK(r == hipGraphExecUpdateErrorTopologyChanged);

    HIP_OK(hipGraphExecDestroy(x));
    CHECK_HIP(hipGraphExecDestroy(x), hipErrorInvalidValue);
    CHECK_HIP(hipGraphLaunch(x, s), hipErrorInvalidValue);
    CHECK_HIP(hipGraphLaunch(NULL, s), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecDestroy(NULL), hipErrorInvalidValue);
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipGraphDestroy(g2));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
}

/* A pitched copy node (hipMemcpy3DParms) and a child graph node; clone and find-in-clone. */
TEST(hipGraph_memcpy3d_child_clone)
{
    const size_t w = 100, h = 8, pitch = 128;
    void *a = NULL, *b = NULL;
    HIP_OK(hipMalloc(&a, pitch * h));
    HIP_OK(hipMalloc(&b, pitch * h));
    HIP_OK(hipMemset(b, 0, pitch * h));
    uint8_t *host = xmalloc(pitch * h);
    pat_fill(host, pitch * h, 5);
    HIP_OK(hipMemcpy(a, host, pitch * h, hipMemcpyHostToDevice));

    hipGraph_t child, g;
    HIP_OK(hipGraphCreate(&child, 0));
    hipMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr.ptr = a;
    p.srcPtr.pitch = pitch;
    p.srcPtr.xsize = w;
    p.srcPtr.ysize = h;
    p.dstPtr = p.srcPtr;
    p.dstPtr.ptr = b;
    p.extent.width = w;
    p.extent.height = h;
    p.extent.depth = 1;
    p.kind = hipMemcpyDeviceToDevice;
    hipGraphNode_t cp;
    HIP_OK(hipGraphAddMemcpyNode(&cp, child, NULL, 0, &p));
    hipMemcpy3DParms q;
    HIP_OK(hipGraphMemcpyNodeGetParams(cp, &q));
    CHECK(q.srcPtr.ptr == a && q.dstPtr.pitch == pitch && q.extent.height == h);

    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t cn;
    HIP_OK(hipGraphAddChildGraphNode(&cn, g, NULL, 0, child));
    hipGraph_t inner = NULL;
    HIP_OK(hipGraphChildGraphNodeGetGraph(cn, &inner));
    size_t n = 0;
    HIP_OK(hipGraphGetNodes(inner, NULL, &n));
    CHECK(n == 1);
    /* The child node holds a copy: destroying the original child graph changes nothing. */
    HIP_OK(hipGraphDestroy(child));

    hipGraph_t clone;
    HIP_OK(hipGraphClone(&clone, g));
    hipGraphNode_t cn2 = NULL;
    HIP_OK(hipGraphNodeFindInClone(&cn2, cn, clone));
    CHECK(cn2 != NULL && cn2 != cn);
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(cn2, &t));
    CHECK(t == hipGraphNodeTypeGraph);
    CHECK_HIP(hipGraphNodeFindInClone(&cn2, cn, g), hipErrorInvalidValue);
    HIP_OK(hipGraphDestroy(g));

    hipGraphExec_t x;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipGraphInstantiate(&x, clone, NULL, NULL, 0));
    HIP_OK(hipGraphDestroy(clone)); /* the executable graph stays valid */
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    uint8_t *out = xmalloc(pitch * h);
    HIP_OK(hipMemcpy(out, b, pitch * h, hipMemcpyDeviceToHost));
    int bad = 0;
    for (size_t y = 0; y < h; y++)
        for (size_t i = 0; i < pitch; i++)
            bad += out[y * pitch + i] != (i < w ? host[y * pitch + i] : 0);
    CHECKF(bad == 0, "%d bytes wrong after the child graph's pitched copy", bad);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipStreamDestroy(s));
    free(out);
    free(host);
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}

TEST(hipGraph_destroy_node_and_handles)
{
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t a, b, c;
    HIP_OK(hipGraphAddEmptyNode(&a, g, NULL, 0));
    HIP_OK(hipGraphAddEmptyNode(&b, g, &a, 1));
    HIP_OK(hipGraphAddEmptyNode(&c, g, &b, 1));
    HIP_OK(hipGraphDestroyNode(b));
    size_t n = 0;
    HIP_OK(hipGraphGetEdges(g, NULL, NULL, &n));
    CHECK(n == 0);
    HIP_OK(hipGraphGetRootNodes(g, NULL, &n));
    CHECK(n == 2);
    hipGraphNodeType t;
    CHECK_HIP(hipGraphNodeGetType(b, &t), hipErrorInvalidValue);
    CHECK_HIP(hipGraphDestroyNode(b), hipErrorInvalidValue);
    HIP_OK(hipGraphDestroy(g));
    CHECK_HIP(hipGraphNodeGetType(a, &t), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddEmptyNode(&a, g, NULL, 0), hipErrorInvalidValue);

    /* Many graphs made and destroyed: no fd is used or left behind. */
    int fds = fd_count();
    for (int i = 0; i < 200; i++) {
        HIP_OK(hipGraphCreate(&g, 0));
        HIP_OK(hipGraphAddEmptyNode(&a, g, NULL, 0));
        hipGraphExec_t x;
        HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
        HIP_OK(hipGraphExecDestroy(x));
        HIP_OK(hipGraphDestroy(g));
    }
    CHECK(fd_count() == fds);
}

/* Event record nodes record; an event wait node orders a graph after another stream's work. */
TEST(hipGraph_event_nodes)
{
    const size_t n = 32 * MiB;
    hipStream_t s1, s2;
    HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    void *a = NULL, *b = NULL;
    HIP_OK(hipMalloc(&a, n));
    HIP_OK(hipMalloc(&b, n));
    hipEvent_t ready, t0, t1;
    HIP_OK(hipEventCreate(&ready));
    HIP_OK(hipEventCreate(&t0));
    HIP_OK(hipEventCreate(&t1));

    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t w, r0, cp, r1;
    HIP_OK(hipGraphAddEventWaitNode(&w, g, NULL, 0, ready));
    HIP_OK(hipGraphAddEventRecordNode(&r0, g, &w, 1, t0));
    HIP_OK(hipGraphAddMemcpyNode1D(&cp, g, &r0, 1, b, a, n, hipMemcpyDeviceToDevice));
    HIP_OK(hipGraphAddEventRecordNode(&r1, g, &cp, 1, t1));
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));

    /* s2 fills a (several large fills), records `ready`; the graph on s1 waits for it. */
    for (int i = 0; i < 4; i++)
        HIP_OK(hipMemsetAsync(a, 0x60 + i, n, s2));
    HIP_OK(hipEventRecord(ready, s2));
    HIP_OK(hipGraphLaunch(x, s1));
    HIP_OK(hipStreamSynchronize(s1));
    check_dev_bytes(b, n, 0x63);
    HIP_OK(hipEventQuery(t1));
    float ms = -1;
    HIP_OK(hipEventElapsedTime(&ms, t0, t1));
    CHECK(ms >= 0);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipEventDestroy(ready));
    HIP_OK(hipEventDestroy(t0));
    HIP_OK(hipEventDestroy(t1));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipStreamDestroy(s2));
}

/* Captured copies, fills and host functions do not run during capture; the graph does, each
 * launch. */
TEST(hipStreamCapture_basic_roundtrip)
{
    const size_t n = 256 * KiB;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    void *d = NULL;
    uint8_t *h = NULL;
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipHostMalloc((void **)&h, n, 0));
    HIP_OK(hipMemset(d, 0x01, n));
    memset(h, 0, n);

    hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
    HIP_OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    HIP_OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    unsigned long long id = 0;
    HIP_OK(hipStreamGetCaptureInfo(s, &st, &id));
    CHECK(st == hipStreamCaptureStatusActive && id != 0);

    atomic_store(&log_len, 0);
    HIP_OK(hipMemsetAsync(d, 0x7E, n, s));
    HIP_OK(hipMemsetD32Async((uint8_t *)d + 1024, 0x01020304, 16, s));
    HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
    HIP_OK(hipLaunchHostFunc(s, log_tag, (void *)(intptr_t)21));

    hipGraph_t cg = NULL;
    const hipGraphNode_t *deps = NULL;
    size_t ndeps = 0;
    HIP_OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, &cg, &deps, &ndeps));
    CHECK(ndeps == 1 && cg != NULL);
    hipGraphNodeType t;
    if (ndeps == 1) {
        HIP_OK(hipGraphNodeGetType(deps[0], &t));
        CHECK(t == hipGraphNodeTypeHost);
    }
    hipGraph_t g = NULL;
    HIP_OK(hipStreamEndCapture(s, &g));
    CHECK(g == cg);
    HIP_OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    HIP_OK(hipStreamSynchronize(s));
    /* Nothing ran during capture. */
    CHECK(atomic_load(&log_len) == 0);
    CHECK_BYTES(h, n, 0);
    check_dev_bytes(d, n, 0x01);

    size_t nn = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 4);
    HIP_OK(hipGraphGetEdges(g, NULL, NULL, &nn));
    CHECK(nn == 3);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    for (int round = 0; round < 2; round++) {
        memset(h, 0, n);
        HIP_OK(hipGraphLaunch(x, s));
        HIP_OK(hipStreamSynchronize(s));
        CHECK_BYTES(h, 1024, 0x7E);
        const uint32_t *w = (const uint32_t *)(h + 1024);
        for (int i = 0; i < 16; i++)
            CHECK(w[i] == 0x01020304);
        CHECK_BYTES(h + 1024 + 64, n - 1024 - 64, 0x7E);
    }
    CHECK(atomic_load(&log_len) == 2);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
}

/* Fork/join across streams: s1 forks to s2 through an event, s2 joins back. */
TEST(hipStreamCapture_cross_stream_fork_join)
{
    const size_t n = 64 * KiB;
    hipStream_t s1, s2;
    HIP_OK(hipStreamCreate(&s1));
    HIP_OK(hipStreamCreate(&s2));
    void *a = NULL, *b = NULL, *c = NULL;
    HIP_OK(hipMalloc(&a, n));
    HIP_OK(hipMalloc(&b, n));
    HIP_OK(hipMalloc(&c, n));
    uint8_t *h = xmalloc(2 * n);
    hipEvent_t fork, join;
    HIP_OK(hipEventCreate(&fork));
    HIP_OK(hipEventCreate(&join));

    HIP_OK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    HIP_OK(hipMemsetAsync(a, 0x5A, n, s1));
    HIP_OK(hipEventRecord(fork, s1));
    HIP_OK(hipStreamWaitEvent(s2, fork, 0));
    hipStreamCaptureStatus st;
    HIP_OK(hipStreamIsCapturing(s2, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    CHECK_HIP(hipStreamBeginCapture(s2, hipStreamCaptureModeGlobal), hipErrorIllegalState);
    HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s2));
    HIP_OK(hipMemsetAsync(c, 0xC3, n, s1));
    HIP_OK(hipEventRecord(join, s2));
    hipGraph_t g = NULL;
    CHECK_HIP(hipStreamEndCapture(s2, &g), hipErrorStreamCaptureUnmatched);
    HIP_OK(hipStreamWaitEvent(s1, join, 0));
    HIP_OK(hipMemcpyAsync(h, b, n, hipMemcpyDeviceToHost, s1));
    HIP_OK(hipMemcpyAsync(h + n, c, n, hipMemcpyDeviceToHost, s1));
    HIP_OK(hipStreamEndCapture(s1, &g));
    HIP_OK(hipStreamIsCapturing(s2, &st));
    CHECK(st == hipStreamCaptureStatusNone);

    /* memset a → {memcpy a→b, memset c}; memcpy b→h after both. */
    size_t nn = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 5);
    HIP_OK(hipGraphGetRootNodes(g, NULL, &nn));
    CHECK(nn == 1);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    for (int round = 0; round < 2; round++) {
        memset(h, 0, 2 * n);
        HIP_OK(hipMemset(a, 0, n));
        HIP_OK(hipMemset(b, 0, n));
        HIP_OK(hipGraphLaunch(x, s2));
        HIP_OK(hipStreamSynchronize(s2));
        CHECK_BYTES(h, n, 0x5A);
        CHECK_BYTES(h + n, n, 0xC3);
    }
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipEventDestroy(fork));
    HIP_OK(hipEventDestroy(join));
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipStreamDestroy(s2));
    free(h);
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
    HIP_OK(hipFree(c));
}

TEST(hipStreamCapture_unjoined)
{
    hipStream_t s1, s2;
    HIP_OK(hipStreamCreate(&s1));
    HIP_OK(hipStreamCreate(&s2));
    void *a = NULL;
    HIP_OK(hipMalloc(&a, 4096));
    hipEvent_t e;
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
    HIP_OK(hipMemsetAsync(a, 1, 4096, s1));
    HIP_OK(hipEventRecord(e, s1));
    HIP_OK(hipStreamWaitEvent(s2, e, 0));
    HIP_OK(hipMemsetAsync(a, 2, 4096, s2));
    hipGraph_t g = (hipGraph_t)1;
    CHECK_HIP(hipStreamEndCapture(s1, &g), hipErrorStreamCaptureUnjoined);
    CHECK(g == NULL);
    hipStreamCaptureStatus st;
    HIP_OK(hipStreamIsCapturing(s1, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    HIP_OK(hipStreamIsCapturing(s2, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    /* Both streams work normally again. */
    HIP_OK(hipMemsetAsync(a, 3, 4096, s2));
    HIP_OK(hipStreamSynchronize(s2));
    check_dev_bytes(a, 4096, 3);
    HIP_OK(hipEventDestroy(e));
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipStreamDestroy(s2));
    HIP_OK(hipFree(a));
}

TEST(hipStreamCapture_negative_parameters)
{
    hipStream_t s, dead;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreate(&dead));
    HIP_OK(hipStreamDestroy(dead));
    hipGraph_t g;
    hipStreamCaptureStatus st;
    CHECK_HIP(hipStreamBeginCapture(NULL, hipStreamCaptureModeGlobal),
              hipErrorStreamCaptureUnsupported);
    CHECK_HIP(hipStreamBeginCapture(s, (hipStreamCaptureMode)-1), hipErrorInvalidValue);
    CHECK_HIP(hipStreamBeginCapture(dead, hipStreamCaptureModeGlobal), hipErrorContextIsDestroyed);
    CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorIllegalState);
    CHECK_HIP(hipStreamEndCapture(NULL, &g), hipErrorIllegalState);
    CHECK_HIP(hipStreamEndCapture(s, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipStreamEndCapture(dead, &g), hipErrorContextIsDestroyed);
    CHECK_HIP(hipStreamIsCapturing(s, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipStreamIsCapturing(dead, &st), hipErrorContextIsDestroyed);
    CHECK_HIP(hipStreamGetCaptureInfo(s, NULL, NULL), hipErrorInvalidValue);
    hipGraphNode_t none = NULL;
    CHECK_HIP(hipStreamUpdateCaptureDependencies(s, &none, 0, 0), hipErrorIllegalState);

    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK_HIP(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipErrorIllegalState);
    /* The null stream while a blocking stream captures. */
    CHECK_HIP(hipStreamIsCapturing(NULL, &st), hipErrorStreamCaptureImplicit);
    CHECK_HIP(hipStreamUpdateCaptureDependencies(s, NULL, 1, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamUpdateCaptureDependencies(s, &none, 0, 7), hipErrorInvalidValue);
    HIP_OK(hipStreamEndCapture(s, &g));
    size_t n = 1;
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 0); /* an empty capture is an empty graph */
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamIsCapturing(NULL, &st));
    CHECK(st == hipStreamCaptureStatusNone);

    hipStreamCaptureMode m = (hipStreamCaptureMode)3;
    CHECK_HIP(hipThreadExchangeStreamCaptureMode(&m), hipErrorInvalidValue);
    CHECK_HIP(hipThreadExchangeStreamCaptureMode(NULL), hipErrorInvalidValue);
    m = hipStreamCaptureModeRelaxed;
    HIP_OK(hipThreadExchangeStreamCaptureMode(&m));
    CHECK(m == hipStreamCaptureModeGlobal);
    HIP_OK(hipThreadExchangeStreamCaptureMode(&m));
    CHECK(m == hipStreamCaptureModeRelaxed);
    HIP_OK(hipStreamDestroy(s));
}

/* Synchronising calls during capture: refused, and the capture invalidated. */
TEST(hipStreamCapture_sync_calls_invalidate)
{
    const hipStreamCaptureMode modes[] = {hipStreamCaptureModeGlobal,
                                          hipStreamCaptureModeThreadLocal,
                                          hipStreamCaptureModeRelaxed};
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    uint8_t h[16] = {0};
    for (int i = 0; i < 3; i++) {
        hipStream_t s;
        hipGraph_t g = (hipGraph_t)1;
        hipEvent_t e;
        HIP_OK(hipStreamCreate(&s));
        HIP_OK(hipEventCreate(&e));

        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        CHECK_HIP(hipStreamSynchronize(s), hipErrorStreamCaptureUnsupported);
        hipStreamCaptureStatus st;
        HIP_OK(hipStreamIsCapturing(s, &st));
        CHECK(st == hipStreamCaptureStatusInvalidated);
        CHECK_HIP(hipMemsetAsync(d, 0, 16, s), hipErrorStreamCaptureInvalidated);
        CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
        CHECK(g == NULL);

        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        CHECK_HIP(hipStreamQuery(s), hipErrorStreamCaptureUnsupported);
        CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);

        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        CHECK_HIP(hipDeviceSynchronize(), hipErrorStreamCaptureUnsupported);
        CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);

        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        HIP_OK(hipEventRecord(e, s));
        CHECK_HIP(hipEventQuery(e), hipErrorCapturedEvent);
        CHECK_HIP(hipEventSynchronize(e), hipErrorCapturedEvent);
        CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);

        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        CHECK_HIP(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice), hipErrorStreamCaptureImplicit);
        CHECK_HIP(hipMemset(d, 0, 16), hipErrorStreamCaptureImplicit);
        CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);

        /* hipMalloc: refused in Global and ThreadLocal mode, allowed in Relaxed mode. */
        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        void *p = NULL;
        hipError_t want = modes[i] == hipStreamCaptureModeRelaxed ? hipSuccess
                                                                  : hipErrorStreamCaptureUnsupported;
        CHECK_HIP(hipMalloc(&p, 64), want);
        if (want == hipSuccess) {
            HIP_OK(hipStreamEndCapture(s, &g));
            HIP_OK(hipGraphDestroy(g));
            HIP_OK(hipFree(p));
        } else {
            CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
        }
        /* The stream works normally after an invalidated capture. */
        HIP_OK(hipMemsetAsync(d, 0x40 + i, 4096, s));
        HIP_OK(hipStreamSynchronize(s));
        check_dev_bytes(d, 4096, (uint8_t)(0x40 + i));
        HIP_OK(hipEventDestroy(e));
        HIP_OK(hipStreamDestroy(s));
    }
    HIP_OK(hipFree(d));
}

/* Another stream's synchronisation during a capture: refused under a Global-mode capture (any
 * thread), allowed under Relaxed; VMM queries work during any capture. */
TEST(hipStreamCapture_other_stream_sync_by_mode)
{
    hipStream_t s, other;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamCreate(&other));
    hipGraph_t g;

    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
    HIP_OK(hipStreamSynchronize(other));
    HIP_OK(hipStreamEndCapture(s, &g));
    HIP_OK(hipGraphDestroy(g));

    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    size_t gran = 0;
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    HIP_OK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum));
    CHECK(gran != 0);
    CHECK_HIP(hipStreamSynchronize(other), hipErrorStreamCaptureUnsupported);
    CHECK_HIP(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);

    /* This thread in Relaxed mode may synchronise other streams during a Global capture. */
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    hipStreamCaptureMode m = hipStreamCaptureModeRelaxed;
    HIP_OK(hipThreadExchangeStreamCaptureMode(&m));
    HIP_OK(hipStreamSynchronize(other));
    HIP_OK(hipThreadExchangeStreamCaptureMode(&m));
    HIP_OK(hipStreamEndCapture(s, &g));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipStreamDestroy(other));
}

struct thread_arg {
    hipStream_t s;
    hipError_t sync_rc;
    hipError_t end_rc;
};

static void *sync_other(void *p)
{
    struct thread_arg *a = p;
    hipStream_t mine;
    if (hipStreamCreate(&mine) != hipSuccess) {
        a->sync_rc = hipErrorUnknown;
        return NULL;
    }
    a->sync_rc = hipStreamSynchronize(mine);
    hipStreamDestroy(mine);
    return NULL;
}

static void *end_capture(void *p)
{
    struct thread_arg *a = p;
    hipGraph_t g;
    a->end_rc = hipStreamEndCapture(a->s, &g);
    if (a->end_rc == hipSuccess)
        hipGraphDestroy(g);
    return NULL;
}

TEST(hipStreamCapture_threads)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    const hipStreamCaptureMode modes[] = {hipStreamCaptureModeGlobal,
                                          hipStreamCaptureModeThreadLocal,
                                          hipStreamCaptureModeRelaxed};
    const hipError_t sync_want[] = {hipErrorStreamCaptureUnsupported, hipSuccess, hipSuccess};
    const hipError_t end_want[] = {hipErrorStreamCaptureWrongThread,
                                   hipErrorStreamCaptureWrongThread, hipSuccess};
    for (int i = 0; i < 3; i++) {
        struct thread_arg a = {s, hipErrorUnknown, hipErrorUnknown};
        pthread_t t;
        HIP_OK(hipStreamBeginCapture(s, modes[i]));
        REQUIRE(pthread_create(&t, NULL, sync_other, &a) == 0);
        pthread_join(t, NULL);
        CHECKF(a.sync_rc == sync_want[i], "mode %d: other thread's sync gave %d", i, a.sync_rc);
        REQUIRE(pthread_create(&t, NULL, end_capture, &a) == 0);
        pthread_join(t, NULL);
        CHECKF(a.end_rc == end_want[i], "mode %d: end from another thread gave %d", i, a.end_rc);
        if (a.end_rc != hipSuccess) {
            hipGraph_t g;
            hipError_t want = i == 0 ? hipErrorStreamCaptureInvalidated : hipSuccess;
            CHECK_HIP(hipStreamEndCapture(s, &g), want);
            if (want == hipSuccess)
                HIP_OK(hipGraphDestroy(g));
        }
    }
    HIP_OK(hipStreamDestroy(s));
}

/* hipStreamUpdateCaptureDependencies: a manual node joined into the stream's dependencies. */
TEST(hipStreamCapture_update_dependencies)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    void *d = NULL;
    HIP_OK(hipMalloc(&d, 4096));
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    HIP_OK(hipMemsetAsync(d, 1, 4096, s));
    hipGraph_t cg;
    hipStreamCaptureStatus st;
    HIP_OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, &cg, NULL, NULL));
    atomic_store(&log_len, 0);
    hipGraphNode_t manual = add_host(cg, NULL, 0, 31);
    HIP_OK(hipStreamUpdateCaptureDependencies(s, &manual, 1, hipStreamAddCaptureDependencies));
    const hipGraphNode_t *deps;
    size_t n = 0;
    HIP_OK(hipStreamGetCaptureInfo_v2(s, &st, NULL, NULL, &deps, &n));
    CHECK(n == 2);
    HIP_OK(hipLaunchHostFunc(s, log_tag, (void *)(intptr_t)32));
    hipGraph_t g;
    HIP_OK(hipStreamEndCapture(s, &g));
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 3);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(atomic_load(&log_len) == 2 && log_pos(31) == 0 && log_pos(32) == 1);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
}

/* hipStreamPerThread captures (hip-tests capture it as often as created streams). */
TEST(hipStreamCapture_per_thread_stream)
{
    const size_t n = 16 * KiB;
    void *d = NULL;
    uint8_t *h = NULL;
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipHostMalloc((void **)&h, n, 0));
    memset(h, 0, n);
    hipStreamCaptureStatus st;
    HIP_OK(hipStreamBeginCapture(hipStreamPerThread, hipStreamCaptureModeGlobal));
    HIP_OK(hipStreamIsCapturing(hipStreamPerThread, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    CHECK_HIP(hipStreamIsCapturing(NULL, &st), hipErrorStreamCaptureImplicit);
    HIP_OK(hipMemsetAsync(d, 0x3C, n, hipStreamPerThread));
    HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, hipStreamPerThread));
    hipGraph_t g;
    HIP_OK(hipStreamEndCapture(hipStreamPerThread, &g));
    CHECK_BYTES(h, n, 0);
    size_t nn = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 2);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(x, hipStreamPerThread));
    HIP_OK(hipStreamSynchronize(hipStreamPerThread));
    CHECK_BYTES(h, n, 0x3C);
    HIP_OK(hipGraphDestroy(g));

    HIP_OK(hipStreamBeginCapture(hipStreamPerThread, hipStreamCaptureModeRelaxed));
    CHECK_HIP(hipStreamSynchronize(hipStreamPerThread), hipErrorStreamCaptureUnsupported);
    CHECK_HIP(hipStreamEndCapture(hipStreamPerThread, &g), hipErrorStreamCaptureInvalidated);
    CHECK_HIP(hipStreamBeginCapture(hipStreamLegacy, hipStreamCaptureModeGlobal),
              hipErrorStreamCaptureUnsupported);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(h));
}

/* hipGraphExecUpdate's refusals (hip-tests Unit_hipGraphExecUpdate_Negative_*). */
TEST(hipGraphExecUpdate_refusals)
{
    const size_t n = 4096;
    void *d = NULL;
    uint8_t *h = xmalloc(n);
    HIP_OK(hipMalloc(&d, n));
    hipGraph_t g1, g2, g3;
    hipGraphNode_t a, b, c;
    HIP_OK(hipGraphCreate(&g1, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&a, g1, NULL, 0, d, h, n, hipMemcpyHostToDevice));
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g1, NULL, NULL, 0));

    HIP_OK(hipGraphCreate(&g2, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&b, g2, NULL, 0, h, d, n, hipMemcpyDeviceToHost));
    hipGraphNode_t err = NULL;
    hipGraphExecUpdateResult r = hipGraphExecUpdateSuccess;
    CHECK_HIP(hipGraphExecUpdate(x, g2, &err, &r), hipErrorGraphExecUpdateFailure);
    CHECK(r == hipGraphExecUpdateErrorParametersChanged && err == b);

    HIP_OK(hipGraphCreate(&g3, 0));
    HIP_OK(hipGraphAddEmptyNode(&c, g3, NULL, 0));
    CHECK_HIP(hipGraphExecUpdate(x, g3, &err, &r), hipErrorGraphExecUpdateFailure);
    CHECK(r == hipGraphExecUpdateErrorNodeTypeChanged && err == c);

    CHECK_HIP(hipGraphExecUpdate(x, g3, NULL, &r), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecUpdate(x, g3, &err, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecUpdate(NULL, g3, &err, &r), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecUpdate(x, NULL, &err, &r), hipErrorInvalidValue);

    /* The refused updates left the executable graph as it was: it still copies h → d. */
    pat_fill(h, n, 77);
    HIP_OK(hipGraphLaunch(x, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
    check_dev_pattern(d, n, 77);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g1));
    HIP_OK(hipGraphDestroy(g2));
    HIP_OK(hipGraphDestroy(g3));
    HIP_OK(hipFree(d));
    free(h);
}

/* hipStreamBeginCaptureToGraph: captured work lands in an existing graph after given nodes. */
TEST(hipStreamBeginCaptureToGraph_basic)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    hipGraph_t g, out = NULL;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t first = add_host(g, NULL, 0, 41);
    add_host(g, NULL, 0, 40); /* a second root, added by hand: not "unjoined" */
    CHECK_HIP(hipStreamBeginCaptureToGraph(s, NULL, NULL, NULL, 0, hipStreamCaptureModeGlobal),
              hipErrorInvalidValue);
    CHECK_HIP(hipStreamBeginCaptureToGraph(s, g, NULL, NULL, 1, hipStreamCaptureModeGlobal),
              hipErrorInvalidValue);
    CHECK_HIP(hipStreamBeginCaptureToGraph(s, g, NULL, NULL, 0, (hipStreamCaptureMode)-1),
              hipErrorInvalidValue);
    hipGraphEdgeData ed;
    memset(&ed, 0, sizeof ed);
    CHECK_HIP(hipStreamBeginCaptureToGraph(s, g, &first, &ed, 1, hipStreamCaptureModeGlobal),
              hipErrorNotSupported);
    HIP_OK(hipStreamBeginCaptureToGraph(s, g, &first, NULL, 1, hipStreamCaptureModeGlobal));
    HIP_OK(hipLaunchHostFunc(s, log_tag, (void *)(intptr_t)42));
    HIP_OK(hipStreamEndCapture(s, &out));
    CHECK(out == g);
    size_t n = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &n));
    CHECK(n == 3);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    atomic_store(&log_len, 0);
    HIP_OK(hipGraphLaunch(x, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(atomic_load(&log_len) == 3 && log_pos(41) < log_pos(42));
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
}

/* hipGraphNodeSetEnabled: a disabled fill does nothing; host nodes cannot be disabled. */
TEST(hipGraphNodeSetEnabled_skips_step)
{
    const size_t n = 4096;
    void *d = NULL;
    HIP_OK(hipMalloc(&d, n));
    HIP_OK(hipMemset(d, 0x10, n));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t set = add_memset(g, NULL, 0, d, 1, 0x20, n);
    hipGraphNode_t host = add_host(g, &set, 1, 50);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiateWithFlags(&x, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
    unsigned long long flags = 0;
    HIP_OK(hipGraphExecGetFlags(x, &flags));
    CHECK(flags == hipGraphInstantiateFlagAutoFreeOnLaunch);
    hipGraphExec_t bad;
    CHECK_HIP(hipGraphInstantiateWithFlags(&bad, g, 10), hipErrorInvalidValue);

    unsigned en = 7;
    HIP_OK(hipGraphNodeGetEnabled(x, set, &en));
    CHECK(en == 1);
    HIP_OK(hipGraphNodeSetEnabled(x, set, 0));
    HIP_OK(hipGraphNodeGetEnabled(x, set, &en));
    CHECK(en == 0);
    CHECK_HIP(hipGraphNodeSetEnabled(x, host, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphNodeGetEnabled(x, set, NULL), hipErrorInvalidValue);
    atomic_store(&log_len, 0);
    HIP_OK(hipGraphLaunch(x, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
    check_dev_bytes(d, n, 0x10);
    CHECK(atomic_load(&log_len) == 1);
    HIP_OK(hipGraphNodeSetEnabled(x, set, 1));
    HIP_OK(hipGraphLaunch(x, NULL));
    HIP_OK(hipStreamSynchronize(NULL));
    check_dev_bytes(d, n, 0x20);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
}

static int count_substr(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + strlen(sub), sub))
        n++;
    return n;
}

/* hipGraphDebugDotPrint: one cluster per graph (a child graph's after its parent's), one node
 * statement per node with clr's kind names, one line per edge; file errors are
 * hipErrorOperatingSystem. */
TEST(hipGraphDebugDotPrint_writes_dot)
{
    void *d = NULL;
    static uint8_t host[4096];
    HIP_OK(hipMalloc(&d, 4096));
    hipGraph_t g, child;
    hipGraphNode_t a, b, c, e;
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphCreate(&child, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&a, child, NULL, 0, d, host, 4096, hipMemcpyHostToDevice));
    b = add_memset(g, NULL, 0, d, 1, 7, 4096);
    HIP_OK(hipGraphAddChildGraphNode(&c, g, &b, 1, child));
    HIP_OK(hipGraphAddMemcpyNode1D(&e, g, &c, 1, host, d, 4096, hipMemcpyDeviceToHost));
    add_host(g, &e, 1, 1);

    char path[] = "/tmp/hipkfd-dot-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    HIP_OK(hipGraphDebugDotPrint(g, path, hipGraphDebugDotFlagsVerbose));
    char text[8192] = {0};
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f)
        fclose(f);
    unlink(path);
    CHECK(len > 0 && strncmp(text, "digraph dot {", 13) == 0);
    CHECK(count_substr(text, "subgraph cluster_") == 2);
    CHECK(count_substr(text, "->") == 3);
    CHECK(count_substr(text, "MEMCPY") == 2);
    CHECK(count_substr(text, "HtoD") == 1 && count_substr(text, "DtoH") == 1);
    CHECK(count_substr(text, "MEMSET") == 1 && count_substr(text, "HOST") == 1);

    CHECK_HIP(hipGraphDebugDotPrint(NULL, path, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphDebugDotPrint(g, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGraphDebugDotPrint(g, "", 0), hipErrorOperatingSystem);
    CHECK_HIP(hipGraphDebugDotPrint(g, "/nonexistent-dir/x.dot", 0), hipErrorOperatingSystem);
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipGraphDestroy(child));
    HIP_OK(hipFree(d));
}

/* hipDrvGraphAddMemsetNode / hipDrvGraphAddMemcpyNode: the driver-style parameter structs. */
TEST(hipDrvGraphAdd_memset_memcpy_nodes)
{
    const size_t w = 256, h = 16, pitch = 512;
    void *d = NULL;
    static uint8_t host[256 * 16];
    hipCtx_t ctx = NULL;
    HIP_OK(hipCtxGetCurrent(&ctx));
    CHECK(ctx != NULL);
    HIP_OK(hipMalloc(&d, pitch * h));
    HIP_OK(hipMemset(d, 0, pitch * h));
    hipGraph_t g;
    hipGraphNode_t set, copy;
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_MEMSET_NODE_PARAMS mp = {0};
    mp.dst = d;
    mp.pitch = pitch;
    mp.value = 0x77;
    mp.elementSize = 1;
    mp.width = w;
    mp.height = h;
    CHECK_HIP(hipDrvGraphAddMemsetNode(&set, g, NULL, 0, &mp, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphAddMemsetNode(&set, g, NULL, 0, NULL, ctx), hipErrorInvalidValue);
    HIP_OK(hipDrvGraphAddMemsetNode(&set, g, NULL, 0, &mp, ctx));
    HIP_MEMCPY3D cp;
    memset(&cp, 0, sizeof(cp));
    cp.srcMemoryType = hipMemoryTypeDevice;
    cp.srcDevice = d;
    cp.srcPitch = pitch;
    cp.srcHeight = h;
    cp.dstMemoryType = hipMemoryTypeHost;
    cp.dstHost = host;
    cp.dstPitch = w;
    cp.dstHeight = h;
    cp.WidthInBytes = w;
    cp.Height = h;
    cp.Depth = 1;
    CHECK_HIP(hipDrvGraphAddMemcpyNode(&copy, g, &set, 1, &cp, NULL), hipErrorInvalidValue);
    HIP_OK(hipDrvGraphAddMemcpyNode(&copy, g, &set, 1, &cp, ctx));
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(copy, &t));
    CHECK(t == hipGraphNodeTypeMemcpy);
    hipGraphExec_t x;
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    memset(host, 0, sizeof(host));
    HIP_OK(hipGraphLaunch(x, NULL));
    HIP_OK(hipDeviceSynchronize());
    int bad = 0;
    for (size_t i = 0; i < sizeof(host); i++)
        bad += host[i] != 0x77;
    CHECKF(bad == 0, "%d bytes wrong", bad);
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
}
