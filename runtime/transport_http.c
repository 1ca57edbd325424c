/* transport_http.c — MCP Streamable HTTP (revision 2025-11-25) at /mcp,
 * served by libmicrohttpd with one thread per connection.
 *
 * POST carries one JSON-RPC message. Requests get an application/json
 * response, except a tools/call that asked for progress from a client that
 * accepts text/event-stream: that one streams its progress notifications and
 * then the response as server-sent events. Notifications and responses get
 * 202. initialize issues an Mcp-Session-Id, required on every later request
 * (400 without, 404 when unknown); DELETE ends it; GET has no stream (405).
 *
 * Every request passes, in this order: Host and Origin (403: DNS rebinding),
 * the bearer token when tokens are configured (401), path (404), method
 * (405), Content-Type (415), Accept (406), body size (413), the server-wide
 * budget of body bytes in flight (503).
 *
 * Limits that hold under abuse (SPEC §12): each connection has its own
 * record (MHD's socket context, `hsock_t`); a watchdog thread shuts down any
 * connection whose request has not arrived whole (headers and body) within
 * the request deadline — libmicrohttpd's own timeout only counts idleness,
 * which a byte every few seconds resets — and cancels the plain tools/call
 * of a connection whose client hung up. Admission (accept_policy) caps the
 * connections per peer address below the server-wide limit; at either cap,
 * a new connection takes the slot of the oldest one that has not yet sent a
 * request head that passed the token check, so half-open connections cannot
 * crowd out a client that behaves, even one at the same address. Refusals
 * before authentication close the connection. The MCP-session table evicts
 * an idle entry rather than refuse a new client.
 *
 * Locking: `mu` guards the MCP-session table (each entry's refs and gone
 * flag), the count of streaming workers and the body bytes in flight; an
 * entry is freed when it is gone and no request holds it. `sock_mu` guards
 * the connection records. Each stream has its own mutex and condition
 * between the worker that produces events and the MHD thread that sends them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "drun_policy.h"
#include "log.h"
#include "sessions.h"
#include "transport.h"

#define MCP_PATH "/mcp"
#define SID_LEN 32
#define WATCH_TICK_MS 200      /* the watchdog's period: deadline and hang-up latency */
#define CONN_SLACK 64          /* MHD's own limit over ours: evicted connections still closing */
#define RESPONSE_IDLE_SECS 600 /* libmicrohttpd's idle timeout, for responses not read */

typedef struct hconn {         /* one MCP session */
    char id[SID_LEN + 1];
    mcp_conn_t *mc;
    unsigned principal; /* the token that initialized it; only that token may use it */
    int refs;           /* requests using it (under hserver.mu) */
    bool gone;          /* deleted or expired; freed when refs reaches 0 */
    bool used;          /* a request besides initialize came (under hserver.mu) */
    int64_t last_used;  /* monotonic ms */
} hconn_t;

typedef struct hsock {            /* one TCP connection (MHD's socket context) */
    int fd;                       /* our dup of its socket: shutdown(2) ends the connection */
    int64_t since;                /* monotonic ms: start of the request now arriving */
    bool receiving;               /* headers or body still arriving: the deadline runs */
    bool killed;                  /* shut down by the watchdog */
    bool gone;                    /* closed by MHD; the watchdog frees it (it may be polling fd) */
    bool authed;                  /* a request head passed the checks (token included) */
    bool served;                  /* a response on it has ended: it waits for the next request */
    struct sockaddr_storage peer; /* the client's address (its port ignored) */
    mcp_conn_t *mc;               /* a plain tools/call running on it: cancelled on hang-up */
    char *key;                    /* its id key (borrowed from the request) */
    unsigned gen;                 /* bumped whenever mc changes */
    struct hsock *next;
} hsock_t;

typedef struct hserver {
    mcp_server_t *srv;
    struct MHD_Daemon *d;
    const http_opts_t *o;
    unsigned port;
    bool wildcard;           /* bound to 0.0.0.0 or :: */
    char self[80];           /* "ADDR:PORT" of a specific non-loopback bind, or "" */
    pthread_mutex_t mu;      /* guards conns, workers and body_bytes */
    pthread_cond_t cv;       /* signalled when workers drops */
    VEC(hconn_t *) conns;
    int workers;             /* streaming worker threads alive */
    size_t body_bytes;       /* request body bytes in flight (charged at the headers) */
    pthread_mutex_t sock_mu; /* guards socks */
    hsock_t *socks;
    pthread_t watchdog;
    int stop_pipe[2]; /* written to stop the watchdog */
} hserver_t;

typedef struct hreq {   /* one HTTP request in progress (MHD's con_cls) */
    buf_t body;
    size_t charged;     /* of hserver.body_bytes, given back when the request ends */
    bool too_large;     /* past --max-message: 413 */
    bool over_budget;   /* past --max-body-total while arriving: 503 */
    unsigned principal; /* whose token it carries */
} hreq_t;

/* ---- responses ------------------------------------------------------------------------- */

static enum MHD_Result respond_ex(struct MHD_Connection *c, unsigned status, const char *ctype,
                                  char *body, const char *hname, const char *hvalue, bool close)
{
    struct MHD_Response *r =
        body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE)
             : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    if (ctype)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (hname)
        MHD_add_response_header(r, hname, hvalue);
    if (close)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *ctype,
                               char *body, const char *hname, const char *hvalue)
{
    return respond_ex(c, status, ctype, body, hname, hvalue, false);
}

