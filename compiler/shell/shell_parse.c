/* shell_parse.c — the grammar of a bash command string, by recursive descent:
 * lists, pipelines, compound commands that only nest, function definitions,
 * and simple commands, which are handed to shell_unwrap.c as they are found.
 * The public entry point shell.h's shell_parse is here.
 */
#include "shell_int.h"

#include <stdlib.h>
#include <string.h>

static void parse_command(parser_t *p);
static void parse_simple(parser_t *p, lword_t *first);

/* ==== grammar ==================================================================================== */

static bool is_op(const parser_t *p, op_t op) { return p->tok.kind == T_OP && p->tok.op == op; }

/* An unquoted word with exactly this text: how reserved words are recognised. */
static bool is_kw(const parser_t *p, const char *kw)
{
    const lword_t *w = &p->tok.w;
    size_t n = strlen(kw);
    return p->tok.kind == T_WORD && !w->quoted && !w->dynamic && w->val.len == n && memcmp(w->val.p, kw, n) == 0;
}

/* clang-format off */
static const char *const reserved_words[] = {
    "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case",
    "esac", "function", "select", "time", "coproc", "{", "}", "!", "[[", "]]", NULL,
};
/* clang-format on */

bool shell_in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return true;
    return false;
}

bool shell_reserved(const char *word) { return shell_in_list(word, reserved_words); }

static bool is_closer(const parser_t *p)
{
    static const char *const closers[] = {"then", "elif", "else", "fi", "do", "done", "esac", "}", NULL};
    for (const char *const *c = closers; *c; c++)
        if (is_kw(p, *c)) return true;
    return false;
}

static void skip_newlines(parser_t *p)
{
    while (p->tok.kind == T_NEWLINE) shell_advance(p);
}

static bool expect_kw(parser_t *p, const char *kw, const char *opener, size_t off)
{
    if (is_kw(p, kw)) return true;
    if (p->tok.kind == T_EOF) shell_perr(p, off, "missing '%s' for the '%s'", kw, opener);
    else shell_syntax_error(p);
    return false;
}

static void parse_redirect(parser_t *p)
{
    op_t op = p->tok.op;
    size_t off = p->tok.start;
    shell_advance(p);
    if (p->tok.kind != T_WORD) {
        shell_syntax_error(p);
        return;
    }
    if (op == OP_DLESS || op == OP_DLESSDASH) shell_register_heredoc(p, op, off);
    shell_advance(p);
}

static void parse_redirects(parser_t *p)
{
    while (!failed(p)) {
        if (p->tok.kind == T_IONUM) shell_advance(p);
        else if (p->tok.kind == T_OP && p->tok.op >= OP_LESS) parse_redirect(p);
        else break;
    }
}

/* { list } */
static void parse_group(parser_t *p)
{
    size_t off = p->tok.start;
    if (!shell_enter(p, off)) return;
    shell_advance(p);
    shell_parse_list(p);
    if (expect_kw(p, "}", "{", off)) shell_advance(p);
    shell_leave(p);
}

/* ( list ) or (( arithmetic )), with the first '(' read. */
static void parse_paren(parser_t *p)
{
    size_t off = p->tok.start, j = skip_cont(p, p->pos), close;
    if (at(p, j) == '(' && shell_arith_ahead(p, j + 1, &close)) {
        shell_arith_region(p, off, j + 1, close);
        p->pos = close + 2;
        shell_advance(p);
        return;
    }
    if (!shell_enter(p, off)) return;
    shell_advance(p);
    shell_parse_list(p);
    if (is_op(p, OP_RPAREN)) shell_advance(p);
    else if (p->tok.kind == T_EOF) shell_perr(p, off, "missing ')' for the '('");
    else shell_syntax_error(p);
    shell_leave(p);
}

static void parse_if(parser_t *p)
{
    size_t off = p->tok.start;
    if (!shell_enter(p, off)) return;
    do {
        shell_advance(p); /* past if / elif */
        shell_parse_list(p);
        if (!expect_kw(p, "then", "if", off)) break;
        shell_advance(p);
        shell_parse_list(p);
    } while (is_kw(p, "elif"));
    if (!failed(p) && is_kw(p, "else")) {
        shell_advance(p);
        shell_parse_list(p);
    }
    if (expect_kw(p, "fi", "if", off)) shell_advance(p);
    shell_leave(p);
}

