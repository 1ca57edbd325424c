/* reload.c — stat-before-every-call policy reloading (see reload.h). */
#include "reload.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "drun_policy.h"
#include "log.h"

/* What identifies one version of the watched file. ctime is included because
 * it cannot be set back by a writer the way mtime can (touch -d). */
typedef struct fkey {
    int err; /* 0, or the errno of a failed stat */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} fkey_t;

struct reloader {
    pthread_mutex_t mu;         /* guards everything below but compile_mu */
    pthread_mutex_t compile_mu; /* one compile at a time */
    reload_mode_t mode;
    char *config;               /* --config as given, or NULL */
    char *artifacts;            /* --artifacts DIR, or NULL */
    char *watched;              /* the file whose key is checked */
    bool with_sandbox;
    lpolicy_t *cur;             /* last good policy, NULL if none ever */
    fkey_t seen;                /* key of the file version last compiled */
    bool seen_valid;
    char *error;                /* rendered diagnostic of the current file, or NULL */
    int64_t error_ms;
    uint64_t checks, compiles, reloads, failures, check_ns, generation;
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void key_of(const char *path, fkey_t *k)
{
    struct stat st;
    memset(k, 0, sizeof *k);
    if (!path) {
        k->err = ENOENT;
        return;
    }
    if (stat(path, &st) < 0) {
        k->err = errno;
        return;
    }
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    k->size = st.st_size;
    k->mtime = st.st_mtim;
    k->ctime = st.st_ctim;
}

static bool key_eq(const fkey_t *a, const fkey_t *b)
{
    return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static int64_t mono_ms(void) { return (int64_t)(mono_ns() / 1000000u); }

static void sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR);
}

const char *reload_mode_name(reload_mode_t m)
{
    switch (m) {
    case RELOAD_CONFIG: return "config";
    case RELOAD_CHAIN: return "default-chain";
    case RELOAD_ARTIFACTS: return "artifacts";
    }
    return "?";
}

void reload_release(lpolicy_t *lp)
{
    if (!lp || atomic_fetch_sub(&lp->refs, 1) != 1)
        return;
    /* The sandbox borrows the policy: it goes first. */
    if (lp->sbx)
        sandbox_free(lp->sbx);
    policy_free(lp->owned);
    free(lp->source);
    free(lp);
}

static lpolicy_t *lp_ref(lpolicy_t *lp)
{
    if (lp)
        atomic_fetch_add(&lp->refs, 1);
    return lp;
}

/* ---- compiling -------------------------------------------------------------------- */

/* Renders the diagnostics of a failed policy_load. policy_build frees the
 * source it was given when it fails, so the diagnostics point at freed text:
 * they are pointed at a fresh read of the same file instead (the caller
 * discards the result anyway if the file changed meanwhile). */
/* One compile of the source. Returns the new policy, or NULL with *error set
 * to the rendered diagnostics (caller frees). */
