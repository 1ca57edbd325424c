/* test_paths.c — policy path syntax, normalisation, globs and their regexes. */
#include <regex.h>
#include <string.h>

#include "glob.h"
#include "path.h"
#include "ppath.h"
#include "sbpl.h"
#include "tap.h"

static arena_t A = ARENA_INIT;

static void ok_path(const char *in, bool glob_ok, path_base_t base, const char *rel, bool glob, const char *name)
{
    ppath_t p;
    const char *msg = NULL;
    size_t off = 0;
    bool ok = ppath_parse(in, strlen(in), glob_ok, &A, &p, &msg, &off);
    if (!CHECK(ok && p.base == base && strcmp(p.rel, rel) == 0 && p.glob == glob, name)) {
        printf("#   parsed %d base=%d rel='%s' glob=%d msg=%s\n", ok, ok ? (int)p.base : -1, ok ? p.rel : "",
               ok ? p.glob : 0, msg ? msg : "");
    }
}

static void bad_path(const char *in, size_t len, bool glob_ok, const char *want_msg_prefix, size_t want_off,
                     const char *name)
{
    ppath_t p;
    const char *msg = "";
    size_t off = 99;
    bool ok = ppath_parse(in, len, glob_ok, &A, &p, &msg, &off);
    if (!CHECK(!ok && strncmp(msg, want_msg_prefix, strlen(want_msg_prefix)) == 0 && off == want_off, name))
        printf("#   ok=%d msg='%s' off=%zu\n", ok, msg, off);
}

static void test_parse(void)
{
    ok_path("/etc/hosts", false, PB_ROOT, "etc/hosts", false, "absolute path");
    ok_path("//usr///lib/./x/", false, PB_ROOT, "usr/lib/x", false, "slashes and . collapse");
    ok_path("~", false, PB_HOME, "", false, "home alone");
    ok_path("~/.ssh", false, PB_HOME, ".ssh", false, "home relative");
    ok_path("${HOME}/src", false, PB_HOME, "src", false, "${HOME}");
    ok_path("${WORKSPACE}", false, PB_WORKSPACE, "", false, "workspace root");
    ok_path("${WORKSPACE}/a/b", false, PB_WORKSPACE, "a/b", false, "workspace relative");
    ok_path("${SCRATCH}/x", false, PB_SCRATCH, "x", false, "scratch relative");
    ok_path("/w/project[1]/secret", false, PB_ROOT, "w/project[1]/secret", false, "brackets are literal");
    ok_path("/a/{b,c}", false, PB_ROOT, "a/{b,c}", false, "braces are literal");
    ok_path("/a/lit\\*star", false, PB_ROOT, "a/lit*star", false, "escaped star is a literal path");
    ok_path("/a/what\\?", false, PB_ROOT, "a/what?", false, "escaped question mark");
    ok_path("/data/$HOME", false, PB_ROOT, "data/$HOME", false, "a dollar inside is literal");
    ok_path("**/.env", true, PB_ROOT, "**/.env", true, "anywhere glob");
    ok_path("~/*.pem", true, PB_HOME, "*.pem", true, "home glob");
    ok_path("/a/lit\\*/*.x", true, PB_ROOT, "a/lit\\*/*.x", true, "glob keeps its escapes");

    bad_path("src/lib", 7, false, "relative path", 0, "relative path refused");
    bad_path("./x", 3, false, "relative path", 0, "dot-relative refused");
    bad_path("/a/../etc", 9, false, "'..' is not allowed", 3, "dot-dot refused at its offset");
    bad_path("~/x/..", 6, false, "'..' is not allowed", 4, "trailing dot-dot refused");
    bad_path("", 0, false, "empty path", 0, "empty refused");
    bad_path("/a\nb", 4, false, "a path may not contain a control character", 2, "newline refused");
    bad_path("/a\0b", 4, false, "a path may not contain a NUL", 2, "NUL refused");
    bad_path("/a\tb", 4, false, "a path may not contain a control character", 2, "tab refused");
    bad_path("~root/x", 7, false, "'~user' paths", 0, "~user refused");
    bad_path("${FOO}/x", 8, false, "unknown variable", 0, "unknown variable refused");
    bad_path("/a/*.pem", 8, false, "globs ('*', '?') are accepted in deny_read", 3, "glob outside deny refused");
    bad_path("${WORKSPACE}/*.key", 18, true, "a glob cannot start with ${WORKSPACE}", 0, "session glob refused");

    ppath_t p;
    const char *msg;
    size_t off;
    buf_t b = BUF_INIT;
    ppath_parse("${WORKSPACE}/x/", 15, false, &A, &p, &msg, &off);
    ppath_format(&p, &b);
    CHECK_STR(buf_cstr(&b), "${WORKSPACE}/x", "format round trip");
    buf_free(&b);
}