/* do list done, or bash's { list } */
static void parse_do(parser_t *p, const char *opener, size_t off)
{
    if (is_kw(p, "{")) {
        parse_group(p);
        return;
    }
    if (!expect_kw(p, "do", opener, off)) return;
    shell_advance(p);
    shell_parse_list(p);
    if (expect_kw(p, "done", "do", off)) shell_advance(p);
}

static void parse_while(parser_t *p)
{
    size_t off = p->tok.start;
    const char *kw = is_kw(p, "while") ? "while" : "until";
    if (!shell_enter(p, off)) return;
    shell_advance(p);
    shell_parse_list(p);
    parse_do(p, kw, off);
    shell_leave(p);
}

/* for NAME [in WORDS]; do ..., for ((a; b; c)) ..., select ... */
static void parse_for(parser_t *p)
{
    size_t off = p->tok.start, close, j;
    const char *kw = is_kw(p, "for") ? "for" : "select";
    if (!shell_enter(p, off)) return;
    shell_advance(p);
    if (is_op(p, OP_LPAREN) && at(p, j = skip_cont(p, p->pos)) == '(' && shell_arith_ahead(p, j + 1, &close)) {
        shell_arith_region(p, off, j + 1, close);
        p->pos = close + 2;
        shell_advance(p);
        if (is_op(p, OP_SEMI)) shell_advance(p);
    } else if (p->tok.kind != T_WORD) {
        shell_syntax_error(p);
    } else {
        shell_advance(p);
        skip_newlines(p);
        if (is_kw(p, "in")) {
            for (shell_advance(p); p->tok.kind == T_WORD;) shell_advance(p); /* data; substitutions already read */
            if (is_op(p, OP_SEMI) || p->tok.kind == T_NEWLINE) shell_advance(p);
            else shell_syntax_error(p);
        } else if (is_op(p, OP_SEMI)) {
            shell_advance(p);
        }
    }
    skip_newlines(p);
    if (!failed(p)) parse_do(p, kw, off);
    shell_leave(p);
}

/* One "pattern | pattern )" of a case; false on error. */
static bool parse_case_patterns(parser_t *p)
{
    if (is_op(p, OP_LPAREN)) shell_advance(p);
    for (;;) {
        if (p->tok.kind != T_WORD) break;
        shell_advance(p);
        if (!is_op(p, OP_PIPE)) break;
        shell_advance(p);
    }
    if (!is_op(p, OP_RPAREN)) {
        shell_syntax_error(p);
        return false;
    }
    shell_advance(p);
    return true;
}

static void parse_case(parser_t *p)
{
    size_t off = p->tok.start;
    if (!shell_enter(p, off)) return;
    shell_advance(p);
    if (p->tok.kind != T_WORD) {
        shell_syntax_error(p);
        shell_leave(p);
        return;
    }
    shell_advance(p);
    skip_newlines(p);
    if (!expect_kw(p, "in", "case", off)) {
        shell_leave(p);
        return;
    }
    for (shell_advance(p); !failed(p);) {
        skip_newlines(p);
        if (is_kw(p, "esac")) {
            shell_advance(p);
            break;
        }
        if (p->tok.kind == T_EOF) {
            shell_perr(p, off, "missing 'esac' for the 'case'");
            break;
        }
        if (!parse_case_patterns(p)) break;
        shell_parse_list(p);
        if (is_op(p, OP_DSEMI) || is_op(p, OP_SEMIAMP) || is_op(p, OP_DSEMIAMP)) shell_advance(p);
        else if (!is_kw(p, "esac")) (void)expect_kw(p, "esac", "case", off);
    }
    shell_leave(p);
}

