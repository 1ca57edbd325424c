/* tool_policy.c — get_policy: the policy in force, where it came from, the
 * reload counters, and the diagnostic of a config that does not compile. */
#include <stdlib.h>
#include <string.h>

#include "drun_policy.h"
#include "sesstools.h"
#include "tools.h"

static void add_entries(json_t *obj, const char *key, const str_entry_t *v, size_t n)
{
    json_t *a = jsonrpc_add_array(obj, key);
    for (size_t i = 0; i < n; i++)
        tools_json_bytes(a, NULL, v[i].s, strlen(v[i].s));
}

/* The runtime-owned paths (SPEC §13): built-in caps at none that no grant
 * lifts, the defaults below home and what this server registered (its state
 * dir, config, artifacts, token file). */
static void add_runtime_owned(json_t *fs)
{
    for (int reg = 0; reg < 2; reg++) {
        const char *why, *path;
        for (size_t i = 0; (path = reg ? lattice_owned_at(i, &why) : lattice_owned_default_at(i, &why)); i++) {
            json_t *o = json_object();
            json_object_set_new(o, "rule", jsonrpc_string(policy_rule_kind_key(RK_RUNTIME)));
            tools_json_bytes(o, "path", path, strlen(path));
            json_object_set_new(o, "level", jsonrpc_string(policy_level_name(LVL_NONE)));
            json_object_set_new(o, "cap", json_boolean(true));
            tools_json_bytes(o, "at", why, strlen(why));
            json_array_append_new(fs, o);
        }
    }
}

static void add_summary(tool_call_t *tc, json_t *out)
{
    const policy_t *p = tc->lp->pol;
    json_t *pol = jsonrpc_add_object(out, "policy");
    json_t *set = jsonrpc_add_object(pol, "settings");
    for (int i = 0; i < S_COUNT; i++) {
        const setting_info_t *si = &policy_settings[i];
        char *key = si->table ? xasprintf("%s.%s", si->table, si->key) : xstrdup(si->key);
        if (si->boolean)
            json_object_set_new(set, key, json_boolean(p->set[i].v != 0));
        else
            json_object_set_new(set, key, json_integer(p->set[i].v));
        free(key);
    }
    json_t *doms = jsonrpc_add_array(pol, "domain_allowlist");
    for (size_t i = 0; i < p->domains.n; i++)
        tools_json_bytes(doms, NULL, p->domains.v[i].written, strlen(p->domains.v[i].written));
    add_entries(pol, "bash_command_denylist", p->cmd_deny.v, p->cmd_deny.n);
    add_entries(pol, "bash_command_allowlist", p->cmd_allow.v, p->cmd_allow.n);
    add_entries(pol, "env_allowlist", p->env_allowlist.v, p->env_allowlist.n);
    add_entries(pol, "env_passthrough", p->env_passthrough.v, p->env_passthrough.n);
    json_t *fs = jsonrpc_add_array(pol, "filesystem");
    for (size_t i = 0; i < p->rules.n; i++) {
        const rule_t *r = &p->rules.v[i];
        json_t *o = json_object();
        json_object_set_new(o, "rule", jsonrpc_string(policy_rule_kind_key(r->kind)));
        tools_json_bytes(o, "path", r->written ? r->written : "", r->written ? strlen(r->written) : 0);
        json_object_set_new(o, "level", jsonrpc_string(policy_level_name(r->level)));
        json_object_set_new(o, "cap", json_boolean(r->cap));
        buf_t at = BUF_INIT;
        if (r->src)
            tools_where(tc, r->span, &at);
        else
            buf_adds(&at, r->origin ? r->origin : "built-in");
        tools_json_bytes(o, "at", at.p, at.len);
        buf_free(&at);
        json_array_append_new(fs, o);
    }
    add_runtime_owned(fs);
    /* what session_mount may read and session_export may write (an empty list: nothing) */
    json_t *mounts = jsonrpc_add_array(pol, "mount_allowlist");
    for (size_t i = 0; i < p->rules.n; i++)
        if (p->rules.v[i].kind == RK_MOUNT && p->rules.v[i].written)
            tools_json_bytes(mounts, NULL, p->rules.v[i].written, strlen(p->rules.v[i].written));
}

