/* ckpt_io.c — checkpoints going out: written back into a workspace (fork,
 * rollback, restore), listed file by file (export) and compared (diff).
 * Every write into a workspace goes through directory fds with O_NOFOLLOW
 * and O_EXCL: a sandboxed command racing a rollback cannot redirect it. */
#include "ckpt_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"

/* ---- writing a tree into a workspace ---------------------------------------------------- */

typedef struct co {
    ckpt_t *c;
    const ckpt_owner_t *own;
    struct timespec start;
    buf_t rel;
    char *err;
} co_t;

static bool co_give(const co_t *co, int dirfd, const char *name)
{
    if (!co->own || co->own->uid == (uid_t)-1)
        return true;
    return fchownat(dirfd, name, co->own->uid, co->own->gid, AT_SYMLINK_NOFOLLOW) == 0;
}

static int co_fail(co_t *co, const char *name, const char *what)
{
    if (!co->err)
        co->err = xasprintf("cannot %s %s%s%s in the workspace: %s", what, buf_cstr(&co->rel),
                            co->rel.len ? "/" : "", name, strerror(errno));
    return -1;
}

/* Writes blob e as dirfd/name; fills n. */
static int co_file(co_t *co, int dirfd, const git_tree_entry *e, ckpt_node_t *n)
{
    const char *name = git_tree_entry_name(e);
    git_filemode_t mode = git_tree_entry_filemode(e);
    git_blob *blob = NULL;
    if (git_blob_lookup(&blob, co->c->repo, git_tree_entry_id(e)) < 0) {
        if (!co->err)
            co->err = ckpt_git_error("cannot read the checkpoint store");
        return -1;
    }
    const void *data = git_blob_rawcontent(blob);
    size_t len = (size_t)git_blob_rawsize(blob);
    struct stat st;
    int rc = 0;
    if (mode == GIT_FILEMODE_LINK) {
        char *target = xstrndup(data, len);
        if (symlinkat(target, dirfd, name) < 0 || !co_give(co, dirfd, name) ||
            fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            rc = co_fail(co, name, "create the symlink");
        free(target);
    } else {
        /* O_EXCL|O_NOFOLLOW: whatever a command put there meanwhile is
         * neither followed nor overwritten; the call fails instead. */
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
        if (fd < 0 || !fsutil_write_all(fd, data, len) ||
            (co->own && co->own->uid != (uid_t)-1 && fchown(fd, co->own->uid, co->own->gid) < 0) ||
            fchmod(fd, mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644) < 0 ||
            fstat(fd, &st) < 0)
            rc = co_fail(co, name, "write");
        if (fd >= 0)
            close(fd);
    }
    git_blob_free(blob);
    if (rc == 0) {
        n->mode = mode;
        git_oid_cpy(&n->oid, git_tree_entry_id(e));
        ckpt_node_stat(n, &st);
        ckpt_mark_racy(n, &co->start);
    }
    return rc;
}

static int co_tree(co_t *co, const git_oid *oid, int dirfd, ckpt_node_t *dir, int depth)
{
    git_tree *t = NULL;
    if (depth > 256 || git_tree_lookup(&t, co->c->repo, oid) < 0) {
        if (!co->err)
            co->err = ckpt_git_error("cannot read the checkpoint store");
        return -1;
    }
    size_t cnt = git_tree_entrycount(t);
    dir->kids = xcalloc(cnt ? cnt : 1, sizeof *dir->kids);
    dir->mode = GIT_FILEMODE_TREE;
    git_oid_cpy(&dir->oid, oid);
    int rc = 0;
    for (size_t i = 0; i < cnt && rc == 0; i++) {
        const git_tree_entry *e = git_tree_entry_byindex(t, i);
        const char *name = git_tree_entry_name(e);
        if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
            co->err = xasprintf("the checkpoint store holds a bad name in %s", buf_cstr(&co->rel));
            rc = -1;
            break;
        }
        ckpt_node_t *n = ckpt_node_new(name, strlen(name));
        dir->kids[dir->nkids++] = n;
        if (git_tree_entry_filemode(e) != GIT_FILEMODE_TREE) {
            rc = co_file(co, dirfd, e, n);
            continue;
        }
        int sub = -1;
        if (mkdirat(dirfd, name, 0755) < 0 || !co_give(co, dirfd, name) ||
            (sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
            rc = co_fail(co, name, "create the directory");
            break;
        }
        size_t keep = co->rel.len;
        if (co->rel.len)
            buf_addc(&co->rel, '/');
        buf_adds(&co->rel, name);
        rc = co_tree(co, git_tree_entry_id(e), sub, n, depth + 1);
        buf_truncate(&co->rel, keep);
        close(sub);
    }
    git_tree_free(t);
    ckpt_node_sort(dir);
    return rc;
}

/* Removes every entry of the directory behind dirfd. */
static int empty_dir(int dirfd, char **err)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        *err = xasprintf("cannot list the workspace: %s", strerror(errno));
        return -1;
    }
    VEC(char *) names = {0};
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            vec_push(&names, xstrdup(e->d_name));
    closedir(d);
    int rc = 0;
    for (size_t i = 0; i < names.n; i++) {
        if (rc == 0 && tree_remove(dirfd, names.v[i]) < 0 && errno != ENOENT) {
            *err = xasprintf("cannot empty the workspace (%s): %s", names.v[i], strerror(errno));
            rc = -1;
        }
        free(names.v[i]);
    }
    vec_free(&names);
    return rc;
}

