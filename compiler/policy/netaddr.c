/* netaddr.c — the special-purpose address table behind session_fetch's SSRF guard.
 *
 * IPv4 is a deny table over the IANA special-purpose registry; IPv6 is an allow
 * rule (global unicast 2000::/3 only) with the IPv4-embedding forms unwrapped
 * first, so a private IPv4 address cannot hide inside an IPv6 one.
 */
#include "netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* ---- IPv4 -------------------------------------------------------------------------- */

typedef struct v4_range {
    uint32_t net; /* host order */
    int bits;     /* prefix length */
    netaddr_class_t cls;
} v4_range_t;

/* Most specific first: the first match wins. */
static const v4_range_t v4_table[] = {
    /* Cloud instance metadata: AWS/GCP/Azure/OCI 169.254.169.254, AWS ECS task
     * metadata 169.254.170.2, Alibaba 100.100.100.200. Named separately so the
     * error says what the address really is. */
    {0xA9FEA9FE, 32, NETADDR_METADATA},      /* 169.254.169.254 */
    {0xA9FEAA02, 32, NETADDR_METADATA},      /* 169.254.170.2 */
    {0x646464C8, 32, NETADDR_METADATA},      /* 100.100.100.200 */
    {0x00000000, 8, NETADDR_UNSPECIFIED},    /* 0.0.0.0/8 "this network": Linux connects it to loopback */
    {0x0A000000, 8, NETADDR_PRIVATE},        /* 10/8 */
    {0x64400000, 10, NETADDR_SHARED},        /* 100.64/10 CGNAT */
    {0x7F000000, 8, NETADDR_LOOPBACK},       /* 127/8 */
    {0xA9FE0000, 16, NETADDR_LINK_LOCAL},    /* 169.254/16 */
    {0xAC100000, 12, NETADDR_PRIVATE},       /* 172.16/12 */
    {0xC0000000, 24, NETADDR_RESERVED},      /* 192.0.0/24 IETF protocol assignments */
    {0xC0000200, 24, NETADDR_DOCUMENTATION}, /* 192.0.2/24 TEST-NET-1 */
    {0xC0586300, 24, NETADDR_RESERVED},      /* 192.88.99/24 6to4 relay anycast (deprecated) */
    {0xC0A80000, 16, NETADDR_PRIVATE},       /* 192.168/16 */
    {0xC6120000, 15, NETADDR_BENCHMARK},     /* 198.18/15 */
    {0xC6336400, 24, NETADDR_DOCUMENTATION}, /* 198.51.100/24 TEST-NET-2 */
    {0xCB007100, 24, NETADDR_DOCUMENTATION}, /* 203.0.113/24 TEST-NET-3 */
    {0xE0000000, 4, NETADDR_MULTICAST},      /* 224/4 */
    {0xFFFFFFFF, 32, NETADDR_BROADCAST},     /* limited broadcast */
    {0xF0000000, 4, NETADDR_RESERVED},       /* 240/4 future use */
};

static bool v4_in(uint32_t a, uint32_t net, int bits)
{
    uint32_t mask = bits == 0 ? 0 : 0xFFFFFFFFu << (32 - bits);
    return (a & mask) == (net & mask);
}

netaddr_class_t netaddr_classify_v4(uint32_t v4)
{
    for (size_t i = 0; i < sizeof v4_table / sizeof v4_table[0]; i++)
        if (v4_in(v4, v4_table[i].net, v4_table[i].bits)) return v4_table[i].cls;
    return NETADDR_PUBLIC;
}

/* ---- IPv6 -------------------------------------------------------------------------- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* True when the first bits of a equal those of the prefix p (bytes). */
static bool v6_in(const uint8_t *a, const uint8_t *p, int bits)
{
    int full = bits / 8, rest = bits % 8;
    if (memcmp(a, p, (size_t)full) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = (uint8_t)(0xFF << (8 - rest));
    return (a[full] & mask) == (p[full] & mask);
}

static const uint8_t P_ZERO96[12] = {0};
static const uint8_t P_MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
static const uint8_t P_TRANSLATED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0};
static const uint8_t P_NAT64[12] = {0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};
static const uint8_t P_6TO4[2] = {0x20, 0x02};
static const uint8_t P_AWS_METADATA[16] = {0xFD, 0x00, 0x0E, 0xC2, 0, 0, 0, 0,
                                           0, 0, 0, 0, 0, 0, 0x02, 0x54};

typedef struct v6_range {
    uint8_t p[16];
    int bits;
    netaddr_class_t cls;
} v6_range_t;

/* Checked after the IPv4-embedding forms; the first match wins. Whatever
 * matches none of these and lies outside 2000::/3 is reserved. */
