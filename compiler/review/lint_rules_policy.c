/* lint_rules_policy.c — the lint rules that need the policy's meaning: the
 * resolved lattice of both targets (shadowed and dropped rules, secrets
 * left readable, system dirs made writable, runtime-owned paths, denies of
 * paths that do not exist, globs), the lists (duplicates, domains) and the
 * compiled artifacts (profile-too-large). Run when the policy builds.
 */
#include "lint_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bwrap.h"
#include "diag_ids.h"
#include "domain.h"
#include "explain.h"
#include "glob.h"
#include "keys.h"
#include "lattice_index.h"
#include "path.h"
#include "sbpl.h"

/* Above these the compiled artifacts are "too large" (profile-too-large):
 * every file operation is matched against the SBPL rules, and every bwrap
 * op is a mount the kernel sets up for each command. Hand-written policies
 * stay far below (the profiles/ ones: under 100 rules). */
#define LINT_MAX_SBPL_RULES 500
#define LINT_MAX_SBPL_BYTES (128 * 1024)
#define LINT_MAX_BWRAP_OPS 500

/* ---- small helpers ----------------------------------------------------------------------------------- */

/* "filesystem.allow_read '~' (line 8)" for a config rule, what it is for
 * a built-in one ("the system read set ('/usr')"). Caller frees. */
static char *rule_desc(lint_t *l, const rule_t *r)
{
    if (r->src) return xasprintf("%s '%s' (line %u)", policy_rule_kind_key(r->kind), r->written, lint_line_of(l, r->span));
    switch (r->kind) {
    case RK_WORKSPACE: return xstrdup("the session workspace");
    case RK_SCRATCH: return xstrdup("the session scratch dir");
    case RK_PATH_DIR: return xasprintf("the $PATH directory '%s'", r->written);
    case RK_SYSTEM: return xasprintf("the system read set ('%s')", r->written);
    default: return xasprintf("%s '%s'", r->origin ? r->origin : policy_rule_kind_key(r->kind), r->written);
    }
}

/* The parent directory of an absolute path (into a), or NULL for "/". */
static const char *parent_of(const char *abs, arena_t *a)
{
    if (strcmp(abs, "/") == 0) return NULL;
    const char *s = strrchr(abs, '/');
    return s == abs ? "/" : arena_strndup(a, abs, (size_t)(s - abs));
}

static const char *show(lint_t *l, target_t t, const char *abs)
{
    return explain_show_path(l->res[t], &l->roots, abs, &l->a);
}

/* ---- the resolved rules by path ------------------------------------------------------------------ */

/* lattice_level_of() reads every grant and cap; lint asks it a few questions per
 * rule, which made lint quadratic (4,000 rules: 1.3 s; 10,000: 10 s). The
 * lattice index (lattice_index.h) answers them in time proportional to the
 * path's depth; beside it, lint keeps what it asks about config rules. */
typedef struct lindex {
    lattice_index_t *lx;  /* res[t] by path */
    strmap_t at;          /* "base\x01path" -> resolved grant index */
    strmap_t beaten;      /* "base\x01path" of config grants lattice_resolve dropped */
    strmap_t first_cap;   /* "level base glob\x01path" -> index of the first config cap so written */
    const rrule_t **kept; /* config rule index -> its resolved grant, or NULL */
} lindex_t;

/* "base\x01path": a grant's identity in lattice_resolve (into a when given, else b). */
static const char *grant_key(buf_t *b, arena_t *a, path_base_t base, const char *path)
{
    buf_truncate(b, 0);
    buf_addc(b, (char)('0' + base));
    buf_addc(b, '\x01');
    buf_adds(b, path);
    return a ? arena_strdup(a, buf_cstr(b)) : buf_cstr(b);
}

/* A cap's identity for duplicate-rule: level, base, glob and path. */
static const char *cap_key(buf_t *b, arena_t *a, rrule_t c)
{
    buf_truncate(b, 0);
    buf_printf(b, "%d %d %d\x01%s", (int)c.level, (int)c.base, (int)c.glob, c.path);
    return a ? arena_strdup(a, buf_cstr(b)) : buf_cstr(b);
}

