/* A device function for hipcc/rtc_link, built by hipcc into a clang offload bundle of -fgpu-rdc
 * bitcode (and an archive of it): hiprtc link inputs of types 101 and 102. Same as rtc_link.hip's kMul. */
#include <hip/hip_runtime.h>
__device__ float mul(float a, float b) { return a * b + 1.0f; }
