/* lint.c — the lint rules of SPEC §8 and more, suppression comments, and
 * the text / JSON / SARIF renderers.
 *
 * Three layers, each run when it can be: config errors from policy_build;
 * rules that read the TOML tree (they still run when the policy is rejected);
 * rules that read the meaning — the resolved lattice of both targets and the
 * compiled artifacts — when the policy builds. Every message says what to do.
 * Paths in messages are written in policy syntax (~/.ssh), so one finding
 * found on both targets is reported once.
 */
#include "lint.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bwrap.h"
#include "compile.h"
#include "diagids.h"
#include "domain.h"
#include "explain.h"
#include "jsonw.h"
#include "keys.h"
#include "lattice.h"
#include "paths.h"
#include "sbpl.h"
#include "suggest.h"

/* Above these the compiled artifacts are "too large" (profile-too-large):
 * every file operation is matched against the SBPL rules, and every bwrap
 * op is a mount the kernel sets up for each command. Hand-written policies
 * stay far below (the profiles/ ones: under 100 rules). */
#define LINT_MAX_SBPL_RULES 500
#define LINT_MAX_SBPL_BYTES (128 * 1024)
#define LINT_MAX_BWRAP_OPS 500

/* Synthetic session roots for the lattice questions lint asks: outside
 * every home, so that a rule on ~ never covers them by accident. */
#define LINT_WORKSPACE "/drun-lint/workspace"
#define LINT_SCRATCH "/drun-lint/scratch"

typedef struct lint {
    source_t *src;        /* the config text (lint's copy) */
    toml_doc *doc;        /* its tree; NULL on a syntax error */
    policy_t *pol;        /* NULL when policy_build failed */
    facts_t *facts[2];    /* indexed by target_t */
    bool own_facts[2];    /* loaded here (else borrowed from the options) */
    resolved_t *res[2];
    roots_t roots;
    diag_list_t raw;      /* every finding, unsorted */
    strmap_t seen;        /* "id\x01offset\x01message" of findings already added */
    arena_t a;
    struct lindex *ix[2]; /* res[t]'s rules by path, while the lattice rules run */
} lint_t;

/* ---- adding findings ------------------------------------------------------------------------------ */

static void finding(lint_t *l, const char *id, span_t span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Adds one finding at span of the config (severity from the table). The
 * same finding found on both targets is added once. */
static void finding(lint_t *l, const char *id, span_t span, const char *fmt, ...)
{
    const diag_info_t *info = diag_info(id);
    buf_t m = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&m, fmt, ap);
    va_end(ap);
    buf_t key = BUF_INIT;
    buf_printf(&key, "%s\x01%u\x01%s", id, span.start, buf_cstr(&m));
    bool dup = strmap_put(&l->seen, arena_strdup(&l->a, buf_cstr(&key)), 1) >= 0;
    buf_free(&key);
    if (!dup) diag_add(&l->raw, info ? info->sev : SEV_WARNING, info ? info->id : id, l->src, span, "%s", buf_cstr(&m));
    buf_free(&m);
}

/* ---- small helpers ----------------------------------------------------------------------------------- */

static const toml_value *tget(const toml_value *tab, const char *key) { return tab ? toml_get(tab, key) : NULL; }

static size_t tlen(const toml_value *v) { return v ? toml_len(v) : 0; }

static span_t key_span(const toml_value *tab, const char *key)
{
    long i = tab ? toml_index(tab, key) : -1;
    return i >= 0 ? toml_key_span_at(tab, (size_t)i) : (span_t){0, 0};
}

static bool is_true(const toml_value *v) { return v && toml_type_of(v) == TOML_BOOL && toml_bool(v); }
static bool is_false(const toml_value *v) { return v && toml_type_of(v) == TOML_BOOL && !toml_bool(v); }

/* A string element without NULs, or NULL. */
static const char *tstr(const toml_value *v)
{
    if (!v || toml_type_of(v) != TOML_STRING) return NULL;
    size_t len;
    const char *s = toml_str(v, &len);
    return memchr(s, '\0', len) ? NULL : s;
}

static unsigned line_of(lint_t *l, span_t s) { return source_pos(l->src, s.start).line; }

/* "filesystem.allow_read '~' (line 8)" for a config rule, what it is for
 * a built-in one ("the system read set ('/usr')"). Caller frees. */
static char *rule_desc(lint_t *l, const rule_t *r)
{
    if (r->src) return xasprintf("%s '%s' (line %u)", policy_rule_kind_key(r->kind), r->written, line_of(l, r->span));
    switch (r->kind) {
    case RK_WORKSPACE: return xstrdup("the session workspace");
    case RK_SCRATCH: return xstrdup("the session scratch dir");
    case RK_PATH_DIR: return xasprintf("the $PATH directory '%s'", r->written);
    case RK_SYSTEM: return xasprintf("the system read set ('%s')", r->written);
    default: return xasprintf("%s '%s'", r->origin ? r->origin : policy_rule_kind_key(r->kind), r->written);
    }
}

/* The parent directory of an absolute path (into a), or NULL for "/". */
static const char *parent_of(const char *abs, arena_t *a)
{
    if (strcmp(abs, "/") == 0) return NULL;
    const char *s = strrchr(abs, '/');
    return s == abs ? "/" : arena_strndup(a, abs, (size_t)(s - abs));
}

static const char *show(lint_t *l, target_t t, const char *abs)
{
    return explain_show_path(l->res[t], &l->roots, abs, &l->a);
}

/* ---- tree rules: they need only the parsed file ------------------------------------------------------ */

static const char *key_doc(const key_info_t *k)
{
    if (k->kind == KEY_SETTING) return policy_settings[k->arg].doc;
    return k->doc ? k->doc : "";
}

/* unenforced-key: accepted drun keys that drun-mcp does not enforce. */
static void rule_unenforced_keys(lint_t *l, const char *table, const toml_value *tab)
{
    for (size_t i = 0; i < toml_len(tab); i++) {
        size_t klen;
        const char *key = toml_key_at(tab, i, &klen);
        if (memchr(key, '\0', klen)) continue;
        const key_info_t *k = keys_find(table, key);
        if (!k) continue; /* unknown-key: a config error */
        const toml_value *v = toml_value_at(tab, i);
        if (k->kind == KEY_TABLE && toml_type_of(v) == TOML_TABLE) rule_unenforced_keys(l, k->key, v);
        if (k->enforced) continue;
        char q[96];
        finding(l, "unenforced-key", toml_key_span_at(tab, i),
                "'%s' is accepted for drun compatibility but drun-mcp does not enforce it: %s; remove it, "
                "or keep it knowing it changes nothing",
                keys_qualified(k, q, sizeof q), key_doc(k));
    }
}

static bool is_wildcard_domain(const char *s) { return s[0] == '*'; }

/* wildcard-domain, default-domain-allowlist, empty-mount-allowlist-is-none,
 * private-addresses-with-wildcard. */
static void rule_network_tree(lint_t *l, const toml_value *root)
{
    const toml_value *doms = tget(root, "domain_allowlist");
    const toml_value *wild = NULL;
    if (!doms) {
        finding(l, "default-domain-allowlist", (span_t){0, 0},
                "no domain_allowlist: session_fetch may reach drun's defaults pypi.org, files.pythonhosted.org "
                "and cdn.jsdelivr.net; write domain_allowlist = [] for no fetch at all, or list the hosts");
    } else if (toml_type_of(doms) == TOML_ARRAY) {
        for (size_t i = 0; i < toml_len(doms); i++) {
            const char *s = tstr(toml_at(doms, i));
            if (!s) continue;
            char *why = NULL;
            domain_lint_t c = domain_text_lint(s, &why);
            /* a URL form is a bad-domain error already: one finding is enough */
            if (c == DOMAIN_WARN_ALL || c == DOMAIN_WARN_SUFFIX)
                finding(l, "wildcard-domain", toml_span(toml_at(doms, i)), "%s", why);
            free(why);
            if (!wild && is_wildcard_domain(s) && c != DOMAIN_WARN_URL) wild = toml_at(doms, i);
        }
    }
    const toml_value *priv = tget(tget(root, "network"), "allow_private_addresses");
    if (is_true(priv) && wild)
        finding(l, "private-addresses-with-wildcard", toml_span(priv),
                "allow_private_addresses = true with the wildcard '%s' (line %u) lets session_fetch reach any "
                "internal service whose name resolves to a private or metadata address (any DNS name can); "
                "list exact hosts, or set allow_private_addresses = false",
                tstr(wild), line_of(l, toml_span(wild)));
    const toml_value *mounts = tget(root, "mount_allowlist");
    if (mounts && toml_type_of(mounts) == TOML_ARRAY && toml_len(mounts) == 0)
        finding(l, "empty-mount-allowlist-is-none", key_span(root, "mount_allowlist"),
                "an empty mount_allowlist gives the sandbox no host paths (drun read it as every path); "
                "list the directories to share read-only, or remove the key");
}

