/* tool_session.c — create_session, session_list, session_close,
 * session_get_env: the session lifecycle and the environment allowlist. */
#include <stdlib.h>
#include <string.h>

#include "sesstools.h"
#include "tools.h"

#define SESSION_ID_SCHEMA                                                           \
    "\"session_id\": {\"type\": \"string\", \"minLength\": 32, \"maxLength\": 32, " \
    "\"description\": \"The ID create_session returned.\"}"

/* ---- create_session -------------------------------------------------------------------- */

static void add_limits(tool_call_t *tc, json_t *obj)
{
    json_t *l = jsonrpc_add_object(obj, "limits");
    static const struct {
        const char *key;
        setting_id_t id;
    } limits[] = {
        {"bash_timeout_ms", S_BASH_TIMEOUT_MS},
        {"max_workspace_mb", S_MAX_WORKSPACE_MB},
        {"session_idle_timeout_secs", S_SESSION_IDLE_TIMEOUT_SECS},
        {"max_sessions", S_MAX_SESSIONS},
        {"fetch_max_bytes", S_FETCH_MAX_BYTES},
    };
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
        json_object_set_new(l, limits[i].key, json_integer(tools_setting(tc, limits[i].id)));
}

static void run_create(tool_call_t *tc, const json_t *args)
{
    char *err = NULL;
    session_t *s = sessions_create(tc->srv->sessions, &tc->req->who,
                                   tools_setting(tc, S_MAX_SESSIONS), tools_arg_str(args, "label", ""),
                                   &err);
    if (!s) {
        tools_fail(tc, "%s", err);
        free(err);
        return;
    }
    /* Its checkpoint store, its mounts, checkpoint 1: all or nothing. */
    if (!sesstools_setup(tc, s, json_object_get(args, "mounts"))) {
        sessions_close(tc->srv->sessions, s->id, tc->req->who.principal, &err);
        free(err);
        sessions_put(s);
        return;
    }
    char when[32];
    tools_iso_time(s->created_ms, when);
    json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
    tools_json_bytes(tc->out, "label", s->label, strlen(s->label));
    tools_json_bytes(tc->out, "workspace", s->workspace, strlen(s->workspace));
    tools_json_bytes(tc->out, "scratch", s->scratch, strlen(s->scratch));
    json_object_set_new(tc->out, "created_at", jsonrpc_string(when));
    add_limits(tc, tc->out);
    buf_printf(&tc->text,
               "Session %s created. Pass session_id \"%s\" to the session_* tools; paths are "
               "relative to its workspace. Commands time out after %lld ms; the workspace may "
               "hold %lld MB; the session expires after %lld s without a call.",
               s->id, s->id, (long long)tools_setting(tc, S_BASH_TIMEOUT_MS),
               (long long)tools_setting(tc, S_MAX_WORKSPACE_MB),
               (long long)tools_setting(tc, S_SESSION_IDLE_TIMEOUT_SECS));
    sessions_put(s);
}

const tool_def_t tool_create_session = {
    .name = "create_session",
    .title = "Create a sandboxed session",
    .description =
        "Creates a session: a private workspace directory and scratch directory in which "
        "session_bash runs commands under the operator's sandbox policy and the file tools "
        "read and write. Returns the session_id the other session_* tools need.",
    .input_schema = "{\"type\": \"object\", \"properties\": {\"label\": {\"type\": \"string\", "
                    "\"maxLength\": 64, \"description\": \"An optional name shown by "
                    "session_list.\"}, \"mounts\": {\"type\": \"array\", \"maxItems\": 64, "
                    "\"items\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096}, "
                    "\"description\": \"host paths inside mount_allowlist copied into the "
                    "workspace, each at its basename (see session_mount)\"}}, "
                    "\"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\"}, \"label\": {\"type\": \"string\"}, "
        "\"workspace\": {\"type\": \"string\", \"description\": \"host path of the workspace\"}, "
        "\"scratch\": {\"type\": \"string\", \"description\": \"host path of the scratch dir "
        "(HOME and TMPDIR of commands)\"}, "
        "\"created_at\": {\"type\": \"string\"}, "
        "\"limits\": {\"type\": \"object\", \"properties\": {"
        "\"bash_timeout_ms\": {\"type\": \"integer\"}, \"max_workspace_mb\": {\"type\": "
        "\"integer\"}, \"session_idle_timeout_secs\": {\"type\": \"integer\"}, "
        "\"max_sessions\": {\"type\": \"integer\"}, \"fetch_max_bytes\": {\"type\": "
        "\"integer\"}}}, "
        "\"mounts\": {\"type\": \"array\", \"items\": {\"type\": \"object\"}}, "
        "\"checkpoint_id\": {\"type\": \"integer\"}}, "
        "\"required\": [\"session_id\", \"workspace\", \"scratch\", \"created_at\", \"limits\"]}",
    .needs_policy = true,
    .run = run_create,
};

