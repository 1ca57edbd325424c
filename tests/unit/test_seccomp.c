/* test_seccomp.c — the seccomp backend through the userspace interpreter:
 * every denial with per-arch numbers written out here from the kernel's
 * tables (not asked of libseccomp), foreign ABIs, x32, determinism, the
 * disassembly; and the verifier/interpreter/disassembler on their own.
 * The same expectations run under the real kernel in tests/suites/35-seccomp.
 */
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "buf.h"
#include "seccomp_filter.h"
#include "tap.h"

#define AUDIT_X86_64 0xc000003eu
#define AUDIT_I386 0x40000003u
#define AUDIT_AARCH64 0xc00000b7u
#define AUDIT_ARM 0x40000028u
#define X32_BIT 0x40000000
#define EPERM_RET (BPF_RET_ERRNO | 1u)
#define EAFNO_RET (BPF_RET_ERRNO | 97u) /* EAFNOSUPPORT */

typedef struct {
    const char *name;
    int x86_64, aarch64;
} sysnr_t;

/* From arch/x86/entry/syscalls/syscall_64.tbl and
 * include/uapi/asm-generic/unistd.h (aarch64). */
/* clang-format off */
static const sysnr_t denied[] = {
    {"io_uring_setup", 425, 425},    {"io_uring_enter", 426, 426},
    {"io_uring_register", 427, 427}, {"ptrace", 101, 117},
    {"process_vm_readv", 310, 270},  {"process_vm_writev", 311, 271},
    {"kexec_load", 246, 104},        {"kexec_file_load", 320, 294},
    {"bpf", 321, 280},               {"perf_event_open", 298, 241},
    {"userfaultfd", 323, 282},       {"keyctl", 250, 219},
    {"add_key", 248, 217},           {"request_key", 249, 218},
    {"mount", 165, 40},              {"umount2", 166, 39},
    {"pivot_root", 155, 41},         {"move_mount", 429, 429},
    {"open_tree", 428, 428},         {"fsopen", 430, 430},
    {"fsconfig", 431, 431},          {"fsmount", 432, 432},
    {"fspick", 433, 433},            {"mount_setattr", 442, 442},
};
/* clang-format on */
/* clang-format off */
static const sysnr_t allowed[] = {
    {"read", 0, 63},          {"write", 1, 64},       {"openat", 257, 56},
    {"execve", 59, 221},      {"clone", 56, 220},     {"clone3", 435, 435},
    {"getpid", 39, 172},      {"mmap", 9, 222},       {"exit_group", 231, 94},
    {"connect", 42, 203},     {"socketpair", 53, 199},{"personality", 135, 92},
    {"unshare", 272, 97},     {"seccomp", 317, 277},  {"wait4", 61, 260},
};
/* clang-format on */
#define SOCKET_X86_64 41
#define SOCKET_AARCH64 198

static int nr_of(const sysnr_t *s, seccomp_arch_t a) { return a == SECCOMP_X86_64 ? s->x86_64 : s->aarch64; }

static uint32_t run(const buf_t *prog, uint32_t arch, int nr, uint64_t a0)
{
    bpf_seccomp_data_t d = {0};
    d.arch = arch;
    d.nr = nr;
    d.args[0] = a0;
    d.args[1] = 1; /* SOCK_STREAM, for the socket calls */
    bool ok = false;
    uint32_t r = bpf_run(prog->p, prog->len, &d, &ok);
    return ok ? r : BPF_RUN_INVALID;
}

static uint32_t run3(const buf_t *prog, uint32_t arch, int nr, uint64_t a0, uint64_t a2)
{
    bpf_seccomp_data_t d = {0};
    d.arch = arch;
    d.nr = nr;
    d.args[0] = a0;
    d.args[1] = 3; /* SOCK_RAW, as netlink sockets are made */
    d.args[2] = a2;
    bool ok = false;
    uint32_t r = bpf_run(prog->p, prog->len, &d, &ok);
    return ok ? r : BPF_RUN_INVALID;
}

static void build(seccomp_arch_t a, bool unix_ok, buf_t *out)
{
    seccomp_opts_t o = {a, unix_ok};
    char *err = NULL;
    bool ok = seccomp_program(&o, out, &err);
    if (!CHECK(ok, "seccomp_program succeeds")) printf("#   %s\n", err);
    free(err);
}

/* Set-ID modes (SPEC §13): calls by number (written out, as above), the
 * argument that holds the mode and, for the open calls, the flags; -1 =
 * no such call on the arch. The expectations are spelled out per case, not
 * computed by seccomp_setid_refused (which the build's self-check uses). */
typedef struct {
    const char *name;
    int x86_64, aarch64, mode_arg, flags_arg;
} setid_nr_t;
/* clang-format off */
static const setid_nr_t setid_calls[] = {
    {"chmod", 90, -1, 1, -1},      {"fchmod", 91, 52, 1, -1},   {"fchmodat", 268, 53, 2, -1},
    {"fchmodat2", 452, 452, 2, -1}, {"creat", 85, -1, 1, -1},    {"open", 2, -1, 2, 1},
    {"openat", 257, 56, 3, 2},      {"mknod", 133, -1, 1, -1},   {"mknodat", 259, 33, 2, -1},
};
/* clang-format on */
#define O_CREAT_ 0100u
#define O_TMPFILE_ (020000000u | 0200000u) /* __O_TMPFILE | O_DIRECTORY (x86_64) */
#define ENOSYS_RET (BPF_RET_ERRNO | 38u)

