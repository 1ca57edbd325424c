/* fuzz_policy.c — libFuzzer harness for the review pipeline: a config's
 * bytes → lint (every renderer) → policy_build → resolve with fixed facts →
 * sbpl_build + bwrap_build (the template) → explain (overview and a few
 * questions) → diff against itself and against the default.
 *
 * Beyond "no crash, no leak": every lint finding names a rule of the
 * diagnostic table with a span inside the source; explain's answers agree
 * with the artifacts (the SBPL evaluator always, the bwrap plan up to the
 * documented Linux differences); a policy diffed with itself has no change.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwrap.h"
#include "diag_ids.h"
#include "diff.h"
#include "explain.h"
#include "facts.h"
#include "jsonw.h"
#include "lattice.h"
#include "lint.h"
#include "sbpl.h"

#define REQUIRE(cond)                                                               \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz_policy: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* Linux facts with a merged /usr, a home, a symlinked source tree and a few
 * existing and missing paths (a trimmed golden/facts-linux.json). */
static const char linux_facts[] =
    "{\"format\":1,\"target\":\"linux\",\"arch\":\"x86_64\",\"home\":\"/home/user\","
    "\"path_dirs\":[\"/usr/local/bin\",\"/usr/bin\",\"/home/user/.local/bin\"],"
    "\"system_read\":[\"/usr\",\"/etc\",\"/opt\"],"
    "\"root_links\":{\"/bin\":\"usr/bin\",\"/lib\":\"usr/lib\"},\"firmlinks\":{},"
    "\"bwrap\":{\"version\":\"0.8.0\",\"disable_userns\":true},"
    "\"paths\":{"
    "\"/home/user\":{\"type\":\"dir\",\"realpath\":\"/home/user\"},"
    "\"/home/user/.ssh\":{\"type\":\"dir\",\"realpath\":\"/home/user/.ssh\"},"
    "\"/home/user/.netrc\":{\"type\":\"file\",\"realpath\":\"/home/user/.netrc\"},"
    "\"/home/user/src\":{\"type\":\"dir\",\"realpath\":\"/home/user/code/src\"},"
    "\"/home/user/out\":{\"type\":\"dir\",\"realpath\":\"/home/user/out\"},"
    "\"/home/user/out/keep\":{\"type\":\"file\",\"realpath\":\"/home/user/out/keep\"},"
    "\"/home/user/data\":{\"type\":\"dir\",\"realpath\":\"/home/user/data\"},"
    "\"/usr\":{\"type\":\"dir\",\"realpath\":\"/usr\"},"
    "\"/etc\":{\"type\":\"dir\",\"realpath\":\"/etc\"}}}";

static facts_t *facts[2];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    char *err = NULL;
    facts[TARGET_LINUX] = facts_from_json(linux_facts, sizeof linux_facts - 1, &err);
    REQUIRE(facts[TARGET_LINUX] && facts[TARGET_LINUX]->target == TARGET_LINUX);
    facts[TARGET_MACOS] = facts_macos_default();
    return 0;
}

static void check_findings(const diag_list_t *l, const source_t *src)
{
    for (size_t i = 0; i < l->n; i++) {
        const diag_t *d = &l->v[i];
        REQUIRE(d->id && diag_info(d->id) != NULL);
        REQUIRE(d->msg && *d->msg);
        if (d->src) REQUIRE(d->src->len == src->len && d->span.start <= d->span.end && d->span.end <= src->len);
    }
}

static void fuzz_lint(const uint8_t *data, size_t size)
{
    lint_opts_t o = {{NULL, NULL}, {facts[0], facts[1]}};
    lint_report_t r;
    char *err = NULL;
    source_t *src = source_new("fuzz.toml", (const char *)data, size);
    REQUIRE(lint_run(src, &o, &r, &err));
    check_findings(&r.findings, r.src);
    check_findings(&r.suppressed, r.src);
    for (size_t i = 0; i < r.suppressed.n; i++) REQUIRE(!diag_info(r.suppressed.v[i].id)->config_error);
    buf_t out = BUF_INIT;
    lint_render_text(&r, &out, false);
    lint_render_json(&r, &out);
    lint_render_sarif(&r, &out);
    buf_free(&out);
    lint_report_free(&r);
}

/* clang-format off */
static const char *const questions[] = {
    "~/.ssh/id_rsa", "${WORKSPACE}/.git/hooks/pre-commit", "${WORKSPACE}/src/a.c", "/etc/passwd", "~/out/keep",
    "~/src/x/.env", "/bin/sh", "~", "/", "${SCRATCH}/.bashrc",
};
/* clang-format on */

static void fuzz_explain(const policy_t *p)
{
    explain_opts_t o = {{NULL, NULL}, {facts[0], facts[1]}, "/home/user/work"};
    char *err = NULL;
    explain_t *e = explain_new(p, &o, &err);
    REQUIRE(e);
    buf_t out = BUF_INIT;
    explain_overview(e, &out);
    for (size_t i = 0; i < sizeof questions / sizeof *questions; i++) {
        explain_levels_t lv;
        REQUIRE(explain_path_levels(e, questions[i], &lv, &err));
        /* SBPL is exact; Linux may differ from the lattice only for a documented reason */
        REQUIRE(lv.enforced[TARGET_MACOS] == lv.lattice[TARGET_MACOS]);
        REQUIRE(lv.explained[TARGET_LINUX]);
        jw_t j;
        jw_init(&j, &out, false);
        REQUIRE(explain_query(e, i % 2 ? EQ_WRITE : EQ_READ, questions[i], &out, i % 3 ? NULL : &j, &err));
    }
    REQUIRE(explain_query(e, EQ_EXEC, "rm -rf / ; echo $(curl x)", &out, NULL, &err));
    REQUIRE(explain_query(e, EQ_FETCH, "https://sub.example.com:8443/a?b#c", &out, NULL, &err));
    REQUIRE(explain_query(e, EQ_FETCH, "http://[::1]/", &out, NULL, &err));
    buf_free(&out);
    explain_free(e);
}

static void fuzz_diff(const policy_t *p)
{
    diff_opts_t o = {{NULL, NULL}, {facts[0], facts[1]}, "a.toml", "b.toml"};
    buf_t out = BUF_INIT;
    char *err = NULL;
    REQUIRE(diff_policies(p, p, &o, false, &out, &err) == 0); /* nothing changed */
    policy_t *def = policy_default();
    REQUIRE(diff_policies(def, p, &o, true, &out, &err) >= 0);
    policy_free(def);
    buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0; /* large inputs only slow the lattice questions down */
    fuzz_lint(data, size);
    diag_list_t d = {0};
    policy_t *p = policy_build(source_new("fuzz.toml", (const char *)data, size), TOML_1_1, &d);
    diag_list_free(&d);
    if (!p) return 0;
    for (int t = 0; t < 2; t++) {
        resolved_t *r = lattice_resolve(p, facts[t]);
        diag_list_t dd = {0};
        if (t == TARGET_MACOS) {
            sbpl_t *s;
            sbpl_build(r, r->facts, &dd, &s);
            sbpl_free(s);
        } else {
            bwrap_t *b;
            bwrap_build(r, r->facts, &dd, &b);
            bwrap_free(b);
        }
        diag_list_free(&dd);
        lattice_free(r);
    }
    fuzz_explain(p);
    fuzz_diff(p);
    policy_free(p);
    return 0;
}
