/* keys.h — the policy language's key table: every key the compiler accepts,
 * its table, kind and meaning. The schema walk, lint (unknown-key
 * suggestions, unenforced-key), the JSON Schema for editors, the docs and the
 * tests all read this one table, so they cannot drift apart.
 */
#ifndef DRUN_KEYS_H
#define DRUN_KEYS_H

#include <stdbool.h>

#include "policy.h"

typedef enum {
    KEY_SETTING,   /* integer or boolean: arg is a setting_id_t */
    KEY_PATHS,     /* array of policy paths: arg is the rule_kind_t */
    KEY_DOMAINS,   /* a host list: arg 0 domain_allowlist, 1 command_domains, 2 pip_registries,
                      3 npm_registries */
    KEY_PORTS,     /* an array of TCP ports (command_ports) */
    KEY_COMMANDS,  /* a command list: arg 0 deny, 1 allow */
    KEY_ENV_NAMES, /* array of environment variable names: arg 0 env_allowlist, 1 passthrough */
    KEY_NAMES,     /* array of plain names (mount_overlay_paths) */
    KEY_STRING,    /* one string (export_root, snapshots_dir): arg 0 / 1 */
    KEY_ENV_SET,   /* [env] set: a table of strings */
    KEY_TABLE,     /* a table of the language ([filesystem], ...) */
} key_kind_t;

typedef struct key_info {
    const char *table; /* NULL: top level; else the table name */
    const char *key;   /* the key */
    key_kind_t kind;
    int arg;           /* see key_kind_t */
    bool drun;         /* a drun key (SPEC §3.2), accepted as drun has it */
    bool enforced;     /* false: accepted for compatibility, reported by lint */
    const char *type;  /* for messages and the JSON Schema: "array of paths", ... */
    const char *doc;   /* one line: what it does here */
} key_info_t;

extern const key_info_t keys_table[]; /* terminated by a row with key == NULL */

/* The row for table.key (table NULL for top level), or NULL. */
const key_info_t *keys_find(const char *table, const char *key);

/* "filesystem.allow_read" or "domain_allowlist". Static storage per row. */
const char *keys_qualified(const key_info_t *k, char *buf, size_t n);

#endif
