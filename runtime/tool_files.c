/* tool_files.c — session_write_file, session_read_file, session_list_files.
 *
 * Every path goes through beneath.h: relative to the session workspace,
 * resolved from the workspace's directory fd with no symlink followed and no
 * way above it. Every path is first put to the policy (access.h): the tools
 * read and write only what a command in the sandbox could, and a listing
 * shows neither what the sandbox cannot see nor the placeholders its mounts
 * stand on. Writes are atomic (a temp file in the target directory, renamed
 * over the target) and checked against max_workspace_mb first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "beneath.h"
#include "sesstools.h"
#include "textenc.h"
#include "tools.h"
#include "tree.h"

#define READ_DEFAULT (1024 * 1024)
#define READ_MAX (8 * 1024 * 1024)
#define LIST_DEFAULT 1000
#define LIST_MAX 10000
#define LIST_DEPTH_MAX 32
#define MEASURE_MAX_ENTRIES 1000000

#define SESSION_ID_PROP                                                             \
    "\"session_id\": {\"type\": \"string\", \"minLength\": 32, \"maxLength\": 32, " \
    "\"description\": \"The ID create_session returned.\"}"

/* A sentence for an errno from resolving or opening path beneath the workspace. */
static void fail_open(tool_call_t *tc, const char *path, int err)
{
    switch (err) {
    case ELOOP:
        tools_fail(tc, "\"%s\": a component of the path is a symbolic link; the file tools never "
                       "follow symlinks (use the real path inside the workspace)",
                   path);
        break;
    case EXDEV:
        tools_fail(tc, "\"%s\" leads outside the session workspace; use a path inside it", path);
        break;
    case ENOENT:
        tools_fail(tc, "\"%s\" does not exist in the session workspace (session_list_files shows "
                       "what does)",
                   path);
        break;
    case ENOTDIR:
        tools_fail(tc, "\"%s\": a component of the path is not a directory", path);
        break;
    case EISDIR:
        tools_fail(tc, "\"%s\" is a directory", path);
        break;
    default:
        tools_fail(tc, "\"%s\": %s", path, strerror(err));
        break;
    }
}

/* Normalises args.path; "" (the workspace itself) only when allow_root. */
static bool get_path(tool_call_t *tc, const json_t *args, bool allow_root, buf_t *rel)
{
    const char *why = NULL;
    const char *path = tools_arg_str(args, "path", "");
    if (!beneath_normalize(path, rel, &why)) {
        tools_fail(tc, "Invalid path \"%s\": %s.", path, why);
        return false;
    }
    if (!allow_root && rel->len == 0) {
        tools_fail(tc, "Invalid path \"%s\": it names the workspace itself; give a file path such "
                       "as \"notes.txt\".",
                   path);
        return false;
    }
    return true;
}

/* ---- session_write_file --------------------------------------------------------------- */

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Writes data to parentfd/name (mode) through a temp file in the same
 * directory and a rename over name. false with errno. */
static bool atomic_write(int parentfd, const char *name, const char *data, size_t n, mode_t mode)
{
    unsigned char r[8];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return false;
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".drun-write-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2],
             r[3], r[4], r[5], r[6], r[7]);
    /* O_EXCL|O_NOFOLLOW: the temp name is new and never a planted link. */
    int fd = openat(parentfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return false;
    bool ok = write_all(fd, data, n) && fchmod(fd, mode) == 0;
    int err = errno;
    if (close(fd) < 0 && ok) {
        ok = false;
        err = errno;
    }
    /* rename(2) replaces the name, never writes through it: a hard link or
     * a file another process holds open keeps its old contents. */
    if (ok && renameat(parentfd, tmp, parentfd, name) < 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        unlinkat(parentfd, tmp, 0);
        errno = err;
    }
    return ok;
}