/* writable-git-without-hooks-protection, protection-disabled. */
static void rule_protect_tree(lint_t *l, const toml_value *root)
{
    const toml_value *prot = tget(root, "protect");
    static const struct {
        const char *key, *what;
    } git[] = {
        {"git_hooks", "the sandbox can write .git/hooks in the workspace and in every writable repository, and "
                      "the host runs those hooks at its next git command"},
        {"git_config", "the sandbox can write .git/config, whose core.hooksPath and core.fsmonitor run commands "
                       "on the host at its next git command"},
    };
    for (size_t i = 0; i < sizeof git / sizeof *git; i++) {
        const toml_value *v = tget(prot, git[i].key);
        if (is_false(v))
            finding(l, "writable-git-without-hooks-protection", toml_span(v),
                    "[protect] %s = false: %s; remove the line (protection is on by default)", git[i].key,
                    git[i].what);
    }
    static const struct {
        const char *key, *what;
    } other[] = {
        {"shell_rc", "shell start-up files (.bashrc, .zshrc, .profile ...) in writable directories run in the "
                     "next host shell"},
        {"editor_dirs", ".vscode and .idea settings in writable directories can run tasks when the host opens "
                        "the project"},
        {"agent_config", ".mcp.json, .claude/commands, .gitconfig ... in writable directories configure the "
                         "next agent or git run on the host"},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        const toml_value *v = tget(prot, other[i].key);
        if (is_false(v))
            finding(l, "protection-disabled", toml_span(v),
                    "[protect] %s = false: %s, and the sandbox may now write them; remove the line unless the "
                    "agent must edit them", other[i].key, other[i].what);
    }
}

/* Shells, interpreters and wrappers: an allowlist entry that runs code it
 * is given (a script file, -c text, a command line) allows everything. */
static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh",
                                     "busybox", NULL};
static const char *const interpreters[] = {"python", "python2", "python3", "perl", "ruby", "node", "nodejs",
                                           "deno", "bun", "php", "lua", "tclsh", "Rscript", "pwsh", "osascript",
                                           NULL};
static const char *const wrappers[] = {"env", "xargs", "nice", "nohup", "timeout", "stdbuf", "setsid", "sudo",
                                       "su", "doas", "watch", "time", "strace", "exec", "command", "builtin", NULL};
static const char *const launchers[] = {"find", "make", "awk", "gawk", "mawk", "sed", "git", "vim", "vi", "ed",
                                        "less", "man", "ssh", NULL};

static const char *interpreter_why(const char *word)
{
    static const struct {
        const char *const *names;
        const char *why;
    } groups[] = {
        {shells, "a shell runs any script file it is given, and its commands are never checked"},
        {interpreters, "an interpreter runs any program text (-c, -e, a script file), including one that starts "
                       "other commands"},
        {wrappers, "a wrapper runs the command it is given; what it runs is checked only when written literally"},
        {launchers, "it can start other commands itself (find -exec, make recipes, awk system(), GNU sed's e "
                    "command, git aliases, an editor's or pager's shell escape)"},
    };
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        for (const char *const *n = groups[g].names; *n; n++)
            if (strcmp(word, *n) == 0) return groups[g].why;
    return NULL;
}

/* command-list-advisory, allowlist-interpreter. */
static void rule_commands_tree(lint_t *l, const toml_value *root)
{
    const toml_value *deny = tget(root, "bash_command_denylist"), *allow = tget(root, "bash_command_allowlist");
    if (deny && toml_type_of(deny) == TOML_ARRAY && toml_len(deny))
        finding(l, "command-list-advisory", key_span(root, "bash_command_denylist"),
                "bash_command_denylist is a guardrail, not a boundary: a denied command still runs through an "
                "interpreter or a script (python3 -c, sh ./x.sh); rely on the filesystem and network rules to "
                "contain what runs");
    if (!allow || toml_type_of(allow) != TOML_ARRAY || !toml_len(allow)) return;
    finding(l, "command-list-advisory", key_span(root, "bash_command_allowlist"),
            "bash_command_allowlist limits which commands session_bash starts, not what they do; the filesystem "
            "and network rules are the boundary");
    for (size_t i = 0; i < toml_len(allow); i++) {
        const char *s = tstr(toml_at(allow, i));
        if (!s) continue;
        size_t n = strcspn(s + strspn(s, " \t"), " \t");
        char *word = xstrndup(s + strspn(s, " \t"), n);
        const char *why = interpreter_why(word);
        if (why)
            finding(l, "allowlist-interpreter", toml_span(toml_at(allow, i)),
                    "'%s' in bash_command_allowlist: %s, so the allowlist no longer limits what runs; remove it, "
                    "or allow the specific commands instead", word, why);
        free(word);
    }
}

/* Does an environment variable name look like a credential? */
static bool secret_name(const char *name)
{
    static const char *const parts[] = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY",
                                        "API_KEY", "APIKEY", "ACCESS_KEY", "AUTH", "SESSION_KEY", NULL};
    char up[256];
    size_t n = strlen(name);
    if (n >= sizeof up) n = sizeof up - 1;
    for (size_t i = 0; i < n; i++) up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    up[n] = '\0';
    if (strncmp(up, "AWS_", 4) == 0 && strcmp(up, "AWS_REGION") != 0 && strcmp(up, "AWS_DEFAULT_REGION") != 0)
        return true;
    for (const char *const *p = parts; *p; p++)
        if (strstr(up, *p)) return true;
    return false;
}

/* secret-env: credentials handed to the sandbox or the model. */
static void rule_env_tree(lint_t *l, const toml_value *root)
{
    const toml_value *env = tget(root, "env");
    struct {
        const toml_value *arr;
        const char *key, *what;
    } lists[] = {
        {tget(env, "passthrough"), "env.passthrough", "copies it from the host into every sandboxed command"},
        {tget(root, "env_allowlist"), "env_allowlist", "lets session_get_env reveal it to the model"},
    };
    for (size_t k = 0; k < 2; k++) {
        if (!lists[k].arr || toml_type_of(lists[k].arr) != TOML_ARRAY) continue;
        for (size_t i = 0; i < toml_len(lists[k].arr); i++) {
            const char *s = tstr(toml_at(lists[k].arr, i));
            if (s && secret_name(s))
                finding(l, "secret-env", toml_span(toml_at(lists[k].arr, i)),
                        "'%s' looks like a credential and %s %s; remove it, or give the sandbox a token scoped "
                        "to what the agent must do", s, lists[k].key, lists[k].what);
        }
    }
    const toml_value *set = tget(env, "set");
    if (!set || toml_type_of(set) != TOML_TABLE) return;
    for (size_t i = 0; i < toml_len(set); i++) {
        size_t klen;
        const char *k = toml_key_at(set, i, &klen);
        if (!memchr(k, '\0', klen) && secret_name(k))
            finding(l, "secret-env", toml_key_span_at(set, i),
                    "'%s' looks like a credential and env.set writes its value into the policy file, where every "
                    "reviewer and artifact sees it; pass it with env.passthrough from a scoped host variable, or "
                    "remove it", k);
    }
}

/* unenforceable-on-target for RLIMIT_NPROC. */
static void rule_nproc_tree(lint_t *l, const toml_value *root)
{
    const toml_value *v = tget(tget(root, "process"), "max_processes");
    if (v)
        finding(l, "unenforceable-on-target", toml_span(v),
                "max_processes sets RLIMIT_NPROC, which counts the processes of the host user drun-mcp runs as "
                "and is not enforced for root: when drun-mcp runs as root it limits nothing; run drun-mcp as an "
                "unprivileged user");
}

static void tree_rules(lint_t *l)
{
    const toml_value *root = toml_root(l->doc);
    rule_unenforced_keys(l, NULL, root);
    rule_network_tree(l, root);
    rule_protect_tree(l, root);
    rule_commands_tree(l, root);
    rule_env_tree(l, root);
    rule_nproc_tree(l, root);
}

/* ---- the resolved rules by path ------------------------------------------------------------------ */

/* lattice_level_of() reads every grant and cap; lint asks it a few questions per
 * rule, which made lint quadratic (4,000 rules: 1.3 s; 10,000: 10 s). The
 * index answers the same questions in time proportional to the path's depth:
 * each rule is filed under its anchor (a grant's or literal cap's path, a
 * glob's literal head), and a question about P gathers the rules filed under
 * P and its ancestors, in their original order, then asks lattice_level_of() about
 * those alone, so the answer is lattice_level_of()'s own. */
typedef struct lindex {
    resolved_t view;       /* res[t] with only the candidates (grants, caps) */
    strmap_t grants, caps; /* anchor -> newest entry of a chain in next_g / next_c */
    VEC(long) next_g, next_c;
    strmap_t below;        /* path -> 1 + the highest grant level at or below it */
    strmap_t at;           /* "base\x01path" -> resolved grant index */
    strmap_t beaten;       /* "base\x01path" of config grants lattice_resolve dropped */
    strmap_t first_cap;    /* "level base glob\x01path" -> index of the first config cap so written */
    const rrule_t **kept;  /* config rule index -> its resolved grant, or NULL */
    const char **tail;     /* cap index -> for "**" + "/LITERAL" caps, "/LITERAL": a path without it
                              as a substring cannot match (NULL: no such shortcut) */
    VEC(size_t) gi;        /* scratch: the grant candidates' indices */
    VEC(size_t) cand;      /* scratch: candidate indices */
} lindex_t;

