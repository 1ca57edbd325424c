/* ckpt.c — the checkpoint store, the history and the workspace walk (see
 * ckpt.h). Writing a checkpoint back into a workspace, diffs and file
 * listings are in ckpt_io.c; snapshots (bundles) in ckpt_bundle.c.
 */
#include "ckpt_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"

/* ---- libgit2 set-up ---------------------------------------------------------------- */

static pthread_once_t git_once = PTHREAD_ONCE_INIT;

static void git_setup(void)
{
    git_libgit2_init();
    /* Only the store's own config is read: no global, XDG or system file
     * of whoever runs drun-mcp changes how objects are written. */
    static const int levels[] = {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
                                 GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "");
    /* Objects are only ever read back by this process: skip re-hashing
     * what it reads, and keep the fsync-free default. */
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    /* libgit2 keeps a process-wide cache of parsed objects, 256 MiB by
     * default: a long-lived server with many sessions would hold trees and
     * commits it reads once per checkpoint. The stat cache (ckpt_io.c) is
     * what keeps an unchanged workspace cheap, not this one: keep it small. */
    git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)(2 << 20));
}

char *ckpt_git_error(const char *what)
{
    const git_error *e = git_error_last();
    return xasprintf("%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

/* ---- the shared store ------------------------------------------------------------------ */

/* Opens objects_fd/family (made when create is set) and takes a shared lock
 * on its .lock: the start-up sweep (sessions.c) removes only stores nobody
 * locks. */
static ckpt_store_t *store_open(int objects_fd, const char *objects_path, const char *family,
                                bool create, char **err)
{
    pthread_once(&git_once, git_setup);
    if (create && mkdirat(objects_fd, family, 0700) < 0) {
        *err = xasprintf("cannot create the checkpoint store %s/%s: %s", objects_path, family,
                         strerror(errno));
        return NULL;
    }
    ckpt_store_t *st = xcalloc(1, sizeof *st);
    st->refs = 1;
    st->lock_fd = -1;
    st->family = xstrdup(family);
    st->path = xasprintf("%s/%s", objects_path, family);
    st->objects_fd = fcntl(objects_fd, F_DUPFD_CLOEXEC, 3);
    int dfd = openat(objects_fd, family, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        st->lock_fd = openat(dfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        close(dfd);
    }
    if (st->objects_fd < 0 || st->lock_fd < 0 || flock(st->lock_fd, LOCK_SH) < 0) {
        *err = xasprintf("cannot open the checkpoint store %s: %s", st->path, strerror(errno));
        goto fail;
    }
    git_repository *repo = NULL;
    if (create && git_repository_init(&repo, st->path, 1) < 0) {
        *err = ckpt_git_error("cannot initialise the checkpoint store");
        goto fail;
    }
    git_repository_free(repo);
    return st;
fail:
    if (create)
        tree_remove(objects_fd, family);
    ckpt_store_release(st);
    return NULL;
}

void ckpt_store_release(ckpt_store_t *st)
{
    if (!st || atomic_fetch_sub(&st->refs, 1) != 1)
        return;
    /* The last session of the family is gone: so are its objects. A
     * snapshot is a self-contained bundle and does not need them. */
    if (st->objects_fd >= 0 && tree_remove(st->objects_fd, st->family) < 0 && errno != ENOENT)
        fprintf(stderr, "drun-mcp: cannot remove checkpoint store %s: %s\n", st->path,
                strerror(errno));
    if (st->lock_fd >= 0)
        close(st->lock_fd);
    if (st->objects_fd >= 0)
        close(st->objects_fd);
    free(st->family);
    free(st->path);
    free(st);
}

/* ---- ckpt_t ------------------------------------------------------------------------------ */

static ckpt_t *ckpt_on(ckpt_store_t *st, char **err)
{
    ckpt_t *c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->st = st;
    if (git_repository_open_ext(&c->repo, st->path, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL) < 0 ||
        git_repository_odb(&c->odb, c->repo) < 0) {
        *err = ckpt_git_error("cannot open the checkpoint store");
        ckpt_free(c);
        return NULL;
    }
    return c;
}

ckpt_t *ckpt_create(int objects_fd, const char *objects_path, const char *family, char **err)
{
    ckpt_store_t *st = store_open(objects_fd, objects_path, family, true, err);
    return st ? ckpt_on(st, err) : NULL;
}

ckpt_t *ckpt_new_in(ckpt_store_t *st, char **err)
{
    atomic_fetch_add(&st->refs, 1);
    return ckpt_on(st, err);
}

static void paths_free(ckpt_paths_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    vec_free(p);
}

void ckpt_hist_clear(ckpt_hist_t *h)
{
    free(h->info.label);
    free(h->info.tool);
    free(h->info.summary);
    paths_free(&h->info.added);
    paths_free(&h->info.modified);
    paths_free(&h->info.deleted);
}

void ckpt_free(ckpt_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->hist.n; i++)
        ckpt_hist_clear(&c->hist.v[i]);
    vec_free(&c->hist);
    ckpt_node_free(c->cache);
    git_odb_free(c->odb);
    git_repository_free(c->repo);
    ckpt_store_release(c->st);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---- the stat cache ---------------------------------------------------------------------- */

void ckpt_node_free(ckpt_node_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nkids; i++)
        ckpt_node_free(n->kids[i]);
    free(n->kids);
    free(n->name);
    free(n);
}

ckpt_node_t *ckpt_node_new(const char *name, size_t len)
{
    ckpt_node_t *n = xcalloc(1, sizeof *n);
    n->name = xstrndup(name, len);
    return n;
}

void ckpt_node_stat(ckpt_node_t *n, const struct stat *st)
{
    n->dev = st->st_dev;
    n->ino = st->st_ino;
    n->size = st->st_size;
    n->st_mode = st->st_mode;
    n->mtime = st->st_mtim;
    n->ctime = st->st_ctim;
    n->has_stat = true;
}

/* Could the file behind st have changed since n was recorded, judging by
 * its inode alone? A racy entry (changed in the same clock tick as it was
 * read) is always read again: a later write in that tick keeps its times. */
static bool stat_differs(const ckpt_node_t *n, const struct stat *st)
{
    return !n->has_stat || n->racy || n->dev != st->st_dev || n->ino != st->st_ino ||
           n->size != st->st_size || n->st_mode != st->st_mode ||
           n->mtime.tv_sec != st->st_mtim.tv_sec || n->mtime.tv_nsec != st->st_mtim.tv_nsec ||
           n->ctime.tv_sec != st->st_ctim.tv_sec || n->ctime.tv_nsec != st->st_ctim.tv_nsec;
}

/* File times tick with the coarse clock: anything stamped within this much
 * of the walk's start may be written again with the same stamp. */
#define RACY_NS 50000000LL

void ckpt_mark_racy(ckpt_node_t *n, const struct timespec *start)
{
    int64_t s = (int64_t)start->tv_sec * 1000000000LL + start->tv_nsec - RACY_NS;
    int64_t m = (int64_t)n->mtime.tv_sec * 1000000000LL + n->mtime.tv_nsec;
    int64_t ct = (int64_t)n->ctime.tv_sec * 1000000000LL + n->ctime.tv_nsec;
    n->racy = m >= s || ct >= s;
}

/* Cache nodes with the content of tree oid and no stat: every file is read
 * once more on the next walk, but changes are still told apart. */
ckpt_node_t *ckpt_cache_from_tree(git_repository *repo, const git_oid *oid, const char *name)
{
    git_tree *t = NULL;
    if (git_tree_lookup(&t, repo, oid) < 0)
        return NULL;
    ckpt_node_t *n = ckpt_node_new(name, strlen(name));
    n->mode = GIT_FILEMODE_TREE;
    git_oid_cpy(&n->oid, oid);
    size_t cnt = git_tree_entrycount(t);
    n->kids = xcalloc(cnt ? cnt : 1, sizeof *n->kids);
    for (size_t i = 0; i < cnt; i++) {
        const git_tree_entry *e = git_tree_entry_byindex(t, i);
        ckpt_node_t *k;
        if (git_tree_entry_filemode(e) == GIT_FILEMODE_TREE) {
            k = ckpt_cache_from_tree(repo, git_tree_entry_id(e), git_tree_entry_name(e));
            if (!k)
                continue;
        } else {
            k = ckpt_node_new(git_tree_entry_name(e), strlen(git_tree_entry_name(e)));
            k->mode = git_tree_entry_filemode(e);
            git_oid_cpy(&k->oid, git_tree_entry_id(e));
        }
        n->kids[n->nkids++] = k;
    }
    git_tree_free(t);
    ckpt_node_sort(n);
    return n;
}

static int cmp_node_name(const void *a, const void *b)
{
    return strcmp((*(ckpt_node_t *const *)a)->name, (*(ckpt_node_t *const *)b)->name);
}

void ckpt_node_sort(ckpt_node_t *n)
{
    if (n->nkids)
        qsort(n->kids, n->nkids, sizeof *n->kids, cmp_node_name);
}

/* ---- trees, written by hand ------------------------------------------------------------------ */

/* git orders tree entries by name, a directory's name compared as if it
 * ended in '/'. */
static int cmp_git_order(const void *pa, const void *pb)
{
    const ckpt_node_t *a = *(ckpt_node_t *const *)pa, *b = *(ckpt_node_t *const *)pb;
    size_t la = strlen(a->name), lb = strlen(b->name), n = la < lb ? la : lb;
    int c = memcmp(a->name, b->name, n);
    if (c)
        return c;
    unsigned char ca = la > n ? (unsigned char)a->name[n] : (a->mode == GIT_FILEMODE_TREE ? '/' : 0);
    unsigned char cb = lb > n ? (unsigned char)b->name[n] : (b->mode == GIT_FILEMODE_TREE ? '/' : 0);
    return (int)ca - (int)cb;
}

int ckpt_write_tree(git_odb *odb, ckpt_node_t *dir)
{
    ckpt_node_t **order = xcalloc(dir->nkids ? dir->nkids : 1, sizeof *order);
    memcpy(order, dir->kids, dir->nkids * sizeof *order);
    qsort(order, dir->nkids, sizeof *order, cmp_git_order);
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < dir->nkids; i++) {
        buf_printf(&b, "%o %s", (unsigned)order[i]->mode, order[i]->name);
        buf_addc(&b, '\0');
        buf_add(&b, order[i]->oid.id, GIT_OID_RAWSZ);
    }
    free(order);
    int rc = git_odb_write(&dir->oid, odb, b.p ? b.p : "", b.len, GIT_OBJECT_TREE);
    buf_free(&b);
    dir->mode = GIT_FILEMODE_TREE;
    return rc;
}

/* ---- the walk ------------------------------------------------------------------------------- */

#define WALK_DEPTH_MAX 256

typedef struct walk {
    ckpt_t *c;
    struct timespec start; /* coarse wall clock at the start */
    ckpt_paths_t added, modified, deleted;
    buf_t rel;             /* the path being visited, workspace-relative */
    char *err;
} walk_t;

static char *rel_join(walk_t *w, const char *name)
{
    return w->rel.len ? xasprintf("%s/%s", buf_cstr(&w->rel), name) : xstrdup(name);
}

/* Every file below (or at) old, reported into list (a deleted directory). */
static void list_files(walk_t *w, const ckpt_node_t *old, ckpt_paths_t *list)
{
    size_t keep = w->rel.len;
    if (w->rel.len)
        buf_addc(&w->rel, '/');
    buf_adds(&w->rel, old->name);
    if (old->mode == GIT_FILEMODE_TREE) {
        for (size_t i = 0; i < old->nkids; i++)
            list_files(w, old->kids[i], list);
    } else {
        vec_push(list, xstrdup(buf_cstr(&w->rel)));
    }
    buf_truncate(&w->rel, keep);
}

/* Reads regular file or symlink name (lstat st) beneath dirfd into the
 * store; fills n's oid, mode and stat. 0, 1 when it vanished or became
 * something else meanwhile (skipped), -1 with w->err. */
static int read_entry(walk_t *w, int dirfd, const char *name, const struct stat *st, ckpt_node_t *n)
{
    buf_t b = BUF_INIT;
    struct stat fst = *st;
    if (S_ISLNK(st->st_mode)) {
        buf_reserve(&b, (size_t)st->st_size + 1);
        ssize_t len = readlinkat(dirfd, name, b.p, (size_t)st->st_size + 1);
        if (len < 0 || len > st->st_size) {
            buf_free(&b);
            return 1; /* vanished or changed: the next walk sees it */
        }
        b.len = (size_t)len;
        n->mode = GIT_FILEMODE_LINK;
    } else {
        /* O_NOFOLLOW: a file swapped for a symlink since the lstat is not
         * followed; O_NONBLOCK: a FIFO swapped in does not hang the walk. */
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode)) {
            if (fd >= 0)
                close(fd);
            return 1;
        }
        for (;;) {
            buf_reserve(&b, 65536);
            ssize_t r = read(fd, b.p + b.len, 65536);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                w->err = xasprintf("cannot read %s: %s", buf_cstr(&w->rel), strerror(errno));
                close(fd);
                buf_free(&b);
                return -1;
            }
            if (r == 0)
                break;
            b.len += (size_t)r;
        }
        close(fd);
        n->mode = (fst.st_mode & 0100) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
    }
    int rc = git_odb_write(&n->oid, w->c->odb, b.p ? b.p : "", b.len, GIT_OBJECT_BLOB);
    buf_free(&b);
    if (rc < 0) {
        w->err = ckpt_git_error("cannot write to the checkpoint store");
        return -1;
    }
    /* The stat taken before reading: a write during the read changes
     * ctime, so the next walk reads the file again. */
    ckpt_node_stat(n, &fst);
    ckpt_mark_racy(n, &w->start);
    return 0;
}

