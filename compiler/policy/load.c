/* load.c — finding and loading a policy: the file named, $DRUN_CONFIG,
 * ~/.drun/config.toml, else the default embedded at build time. Above
 * build.c (it builds what it reads), so build.c and policy.c never call
 * each other in a circle.
 */
#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* profiles/default.toml, embedded at build time (scripts/embed). */
extern const char default_policy_toml[];
extern const size_t default_policy_toml_len;

policy_t *policy_default(void)
{
    diag_list_t d = {0};
    source_t *src = source_new("<default>", default_policy_toml, default_policy_toml_len);
    policy_t *p = policy_build(src, TOML_1_1, &d);
    if (!p) {
        /* The default is compiled and tested with every build: failing here
         * is a build defect, not an input error. */
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, false);
        fprintf(stderr, "drun: the built-in default policy does not compile:\n%s", buf_cstr(&b));
        abort();
    }
    diag_list_free(&d);
    p->is_default = true;
    return p;
}

static policy_t *load_file(const char *path, diag_list_t *diags, char **io_err)
{
    source_t *src = source_read(path, io_err);
    if (!src) return NULL;
    policy_t *p = policy_build(src, TOML_1_1, diags);
    if (p) p->path = arena_strdup(&p->arena, path);
    return p;
}

policy_t *policy_load(const char *path, diag_list_t *diags, char **io_err)
{
    *io_err = NULL;
    /* "builtin:default" names the embedded default even when a config exists */
    if (path && strcmp(path, "builtin:default") == 0) return policy_default();
    if (path) return load_file(path, diags, io_err);
    const char *env = getenv("DRUN_CONFIG");
    if (env && *env) return load_file(env, diags, io_err);
    const char *home = getenv("HOME");
    if (home && *home == '/') {
        char *cand = xasprintf("%s/.drun/config.toml", home);
        struct stat st;
        if (stat(cand, &st) == 0) {
            policy_t *p = load_file(cand, diags, io_err);
            free(cand);
            return p;
        }
        if (errno != ENOENT) {
            *io_err = xasprintf("%s: %s", cand, strerror(errno));
            free(cand);
            return NULL;
        }
        free(cand);
    }
    return policy_default();
}
