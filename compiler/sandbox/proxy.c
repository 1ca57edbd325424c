/* proxy.c — the host side of the sandbox's network (proxy.h): one receiver
 * thread per sandbox channel, one thread per tunnel, every socket
 * non-blocking and every wait a poll() that also watches the channel's stop
 * pipe and a deadline. Nothing one sandbox sends can hold a thread another
 * sandbox needs: a channel's receiver only takes connections in and refuses
 * what is over the caps at once (a non-blocking send, then close).
 */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "domain.h"
#include "netaddr.h"
#include "netrefuse.h"
#include "proxyreq.h"

#define REFUSALS_MAX 64          /* distinct refusals kept per channel; more are counted */
#define PUMP_BUF 32768           /* bytes buffered per direction of a tunnel */
#define TUNNEL_STACK (256 * 1024)
#define WHO "sandboxed commands" /* for the address rule's hint */

static atomic_int tunnels_all;   /* live tunnels of the process (max_all) */

/* The process-wide cap: PROXY_MAX_TUNNELS_ALL, or a quarter of the soft
 * RLIMIT_NOFILE (two fds a tunnel: half of the process's), at least one
 * sandbox's worth. */
static int max_all(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return PROXY_MAX_TUNNELS_ALL;
    rlim_t q = rl.rlim_cur / 4;
    if (q < PROXY_MAX_TUNNELS) q = PROXY_MAX_TUNNELS;
    return q > PROXY_MAX_TUNNELS_ALL ? PROXY_MAX_TUNNELS_ALL : (int)q;
}

struct proxy_chan {
    pthread_mutex_t mu;
    int refs;              /* the owner, the receiver, each tunnel */
    int host_fd;           /* our end of the channel */
    int sbx_fd;            /* the sandbox's end, until handed over */
    int stop[2];           /* a byte in it (never read) wakes every poll: the channel closes */
    int tunnels;           /* live tunnels */
    char *session;
    domain_entry_t *allow; /* command_domains, then the extra hosts (copies) */
    size_t nallow;
    int *ports;
    size_t nports;
    char *ports_text; /* "80, 443" for messages */
    bool allow_private;
    VEC(proxy_refusal_t) refused;
    unsigned overflow; /* refusals past REFUSALS_MAX distinct ones */
    proxy_log_fn log;
    void *log_ctx;
};

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the channel ----------------------------------------------------------------------------------------- */

bool proxy_wanted(const policy_t *p) { return p->command_domains.n > 0; }

