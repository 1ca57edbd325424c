/* fetch_url.h — the pure half of session_fetch: URL parsing and normalisation,
 * redirect (Location) resolution, and the address/name policy. No network, no
 * DNS: the fuzz harness and the unit tests drive exactly these functions, and
 * fetch.c calls them on every hop.
 */
#ifndef DRUN_FETCHURL_H
#define DRUN_FETCHURL_H

#include <stdbool.h>

#include "drun_policy.h"

#define FETCH_URL_MAX 8192 /* bytes; longer URLs (first or redirected) are refused */

/* A checked URL. */
typedef struct fetch_url {
    char *url;    /* what libcurl is given: rebuilt around host, no fragment; owned */
    char *scheme; /* "http" or "https"; owned */
    char *host;   /* lower-case ASCII (punycode), no trailing dot; an IP literal in
                     canonical text without brackets; owned */
    int port;     /* explicit, or 80/443 */
    bool is_ip;   /* host is an IP literal (including 2130706433, 0x7f.1 spellings) */
    netaddr_t ip; /* the literal's address when is_ip */
} fetch_url_t;

/* Parses and normalises text. Returns true and fills *out (free with
 * fetch_url_free), or false with *why set to one sentence (caller frees) and
 * *out zeroed. Refused: no scheme or one other than http/https, credentials
 * (user@host), an empty host, an IPv6 zone, port 0, spaces and control bytes,
 * invalid IDNA, a host that ends in a number but is no valid IPv4 address, and
 * text longer than FETCH_URL_MAX. */
bool fetch_url_parse(const char *text, fetch_url_t *out, char **why);

/* Frees what u owns and zeroes it; safe on a zeroed value. */
void fetch_url_free(fetch_url_t *u);

/* Resolves a Location header value against the URL of the response that sent
 * it (RFC 3986 reference resolution, as libcurl does when it follows). Returns
 * the absolute URL (caller frees) — still to be checked with fetch_url_parse —
 * or NULL with *why set (caller frees). */
char *fetch_url_resolve(const char *base, const char *location, char **why);

/* The address policy for one address that host names (or is): NULL when a may
 * be reached, else one sentence saying what it is (caller frees). With
 * allow_private every address may be reached. */
char *fetch_addr_refusal(const char *host, const netaddr_t *a, bool is_literal, bool allow_private);

/* The name policy, checked before DNS: NULL when host may be looked up, else
 * one sentence (caller frees). With allow_private every name may be. */
char *fetch_name_refusal(const char *host, bool allow_private);

/* s for quoting in a message: control bytes escaped, cut after 200 bytes so
 * a hostile URL cannot flood the model's context. Caller frees. */
char *fetch_url_quote(const char *s);

#endif
