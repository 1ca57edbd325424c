/* bwrap_args.c — the two outputs of a bwrap plan: bwrap.args, its text
 * form (one argument a line, C-escaped, placeholders for the session paths)
 * with bwrap_args_parse as its exact inverse, and the concrete argv the
 * runner hands bwrap (placeholders substituted).
 */
#include "bwrap.h"

#include <stdlib.h>
#include <string.h>

static bw_word_t word_lit(const char *s) { return (bw_word_t){BW_LIT, s}; }

/* ---- bwrap.args: rendering and parsing ------------------------------------------------------------------- */

static void escape_lit(buf_t *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\') buf_adds(b, "\\\\");
        else if (c == '\n') buf_adds(b, "\\n");
        else if (c == '\t') buf_adds(b, "\\t");
        else if (c == '$' || c < 0x20 || c == 0x7f) buf_printf(b, "\\x%02x", c);
        else buf_addc(b, (char)c);
    }
}

static void word_text(buf_t *b, bw_word_t w)
{
    switch (w.kind) {
    case BW_LIT: escape_lit(b, w.s); return;
    case BW_ENV: buf_printf(b, "${env:%s}", w.s); return;
    case BW_EMPTY_FD: buf_adds(b, "${EMPTY_FD}"); return;
    case BW_WORKSPACE: buf_adds(b, "${WORKSPACE}"); break;
    case BW_SCRATCH: buf_adds(b, "${SCRATCH}"); break;
    }
    if (*w.s) {
        buf_addc(b, '/');
        escape_lit(b, w.s);
    }
}

void bwrap_op_text(const bw_op_t *op, buf_t *out)
{
    buf_adds(out, op->opt);
    if (op->nargs > 0) buf_addc(out, ' '), word_text(out, op->a);
    if (op->nargs > 1) buf_addc(out, ' '), word_text(out, op->b);
}

void bwrap_render(const bwrap_t *b, buf_t *out)
{
    for (size_t i = 0; i < b->ops.n; i++) {
        const bw_op_t *op = &b->ops.v[i];
        buf_adds(out, op->opt);
        buf_addc(out, '\n');
        if (op->nargs > 0) word_text(out, op->a), buf_addc(out, '\n');
        if (op->nargs > 1) word_text(out, op->b), buf_addc(out, '\n');
    }
}

/* Arity of every option the planner writes; anything else is refused. */
static int option_nargs(const char *opt)
{
    static const char *const zero[] = {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                                       "--new-session", "--clearenv"};
    static const char *const one[] = {"--cap-drop", "--uid", "--gid", "--hostname", "--dev", "--proc",
                                      "--tmpfs", "--remount-ro", "--chdir", "--unsetenv", "--perms"};
    static const char *const two[] = {"--setenv", "--bind", "--bind-try", "--ro-bind", "--ro-bind-try",
                                      "--symlink", "--ro-bind-data", "--dev-bind"};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
        if (strcmp(opt, zero[i]) == 0) return 0;
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        if (strcmp(opt, one[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof two / sizeof *two; i++)
        if (strcmp(opt, two[i]) == 0) return 2;
    return -1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One line → one word (the inverse of word_text). */
static bool parse_word(arena_t *a, const char *s, size_t n, bw_word_t *w, char **err)
{
    bw_word_kind_t kind = BW_LIT;
    size_t i = 0;
    if (n >= 12 && memcmp(s, "${WORKSPACE}", 12) == 0) kind = BW_WORKSPACE, i = 12;
    else if (n >= 10 && memcmp(s, "${SCRATCH}", 10) == 0) kind = BW_SCRATCH, i = 10;
    else if (n == 11 && memcmp(s, "${EMPTY_FD}", 11) == 0) {
        *w = (bw_word_t){BW_EMPTY_FD, ""};
        return true;
    } else if (n >= 6 && memcmp(s, "${env:", 6) == 0 && s[n - 1] == '}') {
        *w = (bw_word_t){BW_ENV, arena_strndup(a, s + 6, n - 7)};
        return true;
    }
    if (kind != BW_LIT) {
        if (i < n && s[i] != '/') {
            *err = xstrdup("a placeholder must be followed by '/' or end the argument");
            return false;
        }
        if (i < n) i++;
    }
    buf_t b = BUF_INIT;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '$') {
            buf_free(&b);
            *err = xstrdup("a bare '$' (a literal dollar is written \\x24)");
            return false;
        }
        if (c != '\\') {
            buf_addc(&b, c);
            continue;
        }
        if (++i >= n) break;
        if (s[i] == '\\') buf_addc(&b, '\\');
        else if (s[i] == 'n') buf_addc(&b, '\n');
        else if (s[i] == 't') buf_addc(&b, '\t');
        else if (s[i] == 'x' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            int v = hexval(s[i + 1]) * 16 + hexval(s[i + 2]);
            if (v == 0) {
                buf_free(&b);
                *err = xstrdup("\\x00 cannot be an argument byte");
                return false;
            }
            buf_addc(&b, (char)v);
            i += 2;
        } else {
            buf_free(&b);
            *err = xstrdup("a bad escape (only \\\\, \\n, \\t and \\xHH)");
            return false;
        }
    }
    *w = (bw_word_t){kind, arena_strdup(a, buf_cstr(&b))};
    buf_free(&b);
    return true;
}

bwrap_t *bwrap_args_parse(const char *text, size_t len, char **err)
{
    bwrap_t *b = xcalloc(1, sizeof *b);
    VEC(bw_word_t) words = {0};
    size_t line = 1;
    for (size_t i = 0; i < len; line++) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - text - i) : len - i;
        bw_word_t w;
        char *e = NULL;
        if (memchr(text + i, '\0', n) || !parse_word(&b->arena, text + i, n, &w, &e)) {
            *err = xasprintf("line %zu: %s", line, e ? e : "a NUL byte");
            free(e);
            goto fail;
        }
        vec_push(&words, w);
        i += n + 1;
    }
    for (size_t i = 0; i < words.n;) {
        if (words.v[i].kind != BW_LIT) {
            *err = xasprintf("argument %zu: expected an option", i + 1);
            goto fail;
        }
        int na = option_nargs(words.v[i].s);
        if (na < 0) {
            *err = xasprintf("argument %zu: unknown option '%s'", i + 1, words.v[i].s);
            goto fail;
        }
        if (i + (size_t)na >= words.n) {
            *err = xasprintf("argument %zu: '%s' needs %d argument%s", i + 1, words.v[i].s, na, na > 1 ? "s" : "");
            goto fail;
        }
        bw_op_t op = {words.v[i].s, word_lit(""), word_lit(""), na, NULL, NULL};
        if (na > 0) op.a = words.v[i + 1];
        if (na > 1) op.b = words.v[i + 2];
        vec_push(&b->ops, op);
        i += 1 + (size_t)na;
    }
    vec_free(&words);
    return b;
