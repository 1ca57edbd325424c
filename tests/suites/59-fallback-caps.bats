#!/usr/bin/env -S bats --tap
# 59-fallback-caps — what holds when the access-time layer is off
# (DRUN_FS_LAYER=off, or no usable /dev/fuse: bwrap mounts planned from a
# scan at start, SPEC §16) as well as with it:
# - set-ID bits (SPEC §13): the seccomp filter refuses S_ISUID/S_ISGID in
#   every mode a command can ask for (chmod u+s and g+s, install -m 4755,
#   open(O_CREAT, 0o4755), mknod), with the layer off and on; the HOST
#   files are checked afterwards;
# - repositories by their structure (attack 01 on the mount path): a
#   directory holding a HEAD (objects/ a symlink out, or behind a
#   commondir), the directory a commondir or a gitfile names, a bare
#   repository and a submodule's gitdir, all made on the host before the
#   run, get their hooks/ and config read-only; a link the sandbox could
#   repoint on the way to one refuses the run; what git would not take
#   gets nothing. Names created during the run stay uncovered on this path
#   (the layer's job): the last test pins that documented gap.

source "$BATS_TEST_DIRNAME/../lib/runner.bash"

setup_file() { runner_setup_file; }

setup() {
    runner_fixture ws state home outside
    printf '[filesystem]\ndeny_read = ["**/*.secret"]\n' > "$T/cfg.toml"
}

teardown() { runner_teardown; }

# dprun SCRIPT — sh -c SCRIPT in the sandbox, with the layer as $LAYER says
# (off by default here: this suite is about the mount path)
dprun() {
    run env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        DRUN_FS_LAYER="${LAYER:-off}" "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c "$1"
}

host_git() { local d=$1; shift; git -c safe.directory='*' -C "$d" "$@" 2> /dev/null; }

