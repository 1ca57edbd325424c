/* suggest.c — edit distance and the "did you mean" choice. */
#include "suggest.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

size_t suggest_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 256 || m > 256) return n > m ? n : m; /* not a typo of a key */
    /* three rows: i-2, i-1, i */
    size_t *r = xmalloc(3 * (m + 1) * sizeof *r);
    size_t *pp = r, *p = r + m + 1, *c = r + 2 * (m + 1);
    for (size_t j = 0; j <= m; j++) p[j] = j;
    for (size_t i = 1; i <= n; i++) {
        c[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = p[j] + 1;
            if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
            if (p[j - 1] + cost < v) v = p[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            c[j] = v;
        }
        size_t *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    size_t d = p[m];
    free(r);
    return d;
}

const char *suggest(const char *word, const char *const *cands)
{
    size_t len = strlen(word);
    size_t limit = len / 3 > 1 ? len / 3 : 1;
    const char *best = NULL;
    size_t bestd = limit + 1;
    for (; *cands; cands++) {
        size_t d = suggest_distance(word, *cands);
        if (d < bestd) bestd = d, best = *cands;
    }
    return best;
}
