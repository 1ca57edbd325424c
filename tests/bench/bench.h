/* bench.h — the clocks and the median the in-process benchmarks share
 * (compile_bench.c, diff_bench.c, ckpt_bench.c, spawn_bench.c). */
#ifndef DRUN_BENCH_H
#define DRUN_BENCH_H

#include <stdlib.h>
#include <time.h>

/* This process's CPU time: a busy machine does not skew it. */
static inline double bench_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Wall time, for work done by other processes or the kernel (fork, mount,
 * cp -a), which this process's CPU time does not see. */
static inline double bench_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int bench_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v (so v[0] is the least) and returns its median. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_d);
    return v[n / 2];
}

#endif
