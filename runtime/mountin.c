/* mountin.c — session_mount: a host file or tree copied into a workspace
 * (see sessfs.h). The source is found in mount_allowlist by its canonical
 * name, then opened beneath the allowlisted directory with no symlink
 * followed: a source swapped for a symlink after it was resolved fails to
 * open. Inside it, symlinks are copied as symlinks, directories are entered
 * with O_NOFOLLOW, and every file the policy hides (deny_read) is left out.
 * Data moves with copy_file_range (a reflink where the filesystem can).
 */
#include "sessfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "tree.h"

#define MOUNT_DEPTH_MAX 256

typedef struct cp {
    const mountin_req_t *r;
    mountin_res_t *res;
    buf_t abs; /* host path being copied */
    buf_t rel; /* the same, relative to the source */
    char *err; /* set: the whole mount fails */
} cp_t;

static void mi_skip(cp_t *c, const char *reason)
{
    sessfs_skip_t s = {xstrdup(c->rel.len ? buf_cstr(&c->rel) : "."), xstrdup(reason)};
    vec_push(&c->res->skipped, s);
}

/* A root runtime copies with root's reach, but the sandbox user could not
 * have read what its mode closes to it: such files are left out (SPEC §13,
 * a root runtime gives no root reach). */
static bool sandbox_may_read(const cp_t *c, const struct stat *st)
{
    if (geteuid() != 0 || c->r->own.uid == (uid_t)-1)
        return true;
    mode_t need = S_ISDIR(st->st_mode) ? 05 : 04;
    if (st->st_uid == c->r->own.uid)
        return (st->st_mode >> 6 & need) == need;
    if (st->st_gid == c->r->own.gid)
        return (st->st_mode >> 3 & need) == need;
    return (st->st_mode & need) == need;
}

static bool mi_give(const cp_t *c, int fd)
{
    return c->r->own.uid == (uid_t)-1 || fchown(fd, c->r->own.uid, c->r->own.gid) == 0;
}

static int mi_fail(cp_t *c, const char *what)
{
    if (!c->err)
        c->err = xasprintf("cannot %s \"%s\": %s", what, c->rel.len ? buf_cstr(&c->rel) : ".",
                           strerror(errno));
    return -1;
}

static int mi_copy_data(int in, int out, off_t size)
{
    off_t left = size;
    bool plain = false;
    while (left > 0) {
        ssize_t n = -1;
        if (!plain) {
            n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
            if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                          errno == EOPNOTSUPP)) {
                plain = true;
                continue;
            }
        } else {
            char b[65536];
            n = read(in, b, sizeof b < (size_t)left ? sizeof b : (size_t)left);
            if (n > 0) {
                for (ssize_t done = 0; done < n;) {
                    ssize_t w = write(out, b + done, (size_t)(n - done));
                    if (w < 0 && errno != EINTR)
                        return -1;
                    if (w > 0)
                        done += w;
                }
            }
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break; /* shrank meanwhile: what was there is copied */
        left -= n;
    }
    return 0;
}

/* The open regular file in (fstat st) to dstdir/name. 0, or -1 (the mount
 * fails: over the budget, or the workspace cannot take it). */
