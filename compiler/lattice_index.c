/* lattice_index.c — a resolved policy's rules by path (lattice_index.h).
 *
 * Each rule is filed under the one path string lattice_level_of() can only
 * match through: a grant or literal cap under its absolute path (it covers
 * that path and what is below), a glob cap under its literal head (a path
 * it matches, or an ancestor of one, starts with that head). Rules with no
 * absolute path under these roots (a session rule with no session root)
 * are filed nowhere: lattice_level_of() skips them too.
 */
#include "lattice_index.h"

#include <stdlib.h>
#include <string.h>

#include "glob.h"

typedef VEC(long) chain_t;

struct lattice_index {
    const resolved_t *r;
    const roots_t *roots;
    arena_t a;             /* the keys of the maps */
    resolved_t view;       /* r with only the candidates (grants, caps) */
    strmap_t grants, caps; /* anchor -> newest entry of a chain in next_g / next_c */
    chain_t next_g, next_c;
    strmap_t below;        /* path -> 1 + the highest grant level at or below it */
    VEC(bool) anchored;    /* anchored.v[n]: some rule is filed under a path of n bytes */
    buf_t walk;            /* scratch: the path asked about, cut at each ancestor in turn */
    const char **tail;     /* cap index -> the literal end of a glob cap ("/LITERAL"): a path
                              without it as a substring cannot match (NULL: no such shortcut) */
    VEC(size_t) gi;        /* scratch: the grant candidates' indices */
    VEC(size_t) cand;      /* scratch: candidate indices */
};

/* Files entry i under key in m, chained through next (newest first). */
static void file_under(lattice_index_t *ix, strmap_t *m, chain_t *next, const char *key, size_t i)
{
    size_t len = strlen(key);
    while (ix->anchored.n <= len) vec_push(&ix->anchored, false);
    ix->anchored.v[len] = true;
    long head = strmap_get(m, key);
    if (head < 0) strmap_put(m, arena_strdup(&ix->a, key), (long)i);
    else strmap_put(m, key, (long)i);
    while (next->n <= i) vec_push(next, -1L);
    next->v[i] = head;
}

/* Calls fn(ctx, a) for a = path and each of its ancestors, deepest first. */
static void each_ancestor(const char *path, void (*fn)(void *ctx, const char *a), void *ctx)
{
    buf_t b = BUF_INIT;
    buf_adds(&b, path);
    for (;;) {
        fn(ctx, buf_cstr(&b));
        char *slash = strrchr(b.p, '/');
        if (!slash || b.len <= 1) break;
        buf_truncate(&b, slash == b.p ? 1 : (size_t)(slash - b.p));
    }
    buf_free(&b);
}

typedef struct gather {
    VEC(size_t) *out;
    const strmap_t *m;
    const long *next;
    unsigned runs; /* anchors that gave entries */
} gather_t;

/* Appends the chain filed under a in rule order (a chain is newest first). */
static void gather_one(void *ctx, const char *a)
{
    gather_t *g = ctx;
    size_t from = g->out->n;
    for (long i = strmap_get(g->m, a); i >= 0; i = g->next[i]) vec_push(g->out, (size_t)i);
    if (g->out->n == from) return;
    g->runs++;
    for (size_t lo = from, hi = g->out->n - 1; lo < hi; lo++, hi--) {
        size_t t = g->out->v[lo];
        g->out->v[lo] = g->out->v[hi];
        g->out->v[hi] = t;
    }
}

typedef struct raise {
    lattice_index_t *ix;
    level_t level;
} raise_t;

static void raise_below(void *ctx, const char *a)
{
    raise_t *r = ctx;
    long old = strmap_get(&r->ix->below, a);
    if (old < 0) strmap_put(&r->ix->below, arena_strdup(&r->ix->a, a), (long)r->level + 1);
    else if (old < (long)r->level + 1) strmap_put(&r->ix->below, a, (long)r->level + 1);
}

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* The entries filed in m under path and its ancestors, in rule order (the
 * order lattice_level_of() reads them in, which breaks its ties), into
 * ix->cand. The ancestors are each_ancestor()'s, found walking back from
 * the end once; only those as long as some anchor are looked up: a path of
 * 2,000 components is not hashed 2,000 times. */
static void gather(lattice_index_t *ix, const strmap_t *m, const long *next, const char *path)
{
    ix->cand.n = 0;
    gather_t g = {(void *)&ix->cand, m, next, 0};
    buf_truncate(&ix->walk, 0);
    buf_adds(&ix->walk, path);
    const char *whole = buf_cstr(&ix->walk);
    char *p = ix->walk.p; /* NULL for "", which has no ancestor */
    for (size_t len = ix->walk.len;;) {
        if (len < ix->anchored.n && ix->anchored.v[len]) {
            if (len == ix->walk.len) {
                gather_one(&g, whole);
            } else {
                char c = p[len];
                p[len] = '\0';
                gather_one(&g, p);
                p[len] = c;
            }
        }
        if (len <= 1) break; /* "/" (or "", or one byte) */
        size_t k = len;
        while (k > 0 && p[k - 1] != '/') k--;
        if (k == 0) break;        /* no slash left */
        len = k == 1 ? 1 : k - 1; /* cut at the last slash; "/x" -> "/" */
    }
    /* one anchor's chain is in order already (the common case: the
     * "**" caps, all filed under "/") */
    if (g.runs > 1) qsort(ix->cand.v, ix->cand.n, sizeof *ix->cand.v, cmp_size);
}

