/* sandbox.c — compile a policy for this Linux host and run commands under it.
 *
 * The bwrap vector is planned per run (the session part depends on what the
 * workspace holds) and handed to bwrap through --args, never on the command
 * line, so no argument ever meets the kernel's 128 KiB per-argument limit.
 * The seccomp program goes through --seccomp. Nothing is built by a shell.
 */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf.h"
#include "bwrap.h"
#include "compile.h"
#include "lattice.h"
#include "fsutil.h"
#include "jsonr.h"
#include "paths.h"
#include "seccomp_filter.h"

extern char **environ;

struct sandbox {
    const policy_t *pol;
    policy_t *owned_pol;   /* --artifacts: the policy rebuilt from the manifest */
    facts_t *facts;
    bool owns_facts;
    resolved_t *res;
    buf_t seccomp;         /* the program bwrap loads */
    char *bwrap_bin;       /* absolute path of bwrap */
    char *shim[4];         /* runs before the command inside: prlimit --nproc (or
                              env as root), which also gives 126/127 like a shell */
};

struct sbx_residue {
    VEC(char *) paths; /* placeholders to remove after the run */
    int status_fd;     /* read end of bwrap's --json-status-fd, or -1 */
    int lock_fd;       /* shared lock on the workspace while the run lasts, or -1 */
    char *pending;     /* the workspace's list of placeholders left for the last run out */
    char *pool;        /* the placeholder pool (below), or NULL */
    buf_t status;      /* what bwrap's status report said so far (sandbox_pid1) */
};

/* bwrap refuses more arguments than this (its MAX_ARGS), all of --args included. */
#define BWRAP_MAX_ARGS 9000

/* fds in the bwrap child: 3 the arguments (--args), 4 the seccomp program,
 * 5 the status report (--json-status-fd); nothing else. */

/* The device nodes bwrap's --dev binds from the host. */
static const struct {
    const char *name;
    unsigned maj, min;
} dev_nodes[] = {{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}};

/* Finds an executable in $PATH (or the usual places when PATH is unset). */
static char *find_exec(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = xstrdup(path), *save = NULL, *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        if (*d != '/') continue;
        char *cand = xasprintf("%s/%s", d, name);
        if (access(cand, X_OK) == 0) found = cand;
        else free(cand);
    }
    free(copy);
    return found;
}

char *sandbox_find_bwrap(void) { return find_exec("bwrap"); }

static bool finish_new(sandbox_t *s, char **err)
{
    s->res = policy_resolve(s->pol, s->facts);
    s->bwrap_bin = find_exec("bwrap");
    if (!s->bwrap_bin) {
        *err = xstrdup("bubblewrap (bwrap) is not installed: apt-get install bubblewrap");
        return false;
    }
    /* Not root: the command starts through prlimit, which sets RLIMIT_NPROC
     * inside the user namespace (set outside, it would count all of the
     * caller's processes) and exits 127/126 like a shell when the command
     * cannot be run. As root the kernel does not apply NPROC, so no shim:
     * sandbox_spawn looks the command up itself (one process start less). */
    if (geteuid() != 0 && access("/usr/bin/prlimit", X_OK) == 0) {
        s->shim[0] = xstrdup("/usr/bin/prlimit");
        s->shim[1] = xasprintf("--nproc=%lld", (long long)policy_get(s->pol, S_MAX_PROCESSES));
        s->shim[2] = xstrdup("--");
    }
    return true;
}

sandbox_t *sandbox_new(const policy_t *p, const facts_t *f, diag_list_t *diags, char **err)
{
    (void)diags;
    *err = NULL;
    sandbox_t *s = xcalloc(1, sizeof *s);
    s->pol = p;
    if (f) {
        s->facts = (facts_t *)f;
    } else {
        const char *none[2] = {NULL, NULL};
        if (!(s->facts = facts_for(p, TARGET_LINUX, none, err))) goto fail;
        s->owns_facts = true;
    }
    seccomp_opts_t so = {SECCOMP_X86_64, policy_get(p, S_ALLOW_UNIX_SOCKETS) != 0};
    if (!seccomp_arch_from_name(s->facts->arch, &so.arch)) {
        *err = xasprintf("no seccomp filter for architecture '%s'", s->facts->arch);
        goto fail;
    }
    if (!seccomp_build(&so, &s->seccomp, err)) goto fail;
    if (!finish_new(s, err)) goto fail;
    return s;
fail:
    sandbox_free(s);
    return NULL;
}

