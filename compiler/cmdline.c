/* cmdline.c — split a command string into simple commands, check them against
 * command lists (SPEC §3.5).
 *
 * A recursive-descent reader for the bash grammar that keeps only what runs:
 * one lexer with bash's quote rules and one token of lookahead, compound
 * commands that only nest, substitutions that recurse into the same parser, and
 * wrappers (env, sudo, xargs, find -exec, sh -c, ...) unwrapped. Wherever our
 * reading could part ways with bash's, it fails closed with an error instead.
 */
#include "cmdline.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* ==== model ========================================================================== */

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

typedef enum { T_EOF, T_NEWLINE, T_WORD, T_IONUM, T_OP } tkind_t;

typedef enum {
    OP_SEMI, OP_AMP, OP_AND, OP_OR, OP_PIPE, OP_PIPEAMP, OP_LPAREN, OP_RPAREN,
    OP_DSEMI, OP_SEMIAMP, OP_DSEMIAMP,
    OP_LESS, /* redirections from here on */
    OP_GREAT, OP_DGREAT, OP_LESSGREAT, OP_CLOBBER, OP_GREATAND, OP_LESSAND,
    OP_DLESS, OP_DLESSDASH, OP_TLESS, OP_ANDGREAT, OP_ANDDGREAT,
} op_t;

static const char *const op_text[] = {
    ";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ";&", ";;&",
    "<", ">", ">>", "<>", ">|", ">&", "<&", "<<", "<<-", "<<<", "&>", "&>>",
};

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

