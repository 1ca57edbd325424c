/* seccomp_filter.c — the seccomp backend: the table of denials, and the
 * programs built from it at build time (seccomp_libseccomp.c, run by
 * scripts/seccomp_gen.c into $(B)/gen/seccomp_tables.c), handed out as
 * bytes. Nothing here calls libseccomp: drun-policy and drun-mcp do not load
 * it at all.
 */
#include "seccomp_filter.h"

#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>

/* Why each call is denied. Default-allow keeps ordinary programs working;
 * these are the calls that reach past the bwrap boundary or give the kernel
 * attack surface no build, test or script needs. */
#define WHY_IO_URING "io_uring does I/O that seccomp never sees and is a steady source of kernel exploits"
#define WHY_KEYS "the kernel keyring is not namespaced: host keys could be read or planted"
#define WHY_MOUNT "the filesystem view is bwrap's, fixed at start: no remount, unmount or new mount"

static const seccomp_denial_t denials[] = {
    /* An AF_UNIX socket can connect() to any socket path bound into the
     * sandbox (docker, dbus, ssh-agent, X11) and walk out through a host
     * daemon. socketpair() only joins the caller to itself, so it stays. */
    {"socket", "AF_UNIX sockets reach host daemons (docker, dbus, ssh-agent) through bound paths", true, false},
    {"io_uring_setup", WHY_IO_URING, false, false},
    {"io_uring_enter", WHY_IO_URING, false, false},
    {"io_uring_register", WHY_IO_URING, false, false},
    /* A tracer rewrites its tracee's registers and memory, syscalls
     * included: past this very filter on older kernels. */
    {"ptrace", "a tracer rewrites another process's memory and syscalls", false, false},
    {"process_vm_readv", "reads another process's memory (ptrace by another name)", false, false},
    {"process_vm_writev", "writes another process's memory (ptrace by another name)", false, false},
    {"kexec_load", "replaces the running kernel", false, false},
    {"kexec_file_load", "replaces the running kernel", false, false},
    {"bpf", "eBPF programs and maps: a large kernel attack surface", false, false},
    {"perf_event_open", "kernel profiling: leaks kernel addresses, long exploit history", false, false},
    /* userfaultfd lets a process pause the kernel in the middle of a copy
     * from user memory: the standard tool for winning kernel races. */
    {"userfaultfd", "stalls the kernel mid-copy, the classic tool for kernel races", false, false},
    {"keyctl", WHY_KEYS, false, false},
    {"add_key", WHY_KEYS, false, false},
    {"request_key", WHY_KEYS, false, false},
    /* bwrap already drops every capability; the mount family is denied
     * again here so that a nested user namespace (where the bwrap build
     * cannot disable them) gains no mount power either. */
    {"mount", WHY_MOUNT, false, false},
    {"umount2", WHY_MOUNT, false, false},
    {"umount", WHY_MOUNT, false, true}, /* i386-era; not on x86_64 nor aarch64 */
    {"pivot_root", WHY_MOUNT, false, false},
    {"move_mount", WHY_MOUNT, false, false},
    {"open_tree", WHY_MOUNT, false, false},
    {"fsopen", WHY_MOUNT, false, false},
    {"fsconfig", WHY_MOUNT, false, false},
    {"fsmount", WHY_MOUNT, false, false},
    {"fspick", WHY_MOUNT, false, false},
    {"mount_setattr", WHY_MOUNT, false, false},
};

/* socket() and socketpair() are allowed for these families only: a family
 * reaches whatever its kernel code reaches, and --unshare-net confines only
 * the ones that are per network namespace. AF_VSOCK talks to the hypervisor
 * and its other guests, AF_BLUETOOTH and AF_CAN to the hardware, AF_ALG and
 * AF_KEY/AF_XDP/AF_PACKET (even without CAP_NET_RAW) are kernel attack
 * surface with long CVE lists, and the families a later kernel adds are
 * unknown here: all of them get EAFNOSUPPORT, as on a kernel built without. */
