/* diff.c — the semantic policy diff and the unified line diff (diff.h).
 *
 * Access changes come from the lattices, not the text: every path either
 * policy names (grants, literal caps), every glob cap instantiated below
 * every grant, and the session dirs are probed in both policies on both
 * targets. A changed probe whose nearest probed ancestor changed the same
 * way is implied by it and not repeated; an unchanged probe below a
 * reported one is printed as its exception. So "allow_read ~/src" moving to
 * "allow_read ~" reads "grants read of ~", not a list of edited lines.
 */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "bwrap.h"
#include "compile.h"
#include "domain.h"
#include "explain.h"
#include "glob.h"
#include "jsonw.h"
#include "keys.h"
#include "lattice.h"
#include "lattice_index.h"
#include "path.h"
#include "sbpl.h"

/* ---- the line diff (Myers 1986, greedy forward pass with a trace) ------------------------------------------- */

typedef struct line {
    const char *p;
    size_t n;
} line_t;

typedef VEC(line_t) lines_t;

static void split_lines(const char *s, size_t len, lines_t *out)
{
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - s - i) : len - i;
        line_t l = {s + i, n};
        vec_push(out, l);
        i += n + 1;
    }
}

static bool line_eq(line_t a, line_t b) { return a.n == b.n && memcmp(a.p, b.p, a.n) == 0; }

typedef enum {
    OP_EQ,
    OP_DEL,
    OP_INS
} op_kind_t;

typedef struct edit {
    op_kind_t op;
    size_t ai, bi; /* line index in a (EQ, DEL) and in b (EQ, INS) */
} edit_t;

typedef VEC(edit_t) edits_t;

/* Past this many differences the script is "delete all, insert all": the
 * trace would grow quadratically, and such a diff is read as a replacement. */
#define DIFF_MAX_D 2000

/* The shortest edit script from a to b, in order. */
static void myers(const lines_t *a, const lines_t *b, edits_t *out)
{
    long n = (long)a->n, m = (long)b->n, max = n + m;
    long lim = max < DIFF_MAX_D ? max : DIFF_MAX_D;
    long off = lim + 1;
    long *v = xcalloc((size_t)(2 * lim + 3), sizeof *v);
    VEC(long *) trace = {0};
    long found = -1;
    for (long d = 0; d <= lim && found < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && line_eq(a->v[x], b->v[y])) x++, y++;
            v[off + k] = x;
            if (x >= n && y >= m) found = d;
        }
        /* only V[-d..d] is ever read back: the trace stays O(D^2), not O(D(N+M)) */
        long *snap = xmalloc((size_t)(2 * d + 1) * sizeof *snap);
        memcpy(snap, v + off - d, (size_t)(2 * d + 1) * sizeof *snap);
        vec_push(&trace, snap);
    }
    edits_t rev = {0};
    if (found < 0) {
        for (long i = m; i-- > 0;) vec_push(&rev, ((edit_t){OP_INS, 0, (size_t)i}));
        for (long i = n; i-- > 0;) vec_push(&rev, ((edit_t){OP_DEL, (size_t)i, 0}));
    } else {
        long x = n, y = m;
        for (long d = found; d > 0; d--) {
            const long *pv = trace.v[d - 1]; /* V_{d-1}[k] is pv[k + d - 1] */
            long k = x - y, b0 = d - 1;
            long pk = (k == -d || (k != d && pv[k - 1 + b0] < pv[k + 1 + b0])) ? k + 1 : k - 1;
            long px = pv[pk + b0], py = px - pk;
            while (x > px && y > py) x--, y--, vec_push(&rev, ((edit_t){OP_EQ, (size_t)x, (size_t)y}));
            if (pk == k + 1) vec_push(&rev, ((edit_t){OP_INS, 0, (size_t)py}));
            else vec_push(&rev, ((edit_t){OP_DEL, (size_t)px, 0}));
            x = px, y = py;
        }
        while (x > 0 && y > 0) x--, y--, vec_push(&rev, ((edit_t){OP_EQ, (size_t)x, (size_t)y}));
    }
    for (size_t i = rev.n; i-- > 0;) vec_push(out, rev.v[i]);
    vec_free(&rev);
    for (size_t i = 0; i < trace.n; i++) free(trace.v[i]);
    vec_free(&trace);
    free(v);
}

#define CONTEXT 3

static void hunk_range(buf_t *out, char sign, size_t start, size_t count)
{
    /* GNU: "-5" for one line, "-5,3" for more, "-4,0" (the line before) for none */
    if (count == 1) buf_printf(out, "%c%zu", sign, start + 1);
    else buf_printf(out, "%c%zu,%zu", sign, count ? start + 1 : start, count);
}

static void emit_line(buf_t *out, char sign, line_t l, bool last_no_nl)
{
    buf_addc(out, sign);
    buf_add(out, l.p, l.n);
    buf_addc(out, '\n');
    if (last_no_nl) buf_adds(out, "\\ No newline at end of file\n");
}

