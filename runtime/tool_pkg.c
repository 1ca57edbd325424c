/* tool_pkg.c — session_package_install (SPEC §15): pip or npm run in the
 * session's sandbox, installing under the workspace (.packages/pip with
 * pip --target, .packages/npm with npm --prefix), with network limited to the
 * manager's registry hosts ([network] pip_registries / npm_registries) plus
 * command_domains, through the same proxy as session_bash. Only when the
 * policy sets package_install_enabled.
 *
 * The package specs are checked first, as drun does: none may be empty or
 * start with '-' (an option to the manager), and each is made of a strict
 * set of characters (names, versions, extras, npm scopes): no space, no
 * quote, no ':' (a URL, a git+ or file: source), no '..' and no leading '.'
 * or '/' (a local path). The manager is started with an argument vector,
 * never through a shell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drun_policy.h"
#include "exec.h"
#include "log.h"
#include "netproxy.h"
#include "sesstools.h"
#include "textenc.h"
#include "tools.h"

#define PKG_MAX 64           /* packages per call */
#define SPEC_MAX 214         /* npm's longest package name */
#define PKG_OUTPUT_CAP 65536 /* bytes of each stream returned */

/* NULL when spec may be handed to the manager, else why not (static). */
static const char *spec_refusal(const char *spec)
{
    size_t n = strlen(spec);
    if (n == 0) return "is empty";
    if (n > SPEC_MAX) return "is too long";
    if (spec[0] == '-') return "starts with '-' (an option, not a package)";
    if (spec[0] == '.' || spec[0] == '/') return "is a local path, not a package name";
    if (strstr(spec, "..")) return "contains '..'";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)spec[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("._-@/=<>!~^*+,[]", c);
        if (!ok) return "has a character outside letters, digits and . _ - @ / = < > ! ~ ^ * + , [ ]";
    }
    return NULL;
}

/* The manager's argument vector (caller frees the array, not the strings'
 * storage: they are the caller's or static). */
static char **manager_argv(bool pip, const json_t *pkgs)
{
    size_t n = json_array_size(pkgs);
    char **v = xcalloc(n + 12, sizeof *v);
    size_t k = 0;
    if (pip) {
        const char *head[] = {"python3", "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
                              "--no-warn-script-location", "--target", ".packages/pip"};
        for (size_t i = 0; i < sizeof head / sizeof *head; i++) v[k++] = (char *)head[i];
    } else {
        const char *head[] = {"npm", "install", "--prefix", ".packages/npm", "--no-audit", "--no-fund",
                              "--no-update-notifier"};
        for (size_t i = 0; i < sizeof head / sizeof *head; i++) v[k++] = (char *)head[i];
    }
    for (size_t i = 0; i < n; i++) v[k++] = (char *)json_string_value(json_array_get(pkgs, i));
    return v;
}

static void add_tail(json_t *o, const char *name, const buf_t *b, uint64_t total)
{
    tools_json_bytes(o, name, b->p ? b->p : "", b->len);
    char key[48];
    snprintf(key, sizeof key, "%s_truncated", name);
    json_object_set_new(o, key, json_boolean(total > b->len));
}

