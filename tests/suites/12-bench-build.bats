#!/usr/bin/env bats
# 12-bench-build — every benchmark program still links. CI does not run
# `make bench`, and nothing else builds tests/bench/*.c: a library added to
# the product left three of them unlinkable, and 60-mcp's comparison with a
# bare bwrap silently gone. Each script of tests/bench/ that builds a
# program (tests/bench/lib.sh's bench_cc) runs with BENCH_BUILD_ONLY=1, which
# ends it once its programs are built; every C program there must have been
# built by one. The programs link the plain build's library with cc, so
# under B=build/san every test skips (skip_under_san).

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    skip_under_san "the benchmarks link the plain build's library"
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    export B=${B:-build}
    tmp=$BATS_TEST_TMPDIR
}

@test "every benchmark script that builds a program builds it, and every C program of tests/bench/ is built" {
    local scripts
    scripts=$(grep -l '^\. tests/bench/lib\.sh' tests/bench/*)
    [ -n "$scripts" ]
    for s in $scripts; do
        BENCH_BUILD_ONLY=1 BENCH_BUILD_LOG=$tmp/built TMPDIR=$tmp run "$s"
        [ "$status" -eq 0 ] || fail "$s: exit $status: $(tail -n 8 <<< "$output")"
    done
    run diff <(LC_ALL=C sort -u "$tmp/built") <(printf '%s\n' tests/bench/*.c | LC_ALL=C sort)
    assert_success
}

@test "a program that does not link fails bench_cc" {
    printf 'int drun_no_such_function(void);\nint main(void) { return drun_no_such_function(); }\n' > "$tmp/bad.c"
    . tests/bench/lib.sh
    BENCH_BUILD_ONLY=1 run bench_cc "$tmp/bad" "$tmp/bad.c"
    assert_failure
    assert_output --partial drun_no_such_function
}
