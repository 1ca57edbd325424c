/* sbpl_eval.c — an independent evaluator of the SBPL profiles drun-policy writes.
 *
 * macOS sandbox-exec cannot run on the Linux CI hosts, so this program is how
 * policy.sb is held to the lattice: it reads the *text* of a profile (not the
 * compiler's structured rules, and none of the compiler's code), and decides
 * file operations on a path with SBPL's rule: the last matching rule for an
 * operation wins, (deny default) first. tests/suites/51-sbpl-eval compares its
 * answers with the hand-written probes and with lattice_level_of().
 *
 *   sbpl-eval POLICY.SB -D NAME=VALUE... [--map FROM=TO]... < paths
 *
 * For each absolute path on stdin (one per line) it prints
 *   LEVEL <TAB> rd=+L wd=+L wc=+L un=-L md=+L <TAB> PATH
 * A line "OPERATION [NAME]" (not starting with '/') asks about one other
 * operation instead — sysctl-read hw.ncpu, mach-lookup com.apple.logd,
 * ipc-posix-sem, system-socket AF_UNIX, network-outbound unix:/path — and
 * prints allow|deny <TAB> OPERATION=+L <TAB> the line; NAME is matched by
 * the name filters (sysctl-name, global-name, ...), a path by path filters.
 * LEVEL is none, read (file-read-data allowed) or write (read, and
 * file-write-data and file-write-create allowed). Each detail is one
 * operation — rd file-read-data, wd file-write-data, wc file-write-create,
 * un file-write-unlink, md file-read-metadata — as + (allowed) or - (denied)
 * and the profile line of the deciding rule. --map rewrites a path prefix
 * first, as the macOS kernel does before the sandbox sees a path (firmlinks
 * /tmp -> /private/tmp, symlinks); the longest match applies, repeatedly.
 *
 * The subset understood is what the compiler emits, parsed strictly so that a
 * change in the generated profile is noticed rather than misread:
 *   (version 1)  (allow|deny OP... FILTER...)  ; comments
 *   (if (drun-in-session? S) RULE)  (if (drun-under? S S) RULE)
 *   OP: a symbol; "default"; a trailing '*' matches every operation it prefixes
 *   FILTER: (subpath S) (literal S) (prefix S) (regex S) (path-ancestors S)
 *           (require-any F...) (require-all F...) (require-not F)
 *           and non-file filters (target, sysctl-name, global-name, ...), which
 *           never match a path
 *   S: "string" (escapes \\ \" \n \t), #"regex string" (raw: a backslash is kept,
 *      \" does not end it), (param "NAME"), (string-append S...)
 * Several filters in one rule match when any matches. Exit: 0, 2 on a parse
 * error (with the line) or bad usage.
 */
#define _GNU_SOURCE
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------------- */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sbpl-eval: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void *xalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static char *xstrndup_(const char *s, size_t n)
{
    char *p = xalloc(n + 1);
    memcpy(p, s, n);
    return p;
}

/* ---- s-expressions --------------------------------------------------------------------- */

typedef enum {
    N_LIST,
    N_SYM,
    N_STR,
    N_RAWSTR
} nkind_t;

typedef struct node {
    nkind_t kind;
    char *s;            /* symbol or decoded string */
    struct node **kids; /* list elements */
    size_t n, cap;
    unsigned line;      /* line of the token (a list: its '(') */
} node_t;

typedef struct lexer {
    const char *p, *end;
    unsigned line;
} lexer_t;

static void skip_space(lexer_t *l)
{
    while (l->p < l->end) {
        char c = *l->p;
        if (c == '\n') l->line++, l->p++;
        else if (c == ' ' || c == '\t' || c == '\r') l->p++;
        else if (c == ';') {
            while (l->p < l->end && *l->p != '\n') l->p++;
        } else break;
    }
}

static void push(node_t *list, node_t *kid)
{
    if (list->n == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 4;
        list->kids = realloc(list->kids, list->cap * sizeof *list->kids);
        if (!list->kids) die("out of memory");
    }
    list->kids[list->n++] = kid;
}

/* out with room for two more bytes after len. */
static char *room(char *out, size_t len, size_t *cap)
{
    if (len + 2 < *cap) return out;
    *cap *= 2;
    out = realloc(out, *cap);
    if (!out) die("out of memory");
    return out;
}

