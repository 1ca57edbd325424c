/* test_proxyreq.c — the proxy's request parser (proxyreq.h): the forms it
 * accepts and what it makes of them, and the exact sentence of each refusal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxyreq.h"
#include "tap.h"

/* A test name on one line: the request's first line. */
static void name_of(char *name, size_t n, const char *verb, const char *text)
{
    size_t len = strcspn(text, "\r\n");
    snprintf(name, n, "%s %.*s", verb, (int)(len > 120 ? 120 : len), text);
}

static void ok_req(const char *text, bool connect, const char *host, int port, const char *path,
                   const char *headers)
{
    proxyreq_t r;
    char *why = NULL, name[200];
    name_of(name, sizeof name, "accepts", text);
    bool ok = proxyreq_parse(text, strlen(text), &r, &why);
    CHECK(ok, name);
    if (!ok) {
        tap_show("why", why);
        free(why);
        return;
    }
    CHECK(r.connect == connect, name);
    CHECK_STR(r.host, host, name);
    CHECK_INT(r.port, port, name);
    if (path) CHECK_STR(r.path, path, name);
    else CHECK(r.path == NULL, name);
    CHECK_STR(r.headers, headers, name);
    proxyreq_free(&r);
}

static void bad_req(const char *text, const char *msg)
{
    proxyreq_t r;
    char *why = NULL, name[200];
    name_of(name, sizeof name, "refuses", text);
    CHECK(!proxyreq_parse(text, strlen(text), &r, &why), name);
    CHECK_STR(why, msg, name);
    free(why);
}

static void test_head_end(void)
{
    CHECK_INT(proxyreq_head_end("GET", 3), 0, "incomplete");
    CHECK_INT(proxyreq_head_end("A\r\n\r\nrest", 9), 5, "head ends at the blank line");
    CHECK_INT(proxyreq_head_end("A\n\n", 3), -1, "a bare LF");
    CHECK_INT(proxyreq_head_end("A\rB\r\n\r\n", 7), -1, "a bare CR");
    CHECK_INT(proxyreq_head_end("A\r", 2), 0, "a CR at the end waits for more");
    CHECK_INT(proxyreq_head_end("A\0\r\n\r\n", 6), -1, "a NUL");
    char *big = malloc(PROXYREQ_HEAD_MAX + 10);
    memset(big, 'a', PROXYREQ_HEAD_MAX + 10);
    CHECK_INT(proxyreq_head_end(big, PROXYREQ_HEAD_MAX + 10), -1, "no end within the limit");
    free(big);
}

static void test_accepts(void)
{
    ok_req("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nUser-Agent: curl\r\n\r\n", true,
           "example.com", 443, NULL, "User-Agent: curl\r\n");
    ok_req("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", true, "2001:db8::1", 8443, NULL, "");
    ok_req("CONNECT Example.COM:443 HTTP/1.0\r\nHost: example.com\r\n\r\n", true, "Example.COM", 443, NULL, "");
    ok_req("GET http://example.com/a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n"
           "Proxy-Connection: Keep-Alive\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n",
           false, "example.com", 80, "/a?b=1", "Accept: */*\r\n");
    ok_req("GET http://example.com HTTP/1.1\r\n\r\n", false, "example.com", 80, "/", "");
    ok_req("POST HTTP://example.com:8080/up HTTP/1.1\r\nHost: example.com:8080\r\nContent-Length: 3\r\n\r\nabc",
           false, "example.com", 8080, "/up", "Content-Length: 3\r\n");
}

static void test_refusals(void)
{
    bad_req("CONNECT example.com HTTP/1.1\r\n\r\n",
            "malformed CONNECT target 'example.com' (host:port expected)");
    bad_req("CONNECT example.com:0 HTTP/1.1\r\n\r\n", "malformed CONNECT target 'example.com:0' (host:port expected)");
    bad_req("CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
            "malformed CONNECT target 'example.com:65536' (host:port expected)");
    bad_req("CONNECT a:1:2 HTTP/1.1\r\n\r\n", "malformed CONNECT target 'a:1:2' (host:port expected)");
    bad_req("CONNECT  example.com:443 HTTP/1.1\r\n\r\n",
            "malformed request line 'CONNECT  example.com:443 HTTP/1.1' (METHOD TARGET HTTP/1.x expected)");
    bad_req("CONNECT example.com:443 HTTP/2\r\n\r\n",
            "malformed request line 'CONNECT example.com:443 HTTP/2' (METHOD TARGET HTTP/1.x expected)");
    bad_req("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "'GET /index.html' is not a proxy request (CONNECT host:port or an absolute http:// URL expected)");
    bad_req("GET https://example.com/ HTTP/1.1\r\n\r\n",
            "'GET https://example.com/' asks the proxy to speak TLS: use CONNECT (an https:// proxy URL is not "
            "needed; HTTPS_PROXY is http://)");
    bad_req("GET http://user@example.com/ HTTP/1.1\r\n\r\n",
            "the target 'http://user@example.com/' carries a user name");
    bad_req("GET http://example.com/#x HTTP/1.1\r\n\r\n", "the target 'http://example.com/#x' has a fragment");
    bad_req("CONNECT a.com:443 HTTP/1.1\r\nHost: b.com:443\r\n\r\n",
            "the Host header 'b.com:443' disagrees with the CONNECT target a.com:443");
    bad_req("CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:444\r\n\r\n",
            "the Host header 'a.com:444' disagrees with the CONNECT target a.com:443");
    bad_req("GET http://a.com/ HTTP/1.1\r\nHost: a.com:8080\r\n\r\n",
            "the Host header 'a.com:8080' disagrees with the request target a.com:80");
    bad_req("GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nHost: a.com\r\n\r\n", "two Host headers");
    bad_req("POST http://a.com/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            "two Content-Length headers");
    bad_req("POST http://a.com/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length");
    bad_req("POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "Transfer-Encoding in a request is not supported by the proxy (send Content-Length)");
    bad_req("GET http://a.com/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", "malformed header: a folded line (obs-fold)");
    bad_req("GET http://a.com/ HTTP/1.1\r\nBad Name: a\r\n\r\n", "malformed header name 'Bad Name'");
    bad_req("GET http://a.com/ HTTP/1.1\r\nNoColon\r\n\r\n", "malformed header line 'NoColon'");
    bad_req("CONNECT a.com:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "a CONNECT request with a body");
    bad_req("GET http://a.com/ HTTP/1.1\n\n",
            "malformed request head (a NUL, a bare CR or LF, or more than 16 KiB)");
}

static void test_quote(void)
{
    char *q = proxyreq_quote("a\x01\xff", 3);
    CHECK_STR(q, "a\\x01\\xff", "control and 8-bit bytes escaped");
    free(q);
}

int main(void)
{
    test_head_end();
    test_accepts();
    test_refusals();
    test_quote();
    return tap_done();
}
