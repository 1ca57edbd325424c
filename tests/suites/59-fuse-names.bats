#!/usr/bin/env -S bats --tap
# 59-fuse-names — the access-time layer's names in STATE/run/fuse (SPEC §16,
# docs/artifacts.md): each run owns TOKEN.lock, TOKEN.N and TOKEN.N.home and
# holds a flock on TOKEN.lock while they exist; a later run removes only
# what a gone run left. Liveness is the lock, never a pid: a runner in
# another pid namespace cannot see the pids of the host's runs, and one that
# judged by them removed live mount points (an rmdir of a mount point
# detaches the mount in every mount namespace), which failed a concurrent
# run with "cannot mount the filesystem layer on ...: No such file or
# directory". Each test checks the host's state dir and mount table.

source "$BATS_TEST_DIRNAME/../lib/runner.bash"

setup_file() { runner_setup_file fuse; }

setup() {
    runner_fixture ws state home
    printf '[filesystem]\ndeny_write = ["**/.env"]\n' > "$T/cfg.toml"
    echo orig > "$T/ws/f"
    BG=
}

teardown() {
    touch "$T/ws/stop" 2> /dev/null
    [ -n "$BG" ] && { kill "$BG" 2> /dev/null; wait "$BG" 2> /dev/null; }
    runner_teardown
}

# dp ARGS...: drun-policy with the fixture's home and state dir
dp() {
    env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" "$DP" "$@"
}

fusedir() { echo "$T/state/drun/run/fuse"; }

# our_mounts: the layer's mounts under the fixture's state dir, on the host
our_mounts() { grep -c " $(fusedir)/" /proc/self/mountinfo || true; }

# start_holder: a run whose sandbox says "ready", waits for $T/ws/stop, then
# reads f again through the layer; its output in $T/holder.out
start_holder() {
    own
    # not through dp: $! must be the runner itself (SIGKILL below)
    env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c \
        'cat f; touch ready; while [ ! -e stop ]; do sleep 0.05; done; cat f; echo held' > "$T/holder.out" 2>&1 &
    BG=$!
    for _ in $(seq 1 600); do [ -e "$T/ws/ready" ] && break; sleep 0.05; done
    [ -e "$T/ws/ready" ]
}

@test "a run in another pid namespace leaves a live run's mount points, lock and mounts alone" {
    [ "$(id -u)" = 0 ] || skip "unshare -p needs root"
    unshare -fp --mount-proc true 2> /dev/null || skip "unshare -fp is not available"
    start_holder
    before=$(ls -A "$(fusedir)" | sort)
    mounts=$(our_mounts)
    [ "$mounts" -ge 1 ]
    # the second runner is pid 1 of its own pid namespace: the holder's
    # runner is invisible to it
    run env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        unshare -fp --mount-proc "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c 'cat f'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *orig* ]]
    # the holder's names are all still there, still mounted on the host
    after=$(ls -A "$(fusedir)" | sort)
    for n in $before; do echo "$after" | grep -qxF "$n"; done
    [ "$(our_mounts)" -eq "$mounts" ]
    touch "$T/ws/stop"
    wait "$BG"
    st=$?
    BG=
    cat "$T/holder.out"
    [ "$st" -eq 0 ]
    [ "$(grep -c orig "$T/holder.out")" -eq 2 ]
    grep -q held "$T/holder.out"
    # and it removed its own on the way out
    [ -z "$(ls -A "$(fusedir)")" ]
    [ "$(our_mounts)" -eq 0 ]
}

@test "two runners with the same pid in two pid namespaces do not share a mount point" {
    [ "$(id -u)" = 0 ] || skip "unshare -p needs root"
    unshare -fp --mount-proc true 2> /dev/null || skip "unshare -fp is not available"
    own
    # both are pid 1 of their own namespace, at the same time
    for i in 1 2; do
        env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
            unshare -fp --mount-proc "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- \
            sh -c "touch ready$i; while [ ! -e stop ]; do sleep 0.05; done; cat f" > "$T/out$i" 2>&1 &
        eval "pid$i=\$!"
    done
    for _ in $(seq 1 600); do [ -e "$T/ws/ready1" ] && [ -e "$T/ws/ready2" ] && break; sleep 0.05; done
    [ -e "$T/ws/ready1" ] && [ -e "$T/ws/ready2" ]
    # two locks, and mount points of two tokens
    [ "$(ls "$(fusedir)" | grep -c '\.lock$')" -eq 2 ]
    [ "$(ls "$(fusedir)" | grep -v '\.lock$' | cut -d. -f1 | sort -u | wc -l)" -eq 2 ]
    touch "$T/ws/stop"
    wait "$pid1"
    s1=$?
    wait "$pid2"
    s2=$?
    cat "$T/out1" "$T/out2"
    [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ]
    grep -qx orig "$T/out1" && grep -qx orig "$T/out2"
    [ -z "$(ls -A "$(fusedir)")" ]
}