static const v6_range_t v6_table[] = {
    {{0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01}, 48, NETADDR_RESERVED},  /* 64:ff9b:1::/48 local-use NAT64 */
    {{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48, NETADDR_BENCHMARK}, /* 2001:2::/48 */
    {{0x20, 0x01, 0x0D, 0xB8}, 32, NETADDR_DOCUMENTATION},         /* 2001:db8::/32 */
    /* 2001::/23 IETF protocol assignments: Teredo 2001::/32 (whose embedded
     * client address is obfuscated, so it cannot be checked), ORCHID, AMT...
     * Nothing serves web content from there. */
    {{0x20, 0x01, 0x00}, 23, NETADDR_RESERVED},
    {{0x3F, 0xFF, 0x00}, 20, NETADDR_DOCUMENTATION}, /* 3fff::/20 (RFC 9637) */
    {{0x5F, 0x00}, 16, NETADDR_RESERVED},            /* 5f00::/16 SRv6 SIDs */
    {{0xFC}, 7, NETADDR_ULA},                        /* fc00::/7 */
    {{0xFE, 0x80}, 10, NETADDR_LINK_LOCAL},          /* fe80::/10 */
    {{0xFE, 0xC0}, 10, NETADDR_SITE_LOCAL},          /* fec0::/10 */
    {{0xFF}, 8, NETADDR_MULTICAST},                  /* ff00::/8 */
};

static netaddr_class_t classify_v6(const uint8_t *a, bool *embedded)
{
    static const uint8_t zero[16] = {0};
    if (memcmp(a, zero, 16) == 0) return NETADDR_UNSPECIFIED;
    if (memcmp(a, zero, 15) == 0 && a[15] == 1) return NETADDR_LOOPBACK;

    /* Forms whose packets go to an IPv4 address: judge that address. A
     * dual-stack socket connecting to ::ffff:127.0.0.1 reaches loopback. */
    if (memcmp(a, P_MAPPED, 12) == 0 || memcmp(a, P_TRANSLATED, 12) == 0 ||
        memcmp(a, P_NAT64, 12) == 0) {
        *embedded = true;
        return netaddr_classify_v4(be32(a + 12));
    }
    if (memcmp(a, P_6TO4, 2) == 0) {
        *embedded = true;
        return netaddr_classify_v4(be32(a + 2));
    }
    /* IPv4-compatible ::a.b.c.d (deprecated by RFC 4291): judged by the
     * embedded address when that one is special, reserved otherwise. */
    if (memcmp(a, P_ZERO96, 12) == 0) {
        netaddr_class_t c = netaddr_classify_v4(be32(a + 12));
        if (c != NETADDR_PUBLIC) {
            *embedded = true;
            return c;
        }
        return NETADDR_RESERVED;
    }
    if (memcmp(a, P_AWS_METADATA, 16) == 0) return NETADDR_METADATA;
    for (size_t i = 0; i < sizeof v6_table / sizeof v6_table[0]; i++)
        if (v6_in(a, v6_table[i].p, v6_table[i].bits)) return v6_table[i].cls;
    /* Only global unicast is routable on the internet: an allow rule, so a
     * range IANA assigns later is refused until someone looks at it. */
    if ((a[0] & 0xE0) != 0x20) return NETADDR_RESERVED;
    return NETADDR_PUBLIC;
}

netaddr_class_t netaddr_classify(const netaddr_t *a, bool *embedded)
{
    bool dummy = false;
    if (!embedded) embedded = &dummy;
    *embedded = false;
    if (a->family == AF_INET) return netaddr_classify_v4(be32(a->b));
    if (a->family == AF_INET6) return classify_v6(a->b, embedded);
    return NETADDR_RESERVED;
}

const char *netaddr_class_name(netaddr_class_t c)
{
    switch (c) {
    case NETADDR_PUBLIC: return "public";
    case NETADDR_UNSPECIFIED: return "unspecified (this-host)";
    case NETADDR_LOOPBACK: return "loopback";
    case NETADDR_PRIVATE: return "private (RFC 1918)";
    case NETADDR_SHARED: return "carrier-grade NAT (RFC 6598)";
    case NETADDR_LINK_LOCAL: return "link-local";
    case NETADDR_METADATA: return "cloud instance metadata";
    case NETADDR_ULA: return "unique local (RFC 4193)";
    case NETADDR_SITE_LOCAL: return "site-local";
    case NETADDR_MULTICAST: return "multicast";
    case NETADDR_BROADCAST: return "broadcast";
    case NETADDR_RESERVED: return "reserved";
    case NETADDR_BENCHMARK: return "benchmarking (RFC 2544)";
    case NETADDR_DOCUMENTATION: return "documentation-only";
    case NETADDR_CLASS_COUNT: break;
    }
    return "unknown";
}

/* ---- parsing and formatting -------------------------------------------------------- */

bool netaddr_parse(const char *s, netaddr_t *out)
{
    memset(out, 0, sizeof *out);
    if (inet_pton(AF_INET, s, out->b) == 1) {
        out->family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, s, out->b) == 1) {
        out->family = AF_INET6;
        return true;
    }
    return false;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One part of a legacy IPv4 address; false on a bad digit or past 32 bits. */
static bool v4_part(const char *s, size_t n, uint64_t *v)
{
    int base = 10;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0') {
        base = 8;
        s++;
        n--;
    }
    if (n == 0) return false;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hexval(s[i]);
        if (d < 0 || d >= base) return false;
        *v = *v * (uint64_t)base + (uint64_t)d;
        if (*v > 0xFFFFFFFFu) return false;
    }
    return true;
}

