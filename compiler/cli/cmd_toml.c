/* cmd_toml.c — `drun-policy toml-decode [--toml 1.0|1.1] [--plain] [--batch]`:
 * TOML on stdin, JSON out. The default is toml-test's tagged JSON (what the
 * toml-test runner reads); --plain is the ordinary JSON of the document, for
 * JSON tools (jq, a JSON Schema validator) that know nothing of the tags.
 * --batch decodes a stream of length-prefixed documents in one process (a
 * test suite's thousands of cases without thousands of process starts), each
 * through the same toml_decode_doc as the single document and framed with
 * its exit status, stdout and stderr. */
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

/* Decodes src as the single-document command does: the JSON and its newline
 * appended to out and EXIT_OK, or the located error appended to err and
 * EXIT_REJECTED. Every document of both modes goes through here, on fresh
 * state: the parser keeps nothing between calls. */
static int toml_decode_doc(source_t *src, toml_version ver, bool plain, bool color, buf_t *out, buf_t *err)
{
    toml_error te;
    toml_doc *doc = toml_parse(src, ver, &te);
    if (!doc) {
        diag_t d = {SEV_ERROR, NULL, src, te.span, te.msg};
        diag_render(err, &d, color);
        return EXIT_REJECTED;
    }
    if (plain) plain_value(out, toml_root(doc));
    else toml_to_tagged_json(doc, out);
    buf_addc(out, '\n');
    toml_doc_free(doc);
    return EXIT_OK;
}

/* ---- --batch ------------------------------------------------------------------ */

/* Reads a record header "LENGTH\n" (decimal, 1 to 10 digits, nothing else).
 * 1 with *len set; 0 at a clean end of input (EOF before the first digit);
 * -1 for anything else. */
static int batch_header(FILE *in, size_t *len)
{
    int c = getc(in), digits = 0;
    if (c == EOF) return 0;
    *len = 0;
    for (; c >= '0' && c <= '9' && digits < 10; c = getc(in), digits++) *len = *len * 10 + (size_t)(c - '0');
    return digits > 0 && c == '\n' ? 1 : -1;
}

/* Writes one answer frame: "STATUS OUTLEN ERRLEN\n", then the stdout bytes,
 * then the stderr bytes, flushed so that a reader sees each document's
 * answer before the next one is decoded (a crash is blamed on the document
 * whose frame is missing). False on a write error. */
static bool batch_frame(int status, const buf_t *out, const buf_t *err)
{
    printf("%d %zu %zu\n", status, out->len, err->len);
    if (out->len) fwrite(out->p, 1, out->len, stdout);
    if (err->len) fwrite(err->p, 1, err->len, stdout);
    return fflush(stdout) == 0 && !ferror(stdout);
}

/* The body of a record of len bytes, decoded; or, past SOURCE_MAX_BYTES,
 * skipped and answered with the single command's "file too large" (exit 2).
 * False when the input ends inside the body. */
static bool batch_record(FILE *in, size_t len, toml_version ver, bool plain, int *status, buf_t *out, buf_t *err)
{
    if (len >= SOURCE_MAX_BYTES) {
        char chunk[65536];
        for (size_t left = len, n; left > 0; left -= n)
            if ((n = fread(chunk, 1, left < sizeof chunk ? left : sizeof chunk, in)) == 0) return false;
        buf_printf(err, "drun-policy toml-decode: -: file too large (the limit is %zu bytes)\n", SOURCE_MAX_BYTES - 1);
        *status = EXIT_USAGE;
        return true;
    }
    char *text = xmalloc(len + 1);
    bool whole = fread(text, 1, len, in) == len;
    if (whole) {
        source_t *src = source_new("<stdin>", text, len);
        *status = toml_decode_doc(src, ver, plain, false, out, err);
        source_free(src);
    }
    free(text);
    return whole;
}

/* Decodes every record of stdin, answering each with a frame on stdout.
 * EXIT_OK when the input ended cleanly after whole records; EXIT_USAGE, with
 * a message on stderr, for a malformed header, a cut record or a failed
 * write (the frames already written stay valid). */
static int toml_decode_batch(toml_version ver, bool plain)
{
    for (unsigned long nrec = 1;; nrec++) {
        size_t len;
        int h = batch_header(stdin, &len);
        if (h == 0 && !ferror(stdin)) return EXIT_OK;
        if (h == 0) {
            perror("drun-policy toml-decode: --batch: stdin");
            return EXIT_USAGE;
        }
        if (h < 0) {
            fprintf(stderr, "drun-policy toml-decode: --batch: record %lu: expected its length in decimal and a newline\n", nrec);
            return EXIT_USAGE;
        }
        buf_t out = BUF_INIT, err = BUF_INIT;
        int status = EXIT_OK;
        bool whole = batch_record(stdin, len, ver, plain, &status, &out, &err);
        bool written = whole && batch_frame(status, &out, &err);
        buf_free(&out);
        buf_free(&err);
        if (!whole) {
            fprintf(stderr, "drun-policy toml-decode: --batch: record %lu: input ends inside its %zu bytes\n", nrec, len);
            return EXIT_USAGE;
        }
        if (!written) {
            fprintf(stderr, "drun-policy toml-decode: --batch: cannot write to stdout\n");
            return EXIT_USAGE;
        }
    }
}

/* ---- the command ---------------------------------------------------------------- */

int cmd_toml_decode(const cli_args_t *a)
{
    toml_version ver = a->toml && strcmp(a->toml, "1.0") == 0 ? TOML_1_0 : TOML_1_1;
    if (a->batch) return toml_decode_batch(ver, a->plain);
    char *e = NULL;
    source_t *src = source_read("-", &e);
    if (!src) {
        fprintf(stderr, "drun-policy toml-decode: %s\n", e);
        free(e);
        return EXIT_USAGE;
    }
    buf_t out = BUF_INIT, err = BUF_INIT;
    int rc = toml_decode_doc(src, ver, a->plain, diag_want_color(stderr), &out, &err);
    if (rc != EXIT_OK) fwrite(err.p, 1, err.len, stderr);
    else if (fwrite(out.p, 1, out.len, stdout) != out.len || fflush(stdout) != 0) rc = EXIT_USAGE;
    buf_free(&out);
    buf_free(&err);
    source_free(src);
    return rc;
}
