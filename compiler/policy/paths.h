/* paths.h — policy path syntax (SPEC §3.3), normalisation and globs.
 *
 * A policy path is absolute ("/…"), home-relative ("~", "~/…", "${HOME}/…"),
 * or session-relative ("${WORKSPACE}/…", "${SCRATCH}/…"). An entry holding an
 * unescaped '*' or '?' is a glob: '*' and '?' stay within one component, a
 * whole "**" component spans any number of components, and a glob that starts
 * with "**" + "/" matches below any directory. "\*" and "\?" are a literal
 * star and question mark; every other character, '[' ']' '{' '}' included,
 * is literal.
 */
#ifndef DRUN_PATHS_H
#define DRUN_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "policy.h"

/* Longest entry ppath_parse accepts, plus one: Linux's PATH_MAX (4096, the
 * terminator included). Longer entries are refused with a located error. */
#define PPATH_MAX 4096

/* Parses one entry. On success fills *out (strings in a) and returns true.
 * On failure returns false with *msg (a static-or-arena sentence that says
 * what to write instead) and *bad_off, the byte offset in s to blame. */
bool ppath_parse(const char *s, size_t len, bool allow_glob, arena_t *a, ppath_t *out,
                 const char **msg, size_t *bad_off);

/* Writes the path back in policy syntax ("~/.ssh", "${WORKSPACE}/x"). */
void ppath_format(const ppath_t *p, buf_t *out);

/* Normalises an absolute filesystem path: collapses "//" and "/./", removes a
 * trailing '/', resolves ".." lexically. Returns NULL for a relative path.
 * Result in a. */
const char *path_normalize(const char *path, arena_t *a);

/* a == b or a is an ancestor of b (both absolute, normalised). "/" is the
 * ancestor of everything. */
bool path_is_under(const char *b, const char *a);
/* Number of components ("/" is 0, "/a/b" is 2). */
unsigned path_depth(const char *p);
/* Joins an absolute base and a relative rest ("" → base). Result in a. */
const char *path_join(const char *base, const char *rel, arena_t *a);

/* Joins two relative paths ("" + "x" = "x", "a" + "x" = "a/x"). Result in a. */
const char *path_join_rel(const char *rel, const char *more, arena_t *a);

/* ---- globs ------------------------------------------------------------------------ */

/* Steps to the next component of a path or glob: [*b, *e), and *s past it.
 * False at the end. */
bool path_next_comp(const char **s, const char **b, const char **e);
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
