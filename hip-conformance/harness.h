/*
 * hipkfd C conformance suite: a tiny test harness.
 *
 * Each TEST runs in its own forked child, forked before the HIP runtime is
 * initialised in that child (the runner process itself never calls HIP), so a
 * crash or hang in one test fails that test and the run goes on.
 *
 *   TEST(name) { ... }              define and register a test
 *   CHECK(expr)                     record a failure and go on
 *   REQUIRE(expr)                   record a failure and end the test
 *   CHECK_HIP(call, expected)       compare hipError_t codes, record and go on
 *   REQUIRE_HIP(call, expected)     same, end the test on mismatch
 *   HIP_OK(call)                    REQUIRE_HIP(call, hipSuccess), for set-up steps
 *   SKIP("reason")                  end the test as skipped
 *   REQUIRE_GPUS(n)                 skip unless at least n devices are visible
 *
 * The runner prints one line per test and ends with exactly one line
 * "N passed, N failed" (", N skipped" appended when tests were skipped).
 * Exit status: 0 when nothing failed, 1 otherwise.
 */
#ifndef HIPCONF_HARNESS_H
#define HIPCONF_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <hip/hip_runtime_api.h>

typedef void (*hc_test_fn)(void);

struct hc_test {
    const char *name;
    const char *file;
    hc_test_fn fn;
    struct hc_test *next;
};

void hc_register(struct hc_test *t);

#define TEST(name)                                                              \
    static void hc_body_##name(void);                                           \
    static struct hc_test hc_test_##name = {#name, __FILE__, hc_body_##name, 0}; \
    __attribute__((constructor)) static void hc_reg_##name(void)                \
    {                                                                           \
        hc_register(&hc_test_##name);                                           \
    }                                                                           \
    static void hc_body_##name(void)

/* Failure reporting (child side). */
void hc_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void hc_end_test(void) __attribute__((noreturn));
/* Built with -fsanitize=address (`make asan`), hc_end_test runs LeakSanitizer and fails the
 * test on a leak; this process opts out (only where LSan cannot work, said at the call). */
void hc_no_leak_check(void);
void hc_skip(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
int hc_check_hip(const char *file, int line, const char *expr, hipError_t got,
                 hipError_t expected);

#define CHECK(expr)                                                    \
    do {                                                               \
        if (!(expr))                                                   \
            hc_fail(__FILE__, __LINE__, "CHECK(%s) failed", #expr);    \
    } while (0)

#define REQUIRE(expr)                                                  \
    do {                                                               \
        if (!(expr)) {                                                 \
            hc_fail(__FILE__, __LINE__, "REQUIRE(%s) failed", #expr);  \
            hc_end_test();                                             \
        }                                                              \
    } while (0)

/* Like CHECK/REQUIRE but with a printf-style explanation. */
#define CHECKF(expr, ...)                                              \
    do {                                                               \
        if (!(expr))                                                   \
            hc_fail(__FILE__, __LINE__, __VA_ARGS__);                  \
    } while (0)

#define REQUIREF(expr, ...)                                            \
    do {                                                               \
        if (!(expr)) {                                                 \
            hc_fail(__FILE__, __LINE__, __VA_ARGS__);                  \
            hc_end_test();                                             \
        }                                                              \
    } while (0)

#define CHECK_HIP(call, expected) \
    ((void)hc_check_hip(__FILE__, __LINE__, #call, (call), (expected)))

#define REQUIRE_HIP(call, expected)                                            \
    do {                                                                       \
        if (!hc_check_hip(__FILE__, __LINE__, #call, (call), (expected)))      \
            hc_end_test();                                                     \
    } while (0)

#define HIP_OK(call) REQUIRE_HIP(call, hipSuccess)

#define SKIP(...) hc_skip(__FILE__, __LINE__, __VA_ARGS__)

/* Number of visible devices (0 when hipGetDeviceCount fails). */
int hc_device_count(void);

#define REQUIRE_GPUS(n)                                                        \
    do {                                                                       \
        int hc_n_ = hc_device_count();                                         \
        if (hc_n_ < (n))                                                       \
            SKIP("needs %d GPUs, %d visible", (int)(n), hc_n_);                \
    } while (0)

/* Milliseconds from a monotonic clock. */
double hc_now_ms(void);

#endif /* HIPCONF_HARNESS_H */
