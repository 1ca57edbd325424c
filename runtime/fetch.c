/* fetch.c — session_fetch's transfer loop on libcurl. Per hop: check the URL, the
 * allowlist, local-only names and every resolved address (our own DNS, under the
 * deadline), pin the addresses and gate each socket on them, stream the body
 * under the cap. libcurl never follows a redirect: Location goes round the loop. */
#include "fetch.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "drun_policy.h"
#include "fetch_url.h"

#ifndef DRUN_VERSION
#define DRUN_VERSION "dev"
#endif

#define DEFAULT_TIMEOUT_MS 60000L
#define DEFAULT_CONNECT_TIMEOUT_MS 30000L
#define MAX_REDIRECTS_CAP 20
#define MAX_PINNED 16     /* addresses pinned per host; the rest are checked, not used */
#define CONTENT_TYPE_MAX 256
#define POLL_SLICE_MS 100 /* how often a DNS wait looks at the deadline and the cancel hook */

/* ---- once per process ---------------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

/* curl_global_init is not thread-safe in libcurl 7.88 and must run once,
 * before any handle: pthread_once makes the first fetch do it. */
static void curl_init_once(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- errors ---------------------------------------------------------------------------- */

const char *fetch_error_kind_name(int kind)
{
    switch (kind) {
    case FETCH_OK: return "ok";
    case FETCH_BAD_URL: return "bad-url";
    case FETCH_DENIED_DOMAIN: return "denied-domain";
    case FETCH_DENIED_ADDRESS: return "denied-address";
    case FETCH_TOO_LARGE: return "too-large";
    case FETCH_TIMEOUT: return "timeout";
    case FETCH_NETWORK: return "network";
    case FETCH_HTTP_REDIRECT_LIMIT: return "redirect-limit";
    case FETCH_CANCELLED: return "cancelled";
    case FETCH_IO: return "io";
    }
    return "unknown";
}

/* Records the first failure (kind, msg owned) in res; later ones are ignored. */
static bool fail(fetch_result_t *res, int kind, char *msg)
{
    if (res->error_kind == FETCH_OK) {
        res->error_kind = kind;
        res->error = msg;
    } else {
        free(msg);
    }
    return false;
}

/* The time limits of one fetch, fixed at its start. */
typedef struct limits {
    long timeout_ms;    /* fetch_timeout_ms: the whole fetch */
    long connect_ms;    /* connect_timeout_ms: each hop's connect phase */
    long long start;    /* monotonic ms */
    long long deadline; /* start + timeout_ms */
} limits_t;

/* ---- DNS with a deadline --------------------------------------------------------------- */

/* getaddrinfo has no timeout of its own (resolv.conf's can add up to
 * minutes), and fetch_timeout_ms covers the whole fetch. So the lookup runs in
 * a detached thread that shares this job with the waiter; whoever drops the
 * last reference frees it, so a waiter that gives up never blocks on DNS. */
typedef struct gai_job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;             /* the waiter and the thread */
    bool done;
    int rc;               /* getaddrinfo's result */
    int err;              /* errno after it, for EAI_SYSTEM */
    struct addrinfo *res; /* owned by the job until the waiter takes it */
    char host[];          /* the name looked up */
} gai_job_t;

