/* lint_rules_tree.c — the lint rules that need only the TOML tree: keys
 * drun-policy does not enforce, wildcard and IP domains, protect switches
 * turned off, interpreters on the command allowlist, secrets passed through
 * the environment, the process limit. They run even when the policy is
 * rejected, so a file with a config error still gets them.
 */
#include "lint_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "keys.h"
#include "suggest.h"

/* ---- small helpers ----------------------------------------------------------------------------------- */

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
        lint_finding(l, "unenforced-key", toml_key_span_at(tab, i),
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
    const toml_value *doms = lint_tget(root, "domain_allowlist");
    const toml_value *wild = NULL;
    if (!doms) {
        lint_finding(l, "default-domain-allowlist", (span_t){0, 0},
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
                lint_finding(l, "wildcard-domain", toml_span(toml_at(doms, i)), "%s", why);
            free(why);
            if (!wild && is_wildcard_domain(s) && c != DOMAIN_WARN_URL) wild = toml_at(doms, i);
        }
    }
    /* [network] command_domains (SPEC §15): the same classes, said for what
     * they open there; a host in both lists is fine */
    const toml_value *cmds = lint_tget(lint_tget(root, "network"), "command_domains");
    for (size_t i = 0; cmds && toml_type_of(cmds) == TOML_ARRAY && i < toml_len(cmds); i++) {
        const char *s = tstr(toml_at(cmds, i));
        if (!s) continue;
        domain_lint_t c = domain_text_lint(s, NULL);
        if (c == DOMAIN_WARN_ALL)
            lint_finding(l, "wildcard-domain", toml_span(toml_at(cmds, i)),
                         "'*' in command_domains lets sandboxed commands reach every host name through the proxy; "
                         "list the hosts they need instead");
        else if (c == DOMAIN_WARN_SUFFIX)
            lint_finding(l, "wildcard-domain", toml_span(toml_at(cmds, i)),
                         "'%s' in command_domains covers a public suffix, so sandboxed commands reach any site "
                         "registered under it; list the sites they need instead",
                         s);
    }
    const toml_value *priv = lint_tget(lint_tget(root, "network"), "allow_private_addresses");
    if (is_true(priv) && wild)
        lint_finding(l, "private-addresses-with-wildcard", toml_span(priv),
                     "allow_private_addresses = true with the wildcard '%s' (line %u) lets session_fetch reach any "
                     "internal service whose name resolves to a private or metadata address (any DNS name can); "
                     "list exact hosts, or set allow_private_addresses = false",
                     tstr(wild), lint_line_of(l, toml_span(wild)));
    const toml_value *mounts = lint_tget(root, "mount_allowlist");
    if (mounts && toml_type_of(mounts) == TOML_ARRAY && toml_len(mounts) == 0)
        lint_finding(l, "empty-mount-allowlist-is-none", lint_key_span(root, "mount_allowlist"),
                     "an empty mount_allowlist gives the sandbox no host paths (drun read it as every path); "
                     "list the directories to share read-only, or remove the key");
}

