/* jsonrpc.c — JSON-RPC 2.0 message classification and response text.
 *
 * jansson parses and validates the message; all that is left by hand is
 * finding the exact text of the id (and of the two MCP values echoed like
 * it) inside a message jansson has already accepted, and splicing that
 * text back into the responses.
 */
#include "jsonrpc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drun_policy.h"
#include "textenc.h"

/* JSON_DECODE_INT_AS_REAL: an integer beyond 64 bits is an error to
 * jansson's default reader, and an id of any size must be answered. As a
 * real it parses (the id's own text is echoed, see raw_path), and every
 * number reads the same way, as a double: argcheck.c's "integer" is an
 * integral number, as in JSON Schema. JSON_ALLOW_NUL: "a\u0000b" is
 * refused with a sentence the model can act on (tools_call), not as
 * unparseable. */
#define JSONRPC_LOAD_FLAGS \
    (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)

/* jansson holds a long string twice while it reads it (its lexer's copy and
 * the value), so parsing costs about three times the message, where the
 * body budget of the HTTP transport (--max-body-total) counts it once. One
 * large parse at a time keeps the peak memory of a flood of big bodies
 * within the bound docs/runtime.md states; small messages never wait. */
#define JSONRPC_BIG_MESSAGE (1u << 20)
static pthread_mutex_t big_parse_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the exact text of a member, in JSON that jansson accepted --------------- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* p at '"': returns the byte after the closing quote. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return end;
}

static const char *skip_value(const char *p, const char *end)
{
    if (p < end && *p == '"')
        return skip_string(p, end);
    if (p < end && (*p == '{' || *p == '[')) {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = skip_string(p, end);
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if ((*p == '}' || *p == ']') && --depth == 0)
                return p + 1;
            p++;
        }
        return end;
    }
    while (p < end && !strchr(",}] \t\r\n", *p))
        p++;
    return p;
}

/* The position of key among obj's members. jansson keeps members in the
 * order of the text, and JSON_REJECT_DUPLICATES makes the key unique, so
 * this is also its position in the text, however the key was escaped. */
static size_t key_index(const json_t *obj, const char *key)
{
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (!strcmp(k, key))
            return i;
        i++;
    }
    return SIZE_MAX;
}

/* The exact text of obj.path[0].path[1]…, obj being jansson's reading of
 * the object text[0..len); NULL when a member is missing. Owned. */
static char *raw_path(const char *text, size_t len, const json_t *obj, const char *const *path)
{
    const char *p = text, *end = text + len;
    for (; *path; path++) {
        size_t idx = key_index(obj, *path);
        if (idx == SIZE_MAX)
            return NULL;
        p = skip_ws(p, end) + 1;                                     /* past '{' */
        for (size_t i = 0;; i++) {
            p = skip_ws(skip_string(skip_ws(p, end), end), end) + 1; /* key and ':' */
            const char *v = skip_ws(p, end);
            p = skip_value(v, end);
            if (i == idx) {
                end = p;
                p = v;
                break;
            }
            p = skip_ws(p, end) + 1; /* past ',' */
        }
        obj = json_object_get(obj, *path);
    }
    return xstrndup(p, (size_t)(end - p));
}

/* The lookup key of an id (or a requestId): "s:" and the string, or "n:"
 * and the number's exact text, so that 1 and "1" differ and 1.0 is not 1. */
static char *id_key(const json_t *v, const char *raw)
{
    if (json_is_string(v))
        return xasprintf("s:%s", json_string_value(v));
    return json_is_number(v) ? xasprintf("n:%s", raw) : NULL;
}

static bool holds_nul(const json_t *v)
{
    size_t i;
    const char *k;
    json_t *e;
    if (json_is_string(v))
        return strlen(json_string_value(v)) != json_string_length(v);
    json_array_foreach(v, i, e)
        if (holds_nul(e)) return true;
    json_object_foreach((json_t *)v, k, e)
        if (holds_nul(e)) return true;
    return false;
}

/* ---- classification ------------------------------------------------------------ */

static void invalid(jsonrpc_msg_t *m, int code, const char *msg)
{
    m->kind = JSONRPC_INVALID;
    m->error = code;
    m->error_msg = xstrdup(msg);
}

static void parse_error(jsonrpc_msg_t *m, const json_error_t *e)
{
    m->kind = JSONRPC_INVALID;
    m->error = JSONRPC_PARSE_ERROR;
    if (json_error_code(e) == json_error_invalid_utf8)
        m->error_msg = xstrdup("Parse error: the message is not valid UTF-8 JSON");
    else
        m->error_msg = xasprintf("Parse error: not valid JSON at line %d, column %d: %s",
                                 e->line, e->column, e->text);
}

/* params._meta.progressToken (kept when a string or a number) and
 * params.requestId (notifications/cancelled), as exact text. */
static void read_mcp_values(const char *text, size_t len, jsonrpc_msg_t *m)
{
    const json_t *meta = json_object_get(m->params, "_meta");
    const json_t *tok = json_object_get(meta, "progressToken");
    static const char *const tok_path[] = {"params", "_meta", "progressToken", NULL};
    static const char *const rid_path[] = {"params", "requestId", NULL};
    if (json_is_string(tok) || json_is_number(tok))
        m->progress_token = raw_path(text, len, m->root, tok_path);
    const json_t *rid = json_object_get(m->params, "requestId");
    if (json_is_string(rid) || json_is_number(rid)) {
        char *raw = raw_path(text, len, m->root, rid_path);
        m->cancel_key = id_key(rid, raw);
        free(raw);
    }
}

