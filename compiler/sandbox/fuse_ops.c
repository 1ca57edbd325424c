/* fuse_ops.c — the access-time layer's filesystem (SPEC §16): a FUSE
 * passthrough over one granted tree that asks the policy at every access.
 *
 * Design.
 *  - The layer is bound into the sandbox in place of the tree, so every
 *    name the command reaches below the tree comes through here: lookup,
 *    getattr, readdir, open, create, mkdir, mknod, symlink, link, rename
 *    (both ends), unlink, rmdir, setattr and the xattr calls. Each asks
 *    decide_path() (compiler/decide.c), the function the SBPL profile and
 *    explain are held to, with the path of the object in the tree. A
 *    hidden name (level none) is absent: lookup says ENOENT, readdir leaves
 *    it out. A write where the level is read is refused before anything is
 *    done: EACCES when a cap lowered the level, EROFS when the grant itself
 *    is read-only. Nothing is created and then removed.
 *  - The backing tree is touched only by fd. Every node holds an O_PATH
 *    fd of its object, opened with O_NOFOLLOW relative to its parent's fd,
 *    from the tree's root fd down; the calls are the *at() forms with
 *    AT_SYMLINK_NOFOLLOW or AT_EMPTY_PATH, and a file is opened for I/O by
 *    reopening its own fd (/proc/self/fd/N: the object, not a path). No
 *    path string is ever resolved on the host, so a symlink swapped into
 *    the backing tree during the run is a symlink, never a way out: the
 *    sandbox reads its target and resolves it in its own namespace.
 *  - A node knows its parent and its name, so its path follows renames of
 *    any ancestor. Nodes are not shared between names (no inode-number
 *    dedup): a second hard link is a second node, decided by its own path.
 *  - Decisions are cached per node and dropped, all at once, by a
 *    generation counter that every rename and every change of a
 *    repository's structure bumps. The names a structural rule reads
 *    (hooks, config) are decided afresh each time.
 *  - The repository rule (decide.h): D/hooks and D/config are read-only
 *    when D has HEAD, objects/ and refs/. Because a sandbox could write a
 *    config first and complete the structure after, creating HEAD,
 *    objects or refs in a directory that already holds a config or hooks
 *    is refused too.
 *  - Renames of directories: a rename that would carry an existing
 *    protected path to an unprotected one (mv .git x, with .git/hooks in
 *    it), or an unprotected tree into a protected place (mv x .git, with
 *    x/hooks), is refused, as SBPL's unlink denials on the ancestors of
 *    lowered paths refuse it on macOS; so is the rename of any strict
 *    ancestor of a literal cap or of a fixed-head glob's directory.
 *  - The daemon runs as the sandbox's host user (a root runner drops to it
 *    before serving), with default_permissions: the kernel checks modes
 *    against the caller and the backing filesystem against the daemon, so
 *    the layer never gives more than DAC would.
 */
#define FUSE_USE_VERSION 312
#include "fslayer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "decide.h"
#include "glob.h"
#include "path.h"

/* Entry and attribute caching in the kernel (positive entries only). While
 * the run lasts the tree changes through this layer, which the kernel sees
 * (and invalidates) itself; a change made on the host meanwhile shows
 * within this time. */
#define CACHE_SECONDS 60.0

typedef struct lnode {
    struct lnode *parent; /* NULL: the root */
    char *name;           /* its name in parent ("" for the root) */
    int fd;               /* O_PATH|O_NOFOLLOW fd of the backing object */
    mode_t type;          /* S_IFMT bits */
    dev_t dev;
    ino_t ino;
    uint64_t nlookup; /* the kernel's references */
    unsigned kids;    /* nodes whose parent this is */
    bool hashed;      /* in the table under (parent, name) */
    struct lnode *hnext;
    unsigned gen;     /* generation the cached decision is of (0: none) */
    fs_verdict_t v;
} lnode_t;

struct lfs {
    const resolved_t *res;
    roots_t roots;
    char *root_abs;
    size_t root_len;
    lnode_t root;
    pthread_mutex_t mu; /* the table, the nodes' links and counts */
    lnode_t **tab;
    size_t tabn, count;
    atomic_uint gen;
    fsl_log_t *log;
};

typedef struct ldir {
    DIR *dp;
    off_t offset;
    struct dirent *entry;
} ldir_t;

/* ---- nodes ------------------------------------------------------------------------------------------------ */

static lfs_t *FS(fuse_req_t req) { return fuse_req_userdata(req); }

static lnode_t *NODE(fuse_req_t req, fuse_ino_t ino)
{
    return ino == FUSE_ROOT_ID ? &FS(req)->root : (lnode_t *)(uintptr_t)ino;
}

/* What this worker serves, for the daemon's watchdog (fslayer_busy_note). */
#define BUSY(req, op, ino, name) fslayer_busy_note(op, FS(req), NODE(req, ino), name)

static size_t hash_of(const lnode_t *parent, const char *name, size_t n)
{
    size_t h = (size_t)(uintptr_t)parent * 31u;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++) h = h * 131u + *s;
    return h & (n - 1);
}

static void table_grow(lfs_t *fs)
{
    size_t n = fs->tabn ? fs->tabn * 2 : 1024;
    lnode_t **t = xcalloc(n, sizeof *t);
    for (size_t i = 0; i < fs->tabn; i++)
        for (lnode_t *x = fs->tab[i], *nx; x; x = nx) {
            nx = x->hnext;
            size_t h = hash_of(x->parent, x->name, n);
            x->hnext = t[h];
            t[h] = x;
        }
    free(fs->tab);
    fs->tab = t;
    fs->tabn = n;
}

