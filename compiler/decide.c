/* decide.c — the access decision shared by every enforcement point (see
 * decide.h): lattice_level_of() for the path, the deciding rule, and the
 * structural repository rule where the caller can look at the tree.
 */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

/* The cap that decided a lowered level: the first at the lowest level. */
static const rrule_t *lowest_cap(const verdict_t *v)
{
    const rrule_t *best = NULL;
    for (unsigned i = 0; i < v->ncaps; i++)
        if (v->caps[i]->level == v->level && (!best || v->caps[i]->level < best->level)) best = v->caps[i];
    return best;
}

/* The structural rule: a component "hooks" or "config" of abs (abs itself
 * or an ancestor) whose parent is a repository by its structure. Returns
 * the rule's name, or NULL. */
static const char *structural(const resolved_t *r, const char *abs, decide_repo_fn probe, void *ctx)
{
    bool hooks = policy_get(r->pol, S_PROTECT_GIT_HOOKS) != 0, config = policy_get(r->pol, S_PROTECT_GIT_CONFIG) != 0;
    if (!probe || (!hooks && !config)) return NULL;
    size_t n = strlen(abs);
    char *dir = xmalloc(n + 1); /* no length bound: a deep path is decided like any other */
    const char *found = NULL;
    /* each component, from the deepest: only two names can be protected */
    for (size_t end = n; end > 1;) {
        size_t start = end;
        while (start > 0 && abs[start - 1] != '/') start--;
        size_t len = end - start;
        bool is_hooks = hooks && len == 5 && memcmp(abs + start, "hooks", 5) == 0;
        bool is_config = config && len == 6 && memcmp(abs + start, "config", 6) == 0;
        if ((is_hooks || is_config) && start > 1) {
            memcpy(dir, abs, start - 1);
            dir[start - 1] = '\0';
            if (probe(ctx, dir)) {
                found = is_hooks ? "protect.git_hooks" : "protect.git_config";
                break;
            }
        }
        if (start == 0) break;
        end = start - 1;
    }
    free(dir);
    return found;
}

level_t decide_path(const resolved_t *r, const roots_t *roots, const char *abs, decide_repo_fn probe, void *ctx,
                    fs_verdict_t *out)
{
    verdict_t v;
    level_t lv = lattice_level_of(r, roots, abs, &v);
    fs_verdict_t fv = {lv, v.grant_level, lv < v.grant_level ? lowest_cap(&v) : v.grant, NULL};
    if (lv == LVL_WRITE) {
        const char *s = structural(r, abs, probe, ctx);
        if (s) {
            fv.level = LVL_READ;
            fv.rule = NULL;
            fv.builtin = s;
        }
    }
    if (out) *out = fv;
    return fv.level;
}

void decide_rule_text(const fs_verdict_t *v, buf_t *out)
{
    if (v->builtin) {
        /* a built-in that names its own reason is shown as it is */
        if (strchr(v->builtin, '(')) buf_adds(out, v->builtin);
        else buf_printf(out, "%s (a repository by its structure: a directory holding HEAD)", v->builtin);
        return;
    }
    const rrule_t *rr = v->rule;
    if (!rr) {
        buf_adds(out, "no grant covers it");
        return;
    }
    const rule_t *ru = rr->rule;
    if (ru->src) {
        srcpos_t p = source_pos(ru->src, ru->span.start);
        buf_printf(out, "%s:%u:%u %s \"%s\"", ru->src->name, p.line, p.col, policy_rule_kind_key(ru->kind), ru->written);
        return;
    }
    switch (ru->kind) {
    case RK_WORKSPACE: buf_adds(out, "the session workspace (always writable)"); return;
    case RK_SCRATCH: buf_adds(out, "the session scratch dir (always writable)"); return;
    case RK_SYSTEM: buf_printf(out, "the system read set \"%s\"", ru->written); return;
    case RK_PATH_DIR: buf_printf(out, "the $PATH directory \"%s\" (read_path_dirs)", ru->written); return;
    case RK_RUNTIME: buf_printf(out, "runtime-owned \"%s\" (%s)", ru->written, ru->origin); return;
    default: buf_printf(out, "%s \"%s\"", ru->origin ? ru->origin : policy_rule_kind_key(ru->kind), ru->written); return;
    }
}

bool decide_completes_repo_name(const char *name)
{
    return strcmp(name, "HEAD") == 0 || strcmp(name, "objects") == 0 || strcmp(name, "refs") == 0;
}

bool decide_redirects_repo_name(const char *name) { return strcmp(name, "commondir") == 0; }
