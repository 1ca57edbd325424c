/* test_lint_run.c — lint as a library: the diagnostic table, findings as
 * data (ID, severity, line, column), suppression, the built-in macOS facts
 * (a facts object with no recorded paths), and the renderers. */
#include <stdlib.h>
#include <string.h>

#include "diag_ids.h"
#include "facts.h"
#include "lint.h"
#include "tap.h"

static facts_t *fx[2];

static bool run(const char *text, lint_report_t *r)
{
    lint_opts_t o = {{NULL, NULL}, {fx[0], fx[1]}};
    char *err = NULL;
    bool ok = lint_run(source_new("t.toml", text, strlen(text)), &o, r, &err);
    free(err);
    return ok;
}

/* "ID@line:col" of every finding in force, space-separated. */
static char *summary(const diag_list_t *l)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < l->n; i++) {
        srcpos_t p = source_pos(l->v[i].src, l->v[i].span.start);
        buf_printf(&b, "%s%s@%u:%u", i ? " " : "", l->v[i].id, p.line, p.col);
    }
    return b.p ? buf_detach(&b, NULL) : xstrdup("");
}

static void expect(const char *text, const char *want, const char *name)
{
    lint_report_t r;
    if (!run(text, &r)) {
        CHECK(false, name);
        return;
    }
    char *got = summary(&r.findings);
    CHECK_STR(got, want, name);
    free(got);
    lint_report_free(&r);
}

