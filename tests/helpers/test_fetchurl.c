/* test_fetchurl.c — URL parsing, normalisation and redirect resolution of
 * session_fetch (runtime/fetch_url.c), no network. Built and run by
 * tests/suites/62-fetch, since the unit-test binaries link only the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fetch_url.h"
#include "tap.h"

typedef struct {
    const char *in;
    const char *url;  /* normalised URL; NULL when refused */
    const char *host; /* normalised host, or the expected error substring when refused */
    bool is_ip;
} pcase_t;

/* clang-format off */
static const pcase_t pcases[] = {
    {"http://example.com/", "http://example.com/", "example.com", false},
    {"HTTPS://ExAmple.COM./a?b#frag", "https://example.com/a?b", "example.com", false},
    {"http://example.com:8080/x", "http://example.com:8080/x", "example.com", false},
    {"http://ex\xc3\xa4mple.com/", "http://xn--exmple-cua.com/", "xn--exmple-cua.com", false},
    {"http://FA\xc3\x9f.de/", "http://xn--fa-hia.de/", "xn--fa-hia.de", false},
    {"http://%65xample.com/", "http://example.com/", "example.com", false},
    {"http://exa_mple.com/", "http://exa_mple.com/", "exa_mple.com", false},
    {"http://example.com/p\xc3\xa4th", "http://example.com/p%c3%a4th", "example.com", false},
    /* IP literals in every spelling end up as the one address they mean */
    {"http://127.0.0.1/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://2130706433/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://0x7f.1/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://0177.0.0.1/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://0x7F000001:81/", "http://127.0.0.1:81/", "127.0.0.1", true},
    {"http://127.1/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://127.0.0.1./", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://0/", "http://0.0.0.0/", "0.0.0.0", true},
    {"http://169.254.169.254/latest/meta-data", "http://169.254.169.254/latest/meta-data",
     "169.254.169.254", true},
    {"http://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97\xef\xbc\x8e\xef\xbc\x90\xef\xbc\x8e\xef\xbc\x90"
     "\xef\xbc\x8e\xef\xbc\x91/", "http://127.0.0.1/", "127.0.0.1", true}, /* fullwidth */
    {"http://127\xe3\x80\x82" "0\xe3\x80\x82" "0\xe3\x80\x82" "1/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://[::1]/", "http://[::1]/", "::1", true},
    {"http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/", "::1", true},
    {"http://[::ffff:127.0.0.1]/", "http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", true},
    {"http://[::FFFF:7F00:1]/", "http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", true},
    {"http://[2001:DB8::1]/", "http://[2001:db8::1]/", "2001:db8::1", true},
    /* circled letters fold to "localhost": judged as that name */
    {"http://\xe2\x93\x9b\xe2\x93\x9e\xe2\x93\x92\xe2\x93\x90\xe2\x93\x9b\xe2\x93\x97\xe2\x93\x9e"
     "\xe2\x93\xa2\xe2\x93\xa3/", "http://localhost/", "localhost", false},
    /* refused */
    {"", NULL, "empty", false},
    {"example.com", NULL, "must start with http", false},
    {"//example.com/", NULL, "must start with http", false},
    {"ftp://example.com/", NULL, "not 'ftp:'", false},
    {"file:///etc/passwd", NULL, "not 'file:'", false},
    {"gopher://127.0.0.1:6379/_x", NULL, "not 'gopher:'", false},
    {"dict://x/", NULL, "not 'dict:'", false},
    {"javascript:alert(1)", NULL, "not 'javascript:'", false},
    {"HtTp:example.com", NULL, "invalid URL", false},
    {"http://", NULL, "invalid URL", false},
    {"http://user@example.com/", NULL, "credentials", false},
    {"http://user:pw@example.com/", NULL, "credentials", false},
    {"http://@example.com/", NULL, "credentials", false},
    {"http://allowed.com@evil.com/", NULL, "credentials", false},
    {"http://[fe80::1%25eth0]/", NULL, "zone", false},
    {"http://example.com:0/", NULL, "port 0", false},
    {"http://example.com:65536/", NULL, "invalid URL", false},
    {"http://exa mple.com/", NULL, "byte 0x20", false},
    {"http://example.com/\r\nX-Injected: 1", NULL, "byte 0x0d", false},
    {"http://example.com/\x7f", NULL, "byte 0x7f", false},
    {"http://1.2.3.4.5/", NULL, "not a valid IPv4", false},
    {"http://999999999999/", NULL, "not a valid IPv4", false},
    {"http://0x100000000/", NULL, "not a valid IPv4", false},
    {"http://1.2.3.08/", NULL, "not a valid IPv4", false},
    {"http://foo.0x7f/", NULL, "not a valid IPv4", false},
    {"http://a..b/", NULL, "empty label", false},
    {"http://a.b../", NULL, "empty label", false},
    {"http://./", NULL, "empty", false},
    {"http://ex$mple.com/", NULL, "invalid URL", false},
    {"http://a~b.com/", NULL, "character", false},
    {"http://127%2e0.0.1/", "http://127.0.0.1/", "127.0.0.1", true},
    {"http://xn--zz.com\xc3\xa4/", NULL, "IDNA", false},
    {"http://-bad\xc3\xa4.com/", NULL, "IDNA", false},
};
/* clang-format on */

static void test_parse(void)
{
    char name[256];
    for (size_t i = 0; i < sizeof pcases / sizeof pcases[0]; i++) {
        const pcase_t *c = &pcases[i];
        fetch_url_t u;
        char *why = NULL;
        bool ok = fetch_url_parse(c->in, &u, &why);
        char *shown = fetch_url_quote(c->in);
        if (c->url) {
            snprintf(name, sizeof name, "parse '%s' -> %s", shown, c->url);
            bool good = ok && strcmp(u.url, c->url) == 0 && strcmp(u.host, c->host) == 0 && u.is_ip == c->is_ip;
            if (!CHECK(good, name)) {
                tap_show("url ", ok ? u.url : NULL);
                tap_show("host", ok ? u.host : NULL);
                tap_show("why ", why);
            }
        } else {
            snprintf(name, sizeof name, "refuse '%s' (%s)", shown, c->host);
            if (!CHECK(!ok && why && strstr(why, c->host), name)) tap_show("why ", why);
        }
        free(shown);
        free(why);
        fetch_url_free(&u);
    }

    /* length limit, both sides of it */
    buf_t b = BUF_INIT;
    buf_adds(&b, "http://example.com/");
    while (b.len < FETCH_URL_MAX) buf_addc(&b, 'a');
    fetch_url_t u;
    char *why = NULL;
    CHECK(fetch_url_parse(b.p, &u, &why), "a URL of exactly FETCH_URL_MAX bytes is accepted");
    fetch_url_free(&u);
    free(why);
    buf_addc(&b, 'a');
    CHECK(!fetch_url_parse(b.p, &u, &why) && strstr(why, "limit"), "one byte more is refused");
    free(why);
    buf_free(&b);
}

typedef struct {
    const char *base, *loc, *want; /* want NULL: refused */
} rcase_t;

static const rcase_t rcases[] = {
    {"http://a.com/x/y?q", "/abs", "http://a.com/abs"},
    {"http://a.com/x/y?q", "rel", "http://a.com/x/rel"},
    {"http://a.com/x/y?q", "../up", "http://a.com/up"},
    {"http://a.com/x/y?q", "?q2", "http://a.com/x/y?q2"},
    {"http://a.com/x/y", "//other.com/p", "http://other.com/p"},
    {"https://a.com/x", "//other.com/p", "https://other.com/p"},
    {"http://a.com/x", "https://b.com/", "https://b.com/"},
    {"http://a.com/x", "file:///etc/passwd", "file:///etc/passwd"}, /* absolute: judged by parse */
    {"http://a.com/x", "a b", "http://a.com/a%20b"},
    {"http://a.com/x", "\xc3\xa4", "http://a.com/%c3%a4"},
    {"http://a.com:8080/x", "/y", "http://a.com:8080/y"},
    {"http://a.com/x", "/\r\nSet-Cookie: x", NULL},
    {"http://a.com/x", "/\x01", NULL},
};

static void test_resolve(void)
{
    char name[256];
    for (size_t i = 0; i < sizeof rcases / sizeof rcases[0]; i++) {
        const rcase_t *c = &rcases[i];
        char *why = NULL;
        char *got = fetch_url_resolve(c->base, c->loc, &why);
        char *shown = fetch_url_quote(c->loc);
        snprintf(name, sizeof name, "resolve '%s' against %s -> %s", shown, c->base, c->want ? c->want : "refused");
        if (c->want) {
            CHECK_STR(got, c->want, name);
        } else if (!CHECK(!got && why, name)) {
            tap_show("got", got);
        }
        free(shown);
        free(got);
        free(why);
    }
    /* what a resolved redirect leads to is checked again from scratch */
    char *why = NULL;
    char *abs = fetch_url_resolve("http://a.com/", "http://0x7f.1/", &why);
    fetch_url_t u;
    CHECK(abs && fetch_url_parse(abs, &u, &why) && u.is_ip && strcmp(u.host, "127.0.0.1") == 0,
          "a redirect to an obfuscated IP is normalised by the re-check");
    fetch_url_free(&u);
    free(abs);
    free(why);
}

static void test_policy(void)
{
    netaddr_t a;
    netaddr_parse("10.0.0.1", &a);
    char *m = fetch_addr_refusal("intranet.example", &a, false, false);
    CHECK_STR(m, "refused: host 'intranet.example' resolves to 10.0.0.1, a private (RFC 1918) address; "
                 "session_fetch reaches only public addresses unless the operator sets "
                 "[network] allow_private_addresses = true",
              "address refusal names host, address and class");
    free(m);
    CHECK(fetch_addr_refusal("intranet.example", &a, false, true) == NULL, "allow_private lifts it");
    netaddr_parse("::ffff:169.254.169.254", &a);
    m = fetch_addr_refusal("::ffff:169.254.169.254", &a, true, false);
    CHECK(m && strstr(m, "cloud instance metadata") && strstr(m, "inside IPv6"), "mapped metadata literal");
    free(m);
    netaddr_parse("93.184.216.34", &a);
    CHECK(fetch_addr_refusal("example.com", &a, false, false) == NULL, "public address passes");
    m = fetch_name_refusal("metadata.google.internal", false);
    CHECK(m && strstr(m, "metadata.google.internal"), "metadata name refused before DNS");
    free(m);
    CHECK(fetch_name_refusal("metadata.google.internal", true) == NULL, "allow_private lifts the name rule");
    CHECK(fetch_name_refusal("pypi.org", false) == NULL, "ordinary name passes");
}

int main(void)
{
    test_parse();
    test_resolve();
    test_policy();
    return tap_done();
}
