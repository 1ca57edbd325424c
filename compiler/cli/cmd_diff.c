/* cmd_diff.c — `drun-policy diff OLD NEW [--json] [--facts FILE]...`: what
 * the change grants and revokes, then the artifact diff. Both policies are
 * compiled under NEW's file name, so the artifact diff shows what changed in
 * them, not that the two files have different names. Exit: 0 nothing
 * changed, 1 something did, 2 usage or I/O error (also for a config error
 * in either file, which is printed). "builtin:default" names the embedded
 * default policy on either side, as it does for the other commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"

/* profiles/default.toml, embedded at build time (scripts/embed). */
extern const char default_policy_toml[];
extern const size_t default_policy_toml_len;

static bool is_builtin(const char *path) { return strcmp(path, "builtin:default") == 0; }

/* The text of path: the file, or the embedded default for builtin:default. */
static source_t *read_source(const char *path, char **err)
{
    if (is_builtin(path)) return source_new("<default>", default_policy_toml, default_policy_toml_len);
    return source_read(path, err);
}

static policy_t *load_as(const char *path, const char *name, int *rc)
{
    char *err = NULL;
    source_t *src = read_source(path, &err);
    if (!src) {
        fprintf(stderr, "drun-policy diff: %s\n", err);
        free(err);
        *rc = EXIT_USAGE;
        return NULL;
    }
    free(src->name);
    src->name = xstrdup(name);
    diag_list_t d = {0};
    policy_t *p = policy_build(src, TOML_1_1, &d);
    if (!p) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, diag_want_color(stderr));
        fprintf(stderr, "%sdrun-policy diff: %s does not compile (as printed above)\n", buf_cstr(&b), path);
        buf_free(&b);
        *rc = EXIT_USAGE;
    } else if (is_builtin(path)) {
        p->is_default = true; /* as policy_default() leaves it: no path */
    } else {
        p->path = arena_strdup(&p->arena, path);
    }
    diag_list_free(&d);
    return p;
}

int cmd_diff(const cli_args_t *a)
{
    int rc = EXIT_OK;
    policy_t *old = load_as(a->pos[0], a->pos[1], &rc);
    policy_t *new_ = old ? load_as(a->pos[1], a->pos[1], &rc) : NULL;
    if (!old || !new_) {
        policy_free(old);
        return rc;
    }
    diff_opts_t o = {{a->facts[0], a->facts[1]}, {NULL, NULL}, a->pos[0], a->pos[1]};
    buf_t out = BUF_INIT;
    char *err = NULL;
    int r = diff_policies(old, new_, &o, a->json, &out, &err);
    if (r < 0) {
        fprintf(stderr, "drun-policy diff: %s\n", err);
        free(err);
        rc = EXIT_USAGE;
    } else {
        fwrite(out.p ? out.p : "", 1, out.len, stdout);
        rc = r ? EXIT_REJECTED : EXIT_OK;
    }
    buf_free(&out);
    policy_free(old);
    policy_free(new_);
    return rc;
}
