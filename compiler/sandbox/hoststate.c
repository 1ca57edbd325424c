/* hoststate.c — what the runner keeps on the host, touched by fd only.
 *
 * A sandbox may write wherever its policy grants, and a grant of ~ covers
 * the state dir: it could rename it away and build another in its place,
 * with symlinks where the runner expects files. So the state dir is opened
 * once per process, one component at a time without following a symlink
 * below the trusted start ($XDG_STATE_HOME or $HOME, as given), its owner
 * and mode checked, and everything later is *at() relative to kept fds,
 * openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS for names. Nothing found there
 * is taken as a path to act on: the workspace lists of placeholders left
 * for the last run hold names relative to the workspace, used only beneath
 * its fd (placeholders.c).
 *
 * Layout (docs/artifacts.md): STATE/locks/<dev>-<ino> (a shared flock per
 * workspace), STATE/locks/<dev>-<ino>.pending, STATE/empty (0444, empty),
 * STATE/run/scratch (run's scratch mount point). A root caller's empty file
 * is /run/drun/empty instead: its sandbox runs as another uid, which must be
 * able to reach the file bwrap binds, and root's home is closed to it.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"

static pthread_mutex_t hs_mu = PTHREAD_MUTEX_INITIALIZER;
static int state_fd = -1, locks_fd = -1;

/* openat2 beneath dirfd, no symlink anywhere on the way. */
static int open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
        .mode = mode,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    int fd;
    do fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* Opens (making it when missing) one directory name below parent, never
 * through a symlink. */
static int step_dir(int parent, const char *name, mode_t mode)
{
    if (mkdirat(parent, name, mode) != 0 && errno != EEXIST) return -1;
    return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Walks rel ("a/b/c") below parent with step_dir; the last fd, or -1. */
static int walk_dirs(int parent, const char *rel, mode_t mode)
{
    char *copy = xstrdup(rel), *save = NULL;
    int fd = dup(parent);
    for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
        int next = strcmp(c, "..") == 0 ? (errno = EPERM, -1) : step_dir(fd, c, mode);
        int saved = errno;
        close(fd);
        fd = next;
        errno = saved;
    }
    free(copy);
    return fd;
}

/* Ours (owner want) and nobody else may write it: else a refusal in *err. */
static bool check_owned(int fd, const char *what, uid_t want, char **err)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *err = xasprintf("%s: %s", what, strerror(errno));
        return false;
    }
    if (st.st_uid != want || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        *err = xasprintf("%s belongs to uid %u with mode %04o: it must be uid %u's and writable by no one "
                         "else (a sandbox with a write grant there may have replaced it); move it away",
                         what, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)want);
        return false;
    }
    return true;
}

static int open_state_locked(char **err)
{
    if (state_fd >= 0) return state_fd;
    const char *trusted, *below;
    fsutil_state_base(&trusted, &below);
    /* a root caller's sandbox user must reach run/scratch (its mount
     * point) by name: search, not list */
    mode_t mode = hoststate_ident()->drop ? 0711 : 0700;
    int top = open(trusted, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* trusted as given */
    int fd = top >= 0 ? walk_dirs(top, below, mode) : -1;
    int saved = errno;
    if (top >= 0) close(top);
    char *path = fsutil_state_path("");
    if (fd < 0) {
        *err = xasprintf("state dir %s: %s", path, strerror(saved));
    } else if (!check_owned(fd, path, geteuid(), err) || (mode == 0711 && fchmod(fd, 0711) != 0)) {
        if (!*err) *err = xasprintf("state dir %s: %s", path, strerror(errno));
        close(fd);
        fd = -1;
    }
    free(path);
    return state_fd = fd;
}

int hoststate_state_dir(char **err)
{
    pthread_mutex_lock(&hs_mu);
    int fd = open_state_locked(err);
    pthread_mutex_unlock(&hs_mu);
    return fd;
}

int hoststate_subdir(const char *rel, char **err)
{
    int sfd = hoststate_state_dir(err);
    if (sfd < 0) return -1;
    int fd = walk_dirs(sfd, rel, hoststate_ident()->drop ? 0711 : 0700);
    if (fd < 0) *err = xasprintf("state dir: %s: %s", rel, strerror(errno));
    return fd;
}

char *sandbox_run_scratch(char **err)
{
    int fd = hoststate_subdir("run/scratch", err);
    if (fd < 0) return NULL;
    close(fd);
    return fsutil_state_path("run/scratch");
}

/* ---- the empty file ------------------------------------------------------------------------------------------ */

static bool empty_ok(int fd, uid_t owner)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 && st.st_uid == owner &&
           (st.st_mode & 07777) == 0444 && st.st_nlink == 1;
}