# setid_attempts — every way to ask for a set-ID mode, then the host check
setid_attempts() {
    rm -rf "$T/ws"/*
    own
    dprun '
        cp /bin/true u; chmod u+s u; echo "u+s: $?"
        cp /bin/true g; chmod g+s g; echo "g+s: $?"
        cp /bin/true n; chmod 6755 n
        install -m 4755 /bin/true i; echo "install: $?"
        python3 -c "
import os
for name, mode, flags in ((\"o\", 0o4755, os.O_CREAT | os.O_WRONLY), (\"og\", 0o2755, os.O_CREAT | os.O_WRONLY)):
    try: os.close(os.open(name, flags, mode)); print(name, \"created\")
    except OSError as e: print(name, e.strerror)
for name, mode in ((\"k\", 0o104755), (\"kf\", 0o012644)):  # a regular file, a fifo
    try: os.mknod(name, mode); print(name, \"created\")
    except OSError as e: print(name, e.strerror)
try: os.chmod(\"n\", 0o2755); print(\"chmod g+s n: done\")
except OSError as e: print(\"chmod g+s n:\", e.strerror)
"
        mknod f p && chmod 4644 f; echo "mknod fifo, chmod: $?"
        cp /bin/true plain; chmod 0755 plain; mkdir -m 1777 sticky
        ls -l; true'
    echo "$output"
    [ "$status" -eq 0 ]
    # each attempt failed with EPERM, and none left a bit on the host
    [[ "$output" == *"u+s: 1"* && "$output" == *"g+s: 1"* && "$output" == *"install: 1"* ]]
    [[ "$output" == *"o Operation not permitted"* && "$output" == *"og Operation not permitted"* ]]
    [[ "$output" == *"k Operation not permitted"* && "$output" == *"kf Operation not permitted"* ]]
    [[ "$output" == *"chmod g+s n: Operation not permitted"* && "$output" == *"mknod fifo, chmod: 1"* ]]
    local f
    for f in "$T"/ws/*; do
        [ $(( 0$(stat -c %a "$f") & 06000 )) -eq 0 ] || { echo "on the host: $f $(stat -c %A "$f")"; false; }
    done
    [ -z "$(find "$T/ws" -perm /6000)" ]
    # what was asked without the bits stays
    [ "$(stat -c %a "$T/ws/plain")" = 755 ]
    [ "$(stat -c %a "$T/ws/sticky")" = 1777 ]
    [ "$(stat -c %a "$T/ws/u")" = 755 ]
}

@test "no set-user-ID or set-group-ID bit reaches the host, layer off (attack 12)" {
    LAYER=off setid_attempts
}

@test "no set-user-ID or set-group-ID bit reaches the host, layer on (attack 12)" {
    [ -e /dev/fuse ] || skip "no /dev/fuse"
    LAYER=on setid_attempts
    [[ "$(cat /proc/self/mountinfo)" != *"$T/ws"* ]]
}

# The structures of attack 01, made on the host before the run.
make_repos() {
    cd "$T/ws"
    # (a) objects/ a symlink out of the workspace; a gitfile names r
    mkdir -p r/refs/heads sub; ln -s "$T/outside" r/objects; echo "ref: refs/heads/main" > r/HEAD
    echo "gitdir: ../r" > sub/.git
    # (b) HEAD here, the rest behind a commondir; a gitfile names g
    mkdir -p g c/objects c/refs/heads sub2; echo "ref: refs/heads/main" > g/HEAD; echo ../c > g/commondir
    echo "gitdir: ../g" > sub2/.git
    # (c) a bare repository and a submodule's gitdir, by the real git
    git init -q --bare bare.git
    git init -q main && git -C main commit -q --allow-empty -m 0 2> /dev/null || true
    mkdir -p main/.git/modules/lib/objects main/.git/modules/lib/refs
    echo "ref: refs/heads/main" > main/.git/modules/lib/HEAD
    # (d) a HEAD alone (not a repository git takes) and a config without one
    mkdir -p head-only plain; echo x > head-only/HEAD; echo ok > plain/config
    cd - > /dev/null
}

@test "repositories by their structure at start: hooks and config read-only, layer off (attack 01)" {
    make_repos
    own
    dprun '
        w() { printf "[core]\n\tfsmonitor = touch /tmp/drun-pwned\n" > "$1" && echo "WROTE $1"; }
        h() { mkdir -p "$1" && printf "#!/bin/sh\n" > "$1/pre-commit" && echo "WROTE $1/pre-commit"; }
        w r/config; h r/hooks; w c/config; h c/hooks; w g/config
        w bare.git/config; h bare.git/hooks; w main/.git/modules/lib/config; h main/.git/modules/lib/hooks
        echo ../elsewhere > g/commondir && echo "WROTE g/commondir"
        echo "head-only: $(ls -A head-only | tr -d "\n")."; echo ok2 > plain/config; echo ok > r/notes; echo ok > c/notes
        true' 2>&1
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *WROTE* ]]
    # the host: nothing planted, git in each sees no fsmonitor, no hook
    local d
    for d in r c bare.git main/.git/modules/lib; do
        ! grep -qs fsmonitor "$T/ws/$d/config" || { echo "planted: $d/config"; false; }
        [ ! -e "$T/ws/$d/hooks/pre-commit" ] || { echo "planted: $d/hooks/pre-commit"; false; }
    done
    for d in sub sub2 r bare.git; do
        [ -z "$(host_git "$T/ws/$d" config --get core.fsmonitor)" ] || { echo "host git in $d reads it"; false; }
    done
    [ "$(cat "$T/ws/g/commondir")" = ../c ]
    # nothing was written outside, nothing left behind in the workspace
    [ -z "$(ls -A "$T/outside")" ]
    [ ! -e "$T/ws/g/config" ] && [ ! -e "$T/ws/c/hooks" ] && [ ! -e "$T/ws/r/config" ]
    # a HEAD alone gets no phantom entry; a config where no HEAD stands is ordinary
    [[ "$output" == *"head-only: HEAD."* ]]
    [ "$(cat "$T/ws/plain/config")" = ok2 ]
    [ "$(cat "$T/ws/r/notes")" = ok ] && [ "$(cat "$T/ws/c/notes")" = ok ]
}

@test "git still works in existing repositories (the root and nested) with their caps, layer off" {
    local d
    for d in "$T/ws" "$T/ws/proj"; do
        git init -q "$d"
        git -C "$d" -c user.name=t -c user.email=t@t commit -q --allow-empty -m 0
    done
    own
    dprun 'c() { git -c user.name=t -c user.email=t@t commit -q -m "$1"; }
        echo a > a && git add a && c a && (cd proj && echo b > b && git add b && c b) &&
        git config core.x y; echo "config: $?"; git log --oneline | wc -l'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *fatal* ]]
    [[ "$output" == *"config: "[1-9]* ]] # the config is read-only
    for d in "$T/ws" "$T/ws/proj"; do
        [ "$(host_git "$d" log --oneline | wc -l)" -eq 2 ]
        [ ! -e "$d/.git/commondir" ]
        [ -z "$(host_git "$d" config --get core.x)" ]
    done
}

@test "a commondir or gitfile through a link the sandbox could repoint refuses the run, layer off" {
    mkdir -p "$T/ws/g" "$T/ws/c/objects" "$T/ws/c/refs"
    echo "ref: refs/heads/main" > "$T/ws/g/HEAD"
    ln -s c "$T/ws/lnk"
    echo ../lnk > "$T/ws/g/commondir"
    own
    dprun 'echo ran > ran'
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"symbolic link in a writable directory"*"lnk"* ]]
    [ ! -e "$T/ws/ran" ]
    # a gitfile the same way
    rm "$T/ws/g/commondir"
    mkdir -p "$T/ws/sub"
    echo "gitdir: ../lnk" > "$T/ws/sub/.git"
    dprun 'echo ran > ran'
    [ "$status" -ne 0 ]
    [[ "$output" == *"symbolic link in a writable directory"* ]]
    [ ! -e "$T/ws/ran" ]
}

@test "a gitfile naming a directory outside every grant changes nothing there, layer off" {
    mkdir -p "$T/outside/r/objects" "$T/outside/r/refs" "$T/ws/sub"
    echo "ref: refs/heads/main" > "$T/outside/r/HEAD"
    echo "gitdir: $T/outside/r" > "$T/ws/sub/.git"
    own
    dprun 'echo ok > sub/file'
    [ "$status" -eq 0 ]
    [ "$(cat "$T/ws/sub/file")" = ok ]
    [ "$(ls -A "$T/outside/r")" = "$(printf 'HEAD\nobjects\nrefs')" ]
}

@test "names created during the run stay uncovered without the layer (the documented gap)" {
    own
    dprun 'mkdir -p r/refs r/objects && echo "ref: refs/heads/main" > r/HEAD && echo "[core]" > r/config && echo made'
    [ "$status" -eq 0 ]
    [ -e "$T/ws/r/config" ]
}
