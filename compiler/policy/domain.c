/* domain.c — domain_allowlist entries, host normalisation and matching.
 *
 * One normal form for both sides: lower case, one trailing dot dropped, IDNA
 * A-labels made by the same libidn2 calls libcurl makes, IPv4 in any URL form
 * as a dotted quad, IPv6 as inet_ntop text. Matching is then a comparison of
 * whole labels; IP literals only ever match an identical IP entry.
 */
#include "domain.h"

#include <arpa/inet.h>
#include <idn2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "idn.h"

#define MAX_NAME 253   /* bytes in a name without its trailing dot */
#define MAX_LABEL 63
#define MAX_INPUT 4096 /* longer input is refused before any work */

/* ---- messages ------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (n bytes left) that is safe to print,
 * or 0: invalid bytes, C1 controls, zero-width and bidirectional controls are
 * escaped so that a message cannot hide or reorder what it shows. */
static size_t printable_seq(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp, min;
    if (s[0] >= 0x20 && s[0] < 0x7f) return 1;
    if ((s[0] & 0xE0) == 0xC0) len = 2, cp = s[0] & 0x1F, min = 0x80;
    else if ((s[0] & 0xF0) == 0xE0) len = 3, cp = s[0] & 0x0F, min = 0x800;
    else if ((s[0] & 0xF8) == 0xF0) len = 4, cp = s[0] & 0x07, min = 0x10000;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp < 0xA0 ||
        (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
        cp == 0xFEFF)
        return 0;
    return len;
}

/* s as shown inside a message: unsafe bytes as \xHH, clipped to about 80 bytes. */
static char *shown(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    buf_t b = BUF_INIT;
    size_t i = 0;
    while (i < n && b.len < 80) {
        size_t k = printable_seq(u + i, n - i);
        if (k) buf_add(&b, s + i, k), i += k;
        else buf_printf(&b, "\\x%02x", u[i++]);
    }
    if (i < n) buf_adds(&b, "...");
    return buf_detach(&b, NULL);
}

/* Sets *err (when err is not NULL) to the message; always returns false.
 * Formats use only %s, %d and %%; each %s argument is a heap string (from
 * shown()) that this frees, so call sites stay one line. */
__attribute__((format(printf, 2, 3))) static bool fail(char **err, const char *fmt, ...)
{
    va_list ap;
    if (err) {
        buf_t b = BUF_INIT;
        va_start(ap, fmt);
        buf_vprintf(&b, fmt, ap);
        va_end(ap);
        *err = buf_detach(&b, NULL);
    }
    va_start(ap, fmt);
    for (const char *f = fmt; (f = strchr(f, '%')); f += 2) {
        if (f[1] == 's') free(va_arg(ap, char *));
        else if (f[1] == 'd') (void)va_arg(ap, int);
    }
    va_end(ap);
    return false;
}

static char *shown_z(const char *s) { return shown(s, strlen(s)); }

/* ---- IPv4 in the forms URL parsers and inet_aton accept -------------------------- */

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* One part: decimal, 0x hex (may be empty after 0x) or 0-led octal. */
static bool v4_part(const char *s, size_t n, uint64_t *v)
{
    unsigned base = 10;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s += 2, n -= 2;
    else if (n >= 2 && s[0] == '0') base = 8, s++, n--;
    else if (!n) return false;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        int c = s[i], d = is_digit(c) ? c - '0' : ((c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : 99);
        if (d >= (int)base) return false;
        *v = *v * base + (unsigned)d;
        if (*v > 0xFFFFFFFFu) *v = (uint64_t)1 << 33; /* too big, and stays so */
    }
    return true;
}

/* WHATWG's "ends in a number": a last label of digits, or 0x and hex digits.
 * Such a host is an IPv4 address or nothing — never a name. */
static bool ends_in_number(const char *h, size_t n)
{
    size_t start = n;
    while (start && h[start - 1] != '.') start--;
    const char *l = h + start;
    size_t ln = n - start;
    if (!ln) return false;
    if (strspn(l, "0123456789") >= ln) return true;
    if (ln >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X')) {
        for (size_t i = 2; i < ln; i++)
            if (!is_hex(l[i])) return false;
        return true;
    }
    return false;
}