/* Under mu. */
static lnode_t *table_find(lfs_t *fs, lnode_t *parent, const char *name)
{
    if (!fs->tabn) return NULL;
    for (lnode_t *x = fs->tab[hash_of(parent, name, fs->tabn)]; x; x = x->hnext)
        if (x->parent == parent && strcmp(x->name, name) == 0) return x;
    return NULL;
}

static void table_put(lfs_t *fs, lnode_t *x)
{
    if (fs->count * 2 >= fs->tabn) table_grow(fs);
    size_t h = hash_of(x->parent, x->name, fs->tabn);
    x->hnext = fs->tab[h];
    fs->tab[h] = x;
    x->hashed = true;
    fs->count++;
}

static void table_del(lfs_t *fs, lnode_t *x)
{
    if (!x->hashed) return;
    for (lnode_t **pp = &fs->tab[hash_of(x->parent, x->name, fs->tabn)]; *pp; pp = &(*pp)->hnext)
        if (*pp == x) {
            *pp = x->hnext;
            break;
        }
    x->hashed = false;
    fs->count--;
}

/* Frees x and, up the chain, parents left with no reference. Under mu. */
static void node_release(lfs_t *fs, lnode_t *x)
{
    while (x && x != &fs->root && x->nlookup == 0 && x->kids == 0) {
        lnode_t *p = x->parent;
        table_del(fs, x);
        close(x->fd);
        free(x->name);
        free(x);
        if (p) p->kids--;
        x = p;
    }
}

/* The path of node x (plus "/name" when name is set), absolute. Under mu. */
static void node_path_locked(lfs_t *fs, const lnode_t *x, const char *name, buf_t *out)
{
    /* every ancestor, however deep: a path cut short would be decided as
     * another, shallower one (a cap on the deep name missed) */
    size_t n = 0;
    for (const lnode_t *y = x; y && y->parent; y = y->parent) n++;
    const lnode_t **chain = xcalloc(n ? n : 1, sizeof *chain);
    size_t k = 0;
    for (const lnode_t *y = x; y && y->parent && k < n; y = y->parent) chain[k++] = y;
    buf_adds(out, fs->root_abs);
    while (k-- > 0) {
        if (out->len > 1) buf_addc(out, '/');
        buf_adds(out, chain[k]->name);
    }
    free(chain);
    if (name) {
        if (out->len > 1) buf_addc(out, '/');
        buf_adds(out, name);
    }
}

static void node_path(lfs_t *fs, const lnode_t *x, const char *name, buf_t *out)
{
    pthread_mutex_lock(&fs->mu);
    node_path_locked(fs, x, name, out);
    pthread_mutex_unlock(&fs->mu);
}

bool fslayer_fs_node_path_try(lfs_t *fs, const void *node, const char *name, buf_t *out)
{
    /* a second: the lock is held for table work only, never across a call
     * on the backing tree, so longer means it is stuck */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec++;
    if (pthread_mutex_timedlock(&fs->mu, &until) != 0) return false;
    node_path_locked(fs, node, name, out);
    pthread_mutex_unlock(&fs->mu);
    return true;
}

/* ---- decisions ---------------------------------------------------------------------------------------------- */

/* Is dir (absolute, in this tree) a repository candidate: does it hold a
 * HEAD of any type (decide.h)? Git also takes objects/ and refs/ that are
 * symlinks or live behind a commondir, so HEAD alone decides. Looked at
 * beneath the root fd, no symlink followed; anything but "dir or HEAD is
 * absent" answers yes (fail closed: EMFILE, ELOOP, EACCES). */
