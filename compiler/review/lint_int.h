/* lint_int.h — what the files of lint share (lint.h is the public door):
 * the run's state, how a finding is added, the two rule sets and the
 * suppression comments.
 *   lint.c               the driver: run, sort, split by suppression
 *   lint_rules_tree.c    rules that need only the TOML tree
 *   lint_rules_policy.c  rules that need the policy's meaning (lattice, artifacts)
 *   lint_suppress.c      '# drun-policy: allow ID' comments
 *   lint_render.c        text, JSON, SARIF and the rule table
 */
#ifndef DRUN_LINT_INT_H
#define DRUN_LINT_INT_H

#include "facts.h"
#include "lattice.h"
#include "lint.h"
#include "policy.h"
#include "toml.h"

typedef struct lint {
    source_t *src;     /* the config text (lint's copy) */
    toml_doc *doc;     /* its tree; NULL on a syntax error */
    policy_t *pol;     /* NULL when policy_build failed */
    facts_t *facts[2]; /* indexed by target_t */
    bool own_facts[2]; /* loaded here (else borrowed from the options) */
    resolved_t *res[2];
    roots_t roots;
    diag_list_t raw;      /* every finding, unsorted */
    strmap_t seen;        /* "id\x01offset\x01message" of findings already added */
    arena_t a;
    struct lindex *ix[2]; /* res[t]'s rules by path, while the lattice rules run */
} lint_t;

/* Adds one finding at span of the config (severity from the table). The
 * same finding found on both targets is added once. */
void lint_finding(lint_t *l, const char *id, span_t span, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The rules that need only the parsed file (l->doc set); they still run
 * when the policy is rejected. */
void lint_rules_tree(lint_t *l);

/* The rules that need the policy and the facts of both targets (l->pol,
 * l->res set): the lattice, the lists, the compiled artifacts. */
void lint_rules_policy(lint_t *l);

/* ---- suppression comments (lint_suppress.c) ---- */

typedef struct lint_supp {
    unsigned line;  /* the comment's line */
    const char *id; /* into the source text, idlen bytes */
    size_t idlen;
    span_t span;    /* of the ID */
} lint_supp_t;

typedef VEC(lint_supp_t) lint_supp_vec_t;

/* Every "# drun-policy: allow ID[, ID...]" comment of the config, in order. */
void lint_supp_scan(lint_t *l, lint_supp_vec_t *out);

/* bad-suppression findings for the IDs that are not lint rules. */
void lint_supp_check(lint_t *l, const lint_supp_vec_t *s);

/* Does a comment on d's line or the line above name d's rule? Config
 * errors are never suppressed. */
bool lint_supp_covers(const lint_supp_vec_t *s, const diag_t *d);

/* ---- small tree helpers ---- */

static inline const toml_value *lint_tget(const toml_value *tab, const char *key)
{
    return tab ? toml_get(tab, key) : NULL;
}

static inline size_t lint_tlen(const toml_value *v) { return v ? toml_len(v) : 0; }

/* The span of key in tab, or the start of the file when tab has none. */
static inline span_t lint_key_span(const toml_value *tab, const char *key)
{
    long i = tab ? toml_index(tab, key) : -1;
    return i >= 0 ? toml_key_span_at(tab, (size_t)i) : (span_t){0, 0};
}

static inline unsigned lint_line_of(lint_t *l, span_t s) { return source_pos(l->src, s.start).line; }

#endif
