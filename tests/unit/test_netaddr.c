/* test_netaddr.c — the SSRF address classifier: every range at its edges, the
 * IPv4-in-IPv6 disguises, the legacy IPv4 spellings and the local-only names. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "netaddr.h"
#include "tap.h"

typedef struct {
    const char *addr;
    netaddr_class_t cls;
} case_t;

static const case_t cases[] = {
    /* unspecified / this network */
    {"0.0.0.0", NETADDR_UNSPECIFIED},
    {"0.255.255.255", NETADDR_UNSPECIFIED},
    {"1.0.0.0", NETADDR_PUBLIC},
    {"::", NETADDR_UNSPECIFIED},
    /* loopback */
    {"127.0.0.1", NETADDR_LOOPBACK},
    {"127.0.0.0", NETADDR_LOOPBACK},
    {"127.255.255.255", NETADDR_LOOPBACK},
    {"126.255.255.255", NETADDR_PUBLIC},
    {"128.0.0.0", NETADDR_PUBLIC},
    {"::1", NETADDR_LOOPBACK},
    {"::2", NETADDR_UNSPECIFIED}, /* IPv4-compatible ::0.0.0.2 */
    /* RFC 1918 */
    {"10.0.0.0", NETADDR_PRIVATE},
    {"10.255.255.255", NETADDR_PRIVATE},
    {"9.255.255.255", NETADDR_PUBLIC},
    {"11.0.0.0", NETADDR_PUBLIC},
    {"172.16.0.0", NETADDR_PRIVATE},
    {"172.31.255.255", NETADDR_PRIVATE},
    {"172.15.255.255", NETADDR_PUBLIC},
    {"172.32.0.0", NETADDR_PUBLIC},
    {"192.168.0.0", NETADDR_PRIVATE},
    {"192.168.255.255", NETADDR_PRIVATE},
    {"192.167.255.255", NETADDR_PUBLIC},
    {"192.169.0.0", NETADDR_PUBLIC},
    /* CGNAT */
    {"100.64.0.0", NETADDR_SHARED},
    {"100.127.255.255", NETADDR_SHARED},
    {"100.63.255.255", NETADDR_PUBLIC},
    {"100.128.0.0", NETADDR_PUBLIC},
    {"100.100.100.200", NETADDR_METADATA},
    /* link-local and metadata */
    {"169.254.0.0", NETADDR_LINK_LOCAL},
    {"169.254.255.255", NETADDR_LINK_LOCAL},
    {"169.254.169.254", NETADDR_METADATA},
    {"169.254.169.253", NETADDR_LINK_LOCAL},
    {"169.254.170.2", NETADDR_METADATA},
    {"169.253.255.255", NETADDR_PUBLIC},
    {"169.255.0.0", NETADDR_PUBLIC},
    {"fe80::", NETADDR_LINK_LOCAL},
    {"fe80::1", NETADDR_LINK_LOCAL},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NETADDR_LINK_LOCAL},
    {"fd00:ec2::254", NETADDR_METADATA},
    /* IETF, documentation, benchmark, 6to4 relay */
    {"192.0.0.0", NETADDR_RESERVED},
    {"192.0.0.255", NETADDR_RESERVED},
    {"192.0.1.0", NETADDR_PUBLIC},
    {"192.0.2.0", NETADDR_DOCUMENTATION},
    {"192.0.2.255", NETADDR_DOCUMENTATION},
    {"192.0.3.0", NETADDR_PUBLIC},
    {"198.51.100.7", NETADDR_DOCUMENTATION},
    {"203.0.113.255", NETADDR_DOCUMENTATION},
    {"203.0.114.0", NETADDR_PUBLIC},
    {"192.88.99.1", NETADDR_RESERVED},
    {"198.18.0.0", NETADDR_BENCHMARK},
    {"198.19.255.255", NETADDR_BENCHMARK},
    {"198.17.255.255", NETADDR_PUBLIC},
    {"198.20.0.0", NETADDR_PUBLIC},
    /* multicast, reserved, broadcast */
    {"224.0.0.0", NETADDR_MULTICAST},
    {"239.255.255.255", NETADDR_MULTICAST},
    {"223.255.255.255", NETADDR_PUBLIC},
    {"240.0.0.0", NETADDR_RESERVED},
    {"254.255.255.255", NETADDR_RESERVED},
    {"255.255.255.254", NETADDR_RESERVED},
    {"255.255.255.255", NETADDR_BROADCAST},
    /* ordinary public */
    {"8.8.8.8", NETADDR_PUBLIC},
    {"93.184.216.34", NETADDR_PUBLIC},
    {"2606:4700::1111", NETADDR_PUBLIC},
    {"2a00:1450:4001:82b::200e", NETADDR_PUBLIC},
    {"2000::", NETADDR_PUBLIC},
    {"3ffe:ffff::1", NETADDR_PUBLIC},
    /* IPv6 special ranges */
    {"fc00::", NETADDR_ULA},
    {"fdff:ffff::1", NETADDR_ULA},
    {"fbff:ffff::1", NETADDR_RESERVED},
    {"fec0::1", NETADDR_SITE_LOCAL},
    {"ff02::1", NETADDR_MULTICAST},
    {"ff00::", NETADDR_MULTICAST},
    {"2001:db8::1", NETADDR_DOCUMENTATION},
    {"2001:db9::1", NETADDR_PUBLIC},
    {"3fff::1", NETADDR_DOCUMENTATION},
    {"3fff:0fff::1", NETADDR_DOCUMENTATION},
    {"3fff:1000::1", NETADDR_PUBLIC},
    {"2001:2::1", NETADDR_BENCHMARK},
    {"2001::1", NETADDR_RESERVED},          /* Teredo */
    {"2001:10::1", NETADDR_RESERVED},       /* ORCHID */
    {"2001:1ff:ffff::1", NETADDR_RESERVED}, /* last of 2001::/23 */
    {"2001:200::1", NETADDR_PUBLIC},        /* first after it */
    {"100::1", NETADDR_RESERVED},           /* discard-only */
    {"5f00::1", NETADDR_RESERVED},
    {"4000::1", NETADDR_RESERVED},          /* outside 2000::/3 */
    {"1fff:ffff::1", NETADDR_RESERVED},
    /* IPv4 disguised as IPv6 */
    {"::ffff:127.0.0.1", NETADDR_LOOPBACK},
    {"::ffff:7f00:1", NETADDR_LOOPBACK},
    {"::ffff:10.1.2.3", NETADDR_PRIVATE},
    {"::ffff:169.254.169.254", NETADDR_METADATA},
    {"::ffff:0.0.0.0", NETADDR_UNSPECIFIED},
    {"::ffff:8.8.8.8", NETADDR_PUBLIC},
    {"::ffff:0:127.0.0.1", NETADDR_LOOPBACK}, /* IPv4-translated */
    {"::127.0.0.1", NETADDR_LOOPBACK},        /* IPv4-compatible */
    {"::192.168.1.1", NETADDR_PRIVATE},
    {"::8.8.8.8", NETADDR_RESERVED},          /* compatible form of a public address */
    {"64:ff9b::127.0.0.1", NETADDR_LOOPBACK}, /* NAT64 */
    {"64:ff9b::a9fe:a9fe", NETADDR_METADATA},
    {"64:ff9b::8.8.8.8", NETADDR_PUBLIC},
    {"64:ff9b:1::8.8.8.8", NETADDR_RESERVED}, /* local-use NAT64 */
    {"2002:7f00:1::", NETADDR_LOOPBACK},      /* 6to4 */
    {"2002:c0a8:101::1", NETADDR_PRIVATE},
    {"2002:a9fe:a9fe::", NETADDR_METADATA},
    {"2002:808:808::1", NETADDR_PUBLIC},
};

