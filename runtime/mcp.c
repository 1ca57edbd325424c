/* mcp.c — the MCP lifecycle and method dispatch (see mcp.h). */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "server.h"
#include "tools.h"

#ifndef DRUN_VERSION
#define DRUN_VERSION "0.0.0"
#endif

/* The revisions spoken, newest first: the first is offered to a client
 * that asks for anything else (MCP lifecycle, version negotiation). */
static const char *const versions[] = {MCP_LATEST_VERSION, "2025-06-18", "2025-03-26"};

bool mcp_version_supported(const char *v)
{
    for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
        if (!strcmp(v, versions[i]))
            return true;
    return false;
}

enum {
    CONN_NEW,
    CONN_OPEN,
    CONN_READY
};

struct mcp_conn {
    mcp_server_t *srv;
    pthread_mutex_t mu;  /* guards state, version and inflight */
    int state;           /* CONN_NEW until initialize, OPEN after, READY after initialized */
    char version[16];    /* negotiated revision */
    mcp_req_t *inflight; /* tools/call requests running now */
    session_owner_t who; /* the principal and client id every call runs as */
};

/* ---- server ----------------------------------------------------------------------------- */

static void *reaper_main(void *arg)
{
    mcp_server_t *s = arg;
    pthread_mutex_lock(&s->reaper_mu);
    while (!s->reaper_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&s->reaper_cv, &s->reaper_mu, &ts);
        if (s->reaper_stop)
            break;
        pthread_mutex_unlock(&s->reaper_mu);
        /* peek, not acquire: the reaper must not count as a call, nor be the
         * one that notices a config change. */
        lpolicy_t *lp = reload_peek(s->reload);
        if (lp)
            sessions_reap(s->sessions,
                          policy_get(lp->pol, S_SESSION_IDLE_TIMEOUT_SECS) * 1000);
        reload_release(lp);
        pthread_mutex_lock(&s->reaper_mu);
    }
    pthread_mutex_unlock(&s->reaper_mu);
    return NULL;
}

mcp_server_t *mcp_server_new(const mcp_opts_t *o, char **err)
{
    sessions_t *sessions = sessions_new(o->state_dir, err);
    if (!sessions)
        return NULL;
    mcp_server_t *s = xcalloc(1, sizeof *s);
    s->config = o->config ? xstrdup(o->config) : NULL;
    s->artifacts = o->artifacts ? xstrdup(o->artifacts) : NULL;
    s->state_dir = xstrdup(o->state_dir);
    s->transport = xstrdup(o->transport ? o->transport : "stdio");
    s->no_spawn = o->no_spawn;
    s->sessions = sessions;
    s->janitor = o->no_spawn ? NULL : janitor_new();
    s->reload = reload_new(o->config, o->artifacts, !o->no_sandbox);
    s->tools_json = tools_list_json();
    /* bash when the host has it (the sandbox sees the same /usr), else sh. */
    s->shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
    s->started_ms = clock_wall_ms();
    pthread_mutex_init(&s->reaper_mu, NULL);
    pthread_cond_init(&s->reaper_cv, NULL);
    if (!o->no_reaper) {
        int rc = pthread_create(&s->reaper, NULL, reaper_main, s);
        if (rc)
            log_warn("no idle reaper (%s): idle sessions expire on their next use only",
                     strerror(rc));
        s->reaper_running = rc == 0;
    }
    return s;
}

void mcp_server_free(mcp_server_t *s)
{
    if (!s)
        return;
    if (s->reaper_running) {
        pthread_mutex_lock(&s->reaper_mu);
        s->reaper_stop = true;
        pthread_cond_signal(&s->reaper_cv);
        pthread_mutex_unlock(&s->reaper_mu);
        pthread_join(s->reaper, NULL);
    }
    /* Placeholders may live inside session directories: they go first. */
    janitor_free(s->janitor);
    sessions_free(s->sessions);
    reload_free(s->reload);
    pthread_mutex_destroy(&s->reaper_mu);
    pthread_cond_destroy(&s->reaper_cv);
    free(s->tools_json);
    free(s->config);
    free(s->artifacts);
    free(s->state_dir);
    free(s->transport);
    free(s);
}

char *mcp_server_describe(mcp_server_t *s, bool *healthy)
{
    lpolicy_t *lp = reload_peek(s->reload);
    reload_stats_t st;
    reload_get_stats(s->reload, &st);
    *healthy = lp && !st.error;
    char *d;
    if (lp && !st.error)
        d = xasprintf("policy generation %llu from %s", (unsigned long long)lp->generation,
                      lp->source);
    else if (lp)
        d = xasprintf("the config does not compile; serving the last good policy from %s:\n%s",
                      lp->source, st.error);
    else
        d = xasprintf("NO POLICY: sandboxed tools refuse until the config compiles:\n%s",
                      st.error ? st.error : "(no diagnostic)");
    reload_stats_free(&st);
    reload_release(lp);
    return d;
}

/* ---- connections ----------------------------------------------------------------------- */

