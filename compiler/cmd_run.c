/* cmd_run.c — `drun-policy run [CONFIG] [--workspace DIR] -- CMD [ARG...]`:
 * compile for this host and run CMD in the sandbox. A rejected config never
 * runs the command. Exit: the command's status, 125 when the sandbox could
 * not be set up, 126/127 as a shell does. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"
#include "lattice.h"
#include "paths.h"
#include "sandbox.h"
#include "wsguard.h"

/* The scratch dir: $XDG_STATE_HOME/drun/run/scratch, never under /tmp (the
 * sandbox has a private /tmp; the scratch dir is HOME). On the host it is
 * only an empty mount point: each run mounts a fresh tmpfs on it inside its
 * own sandbox, so what the command writes there (and the placeholders of the
 * protections) stays in memory and goes with the sandbox. Runs at the same
 * time share the path but never the contents, and nothing is left to remove. */
static char *scratch_dir(void)
{
    char *dir = state_path("run/scratch");
    struct stat st;
    int rc = stat(dir, &st);
    if (rc != 0 || !S_ISDIR(st.st_mode)) {
        if (rc == 0) errno = ENOTDIR;
        free(dir);
        return NULL;
    }
    return dir;
}

/* The workspace guard (SPEC §13): a workspace that is /, $HOME, or an
 * ancestor of $HOME or of the state dir would hand the command every file
 * of the user (~/.ssh, the runner's own state) to write. True when refused. */
static bool refuse_broad_workspace(const char *shown, const char *real)
{
    char *state = state_path("");
    char *why = wsguard_reason(real, getenv("HOME"), state);
    free(state);
    if (why)
        fprintf(stderr, "drun-policy run: refusing the workspace '%s' (%s): it is %s, and the sandbox could write "
                        "everything in it; run from a project directory or give --workspace DIR (or, knowingly, "
                        "--allow-broad-workspace)\n", shown, real, why);
    free(why);
    return why != NULL;
}

int cmd_run(const cli_args_t *a)
{
    /* bwrap starts loading first, and waits while the workspace is checked,
     * the policy compiled and the run planned; a run given up on kills it
     * unused. Its start (exec, its libraries, its own setup) is what the run
     * waits for, so nothing comes before it. (Not as another user than root:
     * the sandbox then starts the command through a prlimit shim whose limit
     * comes from the policy.) */
    sbx_exec_t x = {NULL, NULL, a->rest, 0, 1, 2, false, NULL, NULL, true, NULL};
    /* the sandbox's pid 1 comes to this process if bwrap ends first: when
     * the command left a process, the run waits for pid 1 before removing
     * the placeholders (sandbox_wait_finish) */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    char *err = NULL, *bin = geteuid() == 0 ? sandbox_find_bwrap() : NULL;
    x.early = bin ? sandbox_prestart(bin, &x, &err) : NULL;
    free(bin);
    free(err); /* without it, sandbox_spawn starts bwrap itself and says what fails */
    err = NULL;

    char cwd[PATH_MAX], real[PATH_MAX];
    const char *ws = a->workspace ? a->workspace : getcwd(cwd, sizeof cwd);
    if (ws && !a->allow_broad_workspace && realpath(ws, real) && refuse_broad_workspace(ws, real)) {
        sandbox_early_abort(x.early);
        return EXIT_USAGE;
    }
    char *scratch = ws ? scratch_dir() : NULL;
    if (!ws || !scratch) {
        fprintf(stderr, "drun-policy run: cannot set up the workspace or scratch dir: %s\n", strerror(errno));
        sandbox_early_abort(x.early);
        free(scratch);
        return EXIT_SETUP;
    }
    if (realpath(ws, real) && path_is_under(real, scratch)) {
        /* the scratch tmpfs would cover it */
        fprintf(stderr, "drun-policy run: the workspace '%s' is inside the scratch dir %s\n", ws, scratch);
        sandbox_early_abort(x.early);
        free(scratch);
        return EXIT_SETUP;
    }
    /* the tools' state (device nodes, pending placeholder lists, drun-mcp's
     * sessions) stays dark even under a grant of ~; the scratch inside shows */
    char *state = state_path("");
    const char *hide[] = {state, NULL};
    x.workspace = ws;
    x.scratch = scratch;
    x.hide = hide;

    int rc = EXIT_OK;
    policy_t *p = cli_load_policy("run", a->pos[0], &rc);
    sandbox_t *s = NULL;
    if (p) runtime_owned_add_defaults(p->path); /* dark in the sandbox: state dir, ~/.drun, this config */
    if (p) {
        diag_list_t d = {0};
        s = sandbox_new(p, NULL, &d, &err);
        diag_list_free(&d);
        if (!s) {
            fprintf(stderr, "drun-policy run: %s\n", err ? err : "the sandbox could not be set up");
            rc = EXIT_SETUP;
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
            sbx_status_t st;
            sandbox_wait_finish(res, pid, &st);
            rc = st.setup_failed ? EXIT_SETUP : st.exit_code;
        }
    }
    free(err);
    free(state);
    free(scratch);
    sandbox_free(s);
    policy_free(p);
    return rc;
}