/* What one cmd_parse (and every nested parse inside it) shares. */
typedef struct shared {
    cmd_parse_t *out;
    VEC(cmd_simple_t) cmds;
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

static void advance(parser_t *p);
static void parse_list(parser_t *p);
static void parse_command(parser_t *p);
static void parse_simple(parser_t *p, lword_t *first);
static void lex_word(parser_t *p, lword_t *w, bool in_array);
static void lex_dollar(parser_t *p, lword_t *w, bool in_dq);
static void lex_dquote(parser_t *p, lword_t *w, bool heredoc);
static void lex_backquote(parser_t *p, lword_t *w, bool in_dq);
static void parse_nested(parser_t *p, const char *s, size_t len, size_t at,
                         const char *what, unsigned depth);
static void emit(parser_t *p, cmd_word_t *words, size_t n, size_t offset,
                 unsigned depth, bool more_args);
static void emit_opaque(parser_t *p, size_t start, size_t end, cmd_opaque_t why);
static void sanitize_into(buf_t *b, const char *s, size_t n);
static bool subscript_code(const char *t);

/* ==== errors and depth ================================================================= */

static bool failed(const parser_t *p) { return p->sh->error != NULL; }

static void set_error(parser_t *p, size_t off, const char *hint, const char *fmt, va_list ap)
{
    buf_t b = BUF_INIT;
    buf_vprintf(&b, fmt, ap);
    buf_printf(&b, " at offset %zu", off);
    if (p->nested) buf_printf(&b, " in the %s at offset %zu", p->what, p->origin);
    if (hint) buf_printf(&b, "; %s", hint);
    p->sh->error = buf_detach(&b, NULL);
}

/* Records the first error as "MSG at offset N" (plus, inside a nested string,
 * " in the WHAT at offset M" with M in the top-level input). */
__attribute__((format(printf, 3, 4)))
static void perr(parser_t *p, size_t off, const char *fmt, ...)
{
    if (failed(p)) return;
    va_list ap;
    va_start(ap, fmt);
    set_error(p, off, NULL, fmt, ap);
    va_end(ap);
}

/* Same, followed by "; HINT" saying what to write instead. */
__attribute__((format(printf, 4, 5)))
static void perr_hint(parser_t *p, size_t off, const char *hint, const char *fmt, ...)
{
    if (failed(p)) return;
    va_list ap;
    va_start(ap, fmt);
    set_error(p, off, hint, fmt, ap);
    va_end(ap);
}

/* Every construct that nests goes through enter/leave, so hostile nesting is
 * an error instead of a stack overflow. */
static bool enter(parser_t *p, size_t off)
{
    if (failed(p)) return false;
    if (p->depth + 1 >= CMD_MAX_DEPTH) {
        perr(p, off, "nested too deeply");
        return false;
    }
    p->depth++;
    return true;
}

static void leave(parser_t *p) { p->depth--; }

/* ==== characters ======================================================================== */

static int at(const parser_t *p, size_t i) { return i < p->end ? (unsigned char)p->s[i] : -1; }

/* Backslash-newline is removed before anything else sees it (outside single
 * quotes), so "r\<newline>m" is rm and "&\<newline>&" is &&. */
static size_t skip_cont(const parser_t *p, size_t i)
{
    while (i + 1 < p->end && p->s[i] == '\\' && p->s[i + 1] == '\n') i += 2;
    return i;
}

static int cur(parser_t *p)
{
    p->pos = skip_cont(p, p->pos);
    return at(p, p->pos);
}

/* The character at *i after continuations; *i moves past it. */
static int nextc(const parser_t *p, size_t *i)
{
    *i = skip_cont(p, *i);
    int c = at(p, *i);
    if (c >= 0) (*i)++;
    return c;
}

static bool is_meta(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '|' || c == '&' || c == ';' ||
           c == '(' || c == ')' || c == '<' || c == '>';
}

static bool is_name_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_name_char(int c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
static bool is_special_param(int c) { return c > 0 && strchr("@*#?-$!0123456789", c) != NULL; }

static void lword_free(lword_t *w) { buf_free(&w->val); }

static void tok_free(token_t *t)
{
    lword_free(&t->w);
    memset(t, 0, sizeof *t);
}

/* ==== words: quotes ====================================================================== */

/* Assignment-prefix tracking: NAME=, NAME+=, NAME[subscript]= before any quote. */
enum { AS_START, AS_NAME, AS_SUB, AS_AFTER_SUB, AS_PLUS, AS_DONE, AS_NO };

typedef struct wstate {
    int as;         /* AS_* */
    size_t eq_end;  /* position just after the '=' of an assignment */
    int brace_open; /* unquoted '{' not yet closed */
    bool brace_sep; /* unquoted ',' or '..' inside one */
} wstate_t;

/* A quoted part or an expansion ends a possible assignment name (but is fine
 * inside a subscript: a[$i]=x). */
static void as_quoted(wstate_t *st)
{
    if (st->as != AS_SUB && st->as != AS_DONE) st->as = AS_NO;
}

static void as_char(wstate_t *st, lword_t *w, int c, size_t pos_after)
{
    switch (st->as) {
    case AS_START: st->as = is_name_start(c) ? AS_NAME : AS_NO; break;
    case AS_NAME:
        if (!is_name_char(c)) st->as = c == '[' ? AS_SUB : c == '+' ? AS_PLUS : c == '=' ? AS_DONE : AS_NO;
        break;
    case AS_SUB: if (c == ']') st->as = AS_AFTER_SUB; break;
    case AS_AFTER_SUB: st->as = c == '=' ? AS_DONE : c == '+' ? AS_PLUS : AS_NO; break;
    case AS_PLUS: st->as = c == '=' ? AS_DONE : AS_NO; break;
    default: return;
    }
    if (st->as == AS_DONE) {
        w->assign = true;
        st->eq_end = pos_after;
    }
}

static void note_glob(lword_t *w, bool *flag, size_t off)
{
    if (!w->glob && !w->brace) w->glob_at = off;
    *flag = true;
}

/* Brace expansion needs an unquoted {, a ',' or '..' inside it, and an unquoted }. */
static void brace_char(wstate_t *st, lword_t *w, int c, size_t off)
{
    if (c == '{') st->brace_open++;
    else if (c == ',' && st->brace_open) st->brace_sep = true;
    else if (c == '.' && st->brace_open && w->val.len && w->val.p[w->val.len - 1] == '.') st->brace_sep = true;
    else if (c == '}' && st->brace_open) {
        st->brace_open--;
        if (st->brace_sep) note_glob(w, &w->brace, off);
    }
}

static void single_quote(parser_t *p, lword_t *w)
{
    size_t open = p->pos;
    const char *q = open + 1 < p->end ? memchr(p->s + open + 1, '\'', p->end - open - 1) : NULL;
    if (!q) {
        perr(p, open, "unterminated single quote");
        p->pos = p->end;
        return;
    }
    buf_add(&w->val, p->s + open + 1, (size_t)(q - p->s) - open - 1);
    p->pos = (size_t)(q - p->s) + 1;
    w->quoted = true;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void add_utf8(buf_t *b, uint32_t cp)
{
    if (cp < 0x80) {
        buf_addc(b, (char)cp);
    } else if (cp < 0x800) {
        buf_addc(b, (char)(0xC0 | (cp >> 6)));
        buf_addc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        buf_addc(b, (char)(0xE0 | (cp >> 12)));
        buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_addc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        buf_addc(b, (char)(0xF0 | (cp >> 18)));
        buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_addc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Up to max digits of base 8 or 16 at p->pos; *n is how many were read. */
static uint32_t read_digits(parser_t *p, int base, int max, int *n)
{
    uint32_t v = 0;
    for (*n = 0; *n < max; (*n)++) {
        int d = hexval(at(p, p->pos));
        if (d < 0 || d >= base) break;
        v = v * (uint32_t)base + (uint32_t)d;
        p->pos++;
    }
    return v;
}

/* One escape of $'...' after its backslash, appended to b. Returns false when
 * it was a NUL, which ends the value in bash. *locale is set for \u and \U
 * above 0x7f: bash encodes those in the run-time locale (in the C locale it
 * leaves "\u00E9" as text), so the value is only known when it runs. */
static bool ansi_escape(parser_t *p, buf_t *b, bool *locale)
{
    static const char from[] = "abeEfnrtv\\'\"?", to[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
    int c = at(p, p->pos++), n;
    const char *k = c > 0 ? strchr(from, c) : NULL;
    if (k) {
        buf_addc(b, to[k - from]);
        return true;
    }
    uint32_t v;
    if (c == 'c') {
        int x = at(p, p->pos);
        if (x < 0) { buf_addc(b, '\\'); buf_addc(b, 'c'); return true; }
        p->pos++;
        v = x == '?' ? 0x7f : (uint32_t)(x & 0x1f);
    } else if (c == 'x' || c == 'u' || c == 'U') {
        v = read_digits(p, 16, c == 'x' ? 2 : c == 'u' ? 4 : 8, &n);
        if (!n) { buf_addc(b, '\\'); buf_addc(b, (char)c); return true; }
        if (c != 'x' && v) {
            if (v >= 0x80) *locale = true;
            add_utf8(b, v > 0x10FFFF ? 0xFFFD : v);
            return true;
        }
    } else if (c >= '0' && c <= '7') {
        p->pos--;
        v = read_digits(p, 8, 3, &n) & 0xFF;
    } else {
        buf_addc(b, '\\');
        buf_addc(b, (char)c);
        return true;
    }
    if (!v) return false;
    buf_addc(b, (char)v);
    return true;
}

/* $'...' with p->pos at the quote: a static value, cut at a NUL as bash does. */
static void ansi_quote(parser_t *p, lword_t *w)
{
    size_t open = p->pos - 1;
    bool cut = false, locale = false;
    buf_t tmp = BUF_INIT;
    for (p->pos++;;) {
        int c = at(p, p->pos);
        if (c < 0 || (c == '\\' && at(p, p->pos + 1) < 0)) {
            perr(p, open, "unterminated $' quote");
            p->pos = p->end;
            break;
        }
        p->pos++;
        if (c == '\'') break;
        buf_truncate(&tmp, 0);
        if (c == '\\') {
            if (!ansi_escape(p, &tmp, &locale)) cut = true;
        } else {
            buf_addc(&tmp, (char)c);
        }
        if (!cut) buf_add(&w->val, tmp.p, tmp.len);
    }
    buf_free(&tmp);
    w->quoted = true;
    if (locale) w->dynamic = true;
}

/* "..." (p->pos at the quote), or with heredoc set an expanding here-document
 * body up to p->end, where '"' is an ordinary character. */
static void lex_dquote(parser_t *p, lword_t *w, bool heredoc)
{
    size_t open = p->pos;
    if (!heredoc) p->pos++;
    while (!failed(p)) {
        int c = at(p, p->pos);
        if (c < 0) {
            if (!heredoc) perr(p, open, "unterminated double quote");
            break;
        }
        if (c == '"' && !heredoc) {
            p->pos++;
            break;
        }
        if (c == '$') { lex_dollar(p, w, true); continue; }
        if (c == '`') { lex_backquote(p, w, true); continue; }
        p->pos++;
        if (c == '\\') {
            int n = at(p, p->pos);
            if (n == '\n') { p->pos++; continue; }
            if (n == '$' || n == '`' || n == '\\' || (n == '"' && !heredoc)) {
                buf_addc(&w->val, (char)n);
                p->pos++;
                continue;
            }
        }
        buf_addc(&w->val, (char)c);
    }
    w->quoted = true;
}

/* ==== words: substitutions ================================================================ */

/* Does "((" end just before from open arithmetic? A flat scan (quotes skipped,
 * parentheses counted, no recursion) for the "))" that closes it, as bash
 * decides; *close is the first of those two. Nested scans are bounded by the
 * depth limit, so the whole parse stays linear. */
static bool arith_ahead(const parser_t *p, size_t from, size_t *close)
{
    int level = 0;
    for (size_t i = from; i < p->end; i++) {
        char c = p->s[i];
        if (c == '\\') {
            i++;
        } else if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < p->end && p->s[j] != c) j += (c == '"' && p->s[j] == '\\') ? 2 : 1;
            if (j >= p->end) return false;
            i = j;
        } else if (c == '(') {
            level++;
        } else if (c == ')') {
            if (level > 0) { level--; continue; }
            if (i + 1 < p->end && p->s[i + 1] == ')') { *close = i; return true; }
            return false;
        }
    }
    return false;
}

/* The ']' closing "$[" (old arithmetic), by the same flat scan. */
static bool bracket_ahead(const parser_t *p, size_t from, size_t *close)
{
    int level = 0;
    for (size_t i = from; i < p->end; i++) {
        char c = p->s[i];
        if (c == '\\') i++;
        else if (c == '[') level++;
        else if (c == ']' && level-- == 0) { *close = i; return true; }
    }
    return false;
}

/* Reads [from, to) as arithmetic, where only the substitutions run commands. */
static void arith_region(parser_t *p, size_t open, size_t from, size_t to)
{
    if (!enter(p, open)) return;
    size_t save_end = p->end, save_base = p->hd_base;
    p->end = to;
    p->pos = from;
    p->hd_base = p->hds.n;
    lword_t scratch = {0};
    while (!failed(p) && p->pos < p->end) {
        int c = p->s[p->pos];
        if (c == '\\') p->pos += 2;
        else if (c == '\'') single_quote(p, &scratch);
        else if (c == '"') lex_dquote(p, &scratch, false);
        else if (c == '$') lex_dollar(p, &scratch, true);
        else if (c == '`') lex_backquote(p, &scratch, true);
        else p->pos++;
    }
    lword_free(&scratch);
    p->end = save_end;
    p->hd_base = save_base;
    p->pos = to;
    leave(p);
}

static void syntax_error(parser_t *p)
{
    const token_t *t = &p->tok;
    buf_t b = BUF_INIT;
    if (t->kind == T_EOF) buf_adds(&b, "end of input");
    else if (t->kind == T_NEWLINE) buf_adds(&b, "newline");
    else if (t->kind == T_OP) buf_printf(&b, "'%s'", op_text[t->op]);
    else {
        size_t n = t->w.end - t->w.start;
        buf_addc(&b, '\'');
        sanitize_into(&b, p->s + t->w.start, n > 32 ? 32 : n);
        buf_adds(&b, n > 32 ? "...'" : "'");
    }
    perr(p, t->start, "syntax error near %s", buf_cstr(&b));
    buf_free(&b);
}

/* The list inside $( ), <( ) or >( ), p->pos just after the parenthesis. */
static void subst_list(parser_t *p, size_t open, const char *what)
{
    if (!enter(p, open)) return;
    token_t saved = p->tok;
    size_t saved_base = p->hd_base, nh = p->hds.n;
    memset(&p->tok, 0, sizeof p->tok);
    /* Here-documents pending outside wait for a newline outside: bash reads
     * them after the line that holds the whole substitution. */
    p->hd_base = nh;
    advance(p);
    parse_list(p);
    if (!failed(p)) {
        if (p->tok.kind == T_EOF) perr(p, open, "unterminated %s", what);
        else if (p->tok.kind != T_OP || p->tok.op != OP_RPAREN) syntax_error(p);
        else if (p->hds.n > nh) perr(p, p->hds.v[nh].offset, "unterminated here-document");
    }
    for (size_t i = nh; i < p->hds.n; i++) free(p->hds.v[i].delim);
    if (p->hds.n > nh) p->hds.n = nh;
    tok_free(&p->tok);
    p->tok = saved;
    p->hd_base = saved_base;
    leave(p);
}

/* ${...} with p->pos after the brace: nested braces, quotes and substitutions
 * are followed to the closing brace (bash matches quotes here even inside
 * double quotes). ${x@P} runs the substitutions inside x's value. */
static void brace_param(parser_t *p, size_t open, bool in_dq)
{
    if (!enter(p, open)) return;
    size_t save_base = p->hd_base, start = p->pos;
    p->hd_base = p->hds.n;
    int level = 0;
    lword_t scratch = {0};
    while (!failed(p)) {
        int c = at(p, p->pos);
        if (c < 0) {
            perr(p, open, "unterminated '${'");
            break;
        }
        if (c == '}' && level-- == 0) {
            if (p->pos - start >= 2 && p->s[p->pos - 2] == '@' && p->s[p->pos - 1] == 'P')
                emit_opaque(p, open, p->pos + 1, CMD_OPAQUE_PROMPT);
            p->pos++;
            break;
        }
        if (c == '}') { p->pos++; continue; }
        if (c == '{') { level++; p->pos++; continue; }
        if (c == '\\') p->pos += p->pos + 1 < p->end ? 2 : 1;
        else if (c == '\'') single_quote(p, &scratch);
        else if (c == '"') lex_dquote(p, &scratch, false);
        else if (c == '$') lex_dollar(p, &scratch, in_dq);
        else if (c == '`') lex_backquote(p, &scratch, in_dq);
        else p->pos++;
    }
    lword_free(&scratch);
    p->hd_base = save_base;
    leave(p);
}

/* In an entry only a literal '$' (and $'..', $"..") may appear. */
static bool entry_dollar_ok(int c)
{
    return !(c == '(' || c == '{' || c == '[' || is_name_start(c) || is_special_param(c));
}

/* '$' at p->pos: an expansion, a quote ($'..', $"..") or a literal dollar. */
static void lex_dollar(parser_t *p, lword_t *w, bool in_dq)
{
    size_t d = p->pos, i = skip_cont(p, p->pos + 1), close;
    int c = at(p, i);
    if (p->entry_mode && !entry_dollar_ok(c)) {
        perr_hint(p, d, "an entry is literal words (write '$' in single quotes to match a dollar sign)",
                  "'$' starts an expansion");
        p->pos = p->end;
        return;
    }
    if (!in_dq && c == '\'') {
        p->pos = i;
        ansi_quote(p, w);
        return;
    }
    if (!in_dq && c == '"') {
        /* $"...": translated through a message catalog that TEXTDOMAIN and
         * TEXTDOMAINDIR choose at run time, so its value is not the text. */
        p->pos = i;
        lex_dquote(p, w, false);
        w->dynamic = true;
        return;
    }
    if (c == '(') {
        size_t j = skip_cont(p, i + 1);
        if (at(p, j) == '(' && arith_ahead(p, j + 1, &close)) {
            arith_region(p, d, j + 1, close);
            p->pos = close + 2;
        } else {
            p->pos = i + 1;
            subst_list(p, d, "command substitution '$('");
        }
    } else if (c == '{') {
        p->pos = i + 1;
        brace_param(p, d, in_dq);
    } else if (c == '[') {
        if (!bracket_ahead(p, i + 1, &close)) {
            perr(p, d, "unterminated '$['");
            p->pos = p->end;
            return;
        }
        arith_region(p, d, i + 1, close);
        p->pos = close + 1;
    } else if (is_name_start(c)) {
        for (p->pos = i; is_name_char(at(p, p->pos));) p->pos++;
    } else if (is_special_param(c)) {
        p->pos = i + 1;
    } else {
        buf_addc(&w->val, '$');
        p->pos = d + 1;
        return;
    }
    w->dynamic = true;
    if (!in_dq) w->splits = true;
}

/* `...` at p->pos: the body, with \$ \` \\ (and \" inside double quotes)
 * unescaped, is parsed as a command string of its own. */
static void lex_backquote(parser_t *p, lword_t *w, bool in_dq)
{
    size_t open = p->pos;
    if (p->entry_mode) {
        perr_hint(p, open, "an entry is literal words (quote it to match a backquote)",
                  "'`' starts a command substitution");
        p->pos = p->end;
        return;
    }
    buf_t body = BUF_INIT;
    for (p->pos++;;) {
        int c = at(p, p->pos);
        if (c < 0) {
            perr(p, open, "unterminated backquote");
            break;
        }
        p->pos++;
        if (c == '`') {
            parse_nested(p, body.p, body.len, open, "backquoted command", p->depth);
            break;
        }
        int n = at(p, p->pos);
        if (c == '\\' && (n == '$' || n == '`' || n == '\\' || n == '\n' || (in_dq && n == '"'))) {
            if (n != '\n') buf_addc(&body, (char)n);
            p->pos++;
            continue;
        }
        buf_addc(&body, (char)c);
    }
    buf_free(&body);
    w->dynamic = true;
    if (!in_dq) w->splits = true;
}

/* NAME=( words ) with p->pos at the parenthesis. */
static void array_assign(parser_t *p, lword_t *w)
{
    size_t open = p->pos, save_base = p->hd_base;
    if (!enter(p, open)) return;
    p->hd_base = p->hds.n;
    for (p->pos++; !failed(p);) {
        int c = cur(p);
        if (c == ' ' || c == '\t' || c == '\n') {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->end && p->s[p->pos] != '\n') p->pos++;
        } else if (c == ')') {
            p->pos++;
            break;
        } else if (c < 0) {
            perr(p, open, "unterminated array assignment");
        } else if (is_meta(c) && !((c == '<' || c == '>') && at(p, skip_cont(p, p->pos + 1)) == '(')) {
            perr(p, p->pos, "syntax error near '%c'", c);
        } else {
            lword_t e;
            lex_word(p, &e, true);
            lword_free(&e);
        }
    }
    p->hd_base = save_base;
    leave(p);
    w->dynamic = true;
}

/* Reads one word up to an unquoted metacharacter. Substitutions inside it are
 * parsed (and their commands emitted) on the way. */
static void lex_word(parser_t *p, lword_t *w, bool in_array)
{
    wstate_t st = {0};
    memset(w, 0, sizeof *w);
    w->start = p->pos;
    while (!failed(p)) {
        int c = cur(p);
        size_t off = p->pos;
        if (c < 0) break;
        if ((c == '<' || c == '>') && at(p, skip_cont(p, off + 1)) == '(') {
            if (p->entry_mode) break;
            p->pos = skip_cont(p, off + 1) + 1;
            subst_list(p, off, "process substitution");
            w->dynamic = true;
            as_quoted(&st);
            continue;
        }
        if (is_meta(c)) {
            if (c == '(' && !in_array && !p->entry_mode && st.as == AS_DONE && off == st.eq_end)
                array_assign(p, w);
            break;
        }
        if (c == '\\') {
            if (off + 1 < p->end) buf_addc(&w->val, p->s[off + 1]);
            else buf_addc(&w->val, '\\');
            p->pos = off + 1 < p->end ? off + 2 : off + 1;
            w->quoted = true;
        } else if (c == '\'') {
            single_quote(p, w);
        } else if (c == '"') {
            lex_dquote(p, w, false);
        } else if (c == '$') {
            lex_dollar(p, w, false);
            if (p->pos == off + 1) { /* a literal '$' */
                as_char(&st, w, '$', p->pos);
                continue;
            }
        } else if (c == '`') {
            lex_backquote(p, w, false);
        } else {
            p->pos++;
            if (c == '*' || c == '?' || c == '[') note_glob(w, &w->glob, off);
            brace_char(&st, w, c, off);
            buf_addc(&w->val, (char)c);
            as_char(&st, w, c, p->pos);
            continue;
        }
        as_quoted(&st);
    }
    w->end = p->pos;
}

/* ==== tokens ================================================================================ */

static void read_heredocs(parser_t *p);

static bool set_op(parser_t *p, op_t op, size_t next)
{
    p->tok.kind = T_OP;
    p->tok.op = op;
    p->pos = next;
    return true;
}

/* An operator starting with c (already read; i is past it), or false. */
static bool lex_operator(parser_t *p, int c, size_t i)
{
    size_t j = i, k;
    int c1 = nextc(p, &j), c2;
    switch (c) {
    case '&':
        if (c1 == '&') return set_op(p, OP_AND, j);
        if (c1 == '>') {
            k = j;
            return nextc(p, &k) == '>' ? set_op(p, OP_ANDDGREAT, k) : set_op(p, OP_ANDGREAT, j);
        }
        return set_op(p, OP_AMP, i);
    case '|':
        if (c1 == '|') return set_op(p, OP_OR, j);
        if (c1 == '&') return set_op(p, OP_PIPEAMP, j);
        return set_op(p, OP_PIPE, i);
    case ';':
        if (c1 == ';') {
            k = j;
            return nextc(p, &k) == '&' ? set_op(p, OP_DSEMIAMP, k) : set_op(p, OP_DSEMI, j);
        }
        return c1 == '&' ? set_op(p, OP_SEMIAMP, j) : set_op(p, OP_SEMI, i);
    case '(': return set_op(p, OP_LPAREN, i);
    case ')': return set_op(p, OP_RPAREN, i);
    case '<':
        if (c1 == '(') return false; /* <( ) is a word */
        if (c1 == '<') {
            k = j;
            c2 = nextc(p, &k);
            if (c2 == '<') return set_op(p, OP_TLESS, k);
            if (c2 == '-') return set_op(p, OP_DLESSDASH, k);
            return set_op(p, OP_DLESS, j);
        }
        if (c1 == '&') return set_op(p, OP_LESSAND, j);
        if (c1 == '>') return set_op(p, OP_LESSGREAT, j);
        return set_op(p, OP_LESS, i);
    case '>':
        if (c1 == '(') return false;
        if (c1 == '>') return set_op(p, OP_DGREAT, j);
        if (c1 == '&') return set_op(p, OP_GREATAND, j);
        if (c1 == '|') return set_op(p, OP_CLOBBER, j);
        return set_op(p, OP_GREAT, i);
    default: return false;
    }
}

/* 2>x and {fd}>x: the word before a redirection names a file descriptor. */
static bool is_ionumber(parser_t *p, lword_t *w)
{
    if (w->quoted || w->dynamic || !w->val.len) return false;
    int c = cur(p);
    if ((c != '<' && c != '>') || at(p, skip_cont(p, p->pos + 1)) == '(') return false;
    const char *v = w->val.p;
    size_t n = w->val.len, i;
    if (v[0] == '{' && v[n - 1] == '}' && n > 2 && is_name_start(v[1])) {
        for (i = 2; i < n - 1 && is_name_char(v[i]); i++) {}
        return i == n - 1;
    }
    for (i = 0; i < n && v[i] >= '0' && v[i] <= '9'; i++) {}
    return i == n;
}

static void advance(parser_t *p)
{
    tok_free(&p->tok);
    for (;;) {
        int c = cur(p);
        if (c == ' ' || c == '\t') {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->end && p->s[p->pos] != '\n') p->pos++;
        } else {
            break;
        }
    }
    token_t *t = &p->tok;
    t->start = p->pos;
    if (failed(p)) { /* every loop ends on EOF, so an error unwinds everything */
        t->kind = T_EOF;
        return;
    }
    size_t i = p->pos;
    int c = nextc(p, &i);
    if (c < 0) {
        t->kind = T_EOF;
    } else if (c == '\n') {
        t->kind = T_NEWLINE;
        p->pos = i;
        read_heredocs(p);
    } else if (!lex_operator(p, c, i)) {
        t->kind = T_WORD;
        lex_word(p, &t->w, false);
        if (is_ionumber(p, &t->w)) t->kind = T_IONUM;
    }
}

/* ==== here-documents ========================================================================== */

/* The delimiter after quote removal. A '$' or '`' in it is refused: bash
 * expands $'..' there, and a delimiter we read differently from bash would
 * turn commands into "data". */
static bool heredoc_delim(const char *raw, size_t n, buf_t *out, bool *quoted)
{
    if (memchr(raw, '$', n) || memchr(raw, '`', n)) return false;
    *quoted = false;
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if (c == '\\' && i + 1 < n && raw[i + 1] == '\n') {
            i++;
        } else if (c == '\'') {
            *quoted = true;
            for (i++; i < n && raw[i] != '\''; i++) buf_addc(out, raw[i]);
        } else if (c == '"') {
            *quoted = true;
            for (i++; i < n && raw[i] != '"'; i++) {
                if (raw[i] == '\\' && i + 1 < n && strchr("\\\"\n", raw[i + 1])) i++;
                buf_addc(out, raw[i]);
            }
        } else if (c == '\\') {
            *quoted = true;
            if (i + 1 < n) buf_addc(out, raw[++i]);
        } else {
            buf_addc(out, c);
        }
    }
    return true;
}

static void register_heredoc(parser_t *p, op_t op, size_t off)
{
    const lword_t *w = &p->tok.w;
    buf_t d = BUF_INIT;
    bool quoted;
    if (!heredoc_delim(p->s + w->start, w->end - w->start, &d, &quoted)) {
        perr_hint(p, w->start, "write a plain word such as EOF", "here-document delimiter with '$' or '`'");
        buf_free(&d);
        return;
    }
    heredoc_t h = {buf_detach(&d, NULL), off, op == OP_DLESSDASH, !quoted};
    vec_push(&p->hds, h);
}

/* An odd number of backslashes before e continues the line (in a body that expands). */
static bool line_continues(const char *s, size_t from, size_t e)
{
    size_t k = 0;
    while (e > from && s[e - 1] == '\\') e--, k++;
    return k % 2 == 1;
}

/* Reads one body at p->pos up to its delimiter line. An expanding body joins
 * backslash-newline before comparing, as bash does. A body that runs to the end
 * of the input is an error: bash accepts it with a warning, but it is also what
 * any misread delimiter would look like, so failing closed is the safe answer. */
static void read_heredoc(parser_t *p, heredoc_t h)
{
    size_t body = p->pos, body_end = 0, dlen = strlen(h.delim);
    bool found = false;
    buf_t line = BUF_INIT;
    while (!found && p->pos < p->end) {
        size_t ls = p->pos, i = ls;
        buf_truncate(&line, 0);
        for (;;) {
            const char *nl = memchr(p->s + i, '\n', p->end - i);
            size_t e = nl ? (size_t)(nl - p->s) : p->end;
            if (h.expand && nl && line_continues(p->s, i, e)) {
                buf_add(&line, p->s + i, e - 1 - i);
                i = e + 1;
                continue;
            }
            buf_add(&line, p->s + i, e - i);
            i = nl ? e + 1 : e;
            break;
        }
        p->pos = i;
        const char *l = buf_cstr(&line);
        size_t ll = line.len;
        while (h.strip_tabs && ll && *l == '\t') l++, ll--;
        if (ll == dlen && memcmp(l, h.delim, dlen) == 0) {
            found = true;
            body_end = ls;
        }
    }
    buf_free(&line);
    if (!found) {
        buf_t d = BUF_INIT;
        sanitize_into(&d, h.delim, dlen > 32 ? 32 : dlen);
        perr(p, h.offset, "unterminated here-document '%s'", buf_cstr(&d));
        buf_free(&d);
        return;
    }
    if (!h.expand) return;
    size_t after = p->pos, save_end = p->end;
    lword_t scratch = {0};
    p->pos = body;
    p->end = body_end;
    lex_dquote(p, &scratch, true);
    lword_free(&scratch);
    p->end = save_end;
    p->pos = after;
}

static void read_heredocs(parser_t *p)
{
    size_t base = p->hd_base, n = p->hds.n;
    for (size_t k = base; k < n && !failed(p); k++) read_heredoc(p, p->hds.v[k]);
    for (size_t k = base; k < n; k++) free(p->hds.v[k].delim);
    p->hds.n = base;
}

/* ==== grammar ==================================================================================== */

static bool is_op(const parser_t *p, op_t op) { return p->tok.kind == T_OP && p->tok.op == op; }

/* An unquoted word with exactly this text: how reserved words are recognised. */
static bool is_kw(const parser_t *p, const char *kw)
{
    const lword_t *w = &p->tok.w;
    size_t n = strlen(kw);
    return p->tok.kind == T_WORD && !w->quoted && !w->dynamic && w->val.len == n && memcmp(w->val.p, kw, n) == 0;
}

static const char *const reserved_words[] = {
    "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case",
    "esac", "function", "select", "time", "coproc", "{", "}", "!", "[[", "]]", NULL,
};

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return true;
    return false;
}

