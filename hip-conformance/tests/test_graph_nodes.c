/*
 * Graph nodes of issue 39 item 2 and the batch of stream memory operations they run:
 * hipStreamBatchMemOp; batch memory operation nodes (hipGraphAddBatchMemOpNode,
 * hipGraph[Exec]BatchMemOpNode{Get,Set}Params); external semaphore signal and wait nodes
 * (hipGraphAddExternalSemaphores{Signal,Wait}Node and their Get/Set/ExecSetParams); the generic
 * setters hipGraphNodeSetParams / hipGraphExecNodeSetParams; the driver forms
 * hipDrvGraphAddMemFreeNode, hipDrvGraphMemcpyNode{Get,Set}Params,
 * hipDrvGraphExec{Memcpy,Memset}NodeSetParams.
 *
 * Expected codes: clr hip_stream_ops.cpp (ihipBatchMemOperation), hip_graph.cpp
 * (hipGraphAddBatchMemOpNode, ihipGraphNodeSetParams, the external semaphore node calls, the
 * hipDrvGraph* calls); hip-tests catch/unit/graph/{hipGraphAddBatchMemOpNode,
 * hipGraphBatchMemOpNodeSetParams}.cc.
 */
#include "common.h"
#include "extsem.h"

#include "../interop_producer.h"

static uint32_t load32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static uint64_t load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static hipStreamBatchMemOpParams wait32(void *addr, uint32_t v, unsigned cmp)
{
    hipStreamBatchMemOpParams p;
    memset(&p, 0, sizeof p);
    p.waitValue.operation = hipStreamMemOpWaitValue32;
    p.waitValue.address = addr;
    p.waitValue.value = v;
    p.waitValue.flags = cmp;
    return p;
}

static hipStreamBatchMemOpParams wait64(void *addr, uint64_t v, unsigned cmp)
{
    hipStreamBatchMemOpParams p = wait32(addr, 0, cmp);
    p.waitValue.operation = hipStreamMemOpWaitValue64;
    p.waitValue.value64 = v;
    return p;
}

static hipStreamBatchMemOpParams write32(void *addr, uint32_t v)
{
    hipStreamBatchMemOpParams p;
    memset(&p, 0, sizeof p);
    p.writeValue.operation = hipStreamMemOpWriteValue32;
    p.writeValue.address = addr;
    p.writeValue.value = v;
    return p;
}

static hipStreamBatchMemOpParams write64(void *addr, uint64_t v)
{
    hipStreamBatchMemOpParams p = write32(addr, 0);
    p.writeValue.operation = hipStreamMemOpWriteValue64;
    p.writeValue.value64 = v;
    return p;
}

static hipBatchMemOpNodeParams batch_params(hipStreamBatchMemOpParams *ops, unsigned n)
{
    hipBatchMemOpNodeParams p;
    memset(&p, 0, sizeof p);
    HIP_OK(hipCtxGetCurrent(&p.ctx));
    p.count = n;
    p.paramArray = ops;
    return p;
}

/* The ABI of ROCm 7's hip_runtime_api.h. */
TEST(gnode_struct_layouts)
{
    CHECK(sizeof(hipStreamBatchMemOpParams) == 48);
    CHECK(offsetof(hipStreamBatchMemOpParams, waitValue.address) == 8);
    CHECK(offsetof(hipStreamBatchMemOpParams, waitValue.value64) == 16);
    CHECK(offsetof(hipStreamBatchMemOpParams, writeValue.flags) == 24);
    CHECK(offsetof(hipStreamBatchMemOpParams, writeValue.alias) == 32);
    CHECK(offsetof(hipStreamBatchMemOpParams, memoryBarrier.flags) == 4);
    CHECK(sizeof(hipBatchMemOpNodeParams) == 32);
    CHECK(offsetof(hipBatchMemOpNodeParams, paramArray) == 16);
    CHECK(offsetof(hipBatchMemOpNodeParams, flags) == 24);
    CHECK(hipStreamMemOpWaitValue32 == 1 && hipStreamMemOpWriteValue32 == 2 &&
          hipStreamMemOpFlushRemoteWrites == 3 && hipStreamMemOpWaitValue64 == 4 &&
          hipStreamMemOpWriteValue64 == 5 && hipStreamMemOpBarrier == 6);
    CHECK(hipGraphNodeTypeBatchMemOp == 14 && hipGraphNodeTypeCount == 15);
}

/* One batch of waits and writes runs in array order on its stream: held by a host word the test
 * releases, later elements wait for earlier ones (a wait on a word an earlier write of the same
 * batch sets, 32- and 64-bit), and work queued after the batch waits for all of it. */
TEST(gnode_batch_stream_ordered_and_held)
{
    enum { N = 64 * 1024 };
    uint32_t *w = hold_word();
    uint32_t *x32 = NULL;
    uint64_t *x64 = NULL;
    HIP_OK(hipHostMalloc((void **)&x32, 64, 0));
    HIP_OK(hipHostMalloc((void **)&x64, 64, 0));
    x32[0] = x32[1] = 0;
    x64[0] = 0;
    uint8_t *src = NULL, *d = NULL;
    HIP_OK(hipHostMalloc((void **)&src, N, 0));
    pat_fill(src, N, 5);
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize()); /* hipMemset is asynchronous on device memory */
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

    hipStreamBatchMemOpParams ops[6];
    ops[0] = wait32(w, 1, hipStreamWaitValueGte);
    ops[1] = write32(&x32[0], 0xA1B2C3D4u);
    ops[2] = wait32(&x32[0], 0xA1B2C3D4u, hipStreamWaitValueEq);
    ops[3] = write64(x64, 0x1122334455667788ull);
    ops[4] = wait64(x64, 0x1122334455667788ull, hipStreamWaitValueEq);
    ops[5] = write32(&x32[1], 7);
    HIP_OK(hipStreamBatchMemOp(s, 6, ops, 0));
    /* The batch was copied: changing the array now changes nothing. */
    ops[5] = write32(&x32[1], 99);
    HIP_OK(hipMemcpyAsync(d, src, N, hipMemcpyHostToDevice, s));

    usleep(50 * 1000);
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    CHECK(load32(&x32[0]) == 0 && load32(&x32[1]) == 0 && load64(x64) == 0);
    uint8_t *h = xmalloc(N);
    HIP_OK(hipMemcpy(h, d, N, hipMemcpyDeviceToHost));
    CHECK_BYTES(h, N, 0);

    release(w);
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x32[0]) == 0xA1B2C3D4u);
    CHECK(load64(x64) == 0x1122334455667788ull);
    CHECK(load32(&x32[1]) == 7);
    check_dev_pattern(d, N, 5);

    free(h);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(src));
    HIP_OK(hipHostFree(x64));
    HIP_OK(hipHostFree(x32));
    HIP_OK(hipHostFree(w));
}

