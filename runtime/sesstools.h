/* sesstools.h — what the session-model tools (SPEC §14) share with the
 * other tool files: the checkpoint taken after each call that changed a
 * workspace, and the set-up of a new session (its store, its mounts).
 *
 * tool_ckpt.c:     session_history, session_diff, session_rollback,
 *                  session_fork, session_label; sesstools_checkpoint
 * tool_sessfs.c:   session_mount, session_export; sesstools_setup
 * tool_snapshot.c: session_snapshot, session_restore, list_snapshots
 */
#ifndef DRUN_RT_SESSTOOLS_H
#define DRUN_RT_SESSTOOLS_H

#include "ckpt.h"
#include "tools.h"

#define SESS_ID_SCHEMA                                                              \
    "\"session_id\": {\"type\": \"string\", \"minLength\": 32, \"maxLength\": 32, " \
    "\"description\": \"The ID create_session returned.\"}"

/* A checkpoint named by its id (an integer, or digits in a string) or its label. */
#define SESS_REF_SCHEMA(key, what)                                                          \
    "\"" key "\": {\"type\": [\"integer\", \"string\"], \"minimum\": 1, \"minLength\": 1, " \
    "\"maxLength\": 64, \"description\": \"" what " (a checkpoint id or label)\"}"

/* Records a checkpoint of s made by tool (summary: its command or path)
 * when the workspace changed, and adds "checkpoint_id" to the result (and
 * a line to its text). Returns the id, 0 when nothing changed, -1 when the
 * checkpoint failed (the result says so; the call itself stands). */
int64_t sesstools_checkpoint(tool_call_t *tc, session_t *s, const char *tool, const char *summary);

/* Who owns files written into a workspace (a root runtime: the sandbox
 * user). */
ckpt_owner_t sesstools_owner(void);

/* A new session's checkpoint store, then each of mounts (a JSON array of
 * host paths, or NULL), then checkpoint 1. false after tools_fail (the caller
 * closes the session). */
bool sesstools_setup(tool_call_t *tc, session_t *s, const json_t *mounts);

/* STATE/snapshots, where snapshots live (caller frees). */
char *sesstools_snapshots_dir(tool_call_t *tc);

/* The store's family name for a session id ("ckpt-ID"), into out[48]. */
void sesstools_family(const char *id, char out[48]);

/* The tool definitions themselves are declared in tools.h, with the others. */

/* The checkpoint argument of a call (an id as an integer or a string, or a
 * label): into out[32] for an integer, else the string; NULL when absent. */
const char *sesstools_arg_ref(const json_t *args, const char *key, char out[32]);

#endif