/* An HTTP-level refusal, with a JSON-RPC error body (id null) that says why. */
static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, const char *msg,
                              const char *hname, const char *hvalue)
{
    log_debug("http %u: %s", status, msg);
    return respond(c, status, "application/json", jsonrpc_error(NULL, -32000, msg, NULL), hname,
                   hvalue);
}

/* The same, and the connection closes after it: a peer that has not
 * authenticated (or sent a foreign Host/Origin) keeps no slot. */
static enum MHD_Result refuse_close(struct MHD_Connection *c, unsigned status, const char *msg,
                                    const char *hname, const char *hvalue)
{
    log_debug("http %u: %s (closing)", status, msg);
    return respond_ex(c, status, "application/json", jsonrpc_error(NULL, -32000, msg, NULL), hname,
                      hvalue, true);
}

/* ---- request checks --------------------------------------------------------------------- */

static const char *header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* Is host ("name:port") one this server answers to? Loopback names always,
 * the bound address when specific, and any IP literal on a wildcard bind:
 * DNS rebinding needs a DNS name, so a literal cannot be one. */
static bool host_ok(const hserver_t *hs, const char *host)
{
    const char *colon = strrchr(host, ':');
    if (!colon || (strchr(host, ']') && colon < strchr(host, ']')))
        return false; /* browsers always send the port of a non-default one */
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || port != hs->port)
        return false;
    size_t n = (size_t)(colon - host);
    static const char *const loop[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < 3; i++)
        if (strlen(loop[i]) == n && !strncasecmp(host, loop[i], n))
            return true;
    if (hs->self[0] && !strcasecmp(host, hs->self))
        return true;
    if (hs->wildcard) {
        char lit[64];
        if (n < 2 || n >= sizeof lit)
            return false;
        if (host[0] == '[') {
            memcpy(lit, host + 1, n - 2);
            lit[n - 2] = '\0';
            struct in6_addr a6;
            return host[n - 1] == ']' && inet_pton(AF_INET6, lit, &a6) == 1;
        }
        memcpy(lit, host, n);
        lit[n] = '\0';
        struct in_addr a4;
        return inet_pton(AF_INET, lit, &a4) == 1;
    }
    return false;
}

static bool origin_ok(const hserver_t *hs, const char *origin)
{
    /* A browser page on any other origin must not drive this server. */
    return !strncasecmp(origin, "http://", 7) && host_ok(hs, origin + 7);
}

/* Which token auth carries: its index in o->tokens (the principal), or -1.
 * Every token is compared, each in constant time: neither a token nor which
 * one matched may leak through timing. */
static int token_principal(const hserver_t *hs, const char *auth)
{
    if (!auth || strncasecmp(auth, "Bearer ", 7))
        return -1;
    const char *got = auth + 7;
    size_t glen = strlen(got);
    int found = -1;
    for (size_t t = 0; t < hs->o->ntokens; t++) {
        const char *tok = hs->o->tokens[t];
        size_t tlen = strlen(tok);
        unsigned char d = glen != tlen;
        for (size_t i = 0; i < tlen; i++)
            d |= (unsigned char)(tok[i] ^ (i < glen ? got[i] : 0));
        if (d == 0 && found < 0)
            found = (int)t;
    }
    return found;
}

/* Does the media-type list accept type ("application/json")? */
static bool accepts(const char *list, const char *type)
{
    const char *slash = strchr(type, '/');
    size_t major = (size_t)(slash - type);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        size_t n = strcspn(p, ",;");
        size_t m = n;
        while (m && (p[m - 1] == ' ' || p[m - 1] == '\t'))
            m--;
        if ((m == strlen(type) && !strncasecmp(p, type, m)) || (m == 3 && !strncmp(p, "*/*", 3)) ||
            (m == major + 2 && !strncasecmp(p, type, major) && !strncmp(p + major, "/*", 2)))
            return true;
        p += n;
        if (*p == ';')
            p += strcspn(p, ",");
    }
    return false;
}

static bool is_json_type(const char *ct)
{
    if (!ct || strncasecmp(ct, "application/json", 16))
        return false;
    char c = ct[16];
    return c == '\0' || c == ';' || c == ' ' || c == '\t';
}

/* ---- the MCP-session table ---------------------------------------------------------------- */

static void hconn_free(hconn_t *h)
{
    mcp_conn_free(h->mc);
    free(h);
}

static int64_t client_idle_ms(const hserver_t *hs) { return (int64_t)hs->o->client_idle * 1000; }

/* Unlists expired entries (mu held); frees the unused ones. */
static void sweep_locked(hserver_t *hs)
{
    int64_t now = clock_now_ms();
    for (size_t i = 0; i < hs->conns.n;) {
        hconn_t *h = hs->conns.v[i];
        if (h->refs == 0 && now - h->last_used > client_idle_ms(hs)) {
            hs->conns.v[i] = hs->conns.v[--hs->conns.n];
            hconn_free(h);
        } else {
            i++;
        }
    }
}

/* The entry to evict (mu held): the least recently used one with no request
 * running, preferring those that never sent anything but initialize (what a
 * flood of initialize calls leaves); conns.n when every entry is busy. */
static size_t victim_locked(const hserver_t *hs)
{
    size_t lru = hs->conns.n;
    for (size_t i = 0; i < hs->conns.n; i++) {
        const hconn_t *h = hs->conns.v[i];
        if (h->refs)
            continue;
        const hconn_t *best = lru < hs->conns.n ? hs->conns.v[lru] : NULL;
        if (!best || (best->used && !h->used) ||
            (best->used == h->used && h->last_used < best->last_used))
            lru = i;
    }
    return lru;
}

