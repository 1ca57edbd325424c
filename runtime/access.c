/* access.c — lattice_level_of() for the file tools (see access.h).
 *
 * The answer comes from the very resolved policy the sandbox plans its runs
 * from (sandbox_resolved of the policy in force), so a file tool and a
 * command cannot disagree. Workspace and scratch rules stay symbolic until
 * lattice_level_of() is given the session's roots. Only a policy loaded without a
 * sandbox (the fuzzing build) is resolved here, over compile_facts_for() this host:
 * that result is kept for the policy in force (one slot, replaced on
 * reload; a call still running under an older policy resolves its own).
 */
#include "access.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "drun_policy.h"

typedef struct acc_res {
    lpolicy_t *lp;         /* referenced: the policy (and its rules) stay while this does */
    facts_t *facts;        /* NULL when the sandbox's resolved policy is used */
    const resolved_t *res; /* NULL when facts could not be had */
    resolved_t *owned;     /* res, when resolved here (no sandbox) */
    int users;             /* calls using it now (under mu) */
    bool cached;           /* in the slot */
} acc_res_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static acc_res_t *slot;

static void res_free(acc_res_t *a)
{
    lattice_free(a->owned);
    facts_free(a->facts);
    reload_release(a->lp);
    free(a);
}

static acc_res_t *res_build(lpolicy_t *lp)
{
    acc_res_t *a = xcalloc(1, sizeof *a);
    atomic_fetch_add(&lp->refs, 1);
    a->lp = lp;
    if (lp->sbx) {
        a->res = sandbox_resolved(lp->sbx);
    } else {
        char *err = NULL;
        const char *none[2] = {NULL, NULL};
        a->facts = compile_facts_for(lp->pol, TARGET_LINUX, none, &err);
        if (a->facts)
            a->res = a->owned = lattice_resolve(lp->pol, a->facts);
        free(err);
    }
    a->users = 1;
    return a;
}

/* The resolved policy of lp, with a use (res_put when done). */
static acc_res_t *res_get(lpolicy_t *lp)
{
    pthread_mutex_lock(&mu);
    if (slot && slot->lp == lp) {
        slot->users++;
        pthread_mutex_unlock(&mu);
        return slot;
    }
    pthread_mutex_unlock(&mu);
    acc_res_t *a = res_build(lp); /* slow: outside the lock */
    acc_res_t *old = NULL;
    pthread_mutex_lock(&mu);
    if (slot && slot->lp == lp) { /* another call built it meanwhile */
        old = a;
        old->users = 0;
        a = slot;
        a->users++;
    } else if (!slot || slot->lp->generation < lp->generation) {
        /* a newer policy replaces the kept one; an older one is not kept */
        old = slot;
        if (old) {
            old->cached = false;
            if (old->users)
                old = NULL; /* freed by its last user */
        }
        slot = a;
        a->cached = true;
    }
    pthread_mutex_unlock(&mu);
    if (old)
        res_free(old);
    return a;
}

static void res_put(acc_res_t *a)
{
    pthread_mutex_lock(&mu);
    bool last = --a->users == 0 && !a->cached;
    pthread_mutex_unlock(&mu);
    if (last)
        res_free(a);
}

/* The session's roots as the sandbox sees them (realpath'd, as sandbox_spawn
 * does) and the absolute, normalised path of rel. false when the session's
 * directories are gone. */
typedef struct where {
    char ws[PATH_MAX], sc[PATH_MAX];
    roots_t roots;
} where_t;

static bool where_init(session_t *s, where_t *w)
{
    if (!realpath(s->workspace, w->ws) || !realpath(s->scratch, w->sc))
        return false;
    w->roots = (roots_t){.workspace = w->ws, .scratch = w->sc};
    return true;
}

/* "config.toml:3:14 filesystem.deny_write \"**\/secret.txt\"", or a
 * built-in's origin and pattern: the words explain uses. */
static void rule_words(tool_call_t *tc, const rule_t *r, buf_t *out)
{
    if (r->src) {
        tools_where(tc, r->span, out);
        buf_printf(out, " %s \"%s\"", policy_rule_kind_key(r->kind), r->written);
        return;
    }
    switch (r->kind) {
    case RK_WORKSPACE: buf_adds(out, "the session workspace"); return;
    case RK_SCRATCH: buf_adds(out, "the session scratch dir"); return;
    default:
        buf_printf(out, "%s \"%s\"", r->origin ? r->origin : policy_rule_kind_key(r->kind),
                   r->written);
        return;
    }
}

