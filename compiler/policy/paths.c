/* paths.c — policy path parsing and normalisation, and glob matching.
 *
 * Globs are matched component by component; "**" is handled by dynamic
 * programming over components, so no pattern can make matching exponential.
 */
#include "paths.h"

#include <stdlib.h>
#include <string.h>

/* ---- parsing ------------------------------------------------------------------------ */

static bool has_prefix(const char *s, size_t len, const char *pre)
{
    size_t n = strlen(pre);
    return len >= n && memcmp(s, pre, n) == 0;
}

bool glob_has_wildcard(const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' && (s[1] == '*' || s[1] == '?')) s++;
        else if (*s == '*' || *s == '?') return true;
    }
    return false;
}

const char *glob_unescape(const char *s, arena_t *a)
{
    char *out = arena_alloc(a, strlen(s) + 1), *o = out;
    for (; *s; s++) {
        if (*s == '\\' && (s[1] == '*' || s[1] == '?')) s++;
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

bool ppath_parse(const char *s, size_t len, bool allow_glob, arena_t *a, ppath_t *out,
                 const char **msg, size_t *bad_off)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            *msg = c == 0 ? "a path may not contain a NUL byte"
                          : "a path may not contain a control character (newline, tab, escape...)";
            *bad_off = i;
            return false;
        }
    }
    /* Linux resolves no path of PATH_MAX bytes or more (the terminator
     * counts), so no such entry can name anything (macOS stops at 1,024); refusing it here also
     * bounds the depth (at most PATH_MAX / 2 components) that every later
     * stage walks — a 100 KB path of 50,000 components made compile and lint
     * run for minutes with memory growing as the square of the depth. */
    if (len >= PPATH_MAX) {
        *msg = "path too long: Linux resolves no path of 4,096 bytes or more; name a shorter path (or a "
               "parent directory)";
        *bad_off = PPATH_MAX - 1;
        return false;
    }
    if (len == 0) {
        *msg = "empty path: write an absolute path, ~/..., or ${WORKSPACE}/...";
        *bad_off = 0;
        return false;
    }

    size_t rest = 0; /* where the part below the base starts */
    if (s[0] == '/') {
        out->base = PB_ROOT, rest = 1;
    } else if (s[0] == '~' && (len == 1 || s[1] == '/')) {
        out->base = PB_HOME, rest = 1;
    } else if (s[0] == '~') {
        *msg = "'~user' paths are not supported: write the absolute path";
        *bad_off = 0;
        return false;
    } else if (has_prefix(s, len, "${HOME}") && (len == 7 || s[7] == '/')) {
        out->base = PB_HOME, rest = 7;
    } else if (has_prefix(s, len, "${WORKSPACE}") && (len == 12 || s[12] == '/')) {
        out->base = PB_WORKSPACE, rest = 12;
    } else if (has_prefix(s, len, "${SCRATCH}") && (len == 10 || s[10] == '/')) {
        out->base = PB_SCRATCH, rest = 10;
    } else if (s[0] == '$') {
        *msg = "unknown variable: only ${HOME}, ${WORKSPACE} and ${SCRATCH} may start a path";
        *bad_off = 0;
        return false;
    } else if (has_prefix(s, len, "**/") || (len == 2 && memcmp(s, "**", 2) == 0)) {
        out->base = PB_ROOT, rest = 0, out->anywhere = true;
    } else {
        *msg = "relative path: write an absolute path, ~/..., ${WORKSPACE}/..., or **/NAME "
               "for a glob that matches anywhere";
        *bad_off = 0;
        return false;
    }

    /* Split into components: drop empty and "." ones, refuse "..". */
    buf_t b = BUF_INIT;
    if (out->anywhere) buf_adds(&b, "**");
    size_t i = rest;
    if (out->anywhere) i = 2;
    while (i < len) {
        while (i < len && s[i] == '/') i++;
        size_t st = i;
        while (i < len && s[i] != '/') i++;
        size_t n = i - st;
        if (n == 0 || (n == 1 && s[st] == '.')) continue;
        if (n == 2 && s[st] == '.' && s[st + 1] == '.') {
            buf_free(&b);
            *msg = "'..' is not allowed in a policy path: write the path it leads to";
            *bad_off = st;
            return false;
        }
        if (b.len) buf_addc(&b, '/');
        buf_add(&b, s + st, n);
    }
    const char *rel = buf_cstr(&b);
    out->glob = glob_has_wildcard(rel);
    if (out->glob && !allow_glob) {
        size_t off = 0;
        for (size_t k = 0; k < len; k++)
            if ((s[k] == '*' || s[k] == '?') && (k == 0 || s[k - 1] != '\\')) { off = k; break; }
        buf_free(&b);
        *msg = "globs ('*', '?') are accepted in deny_read and deny_write only; write a "
               "literal path here (use \\* for a literal star)";
        *bad_off = off;
        return false;
    }
    if (out->glob && (out->base == PB_WORKSPACE || out->base == PB_SCRATCH)) {
        buf_free(&b);
        /* SBPL cannot quote a runtime parameter into a regex, so a session-relative
         * glob could not mean the same thing on both targets: refuse it. */
        *msg = "a glob cannot start with ${WORKSPACE} or ${SCRATCH}: write **/PATTERN (it "
               "matches anywhere, the workspace included) or a literal path";
        *bad_off = 0;
        return false;
    }
    out->rel = out->glob ? arena_strdup(a, rel) : glob_unescape(rel, a);
    buf_free(&b);
    return true;
}

