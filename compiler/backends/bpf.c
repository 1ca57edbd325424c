/* bpf.c — classic BPF for seccomp, read back: the kernel's load-time checks,
 * an interpreter with the kernel's run-time semantics, and a disassembler.
 * The checks follow bpf_check_classic() + seccomp_check_filter() of Linux;
 * whatever this file accepts the kernel accepts, and the other way round.
 */
#include "bpf.h"

#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp_filter.h"

/* Classic BPF encodings (linux/bpf_common.h, linux/filter.h), spelled out so
 * that this file reads the same on any host. */
/* clang-format off */
enum {
    C_LD = 0x00, C_LDX = 0x01, C_ST = 0x02, C_STX = 0x03,
    C_ALU = 0x04, C_JMP = 0x05, C_RET = 0x06, C_MISC = 0x07,
    S_W = 0x00, S_H = 0x08, S_B = 0x10,
    M_IMM = 0x00, M_ABS = 0x20, M_IND = 0x40, M_MEM = 0x60, M_LEN = 0x80, M_MSH = 0xa0,
    O_ADD = 0x00, O_SUB = 0x10, O_MUL = 0x20, O_DIV = 0x30, O_OR = 0x40, O_AND = 0x50,
    O_LSH = 0x60, O_RSH = 0x70, O_NEG = 0x80, O_MOD = 0x90, O_XOR = 0xa0,
    J_JA = 0x00, J_JEQ = 0x10, J_JGT = 0x20, J_JGE = 0x30, J_JSET = 0x40,
    SRC_K = 0x00, SRC_X = 0x08,
    R_A = 0x10, R_X = 0x08,
    MISC_TAX = 0x00, MISC_TXA = 0x80,
};
/* clang-format on */
#define CLASS(c) ((c) & 0x07)
#define SIZE(c) ((c) & 0x18)
#define MODE(c) ((c) & 0xe0)
#define OP(c) ((c) & 0xf0)
#define SRC(c) ((c) & 0x08)
#define MEMWORDS 16u

typedef struct insn {
    uint16_t code;
    uint8_t jt, jf;
    uint32_t k;
} insn_t;

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static insn_t fetch(const unsigned char *prog, size_t pc)
{
    const unsigned char *p = prog + pc * BPF_INSN_SIZE;
    insn_t i = {(uint16_t)(p[0] | p[1] << 8), p[2], p[3], le32(p + 4)};
    return i;
}

/* The opcodes seccomp_check_filter() lets through, matched on the whole
 * 16-bit code as the kernel does (an unused bit set is a different opcode). */
static bool seccomp_opcode(uint16_t code)
{
    /* clang-format off */
    switch (code) {
    case C_LD | S_W | M_ABS:
    case C_LD | S_W | M_LEN:
    case C_LDX | S_W | M_LEN:
    case C_RET | SRC_K:
    case C_RET | R_A:
    case C_ALU | O_ADD | SRC_K: case C_ALU | O_ADD | SRC_X:
    case C_ALU | O_SUB | SRC_K: case C_ALU | O_SUB | SRC_X:
    case C_ALU | O_MUL | SRC_K: case C_ALU | O_MUL | SRC_X:
    case C_ALU | O_DIV | SRC_K: case C_ALU | O_DIV | SRC_X:
    case C_ALU | O_AND | SRC_K: case C_ALU | O_AND | SRC_X:
    case C_ALU | O_OR | SRC_K: case C_ALU | O_OR | SRC_X:
    case C_ALU | O_XOR | SRC_K: case C_ALU | O_XOR | SRC_X:
    case C_ALU | O_LSH | SRC_K: case C_ALU | O_LSH | SRC_X:
    case C_ALU | O_RSH | SRC_K: case C_ALU | O_RSH | SRC_X:
    case C_ALU | O_NEG:
    case C_LD | M_IMM:
    case C_LDX | M_IMM:
    case C_MISC | MISC_TAX:
    case C_MISC | MISC_TXA:
    case C_LD | M_MEM:
    case C_LDX | M_MEM:
    case C_ST:
    case C_STX:
    case C_JMP | J_JA:
    case C_JMP | J_JEQ | SRC_K: case C_JMP | J_JEQ | SRC_X:
    case C_JMP | J_JGE | SRC_K: case C_JMP | J_JGE | SRC_X:
    case C_JMP | J_JGT | SRC_K: case C_JMP | J_JGT | SRC_X:
    case C_JMP | J_JSET | SRC_K: case C_JMP | J_JSET | SRC_X:
        return true;
    default:
        return false;
    }
    /* clang-format on */
}

