/* reload.h — the policy in force, and the check that keeps it current.
 *
 * Before every tool call the runtime asks reload_acquire() for the policy.
 * That costs one stat(2) of the config when nothing changed: the file is
 * never re-read or re-parsed then. When its inode, size, mtime or ctime
 * changed, the config is recompiled in-process (policy_load + sandbox_new)
 * and swapped in. A config that fails to compile never widens anything: the
 * last good policy stays in force and the rendered diagnostic
 * (file:line:col: error: ...) is handed to every call until a good config
 * replaces it. With no good policy ever, acquire returns NULL.
 *
 * Half-written files. A rename-writer replaces the file atomically; an
 * in-place writer truncates and writes, so a reader can catch a prefix of
 * the new text — possibly a valid TOML file that lacks the rules further
 * down. Two guards: a changed file is read only once its key has stayed the
 * same for RELOAD_SETTLE_MS of our own monotonic clock (not judged by its
 * timestamps: on a loaded VM the kernel's coarse clock lags by 100 ms and
 * more, so a file truncated this instant can carry an old mtime), and the
 * file is stat'ed again after the compile; if anything changed meanwhile the
 * result is discarded and the wait starts over. So the policy served is
 * always a text the file held, unchanged, for at least RELOAD_SETTLE_MS: a
 * writer that pauses longer than that in the middle of a file has, for that
 * long, published the prefix. A parse error caused by a half-written file
 * just keeps the last good policy, and the next call re-checks. The price:
 * the first call after an edit waits RELOAD_SETTLE_MS.
 *
 * Same-size rewrites: the key includes ctime to the nanosecond. Since Linux
 * 6.13 (multigrain timestamps) a change made after the ctime was queried —
 * and it is queried on every call — gets a new, fine-grained ctime, so no
 * rewrite goes unseen; on older kernels two writes within one timer tick of
 * each other could share a key.
 *
 * Locking: `mu` guards the current policy, the last-seen file key, the
 * error text and the counters (held for a few instructions); `compile_mu`
 * lets one thread compile at a time while the others wait for its result, so
 * that every call after a change is served under the new file. A struct
 * lpolicy is immutable once published and reference-counted: a call keeps
 * the one it started with even if a reload swaps another in meanwhile.
 */
#ifndef DRUN_RT_RELOAD_H
#define DRUN_RT_RELOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "drun_policy.h"

#define RELOAD_SETTLE_MS 50
/* How long one call waits for a churning file before it goes on under the
 * policy in force (and the next call looks again). */
#define RELOAD_SETTLE_MAX_MS 1000

typedef struct lpolicy {
    atomic_int refs;     /* holders; freed at 0 */
    uint64_t generation; /* 1 for the first policy loaded, +1 per reload */
    policy_t *owned;     /* freed with it (NULL when the sandbox owns the policy) */
    const policy_t *pol; /* the policy to read */
    sandbox_t *sbx;      /* the compiled sandbox; NULL when built without (fuzzing) */
    char *source;        /* config path, "<default>", or the artifacts directory */
    int64_t loaded_ms;   /* wall clock when it was swapped in */
} lpolicy_t;

typedef enum {
    RELOAD_CONFIG,    /* --config FILE */
    RELOAD_CHAIN,     /* neither: $DRUN_CONFIG, ~/.drun/config.toml, embedded default */
    RELOAD_ARTIFACTS, /* --artifacts DIR (the directory watched: artifacts arrive by rename) */
} reload_mode_t;

typedef struct reloader reloader_t;

/* Sets up the source and compiles it once. config and artifacts are
 * exclusive (both NULL: the default chain). with_sandbox=false skips
 * sandbox_new (the fuzz harness, which never spawns). Never NULL; a first
 * compile that fails is reported through reload_acquire like any other. */
reloader_t *reload_new(const char *config, const char *artifacts, bool with_sandbox);
void reload_free(reloader_t *r);

/* The policy in force after checking the source (see above), with a
 * reference the caller drops with reload_release; NULL when no policy ever
 * compiled. *error receives a copy of the rendered diagnostic of the last
 * failed compile (caller frees), NULL when the current file compiled. */
lpolicy_t *reload_acquire(reloader_t *r, char **error);

/* The policy in force without checking the file (the idle reaper). */
lpolicy_t *reload_peek(reloader_t *r);

void reload_release(lpolicy_t *lp);

typedef struct reload_stats {
    reload_mode_t mode;
    char *watched;       /* the file stat'ed before each call (owned) */
    uint64_t checks;     /* reload_acquire calls (one stat each) */
    uint64_t compiles;   /* times the source was read and compiled */
    uint64_t reloads;    /* successful compiles that replaced a policy */
    uint64_t failures;   /* compiles that failed */
    uint64_t check_ns;   /* time spent in the unchanged-file check, total */
    uint64_t generation; /* of the policy in force, 0 for none */
    char *error;         /* rendered diagnostic of the failing file (owned) or NULL */
    int64_t error_ms;    /* wall clock of that failure */
} reload_stats_t;

void reload_get_stats(reloader_t *r, reload_stats_t *out);
void reload_stats_free(reload_stats_t *s);

const char *reload_mode_name(reload_mode_t m); /* "config", "default-chain", "artifacts" */

#endif
