/* prestart_kill.c — for 55-prestart-kill: a feeder of a prestarted bwrap
 * (compiler/sandbox/spawn.c) killed while it hands bwrap its options.
 *
 *   prestart_kill POLICY WS SCRATCH dump
 *       prints the packed options, one per line (to find the cut points)
 *   prestart_kill POLICY WS SCRATCH time
 *       feeds in full; prints the nanoseconds from the prestart to the end
 *       of the feed (the range the random kills are drawn from)
 *   prestart_kill POLICY WS SCRATCH delay NS
 *       a thread SIGKILLs the whole feeder NS nanoseconds after bwrap was
 *       prestarted (during the plan, the feed, or after it)
 *   prestart_kill POLICY WS SCRATCH uffd PAGE|deny [detached]
 *       the options are fed from memory whose page PAGE (or the page that
 *       starts at the deny of WS/secret: the options are padded so that it
 *       does) is missing (userfaultfd): the write() copies the pages before
 *       it into the pipe and waits on the fault, and the feeder is
 *       SIGKILLed there, so the pipe holds a part of the options ending at
 *       a page boundary. "detached": the feeder is a forked child, not
 *       bwrap's parent (no death signal reaches bwrap: it sees only the end
 *       of the pipe), as with a setuid bwrap, which drops PR_SET_PDEATHSIG.
 *   prestart_kill POLICY WS SCRATCH delays NS...
 *   prestart_kill POLICY WS SCRATCH uffds attached|detached PAGE|deny...
 *       many kills, one after another, from one policy compiled once: each
 *       is the delay or uffd run above in full (a fresh feeder, a fresh
 *       bwrap, WS/weak and WS/full removed before it, everything reaped or
 *       killed after it), framed as "begin I ARG" ... "end I ARG weak=W
 *       full=F stuck=N" (W, F: the marks after this kill, 0 or 1; the end
 *       line after an empty one), so that each answer is tied to its
 *       kill. PK_BUDGET=SECONDS: no kill starts
 *       past that many seconds (the rest are left out, each said as
 *       "skipped I ARG").
 *
 * The command (sh) writes WS/full when WS/secret/key is hidden from it,
 * WS/weak when it can read it (a vector cut before that deny), and says so
 * on stdout too (seen on the host whatever was mounted). The harness is a
 * child subreaper: once the feeder is gone it reaps what comes back to it
 * for up to 3 s, then SIGKILLs what is still there (says "stuck N"), so
 * that when it returns nothing it, bwrap or the sandbox started is left
 * and the test can look at the host.
 * Exit 0; 2 on a setup failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile.h"
#include "sbx_int.h"

#define PAGE 4096UL

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static _Noreturn void die(const char *what, const char *err)
{
    fprintf(stderr, "prestart_kill: %s: %s\n", what, err ? err : strerror(errno));
    exit(2);
}

/* ---- the killers ----------------------------------------------------------------------------------------- */

static long long kill_at;

/* Sleeps to 2 ms short of the instant, then spins to it: as fine as a
 * spin (a sleep alone wakes late), without burning a core for the whole
 * delay (up to half a second a kill, a good part of the suite's CPU). */
