/* tool_ckpt.c — the checkpoint tools (SPEC §14): session_history,
 * session_diff, session_rollback, session_fork, session_label, and the
 * checkpoint every workspace-changing call records (sesstools_checkpoint). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "drun_policy.h"
#include "log.h"
#include "sesstools.h"

#define DIFF_MAX_BYTES (1 << 20) /* larger diffs are cut (say so, narrow with paths) */

ckpt_owner_t sesstools_owner(void)
{
    ckpt_owner_t o = {(uid_t)-1, (gid_t)-1};
    if (geteuid() == 0)
        sandbox_user(&o.uid, &o.gid);
    return o;
}

void sesstools_family(const char *id, char out[48]) { snprintf(out, 48, "ckpt-%s", id); }

const char *sesstools_arg_ref(const json_t *args, const char *key, char out[32])
{
    const json_t *v = json_object_get(args, key);
    /* numbers arrive as reals (the JSON layer reads them so); the schema
     * made it an integer of at least 1 */
    if (json_is_number(v)) {
        snprintf(out, 32, "%lld", (long long)json_number_value(v));
        return out;
    }
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* s's checkpoints, or NULL after tools_fail (a session whose store could not
 * be made). */
static ckpt_t *ckpt_of(tool_call_t *tc, session_t *s)
{
    if (!s->ckpt)
        tools_fail(tc, "session %s has no checkpoint store (it could not be created); "
                       "create a new session",
                   s->id);
    return s->ckpt;
}

int64_t sesstools_checkpoint(tool_call_t *tc, session_t *s, const char *tool, const char *summary)
{
    if (!s->ckpt)
        return -1;
    char *err = NULL;
    int64_t id = ckpt_record(s->ckpt, s->ws_fd, tool, summary, false,
                             tools_setting(tc, S_MAX_CHECKPOINTS), &err);
    if (id > 0) {
        json_object_set_new(tc->out, "checkpoint_id", json_integer(id));
        buf_printf(&tc->text, "\n[checkpoint %lld]", (long long)id);
    } else if (id < 0) {
        log_warn("session %s: checkpoint after %s failed: %s", s->id, tool, err);
        buf_printf(&tc->text, "\nWarning: no checkpoint was recorded: %s", err);
        free(err);
    }
    return id;
}

static void add_paths(json_t *o, const char *key, const ckpt_paths_t *p)
{
    json_t *a = jsonrpc_add_array(o, key);
    for (size_t i = 0; i < p->n; i++)
        tools_json_bytes(a, NULL, p->v[i], strlen(p->v[i]));
}

static json_t *info_json(const ckpt_info_t *in)
{
    json_t *o = json_object();
    char when[32];
    tools_iso_time(in->time_ms, when);
    json_object_set_new(o, "checkpoint_id", json_integer(in->id));
    if (in->label)
        json_object_set_new(o, "label", jsonrpc_string(in->label));
    json_object_set_new(o, "tool", jsonrpc_string(in->tool));
    tools_json_bytes(o, "summary", in->summary, strlen(in->summary));
    json_object_set_new(o, "time", jsonrpc_string(when));
    add_paths(o, "added", &in->added);
    add_paths(o, "modified", &in->modified);
    add_paths(o, "deleted", &in->deleted);
    return o;
}

/* ---- session_history --------------------------------------------------------------------- */

static void run_history(tool_call_t *tc, const json_t *args)
{
    session_t *s = tools_session(tc, args);
    if (!s)
        return;
    ckpt_t *c = ckpt_of(tc, s);
    if (c) {
        ckpt_info_t *v;
        size_t n = ckpt_history(c, &v);
        json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
        json_t *arr = jsonrpc_add_array(tc->out, "checkpoints");
        buf_printf(&tc->text, "%zu checkpoint%s, oldest first:\n", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++) {
            json_array_append_new(arr, info_json(&v[i]));
            char when[32];
            tools_iso_time(v[i].time_ms, when);
            buf_printf(&tc->text, "%lld%s%s%s %s %s \"%s\": +%zu ~%zu -%zu\n",
                       (long long)v[i].id, v[i].label ? " (" : "", v[i].label ? v[i].label : "",
                       v[i].label ? ")" : "", when, v[i].tool, v[i].summary, v[i].added.n,
                       v[i].modified.n, v[i].deleted.n);
        }
        ckpt_infos_free(v, n);
    }
    sessions_put(s);
}

