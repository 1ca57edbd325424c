/* explain_overview.c — `drun-policy explain` with no question: the whole
 * policy grouped for a reviewer (writable, read-only, hidden, protected,
 * network, commands, limits, environment, unenforced keys), as text and as
 * JSON (explain.h).
 */
#include "explain_int.h"

#include <stdlib.h>
#include <string.h>

#include "cmdlist.h"
#include "domain.h"
#include "jsonw.h"
#include "keys.h"
#include "netaddr.h"

/* ---- the whole policy ----------------------------------------------------------------------------------------------- */

/* "file:line" of a config span, or "" for a default. */
static const char *at(explain_t *e, span_t span, bool present)
{
    if (!present || !e->pol->src) return "";
    srcpos_t p = source_pos(e->pol->src, span.start);
    buf_t b = BUF_INIT;
    buf_printf(&b, "%s:%u", e->pol->src->name, p.line);
    const char *s = arena_strdup(&e->a, buf_cstr(&b));
    buf_free(&b);
    return s;
}

static void section(buf_t *out, const char *title) { buf_printf(out, "\n%s\n", title); }

/* One line of a list: the thing, padded, then where it comes from. */
static void item(buf_t *out, const char *what, const char *from)
{
    buf_printf(out, "  %-34s %s\n", what, from);
}

/* What a grant is called and where it comes from. */
static void grant_from(explain_t *e, const rrule_t *g, buf_t *out)
{
    const rule_t *r = g->rule;
    if (r->src) buf_printf(out, "%s, %s", policy_rule_kind_key(r->kind), at(e, r->span, true));
    else if (r->kind == RK_WORKSPACE) buf_printf(out, "the session workspace (here %s)", e->roots[TARGET_LINUX].workspace);
    else if (r->kind == RK_SCRATCH) buf_adds(out, "the session scratch dir: HOME and TMPDIR in the sandbox");
    else buf_adds(out, r->origin ? r->origin : policy_rule_kind_key(r->kind));
}

static const char *grant_name(explain_t *e, const rrule_t *g)
{
    const rule_t *r = g->rule;
    if (r->kind == RK_WORKSPACE) return "${WORKSPACE}";
    if (r->kind == RK_SCRATCH) return "${SCRATCH}";
    const char *name = r->src ? r->written : show(e, TARGET_LINUX, g->path);
    if (g->base == PB_ROOT && strcmp(g->lexical, g->path) != 0) {
        buf_t b = BUF_INIT;
        buf_printf(&b, "%s -> %s", name, show(e, TARGET_LINUX, g->path));
        name = arena_strdup(&e->a, buf_cstr(&b));
        buf_free(&b);
    }
    return name;
}

/* Config grants and session roots by the level they end up with (Linux). */
static void overview_grants(explain_t *e, buf_t *out, level_t want, const char *title)
{
    const resolved_t *r = e->res[TARGET_LINUX];
    section(out, title);
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        if (g->rule->kind == RK_SYSTEM || g->rule->kind == RK_PATH_DIR) continue;
        verdict_t v;
        level_t lvl = lattice_level_of(r, &e->roots[TARGET_LINUX], lattice_rule_abs(g, &e->roots[TARGET_LINUX], &e->a), &v);
        if (lvl != want) continue;
        buf_t from = BUF_INIT;
        grant_from(e, g, &from);
        if (lvl < g->level) {
            const rrule_t *low = NULL;
            for (unsigned k = 0; k < v.ncaps; k++)
                if (!low || v.caps[k]->level < low->level) low = v.caps[k];
            if (low) buf_printf(&from, " (gives %s, capped by %s \"%s\")", policy_level_name(g->level),
                                low->rule->src ? policy_rule_kind_key(low->rule->kind) : low->rule->origin, low->rule->written);
        }
        item(out, grant_name(e, g), buf_cstr(&from));
        buf_free(&from);
    }
    if (want == LVL_NONE) {
        for (size_t i = 0; i < r->caps.n; i++) {
            const rrule_t *c = &r->caps.v[i];
            if (c->level != LVL_NONE) continue;
            buf_t from = BUF_INIT;
            if (c->rule->kind == RK_RUNTIME) /* SPEC §13: the runner hides it at every run (Linux) */
                buf_printf(&from, "runtime-owned, Linux: %s", c->rule->origin);
            else
                buf_printf(&from, "%s (glob), %s", policy_rule_kind_key(c->rule->kind), at(e, c->rule->span, c->rule->src != NULL));
            item(out, c->rule->kind == RK_RUNTIME ? explain_show_path(r, NULL, c->path, &e->a) : c->rule->written,
                 buf_cstr(&from));
            buf_free(&from);
        }
        item(out, "everything else", "no grant: not in the sandbox at all");
    }
}