static void run_pkg(tool_call_t *tc, const json_t *args)
{
    if (tc->srv->no_spawn || !tc->lp->sbx) {
        tools_fail(tc, "session_package_install is disabled in this server (built without a sandbox).");
        return;
    }
    const policy_t *p = tc->lp->pol;
    if (!policy_get(p, S_PACKAGE_INSTALL_ENABLED)) {
        tools_fail(tc, "session_package_install is disabled by the policy: the operator sets "
                       "package_install_enabled = true to allow it.");
        return;
    }
    const char *manager = tools_arg_str(args, "manager", "");
    bool pip = !strcmp(manager, "pip");
    const json_t *pkgs = json_object_get(args, "packages");
    for (size_t i = 0; i < json_array_size(pkgs); i++) {
        const char *spec = json_string_value(json_array_get(pkgs, i));
        const char *why = spec ? spec_refusal(spec) : "is not a string";
        if (why) {
            char q[64];
            size_t k = 0;
            for (const char *c = spec ? spec : ""; *c && k < sizeof q - 1; c++) /* shown, not trusted */
                q[k++] = (unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f ? *c : '?';
            q[k] = '\0';
            tools_fail(tc, "Package spec %zu ('%s') %s: give plain package names, optionally with a version "
                           "(\"requests==2.32.3\", \"left-pad@1.3.0\"); nothing was installed.",
                       i + 1, q, why);
            return;
        }
    }
    session_t *s = tools_session(tc, args);
    if (!s) return;
    char *nerr = NULL;
    const domain_rule_t *reg = &p->registries[pip ? 0 : 1].v[0];
    proxy_chan_t *net = netproxy_open(p, s->id, reg, p->registries[pip ? 0 : 1].n, &nerr);
    if (!net) {
        tools_fail(tc, "The sandbox's network could not be set up, so nothing was installed: %s", nerr);
        free(nerr);
        sessions_put(s);
        return;
    }
    char **argv = manager_argv(pip, pkgs);
    int64_t timeout = tools_setting(tc, S_BASH_TIMEOUT_MS);
    exec_spec_t spec = {
        .sbx = tc->lp->sbx,
        .janitor = tc->srv->janitor,
        .workspace = s->workspace,
        .ws_fd = s->ws_fd,
        .scratch = s->scratch,
        .hide = sessions_root(tc->srv->sessions),
        .argv = argv,
        .timeout_ms = timeout,
        .out_cap = PKG_OUTPUT_CAP,
        .err_cap = PKG_OUTPUT_CAP,
        .wake_fd = tc->req ? tc->req->wake_fd : -1,
        .proxy_fd = proxy_sandbox_fd(net),
    };
    exec_result_t r;
    atomic_fetch_add(&s->running, 1);
    bool started = exec_run(&spec, &r);
    atomic_fetch_sub(&s->running, 1);
    free(argv);
    if (!started || r.setup_failed) {
        proxy_close(net);
        tools_fail(tc, "The sandbox could not be set up, so nothing was installed: %s",
                   r.error ? r.error : "bwrap failed");
        exec_result_free(&r);
        sessions_put(s);
        return;
    }
    json_t *o = tc->out;
    json_object_set_new(o, "session_id", jsonrpc_string(s->id));
    json_object_set_new(o, "manager", json_string(pip ? "pip" : "npm"));
    json_object_set_new(o, "installed_to", json_string(pip ? ".packages/pip" : ".packages/npm"));
    json_object_set_new(o, "exit_code", r.exit_code >= 0 ? json_integer(r.exit_code) : json_null());
    json_object_set_new(o, "timed_out", json_boolean(r.timed_out));
    add_tail(o, "stdout", &r.out, r.out_total);
    add_tail(o, "stderr", &r.err, r.err_total);
    buf_t *t = &tc->text;
    if (r.exit_code == 0)
        buf_printf(t, "Installed with %s into %s.", pip ? "pip" : "npm", pip ? ".packages/pip" : ".packages/npm");
    else
        buf_printf(t, "%s failed (exit code %d%s).", pip ? "pip" : "npm", r.exit_code,
                   r.timed_out ? ", timed out at bash_timeout_ms" : "");
    netproxy_finish(net, s->id, o, t);
    if (r.exit_code != 0) {
        buf_adds(t, "\n--- stderr ---\n");
        buf_add(t, r.err.p ? r.err.p : "", r.err.len);
    }
    /* what the install wrote is a checkpoint (SPEC §14): "pip demo-pkg ..." */
    buf_t sum = BUF_INIT;
    buf_adds(&sum, pip ? "pip" : "npm");
    for (size_t i = 0; i < json_array_size(pkgs); i++) buf_printf(&sum, " %s", json_string_value(json_array_get(pkgs, i)));
    sesstools_checkpoint(tc, s, "session_package_install", buf_cstr(&sum));
    buf_free(&sum);
    exec_result_free(&r);
    sessions_put(s);
}

const tool_def_t tool_session_package_install = {
    .name = "session_package_install",
    .title = "Install packages into a session's workspace",
    .description =
        "Installs Python (pip) or Node (npm) packages into the session's workspace "
        "(.packages/pip via pip --target, .packages/npm via npm --prefix), inside the session's "
        "sandbox, with network only to that manager's registry hosts (the policy's "
        "[network] pip_registries / npm_registries) and [network] command_domains. Only when the "
        "policy sets package_install_enabled. Each package is a plain name with an optional "
        "version (no options, paths or URLs). Requests the proxy refused are listed in "
        "network_denied.",
    .input_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\", \"minLength\": 32, \"maxLength\": 32}, "
        "\"manager\": {\"type\": \"string\", \"enum\": [\"pip\", \"npm\"]}, "
        "\"packages\": {\"type\": \"array\", \"minItems\": 1, \"maxItems\": 64, \"items\": "
        "{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 214}}}, "
        "\"required\": [\"session_id\", \"manager\", \"packages\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\"}, \"manager\": {\"type\": \"string\"}, "
        "\"installed_to\": {\"type\": \"string\"}, "
        "\"exit_code\": {\"type\": [\"integer\", \"null\"]}, \"timed_out\": {\"type\": \"boolean\"}, "
        "\"stdout\": {\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"}, "
        "\"stdout_truncated\": {\"type\": \"boolean\"}, \"stderr_truncated\": {\"type\": \"boolean\"}, "
        "\"network_denied\": {\"type\": \"array\", \"items\": {\"type\": \"object\"}}, "
        "\"checkpoint_id\": {\"type\": \"integer\", \"description\": \"the checkpoint of what the "
        "install wrote (absent when nothing changed)\"}}, "
        "\"required\": [\"session_id\", \"manager\", \"installed_to\", \"exit_code\", \"network_denied\"]}",
    .needs_policy = true,
    .destructive = true,
    .open_world = true,
    .run = run_pkg,
};
