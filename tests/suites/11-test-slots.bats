#!/usr/bin/env bats
# 11-test-slots — tests/run's shared slot pool (TEST_SLOTS), the one .ci/run
# gives its plain and sanitizer runs: two tests/run at once, B=.../plain and
# B=.../san as there, on one pool made as .ci/run makes it (a FIFO of SLOTS
# bytes, kept open here), over stub suites (TEST_SUITES_DIR) that append
# "NAME RUN start" and "NAME RUN end" to one log under flock, and sleep a
# little between. The log's order is the order things happened in, and a
# stub's start..end lies inside the time its run held its lock and slots, so
# the checks read overlaps from the log, never durations: a suite never beside
# its other run (NAME.lock), an alone suite beside nothing and holding every
# byte (it finds the FIFO empty), never more than SLOTS at once, the pool
# whole again at the end (also after a failing suite), each run's "N passed,
# N failed"; and the scheduler takes the first suite the other run is not
# running rather than wait behind it. Stubs that must overlap for a broken
# scheduler to show wait for the other run (a barrier, never a sleep).
# It runs stubs, none of a build's programs: under B=build/san every test
# skips (skip_under_san), as the plain run checked the same tests/run.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    skip_under_san
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    tmp=$BATS_TEST_TMPDIR
    mkdir -p "$tmp/suites" "$tmp/slots"
    export STUB_LOG=$tmp/log
    : > "$STUB_LOG"
    # what every stub does: log an event, wait for the other run
    cat > "$tmp/stub.bash" << 'EOF'
run=${B##*/}
# logged NAME EVENT [NOT-RUN]: the log has "NAME RUN EVENT" (any NAME when
# empty) from a run other than NOT-RUN (read by bash: no process a poll)
logged() {
    local n r e
    while read -r n r e; do
        [ "$e" = "$2" ] && [ "${1:-$n}" = "$n" ] && [ "$r" != "${3:-}" ] && return 0
    done < "$STUB_LOG"
    return 1
}
event() { # start | end | stalled | shared
    local fd
    exec {fd}>> "$STUB_LOG" && flock "$fd" && echo "$NAME $run $1" >&"$fd"
    exec {fd}>&-
}
# pool_free: the pool has a byte now (opening the FIFO takes none). While an
# alone suite runs it holds them all: a byte there is a slot it left free.
pool_free() {
    local fd rc
    exec {fd}<> "$TEST_SLOTS/tokens" || return 1
    read -r -t 0 -u "$fd"
    rc=$?
    exec {fd}>&-
    return "$rc"
}
# wait_other [company]: until the other run has started a suite, or with
# "company" until then or the pool is empty (another suite holds the other
# bytes); 30 s at most: a bound for a broken scheduler, far above what a
# loaded machine needs.
wait_other() {
    local until=$((SECONDS + 30))
    while [ "$SECONDS" -lt "$until" ]; do
        logged "" start "$run" && return 0
        [ -n "${1:-}" ] && ! pool_free && return 0
        sleep 0.1
    done
    event stalled
    return 1
}
EOF
    source "$tmp/stub.bash" # logged, here too
}

# stub NAME [alone|fail|barrier|company]: an executable suite; "alone" looks
# at the pool as it starts and ends; "barrier" and "company" wait, before they
# end, for the other run to start a suite (company: or for the pool to be
# empty) and fail when it does not.
stub() {
    local f=$tmp/suites/$1 body='sleep 0.3' tap="echo 'ok 1 - $1'"
    {
        echo '#!/usr/bin/env bash'
        [ "${2:-}" = alone ] && echo '# tests/run: alone'
        echo "NAME=$1; source '$tmp/stub.bash'"
        echo 'event start'
        case ${2:-} in
            fail) tap="echo 'ok 1 - $1 before'; echo 'not ok 2 - $1 fails'; exit 1" ;;
            alone) body="pool_free && event shared; $body; pool_free && event shared" ;;
            barrier | company)
                body="wait_other ${2#barrier} || { event end; echo 'not ok 1 - $1 stalled'; exit 1; }; $body" ;;
        esac
        echo "$body"
        echo 'event end'
        echo "$tap"
    } > "$f"
    chmod +x "$f"
}

# pool SLOTS: the FIFO and its count as .ci/run makes them, held open on $pool
pool() {
    mkfifo "$tmp/slots/tokens"
    exec {pool}<> "$tmp/slots/tokens"
    printf "%${1}s" "" | tr ' ' x >&"$pool"
    echo "$1" > "$tmp/slots/count"
}

# pool_bytes: how many bytes the pool holds now (takes them)
pool_bytes() {
    local n=0 _
    while read -r -t 0 -u "$pool"; do read -r -n 1 -u "$pool" _ && n=$((n + 1)); done
    echo "$n"
}

