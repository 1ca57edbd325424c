#!/usr/bin/env bats
# 75-fresh-clone — a newcomer's first minutes, on this machine: clone the
# committed repository into an empty directory and run the README's two
# commands exactly as the README writes them (`make demo`, `make test`).
#
# The clone sees only what is committed: a file that matters but was never
# committed (a source, a suite, a golden file, a .gitignore'd dependency)
# fails here, which is the point. `make demo` must exit 0 and print a SBPL
# profile, a bwrap vector and the explanation; the clone's `make test` runs
# with DRUN_FRESH_CLONE=1, which tests/run honours by running only the quick
# core suites (10-unit 30-golden 40-lint: not this suite again, not the long
# ones twice), and must end with "N passed, 0 failed". Neither command may
# leave the clone's git status dirty.
#
# The clone builds and tests the plain build whatever $B is: under the
# sanitizer run (B=build/san) every test here skips, as the plain run has
# done exactly the same work.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

# as a newcomer types them: nothing inherited from the make running this suite
# (bounded: a hung build or suite fails here instead of stalling CI)
newcomer() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u B -u ROOT -u SAN -u TEST_SLOTS -u TEST_JOBS DRUN_FRESH_CLONE=1 timeout 1200 bash -c "$1"; }

why_skip() {
    # Never recursively: inside a clone's own test run this suite skips itself
    # (tests/run also leaves it out there), whatever the clone's tests/run does.
    if [ -n "${DRUN_FRESH_CLONE:-}" ]; then echo "already inside a fresh-clone run"
    elif case ${B:-build} in *san*) true ;; *) false ;; esac; then echo "the clone tests the plain build, as the plain run did"
    elif ! command -v git > /dev/null 2>&1 || ! git -C "$ROOT" rev-parse HEAD > /dev/null 2>&1; then echo "no git or no commit to clone"
    fi
}

# The clone and both commands run once; each test reads what they left in
# $BATS_FILE_TMPDIR (RC files, outputs).
setup_file() {
    export ROOT=${ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    [ -n "$(why_skip)" ] && return 0
    local t=$BATS_FILE_TMPDIR rc
    git clone -q "$ROOT" "$t/clone" 2> "$t/clone.err" && rc=0 || rc=$?
    echo $rc > "$t/clone.rc"
    [ -d "$t/clone" ] || return 0
    cd "$t/clone" || return 0
    # the README's commands: the first sh block, comments stripped
    awk '/^```sh$/ { on = 1; next } on && /^```/ { exit } on' README.md | sed 's/[[:space:]]*#.*$//; /^[[:space:]]*$/d' > "$t/cmds"
    newcomer "$(sed -n 1p "$t/cmds")" > "$t/demo.out" 2>&1 && rc=0 || rc=$?
    echo $rc > "$t/demo.rc"
    newcomer "$(sed -n 2p "$t/cmds")" > "$t/test.out" 2>&1 && rc=0 || rc=$?
    echo $rc > "$t/test.rc"
    git status --porcelain > "$t/status" 2>&1 || true
}

setup() {
    local why
    why=$(why_skip)
    [ -z "$why" ] || skip "$why"
    t=$BATS_FILE_TMPDIR
}

@test "git clone into an empty directory" {
    assert_equal "$(cat "$t/clone.rc")" 0
}

@test "the README's two commands are 'make demo' and 'make test'" {
    assert_equal "$(echo $(cat "$t/cmds"))" "make demo make test"
}

@test "make demo exits 0" {
    [ "$(cat "$t/demo.rc")" = 0 ] || fail "exit $(cat "$t/demo.rc"): $(tail -n 20 "$t/demo.out")"
}

@test "make demo prints a SBPL profile" {
    grep -q '^(version 1)$' "$t/demo.out"
    grep -q '^(deny default)$' "$t/demo.out"
}

@test "make demo prints a bwrap vector" {
    grep -q '^--unshare-all$' "$t/demo.out"
    grep -q '^--clearenv$' "$t/demo.out"
}

@test "make demo prints the explanation" {
    grep -q '^== drun-policy explain' "$t/demo.out"
    grep -qi '^writable' "$t/demo.out"
}

@test "make test in the clone ends with 'N passed, 0 failed'" {
    [ "$(cat "$t/test.rc")" = 0 ] || fail "exit $(cat "$t/test.rc"): $(tail -n 25 "$t/test.out")"
    run tail -n 1 "$t/test.out"
    assert_line --index $((${#lines[@]} - 1)) --regexp '^[1-9][0-9]* passed, 0 failed$'
}

@test "DRUN_FRESH_CLONE=1 runs the three core suites only" {
    run grep -E '^[0-9]{2}-[a-z-]+ +[0-9]+ passed' "$t/test.out"
    assert_equal "${#lines[@]}" 3
    assert_line --index 0 --regexp '^10-unit '
    assert_line --index 1 --regexp '^30-golden '
    assert_line --index 2 --regexp '^40-lint '
}

@test "the two commands leave the clone's git status clean" {
    run cat "$t/status"
    assert_output ""
}
