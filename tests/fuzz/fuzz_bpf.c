/* fuzz_bpf.c — libFuzzer harness for bpf.c: any bytes as a seccomp program,
 * run on seccomp_data taken from the input and on a few fixed ones, and
 * disassembled. Besides "no crash, no out-of-bounds read", it checks that the
 * verifier, the interpreter and the disassembler agree with each other.
 * Seeds: tests/fuzz/corpus/bpf/ (the generated x86_64 and aarch64 programs).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond) abort();
}

static void run_one(const uint8_t *prog, size_t size, bool valid, const bpf_seccomp_data_t *d)
{
    bool ok = !valid;
    uint32_t r = bpf_run(prog, size, d, &ok);
    must(ok == valid);
    if (!valid) must(r == BPF_RUN_INVALID);
    bool ok2;
    must(bpf_run(prog, size, d, &ok2) == r && ok2 == ok); /* no hidden state */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so ASan sees any read past the end. */
    uint8_t *prog = malloc(size ? size : 1);
    if (size) memcpy(prog, data, size);

    size_t bad = 0;
    const char *why = NULL;
    bool valid = bpf_check(prog, size, &bad, &why);
    must(valid || (why && *why));

    bpf_seccomp_data_t d;
    memset(&d, 0, sizeof d);
    memcpy(&d, prog, size < sizeof d ? size : sizeof d); /* input-chosen, may be any bits */
    run_one(prog, size, valid, &d);
    static const uint32_t arches[] = {0xc000003eu, 0xc00000b7u, 0x40000003u, 0};
    static const int nrs[] = {0, 41, 101, 198, -1, 0x40000027};
    for (size_t a = 0; a < sizeof arches / sizeof arches[0]; a++) {
        for (size_t k = 0; k < sizeof nrs / sizeof nrs[0]; k++) {
            bpf_seccomp_data_t f = {nrs[k], arches[a], 0x400000, {1, 1, 0, 0, 0, 0xffffffff00000001ull}};
            run_one(prog, size, valid, &f);
        }
    }

    buf_t out = BUF_INIT;
    bpf_disasm(prog, size, &out);
    size_t lines = 0;
    for (size_t i = 0; i < out.len; i++) lines += out.p[i] == '\n';
    must(out.len > 0 && out.p[out.len - 1] == '\n' && strlen(out.p) == out.len);
    /* A valid program: one line per instruction, nothing else, no "invalid". */
    if (valid) must(lines == size / BPF_INSN_SIZE && !strstr(out.p, "invalid"));
    else must(strstr(out.p, "; invalid program: ") != NULL);
    buf_free(&out);

    buf_t name = BUF_INIT;
    bpf_ret_describe(size >= 4 ? (uint32_t)prog[0] << 24 | (uint32_t)prog[1] << 16 | prog[2] << 8 | prog[3] : 0,
                     &name);
    must(name.len > 0);
    buf_free(&name);
    free(prog);
    return 0;
}
