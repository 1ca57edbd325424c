/* ckpt_int.h — what ckpt.c, ckpt_io.c and ckpt_bundle.c share; not for
 * other files (they use ckpt.h). */
#ifndef DRUN_RT_CKPT_INT_H
#define DRUN_RT_CKPT_INT_H

#include <git2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "ckpt.h"

/* One family's object store: STATE/objects/FAMILY, shared by its sessions. */
typedef struct ckpt_store {
    atomic_int refs; /* ckpt_t on it */
    int objects_fd;  /* STATE/objects, for removing the store */
    int lock_fd;     /* FAMILY/.lock, LOCK_SH while any ckpt_t lives */
    char *family;    /* its name under STATE/objects */
    char *path;      /* absolute (libgit2 opens by name: the state dir is dark to sandboxes) */
} ckpt_store_t;

/* The stat cache: one node per recorded file, symlink or directory. */
typedef struct ckpt_node {
    char *name;
    uint32_t mode;       /* git file mode (GIT_FILEMODE_*) */
    git_oid oid;         /* blob or tree */
    bool has_stat, racy; /* stat below valid; changed in its clock tick */
    dev_t dev;
    ino_t ino;
    off_t size;
    mode_t st_mode;
    struct timespec mtime, ctime;
    struct ckpt_node **kids; /* directories: children sorted by strcmp of name */
    size_t nkids;
} ckpt_node_t;

typedef struct ckpt_hist {
    ckpt_info_t info;
    git_oid commit, tree;
} ckpt_hist_t;

struct ckpt {
    pthread_mutex_t mu;    /* guards everything below */
    ckpt_store_t *st;
    git_repository *repo;  /* this session's own handle on the store */
    git_odb *odb;
    VEC(ckpt_hist_t) hist; /* oldest first */
    int64_t last_id;       /* highest id ever given (the history may be trimmed) */
    ckpt_node_t *cache;    /* the workspace as last recorded; NULL: rebuild */
};

char *ckpt_git_error(const char *what);
void ckpt_store_release(ckpt_store_t *st);
ckpt_t *ckpt_new_in(ckpt_store_t *st, char **err);
void ckpt_hist_clear(ckpt_hist_t *h);
void ckpt_info_copy(ckpt_info_t *dst, const ckpt_info_t *src);

ckpt_node_t *ckpt_node_new(const char *name, size_t len);
void ckpt_node_free(ckpt_node_t *n);
void ckpt_node_stat(ckpt_node_t *n, const struct stat *st);
void ckpt_node_sort(ckpt_node_t *n);
void ckpt_mark_racy(ckpt_node_t *n, const struct timespec *start);
ckpt_node_t *ckpt_cache_from_tree(git_repository *repo, const git_oid *oid, const char *name);
int ckpt_write_tree(git_odb *odb, ckpt_node_t *dir);

int64_t ckpt_wall_ms(void);
int ckpt_commit(ckpt_t *c, const git_oid *tree_oid, ckpt_hist_t *h, char **err);
void ckpt_trim(ckpt_t *c, int64_t max_keep);
int64_t ckpt_push(ckpt_t *c, const git_oid *tree, const char *tool, const char *summary,
                  ckpt_paths_t *added, ckpt_paths_t *modified, ckpt_paths_t *deleted,
                  int64_t max_keep, char **err);
int64_t ckpt_record_locked(ckpt_t *c, int ws_fd, const char *tool, const char *summary,
                           bool force, int64_t max_keep, char **err);
ssize_t ckpt_find_locked(ckpt_t *c, const char *ref, char **err);

/* Empties the workspace behind ws_fd and writes tree into it; c->cache
 * becomes what was written (ckpt_io.c). */
int ckpt_checkout_locked(ckpt_t *c, const git_oid *tree, int ws_fd, const ckpt_owner_t *own,
                         char **err);

/* The files added, modified and deleted from tree a (NULL: the empty tree)
 * to tree b, appended to the lists (ckpt_io.c). -1 on a store error. */
int ckpt_tree_changes(ckpt_t *c, const git_oid *a, const git_oid *b, ckpt_paths_t *added,
                      ckpt_paths_t *modified, ckpt_paths_t *deleted);

#endif
