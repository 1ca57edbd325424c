/* fetch_url.c — parse, normalise and judge one session_fetch URL, and resolve a
 * redirect against it. libcurl's URL API does the RFC 3986 work; this file adds
 * the policy: what a URL may contain, what its host means (IDNA, legacy IPv4
 * spellings) and which addresses and names are off limits.
 */
#include "fetch_url.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <idn2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "drun_policy.h"

#define HOST_MAX 253 /* DNS limit on a name without its trailing dot */

/* Control bytes, DEL and spaces never belong in a URL given to us: libcurl
 * would refuse some, and others (CR, LF) could split a request line. */
static const char *bad_byte(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || *s == 0x7f) return s;
    return NULL;
}

/* Length of the "scheme:" prefix of s, without the colon; 0 when there is none. */
static size_t scheme_len(const char *s)
{
    if (!isalpha((unsigned char)s[0])) return 0;
    size_t i = 1;
    while (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.') i++;
    return s[i] == ':' ? i : 0;
}

static bool has_part(CURLU *u, CURLUPart part)
{
    char *v = NULL;
    CURLUcode rc = curl_url_get(u, part, &v, 0);
    curl_free(v);
    return rc == CURLUE_OK; /* present, even when empty ("http://@host/") */
}

char *fetch_url_quote(const char *s)
{
    buf_t b = BUF_INIT;
    size_t n = 0;
    for (; *s && n < 200; s++, n++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) buf_printf(&b, "\\x%02x", c);
        else buf_addc(&b, (char)c);
    }
    if (*s) buf_adds(&b, "...");
    return buf_detach(&b, NULL);
}

/* True when the last label of host is a number ("1", "0x7f", "08"): such a
 * host is an IPv4 address or nothing. Browsers (WHATWG URL) and libcurl parse
 * it as IPv4, getaddrinfo may too: a name must never be read as an address by
 * one of them and as a name by another. */
static bool ends_in_number(const char *host, size_t len)
{
    size_t start = len;
    while (start > 0 && host[start - 1] != '.') start--;
    const char *l = host + start;
    size_t n = len - start;
    if (n == 0) return false;
    size_t i = 0;
    if (n >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X')) {
        for (i = 2; i < n; i++)
            if (!isxdigit((unsigned char)l[i])) return false;
        return true;
    }
    for (; i < n; i++)
        if (!isdigit((unsigned char)l[i])) return false;
    return true;
}

/* Normalises a DNS host (not an IPv6 literal) into *out (caller frees):
 * IDNA to punycode, lower case, one trailing dot dropped, then either a valid
 * legacy IPv4 spelling (is_ip) or a syntactically valid name. */
static bool norm_host(const char *raw, char **out, bool *is_ip, netaddr_t *ip, char **why)
{
    char *h = NULL;
    bool ascii = true;
    for (const char *p = raw; *p; p++)
        if ((unsigned char)*p >= 0x80) ascii = false;
    if (ascii) {
        h = xstrdup(raw);
    } else {
        /* UTS #46 mapping: fullwidth dots and digits, circled letters and
         * the like fold to ASCII here, so "１２７．０．０．１" becomes
         * 127.0.0.1 and is judged as that. */
        char *p = NULL;
        int rc = idn2_lookup_u8((const uint8_t *)raw, (uint8_t **)&p,
                                IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
        if (rc != IDN2_OK) {
            *why = xasprintf("invalid URL: the host name is not valid IDNA (%s)", idn2_strerror(rc));
            return false;
        }
        h = xstrdup(p);
        idn2_free(p);
    }
    for (char *p = h; *p; p++) *p = (char)tolower((unsigned char)*p);

    size_t len = strlen(h);
    if (len > 0 && h[len - 1] == '.') h[--len] = '\0'; /* "example.com." is example.com */
    if (len == 0 || h[len - 1] == '.') {
        *why = xstrdup("invalid URL: the host name is empty or ends in an empty label");
        free(h);
        return false;
    }
    if (ends_in_number(h, len)) {
        uint32_t v4;
        if (!netaddr_parse_v4_any(h, len, &v4)) {
            *why = xasprintf("invalid URL: host '%s' ends in a number but is not a valid IPv4 address", h);
            free(h);
            return false;
        }
        *ip = netaddr_v4(v4);
        char txt[NETADDR_STRLEN];
        netaddr_format(ip, txt);
        free(h);
        *out = xstrdup(txt);
        *is_ip = true;
        return true;
    }
    if (len > HOST_MAX) {
        *why = xasprintf("invalid URL: the host name is longer than %d bytes", HOST_MAX);
        free(h);
        return false;
    }
    size_t label = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = h[i];
        if (c == '.' || c == '\0') {
            if (label == 0 || label > 63) {
                *why = xasprintf("invalid URL: host '%s' has an empty label or one longer than 63 bytes", h);
                free(h);
                return false;
            }
            label = 0;
            continue;
        }
        /* Letters, digits, hyphen; underscore too (real hosts use it). Any
         * other byte could mean something else to another parser. */
        if (!isalnum((unsigned char)c) && c != '-' && c != '_') {
            *why = xasprintf("invalid URL: host '%s' contains the character '%c'", h, c);
            free(h);
            return false;
        }
        label++;
    }
    *out = h;
    *is_ip = false;
    return true;
}

