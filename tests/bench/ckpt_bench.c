/* ckpt_bench.c — the session model's speed targets (SPEC §14), measured on
 * the real code (runtime/ckpt*.c, mountin.c, export.c compiled in) against
 * a 10,000-file workspace (100 directories of 100 files): a checkpoint when
 * nothing changed (next to `git status` on the same tree), one when one file
 * changed, a fork, a diff of one file, an export of 1,000 files, and a
 * mount of the whole tree (next to `cp -a`). Prints markdown rows; medians
 * of several runs, warm caches. Built and run by tests/bench/65-sessions.
 *   ckpt_bench DIR   (an empty scratch directory)
 */
#include "bench.h"
#include "../../runtime/beneath.c"
#include "../../runtime/ckpt.c"
#include "../../runtime/ckpt_bundle.c"
#include "../../runtime/ckpt_io.c"
#include "../../runtime/export.c"
#include "../../runtime/mountin.c"
#include "../../runtime/sessfs.c"
#include "../../runtime/tree.c"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NDIRS 100
#define NFILES 100
#define RUNS 7       /* the quick figures */
#define HEAVY_RUNS 3 /* fork, export, mount, cp -a: seconds each on a loaded machine */

static const char *dir;

static char *P(const char *rel)
{
    static char b[16][1024];
    static int i;
    i = (i + 1) % 16;
    snprintf(b[i], sizeof b[i], "%s/%s", dir, rel);
    return b[i];
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "ckpt_bench: %s: %s\n", what, err ? err : strerror(errno));
    exit(1);
}

static void make_tree(const char *root)
{
    mkdir(root, 0755);
    char p[1200];
    for (int d = 0; d < NDIRS; d++) {
        snprintf(p, sizeof p, "%s/d%02d", root, d);
        mkdir(p, 0755);
        for (int f = 0; f < NFILES; f++) {
            snprintf(p, sizeof p, "%s/d%02d/f%03d.txt", root, d, f);
            FILE *fp = fopen(p, "w");
            if (!fp)
                die("create", NULL);
            fprintf(fp, "file %d of directory %d\nsome content to hash\n", f, d);
            fclose(fp);
        }
    }
}

/* Median wall time of running argv (a command on the host). */
static double run_cmd(char *const argv[], int runs)
{
    double t[RUNS];
    for (int i = 0; i < runs; i++) {
        double t0 = bench_wall_ms();
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execvp(argv[0], argv);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        t[i] = bench_wall_ms() - t0;
        if (!WIFEXITED(st) || WEXITSTATUS(st))
            die(argv[0], "failed");
    }
    return bench_median(t, runs);
}

