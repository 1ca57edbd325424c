/* shell_lex.c — the words and tokens of a bash command string: quotes,
 * escapes, expansions and substitutions (whose commands are parsed on the way),
 * operators, here-documents, and the literal-word mode that reads command-list
 * entries. Errors and the nesting limit live here, at the bottom of the stack.
 */
#include "shell_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const char *const op_text[] = {
    ";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ";&", ";;&",
    "<", ">", ">>", "<>", ">|", ">&", "<&", "<<", "<<-", "<<<", "&>", "&>>",
};
/* clang-format on */

static void lex_dollar(parser_t *p, lword_t *w, bool in_dq);
static void lex_dquote(parser_t *p, lword_t *w, bool heredoc);
static void lex_backquote(parser_t *p, lword_t *w, bool in_dq);
static void lex_word(parser_t *p, lword_t *w, bool in_array);
static void read_heredocs(parser_t *p);

/* ==== errors and depth ================================================================= */

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
__attribute__((format(printf, 3, 4))) void shell_perr(parser_t *p, size_t off, const char *fmt, ...)
{
    if (failed(p)) return;
    va_list ap;
    va_start(ap, fmt);
    set_error(p, off, NULL, fmt, ap);
    va_end(ap);
}

/* Same, followed by "; HINT" saying what to write instead. */
__attribute__((format(printf, 4, 5))) static void perr_hint(parser_t *p, size_t off, const char *hint, const char *fmt, ...)
{
    if (failed(p)) return;
    va_list ap;
    va_start(ap, fmt);
    set_error(p, off, hint, fmt, ap);
    va_end(ap);
}

/* Every construct that nests goes through shell_enter/shell_leave, so hostile
 * nesting is an error instead of a stack overflow. */
bool shell_enter(parser_t *p, size_t off)
{
    if (failed(p)) return false;
    if (p->depth + 1 >= SHELL_MAX_DEPTH) {
        shell_perr(p, off, "nested too deeply");
        return false;
    }
    p->depth++;
    return true;
}

void shell_leave(parser_t *p) { p->depth--; }

/* ==== characters ======================================================================== */

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

static bool is_special_param(int c) { return c > 0 && strchr("@*#?-$!0123456789", c) != NULL; }

void shell_lword_free(lword_t *w) { buf_free(&w->val); }

void shell_tok_free(token_t *t)
{
    shell_lword_free(&t->w);
    memset(t, 0, sizeof *t);
}

/* ==== words: quotes ====================================================================== */

/* Assignment-prefix tracking: NAME=, NAME+=, NAME[subscript]= before any quote. */
enum {
    AS_START,
    AS_NAME,
    AS_SUB,
    AS_AFTER_SUB,
    AS_PLUS,
    AS_DONE,
    AS_NO
};

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
        if (!is_name_char(c)) st->as = c == '[' ? AS_SUB : (c == '+' ? AS_PLUS : (c == '=' ? AS_DONE : AS_NO));
        break;
    case AS_SUB:
        if (c == ']') st->as = AS_AFTER_SUB;
        break;
    case AS_AFTER_SUB: st->as = c == '=' ? AS_DONE : (c == '+' ? AS_PLUS : AS_NO); break;
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
        shell_perr(p, open, "unterminated single quote");
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
        if (x < 0) {
            buf_addc(b, '\\');
            buf_addc(b, 'c');
            return true;
        }
        p->pos++;
        v = x == '?' ? 0x7f : (uint32_t)(x & 0x1f);
    } else if (c == 'x' || c == 'u' || c == 'U') {
        v = read_digits(p, 16, c == 'x' ? 2 : (c == 'u' ? 4 : 8), &n);
        if (!n) {
            buf_addc(b, '\\');
            buf_addc(b, (char)c);
            return true;
        }
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
            shell_perr(p, open, "unterminated $' quote");
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
            if (!heredoc) shell_perr(p, open, "unterminated double quote");
            break;
        }
        if (c == '"' && !heredoc) {
            p->pos++;
            break;
        }
        if (c == '$') {
            lex_dollar(p, w, true);
            continue;
        }
        if (c == '`') {
            lex_backquote(p, w, true);
            continue;
        }
        p->pos++;
        if (c == '\\') {
            int n = at(p, p->pos);
            if (n == '\n') {
                p->pos++;
                continue;
            }
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
bool shell_arith_ahead(const parser_t *p, size_t from, size_t *close)
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
            if (level > 0) {
                level--;
                continue;
            }
            if (i + 1 < p->end && p->s[i + 1] == ')') {
                *close = i;
                return true;
            }
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
        else if (c == ']' && level-- == 0) {
            *close = i;
            return true;
        }
    }
    return false;
}

