/* seccomp_libseccomp.c — the SPEC §7 filter built with libseccomp, for the
 * build (scripts/seccomp_gen.c embeds its four programs) and for the tests
 * that hold the embedded bytes to what libseccomp makes now. The table of
 * denials is seccomp_filter.c's. Exported through a memfd (libseccomp 2.5
 * has no export-to-memory) and checked with our own interpreter before it
 * is handed out.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf.h"
#include "seccomp_filter.h"

int seccomp_arch_syscall_nr(seccomp_arch_t arch, const char *name)
{
    /* libseccomp answers a negative "pseudo" number for a call that exists
     * on some other arch only (umount on x86_64): that is "absent" here. */
    int nr = seccomp_syscall_resolve_name_arch(seccomp_audit_arch(arch), name);
    return nr < 0 ? -1 : nr;
}

/* Sets *err to "seccomp: MSG: strerror(rc)" (libseccomp errors are negative
 * errno values); takes msg. Returns false for the caller's return. */
static bool fail_rc(char **err, int rc, char *msg)
{
    *err = xasprintf("seccomp: %s: %s", msg, strerror(rc < 0 ? -rc : rc));
    free(msg);
    return false;
}

/* The context for arch, attributes set, no rules yet; NULL with *err. */
static scmp_filter_ctx new_ctx(seccomp_arch_t arch, char **err)
{
    uint32_t token = seccomp_audit_arch(arch);
    const char *an = seccomp_arch_name(arch);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        *err = xasprintf("seccomp: libseccomp could not create a filter for %s", an);
        return NULL;
    }
    int rc = 0;
    /* A filter for exactly one ABI. seccomp_init() starts with the host's
     * arch: when the target differs, add the target and drop the host, so
     * the program never admits the host ABI (an aarch64 filter built on
     * x86_64 must not let x86_64 syscalls through, nor the other way). */
    if (seccomp_arch_native() != token) {
        if ((rc = seccomp_arch_add(ctx, token)) == 0) rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
        if (rc) {
            fail_rc(err, rc, xasprintf("cannot target %s", an));
            goto bad;
        }
    }
    /* Every syscall of another ABI kills the process: the i386 `int 0x80`
     * entry (with socketcall(), which would hide socket(AF_UNIX) from the
     * socket rule) and, on x86_64, x32 numbers (bit 0x40000000), which
     * libseccomp routes to this same bad-arch action. KILL_PROCESS, not
     * KILL_THREAD: a multi-threaded process must not survive half-killed. */
    if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS))) {
        fail_rc(err, rc, xasprintf("libseccomp refuses KILL_PROCESS for %s (kernel older than 4.14?)", an));
        goto bad;
    }
    /* Fix the code generator instead of inheriting a default, so the bytes
     * cannot change under us (1 = the priority-ordered list). */
    if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 1))) {
        fail_rc(err, rc, xasprintf("cannot set the optimizer level for %s", an));
        goto bad;
    }
    /* Load-time knobs (TSYNC, LOG) are off by default and do not change
     * the program; they are asserted, not set, because setting them at all
     * fails on kernels that lack the flags. */
    uint32_t v = 1;
    if (seccomp_attr_get(ctx, SCMP_FLTATR_CTL_TSYNC, &v) || v != 0 ||
        seccomp_attr_get(ctx, SCMP_FLTATR_CTL_LOG, &v) || v != 0) {
        *err = xasprintf("seccomp: libseccomp enables TSYNC or LOG by default for %s", an);
        goto bad;
    }
    return ctx;
bad:
    seccomp_release(ctx);
    return NULL;
}

static bool family_allowed(uint32_t f)
{
    size_t n;
    const seccomp_family_t *fam = seccomp_families(&n);
    for (size_t i = 0; i < n; i++)
        if ((uint32_t)fam[i].family == f) return true;
    return false;
}