static void gai_release(gai_job_t *j)
{
    pthread_mutex_lock(&j->mu);
    int left = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (left) return;
    if (j->res) freeaddrinfo(j->res);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

static void gai_lookup(gai_job_t *j)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(j->host, NULL, &hints, &ai);
    int err = errno;
    pthread_mutex_lock(&j->mu);
    j->rc = rc;
    j->err = err;
    j->res = ai;
    j->done = true;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void *gai_thread(void *arg)
{
    gai_lookup(arg);
    gai_release(arg);
    return NULL;
}

typedef VEC(netaddr_t) addr_vec_t;

static void add_unique(addr_vec_t *v, const netaddr_t *a)
{
    for (size_t i = 0; i < v->n; i++)
        if (netaddr_equal(&v->v[i], a)) return;
    vec_push(v, *a);
}

/* Resolves host into out (every address, deduplicated) before the deadline.
 * Returns FETCH_OK or a failure recorded in res. */
static int resolve(const fetch_req_t *req, const char *host, const limits_t *lim, addr_vec_t *out,
                   fetch_result_t *res)
{
    size_t hl = strlen(host);
    gai_job_t *j = xcalloc(1, sizeof *j + hl + 1);
    memcpy(j->host, host, hl + 1);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&j->mu, NULL);
    j->refs = 2;

    /* The helper thread takes no signals: drun-mcp's handlers (SIGCHLD,
     * SIGTERM) belong to its own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int err = pthread_create(&t, &at, gai_thread, j);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) { /* no thread to spare: look up inline, without the deadline */
        j->refs = 1;
        gai_lookup(j);
    }

    int kind = FETCH_OK;
    pthread_mutex_lock(&j->mu);
    while (!j->done) {
        long long now = now_ms();
        if (now >= lim->deadline) {
            kind = FETCH_TIMEOUT;
            break;
        }
        /* The hook runs without the job's lock: it may do I/O (progress
         * notifications) and must never hold up the lookup thread. */
        pthread_mutex_unlock(&j->mu);
        bool go_on = !req->progress || req->progress(req->ctx, 0);
        pthread_mutex_lock(&j->mu);
        if (!go_on) {
            kind = FETCH_CANCELLED;
            break;
        }
        if (j->done) break;
        long long wait = lim->deadline - now < POLL_SLICE_MS ? lim->deadline - now : POLL_SLICE_MS;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += wait / 1000;
        ts.tv_nsec += (wait % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&j->cv, &j->mu, &ts);
    }
    struct addrinfo *ai = NULL;
    int rc = j->rc, rc_errno = j->err;
    if (kind == FETCH_OK) {
        ai = j->res;
        j->res = NULL;
    }
    pthread_mutex_unlock(&j->mu);
    gai_release(j);
    if (kind == FETCH_TIMEOUT) {
        fail(res, FETCH_TIMEOUT,
             xasprintf("timed out looking up host '%s' (fetch_timeout_ms %ld ms)", host, lim->timeout_ms));
        return kind;
    }
    if (kind == FETCH_CANCELLED) {
        fail(res, FETCH_CANCELLED, xstrdup("the fetch was cancelled"));
        return kind;
    }
    if (rc != 0) {
        const char *e = rc == EAI_SYSTEM ? strerror(rc_errno) : gai_strerror(rc);
        fail(res, FETCH_NETWORK, xasprintf("could not resolve host '%s': %s", host, e));
        return FETCH_NETWORK;
    }
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        netaddr_t a;
        if (netaddr_from_sockaddr(p->ai_addr, p->ai_addrlen, &a)) add_unique(out, &a);
    }
    freeaddrinfo(ai);
    if (out->n == 0) {
        fail(res, FETCH_NETWORK, xasprintf("host '%s' has no IPv4 or IPv6 address", host));
        return FETCH_NETWORK;
    }
    return FETCH_OK;
}

/* ---- one hop ----------------------------------------------------------------------------- */

typedef struct hop {
    CURL *c; /* this hop's handle */
    const fetch_req_t *req;
    const fetch_url_t *u;
    const addr_vec_t *addrs; /* checked addresses: the only ones a socket may reach */
    int fd;
    long long max;           /* byte cap */
    long long *bytes;        /* body bytes written (shared across hops: only the last writes) */
    long status;             /* final status once headers ended */
    bool redirect;           /* a followable redirect: its body is not read */
    char *location;          /* its Location value, owned */
    int abort_kind;          /* a callback stopped the transfer: why */
    char *abort_msg;         /* owned */
    char *refused_addr;      /* a socket to an unchecked address was refused: why, owned */
} hop_t;

static size_t abort_with(hop_t *h, int kind, char *msg)
{
    if (!h->abort_kind) {
        h->abort_kind = kind;
        h->abort_msg = msg;
    } else {
        free(msg);
    }
    return 0; /* any short count makes libcurl stop with CURLE_WRITE_ERROR */
}

static bool is_redirect(long code)
{
    return code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
}

/* End of one response's header block: 1xx blocks are skipped; the final one
 * decides whether this is a redirect to follow and whether the announced
 * length already breaks the cap (so nothing is read at all). */
