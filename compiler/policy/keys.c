/* keys.c — the key and setting tables of the policy language (see keys.h).
 * Defaults are drun's where drun has the key; ranges are what a sane host
 * can honour (a zero timeout or a 0-process limit is a typo, not a policy). */
#include "keys.h"

#include <stdio.h>
#include <string.h>

#define MS_HOUR 3600000LL
#define MB_TB 1048576LL

const setting_info_t policy_settings[S_COUNT] = {
    [S_FETCH_TIMEOUT_MS] = {S_FETCH_TIMEOUT_MS, NULL, "fetch_timeout_ms", false, 60000, 1, MS_HOUR, true, "ms",
                            "timeout for a whole session_fetch response"},
    [S_CONNECT_TIMEOUT_MS] = {S_CONNECT_TIMEOUT_MS, NULL, "connect_timeout_ms", false, 30000, 1, 600000, true, "ms",
                              "TCP connect timeout for session_fetch"},
    [S_BASH_TIMEOUT_MS] = {S_BASH_TIMEOUT_MS, NULL, "bash_timeout_ms", false, 30000, 1, 24 * MS_HOUR, true, "ms",
                           "wall-time limit of one session_bash call (the process group is killed)"},
    [S_MAX_WORKSPACE_MB] = {S_MAX_WORKSPACE_MB, NULL, "max_workspace_mb", false, 512, 1, MB_TB, true, "MB",
                            "largest workspace a session may hold (file tools refuse past it)"},
    [S_MAX_SESSIONS] = {S_MAX_SESSIONS, NULL, "max_sessions", false, 50, 1, 10000, true, "",
                        "concurrent sessions"},
    [S_MAX_CHECKPOINTS] = {S_MAX_CHECKPOINTS, NULL, "max_checkpoints", false, 200, 0, 1000000, true, "",
                           "checkpoints kept in a session's history (older ones are forgotten; 0 keeps one)"},
    [S_SESSION_IDLE_TIMEOUT_SECS] = {S_SESSION_IDLE_TIMEOUT_SECS, NULL, "session_idle_timeout_secs", false, 3600, 1,
                                     31536000, true, "s", "idle time after which a session is closed"},
    [S_SNAPSHOT_ON_CLOSE] = {S_SNAPSHOT_ON_CLOSE, NULL, "snapshot_on_close", true, 0, 0, 1, false, "",
                             "drun: snapshot a session when it closes"},
    [S_WEB_PORT] = {S_WEB_PORT, NULL, "web_port", false, 7274, 0, 65535, false, "",
                    "drun: port of the trajectory viewer (0 disables)"},
    [S_PACKAGE_INSTALL_ENABLED] = {S_PACKAGE_INSTALL_ENABLED, NULL, "package_install_enabled", true, 0, 0, 1, true,
                                   "", "let session_package_install run pip or npm into the workspace"},
    [S_READ_PATH_DIRS] = {S_READ_PATH_DIRS, "filesystem", "read_path_dirs", true, 1, 0, 1, true, "",
                          "add every existing $PATH directory to the read set (drun does)"},
    [S_PROTECT_GIT_HOOKS] = {S_PROTECT_GIT_HOOKS, "protect", "git_hooks", true, 1, 0, 1, true, "",
                             "**/.git/hooks is never writable"},
    [S_PROTECT_GIT_CONFIG] = {S_PROTECT_GIT_CONFIG, "protect", "git_config", true, 1, 0, 1, true, "",
                              "**/.git/config, commondir, config.worktree, info/attributes, objects/info/alternates, "
                              "worktrees/*/{commondir,gitdir,config.worktree} are never writable"},
    [S_PROTECT_SHELL_RC] = {S_PROTECT_SHELL_RC, "protect", "shell_rc", true, 1, 0, 1, true, "",
                            ".bashrc .bash_profile .bash_login .bash_logout .zshrc .zprofile .zshenv .zlogin .profile "
                            ".config/fish/config.fish are never writable"},
    [S_PROTECT_EDITOR_DIRS] = {S_PROTECT_EDITOR_DIRS, "protect", "editor_dirs", true, 1, 0, 1, true, "",
                               ".vscode and .idea are never writable"},
    [S_PROTECT_AGENT_CONFIG] = {S_PROTECT_AGENT_CONFIG, "protect", "agent_config", true, 1, 0, 1, true, "",
                                ".mcp.json .claude/commands .claude/agents .claude/settings.json .claude/settings.local.json "
                                ".cursor/mcp.json .npmrc .yarnrc.yml .ripgreprc .gitconfig .gitmodules are never writable"},
    [S_FETCH_MAX_BYTES] = {S_FETCH_MAX_BYTES, "network", "fetch_max_bytes", false, 10485760, 1, 1LL << 40, true,
                           "bytes", "largest body session_fetch saves"},
    [S_ALLOW_PRIVATE_ADDRESSES] = {S_ALLOW_PRIVATE_ADDRESSES, "network", "allow_private_addresses", true, 0, 0, 1,
                                   true, "", "let session_fetch reach loopback, private, link-local and metadata "
                                             "addresses"},
    [S_ALLOW_UNIX_SOCKETS] = {S_ALLOW_UNIX_SOCKETS, "network", "allow_unix_sockets", true, 0, 0, 1, true, "",
                              "let sandboxed commands create AF_UNIX sockets (seccomp)"},
    [S_MEMORY_MB] = {S_MEMORY_MB, "process", "memory_mb", false, 2048, 16, MB_TB, true, "MB",
                     "address-space limit of each process (RLIMIT_AS)"},
    [S_CPU_SECONDS] = {S_CPU_SECONDS, "process", "cpu_seconds", false, 60, 1, 604800, true, "s",
                       "CPU time limit (RLIMIT_CPU)"},
    [S_MAX_PROCESSES] = {S_MAX_PROCESSES, "process", "max_processes", false, 256, 1, 1000000, true, "",
                         "process limit of the sandbox user (RLIMIT_NPROC, fork bombs)"},
    [S_MAX_FILE_SIZE_MB] = {S_MAX_FILE_SIZE_MB, "process", "max_file_size_mb", false, 1024, 1, MB_TB, true, "MB",
                            "largest file a process may write (RLIMIT_FSIZE)"},
    [S_MAX_OPEN_FILES] = {S_MAX_OPEN_FILES, "process", "max_open_files", false, 1024, 16, 1048576, true, "",
                          "open file descriptors per process (RLIMIT_NOFILE)"},
};

