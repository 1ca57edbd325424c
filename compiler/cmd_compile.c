/* cmd_compile.c — `drun-policy compile CONFIG [-o DIR] [--target T] [--facts FILE]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"

static void print_artifact(const char *name, const buf_t *b, bool header)
{
    if (header) printf("==> %s <==\n", name);
    fwrite(b->p ? b->p : "", 1, b->len, stdout);
}

int cmd_compile(const cli_args_t *a)
{
    int rc = EXIT_OK;
    policy_t *p = cli_load_policy("compile", a->pos[0], &rc);
    if (!p) return rc;
    const char *t = a->target ? a->target : "all";
    compile_opts_t o = {strcmp(t, "macos") != 0, strcmp(t, "linux") != 0, {a->facts[0], a->facts[1]}};
    diag_list_t d = {0};
    char *err = NULL;
    compiled_t *c = compile_policy(p, &o, &d, &err);
    if (!c) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, diag_want_color(stderr));
        fwrite(b.p ? b.p : "", 1, b.len, stderr);
        buf_free(&b);
        if (err) fprintf(stderr, "drun-policy compile: %s\n", err);
        rc = diag_count(&d, SEV_ERROR) ? EXIT_REJECTED : EXIT_USAGE;
    } else if (a->out_dir) {
        if (!compiled_write(c, a->out_dir, &err)) {
            fprintf(stderr, "drun-policy compile: %s\n", err);
            rc = EXIT_USAGE;
        }
    } else {
        /* no -o: the artifacts on stdout (one target: just its profile) */
        bool one = o.linux_target != o.macos_target;
        if (c->sbpl) print_artifact("policy.sb", &c->sbpl->text, !one);
        if (c->bwrap) print_artifact("bwrap.args", &c->bwrap_args, !one);
        if (!one) print_artifact("policy.json", &c->manifest, true);
    }
    free(err);
    diag_list_free(&d);
    compiled_free(c);
    policy_free(p);
    return rc;
}
