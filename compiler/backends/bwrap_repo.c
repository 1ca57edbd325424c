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

/* The content of dir/name, a regular file opened without following a
 * symlink, trimmed of surrounding white space; NULL when it is missing, not
 * a regular file, empty, too long or unreadable. */
static char *read_pointer(const char *dir, const char *name)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return NULL;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
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

char *bwrap_repo_pointer(const char *dir, bool gitfile)
{
    char *text = read_pointer(dir, gitfile ? ".git" : "commondir");
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

char *bwrap_repo_resolve(const char *base, const char *target, bwrap_writable_fn writable, void *ctx, char **err)
{
    /* pending: what is left to walk, from cur (a real path, no link in it) */
    char *pending = target[0] == '/' ? xstrdup(target) : xasprintf("%s/%s", base, target);
    char *cur = xstrdup("/");
    unsigned links = 0;
    const char *s = pending;
    for (;;) {
        while (*s == '/') s++;
        if (!*s) break;
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 1 && s[0] == '.') {
            s += len;
            continue;
        }
        if (len == 2 && s[0] == '.' && s[1] == '.') {
            to_parent(cur);
            s += len;
            continue;
        }
        char *next = xasprintf("%s%s%.*s", cur, strcmp(cur, "/") == 0 ? "" : "/", (int)len, s);
        struct stat st;
        bool missing = lstat(next, &st) != 0;
        if (missing || !S_ISLNK(st.st_mode)) {
            free(cur);
            cur = next;
            s += len;
            if (missing) { /* nothing below exists: the rest is lexical */
                char *rest = xasprintf("%s%s", cur, s);
                free(cur);
                cur = rest;
                break;
            }
            continue;
        }
        /* A link the sandbox could replace (its directory is writable):
         * a cap planned at today's target would not hold. Fail closed. */
        if (writable(ctx, cur) || ++links > REPO_MAX_LINKS) {
            *err = links > REPO_MAX_LINKS
                       ? xasprintf("'%s' (named by a git commondir or gitfile) has too many symbolic links", target)
                       : xasprintf("'%s' is a symbolic link in a writable directory on the way to '%s', which a git "
                                   "commondir or gitfile names: its config and hooks cannot be protected; remove the link",
                                   next, target);
            free(next);
            free(cur);
            free(pending);
            return NULL;
        }
        char lk[PATH_MAX];
        ssize_t n = readlink(next, lk, sizeof lk - 1);
        free(next);
        if (n <= 0) { /* gone or unreadable: nothing to follow */
            free(pending);
            return cur;
        }
        lk[n] = '\0';
        char *np = xasprintf("%s%s", lk, s + len);
        if (lk[0] == '/') {
            free(cur);
            cur = xstrdup("/");
        }
        free(pending);
        pending = np;
        s = pending;
    }
    free(pending);
    char *out = xstrdup(cur);
    free(cur);
    arena_t a = ARENA_INIT;
    const char *norm = path_normalize(out, &a); /* the lexical rest of a missing path */
    char *res = xstrdup(norm ? norm : out);
    arena_free(&a);
    free(out);
    return res;
}
