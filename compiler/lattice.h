/* lattice.h — grants and caps for one target (SPEC §3.4), and level(path):
 * the single source of truth that explain, both backends and the tests use.
 *
 * lattice_resolve() turns the IR into concrete rules for a target: built-in
 * rules added (system read set, $PATH dirs, workspace, scratch, [protect]),
 * ~ resolved against the facts' home, symlinks resolved through the facts,
 * macOS firmlinks applied. Session paths (${WORKSPACE}, ${SCRATCH}) stay
 * symbolic in the rules; level() takes their concrete values.
 */
#ifndef DRUN_LATTICE_H
#define DRUN_LATTICE_H

#include "facts.h"
#include "policy.h"

/* One concrete rule of the resolved policy. */
typedef struct rrule {
    const rule_t *rule;  /* the IR rule (config entry or built-in) */
    path_base_t base;    /* PB_ROOT, PB_WORKSPACE or PB_SCRATCH (never PB_HOME) */
    const char *path;    /* PB_ROOT: absolute path or glob; else relative ("" = the root) */
    const char *lexical; /* the path before symlink/firmlink resolution (== path if none) */
    level_t level;       /* grant level, or cap ceiling */
    bool cap;            /* cap rather than grant */
    bool glob;           /* path is a glob (caps only) */
    bool anywhere;       /* glob matches below any directory */
    unsigned depth;      /* components in path (for PB_ROOT); sorting key */
} rrule_t;

typedef struct resolved {
    arena_t arena;
    const policy_t *pol;  /* borrowed */
    const facts_t *facts; /* borrowed */
    target_t target;
    VEC(rrule_t) grants;  /* parent-first (depth, then path), one per path: the lowest level */
    VEC(rrule_t) caps;    /* in a stable order (kind, then path) */
} resolved_t;

resolved_t *lattice_resolve(const policy_t *p, const facts_t *f);
void lattice_free(resolved_t *r);

/* ---- runtime-owned paths (SPEC §13) ------------------------------------------------------------
 *
 * The files the runtime itself relies on are dark in every Linux sandbox
 * (and the defaults below home in every macOS profile), whatever the
 * grants: lattice_resolve adds each as a built-in cap at none
 * (RK_RUNTIME), so lattice_level_of() answers "none" for it and everything below it,
 * explain names it, lint warns about a grant that covers it, and every
 * exec-time bwrap plan hides it (an empty read-only tmpfs for a directory,
 * /dev/null for a file, a block for a missing one) and pins its ancestors
 * up to its grant root so that it cannot be renamed away. The compile-time
 * template (bwrap.args) leaves them out: the set belongs to the process that
 * runs the sandbox, not to the artifacts.
 *
 * The set is the union of
 *  - the defaults below the facts' home: ~/.drun (the config dir),
 *    ~/.local/state/drun (the default state dir), ~/.cache/drun (the bwrap
 *    probe cache, which decides --disable-userns);
 *  - what the host-side caller registers: the state dir in use, the config
 *    in force, drun-mcp's --artifacts DIR and --token-file.
 *
 * A session's own workspace and scratch dir inside a runtime-owned dir (drun-
 * mcp's STATE/sessions/ID/...) are not darkened: lattice_level_of() and the planner
 * skip a runtime-owned cap for a path inside a session root that lies inside
 * it. */

/* Registers path as runtime-owned, with a short reason shown by explain and
 * get_policy ("the config in force"). The object it names is registered
 * (symlinks resolved; a relative path taken from the current directory; a
 * missing path as written). Copied. Call before any thread resolves a
 * policy: the registry is read without a lock. */
void lattice_owned_add(const char *path, const char *why);

/* The registered paths, in the order added: path i, or NULL past the end. */
const char *lattice_owned_at(size_t i, const char **why);

/* The defaults below home, as written ("~/.drun"): entry i, or NULL past the end. */
const char *lattice_owned_default_at(size_t i, const char **why);

/* Registers what every host-side caller owns: the state dir (fsutil_state_path),
 * ~/.drun, the bwrap probe cache ($XDG_CACHE_HOME/drun), $DRUN_CONFIG when
 * set, and config when not NULL or builtin:. */
void lattice_owned_add_defaults(const char *config);

/* Concrete session roots for level() and for exec-time planning. */
typedef struct roots {
    const char *workspace;   /* absolute, normalised, realpath */
    const char *scratch;
    const char *const *hide; /* exec time: directories the sandbox must not see even when a
                                grant covers them (other sessions), NULL-terminated, or NULL;
                                the session's own workspace and scratch inside stay visible */
    bool scratch_tmpfs;      /* exec time: the scratch dir is a fresh tmpfs mounted on the
                                (empty) host dir, not the host dir itself: `run`'s */
} roots_t;

/* The absolute path of a rule given the roots (into tmp). */
const char *lattice_rule_abs(const rrule_t *r, const roots_t *roots, arena_t *tmp);

typedef struct verdict {
    level_t level;           /* min(grant, caps) */
    level_t grant_level;     /* before caps */
    const rrule_t *grant;    /* the deciding grant, NULL when no grant covers the path */
    const rrule_t *caps[16]; /* caps that match the path or an ancestor */
    unsigned ncaps;
} verdict_t;

/* level(path): path must be absolute and normalised (see path_normalize). */
level_t lattice_level_of(const resolved_t *r, const roots_t *roots, const char *path, verdict_t *why);

/* The concrete form of one IR rule for r's target, exactly as lattice_resolve
 * builds it (strings in r's arena). Lint and diff use it for rules that
 * lattice_resolve dropped (a second grant on the same path). */
rrule_t lattice_concretize(resolved_t *r, const rule_t *rule);

/* The object an absolute, normalised path names on r's target: firmlinks,
 * merged-/usr links, then the symlinks the facts know (result in a). The
 * form lattice_level_of() expects for a path the user typed. */
const char *lattice_real_path(const resolved_t *r, const char *path, arena_t *a);

/* Does glob rule r (a cap) match path or one of its ancestors? A
 * runtime-owned cap does not match inside a session root that lies inside
 * its path (the session's own dirs under the state dir). */
bool lattice_cap_matches(const rrule_t *c, const roots_t *roots, const char *path, arena_t *tmp);

/* Is abs (at or below runtime-owned path dark) inside one of the session
 * roots that lie inside dark? Those stay visible to their own sandbox. */
bool lattice_exempt_from_dark(const roots_t *roots, const char *dark, const char *abs);

#endif
