/* cmd_toml.c — `drun-policy toml-decode [--toml 1.0|1.1] [--plain]`: TOML on
 * stdin, JSON out. The default is toml-test's tagged JSON (what the
 * toml-test runner reads); --plain is the ordinary JSON of the document, for
 * JSON tools (jq, a JSON Schema validator) that know nothing of the tags. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "toml.h"

/* A JSON string of n bytes: valid UTF-8 passes, '"', '\' and every control
 * character (U+0000 included) are escaped. */
static void plain_string(buf_t *out, const char *s, size_t n)
{
    buf_addc(out, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') buf_printf(out, "\\%c", c);
        else if (c < 0x20 || c == 0x7F) buf_printf(out, "\\u%04x", c);
        else buf_addc(out, (char)c);
    }
    buf_addc(out, '"');
}

/* JSON has no nan or infinity: those are the strings "nan", "inf", "-inf"
 * (TOML's own spelling); any other float is a JSON number. */
static void plain_float(buf_t *out, double f)
{
    bool word = isnan(f) || isinf(f);
    if (word) buf_addc(out, '"');
    toml_json_float(out, f);
    if (word) buf_addc(out, '"');
}

/* Dates and times as RFC 3339 strings. */
static void plain_datetime(buf_t *out, toml_type t, const toml_datetime *dt)
{
    buf_addc(out, '"');
    toml_json_datetime(out, t, dt);
    buf_addc(out, '"');
}

/* One value; depth is bounded by TOML_MAX_DEPTH (the parser refuses more). */
static void plain_value(buf_t *out, const toml_value *v)
{
    toml_type t = toml_type_of(v);
    size_t len;
    const char *s;
    switch (t) {
    case TOML_TABLE:
        buf_addc(out, '{');
        for (size_t i = 0; i < toml_len(v); i++) {
            size_t klen;
            const char *k = toml_key_at(v, i, &klen);
            if (i) buf_addc(out, ',');
            plain_string(out, k, klen);
            buf_addc(out, ':');
            plain_value(out, toml_value_at(v, i));
        }
        buf_addc(out, '}');
        return;
    case TOML_ARRAY:
        buf_addc(out, '[');
        for (size_t i = 0; i < toml_len(v); i++) {
            if (i) buf_addc(out, ',');
            plain_value(out, toml_at(v, i));
        }
        buf_addc(out, ']');
        return;
    case TOML_STRING:
        s = toml_str(v, &len);
        plain_string(out, s, len);
        return;
    case TOML_INTEGER: buf_printf(out, "%lld", (long long)toml_int(v)); return;
    case TOML_FLOAT: plain_float(out, toml_float(v)); return;
    case TOML_BOOL: buf_adds(out, toml_bool(v) ? "true" : "false"); return;
    default: plain_datetime(out, t, toml_dt(v)); return;
    }
}

int cmd_toml_decode(const cli_args_t *a)
{
    toml_version ver = a->toml && strcmp(a->toml, "1.0") == 0 ? TOML_1_0 : TOML_1_1;
    char *err = NULL;
    source_t *src = source_read("-", &err);
    if (!src) {
        fprintf(stderr, "drun-policy toml-decode: %s\n", err);
        free(err);
        return EXIT_USAGE;
    }
    toml_error te;
    toml_doc *doc = toml_parse(src, ver, &te);
    if (!doc) {
        diag_t d = {SEV_ERROR, NULL, src, te.span, te.msg};
        buf_t out = BUF_INIT;
        diag_render(&out, &d, diag_want_color(stderr));
        fwrite(out.p, 1, out.len, stderr);
        buf_free(&out);
        source_free(src);
        return EXIT_REJECTED;
    }
    buf_t out = BUF_INIT;
    if (a->plain) plain_value(&out, toml_root(doc));
    else toml_to_tagged_json(doc, &out);
    buf_addc(&out, '\n');
    int rc = fwrite(out.p, 1, out.len, stdout) == out.len && fflush(stdout) == 0 ? EXIT_OK : EXIT_USAGE;
    buf_free(&out);
    toml_doc_free(doc);
    source_free(src);
    return rc;
}