static bool is_closer(const parser_t *p)
{
    static const char *const closers[] = {"then", "elif", "else", "fi", "do", "done", "esac", "}", NULL};
    for (const char *const *c = closers; *c; c++)
        if (is_kw(p, *c)) return true;
    return false;
}

static void skip_newlines(parser_t *p)
{
    while (p->tok.kind == T_NEWLINE) advance(p);
}

static bool expect_kw(parser_t *p, const char *kw, const char *opener, size_t off)
{
    if (is_kw(p, kw)) return true;
    if (p->tok.kind == T_EOF) perr(p, off, "missing '%s' for the '%s'", kw, opener);
    else syntax_error(p);
    return false;
}

static void parse_redirect(parser_t *p)
{
    op_t op = p->tok.op;
    size_t off = p->tok.start;
    advance(p);
    if (p->tok.kind != T_WORD) {
        syntax_error(p);
        return;
    }
    if (op == OP_DLESS || op == OP_DLESSDASH) register_heredoc(p, op, off);
    advance(p);
}

static void parse_redirects(parser_t *p)
{
    while (!failed(p)) {
        if (p->tok.kind == T_IONUM) advance(p);
        else if (p->tok.kind == T_OP && p->tok.op >= OP_LESS) parse_redirect(p);
        else break;
    }
}

/* { list } */
static void parse_group(parser_t *p)
{
    size_t off = p->tok.start;
    if (!enter(p, off)) return;
    advance(p);
    parse_list(p);
    if (expect_kw(p, "}", "{", off)) advance(p);
    leave(p);
}

/* ( list ) or (( arithmetic )), with the first '(' read. */
static void parse_paren(parser_t *p)
{
    size_t off = p->tok.start, j = skip_cont(p, p->pos), close;
    if (at(p, j) == '(' && arith_ahead(p, j + 1, &close)) {
        arith_region(p, off, j + 1, close);
        p->pos = close + 2;
        advance(p);
        return;
    }
    if (!enter(p, off)) return;
    advance(p);
    parse_list(p);
    if (is_op(p, OP_RPAREN)) advance(p);
    else if (p->tok.kind == T_EOF) perr(p, off, "missing ')' for the '('");
    else syntax_error(p);
    leave(p);
}

static void parse_if(parser_t *p)
{
    size_t off = p->tok.start;
    if (!enter(p, off)) return;
    do {
        advance(p); /* past if / elif */
        parse_list(p);
        if (!expect_kw(p, "then", "if", off)) break;
        advance(p);
        parse_list(p);
    } while (is_kw(p, "elif"));
    if (!failed(p) && is_kw(p, "else")) {
        advance(p);
        parse_list(p);
    }
    if (expect_kw(p, "fi", "if", off)) advance(p);
    leave(p);
}

/* do list done, or bash's { list } */
static void parse_do(parser_t *p, const char *opener, size_t off)
{
    if (is_kw(p, "{")) {
        parse_group(p);
        return;
    }
    if (!expect_kw(p, "do", opener, off)) return;
    advance(p);
    parse_list(p);
    if (expect_kw(p, "done", "do", off)) advance(p);
}

static void parse_while(parser_t *p)
{
    size_t off = p->tok.start;
    const char *kw = is_kw(p, "while") ? "while" : "until";
    if (!enter(p, off)) return;
    advance(p);
    parse_list(p);
    parse_do(p, kw, off);
    leave(p);
}

/* for NAME [in WORDS]; do ..., for ((a; b; c)) ..., select ... */
static void parse_for(parser_t *p)
{
    size_t off = p->tok.start, close, j;
    const char *kw = is_kw(p, "for") ? "for" : "select";
    if (!enter(p, off)) return;
    advance(p);
    if (is_op(p, OP_LPAREN) && at(p, j = skip_cont(p, p->pos)) == '(' && arith_ahead(p, j + 1, &close)) {
        arith_region(p, off, j + 1, close);
        p->pos = close + 2;
        advance(p);
        if (is_op(p, OP_SEMI)) advance(p);
    } else if (p->tok.kind != T_WORD) {
        syntax_error(p);
    } else {
        advance(p);
        skip_newlines(p);
        if (is_kw(p, "in")) {
            for (advance(p); p->tok.kind == T_WORD;) advance(p); /* data; substitutions already read */
            if (is_op(p, OP_SEMI) || p->tok.kind == T_NEWLINE) advance(p);
            else syntax_error(p);
        } else if (is_op(p, OP_SEMI)) {
            advance(p);
        }
    }
    skip_newlines(p);
    if (!failed(p)) parse_do(p, kw, off);
    leave(p);
}

/* One "pattern | pattern )" of a case; false on error. */
static bool parse_case_patterns(parser_t *p)
{
    if (is_op(p, OP_LPAREN)) advance(p);
    for (;;) {
        if (p->tok.kind != T_WORD) break;
        advance(p);
        if (!is_op(p, OP_PIPE)) break;
        advance(p);
    }
    if (!is_op(p, OP_RPAREN)) {
        syntax_error(p);
        return false;
    }
    advance(p);
    return true;
}

