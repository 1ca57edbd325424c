/* test_rt_sessfs.c — runtime/mountin.c and runtime/export.c on their own,
 * each protection checked on the host afterwards: a mount outside the
 * allowlist, through a symlink out of it, with "..", or from an empty
 * allowlist refused; symlinks inside copied as links; deny_read matches
 * left out; the size budget enforced with nothing left behind; an export
 * target outside the allowlist or symlinked refused; an existing symlink in
 * the target replaced, never written through; refused files skipped with
 * their reason; delete and dry_run.
 */
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
#include <unistd.h>

#include "tap.h"

static char root[256];

static char *P(const char *rel)
{
    static char b[64][512]; /* enough that no name in use is overwritten */
    static int i;
    i = (i + 1) % 64;
    snprintf(b[i], sizeof b[i], "%s/%s", root, rel);
    return b[i];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static char *get(const char *path)
{
    static char b[4096];
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    b[n < 0 ? 0 : n] = '\0';
    return b;
}

static bool no_secret(void *ctx, const char *abs)
{
    (void)ctx;
    return !strstr(abs, "secret");
}

static void no_env(void *ctx, const export_tree_t *t, const char *rel, const char *abs, char **reason)
{
    (void)ctx;
    (void)abs, (void)t;
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    if (!strcmp(b, ".env") || !strcmp(b, ".bashrc"))
        *reason = xstrdup("protected by the policy (test)");
}

static bool skipped(const sessfs_skips_t *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].path, path))
            return true;
    return false;
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/drun-sessfs-XXXXXX");
    if (!mkdtemp(root))
        return 1;
    mkdir(P("allowed"), 0755);
    mkdir(P("allowed/repo"), 0755);
    mkdir(P("allowed/repo/src"), 0755);
    put(P("allowed/repo/src/a.c"), "int a;\n");
    put(P("allowed/repo/secret.key"), "KEY\n");
    symlink("/etc/passwd", P("allowed/repo/pw"));
    mkdir(P("outside"), 0755);
    put(P("outside/host.txt"), "HOST\n");
    symlink(P("outside"), P("allowed/out-link"));
    mkdir(P("ws"), 0700);
    int ws = open(P("ws"), O_RDONLY | O_DIRECTORY);
    char *allow[] = {P("allowed")};
    char *err = NULL;

    mountin_req_t r = {
        .allow = allow,
        .nallow = 1,
        .source = P("allowed/repo"),
        .ws_fd = ws,
        .target = "repo",
        .budget = 1 << 20,
        .own = {(uid_t)-1, (gid_t)-1},
        .readable = no_secret,
    };
    mountin_res_t res;
    CHECK_INT(mountin_copy(&r, &res, &err), 0, "mount a tree from the allowlist");
    CHECK_STR(get(P("ws/repo/src/a.c")), "int a;\n", "its file is in the workspace");
    char lt[256] = "";
    CHECK(readlink(P("ws/repo/pw"), lt, sizeof lt) > 0 && !strcmp(lt, "/etc/passwd"),
          "a symlink inside is copied as a symlink");
    CHECK(access(P("ws/repo/secret.key"), F_OK) < 0 && skipped(&res.skipped, "secret.key"),
          "a deny_read match is left out and reported");
    mountin_res_free(&res);

    r.target = "again";
    r.source = P("outside");
    CHECK_INT(mountin_copy(&r, &res, &err), -1, "a mount outside the allowlist is refused");
    CHECK(err && strstr(err, "outside mount_allowlist"), "it says so");
    free(err);
    err = NULL;
    mountin_res_free(&res);
    r.source = P("allowed/out-link");
    CHECK_INT(mountin_copy(&r, &res, &err), -1, "a mount through a symlink out of it is refused");
    free(err);
    err = NULL;
    mountin_res_free(&res);
    CHECK(access(P("ws/again"), F_OK) < 0, "nothing was copied");
    r.source = P("allowed/../outside");
    CHECK_INT(mountin_copy(&r, &res, &err), -1, "\"..\" is refused");
    CHECK(err && strstr(err, "\"..\""), "it says so");
    free(err);
    err = NULL;
    mountin_res_free(&res);
    r.nallow = 0;
    r.source = P("allowed/repo");
    CHECK_INT(mountin_copy(&r, &res, &err), -1, "an empty allowlist allows nothing");
    CHECK(err && strstr(err, "empty"), "it says so");
    free(err);
    err = NULL;
    mountin_res_free(&res);
    r.nallow = 1;
    r.budget = 3;
    CHECK_INT(mountin_copy(&r, &res, &err), -1, "a mount over the budget is refused");
    CHECK(err && strstr(err, "max_workspace_mb"), "it names max_workspace_mb");
    CHECK(access(P("ws/again"), F_OK) < 0, "and leaves nothing half-copied");
    free(err);
    err = NULL;
    mountin_res_free(&res);
    r.budget = 1 << 20;
    r.target = "repo";
    CHECK_INT(mountin_copy(&r, &res, &err), -1, "an existing target is refused");
    free(err);
    err = NULL;
    mountin_res_free(&res);

    /* Export: a checkpoint of the workspace, with protected names at depth. */
    mkdir(P("objects"), 0700);
    int objfd = open(P("objects"), O_RDONLY | O_DIRECTORY);
    ckpt_t *c = ckpt_create(objfd, P("objects"), "fam", &err);
    mkdir(P("ws/repo/deep"), 0755);
    put(P("ws/repo/deep/.env"), "TOKEN=1\n");
    put(P("ws/repo/.bashrc"), "evil\n");
    CHECK(ckpt_record(c, ws, "session_mount", "repo", true, 100, &err) == 1, "checkpoint 1");

    mkdir(P("allowed/out"), 0755);
    mkdir(P("allowed/out/repo"), 0755);
    mkdir(P("allowed/out/repo/src"), 0755);
    put(P("allowed/out/repo/stale.txt"), "old\n");
    /* a symlink planted where a file will be written: replaced, not followed */
    symlink(P("outside/host.txt"), P("allowed/out/repo/src/a.c"));
    export_req_t e = {
        .allow = allow,
        .nallow = 1,
        .output_dir = P("allowed/out"),
        .refused = no_env,
        .dry_run = true,
        .delete_extra = true,
    };
    export_res_t er;
    CHECK_INT(export_run(c, &e, &er, &err), 0, "dry run");
    CHECK(er.written.n == 1 && er.removed.n == 1 && strstr(buf_cstr(&er.diff), "+int a;"),
          "it lists the write, the removal and the diff");
    CHECK_STR(get(P("allowed/out/repo/stale.txt")), "old\n", "and writes nothing");
    export_res_free(&er);
    e.dry_run = false;
    CHECK_INT(export_run(c, &e, &er, &err), 0, "export");
    CHECK_STR(get(P("allowed/out/repo/src/a.c")), "int a;\n", "the file is written");
    CHECK_STR(get(P("outside/host.txt")), "HOST\n", "not through the planted symlink");
    CHECK(access(P("allowed/out/repo/deep/.env"), F_OK) < 0 &&
              skipped(&er.skipped, "repo/deep/.env") && skipped(&er.skipped, "repo/.bashrc"),
          "protected names at depth are skipped, with the reason");
    CHECK(skipped(&er.skipped, "repo/pw") && access(P("allowed/out/repo/pw"), F_OK) < 0,
          "symlinks are not exported");
    CHECK(access(P("allowed/out/repo/stale.txt"), F_OK) < 0 && er.removed.n == 1,
          "delete removed the stale file");
    export_res_free(&er);

    e.output_dir = P("outside/x");
    CHECK_INT(export_run(c, &e, &er, &err), -1, "an export outside the allowlist is refused");
    free(err);
    err = NULL;
    export_res_free(&er);
    e.output_dir = P("allowed/out-link");
    CHECK_INT(export_run(c, &e, &er, &err), -1, "a symlinked output_dir is refused");
    CHECK(err && strstr(err, "symlink"), "it says so");
    free(err);
    err = NULL;
    export_res_free(&er);
    e.output_dir = P("allowed/out-link/sub");
    CHECK_INT(export_run(c, &e, &er, &err), -1, "an output_dir through a symlink is refused");
    free(err);
    err = NULL;
    export_res_free(&er);
    CHECK(access(P("outside/sub"), F_OK) < 0 && access(P("outside/repo"), F_OK) < 0,
          "nothing was written outside");
    e.output_dir = P("allowed/../outside");
    CHECK_INT(export_run(c, &e, &er, &err), -1, "\"..\" in output_dir is refused");
    free(err);
    err = NULL;
    export_res_free(&er);
    e.output_dir = P("allowed/out2");
    e.checkpoint = "7";
    CHECK_INT(export_run(c, &e, &er, &err), -1, "an unknown checkpoint is refused");
    free(err);
    err = NULL;
    export_res_free(&er);

    ckpt_free(c);
    close(objfd);
    close(ws);
    tree_remove(AT_FDCWD, root);
    return tap_done();
}