static void run_write(tool_call_t *tc, const json_t *args)
{
    buf_t rel = BUF_INIT, data = BUF_INIT;
    const char *content = tools_arg_str(args, "content", "");
    const char *enc = tools_arg_str(args, "encoding", "utf-8");
    bool overwrite = tools_arg_bool(args, "overwrite", true);
    if (!get_path(tc, args, false, &rel))
        goto out;
    if (!strcmp(enc, "base64")) {
        if (!textenc_base64_decode(content, strlen(content), &data)) {
            tools_fail(tc, "content is not valid base64 (standard alphabet, optional '=' "
                           "padding, no whitespace); send it again, or use encoding \"utf-8\" for "
                           "text.");
            goto out;
        }
    } else {
        buf_adds(&data, content);
    }
    session_t *s = tools_session(tc, args);
    if (!s)
        goto out;

    pthread_mutex_lock(&s->write_mu);
    char *dup = NULL;
    int pfd = -1;
    /* Before anything is created: the parents the write would make count. */
    if (!access_require(tc, s, rel.p, LVL_WRITE, ""))
        goto unlock;
    const char *parent, *name;
    beneath_split(rel.p, &dup, &parent, &name);
    pfd = beneath_open_dir(s->ws_fd, parent, true);
    struct stat st;
    bool exists = false;
    mode_t mode = 0644;
    uint64_t old_size = 0;
    if (pfd < 0) {
        fail_open(tc, *parent ? parent : ".", errno);
        goto unlock;
    }
    if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        exists = true;
        if (S_ISLNK(st.st_mode)) {
            tools_fail(tc, "\"%s\" is a symbolic link; the file tools never write through "
                           "symlinks. Remove it first (session_bash: rm) or write elsewhere.",
                       rel.p);
            goto unlock;
        }
        if (S_ISDIR(st.st_mode)) {
            tools_fail(tc, "\"%s\" is a directory; give a file path.", rel.p);
            goto unlock;
        }
        if (!S_ISREG(st.st_mode)) {
            tools_fail(tc, "\"%s\" exists and is not a regular file.", rel.p);
            goto unlock;
        }
        if (!overwrite) {
            tools_fail(tc, "\"%s\" exists and overwrite is false; choose another path or pass "
                           "overwrite: true.",
                       rel.p);
            goto unlock;
        }
        mode = st.st_mode & 0777;
        old_size = (uint64_t)st.st_size;
        /* An empty stand-in the sandbox's mounts left is not the user's file. */
        access_t *acc = access_begin(tc, s);
        bool placeholder = access_is_placeholder(acc, rel.p, pfd, name, &st);
        access_end(acc);
        if (placeholder) {
            exists = false;
            mode = 0644;
        }
    }
    /* max_workspace_mb: measured now, under the session's write lock. */
    tree_usage_t u;
    tree_measure(s->ws_fd, MEASURE_MAX_ENTRIES, &u);
    uint64_t limit = (uint64_t)tools_setting(tc, S_MAX_WORKSPACE_MB) * 1024 * 1024;
    uint64_t after = u.bytes - (old_size <= u.bytes ? old_size : u.bytes) + data.len;
    if (after > limit) {
        tools_fail(tc, "Refused: the workspace would hold %llu bytes, over max_workspace_mb (%lld "
                       "MB = %llu bytes); it holds %llu now. Delete files (session_bash: rm) or "
                       "write less.",
                   (unsigned long long)after, (long long)tools_setting(tc, S_MAX_WORKSPACE_MB),
                   (unsigned long long)limit, (unsigned long long)u.bytes);
        goto unlock;
    }
    if (!atomic_write(pfd, name, data.p, data.len, mode)) {
        fail_open(tc, rel.p, errno);
        goto unlock;
    }
    json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
    tools_json_bytes(tc->out, "path", rel.p, rel.len);
    json_object_set_new(tc->out, "bytes", json_integer(data.len));
    json_object_set_new(tc->out, "created", json_boolean(!exists));
    json_object_set_new(tc->out, "workspace_bytes", json_integer(after));
    json_object_set_new(tc->out, "workspace_limit_bytes", json_integer(limit));
    buf_printf(&tc->text, "%s %s: %zu bytes (workspace now %llu of %llu bytes).",
               exists ? "Replaced" : "Created", rel.p, data.len, (unsigned long long)after,
               (unsigned long long)limit);
unlock:
    if (pfd >= 0)
        close(pfd);
    free(dup);
    pthread_mutex_unlock(&s->write_mu);
    if (!tc->is_error)
        sesstools_checkpoint(tc, s, "session_write_file", rel.p);
    sessions_put(s);
out:
    buf_free(&rel);
    buf_free(&data);
}

