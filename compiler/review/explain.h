/* explain.h — `drun-policy explain`: what a policy lets the sandbox do, in
 * plain words, and the answer to one question (may it read / write PATH,
 * run CMD, fetch URL?) with the rule that decided it and the artifact lines
 * that enforce it on each target.
 *
 * A path answer has three sources that must agree: the lattice (lattice_level_of,
 * the single source of truth), the SBPL profile as sandboxd evaluates it
 * (sbpl_eval), and the mount namespace bwrap builds (bwrap_eval). On Linux
 * the plan is the exec-time plan for the given workspace when the facts are
 * probed from this host, and the compile-time template (bwrap.args, the
 * workspace taken as fresh and empty) when they come from a facts file.
 * Where an artifact decides differently from the lattice, the answer says
 * so and why (a missing protected path blocked at its first missing
 * component; a glob Linux cannot follow).
 */
#ifndef DRUN_EXPLAIN_H
#define DRUN_EXPLAIN_H

#include <stdbool.h>

#include "buf.h"
#include "lattice.h"
#include "policy.h"

typedef struct explain_opts {
    const char *facts_files[2]; /* --facts files (each names its target); NULL: probe this host
                                   for Linux, the built-in macOS facts for macOS */
    facts_t *facts[2];          /* or facts already loaded, by target_t (borrowed; NULL: the above) */
    const char *workspace;      /* --workspace as given; NULL: the current directory */
} explain_opts_t;

typedef struct explain explain_t;

/* Resolves and compiles p for both targets. p must outlive the result.
 * NULL with *err (caller frees) when facts cannot be loaded or the workspace
 * cannot be made absolute. */
explain_t *explain_new(const policy_t *p, const explain_opts_t *o, char **err);
void explain_free(explain_t *e);

/* The whole policy in plain words, grouped for a reviewer. */
void explain_overview(explain_t *e, buf_t *out);

/* The same overview as one JSON object written into j: policy, default,
 * targets (each: facts, home, workspace), scratch, plan ("exec" or
 * "template") and sections, each {"title", "lines"} with the lines of the
 * text form. */
struct jw;
void explain_overview_json(explain_t *e, struct jw *j);

typedef enum {
    EQ_READ,
    EQ_WRITE,
    EQ_EXEC,
    EQ_FETCH
} explain_q_t;

/* One answer. Text when j is NULL; else one JSON object written into j.
 * Returns false with *err (caller frees) when the question cannot be asked
 * (an empty path, a NUL byte). A "deny" is an answer, not a failure. */
struct jw;
bool explain_query(explain_t *e, explain_q_t q, const char *arg, buf_t *text, struct jw *j, char **err);

/* The per-target decisions of a path question, for tests and diff. */
typedef struct explain_levels {
    level_t lattice[2];  /* lattice_level_of, indexed by target_t */
    level_t enforced[2]; /* bwrap_eval (linux), sbpl_eval (macos) */
    bool explained[2];   /* enforced != lattice for a documented reason */
} explain_levels_t;
bool explain_path_levels(explain_t *e, const char *path, explain_levels_t *out, char **err);

/* How explain, lint and diff show an absolute path of r's target:
 * "${WORKSPACE}/x" or "${SCRATCH}/x" below a session root (roots may be
 * NULL), "~/x" below the facts' home, else the path. Result in a. */
const char *explain_show_path(const resolved_t *r, const roots_t *roots, const char *abs, arena_t *a);

#endif
