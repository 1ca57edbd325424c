/* relay.c — the sandbox's end of the proxy (proxy.h): the first program the
 * sandbox runs when its policy gives commands network. It listens on
 * 127.0.0.1:PORT inside the sandbox's own network namespace (nothing else is
 * there: only lo), starts the command as its child with the proxy variables
 * bwrap set, hands every connection it accepts to the host side over the
 * channel it inherited (one fd per message, SCM_RIGHTS), and ends as the
 * command ends, with its status. The channel was made before the sandbox
 * started: no AF_UNIX socket is ever created inside, so seccomp's rule
 * against new ones stays. The relay holds no privilege the command lacks:
 * the host treats whatever arrives on the channel as hostile.
 */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RELAY_FLAG "--drun-relay"

static int listen_local(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int one = 1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Hands fd to the host side: one byte and the fd. */
static void hand_over(int chan, int fd)
{
    char byte = 'c';
    struct iovec iov = {&byte, 1};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof cm);
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cm.b;
    msg.msg_controllen = sizeof cm.b;
    struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    while (sendmsg(chan, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

static void accept_all(int lfd, int chan)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return; /* EAGAIN: all taken; anything else: try again on the next wakeup */
        }
        hand_over(chan, fd);
        close(fd); /* the host holds it now (or the host is gone and so is it) */
    }
}

/* The command's status as this process's own. */
static int finish(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}

static _Noreturn void run_command(char **cmd, const sigset_t *mask)
{
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(cmd[0], cmd);
    int e = errno;
    fprintf(stderr, "%s: %s\n", cmd[0], e == ENOENT ? "command not found" : strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

/* Relays until the command (pid) ends; returns its status. */
static int relay_loop(int lfd, int chan, pid_t pid)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        int status;
        pid_t w = pidfd < 0 ? waitpid(pid, &status, WNOHANG) : 0;
        if (w == pid) return finish(status);
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {pidfd, POLLIN, 0}};
        int n = poll(p, pidfd < 0 ? 1 : 2, pidfd < 0 ? 100 : -1);
        if (n < 0 && errno != EINTR) return 125;
        if (pidfd >= 0 && p[1].revents) {
            while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
            return w == pid ? finish(status) : 125;
        }
        if (n > 0 && p[0].revents) accept_all(lfd, chan);
    }
}

int relay_main(int argc, char **argv)
{
    if (argc < 6 || strcmp(argv[0], SBX_RELAY_PATH) != 0 || strcmp(argv[1], RELAY_FLAG) != 0 ||
        strcmp(argv[4], "--") != 0)
        return -1;
    int chan = atoi(argv[2]), port = atoi(argv[3]);
    char **cmd = argv + 5;
    if (chan < 3 || port < 1 || port > 65535 || fcntl(chan, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "drun relay: no proxy channel: the sandbox has no network\n");
        return 125;
    }
    int lfd = listen_local(port);
    if (lfd < 0)
        fprintf(stderr, "drun relay: cannot listen on 127.0.0.1:%d (%s): the sandbox has no network\n", port,
                strerror(errno));
    /* SIGCHLD stays default; nothing else is handled here */
    sigset_t none;
    sigemptyset(&none);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "drun relay: cannot start the command: %s\n", strerror(errno));
        return 125;
    }
    if (pid == 0) run_command(cmd, &none);
    /* the relay keeps none of the command's stdio: a pipe the command
     * writes ends when the command does */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int i = 0; null >= 0 && i < 3; i++) dup2(null, i);
    if (null > 2) close(null);
    if (lfd < 0) {
        int status;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) return 125;
        return finish(status);
    }
    return relay_loop(lfd, chan, pid);
}