const tool_def_t tool_session_write_file = {
    .name = "session_write_file",
    .title = "Write a file in a session workspace",
    .description =
        "Writes a file beneath the session workspace, creating missing parent directories. "
        "The write is atomic (a temporary file renamed over the target). Text is sent as is; "
        "binary content base64-encoded with encoding \"base64\". Refused when the workspace "
        "would exceed max_workspace_mb, for absolute paths, \"..\" and symlinks.",
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
        "\"path\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096, "
        "\"description\": \"Relative to the workspace, e.g. \\\"src/app.py\\\".\"}, "
        "\"content\": {\"type\": \"string\", \"maxLength\": 33554432}, "
        "\"encoding\": {\"type\": \"string\", \"enum\": [\"utf-8\", \"base64\"], \"default\": "
        "\"utf-8\"}, "
        "\"overwrite\": {\"type\": \"boolean\", \"default\": true, \"description\": \"false: "
        "refuse when the file exists.\"}}, "
        "\"required\": [\"session_id\", \"path\", \"content\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
        "\"path\": {\"type\": \"string\"}, \"bytes\": {\"type\": \"integer\"}, \"created\": "
        "{\"type\": \"boolean\"}, \"workspace_bytes\": {\"type\": \"integer\"}, "
        "\"workspace_limit_bytes\": {\"type\": \"integer\"}}, "
        "\"required\": [\"session_id\", \"path\", \"bytes\", \"created\"]}",
    .needs_policy = true,
    .destructive = true,
    .run = run_write,
};

/* ---- session_read_file ---------------------------------------------------------------- */

static void run_read(tool_call_t *tc, const json_t *args)
{
    buf_t rel = BUF_INIT, data = BUF_INIT;
    if (!get_path(tc, args, false, &rel))
        goto out;
    session_t *s = tools_session(tc, args);
    if (!s)
        goto out;
    if (!access_require(tc, s, rel.p, LVL_READ, "")) {
        sessions_put(s);
        goto out;
    }
    /* O_NONBLOCK: a FIFO planted by a command must not block the server. */
    int fd = beneath_open(s->ws_fd, rel.p, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
    struct stat st = {0};
    if (fd < 0) {
        fail_open(tc, rel.p, errno);
        goto put;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        tools_fail(tc,
                   S_ISDIR(st.st_mode) ? "\"%s\" is a directory; use session_list_files."
                                       : "\"%s\" is not a regular file.",
                   rel.p);
        goto close;
    }
    uint64_t offset = (uint64_t)tools_arg_int(args, "offset", 0);
    size_t max = (size_t)tools_arg_int(args, "max_bytes", READ_DEFAULT);
    buf_reserve(&data, max);
    while (data.len < max) {
        ssize_t n = pread(fd, data.p + data.len, max - data.len, (off_t)(offset + data.len));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fail_open(tc, rel.p, errno);
            goto close;
        }
        if (n == 0)
            break;
        data.len += (size_t)n;
    }
    uint64_t size = (uint64_t)st.st_size;
    bool more = offset + data.len < size;
    const char *want = tools_arg_str(args, "encoding", "auto");
    size_t n = data.len;
    if (more && strcmp(want, "base64"))
        n = textenc_utf8_clean_cut(data.p, data.len); /* do not split a character */
    bool text = strcmp(want, "base64") && (!strcmp(want, "utf-8") || textenc_utf8_valid(data.p, n, false));
    if (!text)
        n = data.len;
    more = offset + n < size;

    json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
    tools_json_bytes(tc->out, "path", rel.p, rel.len);
    json_object_set_new(tc->out, "size", json_integer(size));
    json_object_set_new(tc->out, "offset", json_integer(offset));
    json_object_set_new(tc->out, "bytes", json_integer(n));
    json_object_set_new(tc->out, "truncated", json_boolean(more));
    if (text) {
        bool exact = tools_json_bytes(tc->out, "content", data.p, n);
        json_object_set_new(tc->out, "encoding", jsonrpc_string("utf-8"));
        json_object_set_new(tc->out, "exact", json_boolean(exact));
        buf_printf(&tc->text, "%s: %llu bytes from offset %llu of %llu%s%s\n", rel.p,
                   (unsigned long long)n, (unsigned long long)offset, (unsigned long long)size,
                   more ? " (more follows: read again with a larger offset)" : "",
                   exact ? "" : " (not valid UTF-8: shown with U+FFFD; use encoding base64 "
                                "for the exact bytes)");
        buf_add(&tc->text, data.p, n);
    } else {
        buf_t b64 = BUF_INIT;
        textenc_base64_encode(data.p, n, &b64);
        json_object_set_new(tc->out, "content", jsonrpc_string(buf_cstr(&b64)));
        json_object_set_new(tc->out, "encoding", jsonrpc_string("base64"));
        json_object_set_new(tc->out, "exact", json_boolean(true));
        buf_printf(&tc->text, "%s: %llu bytes of binary data from offset %llu of %llu%s, "
                              "base64-encoded:\n%s",
                   rel.p, (unsigned long long)n, (unsigned long long)offset,
                   (unsigned long long)size, more ? " (more follows)" : "", buf_cstr(&b64));
        buf_free(&b64);
    }
close:
    close(fd);
put:
    sessions_put(s);
out:
    buf_free(&rel);
    buf_free(&data);
}

