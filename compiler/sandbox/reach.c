/* reach.c — a root caller's sandbox runs as the sandbox user, and bwrap,
 * running as that user too, resolves every bind source and every mount
 * point by path: a grant of a path that user cannot reach (root's home, a
 * 0700 directory on the way), or a block below one, would stop the whole
 * run. Such an op is left out instead, with what was planned on a bind left
 * out (a later --remount-ro of the same place or below). The sandbox user,
 * without capabilities, could not have reached anything there through the
 * host's directories anyway: leaving the op out takes nothing away that DAC
 * would have given, and hides nothing DAC would have shown.
 */
#include "sbx_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sbx_opt_nargs(const char *opt)
{
    static const char *const zero[] = {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                                       "--new-session", "--clearenv", "--as-pid-1", "--unshare-net"};
    static const char *const one[] = {"--cap-drop", "--uid", "--gid", "--hostname", "--dev", "--proc", "--tmpfs",
                                      "--remount-ro", "--chdir", "--unsetenv", "--perms", "--seccomp",
                                      "--json-status-fd", "--sync-fd", "--size", "--dir"};
    static const char *const two[] = {"--setenv", "--bind", "--bind-try", "--ro-bind", "--ro-bind-try", "--symlink",
                                      "--ro-bind-data", "--bind-data", "--dev-bind", "--dev-bind-try", "--bind-fd",
                                      "--ro-bind-fd", "--file", "--chmod"};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
        if (strcmp(opt, zero[i]) == 0) return 0;
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        if (strcmp(opt, one[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof two / sizeof *two; i++)
        if (strcmp(opt, two[i]) == 0) return 2;
    return -1;
}

static bool path_bind(const char *opt)
{
    return !strcmp(opt, "--bind") || !strcmp(opt, "--bind-try") || !strcmp(opt, "--ro-bind") ||
           !strcmp(opt, "--ro-bind-try") || !strcmp(opt, "--dev-bind") || !strcmp(opt, "--dev-bind-try");
}

/* May uid:gid (no supplementary groups) search dir st? */
static bool can_search(const struct stat *st, uid_t uid, gid_t gid)
{
    if (st->st_uid == uid) return st->st_mode & S_IXUSR;
    if (st->st_gid == gid) return st->st_mode & S_IXGRP;
    return st->st_mode & S_IXOTH;
}

/* Can uid:gid resolve path (search every directory above it)? A path that
 * does not exist counts as reachable: bwrap's -try decides about it. */
static bool reachable(const char *path, uid_t uid, gid_t gid)
{
    if (strncmp(path, "/proc/self/fd/", 14) == 0) return true; /* our own fds */
    char *p = xstrdup(path);
    bool ok = true;
    for (char *s = strchr(p + 1, '/'); ok && s; s = strchr(s + 1, '/')) {
        *s = '\0';
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) ok = can_search(&st, uid, gid);
        *s = '/';
    }
    free(p);
    return ok;
}

static bool under_any(const char *path, const strvec_t *dests)
{
    for (size_t i = 0; i < dests->n; i++) {
        size_t n = strlen(dests->v[i]);
        if (strncmp(path, dests->v[i], n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 1)) return true;
    }
    return false;
}

void sbx_drop_unreachable(strvec_t *v, size_t from, uid_t uid, gid_t gid)
{
    /* first pass: is the whole vector understood? */
    for (size_t i = from; i < v->n;) {
        int n = sbx_opt_nargs(v->v[i]);
        if (n < 0 || i + (size_t)n >= v->n) return;
        i += (size_t)n + 1;
    }
    strvec_t gone = {0}; /* dests left out (borrowed) */
    size_t w = from;
    for (size_t i = from; i < v->n;) {
        const char *opt = v->v[i];
        size_t n = (size_t)sbx_opt_nargs(opt);
        bool bind = path_bind(opt); /* opt is freed below */
        bool at_dest = !strcmp(opt, "--tmpfs") || !strcmp(opt, "--remount-ro") || !strcmp(opt, "--dir");
        const char *dest = bind ? v->v[i + 2] : (at_dest ? v->v[i + 1] : NULL);
        bool drop = (bind && !reachable(v->v[i + 1], uid, gid)) || (dest && !reachable(dest, uid, gid)) ||
                    (!strcmp(opt, "--remount-ro") && under_any(v->v[i + 1], &gone));
        if (drop && bind) vec_push(&gone, v->v[i + 2]);
        for (size_t k = 0; k <= n; k++) {
            if (drop && !(bind && k == 2)) free(v->v[i + k]);
            else if (!drop) v->v[w++] = v->v[i + k];
        }
        i += n + 1;
    }
    for (size_t i = 0; i < gone.n; i++) free(gone.v[i]);
    vec_free(&gone);
    v->n = w;
}
