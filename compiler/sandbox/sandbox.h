/* sandbox.h — running a command under a compiled policy on Linux: the bwrap
 * vector (static template + the session part planned at exec time), the
 * seccomp program, the rlimits, and the spawn. Shared by `drun-policy run`
 * and drun-mcp, so both run commands exactly the same way. The one public
 * header of compiler/sandbox/ (sbx_int.h lists its files).
 */
#ifndef DRUN_SANDBOX_H
#define DRUN_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#include "buf.h"
#include "facts.h"
#include "lattice.h"
#include "policy.h"
#include "proxy.h"

typedef struct sandbox sandbox_t;

/* Compiles p for Linux with facts f (NULL: probe this host). NULL with diags
 * (or *err) when the policy cannot be compiled for this host. p and f must
 * outlive the sandbox. */
sandbox_t *sandbox_new(const policy_t *p, const facts_t *f, diag_list_t *diags, char **err);

/* Loads precompiled, reviewed artifacts from dir (policy.json, bwrap.args,
 * seccomp.bpf): every artifact's sha256 is checked against the manifest and
 * the policy is rebuilt from the source text the manifest embeds. NULL with
 * *err on any mismatch. The returned sandbox owns its policy (sandbox_policy). */
sandbox_t *sandbox_from_artifacts(const char *dir, char **err);

const policy_t *sandbox_policy(const sandbox_t *s);
/* The resolved policy every run of s is planned from (lattice.h): what
 * drun-mcp's file tools ask lattice_level_of() about, so that they and the sandbox
 * decide from one object. Lives as long as s. */
const resolved_t *sandbox_resolved(const sandbox_t *s);
void sandbox_free(sandbox_t *s);

/* A bwrap started ahead of its plan (sandbox_prestart). */
typedef struct sbx_early sbx_early_t;

typedef struct sbx_exec {
    const char *workspace;     /* absolute, resolved path of the session workspace (exists): where it
                                  is mounted inside; the host directory itself comes from workspace_fd */
    const char *scratch;       /* absolute, resolved path of the session scratch dir (exists) */
    char *const *argv;         /* the command, argv[0] looked up in the sandbox's PATH */
    int fd_in, fd_out, fd_err; /* the command's stdio; -1 means /dev/null */
    bool new_pgrp;             /* child leads a new process group (killable as a whole) */
    char *const *host_env;     /* environment [env] passthrough reads (NULL: environ) */
    const char *const *hide;   /* directories to keep dark even when the policy grants a parent
                                  (the runtime's state: other sessions), NULL-terminated, or NULL */
    bool scratch_tmpfs;        /* the scratch is a fresh tmpfs on the (empty) scratch dir, gone
                                  with the sandbox: a one-off run, whose scratch lives no longer
                                  than it; a session's scratch stays a host dir */
    sbx_early_t *early;        /* a bwrap the caller started for this run, or NULL: sandbox_spawn
                                  takes it over (uses it, or kills it on any failure) */
    int workspace_fd;          /* an O_DIRECTORY fd of the workspace the caller keeps (drun-mcp's
                                  session), bound by fd (bwrap --bind-fd); 0 (a zeroed struct) or
                                  -1: none, the workspace path is opened once per run instead */
    int proxy_fd;              /* the sandbox's end of a proxy channel (proxy_sandbox_fd): the command
                                  runs under the relay, with the proxy variables set; 0 (a zeroed
                                  struct) or -1: no network at all */
} sbx_exec_t;

/* Who the sandbox runs as when the caller is root (process-wide, set once
 * before any run): spec "USER", "UID" or "UID:GID"; NULL: the default, user
 * drun-sandbox when /etc/passwd has it, else 65534:65534 (nobody). A root
 * caller drops to it before bwrap starts, so the sandbox holds no host root
 * (RLIMIT_NPROC binds, /etc/shadow is unreadable). uid or gid 0 is refused.
 * Ignored when the caller is not root. False with *err (caller frees). */
bool sandbox_use_user(const char *spec, char **err);
/* The host uid and gid sandboxes of this process run as (the caller's own
 * when not root). */
void sandbox_user(uid_t *uid, gid_t *gid);

/* The runner's own helper processes run this binary again with a hidden
 * first argument (the access-time layer's daemon, fuse_exec.c): both mains
 * call this first. -1 when argv is not one of them; otherwise it does not
 * return. */
int sandbox_helper_main(int argc, char **argv);
/* True when the sandbox's host uid can write the directory fd is (its
 * owner, or group/other write for it). */
bool sandbox_user_can_write(int fd);
/* The scratch mount point of one-off runs, STATE/run/scratch, made below
 * the state dir by fd (owner and mode checked). NULL with *err. Caller frees. */
char *sandbox_run_scratch(char **err);

