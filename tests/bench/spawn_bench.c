/* spawn_bench.c — `drun-policy run` against a bare bwrap of the same vector,
 * both started the same way (posix_spawn, then waitpid) and interleaved, so
 * that machine noise falls on both alike. Prints the median wall time of each,
 * in ms: "BARE RUN".
 *   spawn_bench N ARGS_FILE BPF_FILE N_EMPTY -- RUN_ARGV...
 * The bare bwrap gets the vector on fd 3, the filter on fd 4 and an empty
 * file on fds 6.. for each --ro-bind-data, as sandbox_spawn passes them. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Wall time of one spawn-to-reap, or -1 when it did not exit 0. */
static double timed(const char *path, char **argv, const posix_spawn_file_actions_t *fa)
{
    pid_t pid;
    int st;
    double t = now_ms();
    if (posix_spawnp(&pid, path, fa, NULL, argv, environ) != 0) return -1;
    while (waitpid(pid, &st, 0) < 0) {}
    t = now_ms() - t;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
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
    double *tb = calloc((size_t)n, sizeof *tb), *tr = calloc((size_t)n, sizeof *tr);
    for (int i = -3; i < n; i++) { /* three rounds to warm caches */
        double b = timed("bwrap", bare, &fa), r = timed(run[0], run, NULL);
        if (b < 0 || r < 0) {
            fprintf(stderr, "spawn_bench: the %s run failed\n", b < 0 ? "bare bwrap" : "drun-policy");
            return 1;
        }
        if (i >= 0) tb[i] = b, tr[i] = r;
    }
    qsort(tb, (size_t)n, sizeof *tb, by_value);
    qsort(tr, (size_t)n, sizeof *tr, by_value);
    printf("%.3f %.3f\n", tb[n / 2], tr[n / 2]);
    posix_spawn_file_actions_destroy(&fa);
    free(tb);
    free(tr);
    return 0;
}