/* A string after its opening quote. raw: #"..." (backslashes kept). */
static node_t *read_string(lexer_t *l, bool raw)
{
    node_t *n = xalloc(sizeof *n);
    n->kind = raw ? N_RAWSTR : N_STR;
    n->line = l->line;
    size_t cap = 64, len = 0;
    char *out = xalloc(cap);
    for (;;) {
        if (l->p >= l->end) die("line %u: unterminated string", n->line);
        char c = *l->p++;
        if (c == '"') break;
        if ((unsigned char)c < 0x20 && c != '\t') die("line %u: control character in a string", l->line);
        if (c == '\\') {
            if (l->p >= l->end) die("line %u: unterminated string", n->line);
            char e = *l->p++;
            if (raw) {
                /* a raw regex string keeps the backslash; \" does not end it */
                out = room(out, len, &cap);
                out[len++] = '\\';
                c = e;
            } else if (e == '\\' || e == '"') c = e;
            else if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else die("line %u: unknown string escape \\%c", l->line, e);
        }
        out = room(out, len, &cap);
        out[len++] = c;
    }
    out[len] = '\0';
    n->s = out;
    return n;
}

static node_t *read_node(lexer_t *l)
{
    skip_space(l);
    if (l->p >= l->end) return NULL;
    char c = *l->p;
    if (c == ')') die("line %u: unexpected ')'", l->line);
    if (c == '(') {
        node_t *n = xalloc(sizeof *n);
        n->kind = N_LIST;
        n->line = l->line;
        l->p++;
        for (;;) {
            skip_space(l);
            if (l->p >= l->end) die("line %u: unclosed '('", n->line);
            if (*l->p == ')') {
                l->p++;
                return n;
            }
            push(n, read_node(l));
        }
    }
    if (c == '"') {
        l->p++;
        return read_string(l, false);
    }
    if (c == '#' && l->p + 1 < l->end && l->p[1] == '"') {
        l->p += 2;
        return read_string(l, true);
    }
    const char *st = l->p;
    while (l->p < l->end && !strchr(" \t\r\n();\"", *l->p)) l->p++;
    node_t *n = xalloc(sizeof *n);
    n->kind = N_SYM;
    n->line = l->line;
    n->s = xstrndup_(st, (size_t)(l->p - st));
    return n;
}

static void free_node(node_t *n)
{
    for (size_t i = 0; i < n->n; i++) free_node(n->kids[i]);
    free(n->kids);
    free(n->s);
    free(n);
}

static bool is_sym(const node_t *n, const char *s) { return n && n->kind == N_SYM && strcmp(n->s, s) == 0; }

/* ---- parameters and path mapping --------------------------------------------------------------- */

#define MAX_DEFS 64
static const char *def_name[MAX_DEFS], *def_value[MAX_DEFS];
static size_t ndefs;
static const char *map_from[MAX_DEFS], *map_to[MAX_DEFS];
static size_t nmaps;

static const char *param(const char *name, unsigned line)
{
    for (size_t i = 0; i < ndefs; i++)
        if (strcmp(def_name[i], name) == 0) return def_value[i];
    die("line %u: (param \"%s\") has no value: pass -D %s=...", line, name, name);
    return NULL;
}

