/* tool_bash.c — session_bash: the command lists, then the command under the
 * session's sandbox, with its output made safe to return whatever its bytes.
 *
 * Output encoding (decided here, documented in docs/runtime.md): stdout and
 * stderr are always returned as valid UTF-8 text in which every invalid
 * sequence and every NUL became U+FFFD; when that replaced anything, the
 * exact bytes kept are also returned base64-encoded (stdout_base64,
 * stderr_base64), so nothing is lost and the JSON stays valid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drun_policy.h"
#include "exec.h"
#include "log.h"
#include "netproxy.h"
#include "textenc.h"
#include "sesstools.h"
#include "tools.h"

#define OUTPUT_CAP (1024 * 1024) /* bytes of each stream returned */
#define PROGRESS_MS 1000

typedef struct bash_ctx {
    tool_call_t *tc;
    session_t *s;
    int64_t timeout_ms;
} bash_ctx_t;

static bool bash_stop(void *ctx)
{
    bash_ctx_t *b = ctx;
    return mcp_req_cancelled(b->tc->req) || atomic_load(&b->s->closing);
}

static void bash_tick(void *ctx, int64_t elapsed_ms, uint64_t out_bytes, uint64_t err_bytes)
{
    bash_ctx_t *b = ctx;
    char msg[160];
    snprintf(msg, sizeof msg, "running for %lld s; %llu bytes of stdout, %llu of stderr so far",
             (long long)(elapsed_ms / 1000), (unsigned long long)out_bytes,
             (unsigned long long)err_bytes);
    mcp_req_progress(b->tc->req, (double)elapsed_ms / 1000.0, (double)b->timeout_ms / 1000.0, msg);
}

/* A notice of the sandbox plan, kept for the result's warnings. */
static void add_warning(void *ctx, const char *msg)
{
    json_array_append_new((json_t *)ctx, jsonrpc_string(msg));
}

/* The access-time filesystem layer's refusals (SPEC §16) as fs_denied
 * ({time, op, path, rule} each, deduplicated by the layer, capped), and one
 * line of text per refusal so that an agent learns why a command failed. */
static void add_fs_denied(json_t *o, buf_t *t, const exec_result_t *r)
{
    if (!r->fs_denied)
        return;
    json_t *arr = json_array();
    char *copy = xstrdup(r->fs_denied);
    for (char *s = copy, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        *nl = '\0';
        char *f[4] = {s, NULL, NULL, NULL};
        for (int k = 1; k < 4 && f[k - 1]; k++) {
            char *tab = strchr(f[k - 1], '\t');
            if (tab)
                *tab = '\0', f[k] = tab + 1;
        }
        if (!f[3])
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "time", jsonrpc_string(f[0]));
        json_object_set_new(e, "op", jsonrpc_string(f[1]));
        json_object_set_new(e, "path", jsonrpc_string(f[2]));
        json_object_set_new(e, "rule", jsonrpc_string(f[3]));
        json_array_append_new(arr, e);
        buf_printf(t, "\nRefused by the sandbox's filesystem layer: %s %s (%s)", f[1], f[2], f[3]);
    }
    free(copy);
    json_object_set_new(o, "fs_denied", arr);
    if (r->fs_denied_total > json_array_size(arr)) {
        json_object_set_new(o, "fs_denied_total", json_integer((json_int_t)r->fs_denied_total));
        buf_printf(t, "\n... and %zu more refusals", r->fs_denied_total - json_array_size(arr));
    }
}

