/* toml_bench.c — in-process TOML parse throughput, for tests/bench/10-toml.
 *
 *   toml_bench RUNS FILE...
 * reads every FILE into memory, then parses all of them once per run and
 * prints one line:
 *   <bytes> <cold s> <cold MB/s> <warm median s> <warm MB/s> <peak RSS MB> <ok> <files>
 * "cold" is the first run, which also pays for the fresh memory the tree
 * needs (page faults); "warm" is the median of the other RUNS-1 runs, with
 * the allocator keeping its memory between runs — the steady state of a
 * long-running process that re-parses its config. Only toml_parse is timed:
 * no I/O, no JSON.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "toml.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Parses every source once; returns the seconds taken, *ok the successes. */
static double run_once(source_t **src, int n, int *ok)
{
    double start = now();
    *ok = 0;
    for (int i = 0; i < n; i++) {
        /* 1.1 accepts every valid file of both toml-test lists */
        toml_doc *doc = toml_parse(src[i], TOML_1_1, NULL);
        *ok += doc != NULL;
        toml_doc_free(doc);
    }
    return now() - start;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: toml_bench RUNS FILE...\n");
        return 2;
    }
    int runs = atoi(argv[1]) < 2 ? 2 : atoi(argv[1]), nfiles = argc - 2, ok = 0;
    source_t **src = calloc((size_t)nfiles, sizeof *src);
    size_t bytes = 0;
    for (int i = 0; i < nfiles; i++) {
        char *err = NULL;
        if (!(src[i] = source_read(argv[i + 2], &err))) {
            fprintf(stderr, "toml_bench: %s\n", err);
            return 2;
        }
        bytes += src[i]->len;
    }
    /* Keep freed memory in the process for the warm runs. */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    double cold = run_once(src, nfiles, &ok);
    double *t = calloc((size_t)runs - 1, sizeof *t);
    for (int r = 0; r < runs - 1; r++) t[r] = run_once(src, nfiles, &ok);
    qsort(t, (size_t)runs - 1, sizeof *t, cmp_double);
    int w = runs - 1;
    double warm = w % 2 ? t[w / 2] : (t[w / 2 - 1] + t[w / 2]) / 2;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%zu %.6f %.1f %.6f %.1f %.1f %d %d\n", bytes, cold, (double)bytes / 1e6 / cold, warm,
           (double)bytes / 1e6 / warm, (double)ru.ru_maxrss / 1024.0, ok, nfiles);
    for (int i = 0; i < nfiles; i++) source_free(src[i]);
    free(src);
    free(t);
    return 0;
}