static int walk_dir(walk_t *w, int dirfd, ckpt_node_t *old, const char *name, int depth,
                    ckpt_node_t **out, bool *changed);

/* Sorted names of the directory behind dirfd (without . and ..). */
static bool list_dir(int dirfd, ckpt_paths_t *names)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            vec_push(names, xstrdup(e->d_name));
    closedir(d);
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One entry of a directory: the new node for it (NULL: nothing to record),
 * with the changes against old (the cached node of that name, or NULL). */
static int walk_entry(walk_t *w, int dirfd, const char *name, ckpt_node_t **oldp, int depth,
                      ckpt_node_t **out, bool *changed)
{
    ckpt_node_t *old = *oldp;
    struct stat st;
    *out = NULL;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT)
            goto gone;
        w->err = xasprintf("cannot stat %s/%s: %s", buf_cstr(&w->rel), name, strerror(errno));
        return -1;
    }
    bool was_dir = old && old->mode == GIT_FILEMODE_TREE;
    if (S_ISDIR(st.st_mode)) {
        int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            goto gone; /* swapped meanwhile, or unreadable: recorded as absent */
        if (old && !was_dir) {
            list_files(w, old, &w->deleted);
            *changed = true;
            old = NULL;
        }
        int rc = walk_dir(w, sub, old, name, depth + 1, out, changed);
        close(sub);
        return rc;
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        goto gone;
    if (old && !was_dir && !stat_differs(old, &st)) {
        *out = old; /* unchanged: the cached node moves to the new tree */
        *oldp = NULL;
        return 0;
    }
    ckpt_node_t *n = ckpt_node_new(name, strlen(name));
    size_t keep = w->rel.len;
    if (w->rel.len)
        buf_addc(&w->rel, '/');
    buf_adds(&w->rel, name);
    int rc = read_entry(w, dirfd, name, &st, n);
    buf_truncate(&w->rel, keep);
    if (rc != 0) {
        ckpt_node_free(n);
        if (rc < 0)
            return -1;
        goto gone;
    }
    if (!old || was_dir) {
        if (was_dir)
            list_files(w, old, &w->deleted);
        vec_push(&w->added, rel_join(w, name));
        *changed = true;
    } else if (old->mode != n->mode || !git_oid_equal(&old->oid, &n->oid)) {
        vec_push(&w->modified, rel_join(w, name));
        *changed = true;
    }
    *out = n;
    return 0;
gone:
    if (old) {
        list_files(w, old, &w->deleted);
        *changed = true;
    }
    return 0;
}