static bool is_repo(void *ctx, const char *dir)
{
    lfs_t *fs = ctx;
    if (!path_is_under(dir, fs->root_abs)) return false; /* above the tree: not the layer's to make */
    const char *rel = dir[fs->root_len] ? dir + fs->root_len + 1 : ".";
    if (fs->root_len == 1) rel = dir[1] ? dir + 1 : ".";
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int d = (int)syscall(SYS_openat2, fs->root.fd, rel, &how, sizeof how);
    if (d < 0) return errno != ENOENT && errno != ENOTDIR;
    struct stat st;
    bool ok = fstatat(d, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 || (errno != ENOENT && errno != ENOTDIR);
    close(d);
    return ok;
}

static bool structural_name(const char *name) { return strcmp(name, "hooks") == 0 || strcmp(name, "config") == 0; }

static level_t decide_abs(lfs_t *fs, const char *abs, fs_verdict_t *v)
{
    return decide_path(fs->res, &fs->roots, abs, is_repo, fs, v);
}

/* The decision for node x (cached). */
static level_t decide_node(lfs_t *fs, lnode_t *x, fs_verdict_t *v)
{
    unsigned g = atomic_load(&fs->gen);
    pthread_mutex_lock(&fs->mu);
    bool fresh = x->gen == g && !structural_name(x->name);
    if (fresh) *v = x->v;
    pthread_mutex_unlock(&fs->mu);
    if (fresh) return v->level;
    buf_t p = BUF_INIT;
    node_path(fs, x, NULL, &p);
    level_t lv = decide_abs(fs, buf_cstr(&p), v);
    buf_free(&p);
    pthread_mutex_lock(&fs->mu);
    x->v = *v;
    x->gen = g;
    pthread_mutex_unlock(&fs->mu);
    return lv;
}

/* Records a refusal and returns its errno: a hidden name is absent
 * (ENOENT) to a reader, EACCES to a writer; a write under a read-only grant
 * is EROFS; under a cap EACCES. */
static int refuse(lfs_t *fs, const char *op, const char *abs, const fs_verdict_t *v, level_t need)
{
    buf_t why = BUF_INIT;
    decide_rule_text(v, &why);
    fslayer_log_refusal(fs->log, op, abs, buf_cstr(&why));
    buf_free(&why);
    if (v->level == LVL_NONE) return need == LVL_READ ? ENOENT : EACCES;
    if (!v->builtin && v->level == v->grant_level) return EROFS;
    return EACCES;
}

/* 0 when x may be used at need, else the errno (recorded). */
static int check_node(lfs_t *fs, lnode_t *x, const char *op, level_t need)
{
    fs_verdict_t v;
    if (decide_node(fs, x, &v) >= need) return 0;
    buf_t p = BUF_INIT;
    node_path(fs, x, NULL, &p);
    int e = refuse(fs, op, buf_cstr(&p), &v, need);
    buf_free(&p);
    return e;
}

/* Does dirfd hold a name n (no symlink followed)? Yes unless it surely
 * does not (fail closed: an error other than ENOENT counts as a name). */
static bool has(int dirfd, const char *n)
{
    struct stat st;
    return fstatat(dirfd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

/* Would name, made in parent, complete a repository around a config or
 * hooks written before it (decide.h)? */
static bool completes_repo(lfs_t *fs, lnode_t *parent, const char *name)
{
    if (!policy_get(fs->res->pol, S_PROTECT_GIT_HOOKS) && !policy_get(fs->res->pol, S_PROTECT_GIT_CONFIG)) return false;
    if (decide_redirects_repo_name(name)) return true;
    if (!decide_completes_repo_name(name)) return false;
    return has(parent->fd, "config") || has(parent->fd, "hooks");
}

/* The refusal of a name completes_repo() refused, with its reason. */
static int refuse_repo_name(lfs_t *fs, const char *op, const char *abs, const char *name)
{
    fs_verdict_t s = {LVL_READ, LVL_WRITE, NULL,
                      decide_redirects_repo_name(name)
                          ? "protect.git_config (commondir: git would read config and hooks where it points)"
                          : "protect.git_config (HEAD, objects or refs beside a config or hooks)"};
    return refuse(fs, op, abs, &s, LVL_WRITE);
}

/* 0 when name may be made (or replaced) in parent, else the errno. */
static int check_new(lfs_t *fs, lnode_t *parent, const char *name, const char *op)
{
    if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strchr(name, '/')) return EINVAL;
    buf_t p = BUF_INIT;
    node_path(fs, parent, name, &p);
    fs_verdict_t v;
    int e = 0;
    if (decide_abs(fs, buf_cstr(&p), &v) < LVL_WRITE) {
        e = refuse(fs, op, buf_cstr(&p), &v, LVL_WRITE);
    } else if (completes_repo(fs, parent, name)) {
        e = refuse_repo_name(fs, op, buf_cstr(&p), name);
    }
    buf_free(&p);
    return e;
}

/* ---- renames of directories -------------------------------------------------------------------------------- */

/* Does the literal path rest exist beneath dirfd (no symlink followed)? A
 * rest with a wildcard counts as existing (fail closed). */
static bool exists_beneath(int dirfd, const char *rest)
{
    if (glob_has_wildcard(rest) || strchr(rest, '\\')) return true;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, dirfd, rest, &how, sizeof how);
    if (fd < 0) return errno != ENOENT && errno != ENOTDIR;
    close(fd);
    return true;
}

/* Would moving directory dirfd, now or afterwards named base, carry an
 * existing path below it across a cap's boundary? For a cap "**" "/C1/.../Ck"
 * (k >= 2): base matching Ci (i < k) with Ci+1/.../Ck existing below. */
static bool carries_protected(lfs_t *fs, int dirfd, const char *base, const char **which)
{
    for (size_t i = 0; i < fs->res->caps.n; i++) {
        const rrule_t *c = &fs->res->caps.v[i];
        if (!c->glob || !c->anywhere || c->level == LVL_WRITE) continue;
        const char *tail = strstr(c->path, "**/");
        if (!tail) continue;
        tail += 3;
        for (const char *comp = tail; *comp;) {
            const char *slash = strchr(comp, '/');
            if (!slash) break; /* the last component: the path itself, decided by its level */
            char one[256];
            size_t n = (size_t)(slash - comp);
            if (n >= sizeof one) break;
            memcpy(one, comp, n);
            one[n] = '\0';
            /* a "**" inside the tail (.git/modules/STAR-STAR/hooks) matches
             * whatever the directory is renamed to: the rename keeps it
             * where it was, and a repository moved out of modules stays one
             * by its structure */
            bool any = strcmp(one, "**") == 0;
            if (!any && glob_match(one, base) && exists_beneath(dirfd, slash + 1)) {
                *which = c->rule->written;
                return true;
            }
            comp = slash + 1;
        }
    }
    return false;
}

/* Is abs a strict ancestor of a literal cap's path, or of where a
 * fixed-head glob cap can match? (Renaming it would move them.) */
static const rrule_t *ancestor_of_cap(lfs_t *fs, const char *abs)
{
    arena_t a = ARENA_INIT;
    const rrule_t *hit = NULL;
    for (size_t i = 0; i < fs->res->caps.n && !hit; i++) {
        const rrule_t *c = &fs->res->caps.v[i];
        if (c->level == LVL_WRITE || (c->glob && c->anywhere)) continue;
        const char *cabs = lattice_rule_abs(c, &fs->roots, &a);
        if (!cabs) continue;
        bool below = c->glob ? glob_may_match_below(cabs, abs) && !glob_match_prefix(cabs, abs)
                             : path_is_under(cabs, abs) && strcmp(cabs, abs) != 0;
        if (below) hit = c;
    }
    arena_free(&a);
    return hit;
}

/* 0 when directory node x may leave its path src and arrive at dst. */
static int check_dir_move(lfs_t *fs, lnode_t *x, const char *src, const char *dst, const char *dst_base)
{
    const char *which = NULL;
    const char *src_base = strrchr(src, '/') + 1;
    bool carry = carries_protected(fs, x->fd, src_base, &which) || carries_protected(fs, x->fd, dst_base, &which);
    const rrule_t *anc = carry ? NULL : ancestor_of_cap(fs, src);
    if (!carry && !anc) anc = ancestor_of_cap(fs, dst);
    if (!carry && !anc) return 0;
    fs_verdict_t v = {LVL_READ, LVL_WRITE, anc, NULL};
    buf_t why = BUF_INIT;
    if (carry) {
        buf_printf(&why, "a directory holding a protected path (\"%s\") cannot be renamed across it", which);
        fslayer_log_refusal(fs->log, "rename", src, buf_cstr(&why));
    } else {
        decide_rule_text(&v, &why);
        buf_adds(&why, ": an ancestor cannot be renamed");
        fslayer_log_refusal(fs->log, "rename", src, buf_cstr(&why));
    }
    buf_free(&why);
    return EACCES;
}

/* ---- replies ------------------------------------------------------------------------------------------------- */

static int stat_fd(int fd, struct stat *st)
{
    return fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

/* Looks name up in parent: a node for it (new, or the one already there for
 * the same object), its reference counted for the kernel. */
static int do_lookup(lfs_t *fs, lnode_t *parent, const char *name, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strchr(name, '/')) return ENOENT;
    int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno;
    int err = stat_fd(fd, &e->attr);
    if (err) {
        close(fd);
        return err;
    }
    pthread_mutex_lock(&fs->mu);
    lnode_t *x = table_find(fs, parent, name);
    if (x && (x->ino != e->attr.st_ino || x->dev != e->attr.st_dev)) {
        table_del(fs, x); /* replaced in the backing tree: the old node keeps its fd, unnamed */
        x = NULL;
    }
    if (x) {
        close(fd);
    } else {
        x = xcalloc(1, sizeof *x);
        x->parent = parent;
        x->name = xstrdup(name);
        x->fd = fd;
        x->type = e->attr.st_mode & S_IFMT;
        x->dev = e->attr.st_dev;
        x->ino = e->attr.st_ino;
        parent->kids++;
        table_put(fs, x);
    }
    x->nlookup++;
    pthread_mutex_unlock(&fs->mu);
    e->ino = (uintptr_t)x;
    e->attr_timeout = e->entry_timeout = CACHE_SECONDS;
    return 0;
}

/* Reply to a creating call: the new name looked up (a node), or the error. */
static void reply_new(fuse_req_t req, lnode_t *parent, const char *name, int err)
{
    struct fuse_entry_param e;
    if (!err) err = do_lookup(FS(req), parent, name, &e);
    if (err) fuse_reply_err(req, err);
    else fuse_reply_entry(req, &e);
}

/* /proc/self/fd/N for an fd of this process: reopening the object it is. */
static void proc_path(char out[64], int fd) { snprintf(out, 64, "/proc/self/fd/%d", fd); }

/* ---- operations ------------------------------------------------------------------------------------------------ */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    /* splice both ways where the kernel offers it; no writeback cache: a
     * write the layer refused must never be accepted into the page cache */
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
    if (conn->capable & FUSE_CAP_SPLICE_READ) conn->want |= FUSE_CAP_SPLICE_READ;
    if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
    conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

/* The decision for name in p: the cached one of its node when it has one. */
static level_t decide_child(lfs_t *fs, lnode_t *p, const char *name, buf_t *path, fs_verdict_t *v)
{
    unsigned g = atomic_load(&fs->gen);
    pthread_mutex_lock(&fs->mu);
    lnode_t *x = structural_name(name) ? NULL : table_find(fs, p, name);
    bool fresh = x && x->gen == g;
    if (fresh) *v = x->v;
    pthread_mutex_unlock(&fs->mu);
    if (fresh) return v->level;
    return decide_abs(fs, buf_cstr(path), v);
}

/* Is there a grant the policy shows strictly below abs? A directory the
 * policy hides with a grant deeper inside it (deny_read ~/p/secrets,
 * allow_read ~/p/secrets/public) is passed through to reach that grant, as
 * the mount plan mounts the grant inside an empty directory: it can be
 * looked up and listed, and shows only what leads to the grant. */
static bool grant_below(lfs_t *fs, const char *abs)
{
    arena_t a = ARENA_INIT;
    bool found = false;
    for (size_t i = 0; i < fs->res->grants.n && !found; i++) {
        const rrule_t *g = &fs->res->grants.v[i];
        if (g->level == LVL_NONE) continue;
        const char *gabs = lattice_rule_abs(g, &fs->roots, &a);
        found = gabs && strcmp(gabs, abs) != 0 && path_is_under(gabs, abs) &&
                lattice_level_of(fs->res, &fs->roots, gabs, NULL) > LVL_NONE;
    }
    arena_free(&a);
    return found;
}

/* Is name in p shown (looked up, listed)? */
static bool shown(lfs_t *fs, lnode_t *p, const char *name, buf_t *path, fs_verdict_t *v)
{
    return decide_child(fs, p, name, path, v) > LVL_NONE || grant_below(fs, buf_cstr(path));
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    BUSY(req, "lookup", parent, name);
    lfs_t *fs = FS(req);
    lnode_t *p = NODE(req, parent);
    buf_t path = BUF_INIT;
    node_path(fs, p, name, &path);
    fs_verdict_t v;
    unsigned g0 = atomic_load(&fs->gen);
    if (!shown(fs, p, name, &path, &v)) {
        /* absent: no negative entry is cached (timeout 0), so a later
         * create comes here too and is refused as such */
        if (has(p->fd, name)) refuse(fs, "lookup", buf_cstr(&path), &v, LVL_READ);
        buf_free(&path);
        struct fuse_entry_param e = {0};
        fuse_reply_entry(req, &e);
        return;
    }
    buf_free(&path);
    struct fuse_entry_param e;
    int err = do_lookup(fs, p, name, &e);
    if (err == ENOENT) {
        memset(&e, 0, sizeof e);
        fuse_reply_entry(req, &e);
    } else if (err) {
        fuse_reply_err(req, err);
    } else {
        lnode_t *x = (lnode_t *)(uintptr_t)e.ino;
        pthread_mutex_lock(&fs->mu);
        if (x->gen != g0) x->v = v, x->gen = g0; /* the decision just made, for open and the rest */
        pthread_mutex_unlock(&fs->mu);
        fuse_reply_entry(req, &e);
    }
}

static void forget_one(lfs_t *fs, lnode_t *x, uint64_t n)
{
    pthread_mutex_lock(&fs->mu);
    x->nlookup = n > x->nlookup ? 0 : x->nlookup - n;
    node_release(fs, x);
    pthread_mutex_unlock(&fs->mu);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
    BUSY(req, "forget", ino, NULL);
    if (ino != FUSE_ROOT_ID) forget_one(FS(req), NODE(req, ino), n);
    fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
    BUSY(req, "forget", FUSE_ROOT_ID, NULL);
    for (size_t i = 0; i < count; i++)
        if (f[i].ino != FUSE_ROOT_ID) forget_one(FS(req), NODE(req, f[i].ino), f[i].nlookup);
    fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    BUSY(req, "getattr", ino, NULL);
    (void)fi;
    struct stat st;
    int err = stat_fd(NODE(req, ino)->fd, &st);
    if (err) fuse_reply_err(req, err);
    else fuse_reply_attr(req, &st, CACHE_SECONDS);
}

static int setattr_do(lnode_t *x, struct stat *a, int valid, struct fuse_file_info *fi)
{
    char pp[64];
    proc_path(pp, x->fd);
    bool link = S_ISLNK(x->type);
    /* no set-user/group-id bit: the host would run the file as its owner */
    if ((valid & FUSE_SET_ATTR_MODE) && (link ? (errno = EOPNOTSUPP, -1) : chmod(pp, a->st_mode & ~(mode_t)(S_ISUID | S_ISGID))) != 0)
        return errno;
    if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
        uid_t u = valid & FUSE_SET_ATTR_UID ? a->st_uid : (uid_t)-1;
        gid_t g = valid & FUSE_SET_ATTR_GID ? a->st_gid : (gid_t)-1;
        if (fchownat(x->fd, "", u, g, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
    }
    if (valid & FUSE_SET_ATTR_SIZE) {
        int r = fi ? ftruncate((int)fi->fh, a->st_size) : (link ? (errno = EINVAL, -1) : truncate(pp, a->st_size));
        if (r != 0) return errno;
    }
    if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
        struct timespec tv[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
        if (valid & FUSE_SET_ATTR_ATIME_NOW) tv[0].tv_nsec = UTIME_NOW;
        else if (valid & FUSE_SET_ATTR_ATIME) tv[0] = a->st_atim;
        if (valid & FUSE_SET_ATTR_MTIME_NOW) tv[1].tv_nsec = UTIME_NOW;
        else if (valid & FUSE_SET_ATTR_MTIME) tv[1] = a->st_mtim;
        int r = fi ? futimens((int)fi->fh, tv) : link ? utimensat(x->fd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)
                                                      : utimensat(AT_FDCWD, pp, tv, 0);
        if (r != 0) return errno;
    }
    return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *a, int valid, struct fuse_file_info *fi)
{
    BUSY(req, "setattr", ino, NULL);
    lnode_t *x = NODE(req, ino);
    int err = check_node(FS(req), x, "setattr", LVL_WRITE);
    if (!err) err = setattr_do(x, a, valid, fi);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    op_getattr(req, ino, fi);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
    BUSY(req, "readlink", ino, NULL);
    char buf[PATH_MAX + 1];
    ssize_t n = readlinkat(NODE(req, ino)->fd, "", buf, sizeof buf);
    if (n < 0) fuse_reply_err(req, errno);
    else if ((size_t)n >= sizeof buf) fuse_reply_err(req, ENAMETOOLONG);
    else buf[n] = '\0', fuse_reply_readlink(req, buf);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    BUSY(req, "mknod", parent, name);
    lnode_t *p = NODE(req, parent);
    int err = check_new(FS(req), p, name, "mknod");
    if (!err && mknodat(p->fd, name, mode & ~(mode_t)(S_ISUID | S_ISGID), rdev) != 0) err = errno;
    reply_new(req, p, name, err);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    BUSY(req, "mkdir", parent, name);
    lnode_t *p = NODE(req, parent);
    int err = check_new(FS(req), p, name, "mkdir");
    if (!err && mkdirat(p->fd, name, mode & ~(mode_t)(S_ISUID | S_ISGID)) != 0) err = errno;
    if (!err && decide_completes_repo_name(name)) atomic_fetch_add(&FS(req)->gen, 1);
    reply_new(req, p, name, err);
}

static void op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
    BUSY(req, "symlink", parent, name);
    /* a link's target is text: the sandbox resolves it in its own
     * namespace, under the policy; the layer never follows it */
    lnode_t *p = NODE(req, parent);
    int err = check_new(FS(req), p, name, "symlink");
    if (!err && symlinkat(target, p->fd, name) != 0) err = errno;
    reply_new(req, p, name, err);
}

/* Forgets the node of (parent, name) as a name: its object is gone or
 * elsewhere. */
static void unname(lfs_t *fs, lnode_t *parent, const char *name)
{
    pthread_mutex_lock(&fs->mu);
    lnode_t *x = table_find(fs, parent, name);
    if (x) table_del(fs, x);
    pthread_mutex_unlock(&fs->mu);
}

static void remove_common(fuse_req_t req, fuse_ino_t parent, const char *name, bool dir)
{
    BUSY(req, dir ? "rmdir" : "unlink", parent, name);
    lfs_t *fs = FS(req);
    lnode_t *p = NODE(req, parent);
    buf_t path = BUF_INIT;
    node_path(fs, p, name, &path);
    fs_verdict_t v;
    int err = 0;
    if (decide_abs(fs, buf_cstr(&path), &v) < LVL_WRITE) err = refuse(fs, dir ? "rmdir" : "unlink", buf_cstr(&path), &v, LVL_WRITE);
    buf_free(&path);
    if (!err && unlinkat(p->fd, name, dir ? AT_REMOVEDIR : 0) != 0) err = errno;
    if (!err) unname(fs, p, name);
    fuse_reply_err(req, err);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name) { remove_common(req, parent, name, false); }
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name) { remove_common(req, parent, name, true); }

