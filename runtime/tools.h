/* tools.h — the tool table and what every tool handler shares.
 *
 * One tool_def_t per tool (one file per family: tool_session.c,
 * tool_bash.c, tool_files.c, tool_fetch.c, tool_policy.c). Its input and
 * output schemas are JSON text in the definition; tools/list publishes
 * them and tools_call validates every call against the input schema before
 * the handler runs, so handlers see well-typed arguments only.
 *
 * A handler fills a tool_call_t: a structuredContent object and a text
 * rendering on success, or tools_fail() with a sentence that tells the model
 * what to change. tools_call wraps that into a CallToolResult and, while the
 * config on disk does not compile, adds the diagnostic to every result.
 */
#ifndef DRUN_RT_TOOLS_H
#define DRUN_RT_TOOLS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "drun_policy.h"
#include "jsonrpc.h" /* jsonrpc_string, jsonrpc_add_array...: what handlers build results with */
#include "reload.h"
#include "server.h"
#include "sessions.h"

typedef struct tool_call {
    struct mcp_server *srv;
    mcp_req_t *req;     /* cancellation and progress of this call */
    lpolicy_t *lp;      /* the policy this call runs under (NULL: none ever compiled) */
    char *policy_error; /* the config's diagnostic while it does not compile, or NULL */
    json_t *out;        /* structuredContent (an object, created by tools_call) */
    buf_t text;         /* the text rendering */
    bool is_error;      /* set by tools_fail */
} tool_call_t;

typedef struct tool_def {
    const char *name;
    const char *title;
    const char *description;
    const char *input_schema;  /* JSON text */
    const char *output_schema; /* JSON text (policy_warning is added by tools_init) */
    bool needs_policy;         /* refuses while no policy ever compiled */
    bool read_only;            /* annotations.readOnlyHint */
    bool destructive;          /* annotations.destructiveHint */
    bool open_world;           /* annotations.openWorldHint */
    void (*run)(tool_call_t *tc, const json_t *args);
} tool_def_t;

extern const tool_def_t tool_create_session, tool_session_list, tool_session_close,
    tool_session_bash, tool_session_write_file, tool_session_read_file, tool_session_list_files,
    tool_session_fetch, tool_session_get_env, tool_get_policy, tool_session_package_install,
    /* the session model (sesstools.h) */
    tool_session_mount, tool_session_export, tool_session_history, tool_session_diff,
    tool_session_rollback, tool_session_fork, tool_session_label, tool_session_snapshot,
    tool_session_restore, tool_list_snapshots;

/* Parses every schema once and prints the tools/list array (server startup;
 * aborts on a malformed built-in schema: that is a build bug). */
char *tools_list_json(void);

/* The definition named name, or NULL. */
const tool_def_t *tools_find(const char *name);

/* Runs one validated call and returns the CallToolResult object (caller
 * owns). has_nul: a string argument held U+0000 (refused). */
json_t *tools_call(struct mcp_server *srv, mcp_req_t *req, const tool_def_t *def,
                   const json_t *args, bool has_nul);

/* ---- helpers for handlers ------------------------------------------------------------ */

/* Marks the call failed with one sentence for the model (replaces the text). */
void tools_fail(tool_call_t *tc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The session named by args.session_id, with a reference (sessions_put when
 * done); NULL after tools_fail when there is none. */
session_t *tools_session(tool_call_t *tc, const json_t *args);

/* A setting of the policy in force. */
int64_t tools_setting(const tool_call_t *tc, setting_id_t id);

/* "file:line:col" of a span of the policy's source, into out. */
void tools_where(const tool_call_t *tc, span_t span, buf_t *out);

/* Argument accessors for validated arguments (defaults when absent). */
const char *tools_arg_str(const json_t *args, const char *key, const char *def);
int64_t tools_arg_int(const json_t *args, const char *key, int64_t def);
bool tools_arg_bool(const json_t *args, const char *key, bool def);

/* Adds s[0..n) to obj as key (key NULL: appends to the array obj), made
 * valid UTF-8 (see textenc.h); returns true when that took no replacement. */
bool tools_json_bytes(json_t *obj, const char *key, const char *s, size_t n);

/* ISO 8601 UTC ("2025-11-25T10:00:00.123Z") of wall-clock ms, into out[32]. */
void tools_iso_time(int64_t ms, char out[32]);

#endif
