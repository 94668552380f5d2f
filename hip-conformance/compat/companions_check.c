/*
 * The install tree's fallback companions (lib/fallback/), linked by their NEEDED names as ROCm's
 * builds of CuPy link them: libroctracer64.so.4 (roctracer_start/stop), libroctx64.so.4 (the
 * roctx markers and ranges) and librocfft.so.0 (a placeholder). Checks roctracer's and roctx's
 * return values (ROCm/roctracer src/roctx/roctx.cpp), that libroctx64 and libroctracer64 are one
 * library (roctracer_stop pauses the roctx trace: tests/install.rs reads the trace on stderr), and
 * that every rocFFT call fails with rocfft_status_failure and writes nothing. Prints
 * "pid N", then "PASS companions" or the first failure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void roctracer_start(void);
void roctracer_stop(void);
uint32_t roctracer_version_major(void);
uint32_t roctracer_version_minor(void);
const char *roctracer_error_string(void);
int roctracer_get_timestamp(uint64_t *timestamp);
uint32_t roctx_version_major(void);
void roctxMarkA(const char *message);
int roctxRangePushA(const char *message);
int roctxRangePop(void);
uint64_t roctxRangeStartA(const char *message);
void roctxRangeStop(uint64_t id);
int rocfft_setup(void);
int rocfft_plan_create(void **plan, int placement, int transform_type, int precision, size_t dimensions,
                       const size_t *lengths, size_t number_of_transforms, void *description);
int rocfft_get_version_string(char *buf, size_t len);

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            printf("FAIL companions: %s (line %d)\n", #c, __LINE__);               \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(void)
{
    printf("pid %d\n", (int)getpid());
    CHECK(roctracer_version_major() == 4 && roctracer_version_minor() == 1 && roctx_version_major() == 4);

    roctxMarkA("first");
    CHECK(roctxRangePushA("outer") == 0);
    CHECK(roctxRangePushA("inner") == 1);
    CHECK(roctxRangePop() == 1);
    CHECK(roctxRangePop() == 0);
    CHECK(roctxRangePop() == -1);
    CHECK(strstr(roctracer_error_string(), "Pop from empty stack") != NULL);
    uint64_t id = roctxRangeStartA("overlapping");
    CHECK(id == 1);
    roctxRangeStop(id);
    CHECK(roctxRangePushA(NULL) == -1);
    roctxMarkA(NULL);

    /* Paused: these are not traced, but still counted and nested. */
    roctracer_stop();
    roctxMarkA("while stopped");
    CHECK(roctxRangePushA("stopped range") == 0);
    CHECK(roctxRangePop() == 0);
    CHECK(roctxRangeStartA("stopped") == 2);
    roctracer_start();
    roctxMarkA("after start");

    uint64_t t0 = 0, t1 = 0;
    CHECK(roctracer_get_timestamp(&t0) == 0 && roctracer_get_timestamp(&t1) == 0 && t1 >= t0 && t0 > 0);
    CHECK(roctracer_get_timestamp(NULL) == -3);

    /* One library under both names. */
    void *tx = dlopen("libroctx64.so.4", RTLD_NOW | RTLD_NOLOAD);
    void *tr = dlopen("libroctracer64.so.4", RTLD_NOW | RTLD_NOLOAD);
    CHECK(tx != NULL && tx == tr);

    /* rocFFT: rocfft_status_failure (1), nothing written. */
    void *plan = (void *)0x1234;
    size_t len = 16;
    char buf[32] = "untouched";
    CHECK(rocfft_setup() == 1);
    CHECK(rocfft_plan_create(&plan, 0, 0, 0, 1, &len, 1, NULL) == 1 && plan == (void *)0x1234);
    CHECK(rocfft_get_version_string(buf, sizeof buf) == 1 && strcmp(buf, "untouched") == 0);

    printf("PASS companions\n");
    return 0;
}