static int walk_dir(walk_t *w, int dirfd, ckpt_node_t *old, const char *name, int depth,
                    ckpt_node_t **out, bool *changed)
{
    *out = NULL;
    if (depth > WALK_DEPTH_MAX) {
        w->err = xasprintf("%s is nested deeper than %d directories", buf_cstr(&w->rel),
                           WALK_DEPTH_MAX);
        return -1;
    }
    ckpt_paths_t names = {0};
    if (!list_dir(dirfd, &names)) {
        vec_free(&names);
        if (old) { /* unreadable now: what it held is reported gone */
            size_t keep = w->rel.len;
            for (size_t i = 0; i < old->nkids; i++)
                list_files(w, old->kids[i], &w->deleted);
            buf_truncate(&w->rel, keep);
            *changed = *changed || old->nkids;
        }
        return 0;
    }
    if (names.n)
        qsort(names.v, names.n, sizeof *names.v, cmp_str);
    size_t keep = w->rel.len;
    if (*name) {
        if (w->rel.len)
            buf_addc(&w->rel, '/');
        buf_adds(&w->rel, name);
    }
    ckpt_node_t *n = ckpt_node_new(name, strlen(name));
    n->kids = xcalloc(names.n ? names.n : 1, sizeof *n->kids);
    bool mine = false; /* did anything in this directory change? */
    size_t oi = 0;
    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        /* old's kids are sorted too: merge. */
        while (old && oi < old->nkids && strcmp(old->kids[oi]->name, names.v[i]) < 0) {
            list_files(w, old->kids[oi], &w->deleted);
            mine = true;
            oi++;
        }
        ckpt_node_t *none = NULL, **oldp = &none;
        if (old && oi < old->nkids && !strcmp(old->kids[oi]->name, names.v[i]))
            oldp = &old->kids[oi++];
        ckpt_node_t *k;
        rc = walk_entry(w, dirfd, names.v[i], oldp, depth, &k, &mine);
        if (k)
            n->kids[n->nkids++] = k;
    }
    for (; rc == 0 && old && oi < old->nkids; oi++) {
        list_files(w, old->kids[oi], &w->deleted);
        mine = true;
    }
    for (size_t i = 0; i < names.n; i++)
        free(names.v[i]);
    vec_free(&names);
    buf_truncate(&w->rel, keep);
    if (rc < 0) {
        ckpt_node_free(n);
        return -1;
    }
    /* A directory with nothing recordable is not recorded (git has no empty
     * directories), except the workspace itself. */
    if (!n->nkids && depth > 0) {
        ckpt_node_free(n);
        *changed = *changed || mine;
        return 0;
    }
    if (!mine && old && old->nkids == n->nkids) {
        git_oid_cpy(&n->oid, &old->oid); /* same entries: same tree */
        n->mode = GIT_FILEMODE_TREE;
    } else if (ckpt_write_tree(w->c->odb, n) < 0) {
        w->err = ckpt_git_error("cannot write to the checkpoint store");
        ckpt_node_free(n);
        return -1;
    }
    *changed = *changed || mine;
    *out = n;
    return 0;
}

