/* tool_snapshot.c — session_snapshot, session_restore, list_snapshots (SPEC
 * §14). A snapshot is one file, STATE/snapshots/NAME.drun: a git bundle of
 * the session's checkpoints with their metadata (ckpt_bundle.c). The
 * snapshots dir lies in the runtime-owned state dir, dark to every sandbox
 * (SPEC §13), and is reached from the kept fd of STATE/sessions; restore
 * reads only from there, by a name that cannot hold a slash.
 *
 * Snapshots belong to the principal that made them (SPEC §12: a bearer
 * token, by its place in the tokens list; stdio and a server with no
 * tokens have the one principal 0): each principal's live in its own
 * STATE/snapshots/p<N>, the owner recorded by where the file is. Another
 * principal's snapshot is not listed, and restoring it answers as for a
 * name that does not exist, and the same name is free for each principal:
 * nothing tells one principal what another has saved. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "drun_policy.h"
#include "sesstools.h"

#define SNAP_SUFFIX ".drun"
#define SNAP_NAME_MAX 64

/* A snapshot name: 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'
 * (a name that reads as a command-line option in a shell). */
static bool name_ok(const char *n)
{
    size_t len = strlen(n);
    if (!len || len > SNAP_NAME_MAX || n[0] == '.' || n[0] == '-')
        return false;
    for (const char *p = n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

static bool check_name(tool_call_t *tc, const char *n)
{
    if (name_ok(n))
        return true;
    tools_fail(tc, "snapshot name \"%s\" is refused: use 1 to 64 letters, digits, '.', '_' or '-' "
                   "(no slash, not starting with '.' or '-'); snapshots live in the server's snapshots "
                   "dir only (list_snapshots shows them).",
               n);
    return false;
}

/* dfd/name, a directory made 0700 when missing; -1 with errno. */
static int open_private_dir(int dfd, const char *name)
{
    if (dfd < 0 || (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST))
        return -1;
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The caller's principal's directory below STATE/snapshots ("p0", "p1"...). */
static void principal_dir(tool_call_t *tc, char out[16])
{
    snprintf(out, 16, "p%u", tc->req->who.principal);
}

/* dfd/name must be ours and not writable by others: anyone else able to
 * write there could plant a "snapshot". false after tools_fail. */
static bool private_ok(tool_call_t *tc, int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 022))
        return true;
    tools_fail(tc, "the snapshots dir must be owned by uid %u and not writable by others",
               (unsigned)geteuid());
    return false;
}

/* STATE/snapshots/p<principal>, both made 0700 when missing; -1 after
 * tools_fail. */
static int snapdir(tool_call_t *tc)
{
    char pdir[16];
    principal_dir(tc, pdir);
    int sfd = openat(sessions_rootfd(tc->srv->sessions), "..",
                     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int top = open_private_dir(sfd, "snapshots");
    int fd = top < 0 ? -1 : open_private_dir(top, pdir);
    int e = errno;
    if (sfd >= 0)
        close(sfd);
    if (fd < 0)
        tools_fail(tc, "the snapshots dir cannot be opened: %s", strerror(e));
    else if (!private_ok(tc, top) || !private_ok(tc, fd))
        close(fd), fd = -1;
    if (top >= 0)
        close(top);
    return fd;
}

/* STATE/snapshots/p<principal>/file, for showing (STATE: the parent of
 * STATE/sessions). */
static char *snap_path(tool_call_t *tc, const char *file)
{
    const char *r = sessions_root(tc->srv->sessions);
    const char *slash = strrchr(r, '/');
    int n = slash ? (int)(slash - r) : 0;
    char pdir[16];
    principal_dir(tc, pdir);
    return xasprintf("%.*s/snapshots/%s%s%s", n, r, pdir, *file ? "/" : "", file);
}

char *sesstools_snapshots_dir(tool_call_t *tc) { return snap_path(tc, ""); }

/* ---- session_snapshot ---------------------------------------------------------------------- */

static void write_snapshot(tool_call_t *tc, session_t *s, const char *name, int dfd)
{
    char *file = xasprintf("%s" SNAP_SUFFIX, name);
    char *tmp = xasprintf(".tmp-%d-%s", (int)getpid(), file);
    char *err = NULL;
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && ckpt_bundle_write(s->ckpt, fd, s->label, &err) && fsync(fd) == 0;
    if (fd < 0)
        err = xasprintf("cannot create it: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    /* RENAME_NOREPLACE: an existing snapshot is never overwritten. */
    if (ok && renameat2(dfd, tmp, dfd, file, RENAME_NOREPLACE) < 0) {
        err = xasprintf(errno == EEXIST ? "a snapshot named \"%s\" exists already: choose "
                                          "another name"
                                        : "cannot store it as \"%s\"",
                        name);
        ok = false;
    }
    if (!ok) {
        unlinkat(dfd, tmp, 0);
        tools_fail(tc, "Snapshot refused: %s.", err ? err : strerror(errno));
    } else {
        struct stat st;
        fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW);
        char *path = snap_path(tc, file);
        json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
        json_object_set_new(tc->out, "name", jsonrpc_string(name));
        json_object_set_new(tc->out, "checkpoint", json_integer(ckpt_head(s->ckpt)));
        json_object_set_new(tc->out, "bytes", json_integer(st.st_size));
        tools_json_bytes(tc->out, "path", path, strlen(path));
        buf_printf(&tc->text, "Snapshot \"%s\" written (%lld bytes, up to checkpoint %lld); "
                              "session_restore {name: \"%s\"} brings it back as a new session.",
                   name, (long long)st.st_size, (long long)ckpt_head(s->ckpt), name);
        free(path);
    }
    free(err);
    free(tmp);
    free(file);
}

static void run_snapshot(tool_call_t *tc, const json_t *args)
{
    const char *given = tools_arg_str(args, "name", NULL);
    if (given && !check_name(tc, given))
        return;
    session_t *s = tools_session(tc, args);
    if (!s)
        return;
    int dfd = -1;
    if (!s->ckpt) {
        tools_fail(tc, "session %s has no checkpoint store; nothing to snapshot.", s->id);
    } else if ((dfd = snapdir(tc)) >= 0) {
        sesstools_checkpoint(tc, s, "session_snapshot", "changes found before the snapshot");
        char def[96];
        snprintf(def, sizeof def, "%.8s-%lld-%lld", s->id, (long long)ckpt_head(s->ckpt),
                 (long long)clock_wall_ms());
        write_snapshot(tc, s, given ? given : def, dfd);
        close(dfd);
    }
    sessions_put(s);
}

const tool_def_t tool_session_snapshot = {
    .name = "session_snapshot",
    .title = "Save a session as a snapshot",
    .description = "Saves the session's checkpoints (history, labels, files) as one snapshot "
                   "file in the server's snapshots dir. session_restore brings it back as a "
                   "new session, even after this one is closed or the server restarted.",
    .input_schema = "{\"type\": \"object\", \"properties\": {" SESS_ID_SCHEMA ", "
                    "\"name\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 64, "
                    "\"description\": \"letters, digits, '.', '_', '-', not starting with '.' or '-' (default: made from the "
                    "session id, checkpoint and time); an existing name is refused\"}}, "
                    "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"name\": {\"type\": \"string\"}, \"checkpoint\": {\"type\": "
                     "\"integer\"}, \"bytes\": {\"type\": \"integer\"}, \"path\": {\"type\": "
                     "\"string\"}, \"checkpoint_id\": {\"type\": \"integer\"}}, \"required\": "
                     "[\"session_id\", \"name\", \"checkpoint\"]}",
    .needs_policy = true,
    .run = run_snapshot,
};

/* ---- session_restore ---------------------------------------------------------------------- */

static void run_restore(tool_call_t *tc, const json_t *args)
{
    const char *name = tools_arg_str(args, "name", "");
    if (!check_name(tc, name))
        return;
    int dfd = snapdir(tc);
    if (dfd < 0)
        return;
    char *file = xasprintf("%s" SNAP_SUFFIX, name);
    int fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    close(dfd);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        tools_fail(tc, "No snapshot named \"%s\" (list_snapshots shows the snapshots).", name);
        if (fd >= 0)
            close(fd);
        free(file);
        return;
    }
    free(file);
    char *err = NULL, *slabel = NULL;
    session_t *s = sessions_create(tc->srv->sessions, &tc->req->who, tools_setting(tc, S_MAX_SESSIONS),
                                   tools_arg_str(args, "label", name), &err);
    if (s) {
        char fam[48];
        ckpt_owner_t own = sesstools_owner();
        sesstools_family(s->id, fam);
        s->ckpt = ckpt_bundle_read(fd, sessions_rootfd(tc->srv->sessions),
                                   sessions_root(tc->srv->sessions), fam, s->ws_fd, &own, &slabel,
                                   &err);
        if (!s->ckpt) {
            char *e2 = NULL;
            sessions_close(tc->srv->sessions, s->id, tc->req->who.principal, &e2);
            free(e2);
            sessions_put(s);
            s = NULL;
        }
    }
    close(fd);
    if (!s) {
        tools_fail(tc, "Restore refused: %s.", err);
        free(err);
        return;
    }
    json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
    json_object_set_new(tc->out, "name", jsonrpc_string(name));
    tools_json_bytes(tc->out, "label", s->label, strlen(s->label));
    tools_json_bytes(tc->out, "snapshot_label", slabel ? slabel : "", slabel ? strlen(slabel) : 0);
    json_object_set_new(tc->out, "checkpoint_id", json_integer(ckpt_head(s->ckpt)));
    tools_json_bytes(tc->out, "workspace", s->workspace, strlen(s->workspace));
    buf_printf(&tc->text, "Snapshot \"%s\" restored as session %s, at checkpoint %lld with its "
                          "history (session_history).",
               name, s->id, (long long)ckpt_head(s->ckpt));
    free(slabel);
    sessions_put(s);
}

const tool_def_t tool_session_restore = {
    .name = "session_restore",
    .title = "Restore a snapshot as a new session",
    .description = "Makes a new session from a snapshot in the server's snapshots dir (by the "
                   "name session_snapshot gave it): its files, history and labels.",
    .input_schema = "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", "
                    "\"minLength\": 1, \"maxLength\": 64, \"description\": \"the snapshot's name "
                    "(list_snapshots)\"}, \"label\": {\"type\": \"string\", \"maxLength\": 64, "
                    "\"description\": \"the new session's label (default: the name)\"}}, "
                    "\"required\": [\"name\"], \"additionalProperties\": false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": "
                     "\"string\"}, \"name\": {\"type\": \"string\"}, \"label\": {\"type\": "
                     "\"string\"}, \"snapshot_label\": {\"type\": \"string\"}, "
                     "\"checkpoint_id\": {\"type\": \"integer\"}, \"workspace\": {\"type\": "
                     "\"string\"}}, \"required\": [\"session_id\", \"name\", \"checkpoint_id\"]}",
    .needs_policy = true,
    .run = run_restore,
};

/* ---- list_snapshots ----------------------------------------------------------------------- */

static void run_list_snapshots(tool_call_t *tc, const json_t *args)
{
    (void)args;
    int dfd = snapdir(tc);
    if (dfd < 0)
        return;
    int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    json_t *arr = jsonrpc_add_array(tc->out, "snapshots");
    size_t n = 0, sl = strlen(SNAP_SUFFIX);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        struct stat st;
        if (len <= sl || strcmp(e->d_name + len - sl, SNAP_SUFFIX) ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        char *name = xstrndup(e->d_name, len - sl);
        if (name_ok(name)) {
            json_t *o = json_object();
            char when[32];
            tools_iso_time((int64_t)st.st_mtime * 1000, when);
            json_object_set_new(o, "name", jsonrpc_string(name));
            json_object_set_new(o, "bytes", json_integer(st.st_size));
            json_object_set_new(o, "created_at", jsonrpc_string(when));
            json_array_append_new(arr, o);
            buf_printf(&tc->text, "%s- %s (%lld bytes, %s)", n ? "\n" : "", name,
                       (long long)st.st_size, when);
            n++;
        }
        free(name);
    }
    if (d)
        closedir(d);
    else if (lfd >= 0)
        close(lfd);
    close(dfd);
    char *dir = snap_path(tc, "");
    tools_json_bytes(tc->out, "snapshots_dir", dir, strlen(dir));
    if (!n)
        buf_printf(&tc->text, "No snapshots in %s.", dir);
    free(dir);
}

const tool_def_t tool_list_snapshots = {
    .name = "list_snapshots",
    .title = "List snapshots",
    .description = "Lists the snapshots in the server's snapshots dir (names for "
                   "session_restore).",
    .input_schema = "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}",
    .output_schema = "{\"type\": \"object\", \"properties\": {\"snapshots\": {\"type\": "
                     "\"array\", \"items\": {\"type\": \"object\", \"properties\": {\"name\": "
                     "{\"type\": \"string\"}, \"bytes\": {\"type\": \"integer\"}, \"created_at\": "
                     "{\"type\": \"string\"}}, \"required\": [\"name\"]}}, \"snapshots_dir\": "
                     "{\"type\": \"string\"}}, \"required\": [\"snapshots\"]}",
    .read_only = true,
    .run = run_list_snapshots,
};