/* The built-in read set of one target, on one line. */
static void overview_system(explain_t *e, buf_t *out, target_t t)
{
    const resolved_t *r = e->res[t];
    buf_t sys = BUF_INIT, pth = BUF_INIT;
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        buf_t *b = g->rule->kind == RK_SYSTEM ? &sys : (g->rule->kind == RK_PATH_DIR ? &pth : NULL);
        if (b) buf_printf(b, "%s%s", b->len ? " " : "", show(e, t, g->path));
    }
    for (size_t i = 0; t == TARGET_LINUX && i < r->facts->root_links.n; i++)
        buf_printf(&sys, " %s->%s", r->facts->root_links.v[i].link, r->facts->root_links.v[i].target);
    buf_printf(out, "  %-7s system: %s\n", facts_target_name(t), buf_cstr(&sys));
    if (pth.len) buf_printf(out, "  %-7s $PATH:  %s\n", "", buf_cstr(&pth));
    buf_free(&sys);
    buf_free(&pth);
}

/* When the Linux facts say the access-time layer (SPEC §16) cannot be used
 * there: what the mount fallback loses. Nothing when the facts do not say
 * (older facts files) or no cap is a glob. */
static void fs_layer_fallback(const resolved_t *r, buf_t *out)
{
    if (!r->facts || r->facts->fs_layer != 0) return;
    bool globs = false;
    for (size_t i = 0; i < r->caps.n && !globs; i++) globs = r->caps.v[i].glob;
    if (!globs) return;
    buf_t b = BUF_INIT;
    buf_printf(&b, "held only where a mount could be placed: the access-time filesystem layer cannot be used on this "
                   "host (%s; facts), so runs fall back to mounts: the glob caps (these and the deny_read globs) hold "
                   "only at the depth scanned when a run starts, and names created later in new or other directories "
                   "are not covered (lint: unenforceable-on-target)",
               r->facts->fs_layer_why ? r->facts->fs_layer_why : "unknown");
    item(out, "linux, at depth", buf_cstr(&b));
    buf_free(&b);
}

static void overview_protect(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    const resolved_t *r = e->res[TARGET_LINUX];
    section(out, "Write-protected (read-only even inside writable paths, and when they do not exist yet)");
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        if (c->rule->kind != RK_DENY_WRITE) continue;
        buf_t from = BUF_INIT;
        buf_printf(&from, "filesystem.deny_write%s, %s", c->glob ? " (glob)" : "", at(e, c->rule->span, true));
        item(out, c->rule->written, buf_cstr(&from));
        buf_free(&from);
    }
    static const setting_id_t prot[] = {S_PROTECT_GIT_HOOKS, S_PROTECT_GIT_CONFIG, S_PROTECT_SHELL_RC,
                                        S_PROTECT_EDITOR_DIRS, S_PROTECT_AGENT_CONFIG};
    for (size_t k = 0; k < sizeof prot / sizeof *prot; k++) {
        const setting_info_t *si = &policy_settings[prot[k]];
        buf_t names = BUF_INIT;
        char origin[64];
        snprintf(origin, sizeof origin, "protect.%s", si->key);
        for (size_t i = 0; i < r->caps.n; i++)
            if (r->caps.v[i].rule->origin && strcmp(r->caps.v[i].rule->origin, origin) == 0)
                buf_printf(&names, "%s%s", names.len ? " " : "", r->caps.v[i].rule->written);
        if (policy_get(p, prot[k])) {
            item(out, origin, buf_cstr(&names));
        } else {
            buf_t off = BUF_INIT;
            buf_printf(&off, "OFF (%s = false, %s): %s", si->key, at(e, p->set[prot[k]].span, p->set[prot[k]].present),
                       si->doc);
            item(out, origin, buf_cstr(&off));
            buf_free(&off);
        }
        buf_free(&names);
    }
    fs_layer_fallback(r, out);
}

