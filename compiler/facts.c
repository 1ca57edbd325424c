/* facts.c — the host probe, the facts file (JSON), and path lookups.
 *
 * The probe is the only part of the compiler that reads the filesystem or
 * runs a program (bwrap --version); everything downstream asks facts_lookup.
 */
#include "facts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonr.h"
#include "jsonw.h"
#include "fsutil.h"
#include "path.h"

const char *facts_target_name(target_t t) { return t == TARGET_MACOS ? "macos" : "linux"; }

static const char *ptype_name(ptype_t t)
{
    switch (t) {
    case PT_DIR: return "dir";
    case PT_FILE: return "file";
    case PT_OTHER: return "other";
    case PT_MISSING: break;
    }
    return "missing";
}

static ptype_t ptype_parse(const char *s)
{
    if (!s) return PT_MISSING;
    if (strcmp(s, "dir") == 0) return PT_DIR;
    if (strcmp(s, "file") == 0) return PT_FILE;
    if (strcmp(s, "other") == 0) return PT_OTHER;
    return PT_MISSING;
}

static facts_t *facts_new(target_t t)
{
    facts_t *f = xcalloc(1, sizeof *f);
    f->target = t;
    f->arch = "x86_64";
    f->home = "/";
    f->bwrap_version = "";
    f->fs_layer = -1;
    f->origin = "facts JSON";
    return f;
}

void facts_free(facts_t *f)
{
    if (!f) return;
    vec_free(&f->path_dirs);
    vec_free(&f->system_read);
    vec_free(&f->root_links);
    vec_free(&f->firmlinks);
    vec_free(&f->paths);
    arena_free(&f->arena);
    free(f);
}

static int cmp_fact(const void *a, const void *b)
{
    return strcmp(((const path_fact_t *)a)->path, ((const path_fact_t *)b)->path);
}

/* The record of path among the first n (which are in order). */
static path_fact_t *find_in(const facts_t *f, size_t n, const char *path)
{
    if (!n) return NULL; /* bsearch() of an empty, NULL array is undefined */
    path_fact_t key = {path, PT_MISSING, NULL};
    return bsearch(&key, f->paths.v, n, sizeof key, cmp_fact);
}

static path_fact_t *find_exact(const facts_t *f, const char *path) { return find_in(f, f->paths.n, path); }

/* Where path lives when it lives below one of its ancestors: the nearest
 * ancestor real_of_anc knows (it gives that ancestor's realpath, in buf
 * or its own storage, or NULL), with the rest of path appended; path
 * itself when that ancestor is its own realpath. NULL when none is known. */
typedef const char *(*anc_real_fn)(const char *anc, const void *ctx, char buf[PATH_MAX]);
static const char *through_ancestor(const char *path, anc_real_fn real_of_anc, const void *ctx, arena_t *a)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);
    char *anc = arena_strndup(a, path, len);
    for (size_t i = len; i-- > 1;) {
        if (anc[i] != '/') continue;
        anc[i] = '\0';
        const char *real = real_of_anc(anc, ctx, buf);
        if (real) return strcmp(real, anc) == 0 ? path : path_join(real, path + i + 1, a);
    }
    return NULL;
}

/* Inserted in order (binary search, then one memmove): sorting the whole
 * list after each insert made probing a policy of 2,000 paths take seconds. */
void facts_set_path(facts_t *f, const char *path, ptype_t type, const char *realpath)
{
    size_t lo = 0, hi = f->paths.n;
    while (lo < hi) { /* first entry >= path */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(f->paths.v[mid].path, path) < 0) lo = mid + 1;
        else hi = mid;
    }
    const char *rp = arena_strdup(&f->arena, realpath ? realpath : path);
    if (lo < f->paths.n && strcmp(f->paths.v[lo].path, path) == 0) {
        f->paths.v[lo].type = type;
        f->paths.v[lo].realpath = rp;
        return;
    }
    vec_grow(&f->paths, 1);
    memmove(&f->paths.v[lo + 1], &f->paths.v[lo], (f->paths.n - lo) * sizeof *f->paths.v);
    f->paths.v[lo] = (path_fact_t){arena_strdup(&f->arena, path), type, rp};
    f->paths.n++;
}

/* Is some existing recorded path below dir? (Then dir exists: facts files
 * record rule paths, not every ancestor.) Entries below "dir/" sort together. */