static uint32_t run_args(const buf_t *prog, uint32_t arch, int nr, const uint64_t args[6])
{
    bpf_seccomp_data_t d = {0};
    d.arch = arch;
    d.nr = nr;
    memcpy(d.args, args, sizeof d.args);
    bool ok = false;
    uint32_t r = bpf_run(prog->p, prog->len, &d, &ok);
    return ok ? r : BPF_RUN_INVALID;
}

/* One call with mode (and flags where it has them) against want. */
static void setid_case(const buf_t *p, seccomp_arch_t a, const setid_nr_t *c, uint64_t mode, uint64_t flags,
                       uint32_t want)
{
    int nr = a == SECCOMP_X86_64 ? c->x86_64 : c->aarch64;
    if (nr < 0) return;
    uint64_t args[6] = {3, 4, 5, 6, 7, 8}; /* fds and pointers: must not matter */
    args[c->mode_arg] = mode;
    if (c->flags_arg >= 0) args[c->flags_arg] = flags;
    char name[200];
    snprintf(name, sizeof name, "%s: %s mode %#llo flags %#llo -> %s", seccomp_arch_name(a), c->name,
             (unsigned long long)mode, (unsigned long long)flags, want == BPF_RET_ALLOW ? "ALLOW" : "ERRNO(EPERM)");
    uint32_t arch = a == SECCOMP_X86_64 ? AUDIT_X86_64 : AUDIT_AARCH64;
    CHECK_INT(run_args(p, arch, nr, args), want, name);
}

static void test_setid(seccomp_arch_t a, const buf_t *p)
{
    for (size_t i = 0; i < sizeof setid_calls / sizeof *setid_calls; i++) {
        const setid_nr_t *c = &setid_calls[i];
        bool opens = c->flags_arg >= 0;
        uint64_t create = opens ? O_CREAT_ | 01 /* O_WRONLY */ : 0;
        /* ordinary modes pass */
        setid_case(p, a, c, 0644, create, BPF_RET_ALLOW);
        setid_case(p, a, c, 0755, create, BPF_RET_ALLOW);
        setid_case(p, a, c, 01777, create, BPF_RET_ALLOW);   /* sticky is not set-ID */
        setid_case(p, a, c, 0100644, create, BPF_RET_ALLOW); /* S_IFREG, as mknod takes it */
        /* either set-ID bit is refused, alone or together, with a file type, or high garbage */
        setid_case(p, a, c, 04755, create, EPERM_RET);
        setid_case(p, a, c, 02755, create, EPERM_RET);
        setid_case(p, a, c, 06777, create, EPERM_RET);
        setid_case(p, a, c, 04000, create, EPERM_RET);
        setid_case(p, a, c, 0102755, create, EPERM_RET);
        setid_case(p, a, c, 0xffffffff00004755ull, create, EPERM_RET);
        setid_case(p, a, c, 0x100000000ull | 0755, create, BPF_RET_ALLOW); /* the kernel reads the low half */
        if (!opens) continue;
        /* the open calls: the mode counts only when they create */
        setid_case(p, a, c, 04755, 0 /* O_RDONLY */, BPF_RET_ALLOW);
        setid_case(p, a, c, 06755, 02 | 01000 /* O_RDWR | O_TRUNC */, BPF_RET_ALLOW);
        setid_case(p, a, c, 04755, O_TMPFILE_ | 02, EPERM_RET);
        setid_case(p, a, c, 02755, O_TMPFILE_ | 02, EPERM_RET);
        setid_case(p, a, c, 0600, O_TMPFILE_ | 02, BPF_RET_ALLOW);
        setid_case(p, a, c, 04755, O_CREAT_ | 0200 /* O_EXCL */ | 0xffffffff00000000ull, EPERM_RET);
        setid_case(p, a, c, 04755, 0xffffffff00000000ull, BPF_RET_ALLOW);
    }
    uint32_t arch = a == SECCOMP_X86_64 ? AUDIT_X86_64 : AUDIT_AARCH64;
    uint64_t none[6] = {0};
    char name[120];
    snprintf(name, sizeof name, "%s: openat2 (437) -> ERRNO(ENOSYS), its mode is out of reach", seccomp_arch_name(a));
    CHECK_INT(run_args(p, arch, 437, none), ENOSYS_RET, name);
    /* mkdir: the kernel drops S_ISGID from mkdir's mode (vfs_mkdir): allowed */
    uint64_t mk[6] = {0, 02755, 0, 0, 0, 0}, mkat[6] = {0, 0, 02755, 0, 0, 0};
    if (a == SECCOMP_X86_64) CHECK_INT(run_args(p, arch, 83, mk), BPF_RET_ALLOW, "x86_64: mkdir mode 02755 -> ALLOW");
    snprintf(name, sizeof name, "%s: mkdirat mode 02755 -> ALLOW", seccomp_arch_name(a));
    CHECK_INT(run_args(p, arch, a == SECCOMP_X86_64 ? 258 : 34, mkat), BPF_RET_ALLOW, name);
    /* the table the filter is built from names the same calls */
    size_t n;
    const seccomp_setid_t *t = seccomp_setid_calls(&n);
    CHECK_INT(n, sizeof setid_calls / sizeof *setid_calls, "seccomp_setid_calls lists every set-ID call");
    for (size_t i = 0; i < n && i < sizeof setid_calls / sizeof *setid_calls; i++)
        CHECK(!strcmp(t[i].syscall, setid_calls[i].name) && t[i].mode_arg == setid_calls[i].mode_arg &&
                  t[i].flags_arg == setid_calls[i].flags_arg,
              setid_calls[i].name);
}