@test "what a run killed with SIGKILL left, and a pre-lock name, are removed by the next run; nothing else is" {
    start_holder
    kill -KILL "$BG"
    wait "$BG" || true
    BG=
    # the guard unmounts; the names stay until a run sweeps them
    for _ in $(seq 1 200); do [ "$(our_mounts)" -eq 0 ] && break; sleep 0.05; done
    [ "$(our_mounts)" -eq 0 ]
    ls "$(fusedir)" | grep -q '\.lock$'
    # a mount point named the old way (PID.SEQ.N, no lock) and a stranger's
    # file that follows no naming (left alone: not the layer's)
    mkdir "$(fusedir)/99999.0.0"
    mkdir "$(fusedir)/99999.0.0.home"
    echo x > "$(fusedir)/99999.0.0.home/leftover"
    echo keep > "$(fusedir)/README"
    own
    run dp run "$T/cfg.toml" --workspace "$T/ws" -- cat f
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *orig* ]]
    ls -A "$(fusedir)"
    [ "$(ls -A "$(fusedir)")" = README ]
    [ "$(cat "$(fusedir)/README")" = keep ]
}

# start_session VAR...: like start_holder, but the runner leads a process
# group of its own (as a shell's job does), so that the group can be
# signalled; with SIGINT at its default, as in a terminal's foreground job
# (bash starts a background command with SIGINT ignored, and run leaves a
# signal ignored on entry ignored, as nohup's SIGHUP must stay)
start_session() {
    own
    env -i --default-signal=INT HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" "$@" \
        setsid "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c \
        'touch ready; while :; do sleep 0.05; done # drun-59-marker' > "$T/holder.out" 2>&1 &
    BG=$!
    for _ in $(seq 1 600); do [ -e "$T/ws/ready" ] && break; sleep 0.05; done
    [ -e "$T/ws/ready" ]
}

# ends_within PID: the process ends (a zombie, or gone) within 30 s; else it
# and its group are killed and the test fails (no hang of the suite)
ends_within() {
    local st
    for _ in $(seq 1 600); do
        st=$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null) || return 0
        [ "$st" = Z ] && return 0
        sleep 0.05
    done
    kill -KILL -- "-$1" 2> /dev/null
    echo "the run ignored the signal"
    false
}

# after_stop: the run ended, nothing of it is left on the host
after_stop() {
    for _ in $(seq 1 100); do pgrep -f drun-59-marker > /dev/null || break; sleep 0.05; done
    [ -z "$(pgrep -f drun-59-marker)" ]
    [ "$(our_mounts)" -eq 0 ]
    [ -z "$(ls -A "$(fusedir)" 2> /dev/null)" ]
}

@test "^C to the run's process group stops the sandbox, removes the layer's mounts and names, and the run dies of SIGINT" {
    start_session
    [ "$(our_mounts)" -ge 1 ]
    # the whole group, as a terminal's ^C: the runner, bwrap and the layer's
    # daemon get it (the guard has left the group: it must outlive them)
    kill -INT -- "-$BG"
    ends_within "$BG"
    st=0
    wait "$BG" || st=$?
    BG=
    cat "$T/holder.out"
    [ "$st" -eq 130 ]
    after_stop
}

@test "SIGTERM to the runner with the layer off removes the placeholders it made in the workspace" {
    before=$(ls -A "$T/ws")
    DRUN_FS_LAYER=off start_session DRUN_FS_LAYER=off
    # the fallback's placeholders (protected names made in place to be bound
    # over) are on the host while the run lasts
    during=$(ls -A "$T/ws")
    [ "$during" != "$before" ]
    kill -TERM "$BG"
    ends_within "$BG"
    st=0
    wait "$BG" || st=$?
    BG=
    cat "$T/holder.out"
    [ "$st" -eq 143 ]
    rm "$T/ws/ready"
    [ "$(ls -A "$T/ws")" = "$before" ]
    after_stop
}