mcp_conn_t *mcp_conn_new(mcp_server_t *s)
{
    mcp_conn_t *c = xcalloc(1, sizeof *c);
    c->srv = s;
    c->who.client = atomic_fetch_add(&s->clients, 1) + 1;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void mcp_conn_set_principal(mcp_conn_t *c, unsigned principal) { c->who.principal = principal; }

static void cancel_req(mcp_req_t *r)
{
    atomic_store(&r->cancelled, true);
    if (r->wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t w = write(r->wake_fd, &one, sizeof one);
        (void)w; /* an eventfd write only fails on counter overflow */
    }
}

void mcp_conn_cancel_all(mcp_conn_t *c)
{
    pthread_mutex_lock(&c->mu);
    for (mcp_req_t *r = c->inflight; r; r = r->next)
        cancel_req(r);
    pthread_mutex_unlock(&c->mu);
}

void mcp_conn_cancel(mcp_conn_t *c, const char *key)
{
    pthread_mutex_lock(&c->mu);
    for (mcp_req_t *r = c->inflight; r; r = r->next)
        if (!strcmp(r->id_key, key)) {
            log_info("request %s cancelled", r->id_key + 2);
            cancel_req(r);
        }
    pthread_mutex_unlock(&c->mu);
}

void mcp_conn_free(mcp_conn_t *c)
{
    if (!c)
        return;
    mcp_conn_cancel_all(c);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void mcp_conn_version(mcp_conn_t *c, char out[16])
{
    pthread_mutex_lock(&c->mu);
    memcpy(out, c->version, 16);
    pthread_mutex_unlock(&c->mu);
}

/* ---- requests in flight ----------------------------------------------------------------- */

bool mcp_req_cancelled(const mcp_req_t *r) { return atomic_load(&r->cancelled); }

void mcp_req_progress(mcp_req_t *r, double progress, double total, const char *message)
{
    if (!r || !r->progress_token || !r->sink || progress <= r->progress)
        return;
    r->progress = progress;
    json_t *p = json_object();
    json_object_set_new(p, "progress", json_real(progress));
    if (total > 0)
        json_object_set_new(p, "total", json_real(total));
    if (message)
        json_object_set_new(p, "message", jsonrpc_string(message));
    /* The token goes back as the client wrote it, like an id (jsonrpc.h). */
    char *params = jsonrpc_print_with_raw(p, "progressToken", r->progress_token);
    json_decref(p);
    char *text = jsonrpc_notification("notifications/progress", params);
    r->sink->send(r->sink->ctx, text);
    free(text);
    free(params);
}

/* Registers a request; false when its id is already in flight. */
static bool req_begin(mcp_conn_t *c, mcp_req_t *r)
{
    pthread_mutex_lock(&c->mu);
    for (mcp_req_t *q = c->inflight; q; q = q->next)
        if (!strcmp(q->id_key, r->id_key)) {
            pthread_mutex_unlock(&c->mu);
            return false;
        }
    r->next = c->inflight;
    c->inflight = r;
    pthread_mutex_unlock(&c->mu);
    return true;
}

static void req_end(mcp_conn_t *c, mcp_req_t *r)
{
    pthread_mutex_lock(&c->mu);
    for (mcp_req_t **pp = &c->inflight; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    pthread_mutex_unlock(&c->mu);
}

/* ---- methods --------------------------------------------------------------------------- */

static const char instructions[] =
    "drun-mcp runs commands and file operations in sandboxed sessions. Call create_session "
    "first, then pass its session_id to the session_* tools. Paths are relative to the "
    "session workspace. Every call runs under the operator's policy (get_policy shows it); "
    "a refused call says which rule refused it and what to change.";

static void do_initialize(mcp_conn_t *c, jsonrpc_msg_t *m, mcp_reply_t *out)
{
    const json_t *pv = json_object_get(m->params, "protocolVersion");
    if (!json_is_string(pv)) {
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS,
                                  "Invalid params: initialize needs params.protocolVersion (a string)",
                                  NULL);
        return;
    }
    const char *asked = json_string_value(pv);
    const char *v = mcp_version_supported(asked) ? asked : MCP_LATEST_VERSION;
    pthread_mutex_lock(&c->mu);
    if (c->state != CONN_NEW) {
        pthread_mutex_unlock(&c->mu);
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST,
                                  "Invalid Request: this connection is initialized already", NULL);
        return;
    }
    c->state = CONN_OPEN;
    snprintf(c->version, sizeof c->version, "%s", v);
    pthread_mutex_unlock(&c->mu);

    json_t *r = json_object();
    json_object_set_new(r, "protocolVersion", json_string(v));
    json_t *tools = jsonrpc_add_object(jsonrpc_add_object(r, "capabilities"), "tools");
    json_object_set_new(tools, "listChanged", json_false());
    json_t *info = jsonrpc_add_object(r, "serverInfo");
    json_object_set_new(info, "name", json_string("drun-mcp"));
    json_object_set_new(info, "title", json_string("drun sandboxed sessions"));
    json_object_set_new(info, "version", json_string(DRUN_VERSION));
    json_object_set_new(r, "instructions", json_string(instructions));
    out->text = jsonrpc_result(m->id, r);
    out->initialize = true;
}

static void do_tools_call(mcp_conn_t *c, jsonrpc_msg_t *m, const mcp_sink_t *sink, mcp_reply_t *out)
{
    const json_t *name = json_object_get(m->params, "name");
    const json_t *args = json_object_get(m->params, "arguments");
    if (!json_is_string(name)) {
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS,
                                  "Invalid params: tools/call needs params.name (a string)", NULL);
        return;
    }
    if (args && !json_is_object(args)) {
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS,
                                  "Invalid params: params.arguments must be an object", NULL);
        return;
    }
    const tool_def_t *def = tools_find(json_string_value(name));
    if (!def) {
        /* Unknown tools are a protocol error (MCP tools, error handling). */
        char *msg = xasprintf("Unknown tool: %s", json_string_value(name));
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS, msg, NULL);
        free(msg);
        return;
    }
    mcp_req_t r = {
        .id_key = m->id_key,
        .who = c->who,
        .wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
        .progress_token = m->progress_token,
        .sink = sink,
    };
    atomic_init(&r.cancelled, false);
    if (!req_begin(c, &r)) {
        if (r.wake_fd >= 0)
            close(r.wake_fd);
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST,
                                  "Invalid Request: a request with this id is still running", NULL);
        return;
    }
    json_t *empty = args ? NULL : json_object();
    json_t *result = tools_call(c->srv, &r, def, args ? args : empty, m->has_nul);
    json_decref(empty);
    req_end(c, &r);
    if (r.wake_fd >= 0)
        close(r.wake_fd);
    out->text = jsonrpc_result(m->id, result);
    out->cancelled = atomic_load(&r.cancelled);
}

