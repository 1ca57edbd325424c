/* compile_bench.c — in-process compile time of a policy (parse, build, both
 * backends, seccomp, manifest) with committed facts: median of N runs.
 *   compile_bench FACTS_LINUX FACTS_MACOS RUNS CONFIG...
 * prints one line per config: "NAME median_ms min_ms rules". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "compile.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: a busy machine does not skew it */
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: compile_bench FACTS_LINUX FACTS_MACOS RUNS CONFIG...\n");
        return 2;
    }
    int runs = atoi(argv[3]);
    for (int c = 4; c < argc; c++) {
        double *t = calloc((size_t)runs, sizeof *t);
        size_t rules = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = now_ms();
            diag_list_t d = {0};
            char *io = NULL;
            policy_t *p = policy_load(argv[c], &d, &io);
            if (!p) {
                fprintf(stderr, "%s does not compile\n", argv[c]);
                return 1;
            }
            compile_opts_t o = {true, true, {argv[1], argv[2]}};
            char *err = NULL;
            compiled_t *cc = compile_policy(p, &o, &d, &err);
            if (!cc) {
                fprintf(stderr, "%s: %s\n", argv[c], err ? err : "compile failed");
                return 1;
            }
            t[r] = now_ms() - t0;
            rules = p->rules.n;
            compiled_free(cc);
            policy_free(p);
            diag_list_free(&d);
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        printf("%s %.3f %.3f %zu\n", argv[c], t[runs / 2], t[0], rules);
        free(t);
    }
    return 0;
}
