/* fuse_serve.c — the access-time layer, the runner's side (SPEC §16):
 * which trees it serves, the daemon that serves them, the bwrap options
 * that put them in place of the trees, the daemon's death, and the record
 * of what it refused.
 *
 * Design.
 *  - Served trees: the topmost directories among the user's grants (the
 *    workspace, a session's scratch dir, allow_read, allow_write,
 *    mount_allowlist) that the policy shows. System dirs and $PATH dirs
 *    keep plain read-only binds: they carry no cap the sandbox could get
 *    round, and a bind is faster. run's scratch dir is a fresh tmpfs,
 *    gone with the sandbox: not served.
 *  - The daemon is a child of the runner, started before bwrap is given its
 *    options (drun-policy run, and drun-mcp, which shares this module), as
 *    a fresh run of this binary (fuse_exec.c: a child forked from a
 *    threaded runner could wait forever on a lock copied held). It
 *    keeps only its own fds (the trees' fds, /dev/fuse, the record), mounts
 *    one FUSE filesystem per tree at STATE/run/fuse/TOKEN.N (fuse_names.c; dark in
 *    every sandbox: the state dir is runtime-owned), says so on a pipe,
 *    drops to the sandbox's host user when the runner is root, starts a
 *    fixed pool of workers per tree and a watchdog, and only then says it
 *    is ready. It dies with the runner (PR_SET_PDEATHSIG). Each tree's root
 *    is opened with no symlink followed anywhere in its path.
 *  - The plan: the mount planner sees a view of the policy without the caps
 *    the layer enforces (every glob cap, and every literal cap inside a
 *    served tree), so it neither walks the trees nor places a block or a
 *    placeholder in them: start-up does not grow with the tree, and a
 *    fresh workspace holds nothing the command did not make. In the
 *    options, nothing is mounted strictly inside a served tree, and each
 *    tree is bound from its FUSE mount: in place of the tree's bind, or,
 *    for one bound by fd (the workspace), on top of it right after (the
 *    fd bind keeps bwrap's inode check and closes the fd; the raw
 *    directory under the FUSE bind cannot be reached: no mount calls in
 *    the sandbox).
 *  - Fail closed: if the daemon dies (or its watchdog ends it: a request
 *    stuck past the deadline), every access below a served tree fails
 *    (ENOTCONN: the kernel aborts the connection; the raw tree was never
 *    mounted there), a watcher thread kills bwrap, and the run ends saying
 *    so. If the layer cannot be used here (no /dev/fuse, no fusermount3
 *    when not root: facts_fs_layer_usable), the run falls back to the mount
 *    plan of before, says which caps then hold only where a mount could be
 *    placed, and goes on; DRUN_FS_LAYER=off asks for that fallback (the
 *    bench compares the two). If it can be used but does not start (a root
 *    now a symlink, threads, mounts, the start deadline), the run is
 *    refused.
 */
#define FUSE_USE_VERSION 312
#include "fslayer.h"

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuse_exec.h"
#include "fuse_names.h"
#include "path.h"
#include "sbx_int.h"

#define FSL_START_MS 20000 /* the daemon mounts every tree within this, or the run is refused */
#define FSL_LOG_MAX 1000   /* distinct refusals recorded per run; past it they are counted */

typedef struct fsl_tree {
    char *path;    /* the tree, absolute, resolved */
    int fd;        /* O_PATH|O_DIRECTORY of it (the daemon's after the fork) */
    char *name;    /* the mount point's name in STATE/run/fuse */
    char *mnt;     /* the mount point, absolute */
    bool mounted;
    char *backing; /* run's scratch dir: the name of its per-run backing dir in STATE/run/fuse, else NULL */
} fsl_tree_t;

struct fsl {
    VEC(fsl_tree_t) trees;
    pid_t daemon;
    int pidfd;            /* the daemon's, for the watcher */
    int stop_fd;          /* eventfd: the watcher ends */
    int log_fd;           /* memfd: the daemon's record of refusals */
    int guard_r, guard_w; /* the guard's pipe: the runner holds the write end while it lives */
    fuse_names_t names;   /* its names in STATE/run/fuse (fuse_names.c) */
    pthread_t watcher;
    bool watching;
    pid_t bwrap;
    atomic_bool died; /* the daemon ended while bwrap ran */
};

/* ---- the record (written in the daemon) ------------------------------------------------------------------------ */

struct fsl_log {
    int fd;
    pthread_mutex_t mu;
    strmap_t seen;
    size_t n;
};

/* path as the record and the summary show it: a name is the sandbox's
 * choice, so a control byte (an ESC sequence for the host's terminal, a
 * tab or newline that would forge a record), a backslash and any byte past
 * ASCII is written \xNN. */
static char *log_quote(const char *path)
{
    buf_t b = BUF_INIT;
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if (*c >= 0x20 && *c < 0x7f && *c != '\\') buf_addc(&b, (char)*c);
        else buf_printf(&b, "\\x%02x", *c);
    }
    char *r = xstrdup(buf_cstr(&b));
    buf_free(&b);
    return r;
}

void fslayer_log_refusal(fsl_log_t *log, const char *op, const char *path, const char *rule)
{
    if (!log) return;
    char *q = log_quote(path);
    char *key = xasprintf("%s\t%s\t%s", op, q, rule);
    free(q);
    pthread_mutex_lock(&log->mu);
    bool fresh = strmap_get(&log->seen, key) < 0 && log->n < FSL_LOG_MAX;
    if (fresh) {
        strmap_put(&log->seen, key, 1); /* the key stays: the daemon ends with the run */
        log->n++;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char *line = xasprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\t%s\n", tm.tm_year + 1900, tm.tm_mon + 1,
                               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, key);
        /* one write per line, appended: the runner reads whatever is whole */
        ssize_t w = write(log->fd, line, strlen(line));
        (void)w;
        free(line);
    }
    pthread_mutex_unlock(&log->mu);
    if (!fresh) free(key);
}

