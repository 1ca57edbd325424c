/* cmd_facts.c — `drun-policy facts [--target linux|macos] [CONFIG]`: the host
 * facts the compiler would use, as JSON (the shape --facts reads). With a
 * CONFIG, the paths it names are probed too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"

int cmd_facts(const cli_args_t *a)
{
    target_t t = a->target && strcmp(a->target, "macos") == 0 ? TARGET_MACOS : TARGET_LINUX;
    if (a->target && strcmp(a->target, "all") == 0) {
        fprintf(stderr, "drun-policy facts: --target must be linux or macos\n");
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    policy_t *p = a->npos ? cli_load_policy("facts", a->pos[0], &rc) : policy_default();
    if (!p) return rc;
    const char *none[2] = {NULL, NULL};
    char *err = NULL;
    facts_t *f = facts_for(p, t, none, &err);
    if (!f) {
        fprintf(stderr, "drun-policy facts: %s\n", err);
        free(err);
        policy_free(p);
        return EXIT_USAGE;
    }
    buf_t b = BUF_INIT;
    facts_to_json(f, &b);
    fwrite(b.p, 1, b.len, stdout);
    buf_free(&b);
    facts_free(f);
    policy_free(p);
    return EXIT_OK;
}
