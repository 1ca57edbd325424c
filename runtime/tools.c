/* tools.c — the tool table, argument validation, result assembly, helpers. */
#include "tools.h"

#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argcheck.h"
#include "log.h"
#include "textenc.h"

/* clang-format off */
static const tool_def_t *const tool_table[] = {
    &tool_create_session,     &tool_session_list,      &tool_session_close,
    &tool_session_bash,       &tool_session_write_file, &tool_session_read_file,
    &tool_session_list_files, &tool_session_fetch,     &tool_session_get_env,
    &tool_session_mount,      &tool_session_export,    &tool_session_history,
    &tool_session_diff,       &tool_session_rollback,  &tool_session_fork,
    &tool_session_label,      &tool_session_snapshot,  &tool_session_restore,
    &tool_list_snapshots,
    &tool_get_policy,         &tool_session_package_install,
};
/* clang-format on */
#define NTOOLS (sizeof tool_table / sizeof *tool_table)

/* Parsed input schemas, index-aligned with tool_table; built once and then
 * only read, by any number of threads. */
static json_t *input_schemas[NTOOLS];
static pthread_once_t schemas_once = PTHREAD_ONCE_INIT;

static json_t *parse_schema(const char *tool, const char *text)
{
    json_t *s = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(s)) {
        log_error("built-in schema of %s is not valid JSON", tool);
        abort();
    }
    return s;
}

static void parse_schemas(void)
{
    for (size_t i = 0; i < NTOOLS; i++)
        input_schemas[i] = parse_schema(tool_table[i]->name, tool_table[i]->input_schema);
}

const tool_def_t *tools_find(const char *name)
{
    for (size_t i = 0; i < NTOOLS; i++)
        if (!strcmp(tool_table[i]->name, name))
            return tool_table[i];
    return NULL;
}

static const json_t *input_schema_of(const tool_def_t *def)
{
    pthread_once(&schemas_once, parse_schemas);
    for (size_t i = 0; i < NTOOLS; i++)
        if (tool_table[i] == def)
            return input_schemas[i];
    return NULL;
}

char *tools_list_json(void)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < NTOOLS; i++) {
        const tool_def_t *d = tool_table[i];
        json_t *t = json_object();
        json_object_set_new(t, "name", jsonrpc_string(d->name));
        json_object_set_new(t, "title", jsonrpc_string(d->title));
        json_object_set_new(t, "description", jsonrpc_string(d->description));
        json_object_set_new(t, "inputSchema", parse_schema(d->name, d->input_schema));
        json_t *out = parse_schema(d->name, d->output_schema);
        /* Every result may carry the config's diagnostic (reload.h). */
        json_t *w = jsonrpc_add_object(json_object_get(out, "properties"), "policy_warning");
        json_object_set_new(w, "type", json_string("string"));
        json_object_set_new(w, "description",
                            json_string("present while the config on disk does not compile: "
                                        "the diagnostic, and that the last good policy stays "
                                        "in force"));
        json_object_set_new(t, "outputSchema", out);
        json_t *a = jsonrpc_add_object(t, "annotations");
        json_object_set_new(a, "title", jsonrpc_string(d->title));
        json_object_set_new(a, "readOnlyHint", json_boolean(d->read_only));
        json_object_set_new(a, "destructiveHint", json_boolean(d->destructive));
        json_object_set_new(a, "openWorldHint", json_boolean(d->open_world));
        json_array_append_new(arr, t);
    }
    char *s = jsonrpc_print(arr);
    json_decref(arr);
    return s;
}

/* ---- helpers -------------------------------------------------------------------------- */

void tools_fail(tool_call_t *tc, const char *fmt, ...)
{
    buf_truncate(&tc->text, 0);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&tc->text, fmt, ap);
    va_end(ap);
    tc->is_error = true;
}

int64_t tools_setting(const tool_call_t *tc, setting_id_t id) { return policy_get(tc->lp->pol, id); }

void tools_where(const tool_call_t *tc, span_t span, buf_t *out)
{
    source_t *src = tc->lp->pol->src;
    if (!src || (span.start == 0 && span.end == 0)) {
        buf_adds(out, "built-in default");
        return;
    }
    srcpos_t p = source_pos(src, span.start);
    buf_printf(out, "%s:%u:%u", src->name, p.line, p.col);
}

session_t *tools_session(tool_call_t *tc, const json_t *args)
{
    const char *id = tools_arg_str(args, "session_id", "");
    char *err = NULL;
    int64_t idle = tc->lp ? tools_setting(tc, S_SESSION_IDLE_TIMEOUT_SECS) * 1000 : 0;
    /* Any client of the caller's principal may use an ID it was handed (a
     * capability); another principal's session is not found (SPEC §12). */
    session_t *s = sessions_get(tc->srv->sessions, id, tc->req->who.principal, idle, &err);
    if (!s) {
        tools_fail(tc, "%s", err);
        free(err);
    }
    return s;
}

