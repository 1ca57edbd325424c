/* build.c — the TOML tree → policy IR walk (policy_build).
 *
 * Every key is looked up in the key table (keys.c); unknown keys, wrong
 * types, out-of-range values and bad paths are errors with the span of the
 * key or element that caused them. All errors of a file are collected; any
 * error means no policy at all — never a fallback to defaults (drun's hole).
 */
#include <stdlib.h>
#include <string.h>

#include "cmdlist.h"
#include "domain.h"
#include "keys.h"
#include "policy.h"
#include "ppath.h"
#include "suggest.h"

typedef struct walk {
    policy_t *p;
    diag_list_t *d;
    source_t *src;
} walk_t;

#define ERR(w, id, span, ...) diag_add((w)->d, SEV_ERROR, id, (w)->src, span, __VA_ARGS__)

static const char *article_type(toml_type t)
{
    switch (t) {
    case TOML_TABLE: return "a table";
    case TOML_ARRAY: return "an array";
    case TOML_STRING: return "a string";
    case TOML_INTEGER: return "an integer";
    case TOML_FLOAT: return "a float";
    case TOML_BOOL: return "a boolean";
    default: return "a date-time";
    }
}

/* "unknown key 'x' (did you mean 'y'?)", or "'x' belongs in the [t] table". */
static void unknown_key(walk_t *w, const char *table, const char *key, span_t span)
{
    const char *cands[128];
    size_t n = 0;
    for (const key_info_t *k = keys_table; k->key && n < 127; k++)
        if ((k->table == NULL) == (table == NULL) && (!table || strcmp(k->table, table) == 0))
            cands[n++] = k->key;
    cands[n] = NULL;
    const char *s = suggest(key, cands);
    char where[64] = "";
    if (table) snprintf(where, sizeof where, " in [%s]", table);
    if (s) {
        ERR(w, "unknown-key", span, "unknown key '%s'%s (did you mean '%s'?)", key, where, s);
        return;
    }
    for (const key_info_t *k = keys_table; k->key; k++) {
        if (strcmp(k->key, key) != 0) continue;
        if (k->table)
            ERR(w, "unknown-key", span, "unknown key '%s'%s: it belongs in the [%s] table", key, where,
                k->table);
        else
            ERR(w, "unknown-key", span, "unknown key '%s'%s: it is a top-level key (put it before "
                                        "the first [table])",
                key, where);
        return;
    }
    ERR(w, "unknown-key", span, "unknown key '%s'%s", key, where);
}

static bool want_type(walk_t *w, const toml_value *v, toml_type t, const char *name)
{
    if (toml_type_of(v) == t) return true;
    ERR(w, "type-mismatch", toml_span(v), "'%s' must be %s, not %s", name, article_type(t),
        article_type(toml_type_of(v)));
    return false;
}

/* A string with no NUL inside (TOML allows \u0000; nothing here wants one). */
static const char *want_string(walk_t *w, const toml_value *v, const char *name, size_t *len)
{
    if (!want_type(w, v, TOML_STRING, name)) return NULL;
    const char *s = toml_str(v, len);
    if (memchr(s, '\0', *len)) {
        ERR(w, "bad-value", toml_span(v), "'%s' may not contain a NUL character", name);
        return NULL;
    }
    return s;
}

static void do_setting(walk_t *w, setting_id_t id, const toml_value *v, const char *name)
{
    const setting_info_t *si = &policy_settings[id];
    setting_t *st = &w->p->set[id];
    if (si->boolean) {
        if (!want_type(w, v, TOML_BOOL, name)) return;
        st->v = toml_bool(v);
    } else {
        if (!want_type(w, v, TOML_INTEGER, name)) return;
        int64_t x = toml_int(v);
        if (x < si->min || x > si->max) {
            ERR(w, "bad-value", toml_span(v), "'%s' must be between %lld and %lld%s%s, not %lld", name,
                (long long)si->min, (long long)si->max, *si->unit ? " " : "", si->unit, (long long)x);
            return;
        }
        st->v = x;
    }
    st->present = true;
    st->span = toml_span(v);
}

