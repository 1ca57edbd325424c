#!/usr/bin/env bats
# 32-config-errors — bad configs of every kind: `compile` exits 1 with a
# located diagnostic (file:line:col, the rule ID) and writes no artifact — not
# even over an existing artifact directory, which stays exactly as it was —
# and `run` never runs the command. One config per file in
# tests/config-errors/, named after the ID its first diagnostic must carry (or
# the kind of damage); the list below must name every one of them.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup_file() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    # artifacts compiled once, that every bad config then tries to overwrite
    "$B/drun-policy" compile builtin:default -o "$BATS_FILE_TMPDIR/existing" \
        --facts golden/facts-linux.json --facts golden/facts-macos.json > /dev/null
    (cd "$BATS_FILE_TMPDIR/existing" && sha256sum * | sha256sum) > "$BATS_FILE_TMPDIR/existing.sum"
}

setup() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    DP=$B/drun-policy
    export NO_COLOR=1
    tmp=$BATS_TEST_TMPDIR # made and removed by bats
}

# compile_fails NAME ID — exit 1, the first line "FILE:L:C: error: ... [ID]",
# no artifact directory made
compile_fails() {
    run -1 "$DP" compile "tests/config-errors/$1.toml" -o "$tmp/out" --facts golden/facts-linux.json
    assert_line --index 0 --regexp "^tests/config-errors/$1\.toml:[0-9]+:[0-9]+: error: .*\[$2\]\$"
    [ ! -e "$tmp/out" ]
}

# compile_over_existing NAME — the artifacts already there stay byte for byte,
# and nothing is added next to them
compile_over_existing() {
    local e=$BATS_FILE_TMPDIR/existing
    run -1 "$DP" compile "tests/config-errors/$1.toml" -o "$e" --facts golden/facts-linux.json
    assert_equal "$(cd "$e" && sha256sum * | sha256sum)" "$(cat "$BATS_FILE_TMPDIR/existing.sum")"
    assert_equal "$(ls "$e" | grep -v -E '^(policy\.(sb|json)|bwrap\.args|seccomp\.(bpf|txt))$')" ""
}

# run_never NAME — `run` exits 1 and the command never runs
run_never() {
    command -v bwrap > /dev/null || skip "bwrap is not installed"
    mkdir -p "$tmp/ws"
    run -1 "$DP" run "tests/config-errors/$1.toml" --workspace "$tmp/ws" -- sh -c 'touch ran'
    [ ! -e "$tmp/ws/ran" ]
}

@test "tests/config-errors holds exactly the configs tested here" {
    run -0 bash -c 'cd tests/config-errors && ls *.toml'
    assert_equal "$(echo $output)" "bad-command-entry.toml bad-domain.toml bad-env-name.toml control-char.toml dotdot.toml duplicate-table.toml glob-outside-deny.toml nul-in-string.toml out-of-range.toml protect-type.toml relative-path.toml truncated.toml type-mismatch.toml unknown-key.toml unknown-table.toml"
}

@test "compile bad-command-entry.toml: exit 1, located [bad-command-entry] error, no artifact directory" { compile_fails bad-command-entry bad-command-entry; }
@test "compile bad-command-entry.toml over existing artifacts leaves them untouched" { compile_over_existing bad-command-entry; }
@test "run bad-command-entry.toml: exit 1 and the command never runs" { run_never bad-command-entry; }

@test "compile bad-domain.toml: exit 1, located [bad-domain] error, no artifact directory" { compile_fails bad-domain bad-domain; }
@test "compile bad-domain.toml over existing artifacts leaves them untouched" { compile_over_existing bad-domain; }
@test "run bad-domain.toml: exit 1 and the command never runs" { run_never bad-domain; }

@test "compile bad-env-name.toml: exit 1, located [bad-env-name] error, no artifact directory" { compile_fails bad-env-name bad-env-name; }
@test "compile bad-env-name.toml over existing artifacts leaves them untouched" { compile_over_existing bad-env-name; }
@test "run bad-env-name.toml: exit 1 and the command never runs" { run_never bad-env-name; }

@test "compile control-char.toml: exit 1, located [bad-path] error, no artifact directory" { compile_fails control-char bad-path; }
@test "compile control-char.toml over existing artifacts leaves them untouched" { compile_over_existing control-char; }
@test "run control-char.toml: exit 1 and the command never runs" { run_never control-char; }

@test "compile dotdot.toml: exit 1, located [bad-path] error, no artifact directory" { compile_fails dotdot bad-path; }
@test "compile dotdot.toml over existing artifacts leaves them untouched" { compile_over_existing dotdot; }
@test "run dotdot.toml: exit 1 and the command never runs" { run_never dotdot; }

@test "compile duplicate-table.toml: exit 1, located [syntax] error, no artifact directory" { compile_fails duplicate-table syntax; }
@test "compile duplicate-table.toml over existing artifacts leaves them untouched" { compile_over_existing duplicate-table; }
@test "run duplicate-table.toml: exit 1 and the command never runs" { run_never duplicate-table; }