static bool is_cond_jump(uint16_t code)
{
    return CLASS(code) == C_JMP && OP(code) != J_JA;
}

/* The per-instruction part of the kernel's checks; NULL when insn pc of n is
 * acceptable on its own. */
static const char *insn_error(insn_t i, size_t pc, size_t n)
{
    if (!seccomp_opcode(i.code)) return "opcode not allowed in a seccomp filter";
    switch (i.code) {
    case C_LD | S_W | M_ABS:
        /* A load past struct seccomp_data would read kernel memory next to
         * it: the kernel refuses it, and so do we. */
        if (i.k >= BPF_SECCOMP_DATA_SIZE || (i.k & 3))
            return "load outside struct seccomp_data or not 4-byte aligned";
        break;
    case C_LD | M_MEM:
    case C_LDX | M_MEM:
    case C_ST:
    case C_STX:
        if (i.k >= MEMWORDS) return "scratch memory index out of range";
        break;
    case C_ALU | O_DIV | SRC_K:
        if (i.k == 0) return "division by constant zero";
        break;
    case C_ALU | O_LSH | SRC_K:
    case C_ALU | O_RSH | SRC_K:
        if (i.k >= 32) return "shift by 32 or more";
        break;
    case C_JMP | J_JA:
        if (i.k >= n - pc - 1) return "jump out of range";
        break;
    default:
        if (is_cond_jump(i.code) && (pc + i.jt + 1 >= n || pc + i.jf + 1 >= n))
            return "jump out of range";
        break;
    }
    return NULL;
}

/* check_load_and_stores() of the kernel: a conservative forward pass, one
 * bit per scratch word, merged (and) at every jump target. */
static bool mem_flow_ok(const unsigned char *prog, size_t n, size_t *bad_pc)
{
    uint16_t *masks = xmalloc(n * sizeof *masks);
    uint16_t valid = 0;
    bool ok = true;
    for (size_t pc = 0; pc < n; pc++) masks[pc] = 0xffff;
    for (size_t pc = 0; pc < n && ok; pc++) {
        insn_t i = fetch(prog, pc);
        valid &= masks[pc];
        if (i.code == C_ST || i.code == C_STX) {
            valid |= (uint16_t)(1u << i.k);
        } else if (i.code == (C_LD | M_MEM) || i.code == (C_LDX | M_MEM)) {
            if (!(valid & (1u << i.k))) {
                *bad_pc = pc;
                ok = false;
            }
        } else if (i.code == (C_JMP | J_JA)) {
            masks[pc + 1 + i.k] &= valid;
            valid = 0xffff;
        } else if (is_cond_jump(i.code)) {
            masks[pc + 1 + i.jt] &= valid;
            masks[pc + 1 + i.jf] &= valid;
            valid = 0xffff;
        }
    }
    free(masks);
    return ok;
}

bool bpf_check(const void *prog, size_t len, size_t *bad_pc, const char **why)
{
    size_t pc_dummy;
    const char *why_dummy;
    if (!bad_pc) bad_pc = &pc_dummy;
    if (!why) why = &why_dummy;
    size_t n = len / BPF_INSN_SIZE;
    *bad_pc = n;
    if (len % BPF_INSN_SIZE) {
        *why = "length is not a whole number of instructions";
        return false;
    }
    if (n == 0) {
        *why = "empty program";
        return false;
    }
    if (n > BPF_MAX_INSNS) {
        *why = "more than 4096 instructions";
        return false;
    }
    for (size_t pc = 0; pc < n; pc++) {
        const char *e = insn_error(fetch(prog, pc), pc, n);
        if (e) {
            *bad_pc = pc;
            *why = e;
            return false;
        }
    }
    if (CLASS(fetch(prog, n - 1).code) != C_RET) {
        *bad_pc = n - 1;
        *why = "last instruction is not a return";
        return false;
    }
    if (!mem_flow_ok(prog, n, bad_pc)) {
        *why = "scratch memory read before it is written";
        return false;
    }
    return true;
}

