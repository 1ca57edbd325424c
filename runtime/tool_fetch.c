/* tool_fetch.c — session_fetch: the tool side of a fetch. Validates the URL
 * and the destination, opens a temp file beneath the workspace, hands both to
 * the fetch engine (fetch.h: allowlist on every hop, address checks, pinning,
 * caps) with the policy's limits, and renames the file into place only when
 * the whole body arrived.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "beneath.h"
#include "clock.h"
#include "drun_policy.h"
#include "fetch.h"
#include "sesstools.h"
#include "tools.h"
#include "tree.h"

#define FETCH_MAX_REDIRECTS 5
#define FETCH_PROGRESS_MS 1000

typedef struct fetch_ctx {
    tool_call_t *tc;
    session_t *s;
    int64_t next_progress; /* monotonic ms */
    int64_t started;
} fetch_ctx_t;

/* The domain allowlist of the policy this call runs under (SPEC §3.2). */
static bool host_allowed(void *ctx, const char *host, char **why)
{
    fetch_ctx_t *f = ctx;
    const policy_t *p = f->tc->lp->pol;
    for (size_t i = 0; i < p->domains.n; i++) {
        /* host arrives normalised by the fetch engine (domain.h normal form). */
        domain_entry_t e = {p->domains.v[i].kind, (char *)p->domains.v[i].pattern};
        if (domain_match(&e, host))
            return true;
    }
    buf_t b = BUF_INIT;
    buf_printf(&b, "host %s is not in domain_allowlist (", host);
    if (!p->domains.n)
        buf_adds(&b, "the list is empty: no host may be fetched");
    for (size_t i = 0; i < p->domains.n; i++)
        buf_printf(&b, "%s%s", i ? ", " : "allowed: ", p->domains.v[i].written);
    buf_adds(&b, "); ask the operator to add it, or fetch from an allowed host");
    *why = buf_detach(&b, NULL);
    return false;
}

static bool fetch_progress(void *ctx, long long bytes)
{
    fetch_ctx_t *f = ctx;
    if (mcp_req_cancelled(f->tc->req) || atomic_load(&f->s->closing))
        return false;
    int64_t now = clock_now_ms();
    if (now >= f->next_progress) {
        char msg[96];
        snprintf(msg, sizeof msg, "%lld bytes received", bytes);
        mcp_req_progress(f->tc->req, (double)(now - f->started) / 1000.0, 0, msg);
        f->next_progress = now + FETCH_PROGRESS_MS;
    }
    return true;
}

