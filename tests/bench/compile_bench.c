/* compile_bench.c — in-process compile (or lint) time of a policy with
 * committed facts: median of N runs.
 *   compile_bench [--lint] FACTS_LINUX FACTS_MACOS RUNS CONFIG...
 * Compile: parse, build, both backends, seccomp, manifest. --lint: lint_run
 * (every rule, both targets, the compiled artifacts). Prints one line per
 * config: "NAME median_ms min_ms rules", rules "rejected" for a config the
 * compiler refuses (the time is then that of the refusal). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "compile.h"
#include "lint.h"

/* One compile of cfg; rules in *rules, -1 when the compiler refuses it. */
static int compile_once(const char *cfg, const char *const facts[2], long *rules)
{
    diag_list_t d = {0};
    char *io = NULL;
    policy_t *p = policy_load(cfg, &d, &io);
    *rules = -1;
    if (p) {
        compile_opts_t o = {true, true, {facts[0], facts[1]}};
        char *err = NULL;
        compiled_t *cc = compile_policy(p, &o, &d, &err);
        if (!cc) {
            fprintf(stderr, "%s: %s\n", cfg, err ? err : "compile failed");
            return -1;
        }
        *rules = (long)p->rules.n;
        compile_free(cc);
        policy_free(p);
    }
    free(io);
    diag_list_free(&d);
    return 0;
}

/* One lint of cfg; findings in *rules. */
static int lint_once(const char *cfg, const char *const facts[2], long *rules)
{
    char *err = NULL;
    source_t *src = source_read(cfg, &err);
    if (!src) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    lint_opts_t o = {{facts[0], facts[1]}, {NULL, NULL}};
    lint_report_t r;
    if (!lint_run(src, &o, &r, &err)) {
        fprintf(stderr, "%s: %s\n", cfg, err ? err : "lint failed");
        return -1;
    }
    *rules = (long)r.findings.n;
    lint_report_free(&r);
    return 0;
}

int main(int argc, char **argv)
{
    bool lint = argc > 1 && strcmp(argv[1], "--lint") == 0;
    if (lint) argc--, argv++;
    if (argc < 5) {
        fprintf(stderr, "usage: compile_bench [--lint] FACTS_LINUX FACTS_MACOS RUNS CONFIG...\n");
        return 2;
    }
    const char *facts[2] = {argv[1], argv[2]};
    int runs = atoi(argv[3]);
    for (int c = 4; c < argc; c++) {
        double *t = calloc((size_t)runs, sizeof *t);
        long rules = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = bench_cpu_ms();
            if ((lint ? lint_once : compile_once)(argv[c], facts, &rules) != 0) return 1;
            t[r] = bench_cpu_ms() - t0;
        }
        qsort(t, (size_t)runs, sizeof *t, bench_cmp_d);
        if (rules < 0) printf("%s %.3f %.3f rejected\n", argv[c], t[runs / 2], t[0]);
        else printf("%s %.3f %.3f %ld\n", argv[c], t[runs / 2], t[0], rules);
        free(t);
    }
    return 0;
}