static void test_arch(seccomp_arch_t a)
{
    const char *an = seccomp_arch_name(a);
    uint32_t native = a == SECCOMP_X86_64 ? AUDIT_X86_64 : AUDIT_AARCH64;
    int sock = a == SECCOMP_X86_64 ? SOCKET_X86_64 : SOCKET_AARCH64;
    char name[160];
    buf_t p = BUF_INIT, u = BUF_INIT;
    build(a, false, &p);
    build(a, true, &u);
    snprintf(name, sizeof name, "%s: program is valid for the kernel", an);
    CHECK(bpf_check(p.p, p.len, NULL, NULL) && bpf_check(u.p, u.len, NULL, NULL), name);
    CHECK_INT(seccomp_audit_arch(a), native, "audit arch constant");

    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        int nr = nr_of(&denied[i], a);
        snprintf(name, sizeof name, "%s: %s (%d) -> ERRNO(EPERM)", an, denied[i].name, nr);
        CHECK_INT(run(&p, native, nr, 0), EPERM_RET, name);
        snprintf(name, sizeof name, "%s: %s denied with allow_unix_sockets too", an, denied[i].name);
        CHECK_INT(run(&u, native, nr, 0), EPERM_RET, name);
        snprintf(name, sizeof name, "%s: libseccomp agrees %s is %d", an, denied[i].name, nr);
        CHECK_INT(seccomp_arch_syscall_nr(a, denied[i].name), nr, name);
    }
    test_setid(a, &p);
    test_setid(a, &u);
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        int nr = nr_of(&allowed[i], a);
        snprintf(name, sizeof name, "%s: %s (%d) -> ALLOW", an, allowed[i].name, nr);
        CHECK_INT(run(&p, native, nr, 1 /* AF_UNIX in a0 must not matter */), BPF_RET_ALLOW, name);
    }

    /* socket(): AF_UNIX is denied with EPERM; AF_INET, AF_INET6 and
     * AF_NETLINK (NETLINK_ROUTE) are allowed; every other family, and any
     * domain with high bits set (the kernel would read its low half), gets
     * EAFNOSUPPORT. */
    snprintf(name, sizeof name, "%s: socket(AF_UNIX) -> ERRNO(EPERM)", an);
    CHECK_INT(run(&p, native, sock, 1), EPERM_RET, name);
    snprintf(name, sizeof name, "%s: socket(AF_UNIX | high garbage bits) -> ERRNO(EAFNOSUPPORT)", an);
    CHECK_INT(run(&p, native, sock, 0xffffffff00000001ull), EAFNO_RET, name);
    CHECK_INT(run(&p, native, sock, 0x0000000100000001ull), EAFNO_RET, "socket(1 | 1<<32) -> ERRNO(EAFNOSUPPORT)");
    snprintf(name, sizeof name, "%s: socket(AF_INET) -> ALLOW", an);
    CHECK_INT(run(&p, native, sock, 2), BPF_RET_ALLOW, name);
    CHECK_INT(run(&p, native, sock, 10), BPF_RET_ALLOW, "socket(AF_INET6) -> ALLOW");
    CHECK_INT(run(&p, native, sock, 16), BPF_RET_ALLOW, "socket(AF_NETLINK, NETLINK_ROUTE) -> ALLOW");
    CHECK_INT(run3(&p, native, sock, 16, 9), BPF_RET_ERRNO | 93u /* EPROTONOSUPPORT */,
              "socket(AF_NETLINK, NETLINK_AUDIT) -> ERRNO(EPROTONOSUPPORT)");
    CHECK_INT(run3(&p, native, sock, 16, 15), BPF_RET_ERRNO | 93u /* EPROTONOSUPPORT */,
              "socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT) -> ERRNO(EPROTONOSUPPORT)");
    CHECK_INT(run(&p, native, sock, 0x100000002ull), EAFNO_RET, "socket(AF_INET | 1<<32) -> ERRNO(EAFNOSUPPORT)");
    /* clang-format off */
    static const struct { uint64_t af; const char *name; } refused[] = {
        {0, "AF_UNSPEC"}, {3, "AF_AX25"}, {4, "AF_IPX"}, {5, "AF_APPLETALK"}, {15, "AF_KEY"}, {17, "AF_PACKET"},
        {29, "AF_CAN"}, {31, "AF_BLUETOOTH"}, {38, "AF_ALG"}, {40, "AF_VSOCK"}, {44, "AF_XDP"}, {45, "AF_MCTP"},
        {46, "AF_MAX (a family of a later kernel)"}, {0xffffffffu, "-1"}, {0x7fffffffu, "INT_MAX"},
    };
    /* clang-format on */
    int pair = nr_of(&(sysnr_t){"socketpair", 53, 199}, a);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(name, sizeof name, "%s: socket(%s) -> ERRNO(EAFNOSUPPORT)", an, refused[i].name);
        CHECK_INT(run(&p, native, sock, refused[i].af), EAFNO_RET, name);
        snprintf(name, sizeof name, "%s: socketpair(%s) -> ERRNO(EAFNOSUPPORT)", an, refused[i].name);
        CHECK_INT(run(&p, native, pair, refused[i].af), EAFNO_RET, name);
        snprintf(name, sizeof name, "%s: allow_unix_sockets: socket(%s) -> ERRNO(EAFNOSUPPORT)", an, refused[i].name);
        CHECK_INT(run(&u, native, sock, refused[i].af), EAFNO_RET, name);
    }
    snprintf(name, sizeof name, "%s: socketpair(AF_UNIX) -> ALLOW", an);
    CHECK_INT(run(&p, native, pair, 1), BPF_RET_ALLOW, name);
    snprintf(name, sizeof name, "%s: allow_unix_sockets: socket(AF_UNIX) -> ALLOW", an);
    CHECK_INT(run(&u, native, sock, 1), BPF_RET_ALLOW, name);
    CHECK(seccomp_arch_syscall_nr(a, "socket") == sock, "libseccomp agrees on socket's number");

    /* Another ABI: killed whatever the call. */
    uint32_t foreign[] = {a == SECCOMP_X86_64 ? AUDIT_I386 : AUDIT_ARM,
                          a == SECCOMP_X86_64 ? AUDIT_AARCH64 : AUDIT_X86_64, 0, 0xffffffffu};
    for (size_t f = 0; f < sizeof foreign / sizeof foreign[0]; f++) {
        int nrs[] = {0, 1, 20, 39, 102 /* i386 socketcall */, sock, 172};
        bool all = true;
        for (size_t k = 0; k < sizeof nrs / sizeof nrs[0]; k++)
            all &= run(&p, foreign[f], nrs[k], 1) == BPF_RET_KILL_PROCESS &&
                   run(&u, foreign[f], nrs[k], 1) == BPF_RET_KILL_PROCESS;
        snprintf(name, sizeof name, "%s: arch 0x%08x -> KILL_PROCESS", an, foreign[f]);
        CHECK(all, name);
    }

    if (a == SECCOMP_X86_64) {
        /* x32: the x86_64 arch value with bit 30 in the number. */
        int x32[] = {X32_BIT | 0, X32_BIT | 1, X32_BIT | 39, X32_BIT | SOCKET_X86_64, X32_BIT | 101,
                     X32_BIT | 512 /* rt_sigaction(x32) */, X32_BIT | 0x3fffffff, 0x7fffffff, (int)0x80000000};
        for (size_t k = 0; k < sizeof x32 / sizeof x32[0]; k++) {
            snprintf(name, sizeof name, "x86_64: x32/out-of-range nr 0x%08x -> KILL_PROCESS", (unsigned)x32[k]);
            CHECK_INT(run(&p, native, x32[k], 1), BPF_RET_KILL_PROCESS, name);
        }
        /* -1 is what a tracer writes to skip a call; the kernel answers
         * ENOSYS itself. libseccomp lets it through on purpose. */
        CHECK_INT(run(&p, native, -1, 0), BPF_RET_ALLOW, "x86_64: nr -1 (tracer skip) -> ALLOW");
    }

    /* Determinism and the option's effect. */
    buf_t again = BUF_INIT;
    build(a, false, &again);
    snprintf(name, sizeof name, "%s: two builds give the same bytes", an);
    CHECK(again.len == p.len && memcmp(again.p, p.p, p.len) == 0, name);
    CHECK(u.len != p.len || memcmp(u.p, p.p, p.len) != 0, "allow_unix_sockets changes the program");
    buf_t appended = BUF_INIT;
    buf_adds(&appended, "XY");
    build(a, false, &appended);
    CHECK(appended.len == p.len + 2 && memcmp(appended.p + 2, p.p, p.len) == 0, "seccomp_program appends");

    /* The embedded programs (made at build time) are what libseccomp makes now. */
    for (int unix_ok = 0; unix_ok < 2; unix_ok++) {
        seccomp_opts_t o = {a, unix_ok == 1};
        buf_t fresh = BUF_INIT;
        char *err = NULL;
        bool ok = seccomp_generate(&o, &fresh, &err);
        const buf_t *emb = unix_ok ? &u : &p;
        snprintf(name, sizeof name, "%s%s: the embedded program equals a fresh libseccomp build", an,
                 unix_ok ? " (AF_UNIX allowed)" : "");
        CHECK(ok && fresh.len == emb->len && memcmp(fresh.p, emb->p, emb->len) == 0, name);
        free(err);
        buf_free(&fresh);
    }

    buf_free(&again);
    buf_free(&appended);
    buf_free(&p);
    buf_free(&u);
}

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *s = text; (s = strstr(s, line)); s++)
        if ((s == text || s[-1] == '\n') && (s[n] == '\n' || s[n] == '\0')) return true;
    return false;
}