typedef VEC(long) chain_t;

/* "base\x01path": a grant's identity in lattice_resolve (into a when given, else b). */
static const char *grant_key(buf_t *b, arena_t *a, path_base_t base, const char *path)
{
    buf_truncate(b, 0);
    buf_addc(b, (char)('0' + base));
    buf_addc(b, '\x01');
    buf_adds(b, path);
    return a ? arena_strdup(a, buf_cstr(b)) : buf_cstr(b);
}

/* A cap's identity for duplicate-rule: level, base, glob and path. */
static const char *cap_key(buf_t *b, arena_t *a, rrule_t c)
{
    buf_truncate(b, 0);
    buf_printf(b, "%d %d %d\x01%s", (int)c.level, (int)c.base, (int)c.glob, c.path);
    return a ? arena_strdup(a, buf_cstr(b)) : buf_cstr(b);
}

/* Files entry i under key in m, chained through next (newest first). */
static void file_under(lint_t *l, strmap_t *m, chain_t *next, const char *key, size_t i)
{
    long head = strmap_get(m, key);
    if (head < 0) strmap_put(m, arena_strdup(&l->a, key), (long)i);
    else strmap_put(m, key, (long)i);
    while (next->n <= i) vec_push(next, -1L);
    next->v[i] = head;
}

/* Calls fn(ctx, a) for a = path and each of its ancestors, deepest first. */
static void each_ancestor(const char *path, void (*fn)(void *ctx, const char *a), void *ctx)
{
    buf_t b = BUF_INIT;
    buf_adds(&b, path);
    for (;;) {
        fn(ctx, buf_cstr(&b));
        char *slash = strrchr(b.p, '/');
        if (!slash || b.len <= 1) break;
        buf_truncate(&b, slash == b.p ? 1 : (size_t)(slash - b.p));
    }
    buf_free(&b);
}

typedef struct gather {
    VEC(size_t) *out;
    const strmap_t *m;
    const long *next;
} gather_t;

static void gather_one(void *ctx, const char *a)
{
    gather_t *g = ctx;
    for (long i = strmap_get(g->m, a); i >= 0; i = g->next[i]) vec_push(g->out, (size_t)i);
}

typedef struct raise {
    lint_t *l;
    strmap_t *below;
    level_t level;
} raise_t;

static void raise_below(void *ctx, const char *a)
{
    raise_t *r = ctx;
    long old = strmap_get(r->below, a);
    if (old < 0) strmap_put(r->below, arena_strdup(&r->l->a, a), (long)r->level + 1);
    else if (old < (long)r->level + 1) strmap_put(r->below, a, (long)r->level + 1);
}

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* The entries filed in m under path and its ancestors, in rule order, into ix->cand. */
static void gather(lindex_t *ix, const strmap_t *m, const long *next, const char *path)
{
    ix->cand.n = 0;
    gather_t g = {(void *)&ix->cand, m, next};
    each_ancestor(path, gather_one, &g);
    if (ix->cand.n > 1) qsort(ix->cand.v, ix->cand.n, sizeof *ix->cand.v, cmp_size);
}

static lindex_t *lindex_build(lint_t *l, target_t t)
{
    resolved_t *r = l->res[t];
    lindex_t *ix = xcalloc(1, sizeof *ix);
    buf_t k = BUF_INIT;
    ix->view = *r;
    ix->view.grants.v = xcalloc(r->grants.n + 1, sizeof *r->grants.v);
    ix->view.caps.v = xcalloc(r->caps.n + 1, sizeof *r->caps.v);
    ix->kept = xcalloc(l->pol->rules.n + 1, sizeof *ix->kept);
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        const char *abs = lattice_rule_abs(g, &l->roots, &l->a);
        if (abs) {
            file_under(l, &ix->grants, (chain_t *)&ix->next_g, abs, i);
            raise_t rs = {l, &ix->below, g->level};
            each_ancestor(abs, raise_below, &rs);
        }
        strmap_put(&ix->at, grant_key(&k, &l->a, g->base, g->path), (long)i);
        /* a config rule, not a built-in (with no config rule, rules.v is NULL) */
        if (l->pol->rules.n && g->rule >= l->pol->rules.v && g->rule < l->pol->rules.v + l->pol->rules.n)
            ix->kept[g->rule - l->pol->rules.v] = g;
    }
    ix->tail = xcalloc(r->caps.n + 1, sizeof *ix->tail);
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        const char *abs = lattice_rule_abs(c, &l->roots, &l->a);
        if (abs) file_under(l, &ix->caps, (chain_t *)&ix->next_c, c->glob ? glob_literal_prefix(abs, &l->a) : abs, i);
        /* the [protect] patterns and "**" + "/NAME" entries: every path is
         * a candidate, and a glob match per question was most of lint's time */
        if (abs && c->anywhere && strncmp(abs, "/**/", 4) == 0 && !strpbrk(abs + 3, "*?\\"))
            ix->tail[i] = abs + 3;
    }
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *o = &l->pol->rules.v[i];
        if (o->cap) {
            const char *key = cap_key(&k, &l->a, lattice_concretize(r, o));
            if (strmap_get(&ix->first_cap, key) < 0) strmap_put(&ix->first_cap, key, (long)i);
        } else if (!ix->kept[i]) {
            rrule_t c = lattice_concretize(r, o);
            strmap_put(&ix->beaten, grant_key(&k, &l->a, c.base, c.path), 1);
        }
    }
    buf_free(&k);
    return ix;
}

static void lindex_free(lindex_t *ix)
{
    if (!ix) return;
    free(ix->view.grants.v);
    free(ix->view.caps.v);
    free(ix->kept);
    free(ix->tail);
    vec_free(&ix->gi);
    strmap_free(&ix->grants);
    strmap_free(&ix->caps);
    strmap_free(&ix->below);
    strmap_free(&ix->at);
    strmap_free(&ix->beaten);
    strmap_free(&ix->first_cap);
    vec_free(&ix->next_g);
    vec_free(&ix->next_c);
    vec_free(&ix->cand);
    free(ix);
}

/* lattice_level_of(res[t], roots, path, why), from the index. */
static level_t lint_level(lint_t *l, target_t t, const char *path, verdict_t *why)
{
    lindex_t *ix = l->ix[t];
    const resolved_t *r = l->res[t];
    gather(ix, &ix->grants, ix->next_g.v, path);
    ix->gi.n = 0;
    for (size_t i = 0; i < ix->cand.n; i++) {
        vec_push(&ix->gi, ix->cand.v[i]);
        ix->view.grants.v[i] = r->grants.v[ix->cand.v[i]];
    }
    const size_t *gi = ix->gi.v;
    ix->view.grants.n = ix->cand.n;
    gather(ix, &ix->caps, ix->next_c.v, path);
    size_t keep = 0;
    for (size_t i = 0; i < ix->cand.n; i++) {
        const char *tail = ix->tail[ix->cand.v[i]];
        if (tail && !strstr(path, tail)) continue;
        ix->cand.v[keep] = ix->cand.v[i];
        ix->view.caps.v[keep++] = r->caps.v[ix->cand.v[i]];
    }
    ix->cand.n = keep;
    ix->view.caps.n = keep;
    verdict_t v;
    level_t lvl = lattice_level_of(&ix->view, &l->roots, path, &v);
    /* point back into res[t]: callers compare rules by address */
    if (v.grant) v.grant = &r->grants.v[gi[v.grant - ix->view.grants.v]];
    for (unsigned i = 0; i < v.ncaps; i++) v.caps[i] = &r->caps.v[ix->cand.v[v.caps[i] - ix->view.caps.v]];
    if (why) *why = v;
    return lvl;
}

/* The highest level a grant at or below path gives, or -1 when none does. */
static long level_below(lint_t *l, target_t t, const char *path)
{
    long v = strmap_get(&l->ix[t]->below, path);
    return v < 0 ? -1 : v - 1;
}

/* ---- lattice rules: they need the policy and the facts ------------------------------------------------ */

/* The resolved grant of config rule ru, or NULL when lattice_resolve dropped it. */
static const rrule_t *kept_grant(lint_t *l, target_t t, const rule_t *ru)
{
    return l->ix[t]->kept[ru - l->pol->rules.v];
}

static const rrule_t *grant_at(lint_t *l, target_t t, path_base_t base, const char *path)
{
    buf_t k = BUF_INIT;
    long i = strmap_get(&l->ix[t]->at, grant_key(&k, NULL, base, path));
    buf_free(&k);
    return i < 0 ? NULL : &l->res[t]->grants.v[i];
}

/* The cap among v's caps that sets the lowest ceiling. */
static const rrule_t *lowest_cap(const verdict_t *v)
{
    const rrule_t *best = NULL;
    for (unsigned i = 0; i < v->ncaps; i++)
        if (!best || v->caps[i]->level < best->level) best = v->caps[i];
    return best;
}