/* The node of (parent, name) for a rename, looked up if the kernel has
 * none (NULL when the name does not exist). Its reference is the caller's
 * (forget_one). */
static lnode_t *rename_node(lfs_t *fs, lnode_t *parent, const char *name)
{
    struct fuse_entry_param e;
    if (do_lookup(fs, parent, name, &e) != 0) return NULL;
    return (lnode_t *)(uintptr_t)e.ino;
}

/* One end of a rename: the object leaving src for dst. */
static int check_move(lfs_t *fs, lnode_t *x, const char *src, const char *dst, const char *dst_base)
{
    fs_verdict_t v;
    if (decide_abs(fs, src, &v) < LVL_WRITE) return refuse(fs, "rename", src, &v, LVL_WRITE);
    if (decide_abs(fs, dst, &v) < LVL_WRITE) return refuse(fs, "rename", dst, &v, LVL_WRITE);
    if (x && S_ISDIR(x->type)) return check_dir_move(fs, x, src, dst, dst_base);
    return 0;
}

/* After a rename: the moved node takes its new name; an exchanged one the old. */
static void rekey(lfs_t *fs, lnode_t *x, lnode_t *np, const char *nn)
{
    if (!x) return;
    table_del(fs, x);
    x->parent->kids--;
    x->parent = np;
    np->kids++;
    free(x->name);
    x->name = xstrdup(nn);
    table_put(fs, x);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
                      unsigned int flags)
{
    BUSY(req, "rename", parent, name);
    lfs_t *fs = FS(req);
    lnode_t *p = NODE(req, parent), *np = NODE(req, newparent);
    if (!*newname || strcmp(newname, ".") == 0 || strcmp(newname, "..") == 0 || strchr(newname, '/')) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    buf_t src = BUF_INIT, dst = BUF_INIT;
    node_path(fs, p, name, &src);
    node_path(fs, np, newname, &dst);
    lnode_t *x = rename_node(fs, p, name), *y = rename_node(fs, np, newname);
    int err = x ? 0 : ENOENT;
    if (!err) err = check_move(fs, x, buf_cstr(&src), buf_cstr(&dst), newname);
    /* an exchange moves the other one back the other way */
    if (!err && (flags & RENAME_EXCHANGE)) err = y ? check_move(fs, y, buf_cstr(&dst), buf_cstr(&src), name) : ENOENT;
    if (!err && completes_repo(fs, np, newname)) err = refuse_repo_name(fs, "rename", buf_cstr(&dst), newname);
    /* an exchange lands an object under the old name too */
    if (!err && (flags & RENAME_EXCHANGE) && completes_repo(fs, p, name))
        err = refuse_repo_name(fs, "rename", buf_cstr(&src), name);
    if (!err && syscall(SYS_renameat2, p->fd, name, np->fd, newname, flags) != 0) err = errno;
    if (!err) {
        pthread_mutex_lock(&fs->mu);
        if (flags & RENAME_EXCHANGE) {
            table_del(fs, y);
            rekey(fs, x, np, newname);
            rekey(fs, y, p, name);
        } else {
            if (y) table_del(fs, y); /* replaced */
            rekey(fs, x, np, newname);
        }
        pthread_mutex_unlock(&fs->mu);
        atomic_fetch_add(&fs->gen, 1); /* every path below the moved one changed */
    }
    if (x) forget_one(fs, x, 1);
    if (y) forget_one(fs, y, 1);
    buf_free(&src);
    buf_free(&dst);
    fuse_reply_err(req, err);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    BUSY(req, "link", newparent, newname);
    /* a second name must not make a protected file writable: its own path
     * must be writable as well as the new one */
    lfs_t *fs = FS(req);
    lnode_t *x = NODE(req, ino), *np = NODE(req, newparent);
    int err = check_node(fs, x, "link", LVL_WRITE);
    if (!err) err = check_new(fs, np, newname, "link");
    char pp[64];
    proc_path(pp, x->fd);
    if (!err && linkat(AT_FDCWD, pp, np->fd, newname, AT_SYMLINK_FOLLOW) != 0) err = errno;
    reply_new(req, np, newname, err);
}