/* Makes room for one more MCP session (mu held): expired entries go, then,
 * while the table is full, the victim above — a flood of initialize calls
 * must not lock new clients out (SPEC §12). An evicted client gets 404 and
 * initializes again, as MCP asks. false when every entry is busy. */
static bool make_room_locked(hserver_t *hs)
{
    sweep_locked(hs);
    while (hs->conns.n >= hs->o->max_clients) {
        size_t lru = victim_locked(hs);
        if (lru == hs->conns.n)
            return false;
        hconn_t *h = hs->conns.v[lru];
        hs->conns.v[lru] = hs->conns.v[--hs->conns.n];
        log_info("MCP session %.8s… evicted (idle %lld s): the table is full", h->id,
                 (long long)((clock_now_ms() - h->last_used) / 1000));
        hconn_free(h);
    }
    return true;
}

/* The live MCP session id of principal, with a reference; NULL when unknown,
 * ended, expired or another principal's. request: a JSON-RPC request will
 * be served on it (marks it used: see victim_locked). */
static hconn_t *hconn_get(hserver_t *hs, const char *id, unsigned principal, bool request)
{
    hconn_t *found = NULL;
    pthread_mutex_lock(&hs->mu);
    if (strlen(id) == SID_LEN)
        for (size_t i = 0; i < hs->conns.n; i++) {
            hconn_t *h = hs->conns.v[i];
            unsigned char d = 0;
            for (size_t k = 0; k < SID_LEN; k++)
                d |= (unsigned char)(h->id[k] ^ id[k]);
            if (!d && !h->gone && h->principal == principal &&
                clock_now_ms() - h->last_used <= client_idle_ms(hs)) {
                found = h;
                h->used |= request;
                h->refs++;
                h->last_used = clock_now_ms();
                break;
            }
        }
    pthread_mutex_unlock(&hs->mu);
    return found;
}

static void hconn_put(hserver_t *hs, hconn_t *h)
{
    pthread_mutex_lock(&hs->mu);
    bool free_it = --h->refs == 0 && h->gone;
    h->last_used = clock_now_ms();
    pthread_mutex_unlock(&hs->mu);
    if (free_it)
        hconn_free(h);
}

static void unlist(hserver_t *hs, hconn_t *h)
{
    for (size_t i = 0; i < hs->conns.n; i++)
        if (hs->conns.v[i] == h) {
            hs->conns.v[i] = hs->conns.v[--hs->conns.n];
            break;
        }
    h->gone = true;
}

/* ---- streaming responses (SSE) ------------------------------------------------------------- */

typedef struct stream {
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cv;  /* new events, or done */
    buf_t pending;      /* event bytes not yet handed to MHD */
    size_t off;         /* of pending, already handed */
    bool done;          /* the final response is in pending */
    bool abandoned;     /* MHD dropped the response (client gone) */
    int refs;           /* the worker and the MHD response */
    hserver_t *hs;
    hconn_t *hc;        /* referenced until the worker ends */
    jsonrpc_msg_t msg;  /* the request (owned) */
} stream_t;

static void stream_release(stream_t *st)
{
    pthread_mutex_lock(&st->mu);
    bool last = --st->refs == 0;
    pthread_mutex_unlock(&st->mu);
    if (!last)
        return;
    buf_free(&st->pending);
    jsonrpc_msg_free(&st->msg);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st);
}

static void stream_event(stream_t *st, const char *json, bool final)
{
    pthread_mutex_lock(&st->mu);
    if (!st->abandoned && json) {
        buf_adds(&st->pending, "event: message\ndata: ");
        buf_adds(&st->pending, json);
        buf_adds(&st->pending, "\n\n");
    }
    if (final)
        st->done = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

static void stream_sink(void *ctx, const char *json) { stream_event(ctx, json, false); }

static void *stream_worker(void *arg)
{
    stream_t *st = arg;
    hserver_t *hs = st->hs;
    mcp_sink_t sink = {stream_sink, st};
    mcp_reply_t r;
    mcp_dispatch(st->hc->mc, &st->msg, &sink, &r);
    stream_event(st, r.text, true);
    free(r.text);
    hconn_put(hs, st->hc);
    stream_release(st);
    pthread_mutex_lock(&hs->mu);
    hs->workers--;
    pthread_cond_broadcast(&hs->cv);
    pthread_mutex_unlock(&hs->mu);
    return NULL;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_t *st = cls;
    pthread_mutex_lock(&st->mu);
    /* Blocking here is allowed: every connection has its own thread. */
    while (st->off == st->pending.len && !st->done)
        pthread_cond_wait(&st->cv, &st->mu);
    ssize_t n;
    if (st->off < st->pending.len) {
        size_t k = st->pending.len - st->off;
        if (k > max)
            k = max;
        memcpy(buf, st->pending.p + st->off, k);
        st->off += k;
        if (st->off == st->pending.len) {
            buf_truncate(&st->pending, 0);
            st->off = 0;
        }
        n = (ssize_t)k;
    } else {
        n = MHD_CONTENT_READER_END_OF_STREAM;
    }
    pthread_mutex_unlock(&st->mu);
    return n;
}

static void stream_gone(void *cls)
{
    stream_t *st = cls;
    pthread_mutex_lock(&st->mu);
    st->abandoned = true;
    /* The client hung up before the result: stop the work it asked for.
     * Under st->mu, the worker cannot finish (and drop hc) meanwhile. */
    if (!st->done && st->msg.id_key)
        mcp_conn_cancel(st->hc->mc, st->msg.id_key);
    pthread_mutex_unlock(&st->mu);
    stream_release(st);
}

/* Starts a streamed tools/call; takes over *m and the reference on hc. */
static enum MHD_Result stream_start(hserver_t *hs, struct MHD_Connection *c, hconn_t *hc,
                                    jsonrpc_msg_t *m)
{
    stream_t *st = xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    st->refs = 2;
    st->hs = hs;
    st->hc = hc;
    st->msg = *m;
    memset(m, 0, sizeof *m);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, st, stream_gone);
    pthread_mutex_lock(&hs->mu);
    hs->workers++;
    pthread_mutex_unlock(&hs->mu);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, stream_worker, st);
    pthread_attr_destroy(&attr);
    if (rc) {
        pthread_mutex_lock(&hs->mu);
        hs->workers--;
        pthread_mutex_unlock(&hs->mu);
        char *e = jsonrpc_error(st->msg.id, JSONRPC_INTERNAL_ERROR, "Internal error: no thread", NULL);
        stream_event(st, e, true);
        free(e);
        hconn_put(hs, hc);
        stream_release(st);
    }
    if (!r) {
        stream_gone(st);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    enum MHD_Result q = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return q;
}