/* Why v's level is what it is: the lowest cap when one lowered it, else the
 * deciding grant. */
static void verdict_words(tool_call_t *tc, const verdict_t *v, buf_t *out)
{
    const rrule_t *low = NULL;
    for (unsigned i = 0; i < v->ncaps; i++)
        if (v->caps[i]->level < v->grant_level && (!low || v->caps[i]->level < low->level))
            low = v->caps[i];
    if (low) {
        rule_words(tc, low->rule, out);
        buf_printf(out, " caps it at %s", policy_level_name(low->level));
    } else if (v->grant) {
        rule_words(tc, v->grant->rule, out);
        buf_printf(out, " grants %s", policy_level_name(v->grant_level));
    } else {
        buf_adds(out, "no rule grants it");
    }
}

/* lattice_level_of rel, with the verdict. */
static level_t level_rel(const acc_res_t *a, const where_t *w, const char *rel, verdict_t *v)
{
    arena_t tmp = ARENA_INIT;
    level_t l = lattice_level_of(a->res, &w->roots, path_join(w->ws, rel, &tmp), v);
    arena_free(&tmp);
    return l;
}

static bool refuse(tool_call_t *tc, const char *rel, level_t need, level_t have,
                   const verdict_t *v, buf_t *why)
{
    buf_printf(why, "Refused by the policy: the sandbox %s \"%s\" (its level there is %s: ",
               need == LVL_WRITE ? "cannot write" : "cannot read", rel, policy_level_name(have));
    verdict_words(tc, v, why);
    buf_adds(why, "); the file tools obey the same rules as commands.");
    return false;
}

/* Is rel[0..n) missing beneath the workspace (the write would create it)? */
static bool missing(session_t *s, const char *rel, size_t n)
{
    char *sub = xstrndup(rel, n);
    int fd = beneath_open(s->ws_fd, sub, O_PATH, 0);
    int err = errno;
    free(sub);
    if (fd >= 0) {
        close(fd);
        return false;
    }
    return err == ENOENT;
}

struct access {
    tool_call_t *tc;
    session_t *s;
    acc_res_t *res; /* NULL when there is nothing to evaluate */
    where_t w;
};

access_t *access_begin(tool_call_t *tc, session_t *s)
{
    access_t *a = xcalloc(1, sizeof *a);
    a->tc = tc;
    a->s = s;
    if (tc->lp && where_init(s, &a->w)) {
        a->res = res_get(tc->lp);
        if (!a->res->res) {
            res_put(a->res);
            a->res = NULL;
        }
    }
    return a;
}

void access_end(access_t *a)
{
    if (a->res)
        res_put(a->res);
    free(a);
}

bool access_check(access_t *a, const char *rel, level_t need, buf_t *why)
{
    if (!a->res) {
        buf_printf(why, "Refused: the policy cannot be evaluated for \"%s\" (no policy in "
                        "force, the host facts cannot be probed, or the session's directories "
                        "are gone).",
                   rel);
        return false;
    }
    verdict_t v;
    level_t have = level_rel(a->res, &a->w, rel, &v);
    if (have < need)
        return refuse(a->tc, rel, need, have, &v, why);
    if (need != LVL_WRITE)
        return true;
    /* Whatever the write creates (missing directories, the file) is created
     * in its parent, which the sandbox must be able to write: a read-only
     * directory with a writable grant deeper down takes no new entry there. */
    for (size_t n = 0;; n++) {
        if (rel[n] != '/' && rel[n] != '\0')
            continue;
        if (missing(a->s, rel, n)) {
            const char *slash = memrchr(rel, '/', n);
            char *parent = xstrndup(rel, slash ? (size_t)(slash - rel) : 0);
            have = level_rel(a->res, &a->w, parent, &v);
            bool ok = have >= LVL_WRITE || refuse(a->tc, *parent ? parent : ".", LVL_WRITE,
                                                  have, &v, why);
            free(parent);
            return ok; /* everything below a missing entry is missing too */
        }
        if (!rel[n])
            return true;
    }
}

bool access_allows(tool_call_t *tc, session_t *s, const char *rel, level_t need, buf_t *why)
{
    access_t *a = access_begin(tc, s);
    bool ok = access_check(a, rel, need, why);
    access_end(a);
    return ok;
}