static lindex_t *lindex_build(lint_t *l, target_t t)
{
    resolved_t *r = l->res[t];
    lindex_t *ix = xcalloc(1, sizeof *ix);
    buf_t k = BUF_INIT;
    ix->lx = lattice_index_build(r, &l->roots);
    ix->kept = xcalloc(l->pol->rules.n + 1, sizeof *ix->kept);
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        strmap_put(&ix->at, grant_key(&k, &l->a, g->base, g->path), (long)i);
        /* a config rule, not a built-in (with no config rule, rules.v is NULL) */
        if (l->pol->rules.n && g->rule >= l->pol->rules.v && g->rule < l->pol->rules.v + l->pol->rules.n)
            ix->kept[g->rule - l->pol->rules.v] = g;
    }
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *o = &l->pol->rules.v[i];
        if (o->cap) {
            const char *key = cap_key(&k, &l->a, lattice_concretize(r, o));
            if (strmap_get(&ix->first_cap, key) < 0) strmap_put(&ix->first_cap, key, (long)i);
        } else if (!ix->kept[i]) {
            rrule_t c = lattice_concretize(r, o);
            strmap_put(&ix->beaten, grant_key(&k, &l->a, c.base, c.path), 1);
        }
    }
    buf_free(&k);
    return ix;
}

static void lindex_free(lindex_t *ix)
{
    if (!ix) return;
    lattice_index_free(ix->lx);
    free(ix->kept);
    strmap_free(&ix->at);
    strmap_free(&ix->beaten);
    strmap_free(&ix->first_cap);
    free(ix);
}

/* lattice_level_of(res[t], roots, path, why), from the index. */
static level_t lint_level(lint_t *l, target_t t, const char *path, verdict_t *why)
{
    return lattice_index_level_of(l->ix[t]->lx, path, why);
}

/* The highest level a grant at or below path gives, or -1 when none does. */
static long level_below(lint_t *l, target_t t, const char *path)
{
    return lattice_index_level_below(l->ix[t]->lx, path);
}

/* ---- lattice rules: they need the policy and the facts ------------------------------------------------ */

/* The resolved grant of config rule ru, or NULL when lattice_resolve dropped it. */
static const rrule_t *kept_grant(lint_t *l, target_t t, const rule_t *ru)
{
    return l->ix[t]->kept[ru - l->pol->rules.v];
}

static const rrule_t *grant_at(lint_t *l, target_t t, path_base_t base, const char *path)
{
    buf_t k = BUF_INIT;
    long i = strmap_get(&l->ix[t]->at, grant_key(&k, NULL, base, path));
    buf_free(&k);
    return i < 0 ? NULL : &l->res[t]->grants.v[i];
}

/* The cap among v's caps that sets the lowest ceiling. */
static const rrule_t *lowest_cap(const verdict_t *v)
{
    const rrule_t *best = NULL;
    for (unsigned i = 0; i < v->ncaps; i++)
        if (!best || v->caps[i]->level < best->level) best = v->caps[i];
    return best;
}

/* A grant lattice_resolve dropped: another grant on the same path won. */
static void dropped_grant(lint_t *l, target_t t, const rule_t *ru)
{
    resolved_t *r = l->res[t];
    rrule_t c = lattice_concretize(r, ru);
    const rrule_t *w = grant_at(l, t, c.base, c.path);
    if (!w) return;
    char *wd = rule_desc(l, w->rule);
    /* the same path written differently ("~/a" and "~/a/"): nothing to add;
     * different paths that resolve to one (a symlink): say where */
    bool same_ir = w->rule->src && w->rule->path.base == ru->path.base && strcmp(w->rule->path.rel, ru->path.rel) == 0;
    const char *via = "";
    char *resolved = NULL;
    if (w->rule->src && !same_ir && c.base == PB_ROOT) {
        resolved = xasprintf(" (both are %s on %s)", show(l, t, c.path), facts_target_name(t));
        via = resolved;
    }
    if (w->level == ru->level && w->rule->src)
        lint_finding(l, "duplicate-rule", ru->span, "'%s' in %s names the same path as %s%s; remove one",
                     ru->written, policy_rule_kind_key(ru->kind), wd, via);
    else if (w->level == ru->level)
        lint_finding(l, "redundant-rule", ru->span, "'%s' in %s changes nothing: %s already gives %s there; remove it",
                     ru->written, policy_rule_kind_key(ru->kind), wd, policy_level_name(w->level));
    else
        lint_finding(l, "shadowed-rule", ru->span,
                     "'%s' in %s never decides: %s names the same path%s with %s, and of two grants on one path the "
                     "lower wins; remove one of them",
                     ru->written, policy_rule_kind_key(ru->kind), wd, via, policy_level_name(w->level));
    free(wd);
    free(resolved);
}