/* A grant lattice_resolve dropped: another grant on the same path won. */
static void dropped_grant(lint_t *l, target_t t, const rule_t *ru)
{
    resolved_t *r = l->res[t];
    rrule_t c = lattice_concretize(r, ru);
    const rrule_t *w = grant_at(l, t, c.base, c.path);
    if (!w) return;
    char *wd = rule_desc(l, w->rule);
    /* the same path written differently ("~/a" and "~/a/"): nothing to add;
     * different paths that resolve to one (a symlink): say where */
    bool same_ir = w->rule->src && w->rule->path.base == ru->path.base && strcmp(w->rule->path.rel, ru->path.rel) == 0;
    const char *via = "";
    char *resolved = NULL;
    if (w->rule->src && !same_ir && c.base == PB_ROOT) {
        resolved = xasprintf(" (both are %s on %s)", show(l, t, c.path), facts_target_name(t));
        via = resolved;
    }
    if (w->level == ru->level && w->rule->src)
        finding(l, "duplicate-rule", ru->span, "'%s' in %s names the same path as %s%s; remove one",
                ru->written, policy_rule_kind_key(ru->kind), wd, via);
    else if (w->level == ru->level)
        finding(l, "redundant-rule", ru->span, "'%s' in %s changes nothing: %s already gives %s there; remove it",
                ru->written, policy_rule_kind_key(ru->kind), wd, policy_level_name(w->level));
    else
        finding(l, "shadowed-rule", ru->span,
                "'%s' in %s never decides: %s names the same path%s with %s, and of two grants on one path the "
                "lower wins; remove one of them",
                ru->written, policy_rule_kind_key(ru->kind), wd, via, policy_level_name(w->level));
    free(wd);
    free(resolved);
}

/* Did lattice_resolve drop another config grant in favour of g (same path)? */
static bool beat_another(lint_t *l, target_t t, const rrule_t *g)
{
    buf_t k = BUF_INIT;
    bool beaten = strmap_get(&l->ix[t]->beaten, grant_key(&k, NULL, g->base, g->path)) >= 0;
    buf_free(&k);
    return beaten;
}

/* shadowed-rule, redundant-rule and duplicate-rule for one grant. */
static void check_grant(lint_t *l, target_t t, const rule_t *ru)
{
    const rrule_t *g = kept_grant(l, t, ru);
    if (!g) {
        dropped_grant(l, t, ru);
        return;
    }
    const char *abs = lattice_rule_abs(g, &l->roots, &l->a);
    verdict_t at, up = {0};
    lint_level(l, t, abs, &at);
    const char *parent = parent_of(abs, &l->a);
    if (parent) lint_level(l, t, parent, &up);
    if (at.level < g->level && ru->level > LVL_NONE) {
        const rrule_t *cap = lowest_cap(&at);
        char *cd = cap ? rule_desc(l, cap->rule) : xstrdup("a cap");
        if (at.level == LVL_NONE || at.level <= up.level)
            finding(l, "shadowed-rule", ru->span,
                    "'%s' in %s never decides: %s caps it at %s; remove the grant, or narrow the cap",
                    ru->written, policy_rule_kind_key(ru->kind), cd, policy_level_name(at.level));
        else
            finding(l, "shadowed-rule", ru->span,
                    "'%s' in %s gives %s, not %s: %s caps it (caps are never raised by a deeper grant); use "
                    "allow_read, or narrow the cap", ru->written, policy_rule_kind_key(ru->kind), policy_level_name(at.level),
                    policy_level_name(g->level), cd);
        free(cd);
        return;
    }
    if (!parent || g->level != up.grant_level || beat_another(l, t, g)) return;
    if (up.grant) {
        char *gd = rule_desc(l, up.grant->rule);
        finding(l, "redundant-rule", ru->span, "'%s' in %s changes nothing: %s already gives %s there; remove it",
                ru->written, policy_rule_kind_key(ru->kind), gd, policy_level_name(g->level));
        free(gd);
    } else {
        finding(l, "redundant-rule", ru->span,
                "'%s' in %s changes nothing: nothing above it grants access, and a path without a grant is already "
                "hidden; remove it (or keep it as documentation and suppress this note)",
                ru->written, policy_rule_kind_key(ru->kind));
    }
}

/* Could anything at, above or below abs reach a level above lvl? */
static bool above_level_near(lint_t *l, target_t t, const char *abs, level_t lvl)
{
    verdict_t v;
    lint_level(l, t, abs, &v);
    return v.grant_level > lvl || level_below(l, t, abs) > (long)lvl;
}

/* duplicate-rule and redundant-rule for one cap (deny_read glob, deny_write). */
static void check_cap(lint_t *l, target_t t, const rule_t *ru, size_t idx)
{
    resolved_t *r = l->res[t];
    rrule_t c = lattice_concretize(r, ru);
    buf_t key = BUF_INIT;
    long first = strmap_get(&l->ix[t]->first_cap, cap_key(&key, NULL, c));
    buf_free(&key);
    if (first >= 0 && (size_t)first < idx) {
        const rule_t *o = &l->pol->rules.v[first];
        char *od = rule_desc(l, o);
        finding(l, "duplicate-rule", ru->span, "'%s' in %s names the same path as %s; remove one", ru->written,
                policy_rule_kind_key(ru->kind), od);
        free(od);
        return;
    }
    const char *where = lattice_rule_abs(&c, &l->roots, &l->a);
    if (c.glob) where = glob_literal_prefix(where, &l->a);
    if (strcmp(where, "/") == 0 || above_level_near(l, t, where, ru->level)) return;
    bool rd = ru->level == LVL_NONE;
    finding(l, "redundant-rule", ru->span,
            "'%s' in %s changes nothing: nothing at or below %s is %s; remove it (or keep it for a later grant "
            "and suppress this note)",
            ru->written, policy_rule_kind_key(ru->kind), show(l, t, where), rd ? "readable" : "writable");
}

static void rule_path_rules(lint_t *l, target_t t)
{
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (ru->cap) check_cap(l, t, ru, i);
        else check_grant(l, t, ru);
    }
}

/* The credentials secret-readable looks for, below the home directory. */
static const char *const home_secrets[] = {
    ".ssh", ".gnupg", ".aws", ".config/gcloud", ".azure", ".kube", ".docker/config.json", ".netrc",
    ".git-credentials", ".config/gh", NULL,
};

typedef struct exposure {
    const rule_t *grant; /* the config grant that makes it readable */
    const char *what;    /* "~/.ssh" */
} exposure_t;

/* Exposures in the order found, each (grant, what) once: a hash, not a
 * scan (10,000 grants each opening .env made the scan quadratic). */
typedef struct exposures {
    VEC(exposure_t) v;
    strmap_t seen; /* "RULE-INDEX\x01what" */
} exposure_vec_t;

static void expose(lint_t *l, exposure_vec_t *v, const rule_t *g, const char *what)
{
    char *key = xasprintf("%td\x01%s", g - l->pol->rules.v, what);
    if (strmap_get(&v->seen, key) >= 0) {
        free(key);
        return;
    }
    strmap_put(&v->seen, arena_strdup(&l->a, key), 1);
    free(key);
    exposure_t e = {g, arena_strdup(&l->a, what)};
    vec_push(&v->v, e);
}

static void exposures_free(exposure_vec_t *v)
{
    vec_free(&v->v);
    strmap_free(&v->seen);
}

/* secret-readable: credentials below home (one finding per grant that
 * opens them), and .env files in the trees config grants open (one finding,
 * at the first such grant: the fix is one glob). The workspace is the
 * agent's own and is not counted. */
static void rule_secrets(lint_t *l)
{
    exposure_vec_t ex = {0}, env = {0};
    for (int t = 0; t < 2; t++) {
        resolved_t *r = l->res[t];
        for (const char *const *s = home_secrets; *s; s++) {
            const char *p = lattice_real_path(r, path_join(r->facts->home, *s, &l->a), &l->a);
            verdict_t v;
            if (lint_level(l, (target_t)t, p, &v) >= LVL_READ && v.grant && v.grant->rule->src)
                expose(l, &ex, v.grant->rule, path_join("~", *s, &l->a));
        }
        for (size_t i = 0; i < r->grants.n; i++) {
            const rrule_t *g = &r->grants.v[i];
            if (!g->rule->src || g->level == LVL_NONE || g->base != PB_ROOT) continue;
            verdict_t v;
            if (lint_level(l, (target_t)t, path_join(g->path, ".env", &l->a), &v) >= LVL_READ && v.grant == g)
                expose(l, &env, g->rule, g->rule->written);
        }
    }
    /* the credentials each config rule opens, in rule order (by rule index:
     * one pass over the exposures, not one per rule) */
    size_t nr = l->pol->rules.n;
    buf_t *what = xcalloc(nr + 1, sizeof *what);
    for (size_t k = 0; k < ex.v.n; k++) {
        buf_t *w = &what[ex.v.v[k].grant - l->pol->rules.v];
        buf_printf(w, "%s%s", w->len ? ", " : "", ex.v.v[k].what);
    }
    for (size_t i = 0; i < nr; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (what[i].len)
            finding(l, "secret-readable", ru->span,
                    "'%s' in %s makes credentials readable: %s; add them to [filesystem] deny_read", ru->written,
                    policy_rule_kind_key(ru->kind), buf_cstr(&what[i]));
        buf_free(&what[i]);
    }
    free(what);
    /* .env: the first exposure of each rule, in rule order; each tree named once */
    const exposure_t **env_of = xcalloc(nr + 1, sizeof *env_of);
    for (size_t k = 0; k < env.v.n; k++) {
        size_t i = (size_t)(env.v.v[k].grant - l->pol->rules.v);
        if (!env_of[i]) env_of[i] = &env.v.v[k];
    }
    const rule_t *first = NULL;
    buf_t trees = BUF_INIT;
    strmap_t named = STRMAP_INIT;
    for (size_t i = 0; i < nr; i++) {
        if (!env_of[i]) continue;
        if (!first) first = env_of[i]->grant;
        if (strmap_get(&named, env_of[i]->what) >= 0) continue;
        strmap_put(&named, env_of[i]->what, 1);
        buf_printf(&trees, "%s%s", trees.len ? ", " : "", env_of[i]->what);
    }
    strmap_free(&named);
    free(env_of);
    if (first)
        finding(l, "secret-readable", first->span,
                ".env files are readable below %s; add \"**/.env\" to [filesystem] deny_read (reported at the "
                "first grant that opens one)", buf_cstr(&trees));
    buf_free(&trees);
    exposures_free(&ex);
    exposures_free(&env);
}

