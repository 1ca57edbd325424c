/* seccomp_filter.h — the seccomp backend: the SPEC §7 syscall filter, built
 * with libseccomp for a chosen target architecture and exported as the raw
 * classic-BPF program that `bwrap --seccomp FD` loads (artifact seccomp.bpf).
 * (Not "seccomp.h": that name is libseccomp's own header, which -Icompiler
 * would shadow for every file that includes <seccomp.h>.)
 *
 * socket() and socketpair() work for an allowlist of address families only
 * (seccomp_families(): AF_UNIX, AF_INET, AF_INET6, AF_NETLINK); any other
 * domain — AF_VSOCK, AF_PACKET, AF_BLUETOOTH, AF_ALG, AF_KEY, ..., and every
 * family a later kernel adds — fails with EAFNOSUPPORT, and AF_NETLINK with a
 * protocol other than NETLINK_ROUTE with EPROTONOSUPPORT. The domain and the
 * protocol are compared in their low 32 bits, as the kernel reads an int.
 *
 * The filter allows by default and denies, with EPERM:
 *   socket(AF_UNIX, ...)        unless allow_unix_sockets; socketpair() stays
 *   io_uring_setup, io_uring_enter, io_uring_register
 *   ptrace, process_vm_readv, process_vm_writev
 *   kexec_load, kexec_file_load
 *   bpf, perf_event_open, userfaultfd
 *   keyctl, add_key, request_key
 *   mount, umount2, umount (only where the arch has it: neither x86_64 nor
 *   aarch64 does), pivot_root, move_mount, open_tree, fsopen, fsconfig,
 *   fsmount, fspick, mount_setattr
 * and refuses, with EPERM, a set-user-ID or set-group-ID bit in a mode the
 * sandbox asks for (seccomp_setid_calls(): chmod, fchmod, fchmodat,
 * fchmodat2, and open/openat/creat/mknod/mknodat when they create), so no
 * set-ID file of the sandbox's uid is left on the host; openat2, whose mode
 * is in a struct the filter cannot read, fails with ENOSYS;
 * and kills the process (KILL_PROCESS) on any syscall made through another
 * ABI than the target's: i386 `int 0x80` and x32 on x86_64, AArch32 on
 * aarch64. personality() is left alone (see docs/seccomp.md).
 */
#ifndef DRUN_SECCOMP_FILTER_H
#define DRUN_SECCOMP_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef enum {
    SECCOMP_X86_64,
    SECCOMP_AARCH64
} seccomp_arch_t;

/* "x86_64" or "amd64" -> SECCOMP_X86_64, "aarch64" or "arm64" ->
 * SECCOMP_AARCH64 (exact, lower case). False for anything else. */
bool seccomp_arch_from_name(const char *name, seccomp_arch_t *out);

/* "x86_64" or "aarch64": the canonical name (the facts' spelling). */
const char *seccomp_arch_name(seccomp_arch_t arch);

/* AUDIT_ARCH_X86_64 / AUDIT_ARCH_AARCH64: the value the filter compares
 * seccomp_data.arch with. */
uint32_t seccomp_audit_arch(seccomp_arch_t arch);

typedef struct seccomp_opts {
    seccomp_arch_t arch;     /* the target the program is for (any host can build it) */
    bool allow_unix_sockets; /* [network] allow_unix_sockets: do not deny socket(AF_UNIX) */
} seccomp_opts_t;

/* Builds the filter above for opts->arch, even when it is not the host's,
 * and appends the raw struct sock_filter program (little-endian, as both
 * targets are) to *out. Before returning, the program is checked with the
 * userspace verifier and interpreter (bpf.h): every denial must yield
 * ERRNO(EPERM), a foreign ABI KILL_PROCESS and getpid ALLOW, or the build
 * fails. Deterministic: the same opts give the same bytes on any host.
 * Returns false with *err (caller frees) when libseccomp fails or is too old
 * to know a syscall of the list; *out is then left as it was.
 * The four programs (two arches, with and without AF_UNIX) are generated
 * this way at build time (scripts/seccomp_gen.c) and embedded: this returns
 * those bytes; the binaries do not load libseccomp. */
bool seccomp_program(const seccomp_opts_t *opts, buf_t *out, char **err);

/* The backends' shared shape (seccomp_build.c): appends the filter for r's
 * policy ([network] allow_unix_sockets) on the architecture of facts f
 * (f->arch), which r was resolved with, to *out. False with an error in
 * diags (no location), *out left as it was, for an architecture without a
 * filter. (Struct tags rather than lattice.h: the build-time generator
 * compiles this header without the policy layer.) */
struct resolved;
struct facts;
struct diag_list;
bool seccomp_build(const struct resolved *r, const struct facts *f, struct diag_list *diags, buf_t *out);

