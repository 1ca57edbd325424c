/* export.c — session_export: a checkpoint written out to a host directory
 * inside mount_allowlist (see sessfs.h).
 *
 * The content comes from the object store, never from the live workspace
 * (a command still running cannot change it half-way). The output
 * directory is reached from its allowlisted ancestor one component at a time
 * with no symlink followed; each file is written to a fresh temporary name
 * (O_EXCL) and renamed over its destination, so an existing symlink there is
 * replaced, never written through. Files the policy protects (protected
 * names, deny_write) and symlinks are skipped, with the reason.
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

/* the export under way; the policy callback sees it as an export_tree_t */
typedef struct export_tree {
    const export_req_t *r;
    export_res_t *res;
    int outfd;          /* the output directory; -1 in a dry run when it is missing */
    strmap_t kept;      /* paths of the checkpoint that are exported (or refused) */
    strmap_t kept_dirs; /* their ancestors */
    arena_t arena;      /* keys of kept_dirs and held */
    strmap_t held;      /* every path of the checkpoint and its ancestors */
    unsigned tmpn;
} ex_t;

static void ex_hold(ex_t *x, const char *path)
{
    char *k = arena_strdup(&x->arena, path);
    strmap_put(&x->held, k, 1);
    for (char *p = strrchr(k, '/'); p; p = strrchr(k, '/')) {
        k = arena_strndup(&x->arena, k, (size_t)(p - k));
        strmap_put(&x->held, k, 1);
    }
}

static int ex_collect(void *ctx, const char *path, ckpt_kind_t kind, const void *data, size_t len)
{
    (void)kind, (void)data, (void)len;
    ex_hold(ctx, path);
    return 0;
}

bool export_tree_has(const export_tree_t *t, const char *rel, bool *on_host)
{
    const ex_t *x = t;
    if (on_host)
        *on_host = false;
    if (!*rel)
        return true;
    bool held = strmap_get(&x->held, rel) >= 0;
    if (x->outfd < 0)
        return held;
    /* the host entry, any type, with no symlink followed on the way */
    char *dup;
    const char *parent, *name;
    beneath_split(rel, &dup, &parent, &name);
    int pfd = beneath_open_dir(x->outfd, parent, false);
    struct stat st;
    bool host = pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (pfd >= 0)
        close(pfd);
    free(dup);
    if (on_host)
        *on_host = host;
    return host || held;
}

static void ex_skip(ex_t *x, const char *path, const char *reason)
{
    sessfs_skip_t s = {xstrdup(path), xstrdup(reason)};
    vec_push(&x->res->skipped, s);
}

static void ex_keep(ex_t *x, const char *path)
{
    char *k = arena_strdup(&x->arena, path);
    strmap_put(&x->kept, k, 1);
    for (char *p = strrchr(k, '/'); p; p = strrchr(k, '/')) {
        k = arena_strndup(&x->arena, k, (size_t)(p - k));
        strmap_put(&x->kept_dirs, k, 1);
    }
}

static char *host_path(const ex_t *x, const char *rel)
{
    return xasprintf("%s/%s", x->res->output_dir, rel);
}

static const char *ex_refused(ex_t *x, const char *rel, char **owned)
{
    *owned = NULL;
    if (!x->r->refused)
        return NULL;
    char *abs = host_path(x, rel);
    x->r->refused(x->r->ctx, x, rel, abs, owned);
    free(abs);
    return *owned;
}

/* The current content of pfd/name when it is a regular file (for the
 * diff); NULL when it is missing or something else. */