@test "compile glob-outside-deny.toml: exit 1, located [bad-path] error, no artifact directory" { compile_fails glob-outside-deny bad-path; }
@test "compile glob-outside-deny.toml over existing artifacts leaves them untouched" { compile_over_existing glob-outside-deny; }
@test "run glob-outside-deny.toml: exit 1 and the command never runs" { run_never glob-outside-deny; }

@test "compile nul-in-string.toml: exit 1, located [bad-value] error, no artifact directory" { compile_fails nul-in-string bad-value; }
@test "compile nul-in-string.toml over existing artifacts leaves them untouched" { compile_over_existing nul-in-string; }
@test "run nul-in-string.toml: exit 1 and the command never runs" { run_never nul-in-string; }

@test "compile out-of-range.toml: exit 1, located [bad-value] error, no artifact directory" { compile_fails out-of-range bad-value; }
@test "compile out-of-range.toml over existing artifacts leaves them untouched" { compile_over_existing out-of-range; }
@test "run out-of-range.toml: exit 1 and the command never runs" { run_never out-of-range; }

@test "compile protect-type.toml: exit 1, located [type-mismatch] error, no artifact directory" { compile_fails protect-type type-mismatch; }
@test "compile protect-type.toml over existing artifacts leaves them untouched" { compile_over_existing protect-type; }
@test "run protect-type.toml: exit 1 and the command never runs" { run_never protect-type; }

@test "compile relative-path.toml: exit 1, located [relative-path] error, no artifact directory" { compile_fails relative-path relative-path; }
@test "compile relative-path.toml over existing artifacts leaves them untouched" { compile_over_existing relative-path; }
@test "run relative-path.toml: exit 1 and the command never runs" { run_never relative-path; }

@test "compile truncated.toml: exit 1, located [syntax] error, no artifact directory" { compile_fails truncated syntax; }
@test "compile truncated.toml over existing artifacts leaves them untouched" { compile_over_existing truncated; }
@test "run truncated.toml: exit 1 and the command never runs" { run_never truncated; }

@test "compile type-mismatch.toml: exit 1, located [type-mismatch] error, no artifact directory" { compile_fails type-mismatch type-mismatch; }
@test "compile type-mismatch.toml over existing artifacts leaves them untouched" { compile_over_existing type-mismatch; }
@test "run type-mismatch.toml: exit 1 and the command never runs" { run_never type-mismatch; }

@test "compile unknown-key.toml: exit 1, located [unknown-key] error, no artifact directory" { compile_fails unknown-key unknown-key; }
@test "compile unknown-key.toml over existing artifacts leaves them untouched" { compile_over_existing unknown-key; }
@test "run unknown-key.toml: exit 1 and the command never runs" { run_never unknown-key; }

@test "compile unknown-table.toml: exit 1, located [unknown-key] error, no artifact directory" { compile_fails unknown-table unknown-key; }
@test "compile unknown-table.toml over existing artifacts leaves them untouched" { compile_over_existing unknown-table; }
@test "run unknown-table.toml: exit 1 and the command never runs" { run_never unknown-table; }

# An international domain needs libidn2. A dynamic drun-policy opens it only
# then (idn_dl.c); a host where it cannot be loaded rejects the name with its
# location rather than guess an A-label: here a stand-in libidn2.so.0 without
# its symbols. The static drun-policy has it linked in (idn_static.c): no
# stand-in can be shown to it, and none is needed. (Nor to a binary that
# links libidn2 anyway: the dynamic loader would fail before main.)
@test "an international domain without a loadable libidn2: located error, nothing written" {
    command -v cc > /dev/null || skip "no cc to build a stand-in"
    ldd "$DP" 2> /dev/null | grep -q '=>' || skip "$DP is static: libidn2 is linked in"
    ! ldd "$DP" 2> /dev/null | grep -q 'libidn2' || skip "$DP links libidn2 itself"
    printf 'domain_allowlist = ["b\xc3\xbccher.example"]\n' > "$tmp/idn.toml"
    mkdir -p "$tmp/fakeidn"
    echo 'int drun_not_idn2;' > "$tmp/fakeidn/f.c"
    cc -shared -fPIC -o "$tmp/fakeidn/libidn2.so.0" "$tmp/fakeidn/f.c"
    LD_LIBRARY_PATH="$tmp/fakeidn" run -1 "$DP" compile "$tmp/idn.toml" -o "$tmp/out-idn" --facts golden/facts-linux.json
    assert_output --regexp "idn.toml:1:21: error: .*libidn2 cannot be loaded"
    [ ! -e "$tmp/out-idn" ]
}

@test "with libidn2 (linked in or loaded) the same name compiles to its A-label" {
    printf 'domain_allowlist = ["b\xc3\xbccher.example"]\n' > "$tmp/idn.toml"
    run -0 "$DP" compile "$tmp/idn.toml" -o "$tmp/out-idn" --facts golden/facts-linux.json
    grep -q 'xn--bcher-kva.example' "$tmp/out-idn/policy.json"
}
