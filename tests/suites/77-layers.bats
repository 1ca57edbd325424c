#!/usr/bin/env bats
# 77-layers — the include rules of SPEC §1 (scripts/check-layers): each
# folder is one layer, a file includes its own layer or below, runtime/
# includes only compiler/drun_policy.h, and no two modules include each other;
# and the naming rule: a header declares functions under its module's prefix.
# The tree must pass; a copy of it with one bad include or name planted must
# fail, naming the file and the rule, for each rule.
# It checks the source tree, not a build: under B=build/san every test skips
# (skip_under_san), as the plain run checked the same files.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    skip_under_san
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    tmp=$BATS_TEST_TMPDIR
}

# A copy of the sources and the checker, for a planted include.
copy_tree() {
    mkdir -p "$tmp/t/scripts"
    cp -r grammar compiler runtime "$tmp/t/"
    cp scripts/check-layers scripts/check-layers.known "$tmp/t/scripts/"
}

@test "the tree keeps its layers (known violations only)" {
    run "${PYTHON3:-python3}" scripts/check-layers
    assert_success
    # (not refute_line: bats-assert's refute_line fails on an empty output)
    [ -z "$(grep -E '^(stale: )?[a-z]+/.*: (includes|declares)' <<< "$output")" ]
    [ -z "$(grep -E '^include circle' <<< "$output")" ]
    [ -z "$(grep -F 'stale:' <<< "$output")" ]
}

@test "a backend including review code is an upward include" {
    copy_tree
    printf '#include "lint.h"\n' >> "$tmp/t/compiler/backends/bpf.c"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'compiler/backends/bpf.c: includes compiler/review/lint.h, an upward include (backends is layer 4, review is layer 6)'
}

@test "policy including a backend is an upward include" {
    copy_tree
    printf '#include "bwrap.h"\n' >> "$tmp/t/compiler/policy/ppath.h"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line --partial 'compiler/policy/ppath.h: includes compiler/backends/bwrap.h, an upward include'
}

@test "runtime reaching past drun_policy.h fails" {
    copy_tree
    printf '#include "lattice.h"\n' >> "$tmp/t/runtime/log.c"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'runtime/log.c: includes compiler/lattice.h (core); runtime/ includes only compiler/drun_policy.h'
}

@test "two modules including each other are a circle" {
    copy_tree
    printf '#include "keys.h"\n' >> "$tmp/t/compiler/policy/policy.c" # keys.c includes policy.h
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'include circle: compiler/policy/keys -> compiler/policy/policy -> compiler/policy/keys'
}

@test "a fixed known violation is reported as stale" {
    copy_tree
    echo 'include circle: compiler/a -> compiler/b -> compiler/a' >> "$tmp/t/scripts/check-layers.known"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_success
    assert_line --partial 'stale: include circle: compiler/a -> compiler/b -> compiler/a'
}

@test "runtime's server header including mcp.h again is a circle" {
    copy_tree
    # mcp.c includes server.h and tools.h (which includes server.h)
    printf '#include "mcp.h"\n' >> "$tmp/t/runtime/server.h"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'include circle: runtime/mcp -> runtime/server -> runtime/mcp'
    assert_line 'include circle: runtime/mcp -> runtime/tools -> runtime/server -> runtime/mcp'
}

@test "a header declaring a function under another module's prefix fails" {
    copy_tree
    printf 'bool path_has_glob(const char *s);\n' >> "$tmp/t/compiler/policy/glob.h"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line "compiler/policy/glob.h: declares path_has_glob: path_ is not its module's prefix (glob_)"
}

@test "a name is checked against the header, the .c that defines it and their family" {
    copy_tree
    # cli.h declares cmd_*, each defined in its cmd_*.c; seccomp_filter.h
    # declares seccomp_* of the seccomp_*.c family: neither is a violation.
    # A static inline helper, a typedef and a macro are not exports.
    printf 'static inline int ppath_x(void) { return 0; }\ntypedef int (*glob_fn)(void);\n#define path_m(x) (x)\n' \
        >> "$tmp/t/compiler/policy/glob.h"
    printf 'int cmd_zz(void);\n' >> "$tmp/t/compiler/cli/cli.h"
    printf '#include "cli.h"\nint cmd_zz(void) { return 0; }\n' > "$tmp/t/compiler/cli/cmd_zz.c"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_success
    printf 'int cmd_yy(void);\n' >> "$tmp/t/compiler/cli/cli.h" # defined nowhere: only cli_ fits
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line "compiler/cli/cli.h: declares cmd_yy: cmd_ is not its module's prefix (cli_)"
}

@test "a listed violation passes; a new name under its prefix fails and leaves the old line stale" {
    copy_tree
    local line="compiler/sandbox/fslayer.h: declares zz_one: zz_ is not its module's prefix (fslayer_)"
    printf 'void zz_one(void);\n' >> "$tmp/t/compiler/sandbox/fslayer.h"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line "$line"
    echo "$line" >> "$tmp/t/scripts/check-layers.known"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_success
    printf 'void zz_two(void);\n' >> "$tmp/t/compiler/sandbox/fslayer.h"
    run "${PYTHON3:-python3}" scripts/check-layers "$tmp/t"
    assert_failure
    assert_line "compiler/sandbox/fslayer.h: declares zz_one, zz_two: zz_ is not its module's prefix (fslayer_)"
    assert_line --regexp '^stale: compiler/sandbox/fslayer.h: declares zz_one: '
}