bool diff_unified(const char *name_a, const char *a, size_t alen, const char *name_b, const char *b, size_t blen,
                  buf_t *out)
{
    if (alen == blen && (alen == 0 || memcmp(a, b, alen) == 0)) return false;
    lines_t la = {0}, lb = {0};
    split_lines(a, alen, &la);
    split_lines(b, blen, &lb);
    bool a_nl = alen == 0 || a[alen - 1] == '\n', b_nl = blen == 0 || b[blen - 1] == '\n';
    edits_t e = {0};
    myers(&la, &lb, &e);
    /* a line without its newline differs from the same line with one */
    for (size_t i = 0; i < e.n; i++)
        if (e.v[i].op == OP_EQ && ((e.v[i].ai == la.n - 1 && !a_nl) != (e.v[i].bi == lb.n - 1 && !b_nl))) {
            edit_t del = {OP_DEL, e.v[i].ai, 0}, ins = {OP_INS, 0, e.v[i].bi};
            e.v[i] = del;
            vec_grow(&e, 1);
            memmove(&e.v[i + 2], &e.v[i + 1], (e.n - i - 1) * sizeof *e.v);
            e.v[i + 1] = ins;
            e.n++;
            i++;
        }
    buf_printf(out, "--- %s\n+++ %s\n", name_a, name_b);
    size_t i = 0;
    while (i < e.n) {
        while (i < e.n && e.v[i].op == OP_EQ) i++;
        if (i >= e.n) break;
        size_t start = i > CONTEXT ? i - CONTEXT : 0, k = i, last;
        for (;;) { /* changes closer than 2 * CONTEXT equal lines share a hunk */
            while (k < e.n && e.v[k].op != OP_EQ) k++;
            last = k;
            size_t eq = k;
            while (eq < e.n && e.v[eq].op == OP_EQ) eq++;
            if (eq < e.n && eq - k <= 2 * CONTEXT) {
                k = eq;
                continue;
            }
            break;
        }
        size_t end = last + CONTEXT < e.n ? last + CONTEXT : e.n;
        size_t as = 0, ac = 0, bs = 0, bc = 0;
        bool a_set = false, b_set = false;
        for (size_t q = start; q < end; q++) {
            const edit_t *x = &e.v[q];
            if (x->op != OP_INS) {
                if (!a_set) as = x->ai, a_set = true;
                ac++;
            }
            if (x->op != OP_DEL) {
                if (!b_set) bs = x->bi, b_set = true;
                bc++;
            }
        }
        /* a side with no lines starts after the last line before the hunk */
        if (!a_set) {
            as = 0;
            for (size_t q = start; q-- > 0;)
                if (e.v[q].op != OP_INS) {
                    as = e.v[q].ai + 1;
                    break;
                }
        }
        if (!b_set) {
            bs = 0;
            for (size_t q = start; q-- > 0;)
                if (e.v[q].op != OP_DEL) {
                    bs = e.v[q].bi + 1;
                    break;
                }
        }
        buf_adds(out, "@@ ");
        hunk_range(out, '-', as, ac);
        buf_addc(out, ' ');
        hunk_range(out, '+', bs, bc);
        buf_adds(out, " @@\n");
        for (size_t q = start; q < end; q++) {
            const edit_t *x = &e.v[q];
            if (x->op == OP_EQ) emit_line(out, ' ', la.v[x->ai], x->ai == la.n - 1 && !a_nl);
            else if (x->op == OP_DEL) emit_line(out, '-', la.v[x->ai], x->ai == la.n - 1 && !a_nl);
            else emit_line(out, '+', lb.v[x->bi], x->bi == lb.n - 1 && !b_nl);
        }
        i = end;
    }
    vec_free(&e);
    vec_free(&la);
    vec_free(&lb);
    return true;
}

/* ---- access: probes over both lattices ------------------------------------------------------------------------ */

/* Synthetic session roots: outside every home, shown as ${WORKSPACE}. */
#define DIFF_WORKSPACE "/drun-diff/workspace"
#define DIFF_SCRATCH "/drun-diff/scratch"

typedef struct probe {
    const char *abs;   /* the concrete path on the target */
    const char *shown; /* "~/src", "${WORKSPACE}"; for a glob instance the glob, as written */
    const char *in;    /* glob instance: where it was instantiated ("~/src"), else NULL */
    level_t from, to;  /* old and new level */
    bool same_cap;     /* glob instance of a cap both policies have */
} probe_t;

typedef VEC(probe_t) probes_t;

/* One reported access change (merged over targets and glob instances). */
typedef struct change {
    const char *shown;
    level_t from, to;
    bool on[2];               /* on which targets */
    VEC(const char *) in;     /* glob: the places, in order */
    VEC(const char *) except; /* "~/.ssh (none)": unchanged paths below it */
} change_t;

typedef VEC(change_t) changes_t;

typedef struct dctx {
    const policy_t *pol[2]; /* old, new */
    facts_t *facts[2];      /* by target */
    bool own_facts[2];
    resolved_t *res[2][2];  /* [target][old/new] */
    roots_t roots;
    arena_t a;
} dctx_t;

static void add_probe(dctx_t *d, probes_t *v, strmap_t *seen, const char *abs, const char *shown, const char *in)
{
    if (strmap_put(seen, abs, (long)v->n) >= 0) return;
    probe_t p = {abs, shown, in, LVL_NONE, LVL_NONE, false};
    vec_push(v, p);
    (void)d;
}

/* A concrete path that the glob (an absolute pattern) matches: every
 * wildcard made an 'x', every "**" component dropped, escapes removed. */
