/* glob.c — glob patterns of policy paths: matching, literal heads, escaping.
 *
 * Globs are matched component by component; "**" is handled by dynamic
 * programming over components, so no pattern can make matching exponential.
 */
#include "glob.h"

#include <stdlib.h>
#include <string.h>

#include "path.h"

/* ---- wildcards and escapes ------------------------------------------------------------ */

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
/* Does path hold the component [b, e) (exactly, between slashes)? */
static bool has_comp(const char *path, const char *b, const char *e)
{
    size_t n = (size_t)(e - b);
    for (const char *c = path; c; c = strchr(c, '/')) {
        while (*c == '/') c++;
        if (strncmp(c, b, n) == 0 && (c[n] == '/' || c[n] == '\0')) return true;
    }
    return false;
}

/* A whole or prefix match (modes 0 and 1) needs every literal component of
 * the pattern among the path's components: checked first, in time linear
 * in the path, it turns away almost every (cap, path) pair before the
 * table is built (a 2,047-component path against the built-in caps took
 * seconds in the review fuzzer). */
static bool literals_present(const char *pattern, const char *path)
{
    const char *s = pattern, *b, *e;
    while (path_next_comp(&s, &b, &e)) {
        bool literal = true;
        for (const char *q = b; q < e && literal; q++) literal = *q != '*' && *q != '?' && *q != '\\';
        if (literal && !has_comp(path, b, e)) return false;
    }
    return true;
}

static bool dp_match(const char *pattern, const char *path, int mode)
{
    if (mode != 2 && !literals_present(pattern, path)) return false;
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
        bool *t = prev;
        prev = cur;
        cur = t;
        if (mode == 2 && prev[m]) {
            result = true;
            goto out;
        } /* path used up, pattern goes on */
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
