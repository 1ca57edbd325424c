/* vector_dump.c — writes the exact bwrap option vector `drun-policy run`
 * would use (NUL-separated, for `bwrap --args FD`) and the seccomp program,
 * so a benchmark can run a bare bwrap of the same mount shape; then prints
 * the median wall time, in ms, of what `run` does in process before it
 * forks bwrap (load the policy, probe, compile for Linux, plan the vector).
 *   vector_dump CONFIG WORKSPACE SCRATCH ARGS_OUT BPF_OUT [--scratch-tmpfs]
 * --scratch-tmpfs: the scratch dir is a tmpfs, as `run` mounts it (without:
 * a host dir, as a drun-mcp session's is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile.h"
#include "sandbox.h"
#include "seccomp_filter.h"

int main(int argc, char **argv)
{
    bool tmpfs = argc == 7 && strcmp(argv[6], "--scratch-tmpfs") == 0;
    if (argc != 6 && !tmpfs) {
        fprintf(stderr, "usage: vector_dump CONFIG WORKSPACE SCRATCH ARGS_OUT BPF_OUT [--scratch-tmpfs]\n");
        return 2;
    }
    diag_list_t d = {0};
    char *err = NULL;
    policy_t *p = policy_load(argv[1], &d, &err);
    if (!p) return 1;
    sandbox_t *s = sandbox_new(p, NULL, &d, &err);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    char *cmd[] = {"/bin/true", NULL};
    sbx_exec_t x = {argv[2], argv[3], cmd, 0, 1, 2, false, NULL, NULL, tmpfs, NULL};
    size_t n;
    char **v = sandbox_argv(s, &x, &n, &err);
    if (!v) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    FILE *f = fopen(argv[4], "wb");
    for (size_t i = 1; i < n; i++) fwrite(v[i], 1, strlen(v[i]) + 1, f); /* v[0] is bwrap itself */
    fclose(f);
    buf_t bpf = BUF_INIT;
    seccomp_opts_t so = {SECCOMP_X86_64, false};
    seccomp_arch_from_name(sandbox_policy(s) ? "x86_64" : "x86_64", &so.arch);
    if (!seccomp_program(&so, &bpf, &err)) return 1;
    f = fopen(argv[5], "wb");
    fwrite(bpf.p, 1, bpf.len, f);
    fclose(f);
    buf_free(&bpf);
    sandbox_argv_free(v, n);
    sandbox_free(s);
    policy_free(p);
    diag_list_free(&d);

    double t[21];
    for (int r = 0; r < 21; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        diag_list_t d2 = {0};
        policy_t *p2 = policy_load(argv[1], &d2, &err);
        sandbox_t *s2 = p2 ? sandbox_new(p2, NULL, &d2, &err) : NULL;
        char **v2 = s2 ? sandbox_argv(s2, &x, &n, &err) : NULL;
        clock_gettime(CLOCK_MONOTONIC, &b);
        t[r] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
        sandbox_argv_free(v2, n);
        sandbox_free(s2);
        policy_free(p2);
        diag_list_free(&d2);
    }
    for (int i = 1; i < 21; i++) /* insertion sort: 21 numbers */
        for (int k = i; k > 0 && t[k] < t[k - 1]; k--) {
            double x2 = t[k];
            t[k] = t[k - 1];
            t[k - 1] = x2;
        }
    printf("%.3f\n", t[10]);
    return 0;
}
