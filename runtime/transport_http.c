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
 * the bearer token when one is configured (401), path (404), method (405),
 * Content-Type (415), Accept (406), body size (413).
 *
 * Locking: `mu` guards the MCP-session table (each entry's refs and gone
 * flag) and the count of streaming workers; an entry is freed when it is
 * gone and no request holds it. Each stream has its own mutex and condition
 * between the worker that produces events and the MHD thread that sends them.
 */
#include <arpa/inet.h>
#include <errno.h>
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

#include "buf.h"
#include "log.h"
#include "sessions.h"
#include "transport.h"

#define MCP_PATH "/mcp"
#define HTTP_CONN_LIMIT 64
#define MCP_SESSIONS_MAX 256
#define MCP_SESSION_IDLE_MS (60 * 60 * 1000)
#define SID_LEN 32

typedef struct hconn {     /* one MCP session */
    char id[SID_LEN + 1];
    mcp_conn_t *mc;
    int refs;              /* requests using it (under hserver.mu) */
    bool gone;             /* deleted or expired; freed when refs reaches 0 */
    int64_t last_used;     /* monotonic ms */
} hconn_t;

typedef struct hserver {
    mcp_server_t *srv;
    struct MHD_Daemon *d;
    const char *token;     /* required bearer token, or NULL */
    size_t token_len;
    size_t max_body;
    unsigned port;
    bool wildcard;         /* bound to 0.0.0.0 or :: */
    char self[80];         /* "ADDR:PORT" of a specific non-loopback bind, or "" */
    pthread_mutex_t mu;    /* guards conns and workers */
    pthread_cond_t cv;     /* signalled when workers drops */
    VEC(hconn_t *) conns;
    int workers;           /* streaming worker threads alive */
} hserver_t;

typedef struct hreq {      /* one HTTP request in progress (MHD's con_cls) */
    buf_t body;
    bool too_large;
} hreq_t;

