/* toml_build.c — the tree builder behind the grammar actions.
 *
 * Tables keep their entries in source order plus a hash index once they grow,
 * so lookups stay O(1) on huge tables. This file owns TOML's definition
 * rules: which [header], [[header]], dotted key or inline table may create,
 * extend or reopen which table, and the nesting limit.
 */
#include <string.h>

#include "toml_internal.h"

/* ---- nodes -------------------------------------------------------------------- */

/* Nodes are not zeroed: each constructor sets what its type uses (the
 * parse touches every byte it allocates once, and no more). */
static toml_value *new_value(toml_parser *ctx, toml_type type, span_t sp)
{
    toml_value *v = arena_alloc(&ctx->doc->arena, sizeof *v);
    v->type = (uint8_t)type;
    v->flags = 0;
    v->height = 0;
    v->n = 0;
    v->span = sp;
    return v;
}

static toml_value *new_table(toml_parser *ctx, span_t sp, unsigned flags)
{
    toml_value *t = new_value(ctx, TOML_TABLE, sp);
    t->flags = (uint8_t)flags;
    t->height = 1;
    t->n = t->cap = 0;
    t->u.e = NULL;
    return t;
}

static toml_value *new_array(toml_parser *ctx, span_t sp, unsigned flags)
{
    toml_value *a = new_value(ctx, TOML_ARRAY, sp);
    a->flags = (uint8_t)flags;
    a->height = 1;
    a->n = a->cap = 0;
    a->u.a = NULL;
    return a;
}

/* Part i of key k, on the parser's key stack. */
static const toml_keypart *part(const toml_parser *ctx, toml_keypath k, uint32_t i)
{
    return &ctx->keys.v[k.first + i];
}

/* Appends v to an array of tables, doubling its slots when full. The old
 * block stays in the arena: doubling keeps that waste under the size in use. */
static void array_add(toml_parser *ctx, toml_value *arr, toml_value *v)
{
    if (arr->n == arr->cap) {
        uint32_t cap = arr->cap ? arr->cap * 2 : 4;
        toml_value **a = arena_alloc(&ctx->doc->arena, cap * sizeof *a);
        if (arr->n) memcpy(a, arr->u.a, arr->n * sizeof *a);
        arr->u.a = a;
        arr->cap = cap;
    }
    arr->u.a[arr->n++] = v;
}

/* ---- table index ------------------------------------------------------------------ */

/* FNV-1a with a final mix, seeded with the table's own address (which ASLR
 * varies from run to run): keys that all collide, and so make loading a big
 * table quadratic, cannot simply be precomputed into a hostile file. */
uint32_t toml_key_hash(const toml_value *tab, const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u ^ (uint64_t)(uintptr_t)tab;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    return (uint32_t)h;
}

long toml_tab_find(const toml_value *t, const char *k, size_t n)
{
    const toml_entry *e = t->u.e;
    const uint32_t *idx = toml_tab_index(t);
    if (!idx) {
        for (uint32_t i = 0; i < t->n; i++)
            if (e[i].klen == n && memcmp(e[i].key, k, n) == 0) return (long)i;
        return -1;
    }
    uint32_t h = toml_key_hash(t, k, n), mask = 2 * t->cap - 1;
    for (uint32_t i = h & mask, slot; (slot = idx[i]) != 0; i = (i + 1) & mask) {
        const toml_entry *x = &e[slot - 1];
        if (x->hash == h && x->klen == n && memcmp(x->key, k, n) == 0) return (long)(slot - 1);
    }
    return -1;
}

/* Puts entry number i into the index of t. */
static void index_put(toml_value *t, uint32_t i)
{
    uint32_t *idx = toml_tab_index(t), mask = 2 * t->cap - 1, j = t->u.e[i].hash & mask;
    while (idx[j]) j = (j + 1) & mask;
    idx[j] = i + 1;
}

/* Makes room for one more entry: a full table moves to a block twice the
 * size, entries first and then (past TOML_SMALL_TABLE) an index of twice as
 * many slots, rebuilt there, so the index is never more than half full. The
 * old block stays in the arena; doubling keeps that waste under the size in
 * use and the rebuilds linear overall. */