static const char *glob_sample(const char *pattern, arena_t *a)
{
    buf_t b = BUF_INIT;
    for (const char *s = pattern; *s;) {
        while (*s == '/') s++;
        const char *st = s;
        while (*s && *s != '/') s++;
        if (s == st) break;
        if (s - st == 2 && st[0] == '*' && st[1] == '*') continue;
        buf_addc(&b, '/');
        for (const char *q = st; q < s; q++) {
            if (*q == '\\' && q + 1 < s && (q[1] == '*' || q[1] == '?')) buf_addc(&b, *++q);
            else if (*q == '*' || *q == '?') buf_addc(&b, 'x');
            else buf_addc(&b, *q);
        }
    }
    if (!b.len) buf_addc(&b, '/');
    const char *r = arena_strdup(a, buf_cstr(&b));
    buf_free(&b);
    return r;
}

static const char *show(dctx_t *d, target_t t, const char *abs)
{
    return explain_show_path(d->res[t][1], &d->roots, abs, &d->a);
}

/* Every path worth comparing on target t. */
static void collect_probes(dctx_t *d, target_t t, probes_t *v)
{
    strmap_t seen = STRMAP_INIT;
    for (int w = 0; w < 2; w++) {
        const resolved_t *r = d->res[t][w];
        for (size_t i = 0; i < r->grants.n; i++) {
            const char *abs = lattice_rule_abs(&r->grants.v[i], &d->roots, &d->a);
            add_probe(d, v, &seen, abs, show(d, t, abs), NULL);
        }
        for (size_t i = 0; i < r->caps.n; i++) {
            const rrule_t *c = &r->caps.v[i];
            const char *abs = lattice_rule_abs(c, &d->roots, &d->a);
            if (!c->glob) {
                add_probe(d, v, &seen, abs, show(d, t, abs), NULL);
                continue;
            }
            if (!c->anywhere) {
                const char *head = glob_literal_prefix(abs, &d->a);
                size_t hl = glob_literal_prefix_len(abs);
                buf_t sh = BUF_INIT;
                buf_printf(&sh, "%s%s", show(d, t, head), abs + hl);
                add_probe(d, v, &seen, glob_sample(abs, &d->a), arena_strdup(&d->a, buf_cstr(&sh)), NULL);
                buf_free(&sh);
                continue;
            }
            /* "**" + "/T": below every granted place of either policy */
            bool both = false;
            const resolved_t *other = d->res[t][1 - w];
            for (size_t k = 0; k < other->caps.n && !both; k++)
                both = other->caps.v[k].glob && other->caps.v[k].level == c->level && strcmp(other->caps.v[k].path, c->path) == 0;
            for (int w2 = 0; w2 < 2; w2++)
                for (size_t k = 0; k < d->res[t][w2]->grants.n; k++) {
                    const rrule_t *gr = &d->res[t][w2]->grants.v[k];
                    const char *g = lattice_rule_abs(gr, &d->roots, &d->a);
                    /* the built-in read set is summed up: it is the same in both policies */
                    bool sys = gr->rule->kind == RK_SYSTEM || gr->rule->kind == RK_PATH_DIR;
                    const char *inst = path_join(g, glob_sample(c->path, &d->a) + 1, &d->a);
                    buf_t key = BUF_INIT;
                    buf_printf(&key, "%s\x01%s", inst, c->path);
                    if (strmap_put(&seen, arena_strdup(&d->a, buf_cstr(&key)), 1) < 0) {
                        probe_t p = {inst, c->path + 1, sys ? "the system directories" : show(d, t, g), LVL_NONE,
                                     LVL_NONE, both};
                        vec_push(v, p);
                    }
                    buf_free(&key);
                }
        }
    }
    strmap_free(&seen);
}

static int cmp_probe(const void *x, const void *y)
{
    const probe_t *a = x, *b = y;
    int c = strcmp(a->abs, b->abs);
    return c ? c : strcmp(a->shown, b->shown);
}

/* The nearest probe strictly above p (a literal probe, not a glob one). */
static long nearest_above(dctx_t *d, const probes_t *v, const strmap_t *lit, const probe_t *p)
{
    const char *s = p->abs;
    while ((s = strcmp(s, "/") ? (strrchr(s, '/') == s ? "/" : arena_strndup(&d->a, s, (size_t)(strrchr(s, '/') - s))) : NULL)) {
        long i = strmap_get(lit, s);
        if (i >= 0 && &v->v[i] != p) return i;
    }
    return -1;
}

static size_t find_change(changes_t *cs, const char *shown, level_t from, level_t to)
{
    for (size_t i = 0; i < cs->n; i++)
        if (cs->v[i].from == from && cs->v[i].to == to && strcmp(cs->v[i].shown, shown) == 0) return i;
    change_t c = {shown, from, to, {false, false}, {0}, {0}};
    vec_push(cs, c);
    return cs->n - 1;
}

static void push_unique(void *vec, const char *s)
{
    VEC(const char *) *v = vec;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], s) == 0) return;
    vec_push(v, s);
}

static const char *level_word(level_t l) { return l == LVL_NONE ? "hidden" : (l == LVL_READ ? "read-only" : "writable"); }

static void add_except(dctx_t *d, change_t *c, const probe_t *q)
{
    buf_t b = BUF_INIT;
    buf_printf(&b, "%s (%s)", q->shown, level_word(q->to));
    push_unique(&c->except, arena_strdup(&d->a, buf_cstr(&b)));
    buf_free(&b);
}

