/* shell_unwrap.c — commands that run commands: wrappers (env, sudo, xargs,
 * timeout, ...) are unwrapped into the command they run, sh -c / su -c / trap
 * / watch strings are parsed as commands of their own, find -exec is split,
 * and whatever cannot be known before it runs is marked opaque.
 */
#include "shell_int.h"

#include <stdlib.h>
#include <string.h>

/* ==== wrappers and other commands that run commands ======================================================= */

typedef struct lopt {
    const char *name; /* without the leading "--" */
    char letter;      /* the short option it stands for, or 0 */
    char arg;         /* 0 none, 1 required, 2 optional (only as --name=value) */
} lopt_t;

enum {
    W_ASSIGN = 1,
    W_NUMOPT = 2,
    W_NOOPTS = 4,
    W_MORE = 8,
    W_DASH_I = 16
};

/* clang-format off */
typedef enum {
    WR_ENV = 1, WR_COMMAND, WR_BUILTIN, WR_EXEC, WR_NICE, WR_NOHUP, WR_TIMEOUT, WR_STDBUF, WR_TIME,
    WR_SUDO, WR_DOAS, WR_XARGS, WR_SETSID, WR_BUSYBOX, WR_WATCH, WR_FLOCK, WR_CHROOT,
} wrapper_id_t;
/* clang-format on */

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
/* clang-format off */
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
/* clang-format on */

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

const char *shell_base_name(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

static bool set_opaque(parser_t *p, size_t idx, shell_opaque_t why)
{
    p->sh->cmds.v[idx].opaque = why;
    return false;
}

/* The word after an option that takes one: fine unless it may split into
 * several words, which would move the command. */
static bool option_arg_ok(const shell_word_t *w) { return !(w->dynamic && w->splits); }

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
    const shell_cmd_t *c = &p->sh->cmds.v[idx];
    const char *t = c->words[i].text + 2, *eq = strchr(t, '=');
    const lopt_t *l = find_long(wr->longs, t, eq ? (size_t)(eq - t) : strlen(t));
    if (!l) return set_opaque(p, idx, SHELL_OPAQUE_OPTION);
    unsigned char k = (unsigned char)l->letter;
    os->seen[k] = true;
    os->arg[k] = eq ? eq + 1 : NULL;
    if (l->arg != 1 || eq) return i + 1;
    if (i + 1 >= c->nwords) return c->nwords;
    if (!option_arg_ok(&c->words[i + 1])) return set_opaque(p, idx, SHELL_OPAQUE_WRAPPED);
    os->arg[k] = c->words[i + 1].text;
    return i + 2;
}

/* One bundle of short options at words[i]; returns the next index, or 0. */
static size_t scan_short(parser_t *p, size_t idx, const wrapper_t *wr, optscan_t *os, size_t i)
{
    const shell_cmd_t *c = &p->sh->cmds.v[idx];
    const char *t = c->words[i].text;
    for (size_t k = 1; t[k]; k++) {
        unsigned char ch = (unsigned char)t[k];
        if (ch >= 128) return set_opaque(p, idx, SHELL_OPAQUE_OPTION);
        if (strchr(wr->args, ch)) {
            os->seen[ch] = true;
            if (t[k + 1]) {
                os->arg[ch] = t + k + 1;
                return i + 1;
            }
            if (i + 1 >= c->nwords) return c->nwords;
            if (!option_arg_ok(&c->words[i + 1])) return set_opaque(p, idx, SHELL_OPAQUE_WRAPPED);
            os->arg[ch] = c->words[i + 1].text;
            return i + 2;
        }
        if (strchr(wr->optargs, ch)) {
            os->seen[ch] = true;
            os->arg[ch] = t[k + 1] ? t + k + 1 : NULL;
            return i + 1;
        }
        if (!strchr(wr->flags, ch)) return set_opaque(p, idx, SHELL_OPAQUE_OPTION);
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
        const shell_word_t *w = &p->sh->cmds.v[idx].words[i];
        if (w->dynamic) return set_opaque(p, idx, SHELL_OPAQUE_WRAPPED);
        const char *t = w->text;
        if ((wr->how & W_ASSIGN) && env_assign(t)) {
            i++;
            continue;
        }
        if ((wr->how & W_NOOPTS) || t[0] != '-' || !t[1]) {
            if ((wr->how & W_DASH_I) && !strcmp(t, "-")) {
                i++;
                continue;
            }
            break;
        }
        if (!strcmp(t, "--")) {
            i++;
            break;
        }
        size_t next;
        if (t[1] == '-') next = scan_long(p, idx, wr, os, i);
        else if ((wr->how & W_NUMOPT) && strspn(t + 1, "0123456789") == strlen(t + 1)) next = i + 1;
        else next = scan_short(p, idx, wr, os, i);
        if (!next) return 0;
        i = next;
    }
    for (unsigned k = 0; k < wr->operands && i < n; k++, i++)
        if (!option_arg_ok(&p->sh->cmds.v[idx].words[i])) return set_opaque(p, idx, SHELL_OPAQUE_WRAPPED);
    return i;
}