/* Refuses the command when the config's command lists say so; true = may run. */
static bool lists_allow(tool_call_t *tc, const char *cmd, size_t len)
{
    const policy_t *p = tc->lp->pol;
    if (!p->cmd_deny.n && !p->cmd_allow.n)
        return true;
    const char **deny = xcalloc(p->cmd_deny.n + 1, sizeof *deny);
    const char **allow = xcalloc(p->cmd_allow.n + 1, sizeof *allow);
    for (size_t i = 0; i < p->cmd_deny.n; i++)
        deny[i] = p->cmd_deny.v[i].s;
    for (size_t i = 0; i < p->cmd_allow.n; i++)
        allow[i] = p->cmd_allow.v[i].s;
    cmdlist_verdict_t v = cmdlist_check(cmd, len, deny, p->cmd_deny.n, allow, p->cmd_allow.n);
    free(deny);
    free(allow);
    if (v.allowed) {
        cmdlist_verdict_free(&v);
        return true;
    }
    buf_t where = BUF_INIT;
    const char *list = v.list == CMDLIST_DENY ? "bash_command_denylist" : "bash_command_allowlist";
    const str_entry_t *e = NULL;
    if (v.list == CMDLIST_DENY && v.entry >= 0 && (size_t)v.entry < p->cmd_deny.n)
        e = &p->cmd_deny.v[v.entry];
    else if (v.list == CMDLIST_ALLOW && v.entry >= 0 && (size_t)v.entry < p->cmd_allow.n)
        e = &p->cmd_allow.v[v.entry];
    if (e) {
        tools_where(tc, e->span, &where);
        tools_fail(tc,
                   "Command refused by %s entry \"%s\" (%s): %s%s%s. Rewrite the command so that "
                   "no simple command matches a denylist entry%s; the lists are the operator's.",
                   list, e->s, buf_cstr(&where), v.reason, v.command ? "; simple command: " : "",
                   v.command ? v.command : "",
                   p->cmd_allow.n ? " and every one matches an allowlist entry" : "");
    } else if (v.list) {
        tools_fail(tc, "Command refused by %s: %s%s%s. Allowed commands: see get_policy.", list,
                   v.reason, v.command ? "; simple command: " : "", v.command ? v.command : "");
    } else {
        tools_fail(tc, "Command refused: %s. The command lists need a command that parses.",
                   v.reason);
    }
    buf_free(&where);
    cmdlist_verdict_free(&v);
    return false;
}

/* Adds name (stdout/stderr) to the result: text, bytes, truncation, and the
 * exact bytes in base64 when the text needed repair. */
static void add_stream(json_t *o, const char *name, buf_t *b, uint64_t total, bool *exact)
{
    size_t keep = b->len;
    bool truncated = total > b->len;
    if (truncated)
        keep = textenc_utf8_clean_cut(b->p, b->len); /* a cut mid-character is not an error */
    *exact = tools_json_bytes(o, name, b->p ? b->p : "", keep);
    char key[48];
    snprintf(key, sizeof key, "%s_bytes", name);
    json_object_set_new(o, key, json_integer(total));
    snprintf(key, sizeof key, "%s_truncated", name);
    json_object_set_new(o, key, json_boolean(truncated));
    if (!*exact) {
        buf_t enc = BUF_INIT;
        textenc_base64_encode(b->p ? b->p : "", b->len, &enc);
        snprintf(key, sizeof key, "%s_base64", name);
        json_object_set_new(o, key, json_string(buf_cstr(&enc)));
        buf_free(&enc);
    }
}

static void render_stream(buf_t *t, const char *name, const buf_t *b, uint64_t total, bool exact)
{
    if (!total)
        return;
    buf_printf(t, "\n--- %s (%llu bytes%s%s) ---\n", name, (unsigned long long)total,
               total > b->len ? ", truncated" : "",
               exact ? "" : "; not valid UTF-8: shown with U+FFFD, exact bytes in the "
                            "*_base64 field");
    buf_add(t, b->p, b->len);
    if (b->len && b->p[b->len - 1] != '\n')
        buf_addc(t, '\n');
}

static void signal_name(int sig, char out[32])
{
    const char *n = sigabbrev_np(sig);
    if (n)
        snprintf(out, 32, "SIG%s", n);
    else
        snprintf(out, 32, "signal %d", sig);
}

