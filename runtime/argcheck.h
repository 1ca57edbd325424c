/* argcheck.h — validating tool arguments against the tool's own inputSchema.
 *
 * The schema a client sees in tools/list is the one the server enforces:
 * there is no second, hand-written check to drift from it. Supported
 * keywords (all the tool schemas use): type (one name or a list), properties,
 * required, additionalProperties (false or a schema), enum, minLength and
 * maxLength (counted in code points, as JSON Schema does), minimum, maximum,
 * items, minItems, maxItems. Annotation keywords (description, default,
 * title, examples) are ignored.
 */
#ifndef DRUN_RT_ARGCHECK_H
#define DRUN_RT_ARGCHECK_H

#include <stdbool.h>

#include <jansson.h>

#include "drun_policy.h"

/* True when v satisfies schema. Otherwise false with one sentence in why
 * that names the argument ("arguments.timeout_ms") and what is expected. */
bool argcheck(const json_t *schema, const json_t *v, buf_t *why);

#endif