/* Refused batches queue nothing, not even their valid elements (clr ihipBatchMemOperation's
 * codes; barrier and flush are "not supported" there). */
TEST(gnode_batch_stream_negative)
{
    uint32_t *x = NULL;
    HIP_OK(hipHostMalloc((void **)&x, 64, 0));
    x[0] = 0;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    hipStreamBatchMemOpParams ops[257];
    for (int i = 0; i < 257; i++)
        ops[i] = write32(&x[0], 5);

    CHECK_HIP(hipStreamBatchMemOp(s, 1, NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamBatchMemOp(s, 0, ops, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamBatchMemOp(s, 257, ops, 0), hipErrorInvalidValue);
    CHECK_HIP(hipStreamBatchMemOp(s, 1, ops, 1), hipErrorInvalidValue);

    hipStreamBatchMemOpParams bad[2];
    bad[0] = write32(&x[0], 5);
    memset(&bad[1], 0, sizeof bad[1]);
    bad[1].memoryBarrier.operation = hipStreamMemOpBarrier;
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    bad[1].flushRemoteWrites.operation = hipStreamMemOpFlushRemoteWrites;
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    bad[1] = write32(&x[0], 5);
    bad[1].operation = (hipStreamBatchMemOpType)9;
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    bad[1] = wait32(&x[1], 0, 7); /* no such compare */
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    bad[1] = write32(NULL, 1);
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    int not_hip = 0;
    bad[1] = write32(&not_hip, 1); /* memory the runtime does not know */
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    bad[1] = write64((uint8_t *)x + 4, 1); /* misaligned */
    CHECK_HIP(hipStreamBatchMemOp(s, 2, bad, 0), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(s));
    CHECKF(load32(&x[0]) == 0, "a refused batch wrote its first element (0x%x)", load32(&x[0]));
    CHECK(not_hip == 0);

    HIP_OK(hipStreamBatchMemOp(s, 256, ops, 0));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x[0]) == 5);
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipHostFree(x));
}

/* A batch node runs its elements in order on the launch stream; GetParams reports them (the
 * node's copy); SetParams changes what the next instantiation does, ExecSetParams what the next
 * launch of the executable graph does; held by a word, the graph's later nodes wait. */
TEST(gnode_batch_node_launch_get_set)
{
    enum { N = 32 * 1024 };
    uint32_t *w = hold_word();
    uint32_t *x = NULL;
    HIP_OK(hipHostMalloc((void **)&x, 64, 0));
    uint64_t *x64 = (uint64_t *)(x + 2);
    x[0] = x[1] = 0;
    *x64 = 0;
    uint8_t *src = NULL, *dst = NULL;
    HIP_OK(hipHostMalloc((void **)&src, N, 0));
    HIP_OK(hipHostMalloc((void **)&dst, N, 0));
    pat_fill(src, N, 21);
    memset(dst, 0, N);
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

    hipStreamBatchMemOpParams ops[3] = {wait32(w, 1, hipStreamWaitValueGte), write32(&x[0], 0x11),
                                        write64(x64, 0xAABBCCDD00112233ull)};
    hipBatchMemOpNodeParams bp = batch_params(ops, 3);
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t batch, copy;
    HIP_OK(hipGraphAddBatchMemOpNode(&batch, g, NULL, 0, &bp));
    HIP_OK(hipGraphAddMemcpyNode1D(&copy, g, &batch, 1, dst, src, N, hipMemcpyHostToHost));
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(batch, &t));
    CHECK(t == hipGraphNodeTypeBatchMemOp);

    /* GetParams round-trips (the elements by value: the node keeps its own copy). */
    hipStreamBatchMemOpParams saved[3];
    memcpy(saved, ops, sizeof ops);
    ops[1] = write32(&x[0], 0xEE);
    hipBatchMemOpNodeParams out;
    memset(&out, 0, sizeof out);
    HIP_OK(hipGraphBatchMemOpNodeGetParams(batch, &out));
    CHECK(out.ctx == bp.ctx && out.count == 3 && out.flags == 0 && out.paramArray != NULL);
    if (out.paramArray)
        CHECK(memcmp(out.paramArray, saved, sizeof saved) == 0);

    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg, s));
    usleep(30 * 1000);
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    CHECK(load32(&x[0]) == 0 && load64(x64) == 0);
    CHECK_BYTES(dst, N, 0);
    release(w);
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x[0]) == 0x11);
    CHECK(load64(x64) == 0xAABBCCDD00112233ull);
    CHECK_PATTERN(dst, N, 21);

    /* ExecSetParams: the executable graph writes new values; the graph node keeps its own. */
    hipStreamBatchMemOpParams ops2[2] = {write32(&x[0], 0x22), write32(&x[1], 0x33)};
    hipBatchMemOpNodeParams bp2 = batch_params(ops2, 2);
    HIP_OK(hipGraphExecBatchMemOpNodeSetParams(xg, batch, &bp2));
    HIP_OK(hipGraphLaunch(xg, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x[0]) == 0x22 && load32(&x[1]) == 0x33);
    HIP_OK(hipGraphBatchMemOpNodeGetParams(batch, &out));
    CHECK(out.count == 3);

    /* SetParams on the graph: a new instantiation runs the new elements, the old one does not. */
    hipStreamBatchMemOpParams ops3[1] = {write32(&x[1], 0x44)};
    hipBatchMemOpNodeParams bp3 = batch_params(ops3, 1);
    HIP_OK(hipGraphBatchMemOpNodeSetParams(batch, &bp3));
    HIP_OK(hipGraphBatchMemOpNodeGetParams(batch, &out));
    CHECK(out.count == 1 && out.paramArray && out.paramArray[0].writeValue.value == 0x44);
    x[0] = 0;
    HIP_OK(hipGraphLaunch(xg, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x[0]) == 0x22 && load32(&x[1]) == 0x33);
    hipGraphExec_t xg2;
    HIP_OK(hipGraphInstantiate(&xg2, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg2, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x[1]) == 0x44);

    HIP_OK(hipGraphExecDestroy(xg2));
    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipHostFree(dst));
    HIP_OK(hipHostFree(src));
    HIP_OK(hipHostFree(x));
    HIP_OK(hipHostFree(w));
}

