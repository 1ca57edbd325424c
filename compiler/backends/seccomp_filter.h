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

typedef enum { SECCOMP_X86_64, SECCOMP_AARCH64 } seccomp_arch_t;

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
    const char *syscall;  /* name as the kernel and libseccomp spell it */
    const char *why;      /* one line: what the call would let a sandboxed process do */
    bool af_unix_only;    /* denied only with domain AF_UNIX, and only without
                             allow_unix_sockets (socket) */
    bool optional;        /* absent on some arches (umount): skipped there */
} seccomp_denial_t;

/* The deny list, in filter order; *n receives its length. Static storage. */
const seccomp_denial_t *seccomp_denials(size_t *n);

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