/* ---- the history -------------------------------------------------------------------------- */

static void sort_paths(ckpt_paths_t *p)
{
    if (p->n)
        qsort(p->v, p->n, sizeof *p->v, cmp_str);
}

/* One line of summary text: control characters become spaces, at most 500
 * bytes. */
static char *one_line(const char *s)
{
    size_t n = strlen(s);
    if (n > 500)
        n = 500;
    char *r = xstrndup(s, n);
    for (char *p = r; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return r;
}

int ckpt_commit(ckpt_t *c, const git_oid *tree_oid, ckpt_hist_t *h, char **err)
{
    git_tree *tree = NULL;
    git_commit *parent = NULL;
    git_signature *sig = NULL;
    int rc = -1;
    const ckpt_hist_t *prev = c->hist.n ? &c->hist.v[c->hist.n - 1] : NULL;
    char *msg = xasprintf("drun checkpoint %lld\n\ntool: %s\ntime: %lld\nsummary: %s\n",
                          (long long)h->info.id, h->info.tool, (long long)h->info.time_ms,
                          h->info.summary);
    if (git_tree_lookup(&tree, c->repo, tree_oid) < 0 ||
        (prev && git_commit_lookup(&parent, c->repo, &prev->commit) < 0) ||
        git_signature_new(&sig, "drun", "drun@localhost", h->info.time_ms / 1000, 0) < 0 ||
        git_commit_create(&h->commit, c->repo, NULL, sig, sig, NULL, msg, tree, parent ? 1 : 0,
                          (const git_commit **)&parent) < 0) {
        *err = ckpt_git_error("cannot record the checkpoint");
        goto out;
    }
    git_oid_cpy(&h->tree, tree_oid);
    git_oid_tostr(h->info.commit, sizeof h->info.commit, &h->commit);
    rc = 0;
out:
    free(msg);
    git_signature_free(sig);
    git_commit_free(parent);
    git_tree_free(tree);
    return rc;
}

void ckpt_trim(ckpt_t *c, int64_t max_keep)
{
    size_t keep = max_keep < 1 ? 1 : (size_t)max_keep;
    if (c->hist.n <= keep)
        return;
    size_t drop = c->hist.n - keep;
    for (size_t i = 0; i < drop; i++)
        ckpt_hist_clear(&c->hist.v[i]);
    memmove(c->hist.v, c->hist.v + drop, keep * sizeof *c->hist.v);
    c->hist.n = keep;
}

int64_t ckpt_push(ckpt_t *c, const git_oid *tree, const char *tool, const char *summary,
                  ckpt_paths_t *added, ckpt_paths_t *modified, ckpt_paths_t *deleted,
                  int64_t max_keep, char **err)
{
    ckpt_hist_t h = {0};
    h.info.id = c->hist.n ? c->hist.v[c->hist.n - 1].info.id + 1 : c->last_id + 1;
    h.info.tool = xstrdup(tool);
    h.info.summary = one_line(summary ? summary : "");
    h.info.time_ms = ckpt_wall_ms();
    sort_paths(added);
    sort_paths(modified);
    sort_paths(deleted);
    h.info.added = *added;
    h.info.modified = *modified;
    h.info.deleted = *deleted;
    memset(added, 0, sizeof *added);
    memset(modified, 0, sizeof *modified);
    memset(deleted, 0, sizeof *deleted);
    if (ckpt_commit(c, tree, &h, err) < 0) {
        ckpt_hist_clear(&h);
        return -1;
    }
    vec_push(&c->hist, h);
    c->last_id = h.info.id;
    ckpt_trim(c, max_keep);
    return h.info.id;
}

int64_t ckpt_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The cache, rebuilt from the newest checkpoint when a failed walk dropped
 * it (or none was ever made). */
static void ensure_cache(ckpt_t *c)
{
    if (c->cache || !c->hist.n)
        return;
    c->cache = ckpt_cache_from_tree(c->repo, &c->hist.v[c->hist.n - 1].tree, "");
}

int64_t ckpt_record_locked(ckpt_t *c, int ws_fd, const char *tool, const char *summary,
                           bool force, int64_t max_keep, char **err)
{
    ensure_cache(c);
    walk_t w = {.c = c};
    clock_gettime(CLOCK_REALTIME_COARSE, &w.start);
    ckpt_node_t *root = NULL;
    bool changed = false;
    int rc = walk_dir(&w, ws_fd, c->cache, "", 0, &root, &changed);
    int64_t id = 0;
    if (rc < 0) {
        /* The old cache lent nodes to the new tree: drop both; the next
         * walk starts from the newest checkpoint's tree. */
        *err = w.err;
        w.err = NULL;
        ckpt_node_free(c->cache);
        c->cache = NULL;
        id = -1;
    } else {
        ckpt_node_free(c->cache);
        c->cache = root;
        if (changed || force || !c->hist.n)
            id = ckpt_push(c, &root->oid, tool, summary, &w.added, &w.modified, &w.deleted,
                           max_keep, err);
    }
    paths_free(&w.added);
    paths_free(&w.modified);
    paths_free(&w.deleted);
    buf_free(&w.rel);
    free(w.err);
    return id;
}

int64_t ckpt_record(ckpt_t *c, int ws_fd, const char *tool, const char *summary, bool force,
                    int64_t max_keep, char **err)
{
    pthread_mutex_lock(&c->mu);
    int64_t id = ckpt_record_locked(c, ws_fd, tool, summary, force, max_keep, err);
    pthread_mutex_unlock(&c->mu);
    return id;
}

/* ---- looking checkpoints up ---------------------------------------------------------------- */

bool ckpt_label_valid(const char *label)
{
    size_t n = strlen(label);
    /* ".", ".." and "-rf" read as paths or options wherever a label is
     * pasted into a command line */
    if (n == 0 || n > CKPT_LABEL_MAX || label[0] == '.' || label[0] == '-')
        return false;
    bool digits = true;
    for (const char *p = label; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
        if (!ok)
            return false;
        digits = digits && *p >= '0' && *p <= '9';
    }
    return !digits; /* all digits would read as an id */
}

ssize_t ckpt_find_locked(ckpt_t *c, const char *ref, char **err)
{
    if (!ref) {
        if (c->hist.n)
            return (ssize_t)c->hist.n - 1;
        *err = xstrdup("the session has no checkpoint yet");
        return -1;
    }
    bool num = *ref != '\0' && strlen(ref) <= 18;
    for (const char *p = ref; *p && num; p++)
        num = *p >= '0' && *p <= '9';
    long long id = num ? strtoll(ref, NULL, 10) : -1;
    for (size_t i = 0; i < c->hist.n; i++) {
        const ckpt_info_t *in = &c->hist.v[i].info;
        if ((num && in->id == id) || (!num && in->label && !strcmp(in->label, ref)))
            return (ssize_t)i;
    }
    if (!c->hist.n) {
        *err = xstrdup("the session has no checkpoint yet");
    } else {
        *err = xasprintf("no checkpoint %s%s%s: this session's checkpoints are %lld to %lld "
                         "(session_history lists them with their labels)",
                         num ? "" : "labelled \"", ref, num ? "" : "\"",
                         (long long)c->hist.v[0].info.id,
                         (long long)c->hist.v[c->hist.n - 1].info.id);
    }
    return -1;
}

ssize_t ckpt_find(ckpt_t *c, const char *ref, char **err)
{
    pthread_mutex_lock(&c->mu);
    ssize_t i = ckpt_find_locked(c, ref, err);
    pthread_mutex_unlock(&c->mu);
    return i;
}

static void paths_copy(ckpt_paths_t *dst, const ckpt_paths_t *src)
{
    memset(dst, 0, sizeof *dst);
    for (size_t i = 0; i < src->n; i++)
        vec_push(dst, xstrdup(src->v[i]));
}

void ckpt_info_copy(ckpt_info_t *dst, const ckpt_info_t *src)
{
    *dst = *src;
    dst->label = src->label ? xstrdup(src->label) : NULL;
    dst->tool = xstrdup(src->tool);
    dst->summary = xstrdup(src->summary);
    paths_copy(&dst->added, &src->added);
    paths_copy(&dst->modified, &src->modified);
    paths_copy(&dst->deleted, &src->deleted);
}

size_t ckpt_history(ckpt_t *c, ckpt_info_t **out)
{
    pthread_mutex_lock(&c->mu);
    ckpt_info_t *v = xcalloc(c->hist.n ? c->hist.n : 1, sizeof *v);
    for (size_t i = 0; i < c->hist.n; i++)
        ckpt_info_copy(&v[i], &c->hist.v[i].info);
    size_t n = c->hist.n;
    pthread_mutex_unlock(&c->mu);
    *out = v;
    return n;
}

void ckpt_infos_free(ckpt_info_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ckpt_hist_t h = {.info = v[i]};
        ckpt_hist_clear(&h);
    }
    free(v);
}

