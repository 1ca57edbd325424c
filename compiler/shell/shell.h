/* shell.h — the shell-word front end of command lists (SPEC §3.5).
 *
 * A command string is split into the simple commands a POSIX shell / bash would
 * run — through quotes, escapes, operators, compound commands, substitutions,
 * here-documents and common wrappers (env, sudo, xargs, find -exec, sh -c, ...).
 * Stages: shell_lex.c (words, tokens, here-documents), shell_parse.c (grammar),
 * shell_unwrap.c (commands that run commands), shell_quote.c (words back to
 * text). cmdlist.h checks the result against command lists.
 * Pure: no I/O, no globals, never exits or prints. A guardrail, not a boundary.
 */
#ifndef DRUN_SHELL_H
#define DRUN_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Nesting levels (substitutions, subshells, groups, compound commands,
 * wrappers, sh -c strings) counting the top level; the next one is the error
 * "nested too deeply". Keeps recursion and stack use bounded on hostile input. */
#define SHELL_MAX_DEPTH 64

/* ---- the split ----------------------------------------------------------------- */

typedef struct shell_word {
    char *text;   /* static: the value after quote removal; dynamic: the source text as
                     written. NUL-terminated, owned by the shell_parse_t */
    size_t len;   /* bytes in text; a static value never holds a NUL */
    char *raw;    /* the source text as written (quotes and all), owned likewise */
    size_t rawlen;
    bool dynamic; /* the value is only known when it runs: $x, ${x}, $(..), `..`, $((..)),
                     <(..), or a value filled in by find/xargs ({}) */
    bool splits;  /* holds an unquoted expansion: may become zero or several words */
    bool glob;    /* unquoted *, ?, [ or brace expansion: makes a command word dynamic */
} shell_word_t;

/* Why a simple command cannot be checked before it runs. */
typedef enum shell_opaque {
    SHELL_CHECKABLE = 0,
    SHELL_OPAQUE_WORD,      /* the command word is dynamic: $CMD, $(..), *, {a,b}, find's {} */
    SHELL_OPAQUE_EVAL,      /* eval, or a builtin option that runs a string (mapfile -C, bind -x) */
    SHELL_OPAQUE_SOURCE,    /* source FILE, . FILE */
    SHELL_OPAQUE_STRING,    /* sh -c, su -c, trap, watch, flock -c with a dynamic string */
    SHELL_OPAQUE_STDIN,     /* a shell that reads its commands from standard input */
    SHELL_OPAQUE_FOREIGN,   /* fish -c, csh -c: a language not parsed here */
    SHELL_OPAQUE_WRAPPED,   /* a wrapper (sudo, env, xargs, ...) whose options are dynamic */
    SHELL_OPAQUE_OPTION,    /* a wrapper option not understood here, or env -S */
    SHELL_OPAQUE_FIND,      /* find with dynamic arguments that could add -exec */
    SHELL_OPAQUE_PROMPT,    /* ${x@P}: prompt expansion runs the substitutions in x */
    SHELL_OPAQUE_ALIAS,     /* alias NAME=TEXT: text that becomes commands */
    SHELL_OPAQUE_SUBSCRIPT, /* unset 'a[$(..)]', [[ -v 'a[`..`]' ]]: a subscript that runs code */
} shell_opaque_t;

typedef struct shell_cmd {
    shell_word_t *words;   /* words[0] is the command word; leading assignments and
                              redirections are not words. Owned by the shell_parse_t */
    size_t nwords;         /* always >= 1 */
    size_t offset;         /* byte offset in the parsed string where it was found; for a
                              command inside a nested string (sh -c, backquotes) the
                              offset of that string in the top-level input */
    unsigned depth;        /* 0 at top level, +1 per enclosing construct or wrapper */
    shell_opaque_t opaque; /* SHELL_CHECKABLE unless it cannot be checked */
    bool more_args;        /* more arguments are added when it runs (xargs's command) */
} shell_cmd_t;

typedef struct shell_parse {
    shell_cmd_t *cmds; /* in the order found: a substitution's commands come before the
                          command that uses it, a wrapper before the command it runs */
    size_t ncmds;
    char *error;       /* NULL when the whole string parsed; else a message naming the
                          offset ("unterminated single quote at offset 12") */
    arena_t arena;     /* owns every word and text above */
} shell_parse_t;

/* Splits len bytes of cmd (any bytes; a NUL is an error) into simple commands.
 * Always fills *out (commands found before an error are kept, for display);
 * returns false when out->error is set. Linear time, bounded recursion.
 * Free with shell_parse_free, even after a failure. */
bool shell_parse(const char *cmd, size_t len, shell_parse_t *out);
void shell_parse_free(shell_parse_t *p);

/* The command re-quoted for display, words joined by spaces: static words through
 * shell_quote, dynamic words as written (control bytes shown as \xHH).
 * Caller frees. */
char *shell_cmd_display(const shell_cmd_t *c);

/* A phrase saying why c is opaque ("the command word of '$CMD x' is only known
 * when it runs"), or NULL when c is checkable. Caller frees. */
char *shell_opaque_why(const shell_cmd_t *c);

/* Quotes len bytes so that a shell (and shell_parse) reads them back as exactly
 * one word with that value: bare when only safe characters, '...' otherwise,
 * $'...' when it holds control bytes or invalid UTF-8. The inverse of the word
 * reader, and tested as such. Caller frees. */
char *shell_quote(const char *s, size_t len);

/* The display of c clipped to about SHELL_CLIP bytes, for messages. Caller frees. */
char *shell_cmd_display_clipped(const shell_cmd_t *c);

/* ---- helpers shared with the command-list matcher -------------------------------- */

/* How many bytes of a command or entry a message quotes before "...". */
#define SHELL_CLIP 120

/* s cut in place to about max bytes on a character boundary, with "..." when
 * cut (max >= 4). Returns s. */
char *shell_clip(char *s, size_t max);

/* Appends n bytes of s to b with control bytes and invalid UTF-8 as \xHH, so a
 * message can show hostile text without it acting on a terminal. */
void shell_sanitize(buf_t *b, const char *s, size_t n);

/* The part of a command word after its last '/' (a pointer into s). */
const char *shell_base_name(const char *s);

/* True when word is a bash reserved word (if, then, {, [[, ...). */
bool shell_reserved(const char *word);

/* One word of a literal word list (a command-list entry). */
typedef struct shell_literal {
    const char *text;  /* the value after quote removal, NUL-terminated, never NULL */
    size_t len;        /* bytes in text; a literal never holds a NUL */
    size_t start, end; /* its span in the string read */
    bool quoted;       /* some part was quoted or escaped: never a reserved word */
    bool assign;       /* starts with NAME=, NAME+= or NAME[..]= unquoted */
} shell_literal_t;

/* Reads the NUL-terminated s as literal words with the shell's quote rules:
 * operators, redirections, comments, expansions, substitutions and unquoted
 * wildcards are errors saying what to write instead. On success returns NULL
 * with *words (n of them, possibly 0) and their text in a; else returns the
 * error (caller frees) with *n = 0. */
char *shell_read_literals(const char *s, arena_t *a, shell_literal_t **words, size_t *n);

#endif
