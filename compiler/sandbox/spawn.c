/* spawn.c — starting bwrap: the vfork child, bwrap started ahead of its
 * plan, and handing it its limits, filter and options.
 *
 * Starting bwrap (exec, its libraries, its own setup) takes longer than
 * compiling and planning a run, and none of it depends on them: so bwrap is
 * started first, as "bwrap --args 3 -- [SHIM...] CMD ARGS...", reading every
 * option from a pipe (fd 3) and its filter from another (fd 4), while the
 * caller compiles and plans; then its limits are set, the options and the
 * filter written, and it goes on. bwrap takes the command only from its own
 * argv and reads options until the end of the pipe, so a feeder killed
 * half-way would hand it an end it takes for the last option. What keeps a
 * run from going ahead on part of its options is the order: the options
 * lead with "--seccomp 4" (checked here), they are written first, and the
 * filter only once every byte of them is in the pipe. A feeder that dies
 * before that leaves bwrap an empty filter, which the kernel refuses
 * (prctl EINVAL: bwrap dies before its exec), or no options at all (an
 * empty root, in which the command does not exist). The filter is one
 * write of at most PIPE_BUF bytes: the kernel puts it in the pipe whole or
 * not at all, even when the copy faults. Besides, each pipe is written with
 * one write() into a pipe made large enough for all of it (a pipe write
 * that never has to wait is not cut short), a run given up on is killed
 * (SIGKILL, then reaped) before its pipes close, and a caller that dies
 * takes bwrap with it (PR_SET_PDEATHSIG); neither is relied on alone: a
 * write can still stop short (a page fault the dying feeder gives up on),
 * and the death signal comes after the pipes close (and a setuid bwrap
 * drops it). tests/suites/55-prestart-kill kills feeders at random points.
 *
 * fds in the bwrap child (spawn_fds_t): 3 the options, 4 the filter, 5 the
 * status report, 6 the empty file, 7 the workspace, 8 the scratch dir, and
 * for a proxied run 9 the proxy channel and 10 this binary (the relay);
 * from 64 on, the plan's bind sources when it binds host paths by fd
 * (bind_fd.c: only a bwrap started after the plan has them); nothing else
 * of the caller's.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static void close_fds(spawn_fds_t *f)
{
    close_fd(&f->args), close_fd(&f->seccomp), close_fd(&f->status);
    close_fd(&f->empty), close_fd(&f->workspace), close_fd(&f->scratch);
    close_fd(&f->proxy), close_fd(&f->relay);
}

/* Sets a limit of the waiting bwrap, which its command inherits. Above the
 * caller's hard limit (raising it needs CAP_SYS_RESOURCE): the most the
 * caller may give, never more than the policy's, rather than silently
 * keeping the caller's soft limit. pid 0: this process. */
static void set_limit(pid_t pid, int res, rlim_t v)
{
    struct rlimit rl = {v, v}, cur;
    if (prlimit(pid, res, &rl, NULL) == 0) return;
    if (prlimit(pid, res, NULL, &cur) != 0) return;
    if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v) rl.rlim_cur = rl.rlim_max = cur.rlim_max;
    prlimit(pid, res, &rl, NULL);
}

/* A sanitizer build of this binary cannot start under an address-space
 * limit (ASan reserves terabytes of shadow memory at start), and a proxied
 * run starts this very binary inside the sandbox as the relay: such a build
 * leaves RLIMIT_AS off proxied runs. Release builds always set it. */
#if defined(DRUN_SAN)
#define AS_LIMIT_WITH_RELAY 0
#else
#define AS_LIMIT_WITH_RELAY 1
#endif

static void set_limits(const sandbox_t *s, pid_t pid, bool relay)
{
    const policy_t *p = s->pol;
    if (!relay || AS_LIMIT_WITH_RELAY) set_limit(pid, RLIMIT_AS, (rlim_t)policy_get(p, S_MEMORY_MB) << 20);
    set_limit(pid, RLIMIT_CPU, (rlim_t)policy_get(p, S_CPU_SECONDS));
    set_limit(pid, RLIMIT_FSIZE, (rlim_t)policy_get(p, S_MAX_FILE_SIZE_MB) << 20);
    set_limit(pid, RLIMIT_NOFILE, (rlim_t)policy_get(p, S_MAX_OPEN_FILES));
    /* Without a shim (a root caller, whose sandbox runs as the sandbox
     * user): set here, on bwrap, whose uid is no longer 0, so it binds. It
     * counts every process of that host uid: concurrent sandboxes share it. */
    if (!s->shim[0]) set_limit(pid, RLIMIT_NPROC, (rlim_t)policy_get(p, S_MAX_PROCESSES));
}

