/* diag_ids.c — the diagnostic ID table (see diag_ids.h). A new rule is one row
 * here, its check in review/lint_rules_tree.c or lint_rules_policy.c, a
 * section in docs/lint-rules.md and a fixture directory tests/lint/ID/; the
 * 40-lint suite fails until all four exist. */
#include "diag_ids.h"

#include <string.h>

#define DOC(id) "docs/lint-rules.md#" id

/* clang-format off */
const diag_info_t diag_table[] = {
    /* config errors: policy_build (policy/build.c) rejects the file */
    {"syntax", SEV_ERROR, true, "the file is not valid TOML", DOC("syntax")},
    {"unknown-key", SEV_ERROR, true, "a key the policy language does not have (with a suggestion)",
     DOC("unknown-key")},
    {"type-mismatch", SEV_ERROR, true, "a value of the wrong TOML type", DOC("type-mismatch")},
    {"bad-value", SEV_ERROR, true, "a value out of range, or a string with a NUL or control character",
     DOC("bad-value")},
    {"relative-path", SEV_ERROR, true, "a relative path where an absolute, ~ or ${WORKSPACE} path is needed",
     DOC("relative-path")},
    {"bad-path", SEV_ERROR, true, "a path with '..', a control character, a glob outside deny lists, or "
     "that no target can enforce", DOC("bad-path")},
    {"bad-domain", SEV_ERROR, true, "a domain_allowlist entry that is not a host name, *.host or IP "
     "(a scheme, path or port)", DOC("bad-domain")},
    {"bad-command-entry", SEV_ERROR, true, "a command-list entry that is not a plain word pattern",
     DOC("bad-command-entry")},
    {"bad-env-name", SEV_ERROR, true, "a string that is not an environment variable name", DOC("bad-env-name")},

    /* lint rules (SPEC §8) */
    {"wildcard-domain", SEV_WARNING, false, "a domain_allowlist entry of \"*\" or a wildcard over a public "
     "suffix (*.com)", DOC("wildcard-domain")},
    {"empty-mount-allowlist-is-none", SEV_NOTE, false, "an empty mount_allowlist means no host paths "
     "(in drun it meant all)", DOC("empty-mount-allowlist-is-none")},
    {"secret-readable", SEV_WARNING, false, "a grant makes credentials readable (~/.ssh, ~/.aws, .env, ...)",
     DOC("secret-readable")},
    {"writable-git-without-hooks-protection", SEV_WARNING, false, "git hooks in writable directories are not "
     "write-protected", DOC("writable-git-without-hooks-protection")},
    {"shadowed-rule", SEV_WARNING, false, "a rule that never decides any path (a lower grant on the same path "
     "or a cap over it wins)", DOC("shadowed-rule")},
    {"duplicate-rule", SEV_WARNING, false, "the same path, domain, command or name listed twice",
     DOC("duplicate-rule")},
    {"deny-path-missing", SEV_NOTE, false, "a denied path does not exist: Linux blocks its first missing "
     "component", DOC("deny-path-missing")},
    {"unenforceable-on-target", SEV_NOTE, false, "a rule a target can only approximate (Linux glob "
     "expansion, RLIMIT_NPROC under root)", DOC("unenforceable-on-target")},
    {"command-list-advisory", SEV_NOTE, false, "command lists are a guardrail; the OS sandbox is the boundary",
     DOC("command-list-advisory")},
    {"unenforced-key", SEV_WARNING, false, "a drun key accepted for compatibility that drun-mcp does not enforce",
     DOC("unenforced-key")},
    {"profile-too-large", SEV_WARNING, false, "the compiled SBPL profile or bwrap vector is very large",
     DOC("profile-too-large")},

    /* lint rules a careful reviewer wants as well */
    {"redundant-rule", SEV_NOTE, false, "a rule that changes nothing: the level it sets is already the level "
     "there", DOC("redundant-rule")},
    {"protection-disabled", SEV_WARNING, false, "a [protect] write protection is turned off",
     DOC("protection-disabled")},
    {"workspace-not-writable", SEV_WARNING, false, "a rule makes the session workspace or scratch dir "
     "read-only or hidden", DOC("workspace-not-writable")},
    {"writable-system-dir", SEV_WARNING, false, "a write grant covers a system or $PATH directory the host runs "
     "programs from", DOC("writable-system-dir")},
    {"runtime-path-granted", SEV_WARNING, false, "a write grant covers a path the runtime owns (state dir, config, "
     "caches): it stays hidden in the sandbox", DOC("runtime-path-granted")},
    {"private-addresses-with-wildcard", SEV_WARNING, false, "allow_private_addresses together with a wildcard "
     "domain opens internal services to fetch", DOC("private-addresses-with-wildcard")},
    {"allowlist-interpreter", SEV_WARNING, false, "a shell or interpreter in bash_command_allowlist runs "
     "anything", DOC("allowlist-interpreter")},
    {"secret-env", SEV_WARNING, false, "an environment variable that looks like a credential is passed "
     "to the sandbox or revealed", DOC("secret-env")},
    {"default-domain-allowlist", SEV_NOTE, false, "no domain_allowlist: session_fetch gets drun's three "
     "default hosts", DOC("default-domain-allowlist")},
    {"bad-suppression", SEV_WARNING, false, "a '# drun-policy: allow' comment names no known rule",
     DOC("bad-suppression")},
    {NULL, SEV_NOTE, false, NULL, NULL},
};
/* clang-format on */

size_t diag_table_len(void) { return sizeof diag_table / sizeof *diag_table - 1; }

long diag_index(const char *id)
{
    if (!id) return -1;
    for (size_t i = 0; diag_table[i].id; i++)
        if (strcmp(diag_table[i].id, id) == 0) return (long)i;
    return -1;
}

const diag_info_t *diag_info(const char *id)
{
    long i = diag_index(id);
    return i < 0 ? NULL : &diag_table[i];
}