static void parse_case(parser_t *p)
{
    size_t off = p->tok.start;
    if (!enter(p, off)) return;
    advance(p);
    if (p->tok.kind != T_WORD) {
        syntax_error(p);
        leave(p);
        return;
    }
    advance(p);
    skip_newlines(p);
    if (!expect_kw(p, "in", "case", off)) {
        leave(p);
        return;
    }
    for (advance(p); !failed(p);) {
        skip_newlines(p);
        if (is_kw(p, "esac")) {
            advance(p);
            break;
        }
        if (p->tok.kind == T_EOF) {
            perr(p, off, "missing 'esac' for the 'case'");
            break;
        }
        if (!parse_case_patterns(p)) break;
        parse_list(p);
        if (is_op(p, OP_DSEMI) || is_op(p, OP_SEMIAMP) || is_op(p, OP_DSEMIAMP)) advance(p);
        else if (!is_kw(p, "esac")) (void)expect_kw(p, "esac", "case", off);
    }
    leave(p);
}

/* [[ ... ]]: words are operands, not commands; their substitutions run. */
static void parse_cond(parser_t *p)
{
    size_t off = p->tok.start;
    if (!enter(p, off)) return;
    for (advance(p); !failed(p);) {
        if (is_kw(p, "]]")) {
            advance(p);
            break;
        }
        tkind_t k = p->tok.kind;
        op_t op = p->tok.op;
        if (k == T_EOF) {
            perr(p, off, "missing ']]' for the '[['");
        } else if (k == T_WORD && !p->tok.w.dynamic && subscript_code(buf_cstr(&p->tok.w.val))) {
            emit_opaque(p, p->tok.w.start, p->tok.w.end, CMD_OPAQUE_SUBSCRIPT);
            advance(p);
        } else if (k == T_WORD || k == T_IONUM || k == T_NEWLINE ||
                   (k == T_OP && (op == OP_LPAREN || op == OP_RPAREN || op == OP_AND || op == OP_OR ||
                                  op == OP_LESS || op == OP_GREAT || op == OP_PIPE))) {
            advance(p);
        } else {
            syntax_error(p);
        }
    }
    leave(p);
}

static bool is_compound_start(const parser_t *p)
{
    static const char *const starts[] = {"{", "if", "while", "until", "for", "select", "case", "[[", NULL};
    if (is_op(p, OP_LPAREN)) return true;
    for (const char *const *s = starts; *s; s++)
        if (is_kw(p, *s)) return true;
    return false;
}

/* The body of a function definition: one compound command. */
static void parse_function_body(parser_t *p, size_t off)
{
    if (!enter(p, off)) return;
    skip_newlines(p);
    if (is_compound_start(p)) parse_command(p);
    else syntax_error(p);
    leave(p);
}

/* function NAME [()] BODY */
static void parse_function(parser_t *p)
{
    size_t off = p->tok.start;
    advance(p);
    if (p->tok.kind != T_WORD) {
        syntax_error(p);
        return;
    }
    advance(p);
    if (is_op(p, OP_LPAREN)) {
        advance(p);
        if (!is_op(p, OP_RPAREN)) {
            syntax_error(p);
            return;
        }
        advance(p);
    }
    parse_function_body(p, off);
}

/* coproc [NAME] COMPOUND, or coproc SIMPLE-COMMAND: a word followed by a
 * compound command is the name, else it is the command word. */
static void parse_coproc(parser_t *p)
{
    size_t off = p->tok.start;
    if (!enter(p, off)) return;
    advance(p);
    if (is_compound_start(p)) {
        parse_command(p);
    } else if (p->tok.kind == T_WORD) {
        lword_t name = p->tok.w;
        memset(&p->tok.w, 0, sizeof name);
        advance(p);
        if (is_compound_start(p)) {
            lword_free(&name);
            parse_command(p);
        } else {
            parse_simple(p, &name);
        }
    } else {
        syntax_error(p);
    }
    leave(p);
}

static void parse_command(parser_t *p)
{
    if (failed(p)) return;
    if (p->tok.kind == T_WORD && !p->tok.w.quoted && !p->tok.w.dynamic) {
        if (is_kw(p, "{")) parse_group(p);
        else if (is_kw(p, "if")) parse_if(p);
        else if (is_kw(p, "while") || is_kw(p, "until")) parse_while(p);
        else if (is_kw(p, "for") || is_kw(p, "select")) parse_for(p);
        else if (is_kw(p, "case")) parse_case(p);
        else if (is_kw(p, "[[")) parse_cond(p);
        else if (is_kw(p, "function")) { parse_function(p); return; }
        else if (is_kw(p, "coproc")) { parse_coproc(p); return; }
        else if (is_closer(p) || is_kw(p, "!") || is_kw(p, "]]")) { syntax_error(p); return; }
        else { parse_simple(p, NULL); return; }
        parse_redirects(p);
        return;
    }
    if (is_op(p, OP_LPAREN)) {
        parse_paren(p);
        parse_redirects(p);
    } else if (p->tok.kind == T_WORD || p->tok.kind == T_IONUM || (p->tok.kind == T_OP && p->tok.op >= OP_LESS)) {
        parse_simple(p, NULL);
    } else {
        syntax_error(p);
    }
}

static bool ends_pipeline(const parser_t *p)
{
    if (p->tok.kind == T_EOF || p->tok.kind == T_NEWLINE) return true;
    if (p->tok.kind == T_OP)
        return p->tok.op == OP_SEMI || p->tok.op == OP_AMP || p->tok.op == OP_AND || p->tok.op == OP_OR ||
               p->tok.op == OP_RPAREN || p->tok.op == OP_DSEMI || p->tok.op == OP_SEMIAMP ||
               p->tok.op == OP_DSEMIAMP;
    return is_closer(p);
}

/* [time [-p]] [!] command [| command]... */
static void parse_pipeline(parser_t *p)
{
    bool prefix = false;
    for (;;) {
        if (is_kw(p, "time")) {
            advance(p);
            if (is_kw(p, "-p")) advance(p);
            if (is_kw(p, "--")) advance(p);
        } else if (is_kw(p, "!")) {
            advance(p);
        } else {
            break;
        }
        prefix = true;
    }
    if (prefix && ends_pipeline(p)) return;
    parse_command(p);
    while (!failed(p) && (is_op(p, OP_PIPE) || is_op(p, OP_PIPEAMP))) {
        advance(p);
        skip_newlines(p);
        parse_command(p);
    }
}

static void parse_and_or(parser_t *p)
{
    parse_pipeline(p);
    while (!failed(p) && (is_op(p, OP_AND) || is_op(p, OP_OR))) {
        advance(p);
        skip_newlines(p);
        parse_pipeline(p);
    }
}

/* Commands separated by ; & and newlines, up to EOF, ')', ';;' or a closing
 * reserved word, which the caller checks. */
static void parse_list(parser_t *p)
{
    while (!failed(p)) {
        skip_newlines(p);
        if (p->tok.kind == T_EOF || is_op(p, OP_RPAREN) || is_op(p, OP_DSEMI) || is_op(p, OP_SEMIAMP) ||
            is_op(p, OP_DSEMIAMP) || is_closer(p))
            return;
        parse_and_or(p);
        if (is_op(p, OP_SEMI) || is_op(p, OP_AMP) || p->tok.kind == T_NEWLINE) advance(p);
        else return;
    }
}

/* ==== simple commands ================================================================================ */

static cmd_word_t make_word(parser_t *p, const lword_t *w)
{
    arena_t *a = &p->sh->out->arena;
    cmd_word_t cw = {0};
    cw.rawlen = w->end - w->start;
    cw.raw = arena_strndup(a, p->s + w->start, cw.rawlen);
    cw.dynamic = w->dynamic;
    cw.splits = w->splits;
    cw.glob = w->glob || w->brace;
    if (w->dynamic) {
        cw.text = cw.raw;
        cw.len = cw.rawlen;
    } else {
        cw.len = w->val.len;
        cw.text = arena_strndup(a, w->val.p ? w->val.p : "", cw.len);
    }
    return cw;
}

/* name () BODY, with the name read and the '(' current. */
static void parse_funcdef(parser_t *p, size_t off)
{
    advance(p);
    if (!is_op(p, OP_RPAREN)) {
        syntax_error(p);
        return;
    }
    advance(p);
    parse_function_body(p, off);
}

/* Assignments and redirections, then words. first, when given, is an already
 * read command word (taken over). */
static void parse_simple(parser_t *p, lword_t *first)
{
    lwords_t words = {0};
    bool prefix = false;
    if (first) vec_push(&words, *first);
    while (!failed(p)) {
        if (p->tok.kind == T_IONUM) {
            advance(p);
            prefix = true;
        } else if (p->tok.kind == T_OP && p->tok.op >= OP_LESS) {
            parse_redirect(p);
            prefix = true;
        } else if (p->tok.kind == T_WORD) {
            if (!words.n && p->tok.w.assign) {
                advance(p);
                prefix = true;
                continue;
            }
            vec_push(&words, p->tok.w);
            memset(&p->tok.w, 0, sizeof p->tok.w);
            advance(p);
            if (words.n == 1 && !prefix && !first && is_op(p, OP_LPAREN)) {
                parse_funcdef(p, words.v[0].start);
                goto out;
            }
        } else {
            break;
        }
    }
    if (!failed(p) && words.n) {
        cmd_word_t *cw = arena_alloc(&p->sh->out->arena, words.n * sizeof *cw);
        for (size_t i = 0; i < words.n; i++) cw[i] = make_word(p, &words.v[i]);
        emit(p, cw, words.n, p->nested ? p->origin : words.v[0].start, p->depth, false);
    }
out:
    for (size_t i = 0; i < words.n; i++) lword_free(&words.v[i]);
    vec_free(&words);
}

/* A synthetic opaque command for an expansion that runs code wherever it
 * appears (${x@P}): its one word is the expansion as written. */
static void emit_opaque(parser_t *p, size_t start, size_t end, cmd_opaque_t why)
{
    if (p->entry_mode) return;
    arena_t *a = &p->sh->out->arena;
    cmd_word_t *w = arena_zalloc(a, sizeof *w);
    w->raw = w->text = arena_strndup(a, p->s + start, end - start);
    w->rawlen = w->len = end - start;
    w->dynamic = true;
    cmd_simple_t c = {w, 1, p->nested ? p->origin : start, p->depth, why, false};
    vec_push(&p->sh->cmds, c);
}

/* A string taken from a word (backquotes, sh -c, trap, watch), parsed with
 * the same rules; its commands join the same list. */
static void parse_nested(parser_t *p, const char *s, size_t len, size_t at_off,
                         const char *what, unsigned depth)
{
    if (failed(p)) return;
    if (depth + 1 >= CMD_MAX_DEPTH) {
        perr(p, at_off, "nested too deeply");
        return;
    }
    parser_t c = {0};
    c.sh = p->sh;
    c.s = s ? s : "";
    c.end = len;
    c.depth = depth + 1;
    c.nested = true;
    c.origin = p->nested ? p->origin : at_off;
    c.what = p->nested ? p->what : what;
    advance(&c);
    parse_list(&c);
    if (!failed(&c) && c.tok.kind != T_EOF) syntax_error(&c);
    if (!failed(&c) && c.hds.n) perr(&c, c.hds.v[0].offset, "unterminated here-document");
    for (size_t i = 0; i < c.hds.n; i++) free(c.hds.v[i].delim);
    vec_free(&c.hds);
    tok_free(&c.tok);
}

/* ==== wrappers and other commands that run commands ======================================================= */

typedef struct lopt {
    const char *name; /* without the leading "--" */
    char letter;      /* the short option it stands for, or 0 */
    char arg;         /* 0 none, 1 required, 2 optional (only as --name=value) */
} lopt_t;

enum { W_ASSIGN = 1, W_NUMOPT = 2, W_NOOPTS = 4, W_MORE = 8, W_DASH_I = 16 };

typedef enum {
    WR_ENV = 1, WR_COMMAND, WR_BUILTIN, WR_EXEC, WR_NICE, WR_NOHUP, WR_TIMEOUT, WR_STDBUF, WR_TIME,
    WR_SUDO, WR_DOAS, WR_XARGS, WR_SETSID, WR_BUSYBOX, WR_WATCH, WR_FLOCK, WR_CHROOT,
} wrapper_id_t;

typedef struct wrapper {
    const char *name;
    wrapper_id_t id;
    const char *flags;   /* short options without an argument */
    const char *args;    /* short options with an argument */
    const char *optargs; /* short options with an optional, attached argument */
    const lopt_t *longs; /* terminated by a NULL name; NULL for none */
    unsigned operands;   /* operands between the options and the command (timeout's duration) */
    unsigned how;        /* W_* */
} wrapper_t;

