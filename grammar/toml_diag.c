/* toml_diag.c — the sentences of the TOML front end: what a bad byte, a
 * broken string or number, or a token the grammar did not expect means, said
 * with the spot it happened. Semantic errors (duplicate keys, ranges) are
 * worded where they are found; this file holds the shared helpers.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "toml_internal.h"

void tp_error(toml_parser *ctx, span_t sp, const char *fmt, ...)
{
    if (ctx->failed) return;
    ctx->failed = true;
    ctx->err.span = sp;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err.msg, sizeof ctx->err.msg, fmt, ap);
    va_end(ap);
}

const char *tp_pos(toml_parser *ctx, uint32_t off, char buf[32])
{
    srcpos_t p = source_pos(ctx->src, off);
    snprintf(buf, 32, "%u:%u", p.line, p.col);
    return buf;
}

const char *tp_show(const char *s, size_t len, char *buf, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *lim = p + len;
    size_t w = 0;
    while (p < lim) {
        char one[8];
        size_t k = 1, adv = 1;
        if (*p == '\n') {
            strcpy(one, "\\n"), k = 2;
        } else if (*p == '\t') {
            strcpy(one, "\\t"), k = 2;
        } else if (*p < 0x20 || *p == 0x7F || (*p >= 0x80 && tp_utf8_len(p, lim) == 0)) {
            snprintf(one, sizeof one, "\\x%02X", *p), k = 4;            /* never a raw control or bad byte */
        } else if (*p == 0xC2 && p[1] < 0xA0) {
            snprintf(one, sizeof one, "\\u%04X", p[1]), k = 6, adv = 2; /* C1 controls: U+0080..U+009F */
        } else {
            adv = k = (size_t)tp_utf8_len(p, lim);                      /* a whole character, never half of one */
            memcpy(one, p, k);
        }
        if (w + k + 4 > n) { /* keep room for "..." and the NUL */
            memcpy(buf + w, "...", 4);
            return buf;
        }
        memcpy(buf + w, one, k);
        w += k;
        p += adv;
    }
    buf[w] = '\0';
    return buf;
}

int tp_utf8_len(const unsigned char *p, const unsigned char *lim)
{
    unsigned c = p[0];
    int n;
    uint32_t min, cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000, cp = c & 0x07;
    else return 0; /* continuation byte, overlong lead (C0 C1) or > U+10FFFF (F5..FF) */
    if (lim - p < n) return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* ---- lexical errors -------------------------------------------------------------- */

/* The byte at off cannot be here; where says where ("in a string"). */
static void bad_byte(toml_parser *ctx, uint32_t off, const char *where)
{
    const unsigned char *p = (const unsigned char *)ctx->src->text + off;
    const unsigned char *lim = (const unsigned char *)ctx->src->text + ctx->src->len;
    span_t sp = {off, off + 1};
    unsigned c = *p;
    if (c == '\r') {
        tp_error(ctx, sp, "carriage return not followed by a line feed%s%s", where ? " " : "",
                 where ? where : "");
    } else if (c < 0x20 || c == 0x7F) {
        bool str = where && strstr(where, "string");
        tp_error(ctx, sp, "control character U+%04X is not allowed %s%s", c, where ? where : "here",
                 str ? " (write it as an escape such as \\n or \\u0001)" : "");
    } else if (c >= 0x80 && tp_utf8_len(p, lim) == 0) {
        tp_error(ctx, sp, "invalid UTF-8 byte 0x%02X%s%s", c, where ? " " : "", where ? where : "");
    } else {
        int n = c < 0x80 ? 1 : tp_utf8_len(p, lim);
        sp.end = off + (uint32_t)n;
        bool keyish = ctx->mode == LEX_KEY && (ctx->prev == 0 || ctx->prev == TK_NEWLINE ||
                                               ctx->prev == TK_DOT || ctx->prev == TK_LBRACKET ||
                                               ctx->prev == TK_LLBRACKET || ctx->prev == TK_LBRACE ||
                                               ctx->prev == TK_COMMA || ctx->prev_in_key);
        tp_error(ctx, sp, "unexpected character '%.*s'%s", n, (const char *)p,
                 keyish ? " in a key (bare keys may contain only A-Z a-z 0-9 _ -; quote other keys)"
                        : (ctx->prev == TK_EQUALS || ctx->mode == LEX_VALUE ? " where a value was expected" : ""));
    }
}

/* A string that a bad byte, a line end or the end of input cut short. */
static void bad_string(toml_parser *ctx, span_t tok)
{
    const char *s = ctx->src->text + tok.start;
    bool ml = tok.end - tok.start >= 3 && s[1] == s[0] && s[2] == s[0];
    uint32_t q = tok.end;
    span_t open = {tok.start, tok.start + (ml ? 3 : 1)};
    const char *what = ml ? "multi-line string" : "string";
    /* the end of input, or a backslash that is the last byte of it */
    if (q >= ctx->src->len || (ctx->src->text[q] == '\\' && q + 1 >= ctx->src->len)) {
        tp_error(ctx, open, "unterminated %s: no closing %.*s before the end of the file", what,
                 ml ? 3 : 1, s);
        return;
    }
    char c = ctx->src->text[q], next = q + 1 < ctx->src->len ? ctx->src->text[q + 1] : '\0';
    if (c == '\n' || (c == '\r' && next == '\n')) {
        tp_error(ctx, open, "unterminated string: no closing %c on this line (use %c%c%c for a "
                            "multi-line string)",
                 s[0], s[0], s[0], s[0]);
    } else if (c == '\\') {
        const unsigned char *e = (const unsigned char *)ctx->src->text + q + 1;
        int n = tp_utf8_len(e, (const unsigned char *)ctx->src->text + ctx->src->len);
        char shown[16];
        if (next == '\n' || next == '\r')
            tp_error(ctx, (span_t){q, q + 1}, "invalid escape '\\' at the end of the line (only "
                                              "multi-line strings may continue a line)");
        else if (n == 0)
            bad_byte(ctx, q + 1, ml ? "in a multi-line string" : "in a string");
        else
            tp_error(ctx, (span_t){q, q + 1 + (uint32_t)n}, "invalid escape '\\%s' in string",
                     tp_show(&ctx->src->text[q + 1], (size_t)n, shown, sizeof shown));
    } else {
        bad_byte(ctx, q, ml ? "in a multi-line string" : "in a string");
    }
}

static bool is_xdigit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Is some '_' of s (n bytes) not between two digits (hex digits after 0x)? */
static bool bad_underscore(const char *s, size_t n)
{
    bool hex = n > 1 && s[0] == '0' && s[1] == 'x';
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '_') continue;
        if (i == 0 || i + 1 == n) return true;
        if (hex ? !is_xdigit(s[i - 1]) || !is_xdigit(s[i + 1])
                : !(s[i - 1] >= '0' && s[i - 1] <= '9') || !(s[i + 1] >= '0' && s[i + 1] <= '9'))
            return true;
    }
    return false;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* A '-' right after a digit (1979-05) or a ':' means a date or a time. */
