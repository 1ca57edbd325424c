/* jsonrpc.c — JSON-RPC 2.0 message classification and response text.
 *
 * Parsing is cJSON's, preceded by one strict pre-scan of the bytes that
 * rejects what cJSON would let through but a JSON peer must not see echoed:
 * invalid UTF-8, raw control characters inside strings, and (flagged, not
 * rejected) \u0000 escapes that cJSON would silently truncate at.
 */
#include "jsonrpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "textenc.h"

/* ---- a scanner over JSON text that cJSON already accepted -------------------- */

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
    if (p >= end)
        return end;
    if (*p == '"')
        return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = skip_string(p, end);
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return end;
    }
    while (p < end && !strchr(",}] \t\r\n", *p))
        p++;
    return p;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Does the JSON string at p (at '"') decode to the ASCII text key? */
static bool string_equals(const char *p, const char *end, const char *key)
{
    size_t k = 0, klen = strlen(key);
    for (p++; p < end && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            if (++p >= end)
                return false;
            switch (*p) {
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                if (end - p < 5)
                    return false;
                int v = 0;
                for (int i = 1; i <= 4; i++) {
                    int h = hexval(p[i]);
                    if (h < 0)
                        return false;
                    v = v * 16 + h;
                }
                if (v == 0 || v >= 0x80)
                    return false; /* keys we look for are plain ASCII */
                c = (char)v;
                p += 4;
                break;
            }
            default: c = *p; break; /* \" \\ \/ */
            }
        }
        if (k >= klen || key[k++] != c)
            return false;
    }
    return k == klen;
}

bool jr_raw_member(const char *text, size_t len, const char *key, const char **start,
                   size_t *vlen)
{
    const char *end = text + len, *p = skip_ws(text, end);
    if (p >= end || *p != '{')
        return false;
    p++;
    for (;;) {
        p = skip_ws(p, end);
        if (p >= end || *p != '"')
            return false; /* '}' of an empty object, or not JSON */
        bool match = string_equals(p, end, key);
        p = skip_ws(skip_string(p, end), end);
        if (p >= end || *p != ':')
            return false;
        const char *v = skip_ws(p + 1, end);
        p = skip_value(v, end);
        if (match) {
            *start = v;
            *vlen = (size_t)(p - v);
            return true;
        }
        p = skip_ws(p, end);
        if (p >= end || *p != ',')
            return false;
        p++;
    }
}

/* RFC 8259 §6 number grammar, exactly: cJSON (through strtod) also takes
 * "01", "1." and "-.5", which a strict peer would reject if echoed. */
static bool strict_number(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return false;
    if (s[i] == '0')
        i++;
    else if (s[i] >= '1' && s[i] <= '9')
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return false;
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    return i == n;
}

char *jr_id_key(const char *text, size_t len)
{
    if (len == 0)
        return NULL;
    if (text[0] == '"') {
        cJSON *s = cJSON_ParseWithLength(text, len);
        char *key = NULL;
        if (s && cJSON_IsString(s))
            key = xasprintf("s:%s", s->valuestring);
        cJSON_Delete(s);
        return key;
    }
    if (!strict_number(text, len))
        return NULL;
    char *key = xmalloc(len + 3);
    memcpy(key, "n:", 2);
    memcpy(key + 2, text, len);
    key[len + 2] = '\0';
    return key;
}

/* The pre-scan: strings must hold no raw control characters (RFC 8259 §7);
 * *has_nul reports a \u0000 escape. The bytes are already known to be UTF-8. */
static bool prescan(const char *p, size_t n, bool *has_nul)
{
    const char *end = p + n;
    bool in_str = false;
    *has_nul = false;
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (!in_str) {
            if (c == '"')
                in_str = true;
            continue;
        }
        if (c < 0x20)
            return false;
        if (c == '"')
            in_str = false;
        else if (c == '\\') {
            if (p + 1 < end && p[1] == 'u' && end - p >= 6 && p[2] == '0' && p[3] == '0' &&
                p[4] == '0' && p[5] == '0')
                *has_nul = true;
            p++;
        }
    }
    return true;
}

static void invalid(jr_msg_t *m, int code, const char *msg)
{
    m->kind = JR_INVALID;
    m->error = code;
    m->error_msg = msg;
}