static void do_paths(walk_t *w, rule_kind_t kind, const toml_value *arr, const char *name)
{
    if (!want_type(w, arr, TOML_ARRAY, name)) return;
    bool globs = kind == RK_DENY_READ || kind == RK_DENY_WRITE;
    for (size_t i = 0; i < toml_len(arr); i++) {
        const toml_value *e = toml_at(arr, i);
        size_t len;
        if (toml_type_of(e) != TOML_STRING) {
            ERR(w, "type-mismatch", toml_span(e), "each entry of '%s' must be a string (a path), not %s",
                name, article_type(toml_type_of(e)));
            continue;
        }
        const char *s = toml_str(e, &len);
        ppath_t pp;
        const char *msg;
        size_t off;
        if (!ppath_parse(s, len, globs, &w->p->arena, &pp, &msg, &off)) {
            bool rel = strncmp(msg, "relative path", 13) == 0;
            ERR(w, rel ? "relative-path" : "bad-path", toml_span(e), "%s in '%s': %s",
                rel ? "relative path" : "bad path", name, rel ? msg + 15 : msg);
            continue;
        }
        rule_t r = {0};
        r.kind = kind;
        r.path = pp;
        r.src = w->src;
        r.span = toml_span(e);
        r.written = arena_strndup(&w->p->arena, s, len);
        switch (kind) {
        case RK_ALLOW_READ:
        case RK_MOUNT: r.level = LVL_READ; break;
        case RK_ALLOW_WRITE: r.level = LVL_WRITE; break;
        case RK_DENY_READ:
            r.level = LVL_NONE;
            r.cap = pp.glob;
            break;
        case RK_DENY_WRITE:
            r.level = LVL_READ;
            r.cap = true;
            break;
        default: break;
        }
        vec_push(&w->p->rules, r);
    }
}

/* Arrays of strings checked one by one by check(); kept in *out. */
typedef bool (*entry_check_fn)(walk_t *w, const char *s, size_t len, span_t span, const char *name);

static void do_strings(walk_t *w, const toml_value *arr, const char *name, entry_check_fn check,
                       void *out_vec)
{
    VEC(str_entry_t) *out = out_vec;
    if (!want_type(w, arr, TOML_ARRAY, name)) return;
    for (size_t i = 0; i < toml_len(arr); i++) {
        const toml_value *e = toml_at(arr, i);
        if (toml_type_of(e) != TOML_STRING) {
            ERR(w, "type-mismatch", toml_span(e), "each entry of '%s' must be a string, not %s", name,
                article_type(toml_type_of(e)));
            continue;
        }
        size_t len;
        const char *s = toml_str(e, &len);
        if (memchr(s, '\0', len)) {
            ERR(w, "bad-value", toml_span(e), "an entry of '%s' may not contain a NUL character", name);
            continue;
        }
        if (check && !check(w, s, len, toml_span(e), name)) continue;
        str_entry_t se = {arena_strndup(&w->p->arena, s, len), toml_span(e)};
        vec_push(out, se);
    }
}

static bool env_name_ok(const char *s, size_t len)
{
    if (len == 0 || len > 255 || (s[0] >= '0' && s[0] <= '9')) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

static bool check_env_name(walk_t *w, const char *s, size_t len, span_t span, const char *name)
{
    if (env_name_ok(s, len)) return true;
    ERR(w, "bad-env-name", span, "'%.*s' in '%s' is not an environment variable name (letters, digits "
                                 "and '_', not starting with a digit)",
        (int)(len > 64 ? 64 : len), s, name);
    return false;
}

static bool check_command(walk_t *w, const char *s, size_t len, span_t span, const char *name)
{
    (void)len;
    char *err = NULL;
    if (cmdlist_entry_valid(s, &err)) return true;
    ERR(w, "bad-command-entry", span, "bad entry in '%s': %s", name, err);
    free(err);
    return false;
}

static bool check_plain_name(walk_t *w, const char *s, size_t len, span_t span, const char *name)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '/') {
            ERR(w, "bad-value", span, "an entry of '%s' must be a plain directory name (no '/', no "
                                      "control characters)",
                name);
            return false;
        }
    }
    if (len == 0 || (len <= 2 && memcmp(s, "..", len) == 0)) {
        ERR(w, "bad-value", span, "an entry of '%s' must be a directory name", name);
        return false;
    }
    return true;
}

/* The host list a KEY_DOMAINS row fills (keys.h). */
static void *domain_list(policy_t *p, int which)
{
    switch (which) {
    case 1: return &p->command_domains;
    case 2: return &p->registries[0];
    case 3: return &p->registries[1];
    default: return &p->domains;
    }
}