#define INFO_SCHEMA                                                                        \
    "{\"type\": \"object\", \"properties\": {\"checkpoint_id\": {\"type\": \"integer\"}, " \
    "\"label\": {\"type\": \"string\"}, \"tool\": {\"type\": \"string\"}, \"summary\": "   \
    "{\"type\": \"string\"}, \"time\": {\"type\": \"string\"}, \"added\": {\"type\": "     \
    "\"array\", \"items\": {\"type\": \"string\"}}, \"modified\": {\"type\": \"array\", "  \
    "\"items\": {\"type\": \"string\"}}, \"deleted\": {\"type\": \"array\", \"items\": "   \
    "{\"type\": \"string\"}}}, \"required\": [\"checkpoint_id\", \"tool\", \"summary\", "  \
    "\"time\", \"added\", \"modified\", \"deleted\"]}"

const tool_def_t tool_session_history = {
    .name = "session_history",
    .title = "List a session's checkpoints",
    .description = "Lists the session's checkpoints, oldest first: each call that changed the "
                   "workspace (session_bash, session_write_file, session_mount, session_fetch, "
                   "session_rollback) recorded one, with its tool, command or path, time, "
                   "label, and the files added, modified and deleted.",
    .input_schema = "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA "}, "
                    "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"checkpoints\": {\"type\": \"array\", \"items\": " INFO_SCHEMA
                     "}}, \"required\": [\"session_id\", \"checkpoints\"]}",
    .needs_policy = true,
    .read_only = true,
    .run = run_history,
};

/* ---- session_diff ------------------------------------------------------------------------- */

/* The normalised paths argument (workspace-relative); false after tools_fail. */
static bool get_paths(tool_call_t *tc, const json_t *args, ckpt_paths_t *out)
{
    const json_t *a = json_object_get(args, "paths");
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e) {
        buf_t rel = BUF_INIT;
        const char *why;
        if (!beneath_normalize(json_string_value(e), &rel, &why)) {
            tools_fail(tc, "paths[%zu] \"%s\" is refused: %s.", i, json_string_value(e), why);
            buf_free(&rel);
            return false;
        }
        vec_push(out, buf_detach(&rel, NULL));
    }
    return true;
}

static void free_paths(ckpt_paths_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    vec_free(p);
}

static void run_diff(tool_call_t *tc, const json_t *args)
{
    ckpt_paths_t paths = {0};
    if (!get_paths(tc, args, &paths))
        return;
    session_t *s = tools_session(tc, args);
    ckpt_t *c = s ? ckpt_of(tc, s) : NULL;
    if (c) {
        char fb[32], tb[32];
        const char *from = sesstools_arg_ref(args, "from", fb), *to = sesstools_arg_ref(args, "to", tb);
        buf_t d = BUF_INIT;
        char *err = NULL;
        if (!ckpt_diff(c, from, to, paths.v, paths.n, DIFF_MAX_BYTES, &d, &err)) {
            tools_fail(tc, "%s.", err);
            free(err);
        } else {
            json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
            tools_json_bytes(tc->out, "diff", d.p ? d.p : "", d.len);
            if (!d.len)
                buf_adds(&tc->text, "No differences.");
            else
                buf_add(&tc->text, d.p, d.len);
        }
        buf_free(&d);
    }
    if (s)
        sessions_put(s);
    free_paths(&paths);
}

