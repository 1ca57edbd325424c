/* cmdline.h — command lists with real shell word rules (SPEC §3.5).
 *
 * A command string is split into the simple commands a POSIX shell / bash would
 * run — through quotes, escapes, operators, compound commands, substitutions,
 * here-documents and common wrappers (env, sudo, xargs, find -exec, sh -c, ...) —
 * and each simple command is checked against word patterns such as "rm -rf".
 * Pure: no I/O, no globals, never exits or prints. A guardrail, not a boundary.
 */
#ifndef DRUN_CMDLINE_H
#define DRUN_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Nesting levels (substitutions, subshells, groups, compound commands,
 * wrappers, sh -c strings) counting the top level; the next one is the error
 * "nested too deeply". Keeps recursion and stack use bounded on hostile input. */
#define CMD_MAX_DEPTH 64

/* ---- the split ----------------------------------------------------------------- */

typedef struct cmd_word {
    char *text;   /* static: the value after quote removal; dynamic: the source text as
                     written. NUL-terminated, owned by the cmd_parse_t */
    size_t len;   /* bytes in text; a static value never holds a NUL */
    char *raw;    /* the source text as written (quotes and all), owned likewise */
    size_t rawlen;
    bool dynamic; /* the value is only known when it runs: $x, ${x}, $(..), `..`, $((..)),
                     <(..), or a value filled in by find/xargs ({}) */
    bool splits;  /* holds an unquoted expansion: may become zero or several words */
    bool glob;    /* unquoted *, ?, [ or brace expansion: makes a command word dynamic */
} cmd_word_t;

/* Why a simple command cannot be checked before it runs. */
typedef enum cmd_opaque {
    CMD_CHECKABLE = 0,
    CMD_OPAQUE_WORD,     /* the command word is dynamic: $CMD, $(..), *, {a,b}, find's {} */
    CMD_OPAQUE_EVAL,     /* eval, or a builtin option that runs a string (mapfile -C, bind -x) */
    CMD_OPAQUE_SOURCE,   /* source FILE, . FILE */
    CMD_OPAQUE_STRING,   /* sh -c, su -c, trap, watch, flock -c with a dynamic string */
    CMD_OPAQUE_STDIN,    /* a shell that reads its commands from standard input */
    CMD_OPAQUE_FOREIGN,  /* fish -c, csh -c: a language not parsed here */
    CMD_OPAQUE_WRAPPED,  /* a wrapper (sudo, env, xargs, ...) whose options are dynamic */
    CMD_OPAQUE_OPTION,   /* a wrapper option not understood here, or env -S */
    CMD_OPAQUE_FIND,     /* find with dynamic arguments that could add -exec */
    CMD_OPAQUE_PROMPT,   /* ${x@P}: prompt expansion runs the substitutions in x */
    CMD_OPAQUE_ALIAS,    /* alias NAME=TEXT: text that becomes commands */
    CMD_OPAQUE_SUBSCRIPT,/* unset 'a[$(..)]', [[ -v 'a[`..`]' ]]: a subscript that runs code */
} cmd_opaque_t;

typedef struct cmd_simple {
    cmd_word_t *words;   /* words[0] is the command word; leading assignments and
                            redirections are not words. Owned by the cmd_parse_t */
    size_t nwords;       /* always >= 1 */
    size_t offset;       /* byte offset in the parsed string where it was found; for a
                            command inside a nested string (sh -c, backquotes) the
                            offset of that string in the top-level input */
    unsigned depth;      /* 0 at top level, +1 per enclosing construct or wrapper */
    cmd_opaque_t opaque; /* CMD_CHECKABLE unless it cannot be checked */
    bool more_args;      /* more arguments are added when it runs (xargs's command) */
} cmd_simple_t;

typedef struct cmd_parse {
    cmd_simple_t *cmds; /* in the order found: a substitution's commands come before the
                           command that uses it, a wrapper before the command it runs */
    size_t ncmds;
    char *error;        /* NULL when the whole string parsed; else a message naming the
                           offset ("unterminated single quote at offset 12") */
    arena_t arena;      /* owns every word and text above */
} cmd_parse_t;

/* Splits len bytes of cmd (any bytes; a NUL is an error) into simple commands.
 * Always fills *out (commands found before an error are kept, for display);
 * returns false when out->error is set. Linear time, bounded recursion.
 * Free with cmd_parse_free, even after a failure. */
bool cmd_parse(const char *cmd, size_t len, cmd_parse_t *out);
void cmd_parse_free(cmd_parse_t *p);

/* The command re-quoted for display, words joined by spaces: static words through
 * cmd_quote, dynamic words as written (control bytes shown as \xHH).
 * Caller frees. */
char *cmd_simple_display(const cmd_simple_t *c);

/* A phrase saying why c is opaque ("the command word of '$CMD x' is only known
 * when it runs"), or NULL when c is checkable. Caller frees. */
char *cmd_opaque_why(const cmd_simple_t *c);

/* Quotes len bytes so that a shell (and cmd_parse) reads them back as exactly
 * one word with that value: bare when only safe characters, '...' otherwise,
 * $'...' when it holds control bytes or invalid UTF-8. The inverse of the word
 * reader, and tested as such. Caller frees. */
char *cmd_quote(const char *s, size_t len);

/* ---- checking ------------------------------------------------------------------- */

typedef struct cmd_verdict {
    bool allowed;
    int list;      /* 0: no list decided, 1: denylist, 2: allowlist */
    long entry;    /* index of the deciding entry in that list, or -1 */
    char *command; /* the simple command that decided, re-quoted for display, or NULL */
    char *reason;  /* one sentence the model or operator can act on; never NULL */
} cmd_verdict_t;

/* Checks len bytes of cmd against the lists (either may be empty; entries are
 * NUL-terminated strings that cmd_entry_valid accepts — an invalid or NULL entry
 * denies everything, failing closed).
 *   - both lists empty: allowed, nothing parsed;
 *   - a string that does not parse: denied (list 0) with the parse error;
 *   - any simple command matching a denylist entry: denied (list 1, that entry);
 *   - with a denylist, an opaque command or one whose dynamic arguments may
 *     match an entry: denied (list 1);
 *   - with an allowlist, an opaque command or one matching no entry: denied (list 2).
 * A certain denylist match anywhere is reported before any of the others. When
 * allowed, list/entry/command name the allowlist entry if exactly one simple
 * command ran under an allowlist, else 0/-1/NULL, and the reason says why ("no
 * command matches the denylist", "all 3 commands match the allowlist", "the
 * command runs no program", "no command lists are set").
 * The caller frees the verdict's strings with cmd_verdict_free. */
cmd_verdict_t cmd_check(const char *cmd, size_t len,
                        const char *const *deny, size_t ndeny,
                        const char *const *allow, size_t nallow);
void cmd_verdict_free(cmd_verdict_t *v);

/* True when entry is a valid command-list entry: literal words, the first a
 * command name without a directory, no operators, redirections, expansions,
 * assignments or unquoted wildcards. Else false with *err (caller frees, may be
 * NULL to skip) saying what is wrong and what to write instead. */
bool cmd_entry_valid(const char *entry, char **err);

/* For a valid entry: does it match c? 1 yes, 0 no, -1 maybe (only dynamic
 * arguments could supply what is missing; counts as a match in a denylist).
 * in_allowlist selects the allowlist rule: the entry's non-option words must be
 * the command's first operands, in order, and all words must be static. */
int cmd_entry_match(const char *entry, const cmd_simple_t *c, bool in_allowlist);

#endif