static bool looks_like_date(const char *s, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (s[i] == ':' || (s[i] == '-' && is_digit(s[i - 1]))) return true;
    return false;
}

/* An exponent with no digits after it: 1e, 1e+, 1.5E_3 */
static bool bad_exponent(const char *s, size_t n)
{
    if (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return false;
    for (size_t i = 1; i < n; i++)
        if ((s[i] == 'e' || s[i] == 'E')) {
            size_t j = i + 1 + (i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-'));
            return j >= n || !is_digit(s[j]);
        }
    return false;
}

/* A run of number-like characters that is no valid value. */
static void bad_value(toml_parser *ctx, span_t tok)
{
    const char *s = ctx->src->text + tok.start;
    size_t n = tok.end - tok.start;
    char shown[80];
    tp_show(s, n, shown, sizeof shown);
    const char *d = s + (s[0] == '+' || s[0] == '-');
    size_t nd = n - (size_t)(d - s);
    bool alpha = nd > 0 && ((*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z'));
    bool special = nd > 0 && (strncasecmp(d, "inf", nd < 3 ? nd : 3) == 0 || strncasecmp(d, "nan", nd < 3 ? nd : 3) == 0 ||
                              (d == s && (strncasecmp(s, "true", n < 4 ? n : 4) == 0 ||
                                          strncasecmp(s, "false", n < 5 ? n : 5) == 0)));
    if (alpha && special)
        tp_error(ctx, tok, "invalid value '%s' (booleans are true and false, special floats inf "
                           "and nan, all lowercase)",
                 shown);
    else if (alpha)
        tp_error(ctx, tok, "invalid value '%s' (strings must be quoted)", shown);
    else if (looks_like_date(s, n))
        tp_error(ctx, tok, "invalid date or time '%s' (the forms are 1979-05-27, 07:32:00, "
                           "1979-05-27T07:32:00 and 1979-05-27T07:32:00Z)",
                 shown);
    else if (memchr(s, '_', n) && bad_underscore(s, n))
        tp_error(ctx, tok, "invalid number '%s': an underscore must sit between two digits", shown);
    else if (nd > 1 && d[0] == '0' && is_digit(d[1]))
        tp_error(ctx, tok, "invalid number '%s': leading zeros are not allowed", shown);
    else if (bad_exponent(s, n))
        tp_error(ctx, tok, "invalid float '%s': an exponent needs digits after the 'e'", shown);
    else if (memchr(s, '.', n))
        tp_error(ctx, tok, "invalid float '%s': a '.' needs digits on both sides", shown);
    else
        tp_error(ctx, tok, "invalid number '%s'", shown);
}

void tp_lex_error(toml_parser *ctx, int kind, span_t tok, bool after_comment)
{
    if (kind == TK_BAD_STRING) bad_string(ctx, tok);
    else if (kind == TK_BAD_VALUE) bad_value(ctx, tok);
    else bad_byte(ctx, tok.start, after_comment ? "in a comment" : NULL);
}

/* ---- syntax errors ----------------------------------------------------------------- */

/* What the parser was given, for "found ...". */
static const char *tok_phrase(toml_parser *ctx, int kind, span_t tok, char *buf, size_t n)
{
    /* clang-format off */
    static const char *const punct[] = {
        [TK_NEWLINE] = "end of line", [TK_EQUALS] = "'='", [TK_DOT] = "'.'", [TK_COMMA] = "','",
        [TK_LBRACKET] = "'['", [TK_RBRACKET] = "']'", [TK_LLBRACKET] = "'[['",
        [TK_RRBRACKET] = "']]'", [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'",
    };
    /* clang-format on */
    if (kind == 0) return "end of file";
    if (kind < (int)(sizeof punct / sizeof *punct) && punct[kind]) return punct[kind];
    char text[64];
    tp_show(ctx->src->text + tok.start, tok.end - tok.start, text, sizeof text);
    const char *what = kind == TK_BARE       ? "key"
                       : kind == TK_INTEGER  ? "integer"
                       : kind == TK_FLOAT    ? "float"
                       : kind == TK_BOOL     ? "boolean"
                       : kind == TK_DATETIME ? "date-time"
                                             : "string";
    snprintf(buf, n, "%s %s%s%s", what, kind == TK_BARE ? "'" : "", text, kind == TK_BARE ? "'" : "");
    return buf;
}

static int top(const toml_parser *ctx) { return ctx->depth ? ctx->open[ctx->depth - 1] : 0; }

/* What was expected, from the last token the parser took and the open
 * containers; NULL when nothing more precise than "unexpected" fits. */
static const char *expectation(toml_parser *ctx, char *buf, size_t n)
{
    int p = ctx->prev;
    if (p == TK_EQUALS) return "expected a value after '='";
    if (p == TK_DOT) return "expected a key after '.'";
    if (ctx->prev_in_key && ctx->in_header) return "expected '.' or the closing bracket of the table header";
    if (ctx->prev_in_key) {
        char key[64];
        tp_show(ctx->src->text + ctx->prev_span.start, ctx->prev_span.end - ctx->prev_span.start, key, sizeof key);
        bool quoted = key[0] == '"' || key[0] == '\'';
        snprintf(buf, n, "expected '=' after key %s%s%s", quoted ? "" : "'", key, quoted ? "" : "'");
        return buf;
    }
    if (ctx->in_header && (p == TK_RBRACKET || p == TK_RRBRACKET))
        return "expected a new line after the table header";
    if (ctx->in_header) return "expected a table name after the opening bracket";
    if (top(ctx) == CT_ARRAY)
        return p == TK_LBRACKET || p == TK_COMMA ? "expected a value or ']' in the array"
                                                 : "expected ',' or ']' after an array element";
    if (top(ctx) == CT_INLINE)
        return p == TK_LBRACE  ? "expected a key or '}' in the inline table"
               : p == TK_COMMA ? "expected a key after ',' in the inline table"
                               : "expected ',' or '}' after an inline table entry";
    if (p == 0 || p == TK_NEWLINE) return "expected a key or a [table] header";
    return "expected a new line after the value";
}

void tp_syntax_error(toml_parser *ctx, int kind, span_t tok)
{
    char found[96], buf[128], at[32];
    const char *f = tok_phrase(ctx, kind, tok, found, sizeof found);
    if ((kind == TK_ML_BASIC || kind == TK_ML_LITERAL) && ctx->mode == LEX_KEY) {
        tp_error(ctx, tok, "a multi-line string cannot be a key");
    } else if (kind == TK_EQUALS && (ctx->prev == 0 || ctx->prev == TK_NEWLINE || ctx->prev == TK_LBRACE ||
                                     (ctx->prev == TK_COMMA && top(ctx) == CT_INLINE))) {
        tp_error(ctx, tok, "missing key before '='");
    } else if (kind == 0 && ctx->depth && ctx->prev != TK_EQUALS) {
        tp_error(ctx, tok, "unterminated %s (opened at %s): found end of file",
                 top(ctx) == CT_ARRAY ? "array" : "inline table",
                 tp_pos(ctx, ctx->open_at[ctx->depth - 1], at));
    } else {
        tp_error(ctx, tok, "%s, found %s", expectation(ctx, buf, sizeof buf), f);
    }
}

void tp_stack_overflow(toml_parser *ctx)
{
    tp_error(ctx, ctx->prev_span, "nesting too deep for the parser");
}