/* dir/empty, checked, or made again beside and renamed over. */
static int empty_in(int dirfd, uid_t owner, char **err)
{
    int fd = open_beneath(dirfd, "empty", O_RDONLY, 0);
    if (fd >= 0 && empty_ok(fd, owner)) return fd;
    if (fd >= 0) close(fd);
    /* a random temp name: one made of a pid could be another namespace's */
    char rnd[17], tmp[64];
    int w = -1;
    if (fsutil_random_hex(rnd, 8)) {
        snprintf(tmp, sizeof tmp, ".empty.%s", rnd);
        w = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    }
    bool ok = w >= 0 && fchmod(w, 0444) == 0;
    if (w >= 0 && close(w) != 0) ok = false;
    /* not over one another thread has just made (its run holds that inode:
     * bwrap cannot bind a file no longer linked); over a wrong one, yes */
    if (ok && renameat2(dirfd, tmp, dirfd, "empty", RENAME_NOREPLACE) != 0) {
        fd = errno == EEXIST ? open_beneath(dirfd, "empty", O_RDONLY, 0) : -1;
        if (fd >= 0 && empty_ok(fd, owner)) {
            unlinkat(dirfd, tmp, 0);
            return fd;
        }
        if (fd >= 0) close(fd);
        ok = renameat(dirfd, tmp, dirfd, "empty") == 0;
    }
    int saved = errno;
    if (w >= 0) unlinkat(dirfd, tmp, 0);
    fd = ok ? open_beneath(dirfd, "empty", O_RDONLY, 0) : -1;
    if (fd >= 0 && empty_ok(fd, owner)) return fd;
    if (fd >= 0) close(fd);
    *err = xasprintf("cannot make the runner's empty file: %s", strerror(ok ? EEXIST : saved));
    return -1;
}

