/* Holds VRAM for tests/fidelity.rs: hipMalloc(argv[2] MiB) on device argv[1], then creates the
 * file "ready" in the current directory and sleeps until killed. Exits 1 (message on stderr) if
 * a call fails. Built by the test against our header and library. */
#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: vram_hold DEVICE MIB\n");
    return 2;
  }
  int device = atoi(argv[1]);
  size_t bytes = (size_t)atoi(argv[2]) << 20;
  void* p = NULL;
  hipError_t e = hipSetDevice(device);
  if (e == hipSuccess) e = hipMalloc(&p, bytes);
  if (e != hipSuccess) {
    fprintf(stderr, "vram_hold: %s\n", hipGetErrorString(e));
    return 1;
  }
  FILE* f = fopen("ready", "w");
  if (!f) return 1;
  fclose(f);
  for (;;) pause();
}