static char *ex_read_old(int pfd, const char *name, size_t *len)
{
    int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    buf_t b = BUF_INIT;
    for (;;) {
        buf_reserve(&b, 65536);
        ssize_t n = read(fd, b.p + b.len, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        b.len += (size_t)n;
    }
    close(fd);
    *len = b.len;
    return buf_detach(&b, NULL);
}

/* Writes data as pfd/name: a new file, then renamed over the old entry. */
static int ex_write_file(ex_t *x, int pfd, const char *name, ckpt_kind_t kind, const void *data,
                         size_t len)
{
    char tmp[64];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, sizeof tmp, ".drun-export.%d.%u", (int)getpid(), x->tmpn++);
        fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    if (fd < 0)
        return -1;
    bool ok = fsutil_write_all(fd, data, len) && fchmod(fd, kind == CKPT_EXEC ? 0755 : 0644) == 0;
    close(fd);
    /* rename replaces a symlink at name itself, never its target */
    if (!ok || renameat(pfd, tmp, pfd, name) < 0) {
        int e = errno;
        unlinkat(pfd, tmp, 0);
        errno = e;
        return -1;
    }
    return 0;
}

static const char *ex_open_why(int e)
{
    if (e == ELOOP || e == EXDEV)
        return "a directory on the way is a symlink on the host (not followed)";
    if (e == ENOTDIR || e == EEXIST)
        return "a file on the host stands where a directory is needed";
    return NULL;
}

static int export_one(void *ctx, const char *path, ckpt_kind_t kind, const void *data, size_t len)
{
    ex_t *x = ctx;
    ex_keep(x, path);
    char *why = NULL;
    if (ex_refused(x, path, &why)) {
        ex_skip(x, path, why);
        free(why);
        return 0;
    }
    if (kind == CKPT_LINK) {
        ex_skip(x, path, "a symbolic link: not exported (it could point anywhere on the host)");
        return 0;
    }
    char *dup;
    const char *parent, *name;
    beneath_split(path, &dup, &parent, &name);
    int pfd = x->outfd < 0 ? -1 : beneath_open_dir(x->outfd, parent, !x->r->dry_run);
    int e = errno;
    if (pfd < 0 && (x->outfd >= 0 && !(x->r->dry_run && e == ENOENT))) {
        const char *w = ex_open_why(e);
        char *msg = w ? xstrdup(w) : xasprintf("its directory cannot be made: %s", strerror(e));
        ex_skip(x, path, msg);
        free(msg);
        free(dup);
        return 0;
    }
    struct stat st;
    if (pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        ex_skip(x, path, "a directory of that name exists on the host");
    } else if (x->r->dry_run) {
        size_t olen = 0;
        char *old = pfd >= 0 ? ex_read_old(pfd, name, &olen) : NULL;
        if (!old || olen != len || memcmp(old, data, len))
            ckpt_diff_buffers(path, old, olen, data, len, &x->res->diff);
        free(old);
        vec_push(&x->res->written, xstrdup(path));
    } else if (ex_write_file(x, pfd, name, kind, data, len) < 0) {
        char *msg = xasprintf("cannot be written: %s", strerror(errno));
        ex_skip(x, path, msg);
        free(msg);
    } else {
        vec_push(&x->res->written, xstrdup(path));
    }
    if (pfd >= 0)
        close(pfd);
    free(dup);
    return 0;
}

/* ---- delete: what the output directory holds and the checkpoint does not -------------- */

static bool ex_in_paths(const export_req_t *r, const char *p, bool dir)
{
    if (!r->npaths)
        return true;
    for (size_t i = 0; i < r->npaths; i++) {
        size_t l = strlen(r->paths[i]);
        if (!strncmp(p, r->paths[i], l) && (p[l] == '\0' || p[l] == '/'))
            return true;
        size_t pl = strlen(p);
        if (dir && !strncmp(r->paths[i], p, pl) && r->paths[i][pl] == '/')
            return true;
    }
    return false;
}

