/* cmd_run.c — `drun-policy run [CONFIG] [--workspace DIR] -- CMD [ARG...]`:
 * compile for this host and run CMD in the sandbox. A rejected config never
 * runs the command. Exit: the command's status, 125 when the sandbox could
 * not be set up, 126/127 as a shell does; killed by SIGINT, SIGTERM, SIGHUP
 * or SIGQUIT, it stops the sandbox, cleans up, then dies of that signal. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"
#include "lattice.h"
#include "path.h"
#include "sandbox.h"
#include "wsguard.h"

/* The scratch dir: $XDG_STATE_HOME/drun/run/scratch, never under /tmp (the
 * sandbox has a private /tmp; the scratch dir is HOME). On the host it is
 * only an empty mount point: each run mounts a fresh tmpfs on it inside its
 * own sandbox, so what the command writes there (and the placeholders of the
 * protections) stays in memory and goes with the sandbox. Runs at the same
 * time share the path but never the contents, and nothing is left to remove. */

/* As root the sandbox runs as the sandbox user (sandbox_use_user), which
 * cannot write a workspace it was not given: said once, before the run. */
static void warn_unwritable(const char *ws, int ws_fd)
{
    if (geteuid() != 0 || sandbox_user_can_write(ws_fd)) return;
    uid_t uid;
    gid_t gid;
    sandbox_user(&uid, &gid);
    fprintf(stderr, "drun-policy run: warning: the sandbox runs as uid %u, which cannot write the workspace %s "
                    "(as root, give the sandbox user the workspace: chown -R %u:%u, or run as a normal user)\n",
            (unsigned)uid, ws, (unsigned)uid, (unsigned)gid);
}

/* The workspace guard (SPEC §13): a workspace that is /, $HOME, or an
 * ancestor of $HOME or of the state dir would hand the command every file
 * of the user (~/.ssh, the runner's own state) to write. True when refused. */
static bool refuse_broad_workspace(const char *shown, const char *real)
{
    char *state = fsutil_state_path("");
    char *why = wsguard_reason(real, getenv("HOME"), state);
    free(state);
    if (why)
        fprintf(stderr, "drun-policy run: refusing the workspace '%s' (%s): it is %s, and the sandbox could write "
                        "everything in it; run from a project directory or give --workspace DIR (or, knowingly, "
                        "--allow-broad-workspace)\n",
                shown, real, why);
    free(why);
    return why != NULL;
}

/* One stderr line per refused host (SPEC §15): what was asked, how often,
 * and why, so that the operator knows which command_domains entry is missing.
 * Refusals before any host was known (a malformed request, the tunnel cap)
 * get a line per reason instead. */
static bool same_line(const proxy_refusal_t *a, const proxy_refusal_t *b)
{
    return !strcmp(a->host, b->host) && (strcmp(a->host, "-") != 0 || !strcmp(a->reason, b->reason));
}

static void report_refusals(proxy_chan_t *chan)
{
    proxy_refusal_t *r = NULL;
    size_t n = chan ? proxy_refusals(chan, &r) : 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = same_line(&r[j], &r[i]);
        if (seen) continue;
        unsigned count = 0;
        for (size_t j = i; j < n; j++)
            if (same_line(&r[j], &r[i])) count += r[j].count;
        if (r[i].port) fprintf(stderr, "drun-policy run: network: refused %s port %d", r[i].host, r[i].port);
        else fprintf(stderr, "drun-policy run: network: refused %s", r[i].host);
        fprintf(stderr, " (%u time%s): %s\n", count, count == 1 ? "" : "s", r[i].reason);
    }
    proxy_refusals_free(r, n);
}

/* ^C at the terminal, a kill of the run, a hang-up: the default action
 * ended the runner mid-run, with no cleanup (the access-time layer's names,
 * the fallback's placeholders in the workspace, the scratch backing dir were
 * left on the host). Now the signal is noted, the sandbox is stopped (bwrap
 * killed: --die-with-parent ends the command), the run ends as any run
 * does, and then dies of the same signal, as a shell expects of a child. */
static volatile sig_atomic_t stop_sig, bwrap_pidfd = -1;

/* bwrap by pidfd, not pid: once reaped (sandbox_wait_finish) its pid may be
 * another process's, while its pidfd then only says ESRCH */
static void on_stop(int sig)
{
    if (!stop_sig) stop_sig = sig;
    if (bwrap_pidfd >= 0) syscall(SYS_pidfd_send_signal, (int)bwrap_pidfd, SIGKILL, NULL, 0);
}