/* writable-system-dir: a write grant over a directory the host runs programs from. */
static void rule_system_dirs(lint_t *l)
{
    for (int t = 0; t < 2; t++) {
        resolved_t *r = l->res[t];
        const facts_t *f = r->facts;
        VEC(const char *) sys = {0};
        vec_push(&sys, "/");
        for (size_t i = 0; i < f->system_read.n; i++) vec_push(&sys, lattice_real_path(r, f->system_read.v[i], &l->a));
        for (size_t i = 0; i < f->path_dirs.n; i++) vec_push(&sys, lattice_real_path(r, f->path_dirs.v[i], &l->a));
        for (size_t i = 0; i < r->grants.n; i++) {
            const rrule_t *g = &r->grants.v[i];
            if (!g->rule->src || g->level != LVL_WRITE || g->base != PB_ROOT) continue;
            buf_t hit = BUF_INIT;
            for (size_t k = 0; k < sys.n; k++) {
                const char *d = sys.v[k];
                bool inside = path_is_under(g->path, d) && strcmp(d, "/") != 0;
                bool covers = path_is_under(d, g->path);
                verdict_t v;
                if (!(inside || covers)) continue;
                if (lint_level(l, (target_t)t, covers ? d : g->path, &v) != LVL_WRITE || v.grant != g) continue;
                const char *shown = show(l, (target_t)t, covers ? d : g->path);
                if (!strstr(buf_cstr(&hit), shown)) buf_printf(&hit, "%s%s", hit.len ? ", " : "", shown);
            }
            if (hit.len)
                finding(l, "writable-system-dir", g->rule->span,
                        "'%s' in %s makes %s writable: the host runs programs from there (a system or $PATH "
                        "directory), so a program planted by the sandbox runs outside it; narrow the grant, or add "
                        "the directory to deny_write",
                        g->rule->written, policy_rule_kind_key(g->rule->kind), buf_cstr(&hit));
            buf_free(&hit);
        }
        vec_free(&sys);
    }
}

/* runtime-path-granted: a write grant over or inside a runtime-owned path
 * (SPEC §13). The path stays hidden whatever the grant; the finding tells
 * the operator the grant does not do there what it says. Read grants are
 * not reported: a readable home is common (readonly-home) and hiding the
 * runtime's files from it takes nothing the operator meant to give. Linux
 * only (the runner's); a few runtime-owned paths per grant: linear. */
static void rule_runtime_owned(lint_t *l)
{
    const resolved_t *r = l->res[TARGET_LINUX];
    /* the runtime-owned caps first: a handful, where the caps may be thousands */
    VEC(const rrule_t *) owned = {0};
    for (size_t k = 0; r && k < r->caps.n; k++)
        if (r->caps.v[k].rule->kind == RK_RUNTIME) vec_push(&owned, &r->caps.v[k]);
    for (size_t i = 0; r && i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        if (!g->rule->src || g->level != LVL_WRITE || g->base != PB_ROOT) continue;
        buf_t hit = BUF_INIT;
        for (size_t k = 0; k < owned.n; k++) {
            const rrule_t *c = owned.v[k];
            if (!(path_is_under(c->path, g->path) || path_is_under(g->path, c->path)))
                continue;
            buf_printf(&hit, "%s%s", hit.len ? ", " : "", show(l, TARGET_LINUX, c->path));
        }
        if (hit.len)
            finding(l, "runtime-path-granted", g->rule->span,
                    "'%s' in %s covers %s, which the runtime owns (its state, config or caches): the sandbox never "
                    "sees them, whatever the grants, so that it cannot change what the runtime trusts; narrow the "
                    "grant, or keep it and know that these stay hidden",
                    g->rule->written, policy_rule_kind_key(g->rule->kind), buf_cstr(&hit));
        buf_free(&hit);
    }
    vec_free(&owned);
}

/* workspace-not-writable: a rule that takes the session's own dirs away. */
static void rule_session_dirs(lint_t *l)
{
    for (int t = 0; t < 2; t++) {
        const char *dirs[2] = {l->roots.workspace, l->roots.scratch};
        const char *names[2] = {"the session workspace", "the session scratch dir (the sandbox's HOME and TMPDIR)"};
        for (int k = 0; k < 2; k++) {
            verdict_t v;
            if (lint_level(l, (target_t)t, dirs[k], &v) == LVL_WRITE) continue;
            const rule_t *why = v.grant && v.grant->rule->src && v.grant_level < LVL_WRITE ? v.grant->rule : NULL;
            const rrule_t *cap = lowest_cap(&v);
            if (!why && cap && cap->rule->src) why = cap->rule;
            if (!why) continue;
            finding(l, "workspace-not-writable", why->span,
                    "'%s' in %s makes %s %s: the agent cannot do its work there; remove it, or name the paths "
                    "below it to protect", why->written, policy_rule_kind_key(why->kind), names[k],
                    v.level == LVL_NONE ? "hidden" : "read-only");
        }
    }
}

/* The first component of abs that the facts do not know to exist, or NULL. */
static const char *first_missing(lint_t *l, const facts_t *f, const char *abs)
{
    const char *p = abs;
    while (*++p) {
        while (*p && *p != '/') p++;
        const char *prefix = arena_strndup(&l->a, abs, (size_t)(p - abs));
        if (facts_lookup(f, prefix, &l->a).type == PT_MISSING) return prefix;
        if (!*p) break;
    }
    return NULL;
}

/* deny-path-missing: Linux has nothing to mount for a path that is not there. */
static void rule_missing_denies(lint_t *l)
{
    resolved_t *r = l->res[TARGET_LINUX];
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (ru->path.glob || (ru->kind != RK_DENY_READ && ru->kind != RK_DENY_WRITE)) continue;
        if (ru->path.base == PB_WORKSPACE || ru->path.base == PB_SCRATCH) continue; /* made fresh per session */
        rrule_t c = lattice_concretize(r, ru);
        const char *miss = first_missing(l, r->facts, c.path);
        if (!miss) continue;
        const char *parent = parent_of(miss, &l->a);
        bool writable = parent && lint_level(l, TARGET_LINUX, parent, NULL) == LVL_WRITE;
        if (writable)
            finding(l, "deny-path-missing", ru->span,
                    "'%s' does not exist on this Linux host (facts): the sandbox blocks its first missing "
                    "component %s (an empty read-only directory, or /dev/null for a file) so it cannot be created "
                    "inside; one the host creates while a session runs is covered from the next session on",
                    ru->written, show(l, TARGET_LINUX, miss));
        else
            finding(l, "deny-path-missing", ru->span,
                    "'%s' does not exist on this Linux host (facts), so there is nothing to mount over yet; if the "
                    "host creates it while a session runs, that session sees it until the next one starts",
                    ru->written);
    }
}

/* unenforceable-on-target for globs: bwrap expands them when a session starts. */
static void rule_glob_caps(lint_t *l)
{
    for (size_t i = 0; i < l->pol->rules.n; i++) {
        const rule_t *ru = &l->pol->rules.v[i];
        if (!ru->path.glob) continue;
        if (ru->level == LVL_NONE)
            finding(l, "unenforceable-on-target", ru->span,
                    "Linux cannot follow the glob '%s' as macOS does: bwrap hides the matches that exist when a "
                    "session starts; a matching file the host creates during the session is visible to it until "
                    "the next one (macOS enforces the pattern exactly)", ru->written);
        else
            finding(l, "unenforceable-on-target", ru->span,
                    "Linux cannot follow the glob '%s' as macOS does: bwrap makes the matches that exist when a "
                    "session starts read-only (and blocks a literal name at each writable root); a matching path "
                    "the sandbox creates at a new place (mkdir -p a/b, then a/b/...) stays writable (macOS "
                    "enforces the pattern exactly)", ru->written);
    }
}