/* ---- connections: the request deadline and hang-ups ----------------------------------------- */

static hsock_t *sock_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

/* MHD_OPTION_NOTIFY_CONNECTION: a record per TCP connection. The socket is
 * dup'ed so that the watchdog's shutdown(2) and poll(2) never act on a
 * descriptor number MHD has closed and the kernel given to someone else. */
static void notify_conn(void *cls, struct MHD_Connection *c, void **ctx,
                        enum MHD_ConnectionNotificationCode toe)
{
    hserver_t *hs = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *i =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        int fd = i ? fcntl(i->connect_fd, F_DUPFD_CLOEXEC, 3) : -1;
        if (fd < 0) {
            log_warn("no descriptor to watch a connection with (%s): it has no deadline",
                     strerror(errno));
            *ctx = NULL;
            return;
        }
        hsock_t *k = xcalloc(1, sizeof *k);
        k->fd = fd;
        k->since = clock_now_ms();
        k->receiving = true;
        const union MHD_ConnectionInfo *a =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (a && a->client_addr)
            memcpy(&k->peer, a->client_addr,
                   a->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                         : sizeof(struct sockaddr_in));
        pthread_mutex_lock(&hs->sock_mu);
        k->next = hs->socks;
        hs->socks = k;
        pthread_mutex_unlock(&hs->sock_mu);
        *ctx = k;
    } else if (*ctx) {
        hsock_t *k = *ctx;
        pthread_mutex_lock(&hs->sock_mu);
        k->gone = true; /* freed by the watchdog, which may be polling k->fd now */
        k->mc = NULL;
        pthread_mutex_unlock(&hs->sock_mu);
        *ctx = NULL;
    }
}