/* Bad arguments of the batch node calls (clr hipGraphAddBatchMemOpNode and friends; hip-tests
 * NegativeTsts); a failed SetParams leaves the node as it was. */
TEST(gnode_batch_node_negative)
{
    uint32_t *x = NULL;
    HIP_OK(hipHostMalloc((void **)&x, 64, 0));
    hipStreamBatchMemOpParams ops[2] = {write32(&x[0], 1), wait32(&x[0], 1, hipStreamWaitValueEq)};
    hipBatchMemOpNodeParams bp = batch_params(ops, 2);
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t n, empty;
    HIP_OK(hipGraphAddEmptyNode(&empty, g, NULL, 0));

    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, NULL, NULL, 0, &bp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddBatchMemOpNode(NULL, g, NULL, 0, &bp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 1, &bp), hipErrorInvalidValue);
    hipBatchMemOpNodeParams b = bp;
    b.ctx = NULL;
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &b), hipErrorInvalidValue);
    b = bp;
    b.count = 0;
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &b), hipErrorInvalidValue);
    b.count = 257;
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &b), hipErrorInvalidValue);
    b = bp;
    b.flags = 1;
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &b), hipErrorInvalidValue);
    b = bp;
    b.paramArray = NULL;
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &b), hipErrorInvalidValue);
    hipStreamBatchMemOpParams barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.memoryBarrier.operation = hipStreamMemOpBarrier;
    b = batch_params(&barrier, 1);
    CHECK_HIP(hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &b), hipErrorInvalidValue);
    size_t count = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &count));
    CHECK(count == 1);

    HIP_OK(hipGraphAddBatchMemOpNode(&n, g, &empty, 1, &bp));
    hipBatchMemOpNodeParams out;
    CHECK_HIP(hipGraphBatchMemOpNodeGetParams(NULL, &out), hipErrorInvalidValue);
    CHECK_HIP(hipGraphBatchMemOpNodeGetParams(n, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphBatchMemOpNodeGetParams(empty, &out), hipErrorInvalidValue);
    CHECK_HIP(hipGraphBatchMemOpNodeSetParams(NULL, &bp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphBatchMemOpNodeSetParams(n, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphBatchMemOpNodeSetParams(empty, &bp), hipErrorInvalidValue);
    b = bp;
    b.count = 400;
    CHECK_HIP(hipGraphBatchMemOpNodeSetParams(n, &b), hipErrorInvalidValue);
    HIP_OK(hipGraphBatchMemOpNodeSetParams(n, &bp)); /* unchanged parameters */
    HIP_OK(hipGraphBatchMemOpNodeGetParams(n, &out));
    CHECK(out.count == 2);

    /* The generic calls: no batch member in hipGraphNodeParams' union (clr: invalid value). */
    hipGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeBatchMemOp;
    hipGraphNode_t other;
    CHECK_HIP(hipGraphAddNode(&other, g, NULL, 0, &np), hipErrorInvalidValue);
    CHECK_HIP(hipGraphNodeSetParams(n, &np), hipErrorInvalidValue);

    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    CHECK_HIP(hipGraphExecBatchMemOpNodeSetParams(NULL, n, &bp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecBatchMemOpNodeSetParams(xg, NULL, &bp), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecBatchMemOpNodeSetParams(xg, n, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecBatchMemOpNodeSetParams(xg, empty, &bp), hipErrorInvalidValue);
    hipGraphNode_t late;
    HIP_OK(hipGraphAddBatchMemOpNode(&late, g, NULL, 0, &bp));
    CHECK_HIP(hipGraphExecBatchMemOpNodeSetParams(xg, late, &bp), hipErrorInvalidValue);
    x[0] = 0;
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(load32(&x[0]) == 1);

    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipHostFree(x));
}

/* hipStreamBatchMemOp on a capturing stream is recorded as a batch node; it runs at launch. */
TEST(gnode_batch_captured)
{
    uint32_t *x = NULL;
    HIP_OK(hipHostMalloc((void **)&x, 64, 0));
    x[0] = 0;
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    hipStreamBatchMemOpParams ops[1] = {write32(&x[0], 0x5150)};
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    HIP_OK(hipStreamBatchMemOp(s, 1, ops, 0));
    hipGraph_t g = NULL;
    HIP_OK(hipStreamEndCapture(s, &g));
    CHECK(load32(&x[0]) == 0);
    hipGraphNode_t nodes[2];
    size_t n = 2;
    HIP_OK(hipGraphGetNodes(g, nodes, &n));
    REQUIRE(n == 1);
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(nodes[0], &t));
    CHECK(t == hipGraphNodeTypeBatchMemOp);
    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg, s));
    HIP_OK(hipStreamSynchronize(s));
    CHECK(load32(&x[0]) == 0x5150);
    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipHostFree(x));
}

/* ---- external semaphore nodes ---- */

static hipExternalSemaphoreWaitNodeParams wait_node(hipExternalSemaphore_t *s, hipExternalSemaphoreWaitParams *p,
                                                    unsigned n)
{
    hipExternalSemaphoreWaitNodeParams w = {s, p, n};
    return w;
}

static hipExternalSemaphoreSignalNodeParams signal_node(hipExternalSemaphore_t *s,
                                                        hipExternalSemaphoreSignalParams *p, unsigned n)
{
    hipExternalSemaphoreSignalNodeParams w = {s, p, n};
    return w;
}