static void test_table(void)
{
    char name[160];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        netaddr_t a;
        bool ok = netaddr_parse(cases[i].addr, &a);
        netaddr_class_t got = ok ? netaddr_classify(&a, NULL) : NETADDR_CLASS_COUNT;
        snprintf(name, sizeof name, "%s is %s", cases[i].addr, netaddr_class_name(cases[i].cls));
        if (!CHECK(ok && got == cases[i].cls, name))
            printf("#   parsed %d, got %s\n", ok, netaddr_class_name(got));
    }
}

static void test_embedded_flag(void)
{
    netaddr_t a;
    bool emb = false;
    netaddr_parse("::ffff:10.0.0.1", &a);
    netaddr_classify(&a, &emb);
    CHECK(emb, "mapped form reports the embedded address");
    netaddr_parse("10.0.0.1", &a);
    netaddr_classify(&a, &emb);
    CHECK(!emb, "plain IPv4 is not embedded");
    netaddr_parse("fe80::1", &a);
    netaddr_classify(&a, &emb);
    CHECK(!emb, "plain IPv6 is not embedded");
}

typedef struct {
    const char *s;
    bool ok;
    const char *want; /* dotted quad when ok */
} v4case_t;

static const v4case_t v4cases[] = {
    {"127.0.0.1", true, "127.0.0.1"},
    {"2130706433", true, "127.0.0.1"},
    {"0x7f000001", true, "127.0.0.1"},
    {"0X7F000001", true, "127.0.0.1"},
    {"017700000001", true, "127.0.0.1"},
    {"0x7f.1", true, "127.0.0.1"},
    {"0177.0.0.1", true, "127.0.0.1"},
    {"127.1", true, "127.0.0.1"},
    {"127.0.1", true, "127.0.0.1"},
    {"10.0x10.1", true, "10.16.0.1"},
    {"0xa9.0xfe.0xa9.0xfe", true, "169.254.169.254"},
    {"0", true, "0.0.0.0"},
    {"4294967295", true, "255.255.255.255"},
    {"0xffffffff", true, "255.255.255.255"},
    {"4294967296", false, NULL},
    {"0x100000000", false, NULL},
    {"1.2.3.4.5", false, NULL},
    {"1.2.3.256", false, NULL},
    {"1.2.65536", false, NULL},
    {"1.16777216", false, NULL},
    {"256.1", false, NULL},
    {"1.2.3.08", false, NULL}, /* 08 is not octal */
    {"1..2", false, NULL},
    {"1.2.3.", false, NULL},   /* caller strips the one trailing dot */
    {"", false, NULL},
    {"0x", false, NULL},
    {"example.com", false, NULL},
    {"1.2.3.4a", false, NULL},
    {"99999999999999999999999", false, NULL},
};