static void test_disasm_pins(void)
{
    buf_t p = BUF_INIT, d = BUF_INIT, d2 = BUF_INIT;
    build(SECCOMP_X86_64, false, &p);
    bpf_disasm(p.p, p.len, &d);
    bpf_disasm(p.p, p.len, &d2);
    CHECK_STR(d.p, d2.p, "disassembly is deterministic");
    size_t lines = 0;
    for (size_t i = 0; i < d.len; i++) lines += d.p[i] == '\n';
    CHECK_INT(lines, p.len / 8, "one line per instruction");
    const char *pins[] = {
        "0000: 0020 00 00 00000004  ld [4]                       ; arch",
        "0001: 0015 00 96 c000003e  jeq #0xc000003e, 2, 152      ; arch == AUDIT_ARCH_X86_64",
        "0003: 0035 00 01 40000000  jge #0x40000000, 4, 5        ; nr >= 0x40000000 (x32 ABI bit)",
        "0004: 0015 00 93 ffffffff  jeq #0xffffffff, 5, 152      ; nr == -1",
        "0005: 0015 90 00 00000065  jeq #0x65, 150, 6            ; nr == ptrace",
        "0028: 0015 00 01 000001b5  jeq #0x1b5, 29, 30           ; nr == openat2",
        "0029: 0006 00 00 00050026  ret #0x50026                 ; ERRNO(38)",
        "0046: 0015 13 00 000001c4  jeq #0x1c4, 66, 47           ; nr == fchmodat2",
        "0053: 0015 00 09 00400000  jeq #0x400000, 54, 63        ; args[1].lo & 0x400000 == 0x400000",
        "0081: 0015 00 09 00400000  jeq #0x400000, 82, 91        ; args[2].lo & 0x400000 == 0x400000",
        "0103: 0015 00 0f 00000035  jeq #0x35, 104, 119          ; nr == socketpair",
        "0119: 0015 00 1d 00000029  jeq #0x29, 120, 149          ; nr == socket",
        "0128: 0006 00 00 0005005d  ret #0x5005d                 ; ERRNO(93)",
        "0142: 0015 07 00 00000001  jeq #0x1, 150, 143           ; args[0].lo == 1",
        "0148: 0025 02 00 00000010  jgt #0x10, 151, 149          ; args[0].lo > 0x10",
        "0149: 0006 00 00 7fff0000  ret #0x7fff0000              ; ALLOW",
        "0150: 0006 00 00 00050001  ret #0x50001                 ; ERRNO(1)",
        "0151: 0006 00 00 00050061  ret #0x50061                 ; ERRNO(97)",
        "0152: 0006 00 00 80000000  ret #0x80000000              ; KILL_PROCESS",
    };
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "x86_64 disassembly pin, line %.4s", pins[i]);
        if (!CHECK(has_line(d.p, pins[i]), name)) printf("#   missing: %s\n", pins[i]);
    }
    buf_free(&p);
    buf_free(&d);
    buf_truncate(&d2, 0);
    build(SECCOMP_AARCH64, false, &p);
    bpf_disasm(p.p, p.len, &d2);
    CHECK(has_line(d2.p, "0001: 0015 00 7e c00000b7  jeq #0xc00000b7, 2, 128      ; arch == AUDIT_ARCH_AARCH64"),
          "aarch64 disassembly pin: arch check");
    CHECK(strstr(d2.p, "; nr == umount2\n") && strstr(d2.p, "jeq #0xc6, ") && !strstr(d2.p, "x32"),
          "aarch64 disassembly: umount2, socket 198, no x32 check");
    buf_free(&p);
    buf_free(&d2);
}