/* Reads [from, to) as arithmetic, where only the substitutions run commands. */
void shell_arith_region(parser_t *p, size_t open, size_t from, size_t to)
{
    if (!shell_enter(p, open)) return;
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
    shell_lword_free(&scratch);
    p->end = save_end;
    p->hd_base = save_base;
    p->pos = to;
    shell_leave(p);
}

void shell_syntax_error(parser_t *p)
{
    const token_t *t = &p->tok;
    buf_t b = BUF_INIT;
    if (t->kind == T_EOF) buf_adds(&b, "end of input");
    else if (t->kind == T_NEWLINE) buf_adds(&b, "newline");
    else if (t->kind == T_OP) buf_printf(&b, "'%s'", op_text[t->op]);
    else {
        size_t n = t->w.end - t->w.start;
        buf_addc(&b, '\'');
        shell_sanitize(&b, p->s + t->w.start, n > 32 ? 32 : n);
        buf_adds(&b, n > 32 ? "...'" : "'");
    }
    shell_perr(p, t->start, "syntax error near %s", buf_cstr(&b));
    buf_free(&b);
}

/* The list inside $( ), <( ) or >( ), p->pos just after the parenthesis. */
static void subst_list(parser_t *p, size_t open, const char *what)
{
    if (!shell_enter(p, open)) return;
    token_t saved = p->tok;
    size_t saved_base = p->hd_base, nh = p->hds.n;
    memset(&p->tok, 0, sizeof p->tok);
    /* Here-documents pending outside wait for a newline outside: bash reads
     * them after the line that holds the whole substitution. */
    p->hd_base = nh;
    shell_advance(p);
    shell_parse_list(p);
    if (!failed(p)) {
        if (p->tok.kind == T_EOF) shell_perr(p, open, "unterminated %s", what);
        else if (p->tok.kind != T_OP || p->tok.op != OP_RPAREN) shell_syntax_error(p);
        else if (p->hds.n > nh) shell_perr(p, p->hds.v[nh].offset, "unterminated here-document");
    }
    for (size_t i = nh; i < p->hds.n; i++) free(p->hds.v[i].delim);
    if (p->hds.n > nh) p->hds.n = nh;
    shell_tok_free(&p->tok);
    p->tok = saved;
    p->hd_base = saved_base;
    shell_leave(p);
}

/* ${...} with p->pos after the brace: nested braces, quotes and substitutions
 * are followed to the closing brace (bash matches quotes here even inside
 * double quotes). ${x@P} runs the substitutions inside x's value. */
