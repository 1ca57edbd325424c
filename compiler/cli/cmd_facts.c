/* cmd_facts.c — `drun-policy facts [--target linux|macos|all] [-o DIR]
 * [CONFIG]`: the host facts the compiler would use, as JSON (the shape
 * --facts reads: one object per target). With a CONFIG, the paths it names
 * are probed too. Several targets print like compile's artifacts (a
 * "==> facts-T.json <==" header each); -o DIR writes DIR/facts-T.json, the
 * names the golden directory uses. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "compile.h"
#include "fsutil.h"

/* One target's facts: printed (with a header when several), or written. */
static int emit(const policy_t *p, target_t t, const cli_args_t *a, bool header)
{
    const char *none[2] = {NULL, NULL};
    char *err = NULL;
    facts_t *f = compile_facts_for(p, t, none, &err);
    if (!f) {
        fprintf(stderr, "drun-policy facts: %s\n", err);
        free(err);
        return EXIT_USAGE;
    }
    buf_t b = BUF_INIT;
    facts_to_json(f, &b);
    int rc = EXIT_OK;
    char *name = xasprintf("facts-%s.json", facts_target_name(t));
    if (a->out_dir) {
        char *path = xasprintf("%s/%s", a->out_dir, name);
        if (!fsutil_write_atomic(path, b.p, b.len, &err)) {
            fprintf(stderr, "drun-policy facts: %s\n", err);
            free(err);
            rc = EXIT_USAGE;
        }
        free(path);
    } else {
        if (header) printf("==> %s <==\n", name);
        fwrite(b.p, 1, b.len, stdout);
    }
    free(name);
    buf_free(&b);
    facts_free(f);
    return rc;
}

int cmd_facts(const cli_args_t *a)
{
    const char *t = a->target ? a->target : "linux";
    bool all = strcmp(t, "all") == 0;
    if (a->out_dir && !fsutil_mkdirs(a->out_dir, 0755)) {
        fprintf(stderr, "drun-policy facts: %s: cannot create: %s\n", a->out_dir, strerror(errno));
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    policy_t *p = a->npos ? cli_load_policy("facts", a->pos[0], &rc) : policy_default();
    if (!p) return rc;
    if (all || strcmp(t, "linux") == 0) rc = emit(p, TARGET_LINUX, a, all);
    if (rc == EXIT_OK && (all || strcmp(t, "macos") == 0)) rc = emit(p, TARGET_MACOS, a, all);
    policy_free(p);
    return rc;
}