/* socket() and socketpair() for every family not on the list: EAFNOSUPPORT.
 * One rule per refused value below the highest allowed family, and one for
 * everything above it (future families included). The kernel reads the
 * domain as an int, so a register with high bits set names the family of
 * its low 32 bits: the "above" rule compares all 64 bits and so refuses
 * every such value whatever its low half (no program passes one), which
 * leaves no way to slip a refused family past an exact compare. The rules'
 * sets are disjoint (libseccomp 2.5's SCMP_A0_32 still compares 64 bits,
 * and overlapping rules with different actions would leave the order to
 * its code generator). */
static bool add_family_rules(scmp_filter_ctx ctx, const char *call, const char *an, char **err)
{
    int nr = seccomp_syscall_resolve_name(call);
    if (nr == __NR_SCMP_ERROR) {
        *err = xasprintf("seccomp: libseccomp cannot resolve %s", call);
        return false;
    }
    size_t n;
    const seccomp_family_t *fam = seccomp_families(&n);
    uint32_t top = (uint32_t)fam[n - 1].family;
    int rc = 0;
    /* each SCMP_An names datum_b (0): these comparisons ignore it, and
     * clang's -Wmissing-field-initializers flags it left out */
    for (uint32_t f = 0; f < top && !rc; f++)
        if (!family_allowed(f))
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1, SCMP_A0(SCMP_CMP_EQ, f, 0));
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1, SCMP_A0(SCMP_CMP_GT, top, 0));
    /* AF_NETLINK: NETLINK_ROUTE only (socket's third argument) */
    if (!rc && strcmp(call, "socket") == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), nr, 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK, 0),
                              SCMP_A2(SCMP_CMP_NE, SECCOMP_NETLINK_PROTOCOL, 0));
    if (rc) return fail_rc(err, rc, xasprintf("cannot add the family rules for %s on %s", call, an));
    return true;
}

/* The host-numbered syscall of a set-ID rule in *nr, or -1 there when
 * opts->arch has none (an optional call); false with *err when it cannot
 * be named. fchmodat2 is new (Linux 6.6): an older libseccomp does not
 * know its name, but its number is the same on every arch. */
static bool setid_nr(const seccomp_opts_t *opts, const seccomp_setid_t *c, int *nr, char **err)
{
    *nr = -1;
    if (seccomp_arch_syscall_nr(opts->arch, c->syscall) < 0) {
        if (strcmp(c->syscall, "fchmodat2") == 0) *nr = SECCOMP_NR_FCHMODAT2;
        else if (!c->optional) {
            *err = xasprintf("seccomp: libseccomp does not know %s on %s; upgrade it", c->syscall,
                             seccomp_arch_name(opts->arch));
            return false;
        }
        return true;
    }
    *nr = seccomp_syscall_resolve_name(c->syscall);
    if (*nr != __NR_SCMP_ERROR) return true;
    *err = xasprintf("seccomp: libseccomp cannot resolve %s", c->syscall);
    return false;
}

/* Set-ID bits (seccomp_setid_calls): one rule per refused bit, and for the
 * open calls per flag that creates, so each rule is a plain conjunction of
 * masked compares (libseccomp ANDs the comparisons of one rule, ORs the
 * rules). All share one action, so their order does not matter. openat2
 * is refused whole with ENOSYS: its flags and mode are in struct open_how,
 * behind a pointer seccomp cannot follow, and ENOSYS is what a kernel
 * without it answers, so callers fall back to openat (glibc's open and
 * openat never use openat2; only programs that call it themselves do). */
static bool add_setid_rules(scmp_filter_ctx ctx, const seccomp_opts_t *opts, char **err)
{
    const char *an = seccomp_arch_name(opts->arch);
    static const uint32_t bits[] = {S_ISUID, S_ISGID}, creating[] = {SECCOMP_O_CREAT, SECCOMP_O_TMPFILE};
    size_t n;
    const seccomp_setid_t *calls = seccomp_setid_calls(&n);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const seccomp_setid_t *c = &calls[i];
        int nr;
        if (!setid_nr(opts, c, &nr, err)) return false;
        if (nr == -1) continue;
        for (size_t b = 0; b < 2 && !rc; b++) {
            struct scmp_arg_cmp mode = {(unsigned)c->mode_arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]};
            if (c->flags_arg < 0) {
                rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, &mode);
                continue;
            }
            for (size_t f = 0; f < 2 && !rc; f++) {
                struct scmp_arg_cmp cmp[2] = {{(unsigned)c->flags_arg, SCMP_CMP_MASKED_EQ, creating[f], creating[f]},
                                              mode};
                rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, cmp);
            }
        }
        if (rc) return fail_rc(err, rc, xasprintf("cannot add the set-ID rules for %s on %s", c->syscall, an));
    }
    int nr = seccomp_syscall_resolve_name("openat2");
    if (nr == __NR_SCMP_ERROR || seccomp_arch_syscall_nr(opts->arch, "openat2") < 0) {
        *err = xasprintf("seccomp: libseccomp does not know openat2 on %s; upgrade it", an);
        return false;
    }
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0)))
        return fail_rc(err, rc, xasprintf("cannot add the rule for openat2 on %s", an));
    return true;
}