int ckpt_checkout_locked(ckpt_t *c, const git_oid *tree, int ws_fd, const ckpt_owner_t *own,
                         char **err)
{
    ckpt_node_free(c->cache);
    c->cache = NULL;
    if (empty_dir(ws_fd, err) < 0)
        return -1;
    co_t co = {.c = c, .own = own};
    clock_gettime(CLOCK_REALTIME_COARSE, &co.start);
    ckpt_node_t *root = ckpt_node_new("", 0);
    int rc = co_tree(&co, tree, ws_fd, root, 0);
    buf_free(&co.rel);
    if (rc < 0) {
        ckpt_node_free(root); /* the cache is rebuilt from the store next time */
        *err = co.err;
        return -1;
    }
    c->cache = root;
    return 0;
}

/* ---- changes between two trees ----------------------------------------------------------- */

/* The files added, modified and deleted from tree a (NULL: empty) to b. */
int ckpt_tree_changes(ckpt_t *c, const git_oid *a, const git_oid *b, ckpt_paths_t *added,
                      ckpt_paths_t *modified, ckpt_paths_t *deleted)
{
    git_tree *ta = NULL, *tb = NULL;
    git_diff *d = NULL;
    int rc = -1;
    if ((a && git_tree_lookup(&ta, c->repo, a) < 0) || git_tree_lookup(&tb, c->repo, b) < 0 ||
        git_diff_tree_to_tree(&d, c->repo, ta, tb, NULL) < 0)
        goto out;
    for (size_t i = 0; i < git_diff_num_deltas(d); i++) {
        const git_diff_delta *dl = git_diff_get_delta(d, i);
        switch (dl->status) {
        case GIT_DELTA_ADDED: vec_push(added, xstrdup(dl->new_file.path)); break;
        case GIT_DELTA_DELETED: vec_push(deleted, xstrdup(dl->old_file.path)); break;
        default: vec_push(modified, xstrdup(dl->new_file.path)); break;
        }
    }
    rc = 0;
out:
    git_diff_free(d);
    git_tree_free(ta);
    git_tree_free(tb);
    return rc;
}

/* ---- fork and rollback ------------------------------------------------------------------- */

