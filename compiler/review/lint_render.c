/* lint_render.c — a lint report as text (gcc-style, with the source line
 * and a caret), one JSON object or SARIF 2.1.0, and the rule table.
 */
#include "lint.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag_ids.h"
#include "jsonw.h"

/* ---- rendering ------------------------------------------------------------------------------------------- */

static void count_line(buf_t *out, size_t n, const char *what)
{
    buf_printf(out, "%zu %s%s", n, what, n == 1 ? "" : "s");
}

void lint_render_text(const lint_report_t *r, buf_t *out, bool color)
{
    diag_render_all(out, &r->findings, color);
    const char *name = r->src ? r->src->name : "<config>";
    size_t e = diag_count(&r->findings, SEV_ERROR), w = diag_count(&r->findings, SEV_WARNING),
           n = diag_count(&r->findings, SEV_NOTE);
    buf_printf(out, "%s: ", name);
    count_line(out, e, "error");
    buf_adds(out, ", ");
    count_line(out, w, "warning");
    buf_adds(out, ", ");
    count_line(out, n, "note");
    if (r->suppressed.n) buf_printf(out, " (%zu suppressed)", r->suppressed.n);
    if (r->rejected) buf_adds(out, "; the compiler rejects this policy");
    buf_addc(out, '\n');
}

static void finding_json(jw_t *j, const diag_t *d)
{
    const diag_info_t *info = diag_info(d->id);
    jw_obj(j);
    jw_key(j, "rule");
    jw_str(j, d->id);
    jw_key(j, "severity");
    jw_str(j, severity_name(d->sev));
    jw_key(j, "message");
    jw_str(j, d->msg);
    jw_key(j, "file");
    jw_str(j, d->src ? d->src->name : NULL);
    if (d->src) {
        srcpos_t s = source_pos(d->src, d->span.start), e = source_pos(d->src, d->span.end);
        jw_key(j, "line");
        jw_int(j, s.line);
        jw_key(j, "column");
        jw_int(j, s.col);
        jw_key(j, "end_line");
        jw_int(j, e.line);
        jw_key(j, "end_column");
        jw_int(j, e.col);
    }
    jw_key(j, "doc");
    jw_str(j, info ? info->anchor : NULL);
    jw_end(j);
}

void lint_render_json(const lint_report_t *r, buf_t *out)
{
    jw_t j;
    jw_init(&j, out, true);
    jw_obj(&j);
    jw_key(&j, "file");
    jw_str(&j, r->src ? r->src->name : NULL);
    jw_key(&j, "rejected");
    jw_bool(&j, r->rejected);
    jw_key(&j, "findings");
    jw_arr(&j);
    for (size_t i = 0; i < r->findings.n; i++) finding_json(&j, &r->findings.v[i]);
    jw_end(&j);
    jw_key(&j, "suppressed");
    jw_arr(&j);
    for (size_t i = 0; i < r->suppressed.n; i++) finding_json(&j, &r->suppressed.v[i]);
    jw_end(&j);
    jw_key(&j, "summary");
    jw_obj(&j);
    jw_key(&j, "errors");
    jw_int(&j, (int64_t)diag_count(&r->findings, SEV_ERROR));
    jw_key(&j, "warnings");
    jw_int(&j, (int64_t)diag_count(&r->findings, SEV_WARNING));
    jw_key(&j, "notes");
    jw_int(&j, (int64_t)diag_count(&r->findings, SEV_NOTE));
    jw_key(&j, "suppressed");
    jw_int(&j, (int64_t)r->suppressed.n);
    jw_end(&j);
    jw_end(&j);
    buf_addc(out, '\n');
}

/* A file name as a SARIF artifact URI: relative names stay relative (code
 * scanning resolves them against the checkout), absolute ones become
 * file:// URIs; every byte outside the unreserved set is percent-encoded. */
static void sarif_uri(buf_t *out, const char *name)
{
    if (name[0] == '/') buf_adds(out, "file://");
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            buf_addc(out, (char)*p);
        else
            buf_printf(out, "%%%02X", *p);
    }
}

static const char *sarif_level(severity_t s)
{
    return s == SEV_ERROR ? "error" : (s == SEV_WARNING ? "warning" : "note");
}