/* Probes in path order, so an ancestor is always seen before what is below
 * it. owner[i] is the reported change that covers probe i (or -1): a change
 * below it that goes the same way to the same level is implied; one that
 * goes the same way to another level, or a path that keeps another level,
 * is printed as that change's exception; anything else is its own change. */
static void access_target(dctx_t *d, target_t t, changes_t *cs)
{
    probes_t v = {0};
    collect_probes(d, t, &v);
    if (v.n) qsort(v.v, v.n, sizeof *v.v, cmp_probe);
    strmap_t lit = STRMAP_INIT;
    /* the probes come from the rules: lattice_level_of() on each would make
     * diff quadratic in the number of rules; the index gives its answers */
    lattice_index_t *from = lattice_index_build(d->res[t][0], &d->roots);
    lattice_index_t *to = lattice_index_build(d->res[t][1], &d->roots);
    for (size_t i = 0; i < v.n; i++) {
        v.v[i].from = lattice_index_level_of(from, v.v[i].abs, NULL);
        v.v[i].to = lattice_index_level_of(to, v.v[i].abs, NULL);
        if (!v.v[i].in) strmap_put(&lit, v.v[i].abs, (long)i);
    }
    lattice_index_free(from);
    lattice_index_free(to);
    long *owner = xcalloc(v.n + 1, sizeof *owner);
    for (size_t i = 0; i < v.n; i++) {
        probe_t *p = &v.v[i];
        owner[i] = -1;
        long up = nearest_above(d, &v, &lit, p);
        long own = up >= 0 ? owner[up] : -1;
        change_t *c = own >= 0 ? &cs->v[own] : NULL;
        if (p->from == p->to) {
            if (c && !p->in && p->to != c->to) add_except(d, c, p);
            continue;
        }
        bool same_way = c && (c->to > c->from) == (p->to > p->from);
        if (same_way && c->to == p->to) {
            owner[i] = own; /* implied: it goes where its ancestor goes */
            continue;
        }
        /* less than the headline: an exception to it; more: news of its own */
        if (same_way && !p->in && (c->to > c->from ? p->to < c->to : p->to > c->to)) {
            add_except(d, c, p);
            owner[i] = own;
            continue;
        }
        /* a cap both policies have, applied inside a tree whose access
         * changed: that change is the news, the cap is as before */
        if (p->same_cap && up >= 0 && v.v[up].from != v.v[up].to) continue;
        size_t k = find_change(cs, p->shown, p->from, p->to);
        cs->v[k].on[t] = true;
        if (p->in) push_unique(&cs->v[k].in, p->in);
        else owner[i] = (long)k;
    }
    free(owner);
    strmap_free(&lit);
    vec_free(&v);
}

static const char *change_words(level_t from, level_t to)
{
    if (from == LVL_NONE) return to == LVL_WRITE ? "grants write to" : "grants read of";
    if (from == LVL_READ) return to == LVL_WRITE ? "grants write to" : "revokes read of";
    return to == LVL_READ ? "revokes write to" : "revokes read and write of";
}

static const char *change_tail(level_t from, level_t to)
{
    if (from == LVL_READ && to == LVL_WRITE) return " (was read-only)";
    if (from == LVL_WRITE && to == LVL_READ) return " (now read-only)";
    return "";
}

static void change_text(const change_t *c, buf_t *out)
{
    buf_printf(out, "%s %s%s", change_words(c->from, c->to), c->shown, change_tail(c->from, c->to));
    if (c->in.n) {
        buf_adds(out, " below ");
        for (size_t i = 0; i < c->in.n; i++) buf_printf(out, "%s%s", i ? ", " : "", c->in.v[i]);
    }
    if (c->except.n) {
        buf_adds(out, ", except ");
        for (size_t i = 0; i < c->except.n; i++) buf_printf(out, "%s%s", i ? ", " : "", c->except.v[i]);
    }
    if (c->on[0] != c->on[1]) buf_printf(out, " (%s only)", c->on[TARGET_LINUX] ? "linux" : "macos");
}

/* ---- everything else: domains, commands, settings, environment ------------------------------------------------- */

typedef VEC(const char *) strs_t;

typedef struct listdiff {
    strs_t added, removed;
} listdiff_t;

static void list_diff(const char *const *a, size_t na, const char *const *b, size_t nb, listdiff_t *out)
{
    for (size_t i = 0; i < nb; i++) {
        bool found = false;
        for (size_t k = 0; k < na && !found; k++) found = strcmp(a[k], b[i]) == 0;
        if (!found) push_unique(&out->added, b[i]);
    }
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t k = 0; k < nb && !found; k++) found = strcmp(b[k], a[i]) == 0;
        if (!found) push_unique(&out->removed, a[i]);
    }
}

static void listdiff_free(listdiff_t *l)
{
    vec_free(&l->added);
    vec_free(&l->removed);
}

/* Whitespace-collapsed strings of a str_entry vector (command entries). */
static void entry_strs(dctx_t *d, const str_entry_t *v, size_t n, strs_t *out, bool squeeze)
{
    for (size_t i = 0; i < n; i++) {
        if (!squeeze) {
            vec_push(out, v[i].s);
            continue;
        }
        buf_t b = BUF_INIT;
        for (const char *p = v[i].s; *p;) {
            p += strspn(p, " \t");
            if (!*p) break;
            size_t w = strcspn(p, " \t");
            if (b.len) buf_addc(&b, ' ');
            buf_add(&b, p, w);
            p += w;
        }
        vec_push(out, arena_strdup(&d->a, buf_cstr(&b)));
        buf_free(&b);
    }
}