/* [[ ... ]]: words are operands, not commands; their substitutions run. */
static void parse_cond(parser_t *p)
{
    size_t off = p->tok.start;
    if (!shell_enter(p, off)) return;
    for (shell_advance(p); !failed(p);) {
        if (is_kw(p, "]]")) {
            shell_advance(p);
            break;
        }
        tkind_t k = p->tok.kind;
        op_t op = p->tok.op;
        if (k == T_EOF) {
            shell_perr(p, off, "missing ']]' for the '[['");
        } else if (k == T_WORD && !p->tok.w.dynamic && shell_subscript_code(buf_cstr(&p->tok.w.val))) {
            shell_emit_opaque(p, p->tok.w.start, p->tok.w.end, SHELL_OPAQUE_SUBSCRIPT);
            shell_advance(p);
        } else if (k == T_WORD || k == T_IONUM || k == T_NEWLINE ||
                   (k == T_OP && (op == OP_LPAREN || op == OP_RPAREN || op == OP_AND || op == OP_OR ||
                                  op == OP_LESS || op == OP_GREAT || op == OP_PIPE))) {
            shell_advance(p);
        } else {
            shell_syntax_error(p);
        }
    }
    shell_leave(p);
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
    if (!shell_enter(p, off)) return;
    skip_newlines(p);
    if (is_compound_start(p)) parse_command(p);
    else shell_syntax_error(p);
    shell_leave(p);
}

/* function NAME [()] BODY */
static void parse_function(parser_t *p)
{
    size_t off = p->tok.start;
    shell_advance(p);
    if (p->tok.kind != T_WORD) {
        shell_syntax_error(p);
        return;
    }
    shell_advance(p);
    if (is_op(p, OP_LPAREN)) {
        shell_advance(p);
        if (!is_op(p, OP_RPAREN)) {
            shell_syntax_error(p);
            return;
        }
        shell_advance(p);
    }
    parse_function_body(p, off);
}

/* coproc [NAME] COMPOUND, or coproc SIMPLE-COMMAND: a word followed by a
 * compound command is the name, else it is the command word. */
static void parse_coproc(parser_t *p)
{
    size_t off = p->tok.start;
    if (!shell_enter(p, off)) return;
    shell_advance(p);
    if (is_compound_start(p)) {
        parse_command(p);
    } else if (p->tok.kind == T_WORD) {
        lword_t name = p->tok.w;
        memset(&p->tok.w, 0, sizeof name);
        shell_advance(p);
        if (is_compound_start(p)) {
            shell_lword_free(&name);
            parse_command(p);
        } else {
            parse_simple(p, &name);
        }
    } else {
        shell_syntax_error(p);
    }
    shell_leave(p);
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
        else if (is_kw(p, "function")) {
            parse_function(p);
            return;
        } else if (is_kw(p, "coproc")) {
            parse_coproc(p);
            return;
        } else if (is_closer(p) || is_kw(p, "!") || is_kw(p, "]]")) {
            shell_syntax_error(p);
            return;
        } else {
            parse_simple(p, NULL);
            return;
        }
        parse_redirects(p);
        return;
    }
    if (is_op(p, OP_LPAREN)) {
        parse_paren(p);
        parse_redirects(p);
    } else if (p->tok.kind == T_WORD || p->tok.kind == T_IONUM || (p->tok.kind == T_OP && p->tok.op >= OP_LESS)) {
        parse_simple(p, NULL);
    } else {
        shell_syntax_error(p);
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
            shell_advance(p);
            if (is_kw(p, "-p")) shell_advance(p);
            if (is_kw(p, "--")) shell_advance(p);
        } else if (is_kw(p, "!")) {
            shell_advance(p);
        } else {
            break;
        }
        prefix = true;
    }
    if (prefix && ends_pipeline(p)) return;
    parse_command(p);
    while (!failed(p) && (is_op(p, OP_PIPE) || is_op(p, OP_PIPEAMP))) {
        shell_advance(p);
        skip_newlines(p);
        parse_command(p);
    }
}

static void parse_and_or(parser_t *p)
{
    parse_pipeline(p);
    while (!failed(p) && (is_op(p, OP_AND) || is_op(p, OP_OR))) {
        shell_advance(p);
        skip_newlines(p);
        parse_pipeline(p);
    }
}

/* Commands separated by ; & and newlines, up to EOF, ')', ';;' or a closing
 * reserved word, which the caller checks. */
void shell_parse_list(parser_t *p)
{
    while (!failed(p)) {
        skip_newlines(p);
        if (p->tok.kind == T_EOF || is_op(p, OP_RPAREN) || is_op(p, OP_DSEMI) || is_op(p, OP_SEMIAMP) ||
            is_op(p, OP_DSEMIAMP) || is_closer(p))
            return;
        parse_and_or(p);
        if (is_op(p, OP_SEMI) || is_op(p, OP_AMP) || p->tok.kind == T_NEWLINE) shell_advance(p);
        else return;
    }
}

