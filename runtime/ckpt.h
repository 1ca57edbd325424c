/* ckpt.h — a session's checkpoints, kept with libgit2 (SPEC §14).
 *
 * One object store per session family (a session and every fork made from
 * it): a bare repository under STATE/objects/FAMILY, inside the runtime-owned
 * state dir, so no sandbox sees it (SPEC §13). Each session holds its own
 * ckpt_t: a repository handle on the shared store, the history (a list of
 * checkpoints, each a commit) and a stat cache of its workspace.
 *
 * The workspace is only ever read through its directory fd (openat with
 * O_NOFOLLOW, fstatat with AT_SYMLINK_NOFOLLOW): a symlink is recorded as a
 * symlink and never followed, so a command racing the walk cannot make the
 * runtime read a host file into the store. A file whose inode, size, mode,
 * mtime and ctime match the cache costs one fstatat; only changed files are
 * read and hashed. Trees are written by hand (not through git_treebuilder,
 * which refuses names like ".git" that workspaces hold). Empty directories,
 * FIFOs, sockets and device nodes are not recorded (as in git).
 *
 * Thread safety: every function locks the ckpt_t it is given; distinct
 * ckpt_t of one family may be used from different threads at once.
 */
#ifndef DRUN_RT_CKPT_H
#define DRUN_RT_CKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "drun_policy.h"

#define CKPT_LABEL_MAX 64

typedef VEC(char *) ckpt_paths_t;

/* One checkpoint, as session_history shows it. */
typedef struct ckpt_info {
    int64_t id;                            /* per session, increasing from 1 */
    char *label;                           /* NULL when none */
    char *tool;                            /* the tool that made it ("session_bash") */
    char *summary;                         /* its command or path, one line */
    int64_t time_ms;                       /* wall clock, ms since the epoch */
    ckpt_paths_t added, modified, deleted; /* workspace-relative file paths, sorted */
    char commit[41];                       /* hex id of its commit in the store */
} ckpt_info_t;

/* Who the files written into a workspace belong to (root runtime: the
 * sandbox user); uid (uid_t)-1 leaves them the runtime's. */
typedef struct ckpt_owner {
    uid_t uid;
    gid_t gid;
} ckpt_owner_t;

typedef struct ckpt ckpt_t;

/* Creates the object store of a new family at objects_fd/family (objects_fd:
 * the kept fd of STATE/objects, objects_path its absolute name) and a ckpt_t
 * on it with an empty history. NULL with *err (caller frees). */
ckpt_t *ckpt_create(int objects_fd, const char *objects_path, const char *family, char **err);

/* A new ckpt_t in src's family (sharing its objects) whose history is src's
 * up to and including checkpoint ref (NULL: the newest), labels included;
 * the workspace behind ws_fd (empty) is filled with that checkpoint's files.
 * NULL with *err. */
ckpt_t *ckpt_fork(ckpt_t *src, const char *ref, int ws_fd, const ckpt_owner_t *own, char **err);

/* Releases c; the family's store is removed with its last ckpt_t. A store
 * whose server died keeps no lock on its .lock file and is swept at the next
 * start with the session directories (sessions.c). */
void ckpt_free(ckpt_t *c);

/* Records the workspace behind ws_fd as a new checkpoint made by tool
 * (summary: its command or path) when it differs from the newest one, or
 * always when force is set (the first checkpoint, a rollback). Returns the
 * new checkpoint's id, 0 when nothing changed, -1 with *err. At most
 * max_keep checkpoints stay in the history (older ones are forgotten;
 * max_keep < 1 keeps one). */
int64_t ckpt_record(ckpt_t *c, int ws_fd, const char *tool, const char *summary, bool force,
                    int64_t max_keep, char **err);

/* Index in the history of ref: a checkpoint id in decimal or a label. -1
 * with *err (a sentence naming the ids that exist) when there is none. */
ssize_t ckpt_find(ckpt_t *c, const char *ref, char **err);

/* A copy of the history, oldest first (ckpt_infos_free). */
size_t ckpt_history(ckpt_t *c, ckpt_info_t **out);
void ckpt_infos_free(ckpt_info_t *v, size_t n);

/* Id of the newest checkpoint (0: none yet). */
int64_t ckpt_head(ckpt_t *c);

/* Labels checkpoint ref (NULL: the newest) as label, moving the label if
 * another checkpoint had it. label: 1-64 of [A-Za-z0-9._-], not starting with
 * '.' or '-', not all digits.
 * false with *err. */
bool ckpt_label(ckpt_t *c, const char *ref, const char *label, int64_t *id, char **err);

/* Is label acceptable (see ckpt_label)? */
bool ckpt_label_valid(const char *label);

/* Appends to out the unified diff from checkpoint from to checkpoint to
 * (NULL: the newest; from NULL: the one before to), limited to paths
 * (workspace-relative prefixes; n 0: all). Binary files are named, not
 * dumped. At most max_bytes of text (then "[diff truncated]"). false with
 * *err. */
bool ckpt_diff(ckpt_t *c, const char *from, const char *to, char *const *paths, size_t npaths,
               size_t max_bytes, buf_t *out, char **err);

/* Makes the workspace behind ws_fd what checkpoint ref recorded, and
 * records that as a new checkpoint (tool "session_rollback"); changes not
 * yet recorded are recorded first, so nothing is lost. Returns the new id,
 * -1 with *err. */
int64_t ckpt_rollback(ckpt_t *c, int ws_fd, const char *ref, const ckpt_owner_t *own,
                      int64_t max_keep, char **err);

/* One file of a checkpoint, for export: path (workspace-relative), kind and
 * content. */
typedef enum {
    CKPT_FILE,
    CKPT_EXEC,
    CKPT_LINK
} ckpt_kind_t;
typedef int (*ckpt_file_fn)(void *ctx, const char *path, ckpt_kind_t kind, const void *data,
                            size_t len);

/* Calls fn for every file of checkpoint ref (NULL: the newest) whose path
 * is one of paths or lies below one (npaths 0: every file), in path order.
 * A non-zero return from fn stops the walk and is returned; -1 with *err
 * when ref is unknown or the store cannot be read. */
int ckpt_files(ckpt_t *c, const char *ref, char *const *paths, size_t npaths, ckpt_file_fn fn,
               void *ctx, char **err);

/* Appends a unified diff of one file from old to new (either may be NULL:
 * a file added or removed) to out; binary content is named, not dumped. */
void ckpt_diff_buffers(const char *path, const void *old, size_t oldlen, const void *new_,
                       size_t newlen, buf_t *out);

/* ---- snapshots: a git bundle (v2) holding the history and its metadata ---------------- */

/* Writes checkpoint history and labels of c, with session_label, to fd as
 * one bundle. false with *err. */
bool ckpt_bundle_write(ckpt_t *c, int fd, const char *session_label, char **err);

/* Reads a bundle written by ckpt_bundle_write from fd into a new family's
 * store (objects_fd/family), fills the workspace behind ws_fd with its
 * newest checkpoint and returns a ckpt_t with its history and labels;
 * *session_label gets the label stored with it (caller frees). NULL with
 * *err when fd is not such a bundle. */
ckpt_t *ckpt_bundle_read(int fd, int objects_fd, const char *objects_path, const char *family,
                         int ws_fd, const ckpt_owner_t *own, char **session_label, char **err);

#endif