static const char *json_str(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* Checks dir/name against the manifest's sha256 and loads it into out. */
static bool load_checked(const char *dir, const char *name, const json_t *hashes, buf_t *out, char **err)
{
    char *path = xasprintf("%s/%s", dir, name);
    bool ok = read_file(path, out, err);
    free(path);
    if (!ok) return false;
    const char *want = json_str(hashes, name);
    char hex[65];
    sha256_hex(out->p ? out->p : "", out->len, hex);
    if (!want || strcmp(want, hex) != 0) {
        *err = xasprintf("%s/%s does not match the sha256 in policy.json: the artifacts were changed after "
                         "they were compiled", dir, name);
        return false;
    }
    return true;
}

sandbox_t *sandbox_from_artifacts(const char *dir, char **err)
{
    *err = NULL;
    sandbox_t *s = xcalloc(1, sizeof *s);
    buf_t man = BUF_INIT, args = BUF_INIT;
    json_t *root = NULL;
    char *mpath = xasprintf("%s/policy.json", dir);
    bool ok = read_file(mpath, &man, err);
    free(mpath);
    if (!ok) goto fail;
    root = jsonr_load(man.p, man.len, NULL);
    const json_t *src = json_object_get(root, "source");
    const json_t *hashes = json_object_get(root, "artifacts");
    const json_t *facts = json_object_get(json_object_get(root, "facts"), "linux");
    const char *text = json_str(src, "text"), *sha = json_str(src, "sha256"), *name = json_str(src, "path");
    if (!root || !text || !sha || !json_is_object(facts) || !json_is_object(hashes)) {
        *err = xasprintf("%s/policy.json is not a drun-policy manifest with Linux artifacts", dir);
        goto fail;
    }
    char hex[65];
    sha256_hex(text, strlen(text), hex);
    if (strcmp(hex, sha) != 0) {
        *err = xasprintf("%s/policy.json: the embedded source does not match its sha256", dir);
        goto fail;
    }
    diag_list_t d = {0};
    s->owned_pol = policy_build(source_new(name ? name : "<artifacts>", text, strlen(text)), TOML_1_1, &d);
    if (!s->owned_pol) {
        buf_t b = BUF_INIT;
        diag_render_all(&b, &d, false);
        *err = xasprintf("%s/policy.json: the embedded source no longer compiles:\n%s", dir, buf_cstr(&b));
        buf_free(&b);
        diag_list_free(&d);
        goto fail;
    }
    diag_list_free(&d);
    if (name) s->owned_pol->path = arena_strdup(&s->owned_pol->arena, name);
    s->pol = s->owned_pol;
    char *ftext = json_dumps(facts, JSON_COMPACT);
    s->facts = ftext ? facts_from_json(ftext, strlen(ftext), err) : NULL;
    if (!ftext) *err = xstrdup("out of memory");
    free(ftext);
    if (!s->facts) goto fail;
    s->owns_facts = true;
    if (!load_checked(dir, "bwrap.args", hashes, &args, err) || !load_checked(dir, "seccomp.bpf", hashes, &s->seccomp, err))
        goto fail;
    size_t bad_pc;
    const char *why;
    if (!bpf_check(s->seccomp.p, s->seccomp.len, &bad_pc, &why)) {
        *err = xasprintf("%s/seccomp.bpf is not a valid seccomp program (instruction %zu: %s)", dir, bad_pc, why);
        goto fail;
    }
    /* The reviewed vector must be exactly what this compiler plans from the
     * reviewed source and facts; otherwise what runs is not what was read. */
    if (!finish_new(s, err)) goto fail;
    bwrap_t *b = bwrap_plan(s->res, NULL, err);
    if (!b) goto fail;
    buf_t again = BUF_INIT;
    bwrap_render(b, &again);
    bwrap_free(b);
    bool same = again.len == args.len && (args.len == 0 || memcmp(again.p, args.p, args.len) == 0);
    buf_free(&again);
    if (!same) {
        *err = xasprintf("%s/bwrap.args differs from what drun-policy %s compiles from the same source and "
                         "facts: recompile the artifacts with this version", dir, DRUN_VERSION);
        goto fail;
    }
    buf_free(&man);
    buf_free(&args);
    json_decref(root);
    return s;
fail:
    buf_free(&man);
    buf_free(&args);
    json_decref(root);
    sandbox_free(s);
    return NULL;
}

const policy_t *sandbox_policy(const sandbox_t *s) { return s->pol; }

void sandbox_free(sandbox_t *s)
{
    if (!s) return;
    resolved_free(s->res);
    if (s->owns_facts) facts_free(s->facts);
    policy_free(s->owned_pol);
    buf_free(&s->seccomp);
    free(s->bwrap_bin);
    for (int i = 0; i < 4; i++) free(s->shim[i]);
    free(s);
}

/* ---- planning one run -------------------------------------------------------------------------------------- */

static bool session_roots(const sbx_exec_t *x, char ws[PATH_MAX], char sc[PATH_MAX], char **err)
{
    if (!x->workspace || !realpath(x->workspace, ws)) {
        *err = xasprintf("workspace '%s': %s", x->workspace ? x->workspace : "(none)", strerror(errno));
        return false;
    }
    if (!x->scratch || !realpath(x->scratch, sc)) {
        *err = xasprintf("scratch dir '%s': %s", x->scratch ? x->scratch : "(none)", strerror(errno));
        return false;
    }
    struct stat st;
    if (stat(ws, &st) != 0 || !S_ISDIR(st.st_mode) || stat(sc, &st) != 0 || !S_ISDIR(st.st_mode)) {
        *err = xstrdup("the workspace and the scratch dir must be directories");
        return false;
    }
    return true;
}

/* The whole vector: options (through --args), then "--", then the command. */
static bwrap_t *plan_run(const sandbox_t *s, const sbx_exec_t *x, roots_t *roots, char ws[PATH_MAX],
                         char sc[PATH_MAX], char **err)
{
    if (!session_roots(x, ws, sc, err)) return NULL;
    roots->workspace = ws;
    roots->scratch = sc;
    roots->hide = x->hide;
    roots->scratch_tmpfs = x->scratch_tmpfs;
    return bwrap_plan(s->res, roots, err);
}

typedef VEC(char *) strvec_t;

static void free_strvec(strvec_t *v)
{
    for (size_t i = 0; i < v->n; i++) free(v->v[i]);
    vec_free(v);
}

static bool private_dev_nodes(strvec_t *opts, char **err);

/* A name beside a file being remade, unique to this call: threads of one
 * drun-mcp remake the same file at the same time. */
static char *remake_name(const char *dir, const char *name)
{
    static _Atomic unsigned long seq;
    return xasprintf("%s/.%s.%ld.%lu", dir, name, (long)getpid(), ++seq);
}

static bool empty_file_ok(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 && st.st_uid == geteuid() &&
           (st.st_mode & 07777) == 0444 && st.st_nlink == 1;
}

/* The empty read-only file every block of a missing file binds
 * (bwrap_argv): $XDG_STATE_HOME/drun/empty, mode 0444, made again (beside,
 * then renamed over) when it is anything else. Caller frees. */
static char *empty_file(char **err)
{
    char *dir = state_path("");
    char *path = xasprintf("%s/empty", dir);
    if (!empty_file_ok(path)) {
        char *tmp = remake_name(dir, "empty");
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        bool ok = fd >= 0 && fchmod(fd, 0444) == 0;
        if (fd >= 0 && close(fd) != 0) ok = false;
        ok = ok && rename(tmp, path) == 0;
        if (!ok && !empty_file_ok(path)) { /* another thread may have made it meanwhile */
            *err = xasprintf("cannot create %s: %s", path, strerror(errno));
            free(path);
            path = NULL;
        }
        unlink(tmp);
        free(tmp);
    }
    free(dir);
    return path;
}

char **sandbox_argv(const sandbox_t *s, const sbx_exec_t *x, size_t *argc, char **err)
{
    char ws[PATH_MAX], sc[PATH_MAX];
    roots_t roots;
    bwrap_t *b = plan_run(s, x, &roots, ws, sc, err);
    if (!b) return NULL;
    strvec_t v = {0};
    vec_push(&v, xstrdup(s->bwrap_bin));
    char *empty = empty_file(err);
    if (empty) bwrap_argv(b, &roots, x->host_env ? x->host_env : environ, empty, &v);
    bwrap_free(b);
    if (!empty || (geteuid() == 0 && !private_dev_nodes(&v, err))) { /* as sandbox_spawn adds them */
        free(empty);
        free_strvec(&v);
        return NULL;
    }
    free(empty);
    *argc = v.n;
    vec_push(&v, (char *)NULL);
    return v.v;
}

void sandbox_argv_free(char **argv, size_t argc)
{
    if (!argv) return;
    for (size_t i = 0; i < argc; i++) free(argv[i]);
    free(argv);
}

/* A sealed in-memory file holding data, for bwrap to read (the fallback
 * when the arguments do not fit a pipe, below). */
static int data_fd(const char *name, const void *data, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    lseek(fd, 0, SEEK_SET);
    return fd;
}

/* Sets a limit of the waiting bwrap, which its command inherits. Above the
 * caller's hard limit (raising it needs CAP_SYS_RESOURCE): the most the
 * caller may give, never more than the policy's, rather than silently
 * keeping the caller's soft limit. */
static void set_limit(pid_t pid, int res, rlim_t v) /* pid 0: this process */
{
    struct rlimit rl = {v, v}, cur;
    if (prlimit(pid, res, &rl, NULL) == 0) return;
    if (prlimit(pid, res, NULL, &cur) != 0) return;
    if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v) rl.rlim_cur = rl.rlim_max = cur.rlim_max;
    prlimit(pid, res, &rl, NULL);
}

