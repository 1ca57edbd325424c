/* test_domain.c — domain_allowlist entries: parsing, host normalisation,
 * matching (both ways, at label boundaries, IDNA, IP literals) and lint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "tap.h"

static void entry(const char *text, int kind, const char *pattern)
{
    domain_entry_t e;
    char *err = NULL, name[160];
    snprintf(name, sizeof name, "entry '%s'", text);
    bool ok = domain_entry_parse(text, &e, &err);
    CHECK(ok && e.kind == kind && err == NULL, name);
    CHECK_STR(ok ? e.pattern : err, pattern, name);
    if (ok) domain_entry_free(&e);
    free(err);
}

static void bad_entry(const char *text, const char *msg)
{
    domain_entry_t e;
    char *err = NULL, name[160];
    snprintf(name, sizeof name, "bad entry '%.100s'", text ? text : "(null)");
    CHECK(!domain_entry_parse(text, &e, &err) && e.pattern == NULL, name);
    CHECK_STR(err, msg, name);
    free(err);
}

static void host(const char *text, const char *want)
{
    char *out = NULL, *err = NULL, name[160];
    snprintf(name, sizeof name, "host '%.100s'", text ? text : "(null)");
    bool ok = domain_host_normalize(text, &out, &err);
    CHECK_STR(ok ? out : err, want, name);
    free(out);
    free(err);
}

/* Does entry e allow host h (normalised first)? */
static bool allows(const char *e, const char *h)
{
    domain_entry_t d;
    char *n = NULL;
    if (!domain_entry_parse(e, &d, NULL)) return false;
    bool r = domain_host_normalize(h, &n, NULL) && domain_match(&d, n);
    free(n);
    domain_entry_free(&d);
    return r;
}

#define MATCH(e, h) CHECK(allows((e), (h)), "'" e "' allows '" h "'")
#define NO_MATCH(e, h) CHECK(!allows((e), (h)), "'" e "' does not allow '" h "'")

static void test_parse(void)
{
    entry("example.com", DOMAIN_EXACT, "example.com");
    entry("Example.COM.", DOMAIN_EXACT, "example.com");
    entry("*.example.com", DOMAIN_SUBDOMAINS, "example.com");
    entry("*.Example.com.", DOMAIN_SUBDOMAINS, "example.com");
    entry("*", DOMAIN_ALL, "*");
    entry("bücher.example", DOMAIN_EXACT, "xn--bcher-kva.example");
    entry("BÜCHER.example", DOMAIN_EXACT, "xn--bcher-kva.example");
    entry("xn--bcher-kva.example", DOMAIN_EXACT, "xn--bcher-kva.example");
    entry("*.bücher.example", DOMAIN_SUBDOMAINS, "xn--bcher-kva.example");
    entry("straße.de", DOMAIN_EXACT, "xn--strae-oqa.de");
    entry("ｅｘａｍｐｌｅ．ｃｏｍ", DOMAIN_EXACT, "example.com");
    entry("_dmarc.example.com", DOMAIN_EXACT, "_dmarc.example.com");
    entry("192.0.2.1", DOMAIN_IP, "192.0.2.1");
    entry("[2001:DB8::1]", DOMAIN_IP, "2001:db8::1");
    entry("2001:db8:0:0:0:0:0:1", DOMAIN_IP, "2001:db8::1");
    entry("::ffff:1.2.3.4", DOMAIN_IP, "::ffff:1.2.3.4");
    entry("127.1", DOMAIN_IP, "127.0.0.1");
    entry("0x7f.0.0.1", DOMAIN_IP, "127.0.0.1");
    entry("2130706433", DOMAIN_IP, "127.0.0.1");
}

