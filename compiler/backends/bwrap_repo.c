/* bwrap_repo.c — git repositories by their structure, for the mount planner
 * (bwrap_plan.c) when the access-time layer is off (SPEC §16): reading the
 * two files that move where git looks for a repository's config and hooks
 * (a `commondir`, a `.git` gitfile), and resolving the path they name the
 * way the kernel would, without ever following a symbolic link that a
 * sandbox could replace. The caps themselves are the planner's.
 */
#include "bwrap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

/* A pointer file is a line of text: git reads it whole and trims it. Past
 * this size it is not one (and git would not find a directory there). */
#define REPO_POINTER_MAX 4096
/* Links followed while resolving one pointer, as the kernel's limit. */
#define REPO_MAX_LINKS 40

/* The content of name in the directory dirfd, a regular file opened
 * without following a symlink, trimmed of surrounding white space; NULL
 * when it is missing, not a regular file, empty, too long or unreadable. */
static char *read_pointer(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    char buf[REPO_POINTER_MAX + 1];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= REPO_POINTER_MAX) {
        do n = read(fd, buf, REPO_POINTER_MAX);
        while (n < 0 && errno == EINTR);
    }
    close(fd);
    if (n <= 0) return NULL;
    buf[n] = '\0';
    char *s = buf, *e = buf + n;
    while (s < e && strchr(" \t\r\n", *s)) s++;
    while (e > s && strchr(" \t\r\n", e[-1])) e--;
    if (s == e || memchr(s, '\0', (size_t)(e - s))) return NULL;
    return xstrndup(s, (size_t)(e - s));
}

char *bwrap_repo_pointer(int dirfd, bool gitfile)
{
    char *text = read_pointer(dirfd, gitfile ? ".git" : "commondir");
    if (!text || !gitfile) return text;
    /* "gitdir: PATH", as git's read_gitfile_gently takes it */
    if (strncmp(text, "gitdir:", 7) != 0) {
        free(text);
        return NULL;
    }
    const char *p = text + 7;
    while (*p == ' ' || *p == '\t') p++;
    char *path = *p ? xstrdup(p) : NULL;
    free(text);
    return path;
}

/* The parent of the real path cur, in place ("/" stays "/"). */
static void to_parent(char *cur)
{
    char *slash = strrchr(cur, '/');
    if (slash == cur) cur[1] = '\0';
    else if (slash) *slash = '\0';
}

/* The walk's position: cur, a real path (no link in it), and fd, an O_PATH
 * fd of it (-1 once below a missing component). */
typedef struct pos {
    char *cur;
    int fd;
} pos_t;

static void pos_set(pos_t *at, char *cur, int fd)
{
    free(at->cur);
    if (at->fd >= 0) close(at->fd);
    at->cur = cur;
    at->fd = fd;
}

static int open_root(void) { return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC); }

char *bwrap_repo_resolve(int basefd, const char *base, const char *target, bwrap_writable_fn writable, void *ctx,
                         int *fd_out, char **err)
{
    *fd_out = -1;
    /* pending: what is left to walk from at, one component at a time
     * beneath at.fd: each is opened without following it, a link read
     * from the very inode that was looked at (readlinkat on its fd) */
    pos_t at = {NULL, -1};
    if (target[0] == '/') pos_set(&at, xstrdup("/"), open_root());
    else pos_set(&at, xstrdup(base), fcntl(basefd, F_DUPFD_CLOEXEC, 3));
    if (at.fd < 0) { /* fail closed: nothing was looked at */
        *err = xasprintf("cannot open '%s' to resolve '%s' (a git commondir or gitfile): %s", at.cur, target,
                         strerror(errno));
        pos_set(&at, NULL, -1);
        return NULL;
    }
    char *pending = xstrdup(target);
    unsigned links = 0;
    const char *s = pending;
    while (at.fd >= 0) {
        while (*s == '/') s++;
        if (!*s) break;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 1 && s[0] == '.') {
            s += len;
            continue;
        }
        char *name = xstrndup(s, len);
        bool up = len == 2 && !strcmp(name, "..");
        int nfd = openat(at.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (up ? O_DIRECTORY : 0));
        struct stat st;
        if (nfd >= 0 && fstat(nfd, &st) != 0) {
            close(nfd);
            nfd = -1;
        }
        if (up) {
            free(name);
            s += len;
            to_parent(at.cur);
            /* the parent of a real directory cannot be missing; if it
             * cannot be opened, the rest is lexical as below a missing one */
            pos_set(&at, nfd >= 0 ? xstrdup(at.cur) : xasprintf("%s%s", at.cur, s), nfd);
            continue;
        }
        char *next = xasprintf("%s%s%s", at.cur, strcmp(at.cur, "/") == 0 ? "" : "/", name);
        free(name);
        if (nfd < 0 || !S_ISLNK(st.st_mode)) {
            s += len;
            if (nfd < 0) { /* nothing below exists: the rest is lexical */
                char *rest = xasprintf("%s%s", next, s);
                free(next);
                pos_set(&at, rest, -1);
                break;
            }
            pos_set(&at, next, nfd);
            continue;
        }
        /* A link the sandbox could replace (its directory is writable):
         * a cap planned at today's target would not hold. Fail closed. */
        char lk[PATH_MAX];
        ssize_t n = -1;
        bool replaceable = writable(ctx, at.cur), too_many = ++links > REPO_MAX_LINKS;
        if (!replaceable && !too_many) n = readlinkat(nfd, "", lk, sizeof lk - 1);
        int saved = errno;
        close(nfd);
        if (n <= 0) {
            *err = replaceable ? xasprintf("'%s' is a symbolic link in a writable directory on the way to '%s', which a "
                                           "git commondir or gitfile names: its config and hooks cannot be protected; "
                                           "remove the link",
                                           next, target)
                   : too_many  ? xasprintf("'%s' (named by a git commondir or gitfile) has too many symbolic links", target)
                               : xasprintf("'%s' (on the way to '%s', which a git commondir or gitfile names) cannot be "
                                            "read: %s",
                                           next, target, n < 0 ? strerror(saved) : "an empty link");
            free(next);
            free(pending);
            pos_set(&at, NULL, -1);
            return NULL;
        }
        free(next);
        lk[n] = '\0';
        char *np = xasprintf("%s%s", lk, s + len);
        if (lk[0] == '/') pos_set(&at, xstrdup("/"), open_root());
        free(pending);
        pending = np;
        s = pending;
    }
    free(pending);
    struct stat st;
    if (at.fd >= 0 && fstat(at.fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        *fd_out = at.fd;
        at.fd = -1;
    }
    arena_t a = ARENA_INIT;
    const char *norm = path_normalize(at.cur, &a); /* the lexical rest of a missing path */
    char *res = xstrdup(norm ? norm : at.cur);
    arena_free(&a);
    pos_set(&at, NULL, -1);
    return res;
}
