/* bind_fd.c — the mount plan's binds of host paths, handed to bwrap by fd
 * (the fallback, without the access-time layer: SPEC §13, §16).
 *
 * bwrap resolves a "--bind SRC DEST" source by path, following every
 * symbolic link, well after the planner looked at SRC: a directory a
 * sandbox can write (a concurrent one, or the previous run) may be a link
 * by then, and bwrap would mount the link's target (a host directory the
 * plan hid, or one it never granted) in its place. So each source is
 * opened here, once, beneath the workspace fd (or from / for the other
 * host paths), with openat2 RESOLVE_NO_SYMLINKS, checked to be the object
 * the plan looked at (its device and inode when the plan recorded them,
 * else a directory or a regular file), and the bind becomes "--bind-fd N
 * DEST" (--ro-bind-fd): bwrap mounts what the fd is, then checks that its
 * mount is that inode, and closes the fd. A source that is a link now, or
 * cannot be opened, refuses the run; a -try source that is simply absent
 * is left out, as bwrap's -try would. Kernel filesystems (/proc, /dev,
 * /sys) are left as they are: no sandbox makes links there, and the
 * runner's own fds (/proc/self/fd/N) are bound through them.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* fds the runner keeps for itself and the child's copies (spawn.c places
 * each source twice over for a moment): what the fd limit must leave. */
#define BINDS_HEADROOM 64

static bool path_bind(const char *opt, bool *ro, bool *try)
{
    *ro = !strncmp(opt, "--ro-", 5);
    *try = strlen(opt) > 4 && !strcmp(opt + strlen(opt) - 4, "-try");
    return !strcmp(opt, "--bind") || !strcmp(opt, "--bind-try") || !strcmp(opt, "--ro-bind") ||
           !strcmp(opt, "--ro-bind-try");
}

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* Sources left as paths: kernel filesystems, and anything relative. */
static bool kernel_path(const char *src)
{
    return src[0] != '/' || under(src, "/proc") || under(src, "/dev") || under(src, "/sys");
}

/* An O_PATH fd of src, never through a symbolic link: beneath the
 * workspace fd when src lies in the workspace, else from /. -1 with errno. */
static int open_source(const char *src, int ws_fd, const char *ws)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int dirfd = AT_FDCWD;
    const char *rel = src;
    if (ws_fd >= 0 && ws && under(src, ws) && src[strlen(ws)] == '/') {
        dirfd = ws_fd;
        rel = src + strlen(ws) + 1;
        how.resolve |= RESOLVE_BENEATH;
    }
    int fd;
    do fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    while (fd < 0 && errno == EAGAIN);
    return fd;
}

/* Is fd (just opened at src) the object the plan checked? */
static bool same_object(int fd, const char *src, const bwrap_t *b)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return false;
    bw_seen_t seen;
    if (b && bwrap_seen(b, src, &seen))
        return (unsigned long long)st.st_dev == seen.dev && (unsigned long long)st.st_ino == seen.ino;
    return S_ISDIR(st.st_mode) || S_ISREG(st.st_mode);
}

/* Room for n more fds in this process and, twice over, in the child. */
static bool room_for(size_t n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return false;
    rlim_t need = (rlim_t)SBX_FD_BINDS + 2 * (rlim_t)n + BINDS_HEADROOM;
    if (rl.rlim_cur >= need) return true;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) return false;
    rl.rlim_cur = need;
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* The binds to open, or -1 when an option of the vector is not known (its
 * words could not be told from options). */
static long count_binds(const strvec_t *v, size_t from)
{
    long n = 0;
    bool ro, try;
    for (size_t i = from; i < v->n;) {
        int na = sbx_opt_nargs(v->v[i]);
        if (na < 0 || i + (size_t)na >= v->n) return -1;
        if (path_bind(v->v[i], &ro, &try) && !kernel_path(v->v[i + 1])) n++;
        i += (size_t)na + 1;
    }
    return n;
}

/* Drops the three words at i. */
static void drop_op(strvec_t *v, size_t i)
{
    for (size_t k = 0; k < 3; k++) free(v->v[i + k]);
    memmove(&v->v[i], &v->v[i + 3], (v->n - i - 3) * sizeof *v->v);
    v->n -= 3;
}

bool sbx_binds_by_fd(strvec_t *v, size_t from, const bwrap_t *b, int ws_fd, const char *ws, sbx_binds_t *out,
                     char **err)
{
    out->fd = NULL;
    out->n = 0;
    long want = count_binds(v, from);
    if (want < 0) {
        *err = xstrdup("the bwrap options of the run hold an option the runner does not know: refusing to run");
        return false;
    }
    if (!want) return true;
    if (want > SBX_BINDS_MAX || !room_for((size_t)want)) {
        *err = xasprintf("%ld host paths to bind by fd, past this process's limit of open files: refusing to run "
                         "(raise the limit, or fewer rules)",
                         want);
        return false;
    }
    out->fd = xcalloc((size_t)want, sizeof *out->fd);
    for (size_t i = from; i < v->n;) {
        bool ro, try;
        const char *opt = v->v[i], *src = i + 1 < v->n ? v->v[i + 1] : "";
        if (!path_bind(opt, &ro, &try) || kernel_path(src)) {
            i += (size_t)sbx_opt_nargs(opt) + 1; /* known: count_binds read them all */
            continue;
        }
        int fd = open_source(src, ws_fd, ws);
        if (fd < 0 && try && errno == ENOENT) { /* absent: bwrap's -try would skip it too */
            drop_op(v, i);
            continue;
        }
        if (fd < 0 || !same_object(fd, src, b)) {
            int e = errno;
            *err = fd < 0 && e == ELOOP
                       ? xasprintf("'%s' has a symbolic link on its way or at its end (one a sandbox could have made "
                                   "after the plan checked it): refusing to run",
                                   src)
                   : fd < 0 ? xasprintf("cannot open '%s' to bind it: %s: refusing to run", src, strerror(e))
                            : xasprintf("'%s' was replaced after the plan checked it: refusing to run", src);
            if (fd >= 0) close(fd);
            sbx_binds_close(out);
            return false;
        }
        free(v->v[i]);
        free(v->v[i + 1]);
        v->v[i] = xstrdup(ro ? "--ro-bind-fd" : "--bind-fd");
        v->v[i + 1] = xasprintf("%zu", (size_t)SBX_FD_BINDS + out->n);
        out->fd[out->n++] = fd;
        i += 3;
    }
    return true;
}

void sbx_binds_close(sbx_binds_t *b)
{
    for (size_t i = 0; i < b->n; i++) close(b->fd[i]);
    free(b->fd);
    b->fd = NULL;
    b->n = 0;
}