/* Same host address (ports ignored)? */
static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr *b)
{
    if (a->ss_family != b->sa_family)
        return false;
    if (b->sa_family == AF_INET)
        return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
    if (b->sa_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
    return false;
}

/* Ends k now (sock_mu held): MHD's thread sees the socket shut and closes it. */
static void sock_kill_locked(hsock_t *k, const char *why)
{
    log_info("closing a connection: %s", why);
    if (shutdown(k->fd, SHUT_RDWR) < 0 && errno != ENOTCONN)
        log_warn("shutdown of a connection: %s", strerror(errno));
    k->killed = true;
}

/* MHD's accept policy: admits a connection from addr when its peer has fewer
 * than max_conns_per_peer and the server fewer than max_conns live ones.
 * At a cap, the oldest connection that never authenticated (of that peer,
 * or of anyone for the server-wide cap) is shut down to make room: a flood
 * of half-open connections then only ever displaces itself. Refused only
 * when every connection in the way has authenticated. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)len;
    hserver_t *hs = cls;
    pthread_mutex_lock(&hs->sock_mu);
    unsigned all = 0, mine = 0;
    hsock_t *old_all = NULL, *old_mine = NULL;
    for (hsock_t *k = hs->socks; k; k = k->next) {
        if (k->gone || k->killed)
            continue;
        bool peer = same_peer(&k->peer, addr);
        all++;
        mine += peer;
        if (!k->authed && (!old_all || k->since < old_all->since))
            old_all = k;
        if (!k->authed && peer && (!old_mine || k->since < old_mine->since))
            old_mine = k;
    }
    enum MHD_Result ok = MHD_YES;
    if (mine >= hs->o->max_conns_per_peer) {
        if (old_mine)
            sock_kill_locked(old_mine, "its peer is at max-connections-per-peer and it has not "
                                       "authenticated");
        else
            ok = MHD_NO;
    } else if (all >= hs->o->max_conns) {
        if (old_all)
            sock_kill_locked(old_all, "the server is at max-connections and it has not "
                                      "authenticated");
        else
            ok = MHD_NO;
    }
    pthread_mutex_unlock(&hs->sock_mu);
    if (!ok)
        log_info("refusing a connection: every slot in the way is held by an authenticated client");
    return ok;
}

/* A request head on c passed every check (the token included). */
static void sock_authed(hserver_t *hs, struct MHD_Connection *c)
{
    hsock_t *k = sock_of(c);
    if (!k)
        return;
    pthread_mutex_lock(&hs->sock_mu);
    k->authed = true;
    pthread_mutex_unlock(&hs->sock_mu);
}

/* The request on c has arrived whole (receiving false) or its response is
 * done and the next one may begin (true: the deadline starts again). */
static void sock_receiving(hserver_t *hs, struct MHD_Connection *c, bool receiving)
{
    hsock_t *k = sock_of(c);
    if (!k)
        return;
    pthread_mutex_lock(&hs->sock_mu);
    k->receiving = receiving;
    k->served |= receiving;
    k->since = clock_now_ms();
    pthread_mutex_unlock(&hs->sock_mu);
}

/* A plain tools/call (id key) runs on c for mc (NULL: it ended): while it
 * runs, the client hanging up cancels it. */
static void sock_call(hserver_t *hs, struct MHD_Connection *c, mcp_conn_t *mc, char *key)
{
    hsock_t *k = sock_of(c);
    if (!k)
        return;
    pthread_mutex_lock(&hs->sock_mu);
    k->mc = mc;
    k->key = key;
    k->gen++;
    pthread_mutex_unlock(&hs->sock_mu);
}

/* One pass over the records (sock_mu held): frees those MHD closed, shuts
 * down those past the deadline, and lists in pf/ref those running a call. */
static size_t watch_pass_locked(hserver_t *hs, struct pollfd *pf, hsock_t **ref, unsigned *gen,
                                size_t cap)
{
    int64_t now = clock_now_ms(), limit = (int64_t)hs->o->request_timeout * 1000;
    size_t n = 0;
    for (hsock_t **pp = &hs->socks; *pp;) {
        hsock_t *k = *pp;
        if (k->gone) {
            *pp = k->next;
            close(k->fd);
            free(k);
            continue;
        }
        if (k->receiving && !k->killed && now - k->since > limit) {
            /* Headers and body must arrive within the deadline: MHD's own timeout counts
             * idleness only, so a byte every few seconds would hold the slot for ever. */
            char why[160];
            snprintf(why, sizeof why, "its request did not arrive within request-timeout (%lld ms since %s)",
                     (long long)(now - k->since), k->served ? "its last response" : "it opened");
            sock_kill_locked(k, why);
        }
        if (k->mc && n < cap) {
            pf[n] = (struct pollfd){k->fd, POLLRDHUP, 0};
            ref[n] = k;
            gen[n] = k->gen;
            n++;
        }
        pp = &k->next;
    }
    return n;
}

#define WATCH_MAX 1024

static void *watchdog_main(void *arg)
{
    hserver_t *hs = arg;
    struct pollfd *pf = xcalloc(WATCH_MAX + 1, sizeof *pf);
    hsock_t **ref = xcalloc(WATCH_MAX, sizeof *ref);
    unsigned *gen = xcalloc(WATCH_MAX, sizeof *gen);
    for (;;) {
        pthread_mutex_lock(&hs->sock_mu);
        size_t n = watch_pass_locked(hs, pf, ref, gen, WATCH_MAX);
        pthread_mutex_unlock(&hs->sock_mu);
        pf[n] = (struct pollfd){hs->stop_pipe[0], POLLIN, 0};
        int r = poll(pf, n + 1, WATCH_TICK_MS);
        if (r < 0 && errno != EINTR) {
            log_error("watchdog poll: %s", strerror(errno));
            break;
        }
        if (r > 0 && pf[n].revents)
            break;
        if (r <= 0)
            continue;
        pthread_mutex_lock(&hs->sock_mu);
        for (size_t i = 0; i < n; i++) {
            /* Records are freed by this thread only, so ref[i] is alive; gen
             * says the call polled is the one still running. */
            hsock_t *k = ref[i];
            if (!(pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) || k->gone || !k->mc ||
                k->gen != gen[i])
                continue;
            log_info("the client hung up: cancelling request %s", k->key + 2);
            mcp_conn_cancel(k->mc, k->key);
            k->mc = NULL; /* once */
        }
        pthread_mutex_unlock(&hs->sock_mu);
    }
    free(pf);
    free(ref);
    free(gen);
    return NULL;
}

/* ---- methods ------------------------------------------------------------------------------- */

/* A 200 or 400 with the reply, or 202 when none is due. The status rule
 * (docs/runtime.md): 400 only when the message itself was unusable (parse
 * error, or an envelope that is no JSON-RPC request); every response to a
 * well-formed request, error or not, comes with 200. */
static enum MHD_Result reply(struct MHD_Connection *c, const jsonrpc_msg_t *m, mcp_reply_t *r)
{
    if (r->bad)
        return respond(c, MHD_HTTP_BAD_REQUEST, "application/json", r->text, NULL, NULL);
    if (m->kind != JSONRPC_REQUEST || !r->text) {
        free(r->text);
        return respond(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
    }
    return respond(c, MHD_HTTP_OK, "application/json", r->text, NULL, NULL);
}

static enum MHD_Result do_initialize(hserver_t *hs, struct MHD_Connection *c, jsonrpc_msg_t *m,
                                     unsigned principal)
{
    pthread_mutex_lock(&hs->mu);
    bool full = !make_room_locked(hs);
    pthread_mutex_unlock(&hs->mu);
    if (full)
        return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                      "Too many MCP sessions, every one with a request running: retry later",
                      MHD_HTTP_HEADER_RETRY_AFTER, "1");
    mcp_conn_t *mc = mcp_conn_new(hs->srv);
    mcp_conn_set_principal(mc, principal);
    mcp_reply_t r;
    mcp_dispatch(mc, m, NULL, &r);
    if (!r.initialize) {
        mcp_conn_free(mc);
        return reply(c, m, &r);
    }
    hconn_t *h = xcalloc(1, sizeof *h);
    unsigned char rnd[SID_LEN / 2];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        /* A guessable session id would let another local client hijack it. */
        mcp_conn_free(mc);
        free(h);
        free(r.text);
        return refuse(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "no randomness for a session id",
                      NULL, NULL);
    }
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(h->id + 2 * i, 3, "%02x", rnd[i]);
    h->mc = mc;
    h->principal = principal;
    h->last_used = clock_now_ms();
    pthread_mutex_lock(&hs->mu);
    make_room_locked(hs); /* others may have been added meanwhile: at worst one over */
    vec_push(&hs->conns, h);
    pthread_mutex_unlock(&hs->mu);
    log_info("MCP session %.8s… opened", h->id);
    return respond(c, MHD_HTTP_OK, "application/json", r.text, "Mcp-Session-Id", h->id);
}