static void test_normalize(void)
{
    CHECK_STR(path_normalize("/a//b/./c/", &A), "/a/b/c", "normalize");
    CHECK_STR(path_normalize("/a/b/../c", &A), "/a/c", "normalize dot-dot");
    CHECK_STR(path_normalize("/../..", &A), "/", "dot-dot stops at root");
    CHECK(path_normalize("rel", &A) == NULL, "relative is NULL");
    CHECK(path_is_under("/a/b", "/a") && path_is_under("/a", "/a") && !path_is_under("/ab", "/a"),
          "path_is_under respects components");
    CHECK(path_is_under("/x", "/") && path_depth("/") == 0 && path_depth("/a/b") == 2, "root and depth");
    CHECK_STR(path_join_rel("", "x", &A), "x", "join_rel empty");
    CHECK_STR(path_join_rel("a", "x/y", &A), "a/x/y", "join_rel");
}

static void test_globs(void)
{
    CHECK(glob_match("/**/.env", "/.env") && glob_match("/**/.env", "/a/b/.env"), "** matches zero or more");
    CHECK(!glob_match("/**/.env", "/a/.envrc"), "** then literal is exact");
    CHECK(glob_match("/h/*.pem", "/h/k.pem") && !glob_match("/h/*.pem", "/h/d/k.pem"), "* stays in a component");
    CHECK(glob_match("/h/report-?.txt", "/h/report-1.txt") && !glob_match("/h/report-?.txt", "/h/report-12.txt"),
          "? is one character");
    CHECK(glob_match("/h/report-?.txt", "/h/report-\xc3\xa9.txt"), "? is one UTF-8 character");
    CHECK(glob_match("/h/lit\\*", "/h/lit*") && !glob_match("/h/lit\\*", "/h/litx"), "escaped star literal");
    CHECK(glob_match("/p/[1]/*", "/p/[1]/x") && !glob_match("/p/[1]/*", "/p/1/x"), "brackets literal in globs");
    CHECK(glob_match_prefix("/**/.git/hooks", "/w/.git/hooks/pre-commit"), "cap covers below the match");
    CHECK(!glob_match_prefix("/**/.git/hooks", "/w/.git/config"), "sibling not covered");
    CHECK(glob_may_match_below("/h/src/*/private", "/h/src") && glob_may_match_below("/h/src/*/private", "/h/src/a"),
          "may match below");
    CHECK(!glob_may_match_below("/h/src/*/private", "/other"), "prune unrelated");
    CHECK(glob_may_match_below("/**/x", "/any/where"), "anywhere never prunes");
    CHECK_STR(glob_literal_prefix("/h/src/*/p", &A), "/h/src", "literal prefix");
    CHECK_STR(glob_literal_prefix("/**/x", &A), "/", "literal prefix of anywhere");
    CHECK_STR(glob_literal_prefix("/h/lit\\*/*.x", &A), "/h/lit*", "literal prefix unescapes");
    CHECK_STR(glob_escape("/a*b?c", &A), "/a\\*b\\?c", "escape");

    /* a thousand-component path and a pattern of many stars: no blow-up */
    buf_t deep = BUF_INIT, pat = BUF_INIT;
    for (int i = 0; i < 1000; i++) buf_adds(&deep, "/a");
    for (int i = 0; i < 50; i++) buf_adds(&pat, "/**");
    buf_adds(&pat, "/b");
    CHECK(!glob_match(buf_cstr(&pat), buf_cstr(&deep)), "pathological pattern terminates");
    buf_free(&deep);
    buf_free(&pat);
}

static bool ere_match(const char *re, const char *s)
{
    regex_t r;
    if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0) return false;
    bool m = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return m;
}

static void test_regex(void)
{
    const char *r = sbpl_glob_regex("/**/.git/hooks", true, &A);
    CHECK_STR(r, "^(/.*)?/\\.[gG][iI][tT]/[hH][oO][oO][kK][sS](/.*)?$", "regex of an anywhere glob");
    CHECK(ere_match(r, "/w/.git/hooks/post-commit") && ere_match(r, "/.git/hooks") && !ere_match(r, "/w/xgit/hooks"),
          "regex matches like the glob");
    r = sbpl_glob_regex("/p/a.b(c)[1]{2}+^$|/*.pem", true, &A);
    CHECK(ere_match(r, "/p/a.b(c)[1]{2}+^$|/k.pem") && !ere_match(r, "/p/aXb(c)[1]{2}+^$|/k.pem"),
          "every regex metacharacter of a literal is escaped");
    r = sbpl_glob_regex("/h/report-?.txt", false, &A);
    CHECK(ere_match(r, "/h/report-1.txt") && !ere_match(r, "/h/report-1.txt/x"), "exact form has no below");
    buf_t q = BUF_INIT;
    CHECK(sbpl_quote(&q, "a\"b\\c") && strcmp(buf_cstr(&q), "\"a\\\"b\\\\c\"") == 0, "sbpl quote escapes");
    buf_truncate(&q, 0);
    CHECK(!sbpl_quote(&q, "a\nb"), "sbpl quote refuses control characters");
    buf_free(&q);
}

int main(void)
{
    test_parse();
    test_normalize();
    test_globs();
    test_regex();
    arena_free(&A);
    return tap_done();
}