/* What seccomp_program describes, built with libseccomp now
 * (seccomp_libseccomp.c: the build tool, and the test that the embedded
 * bytes are current). */
bool seccomp_generate(const seccomp_opts_t *opts, buf_t *out, char **err);

/* The name of syscall nr on an arch (AUDIT_ARCH_*) as libseccomp spells it,
 * from the table made at build time; NULL when it has none. */
const char *seccomp_syscall_name(uint32_t audit_arch, uint32_t nr);

/* The tables made at build time ($(B)/gen/seccomp_tables.c). */
typedef struct seccomp_prog {
    seccomp_arch_t arch;
    bool allow_unix_sockets;
    const unsigned char *prog;
    size_t len;
} seccomp_prog_t;
extern const seccomp_prog_t seccomp_progs[];
extern const size_t seccomp_progs_n;
typedef struct seccomp_sysname {
    uint32_t audit_arch, nr;
    const char *name;
} seccomp_sysname_t;
extern const seccomp_sysname_t seccomp_sysnames[]; /* sorted by (audit_arch, nr) */
extern const size_t seccomp_sysnames_n;

/* One entry of the deny list, for explain, docs and tests. */
typedef struct seccomp_denial {
    const char *syscall; /* name as the kernel and libseccomp spell it */
    const char *why;     /* one line: what the call would let a sandboxed process do */
    bool af_unix_only;   /* denied only with domain AF_UNIX, and only without
                            allow_unix_sockets (socket) */
    bool optional;       /* absent on some arches (umount): skipped there */
} seccomp_denial_t;

/* The deny list, in filter order; *n receives its length. Static storage. */
const seccomp_denial_t *seccomp_denials(size_t *n);

/* A call that can give a file a mode: refused with EPERM when that mode
 * holds S_ISUID or S_ISGID (SECCOMP_SETID_BITS). The filter reads the mode
 * in the low bits of its register only (mode_t and umode_t are narrower),
 * so garbage in the high half changes nothing. A call with a flags argument
 * (open, openat) uses the mode only when it creates (O_CREAT or
 * O_TMPFILE, as the kernel's build_open_how decides): otherwise the mode
 * register is ignored by the kernel and by the filter. mkdir and mkdirat
 * are not listed: the kernel keeps only the permission and sticky bits of
 * their mode (vfs_mkdir), and a directory gets S_ISGID only by inheriting
 * it from a set-group-ID parent or by a chmod, which is refused here. */
typedef struct seccomp_setid {
    const char *syscall; /* name as the kernel and libseccomp spell it */
    int mode_arg;        /* the argument (0-based) that holds the mode */
    int flags_arg;       /* the open flags argument, or -1: the call always applies the mode */
    bool optional;       /* absent on some arches (aarch64 has the *at calls only) */
} seccomp_setid_t;

/* The bits refused in a mode, and the open flags that make a call create.
 * O_CREAT and __O_TMPFILE have these values on x86_64 and aarch64 alike
 * (asm-generic/fcntl.h; x86 does not override them). */
#define SECCOMP_SETID_BITS 06000u
#define SECCOMP_O_CREAT 0100u
#define SECCOMP_O_TMPFILE 020000000u
/* fchmodat2's number, the same on every arch (the unified table since
 * Linux 6.6): used when the libseccomp at hand does not know the name. */
#define SECCOMP_NR_FCHMODAT2 452

/* The calls above, in filter order; *n receives the count. Static storage. */
const seccomp_setid_t *seccomp_setid_calls(size_t *n);

/* Is the mode of call c with these arguments refused (EPERM)? The rule the
 * filter implements, for the build's self-check and the tests. */
bool seccomp_setid_refused(const seccomp_setid_t *c, const uint64_t args[6]);

/* An address family socket() may use (SPEC §13: by list, not by exception). */
typedef struct seccomp_family {
    int family;       /* AF_* */
    const char *name; /* "AF_INET" */
    const char *why;  /* one line: why the sandbox may have it and why that is safe */
} seccomp_family_t;

/* The allowed families, in ascending order; *n receives the count. AF_UNIX
 * is among them for socketpair() and for allow_unix_sockets: socket(AF_UNIX)
 * is still denied with EPERM without it (the "socket" denial). */
const seccomp_family_t *seccomp_families(size_t *n);

/* The one netlink protocol AF_NETLINK sockets may use: NETLINK_ROUTE. */
#define SECCOMP_NETLINK_PROTOCOL 0

/* The number of syscall name on arch (from libseccomp's tables), or -1 when
 * arch has no such call. */
int seccomp_arch_syscall_nr(seccomp_arch_t arch, const char *name);

#endif