static void *delay_killer(void *arg)
{
    (void)arg;
    long long wake = kill_at - 2000000;
    if (wake > now_ns()) {
        struct timespec ts = {(time_t)(wake / 1000000000LL), (long)(wake % 1000000000LL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
    }
    while (now_ns() < kill_at) {} /* spin: finer than a sleep */
    kill(getpid(), SIGKILL);
    return NULL;
}

static int uffd = -1;

/* Waits for the feeder's write() to fault on the missing page, then kills
 * the process it is in, write() still waiting. */
static void *fault_killer(void *arg)
{
    (void)arg;
    struct pollfd p = {uffd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {}
    struct uffd_msg m;
    if (read(uffd, &m, sizeof m) == (ssize_t)sizeof m && m.event == UFFD_EVENT_PAGEFAULT)
        fprintf(stderr, "prestart_kill: write() waits at %#llx: killed\n", (unsigned long long)m.arg.pagefault.address);
    kill(getpid(), SIGKILL);
    return NULL;
}

/* A copy of data in memory whose page `missing` (counted from the start of
 * data) and those after it are not there yet: reading them faults into
 * uffd. */
static void *faulting_copy(const buf_t *data, size_t missing)
{
    size_t pages = (data->len + PAGE - 1) / PAGE;
    if (missing >= pages) die("uffd", "the page is past the end of the options");
    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
    if (uffd < 0) die("userfaultfd", NULL);
    struct uffdio_api api = {.api = UFFD_API};
    if (ioctl(uffd, UFFDIO_API, &api) != 0) die("UFFDIO_API", NULL);
    char *mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) die("mmap", NULL);
    struct uffdio_register reg = {.range = {(unsigned long)mem, pages * PAGE}, .mode = UFFDIO_REGISTER_MODE_MISSING};
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) die("UFFDIO_REGISTER", NULL);
    char *src = calloc(pages, PAGE);
    memcpy(src, data->p, data->len);
    for (size_t i = 0; i < pages; i++) {
        if (i >= missing) continue;
        struct uffdio_copy c = {.dst = (unsigned long)mem + i * PAGE, .src = (unsigned long)src + i * PAGE, .len = PAGE};
        if (ioctl(uffd, UFFDIO_COPY, &c) != 0) die("UFFDIO_COPY", NULL);
    }
    free(src);
    return mem;
}

/* ---- the options --------------------------------------------------------------------------------------- */

/* What sandbox_spawn hands bwrap (sandbox.c pack_options). */
static void pack(const sandbox_t *s, const sbx_exec_t *x, buf_t *out)
{
    char *err = NULL;
    size_t n = 0;
    char **v = sandbox_argv(s, x, &n, &err);
    if (!v) die("sandbox_argv", err);
    const char *head[] = {"--seccomp", "4", "--json-status-fd", "5"};
    for (size_t i = 0; i < 4; i++) buf_add(out, head[i], strlen(head[i]) + 1);
    for (size_t i = 1; i < n; i++) buf_add(out, v[i], strlen(v[i]) + 1);
    sandbox_argv_free(v, n);
}

/* Pads the options after the head with --setenv DRUN_PAD xxx so that the
 * option that hides WS/secret starts at a page boundary; its page. */
static size_t pad_to_deny(buf_t *b, const char *ws)
{
    char *secret = xasprintf("%s/secret", ws);
    size_t at = 0, opt = 0, found = 0;
    for (size_t off = 0; off < b->len; off += strlen(b->p + off) + 1) {
        const char *a = b->p + off;
        if (a[0] == '-' && a[1] == '-') opt = off;
        if (strcmp(a, secret) == 0 && opt > at) {
            found = opt;
            break;
        }
    }
    free(secret);
    if (!found) die("deny", "no option names WS/secret");
    size_t head = strlen("--seccomp") + 3 + strlen("--json-status-fd") + 3, fixed = strlen("--setenv") + strlen("DRUN_PAD") + 3;
    size_t pad = PAGE - found % PAGE;
    if (pad < fixed + 1) pad += PAGE;
    buf_t out = BUF_INIT;
    buf_add(&out, b->p, head);
    buf_add(&out, "--setenv\0DRUN_PAD", fixed - 1);
    for (size_t i = 0; i < pad - fixed; i++) buf_add(&out, "x", 1);
    buf_add(&out, "", 1);
    buf_add(&out, b->p + head, b->len - head);
    buf_free(b);
    *b = out;
    return (found + pad) / PAGE;
}

/* ---- one run --------------------------------------------------------------------------------------------- */

typedef struct {
    sandbox_t *s;
    sbx_exec_t x;
    const char *mode, *arg;
    bool detached;
} run_t;

static void reap_all(void)
{
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {}
}

/* Is p blocked for good? A process that comes back to us lost its parent
 * (ours is only the feeder). One sleeping in read() on an eventfd is bwrap's
 * sandbox child waiting for the uid map its dead parent was to write: no one
 * else holds that eventfd, so it never gets to the command. */
static bool waits_forever(pid_t p)
{
    char path[64], link[64];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)p);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    long nr = -1;
    unsigned long fd = 0;
    bool in_read = fscanf(f, "%ld %lx", &nr, &fd) == 2 && nr == SYS_read;
    fclose(f);
    if (!in_read) return false;
    snprintf(path, sizeof path, "/proc/%d/fd/%lu", (int)p, fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n < 0) return false;
    link[n] = 0;
    return !strcmp(link, "anon_inode:[eventfd]");
}

