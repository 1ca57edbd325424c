/* wsguard.h — is a workspace the user's world? (SPEC §13)
 *
 * `drun-policy run` binds its workspace writable. Started from $HOME (or /),
 * that is every file the user has — ~/.ssh included — so run refuses a
 * workspace that is /, $HOME, an ancestor of $HOME, the state dir or an
 * ancestor of it, unless the user says --allow-broad-workspace.
 */
#ifndef DRUN_WSGUARD_H
#define DRUN_WSGUARD_H

/* Why the canonical (realpath) workspace ws is too broad, as a phrase that
 * completes "the workspace %s is ..." ("your home directory $HOME"), or NULL
 * when it is a normal directory. home and state are the paths to compare
 * against (the caller passes $HOME and fsutil_state_path("")); each is canonicalized
 * here through its longest existing ancestor, so a state dir not made yet
 * still counts. Caller frees the result. */
char *wsguard_reason(const char *ws, const char *home, const char *state);

#endif