static bool is_tools_call(const jsonrpc_msg_t *m)
{
    return m->kind == JSONRPC_REQUEST && !m->bad_params && !strcmp(m->method, "tools/call");
}

static enum MHD_Result do_post(hserver_t *hs, struct MHD_Connection *c, hreq_t *rq)
{
    jsonrpc_msg_t m;
    jsonrpc_parse(rq->body.p ? rq->body.p : "", rq->body.len, &m);
    /* The parsed message is all that is needed from here on: one copy of
     * the body, not two, for as long as the call runs. */
    buf_free(&rq->body);
    enum MHD_Result ret;
    const char *sid = header(c, "Mcp-Session-Id");
    bool init = m.kind == JSONRPC_REQUEST && !strcmp(m.method, "initialize");
    if (init && !sid) {
        ret = do_initialize(hs, c, &m, rq->principal);
        jsonrpc_msg_free(&m);
        return ret;
    }
    if (m.kind == JSONRPC_INVALID && !sid) {
        ret = respond(c, MHD_HTTP_BAD_REQUEST, "application/json",
                      jsonrpc_error(m.id, m.error, m.error_msg, NULL), NULL, NULL);
        jsonrpc_msg_free(&m);
        return ret;
    }
    if (!sid) {
        jsonrpc_msg_free(&m);
        return refuse(c, MHD_HTTP_BAD_REQUEST,
                      "Bad Request: the Mcp-Session-Id header is required; send initialize "
                      "first",
                      NULL, NULL);
    }
    /* From here on, initialize too goes to the session it names: the
     * connection is initialized already, which it answers with -32600. */
    hconn_t *hc = hconn_get(hs, sid, rq->principal, m.kind == JSONRPC_REQUEST && !init);
    if (!hc) {
        jsonrpc_msg_free(&m);
        return refuse(c, MHD_HTTP_NOT_FOUND,
                      "Not Found: unknown or expired MCP session; initialize a new one", NULL,
                      NULL);
    }
    const char *pv = header(c, "MCP-Protocol-Version");
    if (pv && !mcp_version_supported(pv)) {
        hconn_put(hs, hc);
        jsonrpc_msg_free(&m);
        return refuse(c, MHD_HTTP_BAD_REQUEST,
                      "Bad Request: unsupported MCP-Protocol-Version (supported: 2025-11-25, "
                      "2025-06-18, 2025-03-26)",
                      NULL, NULL);
    }
    if (is_tools_call(&m) && m.progress_token &&
        accepts(header(c, "Accept") ? header(c, "Accept") : "*/*", "text/event-stream"))
        return stream_start(hs, c, hc, &m); /* takes m and hc */

    bool watch = is_tools_call(&m) && m.id_key;
    if (watch)
        sock_call(hs, c, hc->mc, m.id_key); /* a hang-up now cancels it */
    mcp_reply_t r;
    mcp_dispatch(hc->mc, &m, NULL, &r);
    if (watch)
        sock_call(hs, c, NULL, NULL);
    hconn_put(hs, hc);
    ret = reply(c, &m, &r);
    jsonrpc_msg_free(&m);
    return ret;
}

static enum MHD_Result do_delete(hserver_t *hs, struct MHD_Connection *c, unsigned principal)
{
    const char *sid = header(c, "Mcp-Session-Id");
    if (!sid)
        return refuse(c, MHD_HTTP_BAD_REQUEST, "Bad Request: the Mcp-Session-Id header is required",
                      NULL, NULL);
    hconn_t *hc = hconn_get(hs, sid, principal, false);
    if (!hc)
        return refuse(c, MHD_HTTP_NOT_FOUND, "Not Found: unknown or expired MCP session", NULL,
                      NULL);
    pthread_mutex_lock(&hs->mu);
    unlist(hs, hc);
    pthread_mutex_unlock(&hs->mu);
    /* Requests still running on it are stopped; the entry goes with the
     * last of them. */
    mcp_conn_cancel_all(hc->mc);
    log_info("MCP session %.8s… ended by the client", hc->id);
    hconn_put(hs, hc);
    return respond(c, MHD_HTTP_OK, NULL, NULL, NULL, NULL);
}

