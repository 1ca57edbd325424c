/* path.h — absolute filesystem path strings: normalisation, ancestry, depth,
 * joining, components. Lexical only: nothing here touches the filesystem.
 */
#ifndef DRUN_PATH_H
#define DRUN_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

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

/* Steps to the next component of a path or glob: [*b, *e), and *s past it.
 * False at the end. */
bool path_next_comp(const char **s, const char **b, const char **e);

#endif