void jsonrpc_parse(const char *text, size_t len, jsonrpc_msg_t *m)
{
    memset(m, 0, sizeof *m);
    json_error_t e;
    bool big = len > JSONRPC_BIG_MESSAGE;
    if (big)
        pthread_mutex_lock(&big_parse_mu);
    m->root = json_loadb(text, len, JSONRPC_LOAD_FLAGS, &e);
    if (big)
        pthread_mutex_unlock(&big_parse_mu);
    if (!m->root) {
        parse_error(m, &e);
        return;
    }
    if (json_is_array(m->root)) {
        invalid(m, JSONRPC_INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not supported; send one message at a time");
        return;
    }
    if (!json_is_object(m->root)) {
        invalid(m, JSONRPC_INVALID_REQUEST, "Invalid Request: a message must be a JSON object");
        return;
    }
    m->has_nul = holds_nul(m->root);

    const json_t *idv = json_object_get(m->root, "id");
    if (idv) {
        if (!json_is_string(idv) && !json_is_number(idv)) {
            /* null, boolean, object, array: MCP ids are strings or
             * numbers, so answer with a null id. */
            invalid(m, JSONRPC_INVALID_REQUEST, "Invalid Request: the id must be a string or a number");
            return;
        }
        static const char *const id_path[] = {"id", NULL};
        m->id = raw_path(text, len, m->root, id_path);
        m->id_key = id_key(idv, m->id);
    }

    const json_t *ver = json_object_get(m->root, "jsonrpc");
    const json_t *method = json_object_get(m->root, "method");
    if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0) {
        invalid(m, JSONRPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!method) {
        if (idv && (json_object_get(m->root, "result") || json_object_get(m->root, "error"))) {
            m->kind = JSONRPC_RESPONSE;
            return;
        }
        invalid(m, JSONRPC_INVALID_REQUEST, "Invalid Request: no \"method\"");
        return;
    }
    if (!json_is_string(method)) {
        invalid(m, JSONRPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a string");
        return;
    }
    m->method = json_string_value(method);
    m->kind = idv ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
    const json_t *params = json_object_get(m->root, "params");
    if (params && !json_is_object(params)) {
        /* MCP params are always objects (by-name). The envelope is sound, so
         * this is an error of the request (answered -32602 by the dispatcher,
         * HTTP 200), not an unusable message; a notification is ignored. */
        m->bad_params = true;
        return;
    }
    m->params = params;
    read_mcp_values(text, len, m);
}

void jsonrpc_msg_free(jsonrpc_msg_t *m)
{
    json_decref(m->root);
    free(m->id);
    free(m->id_key);
    free(m->progress_token);
    free(m->cancel_key);
    free(m->error_msg);
    memset(m, 0, sizeof *m);
}

/* ---- building ------------------------------------------------------------------ */

char *jsonrpc_print(const json_t *item)
{
    /* 15 significant digits, as printf's %g would: a duration of 12.345 ms
     * prints as 12.345, not 12.345000000000001. */
    char *s = json_dumps(item, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    if (!s) {
        /* jansson returns NULL only when its allocator fails: the same
         * policy as xmalloc (buf.h) applies. */
        fprintf(stderr, "drun-mcp: out of memory printing JSON\n");
        abort();
    }
    return s;
}

/* jsonrpc_print of a value this function owns and releases. */
static char *print_new(json_t *item)
{
    char *s = jsonrpc_print(item);
    json_decref(item);
    return s;
}

char *jsonrpc_print_with_raw(const json_t *obj, const char *key, const char *raw)
{
    char *rest = jsonrpc_print(obj); /* "{}" or "{...}" */
    char *s = xasprintf("{\"%s\":%s%s%s", key, raw, rest[1] == '}' ? "" : ",", rest + 1);
    free(rest);
    return s;
}

/* The envelope around a member printed elsewhere: the id goes in as the
 * client's own text, which no jansson value could reproduce. */
static char *envelope(const char *id, const char *key, const char *text)
{
    return xasprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"%s\":%s}", id ? id : "null", key, text);
}

char *jsonrpc_result_text(const char *id, const char *result) { return envelope(id, "result", result); }

char *jsonrpc_result(const char *id, json_t *result)
{
    char *r = print_new(result ? result : json_object());
    char *s = envelope(id, "result", r);
    free(r);
    return s;
}

char *jsonrpc_error(const char *id, int code, const char *msg, json_t *data)
{
    json_t *e = json_object();
    json_object_set_new(e, "code", json_integer(code));
    json_object_set_new(e, "message", jsonrpc_string(msg));
    if (data)
        json_object_set_new(e, "data", data);
    char *r = print_new(e);
    char *s = envelope(id, "error", r);
    free(r);
    return s;
}

char *jsonrpc_notification(const char *method, const char *params)
{
    json_t *o = json_object();
    json_object_set_new(o, "jsonrpc", json_string("2.0"));
    json_object_set_new(o, "method", jsonrpc_string(method));
    char *head = print_new(o); /* {"jsonrpc":"2.0","method":"..."} */
    if (!params)
        return head;
    head[strlen(head) - 1] = '\0';
    char *s = xasprintf("%s,\"params\":%s}", head, params);
    free(head);
    return s;
}

json_t *jsonrpc_string(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    buf_t b = BUF_INIT;
    textenc_utf8_sanitize(s, strlen(s), &b);
    j = json_string(buf_cstr(&b));
    buf_free(&b);
    if (!j) {
        fprintf(stderr, "drun-mcp: out of memory building JSON\n");
        abort();
    }
    return j;
}

json_t *jsonrpc_add_object(json_t *obj, const char *key)
{
    json_t *o = json_object();
    json_object_set_new(obj, key, o);
    return o;
}

json_t *jsonrpc_add_array(json_t *obj, const char *key)
{
    json_t *a = json_array();
    json_object_set_new(obj, key, a);
    return a;
}
