/* ppath.h — policy path entries (SPEC §3.3): parsed into ppath_t and written back.
 *
 * A policy path is absolute ("/…"), home-relative ("~", "~/…", "${HOME}/…"),
 * or session-relative ("${WORKSPACE}/…", "${SCRATCH}/…"). An entry holding an
 * unescaped '*' or '?' is a glob (glob.h says how globs match). "\*" and "\?"
 * are a literal star and question mark; every other character, '[' ']' '{' '}'
 * included, is literal.
 */
#ifndef DRUN_PPATH_H
#define DRUN_PPATH_H

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

#endif
