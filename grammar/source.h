/* source.h — source text, spans and diagnostics.
 *
 * A source_t owns one file's bytes and a line map. Everything that can be
 * blamed (token, tree node, IR rule) carries a span_t of byte offsets into its
 * source; positions are computed late, when a diagnostic is rendered, as
 * 1-based line and 1-based column counted in characters (UTF-8 code points).
 */
#ifndef DRUN_SOURCE_H
#define DRUN_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

typedef struct span {
    uint32_t start; /* byte offset of the first byte */
    uint32_t end;   /* byte offset one past the last byte (== start: a point) */
} span_t;

typedef struct source {
    char *name;      /* display name ("config.toml", "<stdin>", "<default>"), owned */
    char *text;      /* the bytes, owned, NUL-terminated (may contain NULs) */
    size_t len;      /* bytes in text, not counting the terminator */
    uint32_t *lines; /* byte offset of the start of each line, built lazily */
    size_t nlines;   /* entries in lines; 0 until first needed */
    uint32_t *chars; /* characters before each SOURCE_CHAR_STEP-byte block, built with lines */
} source_t;

/* Bytes between two entries of source_t.chars: a column is found by one table
 * look-up and a scan of at most this many bytes twice, however long the line. */
#define SOURCE_CHAR_STEP 64u

typedef struct srcpos {
    unsigned line; /* 1-based */
    unsigned col;  /* 1-based, in characters */
} srcpos_t;

/* Sources larger than this are refused: offsets are 32-bit. */
#define SOURCE_MAX_BYTES ((size_t)1 << 31)

/* Copies len bytes of text. Caller frees with source_free. */
source_t *source_new(const char *name, const char *text, size_t len);
/* Reads a whole file ("-" is stdin). NULL with *err set (caller frees) on failure. */
source_t *source_read(const char *path, char **err);
void source_free(source_t *s);

/* Line and column of byte offset off (clamped to the end). The first call
 * builds the line map and the character table (O(len)); every later call is a
 * binary search and a scan of at most 2 * SOURCE_CHAR_STEP bytes. Callers
 * that share a source between threads make one call first. */
srcpos_t source_pos(source_t *s, uint32_t off);
/* The line holding offset off, without its newline: *len bytes from the return. */
const char *source_line(source_t *s, uint32_t off, size_t *len);

/* ---- diagnostics -------------------------------------------------------- */

typedef enum {
    SEV_ERROR,
    SEV_WARNING,
    SEV_NOTE
} severity_t;

const char *severity_name(severity_t s); /* "error", "warning", "note" */

typedef struct diag {
    severity_t sev;
    const char *id; /* rule / diagnostic ID ("unknown-key"), static; may be NULL */
    source_t *src;  /* borrowed; may be NULL for a diagnostic with no location */
    span_t span;    /* where, within src */
    char *msg;      /* one sentence that says what is wrong and what to do, owned */
} diag_t;

typedef struct diag_list {
    diag_t *v;             /* the diagnostics, in the order added */
    size_t n, cap;
    VEC(source_t *) owned; /* sources the list keeps alive for its diagnostics */
} diag_list_t;

/* Hands src to the list: it is freed by diag_list_free, so diagnostics that
 * point into it stay valid after whatever produced them is gone. */
void diag_keep_source(diag_list_t *l, source_t *src);

void diag_add(diag_list_t *l, severity_t sev, const char *id, source_t *src, span_t span,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));
size_t diag_count(const diag_list_t *l, severity_t sev);
void diag_list_clear(diag_list_t *l); /* frees messages, keeps the vector */
void diag_list_free(diag_list_t *l);

/* Renders one diagnostic gcc-style:
 *   file:line:col: severity: message [id]
 *       the source line
 *       ^~~~~
 * color adds ANSI colours (the CLI decides: a terminal and no NO_COLOR). */
void diag_render(buf_t *out, const diag_t *d, bool color);
void diag_render_all(buf_t *out, const diag_list_t *l, bool color);

/* True when stderr is a terminal and NO_COLOR is unset or empty. */
bool diag_want_color(FILE *f);

#endif