/* struct seccomp_data as the little-endian kernel lays it out. */
static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void seccomp_data_bytes(const bpf_seccomp_data_t *d, unsigned char out[BPF_SECCOMP_DATA_SIZE])
{
    put32(out, (uint32_t)d->nr);
    put32(out + 4, d->arch);
    put32(out + 8, (uint32_t)d->ip);
    put32(out + 12, (uint32_t)(d->ip >> 32));
    for (int a = 0; a < 6; a++) {
        put32(out + 16 + 8 * a, (uint32_t)d->args[a]);
        put32(out + 20 + 8 * a, (uint32_t)(d->args[a] >> 32));
    }
}

static bool jump_taken(uint16_t code, uint32_t a, uint32_t v)
{
    switch (OP(code)) {
    case J_JEQ: return a == v;
    case J_JGT: return a > v;
    case J_JGE: return a >= v;
    default: return (a & v) != 0; /* J_JSET */
    }
}

uint32_t bpf_run(const void *prog, size_t len, const bpf_seccomp_data_t *d, bool *ok)
{
    bool ok_dummy;
    if (!ok) ok = &ok_dummy;
    *ok = false;
    if (!bpf_check(prog, len, NULL, NULL)) return BPF_RUN_INVALID;

    unsigned char data[BPF_SECCOMP_DATA_SIZE];
    seccomp_data_bytes(d, data);
    size_t n = len / BPF_INSN_SIZE;
    uint32_t A = 0, X = 0, M[MEMWORDS] = {0};
    *ok = true;
    for (size_t pc = 0; pc < n; pc++) {
        insn_t i = fetch(prog, pc);
        uint32_t v = SRC(i.code) == SRC_X ? X : i.k;
        switch (CLASS(i.code)) {
        case C_LD:
            if (MODE(i.code) == M_ABS) A = le32(data + i.k);
            else if (MODE(i.code) == M_LEN) A = BPF_SECCOMP_DATA_SIZE;
            else if (MODE(i.code) == M_MEM) A = M[i.k];
            else A = i.k;
            break;
        case C_LDX:
            if (MODE(i.code) == M_LEN) X = BPF_SECCOMP_DATA_SIZE;
            else if (MODE(i.code) == M_MEM) X = M[i.k];
            else X = i.k;
            break;
        case C_ST: M[i.k] = A; break;
        case C_STX: M[i.k] = X; break;
        case C_ALU:
            switch (OP(i.code)) {
            case O_ADD: A += v; break;
            case O_SUB: A -= v; break;
            case O_MUL: A *= v; break;
            case O_DIV:
                /* The kernel ends the program with 0 on a zero divisor. */
                if (v == 0) return 0;
                A /= v;
                break;
            case O_AND: A &= v; break;
            case O_OR: A |= v; break;
            case O_XOR: A ^= v; break;
            case O_LSH: A <<= (v & 31); break; /* K < 32 was checked; X is masked as the kernel does */
            case O_RSH: A >>= (v & 31); break;
            default: A = 0u - A; break;        /* O_NEG */
            }
            break;
        case C_JMP:
            if (OP(i.code) == J_JA) pc += i.k;
            else pc += jump_taken(i.code, A, v) ? i.jt : i.jf;
            break;
        case C_RET:
            return i.code == (C_RET | R_A) ? A : i.k;
        default: /* C_MISC */
            if (i.code == (C_MISC | MISC_TAX)) X = A;
            else A = X;
            break;
        }
    }
    /* Unreachable: the last instruction returns and jumps land inside. */
    *ok = false;
    return BPF_RUN_INVALID;
}