static void test_v4_any(void)
{
    char name[160];
    for (size_t i = 0; i < sizeof v4cases / sizeof v4cases[0]; i++) {
        uint32_t v = 0;
        bool ok = netaddr_parse_v4_any(v4cases[i].s, strlen(v4cases[i].s), &v);
        snprintf(name, sizeof name, "legacy IPv4 '%s' %s", v4cases[i].s,
                 v4cases[i].ok ? v4cases[i].want : "rejected");
        if (!v4cases[i].ok) {
            CHECK(!ok, name);
            continue;
        }
        char txt[NETADDR_STRLEN] = "";
        netaddr_t a = netaddr_v4(v);
        netaddr_format(&a, txt);
        CHECK(ok && strcmp(txt, v4cases[i].want) == 0, name);
    }
}

static void test_parse_format(void)
{
    netaddr_t a;
    char txt[NETADDR_STRLEN];
    CHECK(!netaddr_parse("127.1", &a), "strict parse refuses short IPv4");
    CHECK(!netaddr_parse("0127.0.0.1", &a), "strict parse refuses leading zeros");
    CHECK(!netaddr_parse("[::1]", &a), "strict parse refuses brackets");
    CHECK(!netaddr_parse("fe80::1%eth0", &a), "strict parse refuses a zone");
    CHECK(netaddr_parse("2001:DB8:0:0:0:0:0:1", &a), "upper-case IPv6 parses");
    netaddr_format(&a, txt);
    CHECK_STR(txt, "2001:db8::1", "IPv6 formats per RFC 5952");

    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(0x7F000001);
    CHECK(netaddr_from_sockaddr((struct sockaddr *)&sin, sizeof sin, &a) &&
              netaddr_classify(&a, NULL) == NETADDR_LOOPBACK,
          "sockaddr_in read");
    CHECK(!netaddr_from_sockaddr((struct sockaddr *)&sin, 4, &a), "short sockaddr refused");
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:10.0.0.1", &sin6.sin6_addr);
    CHECK(netaddr_from_sockaddr((struct sockaddr *)&sin6, sizeof sin6, &a) &&
              netaddr_classify(&a, NULL) == NETADDR_PRIVATE,
          "sockaddr_in6 read, mapped private");

    netaddr_t v4 = netaddr_v4(0x0A000001), m;
    netaddr_parse("::ffff:10.0.0.1", &m);
    CHECK(netaddr_equal(&v4, &m), "IPv4 equals its mapped form");
    netaddr_parse("10.0.0.2", &m);
    CHECK(!netaddr_equal(&v4, &m), "different addresses differ");
}

static void test_names(void)
{
    /* clang-format off */
    static const char *const local[] = {
        "localhost", "a.localhost", "x.y.localhost", "metadata", "metadata.google.internal",
        "metadata.goog", "instance-data", "instance-data.ec2.internal", "printer.local",
        "router.home.arpa", "localhost.localdomain", "ip6-localhost", "internal",
    };
    /* clang-format on */
    /* clang-format off */
    static const char *const public_[] = {
        "example.com", "notlocalhost", "localhost.example.com", "metadata.example.com",
        "internal.example.com", "mylocal", "local.example", "home.arpa.example.com",
        "pypi.org",
    };
    /* clang-format on */
    char name[160];
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++) {
        snprintf(name, sizeof name, "'%s' is a local-only name", local[i]);
        CHECK(netaddr_local_name(local[i]) != NULL, name);
    }
    for (size_t i = 0; i < sizeof public_ / sizeof public_[0]; i++) {
        snprintf(name, sizeof name, "'%s' is an ordinary name", public_[i]);
        CHECK(netaddr_local_name(public_[i]) == NULL, name);
    }
}

int main(void)
{
    test_table();
    test_embedded_flag();
    test_v4_any();
    test_parse_format();
    test_names();
    return tap_done();
}