/* Open flags for reopening a node's fd. */
static int reopen_flags(int flags) { return (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW)) | O_CLOEXEC; }

static level_t open_need(int flags)
{
    return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) ? LVL_WRITE : LVL_READ;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    BUSY(req, "open", ino, NULL);
    lnode_t *x = NODE(req, ino);
    int err = check_node(FS(req), x, "open", open_need(fi->flags));
    if (!err && S_ISLNK(x->type)) err = ELOOP;
    /* the kernel opens FIFOs, sockets and devices itself (special inodes);
     * anything but a regular file here is refused, never opened: a FIFO's
     * open would block a worker until a writer came */
    else if (!err && !S_ISREG(x->type)) err = EACCES;
    int fd = -1;
    if (!err) {
        char pp[64];
        proc_path(pp, x->fd);
        if ((fd = open(pp, reopen_flags(fi->flags))) < 0) err = errno;
    }
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uint64_t)fd;
    fi->keep_cache = 1; /* the tree changes only through this layer while the run lasts */
    fuse_reply_open(req, fi);
}

/* Opens name in dirfd for a create, into *fd; 0 or the errno. The kernel
 * asks for a create when its lookup found nothing, but the name may have
 * been made in the backing tree since (by the host, by another session's
 * sandbox sharing the tree): opened as it is then, a FIFO would block this
 * worker until a writer came, and enough of them would wedge the layer. So
 * the open is exclusive first; a name that exists (O_EXCL not asked) is
 * taken only as the regular file it is, reopened through an O_PATH fd of
 * that very object; anything else is refused. */
