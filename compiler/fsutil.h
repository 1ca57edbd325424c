/* fsutil.h — the directories the tools make for themselves. */
#ifndef DRUN_FSUTIL_H
#define DRUN_FSUTIL_H

#include <stdbool.h>
#include <sys/types.h>

/* mkdir -p: creates path and its missing parents with mode (before the
 * umask); existing ones are left as they are. False with errno set when a
 * component cannot be created (an existing non-directory: ENOTDIR/EEXIST). */
bool mkdirs(const char *path, mode_t mode);

/* The tools' own state: "$XDG_STATE_HOME/drun/SUB" when that is absolute,
 * else "$HOME/.local/state/drun/SUB" ("/root" without an absolute $HOME);
 * SUB "" is the state dir itself. Created (0700, parents too) when it can
 * be; a failure shows when the caller opens or makes something in it.
 * Caller frees. */
char *state_path(const char *sub);

#endif