static void join_words(buf_t *b, const shell_word_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i) buf_addc(b, ' ');
        buf_add(b, w[i].text, w[i].len);
    }
}

/* xargs -I R / -i[R]: words holding R are filled in from its input. */
static shell_word_t *xargs_replace(parser_t *p, const shell_word_t *w, size_t n, const char *r)
{
    shell_word_t *copy = arena_alloc(&p->sh->out->arena, n * sizeof *copy);
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
    shell_cmd_t c = p->sh->cmds.v[idx];
    if (!i || i >= c.nwords) return;
    shell_word_t *inner = c.words + i;
    size_t n = c.nwords - i;
    bool more = false;
    switch (wr->id) {
    case WR_COMMAND:
        if (os.seen['v'] || os.seen['V']) return; /* a lookup: nothing runs */
        break;
    case WR_ENV:
        /* env -S splits a string into a command with rules of its own. */
        if (os.seen['S']) {
            set_opaque(p, idx, SHELL_OPAQUE_OPTION);
            return;
        }
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
                if (inner[k].dynamic) {
                    set_opaque(p, idx, SHELL_OPAQUE_STRING);
                    return;
                }
            buf_t b = BUF_INIT;
            join_words(&b, inner, n);
            shell_parse_nested(p, b.p, b.len, c.offset, "'watch' command", c.depth);
            buf_free(&b);
            return;
        }
        break;
    case WR_FLOCK:
        /* flock FILE -c STRING runs STRING with sh -c. */
        if (!strcmp(inner[0].text, "-c") || !strcmp(inner[0].text, "--command")) {
            if (n < 2) return;
            if (inner[1].dynamic) {
                set_opaque(p, idx, SHELL_OPAQUE_STRING);
                return;
            }
            shell_parse_nested(p, inner[1].text, inner[1].len, c.offset, "'flock -c' string", c.depth);
            return;
        }
        break;
    case WR_XARGS: {
        const char *r = os.seen['I'] ? os.arg['I'] : (os.seen['i'] ? (os.arg['i'] ? os.arg['i'] : "{}") : NULL);
        if (r && *r) inner = xargs_replace(p, inner, n, r);
        else more = true; /* items from its input are appended as arguments */
        break;
    }
    default: break;
    }
    shell_emit(p, inner, n, c.offset, c.depth + 1, more);
}

/* sh/bash/... : -c STRING is parsed, a script file is a program run like any
 * other, and a shell reading its commands from standard input is opaque. */
static void classify_shell(parser_t *p, size_t idx, const char *name)
{
    shell_cmd_t c = p->sh->cmds.v[idx];
    bool dash_c = false, dash_s = false;
    size_t i = 1;
    while (i < c.nwords) {
        const shell_word_t *w = &c.words[i];
        if (w->dynamic) {
            set_opaque(p, idx, dash_c ? SHELL_OPAQUE_STRING : SHELL_OPAQUE_WRAPPED);
            return;
        }
        const char *t = w->text;
        if (!strcmp(t, "--") || !strcmp(t, "-")) {
            i++;
            break;
        }
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
            if (!option_arg_ok(&c.words[i])) {
                set_opaque(p, idx, SHELL_OPAQUE_WRAPPED);
                return;
            }
    }
    if (dash_c) {
        if (i >= c.nwords) return; /* the shell refuses: nothing runs */
        const shell_word_t *s = &c.words[i];
        if (s->dynamic) {
            set_opaque(p, idx, SHELL_OPAQUE_STRING);
            return;
        }
        buf_t what = BUF_INIT;
        buf_printf(&what, "'%s -c' string", name);
        shell_parse_nested(p, s->text, s->len, c.offset, buf_cstr(&what), c.depth);
        buf_free(&what);
    } else if (dash_s || i >= c.nwords) {
        set_opaque(p, idx, SHELL_OPAQUE_STDIN);
    }
}

