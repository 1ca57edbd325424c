/* policy.c — the policy IR's accessors and its destructor. Built by
 * build.c (TOML -> IR), found and loaded by load.c. */
#include "policy.h"

#include "domain.h"

#include <stdlib.h>
#include <string.h>

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