static void overview_network(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    section(out, "Network");
    if (!p->command_domains.n) {
        item(out, "sandboxed commands", "none: linux runs them in a new network namespace, the macOS profile has no "
                                        "network rule");
    } else { /* SPEC §15: through the runner's proxy only */
        buf_t cd = BUF_INIT;
        for (size_t i = 0; i < p->command_domains.n; i++)
            buf_printf(&cd, "%s%s", i ? ", " : "", p->command_domains.v[i].written);
        buf_adds(&cd, " (HTTP and HTTPS through the runner's proxy, ports");
        for (size_t i = 0; i < p->command_ports.n; i++) buf_printf(&cd, "%s %d", i ? "," : "", p->command_ports.v[i]);
        buf_adds(&cd, policy_get(p, S_ALLOW_PRIVATE_ADDRESSES) ? "; private addresses ALLOWED)"
                                                               : "; private addresses refused)");
        item(out, "sandboxed commands may reach", buf_cstr(&cd));
        buf_free(&cd);
    }
    if (policy_get(p, S_PACKAGE_INSTALL_ENABLED)) {
        buf_t pk = BUF_INIT;
        for (int m = 0; m < 2; m++) {
            buf_adds(&pk, m ? "; npm: " : "pip: ");
            for (size_t i = 0; i < p->registries[m].n; i++)
                buf_printf(&pk, "%s%s", i ? ", " : "", p->registries[m].v[i].written);
            if (!p->registries[m].n) buf_adds(&pk, "nothing");
        }
        buf_adds(&pk, " (plus command_domains)");
        item(out, "session_package_install may reach", buf_cstr(&pk));
        buf_free(&pk);
    }
    item(out, "AF_UNIX sockets (linux)",
         policy_get(p, S_ALLOW_UNIX_SOCKETS)
             ? "allowed ([network] allow_unix_sockets = true)"
             : "new ones denied by the seccomp filter");
    item(out, "other sockets (linux)", "AF_INET and AF_INET6 (loopback only) and route netlink; every other family "
                                       "(AF_VSOCK, AF_PACKET, AF_ALG, ...) refused by the seccomp filter");
    buf_t hosts = BUF_INIT;
    for (size_t i = 0; i < p->domains.n; i++) {
        const domain_rule_t *d = &p->domains.v[i];
        buf_printf(&hosts, "%s%s", i ? ", " : "", d->written);
    }
    if (!p->domains.n) buf_adds(&hosts, "nothing (domain_allowlist is empty)");
    else if (!p->domains_present) buf_adds(&hosts, " (drun's defaults: no domain_allowlist)");
    item(out, "session_fetch may reach", buf_cstr(&hosts));
    buf_free(&hosts);
    if (p->domains.n) {
        item(out, "  private addresses",
             policy_get(p, S_ALLOW_PRIVATE_ADDRESSES)
                 ? "ALLOWED: loopback, private, link-local and metadata addresses"
                 : "refused (loopback, RFC 1918, link-local, ULA, cloud metadata)");
        buf_t lim = BUF_INIT;
        buf_printf(&lim, "%lld bytes per body; connect %lld ms, whole fetch %lld ms",
                   (long long)policy_get(p, S_FETCH_MAX_BYTES), (long long)policy_get(p, S_CONNECT_TIMEOUT_MS),
                   (long long)policy_get(p, S_FETCH_TIMEOUT_MS));
        item(out, "  limits", buf_cstr(&lim));
        buf_free(&lim);
    }
}

