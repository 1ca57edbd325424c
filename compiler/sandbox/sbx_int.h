/* sbx_int.h — what the files of the Linux runner share; nothing outside
 * compiler/sandbox/ includes it (the public door is sandbox.h).
 *
 *   sandbox.c       compile (or load artifacts), plan one run, spawn it
 *   spawn.c         the vfork child, bwrap started ahead, feeding its options
 *   hoststate.c     the state dir by fd, the empty file, workspace locks, the sandbox user
 *   placeholders.c  removing the mount points bwrap made, beneath the workspace fd
 *   reach.c         a root caller's sandbox user: binds it cannot reach are left out
 *   bind_fd.c       the fallback's binds of host paths, opened here and handed to bwrap by fd
 *   reap.c          bwrap's status, waiting for the sandbox, cleanup
 */
#ifndef DRUN_SBX_INT_H
#define DRUN_SBX_INT_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "bwrap.h"
#include "sandbox.h"

void sbx_free_strvec(strvec_t *v);

struct sandbox {
    const policy_t *pol;
    policy_t *owned_pol; /* --artifacts: the policy rebuilt from the manifest */
    facts_t *facts;
    bool owns_facts;
    resolved_t *res;
    buf_t seccomp;   /* the program bwrap loads */
    char *bwrap_bin; /* absolute path of bwrap */
    char *shim[4];   /* runs before the command inside: prlimit --nproc (not root) */
};

/* The bind sources of a run opened by fd (bind_fd.c): fd[i] goes to the
 * bwrap child at SBX_FD_BINDS + i. The runner's own copies, O_CLOEXEC. */
typedef struct sbx_binds {
    int *fd;
    size_t n;
} sbx_binds_t;

/* The fds a bwrap child gets, at fixed numbers (SBX_FD_*); -1: none. The
 * caller's ends; spawn.c dups them into place in the child. */
typedef struct spawn_fds {
    int args;                 /* 3: --args (a pipe, or sealed memory) */
    int seccomp;              /* 4: --seccomp */
    int status;               /* 5: --json-status-fd (write end) */
    int empty;                /* 6: the empty read-only file every block of a missing file binds */
    int workspace;            /* 7: the workspace directory (--bind-fd) */
    int scratch;              /* 8: the scratch directory (--bind-fd), or -1 (a tmpfs scratch) */
    int proxy;                /* 9: the sandbox's end of the proxy channel (the relay's), or -1 */
    int relay;                /* 10: the runner's own binary, bound at SBX_RELAY_PATH (--ro-bind-fd), or -1 */
    const sbx_binds_t *binds; /* SBX_FD_BINDS on: the plan's bind sources (--bind-fd), or NULL; not closed here */
} spawn_fds_t;

/* clang-format off */
enum { SBX_FD_ARGS = 3, SBX_FD_SECCOMP, SBX_FD_STATUS, SBX_FD_EMPTY, SBX_FD_WORKSPACE, SBX_FD_SCRATCH,
       SBX_FD_PROXY, SBX_FD_RELAY, SBX_FD_COUNT };
/* clang-format on */
/* Where the bind sources start in the child: above every fixed slot, with
 * room below for bwrap's own fds under a low RLIMIT_NOFILE (the fds placed
 * before the limit is set stay valid above it). */
#define SBX_FD_BINDS 64
/* At most this many bind sources by fd (bwrap's 9,000 arguments hold 3,000 binds). */
#define SBX_BINDS_MAX 4096
_Static_assert(SBX_FD_COUNT <= SBX_FD_BINDS, "the bind sources start above the fixed slots");
#define SBX_SPAWN_FDS_NONE {-1, -1, -1, -1, -1, -1, -1, -1, NULL}
/* A run with a proxy channel (sbx_exec_t.proxy_fd). */
#define SBX_PROXIED(x) ((x)->proxy_fd > 0)

/* Who the sandbox runs as on the host: the caller (not root), or, when the
 * caller is root, an unprivileged uid and gid it drops to before bwrap. */
typedef struct sbx_ident {
    bool drop;
    uid_t uid;
    gid_t gid;
} sbx_ident_t;

struct sbx_early {
    pid_t pid;
    int args_fd;     /* write ends: bwrap's fd 3 (--args) and 4 (--seccomp) */
    int seccomp_fd;
    int status_fd;   /* read end of bwrap's fd 5 (--json-status-fd) */
    bool shim;       /* started with the sandbox's shim before the command */
    int ws_fd;       /* the workspace fd bwrap got (a dup the early run owns) */
    int sc_fd;       /* the scratch fd bwrap got, or -1 */
    bool limits_set; /* the child set the policy's limits before its exec */
    bool relay;      /* started with the proxy relay before the command */
};