/* Did lattice_resolve drop another config grant in favour of g (same path)? */
static bool beat_another(lint_t *l, target_t t, const rrule_t *g)
{
    buf_t k = BUF_INIT;
    bool beaten = strmap_get(&l->ix[t]->beaten, grant_key(&k, NULL, g->base, g->path)) >= 0;
    buf_free(&k);
    return beaten;
}

/* shadowed-rule, redundant-rule and duplicate-rule for one grant. */
static void check_grant(lint_t *l, target_t t, const rule_t *ru)
{
    const rrule_t *g = kept_grant(l, t, ru);
    if (!g) {
        dropped_grant(l, t, ru);
        return;
    }
    const char *abs = lattice_rule_abs(g, &l->roots, &l->a);
    verdict_t at, up = {0};
    lint_level(l, t, abs, &at);
    const char *parent = parent_of(abs, &l->a);
    if (parent) lint_level(l, t, parent, &up);
    if (at.level < g->level && ru->level > LVL_NONE) {
        const rrule_t *cap = lowest_cap(&at);
        char *cd = cap ? rule_desc(l, cap->rule) : xstrdup("a cap");
        if (at.level == LVL_NONE || at.level <= up.level)
            lint_finding(l, "shadowed-rule", ru->span,
                         "'%s' in %s never decides: %s caps it at %s; remove the grant, or narrow the cap",
                         ru->written, policy_rule_kind_key(ru->kind), cd, policy_level_name(at.level));
        else
            lint_finding(l, "shadowed-rule", ru->span,
                         "'%s' in %s gives %s, not %s: %s caps it (caps are never raised by a deeper grant); use "
                         "allow_read, or narrow the cap",
                         ru->written, policy_rule_kind_key(ru->kind), policy_level_name(at.level),
                         policy_level_name(g->level), cd);
        free(cd);
        return;
    }
    if (!parent || g->level != up.grant_level || beat_another(l, t, g)) return;
    if (up.grant) {
        char *gd = rule_desc(l, up.grant->rule);
        lint_finding(l, "redundant-rule", ru->span, "'%s' in %s changes nothing: %s already gives %s there; remove it",
                     ru->written, policy_rule_kind_key(ru->kind), gd, policy_level_name(g->level));
        free(gd);
    } else {
        lint_finding(l, "redundant-rule", ru->span,
                     "'%s' in %s changes nothing: nothing above it grants access, and a path without a grant is already "
                     "hidden; remove it (or keep it as documentation and suppress this note)",
                     ru->written, policy_rule_kind_key(ru->kind));
    }
}

/* Could anything at, above or below abs reach a level above lvl? */
static bool above_level_near(lint_t *l, target_t t, const char *abs, level_t lvl)
{
    verdict_t v;
    lint_level(l, t, abs, &v);
    return v.grant_level > lvl || level_below(l, t, abs) > (long)lvl;
}

/* duplicate-rule and redundant-rule for one cap (deny_read glob, deny_write). */
static void check_cap(lint_t *l, target_t t, const rule_t *ru, size_t idx)
{
    resolved_t *r = l->res[t];
    rrule_t c = lattice_concretize(r, ru);
    buf_t key = BUF_INIT;
    long first = strmap_get(&l->ix[t]->first_cap, cap_key(&key, NULL, c));
    buf_free(&key);
    if (first >= 0 && (size_t)first < idx) {
        const rule_t *o = &l->pol->rules.v[first];
        char *od = rule_desc(l, o);
        lint_finding(l, "duplicate-rule", ru->span, "'%s' in %s names the same path as %s; remove one", ru->written,
                     policy_rule_kind_key(ru->kind), od);
        free(od);
        return;
    }
    const char *where = lattice_rule_abs(&c, &l->roots, &l->a);
    if (c.glob) where = glob_literal_prefix(where, &l->a);
    if (strcmp(where, "/") == 0 || above_level_near(l, t, where, ru->level)) return;
    bool rd = ru->level == LVL_NONE;
    lint_finding(l, "redundant-rule", ru->span,
                 "'%s' in %s changes nothing: nothing at or below %s is %s; remove it (or keep it for a later grant "
                 "and suppress this note)",
                 ru->written, policy_rule_kind_key(ru->kind), show(l, t, where), rd ? "readable" : "writable");
}

static void rule_path_rules(lint_t *l, target_t t)
{
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (ru->cap) check_cap(l, t, ru, i);
        else check_grant(l, t, ru);
    }
}

/* The credentials secret-readable looks for, below the home directory. */
/* clang-format off */
static const char *const home_secrets[] = {
    ".ssh", ".gnupg", ".aws", ".config/gcloud", ".azure", ".kube", ".docker/config.json", ".netrc",
    ".git-credentials", ".config/gh", NULL,
};
/* clang-format on */