/* ---- availability ---------------------------------------------------------------------------------------------- */

static bool layer_off(void)
{
    const char *e = getenv("DRUN_FS_LAYER");
    return e && (strcmp(e, "off") == 0 || strcmp(e, "0") == 0);
}

bool fslayer_available(const char **why) { return facts_fs_layer_usable(why); }

/* ---- trees -------------------------------------------------------------------------------------------------------- */

static bool user_grant(const rrule_t *g)
{
    rule_kind_t k = g->rule->kind;
    return g->level > LVL_NONE && k != RK_SYSTEM && k != RK_PATH_DIR && k != RK_RUNTIME;
}

static bool under_tree(const fsl_t *l, const char *abs, bool strictly)
{
    for (size_t i = 0; i < l->trees.n; i++)
        if (path_is_under(abs, l->trees.v[i].path) && (!strictly || strcmp(abs, l->trees.v[i].path) != 0)) return true;
    return false;
}

/* The tree abs is at (or below, when below), or NULL. */
static const fsl_tree_t *tree_of(const fsl_t *l, const char *abs, bool at)
{
    for (size_t i = 0; i < l->trees.n; i++) {
        const fsl_tree_t *t = &l->trees.v[i];
        if (at ? strcmp(abs, t->path) == 0 : path_is_under(abs, t->path) && strcmp(abs, t->path) != 0) return t;
    }
    return NULL;
}

static int cmp_depth(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    unsigned dx = path_depth(x), dy = path_depth(y);
    return dx != dy ? (dx < dy ? -1 : 1) : strcmp(x, y);
}

/* The topmost user grants that are directories the policy shows, and the
 * session roots always on their own: they are bound by fd, and one inside
 * a dark path of another tree (drun-mcp's, in the state dir under a grant
 * of ~) could not be reached through that tree's layer. */
static void pick_trees(fsl_t *l, const resolved_t *r, const roots_t *roots)
{
    arena_t a = ARENA_INIT;
    VEC(const char *) cand = {0};
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        if (g->base == PB_ROOT || *g->path || !user_grant(g)) continue;
        const char *abs = lattice_rule_abs(g, roots, &a);
        if (!abs || lattice_level_of(r, roots, abs, NULL) == LVL_NONE || tree_of(l, abs, true)) continue;
        /* run's scratch dir is a fresh tmpfs inside the sandbox, which the
         * daemon cannot reach: it serves a fresh per-run directory in the
         * state dir instead, removed with the run */
        bool fresh = g->base == PB_SCRATCH && roots->scratch_tmpfs;
        fsl_tree_t t = {xstrdup(abs), -1, NULL, NULL, false, fresh ? xstrdup("") : NULL};
        vec_push(&l->trees, t);
    }
    for (size_t i = 0; i < r->grants.n; i++) {
        const rrule_t *g = &r->grants.v[i];
        if (!user_grant(g)) continue;
        const char *abs = lattice_rule_abs(g, roots, &a);
        struct stat st;
        if (!abs || stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (lattice_level_of(r, roots, abs, NULL) == LVL_NONE) continue;
        vec_push(&cand, abs);
    }
    if (cand.n) qsort(cand.v, cand.n, sizeof *cand.v, cmp_depth);
    for (size_t i = 0; i < cand.n; i++) {
        if (under_tree(l, cand.v[i], false)) continue; /* served by the tree it is in */
        fsl_tree_t t = {xstrdup(cand.v[i]), -1, NULL, NULL, false, NULL};
        vec_push(&l->trees, t);
    }
    vec_free(&cand);
    arena_free(&a);
}

/* ---- the daemon --------------------------------------------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Closes every fd but keep[0..n) (the prestarted bwrap's pipes above all:
 * a daemon holding the write end of its options would keep it waiting). */
static bool keep_only(int *keep, size_t n)
{
    qsort(keep, n, sizeof *keep, cmp_int);
    unsigned from = 3;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < 3) continue;
        if ((unsigned)keep[i] > from && syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0U) != 0) return false;
        from = (unsigned)keep[i] + 1;
    }
    return syscall(SYS_close_range, from, ~0U, 0U) == 0;
}

/* Workers per tree, all started before the daemon says it is ready: none
 * is made later, so a process limit reached during the run (RLIMIT_NPROC
 * counts every thread of the daemon against the sandbox's host user, whose
 * sandboxes of every concurrent run share it) cannot leave a tree served
 * by none; and a daemon that cannot start them is a layer that did not
 * start (the run is refused). Few: a run serves several trees. */
#define FSL_WORKERS 4
/* A request that has kept its worker this long means a wedged layer (the
 * worker is blocked on the backing tree: a hung mount below it, an object
 * that never answers): the daemon ends, its trees fail (ENOTCONN), and the
 * runner's watcher stops the sandbox and says so, rather than the run or
 * its host side hanging. DRUN_FS_LAYER_DEADLINE (seconds) sets it. */
#define FSL_DEADLINE_S 60

/* What one worker is serving, for the watchdog: written by that worker
 * only, read by the watchdog without a lock. since says how long; the rest
 * says what (seq is odd while the worker rewrites it, so the watchdog can
 * tell a torn copy). */
typedef struct fsl_busy {
    atomic_ullong since; /* when its request began (CLOCK_MONOTONIC ms), 0: idle */
    atomic_uint seq;
    atomic_int tid;      /* the worker's thread, for /proc/self/task/TID */
    const char *op;      /* the operation (a static name), NULL: not yet in one */
    lfs_t *fs;
    const void *node;
    char name[128]; /* the name it was given, cut short; "" when none */
} fsl_busy_t;