void bpf_ret_describe(uint32_t ret, buf_t *out)
{
    uint32_t action = ret & BPF_RET_ACTION_FULL, data = ret & BPF_RET_DATA;
    switch (action) {
    case BPF_RET_TRAP: buf_printf(out, "TRAP(%u)", data); return;
    case BPF_RET_ERRNO: buf_printf(out, "ERRNO(%u)", data); return;
    case BPF_RET_TRACE: buf_printf(out, "TRACE(%u)", data); return;
    case BPF_RET_KILL_PROCESS: buf_adds(out, "KILL_PROCESS"); break;
    case BPF_RET_KILL_THREAD: buf_adds(out, "KILL_THREAD"); break;
    case BPF_RET_USER_NOTIF: buf_adds(out, "USER_NOTIF"); break;
    case BPF_RET_LOG: buf_adds(out, "LOG"); break;
    case BPF_RET_ALLOW: buf_adds(out, "ALLOW"); break;
    default: buf_printf(out, "UNKNOWN(0x%08x)", ret); return;
    }
    /* The kernel ignores data bits on these actions; a review should still
     * see that they are there. */
    if (data) buf_printf(out, "+0x%04x", data);
}

/* ---- disassembler ------------------------------------------------------------ */

/* clang-format off */
static const struct { uint32_t arch; const char *name; } audit_arches[] = {
    {0xc000003eu, "AUDIT_ARCH_X86_64"},  {0x40000003u, "AUDIT_ARCH_I386"},
    {0xc00000b7u, "AUDIT_ARCH_AARCH64"}, {0x40000028u, "AUDIT_ARCH_ARM"},
    {0xc00000f3u, "AUDIT_ARCH_RISCV64"}, {0x400000f3u, "AUDIT_ARCH_RISCV32"},
    {0xc0000015u, "AUDIT_ARCH_PPC64LE"}, {0x80000015u, "AUDIT_ARCH_PPC64"},
    {0x00000014u, "AUDIT_ARCH_PPC"},     {0x80000016u, "AUDIT_ARCH_S390X"},
    {0x00000016u, "AUDIT_ARCH_S390"},    {0xc0000102u, "AUDIT_ARCH_LOONGARCH64"},
    {0x00000008u, "AUDIT_ARCH_MIPS"},    {0x40000008u, "AUDIT_ARCH_MIPSEL"},
    {0x80000008u, "AUDIT_ARCH_MIPS64"},  {0xc0000008u, "AUDIT_ARCH_MIPSEL64"},
};
/* clang-format on */

static const char *audit_arch_name(uint32_t arch)
{
    for (size_t j = 0; j < sizeof audit_arches / sizeof audit_arches[0]; j++)
        if (audit_arches[j].arch == arch) return audit_arches[j].name;
    return NULL;
}

/* Only the two targets the compiler builds for get syscall names (taken
 * from libseccomp at build time: seccomp_syscall_name): their tables are
 * stable, so golden files stay stable. */
static bool named_arch(uint32_t arch)
{
    return arch == AUDIT_ARCH_X86_64 || arch == AUDIT_ARCH_AARCH64;
}

static void field_name(uint32_t off, buf_t *out)
{
    if (off == 0) buf_adds(out, "nr");
    else if (off == 4) buf_adds(out, "arch");
    else if (off < 16) buf_printf(out, "ip.%s", off == 8 ? "lo" : "hi");
    else buf_printf(out, "args[%u].%s", (off - 16) / 8, (off & 4) ? "hi" : "lo");
}

/* What the disassembler knows about A on entry to an instruction. */
typedef struct dstate {
    bool reached;    /* some path leads here */
    int a_off;       /* A holds this seccomp_data word (-1: something else) */
    uint32_t a_mask; /* ... and-ed with this mask */
    bool arch_known; /* every path here checked arch == arch */
    uint32_t arch;
} dstate_t;

static void merge(dstate_t *to, const dstate_t *from)
{
    if (!to->reached) {
        *to = *from;
        return;
    }
    if (to->a_off != from->a_off || to->a_mask != from->a_mask) to->a_off = -1;
    if (!from->arch_known || to->arch != from->arch) to->arch_known = false;
}