const tool_def_t tool_session_read_file = {
    .name = "session_read_file",
    .title = "Read a file from a session workspace",
    .description =
        "Reads a regular file beneath the session workspace: up to max_bytes from offset. "
        "Text (valid UTF-8) comes back as is; anything else base64-encoded (encoding says "
        "which). truncated says more follows. Symlinks are not followed.",
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
        "\"path\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 4096}, "
        "\"offset\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 9007199254740991, "
        "\"default\": 0}, "
        "\"max_bytes\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 8388608, "
        "\"default\": 1048576}, "
        "\"encoding\": {\"type\": \"string\", \"enum\": [\"auto\", \"utf-8\", \"base64\"], "
        "\"default\": \"auto\", \"description\": \"auto: utf-8 for text, base64 otherwise; "
        "utf-8: always text (invalid bytes become U+FFFD)\"}}, "
        "\"required\": [\"session_id\", \"path\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
        "\"path\": {\"type\": \"string\"}, \"size\": {\"type\": \"integer\"}, \"offset\": "
        "{\"type\": \"integer\"}, \"bytes\": {\"type\": \"integer\"}, \"truncated\": {\"type\": "
        "\"boolean\"}, \"encoding\": {\"type\": \"string\", \"enum\": [\"utf-8\", "
        "\"base64\"]}, \"exact\": {\"type\": \"boolean\"}, \"content\": {\"type\": "
        "\"string\"}}, "
        "\"required\": [\"session_id\", \"path\", \"size\", \"offset\", \"bytes\", "
        "\"truncated\", \"encoding\", \"content\"]}",
    .needs_policy = true,
    .read_only = true,
    .run = run_read,
};

/* ---- session_list_files --------------------------------------------------------------- */

typedef struct lister {
    tool_call_t *tc;
    access_t *acc;
    json_t *entries;
    size_t count, max;
    bool truncated;
    bool recursive;
} lister_t;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *type_name(mode_t m)
{
    return S_ISREG(m)   ? "file"
           : S_ISDIR(m) ? "dir"
           : S_ISLNK(m) ? "symlink"
                        : "other";
}

static void list_dir(lister_t *l, int dirfd, const char *prefix, int depth)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    VEC(char *) names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            vec_push(&names, xstrdup(e->d_name));
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_names);
    for (size_t i = 0; i < names.n; i++) {
        const char *name = names.v[i];
        struct stat st;
        if (l->count >= l->max) {
            l->truncated = true;
            break;
        }
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        char *path = *prefix ? xasprintf("%s/%s", prefix, name) : xstrdup(name);
        /* What the sandbox cannot see is not shown, nor the empty stand-ins
         * its mounts left (they are not the user's files). Caps reach
         * everything below, so nothing under a hidden directory is visible. */
        if (access_level(l->acc, path) < LVL_READ ||
            access_is_placeholder(l->acc, path, dirfd, name, &st)) {
            free(path);
            continue;
        }
        json_t *o = json_object();
        tools_json_bytes(o, "path", path, strlen(path));
        json_object_set_new(o, "type", jsonrpc_string(type_name(st.st_mode)));
        json_object_set_new(o, "size", json_integer(st.st_size));
        char mode[8], when[32];
        snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
        json_object_set_new(o, "mode", jsonrpc_string(mode));
        tools_iso_time((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000, when);
        json_object_set_new(o, "mtime", jsonrpc_string(when));
        if (S_ISLNK(st.st_mode)) {
            /* Shown, never followed: readlinkat reads the link itself. */
            char target[4096];
            ssize_t n = readlinkat(dirfd, name, target, sizeof target);
            if (n >= 0)
                tools_json_bytes(o, "target", target, (size_t)n);
        }
        json_array_append_new(l->entries, o);
        l->count++;
        buf_printf(&l->tc->text, "%-7s %10lld  %s%s\n", type_name(st.st_mode),
                   (long long)st.st_size, path, S_ISDIR(st.st_mode) ? "/" : "");
        if (l->recursive && S_ISDIR(st.st_mode)) {
            int sub = depth < LIST_DEPTH_MAX
                          ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                          : -1;
            if (sub >= 0) {
                list_dir(l, sub, path, depth + 1);
                close(sub);
            } else if (depth >= LIST_DEPTH_MAX) {
                l->truncated = true;
            }
        }
        free(path);
    }
    for (size_t i = 0; i < names.n; i++)
        free(names.v[i]);
    vec_free(&names);
}