/* fd to exactly slot, or -1 (nothing there). */
static bool place_fd(int fd, int slot)
{
    if (fd < 0) return true;
    return fd == slot ? fcntl(fd, F_SETFD, 0) == 0 : dup2(fd, slot) == slot;
}

/* In the child: only async-signal-safe calls from here to exec, and every
 * one checked: a child that went on after a failure could hand bwrap (and
 * the command) the caller's own descriptors, or run it as root. */
static _Noreturn void child(const char *bwrap_bin, char **argv, const sbx_exec_t *x, const spawn_fds_t *in,
                            const sbx_ident_t *id, const sandbox_t *limits, const sigset_t *mask)
{
    /* A vfork child shares the caller's memory: none of the caller's signal
     * handlers may run here (they would write the caller's state), so every
     * handled signal goes back to its default before the caller's mask
     * returns. Ignored ones stay ignored (nohup), but for SIGPIPE: `yes |
     * head` in the sandbox must end as it does outside. */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            (sa.sa_handler != SIG_IGN || sig == SIGPIPE)) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            if (sigaction(sig, &sa, NULL) != 0) _exit(127);
        }
    }
    /* Every fd first above the slots (a source may sit on another's slot),
     * then into place: the fixed ones at 0..10, the bind sources from
     * SBX_FD_BINDS on. */
    int hi[SBX_FD_COUNT];
    const int src[SBX_FD_COUNT] = {x->fd_in, x->fd_out, x->fd_err, in->args, in->seccomp, in->status, in->empty,
                                   in->workspace, in->scratch, in->proxy, in->relay};
    size_t nb = in->binds ? in->binds->n : 0;
    int top = SBX_FD_BINDS + (int)nb; /* above every slot */
    for (int i = 0; i < SBX_FD_COUNT; i++) {
        int s = src[i];
        if (s < 0 && i < 3 && (s = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) _exit(127);
        if (s >= 0 && (hi[i] = fcntl(s, F_DUPFD, top)) < 0) _exit(127);
        if (s < 0) hi[i] = -1;
    }
    /* the bind sources: above top too, then down into their slots (the
     * runner's own copies are O_CLOEXEC and may sit anywhere) */
    int bhi[SBX_BINDS_MAX];
    if (nb > SBX_BINDS_MAX) _exit(127);
    for (size_t k = 0; k < nb; k++)
        if ((bhi[k] = fcntl(in->binds->fd[k], F_DUPFD, top)) < 0) _exit(127);
    for (int i = 0; i < SBX_FD_COUNT; i++) {
        if (!place_fd(hi[i], i)) _exit(127);
        if (hi[i] < 0 && close(i) != 0 && errno != EBADF) _exit(127); /* a slot unused: nothing of the caller's */
    }
    for (size_t k = 0; k < nb; k++)
        if (!place_fd(bhi[k], SBX_FD_BINDS + (int)k)) _exit(127);
    /* nothing of the caller's (sockets, other sessions' pipes) crosses over */
    if (syscall(SYS_close_range, (unsigned)SBX_FD_COUNT, (unsigned)SBX_FD_BINDS - 1, 0U) != 0 ||
        syscall(SYS_close_range, (unsigned)top, ~0U, 0U) != 0)
        _exit(127);
    if (x->new_pgrp && setpgid(0, 0) != 0) _exit(127);
    if (limits) set_limits(limits, 0, in->relay >= 0);
    /* A root caller's sandbox runs as the sandbox user: raw syscalls, for
     * this thread alone (glibc's wrappers signal every thread of the
     * caller to change theirs too: wrong from a vfork child of a threaded
     * drun-mcp). bwrap then runs unprivileged and makes its own user
     * namespace: host uid 0 is nowhere in it. */
    if (id->drop && (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, id->gid, id->gid, id->gid) != 0 ||
                     syscall(SYS_setresuid, id->uid, id->uid, id->uid) != 0))
        _exit(127);
    /* the caller gone before the options came: gone too (bwrap's own
     * --die-with-parent takes over once it has read them). After the uid
     * change, which clears it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(127);
    if (sigprocmask(SIG_SETMASK, mask, NULL) != 0) _exit(127);
    char *envp[] = {NULL};
    execve(bwrap_bin, argv, envp);
    _exit(127);
}

/* vfork, not fork: the child only rearranges fds and execs, and a fork of a
 * large or multi-threaded caller (drun-mcp) copies its page tables and then
 * pays a copy-on-write fault on every page it writes next — on the request
 * path, after the command. The parent thread waits until the exec; the child
 * touches nothing of the parent's memory but its own stack. In its own
 * function so that no variable of the caller lives across it. */
