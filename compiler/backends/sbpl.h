/* sbpl.h — the macOS backend: a resolved policy → a Seatbelt (SBPL) profile.
 *
 * The profile is built as a list of structured rules first (kept for
 * explain, which evaluates them with SBPL's last-match-wins rule), then
 * rendered. Session paths are parameters: run it as
 *   sandbox-exec -f policy.sb -D WORKSPACE=/abs/ws -D SCRATCH=/abs/tmp CMD
 */
#ifndef DRUN_SBPL_H
#define DRUN_SBPL_H

#include "lattice.h"

enum {
    SB_READ = 1,   /* file-read* (data and metadata) */
    SB_WRITE = 2,  /* file-write* (every write, unlink included) */
    SB_UNLINK = 4, /* file-write-unlink only */
    SB_META = 8,   /* file-read-metadata only */
};

typedef enum {
    SBF_SUBPATH,
    SBF_LITERAL,
    SBF_REGEX
} sbpl_filter_t;

typedef struct sbpl_rule {
    bool allow;            /* allow or deny */
    unsigned ops;          /* SB_* */
    sbpl_filter_t filter;  /* subpath, literal, regex */
    path_base_t base;      /* PB_ROOT, or relative to a session parameter */
    const char *arg;       /* absolute path / relative rest / regex (unquoted) */
    const rrule_t *origin; /* the lattice rule it enforces */
    unsigned line;         /* 1-based line in the rendered profile */
    const char *guard;     /* if set, the rule applies only when this absolute path is
                              at or below the workspace or the scratch dir (written as
                              (if (drun-in-session? GUARD) RULE)) */
    const char *dark;      /* if set (a session-relative rule), the rule applies only when
                              its session root is at or below this runtime-owned path
                              (written as (if (drun-under? (param "ROOT") DARK) RULE)) */
} sbpl_rule_t;

typedef struct sbpl {
    arena_t arena;
    VEC(sbpl_rule_t) rules;         /* filesystem rules in emission order */
    buf_t text;                     /* the profile */
    struct sbpl_re_cache *re_cache; /* sbpl_eval's compiled regexes (sbpl.c), per rule */
} sbpl_t;

/* The backends' shared shape: builds the profile for r (target macOS),
 * resolved with facts f, into *out (free with sbpl_free). False, *out NULL,
 * with an error in diags when a string cannot be written safely (it never
 * reaches the output). */
bool sbpl_build(const resolved_t *r, const facts_t *f, diag_list_t *diags, sbpl_t **out);
void sbpl_free(sbpl_t *s);

/* Evaluates the structured rules for path with the session roots, the way
 * sandboxd does (last match wins per operation). Returns the level and, when
 * not NULL, the rules that decided read and write (NULL: the default deny).
 * It keeps each regex rule compiled in s (re_cache): one thread at a time
 * per profile. */
level_t sbpl_eval(const sbpl_t *s, const roots_t *roots, const char *path,
                  const sbpl_rule_t **read_by, const sbpl_rule_t **write_by);

/* The regex (ERE, anchored) for an absolute glob pattern: the matched path,
 * and with below everything under it too. Result in a. */
const char *sbpl_glob_regex(const char *pattern, bool below, arena_t *a);

/* Appends s as an SBPL string literal; false if s holds a byte that cannot
 * appear in a profile (control characters: rejected earlier, checked again). */
bool sbpl_quote(buf_t *out, const char *s);

#endif