static void set_limits(const sandbox_t *s, pid_t pid)
{
    const policy_t *p = s->pol;
    set_limit(pid, RLIMIT_AS, (rlim_t)policy_get(p, S_MEMORY_MB) << 20);
    set_limit(pid, RLIMIT_CPU, (rlim_t)policy_get(p, S_CPU_SECONDS));
    set_limit(pid, RLIMIT_FSIZE, (rlim_t)policy_get(p, S_MAX_FILE_SIZE_MB) << 20);
    set_limit(pid, RLIMIT_NOFILE, (rlim_t)policy_get(p, S_MAX_OPEN_FILES));
    /* As root the limit is visible inside (ulimit -u) though the kernel does
     * not apply it to uid 0; otherwise prlimit sets it inside the namespace. */
    if (geteuid() == 0) set_limit(pid, RLIMIT_NPROC, (rlim_t)policy_get(p, S_MAX_PROCESSES));
}

/* In the child: only async-signal-safe calls from here to exec. limits:
 * set them here (bwrap will not wait for them), or NULL. */
static void child(const char *bwrap_bin, char **argv, const sbx_exec_t *x, int afd, int sfd, int jfd,
                  const sandbox_t *limits, const sigset_t *mask)
{
    /* A vfork child shares the caller's memory: none of the caller's signal
     * handlers may run here (they would write the caller's state), so every
     * handled signal goes back to its default before the caller's mask
     * returns. Ignored ones stay ignored (nohup), but for SIGPIPE: `yes |
     * head` in the sandbox must end as it does outside. */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            (sa.sa_handler != SIG_IGN || sig == SIGPIPE)) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            sigaction(sig, &sa, NULL);
        }
    }
    /* the caller gone before the arguments came: gone too (bwrap's own
     * --die-with-parent takes over once it has read them) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    int a = fcntl(afd, F_DUPFD, 64), f = fcntl(sfd, F_DUPFD, 64), j = fcntl(jfd, F_DUPFD, 64);
    int fds[3] = {x->fd_in, x->fd_out, x->fd_err};
    for (int i = 0; i < 3; i++) {
        int src = fds[i] >= 0 ? fds[i] : open("/dev/null", O_RDWR);
        if (src != i) dup2(src, i);
    }
    dup2(a, 3);
    dup2(f, 4);
    dup2(j, 5);
    /* nothing of the caller's (sockets, other sessions' pipes) crosses over */
    syscall(SYS_close_range, 6U, ~0U, 0U);
    if (x->new_pgrp) setpgid(0, 0);
    if (limits) set_limits(limits, 0);
    char *envp[] = {NULL};
    execve(bwrap_bin, argv, envp);
    _exit(127);
}