const key_info_t keys_table[] = {
    /* drun's keys (SPEC §3.2), top level */
    {NULL, "domain_allowlist", KEY_DOMAINS, 0, true, true, "array of domains",
     "hosts session_fetch may reach: \"example.com\", \"*.example.com\", \"*\""},
    {NULL, "fetch_timeout_ms", KEY_SETTING, S_FETCH_TIMEOUT_MS, true, true, NULL, NULL},
    {NULL, "connect_timeout_ms", KEY_SETTING, S_CONNECT_TIMEOUT_MS, true, true, NULL, NULL},
    {NULL, "bash_timeout_ms", KEY_SETTING, S_BASH_TIMEOUT_MS, true, true, NULL, NULL},
    {NULL, "max_workspace_mb", KEY_SETTING, S_MAX_WORKSPACE_MB, true, true, NULL, NULL},
    {NULL, "max_sessions", KEY_SETTING, S_MAX_SESSIONS, true, true, NULL, NULL},
    {NULL, "max_checkpoints", KEY_SETTING, S_MAX_CHECKPOINTS, true, true, NULL, NULL},
    {NULL, "session_idle_timeout_secs", KEY_SETTING, S_SESSION_IDLE_TIMEOUT_SECS, true, true, NULL, NULL},
    {NULL, "mount_allowlist", KEY_PATHS, RK_MOUNT, true, true, "array of paths",
     "host paths the sandbox may read (read-only), session_mount copy from and session_export write to; "
     "empty means none"},
    {NULL, "mount_overlay_paths", KEY_NAMES, 0, true, false, "array of names",
     "drun: directory names mounted as read-only overlays (drun-mcp's session_mount copies whole trees)"},
    {NULL, "export_root", KEY_STRING, 0, true, false, "string",
     "drun: where session_export writes (drun-mcp exports inside mount_allowlist)"},
    {NULL, "snapshots_dir", KEY_STRING, 1, true, false, "string",
     "drun: where session_snapshot writes (drun-mcp keeps snapshots in its state dir)"},
    {NULL, "snapshot_on_close", KEY_SETTING, S_SNAPSHOT_ON_CLOSE, true, false, NULL, NULL},
    {NULL, "env_allowlist", KEY_ENV_NAMES, 0, true, true, "array of names",
     "host environment variables session_get_env may reveal"},
    {NULL, "bash_command_denylist", KEY_COMMANDS, 0, true, true, "array of command patterns",
     "commands session_bash refuses (shell-word patterns such as \"rm -rf\")"},
    {NULL, "bash_command_allowlist", KEY_COMMANDS, 1, true, true, "array of command patterns",
     "when not empty, every simple command must match one of these"},
    {NULL, "web_port", KEY_SETTING, S_WEB_PORT, true, false, NULL, NULL},
    {NULL, "package_install_enabled", KEY_SETTING, S_PACKAGE_INSTALL_ENABLED, true, true, NULL, NULL},

    /* extension tables (SPEC §3.3) */
    {NULL, "filesystem", KEY_TABLE, 0, false, true, "table", "extra read, write and deny rules"},
    {"filesystem", "allow_read", KEY_PATHS, RK_ALLOW_READ, false, true, "array of paths", "extra read-only paths"},
    {"filesystem", "deny_read", KEY_PATHS, RK_DENY_READ, false, true, "array of paths or globs",
     "hidden paths; a literal can be re-opened deeper, a glob never"},
    {"filesystem", "allow_write", KEY_PATHS, RK_ALLOW_WRITE, false, true, "array of paths",
     "extra writable paths (workspace and scratch always are)"},
    {"filesystem", "deny_write", KEY_PATHS, RK_DENY_WRITE, false, true, "array of paths or globs",
     "never writable, even inside writable paths"},
    {"filesystem", "read_path_dirs", KEY_SETTING, S_READ_PATH_DIRS, false, true, NULL, NULL},
    {NULL, "protect", KEY_TABLE, 0, false, true, "table", "mandatory write protections, on by default"},
    {"protect", "git_hooks", KEY_SETTING, S_PROTECT_GIT_HOOKS, false, true, NULL, NULL},
    {"protect", "git_config", KEY_SETTING, S_PROTECT_GIT_CONFIG, false, true, NULL, NULL},
    {"protect", "shell_rc", KEY_SETTING, S_PROTECT_SHELL_RC, false, true, NULL, NULL},
    {"protect", "editor_dirs", KEY_SETTING, S_PROTECT_EDITOR_DIRS, false, true, NULL, NULL},
    {"protect", "agent_config", KEY_SETTING, S_PROTECT_AGENT_CONFIG, false, true, NULL, NULL},
    {NULL, "network", KEY_TABLE, 0, false, true, "table", "session_fetch limits and socket rules"},
    {"network", "fetch_max_bytes", KEY_SETTING, S_FETCH_MAX_BYTES, false, true, NULL, NULL},
    {"network", "allow_private_addresses", KEY_SETTING, S_ALLOW_PRIVATE_ADDRESSES, false, true, NULL, NULL},
    {"network", "allow_unix_sockets", KEY_SETTING, S_ALLOW_UNIX_SOCKETS, false, true, NULL, NULL},
    {"network", "command_domains", KEY_DOMAINS, 1, false, true, "array of domains",
     "hosts sandboxed commands may reach through the proxy; empty means no network"},
    {"network", "command_ports", KEY_PORTS, 0, false, true, "array of ports",
     "ports the proxy connects sandboxed commands to"},
    {"network", "pip_registries", KEY_DOMAINS, 2, false, true, "array of domains",
     "hosts session_package_install reaches for pip (plus command_domains)"},
    {"network", "npm_registries", KEY_DOMAINS, 3, false, true, "array of domains",
     "hosts session_package_install reaches for npm (plus command_domains)"},
    {NULL, "process", KEY_TABLE, 0, false, true, "table", "resource limits of sandboxed commands"},
    {"process", "memory_mb", KEY_SETTING, S_MEMORY_MB, false, true, NULL, NULL},
    {"process", "cpu_seconds", KEY_SETTING, S_CPU_SECONDS, false, true, NULL, NULL},
    {"process", "max_processes", KEY_SETTING, S_MAX_PROCESSES, false, true, NULL, NULL},
    {"process", "max_file_size_mb", KEY_SETTING, S_MAX_FILE_SIZE_MB, false, true, NULL, NULL},
    {"process", "max_open_files", KEY_SETTING, S_MAX_OPEN_FILES, false, true, NULL, NULL},
    {NULL, "env", KEY_TABLE, 0, false, true, "table", "the sandbox's environment (it starts empty)"},
    {"env", "passthrough", KEY_ENV_NAMES, 1, false, true, "array of names",
     "host variables copied into the sandbox"},
    {"env", "set", KEY_ENV_SET, 0, false, true, "table of strings", "variables set in the sandbox"},
    {NULL, NULL, 0, 0, false, false, NULL, NULL},
};

