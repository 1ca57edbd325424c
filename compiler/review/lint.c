/* lint.c — `drun-policy lint`'s driver (SPEC §8): runs the rules, sorts
 * the findings and splits them by the suppression comments.
 *
 * Three layers, each run when it can be: config errors from policy_build;
 * rules that read the TOML tree (they still run when the policy is rejected);
 * rules that read the meaning — the resolved lattice of both targets and the
 * compiled artifacts — when the policy builds. Every message says what to do.
 * Paths in messages are written in policy syntax (~/.ssh), so one finding
 * found on both targets is reported once. lint_int.h lists the other files.
 */
#include "lint_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "diag_ids.h"

/* Synthetic session roots for the lattice questions lint asks: outside
 * every home, so that a rule on ~ never covers them by accident. */
#define LINT_WORKSPACE "/drun-lint/workspace"
#define LINT_SCRATCH "/drun-lint/scratch"

/* ---- adding findings ------------------------------------------------------------------------------ */

void lint_finding(lint_t *l, const char *id, span_t span, const char *fmt, ...)
{
    const diag_info_t *info = diag_info(id);
    buf_t m = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&m, fmt, ap);
    va_end(ap);
    buf_t key = BUF_INIT;
    buf_printf(&key, "%s\x01%u\x01%s", id, span.start, buf_cstr(&m));
    bool dup = strmap_put(&l->seen, arena_strdup(&l->a, buf_cstr(&key)), 1) >= 0;
    buf_free(&key);
    if (!dup) diag_add(&l->raw, info ? info->sev : SEV_WARNING, info ? info->id : id, l->src, span, "%s", buf_cstr(&m));
    buf_free(&m);
}

/* ---- the driver ----------------------------------------------------------------------------------------- */

static int cmp_finding(const void *x, const void *y, void *base)
{
    const diag_t *a = &((const diag_t *)base)[*(const size_t *)x], *b = &((const diag_t *)base)[*(const size_t *)y];
    uint32_t sa = a->src ? a->span.start : 0, sb = b->src ? b->span.start : 0;
    if (sa != sb) return sa < sb ? -1 : 1;
    long ia = diag_index(a->id), ib = diag_index(b->id);
    if (ia != ib) return ia < ib ? -1 : 1;
    int c = strcmp(a->msg, b->msg);
    if (c) return c;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* Moves the raw findings into the report, sorted and split by suppression. */
static void finish(lint_t *l, const lint_supp_vec_t *s, lint_report_t *out)
{
    size_t *idx = xcalloc(l->raw.n + 1, sizeof *idx);
    for (size_t i = 0; i < l->raw.n; i++) idx[i] = i;
    qsort_r(idx, l->raw.n, sizeof *idx, cmp_finding, l->raw.v);
    for (size_t i = 0; i < l->raw.n; i++) {
        diag_t d = l->raw.v[idx[i]];
        if (d.src && d.src != l->src) d.src = l->src; /* the policy's copy of the same text */
        vec_push(lint_supp_covers(s, &d) ? &out->suppressed : &out->findings, d);
    }
    free(idx);
    /* the messages now belong to the report; the sources go with it too */
    for (size_t i = 0; i < l->raw.owned.n; i++) diag_keep_source(&out->findings, l->raw.owned.v[i]);
    vec_free(&l->raw.owned);
    vec_free(&l->raw);
}

static bool load_facts(lint_t *l, const lint_opts_t *o, char **err)
{
    for (int t = 0; t < 2; t++) {
        if (o->facts[t]) l->facts[t] = o->facts[t];
        else if ((l->own_facts[t] = true), !(l->facts[t] = compile_facts_for(l->pol, (target_t)t, o->facts_files, err)))
            return false;
        l->res[t] = lattice_resolve(l->pol, l->facts[t]);
    }
    return true;
}

bool lint_run(source_t *src, const lint_opts_t *o, lint_report_t *out, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    lint_t l = {0};
    l.src = src;
    out->src = src;
    l.roots = (roots_t){LINT_WORKSPACE, LINT_SCRATCH, NULL, false};
    toml_error te;
    l.doc = toml_parse(src, TOML_1_1, &te);
    l.pol = policy_build(source_new(src->name, src->text, src->len), TOML_1_1, &l.raw);
    out->rejected = l.pol == NULL;
    bool ok = true;
    if (l.doc) lint_rules_tree(&l);
    if (l.pol) {
        ok = load_facts(&l, o, err);
        if (ok) lint_rules_policy(&l);
    }
    lint_supp_vec_t s = {0};
    lint_supp_scan(&l, &s);
    lint_supp_check(&l, &s);
    finish(&l, &s, out);
    diag_keep_source(&out->findings, src);
    vec_free(&s);
    for (int t = 0; t < 2; t++) {
        lattice_free(l.res[t]);
        if (l.own_facts[t]) facts_free(l.facts[t]);
    }
    policy_free(l.pol);
    if (l.doc) toml_doc_free(l.doc);
    strmap_free(&l.seen);
    arena_free(&l.a);
    if (!ok) lint_report_free(out);
    return ok;
}

void lint_report_free(lint_report_t *r)
{
    diag_list_free(&r->suppressed);
    diag_list_free(&r->findings);
    memset(r, 0, sizeof *r);
}

int lint_exit_status(const lint_report_t *r, bool strict)
{
    if (diag_count(&r->findings, SEV_ERROR) || r->rejected) return 1;
    return strict && diag_count(&r->findings, SEV_WARNING) ? 1 : 0;
}