static __attribute__((noinline)) pid_t start_bwrap(const char *bwrap_bin, char **argv, const sbx_exec_t *x,
                                                   const spawn_fds_t *fds, const sandbox_t *limits)
{
    const sbx_ident_t *id = hoststate_ident(); /* read before: the child only uses it */
    sigset_t all, mask;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &mask); /* nothing runs a handler until the child reset them */
    pid_t pid = vfork();
    if (pid == 0) child(bwrap_bin, argv, x, fds, id, limits, &mask);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    errno = saved;
    return pid;
}

/* "bwrap --args 3 -- [SHIM...] [RELAY...] CMD ARGS...", NULL-terminated, in *v. */
static void bwrap_cmdline(char *const *shim, bool relay, char *const *cmd, strvec_t *v)
{
    const char *head[] = {"bwrap", "--args", "3", "--"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) vec_push(v, xstrdup(head[i]));
    for (int i = 0; shim && i < 4 && shim[i]; i++) vec_push(v, xstrdup(shim[i]));
    if (relay) { /* relay.c: the command's parent inside, serving the proxy channel on fd 9 */
        vec_push(v, xstrdup(SBX_RELAY_PATH));
        vec_push(v, xstrdup("--drun-relay"));
        vec_push(v, xasprintf("%d", SBX_FD_PROXY));
        vec_push(v, xasprintf("%d", SBX_PROXY_PORT));
        vec_push(v, xstrdup("--"));
    }
    for (; *cmd; cmd++) vec_push(v, xstrdup(*cmd));
    vec_push(v, (char *)NULL);
    v->n--; /* the NULL stays after the end */
}

sbx_early_t *sbx_launch(const char *bwrap_bin, char *const *shim, const sbx_exec_t *x, spawn_fds_t *fds,
                        int args_w, int seccomp_w, const sandbox_t *limits, char **err)
{
    int jp[2] = {-1, -1};
    pid_t pid = -1;
    int saved = 0;
    if (pipe2(jp, O_CLOEXEC) != 0) {
        saved = errno;
    } else {
        fds->status = jp[1];
        strvec_t argv = {0};
        bwrap_cmdline(shim, SBX_PROXIED(x), x->argv, &argv);
        pid = start_bwrap(bwrap_bin, argv.v, x, fds, limits);
        saved = errno;
        sbx_free_strvec(&argv);
    }
    /* what the child got stays for the run's bookkeeping: the workspace
     * (cleanup works beneath it) and the scratch dir */
    int ws = fds->workspace, sc = fds->scratch;
    fds->workspace = fds->scratch = -1;
    close_fds(fds);
    if (pid < 0) {
        *err = xasprintf("cannot start bwrap: %s", strerror(saved));
        close_fd(&jp[0]), close_fd(&args_w), close_fd(&seccomp_w), close_fd(&ws), close_fd(&sc);
        return NULL;
    }
    if (x->new_pgrp) setpgid(pid, pid); /* no race with the child's own call */
    sbx_early_t *e = xcalloc(1, sizeof *e);
    *e = (sbx_early_t){pid, args_w, seccomp_w, jp[0], shim && shim[0], ws, sc, limits != NULL, SBX_PROXIED(x)};
    return e;
}

/* The run's own fds for the child: the empty file, the workspace and (a
 * session's) scratch dir. False with *err; f's fds are closed then. */
static bool run_fds(const sbx_exec_t *x, spawn_fds_t *f, char **err)
{
    f->empty = hoststate_empty_fd(err);
    if (f->empty >= 0) f->workspace = hoststate_open_dir("workspace", x->workspace, x->workspace_fd, err);
    if (f->workspace >= 0 && !x->scratch_tmpfs) f->scratch = hoststate_open_dir("scratch dir", x->scratch, -1, err);
    bool dirs = f->empty >= 0 && f->workspace >= 0 && (x->scratch_tmpfs || f->scratch >= 0);
    /* a proxied run: the channel, and this very binary for the relay */
    if (dirs && SBX_PROXIED(x) &&
        ((f->proxy = fcntl(x->proxy_fd, F_DUPFD_CLOEXEC, 3)) < 0 ||
         (f->relay = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) < 0)) {
        *err = xasprintf("cannot hand the proxy channel to the sandbox: %s", strerror(errno));
        dirs = false;
    }
    if (dirs) return true;
    close_fds(f);
    return false;
}