/* Starts bwrap before there is a plan: it loads and then waits for its
 * limits, filter and arguments, which sandbox_spawn hands it (x->early), so
 * that its start overlaps the caller's compile and plan. x's command, stdio
 * fds and new_pgrp are used (and must not change before sandbox_spawn); a
 * sandbox that starts its command through a shim (not as root) starts its
 * own bwrap instead. Nothing runs until sandbox_spawn says what: a
 * bwrap given up on (sandbox_early_abort, or its caller dying) is killed
 * before it could read the end of its arguments. NULL with *err. */
sbx_early_t *sandbox_prestart(const char *bwrap_bin, const sbx_exec_t *x, char **err);
/* Kills and reaps a prestarted bwrap that will not be used. NULL is fine. */
void sandbox_early_abort(sbx_early_t *e);
/* The bwrap sandbox_new would use: found in $PATH (or the usual places).
 * NULL when there is none. Caller frees. */
char *sandbox_find_bwrap(void);

/* What sandbox_spawn left on the host to remove after the child exits: the
 * mount points bwrap had to create to block paths that did not exist. */
typedef struct sbx_residue sbx_residue_t;

/* Plans the session part and runs bwrap (started ahead: x->early, or
 * here), with the vector passed through --args and the filter through
 * --seccomp. Returns 0 and the child
 * pid (and *residue, to pass to sandbox_cleanup after waiting); -1 with *err
 * (caller frees) when the sandbox cannot be set up; or 127/126 with *err when
 * the command cannot be found or run, as a shell says it (nothing started). */
int sandbox_spawn(const sandbox_t *s, const sbx_exec_t *x, pid_t *pid, sbx_residue_t **residue,
                  char **err);

/* How a sandboxed run ended. */
typedef struct sbx_status {
    bool setup_failed; /* bwrap never started the command (status 125 for `run`) */
    int exit_code;     /* the command's exit status, when it exited */
    int term_signal;   /* the signal that ended it, or 0 */
    pid_t sandbox_pid; /* the sandbox's pid 1 (bwrap's "child-pid"), or 0 */
} sbx_status_t;

/* The sandbox's pid 1 (bwrap's "child-pid") once bwrap has reported it, or
 * 0: a non-blocking read of bwrap's status report so far, kept for
 * sandbox_status. For killing the whole sandbox (cancel, timeout) along with
 * the process group. Not thread-safe against sandbox_status on the same
 * residue. */
pid_t sandbox_pid1(sbx_residue_t *residue);

/* After waitpid() of the pid sandbox_spawn returned: decodes wait_status with
 * bwrap's status report (was the command started at all?). Removes nothing:
 * call sandbox_cleanup when convenient. */
void sandbox_status(sbx_residue_t *residue, int wait_status, sbx_status_t *st);

/* What the run's access-time filesystem layer refused so far (SPEC §16):
 * one line "TIME\tOP\tPATH\tRULE\n" per distinct refusal, at most max
 * (caller frees; NULL when none or no layer), *total how many there were. */
char *sandbox_fs_denied(const sbx_residue_t *residue, size_t max, size_t *total);

/* Ends the run's access-time filesystem layer (unmounts its trees, stops its
 * daemon) once every process of the sandbox is gone, keeping the rest of
 * residue for sandbox_cleanup. A caller that defers sandbox_cleanup (drun-mcp
 * removes placeholders when no command runs) calls this at once: a layer
 * left with them would keep a daemon, whose threads count against the
 * sandbox user's process limit, for as long as commands keep running.
 * Read sandbox_fs_denied first. */
void sandbox_end_layer(sbx_residue_t *residue);

/* For a one-off run, by a caller that is a child subreaper
 * (PR_SET_CHILD_SUBREAPER) with no other children: reaps bwrap (pid), decodes
 * the status (sandbox_status), waits until no process the command started is
 * left, so that nothing can still use a mount on a placeholder, and removes
 * the placeholders (sandbox_cleanup). residue is freed. */
void sandbox_wait_finish(sbx_residue_t *residue, pid_t pid, sbx_status_t *st);

/* Removes the placeholders bwrap created (only those that are still empty,
 * only beneath the workspace by its fd, never through a symlink) and frees
 * residue. Safe with concurrent runs in the same workspace: a
 * placeholder is a mount point in every sandbox using that workspace, and
 * removing it on the host would silently drop their mounts, so runs share a
 * lock per workspace and only the last one out removes what all of them left. */
void sandbox_cleanup(sbx_residue_t *residue);

/* The full bwrap argument vector sandbox_spawn would use for x, one argument
 * per element, for explain and tests (no fork). The fds it names (6 the
 * empty file, 7 the workspace, 8 the scratch dir) are those sandbox_spawn
 * passes. NULL with *err on failure. */
char **sandbox_argv(const sandbox_t *s, const sbx_exec_t *x, size_t *argc, char **err);
void sandbox_argv_free(char **argv, size_t argc);

#endif
