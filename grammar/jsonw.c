/* jsonw.c — JSON string escaping and the streaming writer. */
#include "jsonw.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid:
 * overlongs, surrogates and code points past U+10FFFF are invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return len;
}

void json_escape(buf_t *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    buf_reserve(out, len + 2);
    buf_addc(out, '"');
    size_t i = 0;
    while (i < len) {
        /* copy the run of bytes that need no escaping in one go */
        size_t run = i;
        while (run < len && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' && p[run] != '\\') run++;
        if (run > i) {
            buf_add(out, s + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            buf_addc(out, '\\');
            buf_addc(out, (char)c);
            i++;
        } else if (c == '\n') {
            buf_adds(out, "\\n"), i++;
        } else if (c == '\t') {
            buf_adds(out, "\\t"), i++;
        } else if (c == '\r') {
            buf_adds(out, "\\r"), i++;
        } else if (c < 0x80) {
            buf_printf(out, "\\u%04x", c); /* other control characters and DEL */
            i++;
        } else {
            size_t n = utf8_seq(p + i, len - i);
            if (n == 0) {
                buf_adds(out, "\\ufffd");
                i++;
            } else {
                buf_add(out, s + i, n);
                i += n;
            }
        }
    }
    buf_addc(out, '"');
}

void jw_init(jw_t *j, buf_t *b, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->b = b;
    j->pretty = pretty;
}

static void newline(jw_t *j)
{
    if (!j->pretty) return;
    buf_addc(j->b, '\n');
    for (int i = 0; i < j->depth; i++) buf_adds(j->b, "  ");
}

/* Separator and indentation before a value or key. */
static void before_item(jw_t *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0) return;
    if (j->has_items[j->depth - 1]) buf_addc(j->b, ',');
    j->has_items[j->depth - 1] = true;
    newline(j);
}

static void open(jw_t *j, char c)
{
    before_item(j);
    if (j->depth == JW_MAX_DEPTH) abort(); /* our documents are shallow: a bug */
    buf_addc(j->b, c);
    j->has_items[j->depth] = false;
    j->kind[j->depth] = c;
    j->depth++;
}

void jw_obj(jw_t *j) { open(j, '{'); }
void jw_arr(jw_t *j) { open(j, '['); }

void jw_end(jw_t *j)
{
    if (j->depth == 0) return;
    j->depth--;
    if (j->has_items[j->depth]) newline(j);
    buf_addc(j->b, j->kind[j->depth] == '[' ? ']' : '}');
}

void jw_key(jw_t *j, const char *k)
{
    before_item(j);
    json_escape(j->b, k, strlen(k));
    buf_adds(j->b, j->pretty ? ": " : ":");
    j->after_key = true;
}

void jw_strn(jw_t *j, const char *s, size_t len)
{
    before_item(j);
    json_escape(j->b, s, len);
}

void jw_str(jw_t *j, const char *s)
{
    if (!s) {
        jw_null(j);
        return;
    }
    jw_strn(j, s, strlen(s));
}

void jw_int(jw_t *j, int64_t v)
{
    before_item(j);
    buf_printf(j->b, "%lld", (long long)v);
}

void jw_bool(jw_t *j, bool v)
{
    before_item(j);
    buf_adds(j->b, v ? "true" : "false");
}

void jw_null(jw_t *j)
{
    before_item(j);
    buf_adds(j->b, "null");
}

void jw_raw(jw_t *j, const char *json)
{
    before_item(j);
    buf_adds(j->b, json);
}