sbx_early_t *sbx_prestart(const char *bwrap_bin, char *const *shim, const sbx_exec_t *x, const sandbox_t *limits,
                          char **err)
{
    int ap[2] = {-1, -1}, sp[2] = {-1, -1};
    spawn_fds_t f = SBX_SPAWN_FDS_NONE;
    if (!run_fds(x, &f, err)) return NULL;
    if (pipe2(ap, O_CLOEXEC) != 0 || pipe2(sp, O_CLOEXEC) != 0) {
        *err = xasprintf("cannot pass the sandbox setup to bwrap: %s", strerror(errno));
        close_fd(&ap[0]), close_fd(&ap[1]), close_fd(&sp[0]), close_fd(&sp[1]);
        close_fds(&f);
        return NULL;
    }
    f.args = ap[0];
    f.seccomp = sp[0];
    return sbx_launch(bwrap_bin, shim, x, &f, ap[1], sp[1], limits, err);
}

sbx_early_t *sandbox_prestart(const char *bwrap_bin, const sbx_exec_t *x, char **err)
{
    return sbx_prestart(bwrap_bin, NULL, x, NULL, err);
}

void sandbox_early_abort(sbx_early_t *e)
{
    if (!e) return;
    /* killed while its pipes are still open: it never sees an end of input */
    kill(e->pid, SIGKILL);
    while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR) {}
    close_fd(&e->args_fd), close_fd(&e->seccomp_fd), close_fd(&e->status_fd);
    close_fd(&e->ws_fd), close_fd(&e->sc_fd);
    free(e);
}

/* All of data into a pipe nobody has read from yet, in one write(): the
 * pipe is first made large enough (a new pipe has 64 KiB, or one page once
 * the user's pipe quota is spent). False when it cannot be, or the write
 * fails: the caller then kills the reader. A closed reader (bwrap died) is
 * an error, not a SIGPIPE. */
static bool write_whole(int fd, const void *data, size_t len)
{
    if (len > INT_MAX) return false;
    int cap = fcntl(fd, F_GETPIPE_SZ);
    if (cap < 0 || ((size_t)cap < len && fcntl(fd, F_SETPIPE_SZ, (int)len) < (int)len)) return false;
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t w;
    do w = write(fd, data, len);
    while (w < 0 && errno == EINTR);
    if (w < 0 && errno == EPIPE) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {} /* ours, not the caller's */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return w == (ssize_t)len;
}

/* Options up to this size go through the pipe: a pipe of that size is
 * allowed to any user (pipe-max-size is 1 MiB by default). Larger ones (some
 * 7,000 mounts) go through sealed memory to a fresh bwrap (start_loaded). */
#define PIPE_ARGS_MAX (256 * 1024)

/* What the options must start with: the filter's fd, so that any part of
 * them bwrap could be left with still waits for the filter. */
static const char SECCOMP_FIRST[] = "--seccomp\0"
                                    "4";

/* The options, then the filter (see the top of this file). False, with
 * whatever was not written still open (the caller kills bwrap before its
 * pipes close), when the options do not start with --seccomp 4, the
 * filter is not one atomic write, or a write fails. */
bool sbx_early_feed(const sandbox_t *s, sbx_early_t *e, const buf_t *args)
{
    if (args->len > PIPE_ARGS_MAX || args->len < sizeof SECCOMP_FIRST ||
        memcmp(args->p, SECCOMP_FIRST, sizeof SECCOMP_FIRST) != 0 || s->seccomp.len == 0 ||
        s->seccomp.len > PIPE_BUF)
        return false;
    if (!e->limits_set) set_limits(s, e->pid, e->relay);
    if (!write_whole(e->args_fd, args->p, args->len)) return false;
    close_fd(&e->args_fd);
    /* every option is in the pipe: only now may the filter follow */
    if (!write_whole(e->seccomp_fd, s->seccomp.p, s->seccomp.len)) return false;
    close_fd(&e->seccomp_fd);
    return true;
}

/* A sealed in-memory file holding data, for bwrap to read. */
static int data_fd(const char *name, const void *data, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
        lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

sbx_early_t *sbx_start_loaded(const sandbox_t *s, const sbx_exec_t *x, const buf_t *args, const sbx_binds_t *binds,
                              char **err)
{
    spawn_fds_t f = SBX_SPAWN_FDS_NONE;
    if (!run_fds(x, &f, err)) return NULL;
    f.binds = binds;
    f.args = data_fd("drun-bwrap-args", args->p, args->len);
    f.seccomp = data_fd("drun-seccomp", s->seccomp.p, s->seccomp.len);
    if (f.args < 0 || f.seccomp < 0) {
        *err = xasprintf("cannot pass the sandbox setup to bwrap: %s", strerror(errno));
        close_fds(&f);
        return NULL;
    }
    return sbx_launch(s->bwrap_bin, s->shim, x, &f, -1, -1, s, err);
}