int main(void)
{
    /* the table */
    size_t n = diag_table_len();
    CHECK(n >= 29, "the table has the schema's IDs and the lint rules");
    bool unique = true, anchors = true, kebab = true;
    for (size_t i = 0; i < n; i++) {
        const diag_info_t *d = &diag_table[i];
        for (size_t k = 0; k < i; k++) unique = unique && strcmp(diag_table[k].id, d->id) != 0;
        const char *h = strchr(d->anchor, '#');
        anchors = anchors && strncmp(d->anchor, "docs/lint-rules.md#", 19) == 0 && h && strcmp(h + 1, d->id) == 0;
        for (const char *c = d->id; *c; c++) kebab = kebab && ((*c >= 'a' && *c <= 'z') || *c == '-');
        CHECK(diag_info(d->id) == d && diag_index(d->id) == (long)i, d->id);
    }
    CHECK(unique, "IDs are unique");
    CHECK(anchors, "every anchor is docs/lint-rules.md#ID");
    CHECK(kebab, "IDs are kebab-case");
    CHECK(diag_info("no-such-rule") == NULL && diag_index(NULL) == -1, "unknown IDs have no row");
    CHECK(diag_info("unknown-key")->config_error && !diag_info("secret-readable")->config_error,
          "config errors are marked");

    /* facts: Linux from a file-shaped string, macOS the built-in ones (no recorded paths) */
    char *err = NULL;
    static const char lin[] = "{\"format\":1,\"target\":\"linux\",\"arch\":\"x86_64\",\"home\":\"/home/u\","
                              "\"path_dirs\":[\"/usr/bin\"],\"system_read\":[\"/usr\",\"/etc\"],\"root_links\":{},"
                              "\"firmlinks\":{},\"bwrap\":{\"version\":\"0.8.0\",\"disable_userns\":true},\"paths\":{}}";
    fx[0] = facts_from_json(lin, sizeof lin - 1, &err);
    fx[1] = facts_macos_default();
    CHECK(fx[0] && fx[1], "facts");
    arena_t a = ARENA_INIT;
    CHECK(facts_lookup(fx[1], "/Users/user/x", &a).type == PT_MISSING,
          "a lookup in facts with no recorded path (once undefined behaviour: bsearch of NULL)");
    arena_free(&a);

    expect("domain_allowlist = []\n", "", "the smallest clean policy has no finding");
    expect("", "default-domain-allowlist@1:1", "an empty file: drun's default hosts");
    expect("domain_allowlist = []\n[filesystem]\nallow_read = [\"~\"]\n",
           "secret-readable@3:15 secret-readable@3:15", "~ readable: credentials and .env, at the grant");
    expect("domain_allowlist = []\n[filesystem]\nallow_read = [\"~\"]\ndeny_read = [\"~/.ssh\", \"~/.gnupg\", "
           "\"~/.aws\", \"~/.config/gcloud\", \"~/.azure\", \"~/.kube\", \"~/.docker\", \"~/.netrc\", "
           "\"~/.git-credentials\", \"~/.config/gh\", \"**/.env\"]\n",
           "deny-path-missing@4:14 deny-path-missing@4:24 deny-path-missing@4:36 deny-path-missing@4:46 "
           "deny-path-missing@4:66 deny-path-missing@4:78 deny-path-missing@4:89 deny-path-missing@4:102 "
           "deny-path-missing@4:114 deny-path-missing@4:136 unenforceable-on-target@4:152",
           "every secret denied: only notes about how Linux enforces it");
    expect("domain_alowlist = []\n", "unknown-key@1:1 default-domain-allowlist@1:1", "a typo: the error, at the key");
    expect("domain_allowlist = []\n[protect]\ngit_hooks = false\n", "writable-git-without-hooks-protection@3:13",
           "hooks protection off: at the value");
    expect("domain_allowlist = []\n[filesystem]\nallow_write = [\"~/a\", \"~/a/b\"]\ndeny_write = [\"~/a/b\"]\n",
           "secret-readable@3:16 shadowed-rule@3:23 deny-path-missing@4:15", "a grant under its own cap is shadowed");
    expect("domain_allowlist = []\nsnapshot_on_close = true # drun-policy: allow unenforced-key\n", "",
           "a suppression on the same line");
    expect("domain_allowlist = []\n# drun-policy: allow unenforced-key\n\nsnapshot_on_close = true\n",
           "unenforced-key@4:1", "a suppression two lines above does not count");
    expect("domain_allowlist = []\nbash_timeout_ms = \"x\" # drun-policy: allow type-mismatch\n",
           "type-mismatch@2:19 bad-suppression@2:44", "a config error cannot be suppressed");

    /* the report as data */
    lint_report_t r;
    CHECK(run("domain_allowlist = [\"*\"]\nweb_port = 1 # drun-policy: allow unenforced-key\n", &r), "lint_run");
    CHECK_INT(r.findings.n, 1, "one finding in force");
    CHECK_INT(r.suppressed.n, 1, "one suppressed");
    CHECK(!r.rejected && lint_exit_status(&r, false) == 0 && lint_exit_status(&r, true) == 1,
          "warnings: exit 0, or 1 with --strict");
    buf_t b = BUF_INIT;
    lint_render_text(&r, &b, false);
    CHECK(strstr(buf_cstr(&b), "t.toml:1:21: warning: ") && strstr(buf_cstr(&b), "[wildcard-domain]\n") &&
              strstr(buf_cstr(&b), "t.toml: 0 errors, 1 warning, 0 notes (1 suppressed)\n"),
          "text: gcc-style, then the summary");
    buf_truncate(&b, 0);
    lint_render_json(&r, &b);
    CHECK(strstr(buf_cstr(&b), "\"rule\": \"wildcard-domain\"") && strstr(buf_cstr(&b), "\"suppressed\": 1"), "json");
    buf_truncate(&b, 0);
    lint_render_sarif(&r, &b);
    CHECK(strstr(buf_cstr(&b), "\"version\": \"2.1.0\"") && strstr(buf_cstr(&b), "\"kind\": \"inSource\"") &&
              strstr(buf_cstr(&b), "\"startColumn\": 21"),
          "sarif: a result with its region, the suppressed one marked inSource");
    buf_free(&b);
    lint_report_free(&r);
    CHECK(run("a = [\n", &r) && r.rejected && lint_exit_status(&r, false) == 1, "a syntax error rejects: exit 1");
    lint_report_free(&r);

    facts_free(fx[0]);
    facts_free(fx[1]);
    return tap_done();
}
