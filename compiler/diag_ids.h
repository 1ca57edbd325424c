/* diag_ids.h — the one table of diagnostic IDs: every ID the compiler's
 * schema and lint can report, with its default severity, a one-line summary
 * and its anchor in docs/lint-rules.md. lint (severities, SARIF rule
 * metadata), explain, the docs and the tests read this table, so a rule
 * cannot exist in one of them and not in the others.
 */
#ifndef DRUN_DIAGIDS_H
#define DRUN_DIAGIDS_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

typedef struct diag_info {
    const char *id;      /* "secret-readable": stable, kebab-case, never reused */
    severity_t sev;      /* default severity */
    bool config_error;   /* raised by policy_build: the policy is rejected and
                            the finding cannot be suppressed */
    const char *summary; /* one line: what it catches */
    const char *anchor;  /* "docs/lint-rules.md#secret-readable" */
} diag_info_t;

/* Every diagnostic ID, schema errors first, then the lint rules; ends with a
 * row whose id is NULL. Order is stable: SARIF ruleIndex values come from it. */
extern const diag_info_t diag_table[];

/* Rows in diag_table (without the terminator). */
size_t diag_table_len(void);

/* The row of id, or NULL for an unknown ID. */
const diag_info_t *diag_info(const char *id);

/* Index of id in diag_table, or -1. */
long diag_index(const char *id);

#endif