static void tab_grow(toml_parser *ctx, toml_value *t)
{
    if (t->n < t->cap) return;
    uint32_t cap = t->cap ? t->cap * 2 : 4;
    size_t bytes = cap * sizeof(toml_entry) + (cap > TOML_SMALL_TABLE ? 2 * cap * sizeof(uint32_t) : 0);
    toml_entry *e = arena_alloc(&ctx->doc->arena, bytes);
    if (t->n) memcpy(e, t->u.e, t->n * sizeof *e);
    t->u.e = e;
    t->cap = cap;
    uint32_t *idx = toml_tab_index(t);
    if (!idx) return;
    memset(idx, 0, 2 * cap * sizeof *idx);
    for (uint32_t i = 0; i < t->n; i++) index_put(t, i);
}

static void tab_add(toml_parser *ctx, toml_value *t, const toml_keypart *k, toml_value *v)
{
    tab_grow(ctx, t);
    toml_entry *e = &t->u.e[t->n];
    e->key = arena_strndup(&ctx->doc->arena, k->s, k->len);
    e->klen = k->len;
    e->hash = toml_key_hash(t, k->s, k->len);
    e->kspan = k->span;
    e->val = v;
    t->n++;
    if (toml_tab_index(t)) index_put(t, t->n - 1);
}

static toml_entry *tab_get(toml_value *t, const toml_keypart *k)
{
    long i = toml_tab_find(t, k->s, k->len);
    return i < 0 ? NULL : &t->u.e[i];
}

/* ---- messages ------------------------------------------------------------------- */

static const char *type_phrase(const toml_value *v)
{
    switch (v->type) {
    case TOML_TABLE: return v->flags & TF_INLINE ? "an inline table" : "a table";
    case TOML_ARRAY: return v->flags & AF_AOT ? "an array of tables" : "an array";
    case TOML_STRING: return "a string";
    case TOML_INTEGER: return "an integer";
    case TOML_FLOAT: return "a float";
    case TOML_BOOL: return "a boolean";
    default: return "a date-time";
    }
}

static bool is_bare(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-'))
            return false;
    return n > 0;
}

/* The first `upto` parts of k as TOML would write them: a.b."c d" */
static const char *path_name(const toml_parser *ctx, toml_keypath k, uint32_t upto, char *buf, size_t n)
{
    buf_t b = BUF_INIT;
    for (uint32_t i = 0; i < upto && b.len < n; i++) {
        char shown[96];
        const toml_keypart *p = part(ctx, k, i);
        bool bare = is_bare(p->s, p->len);
        if (i) buf_addc(&b, '.');
        if (!bare) buf_addc(&b, '"');
        buf_adds(&b, tp_show(p->s, p->len, shown, sizeof shown));
        if (!bare) buf_addc(&b, '"');
    }
    snprintf(buf, n, "%s", buf_cstr(&b));
    buf_free(&b);
    return buf;
}

static bool check_depth(toml_parser *ctx, uint64_t level, span_t sp)
{
    if (level <= TOML_MAX_DEPTH) return true;
    tp_error(ctx, sp, "nesting deeper than %d levels", TOML_MAX_DEPTH);
    return false;
}

/* Part i of key k names an existing value e that cannot hold more keys. */
static void not_a_table(toml_parser *ctx, toml_keypath k, uint32_t i, const toml_entry *e)
{
    char name[128], at[32];
    tp_error(ctx, part(ctx, k, i)->span, "cannot use key '%s' as a table: it is already %s (defined at %s)",
             path_name(ctx, k, i + 1, name, sizeof name), type_phrase(e->val),
             tp_pos(ctx, e->kspan.start, at));
}

static void inline_closed(toml_parser *ctx, toml_keypath k, uint32_t i, const toml_value *t)
{
    char name[128], at[32];
    tp_error(ctx, part(ctx, k, i)->span,
             "cannot add to inline table '%s' (defined at %s): an inline table is complete as written",
             path_name(ctx, k, i + 1, name, sizeof name), tp_pos(ctx, t->span.start, at));
}

/* ---- dotted keys -------------------------------------------------------------------- */

/* Walks (and creates) the tables named by all but the last part of k,
 * starting at t, as a key/value line or inline-table entry does. Dotted keys
 * may create tables and extend the ones they created, but never reopen a
 * table that a header defined, an inline table, or an array. */