static bool headers_done(hop_t *h)
{
    CURL *c = h->c;
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200) return true;
    h->status = code;
    struct curl_header *loc = NULL;
    if (is_redirect(code) && curl_easy_header(c, "Location", 0, CURLH_HEADER, -1, &loc) == CURLHE_OK) {
        /* Two Location headers cannot both be obeyed; a server that sends
         * them is refused rather than having one picked for it. */
        if (loc->amount > 1)
            return abort_with(h, FETCH_BAD_URL,
                              xstrdup("the server sent a redirect with more than one Location header"));
        free(h->location);
        h->location = xstrdup(loc->value);
        h->redirect = true;
        return false; /* stop here: a redirect's body is never read or saved */
    }
    curl_off_t cl = -1;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl > h->max)
        return abort_with(h, FETCH_TOO_LARGE,
                          xasprintf("the response is %lld bytes (Content-Length), more than fetch_max_bytes "
                                    "(%lld); nothing was saved",
                                    (long long)cl, h->max));
    return true;
}

/* libcurl hands over one header line at a time; the empty one ends a block. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    size_t len = size * n;
    if ((len == 2 && p[0] == '\r' && p[1] == '\n') || (len == 1 && p[0] == '\n'))
        return headers_done(ud) ? len : 0;
    return len;
}

/* Writes all of p to fd, across short writes, EINTR and a non-blocking fd.
 * Returns 0 or an errno value. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                poll(&pfd, 1, 1000);
                continue;
            }
            return errno;
        }
        if (w == 0) return EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    hop_t *h = ud;
    size_t len = size * n;
    if (h->redirect) return 0;
    /* The cap holds for what is streamed, not only for what was announced:
     * a chunked or lying server is stopped at the first byte past it. */
    if ((long long)len > h->max - *h->bytes)
        return abort_with(h, FETCH_TOO_LARGE,
                          xasprintf("the response body is larger than fetch_max_bytes (%lld bytes); "
                                    "the download was stopped and nothing was saved",
                                    h->max));
    int err = write_all(h->fd, p, len);
    if (err)
        return abort_with(h, FETCH_IO,
                          xasprintf("could not write the body to the destination file: %s", strerror(err)));
    *h->bytes += (long long)len;
    return len;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    hop_t *h = ud;
    if (h->req->progress && !h->req->progress(h->req->ctx, *h->bytes)) {
        abort_with(h, FETCH_CANCELLED, xstrdup("the fetch was cancelled"));
        return 1;
    }
    return 0;
}

/* The last gate, at connect time: libcurl may only open a socket to an
 * address that was checked for this hop. CURLOPT_RESOLVE already pins the
 * name; this also covers what pinning cannot — libcurl's own handling of
 * names like "localhost", a future code path that resolves again — because
 * it sees the very sockaddr about to be connected. */
static curl_socket_t on_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *sa)
{
    hop_t *h = ud;
    netaddr_t a;
    bool ok = purpose == CURLSOCKTYPE_IPCXN && netaddr_from_sockaddr(&sa->addr, sa->addrlen, &a);
    bool pinned = false;
    for (size_t i = 0; ok && i < h->addrs->n; i++)
        if (netaddr_equal(&h->addrs->v[i], &a)) pinned = true;
    char *why = NULL;
    if (!ok || !pinned) {
        char txt[NETADDR_STRLEN] = "?";
        if (ok) netaddr_format(&a, txt);
        why = xasprintf("refused: a connection to %s was attempted, which is not an address checked for "
                        "host '%s'",
                        txt, h->u->host);
    } else {
        why = fetch_addr_refusal(h->u->host, &a, h->u->is_ip, h->req->allow_private);
    }
    if (why) {
        if (!h->refused_addr) h->refused_addr = why;
        else free(why);
        return CURL_SOCKET_BAD;
    }
    /* CLOEXEC: drun-mcp forks sandboxed commands; they must not inherit it. */
    return socket(sa->family, sa->socktype | SOCK_CLOEXEC, sa->protocol);
}