static lpolicy_t *compile_once(reloader_t *r, char **error)
{
    lpolicy_t *lp = xcalloc(1, sizeof *lp);
    atomic_init(&lp->refs, 1);
    char *err = NULL;
    buf_t out = BUF_INIT;

    if (r->mode == RELOAD_ARTIFACTS) {
        lp->sbx = sandbox_from_artifacts(r->artifacts, &err);
        if (!lp->sbx) {
            buf_printf(&out, "%s: error: the artifacts cannot be loaded: %s\n", r->artifacts,
                       err ? err : "unknown error");
            goto fail;
        }
        lp->pol = sandbox_policy(lp->sbx);
        lp->source = xstrdup(r->artifacts);
        goto done;
    }

    diag_list_t diags = {0};
    policy_t *p = policy_load(r->config, &diags, &err);
    if (!p) {
        if (err)
            buf_printf(&out, "%s: error: cannot read the config: %s\n",
                       r->watched ? r->watched : "config", err);
        /* the diagnostics keep the source they point into (diag_keep_source) */
        diag_render_all(&out, &diags, false);
        diag_list_free(&diags);
        if (!out.len)
            buf_printf(&out, "%s: error: the config does not compile\n", r->watched);
        goto fail;
    }
    diag_list_free(&diags);
    lp->owned = p;
    lp->pol = p;
    lp->source = xstrdup(p->is_default ? "<default>" : (p->path ? p->path : r->watched));
    if (r->with_sandbox) {
        lp->sbx = sandbox_new(p, NULL, &diags, &err);
        if (!lp->sbx) {
            diag_render_all(&out, &diags, false);
            if (err)
                buf_printf(&out, "%s: error: cannot compile the sandbox: %s\n", lp->source, err);
            diag_list_free(&diags);
            if (!out.len)
                buf_printf(&out, "%s: error: cannot compile the sandbox\n", lp->source);
            goto fail;
        }
        diag_list_free(&diags);
    }
done:
    /* source_pos() builds the line map on first use; build it now, before
     * the policy is shared, so that concurrent calls only ever read it. */
    if (lp->pol->src)
        source_pos(lp->pol->src, 0);
    free(err);
    buf_free(&out);
    return lp;
fail:
    free(err);
    /* Drop the trailing newline: callers embed the text. */
    while (out.len && out.p[out.len - 1] == '\n')
        buf_truncate(&out, out.len - 1);
    *error = buf_detach(&out, NULL);
    reload_release(lp);
    return NULL;
}

/* Waits until the file's key stays the same for RELOAD_SETTLE_MS of our own
 * clock (file timestamps are not used for this: on a loaded VM the kernel's
 * coarse clock can lag by 100 ms and more, so a file truncated just now may
 * look old). Returns false when it keeps changing past RELOAD_SETTLE_MAX_MS. */
static bool settle(reloader_t *r, fkey_t *k)
{
    int64_t start = mono_ms(), since = start;
    for (;;) {
        sleep_ms(since + RELOAD_SETTLE_MS - mono_ms());
        fkey_t now;
        key_of(r->watched, &now);
        if (key_eq(&now, k))
            return true;
        *k = now;
        since = mono_ms();
        if (since - start >= RELOAD_SETTLE_MAX_MS)
            return false;
    }
}

/* Brings the policy up to date with the file whose key is k (compile_mu
 * held): waits for the file to settle, compiles it, and repeats a read that
 * the file changed under. */
static void refresh(reloader_t *r, fkey_t k)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        if (!settle(r, &k))
            break; /* never compile an unsettled file, however long it churns */
        char *error = NULL;
        lpolicy_t *lp = compile_once(r, &error);
        fkey_t after;
        key_of(r->watched, &after);
        pthread_mutex_lock(&r->mu);
        r->compiles++;
        pthread_mutex_unlock(&r->mu);
        if (!key_eq(&k, &after)) {
            /* Changed while we read it: what we compiled may be a mix of two
             * versions. Never serve it; read again. */
            reload_release(lp);
            free(error);
            k = after;
            continue;
        }
        lpolicy_t *old = NULL;
        pthread_mutex_lock(&r->mu);
        if (lp) {
            lp->generation = ++r->generation;
            lp->loaded_ms = wall_ms();
            old = r->cur;
            r->cur = lp;
            if (old)
                r->reloads++;
            free(r->error);
            r->error = NULL;
        } else {
            r->failures++;
            free(r->error);
            r->error = error;
            r->error_ms = wall_ms();
        }
        r->seen = k;
        r->seen_valid = true;
        pthread_mutex_unlock(&r->mu);
        /* Calls still running under the old policy keep their references. */
        reload_release(old);
        if (lp)
            log_info("policy generation %llu loaded from %s", (unsigned long long)lp->generation,
                     lp->source);
        else
            log_warn("the config does not compile; %s:\n%s",
                     r->cur ? "the last good policy stays in force" : "no policy is in force",
                     error);
        return;
    }
    /* The file kept changing: keep what is in force (a version that was
     * whole) and leave seen invalid, so the next call looks again. */
    pthread_mutex_lock(&r->mu);
    r->seen_valid = false;
    pthread_mutex_unlock(&r->mu);
    log_warn("%s keeps changing; the policy in force stays until it settles", r->watched);
}

