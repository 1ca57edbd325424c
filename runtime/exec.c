/* exec.c — one sandboxed command: spawn, stream, time out, kill, reap.
 *
 * Two processes stand for a run: bwrap, which sandbox_spawn started (our
 * child, the leader of the command's process group), and the sandbox's pid
 * 1, bwrap's child in the sandbox's pid namespace. Killing pid 1 ends every
 * process of the sandbox, whatever its session or process group; killing
 * bwrap alone relies on pid 1's parent-death signal. So a kill (timeout,
 * cancel, session closed) goes to the group, to bwrap and to pid 1, and a
 * run ends only once pid 1 has: no process of it outlives the call, and its
 * placeholders are never removed under a process still running (janitor.h).
 * pid 1 is held by a pidfd, so its pid being reused can never misdirect a
 * signal; it is reaped here when it was re-parented to us (reaper.h).
 */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reaper.h"

/* After the command exited, how long its pipes may take to reach EOF. */
#define DRAIN_MS 250
/* The access-time layer's refusals one result carries (SPEC §16): the
 * layer deduplicates them; fs_denied_total says how many there were. */
#define FS_DENIED_MAX 50
/* After bwrap exited, how long the sandbox's pid 1 may take to end on its
 * own before it is killed, and how long its end is then awaited. */
#define PID1_GRACE_MS 200
#define PID1_KILL_WAIT_MS 2000

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_msf(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Reads what is available from *fd into b (up to cap kept); closes *fd on EOF. */
static void drain(int *fd, buf_t *b, size_t cap, uint64_t *total)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(*fd, chunk, sizeof chunk);
        if (n > 0) {
            *total += (uint64_t)n;
            if (b->len < cap) {
                size_t keep = (size_t)n < cap - b->len ? (size_t)n : cap - b->len;
                buf_add(b, chunk, keep);
            }
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close_fd(fd); /* EOF or error */
        return;
    }
}

/* The sandbox's pid 1, held by a pidfd once bwrap has reported it. */
typedef struct pid1 {
    int fd;       /* pidfd, or -1 while unknown */
    bool checked; /* bwrap's report was read and gave nothing usable */
} pid1_t;

/* Looks for pid 1 in bwrap's status report so far (non-blocking): a child
 * of bwrap (its pid; 0 once bwrap is reaped) or, re-parented, of ours. */
static void pid1_find(pid1_t *p, sbx_residue_t *residue, pid_t bwrap)
{
    if (p->fd >= 0 || p->checked)
        return;
    pid_t pid = sandbox_pid1(residue);
    if (pid <= 0)
        return;
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    /* The pidfd is of the process that has the pid now: make sure that is
     * still bwrap's child (or ours, re-parented) in the sandbox's pid
     * namespace, not a process that got the pid after pid 1 ended. */
    if (fd >= 0 && !reaper_is_sandbox_pid1(fd, pid, bwrap)) {
        close(fd);
        fd = -1;
    }
    p->fd = fd;
    p->checked = fd < 0;
}

static void kill_group(pid_t pid, pid1_t *p1, sbx_residue_t *residue)
{
    /* The command leads its own group (new_pgrp): this reaches bwrap and
     * anything it left in the group. A process that left the group (setsid)
     * is reached through pid 1: its end takes the whole pid namespace with
     * it, even when pid 1's parent-death signal (--die-with-parent) never
     * comes. */
    pid1_find(p1, residue, pid);
    if (p1->fd >= 0)
        syscall(SYS_pidfd_send_signal, p1->fd, SIGKILL, NULL, 0);
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* Waits until pidfd's process has ended, at most ms; true when it has. */
static bool wait_gone(int pidfd, int64_t ms)
{
    int64_t end = now_ms() + ms;
    for (;;) {
        struct pollfd p = {pidfd, POLLIN, 0};
        int64_t left = end - now_ms();
        int n = poll(&p, 1, left > 0 ? (int)left : 0);
        if (n > 0)
            return true;
        if ((n == 0 && left <= 0) || (n < 0 && errno != EINTR))
            return false;
    }
}

/* After bwrap's exit: pid 1 ends (killed when it lingers), and is reaped
 * when it was re-parented to us (a subreaper). */
static void pid1_finish(pid1_t *p)
{
    if (p->fd < 0)
        return;
    if (!wait_gone(p->fd, PID1_GRACE_MS)) {
        syscall(SYS_pidfd_send_signal, p->fd, SIGKILL, NULL, 0);
        wait_gone(p->fd, PID1_KILL_WAIT_MS);
    }
    /* Only that process, and only when it is our child: ECHILD otherwise. */
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)p->fd, &si, WEXITED | WNOHANG) < 0 && errno == EINTR);
    close(p->fd);
    p->fd = -1;
}