static bool has_existing_below(const facts_t *f, const char *dir)
{
    size_t n = strlen(dir);
    size_t lo = 0, hi = f->paths.n;
    while (lo < hi) { /* first entry >= dir + "/" */
        size_t mid = (lo + hi) / 2;
        const char *p = f->paths.v[mid].path;
        int c = strncmp(p, dir, n);
        if (c < 0 || (c == 0 && p[n] < '/')) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < f->paths.n; i++) {
        const char *p = f->paths.v[i].path;
        if (strncmp(p, dir, n) != 0 || p[n] != '/') break;
        if (f->paths.v[i].type != PT_MISSING) return true;
    }
    return false;
}

static const char *recorded_real(const char *anc, const void *f, char buf[PATH_MAX])
{
    (void)buf;
    const path_fact_t *a = find_exact(f, anc);
    return a ? a->realpath : NULL;
}

path_fact_t facts_lookup(const facts_t *f, const char *path, arena_t *tmp)
{
    path_fact_t *e = find_exact(f, path);
    if (e) return *e;
    if (strcmp(path, "/") == 0 || has_existing_below(f, path)) return (path_fact_t){path, PT_DIR, path};
    /* Nearest recorded ancestor: a path below a symlinked directory lives
     * where the link points, so rewrite it through the ancestor's realpath. */
    const char *real = through_ancestor(path, recorded_real, f, tmp);
    return (path_fact_t){path, PT_MISSING, real ? real : path};
}

/* ---- the probe ---------------------------------------------------------------------------- */

static ptype_t stat_type(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return PT_MISSING;
    if (S_ISDIR(st.st_mode)) return PT_DIR;
    if (S_ISREG(st.st_mode)) return PT_FILE;
    return PT_OTHER;
}

/* ---- a batch of probes -------------------------------------------------------------------- */

/* Probing is done in batches. A batch appends its records, unsorted, and
 * sorts the list once at the end: a write grant brings its caps' paths (about
 * 40), so a policy of 1,500 write grants probes 57,000 paths, and inserting
 * each in order moved gigabytes. `added` finds what this batch already
 * recorded. `missing` remembers the realpath of each path found missing:
 * below it everything is missing too, and resolves through it without a
 * syscall (the caps of grants on missing dirs cost one probe per grant, not
 * several realpath() walks per cap). */
typedef struct probe {
    facts_t *f;
    size_t sorted;           /* f->paths.v[0, sorted) is in order */
    strmap_t added;          /* path -> 1, for records this batch appended */
    strmap_t missing;        /* missing path -> index into reals */
    VEC(const char *) reals; /* the realpath of each missing path */
} probe_t;

static probe_t probe_begin(facts_t *f) { return (probe_t){.f = f, .sorted = f->paths.n}; }

static void probe_end(probe_t *pr)
{
    facts_t *f = pr->f;
    if (f->paths.n > pr->sorted) qsort(f->paths.v, f->paths.n, sizeof *f->paths.v, cmp_fact);
    strmap_free(&pr->added);
    strmap_free(&pr->missing);
    vec_free(&pr->reals);
}

static bool probe_known(const probe_t *pr, const char *path)
{
    return strmap_get(&pr->added, path) >= 0 || find_in(pr->f, pr->sorted, path);
}

/* Appends a record the batch has not seen (no duplicate: the sort keeps none). */
static void probe_add(probe_t *pr, const char *path, ptype_t type, const char *real)
{
    facts_t *f = pr->f;
    path_fact_t e = {arena_strdup(&f->arena, path), type, real};
    vec_push(&f->paths, e);
    strmap_put(&pr->added, e.path, 1);
    if (type == PT_MISSING) {
        strmap_put(&pr->missing, e.path, (long)pr->reals.n);
        vec_push(&pr->reals, real);
    }
}

static const char *missing_real(const char *anc, const void *pr, char buf[PATH_MAX])
{
    (void)buf;
    const probe_t *p = pr;
    long k = strmap_get(&p->missing, anc);
    return k >= 0 ? p->reals.v[k] : NULL;
}

/* The realpath of path when one of its ancestors is known missing (so is
 * path then): that ancestor's realpath with the rest appended. NULL if none. */
