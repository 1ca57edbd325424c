/* cmd_lint.c — `drun-policy lint [CONFIG] [--format text|json|sarif]
 * [--json-output FILE] [--sarif-output FILE] [--strict] [--facts FILE]...`:
 * the findings of lint.h on stdout, and the same report in JSON or SARIF in
 * FILE too (one run for the SARIF code scanning reads and the text a CI log
 * shows; each byte for byte what --format gives).
 * Exit: 0 no error; 1 errors (or warnings with --strict); 2 usage or I/O. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lint.h"

/* profiles/default.toml, embedded at build time (scripts/embed). */
extern const char default_policy_toml[];
extern const size_t default_policy_toml_len;

/* The config text lint reads: the same chain as policy_load (CONFIG,
 * $DRUN_CONFIG, ~/.drun/config.toml, the built-in default). */
static source_t *config_source(const char *path, char **err)
{
    if (path && strcmp(path, "builtin:default") == 0) path = NULL;
    else if (path) return source_read(path, err);
    else {
        const char *env = getenv("DRUN_CONFIG"), *home = getenv("HOME");
        if (env && *env) return source_read(env, err);
        if (home && *home == '/') {
            char *cand = xasprintf("%s/.drun/config.toml", home);
            struct stat st;
            source_t *s = NULL;
            if (stat(cand, &st) == 0) s = source_read(cand, err);
            else if (errno != ENOENT) *err = xasprintf("%s: %s", cand, strerror(errno));
            free(cand);
            if (s || *err) return s;
        }
    }
    return source_new("<default>", default_policy_toml, default_policy_toml_len);
}

/* Writes the report r in fmt ("json" or "sarif") to path; false with the
 * reason on stderr. The file is written whole or the run fails: exit 2, so
 * a CI step never uploads a cut report as if it were the lint's answer. */
static bool write_report(const lint_report_t *r, const char *fmt, const char *path)
{
    buf_t b = BUF_INIT;
    if (strcmp(fmt, "json") == 0) lint_render_json(r, &b);
    else lint_render_sarif(r, &b);
    errno = 0;
    FILE *f = fopen(path, "w");
    bool ok = f && fwrite(b.p ? b.p : "", 1, b.len, f) == b.len;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (!ok) fprintf(stderr, "drun-policy lint: --%s-output %s: %s\n", fmt, path, strerror(saved ? saved : EIO));
    buf_free(&b);
    return ok;
}

int cmd_lint(const cli_args_t *a)
{
    buf_t out = BUF_INIT;
    if (a->list_rules) {
        lint_render_rules(&out, a->format && strcmp(a->format, "json") == 0);
        fwrite(out.p, 1, out.len, stdout);
        buf_free(&out);
        return EXIT_OK;
    }
    char *err = NULL;
    source_t *src = config_source(a->pos[0], &err);
    if (!src) {
        fprintf(stderr, "drun-policy lint: %s\n", err);
        free(err);
        return EXIT_USAGE;
    }
    lint_opts_t o = {{a->facts[0], a->facts[1]}, {NULL, NULL}};
    lint_report_t r;
    if (!lint_run(src, &o, &r, &err)) {
        fprintf(stderr, "drun-policy lint: %s\n", err);
        free(err);
        return EXIT_USAGE;
    }
    const char *fmt = a->format ? a->format : "text";
    if (strcmp(fmt, "json") == 0) lint_render_json(&r, &out);
    else if (strcmp(fmt, "sarif") == 0) lint_render_sarif(&r, &out);
    else lint_render_text(&r, &out, diag_want_color(stdout));
    fwrite(out.p ? out.p : "", 1, out.len, stdout);
    buf_free(&out);
    int rc = lint_exit_status(&r, a->strict);
    if ((a->json_out && !write_report(&r, "json", a->json_out)) ||
        (a->sarif_out && !write_report(&r, "sarif", a->sarif_out)))
        rc = EXIT_USAGE;
    lint_report_free(&r);
    return rc;
}