static void set_status(exec_result_t *r, int status)
{
    if (WIFEXITED(status)) {
        r->exit_code = WEXITSTATUS(status);
        /* bwrap (PID 1 of the sandbox) reports a command that died of
         * signal N as 128+N. */
        r->signal = r->exit_code > 128 && r->exit_code < 128 + 65 ? r->exit_code - 128 : 0;
    } else if (WIFSIGNALED(status)) {
        r->exit_code = -1;
        r->signal = WTERMSIG(status);
    }
}

bool exec_run(const exec_spec_t *s, exec_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    reaper_start();
    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
        (s->input && pipe2(in, O_CLOEXEC) < 0)) {
        r->error = xasprintf("cannot create pipes: %s", strerror(errno));
        close_fd(&out[0]), close_fd(&out[1]), close_fd(&err[0]), close_fd(&err[1]);
        return false;
    }
    /* Our ends never block the loop; the command's ends stay blocking. */
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    if (s->input)
        fcntl(in[1], F_SETFL, O_NONBLOCK);

    const char *hide[] = {s->hide, NULL};
    sbx_exec_t x = {
        .workspace = s->workspace,
        .workspace_fd = s->ws_fd,
        .proxy_fd = s->proxy_fd,
        .scratch = s->scratch,
        .hide = s->hide ? hide : NULL,
        .argv = s->argv,
        .fd_in = s->input ? in[0] : -1,
        .fd_out = out[1],
        .fd_err = err[1],
        .new_pgrp = true,
        .host_env = NULL,
    };
    pid_t pid = -1;
    sbx_residue_t *residue = NULL;
    char *serr = NULL;
    janitor_enter(s->janitor);
    double t0 = now_msf(); /* the command's own time starts at the spawn */
    int rc = sandbox_spawn(s->sbx, &x, &pid, &residue, &serr);
    close_fd(&out[1]);
    close_fd(&err[1]);
    close_fd(&in[0]);
    if (rc > 0) {
        /* the command cannot be found or run: reported like a shell's 127/126 */
        janitor_leave(s->janitor, residue);
        r->exit_code = rc;
        if (serr) buf_printf(&r->err, "%s\n", serr);
        r->err_total = r->err.len;
        free(serr);
        close_fd(&out[0]), close_fd(&err[0]), close_fd(&in[1]);
        return true;
    }
    if (rc < 0) {
        janitor_leave(s->janitor, residue);
        r->error = serr ? serr : xstrdup("the sandbox could not be set up");
        close_fd(&out[0]), close_fd(&err[0]), close_fd(&in[1]);
        return false;
    }
    free(serr);

    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int64_t start = now_ms(), deadline = start + s->timeout_ms;
    int64_t next_tick = s->tick_ms > 0 ? start + s->tick_ms : INT64_MAX;
    int64_t drain_until = 0; /* set once the command exited */
    size_t in_off = 0;
    bool exited = false, killed = false;
    int status = 0;
    pid1_t p1 = {-1, false};

    while (!(exited && out[0] < 0 && err[0] < 0)) {
        struct pollfd p[5];
        int np = 0, i_out = -1, i_err = -1, i_in = -1, i_pid = -1, i_wake = -1;
        if (out[0] >= 0)
            p[i_out = np++] = (struct pollfd){out[0], POLLIN, 0};
        if (err[0] >= 0)
            p[i_err = np++] = (struct pollfd){err[0], POLLIN, 0};
        if (in[1] >= 0)
            p[i_in = np++] = (struct pollfd){in[1], POLLOUT, 0};
        if (pidfd >= 0 && !exited)
            p[i_pid = np++] = (struct pollfd){pidfd, POLLIN, 0};
        if (s->wake_fd >= 0 && !killed)
            p[i_wake = np++] = (struct pollfd){s->wake_fd, POLLIN, 0};

        int64_t now = now_ms();
        int64_t until = exited ? drain_until : (killed ? now + 100 : deadline);
        if (next_tick < until)
            until = next_tick;
        int64_t wait = until - now;
        if (pidfd < 0 && !exited && wait > 50)
            wait = 50;  /* no pidfd: poll for the exit */
        if (!killed && s->stop && wait > 100)
            wait = 100; /* stop() may turn true without a wake fd */
        if (wait < 0)
            wait = 0;
        int n = poll(p, (nfds_t)np, (int)wait);
        if (n < 0 && errno != EINTR)
            break;

        if (i_out >= 0 && p[i_out].revents)
            drain(&out[0], &r->out, s->out_cap, &r->out_total);
        if (i_err >= 0 && p[i_err].revents)
            drain(&err[0], &r->err, s->err_cap, &r->err_total);
        if (i_in >= 0 && p[i_in].revents) {
            ssize_t w = write(in[1], s->input + in_off, s->input_len - in_off);
            if (w > 0)
                in_off += (size_t)w;
            /* Done, or the command stopped reading (EPIPE): either way, EOF. */
            if (in_off >= s->input_len || (w < 0 && errno != EAGAIN && errno != EINTR))
                close_fd(&in[1]);
        }
        if (s->input && in[1] >= 0 && s->input_len == 0)
            close_fd(&in[1]);

        if (!exited)
            pid1_find(&p1, residue, pid);
        if (!exited && (pidfd < 0 || (i_pid >= 0 && p[i_pid].revents))) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = true;
                set_status(r, status);
                drain_until = now_ms() + DRAIN_MS;
                close_fd(&in[1]);
            }
        }

        now = now_ms();
        if (!killed && !exited) {
            if (now >= deadline) {
                r->timed_out = true;
                killed = true;
                kill_group(pid, &p1, residue);
            } else if (s->stop && s->stop(s->ctx)) {
                r->stopped = true;
                killed = true;
                kill_group(pid, &p1, residue);
            }
        }
        if (exited && now >= drain_until) {
            /* Exited, yet something still holds its pipes open (a process
             * that escaped the group): kill the group, stop reading. */
            kill_group(pid, &p1, residue);
            break;
        }
        if (now >= next_tick) {
            if (s->tick && !exited)
                s->tick(s->ctx, now - start, r->out_total, r->err_total);
            next_tick = now + s->tick_ms;
        }
    }
    if (!exited) {
        /* Only reached when poll failed: do not leave the command behind. */
        kill_group(pid, &p1, residue);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR);
        set_status(r, status);
    }
    /* The run ends when bwrap was reaped and its output reached EOF: bwrap
     * exits about a millisecond before the sandbox's PID namespace is gone
     * and the pipes close. */
    r->wall_ms = now_msf() - t0;
    close_fd(&out[0]);
    close_fd(&err[0]);
    close_fd(&in[1]);
    if (pidfd >= 0)
        close(pidfd);
    /* A command that ended before its pid 1 was looked for: bwrap is reaped
     * now, so only a pid 1 re-parented to us is taken (bwrap's pid may have
     * been reused meanwhile). */
    pid1_find(&p1, residue, 0);
    pid1_finish(&p1);
    /* bwrap's status report says whether the command was started at all */
    sbx_status_t st;
    sandbox_status(residue, status, &st);
    r->setup_failed = st.setup_failed;
    r->fs_denied = sandbox_fs_denied(residue, FS_DENIED_MAX, &r->fs_denied_total);
    /* pid 1 is gone, and every process of the sandbox with it: the layer
     * ends now, not with the placeholders. */
    sandbox_end_layer(residue);
    /* Placeholders are removed later, when no command runs (janitor.h). */
    janitor_leave(s->janitor, residue);
    return true;
}

void exec_result_free(exec_result_t *r)
{
    buf_free(&r->out);
    buf_free(&r->err);
    free(r->error);
    free(r->fs_denied);
    memset(r, 0, sizeof *r);
}