static void do_domains(walk_t *w, const toml_value *arr, const char *name, int which)
{
    if (!want_type(w, arr, TOML_ARRAY, name)) return;
    VEC(domain_rule_t) *dst = domain_list(w->p, which);
    if (which == 0) w->p->domains_present = true;
    dst->n = 0; /* a written list replaces the defaults (the registries have some) */
    for (size_t i = 0; i < toml_len(arr); i++) {
        const toml_value *e = toml_at(arr, i);
        if (toml_type_of(e) != TOML_STRING) {
            ERR(w, "type-mismatch", toml_span(e), "each entry of '%s' must be a string (a host name), not %s",
                name, article_type(toml_type_of(e)));
            continue;
        }
        size_t len;
        const char *s = toml_str(e, &len);
        domain_entry_t de;
        char *err = NULL;
        if (memchr(s, '\0', len) || !domain_entry_parse(s, &de, &err)) {
            ERR(w, "bad-domain", toml_span(e), "bad entry in '%s': %s", name,
                err ? err : "a host name may not contain a NUL character");
            free(err);
            continue;
        }
        domain_rule_t dr = {arena_strndup(&w->p->arena, s, len), arena_strdup(&w->p->arena, de.pattern),
                            de.kind, toml_span(e)};
        domain_entry_free(&de);
        vec_push(dst, dr);
    }
}

/* [network] command_ports: TCP ports 1..65535, each once. */
static void do_ports(walk_t *w, const toml_value *arr, const char *name)
{
    if (!want_type(w, arr, TOML_ARRAY, name)) return;
    w->p->command_ports.n = 0;
    for (size_t i = 0; i < toml_len(arr); i++) {
        const toml_value *e = toml_at(arr, i);
        if (toml_type_of(e) != TOML_INTEGER) {
            ERR(w, "type-mismatch", toml_span(e), "each entry of '%s' must be an integer (a TCP port), not %s",
                name, article_type(toml_type_of(e)));
            continue;
        }
        int64_t port = toml_int(e);
        if (port < 1 || port > 65535) {
            ERR(w, "bad-value", toml_span(e), "an entry of '%s' must be a TCP port between 1 and 65535, not %lld",
                name, (long long)port);
            continue;
        }
        vec_push(&w->p->command_ports, (int)port);
    }
}

static void do_env_set(walk_t *w, const toml_value *tab)
{
    if (!want_type(w, tab, TOML_TABLE, "env.set")) return;
    for (size_t i = 0; i < toml_len(tab); i++) {
        size_t klen, vlen;
        const char *k = toml_key_at(tab, i, &klen);
        const toml_value *v = toml_value_at(tab, i);
        span_t ks = toml_key_span_at(tab, i);
        if (!env_name_ok(k, klen)) {
            ERR(w, "bad-env-name", ks, "'%.*s' in [env] set is not an environment variable name (letters, "
                                       "digits and '_', not starting with a digit)",
                (int)(klen > 64 ? 64 : klen), k);
            continue;
        }
        const char *s = want_string(w, v, "env.set", &vlen);
        if (!s) continue;
        env_set_t es = {arena_strndup(&w->p->arena, k, klen), arena_strndup(&w->p->arena, s, vlen), ks};
        vec_push(&w->p->env_set, es);
    }
}

static void walk_table(walk_t *w, const char *table, const toml_value *tab);

static void do_key(walk_t *w, const key_info_t *k, const toml_value *v)
{
    char q[96];
    const char *name = keys_qualified(k, q, sizeof q);
    policy_t *p = w->p;
    switch (k->kind) {
    case KEY_SETTING: do_setting(w, (setting_id_t)k->arg, v, name); break;
    case KEY_PATHS: do_paths(w, (rule_kind_t)k->arg, v, name); break;
    case KEY_DOMAINS: do_domains(w, v, name, k->arg); break;
    case KEY_PORTS: do_ports(w, v, name); break;
    case KEY_COMMANDS: do_strings(w, v, name, check_command, k->arg ? (void *)&p->cmd_allow : (void *)&p->cmd_deny); break;
    case KEY_ENV_NAMES:
        do_strings(w, v, name, check_env_name, k->arg ? (void *)&p->env_passthrough : (void *)&p->env_allowlist);
        break;
    case KEY_NAMES: do_strings(w, v, name, check_plain_name, &p->overlay_paths); break;
    case KEY_STRING: {
        size_t len;
        const char *s = want_string(w, v, name, &len);
        if (!s) break;
        str_entry_t *dst = k->arg ? &p->snapshots_dir : &p->export_root;
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
                ERR(w, "bad-value", toml_span(v), "'%s' may not contain control characters", name);
                return;
            }
        dst->s = arena_strndup(&p->arena, s, len);
        dst->span = toml_span(v);
        break;
    }
    case KEY_ENV_SET: do_env_set(w, v); break;
    case KEY_TABLE:
        if (want_type(w, v, TOML_TABLE, name)) walk_table(w, k->key, v);
        break;
    }
}

