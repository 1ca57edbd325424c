/* cmd_schema.c — `drun-policy schema`: the JSON Schema (draft-07) of the
 * policy language, generated from the key table (keys.c) and from the policy
 * an empty config builds (for the defaults), so editors (Taplo, Even Better
 * TOML) complete and check exactly the keys, types and ranges the compiler
 * accepts. docs/config.schema.json is this output, committed; the 72-schema
 * suite fails when the two differ.
 *
 * The schema is a first line of defence for the editor, never the authority:
 * it is never looser than the compiler about a key, a type or a range, and
 * checks paths, names and entries only as far as a regular expression can
 * (the compiler also parses globs, domains and command entries in full).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonw.h"
#include "keys.h"

/* Regular expressions, in the subset ECMA-262, Rust's regex crate and
 * fancy-regex agree on (no look-around): Taplo compiles them with Rust. */
#define RE_BASE "(/|~(/|$)|\\$\\{(HOME|WORKSPACE|SCRATCH)\\}(/|$)"
/* A literal path: every '*' and '?' escaped with a backslash (glob.c). */
#define RE_PATH "^" RE_BASE ")(?:[^*?\\\\\\x00-\\x1f\\x7f]|\\\\[*?]?)*$"
#define RE_GLOB "^" RE_BASE "|\\*\\*(/|$))[^\\x00-\\x1f\\x7f]*$"
#define RE_DOTDOT "(^|/)\\.\\.(/|$)"
#define RE_ENV_NAME "^[A-Za-z_][A-Za-z0-9_]*$"
#define RE_NO_CONTROL "^[^\\x00-\\x1f\\x7f]*$"

static void str_prop(jw_t *j, const char *k, const char *v)
{
    jw_key(j, k);
    jw_str(j, v);
}

/* "not": {"pattern": RE_DOTDOT} — a '..' component is an error (ppath.c). */
static void not_dotdot(jw_t *j)
{
    jw_key(j, "not");
    jw_obj(j);
    str_prop(j, "pattern", RE_DOTDOT);
    jw_end(j);
}

/* The shared item schemas, named by the array keys through "$ref". */
static void definitions(jw_t *j)
{
    jw_key(j, "definitions");
    jw_obj(j);
    jw_key(j, "path");
    jw_obj(j);
    str_prop(j, "description", "an absolute path, ~ or ~/..., or ${HOME}, ${WORKSPACE} or ${SCRATCH} "
                               "followed by /...; no '..' component, no control character; '*' and '?' "
                               "only escaped (\\* \\?): globs are for deny_read and deny_write");
    str_prop(j, "type", "string");
    str_prop(j, "pattern", RE_PATH);
    not_dotdot(j);
    jw_end(j);
    jw_key(j, "path_or_glob");
    jw_obj(j);
    str_prop(j, "description", "a path as above, or a glob: '*' within a component, '**' across "
                               "components, '?' one character; a glob starting with **/ matches anywhere");
    str_prop(j, "type", "string");
    str_prop(j, "pattern", RE_GLOB);
    not_dotdot(j);
    jw_end(j);
    jw_key(j, "domain");
    jw_obj(j);
    str_prop(j, "description", "\"example.com\" exactly, \"*.example.com\" any subdomain (not example.com "
                               "itself), \"*\" every host, or an IP literal");
    str_prop(j, "type", "string");
    jw_key(j, "minLength");
    jw_int(j, 1);
    jw_end(j);
    jw_key(j, "command");
    jw_obj(j);
    str_prop(j, "description", "a shell-word pattern: \"rm -rf\" matches rm with -r and -f in any order "
                               "or bundle (docs/command-lists.md)");
    str_prop(j, "type", "string");
    str_prop(j, "pattern", "\\S");
    jw_end(j);
    jw_key(j, "env_name");
    jw_obj(j);
    str_prop(j, "description", "an environment variable name: letters, digits and '_', not starting with a digit");
    str_prop(j, "type", "string");
    str_prop(j, "pattern", RE_ENV_NAME);
    jw_key(j, "maxLength");
    jw_int(j, 255);
    jw_end(j);
    jw_key(j, "dir_name");
    jw_obj(j);
    str_prop(j, "description", "a plain directory name: no '/', no control character, not '.' or '..'");
    str_prop(j, "type", "string");
    str_prop(j, "pattern", "^[^/\\x00-\\x1f\\x7f]+$");
    jw_key(j, "not");
    jw_obj(j);
    jw_key(j, "enum");
    jw_arr(j);
    jw_str(j, ".");
    jw_str(j, "..");
    jw_end(j);
    jw_end(j);
    jw_end(j);
    jw_key(j, "port");
    jw_obj(j);
    str_prop(j, "description", "a TCP port");
    str_prop(j, "type", "integer");
    jw_key(j, "minimum");
    jw_int(j, 1);
    jw_key(j, "maximum");
    jw_int(j, 65535);
    jw_end(j);
    jw_end(j);
}

