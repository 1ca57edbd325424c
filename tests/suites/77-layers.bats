#!/usr/bin/env bats
# 77-layers — the include rules of SPEC §1 (scripts/check-layers): each
# folder is one layer, a file includes its own layer or below, runtime/
# includes only compiler/drun_policy.h, and no two modules include each other.
# The tree must pass; a copy of it with one bad include planted must fail,
# naming the file and the rule, for each rule.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
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
    run scripts/check-layers
    assert_success
    refute_line --regexp '^(stale: )?[a-z]+/.*: includes'
    refute_line --partial 'stale:'
}

@test "a backend including review code is an upward include" {
    copy_tree
    printf '#include "lint.h"\n' >> "$tmp/t/compiler/backends/bpf.c"
    run scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'compiler/backends/bpf.c: includes compiler/review/lint.h, an upward include (backends is layer 4, review is layer 6)'
}

@test "policy including a backend is an upward include" {
    copy_tree
    printf '#include "bwrap.h"\n' >> "$tmp/t/compiler/policy/ppath.h"
    run scripts/check-layers "$tmp/t"
    assert_failure
    assert_line --partial 'compiler/policy/ppath.h: includes compiler/backends/bwrap.h, an upward include'
}

@test "runtime reaching past drun_policy.h fails" {
    copy_tree
    printf '#include "lattice.h"\n' >> "$tmp/t/runtime/log.c"
    run scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'runtime/log.c: includes compiler/lattice.h (core); runtime/ includes only compiler/drun_policy.h'
}

@test "two modules including each other are a circle" {
    copy_tree
    printf '#include "keys.h"\n' >> "$tmp/t/compiler/policy/policy.c" # keys.c includes policy.h
    run scripts/check-layers "$tmp/t"
    assert_failure
    assert_line 'include circle: compiler/policy/keys -> compiler/policy/policy -> compiler/policy/keys'
}

@test "a fixed known violation is reported as stale" {
    copy_tree
    echo 'include circle: compiler/a -> compiler/b -> compiler/a' >> "$tmp/t/scripts/check-layers.known"
    run scripts/check-layers "$tmp/t"
    assert_success
    assert_line --partial 'stale: include circle: compiler/a -> compiler/b -> compiler/a'
}