static void walk_table(walk_t *w, const char *table, const toml_value *tab)
{
    for (size_t i = 0; i < toml_len(tab); i++) {
        size_t klen;
        const char *key = toml_key_at(tab, i, &klen);
        span_t ks = toml_key_span_at(tab, i);
        const key_info_t *k = memchr(key, '\0', klen) ? NULL : keys_find(table, key);
        if (!k) {
            char shown[80];
            size_t n = klen < 64 ? klen : 64;
            for (size_t j = 0; j < n; j++) shown[j] = (unsigned char)key[j] < 0x20 ? '?' : key[j];
            shown[n] = '\0';
            unknown_key(w, table, shown, ks);
            continue;
        }
        do_key(w, k, toml_value_at(tab, i));
    }
}

static void set_defaults(policy_t *p)
{
    for (int i = 0; i < S_COUNT; i++) p->set[i].v = policy_settings[i].def;
    p->export_root.s = "drun-export";
    p->snapshots_dir.s = "drun-snapshots";
    static const char *const overlays[] = {"node_modules", ".venv", "venv", "target", "__pycache__", ".git"};
    for (size_t i = 0; i < sizeof overlays / sizeof *overlays; i++) {
        str_entry_t e = {overlays[i], {0, 0}};
        vec_push(&p->overlay_paths, e);
    }
    /* the proxy's ports and the package managers' public registries */
    vec_push(&p->command_ports, 80);
    vec_push(&p->command_ports, 443);
    static const char *const pip[] = {"pypi.org", "files.pythonhosted.org"};
    for (size_t i = 0; i < 2; i++) {
        domain_rule_t dr = {pip[i], pip[i], DOMAIN_EXACT, {0, 0}};
        vec_push(&p->registries[0], dr);
    }
    domain_rule_t npm = {"registry.npmjs.org", "registry.npmjs.org", DOMAIN_EXACT, {0, 0}};
    vec_push(&p->registries[1], npm);
}

/* drun's built-in fetch allowlist, used when the key is absent (drun does). */
static void default_domains(policy_t *p)
{
    static const char *const d[] = {"pypi.org", "files.pythonhosted.org", "cdn.jsdelivr.net"};
    for (size_t i = 0; i < 3; i++) {
        domain_rule_t dr = {d[i], d[i], DOMAIN_EXACT, {0, 0}};
        vec_push(&p->domains, dr);
    }
}

policy_t *policy_build(source_t *src, toml_version ver, diag_list_t *diags)
{
    policy_t *p = xcalloc(1, sizeof *p);
    p->src = src;
    set_defaults(p);
    toml_error te;
    p->doc = toml_parse(src, ver, &te);
    if (!p->doc) {
        diag_add(diags, SEV_ERROR, "syntax", src, te.span, "%s", te.msg);
        diag_keep_source(diags, src); /* the diagnostic points into it */
        p->src = NULL;
        policy_free(p);
        return NULL;
    }
    size_t before = diag_count(diags, SEV_ERROR);
    walk_t w = {p, diags, src};
    /* The default overlay list is replaced, not extended, by the config's. */
    const toml_value *root = toml_root(p->doc);
    if (toml_get(root, "mount_overlay_paths")) p->overlay_paths.n = 0;
    walk_table(&w, NULL, root);
    if (!p->domains_present) default_domains(p);
    if (diag_count(diags, SEV_ERROR) > before) {
        diag_keep_source(diags, src);
        p->src = NULL;
        policy_free(p);
        return NULL;
    }
    return p;
}
