/* netrefuse.h — the address and name rules every outbound connection of the
 * runtime obeys (SPEC §12, §15): session_fetch and the proxy of sandboxed
 * commands ask these two functions, so the rule and its words are one.
 * Pure: no DNS, no I/O; the caller resolves and then asks about each address.
 */
#ifndef DRUN_NETREFUSE_H
#define DRUN_NETREFUSE_H

#include <stdbool.h>

#include "netaddr.h"

/* NULL when a (an address host is, or resolves to) may be reached, else one
 * sentence starting "refused: " saying what it is (caller frees). who names
 * the caller in the hint ("session_fetch", "sandboxed commands"). With
 * allow_private ([network] allow_private_addresses) every address may be. */
char *netrefuse_addr(const char *who, const char *host, const netaddr_t *a, bool is_literal, bool allow_private);

/* The name rule, checked before any lookup: NULL when host (normalised:
 * lower case, no trailing dot) may be looked up, else one sentence (caller
 * frees). "localhost", *.internal, the metadata names and the like never are
 * unless allow_private. */
char *netrefuse_name(const char *who, const char *host, bool allow_private);

#endif