static bool add_rules(scmp_filter_ctx ctx, const seccomp_opts_t *opts, char **err)
{
    const char *an = seccomp_arch_name(opts->arch);
    size_t nd;
    const seccomp_denial_t *denials = seccomp_denials(&nd);
    for (size_t i = 0; i < nd; i++) {
        const seccomp_denial_t *d = &denials[i];
        if (d->af_unix_only && opts->allow_unix_sockets) continue;
        if (seccomp_arch_syscall_nr(opts->arch, d->syscall) < 0) {
            if (d->optional) continue;
            /* Fail closed: an old libseccomp must not quietly drop a denial. */
            *err = xasprintf("seccomp: libseccomp %u.%u.%u does not know %s on %s; upgrade it",
                             seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro,
                             d->syscall, an);
            return false;
        }
        /* seccomp_rule_add() takes the number in the host's numbering and
         * translates it by name to each arch of the filter; a pseudo number
         * (negative) is fine there. */
        int host_nr = seccomp_syscall_resolve_name(d->syscall);
        if (host_nr == __NR_SCMP_ERROR) {
            *err = xasprintf("seccomp: libseccomp cannot resolve %s", d->syscall);
            return false;
        }
        int rc;
        if (d->af_unix_only) {
            /* An exact 64-bit compare: a domain with high bits set (the
             * kernel would read AF_UNIX from its low half) is refused by the
             * family rules below, which take every such value. */
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), host_nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0));
        } else {
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), host_nr, 0);
        }
        if (rc) return fail_rc(err, rc, xasprintf("cannot add the rule for %s on %s", d->syscall, an));
    }
    return add_family_rules(ctx, "socket", an, err) && add_family_rules(ctx, "socketpair", an, err) &&
           add_setid_rules(ctx, opts, err);
}

/* libseccomp 2.5 exports only to a file descriptor: use an anonymous memfd
 * (no file on disk, no pipe that could fill up). */
static bool export_prog(scmp_filter_ctx ctx, buf_t *prog, char **err)
{
    int fd = memfd_create("drun-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        *err = xasprintf("seccomp: memfd_create: %s", strerror(errno));
        return false;
    }
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc) {
        close(fd);
        return fail_rc(err, rc, xstrdup("cannot export the program"));
    }
    off_t end = lseek(fd, 0, SEEK_END);
    bool ok = end > 0;
    errno = EIO; /* for an empty or short file */
    for (off_t at = 0; ok && at < end;) {
        char chunk[4096];
        ssize_t got = pread(fd, chunk, sizeof chunk, at);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            ok = false;
            break;
        }
        buf_add(prog, chunk, (size_t)got);
        at += got;
    }
    if (!ok) *err = xasprintf("seccomp: cannot read the exported program back: %s", strerror(errno));
    close(fd);
    return ok;
}

/* What socket(domain, SOCK_STREAM, protocol) or socketpair() must get. */
static uint32_t family_verdict(const seccomp_opts_t *opts, bool pair, uint64_t domain, uint64_t protocol)
{
    uint32_t f = (uint32_t)domain; /* the kernel's int */
    if (domain >> 32 || !family_allowed(f)) return BPF_RET_ERRNO | EAFNOSUPPORT;
    if (!pair && f == AF_UNIX && !opts->allow_unix_sockets) return BPF_RET_ERRNO | EPERM;
    if (!pair && f == AF_NETLINK && protocol != SECCOMP_NETLINK_PROTOCOL)
        return BPF_RET_ERRNO | EPROTONOSUPPORT;
    return BPF_RET_ALLOW;
}