static void test_api(void)
{
    seccomp_arch_t a = SECCOMP_AARCH64;
    CHECK(seccomp_arch_from_name("x86_64", &a) && a == SECCOMP_X86_64, "arch x86_64");
    CHECK(seccomp_arch_from_name("amd64", &a) && a == SECCOMP_X86_64, "arch amd64");
    CHECK(seccomp_arch_from_name("aarch64", &a) && a == SECCOMP_AARCH64, "arch aarch64");
    CHECK(seccomp_arch_from_name("arm64", &a) && a == SECCOMP_AARCH64, "arch arm64");
    CHECK(!seccomp_arch_from_name("i386", &a) && !seccomp_arch_from_name("", &a) &&
              !seccomp_arch_from_name("X86_64", &a),
          "unknown arch names refused");
    CHECK_STR(seccomp_arch_name(SECCOMP_AARCH64), "aarch64", "arch name");
    size_t n;
    const seccomp_denial_t *d = seccomp_denials(&n);
    CHECK_INT(n, sizeof denied / sizeof denied[0] + 2 /* socket, umount */, "deny list length");
    bool every = true;
    for (size_t i = 0; i < n; i++) {
        bool found = !strcmp(d[i].syscall, "socket") || !strcmp(d[i].syscall, "umount");
        for (size_t j = 0; j < sizeof denied / sizeof denied[0]; j++) found |= !strcmp(d[i].syscall, denied[j].name);
        every &= found && d[i].why && d[i].why[0];
    }
    CHECK(every, "every denial is tested here and has a reason");
    CHECK(seccomp_arch_syscall_nr(SECCOMP_X86_64, "umount") == -1 &&
              seccomp_arch_syscall_nr(SECCOMP_AARCH64, "umount") == -1,
          "umount exists on neither target (skipped there)");
    CHECK(seccomp_arch_syscall_nr(SECCOMP_AARCH64, "socketcall") == -1 &&
              seccomp_arch_syscall_nr(SECCOMP_X86_64, "socketcall") == -1,
          "socketcall exists on neither target (only through the killed i386 ABI)");
    CHECK(seccomp_arch_syscall_nr(SECCOMP_X86_64, "no_such_call") == -1, "unknown name -> -1");
    seccomp_opts_t bad = {(seccomp_arch_t)7, false};
    buf_t out = BUF_INIT;
    char *err = NULL;
    CHECK(!seccomp_program(&bad, &out, &err) && err && strstr(err, "unknown target") && out.len == 0,
          "bad arch is an error, nothing appended");
    free(err);
}