const key_info_t *keys_find(const char *table, const char *key)
{
    for (const key_info_t *k = keys_table; k->key; k++) {
        if ((k->table == NULL) != (table == NULL)) continue;
        if (table && strcmp(k->table, table) != 0) continue;
        if (strcmp(k->key, key) == 0) return k;
    }
    return NULL;
}

const char *keys_qualified(const key_info_t *k, char *buf, size_t n)
{
    if (k->table) snprintf(buf, n, "%s.%s", k->table, k->key);
    else snprintf(buf, n, "%s", k->key);
    return buf;
}

const char *policy_level_name(level_t l)
{
    switch (l) {
    case LVL_NONE: return "none";
    case LVL_READ: return "read";
    case LVL_WRITE: return "write";
    }
    return "none";
}

const char *policy_rule_kind_key(rule_kind_t k)
{
    switch (k) {
    case RK_SYSTEM: return "system read set";
    case RK_PATH_DIR: return "$PATH";
    case RK_ALLOW_READ: return "filesystem.allow_read";
    case RK_MOUNT: return "mount_allowlist";
    case RK_ALLOW_WRITE: return "filesystem.allow_write";
    case RK_WORKSPACE: return "workspace";
    case RK_SCRATCH: return "scratch";
    case RK_DENY_READ: return "filesystem.deny_read";
    case RK_DENY_WRITE: return "filesystem.deny_write";
    case RK_PROTECT: return "protect";
    case RK_RUNTIME: return "runtime-owned";
    }
    return "?";
}
