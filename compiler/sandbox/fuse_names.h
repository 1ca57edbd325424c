/* fuse_names.h — the access-time layer's names in STATE/run/fuse (see
 * fuse_names.c): a run's mount points and scratch backing dirs, made and
 * removed by fd under a lock that says the run is alive. Only
 * compiler/sandbox/fuse_serve.c includes it. */
#ifndef DRUN_FUSE_NAMES_H
#define DRUN_FUSE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct fuse_names {
    int run_fd;  /* STATE/run/fuse, O_DIRECTORY */
    char *token; /* this run's names in it: TOKEN.lock, TOKEN.N, TOKEN.N.home */
    int lock_fd; /* TOKEN.lock, flock'ed LOCK_EX while any of them exists */
} fuse_names_t;

#define FUSE_NAMES_INIT {-1, NULL, -1}

/* Opens STATE/run/fuse, removes what runs that are gone left in it, and
 * claims a fresh token for this run (its lock taken). False with *err. */
bool fuse_names_open(fuse_names_t *n, char **err);

/* Makes tree i's mount point, TOKEN.i (0711): its name and absolute path
 * (caller frees both, also on failure). False with *err. */
bool fuse_names_mount_point(fuse_names_t *n, size_t i, char **name, char **mnt, char **err);

/* Makes run's scratch backing dir NAME.home (0700, the sandbox user's):
 * its fd (O_DIRECTORY), its name in *backing (caller frees); -1 with *err. */
int fuse_names_backing(fuse_names_t *n, const char *name, char **backing, char **err);

/* Removes a mount point (already unmounted) and a backing dir with all it
 * holds (either may be NULL), by fd, following no symlink. */
void fuse_names_remove(fuse_names_t *n, const char *name, const char *backing);

/* After the run's other names: its lock file, then the lock, then the
 * directory's fd. n is FUSE_NAMES_INIT again. */
void fuse_names_close(fuse_names_t *n);

/* Unmounts the layer's mount at mnt, lazily (a dead one: ENOTCONN):
 * umount2 as root, else fusermount3 -u -z. */
void fuse_names_unmount(const char *mnt);

#endif