static void run_bash(tool_call_t *tc, const json_t *args)
{
    const char *cmd = tools_arg_str(args, "command", "");
    size_t len = strlen(cmd);
    if (tc->srv->no_spawn || !tc->lp->sbx) {
        tools_fail(tc, "session_bash is disabled in this server (built without a sandbox).");
        return;
    }
    if (!lists_allow(tc, cmd, len))
        return;
    session_t *s = tools_session(tc, args);
    if (!s)
        return;

    int64_t limit = tools_setting(tc, S_BASH_TIMEOUT_MS);
    int64_t timeout = tools_arg_int(args, "timeout_ms", limit);
    bool lowered = timeout > limit;
    if (lowered)
        timeout = limit;
    const char *in = tools_arg_str(args, "stdin", NULL);
    char *argv[] = {(char *)tc->srv->shell, "-c", (char *)cmd, NULL};
    bash_ctx_t ctx = {tc, s, timeout};
    exec_spec_t spec = {
        .sbx = tc->lp->sbx,
        .janitor = tc->srv->janitor,
        .workspace = s->workspace,
        .ws_fd = s->ws_fd,
        .scratch = s->scratch,
        .hide = sessions_root(tc->srv->sessions),
        .argv = argv,
        .input = in,
        .input_len = in ? strlen(in) : 0,
        .timeout_ms = timeout,
        .out_cap = OUTPUT_CAP,
        .err_cap = OUTPUT_CAP,
        .wake_fd = tc->req ? tc->req->wake_fd : -1,
        .stop = bash_stop,
        .tick = tc->req && tc->req->progress_token ? bash_tick : NULL,
        .tick_ms = PROGRESS_MS,
        .ctx = &ctx,
    };
    /* network through the proxy when command_domains allows anything (SPEC §15) */
    proxy_chan_t *net = NULL;
    char *nerr = NULL;
    if (proxy_wanted(tc->lp->pol) && !(net = netproxy_open(tc->lp->pol, s->id, NULL, 0, &nerr))) {
        tools_fail(tc, "The sandbox's network could not be set up, so the command did not run: %s", nerr);
        free(nerr);
        sessions_put(s);
        return;
    }
    if (net) spec.proxy_fd = proxy_sandbox_fd(net);
    exec_result_t r;
    json_t *warnings = json_array();
    atomic_fetch_add(&s->running, 1);
    /* what the plan had to do that the agent must hear of (a directory it
     * could not list, hidden rather than left unchecked): the plan runs in
     * this thread, inside exec_run */
    bwrap_set_notice_sink(add_warning, warnings);
    bool started = exec_run(&spec, &r);
    bwrap_set_notice_sink(NULL, NULL);
    atomic_fetch_sub(&s->running, 1);
    if (!started || r.setup_failed) proxy_close(net);
    if (!started) {
        json_decref(warnings);
        tools_fail(tc, "The sandbox could not be set up, so the command did not run: %s",
                   r.error);
        log_warn("session %s: sandbox setup failed: %s", s->id, r.error);
        exec_result_free(&r);
        sessions_put(s);
        return;
    }
    if (r.setup_failed) {
        json_decref(warnings);
        buf_t msg = BUF_INIT;
        textenc_utf8_sanitize(r.err.p, r.err.len, &msg);
        tools_fail(tc, "The sandbox could not be set up, so the command did not run: %s",
                   buf_cstr(&msg));
        log_warn("session %s: bwrap could not set up the sandbox: %s", s->id, buf_cstr(&msg));
        buf_free(&msg);
        exec_result_free(&r);
        sessions_put(s);
        return;
    }
    bool closed = atomic_load(&s->closing);
    bool cancelled = r.stopped && !closed;

    char sig[32] = "";
    if (r.signal)
        signal_name(r.signal, sig);
    json_t *o = tc->out;
    json_object_set_new(o, "session_id", jsonrpc_string(s->id));
    json_object_set_new(o, "exit_code",
                        r.exit_code >= 0 ? json_integer(r.exit_code) : json_null());
    json_object_set_new(o, "signal", r.signal ? json_string(sig) : json_null());
    json_object_set_new(o, "timed_out", json_boolean(r.timed_out));
    json_object_set_new(o, "cancelled", json_boolean(r.stopped));
    json_object_set_new(o, "duration_ms",
                        json_real((double)(int64_t)(r.wall_ms * 1000) / 1000.0));
    json_object_set_new(o, "timeout_ms", json_integer(timeout));
    bool out_exact, err_exact;
    add_stream(o, "stdout", &r.out, r.out_total, &out_exact);
    add_stream(o, "stderr", &r.err, r.err_total, &err_exact);
    bool warned = json_array_size(warnings) > 0;
    if (warned)
        json_object_set(o, "warnings", warnings);

    buf_t *t = &tc->text;
    if (r.timed_out)
        buf_printf(t, "TIMED OUT after %lld ms: the whole process group was killed. Make the "
                      "command faster, run it in the background with its output to a file, "
                      "or pass a larger timeout_ms (at most bash_timeout_ms = %lld).",
                   (long long)timeout, (long long)limit);
    else if (closed)
        buf_printf(t, "Killed: the session was closed while the command ran.");
    else if (cancelled)
        buf_printf(t, "Cancelled by the client: the whole process group was killed.");
    else if (r.signal && r.exit_code < 0)
        buf_printf(t, "Killed by %s after %.1f ms.", sig, r.wall_ms);
    else if (r.signal)
        buf_printf(t, "Exit code %d (the command died of %s) after %.1f ms.", r.exit_code, sig,
                   r.wall_ms);
    else
        buf_printf(t, "Exit code %d after %.1f ms.", r.exit_code, r.wall_ms);
    if (lowered)
        buf_printf(t, " (timeout_ms was lowered to bash_timeout_ms = %lld.)", (long long)limit);
    for (size_t i = 0; i < json_array_size(warnings); i++)
        buf_printf(t, "\nWarning: %s", json_string_value(json_array_get(warnings, i)));
    json_decref(warnings); /* tc->out holds its own reference when warned */
    netproxy_finish(net, s->id, o, t);
    add_fs_denied(o, t, &r);
    render_stream(t, "stdout", &r.out, r.out_total, out_exact);
    render_stream(t, "stderr", &r.err, r.err_total, err_exact);
    /* whatever the command changed is a checkpoint (SPEC §14) */
    sesstools_checkpoint(tc, s, "session_bash", cmd);
    exec_result_free(&r);
    sessions_put(s);
}

