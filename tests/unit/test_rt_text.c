/* test_rt_text.c — the runtime's pure pieces: UTF-8 repair and base64
 * (textenc.c), JSON-RPC framing and exact ids (jsonrpc.c), argument checking
 * against a schema (argcheck.c), and confined path resolution (beneath.c,
 * both the openat2 path and the component-walk fallback).
 *
 * The unit-test build links the library only, so the runtime files under test
 * are compiled into this program directly.
 */
#include "../../runtime/argcheck.c"
#include "../../runtime/beneath.c"
#include "../../runtime/jsonrpc.c"
#include "../../runtime/textenc.c"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

static char *sanitize(const char *s, size_t n, bool *exact)
{
    buf_t b = BUF_INIT;
    *exact = textenc_utf8_sanitize(s, n, &b);
    return buf_detach(&b, NULL);
}

static void test_utf8(void)
{
    bool exact;
    char *s = sanitize("plain ✓", strlen("plain ✓"), &exact);
    CHECK(exact && !strcmp(s, "plain ✓"), "valid UTF-8 passes unchanged");
    free(s);
    /* literals split to end a hex escape stay on their line */
    /* clang-format off */
    s = sanitize("a\xff" "b", 3, &exact);
    CHECK(!exact && !strcmp(s, "a\xEF\xBF\xBD" "b"), "a stray byte becomes one U+FFFD");
    /* clang-format on */
    free(s);
    s = sanitize("x\0y", 3, &exact);
    CHECK(!exact && !strcmp(s, "x\xEF\xBF\xBDy"), "NUL becomes U+FFFD (a C string cannot carry it)");
    free(s);
    s = sanitize("\xE2\x82", 2, &exact);
    CHECK_STR(s, "\xEF\xBF\xBD", "a truncated sequence is one U+FFFD (maximal subpart)");
    free(s);
    s = sanitize("\xC0\x80", 2, &exact);
    CHECK_STR(s, "\xEF\xBF\xBD\xEF\xBF\xBD", "overlong NUL: two replacements");
    free(s);
    s = sanitize("\xED\xA0\x80", 3, &exact);
    CHECK_STR(s, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "a UTF-16 surrogate is not UTF-8");
    free(s);
    s = sanitize("\xF4\x90\x80\x80", 4, &exact);
    CHECK(!exact, "past U+10FFFF is invalid");
    free(s);
    CHECK(textenc_utf8_valid("\xF0\x9F\x98\x80", 4, false), "4-byte emoji valid");
    CHECK(!textenc_utf8_valid("a\0", 2, false) && textenc_utf8_valid("a\0", 2, true), "NUL allowed on request");
    CHECK_INT(textenc_utf8_clean_cut("ab\xE2\x82", 4), 2, "cut before an unfinished character");
    CHECK_INT(textenc_utf8_clean_cut("ab\xE2\x82\xAC", 5), 5, "a finished character is kept");
    CHECK_INT(textenc_utf8_clean_cut("abc", 3), 3, "ASCII untouched");
}

static void test_base64(void)
{
    /* clang-format off */
    const char *cases[][2] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    /* clang-format on */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        buf_t e = BUF_INIT, d = BUF_INIT;
        textenc_base64_encode(cases[i][0], strlen(cases[i][0]), &e);
        bool ok = textenc_base64_decode(e.p ? e.p : "", e.len, &d);
        char name[64];
        snprintf(name, sizeof name, "base64 round trip of \"%s\"", cases[i][0]);
        CHECK(!strcmp(buf_cstr(&e), cases[i][1]) && ok && !strcmp(buf_cstr(&d), cases[i][0]), name);
        buf_free(&e);
        buf_free(&d);
    }
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    buf_t e = BUF_INIT, d = BUF_INIT;
    textenc_base64_encode(all, 256, &e);
    CHECK(textenc_base64_decode(e.p, e.len, &d) && d.len == 256 && !memcmp(d.p, all, 256),
          "every byte value round-trips");
    buf_free(&e);
    buf_free(&d);
    const char *bad[] = {"Zg=", "Z", "Zm9v!", "Zm 9v", "Zh==", "===="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        buf_t x = BUF_INIT;
        char name[64];
        snprintf(name, sizeof name, "invalid base64 \"%s\" refused", bad[i]);
        CHECK(!textenc_base64_decode(bad[i], strlen(bad[i]), &x), name);
        buf_free(&x);
    }
    buf_t x = BUF_INIT;
    CHECK(textenc_base64_decode("Zm8", 3, &x) && !strcmp(x.p, "fo"), "padding is optional");
    buf_free(&x);
}