/* 1 to 4 parts, the last filling the remaining bytes ("127.1" is 127.0.0.1). */
static bool parse_v4(const char *h, size_t n, uint32_t *out)
{
    uint64_t part[4];
    size_t np = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && h[i] != '.') continue;
        if (np == 4 || !v4_part(h + start, i - start, &part[np])) return false;
        np++;
        start = i + 1;
    }
    for (size_t i = 0; i + 1 < np; i++)
        if (part[i] > 255) return false;
    uint64_t last = part[np - 1], limit = (uint64_t)1 << (8 * (5 - np));
    if (last >= limit) return false;
    uint32_t v = (uint32_t)last;
    for (size_t i = 0; i + 1 < np; i++) v |= (uint32_t)part[i] << (24 - 8 * i);
    *out = v;
    return true;
}

/* The canonical form: four decimal parts without leading zeros. */
static bool is_dotted_quad(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        unsigned v = 0;
        while (i < n && is_digit(s[i]) && i - start < 3) v = v * 10 + (unsigned)(s[i++] - '0');
        size_t len = i - start;
        if (!len || v > 255 || (len > 1 && s[start] == '0')) return false;
        if (++parts > 4) return false;
        if (i == n) break;
        if (s[i++] != '.' || i == n) return false;
    }
    return parts == 4;
}

/* IPv6 text (no brackets) to inet_ntop's canonical text in out. */
static bool parse_v6(const char *s, size_t n, char out[INET6_ADDRSTRLEN])
{
    char tmp[INET6_ADDRSTRLEN + 1];
    unsigned char a[16];
    if (n >= sizeof tmp) return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    return inet_pton(AF_INET6, tmp, a) == 1 && inet_ntop(AF_INET6, a, out, INET6_ADDRSTRLEN) != NULL;
}

bool domain_host_is_ip(const char *h)
{
    return h && (strchr(h, ':') || is_dotted_quad(h, strlen(h)));
}

/* ---- names ---------------------------------------------------------------------- */

static bool name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_' || c == '.';
}

/* Lower-case ASCII name: only letters, digits, '-', '_' and dots; labels of 1
 * to 63 bytes; at most 253 bytes. what is the host as written, for messages. */
static bool check_name(const char *name, const char *what, char **err)
{
    size_t n = strlen(name), label = 0;
    if (!n) return fail(err, "the host name is empty");
    if (n > MAX_NAME)
        return fail(err, "'%s' is longer than %d bytes, the most a host name can have", shown_z(what), MAX_NAME);
    for (size_t i = 0; i <= n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '.' || c == '\0') {
            if (!label) return fail(err, "'%s' has an empty label (two dots in a row, or a leading dot)", shown_z(what));
            if (label > MAX_LABEL)
                return fail(err, "'%s' has a label longer than %d bytes", shown_z(what), MAX_LABEL);
            label = 0;
        } else if (!name_char(c)) {
            return fail(err, "'%s' contains '%s', which a host name cannot have", shown_z(what), shown((const char *)&name[i], 1));
        } else {
            label++;
        }
    }
    return true;
}

/* Non-ASCII to A-labels with the calls libcurl (lib/idn.c) makes, so that the
 * name checked here is the name curl resolves: UTS#46 non-transitional first,
 * transitional when that fails. A different mapping would be a bypass:
 * transitional alone maps "straße.de" to "strasse.de" while curl goes to
 * "xn--strae-oqa.de", a different registrant. */
static bool idna(const char *in, char **out, char **err)
{
    const char *why;
    const idn_api_t *idn = idn_api(&why);
    if (!idn)
        return fail(err, "'%s' is an international domain name, and libidn2 cannot be loaded "
                         "to convert it (%s)",
                    shown_z(in), shown_z(why));
    uint8_t *ace = NULL;
    int rc = idn->lookup_u8((const uint8_t *)in, &ace, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) rc = idn->lookup_u8((const uint8_t *)in, &ace, IDN2_TRANSITIONAL);
    if (rc != IDN2_OK)
        return fail(err, "'%s' is not a valid international domain name (%s)", shown_z(in),
                    shown_z(idn->strerror(rc)));
    *out = xstrdup((const char *)ace);
    idn->free(ace);
    return true;
}