ckpt_t *ckpt_fork(ckpt_t *src, const char *ref, int ws_fd, const ckpt_owner_t *own, char **err)
{
    ckpt_t *c = ckpt_new_in(src->st, err);
    if (!c)
        return NULL;
    pthread_mutex_lock(&src->mu);
    ssize_t idx = ckpt_find_locked(src, ref, err);
    for (ssize_t i = 0; i <= idx; i++) {
        ckpt_hist_t h = src->hist.v[i];
        ckpt_info_copy(&h.info, &src->hist.v[i].info);
        vec_push(&c->hist, h);
    }
    pthread_mutex_unlock(&src->mu);
    if (idx < 0) {
        ckpt_free(c);
        return NULL;
    }
    c->last_id = c->hist.v[c->hist.n - 1].info.id;
    pthread_mutex_lock(&c->mu);
    int rc = ckpt_checkout_locked(c, &c->hist.v[c->hist.n - 1].tree, ws_fd, own, err);
    pthread_mutex_unlock(&c->mu);
    if (rc < 0) {
        ckpt_free(c);
        return NULL;
    }
    return c;
}

static void paths_release(ckpt_paths_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    vec_free(p);
}

int64_t ckpt_rollback(ckpt_t *c, int ws_fd, const char *ref, const ckpt_owner_t *own,
                      int64_t max_keep, char **err)
{
    pthread_mutex_lock(&c->mu);
    int64_t id = -1;
    ssize_t idx = ckpt_find_locked(c, ref, err);
    if (idx < 0)
        goto out;
    git_oid target = c->hist.v[idx].tree;
    int64_t target_id = c->hist.v[idx].info.id;
    /* What the workspace holds now and no checkpoint has yet is kept
     * first: a rollback loses nothing. */
    if (ckpt_record_locked(c, ws_fd, "session_rollback", "changes found before the rollback",
                           false, max_keep < 2 ? 2 : max_keep, err) < 0)
        goto out;
    git_oid head = c->hist.v[c->hist.n - 1].tree;
    ckpt_paths_t a = {0}, m = {0}, d = {0};
    if (ckpt_tree_changes(c, &head, &target, &a, &m, &d) < 0) {
        *err = ckpt_git_error("cannot compare the checkpoints");
    } else if (ckpt_checkout_locked(c, &target, ws_fd, own, err) == 0) {
        char *sum = xasprintf("rolled back to checkpoint %lld", (long long)target_id);
        id = ckpt_push(c, &target, "session_rollback", sum, &a, &m, &d, max_keep, err);
        free(sum);
    }
    paths_release(&a);
    paths_release(&m);
    paths_release(&d);
out:
    pthread_mutex_unlock(&c->mu);
    return id;
}

/* ---- files of a checkpoint ---------------------------------------------------------------- */

/* Is path one of paths, or below one? */
static bool wanted(const char *path, char *const *paths, size_t n)
{
    if (!n)
        return true;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(paths[i]);
        if (!strncmp(path, paths[i], l) && (path[l] == '\0' || path[l] == '/'))
            return true;
    }
    return false;
}

/* Could a wanted path lie below directory dir? */
static bool wanted_below(const char *dir, char *const *paths, size_t n)
{
    if (wanted(dir, paths, n))
        return true;
    size_t l = strlen(dir);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(paths[i], dir, l) && paths[i][l] == '/')
            return true;
    return false;
}

typedef struct files {
    ckpt_t *c;
    char *const *paths;
    size_t npaths;
    ckpt_file_fn fn;
    void *ctx;
    buf_t rel;
    char *err;
} files_t;

static int files_tree(files_t *f, const git_oid *oid, int depth)
{
    git_tree *t = NULL;
    if (depth > 256 || git_tree_lookup(&t, f->c->repo, oid) < 0) {
        f->err = ckpt_git_error("cannot read the checkpoint store");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < git_tree_entrycount(t) && rc == 0; i++) {
        const git_tree_entry *e = git_tree_entry_byindex(t, i);
        size_t keep = f->rel.len;
        if (f->rel.len)
            buf_addc(&f->rel, '/');
        buf_adds(&f->rel, git_tree_entry_name(e));
        const char *path = buf_cstr(&f->rel);
        git_filemode_t mode = git_tree_entry_filemode(e);
        if (mode == GIT_FILEMODE_TREE) {
            if (wanted_below(path, f->paths, f->npaths))
                rc = files_tree(f, git_tree_entry_id(e), depth + 1);
        } else if (wanted(path, f->paths, f->npaths)) {
            git_blob *b = NULL;
            if (git_blob_lookup(&b, f->c->repo, git_tree_entry_id(e)) < 0) {
                f->err = ckpt_git_error("cannot read the checkpoint store");
                rc = -1;
            } else {
                ckpt_kind_t k = mode == GIT_FILEMODE_LINK              ? CKPT_LINK
                                : mode == GIT_FILEMODE_BLOB_EXECUTABLE ? CKPT_EXEC
                                                                       : CKPT_FILE;
                rc = f->fn(f->ctx, path, k, git_blob_rawcontent(b), (size_t)git_blob_rawsize(b));
                git_blob_free(b);
            }
        }
        buf_truncate(&f->rel, keep);
    }
    git_tree_free(t);
    return rc;
}

