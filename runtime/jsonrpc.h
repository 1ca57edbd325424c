/* jsonrpc.h — JSON-RPC 2.0 framing: one message text in, one classified
 * message out; responses and notifications built back to one line of text.
 *
 * cJSON parses numbers into doubles, which would turn the id
 * 12345678901234567890 into 1.2345678901234567e+19. Ids are therefore kept as
 * the exact JSON text the client sent and echoed verbatim (cJSON "raw" items),
 * whatever their type or size.
 */
#ifndef DRUN_RT_JSONRPC_H
#define DRUN_RT_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

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
    cJSON *root;          /* the parsed message, owned; NULL on a parse error */
    const char *method;   /* borrowed from root (requests, notifications) */
    const cJSON *params;  /* borrowed; an object or NULL */
    bool bad_params;      /* params was there but not an object: a request gets -32602 */
    char *id;             /* exact JSON text of the id, owned; NULL when absent */
    char *id_key;         /* the id as a lookup key ("s:" string / "n:" number text) */
    bool has_nul;         /* some string held \u0000, which cJSON cannot keep */
    /* Two MCP values kept as exact text for the same reason as the id: */
    char *progress_token; /* raw params._meta.progressToken (string/number), or NULL */
    char *cancel_key;     /* params.requestId as an id key, or NULL */
    int error;            /* JR_INVALID: the code to answer with */
    const char *error_msg;/* JR_INVALID: the message (static) */
} jr_msg_t;

/* Parses and classifies one message of len bytes (need not be
 * NUL-terminated). Never fails: anything unusable comes back as JR_INVALID
 * with the error to send. Batches (arrays) are JR_INVALID: MCP 2025-06-18
 * and later dropped them, and answering only part of one is worse than a
 * clear refusal. Free with jr_msg_free. */
void jr_parse(const char *text, size_t len, jr_msg_t *m);
void jr_msg_free(jr_msg_t *m);

/* The exact JSON text of member key of the JSON object spanning text[0..len)
 * (first occurrence, as cJSON finds it), via *start and *vlen; false when text is
 * not an object or has no such member. text must be valid JSON. */
bool jr_raw_member(const char *text, size_t len, const char *key, const char **start,
                   size_t *vlen);

/* The id key (as in jr_msg_t.id_key) of the JSON value text[0..len): a string
 * or a number. NULL for any other type. Caller frees. */
char *jr_id_key(const char *text, size_t len);

/* One-line JSON texts (no trailing newline), caller frees. id is the raw id
 * text or NULL for null. jr_result takes ownership of result, jr_error of
 * data (may be NULL), jr_notification of params (may be NULL). */
char *jr_result(const char *id, cJSON *result);
char *jr_error(const char *id, int code, const char *msg, cJSON *data);
char *jr_notification(const char *method, cJSON *params);

/* Prints item compactly on one line; caller frees. Never NULL. */
char *jr_print(const cJSON *item);

#endif