/* su, runuser, script: every "-c STRING" (or --command) runs STRING with a
 * shell. Option bundles are not decoded: any 'c' in one counts, which at worst
 * parses a word that is not code. */
static void classify_dash_c(parser_t *p, size_t idx, const char *name)
{
    shell_cmd_t c = p->sh->cmds.v[idx];
    buf_t what = BUF_INIT;
    buf_printf(&what, "'%s -c' string", name);
    for (size_t i = 1; i < c.nwords && !failed(p); i++) {
        const shell_word_t *w = &c.words[i], *next = i + 1 < c.nwords ? &c.words[i + 1] : NULL;
        const char *t = w->text, *q, *str = NULL;
        if (w->dynamic) {
            set_opaque(p, idx, SHELL_OPAQUE_WRAPPED);
            break;
        }
        if (!strcmp(t, "--command") || !strcmp(t, "--session-command")) {
            if (!next) break;
            if (next->dynamic) {
                set_opaque(p, idx, SHELL_OPAQUE_STRING);
                break;
            }
            str = next->text;
            i++;
        } else if (!strncmp(t, "--command=", 10) || !strncmp(t, "--session-command=", 18)) {
            str = strchr(t, '=') + 1;
        } else if (t[0] == '-' && t[1] != '-' && (q = strchr(t + 1, 'c'))) {
            if (q[1]) {
                str = q + 1;
            } else if (next) {
                if (next->dynamic) {
                    set_opaque(p, idx, SHELL_OPAQUE_STRING);
                    break;
                }
                str = next->text;
                i++;
            }
        }
        if (str) shell_parse_nested(p, str, strlen(str), c.offset, buf_cstr(&what), c.depth);
    }
    buf_free(&what);
}

/* bash evaluates the subscript of an array name given to these builtins (and
 * to [[ -v ]]) as arithmetic, running the substitutions in it even when the
 * name was single-quoted: unset 'a[$(rm -rf x)]' runs rm. */
bool shell_subscript_code(const char *t)
{
    const char *b = strchr(t, '[');
    return b && (strstr(b, "$(") || strchr(b, '`') || strstr(b, "${") || strstr(b, "$["));
}

/* clang-format off */
static const char *const name_builtins[] = {
    "unset", "declare", "typeset", "local", "export", "readonly", "read", "printf", "test", "[",
    "let", "mapfile", "readarray", "wait", "getopts", NULL,
};
/* clang-format on */

static bool has_subscript_code(const shell_cmd_t *c)
{
    for (size_t i = 1; i < c->nwords; i++)
        if (!c->words[i].dynamic && shell_subscript_code(c->words[i].text)) return true;
    return false;
}

/* fish, csh, tcsh: -c code is in a language not parsed here. */
static void classify_foreign(parser_t *p, size_t idx)
{
    shell_cmd_t c = p->sh->cmds.v[idx];
    size_t i = 1;
    for (; i < c.nwords; i++) {
        const shell_word_t *w = &c.words[i];
        if (w->dynamic || (w->text[0] == '-' && strchr(w->text, 'c'))) {
            set_opaque(p, idx, SHELL_OPAQUE_FOREIGN);
            return;
        }
        if (w->text[0] != '-') break;
    }
    if (i >= c.nwords) set_opaque(p, idx, SHELL_OPAQUE_STDIN);
}

/* find ... -exec CMD ... ; (or {} +): each such CMD is a command too. A
 * dynamic argument could be "-exec" itself, so it makes find opaque when a
 * terminator is there to complete it (or when it may split into several). */
static void classify_find(parser_t *p, size_t idx)
{
    shell_cmd_t c = p->sh->cmds.v[idx];
    bool dyn = false, split = false, term = false;
    for (size_t i = 1; i < c.nwords; i++) {
        const shell_word_t *w = &c.words[i];
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
            const shell_word_t *e = &c.words[k];
            if (e->dynamic) continue;
            if (!strcmp(e->text, ";")) break;
            if (!strcmp(e->text, "+") && k > start && !c.words[k - 1].dynamic && !strcmp(c.words[k - 1].text, "{}"))
                break;
        }
        if (k >= c.nwords) break; /* find refuses an unterminated -exec */
        term = true;
        if (k > start) {
            shell_word_t *inner = c.words + start;
            if (strstr(inner[0].text, "{}")) { /* the command is a file found at run time */
                shell_word_t *copy = arena_alloc(&p->sh->out->arena, (k - start) * sizeof *copy);
                memcpy(copy, inner, (k - start) * sizeof *copy);
                copy[0].dynamic = true;
                inner = copy;
            }
            shell_emit(p, inner, k - start, c.offset, c.depth + 1, false);
        }
        i = k;
    }
    if (dyn && (split || term)) set_opaque(p, idx, SHELL_OPAQUE_FIND);
}

