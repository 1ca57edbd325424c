/* janitor.h — removing the placeholders bwrap leaves behind, safely.
 *
 * sandbox_spawn creates empty directories as mount points for protected
 * paths that do not exist yet (SPEC §7: "blocked at its first missing
 * component"); they are to be removed after the run. But since Linux 3.18 an
 * rmdir of a directory that is a mount point in *another* mount namespace
 * succeeds and silently detaches that mount there. Every concurrent sandbox
 * that blocks the same path (a second command in the same workspace) has its
 * own mount on the very same directory, so removing it while that command
 * runs would lift its protection. Hence a gate: a command holds it shared
 * from spawn to exit, and placeholders are removed only with the gate held
 * exclusively — when no command runs. The removal runs on the janitor's own
 * thread, off the request path, once no command has ended for a moment
 * (between the commands of a busy session the placeholders would only be
 * made again).
 *
 * Locking: `gate` is the rwlock above (writer-preferring, so a forced
 * cleanup cannot be starved); `mu`/`cv` guard the pending list and the stop
 * flag.
 */
#ifndef DRUN_RT_JANITOR_H
#define DRUN_RT_JANITOR_H

#include "drun_policy.h"

typedef struct janitor janitor_t;

/* Starts the janitor thread. Never NULL (aborts when no thread can start:
 * running without it would be unsafe). */
janitor_t *janitor_new(void);

/* Waits for running commands, removes every pending placeholder, stops. */
void janitor_free(janitor_t *j);

/* Before sandbox_spawn: holds the gate shared. */
void janitor_enter(janitor_t *j);

/* After the command was reaped: queues its residue (may be NULL) and
 * releases the gate. */
void janitor_leave(janitor_t *j, sbx_residue_t *residue);

#endif