typedef struct serve_arg {
    struct fuse_session *se;
    fsl_busy_t busy[FSL_WORKERS]; /* per worker */
    atomic_uint next;             /* the next worker's slot */
} serve_arg_t;

static _Thread_local fsl_busy_t *busy_self; /* the calling worker's slot */

static unsigned long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000 + 1; /* never 0 */
}

/* Time the watchdog saw the daemon not run at all (its 1 s tick came more
 * than 2 s late: the machine paused, the daemon stopped or starved), which
 * no request's wait counts: the watchdog's clock is mono_ms() less this. */
static atomic_ullong unseen_ms;

static unsigned long long watch_ms(void) { return mono_ms() - atomic_load(&unseen_ms); } /* never 0 either */

void fslayer_busy_note(const char *op, lfs_t *fs, const void *node, const char *name)
{
    fsl_busy_t *b = busy_self;
    if (!b) return;
    atomic_fetch_add_explicit(&b->seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    b->op = op, b->fs = fs, b->node = node;
    size_t n = name ? strnlen(name, sizeof b->name - 1) : 0;
    if (n) memcpy(b->name, name, n);
    b->name[n] = '\0';
    atomic_fetch_add_explicit(&b->seq, 1, memory_order_release);
}

/* One worker of a tree: reads a request, serves it, and again. Any way out
 * of the loop (the tree unmounted, /dev/fuse failing) ends the daemon: a
 * tree left without its workers would hang its sandbox instead of failing. */
static void *serve_worker(void *p)
{
    serve_arg_t *a = p;
    fsl_busy_t *b = busy_self = &a->busy[atomic_fetch_add(&a->next, 1) % FSL_WORKERS];
    atomic_store(&b->tid, (int)syscall(SYS_gettid));
    struct fuse_buf buf = {0};
    while (!fuse_session_exited(a->se)) {
        int n = fuse_session_receive_buf(a->se, &buf);
        if (n == -EINTR || n == -EAGAIN) continue;
        if (n <= 0) break;
        fslayer_busy_note(NULL, NULL, NULL, NULL); /* until the operation says what it serves */
        atomic_store(&b->since, watch_ms());
        fuse_session_process_buf(a->se, &buf);
        atomic_store(&b->since, 0);
    }
    _exit(0);
}

static unsigned deadline_s(void)
{
    const char *e = getenv("DRUN_FS_LAYER_DEADLINE");
    char *end;
    unsigned long v = e && *e ? strtoul(e, &end, 10) : 0;
    return e && *e && !*end && v > 0 && v < 86400 ? (unsigned)v : FSL_DEADLINE_S;
}

typedef struct watch_arg {
    serve_arg_t *se;
    size_t n;
    unsigned deadline;
} watch_arg_t;

static void say(int fd, const char *msg)
{
    ssize_t w = write(fd, msg, strlen(msg));
    (void)w;
}

/* The first line of /proc/self/task/TID/what, without its newline, into out
 * (the error in parentheses when it cannot be read: syscall, mode 0400, is
 * root's once a root runner's daemon has dropped to the sandbox user, which
 * leaves it not dumpable; made dumpable, any process of that user could
 * ptrace it and serve the sandbox what it likes). */
static void task_file(int tid, const char *what, char *out, size_t cap)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/task/%d/%s", tid, what);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, cap - 1) : -1;
    int e = errno;
    if (fd >= 0) close(fd);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    if (!*out) snprintf(out, cap, "(%s)", n < 0 ? strerror(e) : "empty");
}

/* One line about a worker stuck since t: what it serves (when its record
 * reads whole), how long, and where its thread is in the kernel. */
static void say_stuck(const fsl_busy_t *b, unsigned long long t, unsigned long long now)
{
    unsigned s1 = atomic_load_explicit(&b->seq, memory_order_acquire);
    fsl_busy_t c = {.op = b->op, .fs = b->fs, .node = b->node};
    memcpy(c.name, b->name, sizeof c.name);
    c.name[sizeof c.name - 1] = '\0';
    atomic_thread_fence(memory_order_acquire);
    bool whole = !(s1 & 1) && atomic_load(&b->seq) == s1 && atomic_load(&b->since) == t;
    buf_t path = BUF_INIT, raw = BUF_INIT;
    if (!whole) buf_adds(&path, "(its record was being rewritten)");
    else if (!c.op) buf_adds(&path, "(not yet in an operation: in libfuse)");
    else if (c.fs && c.node && fslayer_fs_node_path_try(c.fs, c.node, *c.name ? c.name : NULL, &raw)) {
        char *q = log_quote(buf_cstr(&raw));
        buf_adds(&path, q);
        free(q);
    } else {
        char *q = log_quote(c.name);
        buf_printf(&path, "(its node's path unknown: the node table is locked) name %s", q);
        free(q);
    }
    buf_free(&raw);
    int tid = atomic_load(&b->tid);
    char stat[512], wchan[128], sc[256];
    task_file(tid, "stat", stat, sizeof stat);
    task_file(tid, "wchan", wchan, sizeof wchan);
    task_file(tid, "syscall", sc, sizeof sc);
    const char *rp = strrchr(stat, ')'); /* the state follows the name, which may hold anything */
    char state = rp && rp[1] == ' ' && rp[2] ? rp[2] : '?';
    char *line = xasprintf("drun-policy: stuck: %s %s, waited %llu s; thread %d: state %c, wchan %s, syscall %s\n",
                           whole && c.op ? c.op : "-", buf_cstr(&path), (now - t) / 1000, tid, state, wchan, sc);
    say(2, line);
    free(line);
    buf_free(&path);
}

/* The daemon's own watchdog: once a second, any request older than the
 * deadline (in time the daemon ran: watch_ms) ends the daemon (fail
 * closed: the kernel aborts its connections, every access below the trees
 * fails with ENOTCONN, and the runner's watcher stops the sandbox), saying
 * first what each stuck worker serves and where it waits. */