static void request(mcp_conn_t *c, jsonrpc_msg_t *m, const mcp_sink_t *sink, mcp_reply_t *out)
{
    const char *meth = m->method;
    if (m->bad_params) {
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS,
                                  "Invalid params: \"params\" must be an object", NULL);
        return;
    }
    if (!strcmp(meth, "initialize")) {
        do_initialize(c, m, out);
        return;
    }
    if (!strcmp(meth, "ping")) {
        /* Allowed in every state (MCP lifecycle). */
        out->text = jsonrpc_result(m->id, NULL);
        return;
    }
    pthread_mutex_lock(&c->mu);
    int state = c->state;
    pthread_mutex_unlock(&c->mu);
    if (state == CONN_NEW) {
        out->text = jsonrpc_error(m->id, JSONRPC_INVALID_REQUEST,
                                  "Invalid Request: the connection is not initialized; send "
                                  "initialize first",
                                  NULL);
        return;
    }
    if (!strcmp(meth, "tools/list")) {
        const json_t *cursor = json_object_get(m->params, "cursor");
        if (cursor && !json_is_string(cursor)) {
            out->text = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS,
                                      "Invalid params: params.cursor must be a string", NULL);
            return;
        }
        char *r = xasprintf("{\"tools\":%s}", c->srv->tools_json);
        out->text = jsonrpc_result_text(m->id, r);
        free(r);
        return;
    }
    if (!strcmp(meth, "tools/call")) {
        do_tools_call(c, m, sink, out);
        return;
    }
    char *msg = xasprintf("Method not found: %s", meth);
    out->text = jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND, msg, NULL);
    free(msg);
}

static void notification(mcp_conn_t *c, jsonrpc_msg_t *m)
{
    if (m->bad_params)
        return; /* never answered, and nothing to act on */
    if (!strcmp(m->method, "notifications/initialized")) {
        pthread_mutex_lock(&c->mu);
        if (c->state == CONN_OPEN)
            c->state = CONN_READY;
        pthread_mutex_unlock(&c->mu);
    } else if (!strcmp(m->method, "notifications/cancelled") && m->cancel_key) {
        mcp_conn_cancel(c, m->cancel_key);
    }
    /* Every other notification needs nothing from a tools-only server. */
}

void mcp_dispatch(mcp_conn_t *c, jsonrpc_msg_t *m, const mcp_sink_t *sink, mcp_reply_t *out)
{
    memset(out, 0, sizeof *out);
    switch (m->kind) {
    case JSONRPC_INVALID:
        out->text = jsonrpc_error(m->id, m->error, m->error_msg, NULL);
        out->bad = true;
        return;
    case JSONRPC_RESPONSE:
        return; /* this server sends no requests, so there is nothing to match */
    case JSONRPC_NOTIFICATION:
        notification(c, m);
        return;
    case JSONRPC_REQUEST:
        request(c, m, sink, out);
        return;
    }
}

void mcp_handle(mcp_conn_t *c, const char *text, size_t len, const mcp_sink_t *sink,
                mcp_reply_t *out)
{
    jsonrpc_msg_t m;
    jsonrpc_parse(text, len, &m);
    mcp_dispatch(c, &m, sink, out);
    jsonrpc_msg_free(&m);
}