static jsonrpc_msg_t parse(const char *s)
{
    jsonrpc_msg_t m;
    jsonrpc_parse(s, strlen(s), &m);
    return m;
}

static void test_jsonrpc(void)
{
    jsonrpc_msg_t m = parse("{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"method\":\"ping\"}");
    CHECK(m.kind == JSONRPC_REQUEST && !strcmp(m.id, "12345678901234567890123"), "big id kept as text");
    char *r = jsonrpc_result(m.id, NULL);
    CHECK_STR(r, "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"result\":{}}",
              "response echoes the id text");
    free(r);
    jsonrpc_msg_free(&m);

    m = parse(" {\"id\" : \"a\\\"b\", \"jsonrpc\":\"2.0\",\"method\":\"x\"} ");
    CHECK(m.kind == JSONRPC_REQUEST && !strcmp(m.id, "\"a\\\"b\"") && !strcmp(m.id_key, "s:a\"b"),
          "string id with an escape, members in any order");
    jsonrpc_msg_free(&m);

    m = parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    CHECK(m.kind == JSONRPC_NOTIFICATION && !m.id, "notification");
    jsonrpc_msg_free(&m);

    /* params that are not an object: a sound envelope, so a request the
     * dispatcher answers -32602 (HTTP 200), not an unusable message */
    m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[]}");
    CHECK(m.kind == JSONRPC_REQUEST && m.bad_params && !m.params && m.id, "array params: a request with bad params");
    jsonrpc_msg_free(&m);

    m = parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
    CHECK(m.kind == JSONRPC_RESPONSE, "a response from the client");
    jsonrpc_msg_free(&m);

    struct {
        const char *in;
        int code;
        bool has_id;
        const char *name;
    } bad[] = {
        {"[]", JSONRPC_INVALID_REQUEST, false, "batch refused"},
        {"{", JSONRPC_PARSE_ERROR, false, "truncated JSON"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"} x", JSONRPC_PARSE_ERROR, false, "trailing garbage"},
        {"\"str\"", JSONRPC_INVALID_REQUEST, false, "not an object"},
        {"{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"x\"}", JSONRPC_PARSE_ERROR, false, "leading zero is not JSON"},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}", JSONRPC_INVALID_REQUEST, false, "null id"},
        {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"x\"}", JSONRPC_INVALID_REQUEST, false, "boolean id"},
        {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}", JSONRPC_INVALID_REQUEST, true, "wrong version keeps the id"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1}", JSONRPC_INVALID_REQUEST, true, "no method"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}", JSONRPC_PARSE_ERROR, false, "raw tab inside a string"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", JSONRPC_PARSE_ERROR, false, "invalid UTF-8"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"i\\u0064\":2,\"method\":\"x\"}", JSONRPC_PARSE_ERROR, false,
         "a duplicate key, however escaped, is refused"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":1,\"a\":2}}",
         JSONRPC_PARSE_ERROR, false, "a duplicate key inside params is refused"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"x\"}", JSONRPC_PARSE_ERROR, false,
         "a number past a double is refused, not echoed as inf"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        m = parse(bad[i].in);
        CHECK(m.kind == JSONRPC_INVALID && m.error == bad[i].code && (m.id != NULL) == bad[i].has_id,
              bad[i].name);
        jsonrpc_msg_free(&m);
    }

    m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"_meta\":"
              "{\"progressToken\":99999999999999999999},\"x\":\"a\\u0000b\"}}");
    CHECK(m.kind == JSONRPC_REQUEST && m.has_nul, "\\u0000 is flagged");
    CHECK_STR(m.progress_token, "99999999999999999999", "progress token kept as text");
    jsonrpc_msg_free(&m);
    m = parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"r1\"}}");
    CHECK_STR(m.cancel_key, "s:r1", "cancelled requestId as an id key");
    jsonrpc_msg_free(&m);
    m = parse("{\"jsonrpc\":\"2.0\",\"i\\u0064\":5,\"method\":\"x\"}");
    CHECK(m.kind == JSONRPC_REQUEST && !strcmp(m.id, "5"), "an escaped member name is still \"id\"");
    jsonrpc_msg_free(&m);
    m = parse("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"a\":{\"id\":[1,\"}\"]},\"id\" : -0.5e+3 }");
    CHECK(m.kind == JSONRPC_REQUEST && !strcmp(m.id, "-0.5e+3") && !strcmp(m.id_key, "n:-0.5e+3"),
          "a float id after a nested \"id\" is kept as its own text");
    jsonrpc_msg_free(&m);

    json_t *p = json_object();
    json_object_set_new(p, "progress", json_real(1.5));
    r = jsonrpc_print_with_raw(p, "progressToken", "1e999");
    CHECK_STR(r, "{\"progressToken\":1e999,\"progress\":1.5}", "a raw member goes first");
    free(r);
    json_object_clear(p);
    r = jsonrpc_print_with_raw(p, "t", "\"x\"");
    CHECK_STR(r, "{\"t\":\"x\"}", "... also into an empty object");
    free(r);
    json_decref(p);
    json_t *str = jsonrpc_string("a\xff");
    CHECK_STR(json_string_value(str), "a\xEF\xBF\xBD", "jsonrpc_string repairs invalid UTF-8");
    json_decref(str);
}