static void sarif_rules(jw_t *j)
{
    jw_arr(j);
    for (size_t i = 0; diag_table[i].id; i++) {
        const diag_info_t *d = &diag_table[i];
        jw_obj(j);
        jw_key(j, "id");
        jw_str(j, d->id);
        jw_key(j, "name");
        jw_str(j, d->id);
        jw_key(j, "shortDescription");
        jw_obj(j);
        jw_key(j, "text");
        jw_str(j, d->summary);
        jw_end(j);
        jw_key(j, "help");
        jw_obj(j);
        buf_t h = BUF_INIT;
        buf_printf(&h, "%s. See %s.", d->summary, d->anchor);
        jw_key(j, "text");
        jw_str(j, buf_cstr(&h));
        buf_free(&h);
        jw_end(j);
        jw_key(j, "defaultConfiguration");
        jw_obj(j);
        jw_key(j, "level");
        jw_str(j, sarif_level(d->sev));
        jw_end(j);
        jw_key(j, "properties");
        jw_obj(j);
        jw_key(j, "tags");
        jw_arr(j);
        jw_str(j, "security");
        jw_str(j, d->config_error ? "config-error" : "lint");
        jw_end(j);
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
}

static void sarif_result(jw_t *j, const diag_t *d, bool suppressed)
{
    jw_obj(j);
    jw_key(j, "ruleId");
    jw_str(j, d->id);
    long idx = diag_index(d->id);
    if (idx >= 0) {
        jw_key(j, "ruleIndex");
        jw_int(j, idx);
    }
    jw_key(j, "level");
    jw_str(j, sarif_level(d->sev));
    jw_key(j, "message");
    jw_obj(j);
    jw_key(j, "text");
    jw_str(j, d->msg);
    jw_end(j);
    jw_key(j, "locations");
    jw_arr(j);
    if (d->src) {
        srcpos_t s = source_pos(d->src, d->span.start), e = source_pos(d->src, d->span.end);
        if (e.line < s.line || (e.line == s.line && e.col <= s.col)) e = (srcpos_t){s.line, s.col + 1};
        jw_obj(j);
        jw_key(j, "physicalLocation");
        jw_obj(j);
        jw_key(j, "artifactLocation");
        jw_obj(j);
        buf_t uri = BUF_INIT;
        sarif_uri(&uri, d->src->name);
        jw_key(j, "uri");
        jw_str(j, buf_cstr(&uri));
        buf_free(&uri);
        jw_key(j, "index");
        jw_int(j, 0);
        jw_end(j);
        jw_key(j, "region");
        jw_obj(j);
        jw_key(j, "startLine");
        jw_int(j, s.line);
        jw_key(j, "startColumn");
        jw_int(j, s.col);
        jw_key(j, "endLine");
        jw_int(j, e.line);
        jw_key(j, "endColumn");
        jw_int(j, e.col);
        jw_end(j);
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
    if (suppressed) {
        jw_key(j, "suppressions");
        jw_arr(j);
        jw_obj(j);
        jw_key(j, "kind");
        jw_str(j, "inSource");
        jw_key(j, "justification");
        jw_str(j, "# drun-policy: allow comment");
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
}

void lint_render_sarif(const lint_report_t *r, buf_t *out)
{
    jw_t j;
    jw_init(&j, out, true);
    jw_obj(&j);
    jw_key(&j, "$schema");
    jw_str(&j, "https://json.schemastore.org/sarif-2.1.0.json");
    jw_key(&j, "version");
    jw_str(&j, "2.1.0");
    jw_key(&j, "runs");
    jw_arr(&j);
    jw_obj(&j);
    jw_key(&j, "tool");
    jw_obj(&j);
    jw_key(&j, "driver");
    jw_obj(&j);
    jw_key(&j, "name");
    jw_str(&j, "drun-policy");
    jw_key(&j, "version");
    jw_str(&j, DRUN_VERSION);
    jw_key(&j, "semanticVersion");
    jw_str(&j, DRUN_VERSION);
    jw_key(&j, "rules");
    sarif_rules(&j);
    jw_end(&j);
    jw_end(&j);
    jw_key(&j, "columnKind");
    jw_str(&j, "unicodeCodePoints");
    jw_key(&j, "artifacts");
    jw_arr(&j);
    if (r->src) {
        jw_obj(&j);
        jw_key(&j, "location");
        jw_obj(&j);
        buf_t uri = BUF_INIT;
        sarif_uri(&uri, r->src->name);
        jw_key(&j, "uri");
        jw_str(&j, buf_cstr(&uri));
        buf_free(&uri);
        jw_end(&j);
        jw_end(&j);
    }
    jw_end(&j);
    jw_key(&j, "results");
    jw_arr(&j);
    for (size_t i = 0; i < r->findings.n; i++) sarif_result(&j, &r->findings.v[i], false);
    for (size_t i = 0; i < r->suppressed.n; i++) sarif_result(&j, &r->suppressed.v[i], true);
    jw_end(&j);
    jw_end(&j);
    jw_end(&j);
    jw_end(&j);
    buf_addc(out, '\n');
}

void lint_render_rules(buf_t *out, bool json)
{
    if (!json) {
        for (size_t i = 0; diag_table[i].id; i++)
            buf_printf(out, "%-38s %-8s %s%s\n", diag_table[i].id, severity_name(diag_table[i].sev),
                       diag_table[i].config_error ? "(config error) " : "", diag_table[i].summary);
        return;
    }
    jw_t j;
    jw_init(&j, out, true);
    jw_arr(&j);
    for (size_t i = 0; diag_table[i].id; i++) {
        jw_obj(&j);
        jw_key(&j, "id");
        jw_str(&j, diag_table[i].id);
        jw_key(&j, "severity");
        jw_str(&j, severity_name(diag_table[i].sev));
        jw_key(&j, "config_error");
        jw_bool(&j, diag_table[i].config_error);
        jw_key(&j, "summary");
        jw_str(&j, diag_table[i].summary);
        jw_key(&j, "doc");
        jw_str(&j, diag_table[i].anchor);
        jw_end(&j);
    }
    jw_end(&j);
    buf_addc(out, '\n');
}
