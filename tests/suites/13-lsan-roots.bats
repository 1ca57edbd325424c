#!/usr/bin/env bats
# 13-lsan-roots — the sanitizer build's leak check still finds every leak and
# reports nothing else. tests/lib/lsan_roots.c turns LeakSanitizer's scan of
# the programs' globals off and hands it, at exit, only the pages of them a
# process touched (the runtime's 10 MB of never-touched tables cost 40 ms at
# every exit). A block that only a global reaches must stay reachable, in
# .data, deep in .bss and in a library's globals; a lost block must still be
# reported. The subject is tests/helpers/lsan_leak.c, built with the SAN
# run's flags and the roots linked in, as drun-policy is, and once without
# them, to show that the roots are what keeps its blocks reachable. Under
# the plain run (no sanitizer) every test skips.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup_file() {
    export ROOT=${ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    case ${B:-build} in *san*) ;; *) return 0 ;; esac
    cd "$ROOT" || return 1
    local t=$BATS_FILE_TMPDIR
    (source tests/lib/tap.sh && tap_build "$t/roots" tests/helpers/lsan_leak.c tests/lib/lsan_roots.c -- -DDRUN_SAN=1) > "$t/roots.build" 2>&1 || true
    (source tests/lib/tap.sh && TAP_NOSAN=1 tap_build "$t/bare" tests/helpers/lsan_leak.c -- "${TAP_SAN[@]}") > "$t/bare.build" 2>&1 || true
}

setup() {
    case ${B:-build} in *san*) ;; *) skip "the plain build has no leak check" ;; esac
    t=$BATS_FILE_TMPDIR
    [ -x "$t/roots" ] || fail "tap_build failed: $(cat "$t/roots.build" "$t/roots.log" 2> /dev/null | tail -n 20)"
    [ -x "$t/bare" ] || fail "tap_build (no roots) failed: $(cat "$t/bare.build" "$t/bare.log" 2> /dev/null | tail -n 20)"
    # the roots decide alone: whatever LSAN_OPTIONS the run has, the globals scan stays off
    export LSAN_OPTIONS=use_globals=0
}

@test "blocks reached from .data, deep .bss and libc's globals are not reported" {
    run -0 "$t/roots"
    refute_output --partial LeakSanitizer
}

@test "a lost block is reported, and the process fails" {
    run -1 "$t/roots" leak
    assert_output --partial "Direct leak of 4242 byte(s) in 1 object(s)"
    assert_output --partial "SUMMARY: AddressSanitizer: 4242 byte(s) leaked in 1 allocation(s)."
}

@test "without the roots, the same blocks are reported (what the first test proves is the roots' doing)" {
    run -1 "$t/bare"
    assert_output --partial "Direct leak of 100 byte(s)"
    assert_output --partial "Direct leak of 200 byte(s)"
    assert_output --partial "setenv"
}

@test "the SAN build's drun-policy has the roots linked in; the control program has not" {
    nm "$B/drun-policy" | grep -q ' T __lsan_default_options$' || fail "$B/drun-policy: no lsan_roots.c linked in"
    run ! grep -q ' T __lsan_default_options$' < <(nm "$t/bare")
    unset LSAN_OPTIONS
    run -0 "$t/roots"
    run -0 "$t/bare"
}