static void row(const char *name, double v, const char *notes)
{
    printf("| %s | %.2f | ms | %s |\n", name, v, notes);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    char *err = NULL;
    make_tree(P("ws"));
    mkdir(P("objects"), 0700);
    int objfd = open(P("objects"), O_RDONLY | O_DIRECTORY);
    int ws = open(P("ws"), O_RDONLY | O_DIRECTORY);
    ckpt_t *c = ckpt_create(objfd, P("objects"), "bench", &err);
    if (!c)
        die("store", err);
    double t0 = bench_wall_ms();
    if (ckpt_record(c, ws, "bench", "first", true, 1000, &err) < 0)
        die("record", err);
    double first = bench_wall_ms() - t0;
    usleep(100000); /* past the racy window: the next walk rereads nothing */
    ckpt_record(c, ws, "bench", "settle", false, 1000, &err);

    double t[RUNS];
    for (int i = 0; i < RUNS; i++) {
        t0 = bench_wall_ms();
        if (ckpt_record(c, ws, "bench", "nothing", false, 1000, &err) != 0)
            die("unchanged record", err ? err : "recorded a change");
        t[i] = bench_wall_ms() - t0;
    }
    double unchanged = bench_median(t, RUNS);

    /* git status on the same tree (its own index, refreshed first) */
    char gitdir[1100], wt[1100];
    snprintf(gitdir, sizeof gitdir, "--git-dir=%s", P("git"));
    snprintf(wt, sizeof wt, "--work-tree=%s", P("ws"));
    char *init[] = {"git", "init", "-q", "--bare", P("git"), NULL};
    char *add[] = {"git", gitdir, wt, "add", "-A", NULL};
    char *status[] = {"git", gitdir, wt, "status", "--porcelain", "-uall", NULL};
    run_cmd(init, 1);
    run_cmd(add, 1);
    run_cmd(status, 1);
    double git = run_cmd(status, RUNS);

    for (int i = 0; i < RUNS; i++) {
        char name[64], text[64];
        snprintf(name, sizeof name, "d%02d/f%03d.txt", i, i);
        snprintf(text, sizeof text, "changed %d\n", i);
        int fd = openat(ws, name, O_WRONLY | O_TRUNC);
        if (fd < 0 || write(fd, text, strlen(text)) < 0)
            die("change", NULL);
        close(fd);
        t0 = bench_wall_ms();
        if (ckpt_record(c, ws, "bench", "one file", false, 1000, &err) <= 0)
            die("changed record", err ? err : "missed the change");
        t[i] = bench_wall_ms() - t0;
    }
    double one = bench_median(t, RUNS);

    buf_t d = BUF_INIT;
    char *only[] = {"d03/f003.txt"};
    for (int i = 0; i < RUNS; i++) {
        buf_truncate(&d, 0);
        t0 = bench_wall_ms();
        if (!ckpt_diff(c, "1", NULL, only, 1, 1 << 20, &d, &err))
            die("diff", err);
        t[i] = bench_wall_ms() - t0;
    }
    double diff = bench_median(t, RUNS);
    buf_free(&d);

    for (int i = 0; i < HEAVY_RUNS; i++) {
        char name[64];
        snprintf(name, sizeof name, "fork%d", i);
        mkdir(P(name), 0700);
        int fws = open(P(name), O_RDONLY | O_DIRECTORY);
        t0 = bench_wall_ms();
        ckpt_t *f = ckpt_fork(c, NULL, fws, NULL, &err);
        t[i] = bench_wall_ms() - t0;
        if (!f)
            die("fork", err);
        ckpt_free(f);
        close(fws);
        tree_remove(AT_FDCWD, P(name));
    }
    double fork_ms = bench_median(t, HEAVY_RUNS);

    /* export of 1,000 files (ten directories) into an allowlisted dir */
    mkdir(P("allowed"), 0755);
    char *allow[] = {P("allowed")};
    char *ten[] = {"d10", "d11", "d12", "d13", "d14", "d15", "d16", "d17", "d18", "d19"};
    for (int i = 0; i < HEAVY_RUNS; i++) {
        char out[64];
        snprintf(out, sizeof out, "allowed/out%d", i);
        export_req_t r = {.allow = allow, .nallow = 1, .output_dir = P(out), .paths = ten, .npaths = 10};
        export_res_t res;
        t0 = bench_wall_ms();
        if (export_run(c, &r, &res, &err) < 0 || res.written.n != 1000)
            die("export", err ? err : "not 1000 files");
        t[i] = bench_wall_ms() - t0;
        export_res_free(&res);
    }
    double exp_ms = bench_median(t, HEAVY_RUNS);

    /* mount of the whole tree against cp -a of it */
    char *allow2[] = {(char *)dir};
    for (int i = 0; i < HEAVY_RUNS; i++) {
        char name[64];
        snprintf(name, sizeof name, "mnt%d", i);
        mkdir(P(name), 0700);
        int mws = open(P(name), O_RDONLY | O_DIRECTORY);
        mountin_req_t r = {
            .allow = allow2,
            .nallow = 1,
            .source = P("ws"),
            .ws_fd = mws,
            .target = "ws",
            .budget = 1ULL << 40,
            .own = {(uid_t)-1, (gid_t)-1},
        };
        mountin_res_t res;
        t0 = bench_wall_ms();
        if (mountin_copy(&r, &res, &err) < 0 || res.files != NDIRS * NFILES)
            die("mount", err ? err : "not every file");
        t[i] = bench_wall_ms() - t0;
        mountin_res_free(&res);
        close(mws);
        tree_remove(AT_FDCWD, P(name));
    }
    double mount = bench_median(t, HEAVY_RUNS);
    double cp = 0;
    for (int i = 0; i < HEAVY_RUNS; i++) {
        char *cpa[] = {"cp", "-a", P("ws"), P("cpdst"), NULL};
        t[i] = run_cmd(cpa, 1);
        tree_remove(AT_FDCWD, P("cpdst"));
    }
    cp = bench_median(t, HEAVY_RUNS);

    char note[256];
    row("checkpoint, first, 10,000-file workspace", first, "every file read and stored");
    snprintf(note, sizeof note, "`git status` on the same tree: %.2f ms (target: no slower)", git);
    row("checkpoint, nothing changed, 10,000 files", unchanged, note);
    row("checkpoint, one file changed, 10,000 files", one, "target: +5 ms over unchanged");
    row("session_fork, 10,000 files", fork_ms, "target 10 ms: every file is written out");
    row("session_diff of one file", diff, "");
    row("session_export, 1,000 files", exp_ms, "temp file + rename each");
    snprintf(note, sizeof note, "`cp -a` of the same tree: %.2f ms", cp);
    row("session_mount, 10,000-file tree", mount, note);
    ckpt_free(c);
    close(ws);
    close(objfd);
    return 0;
}