static void *wedge_watch(void *p)
{
    watch_arg_t *w = p;
    unsigned long long last = mono_ms();
    for (;;) {
        sleep(1);
        unsigned long long real = mono_ms();
        /* a tick late by more than a second counts as 2 s: a real wedge
         * (the daemon runs, a worker does not come back) still ends it
         * after the deadline, a pause of the whole daemon does not */
        if (real - last > 2000) atomic_fetch_add(&unseen_ms, real - last - 2000);
        last = real;
        unsigned long long now = watch_ms();
        bool said = false;
        for (size_t i = 0; i < w->n; i++)
            for (int k = 0; k < FSL_WORKERS; k++) {
                const fsl_busy_t *b = &w->se[i].busy[k];
                unsigned long long t = atomic_load(&b->since);
                if (!t || now < t || now - t < 1000ull * w->deadline) continue;
                if (!said) {
                    char m[200];
                    snprintf(m, sizeof m, "drun-policy: the filesystem layer is wedged (a request has waited %u s on the "
                                          "backing tree): stopping it and the sandbox\n",
                             w->deadline);
                    say(2, m);
                    said = true;
                }
                say_stuck(b, t, now);
            }
        if (said) _exit(3);
    }
    return NULL;
}

/* Starts every worker of every tree and the watchdog: 0, or the error of
 * the thread that could not be made (the daemon then says so and ends). */
static int start_workers(serve_arg_t *se, size_t n)
{
    pthread_t t;
    int e;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < FSL_WORKERS; k++) {
            if ((e = pthread_create(&t, NULL, serve_worker, &se[i])) != 0) return e;
            pthread_detach(t);
        }
    watch_arg_t *w = xcalloc(1, sizeof *w);
    *w = (watch_arg_t){se, n, deadline_s()};
    if ((e = pthread_create(&t, NULL, wedge_watch, w)) != 0) return e;
    pthread_detach(t);
    return 0;
}

/* Not root: fusermount3 (setuid) mounts and hands back the /dev/fuse fd
 * over a socket (_FUSE_COMMFD), as libfuse itself does when mount(2)
 * fails; here /dev/fuse need not be open to the user. -1 on failure. */
static int fusermount(const char *mnt, const char *opts)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char env[32];
        snprintf(env, sizeof env, "_FUSE_COMMFD=%d", sv[1]);
        char *envp[] = {env, "PATH=/usr/bin:/bin", NULL};
        close(sv[0]);
        execle("/usr/bin/fusermount3", "fusermount3", "-o", opts, "--", mnt, (char *)NULL, envp);
        execle("/bin/fusermount3", "fusermount3", "-o", opts, "--", mnt, (char *)NULL, envp);
        _exit(127);
    }
    close(sv[1]);
    int fd = -1;
    if (pid > 0) {
        char byte, ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&byte, 1};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n;
        do n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(c), sizeof fd);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        if (fd >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) close(fd), fd = -1;
    }
    close(sv[0]);
    return fd;
}

/* Mounts tree t; false with a message on ready_w. */
static struct fuse_session *mount_tree(fsl_tree_t *t, const resolved_t *r, const roots_t *roots, fsl_log_t *log,
                                       int ready_w)
{
    char opts[160];
    snprintf(opts, sizeof opts, "default_permissions,fsname=drun-layer,subtype=drun%s",
             geteuid() == 0 ? ",allow_other" : "");
    char *argv[] = {"drun-fuse", "-o", opts, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    lfs_t *fs = fslayer_fs_new(r, roots, t->path, t->fd, log);
    size_t sz;
    const void *ops = fslayer_fs_ops(&sz);
    struct fuse_session *se = fuse_session_new(&args, ops, sz, fs);
    char devfd[32] = "";
    if (se && geteuid() != 0) {
        int fd = fusermount(t->mnt, "default_permissions,fsname=drun-layer,subtype=drun");
        if (fd >= 0) snprintf(devfd, sizeof devfd, "/dev/fd/%d", fd);
    }
    errno = 0;
    if (!se || (geteuid() != 0 && !*devfd) || fuse_session_mount(se, *devfd ? devfd : t->mnt) != 0) {
        int e = errno; /* the failing call's, when libfuse kept it */
        char *m = xasprintf("cannot mount the filesystem layer on %s%s%s", t->mnt, e ? ": " : "", e ? strerror(e) : "");
        say(ready_w, m);
        free(m);
        return NULL;
    }
    return se;
}

/* The guard: a child of the daemon that keeps the rights the mounts were
 * made with and unmounts every tree once the runner is gone, however it
 * went (the runner's end of the pipe closes, a SIGKILL included), so that
 * no mount outlives its run on the host, dead or alive. (The sandbox keeps
 * its own copies of the mounts, which die with the daemon: ENOTCONN.) */
static void start_guard(const fsl_t *l)
{
    pid_t g = fork();
    if (g != 0) {
        close(l->guard_r);
        return;
    }
    prctl(PR_SET_NAME, "drun-fuse-guard");
    /* out of the runner's process group (whose terminal's ^C, or a kill of
     * the whole group, would otherwise end the guard with the runner and
     * leave the mounts behind); the signals below are ignored as well */
    setsid();
    int keep[1] = {l->guard_r};
    if (!keep_only(keep, 1)) _exit(1);
    char c;
    while (read(l->guard_r, &c, 1) < 0 && errno == EINTR) {}
    for (size_t i = 0; i < l->trees.n; i++) fuse_names_unmount(l->trees.v[i].mnt);
    _exit(0);
}

static _Noreturn void daemon_main(fsl_t *l, const resolved_t *r, const roots_t *roots, pid_t parent, int ready_w)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    prctl(PR_SET_NAME, "drun-fuse");
    /* the runner's terminal signals are the runner's to act on: it stops
     * the sandbox, then this daemon (and its death ends this one anyway);
     * ignored here, and so in the guard, which must outlive a runner
     * ended by one to unmount */
    static const int quiet[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof quiet / sizeof *quiet; i++) signal(quiet[i], SIG_IGN);
    int keep[64];
    size_t nk = 0;
    keep[nk++] = ready_w;
    keep[nk++] = l->log_fd;
    keep[nk++] = l->guard_r;
    for (size_t i = 0; i < l->trees.n && nk < 64; i++) keep[nk++] = l->trees.v[i].fd;
    if (!keep_only(keep, nk)) _exit(1);
    fsl_log_t log = {l->log_fd, PTHREAD_MUTEX_INITIALIZER, STRMAP_INIT, 0};
    serve_arg_t *se = xcalloc(l->trees.n, sizeof *se);
    for (size_t i = 0; i < l->trees.n; i++)
        if (!(se[i].se = mount_tree(&l->trees.v[i], r, roots, &log, ready_w))) _exit(1);
    start_guard(l);
    /* the sandbox's host user from here on (a root runner): the backing
     * tree is read and written with its rights, and what it makes is its */
    const sbx_ident_t *id = hoststate_ident();
    if (id->drop && (setgroups(0, NULL) != 0 || setresgid(id->gid, id->gid, id->gid) != 0 ||
                     setresuid(id->uid, id->uid, id->uid) != 0)) {
        say(ready_w, "cannot drop to the sandbox user");
        _exit(1);
    }
    /* the drop clears the death signal: set it again */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    /* the workers, as the sandbox user (whose process limit they count
     * against), before the runner is told the trees are ready */
    int e = start_workers(se, l->trees.n);
    if (e) {
        char *m = xasprintf("cannot start the layer's threads as the sandbox user: %s", strerror(e));
        say(ready_w, m);
        _exit(1);
    }
    say(ready_w, "ok");
    close(ready_w);
    for (;;) pause(); /* the workers and the watchdog end the daemon */
}

