/* lint.h — `drun-policy lint`: every finding about a config, as data.
 *
 * lint_run() reports the schema's config errors (policy_build), the rules
 * that need only the TOML tree (unknown drun keys, wildcard domains, ...)
 * and, when the policy builds, the rules that need its meaning: the lattice
 * of both targets (secret-readable, shadowed-rule, ...) and the compiled
 * artifacts (profile-too-large). Rule IDs, severities and summaries come from
 * diag_ids.h. Suppression: a comment `# drun-policy: allow RULE-ID[, ID...]`
 * on the finding's line or the line above; config errors cannot be
 * suppressed (the compiler rejects the file whatever lint says).
 *
 * Renderers: gcc-style text, one JSON object, SARIF 2.1.0.
 */
#ifndef DRUN_LINT_H
#define DRUN_LINT_H

#include <stdbool.h>

#include "buf.h"
#include "source.h"

struct facts;

typedef struct lint_opts {
    const char *facts_files[2]; /* --facts files (each names its target); NULL: probe this
                                   host for Linux, the built-in macOS facts for macOS */
    struct facts *facts[2];     /* or facts already loaded, indexed by target_t (borrowed;
                                   NULL entries: facts_files, then the probe) */
} lint_opts_t;

typedef struct lint_report {
    diag_list_t findings;   /* in force: sorted by position, then rule-table order */
    diag_list_t suppressed; /* silenced by a '# drun-policy: allow' comment, same order */
    source_t *src;          /* the config text; owned by findings (diag_keep_source) */
    bool rejected;          /* policy_build failed: the compiler rejects this file */
} lint_report_t;

/* Lints src, which the report takes over in every case. Returns false with
 * *err (caller frees) only when host facts cannot be loaded; config errors
 * are findings, not failures. Free the report with lint_report_free. */
bool lint_run(source_t *src, const lint_opts_t *o, lint_report_t *out, char **err);
void lint_report_free(lint_report_t *r);

/* Exit status of SPEC §2 for the report: 1 with errors, or with warnings
 * when strict; else 0. */
int lint_exit_status(const lint_report_t *r, bool strict);

/* gcc-style findings (source line and caret), then one summary line. */
void lint_render_text(const lint_report_t *r, buf_t *out, bool color);
/* One JSON object: file, rejected, findings, suppressed, summary. */
void lint_render_json(const lint_report_t *r, buf_t *out);
/* SARIF 2.1.0: the whole rule table as tool.driver.rules, one result per
 * finding (suppressed ones with an inSource suppression). */
void lint_render_sarif(const lint_report_t *r, buf_t *out);
/* The rule table (ID, severity, summary, doc anchor), text or JSON. */
void lint_render_rules(buf_t *out, bool json);

#endif