/* b == a or b is below a, component-wise ("/" is above everything). */
static bool under(const char *b, const char *a)
{
    size_t n = strlen(a);
    if (n == 1 && a[0] == '/') return b[0] == '/';
    while (n > 1 && a[n - 1] == '/') n--;
    return strncmp(b, a, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static char *map_path(const char *path)
{
    char *p = xstrndup_(path, strlen(path));
    for (int hops = 0; hops < 16; hops++) {
        size_t best = nmaps, blen = 0;
        for (size_t i = 0; i < nmaps; i++)
            if (under(p, map_from[i]) && strlen(map_from[i]) > blen) best = i, blen = strlen(map_from[i]);
        if (best == nmaps) break;
        size_t tl = strlen(map_to[best]);
        char *q = xalloc(tl + strlen(p + blen) + 1);
        memcpy(q, map_to[best], tl);
        strcpy(q + tl, p + blen);
        free(p);
        p = q;
    }
    return p;
}

/* ---- rules ------------------------------------------------------------------------------------- */

typedef struct rule {
    bool allow;
    node_t *form; /* the whole (allow ...) form */
    size_t first_filter;
    unsigned line;
} rule_t;

static rule_t *rules;
static size_t nrules;

/* The value of a string expression (malloc'd). */
static char *eval_str(const node_t *e)
{
    if (e->kind == N_STR || e->kind == N_RAWSTR) return xstrndup_(e->s, strlen(e->s));
    if (e->kind != N_LIST || e->n == 0) die("line %u: expected a string", e->line);
    if (is_sym(e->kids[0], "param")) {
        if (e->n != 2 || e->kids[1]->kind != N_STR) die("line %u: (param \"NAME\")", e->line);
        const char *v = param(e->kids[1]->s, e->line);
        return xstrndup_(v, strlen(v));
    }
    if (is_sym(e->kids[0], "string-append")) {
        char *acc = xstrndup_("", 0);
        for (size_t i = 1; i < e->n; i++) {
            char *part = eval_str(e->kids[i]);
            char *both = xalloc(strlen(acc) + strlen(part) + 1);
            strcpy(both, acc);
            strcat(both, part);
            free(acc);
            free(part);
            acc = both;
        }
        return acc;
    }
    die("line %u: unsupported string expression (%s ...)", e->line, e->kids[0]->kind == N_SYM ? e->kids[0]->s : "?");
    return NULL;
}

/* Filters that never match a file path. "extension" is a sandbox extension
 * a process is handed at run time (openpty's com.apple.sandbox.pty): none is
 * held here, so a rule that requires one never applies — the narrow answer. */
static const char *const nonfile_filters[] = {"target", "sysctl-name", "sysctl-name-prefix", "global-name",
                                              "local-name", "ipc-posix-name", "ipc-posix-name-prefix",
                                              "local", "remote", "xattr", "iokit-user-client-class",
                                              "mach-extension", "signing-identifier", "extension",
                                              "socket-domain", NULL};

/* The compiled form of each (regex ...) filter, by node and pattern: glibc's
 * regcomp builds its tables on every call, and compiling each regex again
 * for every path and operation was nearly all of this program's time. */
typedef struct {
    const node_t *node;
    char *arg;
    regex_t *re;
} recache_t;
static recache_t *recache;
static size_t nrecache;

static const regex_t *regex_of(const node_t *f, const char *arg)
{
    for (size_t i = 0; i < nrecache; i++)
        if (recache[i].node == f && strcmp(recache[i].arg, arg) == 0) return recache[i].re;
    regex_t *re = malloc(sizeof *re);
    recache = realloc(recache, (nrecache + 1) * sizeof *recache);
    if (!re || !recache) die("out of memory");
    int rc = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[256];
        regerror(rc, re, msg, sizeof msg);
        die("line %u: bad regex \"%s\": %s", f->line, arg, msg);
    }
    recache[nrecache++] = (recache_t){f, xstrndup_(arg, strlen(arg)), re};
    return re;
}

static void recache_free(void)
{
    for (size_t i = 0; i < nrecache; i++) {
        regfree(recache[i].re);
        free(recache[i].re);
        free(recache[i].arg);
    }
    free(recache);
}

static bool filter_matches(const node_t *f, const char *path)
{
    if (f->kind != N_LIST || f->n == 0 || f->kids[0]->kind != N_SYM) die("line %u: expected a filter", f->line);
    const char *h = f->kids[0]->s;
    if (strcmp(h, "require-any") == 0 || strcmp(h, "require-all") == 0) {
        bool any = h[8] == 'a' && h[9] == 'n';
        for (size_t i = 1; i < f->n; i++) {
            bool m = filter_matches(f->kids[i], path);
            if (any && m) return true;
            if (!any && !m) return false;
        }
        return !any;
    }
    if (strcmp(h, "require-not") == 0) {
        if (f->n != 2) die("line %u: (require-not FILTER)", f->line);
        return !filter_matches(f->kids[1], path);
    }
    for (const char *const *nf = nonfile_filters; *nf; nf++)
        if (strcmp(h, *nf) == 0) return false;
    if (f->n != 2) die("line %u: (%s ...) takes one argument", f->line, h);
    char *arg = eval_str(f->kids[1]);
    bool m;
    if (strcmp(h, "literal") == 0) {
        m = strcmp(path, arg) == 0;
    } else if (strcmp(h, "subpath") == 0) {
        m = under(path, arg);
    } else if (strcmp(h, "path-ancestors") == 0) {
        /* the directories above arg, and arg itself (read narrowly it is
         * only the ones above; this evaluator grants what the wider reading
         * grants, and the acceptance run on a Mac settles which) */
        m = under(arg, path);
    } else if (strcmp(h, "prefix") == 0) {
        m = strncmp(path, arg, strlen(arg)) == 0;
    } else if (strcmp(h, "regex") == 0) {
        m = regexec(regex_of(f, arg), path, 0, NULL, 0) == 0;
    } else {
        die("line %u: unsupported filter (%s ...)", f->line, h);
        m = false;
    }
    free(arg);
    return m;
}

/* Does rule operation name `rop` cover the operation `op`? Besides '*',
 * ipc-posix-sem and ipc-posix-shm name their whole families (the older
 * spelling codex and the sandbox runtime use: ipc-posix-shm covers
 * ipc-posix-shm-read-data, ipc-posix-shm-write-create, ...). */
static bool op_covers(const char *rop, const char *op)
{
    if (strcmp(rop, "default") == 0) return true;
    size_t n = strlen(rop);
    if (n && rop[n - 1] == '*') return strncmp(op, rop, n - 1) == 0;
    if ((strcmp(rop, "ipc-posix-sem") == 0 || strcmp(rop, "ipc-posix-shm") == 0) && strncmp(op, rop, n) == 0 &&
        op[n] == '-')
        return true;
    return strcmp(rop, op) == 0;
}

/* The argument of a name filter: a string, or a symbol (AF_UNIX). */
static char *name_arg(const node_t *f)
{
    if (f->n != 2) die("line %u: (%s ...) takes one argument", f->line, f->kids[0]->s);
    if (f->kids[1]->kind == N_SYM) return xstrndup_(f->kids[1]->s, strlen(f->kids[1]->s));
    return eval_str(f->kids[1]);
}

/* A filter against the object of a non-file operation: a sysctl name, a
 * mach service, a POSIX IPC name, a socket domain, or "unix:PATH" for a
 * unix socket's address. Path filters match a name that is a path. */
static bool name_filter_matches(const node_t *f, const char *name)
{
    if (f->kind != N_LIST || f->n == 0 || f->kids[0]->kind != N_SYM) die("line %u: expected a filter", f->line);
    const char *h = f->kids[0]->s;
    if (strcmp(h, "require-any") == 0 || strcmp(h, "require-all") == 0) {
        bool any = h[8] == 'a' && h[9] == 'n';
        for (size_t i = 1; i < f->n; i++) {
            bool m = name_filter_matches(f->kids[i], name);
            if (any && m) return true;
            if (!any && !m) return false;
        }
        return !any;
    }
    if (strcmp(h, "require-not") == 0) return f->n == 2 && !name_filter_matches(f->kids[1], name);
    /* name filters: exact, or (the -prefix ones) a prefix of the name */
    static const struct {
        const char *filter;
        bool prefix;
        /* clang-format off */
    } names[] = {{"sysctl-name", false},        {"global-name", false},   {"ipc-posix-name", false},
                 {"local-name", false},         {"socket-domain", false}, {"sysctl-name-prefix", true},
                 {"ipc-posix-name-prefix", true}};
    /* clang-format on */
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        if (strcmp(h, names[k].filter) != 0) continue;
        char *a = name_arg(f);
        bool m = names[k].prefix ? strncmp(a, name, strlen(a)) == 0 : strcmp(a, name) == 0;
        free(a);
        return m;
    }
    if (strcmp(h, "local") == 0 || strcmp(h, "remote") == 0) {
        /* (local unix-socket (path-regex S)) / (path-literal S) */
        if (f->n != 3 || !is_sym(f->kids[1], "unix-socket") || strncmp(name, "unix:", 5) != 0) return false;
        const node_t *pf = f->kids[2];
        if (pf->kind != N_LIST || pf->n != 2) die("line %u: (%s unix-socket (path-... S))", f->line, h);
        char *a = eval_str(pf->kids[1]);
        bool m;
        if (is_sym(pf->kids[0], "path-literal")) m = strcmp(a, name + 5) == 0;
        else if (is_sym(pf->kids[0], "path-regex")) {
            regex_t re;
            if (regcomp(&re, a, REG_EXTENDED | REG_NOSUB) != 0) die("line %u: bad regex \"%s\"", f->line, a);
            m = regexec(&re, name + 5, 0, NULL, 0) == 0;
            regfree(&re);
        } else die("line %u: unsupported socket address filter", f->line), m = false;
        free(a);
        return m;
    }
    return name[0] == '/' && filter_matches(f, name);
}

