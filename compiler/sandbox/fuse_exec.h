/* fuse_exec.h — the access-time layer's daemon as a fresh program (see
 * fuse_exec.c): what the runner hands it, and the entry point both mains
 * call first. Only compiler/sandbox/ and the two mains include it. */
#ifndef DRUN_FUSE_EXEC_H
#define DRUN_FUSE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lattice.h"

typedef struct fuse_exec_tree {
    const char *path;    /* the tree, absolute, resolved */
    const char *name;    /* its mount point's name in STATE/run/fuse */
    const char *mnt;     /* the mount point, absolute */
    const char *backing; /* run's scratch dir: its backing dir's name, else NULL */
    int fd;              /* O_PATH|O_DIRECTORY of the tree (inherited by the daemon) */
} fuse_exec_tree_t;

typedef struct fuse_exec_spec {
    pid_t parent;                 /* the runner: the daemon dies with it */
    int ready_w, log_fd, guard_r; /* inherited fds */
    const fuse_exec_tree_t *trees;
    size_t ntrees;
    const resolved_t *r; /* the runner's resolved policy (the daemon rebuilds it) */
    const roots_t *roots;
} fuse_exec_spec_t;

/* The runner: the spec in a sealed memfd (close-on-exec); -1 with *err. */
int fuse_exec_spec_write(const fuse_exec_spec_t *s, char **err);

/* The argv of the daemon, prepared before the fork (no allocation after). */
typedef struct fuse_exec_argv {
    char fd[16];
    const char *argv[4];
} fuse_exec_argv_t;
void fuse_exec_argv(int spec_fd, fuse_exec_argv_t *a);

/* Starts the daemon: a vfork child clears close-on-exec on fds[0..n) and
 * runs /proc/self/exe with a's argv. Its pid, or -1 with errno. */
pid_t fuse_exec_start(const fuse_exec_argv_t *a, const int *fds, size_t n);

/* Both mains call this first: -1 when argv is not the daemon's, else it
 * serves and never returns. */
int fuse_exec_daemon_main(int argc, char **argv);

/* fuse_serve.c: serves the trees of s (the daemon, after fuse_exec rebuilt
 * the policy). Never returns. */
_Noreturn void fuse_serve_daemon(const fuse_exec_spec_t *s);

#endif
