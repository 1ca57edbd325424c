/* toml_scalar.c — from a lexed token to a value: strings (escapes, the
 * multi-line trimming rules), integers (bases, 64-bit range), floats and
 * date-times (calendar ranges). The lexer has already checked the shape of
 * each token; what is left is meaning, and the message when it is wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml_internal.h"

/* The token's text for a message, cut to a readable length. */
static const char *tok_text(toml_parser *ctx, span_t tok, char *buf, size_t n)
{
    return tp_show(ctx->src->text + tok.start, tok.end - tok.start, buf, n);
}

/* ---- strings ---------------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends code point cp (a Unicode scalar value) as UTF-8. */
static char *put_utf8(char *w, uint32_t cp)
{
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xC0 | cp >> 6);
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xE0 | cp >> 12);
        *w++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *w++ = (char)(0xF0 | cp >> 18);
        *w++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *w++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    }
    return w;
}

/* Decodes the ndig hex digits of \x, \u or \U at p (the backslash); e is the
 * end of the string body. Returns the code point or -1 with the error set. */
static long hex_escape(toml_parser *ctx, const char *p, const char *e, int ndig)
{
    const char *text = ctx->src->text;
    uint32_t at = (uint32_t)(p - text);
    long cp = 0;
    int i;
    for (i = 0; i < ndig && p + 2 + i < e && hexval(p[2 + i]) >= 0; i++) cp = cp * 16 + hexval(p[2 + i]);
    if (i < ndig) {
        tp_error(ctx, (span_t){at, at + 2 + (uint32_t)i}, "invalid escape '\\%c%.*s' in string: \\%c needs %d hex digits",
                 p[1], i, p + 2, p[1], ndig);
        return -1;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        tp_error(ctx, (span_t){at, at + 2 + (uint32_t)ndig},
                 "invalid escape '\\%c%.*s' in string: U+%04lX is not a Unicode scalar value", p[1],
                 ndig, p + 2, (unsigned long)cp);
        return -1;
    }
    return cp;
}

/* A backslash that ends a line of a multi-line basic string: it, the
 * whitespace after it and all the blank lines and indentation that follow are
 * dropped. Returns where the text resumes, or NULL when something other than
 * whitespace follows it on its line. */
static const char *line_continuation(const char *p, const char *e)
{
    const char *q = p + 1;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    if (q < e && *q == '\r' && q + 1 < e && q[1] == '\n') q++;
    if (q >= e || *q != '\n') return NULL;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    return q;
}

/* One escape at p (the backslash): writes its bytes at *w, returns where the
 * string continues, or NULL with the error set. */
static const char *unescape_one(toml_parser *ctx, const char *p, const char *e, bool ml, char **w)
{
    uint32_t at = (uint32_t)(p - ctx->src->text);
    long cp;
    switch (p[1]) {
    case 'b': *(*w)++ = '\b'; return p + 2;
    case 't': *(*w)++ = '\t'; return p + 2;
    case 'n': *(*w)++ = '\n'; return p + 2;
    case 'f': *(*w)++ = '\f'; return p + 2;
    case 'r': *(*w)++ = '\r'; return p + 2;
    case '"': *(*w)++ = '"'; return p + 2;
    case '\\': *(*w)++ = '\\'; return p + 2;
    case 'e':
    case 'x':
        if (ctx->ver == TOML_1_0) {
            tp_error(ctx, (span_t){at, at + 2}, "invalid escape '\\%c' in string (allowed from TOML 1.1)", p[1]);
            return NULL;
        }
        if (p[1] == 'e') {
            *(*w)++ = '\x1b';
            return p + 2;
        }
        if ((cp = hex_escape(ctx, p, e, 2)) < 0) return NULL;
        *w = put_utf8(*w, (uint32_t)cp);
        return p + 4;
    case 'u':
    case 'U':
        if ((cp = hex_escape(ctx, p, e, p[1] == 'u' ? 4 : 8)) < 0) return NULL;
        *w = put_utf8(*w, (uint32_t)cp);
        return p + (p[1] == 'u' ? 6 : 10);
    }
    if (ml && (p[1] == ' ' || p[1] == '\t' || p[1] == '\n' || p[1] == '\r')) {
        const char *q = line_continuation(p, e);
        if (q) return q;
        tp_error(ctx, (span_t){at, at + 2},
                 "invalid escape '\\%c' in string: a line-ending backslash must be followed only by "
                 "whitespace up to the end of the line",
                 p[1]);
        return NULL;
    }
    char shown[16];
    tp_show(p + 1, 1, shown, sizeof shown);
    tp_error(ctx, (span_t){at, at + 2}, "invalid escape '\\%s' in string", shown);
    return NULL;
}

