#!/usr/bin/env bats
# 79-format — every C file is as `make format` (clang-format-19, .clang-format)
# leaves it: scripts/check-format over the Makefile's list (make -s
# format-files). A copy of the tree with one line mis-indented must fail,
# naming that file and no other, and `make format` must put it back.
# It checks the source tree, not a build: under B=build/san every test skips
# (skip_under_san), as the plain run checked the same files.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    skip_under_san
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    tmp=$BATS_TEST_TMPDIR
}

# What make format-files needs: the Makefile, the style, the C folders.
copy_tree() {
    mkdir -p "$tmp/t/scripts" "$tmp/t/tests"
    cp Makefile VERSION .clang-format "$tmp/t/"
    cp -r grammar compiler runtime "$tmp/t/"
    cp -r tests/unit tests/fuzz tests/bench tests/helpers "$tmp/t/tests/"
    cp scripts/check-format scripts/*.c "$tmp/t/scripts/"
}

@test "every C file is formatted (make format)" {
    run scripts/check-format
    assert_success
    assert_output ''
}

@test "the list covers every C file outside build/ and node_modules" {
    run make -s --no-print-directory format-files
    assert_success
    listed=$(printf '%s\n' "$output" | sort)
    found=$(find . -path ./build -prune -o -path '*/node_modules' -prune -o -name '*.[ch]' -print | sed 's|^\./||' | sort)
    [ "$listed" = "$found" ] || { diff <(echo "$listed") <(echo "$found"); false; }
}

@test "a mis-indented line fails, naming its file; make format puts it back" {
    copy_tree
    cp compiler/backends/bpf.c "$tmp/bpf.c.orig"
    sed -i 's/^    if (!seccomp_opcode(i.code)) return/  if (!seccomp_opcode(i.code)) return/' "$tmp/t/compiler/backends/bpf.c"
    run ! cmp -s "$tmp/bpf.c.orig" "$tmp/t/compiler/backends/bpf.c" # the line was there
    run scripts/check-format "$tmp/t"
    assert_failure 1
    assert_output 'compiler/backends/bpf.c: not formatted (run make format)'
    run make -s -C "$tmp/t" format
    assert_success
    cmp "$tmp/bpf.c.orig" "$tmp/t/compiler/backends/bpf.c"
    run scripts/check-format "$tmp/t"
    assert_success
}