static const char *below_missing(const probe_t *pr, const char *path, arena_t *a)
{
    return pr->missing.n ? through_ancestor(path, missing_real, pr, a) : NULL;
}

static const char *host_real(const char *anc, const void *ctx, char buf[PATH_MAX])
{
    (void)ctx;
    return realpath(anc, buf);
}

/* realpath() of a path that may not exist: the deepest existing ancestor
 * resolved, then the missing rest appended as written. */
static const char *real_of(const char *path, arena_t *a)
{
    char buf[PATH_MAX];
    if (realpath(path, buf)) return arena_strdup(a, buf);
    const char *real = through_ancestor(path, host_real, NULL, a);
    return real ? real : arena_strdup(a, path);
}

/* The type and realpath of an existing path in four syscalls whatever its
 * depth: open it O_PATH, fstat, and ask /proc for the name of what was
 * opened. realpath() reads the link of every component, one syscall each,
 * and this runs for every system dir, $PATH entry and rule path of every
 * `run`. NULL when the path cannot be opened (missing, or not reachable). */
static const char *open_real(const char *path, ptype_t *type, arena_t *a)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    const char *real = NULL;
    if (fstat(fd, &st) == 0) {
        *type = S_ISDIR(st.st_mode)   ? PT_DIR
                : S_ISREG(st.st_mode) ? PT_FILE
                                      : PT_OTHER;
        char link[32], buf[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, buf, sizeof buf - 1);
        if (n > 0 && (size_t)n < sizeof buf - 1 && buf[0] == '/') {
            buf[n] = '\0';
            real = arena_strdup(a, buf);
        } else if (realpath(path, buf)) { /* no /proc */
            real = arena_strdup(a, buf);
        }
    }
    close(fd);
    return real;
}

/* Records a path and, when a symlink leads elsewhere, its realpath too:
 * the compile looks paths up by the object they name. */
static void probe_path(probe_t *pr, const char *path)
{
    arena_t *a = &pr->f->arena;
    const char *norm = path_normalize(path, a);
    if (!norm || probe_known(pr, norm)) return;
    ptype_t t = PT_MISSING;
    const char *real = below_missing(pr, norm, a);
    if (!real) real = open_real(norm, &t, a);
    if (!real) {
        t = stat_type(norm);
        real = real_of(norm, a);
    }
    probe_add(pr, norm, t, real);
    if (strcmp(real, norm) != 0 && !probe_known(pr, real)) probe_add(pr, real, t, real);
}

void facts_probe_paths(facts_t *f, const char *const *paths)
{
    probe_t pr = probe_begin(f);
    for (; paths && *paths; paths++) probe_path(&pr, *paths);
    probe_end(&pr);
}

/* Starts bin with one argument, its stdout (and its stderr too when
 * with_err, else /dev/null) on a pipe: returns a stream on the pipe's read
 * end and the child's pid, or NULL. Started directly rather than by popen's
 * shell: the same binary (bin, the one the cache is keyed by, where popen
 * looked "bwrap" up again in $PATH), two process starts fewer per probe. */
static FILE *spawn_read(const char *bin, const char *arg, bool with_err, pid_t *pid)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return NULL;
    posix_spawn_file_actions_t fa;
    bool ok = posix_spawn_file_actions_init(&fa) == 0;
    if (ok) {
        ok = posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO) == 0 &&
             (with_err ? posix_spawn_file_actions_adddup2(&fa, p[1], STDERR_FILENO)
                       : posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0)) == 0;
        char *argv[] = {"bwrap", (char *)arg, NULL};
        extern char **environ;
        ok = ok && posix_spawn(pid, bin, &fa, NULL, argv, environ) == 0;
        posix_spawn_file_actions_destroy(&fa);
    }
    close(p[1]);
    FILE *f = ok ? fdopen(p[0], "r") : NULL;
    if (!f) {
        close(p[0]);
        if (ok) waitpid(*pid, NULL, 0); /* EOF on its stdout: it ends */
    }
    return f;
}

/* Reads the rest of the child's output (it never blocks on a full pipe)
 * and waits for it. */