/* ---- bpf.c on hand-written programs -------------------------------------------------- */

typedef struct {
    uint16_t code;
    uint8_t jt, jf;
    uint32_t k;
} ins_t;

static void assemble(const ins_t *ins, size_t n, buf_t *out)
{
    buf_truncate(out, 0);
    for (size_t i = 0; i < n; i++) {
        unsigned char b[8] = {(unsigned char)ins[i].code, (unsigned char)(ins[i].code >> 8), ins[i].jt, ins[i].jf,
                              (unsigned char)ins[i].k, (unsigned char)(ins[i].k >> 8),
                              (unsigned char)(ins[i].k >> 16), (unsigned char)(ins[i].k >> 24)};
        buf_add(out, b, 8);
    }
}

#define PROG(...) ((const ins_t[]){__VA_ARGS__}), sizeof((const ins_t[]){__VA_ARGS__}) / sizeof(ins_t)

static void expect_invalid(const ins_t *ins, size_t n, const char *why_want, size_t pc_want, const char *name)
{
    buf_t p = BUF_INIT;
    assemble(ins, n, &p);
    size_t pc = 999;
    const char *why = NULL;
    bool ok = true;
    bpf_seccomp_data_t d = {0};
    bool valid = bpf_check(p.p, p.len, &pc, &why);
    uint32_t r = bpf_run(p.p, p.len, &d, &ok);
    if (!CHECK(!valid && !ok && r == BPF_RUN_INVALID && why && !strcmp(why, why_want) && pc == pc_want, name))
        printf("#   why=%s pc=%zu\n", why ? why : "(null)", pc);
    buf_free(&p);
}

static uint32_t run_prog(const ins_t *ins, size_t n, const bpf_seccomp_data_t *d)
{
    buf_t p = BUF_INIT;
    assemble(ins, n, &p);
    bool ok = false;
    uint32_t r = bpf_run(p.p, p.len, d, &ok);
    buf_free(&p);
    return ok ? r : 0xdeadbeefu;
}