/* The span of the path key with the most entries (where a large profile comes from). */
static span_t largest_list(lint_t *l)
{
    const toml_value *root = l->doc ? toml_root(l->doc) : NULL;
    const toml_value *fs = tget(root, "filesystem");
    static const char *const keys[] = {"allow_read", "deny_read", "allow_write", "deny_write"};
    span_t best = key_span(root, "mount_allowlist");
    size_t most = tlen(tget(root, "mount_allowlist"));
    for (size_t i = 0; i < 4; i++) {
        size_t n = tlen(tget(fs, keys[i]));
        if (n > most) most = n, best = key_span(fs, keys[i]);
    }
    return best;
}

/* profile-too-large, from the compiled artifacts; compile failures (a
 * path no profile can hold) are config errors. */
static void rule_artifacts(lint_t *l)
{
    sbpl_t *sb;
    sbpl_build(l->res[TARGET_MACOS], l->res[TARGET_MACOS]->facts, &l->raw, &sb);
    char *err = NULL;
    bwrap_t *bw = bwrap_plan(l->res[TARGET_LINUX], NULL, &err);
    if (!bw) diag_add(&l->raw, SEV_ERROR, "bad-path", NULL, (span_t){0, 0}, "the Linux sandbox cannot be planned: %s", err);
    free(err);
    buf_t args = BUF_INIT;
    if (bw) bwrap_render(bw, &args);
    size_t nsb = sb ? sb->rules.n : 0, sbb = sb ? sb->text.len : 0, nbw = bw ? bw->ops.n : 0;
    buf_t what = BUF_INIT; /* only what is over a limit: the counts of the rest are noise */
    if (nsb > LINT_MAX_SBPL_RULES || sbb > LINT_MAX_SBPL_BYTES)
        buf_printf(&what, "policy.sb has %zu file rules in %zu KiB (lint's limits: %d rules, %d KiB)", nsb, sbb / 1024,
                   LINT_MAX_SBPL_RULES, LINT_MAX_SBPL_BYTES / 1024);
    if (nbw > LINT_MAX_BWRAP_OPS)
        buf_printf(&what, "%sbwrap.args has %zu operations (lint's limit: %d)", what.len ? " and " : "", nbw,
                   LINT_MAX_BWRAP_OPS);
    if (what.len)
        finding(l, "profile-too-large", largest_list(l),
                "the compiled policy is large: %s; every file access is matched against the rules and every mount "
                "is set up for each command: cover long lists with a parent directory or one glob", buf_cstr(&what));
    buf_free(&what);
    buf_free(&args);
    sbpl_free(sb);
    bwrap_free(bw);
}

/* Whitespace-collapsed text, for comparing command entries. */
static const char *squeeze(lint_t *l, const char *s)
{
    buf_t b = BUF_INIT;
    for (const char *p = s; *p;) {
        size_t sp = strspn(p, " \t");
        p += sp;
        if (!*p) break;
        if (b.len) buf_addc(&b, ' ');
        size_t w = strcspn(p, " \t");
        buf_add(&b, p, w);
        p += w;
    }
    const char *r = arena_strdup(&l->a, buf_cstr(&b));
    buf_free(&b);
    return r;
}

/* duplicate-rule in a list of strings: one hash look-up per entry. */
static void dup_strings(lint_t *l, const str_entry_t *v, size_t n, const char *key, bool cmd)
{
    strmap_t first = STRMAP_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *s = cmd ? squeeze(l, v[i].s) : v[i].s;
        long k = strmap_get(&first, s);
        if (k < 0) {
            strmap_put(&first, s, (long)i);
            continue;
        }
        finding(l, "duplicate-rule", v[i].span, "'%s' is listed twice in %s (first at line %u); remove one",
                v[i].s, key, line_of(l, v[k].span));
    }
    strmap_free(&first);
}

/* The domain entries by "kind\x01pattern" -> the first index so written. */
static strmap_t domain_index(lint_t *l)
{
    strmap_t m = STRMAP_INIT;
    buf_t k = BUF_INIT;
    for (size_t i = 0; i < l->pol->domains.n; i++) {
        const domain_rule_t *d = &l->pol->domains.v[i];
        buf_truncate(&k, 0);
        buf_printf(&k, "%d\x01%s", d->kind, d->pattern);
        if (strmap_get(&m, buf_cstr(&k)) < 0) strmap_put(&m, arena_strdup(&l->a, buf_cstr(&k)), (long)i);
    }
    buf_free(&k);
    return m;
}

static long domain_first(const strmap_t *m, int kind, const char *pattern)
{
    buf_t k = BUF_INIT;
    buf_printf(&k, "%d\x01%s", kind, pattern);
    long i = strmap_get(m, buf_cstr(&k));
    buf_free(&k);
    return i;
}

/* duplicate-rule and redundant-rule for domain entry i: the first other
 * entry that names the same hosts (earlier) or covers an exact host ("*",
 * or "*.SUFFIX" for one of its suffixes), found by look-ups, not a scan. */
static void check_domain(lint_t *l, const strmap_t *m, size_t i)
{
    const domain_rule_t *v = l->pol->domains.v, *d = &v[i];
    long best = -1;
    bool dup = false;
    long same = domain_first(m, d->kind, d->pattern);
    if (same >= 0 && (size_t)same < i) best = same, dup = true;
    if (d->kind == DOMAIN_EXACT) {
        long cand[2] = {domain_first(m, DOMAIN_ALL, "*"), -1};
        for (const char *p = strchr(d->pattern, '.'); p; p = strchr(p + 1, '.')) {
            long k = domain_first(m, DOMAIN_SUBDOMAINS, p + 1);
            if (k >= 0 && (cand[1] < 0 || k < cand[1])) cand[1] = k;
        }
        for (int c = 0; c < 2; c++) {
            long k = cand[c];
            if (k < 0 || (size_t)k == i || (best >= 0 && k > best)) continue;
            domain_entry_t e = {v[k].kind, (char *)v[k].pattern};
            if (domain_match(&e, d->pattern)) best = k, dup = false;
        }
    }
    if (best < 0) return;
    const domain_rule_t *o = &v[best];
    if (dup)
        finding(l, "duplicate-rule", d->span, "'%s' in domain_allowlist names the same hosts as '%s' "
                "(line %u); remove one", d->written, o->written, line_of(l, o->span));
    else
        finding(l, "redundant-rule", d->span, "'%s' in domain_allowlist changes nothing: '%s' (line %u) "
                "already covers it; remove it", d->written, o->written, line_of(l, o->span));
}

/* duplicate-rule / redundant-rule / shadowed-rule outside the filesystem. */
static void rule_lists(lint_t *l)
{
    const policy_t *p = l->pol;
    if (p->domains_present) {
        strmap_t m = domain_index(l);
        for (size_t i = 0; i < p->domains.n; i++) check_domain(l, &m, i);
        strmap_free(&m);
    }
    dup_strings(l, p->cmd_deny.v, p->cmd_deny.n, "bash_command_denylist", true);
    dup_strings(l, p->cmd_allow.v, p->cmd_allow.n, "bash_command_allowlist", true);
    dup_strings(l, p->env_allowlist.v, p->env_allowlist.n, "env_allowlist", false);
    dup_strings(l, p->env_passthrough.v, p->env_passthrough.n, "env.passthrough", false);
    for (size_t i = 0; i < p->env_passthrough.n; i++)
        for (size_t k = 0; k < p->env_set.n; k++)
            if (strcmp(p->env_passthrough.v[i].s, p->env_set.v[k].name) == 0)
                finding(l, "shadowed-rule", p->env_passthrough.v[i].span,
                        "'%s' in env.passthrough never decides: env.set gives it a value (line %u), which wins; "
                        "remove one", p->env_passthrough.v[i].s, line_of(l, p->env_set.v[k].span));
}

static void lattice_rules(lint_t *l)
{
    for (int t = 0; t < 2; t++) l->ix[t] = lindex_build(l, (target_t)t);
    for (int t = 0; t < 2; t++) rule_path_rules(l, (target_t)t);
    rule_secrets(l);
    rule_system_dirs(l);
    rule_runtime_owned(l);
    rule_session_dirs(l);
    rule_missing_denies(l);
    rule_glob_caps(l);
    rule_lists(l);
    rule_artifacts(l);
    for (int t = 0; t < 2; t++) {
        lindex_free(l->ix[t]);
        l->ix[t] = NULL;
    }
}

/* ---- suppression comments ------------------------------------------------------------------------------ */

typedef struct supp {
    unsigned line;  /* the comment's line */
    const char *id; /* into the source text, idlen bytes */
    size_t idlen;
    span_t span;    /* of the ID */
} supp_t;

typedef VEC(supp_t) supp_vec_t;

