/*
 * Helpers shared by the benchmarks: OK() ends the process on a HIP error,
 * now_us() is CLOCK_MONOTONIC in microseconds, cmp_d() orders doubles for qsort.
 */
#ifndef HIPCONF_BENCH_H
#define HIPCONF_BENCH_H

#include <hip/hip_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../fdcount.h"

#define OK(call)                                                                                  \
    do {                                                                                          \
        hipError_t e_ = (call);                                                                   \
        if (e_ != hipSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, hipGetErrorName(e_)); \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