/* "host:port:addr1,addr2" for CURLOPT_RESOLVE; IPv6 in brackets. */
static char *resolve_entry(const fetch_url_t *u, const addr_vec_t *addrs)
{
    buf_t b = BUF_INIT;
    buf_printf(&b, "%s:%d:", u->host, u->port);
    for (size_t i = 0; i < addrs->n && i < MAX_PINNED; i++) {
        char txt[NETADDR_STRLEN];
        netaddr_format(&addrs->v[i], txt);
        buf_printf(&b, addrs->v[i].family == AF_INET6 ? "%s[%s]" : "%s%s", i ? "," : "", txt);
    }
    return buf_detach(&b, NULL);
}

static long clamp_ms(long long v)
{
    if (v < 1) return 1;
    if (v > LONG_MAX) return LONG_MAX;
    return (long)v;
}

/* libcurl's copy of a string, sanitised for a result: printable ASCII, capped. */
static char *clean_copy(const char *s, size_t cap)
{
    buf_t b = BUF_INIT;
    for (; *s && b.len < cap; s++)
        if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f) buf_addc(&b, *s);
    return buf_detach(&b, NULL);
}

/* Maps a failed transfer to a result. */
static void hop_failure(hop_t *h, CURLcode rc, const char *errbuf, const limits_t *lim,
                        fetch_result_t *res)
{
    const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    const char *host = h->u->host;
    if (h->abort_kind) {
        fail(res, h->abort_kind, h->abort_msg);
        h->abort_msg = NULL;
        return;
    }
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: {
        curl_off_t connected = 0;
        curl_easy_getinfo(h->c, CURLINFO_CONNECT_TIME_T, &connected);
        if (connected == 0 && now_ms() < lim->deadline - 50)
            fail(res, FETCH_TIMEOUT,
                 xasprintf("could not connect to '%s' port %d within connect_timeout_ms (%ld ms)", host,
                           h->u->port, lim->connect_ms));
        else
            fail(res, FETCH_TIMEOUT,
                 xasprintf("the fetch did not finish within fetch_timeout_ms (%ld ms); %lld body bytes "
                           "had arrived",
                           lim->timeout_ms, *h->bytes));
        return;
    }
    case CURLE_COULDNT_CONNECT:
        if (h->refused_addr) {
            fail(res, FETCH_DENIED_ADDRESS, h->refused_addr);
            h->refused_addr = NULL;
            return;
        }
        fail(res, FETCH_NETWORK, xasprintf("could not connect to '%s' port %d: %s", host, h->u->port, detail));
        return;
    case CURLE_ABORTED_BY_CALLBACK:
        fail(res, FETCH_CANCELLED, xstrdup("the fetch was cancelled"));
        return;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
        fail(res, FETCH_NETWORK, xasprintf("TLS with '%s' failed: %s", host, detail));
        return;
    default:
        fail(res, FETCH_NETWORK, xasprintf("the fetch from '%s' failed: %s", host, detail));
        return;
    }
}

/* Runs one GET of u against the checked addrs. On a followable redirect sets
 * *location (owned) and returns true; on a final response fills res and
 * returns true with *location NULL; on failure records it in res. */