static int create_open(int dirfd, const char *name, int flags, mode_t mode, int *fd)
{
    int base = (flags & ~(O_NOCTTY | O_CREAT | O_EXCL)) | O_NOFOLLOW | O_CLOEXEC;
    if ((*fd = openat(dirfd, name, base | O_CREAT | O_EXCL, mode)) >= 0) return 0;
    if (errno != EEXIST || (flags & O_EXCL)) return errno;
    int pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    int err = pfd < 0 ? errno : stat_fd(pfd, &st);
    if (!err && !S_ISREG(st.st_mode)) err = S_ISDIR(st.st_mode)   ? EISDIR
                                            : S_ISLNK(st.st_mode) ? ELOOP
                                                                  : EACCES;
    if (!err) {
        char pp[64];
        proc_path(pp, pfd);
        if ((*fd = open(pp, base & ~O_NOFOLLOW)) < 0) err = errno;
    }
    if (pfd >= 0) close(pfd);
    return err;
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
    BUSY(req, "create", parent, name);
    lfs_t *fs = FS(req);
    lnode_t *p = NODE(req, parent);
    int err = check_new(fs, p, name, "create");
    int fd = -1;
    if (!err) err = create_open(p->fd, name, fi->flags, mode & ~(mode_t)(S_ISUID | S_ISGID), &fd);
    if (!err && decide_completes_repo_name(name)) atomic_fetch_add(&fs->gen, 1);
    struct fuse_entry_param e;
    if (!err && (err = do_lookup(fs, p, name, &e)) != 0) close(fd);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uint64_t)fd;
    fi->keep_cache = 1;
    fuse_reply_create(req, &e, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    BUSY(req, "read", ino, NULL);
    (void)ino;
    struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
    buf.buf[0].fd = (int)fi->fh;
    buf.buf[0].pos = off;
    fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off, struct fuse_file_info *fi)
{
    BUSY(req, "write", ino, NULL);
    (void)ino;
    struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
    out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
    out.buf[0].fd = (int)fi->fh;
    out.buf[0].pos = off;
    ssize_t n = fuse_buf_copy(&out, in, 0);
    if (n < 0) fuse_reply_err(req, (int)-n);
    else fuse_reply_write(req, (size_t)n);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    BUSY(req, "flush", ino, NULL);
    (void)ino;
    int fd = dup((int)fi->fh);
    fuse_reply_err(req, fd < 0 ? errno : (close(fd) == 0 ? 0 : errno));
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    BUSY(req, "release", ino, NULL);
    (void)ino;
    close((int)fi->fh);
    fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    BUSY(req, "fsync", ino, NULL);
    (void)ino;
    int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
    fuse_reply_err(req, r == 0 ? 0 : errno);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    BUSY(req, "opendir", ino, NULL);
    lnode_t *x = NODE(req, ino);
    int fd = openat(x->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dp) {
        int e = errno;
        if (fd >= 0) close(fd);
        fuse_reply_err(req, e);
        return;
    }
    ldir_t *d = xcalloc(1, sizeof *d);
    d->dp = dp;
    fi->fh = (uintptr_t)d;
    /* the kernel keeps the listing (what is shown was decided by name, and
     * changes through the layer invalidate it) */
    fi->cache_readdir = 1;
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi)
{
    BUSY(req, "readdir", ino, NULL);
    lfs_t *fs = FS(req);
    lnode_t *x = NODE(req, ino);
    ldir_t *d = (ldir_t *)(uintptr_t)fi->fh;
    char *out = xcalloc(1, size ? size : 1);
    size_t used = 0;
    if (offset != d->offset) {
        seekdir(d->dp, offset);
        d->entry = NULL;
        d->offset = offset;
    }
    buf_t path = BUF_INIT;
    node_path(fs, x, NULL, &path);
    size_t base_len = path.len;
    for (;;) {
        if (!d->entry) {
            errno = 0;
            if (!(d->entry = readdir(d->dp))) break;
        }
        struct dirent *de = d->entry;
        off_t next = de->d_off;
        bool show = true;
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            /* a hidden name is not listed (SPEC §16: absent, not denied) */
            path.len = base_len;
            if (path.len > 1) buf_addc(&path, '/');
            buf_adds(&path, de->d_name);
            show = shown(fs, x, de->d_name, &path, &(fs_verdict_t){0});
        }
        if (show) {
            struct stat st = {.st_ino = de->d_ino, .st_mode = (mode_t)de->d_type << 12};
            size_t n = fuse_add_direntry(req, out + used, size - used, de->d_name, &st, next);
            if (n > size - used) break; /* full: this entry comes next time */
            used += n;
        }
        d->entry = NULL;
        d->offset = next;
    }
    buf_free(&path);
    fuse_reply_buf(req, out, used);
    free(out);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    BUSY(req, "releasedir", ino, NULL);
    (void)ino;
    ldir_t *d = (ldir_t *)(uintptr_t)fi->fh;
    closedir(d->dp);
    free(d);
    fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    BUSY(req, "fsyncdir", ino, NULL);
    (void)ino;
    int fd = dirfd(((ldir_t *)(uintptr_t)fi->fh)->dp);
    int r = datasync ? fdatasync(fd) : fsync(fd);
    fuse_reply_err(req, r == 0 ? 0 : errno);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    BUSY(req, "statfs", ino, NULL);
    struct statvfs sv;
    if (fstatvfs(NODE(req, ino)->fd, &sv) != 0) fuse_reply_err(req, errno);
    else fuse_reply_statfs(req, &sv);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
    BUSY(req, "fallocate", ino, NULL);
    (void)ino;
    fuse_reply_err(req, fallocate((int)fi->fh, mode, off, len) == 0 ? 0 : errno);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
    BUSY(req, "setxattr", ino, NULL);
    lnode_t *x = NODE(req, ino);
    int err = check_node(FS(req), x, "setxattr", LVL_WRITE);
    char pp[64];
    proc_path(pp, x->fd);
    if (!err && S_ISLNK(x->type)) err = EPERM;
    if (!err && setxattr(pp, name, value, size, flags) != 0) err = errno;
    fuse_reply_err(req, err);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    BUSY(req, "removexattr", ino, NULL);
    lnode_t *x = NODE(req, ino);
    int err = check_node(FS(req), x, "removexattr", LVL_WRITE);
    char pp[64];
    proc_path(pp, x->fd);
    if (!err && S_ISLNK(x->type)) err = EPERM;
    if (!err && removexattr(pp, name) != 0) err = errno;
    fuse_reply_err(req, err);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    BUSY(req, "getxattr", ino, NULL);
    lnode_t *x = NODE(req, ino);
    if (S_ISLNK(x->type)) {
        fuse_reply_err(req, ENODATA);
        return;
    }
    char pp[64];
    proc_path(pp, x->fd);
    char *v = size ? xcalloc(1, size) : NULL;
    ssize_t n = getxattr(pp, name, v, size);
    if (n < 0) fuse_reply_err(req, errno);
    else if (size) fuse_reply_buf(req, v, (size_t)n);
    else fuse_reply_xattr(req, (size_t)n);
    free(v);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    BUSY(req, "listxattr", ino, NULL);
    lnode_t *x = NODE(req, ino);
    if (S_ISLNK(x->type)) {
        if (size) fuse_reply_buf(req, NULL, 0);
        else fuse_reply_xattr(req, 0);
        return;
    }
    char pp[64];
    proc_path(pp, x->fd);
    char *v = size ? xcalloc(1, size) : NULL;
    ssize_t n = listxattr(pp, v, size);
    if (n < 0) fuse_reply_err(req, errno);
    else if (size) fuse_reply_buf(req, v, (size_t)n);
    else fuse_reply_xattr(req, (size_t)n);
    free(v);
}

