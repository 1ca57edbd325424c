/* decide.h — the one access decision every enforcement point asks: the
 * lattice's level of a path (lattice_level_of), the rule that decided it, named as
 * explain names it, and, where the caller can look at the live tree, the
 * structural repository rule (SPEC §16): D/hooks and D/config are protected
 * for any directory D that could be a git repository by its structure,
 * whatever D is called (a submodule's .git/modules/lib, a bare repo.git).
 * Git takes a directory whose objects/ and refs/ are symlinks, or live in
 * the directory its `commondir` file names, so the candidate is any
 * directory holding a HEAD, whatever its type (fail closed).
 *
 * The SBPL backend, explain and lint ask with no probe (paths only: a
 * profile cannot look at a tree), and the Linux access-time layer
 * (compiler/sandbox/fuse_ops.c) asks with one; tests/unit/test_decide.c
 * holds the two to the same answer on a table of paths.
 */
#ifndef DRUN_DECIDE_H
#define DRUN_DECIDE_H

#include "lattice.h"

/* Is the directory dir (absolute, normalised) a git repository candidate
 * (it holds a HEAD)? The caller's probe, which must look by fd, never
 * follow a symlink, answer false only when dir or its HEAD is absent, and
 * true when it cannot tell (fail closed). */
typedef bool (*decide_repo_fn)(void *ctx, const char *dir);

typedef struct fs_verdict {
    level_t level;       /* what the sandbox may do with the path */
    level_t grant_level; /* before any cap */
    const rrule_t *rule; /* what decided: the lowest cap that lowered it, else the grant;
                            NULL when no grant covers the path or the structural rule decided */
    const char *builtin; /* the structural rule's name when it decided ("protect.git_hooks"), else NULL */
} fs_verdict_t;

/* The level of abs (absolute, normalised) under r with the session roots,
 * and why (out, may be NULL). probe NULL: paths only. */
level_t decide_path(const resolved_t *r, const roots_t *roots, const char *abs, decide_repo_fn probe, void *ctx,
                    fs_verdict_t *out);

/* The deciding rule of v as explain names it (a config rule as
 * FILE:LINE:COL KEY "PATTERN", a built-in as ORIGIN "PATTERN", the
 * structural rule as "protect.git_hooks (a repository by its structure:
 * HEAD, objects/, refs/)"), appended to out; "no grant covers it" when
 * nothing does. */
void decide_rule_text(const fs_verdict_t *v, buf_t *out);

/* Would creating name in dir make dir a repository by its structure while
 * it already holds a config or hooks the sandbox wrote? probe answers for
 * dir as it would be with name added (the caller checks the other two
 * parts and the config/hooks). Only the names "HEAD", "objects", "refs"
 * can complete a repository. */
bool decide_completes_repo_name(const char *name);

/* Would making name (any type) move where git reads a repository's
 * config, hooks and objects from? "commondir": refused everywhere the
 * layer decides, since whether a HEAD will stand beside it later cannot
 * be known (a linked worktree's own commondir is protected by name). */
bool decide_redirects_repo_name(const char *name);

#endif