/* The item definition an array key refers to. */
static const char *item_ref(const key_info_t *k)
{
    switch (k->kind) {
    case KEY_PATHS:
        return k->arg == RK_DENY_READ || k->arg == RK_DENY_WRITE ? "#/definitions/path_or_glob"
                                                                 : "#/definitions/path";
    case KEY_DOMAINS: return "#/definitions/domain";
    case KEY_COMMANDS: return "#/definitions/command";
    case KEY_ENV_NAMES: return "#/definitions/env_name";
    case KEY_NAMES: return "#/definitions/dir_name";
    case KEY_PORTS: return "#/definitions/port";
    default: return NULL;
    }
}

static void str_entries(jw_t *j, const str_entry_t *v, size_t n)
{
    jw_arr(j);
    for (size_t i = 0; i < n; i++) jw_str(j, v[i].s);
    jw_end(j);
}

/* "default": what the key is when the file does not have it — read off the
 * policy an empty config builds, so it is the compiler's own default. */
static void default_value(jw_t *j, const key_info_t *k, const policy_t *empty)
{
    if (k->kind == KEY_TABLE) return;
    jw_key(j, "default");
    switch (k->kind) {
    case KEY_SETTING: {
        const setting_info_t *s = &policy_settings[k->arg];
        if (s->boolean) jw_bool(j, empty->set[k->arg].v != 0);
        else jw_int(j, empty->set[k->arg].v);
        break;
    }
    case KEY_PATHS:
        jw_arr(j);
        for (size_t i = 0; i < empty->rules.n; i++)
            if ((int)empty->rules.v[i].kind == k->arg) jw_str(j, empty->rules.v[i].written);
        jw_end(j);
        break;
    case KEY_DOMAINS: {
        const domain_rule_t *v = k->arg == 1 ? empty->command_domains.v : k->arg >= 2 ? empty->registries[k->arg - 2].v
                                                                                      : empty->domains.v;
        size_t n = k->arg == 1 ? empty->command_domains.n : k->arg >= 2 ? empty->registries[k->arg - 2].n
                                                                        : empty->domains.n;
        jw_arr(j);
        for (size_t i = 0; i < n; i++) jw_str(j, v[i].written);
        jw_end(j);
        break;
    }
    case KEY_PORTS:
        jw_arr(j);
        for (size_t i = 0; i < empty->command_ports.n; i++) jw_int(j, empty->command_ports.v[i]);
        jw_end(j);
        break;
    case KEY_COMMANDS:
        if (k->arg) str_entries(j, empty->cmd_allow.v, empty->cmd_allow.n);
        else str_entries(j, empty->cmd_deny.v, empty->cmd_deny.n);
        break;
    case KEY_ENV_NAMES:
        if (k->arg) str_entries(j, empty->env_passthrough.v, empty->env_passthrough.n);
        else str_entries(j, empty->env_allowlist.v, empty->env_allowlist.n);
        break;
    case KEY_NAMES: str_entries(j, empty->overlay_paths.v, empty->overlay_paths.n); break;
    case KEY_STRING: jw_str(j, k->arg ? empty->snapshots_dir.s : empty->export_root.s); break;
    case KEY_ENV_SET:
        jw_obj(j);
        for (size_t i = 0; i < empty->env_set.n; i++) str_prop(j, empty->env_set.v[i].name, empty->env_set.v[i].value);
        jw_end(j);
        break;
    case KEY_TABLE: break;
    }
}

/* One line for the editor's hover: what it does, the unit, where it comes
 * from, and whether anything enforces it. */
