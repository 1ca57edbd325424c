/* diff.h — `drun-policy diff` and the unified diff `check` prints.
 *
 * diff_policies() says what a change means before it says which lines moved:
 * each access granted or revoked (computed from the two lattices over every
 * path either policy names, their glob instances and the session dirs), each
 * domain, command-list entry, limit, environment variable and protection
 * changed; then the unified diff of the compiled artifacts. The line diff is
 * Myers' O(ND) algorithm, written here: nothing is run through a shell.
 */
#ifndef DRUN_DIFF_H
#define DRUN_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "facts.h"
#include "policy.h"

/* Appends the unified diff (3 lines of context, GNU diff -u hunk headers)
 * of two texts to out, headed "--- name_a" / "+++ name_b". Returns true when
 * the texts differ; appends nothing when they are equal. Texts may be any
 * bytes; a missing final newline is marked as diff(1) does. */
bool diff_unified(const char *name_a, const char *a, size_t alen, const char *name_b, const char *b, size_t blen,
                  buf_t *out);

typedef struct diff_opts {
    const char *facts_files[2];  /* --facts files (each names its target); NULL: probe / built-in */
    facts_t *facts[2];           /* or facts already loaded, by target_t (borrowed) */
    const char *name_a, *name_b; /* headers of the artifact diff ("old/config.toml") */
} diff_opts_t;

/* Compares old and new; appends the report (text, or one JSON object when
 * json) to out. Returns 1 when they differ in meaning or in artifacts, 0
 * when not, -1 with *err (caller frees) when facts cannot be loaded. */
int diff_policies(const policy_t *old, const policy_t *new_, const diff_opts_t *o, bool json, buf_t *out, char **err);

#endif
