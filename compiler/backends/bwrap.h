/* bwrap.h — the Linux backend: a resolved policy → a bubblewrap argument vector.
 * Planning is bwrap_plan.c's, the text form and the argv bwrap_args.c's, the
 * evaluator bwrap_eval.c's.
 *
 * One planner serves compile and exec. At compile time (roots NULL) it reads
 * the facts and plans for a fresh, empty workspace and scratch dir given as
 * ${WORKSPACE} and ${SCRATCH}: that vector is bwrap.args. At exec time it is
 * given the concrete roots and reads the live filesystem: rules inside the
 * session dirs are placed by what exists there, and glob caps are expanded
 * under the user's grants. Explain evaluates the same ops (bwrap_eval).
 *
 * Mount order: phase 1 mounts grants and pins parent-first (a later, deeper
 * mount wins); phase 2 applies caps with --remount-ro, which flips one mount
 * without hiding the mounts below it, and hides what deny_read globs match.
 */
#ifndef DRUN_BWRAP_H
#define DRUN_BWRAP_H

#include "lattice.h"

/* One word of the vector: literal, or a placeholder resolved at exec time. */
typedef enum {
    BW_LIT,
    BW_WORKSPACE,
    BW_SCRATCH,
    BW_ENV,
    BW_EMPTY_FD
} bw_word_kind_t;

typedef struct bw_word {
    bw_word_kind_t kind;
    const char *s; /* BW_LIT: the text; BW_WORKSPACE/BW_SCRATCH: the rest below the
                      root ("" = the root); BW_ENV: the variable name; BW_EMPTY_FD:
                      unused (each one is a fresh fd of an empty file at exec time) */
} bw_word_t;

typedef struct bw_op {
    const char *opt;       /* "--ro-bind-try", "--tmpfs", "--unshare-all", ... */
    bw_word_t a, b;        /* arguments (nargs of them) */
    int nargs;
    const rrule_t *origin; /* the lattice rule it enforces, or NULL */
    const char *note;      /* why, for explain ("blocks the first missing component") */
} bw_op_t;

/* A host path bwrap will create as a mount point (a missing path blocked). */
typedef struct bw_residue {
    char *path;
    bool dir; /* a directory (the block is a tmpfs), else an empty file */
} bw_residue_t;

typedef VEC(bw_residue_t) bw_residues_t;

/* What an exec plan saw at a host path (lstat), for the runner to check
 * that the source it binds by fd is that object. */
typedef struct bw_seen {
    const char *path;
    unsigned long long dev, ino;
} bw_seen_t;

typedef struct bwrap {
    arena_t arena;
    VEC(bw_op_t) ops;
    bw_residues_t residue; /* exec plans: what to remove afterwards */
    VEC(bw_seen_t) seen;   /* exec plans: the paths looked at that existed (not links) */
    strmap_t seen_at;      /* path -> index into seen */
} bwrap_t;

/* Limits of the exec-time glob expansion: past them the run is refused
 * rather than left half-protected. */
#define BW_WALK_MAX_ENTRIES 200000
#define BW_WALK_MAX_DEPTH 64

/* The backends' shared shape: plans the compile-time template for r
 * (target Linux), resolved with facts f, into *out (free with bwrap_free).
 * False, *out NULL, with the reason as an error in diags (no location)
 * when a rule cannot be enforced. */
bool bwrap_build(const resolved_t *r, const facts_t *f, diag_list_t *diags, bwrap_t **out);

/* The planner behind bwrap_build, also at exec time. roots NULL: the
 * compile-time template from the facts. roots set: the exec-time plan from
 * the live filesystem. Returns NULL with *err (caller frees) when a rule
 * cannot be enforced (a symlink where a protected path must be, a walk past
 * its limits). */
bwrap_t *bwrap_plan(const resolved_t *r, const roots_t *roots, char **err);
void bwrap_free(bwrap_t *b);
/* What the exec plan b saw at path: false when it did not look, or saw
 * nothing there, or a symbolic link. */