static bool has_space_or_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || *s == 0x7f) return true;
    return false;
}

/* Canonical text of an IPv4 or IPv6 address written inside a name position. */
static char *v4_text(uint32_t v)
{
    return xasprintf("%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255);
}

/* A name (no ':' or brackets): lower case, trailing dot, IPv4 forms, IDNA. */
static bool normalize_name(const char *host, char **out, char **err)
{
    size_t n = strlen(host);
    char *low = xstrndup(host, n);
    bool ascii = true;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)low[i] >= 0x80) ascii = false;
        else if (low[i] >= 'A' && low[i] <= 'Z') low[i] = (char)(low[i] + 32);
    }
    if (n && low[n - 1] == '.') low[--n] = '\0'; /* one trailing dot: the same name */
    char *name = NULL;
    if (ascii) name = low, low = NULL;
    else if (!idna(low, &name, err)) {
        free(low);
        return false;
    }
    free(low);
    /* A last label that is a number makes an IPv4 address or nothing, before
     * IDNA and after it ("１２７.0.0.1" becomes 127.0.0.1 on the way to DNS). */
    size_t m = strlen(name);
    uint32_t v4;
    if (m && ends_in_number(name, m)) {
        bool ok = parse_v4(name, m, &v4);
        free(name);
        if (!ok) return fail(err, "'%s' ends in a number but is not a valid IPv4 address", shown_z(host));
        *out = v4_text(v4);
        return true;
    }
    if (!check_name(name, host, err)) {
        free(name);
        return false;
    }
    *out = name;
    return true;
}

bool domain_host_normalize(const char *host, char **out, char **err)
{
    char v6[INET6_ADDRSTRLEN];
    *out = NULL;
    if (!host || !*host) return fail(err, "the host is empty");
    size_t n = strlen(host);
    if (n > MAX_INPUT) return fail(err, "the host is longer than %d bytes", MAX_INPUT);
    if (has_space_or_control(host)) return fail(err, "'%s' contains a space or control character", shown_z(host));
    if (host[0] == '[') {
        if (host[n - 1] != ']' || !parse_v6(host + 1, n - 2, v6))
            return fail(err, "'%s' is not a valid bracketed IPv6 address (a zone such as %%eth0 is not supported)",
                        shown_z(host));
        *out = xstrdup(v6);
        return true;
    }
    if (strchr(host, ':')) {
        if (!parse_v6(host, n, v6))
            return fail(err, "'%s' is neither a host name nor an IPv6 address (':' only appears in IPv6 addresses)",
                        shown_z(host));
        *out = xstrdup(v6);
        return true;
    }
    return normalize_name(host, out, err);
}

/* ---- entries --------------------------------------------------------------------- */

/* The host part of "[user@]host[:port][/path]" (a copy), for "write X instead". */
static char *host_part(const char *s)
{
    size_t n = strcspn(s, "/?#");
    const char *at = memrchr(s, '@', n);
    if (at) n -= (size_t)(at + 1 - s), s = at + 1;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (close) n = (size_t)(close - s) + 1;
    } else {
        const char *colon = memchr(s, ':', n);
        if (colon && !memchr(colon + 1, ':', n - (size_t)(colon + 1 - s))) n = (size_t)(colon - s);
    }
    return n ? shown(s, n) : xstrdup("example.com");
}

static bool is_port_suffix(const char *s)
{
    return strspn(s, "0123456789") == strlen(s);
}

