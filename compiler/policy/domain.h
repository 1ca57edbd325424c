/* domain.h — domain_allowlist entries and host matching (SPEC §3.2).
 *
 * Entries and hosts are brought to one normal form — lower case, one trailing
 * dot dropped, IDNA A-labels (punycode) exactly as libcurl converts them, IP
 * literals in canonical text — and compared there. Pure: no DNS, no I/O.
 */
#ifndef DRUN_DOMAIN_H
#define DRUN_DOMAIN_H

#include <stdbool.h>

enum {
    DOMAIN_EXACT,      /* "example.com": that host only */
    DOMAIN_SUBDOMAINS, /* "*.example.com": any host below it, at any depth, not itself */
    DOMAIN_ALL,        /* "*": every host NAME; never an IP literal (see domain_match) */
    DOMAIN_IP,         /* "192.0.2.1", "2001:db8::1", "[2001:db8::1]": that address only */
};

typedef struct domain_entry {
    int kind;      /* DOMAIN_* */
    char *pattern; /* normalised: lower-case A-label (punycode), no trailing dot; for
                      SUBDOMAINS the base without "*."; for IP the canonical text
                      (dotted quad, or RFC 5952-style IPv6 without brackets); "*" for ALL.
                      Owned; free with domain_entry_free */
} domain_entry_t;

/* Parses one domain_allowlist entry. On success fills *out (free with
 * domain_entry_free) and returns true. On failure returns false with *err (caller
 * frees; err may be NULL) saying what is wrong and what to write instead. Rejects:
 * empty; a scheme ("https://x"), path ("x/y"), query, port ("x:443") or user name
 * ("u@x"); spaces and control characters; '*' anywhere but a whole leading "*."
 * label or alone; a wildcard over IP addresses ("*.0.0.1"); bad IDNA; empty
 * labels; labels over 63 bytes; names over 253 bytes. */
bool domain_entry_parse(const char *entry, domain_entry_t *out, char **err);
void domain_entry_free(domain_entry_t *e);

/* Brings a host (from a URL, as curl will resolve it) to the normal form: lower
 * case, ONE trailing dot removed, non-ASCII names converted by IDNA2008 with
 * UTS#46 non-transitional mapping and curl's fallback to transitional mapping
 * (the same libidn2 calls libcurl makes, so the name checked is the name
 * resolved), IPv4 in every form URL parsers accept ("127.1", "0x7f.0.0.1",
 * "2130706433") as a dotted quad, IPv6 with or without brackets as canonical
 * text ("::ffff:1.2.3.4" stays IPv6). A name whose last label is numeric must be
 * a valid IPv4 address. On success *out is set (caller frees). On failure false
 * with *err (caller frees; may be NULL). */
bool domain_host_normalize(const char *host, char **out, char **err);

/* True when an IP literal: the canonical text domain_host_normalize produces for one. */
bool domain_host_is_ip(const char *normalized_host);

/* Does entry e allow normalized_host (a domain_host_normalize result)? EXACT and
 * SUBDOMAINS compare whole labels ("example.com.evil.org" and "evilexample.com"
 * never match "example.com"); IP compares canonical addresses.
 * Decision: "*" covers every host NAME but no IP literal — an IP literal matches
 * only an identical IP entry — so "*" never opens http://169.254.169.254/ or a
 * private address by its number. A host that is not in normal form (upper case,
 * non-ASCII, more than one trailing dot) never matches: fail closed. */
bool domain_match(const domain_entry_t *e, const char *normalized_host);

/* Lint classes (rule wildcard-domain). */
typedef enum {
    DOMAIN_OK,
    DOMAIN_WARN_ALL,    /* "*" */
    DOMAIN_WARN_SUFFIX, /* "*.com", "*.co.uk", "*.github.io": a wildcard over a public
                           suffix (a single label, or one of a built-in list) */
    DOMAIN_WARN_URL,    /* written with a scheme, path, query, port or user name
                           (domain_entry_parse rejects these) */
} domain_lint_t;

domain_lint_t domain_entry_lint(const domain_entry_t *e);

/* The class of an entry as written, for lint: DOMAIN_WARN_URL when it has a
 * scheme, path, query, port or user name; else domain_entry_lint of the parsed
 * entry; DOMAIN_OK for anything else (including other invalid entries, which
 * are parse errors). When the class is not DOMAIN_OK and why is not NULL, *why
 * is one sentence saying why (caller frees); else *why is NULL. */
domain_lint_t domain_text_lint(const char *entry, char **why);

#endif
