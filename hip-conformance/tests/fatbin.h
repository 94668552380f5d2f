/*
 * hip-clang's fat-binary registration without hipcc, for the tests that need a registered host
 * function (test_module.c, test_exports.c): the entry points (exported, declared by neither
 * AMD's headers nor ours), the wrapper hip-clang emits, and a clang offload bundle with one
 * entry, for the host only (no GPU code object).
 */
#ifndef HIPCONF_FATBIN_H
#define HIPCONF_FATBIN_H

#include "common.h"

void** __hipRegisterFatBinary(const void* data);
void __hipUnregisterFatBinary(void** modules);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction,
                           const char* deviceName, unsigned int threadLimit, void* tid, void* bid,
                           dim3* blockDim, dim3* gridDim, int* wSize);

struct fatbin_wrapper {
    unsigned magic, version;
    const void* binary;
    void* dummy;
};

/* `__hipFatBinaryWrapper.magic` hip-clang writes ("HIPF"). */
#define FATBIN_MAGIC 0x48495046

static const unsigned char host_only_bundle[] =
    "__CLANG_OFFLOAD_BUNDLE__"
    "\x01\0\0\0\0\0\0\0"                  /* 1 entry */
    "\x51\0\0\0\0\0\0\0"                  /* offset 81 (after the header) */
    "\0\0\0\0\0\0\0\0"                    /* size 0 */
    "\x19\0\0\0\0\0\0\0"                  /* id length 25 */
    "host-x86_64-unknown-linux";

#endif