int hoststate_empty_fd(char **err)
{
    if (!hoststate_ident()->drop) {
        int sfd = hoststate_state_dir(err);
        return sfd < 0 ? -1 : empty_in(sfd, geteuid(), err);
    }
    /* root: /run/drun (root's, 0711): the sandbox uid can reach the file
     * by name, as bwrap needs, and change nothing there */
    int run = open("/run", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int dir = run >= 0 ? step_dir(run, "drun", 0711) : -1;
    if (run >= 0) close(run);
    if (dir < 0) {
        *err = xasprintf("/run/drun: %s", strerror(errno));
        return -1;
    }
    int fd = check_owned(dir, "/run/drun", 0, err) && fchmod(dir, 0711) == 0 ? empty_in(dir, 0, err) : -1;
    close(dir);
    return fd;
}

/* ---- the workspace ------------------------------------------------------------------------------------------- */

int hoststate_open_dir(const char *what, const char *path, int kept_fd, char **err)
{
    int fd = kept_fd > 0 ? fcntl(kept_fd, F_DUPFD_CLOEXEC, 3)
             : path      ? open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                         : -1;
    if (fd < 0) *err = xasprintf("%s '%s': %s", what, path ? path : "(none)", path ? strerror(errno) : "missing");
    return fd;
}

bool hoststate_same_dir(const char *path, int fd)
{
    struct stat a, b;
    return path && stat(path, &a) == 0 && fstat(fd, &b) == 0 && S_ISDIR(a.st_mode) && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

static int locks_dir(void)
{
    pthread_mutex_lock(&hs_mu);
    char *err = NULL;
    if (locks_fd < 0 && open_state_locked(&err) >= 0) locks_fd = walk_dirs(state_fd, "locks", 0700);
    int fd = locks_fd;
    pthread_mutex_unlock(&hs_mu);
    free(err);
    return fd;
}

int hoststate_workspace_lock(int ws_fd, char **pending)
{
    *pending = NULL;
    struct stat st;
    int dir = locks_dir();
    if (dir < 0 || fstat(ws_fd, &st) != 0) return -1;
    char name[64];
    snprintf(name, sizeof name, "%llx-%llx", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    int fd = open_beneath(dir, name, O_RDWR | O_CREAT, 0600);
    if (fd >= 0 && flock(fd, LOCK_SH) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0) *pending = xasprintf("%s.pending", name);
    return fd;
}

/* A name relative to the workspace, without "..": what a pending list may hold. */
static bool relative_inside(const char *rel)
{
    if (!*rel || *rel == '/') return false;
    for (const char *c = rel; c; c = strchr(c, '/')) {
        if (*c == '/') c++;
        if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0')) return false;
    }
    return true;
}

void hoststate_pending_take(const char *pending, strvec_t *out)
{
    int dir = locks_dir();
    int fd = dir >= 0 && pending ? open_beneath(dir, pending, O_RDONLY, 0) : -1;
    if (fd < 0) return;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return;
    }
    char line[PATH_MAX + 2];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (relative_inside(line)) vec_push(out, xstrdup(line));
    }
    fclose(f);
    unlinkat(dir, pending, 0);
}

void hoststate_pending_add(const char *pending, char *const *rel, size_t n)
{
    int dir = locks_dir();
    int fd = dir >= 0 && pending && n ? open_beneath(dir, pending, O_WRONLY | O_CREAT | O_APPEND, 0600) : -1;
    if (fd < 0) return;
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < n; i++)
        if (relative_inside(rel[i]) && !strchr(rel[i], '\n')) buf_printf(&b, "%s\n", rel[i]);
    size_t off = 0;
    while (off < b.len) {
        ssize_t w = write(fd, b.p + off, b.len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    buf_free(&b);
    close(fd);
}

/* ---- the sandbox user ---------------------------------------------------------------------------------------- */

static pthread_mutex_t id_mu = PTHREAD_MUTEX_INITIALIZER;
static sbx_ident_t ident;
static bool ident_set;

/* name's uid and gid from /etc/passwd, read here: drun-policy links
 * statically, without the NSS getpwnam needs. */
static bool passwd_lookup(const char *name, uid_t *uid, gid_t *gid)
{
    FILE *f = fopen("/etc/passwd", "re");
    if (!f) return false;
    char line[1024];
    bool found = false;
    size_t n = strlen(name);
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long u, g;
        if (strncmp(line, name, n) == 0 && line[n] == ':' &&
            sscanf(line + n, ":%*[^:]:%lu:%lu:", &u, &g) == 2) {
            *uid = (uid_t)u;
            *gid = (gid_t)g;
            found = true;
        }
    }
    fclose(f);
    return found;
}

static bool parse_id(const char *s, unsigned long *v)
{
    char *end;
    errno = 0;
    *v = strtoul(s, &end, 10);
    return *s >= '0' && *s <= '9' && !errno && *v < 0xffffffffUL && (*end == '\0' || *end == ':');
}

bool sandbox_use_user(const char *spec, char **err)
{
    sbx_ident_t id = {geteuid() == 0, 65534, 65534};
    unsigned long u, g;
    if (!spec) {
        passwd_lookup("drun-sandbox", &id.uid, &id.gid);
    } else if (parse_id(spec, &u)) {
        const char *colon = strchr(spec, ':');
        if (colon && !parse_id(colon + 1, &g)) {
            *err = xasprintf("--sandbox-user %s: the group must be a number", spec);
            return false;
        }
        id.uid = (uid_t)u;
        id.gid = (gid_t)(colon ? g : u);
    } else if (!passwd_lookup(spec, &id.uid, &id.gid)) {
        *err = xasprintf("--sandbox-user %s: no such user in /etc/passwd (a name, UID or UID:GID)", spec);
        return false;
    }
    if (id.uid == 0 || id.gid == 0) {
        *err = xasprintf("--sandbox-user %s: the sandbox must not run as root (uid or gid 0)", spec ? spec : "");
        return false;
    }
    pthread_mutex_lock(&id_mu);
    ident = id;
    ident_set = true;
    pthread_mutex_unlock(&id_mu);
    return true;
}

const sbx_ident_t *hoststate_ident(void)
{
    pthread_mutex_lock(&id_mu);
    bool set = ident_set;
    pthread_mutex_unlock(&id_mu);
    if (!set) {
        char *err = NULL;
        sandbox_use_user(NULL, &err); /* the default cannot fail */
        free(err);
    }
    return &ident;
}

void sandbox_user(uid_t *uid, gid_t *gid)
{
    const sbx_ident_t *id = hoststate_ident();
    *uid = id->drop ? id->uid : geteuid();
    *gid = id->drop ? id->gid : getegid();
}

bool sandbox_user_can_write(int fd)
{
    uid_t uid;
    gid_t gid;
    sandbox_user(&uid, &gid);
    struct stat st;
    if (fstat(fd, &st) != 0) return false;
    if (st.st_uid == uid) return (st.st_mode & S_IWUSR) != 0;
    if (st.st_gid == gid) return (st.st_mode & S_IWGRP) != 0;
    return (st.st_mode & S_IWOTH) != 0;
}
