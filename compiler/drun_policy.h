/* drun_policy.h — the compiler's one public header: what drun-mcp (runtime/)
 * may use of drun-policy. runtime/ includes this file and no other header of
 * grammar/ or compiler/; scripts/check-layers enforces it.
 *
 * It includes the internal headers whose declarations make up the surface,
 * so their types come along (policy_t, resolved_t, sandbox_t, buf_t, ...).
 * Of those headers runtime may use the items listed below and nothing else;
 * anything not listed is internal and may change without notice. To widen
 * the surface, add the name here first.
 *
 * Ownership: every object a function below returns is freed by its own
 * *_free; strings handed back through char **err are the caller's (free()).
 */
#ifndef DRUN_POLICY_PUBLIC_H
#define DRUN_POLICY_PUBLIC_H

/* grammar/buf.h — memory, buffers, vectors, arenas: the allocation policy
 * (x* abort on failure), buf_t and its buf_* functions, VEC() and vec_*,
 * arena_t and arena_free. */
#include "buf.h"

/* grammar/source.h — diagnostics: diag_list_t, diag_list_free,
 * diag_render_all; source_pos (offset -> line:col). */
#include "source.h"

/* compiler/policy/policy.h — the policy IR: policy_load, policy_free,
 * policy_get, policy_settings, policy_rule_kind_key, policy_level_name; policy_t, rule_t,
 * level_t, target_t. */
#include "policy.h"

/* compiler/facts.h — host facts: facts_t, facts_free. */
#include "facts.h"

/* compiler/lattice.h — the resolved policy and level(path): lattice_resolve,
 * lattice_free, lattice_level_of (verdict_t), lattice_rule_abs, lattice_cap_matches; roots_t; the
 * runtime-owned paths: lattice_owned_add, lattice_owned_add_defaults,
 * lattice_owned_at, lattice_owned_default_at. */
#include "lattice.h"

/* compiler/decide.h — the one access decision the access-time layer and
 * session_export share: decide_path, decide_repo_fn, decide_rule_text,
 * decide_completes_repo_name. */
#include "decide.h"

/* compiler/compile.h — compile_facts_for (the facts a policy is compiled with). */
#include "compile.h"

/* compiler/policy/path.h — path helpers: path_join, path_is_under,
 * path_next_comp. */
#include "path.h"

/* compiler/policy/glob.h — glob_comp_wild (a wildcard in a path component). */
#include "glob.h"

/* compiler/policy/domain.h — domain_match (allowed_domains patterns). */
#include "domain.h"

/* compiler/policy/netaddr.h — addresses and their classes: netaddr_t,
 * netaddr_parse, netaddr_parse_v4_any, netaddr_v4, netaddr_from_sockaddr,
 * netaddr_equal, netaddr_format, netaddr_classify, netaddr_class_name,
 * netaddr_local_name. */
#include "netaddr.h"

/* compiler/policy/netrefuse.h — the address and name rules of every
 * outbound connection: netrefuse_addr, netrefuse_name. */
#include "netrefuse.h"

/* compiler/fsutil.h — fsutil_mkdirs, fsutil_state_path (the tools' state dir). */
#include "fsutil.h"

/* compiler/shell/cmdlist.h — command lists: cmdlist_check,
 * cmdlist_verdict_free (cmdlist_verdict_t). */
#include "cmdlist.h"

/* compiler/backends/bwrap.h — bwrap_set_notice_sink (where the exec-time
 * planner's notices go). */
#include "bwrap.h"

/* compiler/sandbox/sandbox.h — running commands: sandbox_new,
 * sandbox_from_artifacts, sandbox_free, sandbox_policy, sandbox_resolved,
 * sandbox_spawn, sandbox_status, sandbox_fs_denied, sandbox_cleanup, sandbox_pid1,
 * sandbox_user, sandbox_use_user; and through it compiler/sandbox/proxy.h, the
 * proxy of sandboxed commands: proxy_wanted, proxy_open, proxy_sandbox_fd,
 * proxy_sandbox_end_close, proxy_refusals, proxy_refusals_free, proxy_close,
 * relay_main (proxy_chan_t, proxy_opts_t, proxy_refusal_t). */
#include "sandbox.h"

#endif