static void test_rejections(void)
{
    bad_entry(NULL, "the entry is empty; write a host name such as 'example.com' or '*.example.com'");
    bad_entry("", "the entry is empty; write a host name such as 'example.com' or '*.example.com'");
    bad_entry("https://example.com/path", "'https://example.com/path' is a URL; an entry is a host name only: write 'example.com'");
    bad_entry("http://user@Example.com:8080/x",
              "'http://user@Example.com:8080/x' is a URL; an entry is a host name only: write 'Example.com'");
    bad_entry("https:example.com", "'https:example.com' is a URL; an entry is a host name only: write 'example.com'");
    bad_entry("example.com/api", "'example.com/api' has a path; an entry is a host name only: write 'example.com'");
    bad_entry("example.com?q", "'example.com?q' has a path; an entry is a host name only: write 'example.com'");
    bad_entry("example.com:443", "'example.com:443' has a port; an entry is a host name and matches every port: write 'example.com'");
    bad_entry("*.example.com:443",
              "'*.example.com:443' has a port; an entry is a host name and matches every port: write '*.example.com'");
    bad_entry("[::1]:443", "'[::1]:443' has a port; an entry is a host name and matches every port: write '[::1]'");
    bad_entry("user@example.com", "'user@example.com' has a user name; an entry is a host name only: write 'example.com'");
    bad_entry("example.com:80@evil", "'example.com:80@evil' has a user name; an entry is a host name only: write 'evil'");
    bad_entry("exa mple.com", "'exa mple.com' contains a space or control character; write the host name alone, such as 'example.com'");
    bad_entry(" example.com", "' example.com' contains a space or control character; write the host name alone, such as 'example.com'");
    bad_entry("example.com\n", "'example.com\\x0a' contains a space or control character; write the host name alone, such as 'example.com'");
    bad_entry("ex*ample.com", "'ex*ample.com' has '*' inside a name; write '*.example.com' for every subdomain of example.com, or '*' alone for every host");
    bad_entry("*example.com", "'*example.com' has '*' inside a name; write '*.example.com' for every subdomain of example.com, or '*' alone for every host");
    bad_entry("*.*.example.com", "'*.*.example.com' has '*' inside a name; write '*.example.com' for every subdomain of example.com, or '*' alone for every host");
    bad_entry("foo.*.com", "'foo.*.com' has '*' inside a name; write '*.example.com' for every subdomain of example.com, or '*' alone for every host");
    bad_entry("**", "'**' has '*' inside a name; write '*.example.com' for every subdomain of example.com, or '*' alone for every host");
    bad_entry("*.", "'*.' needs a name after it, such as '*.example.com'");
    bad_entry("*.0.0.1", "'*.0.0.1' puts a wildcard over IP addresses; list each address instead (an IP entry matches only that address)");
    bad_entry("*.1.2.3.4", "'*.1.2.3.4' puts a wildcard over IP addresses; list each address instead (an IP entry matches only that address)");
    bad_entry("a..b", "'a..b' has an empty label (two dots in a row, or a leading dot)");
    bad_entry(".example.com", "'.example.com' has an empty label (two dots in a row, or a leading dot)");
    bad_entry("example.com..", "'example.com..' has an empty label (two dots in a row, or a leading dot)");
    bad_entry("ex!ample.com", "'ex!ample.com' contains '!', which a host name cannot have");
    bad_entry("1.2.3.256", "'1.2.3.256' ends in a number but is not a valid IPv4 address");
    bad_entry("example.123", "'example.123' ends in a number but is not a valid IPv4 address");
    bad_entry("08.1.1.1", "'08.1.1.1' ends in a number but is not a valid IPv4 address");
    bad_entry("foo:bar", "'foo:bar' is neither a host name nor an IPv6 address (':' only appears in IPv6 addresses)");
    bad_entry("[::1", "'[::1' is not a valid bracketed IPv6 address (a zone such as %eth0 is not supported)");
    bad_entry("[fe80::1%eth0]", "'[fe80::1%eth0]' is not a valid bracketed IPv6 address (a zone such as %eth0 is not supported)");
    bad_entry("-aé.com", "'-aé.com' is not a valid international domain name (string start/ends with forbidden hyphen)");
    bad_entry("\xe2\x92\x88.com", "'⒈.com' is not a valid international domain name (string contains a disallowed character)");
    bad_entry("\xff.com", "'\\xff.com' is not a valid international domain name (string encoding error)");
    bad_entry("a\xe2\x80\xae.com", "'a\\xe2\\x80\\xae.com' is not a valid international domain name (string contains a disallowed character)");

    char label[80], name[300];
    memset(label, 'a', 64);
    strcpy(label + 64, ".com");
    char want[200];
    snprintf(want, sizeof want, "'%s' has a label longer than 63 bytes", label);
    bad_entry(label, want);
    label[63] = '\0'; /* 63 is fine */
    strcat(label, ".com");
    entry(label, DOMAIN_EXACT, label);
    name[0] = '\0';
    for (int i = 0; i < 63; i++) strcat(name, "abc.");
    strcat(name, "x"); /* 253 bytes */
    entry(name, DOMAIN_EXACT, name);
    strcat(name, "y"); /* 254 */
    char *err = NULL;
    domain_entry_t e;
    CHECK(!domain_entry_parse(name, &e, &err) && strstr(err, "is longer than 253 bytes, the most a host name can have"),
          "a 254-byte name is refused");
    free(err);
}