static void str_list(buf_t *b, const str_entry_t *v, size_t n, const char *empty)
{
    for (size_t i = 0; i < n; i++) buf_printf(b, "%s\"%s\"", i ? ", " : "", v[i].s);
    if (!n) buf_adds(b, empty);
}

static void overview_commands(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    section(out, "Commands (session_bash: a guardrail checked before a command starts; the sandbox is the boundary)");
    buf_t b = BUF_INIT;
    str_list(&b, p->cmd_allow.v, p->cmd_allow.n, "any command (no allowlist)");
    item(out, "allowed", buf_cstr(&b));
    buf_truncate(&b, 0);
    str_list(&b, p->cmd_deny.v, p->cmd_deny.n, "nothing (no denylist)");
    item(out, "denied", buf_cstr(&b));
    buf_free(&b);
}

static bool is_limit(setting_id_t id)
{
    return !policy_settings[id].boolean;
}

static void overview_limits(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    section(out, "Limits");
    for (int i = 0; i < S_COUNT; i++) {
        const setting_info_t *si = &policy_settings[i];
        if (!is_limit((setting_id_t)i) || !si->enforced) continue;
        char key[64], val[64];
        snprintf(key, sizeof key, "%s%s%s", si->table ? si->table : "", si->table ? "." : "", si->key);
        snprintf(val, sizeof val, "%lld%s%s", (long long)p->set[i].v, *si->unit ? " " : "", si->unit);
        buf_t from = BUF_INIT;
        buf_printf(&from, "%-16s %s%s%s", val, si->doc, p->set[i].present ? ", " : " (default)",
                   at(e, p->set[i].span, p->set[i].present));
        item(out, key, buf_cstr(&from));
        buf_free(&from);
    }
}

static void overview_env(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    section(out, "Environment (sandboxed commands start from an empty one)");
    item(out, "fixed",
         policy_get(p, S_READ_PATH_DIRS) ? "PATH = the host's $PATH directories, HOME = TMPDIR = ${SCRATCH}"
                                         : "PATH = /usr/local/bin:/usr/bin:/bin, HOME = TMPDIR = ${SCRATCH}");
    buf_t b = BUF_INIT;
    str_list(&b, p->env_passthrough.v, p->env_passthrough.n, "nothing");
    item(out, "copied from the host", buf_cstr(&b));
    buf_truncate(&b, 0);
    for (size_t i = 0; i < p->env_set.n; i++)
        buf_printf(&b, "%s%s=\"%s\"", i ? ", " : "", p->env_set.v[i].name, p->env_set.v[i].value);
    if (!p->env_set.n) buf_adds(&b, "nothing");
    item(out, "set", buf_cstr(&b));
    buf_truncate(&b, 0);
    str_list(&b, p->env_allowlist.v, p->env_allowlist.n, "nothing");
    item(out, "session_get_env may reveal", buf_cstr(&b));
    buf_free(&b);
}

static void overview_unenforced(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    buf_t b = BUF_INIT;
    for (int i = 0; i < S_COUNT; i++)
        if (!policy_settings[i].enforced && p->set[i].present)
            buf_printf(&b, "%s%s = %lld", b.len ? ", " : "", policy_settings[i].key, (long long)p->set[i].v);
    const toml_value *root = p->doc ? toml_root(p->doc) : NULL;
    static const char *const strs[] = {"mount_overlay_paths", "export_root", "snapshots_dir"};
    for (size_t i = 0; i < 3; i++)
        if (root && toml_get(root, strs[i])) buf_printf(&b, "%s%s", b.len ? ", " : "", strs[i]);
    if (b.len) {
        section(out, "Accepted for drun compatibility, not enforced by drun-mcp");
        buf_printf(out, "  %s\n", buf_cstr(&b));
    }
    buf_free(&b);
}