fail:
    vec_free(&words);
    bwrap_free(b);
    return NULL;
}

/* ---- substitution ---------------------------------------------------------------------------------------- */

static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') return *env + n + 1;
    return NULL;
}

char *bwrap_word_value(bw_word_t w, const roots_t *roots, char *const *env)
{
    switch (w.kind) {
    case BW_EMPTY_FD: return xstrdup("${EMPTY_FD}"); /* never reached: bwrap_argv binds empty_file */
    case BW_LIT: return xstrdup(w.s);
    case BW_ENV: {
        const char *v = env_get(env, w.s);
        return v ? xstrdup(v) : NULL;
    }
    case BW_WORKSPACE:
    case BW_SCRATCH: {
        const char *root = w.kind == BW_WORKSPACE ? roots->workspace : roots->scratch;
        return *w.s ? xasprintf("%s/%s", root, w.s) : xstrdup(root);
    }
    }
    return NULL;
}

/* A block of a missing file: "--perms 0444 --ro-bind-data ${EMPTY_FD} DEST". */
static bool empty_block(const bw_op_t *op)
{
    return op->nargs == 2 && op->a.kind == BW_EMPTY_FD && !strcmp(op->opt, "--ro-bind-data");
}

void bwrap_argv(const bwrap_t *b, const roots_t *roots, char *const *env, const char *empty_file, strvec_t *argv)
{
    for (size_t i = 0; i < b->ops.n; i++) {
        const bw_op_t *op = &b->ops.v[i];
        if (!strcmp(op->opt, "--perms") && i + 1 < b->ops.n && empty_block(&b->ops.v[i + 1])) continue;
        if (empty_block(op)) {
            vec_push(argv, xstrdup("--ro-bind"));
            vec_push(argv, xstrdup(empty_file));
            vec_push(argv, bwrap_word_value(op->b, roots, env));
            continue;
        }
        char *a = op->nargs > 0 ? bwrap_word_value(op->a, roots, env) : NULL;
        char *c = op->nargs > 1 ? bwrap_word_value(op->b, roots, env) : NULL;
        if ((op->nargs > 0 && !a) || (op->nargs > 1 && !c)) { /* an unset passthrough variable */
            free(a);
            free(c);
            continue;
        }
        vec_push(argv, xstrdup(op->opt));
        if (a) vec_push(argv, a);
        if (c) vec_push(argv, c);
    }
}
