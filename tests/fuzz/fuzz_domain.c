/* fuzz_domain.c — libFuzzer harness for domain entries and host matching.
 *
 * The input is "ENTRY\nHOST" (or one string used as both). Beyond "no crash":
 * normalisation is idempotent, a parsed entry's pattern parses back to itself,
 * an entry matches its own pattern exactly as its kind says, "*" matches every
 * normalised name and no IP literal, and a URL-shaped entry never parses.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c)                  \
    do {                            \
        if (!(c)) __builtin_trap(); \
    } while (0)

static char *cat(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    char *s = malloc(n + m + 1);
    memcpy(s, a, n);
    memcpy(s + n, b, m + 1);
    return s;
}

static void check_host(const char *h)
{
    char *n = NULL, *err = NULL;
    if (!domain_host_normalize(h, &n, &err)) {
        REQUIRE(err && *err && n == NULL);
        free(err);
        return;
    }
    REQUIRE(err == NULL && n && *n);
    char *again = NULL;
    REQUIRE(domain_host_normalize(n, &again, NULL) && !strcmp(again, n)); /* idempotent */
    domain_entry_t all = {DOMAIN_ALL, (char *)"*"};
    REQUIRE(domain_match(&all, n) == !domain_host_is_ip(n));
    free(again);
    free(n);
}

static void check_entry(const char *text, const char *h)
{
    domain_entry_t e;
    char *err = NULL, *why = NULL;
    domain_lint_t lint = domain_text_lint(text, &why);
    REQUIRE((lint == DOMAIN_OK) == (why == NULL));
    free(why);
    if (!domain_entry_parse(text, &e, &err)) {
        REQUIRE(err && *err && e.pattern == NULL);
        free(err);
        return;
    }
    REQUIRE(lint != DOMAIN_WARN_URL && e.pattern);
    REQUIRE(domain_entry_lint(&e) == lint);
    /* the pattern parses back to the same entry */
    char *back = e.kind == DOMAIN_SUBDOMAINS ? cat("*.", e.pattern) : cat("", e.pattern);
    domain_entry_t b;
    REQUIRE(domain_entry_parse(back, &b, NULL) && b.kind == e.kind && !strcmp(b.pattern, e.pattern));
    domain_entry_free(&b);
    free(back);
    switch (e.kind) {
    case DOMAIN_EXACT:
    case DOMAIN_IP:
        REQUIRE(domain_match(&e, e.pattern));
        break;
    case DOMAIN_SUBDOMAINS: {
        REQUIRE(!domain_match(&e, e.pattern));
        char *sub = cat("a.", e.pattern), *n = NULL;
        if (domain_host_normalize(sub, &n, NULL)) REQUIRE(domain_match(&e, n));
        free(n);
        free(sub);
        break;
    }
    default:
        break;
    }
    char *n = NULL;
    if (h && domain_host_normalize(h, &n, NULL)) {
        bool m = domain_match(&e, n);
        if (domain_host_is_ip(n) && m) REQUIRE(e.kind == DOMAIN_IP && !strcmp(n, e.pattern));
        if (e.kind == DOMAIN_EXACT) REQUIRE(m == !strcmp(n, e.pattern));
    }
    free(n);
    domain_entry_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        check_entry(s, nl + 1);
        check_host(nl + 1);
    } else {
        check_entry(s, s);
    }
    check_host(s);
    free(s);
    return 0;
}