static bool hop_run(const fetch_req_t *req, const fetch_url_t *u, const addr_vec_t *addrs,
                    const limits_t *lim, long long *bytes, char **location, fetch_result_t *res)
{
    *location = NULL;
    CURL *c = curl_easy_init();
    if (!c) return fail(res, FETCH_NETWORK, xstrdup("libcurl could not create a handle"));
    hop_t h = {
        .c = c,
        .req = req,
        .u = u,
        .addrs = addrs,
        .fd = req->out_fd,
        .max = req->max_bytes > 0 ? req->max_bytes : 0,
        .bytes = bytes,
    };
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *pin = NULL;
    if (!u->is_ip) {
        char *entry = resolve_entry(u, addrs);
        pin = curl_slist_append(NULL, entry);
        free(entry);
        if (!pin) { /* never let libcurl resolve on its own */
            curl_easy_cleanup(c);
            return fail(res, FETCH_NETWORK, xstrdup("out of memory pinning the addresses"));
        }
    }
    long long remaining = lim->deadline - now_ms();
    if (remaining <= 0) {
        curl_slist_free_all(pin);
        curl_easy_cleanup(c);
        return fail(res, FETCH_TIMEOUT,
                    xasprintf("the fetch did not finish within fetch_timeout_ms (%ld ms)", lim->timeout_ms));
    }

    CURLcode rc = CURLE_OK;
#define SET(opt, val)                                           \
    do {                                                        \
        if (rc == CURLE_OK) rc = curl_easy_setopt(c, opt, val); \
    } while (0)
    SET(CURLOPT_URL, u->url);
    SET(CURLOPT_HTTPGET, 1L);
    /* http and https only, even if something asks libcurl to follow. */
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    /* Redirects come back to fetch_run so that each target is re-checked:
     * libcurl's own following would skip the allowlist and address checks. */
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_MAXREDIRS, 0L);
    /* The checked addresses, pinned: no second DNS answer (rebinding) can
     * slip in between the check and the connect. */
    SET(CURLOPT_RESOLVE, pin);
    SET(CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    SET(CURLOPT_OPENSOCKETDATA, &h);
    /* Nothing from the environment: http_proxy/ALL_PROXY would hand the
     * request to a proxy that connects where nothing was checked; .netrc and
     * a cookie jar would send the operator's credentials to the site. */
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_NOPROXY, "*");
    SET(CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
    SET(CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM-based DNS timeouts */
    SET(CURLOPT_TIMEOUT_MS, clamp_ms(remaining));
    SET(CURLOPT_CONNECTTIMEOUT_MS, clamp_ms(remaining < lim->connect_ms ? remaining : lim->connect_ms));
    SET(CURLOPT_USERAGENT, "drun-mcp/" DRUN_VERSION);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, &h);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, &h);
    SET(CURLOPT_XFERINFOFUNCTION, on_progress);
    SET(CURLOPT_XFERINFODATA, &h);
    SET(CURLOPT_NOPROGRESS, 0L);
    SET(CURLOPT_ERRORBUFFER, errbuf);
#undef SET
    if (rc != CURLE_OK) {
        curl_slist_free_all(pin);
        curl_easy_cleanup(c);
        return fail(res, FETCH_NETWORK, xasprintf("libcurl refused an option: %s", curl_easy_strerror(rc)));
    }

    rc = curl_easy_perform(c);
    bool ok = true;
    if (h.redirect && !h.abort_kind && (rc == CURLE_OK || rc == CURLE_WRITE_ERROR)) {
        *location = h.location;
        h.location = NULL;
        res->http_status = (int)h.status;
    } else if (rc != CURLE_OK || h.abort_kind) {
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        res->http_status = (int)code;
        hop_failure(&h, rc, errbuf, lim, res);
        ok = false;
    } else {
        long code = 0;
        char *ct = NULL;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        res->http_status = (int)code;
        res->content_type = ct ? clean_copy(ct, CONTENT_TYPE_MAX) : NULL;
    }
    free(h.location);
    free(h.abort_msg);
    free(h.refused_addr);
    curl_slist_free_all(pin);
    curl_easy_cleanup(c);
    return ok;
}

/* ---- the loop ------------------------------------------------------------------------------ */

/* A refusal on a redirect hop says so: the model asked for another URL. */
static bool refuse_hop(fetch_result_t *res, int kind, int hopno, const fetch_url_t *u, char *msg)
{
    if (hopno == 0) return fail(res, kind, msg);
    char *q = fetch_url_quote(u->url);
    char *full = xasprintf("the server redirected to %s; %s", q, msg);
    free(q);
    free(msg);
    return fail(res, kind, full);
}

/* Checks one hop's host: allowlist, then (unless allowed) local-only names,
 * then its addresses — the literal, or every address DNS returns. */