static void test_hosts(void)
{
    host("EXAMPLE.com.", "example.com");
    host("example.com..", "'example.com..' has an empty label (two dots in a row, or a leading dot)");
    host("[::1]", "::1");
    host("::1", "::1");
    host("[2001:0DB8:0000::0001]", "2001:db8::1");
    host("0177.0.0.1", "127.0.0.1");
    host("0x7f000001", "127.0.0.1");
    host("0x7f.1", "127.0.0.1");
    host("127.0.0.1.", "127.0.0.1");
    host("\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1", "127.0.0.1"); /* fullwidth digits */
    host("4294967296", "'4294967296' ends in a number but is not a valid IPv4 address");
    host("1.2.3.4.5", "'1.2.3.4.5' ends in a number but is not a valid IPv4 address");
    host("a\xe2\x80\x8d.com", "a.com"); /* a ZWJ: curl's transitional fallback drops it too */
    host("", "the host is empty");
    host(NULL, "the host is empty");
    host("example.com:80@evil", "'example.com:80@evil' is neither a host name nor an IPv6 address (':' only appears in IPv6 addresses)");
    CHECK(domain_host_is_ip("127.0.0.1") && domain_host_is_ip("::1") && !domain_host_is_ip("example.com") && !domain_host_is_ip("1.2.3") &&
              !domain_host_is_ip(NULL),
          "domain_host_is_ip");
}

static void test_match(void)
{
    MATCH("example.com", "example.com");
    MATCH("example.com", "EXAMPLE.com");
    MATCH("example.com", "example.com.");
    MATCH("example.com.", "example.com");
    NO_MATCH("example.com", "www.example.com");
    NO_MATCH("example.com", "example.com.evil.org");
    NO_MATCH("example.com", "evilexample.com");
    NO_MATCH("example.com", "example.com:80@evil");
    NO_MATCH("example.com", "example.co");
    MATCH("*.example.com", "a.example.com");
    MATCH("*.example.com", "a.b.c.example.com");
    MATCH("*.example.com", "A.Example.COM.");
    NO_MATCH("*.example.com", "example.com");
    NO_MATCH("*.example.com", "badexample.com");
    NO_MATCH("*.example.com", "a.example.com.evil.org");
    NO_MATCH("*.example.com", "a.example.co");
    MATCH("*", "example.com");
    MATCH("*", "xn--bcher-kva.example");
    NO_MATCH("*", "127.0.0.1");
    NO_MATCH("*", "169.254.169.254");
    NO_MATCH("*", "0xa9fea9fe"); /* 169.254.169.254 in disguise */
    NO_MATCH("*", "[::1]");
    NO_MATCH("*", "::ffff:127.0.0.1");
    MATCH("bücher.example", "xn--bcher-kva.example");
    MATCH("xn--bcher-kva.example", "BÜCHER.example");
    MATCH("*.bücher.example", "www.xn--bcher-kva.example");
    NO_MATCH("strasse.de", "straße.de");
    MATCH("straße.de", "xn--strae-oqa.de");
    MATCH("127.0.0.1", "127.1");
    MATCH("127.0.0.1", "2130706433");
    MATCH("127.0.0.1", "0x7f.0.0.1");
    NO_MATCH("127.0.0.1", "::ffff:127.0.0.1");
    NO_MATCH("127.0.0.1", "127.0.0.2");
    MATCH("[2001:db8::1]", "2001:DB8:0::1");
    MATCH("2001:db8::1", "[2001:db8::1]");
    NO_MATCH("1.2.3.4", "1.2.3.4.example.com");

    /* domain_match on hosts not in normal form fails closed */
    domain_entry_t all, ex;
    domain_entry_parse("*", &all, NULL);
    domain_entry_parse("example.com", &ex, NULL);
    CHECK(!domain_match(&ex, "EXAMPLE.COM"), "upper case host is not normal form");
    CHECK(!domain_match(&all, "127.1"), "a non-canonical IPv4 is not a name to '*'");
    /* a literal split to end a hex escape stays on its line */
    /* clang-format off */
    CHECK(!domain_match(&all, "b\xc3\xbc" "cher.example"), "non-ASCII host is not normal form");
    /* clang-format on */
    CHECK(!domain_match(&all, "[::1]"), "brackets are not normal form");
    CHECK(!domain_match(&all, "") && !domain_match(&all, NULL) && !domain_match(NULL, "x"), "empty and NULL");
    CHECK(domain_match(&ex, "example.com."), "one trailing dot is tolerated");
    CHECK(!domain_match(&ex, "example.com.."), "two are not");
    domain_entry_free(&all);
    domain_entry_free(&ex);
}