static toml_value *walk_dotted(toml_parser *ctx, toml_value *t, toml_keypath k)
{
    for (uint32_t i = 0; i + 1 < k.n; i++) {
        toml_entry *e = tab_get(t, part(ctx, k, i));
        if (!e) {
            toml_value *x = new_table(ctx, part(ctx, k, i)->span, TF_DOTTED);
            tab_add(ctx, t, part(ctx, k, i), x);
            t = x;
            continue;
        }
        toml_value *x = e->val;
        if (x->type != TOML_TABLE) {
            not_a_table(ctx, k, i, e);
            return NULL;
        }
        if (x->flags & TF_INLINE) {
            inline_closed(ctx, k, i, x);
            return NULL;
        }
        if (x->flags & TF_HEADER) {
            char name[128], hdr[128], at[32];
            tp_error(ctx, part(ctx, k, i)->span,
                     "cannot add to table '%s' with a dotted key: it was defined by its header %s at %s",
                     path_name(ctx, k, i + 1, name, sizeof name),
                     tp_show(ctx->src->text + x->span.start, x->span.end - x->span.start, hdr, sizeof hdr),
                     tp_pos(ctx, x->span.start, at));
            return NULL;
        }
        /* A table so far only implied by a [a.b.c] header becomes the dotted
         * key's own: a later [a.b] header may no longer define it. */
        if (x->flags & TF_IMPLICIT) {
            x->flags = TF_DOTTED;
            x->span = part(ctx, k, i)->span;
        }
        t = x;
    }
    return t;
}

/* Adds the last part of k to t, which must not have it yet. */
static bool put_new(toml_parser *ctx, toml_value *t, toml_keypath k, toml_value *v)
{
    const toml_keypart *last = part(ctx, k, k.n - 1);
    toml_entry *e = tab_get(t, last);
    if (e) {
        char name[128], at[32];
        tp_error(ctx, last->span, "duplicate key '%s' (first defined at %s)",
                 path_name(ctx, k, k.n, name, sizeof name), tp_pos(ctx, e->kspan.start, at));
        return false;
    }
    tab_add(ctx, t, last, v);
    return true;
}

void tp_keyval(toml_parser *ctx, toml_keypath k, toml_value *v)
{
    if (ctx->failed) return;
    if (!check_depth(ctx, (uint64_t)ctx->cur_depth + k.n - 1 + v->height, part(ctx, k, 0)->span)) return;
    toml_value *t = walk_dotted(ctx, ctx->cur, k);
    if (t && put_new(ctx, t, k, v)) ctx->keys.n = k.first;
}

/* ---- headers ------------------------------------------------------------------------ */

/* Walks (and creates, as implicit tables) all but the last part of a header
 * key from the root. An array of tables stands for its last element. *level
 * gets the nesting level of the table reached. */
static toml_value *walk_header(toml_parser *ctx, toml_keypath k, span_t hs, uint32_t *level)
{
    toml_value *t = ctx->doc->root;
    *level = 0;
    for (uint32_t i = 0; i + 1 < k.n; i++) {
        toml_entry *e = tab_get(t, part(ctx, k, i));
        if (!e) {
            toml_value *x = new_table(ctx, hs, TF_IMPLICIT);
            tab_add(ctx, t, part(ctx, k, i), x);
            t = x;
            *level += 1;
            continue;
        }
        toml_value *x = e->val;
        if (x->type == TOML_ARRAY && (x->flags & AF_AOT)) {
            t = x->u.a[x->n - 1];
            *level += 2;
        } else if (x->type == TOML_TABLE && !(x->flags & TF_INLINE)) {
            t = x;
            *level += 1;
        } else {
            if (x->type == TOML_TABLE) inline_closed(ctx, k, i, x);
            else not_a_table(ctx, k, i, e);
            return NULL;
        }
    }
    return check_depth(ctx, *level + 1, hs) ? t : NULL;
}

