/* lattice.c — resolving a policy for a target, and level(path).
 *
 * level(P) = min(level of the deepest grant on P or an ancestor of P, every
 * cap matching P or an ancestor). Two grants on the same path: the lower one
 * wins. Everything that decides access — explain, the SBPL and bwrap
 * backends, the tests — goes through the rules built here.
 */
#include "lattice.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "glob.h"
#include "path.h"
#include "ppath.h"

/* [protect] patterns: each a cap at read, matching anywhere. */
static const struct {
    setting_id_t flag;
    const char *pattern;
} protect_patterns[] = {
    {S_PROTECT_GIT_HOOKS, "/**/.git/hooks"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/config"},
    /* submodules' and bare repositories' hooks and config run too (SPEC
     * §16); the Linux access-time layer also knows a repository by its
     * structure (decide.h), a profile only by these names */
    {S_PROTECT_GIT_HOOKS, "/**/.git/modules/**/hooks"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/modules/**/config"},
    {S_PROTECT_GIT_HOOKS, "/**/*.git/hooks"},
    {S_PROTECT_GIT_CONFIG, "/**/*.git/config"},
    /* names git reads instead of, or besides, config and hooks: a
     * commondir moves config and hooks elsewhere, a worktree's gitdir and
     * config.worktree add config, alternates and attributes add objects
     * and filters (SPEC §16) */
    {S_PROTECT_GIT_CONFIG, "/**/.git/commondir"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/config.worktree"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/worktrees/*/commondir"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/worktrees/*/gitdir"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/worktrees/*/config.worktree"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/info/attributes"},
    {S_PROTECT_GIT_CONFIG, "/**/.git/objects/info/alternates"},
    {S_PROTECT_SHELL_RC, "/**/.bashrc"},
    {S_PROTECT_SHELL_RC, "/**/.bash_profile"},
    {S_PROTECT_SHELL_RC, "/**/.zshrc"},
    {S_PROTECT_SHELL_RC, "/**/.zprofile"},
    {S_PROTECT_SHELL_RC, "/**/.profile"},
    {S_PROTECT_SHELL_RC, "/**/.zshenv"},
    {S_PROTECT_SHELL_RC, "/**/.zlogin"},
    {S_PROTECT_SHELL_RC, "/**/.bash_login"},
    {S_PROTECT_SHELL_RC, "/**/.bash_logout"},
    {S_PROTECT_SHELL_RC, "/**/.config/fish/config.fish"},
    {S_PROTECT_EDITOR_DIRS, "/**/.vscode"},
    {S_PROTECT_EDITOR_DIRS, "/**/.idea"},
    {S_PROTECT_AGENT_CONFIG, "/**/.mcp.json"},
    {S_PROTECT_AGENT_CONFIG, "/**/.claude/commands"},
    {S_PROTECT_AGENT_CONFIG, "/**/.claude/agents"},
    {S_PROTECT_AGENT_CONFIG, "/**/.ripgreprc"},
    {S_PROTECT_AGENT_CONFIG, "/**/.gitconfig"},
    {S_PROTECT_AGENT_CONFIG, "/**/.gitmodules"},
    {S_PROTECT_AGENT_CONFIG, "/**/.claude/settings.json"},
    {S_PROTECT_AGENT_CONFIG, "/**/.claude/settings.local.json"},
    {S_PROTECT_AGENT_CONFIG, "/**/.cursor/mcp.json"},
    {S_PROTECT_AGENT_CONFIG, "/**/.npmrc"},
    {S_PROTECT_AGENT_CONFIG, "/**/.yarnrc.yml"},
};

static const char *protect_origin(setting_id_t id)
{
    switch (id) {
    case S_PROTECT_GIT_HOOKS: return "protect.git_hooks";
    case S_PROTECT_GIT_CONFIG: return "protect.git_config";
    case S_PROTECT_SHELL_RC: return "protect.shell_rc";
    case S_PROTECT_EDITOR_DIRS: return "protect.editor_dirs";
    default: return "protect.agent_config";
    }
}

/* Rewrites a macOS path through the firmlinks (/tmp -> /private/tmp). */
static const char *firmlink(const facts_t *f, const char *path, arena_t *a)
{
    for (size_t i = 0; i < f->firmlinks.n; i++) {
        const link_fact_t *l = &f->firmlinks.v[i];
        if (path_is_under(path, l->link)) return path_join(l->target, path + strlen(l->link) + (path[strlen(l->link)] == '/'), a);
    }
    return path;
}

/* A merged-/usr top-level link (/bin -> usr/bin) as an absolute target. */
static const char *root_link(const facts_t *f, const char *path, arena_t *a)
{
    for (size_t i = 0; i < f->root_links.n; i++) {
        const link_fact_t *l = &f->root_links.v[i];
        if (!path_is_under(path, l->link)) continue;
        const char *t = l->target[0] == '/' ? l->target : path_join("/", l->target, a);
        size_t n = strlen(l->link);
        return path_join(t, path[n] == '/' ? path + n + 1 : "", a);
    }
    return path;
}

/* The object an absolute literal path names on the target: firmlinks, then
 * top-level links, then what the facts know of symlinks below. */
static const char *real_path(const facts_t *f, const char *path, arena_t *a)
{
    path = firmlink(f, path, a);
    path = root_link(f, path, a);
    path_fact_t pf = facts_lookup(f, path, a);
    return pf.realpath;
}

static int cmp_grant(const void *x, const void *y)
{
    const rrule_t *a = x, *b = y;
    if (a->base != b->base) return (int)a->base - (int)b->base;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return strcmp(a->path, b->path);
}

/* Adds a grant, keeping one per path: the lowest level (first written wins
 * a tie). idx maps "base:path" to the grant's index. */
static void add_grant(resolved_t *r, strmap_t *idx, rrule_t g)
{
    buf_t k = BUF_INIT;
    buf_addc(&k, (char)('0' + g.base));
    buf_adds(&k, g.path);
    const char *key = arena_strdup(&r->arena, buf_cstr(&k));
    buf_free(&k);
    long at = strmap_get(idx, key);
    if (at >= 0) {
        if (g.level < r->grants.v[at].level) r->grants.v[at] = g;
        return;
    }
    strmap_put(idx, key, (long)r->grants.n);
    vec_push(&r->grants, g);
}

static rule_t *builtin(resolved_t *r, rule_kind_t kind, path_base_t base, const char *rel, level_t lvl,
                       bool cap, const char *origin)
{
    rule_t *b = arena_zalloc(&r->arena, sizeof *b);
    b->kind = kind;
    b->path.base = base;
    b->path.rel = rel;
    b->path.glob = cap && glob_has_wildcard(rel);
    b->path.anywhere = b->path.glob && strncmp(rel, "**", 2) == 0;
    b->level = lvl;
    b->cap = cap;
    b->origin = origin;
    buf_t w = BUF_INIT;
    ppath_format(&b->path, &w);
    b->written = arena_strdup(&r->arena, buf_cstr(&w));
    buf_free(&w);
    return b;
}

/* Turns one IR rule into its concrete form for the target. */
static rrule_t concretize(resolved_t *r, const rule_t *rule)
{
    const facts_t *f = r->facts;
    rrule_t c = {0};
    c.rule = rule;
    c.level = rule->level;
    c.cap = rule->cap;
    c.glob = rule->path.glob;
    c.anywhere = rule->path.anywhere;
    switch (rule->path.base) {
    case PB_WORKSPACE:
    case PB_SCRATCH:
        c.base = rule->path.base;
        c.path = c.lexical = rule->path.rel;
        c.depth = *c.path ? path_depth(path_join("/", c.path, &r->arena)) : 0;
        return c;
    case PB_HOME:
        c.lexical = path_join(f->home, rule->path.rel, &r->arena);
        break;
    case PB_ROOT:
        c.lexical = path_join("/", rule->path.rel, &r->arena);
        break;
    }
    c.base = PB_ROOT;
    if (c.glob) {
        /* Resolve the literal head of the glob like any path; keep the rest. */
        size_t hl = glob_literal_prefix_len(c.lexical);
        const char *head = glob_unescape(arena_strndup(&r->arena, c.lexical, hl), &r->arena);
        const char *real = hl ? real_path(f, head, &r->arena) : "/";
        const char *rest = c.lexical + hl + (c.lexical[hl] == '/');
        c.path = path_join(glob_escape(real, &r->arena), rest, &r->arena);
    } else {
        c.path = real_path(f, c.lexical, &r->arena);
    }
    c.depth = path_depth(c.path);
    return c;
}

/* ---- runtime-owned paths ---------------------------------------------------------------------------- */

#define WHY_CONFIG_DIR "drun's config dir (~/.drun/config.toml is the config when none is named)"
#define WHY_STATE "the runtime's state dir (sessions, workspace locks)"
#define WHY_CACHE "the bwrap probe cache (it decides --disable-userns)"

/* The registry: written by the host-side caller at start-up, then only read. */
static struct owned {
    char *path, *why;
} *owned;
static size_t nowned;

void lattice_owned_add(const char *path, const char *why)
{
    if (!path || !*path) return;
    /* the object it names: the planner mounts over objects, never over a
     * link; a missing path is kept as written (blocked where it would be made) */
    char real[PATH_MAX], cwd[PATH_MAX];
    char *abs = realpath(path, real)      ? xstrdup(real)
                : path[0] == '/'          ? xstrdup(path)
                : getcwd(cwd, sizeof cwd) ? xasprintf("%s/%s", cwd, path)
                                          : NULL;
    arena_t tmp = ARENA_INIT;
    const char *norm = abs ? path_normalize(abs, &tmp) : NULL;
    if (norm && strcmp(norm, "/") == 0) norm = NULL;       /* never the whole host (a --state-dir of /) */
    for (size_t i = 0; norm && i < nowned; i++)
        if (strcmp(owned[i].path, norm) == 0) norm = NULL; /* once is enough */
    if (norm) {
        owned = xrealloc(owned, (nowned + 1) * sizeof *owned);
        owned[nowned++] = (struct owned){xstrdup(norm), xstrdup(why)};
    }
    arena_free(&tmp);
    free(abs);
}

const char *lattice_owned_at(size_t i, const char **why)
{
    if (i >= nowned) return NULL;
    if (why) *why = owned[i].why;
    return owned[i].path;
}

/* Registers dir/sub when dir is an absolute path. */
static void add_below(const char *dir, const char *sub, const char *why)
{
    if (!dir || dir[0] != '/') return;
    char *p = xasprintf("%s/%s", dir, sub);
    lattice_owned_add(p, why);
    free(p);
}

void lattice_owned_add_defaults(const char *config)
{
    char *state = fsutil_state_path("");
    if (state) lattice_owned_add(state, WHY_STATE);
    free(state);
    add_below(getenv("HOME"), ".drun", WHY_CONFIG_DIR);
    add_below(getenv("XDG_CACHE_HOME"), "drun", WHY_CACHE); /* facts.c's cache, when not ~/.cache */
    const char *env = getenv("DRUN_CONFIG");
    if (env && *env) lattice_owned_add(env, "the config named by $DRUN_CONFIG");
    if (config && strncmp(config, "builtin:", 8) != 0) lattice_owned_add(config, "the config in force");
}

/* The defaults every Linux resolve knows from the facts alone (so that
 * lint and explain show them with a facts file too). */
static const struct {
    const char *rel, *written, *why;
} owned_below_home[] = {
    {".drun", "~/.drun", WHY_CONFIG_DIR},
    {".local/state/drun", "~/.local/state/drun", "the runtime's default state dir (sessions, workspace locks)"},
    {".cache/drun", "~/.cache/drun", WHY_CACHE},
};
#define N_BELOW_HOME (sizeof owned_below_home / sizeof *owned_below_home)

const char *lattice_owned_default_at(size_t i, const char **why)
{
    if (i >= N_BELOW_HOME) return NULL;
    if (why) *why = owned_below_home[i].why;
    return owned_below_home[i].written;
}

/* Adds a runtime-owned rule, a literal cap at none, unless its path is
 * there already (a registered path that is a default too). */
static void add_owned(resolved_t *r, strmap_t *seen, path_base_t base, const char *rel, const char *why)
{
    rule_t *b = arena_zalloc(&r->arena, sizeof *b);
    b->kind = RK_RUNTIME;
    b->path.base = base;
    b->path.rel = arena_strdup(&r->arena, rel); /* literal even with '*' in it: glob stays false */
    b->level = LVL_NONE;
    b->cap = true;
    b->origin = arena_strdup(&r->arena, why);
    b->written = base == PB_HOME ? path_join("~", rel, &r->arena) : path_join("/", rel, &r->arena);
    rrule_t c = concretize(r, b);
    if (strmap_put(seen, c.path, 1) < 0) vec_push(&r->caps, c);
}

static void add_runtime_owned(resolved_t *r)
{
    strmap_t seen = STRMAP_INIT;
    for (size_t i = 0; i < N_BELOW_HOME; i++)
        add_owned(r, &seen, PB_HOME, owned_below_home[i].rel, owned_below_home[i].why);
    /* the registered paths are this host's (the Linux runner's); a macOS
     * profile darkens the defaults below the facts' home */
    for (size_t i = 0; r->target == TARGET_LINUX && i < nowned; i++)
        add_owned(r, &seen, PB_ROOT, owned[i].path + 1, owned[i].why);
    strmap_free(&seen);
}

bool lattice_exempt_from_dark(const roots_t *roots, const char *dark, const char *abs)
{
    if (!roots) return false;
    const char *rt[2] = {roots->workspace, roots->scratch};
    for (int i = 0; i < 2; i++)
        if (rt[i] && path_is_under(rt[i], dark) && path_is_under(abs, rt[i])) return true;
    return false;
}

resolved_t *lattice_resolve(const policy_t *p, const facts_t *f)
{
    resolved_t *r = xcalloc(1, sizeof *r);
    r->pol = p;
    r->facts = f;
    r->target = f->target;
    strmap_t idx = STRMAP_INIT;

    for (size_t i = 0; i < f->system_read.n; i++) {
        rule_t *b = builtin(r, RK_SYSTEM, PB_ROOT, f->system_read.v[i] + 1, LVL_READ, false, "system read set");
        add_grant(r, &idx, concretize(r, b));
    }
    if (policy_get(p, S_READ_PATH_DIRS))
        for (size_t i = 0; i < f->path_dirs.n; i++) {
            rule_t *b = builtin(r, RK_PATH_DIR, PB_ROOT, f->path_dirs.v[i] + 1, LVL_READ, false, "$PATH");
            add_grant(r, &idx, concretize(r, b));
        }
    add_grant(r, &idx, concretize(r, builtin(r, RK_WORKSPACE, PB_WORKSPACE, "", LVL_WRITE, false, "the session workspace")));
    add_grant(r, &idx, concretize(r, builtin(r, RK_SCRATCH, PB_SCRATCH, "", LVL_WRITE, false, "the session scratch dir")));

    for (size_t i = 0; i < p->rules.n; i++) {
        rrule_t c = concretize(r, &p->rules.v[i]);
        if (c.cap) vec_push(&r->caps, c);
        else add_grant(r, &idx, c);
    }
    for (size_t i = 0; i < sizeof protect_patterns / sizeof *protect_patterns; i++) {
        if (!policy_get(p, protect_patterns[i].flag)) continue;
        rule_t *b = builtin(r, RK_PROTECT, PB_ROOT, protect_patterns[i].pattern + 1, LVL_READ, true,
                            protect_origin(protect_patterns[i].flag));
        vec_push(&r->caps, concretize(r, b));
    }
    add_runtime_owned(r);
    strmap_free(&idx);
    if (r->grants.n) qsort(r->grants.v, r->grants.n, sizeof *r->grants.v, cmp_grant);
    return r;
}

rrule_t lattice_concretize(resolved_t *r, const rule_t *rule) { return concretize(r, rule); }

const char *lattice_real_path(const resolved_t *r, const char *path, arena_t *a) { return real_path(r->facts, path, a); }

void lattice_free(resolved_t *r)
{
    if (!r) return;
    vec_free(&r->grants);
    vec_free(&r->caps);
    arena_free(&r->arena);
    free(r);
}

const char *lattice_rule_abs(const rrule_t *r, const roots_t *roots, arena_t *tmp)
{
    switch (r->base) {
    case PB_WORKSPACE: return roots && roots->workspace ? path_join(roots->workspace, r->path, tmp) : NULL;
    case PB_SCRATCH: return roots && roots->scratch ? path_join(roots->scratch, r->path, tmp) : NULL;
    default: return r->path;
    }
}

bool lattice_cap_matches(const rrule_t *c, const roots_t *roots, const char *path, arena_t *tmp)
{
    const char *abs = lattice_rule_abs(c, roots, tmp);
    if (!abs) return false;
    if (c->rule->kind == RK_RUNTIME)
        return path_is_under(path, abs) && !lattice_exempt_from_dark(roots, abs, path);
    return c->glob ? glob_match_prefix(abs, path) : path_is_under(path, abs);
}

level_t lattice_level_of(const resolved_t *r, const roots_t *roots, const char *path, verdict_t *why)
{
    arena_t tmp = ARENA_INIT;
    verdict_t v = {0};
    v.grant_level = LVL_NONE;
    unsigned best_depth = 0;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        const char *abs = lattice_rule_abs(g, roots, &tmp);
        if (!abs || !path_is_under(path, abs)) continue;
        unsigned d = path_depth(abs);
        /* deeper wins; at equal depth (the same path reached from two bases,
         * e.g. allow_write naming the workspace) the lower level wins */
        if (!v.grant || d > best_depth || (d == best_depth && g->level < v.grant_level)) {
            v.grant = g;
            v.grant_level = g->level;
            best_depth = d;
        }
    }
    v.level = v.grant_level;
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        if (!lattice_cap_matches(c, roots, path, &tmp)) continue;
        if (v.ncaps < sizeof v.caps / sizeof *v.caps) v.caps[v.ncaps++] = c;
        if (c->level < v.level) v.level = c->level;
    }
    arena_free(&tmp);
    if (why) *why = v;
    return v.level;
}