static void rule_strs(dctx_t *d, const domain_rule_t *v, size_t n, strs_t *out)
{
    for (size_t i = 0; i < n; i++) {
        const domain_rule_t *r = &v[i];
        if (r->kind != DOMAIN_SUBDOMAINS) {
            vec_push(out, r->pattern);
            continue;
        }
        buf_t b = BUF_INIT;
        buf_printf(&b, "*.%s", r->pattern);
        vec_push(out, arena_strdup(&d->a, buf_cstr(&b)));
        buf_free(&b);
    }
}

static void domain_strs(dctx_t *d, const policy_t *p, strs_t *out) { rule_strs(d, p->domains.v, p->domains.n, out); }

/* command_domains, and the ports as ":80" entries in the same list */
static void command_strs(dctx_t *d, const policy_t *p, strs_t *out)
{
    rule_strs(d, p->command_domains.v, p->command_domains.n, out);
    for (size_t i = 0; p->command_domains.n && i < p->command_ports.n; i++) {
        char port[16];
        snprintf(port, sizeof port, "port %d", p->command_ports.v[i]);
        vec_push(out, arena_strdup(&d->a, port));
    }
}

typedef struct semantic {
    changes_t access;
    listdiff_t domains, commands, deny, allow, passthrough, env_allowlist, env_set_names;
    strs_t env_set_changed; /* names whose value changed */
    VEC(setting_id_t) settings;
    strs_t unenforced;      /* drun strings that changed */
} semantic_t;

static bool semantic_empty(const semantic_t *s)
{
    const listdiff_t *l[] = {&s->domains, &s->commands, &s->deny, &s->allow,
                             &s->passthrough, &s->env_allowlist, &s->env_set_names};
    for (size_t i = 0; i < sizeof l / sizeof *l; i++)
        if (l[i]->added.n || l[i]->removed.n) return false;
    return !s->access.n && !s->env_set_changed.n && !s->settings.n && !s->unenforced.n;
}

static const char *env_value(const policy_t *p, const char *name)
{
    for (size_t i = 0; i < p->env_set.n; i++)
        if (strcmp(p->env_set.v[i].name, name) == 0) return p->env_set.v[i].value;
    return NULL;
}

static bool strs_equal(const str_entry_t *a, size_t na, const str_entry_t *b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].s, b[i].s) != 0) return false;
    return true;
}

static void semantic_build(dctx_t *d, semantic_t *s)
{
    const policy_t *a = d->pol[0], *b = d->pol[1];
    for (int t = 0; t < 2; t++) access_target(d, (target_t)t, &s->access);
    /* paths first, then glob patterns; each in the order found (a stable partition) */
    changes_t sorted = {0};
    for (int glob = 0; glob < 2; glob++)
        for (size_t i = 0; i < s->access.n; i++)
            if ((s->access.v[i].in.n > 0) == glob) vec_push(&sorted, s->access.v[i]);
    vec_free(&s->access);
    s->access = sorted;
    strs_t x = {0}, y = {0};
#define LISTDIFF(out, fill_a, fill_b)       \
    do {                                    \
        x.n = y.n = 0;                      \
        fill_a;                             \
        fill_b;                             \
        list_diff(x.v, x.n, y.v, y.n, out); \
    } while (0)
    LISTDIFF(&s->domains, domain_strs(d, a, &x), domain_strs(d, b, &y));
    LISTDIFF(&s->commands, command_strs(d, a, &x), command_strs(d, b, &y));
    LISTDIFF(&s->deny, entry_strs(d, a->cmd_deny.v, a->cmd_deny.n, &x, true),
             entry_strs(d, b->cmd_deny.v, b->cmd_deny.n, &y, true));
    LISTDIFF(&s->allow, entry_strs(d, a->cmd_allow.v, a->cmd_allow.n, &x, true),
             entry_strs(d, b->cmd_allow.v, b->cmd_allow.n, &y, true));
    LISTDIFF(&s->passthrough, entry_strs(d, a->env_passthrough.v, a->env_passthrough.n, &x, false),
             entry_strs(d, b->env_passthrough.v, b->env_passthrough.n, &y, false));
    LISTDIFF(&s->env_allowlist, entry_strs(d, a->env_allowlist.v, a->env_allowlist.n, &x, false),
             entry_strs(d, b->env_allowlist.v, b->env_allowlist.n, &y, false));
    x.n = y.n = 0;
    for (size_t i = 0; i < a->env_set.n; i++) vec_push(&x, a->env_set.v[i].name);
    for (size_t i = 0; i < b->env_set.n; i++) vec_push(&y, b->env_set.v[i].name);
    list_diff(x.v, x.n, y.v, y.n, &s->env_set_names);
#undef LISTDIFF
    vec_free(&x);
    vec_free(&y);
    for (size_t i = 0; i < b->env_set.n; i++) {
        const char *old = env_value(a, b->env_set.v[i].name);
        if (old && strcmp(old, b->env_set.v[i].value) != 0) vec_push(&s->env_set_changed, b->env_set.v[i].name);
    }
    for (int i = 0; i < S_COUNT; i++)
        if (a->set[i].v != b->set[i].v) vec_push(&s->settings, (setting_id_t)i);
    if (!strs_equal(a->overlay_paths.v, a->overlay_paths.n, b->overlay_paths.v, b->overlay_paths.n))
        vec_push(&s->unenforced, "mount_overlay_paths");
    if (strcmp(a->export_root.s ? a->export_root.s : "", b->export_root.s ? b->export_root.s : ""))
        vec_push(&s->unenforced, "export_root");
    if (strcmp(a->snapshots_dir.s ? a->snapshots_dir.s : "", b->snapshots_dir.s ? b->snapshots_dir.s : ""))
        vec_push(&s->unenforced, "snapshots_dir");
}

