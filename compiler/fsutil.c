/* fsutil.c — the directories the tools make for themselves (fsutil.h). */
#include "fsutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

/* One mkdir per component, parent first. EEXIST is only success when what
 * exists is a directory (or a link to one: the caller resolves or checks
 * ownership where that matters, as drun-mcp does for its state dir). A dir
 * that is already there costs one stat: every `run` asks for its state dirs. */
bool mkdirs(const char *path, mode_t mode)
{
    if (!*path) {
        errno = ENOENT;
        return false;
    }
    struct stat st0;
    if (stat(path, &st0) == 0 && S_ISDIR(st0.st_mode)) return true;
    char *p = xstrdup(path);
    bool ok = true;
    for (char *s = p + 1; ok; s++) {
        char c = *s;
        if (c != '/' && c != '\0') continue;
        *s = '\0';
        struct stat st;
        if (mkdir(p, mode) != 0 && !(errno == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode))) {
            if (errno == EEXIST) errno = ENOTDIR;
            ok = false;
        }
        *s = c;
        if (c == '\0') break;
    }
    int saved = errno;
    free(p);
    errno = saved;
    return ok;
}

void state_base(const char **trusted, const char **below)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') {
        *trusted = xdg;
        *below = "drun";
    } else if (geteuid() == 0) {
        /* A root runtime's sandbox user must reach the state dir by path
         * (bwrap resolves every bind source as that user), and /root is
         * closed to it: a system directory instead, made 0711. */
        *trusted = "/var/lib";
        *below = "drun";
    } else {
        *trusted = home && *home == '/' ? home : "/root";
        *below = ".local/state/drun";
    }
}

char *state_path(const char *sub)
{
    const char *trusted, *below;
    state_base(&trusted, &below);
    return xasprintf("%s/%s%s%s", trusted, below, *sub ? "/" : "", sub);
}