/* vfork, not fork: the child only rearranges fds and execs, and a fork of a
 * large or multi-threaded caller (drun-mcp) copies its page tables and then
 * pays a copy-on-write fault on every page it writes next — on the request
 * path, after the command. The parent thread waits until the exec; the child
 * touches nothing of the parent's memory but its own stack. In its own
 * function so that no variable of the caller lives across it. */
static __attribute__((noinline)) pid_t start_bwrap(const char *bwrap_bin, char **argv, const sbx_exec_t *x,
                                                   int afd, int sfd, int jfd, const sandbox_t *limits)
{
    sigset_t all, mask;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &mask); /* nothing runs a handler until the child reset them */
    pid_t pid = vfork();
    if (pid == 0) child(bwrap_bin, argv, x, afd, sfd, jfd, limits, &mask);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    errno = saved;
    return pid;
}

/* ---- bwrap started ahead of its plan -------------------------------------------------------------------------- */

/* Starting bwrap (exec, its three libraries, its own setup) takes longer
 * than compiling and planning a run, and none of it depends on them: so
 * bwrap is started first, as "bwrap --args 3 -- [SHIM...] CMD ARGS...",
 * reading every option from a pipe (fd 3) and its filter from another (fd
 * 4), while the caller compiles and plans; then its limits are set, the
 * filter and the options written, and it goes on. bwrap takes the command
 * only from its own argv, so what keeps a run from going ahead half-set-up
 * is that the options arrive whole or not at all: each pipe is written with
 * one write() into a pipe made large enough for all of it (a pipe write
 * that never has to wait is not cut short), the filter first; a run given
 * up on is killed (SIGKILL, then reaped) before its pipes close; and a
 * caller that dies first leaves it no options at all (PR_SET_PDEATHSIG kills
 * it too): bwrap then builds an empty root, in which the command does not
 * exist, and loads an empty filter, which the kernel refuses. */
struct sbx_early {
    pid_t pid;
    int args_fd;    /* write ends: bwrap's fd 3 (--args) and 4 (--seccomp) */
    int seccomp_fd;
    int status_fd;  /* read end of bwrap's fd 5 (--json-status-fd) */
    bool shim;      /* started with the sandbox's shim before the command */
};

/* "bwrap --args 3 -- [SHIM...] CMD ARGS...", NULL-terminated, in *v. */
static void bwrap_cmdline(char *const *shim, char *const *cmd, strvec_t *v)
{
    const char *head[] = {"bwrap", "--args", "3", "--"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) vec_push(v, xstrdup(head[i]));
    for (int i = 0; shim && i < 4 && shim[i]; i++) vec_push(v, xstrdup(shim[i]));
    for (; *cmd; cmd++) vec_push(v, xstrdup(*cmd));
    vec_push(v, (char *)NULL);
    v->n--; /* the NULL stays after the end */
}

/* Starts bwrap reading its options from afd and its filter from sfd (the
 * caller's ends; they are closed here, whatever happens), with a status
 * pipe of its own. limits: set them before the exec, or NULL (prlimit later).
 * args_fd/seccomp_fd: what the caller writes to, or -1; kept in the result. */
static sbx_early_t *launch(const char *bwrap_bin, char *const *shim, const sbx_exec_t *x, int afd, int sfd,
                           int args_fd, int seccomp_fd, const sandbox_t *limits, char **err)
{
    int jp[2] = {-1, -1};
    pid_t pid = -1;
    int saved = 0;
    if (pipe2(jp, O_CLOEXEC) != 0) {
        saved = errno;
    } else {
        strvec_t argv = {0};
        bwrap_cmdline(shim, x->argv, &argv);
        pid = start_bwrap(bwrap_bin, argv.v, x, afd, sfd, jp[1], limits);
        saved = errno;
        free_strvec(&argv);
        close(jp[1]);
    }
    close(afd);
    close(sfd);
    if (pid < 0) {
        *err = xasprintf("cannot start bwrap: %s", strerror(saved));
        if (jp[0] >= 0) close(jp[0]);
        if (args_fd >= 0) close(args_fd);
        if (seccomp_fd >= 0) close(seccomp_fd);
        return NULL;
    }
    if (x->new_pgrp) setpgid(pid, pid); /* no race with the child's own call */
    sbx_early_t *e = xcalloc(1, sizeof *e);
    *e = (sbx_early_t){pid, args_fd, seccomp_fd, jp[0], shim && shim[0]};
    return e;
}

static sbx_early_t *prestart(const char *bwrap_bin, char *const *shim, const sbx_exec_t *x, char **err)
{
    int ap[2] = {-1, -1}, sp[2] = {-1, -1};
    if (pipe2(ap, O_CLOEXEC) != 0 || pipe2(sp, O_CLOEXEC) != 0) {
        *err = xasprintf("cannot pass the sandbox setup to bwrap: %s", strerror(errno));
        int fds[] = {ap[0], ap[1], sp[0], sp[1]};
        for (size_t i = 0; i < 4; i++)
            if (fds[i] >= 0) close(fds[i]);
        return NULL;
    }
    return launch(bwrap_bin, shim, x, ap[0], sp[0], ap[1], sp[1], NULL, err);
}

sbx_early_t *sandbox_prestart(const char *bwrap_bin, const sbx_exec_t *x, char **err)
{
    return prestart(bwrap_bin, NULL, x, err);
}