#define HELP_VERSION {"help", 0, 0}, {"version", 0, 0}
static const lopt_t env_longs[] = {
    {"ignore-environment", 'i', 0}, {"null", '0', 0}, {"unset", 'u', 1}, {"chdir", 'C', 1},
    {"split-string", 'S', 1}, {"debug", 'v', 0}, {"default-signal", 0, 2}, {"ignore-signal", 0, 2},
    {"block-signal", 0, 2}, {"list-signal-handling", 0, 0}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t nice_longs[] = {{"adjustment", 'n', 1}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t plain_longs[] = {HELP_VERSION, {NULL, 0, 0}};
static const lopt_t timeout_longs[] = {
    {"foreground", 'f', 0}, {"kill-after", 'k', 1}, {"preserve-status", 'p', 0}, {"signal", 's', 1},
    {"verbose", 'v', 0}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t stdbuf_longs[] = {{"input", 'i', 1}, {"output", 'o', 1}, {"error", 'e', 1}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t time_longs[] = {
    {"append", 'a', 0}, {"format", 'f', 1}, {"output", 'o', 1}, {"portability", 'p', 0}, {"quiet", 'q', 0},
    {"verbose", 'v', 0}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t sudo_longs[] = {
    {"askpass", 'A', 0}, {"bell", 'B', 0}, {"background", 'b', 0}, {"close-from", 'C', 1}, {"chdir", 'D', 1},
    {"preserve-env", 'E', 2}, {"edit", 'e', 0}, {"group", 'g', 1}, {"set-home", 'H', 0}, {"host", 0, 1},
    {"login", 'i', 0}, {"remove-timestamp", 'K', 0}, {"reset-timestamp", 'k', 0}, {"list", 'l', 0},
    {"no-update", 'N', 0}, {"non-interactive", 'n', 0}, {"preserve-groups", 'P', 0}, {"prompt", 'p', 1},
    {"chroot", 'R', 1}, {"role", 'r', 1}, {"stdin", 'S', 0}, {"shell", 's', 0}, {"command-timeout", 'T', 1},
    {"type", 't', 1}, {"other-user", 'U', 1}, {"user", 'u', 1}, {"validate", 'v', 0}, {"auth-type", 'a', 1},
    {"login-class", 'c', 1}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t xargs_longs[] = {
    {"null", '0', 0}, {"arg-file", 'a', 1}, {"delimiter", 'd', 1}, {"eof", 'e', 2}, {"replace", 'i', 2},
    {"max-lines", 'l', 2}, {"max-args", 'n', 1}, {"open-tty", 'o', 0}, {"max-procs", 'P', 1},
    {"interactive", 'p', 0}, {"process-slot-var", 0, 1}, {"no-run-if-empty", 'r', 0}, {"max-chars", 's', 1},
    {"show-limits", 0, 0}, {"verbose", 't', 0}, {"exit", 'x', 0}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t setsid_longs[] = {{"ctty", 'c', 0}, {"fork", 'f', 0}, {"wait", 'w', 0}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t watch_longs[] = {
    {"beep", 'b', 0}, {"color", 'c', 0}, {"no-color", 'C', 0}, {"differences", 'd', 2}, {"errexit", 'e', 0},
    {"chgexit", 'g', 0}, {"interval", 'n', 1}, {"precise", 'p', 0}, {"equexit", 'q', 1}, {"no-rerun", 'r', 0},
    {"no-title", 't', 0}, {"no-wrap", 'w', 0}, {"exec", 'x', 0}, HELP_VERSION, {NULL, 0, 0}};
static const lopt_t flock_longs[] = {
    {"shared", 's', 0}, {"exclusive", 'x', 0}, {"unlock", 'u', 0}, {"nonblock", 'n', 0}, {"timeout", 'w', 1},
    {"conflict-exit-code", 'E', 1}, {"close", 'o', 0}, {"no-fork", 'F', 0}, {"verbose", 0, 0}, HELP_VERSION,
    {NULL, 0, 0}};
static const lopt_t chroot_longs[] = {{"userspec", 0, 1}, {"groups", 0, 1}, {"skip-chdir", 0, 0}, HELP_VERSION, {NULL, 0, 0}};

/* Options are those of GNU coreutils/findutils 9.x, sudo 1.9, OpenDoas, procps
 * watch and bash's builtins. An option not listed makes the command opaque:
 * if it took an argument we would mistake that argument for the command. */
static const wrapper_t wrappers[] = {
    {"env", WR_ENV, "i0v", "uCS", "", env_longs, 0, W_ASSIGN | W_DASH_I},
    {"command", WR_COMMAND, "pvV", "", "", NULL, 0, 0},
    {"builtin", WR_BUILTIN, "", "", "", NULL, 0, W_NOOPTS},
    {"exec", WR_EXEC, "cl", "a", "", NULL, 0, 0},
    {"nice", WR_NICE, "", "n", "", nice_longs, 0, W_NUMOPT},
    {"nohup", WR_NOHUP, "", "", "", plain_longs, 0, 0},
    {"timeout", WR_TIMEOUT, "fpv", "ks", "", timeout_longs, 1, 0},
    {"stdbuf", WR_STDBUF, "", "ioe", "", stdbuf_longs, 0, 0},
    {"time", WR_TIME, "apqvV", "fo", "", time_longs, 0, 0},
    {"sudo", WR_SUDO, "ABbEeHiKklNnPSsVv", "CDgpRrTtUuac", "h", sudo_longs, 0, W_ASSIGN},
    {"doas", WR_DOAS, "Lns", "Cu", "", NULL, 0, 0},
    {"xargs", WR_XARGS, "0oprtx", "adEILnPs", "eil", xargs_longs, 0, W_MORE},
    {"setsid", WR_SETSID, "cfw", "", "", setsid_longs, 0, 0},
    {"busybox", WR_BUSYBOX, "", "", "", NULL, 0, W_NOOPTS},
    {"watch", WR_WATCH, "bcCegprtwxhv", "nq", "d", watch_longs, 0, 0},
    {"flock", WR_FLOCK, "sxeunoFhV", "wE", "", flock_longs, 1, 0},
    {"chroot", WR_CHROOT, "", "", "", chroot_longs, 1, 0},
};

typedef struct optscan {
    bool seen[128];       /* short options seen (long ones count as their letter) */
    const char *arg[128]; /* the argument of each, NULL when none */
} optscan_t;

static const char *base_name(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

static bool set_opaque(parser_t *p, size_t idx, cmd_opaque_t why)
{
    p->sh->cmds.v[idx].opaque = why;
    return false;
}

/* The word after an option that takes one: fine unless it may split into
 * several words, which would move the command. */
static bool option_arg_ok(const cmd_word_t *w) { return !(w->dynamic && w->splits); }

static bool env_assign(const char *t)
{
    const char *eq = strchr(t, '=');
    return eq && eq != t;
}

static const lopt_t *find_long(const lopt_t *longs, const char *name, size_t n)
{
    const lopt_t *hit = NULL;
    if (!longs) return NULL;
    for (const lopt_t *l = longs; l->name; l++) {
        if (strncmp(l->name, name, n)) continue;
        if (!l->name[n]) return l; /* exact */
        if (hit) return NULL;      /* an ambiguous abbreviation: the program refuses it */
        hit = l;
    }
    return hit; /* a unique abbreviation, as getopt_long accepts */
}

/* One "--name[=value]" at words[i]; returns the next index, or 0 when opaque. */
static size_t scan_long(parser_t *p, size_t idx, const wrapper_t *wr, optscan_t *os, size_t i)
{
    const cmd_simple_t *c = &p->sh->cmds.v[idx];
    const char *t = c->words[i].text + 2, *eq = strchr(t, '=');
    const lopt_t *l = find_long(wr->longs, t, eq ? (size_t)(eq - t) : strlen(t));
    if (!l) return set_opaque(p, idx, CMD_OPAQUE_OPTION);
    unsigned char k = (unsigned char)l->letter;
    os->seen[k] = true;
    os->arg[k] = eq ? eq + 1 : NULL;
    if (l->arg != 1 || eq) return i + 1;
    if (i + 1 >= c->nwords) return c->nwords;
    if (!option_arg_ok(&c->words[i + 1])) return set_opaque(p, idx, CMD_OPAQUE_WRAPPED);
    os->arg[k] = c->words[i + 1].text;
    return i + 2;
}

/* One bundle of short options at words[i]; returns the next index, or 0. */
static size_t scan_short(parser_t *p, size_t idx, const wrapper_t *wr, optscan_t *os, size_t i)
{
    const cmd_simple_t *c = &p->sh->cmds.v[idx];
    const char *t = c->words[i].text;
    for (size_t k = 1; t[k]; k++) {
        unsigned char ch = (unsigned char)t[k];
        if (ch >= 128) return set_opaque(p, idx, CMD_OPAQUE_OPTION);
        if (strchr(wr->args, ch)) {
            os->seen[ch] = true;
            if (t[k + 1]) {
                os->arg[ch] = t + k + 1;
                return i + 1;
            }
            if (i + 1 >= c->nwords) return c->nwords;
            if (!option_arg_ok(&c->words[i + 1])) return set_opaque(p, idx, CMD_OPAQUE_WRAPPED);
            os->arg[ch] = c->words[i + 1].text;
            return i + 2;
        }
        if (strchr(wr->optargs, ch)) {
            os->seen[ch] = true;
            os->arg[ch] = t[k + 1] ? t + k + 1 : NULL;
            return i + 1;
        }
        if (!strchr(wr->flags, ch)) return set_opaque(p, idx, CMD_OPAQUE_OPTION);
        os->seen[ch] = true;
    }
    return i + 1;
}

/* Walks a wrapper's options and operands; returns the index of the command it
 * runs (== nwords when none), or 0 when it made the command opaque. */
static size_t scan_wrapper(parser_t *p, size_t idx, const wrapper_t *wr, optscan_t *os)
{
    size_t i = 1, n = p->sh->cmds.v[idx].nwords;
    while (i < n) {
        const cmd_word_t *w = &p->sh->cmds.v[idx].words[i];
        if (w->dynamic) return set_opaque(p, idx, CMD_OPAQUE_WRAPPED);
        const char *t = w->text;
        if ((wr->how & W_ASSIGN) && env_assign(t)) { i++; continue; }
        if ((wr->how & W_NOOPTS) || t[0] != '-' || !t[1]) {
            if ((wr->how & W_DASH_I) && !strcmp(t, "-")) { i++; continue; }
            break;
        }
        if (!strcmp(t, "--")) { i++; break; }
        size_t next;
        if (t[1] == '-') next = scan_long(p, idx, wr, os, i);
        else if ((wr->how & W_NUMOPT) && strspn(t + 1, "0123456789") == strlen(t + 1)) next = i + 1;
        else next = scan_short(p, idx, wr, os, i);
        if (!next) return 0;
        i = next;
    }
    for (unsigned k = 0; k < wr->operands && i < n; k++, i++)
        if (!option_arg_ok(&p->sh->cmds.v[idx].words[i])) return set_opaque(p, idx, CMD_OPAQUE_WRAPPED);
    return i;
}

static void join_words(buf_t *b, const cmd_word_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i) buf_addc(b, ' ');
        buf_add(b, w[i].text, w[i].len);
    }
}

/* xargs -I R / -i[R]: words holding R are filled in from its input. */
static cmd_word_t *xargs_replace(parser_t *p, const cmd_word_t *w, size_t n, const char *r)
{
    cmd_word_t *copy = arena_alloc(&p->sh->out->arena, n * sizeof *copy);
    for (size_t i = 0; i < n; i++) {
        copy[i] = w[i];
        if (strstr(w[i].text, r)) copy[i].dynamic = true;
    }
    return copy;
}

static void classify_wrapper(parser_t *p, size_t idx, const wrapper_t *wr)
{
    optscan_t os = {0};
    size_t i = scan_wrapper(p, idx, wr, &os);
    cmd_simple_t c = p->sh->cmds.v[idx];
    if (!i || i >= c.nwords) return;
    cmd_word_t *inner = c.words + i;
    size_t n = c.nwords - i;
    bool more = false;
    switch (wr->id) {
    case WR_COMMAND:
        if (os.seen['v'] || os.seen['V']) return; /* a lookup: nothing runs */
        break;
    case WR_ENV:
        /* env -S splits a string into a command with rules of its own. */
        if (os.seen['S']) { set_opaque(p, idx, CMD_OPAQUE_OPTION); return; }
        break;
    case WR_SUDO:
        if (os.seen['e']) return; /* sudoedit: the operands are files */
        break;
    case WR_DOAS:
        if (os.seen['C']) return; /* checks a config file */
        break;
    case WR_WATCH:
        /* Without -x, watch joins its arguments and runs them with sh -c. */
        if (!os.seen['x']) {
            for (size_t k = 0; k < n; k++)
                if (inner[k].dynamic) { set_opaque(p, idx, CMD_OPAQUE_STRING); return; }
            buf_t b = BUF_INIT;
            join_words(&b, inner, n);
            parse_nested(p, b.p, b.len, c.offset, "'watch' command", c.depth);
            buf_free(&b);
            return;
        }
        break;
    case WR_FLOCK:
        /* flock FILE -c STRING runs STRING with sh -c. */
        if (!strcmp(inner[0].text, "-c") || !strcmp(inner[0].text, "--command")) {
            if (n < 2) return;
            if (inner[1].dynamic) { set_opaque(p, idx, CMD_OPAQUE_STRING); return; }
            parse_nested(p, inner[1].text, inner[1].len, c.offset, "'flock -c' string", c.depth);
            return;
        }
        break;
    case WR_XARGS: {
        const char *r = os.seen['I'] ? os.arg['I'] : os.seen['i'] ? (os.arg['i'] ? os.arg['i'] : "{}") : NULL;
        if (r && *r) inner = xargs_replace(p, inner, n, r);
        else more = true; /* items from its input are appended as arguments */
        break;
    }
    default: break;
    }
    emit(p, inner, n, c.offset, c.depth + 1, more);
}

/* sh/bash/... : -c STRING is parsed, a script file is a program run like any
 * other, and a shell reading its commands from standard input is opaque. */
static void classify_shell(parser_t *p, size_t idx, const char *name)
{
    cmd_simple_t c = p->sh->cmds.v[idx];
    bool dash_c = false, dash_s = false;
    size_t i = 1;
    while (i < c.nwords) {
        const cmd_word_t *w = &c.words[i];
        if (w->dynamic) {
            set_opaque(p, idx, dash_c ? CMD_OPAQUE_STRING : CMD_OPAQUE_WRAPPED);
            return;
        }
        const char *t = w->text;
        if (!strcmp(t, "--") || !strcmp(t, "-")) { i++; break; }
        size_t skip = 0;
        if (t[0] == '-' && t[1] == '-') {
            skip = !strcmp(t, "--rcfile") || !strcmp(t, "--init-file") || !strcmp(t, "--emulate");
        } else if ((t[0] == '-' || t[0] == '+') && t[1]) {
            for (size_t k = 1; t[k]; k++) {
                if (t[k] == 'c' && t[0] == '-') dash_c = true;
                else if (t[k] == 's' && t[0] == '-') dash_s = true;
                else if (t[k] == 'o' || t[k] == 'O') skip++; /* -o OPTION */
            }
        } else {
            break;
        }
        for (i++; skip && i < c.nwords; skip--, i++)
            if (!option_arg_ok(&c.words[i])) { set_opaque(p, idx, CMD_OPAQUE_WRAPPED); return; }
    }
    if (dash_c) {
        if (i >= c.nwords) return; /* the shell refuses: nothing runs */
        const cmd_word_t *s = &c.words[i];
        if (s->dynamic) { set_opaque(p, idx, CMD_OPAQUE_STRING); return; }
        buf_t what = BUF_INIT;
        buf_printf(&what, "'%s -c' string", name);
        parse_nested(p, s->text, s->len, c.offset, buf_cstr(&what), c.depth);
        buf_free(&what);
    } else if (dash_s || i >= c.nwords) {
        set_opaque(p, idx, CMD_OPAQUE_STDIN);
    }
}

/* su, runuser, script: every "-c STRING" (or --command) runs STRING with a
 * shell. Option bundles are not decoded: any 'c' in one counts, which at worst
 * parses a word that is not code. */
static void classify_dash_c(parser_t *p, size_t idx, const char *name)
{
    cmd_simple_t c = p->sh->cmds.v[idx];
    buf_t what = BUF_INIT;
    buf_printf(&what, "'%s -c' string", name);
    for (size_t i = 1; i < c.nwords && !failed(p); i++) {
        const cmd_word_t *w = &c.words[i], *next = i + 1 < c.nwords ? &c.words[i + 1] : NULL;
        const char *t = w->text, *q, *str = NULL;
        if (w->dynamic) {
            set_opaque(p, idx, CMD_OPAQUE_WRAPPED);
            break;
        }
        if (!strcmp(t, "--command") || !strcmp(t, "--session-command")) {
            if (!next) break;
            if (next->dynamic) { set_opaque(p, idx, CMD_OPAQUE_STRING); break; }
            str = next->text;
            i++;
        } else if (!strncmp(t, "--command=", 10) || !strncmp(t, "--session-command=", 18)) {
            str = strchr(t, '=') + 1;
        } else if (t[0] == '-' && t[1] != '-' && (q = strchr(t + 1, 'c'))) {
            if (q[1]) {
                str = q + 1;
            } else if (next) {
                if (next->dynamic) { set_opaque(p, idx, CMD_OPAQUE_STRING); break; }
                str = next->text;
                i++;
            }
        }
        if (str) parse_nested(p, str, strlen(str), c.offset, buf_cstr(&what), c.depth);
    }
    buf_free(&what);
}

/* bash evaluates the subscript of an array name given to these builtins (and
 * to [[ -v ]]) as arithmetic, running the substitutions in it even when the
 * name was single-quoted: unset 'a[$(rm -rf x)]' runs rm. */
static bool subscript_code(const char *t)
{
    const char *b = strchr(t, '[');
    return b && (strstr(b, "$(") || strchr(b, '`') || strstr(b, "${") || strstr(b, "$["));
}

static const char *const name_builtins[] = {
    "unset", "declare", "typeset", "local", "export", "readonly", "read", "printf", "test", "[",
    "let", "mapfile", "readarray", "wait", "getopts", NULL,
};

static bool has_subscript_code(const cmd_simple_t *c)
{
    for (size_t i = 1; i < c->nwords; i++)
        if (!c->words[i].dynamic && subscript_code(c->words[i].text)) return true;
    return false;
}

/* fish, csh, tcsh: -c code is in a language not parsed here. */
static void classify_foreign(parser_t *p, size_t idx)
{
    cmd_simple_t c = p->sh->cmds.v[idx];
    size_t i = 1;
    for (; i < c.nwords; i++) {
        const cmd_word_t *w = &c.words[i];
        if (w->dynamic || (w->text[0] == '-' && strchr(w->text, 'c'))) {
            set_opaque(p, idx, CMD_OPAQUE_FOREIGN);
            return;
        }
        if (w->text[0] != '-') break;
    }
    if (i >= c.nwords) set_opaque(p, idx, CMD_OPAQUE_STDIN);
}

/* find ... -exec CMD ... ; (or {} +): each such CMD is a command too. A
 * dynamic argument could be "-exec" itself, so it makes find opaque when a
 * terminator is there to complete it (or when it may split into several). */
static void classify_find(parser_t *p, size_t idx)
{
    cmd_simple_t c = p->sh->cmds.v[idx];
    bool dyn = false, split = false, term = false;
    for (size_t i = 1; i < c.nwords; i++) {
        const cmd_word_t *w = &c.words[i];
        if (w->dynamic) {
            dyn = true;
            split |= w->splits;
            continue;
        }
        if (!strcmp(w->text, ";") || !strcmp(w->text, "+")) term = true;
        if (strcmp(w->text, "-exec") && strcmp(w->text, "-execdir") && strcmp(w->text, "-ok") &&
            strcmp(w->text, "-okdir"))
            continue;
        size_t start = i + 1, k = start;
        for (; k < c.nwords; k++) {
            const cmd_word_t *e = &c.words[k];
            if (e->dynamic) continue;
            if (!strcmp(e->text, ";")) break;
            if (!strcmp(e->text, "+") && k > start && !c.words[k - 1].dynamic && !strcmp(c.words[k - 1].text, "{}"))
                break;
        }
        if (k >= c.nwords) break; /* find refuses an unterminated -exec */
        term = true;
        if (k > start) {
            cmd_word_t *inner = c.words + start;
            if (strstr(inner[0].text, "{}")) { /* the command is a file found at run time */
                cmd_word_t *copy = arena_alloc(&p->sh->out->arena, (k - start) * sizeof *copy);
                memcpy(copy, inner, (k - start) * sizeof *copy);
                copy[0].dynamic = true;
                inner = copy;
            }
            emit(p, inner, k - start, c.offset, c.depth + 1, false);
        }
        i = k;
    }
    if (dyn && (split || term)) set_opaque(p, idx, CMD_OPAQUE_FIND);
}

/* trap ACTION SIGNAL...: the action runs later, in this shell. */
static void classify_trap(parser_t *p, size_t idx)
{
    cmd_simple_t c = p->sh->cmds.v[idx];
    size_t i = 1;
    while (i < c.nwords && !c.words[i].dynamic && c.words[i].text[0] == '-' && c.words[i].text[1] &&
           strspn(c.words[i].text + 1, "lp-") == strlen(c.words[i].text + 1)) {
        bool dd = !strcmp(c.words[i].text, "--");
        i++;
        if (dd) break;
    }
    if (c.nwords - i < 2) return; /* listing, or resetting one signal */
    const cmd_word_t *a = &c.words[i];
    if (a->dynamic) { set_opaque(p, idx, CMD_OPAQUE_STRING); return; }
    if (!a->len || !strcmp(a->text, "-")) return;
    parse_nested(p, a->text, a->len, c.offset, "trap action", c.depth);
}

/* Builtins with an option that runs a string as code. */
static bool runs_code_option(const cmd_simple_t *c, const char *name)
{
    static const struct { const char *name, *letters; } table[] = {
        {"mapfile", "C"}, {"readarray", "C"}, {"complete", "C"}, {"compgen", "C"}, {"bind", "x"}, {"enable", "f"},
    };
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        if (strcmp(name, table[t].name)) continue;
        for (size_t i = 1; i < c->nwords; i++) {
            const cmd_word_t *w = &c->words[i];
            if (w->dynamic) return true;
            if (!strcmp(w->text, "--")) return false;
            if (w->text[0] == '-' && strpbrk(w->text + 1, table[t].letters)) return true;
        }
    }
    return false;
}

/* fc re-runs commands from the history, unless it only lists them (-l). */
static bool fc_runs(const cmd_simple_t *c)
{
    for (size_t i = 1; i < c->nwords; i++)
        if (!c->words[i].dynamic && c->words[i].text[0] == '-' && strchr(c->words[i].text, 'l')) return false;
    return true;
}

static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash",
                                     "lksh", "pdksh", "posh", "yash", NULL};
static const char *const foreign_shells[] = {"fish", "csh", "tcsh", NULL};

static void classify(parser_t *p, size_t idx)
{
    cmd_simple_t c = p->sh->cmds.v[idx];
    if (c.words[0].dynamic || c.words[0].glob) {
        set_opaque(p, idx, CMD_OPAQUE_WORD);
        return;
    }
    const char *name = base_name(c.words[0].text);
    if (!strcmp(name, "eval") || runs_code_option(&c, name) || (!strcmp(name, "fc") && fc_runs(&c))) {
        set_opaque(p, idx, CMD_OPAQUE_EVAL);
    } else if (!strcmp(name, "source") || !strcmp(name, ".")) {
        set_opaque(p, idx, CMD_OPAQUE_SOURCE);
    } else if (!strcmp(name, "alias")) {
        for (size_t i = 1; i < c.nwords; i++)
            if (c.words[i].dynamic || strchr(c.words[i].text, '=')) set_opaque(p, idx, CMD_OPAQUE_ALIAS);
    } else if (in_list(name, name_builtins) && has_subscript_code(&c)) {
        set_opaque(p, idx, CMD_OPAQUE_SUBSCRIPT);
    } else if (!strcmp(name, "trap")) {
        classify_trap(p, idx);
    } else if (!strcmp(name, "su") || !strcmp(name, "runuser") || !strcmp(name, "script")) {
        classify_dash_c(p, idx, name);
    } else if (!strcmp(name, "find")) {
        classify_find(p, idx);
    } else if (in_list(name, shells)) {
        classify_shell(p, idx, name);
    } else if (in_list(name, foreign_shells)) {
        classify_foreign(p, idx);
    } else {
        for (size_t k = 0; k < sizeof wrappers / sizeof wrappers[0]; k++)
            if (!strcmp(name, wrappers[k].name)) {
                classify_wrapper(p, idx, &wrappers[k]);
                break;
            }
    }
}

/* Adds one simple command (words live in the arena), then what it runs. */
static void emit(parser_t *p, cmd_word_t *words, size_t n, size_t offset, unsigned depth, bool more_args)
{
    if (failed(p) || p->entry_mode) return;
    if (depth >= CMD_MAX_DEPTH) {
        perr(p, offset, "nested too deeply");
        return;
    }
    cmd_simple_t c = {words, n, offset, depth, CMD_CHECKABLE, more_args};
    vec_push(&p->sh->cmds, c);
    classify(p, p->sh->cmds.n - 1);
}

/* ==== the split: public API ================================================================================ */

bool cmd_parse(const char *cmd, size_t len, cmd_parse_t *out)
{
    memset(out, 0, sizeof *out);
    shared_t sh = {0};
    sh.out = out;
    parser_t p = {0};
    p.sh = &sh;
    p.s = cmd ? cmd : "";
    p.end = cmd ? len : 0;
    const char *nul = memchr(p.s, '\0', p.end);
    if (nul) {
        perr(&p, (size_t)(nul - p.s), "NUL byte");
    } else {
        advance(&p);
        parse_list(&p);
        if (!failed(&p) && p.tok.kind != T_EOF) syntax_error(&p);
        if (!failed(&p) && p.hds.n) perr(&p, p.hds.v[0].offset, "unterminated here-document");
    }
    for (size_t i = 0; i < p.hds.n; i++) free(p.hds.v[i].delim);
    vec_free(&p.hds);
    tok_free(&p.tok);
    out->ncmds = sh.cmds.n;
    out->cmds = sh.cmds.n ? arena_alloc(&out->arena, sh.cmds.n * sizeof *out->cmds) : NULL;
    if (sh.cmds.n) memcpy(out->cmds, sh.cmds.v, sh.cmds.n * sizeof *out->cmds);
    vec_free(&sh.cmds);
    out->error = sh.error;
    return out->error == NULL;
}

void cmd_parse_free(cmd_parse_t *p)
{
    if (!p) return;
    free(p->error);
    arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}

/* ==== quoting and display =================================================================================== */

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t min, cp;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xE0) == 0xC0) len = 2, min = 0x80, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0) len = 3, min = 0x800, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0) len = 4, min = 0x10000, cp = s[0] & 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

/* Control bytes and invalid UTF-8 as \xHH, everything else as is. */
static void sanitize_into(buf_t *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] >= 0x20 && u[i] != 0x7f ? utf8_seq(u + i, n - i) : 0;
        if (!k) {
            buf_printf(b, "\\x%02x", u[i]);
            i++;
        } else {
            buf_add(b, s + i, k);
            i += k;
        }
    }
}

