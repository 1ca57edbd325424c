/* test_rt_ckpt.c — runtime/ckpt*.c on its own: checkpoints of a real
 * workspace (added/modified/deleted, nothing recorded when nothing changed,
 * a change in the same clock tick seen), symlinks recorded as links and
 * never followed (a directory swapped for a link to a host dir), names git
 * refuses (.git) kept, diffs (binary files named), labels, rollback as a new
 * checkpoint that loses nothing, fork sharing the store, trimming to
 * max_checkpoints, snapshots that read back whole, and a file that is not a
 * snapshot refused. The unit build links the library only, so the runtime
 * files are compiled in here.
 */
#include "../../runtime/ckpt.c"
#include "../../runtime/ckpt_bundle.c"
#include "../../runtime/ckpt_io.c"
#include "../../runtime/tree.c"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

static char root[256];

static void put(int dirfd, const char *rel, const char *text)
{
    int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        perror(rel);
        exit(1);
    }
    close(fd);
}

static char *get(int dirfd, const char *rel)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    static char b[4096];
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    b[n < 0 ? 0 : n] = '\0';
    return b;
}

static int mkws(const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, name);
    mkdir(p, 0700);
    return open(p, O_RDONLY | O_DIRECTORY);
}

static bool has(const ckpt_paths_t *p, const char *s)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->v[i], s))
            return true;
    return false;
}

typedef struct seen {
    buf_t list;
} seen_t;

static int collect(void *ctx, const char *path, ckpt_kind_t kind, const void *data, size_t len)
{
    seen_t *s = ctx;
    buf_printf(&s->list, "%s:%c:%.*s\n", path, kind == CKPT_LINK ? 'l' : (kind == CKPT_EXEC ? 'x' : 'f'),
               (int)len, (const char *)data);
    return 0;
}

static char *files_of(ckpt_t *c, const char *ref)
{
    seen_t s = {BUF_INIT};
    char *err = NULL;
    if (ckpt_files(c, ref, NULL, 0, collect, &s, &err) < 0) {
        printf("# %s\n", err);
        free(err);
    }
    return buf_detach(&s.list, NULL);
}