bool bwrap_seen(const bwrap_t *b, const char *path, bw_seen_t *out);

/* Notices of exec-time plans: something the plan did that the person or
 * agent running the command must hear of (a directory it could not list,
 * hidden rather than left unchecked). Each is handed to this thread's sink,
 * or printed on stderr as one line when the thread has none. A sink is set
 * around one plan by the caller that reports (drun-mcp puts them in the
 * tool result's warnings); NULL restores stderr. */
typedef void (*bwrap_notice_fn)(void *ctx, const char *msg);
#define BW_NOTICES_MAX 20 /* notices of one plan past this are summed up in one more */
void bwrap_set_notice_sink(bwrap_notice_fn fn, void *ctx);

/* Repositories by their structure (bwrap_repo.c), for the planner's walk,
 * which holds each directory it lists by fd.
 * The path a pointer file in the directory dirfd names, as written (caller
 * frees): its commondir, or with gitfile the "gitdir: PATH" of its .git.
 * Read without following a symlink; NULL when the file is missing, not a
 * regular file, or not such a pointer. */
char *bwrap_repo_pointer(int dirfd, bool gitfile);
/* Is the real directory dir writable in the sandbox? */
typedef bool (*bwrap_writable_fn)(void *ctx, const char *dir);
/* target (absolute, or relative to the real directory base, whose fd is
 * basefd) resolved as the kernel would, one component at a time beneath
 * the fd of the last (openat O_NOFOLLOW, a link read from its own fd),
 * following only the symbolic links that lie in directories the sandbox
 * cannot write; below the first missing component the rest is lexical.
 * NULL with *err (caller frees) when a link that a sandbox could replace is
 * on the way (fail closed: a cap planned at its current target would not
 * hold). Caller frees the result; *fd_out: an O_PATH fd of it when it is an
 * existing directory (caller closes), else -1. */
char *bwrap_repo_resolve(int basefd, const char *base, const char *target, bwrap_writable_fn writable, void *ctx,
                         int *fd_out, char **err);

/* Writes bwrap.args: one argument per line, C-escaped (\\ \n \t \xHH; a '$'
 * of a literal is written \x24), placeholders as ${WORKSPACE}, ${SCRATCH},
 * ${env:NAME} and ${EMPTY_FD} (an fd of an empty file, a new one each time).
 * bwrap_args_parse is its exact inverse (ops lose their origin). */
void bwrap_render(const bwrap_t *b, buf_t *out);
bwrap_t *bwrap_args_parse(const char *text, size_t len, char **err);

/* Substitutes placeholders into concrete arguments, appended to *argv as
 * xstrdup'd strings (the caller frees each, then the vector). A "--setenv NAME ${env:NAME}"
 * op whose variable is not in env is dropped; env is "NAME=value" strings,
 * NULL-terminated. A block of a missing file ("--perms 0444 --ro-bind-data
 * ${EMPTY_FD} DEST") becomes "--ro-bind EMPTY_FILE DEST": empty_file is an
 * empty read-only host file, the same for every block, so that no fd need
 * be passed per block and bwrap copies nothing. */
void bwrap_argv(const bwrap_t *b, const roots_t *roots, char *const *env, const char *empty_file, strvec_t *argv);

/* The concrete text of one word: a literal as is, a session path joined to
 * its root, ${env:NAME} from env ("NAME=value" strings, NULL-terminated;
 * NULL when unset or env is NULL). Caller frees. */
char *bwrap_word_value(bw_word_t w, const roots_t *roots, char *const *env);

/* What the mount namespace built by ops exposes path at (absolute, concrete),
 * and the op that decided it. *private_tmp is set when the path is on the
 * sandbox's own /tmp (writable there, invisible to the host). */
level_t bwrap_eval(const bwrap_t *b, const roots_t *roots, const char *path, const bw_op_t **by,
                   bool *private_tmp);

/* One op as it appears in bwrap.args, on one line ("--ro-bind-try /usr /usr"). */
void bwrap_op_text(const bw_op_t *op, buf_t *out);

#endif
