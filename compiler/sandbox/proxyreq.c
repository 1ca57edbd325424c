/* proxyreq.c — parsing the head of one proxy request (proxyreq.h).
 *
 * Strict on purpose: the client is a sandboxed command, and whatever this
 * parser lets through is what a server behind the proxy reads. Lines end in
 * CRLF (a bare LF or CR is refused: two parsers that split lines differently
 * are how requests get smuggled), no folded headers, one Host, one
 * Content-Length, no Transfer-Encoding, and a Host header that names
 * another host than the target is refused rather than corrected: a server
 * that routes by Host would otherwise serve a host nobody checked.
 */
#include "proxyreq.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"

long proxyreq_head_end(const char *buf, size_t len)
{
    size_t lim = len < PROXYREQ_HEAD_MAX ? len : PROXYREQ_HEAD_MAX;
    for (size_t i = 0; i < lim; i++) {
        char c = buf[i];
        if (c == '\0') return -1;
        if (c == '\r' && (i + 1 >= len ? false : buf[i + 1] != '\n')) return -1;
        if (c == '\n' && (i == 0 || buf[i - 1] != '\r')) return -1;
        if (c == '\n' && i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r') return (long)i + 1;
    }
    return len >= PROXYREQ_HEAD_MAX ? -1 : 0;
}

char *proxyreq_quote(const char *s, size_t len)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < len && b.len < 120; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f) buf_addc(&b, (char)c);
        else buf_printf(&b, "\\x%02x", c);
    }
    if (len && b.len >= 120) buf_adds(&b, "...");
    return buf_detach(&b, NULL);
}

static bool tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

/* A visible ASCII byte (RFC 9110 VCHAR). */
static bool vchar(unsigned char c) { return c > 0x20 && c < 0x7f; }

static bool fail(char **why, char *msg)
{
    *why = msg;
    return false;
}

/* "1".."65535", digits only. */
static int parse_port(const char *s, size_t n)
{
    if (n == 0 || n > 5) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= 65535 ? (int)v : -1;
}

/* host[:port] or [v6][:port] in s[0..n): the host (brackets removed) and the
 * port (def when absent; -1 when absent and def is -1). False when the form
 * is wrong. */
static bool split_authority(const char *s, size_t n, char **host, int *port, int def)
{
    const char *hs = s, *he, *colon = NULL;
    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close || close == s + 1) return false;
        hs = s + 1;
        he = close;
        if (close + 1 < s + n) {
            if (close[1] != ':') return false;
            colon = close + 1;
        }
    } else {
        colon = memchr(s, ':', n);
        he = colon ? colon : s + n;
        if (colon && memchr(colon + 1, ':', (size_t)(s + n - colon - 1))) return false;
    }
    if (he == hs) return false;
    for (const char *p = hs; p < he; p++)
        if (!vchar((unsigned char)*p) || strchr("/?#@[]\\", *p)) return false;
    if (colon) {
        *port = parse_port(colon + 1, (size_t)(s + n - colon - 1));
        if (*port < 0) return false;
    } else {
        if (def < 0) return false;
        *port = def;
    }
    *host = xstrndup(hs, (size_t)(he - hs));
    return true;
}

/* The request line: METHOD SP target SP HTTP/1.x. */
static bool request_line(const char *l, size_t n, proxyreq_t *r, char **why)
{
    const char *sp1 = memchr(l, ' ', n);
    if (!sp1 || sp1 == l || (size_t)(sp1 - l) >= sizeof r->method) {
        char *q = proxyreq_quote(l, n);
        return fail(why, xasprintf("malformed request line '%s' (METHOD TARGET HTTP/1.x expected)", q)), free(q), false;
    }
    for (const char *p = l; p < sp1; p++)
        if (!tchar((unsigned char)*p)) {
            char *q = proxyreq_quote(l, n);
            return fail(why, xasprintf("malformed request line '%s': bad method", q)), free(q), false;
        }
    memcpy(r->method, l, (size_t)(sp1 - l));
    r->method[sp1 - l] = '\0';
    const char *t = sp1 + 1, *end = l + n;
    const char *sp2 = memchr(t, ' ', (size_t)(end - t));
    if (!sp2 || sp2 == t || end - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || (sp2[8] != '0' && sp2[8] != '1')) {
        char *q = proxyreq_quote(l, n);
        return fail(why, xasprintf("malformed request line '%s' (METHOD TARGET HTTP/1.x expected)", q)), free(q), false;
    }
    r->minor = sp2[8] - '0';
    size_t tn = (size_t)(sp2 - t);
    for (size_t i = 0; i < tn; i++)
        if (!vchar((unsigned char)t[i])) return fail(why, xstrdup("malformed request line: a control byte or "
                                                                  "space in the target"));
    char *q = proxyreq_quote(t, tn);
    bool ok = true;
    if (!strcmp(r->method, "CONNECT")) {
        r->connect = true;
        if (!split_authority(t, tn, &r->host, &r->port, -1))
            ok = fail(why, xasprintf("malformed CONNECT target '%s' (host:port expected)", q));
    } else if (tn > 7 && !strncasecmp(t, "http://", 7)) {
        const char *a = t + 7, *slash = memchr(a, '/', tn - 7);
        size_t an = slash ? (size_t)(slash - a) : tn - 7;
        if (memchr(t, '#', tn)) ok = fail(why, xasprintf("the target '%s' has a fragment", q));
        else if (memchr(a, '@', an)) ok = fail(why, xasprintf("the target '%s' carries a user name", q));
        else if (memchr(a, '?', an)) ok = fail(why, xasprintf("malformed target '%s'", q));
        else if (!split_authority(a, an, &r->host, &r->port, 80))
            ok = fail(why, xasprintf("malformed host in the target '%s'", q));
        else r->path = slash ? xstrndup(slash, (size_t)(t + tn - slash)) : xstrdup("/");
    } else if (tn > 8 && !strncasecmp(t, "https://", 8)) {
        ok = fail(why, xasprintf("'%s %s' asks the proxy to speak TLS: use CONNECT (an https:// proxy URL is "
                                 "not needed; HTTPS_PROXY is http://)",
                                 r->method, q));
    } else {
        ok = fail(why, xasprintf("'%s %s' is not a proxy request (CONNECT host:port or an absolute http:// "
                                 "URL expected)",
                                 r->method, q));
    }
    free(q);
    return ok;
}