struct sbx_residue {
    strvec_t paths;    /* placeholders to remove after the run: relative to the workspace, or absolute outside it */
    int status_fd;     /* read end of bwrap's --json-status-fd, or -1 */
    int lock_fd;       /* shared lock on the workspace while the run lasts, or -1 */
    int ws_fd;         /* the workspace, O_DIRECTORY: every removal is beneath it */
    char *pending;     /* name of the workspace's ".pending" list in the locks dir */
    buf_t status;      /* what bwrap's status report said so far (sandbox_pid1) */
    struct fsl *layer; /* the access-time filesystem layer of the run (fslayer.h), or NULL */
};

/* ---- spawn.c ---- */
/* Starts "bwrap --args 3 -- [SHIM...] CMD..." with fds in place (each
 * closed here, whatever happens; args/seccomp write ends kept in the
 * result). limits: set before exec, or NULL. NULL with *err. */
sbx_early_t *sbx_launch(const char *bwrap_bin, char *const *shim, const sbx_exec_t *x, spawn_fds_t *fds,
                        int args_w, int seccomp_w, const sandbox_t *limits, char **err);
/* limits: set them in the child (a root caller's sandbox user: nobody else
 * may raise them later), or NULL (set when the options are fed). */
sbx_early_t *sbx_prestart(const char *bwrap_bin, char *const *shim, const sbx_exec_t *x, const sandbox_t *limits,
                          char **err);
bool sbx_early_feed(const sandbox_t *s, sbx_early_t *e, const buf_t *args);
/* binds: the bind sources the options name by fd (SBX_FD_BINDS on), or NULL. */
sbx_early_t *sbx_start_loaded(const sandbox_t *s, const sbx_exec_t *x, const buf_t *args, const sbx_binds_t *binds,
                              char **err);

/* ---- hoststate.c ---- */
/* The state dir, opened once per process, owner and mode checked: an
 * O_DIRECTORY fd (do not close), or -1 with *err. */
int hoststate_state_dir(char **err);
/* A directory below the state dir ("locks", "run/scratch"), made if
 * missing, opened beneath it without following any symlink. Caller closes. */
int hoststate_subdir(const char *rel, char **err);
/* An O_RDONLY fd of the empty read-only file, for bwrap (caller closes). */
int hoststate_empty_fd(char **err);
/* Opens the workspace (or scratch) dir for a run: x's kept fd dup'd, or
 * path opened O_DIRECTORY. Caller closes. -1 with *err. */
int hoststate_open_dir(const char *what, const char *path, int kept_fd, char **err);
/* True when path still leads (following symlinks, as bwrap will) to the
 * directory fd is. */
bool hoststate_same_dir(const char *path, int fd);
/* The shared lock of the workspace ws_fd is (keyed by device and inode)
 * and the name of its ".pending" list; -1 when the locks dir cannot be used. */
int hoststate_workspace_lock(int ws_fd, char **pending);
/* The pending list's entries, each a path relative to the workspace; the
 * list is removed. Entries that are absolute or climb (..) are dropped. */
void hoststate_pending_take(const char *pending, strvec_t *out);
void hoststate_pending_add(const char *pending, char *const *rel, size_t n);
/* Who the sandbox runs as (see sandbox_use_user). */
const sbx_ident_t *hoststate_ident(void);

/* ---- reach.c ---- */
/* Arity of an option in a run's vector; -1: unknown (then nothing is left
 * out: a misread vector must not lose a deny). */
int sbx_opt_nargs(const char *opt);
/* Leaves out of v (from index from on) the binds whose source uid:gid
 * cannot reach, and the remounts planned on them. */
void sbx_drop_unreachable(strvec_t *v, size_t from, uid_t uid, gid_t gid);

/* ---- bind_fd.c ---- */
/* Every --bind/--ro-bind(-try) of a host path in v (from index from on;
 * /proc, /dev and /sys aside) becomes --bind-fd/--ro-bind-fd of an fd
 * opened here without following any symbolic link (beneath ws_fd for the
 * workspace ws) and checked against what plan b recorded; a -try source
 * that is absent is left out. The fds in *out (caller closes with
 * sbx_binds_close). False with *err (nothing kept open) when a source is a
 * link now, was replaced, or cannot be opened: the run must be refused. */
bool sbx_binds_by_fd(strvec_t *v, size_t from, const bwrap_t *b, int ws_fd, const char *ws, sbx_binds_t *out,
                     char **err);
void sbx_binds_close(sbx_binds_t *b);

/* ---- placeholders.c ---- */
/* Removes rel beneath the workspace dir if it is still a blank placeholder
 * (an empty directory, or an empty regular file with one link): never
 * through a symlink, never outside. */
void placeholders_remove(int ws_fd, const char *rel);
/* Makes the placeholder rel (a directory, or an empty 0444 file) beneath
 * the workspace dir, never through a symlink; what exists stays. For a root
 * caller, whose bwrap (the sandbox user) may not write where a grant of
 * root's leads. */
void placeholders_make(int ws_fd, const char *rel, bool dir);
/* Removes every path of list (relative), deepest first. */
void placeholders_remove_all(int ws_fd, strvec_t *list);

#endif