static void value_name(const dstate_t *s, uint32_t k, buf_t *out)
{
    const char *an;
    if (s->a_off == 4 && s->a_mask == 0xffffffffu && (an = audit_arch_name(k))) {
        buf_adds(out, an);
        return;
    }
    if (s->a_off == 0 && s->a_mask == 0xffffffffu) {
        if (k == 0xffffffffu) {
            buf_adds(out, "-1");
            return;
        }
        if (k == 0x40000000u) {
            buf_adds(out, "0x40000000 (x32 ABI bit)");
            return;
        }
        /* Below bit 30 only: libseccomp keeps negative "pseudo" numbers for
         * calls an arch lacks, which no kernel ever puts in nr. */
        if (s->arch_known && named_arch(s->arch) && k < 0x40000000u) {
            const char *name = seccomp_syscall_name(s->arch, k);
            if (name) {
                buf_adds(out, name);
                return;
            }
        }
    }
    if (k < 10) buf_printf(out, "%u", k);
    else buf_printf(out, "0x%x", k);
}

static void jump_comment(const dstate_t *s, insn_t i, buf_t *c)
{
    static const char *const ops[] = {"?", "==", ">", ">=", "&"};
    unsigned op = OP(i.code) >> 4;
    if (s->a_off < 0) return;
    field_name((uint32_t)s->a_off, c);
    if (s->a_mask != 0xffffffffu) buf_printf(c, " & 0x%x", s->a_mask);
    buf_printf(c, " %s ", op < sizeof ops / sizeof ops[0] ? ops[op] : "?");
    if (SRC(i.code) == SRC_X) buf_adds(c, "X");
    else value_name(s, i.k, c);
}

static const char *alu_name(uint16_t code)
{
    static const char *const names[] = {"add", "sub", "mul", "div", "or", "and", "lsh",
                                        "rsh", "neg", "mod", "xor"};
    unsigned op = OP(code) >> 4;
    return op < sizeof names / sizeof names[0] ? names[op] : NULL;
}

/* The tcpdump -d style mnemonic of i at pc; jump targets are absolute. */
static void mnemonic(insn_t i, size_t pc, buf_t *m)
{
    static const char *const sz[] = {"", "h", "b", "?"};
    static const char *const jn[] = {"ja", "jeq", "jgt", "jge", "jset"};
    const char *s = sz[SIZE(i.code) >> 3];
    switch (CLASS(i.code)) {
    case C_LD:
    case C_LDX: {
        const char *r = CLASS(i.code) == C_LD ? "ld" : "ldx";
        switch (MODE(i.code)) {
        case M_IMM: buf_printf(m, "%s%s #0x%x", r, s, i.k); return;
        case M_ABS: buf_printf(m, "%s%s [%u]", r, s, i.k); return;
        case M_IND: buf_printf(m, "%s%s [x + %u]", r, s, i.k); return;
        case M_MEM: buf_printf(m, "%s%s M[%u]", r, s, i.k); return;
        case M_LEN: buf_printf(m, "%s%s #len", r, s); return;
        case M_MSH: buf_printf(m, "%s%s 4*([%u]&0xf)", r, s, i.k); return;
        default: break;
        }
        break;
    }
    case C_ST: buf_printf(m, "st M[%u]", i.k); return;
    case C_STX: buf_printf(m, "stx M[%u]", i.k); return;
    case C_ALU: {
        const char *a = alu_name(i.code);
        if (!a) break;
        if (OP(i.code) == O_NEG) buf_adds(m, a);
        else if (SRC(i.code) == SRC_X) buf_printf(m, "%s x", a);
        else buf_printf(m, "%s #0x%x", a, i.k);
        return;
    }
    case C_JMP: {
        unsigned op = OP(i.code) >> 4;
        if (op >= sizeof jn / sizeof jn[0]) break;
        if (op == 0) {
            buf_printf(m, "ja %zu", pc + 1 + (size_t)i.k);
            return;
        }
        if (SRC(i.code) == SRC_X) buf_printf(m, "%s x", jn[op]);
        else buf_printf(m, "%s #0x%x", jn[op], i.k);
        buf_printf(m, ", %zu, %zu", pc + 1 + i.jt, pc + 1 + i.jf);
        return;
    }
    case C_RET:
        if ((i.code & 0x18) == R_A) buf_adds(m, "ret a");
        else if ((i.code & 0x18) == R_X) buf_adds(m, "ret x");
        else buf_printf(m, "ret #0x%x", i.k);
        return;
    default: /* C_MISC */
        if ((i.code & 0xf8) == MISC_TXA) {
            buf_adds(m, "txa");
            return;
        }
        if ((i.code & 0xf8) == MISC_TAX) {
            buf_adds(m, "tax");
            return;
        }
        break;
    }
    buf_adds(m, "???");
}

