/* test_base.c — the buffer, vector, arena, source map, renderer, suggestions,
 * and fsutil_mkdirs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "source.h"
#include "suggest.h"
#include "tap.h"

static void test_buf(void)
{
    buf_t b = BUF_INIT;
    CHECK_STR(buf_cstr(&b), "", "empty buffer reads as empty string");
    buf_adds(&b, "abc");
    buf_addc(&b, '\0');
    buf_printf(&b, "%d-%s", 42, "x");
    CHECK_INT(b.len, 8, "embedded NUL kept, length counts it");
    /* "\0" "42" must stay two literals, and on one line */
    /* clang-format off */
    CHECK(memcmp(b.p, "abc\0" "42-x", 8) == 0 && b.p[8] == '\0', "content and terminator");
    /* clang-format on */
    for (int i = 0; i < 100000; i++) buf_addc(&b, 'z');
    CHECK_INT(b.len, 100008, "growth to 100k");
    buf_truncate(&b, 3);
    CHECK_STR(b.p, "abc", "truncate");
    size_t n;
    char *p = buf_detach(&b, &n);
    CHECK(n == 3 && b.p == NULL && b.len == 0, "detach resets");
    free(p);
    p = buf_detach(&b, &n);
    CHECK(p && p[0] == '\0' && n == 0, "detach of empty gives an empty string");
    free(p);
}

static void test_vec_arena(void)
{
    VEC(int) v = {0};
    for (int i = 0; i < 1000; i++) vec_push(&v, i * 2);
    CHECK(v.n == 1000 && v.v[999] == 1998 && v.cap >= 1000, "vector push 1000");
    vec_free(&v);
    CHECK(v.v == NULL && v.n == 0, "vector free");

    arena_t a = ARENA_INIT;
    char *s = arena_strdup(&a, "hello");
    void *big = arena_alloc(&a, 1 << 20);
    memset(big, 1, 1 << 20);
    char *t = arena_strndup(&a, "world!!", 5);
    int aligned = 1;
    for (int i = 1; i < 2000; i++) {
        void *q = arena_alloc(&a, (size_t)i);
        if ((uintptr_t)q % 16) aligned = 0;
        memset(q, 0xAB, (size_t)i);
    }
    CHECK(strcmp(s, "hello") == 0 && strcmp(t, "world") == 0, "arena strings survive big and small allocations");
    CHECK(aligned, "arena is 16-byte aligned");
    arena_free(&a);
}

/* Every offset of a text whose lines cross the column table's blocks,
 * with characters of 1 to 4 bytes and stray continuation bytes, against a
 * scan from the line start (what source_pos did before the table). */
static void test_source_columns(void)
{
    buf_t b = BUF_INIT;
    static const char *const pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x80", " ", "\n"};
    unsigned seed = 7;
    for (int i = 0; i < 3000; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 16) % 40;
        buf_adds(&b, pieces[k < 6 ? k : (k < 39 ? 0 : 6)]);
    }
    buf_adds(&b, "\n");
    for (int i = 0; i < 700; i++) buf_adds(&b, i % 3 ? "x" : "\xc3\xa9"); /* one long line, no newline at the end */
    source_t *s = source_new("cols.toml", b.p, b.len);
    unsigned bad = 0, first = 0;
    unsigned line = 1, col = 1;
    for (uint32_t off = 0; off <= b.len; off++) {
        srcpos_t p = source_pos(s, off);
        if ((p.line != line || p.col != col) && !bad++) first = off;
        if (off == b.len) break;
        if (b.p[off] == '\n') line++, col = 1;
        else if (((unsigned char)b.p[off] & 0xC0) != 0x80) col++;
    }
    if (!CHECK(bad == 0, "source_pos agrees with a scan from the line start at every offset"))
        printf("#   %u offsets differ, the first at %u\n", bad, first);
    source_free(s);
    buf_free(&b);
}

