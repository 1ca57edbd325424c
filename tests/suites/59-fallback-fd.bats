#!/usr/bin/env -S bats --tap
# 59-fallback-fd — without the access-time layer (DRUN_FS_LAYER=off: the
# bwrap mounts planned at start), every bind of a host path goes to bwrap by
# an fd the runner opened without following a symbolic link (bind_fd.c), so
# a link a sandbox makes cannot redirect a mount to a host directory:
# - a link planted by a previous run on the way to a granted subdirectory
#   of the writable workspace refuses the next run (exit 125);
# - a link swapped in by a concurrent sandbox AFTER the plan looked (the
#   window held open by a stand-in bwrap that waits, with every option and
#   fd the runner gave it, until the swap is done) binds nothing: bwrap has
#   the directory the plan saw, and refuses the mount;
# - a repository swapped away (and back) by a concurrent sandbox while the
#   plan's walk reads its commondir (gdb holds the runner there: no test
#   hook in the binary) still gets its commondir's caps: the walk reads
#   beneath the fd of the directory it listed, not a path resolved again;
# - the command holds none of the fds bwrap was given for its binds.
# Each attack aims at a host directory the policy hides ($T/outside/sub,
# deny_read under a readable grant), and the HOST is checked afterwards.

bats_require_minimum_version 1.5.0 # run ! (a bare "! cmd" mid-test cannot fail it)

source "$BATS_TEST_DIRNAME/../lib/runner.bash"

setup_file() { runner_setup_file; }

setup() {
    runner_fixture ws state home outside/sub wrap sync
    chmod 755 "$T/wrap"
    chmod 1777 "$T/sync"
    echo TOPSECRET > "$T/outside/sub/key"
    # B: a read-only subdirectory of the writable workspace, bound at its
    # own level; a host tree readable but for its hidden part
    cat > "$T/cfg.toml" << EOF
[filesystem]
allow_read = ["\${WORKSPACE}/sub", "$T/outside"]
deny_read = ["$T/outside/sub"]
EOF
    # A: the attacker, a plain workspace (nothing mounted on sub)
    printf '[filesystem]\n' > "$T/attacker.toml"
}

teardown() { runner_teardown; }

# drun CONFIG SCRIPT [PATH-HEAD] — sh -c SCRIPT in a sandbox on $T/ws, layer off
drun() {
    timeout 120 env -i HOME="$T/home" PATH="${3:+$3:}/usr/local/bin:/usr/bin:/bin" XDG_STATE_HOME="$T/state" \
        DRUN_FS_LAYER=off "$DP" run "$1" --workspace "$T/ws" -- sh -c "$2"
}

host_unchanged() {
    [ "$(cat "$T/outside/sub/key")" = TOPSECRET ]
    [ "$(ls -A "$T/outside/sub")" = key ]
}

@test "a link a previous run planted on the way to a granted subdirectory refuses the next run" {
    own
    # run 1 (the attacker's policy, or this one: sub does not exist yet)
    run drun "$T/cfg.toml" 'ln -s ../outside d && echo planted'
    echo "$output"
    [ "$status" -eq 0 ] && [[ "$output" == *planted* ]]
    [ "$(readlink "$T/ws/d")" = ../outside ]
    # run 2 binds ${WORKSPACE}/d/sub: through the link, the hidden host dir
    sed -i 's|"${WORKSPACE}/sub"|"${WORKSPACE}/d/sub"|' "$T/cfg.toml"
    run drun "$T/cfg.toml" "cat d/sub/key $T/outside/sub/key; echo pwned > d/sub/new; echo ran > ran"
    echo "$output"
    [ "$status" -eq 125 ]
    [[ "$output" == *"'$T/ws/d/sub' has a symbolic link on its way"* ]]
    [[ "$output" != *TOPSECRET* ]]
    [ ! -e "$T/ws/ran" ]
    host_unchanged
}

# A stand-in for bwrap: it reads its options (all of them: the runner has
# planned and opened everything by now), says so through a fifo, waits for
# the attacker, then runs the real bwrap with the same options and fds.
make_wrapper() {
    local real
    real=$(command -v bwrap)
    cat > "$T/wrap/bwrap" << EOF
#!/bin/sh
[ "\$1" = --args ] || exec $real "\$@"
/bin/cat <&3 > "$T/sync/opts.\$\$"
echo planned > "$T/ws/planned"
read x < "$T/ws/swapped"
exec $real "\$@" 3< "$T/sync/opts.\$\$"
EOF
    chmod 755 "$T/wrap/bwrap"
}