typedef struct exposure {
    const rule_t *grant; /* the config grant that makes it readable */
    const char *what;    /* "~/.ssh" */
} exposure_t;

/* Exposures in the order found, each (grant, what) once: a hash, not a
 * scan (10,000 grants each opening .env made the scan quadratic). */
typedef struct exposures {
    VEC(exposure_t) v;
    strmap_t seen; /* "RULE-INDEX\x01what" */
} exposure_vec_t;

static void expose(lint_t *l, exposure_vec_t *v, const rule_t *g, const char *what)
{
    char *key = xasprintf("%td\x01%s", g - l->pol->rules.v, what);
    if (strmap_get(&v->seen, key) >= 0) {
        free(key);
        return;
    }
    strmap_put(&v->seen, arena_strdup(&l->a, key), 1);
    free(key);
    exposure_t e = {g, arena_strdup(&l->a, what)};
    vec_push(&v->v, e);
}

static void exposures_free(exposure_vec_t *v)
{
    vec_free(&v->v);
    strmap_free(&v->seen);
}

/* secret-readable: credentials below home (one finding per grant that
 * opens them), and .env files in the trees config grants open (one finding,
 * at the first such grant: the fix is one glob). The workspace is the
 * agent's own and is not counted. */
static void rule_secrets(lint_t *l)
{
    exposure_vec_t ex = {0}, env = {0};
    for (int t = 0; t < 2; t++) {
        resolved_t *r = l->res[t];
        for (const char *const *s = home_secrets; *s; s++) {
            const char *p = lattice_real_path(r, path_join(r->facts->home, *s, &l->a), &l->a);
            verdict_t v;
            if (lint_level(l, (target_t)t, p, &v) >= LVL_READ && v.grant && v.grant->rule->src)
                expose(l, &ex, v.grant->rule, path_join("~", *s, &l->a));
        }
        for (size_t i = 0; i < r->grants.n; i++) {
            const rrule_t *g = &r->grants.v[i];
            if (!g->rule->src || g->level == LVL_NONE || g->base != PB_ROOT) continue;
            verdict_t v;
            if (lint_level(l, (target_t)t, path_join(g->path, ".env", &l->a), &v) >= LVL_READ && v.grant == g)
                expose(l, &env, g->rule, g->rule->written);
        }
    }
    /* the credentials each config rule opens, in rule order (by rule index:
     * one pass over the exposures, not one per rule) */
    size_t nr = l->pol->rules.n;
    buf_t *what = xcalloc(nr + 1, sizeof *what);
    for (size_t k = 0; k < ex.v.n; k++) {
        buf_t *w = &what[ex.v.v[k].grant - l->pol->rules.v];
        buf_printf(w, "%s%s", w->len ? ", " : "", ex.v.v[k].what);
    }
    for (size_t i = 0; i < nr; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (what[i].len)
            lint_finding(l, "secret-readable", ru->span,
                         "'%s' in %s makes credentials readable: %s; add them to [filesystem] deny_read", ru->written,
                         policy_rule_kind_key(ru->kind), buf_cstr(&what[i]));
        buf_free(&what[i]);
    }
    free(what);
    /* .env: the first exposure of each rule, in rule order; each tree named once */
    const exposure_t **env_of = xcalloc(nr + 1, sizeof *env_of);
    for (size_t k = 0; k < env.v.n; k++) {
        size_t i = (size_t)(env.v.v[k].grant - l->pol->rules.v);
        if (!env_of[i]) env_of[i] = &env.v.v[k];
    }
    const rule_t *first = NULL;
    buf_t trees = BUF_INIT;
    strmap_t named = STRMAP_INIT;
    for (size_t i = 0; i < nr; i++) {
        if (!env_of[i]) continue;
        if (!first) first = env_of[i]->grant;
        if (strmap_get(&named, env_of[i]->what) >= 0) continue;
        strmap_put(&named, env_of[i]->what, 1);
        buf_printf(&trees, "%s%s", trees.len ? ", " : "", env_of[i]->what);
    }
    strmap_free(&named);
    free(env_of);
    if (first)
        lint_finding(l, "secret-readable", first->span,
                     ".env files are readable below %s; add \"**/.env\" to [filesystem] deny_read (reported at the "
                     "first grant that opens one)",
                     buf_cstr(&trees));
    buf_free(&trees);
    exposures_free(&ex);
    exposures_free(&env);
}