static void chan_free(proxy_chan_t *c)
{
    if (c->host_fd >= 0) close(c->host_fd);
    if (c->sbx_fd >= 0) close(c->sbx_fd);
    close(c->stop[0]);
    close(c->stop[1]);
    for (size_t i = 0; i < c->nallow; i++) free(c->allow[i].pattern);
    free(c->allow);
    free(c->ports);
    free(c->ports_text);
    free(c->session);
    proxy_refusals_free(c->refused.v, c->refused.n);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void chan_release(proxy_chan_t *c)
{
    pthread_mutex_lock(&c->mu);
    bool last = --c->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (last) chan_free(c);
}

static bool chan_stopping(proxy_chan_t *c)
{
    struct pollfd p = {c->stop[0], POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

/* Records one refusal (merged with an equal one) and logs it. */
static void record(proxy_chan_t *c, const char *host, int port, const char *reason)
{
    proxy_refusal_t r = {wall_ms(), xstrdup(host && *host ? host : "-"), port, xstrdup(reason), 1};
    pthread_mutex_lock(&c->mu);
    bool merged = false;
    for (size_t i = 0; i < c->refused.n && !merged; i++) {
        proxy_refusal_t *o = &c->refused.v[i];
        if (o->port == port && !strcmp(o->host, r.host) && !strcmp(o->reason, reason)) o->count++, merged = true;
    }
    if (!merged && c->refused.n < REFUSALS_MAX) {
        proxy_refusal_t kept = {r.time_ms, xstrdup(r.host), port, xstrdup(reason), 1};
        vec_push(&c->refused, kept);
    } else if (!merged) {
        c->overflow++;
    }
    pthread_mutex_unlock(&c->mu);
    if (c->log) c->log(c->log_ctx, c->session, &r);
    free(r.host);
    free(r.reason);
}

static void *receiver(void *arg);

static void copy_rules(proxy_chan_t *c, const domain_rule_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c->allow[c->nallow].kind = v[i].kind;
        c->allow[c->nallow].pattern = xstrdup(v[i].pattern);
        c->nallow++;
    }
}

proxy_chan_t *proxy_open(const policy_t *p, const proxy_opts_t *o, char **err)
{
    proxy_chan_t *c = xcalloc(1, sizeof *c);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        *err = xasprintf("cannot make the sandbox's proxy channel: %s", strerror(errno));
        free(c);
        return NULL;
    }
    if (pipe2(c->stop, O_CLOEXEC) != 0) {
        *err = xasprintf("cannot make the sandbox's proxy channel: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->host_fd = sv[0];
    c->sbx_fd = sv[1];
    c->refs = 1;
    c->session = xstrdup(o && o->session ? o->session : "run");
    size_t nextra = o && o->extra ? o->nextra : 0;
    c->allow = xcalloc(p->command_domains.n + nextra + 1, sizeof *c->allow);
    copy_rules(c, p->command_domains.v, p->command_domains.n);
    if (nextra) copy_rules(c, o->extra, nextra);
    c->nports = p->command_ports.n;
    c->ports = xcalloc(c->nports + 1, sizeof *c->ports);
    buf_t pt = BUF_INIT;
    for (size_t i = 0; i < c->nports; i++) {
        c->ports[i] = p->command_ports.v[i];
        buf_printf(&pt, "%s%d", i ? ", " : "", c->ports[i]);
    }
    c->ports_text = buf_detach(&pt, NULL);
    c->allow_private = policy_get(p, S_ALLOW_PRIVATE_ADDRESSES) != 0;
    if (o) c->log = o->log, c->log_ctx = o->log_ctx;

    /* the receiver: its own thread, holding a reference */
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, TUNNEL_STACK);
    c->refs++;
    pthread_t t;
    int rc = pthread_create(&t, &at, receiver, c);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        *err = xasprintf("cannot start the sandbox's proxy: %s", strerror(rc));
        c->refs = 1;
        chan_release(c);
        return NULL;
    }
    return c;
}

int proxy_sandbox_fd(const proxy_chan_t *c) { return c->sbx_fd; }

void proxy_sandbox_end_close(proxy_chan_t *c)
{
    if (c->sbx_fd >= 0) close(c->sbx_fd);
    c->sbx_fd = -1;
}

size_t proxy_refusals(proxy_chan_t *c, proxy_refusal_t **out)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->refused.n + (c->overflow ? 1 : 0);
    proxy_refusal_t *v = xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < c->refused.n; i++) {
        v[i] = c->refused.v[i];
        v[i].host = xstrdup(v[i].host);
        v[i].reason = xstrdup(v[i].reason);
    }
    if (c->overflow)
        v[n - 1] = (proxy_refusal_t){wall_ms(), xstrdup("-"), 0,
                                     xasprintf("%u more refusals of other hosts, not listed", c->overflow), c->overflow};
    pthread_mutex_unlock(&c->mu);
    *out = v;
    return n;
}

void proxy_refusals_free(proxy_refusal_t *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].host);
        free(v[i].reason);
    }
    free(v);
}

void proxy_close(proxy_chan_t *c)
{
    if (!c) return;
    /* one byte, never read: every poll of the channel sees it from now on */
    ssize_t w;
    do w = write(c->stop[1], "x", 1);
    while (w < 0 && errno == EINTR);
    proxy_sandbox_end_close(c);
    chan_release(c);
}

const char *const *proxy_env(void)
{
#define PURL "http://127.0.0.1:3128"
    static const char *const env[] = {
        "HTTP_PROXY=" PURL, "HTTPS_PROXY=" PURL, "ALL_PROXY=" PURL, "NO_PROXY=localhost,127.0.0.1,::1",
        "http_proxy=" PURL, "https_proxy=" PURL, "all_proxy=" PURL, "no_proxy=localhost,127.0.0.1,::1",
        NULL};
    _Static_assert(SBX_PROXY_PORT == 3128, "PURL names the relay's port");
    return env;
#undef PURL
}

/* ---- one tunnel -------------------------------------------------------------------------------------------- */