static void run_list_files(tool_call_t *tc, const json_t *args)
{
    buf_t rel = BUF_INIT;
    if (!get_path(tc, args, true, &rel))
        goto out;
    session_t *s = tools_session(tc, args);
    if (!s)
        goto out;
    if (!access_require(tc, s, rel.p, LVL_READ, "")) {
        sessions_put(s);
        goto out;
    }
    int dfd = beneath_open_dir(s->ws_fd, rel.p, false);
    if (dfd < 0) {
        fail_open(tc, rel.len ? rel.p : ".", errno);
        sessions_put(s);
        goto out;
    }
    lister_t l = {
        .tc = tc,
        .acc = access_begin(tc, s),
        .max = (size_t)tools_arg_int(args, "max_entries", LIST_DEFAULT),
        .recursive = tools_arg_bool(args, "recursive", false),
    };
    json_object_set_new(tc->out, "session_id", jsonrpc_string(s->id));
    tools_json_bytes(tc->out, "path", rel.p, rel.len);
    l.entries = jsonrpc_add_array(tc->out, "entries");
    list_dir(&l, dfd, rel.p, 0);
    access_end(l.acc);
    close(dfd);
    json_object_set_new(tc->out, "count", json_integer(l.count));
    json_object_set_new(tc->out, "truncated", json_boolean(l.truncated));
    if (!l.count)
        buf_printf(&tc->text, "%s is empty.\n", rel.len ? rel.p : "The workspace");
    if (l.truncated)
        buf_printf(&tc->text, "(listing stopped after %zu entries%s)\n", l.count,
                   l.recursive ? " or at the depth limit" : "");
    sessions_put(s);
out:
    buf_free(&rel);
}

const tool_def_t tool_session_list_files = {
    .name = "session_list_files",
    .title = "List files in a session workspace",
    .description =
        "Lists a directory beneath the session workspace (default: the workspace itself), "
        "optionally recursively, with each entry's type, size, mode and mtime. Symlinks are "
        "shown with their target and never followed.",
    .input_schema =
        "{\"type\": \"object\", \"properties\": {" SESSION_ID_PROP ", "
        "\"path\": {\"type\": \"string\", \"maxLength\": 4096, \"default\": \"\", "
        "\"description\": \"Directory relative to the workspace; empty for the workspace.\"}, "
        "\"recursive\": {\"type\": \"boolean\", \"default\": false}, "
        "\"max_entries\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10000, "
        "\"default\": 1000}}, "
        "\"required\": [\"session_id\"], \"additionalProperties\": false}",
    .output_schema =
        "{\"type\": \"object\", \"properties\": {\"session_id\": {\"type\": \"string\"}, "
        "\"path\": {\"type\": \"string\"}, "
        "\"entries\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"properties\": {"
        "\"path\": {\"type\": \"string\"}, \"type\": {\"type\": \"string\", \"enum\": "
        "[\"file\", \"dir\", \"symlink\", \"other\"]}, \"size\": {\"type\": \"integer\"}, "
        "\"mode\": {\"type\": \"string\"}, \"mtime\": {\"type\": \"string\"}, \"target\": "
        "{\"type\": \"string\"}}, \"required\": [\"path\", \"type\", \"size\"]}}, "
        "\"count\": {\"type\": \"integer\"}, \"truncated\": {\"type\": \"boolean\"}}, "
        "\"required\": [\"session_id\", \"path\", \"entries\", \"count\", \"truncated\"]}",
    .needs_policy = true,
    .read_only = true,
    .run = run_list_files,
};
