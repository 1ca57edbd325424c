/* cmdlist.c — command-list entries as word patterns, matched against the
 * simple commands shell.h finds, and the verdict for a whole command string
 * (SPEC §3.5).
 */
#include "cmdlist.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* ==== entries ======================================================================================================= */

/* Short options that mean the same as a long one, for the commands where a
 * denylist entry is most often written one way and run another. */
/* clang-format off */
static const struct { const char *cmd; char letter; const char *canon; } flag_aliases[] = {
    {"rm", 'r', "--recursive"}, {"rm", 'R', "--recursive"}, {"rm", 'f', "--force"},
    {"cp", 'r', "--recursive"}, {"cp", 'R', "--recursive"}, {"cp", 'f', "--force"},
    {"mv", 'f', "--force"},     {"git", 'f', "--force"},    {"chmod", 'R', "--recursive"},
    {"chown", 'R', "--recursive"}, {"chgrp", 'R', "--recursive"},
};
/* clang-format on */

static const char *flag_canon(const char *cmd, char letter)
{
    for (size_t i = 0; i < sizeof flag_aliases / sizeof flag_aliases[0]; i++)
        if (flag_aliases[i].letter == letter && !strcmp(flag_aliases[i].cmd, cmd)) return flag_aliases[i].canon;
    return NULL;
}

typedef struct pattern {
    const char *name;        /* the command name */
    VEC(const char *) flags; /* "-x" or "--long[=value]", canonical */
    VEC(const char *) ops;   /* the other words, in order */
} pattern_t;

static void pattern_free(pattern_t *pat)
{
    vec_free(&pat->flags);
    vec_free(&pat->ops);
}

/* Checks the command word of an entry; an error message or NULL. */
static char *entry_name_error(const shell_literal_t *w, const char *e)
{
    const char *v = w->text;
    buf_t b = BUF_INIT;
    if (w->assign)
        buf_printf(&b, "'%.*s' sets a variable; an entry starts with the command name", (int)(w->end - w->start), e + w->start);
    else if (!w->len)
        buf_adds(&b, "the command name is empty");
    else if (!w->quoted && shell_reserved(v))
        buf_printf(&b, "'%s' is a shell keyword, not a command", v);
    else if (strchr(v, '/'))
        buf_printf(&b, "'%s' names a directory; write the command name alone ('%s'), which matches it in any directory",
                   v, shell_base_name(v));
    else
        return NULL;
    return buf_detach(&b, NULL);
}

/* Parses an entry into pat (strings in a); NULL or an error (caller frees). */
static char *pattern_parse(const char *entry, arena_t *a, pattern_t *pat)
{
    memset(pat, 0, sizeof *pat);
    if (!entry) return xstrdup("the entry is missing");
    shell_literal_t *words;
    size_t n;
    char *err = shell_read_literals(entry, a, &words, &n);
    if (!err && !n) err = xstrdup("the entry is empty; write a command name such as 'rm' or 'rm -rf'");
    if (!err) err = entry_name_error(&words[0], entry);
    if (err) return err;
    const char *name = shell_base_name(words[0].text);
    pat->name = name;
    bool dd = false;
    for (size_t i = 1; i < n; i++) {
        const char *t = words[i].text;
        if (!dd && !strcmp(t, "--")) {
            dd = true;
            continue;
        }
        if (dd || t[0] != '-' || !t[1]) {
            vec_push(&pat->ops, t);
            continue;
        }
        if (t[1] == '-') {
            vec_push(&pat->flags, t);
            continue;
        }
        for (size_t k = 1; t[k]; k++) {
            const char *canon = flag_canon(name, t[k]);
            vec_push(&pat->flags, canon ? canon : arena_strndup(a, (char[]){'-', t[k]}, 2));
        }
    }
    return NULL;
}

bool cmdlist_entry_valid(const char *entry, char **err)
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
    uint64_t shorts[4];            /* short option bytes present */
    VEC(lflag_t) longs;            /* long options (and aliased short ones), sorted */
    VEC(const char *) sorted;      /* static operands, sorted */
    VEC(const shell_word_t *) ops; /* operands in order, static or dynamic */
    bool dyn_opt;                  /* a dynamic word where options are still read */
    bool dyn_any;                  /* any dynamic argument */
    bool dd;                       /* "--" ended the options */
} argview_t;

