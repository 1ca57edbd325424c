/* sessions.h — the session table: one workspace and one scratch directory per
 * session under STATE/sessions/ID, created 0700 with an unguessable ID.
 *
 * Locking: one mutex guards the table (the list, every session's refs and
 * closed flag). A tool call holds a reference (sessions_get .. sessions_put)
 * for as long as it uses a session; closing one unlists it at once, flags it
 * so running commands get killed, and removes its directories when the last
 * reference goes. Each live session holds an flock on STATE/sessions/ID/.lock:
 * a later drun-mcp sweeps only directories whose lock nobody holds, so a
 * crash (kill -9) leaves nothing behind after the next start, and two servers
 * can share one state dir.
 */
#ifndef DRUN_RT_SESSIONS_H
#define DRUN_RT_SESSIONS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SESSION_ID_LEN 32 /* 128 random bits, lower-case hex */
#define SESSION_LABEL_MAX 64

/* Who made a session (SPEC §12 "who sees what"): session_list shows a client
 * its own; an ID is a capability within one principal and worthless to the
 * others (they get "no such session"). */
typedef struct session_owner {
    unsigned principal; /* bearer token index (0: no tokens, or stdio) */
    uint64_t client;    /* one MCP client: a stdio connection or an Mcp-Session-Id */
} session_owner_t;

typedef struct session {
    char id[SESSION_ID_LEN + 1];
    char *label;               /* as given at creation ("" if none), owned */
    char *workspace, *scratch; /* absolute host paths, owned */
    int ws_fd;                 /* O_DIRECTORY fd of the workspace: root of every file tool */
    int64_t created_ms;        /* wall clock, ms since the epoch */
    session_owner_t owner;     /* set at creation, never changed */
    _Atomic int64_t last_used; /* monotonic ms of the last call that touched it */
    atomic_bool closing;       /* set by close/reap/shutdown: running commands stop */
    atomic_int running;        /* commands running now */
    pthread_mutex_t write_mu;  /* serialises quota-checked writes into the workspace */
    struct ckpt *ckpt;         /* its checkpoints (ckpt.h), set once right after creation; freed with it */
    /* table-owned (under the table mutex): */
    int refs;               /* tool calls using it */
    bool closed;            /* unlisted; removed when refs reaches 0 */
    int lock_fd;            /* flock'd STATE/sessions/ID/.lock */
    struct sessions *table; /* back pointer */
} session_t;

typedef struct sessions sessions_t;

/* Opens (creating 0700 as needed) STATE/sessions and sweeps the directories
 * that no live server holds. NULL with *err (caller frees). */
sessions_t *sessions_new(const char *state_dir, char **err);

/* Closes every session, removes every directory, frees the table. Sessions
 * still referenced are flagged closing and left for their last put. */
void sessions_free(sessions_t *t);

/* Creates a session owned by *owner when fewer than max_sessions are open.
 * Returns it with one reference (sessions_put when done), or NULL with *err —
 * a sentence for the model — when the limit is reached or the directories
 * cannot be made. */
session_t *sessions_create(sessions_t *t, const session_owner_t *owner, int64_t max_sessions,
                           const char *label, char **err);

/* Looks id up among the sessions of principal and takes a reference,
 * refreshing its idle clock; another principal's session is "no such
 * session", exactly as an unknown ID. A session idle for longer than idle_ms
 * (> 0) is expired on the spot. NULL with *err. */
session_t *sessions_get(sessions_t *t, const char *id, unsigned principal, int64_t idle_ms,
                        char **err);

/* Drops a reference taken by sessions_create/sessions_get. */
void sessions_put(session_t *s);

/* Closes id (a session of principal): unlisted now, commands killed,
 * directories removed when the last reference goes. false with *err when
 * there is no such session. */
bool sessions_close(sessions_t *t, const char *id, unsigned principal, char **err);

/* Closes sessions with no call in progress that were idle longer than
 * idle_ms. Returns how many. */
size_t sessions_reap(sessions_t *t, int64_t idle_ms);

typedef struct session_info {
    char id[SESSION_ID_LEN + 1];
    char *label;     /* owned by the snapshot */
    char *workspace; /* owned by the snapshot */
    int64_t created_ms;
    int64_t idle_ms;
    int running;
} session_info_t;

/* A copy of the open sessions owned by *who (principal and client), oldest
 * first; who NULL: all of them. Free with sessions_info_free. */
size_t sessions_list(sessions_t *t, const session_owner_t *who, session_info_t **out);
void sessions_info_free(session_info_t *v, size_t n);

size_t sessions_count(sessions_t *t);
const char *sessions_root(const sessions_t *t); /* STATE/sessions, absolute */
int sessions_rootfd(const sessions_t *t);       /* its kept directory fd (checkpoint stores live there) */

#endif
