/* jsonw.h — the one JSON writer: deterministic, pretty or compact output into
 * a buf_t, with the one JSON string escaper (json_escape).
 *
 * Usage: jw_t j; jw_init(&j, &buf, true); jw_obj(&j); jw_key(&j, "a");
 * jw_int(&j, 1); jw_end(&j); — keys and values in the order written.
 */
#ifndef DRUN_JSONW_H
#define DRUN_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends s[0..len) as a JSON string literal with quotes. Control characters
 * and U+0000 become \uXXXX; invalid UTF-8 bytes become U+FFFD, so the output
 * is always valid JSON whatever the input bytes. */
void json_escape(buf_t *out, const char *s, size_t len);

#define JW_MAX_DEPTH 64

typedef struct jw {
    buf_t *b;                     /* output, borrowed */
    bool pretty;                  /* newlines and 2-space indentation */
    int depth;                    /* open containers */
    bool has_items[JW_MAX_DEPTH]; /* whether each open container has an item yet */
    char kind[JW_MAX_DEPTH];      /* '{' or '[' for each open container */
    bool after_key;               /* a key was written; the value follows inline */
} jw_t;

void jw_init(jw_t *j, buf_t *b, bool pretty);
void jw_obj(jw_t *j);                /* { */
void jw_arr(jw_t *j);                /* [ */
void jw_end(jw_t *j);                /* closes the innermost container */
void jw_key(jw_t *j, const char *k); /* "k": */
void jw_str(jw_t *j, const char *s); /* NULL writes null */
void jw_strn(jw_t *j, const char *s, size_t len);
void jw_int(jw_t *j, int64_t v);
void jw_bool(jw_t *j, bool v);
void jw_null(jw_t *j);
void jw_raw(jw_t *j, const char *json); /* an already-encoded JSON value */

#endif
