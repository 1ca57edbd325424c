/* diff_bench.c — in-process `drun-policy diff` time: median of N runs of
 * diff_policies() on two loaded policies with committed facts (loading is
 * not timed; the semantic diff, both sides' artifacts and their line diff are).
 *   diff_bench FACTS_LINUX FACTS_MACOS RUNS OLD NEW
 * Prints "median_ms min_ms old_rules new_rules report_bytes". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "diff.h"
#include "facts.h"
#include "policy.h"

static policy_t *load(const char *cfg)
{
    diag_list_t d = {0};
    char *io = NULL;
    policy_t *p = policy_load(cfg, &d, &io);
    if (!p) fprintf(stderr, "%s: %s\n", cfg, io ? io : d.n ? d.v[0].msg
                                                           : "rejected");
    free(io);
    diag_list_free(&d);
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: diff_bench FACTS_LINUX FACTS_MACOS RUNS OLD NEW\n");
        return 2;
    }
    char *err = NULL;
    facts_t *f[2] = {facts_load(argv[1], &err), NULL};
    if (f[0]) f[1] = facts_load(argv[2], &err);
    policy_t *old = load(argv[4]), *new_ = load(argv[5]);
    if (!f[0] || !f[1] || !old || !new_) {
        if (err) fprintf(stderr, "%s\n", err);
        return 1;
    }
    int runs = atoi(argv[3]);
    double *t = calloc((size_t)(runs > 0 ? runs : 1), sizeof *t);
    size_t bytes = 0;
    for (int r = 0; r < runs; r++) {
        diff_opts_t o = {{NULL, NULL}, {f[0], f[1]}, "old", "new"};
        buf_t out = BUF_INIT;
        double t0 = bench_cpu_ms();
        int rc = diff_policies(old, new_, &o, false, &out, &err);
        t[r] = bench_cpu_ms() - t0;
        bytes = out.len;
        buf_free(&out);
        if (rc < 0) {
            fprintf(stderr, "diff: %s\n", err ? err : "failed");
            return 1;
        }
    }
    qsort(t, (size_t)runs, sizeof *t, bench_cmp_d);
    printf("%.3f %.3f %zu %zu %zu\n", t[runs / 2], t[0], old->rules.n, new_->rules.n, bytes);
    free(t);
    policy_free(old);
    policy_free(new_);
    facts_free(f[0]);
    facts_free(f[1]);
    return 0;
}