@test "a link swapped in after the plan looked binds nothing: bwrap has the directory by fd" {
    mkdir -p "$T/ws/sub"
    echo mine > "$T/ws/sub/file"
    mkfifo "$T/ws/planned" "$T/ws/swapped"
    make_wrapper
    own
    # the attacker: a concurrent sandbox on the same workspace, waiting for
    # the victim's plan, then replacing sub with a link to the hidden dir
    drun "$T/attacker.toml" 'read x < planned; mv sub sub.old && ln -s ../outside/sub sub && echo swapped;
        echo go > swapped' > "$T/attacker.out" 2>&1 &
    local apid=$!
    run drun "$T/cfg.toml" "cat sub/key $T/outside/sub/key; ls sub; echo pwned > $T/outside/sub/key; echo ran > ran" \
        "$T/wrap"
    wait "$apid" || true
    cat "$T/attacker.out"
    echo "$output"
    # the window was used: the swap happened between plan and mount
    grep -q swapped "$T/attacker.out"
    [ "$(readlink "$T/ws/sub")" = ../outside/sub ]
    # nothing of the hidden dir reached the sandbox, nothing was written there
    [[ "$output" != *TOPSECRET* ]]
    # bwrap refuses inside its namespace, after it reported the sandbox
    # started: its own status, not the runner's 125
    [ "$status" -ne 0 ]
    [[ "$output" == *"Race condition binding dirfd"* || "$output" == *"Not a directory"* ]]
    [ ! -e "$T/ws/ran" ]
    host_unchanged
    [ "$(cat "$T/ws/sub.old/file")" = mine ]
}

# The plan's own window: gdb stops the runner as the walk reads a
# repository's commondir, and again as the runner opens the bind sources;
# each time a concurrent sandbox (A, [protect] off: nothing of it is a mount
# point there) moves the repository away and back. Read by path, the
# commondir of the stand-in (none) would leave the directory it names (c)
# without caps; read beneath the fd the walk holds, it is the real one.
@test "a repository swapped while the walk reads its commondir still gets its commondir's caps" {
    command -v gdb > /dev/null || skip "no gdb"
    nm "$DP" | grep -q ' T bwrap_repo_pointer$' || skip "no symbols"
    cd "$T/ws"
    mkdir -p g c/objects c/refs/heads
    echo "ref: refs/heads/main" > g/HEAD
    echo ../c > g/commondir
    printf '[core]\n\tbare = false\n' > c/config
    mkfifo go ack
    cd - > /dev/null
    printf '[protect]\ngit_hooks = false\ngit_config = false\n' > "$T/attacker.toml"
    printf '[filesystem]\n' > "$T/cfg.toml"
    own
    drun "$T/attacker.toml" 'read x < go; mv g g.old && mkdir g && cp g.old/HEAD g/ && echo swapped; echo > ack
        read x < go; rm -r g && mv g.old g && echo restored; echo > ack' > "$T/attacker.out" 2>&1 &
    local apid=$!
    run timeout 120 env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        DRUN_FS_LAYER=off gdb -q -batch -ex 'set pagination off' -ex 'set confirm off' \
        -ex 'set follow-fork-mode parent' -ex 'set detach-on-fork on' \
        -ex 'break bwrap_repo_pointer' -ex 'break sbx_binds_by_fd' -ex run \
        -ex "shell echo > $T/ws/go; read x < $T/ws/ack" -ex 'delete 1' -ex continue \
        -ex "shell echo > $T/ws/go; read x < $T/ws/ack" -ex delete -ex continue \
        --args "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- \
        sh -c 'printf "[core]\n\tfsmonitor = touch /tmp/drun-pwned\n" > c/config && echo WROTE; echo done'
    wait "$apid" || true
    cat "$T/attacker.out"
    echo "$output"
    grep -q swapped "$T/attacker.out" && grep -q restored "$T/attacker.out"
    [[ "$output" == *done* ]]
    [[ "$output" != *WROTE* ]]
    # the host: the commondir's config is as it was
    run ! grep -q fsmonitor "$T/ws/c/config"
    [ "$(cat "$T/ws/g/commondir")" = ../c ]
}

# The fds the runner hands bwrap for its binds are bwrap's alone: each is
# closed once mounted, so the command holds no descriptor of a host
# directory (an O_PATH fd is a way out of any mount namespace: openat on it).
@test "the command holds none of the bind sources' fds, and cannot reach the host through one" {
    git init -q "$T/ws"
    mkdir -p "$T/ws/sub" "$T/ws/.vscode"
    own
    run drun "$T/cfg.toml" 'ls /proc/self/fd | tr "\n" " "; echo; for f in /proc/self/fd/*; do
        [ -e "$f/../outside/sub/key" ] && cat "$f/../outside/sub/key"; done; echo end'
    echo "$output"
    [ "$status" -eq 0 ]
    # 0 1 2 and ls's own directory fd
    [[ "${lines[0]}" == "0 1 2 3 " ]]
    [[ "$output" != *TOPSECRET* ]]
    [[ "$output" == *end* ]]
    host_unchanged
}
