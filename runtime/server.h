/* server.h — the server's internals, shared by mcp.c and the tools: not a
 * public interface (transports use mcp.h).
 *
 * It does not include mcp.h: mcp.c includes this header and tools.h, so an
 * include back would close a circle (scripts/check-layers). The server and
 * the sink are named by their struct tags (mcp.h's mcp_server_t and
 * mcp_sink_t are the same types).
 */
#ifndef DRUN_RT_SERVER_H
#define DRUN_RT_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "janitor.h"
#include "reload.h"
#include "sessions.h"

struct mcp_server {
    char *config, *artifacts, *state_dir, *transport; /* copies of mcp_opts_t */
    bool no_spawn;
    reloader_t *reload;                               /* the policy in force (own locking) */
    sessions_t *sessions;                             /* the session table (own locking) */
    janitor_t *janitor;                               /* placeholder removal (NULL when no_spawn) */
    char *tools_json;                                 /* the tools/list "tools" array, printed once */
    const char *shell;                                /* "/bin/bash" when the host has it, else "/bin/sh" */
    int64_t started_ms;                               /* wall clock */
    atomic_ullong tool_calls;                         /* tools/call handled */
    atomic_ullong clients;                            /* MCP clients so far: the next one's session_owner_t.client */
    /* the idle reaper */
    pthread_t reaper;
    bool reaper_running;
    pthread_mutex_t reaper_mu; /* guards reaper_stop */
    pthread_cond_t reaper_cv;
    bool reaper_stop;
};

/* One in-flight tools/call: what cancellation and progress need. */
typedef struct mcp_req {
    char *id_key;                /* jsonrpc_msg_t.id_key, owned */
    session_owner_t who;         /* the caller: its principal and MCP client (sessions.h) */
    atomic_bool cancelled;       /* set by notifications/cancelled or connection end */
    int wake_fd;                 /* eventfd, written on cancel (wakes exec's poll) */
    char *progress_token;        /* raw JSON of _meta.progressToken, or NULL */
    double progress;             /* last progress value sent (must increase) */
    const struct mcp_sink *sink; /* where notifications go (may be NULL) */
    struct mcp_req *next;        /* in the connection's in-flight list */
} mcp_req_t;

/* Sends notifications/progress for r when the client asked for progress
 * (no-op otherwise). progress must exceed the last value sent; total <= 0
 * means unknown. */
void mcp_req_progress(mcp_req_t *r, double progress, double total, const char *message);

bool mcp_req_cancelled(const mcp_req_t *r);

#endif