const tool_def_t tool_session_diff = {
    .name = "session_diff",
    .title = "Diff two checkpoints",
    .description = "A unified diff between two checkpoints of the session (default: the "
                   "newest against the one before it), optionally limited to paths. Binary "
                   "files are named, not dumped. from and to take a checkpoint id or label.",
    /* clang-format off */
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", "
        SESS_REF_SCHEMA("from", "the older side (default: the checkpoint before to)") ", "
        SESS_REF_SCHEMA("to", "the newer " "side " "(default: " "the " "newest)") ", "
        "\"paths\": {\"type\": \"array\", \"maxItems\": 256, \"items\": {\"type\": \"string\", "
        "\"minLength\": 1, \"maxLength\": 4096}, \"description\": \"workspace-relative files or "
        "directories to limit the diff to\"}}, "
        "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    /* clang-format on */
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"diff\": {\"type\": \"string\"}}, \"required\": "
                     "[\"session_id\", \"diff\"]}",
    .needs_policy = true,
    .read_only = true,
    .run = run_diff,
};

/* ---- session_rollback --------------------------------------------------------------------- */

static void run_rollback(tool_call_t *tc, const json_t *args)
{
    session_t *s = tools_session(tc, args);
    ckpt_t *c = s ? ckpt_of(tc, s) : NULL;
    if (c) {
        char rb[32];
        const char *ref = sesstools_arg_ref(args, "checkpoint", rb);
        char *err = NULL;
        ckpt_owner_t own = sesstools_owner();
        /* Under the write lock: no file tool writes while files are replaced. */
        pthread_mutex_lock(&s->write_mu);
        int64_t id = ckpt_rollback(c, s->ws_fd, ref, &own, tools_setting(tc, S_MAX_CHECKPOINTS), &err);
        pthread_mutex_unlock(&s->write_mu);
        if (id < 0) {
            tools_fail(tc, "%s.", err);
            free(err);
        } else {
            json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
            json_object_set_new(tc->out, "checkpoint_id", json_integer(id));
            buf_printf(&tc->text, "The workspace is back at checkpoint %s; that is recorded as "
                                  "checkpoint %lld (session_rollback to it undoes this).",
                       ref, (long long)id);
        }
    }
    if (s)
        sessions_put(s);
}

const tool_def_t tool_session_rollback = {
    .name = "session_rollback",
    .title = "Roll a session back to a checkpoint",
    .description = "Makes the workspace what it was at a checkpoint (id or label). The "
                   "rollback is itself recorded as a new checkpoint, and changes not yet "
                   "recorded are recorded first: nothing is lost.",
    .input_schema = "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", " SESS_REF_SCHEMA(
        "checkpoint", "the checkpoint to return to") "}, "
                                                     "\"required\": [\"session_id\", \"checkpoint\"], \"additionalProperties\": "
                                                     "false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"checkpoint_id\": {\"type\": \"integer\"}}, \"required\": "
                     "[\"session_id\", \"checkpoint_id\"]}",
    .needs_policy = true,
    .destructive = true,
    .run = run_rollback,
};

/* ---- session_fork ------------------------------------------------------------------------- */