/* writable-system-dir: a write grant over a directory the host runs programs from. */
static void rule_system_dirs(lint_t *l)
{
    for (int t = 0; t < 2; t++) {
        resolved_t *r = l->res[t];
        const facts_t *f = r->facts;
        VEC(const char *) sys = {0};
        vec_push(&sys, "/");
        for (size_t i = 0; i < f->system_read.n; i++) vec_push(&sys, lattice_real_path(r, f->system_read.v[i], &l->a));
        for (size_t i = 0; i < f->path_dirs.n; i++) vec_push(&sys, lattice_real_path(r, f->path_dirs.v[i], &l->a));
        for (size_t i = 0; i < r->grants.n; i++) {
            const rrule_t *g = &r->grants.v[i];
            if (!g->rule->src || g->level != LVL_WRITE || g->base != PB_ROOT) continue;
            buf_t hit = BUF_INIT;
            for (size_t k = 0; k < sys.n; k++) {
                const char *d = sys.v[k];
                bool inside = path_is_under(g->path, d) && strcmp(d, "/") != 0;
                bool covers = path_is_under(d, g->path);
                verdict_t v;
                if (!(inside || covers)) continue;
                if (lint_level(l, (target_t)t, covers ? d : g->path, &v) != LVL_WRITE || v.grant != g) continue;
                const char *shown = show(l, (target_t)t, covers ? d : g->path);
                if (!strstr(buf_cstr(&hit), shown)) buf_printf(&hit, "%s%s", hit.len ? ", " : "", shown);
            }
            if (hit.len)
                lint_finding(l, "writable-system-dir", g->rule->span,
                             "'%s' in %s makes %s writable: the host runs programs from there (a system or $PATH "
                             "directory), so a program planted by the sandbox runs outside it; narrow the grant, or add "
                             "the directory to deny_write",
                             g->rule->written, policy_rule_kind_key(g->rule->kind), buf_cstr(&hit));
            buf_free(&hit);
        }
        vec_free(&sys);
    }
}

/* runtime-path-granted: a write grant over or inside a runtime-owned path
 * (SPEC §13). The path stays hidden whatever the grant; the finding tells
 * the operator the grant does not do there what it says. Read grants are
 * not reported: a readable home is common (readonly-home) and hiding the
 * runtime's files from it takes nothing the operator meant to give. Linux
 * only (the runner's); a few runtime-owned paths per grant: linear. */
static void rule_runtime_owned(lint_t *l)
{
    const resolved_t *r = l->res[TARGET_LINUX];
    /* the runtime-owned caps first: a handful, where the caps may be thousands */
    VEC(const rrule_t *) owned = {0};
    for (size_t k = 0; r && k < r->caps.n; k++)
        if (r->caps.v[k].rule->kind == RK_RUNTIME) vec_push(&owned, &r->caps.v[k]);
    for (size_t i = 0; r && i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        if (!g->rule->src || g->level != LVL_WRITE || g->base != PB_ROOT) continue;
        buf_t hit = BUF_INIT;
        for (size_t k = 0; k < owned.n; k++) {
            const rrule_t *c = owned.v[k];
            if (!(path_is_under(c->path, g->path) || path_is_under(g->path, c->path)))
                continue;
            buf_printf(&hit, "%s%s", hit.len ? ", " : "", show(l, TARGET_LINUX, c->path));
        }
        if (hit.len)
            lint_finding(l, "runtime-path-granted", g->rule->span,
                         "'%s' in %s covers %s, which the runtime owns (its state, config or caches): the sandbox never "
                         "sees them, whatever the grants, so that it cannot change what the runtime trusts; narrow the "
                         "grant, or keep it and know that these stay hidden",
                         g->rule->written, policy_rule_kind_key(g->rule->kind), buf_cstr(&hit));
        buf_free(&hit);
    }
    vec_free(&owned);
}

/* workspace-not-writable: a rule that takes the session's own dirs away. */
static void rule_session_dirs(lint_t *l)
{
    for (int t = 0; t < 2; t++) {
        const char *dirs[2] = {l->roots.workspace, l->roots.scratch};
        const char *names[2] = {"the session workspace", "the session scratch dir (the sandbox's HOME and TMPDIR)"};
        for (int k = 0; k < 2; k++) {
            verdict_t v;
            if (lint_level(l, (target_t)t, dirs[k], &v) == LVL_WRITE) continue;
            const rule_t *why = v.grant && v.grant->rule->src && v.grant_level < LVL_WRITE ? v.grant->rule : NULL;
            const rrule_t *cap = lowest_cap(&v);
            if (!why && cap && cap->rule->src) why = cap->rule;
            if (!why) continue;
            lint_finding(l, "workspace-not-writable", why->span,
                         "'%s' in %s makes %s %s: the agent cannot do its work there; remove it, or name the paths "
                         "below it to protect",
                         why->written, policy_rule_kind_key(why->kind), names[k],
                         v.level == LVL_NONE ? "hidden" : "read-only");
        }
    }
}

