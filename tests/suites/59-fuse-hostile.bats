#!/usr/bin/env -S bats --tap
# 59-fuse-hostile — the access-time layer (SPEC §16) under attack on its own
# workings rather than on the policy: a daemon that can be made to hang, to
# run short of threads, or to serve the wrong directory. Each test attacks
# from inside the sandbox (or swaps the host under it, as an earlier run's
# sandbox could) and checks the HOST afterwards. Root only where the attack
# needs it (a FUSE mount that never answers, a sandbox user of its own).
#
# What a wedge is bounded by: DRUN_FS_LAYER_DEADLINE (seconds, default 60)
# — a request that keeps a worker that long ends the daemon, the sandbox
# sees errors (never the raw tree) and the run ends with 125. The tests set
# it low; `timeout` around each run only turns a hang into a failure.

bats_require_minimum_version 1.5.0 # run ! (a bare "! cmd" mid-test cannot fail it)

source "$BATS_TEST_DIRNAME/../lib/runner.bash"

setup_file() { runner_setup_file fuse; }

setup() {
    runner_fixture ws state home
    printf '[filesystem]\ndeny_write = ["**/.env"]\n' > "$T/cfg.toml"
    PIT=
}

teardown() {
    [ -n "$PIT" ] && kill "$PIT" 2> /dev/null && wait "$PIT" 2> /dev/null
    touch "$T/stop"
    for m in "$T"/ws/p*it; do umount -l "$m" 2> /dev/null; done # dead once its process is gone: not even a directory to stat
    runner_teardown
}

# dprun SCRIPT — sh -c SCRIPT in the sandbox (workspace $T/ws), the layer's
# deadline 3 s, at most 120 s in all; sets status and output
dprun() {
    run timeout 120 env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        DRUN_FS_LAYER_DEADLINE=${DEADLINE:-3} "$DP" run "$T/cfg.toml" --workspace "$T/ws" "$@"
}

# start_tarpit DIR — a FUSE mount at DIR (in the workspace, beside a file f
# holding "orig") that never answers: a backing tree a worker blocks on
start_tarpit() {
    mkdir -p "$1"
    echo orig > "$T/ws/f"
    own
    "${PYTHON3:-python3}" "$ROOT/tests/helpers/fuse_tarpit.py" "$1" > "$T/pit.out" &
    PIT=$!
    for _ in $(seq 100); do grep -q ready "$T/pit.out" 2> /dev/null && break; sleep 0.05; done
    grep -q ready "$T/pit.out"
}

# our_mounts — the layer's mounts of this test left on the host
our_mounts() { grep -c " $T/state/drun/run/fuse/" /proc/self/mountinfo || true; }

@test "a FIFO opened through the layer blocks only its opener, never a worker: the tree stays served" {
    mkfifo -m 666 "$T/ws/pipe"
    echo orig > "$T/ws/f"
    own
    # more blocked openers (readers and writers of a FIFO with no partner)
    # than the layer has workers; then an ordinary read must still be served
    dprun -- sh -c '
        for i in 1 2 3 4 5 6; do cat pipe > /dev/null & sh -c "echo x > pipe" & done
        sleep 0.5; cat f; echo served; kill $(jobs -p) 2> /dev/null; true'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *$'orig\nserved'* ]]
    [ -p "$T/ws/pipe" ]
    [ "$(cat "$T/ws/f")" = orig ]
}

@test "a create that meets a FIFO the host made meanwhile is refused, never opened: no worker blocks" {
    cp "$ROOT/tests/helpers/fifo_race.py" "$T/ws/"
    own
    "${PYTHON3:-python3}" "$ROOT/tests/helpers/fifo_race.py" host "$T/ws" "$T/stop" &
    host=$!
    # a worker that opened such a FIFO as asked would wait for a reader: the
    # deadline would then end the run (125) instead of DONE and status 0
    DEADLINE=5 dprun -- sh -c 'python3 fifo_race.py sandbox 4000 && echo made > after.txt && cat after.txt'
    touch "$T/stop"
    wait "$host"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *DONE* ]]
    [[ "$output" != *wedged* ]]
    [ "$(cat "$T/ws/after.txt")" = made ]
    # whatever the race left on the host is a FIFO or nothing, never written
    for p in "$T"/ws/f[0-3]; do [ ! -e "$p" ] || [ -p "$p" ] || [ ! -s "$p" ]; done
}

