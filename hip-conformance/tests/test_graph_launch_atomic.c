/*
 * A hipGraphLaunch that fails leaves memory as it was (the runtime's standard: a failed call
 * leaves state as it was). Found by reliability/fuzz.c (op_graph): a graph whose event-record
 * node cannot run used to be refused only when the launch reached that node, after the memcpy
 * node before it had been enqueued and had run. The node's event is destroyed here; an event of
 * another device than the launch stream's is recorded (clr's GraphEventRecordNode; hip-tests
 * Unit_hipGraphExecEventRecordNodeSetEvent_Positive_DifferentDevices).
 */
#include "common.h"

TEST(hipGraphLaunch_refused_launch_runs_no_node)
{
    REQUIRE_GPUS(2);
    uint8_t src[64], back[64];
    void *d = NULL;
    hipGraph_t g;
    hipGraphNode_t cp, rec;
    hipGraphExec_t x;
    hipEvent_t e;
    hipStream_t s1;
    memset(src, 0xAB, sizeof src);
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMalloc(&d, sizeof src));
    HIP_OK(hipMemset(d, 0, sizeof src));
    HIP_OK(hipEventCreate(&e));
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphAddMemcpyNode1D(&cp, g, NULL, 0, d, src, sizeof src, hipMemcpyHostToDevice));
    HIP_OK(hipGraphAddEventRecordNode(&rec, g, &cp, 1, e));
    HIP_OK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    HIP_OK(hipSetDevice(1));
    HIP_OK(hipStreamCreate(&s1));
    /* Device 0's event recorded by a launch on a device-1 stream. */
    HIP_OK(hipGraphLaunch(x, s1));
    HIP_OK(hipEventSynchronize(e));
    HIP_OK(hipEventQuery(e));
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipSetDevice(0));
    HIP_OK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
    CHECK_BYTES(back, sizeof back, 0xAB);
    /* The event destroyed: the launch is refused and runs no node. */
    HIP_OK(hipMemset(d, 0, sizeof src));
    HIP_OK(hipEventDestroy(e));
    CHECK_HIP(hipGraphLaunch(x, s1), hipErrorInvalidHandle);
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
    CHECK_BYTES(back, sizeof back, 0);
    HIP_OK(hipStreamDestroy(s1));
    HIP_OK(hipGraphExecDestroy(x));
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(d));
}
