/* jsonrpc.h — JSON-RPC 2.0 framing: one message text in, one classified
 * message out; responses and notifications built back to one line of text.
 * JSON is jansson's, read strictly: one value, UTF-8, RFC 8259 numbers, no
 * duplicate key, no raw control character (jansson's defaults plus
 * JSON_REJECT_DUPLICATES).
 *
 * Ids are echoed as the exact JSON text the client sent, whatever their
 * type or size: a number such as 12345678901234567890123 or -0.5e+3 has no
 * jansson value that prints back the same bytes.
 */
#ifndef DRUN_RT_JSONRPC_H
#define DRUN_RT_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The standard error codes. */
enum {
    JSONRPC_PARSE_ERROR = -32700,
    JSONRPC_INVALID_REQUEST = -32600,
    JSONRPC_METHOD_NOT_FOUND = -32601,
    JSONRPC_INVALID_PARAMS = -32602,
    JSONRPC_INTERNAL_ERROR = -32603,
};

typedef enum {
    JSONRPC_REQUEST,      /* method + id: must be answered */
    JSONRPC_NOTIFICATION, /* method, no id: never answered */
    JSONRPC_RESPONSE,     /* result or error + id: a reply to a server request */
    JSONRPC_INVALID,      /* answer with error/error_msg (id when it could be read) */
} jsonrpc_kind_t;

typedef struct jsonrpc_msg {
    jsonrpc_kind_t kind;
    json_t *root;         /* the parsed message, owned; NULL on a parse error */
    const char *method;   /* borrowed from root (requests, notifications) */
    const json_t *params; /* borrowed; an object or NULL */
    bool bad_params;      /* params was there but not an object: a request gets -32602 */
    char *id;             /* exact JSON text of the id, owned; NULL when absent */
    char *id_key;         /* the id as a lookup key ("s:" string / "n:" number text) */
    bool has_nul;         /* some string held \u0000, which a C string cannot keep */
    /* Two MCP values kept as exact text for the same reason as the id: */
    char *progress_token; /* raw params._meta.progressToken (string/number), or NULL */
    char *cancel_key;     /* params.requestId as an id key, or NULL */
    int error;            /* JSONRPC_INVALID: the code to answer with */
    char *error_msg;      /* JSONRPC_INVALID: the message, owned */
} jsonrpc_msg_t;

/* Parses and classifies one message of len bytes (need not be
 * NUL-terminated). Never fails: anything unusable comes back as JSONRPC_INVALID
 * with the error to send. Batches (arrays) are JSONRPC_INVALID: MCP 2025-06-18
 * and later dropped them, and answering only part of one is worse than a
 * clear refusal. Every number in root is a real (JSON_DECODE_INT_AS_REAL):
 * read numbers with json_number_value. Free with jsonrpc_msg_free. */
void jsonrpc_parse(const char *text, size_t len, jsonrpc_msg_t *m);
void jsonrpc_msg_free(jsonrpc_msg_t *m);

/* One-line JSON texts (no trailing newline), caller frees. id is the raw id
 * text or NULL for null. jsonrpc_result takes ownership of result (NULL: {}),
 * jsonrpc_error of data (may be NULL). jsonrpc_result_text takes the result as JSON
 * text, jsonrpc_notification its params (may be NULL). */
char *jsonrpc_result(const char *id, json_t *result);
char *jsonrpc_result_text(const char *id, const char *result);
char *jsonrpc_error(const char *id, int code, const char *msg, json_t *data);
char *jsonrpc_notification(const char *method, const char *params);

/* Prints item compactly on one line; caller frees. Never NULL. */
char *jsonrpc_print(const json_t *item);

/* Prints the object obj with "key": raw as its first member, raw being
 * exact JSON text (an echoed progress token); caller frees. */
char *jsonrpc_print_with_raw(const json_t *obj, const char *key, const char *raw);

/* A new JSON string of s, never NULL: jansson refuses invalid UTF-8, which
 * here becomes U+FFFD (textenc.h) rather than a silently missing member. */
json_t *jsonrpc_string(const char *s);

/* Adds a new empty object / array to obj as key and returns it (borrowed). */
json_t *jsonrpc_add_object(json_t *obj, const char *key);
json_t *jsonrpc_add_array(json_t *obj, const char *key);

#endif