bool netaddr_parse_v4_any(const char *s, size_t len, uint32_t *out)
{
    uint64_t part[4];
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') continue;
        if (n == 4 || !v4_part(s + start, i - start, &part[n])) return false;
        n++;
        start = i + 1;
    }
    if (n == 0) return false;
    uint64_t v = 0;
    for (int i = 0; i < n - 1; i++) {
        if (part[i] > 255) return false;
        v |= part[i] << (8 * (3 - i));
    }
    /* The last part fills the bytes that remain: 32, 24, 16 or 8 bits. */
    int rest_bits = 8 * (4 - (n - 1));
    if (rest_bits < 32 && part[n - 1] >> rest_bits) return false;
    v |= part[n - 1];
    *out = (uint32_t)v;
    return true;
}

void netaddr_format(const netaddr_t *a, char out[NETADDR_STRLEN])
{
    if (!inet_ntop(a->family, a->b, out, NETADDR_STRLEN)) strcpy(out, "?");
}

bool netaddr_from_sockaddr(const struct sockaddr *sa, size_t len, netaddr_t *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        out->family = AF_INET;
        memcpy(out->b, &in->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        out->family = AF_INET6;
        memcpy(out->b, &in6->sin6_addr, 16);
        return true;
    }
    return false;
}

netaddr_t netaddr_v4(uint32_t v4)
{
    netaddr_t a = {.family = AF_INET};
    a.b[0] = (uint8_t)(v4 >> 24);
    a.b[1] = (uint8_t)(v4 >> 16);
    a.b[2] = (uint8_t)(v4 >> 8);
    a.b[3] = (uint8_t)v4;
    return a;
}

/* The 16-byte form: IPv4 becomes ::ffff:a.b.c.d. */
static void as_v6(const netaddr_t *a, uint8_t out[16])
{
    if (a->family == AF_INET) {
        memcpy(out, P_MAPPED, 12);
        memcpy(out + 12, a->b, 4);
    } else {
        memcpy(out, a->b, 16);
    }
}

bool netaddr_equal(const netaddr_t *a, const netaddr_t *b)
{
    if ((a->family != AF_INET && a->family != AF_INET6) ||
        (b->family != AF_INET && b->family != AF_INET6))
        return false;
    uint8_t x[16], y[16];
    as_v6(a, x);
    as_v6(b, y);
    return memcmp(x, y, 16) == 0;
}

/* ---- names ------------------------------------------------------------------------- */

static bool ends_with_label(const char *host, const char *suffix)
{
    size_t h = strlen(host), s = strlen(suffix);
    if (h == s) return strcmp(host, suffix) == 0;
    return h > s && host[h - s - 1] == '.' && strcmp(host + h - s, suffix) == 0;
}

const char *netaddr_local_name(const char *host)
{
    static const struct {
        const char *name;
        const char *why;
    } exact[] = {
        {"metadata", "a cloud instance metadata name"},
        {"metadata.goog", "a cloud instance metadata name"},
        {"instance-data", "a cloud instance metadata name"},
        {"localhost.localdomain", "a loopback name"},
        {"ip6-localhost", "a loopback name"},
        {"ip6-loopback", "a loopback name"},
    };
    /* Whole reserved namespaces (RFC 6761 .localhost, ICANN's private-use
     * .internal — metadata.google.internal, *.ec2.internal —, mDNS .local,
     * RFC 8375 .home.arpa): a name there is never a public site. */
    static const struct {
        const char *suffix;
        const char *why;
    } suffixes[] = {
        {"localhost", "a loopback name"},
        {"internal", "a private-use name (.internal, incl. cloud metadata)"},
        {"local", "a link-local (mDNS) name"},
        {"localdomain", "a private-use name (.localdomain)"},
        {"home.arpa", "a private-use name (.home.arpa)"},
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(host, exact[i].name) == 0) return exact[i].why;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (ends_with_label(host, suffixes[i].suffix)) return suffixes[i].why;
    return NULL;
}