static const seccomp_family_t families[] = {
    {1, "AF_UNIX", "socketpair() joins the caller to itself; socket() follows [network] allow_unix_sockets"},
    {2, "AF_INET", "the sandbox's own network namespace: loopback only"},
    {10, "AF_INET6", "the sandbox's own network namespace: loopback only"},
    /* NETLINK_ROUTE is per network namespace and read-only without
     * CAP_NET_ADMIN (bwrap drops it): getifaddrs() (Node's
     * os.networkInterfaces, Python's socket.if_nameindex), glibc's
     * getaddrinfo(AI_ADDRCONFIG) and `ip addr` read it. The other netlink
     * protocols reach host-wide state (audit, uevents, netfilter, xfrm,
     * generic families): EPROTONOSUPPORT. */
    {16, "AF_NETLINK", "NETLINK_ROUTE only: the sandbox's own interfaces and routes, read-only"},
};

/* A set-user-ID or set-group-ID file that the sandbox leaves behind runs
 * as the sandbox's uid (for a non-root runtime, the user's own) for anyone
 * who can reach the workspace later: a planted privilege, whatever the
 * file system layer. Every way a process names a mode for a file is here;
 * chown only clears the bits, and link/rename move a file without making
 * one. (openat2 carries its mode in struct open_how, which seccomp cannot
 * read: it is refused whole with ENOSYS in seccomp_libseccomp.c.) */
static const seccomp_setid_t setid_calls[] = {
    {"chmod", 1, -1, true},
    {"fchmod", 1, -1, false},
    {"fchmodat", 2, -1, false},
    {"fchmodat2", 2, -1, false}, /* by number where libseccomp lacks the name */
    {"creat", 1, -1, true},
    {"open", 2, 1, true},
    {"openat", 3, 2, false},
    {"mknod", 1, -1, true},
    {"mknodat", 2, -1, false},
};

const seccomp_setid_t *seccomp_setid_calls(size_t *n)
{
    *n = sizeof setid_calls / sizeof setid_calls[0];
    return setid_calls;
}

bool seccomp_setid_refused(const seccomp_setid_t *c, const uint64_t args[6])
{
    if (c->flags_arg >= 0 && !(args[c->flags_arg] & (SECCOMP_O_CREAT | SECCOMP_O_TMPFILE))) return false;
    return (args[c->mode_arg] & SECCOMP_SETID_BITS) != 0;
}

const seccomp_family_t *seccomp_families(size_t *n)
{
    *n = sizeof families / sizeof families[0];
    return families;
}

const seccomp_denial_t *seccomp_denials(size_t *n)
{
    *n = sizeof denials / sizeof denials[0];
    return denials;
}

bool seccomp_arch_from_name(const char *name, seccomp_arch_t *out)
{
    if (!strcmp(name, "x86_64") || !strcmp(name, "amd64")) {
        *out = SECCOMP_X86_64;
        return true;
    }
    if (!strcmp(name, "aarch64") || !strcmp(name, "arm64")) {
        *out = SECCOMP_AARCH64;
        return true;
    }
    return false;
}

const char *seccomp_arch_name(seccomp_arch_t arch)
{
    return arch == SECCOMP_AARCH64 ? "aarch64" : "x86_64";
}

uint32_t seccomp_audit_arch(seccomp_arch_t arch)
{
    return arch == SECCOMP_AARCH64 ? AUDIT_ARCH_AARCH64 : AUDIT_ARCH_X86_64;
}

#ifndef DRUN_SECCOMP_GENERATOR
bool seccomp_program(const seccomp_opts_t *opts, buf_t *out, char **err)
{
    for (size_t i = 0; i < seccomp_progs_n; i++)
        if (seccomp_progs[i].arch == opts->arch && seccomp_progs[i].allow_unix_sockets == opts->allow_unix_sockets) {
            buf_add(out, seccomp_progs[i].prog, seccomp_progs[i].len);
            return true;
        }
    *err = xasprintf("seccomp: unknown target architecture %d", (int)opts->arch);
    return false;
}

const char *seccomp_syscall_name(uint32_t audit_arch, uint32_t nr)
{
    size_t lo = 0, hi = seccomp_sysnames_n; /* sorted by (arch, nr) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const seccomp_sysname_t *e = &seccomp_sysnames[mid];
        if (e->audit_arch == audit_arch && e->nr == nr) return e->name;
        if (e->audit_arch < audit_arch || (e->audit_arch == audit_arch && e->nr < nr)) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}
#else
/* the generator makes the tables: it names no syscall itself */
const char *seccomp_syscall_name(uint32_t audit_arch, uint32_t nr)
{
    (void)audit_arch, (void)nr;
    return NULL;
}
#endif
