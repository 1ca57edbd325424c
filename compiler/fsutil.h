/* fsutil.h — the files and directories the tools make for themselves: a
 * whole file read, an artifact written atomically, mkdir -p, the state dir. */
#ifndef DRUN_FSUTIL_H
#define DRUN_FSUTIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "buf.h"

/* mkdir -p: creates path and its missing parents with mode (before the
 * umask); existing ones are left as they are. False with errno set when a
 * component cannot be created (an existing non-directory: ENOTDIR/EEXIST). */
bool fsutil_mkdirs(const char *path, mode_t mode);

/* The tools' own state: "$XDG_STATE_HOME/drun/SUB" when that is absolute,
 * else, when the effective uid is 0, "/var/lib/drun/SUB" (the sandbox user
 * a root runtime runs sandboxes as must reach it, and /root is closed to
 * it), else "$HOME/.local/state/drun/SUB" ("/root" without an absolute $HOME);
 * SUB "" is the state dir itself. Only the name: nothing is made or
 * followed here (a sandbox may have written on the way); the runner opens
 * and makes it by fd (compiler/sandbox/hoststate.c). Caller frees. */
char *fsutil_state_path(const char *sub);

/* Where fsutil_state_path starts: the directory trusted as given ($XDG_STATE_HOME,
 * /var/lib for root, or $HOME, "/root" without one), and the components
 * below it that are opened without following symlinks ("drun", or
 * ".local/state/drun").
 * Both point into static or environment storage. */
void fsutil_state_base(const char **trusted, const char **below);

/* Appends the whole file at path to *out. False with *err ("PATH: why",
 * caller frees) when it cannot be opened or read. */
bool fsutil_read_file(const char *path, buf_t *out, char **err);

/* Writes all n bytes of p to fd (retrying short writes and EINTR); false
 * with errno set on the first error. */
bool fsutil_write_all(int fd, const void *p, size_t n);

/* Writes len bytes to path through a temp file beside it (mode 0644,
 * fsync'd) renamed into place, so a reader never sees half of it. False
 * with *err (caller frees); the temp file is gone then. */
bool fsutil_write_atomic(const char *path, const void *data, size_t len, char **err);

/* 2*n lowercase hex digits of the kernel's randomness and a NUL into out
 * (2*n+1 bytes; n at most 32): a name no other process can be given, whatever pid
 * namespace it runs in (a pid in a name is not unique across them). False
 * with errno set when getrandom fails. */
bool fsutil_random_hex(char *out, size_t n);

#endif
