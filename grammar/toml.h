/* toml.h — the TOML document tree: the front end's only public interface.
 *
 * toml_parse() runs the re2c lexer and the lemon grammar over one source and
 * builds a tree in which every table, key and value carries a span into that
 * source. The tree is read-only for its users (the compiler, toml-decode);
 * iteration is in source order; lookups are O(1) on average.
 *
 * Ownership: the document owns every node and string (one arena); the source
 * is borrowed and must outlive the document. toml_doc_free releases it all.
 */
#ifndef DRUN_TOML_H
#define DRUN_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "source.h"

typedef enum {
    TOML_TABLE,
    TOML_ARRAY,
    TOML_STRING,
    TOML_INTEGER,
    TOML_FLOAT,
    TOML_BOOL,
    TOML_DATETIME,       /* offset date-time: 1979-05-27T07:32:00Z */
    TOML_DATETIME_LOCAL, /* 1979-05-27T07:32:00 */
    TOML_DATE_LOCAL,     /* 1979-05-27 */
    TOML_TIME_LOCAL,     /* 07:32:00 */
} toml_type;

typedef enum {
    TOML_1_0, /* strict TOML 1.0.0 */
    TOML_1_1, /* TOML 1.1.0 (the default) */
} toml_version;

/* Depth of nested arrays / inline tables / dotted keys the parser accepts;
 * deeper input is an error, never a stack overflow. */
#define TOML_MAX_DEPTH 1000

typedef struct toml_datetime {
    int year, month, day;     /* set for dates and date-times */
    int hour, minute, second; /* set for times and date-times */
    int nanosecond;           /* fractional seconds, 0..999999999 */
    int frac_digits;          /* digits of fraction as written (0: none), max 9 kept */
    bool has_offset;          /* TOML_DATETIME only */
    int offset_minutes;       /* east of UTC; Z and +00:00 are 0 */
    bool offset_z;            /* written as Z / z (rather than +00:00) */
} toml_datetime;

typedef struct toml_value toml_value;
typedef struct toml_doc toml_doc;

/* Why a parse failed: one located error, a sentence a human understands. */
typedef struct toml_error {
    span_t span;   /* where; line:col come from source_pos() */
    char msg[256]; /* e.g. "duplicate key 'a' (first defined at 3:1)" */
} toml_error;

/* Parses src. On success returns the document; on failure returns NULL and
 * fills *err (if err is not NULL). Never aborts on bad input. */
toml_doc *toml_parse(source_t *src, toml_version ver, toml_error *err);
void toml_doc_free(toml_doc *doc);

const toml_value *toml_root(const toml_doc *doc); /* the root table */
source_t *toml_source(const toml_doc *doc);

/* ---- reading a value ------------------------------------------------------ */

toml_type toml_type_of(const toml_value *v);
const char *toml_type_name(toml_type t); /* "table", "array", "string", "integer", ... */
span_t toml_span(const toml_value *v);   /* the value as written (for a table: its
                                            header, inline braces, or first dotted key) */

/* Typed accessors: each returns the value; calling one on the wrong type is a
 * programming error (assert). Strings are NUL-terminated but may contain NULs:
 * use len when it matters. */
const char *toml_str(const toml_value *v, size_t *len);
int64_t toml_int(const toml_value *v);
double toml_float(const toml_value *v);
bool toml_bool(const toml_value *v);
const toml_datetime *toml_dt(const toml_value *v);

/* ---- tables and arrays ----------------------------------------------------- */

/* Number of entries of a table, or elements of an array; 0 for scalars. */
size_t toml_len(const toml_value *v);

/* Array element i (0-based), or NULL when out of range. */
const toml_value *toml_at(const toml_value *arr, size_t i);

/* Table entry i in source order: its key (len in *klen if not NULL), the
 * span of the key as written (the last part of a dotted key), and value. */
const char *toml_key_at(const toml_value *tab, size_t i, size_t *klen);
span_t toml_key_span_at(const toml_value *tab, size_t i);
const toml_value *toml_value_at(const toml_value *tab, size_t i);

/* Lookup by key (exact bytes). NULL when absent or when tab is not a table. */
const toml_value *toml_get(const toml_value *tab, const char *key);
const toml_value *toml_getn(const toml_value *tab, const char *key, size_t klen);
/* Index of key in tab (for toml_key_span_at), or -1. */
long toml_index(const toml_value *tab, const char *key);

/* ---- toml-test output ------------------------------------------------------- */

/* Appends the toml-test "tagged JSON" encoding of the document to out:
 * tables as objects, arrays as arrays, every scalar as
 * {"type": "...", "value": "..."}. Written by hand, not with a JSON library, so strings
 * holding U+0000 survive. */
void toml_to_tagged_json(const toml_doc *doc, buf_t *out);

/* The scalar forms both JSON renderings share (no quotes added): a float as
 * the shortest %g that reads back as the same double (nan, inf, -inf as
 * TOML spells them), and a date/time as RFC 3339 the way toml-test writes
 * it ('T' between date and time, seconds always, the fraction with as many
 * digits as were written, Z or the offset). */
void toml_json_float(buf_t *out, double f);
void toml_json_datetime(buf_t *out, toml_type t, const toml_datetime *dt);

#endif