@test "a layer wedged on its backing tree ends the run within its deadline (125, errors, never the raw tree)" {
    [ "$(id -u)" = 0 ] || skip "mounting a FUSE filesystem that never answers needs root"
    # its name holds a tab: the watchdog's report escapes it (\x09) as the refusal record does
    pit="$T/ws/p"$'\t'"it"
    start_tarpit "$pit"
    # the daemon's worker blocks on the mount below the tree; the sandbox
    # goes on to try the tree again, and to write, after the deadline
    dprun -- sh -c 'ls p?it & sleep 6; cat f; echo evil > f; echo END'
    echo "$output"
    [ "$status" -eq 125 ]
    [[ "$output" == *"the filesystem layer is wedged (a request has waited 3 s on the backing tree)"* ]]
    # what was stuck: the request, its path, its thread in the kernel
    [[ "$output" =~ "drun-policy: stuck: lookup $T/ws/p\\x09it, waited "[0-9]+" s; thread "[0-9]+": state "[A-Z]", wchan " ]]
    [[ "$output" == *"the filesystem layer ended during the run"* ]]
    [[ "$output" != *orig* && "$output" != *END* ]]
    [ "$(cat "$T/ws/f")" = orig ]
    [ "$(our_mounts)" = 0 ]
}

@test "time the daemon did not run (stopped, a paused machine) is no request's wait: a wedge still ends it" {
    [ "$(id -u)" = 0 ] || skip "mounting a FUSE filesystem that never answers needs root"
    start_tarpit "$T/ws/pit"
    timeout 120 env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        DRUN_FS_LAYER_DEADLINE=6 "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c 'ls pit & sleep 60; echo END' \
        > "$T/run.out" 2>&1 &
    local run=$! runner= daemon= i
    # the daemon (a child of the runner), once one of its workers waits on the pit
    for i in $(seq 400); do
        runner=$(pgrep -f "^$DP run $T/cfg.toml" || true)
        [ -n "$runner" ] && daemon=$(pgrep -P "$runner" -x drun-fuse || true)
        [ -n "$daemon" ] && grep -qs fuse_get_req /proc/"$daemon"/task/*/wchan && break
        sleep 0.05
    done
    [ -n "$daemon" ]
    # stopped for longer than the deadline while that request waits: on
    # waking it must not count the stop (it says how long it saw it wait)
    kill -STOP "$daemon"
    sleep 10
    kill -CONT "$daemon"
    wait "$run" || true
    cat "$T/run.out"
    grep -q "the filesystem layer is wedged" "$T/run.out"
    waited=$(sed -n 's/^drun-policy: stuck: lookup .*, waited \([0-9]*\) s;.*/\1/p' "$T/run.out")
    [ -n "$waited" ] && [ "$waited" -lt 10 ]
    run ! grep -q END "$T/run.out"
    [ "$(cat "$T/ws/f")" = orig ]
    [ "$(our_mounts)" = 0 ]
}

@test "the daemon cannot start its threads (the sandbox user's RLIMIT_NPROC): the run is refused, never served raw" {
    [ "$(id -u)" = 0 ] || skip "--sandbox-user needs root"
    command -v prlimit > /dev/null || skip "no prlimit"
    # a sandbox user of this test's own, so that no other run's processes count
    u=$((61000 + RANDOM % 1000))
    echo orig > "$T/ws/f"
    chown -R "$u:$u" "$T/ws"
    # the daemon, dropped to that user, inherits the limit: its workers
    # (4 per tree) cannot all start; bwrap and the command would
    run timeout 120 prlimit --nproc=10 env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin \
        XDG_STATE_HOME="$T/state" "$DP" run --sandbox-user "$u:$u" "$T/cfg.toml" --workspace "$T/ws" -- \
        sh -c 'echo ran > marker; echo evil > .env; cat f'
    echo "$output"
    [ "$status" -eq 125 ]
    [[ "$output" == *"the access-time filesystem layer cannot start: cannot start the layer's threads as the sandbox user"* ]]
    [[ "$output" != *orig* ]]
    [ ! -e "$T/ws/marker" ] && [ ! -e "$T/ws/.env" ]
    [ "$(cat "$T/ws/f")" = orig ]
    [ "$(our_mounts)" = 0 ]
    # with room for them, the same run is served by the layer
    run timeout 120 prlimit --nproc=1000 env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin \
        XDG_STATE_HOME="$T/state" "$DP" run --sandbox-user "$u:$u" "$T/cfg.toml" --workspace "$T/ws" -- \
        sh -c 'echo ran > marker; echo evil > .env; grep -c fuse.drun /proc/self/mountinfo'
    [ "$status" -eq 0 ]
    [ "$(cat "$T/ws/marker")" = ran ] && [ ! -e "$T/ws/.env" ]
}