static void semantic_free(semantic_t *s)
{
    for (size_t i = 0; i < s->access.n; i++) {
        vec_free(&s->access.v[i].in);
        vec_free(&s->access.v[i].except);
    }
    vec_free(&s->access);
    listdiff_t *l[] = {&s->domains, &s->commands, &s->deny, &s->allow,
                       &s->passthrough, &s->env_allowlist, &s->env_set_names};
    for (size_t i = 0; i < sizeof l / sizeof *l; i++) listdiff_free(l[i]);
    vec_free(&s->env_set_changed);
    vec_free(&s->settings);
    vec_free(&s->unenforced);
}

/* ---- rendering ------------------------------------------------------------------------------------------------------ */

static const char *qname(setting_id_t id, char *buf, size_t n)
{
    const setting_info_t *si = &policy_settings[id];
    snprintf(buf, n, "%s%s%s", si->table ? si->table : "", si->table ? "." : "", si->key);
    return buf;
}

static void setting_text(const policy_t *a, const policy_t *b, setting_id_t id, buf_t *out)
{
    const setting_info_t *si = &policy_settings[id];
    char q[96];
    qname(id, q, sizeof q);
    if (si->boolean) buf_printf(out, "turns %s %s: %s", b->set[id].v ? "on" : "off", q, si->doc);
    else buf_printf(out, "%s: %lld -> %lld%s%s", q, (long long)a->set[id].v, (long long)b->set[id].v,
                    *si->unit ? " " : "", si->unit);
    if (!si->enforced) buf_adds(out, " (not enforced by drun-mcp)");
}

static bool listdiff_any(const listdiff_t *l) { return l->added.n || l->removed.n; }

static void list_line(buf_t *out, const strs_t *v, const char *fmt, bool quote)
{
    if (!v->n) return;
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < v->n; i++) buf_printf(&b, "%s%s%s%s", i ? ", " : "", quote ? "\"" : "", v->v[i], quote ? "\"" : "");
    buf_adds(out, "  ");
    buf_printf(out, fmt, buf_cstr(&b));
    buf_addc(out, '\n');
    buf_free(&b);
}

static void semantic_text(dctx_t *d, const semantic_t *s, buf_t *out)
{
    const policy_t *a = d->pol[0], *b = d->pol[1];
    if (semantic_empty(s)) {
        buf_adds(out, "No change in what the sandbox may do.\n");
        return;
    }
    if (s->access.n) {
        buf_adds(out, "Access (both targets unless marked; ${WORKSPACE} and ${SCRATCH} are the session dirs)\n");
        for (size_t i = 0; i < s->access.n; i++) {
            buf_adds(out, "  ");
            change_text(&s->access.v[i], out);
            buf_addc(out, '\n');
        }
    }
    if (listdiff_any(&s->domains)) {
        buf_adds(out, "Network (session_fetch)\n");
        list_line(out, &s->domains.added, "session_fetch may now reach %s", false);
        list_line(out, &s->domains.removed, "session_fetch may no longer reach %s", false);
        if (!a->domains_present || !b->domains_present)
            buf_printf(out, "  (%s has no domain_allowlist: drun's three default hosts)\n",
                       !a->domains_present ? "the old policy" : "the new policy");
    }
    if (listdiff_any(&s->commands)) {
        buf_adds(out, "Network (sandboxed commands, through the proxy)\n");
        list_line(out, &s->commands.added, "commands may now reach %s", false);
        list_line(out, &s->commands.removed, "commands may no longer reach %s", false);
    }
    if (listdiff_any(&s->deny) || listdiff_any(&s->allow)) {
        buf_adds(out, "Commands (session_bash)\n");
        list_line(out, &s->deny.added, "denies %s", true);
        list_line(out, &s->deny.removed, "no longer denies %s", true);
        list_line(out, &s->allow.added, "allowlist adds %s", true);
        list_line(out, &s->allow.removed, "allowlist removes %s", true);
        if (a->cmd_allow.n && !b->cmd_allow.n) buf_adds(out, "  the allowlist is now empty: any command may start\n");
        if (!a->cmd_allow.n && b->cmd_allow.n) buf_adds(out, "  an allowlist now limits which commands may start\n");
    }
    if (s->settings.n) {
        buf_adds(out, "Limits and switches\n");
        for (size_t i = 0; i < s->settings.n; i++) {
            buf_adds(out, "  ");
            setting_text(a, b, s->settings.v[i], out);
            buf_addc(out, '\n');
        }
    }
    if (listdiff_any(&s->passthrough) || listdiff_any(&s->env_allowlist) || listdiff_any(&s->env_set_names) ||
        s->env_set_changed.n) {
        buf_adds(out, "Environment\n");
        list_line(out, &s->passthrough.added, "copies %s from the host", false);
        list_line(out, &s->passthrough.removed, "no longer copies %s from the host", false);
        for (size_t i = 0; i < s->env_set_names.added.n; i++)
            buf_printf(out, "  sets %s=\"%s\"\n", s->env_set_names.added.v[i], env_value(b, s->env_set_names.added.v[i]));
        for (size_t i = 0; i < s->env_set_names.removed.n; i++)
            buf_printf(out, "  no longer sets %s\n", s->env_set_names.removed.v[i]);
        for (size_t i = 0; i < s->env_set_changed.n; i++)
            buf_printf(out, "  sets %s=\"%s\" (was \"%s\")\n", s->env_set_changed.v[i],
                       env_value(b, s->env_set_changed.v[i]), env_value(a, s->env_set_changed.v[i]));
        list_line(out, &s->env_allowlist.added, "session_get_env may now reveal %s", false);
        list_line(out, &s->env_allowlist.removed, "session_get_env no longer reveals %s", false);
    }
    if (s->unenforced.n) {
        buf_adds(out, "drun compatibility (accepted, not enforced)\n");
        for (size_t i = 0; i < s->unenforced.n; i++) buf_printf(out, "  %s changed\n", s->unenforced.v[i]);
    }
}