static bool rule_matches(const rule_t *r, const char *op, const char *path, bool by_name)
{
    bool covers = false;
    for (size_t i = 1; i < r->first_filter && !covers; i++) covers = op_covers(r->form->kids[i]->s, op);
    if (!covers) return false;
    if (r->first_filter == r->form->n) return true; /* no filter: every path */
    for (size_t i = r->first_filter; i < r->form->n; i++)
        if (by_name ? name_filter_matches(r->form->kids[i], path) : filter_matches(r->form->kids[i], path)) return true;
    return false;
}

/* The deciding rule for op on path (NULL: none matched). */
static const rule_t *decide(const char *op, const char *path, bool by_name)
{
    const rule_t *d = NULL;
    for (size_t i = 0; i < nrules; i++)
        if (rule_matches(&rules[i], op, path, by_name)) d = &rules[i];
    return d;
}

static void load(const char *file)
{
    FILE *fp = fopen(file, "rb");
    if (!fp) die("%s: cannot open", file);
    size_t cap = 1 << 16, len = 0;
    char *text = xalloc(cap);
    size_t got;
    while ((got = fread(text + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap) {
            text = realloc(text, cap *= 2);
            if (!text) die("out of memory");
        }
    }
    fclose(fp);
    if (memchr(text, '\0', len)) die("%s: a NUL byte", file);
    lexer_t l = {text, text + len, 1};
    bool version = false, deny_default = false;
    node_t *n;
    while ((n = read_node(&l))) {
        if (n->kind != N_LIST || n->n == 0 || n->kids[0]->kind != N_SYM)
            die("line %u: expected a form at top level", n->line);
        const char *h = n->kids[0]->s;
        if (strcmp(h, "version") == 0) {
            if (version || nrules || n->n != 2 || !is_sym(n->kids[1], "1")) die("line %u: expected (version 1) first", n->line);
            version = true;
            free_node(n);
            continue;
        }
        if (strcmp(h, "define") == 0) {
            /* Only the compiler's two helpers are known: (drun-under? path
             * root), "path is root or below it", and (drun-in-session? path),
             * "path is under WORKSPACE or SCRATCH". Their meaning is
             * implemented here, not read from the bodies. */
            if (n->n < 3 || n->kids[1]->kind != N_LIST || n->kids[1]->n < 2 ||
                !(is_sym(n->kids[1]->kids[0], "drun-under?") || is_sym(n->kids[1]->kids[0], "drun-in-session?")))
                die("line %u: unsupported definition", n->line);
            free_node(n);
            continue;
        }
        if (strcmp(h, "if") == 0) {
            /* (if (drun-in-session? PATH) RULE): the parameters are known when
             * the profile is loaded, so the condition is decided now. */
            /* (if (drun-under? PATH ROOT) RULE): PATH is ROOT or below it
             * (a session root inside a runtime-owned dir). */
            const node_t *c = n->kids[1];
            bool in_session = c->kind == N_LIST && c->n == 2 && is_sym(c->kids[0], "drun-in-session?");
            bool is_under = c->kind == N_LIST && c->n == 3 && is_sym(c->kids[0], "drun-under?");
            if (n->n != 3 || !(in_session || is_under) || n->kids[2]->kind != N_LIST)
                die("line %u: unsupported (if ...): only (if (drun-in-session? PATH) RULE) and "
                    "(if (drun-under? PATH ROOT) RULE)",
                    n->line);
            char *path = eval_str(c->kids[1]);
            bool holds;
            if (in_session) {
                holds = under(path, param("WORKSPACE", n->line)) || under(path, param("SCRATCH", n->line));
            } else {
                char *root = eval_str(c->kids[2]);
                holds = under(path, root);
                free(root);
            }
            free(path);
            node_t *rule = n->kids[2];
            n->kids[2] = NULL;
            n->n = 2;
            free_node(n);
            if (!holds) {
                free_node(rule);
                continue;
            }
            n = rule;
            if (n->n == 0 || n->kids[0]->kind != N_SYM) die("line %u: expected a rule", n->line);
            h = n->kids[0]->s;
        }
        if (strcmp(h, "allow") != 0 && strcmp(h, "deny") != 0) die("line %u: unsupported form (%s ...)", n->line, h);
        if (!version) die("line %u: (version 1) must come first", n->line);
        rule_t r = {strcmp(h, "allow") == 0, n, 1, n->line};
        while (r.first_filter < n->n && n->kids[r.first_filter]->kind == N_SYM) r.first_filter++;
        if (r.first_filter == 1) die("line %u: a rule without an operation", n->line);
        for (size_t i = r.first_filter; i < n->n; i++)
            if (n->kids[i]->kind != N_LIST) die("line %u: an operation after a filter", n->kids[i]->line);
        if (!r.allow && r.first_filter == 2 && n->n == 2 && is_sym(n->kids[1], "default")) {
            if (nrules) die("line %u: (deny default) must be the first rule", n->line);
            deny_default = true;
        }
        rules = realloc(rules, (nrules + 1) * sizeof *rules);
        if (!rules) die("out of memory");
        rules[nrules++] = r;
    }
    if (!version) die("%s: no (version 1)", file);
    if (!deny_default) die("%s: no (deny default): this evaluator only reads deny-by-default profiles", file);
    /* every filter is evaluated once against "/" so that a bad one is found
     * now, not on the first path that happens to reach it */
    for (size_t i = 0; i < nrules; i++)
        for (size_t k = rules[i].first_filter; k < rules[i].form->n; k++) (void)filter_matches(rules[i].form->kids[k], "/");
    free(text);
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-D") == 0 || strcmp(a, "--map") == 0) && i + 1 < argc) {
            const char *v = argv[++i], *eq = strchr(v, '=');
            if (!eq || eq == v) die("%s wants NAME=VALUE", a);
            if ((a[1] == 'D' ? ndefs : nmaps) == MAX_DEFS) die("too many %s", a);
            if (a[1] == 'D') def_name[ndefs] = xstrndup_(v, (size_t)(eq - v)), def_value[ndefs++] = eq + 1;
            else map_from[nmaps] = xstrndup_(v, (size_t)(eq - v)), map_to[nmaps++] = eq + 1;
        } else if (a[0] != '-' && !file) {
            file = a;
        } else {
            die("usage: sbpl-eval POLICY.SB -D NAME=VALUE... [--map FROM=TO]... < paths");
        }
    }
    if (!file) die("usage: sbpl-eval POLICY.SB -D NAME=VALUE... [--map FROM=TO]... < paths");
    load(file);

    static const char *const ops[] = {"file-read-data", "file-write-data", "file-write-create", "file-write-unlink",
                                      "file-read-metadata"};
    static const char *const tag[] = {"rd", "wd", "wc", "un", "md"};
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!*line) continue;
        if (line[0] != '/') { /* "OPERATION [NAME]": one non-file operation */
            char *sp = strchr(line, ' ');
            if (sp) *sp = '\0';
            const char *nm = sp ? sp + 1 : "";
            if (!*line || strchr(line, '*')) die("not a path nor an operation: %s", line);
            const rule_t *r = decide(line, nm, true);
            printf("%s\t%s=%c%u\t%s%s%s\n", r && r->allow ? "allow" : "deny", line, r && r->allow ? '+' : '-',
                   r ? r->line : 0, line, sp ? " " : "", nm);
            continue;
        }
        char *path = map_path(line);
        bool ok[5];
        char detail[256] = "";
        for (int k = 0; k < 5; k++) {
            const rule_t *r = decide(ops[k], path, false);
            ok[k] = r && r->allow;
            char one[32];
            snprintf(one, sizeof one, "%s%s=%c%u", k ? " " : "", tag[k], ok[k] ? '+' : '-', r ? r->line : 0);
            strcat(detail, one);
        }
        const char *level = !ok[0] ? "none" : (ok[1] && ok[2] ? "write" : "read");
        printf("%s\t%s\t%s\n", level, detail, line);
        free(path);
    }
    for (size_t i = 0; i < nrules; i++) free_node(rules[i].form);
    free(rules);
    recache_free();
    for (size_t i = 0; i < ndefs; i++) free((char *)def_name[i]);
    for (size_t i = 0; i < nmaps; i++) free((char *)map_from[i]);
    return 0;
}
