/* wsguard.c — the workspace guard of `drun-policy run` (see wsguard.h). */
#include "wsguard.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "path.h"

/* path with symlinks resolved, for a path that may not exist yet: the
 * realpath of its longest existing ancestor, then the rest as written.
 * NULL when path is not absolute or not even "/" resolves. */
static char *canonical(const char *path)
{
    if (!path || path[0] != '/') return NULL;
    char real[PATH_MAX];
    if (realpath(path, real)) return xstrdup(real);
    const char *slash = strrchr(path, '/');
    if (errno != ENOENT || !slash[1]) return NULL;
    char *parent = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
    char *up = canonical(parent);
    free(parent);
    if (!up) return NULL;
    char *r = xasprintf("%s%s", strcmp(up, "/") == 0 ? "" : up, slash);
    free(up);
    return r;
}

char *wsguard_reason(const char *ws, const char *home, const char *state)
{
    if (strcmp(ws, "/") == 0) return xstrdup("the root directory");
    char *h = canonical(home), *s = canonical(state), *why = NULL;
    if (h && strcmp(ws, h) == 0) why = xasprintf("your home directory");
    else if (h && path_is_under(h, ws)) why = xasprintf("an ancestor of your home directory %s", h);
    else if (s && strcmp(ws, s) == 0) why = xasprintf("drun's state dir");
    else if (s && path_is_under(s, ws)) why = xasprintf("an ancestor of drun's state dir %s", s);
    free(h);
    free(s);
    return why;
}