/* Calls fn on each process whose parent is us; the number of calls that
 * returned true. The list is the kernel's (/proc/self/task/TID/children:
 * this process has one thread, the one orphans are reparented to), not a
 * scan of every /proc/PID/stat: reap_for asks twice a round, and reading
 * all of /proc each time was most of this helper's own CPU. */
static int each_child(bool (*fn)(pid_t))
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "r");
    if (!f) die(path, NULL);
    int n = 0, p;
    while (fscanf(f, "%d", &p) == 1)
        if (fn((pid_t)p)) n++;
    fclose(f);
    return n;
}

static bool is_child(pid_t p) { return p > 0; }
static bool kill_one(pid_t p) { return kill(p, SIGKILL) == 0; }

/* Reaps what comes back to us until nothing is left, or until everything
 * left waits forever (waits_forever); at most secs seconds (a bound on the
 * cleanup, not a measure). */
static void reap_for(int secs)
{
    long long end = now_ns() + secs * 1000000000LL;
    while (now_ns() < end) {
        pid_t p = waitpid(-1, NULL, WNOHANG);
        if (p < 0 && errno == ECHILD) return;
        if (p > 0) continue;
        int left = each_child(is_child);
        if (left > 0 && each_child(waits_forever) == left) return;
        usleep(20000); /* each round reads all of /proc twice: every 2 ms, that was the suite's main cost */
    }
}

/* SIGKILLs our children still there: a bwrap whose own parent was killed
 * after it had cloned its sandbox child leaves that child waiting forever
 * for the uid map (bwrap's eventfd) — it never gets to the command, and
 * once killed never can. Their count. */
static int kill_children(void) { return each_child(kill_one); }

/* The feeder: prestarts bwrap as sandbox_spawn does, plans, feeds. */
static void feeder(run_t *r)
{
    char *err = NULL;
    int ws_fd = hoststate_open_dir("workspace", r->x.workspace, -1, &err);
    if (ws_fd < 0) die("workspace", err);
    r->x.workspace_fd = ws_fd;
    bool drop = hoststate_ident()->drop;
    long long t0 = now_ns();
    if (!strcmp(r->mode, "delay")) {
        kill_at = t0 + atoll(r->arg);
        pthread_t t;
        if (pthread_create(&t, NULL, delay_killer, NULL) != 0) die("thread", NULL);
    }
    sbx_early_t *e = sbx_prestart(r->s->bwrap_bin, r->s->shim, &r->x, drop ? r->s : NULL, &err);
    if (!e) die("prestart", err);
    buf_t opts = BUF_INIT;
    pack(r->s, &r->x, &opts);
    if (!strcmp(r->mode, "dump")) {
        for (size_t off = 0; off < opts.len; off += strlen(opts.p + off) + 1) printf("%s\n", opts.p + off);
        sandbox_early_abort(e);
        return;
    }
    buf_t feed = opts;
    if (!strcmp(r->mode, "uffd")) {
        size_t page = !strcmp(r->arg, "deny") ? pad_to_deny(&opts, r->x.workspace) : (size_t)atol(r->arg);
        printf("cut at page %zu of %zu (byte %zu)\n", page, (opts.len + PAGE - 1) / PAGE, page * PAGE);
        fflush(stdout);
        if (r->detached) {
            pid_t sub = fork();
            if (sub < 0) die("fork", NULL);
            if (sub > 0) {
                /* bwrap's parent stays: only the forked feeder holds the write ends */
                close(e->args_fd), close(e->seccomp_fd);
                reap_all();
                return;
            }
        }
        /* after the fork: a child's copy of the memory would not fault into uffd */
        feed = opts;
        feed.p = faulting_copy(&opts, page);
        pthread_t t;
        if (pthread_create(&t, NULL, fault_killer, NULL) != 0) die("thread", NULL);
    }
    bool ok = sbx_early_feed(r->s, e, &feed);
    long long t1 = now_ns();
    if (!ok) {
        sandbox_early_abort(e);
        die("feed", "refused");
    }
    if (!strcmp(r->mode, "time")) printf("feed-ns %lld\n", t1 - t0);
    fflush(stdout);
    reap_all();
}

