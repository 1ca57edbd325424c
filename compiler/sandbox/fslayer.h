/* fslayer.h — the access-time layer (SPEC §16), as the rest of the runner
 * sees it; nothing outside compiler/sandbox/ includes it.
 *
 *   fuse_ops.c    the filesystem: FUSE low-level operations over one granted
 *                 tree, by fd, each checked with decide_path() (decide.h)
 *   fuse_serve.c  the runner's side: which trees, the daemon (a child of
 *                 the runner), its mounts, its death, the plan's binds,
 *                 and the record of refusals
 *   fuse_exec.c   the daemon as a fresh run of this binary: what the runner
 *                 hands it (fuse_exec.h), and how it rebuilds the policy
 */
#ifndef DRUN_FSLAYER_H
#define DRUN_FSLAYER_H

#include <stdbool.h>
#include <sys/types.h>

#include "lattice.h"

/* ---- fuse_ops.c (runs in the daemon) ---- */

/* The record of refusals, shared by the daemon (writes) and the runner
 * (reads at the end): one line per distinct refusal. */
typedef struct fsl_log fsl_log_t;
void fslayer_log_refusal(fsl_log_t *log, const char *op, const char *path, const char *rule);

/* One served tree. */
typedef struct lfs lfs_t;
/* root_fd: an O_PATH|O_DIRECTORY fd of the tree (taken over); root_abs:
 * where the tree is in the sandbox and on the host (absolute, resolved). */
lfs_t *fslayer_fs_new(const resolved_t *r, const roots_t *roots, const char *root_abs, int root_fd, fsl_log_t *log);
/* The operations, for fuse_session_new (a struct fuse_lowlevel_ops *). */
const void *fslayer_fs_ops(size_t *size);
void fslayer_fs_free(lfs_t *fs);
/* The path of node (an inode of fs, as the kernel names it) plus "/name"
 * when name is set, into out, for the watchdog: false, out untouched, when
 * the node table's lock is held (the watchdog never waits on it). */
bool fslayer_fs_node_path_try(lfs_t *fs, const void *node, const char *name, buf_t *out);

/* ---- fuse_serve.c, in the daemon ---- */

/* What the calling worker is serving (op, the node of fs, the name it was
 * given or NULL), noted at the start of each operation for the watchdog:
 * into the worker's own slot, lock-free; nothing outside a worker. */
void fslayer_busy_note(const char *op, lfs_t *fs, const void *node, const char *name);

/* ---- fuse_serve.c (runs in the runner) ---- */

typedef struct fsl fsl_t;

/* Is the layer usable here: /dev/fuse opens (and, when not root,
 * fusermount3 is installed)? The reason in *why when not. */
bool fslayer_available(const char **why);

/* Picks the trees of r under roots that the layer serves (the topmost
 * user grants that are directories: workspace, a session's scratch dir,
 * allow_read/allow_write/mount_allowlist), starts the daemon and mounts one
 * FUSE filesystem per tree under the state dir. ws_fd: the workspace
 * directory (dup'd). NULL with *err when it cannot (the caller then falls
 * back to mounts and says so); NULL without *err when nothing is served. */
fsl_t *fslayer_start(const resolved_t *r, const roots_t *roots, int ws_fd, char **err);

/* A view of r for the mount planner: the caps that fall inside served
 * trees left out (the layer enforces them at access time), so that the
 * planner neither walks those trees nor places blocks in them. Caller frees
 * with fslayer_view_free (r must outlive it). */
resolved_t *fslayer_view(const fsl_t *l, const resolved_t *r, const roots_t *roots);
void fslayer_view_free(resolved_t *v);

/* Rewrites a run's bwrap options (from index from): nothing is mounted
 * strictly inside a served tree, and each served tree is bound from its
 * FUSE mount, over the tree's own bind. */
void fslayer_rewrite(const fsl_t *l, void *strvec, size_t from);

/* Watches the daemon from a thread: if it ends while bwrap (pid) runs, bwrap
 * is killed (its sandbox with it) and the run reports it. */
void fslayer_watch(fsl_t *l, pid_t bwrap_pid);

/* After the sandbox is gone: unmounts, stops the daemon, and returns true
 * when the daemon had died during the run. summary: when not NULL, gets a
 * short text of the refusals (caller frees; NULL when none). l is freed. */
bool fslayer_finish(fsl_t *l, char **summary);

/* For the runner: the layer over the trees of r under roots. unusable is
 * NULL when fslayer_available said yes, else the reason it gave (the runner
 * asks once, before it decides to prestart bwrap). NULL without *err when
 * none is served or the layer cannot be used on this host (then a line on
 * stderr says which caps hold only where the mount plan could place a
 * mount); NULL with *err (caller frees) when it can be used but did not
 * start: the run must be refused, never fall back. */
fsl_t *fslayer_begin(const resolved_t *r, const roots_t *roots, int ws_fd, const char *unusable, char **err);

/* For a one-off run, after bwrap has been reaped: waits for the sandbox's
 * pid 1 (pid1 > 0), finishes the layer (fslayer_finish) and prints the refusals'
 * summary and, if the daemon died during the run, why the run was stopped
 * (*died). */
void fslayer_end_run(fsl_t *l, pid_t pid1, bool *died);

/* The refusals so far, as JSON-ready lines "time\top\tpath\trule" (caller
 * frees), deduplicated, at most max; *total: how many there were. */
char *fslayer_refusals(const fsl_t *l, size_t max, size_t *total);

#endif