int64_t ckpt_head(ckpt_t *c)
{
    pthread_mutex_lock(&c->mu);
    int64_t id = c->hist.n ? c->hist.v[c->hist.n - 1].info.id : 0;
    pthread_mutex_unlock(&c->mu);
    return id;
}

bool ckpt_label(ckpt_t *c, const char *ref, const char *label, int64_t *id, char **err)
{
    if (!ckpt_label_valid(label)) {
        *err = xasprintf("label \"%s\" is not accepted: use 1 to 64 letters, digits, '.', '_' "
                         "or '-', not starting with '.' or '-' and not only digits (digits "
                         "name checkpoint ids)",
                         label);
        return false;
    }
    pthread_mutex_lock(&c->mu);
    ssize_t i = ckpt_find_locked(c, ref, err);
    if (i >= 0) {
        for (size_t k = 0; k < c->hist.n; k++)
            if (c->hist.v[k].info.label && !strcmp(c->hist.v[k].info.label, label)) {
                free(c->hist.v[k].info.label);
                c->hist.v[k].info.label = NULL;
            }
        free(c->hist.v[i].info.label);
        c->hist.v[i].info.label = xstrdup(label);
        *id = c->hist.v[i].info.id;
    }
    pthread_mutex_unlock(&c->mu);
    return i >= 0;
}