static bool safe_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("_@%+=:,./-", c));
}

static void ansi_quote_into(buf_t *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    buf_adds(b, "$'");
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t k = c >= 0x80 ? utf8_seq(u + i, n - i) : 1;
        if (c == '\\' || c == '\'') buf_printf(b, "\\%c", c);
        else if (c == '\n') buf_adds(b, "\\n");
        else if (c == '\t') buf_adds(b, "\\t");
        else if (c < 0x20 || c == 0x7f || !k) buf_printf(b, "\\x%02x", c);
        else {
            buf_add(b, s + i, k);
            i += k;
            continue;
        }
        i++;
    }
    buf_addc(b, '\'');
}

/* force quotes even a plain word (a command word that reads as a keyword or an
 * assignment). */
static void quote_into(buf_t *b, const char *s, size_t n, bool force)
{
    const unsigned char *u = (const unsigned char *)s;
    bool plain = n > 0 && !force, ansi = false;
    for (size_t i = 0; i < n; i++) {
        if (u[i] < 0x20 || u[i] == 0x7f) {
            ansi = true;
        } else if (u[i] >= 0x80) {
            size_t k = utf8_seq(u + i, n - i);
            if (!k) ansi = true;
            else i += k - 1;
            plain = false;
        } else if (!safe_char(u[i])) {
            plain = false;
        }
    }
    if (ansi) {
        ansi_quote_into(b, s, n);
    } else if (plain) {
        buf_add(b, s, n);
    } else {
        buf_addc(b, '\'');
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '\'') buf_adds(b, "'\\''");
            else buf_addc(b, s[i]);
        }
        buf_addc(b, '\'');
    }
}