/* The first component of abs that the facts do not know to exist, or NULL. */
static const char *first_missing(lint_t *l, const facts_t *f, const char *abs)
{
    const char *p = abs;
    while (*++p) {
        while (*p && *p != '/') p++;
        const char *prefix = arena_strndup(&l->a, abs, (size_t)(p - abs));
        if (facts_lookup(f, prefix, &l->a).type == PT_MISSING) return prefix;
        if (!*p) break;
    }
    return NULL;
}

/* deny-path-missing: Linux has nothing to mount for a path that is not there. */
static void rule_missing_denies(lint_t *l)
{
    resolved_t *r = l->res[TARGET_LINUX];
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (ru->path.glob || (ru->kind != RK_DENY_READ && ru->kind != RK_DENY_WRITE)) continue;
        if (ru->path.base == PB_WORKSPACE || ru->path.base == PB_SCRATCH) continue; /* made fresh per session */
        rrule_t c = lattice_concretize(r, ru);
        const char *miss = first_missing(l, r->facts, c.path);
        if (!miss) continue;
        const char *parent = parent_of(miss, &l->a);
        bool writable = parent && lint_level(l, TARGET_LINUX, parent, NULL) == LVL_WRITE;
        if (writable)
            lint_finding(l, "deny-path-missing", ru->span,
                         "'%s' does not exist on this Linux host (facts): the sandbox blocks its first missing "
                         "component %s (an empty read-only directory, or /dev/null for a file) so it cannot be created "
                         "inside; one the host creates while a session runs is covered from the next session on",
                         ru->written, show(l, TARGET_LINUX, miss));
        else
            lint_finding(l, "deny-path-missing", ru->span,
                         "'%s' does not exist on this Linux host (facts), so there is nothing to mount over yet; if the "
                         "host creates it while a session runs, that session sees it until the next one starts",
                         ru->written);
    }
}

/* unenforceable-on-target for globs: bwrap expands them when a session starts. */
static void rule_glob_caps(lint_t *l)
{
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (!ru->path.glob) continue;
        if (ru->level == LVL_NONE)
            lint_finding(l, "unenforceable-on-target", ru->span,
                         "Linux cannot follow the glob '%s' as macOS does: bwrap hides the matches that exist when a "
                         "session starts; a matching file the host creates during the session is visible to it until "
                         "the next one (macOS enforces the pattern exactly)",
                         ru->written);
        else
            lint_finding(l, "unenforceable-on-target", ru->span,
                         "Linux cannot follow the glob '%s' as macOS does: bwrap makes the matches that exist when a "
                         "session starts read-only (and blocks a literal name at each writable root); a matching path "
                         "the sandbox creates at a new place (mkdir -p a/b, then a/b/...) stays writable (macOS "
                         "enforces the pattern exactly)",
                         ru->written);
    }
}

/* unenforceable-on-target when the facts say the access-time layer (SPEC
 * §16) cannot be used by the Linux runner: runs fall back to mounts, so
 * every glob cap (the [protect] patterns among them) holds only at the
 * depth scanned when a run starts. Said once, at the first glob cap the
 * file writes (else at its start), with the list. Facts without the fact
 * (older facts files, the committed golden ones) say nothing. */
static void rule_fs_layer(lint_t *l)
{
    const resolved_t *r = l->res[TARGET_LINUX];
    if (!r || !r->facts || r->facts->fs_layer != 0) return;
    buf_t list = BUF_INIT;
    for (size_t i = 0; i < r->caps.n; i++)
        if (r->caps.v[i].glob) buf_printf(&list, "%s'%s'", list.len ? ", " : "", r->caps.v[i].rule->written);
    span_t at = {0, 0};
    for (size_t i = 0; i < l->pol->rules.n; i++)
        if (l->pol->rules.v[i].path.glob && l->pol->rules.v[i].level < LVL_WRITE) {
            at = l->pol->rules.v[i].span;
            break;
        }
    if (list.len)
        lint_finding(l, "unenforceable-on-target", at,
                     "the access-time filesystem layer cannot be used on this Linux host (%s; facts): runs fall back to "
                     "mounts, so these caps hold only at the depth scanned when a run starts (existing matches, the "
                     "roots of the grants, existing .git dirs), and names created later in new or other directories "
                     "are not covered: %s",
                     r->facts->fs_layer_why ? r->facts->fs_layer_why : "unknown", buf_cstr(&list));
    buf_free(&list);
}

