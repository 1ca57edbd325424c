/* seccomp_probe.c — the real-kernel half of the seccomp tests (the other half
 * is bpf_run in test_seccomp.c). `emit` writes the program seccomp_program
 * makes; the checks try one syscall each, in a child process, and print how
 * it went, so tests/suites/35-seccomp can run them under bwrap --seccomp.
 *
 *   seccomp-probe emit ARCH [--allow-unix] > prog.bpf
 *   seccomp-probe [--load PROG] CHECK...    one "CHECK RESULT" line per check
 *
 * RESULT is OK, an errno name (EPERM, ENOENT, ...), SIGNAL:SIGSYS (or another
 * signal), or UNSUPPORTED. --load installs PROG itself (no_new_privs +
 * seccomp(2)), for a kernel check that does not go through bwrap.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf.h"
#include "buf.h"
#include "seccomp_filter.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* Each check returns the raw syscall result: >= 0 is OK, -1 with errno. */
typedef long (*check_fn)(void);

static long ck_socket_unix(void) { return socket(AF_UNIX, SOCK_STREAM, 0); }
static long ck_socket_inet(void) { return socket(AF_INET, SOCK_STREAM, 0); }
/* The kernel reads the domain as an int: high bits must not get past the filter. */
static long ck_socket_unix_hibits(void) { return syscall(SYS_socket, 0xffffffff00000000UL | AF_UNIX, SOCK_STREAM, 0); }
static long socketpair_of(int family)
{
    int sv[2];
    return socketpair(family, SOCK_STREAM, 0, sv);
}
static long ck_socketpair_unix(void) { return socketpair_of(AF_UNIX); }
/* Families off the allowlist (EAFNOSUPPORT under the filter). AF_VSOCK
 * reaches the hypervisor and whatever listens on the host's vsock side,
 * past any network namespace; the others are hardware or kernel surface. */
static long ck_socket_vsock(void) { return socket(AF_VSOCK, SOCK_STREAM, 0); }
static long ck_socket_packet(void) { return socket(AF_PACKET, SOCK_DGRAM, 0); }
static long ck_socket_bluetooth(void) { return socket(AF_BLUETOOTH, SOCK_STREAM, 3 /* BTPROTO_RFCOMM */); }
static long ck_socket_alg(void) { return socket(AF_ALG, SOCK_SEQPACKET, 0); }
static long ck_socket_key(void) { return socket(AF_KEY, SOCK_RAW, 2 /* PF_KEY_V2 */); }
static long ck_socket_xdp(void) { return socket(AF_XDP, SOCK_RAW, 0); }
static long ck_socket_unspec(void) { return socket(AF_UNSPEC, SOCK_STREAM, 0); }
/* AF_INET with high bits in the domain register: refused, not read as AF_INET */
static long ck_socket_inet_hibits(void) { return syscall(SYS_socket, 0x100000000UL | AF_INET, SOCK_STREAM, 0); }
static long ck_socketpair_vsock(void) { return socketpair_of(AF_VSOCK); }
/* Netlink: NETLINK_ROUTE only (EPROTONOSUPPORT for the rest). uevents and
 * generic netlink exist in every network namespace, so without the filter
 * both sockets open. */
static long ck_netlink_route(void) { return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */); }
static long ck_netlink_uevent(void) { return socket(AF_NETLINK, SOCK_RAW, 15 /* NETLINK_KOBJECT_UEVENT */); }
static long ck_netlink_generic(void) { return socket(AF_NETLINK, SOCK_RAW, 16 /* NETLINK_GENERIC */); }
static long ck_socket_inet6(void) { return socket(AF_INET6, SOCK_STREAM, 0); }
/* What glibc's getifaddrs() and getaddrinfo(AI_ADDRCONFIG) do: a route dump. */
static long ck_getifaddrs(void)
{
    struct ifaddrs *ifa = NULL;
    long r = getifaddrs(&ifa);
    if (r == 0) freeifaddrs(ifa);
    return r;
}
static long ck_ptrace_traceme(void) { return ptrace(PTRACE_TRACEME, 0, NULL, NULL); }
static long ck_io_uring_setup(void)
{
    unsigned char params[120] = {0}; /* struct io_uring_params, zeroed */
    return syscall(SYS_io_uring_setup, 1, params);
}
static long ck_keyctl(void) { return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0); }
static long ck_add_key(void) { return syscall(SYS_add_key, "user", "drun-probe", "x", 1, -2 /* process keyring */); }
/* A path that does not exist: without the filter the kernel answers ENOENT
 * (it looks the path up first), so EPERM can only come from the filter. */