/* Parses "drun-policy: allow ID[, ID...]" in one comment (text after '#'). */
static void parse_comment(lint_t *l, size_t from, size_t to, supp_vec_t *out)
{
    const char *t = l->src->text;
    static const char tag[] = "drun-policy:";
    size_t i = from;
    while (i < to && (t[i] == ' ' || t[i] == '\t' || t[i] == '#')) i++;
    if (to - i < sizeof tag - 1 || memcmp(t + i, tag, sizeof tag - 1) != 0) return;
    i += sizeof tag - 1;
    while (i < to && (t[i] == ' ' || t[i] == '\t')) i++;
    if (to - i < 5 || memcmp(t + i, "allow", 5) != 0) return;
    i += 5;
    unsigned line = source_pos(l->src, (uint32_t)from).line;
    while (i < to) {
        while (i < to && (t[i] == ' ' || t[i] == '\t' || t[i] == ',')) i++;
        size_t st = i;
        while (i < to && t[i] != ' ' && t[i] != '\t' && t[i] != ',' && t[i] != '#') i++;
        if (i > st) {
            supp_t s = {line, t + st, i - st, {(uint32_t)st, (uint32_t)i}};
            vec_push(out, s);
        }
        if (i < to && t[i] == '#') break; /* a second comment: free text */
    }
}

/* Finds the comments of a TOML text: '#' outside every kind of string. */
static void scan_comments(lint_t *l, supp_vec_t *out)
{
    const char *t = l->src->text;
    size_t n = l->src->len;
    enum { NORMAL, BASIC, LITERAL, ML_BASIC, ML_LITERAL } st = NORMAL;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        switch (st) {
        case NORMAL:
            if (c == '#') {
                size_t e = i;
                while (e < n && t[e] != '\n') e++;
                parse_comment(l, i + 1, e, out);
                i = e;
            } else if (c == '"') {
                if (i + 2 < n && t[i + 1] == '"' && t[i + 2] == '"') st = ML_BASIC, i += 2;
                else st = BASIC;
            } else if (c == '\'') {
                if (i + 2 < n && t[i + 1] == '\'' && t[i + 2] == '\'') st = ML_LITERAL, i += 2;
                else st = LITERAL;
            }
            break;
        case BASIC:
            if (c == '\\') i++;
            else if (c == '"' || c == '\n') st = NORMAL;
            break;
        case LITERAL:
            if (c == '\'' || c == '\n') st = NORMAL;
            break;
        case ML_BASIC:
        case ML_LITERAL: {
            char q = st == ML_BASIC ? '"' : '\'';
            if (st == ML_BASIC && c == '\\') i++;
            else if (c == q && i + 2 < n && t[i + 1] == q && t[i + 2] == q) {
                i += 2;
                while (i + 1 < n && t[i + 1] == q) i++; /* up to two quotes end the content */
                st = NORMAL;
            }
            break;
        }
        }
    }
}

/* bad-suppression for IDs that are not lint rules. */
static void check_suppressions(lint_t *l, const supp_vec_t *s)
{
    const char *cands[128];
    size_t n = 0;
    for (size_t i = 0; diag_table[i].id && n < 127; i++)
        if (!diag_table[i].config_error) cands[n++] = diag_table[i].id;
    cands[n] = NULL;
    for (size_t i = 0; i < s->n; i++) {
        char *id = xstrndup(s->v[i].id, s->v[i].idlen);
        const diag_info_t *info = diag_info(id);
        if (!info) {
            const char *sug = suggest(id, cands);
            if (sug)
                finding(l, "bad-suppression", s->v[i].span,
                        "'%s' is not a lint rule (did you mean '%s'?): this comment suppresses nothing", id, sug);
            else
                finding(l, "bad-suppression", s->v[i].span,
                        "'%s' is not a lint rule: this comment suppresses nothing (drun-policy lint --rules lists "
                        "them)", id);
        } else if (info->config_error) {
            finding(l, "bad-suppression", s->v[i].span,
                    "'%s' is a config error and cannot be suppressed: the compiler rejects the file whatever lint "
                    "says; fix the error", id);
        }
        free(id);
    }
}

static bool suppressed_by(const supp_vec_t *s, const diag_t *d)
{
    const diag_info_t *info = diag_info(d->id);
    if (!d->src || !info || info->config_error) return false;
    unsigned line = source_pos(d->src, d->span.start).line;
    for (size_t i = 0; i < s->n; i++) {
        const supp_t *x = &s->v[i];
        if ((x->line == line || x->line + 1 == line) && strlen(d->id) == x->idlen &&
            memcmp(d->id, x->id, x->idlen) == 0)
            return true;
    }
    return false;
}

/* ---- the driver ----------------------------------------------------------------------------------------- */

static int cmp_finding(const void *x, const void *y, void *base)
{
    const diag_t *a = &((const diag_t *)base)[*(const size_t *)x], *b = &((const diag_t *)base)[*(const size_t *)y];
    uint32_t sa = a->src ? a->span.start : 0, sb = b->src ? b->span.start : 0;
    if (sa != sb) return sa < sb ? -1 : 1;
    long ia = diag_index(a->id), ib = diag_index(b->id);
    if (ia != ib) return ia < ib ? -1 : 1;
    int c = strcmp(a->msg, b->msg);
    if (c) return c;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* Moves the raw findings into the report, sorted and split by suppression. */
static void finish(lint_t *l, const supp_vec_t *s, lint_report_t *out)
{
    size_t *idx = xcalloc(l->raw.n + 1, sizeof *idx);
    for (size_t i = 0; i < l->raw.n; i++) idx[i] = i;
    qsort_r(idx, l->raw.n, sizeof *idx, cmp_finding, l->raw.v);
    for (size_t i = 0; i < l->raw.n; i++) {
        diag_t d = l->raw.v[idx[i]];
        if (d.src && d.src != l->src) d.src = l->src; /* the policy's copy of the same text */
        vec_push(suppressed_by(s, &d) ? &out->suppressed : &out->findings, d);
    }
    free(idx);
    /* the messages now belong to the report; the sources go with it too */
    for (size_t i = 0; i < l->raw.owned.n; i++) diag_keep_source(&out->findings, l->raw.owned.v[i]);
    vec_free(&l->raw.owned);
    vec_free(&l->raw);
}

static bool load_facts(lint_t *l, const lint_opts_t *o, char **err)
{
    for (int t = 0; t < 2; t++) {
        if (o->facts[t]) l->facts[t] = o->facts[t];
        else if ((l->own_facts[t] = true), !(l->facts[t] = compile_facts_for(l->pol, (target_t)t, o->facts_files, err)))
            return false;
        l->res[t] = lattice_resolve(l->pol, l->facts[t]);
    }
    return true;
}

bool lint_run(source_t *src, const lint_opts_t *o, lint_report_t *out, char **err)
{
    memset(out, 0, sizeof *out);
    *err = NULL;
    lint_t l = {0};
    l.src = src;
    out->src = src;
    l.roots = (roots_t){LINT_WORKSPACE, LINT_SCRATCH, NULL, false};
    toml_error te;
    l.doc = toml_parse(src, TOML_1_1, &te);
    l.pol = policy_build(source_new(src->name, src->text, src->len), TOML_1_1, &l.raw);
    out->rejected = l.pol == NULL;
    bool ok = true;
    if (l.doc) tree_rules(&l);
    if (l.pol) {
        ok = load_facts(&l, o, err);
        if (ok) lattice_rules(&l);
    }
    supp_vec_t s = {0};
    scan_comments(&l, &s);
    check_suppressions(&l, &s);
    finish(&l, &s, out);
    diag_keep_source(&out->findings, src);
    vec_free(&s);
    for (int t = 0; t < 2; t++) {
        lattice_free(l.res[t]);
        if (l.own_facts[t]) facts_free(l.facts[t]);
    }
    policy_free(l.pol);
    if (l.doc) toml_doc_free(l.doc);
    strmap_free(&l.seen);
    arena_free(&l.a);
    if (!ok) lint_report_free(out);
    return ok;
}

void lint_report_free(lint_report_t *r)
{
    diag_list_free(&r->suppressed);
    diag_list_free(&r->findings);
    memset(r, 0, sizeof *r);
}

int lint_exit_status(const lint_report_t *r, bool strict)
{
    if (diag_count(&r->findings, SEV_ERROR) || r->rejected) return 1;
    return strict && diag_count(&r->findings, SEV_WARNING) ? 1 : 0;
}

/* ---- rendering ------------------------------------------------------------------------------------------- */

static void count_line(buf_t *out, size_t n, const char *what)
{
    buf_printf(out, "%zu %s%s", n, what, n == 1 ? "" : "s");
}

void lint_render_text(const lint_report_t *r, buf_t *out, bool color)
{
    diag_render_all(out, &r->findings, color);
    const char *name = r->src ? r->src->name : "<config>";
    size_t e = diag_count(&r->findings, SEV_ERROR), w = diag_count(&r->findings, SEV_WARNING),
           n = diag_count(&r->findings, SEV_NOTE);
    buf_printf(out, "%s: ", name);
    count_line(out, e, "error");
    buf_adds(out, ", ");
    count_line(out, w, "warning");
    buf_adds(out, ", ");
    count_line(out, n, "note");
    if (r->suppressed.n) buf_printf(out, " (%zu suppressed)", r->suppressed.n);
    if (r->rejected) buf_adds(out, "; the compiler rejects this policy");
    buf_addc(out, '\n');
}

static void finding_json(jw_t *j, const diag_t *d)
{
    const diag_info_t *info = diag_info(d->id);
    jw_obj(j);
    jw_key(j, "rule");
    jw_str(j, d->id);
    jw_key(j, "severity");
    jw_str(j, severity_name(d->sev));
    jw_key(j, "message");
    jw_str(j, d->msg);
    jw_key(j, "file");
    jw_str(j, d->src ? d->src->name : NULL);
    if (d->src) {
        srcpos_t s = source_pos(d->src, d->span.start), e = source_pos(d->src, d->span.end);
        jw_key(j, "line");
        jw_int(j, s.line);
        jw_key(j, "column");
        jw_int(j, s.col);
        jw_key(j, "end_line");
        jw_int(j, e.line);
        jw_key(j, "end_column");
        jw_int(j, e.col);
    }
    jw_key(j, "doc");
    jw_str(j, info ? info->anchor : NULL);
    jw_end(j);
}

void lint_render_json(const lint_report_t *r, buf_t *out)
{
    jw_t j;
    jw_init(&j, out, true);
    jw_obj(&j);
    jw_key(&j, "file");
    jw_str(&j, r->src ? r->src->name : NULL);
    jw_key(&j, "rejected");
    jw_bool(&j, r->rejected);
    jw_key(&j, "findings");
    jw_arr(&j);
    for (size_t i = 0; i < r->findings.n; i++) finding_json(&j, &r->findings.v[i]);
    jw_end(&j);
    jw_key(&j, "suppressed");
    jw_arr(&j);
    for (size_t i = 0; i < r->suppressed.n; i++) finding_json(&j, &r->suppressed.v[i]);
    jw_end(&j);
    jw_key(&j, "summary");
    jw_obj(&j);
    jw_key(&j, "errors");
    jw_int(&j, (int64_t)diag_count(&r->findings, SEV_ERROR));
    jw_key(&j, "warnings");
    jw_int(&j, (int64_t)diag_count(&r->findings, SEV_WARNING));
    jw_key(&j, "notes");
    jw_int(&j, (int64_t)diag_count(&r->findings, SEV_NOTE));
    jw_key(&j, "suppressed");
    jw_int(&j, (int64_t)r->suppressed.n);
    jw_end(&j);
    jw_end(&j);
    buf_addc(out, '\n');
}

/* A file name as a SARIF artifact URI: relative names stay relative (code
 * scanning resolves them against the checkout), absolute ones become
 * file:// URIs; every byte outside the unreserved set is percent-encoded. */
static void sarif_uri(buf_t *out, const char *name)
{
    if (name[0] == '/') buf_adds(out, "file://");
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            buf_addc(out, (char)*p);
        else
            buf_printf(out, "%%%02X", *p);
    }
}