static void strs_json(jw_t *j, const char *key, const strs_t *v)
{
    jw_key(j, key);
    jw_arr(j);
    for (size_t i = 0; i < v->n; i++) jw_str(j, v->v[i]);
    jw_end(j);
}

static void listdiff_json(jw_t *j, const char *key, const listdiff_t *l)
{
    jw_key(j, key);
    jw_obj(j);
    strs_json(j, "added", &l->added);
    strs_json(j, "removed", &l->removed);
    jw_end(j);
}

static void semantic_json(dctx_t *d, const semantic_t *s, jw_t *j)
{
    const policy_t *a = d->pol[0], *b = d->pol[1];
    jw_key(j, "access");
    jw_arr(j);
    for (size_t i = 0; i < s->access.n; i++) {
        const change_t *c = &s->access.v[i];
        buf_t t = BUF_INIT;
        change_text(c, &t);
        jw_obj(j);
        jw_key(j, "path");
        jw_str(j, c->shown);
        jw_key(j, "from");
        jw_str(j, policy_level_name(c->from));
        jw_key(j, "to");
        jw_str(j, policy_level_name(c->to));
        jw_key(j, "change");
        jw_str(j, c->to > c->from ? "grants" : "revokes");
        jw_key(j, "text");
        jw_str(j, buf_cstr(&t));
        jw_key(j, "targets");
        jw_arr(j);
        for (int k = 0; k < 2; k++)
            if (c->on[k]) jw_str(j, facts_target_name((target_t)k));
        jw_end(j);
        jw_key(j, "below");
        jw_arr(j);
        for (size_t k = 0; k < c->in.n; k++) jw_str(j, c->in.v[k]);
        jw_end(j);
        jw_key(j, "except");
        jw_arr(j);
        for (size_t k = 0; k < c->except.n; k++) jw_str(j, c->except.v[k]);
        jw_end(j);
        jw_end(j);
        buf_free(&t);
    }
    jw_end(j);
    listdiff_json(j, "domains", &s->domains);
    listdiff_json(j, "command_domains", &s->commands);
    jw_key(j, "commands");
    jw_obj(j);
    listdiff_json(j, "denylist", &s->deny);
    listdiff_json(j, "allowlist", &s->allow);
    jw_end(j);
    jw_key(j, "settings");
    jw_arr(j);
    for (size_t i = 0; i < s->settings.n; i++) {
        setting_id_t id = s->settings.v[i];
        char q[96];
        jw_obj(j);
        jw_key(j, "key");
        jw_str(j, qname(id, q, sizeof q));
        jw_key(j, "old");
        if (policy_settings[id].boolean) jw_bool(j, a->set[id].v != 0);
        else jw_int(j, a->set[id].v);
        jw_key(j, "new");
        if (policy_settings[id].boolean) jw_bool(j, b->set[id].v != 0);
        else jw_int(j, b->set[id].v);
        jw_key(j, "enforced");
        jw_bool(j, policy_settings[id].enforced);
        jw_end(j);
    }
    jw_end(j);
    jw_key(j, "env");
    jw_obj(j);
    listdiff_json(j, "passthrough", &s->passthrough);
    listdiff_json(j, "set", &s->env_set_names);
    strs_json(j, "set_changed", &s->env_set_changed);
    listdiff_json(j, "env_allowlist", &s->env_allowlist);
    jw_end(j);
    strs_json(j, "unenforced", &s->unenforced);
}

/* ---- the driver ----------------------------------------------------------------------------------------------------- */

