// Two HIP runtimes in one process (tests/dropin.rs): dlopen ours (argv[1]), then optionally
// another libamdhip64 (argv[2]), then call ours. Ours must say on stderr that the other is mapped.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  void *ours = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!ours) { printf("FAIL dlopen %s: %s\n", argv[1], dlerror()); return 1; }
  if (argc > 2 && !dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) { printf("FAIL dlopen %s: %s\n", argv[2], dlerror()); return 1; }
  int (*count)(int *) = (int (*)(int *))dlsym(ours, "hipGetDeviceCount");
  int n = -1;
  if (!count || count(&n) != 0 || n < 1) { printf("FAIL hipGetDeviceCount: %d\n", n); return 1; }
  printf("PASS %d devices\n", n);
  return 0;
}