_Noreturn void fuse_serve_daemon(const fuse_exec_spec_t *s)
{
    fsl_t l = {0};
    l.daemon = -1;
    l.pidfd = l.stop_fd = l.guard_w = -1;
    l.names = (fuse_names_t)FUSE_NAMES_INIT;
    l.log_fd = s->log_fd;
    l.guard_r = s->guard_r;
    for (size_t i = 0; i < s->ntrees; i++) {
        const fuse_exec_tree_t *t = &s->trees[i];
        fsl_tree_t x = {xstrdup(t->path), t->fd, xstrdup(t->name), xstrdup(t->mnt), false,
                        t->backing ? xstrdup(t->backing) : NULL};
        vec_push(&l.trees, x);
    }
    daemon_main(&l, s->r, s->roots, s->parent, s->ready_w);
}

/* The mount points (and run's scratch backing dir), below the state dir
 * by fd, under this run's token. */
static bool make_mount_points(fsl_t *l, char **err)
{
    if (!fuse_names_open(&l->names, err)) return false;
    for (size_t i = 0; i < l->trees.n; i++) {
        fsl_tree_t *t = &l->trees.v[i];
        if (!fuse_names_mount_point(&l->names, i, &t->name, &t->mnt, err)) return false;
        if (t->backing) {
            free(t->backing);
            if ((t->fd = fuse_names_backing(&l->names, t->name, &t->backing, err)) < 0) return false;
        }
    }
    return true;
}

/* The tree at path, opened from "/" with no symlink followed anywhere in
 * it (RESOLVE_NO_SYMLINKS): the compiled roots are canonical (their
 * realpath when the facts were gathered), so a symlink in the path now
 * means the host changed since the compile -- a sandbox that could write an
 * ancestor in an earlier run swapped the root for a link to a directory it
 * must not see. -1 with errno (ELOOP for such a link). */
