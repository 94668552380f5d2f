/* Minimal checks for the hipcc-built programs: CHECK(cond) counts, the program ends with the
 * summary line "N passed, N failed" and a non-zero status on any failure. */
#pragma once
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_passed, g_failed;

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (cond) {                                                                   \
      g_passed++;                                                                 \
    } else {                                                                      \
      g_failed++;                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
    }                                                                             \
  } while (0)

/* CHECK_ERR(call, code): the call returns `code` (printed by name when it does not). */
#define CHECK_ERR(call, code)                                                       \
  do {                                                                              \
    hipError_t e_ = (call);                                                         \
    if (e_ == (code)) {                                                             \
      g_passed++;                                                                   \
    } else {                                                                        \
      g_failed++;                                                                   \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__,   \
              #call, hipGetErrorName(e_), hipGetErrorName(code));                   \
    }                                                                               \
  } while (0)

#define CHECK_OK(call) CHECK_ERR(call, hipSuccess)

/* The HIP entry points resolve to the library in $HIPCC_EXPECT_LIBDIR (ours), not to AMD's. */
static void check_bound_to_expected_library(void* sym) {
  const char* want = getenv("HIPCC_EXPECT_LIBDIR");
  Dl_info info;
  CHECK(want != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL);
  if (want == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL) return;
  char got[PATH_MAX], exp[PATH_MAX];
  if (realpath(info.dli_fname, got) == NULL || realpath(want, exp) == NULL) {
    CHECK(!"realpath");
    return;
  }
  char* dir = dirname(got);
  if (strcmp(dir, exp) != 0) fprintf(stderr, "HIP symbol comes from %s, expected %s\n", info.dli_fname, exp);
  CHECK(strcmp(dir, exp) == 0);
}

static int summary(void) {
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed != 0;
}
