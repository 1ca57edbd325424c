/* access.h — the one decision for every workspace path a tool touches.
 *
 * session_read_file, session_write_file, session_list_files and
 * session_fetch's save_as ask lattice_level_of() (compiler/lattice.h), the function
 * the sandbox's mounts are planned from, on the resolved form of the policy
 * in force for the call, with the session's workspace and scratch dir as
 * roots (SPEC §12). What a command inside the sandbox could not read, no tool
 * reads; what it could not write (deny_write, [protect], runtime-owned
 * paths), no tool writes. A refusal names the deciding rule the way explain
 * does: "config.toml:3:14 filesystem.deny_write \"**\/secret.txt\"".
 */
#ifndef DRUN_RT_ACCESS_H
#define DRUN_RT_ACCESS_H

#include <stdbool.h>
#include <sys/stat.h>

#include "drun_policy.h"
#include "tools.h"

/* Does the policy in force give the sandbox `need` (LVL_READ or LVL_WRITE)
 * on rel, a normalised workspace-relative path ("" = the workspace)? For
 * LVL_WRITE every directory the write would create (each missing ancestor of
 * rel) must be writable too. false with a sentence appended to *why naming
 * the path, the level the sandbox has there and the deciding rule. Fails
 * closed: when the policy cannot be evaluated, nothing is allowed. */
bool access_allows(tool_call_t *tc, session_t *s, const char *rel, level_t need, buf_t *why);

/* access_allows, failing the call (tools_fail) with its sentence, prefixed by
 * what ("" or e.g. "save_as: "), when it says no. */
bool access_require(tool_call_t *tc, session_t *s, const char *rel, level_t need, const char *what);

/* For many paths of one call (a listing): the evaluation set up once. */
typedef struct access access_t;

/* Never NULL; a policy that cannot be evaluated answers LVL_NONE to all. */
access_t *access_begin(tool_call_t *tc, session_t *s);
void access_end(access_t *a);

/* access_allows, with a's setup. */
bool access_check(access_t *a, const char *rel, level_t need, buf_t *why);

/* The level the sandbox has on rel (no ancestors checked). */
level_t access_level(access_t *a, const char *rel);

/* Is the existing entry rel (st: its lstat) a placeholder: an empty
 * directory or an empty, singly linked regular file standing where the
 * sandbox blocks a protected path (the path itself is below write, or a
 * protected path lies beneath it: the .git made to block .git/hooks)?
 * dirfd/name reach it for the emptiness check. */
bool access_is_placeholder(access_t *a, const char *rel, int dirfd, const char *name,
                           const struct stat *st);

#endif