static int copy_open_file(cp_t *c, int in, const struct stat *st, int dstdir, const char *name)
{
    if (c->res->bytes + (uint64_t)st->st_size > c->r->budget) {
        errno = EFBIG;
        c->err = xasprintf("the mount does not fit max_workspace_mb: copying \"%s\" would "
                           "take the workspace past its limit (%llu more bytes allowed); "
                           "mount a smaller part of the tree, or remove files first",
                           c->rel.len ? buf_cstr(&c->rel) : ".", (unsigned long long)c->r->budget);
        return -1;
    }
    int out = openat(dstdir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int rc = 0;
    if (out < 0 || mi_copy_data(in, out, st->st_size) < 0 || !mi_give(c, out) ||
        fchmod(out, st->st_mode & 0777) < 0)
        rc = mi_fail(c, "copy");
    if (out >= 0)
        close(out);
    if (rc == 0) {
        c->res->files++;
        c->res->bytes += (uint64_t)st->st_size;
    }
    return rc;
}

/* Regular file name beneath srcdir (lstat lst) to dstdir/name. 0 (copied or
 * skipped), -1 (the mount fails). */
static int copy_file(cp_t *c, int srcdir, const char *name, int dstdir, const struct stat *lst)
{
    int in = openat(srcdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (in < 0) {
        mi_skip(c, errno == ELOOP ? "it became a symlink while it was copied (not followed)"
                                  : "it cannot be opened on the host");
        return 0;
    }
    if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != lst->st_ino) {
        close(in);
        mi_skip(c, "it changed while it was copied");
        return 0;
    }
    int rc = copy_open_file(c, in, &st, dstdir, name);
    close(in);
    return rc;
}

static int copy_dir(cp_t *c, int srcdir, int dstdir, int depth);

static int copy_entry(cp_t *c, int srcdir, const char *name, int dstdir, int depth)
{
    struct stat st;
    if (fstatat(srcdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        mi_skip(c, "it vanished while it was copied");
        return 0;
    }
    /* What the sandbox could not read, it does not get as a copy. */
    if (c->r->readable && !c->r->readable(c->r->ctx, buf_cstr(&c->abs))) {
        mi_skip(c, "hidden by the policy (deny_read)");
        return 0;
    }
    if (!sandbox_may_read(c, &st)) {
        mi_skip(c, "the sandbox user may not read it on the host");
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        /* Copied as a link, never followed: inside the sandbox it points
         * where the policy lets it. */
        char target[4097];
        ssize_t n = readlinkat(srcdir, name, target, sizeof target - 1);
        if (n < 0) {
            mi_skip(c, "it changed while it was copied");
            return 0;
        }
        target[n] = '\0';
        if (symlinkat(target, dstdir, name) < 0 ||
            (c->r->own.uid != (uid_t)-1 &&
             fchownat(dstdir, name, c->r->own.uid, c->r->own.gid, AT_SYMLINK_NOFOLLOW) < 0))
            return mi_fail(c, "copy the symlink");
        c->res->links++;
        return 0;
    }
    if (S_ISREG(st.st_mode))
        return copy_file(c, srcdir, name, dstdir, &st);
    if (!S_ISDIR(st.st_mode)) {
        mi_skip(c, "not a regular file, directory or symlink");
        return 0;
    }
    int in = openat(srcdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) {
        mi_skip(c, errno == ELOOP || errno == ENOTDIR ? "it changed while it was copied"
                                                      : "it cannot be opened on the host");
        return 0;
    }
    int out = -1;
    if (mkdirat(dstdir, name, 0700) < 0 ||
        (out = openat(dstdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        close(in);
        return mi_fail(c, "create the directory");
    }
    int rc = copy_dir(c, in, out, depth + 1);
    if (rc == 0 && (!mi_give(c, out) || fchmod(out, (st.st_mode & 0777) | 0700) < 0))
        rc = mi_fail(c, "set the mode of");
    close(in);
    close(out);
    if (rc == 0)
        c->res->dirs++;
    return rc;
}

static int mi_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int copy_dir(cp_t *c, int srcdir, int dstdir, int depth)
{
    if (depth > MOUNT_DEPTH_MAX) {
        errno = ELOOP;
        return mi_fail(c, "copy (nested too deep)");
    }
    int fd = openat(srcdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        mi_skip(c, "the directory cannot be listed on the host");
        return 0;
    }
    ckpt_paths_t names = {0};
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            vec_push(&names, xstrdup(e->d_name));
    closedir(d);
    if (names.n)
        qsort(names.v, names.n, sizeof *names.v, mi_cmp_str);
    int rc = 0;
    for (size_t i = 0; i < names.n; i++) {
        if (rc == 0) {
            size_t ka = c->abs.len, kr = c->rel.len;
            buf_printf(&c->abs, "/%s", names.v[i]);
            buf_printf(&c->rel, "%s%s", c->rel.len ? "/" : "", names.v[i]);
            rc = copy_entry(c, srcdir, names.v[i], dstdir, depth);
            buf_truncate(&c->abs, ka);
            buf_truncate(&c->rel, kr);
        }
        free(names.v[i]);
    }
    vec_free(&names);
    return rc;
}

/* The source, opened beneath its allowlisted directory. */
static int open_source(int rootfd, const char *rel)
{
    if (!*rel)
        return openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return beneath_open(rootfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
}

int mountin_copy(const mountin_req_t *r, mountin_res_t *res, char **err)
{
    memset(res, 0, sizeof *res);
    int rootfd = -1, src = -1, pfd = -1;
    char *rel = NULL, *root = NULL, *dup = NULL;
    int rc = -1;
    if (!sessfs_locate(r->source, r->allow, r->nallow, true, &rootfd, &rel, &root, err))
        return -1;
    res->source = *rel ? xasprintf("%s%s%s", root, strcmp(root, "/") ? "/" : "", rel) : xstrdup(root);
    src = open_source(rootfd, rel);
    struct stat st;
    if (src < 0 || fstat(src, &st) < 0) {
        *err = xasprintf("cannot open \"%s\" beneath \"%s\": %s", rel, root,
                         errno == ELOOP || errno == EXDEV
                             ? "a symlink is in the way (it changed after it was resolved)"
                             : strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        *err = xasprintf("\"%s\" is not a regular file or a directory", res->source);
        goto out;
    }
    cp_t c = {.r = r, .res = res};
    if ((r->readable && !r->readable(r->ctx, res->source)) || !sandbox_may_read(&c, &st)) {
        *err = xasprintf("\"%s\" is hidden by the policy: the sandbox may not read it, so it "
                         "is not mounted",
                         res->source);
        goto out;
    }
    const char *parent, *name;
    beneath_split(r->target, &dup, &parent, &name);
    pfd = beneath_open_dir(r->ws_fd, parent, true);
    if (pfd < 0) {
        *err = xasprintf("cannot make the target's directory \"%s\" in the workspace: %s", parent,
                         errno == ELOOP || errno == EXDEV ? "a symlink is in the way" : strerror(errno));
        goto out;
    }
    struct stat tst;
    if (fstatat(pfd, name, &tst, AT_SYMLINK_NOFOLLOW) == 0) {
        *err = xasprintf("the target \"%s\" exists in the workspace already: choose another "
                         "target, or remove it first",
                         r->target);
        goto out;
    }
    buf_adds(&c.abs, res->source);
    if (S_ISREG(st.st_mode)) {
        rc = copy_open_file(&c, src, &st, pfd, name); /* the fd opened beneath the allowlist */
    } else {
        int out = -1;
        if (mkdirat(pfd, name, 0700) < 0 ||
            (out = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
            rc = mi_fail(&c, "create the target directory");
        } else {
            rc = copy_dir(&c, src, out, 0);
            if (rc == 0 && (!mi_give(&c, out) || fchmod(out, (st.st_mode & 0777) | 0700) < 0))
                rc = mi_fail(&c, "set the mode of");
        }
        if (out >= 0)
            close(out);
    }
    if (rc < 0) {
        if (c.err) {
            *err = c.err;
            c.err = NULL;
        }
        tree_remove(pfd, name); /* nothing half-copied stays */
    }
    free(c.err);
    buf_free(&c.abs);
    buf_free(&c.rel);
out:
    if (pfd >= 0)
        close(pfd);
    if (src >= 0)
        close(src);
    if (rootfd >= 0)
        close(rootfd);
    free(dup);
    free(rel);
    free(root);
    return rc;
}

void mountin_res_free(mountin_res_t *res)
{
    sessfs_skips_free(&res->skipped);
    free(res->source);
}