static void test_source(void)
{
    const char *text = "a = 1\n\xc3\xa9t\xc3\xa9 = \"x\"\r\n\tz=3";
    source_t *s = source_new("t.toml", text, strlen(text));
    srcpos_t p = source_pos(s, 0);
    CHECK(p.line == 1 && p.col == 1, "offset 0 is 1:1");
    p = source_pos(s, 4);
    CHECK(p.line == 1 && p.col == 5, "1:5");
    /* "été" is 5 bytes; '=' is at byte 6+6 = 12 of the file, column 5 in characters */
    p = source_pos(s, 12);
    CHECK_INT(p.line, 2, "line of multibyte line");
    CHECK_INT(p.col, 5, "columns count characters, not bytes");
    size_t n;
    const char *l = source_line(s, 13, &n);
    CHECK(n == 11 && memcmp(l, "\xc3\xa9t\xc3\xa9 = \"x\"", n) == 0, "source_line strips CRLF");
    p = source_pos(s, (uint32_t)strlen(text));
    CHECK(p.line == 3 && p.col == 5, "end of file position");

    diag_list_t dl = {0};
    diag_add(&dl, SEV_ERROR, "unknown-key", s, (span_t){6, 11}, "unknown key '%s'", "\xc3\xa9t\xc3\xa9");
    diag_add(&dl, SEV_WARNING, NULL, s, (span_t){20, 21}, "tab-indented");
    buf_t out = BUF_INIT;
    diag_render_all(&out, &dl, false);
    CHECK_STR(buf_cstr(&out),
              "t.toml:2:1: error: unknown key '\xc3\xa9t\xc3\xa9' [unknown-key]\n"
              "    \xc3\xa9t\xc3\xa9 = \"x\"\n"
              "    ^~~\n"
              "t.toml:3:2: warning: tab-indented\n"
              "    \tz=3\n"
              "    \t^\n",
              "diagnostics render gcc-style with caret under characters");
    CHECK_INT(diag_count(&dl, SEV_ERROR), 1, "diag_count");
    buf_free(&out);
    diag_list_free(&dl);
    source_free(s);

    /* control characters in a source line cannot reach the terminal */
    source_t *h = source_new("h", "k = \"\x1b[31m\"", 12);
    diag_list_t d2 = {0};
    diag_add(&d2, SEV_ERROR, "x", h, (span_t){0, 1}, "m");
    buf_t o2 = BUF_INIT;
    diag_render_all(&o2, &d2, false);
    CHECK(strchr(buf_cstr(&o2), 0x1b) == NULL, "escape byte is not echoed");
    buf_free(&o2);
    diag_list_free(&d2);
    source_free(h);
}

static void test_suggest(void)
{
    const char *keys[] = {"domain_allowlist", "mount_allowlist", "env_allowlist", NULL};
    CHECK_STR(suggest("domain_alowlist", keys), "domain_allowlist", "one deletion");
    CHECK_STR(suggest("mount_allowlsit", keys), "mount_allowlist", "a swap counts once");
    CHECK(suggest("zzz", keys) == NULL, "nothing close: no suggestion");
    CHECK_INT(suggest_distance("kitten", "sitting"), 3, "classic distance");
}

static bool is_dir_mode(const char *p, mode_t mode)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == mode;
}

static void test_mkdirs(void)
{
    const char *b = getenv("B") ? getenv("B") : "build";
    char root[4096];
    snprintf(root, sizeof root, "%s/test-tmp", b);
    fsutil_mkdirs(root, 0700);
    snprintf(root, sizeof root, "%s/test-tmp/fsutil_mkdirs-XXXXXX", b);
    if (!mkdtemp(root)) {
        CHECK(0, "mkdtemp for the fsutil_mkdirs tests");
        return;
    }
    mode_t old = umask(022);
    char *deep = xasprintf("%s/a/b/c", root), *mid = xasprintf("%s/a", root);
    CHECK(fsutil_mkdirs(deep, 0750), "fsutil_mkdirs makes every missing component");
    CHECK(is_dir_mode(deep, 0750) && is_dir_mode(mid, 0750), "with the mode asked (umask 022)");
    CHECK(fsutil_mkdirs(deep, 0700) && is_dir_mode(deep, 0750), "an existing directory is success, its mode left alone");
    char *slashes = xasprintf("%s//x///y/", root), *y = xasprintf("%s/x/y", root);
    CHECK(fsutil_mkdirs(slashes, 0700) && is_dir_mode(y, 0700), "repeated and trailing slashes");
    char *file = xasprintf("%s/file", root), *through = xasprintf("%s/file/z", root);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    errno = 0;
    CHECK(!fsutil_mkdirs(file, 0700) && errno == ENOTDIR, "a file where a directory should be: ENOTDIR");
    errno = 0;
    CHECK(!fsutil_mkdirs(through, 0700) && errno == ENOTDIR, "a file on the way: ENOTDIR");
    errno = 0;
    CHECK(!fsutil_mkdirs("", 0700) && errno == ENOENT, "the empty path: ENOENT");
    CHECK(fsutil_mkdirs("/", 0700), "/ exists");
    umask(old);
    char *cmd = xasprintf("rm -rf '%s'", root);
    CHECK(system(cmd) == 0, "cleanup");
    free(cmd), free(deep), free(mid), free(slashes), free(y), free(file), free(through);
}

int main(void)
{
    test_buf();
    test_mkdirs();
    test_vec_arena();
    test_source();
    test_source_columns();
    test_suggest();
    return tap_done();
}
