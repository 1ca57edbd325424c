/* policy.h — the policy IR: what a config.toml means, with the source span of
 * every rule, independent of any target.
 *
 * Built by build.c from the TOML tree (policy_build), or from the embedded
 * default policy. Read by the lattice (level.c), the backends, lint, explain,
 * diff, and the runtime. One arena owns every string and rule; policy_free
 * releases it, the TOML tree and the source together.
 */
#ifndef DRUN_POLICY_H
#define DRUN_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "source.h"
#include "toml.h"

/* ---- access levels -------------------------------------------------------------- */

typedef enum {
    LVL_NONE = 0,
    LVL_READ = 1,
    LVL_WRITE = 2
} level_t;

const char *policy_level_name(level_t l); /* "none", "read", "write" */

/* ---- paths ----------------------------------------------------------------------- */

/* Where a policy path is anchored. ~ and ${HOME} are resolved against the
 * facts' home when the policy is built for a target, so the IR keeps them as
 * PB_HOME; ${WORKSPACE} and ${SCRATCH} stay symbolic until exec time. */
typedef enum {
    PB_ROOT,      /* "/..." */
    PB_HOME,      /* "~", "~/...", "${HOME}/..." */
    PB_WORKSPACE, /* "${WORKSPACE}/..." */
    PB_SCRATCH,   /* "${SCRATCH}/..." */
} path_base_t;

typedef struct ppath {
    path_base_t base;
    const char *rel; /* normalised rest below the base: "" or "a/b" (no leading or
                        trailing '/', no '.', '..' or empty components) */
    bool glob;       /* rel holds '*' or '?' (unescaped); see glob.h for syntax */
    bool anywhere;   /* a glob written "**" + "/..." : matches below any directory */
} ppath_t;

/* ---- filesystem rules -------------------------------------------------------------- */

typedef enum {
    RK_SYSTEM,      /* built-in system read set (no source span) */
    RK_PATH_DIR,    /* a $PATH directory (read_path_dirs) */
    RK_ALLOW_READ,  /* [filesystem] allow_read */
    RK_MOUNT,       /* mount_allowlist (read-only) */
    RK_ALLOW_WRITE, /* [filesystem] allow_write */
    RK_WORKSPACE,   /* the session workspace (always writable) */
    RK_SCRATCH,     /* the session scratch dir (always writable) */
    RK_DENY_READ,   /* [filesystem] deny_read: literal = grant none, glob = cap none */
    RK_DENY_WRITE,  /* [filesystem] deny_write: cap read */
    RK_PROTECT,     /* a [protect] pattern: cap read */
    RK_RUNTIME,     /* a runtime-owned path (SPEC §13): cap none, whatever the grants */
} rule_kind_t;

const char *policy_rule_kind_key(rule_kind_t k); /* "filesystem.allow_read", "mount_allowlist", ... */

typedef struct rule {
    rule_kind_t kind;
    ppath_t path;
    level_t level;       /* for a grant: the level it gives; for a cap: the ceiling */
    bool cap;            /* a cap (only lowers) rather than a grant */
    const char *written; /* the entry as written in the config (e.g. "~/.ssh") */
    const char *origin;  /* for built-ins: why it exists ("system read set",
                            "protect.git_hooks", "$PATH"); NULL for config entries */
    source_t *src;       /* where it came from (NULL for built-ins) */
    span_t span;         /* the array element in src */
} rule_t;

/* ---- other settings ------------------------------------------------------------------ */

typedef struct domain_rule {
    const char *written; /* as in the config */
    const char *pattern; /* normalised: lower-case, punycode, no trailing dot */
    int kind;            /* domain.h: DOMAIN_EXACT, DOMAIN_SUBDOMAINS, DOMAIN_ALL, DOMAIN_IP */
    span_t span;
} domain_rule_t;

typedef struct str_entry {
    const char *s; /* the string */
    span_t span;   /* where */
} str_entry_t;

typedef struct env_set {
    const char *name, *value;
    span_t span;
} env_set_t;

/* A scalar setting with its source location (span.end == 0: not in the file). */
typedef struct setting {
    int64_t v;
    span_t span;
    bool present; /* written in the config (vs the default) */
} setting_t;

/* Every integer/boolean key of SPEC §3.2 and §3.3, in one table so that the
 * schema, lint, explain, diff and the docs iterate the same list. */
