/* fetch.h — the engine behind session_fetch: one HTTP(S) GET hardened against SSRF
 * (SPEC §11, §12). Every hop is re-validated (URL, allowlist, addresses), the
 * addresses are pinned, the body streams to a caller-opened fd under the limits.
 * docs/fetch.md gives the order of the checks and the reasons. */
#ifndef DRUN_FETCH_H
#define DRUN_FETCH_H

#include <stdbool.h>

/* What went wrong; FETCH_OK when nothing did. */
enum {
    FETCH_OK = 0,
    FETCH_BAD_URL,             /* not a well-formed http(s) URL, or a redirect to one */
    FETCH_DENIED_DOMAIN,       /* host not in the domain allowlist (first URL or a redirect) */
    FETCH_DENIED_ADDRESS,      /* host is, or resolves to, a loopback/private/metadata/... address */
    FETCH_TOO_LARGE,           /* body past max_bytes (announced or streamed) */
    FETCH_TIMEOUT,             /* connect_timeout_ms or timeout_ms passed */
    FETCH_NETWORK,             /* DNS, connect, TLS or protocol failure */
    FETCH_HTTP_REDIRECT_LIMIT, /* more than max_redirects redirects */
    FETCH_CANCELLED,           /* the progress hook asked to stop */
    FETCH_IO,                  /* writing the body to out_fd failed (disk full, RLIMIT_FSIZE...) */
};

typedef struct fetch_req {
    const char *url;         /* as the model gave it; any length (refused past FETCH_URL_MAX) */
    int out_fd;              /* body is streamed here (caller opened it beneath the workspace) */
    long timeout_ms;         /* whole transfer incl. DNS and every redirect (fetch_timeout_ms); <= 0: 60000 */
    long connect_timeout_ms; /* connect phase of each hop (connect_timeout_ms); <= 0: 30000 */
    long long max_bytes;     /* fetch_max_bytes: abort and fail past this; <= 0 allows only empty bodies */
    bool allow_private;      /* [network] allow_private_addresses */
    int max_redirects;       /* e.g. 5; clamped to 0..20 */
    /* The domain allowlist (caller implements). host is normalised: lower-case,
     * punycode (IDNA), no trailing dot; an IP literal in canonical text without
     * brackets ("127.0.0.1", "::1"; "::ffff:127.0.0.1" stays IPv6). On refusal
     * the caller may set *why to a malloc'd sentence that replaces the default
     * "host 'H' is not in the domain_allowlist" (fetch_run frees it). Called
     * once per hop, before any DNS lookup. */
    bool (*host_allowed)(void *ctx, const char *host, char **why);
    void *ctx; /* passed to host_allowed and progress */
    /* optional progress/cancel hook: return false to abort (FETCH_CANCELLED).
     * Called from the calling thread, often, with the body bytes saved so far. */
    bool (*progress)(void *ctx, long long bytes_so_far);
} fetch_req_t;

typedef struct fetch_result {
    int http_status;    /* final response status (any: a 404 is a completed fetch); 0 when none */
    char *content_type; /* Content-Type of the final response, or NULL; owned */
    long long bytes;    /* body bytes saved to out_fd (on failure: bytes received before it) */
    char *final_url;    /* normalised URL of the last hop attempted; owned */
    int redirects;      /* redirects followed */
    char *error;        /* NULL on success; else one sentence the model can act on; owned */
    int error_kind;     /* FETCH_OK, FETCH_BAD_URL, ... */
} fetch_result_t;

/* Fetches req->url with GET, following up to max_redirects redirects itself
 * (301/302/303/307/308), each hop re-validated from scratch. Thread-safe: may be
 * called from several threads at once (one libcurl handle per hop, no signals).
 *
 * Returns true when an HTTP response was received and its whole body written
 * to out_fd (res->error NULL). On false, res->error_kind and res->error say why,
 * and out_fd is truncated back to the offset it had on entry when it is a
 * regular file, so a partial body never looks complete — the caller should still
 * unlink the file it created. res is overwritten; free it with fetch_result_free
 * in every case. */
bool fetch_run(const fetch_req_t *req, fetch_result_t *res);

/* Frees what res owns and zeroes it. Safe on a zeroed result and twice. */
void fetch_result_free(fetch_result_t *res);

/* A short stable name for an error kind ("denied-address"), for structured results. */
const char *fetch_error_kind_name(int kind);

#endif
