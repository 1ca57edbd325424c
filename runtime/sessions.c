/* sessions.c — the session table (see sessions.h for the locking rules). */
#include "sessions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "clock.h"
#include "drun_policy.h"
#include "log.h"
#include "tree.h"

struct sessions {
    pthread_mutex_t mu;    /* guards list and each session's refs/closed */
    char *root;            /* STATE/sessions, absolute and resolved */
    int rootfd;            /* O_DIRECTORY fd of root */
    VEC(session_t *) list; /* open sessions, oldest first */
};

/* Removes STATE/sessions/NAME when no server holds its lock. */
static void sweep_one(int rootfd, const char *name)
{
    int dfd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return;
    int lfd = openat(dfd, ".lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    bool orphan = false;
    if (lfd >= 0) {
        /* The lock is free only when the server that made it is gone. */
        orphan = flock(lfd, LOCK_EX | LOCK_NB) == 0;
    } else {
        /* No lock file: a server died between mkdir and creating it. Give a
         * server that is creating it right now ten seconds. */
        struct stat st;
        orphan = fstat(dfd, &st) == 0 && time(NULL) - st.st_mtime > 10;
    }
    close(dfd);
    if (orphan) {
        if (tree_remove(rootfd, name) < 0)
            log_warn("cannot remove stale session %s: %s", name, strerror(errno));
        else
            log_info("removed stale session %s left by a server that is gone", name);
    }
    if (lfd >= 0)
        close(lfd);
}

static void sweep(int rootfd)
{
    int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    VEC(char *) names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            vec_push(&names, xstrdup(e->d_name));
    closedir(d);
    for (size_t i = 0; i < names.n; i++) {
        sweep_one(rootfd, names.v[i]);
        free(names.v[i]);
    }
    vec_free(&names);
}

/* As root the sandbox runs as the sandbox user (sandbox.h), and bwrap,
 * running as that user, resolves the workspace by path: the state dir and
 * the sessions dir (fd) must let it search (0711: a name, no listing). */
static bool searchable_by_sandbox(const char *state_dir, int fd, char **err)
{
    if (geteuid() != 0) return true;
    int sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool ok = sfd >= 0 && fchmod(sfd, 0711) == 0 && fchmod(fd, 0711) == 0;
    if (!ok) *err = xasprintf("cannot let the sandbox user reach %s/sessions: %s", state_dir, strerror(errno));
    if (sfd >= 0) close(sfd);
    return ok;
}

/* As root: the session's directory searchable by the sandbox user, its
 * workspace and scratch dir owned by it (the sandbox writes there). */
static bool give_to_sandbox(int dfd)
{
    if (geteuid() != 0) return true;
    uid_t uid;
    gid_t gid;
    sandbox_user(&uid, &gid);
    return fchmod(dfd, 0711) == 0 && fchownat(dfd, "workspace", uid, gid, AT_SYMLINK_NOFOLLOW) == 0 &&
           fchownat(dfd, "scratch", uid, gid, AT_SYMLINK_NOFOLLOW) == 0;
}

sessions_t *sessions_new(const char *state_dir, char **err)
{
    char *root = xasprintf("%s/sessions", state_dir);
    if (!fsutil_mkdirs(root, 0700)) {
        *err = xasprintf("cannot create %s: %s", root, strerror(errno));
        free(root);
        return NULL;
    }
    char real[PATH_MAX];
    if (!realpath(root, real)) {
        *err = xasprintf("cannot resolve %s: %s", root, strerror(errno));
        free(root);
        return NULL;
    }
    free(root);
    int fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        *err = xasprintf("cannot open %s: %s", real, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    /* Another user able to write here could plant directories or links
     * that later look like ours. */
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        *err = xasprintf("%s must be owned by uid %u and not writable by group or others "
                         "(chmod 700 it)",
                         real, (unsigned)geteuid());
        close(fd);
        return NULL;
    }
    if (!searchable_by_sandbox(state_dir, fd, err)) {
        close(fd);
        return NULL;
    }
    sessions_t *t = xcalloc(1, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
    t->root = xstrdup(real);
    t->rootfd = fd;
    sweep(fd);
    return t;
}

static void destroy(session_t *s)
{
    sessions_t *t = s->table;
    close(s->ws_fd);
    ckpt_free(s->ckpt); /* the family's store goes with its last session */
    if (tree_remove(t->rootfd, s->id) < 0)
        log_warn("session %s: cannot remove %s/%s: %s", s->id, t->root, s->id, strerror(errno));
    /* The lock goes last: until the directory is gone, no sweeper touches it. */
    close(s->lock_fd);
    pthread_mutex_destroy(&s->write_mu);
    free(s->label);
    free(s->workspace);
    free(s->scratch);
    free(s);
}

/* Unlists s (table mutex held); returns true when the caller must destroy it. */
static bool unlist_locked(sessions_t *t, session_t *s)
{
    for (size_t i = 0; i < t->list.n; i++)
        if (t->list.v[i] == s) {
            memmove(&t->list.v[i], &t->list.v[i + 1], (t->list.n - i - 1) * sizeof *t->list.v);
            t->list.n--;
            break;
        }
    s->closed = true;
    atomic_store(&s->closing, true);
    return s->refs == 0;
}

void sessions_free(sessions_t *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    VEC(session_t *) gone = {0};
    while (t->list.n) {
        session_t *s = t->list.v[0];
        if (unlist_locked(t, s))
            vec_push(&gone, s);
        else
            log_warn("session %s still in use at shutdown", s->id);
    }
    pthread_mutex_unlock(&t->mu);
    for (size_t i = 0; i < gone.n; i++)
        destroy(gone.v[i]);
    vec_free(&gone);
    vec_free(&t->list);
    close(t->rootfd);
    pthread_mutex_destroy(&t->mu);
    free(t->root);
    free(t);
}

static void random_id(char out[SESSION_ID_LEN + 1])
{
    unsigned char r[SESSION_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = getrandom(r + got, sizeof r - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            /* An ID that is not random would be guessable: give up. */
            log_error("getrandom failed: %s", strerror(errno));
            abort();
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* Makes STATE/sessions/ID/{workspace,scratch,.lock}; fills s. */
static bool make_dirs(sessions_t *t, session_t *s, char **err)
{
    int dfd = -1;
    if (mkdirat(t->rootfd, s->id, 0700) < 0 ||
        (dfd = openat(t->rootfd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        goto fail;
    s->lock_fd = openat(dfd, ".lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->lock_fd < 0 || flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0)
        goto fail;
    if (mkdirat(dfd, "workspace", 0700) < 0 || mkdirat(dfd, "scratch", 0700) < 0 || !give_to_sandbox(dfd))
        goto fail;
    s->ws_fd = openat(dfd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s->ws_fd < 0)
        goto fail;
    close(dfd);
    s->workspace = xasprintf("%s/%s/workspace", t->root, s->id);
    s->scratch = xasprintf("%s/%s/scratch", t->root, s->id);
    return true;
fail:
    *err = xasprintf("cannot create the session directories under %s: %s", t->root,
                     strerror(errno));
    if (dfd >= 0)
        close(dfd);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    tree_remove(t->rootfd, s->id);
    return false;
}

session_t *sessions_create(sessions_t *t, const session_owner_t *owner, int64_t max_sessions,
                           const char *label, char **err)
{
    session_t *s = xcalloc(1, sizeof *s);
    random_id(s->id);
    s->owner = *owner;
    s->label = xstrdup(label ? label : "");
    s->lock_fd = s->ws_fd = -1;
    s->table = t;
    s->refs = 1;
    s->created_ms = clock_wall_ms();
    atomic_store(&s->last_used, clock_now_ms());
    pthread_mutex_init(&s->write_mu, NULL);

    pthread_mutex_lock(&t->mu);
    if ((int64_t)t->list.n >= max_sessions) {
        pthread_mutex_unlock(&t->mu);
        *err = xasprintf("max_sessions (%lld) sessions are open already: close one with "
                         "session_close, or raise max_sessions in the config",
                         (long long)max_sessions);
        goto fail;
    }
    /* Directories are made under the lock so that the count stays exact. */
    if (!make_dirs(t, s, err)) {
        pthread_mutex_unlock(&t->mu);
        goto fail;
    }
    vec_push(&t->list, s);
    pthread_mutex_unlock(&t->mu);
    return s;
fail:
    pthread_mutex_destroy(&s->write_mu);
    free(s->label);
    free(s);
    return NULL;
}

/* Constant-time comparison of two IDs of SESSION_ID_LEN bytes: session IDs
 * are capabilities, and a comparison that stops at the first difference
 * would leak how much of a guess was right. */
static bool id_equal(const char *a, const char *b)
{
    unsigned char d = 0;
    for (size_t i = 0; i < SESSION_ID_LEN; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* Another principal's session is not found: across tokens an ID is no
 * capability (SPEC §12). */
static session_t *find_locked(sessions_t *t, const char *id, unsigned principal)
{
    if (strlen(id) != SESSION_ID_LEN)
        return NULL;
    for (size_t i = 0; i < t->list.n; i++)
        if (id_equal(t->list.v[i]->id, id) && t->list.v[i]->owner.principal == principal)
            return t->list.v[i];
    return NULL;
}

session_t *sessions_get(sessions_t *t, const char *id, unsigned principal, int64_t idle_ms,
                        char **err)
{
    int64_t now = clock_now_ms();
    pthread_mutex_lock(&t->mu);
    session_t *s = find_locked(t, id, principal);
    if (!s) {
        pthread_mutex_unlock(&t->mu);
        *err = xasprintf("no session \"%s\": it was closed, it expired, or the ID is wrong; "
                         "call session_list, or create_session for a new one",
                         id);
        return NULL;
    }
    if (idle_ms > 0 && s->refs == 0 && now - atomic_load(&s->last_used) > idle_ms) {
        bool gone = unlist_locked(t, s);
        pthread_mutex_unlock(&t->mu);
        if (gone)
            destroy(s);
        *err = xasprintf("session \"%s\" expired after %lld s without a call "
                         "(session_idle_timeout_secs); create_session makes a new one",
                         id, (long long)(idle_ms / 1000));
        return NULL;
    }
    s->refs++;
    atomic_store(&s->last_used, now);
    pthread_mutex_unlock(&t->mu);
    return s;
}

void sessions_put(session_t *s)
{
    sessions_t *t = s->table;
    pthread_mutex_lock(&t->mu);
    atomic_store(&s->last_used, clock_now_ms());
    bool gone = --s->refs == 0 && s->closed;
    pthread_mutex_unlock(&t->mu);
    if (gone)
        destroy(s);
}

bool sessions_close(sessions_t *t, const char *id, unsigned principal, char **err)
{
    pthread_mutex_lock(&t->mu);
    session_t *s = find_locked(t, id, principal);
    if (!s) {
        pthread_mutex_unlock(&t->mu);
        *err = xasprintf("no session \"%s\": it was closed already, it expired, or the ID is "
                         "wrong; call session_list to see the open sessions",
                         id);
        return false;
    }
    bool gone = unlist_locked(t, s);
    pthread_mutex_unlock(&t->mu);
    if (gone)
        destroy(s);
    return true;
}

size_t sessions_reap(sessions_t *t, int64_t idle_ms)
{
    if (idle_ms <= 0)
        return 0;
    int64_t now = clock_now_ms();
    VEC(session_t *) gone = {0};
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->list.n;) {
        session_t *s = t->list.v[i];
        if (s->refs == 0 && now - atomic_load(&s->last_used) > idle_ms) {
            unlist_locked(t, s);
            vec_push(&gone, s);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&t->mu);
    for (size_t i = 0; i < gone.n; i++) {
        log_info("session %s expired (idle)", gone.v[i]->id);
        destroy(gone.v[i]);
    }
    size_t n = gone.n;
    vec_free(&gone);
    return n;
}

size_t sessions_list(sessions_t *t, const session_owner_t *who, session_info_t **out)
{
    int64_t now = clock_now_ms();
    pthread_mutex_lock(&t->mu);
    session_info_t *v = xcalloc(t->list.n ? t->list.n : 1, sizeof *v);
    size_t n = 0;
    for (size_t k = 0; k < t->list.n; k++) {
        session_t *s = t->list.v[k];
        if (who && (s->owner.principal != who->principal || s->owner.client != who->client))
            continue;
        size_t i = n++;
        memcpy(v[i].id, s->id, sizeof v[i].id);
        v[i].label = xstrdup(s->label);
        v[i].workspace = xstrdup(s->workspace);
        v[i].created_ms = s->created_ms;
        v[i].idle_ms = s->refs ? 0 : now - atomic_load(&s->last_used);
        v[i].running = atomic_load(&s->running);
    }
    pthread_mutex_unlock(&t->mu);
    *out = v;
    return n;
}

void sessions_info_free(session_info_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].label);
        free(v[i].workspace);
    }
    free(v);
}

size_t sessions_count(sessions_t *t)
{
    pthread_mutex_lock(&t->mu);
    size_t n = t->list.n;
    pthread_mutex_unlock(&t->mu);
    return n;
}

const char *sessions_root(const sessions_t *t) { return t->root; }

int sessions_rootfd(const sessions_t *t) { return t->rootfd; }
