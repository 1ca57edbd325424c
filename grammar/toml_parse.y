/* toml_parse.y — the TOML grammar (lemon, LALR(1), zero conflicts).
 *
 * Tokens come from toml_lex() through the loop in toml.c, which drops
 * whitespace, comments and the newlines that arrays (and TOML 1.1 inline
 * tables) allow. Every action is one call into toml_build.c; the tree lives
 * in the document's arena, so no %destructor is needed: an abandoned parse
 * frees everything with the arena.
 */

%name TomlParser
%token_prefix TK_
%token_type {span_t}
%extra_context {toml_parser *ctx}

/* Nesting is capped at TOML_MAX_DEPTH by the token loop before the stack
 * can fill: the deepest rule keeps at most 5 entries per open container
 * ({ k = v, k = {), so this size cannot overflow on accepted input. */
%stack_size 5200
%stack_overflow { tp_stack_overflow(ctx); }
%syntax_error   { tp_syntax_error(ctx, yymajor, yyminor); }

%include {
/* lemon's tracing and internal asserts cost a few percent per token: they
 * stay on in the sanitizer and fuzzing builds, where they can catch something. */
#if !defined(DRUN_FUZZ) && !defined(DRUN_SAN) && !defined(NDEBUG)
#define NDEBUG 1
#endif
#include <assert.h>
#include "toml_internal.h"
/* The first error ends the parse (toml.c stops feeding tokens), so lemon's
 * error recovery is never wanted. */
#define YYNOERRORRECOVERY 1
}

/* Token order fixes the TK_* codes. The second group never reaches the
 * parser: the lexer uses those codes for skipped and bad input. */
%token NEWLINE EQUALS DOT COMMA LBRACKET RBRACKET LLBRACKET RRBRACKET LBRACE RBRACE
       BARE BASIC LITERAL ML_BASIC ML_LITERAL INTEGER FLOAT BOOL DATETIME.
%token WS COMMENT ILLEGAL BAD_STRING BAD_VALUE.

doc ::= lines.

lines ::= line.
lines ::= lines NEWLINE line.

line ::= .
line ::= key(K) EQUALS value(V).                { tp_keyval(ctx, K, V); }
line ::= LBRACKET(L) key(K) RBRACKET(R).        { tp_table(ctx, K, L, R); }
line ::= LLBRACKET(L) key(K) RRBRACKET(R).      { tp_array_table(ctx, K, L, R); }

/* ---- keys ---------------------------------------------------------------- */

/* Each part goes on the parser's key stack as it is read; a key is a run
 * of parts on that stack, so parser stack entries stay two words wide. */
%type key {toml_keypath}
key(A) ::= skey.                     { A = tp_key_first(ctx); }
key(A) ::= key(A) DOT skey.          { tp_key_next(ctx, &A); }

skey ::= BARE(T).                    { tp_key_part(ctx, TK_BARE, T); }
skey ::= BASIC(T).                   { tp_key_part(ctx, TK_BASIC, T); }
skey ::= LITERAL(T).                 { tp_key_part(ctx, TK_LITERAL, T); }

/* ---- values --------------------------------------------------------------- */

%type value {toml_value *}
value(A) ::= BASIC(T).               { A = tp_string(ctx, TK_BASIC, T); }
value(A) ::= LITERAL(T).             { A = tp_string(ctx, TK_LITERAL, T); }
value(A) ::= ML_BASIC(T).            { A = tp_string(ctx, TK_ML_BASIC, T); }
value(A) ::= ML_LITERAL(T).          { A = tp_string(ctx, TK_ML_LITERAL, T); }
value(A) ::= INTEGER(T).             { A = tp_integer(ctx, T); }
value(A) ::= FLOAT(T).               { A = tp_float(ctx, T); }
value(A) ::= BOOL(T).                { A = tp_bool(ctx, T); }
value(A) ::= DATETIME(T).            { A = tp_datetime(ctx, T); }
value(A) ::= array(A).
value(A) ::= itable(A).

%type array {toml_value *}
array(A) ::= LBRACKET(L) RBRACKET(R).                { A = tp_array_close(ctx, UINT32_MAX, L, R); }
array(A) ::= LBRACKET(L) elems(E) RBRACKET(R).       { A = tp_array_close(ctx, E, L, R); }
array(A) ::= LBRACKET(L) elems(E) COMMA RBRACKET(R). { A = tp_array_close(ctx, E, L, R); }

/* the index of the array's first element on the element stack */
%type elems {uint32_t}
elems(A) ::= value(V).                    { A = tp_array_first(ctx, V); }
elems(A) ::= elems(A) COMMA value(V).     { tp_array_next(ctx, V); }

%type itable {toml_value *}
itable(A) ::= LBRACE(L) RBRACE(R).                   { A = tp_inline_close(ctx, NULL, L, R); }
itable(A) ::= LBRACE(L) ikvs(T) RBRACE(R).           { A = tp_inline_close(ctx, T, L, R); }
itable(A) ::= LBRACE(L) ikvs(T) COMMA(C) RBRACE(R).  { A = tp_inline_trailing(ctx, T, L, C, R); }

%type ikvs {toml_value *}
ikvs(A) ::= key(K) EQUALS value(V).                  { A = tp_inline_put(ctx, NULL, K, V); }
ikvs(A) ::= ikvs(A) COMMA key(K) EQUALS value(V).    { A = tp_inline_put(ctx, A, K, V); }