static void catch_stops(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        /* one ignored on entry stays ignored, as a shell leaves it: nohup's
         * SIGHUP must reach the command ignored (a handler is reset to the
         * default at exec; an ignored signal stays ignored) */
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* After the cleanup: the death the signal asked for (the exit status is
 * 128 + sig should it be ignored or blocked, as it is not here). */
static int die_of_stop(int rc)
{
    if (!stop_sig) return rc;
    signal(stop_sig, SIG_DFL);
    raise(stop_sig);
    return 128 + stop_sig;
}

int cmd_run(const cli_args_t *a)
{
    /* The workspace is resolved once: from the spawn on it is held by fd.
     * sandbox_spawn starts bwrap as soon as the policy is compiled (not as
     * root: the sandbox user's limits are set in the child, before the
     * exec, so that bwrap waits for nothing). */
    sbx_exec_t x = {NULL, NULL, a->rest, 0, 1, 2, false, NULL, NULL, true, NULL, -1, -1};
    /* the sandbox's pid 1 comes to this process if bwrap ends first: when
     * the command left a process, the run waits for pid 1 before removing
     * the placeholders (sandbox_wait_finish) */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    catch_stops();
    char *err = NULL;
    if (!sandbox_use_user(a->sandbox_user, &err)) {
        fprintf(stderr, "drun-policy run: %s\n", err);
        free(err);
        return EXIT_USAGE;
    }
    /* resolved once and held by fd from here on: the guard, the warning
     * and the bind all see the directory this resolution found */
    char real[PATH_MAX];
    const char *ws = a->workspace ? a->workspace : ".";
    int ws_fd = realpath(ws, real) ? open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (ws_fd < 0) {
        fprintf(stderr, "drun-policy run: cannot use the workspace '%s': %s\n", ws, strerror(errno));
        return EXIT_SETUP;
    }
    if (!a->allow_broad_workspace && refuse_broad_workspace(ws, real)) {
        close(ws_fd);
        return EXIT_USAGE;
    }
    char *scratch = sandbox_run_scratch(&err);
    if (!scratch || path_is_under(real, scratch)) {
        if (scratch) /* the scratch tmpfs would cover it */
            fprintf(stderr, "drun-policy run: the workspace '%s' is inside the scratch dir %s\n", ws, scratch);
        else
            fprintf(stderr, "drun-policy run: cannot set up the scratch dir: %s\n", err ? err : strerror(errno));
        free(err);
        free(scratch);
        close(ws_fd);
        return EXIT_SETUP;
    }
    x.workspace = real;
    x.workspace_fd = ws_fd;
    x.scratch = scratch;
    warn_unwritable(real, ws_fd);
    /* the state dir, ~/.drun and this config stay dark even under a grant
     * of ~: runtime-owned caps (lattice_owned_add_defaults below) */

    int rc = EXIT_OK;
    policy_t *p = cli_load_policy("run", a->pos[0], &rc);
    sandbox_t *s = NULL;
    if (p) lattice_owned_add_defaults(p->path); /* dark in the sandbox: state dir, ~/.drun, this config */
    if (p) {
        diag_list_t d = {0};
        s = sandbox_new(p, NULL, &d, &err);
        diag_list_free(&d);
        if (!s) {
            fprintf(stderr, "drun-policy run: %s\n", err ? err : "the sandbox could not be set up");
            rc = EXIT_SETUP;
        }
    }
    /* network for the command (SPEC §15): a proxy channel made before the
     * sandbox starts, when command_domains allows anything */
    proxy_chan_t *chan = NULL;
    if (s && proxy_wanted(p)) {
        proxy_opts_t po = {"run", NULL, 0, NULL, NULL};
        if (!(chan = proxy_open(p, &po, &err))) {
            fprintf(stderr, "drun-policy run: %s\n", err);
            sandbox_free(s);
            s = NULL;
            rc = EXIT_SETUP;
        } else {
            x.proxy_fd = proxy_sandbox_fd(chan);
        }
    }
    if (!s) {
        sandbox_early_abort(x.early);
    } else {
        pid_t pid;
        sbx_residue_t *res;
        int sp = sandbox_spawn(s, &x, &pid, &res, &err); /* takes x.early */
        if (sp != 0) {
            fprintf(stderr, "drun-policy run: %s\n", err);
            rc = sp > 0 ? sp : EXIT_SETUP; /* 127/126: the command, as a shell says */
        } else {
            bwrap_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
            if (stop_sig) kill(pid, SIGKILL);        /* asked to stop while it was set up */
            if (chan) proxy_sandbox_end_close(chan); /* the channel ends with the sandbox */
            sbx_status_t st;
            sandbox_wait_finish(res, pid, &st);
            int pfd = bwrap_pidfd;
            bwrap_pidfd = -1;
            if (pfd >= 0) close(pfd);
            report_refusals(chan);
            rc = st.setup_failed ? EXIT_SETUP : st.exit_code;
        }
    }
    proxy_close(chan);
    free(err);
    free(scratch);
    close(ws_fd);
    sandbox_free(s);
    policy_free(p);
    return die_of_stop(rc);
}