static void run_get_policy(tool_call_t *tc, const json_t *args)
{
    (void)args;
    reload_stats_t st;
    reload_get_stats(tc->srv->reload, &st);
    const char *state = !tc->lp ? "none" : (st.error ? "stale" : "ok");
    json_t *o = tc->out;
    json_object_set_new(o, "state", jsonrpc_string(state));
    json_object_set_new(o, "mode", jsonrpc_string(reload_mode_name(st.mode)));
    if (st.watched)
        tools_json_bytes(o, "watched", st.watched, strlen(st.watched));
    if (tc->lp) {
        char when[32];
        tools_iso_time(tc->lp->loaded_ms, when);
        tools_json_bytes(o, "source", tc->lp->source, strlen(tc->lp->source));
        json_object_set_new(o, "generation", json_integer(tc->lp->generation));
        json_object_set_new(o, "loaded_at", jsonrpc_string(when));
    }
    json_t *c = jsonrpc_add_object(o, "counters");
    json_object_set_new(c, "checks", json_integer(st.checks));
    json_object_set_new(c, "compiles", json_integer(st.compiles));
    json_object_set_new(c, "reloads", json_integer(st.reloads));
    json_object_set_new(c, "failures", json_integer(st.failures));
    json_object_set_new(c, "check_ns_total", json_integer(st.check_ns));
    if (st.error) {
        char when[32];
        tools_iso_time(st.error_ms, when);
        tools_json_bytes(o, "error", st.error, strlen(st.error));
        json_object_set_new(o, "error_at", jsonrpc_string(when));
    }
    json_object_set_new(o, "transport", jsonrpc_string(tc->srv->transport));
    json_object_set_new(o, "server_version", jsonrpc_string(DRUN_VERSION));
    json_object_set_new(o, "sessions_open", json_integer(sessions_count(tc->srv->sessions)));
    char *snaps = sesstools_snapshots_dir(tc);
    tools_json_bytes(o, "snapshots_dir", snaps, strlen(snaps));
    buf_printf(&tc->text, "Snapshots: %s (dark to every sandbox).\n", snaps);
    free(snaps);

    if (tc->lp)
        buf_printf(&tc->text, "Policy generation %llu from %s (%s mode), state %s.\n",
                   (unsigned long long)tc->lp->generation, tc->lp->source,
                   reload_mode_name(st.mode), state);
    else
        buf_printf(&tc->text, "No policy is in force (%s mode): the config has never "
                              "compiled.\n",
                   reload_mode_name(st.mode));
    buf_printf(&tc->text,
               "Config checks %llu, compiles %llu, reloads %llu, failed compiles %llu.\n",
               (unsigned long long)st.checks, (unsigned long long)st.compiles,
               (unsigned long long)st.reloads, (unsigned long long)st.failures);
    if (st.error)
        buf_printf(&tc->text, "The config does not compile:\n%s\n", st.error);
    if (tc->lp) {
        add_summary(tc, o);
        char *summary = jsonrpc_print(json_object_get(o, "policy"));
        buf_printf(&tc->text, "Policy: %s", summary);
        free(summary);
    }
    reload_stats_free(&st);
}

const tool_def_t tool_get_policy = {
    .name = "get_policy",
    .title = "Show the sandbox policy",
    .description =
        "Shows the policy in force: its settings, domain allowlist, command lists and "
        "filesystem rules with their config locations, where it was loaded from, how often "
        "the config was checked and recompiled, and the diagnostic (file:line:col) when the "
        "config on disk does not compile.",
    .input_schema = "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"state\": {\"type\": \"string\", \"enum\": [\"ok\", \"stale\", \"none\"], "
        "\"description\": \"ok: the config compiled; stale: it does not, the last good "
        "policy is in force; none: no policy ever compiled\"}, "
        "\"mode\": {\"type\": \"string\"}, \"watched\": {\"type\": \"string\"}, "
        "\"source\": {\"type\": \"string\"}, \"generation\": {\"type\": \"integer\"}, "
        "\"loaded_at\": {\"type\": \"string\"}, "
        "\"counters\": {\"type\": \"object\", \"properties\": {\"checks\": {\"type\": "
        "\"integer\"}, \"compiles\": {\"type\": \"integer\"}, \"reloads\": {\"type\": "
        "\"integer\"}, \"failures\": {\"type\": \"integer\"}, \"check_ns_total\": {\"type\": "
        "\"number\"}}}, "
        "\"error\": {\"type\": \"string\"}, \"error_at\": {\"type\": \"string\"}, "
        "\"transport\": {\"type\": \"string\"}, \"server_version\": {\"type\": \"string\"}, "
        "\"sessions_open\": {\"type\": \"integer\"}, "
        "\"snapshots_dir\": {\"type\": \"string\", \"description\": \"where session_snapshot "
        "writes and session_restore reads (inside the state dir)\"}, "
        "\"policy\": {\"type\": \"object\", \"properties\": {"
        "\"settings\": {\"type\": \"object\"}, "
        "\"domain_allowlist\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"bash_command_denylist\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"bash_command_allowlist\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"env_allowlist\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"env_passthrough\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"mount_allowlist\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, "
        "\"description\": \"host paths session_mount may copy from and session_export "
        "write to; empty: none\"}, "
        "\"filesystem\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": "
        "{\"rule\": {\"type\": \"string\"}, \"path\": {\"type\": \"string\"}, \"level\": "
        "{\"type\": \"string\"}, \"cap\": {\"type\": \"boolean\"}, \"at\": {\"type\": "
        "\"string\"}}}}}}}, "
        "\"required\": [\"state\", \"mode\", \"counters\"]}",
    .read_only = true,
    .run = run_get_policy,
};