static bool fail_parse(fetch_url_t *out, CURLU *u, char **why, char *msg)
{
    curl_url_cleanup(u);
    fetch_url_free(out);
    *why = msg;
    return false;
}

bool fetch_url_parse(const char *text, fetch_url_t *out, char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (!text || !*text) return fail_parse(out, NULL, why, xstrdup("invalid URL: the URL is empty"));
    size_t tlen = strlen(text);
    if (tlen > FETCH_URL_MAX)
        return fail_parse(out, NULL, why,
                          xasprintf("invalid URL: it is %zu bytes long; the limit is %d", tlen, FETCH_URL_MAX));
    const char *bad = bad_byte(text);
    if (bad)
        return fail_parse(out, NULL, why,
                          xasprintf("invalid URL: byte 0x%02x at offset %zu (a space or control character; "
                                    "percent-encode it)",
                                    (unsigned char)*bad, (size_t)(bad - text)));

    /* The scheme first, with our own words: libcurl knows dozens (file, gopher,
     * dict, ldap...), each one a way past an HTTP-only policy. */
    size_t sl = scheme_len(text);
    if (sl == 0)
        return fail_parse(out, NULL, why,
                          xstrdup("invalid URL: it must start with http:// or https://"));
    char *scheme = xstrndup(text, sl);
    for (char *p = scheme; *p; p++) *p = (char)tolower((unsigned char)*p);
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        char *msg = xasprintf("refused: only http:// and https:// URLs can be fetched, not '%s:'", scheme);
        free(scheme);
        return fail_parse(out, NULL, why, msg);
    }
    out->scheme = scheme;

    CURLU *u = curl_url();
    if (!u) return fail_parse(out, NULL, why, xstrdup("invalid URL: out of memory"));
    CURLUcode rc = curl_url_set(u, CURLUPART_URL, text, CURLU_URLENCODE);
    if (rc != CURLUE_OK)
        return fail_parse(out, u, why, xasprintf("invalid URL: %s", curl_url_strerror(rc)));

    /* "http://allowed.example@evil.example/" reads as allowed.example to a
     * person and goes to evil.example; credentials in a URL also leak into
     * logs. Neither has a use here. */
    if (has_part(u, CURLUPART_USER) || has_part(u, CURLUPART_PASSWORD) || has_part(u, CURLUPART_OPTIONS))
        return fail_parse(out, u, why,
                          xstrdup("refused: the URL contains credentials (user@host); remove them"));
    /* A zone picks an interface for a link-local address: never public. */
    if (has_part(u, CURLUPART_ZONEID))
        return fail_parse(out, u, why, xstrdup("refused: IPv6 zone identifiers are not allowed"));

    char *raw = NULL;
    if (curl_url_get(u, CURLUPART_HOST, &raw, 0) != CURLUE_OK || !raw || !*raw) {
        curl_free(raw);
        return fail_parse(out, u, why, xstrdup("invalid URL: it has no host"));
    }
    char *msg = NULL;
    if (raw[0] == '[') {
        /* An IPv6 literal: libcurl checked the syntax; canonicalise it. */
        size_t n = strlen(raw);
        char *inner = xstrndup(raw + 1, n >= 2 ? n - 2 : 0);
        if (!netaddr_parse(inner, &out->ip) || out->ip.family != AF_INET6) {
            msg = xasprintf("invalid URL: '%s' is not an IPv6 address", raw);
        } else {
            char txt[NETADDR_STRLEN];
            netaddr_format(&out->ip, txt);
            out->host = xstrdup(txt);
            out->is_ip = true;
        }
        free(inner);
    } else {
        norm_host(raw, &out->host, &out->is_ip, &out->ip, &msg);
    }
    curl_free(raw);
    if (msg) return fail_parse(out, u, why, msg);

    char *port = NULL;
    if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK || !port)
        return fail_parse(out, u, why, xstrdup("invalid URL: no port"));
    out->port = atoi(port);
    curl_free(port);
    if (out->port <= 0 || out->port > 65535)
        return fail_parse(out, u, why, xstrdup("invalid URL: port 0 cannot be reached"));

    /* Rebuild the URL around the host exactly as checked, so libcurl connects
     * to what was judged (it never sees "0x7f.1" or a Unicode host to
     * interpret on its own), and drop the fragment, which is never sent. */
    char *bracketed = out->is_ip && out->ip.family == AF_INET6 ? xasprintf("[%s]", out->host) : NULL;
    rc = curl_url_set(u, CURLUPART_HOST, bracketed ? bracketed : out->host, 0);
    free(bracketed);
    if (rc == CURLUE_OK) rc = curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    char *url = NULL;
    if (rc == CURLUE_OK) rc = curl_url_get(u, CURLUPART_URL, &url, 0);
    if (rc != CURLUE_OK || !url) {
        curl_free(url);
        return fail_parse(out, u, why, xasprintf("invalid URL: %s", curl_url_strerror(rc)));
    }
    out->url = xstrdup(url);
    curl_free(url);
    curl_url_cleanup(u);
    if (strlen(out->url) > FETCH_URL_MAX)
        return fail_parse(out, NULL, why,
                          xasprintf("invalid URL: it is longer than %d bytes once normalised", FETCH_URL_MAX));
    if (bad_byte(out->url)) /* cannot happen after URL-encoding; checked because it matters */
        return fail_parse(out, NULL, why, xstrdup("invalid URL: it contains a control character"));
    return true;
}

