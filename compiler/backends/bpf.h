/* bpf.h — classic BPF for seccomp, read back: a verifier that accepts exactly
 * what the kernel's seccomp loader accepts, a userspace interpreter, and a
 * deterministic disassembler for golden files and review.
 *
 * Programs are the raw bytes `bwrap --seccomp FD` reads: an array of 8-byte
 * struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}. Both supported targets
 * (x86_64, aarch64) are little-endian and libseccomp writes the program in the
 * target's byte order, so everything here decodes little-endian whatever the
 * host is, and lays out struct seccomp_data little-endian too (args[i].lo at
 * the lower offset). Nothing here keeps state between calls; the only memory
 * that outlives a call is what is appended to a caller's buf_t.
 */
#ifndef DRUN_BPF_H
#define DRUN_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define BPF_INSN_SIZE 8u          /* bytes per struct sock_filter */
#define BPF_MAX_INSNS 4096u       /* BPF_MAXINSNS: the kernel's per-filter limit */
#define BPF_SECCOMP_DATA_SIZE 64u /* sizeof(struct seccomp_data) */

/* The value bpf_run returns for a program the kernel would refuse to load.
 * A valid program can return any 32-bit value, so *ok is what tells them
 * apart; this constant only makes a forgotten check fail closed-looking
 * (0xffffffff is not an action the kernel knows, it would kill the process). */
#define BPF_RUN_INVALID 0xffffffffu

/* SECCOMP_RET_* actions (linux/seccomp.h), repeated here so that tests and
 * explain do not depend on the host's kernel headers being recent. */
#define BPF_RET_KILL_PROCESS 0x80000000u
#define BPF_RET_KILL_THREAD 0x00000000u
#define BPF_RET_TRAP 0x00030000u
#define BPF_RET_ERRNO 0x00050000u
#define BPF_RET_USER_NOTIF 0x7fc00000u
#define BPF_RET_TRACE 0x7ff00000u
#define BPF_RET_LOG 0x7ffc0000u
#define BPF_RET_ALLOW 0x7fff0000u
#define BPF_RET_ACTION_FULL 0xffff0000u
#define BPF_RET_DATA 0x0000ffffu

/* The seccomp_data the kernel hands a filter (struct seccomp_data). */
typedef struct bpf_seccomp_data {
    int nr;           /* syscall number, as the arch numbers it (x32: with bit 30) */
    uint32_t arch;    /* AUDIT_ARCH_* of the calling ABI */
    uint64_t ip;      /* instruction pointer */
    uint64_t args[6]; /* raw 64-bit syscall arguments */
} bpf_seccomp_data_t;

/* Checks prog (len bytes) as the kernel does before it accepts a seccomp
 * filter (bpf_check_classic + seccomp_check_filter): whole instructions,
 * 1..BPF_MAX_INSNS of them, only the opcodes seccomp allows, aligned 32-bit
 * loads inside struct seccomp_data, forward jumps that land inside the
 * program, scratch memory written before it is read, constant divisors and
 * shifts in range, and a return as the last instruction. Returns true when
 * valid; otherwise false with *bad_pc (the offending instruction, or the
 * instruction count for whole-program errors) and *why (a static string,
 * never freed) set when those pointers are not NULL. */
bool bpf_check(const void *prog, size_t len, size_t *bad_pc, const char **why);

/* Evaluates the seccomp program prog (len bytes) on d, exactly as the kernel
 * would, and returns the filter's 32-bit return value (action | data; compare
 * with BPF_RET_*). A program bpf_check rejects is not run: the result is
 * BPF_RUN_INVALID and *ok is false. *ok is true otherwise; ok may be NULL
 * when the caller has validated the program already. Division by a zero X
 * register ends the program with 0 (KILL_THREAD), as the kernel does. */
uint32_t bpf_run(const void *prog, size_t len, const bpf_seccomp_data_t *d, bool *ok);

/* Appends to out the name of a filter return value: "ALLOW", "KILL_PROCESS",
 * "ERRNO(1)", "TRACE(7)", ... An action the kernel does not know is written
 * "UNKNOWN(0x...)" (the kernel treats it as KILL_PROCESS). */
void bpf_ret_describe(uint32_t ret, buf_t *out);

/* Appends to out one line per instruction of prog (len bytes), deterministic
 * and host-independent, for golden files:
 *   0001: 0015 00 08 c000003e  jeq #0xc000003e, 2, 10   ; arch == AUDIT_ARCH_X86_64
 * pc, raw code/jt/jf/k, the tcpdump-style mnemonic with absolute jump
 * targets, and a comment naming seccomp_data fields (nr, arch, ip, args[i]
 * lo/hi), AUDIT_ARCH constants, syscall names (once a jump has pinned the
 * arch) and return actions. Any input is accepted: an instruction the kernel
 * would refuse carries "invalid: ..." in its comment, trailing bytes and
 * whole-program errors get a final "; ..." line. */
void bpf_disasm(const void *prog, size_t len, buf_t *out);

#endif