void ppath_format(const ppath_t *p, buf_t *out)
{
    switch (p->base) {
    case PB_ROOT:
        if (!p->anywhere) buf_addc(out, '/');
        buf_adds(out, p->rel);
        return;
    case PB_HOME: buf_adds(out, "~"); break;
    case PB_WORKSPACE: buf_adds(out, "${WORKSPACE}"); break;
    case PB_SCRATCH: buf_adds(out, "${SCRATCH}"); break;
    }
    if (*p->rel) {
        buf_addc(out, '/');
        buf_adds(out, p->rel);
    }
}

/* ---- filesystem paths ------------------------------------------------------------------- */

const char *path_normalize(const char *path, arena_t *a)
{
    if (!path || path[0] != '/') return NULL;
    size_t len = strlen(path);
    char *out = arena_alloc(a, len + 2);
    size_t o = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        const char *st = p;
        while (*p && *p != '/') p++;
        size_t n = (size_t)(p - st);
        if (n == 0 || (n == 1 && st[0] == '.')) continue;
        if (n == 2 && st[0] == '.' && st[1] == '.') {
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--; /* drop the '/' too */
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, st, n);
        o += n;
    }
    if (o == 0) out[o++] = '/';
    out[o] = '\0';
    return out;
}

bool path_is_under(const char *b, const char *a)
{
    if (strcmp(a, "/") == 0) return b[0] == '/';
    size_t n = strlen(a);
    return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

unsigned path_depth(const char *p)
{
    unsigned d = 0;
    for (; *p; p++)
        if (*p == '/' && p[1] != '\0') d++;
    return d;
}

const char *path_join(const char *base, const char *rel, arena_t *a)
{
    if (!rel || !*rel) return arena_strdup(a, base);
    size_t bl = strlen(base), rl = strlen(rel);
    bool slash = !(bl && base[bl - 1] == '/');
    char *out = arena_alloc(a, bl + rl + 2);
    memcpy(out, base, bl);
    if (slash) out[bl++] = '/';
    memcpy(out + bl, rel, rl + 1);
    return out;
}

const char *path_join_rel(const char *rel, const char *more, arena_t *a)
{
    if (!*rel) return arena_strdup(a, more);
    if (!*more) return arena_strdup(a, rel);
    size_t n = strlen(rel), m = strlen(more);
    char *out = arena_alloc(a, n + m + 2);
    memcpy(out, rel, n);
    out[n] = '/';
    memcpy(out + n + 1, more, m + 1);
    return out;
}

/* ---- glob matching ------------------------------------------------------------------------ */

/* One component of a pattern against one component of a path; both are
 * [p, pe) and [s, se). '*' any run, '?' one character (one UTF-8 sequence),
 * "\*" and "\?" literal. Greedy with one backtrack point: linear per star. */
static bool comp_match(const char *p, const char *pe, const char *s, const char *se)
{
    const char *star_p = NULL, *star_s = NULL;
    while (s < se) {
        if (p < pe && *p == '*') {
            star_p = ++p;
            star_s = s;
            continue;
        }
        if (p < pe && *p == '?') {
            p++;
            s++;
            while (s < se && ((unsigned char)*s & 0xC0) == 0x80) s++;
            continue;
        }
        if (p < pe) {
            char pc = *p;
            const char *pn = p + 1;
            if (pc == '\\' && pn < pe && (*pn == '*' || *pn == '?')) pc = *pn++;
            if (pc == *s) {
                p = pn;
                s++;
                continue;
            }
        }
        if (!star_p) return false;
        p = star_p;
        s = ++star_s;
    }
    while (p < pe && *p == '*') p++;
    return p == pe;
}

typedef struct comps {
    VEC(const char *) b; /* begin of each component */
    VEC(const char *) e; /* end of each component */
} comps_t;

static void split(const char *s, comps_t *c)
{
    while (*s) {
        while (*s == '/') s++;
        if (!*s) break;
        vec_push(&c->b, s);
        while (*s && *s != '/') s++;
        vec_push(&c->e, s);
    }
}

static bool is_dstar(const comps_t *c, size_t i)
{
    return c->e.v[i] - c->b.v[i] == 2 && c->b.v[i][0] == '*' && c->b.v[i][1] == '*';
}

/* row[j] after pattern component i: pattern components [0,i] match path
 * components [0,j). mode 0: the whole path; mode 1: some prefix of the path
 * (a cap covers what is below its match); mode 2: the path is a directory
 * below which a match could still appear. Time O(|pattern| * |path|). */
static bool dp_match(const char *pattern, const char *path, int mode)
{
    comps_t P = {0}, S = {0};
    split(pattern, &P);
    split(path, &S);
    size_t m = S.b.n;
    bool *prev = xcalloc(m + 1, sizeof *prev), *cur = xcalloc(m + 1, sizeof *cur);
    bool result = false;
    prev[0] = true;
    for (size_t i = 0; i < P.b.n; i++) {
        if (is_dstar(&P, i)) {
            bool any = false; /* "**" spans zero or more components */
            for (size_t j = 0; j <= m; j++) {
                any = any || prev[j];
                cur[j] = any;
            }
        } else {
            cur[0] = false;
            for (size_t j = 1; j <= m; j++)
                cur[j] = prev[j - 1] && comp_match(P.b.v[i], P.e.v[i], S.b.v[j - 1], S.e.v[j - 1]);
        }
        bool *t = prev; prev = cur; cur = t;
        if (mode == 2 && prev[m]) { result = true; goto out; } /* path used up, pattern goes on */
    }
    if (mode == 0) result = prev[m];
    else
        for (size_t j = 0; j <= m && !result; j++) result = prev[j];
out:
    free(prev);
    free(cur);
    vec_free(&P.b);
    vec_free(&P.e);
    vec_free(&S.b);
    vec_free(&S.e);
    return result;
}

bool glob_match(const char *pattern, const char *path) { return dp_match(pattern, path, 0); }

bool glob_match_prefix(const char *pattern, const char *path) { return dp_match(pattern, path, 1); }

bool glob_may_match_below(const char *pattern, const char *dir)
{
    if (strcmp(dir, "/") == 0) return true;
    return dp_match(pattern, dir, 2);
}

bool path_next_comp(const char **s, const char **b, const char **e)
{
    const char *p = *s;
    while (*p == '/') p++;
    if (!*p) return false;
    *b = p;
    while (*p && *p != '/') p++;
    *e = *s = p;
    return true;
}

bool glob_comp_wild(const char *b, const char *e)
{
    for (const char *q = b; q < e; q++) {
        if (*q == '\\' && q + 1 < e && (q[1] == '*' || q[1] == '?')) q++;
        else if (*q == '*' || *q == '?') return true;
    }
    return false;
}

size_t glob_literal_prefix_len(const char *pattern)
{
    size_t keep = 0;
    const char *s = pattern, *b, *e;
    while (path_next_comp(&s, &b, &e) && !glob_comp_wild(b, e)) keep = (size_t)(e - pattern);
    return keep;
}

const char *glob_literal_prefix(const char *pattern, arena_t *a)
{
    size_t n = glob_literal_prefix_len(pattern);
    if (n == 0) return arena_strdup(a, "/");
    return glob_unescape(arena_strndup(a, pattern, n), a);
}

const char *glob_escape(const char *lit, arena_t *a)
{
    char *out = arena_alloc(a, 2 * strlen(lit) + 1), *o = out;
    for (; *lit; lit++) {
        if (*lit == '*' || *lit == '?') *o++ = '\\';
        *o++ = *lit;
    }
    *o = '\0';
    return out;
}
