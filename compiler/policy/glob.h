/* glob.h — glob patterns of policy paths (SPEC §3.3).
 *
 * '*' and '?' stay within one component, a whole "**" component spans any
 * number of components, and a glob that starts with "**" + "/" matches below
 * any directory. "\*" and "\?" are a literal star and question mark; every
 * other character, '[' ']' '{' '}' included, is literal.
 *
 * compiler/policy/ is on the include path, so this file shadows the C
 * library's <glob.h>; nothing here uses glob(3), and a file that would must
 * not be built with this folder on its path.
 */
#ifndef DRUN_GLOB_H
#define DRUN_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Does the glob component [b, e) hold an unescaped '*' or '?'? */
bool glob_comp_wild(const char *b, const char *e);

/* Does the absolute glob pattern match the absolute path exactly? */
bool glob_match(const char *pattern, const char *path);
/* Does it match path or one of path's ancestors (a cap covers what is below)? */
bool glob_match_prefix(const char *pattern, const char *path);
/* Could something at or below dir match (used to prune tree walks)? */
bool glob_may_match_below(const char *pattern, const char *dir);
/* The longest leading run of literal components of an absolute glob ("/" if
 * the pattern starts with a wildcard component). Result in a. */
const char *glob_literal_prefix(const char *pattern, arena_t *a);
/* Byte length of that literal head in the pattern as written (0 if none). */
size_t glob_literal_prefix_len(const char *pattern);
/* Escapes '*' and '?' of a literal path for use inside a glob. Result in a. */
const char *glob_escape(const char *lit, arena_t *a);
/* Removes glob escapes from a literal path ("\*" -> "*"). Result in a. */
const char *glob_unescape(const char *s, arena_t *a);
/* True if s holds an unescaped '*' or '?'. */
bool glob_has_wildcard(const char *s);

#endif
