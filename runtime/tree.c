/* tree.c — measuring and removing directory trees without following links. */
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drun_policy.h"

/* Directory levels held open at once; below that, subtrees are handled by
 * moving them (tree_remove) or skipped and reported partial (tree_measure). */
#define TREE_DEPTH_MAX 64

static int open_subdir(int dirfd, const char *name)
{
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A fresh open file description of dirfd's directory: readdir through a
 * dup() would share (and move) the offset of an fd other threads use. */
static DIR *open_listing(int dirfd)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    DIR *d = fdopendir(fd);
    if (!d)
        close(fd);
    return d;
}

static void measure(int dirfd, int depth, uint64_t max, tree_usage_t *u)
{
    DIR *d = open_listing(dirfd);
    if (!d) {
        u->partial = true;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (u->entries >= max) {
            u->partial = true;
            break;
        }
        u->entries++;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* vanished meanwhile */
        if (S_ISREG(st.st_mode)) {
            u->files++;
            u->bytes += (uint64_t)st.st_size;
        } else if (S_ISDIR(st.st_mode)) {
            if (depth >= TREE_DEPTH_MAX) {
                u->partial = true;
                continue;
            }
            int sub = open_subdir(dirfd, e->d_name);
            if (sub < 0) {
                u->partial = true;
                continue;
            }
            measure(sub, depth + 1, max, u);
            close(sub);
        }
    }
    closedir(d);
}

void tree_measure(int dirfd, uint64_t max_entries, tree_usage_t *u)
{
    memset(u, 0, sizeof *u);
    measure(dirfd, 0, max_entries, u);
}

/* Opens parentfd/name as a directory, granting ourselves access first when
 * a sandboxed command left it mode 000. */
static int open_for_removal(int parentfd, const char *name)
{
    int fd = open_subdir(parentfd, name);
    if (fd < 0 && errno == EACCES) {
        fchmodat(parentfd, name, 0700, 0);
        fd = open_subdir(parentfd, name);
    }
    return fd;
}

typedef struct rm_ctx {
    int topfd;           /* where deep subtrees are moved to */
    unsigned moved;      /* names handed out for moved subtrees */
    VEC(char *) pending; /* moved subtrees still to remove */
    int err;
} rm_ctx_t;

static void rm_dir_contents(rm_ctx_t *c, int dirfd, int depth);

static void rm_entry(rm_ctx_t *c, int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return;
    if (errno != EISDIR && errno != EPERM) {
        if (!c->err)
            c->err = errno;
        return;
    }
    if (depth >= TREE_DEPTH_MAX && c->topfd >= 0) {
        /* Too deep to keep opening: move the subtree up to the top and
         * remove it from there later. */
        char moved[64];
        snprintf(moved, sizeof moved, ".drun-rm-%u", c->moved++);
        if (renameat(dirfd, name, c->topfd, moved) == 0) {
            vec_push(&c->pending, xstrdup(moved));
            return;
        }
    }
    int sub = open_for_removal(dirfd, name);
    if (sub < 0) {
        if (errno != ENOENT && !c->err)
            c->err = errno;
        return;
    }
    rm_dir_contents(c, sub, depth + 1);
    close(sub);
    if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !c->err)
        c->err = errno;
}

static void rm_dir_contents(rm_ctx_t *c, int dirfd, int depth)
{
    /* A directory left without write permission could not be emptied. */
    fchmod(dirfd, 0700);
    /* Re-read until empty: a command still running could add entries. */
    for (int round = 0; round < 4; round++) {
        DIR *d = open_listing(dirfd);
        if (!d)
            break;
        VEC(char *) names = {0};
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                vec_push(&names, xstrdup(e->d_name));
        closedir(d);
        for (size_t i = 0; i < names.n; i++) {
            rm_entry(c, dirfd, names.v[i], depth);
            free(names.v[i]);
        }
        size_t n = names.n;
        vec_free(&names);
        if (n == 0)
            break;
    }
}

int tree_remove(int parentfd, const char *name)
{
    rm_ctx_t c = {.topfd = parentfd};
    rm_entry(&c, parentfd, name, 0);
    /* Moved subtrees land in parentfd; removing one may move more. */
    while (c.pending.n) {
        char *n = c.pending.v[--c.pending.n];
        rm_entry(&c, parentfd, n, 0);
        free(n);
    }
    vec_free(&c.pending);
    if (c.err) {
        errno = c.err;
        return -1;
    }
    return 0;
}
