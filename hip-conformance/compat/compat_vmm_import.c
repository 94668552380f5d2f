/*
 * A VMM chunk imported by a process that never passed a hipMemAllocationProp, built against
 * ROCm 5.2's header (tests/header_compat.rs), whose hipMemAllocationProp puts location at 4,
 * requestedHandleType at 12 and type at 16 (ROCm 7: type 0, requestedHandleType 4, location 8).
 * Issue 39: hipMemGetAllocationPropertiesFromHandle on the imported handle wrote ROCm 7's layout,
 * so this program read location.id 1 for a chunk of device 0. It must answer in the caller's ABI,
 * both when ours is loaded under the `.so.5` compat name and when it is LD_PRELOADed.
 *
 * fork() before the runtime initialises: the child creates a chunk on device 0 (passing a
 * prop), fills it and sends its dma-buf fd; the parent imports it, reads its properties, maps it
 * and checks the bytes. Prints "PASS" or what failed.
 */
#define _GNU_SOURCE
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fdpass.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        if (e_ != hipSuccess) {                                                            \
            printf("FAIL %s:%d: %s -> %d\n", __FILE__, __LINE__, #call, (int)e_);          \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            printf("FAIL %s:%d: expected %s\n", __FILE__, __LINE__, #cond);                \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static int child(int sock)
{
    hipMemAllocationProp prop;
    hipMemGenericAllocationHandle_t handle;
    size_t gran = 0;
    void *va = NULL;
    int fd = -1;
    char byte;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
    CHECK(hipSetDevice(0));
    CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityMinimum));
    CHECK(hipMemCreate(&handle, gran, &prop, 0));
    CHECK(hipMemAddressReserve(&va, gran, 0, NULL, 0));
    CHECK(hipMemMap(va, gran, 0, handle, 0));
    hipMemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(va, gran, &access, 1));
    CHECK(hipMemset(va, 0x5d, gran));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemExportToShareableHandle(&fd, handle, hipMemHandleTypePosixFileDescriptor, 0));
    EXPECT(fdpass_send(sock, &fd, 1));
    EXPECT(write(sock, &gran, sizeof gran) == (ssize_t)sizeof gran);
    EXPECT(read(sock, &byte, 1) == 1); /* the parent is done */
    CHECK(hipMemUnmap(va, gran));
    CHECK(hipMemRelease(handle));
    CHECK(hipMemAddressFree(va, gran));
    return 0;
}

int main(void)
{
    int sv[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        exit(child(sv[1]));
    }
    close(sv[1]);
    int fd = -1;
    size_t gran = 0;
    EXPECT(fdpass_recv(sv[0], &fd, 1));
    EXPECT(read(sv[0], &gran, sizeof gran) == (ssize_t)sizeof gran && gran > 0);

    hipMemGenericAllocationHandle_t handle = NULL;
    CHECK(hipSetDevice(1));
    CHECK(hipMemImportFromShareableHandle(&handle, (void *)&fd, hipMemHandleTypePosixFileDescriptor));
    hipMemAllocationProp prop;
    memset(&prop, 0xff, sizeof prop);
    CHECK(hipMemGetAllocationPropertiesFromHandle(&prop, handle));
    printf("type %d requestedHandleType %d location.type %d location.id %d\n", (int)prop.type,
           (int)prop.requestedHandleType, (int)prop.location.type, prop.location.id);
    EXPECT(prop.type == hipMemAllocationTypePinned);
    EXPECT(prop.requestedHandleType == hipMemHandleTypePosixFileDescriptor);
    EXPECT(prop.location.type == hipMemLocationTypeDevice);
    EXPECT(prop.location.id == 0);

    void *va = NULL;
    CHECK(hipMemAddressReserve(&va, gran, 0, NULL, 0));
    CHECK(hipMemMap(va, gran, 0, handle, 0));
    hipMemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(va, gran, &access, 1));
    unsigned char *host = malloc(gran);
    CHECK(hipSetDevice(0));
    CHECK(hipMemcpy(host, va, gran, hipMemcpyDeviceToHost));
    EXPECT(host[0] == 0x5d && host[gran - 1] == 0x5d);
    CHECK(hipMemUnmap(va, gran));
    CHECK(hipMemRelease(handle));
    CHECK(hipMemAddressFree(va, gran));
    free(host);
    close(fd);
    EXPECT(write(sv[0], "x", 1) == 1);
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("PASS\n");
    return 0;
}