level_t access_level(access_t *a, const char *rel)
{
    return a->res ? level_rel(a->res, &a->w, rel, NULL) : LVL_NONE;
}

/* Could cap c (below write) match a path beneath abs, with abs as that
 * path's first missing component? For a literal cap: is it below abs. For a
 * glob: abs's name is one of the literal components after the glob's last
 * wildcard, and abs followed by the rest of them matches (".git" for
 * "**\/.git/hooks": "<abs>/hooks" matches). */
static bool cap_below(const rrule_t *c, const roots_t *roots, const char *abs, arena_t *tmp)
{
    const char *pat = lattice_rule_abs(c, roots, tmp);
    if (!pat)
        return false;
    if (!c->glob)
        return strcmp(pat, abs) != 0 && path_is_under(pat, abs);
    const char *name = strrchr(abs, '/');
    name = name ? name + 1 : abs;
    size_t nlen = strlen(name);
    /* the literal tail: components after the last wildcard one */
    const char *s = pat, *b, *e, *tail = NULL;
    while (path_next_comp(&s, &b, &e))
        if (glob_comp_wild(b, e))
            tail = e;
    if (!tail)
        return false;
    s = tail;
    while (path_next_comp(&s, &b, &e)) {
        if ((size_t)(e - b) != nlen || memcmp(b, name, nlen) || !*e)
            continue;
        const char *below = path_join(abs, e + 1, tmp);
        if (lattice_cap_matches(c, roots, below, tmp))
            return true;
    }
    return false;
}

/* How deep placeholders can nest: a run that finds the last run's .git
 * still there blocks .git/hooks inside it (and so on, one level per run
 * that overlaps the cleanup of the one before). */
#define PLACEHOLDER_DEPTH 8

static bool placeholder_at(access_t *a, const char *rel, int dirfd, const char *name,
                           const struct stat *st, int depth);

/* Does directory dirfd/name (rel) hold placeholders only (or nothing)? */
static bool holds_placeholders_only(access_t *a, const char *rel, int dirfd, const char *name,
                                    int depth)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int lfd = fd >= 0 ? openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        if (fd >= 0)
            close(fd);
        return false;
    }
    bool only = true;
    for (struct dirent *e; only && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat est;
        char *sub = xasprintf("%s/%s", rel, e->d_name);
        only = fstatat(fd, e->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0 &&
               placeholder_at(a, sub, fd, e->d_name, &est, depth + 1);
        free(sub);
    }
    closedir(d);
    close(fd);
    return only;
}

static bool placeholder_at(access_t *a, const char *rel, int dirfd, const char *name,
                           const struct stat *st, int depth)
{
    /* What bwrap's plan makes: an empty directory or an empty file with
     * one name (block_missing in compiler/backends/bwrap_plan.c). */
    if (S_ISREG(st->st_mode)) {
        if (st->st_size != 0 || st->st_nlink != 1)
            return false;
    } else if (!S_ISDIR(st->st_mode) || depth >= PLACEHOLDER_DEPTH) {
        return false;
    }
    if (!a->res)
        return false;
    const resolved_t *r = a->res->res;
    arena_t tmp = ARENA_INIT;
    const char *abs = path_join(a->w.ws, rel, &tmp);
    bool ph = lattice_level_of(r, &a->w.roots, abs, NULL) < LVL_WRITE;
    for (size_t i = 0; !ph && S_ISDIR(st->st_mode) && i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        ph = c->level < LVL_WRITE && cap_below(c, &a->w.roots, abs, &tmp);
    }
    arena_free(&tmp);
    return ph && (!S_ISDIR(st->st_mode) || holds_placeholders_only(a, rel, dirfd, name, depth));
}

bool access_is_placeholder(access_t *a, const char *rel, int dirfd, const char *name,
                           const struct stat *st)
{
    return placeholder_at(a, rel, dirfd, name, st, 0);
}

bool access_require(tool_call_t *tc, session_t *s, const char *rel, level_t need, const char *what)
{
    buf_t why = BUF_INIT;
    bool ok = access_allows(tc, s, rel, need, &why);
    if (!ok)
        tools_fail(tc, "%s%s", what, buf_cstr(&why));
    buf_free(&why);
    return ok;
}