/* writable-git-without-hooks-protection, protection-disabled. */
static void rule_protect_tree(lint_t *l, const toml_value *root)
{
    const toml_value *prot = lint_tget(root, "protect");
    static const struct {
        const char *key, *what;
    } git[] = {
        {"git_hooks", "the sandbox can write .git/hooks in the workspace and in every writable repository, and "
                      "the host runs those hooks at its next git command"},
        {"git_config", "the sandbox can write .git/config, whose core.hooksPath and core.fsmonitor run commands "
                       "on the host at its next git command"},
    };
    for (size_t i = 0; i < sizeof git / sizeof *git; i++) {
        const toml_value *v = lint_tget(prot, git[i].key);
        if (is_false(v))
            lint_finding(l, "writable-git-without-hooks-protection", toml_span(v),
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
        const toml_value *v = lint_tget(prot, other[i].key);
        if (is_false(v))
            lint_finding(l, "protection-disabled", toml_span(v),
                         "[protect] %s = false: %s, and the sandbox may now write them; remove the line unless the "
                         "agent must edit them",
                         other[i].key, other[i].what);
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
    const toml_value *deny = lint_tget(root, "bash_command_denylist"), *allow = lint_tget(root, "bash_command_allowlist");
    if (deny && toml_type_of(deny) == TOML_ARRAY && toml_len(deny))
        lint_finding(l, "command-list-advisory", lint_key_span(root, "bash_command_denylist"),
                     "bash_command_denylist is a guardrail, not a boundary: a denied command still runs through an "
                     "interpreter or a script (python3 -c, sh ./x.sh); rely on the filesystem and network rules to "
                     "contain what runs");
    if (!allow || toml_type_of(allow) != TOML_ARRAY || !toml_len(allow)) return;
    lint_finding(l, "command-list-advisory", lint_key_span(root, "bash_command_allowlist"),
                 "bash_command_allowlist limits which commands session_bash starts, not what they do; the filesystem "
                 "and network rules are the boundary");
    for (size_t i = 0; i < toml_len(allow); i++) {
        const char *s = tstr(toml_at(allow, i));
        if (!s) continue;
        size_t n = strcspn(s + strspn(s, " \t"), " \t");
        char *word = xstrndup(s + strspn(s, " \t"), n);
        const char *why = interpreter_why(word);
        if (why)
            lint_finding(l, "allowlist-interpreter", toml_span(toml_at(allow, i)),
                         "'%s' in bash_command_allowlist: %s, so the allowlist no longer limits what runs; remove it, "
                         "or allow the specific commands instead",
                         word, why);
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
    const toml_value *env = lint_tget(root, "env");
    struct {
        const toml_value *arr;
        const char *key, *what;
    } lists[] = {
        {lint_tget(env, "passthrough"), "env.passthrough", "copies it from the host into every sandboxed command"},
        {lint_tget(root, "env_allowlist"), "env_allowlist", "lets session_get_env reveal it to the model"},
    };
    for (size_t k = 0; k < 2; k++) {
        if (!lists[k].arr || toml_type_of(lists[k].arr) != TOML_ARRAY) continue;
        for (size_t i = 0; i < toml_len(lists[k].arr); i++) {
            const char *s = tstr(toml_at(lists[k].arr, i));
            if (s && secret_name(s))
                lint_finding(l, "secret-env", toml_span(toml_at(lists[k].arr, i)),
                             "'%s' looks like a credential and %s %s; remove it, or give the sandbox a token scoped "
                             "to what the agent must do",
                             s, lists[k].key, lists[k].what);
        }
    }
    const toml_value *set = lint_tget(env, "set");
    if (!set || toml_type_of(set) != TOML_TABLE) return;
    for (size_t i = 0; i < toml_len(set); i++) {
        size_t klen;
        const char *k = toml_key_at(set, i, &klen);
        if (!memchr(k, '\0', klen) && secret_name(k))
            lint_finding(l, "secret-env", toml_key_span_at(set, i),
                         "'%s' looks like a credential and env.set writes its value into the policy file, where every "
                         "reviewer and artifact sees it; pass it with env.passthrough from a scoped host variable, or "
                         "remove it",
                         k);
    }
}

/* unenforceable-on-target for RLIMIT_NPROC. */
static void rule_nproc_tree(lint_t *l, const toml_value *root)
{
    const toml_value *v = lint_tget(lint_tget(root, "process"), "max_processes");
    if (v)
        lint_finding(l, "unenforceable-on-target", toml_span(v),
                     "max_processes sets RLIMIT_NPROC, which counts the processes of the host user drun-mcp runs as "
                     "and is not enforced for root: when drun-mcp runs as root it limits nothing; run drun-mcp as an "
                     "unprivileged user");
}

void lint_rules_tree(lint_t *l)
{
    const toml_value *root = toml_root(l->doc);
    rule_unenforced_keys(l, NULL, root);
    rule_network_tree(l, root);
    rule_protect_tree(l, root);
    rule_commands_tree(l, root);
    rule_env_tree(l, root);
    rule_nproc_tree(l, root);
}
