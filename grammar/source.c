/* source.c — source objects, line map, and the one diagnostic renderer. */
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

source_t *source_new(const char *name, const char *text, size_t len)
{
    source_t *s = xcalloc(1, sizeof *s);
    s->name = xstrdup(name);
    s->text = xstrndup(text, len);
    s->len = len;
    return s;
}

source_t *source_read(const char *path, char **err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        *err = xasprintf("%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    buf_t b = BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        buf_add(&b, chunk, n);
        if (b.len >= SOURCE_MAX_BYTES) break;
    }
    int bad = ferror(f);
    int saved = errno;
    if (f != stdin) fclose(f);
    if (bad) {
        buf_free(&b);
        *err = xasprintf("%s: cannot read: %s", path, strerror(saved));
        return NULL;
    }
    if (b.len >= SOURCE_MAX_BYTES) {
        buf_free(&b);
        *err = xasprintf("%s: file too large (the limit is %zu bytes)", path,
                         SOURCE_MAX_BYTES - 1);
        return NULL;
    }
    source_t *s = xcalloc(1, sizeof *s);
    s->name = xstrdup(strcmp(path, "-") == 0 ? "<stdin>" : path);
    s->len = b.len;
    s->text = buf_detach(&b, NULL);
    return s;
}

void source_free(source_t *s)
{
    if (!s) return;
    free(s->name);
    free(s->text);
    free(s->lines);
    free(s->chars);
    free(s);
}

/* A byte that starts a character: anything but a UTF-8 continuation byte
 * (a stray one counts as a character of its own elsewhere, not here: columns
 * have always counted this way). */
static bool starts_char(char c) { return ((unsigned char)c & 0xC0) != 0x80; }

/* One pass builds both maps: where each line starts, and how many characters
 * precede each SOURCE_CHAR_STEP-byte block. Without the second, a column on a
 * one-line file of 10,000 entries rescanned the line for every diagnostic and
 * IR rule (quadratic: seconds on 160 KB). */
static void build_lines(source_t *s)
{
    VEC(uint32_t) v = {0};
    size_t nblocks = s->len / SOURCE_CHAR_STEP + 1;
    uint32_t *chars = xcalloc(nblocks, sizeof *chars);
    uint32_t nchars = 0;
    vec_push(&v, 0);
    for (size_t i = 0; i < s->len; i++) {
        if (i % SOURCE_CHAR_STEP == 0) chars[i / SOURCE_CHAR_STEP] = nchars;
        if (s->text[i] == '\n') vec_push(&v, (uint32_t)(i + 1));
        nchars += starts_char(s->text[i]);
    }
    if (s->len % SOURCE_CHAR_STEP == 0) chars[nblocks - 1] = nchars;
    s->lines = v.v;
    s->nlines = v.n;
    s->chars = chars;
}

/* Characters in text[0, off). */
static uint32_t chars_before(const source_t *s, uint32_t off)
{
    uint32_t n = s->chars[off / SOURCE_CHAR_STEP];
    for (uint32_t i = off - off % SOURCE_CHAR_STEP; i < off; i++) n += starts_char(s->text[i]);
    return n;
}

static size_t line_index(source_t *s, uint32_t off)
{
    if (!s->lines) build_lines(s);
    size_t lo = 0, hi = s->nlines; /* lines[lo] <= off < lines[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->lines[mid] <= off) lo = mid;
        else hi = mid;
    }
    return lo;
}

srcpos_t source_pos(source_t *s, uint32_t off)
{
    if (off > s->len) off = (uint32_t)s->len;
    size_t li = line_index(s, off);
    /* Columns count characters: every byte that is not a UTF-8 continuation
     * byte starts one. */
    unsigned col = 1 + chars_before(s, off) - chars_before(s, s->lines[li]);
    return (srcpos_t){(unsigned)li + 1, col};
}

const char *source_line(source_t *s, uint32_t off, size_t *len)
{
    if (off > s->len) off = (uint32_t)s->len;
    size_t li = line_index(s, off);
    const char *p = s->text + s->lines[li];
    size_t end = li + 1 < s->nlines ? s->lines[li + 1] - 1 : s->len;
    size_t n = end - s->lines[li];
    if (n && p[n - 1] == '\r') n--;
    *len = n;
    return p;
}

/* ---- diagnostics ------------------------------------------------------------ */

const char *severity_name(severity_t s)
{
    switch (s) {
    case SEV_ERROR: return "error";
    case SEV_WARNING: return "warning";
    case SEV_NOTE: return "note";
    }
    return "error";
}

void diag_add(diag_list_t *l, severity_t sev, const char *id, source_t *src, span_t span,
              const char *fmt, ...)
{
    buf_t b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    diag_t d = {sev, id, src, span, buf_detach(&b, NULL)};
    vec_push(l, d);
}

size_t diag_count(const diag_list_t *l, severity_t sev)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) n += l->v[i].sev == sev;
    return n;
}