/* Takes n more bytes of the server-wide body budget; false when that would
 * pass --max-body-total (the request is then refused, never buffered). */
static bool budget_take(hserver_t *hs, hreq_t *rq, size_t n)
{
    pthread_mutex_lock(&hs->mu);
    bool ok = hs->body_bytes + n <= hs->o->max_body_total;
    if (ok) {
        hs->body_bytes += n;
        rq->charged += n;
    }
    pthread_mutex_unlock(&hs->mu);
    return ok;
}

static void budget_give_back(hserver_t *hs, hreq_t *rq)
{
    pthread_mutex_lock(&hs->mu);
    hs->body_bytes -= rq->charged;
    rq->charged = 0;
    pthread_mutex_unlock(&hs->mu);
}

static enum MHD_Result refuse_busy(struct MHD_Connection *c)
{
    /* Closing: the body the client is still sending is not read. */
    return refuse_close(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                        "Service Unavailable: too many request bytes in flight; retry shortly",
                        MHD_HTTP_HEADER_RETRY_AFTER, "1");
}

/* The checks that need only the headers (see the top of the file); on
 * success *rq is the new request's record. */
static enum MHD_Result precheck(hserver_t *hs, struct MHD_Connection *c, const char *url,
                                const char *method, hreq_t **rq)
{
    *rq = NULL;
    const char *host = header(c, MHD_HTTP_HEADER_HOST);
    const char *origin = header(c, "Origin");
    if (host && !host_ok(hs, host))
        return refuse_close(c, MHD_HTTP_FORBIDDEN, "Forbidden: unexpected Host header", NULL,
                            NULL);
    if (origin && !origin_ok(hs, origin))
        return refuse_close(c, MHD_HTTP_FORBIDDEN,
                            "Forbidden: requests from this Origin are refused", NULL, NULL);
    int principal = 0;
    if (hs->o->ntokens &&
        (principal = token_principal(hs, header(c, MHD_HTTP_HEADER_AUTHORIZATION))) < 0)
        return refuse_close(c, MHD_HTTP_UNAUTHORIZED,
                            "Unauthorized: send Authorization: Bearer with the server's token",
                            MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"drun-mcp\"");
    sock_authed(hs, c); /* no longer displaced by newcomers (accept_policy) */
    if (strcmp(url, MCP_PATH))
        return refuse(c, MHD_HTTP_NOT_FOUND, "Not Found: the MCP endpoint is /mcp", NULL, NULL);
    bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
    if (!post && strcmp(method, MHD_HTTP_METHOD_DELETE))
        return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                      "Method Not Allowed: POST a message, or DELETE to end the session "
                      "(this server offers no GET stream)",
                      MHD_HTTP_HEADER_ALLOW, "POST, DELETE");
    unsigned long long len = 0;
    if (post) {
        if (!is_json_type(header(c, MHD_HTTP_HEADER_CONTENT_TYPE)))
            return refuse(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                          "Unsupported Media Type: POST application/json", NULL, NULL);
        const char *acc = header(c, MHD_HTTP_HEADER_ACCEPT);
        if (acc && !(accepts(acc, "application/json") && accepts(acc, "text/event-stream")))
            return refuse(c, MHD_HTTP_NOT_ACCEPTABLE,
                          "Not Acceptable: Accept must list application/json and "
                          "text/event-stream",
                          NULL, NULL);
        const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
        len = cl ? strtoull(cl, NULL, 10) : 0;
        if (len > hs->o->max_body)
            return refuse_close(c, MHD_HTTP_CONTENT_TOO_LARGE, "Payload Too Large", NULL, NULL);
    }
    hreq_t *r = xcalloc(1, sizeof *r);
    r->principal = (unsigned)principal;
    /* A declared body is charged whole before a byte of it is read, and its
     * buffer made once at its size (no doubling copies); a chunked one is
     * charged as it comes (handler). */
    if (len && !budget_take(hs, r, (size_t)len)) {
        free(r);
        return refuse_busy(c);
    }
    if (len)
        buf_reserve(&r->body, (size_t)len);
    *rq = r;
    return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)version;
    hserver_t *hs = cls;
    hreq_t *rq = *con_cls;
    if (!rq) {
        enum MHD_Result r = precheck(hs, c, url, method, &rq);
        *con_cls = rq;
        return r;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (rq->too_large || rq->over_budget)
            return MHD_YES; /* discarded: the refusal comes at the end */
        if (rq->body.len + n > hs->o->max_body) {
            rq->too_large = true;
        } else if (rq->body.len + n > rq->charged &&
                   !budget_take(hs, rq, rq->body.len + n - rq->charged)) {
            rq->over_budget = true;
        } else {
            buf_add(&rq->body, upload, n);
            return MHD_YES;
        }
        buf_free(&rq->body);
        return MHD_YES;
    }
    /* The request is here whole: the deadline stops while it is served. */
    sock_receiving(hs, c, false);
    if (rq->too_large)
        return refuse(c, MHD_HTTP_CONTENT_TOO_LARGE, "Payload Too Large", NULL, NULL);
    if (rq->over_budget)
        return refuse_busy(c);
    if (!strcmp(method, MHD_HTTP_METHOD_DELETE))
        return do_delete(hs, c, rq->principal);
    return do_post(hs, c, rq);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    (void)code;
    hserver_t *hs = cls;
    hreq_t *rq = *con_cls;
    if (rq) {
        budget_give_back(hs, rq);
        buf_free(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
    /* The next request on this connection starts its deadline now. */
    sock_receiving(hs, c, true);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    log_info("libmicrohttpd: %s", line);
}

/* ---- listening ------------------------------------------------------------------------------ */

/* Parses "ADDR:PORT", "[V6]:PORT" or "PORT" into sa. */
static bool parse_listen(const char *spec, struct sockaddr_storage *sa, socklen_t *len,
                         hserver_t *hs)
{
    char host[64] = "127.0.0.1";
    const char *port = spec;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
            return false;
        memcpy(host, spec + 1, (size_t)(close - spec - 1));
        host[close - spec - 1] = '\0';
        port = close + 2;
    } else if (strchr(spec, ':')) {
        const char *colon = strrchr(spec, ':');
        if ((size_t)(colon - spec) >= sizeof host)
            return false;
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port = colon + 1;
    }
    if (!strcmp(host, "localhost"))
        strcpy(host, "127.0.0.1");
    char *end;
    unsigned long p = strtoul(port, &end, 10);
    if (!*port || *end || p > 65535)
        return false;
    memset(sa, 0, sizeof *sa);
    struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)p);
        *len = sizeof *s4;
        hs->wildcard = s4->sin_addr.s_addr == htonl(INADDR_ANY);
        if (!hs->wildcard && (ntohl(s4->sin_addr.s_addr) >> 24) != 127)
            snprintf(hs->self, sizeof hs->self, "%s", host);
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)p);
        *len = sizeof *s6;
        hs->wildcard = IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
        if (!hs->wildcard && !IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
            snprintf(hs->self, sizeof hs->self, "[%s]", host);
    } else {
        return false;
    }
    hs->port = (unsigned)p;
    return true;
}