/* wait(A at 5) → copy → signal(B to 9), launched: nothing runs before the producer signals A;
 * then the bytes arrive and B reaches 9. Exec*SetParams move the points of the next launch
 * (wait for 6, signal 11); Get/SetParams on the graph round-trip (the node's own arrays). */
TEST(gnode_extsem_wait_copy_signal)
{
    enum { N = 256 * 1024 };
    struct producer p = producer_open(0);
    int fa, fb;
    uint32_t ha = psync_create(&p, &fa), hb = psync_create(&p, &fb);
    hipExternalSemaphore_t sa = import_sem(fa, 1), sb = import_sem(fb, 1);
    uint8_t *src = NULL, *d = NULL;
    HIP_OK(hipHostMalloc((void **)&src, N, 0));
    pat_fill(src, N, 31);
    HIP_OK(hipMalloc((void **)&d, N));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize()); /* hipMemset is asynchronous on device memory */
    hipStream_t s;
    HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

    hipExternalSemaphoreWaitParams wp;
    hipExternalSemaphoreSignalParams sp;
    memset(&wp, 0, sizeof wp);
    memset(&sp, 0, sizeof sp);
    wp.params.fence.value = 5;
    sp.params.fence.value = 9;
    hipExternalSemaphore_t wa[1] = {sa}, sbv[1] = {sb};
    hipExternalSemaphoreWaitNodeParams wn = wait_node(wa, &wp, 1);
    hipExternalSemaphoreSignalNodeParams sn = signal_node(sbv, &sp, 1);
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t wnode, copy, snode;
    HIP_OK(hipGraphAddExternalSemaphoresWaitNode(&wnode, g, NULL, 0, &wn));
    HIP_OK(hipGraphAddMemcpyNode1D(&copy, g, &wnode, 1, d, src, N, hipMemcpyHostToDevice));
    HIP_OK(hipGraphAddExternalSemaphoresSignalNode(&snode, g, &copy, 1, &sn));
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(wnode, &t));
    CHECK(t == hipGraphNodeTypeExtSemaphoreWait);
    HIP_OK(hipGraphNodeGetType(snode, &t));
    CHECK(t == hipGraphNodeTypeExtSemaphoreSignal);

    /* GetParams: the node's copies of the arrays, the same contents. */
    wa[0] = NULL;
    sp.params.fence.value = 1234;
    hipExternalSemaphoreSignalNodeParams so;
    memset(&so, 0, sizeof so);
    HIP_OK(hipGraphExternalSemaphoresSignalNodeGetParams(snode, &so));
    REQUIRE(so.numExtSems == 1 && so.extSemArray != NULL && so.paramsArray != NULL);
    CHECK(so.extSemArray[0] == sb && so.paramsArray[0].params.fence.value == 9);
    hipExternalSemaphoreWaitNodeParams wo;
    memset(&wo, 0, sizeof wo);
    HIP_OK(hipGraphExternalSemaphoresWaitNodeGetParams(wnode, &wo));
    REQUIRE(wo.numExtSems == 1 && wo.extSemArray != NULL && wo.paramsArray != NULL);
    CHECK(wo.extSemArray[0] == sa && wo.paramsArray[0].params.fence.value == 5);
    wa[0] = sa;
    sp.params.fence.value = 9;

    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg, s));
    psync_signal(&p, ha, 4); /* not enough */
    usleep(50 * 1000);
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    CHECK(psync_point(&p, hb) == 0);
    uint8_t *h = xmalloc(N);
    HIP_OK(hipMemcpy(h, d, N, hipMemcpyDeviceToHost));
    CHECK_BYTES(h, N, 0);
    psync_signal(&p, ha, 5);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(d, N, 31);
    CHECK(psync_wait(&p, hb, 9, 5000) == 0);
    CHECK(psync_point(&p, hb) == 9);

    /* The executable graph's next launch waits for A at 6 and moves B to 11. */
    wp.params.fence.value = 6;
    sp.params.fence.value = 11;
    HIP_OK(hipGraphExecExternalSemaphoresWaitNodeSetParams(xg, wnode, &wn));
    HIP_OK(hipGraphExecExternalSemaphoresSignalNodeSetParams(xg, snode, &sn));
    HIP_OK(hipMemset(d, 0, N));
    HIP_OK(hipDeviceSynchronize()); /* hipMemset is asynchronous on device memory */
    HIP_OK(hipGraphLaunch(xg, s));
    usleep(30 * 1000);
    CHECK_HIP(hipStreamQuery(s), hipErrorNotReady);
    CHECK(psync_point(&p, hb) == 9);
    psync_signal(&p, ha, 6);
    HIP_OK(hipStreamSynchronize(s));
    check_dev_pattern(d, N, 31);
    CHECK(psync_point(&p, hb) == 11);
    /* ... while the graph's nodes keep theirs. */
    HIP_OK(hipGraphExternalSemaphoresSignalNodeGetParams(snode, &so));
    CHECK(so.numExtSems == 1 && so.paramsArray[0].params.fence.value == 9);

    /* SetParams on the graph, seen by GetParams. */
    sp.params.fence.value = 15;
    HIP_OK(hipGraphExternalSemaphoresSignalNodeSetParams(snode, &sn));
    HIP_OK(hipGraphExternalSemaphoresSignalNodeGetParams(snode, &so));
    CHECK(so.numExtSems == 1 && so.paramsArray[0].params.fence.value == 15);
    wp.params.fence.value = 7;
    HIP_OK(hipGraphExternalSemaphoresWaitNodeSetParams(wnode, &wn));
    HIP_OK(hipGraphExternalSemaphoresWaitNodeGetParams(wnode, &wo));
    CHECK(wo.numExtSems == 1 && wo.paramsArray[0].params.fence.value == 7);
    hipGraphExec_t xg2;
    HIP_OK(hipGraphInstantiate(&xg2, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg2, s));
    psync_signal(&p, ha, 7);
    HIP_OK(hipStreamSynchronize(s));
    CHECK(psync_point(&p, hb) == 15);

    free(h);
    HIP_OK(hipGraphExecDestroy(xg2));
    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipDestroyExternalSemaphore(sa));
    HIP_OK(hipDestroyExternalSemaphore(sb));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
    HIP_OK(hipHostFree(src));
    producer_close(&p);
}