/* Every family below 64 and a few hostile register values, each with a
 * plain and a garbage-high-bits protocol, through socket() and socketpair(). */
static bool self_check_families(const seccomp_opts_t *opts, const buf_t *prog, char **err)
{
    static const uint64_t odd[] = {0xffffffffu, 0x7fffffffu, 0x100000001ull, 0x100000002ull, 0xffffffff00000028ull,
                                   0x100000010ull, 256, 65535};
    static const uint64_t protos[] = {0, 9, 15, 0x100000000ull};
    bpf_seccomp_data_t d = {0};
    d.arch = seccomp_audit_arch(opts->arch);
    for (int pair = 0; pair < 2; pair++) {
        d.nr = seccomp_arch_syscall_nr(opts->arch, pair ? "socketpair" : "socket");
        for (size_t i = 0; i < 64 + sizeof odd / sizeof *odd; i++)
            for (size_t k = 0; k < sizeof protos / sizeof *protos; k++) {
                d.args[0] = i < 64 ? i : odd[i - 64];
                d.args[1] = 1;
                d.args[2] = protos[k];
                uint32_t want = family_verdict(opts, pair, d.args[0], d.args[2]);
                uint32_t got = bpf_run(prog->p, prog->len, &d, NULL);
                if (got != want) {
                    *err = xasprintf("seccomp: self-check failed on %s: %s(%#llx, 1, %#llx) gives %#x, not %#x",
                                     seccomp_arch_name(opts->arch), pair ? "socketpair" : "socket",
                                     (unsigned long long)d.args[0], (unsigned long long)d.args[2], got, want);
                    return false;
                }
            }
    }
    return true;
}

/* Every set-ID call with modes and flags that must pass or be refused,
 * hostile high halves included, and openat2 refused with ENOSYS. */
static bool self_check_setid(const seccomp_opts_t *opts, const buf_t *prog, char **err)
{
    static const uint64_t modes[] = {0644, 0755, 01777, 04755, 02755, 06777, 04000, 02000,
                                     0xffffffff00000755ull, 0x100000000ull | 04755, 0100000 | 04755 /* S_IFREG */};
    static const uint64_t flags[] = {0, 01 /* O_WRONLY */, SECCOMP_O_CREAT | 01, SECCOMP_O_TMPFILE | 0200000 | 02,
                                     0xffffffff00000000ull, 0x100000000ull | SECCOMP_O_CREAT};
    bpf_seccomp_data_t d = {0};
    d.arch = seccomp_audit_arch(opts->arch);
    size_t n;
    const seccomp_setid_t *calls = seccomp_setid_calls(&n);
    for (size_t i = 0; i < n; i++) {
        const seccomp_setid_t *c = &calls[i];
        d.nr = seccomp_arch_syscall_nr(opts->arch, c->syscall);
        if (d.nr < 0 && strcmp(c->syscall, "fchmodat2") == 0) d.nr = SECCOMP_NR_FCHMODAT2;
        if (d.nr < 0) continue;
        for (size_t m = 0; m < sizeof modes / sizeof *modes; m++)
            for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
                memset(d.args, 0, sizeof d.args);
                d.args[c->mode_arg] = modes[m];
                if (c->flags_arg >= 0) d.args[c->flags_arg] = flags[f];
                uint32_t want = seccomp_setid_refused(c, d.args) ? BPF_RET_ERRNO | EPERM : BPF_RET_ALLOW;
                uint32_t got = bpf_run(prog->p, prog->len, &d, NULL);
                if (got != want) {
                    *err = xasprintf("seccomp: self-check failed on %s: %s with mode %#llo, flags %#llo gives %#x, not %#x",
                                     seccomp_arch_name(opts->arch), c->syscall, (unsigned long long)modes[m],
                                     (unsigned long long)flags[f], got, want);
                    return false;
                }
            }
    }
    memset(d.args, 0, sizeof d.args);
    d.nr = seccomp_arch_syscall_nr(opts->arch, "openat2");
    if (bpf_run(prog->p, prog->len, &d, NULL) != (BPF_RET_ERRNO | ENOSYS)) {
        *err = xasprintf("seccomp: self-check failed on %s: openat2 is not refused with ENOSYS", seccomp_arch_name(opts->arch));
        return false;
    }
    return true;
}