/* A message when the entry is written as (part of) a URL; NULL otherwise. */
static char *url_problem(const char *e)
{
    static const char *const schemes[] = {"http:", "https:", "ftp:", "ws:", "wss:", "file:", NULL};
    char *w = NULL, *h = NULL;
    const char *sep = strstr(e, "://");
    bool scheme = sep != NULL;
    for (size_t i = 0; !scheme && schemes[i]; i++)
        scheme = !strncasecmp(e, schemes[i], strlen(schemes[i]));
    if (scheme) {
        const char *rest = sep ? sep + 3 : strchr(e, ':') + 1;
        while (*rest == '/') rest++;
        w = shown_z(e), h = host_part(rest);
        char *m = xasprintf("'%s' is a URL; an entry is a host name only: write '%s'", w, h);
        free(w), free(h);
        return m;
    }
    const char *fmt = NULL;
    size_t path = strcspn(e, "/?#");
    const char *bracket = e[0] == '[' ? strchr(e, ']') : NULL;
    if (memchr(e, '@', path)) fmt = "'%s' has a user name; an entry is a host name only: write '%s'";
    else if (e[path]) fmt = "'%s' has a path; an entry is a host name only: write '%s'";
    else if (bracket && bracket[1] == ':')
        fmt = "'%s' has a port; an entry is a host name and matches every port: write '%s'";
    else if (!bracket && strchr(e, ':') && strchr(e, ':') == strrchr(e, ':') && is_port_suffix(strchr(e, ':') + 1))
        fmt = "'%s' has a port; an entry is a host name and matches every port: write '%s'";
    if (!fmt) return NULL;
    w = shown_z(e), h = host_part(e);
    char *m = xasprintf(fmt, w, h);
    free(w), free(h);
    return m;
}

bool domain_entry_parse(const char *entry, domain_entry_t *out, char **err)
{
    char *norm = NULL, *e2 = NULL;
    memset(out, 0, sizeof *out);
    if (err) *err = NULL;
    if (!entry || !*entry) return fail(err, "the entry is empty; write a host name such as 'example.com' or '*.example.com'");
    char *url = url_problem(entry);
    if (url) {
        if (err) *err = url;
        else free(url);
        return false;
    }
    if (has_space_or_control(entry))
        return fail(err, "'%s' contains a space or control character; write the host name alone, such as 'example.com'",
                    shown_z(entry));
    if (!strcmp(entry, "*")) {
        out->kind = DOMAIN_ALL;
        out->pattern = xstrdup("*");
        return true;
    }
    bool wild = !strncmp(entry, "*.", 2);
    const char *base = wild ? entry + 2 : entry;
    if (wild && !*base) return fail(err, "'*.' needs a name after it, such as '*.example.com'");
    if (strchr(base, '*'))
        return fail(err, "'%s' has '*' inside a name; write '*.example.com' for every subdomain of example.com, or '*' "
                         "alone for every host",
                    shown_z(entry));
    if (!domain_host_normalize(base, &norm, &e2)) {
        bool ok = fail(err, "%s", e2 ? e2 : xstrdup("invalid host"));
        return ok;
    }
    bool ip = domain_host_is_ip(norm);
    if (wild && ip) {
        free(norm);
        return fail(err, "'%s' puts a wildcard over IP addresses; list each address instead (an IP entry matches only "
                         "that address)",
                    shown_z(entry));
    }
    out->kind = wild ? DOMAIN_SUBDOMAINS : (ip ? DOMAIN_IP : DOMAIN_EXACT);
    out->pattern = norm;
    return true;
}

void domain_entry_free(domain_entry_t *e)
{
    if (!e) return;
    free(e->pattern);
    e->pattern = NULL;
}

/* ---- matching -------------------------------------------------------------------- */

/* A domain_host_normalize result: nothing but lower-case name characters (names) or
 * hex digits, ':' and '.' (IPv6), and a numeric last label only in a dotted quad. */
static bool normal_form(const char *h, size_t n)
{
    if (!n) return false;
    if (memchr(h, ':', n)) {
        for (size_t i = 0; i < n; i++)
            if (!is_hex(h[i]) && h[i] != ':' && h[i] != '.') return false;
        return true;
    }
    for (size_t i = 0; i < n; i++)
        if (!name_char((unsigned char)h[i])) return false;
    return !ends_in_number(h, n) || is_dotted_quad(h, n);
}

