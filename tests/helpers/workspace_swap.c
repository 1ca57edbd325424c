/* workspace_swap.c — for 52-runner-warden (d): opens the workspace WS,
 * then, as a sandbox that reached its parent could, renames it away and
 * puts a symlink to the host directory TARGET in its place (or, with
 * "dir", TARGET itself, renamed there), and asks
 * sandbox_spawn to run a command that writes a marker into the workspace
 * with the kept fd. The run must be refused (the path is no longer the
 * directory the fd is) and TARGET must stay empty. Exit 0 when it was
 * refused, 1 when the command ran.
 *   workspace_swap WS TARGET SCRATCH [dir]
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "sandbox.h"

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: workspace_swap WS TARGET SCRATCH [dir]\n");
        return 2;
    }
    const char *ws = argv[1], *target = argv[2], *scratch = argv[3];
    if (mkdir(scratch, 0700) != 0 && errno != EEXIST) return 2;
    int fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *moved = NULL;
    bool dir = argc == 5 && strcmp(argv[4], "dir") == 0;
    if (fd < 0 || asprintf(&moved, "%s.orig", ws) < 0 || rename(ws, moved) != 0 ||
        (dir ? rename(target, ws) : symlink(target, ws)) != 0) {
        perror("workspace_swap: setting up");
        return 2;
    }
    diag_list_t d = {0};
    char *err = NULL;
    policy_t *p = policy_load("builtin:default", &d, &err);
    sandbox_t *s = p ? sandbox_new(p, NULL, &d, &err) : NULL;
    if (!s) {
        fprintf(stderr, "workspace_swap: %s\n", err ? err : "no sandbox");
        return 2;
    }
    char *cmd[] = {"/bin/sh", "-c", "echo planted > marker", NULL};
    sbx_exec_t x = {ws, scratch, cmd, 0, 1, 2, false, NULL, NULL, false, NULL, fd, -1};
    pid_t pid;
    sbx_residue_t *r = NULL;
    int rc = sandbox_spawn(s, &x, &pid, &r, &err);
    if (rc != 0) {
        printf("refused: %s\n", err ? err : "?");
    } else {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        sandbox_cleanup(r);
        printf("the command ran (status %d)\n", status);
    }
    /* everything freed: the sanitizer build checks for leaks */
    free(err);
    free(moved);
    close(fd);
    sandbox_free(s);
    policy_free(p);
    diag_list_free(&d);
    return rc != 0 ? 0 : 1;
}