/* Copies [p, e) to w, turning CRLF into LF when ml (newlines inside a
 * multi-line string read the same on every platform) and decoding escapes
 * when basic. Returns the end of the output, or NULL with the error set. */
static char *copy_body(toml_parser *ctx, const char *p, const char *e, bool ml, bool basic, char *w)
{
    while (p < e) {
        const char *stop = p;
        while (stop < e && *stop != '\\' && *stop != '\r') stop++;
        memcpy(w, p, (size_t)(stop - p));
        w += stop - p;
        p = stop;
        if (p >= e) break;
        if (*p == '\r') {
            if (!(ml && p + 1 < e && p[1] == '\n')) *w++ = '\r';
            p++;
        } else if (!basic) {
            *w++ = *p++;
        } else if (!(p = unescape_one(ctx, p, e, ml, &w))) {
            return NULL;
        }
    }
    return w;
}

bool tp_decode_string(toml_parser *ctx, int kind, span_t tok, char **out, size_t *len)
{
    const char *s = ctx->src->text + tok.start, *e = ctx->src->text + tok.end;
    bool ml = kind == TK_ML_BASIC || kind == TK_ML_LITERAL;
    bool basic = kind == TK_BASIC || kind == TK_ML_BASIC;
    size_t q = ml ? 3 : 1;
    const char *p = s + q;
    e -= q;
    /* A newline right after the opening delimiter is not part of the string. */
    if (ml && p < e && *p == '\n') p++;
    else if (ml && p + 1 < e && p[0] == '\r' && p[1] == '\n') p += 2;
    /* Decoding never lengthens: every escape is longer than its UTF-8. */
    char *buf = arena_alloc(&ctx->doc->arena, (size_t)(e - p) + 1);
    char *w = copy_body(ctx, p, e, ml, basic, buf);
    if (!w) return false;
    *w = '\0';
    *out = buf;
    *len = (size_t)(w - buf);
    return true;
}

/* ---- integers ------------------------------------------------------------------ */

bool tp_decode_integer(toml_parser *ctx, span_t tok, int64_t *out)
{
    const char *s = ctx->src->text + tok.start;
    size_t n = tok.end - tok.start, i = 0;
    bool neg = false;
    int base = 10;
    if (s[0] == '+' || s[0] == '-') neg = s[i++] == '-';
    else if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b'))
        base = s[1] == 'x' ? 16 : (s[1] == 'o' ? 8 : 2), i = 2;
    uint64_t v = 0;
    /* Fast path: up to 18 plain decimal digits cannot overflow. */
    if (base == 10 && n - i <= 18) {
        for (; i < n; i++)
            if (s[i] != '_') v = v * 10 + (uint64_t)(s[i] - '0');
        *out = neg ? -(int64_t)v : (int64_t)v;
        return true;
    }
    /* Accumulate the magnitude; -2^63 is the one value whose magnitude does
     * not fit in int64_t. */
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] == '_') continue;
        uint64_t d = (uint64_t)hexval(s[i]);
        if (v > (limit - d) / (uint64_t)base) {
            char shown[80];
            tp_error(ctx, tok, "integer %s does not fit in 64 bits", tok_text(ctx, tok, shown, sizeof shown));
            return false;
        }
        v = v * (uint64_t)base + d;
    }
    *out = !neg ? (int64_t)v : (v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v);
    return true;
}

/* ---- floats ---------------------------------------------------------------------- */

bool tp_decode_float(toml_parser *ctx, span_t tok, double *out)
{
    const char *s = ctx->src->text + tok.start;
    size_t n = tok.end - tok.start;
    const char *word = s + (s[0] == '+' || s[0] == '-');
    if (*word == 'i' || *word == 'n') {
        double x = *word == 'i' ? INFINITY : NAN;
        *out = s[0] == '-' ? -x : x;
        return true;
    }
    /* strtod wants the digits without underscores. Floats are short in
     * practice; a hostile megabyte of digits gets a heap copy. */
    char small[128], *buf = n < sizeof small ? small : xmalloc(n + 1), *w = buf;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_') *w++ = s[i];
    *w = '\0';
    double x = strtod(buf, NULL);
    if (buf != small) free(buf);
    if (isinf(x)) {
        char shown[80];
        tp_error(ctx, tok, "float %s is out of range (larger than 1.8e308)", tok_text(ctx, tok, shown, sizeof shown));
        return false;
    }
    *out = x;
    return true;
}

