/* mcp.h — the MCP server core: lifecycle, method dispatch and in-flight
 * requests, independent of any transport.
 *
 * A transport owns the bytes: it frames messages, parses them with jsonrpc_parse
 * (or lets mcp_handle do it) and hands each to mcp_dispatch together with a
 * sink for the notifications that request may emit (progress). The core
 * never does I/O of its own, so the fuzz harness drives it with plain
 * buffers and the stdio and HTTP transports share every rule.
 *
 * Threads: mcp_dispatch may run concurrently for many requests, on one
 * connection or many. A connection's lifecycle state and in-flight list are
 * guarded by the connection's mutex; the server's parts (reload.h,
 * sessions.h) do their own locking.
 */
#ifndef DRUN_RT_MCP_H
#define DRUN_RT_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include "jsonrpc.h"

#define MCP_LATEST_VERSION "2025-11-25"

typedef struct mcp_server mcp_server_t;
typedef struct mcp_conn mcp_conn_t;

typedef struct mcp_opts {
    const char *config;    /* --config FILE, or NULL */
    const char *artifacts; /* --artifacts DIR, or NULL */
    const char *state_dir; /* where sessions live (created 0700) */
    const char *transport; /* "stdio" or "http" (reported by get_policy) */
    bool no_spawn;         /* session_bash and session_fetch refuse: the fuzz harness */
    bool no_sandbox;       /* compile policies without sandbox_new: the fuzz harness */
    bool no_reaper;        /* no idle-reaper thread: the fuzz harness */
} mcp_opts_t;

/* Loads the policy (a failing config is reported, not fatal), opens the
 * state dir and starts the idle reaper. NULL with *err (caller frees) when the
 * state dir is unusable. */
mcp_server_t *mcp_server_new(const mcp_opts_t *o, char **err);

/* Stops the reaper, closes every session (removing its directories) and
 * frees the server. Every connection must be freed first. */
void mcp_server_free(mcp_server_t *s);

/* For the startup log: where the policy comes from and its state (caller
 * frees); *healthy is false when the config does not compile. */
char *mcp_server_describe(mcp_server_t *s, bool *healthy);

/* A client connection (stdio: the one peer; HTTP: one Mcp-Session-Id). Each
 * is a client of its own: the sandbox sessions it creates are its own
 * (session_list shows it those only). */
mcp_conn_t *mcp_conn_new(mcp_server_t *s);
/* The principal the connection acts for (HTTP: the index of its bearer
 * token; 0 by default). Set before its first dispatch. */
void mcp_conn_set_principal(mcp_conn_t *c, unsigned principal);
/* Cancels what the connection still runs and frees it once no dispatch is
 * using it (the caller guarantees no new dispatch starts). */
void mcp_conn_free(mcp_conn_t *c);
/* Marks every in-flight request of c cancelled (their commands get killed). */
void mcp_conn_cancel_all(mcp_conn_t *c);
/* Cancels the in-flight request whose id key (jsonrpc_msg_t.id_key) is key, as
 * notifications/cancelled does; nothing when none is running. */
void mcp_conn_cancel(mcp_conn_t *c, const char *key);
/* The negotiated protocol version, "" before initialize. */
void mcp_conn_version(mcp_conn_t *c, char out[16]);

/* Where a request's notifications go: send() receives one complete
 * JSON-RPC notification text (no newline) and must be thread-safe. */
typedef struct mcp_sink {
    void (*send)(void *ctx, const char *json);
    void *ctx;
} mcp_sink_t;

typedef struct mcp_reply {
    char *text;      /* the response (caller frees), NULL when none is due */
    bool cancelled;  /* the client cancelled it: MCP says send nothing (stdio) */
    bool initialize; /* it answered a successful initialize (HTTP issues a session) */
    bool bad;        /* the message itself was unusable: -32700, or -32600 for its
                        envelope (HTTP answers 400; every other error comes with 200) */
} mcp_reply_t;

/* Handles one parsed message. sink may be NULL (no progress possible). */
void mcp_dispatch(mcp_conn_t *c, jsonrpc_msg_t *m, const mcp_sink_t *sink, mcp_reply_t *out);

/* jsonrpc_parse + mcp_dispatch: one message text in, the response text out. */
void mcp_handle(mcp_conn_t *c, const char *text, size_t len, const mcp_sink_t *sink,
                mcp_reply_t *out);

/* True for the three revisions this server speaks. */
bool mcp_version_supported(const char *v);

#endif