char *cmd_quote(const char *s, size_t len)
{
    buf_t b = BUF_INIT;
    quote_into(&b, s ? s : "", s ? len : 0, false);
    return buf_detach(&b, NULL);
}

static bool looks_assign(const char *t)
{
    if (!is_name_start((unsigned char)t[0])) return false;
    while (is_name_char((unsigned char)*t)) t++;
    return *t == '=' || *t == '[' || (t[0] == '+' && t[1] == '=');
}

char *cmd_simple_display(const cmd_simple_t *c)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < c->nwords; i++) {
        const cmd_word_t *w = &c->words[i];
        if (i) buf_addc(&b, ' ');
        if (w->dynamic || w->glob) sanitize_into(&b, w->raw, w->rawlen);
        else quote_into(&b, w->text, w->len, i == 0 && (in_list(w->text, reserved_words) || looks_assign(w->text)));
    }
    return buf_detach(&b, NULL);
}

/* s cut to about max bytes on a character boundary, with "..." when cut. */
static char *clip(char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) return s;
    n = max - 3;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    memcpy(s + n, "...", 4);
    return s;
}

#define CLIP 120

static char *display_clipped(const cmd_simple_t *c) { return clip(cmd_simple_display(c), CLIP); }

char *cmd_opaque_why(const cmd_simple_t *c)
{
    static const char *const why[] = {
        [CMD_OPAQUE_WORD] = "the command word of '%s' is only known when it runs",
        [CMD_OPAQUE_EVAL] = "'%s' runs a string as shell code",
        [CMD_OPAQUE_SOURCE] = "'%s' runs the commands in a file",
        [CMD_OPAQUE_STRING] = "the command string of '%s' is only known when it runs",
        [CMD_OPAQUE_STDIN] = "'%s' reads its commands from standard input",
        [CMD_OPAQUE_FOREIGN] = "'%s' runs code in a shell language not parsed here",
        [CMD_OPAQUE_WRAPPED] = "the command run by '%s' is only known when it runs",
        [CMD_OPAQUE_OPTION] = "'%s' uses an option that hides which command it runs",
        [CMD_OPAQUE_FIND] = "'%s' has arguments only known when it runs, which could add -exec",
        [CMD_OPAQUE_PROMPT] = "'%s' expands a prompt string, which runs the substitutions in it",
        [CMD_OPAQUE_ALIAS] = "'%s' defines an alias, which turns text into commands",
        [CMD_OPAQUE_SUBSCRIPT] = "'%s' evaluates an array subscript, which runs the substitutions in it",
    };
    if (c->opaque == CMD_CHECKABLE || (size_t)c->opaque >= sizeof why / sizeof why[0]) return NULL;
    char *d = display_clipped(c);
    char *s = xasprintf(why[c->opaque], d);
    free(d);
    return s;
}

/* ==== entries ======================================================================================================= */

/* Short options that mean the same as a long one, for the commands where a
 * denylist entry is most often written one way and run another. */
static const struct { const char *cmd; char letter; const char *canon; } flag_aliases[] = {
    {"rm", 'r', "--recursive"}, {"rm", 'R', "--recursive"}, {"rm", 'f', "--force"},
    {"cp", 'r', "--recursive"}, {"cp", 'R', "--recursive"}, {"cp", 'f', "--force"},
    {"mv", 'f', "--force"},     {"git", 'f', "--force"},    {"chmod", 'R', "--recursive"},
    {"chown", 'R', "--recursive"}, {"chgrp", 'R', "--recursive"},
};

static const char *flag_canon(const char *cmd, char letter)
{
    for (size_t i = 0; i < sizeof flag_aliases / sizeof flag_aliases[0]; i++)
        if (flag_aliases[i].letter == letter && !strcmp(flag_aliases[i].cmd, cmd)) return flag_aliases[i].canon;
    return NULL;
}

typedef struct pattern {
    const char *name;          /* the command name */
    VEC(const char *) flags;   /* "-x" or "--long[=value]", canonical */
    VEC(const char *) ops;     /* the other words, in order */
} pattern_t;

static void pattern_free(pattern_t *pat)
{
    vec_free(&pat->flags);
    vec_free(&pat->ops);
}

/* An entry's words, read with the shell's quote rules; NULL or an error. */
static char *entry_words(const char *e, parser_t *p, lwords_t *words)
{
    static const char *const sep_hint = "an entry is one command: write one entry per command";
    static const char *const redir_hint = "an entry is a command and its arguments only";
    while (!failed(p)) {
        int c = cur(p);
        size_t off = p->pos;
        if (c == ' ' || c == '\t') { p->pos++; continue; }
        if (c < 0) break;
        if (c == '#') perr_hint(p, off, "quote it ('#') to match it literally", "'#' starts a comment");
        else if (c == '\n') perr_hint(p, off, sep_hint, "a newline separates commands");
        else if (c == ';' || c == '&' || c == '|') perr_hint(p, off, sep_hint, "'%c' separates commands", c);
        else if (c == '<' || c == '>') perr_hint(p, off, redir_hint, "'%c' is a redirection", c);
        else if (c == '(' || c == ')') perr_hint(p, off, redir_hint, "'%c' is a subshell or function parenthesis", c);
        if (failed(p)) break;
        lword_t w;
        lex_word(p, &w, false);
        if (!failed(p) && w.dynamic)
            perr_hint(p, w.start, "an entry is literal words ($'\\u..' above ASCII and $\"..\" depend on the locale)",
                      "the word is only known when it runs");
        if (!failed(p) && (w.glob || w.brace))
            perr_hint(p, w.glob_at,
                      "an entry already matches any further arguments, so leave it out (or quote it to match it literally)",
                      "'%c' is a wildcard", e[w.glob_at]);
        if (failed(p)) {
            lword_free(&w);
            break;
        }
        vec_push(words, w);
    }
    return p->sh->error;
}

/* Checks the command word of an entry; an error message or NULL. */
static char *entry_name_error(const lword_t *w, const char *e)
{
    const char *v = w->val.p ? w->val.p : "";
    buf_t b = BUF_INIT;
    if (w->assign)
        buf_printf(&b, "'%.*s' sets a variable; an entry starts with the command name", (int)(w->end - w->start), e + w->start);
    else if (!w->val.len)
        buf_adds(&b, "the command name is empty");
    else if (!w->quoted && in_list(v, reserved_words))
        buf_printf(&b, "'%s' is a shell keyword, not a command", v);
    else if (strchr(v, '/'))
        buf_printf(&b, "'%s' names a directory; write the command name alone ('%s'), which matches it in any directory",
                   v, base_name(v));
    else
        return NULL;
    return buf_detach(&b, NULL);
}

/* Parses an entry into pat (strings in a); NULL or an error (caller frees). */
static char *pattern_parse(const char *entry, arena_t *a, pattern_t *pat)
{
    memset(pat, 0, sizeof *pat);
    if (!entry) return xstrdup("the entry is missing");
    cmd_parse_t dummy = {0};
    shared_t sh = {0};
    sh.out = &dummy;
    parser_t p = {0};
    p.sh = &sh;
    p.s = entry;
    p.end = strlen(entry);
    p.entry_mode = true;
    lwords_t words = {0};
    char *err = entry_words(entry, &p, &words);
    if (!err && !words.n) err = xstrdup("the entry is empty; write a command name such as 'rm' or 'rm -rf'");
    if (!err) err = entry_name_error(&words.v[0], entry);
    if (!err) {
        const char *name = base_name(arena_strndup(a, words.v[0].val.p, words.v[0].val.len));
        pat->name = name;
        bool dd = false;
        for (size_t i = 1; i < words.n; i++) {
            const char *t = arena_strndup(a, words.v[i].val.p ? words.v[i].val.p : "", words.v[i].val.len);
            if (!dd && !strcmp(t, "--")) { dd = true; continue; }
            if (dd || t[0] != '-' || !t[1]) { vec_push(&pat->ops, t); continue; }
            if (t[1] == '-') { vec_push(&pat->flags, t); continue; }
            for (size_t k = 1; t[k]; k++) {
                const char *canon = flag_canon(name, t[k]);
                vec_push(&pat->flags, canon ? canon : arena_strndup(a, (char[]){'-', t[k]}, 2));
            }
        }
    }
    for (size_t i = 0; i < words.n; i++) lword_free(&words.v[i]);
    vec_free(&words);
    arena_free(&dummy.arena);
    return err;
}

bool cmd_entry_valid(const char *entry, char **err)
{
    arena_t a = ARENA_INIT;
    pattern_t pat;
    char *e = pattern_parse(entry, &a, &pat);
    pattern_free(&pat);
    arena_free(&a);
    if (err) *err = e;
    else free(e);
    return e == NULL;
}

/* ==== matching ======================================================================================================= */

typedef struct lflag {
    const char *s; /* "--name[=value]", canonical */
    size_t word;   /* its index in the command's words */
} lflag_t;

/* A command's arguments sorted for lookups, so a check stays O(n log n) on a
 * hostile command with a million words. */