void diag_list_clear(diag_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i].msg);
    l->n = 0;
}

void diag_keep_source(diag_list_t *l, source_t *src) { vec_push(&l->owned, src); }

void diag_list_free(diag_list_t *l)
{
    diag_list_clear(l);
    vec_free(l);
    for (size_t i = 0; i < l->owned.n; i++) source_free(l->owned.v[i]);
    vec_free(&l->owned);
}

bool diag_want_color(FILE *f)
{
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc) return false;
    return isatty(fileno(f));
}

/* Length of the well-formed UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len = p[0] >= 0xC2 && p[0] <= 0xDF ? 2 : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
                                                : p[0] >= 0xF0 && p[0] <= 0xF4   ? 4
                                                                                 : 0;
    if (len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F) ||
        (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] > 0x8F))
        return 0; /* overlong, surrogate, past U+10FFFF */
    return len;
}

/* Bytes that make one displayed column at p: a character, or one bad byte. */
static size_t display_step(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0x80 ? 1 : utf8_seq(p, n);
    return len ? len : 1;
}

/* Appends a source line for display: control characters (which a hostile
 * file may hold) become '?', so a diagnostic cannot drive the terminal. That
 * includes the C1 controls (U+0080..U+009F: some terminals take U+009B as
 * CSI) and bytes that are not UTF-8 (0x9B alone is CSI to others). */
static void add_display_line(buf_t *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            buf_addc(out, (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c);
            i++;
            continue;
        }
        size_t len = utf8_seq(p + i, n - i);
        if (len == 0 || (c == 0xC2 && p[i + 1] < 0xA0)) {
            buf_addc(out, '?');
            i += len ? len : 1;
        } else {
            buf_add(out, p + i, len);
            i += len;
        }
    }
}

/* Longest source line shown whole under a diagnostic, in bytes. */
#define DIAG_LINE_MAX 160

void diag_render(buf_t *out, const diag_t *d, bool color)
{
    const char *sevc = d->sev == SEV_ERROR     ? "\033[1;31m"
                       : d->sev == SEV_WARNING ? "\033[1;35m"
                                               : "\033[1;36m";
    const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
    if (d->src) {
        srcpos_t p = source_pos(d->src, d->span.start);
        buf_adds(out, bold);
        add_display_line(out, d->src->name, strlen(d->src->name));
        buf_printf(out, ":%u:%u:%s ", p.line, p.col, reset);
    }
    buf_printf(out, "%s%s:%s %s", color ? sevc : "", severity_name(d->sev), reset, d->msg);
    if (d->id) buf_printf(out, " [%s]", d->id);
    buf_addc(out, '\n');
    if (!d->src) return;

    size_t n;
    const char *line = source_line(d->src, d->span.start, &n);
    const char *start = d->src->text + d->span.start;
    /* A very long line (a minified or hostile file) is shown as a window
     * around the error, so one diagnostic never copies megabytes. */
    bool cut_left = false, cut_right = false;
    if (n > DIAG_LINE_MAX) {
        const char *ws = start - line > DIAG_LINE_MAX / 3 ? start - DIAG_LINE_MAX / 3 : line;
        while (ws > line && ((unsigned char)*ws & 0xC0) == 0x80) ws--;
        const char *we = (size_t)(line + n - ws) > DIAG_LINE_MAX ? ws + DIAG_LINE_MAX : line + n;
        while (we < line + n && ((unsigned char)*we & 0xC0) == 0x80) we++;
        cut_left = ws > line;
        cut_right = we < line + n;
        n = (size_t)(we - ws);
        line = ws;
    }
    buf_adds(out, cut_left ? "    ..." : "    ");
    add_display_line(out, line, n);
    buf_adds(out, cut_right ? "...\n    " : "\n    ");
    if (cut_left) buf_adds(out, "   ");
    /* Caret under the first character, tildes under the rest of the span on
     * this line. Tabs are copied so the caret lines up in any tab width. */
    const char *end = d->src->text + (d->span.end > d->span.start ? d->span.end : d->span.start + 1);
    if (end > line + n) end = line + n;
    /* Step as add_display_line does: one column per character or bad byte. */
    const unsigned char *q = (const unsigned char *)line, *lim = q + n;
    const unsigned char *ustart = (const unsigned char *)start, *uend = (const unsigned char *)end;
    for (; q < ustart && q < lim; q += display_step(q, (size_t)(lim - q)))
        buf_addc(out, *q == '\t' ? '\t' : ' ');
    if (color) buf_adds(out, "\033[1;32m");
    buf_addc(out, '^');
    if (q < lim) q += display_step(q, (size_t)(lim - q));
    for (; q < uend; q += display_step(q, (size_t)(uend - q))) buf_addc(out, '~');
    buf_adds(out, reset);
    buf_addc(out, '\n');
}

void diag_render_all(buf_t *out, const diag_list_t *l, bool color)
{
    for (size_t i = 0; i < l->n; i++) diag_render(out, &l->v[i], color);
}
