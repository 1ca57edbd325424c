/* fuzz_toml.c — libFuzzer harness for the TOML front end (toml_parse).
 *
 * Every input is parsed as TOML 1.0 and as 1.1. A success is encoded with
 * toml_to_tagged_json and re-walked with every accessor, checking what must
 * hold (spans inside the source, NUL-terminated strings, lookups that find
 * what iteration saw, dates in range); a failure must come with a message
 * and a span inside the source, which the diagnostic renderer then prints.
 * Differential: whatever 1.0 accepts, 1.1 accepts with the same JSON.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

#define REQUIRE(cond)                                                             \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "fuzz_toml: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                              \
        }                                                                         \
    } while (0)

static void check_span(const source_t *src, span_t sp)
{
    REQUIRE(sp.start <= sp.end && sp.end <= src->len);
}

static void walk(const source_t *src, const toml_value *v, int depth)
{
    REQUIRE(depth <= TOML_MAX_DEPTH + 2);
    check_span(src, toml_span(v));
    toml_type t = toml_type_of(v);
    REQUIRE(toml_type_name(t) != NULL);
    size_t n = toml_len(v);
    if (t == TOML_TABLE) {
        for (size_t i = 0; i < n; i++) {
            size_t klen;
            const char *k = toml_key_at(v, i, &klen);
            REQUIRE(k && k[klen] == '\0');
            span_t ks = toml_key_span_at(v, i);
            check_span(src, ks);
            /* a bare key is written exactly as its bytes */
            if (ks.end > ks.start && src->text[ks.start] != '"' && src->text[ks.start] != '\'')
                REQUIRE(ks.end - ks.start == klen && memcmp(src->text + ks.start, k, klen) == 0);
            const toml_value *x = toml_value_at(v, i);
            REQUIRE(toml_getn(v, k, klen) == x);
            if (memchr(k, '\0', klen) == NULL) REQUIRE(toml_index(v, k) == (long)i);
            walk(src, x, depth + 1);
        }
        REQUIRE(toml_key_at(v, n, NULL) == NULL && toml_value_at(v, n) == NULL);
    } else if (t == TOML_ARRAY) {
        for (size_t i = 0; i < n; i++) walk(src, toml_at(v, i), depth + 1);
        REQUIRE(toml_at(v, n) == NULL);
    } else if (t == TOML_STRING) {
        size_t len;
        const char *s = toml_str(v, &len);
        REQUIRE(s[len] == '\0');
    } else if (t == TOML_INTEGER) {
        (void)toml_int(v);
    } else if (t == TOML_FLOAT) {
        (void)toml_float(v);
    } else if (t == TOML_BOOL) {
        (void)toml_bool(v);
    } else {
        const toml_datetime *d = toml_dt(v);
        if (t != TOML_TIME_LOCAL) REQUIRE(d->month >= 1 && d->month <= 12 && d->day >= 1 && d->day <= 31);
        if (t != TOML_DATE_LOCAL) REQUIRE(d->hour <= 23 && d->minute <= 59 && d->second <= 60);
        REQUIRE(d->nanosecond >= 0 && d->nanosecond <= 999999999 && d->frac_digits <= 9);
        REQUIRE(d->has_offset == (t == TOML_DATETIME));
    }
}

/* Parses src as ver; returns the tagged JSON (caller frees) or NULL. */
static char *parse_one(source_t *src, toml_version ver)
{
    toml_error err;
    memset(&err, 0, sizeof err);
    toml_doc *doc = toml_parse(src, ver, &err);
    if (!doc) {
        REQUIRE(err.msg[0] != '\0' && memchr(err.msg, '\n', sizeof err.msg) == NULL);
        check_span(src, err.span);
        diag_t d = {SEV_ERROR, NULL, src, err.span, err.msg};
        buf_t out = BUF_INIT;
        diag_render(&out, &d, false);
        REQUIRE(out.len > 0 && out.len < 4096);
        buf_free(&out);
        return NULL;
    }
    REQUIRE(toml_source(doc) == src);
    walk(src, toml_root(doc), 0);
    buf_t out = BUF_INIT;
    toml_to_tagged_json(doc, &out);
    REQUIRE(out.len >= 2 && out.p[0] == '{' && out.p[out.len - 1] == '}');
    toml_doc_free(doc);
    return buf_detach(&out, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    source_t *src = source_new("fuzz.toml", (const char *)data, size);
    char *j10 = parse_one(src, TOML_1_0);
    char *j11 = parse_one(src, TOML_1_1);
    if (j10) REQUIRE(j11 && strcmp(j10, j11) == 0); /* 1.1 is a superset of 1.0 */
    free(j10);
    free(j11);
    source_free(src);
    return 0;
}
