/* fuzz_jsonrpc.c — libFuzzer harness for the JSON-RPC/MCP message handler.
 *
 * The input is one or more messages separated by newlines, fed to
 * mcp_handle() on a fresh connection (initialized first when the first byte
 * is odd, so that tools/call is reached too). The server runs with no_spawn
 * and no_sandbox: session_bash and session_fetch refuse, every other tool
 * works for real on a private state dir. Beyond "no crash, no leak, no
 * hang": every response is one line of valid UTF-8 JSON, an object with
 * "jsonrpc": "2.0" and exactly one of result / error, and notifications are
 * never answered. Seeds: tests/fuzz/corpus/jsonrpc/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <jansson.h>

#include "mcp.h"
#include "textenc.h"
#include "tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mcp_server_t *srv;
static char fuzz_dir[64];

/* At exit: close the sessions and remove the private directory. */
static void cleanup(void)
{
    mcp_server_free(srv);
    srv = NULL;
    tree_remove(AT_FDCWD, fuzz_dir);
}

static void must(int cond)
{
    if (!cond)
        abort();
}

static void check_text(const char *text)
{
    size_t n = strlen(text);
    must(textenc_utf8_valid(text, n, false));
    must(!memchr(text, '\n', n));
    /* INT_AS_REAL: an echoed id may be an integer past 64 bits */
    json_t *j = json_loadb(text, n, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, NULL);
    must(json_is_object(j));
    const json_t *v = json_object_get(j, "jsonrpc");
    must(json_is_string(v) && !strcmp(json_string_value(v), "2.0"));
    json_decref(j);
}

static void sink_send(void *ctx, const char *json)
{
    (void)ctx;
    check_text(json);
}

static void setup(void)
{
    /* Private state and config, never the user's ~/.drun. */
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/drun-fuzz-jsonrpc-XXXXXX");
    const char *dir = mkdtemp(fuzz_dir);
    must(dir != NULL);
    char *cfg = NULL, *state = NULL;
    must(asprintf(&cfg, "%s/config.toml", dir) > 0 && asprintf(&state, "%s/state", dir) > 0);
    FILE *f = fopen(cfg, "w");
    must(f != NULL);
    fputs("max_sessions = 4\nmax_workspace_mb = 1\nenv_allowlist = [\"HOME\"]\n", f);
    fclose(f);
    mcp_opts_t o = {
        .config = cfg,
        .state_dir = state,
        .transport = "fuzz",
        .no_spawn = true,
        .no_sandbox = true,
        .no_reaper = true,
    };
    char *err = NULL;
    srv = mcp_server_new(&o, &err);
    must(srv != NULL);
    atexit(cleanup);
    free(cfg);
    free(state);
}

static void one(mcp_conn_t *c, const char *msg, size_t len, const mcp_sink_t *sink)
{
    jsonrpc_msg_t m;
    jsonrpc_parse(msg, len, &m);
    jsonrpc_kind_t kind = m.kind;
    mcp_reply_t r;
    mcp_dispatch(c, &m, sink, &r);
    if (kind == JSONRPC_NOTIFICATION || kind == JSONRPC_RESPONSE)
        must(r.text == NULL);
    if (kind == JSONRPC_REQUEST || kind == JSONRPC_INVALID)
        must(r.text != NULL);
    if (r.text) {
        check_text(r.text);
        json_t *j = json_loads(r.text, JSON_DECODE_INT_AS_REAL, NULL);
        must(!json_object_get(j, "result") != !json_object_get(j, "error"));
        json_decref(j);
    }
    free(r.text);
    jsonrpc_msg_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!srv)
        setup();
    mcp_conn_t *c = mcp_conn_new(srv);
    mcp_sink_t sink = {sink_send, NULL};
    if (size && (data[0] & 1)) {
        static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                                   "\"params\":{\"protocolVersion\":\"2025-11-25\"}}";
        one(c, init, sizeof init - 1, &sink);
    }
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        /* a copy of exactly len bytes, so ASan sees any read past the end */
        char *msg = malloc(len ? len : 1);
        memcpy(msg, p, len);
        one(c, msg, len, &sink);
        free(msg);
        p += len + (nl ? 1 : 0);
    }
    mcp_conn_free(c);
    return 0;
}