/* ---- session_list ------------------------------------------------------------------------ */

static void run_list(tool_call_t *tc, const json_t *args)
{
    (void)args;
    session_info_t *v;
    /* The caller's own sessions only: an ID handed over still works, but
     * nobody learns another client's IDs from this list (SPEC §12). */
    size_t n = sessions_list(tc->srv->sessions, &tc->req->who, &v);
    json_t *arr = jsonrpc_add_array(tc->out, "sessions");
    buf_printf(&tc->text, "%zu open session%s of this client", n, n == 1 ? "" : "s");
    if (tc->lp)
        buf_printf(&tc->text, " (max_sessions %lld)", (long long)tools_setting(tc, S_MAX_SESSIONS));
    buf_adds(&tc->text, n ? ":\n" : ".");
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        char when[32];
        tools_iso_time(v[i].created_ms, when);
        json_object_set_new(o, "session_id", jsonrpc_string(v[i].id));
        tools_json_bytes(o, "label", v[i].label, strlen(v[i].label));
        tools_json_bytes(o, "workspace", v[i].workspace, strlen(v[i].workspace));
        json_object_set_new(o, "created_at", jsonrpc_string(when));
        json_object_set_new(o, "idle_secs", json_integer(v[i].idle_ms / 1000));
        json_object_set_new(o, "running_commands", json_integer(v[i].running));
        json_array_append_new(arr, o);
        buf_printf(&tc->text, "- %s%s%s%s created %s, idle %llds, %d command%s running\n",
                   v[i].id, *v[i].label ? " (" : "", v[i].label, *v[i].label ? ")" : "", when,
                   (long long)(v[i].idle_ms / 1000), v[i].running,
                   v[i].running == 1 ? "" : "s");
    }
    json_object_set_new(tc->out, "count", json_integer(n));
    if (tc->lp)
        json_object_set_new(tc->out, "max_sessions",
                            json_integer(tools_setting(tc, S_MAX_SESSIONS)));
    sessions_info_free(v, n);
}

const tool_def_t tool_session_list = {
    .name = "session_list",
    .title = "List sessions",
    .description = "Lists the sessions this client created (its MCP session) with their IDs, "
                   "labels, age and idle time. A session ID handed over by another client of "
                   "the same principal works in every tool but is not listed here.",
    .input_schema = "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"sessions\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\"}, \"label\": {\"type\": \"string\"}, "
        "\"workspace\": {\"type\": \"string\"}, \"created_at\": {\"type\": \"string\"}, "
        "\"idle_secs\": {\"type\": \"integer\"}, \"running_commands\": {\"type\": \"integer\"}}, "
        "\"required\": [\"session_id\", \"created_at\"]}}, "
        "\"count\": {\"type\": \"integer\"}, \"max_sessions\": {\"type\": \"integer\"}}, "
        "\"required\": [\"sessions\", \"count\"]}",
    .read_only = true,
    .run = run_list,
};

/* ---- session_close ----------------------------------------------------------------------- */

static void run_close(tool_call_t *tc, const json_t *args)
{
    const char *id = tools_arg_str(args, "session_id", "");
    char *err = NULL;
    if (!sessions_close(tc->srv->sessions, id, tc->req->who.principal, &err)) {
        tools_fail(tc, "%s", err);
        free(err);
        return;
    }
    json_object_set_new(tc->out, "session_id", jsonrpc_string(id));
    json_object_set_new(tc->out, "closed", json_boolean(true));
    buf_printf(&tc->text,
               "Session %s closed: its commands were stopped and its workspace and scratch "
               "directories removed.",
               id);
}