/* ==== simple commands ================================================================================ */

static shell_word_t make_word(parser_t *p, const lword_t *w)
{
    arena_t *a = &p->sh->out->arena;
    shell_word_t cw = {0};
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
    shell_advance(p);
    if (!is_op(p, OP_RPAREN)) {
        shell_syntax_error(p);
        return;
    }
    shell_advance(p);
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
            shell_advance(p);
            prefix = true;
        } else if (p->tok.kind == T_OP && p->tok.op >= OP_LESS) {
            parse_redirect(p);
            prefix = true;
        } else if (p->tok.kind == T_WORD) {
            if (!words.n && p->tok.w.assign) {
                shell_advance(p);
                prefix = true;
                continue;
            }
            vec_push(&words, p->tok.w);
            memset(&p->tok.w, 0, sizeof p->tok.w);
            shell_advance(p);
            if (words.n == 1 && !prefix && !first && is_op(p, OP_LPAREN)) {
                parse_funcdef(p, words.v[0].start);
                goto out;
            }
        } else {
            break;
        }
    }
    if (!failed(p) && words.n) {
        shell_word_t *cw = arena_alloc(&p->sh->out->arena, words.n * sizeof *cw);
        for (size_t i = 0; i < words.n; i++) cw[i] = make_word(p, &words.v[i]);
        shell_emit(p, cw, words.n, p->nested ? p->origin : words.v[0].start, p->depth, false);
    }
out:
    for (size_t i = 0; i < words.n; i++) shell_lword_free(&words.v[i]);
    vec_free(&words);
}

/* A synthetic opaque command for an expansion that runs code wherever it
 * appears (${x@P}): its one word is the expansion as written. */
void shell_emit_opaque(parser_t *p, size_t start, size_t end, shell_opaque_t why)
{
    if (p->entry_mode) return;
    arena_t *a = &p->sh->out->arena;
    shell_word_t *w = arena_zalloc(a, sizeof *w);
    w->raw = w->text = arena_strndup(a, p->s + start, end - start);
    w->rawlen = w->len = end - start;
    w->dynamic = true;
    shell_cmd_t c = {w, 1, p->nested ? p->origin : start, p->depth, why, false};
    vec_push(&p->sh->cmds, c);
}

/* A string taken from a word (backquotes, sh -c, trap, watch), parsed with
 * the same rules; its commands join the same list. */
void shell_parse_nested(parser_t *p, const char *s, size_t len, size_t at_off,
                        const char *what, unsigned depth)
{
    if (failed(p)) return;
    if (depth + 1 >= SHELL_MAX_DEPTH) {
        shell_perr(p, at_off, "nested too deeply");
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
    shell_advance(&c);
    shell_parse_list(&c);
    if (!failed(&c) && c.tok.kind != T_EOF) shell_syntax_error(&c);
    if (!failed(&c) && c.hds.n) shell_perr(&c, c.hds.v[0].offset, "unterminated here-document");
    for (size_t i = 0; i < c.hds.n; i++) free(c.hds.v[i].delim);
    vec_free(&c.hds);
    shell_tok_free(&c.tok);
}

/* ==== the split: public API ================================================================================ */

bool shell_parse(const char *cmd, size_t len, shell_parse_t *out)
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
        shell_perr(&p, (size_t)(nul - p.s), "NUL byte");
    } else {
        shell_advance(&p);
        shell_parse_list(&p);
        if (!failed(&p) && p.tok.kind != T_EOF) shell_syntax_error(&p);
        if (!failed(&p) && p.hds.n) shell_perr(&p, p.hds.v[0].offset, "unterminated here-document");
    }
    for (size_t i = 0; i < p.hds.n; i++) free(p.hds.v[i].delim);
    vec_free(&p.hds);
    shell_tok_free(&p.tok);
    out->ncmds = sh.cmds.n;
    out->cmds = sh.cmds.n ? arena_alloc(&out->arena, sh.cmds.n * sizeof *out->cmds) : NULL;
    if (sh.cmds.n) memcpy(out->cmds, sh.cmds.v, sh.cmds.n * sizeof *out->cmds);
    vec_free(&sh.cmds);
    out->error = sh.error;
    return out->error == NULL;
}

void shell_parse_free(shell_parse_t *p)
{
    if (!p) return;
    free(p->error);
    arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}