const char *tools_arg_str(const json_t *args, const char *key, const char *def)
{
    const json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

int64_t tools_arg_int(const json_t *args, const char *key, int64_t def)
{
    const json_t *v = json_object_get(args, key);
    return json_is_number(v) ? (int64_t)json_number_value(v) : def;
}

bool tools_arg_bool(const json_t *args, const char *key, bool def)
{
    const json_t *v = json_object_get(args, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

bool tools_json_bytes(json_t *obj, const char *key, const char *s, size_t n)
{
    buf_t b = BUF_INIT;
    bool exact = textenc_utf8_sanitize(s, n, &b);
    if (key)
        json_object_set_new(obj, key, jsonrpc_string(buf_cstr(&b)));
    else
        json_array_append_new(obj, jsonrpc_string(buf_cstr(&b)));
    buf_free(&b);
    return exact;
}

void tools_iso_time(int64_t ms, char out[32])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

/* ---- one call ------------------------------------------------------------------------- */

static void add_policy_warning(tool_call_t *tc, buf_t *text)
{
    if (!tc->policy_error)
        return;
    buf_t w = BUF_INIT;
    if (tc->lp) {
        char when[32];
        tools_iso_time(tc->lp->loaded_ms, when);
        buf_printf(&w,
                   "The config on disk does not compile, so the last good policy (generation "
                   "%llu, loaded %s from %s) stays in force until it is fixed:\n%s",
                   (unsigned long long)tc->lp->generation, when, tc->lp->source,
                   tc->policy_error);
    } else {
        buf_printf(&w, "No policy is in force: the config has never compiled:\n%s",
                   tc->policy_error);
    }
    if (!tc->is_error)
        json_object_set_new(tc->out, "policy_warning", jsonrpc_string(buf_cstr(&w)));
    buf_adds(text, "\n\nWARNING: ");
    buf_add(text, w.p, w.len);
    buf_free(&w);
}

json_t *tools_call(struct mcp_server *srv, mcp_req_t *req, const tool_def_t *def,
                   const json_t *args, bool has_nul)
{
    tool_call_t tc = {.srv = srv, .req = req};
    unsigned long long ncall = atomic_fetch_add(&srv->tool_calls, 1) + 1;
    /* The reload check: one stat when the config is unchanged. Everything
     * below runs under this one policy, even if another call swaps a newer
     * one in meanwhile. */
    tc.lp = reload_acquire(srv->reload, &tc.policy_error);
    tc.out = json_object();

    buf_t why = BUF_INIT;
    if (has_nul) {
        tools_fail(&tc, "A string argument contains U+0000 (\\u0000), which is not accepted in "
                        "names, paths or commands; send binary file content base64-encoded "
                        "(encoding \"base64\").");
    } else if (!argcheck(input_schema_of(def), args, &why)) {
        tools_fail(&tc, "Invalid arguments for %s: %s. See the tool's inputSchema.", def->name,
                   buf_cstr(&why));
    } else if (def->needs_policy && !tc.lp) {
        tools_fail(&tc, "%s is refused: no policy is in force because the config has never "
                        "compiled. Fix the config (see the diagnostic below, or get_policy).",
                   def->name);
    } else {
        def->run(&tc, args);
    }
    buf_free(&why);

    json_t *res = json_object();
    buf_t text = BUF_INIT;
    buf_add(&text, tc.text.p ? tc.text.p : "", tc.text.len);
    add_policy_warning(&tc, &text);
    json_t *content = jsonrpc_add_array(res, "content");
    json_t *item = json_object();
    json_object_set_new(item, "type", json_string("text"));
    /* Handlers build text from sanitised pieces; sanitise once more so that
     * no path can put invalid UTF-8 into the JSON. */
    buf_t clean = BUF_INIT;
    textenc_utf8_sanitize(text.p ? text.p : "", text.len, &clean);
    json_object_set_new(item, "text", jsonrpc_string(buf_cstr(&clean)));
    buf_free(&clean);
    json_array_append_new(content, item);
    if (tc.is_error) {
        /* Error results carry text only: structuredContent, when present,
         * must match the outputSchema of a successful call. */
        json_decref(tc.out);
    } else {
        json_object_set_new(res, "structuredContent", tc.out);
    }
    json_object_set_new(res, "isError", json_boolean(tc.is_error));
    buf_free(&text);
    buf_free(&tc.text);
    free(tc.policy_error);
    reload_release(tc.lp);
    /* RSS, not a leak: the heap in use stays flat under load (massif), but
     * calls on many threads free their transient buffers (file reads, zlib
     * state of every checkpoint write, JSON) below long-lived blocks
     * (checkpoint history, libgit2's cache), and glibc returns only the top
     * of a heap. malloc_trim() also gives back whole free pages in the
     * middle (alone: +7.4 MB instead of +9.1 MB over 2,000 calls from 8
     * clients; with main.c's mallopt: +3 MB); every 64 calls it costs one
     * walk of the free lists. */
    if (ncall % 64 == 0)
        malloc_trim(0);
    return res;
}