/* Bad arguments and wrong node types of the semaphore node calls; a semaphore destroyed after
 * the node was made refuses the launch, which queues nothing. hipGraphAddNode adds them too. */
TEST(gnode_extsem_negative)
{
    struct producer p = producer_open(0);
    int fd, fd2;
    uint32_t h = psync_create(&p, &fd);
    psync_create(&p, &fd2);
    hipExternalSemaphore_t sem = import_sem(fd, 0), sem2 = import_sem(fd2, 1);
    hipExternalSemaphoreSignalParams sp;
    hipExternalSemaphoreWaitParams wp;
    memset(&sp, 0, sizeof sp);
    memset(&wp, 0, sizeof wp);
    hipExternalSemaphore_t arr[1] = {sem};
    hipExternalSemaphoreSignalNodeParams sn = signal_node(arr, &sp, 1);
    hipExternalSemaphoreWaitNodeParams wn = wait_node(arr, &wp, 1);
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t n, wnode, empty;
    HIP_OK(hipGraphAddEmptyNode(&empty, g, NULL, 0));

    CHECK_HIP(hipGraphAddExternalSemaphoresSignalNode(NULL, g, NULL, 0, &sn), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddExternalSemaphoresSignalNode(&n, NULL, NULL, 0, &sn), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 1, &wn), hipErrorInvalidValue);
    CHECK_HIP(hipGraphAddExternalSemaphoresWaitNode(&n, g, NULL, 0, NULL), hipErrorInvalidValue);
    hipExternalSemaphore_t nul[1] = {NULL};
    hipExternalSemaphoreSignalNodeParams bad = signal_node(nul, &sp, 1);
    CHECK_HIP(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, &bad), hipErrorInvalidValue);
    bad = signal_node(NULL, &sp, 1);
    CHECK_HIP(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, &bad), hipErrorInvalidValue);
    sp.flags = 1;
    CHECK_HIP(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, &sn), hipErrorInvalidValue);
    sp.flags = 0;
    size_t count = 0;
    HIP_OK(hipGraphGetNodes(g, NULL, &count));
    CHECK(count == 1);

    HIP_OK(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, &sn));
    HIP_OK(hipGraphAddExternalSemaphoresWaitNode(&wnode, g, NULL, 0, &wn));
    hipExternalSemaphoreSignalNodeParams so;
    hipExternalSemaphoreWaitNodeParams wo;
    CHECK_HIP(hipGraphExternalSemaphoresSignalNodeGetParams(n, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresSignalNodeGetParams(NULL, &so), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresSignalNodeGetParams(wnode, &so), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresWaitNodeGetParams(n, &wo), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresWaitNodeGetParams(empty, &wo), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresSignalNodeSetParams(wnode, &sn), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresSignalNodeSetParams(n, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExternalSemaphoresWaitNodeSetParams(empty, &wn), hipErrorInvalidValue);
    /* A refused SetParams keeps the node's semaphores. */
    CHECK_HIP(hipGraphExternalSemaphoresSignalNodeSetParams(n, &bad), hipErrorInvalidValue);
    HIP_OK(hipGraphExternalSemaphoresSignalNodeGetParams(n, &so));
    CHECK(so.numExtSems == 1 && so.extSemArray[0] == sem);

    /* The generic adder: external semaphore nodes of hipGraphNodeParams' union. */
    hipGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeExtSemaphoreSignal;
    np.extSemSignal = sn;
    hipGraphNode_t gen;
    HIP_OK(hipGraphAddNode(&gen, g, NULL, 0, &np));
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(gen, &t));
    CHECK(t == hipGraphNodeTypeExtSemaphoreSignal);
    HIP_OK(hipGraphDestroyNode(gen));
    HIP_OK(hipGraphDestroyNode(wnode));

    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    CHECK_HIP(hipGraphExecExternalSemaphoresSignalNodeSetParams(NULL, n, &sn), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecExternalSemaphoresSignalNodeSetParams(xg, empty, &sn), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecExternalSemaphoresSignalNodeSetParams(xg, n, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecExternalSemaphoresWaitNodeSetParams(xg, n, &wn), hipErrorInvalidValue);

    /* The executable graph signals sem2 (timeline, point 3) instead, then sem is destroyed: the
     * graph still runs; once sem2 is destroyed too, launches are refused and queue nothing. */
    hipExternalSemaphore_t arr2[1] = {sem2};
    sp.params.fence.value = 3;
    hipExternalSemaphoreSignalNodeParams sn2 = signal_node(arr2, &sp, 1);
    HIP_OK(hipGraphExecExternalSemaphoresSignalNodeSetParams(xg, n, &sn2));
    HIP_OK(hipDestroyExternalSemaphore(sem));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(psync_point(&p, h) == 0);
    HIP_OK(hipDestroyExternalSemaphore(sem2));
    CHECK_HIP(hipGraphLaunch(xg, 0), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(0));

    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    producer_close(&p);
}

/* ---- hipGraphNodeSetParams / hipGraphExecNodeSetParams ---- */

/* The generic setters change what the node (next instantiation) or the executable graph (next
 * launch) does, through each type's setter; bytes show it. */
TEST(gnode_generic_set_params_bytes)
{
    enum { N = 64 * 1024 };
    uint8_t *a = NULL, *b = NULL, *h = NULL;
    HIP_OK(hipMalloc((void **)&a, N));
    HIP_OK(hipMalloc((void **)&b, N));
    HIP_OK(hipHostMalloc((void **)&h, N, 0));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipMemsetParams mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = a;
    mp.elementSize = 1;
    mp.width = N;
    mp.height = 1;
    mp.value = 0x11;
    hipGraphNode_t set, copy;
    HIP_OK(hipGraphAddMemsetNode(&set, g, NULL, 0, &mp));
    HIP_OK(hipGraphAddMemcpyNode1D(&copy, g, &set, 1, h, a, N, hipMemcpyDeviceToHost));

    hipGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeMemset;
    np.memset = mp;
    np.memset.value = 0x22;
    HIP_OK(hipGraphNodeSetParams(set, &np));
    hipMemsetParams got;
    HIP_OK(hipGraphMemsetNodeGetParams(set, &got));
    CHECK(got.value == 0x22);
    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK_BYTES(h, N, 0x22);

    /* Exec: a fill of 0x33, then the copy reads b (device to host, the same direction). */
    np.memset.value = 0x33;
    HIP_OK(hipGraphExecNodeSetParams(xg, set, &np));
    HIP_OK(hipMemset(b, 0x44, N));
    hipGraphNodeParams cp;
    memset(&cp, 0, sizeof cp);
    cp.type = hipGraphNodeTypeMemcpy;
    hipPitchedPtr sp = {b, N, N, 1}, dp = {h, N, N, 1};
    hipExtent ext = {N, 1, 1};
    cp.memcpy.copyParams.srcPtr = sp;
    cp.memcpy.copyParams.dstPtr = dp;
    cp.memcpy.copyParams.extent = ext;
    cp.memcpy.copyParams.kind = hipMemcpyDeviceToHost;
    HIP_OK(hipGraphExecNodeSetParams(xg, copy, &cp));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK_BYTES(h, N, 0x44);
    check_dev_bytes(a, N, 0x33);
    /* A copy of another direction is refused in the executable graph (clr). */
    cp.memcpy.copyParams.kind = hipMemcpyDefault;
    CHECK_HIP(hipGraphExecNodeSetParams(xg, copy, &cp), hipErrorInvalidValue);
    /* The graph's nodes kept their parameters: a new instantiation fills 0x22 and copies a. */
    hipGraphExec_t xg2;
    HIP_OK(hipGraphInstantiate(&xg2, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg2, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK_BYTES(h, N, 0x22);

    HIP_OK(hipGraphExecDestroy(xg2));
    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipFree(b));
    HIP_OK(hipFree(a));
}

static void count_up(void *p) { atomic_fetch_add((atomic_int *)p, 1); }
static void count_ten(void *p) { atomic_fetch_add((atomic_int *)p, 10); }

/* The generic setters' errors (clr ihipGraphNodeSetParams): a type other than the node's, types
 * without a setter, memory nodes (not supported), a host node without userData, null events; the
 * host, event and child graph cases. */
TEST(gnode_generic_set_params_errors)
{
    atomic_int counter = 0;
    hipGraph_t g, child, child2;
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphCreate(&child, 0));
    HIP_OK(hipGraphCreate(&child2, 0));
    hipGraphNode_t host, empty, ev, cn, c1;
    hipHostNodeParams hp = {count_up, &counter};
    HIP_OK(hipGraphAddHostNode(&host, g, NULL, 0, &hp));
    HIP_OK(hipGraphAddEmptyNode(&empty, g, NULL, 0));
    hipEvent_t e1, e2;
    HIP_OK(hipEventCreate(&e1));
    HIP_OK(hipEventCreate(&e2));
    HIP_OK(hipGraphAddEventRecordNode(&ev, g, NULL, 0, e1));
    HIP_OK(hipGraphAddHostNode(&c1, child, NULL, 0, &hp));
    HIP_OK(hipGraphAddChildGraphNode(&cn, g, NULL, 0, child));

    hipGraphNodeParams np;
    memset(&np, 0, sizeof np);
    CHECK_HIP(hipGraphNodeSetParams(NULL, &np), hipErrorInvalidValue);
    CHECK_HIP(hipGraphNodeSetParams(host, NULL), hipErrorInvalidValue);
    np.type = hipGraphNodeTypeEmpty;
    CHECK_HIP(hipGraphNodeSetParams(empty, &np), hipErrorInvalidValue);
    np.type = hipGraphNodeTypeMemAlloc;
    CHECK_HIP(hipGraphNodeSetParams(host, &np), hipErrorNotSupported);
    np.type = hipGraphNodeTypeMemFree;
    CHECK_HIP(hipGraphNodeSetParams(host, &np), hipErrorNotSupported);
    np.type = (hipGraphNodeType)77;
    CHECK_HIP(hipGraphNodeSetParams(host, &np), hipErrorInvalidValue);
    np.type = hipGraphNodeTypeHost;
    np.host.fn = count_ten;
    np.host.userData = NULL;
    CHECK_HIP(hipGraphNodeSetParams(host, &np), hipErrorInvalidValue);
    np.host.userData = &counter;
    CHECK_HIP(hipGraphNodeSetParams(empty, &np), hipErrorInvalidValue); /* not a host node */
    HIP_OK(hipGraphNodeSetParams(host, &np));
    hipHostNodeParams hg;
    HIP_OK(hipGraphHostNodeGetParams(host, &hg));
    CHECK(hg.fn == count_ten && hg.userData == &counter);

    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeEventRecord;
    CHECK_HIP(hipGraphNodeSetParams(ev, &np), hipErrorInvalidValue);
    np.eventRecord.event = e2;
    HIP_OK(hipGraphNodeSetParams(ev, &np));
    hipEvent_t eo = NULL;
    HIP_OK(hipGraphEventRecordNodeGetEvent(ev, &eo));
    CHECK(eo == e2);
    np.type = hipGraphNodeTypeWaitEvent;
    CHECK_HIP(hipGraphNodeSetParams(ev, &np), hipErrorInvalidValue);

    /* A child graph node takes a copy of the new graph; its own graph is refused (clr: unknown). */
    hipGraphNode_t c2a, c2b;
    HIP_OK(hipGraphAddHostNode(&c2a, child2, NULL, 0, &hp));
    HIP_OK(hipGraphAddHostNode(&c2b, child2, &c2a, 1, &hp));
    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeGraph;
    np.graph.graph = g;
    CHECK_HIP(hipGraphNodeSetParams(cn, &np), hipErrorUnknown);
    np.graph.graph = child2;
    HIP_OK(hipGraphNodeSetParams(cn, &np));
    hipGraph_t inner = NULL;
    HIP_OK(hipGraphChildGraphNodeGetGraph(cn, &inner));
    size_t n = 0;
    HIP_OK(hipGraphGetNodes(inner, NULL, &n));
    CHECK(inner != child2 && n == 2);

    /* Launch: the host node adds 10, the child graph's two host nodes 1 each. */
    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(atomic_load(&counter) == 12);

    /* Exec: the same rules, plus an executable graph that lacks the node. */
    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeHost;
    np.host.fn = count_up;
    np.host.userData = &counter;
    CHECK_HIP(hipGraphExecNodeSetParams(NULL, host, &np), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecNodeSetParams(xg, NULL, &np), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecNodeSetParams(xg, host, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipGraphExecNodeSetParams(xg, c1, &np), hipErrorInvalidValue); /* not in xg */
    np.type = hipGraphNodeTypeMemAlloc;
    CHECK_HIP(hipGraphExecNodeSetParams(xg, host, &np), hipErrorNotSupported);
    np.type = hipGraphNodeTypeHost;
    HIP_OK(hipGraphExecNodeSetParams(xg, host, &np));
    np.type = hipGraphNodeTypeGraph;
    np.graph.graph = child; /* one node where two were instantiated */
    CHECK_HIP(hipGraphExecNodeSetParams(xg, cn, &np), hipErrorInvalidValue);
    atomic_store(&counter, 0);
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(atomic_load(&counter) == 3);

    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipGraphDestroy(child));
    HIP_OK(hipGraphDestroy(child2));
    HIP_OK(hipEventDestroy(e1));
    HIP_OK(hipEventDestroy(e2));
}

/* The generic setters on external semaphore nodes (clr: the typed setters). */
TEST(gnode_generic_set_params_extsem)
{
    struct producer p = producer_open(0);
    int fd;
    uint32_t h = psync_create(&p, &fd);
    hipExternalSemaphore_t sem = import_sem(fd, 1);
    hipExternalSemaphoreSignalParams sp;
    memset(&sp, 0, sizeof sp);
    sp.params.fence.value = 2;
    hipExternalSemaphore_t arr[1] = {sem};
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t n;
    hipExternalSemaphoreSignalNodeParams sn = signal_node(arr, &sp, 1);
    HIP_OK(hipGraphAddExternalSemaphoresSignalNode(&n, g, NULL, 0, &sn));
    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));

    hipExternalSemaphoreSignalParams sp2;
    memset(&sp2, 0, sizeof sp2);
    sp2.params.fence.value = 4;
    hipGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = hipGraphNodeTypeExtSemaphoreWait;
    CHECK_HIP(hipGraphExecNodeSetParams(xg, n, &np), hipErrorInvalidValue);
    np.type = hipGraphNodeTypeExtSemaphoreSignal;
    np.extSemSignal = signal_node(arr, &sp2, 1);
    HIP_OK(hipGraphExecNodeSetParams(xg, n, &np));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK(psync_point(&p, h) == 4);
    sp2.params.fence.value = 6;
    HIP_OK(hipGraphNodeSetParams(n, &np));
    hipExternalSemaphoreSignalNodeParams so;
    HIP_OK(hipGraphExternalSemaphoresSignalNodeGetParams(n, &so));
    CHECK(so.numExtSems == 1 && so.paramsArray[0].params.fence.value == 6);

    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipDestroyExternalSemaphore(sem));
    producer_close(&p);
}