void sandbox_early_abort(sbx_early_t *e)
{
    if (!e) return;
    /* killed while its pipes are still open: it never sees an end of input */
    kill(e->pid, SIGKILL);
    while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR) {}
    int fds[] = {e->args_fd, e->seccomp_fd, e->status_fd};
    for (size_t i = 0; i < 3; i++)
        if (fds[i] >= 0) close(fds[i]);
    free(e);
}

/* All of data into a pipe nobody has read from yet, in one write(): the
 * pipe is first made large enough (a new pipe has 64 KiB, or one page once
 * the user's pipe quota is spent). False when it cannot be, or the write
 * fails: the caller then kills the reader. A closed reader (bwrap died) is
 * an error, not a SIGPIPE. */
static bool write_whole(int fd, const void *data, size_t len)
{
    if (len > INT_MAX) return false;
    int cap = fcntl(fd, F_GETPIPE_SZ);
    if (cap < 0 || ((size_t)cap < len && fcntl(fd, F_SETPIPE_SZ, (int)len) < (int)len)) return false;
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t w;
    do w = write(fd, data, len);
    while (w < 0 && errno == EINTR);
    if (w < 0 && errno == EPIPE) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {} /* ours, not the caller's */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return w == (ssize_t)len;
}

/* Options up to this size go through the pipe: a pipe of that size is
 * allowed to any user (pipe-max-size is 1 MiB by default). Larger ones (some
 * 7,000 mounts) go through sealed memory to a fresh bwrap (start_loaded). */
#define PIPE_ARGS_MAX (256 * 1024)

/* Hands the waiting bwrap its limits, filter and arguments. False when it
 * could not take them; the caller then kills it. */
static bool early_feed(const sandbox_t *s, sbx_early_t *e, const buf_t *args)
{
    if (args->len > PIPE_ARGS_MAX) return false;
    set_limits(s, e->pid);
    bool ok = write_whole(e->seccomp_fd, s->seccomp.p, s->seccomp.len);
    close(e->seccomp_fd);
    e->seccomp_fd = -1;
    ok = ok && write_whole(e->args_fd, args->p, args->len);
    if (!ok) return false;
    close(e->args_fd);
    e->args_fd = -1;
    return true;
}

/* The fallback for arguments that no pipe can hold at once: a fresh bwrap
 * that reads them from sealed memory, as complete as they are. Its limits
 * are set before the exec: it does not wait for them. */
static sbx_early_t *start_loaded(const sandbox_t *s, const sbx_exec_t *x, const buf_t *args, char **err)
{
    int afd = data_fd("drun-bwrap-args", args->p, args->len);
    int sfd = data_fd("drun-seccomp", s->seccomp.p, s->seccomp.len);
    if (afd < 0 || sfd < 0) {
        *err = xasprintf("cannot pass the sandbox setup to bwrap: %s", strerror(errno));
        if (afd >= 0) close(afd);
        if (sfd >= 0) close(sfd);
        return NULL;
    }
    return launch(s->bwrap_bin, s->shim, x, afd, sfd, -1, -1, s, err);
}

/* As root, the sandbox uid maps to host uid 0, the owner of the device
 * nodes bwrap's --dev binds from the host: the sandbox could chmod the
 * host's /dev/null. It gets private nodes instead (mknod needs root, which
 * is exactly when this is needed), in a directory it cannot see, owned by
 * the overflow uid: mode 0666 lets it read and write them, but it neither
 * owns them nor holds a capability, so it cannot chmod or chown them either.
 * Nothing a run does changes them, so one set serves every run: each run
 * checks them and remakes (beside, then renamed over) any that is not
 * exactly right. */