/* One kill: a fresh feeder (and bwrap) for r, then everything it left
 * reaped, or killed when stuck; the number killed. */
static int one_kill(run_t *r)
{
    fflush(stdout);
    pid_t f = fork();
    if (f < 0) die("fork", NULL);
    if (f == 0) {
        feeder(r);
        fflush(stdout);
        _exit(0);
    }
    int st;
    while (waitpid(f, &st, 0) < 0 && errno == EINTR) {}
    reap_for(3);
    int stuck = kill_children();
    reap_all();
    return stuck;
}

/* Is WS/name there (through the kept fd of WS: the sandbox could write WS)? */
static int mark_is(int ws, const char *name)
{
    struct stat sb;
    return fstatat(ws, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
}

static void mark_clear(int ws, const char *name)
{
    if (unlinkat(ws, name, 0) != 0 && errno != ENOENT) die("unlink mark", NULL);
}

/* Many kills of one mode ("delay" or "uffd"), one per argument. */
static void many_kills(run_t *r, const char *ws, char **args, int n)
{
    int wfd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wfd < 0) die(ws, NULL);
    const char *b = getenv("PK_BUDGET");
    long long end = b ? now_ns() + atoll(b) * 1000000000LL : 0;
    for (int i = 0; i < n; i++) {
        if (end && now_ns() > end) {
            printf("skipped %d %s\n", i + 1, args[i]);
            continue;
        }
        mark_clear(wfd, "weak"), mark_clear(wfd, "full");
        printf("begin %d %s\n", i + 1, args[i]);
        r->arg = args[i];
        int stuck = one_kill(r);
        /* on a line of its own: a bwrap killed mid-message ("bwrap: ") leaves no newline */
        printf("\nend %d %s weak=%d full=%d stuck=%d\n", i + 1, args[i], mark_is(wfd, "weak"), mark_is(wfd, "full"),
               stuck);
    }
    fflush(stdout);
    close(wfd);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: prestart_kill POLICY WS SCRATCH dump|time|delay NS|uffd PAGE|deny [detached]\n"
                        "       prestart_kill POLICY WS SCRATCH delays NS...|uffds attached|detached PAGE|deny...\n");
        return 2;
    }
    run_t r = {0};
    r.mode = argv[4];
    r.arg = argc > 5 ? argv[5] : "0";
    r.detached = argc > 6 && !strcmp(argv[6], "detached");
    char **many = NULL;
    int nmany = 0;
    if (!strcmp(r.mode, "delays")) {
        r.mode = "delay", many = argv + 5, nmany = argc - 5;
    } else if (!strcmp(r.mode, "uffds")) {
        if (argc < 6) die("uffds", "attached or detached?");
        r.mode = "uffd", r.detached = !strcmp(argv[5], "detached"), many = argv + 6, nmany = argc - 6;
    }
    diag_list_t d = {0};
    char *err = NULL;
    policy_t *p = policy_load(argv[1], &d, &err);
    if (!p) die("policy", err ? err : "does not compile");
    if (!(r.s = sandbox_new(p, NULL, &d, &err))) die("sandbox", err);
    static char script[1024];
    snprintf(script, sizeof script,
             "if cat '%s/secret/key' > /dev/null 2>&1; then echo weak; : > '%s/weak'; "
             "else echo full; : > '%s/full'; fi",
             argv[2], argv[2], argv[2]);
    static char *cmd[] = {"/bin/sh", "-c", script, NULL};
    r.x = (sbx_exec_t){argv[2], argv[3], cmd, -1, 1, 2, false, NULL, NULL, false, NULL, -1, -1};
    /* every process below us comes back to us when its parent dies */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) die("subreaper", NULL);
    if (many) {
        many_kills(&r, argv[2], many, nmany);
    } else {
        int stuck = one_kill(&r);
        if (stuck) printf("stuck %d\n", stuck);
    }
    sandbox_free(r.s);
    policy_free(p);
    diag_list_free(&d);
    return 0;
}