static const char *sarif_level(severity_t s)
{
    return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

static void sarif_rules(jw_t *j)
{
    jw_arr(j);
    for (size_t i = 0; diag_table[i].id; i++) {
        const diag_info_t *d = &diag_table[i];
        jw_obj(j);
        jw_key(j, "id");
        jw_str(j, d->id);
        jw_key(j, "name");
        jw_str(j, d->id);
        jw_key(j, "shortDescription");
        jw_obj(j);
        jw_key(j, "text");
        jw_str(j, d->summary);
        jw_end(j);
        jw_key(j, "help");
        jw_obj(j);
        buf_t h = BUF_INIT;
        buf_printf(&h, "%s. See %s.", d->summary, d->anchor);
        jw_key(j, "text");
        jw_str(j, buf_cstr(&h));
        buf_free(&h);
        jw_end(j);
        jw_key(j, "defaultConfiguration");
        jw_obj(j);
        jw_key(j, "level");
        jw_str(j, sarif_level(d->sev));
        jw_end(j);
        jw_key(j, "properties");
        jw_obj(j);
        jw_key(j, "tags");
        jw_arr(j);
        jw_str(j, "security");
        jw_str(j, d->config_error ? "config-error" : "lint");
        jw_end(j);
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
}

static void sarif_result(jw_t *j, const diag_t *d, bool suppressed)
{
    jw_obj(j);
    jw_key(j, "ruleId");
    jw_str(j, d->id);
    long idx = diag_index(d->id);
    if (idx >= 0) {
        jw_key(j, "ruleIndex");
        jw_int(j, idx);
    }
    jw_key(j, "level");
    jw_str(j, sarif_level(d->sev));
    jw_key(j, "message");
    jw_obj(j);
    jw_key(j, "text");
    jw_str(j, d->msg);
    jw_end(j);
    jw_key(j, "locations");
    jw_arr(j);
    if (d->src) {
        srcpos_t s = source_pos(d->src, d->span.start), e = source_pos(d->src, d->span.end);
        if (e.line < s.line || (e.line == s.line && e.col <= s.col)) e = (srcpos_t){s.line, s.col + 1};
        jw_obj(j);
        jw_key(j, "physicalLocation");
        jw_obj(j);
        jw_key(j, "artifactLocation");
        jw_obj(j);
        buf_t uri = BUF_INIT;
        sarif_uri(&uri, d->src->name);
        jw_key(j, "uri");
        jw_str(j, buf_cstr(&uri));
        buf_free(&uri);
        jw_key(j, "index");
        jw_int(j, 0);
        jw_end(j);
        jw_key(j, "region");
        jw_obj(j);
        jw_key(j, "startLine");
        jw_int(j, s.line);
        jw_key(j, "startColumn");
        jw_int(j, s.col);
        jw_key(j, "endLine");
        jw_int(j, e.line);
        jw_key(j, "endColumn");
        jw_int(j, e.col);
        jw_end(j);
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
    if (suppressed) {
        jw_key(j, "suppressions");
        jw_arr(j);
        jw_obj(j);
        jw_key(j, "kind");
        jw_str(j, "inSource");
        jw_key(j, "justification");
        jw_str(j, "# drun-policy: allow comment");
        jw_end(j);
        jw_end(j);
    }
    jw_end(j);
}

void lint_render_sarif(const lint_report_t *r, buf_t *out)
{
    jw_t j;
    jw_init(&j, out, true);
    jw_obj(&j);
    jw_key(&j, "$schema");
    jw_str(&j, "https://json.schemastore.org/sarif-2.1.0.json");
    jw_key(&j, "version");
    jw_str(&j, "2.1.0");
    jw_key(&j, "runs");
    jw_arr(&j);
    jw_obj(&j);
    jw_key(&j, "tool");
    jw_obj(&j);
    jw_key(&j, "driver");
    jw_obj(&j);
    jw_key(&j, "name");
    jw_str(&j, "drun-policy");
    jw_key(&j, "version");
    jw_str(&j, DRUN_VERSION);
    jw_key(&j, "semanticVersion");
    jw_str(&j, DRUN_VERSION);
    jw_key(&j, "rules");
    sarif_rules(&j);
    jw_end(&j);
    jw_end(&j);
    jw_key(&j, "columnKind");
    jw_str(&j, "unicodeCodePoints");
    jw_key(&j, "artifacts");
    jw_arr(&j);
    if (r->src) {
        jw_obj(&j);
        jw_key(&j, "location");
        jw_obj(&j);
        buf_t uri = BUF_INIT;
        sarif_uri(&uri, r->src->name);
        jw_key(&j, "uri");
        jw_str(&j, buf_cstr(&uri));
        buf_free(&uri);
        jw_end(&j);
        jw_end(&j);
    }
    jw_end(&j);
    jw_key(&j, "results");
    jw_arr(&j);
    for (size_t i = 0; i < r->findings.n; i++) sarif_result(&j, &r->findings.v[i], false);
    for (size_t i = 0; i < r->suppressed.n; i++) sarif_result(&j, &r->suppressed.v[i], true);
    jw_end(&j);
    jw_end(&j);
    jw_end(&j);
    jw_end(&j);
    buf_addc(out, '\n');
}

void lint_render_rules(buf_t *out, bool json)
{
    if (!json) {
        for (size_t i = 0; diag_table[i].id; i++)
            buf_printf(out, "%-38s %-8s %s%s\n", diag_table[i].id, severity_name(diag_table[i].sev),
                       diag_table[i].config_error ? "(config error) " : "", diag_table[i].summary);
        return;
    }
    jw_t j;
    jw_init(&j, out, true);
    jw_arr(&j);
    for (size_t i = 0; diag_table[i].id; i++) {
        jw_obj(&j);
        jw_key(&j, "id");
        jw_str(&j, diag_table[i].id);
        jw_key(&j, "severity");
        jw_str(&j, severity_name(diag_table[i].sev));
        jw_key(&j, "config_error");
        jw_bool(&j, diag_table[i].config_error);
        jw_key(&j, "summary");
        jw_str(&j, diag_table[i].summary);
        jw_key(&j, "doc");
        jw_str(&j, diag_table[i].anchor);
        jw_end(&j);
    }
    jw_end(&j);
    buf_addc(out, '\n');
}
