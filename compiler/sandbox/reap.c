/* reap.c — after the spawn: bwrap's status report (was the command started,
 * how did it end, the sandbox's pid 1), waiting until nothing of the
 * command is left, and the cleanup of the placeholders, shared by the runs
 * of one workspace through its lock.
 */
#include "sbx_int.h"
#include "fslayer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads what bwrap's status pipe holds now, without waiting; block: read to
 * its end (bwrap is gone) and close it. */
static void read_status(sbx_residue_t *r, bool to_end)
{
    if (!r || r->status_fd < 0) return;
    int fl = fcntl(r->status_fd, F_GETFL);
    if (fl >= 0 && !(fl & O_NONBLOCK)) fcntl(r->status_fd, F_SETFL, fl | O_NONBLOCK);
    char chunk[512];
    ssize_t n;
    while ((n = read(r->status_fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) buf_add(&r->status, chunk, (size_t)n);
    if (to_end || n == 0) {
        close(r->status_fd);
        r->status_fd = -1;
    }
}

/* bwrap writes {"child-pid": N} once the command runs: N, or 0. */
static pid_t status_child_pid(buf_t *b)
{
    const char *cp = b->len ? strstr(buf_cstr(b), "\"child-pid\"") : NULL;
    if (!cp) return 0;
    cp += strlen("\"child-pid\"");
    while (*cp == ' ' || *cp == ':') cp++;
    long v = strtol(cp, NULL, 10);
    return v > 0 && v <= INT_MAX ? (pid_t)v : 0;
}

pid_t sandbox_pid1(sbx_residue_t *r)
{
    if (!r) return 0;
    pid_t p = status_child_pid(&r->status);
    if (p) return p;
    read_status(r, false);
    return status_child_pid(&r->status);
}

void sandbox_status(sbx_residue_t *r, int wait_status, sbx_status_t *st)
{
    memset(st, 0, sizeof *st);
    /* bwrap writes {"child-pid": N} once the command runs, and
     * {"exit-code": N} when it ends; no child-pid means setup failed. */
    read_status(r, true);
    bool started = r && r->status.len && strstr(buf_cstr(&r->status), "\"child-pid\"");
    st->sandbox_pid = r ? status_child_pid(&r->status) : 0;
    if (WIFSIGNALED(wait_status)) {
        st->term_signal = WTERMSIG(wait_status);
        st->exit_code = 128 + st->term_signal;
    } else {
        st->exit_code = WEXITSTATUS(wait_status);
        /* bwrap reports a command killed by a signal as 128+N */
        if (started && st->exit_code > 128 && st->exit_code < 128 + 65) st->term_signal = st->exit_code - 128;
    }
    st->setup_failed = !started && !WIFSIGNALED(wait_status);
}

/* True when no process the command started can still run: the sandbox's
 * pid 1 has no child (not even a zombie), read from
 * /proc/PID/task/PID/children. Every other process of the sandbox descends
 * from pid 1: orphans of the sandbox go to it, clone(CLONE_PARENT) only makes
 * a sibling (a child of pid 1 again; pid 1 itself may not use it), and pid 1,
 * bwrap's, starts nothing after the command. So nothing can appear once the
 * list is empty. What is left is pid 1 ending, which runs none of the
 * command's code: the placeholders can go while the kernel tears its mounts
 * down, which took half a millisecond of each run (make bench: "sandbox after
 * bwrap's exit"). A pid 1 already reaped (its pid perhaps reused) means the
 * whole sandbox has gone. Anything not read cleanly means wait. */
static bool command_gone(pid_t pid1)
{
    char path[64], text[32];
    if (pid1 <= 0) return false;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid1, (int)pid1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, text, sizeof text);
    close(fd);
    return n == 0;
}

void sandbox_wait_finish(sbx_residue_t *r, pid_t pid, sbx_status_t *st)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sandbox_status(r, status, st);
    /* bwrap exits once the command has, and may leave the sandbox's pid 1
     * still ending: the kernel kills and reaps every other process of the
     * sandbox before pid 1 ends, and the last of them takes the sandbox's
     * mounts with it. Until no process of the command is left a placeholder
     * must stay: removing it detaches what is mounted on it in every
     * namespace, and a process still running (a daemon the command left,
     * killed only after bwrap has exited) would see the protected path
     * writable. That pid 1 is either reaped by bwrap, or left to this
     * process, a subreaper: once this process has no child left, the
     * sandbox is gone. */
    if (r && r->layer) { /* the layer's daemon is a child too: wait for the sandbox's pid 1 alone */
        bool died = false;
        fslayer_end_run(r->layer, command_gone(st->sandbox_pid) ? 0 : st->sandbox_pid, &died);
        r->layer = NULL;
        if (died) st->setup_failed = true;
    } else if (!command_gone(st->sandbox_pid))
        for (;;)
            if (waitpid(-1, NULL, 0) < 0 && errno != EINTR) break;
    sandbox_cleanup(r);
}

void sandbox_end_layer(sbx_residue_t *r)
{
    if (!r || !r->layer) return;
    fslayer_finish(r->layer, NULL);
    r->layer = NULL;
}

void sandbox_cleanup(sbx_residue_t *r)
{
    if (!r) return;
    if (r->status_fd >= 0) close(r->status_fd);
    fslayer_finish(r->layer, NULL);
    /* The last run out of the workspace (the exclusive lock is free) removes
     * its placeholders and those others left; otherwise it lists its own
     * (relative to the workspace) for that last one. */
    bool last = r->lock_fd < 0 || flock(r->lock_fd, LOCK_EX | LOCK_NB) == 0;
    if (last) {
        strvec_t all = {0};
        for (size_t i = 0; i < r->paths.n; i++) vec_push(&all, xstrdup(r->paths.v[i]));
        hoststate_pending_take(r->pending, &all);
        placeholders_remove_all(r->ws_fd, &all);
        sbx_free_strvec(&all);
    } else {
        hoststate_pending_add(r->pending, r->paths.v, r->paths.n);
    }
    if (r->lock_fd >= 0) close(r->lock_fd);
    if (r->ws_fd >= 0) close(r->ws_fd);
    sbx_free_strvec(&r->paths);
    free(r->pending);
    buf_free(&r->status);
    free(r);
}
