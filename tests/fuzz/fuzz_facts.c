/* fuzz_facts.c — libFuzzer harness for the facts reader (facts_from_json),
 * which reads `--facts FILE` and the facts recorded in a manifest.
 *
 * Beyond "no crash": a refusal always says why; accepted facts hold only
 * absolute, normalised paths without control characters; and what they write
 * back (facts_to_json) reads back to the same bytes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c)                  \
    do {                            \
        if (!(c)) __builtin_trap(); \
    } while (0)

static void require_clean(const char *p)
{
    REQUIRE(p && p[0] == '/');
    REQUIRE(!strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../"));
    for (; *p; p++) REQUIRE((unsigned char)*p >= 0x20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    facts_t *f = facts_from_json((const char *)data, size, &err);
    if (!f) {
        REQUIRE(err && *err);
        free(err);
        return 0;
    }
    REQUIRE(err == NULL);
    require_clean(f->home);
    for (size_t i = 0; i < f->path_dirs.n; i++) require_clean(f->path_dirs.v[i]);
    for (size_t i = 0; i < f->system_read.n; i++) require_clean(f->system_read.v[i]);
    for (size_t i = 0; i < f->paths.n; i++) {
        require_clean(f->paths.v[i].path);
        require_clean(f->paths.v[i].realpath);
        if (i) REQUIRE(strcmp(f->paths.v[i - 1].path, f->paths.v[i].path) <= 0);
    }
    buf_t out = BUF_INIT, again = BUF_INIT;
    facts_to_json(f, &out);
    facts_t *g = facts_from_json(out.p, out.len, &err);
    REQUIRE(g && !err);
    facts_to_json(g, &again);
    REQUIRE(again.len == out.len && memcmp(again.p, out.p, out.len) == 0);
    facts_free(g);
    facts_free(f);
    buf_free(&out);
    buf_free(&again);
    return 0;
}
