/* test_diff_unified.c — the unified diff writer of diff.c.
 *
 * Exact output for small cases (hunk headers as GNU diff -u writes them),
 * then a property test: for random pairs of texts, applying the diff to the
 * first text with the hunk reader below gives the second, and the number of
 * changed lines is the minimum (the LCS, computed here independently). */
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "tap.h"

static char *udiff(const char *a, const char *b)
{
    buf_t out = BUF_INIT;
    diff_unified("a", a, strlen(a), "b", b, strlen(b), &out);
    return buf_detach(&out, NULL);
}

/* ---- applying a unified diff (the inverse, for the property test) ----------------------------------- */

typedef struct lines {
    char **v;
    size_t n;
} lines_t;

static lines_t split(const char *s)
{
    lines_t l = {NULL, 0};
    size_t cap = 0;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (l.n == cap) l.v = xrealloc(l.v, (cap = cap * 2 + 8) * sizeof *l.v);
        l.v[l.n++] = xstrndup(s, n);
        s += n + (nl != NULL);
    }
    return l;
}

static void lines_free(lines_t *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

/* Applies patch to a; NULL when the patch does not apply. Counts changed lines. */
static char *apply(const char *a, const char *patch, size_t *changed)
{
    lines_t src = split(a), p = split(patch);
    buf_t out = BUF_INIT;
    size_t at = 0, i = 2; /* skip the --- and +++ lines */
    bool ok = p.n >= 2 || p.n == 0;
    *changed = 0;
    while (ok && i < p.n) {
        unsigned long os = 0, oc = 1, ns = 0, nc = 1;
        const char *h = p.v[i++];
        if (strncmp(h, "@@ -", 4) != 0) {
            ok = false;
            break;
        }
        char *e;
        os = strtoul(h + 4, &e, 10);
        if (*e == ',') oc = strtoul(e + 1, &e, 10);
        if (strncmp(e, " +", 2) != 0) {
            ok = false;
            break;
        }
        ns = strtoul(e + 2, &e, 10);
        if (*e == ',') nc = strtoul(e + 1, &e, 10);
        size_t start = oc ? os - 1 : os; /* 0-based index of the first old line */
        if (start < at || start > src.n) {
            ok = false;
            break;
        }
        for (; at < start; at++) buf_printf(&out, "%s\n", src.v[at]);
        size_t seen_o = 0, seen_n = 0;
        while (i < p.n && p.v[i][0] != '@') {
            const char *l = p.v[i++];
            if (l[0] == ' ' || l[0] == '-') {
                if (at >= src.n || strcmp(src.v[at], l + 1) != 0) {
                    ok = false;
                    break;
                }
                at++, seen_o++;
            }
            if (l[0] == ' ' || l[0] == '+') buf_printf(&out, "%s\n", l + 1), seen_n++;
            if (l[0] != ' ') (*changed)++;
        }
        (void)ns;
        if (seen_o != oc || seen_n != nc) ok = false;
    }
    for (; ok && at < src.n; at++) buf_printf(&out, "%s\n", src.v[at]);
    lines_free(&src);
    lines_free(&p);
    if (!ok) {
        buf_free(&out);
        return NULL;
    }
    if (!out.p) return xstrdup("");
    return buf_detach(&out, NULL);
}

/* Length of the longest common subsequence of the lines of a and b. */
static size_t lcs(const char *a, const char *b)
{
    lines_t x = split(a), y = split(b);
    size_t *row = xcalloc((y.n + 1) * 2, sizeof *row), *prev = row, *cur = row + y.n + 1;
    for (size_t i = 1; i <= x.n; i++) {
        for (size_t j = 1; j <= y.n; j++)
            cur[j] = strcmp(x.v[i - 1], y.v[j - 1]) == 0 ? prev[j - 1] + 1 : (prev[j] > cur[j - 1] ? prev[j] : cur[j - 1]);
        size_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t r = prev[y.n];
    free(row);
    lines_free(&x);
    lines_free(&y);
    return r;
}

static size_t nlines(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static unsigned rng_state = 12345;
static unsigned rnd(void) { return rng_state = rng_state * 1103515245u + 12345u, (rng_state >> 16) & 0x7fff; }

static char *random_text(size_t lines, unsigned alphabet)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < lines; i++) buf_printf(&b, "line %u\n", rnd() % alphabet);
    return b.p ? buf_detach(&b, NULL) : xstrdup("");
}

int main(void)
{
    char *d;
    {
        buf_t e = BUF_INIT;
        CHECK(!diff_unified("a", "x\n", 2, "b", "x\n", 2, &e) && e.len == 0, "equal texts: no diff");
    }
    d = udiff("a\nb\nc\n", "a\nB\nc\n");
    CHECK_STR(d, "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "one changed line, with context");
    free(d);
    d = udiff("", "x\n");
    CHECK_STR(d, "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n", "from empty: -0,0 +1");
    free(d);
    d = udiff("x\n", "");
    CHECK_STR(d, "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n", "to empty: -1 +0,0");
    free(d);
    d = udiff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n",
              "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\nY\n15\n16\n");
    CHECK_STR(d, "--- a\n+++ b\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n@@ -11,6 +11,6 @@\n 11\n 12\n 13\n-14\n+Y\n 15\n 16\n",
              "changes more than 6 lines apart: two hunks");
    free(d);
    d = udiff("1\n2\n3\n4\n5\n6\n7\n8\n", "1\nX\n3\n4\n5\n6\n7\nY\n");
    CHECK_STR(d, "--- a\n+++ b\n@@ -1,8 +1,8 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n-8\n+Y\n", "changes 5 lines apart: one hunk");
    free(d);
    d = udiff("a\nb", "a\nb\n");
    CHECK_STR(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
              "a missing final newline is a difference, marked as diff(1) does");
    free(d);
    d = udiff("a\n", "b\n");
    CHECK_STR(d, "--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n", "one line replaced: -1 +1");
    free(d);

    /* property: the diff applies and is minimal */
    int bad_apply = 0, bad_min = 0;
    for (int round = 0; round < 400; round++) {
        char *a = random_text(rnd() % 40, 2 + rnd() % 8), *b = random_text(rnd() % 40, 2 + rnd() % 8);
        buf_t out = BUF_INIT;
        diff_unified("a", a, strlen(a), "b", b, strlen(b), &out);
        size_t changed;
        char *got = apply(a, out.p ? out.p : "", &changed);
        if (!got || strcmp(got, b) != 0) bad_apply++;
        else if (changed != nlines(a) + nlines(b) - 2 * lcs(a, b)) bad_min++;
        free(got);
        buf_free(&out);
        free(a);
        free(b);
    }
    CHECK_INT(bad_apply, 0, "400 random pairs: the diff turns the old text into the new one");
    CHECK_INT(bad_min, 0, "400 random pairs: the diff changes the fewest lines (the LCS)");
    /* a large, very different pair still applies (past the trace limit it is a replacement) */
    char *a = random_text(5000, 3), *b = random_text(5000, 3);
    buf_t out = BUF_INIT;
    diff_unified("a", a, strlen(a), "b", b, strlen(b), &out);
    size_t changed;
    char *got = apply(a, out.p ? out.p : "", &changed);
    CHECK(got && strcmp(got, b) == 0, "5000-line texts: the diff applies");
    free(got);
    buf_free(&out);
    free(a);
    free(b);
    return tap_done();
}