/* trap ACTION SIGNAL...: the action runs later, in this shell. */
static void classify_trap(parser_t *p, size_t idx)
{
    shell_cmd_t c = p->sh->cmds.v[idx];
    size_t i = 1;
    while (i < c.nwords && !c.words[i].dynamic && c.words[i].text[0] == '-' && c.words[i].text[1] &&
           strspn(c.words[i].text + 1, "lp-") == strlen(c.words[i].text + 1)) {
        bool dd = !strcmp(c.words[i].text, "--");
        i++;
        if (dd) break;
    }
    if (c.nwords - i < 2) return; /* listing, or resetting one signal */
    const shell_word_t *a = &c.words[i];
    if (a->dynamic) {
        set_opaque(p, idx, SHELL_OPAQUE_STRING);
        return;
    }
    if (!a->len || !strcmp(a->text, "-")) return;
    shell_parse_nested(p, a->text, a->len, c.offset, "trap action", c.depth);
}

/* Builtins with an option that runs a string as code. */
static bool runs_code_option(const shell_cmd_t *c, const char *name)
{
    /* clang-format off */
    static const struct { const char *name, *letters; } table[] = {
        {"mapfile", "C"}, {"readarray", "C"}, {"complete", "C"}, {"compgen", "C"}, {"bind", "x"}, {"enable", "f"},
    };
    /* clang-format on */
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        if (strcmp(name, table[t].name)) continue;
        for (size_t i = 1; i < c->nwords; i++) {
            const shell_word_t *w = &c->words[i];
            if (w->dynamic) return true;
            if (!strcmp(w->text, "--")) return false;
            if (w->text[0] == '-' && strpbrk(w->text + 1, table[t].letters)) return true;
        }
    }
    return false;
}

/* fc re-runs commands from the history, unless it only lists them (-l). */
static bool fc_runs(const shell_cmd_t *c)
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
    shell_cmd_t c = p->sh->cmds.v[idx];
    if (c.words[0].dynamic || c.words[0].glob) {
        set_opaque(p, idx, SHELL_OPAQUE_WORD);
        return;
    }
    const char *name = shell_base_name(c.words[0].text);
    if (!strcmp(name, "eval") || runs_code_option(&c, name) || (!strcmp(name, "fc") && fc_runs(&c))) {
        set_opaque(p, idx, SHELL_OPAQUE_EVAL);
    } else if (!strcmp(name, "source") || !strcmp(name, ".")) {
        set_opaque(p, idx, SHELL_OPAQUE_SOURCE);
    } else if (!strcmp(name, "alias")) {
        for (size_t i = 1; i < c.nwords; i++)
            if (c.words[i].dynamic || strchr(c.words[i].text, '=')) set_opaque(p, idx, SHELL_OPAQUE_ALIAS);
    } else if (shell_in_list(name, name_builtins) && has_subscript_code(&c)) {
        set_opaque(p, idx, SHELL_OPAQUE_SUBSCRIPT);
    } else if (!strcmp(name, "trap")) {
        classify_trap(p, idx);
    } else if (!strcmp(name, "su") || !strcmp(name, "runuser") || !strcmp(name, "script")) {
        classify_dash_c(p, idx, name);
    } else if (!strcmp(name, "find")) {
        classify_find(p, idx);
    } else if (shell_in_list(name, shells)) {
        classify_shell(p, idx, name);
    } else if (shell_in_list(name, foreign_shells)) {
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
void shell_emit(parser_t *p, shell_word_t *words, size_t n, size_t offset, unsigned depth, bool more_args)
{
    if (failed(p) || p->entry_mode) return;
    if (depth >= SHELL_MAX_DEPTH) {
        shell_perr(p, offset, "nested too deeply");
        return;
    }
    shell_cmd_t c = {words, n, offset, depth, SHELL_CHECKABLE, more_args};
    vec_push(&p->sh->cmds, c);
    classify(p, p->sh->cmds.n - 1);
}
