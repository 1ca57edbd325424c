/* cmd_run.c — `drun-policy run [CONFIG] [--workspace DIR] -- CMD [ARG...]`:
 * compile for this host and run CMD in the sandbox. A rejected config never
 * runs the command. Exit: the command's status, 125 when the sandbox could
 * not be set up, 126/127 as a shell does. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"
#include "sandbox.h"

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* A fresh scratch dir under the state dir ($XDG_STATE_HOME/drun/run), never
 * under /tmp (the sandbox has a private /tmp; the scratch dir is HOME). */
static char *make_scratch(void)
{
    char *base = state_path("run");
    char *dir = xasprintf("%s/scratch-XXXXXX", base);
    if (!mkdtemp(dir)) {
        free(dir);
        dir = NULL;
    }
    free(base);
    return dir;
}

int cmd_run(const cli_args_t *a)
{
    int rc = EXIT_OK;
    policy_t *p = cli_load_policy("run", a->pos[0], &rc);
    if (!p) return rc;
    char *err = NULL;
    diag_list_t d = {0};
    sandbox_t *s = sandbox_new(p, NULL, &d, &err);
    diag_list_free(&d);
    if (!s) {
        fprintf(stderr, "drun-policy run: %s\n", err ? err : "the sandbox could not be set up");
        free(err);
        policy_free(p);
        return EXIT_SETUP;
    }
    char cwd[PATH_MAX];
    const char *ws = a->workspace ? a->workspace : getcwd(cwd, sizeof cwd);
    char *scratch = make_scratch();
    if (!ws || !scratch) {
        fprintf(stderr, "drun-policy run: cannot set up the workspace or scratch dir: %s\n", strerror(errno));
        free(scratch);
        sandbox_free(s);
        policy_free(p);
        return EXIT_SETUP;
    }
    /* the scratch dirs of other runs are kept dark even under a grant of ~ */
    char *runs = xstrdup(scratch);
    *strrchr(runs, '/') = '\0';
    const char *hide[] = {runs, NULL};
    sbx_exec_t x = {ws, scratch, a->rest, 0, 1, 2, false, NULL, hide};
    pid_t pid;
    sbx_residue_t *res;
    int sp = sandbox_spawn(s, &x, &pid, &res, &err);
    if (sp != 0) {
        fprintf(stderr, "drun-policy run: %s\n", err);
        free(err);
        rc = sp > 0 ? sp : EXIT_SETUP; /* 127/126: the command, as a shell says */
    } else {
        int ws_status = 0;
        while (waitpid(pid, &ws_status, 0) < 0 && errno == EINTR) {}
        sbx_status_t st;
        sandbox_finish(res, ws_status, &st);
        rc = st.setup_failed ? EXIT_SETUP : st.exit_code;
    }
    nftw(scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(runs);
    free(scratch);
    sandbox_free(s);
    policy_free(p);
    return rc;
}
