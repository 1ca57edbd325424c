/* path.c — absolute filesystem path strings: lexical normalisation,
 * ancestry, depth, joining and stepping through components. Nothing here
 * touches the filesystem.
 */
#include "path.h"

#include <string.h>

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