static ckpt_info_t *last(ckpt_t *c, size_t *n)
{
    ckpt_info_t *v;
    *n = ckpt_history(c, &v);
    return v;
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/drun-ckpt-XXXXXX");
    if (!mkdtemp(root))
        return 1;
    int objfd = mkws("objects");
    char objpath[512];
    snprintf(objpath, sizeof objpath, "%s/objects", root);
    int ws = mkws("ws");
    char *err = NULL;

    ckpt_t *c = ckpt_create(objfd, objpath, "fam1", &err);
    CHECK(c, "a store is created");
    put(ws, "a.txt", "one\n");
    mkdirat(ws, "src", 0755);
    put(ws, "src/main.c", "int main(void) { return 0; }\n");
    mkdirat(ws, ".git", 0755);
    put(ws, ".git/HEAD", "ref: refs/heads/main\n");
    int64_t id = ckpt_record(c, ws, "create_session", "", true, 100, &err);
    CHECK_INT(id, 1, "the first checkpoint is 1");
    size_t n;
    ckpt_info_t *h = last(c, &n);
    CHECK(n == 1 && h[0].added.n == 3 && has(&h[0].added, ".git/HEAD") && has(&h[0].added, "src/main.c"),
          "it lists the three files added, .git included");
    ckpt_infos_free(h, n);

    CHECK_INT(ckpt_record(c, ws, "session_bash", "true", false, 100, &err), 0,
              "an unchanged workspace records nothing");
    CHECK_INT(ckpt_record(c, ws, "session_bash", "true", false, 100, &err), 0,
              "still nothing once the racy entries were read again");

    /* Same size, written twice within one clock tick: still seen. */
    put(ws, "a.txt", "two\n");
    CHECK_INT(ckpt_record(c, ws, "session_bash", "echo two > a.txt", false, 100, &err), 2,
              "a modified file makes checkpoint 2");
    put(ws, "a.txt", "thr\n");
    CHECK_INT(ckpt_record(c, ws, "session_bash", "echo thr > a.txt", false, 100, &err), 3,
              "a same-size rewrite in the same tick makes checkpoint 3");
    h = last(c, &n);
    CHECK(n == 3 && h[2].modified.n == 1 && has(&h[2].modified, "a.txt") && !h[2].added.n &&
              !h[2].deleted.n,
          "checkpoint 3 lists a.txt modified, nothing else");
    CHECK_STR(h[2].tool, "session_bash", "the tool is recorded");
    CHECK_STR(h[2].summary, "echo thr > a.txt", "the command is recorded");
    ckpt_infos_free(h, n);

    /* A symlink to a host file is recorded as a link; the target is not read. */
    symlinkat("/etc/passwd", ws, "pw");
    unlinkat(ws, "src/main.c", 0);
    /* A directory swapped for a link to a host directory holding a secret. */
    char outside[512];
    snprintf(outside, sizeof outside, "%s/outside", root);
    mkdir(outside, 0700);
    int ofd = open(outside, O_RDONLY | O_DIRECTORY);
    put(ofd, "secret", "HOST-SECRET\n");
    close(ofd);
    unlinkat(ws, "src", AT_REMOVEDIR);
    symlinkat(outside, ws, "src");
    int bin = openat(ws, "blob.bin", O_WRONLY | O_CREAT, 0755);
    CHECK(write(bin, "\x00\x01\x02\xff", 4) == 4, "binary written");
    close(bin);
    id = ckpt_record(c, ws, "session_bash", "ln", false, 100, &err);
    CHECK_INT(id, 4, "checkpoint 4");
    char *files = files_of(c, NULL);
    CHECK(strstr(files, "pw:l:/etc/passwd\n") != NULL, "the symlink is recorded as a link");
    CHECK(strstr(files, "HOST-SECRET") == NULL && strstr(files, "root:") == NULL,
          "no symlink was followed out of the workspace");
    CHECK(strstr(files, "blob.bin:x:") != NULL, "the executable bit is kept");
    free(files);
    h = last(c, &n);
    CHECK(has(&h[3].deleted, "src/main.c") && has(&h[3].added, "src") && has(&h[3].added, "pw"),
          "the directory's file deleted, the links added");
    ckpt_infos_free(h, n);

    /* Diffs. */
    buf_t d = BUF_INIT;
    CHECK(ckpt_diff(c, "2", "3", NULL, 0, 1 << 20, &d, &err), "diff 2..3");
    CHECK(strstr(buf_cstr(&d), "-two\n+thr\n") != NULL, "the diff shows the change");
    buf_truncate(&d, 0);
    CHECK(ckpt_diff(c, NULL, NULL, NULL, 0, 1 << 20, &d, &err), "default diff: the last step");
    CHECK(strstr(buf_cstr(&d), "Binary files") != NULL && strstr(buf_cstr(&d), "blob.bin") != NULL,
          "a binary file is named, not dumped");
    buf_truncate(&d, 0);
    char *only[] = {"a.txt"};
    CHECK(ckpt_diff(c, "1", "4", only, 1, 1 << 20, &d, &err), "diff limited to a path");
    CHECK(strstr(buf_cstr(&d), "a.txt") && !strstr(buf_cstr(&d), "blob.bin"), "only that path");
    buf_free(&d);
    CHECK(!ckpt_diff(c, "99", NULL, NULL, 0, 100, &d, &err) && strstr(err, "1 to 4"),
          "an unknown checkpoint is refused with the range");
    free(err);
    err = NULL;

    /* Labels. */
    int64_t lid = 0;
    CHECK(ckpt_label(c, "1", "base", &lid, &err) && lid == 1, "label checkpoint 1 base");
    CHECK(ckpt_find(c, "base", &err) == 0, "the label finds it");
    CHECK(!ckpt_label(c, NULL, "12", &lid, &err), "an all-digit label is refused");
    free(err);
    err = NULL;
    CHECK(!ckpt_label(c, NULL, "a/b", &lid, &err), "a label with a slash is refused");
    free(err);
    err = NULL;
    const char *odd[] = {".", "..", "-rf", ".x", "--help"};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        CHECK(!ckpt_label(c, NULL, odd[i], &lid, &err) && err && strstr(err, "not starting with"),
              "a label that reads as a path or an option is refused");
        free(err);
        err = NULL;
    }
    CHECK(ckpt_find(c, "-rf", &err) < 0, "and was not set");
    free(err);
    err = NULL;
    CHECK(ckpt_find(c, "nope", &err) < 0, "an unknown label is refused");
    free(err);
    err = NULL;

    /* Rollback: unrecorded changes are kept first, then the workspace is
     * checkpoint 1 again, as a new checkpoint. */
    put(ws, "late.txt", "not yet recorded\n");
    id = ckpt_rollback(c, ws, "base", NULL, 100, &err);
    CHECK_INT(id, 6, "the rollback is checkpoint 6 (5 kept the late change)");
    CHECK_STR(get(ws, "a.txt"), "one\n", "a.txt is back");
    CHECK_STR(get(ws, "src/main.c"), "int main(void) { return 0; }\n", "src/main.c is back");
    CHECK(get(ws, "late.txt") == NULL && get(ws, "pw") == NULL, "later files are gone");
    struct stat st;
    CHECK(fstatat(ws, "src", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode),
          "src is a directory again");
    files = files_of(c, "5");
    CHECK(strstr(files, "late.txt:f:not yet recorded") != NULL, "checkpoint 5 holds the late file");
    free(files);
    CHECK_INT(ckpt_record(c, ws, "session_bash", "true", false, 100, &err), 0,
              "after a rollback, an unchanged workspace records nothing");

    /* Fork from checkpoint 3 into a second workspace. */
    int ws2 = mkws("ws2");
    ckpt_t *f = ckpt_fork(c, "3", ws2, NULL, &err);
    CHECK(f != NULL, "fork from checkpoint 3");
    CHECK_STR(get(ws2, "a.txt"), "thr\n", "the fork holds checkpoint 3's files");
    CHECK_INT(ckpt_head(f), 3, "the fork's newest checkpoint is 3");
    put(ws2, "fork.txt", "only in the fork\n");
    CHECK_INT(ckpt_record(f, ws2, "session_write_file", "fork.txt", false, 100, &err), 4,
              "the fork goes on from 3 to 4");
    CHECK(get(ws, "fork.txt") == NULL, "the original does not see it");
    CHECK(ckpt_find(f, "base", &err) == 0, "labels up to the fork point come along");

    /* Snapshot and restore. */
    char snap[512];
    snprintf(snap, sizeof snap, "%s/snap.bundle", root);
    int sfd = open(snap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(ckpt_bundle_write(c, sfd, "my\tsession", &err), "snapshot written");
    close(sfd);
    int ws3 = mkws("ws3");
    sfd = open(snap, O_RDONLY);
    char *slabel = NULL;
    ckpt_t *r = ckpt_bundle_read(sfd, objfd, objpath, "fam2", ws3, NULL, &slabel, &err);
    close(sfd);
    CHECK(r != NULL, "snapshot restored");
    if (!r) {
        printf("# %s\n", err);
        return 1;
    }
    CHECK_STR(slabel, "my\tsession", "the session label comes back");
    size_t n1, n2;
    ckpt_info_t *h1 = last(c, &n1), *h2 = last(r, &n2);
    bool same = n1 == n2;
    for (size_t i = 0; same && i < n1; i++)
        same = h1[i].id == h2[i].id && !strcmp(h1[i].commit, h2[i].commit) &&
               !strcmp(h1[i].summary, h2[i].summary) && h1[i].added.n == h2[i].added.n &&
               h1[i].modified.n == h2[i].modified.n && h1[i].deleted.n == h2[i].deleted.n &&
               !h1[i].label == !h2[i].label;
    CHECK(same, "the restored history is the same, lists and labels included");
    ckpt_infos_free(h1, n1);
    ckpt_infos_free(h2, n2);
    CHECK_STR(get(ws3, "src/main.c"), "int main(void) { return 0; }\n", "the workspace is restored");
    put(ws3, "new.txt", "x");
    CHECK_INT(ckpt_record(r, ws3, "session_write_file", "new.txt", false, 100, &err), 7,
              "the restored session goes on from 7");
    free(slabel);

    /* Not a snapshot. */
    sfd = open(snap, O_WRONLY | O_TRUNC);
    CHECK(write(sfd, "# v2 git bundle\nnope\n", 21) == 21, "damaged");
    close(sfd);
    sfd = open(snap, O_RDONLY);
    int ws4 = mkws("ws4");
    CHECK(ckpt_bundle_read(sfd, objfd, objpath, "fam3", ws4, NULL, &slabel, &err) == NULL,
          "a file that is not a snapshot is refused");
    free(err);
    err = NULL;
    close(sfd);
    CHECK(faccessat(objfd, "fam3", F_OK, 0) < 0, "and leaves no store behind");

    /* Trimming. */
    for (int i = 0; i < 5; i++) {
        char t[16];
        snprintf(t, sizeof t, "%d", i);
        put(ws3, "n.txt", t);
        ckpt_record(r, ws3, "session_bash", t, false, 3, &err);
    }
    h = last(r, &n);
    CHECK(n == 3 && h[2].id == 12 && h[0].id == 10, "max_checkpoints keeps the newest three");
    ckpt_infos_free(h, n);

    ckpt_free(c);
    CHECK(faccessat(objfd, "fam1", F_OK, 0) == 0, "the store stays while the fork lives");
    ckpt_free(f);
    CHECK(faccessat(objfd, "fam1", F_OK, 0) < 0, "and goes with the family's last session");
    ckpt_free(r);

    tree_remove(AT_FDCWD, root);
    return tap_done();
}
