/* reaper.c — reaping the sandbox processes re-parented to drun-mcp (see reaper.h). */
#include "reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drun_policy.h"
#include "log.h"

/* What /proc/PID/status says of a process. */
typedef struct pstat {
    pid_t tgid, ppid;
    unsigned depth; /* entries of NSpid: 1 in the initial pid namespace, +1 per level */
    char state;     /* 'R', 'S', 'Z', ... */
} pstat_t;

/* The start of a /proc file into buf (size bytes, NUL-terminated); false
 * when it cannot be read or is empty. */
static bool read_proc(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

static bool read_pstat(const char *path, pstat_t *p)
{
    char text[4096];
    if (!read_proc(path, text, sizeof text))
        return false;
    memset(p, 0, sizeof *p);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (!strncmp(line, "State:", 6)) {
            const char *s = line + 6;
            while (*s == ' ' || *s == '\t')
                s++;
            p->state = *s;
        } else if (!strncmp(line, "Tgid:", 5)) {
            p->tgid = (pid_t)strtol(line + 5, NULL, 10);
        } else if (!strncmp(line, "PPid:", 5)) {
            p->ppid = (pid_t)strtol(line + 5, NULL, 10);
        } else if (!strncmp(line, "NSpid:", 6)) {
            for (char *s = line + 6; *s;) {
                while (*s == ' ' || *s == '\t')
                    s++;
                if (!*s)
                    break;
                p->depth++;
                while (*s && *s != ' ' && *s != '\t')
                    s++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return p->tgid > 0 && p->depth > 0;
}

/* Is the process pidfd refers to (pid) in a pid namespace below ours with
 * parent `parent`? Read after the pidfd was opened, then the pidfd's process
 * is checked to still exist: so the status read was of that very process
 * (its pid cannot be reused before it is reaped). */
static bool deep_child_of(int pidfd, pid_t pid, pid_t parent, const pstat_t *self, char *state)
{
    char path[64];
    pstat_t p;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!read_pstat(path, &p) || p.tgid != pid || p.ppid != parent || p.depth <= self->depth)
        return false;
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) != 0 && errno != EPERM)
        return false;
    if (state)
        *state = p.state;
    return true;
}

bool reaper_is_sandbox_pid1(int pidfd, pid_t pid, pid_t bwrap_pid)
{
    pstat_t self;
    if (!read_pstat("/proc/self/status", &self))
        return false;
    return (bwrap_pid > 0 && deep_child_of(pidfd, pid, bwrap_pid, &self, NULL)) ||
           deep_child_of(pidfd, pid, self.tgid, &self, NULL);
}

/* Is pid an ended access-time layer guard re-parented to us? The guard is a
 * child of the layer's daemon (compiler/sandbox/fuse_serve.c); the daemon is
 * killed when its run ends, so the guard, which unmounts the trees once the
 * runner lets go, ends as our child (we are the subreaper) and nobody else
 * waits for it. It lives in our own pid namespace, where no sandboxed
 * process can be or name itself: its name is ours to trust. Only a zombie is
 * taken, so no status another thread waits for (a bwrap of exec.c) is. */
static bool ended_guard(int pidfd, pid_t pid, const pstat_t *self)
{
    char path[64], comm[32] = "";
    pstat_t p;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!read_pstat(path, &p) || p.tgid != pid || p.ppid != self->tgid || p.depth != self->depth || p.state != 'Z')
        return false;
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    return read_proc(path, comm, sizeof comm) && strcmp(comm, "drun-fuse-guard\n") == 0 &&
           syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* One child of ours: kill and reap it if it is a re-parented sandbox
 * process, or reap it if it is an ended layer guard. */
static bool reap_one(pid_t pid, const pstat_t *self)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return false;
    char state = 0;
    bool reaped = false;
    if (ended_guard(pidfd, pid, self)) {
        siginfo_t si = {0};
        reaped = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid == pid;
    } else if (deep_child_of(pidfd, pid, self->tgid, self, &state)) {
        /* Its bwrap is gone, and so is its run: nothing it does is wanted.
         * SIGKILL to a pid namespace's init ends the whole namespace. */
        if (state != 'Z')
            syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        siginfo_t si = {0};
        /* Only this process (P_PIDFD), and only if it has ended. */
        reaped = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) == 0 &&
                 si.si_pid == pid;
    }
    close(pidfd);
    return reaped;
}

typedef VEC(pid_t) pidvec_t;

/* The pids in one /proc/self/task/TID/children file, into v. */
static void read_children(const char *tid, pidvec_t *v)
{
    char path[96], text[8192];
    snprintf(path, sizeof path, "/proc/self/task/%s/children", tid);
    if (!read_proc(path, text, sizeof text))
        return;
    for (char *s = text, *end; *s; s = end) {
        long p = strtol(s, &end, 10);
        if (end == s)
            break;
        if (p > 0)
            vec_push(v, (pid_t)p);
    }
}

unsigned reaper_scan(void)
{
    pstat_t self;
    if (!read_pstat("/proc/self/status", &self))
        return 0;
    /* Children belong to the thread that made them, or (re-parented) to
     * any live thread of ours: every thread's list is read. */
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    pidvec_t kids = {0};
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            read_children(e->d_name, &kids);
    closedir(d);
    unsigned reaped = 0;
    for (size_t i = 0; i < kids.n; i++)
        reaped += reap_one(kids.v[i], &self);
    vec_free(&kids);
    return reaped;
}

static void *reaper_main(void *arg)
{
    (void)arg;
    struct timespec ts = {REAPER_SCAN_MS / 1000, (REAPER_SCAN_MS % 1000) * 1000000L};
    for (;;) {
        reaper_scan();
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR);
        ts = (struct timespec){REAPER_SCAN_MS / 1000, (REAPER_SCAN_MS % 1000) * 1000000L};
    }
    return NULL;
}

static void start_once(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, reaper_main, NULL) != 0)
        log_warn("cannot start the reaper thread: orphaned sandbox processes are reaped "
                 "after each command only");
    pthread_attr_destroy(&a);
}

void reaper_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, start_once);
}