static void stop_watchdog(hserver_t *hs)
{
    char c = 1;
    if (write(hs->stop_pipe[1], &c, 1) != 1)
        log_warn("cannot stop the watchdog: %s", strerror(errno));
    pthread_join(hs->watchdog, NULL);
    for (hsock_t *k = hs->socks, *next; k; k = next) {
        next = k->next;
        close(k->fd);
        free(k);
    }
    hs->socks = NULL;
    close(hs->stop_pipe[0]);
    close(hs->stop_pipe[1]);
}

static struct MHD_Daemon *start_daemon(hserver_t *hs, const struct sockaddr_storage *sa)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (sa->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* The caps are accept_policy's; MHD's, a little higher, only bound the
     * connections it is still closing after an eviction. */
    return MHD_start_daemon(flags, (uint16_t)hs->port, accept_policy, hs, handler, hs,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, hs,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
                            MHD_OPTION_CONNECTION_LIMIT, hs->o->max_conns + CONN_SLACK,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)RESPONSE_IDLE_SECS,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_conn, hs,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, hs, MHD_OPTION_END);
}

int transport_http_run(mcp_server_t *srv, const http_opts_t *o, int stop_fd)
{
    hserver_t hs = {.srv = srv, .o = o};
    struct sockaddr_storage sa;
    socklen_t salen;
    if (!parse_listen(o->listen, &sa, &salen, &hs)) {
        log_error("--listen %s: expected ADDR:PORT, [ADDR]:PORT or PORT with a numeric address",
                  o->listen);
        return 2;
    }
    if (pipe2(hs.stop_pipe, O_CLOEXEC) < 0) {
        log_error("pipe: %s", strerror(errno));
        return 2;
    }
    pthread_mutex_init(&hs.mu, NULL);
    pthread_cond_init(&hs.cv, NULL);
    pthread_mutex_init(&hs.sock_mu, NULL);
    int rc = pthread_create(&hs.watchdog, NULL, watchdog_main, &hs);
    if (rc) {
        log_error("cannot start the connection watchdog: %s", strerror(rc));
        close(hs.stop_pipe[0]);
        close(hs.stop_pipe[1]);
        return 2;
    }
    hs.d = start_daemon(&hs, &sa);
    if (!hs.d) {
        log_error("cannot listen on %s: %s", o->listen, strerror(errno));
        stop_watchdog(&hs);
        return 2;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(hs.d, MHD_DAEMON_INFO_BIND_PORT);
    if (info && info->port)
        hs.port = info->port;
    const char *shown = hs.self[0] ? hs.self : (sa.ss_family == AF_INET6 ? "[::1]" : "127.0.0.1");
    /* Printed whatever the log level: with port 0 it is how a caller learns the port. */
    fprintf(stderr, "drun-mcp: listening on http://%s:%u/mcp\n", shown, hs.port);

    struct pollfd p = {stop_fd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR);
    log_info("stopping the HTTP transport");
    MHD_quiesce_daemon(hs.d);
    pthread_mutex_lock(&hs.mu);
    for (size_t i = 0; i < hs.conns.n; i++)
        mcp_conn_cancel_all(hs.conns.v[i]->mc);
    pthread_mutex_unlock(&hs.mu);
    MHD_stop_daemon(hs.d);
    stop_watchdog(&hs);
    pthread_mutex_lock(&hs.mu);
    while (hs.workers > 0)
        pthread_cond_wait(&hs.cv, &hs.mu);
    for (size_t i = 0; i < hs.conns.n; i++)
        hconn_free(hs.conns.v[i]);
    vec_free(&hs.conns);
    pthread_mutex_unlock(&hs.mu);
    pthread_mutex_destroy(&hs.mu);
    pthread_cond_destroy(&hs.cv);
    pthread_mutex_destroy(&hs.sock_mu);
    return 0;
}
