/* tree.h — whole-directory operations that never follow a symlink: measuring
 * a workspace against max_workspace_mb and removing a session's directories.
 * Both work from directory fds with *at calls, so a symlink or a rename made
 * by a sandboxed command at the same moment cannot redirect them outside.
 */
#ifndef DRUN_RT_TREE_H
#define DRUN_RT_TREE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tree_usage {
    uint64_t bytes;   /* sum of st_size of regular files */
    uint64_t files;   /* regular files */
    uint64_t entries; /* every entry seen */
    bool partial;     /* stopped at the entry cap or an unreadable directory */
} tree_usage_t;

/* Measures the tree below dirfd (dirfd itself is not closed), visiting at
 * most max_entries entries. */
void tree_measure(int dirfd, uint64_t max_entries, tree_usage_t *u);

/* Removes parentfd/name and everything below it, however deep (deep
 * subtrees are moved up rather than opened level after level, so no depth
 * exhausts file descriptors), making unreadable directories readable first.
 * Returns 0, or -1 with errno of the first failure. */
int tree_remove(int parentfd, const char *name);

#endif