static int open_tree_path(const char *path)
{
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static bool same_object(int a, int b)
{
    struct stat x, y;
    return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Opens each tree by a symlink-free walk of its path. The workspace is the
 * runner's fd (the one bwrap binds and checks): the walk must reach that
 * same object, so that what the sandbox is given in place of the tree and
 * what the daemon serves are one directory. A mismatch refuses the run:
 * it is never served, and never falls back to mounts. */
static bool open_trees(fsl_t *l, const roots_t *roots, int ws_fd, char **err)
{
    for (size_t i = 0; i < l->trees.n; i++) {
        fsl_tree_t *t = &l->trees.v[i];
        if (t->fd >= 0) continue; /* run's scratch: its backing dir */
        int fd = open_tree_path(t->path);
        if (fd < 0) {
            *err = xasprintf(errno == ELOOP || errno == ENOTDIR
                                 ? "%s is no longer the directory the policy was compiled for (a symlink is now in its "
                                   "path: the host changed since the compile): refusing to serve it"
                                 : "cannot open %s for the filesystem layer: %s",
                             t->path, strerror(errno));
            return false;
        }
        bool ws = roots->workspace && strcmp(t->path, roots->workspace) == 0 && ws_fd >= 0;
        if (ws && !same_object(fd, ws_fd)) {
            close(fd);
            *err = xasprintf("the workspace %s was replaced while the run was planned: refusing to run", t->path);
            return false;
        }
        t->fd = fd;
    }
    return true;
}

static void unmount_all(fsl_t *l);
static void fsl_free(fsl_t *l);

/* Starts the daemon and waits until every tree is mounted. */
static bool start_daemon(fsl_t *l, const resolved_t *r, const roots_t *roots, char **err)
{
    int rp[2];
    if (pipe2(rp, O_CLOEXEC) != 0) {
        *err = xasprintf("cannot start the filesystem layer: %s", strerror(errno));
        return false;
    }
    /* The daemon runs this binary afresh (fuse_exec.c): a child of a
     * threaded runner may only exec. Everything it needs is prepared here. */
    pid_t parent = getpid();
    fuse_exec_tree_t *st = xcalloc(l->trees.n ? l->trees.n : 1, sizeof *st);
    int *fds = xcalloc(l->trees.n + 4, sizeof *fds);
    size_t nfd = 0;
    for (size_t i = 0; i < l->trees.n; i++) {
        const fsl_tree_t *t = &l->trees.v[i];
        st[i] = (fuse_exec_tree_t){t->path, t->name, t->mnt, t->backing, t->fd};
        fds[nfd++] = t->fd;
    }
    fuse_exec_spec_t spec = {parent, rp[1], l->log_fd, l->guard_r, st, l->trees.n, r, roots};
    int spec_fd = fuse_exec_spec_write(&spec, err);
    free(st);
    fuse_exec_argv_t av;
    if (spec_fd >= 0) {
        fuse_exec_argv(spec_fd, &av);
        fds[nfd++] = rp[1];
        fds[nfd++] = l->log_fd;
        fds[nfd++] = l->guard_r;
        fds[nfd++] = spec_fd;
        l->daemon = fuse_exec_start(&av, fds, nfd);
        close(spec_fd);
    } else {
        l->daemon = -1;
        errno = EIO;
    }
    free(fds);
    close(rp[1]);
    close(l->guard_r); /* the daemon's (and its guard's) now */
    l->guard_r = -1;
    for (size_t i = 0; i < l->trees.n; i++) {
        close(l->trees.v[i].fd); /* the daemon's now */
        l->trees.v[i].fd = -1;
    }
    if (l->daemon < 0) {
        close(rp[0]);
        if (!*err) *err = xasprintf("cannot start the filesystem layer: %s", strerror(errno));
        return false;
    }
    /* a deadline on the start: a daemon wedged while mounting (a hung
     * fusermount3, a mount point on a hung filesystem) refuses the run
     * instead of hanging it */
    char msg[512];
    ssize_t n = -1;
    struct pollfd pf = {rp[0], POLLIN, 0};
    int pr;
    do pr = poll(&pf, 1, FSL_START_MS);
    while (pr < 0 && errno == EINTR);
    if (pr > 0)
        do n = read(rp[0], msg, sizeof msg - 1);
        while (n < 0 && errno == EINTR);
    close(rp[0]);
    if (pr == 0) {
        *err = xasprintf("the filesystem layer was not ready within %d s", FSL_START_MS / 1000);
        return false; /* the caller kills the daemon and unmounts */
    }
    msg[n > 0 ? n : 0] = '\0';
    for (size_t i = 0; i < l->trees.n; i++) l->trees.v[i].mounted = true; /* unmounting a non-mount is harmless */
    if (strcmp(msg, "ok") != 0) {
        *err = xstrdup(n > 0 ? msg : "the filesystem layer ended before it was ready");
        return false;
    }
    l->pidfd = (int)syscall(SYS_pidfd_open, l->daemon, 0);
    return true;
}

fsl_t *fslayer_start(const resolved_t *r, const roots_t *roots, int ws_fd, char **err)
{
    *err = NULL;
    fsl_t *l = xcalloc(1, sizeof *l);
    l->daemon = -1;
    l->pidfd = l->stop_fd = l->log_fd = l->guard_r = l->guard_w = -1;
    l->names = (fuse_names_t)FUSE_NAMES_INIT;
    pick_trees(l, r, roots);
    if (!l->trees.n) {
        fsl_free(l);
        return NULL;
    }
    int gp[2];
    if (pipe2(gp, O_CLOEXEC) == 0) l->guard_r = gp[0], l->guard_w = gp[1];
    l->log_fd = memfd_create("drun-fs-refusals", MFD_CLOEXEC);
    l->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (l->log_fd < 0 || l->stop_fd < 0 || l->guard_w < 0) *err = xasprintf("cannot start the filesystem layer: %s", strerror(errno));
    if (*err || !make_mount_points(l, err) || !open_trees(l, roots, ws_fd, err) || !start_daemon(l, r, roots, err)) {
        if (l->daemon > 0) {
            kill(l->daemon, SIGKILL);
            while (waitpid(l->daemon, NULL, 0) < 0 && errno == EINTR) {}
            l->daemon = -1;
        }
        unmount_all(l);
        fsl_free(l);
        return NULL;
    }
    return l;
}

/* ---- the plan ----------------------------------------------------------------------------------------------------------- */

resolved_t *fslayer_view(const fsl_t *l, const resolved_t *r, const roots_t *roots)
{
    resolved_t *v = xcalloc(1, sizeof *v);
    v->pol = r->pol;
    v->facts = r->facts;
    v->target = r->target;
    for (size_t i = 0; i < r->grants.n; i++) vec_push(&v->grants, r->grants.v[i]);
    arena_t a = ARENA_INIT;
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        /* glob caps only ever reach into walked trees, which are all
         * served (run's tmpfs scratch aside, which goes with the run) */
        if (c->glob) continue;
        const char *abs = lattice_rule_abs(c, roots, &a);
        if (abs && under_tree(l, abs, true)) continue;
        vec_push(&v->caps, *c);
    }
    arena_free(&a);
    return v;
}

void fslayer_view_free(resolved_t *v)
{
    if (!v) return;
    vec_free(&v->grants);
    vec_free(&v->caps);
    free(v);
}

/* bwrap options that take a destination, and where it is. */
static int dest_index(const char *opt)
{
    static const char *const two[] = {"--bind", "--bind-try", "--ro-bind", "--ro-bind-try", "--dev-bind",
                                      "--dev-bind-try", "--bind-fd", "--ro-bind-fd", "--symlink", "--ro-bind-data",
                                      "--bind-data", "--file"};
    static const char *const one[] = {"--tmpfs", "--remount-ro", "--dir", "--dev", "--proc", "--mqueue"};
    for (size_t i = 0; i < sizeof two / sizeof *two; i++)
        if (strcmp(opt, two[i]) == 0) return 2;
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        if (strcmp(opt, one[i]) == 0) return 1;
    return 0;
}

static int nargs_of(const char *opt)
{
    int d = dest_index(opt);
    if (d) return d;
    static const char *const one[] = {"--cap-drop", "--uid", "--gid", "--hostname", "--chdir", "--unsetenv",
                                      "--perms", "--seccomp", "--json-status-fd", "--sync-fd", "--size",
                                      "--args", "--chmod"};
    static const char *const two[] = {"--setenv", "--chmod"};
    for (size_t i = 0; i < sizeof two / sizeof *two; i++)
        if (strcmp(opt, two[i]) == 0) return 2;
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        if (strcmp(opt, one[i]) == 0) return 1;
    return 0;
}

/* The FUSE view of abs (in tree t). */
static char *view_of(const fsl_tree_t *t, const char *abs)
{
    size_t n = strlen(t->path);
    return abs[n] ? xasprintf("%s%s", t->mnt, abs + (n == 1 ? 0 : n)) : xstrdup(t->mnt);
}

void fslayer_rewrite(const fsl_t *l, void *strvec, size_t from)
{
    strvec_t *v = strvec, out = {0};
    for (size_t i = 0; i < from; i++) vec_push(&out, v->v[i]);
    for (size_t i = from; i < v->n;) {
        const char *opt = v->v[i];
        int na = nargs_of(opt), di = dest_index(opt);
        size_t end = i + 1 + (size_t)na;
        if (end > v->n) end = v->n;
        const char *dest = di && i + (size_t)di < v->n ? v->v[i + (size_t)di] : NULL;
        bool by_fd = !strcmp(opt, "--bind-fd") || !strcmp(opt, "--ro-bind-fd");
        bool bind = !by_fd && di == 2 && (strstr(opt, "bind") != NULL) && strcmp(opt, "--ro-bind-data") != 0 &&
                    strcmp(opt, "--bind-data") != 0;
        const fsl_tree_t *at = dest ? tree_of(l, dest, true) : NULL, *in = dest ? tree_of(l, dest, false) : NULL;
        /* a served tree is always bound read-write: the layer decides each
         * level in it (a read grant may hold a write grant deeper down) */
        if (dest && by_fd && (at || in)) {
            /* kept (bwrap checks the inode, then closes the fd), then covered */
            for (size_t k = i; k < end; k++) vec_push(&out, v->v[k]);
            vec_push(&out, xstrdup("--bind"));
            vec_push(&out, view_of(at ? at : in, dest));
            vec_push(&out, xstrdup(dest));
        } else if (dest && at && !strcmp(opt, "--tmpfs")) {
            /* run's scratch dir: its served backing dir instead of a tmpfs */
            free(v->v[i]);
            vec_push(&out, xstrdup("--bind"));
            vec_push(&out, view_of(at, dest));
            vec_push(&out, v->v[i + 1]);
        } else if (dest && at && bind) {
            /* the tree's own bind: from its FUSE mount */
            free(v->v[i]);
            vec_push(&out, xstrdup("--bind"));
            free(v->v[i + 1]);
            vec_push(&out, view_of(at, dest));
            for (size_t k = i + 2; k < end; k++) vec_push(&out, v->v[k]);
        } else if (dest && in) {
            /* inside a served tree: the layer decides there; a --perms or
             * --size that applied to it goes with it */
            size_t m = out.n;
            if (m >= from + 2 && (!strcmp(out.v[m - 2], "--perms") || !strcmp(out.v[m - 2], "--size"))) {
                free(out.v[m - 1]);
                free(out.v[m - 2]);
                out.n -= 2;
            }
            for (size_t k = i; k < end; k++) free(v->v[k]);
        } else {
            for (size_t k = i; k < end; k++) vec_push(&out, v->v[k]);
        }
        i = end;
    }
    free(v->v);
    *v = *(strvec_t *)&out;
}

/* ---- the run ------------------------------------------------------------------------------------------------------------- */

static void *watch_thread(void *p)
{
    fsl_t *l = p;
    struct pollfd pf[2] = {{l->pidfd, POLLIN, 0}, {l->stop_fd, POLLIN, 0}};
    for (;;) {
        int n = poll(pf, 2, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || (pf[1].revents & POLLIN)) return NULL;
        if (pf[0].revents) break;
    }
    /* the daemon is gone while the sandbox runs: its accesses fail
     * (ENOTCONN); the run ends rather than going on half-blind */
    atomic_store(&l->died, true);
    if (l->bwrap > 0) kill(l->bwrap, SIGKILL);
    return NULL;
}

void fslayer_watch(fsl_t *l, pid_t bwrap_pid)
{
    /* DRUN_FS_LAYER_WATCH=off keeps a sandbox whose daemon died running
     * (its accesses below the served trees fail): for looking at it */
    const char *w = getenv("DRUN_FS_LAYER_WATCH");
    if (!l || l->pidfd < 0 || (w && strcmp(w, "off") == 0)) return;
    l->bwrap = bwrap_pid;
    l->watching = pthread_create(&l->watcher, NULL, watch_thread, l) == 0;
}

static void unmount_all(fsl_t *l)
{
    for (size_t i = 0; i < l->trees.n; i++) {
        fsl_tree_t *t = &l->trees.v[i];
        if (t->mounted) fuse_names_unmount(t->mnt);
        t->mounted = false;
        fuse_names_remove(&l->names, t->name, t->backing);
    }
    fuse_names_close(&l->names);
}

static void fsl_free(fsl_t *l)
{
    for (size_t i = 0; i < l->trees.n; i++) {
        fsl_tree_t *t = &l->trees.v[i];
        if (t->fd >= 0) close(t->fd);
        free(t->path), free(t->name), free(t->mnt), free(t->backing);
    }
    vec_free(&l->trees);
    if (l->pidfd >= 0) close(l->pidfd);
    if (l->stop_fd >= 0) close(l->stop_fd);
    if (l->guard_r >= 0) close(l->guard_r);
    if (l->guard_w >= 0) close(l->guard_w);
    if (l->log_fd >= 0) close(l->log_fd);
    fuse_names_close(&l->names);
    free(l);
}

char *fslayer_refusals(const fsl_t *l, size_t max, size_t *total)
{
    buf_t all = BUF_INIT, out = BUF_INIT;
    char chunk[4096];
    ssize_t n;
    off_t off = 0;
    while ((n = pread(l->log_fd, chunk, sizeof chunk, off)) > 0) {
        buf_add(&all, chunk, (size_t)n);
        off += n;
    }
    size_t count = 0;
    const char *s = all.len ? buf_cstr(&all) : "";
    for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        if (count++ < max) buf_add(&out, s, (size_t)(nl + 1 - s));
    }
    *total = count;
    buf_free(&all);
    if (!out.len) {
        buf_free(&out);
        return NULL;
    }
    char *r = xstrdup(buf_cstr(&out));
    buf_free(&out);
    return r;
}

