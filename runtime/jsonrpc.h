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
    JR_PARSE_ERROR = -32700,
    JR_INVALID_REQUEST = -32600,
    JR_METHOD_NOT_FOUND = -32601,
    JR_INVALID_PARAMS = -32602,
    JR_INTERNAL_ERROR = -32603,
};

typedef enum {
    JR_REQUEST,      /* method + id: must be answered */
    JR_NOTIFICATION, /* method, no id: never answered */
    JR_RESPONSE,     /* result or error + id: a reply to a server request */
    JR_INVALID,      /* answer with error/error_msg (id when it could be read) */
} jr_kind_t;

typedef struct jr_msg {
    jr_kind_t kind;
    json_t *root;          /* the parsed message, owned; NULL on a parse error */
    const char *method;    /* borrowed from root (requests, notifications) */
    const json_t *params;  /* borrowed; an object or NULL */
    bool bad_params;       /* params was there but not an object: a request gets -32602 */
    char *id;              /* exact JSON text of the id, owned; NULL when absent */
    char *id_key;          /* the id as a lookup key ("s:" string / "n:" number text) */
    bool has_nul;          /* some string held \u0000, which a C string cannot keep */
    /* Two MCP values kept as exact text for the same reason as the id: */
    char *progress_token;  /* raw params._meta.progressToken (string/number), or NULL */
    char *cancel_key;      /* params.requestId as an id key, or NULL */
    int error;             /* JR_INVALID: the code to answer with */
    char *error_msg;       /* JR_INVALID: the message, owned */
} jr_msg_t;

/* Parses and classifies one message of len bytes (need not be
 * NUL-terminated). Never fails: anything unusable comes back as JR_INVALID
 * with the error to send. Batches (arrays) are JR_INVALID: MCP 2025-06-18
 * and later dropped them, and answering only part of one is worse than a
 * clear refusal. Every number in root is a real (JSON_DECODE_INT_AS_REAL):
 * read numbers with json_number_value. Free with jr_msg_free. */
void jr_parse(const char *text, size_t len, jr_msg_t *m);
void jr_msg_free(jr_msg_t *m);

/* One-line JSON texts (no trailing newline), caller frees. id is the raw id
 * text or NULL for null. jr_result takes ownership of result (NULL: {}),
 * jr_error of data (may be NULL). jr_result_text takes the result as JSON
 * text, jr_notification its params (may be NULL). */
char *jr_result(const char *id, json_t *result);
char *jr_result_text(const char *id, const char *result);
char *jr_error(const char *id, int code, const char *msg, json_t *data);
char *jr_notification(const char *method, const char *params);

/* Prints item compactly on one line; caller frees. Never NULL. */
char *jr_print(const json_t *item);

/* Prints the object obj with "key": raw as its first member, raw being
 * exact JSON text (an echoed progress token); caller frees. */
char *jr_print_with_raw(const json_t *obj, const char *key, const char *raw);

/* A new JSON string of s, never NULL: jansson refuses invalid UTF-8, which
 * here becomes U+FFFD (textenc.h) rather than a silently missing member. */
json_t *jr_string(const char *s);

/* Adds a new empty object / array to obj as key and returns it (borrowed). */
json_t *jr_add_object(json_t *obj, const char *key);
json_t *jr_add_array(json_t *obj, const char *key);

#endif
