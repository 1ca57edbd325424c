/* netaddr.h — which IP addresses and host names session_fetch may reach: a pure
 * classifier (no I/O, no allocation) sorting an address into public or one of the
 * special-purpose ranges refused unless [network] allow_private_addresses is set.
 * In the library so that the runtime, explain and the unit tests share one table. */
#ifndef DRUN_NETADDR_H
#define DRUN_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sockaddr;

typedef enum {
    NETADDR_PUBLIC = 0,    /* globally routable: the only class reachable by default */
    NETADDR_UNSPECIFIED,   /* 0.0.0.0/8, :: */
    NETADDR_LOOPBACK,      /* 127/8, ::1 */
    NETADDR_PRIVATE,       /* RFC 1918: 10/8, 172.16/12, 192.168/16 */
    NETADDR_SHARED,        /* 100.64/10 carrier-grade NAT (and Alibaba's metadata) */
    NETADDR_LINK_LOCAL,    /* 169.254/16, fe80::/10 */
    NETADDR_METADATA,      /* 169.254.169.254, fd00:ec2::254: cloud instance metadata */
    NETADDR_ULA,           /* fc00::/7 unique local */
    NETADDR_SITE_LOCAL,    /* fec0::/10 (deprecated) */
    NETADDR_MULTICAST,     /* 224/4, ff00::/8 */
    NETADDR_BROADCAST,     /* 255.255.255.255 */
    NETADDR_RESERVED,      /* 240/4, 192.0.0/24, IPv6 outside 2000::/3, Teredo, ORCHID, ... */
    NETADDR_BENCHMARK,     /* 198.18/15, 2001:2::/48 */
    NETADDR_DOCUMENTATION, /* 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20 */
    NETADDR_CLASS_COUNT
} netaddr_class_t;

/* One address, either family, in network byte order. */
typedef struct netaddr {
    int family;    /* AF_INET or AF_INET6 */
    uint8_t b[16]; /* AF_INET: b[0..3]; AF_INET6: all 16 */
} netaddr_t;

#define NETADDR_STRLEN 46 /* INET6_ADDRSTRLEN: room for any formatted address + NUL */

/* The class of a; for IPv6 forms that embed an IPv4 address (IPv4-mapped
 * ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) the class of the embedded address, because that is where the
 * packets go. *embedded (may be NULL) is set to true when that happened. */
netaddr_class_t netaddr_classify(const netaddr_t *a, bool *embedded);

/* The class of an IPv4 address given as a host-order integer. */
netaddr_class_t netaddr_classify_v4(uint32_t v4);

/* A short noun phrase for the class ("loopback", "private (RFC 1918)"); static. */
const char *netaddr_class_name(netaddr_class_t c);

/* Parses an address in canonical text: a dotted quad of four decimal parts
 * (no leading zeros) or an IPv6 address without brackets or zone. */
bool netaddr_parse(const char *s, netaddr_t *out);

/* Parses the IPv4 forms that URL parsers and inet_aton(3) accept — 1 to 4
 * parts, each decimal, octal (leading 0) or hex (0x), the last filling the
 * remaining bytes: "2130706433", "0x7f.1", "0177.0.0.1", "127.1". Returns false
 * for anything else, including values past 32 bits. s is len bytes. */
bool netaddr_parse_v4_any(const char *s, size_t len, uint32_t *out);

/* Writes the canonical text of a (dotted quad, RFC 5952 IPv6) into out. */
void netaddr_format(const netaddr_t *a, char out[NETADDR_STRLEN]);

/* Reads an AF_INET/AF_INET6 sockaddr; false for any other family or a short len. */
bool netaddr_from_sockaddr(const struct sockaddr *sa, size_t len, netaddr_t *out);

/* Wraps a host-order IPv4 address. */
netaddr_t netaddr_v4(uint32_t v4);

/* True when a and b are the same address (an IPv4 address and its
 * IPv4-mapped IPv6 form are the same address). */
bool netaddr_equal(const netaddr_t *a, const netaddr_t *b);

/* When host (lower-case, no trailing dot) is a name that only ever means a
 * local or cloud-internal service — "localhost" and *.localhost, the instance
 * metadata names, *.internal, *.local, *.home.arpa — returns why, a static
 * phrase; else NULL. Checked before any DNS lookup so that a resolver
 * configured to answer such names never gets the chance. */
const char *netaddr_local_name(const char *host);

#endif
