/* transport.h — the two ways a client reaches the server.
 *
 * Both run until the client goes away or stop_fd becomes readable (main's
 * signal pipe), then cancel what is still running and return. Neither ever
 * writes anything but protocol to stdout; logs go to stderr (log.h).
 */
#ifndef DRUN_RT_TRANSPORT_H
#define DRUN_RT_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "mcp.h"

/* Default longest message (stdio line, HTTP body); a longer stdio line is
 * answered with an error and skipped up to the next newline. */
#define STDIO_MAX_LINE ((size_t)64 << 20)

/* stdio: newline-delimited JSON on in_fd/out_fd. tools/call requests run on
 * a small worker pool so that a long session_bash does not hold up ping or
 * notifications/cancelled; their responses may therefore come out of order
 * (each carries its id). Everything else is answered in order. At EOF the requests already read are still answered, then
 * it returns 0. Returns 1 when out_fd fails (the client is gone). */
int transport_stdio_run(mcp_server_t *srv, int in_fd, int out_fd, int stop_fd, size_t max_line);

/* Defaults of the HTTP limits (docs/runtime.md, "Limits"). */
#define HTTP_REQUEST_TIMEOUT 10    /* s for a request's headers and body */
#define HTTP_MAX_CONNS 128         /* connections at once, server-wide */
#define HTTP_MAX_CONNS_PER_PEER 32 /* of those, from one peer address */
#define HTTP_MAX_CLIENTS 256       /* MCP sessions (Mcp-Session-Id) */
#define HTTP_CLIENT_IDLE 3600      /* s an MCP session lives without a request */

typedef struct http_opts {
    const char *listen;          /* "ADDR:PORT", "[V6]:PORT" or "PORT" (127.0.0.1) */
    const char *const *tokens;   /* bearer tokens, each one principal (index); none: no check */
    size_t ntokens;
    size_t max_body;             /* largest request body accepted (413 beyond) */
    size_t max_body_total;       /* body bytes in flight, server-wide (503 beyond) */
    unsigned request_timeout;    /* s for headers and body, from the connection's turn */
    unsigned max_conns;          /* connections at once */
    unsigned max_conns_per_peer; /* of those, from one address (< max_conns) */
    unsigned max_clients;        /* MCP sessions; the least recently used idle one is evicted */
    unsigned client_idle;        /* s after which an unused MCP session expires */
} http_opts_t;

/* Streamable HTTP at /mcp (MCP 2025-11-25 transports) with libmicrohttpd,
 * one thread per connection. Prints "listening on http://HOST:PORT/mcp" to
 * stderr once bound. Returns 0 after stop_fd, 2 when it cannot listen. */
int transport_http_run(mcp_server_t *srv, const http_opts_t *o, int stop_fd);

#endif