static void run_fork(tool_call_t *tc, const json_t *args)
{
    session_t *s = tools_session(tc, args);
    ckpt_t *c = s ? ckpt_of(tc, s) : NULL;
    if (!c) {
        if (s)
            sessions_put(s);
        return;
    }
    char rb[32];
    const char *ref = sesstools_arg_ref(args, "checkpoint", rb);
    char *err = NULL;
    ssize_t at = ckpt_find(c, ref, &err);
    session_t *f = at < 0 ? NULL
                          : sessions_create(tc->srv->sessions, &tc->req->who,
                                            tools_setting(tc, S_MAX_SESSIONS),
                                            tools_arg_str(args, "label", s->label), &err);
    if (f) {
        ckpt_owner_t own = sesstools_owner();
        f->ckpt = ckpt_fork(c, ref, f->ws_fd, &own, &err);
        if (!f->ckpt) {
            char *e2 = NULL;
            sessions_close(tc->srv->sessions, f->id, tc->req->who.principal, &e2);
            free(e2);
            sessions_put(f);
            f = NULL;
        }
    }
    if (!f) {
        tools_fail(tc, "%s.", err);
        free(err);
        sessions_put(s);
        return;
    }
    int64_t head = ckpt_head(f->ckpt);
    json_object_set_new(tc->out, "session_id", jsonrpc_string(f->id));
    json_object_set_new(tc->out, "forked_from", jsonrpc_string(s->id));
    json_object_set_new(tc->out, "checkpoint_id", json_integer(head));
    tools_json_bytes(tc->out, "label", f->label, strlen(f->label));
    tools_json_bytes(tc->out, "workspace", f->workspace, strlen(f->workspace));
    buf_printf(&tc->text, "Session %s forked from %s at checkpoint %lld: both go on "
                          "independently (they share stored objects, not files).",
               f->id, s->id, (long long)head);
    sessions_put(f);
    sessions_put(s);
}

const tool_def_t tool_session_fork = {
    .name = "session_fork",
    .title = "Fork a session",
    .description = "Makes a new session whose workspace and history are this session's at a "
                   "checkpoint (default: the newest). The two go on independently: explore "
                   "two trajectories, keep the better one.",
    /* clang-format off */
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", "
        SESS_REF_SCHEMA("checkpoint", "where the fork starts (default: the newest)") ", "
        "\"label\": {\"type\": \"string\", \"maxLength\": 64, \"description\": \"the new "
        "session's label (default: this one's)\"}}, "
        "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    /* clang-format on */
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"forked_from\": {\"type\": \"string\"}, \"checkpoint_id\": "
                     "{\"type\": \"integer\"}, \"label\": {\"type\": \"string\"}, \"workspace\": "
                     "{\"type\": \"string\"}}, \"required\": [\"session_id\", \"forked_from\", "
                     "\"checkpoint_id\"]}",
    .needs_policy = true,
    .run = run_fork,
};

/* ---- session_label ------------------------------------------------------------------------ */

static void run_label(tool_call_t *tc, const json_t *args)
{
    session_t *s = tools_session(tc, args);
    ckpt_t *c = s ? ckpt_of(tc, s) : NULL;
    if (c) {
        char rb[32];
        const char *ref = sesstools_arg_ref(args, "checkpoint", rb);
        const char *label = tools_arg_str(args, "label", "");
        int64_t id = 0;
        char *err = NULL;
        if (!ckpt_label(c, ref, label, &id, &err)) {
            tools_fail(tc, "%s.", err);
            free(err);
        } else {
            json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
            json_object_set_new(tc->out, "checkpoint_id", json_integer(id));
            json_object_set_new(tc->out, "label", jsonrpc_string(label));
            buf_printf(&tc->text, "Checkpoint %lld is labelled \"%s\": use the label wherever "
                                  "a checkpoint id goes.",
                       (long long)id, label);
        }
    }
    if (s)
        sessions_put(s);
}

const tool_def_t tool_session_label = {
    .name = "session_label",
    .title = "Label a checkpoint",
    .description = "Gives a checkpoint (default: the newest) a label usable wherever a "
                   "checkpoint id is (from, to, checkpoint). A label names one checkpoint: "
                   "given again, it moves.",
    /* clang-format off */
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", "
        SESS_REF_SCHEMA("checkpoint", "the checkpoint to label (default: the newest)") ", "
        "\"label\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 64, "
        "\"description\": \"letters, digits, '.', '_' or '-', not starting with '.' or '-', "
        "not only digits\"}}, "
        "\"required\": [\"session_id\", \"label\"], \"additionalProperties\": false}",
    /* clang-format on */
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"checkpoint_id\": {\"type\": \"integer\"}, \"label\": "
                     "{\"type\": \"string\"}}, \"required\": [\"session_id\", \"checkpoint_id\", "
                     "\"label\"]}",
    .needs_policy = true,
    .run = run_label,
};