/* Why [name] cannot (re)define the existing table x. */
static void table_conflict(toml_parser *ctx, toml_keypath k, const toml_entry *e)
{
    char name[128], at[32];
    const toml_value *x = e->val;
    path_name(ctx, k, k.n, name, sizeof name);
    if (x->type == TOML_ARRAY && (x->flags & AF_AOT))
        tp_error(ctx, part(ctx, k, k.n - 1)->span, "table [%s] is already defined as an array of tables at %s",
                 name, tp_pos(ctx, x->span.start, at));
    else if (x->type != TOML_TABLE)
        not_a_table(ctx, k, k.n - 1, e);
    else if (x->flags & TF_INLINE)
        tp_error(ctx, part(ctx, k, k.n - 1)->span, "table [%s] is already defined as an inline table at %s",
                 name, tp_pos(ctx, x->span.start, at));
    else if (x->flags & TF_DOTTED)
        tp_error(ctx, part(ctx, k, k.n - 1)->span, "table [%s] is already defined by a dotted key at %s",
                 name, tp_pos(ctx, x->span.start, at));
    else
        tp_error(ctx, part(ctx, k, k.n - 1)->span, "table [%s] is defined twice (first at %s)", name,
                 tp_pos(ctx, x->span.start, at));
}

void tp_table(toml_parser *ctx, toml_keypath k, span_t open, span_t close)
{
    if (ctx->failed) return;
    span_t hs = {open.start, close.end};
    uint32_t level;
    toml_value *t = walk_header(ctx, k, hs, &level);
    if (!t) return;
    toml_entry *e = tab_get(t, part(ctx, k, k.n - 1));
    toml_value *x;
    if (!e) {
        x = new_table(ctx, hs, TF_HEADER);
        tab_add(ctx, t, part(ctx, k, k.n - 1), x);
    } else if (e->val->type == TOML_TABLE && e->val->flags == TF_IMPLICIT) {
        x = e->val; /* implied by an earlier [a.b.c]: defined here, once */
        x->flags = TF_HEADER;
        x->span = hs;
    } else {
        table_conflict(ctx, k, e);
        return;
    }
    ctx->cur = x;
    ctx->cur_depth = level + 1;
    ctx->keys.n = k.first;
}

void tp_array_table(toml_parser *ctx, toml_keypath k, span_t open, span_t close)
{
    if (ctx->failed) return;
    span_t hs = {open.start, close.end};
    uint32_t level;
    toml_value *t = walk_header(ctx, k, hs, &level);
    if (!t || !check_depth(ctx, (uint64_t)level + 2, hs)) return;
    const toml_keypart *last = part(ctx, k, k.n - 1);
    toml_entry *e = tab_get(t, last);
    toml_value *arr;
    if (!e) {
        arr = new_array(ctx, hs, AF_AOT);
        tab_add(ctx, t, last, arr);
    } else if (e->val->type == TOML_ARRAY && (e->val->flags & AF_AOT)) {
        arr = e->val;
    } else {
        char name[128], at[32];
        path_name(ctx, k, k.n, name, sizeof name);
        if (e->val->type == TOML_ARRAY)
            tp_error(ctx, last->span,
                     "cannot append to array '%s' with [[%s]]: it is a static array (defined at %s)",
                     name, name, tp_pos(ctx, e->kspan.start, at));
        else if (e->val->type == TOML_TABLE)
            tp_error(ctx, last->span,
                     "array of tables [[%s]] conflicts with table '%s' (defined at %s)", name, name,
                     tp_pos(ctx, e->val->span.start, at));
        else
            not_a_table(ctx, k, k.n - 1, e);
        return;
    }
    toml_value *elem = new_table(ctx, hs, TF_HEADER);
    array_add(ctx, arr, elem);
    ctx->cur = elem;
    ctx->cur_depth = level + 2;
    ctx->keys.n = k.first;
}

/* ---- keys ---------------------------------------------------------------------------- */

void tp_key_part(toml_parser *ctx, int kind, span_t tok)
{
    if (ctx->failed) return;
    toml_keypart p = {ctx->src->text + tok.start, tok.end - tok.start, tok};
    /* A bare key stays in the source: it is copied only if it becomes a new
     * entry. A quoted one is decoded first. */
    if (kind != TK_BARE) {
        char *s;
        size_t n;
        if (!tp_decode_string(ctx, kind, tok, &s, &n)) return;
        p.s = s;
        p.len = (uint32_t)n;
    }
    vec_push(&ctx->keys, p);
}

toml_keypath tp_key_first(toml_parser *ctx)
{
    return (toml_keypath){ctx->failed ? 0 : (uint32_t)ctx->keys.n - 1, 1};
}

void tp_key_next(toml_parser *ctx, toml_keypath *k)
{
    if (!ctx->failed) k->n++;
}

/* ---- arrays and inline tables --------------------------------------------------------- */