#define NODE_OWNER 65534
static bool dev_node_ok(const char *node, dev_t dev)
{
    struct stat st;
    return lstat(node, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == dev && st.st_uid == NODE_OWNER &&
           st.st_gid == NODE_OWNER && (st.st_mode & 07777) == 0666;
}

static bool private_dev_nodes(strvec_t *opts, char **err)
{
    char *dir = state_path("dev");
    bool ok = true;
    for (size_t i = 0; ok && i < sizeof dev_nodes / sizeof *dev_nodes; i++) {
        dev_t dev = makedev(dev_nodes[i].maj, dev_nodes[i].min);
        char *node = xasprintf("%s/%s", dir, dev_nodes[i].name);
        if (!dev_node_ok(node, dev)) {
            char *tmp = remake_name(dir, dev_nodes[i].name);
            ok = mknod(tmp, S_IFCHR | 0600, dev) == 0 && chown(tmp, NODE_OWNER, NODE_OWNER) == 0 &&
                 chmod(tmp, 0666) == 0 && rename(tmp, node) == 0;
            if (!ok && !(ok = dev_node_ok(node, dev))) /* or another thread made it meanwhile */
                *err = xasprintf("cannot create private device node %s: %s", node, strerror(errno));
            unlink(tmp);
            free(tmp);
        }
        if (ok) {
            vec_push(opts, xstrdup("--dev-bind"));
            vec_push(opts, xstrdup(node));
            vec_push(opts, xasprintf("/dev/%s", dev_nodes[i].name));
        }
        free(node);
    }
    free(dir);
    return ok;
}

/* ---- the placeholder pool -------------------------------------------------------------------------------- */

/* bwrap blocks a protected path that does not exist yet by mounting on a
 * placeholder it creates on the host, where the workspace bind leads, and
 * the run removes it afterwards. For a directory (.git, .claude, ...) that
 * is a block allocated and freed each run, and freeing one is slow where
 * the filesystem discards synchronously: an rmdir took 0.2-0.6 ms on the VM
 * the benchmarks run on, four per run of the default policy. An empty file
 * (.bashrc, .gitconfig, ...: nine) costs an inode and a journal entry to
 * make, inside bwrap, while the run waits. So empty directories and empty
 * files wait in a pool under the state dir ("0".."63" and "f0".."f63") and
 * move in and out by rename, which allocates and frees nothing. A rename
 * cannot cross filesystems: on another one, bwrap makes the placeholder and
 * cleanup removes it as before. */
#define POOL_SLOTS 64

static bool dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

/* Still what a placeholder is when made: an empty directory, or an empty
 * regular file with no other name (a link elsewhere would be written
 * through). Never a symlink. st: its lstat, or NULL to make it here. */
static bool placeholder_is_blank(const char *path, bool dir, const struct stat *st)
{
    struct stat own;
    if (!st) {
        if (lstat(path, &own) != 0) return false;
        st = &own;
    }
    if (dir) return S_ISDIR(st->st_mode) && dir_is_empty(path);
    return S_ISREG(st->st_mode) && st->st_size == 0 && st->st_nlink == 1;
}

static void pool_slot(char *slot, size_t n, const char *pool, bool dir, int i)
{
    snprintf(slot, n, "%s/%s%d", pool, dir ? "" : "f", i);
}

/* The slots to try next: a run takes (or returns) several placeholders,
 * and each starts past the last slot emptied (or filled). */
typedef struct {
    int dir, file;
} pool_next_t;

/* Puts a blank pooled placeholder at path (missing, and its parent there:
 * the plan blocks at the first missing component), so that bwrap finds its
 * mount point made. False when the pool has none. */
static bool pool_take(const char *pool, const char *path, bool dir, pool_next_t *next)
{
    char slot[PATH_MAX];
    for (int *i = dir ? &next->dir : &next->file; *i < POOL_SLOTS; ++*i) {
        pool_slot(slot, sizeof slot, pool, dir, *i);
        if (renameat2(AT_FDCWD, slot, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
            if (errno == ENOENT) continue;
            return false; /* EXDEV (another filesystem), EEXIST (made meanwhile), ... */
        }
        if (placeholder_is_blank(path, dir, NULL)) {
            ++*i;
            return true;
        }
        /* Written into while it was being returned: not ours to reuse. Back
         * to its slot, and the next one; if even that fails it stays, under
         * the mount, and cleanup leaves it where it is. */
        if (renameat2(AT_FDCWD, path, AT_FDCWD, slot, RENAME_NOREPLACE) != 0) return false;
    }
    return false;
}

/* Returns a blank placeholder (st: its lstat) to the pool. False when it is
 * not blank, or the pool is full or on another filesystem: the caller
 * removes it instead. */
static bool pool_return(const char *pool, const char *path, const struct stat *st, pool_next_t *next)
{
    bool dir = S_ISDIR(st->st_mode);
    if (!pool || !placeholder_is_blank(path, dir, st)) return false;
    char slot[PATH_MAX];
    for (int *i = dir ? &next->dir : &next->file; *i < POOL_SLOTS; ++*i) {
        pool_slot(slot, sizeof slot, pool, dir, *i);
        if (renameat2(AT_FDCWD, path, AT_FDCWD, slot, RENAME_NOREPLACE) == 0) return true;
        if (errno != EEXIST) return false;
    }
    return false;
}

/* $XDG_STATE_HOME/drun/locks/<sha256 of the workspace>: a shared flock held
 * by every run in that workspace, and the ".pending" list of placeholders a
 * run could not remove because another one was still using them. */
static int workspace_lock(const char *ws, char **pending)
{
    char *dir = state_path("locks");
    char hex[65];
    sha256_hex(ws, strlen(ws), hex);
    char *path = xasprintf("%s/%s", dir, hex);
    *pending = xasprintf("%s.pending", path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && flock(fd, LOCK_SH) != 0) {
        close(fd);
        fd = -1;
    }
    free(path);
    free(dir);
    return fd;
}

/* What a shell would say before running argv[0] in the sandbox: 0 when it
 * can be run, 127 (not found) or 126 (not executable) with *err. The
 * sandbox's PATH holds host directories, and its workspace is the host's. */
static int precheck_command(const sandbox_t *s, const char *ws, const char *cmd, char **err)
{
    if (!cmd || !*cmd) {
        *err = xstrdup("an empty command");
        return 127;
    }
    if (strchr(cmd, '/')) {
        char *path = cmd[0] == '/' ? xstrdup(cmd) : xasprintf("%s/%s", ws, cmd);
        struct stat st;
        int rc = stat(path, &st) != 0 ? 127 : (!S_ISREG(st.st_mode) || access(path, X_OK) != 0) ? 126 : 0;
        free(path);
        if (rc) *err = xasprintf("%s: %s", cmd, rc == 127 ? "No such file or directory" : "Permission denied");
        return rc;
    }
    const facts_t *f = s->facts;
    bool pathdirs = policy_get(s->pol, S_READ_PATH_DIRS) && f->path_dirs.n;
    static const char *const std[] = {"/usr/local/bin", "/usr/bin", "/bin"};
    size_t n = pathdirs ? f->path_dirs.n : 3;
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", pathdirs ? f->path_dirs.v[i] : std[i], cmd);
        struct stat st;
        bool ok = stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
        free(path);
        if (ok) return 0;
    }
    *err = xasprintf("%s: command not found", cmd);
    return 127;
}

/* Removes one placeholder if it is still what bwrap made: an empty
 * directory or an empty file, back to the pool when it can. */
static void remove_placeholder(const char *pool, pool_next_t *next, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        if (!pool_return(pool, path, &st, next)) rmdir(path);
    } else if (S_ISREG(st.st_mode) && st.st_size == 0) {
        if (!pool_return(pool, path, &st, next)) unlink(path);
    }
}