const tool_def_t tool_session_bash = {
    .name = "session_bash",
    .title = "Run a shell command in a session",
    .description =
        "Runs a command with bash -c (sh where bash is missing) inside the session's sandbox: "
        "no network but the hosts [network] command_domains allows (through a proxy), the "
        "session workspace and scratch dir writable, the rest of the host as the operator's "
        "policy allows. The command lists of the policy are checked first. "
        "Returns the exit code or signal, the duration, and stdout/stderr (each capped at 1 "
        "MiB; invalid UTF-8 is shown as U+FFFD and the exact bytes are added base64-encoded). "
        "The command is killed with its whole process group at timeout_ms.",
    .input_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\", \"minLength\": 32, \"maxLength\": 32, "
        "\"description\": \"The ID create_session returned.\"}, "
        "\"command\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 262144, "
        "\"description\": \"The shell command line.\"}, "
        "\"timeout_ms\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 86400000, "
        "\"description\": \"Wall-clock limit; default and maximum: the policy's "
        "bash_timeout_ms.\"}, "
        "\"stdin\": {\"type\": \"string\", \"maxLength\": 1048576, \"description\": \"Text "
        "fed to the command's standard input (default: none).\"}}, "
        "\"required\": [\"session_id\", \"command\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\"}, "
        "\"exit_code\": {\"type\": [\"integer\", \"null\"], \"description\": \"the exit "
        "status (128+N when the command died of signal N); null when the sandbox itself was "
        "killed (timeout, cancellation)\"}, "
        "\"signal\": {\"type\": [\"string\", \"null\"], \"description\": \"the signal that "
        "ended the command (timeout and cancellation use KILL)\"}, "
        "\"timed_out\": {\"type\": \"boolean\"}, \"cancelled\": {\"type\": \"boolean\"}, "
        "\"duration_ms\": {\"type\": \"number\"}, \"timeout_ms\": {\"type\": \"integer\"}, "
        "\"stdout\": {\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"}, "
        "\"stdout_bytes\": {\"type\": \"integer\"}, \"stderr_bytes\": {\"type\": \"integer\"}, "
        "\"stdout_truncated\": {\"type\": \"boolean\"}, \"stderr_truncated\": {\"type\": "
        "\"boolean\"}, "
        "\"stdout_base64\": {\"type\": \"string\", \"description\": \"exact bytes of stdout, "
        "present when stdout was not valid UTF-8\"}, "
        "\"stderr_base64\": {\"type\": \"string\"}, "
        "\"network_denied\": {\"type\": \"array\", \"description\": \"requests the proxy refused "
        "(present when the policy gives commands network: [network] command_domains)\", \"items\": "
        "{\"type\": \"object\", \"properties\": {\"time\": {\"type\": \"string\"}, \"session_id\": "
        "{\"type\": \"string\"}, \"host\": {\"type\": \"string\"}, \"port\": {\"type\": \"integer\"}, "
        "\"reason\": {\"type\": \"string\"}, \"count\": {\"type\": \"integer\"}}}}, "
        "\"fs_denied\": {\"type\": \"array\", \"description\": \"accesses the filesystem layer "
        "refused (SPEC 16), deduplicated, at most 50 (present when there was one)\", \"items\": "
        "{\"type\": \"object\", \"properties\": {\"time\": {\"type\": \"string\"}, \"op\": "
        "{\"type\": \"string\"}, \"path\": {\"type\": \"string\"}, \"rule\": {\"type\": \"string\"}}}}, "
        "\"fs_denied_total\": {\"type\": \"integer\"}, "
        "\"warnings\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"description\": "
        "\"what the sandbox had to do that the command may notice: a directory it could not check "
        "against the policy's patterns is hidden (present only when there is one)\"}}, "
        "\"required\": [\"session_id\", \"exit_code\", \"signal\", \"timed_out\", "
        "\"cancelled\", \"duration_ms\", \"stdout\", \"stderr\", \"stdout_bytes\", "
        "\"stderr_bytes\", \"stdout_truncated\", \"stderr_truncated\"]}",
    .needs_policy = true,
    .destructive = true,
    .run = run_bash,
};
