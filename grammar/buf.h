/* buf.h — the one growable byte buffer, vector and arena used everywhere.
 *
 * Allocation-failure policy, stated once: every allocator here (and xmalloc &
 * co.) aborts the process with a message when memory runs out. Callers never
 * check for NULL after them. The library never calls exit() otherwise.
 */
#ifndef DRUN_BUF_H
#define DRUN_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- allocation ------------------------------------------------------- */

void *xmalloc(size_t n);                 /* never returns NULL */
void *xcalloc(size_t n, size_t size);    /* zeroed, overflow-checked */
void *xrealloc(void *p, size_t n);       /* never returns NULL */
char *xstrdup(const char *s);            /* caller frees */
char *xstrndup(const char *s, size_t n); /* copies n bytes + NUL; caller frees */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- byte buffer ------------------------------------------------------- */

/* A buffer always holds a NUL after its last byte once anything was added,
 * so p can be used as a C string when the content has no NUL of its own. */
typedef struct buf {
    char *p;    /* content, owned; NULL until the first append */
    size_t len; /* bytes used, not counting the trailing NUL */
    size_t cap; /* bytes allocated */
} buf_t;

#define BUF_INIT {NULL, 0, 0}

void buf_reserve(buf_t *b, size_t extra); /* room for extra more bytes + NUL */
void buf_add(buf_t *b, const void *p, size_t n);
void buf_addc_slow(buf_t *b, char c);
/* One byte; the common case stays inline (it is called per character). */
static inline void buf_addc(buf_t *b, char c)
{
    if (b->len + 1 < b->cap) {
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
    } else {
        buf_addc_slow(b, c);
    }
}
void buf_adds(buf_t *b, const char *s);
void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(buf_t *b, const char *fmt, va_list ap);
void buf_addu(buf_t *b, unsigned long long v); /* decimal, without printf */
void buf_truncate(buf_t *b, size_t len);       /* keep the first len bytes */
const char *buf_cstr(buf_t *b);                /* "" for an empty buffer; never NULL */
char *buf_detach(buf_t *b, size_t *len);       /* hands p to the caller (never NULL); b is reset */
void buf_free(buf_t *b);

/* ---- vector ------------------------------------------------------------ */

/* A typed vector: VEC(int) v = {0}; vec_push(&v, 3); v.v[0], v.n.
 * Elements move on growth: never keep a pointer into v.v across a push. */
#define VEC(T)         \
    struct {           \
        T *v;          \
        size_t n, cap; \
    }
/* A vector of owned C strings (an argv being built, paths to remove later):
 * the holder frees each element, then the vector. */
typedef VEC(char *) strvec_t;
#define vec_grow(vp, extra) \
    vec_grow_((void **)&(vp)->v, &(vp)->cap, (vp)->n + (extra), sizeof(*(vp)->v))
#define vec_push(vp, x) \
    (vec_grow((vp), 1), (vp)->v[(vp)->n++] = (x))
#define vec_free(vp)             \
    do {                         \
        free((vp)->v);           \
        (vp)->v = NULL;          \
        (vp)->n = (vp)->cap = 0; \
    } while (0)

void vec_grow_(void **v, size_t *cap, size_t need, size_t elem);

/* ---- string map ---------------------------------------------------------- */

/* An open-addressing hash map from C strings to longs. Keys are borrowed:
 * the caller keeps them alive (an arena is the usual owner). */
typedef struct strmap {
    const char **keys; /* NULL = empty slot */
    long *vals;
    size_t cap, n;     /* cap is 0 or a power of two */
} strmap_t;

#define STRMAP_INIT {NULL, NULL, 0, 0}

/* Value of key, or -1 when absent. */
long strmap_get(const strmap_t *m, const char *key);
/* Sets key to val; returns the previous value, or -1 if the key is new. */
long strmap_put(strmap_t *m, const char *key, long val);
void strmap_free(strmap_t *m);

/* ---- arena ------------------------------------------------------------- */

/* A bump allocator for one-shot structures (a parsed document, a policy IR):
 * many small allocations, freed all at once. Memory is 16-byte aligned and
 * not zeroed unless arena_zalloc is used. */
typedef struct arena_chunk arena_chunk;
typedef struct arena {
    arena_chunk *head; /* newest chunk first */
    size_t used;       /* bytes used in head */
    size_t total;      /* bytes handed out, for statistics */
} arena_t;

#define ARENA_INIT {NULL, 0, 0}

void *arena_alloc(arena_t *a, size_t n);
void *arena_zalloc(arena_t *a, size_t n);
char *arena_strndup(arena_t *a, const char *s, size_t n); /* copies n bytes + NUL */
char *arena_strdup(arena_t *a, const char *s);
void arena_free(arena_t *a);

#endif