uint32_t tp_array_first(toml_parser *ctx, toml_value *v)
{
    uint32_t first = (uint32_t)ctx->elems.n;
    tp_array_next(ctx, v);
    return first;
}

void tp_array_next(toml_parser *ctx, toml_value *v)
{
    if (!ctx->failed) vec_push(&ctx->elems, v);
}

/* Moves the elements from first up off the stack into an array of exactly
 * their number (UINT32_MAX: none). */
toml_value *tp_array_close(toml_parser *ctx, uint32_t first, span_t open, span_t close)
{
    if (ctx->failed) return NULL;
    toml_value *arr = new_array(ctx, (span_t){open.start, close.end}, 0);
    if (first == UINT32_MAX) return arr;
    uint32_t n = (uint32_t)ctx->elems.n - first;
    arr->u.a = arena_alloc(&ctx->doc->arena, n * sizeof *arr->u.a);
    memcpy(arr->u.a, ctx->elems.v + first, n * sizeof *arr->u.a);
    arr->n = arr->cap = n;
    ctx->elems.n = first;
    for (uint32_t i = 0; i < n; i++)
        if (arr->u.a[i]->height + 1 > arr->height) arr->height = (uint16_t)(arr->u.a[i]->height + 1);
    check_depth(ctx, arr->height, arr->span);
    return arr;
}

toml_value *tp_inline_put(toml_parser *ctx, toml_value *tab, toml_keypath k, toml_value *v)
{
    if (ctx->failed) return NULL;
    if (!tab) tab = new_table(ctx, part(ctx, k, 0)->span, 0);
    toml_value *t = walk_dotted(ctx, tab, k);
    if (!t || !put_new(ctx, t, k, v)) return tab;
    if (k.n + v->height > tab->height) tab->height = (uint16_t)(k.n + v->height);
    check_depth(ctx, tab->height, part(ctx, k, 0)->span);
    ctx->keys.n = k.first;
    return tab;
}

toml_value *tp_inline_close(toml_parser *ctx, toml_value *tab, span_t open, span_t close)
{
    if (ctx->failed) return NULL;
    if (!tab) tab = new_table(ctx, open, 0);
    tab->flags |= TF_INLINE;
    tab->span = (span_t){open.start, close.end};
    return tab;
}

toml_value *tp_inline_trailing(toml_parser *ctx, toml_value *tab, span_t open, span_t comma,
                               span_t close)
{
    if (ctx->failed) return NULL;
    if (ctx->ver == TOML_1_0) {
        tp_error(ctx, comma, "trailing comma in an inline table (allowed from TOML 1.1)");
        return NULL;
    }
    return tp_inline_close(ctx, tab, open, close);
}

/* ---- scalars ---------------------------------------------------------------------------- */

toml_value *tp_string(toml_parser *ctx, int kind, span_t tok)
{
    char *s;
    size_t n;
    if (ctx->failed || !tp_decode_string(ctx, kind, tok, &s, &n)) return NULL;
    toml_value *v = new_value(ctx, TOML_STRING, tok);
    v->u.s = s;
    v->n = (uint32_t)n;
    return v;
}

toml_value *tp_integer(toml_parser *ctx, span_t tok)
{
    int64_t i;
    if (ctx->failed || !tp_decode_integer(ctx, tok, &i)) return NULL;
    toml_value *v = new_value(ctx, TOML_INTEGER, tok);
    v->u.i = i;
    return v;
}

toml_value *tp_float(toml_parser *ctx, span_t tok)
{
    double f;
    if (ctx->failed || !tp_decode_float(ctx, tok, &f)) return NULL;
    toml_value *v = new_value(ctx, TOML_FLOAT, tok);
    v->u.f = f;
    return v;
}

toml_value *tp_bool(toml_parser *ctx, span_t tok)
{
    if (ctx->failed) return NULL;
    toml_value *v = new_value(ctx, TOML_BOOL, tok);
    v->u.b = ctx->src->text[tok.start] == 't';
    return v;
}

toml_value *tp_datetime(toml_parser *ctx, span_t tok)
{
    toml_datetime dt;
    int type;
    if (ctx->failed || (type = tp_decode_datetime(ctx, tok, &dt)) < 0) return NULL;
    toml_value *v = new_value(ctx, (toml_type)type, tok);
    v->u.dt = arena_alloc(&ctx->doc->arena, sizeof dt);
    *v->u.dt = dt;
    return v;
}