typedef struct argview {
    uint64_t shorts[4];          /* short option bytes present */
    VEC(lflag_t) longs;          /* long options (and aliased short ones), sorted */
    VEC(const char *) sorted;    /* static operands, sorted */
    VEC(const cmd_word_t *) ops; /* operands in order, static or dynamic */
    bool dyn_opt;                /* a dynamic word where options are still read */
    bool dyn_any;                /* any dynamic argument */
    bool dd;                     /* "--" ended the options */
} argview_t;

static int cmp_lflag(const void *a, const void *b) { return strcmp(((const lflag_t *)a)->s, ((const lflag_t *)b)->s); }
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void view_build(argview_t *v, const cmd_simple_t *c)
{
    memset(v, 0, sizeof *v);
    const char *name = base_name(c->words[0].text);
    bool dd = false;
    for (size_t i = 1; i < c->nwords; i++) {
        const cmd_word_t *w = &c->words[i];
        const char *t = w->text;
        if (w->dynamic) {
            v->dyn_any = true;
            v->dyn_opt |= !dd;
            vec_push(&v->ops, w);
        } else if (!dd && !strcmp(t, "--")) {
            dd = true;
        } else if (dd || t[0] != '-' || !t[1]) {
            vec_push(&v->ops, w);
            vec_push(&v->sorted, t);
        } else if (t[1] == '-') {
            vec_push(&v->longs, ((lflag_t){t, i}));
        } else {
            for (size_t k = 1; t[k]; k++) {
                const char *canon = flag_canon(name, t[k]);
                if (canon) vec_push(&v->longs, ((lflag_t){canon, i}));
                else v->shorts[(unsigned char)t[k] >> 6] |= (uint64_t)1 << ((unsigned char)t[k] & 63);
            }
        }
    }
    v->dd = dd;
    if (v->longs.n) qsort(v->longs.v, v->longs.n, sizeof *v->longs.v, cmp_lflag);
    if (v->sorted.n) qsort(v->sorted.v, v->sorted.n, sizeof *v->sorted.v, cmp_str);
}

static void view_free(argview_t *v)
{
    vec_free(&v->longs);
    vec_free(&v->sorted);
    vec_free(&v->ops);
}

/* First long option not below the first n bytes of key (compared as a prefix). */
static size_t long_lower(const argview_t *v, const char *key, size_t n)
{
    size_t lo = 0, hi = v->longs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strncmp(v->longs.v[mid].s, key, n) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Is "--name" (n bytes of key) there, alone or as "--name=value"? */
static bool has_long_name(const argview_t *v, const char *key, size_t n)
{
    for (size_t i = long_lower(v, key, n); i < v->longs.n && !strncmp(v->longs.v[i].s, key, n); i++)
        if (v->longs.v[i].s[n] == '\0' || v->longs.v[i].s[n] == '=') return true;
    return false;
}

static bool has_flag(const argview_t *v, const cmd_simple_t *c, const char *f)
{
    if (f[1] != '-') {
        unsigned char ch = (unsigned char)f[1];
        return v->shorts[ch >> 6] & ((uint64_t)1 << (ch & 63));
    }
    const char *eq = strchr(f, '=');
    if (!eq) return has_long_name(v, f, strlen(f)); /* --opt also matches --opt=value */
    size_t n = (size_t)(eq - f);
    for (size_t i = long_lower(v, f, n); i < v->longs.n && !strncmp(v->longs.v[i].s, f, n); i++) {
        const lflag_t *l = &v->longs.v[i];
        if (!strcmp(l->s, f)) return true; /* --opt=value */
        if (l->s[n] == '\0' && l->word + 1 < c->nwords && !c->words[l->word + 1].dynamic &&
            !strcmp(c->words[l->word + 1].text, eq + 1))
            return true; /* --opt value */
    }
    return false;
}

/* getopt_long takes unique abbreviations: "--forc" is "--force" to git and rm. */
static bool has_abbrev(const argview_t *v, const char *f)
{
    if (f[1] != '-') return false;
    size_t n = strcspn(f, "=");
    for (size_t k = 3; k < n; k++)
        if (has_long_name(v, f, k)) return true;
    return false;
}

static bool has_operand(const argview_t *v, const char *o)
{
    return v->sorted.n && bsearch(&o, v->sorted.v, v->sorted.n, sizeof *v->sorted.v, cmp_str);
}

/* 1 match, 0 none, -1 "may match": only dynamic words (or xargs's input)
 * could supply what is missing — a match for a denylist, never for an allowlist. */
static int pattern_match(const pattern_t *pat, const argview_t *v, const cmd_simple_t *c, bool allow)
{
    if (c->words[0].dynamic || c->words[0].glob) return allow ? 0 : -1;
    if (strcmp(base_name(c->words[0].text), pat->name)) return 0;
    bool maybe = false;
    for (size_t i = 0; i < pat->flags.n; i++) {
        const char *f = pat->flags.v[i];
        if (has_flag(v, c, f)) continue;
        if (allow) return 0;
        /* xargs appends its input after the words, where options are still
         * read unless "--" came first. */
        if (has_abbrev(v, f) || v->dyn_opt || (c->more_args && !v->dd)) maybe = true;
        else return 0;
    }
    for (size_t i = 0; i < pat->ops.n; i++) {
        const char *o = pat->ops.v[i];
        if (allow) {
            /* Allowlist: the entry's words are the command's first operands, in
             * order, so "git status" does not allow "git push status". */
            if (i >= v->ops.n || v->ops.v[i]->dynamic || strcmp(v->ops.v[i]->text, o)) return 0;
        } else if (!has_operand(v, o)) {
            if (v->dyn_any || c->more_args) maybe = true;
            else return 0;
        }
    }
    return maybe ? -1 : 1;
}

int cmd_entry_match(const char *entry, const cmd_simple_t *c, bool in_allowlist)
{
    arena_t a = ARENA_INIT;
    pattern_t pat;
    char *err = pattern_parse(entry, &a, &pat);
    int r = 0;
    if (!err && c && c->nwords) {
        argview_t v;
        view_build(&v, c);
        r = pattern_match(&pat, &v, c, in_allowlist);
        view_free(&v);
    }
    free(err);
    pattern_free(&pat);
    arena_free(&a);
    return r;
}

/* ==== checking ========================================================================================================= */

typedef struct checker {
    const char *const *deny, *const *allow;
    size_t ndeny, nallow;
    pattern_t *dp, *ap; /* parsed entries */
    cmd_parse_t parse;
    argview_t *views;   /* one per simple command */
    arena_t arena;
    cmd_verdict_t v;
} checker_t;

static char *entry_display(const char *e)
{
    buf_t b = BUF_INIT;
    sanitize_into(&b, e, strlen(e));
    return clip(buf_detach(&b, NULL), CLIP);
}

__attribute__((format(printf, 5, 6)))
static void decide(checker_t *k, int list, long entry, const cmd_simple_t *c, const char *fmt, ...)
{
    va_list ap;
    buf_t b = BUF_INIT;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    k->v.allowed = false;
    k->v.list = list;
    k->v.entry = entry;
    k->v.command = c ? cmd_simple_display(c) : NULL;
    k->v.reason = buf_detach(&b, NULL);
}

/* Parses both lists; false (denied) when an entry is invalid: a list the
 * schema should have refused fails closed rather than matching nothing. */
static bool compile_lists(checker_t *k)
{
    k->dp = xcalloc(k->ndeny + 1, sizeof *k->dp);
    k->ap = xcalloc(k->nallow + 1, sizeof *k->ap);
    for (int list = 1; list <= 2; list++) {
        const char *const *e = list == 1 ? k->deny : k->allow;
        size_t n = list == 1 ? k->ndeny : k->nallow;
        for (size_t i = 0; i < n; i++) {
            char *err = pattern_parse(e[i], &k->arena, (list == 1 ? k->dp : k->ap) + i);
            if (!err) continue;
            char *d = e[i] ? entry_display(e[i]) : xstrdup("(null)");
            decide(k, list, (long)i, NULL, "%s entry %zu ('%s') is invalid: %s", list == 1 ? "denylist" : "allowlist",
                   i, d, err);
            free(d);
            free(err);
            return false;
        }
    }
    return true;
}

/* Any simple command that certainly matches a denylist entry. */
static bool deny_certain(checker_t *k)
{
    for (size_t i = 0; i < k->parse.ncmds; i++) {
        const cmd_simple_t *c = &k->parse.cmds[i];
        for (size_t j = 0; j < k->ndeny; j++) {
            if (pattern_match(&k->dp[j], &k->views[i], c, false) != 1) continue;
            char *d = display_clipped(c), *e = entry_display(k->deny[j]);
            decide(k, 1, (long)j, c, "'%s' matches denylist entry '%s'", d, e);
            free(d);
            free(e);
            return true;
        }
    }
    return false;
}

/* With a denylist: an opaque command, or one that may match an entry. */
static bool deny_uncertain(checker_t *k, size_t i)
{
    const cmd_simple_t *c = &k->parse.cmds[i];
    if (c->opaque) {
        char *why = cmd_opaque_why(c);
        decide(k, 1, -1, c, "%s; it cannot be checked against the denylist", why);
        free(why);
        return true;
    }
    for (size_t j = 0; j < k->ndeny; j++) {
        if (pattern_match(&k->dp[j], &k->views[i], c, false) != -1) continue;
        char *d = display_clipped(c), *e = entry_display(k->deny[j]);
        decide(k, 1, (long)j, c, "'%s' may match denylist entry '%s': some of its arguments are only known when it runs",
               d, e);
        free(d);
        free(e);
        return true;
    }
    return false;
}

/* With an allowlist: the entry c matches, or -1 after denying. */
static long allow_entry(checker_t *k, size_t i)
{
    const cmd_simple_t *c = &k->parse.cmds[i];
    if (c->opaque) {
        char *why = cmd_opaque_why(c);
        decide(k, 2, -1, c, "%s; with an allowlist every command must be known", why);
        free(why);
        return -1;
    }
    for (size_t j = 0; j < k->nallow; j++)
        if (pattern_match(&k->ap[j], &k->views[i], c, true) == 1) return (long)j;
    char *d = display_clipped(c);
    decide(k, 2, -1, c, "'%s' matches no allowlist entry", d);
    free(d);
    return -1;
}

static void allowed_reason(checker_t *k, long last_entry)
{
    k->v.allowed = true;
    if (!k->parse.ncmds) {
        k->v.reason = xstrdup("the command runs no program");
    } else if (!k->nallow) {
        k->v.reason = xstrdup("no command matches the denylist");
    } else if (k->parse.ncmds == 1) {
        const cmd_simple_t *c = &k->parse.cmds[0];
        char *d = display_clipped(c), *e = entry_display(k->allow[last_entry]);
        k->v.list = 2;
        k->v.entry = last_entry;
        k->v.command = cmd_simple_display(c);
        k->v.reason = xasprintf("'%s' matches allowlist entry '%s'", d, e);
        free(d);
        free(e);
    } else {
        k->v.list = 2;
        k->v.reason = xasprintf("all %zu commands match the allowlist", k->parse.ncmds);
    }
}

static void check_commands(checker_t *k)
{
    k->views = xcalloc(k->parse.ncmds + 1, sizeof *k->views);
    for (size_t i = 0; i < k->parse.ncmds; i++) view_build(&k->views[i], &k->parse.cmds[i]);
    if (k->ndeny && deny_certain(k)) return;
    long last = -1;
    for (size_t i = 0; i < k->parse.ncmds; i++) {
        if (k->ndeny && deny_uncertain(k, i)) return;
        if (k->nallow && (last = allow_entry(k, i)) < 0) return;
    }
    allowed_reason(k, last);
}

cmd_verdict_t cmd_check(const char *cmd, size_t len, const char *const *deny, size_t ndeny,
                        const char *const *allow, size_t nallow)
{
    checker_t k = {0};
    k.deny = deny;
    k.allow = allow;
    k.ndeny = deny ? ndeny : 0;
    k.nallow = allow ? nallow : 0;
    k.v.entry = -1;
    k.v.allowed = true;
    if (!k.ndeny && !k.nallow) {
        k.v.reason = xstrdup("no command lists are set");
        return k.v;
    }
    if (compile_lists(&k)) {
        if (!cmd_parse(cmd, len, &k.parse)) decide(&k, 0, -1, NULL, "%s", k.parse.error);
        else check_commands(&k);
    }
    for (size_t i = 0; k.views && i < k.parse.ncmds; i++) view_free(&k.views[i]);
    free(k.views);
    for (size_t i = 0; i < k.ndeny; i++) pattern_free(&k.dp[i]);
    for (size_t i = 0; i < k.nallow; i++) pattern_free(&k.ap[i]);
    free(k.dp);
    free(k.ap);
    cmd_parse_free(&k.parse);
    arena_free(&k.arena);
    return k.v;
}

void cmd_verdict_free(cmd_verdict_t *v)
{
    if (!v) return;
    free(v->command);
    free(v->reason);
    v->command = v->reason = NULL;
}