/* ---- driver forms ---- */

static HIP_MEMCPY3D drv_copy_dh(void *dst_host, const void *src_dev, size_t n)
{
    HIP_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = hipMemoryTypeDevice;
    c.srcDevice = (hipDeviceptr_t)src_dev;
    c.srcPitch = n;
    c.srcHeight = 1;
    c.dstMemoryType = hipMemoryTypeHost;
    c.dstHost = dst_host;
    c.dstPitch = n;
    c.dstHeight = 1;
    c.WidthInBytes = n;
    c.Height = 1;
    c.Depth = 1;
    return c;
}

/* Whether two HIP_MEMCPY3D name the same copy, field by field (not their padding). */
static int drv_same(const HIP_MEMCPY3D *a, const HIP_MEMCPY3D *b)
{
    return a->srcXInBytes == b->srcXInBytes && a->srcY == b->srcY && a->srcZ == b->srcZ &&
           a->srcLOD == b->srcLOD && a->srcMemoryType == b->srcMemoryType && a->srcHost == b->srcHost &&
           a->srcDevice == b->srcDevice && a->srcArray == b->srcArray && a->srcPitch == b->srcPitch &&
           a->srcHeight == b->srcHeight && a->dstXInBytes == b->dstXInBytes && a->dstY == b->dstY &&
           a->dstZ == b->dstZ && a->dstLOD == b->dstLOD && a->dstMemoryType == b->dstMemoryType &&
           a->dstHost == b->dstHost && a->dstDevice == b->dstDevice && a->dstArray == b->dstArray &&
           a->dstPitch == b->dstPitch && a->dstHeight == b->dstHeight && a->WidthInBytes == b->WidthInBytes &&
           a->Height == b->Height && a->Depth == b->Depth;
}