/* Headers the proxy answers for itself or must not pass on (hop-by-hop),
 * and every Proxy-* header: those were meant for this proxy. */
static bool dropped(const char *name, size_t n)
{
    static const char *const hop[] = {"connection", "keep-alive", "te", "upgrade", "trailer", "host"};
    if (n >= 6 && !strncasecmp(name, "proxy-", 6)) return true;
    for (size_t i = 0; i < sizeof hop / sizeof *hop; i++)
        if (strlen(hop[i]) == n && !strncasecmp(name, hop[i], n)) return true;
    return false;
}

static bool header_line(const char *l, size_t n, proxyreq_t *r, buf_t *fwd, char **why)
{
    if (l[0] == ' ' || l[0] == '\t') return fail(why, xstrdup("malformed header: a folded line (obs-fold)"));
    const char *colon = memchr(l, ':', n);
    if (!colon || colon == l) {
        char *q = proxyreq_quote(l, n);
        return fail(why, xasprintf("malformed header line '%s'", q)), free(q), false;
    }
    size_t nn = (size_t)(colon - l);
    for (size_t i = 0; i < nn; i++)
        if (!tchar((unsigned char)l[i])) {
            char *q = proxyreq_quote(l, nn);
            return fail(why, xasprintf("malformed header name '%s'", q)), free(q), false;
        }
    const char *v = colon + 1, *ve = l + n;
    while (v < ve && (*v == ' ' || *v == '\t')) v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
    for (const char *p = v; p < ve; p++)
        if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
            return fail(why, xstrdup("malformed header: a control byte in a value"));
    size_t vn = (size_t)(ve - v);
    if (nn == 4 && !strncasecmp(l, "host", 4)) {
        if (r->host_header) return fail(why, xstrdup("two Host headers"));
        r->host_header = xstrndup(v, vn);
    } else if (nn == 14 && !strncasecmp(l, "content-length", 14)) {
        if (r->content_length >= 0) return fail(why, xstrdup("two Content-Length headers"));
        if (vn == 0 || vn > 15) return fail(why, xstrdup("malformed Content-Length"));
        long long cl = 0;
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9') return fail(why, xstrdup("malformed Content-Length"));
            cl = cl * 10 + (v[i] - '0');
        }
        r->content_length = cl;
    } else if (nn == 17 && !strncasecmp(l, "transfer-encoding", 17)) {
        return fail(why, xstrdup("Transfer-Encoding in a request is not supported by the proxy (send "
                                 "Content-Length)"));
    }
    if (!dropped(l, nn)) {
        buf_add(fwd, l, n);
        buf_adds(fwd, "\r\n");
    }
    return true;
}

/* The Host header, when there is one, must name the target: the same host
 * (compared without case) and the same port (absent: the target's default
 * for a plain request, any for CONNECT, whose Host usually repeats host:port). */
static bool host_agrees(const proxyreq_t *r, char **why)
{
    if (!r->host_header) return true;
    char *h = NULL;
    int port = 0;
    bool ok = split_authority(r->host_header, strlen(r->host_header), &h, &port, r->connect ? r->port : 80) &&
              !strcasecmp(h, r->host) && port == r->port;
    free(h);
    if (ok) return true;
    char *q = proxyreq_quote(r->host_header, strlen(r->host_header));
    *why = xasprintf("the Host header '%s' disagrees with the %s target %s:%d", q, r->connect ? "CONNECT" : "request",
                     r->host, r->port);
    free(q);
    return false;
}

bool proxyreq_parse(const char *buf, size_t len, proxyreq_t *out, char **why)
{
    memset(out, 0, sizeof *out);
    out->content_length = -1;
    *why = NULL;
    long end = proxyreq_head_end(buf, len);
    if (end <= 0) {
        *why = xstrdup(end < 0 ? "malformed request head (a NUL, a bare CR or LF, or more than 16 KiB)"
                               : "incomplete request head");
        return false;
    }
    out->head_len = (size_t)end;
    buf_t fwd = BUF_INIT;
    const char *p = buf, *stop = buf + end - 2; /* before the final CRLF */
    bool ok = true, first = true;
    while (ok && p < stop) {
        const char *nl = memchr(p, '\r', (size_t)(stop - p));
        size_t n = (size_t)(nl - p);
        if (first) ok = request_line(p, n, out, why);
        else ok = header_line(p, n, out, &fwd, why);
        first = false;
        p = nl + 2;
    }
    if (ok && out->connect && out->content_length > 0)
        ok = fail(why, xstrdup("a CONNECT request with a body"));
    if (ok) ok = host_agrees(out, why);
    out->headers = buf_detach(&fwd, NULL);
    if (!ok) proxyreq_free(out);
    return ok;
}

void proxyreq_free(proxyreq_t *r)
{
    free(r->host);
    free(r->path);
    free(r->headers);
    free(r->host_header);
    memset(r, 0, sizeof *r);
    r->content_length = -1;
}