static long ck_mount(void) { return syscall(SYS_mount, "none", "/nonexistent-drun-probe", "tmpfs", 0, NULL); }
static long ck_umount2(void) { return syscall(SYS_umount2, "/nonexistent-drun-probe", 0); }
static long ck_open_tree(void) { return syscall(SYS_open_tree, AT_FDCWD, "/", 0); }
static long ck_bpf(void) { return syscall(SYS_bpf, 0xffff /* no such command */, NULL, 0); }
static long ck_perf_event_open(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long ck_userfaultfd(void) { return syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY); }
static long ck_process_vm_readv(void)
{
    char src[8] = "abcdefg", dst[8];
    struct iovec l = {dst, sizeof dst}, r = {src, sizeof src};
    return syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0);
}
static long ck_getpid(void) { return syscall(SYS_getpid); }
static long ck_write_file(void)
{
    int fd = open("drun-probe-file", O_WRONLY | O_CREAT | O_TRUNC, 0600); /* in the cwd */
    if (fd < 0) return -1;
    long n = write(fd, "ok\n", 3);
    close(fd);
    return n == 3 ? 0 : -1;
}
/* Set-ID modes (SPEC §13). Each refused call names a path that does not
 * exist (or fd -1): without the filter the kernel answers ENOENT or EBADF,
 * so EPERM can only be the filter's. Raw syscalls, so that the call the
 * name says is the one made (glibc's open and creat are openat). */
#define NOPE "/nonexistent-drun-probe/f"
static long ck_fchmodat_setuid(void) { return syscall(SYS_fchmodat, AT_FDCWD, NOPE, 04755); }
static long ck_fchmod_setgid(void) { return syscall(SYS_fchmod, -1, 02755); }
static long ck_fchmodat2_setuid(void) { return syscall(452 /* fchmodat2 */, AT_FDCWD, NOPE, 04755, 0); }
static long ck_openat_creat_setuid(void) { return syscall(SYS_openat, AT_FDCWD, NOPE, O_WRONLY | O_CREAT, 04755); }
static long ck_openat_creat_setgid(void) { return syscall(SYS_openat, AT_FDCWD, NOPE, O_WRONLY | O_CREAT, 02755); }
static long ck_openat_tmpfile_setuid(void) { return syscall(SYS_openat, AT_FDCWD, "/nonexistent-drun-probe", O_TMPFILE | O_WRONLY, 04755); }
static long ck_mknodat_setuid(void) { return syscall(SYS_mknodat, AT_FDCWD, NOPE, S_IFREG | 04755, 0); }
#ifdef SYS_chmod
static long ck_x_chmod_setgid(void) { return syscall(SYS_chmod, NOPE, 02755); }
static long ck_x_creat_setuid(void) { return syscall(SYS_creat, NOPE, 04755); }
static long ck_x_open_creat_setuid(void) { return syscall(SYS_open, NOPE, O_WRONLY | O_CREAT, 04755); }
static long ck_x_mknod_setgid(void) { return syscall(SYS_mknod, NOPE, S_IFREG | 02755, 0); }
#endif
/* openat2 carries its mode in a struct: refused whole with ENOSYS */
static long ck_openat2(void)
{
    uint64_t how[3] = {O_RDONLY, 0, 0}; /* struct open_how: flags, mode, resolve */
    return syscall(SYS_openat2, AT_FDCWD, NOPE, how, sizeof how);
}
/* what stays allowed: modes without the bits, a mode the open ignores
 * (no O_CREAT), and mkdir with S_ISGID (the kernel drops it) */
static long ck_chmod_plain(void)
{
    int fd = open("drun-probe-mode", O_WRONLY | O_CREAT, 0600);
    if (fd < 0) return -1;
    close(fd);
    long r = syscall(SYS_fchmodat, AT_FDCWD, "drun-probe-mode", 01755);
    unlink("drun-probe-mode");
    return r;
}
static long ck_openat_nocreat_setuid(void)
{
    long fd = syscall(SYS_openat, AT_FDCWD, ".", O_RDONLY | O_DIRECTORY, 04755);
    if (fd >= 0) close((int)fd);
    return fd;
}
static long ck_mkdir_setgid(void)
{
    long r = syscall(SYS_mkdirat, AT_FDCWD, "drun-probe-dir", 02755);
    if (r == 0) rmdir("drun-probe-dir");
    return r;
}
#if defined(__x86_64__)
/* getpid through the i386 entry (int 0x80, i386 number 20). */
static long ck_int80_getpid(void)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}
/* getpid through the x32 ABI: the x86_64 number with bit 30 set. */
static long ck_x32_getpid(void) { return syscall(0x40000000L | SYS_getpid); }
#endif