int ckpt_files(ckpt_t *c, const char *ref, char *const *paths, size_t npaths, ckpt_file_fn fn,
               void *ctx, char **err)
{
    pthread_mutex_lock(&c->mu);
    ssize_t idx = ckpt_find_locked(c, ref, err);
    int rc = -1;
    if (idx >= 0) {
        files_t f = {.c = c, .paths = paths, .npaths = npaths, .fn = fn, .ctx = ctx};
        git_oid tree = c->hist.v[idx].tree;
        rc = files_tree(&f, &tree, 0);
        if (rc < 0 && f.err) {
            *err = f.err;
            f.err = NULL;
        }
        free(f.err);
        buf_free(&f.rel);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ---- diffs -------------------------------------------------------------------------------- */

typedef struct print {
    buf_t *out;
    size_t max;
    bool truncated;
} print_t;

static int print_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
                      void *payload)
{
    (void)d;
    (void)h;
    print_t *p = payload;
    if (p->out->len >= p->max) {
        p->truncated = true;
        return 1; /* stops the print */
    }
    if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
        l->origin == GIT_DIFF_LINE_DELETION)
        buf_addc(p->out, l->origin);
    buf_add(p->out, l->content, l->content_len);
    return 0;
}

bool ckpt_diff(ckpt_t *c, const char *from, const char *to, char *const *paths, size_t npaths,
               size_t max_bytes, buf_t *out, char **err)
{
    pthread_mutex_lock(&c->mu);
    bool ok = false;
    git_tree *ta = NULL, *tb = NULL;
    git_diff *d = NULL;
    ssize_t ti = ckpt_find_locked(c, to, err), fi = -1;
    if (ti < 0 || (from && (fi = ckpt_find_locked(c, from, err)) < 0))
        goto out;
    if (!from)
        fi = ti - 1; /* -1: the first checkpoint, against nothing */
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = GIT_DIFF_DISABLE_PATHSPEC_MATCH;
    o.pathspec.strings = (char **)paths;
    o.pathspec.count = npaths;
    if ((fi >= 0 && git_tree_lookup(&ta, c->repo, &c->hist.v[fi].tree) < 0) ||
        git_tree_lookup(&tb, c->repo, &c->hist.v[ti].tree) < 0 ||
        git_diff_tree_to_tree(&d, c->repo, ta, tb, &o) < 0) {
        *err = ckpt_git_error("cannot compare the checkpoints");
        goto out;
    }
    print_t p = {.out = out, .max = out->len + max_bytes};
    int rc = git_diff_print(d, GIT_DIFF_FORMAT_PATCH, print_line, &p);
    if (rc < 0 && !p.truncated) {
        *err = ckpt_git_error("cannot print the diff");
        goto out;
    }
    if (p.truncated)
        buf_adds(out, "\n[diff truncated]\n");
    ok = true;
out:
    git_diff_free(d);
    git_tree_free(ta);
    git_tree_free(tb);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

void ckpt_diff_buffers(const char *path, const void *old, size_t oldlen, const void *new_,
                       size_t newlen, buf_t *out)
{
    git_patch *p = NULL;
    if (git_patch_from_buffers(&p, old, oldlen, old ? path : NULL, new_, newlen,
                               new_ ? path : NULL, NULL) < 0) {
        buf_printf(out, "(cannot compare %s)\n", path);
        return;
    }
    print_t pr = {.out = out, .max = (size_t)-1};
    git_patch_print(p, print_line, &pr);
    git_patch_free(p);
}