static bool check_hop(const fetch_req_t *req, const fetch_url_t *u, int hopno, const limits_t *lim,
                      addr_vec_t *addrs, fetch_result_t *res)
{
    char *why = NULL;
    if (!req->host_allowed(req->ctx, u->host, &why)) {
        /* The caller's reason (which may list the allowed entries) replaces
         * our default sentence; a redirect hop names where it was sent. */
        char *msg = why ? xasprintf("refused: %s", why)
                        : xasprintf("refused: host '%s' is not in the domain_allowlist", u->host);
        free(why);
        return refuse_hop(res, FETCH_DENIED_DOMAIN, hopno, u, msg);
    }
    free(why);
    if (u->is_ip) {
        vec_push(addrs, u->ip);
    } else {
        char *msg = fetch_name_refusal(u->host, req->allow_private);
        if (msg) return refuse_hop(res, FETCH_DENIED_ADDRESS, hopno, u, msg);
        if (resolve(req, u->host, lim, addrs, res) != FETCH_OK) return false;
    }
    /* ANY, not ALL: one special-purpose address among the answers refuses the
     * host. Keeping only the public ones would let a DNS owner mix in
     * 127.0.0.1 and win whenever the public one is down, and a host that
     * answers with internal addresses is internal whatever else it says. */
    for (size_t i = 0; i < addrs->n; i++) {
        char *msg = fetch_addr_refusal(u->host, &addrs->v[i], u->is_ip, req->allow_private);
        if (msg) return refuse_hop(res, FETCH_DENIED_ADDRESS, hopno, u, msg);
    }
    return true;
}

/* On failure, a regular-file destination goes back to the size it had, so a
 * cut-off body is never mistaken for the whole one. */
static void undo_partial(int fd, off_t start)
{
    struct stat st;
    if (start < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    if (ftruncate(fd, start) == 0) lseek(fd, start, SEEK_SET);
}

bool fetch_run(const fetch_req_t *req, fetch_result_t *res)
{
    memset(res, 0, sizeof *res);
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK)
        return fail(res, FETCH_NETWORK, xasprintf("libcurl could not start: %s", curl_easy_strerror(curl_init_rc)));
    if (!req || !req->url || req->out_fd < 0 || !req->host_allowed)
        return fail(res, FETCH_BAD_URL, xstrdup("internal error: incomplete fetch request"));

    limits_t lim = {
        .timeout_ms = req->timeout_ms > 0 ? req->timeout_ms : DEFAULT_TIMEOUT_MS,
        .connect_ms = req->connect_timeout_ms > 0 ? req->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS,
        .start = now_ms(),
    };
    lim.deadline = lim.start + lim.timeout_ms;
    int max_redirects = req->max_redirects < 0 ? 0 : req->max_redirects;
    if (max_redirects > MAX_REDIRECTS_CAP) max_redirects = MAX_REDIRECTS_CAP;
    off_t start_off = lseek(req->out_fd, 0, SEEK_CUR);

    char *url = xstrdup(req->url);
    bool ok = false;
    for (int hopno = 0;; hopno++) {
        fetch_url_t u;
        char *why = NULL;
        if (!fetch_url_parse(url, &u, &why)) {
            if (hopno == 0) {
                fail(res, FETCH_BAD_URL, why);
            } else {
                char *q = fetch_url_quote(url);
                fail(res, FETCH_BAD_URL, xasprintf("the server redirected to %s; %s", q, why));
                free(q);
                free(why);
            }
            break;
        }
        free(res->final_url);
        res->final_url = xstrdup(u.url);

        addr_vec_t addrs = {0};
        char *location = NULL;
        bool hop_ok = check_hop(req, &u, hopno, &lim, &addrs, res) &&
                      hop_run(req, &u, &addrs, &lim, &res->bytes, &location, res);
        vec_free(&addrs);
        if (!hop_ok) {
            fetch_url_free(&u);
            break;
        }
        if (!location) { /* a final response */
            fetch_url_free(&u);
            ok = true;
            break;
        }
        char *next = fetch_url_resolve(u.url, location, &why);
        free(location);
        fetch_url_free(&u);
        if (!next) {
            fail(res, FETCH_BAD_URL, xasprintf("the server sent a bad redirect: %s", why));
            free(why);
            break;
        }
        if (res->redirects >= max_redirects) {
            char *q = fetch_url_quote(next);
            fail(res, FETCH_HTTP_REDIRECT_LIMIT,
                 xasprintf("stopped after %d redirects (the limit); the next one pointed to %s",
                           res->redirects, q));
            free(q);
            free(next);
            break;
        }
        res->redirects++;
        free(url);
        url = next;
    }
    free(url);
    if (!ok) undo_partial(req->out_fd, start_off);
    return ok;
}

void fetch_result_free(fetch_result_t *res)
{
    if (!res) return;
    free(res->content_type);
    free(res->final_url);
    free(res->error);
    memset(res, 0, sizeof *res);
}