typedef struct tunnel {
    proxy_chan_t *c;
    int client;         /* the sandbox's connection (from the relay) */
    int up;             /* the server, or -1 */
    long long deadline; /* PROXY_TOTAL_MS from the start (monotonic ms) */
    char head[PROXYREQ_HEAD_MAX];
    size_t have;        /* bytes in head */
} tunnel_t;

/* Best effort, never blocking: the answer to a refused or failed request. */
static void answer(int fd, int code, const char *status, const char *reason)
{
    char *body = xasprintf("drun proxy: %s\n", reason);
    char *msg = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\nX-Drun-Proxy: refused\r\n\r\n%s",
                          code, status, strlen(body), body);
    ssize_t w = send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    free(msg);
    free(body);
}

static void refuse(tunnel_t *t, int code, const char *status, const char *host, int port, const char *reason)
{
    record(t->c, host, port, reason);
    answer(t->client, code, status, reason);
}

/* Waits for events on fd (and the stop pipe) until at most deadline.
 * 1: ready; 0: the time is up; -1: the channel is closing or poll failed. */
static int wait_fd(const tunnel_t *t, int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - mono_ms();
        if (left <= 0) return 0;
        struct pollfd p[2] = {{fd, events, 0}, {t->c->stop[0], POLLIN, 0}};
        int n = poll(p, 2, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || p[1].revents) return -1;
        if (n > 0) return 1;
    }
}

/* Reads the request head. True with t->have bytes, the head complete. */
static bool read_head(tunnel_t *t, long *end)
{
    long long deadline = mono_ms() + PROXY_HEAD_MS;
    for (;;) {
        *end = proxyreq_head_end(t->head, t->have);
        if (*end != 0) return true;
        int r = wait_fd(t, t->client, POLLIN, deadline);
        if (r == 0) {
            refuse(t, 408, "Request Timeout", "-", 0, "the request head did not arrive within 10 s");
            return false;
        }
        if (r < 0) return false;
        ssize_t n = recv(t->client, t->head + t->have, sizeof t->head - t->have, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return false; /* gone before asking anything: nothing to report */
        t->have += (size_t)n;
    }
}

static bool port_allowed(const proxy_chan_t *c, int port)
{
    for (size_t i = 0; i < c->nports; i++)
        if (c->ports[i] == port) return true;
    return false;
}

static bool host_allowed(const proxy_chan_t *c, const char *norm)
{
    for (size_t i = 0; i < c->nallow; i++)
        if (domain_match(&c->allow[i], norm)) return true;
    return false;
}

typedef VEC(netaddr_t) addrs_t;

/* The checks, in order: host, port, name, every address. True with the
 * addresses to connect to (pinned: never resolved again); false once the
 * refusal is answered and recorded. */
static bool decide(tunnel_t *t, const proxyreq_t *r, addrs_t *addrs)
{
    proxy_chan_t *c = t->c;
    char *q = proxyreq_quote(r->host, strlen(r->host)), *norm = NULL, *why = NULL;
    bool ok = false;
    if (!domain_host_normalize(r->host, &norm, &why)) {
        char *m = xasprintf("the host '%s' is not a valid host name (%s)", q, why ? why : "bad form");
        refuse(t, 400, "Bad Request", q, r->port, m);
        free(m);
    } else if (!host_allowed(c, norm)) {
        char *m = xasprintf("host '%s' is not in [network] command_domains", norm);
        refuse(t, 403, "Forbidden", norm, r->port, m);
        free(m);
    } else if (!port_allowed(c, r->port)) {
        char *m = xasprintf("port %d is not in [network] command_ports (%s)", r->port, c->ports_text);
        refuse(t, 403, "Forbidden", norm, r->port, m);
        free(m);
    } else if (domain_host_is_ip(norm)) {
        netaddr_t a;
        if (!netaddr_parse(norm, &a)) {
            refuse(t, 400, "Bad Request", norm, r->port, "the IP address does not parse");
        } else if ((why = netrefuse_addr(WHO, norm, &a, true, c->allow_private))) {
            refuse(t, 403, "Forbidden", norm, r->port, why);
        } else {
            vec_push(addrs, a);
            ok = true;
        }
    } else if ((why = netrefuse_name(WHO, norm, c->allow_private))) {
        refuse(t, 403, "Forbidden", norm, r->port, why);
    } else {
        struct addrinfo hints = {0}, *ai = NULL;
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        int rc = getaddrinfo(norm, NULL, &hints, &ai);
        if (rc != 0) {
            char *m = xasprintf("could not resolve host '%s': %s", norm, gai_strerror(rc));
            answer(t->client, 502, "Bad Gateway", m);
            free(m);
        } else {
            for (struct addrinfo *p = ai; p; p = p->ai_next) {
                netaddr_t a;
                if (netaddr_from_sockaddr(p->ai_addr, p->ai_addrlen, &a)) vec_push(addrs, a);
            }
            freeaddrinfo(ai);
            /* ANY, not ALL (as session_fetch): one special-purpose address
             * among the answers refuses the host */
            ok = addrs->n > 0;
            for (size_t i = 0; ok && i < addrs->n; i++)
                if ((why = netrefuse_addr(WHO, norm, &addrs->v[i], false, c->allow_private))) {
                    refuse(t, 403, "Forbidden", norm, r->port, why);
                    ok = false;
                }
            if (!addrs->n) answer(t->client, 502, "Bad Gateway", "the host has no IPv4 or IPv6 address");
        }
    }
    free(why);
    free(norm);
    free(q);
    return ok;
}

/* Connects to the first of the checked addresses that answers. */
static int dial(tunnel_t *t, const addrs_t *addrs, int port, char **why)
{
    int last = ECONNREFUSED;
    for (size_t i = 0; i < addrs->n; i++) {
        struct sockaddr_storage ss = {0};
        socklen_t len;
        const netaddr_t *a = &addrs->v[i];
        if (a->family == AF_INET) {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            s4->sin_family = AF_INET;
            s4->sin_port = htons((uint16_t)port);
            memcpy(&s4->sin_addr, a->b, 4);
            len = sizeof *s4;
        } else {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            s6->sin6_family = AF_INET6;
            s6->sin6_port = htons((uint16_t)port);
            memcpy(&s6->sin6_addr, a->b, 16);
            len = sizeof *s6;
        }
        int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (connect(fd, (struct sockaddr *)&ss, len) == 0) return fd;
        if (errno == EINPROGRESS) {
            int r = wait_fd(t, fd, POLLOUT, mono_ms() + PROXY_CONNECT_MS);
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0) return fd;
            last = r == 0 ? ETIMEDOUT : (r < 0 ? ECANCELED : soerr);
        } else {
            last = errno;
        }
        close(fd);
    }
    *why = xstrdup(strerror(last));
    return -1;
}

