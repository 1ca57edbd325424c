/* fuse_names.c — the access-time layer's names in STATE/run/fuse (SPEC §16,
 * docs/artifacts.md).
 *
 * A run owns TOKEN.lock, TOKEN.N (tree N's mount point) and TOKEN.N.home
 * (run's scratch backing dir), TOKEN random. It holds an exclusive flock on
 * TOKEN.lock from before its first name is made until after its last is
 * removed, and the kernel drops that lock when the runner ends, however it
 * ends. That lock is what says a run is alive, never a pid: a runner in
 * another pid namespace (drun-mcp as pid 1 of its own, a run started inside
 * one) sees other pids, and judging by kill(pid, 0) it removed the live
 * mount points of runs it could not see (an rmdir of a mount point detaches
 * the mount in every mount namespace), which failed their mounts with
 * ENOENT. A pid is not unique across namespaces either, so neither is a
 * name made of one: two drun-mcp, each pid 1, made the same mount point. */

#include "fuse_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "sbx_int.h"

void fuse_names_unmount(const char *mnt)
{
    if (geteuid() == 0) {
        umount2(mnt, MNT_DETACH | UMOUNT_NOFOLLOW);
        return;
    }
    char *argv[] = {"fusermount3", "-u", "-z", "-q", (char *)mnt, NULL}; /* posix_spawn does not write it */
    pid_t pid;
    extern char **environ;
    if (posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ) == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* Removes name (below dirfd) and all it holds, by fd, never following a
 * symlink: run's scratch dir after the run. */
static void remove_tree_at(int at, const char *name, int depth)
{
    if (unlinkat(at, name, 0) == 0 || errno == ENOENT || depth > 256) return;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    for (struct dirent *de; (de = readdir(d));)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) remove_tree_at(dirfd(d), de->d_name, depth + 1);
    closedir(d);
    unlinkat(at, name, AT_REMOVEDIR);
}

#define FSL_TOKEN_BYTES 8 /* 16 hex digits */

static bool is_dot(const char *n) { return !strcmp(n, ".") || !strcmp(n, ".."); }