static void spawn_close(FILE *f, pid_t pid)
{
    char drain[256];
    while (fgets(drain, sizeof drain, f)) {}
    fclose(f);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* Runs bwrap --version / --help to learn what this host's bwrap supports. */
static void probe_bwrap_run(facts_t *f, const char *bin)
{
    pid_t pid;
    FILE *p = spawn_read(bin, "--version", false, &pid);
    if (!p) return;
    char line[256] = "";
    if (fgets(line, sizeof line, p)) {
        char *v = strrchr(line, ' ');
        v = v ? v + 1 : line;
        v[strcspn(v, "\r\n")] = '\0';
        f->bwrap_version = arena_strdup(&f->arena, v);
    }
    spawn_close(p, pid);
    if (!*f->bwrap_version) return;
    /* What bwrap supports comes from --help: when it cannot be read, the
     * version alone would let the compile drop --disable-userns silently, so
     * the version is forgotten and the compile refuses (fail closed). */
    p = spawn_read(bin, "--help", true, &pid);
    bool answered = false;
    while (p && fgets(line, sizeof line, p)) {
        answered = true;
        if (strstr(line, "--disable-userns")) f->bwrap_disable_userns = true;
    }
    if (p) spawn_close(p, pid);
    if (!answered) f->bwrap_version = "";
}

/* The bwrap probe costs two process starts, which `run` must not pay every
 * time: its answer is cached under $XDG_CACHE_HOME/drun, keyed by the bwrap
 * binary's inode, size and mtime, so an upgrade is noticed. */
static void probe_bwrap(facts_t *f)
{
    char *bin = NULL;
    const char *path = getenv("PATH");
    char *copy = xstrdup(path && *path ? path : "/usr/bin:/bin"), *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !bin; d = strtok_r(NULL, ":", &save)) {
        char *c = xasprintf("%s/bwrap", d);
        if (access(c, X_OK) == 0) bin = c;
        else free(c);
    }
    free(copy);
    struct stat st;
    if (!bin || stat(bin, &st) != 0) {
        free(bin);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *dir = xdg && *xdg == '/'     ? xasprintf("%s/drun", xdg)
                : home && *home == '/' ? xasprintf("%s/.cache/drun", home)
                                       : NULL;
    char *cache = dir ? xasprintf("%s/bwrap-probe", dir) : NULL;
    char *key = xasprintf("%s %llu %lld %lld", bin, (unsigned long long)st.st_ino, (long long)st.st_size,
                          (long long)st.st_mtime);
    char line[1024];
    FILE *c = cache ? fopen(cache, "r") : NULL;
    bool hit = false;
    if (c) {
        char ver[64];
        int dis;
        if (fgets(line, sizeof line, c) && strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == '\n' &&
            fscanf(c, "%63s %d", ver, &dis) == 2) {
            f->bwrap_version = arena_strdup(&f->arena, ver);
            f->bwrap_disable_userns = dis != 0;
            hit = true;
        }
        fclose(c);
    }
    if (!hit) {
        probe_bwrap_run(f, bin);
        if (cache && *f->bwrap_version) {
            fsutil_mkdirs(dir, 0700); /* a failure shows at the write: no cache, no harm */
            /* through a temp name no other process has (a pid is not one:
             * two runs in two pid namespaces can have the same) */
            char *rec = xasprintf("%s\n%s %d\n", key, f->bwrap_version, f->bwrap_disable_userns ? 1 : 0), *e = NULL;
            if (!fsutil_write_atomic(cache, rec, strlen(rec), &e)) free(e); /* no cache, no harm */
            free(rec);
        }
    }
    free(key);
    free(cache);
    free(dir);
    free(bin);
}

bool facts_fs_layer_usable(const char **why)
{
    const char *off = getenv("DRUN_FS_LAYER");
    if (off && (strcmp(off, "off") == 0 || strcmp(off, "0") == 0)) {
        *why = "DRUN_FS_LAYER=off";
        return false;
    }
    const char *dev = getenv("DRUN_FUSE_DEV");
    if (!dev || !*dev) dev = "/dev/fuse";
    struct stat st;
    if (stat(dev, &st) != 0 || !S_ISCHR(st.st_mode)) {
        *why = "/dev/fuse does not exist";
        return false;
    }
    /* fusermount3 opens it with the user's rights too: a 0600 /dev/fuse
     * (some containers) is for root alone */
    int fd = open(dev, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        *why = "/dev/fuse cannot be opened by this user";
        return false;
    }
    close(fd);
    if (geteuid() != 0 && access("/usr/bin/fusermount3", X_OK) != 0 && access("/bin/fusermount3", X_OK) != 0) {
        *why = "fusermount3 is not installed (apt-get install fuse3)";
        return false;
    }
    return true;
}

static void probe_fs_layer(facts_t *f)
{
    const char *why = NULL;
    f->fs_layer = facts_fs_layer_usable(&why) ? 1 : 0;
    f->fs_layer_why = why;
}

static void probe_linux(facts_t *f)
{
    struct utsname u;
    if (uname(&u) == 0)
        f->arch = arena_strdup(&f->arena, strcmp(u.machine, "arm64") == 0 ? "aarch64" : u.machine);
    const char *home = getenv("HOME");
    const char *h = home ? path_normalize(home, &f->arena) : NULL;
    f->home = h ? h : "/";
    static const char *const sys[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                      "/etc", "/opt"};
    for (size_t i = 0; i < sizeof sys / sizeof *sys; i++) {
        struct stat st;
        if (lstat(sys[i], &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
            /* merged /usr: /bin -> usr/bin is recreated with --symlink, never bound */
            char t[PATH_MAX];
            ssize_t n = readlink(sys[i], t, sizeof t - 1);
            if (n <= 0) continue;
            t[n] = '\0';
            link_fact_t l = {sys[i], arena_strdup(&f->arena, t)};
            vec_push(&f->root_links, l);
        } else if (S_ISDIR(st.st_mode)) {
            vec_push(&f->system_read, sys[i]);
        }
    }
    const char *path = getenv("PATH");
    if (path) {
        char *copy = xstrdup(path), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            const char *n = path_normalize(d, &f->arena);
            if (!n || stat_type(n) != PT_DIR) continue;
            bool dup = false;
            for (size_t i = 0; i < f->path_dirs.n; i++) dup = dup || strcmp(f->path_dirs.v[i], n) == 0;
            if (!dup) vec_push(&f->path_dirs, n);
        }
        free(copy);
    }
    probe_bwrap(f);
    probe_fs_layer(f);
    probe_t pr = probe_begin(f);
    for (size_t i = 0; i < f->system_read.n; i++) probe_path(&pr, f->system_read.v[i]);
    for (size_t i = 0; i < f->path_dirs.n; i++) probe_path(&pr, f->path_dirs.v[i]);
    probe_path(&pr, f->home);
    probe_end(&pr);
}

facts_t *facts_macos_default(void)
{
    facts_t *f = facts_new(TARGET_MACOS);
    f->arch = "aarch64";
    f->home = "/Users/user";
    static const char *const sys[] = {"/Library", "/System", "/bin", "/opt", "/private/etc",
                                      "/private/var/db/timezone", "/sbin", "/usr"};
    for (size_t i = 0; i < sizeof sys / sizeof *sys; i++) {
        vec_push(&f->system_read, sys[i]);
        facts_set_path(f, sys[i], PT_DIR, sys[i]);
    }
    static const char *const pd[] = {"/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin",
                                     "/usr/sbin", "/sbin"};
    for (size_t i = 0; i < sizeof pd / sizeof *pd; i++) vec_push(&f->path_dirs, pd[i]);
    static const char *const fl[][2] = {{"/etc", "/private/etc"}, {"/tmp", "/private/tmp"}, {"/var", "/private/var"}};
    for (size_t i = 0; i < 3; i++) {
        link_fact_t l = {fl[i][0], fl[i][1]};
        vec_push(&f->firmlinks, l);
    }
    facts_set_path(f, f->home, PT_DIR, f->home);
    return f;
}

facts_t *facts_probe(target_t target, const char *const *paths_of)
{
#ifndef __APPLE__
    if (target == TARGET_MACOS) return facts_macos_default();
#endif
    facts_t *f = facts_new(target);
    f->origin = "this host's facts (probed)";
    probe_linux(f);
    facts_probe_paths(f, paths_of);
    return f;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void links_json(jw_t *j, const char *key, const link_fact_t *v, size_t n)
{
    jw_key(j, key);
    jw_obj(j);
    for (size_t i = 0; i < n; i++) {
        jw_key(j, v[i].link);
        jw_str(j, v[i].target);
    }
    jw_end(j);
}

static void strs_json(jw_t *j, const char *key, const char *const *v, size_t n)
{
    jw_key(j, key);
    jw_arr(j);
    for (size_t i = 0; i < n; i++) jw_str(j, v[i]);
    jw_end(j);
}

void facts_to_json(const facts_t *f, buf_t *out)
{
    jw_t j;
    jw_init(&j, out, true);
    jw_obj(&j);
    jw_key(&j, "format");
    jw_int(&j, 1);
    jw_key(&j, "target");
    jw_str(&j, facts_target_name(f->target));
    jw_key(&j, "arch");
    jw_str(&j, f->arch);
    jw_key(&j, "home");
    jw_str(&j, f->home);
    strs_json(&j, "path_dirs", f->path_dirs.v, f->path_dirs.n);
    strs_json(&j, "system_read", f->system_read.v, f->system_read.n);
    links_json(&j, "root_links", f->root_links.v, f->root_links.n);
    links_json(&j, "firmlinks", f->firmlinks.v, f->firmlinks.n);
    jw_key(&j, "bwrap");
    jw_obj(&j);
    jw_key(&j, "version");
    jw_str(&j, f->bwrap_version);
    jw_key(&j, "disable_userns");
    jw_bool(&j, f->bwrap_disable_userns);
    jw_end(&j);
    if (f->fs_layer >= 0) { /* recorded only when known: older facts files stay as they were */
        jw_key(&j, "fs_layer");
        jw_obj(&j);
        jw_key(&j, "usable");
        jw_bool(&j, f->fs_layer == 1);
        if (f->fs_layer == 0) {
            jw_key(&j, "why");
            jw_str(&j, f->fs_layer_why ? f->fs_layer_why : "");
        }
        jw_end(&j);
    }
    jw_key(&j, "paths");
    jw_obj(&j);
    for (size_t i = 0; i < f->paths.n; i++) {
        jw_key(&j, f->paths.v[i].path);
        jw_obj(&j);
        jw_key(&j, "type");
        jw_str(&j, ptype_name(f->paths.v[i].type));
        jw_key(&j, "realpath");
        jw_str(&j, f->paths.v[i].realpath);
        jw_end(&j);
    }
    jw_end(&j);
    jw_end(&j);
    buf_addc(out, '\n');
}

/* Every path in a facts file must be absolute and normalised: the compile
 * trusts them, so a malformed file is refused rather than half-used. */
static const char *abs_path(facts_t *f, const char *s, const char *what, char **err)
{
    if (!s) {
        *err = xasprintf("facts: %s must be a string", what);
        return NULL;
    }
    const char *n = path_normalize(s, &f->arena);
    if (!n || strcmp(n, s) != 0) {
        *err = xasprintf("facts: %s '%s' must be an absolute, normalised path", what, s);
        return NULL;
    }
    for (const char *p = n; *p; p++)
        if ((unsigned char)*p < 0x20) {
            *err = xasprintf("facts: %s holds a control character", what);
            return NULL;
        }
    return n;
}

static bool load_strs(facts_t *f, const json_t *root, const char *key, void *vec, char **err)
{
    VEC(const char *) *v = vec;
    const json_t *a = json_object_get(root, key);
    if (!a) return true;
    if (!json_is_array(a)) {
        *err = xasprintf("facts: '%s' must be an array", key);
        return false;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e) {
        const char *p = abs_path(f, json_string_value(e), key, err);
        if (!p) return false;
        vec_push(v, p);
    }
    return true;
}

static bool load_links(facts_t *f, const json_t *root, const char *key, void *vec, char **err)
{
    VEC(link_fact_t) *v = vec;
    json_t *o = json_object_get(root, key);
    if (!o) return true;
    if (!json_is_object(o)) {
        *err = xasprintf("facts: '%s' must be an object", key);
        return false;
    }
    const char *k;
    const json_t *e;
    json_object_foreach(o, k, e) {
        const char *to = json_string_value(e);
        if (!to || !*to || strchr(to, '\n') || k[0] != '/' || strchr(k + 1, '/')) {
            *err = xasprintf("facts: '%s' entries must map a top-level path to a string", key);
            return false;
        }
        link_fact_t l = {arena_strdup(&f->arena, k), arena_strdup(&f->arena, to)};
        vec_push(v, l);
    }
    return true;
}

facts_t *facts_from_json(const char *text, size_t len, char **err)
{
    json_error_t je;
    json_t *root = jsonr_load(text, len, &je);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        *err = root ? xstrdup("facts: not a JSON object (write the file with 'drun-policy facts > FILE')")
                    : xasprintf("facts: not valid JSON at line %d, column %d: %s (write the file with "
                                "'drun-policy facts > FILE')",
                                je.line, je.column, je.text);
        return NULL;
    }
    const char *t = json_string_value(json_object_get(root, "target"));
    target_t target = TARGET_LINUX;
    if (t && strcmp(t, "macos") == 0) target = TARGET_MACOS;
    else if (!t || strcmp(t, "linux") != 0) {
        json_decref(root);
        *err = xstrdup("facts: 'target' must be \"linux\" or \"macos\"");
        return NULL;
    }
    facts_t *f = facts_new(target);
    const char *v;
    if ((v = json_string_value(json_object_get(root, "arch")))) f->arch = arena_strdup(&f->arena, v);
    const char *home = abs_path(f, json_string_value(json_object_get(root, "home")), "home", err);
    if (!home) goto fail;
    f->home = home;
    if (!load_strs(f, root, "path_dirs", &f->path_dirs, err) ||
        !load_strs(f, root, "system_read", &f->system_read, err) ||
        !load_links(f, root, "root_links", &f->root_links, err) ||
        !load_links(f, root, "firmlinks", &f->firmlinks, err))
        goto fail;
    const json_t *bw = json_object_get(root, "bwrap");
    if (json_is_object(bw)) {
        if ((v = json_string_value(json_object_get(bw, "version")))) f->bwrap_version = arena_strdup(&f->arena, v);
        const json_t *du = json_object_get(bw, "disable_userns");
        f->bwrap_disable_userns = json_is_true(du);
        /* a version without the flag's answer says nothing of --disable-userns:
         * unknown, so the compile refuses rather than leave it out */
        if (!json_is_boolean(du)) f->bwrap_version = "";
    }
    const json_t *fl = json_object_get(root, "fs_layer");
    if (fl) {
        const json_t *u = json_object_get(fl, "usable");
        const char *why = json_string_value(json_object_get(fl, "why"));
        if (!json_is_object(fl) || !json_is_boolean(u) || (json_is_false(u) && (!why || !*why || strchr(why, '\n')))) {
            *err = xstrdup("facts: 'fs_layer' must be {\"usable\": true} or {\"usable\": false, \"why\": \"...\"}");
            goto fail;
        }
        f->fs_layer = json_is_true(u) ? 1 : 0;
        f->fs_layer_why = why && json_is_false(u) ? arena_strdup(&f->arena, why) : NULL;
    }
    json_t *paths = json_object_get(root, "paths");
    if (paths && !json_is_object(paths)) {
        *err = xstrdup("facts: 'paths' must be an object");
        goto fail;
    }
    const char *k;
    const json_t *e;
    json_object_foreach(paths, k, e) {
        const char *p = abs_path(f, k, "a 'paths' key", err);
        if (!p) goto fail;
        const json_t *rp = json_object_get(e, "realpath");
        const char *real = rp ? abs_path(f, json_string_value(rp), "realpath", err) : p;
        if (!real) goto fail;
        path_fact_t pf = {p, ptype_parse(json_string_value(json_object_get(e, "type"))), real};
        vec_push(&f->paths, pf);
    }
    if (f->paths.n) qsort(f->paths.v, f->paths.n, sizeof *f->paths.v, cmp_fact); /* NULL when empty */
    json_decref(root);
    return f;
fail:
    json_decref(root);
    facts_free(f);
    return NULL;
}

facts_t *facts_load(const char *file, char **err)
{
    FILE *fp = fopen(file, "rb");
    if (!fp) {
        *err = xasprintf("%s: cannot open: %s", file, strerror(errno));
        return NULL;
    }
    buf_t b = BUF_INIT;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) buf_add(&b, chunk, n);
    fclose(fp);
    char *e2 = NULL;
    facts_t *f = facts_from_json(buf_cstr(&b), b.len, &e2);
    buf_free(&b);
    if (!f) {
        *err = xasprintf("%s: %s", file, e2);
        free(e2);
    } else {
        f->origin = arena_strdup(&f->arena, file);
    }
    return f;
}