static void brace_param(parser_t *p, size_t open, bool in_dq)
{
    if (!shell_enter(p, open)) return;
    size_t save_base = p->hd_base, start = p->pos;
    p->hd_base = p->hds.n;
    int level = 0;
    lword_t scratch = {0};
    while (!failed(p)) {
        int c = at(p, p->pos);
        if (c < 0) {
            shell_perr(p, open, "unterminated '${'");
            break;
        }
        if (c == '}' && level-- == 0) {
            if (p->pos - start >= 2 && p->s[p->pos - 2] == '@' && p->s[p->pos - 1] == 'P')
                shell_emit_opaque(p, open, p->pos + 1, SHELL_OPAQUE_PROMPT);
            p->pos++;
            break;
        }
        if (c == '}') {
            p->pos++;
            continue;
        }
        if (c == '{') {
            level++;
            p->pos++;
            continue;
        }
        if (c == '\\') p->pos += p->pos + 1 < p->end ? 2 : 1;
        else if (c == '\'') single_quote(p, &scratch);
        else if (c == '"') lex_dquote(p, &scratch, false);
        else if (c == '$') lex_dollar(p, &scratch, in_dq);
        else if (c == '`') lex_backquote(p, &scratch, in_dq);
        else p->pos++;
    }
    shell_lword_free(&scratch);
    p->hd_base = save_base;
    shell_leave(p);
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
        if (at(p, j) == '(' && shell_arith_ahead(p, j + 1, &close)) {
            shell_arith_region(p, d, j + 1, close);
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
            shell_perr(p, d, "unterminated '$['");
            p->pos = p->end;
            return;
        }
        shell_arith_region(p, d, i + 1, close);
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
            shell_perr(p, open, "unterminated backquote");
            break;
        }
        p->pos++;
        if (c == '`') {
            shell_parse_nested(p, body.p, body.len, open, "backquoted command", p->depth);
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
    if (!shell_enter(p, open)) return;
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
            shell_perr(p, open, "unterminated array assignment");
        } else if (is_meta(c) && !((c == '<' || c == '>') && at(p, skip_cont(p, p->pos + 1)) == '(')) {
            shell_perr(p, p->pos, "syntax error near '%c'", c);
        } else {
            lword_t e;
            lex_word(p, &e, true);
            shell_lword_free(&e);
        }
    }
    p->hd_base = save_base;
    shell_leave(p);
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

void shell_advance(parser_t *p)
{
    shell_tok_free(&p->tok);
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

void shell_register_heredoc(parser_t *p, op_t op, size_t off)
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
        shell_sanitize(&d, h.delim, dlen > 32 ? 32 : dlen);
        shell_perr(p, h.offset, "unterminated here-document '%s'", buf_cstr(&d));
        buf_free(&d);
        return;
    }
    if (!h.expand) return;
    size_t after = p->pos, save_end = p->end;
    lword_t scratch = {0};
    p->pos = body;
    p->end = body_end;
    lex_dquote(p, &scratch, true);
    shell_lword_free(&scratch);
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

/* ==== literal word lists (command-list entries) ==================================================== */

/* An entry's words, read with the shell's quote rules; NULL or an error. */
static char *entry_words(const char *e, parser_t *p, lwords_t *words)
{
    static const char *const sep_hint = "an entry is one command: write one entry per command";
    static const char *const redir_hint = "an entry is a command and its arguments only";
    while (!failed(p)) {
        int c = cur(p);
        size_t off = p->pos;
        if (c == ' ' || c == '\t') {
            p->pos++;
            continue;
        }
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
            shell_lword_free(&w);
            break;
        }
        vec_push(words, w);
    }
    return p->sh->error;
}

char *shell_read_literals(const char *s, arena_t *a, shell_literal_t **words, size_t *n)
{
    shell_parse_t dummy = {0}; /* owns nothing: entry mode emits no commands */
    shared_t sh = {0};
    sh.out = &dummy;
    parser_t p = {0};
    p.sh = &sh;
    p.s = s;
    p.end = strlen(s);
    p.entry_mode = true;
    lwords_t lw = {0};
    char *err = entry_words(s, &p, &lw);
    *n = err ? 0 : lw.n;
    *words = *n ? arena_alloc(a, *n * sizeof **words) : NULL;
    for (size_t i = 0; i < *n; i++) {
        const lword_t *w = &lw.v[i];
        (*words)[i] = (shell_literal_t){arena_strndup(a, w->val.p ? w->val.p : "", w->val.len), w->val.len,
                                        w->start, w->end, w->quoted, w->assign};
    }
    for (size_t i = 0; i < lw.n; i++) shell_lword_free(&lw.v[i]);
    vec_free(&lw);
    arena_free(&dummy.arena);
    return err;
}