void explain_overview(explain_t *e, buf_t *out)
{
    const policy_t *p = e->pol;
    buf_printf(out, "Policy %s%s\n", p->path ? p->path : (p->src ? p->src->name : "<default>"),
               p->is_default ? " (the built-in default policy)" : "");
    for (int t = 0; t < 2; t++)
        buf_printf(out, "  %-7s facts from %s (home %s); workspace %s\n", facts_target_name((target_t)t), e->facts_from[t],
                   e->facts[t]->home, e->roots[t].workspace);
    buf_printf(out, "  scratch dir: %s (explain's choice; every session gets a fresh one)\n",
               explain_show_path(e->res[TARGET_LINUX], NULL, e->roots[TARGET_LINUX].scratch, &e->a));
    buf_printf(out, "  levels: the deepest grant on a path decides; caps only lower; shown for linux, paths as "
                    "written\n");
    overview_grants(e, out, LVL_WRITE, "Writable (read and write)");
    overview_grants(e, out, LVL_READ, "Read-only");
    overview_system(e, out, TARGET_LINUX);
    overview_system(e, out, TARGET_MACOS);
    overview_grants(e, out, LVL_NONE, "Hidden (no access, whatever grant is above)");
    overview_protect(e, out);
    overview_network(e, out);
    overview_commands(e, out);
    overview_limits(e, out);
    overview_env(e, out);
    overview_unenforced(e, out);
    if (!e->bw || !e->sbpl) {
        section(out, "Compile problems");
        if (!e->bw) buf_printf(out, "  linux: %s\n", e->bw_err ? e->bw_err : "the sandbox could not be planned");
        if (!e->sbpl) buf_adds(out, "  macos: policy.sb could not be built (a path holds a control character)\n");
    }
}

/* The overview's sections as JSON: {"title", "lines"}, the lines as the text
 * shows them (two-space indent dropped), so the two forms never disagree. */
static void overview_sections_json(const char *text, jw_t *j)
{
    const char *s = strstr(text, "\n\n"); /* the blank line that ends the header block */
    if (s) s++;
    jw_arr(j);
    bool open = false;
    while (s && *s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (n == 0) { /* a blank line: the next line is a section's title */
            if (open) jw_end(j), jw_end(j);
            open = false;
            s = nl ? nl + 1 : NULL;
            if (!s || !*s) break;
            nl = strchr(s, '\n');
            n = nl ? (size_t)(nl - s) : strlen(s);
            jw_obj(j);
            jw_key(j, "title");
            jw_strn(j, s, n);
            jw_key(j, "lines");
            jw_arr(j);
            open = true;
        } else if (open) {
            size_t skip = n >= 2 && s[0] == ' ' && s[1] == ' ' ? 2 : 0;
            jw_strn(j, s + skip, n - skip);
        }
        s = nl ? nl + 1 : NULL;
    }
    if (open) jw_end(j), jw_end(j);
    jw_end(j);
}

void explain_overview_json(explain_t *e, struct jw *j)
{
    const policy_t *p = e->pol;
    buf_t text = BUF_INIT;
    explain_overview(e, &text);
    jw_obj(j);
    jw_key(j, "policy");
    jw_str(j, p->path ? p->path : (p->src ? p->src->name : "<default>"));
    jw_key(j, "default");
    jw_bool(j, p->is_default);
    jw_key(j, "targets");
    jw_obj(j);
    for (int t = 0; t < 2; t++) {
        jw_key(j, facts_target_name((target_t)t));
        jw_obj(j);
        jw_key(j, "facts");
        jw_str(j, e->facts_from[t]);
        jw_key(j, "home");
        jw_str(j, e->facts[t]->home);
        jw_key(j, "workspace");
        jw_str(j, e->roots[t].workspace);
        jw_end(j);
    }
    jw_end(j);
    jw_key(j, "scratch");
    jw_str(j, explain_show_path(e->res[TARGET_LINUX], NULL, e->roots[TARGET_LINUX].scratch, &e->a));
    jw_key(j, "plan");
    jw_str(j, e->bw_exec ? "exec" : "template");
    jw_key(j, "sections");
    overview_sections_json(buf_cstr(&text), j);
    jw_end(j);
    buf_free(&text);
}
