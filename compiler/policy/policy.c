/* policy.c — finding, building and freeing policies; the embedded default. */
#include "policy.h"

#include "domain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

void policy_free(policy_t *p)
{
    if (!p) return;
    vec_free(&p->rules);
    vec_free(&p->domains);
    vec_free(&p->command_domains);
    vec_free(&p->command_ports);
    vec_free(&p->registries[0]);
    vec_free(&p->registries[1]);
    vec_free(&p->cmd_deny);
    vec_free(&p->cmd_allow);
    vec_free(&p->env_allowlist);
    vec_free(&p->env_passthrough);
    vec_free(&p->env_set);
    vec_free(&p->overlay_paths);
    if (p->doc) toml_doc_free(p->doc);
    source_free(p->src);
    arena_free(&p->arena);
    free(p);
}

int64_t policy_get(const policy_t *p, setting_id_t id) { return p->set[id].v; }

bool policy_domain_in(const domain_rule_t *v, size_t n, const char *host, const domain_rule_t **which)
{
    for (size_t i = 0; i < n; i++) {
        domain_entry_t e = {v[i].kind, (char *)v[i].pattern};
        if (domain_match(&e, host)) {
            if (which) *which = &v[i];
            return true;
        }
    }
    if (which) *which = NULL;
    return false;
}

bool policy_domain_allowed(const policy_t *p, const char *host, const domain_rule_t **which)
{
    return policy_domain_in(p->domains.v, p->domains.n, host, which);
}