static char *default_watch(void)
{
    const char *env = getenv("DRUN_CONFIG");
    if (env && *env)
        return xstrdup(env);
    const char *home = getenv("HOME");
    if (home && *home == '/')
        return xasprintf("%s/.drun/config.toml", home);
    return NULL;
}

reloader_t *reload_new(const char *config, const char *artifacts, bool with_sandbox)
{
    reloader_t *r = xcalloc(1, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->compile_mu, NULL);
    r->with_sandbox = with_sandbox;
    if (artifacts) {
        r->mode = RELOAD_ARTIFACTS;
        r->artifacts = xstrdup(artifacts);
        /* The directory itself: the compiler replaces each artifact by a
         * rename into it, which changes its mtime — one stat sees them all. */
        r->watched = xstrdup(artifacts);
    } else if (config) {
        r->mode = RELOAD_CONFIG;
        r->config = xstrdup(config);
        r->watched = xstrdup(config);
    } else {
        r->mode = RELOAD_CHAIN;
        r->watched = default_watch();
    }
    reload_release(reload_acquire(r, NULL));
    return r;
}

void reload_free(reloader_t *r)
{
    if (!r)
        return;
    reload_release(r->cur);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->compile_mu);
    free(r->config);
    free(r->artifacts);
    free(r->watched);
    free(r->error);
    free(r);
}

lpolicy_t *reload_acquire(reloader_t *r, char **error)
{
    uint64_t t0 = mono_ns();
    fkey_t k;
    key_of(r->watched, &k);
    pthread_mutex_lock(&r->mu);
    r->checks++;
    bool fresh = r->seen_valid && key_eq(&k, &r->seen);
    if (fresh)
        r->check_ns += mono_ns() - t0;
    pthread_mutex_unlock(&r->mu);

    if (!fresh) {
        pthread_mutex_lock(&r->compile_mu);
        /* Another thread may have compiled this very version meanwhile. */
        key_of(r->watched, &k);
        pthread_mutex_lock(&r->mu);
        fresh = r->seen_valid && key_eq(&k, &r->seen);
        pthread_mutex_unlock(&r->mu);
        if (!fresh)
            refresh(r, k);
        pthread_mutex_unlock(&r->compile_mu);
    }

    pthread_mutex_lock(&r->mu);
    lpolicy_t *lp = lp_ref(r->cur);
    if (error)
        *error = r->error ? xstrdup(r->error) : NULL;
    pthread_mutex_unlock(&r->mu);
    return lp;
}

lpolicy_t *reload_peek(reloader_t *r)
{
    pthread_mutex_lock(&r->mu);
    lpolicy_t *lp = lp_ref(r->cur);
    pthread_mutex_unlock(&r->mu);
    return lp;
}

void reload_get_stats(reloader_t *r, reload_stats_t *out)
{
    pthread_mutex_lock(&r->mu);
    out->mode = r->mode;
    out->watched = r->watched ? xstrdup(r->watched) : NULL;
    out->checks = r->checks;
    out->compiles = r->compiles;
    out->reloads = r->reloads;
    out->failures = r->failures;
    out->check_ns = r->check_ns;
    out->generation = r->cur ? r->cur->generation : 0;
    out->error = r->error ? xstrdup(r->error) : NULL;
    out->error_ms = r->error_ms;
    pthread_mutex_unlock(&r->mu);
}

void reload_stats_free(reload_stats_t *s)
{
    free(s->watched);
    free(s->error);
}