static void run_fetch(tool_call_t *tc, const json_t *args)
{
    const char *url = tools_arg_str(args, "url", "");
    const char *save_as = tools_arg_str(args, "save_as", "");
    bool overwrite = tools_arg_bool(args, "overwrite", false);
    if (tc->srv->no_spawn) {
        tools_fail(tc, "session_fetch is disabled in this server.");
        return;
    }
    if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
        tools_fail(tc, "Only http:// and https:// URLs can be fetched; \"%.200s\" is neither.", url);
        return;
    }
    buf_t rel = BUF_INIT;
    const char *why;
    if (!beneath_normalize(save_as, &rel, &why) || !rel.len) {
        tools_fail(tc, "Invalid save_as \"%s\": %s.", save_as,
                   rel.len || why ? why : "it names the workspace itself; give a file path");
        buf_free(&rel);
        return;
    }
    session_t *s = tools_session(tc, args);
    if (!s) {
        buf_free(&rel);
        return;
    }
    pthread_mutex_lock(&s->write_mu);
    char *dup = NULL, tmp[64] = "";
    const char *parent, *name;
    int pfd = -1, tfd = -1;
    struct stat st;
    uint64_t old_size = 0;
    fetch_result_t res = {0};
    /* The policy first (access.h), before any directory is made. */
    if (!access_require(tc, s, rel.p, LVL_WRITE, "save_as: "))
        goto out;
    beneath_split(rel.p, &dup, &parent, &name);
    pfd = beneath_open_dir(s->ws_fd, parent, true);
    if (pfd < 0) {
        tools_fail(tc, "save_as \"%s\": its directory cannot be used: %s%s", rel.p, strerror(errno),
                   errno == ELOOP ? " (a component is a symlink; symlinks are never followed)" : "");
        goto out;
    }
    if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISREG(st.st_mode)) {
            tools_fail(tc, "save_as \"%s\" exists and is not a regular file (%s); choose another "
                           "path.",
                       rel.p, S_ISLNK(st.st_mode) ? "a symlink" : "not a file");
            goto out;
        }
        if (!overwrite) {
            tools_fail(tc, "save_as \"%s\" exists; pass overwrite: true or choose another path.",
                       rel.p);
            goto out;
        }
        old_size = (uint64_t)st.st_size;
    }
    /* The body may not take the workspace past max_workspace_mb. */
    tree_usage_t u;
    tree_measure(s->ws_fd, 1000000, &u);
    uint64_t limit = (uint64_t)tools_setting(tc, S_MAX_WORKSPACE_MB) * 1024 * 1024;
    uint64_t used = u.bytes - (old_size <= u.bytes ? old_size : u.bytes);
    long long room = used >= limit ? 0 : (long long)(limit - used);
    long long cap = tools_setting(tc, S_FETCH_MAX_BYTES);
    bool quota_bound = room < cap;
    if (quota_bound)
        cap = room;

    unsigned char r[8];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        tools_fail(tc, "no randomness for a temporary file name");
        goto out;
    }
    snprintf(tmp, sizeof tmp, ".drun-fetch-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2],
             r[3], r[4], r[5], r[6], r[7]);
    tfd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (tfd < 0) {
        tools_fail(tc, "cannot create a file in the directory of \"%s\": %s", rel.p, strerror(errno));
        tmp[0] = '\0';
        goto out;
    }
    fetch_ctx_t fc = {tc, s, clock_now_ms() + FETCH_PROGRESS_MS, clock_now_ms()};
    fetch_req_t req = {
        .url = url,
        .out_fd = tfd,
        .timeout_ms = (long)tools_setting(tc, S_FETCH_TIMEOUT_MS),
        .connect_timeout_ms = (long)tools_setting(tc, S_CONNECT_TIMEOUT_MS),
        .max_bytes = cap,
        .allow_private = tools_setting(tc, S_ALLOW_PRIVATE_ADDRESSES) != 0,
        .max_redirects = FETCH_MAX_REDIRECTS,
        .host_allowed = host_allowed,
        .ctx = &fc,
        .progress = fetch_progress,
    };
    bool ok = fetch_run(&req, &res);
    if (close(tfd) < 0 && ok) {
        ok = false;
        tools_fail(tc, "writing \"%s\" failed: %s", rel.p, strerror(errno));
    }
    tfd = -1;
    if (ok && renameat(pfd, tmp, pfd, name) < 0) {
        tools_fail(tc, "cannot move the download into place at \"%s\": %s", rel.p, strerror(errno));
        ok = false;
    }
    if (ok) {
        tmp[0] = '\0';
    } else if (!tc->is_error) {
        bool quota = res.error_kind == FETCH_TOO_LARGE && quota_bound;
        tools_fail(tc, "Fetch of %s failed (%s): %s%s", url, fetch_error_kind_name(res.error_kind),
                   res.error ? res.error : "unknown error",
                   quota ? " The limit was the room left in the workspace (max_workspace_mb); "
                           "delete files to make room."
                         : "");
        goto out;
    } else {
        goto out;
    }

    json_t *o = tc->out;
    json_object_set_new(o, "session_id", jsonrpc_string(s->id));
    tools_json_bytes(o, "url", url, strlen(url));
    if (res.final_url)
        tools_json_bytes(o, "final_url", res.final_url, strlen(res.final_url));
    json_object_set_new(o, "status", json_integer(res.http_status));
    if (res.content_type)
        tools_json_bytes(o, "content_type", res.content_type, strlen(res.content_type));
    json_object_set_new(o, "bytes", json_integer(res.bytes));
    tools_json_bytes(o, "path", rel.p, rel.len);
    json_object_set_new(o, "redirects", json_integer(res.redirects));
    buf_printf(&tc->text, "Fetched %s: HTTP %d, %lld bytes%s%s, saved to %s", res.final_url ? res.final_url : url,
               res.http_status, res.bytes, res.content_type ? " of " : "",
               res.content_type ? res.content_type : "", rel.p);
    if (res.redirects)
        buf_printf(&tc->text, " after %d redirect%s", res.redirects, res.redirects == 1 ? "" : "s");
    buf_adds(&tc->text, res.http_status >= 400 ? " (an HTTP error status: the body is the "
                                                 "server's error page)."
                                               : ".");
out:
    if (tfd >= 0)
        close(tfd);
    if (tmp[0] && pfd >= 0)
        unlinkat(pfd, tmp, 0);
    if (pfd >= 0)
        close(pfd);
    fetch_result_free(&res);
    free(dup);
    pthread_mutex_unlock(&s->write_mu);
    if (!tc->is_error)
        sesstools_checkpoint(tc, s, "session_fetch", url);
    sessions_put(s);
    buf_free(&rel);
}

const tool_def_t tool_session_fetch = {
    .name = "session_fetch",
    .title = "Download a URL into a session workspace",
    .description =
        "Downloads an http(s) URL with GET into a file beneath the session workspace. Only "
        "hosts in the policy's domain_allowlist are reached (every redirect is re-checked), "
        "never loopback, private or cloud-metadata addresses unless the policy allows them; "
        "fetch_timeout_ms and fetch_max_bytes apply. The file appears only when the whole "
        "body arrived. Sandboxed commands have no network: this is how data gets in.",
    .input_schema =
        "{\"type\": \"object\", \"properties\": {"
        "\"session_id\": {\"type\": \"string\", \"minLength\": 32, \"maxLength\": 32, "
        "\"description\": \"The ID create_session returned.\"}, "
        "\"url\": {\"type\": \"string\", \"minLength\": 8, \"maxLength\": 8192, "
        "\"description\": \"An http:// or https:// URL.\"}, "
        "\"save_as\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096, "
        "\"description\": \"Destination file, relative to the workspace.\"}, "
        "\"overwrite\": {\"type\": \"boolean\", \"default\": false}}, "
        "\"required\": [\"session_id\", \"url\", \"save_as\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
        "\"url\": {\"type\": \"string\"}, \"final_url\": {\"type\": \"string\"}, \"status\": "
        "{\"type\": \"integer\"}, \"content_type\": {\"type\": \"string\"}, \"bytes\": "
        "{\"type\": \"integer\"}, \"path\": {\"type\": \"string\"}, \"redirects\": {\"type\": "
        "\"integer\"}}, "
        "\"required\": [\"session_id\", \"url\", \"status\", \"bytes\", \"path\"]}",
    .needs_policy = true,
    .destructive = true,
    .open_world = true,
    .run = run_fetch,
};