bool domain_match(const domain_entry_t *e, const char *h)
{
    if (!e || !e->pattern || !h) return false;
    size_t n = strlen(h), pn = strlen(e->pattern);
    if (n && h[n - 1] == '.' && !memchr(h, ':', n)) n--; /* tolerate the one trailing dot */
    if (!normal_form(h, n)) return false;
    bool ip = memchr(h, ':', n) || is_dotted_quad(h, n);
    switch (e->kind) {
    case DOMAIN_ALL:
        /* Every name, no address: "*" must not open 169.254.169.254 by number. */
        return !ip;
    case DOMAIN_EXACT:
        return !ip && n == pn && !memcmp(h, e->pattern, n);
    case DOMAIN_SUBDOMAINS:
        /* A whole label boundary, and at least one label more than the base. */
        return !ip && n > pn + 1 && h[n - pn - 1] == '.' && !memcmp(h + n - pn, e->pattern, pn);
    case DOMAIN_IP:
        return ip && n == pn && !memcmp(h, e->pattern, n);
    default:
        return false;
    }
}

/* ---- lint ------------------------------------------------------------------------- */

/* Multi-label public suffixes, from the Public Suffix List: the ICANN ones most
 * often met and the shared-hosting ones where anybody can get a subdomain. A
 * single-label base ("*.com", "*.io") is a suffix without any list. */
/* clang-format off */
static const char *const public_suffixes[] = {
    "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk", "sch.uk", "nhs.uk",
    "com.au", "net.au", "org.au", "edu.au", "gov.au", "id.au", "co.nz", "org.nz", "net.nz", "govt.nz",
    "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp", "co.kr", "or.kr", "com.cn", "net.cn", "org.cn", "gov.cn",
    "com.tw", "org.tw", "com.hk", "com.sg", "com.my", "co.in", "net.in", "org.in", "ac.in", "gov.in",
    "co.za", "org.za", "com.br", "net.br", "org.br", "gov.br", "com.mx", "gob.mx", "com.ar", "com.tr",
    "co.il", "org.il", "com.ua", "co.id", "or.id", "com.ph", "com.vn", "com.pk", "com.ng", "co.ke",
    "com.eg", "com.sa", "com.co", "com.pe", "eu.org",
    "github.io", "githubusercontent.com", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com",
    "cloudfront.net", "amazonaws.com", "s3.amazonaws.com", "azurewebsites.net", "cloudapp.net",
    "web.app", "firebaseapp.com", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "fly.dev",
    "onrender.com", "repl.co", "glitch.me", "ngrok.io", "ngrok-free.app", "trycloudflare.com",
    "duckdns.org", "no-ip.org", "readthedocs.io", NULL,
};
/* clang-format on */

domain_lint_t domain_entry_lint(const domain_entry_t *e)
{
    if (!e || !e->pattern) return DOMAIN_OK;
    if (e->kind == DOMAIN_ALL) return DOMAIN_WARN_ALL;
    if (e->kind != DOMAIN_SUBDOMAINS) return DOMAIN_OK;
    if (!strchr(e->pattern, '.')) return DOMAIN_WARN_SUFFIX;
    for (const char *const *s = public_suffixes; *s; s++)
        if (!strcmp(e->pattern, *s)) return DOMAIN_WARN_SUFFIX;
    return DOMAIN_OK;
}

domain_lint_t domain_text_lint(const char *entry, char **why)
{
    if (why) *why = NULL;
    if (!entry) return DOMAIN_OK;
    char *url = url_problem(entry);
    if (url) {
        if (why) *why = url;
        else free(url);
        return DOMAIN_WARN_URL;
    }
    domain_entry_t e;
    if (!domain_entry_parse(entry, &e, NULL)) return DOMAIN_OK;
    domain_lint_t c = domain_entry_lint(&e);
    if (why && c == DOMAIN_WARN_ALL)
        *why = xstrdup("'*' lets session_fetch reach every host name; list the hosts it needs instead");
    else if (why && c == DOMAIN_WARN_SUFFIX)
        *why = xasprintf("'*.%s' covers a public suffix, so any site registered under it matches; list the sites it "
                         "needs instead",
                         e.pattern);
    domain_entry_free(&e);
    return c;
}