/* The kafel habit inside the build: before the program leaves, run it
 * through our own interpreter and insist on every promise of the header. */
static bool self_check(const seccomp_opts_t *opts, const buf_t *prog, char **err)
{
    const char *an = seccomp_arch_name(opts->arch);
    size_t bad;
    const char *why;
    if (!bpf_check(prog->p, prog->len, &bad, &why)) {
        *err = xasprintf("seccomp: libseccomp produced an invalid program for %s: %s at %zu", an, why, bad);
        return false;
    }
    bpf_seccomp_data_t d = {0};
    d.arch = seccomp_audit_arch(opts->arch);
    size_t nd;
    const seccomp_denial_t *denials = seccomp_denials(&nd);
    for (size_t i = 0; i < nd; i++) {
        const seccomp_denial_t *dn = &denials[i];
        d.nr = seccomp_arch_syscall_nr(opts->arch, dn->syscall);
        if (d.nr < 0) continue;
        d.args[0] = AF_UNIX;
        uint32_t want = dn->af_unix_only && opts->allow_unix_sockets ? BPF_RET_ALLOW : BPF_RET_ERRNO | EPERM;
        if (bpf_run(prog->p, prog->len, &d, NULL) != want) {
            *err = xasprintf("seccomp: self-check failed: %s on %s is not %s", dn->syscall, an,
                             want == BPF_RET_ALLOW ? "allowed" : "denied with EPERM");
            return false;
        }
    }
    if (!self_check_families(opts, prog, err) || !self_check_setid(opts, prog, err)) return false;
    d.args[0] = 0;
    d.nr = seccomp_arch_syscall_nr(opts->arch, "getpid");
    uint32_t allow = bpf_run(prog->p, prog->len, &d, NULL);
    /* x32 shares x86_64's arch value: only the number's bit 30 tells it. */
    d.nr |= opts->arch == SECCOMP_X86_64 ? 0x40000000 : 0;
    uint32_t x32 = opts->arch == SECCOMP_X86_64 ? bpf_run(prog->p, prog->len, &d, NULL) : BPF_RET_KILL_PROCESS;
    d.arch = opts->arch == SECCOMP_AARCH64 ? SCMP_ARCH_X86_64 : SCMP_ARCH_AARCH64;
    uint32_t foreign = bpf_run(prog->p, prog->len, &d, NULL);
    if (allow != BPF_RET_ALLOW || foreign != BPF_RET_KILL_PROCESS || x32 != BPF_RET_KILL_PROCESS) {
        *err = xasprintf("seccomp: self-check failed on %s: getpid %s, foreign arch %s, x32 %s", an,
                         allow == BPF_RET_ALLOW ? "allowed" : "not allowed",
                         foreign == BPF_RET_KILL_PROCESS ? "killed" : "not killed",
                         x32 == BPF_RET_KILL_PROCESS ? "killed" : "not killed");
        return false;
    }
    return true;
}

bool seccomp_generate(const seccomp_opts_t *opts, buf_t *out, char **err)
{
    if (opts->arch != SECCOMP_X86_64 && opts->arch != SECCOMP_AARCH64) {
        *err = xasprintf("seccomp: unknown target architecture %d", (int)opts->arch);
        return false;
    }
    scmp_filter_ctx ctx = new_ctx(opts->arch, err);
    if (!ctx) return false;
    buf_t prog = BUF_INIT;
    bool ok = add_rules(ctx, opts, err) && export_prog(ctx, &prog, err) && self_check(opts, &prog, err);
    seccomp_release(ctx);
    if (ok) buf_add(out, prog.p, prog.len);
    buf_free(&prog);
    return ok;
}