/* ---- responses ------------------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *ctype,
                               char *body, const char *hname, const char *hvalue)
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
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* An HTTP-level refusal, with a JSON-RPC error body (id null) that says why. */
static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, const char *msg,
                              const char *hname, const char *hvalue)
{
    log_debug("http %u: %s", status, msg);
    return respond(c, status, "application/json", jr_error(NULL, -32000, msg, NULL), hname,
                   hvalue);
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

/* Constant-time comparison: the token must not leak through timing. */
static bool token_ok(const hserver_t *hs, const char *auth)
{
    if (!auth || strncasecmp(auth, "Bearer ", 7))
        return false;
    const char *got = auth + 7;
    size_t glen = strlen(got);
    unsigned char d = glen != hs->token_len;
    for (size_t i = 0; i < hs->token_len; i++)
        d |= (unsigned char)(hs->token[i] ^ (i < glen ? got[i] : 0));
    return d == 0;
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

/* Unlists expired entries (mu held); frees the unused ones. */
static void sweep_locked(hserver_t *hs)
{
    int64_t now = rt_now_ms();
    for (size_t i = 0; i < hs->conns.n;) {
        hconn_t *h = hs->conns.v[i];
        if (h->refs == 0 && now - h->last_used > MCP_SESSION_IDLE_MS) {
            hs->conns.v[i] = hs->conns.v[--hs->conns.n];
            hconn_free(h);
        } else {
            i++;
        }
    }
}

static hconn_t *hconn_get(hserver_t *hs, const char *id)
{
    hconn_t *found = NULL;
    pthread_mutex_lock(&hs->mu);
    if (strlen(id) == SID_LEN)
        for (size_t i = 0; i < hs->conns.n; i++) {
            hconn_t *h = hs->conns.v[i];
            unsigned char d = 0;
            for (size_t k = 0; k < SID_LEN; k++)
                d |= (unsigned char)(h->id[k] ^ id[k]);
            if (!d && !h->gone && rt_now_ms() - h->last_used <= MCP_SESSION_IDLE_MS) {
                found = h;
                h->refs++;
                h->last_used = rt_now_ms();
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
    h->last_used = rt_now_ms();
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
    pthread_mutex_t mu;    /* guards everything below */
    pthread_cond_t cv;     /* new events, or done */
    buf_t pending;         /* event bytes not yet handed to MHD */
    size_t off;            /* of pending, already handed */
    bool done;             /* the final response is in pending */
    bool abandoned;        /* MHD dropped the response (client gone) */
    int refs;              /* the worker and the MHD response */
    hserver_t *hs;
    hconn_t *hc;           /* referenced until the worker ends */
    jr_msg_t msg;          /* the request (owned) */
} stream_t;

static void stream_release(stream_t *st)
{
    pthread_mutex_lock(&st->mu);
    bool last = --st->refs == 0;
    pthread_mutex_unlock(&st->mu);
    if (!last)
        return;
    buf_free(&st->pending);
    jr_msg_free(&st->msg);
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
                                    jr_msg_t *m)
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
        char *e = jr_error(st->msg.id, JR_INTERNAL_ERROR, "Internal error: no thread", NULL);
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

/* ---- methods ------------------------------------------------------------------------------- */

static enum MHD_Result do_initialize(hserver_t *hs, struct MHD_Connection *c, jr_msg_t *m)
{
    pthread_mutex_lock(&hs->mu);
    sweep_locked(hs);
    bool full = hs->conns.n >= MCP_SESSIONS_MAX;
    pthread_mutex_unlock(&hs->mu);
    if (full)
        return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                      "Too many MCP sessions: end one with DELETE /mcp", NULL, NULL);
    mcp_conn_t *mc = mcp_conn_new(hs->srv);
    mcp_reply_t r;
    mcp_dispatch(mc, m, NULL, &r);
    if (!r.initialize) {
        mcp_conn_free(mc);
        return respond(c, MHD_HTTP_OK, "application/json", r.text, NULL, NULL);
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
    h->last_used = rt_now_ms();
    pthread_mutex_lock(&hs->mu);
    vec_push(&hs->conns, h);
    pthread_mutex_unlock(&hs->mu);
    log_info("MCP session %.8s… opened", h->id);
    return respond(c, MHD_HTTP_OK, "application/json", r.text, "Mcp-Session-Id", h->id);
}

static enum MHD_Result do_post(hserver_t *hs, struct MHD_Connection *c, hreq_t *rq)
{
    jr_msg_t m;
    jr_parse(rq->body.p ? rq->body.p : "", rq->body.len, &m);
    enum MHD_Result ret;
    if (m.kind == JR_REQUEST && !strcmp(m.method, "initialize")) {
        ret = do_initialize(hs, c, &m);
        jr_msg_free(&m);
        return ret;
    }
    const char *sid = header(c, "Mcp-Session-Id");
    if (m.kind == JR_INVALID && !sid) {
        ret = respond(c, MHD_HTTP_BAD_REQUEST, "application/json",
                      jr_error(m.id, m.error, m.error_msg, NULL), NULL, NULL);
        jr_msg_free(&m);
        return ret;
    }
    if (!sid) {
        jr_msg_free(&m);
        return refuse(c, MHD_HTTP_BAD_REQUEST,
                      "Bad Request: the Mcp-Session-Id header is required; send initialize "
                      "first", NULL, NULL);
    }
    hconn_t *hc = hconn_get(hs, sid);
    if (!hc) {
        jr_msg_free(&m);
        return refuse(c, MHD_HTTP_NOT_FOUND,
                      "Not Found: unknown or expired MCP session; initialize a new one", NULL,
                      NULL);
    }
    const char *pv = header(c, "MCP-Protocol-Version");
    if (pv && !mcp_version_supported(pv)) {
        hconn_put(hs, hc);
        jr_msg_free(&m);
        return refuse(c, MHD_HTTP_BAD_REQUEST,
                      "Bad Request: unsupported MCP-Protocol-Version (supported: 2025-11-25, "
                      "2025-06-18, 2025-03-26)", NULL, NULL);
    }
    if (m.kind == JR_REQUEST && !strcmp(m.method, "tools/call") && m.progress_token &&
        accepts(header(c, "Accept") ? header(c, "Accept") : "*/*", "text/event-stream"))
        return stream_start(hs, c, hc, &m); /* takes m and hc */

    mcp_reply_t r;
    mcp_dispatch(hc->mc, &m, NULL, &r);
    hconn_put(hs, hc);
    if (r.bad)
        ret = respond(c, MHD_HTTP_BAD_REQUEST, "application/json", r.text, NULL, NULL);
    else if (m.kind != JR_REQUEST || !r.text) {
        free(r.text);
        ret = respond(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
    } else
        ret = respond(c, MHD_HTTP_OK, "application/json", r.text, NULL, NULL);
    jr_msg_free(&m);
    return ret;
}

static enum MHD_Result do_delete(hserver_t *hs, struct MHD_Connection *c)
{
    const char *sid = header(c, "Mcp-Session-Id");
    if (!sid)
        return refuse(c, MHD_HTTP_BAD_REQUEST, "Bad Request: the Mcp-Session-Id header is required",
                      NULL, NULL);
    hconn_t *hc = hconn_get(hs, sid);
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

/* The checks that need only the headers (see the top of the file). */
static enum MHD_Result precheck(hserver_t *hs, struct MHD_Connection *c, const char *url,
                                const char *method, bool *ok)
{
    *ok = false;
    const char *host = header(c, MHD_HTTP_HEADER_HOST);
    const char *origin = header(c, "Origin");
    if (host && !host_ok(hs, host))
        return refuse(c, MHD_HTTP_FORBIDDEN, "Forbidden: unexpected Host header", NULL, NULL);
    if (origin && !origin_ok(hs, origin))
        return refuse(c, MHD_HTTP_FORBIDDEN, "Forbidden: requests from this Origin are refused",
                      NULL, NULL);
    if (hs->token && !token_ok(hs, header(c, MHD_HTTP_HEADER_AUTHORIZATION)))
        return refuse(c, MHD_HTTP_UNAUTHORIZED,
                      "Unauthorized: send Authorization: Bearer with the server's token",
                      MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"drun-mcp\"");
    if (strcmp(url, MCP_PATH))
        return refuse(c, MHD_HTTP_NOT_FOUND, "Not Found: the MCP endpoint is /mcp", NULL, NULL);
    bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
    if (!post && strcmp(method, MHD_HTTP_METHOD_DELETE))
        return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                      "Method Not Allowed: POST a message, or DELETE to end the session "
                      "(this server offers no GET stream)",
                      MHD_HTTP_HEADER_ALLOW, "POST, DELETE");
    if (post) {
        if (!is_json_type(header(c, MHD_HTTP_HEADER_CONTENT_TYPE)))
            return refuse(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                          "Unsupported Media Type: POST application/json", NULL, NULL);
        const char *acc = header(c, MHD_HTTP_HEADER_ACCEPT);
        if (acc && !(accepts(acc, "application/json") && accepts(acc, "text/event-stream")))
            return refuse(c, MHD_HTTP_NOT_ACCEPTABLE,
                          "Not Acceptable: Accept must list application/json and "
                          "text/event-stream", NULL, NULL);
        const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > hs->max_body)
            return refuse(c, MHD_HTTP_CONTENT_TOO_LARGE, "Payload Too Large", NULL, NULL);
    }
    *ok = true;
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
        bool ok;
        enum MHD_Result r = precheck(hs, c, url, method, &ok);
        if (!ok)
            return r;
        *con_cls = xcalloc(1, sizeof(hreq_t));
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->body.len + *upload_size > hs->max_body)
            rq->too_large = true;
        else
            buf_add(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->too_large)
        return refuse(c, MHD_HTTP_CONTENT_TOO_LARGE, "Payload Too Large", NULL, NULL);
    if (!strcmp(method, MHD_HTTP_METHOD_DELETE))
        return do_delete(hs, c);
    return do_post(hs, c, rq);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)c, (void)code;
    hreq_t *rq = *con_cls;
    if (rq) {
        buf_free(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
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

int http_run(mcp_server_t *srv, const http_opts_t *o, int stop_fd)
{
    hserver_t hs = {.srv = srv, .token = o->token, .max_body = o->max_body};
    hs.token_len = o->token ? strlen(o->token) : 0;
    pthread_mutex_init(&hs.mu, NULL);
    pthread_cond_init(&hs.cv, NULL);
    struct sockaddr_storage sa;
    socklen_t salen;
    if (!parse_listen(o->listen, &sa, &salen, &hs)) {
        log_error("--listen %s: expected ADDR:PORT, [ADDR]:PORT or PORT with a numeric address",
                  o->listen);
        return 2;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    hs.d = MHD_start_daemon(flags, (uint16_t)hs.port, NULL, NULL, handler, &hs,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &hs,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONN_LIMIT,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, &hs, MHD_OPTION_END);
    if (!hs.d) {
        log_error("cannot listen on %s: %s", o->listen, strerror(errno));
        return 2;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(hs.d, MHD_DAEMON_INFO_BIND_PORT);
    if (info && info->port)
        hs.port = info->port;
    const char *shown = hs.self[0] ? hs.self : sa.ss_family == AF_INET6 ? "[::1]" : "127.0.0.1";
    /* Printed whatever the log level: with port 0 it is how a caller learns the port. */
    fprintf(stderr, "drun-mcp: listening on http://%s:%u/mcp\n", shown, hs.port);

    struct pollfd p = {stop_fd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    log_info("stopping the HTTP transport");
    MHD_quiesce_daemon(hs.d);
    pthread_mutex_lock(&hs.mu);
    for (size_t i = 0; i < hs.conns.n; i++)
        mcp_conn_cancel_all(hs.conns.v[i]->mc);
    pthread_mutex_unlock(&hs.mu);
    MHD_stop_daemon(hs.d);
    pthread_mutex_lock(&hs.mu);
    while (hs.workers > 0)
        pthread_cond_wait(&hs.cv, &hs.mu);
    for (size_t i = 0; i < hs.conns.n; i++)
        hconn_free(hs.conns.v[i]);
    vec_free(&hs.conns);
    pthread_mutex_unlock(&hs.mu);
    pthread_mutex_destroy(&hs.mu);
    pthread_cond_destroy(&hs.cv);
    return 0;
}