/* On a failure before bwrap runs: the placeholders pool_take placed (took[i]
 * for residue i) go back; only those: the others may be a concurrent run's. */
static void unlock_workspace(int fd, char *pending, char *pool, const bwrap_t *b, bool *took)
{
    pool_next_t next = {0, 0};
    for (size_t i = 0; took && i < b->residue.n; i++)
        if (took[i]) remove_placeholder(pool, &next, b->residue.v[i].path);
    if (fd >= 0) close(fd);
    free(pending);
    free(pool);
    free(took);
}

int sandbox_spawn(const sandbox_t *s, const sbx_exec_t *x, pid_t *pid, sbx_residue_t **residue, char **err)
{
    *err = NULL;
    *residue = NULL;
    /* bwrap loads while the run is planned, unless the caller started it
     * earlier still (without a shim: one this sandbox needs means anew) */
    sbx_early_t *e = x->early;
    if (e && e->shim != (s->shim[0] != NULL)) {
        sandbox_early_abort(e);
        e = NULL;
    }
    if (!e && !(e = prestart(s->bwrap_bin, s->shim, x, err))) return -1;
    char ws[PATH_MAX], sc[PATH_MAX];
    if (!session_roots(x, ws, sc, err)) {
        sandbox_early_abort(e);
        return -1;
    }
    if (!s->shim[0]) {
        int rc = precheck_command(s, ws, x->argv[0], err);
        if (rc) {
            sandbox_early_abort(e);
            return rc;
        }
    }
    /* the shared lock comes before the plan: a run that is cleaning up holds
     * it exclusively, so nothing is planned on placeholders about to go */
    char *pending = NULL;
    int lock_fd = workspace_lock(ws, &pending);
    roots_t roots = {ws, sc, x->hide, x->scratch_tmpfs};
    bwrap_t *b = bwrap_plan(s->res, &roots, err);
    if (!b) {
        sandbox_early_abort(e);
        unlock_workspace(lock_fd, pending, NULL, NULL, NULL);
        return -1;
    }
    char *pool = state_path("pool");
    bool *took = xcalloc(b->residue.n + 1, sizeof *took);
    pool_next_t next = {0, 0};
    for (size_t i = 0; i < b->residue.n; i++)
        took[i] = pool_take(pool, b->residue.v[i].path, b->residue.v[i].dir, &next);
    /* --seccomp 4 --json-status-fd 5 OPTIONS..., through --args */
    strvec_t args = {0};
    const char *head[] = {"--seccomp", "4", "--json-status-fd", "5"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) vec_push(&args, xstrdup(head[i]));
    char *empty = empty_file(err);
    if (empty) bwrap_argv(b, &roots, x->host_env ? x->host_env : environ, empty, &args);
    /* after --dev in effect: nothing else mounts under /dev */
    bool ok = empty && (geteuid() != 0 || private_dev_nodes(&args, err));
    free(empty);
    size_t ncmd = 0;
    for (char *const *c = x->argv; *c; c++) ncmd++;
    if (ok && args.n + ncmd + 8 > BWRAP_MAX_ARGS) {
        *err = xasprintf("this policy needs %zu bwrap arguments here, and bwrap takes at most %d: "
                         "fewer rules (a common parent instead of many siblings)",
                         args.n + ncmd + 8, BWRAP_MAX_ARGS);
        ok = false;
    }
    if (!ok) {
        free_strvec(&args);
        sandbox_early_abort(e);
        unlock_workspace(lock_fd, pending, pool, b, took);
        bwrap_free(b);
        return -1;
    }
    buf_t packed = BUF_INIT;
    for (size_t i = 0; i < args.n; i++) buf_add(&packed, args.v[i], strlen(args.v[i]) + 1);
    free_strvec(&args);
    if (!early_feed(s, e, &packed)) {
        /* more than a pipe takes at once, or that bwrap is gone: a fresh one
         * that reads them, complete, from memory */
        sandbox_early_abort(e);
        e = start_loaded(s, x, &packed, err);
    }
    buf_free(&packed);
    if (!e) {
        unlock_workspace(lock_fd, pending, pool, b, took);
        bwrap_free(b);
        return -1;
    }
    sbx_residue_t *r = xcalloc(1, sizeof *r);
    r->status_fd = e->status_fd;
    r->lock_fd = lock_fd;
    r->pending = pending;
    r->pool = pool;
    free(took);
    for (size_t i = 0; i < b->residue.n; i++) vec_push(&r->paths, xstrdup(b->residue.v[i].path));
    bwrap_free(b);
    *pid = e->pid;
    free(e);
    *residue = r;
    return 0;
}

/* Reads what bwrap's status pipe holds now, without waiting; block: read to
 * its end (bwrap is gone) and close it. */
