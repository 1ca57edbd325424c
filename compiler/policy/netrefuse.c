/* netrefuse.c — the refusal sentences of the address and name rules
 * (netrefuse.h), over the classifier of netaddr.c. */
#include "netrefuse.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* What lifts the rule, said in every refusal so the operator knows the key. */
#define PRIVATE_HINT "%s reach%s only public addresses unless the operator sets [network] allow_private_addresses = true"

static char *hint(const char *who)
{
    /* "session_fetch reaches", "sandboxed commands reach" */
    size_t n = strlen(who);
    return xasprintf(PRIVATE_HINT, who, n && who[n - 1] == 's' ? "" : "es");
}

char *netrefuse_addr(const char *who, const char *host, const netaddr_t *a, bool is_literal, bool allow_private)
{
    if (allow_private) return NULL;
    bool embedded = false;
    netaddr_class_t c = netaddr_classify(a, &embedded);
    if (c == NETADDR_PUBLIC) return NULL;
    char txt[NETADDR_STRLEN];
    netaddr_format(a, txt);
    const char *via = embedded ? " (an IPv4 address inside IPv6)" : "";
    char *h = hint(who), *msg;
    if (is_literal)
        msg = xasprintf("refused: %s is a %s address%s; %s", txt, netaddr_class_name(c), via, h);
    else
        msg = xasprintf("refused: host '%s' resolves to %s, a %s address%s; %s", host, txt, netaddr_class_name(c),
                        via, h);
    free(h);
    return msg;
}

char *netrefuse_name(const char *who, const char *host, bool allow_private)
{
    if (allow_private) return NULL;
    const char *what = netaddr_local_name(host);
    if (!what) return NULL;
    char *h = hint(who);
    char *msg = xasprintf("refused: host '%s' is %s; %s", host, what, h);
    free(h);
    return msg;
}
