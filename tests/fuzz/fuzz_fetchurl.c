/* fuzz_fetchurl.c — libFuzzer harness for session_fetch's validation path, no network.
 * Input "URL" or "URL\nLOCATION": parse + normalise, address/name policy, Location
 * resolution and its re-check; asserts a normalised URL parses again to itself, with
 * a plain ASCII or IP-literal host and no control byte, within FETCH_URL_MAX. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fetch_url.h"
#include "netaddr.h"

#define REQUIRE(c)                                                                     \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                                   \
        }                                                                              \
    } while (0)

static void check_url(const fetch_url_t *u)
{
    REQUIRE(u->url && u->host && u->scheme);
    REQUIRE(strcmp(u->scheme, "http") == 0 || strcmp(u->scheme, "https") == 0);
    REQUIRE(strlen(u->url) <= FETCH_URL_MAX);
    for (const char *p = u->url; *p; p++) REQUIRE((unsigned char)*p > 0x20 && *p != 0x7f);
    REQUIRE(u->port > 0 && u->port <= 65535);
    if (u->is_ip) {
        netaddr_t a;
        REQUIRE(netaddr_parse(u->host, &a));
        REQUIRE(netaddr_equal(&a, &u->ip));
        (void)netaddr_classify(&a, NULL);
    } else {
        for (const char *p = u->host; *p; p++)
            REQUIRE((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
                    *p == '.');
        REQUIRE(u->host[0] && u->host[strlen(u->host) - 1] != '.');
        free(fetch_name_refusal(u->host, false));
    }
    free(fetch_addr_refusal(u->host, &u->ip, u->is_ip, false));

    /* Idempotence: what libcurl gets must mean the same thing when read again. */
    fetch_url_t again;
    char *why = NULL;
    REQUIRE(fetch_url_parse(u->url, &again, &why));
    REQUIRE(strcmp(again.url, u->url) == 0);
    REQUIRE(strcmp(again.host, u->host) == 0);
    REQUIRE(again.is_ip == u->is_ip && again.port == u->port);
    fetch_url_free(&again);
    free(why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 3 * FETCH_URL_MAX) return 0;
    char *s = xstrndup((const char *)data, size); /* stops at an embedded NUL */
    char *loc = strchr(s, '\n');
    if (loc) *loc++ = '\0';

    uint32_t v4;
    (void)netaddr_parse_v4_any(s, strlen(s), &v4);

    fetch_url_t u;
    char *why = NULL;
    bool ok = fetch_url_parse(s, &u, &why);
    REQUIRE(ok ? why == NULL : why != NULL);
    if (ok) check_url(&u);
    free(why);
    why = NULL;

    if (loc) {
        const char *base = ok ? u.url : "http://example.com/a/b?c";
        char *abs = fetch_url_resolve(base, loc, &why);
        REQUIRE(abs ? why == NULL : why != NULL);
        free(why);
        why = NULL;
        if (abs) {
            fetch_url_t r;
            if (fetch_url_parse(abs, &r, &why)) check_url(&r);
            fetch_url_free(&r);
            free(why);
            free(abs);
        }
    }
    fetch_url_free(&u);
    free(s);
    return 0;
}