void jr_parse(const char *text, size_t len, jr_msg_t *m)
{
    memset(m, 0, sizeof *m);
    if (!rt_utf8_valid(text, len, false)) {
        invalid(m, JR_PARSE_ERROR, "Parse error: the message is not valid UTF-8 JSON");
        return;
    }
    if (!prescan(text, len, &m->has_nul)) {
        invalid(m, JR_PARSE_ERROR, "Parse error: control character inside a JSON string");
        return;
    }
    const char *end = NULL;
    m->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!m->root || skip_ws(end, text + len) != text + len) {
        invalid(m, JR_PARSE_ERROR, "Parse error: the message is not valid JSON");
        return;
    }
    if (cJSON_IsArray(m->root)) {
        invalid(m, JR_INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not supported; send one message at a time");
        return;
    }
    if (!cJSON_IsObject(m->root)) {
        invalid(m, JR_INVALID_REQUEST, "Invalid Request: a message must be a JSON object");
        return;
    }

    const char *raw;
    size_t rawlen;
    bool has_id = jr_raw_member(text, len, "id", &raw, &rawlen);
    if (has_id) {
        const cJSON *idv = cJSON_GetObjectItemCaseSensitive(m->root, "id");
        if (cJSON_IsString(idv) || cJSON_IsNumber(idv))
            m->id_key = jr_id_key(raw, rawlen);
        if (!m->id_key && cJSON_IsNumber(idv)) {
            /* "01", "1.": numbers only cJSON's strtod takes. */
            invalid(m, JR_PARSE_ERROR, "Parse error: the message is not valid JSON");
            return;
        }
        if (!m->id_key) {
            /* null, boolean, object, array, or a number only cJSON accepts:
             * MCP ids are strings or numbers, so answer with a null id. */
            invalid(m, JR_INVALID_REQUEST,
                    "Invalid Request: the id must be a string or a number");
            return;
        }
        m->id = xstrndup(raw, rawlen);
    }

    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(m->root, "jsonrpc");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(m->root, "method");
    if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") != 0) {
        invalid(m, JR_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!method) {
        if (has_id && (cJSON_GetObjectItemCaseSensitive(m->root, "result") ||
                       cJSON_GetObjectItemCaseSensitive(m->root, "error"))) {
            m->kind = JR_RESPONSE;
            return;
        }
        invalid(m, JR_INVALID_REQUEST, "Invalid Request: no \"method\"");
        return;
    }
    if (!cJSON_IsString(method)) {
        invalid(m, JR_INVALID_REQUEST, "Invalid Request: \"method\" must be a string");
        return;
    }
    m->method = method->valuestring;
    m->kind = has_id ? JR_REQUEST : JR_NOTIFICATION;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(m->root, "params");
    if (params && !cJSON_IsObject(params)) {
        /* MCP params are always objects (by-name). The envelope is sound, so
         * this is an error of the request (answered -32602 by the dispatcher,
         * HTTP 200), not an unusable message; a notification is ignored. */
        m->bad_params = true;
        return;
    }
    m->params = params;
    if (params && jr_raw_member(text, len, "params", &raw, &rawlen)) {
        const char *meta, *tok, *rid;
        size_t metalen, toklen, ridlen;
        if (jr_raw_member(raw, rawlen, "_meta", &meta, &metalen) &&
            jr_raw_member(meta, metalen, "progressToken", &tok, &toklen)) {
            /* Validated like an id: only strings and strict numbers. */
            char *k = jr_id_key(tok, toklen);
            if (k)
                m->progress_token = xstrndup(tok, toklen);
            free(k);
        }
        if (jr_raw_member(raw, rawlen, "requestId", &rid, &ridlen))
            m->cancel_key = jr_id_key(rid, ridlen);
    }
}

void jr_msg_free(jr_msg_t *m)
{
    cJSON_Delete(m->root);
    free(m->id);
    free(m->id_key);
    free(m->progress_token);
    free(m->cancel_key);
    memset(m, 0, sizeof *m);
}

/* ---- building ------------------------------------------------------------------ */

char *jr_print(const cJSON *item)
{
    char *s = cJSON_PrintUnformatted(item);
    if (!s) {
        /* cJSON returns NULL only when its allocator fails: the same policy
         * as xmalloc (buf.h) applies. */
        fprintf(stderr, "drun-mcp: out of memory printing JSON\n");
        abort();
    }
    return s;
}

static cJSON *envelope(const char *id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "jsonrpc", "2.0");
    cJSON_AddItemToObject(o, "id", id ? cJSON_CreateRaw(id) : cJSON_CreateNull());
    return o;
}

static char *finish(cJSON *o)
{
    char *s = jr_print(o);
    cJSON_Delete(o);
    return s;
}

char *jr_result(const char *id, cJSON *result)
{
    cJSON *o = envelope(id);
    cJSON_AddItemToObject(o, "result", result ? result : cJSON_CreateObject());
    return finish(o);
}

char *jr_error(const char *id, int code, const char *msg, cJSON *data)
{
    cJSON *o = envelope(id);
    cJSON *e = cJSON_AddObjectToObject(o, "error");
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    if (data)
        cJSON_AddItemToObject(e, "data", data);
    return finish(o);
}

char *jr_notification(const char *method, cJSON *params)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "jsonrpc", "2.0");
    cJSON_AddStringToObject(o, "method", method);
    if (params)
        cJSON_AddItemToObject(o, "params", params);
    return finish(o);
}
