/* spawn_bench.c — `drun-policy run` against a bare bwrap of the same vector,
 * both started the same way (posix_spawn, then waitpid) and interleaved, so
 * that machine noise falls on both alike. Prints the median wall time of each
 * and how long a bare bwrap's sandbox outlives bwrap, in ms: "BARE RUN TAIL".
 *   spawn_bench N ARGS_FILE BPF_FILE N_EMPTY -- RUN_ARGV...
 * The bare bwrap gets the vector on fd 3, the filter on fd 4 and an empty
 * file on fds 6.. for each --ro-bind-data, as sandbox_spawn passes them.
 *
 * Each sample starts only once every process of the one before is gone.
 * bwrap exits as soon as the command has, and its sandbox (pid 1, the mount
 * namespace) ends after that; timed back to back, that teardown runs into the
 * next sample. `run` waits for its sandbox to end (it removes placeholders
 * after), a bare bwrap does not: so this program is a subreaper, reaps what a
 * sample leaves before the next starts, and alternates which goes first. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Wall time of one spawn-to-reap, or -1 when it did not exit 0; then, untimed,
 * the wait for whatever it left (*tail: how long that took). */
static double timed(const char *path, char **argv, const posix_spawn_file_actions_t *fa, double *tail)
{
    pid_t pid;
    int st;
    double t = bench_wall_ms();
    if (posix_spawnp(&pid, path, fa, NULL, argv, environ) != 0) return -1;
    while (waitpid(pid, &st, 0) < 0) {}
    double end = bench_wall_ms();
    while (waitpid(-1, NULL, 0) >= 0 || errno == EINTR) {}
    *tail = bench_wall_ms() - end;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? end - t : -1;
}

int main(int argc, char **argv)
{
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: spawn_bench N ARGS_FILE BPF_FILE N_EMPTY -- RUN_ARGV...\n");
        return 2;
    }
    int n = atoi(argv[1]), n_empty = atoi(argv[4]);
    char **run = argv + 6;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 3, argv[2], O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 4, argv[3], O_RDONLY, 0);
    for (int i = 0; i < n_empty; i++) posix_spawn_file_actions_addopen(&fa, 6 + i, "/dev/null", O_RDONLY, 0);
    char *bare[] = {"bwrap", "--args", "3", "--seccomp", "4", "--", "/bin/true", NULL};
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        perror("spawn_bench: PR_SET_CHILD_SUBREAPER");
        return 1;
    }
    double *tb = calloc((size_t)n, sizeof *tb), *tr = calloc((size_t)n, sizeof *tr);
    double *tt = calloc((size_t)n, sizeof *tt);
    for (int i = -3; i < n; i++) { /* three rounds to warm caches */
        double b, r, tail, ignored;
        if (i & 1) {
            r = timed(run[0], run, NULL, &ignored);
            b = timed("bwrap", bare, &fa, &tail);
        } else {
            b = timed("bwrap", bare, &fa, &tail);
            r = timed(run[0], run, NULL, &ignored);
        }
        if (b < 0 || r < 0) {
            fprintf(stderr, "spawn_bench: the %s run failed\n", b < 0 ? "bare bwrap" : "drun-policy");
            return 1;
        }
        if (i >= 0) tb[i] = b, tr[i] = r, tt[i] = tail;
    }
    qsort(tb, (size_t)n, sizeof *tb, by_value);
    qsort(tr, (size_t)n, sizeof *tr, by_value);
    qsort(tt, (size_t)n, sizeof *tt, by_value);
    printf("%.3f %.3f %.3f\n", tb[n / 2], tr[n / 2], tt[n / 2]);
    posix_spawn_file_actions_destroy(&fa);
    free(tb);
    free(tr);
    free(tt);
    return 0;
}
