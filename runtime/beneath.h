/* beneath.h — resolving a model-supplied path beneath a session workspace
 * with no way out.
 *
 * The model names files relative to the workspace. A lexical check rejects
 * absolute paths, ".." and control characters; then every open goes through
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV) from the workspace's directory fd, so neither a symlink
 * planted by a sandboxed command nor a race with one can lead outside. Where
 * openat2 is unavailable (kernel < 5.6, or a seccomp filter that refuses it)
 * the same walk is done one component at a time with O_NOFOLLOW.
 */
#ifndef DRUN_RT_BENEATH_H
#define DRUN_RT_BENEATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "drun_policy.h"

/* Longest accepted relative path, and component. */
#define BENEATH_PATH_MAX 4096
#define BENEATH_NAME_MAX 255

/* Checks and normalises a workspace-relative path: drops "." and empty
 * components, rejects absolute paths, "..", control characters and
 * over-long names. On success writes the normal form ("" for the workspace
 * itself, else "a/b/c") to out and returns true; on failure returns false with
 * *why, a static sentence that tells the model what to send instead. */
bool beneath_normalize(const char *path, buf_t *out, const char **why);

/* Opens rel (normalised, see above) beneath dirfd: openat2 with the resolve
 * flags above, else the component walk. flags as for openat(2) (O_CLOEXEC is
 * added). Returns the fd, or -1 with errno (ELOOP/EXDEV when a symlink or
 * mount point was in the way). "" opens dirfd's directory itself. */
int beneath_open(int dirfd, const char *rel, int flags, mode_t mode);

/* Opens the directory rel beneath dirfd as O_RDONLY|O_DIRECTORY, creating the
 * missing components (mode 0755) when create is set. -1 with errno. */
int beneath_open_dir(int dirfd, const char *rel, bool create);

/* Splits a normalised non-empty rel into its parent ("" at the top) and last
 * component; both point into a copy the caller frees via *dup. */
void beneath_split(const char *rel, char **dup, const char **parent, const char **name);

/* Forces the component-walk fallback (tests exercise both paths). */
void beneath_force_fallback(bool on);

#endif