const tool_def_t tool_session_close = {
    .name = "session_close",
    .title = "Close a session",
    .description = "Closes a session: stops its running commands and deletes its workspace "
                   "and scratch directories. The session_id stops working.",
    .input_schema = "{\"type\": \"object\", \"properties\": {" SESSION_ID_SCHEMA "}, "
                    "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"closed\": {\"type\": \"boolean\"}}, \"required\": "
                     "[\"session_id\", \"closed\"]}",
    .destructive = true,
    .run = run_close,
};

/* ---- session_get_env --------------------------------------------------------------------- */

static bool allowlisted(const policy_t *p, const char *name)
{
    for (size_t i = 0; i < p->env_allowlist.n; i++)
        if (!strcmp(p->env_allowlist.v[i].s, name))
            return true;
    return false;
}

static void add_var(tool_call_t *tc, json_t *vars, json_t *unset, const char *name)
{
    /* Values come from drun-mcp's own environment, and only for names the
     * operator listed in env_allowlist: the sandbox itself starts from an
     * empty environment, so this tool is the one door for host values. */
    if (json_object_get(vars, name))
        return; /* asked twice */
    const char *v = getenv(name);
    if (v) {
        tools_json_bytes(vars, name, v, strlen(v));
        buf_printf(&tc->text, "%s=%s\n", name, v);
    } else {
        json_array_append_new(unset, jsonrpc_string(name));
        buf_printf(&tc->text, "%s is not set\n", name);
    }
}

static void run_get_env(tool_call_t *tc, const json_t *args)
{
    session_t *s = tools_session(tc, args);
    if (!s)
        return;
    const policy_t *p = tc->lp->pol;
    const json_t *names = json_object_get(args, "names");
    buf_t denied = BUF_INIT;
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
        if (!allowlisted(p, json_string_value(n)))
            buf_printf(&denied, "%s%s", denied.len ? ", " : "", json_string_value(n));
    if (denied.len) {
        buf_t allowed = BUF_INIT;
        for (i = 0; i < p->env_allowlist.n; i++)
            buf_printf(&allowed, "%s%s", i ? ", " : "", p->env_allowlist.v[i].s);
        tools_fail(tc,
                   "Not in env_allowlist: %s. Only these names may be read: %s. Ask the operator "
                   "to add a name to env_allowlist in the config if the task needs it.",
                   buf_cstr(&denied), allowed.len ? buf_cstr(&allowed) : "(none: the list is empty)");
        buf_free(&allowed);
        buf_free(&denied);
        sessions_put(s);
        return;
    }
    buf_free(&denied);
    json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
    json_t *vars = jsonrpc_add_object(tc->out, "variables");
    json_t *unset = jsonrpc_add_array(tc->out, "unset");
    json_t *allow = jsonrpc_add_array(tc->out, "allowlist");
    for (i = 0; i < p->env_allowlist.n; i++)
        json_array_append_new(allow, jsonrpc_string(p->env_allowlist.v[i].s));
    if (names) {
        json_array_foreach(names, i, n) add_var(tc, vars, unset, json_string_value(n));
    } else {
        for (i = 0; i < p->env_allowlist.n; i++)
            add_var(tc, vars, unset, p->env_allowlist.v[i].s);
        if (!p->env_allowlist.n)
            buf_adds(&tc->text, "env_allowlist is empty: no host variable may be read.");
    }
    sessions_put(s);
}

const tool_def_t tool_session_get_env = {
    .name = "session_get_env",
    .title = "Read allowlisted host environment variables",
    .description =
        "Returns the values of host environment variables that the operator put in "
        "env_allowlist (all of them, or the given names). Commands in session_bash start from "
        "an empty environment; use this to learn values the operator chose to share.",
    .input_schema = "{\"type\": \"object\", \"properties\": {" SESSION_ID_SCHEMA ", "
                    "\"names\": {\"type\": \"array\", \"maxItems\": 256, \"items\": {\"type\": "
                    "\"string\", \"minLength\": 1, \"maxLength\": 256}, \"description\": "
                    "\"Variable names to read (default: every allowlisted name).\"}}, "
                    "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
        "\"variables\": {\"type\": \"object\", \"additionalProperties\": {\"type\": "
        "\"string\"}}, \"unset\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}, "
        "\"allowlist\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}, "
        "\"required\": [\"session_id\", \"variables\", \"unset\", \"allowlist\"]}",
    .needs_policy = true,
    .read_only = true,
    .run = run_get_env,
};
