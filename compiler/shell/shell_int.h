/* shell_int.h — what the stages of the shell front end share (shell_lex.c,
 * shell_parse.c, shell_unwrap.c, shell_quote.c); not for use outside
 * compiler/shell/. One parser_t walks a string; lexing and parsing call each
 * other because a word can hold a command substitution, which holds a list.
 */
#ifndef DRUN_SHELL_INT_H
#define DRUN_SHELL_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "shell.h"

/* A word as read: its value after quote removal, plus what was seen in it. */
typedef struct lword {
    buf_t val;         /* value after quote removal (expansions keep their source text) */
    size_t start, end; /* source span in the parser's buffer */
    size_t glob_at;    /* offset of the first unquoted wildcard or brace (for entries) */
    bool quoted;       /* some part was quoted or escaped: never a reserved word */
    bool dynamic;      /* value only known when it runs */
    bool splits;       /* an unquoted expansion */
    bool glob;         /* unquoted * ? [ */
    bool brace;        /* unquoted {a,b} or {a..b} */
    bool assign;       /* starts with NAME=, NAME+= or NAME[..]= unquoted */
} lword_t;

typedef VEC(lword_t) lwords_t;

typedef enum {
    T_EOF,
    T_NEWLINE,
    T_WORD,
    T_IONUM,
    T_OP
} tkind_t;

/* clang-format off */
typedef enum {
    OP_SEMI, OP_AMP, OP_AND, OP_OR, OP_PIPE, OP_PIPEAMP, OP_LPAREN, OP_RPAREN,
    OP_DSEMI, OP_SEMIAMP, OP_DSEMIAMP,
    OP_LESS, /* redirections from here on */
    OP_GREAT, OP_DGREAT, OP_LESSGREAT, OP_CLOBBER, OP_GREATAND, OP_LESSAND,
    OP_DLESS, OP_DLESSDASH, OP_TLESS, OP_ANDGREAT, OP_ANDDGREAT,
} op_t;
/* clang-format on */

typedef struct token {
    tkind_t kind;
    op_t op;      /* T_OP */
    size_t start; /* offset of its first byte */
    lword_t w;    /* T_WORD, T_IONUM; owned */
} token_t;

typedef struct heredoc {
    char *delim;     /* owned */
    size_t offset;   /* of the << operator */
    bool strip_tabs; /* <<- */
    bool expand;     /* unquoted delimiter: substitutions in the body run */
} heredoc_t;

/* What one shell_parse (and every nested parse inside it) shares. */
typedef struct shared {
    shell_parse_t *out;
    VEC(shell_cmd_t) cmds;
    char *error; /* the first error wins; owned until handed to out */
} shared_t;

typedef struct parser {
    shared_t *sh;
    const char *s;      /* the input, or a string taken from a word (sh -c, backquotes) */
    size_t pos, end;    /* read position and limit (lowered for arithmetic, here-doc bodies) */
    unsigned depth;     /* nesting level, 0 at top */
    bool nested;        /* s came from a word */
    size_t origin;      /* nested: offset of the outermost such word in the input */
    const char *what;   /* nested: what that word is ("'sh -c' string") */
    bool entry_mode;    /* reading a command-list entry: literal words only */
    token_t tok;        /* the current token */
    VEC(heredoc_t) hds; /* here-documents waiting for their body */
    size_t hd_base;     /* the first of them that the next newline may read */
} parser_t;

/* ---- characters (shell_lex.c and the grammar both read bytes) ---- */

static inline bool failed(const parser_t *p) { return p->sh->error != NULL; }

static inline int at(const parser_t *p, size_t i) { return i < p->end ? (unsigned char)p->s[i] : -1; }

/* Backslash-newline is removed before anything else sees it (outside single
 * quotes), so "r\<newline>m" is rm and "&\<newline>&" is &&. */
static inline size_t skip_cont(const parser_t *p, size_t i)
{
    while (i + 1 < p->end && p->s[i] == '\\' && p->s[i + 1] == '\n') i += 2;
    return i;
}

static inline bool is_name_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline bool is_name_char(int c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

/* ---- shell_lex.c ---- */

/* Records the first error as "MSG at offset N" (plus, inside a nested string,
 * " in the WHAT at offset M" with M in the top-level input). */
void shell_perr(parser_t *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every construct that nests goes through shell_enter/shell_leave, so hostile
 * nesting is an error instead of a stack overflow. */
bool shell_enter(parser_t *p, size_t off);
void shell_leave(parser_t *p);
void shell_syntax_error(parser_t *p); /* "syntax error near TOKEN" */
void shell_lword_free(lword_t *w);
void shell_tok_free(token_t *t);
void shell_advance(parser_t *p); /* reads the next token into p->tok */
/* Does "((" end just before from open arithmetic? *close is its "))". */
bool shell_arith_ahead(const parser_t *p, size_t from, size_t *close);
/* Reads [from, to) as arithmetic, where only the substitutions run commands. */
void shell_arith_region(parser_t *p, size_t open, size_t from, size_t to);
/* Queues the here-document whose delimiter is the current token. */
void shell_register_heredoc(parser_t *p, op_t op, size_t off);

/* ---- shell_parse.c ---- */

void shell_parse_list(parser_t *p);
/* A string taken from a word (backquotes, sh -c, trap, watch), parsed with
 * the same rules; its commands join the same list. */
void shell_parse_nested(parser_t *p, const char *s, size_t len, size_t at_off, const char *what, unsigned depth);
/* A synthetic opaque command for an expansion that runs code wherever it
 * appears (${x@P}): its one word is the expansion as written. */
void shell_emit_opaque(parser_t *p, size_t start, size_t end, shell_opaque_t why);
bool shell_in_list(const char *s, const char *const *list); /* list ends with NULL */

/* ---- shell_unwrap.c ---- */

/* Adds one simple command (words live in the arena), then what it runs. */
void shell_emit(parser_t *p, shell_word_t *words, size_t n, size_t offset, unsigned depth, bool more_args);
/* A subscript bash evaluates as arithmetic that holds a substitution. */
bool shell_subscript_code(const char *t);

#endif