static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
    BUSY(req, "lseek", ino, NULL);
    (void)ino;
    off_t r = lseek((int)fi->fh, off, whence);
    if (r < 0) fuse_reply_err(req, errno);
    else fuse_reply_lseek(req, r);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .forget = op_forget,
    .forget_multi = op_forget_multi,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .readlink = op_readlink,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .symlink = op_symlink,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .rename = op_rename,
    .link = op_link,
    .open = op_open,
    .create = op_create,
    .read = op_read,
    .write_buf = op_write_buf,
    .flush = op_flush,
    .release = op_release,
    .fsync = op_fsync,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .fsyncdir = op_fsyncdir,
    .statfs = op_statfs,
    .fallocate = op_fallocate,
    .setxattr = op_setxattr,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
    .removexattr = op_removexattr,
    .lseek = op_lseek,
};

const void *fslayer_fs_ops(size_t *size)
{
    *size = sizeof ops;
    return &ops;
}

lfs_t *fslayer_fs_new(const resolved_t *r, const roots_t *roots, const char *root_abs, int root_fd, fsl_log_t *log)
{
    lfs_t *fs = xcalloc(1, sizeof *fs);
    fs->res = r;
    fs->roots = *roots;
    fs->root_abs = xstrdup(root_abs);
    fs->root_len = strlen(root_abs);
    fs->root.name = xstrdup("");
    fs->root.fd = root_fd;
    fs->root.type = S_IFDIR;
    fs->root.nlookup = 1;
    pthread_mutex_init(&fs->mu, NULL);
    atomic_init(&fs->gen, 1);
    fs->log = log;
    return fs;
}

void fslayer_fs_free(lfs_t *fs)
{
    if (!fs) return;
    for (size_t i = 0; i < fs->tabn; i++)
        for (lnode_t *x = fs->tab[i], *nx; x; x = nx) {
            nx = x->hnext;
            close(x->fd);
            free(x->name);
            free(x);
        }
    free(fs->tab);
    close(fs->root.fd);
    free(fs->root.name);
    free(fs->root_abs);
    pthread_mutex_destroy(&fs->mu);
    free(fs);
}