static const struct {
    const char *name;
    check_fn fn;
} checks[] = {
    {"socket-unix", ck_socket_unix},
    {"socket-unix-hibits", ck_socket_unix_hibits},
    {"socket-inet", ck_socket_inet},
    {"socketpair-unix", ck_socketpair_unix},
    {"socket-vsock", ck_socket_vsock},
    {"socket-packet", ck_socket_packet},
    {"socket-bluetooth", ck_socket_bluetooth},
    {"socket-alg", ck_socket_alg},
    {"socket-key", ck_socket_key},
    {"socket-xdp", ck_socket_xdp},
    {"socket-unspec", ck_socket_unspec},
    {"socket-inet-hibits", ck_socket_inet_hibits},
    {"socketpair-vsock", ck_socketpair_vsock},
    {"netlink-route", ck_netlink_route},
    {"netlink-uevent", ck_netlink_uevent},
    {"netlink-generic", ck_netlink_generic},
    {"socket-inet6", ck_socket_inet6},
    {"getifaddrs", ck_getifaddrs},
    {"ptrace-traceme", ck_ptrace_traceme},
    {"io-uring-setup", ck_io_uring_setup},
    {"keyctl", ck_keyctl},
    {"add-key", ck_add_key},
    {"mount", ck_mount},
    {"umount2", ck_umount2},
    {"open-tree", ck_open_tree},
    {"bpf", ck_bpf},
    {"perf-event-open", ck_perf_event_open},
    {"userfaultfd", ck_userfaultfd},
    {"process-vm-readv", ck_process_vm_readv},
    {"getpid", ck_getpid},
    {"write-file", ck_write_file},
    {"fchmodat-setuid", ck_fchmodat_setuid},
    {"fchmod-setgid", ck_fchmod_setgid},
    {"fchmodat2-setuid", ck_fchmodat2_setuid},
    {"openat-creat-setuid", ck_openat_creat_setuid},
    {"openat-creat-setgid", ck_openat_creat_setgid},
    {"openat-tmpfile-setuid", ck_openat_tmpfile_setuid},
    {"mknodat-setuid", ck_mknodat_setuid},
#ifdef SYS_chmod
    {"chmod-setgid", ck_x_chmod_setgid},
    {"creat-setuid", ck_x_creat_setuid},
    {"open-creat-setuid", ck_x_open_creat_setuid},
    {"mknod-setgid", ck_x_mknod_setgid},
#endif
    {"openat2", ck_openat2},
    {"chmod-plain", ck_chmod_plain},
    {"openat-nocreat-setuid", ck_openat_nocreat_setuid},
    {"mkdir-setgid", ck_mkdir_setgid},
#if defined(__x86_64__)
    {"int80-getpid", ck_int80_getpid},
    {"x32-getpid", ck_x32_getpid},
#endif
};

/* Runs fn in a child and prints how it ended. The child cannot dump core
 * (a SIGSYS kill would otherwise leave one behind). */
static void run_check(const char *name, check_fn fn)
{
    int pfd[2];
    if (pipe(pfd) < 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        prctl(PR_SET_DUMPABLE, 0);
        close(pfd[0]);
        errno = 0;
        long r = fn();
        int e = errno;
        char msg[64];
        const char *en = r >= 0 ? "OK" : strerrorname_np(e);
        int n = snprintf(msg, sizeof msg, "%s", en ? en : "E?");
        if (write(pfd[1], msg, (size_t)n) != n) _exit(3);
        _exit(0);
    }
    close(pfd[1]);
    char buf[64];
    ssize_t n = read(pfd[0], buf, sizeof buf - 1);
    close(pfd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(st)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(st));
        printf("%s SIGNAL:SIG%s\n", name, abbrev ? abbrev : "?");
    } else if (n > 0) {
        buf[n] = '\0';
        printf("%s %s\n", name, buf);
    } else {
        printf("%s EXIT:%d\n", name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
}

static int emit(int argc, char **argv)
{
    seccomp_opts_t o = {SECCOMP_X86_64, false};
    if (argc < 3 || !seccomp_arch_from_name(argv[2], &o.arch)) {
        fprintf(stderr, "usage: seccomp-probe emit x86_64|aarch64 [--allow-unix]\n");
        return 2;
    }
    o.allow_unix_sockets = argc > 3 && !strcmp(argv[3], "--allow-unix");
    buf_t b = BUF_INIT;
    char *err = NULL;
    if (!seccomp_program(&o, &b, &err)) {
        fprintf(stderr, "seccomp-probe: %s\n", err);
        free(err);
        return 1;
    }
    int ok = fwrite(b.p, 1, b.len, stdout) == b.len && fflush(stdout) == 0;
    buf_free(&b);
    return ok ? 0 : 2;
}

/* Installs the program in FILE on this process, as bwrap would. */
static void load(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        perror(file);
        exit(2);
    }
    buf_t b = BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, n);
    fclose(f);
    const char *why;
    size_t at;
    if (!bpf_check(b.p, b.len, &at, &why)) {
        fprintf(stderr, "%s: %s at %zu\n", file, why, at);
        exit(2);
    }
    struct sock_fprog prog = {(unsigned short)(b.len / 8), (struct sock_filter *)(void *)b.p};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
        perror("seccomp");
        exit(2);
    }
    buf_free(&b);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "emit")) return emit(argc, argv);
    int i = 1;
    if (argc > 2 && !strcmp(argv[1], "--load")) {
        load(argv[2]);
        i = 3;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: seccomp-probe [--load PROG] CHECK...\n");
        return 2;
    }
    for (; i < argc; i++) {
        size_t j = 0;
        while (j < sizeof checks / sizeof checks[0] && strcmp(checks[j].name, argv[i])) j++;
        if (j == sizeof checks / sizeof checks[0]) printf("%s UNSUPPORTED\n", argv[i]);
        else run_check(checks[j].name, checks[j].fn);
    }
    return 0;
}