/* The span of the path key with the most entries (where a large profile comes from). */
static span_t largest_list(lint_t *l)
{
    const toml_value *root = l->doc ? toml_root(l->doc) : NULL;
    const toml_value *fs = lint_tget(root, "filesystem");
    static const char *const keys[] = {"allow_read", "deny_read", "allow_write", "deny_write"};
    span_t best = lint_key_span(root, "mount_allowlist");
    size_t most = lint_tlen(lint_tget(root, "mount_allowlist"));
    for (size_t i = 0; i < 4; i++) {
        size_t n = lint_tlen(lint_tget(fs, keys[i]));
        if (n > most) most = n, best = lint_key_span(fs, keys[i]);
    }
    return best;
}

/* profile-too-large, from the compiled artifacts; compile failures (a
 * path no profile can hold) are config errors. */
static void rule_artifacts(lint_t *l)
{
    sbpl_t *sb;
    sbpl_build(l->res[TARGET_MACOS], l->res[TARGET_MACOS]->facts, &l->raw, &sb);
    char *err = NULL;
    bwrap_t *bw = bwrap_plan(l->res[TARGET_LINUX], NULL, &err);
    if (!bw) diag_add(&l->raw, SEV_ERROR, "bad-path", NULL, (span_t){0, 0}, "the Linux sandbox cannot be planned: %s", err);
    free(err);
    buf_t args = BUF_INIT;
    if (bw) bwrap_render(bw, &args);
    size_t nsb = sb ? sb->rules.n : 0, sbb = sb ? sb->text.len : 0, nbw = bw ? bw->ops.n : 0;
    buf_t what = BUF_INIT; /* only what is over a limit: the counts of the rest are noise */
    if (nsb > LINT_MAX_SBPL_RULES || sbb > LINT_MAX_SBPL_BYTES)
        buf_printf(&what, "policy.sb has %zu file rules in %zu KiB (lint's limits: %d rules, %d KiB)", nsb, sbb / 1024,
                   LINT_MAX_SBPL_RULES, LINT_MAX_SBPL_BYTES / 1024);
    if (nbw > LINT_MAX_BWRAP_OPS)
        buf_printf(&what, "%sbwrap.args has %zu operations (lint's limit: %d)", what.len ? " and " : "", nbw,
                   LINT_MAX_BWRAP_OPS);
    if (what.len)
        lint_finding(l, "profile-too-large", largest_list(l),
                     "the compiled policy is large: %s; every file access is matched against the rules and every mount "
                     "is set up for each command: cover long lists with a parent directory or one glob",
                     buf_cstr(&what));
    buf_free(&what);
    buf_free(&args);
    sbpl_free(sb);
    bwrap_free(bw);
}

/* Whitespace-collapsed text, for comparing command entries. */
static const char *squeeze(lint_t *l, const char *s)
{
    buf_t b = BUF_INIT;
    for (const char *p = s; *p;) {
        size_t sp = strspn(p, " \t");
        p += sp;
        if (!*p) break;
        if (b.len) buf_addc(&b, ' ');
        size_t w = strcspn(p, " \t");
        buf_add(&b, p, w);
        p += w;
    }
    const char *r = arena_strdup(&l->a, buf_cstr(&b));
    buf_free(&b);
    return r;
}

/* duplicate-rule in a list of strings: one hash look-up per entry. */
static void dup_strings(lint_t *l, const str_entry_t *v, size_t n, const char *key, bool cmd)
{
    strmap_t first = STRMAP_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *s = cmd ? squeeze(l, v[i].s) : v[i].s;
        long k = strmap_get(&first, s);
        if (k < 0) {
            strmap_put(&first, s, (long)i);
            continue;
        }
        lint_finding(l, "duplicate-rule", v[i].span, "'%s' is listed twice in %s (first at line %u); remove one",
                     v[i].s, key, lint_line_of(l, v[k].span));
    }
    strmap_free(&first);
}