static void read_status(sbx_residue_t *r, bool to_end)
{
    if (!r || r->status_fd < 0) return;
    int fl = fcntl(r->status_fd, F_GETFL);
    if (fl >= 0 && !(fl & O_NONBLOCK)) fcntl(r->status_fd, F_SETFL, fl | O_NONBLOCK);
    char chunk[512];
    ssize_t n;
    while ((n = read(r->status_fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) buf_add(&r->status, chunk, (size_t)n);
    if (to_end || n == 0) {
        close(r->status_fd);
        r->status_fd = -1;
    }
}

/* bwrap writes {"child-pid": N} once the command runs: N, or 0. */
static pid_t status_child_pid(buf_t *b)
{
    const char *cp = b->len ? strstr(buf_cstr(b), "\"child-pid\"") : NULL;
    if (!cp) return 0;
    cp += strlen("\"child-pid\"");
    while (*cp == ' ' || *cp == ':') cp++;
    long v = strtol(cp, NULL, 10);
    return v > 0 && v <= INT_MAX ? (pid_t)v : 0;
}

pid_t sandbox_pid1(sbx_residue_t *r)
{
    if (!r) return 0;
    pid_t p = status_child_pid(&r->status);
    if (p) return p;
    read_status(r, false);
    return status_child_pid(&r->status);
}

void sandbox_status(sbx_residue_t *r, int wait_status, sbx_status_t *st)
{
    memset(st, 0, sizeof *st);
    /* bwrap writes {"child-pid": N} once the command runs, and
     * {"exit-code": N} when it ends; no child-pid means setup failed. */
    read_status(r, true);
    bool started = r && r->status.len && strstr(buf_cstr(&r->status), "\"child-pid\"");
    st->sandbox_pid = r ? status_child_pid(&r->status) : 0;
    if (WIFSIGNALED(wait_status)) {
        st->term_signal = WTERMSIG(wait_status);
        st->exit_code = 128 + st->term_signal;
    } else {
        st->exit_code = WEXITSTATUS(wait_status);
        /* bwrap reports a command killed by a signal as 128+N */
        if (started && st->exit_code > 128 && st->exit_code < 128 + 65) st->term_signal = st->exit_code - 128;
    }
    st->setup_failed = !started && !WIFSIGNALED(wait_status);
}

/* True when no process the command started can still run: the sandbox's
 * pid 1 has no child (not even a zombie), read from
 * /proc/PID/task/PID/children. Every other process of the sandbox descends
 * from pid 1: orphans of the sandbox go to it, clone(CLONE_PARENT) only makes
 * a sibling (a child of pid 1 again; pid 1 itself may not use it), and pid 1,
 * bwrap's, starts nothing after the command. So nothing can appear once the
 * list is empty. What is left is pid 1 ending, which runs none of the
 * command's code: the placeholders can go while the kernel tears its mounts
 * down, which took half a millisecond of each run (make bench: "sandbox after
 * bwrap's exit"). A pid 1 already reaped (its pid perhaps reused) means the
 * whole sandbox has gone. Anything not read cleanly means wait. */
static bool command_gone(pid_t pid1)
{
    char path[64], text[32];
    if (pid1 <= 0) return false;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid1, (int)pid1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, text, sizeof text);
    close(fd);
    return n == 0;
}

void sandbox_wait_finish(sbx_residue_t *r, pid_t pid, sbx_status_t *st)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sandbox_status(r, status, st);
    /* bwrap exits once the command has, and may leave the sandbox's pid 1
     * still ending: the kernel kills and reaps every other process of the
     * sandbox before pid 1 ends, and the last of them takes the sandbox's
     * mounts with it. Until no process of the command is left a placeholder
     * must stay: removing it detaches what is mounted on it in every
     * namespace, and a process still running (a daemon the command left,
     * killed only after bwrap has exited) would see the protected path
     * writable. That pid 1 is either reaped by bwrap, or left to this
     * process, a subreaper: once this process has no child left, the
     * sandbox is gone. */
    if (!command_gone(st->sandbox_pid))
        for (;;)
            if (waitpid(-1, NULL, 0) < 0 && errno != EINTR) break;
    sandbox_cleanup(r);
}

/* Longer paths first: a path is always longer than its ancestors. */
static int cmp_deepest_first(const void *a, const void *b)
{
    size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
    return x < y ? 1 : x > y ? -1 : 0;
}

void sandbox_cleanup(sbx_residue_t *r)
{
    if (!r) return;
    if (r->status_fd >= 0) close(r->status_fd);
    /* The last run out of the workspace (the exclusive lock is free) removes
     * its placeholders and those others left; otherwise they are listed for it. */
    bool last = r->lock_fd < 0 || flock(r->lock_fd, LOCK_EX | LOCK_NB) == 0;
    if (last) {
        /* its own and those listed for it, deepest first: a placeholder of
         * one run may hold another's (.git, then .git/hooks inside it) */
        VEC(char *) all = {0};
        for (size_t i = 0; i < r->paths.n; i++) vec_push(&all, xstrdup(r->paths.v[i]));
        FILE *f = r->pending ? fopen(r->pending, "r") : NULL;
        if (f) {
            char line[PATH_MAX + 2];
            while (fgets(line, sizeof line, f)) {
                line[strcspn(line, "\n")] = '\0';
                if (*line == '/') vec_push(&all, xstrdup(line));
            }
            fclose(f);
            unlink(r->pending);
        }
        if (all.n) qsort(all.v, all.n, sizeof *all.v, cmp_deepest_first); /* NULL when empty */
        pool_next_t next = {0, 0};
        for (size_t i = 0; i < all.n; i++) {
            remove_placeholder(r->pool, &next, all.v[i]);
            free(all.v[i]);
        }
        vec_free(&all);
    } else if (r->pending && r->paths.n) {
        FILE *f = fopen(r->pending, "a");
        for (size_t i = 0; f && i < r->paths.n; i++)
            if (!strchr(r->paths.v[i], '\n')) fprintf(f, "%s\n", r->paths.v[i]);
        if (f) fclose(f);
    }
    if (r->lock_fd >= 0) close(r->lock_fd);
    for (size_t i = 0; i < r->paths.n; i++) free(r->paths.v[i]);
    vec_free(&r->paths);
    free(r->pending);
    free(r->pool);
    buf_free(&r->status);
    free(r);
}
