/* beneath.c — confined path resolution (see beneath.h). */
#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* 0: untried, 1: openat2 works, -1: it does not (fallback from now on). */
static atomic_int have_openat2;
static atomic_bool forced_fallback;

void beneath_force_fallback(bool on) { atomic_store(&forced_fallback, on); }

bool beneath_normalize(const char *path, buf_t *out, const char **why)
{
    size_t n = strlen(path);
    buf_truncate(out, 0);
    if (n > BENEATH_PATH_MAX) {
        *why = "the path is longer than 4096 bytes";
        return false;
    }
    if (path[0] == '/') {
        /* Absolute paths would name the host, not the workspace. */
        *why = "absolute paths are not accepted: give a path relative to the session "
               "workspace, such as \"src/main.c\"";
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f) {
            *why = "the path contains a control character";
            return false;
        }
    const char *p = path;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            /* ".." is refused lexically even where it would stay inside:
             * the rule is simple to state and leaves nothing to resolve. */
            *why = "\"..\" components are not accepted: paths stay beneath the session "
                   "workspace";
            return false;
        }
        if (len > BENEATH_NAME_MAX) {
            *why = "a path component is longer than 255 bytes";
            return false;
        }
        if (len && !(len == 1 && p[0] == '.')) {
            if (out->len)
                buf_addc(out, '/');
            buf_add(out, p, len);
        }
        p += len;
        if (*p == '/')
            p++;
    }
    if (!out->p)
        buf_add(out, "", 0);
    return true;
}

static int try_openat2(int dirfd, const char *rel, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (unsigned long long)(flags | O_CLOEXEC),
        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
        /* BENEATH: no absolute or escaping resolution at any step.
         * NO_SYMLINKS: a symlink the sandboxed command planted is never
         * followed, not even one that points inside.
         * NO_MAGICLINKS: belt and braces for /proc-style links.
         * NO_XDEV: nothing beneath a workspace is a mount point. */
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                   RESOLVE_NO_XDEV,
    };
    return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
}

/* The fallback: one component at a time, never following a symlink
 * (O_NOFOLLOW on every step); ".." was refused by beneath_normalize. */
static int walk_open(int dirfd, const char *rel, int flags, mode_t mode, bool mkdirs)
{
    if (!*rel)
        return openat(dirfd, ".", flags | O_CLOEXEC, mode);
    char *dup = xstrdup(rel);
    int fd = dirfd, err = 0;
    char *p = dup;
    for (;;) {
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        int next;
        if (slash) {
            next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0 && errno == ENOENT && mkdirs) {
                if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST)
                    next = -1;
                else
                    next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            }
        } else {
            next = openat(fd, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
            if (next < 0 && errno == ENOENT && mkdirs && (flags & O_DIRECTORY)) {
                if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST)
                    next = -1;
                else
                    next = openat(fd, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
            }
        }
        if (next < 0)
            err = errno;
        if (fd != dirfd)
            close(fd);
        fd = next;
        if (fd < 0 || !slash)
            break;
        p = slash + 1;
    }
    free(dup);
    if (fd < 0)
        errno = err;
    return fd;
}

static bool use_openat2(void)
{
    return !atomic_load(&forced_fallback) && atomic_load(&have_openat2) >= 0;
}

int beneath_open(int dirfd, const char *rel, int flags, mode_t mode)
{
    if (use_openat2()) {
        int fd = try_openat2(dirfd, *rel ? rel : ".", flags, mode);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM && errno != E2BIG)) {
            atomic_store(&have_openat2, 1);
            return fd;
        }
        if (atomic_load(&have_openat2) == 0)
            atomic_store(&have_openat2, -1);
    }
    return walk_open(dirfd, rel, flags, mode, false);
}

int beneath_open_dir(int dirfd, const char *rel, bool create)
{
    int flags = O_RDONLY | O_DIRECTORY;
    int fd = beneath_open(dirfd, rel, flags, 0);
    if (fd >= 0 || errno != ENOENT || !create)
        return fd;
    /* Create what is missing, still one confined component at a time. */
    return walk_open(dirfd, rel, flags, 0, true);
}

void beneath_split(const char *rel, char **dup, const char **parent, const char **name)
{
    *dup = xstrdup(rel);
    char *slash = strrchr(*dup, '/');
    if (slash) {
        *slash = '\0';
        *parent = *dup;
        *name = slash + 1;
    } else {
        *parent = "";
        *name = *dup;
    }
}
