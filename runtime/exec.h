/* exec.h — running one command under the sandbox and collecting what it did.
 *
 * One loop per command: poll(2) on its stdout and stderr pipes, its stdin
 * pipe (when there is input), a pidfd for its exit, and a wake fd for
 * cancellation. Output is read as it comes, whatever the bytes, so a chatty
 * or binary command never blocks on a full pipe; bytes past the caps are
 * counted and dropped. The command leads its own process group: a timeout, a
 * cancellation or a session close kills the whole group, bwrap, and the
 * sandbox's pid 1 (through a pidfd), which takes every process of the
 * sandbox's PID namespace with it even when its parent-death signal is lost.
 * A run returns once pid 1 has ended (reaped here when it came back to us,
 * see reaper.h).
 */
#ifndef DRUN_RT_EXEC_H
#define DRUN_RT_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drun_policy.h"
#include "janitor.h"

typedef struct exec_spec {
    const sandbox_t *sbx;    /* compiled sandbox to run under */
    janitor_t *janitor;      /* gates the run and takes its placeholders */
    const char *workspace;   /* session workspace (absolute) */
    const char *scratch;     /* session scratch dir (absolute) */
    int ws_fd;               /* the session's kept workspace fd: the sandbox binds it (0: none) */
    const char *hide;        /* a directory kept dark even under a grant of a parent (the
                                sessions root: other sessions), or NULL */
    char *const *argv;       /* the command */
    const char *input;       /* bytes for stdin, or NULL for /dev/null */
    size_t input_len;
    int64_t timeout_ms;      /* wall-clock limit (> 0) */
    size_t out_cap, err_cap; /* bytes kept of stdout / stderr */
    int wake_fd;             /* becomes readable when stop() may have turned true; -1: none */
    bool (*stop)(void *ctx); /* polled: true = kill the command now (cancel, session closed) */
    void (*tick)(void *ctx, int64_t elapsed_ms, uint64_t out_bytes, uint64_t err_bytes);
    int64_t tick_ms;         /* how often tick runs (0: never) */
    void *ctx;               /* for stop and tick */
    int proxy_fd;            /* the sandbox's end of a proxy channel (netproxy.h), or 0: no network */
} exec_spec_t;

typedef struct exec_result {
    buf_t out, err;                /* the first out_cap / err_cap bytes */
    uint64_t out_total, err_total; /* bytes the command wrote in all */
    int exit_code;                 /* bwrap's exit status (128+N: the command died of signal N),
                                      or -1 when bwrap itself was killed */
    int signal;                    /* the signal that ended the command, when known, or 0 */
    bool setup_failed;             /* bwrap could not build the sandbox (its message is in err) */
    bool timed_out;                /* killed at timeout_ms */
    bool stopped;                  /* killed because stop() said so */
    double wall_ms;                /* from spawn to reaped and all output read */
    char *error;                   /* the sandbox could not be set up (owned), else NULL */
    char *fs_denied;               /* the access-time layer's refusals, "TIME\tOP\tPATH\tRULE" lines
                                      (sandbox_fs_denied; owned), or NULL */
    size_t fs_denied_total;        /* how many there were in all */
} exec_result_t;

/* Runs the command to completion (or kill). Returns false with r->error
 * when it could not be started; true otherwise, whatever its exit status. */
bool exec_run(const exec_spec_t *s, exec_result_t *r);
void exec_result_free(exec_result_t *r);

#endif