static void remove_extra(ex_t *x, int dirfd, buf_t *rel, int depth)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    ckpt_paths_t names = {0};
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            vec_push(&names, xstrdup(e->d_name));
    closedir(d);
    for (size_t i = 0; i < names.n; i++) {
        const char *name = names.v[i];
        size_t k = rel->len;
        buf_printf(rel, "%s%s", rel->len ? "/" : "", name);
        const char *p = buf_cstr(rel);
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            /* gone meanwhile */
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0 && depth < 256 && ex_in_paths(x->r, p, true)) {
                remove_extra(x, sub, rel, depth + 1);
                /* a directory nothing exported lives in goes when empty */
                if (!x->r->dry_run && strmap_get(&x->kept_dirs, p) < 0 && ex_in_paths(x->r, p, false))
                    unlinkat(dirfd, name, AT_REMOVEDIR);
            }
            if (sub >= 0)
                close(sub);
        } else if (strmap_get(&x->kept, p) < 0 && ex_in_paths(x->r, p, false) &&
                   strncmp(name, ".drun-export.", 13)) {
            char *why = NULL;
            if (ex_refused(x, p, &why)) {
                char *msg = xasprintf("not removed: %s", why);
                ex_skip(x, p, msg);
                free(msg);
            } else if (x->r->dry_run) {
                size_t olen = 0;
                char *old = ex_read_old(dirfd, name, &olen);
                ckpt_diff_buffers(p, old ? old : "", olen, NULL, 0, &x->res->diff);
                free(old);
                vec_push(&x->res->removed, xstrdup(p));
            } else if (unlinkat(dirfd, name, 0) == 0) {
                vec_push(&x->res->removed, xstrdup(p));
            } else {
                char *msg = xasprintf("cannot be removed: %s", strerror(errno));
                ex_skip(x, p, msg);
                free(msg);
            }
            free(why);
        }
        buf_truncate(rel, k);
        free(names.v[i]);
    }
    vec_free(&names);
}

/* ---- the whole export ---------------------------------------------------------------- */

int export_run(ckpt_t *c, const export_req_t *r, export_res_t *res, char **err)
{
    memset(res, 0, sizeof *res);
    int rootfd = -1;
    char *rel = NULL, *root = NULL;
    /* an unknown checkpoint is refused before any directory is made */
    if (ckpt_find(c, r->checkpoint, err) < 0)
        return -1;
    if (!sessfs_locate(r->output_dir, r->allow, r->nallow, false, &rootfd, &rel, &root, err))
        return -1;
    ex_t x = {.r = r, .res = res, .outfd = -1};
    res->output_dir = *rel ? xasprintf("%s%s%s", root, strcmp(root, "/") ? "/" : "", rel)
                           : xstrdup(root);
    int rc = -1;
    /* Every component below the allowlisted directory opened with no
     * symlink followed: a symlinked output_dir is refused, not followed. */
    x.outfd = beneath_open_dir(rootfd, rel, !r->dry_run);
    if (x.outfd < 0 && !(r->dry_run && errno == ENOENT)) {
        *err = xasprintf("output_dir \"%s\" cannot be opened: %s", r->output_dir,
                         errno == ELOOP || errno == EXDEV
                             ? "it is, or passes through, a symlink (not followed: give the "
                               "real directory)"
                             : strerror(errno));
        goto out;
    }
    /* what the checkpoint holds, so that a repository it builds is seen
     * before its first file lands on the host */
    if (ckpt_files(c, r->checkpoint, NULL, 0, ex_collect, &x, err) < 0 ||
        ckpt_files(c, r->checkpoint, r->paths, r->npaths, export_one, &x, err) < 0)
        goto out;
    if (r->delete_extra && x.outfd >= 0) {
        buf_t relb = BUF_INIT;
        remove_extra(&x, x.outfd, &relb, 0);
        buf_free(&relb);
    }
    rc = 0;
out:
    if (x.outfd >= 0)
        close(x.outfd);
    strmap_free(&x.kept);
    strmap_free(&x.kept_dirs);
    strmap_free(&x.held);
    arena_free(&x.arena);
    close(rootfd);
    free(rel);
    free(root);
    return rc;
}

void export_res_free(export_res_t *res)
{
    for (size_t i = 0; i < res->written.n; i++)
        free(res->written.v[i]);
    vec_free(&res->written);
    for (size_t i = 0; i < res->removed.n; i++)
        free(res->removed.v[i]);
    vec_free(&res->removed);
    sessfs_skips_free(&res->skipped);
    buf_free(&res->diff);
    free(res->output_dir);
}
