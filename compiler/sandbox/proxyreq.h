/* proxyreq.h — the request head a sandboxed client sends the proxy: a pure
 * parser (bytes in, a checked request or one sentence out; no I/O, no
 * allocation but the result's), so that the fuzz harness and the unit tests
 * drive exactly what the proxy runs on every connection.
 */
#ifndef DRUN_PROXYREQ_H
#define DRUN_PROXYREQ_H

#include <stdbool.h>
#include <stddef.h>

#define PROXYREQ_HEAD_MAX 16384 /* bytes of request line + headers; more is refused */

typedef struct proxyreq {
    bool connect;             /* CONNECT host:port (a tunnel), else an absolute-URI http request */
    char method[24];          /* "CONNECT", "GET", ... */
    char *host;               /* the target host as written, brackets of an IPv6 literal removed (owned) */
    int port;                 /* the target port (explicit, or 80 for http://) */
    char *path;               /* origin-form target of a plain request ("/x?y"); NULL for CONNECT (owned) */
    int minor;                /* HTTP/1.<minor> */
    char *headers;            /* the header lines to forward upstream, each "Name: value\r\n", without
                                 Host, Connection, Keep-Alive, Proxy-* and TE/Upgrade (owned) */
    char *host_header;        /* the Host header's value, or NULL (owned) */
    long long content_length; /* -1: none */
    size_t head_len;          /* bytes of the head, through the blank line */
} proxyreq_t;

/* The length of the head in buf[0..len) (through "\r\n\r\n"), 0 when it is
 * not complete yet, or -1 when it can no longer be valid (a NUL, a bare LF or
 * CR, or no end within PROXYREQ_HEAD_MAX bytes). */
long proxyreq_head_end(const char *buf, size_t len);

/* Parses the complete head buf[0..len) (proxyreq_head_end > 0). True with
 * *out filled (free with proxyreq_free); false with *why (caller frees): one
 * sentence naming what is wrong (a malformed request line, a target that is
 * not host:port or http://..., a port out of range, userinfo, a folded or
 * malformed header, two Host or Content-Length headers, Transfer-Encoding,
 * a Host header that disagrees with the target). */
bool proxyreq_parse(const char *buf, size_t len, proxyreq_t *out, char **why);

void proxyreq_free(proxyreq_t *r);

/* s for a message or a log line: printable ASCII only, cut after 120 bytes
 * (a hostile client chooses it). Caller frees. */
char *proxyreq_quote(const char *s, size_t len);

#endif