# start_run RUN JOBS: tests/run over the stubs in the background, B=$tmp/RUN,
# its output in $tmp/RUN.out and its status in $tmp/RUN.rc (the outer run's
# TEST_SLOTS, TEST_JOBS, B are replaced, not passed on; PYTHON3 set skips its
# python3 lookup, which the stubs do not need). timeout: a broken scheduler
# fails the test instead of hanging it.
start_run() {
    (
        rc=0
        env -u DRUN_FRESH_CLONE TEST_SUITES_DIR="$tmp/suites" TEST_SLOTS="$tmp/slots" \
            TEST_JOBS="$2" B="$tmp/$1" PYTHON3="${PYTHON3:-python3}" \
            timeout 120 tests/run > "$tmp/$1.out" 2>&1 || rc=$?
        echo "$rc" > "$tmp/$1.rc"
    ) 3>&- &
}

# check_log: one line per broken guarantee (none when all hold)
check_log() {
    awk -v alone=" $(grep -l '^# tests/run: alone' "$tmp"/suites/* | xargs -rn1 basename | tr '\n' ' ')" '
        $3 == "start" {
            if (($1, $2) in seen) print $1 " started twice in " $2
            seen[$1, $2] = 1
            for (k in running) {
                split(k, o, SUBSEP)
                if (o[1] == $1) print $1 " ran in " o[2] " and " $2 " at once"
                else if (index(alone, " " $1 " ") || index(alone, " " o[1] " "))
                    print "alone: " $1 " (" $2 ") beside " o[1] " (" o[2] ")"
            }
            running[$1, $2] = 1
        }
        $3 == "end" { delete running[$1, $2] }
        $3 == "shared" { print "alone: " $1 " in " $2 " ran with a byte left in the pool" }
        $3 == "stalled" { print $1 " in " $2 ": the other run started nothing" }
        END { for (k in running) { split(k, o, SUBSEP); print o[1] " in " o[2] " never ended" } }
    ' "$STUB_LOG"
}

# most_at_once: the most stubs running at one time, by the log
most_at_once() {
    awk '$3 == "start" { n++; if (n > m) m = n } $3 == "end" { n-- } END { print m + 0 }' "$STUB_LOG"
}

wait_runs() {
    wait
    echo "--- plain"; cat "$tmp/plain.out"; echo "--- san"; cat "$tmp/san.out"
    echo "--- log"; cat "$STUB_LOG"
}

@test "two runs on one pool: no suite beside its other run, at most SLOTS at once, the pool whole after a failing suite" {
    pool 2
    # 20-a ends only once the other run has started a suite: whichever run
    # takes it first holds it until the other is under way (its other run
    # must skip it then, never start it beside), and two at once is sure
    # 30-b and 40-c end once the pool is empty or the other run under way:
    # with free bytes there while they run (taken by none), they would still
    # be there when the other run starts one, more at once than the pool
    stub 20-a barrier
    for n in 30-b 40-c; do stub "$n" company; done
    stub 90-fail fail # last: a byte it kept would show in the pool, not stall the runs
    start_run plain 3 # more at once than the pool: the pool is the limit
    start_run san 3
    wait_runs
    run check_log
    assert_output ''
    most=$(most_at_once)
    # never more than the pool; two at once (20-a waits for that): they shared it
    [ "$most" -le 2 ] || fail "$most suites at once over a pool of 2"
    [ "$most" -ge 2 ] || fail "never two suites at once: the runs did not share the pool"
    assert_equal "$(pool_bytes)" 2
    for r in plain san; do
        assert_equal "$(cat "$tmp/$r.rc")" 1
        assert_equal "$(tail -n 1 "$tmp/$r.out")" "4 passed, 1 failed"
        grep -Eq '^90-fail +1 passed, +1 failed' "$tmp/$r.out" || fail "no line for 90-fail in $r"
        assert_equal "$(cat "$tmp/$r/test-summary")" "4 1"
    done
}

@test "an alone suite runs with nothing beside it, from either run" {
    pool 3
    stub 10-alone-a alone
    stub 11-alone-b alone
    for n in 30-a 40-b; do stub "$n"; done
    start_run plain 3
    start_run san 3
    wait_runs
    run check_log
    assert_output ''
    assert_equal "$(pool_bytes)" 3
    for r in plain san; do
        assert_equal "$(cat "$tmp/$r.rc")" 0
        assert_equal "$(tail -n 1 "$tmp/$r.out")" "4 passed, 0 failed"
    done
}

@test "a run starts the first suite the other run is not running, and does not wait behind it" {
    # One suite at a time per run: the san run starts once the plain run is
    # in 10-first, whose stub ends only when the san run has started one.
    # Waiting for 10-first's lock would stall both (the stub fails at 30 s).
    pool 2
    stub 10-first barrier
    stub 20-second
    start_run plain 1
    until=$((SECONDS + 30))
    until logged 10-first start san || [ "$SECONDS" -ge "$until" ]; do sleep 0.1; done
    start_run san 1
    wait_runs
    run check_log
    assert_output ''
    assert_equal "$(grep -m1 ' san start$' "$STUB_LOG")" "20-second san start"
    assert_equal "$(pool_bytes)" 2
    for r in plain san; do
        assert_equal "$(cat "$tmp/$r.rc")" 0
        assert_equal "$(tail -n 1 "$tmp/$r.out")" "2 passed, 0 failed"
    done
}