/* Everything to fd (non-blocking) before the deadline. */
static bool send_all(tunnel_t *t, int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            if (wait_fd(t, fd, POLLOUT, mono_ms() + PROXY_IDLE_MS) <= 0) return false;
            continue;
        }
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* One direction of a tunnel. */
typedef struct dir {
    int from, to;
    char *buf;
    size_t len, off;
    bool eof;        /* nothing more will be read */
    bool shut;       /* the other side was told (SHUT_WR) */
    long long limit; /* bytes still to pass; -1: no limit */
} dir_t;

/* One step of d: read when empty, write what is buffered. False on an error. */
static bool dir_step(dir_t *d, short rev_from, short rev_to, long long *last)
{
    if (d->len > d->off && (rev_to & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t w = send(d->to, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (w > 0) d->off += (size_t)w, *last = mono_ms();
        if (d->off == d->len) d->off = d->len = 0;
    }
    if (!d->eof && d->len == 0 && (rev_from & (POLLIN | POLLERR | POLLHUP))) {
        size_t room = PUMP_BUF;
        if (d->limit >= 0 && (long long)room > d->limit) room = (size_t)d->limit;
        ssize_t n = recv(d->from, d->buf, room, 0);
        if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (n == 0) d->eof = true;
        if (n > 0) {
            d->len = (size_t)n, *last = mono_ms();
            if (d->limit >= 0) d->limit -= n;
        }
    }
    if (d->limit == 0) d->eof = true;
    return true;
}

/* Relays both ways until both are done, an error, the idle or total limit,
 * or the channel closing. c2u_limit: bytes the client may still send (-1:
 * any, a tunnel); a plain request passes its body and nothing more. half:
 * pass the client's end of input on to the server (a tunnel). */
static void pump(tunnel_t *t, long long c2u_limit, bool half)
{
    char *mem = xmalloc(2 * PUMP_BUF);
    dir_t d[2] = {{t->client, t->up, mem, 0, 0, c2u_limit == 0, false, c2u_limit},
                  {t->up, t->client, mem + PUMP_BUF, 0, 0, false, false, -1}};
    long long last = mono_ms();
    for (;;) {
        for (int i = 0; i < 2; i++)
            if (d[i].eof && d[i].len == 0 && !d[i].shut && (i == 1 || half)) {
                shutdown(d[i].to, SHUT_WR);
                d[i].shut = true;
            }
        if (d[1].eof && d[1].len == 0) break; /* the server is done: so is the request */
        if (d[0].eof && d[0].len == 0 && half && d[1].shut) break;
        long long now = mono_ms();
        long long until = last + PROXY_IDLE_MS < t->deadline ? last + PROXY_IDLE_MS : t->deadline;
        if (now >= until) break;
        struct pollfd p[3] = {{t->client, 0, 0}, {t->up, 0, 0}, {t->c->stop[0], POLLIN, 0}};
        if (!d[0].eof && d[0].len == 0) p[0].events |= POLLIN;
        if (!d[1].eof && d[1].len == 0) p[1].events |= POLLIN;
        if (d[0].len) p[1].events |= POLLOUT;
        if (d[1].len) p[0].events |= POLLOUT;
        /* a side with nothing to do is not polled: a hung-up socket would
         * wake poll at once, again and again, while the other side is slow */
        for (int i = 0; i < 2; i++)
            if (!p[i].events) p[i].fd = -1;
        long long wait = until - now;
        int n = poll(p, 3, wait > 1000 ? 1000 : (int)wait);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || p[2].revents) break;
        if (!dir_step(&d[0], p[0].revents, p[1].revents, &last) || !dir_step(&d[1], p[1].revents, p[0].revents, &last))
            break;
        /* a client gone without a request body pending ends a plain request too */
        if (!half && (p[0].revents & (POLLHUP | POLLERR)) && !d[1].len && d[0].eof && d[0].len == 0 &&
            !(p[1].revents & POLLIN))
            break;
    }
    free(mem);
}

/* A plain request goes upstream in origin form, with its own Host (the
 * target's, which it was checked to agree with) and Connection: close, so
 * that one upstream connection carries exactly one checked request. */
static bool forward_plain(tunnel_t *t, const proxyreq_t *r, long end)
{
    buf_t h = BUF_INIT;
    buf_printf(&h, "%s %s HTTP/1.%d\r\n", r->method, r->path, r->minor);
    if (r->host_header) buf_printf(&h, "Host: %s\r\n", r->host_header);
    else if (strchr(r->host, ':')) buf_printf(&h, "Host: [%s]:%d\r\n", r->host, r->port);
    else buf_printf(&h, "Host: %s:%d\r\n", r->host, r->port);
    buf_adds(&h, r->headers);
    buf_adds(&h, "Connection: close\r\n\r\n");
    long long body = r->content_length > 0 ? r->content_length : 0;
    size_t extra = t->have - (size_t)end;
    if ((long long)extra > body) extra = (size_t)body;
    bool ok = send_all(t, t->up, h.p, h.len) && send_all(t, t->up, t->head + end, extra);
    buf_free(&h);
    if (ok) pump(t, body - (long long)extra, false);
    return ok;
}

static void serve(tunnel_t *t)
{
    long end = 0;
    if (!read_head(t, &end)) return;
    proxyreq_t r;
    char *why = NULL;
    if (end < 0 || !proxyreq_parse(t->head, t->have, &r, &why)) {
        const char *m = why ? why : "malformed request head (a NUL, a bare CR or LF, or more than 16 KiB)";
        char *full = xasprintf("malformed request: %s", m);
        refuse(t, 400, "Bad Request", "-", 0, full);
        free(full);
        free(why);
        return;
    }
    addrs_t addrs = {0};
    if (decide(t, &r, &addrs)) {
        t->up = dial(t, &addrs, r.port, &why);
        if (t->up < 0) {
            char *m = xasprintf("could not connect to %s port %d: %s", r.host, r.port, why);
            answer(t->client, 502, "Bad Gateway", m);
            free(m);
            free(why);
        } else if (r.connect) {
            static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
            if (send_all(t, t->client, ok, sizeof ok - 1) && send_all(t, t->up, t->head + end, t->have - (size_t)end))
                pump(t, -1, true);
        } else {
            forward_plain(t, &r, end);
        }
    }
    vec_free(&addrs);
    proxyreq_free(&r);
}

static void *tunnel_main(void *arg)
{
    tunnel_t *t = arg;
    serve(t);
    close(t->client);
    if (t->up >= 0) close(t->up);
    proxy_chan_t *c = t->c;
    free(t);
    pthread_mutex_lock(&c->mu);
    c->tunnels--;
    pthread_mutex_unlock(&c->mu);
    atomic_fetch_sub(&tunnels_all, 1);
    chan_release(c);
    return NULL;
}

/* Only a TCP stream the relay accepted may be served: what else a sandbox
 * could send over the channel (a pipe, a file, a socket of another kind) is
 * closed unread. */
static bool is_tcp_stream(int fd)
{
    struct stat st;
    int dom = 0, type = 0;
    socklen_t l1 = sizeof dom, l2 = sizeof type;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l1) == 0 &&
           getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l2) == 0 && (dom == AF_INET || dom == AF_INET6) &&
           type == SOCK_STREAM;
}