static void test_argcheck(void)
{
    json_t *schema = json_loads(
        "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\",\"minLength\":1,"
        "\"maxLength\":3},\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5},"
        "\"e\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]},\"l\":{\"type\":\"array\","
        "\"maxItems\":2,\"items\":{\"type\":\"string\"}},\"x\":{\"type\":[\"integer\",\"null\"]}},"
        "\"required\":[\"s\"],\"additionalProperties\":false}",
        0, NULL);
    struct {
        const char *args;
        const char *why;
    } cases[] = {
        {"{\"s\":\"ab\"}", NULL},
        {"{\"s\":\"äöü\",\"n\":5,\"e\":\"b\",\"l\":[\"x\"],\"x\":null}", NULL},
        {"{}", "arguments.s is required"},
        {"{\"s\":\"abcd\"}", "arguments.s must be at most 3 characters long (got 4)"},
        {"{\"s\":\"\"}", "arguments.s must be at least 1 characters long"},
        {"{\"s\":1}", "arguments.s must be a string, not an integer"},
        {"{\"s\":\"a\",\"n\":1.5}", "arguments.n must be an integer, not a number"},
        {"{\"s\":\"a\",\"n\":6}", "arguments.n must be at least 1 and at most 5"},
        {"{\"s\":\"a\",\"e\":\"c\"}", "arguments.e must be one of: \"a\" \"b\""},
        {"{\"s\":\"a\",\"l\":[\"a\",\"b\",\"c\"]}", "arguments.l may hold at most 2 items"},
        {"{\"s\":\"a\",\"l\":[1]}", "arguments.l[0] must be a string, not an integer"},
        {"{\"s\":\"a\",\"zz\":1}", "arguments.zz is not a known argument (expected one of: s n e l x)"},
        {"{\"s\":\"a\",\"n\":2.0}", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        /* read as jsonrpc.c reads arguments: every number a real */
        json_t *a = json_loads(cases[i].args, JSON_DECODE_INT_AS_REAL, NULL);
        buf_t why = BUF_INIT;
        bool ok = argcheck(schema, a, &why);
        if (cases[i].why)
            CHECK_STR(buf_cstr(&why), cases[i].why, cases[i].args);
        else
            CHECK(ok, cases[i].args);
        buf_free(&why);
        json_decref(a);
    }
    json_decref(schema);
}

static void test_beneath(bool fallback)
{
    const char *mode = fallback ? " (component walk)" : " (openat2)";
    beneath_force_fallback(fallback);
    const char *B = getenv("B") ? getenv("B") : "build";
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/test-tmp", B);
    mkdir(tmpl, 0700);
    snprintf(tmpl, sizeof tmpl, "%s/test-tmp/beneath-XXXXXX", B);
    char *root = mkdtemp(tmpl);
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char path[1024];
    snprintf(path, sizeof path, "%s/ws", root);
    mkdir(path, 0700);
    int ws = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    snprintf(path, sizeof path, "%s/outside", root);
    close(open(path, O_WRONLY | O_CREAT, 0600));
    symlinkat("../outside", ws, "up");
    symlinkat("/etc", ws, "etc");
    mkdirat(ws, "d", 0755);
    symlinkat("..", ws, "d/parent");
    close(openat(ws, "d/f", O_WRONLY | O_CREAT, 0600));

    char name[160];
    int fd = beneath_open(ws, "d/f", O_RDONLY, 0);
    snprintf(name, sizeof name, "a plain file opens%s", mode);
    CHECK(fd >= 0, name);
    if (fd >= 0)
        close(fd);
    const char *escapes[] = {"up", "etc/passwd", "d/parent/d/f", "etc"};
    for (size_t i = 0; i < 4; i++) {
        errno = 0;
        fd = beneath_open(ws, escapes[i], O_RDONLY, 0);
        snprintf(name, sizeof name, "symlink \"%s\" is not followed%s", escapes[i], mode);
        CHECK(fd < 0 && (errno == ELOOP || errno == EXDEV || errno == ENOTDIR), name);
        if (fd >= 0)
            close(fd);
    }
    fd = beneath_open_dir(ws, "new/deep/dir", true);
    snprintf(name, sizeof name, "missing directories are created beneath%s", mode);
    CHECK(fd >= 0 && faccessat(ws, "new/deep/dir", F_OK, 0) == 0, name);
    if (fd >= 0)
        close(fd);
    fd = beneath_open_dir(ws, "etc/x", true);
    snprintf(name, sizeof name, "no directory is created through a symlink%s", mode);
    CHECK(fd < 0 && faccessat(rfd, "../etc/x", F_OK, 0) != 0, name);
    close(ws);
    close(rfd);
    beneath_force_fallback(false);
}

static void test_normalize(void)
{
    /* clang-format off */
    struct { const char *in, *out; } ok[] = {
        {"a/b", "a/b"}, {"./a//b/", "a/b"}, {".", ""}, {"", ""}, {"a/./b/.", "a/b"}, {"...", "..."},
        {"a..b/c", "a..b/c"},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        buf_t b = BUF_INIT;
        const char *why = NULL;
        bool r = beneath_normalize(ok[i].in, &b, &why);
        char name[64];
        snprintf(name, sizeof name, "normalize \"%s\"", ok[i].in);
        CHECK(r && !strcmp(buf_cstr(&b), ok[i].out), name);
        buf_free(&b);
    }
    const char *bad[] = {"/etc/passwd", "..", "a/../b", "a/..", "../x", "a\nb", "a\x7f"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        buf_t b = BUF_INIT;
        const char *why = NULL;
        char name[64];
        snprintf(name, sizeof name, "refuse bad path %zu", i);
        CHECK(!beneath_normalize(bad[i], &b, &why) && why, name);
        buf_free(&b);
    }
    char longname[300];
    memset(longname, 'a', 299);
    longname[299] = '\0';
    buf_t b = BUF_INIT;
    const char *why;
    CHECK(!beneath_normalize(longname, &b, &why), "a component over 255 bytes is refused");
    buf_free(&b);
}

int main(void)
{
    test_utf8();
    test_base64();
    test_jsonrpc();
    test_argcheck();
    test_normalize();
    test_beneath(false);
    test_beneath(true);
    return tap_done();
}
