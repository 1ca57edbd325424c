/* placeholders.c — removing the mount points bwrap made on the host.
 *
 * bwrap blocks a protected path that does not exist yet by mounting on a
 * placeholder it creates where the workspace bind leads (an empty directory
 * or an empty file), and the run removes it afterwards. The names come from
 * the plan or from a workspace's pending list in the state dir, which a
 * sandbox may once have written: so each is resolved beneath the workspace
 * fd (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS on its parent) and only a
 * still-blank placeholder goes: an empty directory (rmdir refuses any
 * other), or an empty regular file with no other name. Nothing is kept for
 * another run: a placeholder reused elsewhere would carry whatever fd a
 * sandbox still holds on it into that run (the old pool did).
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The parent directory of rel beneath dirfd, as an O_PATH fd; *base: the last name. */
static int parent_beneath(int dirfd, char *rel, const char **base)
{
    char *slash = strrchr(rel, '/');
    const char *parent = ".";
    if (slash) {
        *slash = '\0';
        parent = rel;
        *base = slash + 1;
    } else {
        *base = rel;
    }
    if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0) return -1;
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd;
    do fd = (int)syscall(SYS_openat2, dirfd, *parent ? parent : "/", &how, sizeof how);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* The parent of rel (relative to ws_fd; an absolute path, a block outside
 * the workspace under another grant, beneath / the same way), opened without
 * following any symlink. *copy (caller frees) holds *base, the last name. */
static int open_parent(int ws_fd, const char *rel, char **copy, const char **base)
{
    int root = -1;
    *copy = NULL;
    if (*rel == '/') {
        if ((root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) return -1;
        ws_fd = root;
        rel++;
    }
    *copy = xstrdup(rel);
    int fd = parent_beneath(ws_fd, *copy, base);
    if (root >= 0) close(root);
    return fd;
}

void placeholders_remove(int ws_fd, const char *rel)
{
    char *copy;
    const char *base;
    int pfd = open_parent(ws_fd, rel, &copy, &base);
    struct stat st;
    if (pfd >= 0 && fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) unlinkat(pfd, base, AT_REMOVEDIR); /* only when empty */
        else if (S_ISREG(st.st_mode) && st.st_size == 0 && st.st_nlink == 1) unlinkat(pfd, base, 0);
    }
    if (pfd >= 0) close(pfd);
    free(copy);
}

void placeholders_make(int ws_fd, const char *rel, bool dir)
{
    char *copy;
    const char *base;
    int pfd = open_parent(ws_fd, rel, &copy, &base);
    if (pfd >= 0 && dir) {
        mkdirat(pfd, base, 0755);
    } else if (pfd >= 0) {
        int f = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (f >= 0) close(f);
    }
    if (pfd >= 0) close(pfd);
    free(copy);
}

/* Longer paths first: a path is always longer than its ancestors. */
static int cmp_deepest_first(const void *a, const void *b)
{
    size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
    return x < y ? 1 : (x > y ? -1 : 0);
}

void placeholders_remove_all(int ws_fd, strvec_t *list)
{
    /* deepest first: a placeholder of one run may hold another's (.git,
     * then .git/hooks inside it) */
    if (list->n) qsort(list->v, list->n, sizeof *list->v, cmp_deepest_first); /* NULL when empty */
    for (size_t i = 0; i < list->n; i++) placeholders_remove(ws_fd, list->v[i]);
}