/* Takes one connection: a tunnel thread, or a refusal at once. */
static void take(proxy_chan_t *c, int fd)
{
    if (!is_tcp_stream(fd)) {
        close(fd);
        return;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        close(fd);
        return;
    }
    pthread_mutex_lock(&c->mu);
    bool mine = c->tunnels < PROXY_MAX_TUNNELS;
    int cap_all = max_all();
    bool all = mine && atomic_fetch_add(&tunnels_all, 1) < cap_all;
    if (mine && !all) atomic_fetch_sub(&tunnels_all, 1);
    if (all) c->tunnels++, c->refs++;
    pthread_mutex_unlock(&c->mu);
    if (!all) {
        char *m = mine ? xasprintf("the proxy serves at most %d tunnels at once for all sandboxes", cap_all)
                       : xasprintf("too many tunnels at once: this sandbox may hold %d", PROXY_MAX_TUNNELS);
        record(c, "-", 0, m);
        answer(fd, 429, "Too Many Requests", m);
        free(m);
        close(fd);
        return;
    }
    tunnel_t *t = xcalloc(1, sizeof *t);
    t->c = c;
    t->client = fd;
    t->up = -1;
    t->deadline = mono_ms() + PROXY_TOTAL_MS;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, TUNNEL_STACK);
    pthread_t th;
    int rc = pthread_create(&th, &at, tunnel_main, t);
    pthread_attr_destroy(&at);
    if (rc != 0) { /* as if over the cap */
        record(c, "-", 0, "the proxy could not start a tunnel (no thread to spare)");
        answer(fd, 503, "Service Unavailable", "the proxy could not start a tunnel");
        t->client = -1;
        close(fd);
        free(t);
        pthread_mutex_lock(&c->mu);
        c->tunnels--;
        c->refs--;
        pthread_mutex_unlock(&c->mu);
        atomic_fetch_sub(&tunnels_all, 1);
    }
}

/* The channel's receiver: one fd per message (SCM_RIGHTS). A message with
 * more than one, or none, is dropped (the kernel closes what did not fit). */
static void *receiver(void *arg)
{
    proxy_chan_t *c = arg;
    for (;;) {
        struct pollfd p[2] = {{c->host_fd, POLLIN, 0}, {c->stop[0], POLLIN, 0}};
        int n = poll(p, 2, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || p[1].revents) break;
        char byte;
        struct iovec iov = {&byte, 1};
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(sizeof(int))];
        } cm;
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cm.b;
        msg.msg_controllen = sizeof cm.b;
        ssize_t got = recvmsg(c->host_fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) break; /* the sandbox is gone */
        int fd = -1;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h))
            if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && h->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&fd, CMSG_DATA(h), sizeof fd);
        if (fd < 0) continue;
        if ((msg.msg_flags & MSG_CTRUNC) || chan_stopping(c)) {
            close(fd);
            continue;
        }
        take(c, fd);
    }
    chan_release(c);
    return NULL;
}