/* fd (open on name below at) is still the file linked there. */
static bool still_linked(int at, const char *name, int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && a.st_nlink > 0 && fstatat(at, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Removes one name a gone run left: a backing dir and all it holds, a
 * mount point unmounted (dead: ENOTCONN) and removed, a stray file. */
static void remove_left(int run_fd, const char *name)
{
    size_t n = strlen(name);
    struct stat st;
    if (fstatat(run_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) return;
    if (n > 5 && strcmp(name + n - 5, ".home") == 0) {
        remove_tree_at(run_fd, name, 0);
    } else if (unlinkat(run_fd, name, 0) != 0) {
        char *rel = xasprintf("run/fuse/%s", name), *mnt = fsutil_state_path(rel);
        fuse_names_unmount(mnt);
        unlinkat(run_fd, name, AT_REMOVEDIR);
        free(mnt);
        free(rel);
    }
}

/* The names of STATE/run/fuse (a fresh read of it each call). */
static void list_run_dir(int run_fd, strvec_t *out)
{
    /* a description of its own: a dup would share the directory's offset,
     * and a second listing would start where the first one ended (none) */
    int fd = openat(run_fd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    for (struct dirent *de; (de = readdir(d));)
        if (!is_dot(de->d_name)) vec_push(out, xstrdup(de->d_name));
    closedir(d);
}

/* Removes each of names that is prefix "." something, but except. */
static void remove_prefixed(int run_fd, const char *prefix, const strvec_t *names, const char *except)
{
    size_t pn = strlen(prefix);
    for (size_t i = 0; i < names->n; i++)
        if (!strncmp(names->v[i], prefix, pn) && names->v[i][pn] == '.' && (!except || strcmp(names->v[i], except) != 0))
            remove_left(run_fd, names->v[i]);
}

/* The run named by prefix (a name's part before its first dot): if its lock
 * file can be locked, the run is gone, and what it left is removed while the
 * lock is held, the lock file last. Names with no lock file beside them are
 * left over too (their run removed the lock after the rest, or they predate
 * the locks): the ones listed are removed. Live runs are not touched. */
static void reap_prefix(int run_fd, const char *prefix, const strvec_t *listed)
{
    char *lock = xasprintf("%s.lock", prefix);
    int fd = openat(run_fd, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) remove_prefixed(run_fd, prefix, listed, NULL);
        free(lock);
        return;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && still_linked(run_fd, lock, fd)) {
        strvec_t all = {0};
        list_run_dir(run_fd, &all); /* again: the first listing may miss its newest names */
        remove_prefixed(run_fd, prefix, &all, lock);
        sbx_free_strvec(&all);
        unlinkat(run_fd, lock, 0);
    }
    close(fd);
    free(lock);
}

/* What runs that are gone left in STATE/run/fuse (one killed with SIGKILL
 * does no cleanup): their mount points, dead (ENOTCONN; the daemon's guard
 * unmounts them too), and run's scratch backing dirs. Each run (prefix) is
 * looked at once. Called before this run has claimed its own token. */
static void sweep_stale(int run_fd)
{
    strvec_t names = {0};
    strmap_t done = STRMAP_INIT; /* its keys in a */
    arena_t a = ARENA_INIT;
    list_run_dir(run_fd, &names);
    for (size_t i = 0; i < names.n; i++) {
        const char *dot = strchr(names.v[i], '.');
        if (!dot || dot == names.v[i]) continue;
        char *prefix = arena_strndup(&a, names.v[i], (size_t)(dot - names.v[i]));
        if (strmap_put(&done, prefix, 1) < 0) reap_prefix(run_fd, prefix, &names);
    }
    strmap_free(&done);
    arena_free(&a);
    sbx_free_strvec(&names);
}

/* A fresh token, its lock file made and locked. The lock is checked to be
 * still linked after it is taken: a sweep that opened the new file first
 * and found it unlocked has removed it (then another token is drawn). */
static bool claim_token(fuse_names_t *l, char **err)
{
    int e = 0;
    for (int tries = 0; tries < 8; tries++) {
        char tok[2 * FSL_TOKEN_BYTES + 1];
        if (!fsutil_random_hex(tok, FSL_TOKEN_BYTES)) {
            e = errno;
            break;
        }
        char *lock = xasprintf("%s.lock", tok);
        int fd = openat(l->run_fd, lock, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        e = errno;
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && still_linked(l->run_fd, lock, fd)) {
            free(lock);
            l->token = xstrdup(tok);
            l->lock_fd = fd;
            return true;
        }
        free(lock);
        if (fd >= 0) close(fd); /* the sweep that holds it removes it */
        else if (e != EEXIST) break;
    }
    *err = xasprintf("cannot make the layer's lock in the state dir: %s", strerror(e ? e : EEXIST));
    return false;
}

bool fuse_names_open(fuse_names_t *n, char **err)
{
    if ((n->run_fd = hoststate_subdir("run/fuse", err)) < 0) return false;
    sweep_stale(n->run_fd);
    return claim_token(n, err);
}

bool fuse_names_mount_point(fuse_names_t *n, size_t i, char **name, char **mnt, char **err)
{
    *name = xasprintf("%s.%zu", n->token, i);
    char *rel = xasprintf("run/fuse/%s", *name);
    *mnt = fsutil_state_path(rel);
    free(rel);
    /* never EEXIST: the token is this run's alone */
    if (mkdirat(n->run_fd, *name, 0711) == 0) return true;
    *err = xasprintf("cannot make the layer's mount point %s: %s", *mnt, strerror(errno));
    return false;
}

/* run's scratch: a fresh directory beside the mount points, the sandbox
 * user's, which the layer serves in place of the tmpfs. */
int fuse_names_backing(fuse_names_t *n, const char *name, char **backing, char **err)
{
    *backing = xasprintf("%s.home", name);
    const sbx_ident_t *id = hoststate_ident();
    int fd = -1;
    if (mkdirat(n->run_fd, *backing, 0700) == 0)
        fd = openat(n->run_fd, *backing, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || (id->drop && fchown(fd, id->uid, id->gid) != 0)) {
        *err = xasprintf("cannot make the scratch dir's backing directory: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

void fuse_names_remove(fuse_names_t *n, const char *name, const char *backing)
{
    if (n->run_fd < 0) return;
    if (name) unlinkat(n->run_fd, name, AT_REMOVEDIR);
    if (backing && *backing) remove_tree_at(n->run_fd, backing, 0);
}

void fuse_names_close(fuse_names_t *n)
{
    if (n->lock_fd >= 0) {
        char *lock = xasprintf("%s.lock", n->token);
        unlinkat(n->run_fd, lock, 0);
        free(lock);
        close(n->lock_fd);
    }
    if (n->run_fd >= 0) close(n->run_fd);
    free(n->token);
    *n = (fuse_names_t)FUSE_NAMES_INIT;
}