/* hipDrvGraphMemcpyNodeGetParams round-trips a driver copy node; hipDrvGraphMemcpyNodeSetParams
 * and hipDrvGraphExecMemcpyNodeSetParams change the bytes copied; hipDrvGraphExecMemsetNode-
 * SetParams the bytes filled. A copy node made by hipGraphAddMemcpyNode1D reads back as an
 * equivalent HIP_MEMCPY3D. */
TEST(gnode_drv_memcpy_memset_params)
{
    enum { N = 16 * 1024 };
    uint8_t *a = dev_pattern(N, 41), *b = dev_pattern(N, 42), *h = NULL;
    HIP_OK(hipHostMalloc((void **)&h, N, 0));
    hipCtx_t ctx = NULL;
    HIP_OK(hipCtxGetCurrent(&ctx));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipGraphNode_t copy, set, one_d;
    HIP_MEMCPY3D cp = drv_copy_dh(h, a, N);
    HIP_OK(hipDrvGraphAddMemcpyNode(&copy, g, NULL, 0, &cp, ctx));
    HIP_MEMCPY3D out;
    memset(&out, 0xCD, sizeof out);
    HIP_OK(hipDrvGraphMemcpyNodeGetParams(copy, &out));
    CHECK(drv_same(&out, &cp));

    HIP_MEMCPY3D cp2 = drv_copy_dh(h, b, N);
    HIP_OK(hipDrvGraphMemcpyNodeSetParams(copy, &cp2));
    HIP_OK(hipDrvGraphMemcpyNodeGetParams(copy, &out));
    CHECK(drv_same(&out, &cp2));
    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    memset(h, 0, N);
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK_PATTERN(h, N, 42);
    HIP_OK(hipDrvGraphExecMemcpyNodeSetParams(xg, copy, &cp, ctx));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK_PATTERN(h, N, 41);
    HIP_OK(hipGraphExecDestroy(xg));

    /* A 1D copy node, read back in the driver form and set from it, copies the same bytes. */
    uint8_t *h2 = NULL;
    HIP_OK(hipHostMalloc((void **)&h2, N, 0));
    memset(h2, 0, N);
    HIP_OK(hipGraphAddMemcpyNode1D(&one_d, g, NULL, 0, h2, b, N, hipMemcpyDeviceToHost));
    HIP_OK(hipDrvGraphMemcpyNodeGetParams(one_d, &out));
    CHECK(out.srcDevice == (hipDeviceptr_t)b && out.dstDevice == (hipDeviceptr_t)h2 && out.WidthInBytes == N &&
          out.Height == 1 && out.Depth == 1);
    HIP_OK(hipDrvGraphMemcpyNodeSetParams(one_d, &out));

    /* A memset node in the driver form (ROCm 7: hipMemsetParams), changed in the executable. */
    hipMemsetParams mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = a;
    mp.elementSize = 4;
    mp.width = N / 4;
    mp.height = 1;
    mp.value = 0x01020304;
    HIP_OK(hipGraphAddMemsetNode(&set, g, &copy, 1, &mp));
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    mp.value = 0x0A0B0C0D;
    HIP_OK(hipDrvGraphExecMemsetNodeSetParams(xg, set, &mp, ctx));
    HIP_OK(hipGraphLaunch(xg, 0));
    HIP_OK(hipStreamSynchronize(0));
    CHECK_PATTERN(h2, N, 42);
    uint32_t *words = xmalloc(N);
    HIP_OK(hipMemcpy(words, a, N, hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N / 4; i++)
        bad += words[i] != 0x0A0B0C0Du;
    CHECKF(bad == 0, "%d words not filled by the updated memset", bad);
    free(words);

    /* Errors (clr: invalid value). */
    CHECK_HIP(hipDrvGraphMemcpyNodeGetParams(NULL, &out), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphMemcpyNodeGetParams(copy, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphMemcpyNodeGetParams(set, &out), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphMemcpyNodeSetParams(copy, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphMemcpyNodeSetParams(set, &cp), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphExecMemcpyNodeSetParams(NULL, copy, &cp, ctx), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphExecMemcpyNodeSetParams(xg, set, &cp, ctx), hipErrorInvalidValue);
    HIP_MEMCPY3D empty;
    memset(&empty, 0, sizeof empty);
    CHECK_HIP(hipDrvGraphExecMemcpyNodeSetParams(xg, copy, &empty, ctx), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphExecMemsetNodeSetParams(NULL, set, &mp, ctx), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphExecMemsetNodeSetParams(xg, set, NULL, ctx), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphExecMemsetNodeSetParams(xg, copy, &mp, ctx), hipErrorInvalidValue);
    mp.elementSize = 3;
    CHECK_HIP(hipDrvGraphExecMemsetNodeSetParams(xg, set, &mp, ctx), hipErrorInvalidValue);

    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipHostFree(h2));
    HIP_OK(hipHostFree(h));
    HIP_OK(hipFree(a));
    HIP_OK(hipFree(b));
}

/* hipDrvGraphAddMemFreeNode frees the memory of an allocation node (as hipGraphAddMemFreeNode). */
TEST(gnode_drv_mem_free_node)
{
    const size_t n = 1 * MiB;
    uint8_t *h = NULL;
    HIP_OK(hipHostMalloc((void **)&h, n, 0));
    hipGraph_t g;
    HIP_OK(hipGraphCreate(&g, 0));
    hipMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.bytesize = n;
    ap.poolProps.allocType = hipMemAllocationTypePinned;
    ap.poolProps.location.type = hipMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    hipGraphNode_t alloc, set, copy, freen;
    HIP_OK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    hipMemsetParams mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = ap.dptr;
    mp.elementSize = 1;
    mp.width = n;
    mp.height = 1;
    mp.value = 0x6C;
    HIP_OK(hipGraphAddMemsetNode(&set, g, &alloc, 1, &mp));
    HIP_OK(hipGraphAddMemcpyNode1D(&copy, g, &set, 1, h, ap.dptr, n, hipMemcpyDeviceToHost));
    CHECK_HIP(hipDrvGraphAddMemFreeNode(&freen, g, &copy, 1, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphAddMemFreeNode(&freen, g, &copy, 0, ap.dptr), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGraphAddMemFreeNode(NULL, g, &copy, 1, ap.dptr), hipErrorInvalidValue);
    int not_graph = 0;
    CHECK_HIP(hipDrvGraphAddMemFreeNode(&freen, g, &copy, 1, &not_graph), hipErrorInvalidValue);
    HIP_OK(hipDrvGraphAddMemFreeNode(&freen, g, &copy, 1, ap.dptr));
    void *freed = NULL;
    HIP_OK(hipGraphMemFreeNodeGetParams(freen, &freed));
    CHECK(freed == ap.dptr);
    hipGraphNodeType t;
    HIP_OK(hipGraphNodeGetType(freen, &t));
    CHECK(t == hipGraphNodeTypeMemFree);
    hipGraphExec_t xg;
    HIP_OK(hipGraphInstantiate(&xg, g, NULL, NULL, 0));
    for (int round = 0; round < 2; round++) {
        /* Launched twice: the free node gave the memory back, so the second launch may allocate. */
        memset(h, 0, n);
        HIP_OK(hipGraphLaunch(xg, 0));
        HIP_OK(hipStreamSynchronize(0));
        CHECK_BYTES(h, n, 0x6C);
    }
    HIP_OK(hipGraphExecDestroy(xg));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipHostFree(h));
}