/* Linux facts probed for new also learn the paths old names. */
static void probe_old_paths(dctx_t *d, facts_t *f)
{
    resolved_t *r = lattice_resolve(d->pol[0], f);
    VEC(const char *) paths = {0};
    for (size_t i = 0; i < r->grants.n; i++)
        if (r->grants.v[i].base == PB_ROOT) vec_push(&paths, arena_strdup(&d->a, r->grants.v[i].lexical));
    for (size_t i = 0; i < r->caps.n; i++)
        if (r->caps.v[i].base == PB_ROOT && !r->caps.v[i].glob) vec_push(&paths, arena_strdup(&d->a, r->caps.v[i].lexical));
    vec_push(&paths, (const char *)NULL);
    facts_probe_paths(f, paths.v);
    vec_free(&paths);
    lattice_free(r);
}

static bool dctx_init(dctx_t *d, const policy_t *old, const policy_t *new_, const diff_opts_t *o, char **err)
{
    d->pol[0] = old;
    d->pol[1] = new_;
    d->roots = (roots_t){DIFF_WORKSPACE, DIFF_SCRATCH, NULL, false};
    for (int t = 0; t < 2; t++) {
        if (o->facts[t]) {
            d->facts[t] = o->facts[t];
            continue;
        }
        if (!(d->facts[t] = compile_facts_for(new_, (target_t)t, o->facts_files, err))) return false;
        d->own_facts[t] = true;
        bool from_file = false;
        for (int i = 0; i < 2; i++) from_file = from_file || o->facts_files[i];
        if (t == TARGET_LINUX && !from_file) probe_old_paths(d, d->facts[t]);
    }
    for (int t = 0; t < 2; t++)
        for (int w = 0; w < 2; w++) d->res[t][w] = lattice_resolve(d->pol[w], d->facts[t]);
    return true;
}

static void dctx_free(dctx_t *d)
{
    for (int t = 0; t < 2; t++) {
        for (int w = 0; w < 2; w++) lattice_free(d->res[t][w]);
        if (d->own_facts[t]) facts_free(d->facts[t]);
    }
    arena_free(&d->a);
}

/* The artifacts of one side: policy.sb and bwrap.args (empty when they cannot be built). */
static void artifacts(dctx_t *d, int w, buf_t *sb, buf_t *args)
{
    const resolved_t *mac = d->res[TARGET_MACOS][w], *lin = d->res[TARGET_LINUX][w];
    diag_list_t dl = {0};
    sbpl_t *s;
    if (sbpl_build(mac, mac->facts, &dl, &s)) buf_add(sb, s->text.p ? s->text.p : "", s->text.len);
    else buf_adds(sb, ";; policy.sb could not be built\n");
    sbpl_free(s);
    diag_list_free(&dl);
    bwrap_t *b;
    if (bwrap_build(lin, lin->facts, &dl, &b)) bwrap_render(b, args);
    else buf_printf(args, "# bwrap.args could not be planned: %s\n", dl.n ? dl.v[0].msg : "");
    bwrap_free(b);
    diag_list_free(&dl);
}

int diff_policies(const policy_t *old, const policy_t *new_, const diff_opts_t *o, bool json, buf_t *out, char **err)
{
    *err = NULL;
    dctx_t d = {0};
    if (!dctx_init(&d, old, new_, o, err)) {
        dctx_free(&d);
        return -1;
    }
    semantic_t s = {0};
    semantic_build(&d, &s);
    static const char *const names[2] = {"policy.sb", "bwrap.args"};
    buf_t art[2][2] = {{BUF_INIT, BUF_INIT}, {BUF_INIT, BUF_INIT}}, udiff[2] = {BUF_INIT, BUF_INIT};
    for (int w = 0; w < 2; w++) artifacts(&d, w, &art[w][0], &art[w][1]);
    bool changed = !semantic_empty(&s);
    const char *na = o->name_a ? o->name_a : "old", *nb = o->name_b ? o->name_b : "new";
    for (int k = 0; k < 2; k++) {
        char *ha = xasprintf("%s (%s)", names[k], na), *hb = xasprintf("%s (%s)", names[k], nb);
        changed |= diff_unified(ha, art[0][k].p ? art[0][k].p : "", art[0][k].len, hb, art[1][k].p ? art[1][k].p : "",
                                art[1][k].len, &udiff[k]);
        free(ha);
        free(hb);
    }
    if (json) {
        jw_t j;
        jw_init(&j, out, true);
        jw_obj(&j);
        jw_key(&j, "old");
        jw_str(&j, na);
        jw_key(&j, "new");
        jw_str(&j, nb);
        jw_key(&j, "changed");
        jw_bool(&j, changed);
        semantic_json(&d, &s, &j);
        jw_key(&j, "artifacts");
        jw_obj(&j);
        for (int k = 0; k < 2; k++) {
            jw_key(&j, names[k]);
            if (udiff[k].len) jw_strn(&j, udiff[k].p, udiff[k].len);
            else jw_null(&j);
        }
        jw_end(&j);
        jw_end(&j);
        buf_addc(out, '\n');
    } else {
        buf_printf(out, "drun-policy diff %s -> %s\n\n", na, nb);
        semantic_text(&d, &s, out);
        for (int k = 0; k < 2; k++) {
            buf_addc(out, '\n');
            if (udiff[k].len) buf_add(out, udiff[k].p, udiff[k].len);
            else buf_printf(out, "%s: identical\n", names[k]);
        }
    }
    for (int k = 0; k < 2; k++) {
        buf_free(&udiff[k]);
        buf_free(&art[k][0]);
        buf_free(&art[k][1]);
    }
    semantic_free(&s);
    dctx_free(&d);
    return changed ? 1 : 0;
}
