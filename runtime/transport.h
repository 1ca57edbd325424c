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
int stdio_run(mcp_server_t *srv, int in_fd, int out_fd, int stop_fd, size_t max_line);

typedef struct http_opts {
    const char *listen;  /* "ADDR:PORT", "[V6]:PORT" or "PORT" (127.0.0.1) */
    const char *token;   /* bearer token required on every request, or NULL */
    size_t max_body;     /* largest request body accepted */
} http_opts_t;

/* Streamable HTTP at /mcp (MCP 2025-11-25 transports) with libmicrohttpd,
 * one thread per connection. Prints "listening on http://HOST:PORT/mcp" to
 * stderr once bound. Returns 0 after stop_fd, 2 when it cannot listen. */
int http_run(mcp_server_t *srv, const http_opts_t *o, int stop_fd);

#endif
