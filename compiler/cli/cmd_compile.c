/* cmd_compile.c — `drun-policy compile CONFIG [-o DIR] [--target T]
 * [--facts FILE] [--json]`. --json replaces the printed artifacts with one
 * object saying what was (or, without -o, would be) written, with hashes;
 * its fields are documented in docs/artifacts.md and stay stable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"
#include "digest.h"
#include "jsonw.h"

static void print_artifact(const char *name, const buf_t *b, bool header)
{
    if (header) printf("==> %s <==\n", name);
    fwrite(b->p ? b->p : "", 1, b->len, stdout);
}

/* One artifact of the --json report: name, target, path, bytes, sha256. */
static void json_artifact(jw_t *j, const char *name, const char *target, const buf_t *b, const char *dir)
{
    char hex[65];
    digest_sha256_hex(b->p ? b->p : "", b->len, hex);
    jw_obj(j);
    jw_key(j, "name");
    jw_str(j, name);
    jw_key(j, "target");
    jw_str(j, target);
    jw_key(j, "path");
    if (dir) {
        char *path = xasprintf("%s/%s", dir, name);
        jw_str(j, path);
        free(path);
    } else {
        jw_null(j);
    }
    jw_key(j, "bytes");
    jw_int(j, (int64_t)b->len);
    jw_key(j, "sha256");
    jw_str(j, hex);
    jw_end(j);
}

/* The --json report, in the order compile_write writes the files. */
static void print_json(const policy_t *p, const compiled_t *c, const char *dir)
{
    buf_t b = BUF_INIT;
    jw_t j;
    jw_init(&j, &b, true);
    jw_obj(&j);
    jw_key(&j, "config");
    jw_str(&j, p->is_default ? "builtin:default" : p->path);
    jw_key(&j, "output");
    jw_str(&j, dir);
    jw_key(&j, "written");
    jw_bool(&j, dir != NULL);
    jw_key(&j, "targets");
    jw_arr(&j);
    if (c->bwrap) jw_str(&j, "linux");
    if (c->sbpl) jw_str(&j, "macos");
    jw_end(&j);
    jw_key(&j, "artifacts");
    jw_arr(&j);
    if (c->sbpl) json_artifact(&j, "policy.sb", "macos", &c->sbpl->text, dir);
    if (c->bwrap) {
        json_artifact(&j, "bwrap.args", "linux", &c->bwrap_args, dir);
        json_artifact(&j, "seccomp.bpf", "linux", &c->seccomp, dir);
        json_artifact(&j, "seccomp.txt", "linux", &c->seccomp_txt, dir);
    }
    json_artifact(&j, "policy.json", NULL, &c->manifest, dir);
    jw_end(&j);
    jw_end(&j);
    buf_addc(&b, '\n');
    fwrite(b.p, 1, b.len, stdout);
    buf_free(&b);
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
    } else if (a->out_dir && !compile_write(c, a->out_dir, &err)) {
        fprintf(stderr, "drun-policy compile: %s\n", err);
        rc = EXIT_USAGE;
    } else if (a->json) {
        print_json(p, c, a->out_dir);
    } else if (!a->out_dir) {
        /* no -o: the artifacts on stdout (one target: just its profile) */
        bool one = o.linux_target != o.macos_target;
        if (c->sbpl) print_artifact("policy.sb", &c->sbpl->text, !one);
        if (c->bwrap) print_artifact("bwrap.args", &c->bwrap_args, !one);
        if (!one) print_artifact("policy.json", &c->manifest, true);
    }
    free(err);
    diag_list_free(&d);
    compile_free(c);
    policy_free(p);
    return rc;
}
