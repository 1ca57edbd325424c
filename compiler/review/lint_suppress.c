/* lint_suppress.c — suppression comments: "# drun-policy: allow RULE-ID[,
 * ID...]" on a finding's line or the line above silences that rule there;
 * an ID that is no lint rule, or a config error (which no comment can
 * silence), is itself a finding (bad-suppression).
 */
#include "lint_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag_ids.h"
#include "suggest.h"

/* ---- suppression comments ------------------------------------------------------------------------------ */

/* Parses "drun-policy: allow ID[, ID...]" in one comment (text after '#'). */
static void parse_comment(lint_t *l, size_t from, size_t to, lint_supp_vec_t *out)
{
    const char *t = l->src->text;
    static const char tag[] = "drun-policy:";
    size_t i = from;
    while (i < to && (t[i] == ' ' || t[i] == '\t' || t[i] == '#')) i++;
    if (to - i < sizeof tag - 1 || memcmp(t + i, tag, sizeof tag - 1) != 0) return;
    i += sizeof tag - 1;
    while (i < to && (t[i] == ' ' || t[i] == '\t')) i++;
    if (to - i < 5 || memcmp(t + i, "allow", 5) != 0) return;
    i += 5;
    unsigned line = source_pos(l->src, (uint32_t)from).line;
    while (i < to) {
        while (i < to && (t[i] == ' ' || t[i] == '\t' || t[i] == ',')) i++;
        size_t st = i;
        while (i < to && t[i] != ' ' && t[i] != '\t' && t[i] != ',' && t[i] != '#') i++;
        if (i > st) {
            lint_supp_t s = {line, t + st, i - st, {(uint32_t)st, (uint32_t)i}};
            vec_push(out, s);
        }
        if (i < to && t[i] == '#') break; /* a second comment: free text */
    }
}

/* Finds the comments of a TOML text: '#' outside every kind of string. */
void lint_supp_scan(lint_t *l, lint_supp_vec_t *out)
{
    const char *t = l->src->text;
    size_t n = l->src->len;
    enum {
        NORMAL,
        BASIC,
        LITERAL,
        ML_BASIC,
        ML_LITERAL
    } st = NORMAL;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        switch (st) {
        case NORMAL:
            if (c == '#') {
                size_t e = i;
                while (e < n && t[e] != '\n') e++;
                parse_comment(l, i + 1, e, out);
                i = e;
            } else if (c == '"') {
                if (i + 2 < n && t[i + 1] == '"' && t[i + 2] == '"') st = ML_BASIC, i += 2;
                else st = BASIC;
            } else if (c == '\'') {
                if (i + 2 < n && t[i + 1] == '\'' && t[i + 2] == '\'') st = ML_LITERAL, i += 2;
                else st = LITERAL;
            }
            break;
        case BASIC:
            if (c == '\\') i++;
            else if (c == '"' || c == '\n') st = NORMAL;
            break;
        case LITERAL:
            if (c == '\'' || c == '\n') st = NORMAL;
            break;
        case ML_BASIC:
        case ML_LITERAL: {
            char q = st == ML_BASIC ? '"' : '\'';
            if (st == ML_BASIC && c == '\\') i++;
            else if (c == q && i + 2 < n && t[i + 1] == q && t[i + 2] == q) {
                i += 2;
                while (i + 1 < n && t[i + 1] == q) i++; /* up to two quotes end the content */
                st = NORMAL;
            }
            break;
        }
        }
    }
}

/* bad-suppression for IDs that are not lint rules. */
void lint_supp_check(lint_t *l, const lint_supp_vec_t *s)
{
    const char *cands[128];
    size_t n = 0;
    for (size_t i = 0; diag_table[i].id && n < 127; i++)
        if (!diag_table[i].config_error) cands[n++] = diag_table[i].id;
    cands[n] = NULL;
    for (size_t i = 0; i < s->n; i++) {
        char *id = xstrndup(s->v[i].id, s->v[i].idlen);
        const diag_info_t *info = diag_info(id);
        if (!info) {
            const char *sug = suggest(id, cands);
            if (sug)
                lint_finding(l, "bad-suppression", s->v[i].span,
                             "'%s' is not a lint rule (did you mean '%s'?): this comment suppresses nothing", id, sug);
            else
                lint_finding(l, "bad-suppression", s->v[i].span,
                             "'%s' is not a lint rule: this comment suppresses nothing (drun-policy lint --rules lists "
                             "them)",
                             id);
        } else if (info->config_error) {
            lint_finding(l, "bad-suppression", s->v[i].span,
                         "'%s' is a config error and cannot be suppressed: the compiler rejects the file whatever lint "
                         "says; fix the error",
                         id);
        }
        free(id);
    }
}

bool lint_supp_covers(const lint_supp_vec_t *s, const diag_t *d)
{
    const diag_info_t *info = diag_info(d->id);
    if (!d->src || !info || info->config_error) return false;
    unsigned line = source_pos(d->src, d->span.start).line;
    for (size_t i = 0; i < s->n; i++) {
        const lint_supp_t *x = &s->v[i];
        if ((x->line == line || x->line + 1 == line) && strlen(d->id) == x->idlen &&
            memcmp(d->id, x->id, x->idlen) == 0)
            return true;
    }
    return false;
}
