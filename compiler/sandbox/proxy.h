/* proxy.h — network for sandboxed commands (SPEC §15): an allowlisting HTTP
 * proxy on the host side, one channel per sandbox.
 *
 * The sandbox keeps its own network namespace with only lo. Before it
 * starts, proxy_open makes a channel (an AF_UNIX SOCK_SEQPACKET pair); its
 * sandbox end goes into the sandbox (sbx_exec_t.proxy_fd), where the relay
 * (relay.c) listens on 127.0.0.1:SBX_PROXY_PORT and hands every accepted
 * connection over the channel (SCM_RIGHTS). Here each connection is one
 * tunnel thread: the request head is read under a deadline and parsed
 * (proxyreq.c), the host checked against the allowed lists, the port against
 * command_ports, the name and every address it resolves to against the rules
 * session_fetch obeys (netrefuse.h), then the connection goes to that checked
 * address (never resolved again) and the bytes are relayed under an idle and
 * a total time limit. A sandbox holds at most PROXY_MAX_TUNNELS tunnels at
 * once; what it does beyond that is refused at once, never queued, so a slow
 * or flooding sandbox holds only its own slots. Every refusal is recorded.
 */
#ifndef DRUN_PROXY_H
#define DRUN_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#define SBX_PROXY_PORT 3128         /* where the relay listens inside the sandbox */
#define PROXY_MAX_TUNNELS 32        /* concurrent tunnels per sandbox */
#define PROXY_MAX_TUNNELS_ALL 1024  /* concurrent tunnels of the whole process, at most; less when  \
                                       RLIMIT_NOFILE is low: each tunnel holds two descriptors, and \
                                       the proxy takes no more than half of the process's */
#define PROXY_HEAD_MS 10000         /* the request head must arrive within this */
#define PROXY_CONNECT_MS 10000      /* connecting to the server */
#define PROXY_IDLE_MS 60000         /* a tunnel with no byte either way for this long is closed */
#define PROXY_TOTAL_MS (30 * 60000) /* no tunnel lives longer */

typedef struct proxy_chan proxy_chan_t;

/* One refused request (or a run of them: same host, port and reason). */
typedef struct proxy_refusal {
    long long time_ms; /* when it was first refused: ms since the epoch */
    char *host;        /* the host asked for, quoted (printable ASCII, capped), or "-" */
    int port;          /* the port asked for, or 0 */
    char *reason;      /* one sentence */
    unsigned count;    /* how many times */
} proxy_refusal_t;

/* Called on every refusal as it happens (from a tunnel thread: must be
 * thread-safe), for a log at --log-level info. */
typedef void (*proxy_log_fn)(void *ctx, const char *session, const proxy_refusal_t *r);

typedef struct proxy_opts {
    const char *session;        /* a label for reports ("run", a session id) */
    const domain_rule_t *extra; /* hosts allowed besides command_domains (a package
                                   manager's registries), or NULL */
    size_t nextra;
    proxy_log_fn log;           /* or NULL */
    void *log_ctx;
} proxy_opts_t;

/* True when p gives sandboxed commands any network (command_domains not empty). */
bool proxy_wanted(const policy_t *p);

/* A channel for one sandbox run of p: the allowed hosts and ports are copied
 * (a reload of p changes nothing for a run in progress). NULL with *err. */
proxy_chan_t *proxy_open(const policy_t *p, const proxy_opts_t *o, char **err);

/* The sandbox's end, for sbx_exec_t.proxy_fd. After sandbox_spawn has
 * handed it on, proxy_sandbox_end_close drops the host's copy, so that the
 * channel ends when the sandbox does. */
int proxy_sandbox_fd(const proxy_chan_t *c);
void proxy_sandbox_end_close(proxy_chan_t *c);

/* The refusals so far, merged by host, port and reason, in the order first
 * seen: *out (free with proxy_refusals_free); the count is returned. */
size_t proxy_refusals(proxy_chan_t *c, proxy_refusal_t **out);
void proxy_refusals_free(proxy_refusal_t *v, size_t n);

/* Stops every tunnel of c (their sockets are shut down) and lets c go: it is
 * freed when its last thread has left. NULL is fine. */
void proxy_close(proxy_chan_t *c);

/* The environment a proxied sandbox gets: NULL-terminated "NAME=value"
 * strings (static): HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY and their
 * lower-case forms. */
const char *const *proxy_env(void);

/* The relay (relay.c), run inside the sandbox as the command's parent. When
 * argv is the relay's ("/dev/drun-relay --drun-relay FD PORT -- CMD ..."),
 * runs it and returns the command's exit status; else returns -1 at once.
 * Called first thing in main() of every binary that starts sandboxes. */
int relay_main(int argc, char **argv);

#define SBX_RELAY_PATH "/dev/drun-relay" /* where the runner's own binary is bound in the sandbox */

#endif
