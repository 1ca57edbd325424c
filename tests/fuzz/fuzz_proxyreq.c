/* fuzz_proxyreq.c — libFuzzer harness for the proxy's request parser (the
 * bytes a sandboxed client sends the host side). Asserts what the proxy relies
 * on: a head is found only within PROXYREQ_HEAD_MAX and ends in a blank line;
 * an accepted request has a host of visible bytes, a port in 1..65535, a
 * CONNECT with no path, a plain request with an origin-form path, forwarded
 * headers that are whole CRLF lines without Host or Proxy-*, and a Host
 * header that names the target; quoting never yields a control byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "proxyreq.h"

#define REQUIRE(c)                                                                     \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                                   \
        }                                                                              \
    } while (0)

static void check_headers(const char *h)
{
    while (*h) {
        const char *e = strstr(h, "\r\n");
        REQUIRE(e && e > h);
        REQUIRE(strncasecmp(h, "host:", 5) != 0 && strncasecmp(h, "proxy-", 6) != 0 &&
                strncasecmp(h, "connection:", 11) != 0 && strncasecmp(h, "transfer-encoding:", 18) != 0);
        for (const char *p = h; p < e; p++) REQUIRE(*p != '\r' && *p != '\n' && *p != '\0');
        h = e + 2;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    long end = proxyreq_head_end(buf, size);
    REQUIRE(end <= (long)size && end <= PROXYREQ_HEAD_MAX);
    if (end > 0) REQUIRE(end >= 4 && memcmp(buf + end - 4, "\r\n\r\n", 4) == 0);
    proxyreq_t r;
    char *why = NULL;
    bool ok = proxyreq_parse(buf, size, &r, &why);
    REQUIRE(ok == (why == NULL));
    if (ok) {
        REQUIRE(end > 0 && r.head_len == (size_t)end);
        REQUIRE(r.host && r.host[0] && r.port >= 1 && r.port <= 65535);
        for (const char *p = r.host; *p; p++) REQUIRE((unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f);
        REQUIRE(r.connect == (r.path == NULL));
        if (r.path) REQUIRE(r.path[0] == '/');
        REQUIRE(r.headers);
        check_headers(r.headers);
        REQUIRE(!r.connect || r.content_length <= 0);
        proxyreq_free(&r);
    } else {
        for (const char *p = why; *p; p++) REQUIRE((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
        free(why);
    }
    char *q = proxyreq_quote(buf, size);
    for (const char *p = q; *p; p++) REQUIRE((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
    free(q);
    return 0;
}