static void lint(const char *text, domain_lint_t want, const char *why_want)
{
    char *why = (char *)1, name[160];
    snprintf(name, sizeof name, "lint '%s'", text);
    domain_lint_t got = domain_text_lint(text, &why);
    CHECK_INT(got, want, name);
    if (why_want) CHECK_STR(why, why_want, name);
    else CHECK(why == NULL, name);
    free(why);
}

static void test_lint(void)
{
    lint("*", DOMAIN_WARN_ALL, "'*' lets session_fetch reach every host name; list the hosts it needs instead");
    lint("*.com", DOMAIN_WARN_SUFFIX,
         "'*.com' covers a public suffix, so any site registered under it matches; list the sites it needs instead");
    lint("*.co.uk", DOMAIN_WARN_SUFFIX,
         "'*.co.uk' covers a public suffix, so any site registered under it matches; list the sites it needs instead");
    lint("*.github.io", DOMAIN_WARN_SUFFIX,
         "'*.github.io' covers a public suffix, so any site registered under it matches; list the sites it needs instead");
    lint("*.рф", DOMAIN_WARN_SUFFIX,
         "'*.xn--p1ai' covers a public suffix, so any site registered under it matches; list the sites it needs instead");
    lint("*.example.co.uk", DOMAIN_OK, NULL);
    lint("*.example.com", DOMAIN_OK, NULL);
    lint("example.com", DOMAIN_OK, NULL);
    lint("com", DOMAIN_OK, NULL);
    lint("https://pypi.org/simple", DOMAIN_WARN_URL, "'https://pypi.org/simple' is a URL; an entry is a host name only: write 'pypi.org'");
    lint("pypi.org/simple", DOMAIN_WARN_URL, "'pypi.org/simple' has a path; an entry is a host name only: write 'pypi.org'");
    lint("pypi.org:443", DOMAIN_WARN_URL, "'pypi.org:443' has a port; an entry is a host name and matches every port: write 'pypi.org'");
    lint("ex*ample", DOMAIN_OK, NULL);
    CHECK(domain_text_lint(NULL, NULL) == DOMAIN_OK && domain_text_lint("*", NULL) == DOMAIN_WARN_ALL, "why may be NULL");
    domain_entry_t e = {DOMAIN_SUBDOMAINS, NULL};
    CHECK(domain_entry_lint(&e) == DOMAIN_OK && domain_entry_lint(NULL) == DOMAIN_OK, "lint of an empty entry");
}

int main(void)
{
    test_parse();
    test_rejections();
    test_hosts();
    test_match();
    test_lint();
    return tap_done();
}