/* The literal components that end a glob cap ("/.git/hooks" of the
 * git_hooks pattern, "/hooks" of its submodule form), or NULL. A path the
 * glob matches, or one below it, holds them as a substring: the [protect]
 * patterns and the "**" + "/NAME" entries are filed under "/", so every
 * path is their candidate, and a glob match each per question was most of
 * the time lint and diff spent. */
static const char *literal_tail(const char *glob)
{
    const char *w = NULL;
    for (const char *s = glob; *s; s++)
        if (*s == '*' || *s == '?' || *s == '\\') w = s;
    const char *t = w ? strchr(w, '/') : NULL;
    if (!t || !t[1]) return NULL;
    /* components as a normalised path spells them: none empty, "." or ".." */
    for (const char *c = t; *c; c = c + 1 + strcspn(c + 1, "/")) {
        size_t n = strcspn(c + 1, "/");
        if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.')) return NULL;
    }
    return t;
}

lattice_index_t *lattice_index_build(const resolved_t *r, const roots_t *roots)
{
    lattice_index_t *ix = xcalloc(1, sizeof *ix);
    ix->r = r;
    ix->roots = roots;
    ix->view = *r;
    ix->view.grants.v = xcalloc(r->grants.n + 1, sizeof *r->grants.v);
    ix->view.caps.v = xcalloc(r->caps.n + 1, sizeof *r->caps.v);
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        const char *abs = lattice_rule_abs(g, roots, &ix->a);
        if (!abs) continue;
        file_under(ix, &ix->grants, &ix->next_g, abs, i);
        raise_t rs = {ix, g->level};
        each_ancestor(abs, raise_below, &rs);
    }
    ix->tail = xcalloc(r->caps.n + 1, sizeof *ix->tail);
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        const char *abs = lattice_rule_abs(c, roots, &ix->a);
        if (!abs) continue;
        file_under(ix, &ix->caps, &ix->next_c, c->glob ? glob_literal_prefix(abs, &ix->a) : abs, i);
        if (c->glob) ix->tail[i] = literal_tail(abs);
    }
    return ix;
}

void lattice_index_free(lattice_index_t *ix)
{
    if (!ix) return;
    free(ix->view.grants.v);
    free(ix->view.caps.v);
    free(ix->tail);
    strmap_free(&ix->grants);
    strmap_free(&ix->caps);
    strmap_free(&ix->below);
    vec_free(&ix->next_g);
    vec_free(&ix->next_c);
    vec_free(&ix->gi);
    vec_free(&ix->cand);
    vec_free(&ix->anchored);
    buf_free(&ix->walk);
    arena_free(&ix->a);
    free(ix);
}

level_t lattice_index_level_of(lattice_index_t *ix, const char *path, verdict_t *why)
{
    const resolved_t *r = ix->r;
    gather(ix, &ix->grants, ix->next_g.v, path);
    ix->gi.n = 0;
    for (size_t i = 0; i < ix->cand.n; i++) {
        vec_push(&ix->gi, ix->cand.v[i]);
        ix->view.grants.v[i] = r->grants.v[ix->cand.v[i]];
    }
    ix->view.grants.n = ix->cand.n;
    gather(ix, &ix->caps, ix->next_c.v, path);
    size_t keep = 0;
    for (size_t i = 0; i < ix->cand.n; i++) {
        const char *tail = ix->tail[ix->cand.v[i]];
        if (tail && !strstr(path, tail)) continue;
        ix->cand.v[keep] = ix->cand.v[i];
        ix->view.caps.v[keep++] = r->caps.v[ix->cand.v[i]];
    }
    ix->cand.n = keep;
    ix->view.caps.n = keep;
    verdict_t v;
    level_t lvl = lattice_level_of(&ix->view, ix->roots, path, &v);
    /* point back into r: callers compare rules by address */
    if (v.grant) v.grant = &r->grants.v[ix->gi.v[v.grant - ix->view.grants.v]];
    for (unsigned i = 0; i < v.ncaps; i++) v.caps[i] = &r->caps.v[ix->cand.v[v.caps[i] - ix->view.caps.v]];
    if (why) *why = v;
    return lvl;
}

long lattice_index_level_below(const lattice_index_t *ix, const char *path)
{
    long v = strmap_get(&ix->below, path);
    return v < 0 ? -1 : v - 1;
}