typedef enum {
    S_FETCH_TIMEOUT_MS,
    S_CONNECT_TIMEOUT_MS,
    S_BASH_TIMEOUT_MS,
    S_MAX_WORKSPACE_MB,
    S_MAX_SESSIONS,
    S_MAX_CHECKPOINTS,
    S_SESSION_IDLE_TIMEOUT_SECS,
    S_SNAPSHOT_ON_CLOSE,
    S_WEB_PORT,
    S_PACKAGE_INSTALL_ENABLED,
    S_READ_PATH_DIRS,
    S_PROTECT_GIT_HOOKS,
    S_PROTECT_GIT_CONFIG,
    S_PROTECT_SHELL_RC,
    S_PROTECT_EDITOR_DIRS,
    S_PROTECT_AGENT_CONFIG,
    S_FETCH_MAX_BYTES,
    S_ALLOW_PRIVATE_ADDRESSES,
    S_ALLOW_UNIX_SOCKETS,
    S_MEMORY_MB,
    S_CPU_SECONDS,
    S_MAX_PROCESSES,
    S_MAX_FILE_SIZE_MB,
    S_MAX_OPEN_FILES,
    S_COUNT
} setting_id_t;

typedef struct policy {
    arena_t arena;                          /* owns every string and rule below */
    source_t *src;                          /* the config text (owned) */
    toml_doc *doc;                          /* the parsed tree (owned) */
    bool is_default;                        /* the embedded default policy */
    const char *path;                       /* config path as given (NULL for the default) */

    VEC(rule_t) rules;                      /* config rules in source order (not built-ins) */
    VEC(domain_rule_t) domains;
    bool domains_present;                   /* domain_allowlist written (else drun's three defaults) */
    VEC(domain_rule_t) command_domains;     /* [network] command_domains: hosts sandboxed commands
                                               reach through the proxy (SPEC §15); empty: no network */
    VEC(int) command_ports;                 /* [network] command_ports: ports the proxy connects to (80, 443) */
    VEC(domain_rule_t) registries[2];       /* [network] pip_registries, npm_registries: hosts
                                               session_package_install adds (public defaults) */
    VEC(str_entry_t) cmd_deny, cmd_allow;
    VEC(str_entry_t) env_allowlist;         /* names session_get_env may reveal */
    VEC(str_entry_t) env_passthrough;       /* [env] passthrough */
    VEC(env_set_t) env_set;                 /* [env] set */
    VEC(str_entry_t) overlay_paths;         /* mount_overlay_paths (drun; unenforced) */
    str_entry_t export_root, snapshots_dir; /* drun; unenforced */
    setting_t set[S_COUNT];                 /* integers and booleans (booleans as 0/1) */
} policy_t;

/* Metadata of one scalar setting: the schema, lint, docs and diff read it. */
typedef struct setting_info {
    setting_id_t id;
    const char *table; /* NULL for top-level drun keys, else "filesystem", "protect", ... */
    const char *key;   /* "bash_timeout_ms" */
    bool boolean;      /* a TOML boolean rather than an integer */
    int64_t def;       /* drun's default */
    int64_t min, max;  /* accepted range (integers) */
    bool enforced;     /* false: accepted for drun compatibility, not enforced yet */
    const char *unit;  /* "ms", "MB", "s", "bytes", "" */
    const char *doc;   /* one line */
} setting_info_t;

extern const setting_info_t policy_settings[S_COUNT];

/* ---- building ------------------------------------------------------------------------- */

/* Builds the IR from a parsed source. On any error, returns NULL and appends
 * every error of the file to diags (never a partial or default policy).
 * Takes ownership of src in every case: on failure diags keeps it alive for
 * the diagnostics (diag_keep_source), freed with diag_list_free. */
policy_t *policy_build(source_t *src, toml_version ver, diag_list_t *diags);

/* The embedded default policy of SPEC §3.6. Never fails. */
policy_t *policy_default(void);

/* Finds and builds the policy: path if not NULL ("builtin:default" is the
 * embedded default), else $DRUN_CONFIG, else
 * ~/.drun/config.toml if it exists, else the default. NULL with diags on a
 * config error or with *io_err set (caller frees) when the file cannot be read. */
policy_t *policy_load(const char *path, diag_list_t *diags, char **io_err);

void policy_free(policy_t *p);

int64_t policy_get(const policy_t *p, setting_id_t id);

/* May session_fetch reach host? host must be normalised (domain_host_normalize in
 * domain.h). *which (if not NULL) receives the deciding allowlist entry. */
bool policy_domain_allowed(const policy_t *p, const char *host, const domain_rule_t **which);

/* The same question for one of the policy's other host lists (command_domains,
 * a registry list): true when an entry of v[0..n) allows host. */
bool policy_domain_in(const domain_rule_t *v, size_t n, const char *host, const domain_rule_t **which);

#endif