static void description(jw_t *j, const key_info_t *k)
{
    buf_t b = BUF_INIT;
    const setting_info_t *s = k->kind == KEY_SETTING ? &policy_settings[k->arg] : NULL;
    buf_adds(&b, s ? s->doc : k->doc);
    buf_addc(&b, '.');
    if (s && *s->unit) buf_printf(&b, " Unit: %s.", s->unit);
    if (k->drun) buf_adds(&b, " A drun key, with drun's type and default.");
    if (!k->enforced)
        buf_adds(&b, " Accepted so a drun config compiles, but not enforced: lint reports it as unenforced-key.");
    str_prop(j, "description", buf_cstr(&b));
    buf_free(&b);
}

static void table_schema(jw_t *j, const char *table, const char *doc, const policy_t *empty);

static void key_schema(jw_t *j, const key_info_t *k, const policy_t *empty)
{
    jw_key(j, k->key);
    if (k->kind == KEY_TABLE) {
        table_schema(j, k->key, k->doc, empty);
        return;
    }
    jw_obj(j);
    description(j, k);
    const setting_info_t *s = k->kind == KEY_SETTING ? &policy_settings[k->arg] : NULL;
    if (s && s->boolean) {
        str_prop(j, "type", "boolean");
    } else if (s) {
        str_prop(j, "type", "integer");
        jw_key(j, "minimum");
        jw_int(j, s->min);
        jw_key(j, "maximum");
        jw_int(j, s->max);
    } else if (k->kind == KEY_STRING) {
        str_prop(j, "type", "string");
        str_prop(j, "pattern", RE_NO_CONTROL);
    } else if (k->kind == KEY_ENV_SET) {
        str_prop(j, "type", "object");
        jw_key(j, "propertyNames");
        jw_obj(j);
        str_prop(j, "$ref", "#/definitions/env_name");
        jw_end(j);
        /* the names are the user's; each value is a string without NUL */
        jw_key(j, "additionalProperties");
        jw_obj(j);
        str_prop(j, "type", "string");
        str_prop(j, "pattern", "^[^\\x00]*$");
        jw_end(j);
    } else {
        str_prop(j, "type", "array");
        jw_key(j, "items");
        jw_obj(j);
        str_prop(j, "$ref", item_ref(k));
        jw_end(j);
    }
    default_value(j, k, empty);
    jw_end(j);
}

/* An object with one property per key of `table` (NULL: the top level) and
 * nothing else: an unknown key is an error to the compiler too. */
static void table_schema(jw_t *j, const char *table, const char *doc, const policy_t *empty)
{
    jw_obj(j);
    if (!table) {
        str_prop(j, "$schema", "http://json-schema.org/draft-07/schema#");
        str_prop(j, "title", "drun-policy config.toml");
    }
    str_prop(j, "description", doc);
    str_prop(j, "type", "object");
    if (!table) definitions(j);
    jw_key(j, "properties");
    jw_obj(j);
    for (const key_info_t *k = keys_table; k->key; k++) {
        if ((k->table == NULL) != (table == NULL)) continue;
        if (table && strcmp(k->table, table) != 0) continue;
        key_schema(j, k, empty);
    }
    jw_end(j);
    jw_key(j, "additionalProperties");
    jw_bool(j, false);
    jw_end(j);
}

int cmd_schema(const cli_args_t *a)
{
    (void)a;
    diag_list_t d = {0};
    policy_t *empty = policy_build(source_new("<empty>", "", 0), TOML_1_1, &d);
    diag_list_free(&d);
    if (!empty) {
        fprintf(stderr, "drun-policy schema: an empty config does not compile (a compiler defect)\n");
        return EXIT_USAGE;
    }
    buf_t b = BUF_INIT;
    jw_t j;
    jw_init(&j, &b, true);
    table_schema(&j, NULL,
                 "A drun-policy sandbox policy: drun's config.toml keys plus the [filesystem], [protect], "
                 "[network], [process] and [env] tables (docs/policy.md, drun-policy.toml(5)). Generated "
                 "by 'drun-policy schema' from the compiler's key table; the compiler is the authority.",
                 empty);
    buf_addc(&b, '\n');
    fwrite(b.p, 1, b.len, stdout);
    buf_free(&b);
    policy_free(empty);
    return EXIT_OK;
}
