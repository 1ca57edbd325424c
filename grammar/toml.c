/* toml.c — toml_parse(): the one loop that feeds lexer tokens to the lemon
 * parser. It picks the lexing mode, drops whitespace, comments and the
 * newlines that arrays and TOML 1.1 inline tables allow, and enforces the
 * input limits (size, nesting) before the parser or the tree can feel them.
 */
#include <stdlib.h>
#include <string.h>

#include "toml_internal.h"

/* lemon's generated entry points (toml_parse.c) */
void *TomlParserAlloc(void *(*alloc)(size_t), toml_parser *ctx);
void TomlParserFree(void *p, void (*release)(void *));
void TomlParser(void *p, int kind, span_t tok);

static int top(const toml_parser *ctx) { return ctx->depth ? ctx->open[ctx->depth - 1] : 0; }

static bool is_key_token(int tk) { return tk == TK_BARE || tk == TK_BASIC || tk == TK_LITERAL; }

/* Newlines inside brackets: an array allows them anywhere; a TOML 1.1
 * inline table between its entries (not inside "key = value"). Returns true
 * when the newline is to be dropped; false when the parser should see it
 * (and report it) or an error was set. */
static bool skip_newline(toml_parser *ctx, span_t sp)
{
    if (!ctx->depth) return false;
    if (top(ctx) == CT_ARRAY) return true;
    if (ctx->prev == TK_EQUALS || ctx->prev == TK_DOT || ctx->prev_in_key) return false;
    if (ctx->ver == TOML_1_1) return true;
    tp_error(ctx, sp, "newline inside an inline table (allowed from TOML 1.1)");
    return true;
}

/* Limits checked before the parser sees a token: nesting of arrays and
 * inline tables, and the parts of one dotted key. */
static bool within_limits(toml_parser *ctx, int tk, span_t sp)
{
    if ((tk == TK_LBRACKET || tk == TK_LBRACE) && ctx->mode == LEX_VALUE) {
        if (ctx->depth >= TOML_MAX_DEPTH) {
            tp_error(ctx, sp, "nesting deeper than %d levels", TOML_MAX_DEPTH);
            return false;
        }
    } else if (is_key_token(tk) && ctx->mode == LEX_KEY) {
        ctx->key_parts = ctx->prev == TK_DOT ? ctx->key_parts + 1 : 1;
        if (ctx->key_parts > TOML_MAX_DEPTH) {
            tp_error(ctx, sp, "nesting deeper than %d levels (a key with more than %d parts)",
                     TOML_MAX_DEPTH, TOML_MAX_DEPTH);
            return false;
        }
    }
    return true;
}

/* After the parser took tk: track open containers and choose the mode of
 * the next token. */
static void track(toml_parser *ctx, int tk, span_t sp)
{
    bool lexed_as_key = ctx->mode == LEX_KEY;
    switch (tk) {
    case TK_EQUALS:
        ctx->mode = LEX_VALUE;
        break;
    case TK_LBRACKET:
    case TK_LBRACE:
        if (ctx->mode != LEX_VALUE) {
            ctx->in_header = true; /* [ at the start of a line */
            break;
        }
        ctx->open_at[ctx->depth] = sp.start;
        ctx->open[ctx->depth++] = tk == TK_LBRACKET ? CT_ARRAY : CT_INLINE;
        ctx->mode = tk == TK_LBRACKET ? LEX_VALUE : LEX_KEY;
        break;
    case TK_LLBRACKET:
        ctx->in_header = true;
        break;
    case TK_RBRACKET:
    case TK_RBRACE:
        if (ctx->depth && top(ctx) == (tk == TK_RBRACKET ? CT_ARRAY : CT_INLINE)) ctx->depth--;
        ctx->mode = top(ctx) == CT_ARRAY ? LEX_VALUE : LEX_KEY;
        break;
    case TK_NEWLINE:
        ctx->in_header = false;
        ctx->mode = LEX_KEY;
        break;
    default: /* a value ends, or a key part, a dot, a comma */
        if (!lexed_as_key || tk == TK_COMMA) ctx->mode = top(ctx) == CT_ARRAY ? LEX_VALUE : LEX_KEY;
        break;
    }
    ctx->prev = tk;
    ctx->prev_span = sp;
    ctx->prev_in_key = lexed_as_key && is_key_token(tk);
}

/* The token loop. Returns false with ctx->err set on the first error. */
static bool run(toml_parser *ctx, void *parser)
{
    const char *text = ctx->src->text, *lim = text + ctx->src->len;
    size_t off = 0;
    int last = 0; /* last token lexed, skipped ones included */
    /* A UTF-8 byte order mark is allowed at the very start, and only there. */
    if (ctx->src->len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) off = 3;
    while (!ctx->failed) {
        size_t n;
        int tk = toml_lex(text + off, lim, ctx->mode, &n);
        span_t sp = {(uint32_t)off, (uint32_t)(off + n)};
        if (tk == TK_ILLEGAL || tk == TK_BAD_STRING || tk == TK_BAD_VALUE) {
            tp_lex_error(ctx, tk, sp, last == TK_COMMENT);
            break;
        }
        off += n;
        last = tk;
        if (tk == TK_WS || tk == TK_COMMENT) continue;
        if (tk == TK_NEWLINE && skip_newline(ctx, sp)) continue;
        if (!within_limits(ctx, tk, sp)) break;
        TomlParser(parser, tk, sp);
        if (tk == 0) break;
        track(ctx, tk, sp);
    }
    return !ctx->failed;
}

toml_doc *toml_parse(source_t *src, toml_version ver, toml_error *err)
{
    toml_doc *doc = xcalloc(1, sizeof *doc);
    doc->src = src;
    toml_parser *ctx = xcalloc(1, sizeof *ctx);
    ctx->doc = doc;
    ctx->src = src;
    ctx->ver = ver;
    ctx->mode = LEX_KEY;
    doc->root = arena_zalloc(&doc->arena, sizeof *doc->root); /* no entries yet */
    doc->root->type = TOML_TABLE;
    doc->root->flags = TF_HEADER;
    doc->root->height = 1;
    ctx->cur = doc->root;

    if (src->len >= SOURCE_MAX_BYTES) {
        tp_error(ctx, (span_t){0, 0}, "input is too large (the limit is %zu bytes)", SOURCE_MAX_BYTES - 1);
    } else {
        void *parser = TomlParserAlloc(xmalloc, ctx);
        run(ctx, parser);
        TomlParserFree(parser, free);
    }
    bool ok = !ctx->failed;
    if (!ok && err) *err = ctx->err;
    vec_free(&ctx->keys);
    vec_free(&ctx->elems);
    free(ctx);
    if (ok) return doc;
    toml_doc_free(doc);
    return NULL;
}

void toml_doc_free(toml_doc *doc)
{
    if (!doc) return;
    arena_free(&doc->arena);
    free(doc);
}
