/* textenc.h — bytes to JSON-safe text: UTF-8 validation and repair, base64.
 *
 * Command output, file contents and file names are arbitrary bytes; JSON
 * strings are UTF-8 text, and jansson refuses anything else. Every
 * byte string the runtime puts into a response passes through here first, so
 * a hostile or binary stream can neither corrupt the JSON nor stall a session
 * (SPEC §11: drun's non-UTF-8 output hang).
 */
#ifndef DRUN_RT_TEXTENC_H
#define DRUN_RT_TEXTENC_H

#include <stdbool.h>
#include <stddef.h>

#include "drun_policy.h"

/* True when s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates,
 * nothing past U+10FFFF) and, unless allow_nul, holds no NUL byte. */
bool textenc_utf8_valid(const char *s, size_t n, bool allow_nul);

/* Appends s[0..n) to out as well-formed UTF-8 without NUL: every maximal
 * invalid subsequence and every NUL becomes U+FFFD. Returns true when nothing
 * was replaced (out then received an exact copy). */
bool textenc_utf8_sanitize(const char *s, size_t n, buf_t *out);

/* The length of the longest prefix of s[0..n) that does not end inside a
 * multi-byte sequence: cutting a capped stream there keeps a clean cut from
 * looking like invalid UTF-8. */
size_t textenc_utf8_clean_cut(const char *s, size_t n);

/* Standard base64 (RFC 4648 §4) with padding. */
void textenc_base64_encode(const void *p, size_t n, buf_t *out);

/* Decodes standard base64 into out; padding optional, no whitespace, no
 * other alphabet. Returns false on any invalid character, length or
 * non-canonical trailing bits (out may then hold a partial result). */
bool textenc_base64_decode(const char *s, size_t n, buf_t *out);

#endif
