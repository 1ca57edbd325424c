/* sessfs.h — files crossing between the host and a session workspace:
 * session_mount copies a host file or tree in (mountin.c), session_export
 * writes a checkpoint out (export.c). Both check the host path against
 * mount_allowlist and then touch the host only through directory fds
 * beneath the allowlisted directory: no symlink is ever followed on the host
 * side (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, O_NOFOLLOW), and no ".."
 * is accepted anywhere. The policy's say on each file (deny_read for a
 * mount; protected names and deny_write for an export) comes from the
 * caller through a callback that asks the lattice.
 */
#ifndef DRUN_RT_SESSFS_H
#define DRUN_RT_SESSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "drun_policy.h"

/* A file left out, and why (a sentence fragment: "hidden by the policy"). */
typedef struct sessfs_skip {
    char *path;
    char *reason;
} sessfs_skip_t;

typedef VEC(sessfs_skip_t) sessfs_skips_t;

void sessfs_skips_free(sessfs_skips_t *v);

/* Where host path `path` (absolute, as the model sent it) lies in the
 * allowlist: the directory fd of the allowlist entry that holds it (opened
 * by its resolved name), and path relative to it. Lexical checks first
 * (absolute, no "..", no control characters). false with *err: a sentence
 * naming the allowlist (or saying it is empty: an empty list allows
 * nothing). canonical: resolve symlinks in path first (a mount: the source
 * must exist); else path is matched as written (an export target may not
 * exist yet) and its components are later opened without following. */
bool sessfs_locate(const char *path, char *const *allow, size_t nallow, bool canonical,
                   int *rootfd, char **rel, char **root_path, char **err);

/* ---- mount ---------------------------------------------------------------------------- */

typedef struct mountin_req {
    char *const *allow; /* mount_allowlist, absolute */
    size_t nallow;
    const char *source; /* absolute host path */
    int ws_fd;          /* the workspace */
    const char *target; /* normalised workspace-relative target, not "" */
    uint64_t budget;    /* bytes the workspace may still take */
    ckpt_owner_t own;   /* owner of what is written (uid -1: the runtime's) */
    /* May the sandbox read host path abs (the lattice: deny_read)? */
    bool (*readable)(void *ctx, const char *abs);
    void *ctx;
} mountin_req_t;

typedef struct mountin_res {
    uint64_t files, links, dirs, bytes;
    sessfs_skips_t skipped; /* host-relative to the source */
    char *source;           /* the canonical source (owned) */
} mountin_res_t;

/* Copies r->source into the workspace at r->target (which must not exist;
 * missing parents are made). Fails, leaving the workspace as it was, when
 * the source is outside the allowlist, changes into a symlink while it is
 * opened, or does not fit the budget. 0, or -1 with *err. */
int mountin_copy(const mountin_req_t *r, mountin_res_t *res, char **err);
void mountin_res_free(mountin_res_t *res);

/* ---- export --------------------------------------------------------------------------- */

/* An export under way, as the policy callback sees it. */
typedef struct export_tree export_tree_t;

/* Is there an entry rel (output_dir-relative, normalised; "" the directory
 * itself) on the host beneath output_dir (any type, found with no symlink
 * followed; *on_host set when there) or in the checkpoint being exported
 * (a file or a directory holding one)? */
bool export_tree_has(const export_tree_t *t, const char *rel, bool *on_host);

typedef struct export_req {
    char *const *allow;     /* mount_allowlist, absolute */
    size_t nallow;
    const char *output_dir; /* absolute host path (made when missing) */
    char *const *paths;     /* workspace-relative prefixes (n 0: every file) */
    size_t npaths;
    const char *checkpoint; /* id or label; NULL: the newest */
    bool dry_run, delete_extra;
    /* May workspace path rel be written to host path abs (t: the export,
     * to look at the host tree and the checkpoint)? NULL *reason: yes;
     * else a fragment saying why not (a protected name, deny_write, a
     * repository's config or hooks, a git redirection). */
    void (*refused)(void *ctx, const export_tree_t *t, const char *rel, const char *abs,
                    char **reason);
    void *ctx;
} export_req_t;

typedef struct export_res {
    ckpt_paths_t written, removed;
    sessfs_skips_t skipped;
    buf_t diff;       /* dry_run: what would change, as a unified diff */
    char *output_dir; /* as opened (owned) */
} export_res_t;

/* Writes checkpoint r->checkpoint of c below r->output_dir. 0, or -1 with
 * *err when nothing could be written at all (target outside the allowlist,
 * a symlink on the way to it, an unknown checkpoint). */
int export_run(ckpt_t *c, const export_req_t *r, export_res_t *res, char **err);
void export_res_free(export_res_t *res);

#endif
