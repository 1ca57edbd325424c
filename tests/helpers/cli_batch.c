/* cli_batch.c — many `drun-policy` command lines in one process.
 *
 * Each line on stdin is one run: OUT, ERR and the arguments after
 * "drun-policy", separated by tabs. The run is cli_main() itself, the
 * function the drun-policy binary's main() calls (main.c), with its stdout
 * going to the file OUT and its stderr to the file ERR; its exit status is
 * printed on this process's stdout, one line per run, in order.
 *
 * Why: a suite that asks the compiler the same kind of question a hundred
 * times (72-schema: is this config accepted?) pays a process start each,
 * which under the sanitizers (ASan's start, LeakSanitizer's scan at exit)
 * costs more than the answer. What a batch could hide, the suite checks:
 * it runs some of the same command lines as the real binary and compares
 * status and output byte for byte, and this process must exit 0 with
 * nothing on its own stderr (a sanitizer report at exit included).
 *
 *   cli-batch < JOBS > STATUSES
 * Exit: 0, or 2 when a line cannot be run (no tab, a file not writable).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CLI_BATCH_MAX_ARGS 64

/* Points fd (1 or 2) at path, keeping the old one in *saved; false on error. */
static int redirect(int fd, const char *path, int *saved)
{
    int f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f < 0) return 0;
    *saved = dup(fd);
    int ok = *saved >= 0 && dup2(f, fd) == fd;
    close(f);
    return ok;
}

static int restore(int fd, int saved)
{
    int ok = dup2(saved, fd) == fd;
    close(saved);
    return ok;
}

/* One line: "OUT\tERR\tARG..." -> the exit status of cli_main, or -1. */
static int run_line(char *line)
{
    char *argv[CLI_BATCH_MAX_ARGS + 1];
    int argc = 0;
    char *out = strtok(line, "\t"), *err = strtok(NULL, "\t");
    if (!out || !err) return -1;
    argv[argc++] = "drun-policy";
    for (char *a; argc < CLI_BATCH_MAX_ARGS && (a = strtok(NULL, "\t"));) argv[argc++] = a;
    argv[argc] = NULL;
    int so, se;
    if (fflush(stdout) != 0 || !redirect(1, out, &so)) return -1;
    if (!redirect(2, err, &se)) {
        restore(1, so);
        return -1;
    }
    int rc = cli_main(argc, argv);
    int flushed = fflush(stdout) == 0 && fflush(stderr) == 0;
    int back = restore(2, se) & restore(1, so);
    return flushed && back ? rc : -1;
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long n = 0;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        n++;
        if (line[len - 1] == '\n') line[len - 1] = '\0';
        int rc = run_line(line);
        if (rc < 0) {
            fprintf(stderr, "cli-batch: line %lu: cannot run it (OUT\\tERR\\tARG... with writable files)\n", n);
            free(line);
            return 2;
        }
        printf("%d\n", rc);
    }
    free(line);
    return fflush(stdout) == 0 ? 0 : 2;
}