/* Flows the state of instruction pc to its successors. */
static void propagate(dstate_t *st, size_t n, size_t pc, insn_t i)
{
    dstate_t s = st[pc];
    if (CLASS(i.code) == C_RET) return;
    if (i.code == (C_LD | S_W | M_ABS)) {
        s.a_off = (i.k < BPF_SECCOMP_DATA_SIZE && !(i.k & 3)) ? (int)i.k : -1;
        s.a_mask = 0xffffffffu;
    } else if (i.code == (C_ALU | O_AND | SRC_K) && s.a_off >= 0) {
        s.a_mask &= i.k;
    } else if (CLASS(i.code) == C_LD || CLASS(i.code) == C_ALU ||
               (CLASS(i.code) == C_MISC && i.code != (C_MISC | MISC_TAX))) {
        s.a_off = -1; /* A now holds something else */
    }
    if (CLASS(i.code) != C_JMP) {
        if (pc + 1 < n) merge(&st[pc + 1], &s);
        return;
    }
    if (OP(i.code) == J_JA) {
        if (i.k < n - pc - 1) merge(&st[pc + 1 + i.k], &s);
        return;
    }
    size_t t = pc + 1 + i.jt, f = pc + 1 + i.jf;
    if (t < n) {
        dstate_t ts = s;
        /* Past "jeq arch == K" taken, the syscall numbers are K's. */
        if (OP(i.code) == J_JEQ && SRC(i.code) == SRC_K && s.a_off == 4 && s.a_mask == 0xffffffffu) {
            ts.arch_known = true;
            ts.arch = i.k;
        }
        merge(&st[t], &ts);
    }
    if (f < n) merge(&st[f], &s);
}

void bpf_disasm(const void *prog, size_t len, buf_t *out)
{
    size_t n = len / BPF_INSN_SIZE;
    dstate_t *st = n ? xcalloc(n, sizeof *st) : NULL;
    buf_t m = BUF_INIT, c = BUF_INIT;
    if (n) {
        st[0].reached = true;
        st[0].a_off = -1;
    }
    for (size_t pc = 0; pc < n; pc++) {
        insn_t i = fetch(prog, pc);
        buf_truncate(&m, 0);
        buf_truncate(&c, 0);
        mnemonic(i, pc, &m);
        if (!st[pc].reached) {
            st[pc].a_off = -1;
            buf_adds(&c, "unreachable");
        } else if (i.code == (C_LD | S_W | M_ABS) && i.k < BPF_SECCOMP_DATA_SIZE && !(i.k & 3)) {
            field_name(i.k, &c);
        } else if (is_cond_jump(i.code)) {
            jump_comment(&st[pc], i, &c);
        } else if (i.code == (C_RET | SRC_K)) {
            bpf_ret_describe(i.k, &c);
        }
        const char *e = insn_error(i, pc, n);
        if (e) buf_printf(&c, "%sinvalid: %s", c.len ? "; " : "", e);
        buf_printf(out, "%04zu: %04x %02x %02x %08x  ", pc, i.code, i.jt, i.jf, i.k);
        if (c.len) buf_printf(out, "%-28s ; %s\n", buf_cstr(&m), buf_cstr(&c));
        else buf_printf(out, "%s\n", buf_cstr(&m));
        if (st[pc].reached) propagate(st, n, pc, i);
    }
    if (len % BPF_INSN_SIZE) buf_printf(out, "; %zu trailing bytes ignored\n", len % BPF_INSN_SIZE);
    size_t bad;
    const char *why;
    if (!bpf_check(prog, len, &bad, &why)) {
        if (bad < n) buf_printf(out, "; invalid program: %s (at %04zu)\n", why, bad);
        else buf_printf(out, "; invalid program: %s\n", why);
    }
    free(st);
    buf_free(&m);
    buf_free(&c);
}