static void test_bpf(void)
{
    bpf_seccomp_data_t d = {0};
    d.nr = 7;
    d.arch = AUDIT_X86_64;
    d.ip = 0x1122334455667788ull;
    d.args[0] = 0xaabbccdd00000001ull;
    d.args[5] = 0x0102030405060708ull;

    /* clang-format off */
    CHECK_INT(run_prog(PROG({0x06, 0, 0, BPF_RET_ALLOW}), &d), BPF_RET_ALLOW, "ret #ALLOW");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 20}, {0x16, 0, 0, 0}), &d), 0xaabbccdd, "args[0].hi at 20 (little-endian)");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 16}, {0x16, 0, 0, 0}), &d), 1, "args[0].lo at 16");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 60}, {0x16, 0, 0, 0}), &d), 0x01020304, "args[5].hi at 60 (last word)");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 8}, {0x16, 0, 0, 0}), &d), 0x55667788, "ip.lo at 8");
    CHECK_INT(run_prog(PROG({0x80, 0, 0, 0}, {0x16, 0, 0, 0}), &d), 64, "ld #len = 64");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 0}, {0x04, 0, 0, 5}, {0x24, 0, 0, 3}, {0x14, 0, 0, 1}, {0x34, 0, 0, 4},
                            {0x16, 0, 0, 0}), &d), ((7 + 5) * 3 - 1) / 4, "add mul sub div");
    CHECK_INT(run_prog(PROG({0x00, 0, 0, 0xf0}, {0x54, 0, 0, 0x3c}, {0x44, 0, 0, 1}, {0xa4, 0, 0, 0xff},
                            {0x64, 0, 0, 4}, {0x74, 0, 0, 1}, {0x16, 0, 0, 0}), &d),
              (((0xf0u & 0x3c) | 1) ^ 0xff) << 4 >> 1, "and or xor lsh rsh");
    CHECK_INT(run_prog(PROG({0x00, 0, 0, 5}, {0x84, 0, 0, 0}, {0x16, 0, 0, 0}), &d), 0xfffffffbu, "neg");
    CHECK_INT(run_prog(PROG({0x01, 0, 0, 33}, {0x00, 0, 0, 1}, {0x6c, 0, 0, 0}, {0x16, 0, 0, 0}), &d), 2,
              "lsh x by 33 is masked to 1, as the kernel does");
    CHECK_INT(run_prog(PROG({0x01, 0, 0, 0}, {0x00, 0, 0, 9}, {0x3c, 0, 0, 0}, {0x06, 0, 0, BPF_RET_ALLOW}), &d), 0,
              "division by X = 0 returns 0 (KILL_THREAD)");
    CHECK_INT(run_prog(PROG({0x00, 0, 0, 42}, {0x02, 0, 0, 3}, {0x00, 0, 0, 0}, {0x61, 0, 0, 3}, {0x87, 0, 0, 0},
                            {0x16, 0, 0, 0}), &d), 42, "st, ldx M[], txa");
    CHECK_INT(run_prog(PROG({0x00, 0, 0, 9}, {0x07, 0, 0, 0}, {0x00, 0, 0, 0}, {0x1d, 0, 1, 0},
                            {0x06, 0, 0, 1}, {0x06, 0, 0, 2}), &d), 2, "tax, jeq x (not taken)");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 0}, {0x45, 1, 0, 4}, {0x06, 0, 0, 1}, {0x06, 0, 0, 2}), &d), 2,
              "jset taken (7 & 4)");
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 0}, {0x25, 1, 0, 7}, {0x35, 1, 0, 7}, {0x06, 0, 0, 1}, {0x06, 0, 0, 2}),
                       &d), 2, "jgt not taken, jge taken");
    CHECK_INT(run_prog(PROG({0x05, 0, 0, 1}, {0x06, 0, 0, 1}, {0x06, 0, 0, 2}), &d), 2, "ja skips");
    d.nr = -1;
    CHECK_INT(run_prog(PROG({0x20, 0, 0, 0}, {0x15, 0, 1, 0xffffffffu}, {0x06, 0, 0, 1}, {0x06, 0, 0, 2}), &d), 1,
              "nr -1 loads as 0xffffffff");
    /* clang-format on */

    expect_invalid(NULL, 0, "empty program", 0, "empty program refused");
    expect_invalid(PROG({0x06, 0, 0, 0}, {0x28, 0, 0, 0}, {0x06, 0, 0, 0}), "opcode not allowed in a seccomp filter",
                   1, "ldh [k] refused");
    expect_invalid(PROG({0x94, 0, 0, 3}, {0x06, 0, 0, 0}), "opcode not allowed in a seccomp filter", 0,
                   "mod refused (not in seccomp's list)");
    expect_invalid(PROG({0x106, 0, 0, 0}), "opcode not allowed in a seccomp filter", 0, "code above 0xff refused");
    expect_invalid(PROG({0x20, 0, 0, 64}, {0x06, 0, 0, 0}), "load outside struct seccomp_data or not 4-byte aligned",
                   0, "load at 64 refused");
    expect_invalid(PROG({0x20, 0, 0, 2}, {0x06, 0, 0, 0}), "load outside struct seccomp_data or not 4-byte aligned", 0,
                   "unaligned load refused");
    expect_invalid(PROG({0x20, 0, 0, 0xfffffffcu}, {0x06, 0, 0, 0}),
                   "load outside struct seccomp_data or not 4-byte aligned", 0, "huge offset refused");
    expect_invalid(PROG({0x15, 1, 0, 0}, {0x06, 0, 0, 0}), "jump out of range", 0, "jt past the end refused");
    expect_invalid(PROG({0x15, 0, 255, 0}, {0x06, 0, 0, 0}), "jump out of range", 0, "jf past the end refused");
    expect_invalid(PROG({0x05, 0, 0, 0xffffffffu}, {0x06, 0, 0, 0}), "jump out of range", 0, "ja wrap refused");
    expect_invalid(PROG({0x20, 0, 0, 0}), "last instruction is not a return", 0, "missing return refused");
    expect_invalid(PROG({0x06, 0, 0, 0}, {0x20, 0, 0, 0}), "last instruction is not a return", 1,
                   "return not last refused");
    expect_invalid(PROG({0x34, 0, 0, 0}, {0x06, 0, 0, 0}), "division by constant zero", 0, "div #0 refused");
    expect_invalid(PROG({0x64, 0, 0, 32}, {0x06, 0, 0, 0}), "shift by 32 or more", 0, "lsh #32 refused");
    expect_invalid(PROG({0x02, 0, 0, 16}, {0x06, 0, 0, 0}), "scratch memory index out of range", 0, "M[16] refused");
    expect_invalid(PROG({0x60, 0, 0, 0}, {0x06, 0, 0, 0}), "scratch memory read before it is written", 0,
                   "read of unwritten M[0] refused");
    expect_invalid(PROG({0x15, 0, 1, 0}, {0x02, 0, 0, 1}, {0x60, 0, 0, 1}, {0x16, 0, 0, 0}),
                   "scratch memory read before it is written", 2, "M[1] written on one path only refused");

    buf_t p = BUF_INIT;
    assemble(PROG({0x06, 0, 0, 0}), &p);
    buf_add(&p, "abc", 3);
    CHECK(!bpf_check(p.p, p.len, NULL, NULL), "trailing partial instruction refused");
    assemble(PROG({0x06, 0, 0, BPF_RET_ALLOW}), &p);
    buf_t big = BUF_INIT;
    for (int i = 0; i < 4096; i++) buf_add(&big, p.p, 8);
    CHECK(bpf_check(big.p, big.len, NULL, NULL), "4096 instructions accepted");
    buf_add(&big, p.p, 8);
    CHECK(!bpf_check(big.p, big.len, NULL, NULL), "4097 instructions refused");
    buf_free(&big);

    buf_t s = BUF_INIT;
    uint32_t rets[] = {BPF_RET_ALLOW, BPF_RET_KILL_PROCESS, BPF_RET_KILL_THREAD, BPF_RET_ERRNO | 1,
                       BPF_RET_TRAP | 5, BPF_RET_TRACE | 7, BPF_RET_LOG, BPF_RET_USER_NOTIF, 0x12340000u,
                       BPF_RET_ALLOW | 3};
    for (size_t i = 0; i < sizeof rets / sizeof rets[0]; i++) {
        bpf_ret_describe(rets[i], &s);
        buf_addc(&s, ' ');
    }
    CHECK_STR(s.p, "ALLOW KILL_PROCESS KILL_THREAD ERRNO(1) TRAP(5) TRACE(7) LOG USER_NOTIF UNKNOWN(0x12340000) "
                   "ALLOW+0x0003 ",
              "return value names");

    buf_truncate(&s, 0);
    assemble(PROG({0x28, 0, 0, 0}, {0x15, 9, 0, 1}, {0x06, 0, 0, 0}, {0x06, 0, 0, 0}), &p);
    buf_add(&p, "\x01\x02", 2);
    bpf_disasm(p.p, p.len, &s);
    CHECK_STR(s.p,
              "0000: 0028 00 00 00000000  ldh [0]                      ; invalid: opcode not allowed in a seccomp filter\n"
              "0001: 0015 09 00 00000001  jeq #0x1, 11, 2              ; invalid: jump out of range\n"
              "0002: 0006 00 00 00000000  ret #0x0                     ; KILL_THREAD\n"
              "0003: 0006 00 00 00000000  ret #0x0                     ; unreachable\n"
              "; 2 trailing bytes ignored\n"
              "; invalid program: length is not a whole number of instructions\n",
              "disassembly of a broken program");
    buf_truncate(&s, 0);
    assemble(PROG({0x20, 0, 0, 4}, {0x15, 0, 5, AUDIT_AARCH64}, {0x20, 0, 0, 0}, {0x15, 3, 0, 0xffffd8aau},
                  {0x15, 2, 0, 198}, {0x1d, 1, 0, 0}, {0x06, 0, 0, BPF_RET_ALLOW}, {0x06, 0, 0, BPF_RET_TRAP | 2}),
             &p);
    bpf_disasm(p.p, p.len, &s);
    CHECK_STR(s.p,
              "0000: 0020 00 00 00000004  ld [4]                       ; arch\n"
              "0001: 0015 00 05 c00000b7  jeq #0xc00000b7, 2, 7        ; arch == AUDIT_ARCH_AARCH64\n"
              "0002: 0020 00 00 00000000  ld [0]                       ; nr\n"
              "0003: 0015 03 00 ffffd8aa  jeq #0xffffd8aa, 7, 4        ; nr == 0xffffd8aa\n"
              "0004: 0015 02 00 000000c6  jeq #0xc6, 7, 5              ; nr == socket\n"
              "0005: 001d 01 00 00000000  jeq x, 7, 6                  ; nr == X\n"
              "0006: 0006 00 00 7fff0000  ret #0x7fff0000              ; ALLOW\n"
              "0007: 0006 00 00 00030002  ret #0x30002                 ; TRAP(2)\n",
              "disassembly names aarch64 syscalls once the arch is pinned, never libseccomp pseudo numbers");
    buf_truncate(&s, 0);
    bpf_disasm("", 0, &s);
    CHECK_STR(s.p, "; invalid program: empty program\n", "disassembly of nothing");
    buf_free(&s);
    buf_free(&p);
}

int main(void)
{
    test_api();
    test_arch(SECCOMP_X86_64);
    test_arch(SECCOMP_AARCH64);
    test_disasm_pins();
    test_bpf();
    return tap_done();
}