/* "  create /ws/x: rule" lines of the first few refusals. */
static char *summary_text(const fsl_t *l)
{
    size_t total = 0;
    char *lines = fslayer_refusals(l, 10, &total);
    if (!lines) return NULL;
    buf_t b = BUF_INIT;
    buf_printf(&b, "the filesystem layer refused %zu access%s (op, path, deciding rule):\n", total,
               total == 1 ? "" : "es");
    for (char *s = lines, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        *nl = '\0';
        char *f[4] = {s, NULL, NULL, NULL};
        for (int k = 1; k < 4 && f[k - 1]; k++) {
            char *t = strchr(f[k - 1], '\t');
            if (t) *t = '\0', f[k] = t + 1;
        }
        if (f[3]) buf_printf(&b, "  %s %s: %s\n", f[1], f[2], f[3]);
    }
    if (total > 10) buf_printf(&b, "  and %zu more\n", total - 10);
    free(lines);
    char *r = xstrdup(buf_cstr(&b));
    buf_free(&b);
    return r;
}

bool fslayer_finish(fsl_t *l, char **summary)
{
    if (summary) *summary = NULL;
    if (!l) return false;
    if (l->watching) {
        uint64_t one = 1;
        ssize_t w = write(l->stop_fd, &one, sizeof one);
        (void)w;
        pthread_join(l->watcher, NULL);
    }
    bool died = atomic_load(&l->died);
    unmount_all(l);
    if (l->daemon > 0) {
        kill(l->daemon, SIGKILL); /* the sandbox is gone: nothing is left to serve */
        while (waitpid(l->daemon, NULL, 0) < 0 && errno == EINTR) {}
    }
    if (summary) *summary = summary_text(l);
    fsl_free(l);
    return died;
}