void fetch_url_free(fetch_url_t *u)
{
    free(u->url);
    free(u->scheme);
    free(u->host);
    memset(u, 0, sizeof *u);
}

char *fetch_url_resolve(const char *base, const char *location, char **why)
{
    *why = NULL;
    size_t n = strlen(location);
    if (n > FETCH_URL_MAX) {
        *why = xasprintf("the redirect location is %zu bytes long; the limit is %d", n, FETCH_URL_MAX);
        return NULL;
    }
    for (const char *p = location; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            *why = xstrdup("the redirect location contains a control character");
            return NULL;
        }
    /* A Location with a scheme is absolute: handed on as it is, so that
     * fetch_url_parse words the refusal of "file:" or "gopher:" itself. */
    if (scheme_len(location) > 0) return xstrdup(location);

    CURLU *u = curl_url();
    if (!u) {
        *why = xstrdup("out of memory");
        return NULL;
    }
    CURLUcode rc = curl_url_set(u, CURLUPART_URL, base, CURLU_URLENCODE);
    /* Setting a relative reference on a handle that holds a URL resolves it
     * (RFC 3986 §5); URLENCODE percent-encodes spaces and 8-bit bytes the way
     * libcurl does when it follows a redirect itself. */
    if (rc == CURLUE_OK) rc = curl_url_set(u, CURLUPART_URL, location, CURLU_URLENCODE);
    char *abs = NULL;
    if (rc == CURLUE_OK) rc = curl_url_get(u, CURLUPART_URL, &abs, 0);
    curl_url_cleanup(u);
    if (rc != CURLUE_OK || !abs) {
        curl_free(abs);
        char *q = fetch_url_quote(location);
        *why = xasprintf("the redirect location '%s' is not a valid URL (%s)", q, curl_url_strerror(rc));
        free(q);
        return NULL;
    }
    char *out = xstrdup(abs);
    curl_free(abs);
    return out;
}

/* The rules are the proxy's too (SPEC §15): one check, in netrefuse.c. */
char *fetch_addr_refusal(const char *host, const netaddr_t *a, bool is_literal, bool allow_private)
{
    return netrefuse_addr("session_fetch", host, a, is_literal, allow_private);
}

char *fetch_name_refusal(const char *host, bool allow_private)
{
    return netrefuse_name("session_fetch", host, allow_private);
}
