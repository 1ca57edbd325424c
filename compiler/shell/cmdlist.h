/* cmdlist.h — command lists (bash_command_denylist / _allowlist) with real
 * shell word rules (SPEC §3.5): each simple command that shell.h finds is
 * checked against word patterns such as "rm -rf". What lint, the policy build,
 * explain and drun-mcp's session_bash use.
 * Pure: no I/O, no globals, never exits or prints. A guardrail, not a boundary.
 */
#ifndef DRUN_CMDLIST_H
#define DRUN_CMDLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "shell.h"

/* ---- checking ------------------------------------------------------------------- */

/* Which list decided a verdict. The values are stable (tests and logs use them). */
typedef enum cmdlist_kind {
    CMDLIST_NONE = 0,  /* no list decided: none is set, or the command did not parse */
    CMDLIST_DENY = 1,  /* bash_command_denylist */
    CMDLIST_ALLOW = 2, /* bash_command_allowlist */
} cmdlist_kind_t;

typedef struct cmdlist_verdict {
    bool allowed;
    cmdlist_kind_t list; /* the list that decided, or CMDLIST_NONE */
    long entry;          /* index of the deciding entry in that list, or -1 */
    char *command;       /* the simple command that decided, re-quoted for display, or NULL */
    char *reason;        /* one sentence the model or operator can act on; never NULL */
} cmdlist_verdict_t;

/* Checks len bytes of cmd against the lists (either may be empty; entries are
 * NUL-terminated strings that cmdlist_entry_valid accepts — an invalid or NULL entry
 * denies everything, failing closed).
 *   - both lists empty: allowed, nothing parsed;
 *   - a string that does not parse: denied (CMDLIST_NONE) with the parse error;
 *   - any simple command matching a denylist entry: denied (CMDLIST_DENY, that entry);
 *   - with a denylist, an opaque command or one whose dynamic arguments may
 *     match an entry: denied (CMDLIST_DENY);
 *   - with an allowlist, an opaque command or one matching no entry: denied (CMDLIST_ALLOW).
 * A certain denylist match anywhere is reported before any of the others. When
 * allowed, list/entry/command name the allowlist entry if exactly one simple
 * command ran under an allowlist, else NONE/-1/NULL (ALLOW/-1/NULL for several
 * commands under an allowlist), and the reason says why ("no
 * command matches the denylist", "all 3 commands match the allowlist", "the
 * command runs no program", "no command lists are set").
 * The caller frees the verdict's strings with cmdlist_verdict_free. */
cmdlist_verdict_t cmdlist_check(const char *cmd, size_t len,
                                const char *const *deny, size_t ndeny,
                                const char *const *allow, size_t nallow);
void cmdlist_verdict_free(cmdlist_verdict_t *v);

/* True when entry is a valid command-list entry: literal words, the first a
 * command name without a directory, no operators, redirections, expansions,
 * assignments or unquoted wildcards. Else false with *err (caller frees, may be
 * NULL to skip) saying what is wrong and what to write instead. */
bool cmdlist_entry_valid(const char *entry, char **err);

/* For a valid entry: does it match c? 1 yes, 0 no, -1 maybe (only dynamic
 * arguments could supply what is missing; counts as a match in a denylist).
 * in_allowlist selects the allowlist rule: the entry's non-option words must be
 * the command's first operands, in order, and all words must be static. */
int cmdlist_entry_match(const char *entry, const shell_cmd_t *c, bool in_allowlist);

#endif
