/* fsutil.c — the files and directories the tools make for themselves
 * (fsutil.h). */
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

/* One mkdir per component, parent first. EEXIST is only success when what
 * exists is a directory (or a link to one: the caller resolves or checks
 * ownership where that matters, as drun-mcp does for its state dir). A dir
 * that is already there costs one stat: every `run` asks for its state dirs. */
bool fsutil_mkdirs(const char *path, mode_t mode)
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

void fsutil_state_base(const char **trusted, const char **below)
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

char *fsutil_state_path(const char *sub)
{
    const char *trusted, *below;
    fsutil_state_base(&trusted, &below);
    return xasprintf("%s/%s%s%s", trusted, below, *sub ? "/" : "", sub);
}

bool fsutil_read_file(const char *path, buf_t *out, char **err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = xasprintf("%s: %s", path, strerror(errno));
        return false;
    }
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(out, chunk, n);
    bool bad = ferror(f);
    fclose(f);
    if (bad) *err = xasprintf("%s: read error", path);
    return !bad;
}

bool fsutil_write_atomic(const char *path, const void *data, size_t len, char **err)
{
    char *tmp = xasprintf("%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *err = xasprintf("%s: cannot create a temporary file: %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    const char *p = data;
    size_t left = len;
    bool ok = true;
    while (left && ok) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ok = false;
        else p += w, left -= (size_t)w;
    }
    ok = ok && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        *err = xasprintf("%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}

bool fsutil_write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

bool fsutil_random_hex(char *out, size_t n)
{
    unsigned char r[32];
    if (n > sizeof r) n = sizeof r;
    for (size_t got = 0; got < n;) {
        ssize_t k = getrandom(r + got, n - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return false;
        got += (size_t)k;
    }
    for (size_t i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", r[i]);
    out[2 * n] = '\0';
    return true;
}
