/* buf.c — allocation wrappers, growable buffer, vector growth and arena.
 * See buf.h for the allocation-failure policy (abort, stated once). */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "drun: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xasprintf(const char *fmt, ...)
{
    buf_t b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return buf_detach(&b, NULL);
}

/* ---- buffer ------------------------------------------------------------- */

void buf_reserve(buf_t *b, size_t extra)
{
    if (extra > SIZE_MAX / 2 - b->len) oom(extra);
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

void buf_add(buf_t *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void buf_addc_slow(buf_t *b, char c) { buf_add(b, &c, 1); }

void buf_adds(buf_t *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_vprintf(buf_t *b, const char *fmt, va_list ap)
{
    /* one pass when the result fits the free space (the common case), a
     * second one only after growing */
    buf_reserve(b, 64);
    va_list ap2;
    va_copy(ap2, ap);
    size_t avail = b->cap - b->len;
    int n = vsnprintf(b->p + b->len, avail, fmt, ap2);
    va_end(ap2);
    if (n < 0) { /* only on an invalid format, which -Wformat rules out */
        b->p[b->len] = '\0';
        return;
    }
    if ((size_t)n >= avail) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    }
    b->len += (size_t)n;
}

void buf_addu(buf_t *b, unsigned long long v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do tmp[--i] = (char)('0' + v % 10);
    while ((v /= 10));
    buf_add(b, tmp + i, sizeof tmp - i);
}

void buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void buf_truncate(buf_t *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        b->p[len] = '\0';
    }
}

const char *buf_cstr(buf_t *b) { return b->p ? b->p : ""; }

char *buf_detach(buf_t *b, size_t *len)
{
    if (!b->p) buf_reserve(b, 0), b->p[0] = '\0';
    char *p = b->p;
    if (len) *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

void buf_free(buf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- vector ------------------------------------------------------------- */

void vec_grow_(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem) oom(need * elem);
        c *= 2;
    }
    *v = xrealloc(*v, c * elem);
    *cap = c;
}

/* ---- string map ------------------------------------------------------------ */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static size_t slot_of(const strmap_t *m, const char *key)
{
    size_t mask = m->cap - 1, i = (size_t)str_hash(key) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
    return i;
}

long strmap_get(const strmap_t *m, const char *key)
{
    if (!m->cap) return -1;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

long strmap_put(strmap_t *m, const char *key, long val)
{
    if ((m->n + 1) * 4 >= m->cap * 3) {
        strmap_t big = {xcalloc(m->cap ? m->cap * 2 : 16, sizeof *big.keys), NULL,
                        m->cap ? m->cap * 2 : 16, 0};
        big.vals = xcalloc(big.cap, sizeof *big.vals);
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = slot_of(&big, m->keys[i]);
                big.keys[j] = m->keys[i];
                big.vals[j] = m->vals[i];
                big.n++;
            }
        strmap_free(m);
        *m = big;
    }
    size_t i = slot_of(m, key);
    if (m->keys[i]) {
        long old = m->vals[i];
        m->vals[i] = val;
        return old;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return -1;
}

void strmap_free(strmap_t *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}

/* ---- arena -------------------------------------------------------------- */

struct arena_chunk {
    arena_chunk *next;
    size_t size;                       /* bytes in data */
    _Alignas(16) unsigned char data[]; /* the memory handed out */
};

#define ARENA_CHUNK (64 * 1024 - sizeof(arena_chunk))

void *arena_alloc(arena_t *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    if (!a->head || a->head->size - a->used < n) {
        /* Large requests get a chunk of their own, so one big string does not
         * waste the rest of a regular chunk. */
        size_t size = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
        arena_chunk *c = xmalloc(sizeof *c + size);
        c->size = size;
        if (size == n && a->head) {
            /* keep filling the current chunk: slot the big one behind it */
            c->next = a->head->next;
            a->head->next = c;
            a->total += n;
            return c->data;
        }
        c->next = a->head;
        a->head = c;
        a->used = 0;
    }
    void *p = a->head->data + a->used;
    a->used += n;
    a->total += n;
    return p;
}

void *arena_zalloc(arena_t *a, size_t n)
{
    void *p = arena_alloc(a, n);
    memset(p, 0, n);
    return p;
}

char *arena_strndup(arena_t *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(arena_t *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void arena_free(arena_t *a)
{
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used = a->total = 0;
}