/* The domain entries by "kind\x01pattern" -> the first index so written. */
static strmap_t domain_index(lint_t *l)
{
    strmap_t m = STRMAP_INIT;
    buf_t k = BUF_INIT;
    for (size_t i = 0; i < l->pol->domains.n; i++) {
        const domain_rule_t *d = &l->pol->domains.v[i];
        buf_truncate(&k, 0);
        buf_printf(&k, "%d\x01%s", d->kind, d->pattern);
        if (strmap_get(&m, buf_cstr(&k)) < 0) strmap_put(&m, arena_strdup(&l->a, buf_cstr(&k)), (long)i);
    }
    buf_free(&k);
    return m;
}

static long domain_first(const strmap_t *m, int kind, const char *pattern)
{
    buf_t k = BUF_INIT;
    buf_printf(&k, "%d\x01%s", kind, pattern);
    long i = strmap_get(m, buf_cstr(&k));
    buf_free(&k);
    return i;
}

/* duplicate-rule and redundant-rule for domain entry i: the first other
 * entry that names the same hosts (earlier) or covers an exact host ("*",
 * or "*.SUFFIX" for one of its suffixes), found by look-ups, not a scan. */
static void check_domain(lint_t *l, const strmap_t *m, size_t i)
{
    const domain_rule_t *v = l->pol->domains.v, *d = &v[i];
    long best = -1;
    bool dup = false;
    long same = domain_first(m, d->kind, d->pattern);
    if (same >= 0 && (size_t)same < i) best = same, dup = true;
    if (d->kind == DOMAIN_EXACT) {
        long cand[2] = {domain_first(m, DOMAIN_ALL, "*"), -1};
        for (const char *p = strchr(d->pattern, '.'); p; p = strchr(p + 1, '.')) {
            long k = domain_first(m, DOMAIN_SUBDOMAINS, p + 1);
            if (k >= 0 && (cand[1] < 0 || k < cand[1])) cand[1] = k;
        }
        for (int c = 0; c < 2; c++) {
            long k = cand[c];
            if (k < 0 || (size_t)k == i || (best >= 0 && k > best)) continue;
            domain_entry_t e = {v[k].kind, (char *)v[k].pattern};
            if (domain_match(&e, d->pattern)) best = k, dup = false;
        }
    }
    if (best < 0) return;
    const domain_rule_t *o = &v[best];
    if (dup)
        lint_finding(l, "duplicate-rule", d->span, "'%s' in domain_allowlist names the same hosts as '%s' "
                                                   "(line %u); remove one",
                     d->written, o->written, lint_line_of(l, o->span));
    else
        lint_finding(l, "redundant-rule", d->span, "'%s' in domain_allowlist changes nothing: '%s' (line %u) "
                                                   "already covers it; remove it",
                     d->written, o->written, lint_line_of(l, o->span));
}

/* duplicate-rule / redundant-rule / shadowed-rule outside the filesystem. */
static void rule_lists(lint_t *l)
{
    const policy_t *p = l->pol;
    if (p->domains_present) {
        strmap_t m = domain_index(l);
        for (size_t i = 0; i < p->domains.n; i++) check_domain(l, &m, i);
        strmap_free(&m);
    }
    dup_strings(l, p->cmd_deny.v, p->cmd_deny.n, "bash_command_denylist", true);
    dup_strings(l, p->cmd_allow.v, p->cmd_allow.n, "bash_command_allowlist", true);
    dup_strings(l, p->env_allowlist.v, p->env_allowlist.n, "env_allowlist", false);
    dup_strings(l, p->env_passthrough.v, p->env_passthrough.n, "env.passthrough", false);
    for (size_t i = 0; i < p->env_passthrough.n; i++)
        for (size_t k = 0; k < p->env_set.n; k++)
            if (strcmp(p->env_passthrough.v[i].s, p->env_set.v[k].name) == 0)
                lint_finding(l, "shadowed-rule", p->env_passthrough.v[i].span,
                             "'%s' in env.passthrough never decides: env.set gives it a value (line %u), which wins; "
                             "remove one",
                             p->env_passthrough.v[i].s, lint_line_of(l, p->env_set.v[k].span));
}

void lint_rules_policy(lint_t *l)
{
    for (int t = 0; t < 2; t++) l->ix[t] = lindex_build(l, (target_t)t);
    for (int t = 0; t < 2; t++) rule_path_rules(l, (target_t)t);
    rule_secrets(l);
    rule_system_dirs(l);
    rule_runtime_owned(l);
    rule_session_dirs(l);
    rule_missing_denies(l);
    rule_glob_caps(l);
    rule_fs_layer(l);
    rule_lists(l);
    rule_artifacts(l);
    for (int t = 0; t < 2; t++) {
        lindex_free(l->ix[t]);
        l->ix[t] = NULL;
    }
}