static int cmp_lflag(const void *a, const void *b) { return strcmp(((const lflag_t *)a)->s, ((const lflag_t *)b)->s); }
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void view_build(argview_t *v, const shell_cmd_t *c)
{
    memset(v, 0, sizeof *v);
    const char *name = shell_base_name(c->words[0].text);
    bool dd = false;
    for (size_t i = 1; i < c->nwords; i++) {
        const shell_word_t *w = &c->words[i];
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

static bool has_flag(const argview_t *v, const shell_cmd_t *c, const char *f)
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
static int pattern_match(const pattern_t *pat, const argview_t *v, const shell_cmd_t *c, bool allow)
{
    if (c->words[0].dynamic || c->words[0].glob) return allow ? 0 : -1;
    if (strcmp(shell_base_name(c->words[0].text), pat->name)) return 0;
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

int cmdlist_entry_match(const char *entry, const shell_cmd_t *c, bool in_allowlist)
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
    shell_parse_t parse;
    argview_t *views;   /* one per simple command */
    arena_t arena;
    cmdlist_verdict_t v;
} checker_t;

static char *entry_display(const char *e)
{
    buf_t b = BUF_INIT;
    shell_sanitize(&b, e, strlen(e));
    return shell_clip(buf_detach(&b, NULL), SHELL_CLIP);
}

__attribute__((format(printf, 5, 6))) static void decide(checker_t *k, cmdlist_kind_t list, long entry, const shell_cmd_t *c, const char *fmt, ...)
{
    va_list ap;
    buf_t b = BUF_INIT;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    k->v.allowed = false;
    k->v.list = list;
    k->v.entry = entry;
    k->v.command = c ? shell_cmd_display(c) : NULL;
    k->v.reason = buf_detach(&b, NULL);
}

/* Parses both lists; false (denied) when an entry is invalid: a list the
 * schema should have refused fails closed rather than matching nothing. */
static bool compile_lists(checker_t *k)
{
    k->dp = xcalloc(k->ndeny + 1, sizeof *k->dp);
    k->ap = xcalloc(k->nallow + 1, sizeof *k->ap);
    for (cmdlist_kind_t list = CMDLIST_DENY; list <= CMDLIST_ALLOW; list++) {
        const char *const *e = list == CMDLIST_DENY ? k->deny : k->allow;
        size_t n = list == CMDLIST_DENY ? k->ndeny : k->nallow;
        for (size_t i = 0; i < n; i++) {
            char *err = pattern_parse(e[i], &k->arena, (list == CMDLIST_DENY ? k->dp : k->ap) + i);
            if (!err) continue;
            char *d = e[i] ? entry_display(e[i]) : xstrdup("(null)");
            decide(k, list, (long)i, NULL, "%s entry %zu ('%s') is invalid: %s", list == CMDLIST_DENY ? "denylist" : "allowlist",
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
        const shell_cmd_t *c = &k->parse.cmds[i];
        for (size_t j = 0; j < k->ndeny; j++) {
            if (pattern_match(&k->dp[j], &k->views[i], c, false) != 1) continue;
            char *d = shell_cmd_display_clipped(c), *e = entry_display(k->deny[j]);
            decide(k, CMDLIST_DENY, (long)j, c, "'%s' matches denylist entry '%s'", d, e);
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
    const shell_cmd_t *c = &k->parse.cmds[i];
    if (c->opaque) {
        char *why = shell_opaque_why(c);
        decide(k, CMDLIST_DENY, -1, c, "%s; it cannot be checked against the denylist", why);
        free(why);
        return true;
    }
    for (size_t j = 0; j < k->ndeny; j++) {
        if (pattern_match(&k->dp[j], &k->views[i], c, false) != -1) continue;
        char *d = shell_cmd_display_clipped(c), *e = entry_display(k->deny[j]);
        decide(k, CMDLIST_DENY, (long)j, c, "'%s' may match denylist entry '%s': some of its arguments are only known when it runs",
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
    const shell_cmd_t *c = &k->parse.cmds[i];
    if (c->opaque) {
        char *why = shell_opaque_why(c);
        decide(k, CMDLIST_ALLOW, -1, c, "%s; with an allowlist every command must be known", why);
        free(why);
        return -1;
    }
    for (size_t j = 0; j < k->nallow; j++)
        if (pattern_match(&k->ap[j], &k->views[i], c, true) == 1) return (long)j;
    char *d = shell_cmd_display_clipped(c);
    decide(k, CMDLIST_ALLOW, -1, c, "'%s' matches no allowlist entry", d);
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
        const shell_cmd_t *c = &k->parse.cmds[0];
        char *d = shell_cmd_display_clipped(c), *e = entry_display(k->allow[last_entry]);
        k->v.list = CMDLIST_ALLOW;
        k->v.entry = last_entry;
        k->v.command = shell_cmd_display(c);
        k->v.reason = xasprintf("'%s' matches allowlist entry '%s'", d, e);
        free(d);
        free(e);
    } else {
        k->v.list = CMDLIST_ALLOW;
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

cmdlist_verdict_t cmdlist_check(const char *cmd, size_t len, const char *const *deny, size_t ndeny,
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
        if (!shell_parse(cmd, len, &k.parse)) decide(&k, CMDLIST_NONE, -1, NULL, "%s", k.parse.error);
        else check_commands(&k);
    }
    for (size_t i = 0; k.views && i < k.parse.ncmds; i++) view_free(&k.views[i]);
    free(k.views);
    for (size_t i = 0; i < k.ndeny; i++) pattern_free(&k.dp[i]);
    for (size_t i = 0; i < k.nallow; i++) pattern_free(&k.ap[i]);
    free(k.dp);
    free(k.ap);
    shell_parse_free(&k.parse);
    arena_free(&k.arena);
    return k.v;
}

void cmdlist_verdict_free(cmdlist_verdict_t *v)
{
    if (!v) return;
    free(v->command);
    free(v->reason);
    v->command = v->reason = NULL;
}
