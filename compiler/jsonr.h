/* jsonr.h — how the compiler reads JSON (facts files, manifests): jansson,
 * strictly. One value and nothing after it, no duplicate key (which of two
 * would count is not a reader's guess to make), no U+0000 inside a string.
 * jansson, the one JSON library (the runtime's JSON-RPC uses it too): Debian
 * ships its static archive, and drun-policy is linked static so that each
 * `drun-policy run` starts without the dynamic loader (README.md). */
#ifndef DRUN_JSONR_H
#define DRUN_JSONR_H

#include <jansson.h>

static inline json_t *jsonr_load(const char *text, size_t len, json_error_t *e)
{
    return json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, e);
}

#endif
