/*
 * hipkfd: <hip/hip_runtime.h> for host code built with a C or C++ compiler (gcc, g++, clang).
 * It is the runtime API only (hip_runtime_api.h); there is no device-side code here: build kernels
 * with hipcc and its own headers, and link the result against this libamdhip64.
 * SPDX-License-Identifier: MIT
 */
#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_H
#include <hip/hip_runtime_api.h>
#endif
