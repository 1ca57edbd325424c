/* test_facts.c — the facts reader (facts_from_json): the golden files load
 * and write back byte for byte, and every malformed file is refused with a
 * message that says what is wrong, never half-read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "compile.h"
#include "fsutil.h"
#include "tap.h"

/* NULL when text is accepted; otherwise the error */
static char *refusal(const char *text, size_t len)
{
    char *err = NULL;
    facts_t *f = facts_from_json(text, len, &err);
    if (f) {
        facts_free(f);
        return NULL;
    }
    return err ? err : strdup("(refused without a message)");
}

static void refused(const char *text, const char *want, const char *name)
{
    char *err = refusal(text, strlen(text));
    if (!CHECK(err && strstr(err, want), name)) {
        tap_show("got ", err);
        tap_show("want", want);
    }
    free(err);
}

/* The golden facts load, and what they write back loads to the same facts
 * (the same bytes again). Not the file's own bytes: the golden files are
 * partly laid out by hand. Every path the file names is kept. */
static void golden_round_trip(const char *file)
{
    buf_t in = BUF_INIT, out = BUF_INIT, again = BUF_INIT;
    char *err = NULL, name[256];
    snprintf(name, sizeof name, "%s loads, and writes back all it holds", file);
    facts_t *f = fsutil_read_file(file, &in, &err) ? facts_from_json(in.p, in.len, &err) : NULL, *g = NULL;
    if (f) facts_to_json(f, &out);
    if (f) g = facts_from_json(out.p, out.len, &err);
    if (g) facts_to_json(g, &again);
    size_t named = 0;
    for (const char *p = in.p; p && (p = strstr(p, "\"realpath\"")); p++) named++;
    if (!CHECK(g && g->paths.n == named && f->paths.n == named && again.len == out.len &&
                   memcmp(again.p, out.p, out.len) == 0,
               name))
        tap_show("err", err);
    facts_free(f);
    facts_free(g);
    free(err);
    buf_free(&in);
    buf_free(&out);
    buf_free(&again);
}

int main(void)
{
    golden_round_trip("golden/facts-linux.json");
    golden_round_trip("golden/facts-macos.json");

    const char *ok = "{\"target\":\"linux\",\"home\":\"/h\"}";
    char *err = refusal(ok, strlen(ok));
    CHECK(err == NULL, "a minimal facts file (target and home) is accepted");
    free(err);

    /* JSON itself: where it breaks, and strictness beyond a lenient reader's defaults */
    refused("{\n  \"target\": \"linux\",\n  \"home\": \n}\n", "not valid JSON at line 4, column 1",
            "a syntax error names its line and column");
    refused("{\"target\":\"linux\",\"home\":\"/h\"} {}", "end of file expected",
            "anything after the object is refused, not ignored");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"home\":\"/\"}", "duplicate object key",
            "a duplicate key is refused: which one counts is not guessed");
    refused("{\"target\":\"linux\",\"home\":\"/h\\u0000/x\"}", "\\u0000 is not allowed",
            "U+0000 inside a string is refused (it would cut the path)");
    refused("", "not valid JSON", "an empty file is refused");
    refused("[]", "not a JSON object", "an array is not a facts file");
    err = refusal("{\"target\":\"linux\",\"home\":\"/h\"}", 10);
    CHECK(err && strstr(err, "not valid JSON"), "the length given is the end: a cut file is refused");
    free(err);

    /* the shape */
    refused("{\"home\":\"/h\"}", "'target' must be \"linux\" or \"macos\"", "no target");
    refused("{\"target\":\"bsd\",\"home\":\"/h\"}", "'target' must be", "an unknown target");
    refused("{\"target\":\"linux\"}", "home must be a string", "no home");
    refused("{\"target\":\"linux\",\"home\":\"h\"}", "must be an absolute, normalised path", "a relative home");
    refused("{\"target\":\"linux\",\"home\":\"/h/../etc\"}", "must be an absolute, normalised path",
            "a home with ..");
    refused("{\"target\":\"linux\",\"home\":\"/h\\u0001\"}", "control character", "a control character in home");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"path_dirs\":\"/bin\"}", "'path_dirs' must be an array",
            "path_dirs not an array");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"system_read\":[\"/usr\",3]}", "system_read must be a string",
            "a number among system_read");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"root_links\":{\"/bin\":\"\"}}",
            "entries must map a top-level path to a string", "a root link to nothing");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"root_links\":{\"/usr/bin\":\"x\"}}",
            "entries must map a top-level path to a string", "a root link below the top level");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"firmlinks\":[]}", "'firmlinks' must be an object",
            "firmlinks not an object");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"paths\":[]}", "'paths' must be an object", "paths not an object");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"paths\":{\"rel\":{}}}", "a 'paths' key 'rel' must be",
            "a relative path key");
    refused("{\"target\":\"linux\",\"home\":\"/h\",\"paths\":{\"/a\":{\"realpath\":1}}}", "realpath must be a string",
            "a realpath that is not a string");
    return tap_done();
}