/* ---- what the runner calls ------------------------------------------------------------------------------------------------ */

/* The glob caps, as written: what the mount plan holds only where a mount
 * could be placed when the run started. */
static void glob_caps_text(const resolved_t *r, buf_t *out)
{
    for (size_t i = 0; i < r->caps.n; i++) {
        const rrule_t *c = &r->caps.v[i];
        if (!c->glob) continue;
        buf_printf(out, "%s\"%s\"", out->len ? ", " : "", c->rule->written);
    }
}

fsl_t *fslayer_begin(const resolved_t *r, const roots_t *roots, int ws_fd, const char *unusable, char **err)
{
    *err = NULL;
    if (!unusable) {
        /* usable here, so a failure from now on refuses the run: falling
         * back would let whatever made the start fail (a root swapped for
         * a symlink, the sandbox user's process limit used up by another
         * session, a wedged mount) lower this run's protection */
        fsl_t *l = fslayer_start(r, roots, ws_fd, err);
        if (*err) {
            char *e = xasprintf("the access-time filesystem layer cannot start: %s", *err);
            free(*err);
            *err = e;
        }
        return l;
    }
    buf_t caps = BUF_INIT;
    glob_caps_text(r, &caps);
    if (caps.len && !layer_off()) /* asked for by name: no notice */
        fprintf(stderr, "drun-policy: the access-time filesystem layer is not used (%s): these caps hold only where "
                        "a mount could be placed when the run started (existing matches, the roots of the grants, "
                        "existing .git dirs), not for names made later in new or other directories: %s\n",
                unusable, buf_cstr(&caps));
    buf_free(&caps);
    return NULL;
}

void fslayer_end_run(fsl_t *l, pid_t pid1, bool *died)
{
    /* every process of the sandbox is gone once its pid 1 is: this
     * process, a subreaper, has it once bwrap has gone (or bwrap reaped it) */
    if (pid1 > 0)
        while (waitpid(pid1, NULL, 0) < 0 && errno == EINTR) {}
    char *sum = NULL;
    *died = fslayer_finish(l, &sum);
    if (*died)
        fprintf(stderr, "drun-policy run: the filesystem layer ended during the run: its trees gave errors in the "
                        "sandbox (never the raw tree), and the sandbox was stopped\n");
    if (sum) fprintf(stderr, "drun-policy run: %s", sum);
    free(sum);
}

char *sandbox_fs_denied(const sbx_residue_t *residue, size_t max, size_t *total)
{
    *total = 0;
    return residue && residue->layer ? fslayer_refusals(residue->layer, max, total) : NULL;
}