/* ---- date-times ---------------------------------------------------------------------- */

static int num(const char *p, int ndig)
{
    int v = 0;
    for (int i = 0; i < ndig; i++) v = v * 10 + (p[i] - '0');
    return v;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    return m == 2 && leap ? 29 : days[m - 1];
}

static bool check_date(toml_parser *ctx, span_t tok, const toml_datetime *dt)
{
    static const char *const months[12] = {"January", "February", "March", "April", "May", "June", "July",
                                           "August", "September", "October", "November", "December"};
    span_t sp = {tok.start, tok.start + 10};
    const char *s = ctx->src->text + tok.start;
    if (dt->month < 1 || dt->month > 12) {
        tp_error(ctx, sp, "invalid date '%.10s': month must be 01 to 12", s);
        return false;
    }
    int dim = days_in_month(dt->year, dt->month);
    if (dt->day < 1 || dt->day > dim) {
        tp_error(ctx, sp, "invalid date '%.10s': %s %04d has %d days", s, months[dt->month - 1], dt->year, dim);
        return false;
    }
    return true;
}

/* Reads HH:MM[:SS[.fraction]] at s + *i, advancing *i. */
static bool read_time(toml_parser *ctx, span_t tok, size_t *i, toml_datetime *dt)
{
    const char *s = ctx->src->text + tok.start, *t = s + *i;
    size_t n = tok.end - tok.start;
    uint32_t at = tok.start + (uint32_t)*i;
    dt->hour = num(t, 2);
    dt->minute = num(t + 3, 2);
    *i += 5;
    if (*i < n && s[*i] == ':') {
        dt->second = num(s + *i + 1, 2);
        *i += 3;
        if (*i < n && s[*i] == '.') {
            int digits = 0, nano = 0;
            for (*i += 1; *i < n && s[*i] >= '0' && s[*i] <= '9'; *i += 1, digits++)
                if (digits < 9) nano = nano * 10 + (s[*i] - '0');
            dt->frac_digits = digits < 9 ? digits : 9;
            for (int k = dt->frac_digits; k < 9; k++) nano *= 10;
            dt->nanosecond = nano;
        }
    } else if (ctx->ver == TOML_1_0) {
        tp_error(ctx, (span_t){at, at + 5}, "time '%.5s' has no seconds (required in TOML 1.0: write %.5s:00)", t, t);
        return false;
    }
    const char *what = dt->hour > 23     ? "hour must be 00 to 23"
                       : dt->minute > 59 ? "minute must be 00 to 59"
                       : dt->second > 60 ? "second must be 00 to 60"
                                         : NULL;
    if (what) {
        tp_error(ctx, (span_t){at, tok.start + (uint32_t)*i}, "invalid time '%.*s': %s", (int)(s + *i - t), t, what);
        return false;
    }
    return true;
}

/* Reads Z or +HH:MM / -HH:MM at s + i. */
static bool read_offset(toml_parser *ctx, span_t tok, size_t i, toml_datetime *dt)
{
    const char *s = ctx->src->text + tok.start + i;
    dt->has_offset = true;
    if (*s == 'Z' || *s == 'z') {
        dt->offset_z = true;
        return true;
    }
    int h = num(s + 1, 2), m = num(s + 4, 2);
    if (h > 23 || m > 59) {
        tp_error(ctx, (span_t){tok.start + (uint32_t)i, tok.end}, "invalid time offset '%.6s': %s", s,
                 h > 23 ? "hours must be 00 to 23" : "minutes must be 00 to 59");
        return false;
    }
    dt->offset_minutes = (*s == '-' ? -1 : 1) * (h * 60 + m);
    return true;
}

int tp_decode_datetime(toml_parser *ctx, span_t tok, toml_datetime *dt)
{
    const char *s = ctx->src->text + tok.start;
    size_t n = tok.end - tok.start, i = 0;
    memset(dt, 0, sizeof *dt);
    if (s[2] == ':') /* the lexer guarantees at least HH:MM */
        return read_time(ctx, tok, &i, dt) ? TOML_TIME_LOCAL : -1;
    dt->year = num(s, 4);
    dt->month = num(s + 5, 2);
    dt->day = num(s + 8, 2);
    if (!check_date(ctx, tok, dt)) return -1;
    if (n == 10) return TOML_DATE_LOCAL;
    i = 11;
    if (!read_time(ctx, tok, &i, dt)) return -1;
    if (i == n) return TOML_DATETIME_LOCAL;
    return read_offset(ctx, tok, i, dt) ? TOML_DATETIME : -1;
}
