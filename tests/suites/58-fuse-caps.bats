#!/usr/bin/env -S bats --tap
# 58-fuse-caps — the access-time layer (SPEC §16, issue 17): `drun-policy
# run` with the real bwrap serves the workspace through a FUSE layer that
# asks the policy at every access. Each test attacks from inside and then
# checks the HOST tree: what must not exist does not, contents and modes are
# unchanged, and an ordinary name next to each protected one was written
# (each rule seen both ways). Also: a fresh workspace lists nothing the
# command did not make, git init in it, a 250,000-entry tree starts, a
# killed daemon leaves errors (never the raw tree) and ends the run, and the
# fallback without the layer says which caps it cannot hold at depth.

bats_require_minimum_version 1.5.0 # run ! (a bare "! cmd" mid-test cannot fail it)

source "$BATS_TEST_DIRNAME/../lib/runner.bash"

setup_file() { runner_setup_file fuse; }

setup() {
    runner_fixture ws state home
    cat > "$T/cfg.toml" <<'EOF'
[filesystem]
deny_read = ["**/*.secret"]
deny_write = ["**/.env"]
EOF
}

# (the 250,000-entry test's tmpfs workspace goes first, whole)
teardown() {
    if [ -n "${BIG_TMPFS:-}" ]; then umount -l "$BIG_TMPFS"; fi
    runner_teardown
}

# dprun SCRIPT — runs sh -c SCRIPT in the sandbox, workspace $T/ws, the
# suite's config; sets status and output (stdout and stderr).
dprun() {
    run env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        ${LAYER:+DRUN_FS_LAYER=$LAYER} "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c "$1"
}

# git_repo DIR — a repository made on the host, before the run
git_repo() { git init -q "$@"; }

@test "protected names in existing subdirectories at depth 1-3 cannot be created; their neighbours can" {
    mkdir -p "$T/ws/sub/deeper" "$T/ws/a/b/c"
    git_repo "$T/ws/sub"
    git_repo "$T/ws/a/b/c"
    own
    dprun '
        echo evil > sub/.git/hooks/pre-commit; echo ok > sub/.git/notes.txt
        echo evil > sub/.mcp.json;             echo ok > sub/mcp.json
        mkdir sub/.vscode; echo evil > sub/.vscode/tasks.json; mkdir sub/vscode; echo ok > sub/vscode/tasks.json
        mkdir -p sub/.claude; mkdir sub/.claude/commands; echo evil > sub/.claude/commands/x.md
        mkdir sub/.claude/other; echo ok > sub/.claude/other/x.md
        echo evil > sub/deeper/.profile;       echo ok > sub/deeper/profile.txt
        echo evil > a/b/c/.git/hooks/post-checkout; echo evil > a/b/c/.bashrc; echo ok > a/b/c/bashrc
        true'
    [ "$status" -eq 0 ]
    for p in sub/.git/hooks/pre-commit sub/.mcp.json sub/.vscode sub/.claude/commands sub/deeper/.profile \
             a/b/c/.git/hooks/post-checkout a/b/c/.bashrc; do
        [ ! -e "$T/ws/$p" ] || { echo "created on the host: $p"; false; }
    done
    for p in sub/.git/notes.txt sub/mcp.json sub/vscode/tasks.json sub/.claude/other/x.md sub/deeper/profile.txt \
             a/b/c/bashrc; do
        [ "$(< "$T/ws/$p")" = ok ] || { echo "not written: $p"; false; }
    done
    # the refusals are summed up, each with its deciding rule
    [[ "$output" == *"create $T/ws/sub/.git/hooks/pre-commit: protect.git_hooks"* ]]
    [[ "$output" == *"mkdir $T/ws/sub/.vscode: protect.editor_dirs"* ]]
}

@test "submodule and bare-repository hooks and config are read-only; the rest of them is not" {
    git_repo "$T/ws"
    mkdir -p "$T/ws/.git/modules"
    git init -q --bare "$T/ws/.git/modules/lib"
    git init -q --bare "$T/ws/bare.git"
    git init -q --bare "$T/ws/vendor/mirror" # a repository by its structure alone
    own
    sum() { sha256sum "$T/ws/.git/modules/lib/config" "$T/ws/bare.git/config" "$T/ws/vendor/mirror/config"; }
    before=$(sum)
    dprun '
        echo "[core] fsmonitor = evil" >> .git/modules/lib/config; echo evil > .git/modules/lib/hooks/x
        echo ok >> .git/modules/lib/description
        echo "[core] fsmonitor = evil" >> bare.git/config; echo evil > bare.git/hooks/x
        echo ok >> bare.git/description
        echo "[core] fsmonitor = evil" >> vendor/mirror/config; echo evil > vendor/mirror/hooks/post-update
        echo ok >> vendor/mirror/description
        true'
    [ "$status" -eq 0 ]
    [ "$(sum)" = "$before" ]
    [ ! -e "$T/ws/.git/modules/lib/hooks/x" ]
    [ ! -e "$T/ws/bare.git/hooks/x" ]
    [ ! -e "$T/ws/vendor/mirror/hooks/post-update" ]
    for d in .git/modules/lib bare.git vendor/mirror; do
        [ "$(tail -n 1 "$T/ws/$d/description")" = ok ]
    done
    [[ "$output" == *"vendor/mirror/config: protect.git_config (a repository by its structure"* ]]
}

@test "a repository cannot be completed around a config written first" {
    own
    dprun 'mkdir r; echo "[core] fsmonitor = evil" > r/config; echo ref > r/HEAD; mkdir r/objects r/refs; true'
    [ "$status" -eq 0 ]
    [ -e "$T/ws/r/config" ]
    # HEAD, objects and refs next to a config the sandbox wrote: refused
    [ ! -e "$T/ws/r/HEAD" ]
    [ ! -e "$T/ws/r/objects" ]
    [ ! -e "$T/ws/r/refs" ]
}

# host_git DIR ARGS — the host's git in DIR, as the user would run it later
host_git() { local d=$1; shift; git -c safe.directory='*' -C "$d" "$@" 2> /dev/null; }

@test "git's redirection names and the names tools load implicitly cannot be created (attack 02, 11)" {
    git_repo "$T/ws"
    mkdir -p "$T/ws/sub"
    git_repo "$T/ws/sub"
    own
    dprun '
        mkdir -p c/objects c/refs/heads c/hooks .claude .cursor .config/fish .git/info
        printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" > c/config; printf "#!/bin/sh\n" > c/hooks/pre-commit
        echo ../c > .git/commondir; echo ../../c > sub/.git/commondir; echo "[core]" > .git/config.worktree
        mkdir -p .git/worktrees/w; echo ../c > .git/worktrees/w/commondir; echo /x > .git/worktrees/w/gitdir
        echo "[core]" > .git/worktrees/w/config.worktree
        echo "* filter=x" > .git/info/attributes; echo /tmp > .git/objects/info/alternates
        echo "{}" > .claude/settings.json; echo "{}" > .claude/settings.local.json; echo "{}" > .cursor/mcp.json
        echo x > .npmrc; echo x > .yarnrc.yml; echo x > .config/fish/config.fish
        for f in .zshenv .bash_login .zlogin .bash_logout; do echo x > $f; done
        echo ok > .claude/notes.md; echo ok > .git/info/exclude2; echo ok > npmrc
        true'
    [ "$status" -eq 0 ]
    for p in .git/commondir sub/.git/commondir .git/config.worktree .git/worktrees/w/commondir .git/worktrees/w/gitdir \
             .git/worktrees/w/config.worktree .git/info/attributes .git/objects/info/alternates .claude/settings.json \
             .claude/settings.local.json .cursor/mcp.json .npmrc .yarnrc.yml .config/fish/config.fish .zshenv \
             .bash_login .zlogin .bash_logout; do
        [ ! -e "$T/ws/$p" ] || { echo "created on the host: $p"; false; }
    done
    for p in .claude/notes.md .git/info/exclude2 npmrc; do [ "$(< "$T/ws/$p")" = ok ]; done
    # the host's git reads its own config and hooks, not the planted ones
    for s in . sub; do
        [ -z "$(host_git "$T/ws/$s" config --get core.fsmonitor)" ]
        [[ "$(host_git "$T/ws/$s" rev-parse --git-path hooks)" != *c/hooks* ]]
    done
    [[ "$output" == *'protect.git_config "**/.git/commondir"'* ]]
}

@test "a repository git would take (symlinked objects/, a commondir, a gitfile) gets no planted config or hooks (attack 01)" {
    own
    dprun '
        mkdir r o r/refs; ln -s ../o r/objects; echo "ref: refs/heads/main" > r/HEAD
        printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" > r/config; mkdir r/hooks
        mkdir sub; echo "gitdir: ../r" > sub/.git
        mkdir g c c/objects c/refs; echo "ref: refs/heads/main" > g/HEAD; echo ../c > g/commondir
        printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" > c/config; mkdir c/hooks
        mkdir sub2; echo "gitdir: ../g" > sub2/.git
        mkdir plain; echo ok > plain/config
        true'
    [ "$status" -eq 0 ]
    [ ! -e "$T/ws/r/config" ]
    [ ! -e "$T/ws/r/hooks" ]
    [ ! -e "$T/ws/g/commondir" ]
    for s in sub sub2 r; do
        [ -z "$(host_git "$T/ws/$s" config --get core.fsmonitor)" ] || { echo "host git in $s reads the planted config"; false; }
    done
    # a config where no HEAD stands is an ordinary file
    [ "$(< "$T/ws/plain/config")" = ok ]
    [[ "$output" == *"r/config: protect.git_config (a repository by its structure: a directory holding HEAD)"* ]]
    [[ "$output" == *"g/commondir: protect.git_config (commondir"* ]]
}

@test "RENAME_EXCHANGE cannot complete a repository around a written config or hooks; both ends are checked (attack 17)" {
    command -v python3 > /dev/null || skip "no python3"
    # a host-made directory that becomes a repository if a file lands on HEAD
    mkdir -p "$T/ws/H/HEAD" "$T/ws/H/objects" "$T/ws/H/refs/heads"
    printf '[core]\n\tbare = true\n' > "$T/ws/H/config"
    own
    dprun '
        mkdir -p A/HEAD A/objects A/refs/heads B
        printf "[core]\n\tbare = true\n\tfsmonitor = touch /tmp/pwned\n" > A/config
        mkdir A/hooks; echo "#!/bin/sh" > A/hooks/pre-commit
        echo "ref: refs/heads/main" > B/x; echo "ref: refs/heads/main" > B/y
        python3 -c "
import ctypes; libc = ctypes.CDLL(None, use_errno=True)
print(\"exchange-A\", libc.renameat2(-100, b\"A/HEAD\", -100, b\"B/x\", 2), ctypes.get_errno())
print(\"exchange-H\", libc.renameat2(-100, b\"H/HEAD\", -100, b\"B/y\", 2), ctypes.get_errno())"
        true'
    [ "$status" -eq 0 ]
    [ ! -e "$T/ws/A/config" ]
    [ ! -e "$T/ws/A/hooks" ]
    [ -z "$(host_git "$T/ws/A" --git-dir="$T/ws/A" config --get core.fsmonitor)" ]
    # the exchange landing a file on H/HEAD (the source end) was refused: H is as the host made it
    [ -d "$T/ws/H/HEAD" ]
    [ -f "$T/ws/B/y" ]
    [[ "$output" == *"exchange-H -1 13"* ]]
}

@test "caps hold past 256 ancestors (attack 14)" {
    deep=$T/ws/ro rel=ro
    for _ in $(seq 1 300); do deep=$deep/d rel=$rel/d; done
    mkdir -p "$deep"
    echo ORIGINAL > "$deep/file.txt"
    printf '[filesystem]\ndeny_write = ["%s/ws/ro"]\n' "$T" > "$T/cfg.toml"
    mkdir -p "$T/ws/rw"
    dw=$T/ws/rw rw=rw
    for _ in $(seq 1 300); do dw=$dw/d rw=$rw/d; done
    mkdir -p "$dw"
    own
    dprun "cd $rel && { echo PWNED > file.txt; echo NEW > new.txt; }; cd /; cd $T/ws/$rw && echo ok > ok.txt; true"
    [ "$status" -eq 0 ]
    [ "$(< "$deep/file.txt")" = ORIGINAL ]
    [ ! -e "$deep/new.txt" ]
    [ "$(< "$dw/ok.txt")" = ok ]
}

@test "no set-user-ID or set-group-ID bit reaches the host (attack 12)" {
    own
    dprun '
        cp /bin/true u; chmod 6755 u; chmod u+s u
        python3 -c "import os; os.close(os.open(\"c\", os.O_CREAT | os.O_WRONLY, 0o6755))" 2> /dev/null || install -m 6755 /bin/true c
        mkdir -m 3777 d; mkdir -m 1777 d2; mknod p p 2> /dev/null; chmod 4644 p 2> /dev/null
        cp /bin/true plain; chmod 0755 plain
        true'
    [ "$status" -eq 0 ]
    for f in u c d; do
        [ -e "$T/ws/$f" ]
        [ $(( 0$(stat -c %a "$T/ws/$f") & 06000 )) -eq 0 ] || { echo "$f: $(stat -c %A "$T/ws/$f")"; false; }
    done
    # the sticky bit and the permission bits are kept (mkdir -m 3777 asks
    # for S_ISGID with a chmod, which the seccomp filter refuses whole)
    [ "$(stat -c %a "$T/ws/d2")" = 1777 ]
    [ "$(stat -c %a "$T/ws/u")" = 755 ]
    [ "$(stat -c %a "$T/ws/plain")" = 755 ]
}

@test "names the sandbox chose are escaped in the refusal summary (attack 18)" {
    git_repo "$T/ws"
    own
    dprun 'n=$(printf "x\033]52;c;cHduZWQ=\007\033[2J\ty"); { echo evil > ".git/hooks/$n"; } 2> /dev/null; true'
    [ "$status" -eq 0 ]
    [[ "$output" != *$'\e'* && "$output" != *$'\a'* ]]
    [[ "$output" == *'create '*'/.git/hooks/x\x1b]52;c;cHduZWQ=\x07\x1b[2J\x09y: protect.git_hooks'* ]]
}

@test "names created during the run, in new directories, are capped as deeply as existing ones" {
    own
    dprun '
        mkdir -p new/dir/deep; echo evil > new/dir/deep/.bashrc; echo ok > new/dir/deep/bashrc
        echo s > new/dir/k.secret; echo ok > new/dir/k.txt
        mkdir new/.git; mkdir new/.git/hooks; echo ok > new/.git/HEAD2
        echo E=1 > new/dir/.env; echo ok > new/dir/.envrc
        true'
    [ "$status" -eq 0 ]
    [ ! -e "$T/ws/new/dir/deep/.bashrc" ]
    [ ! -e "$T/ws/new/dir/k.secret" ]
    [ ! -e "$T/ws/new/.git/hooks" ]
    [ ! -e "$T/ws/new/dir/.env" ]
    for p in new/dir/deep/bashrc new/dir/k.txt new/.git/HEAD2 new/dir/.envrc; do [ "$(< "$T/ws/$p")" = ok ]; done
}

@test "deny_read: an existing match at depth 3 is absent from listings and unreadable" {
    mkdir -p "$T/ws/a/b/c"
    echo topsecret > "$T/ws/a/b/c/k.secret"
    echo visible > "$T/ws/a/b/c/k.txt"
    own
    dprun 'ls -A a/b/c; cat a/b/c/k.secret; cat a/b/c/k.txt; mv a/b/c/k.secret a/b/c/out.txt; true'
    [ "$status" -eq 0 ]
    [[ "$output" != *topsecret* ]]
    [[ "$output" == *visible* ]]
    [[ "$(printf '%s\n' "$output" | grep -cx 'k.secret')" -eq 0 ]]
    # moving it out of the hidden name is refused too
    [ "$(< "$T/ws/a/b/c/k.secret")" = topsecret ]
    [ ! -e "$T/ws/a/b/c/out.txt" ]
}

@test "renames into a protected name, and of a directory holding one, are refused" {
    git_repo "$T/ws/sub"
    echo ok > "$T/ws/plain.txt"
    own
    dprun '
        mv plain.txt .bashrc
        mv sub/.git sub/gitdir
        mkdir -p x/hooks; echo evil > x/hooks/pre-commit; mkdir other; mv x other/.git
        mkdir -p y/hooks; mv y z
        true'
    [ "$status" -eq 0 ]
    [ "$(< "$T/ws/plain.txt")" = ok ]
    [ ! -e "$T/ws/.bashrc" ]
    [ -d "$T/ws/sub/.git/hooks" ]
    [ ! -e "$T/ws/sub/gitdir" ]
    [ ! -e "$T/ws/other/.git" ]
    [ -e "$T/ws/x/hooks/pre-commit" ]
    [ -d "$T/ws/z/hooks" ] # an ordinary rename still works
}

@test "hard links: a protected file gets no writable second name, nor an ordinary one a protected name" {
    git_repo "$T/ws"
    echo ok > "$T/ws/plain.txt"
    own
    before=$(sha256sum < "$T/ws/.git/config")
    dprun 'ln .git/config cfg; echo evil >> cfg; ln plain.txt .mcp.json; ln plain.txt plain2.txt; true'
    [ "$status" -eq 0 ]
    # the link was refused: cfg is the new file `>>` made, config has one name
    [ "$(stat -c %h "$T/ws/.git/config")" -eq 1 ]
    [ "$(< "$T/ws/cfg")" = evil ]
    [ ! -e "$T/ws/.mcp.json" ]
    [ "$(sha256sum < "$T/ws/.git/config")" = "$before" ]
    [ "$(stat -c %h "$T/ws/plain.txt")" -eq 2 ]
}

@test "symlinks pointing out resolve in the sandbox, never on the host; a swap during the run changes nothing outside" {
    git_repo "$T/ws"
    mkdir -p "$T/outside" "$T/ws/swap"
    echo orig > "$T/outside/f"
    own
    chmod 777 "$T/outside"
    (
        # the host swaps a directory of the workspace for a symlink out while the command waits
        for _ in $(seq 1 600); do [ -e "$T/ws/ready" ] && break; sleep 0.05; done
        rmdir "$T/ws/swap" && ln -s "$T/outside" "$T/ws/swap" && touch "$T/ws/go"
    ) &
    dprun '
        ln -s '"$T"'/outside out; echo evil > out/f; echo evil > out/new
        ln -s .git/hooks hk; echo evil > hk/pre-commit
        touch ready; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
        echo evil > swap/f; echo evil > swap/new2; cat swap/f
        true'
    wait
    [ "$status" -eq 0 ]
    [ "$(< "$T/outside/f")" = orig ]
    [ ! -e "$T/outside/new" ]
    [ ! -e "$T/outside/new2" ]
    [ ! -e "$T/ws/.git/hooks/pre-commit" ]
    [ -L "$T/ws/out" ] # the link itself is an ordinary name
}

@test "a fresh workspace lists nothing the command did not make, and stays empty on the host" {
    own
    dprun 'ls -A; echo END'
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | grep -v '^drun-policy' | tr -d '\n')" = END ]
    [ -z "$(ls -A "$T/ws")" ]
}

@test "git init in a fresh workspace fails naming the protection; no hooks or config reach the host" {
    own
    dprun 'git init -q r; echo rc=$?'
    [[ "$output" == *"rc=1"* || "$output" == *"rc=128"* ]]
    [[ "$output" == *"protect.git_hooks"* || "$output" == *"protect.git_config"* ]]
    [ ! -e "$T/ws/r/.git/hooks" ]
    [ ! -e "$T/ws/r/.git/config" ]
}

@test "a tree of 250,000 entries starts (the mount plan refuses past 200,000)" {
    # made by the sandbox user itself when there is one (as own would leave
    # it): a chown -R of 250,000 entries cost more CPU than the rest of the
    # test. A directory's 99 files are names of one inode (hard links): each
    # is an entry the plan counts, but not an inode to allocate, which on
    # ext4, soon after the other run's tree was removed, cost 50 s of
    # system time (the allocator skips recently freed inodes one by one).
    # As root the workspace is a tmpfs of its own: the tree is made with
    # half the system time, and it goes with one umount (teardown) where an
    # rm -rf of 250,000 names cost 2 s of CPU. The names are made relative to
    # their directory's fd (no path built and walked 250,000 times).
    if [ -n "$SBX" ]; then mount -t tmpfs -o mode=0755 drun-test-big "$T/ws" && BIG_TMPFS=$T/ws; fi
    "${PYTHON3:-python3}" - "$T/ws/big" "$SBX" <<'EOF'
import os, sys
root = sys.argv[1]
os.makedirs(root)
if sys.argv[2]:
    uid, gid = (int(x) for x in sys.argv[2].split(":"))
    os.chown(root, uid, gid)
    os.setegid(gid)
    os.seteuid(uid)
n = 0
for a in range(50):
    for b in range(50):
        d = os.path.join(root, "d%d" % a, "e%d" % b)
        os.makedirs(d)
        n += 1
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.close(os.open("f0", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        n += 1
        for c in range(1, 99):
            os.link("f0", "f%d" % c, src_dir_fd=fd, dst_dir_fd=fd)
            n += 1
        os.close(fd)
print(n, file=sys.stderr)
EOF
    mkdir -p "$T/ws/big/d0/e0/.git"
    if [ -n "$SBX" ]; then chown "$SBX" "$T/ws" "$T/ws/big/d0/e0/.git"; fi # the rest is the user's already
    dprun 'ls big/d49/e49 | wc -l; echo evil > big/d0/e0/.git/config; echo rc=$?'
    [ "$status" -eq 0 ]
    [[ "$output" == *99* ]]
    [ ! -e "$T/ws/big/d0/e0/.git/config" ]
    # without the layer the same run is refused: the plan walks the tree
    LAYER=off dprun true
    [ "$status" -eq 125 ]
    [[ "$output" == *"more than 200000 entries"* ]]
}

@test "without /dev/fuse the run falls back to mounts and names the caps it cannot hold at depth" {
    mkdir -p "$T/ws/sub"
    own
    run env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" DRUN_FUSE_DEV=/nonexistent \
        "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c 'grep -c fuse.drun /proc/self/mountinfo; echo x > sub/.mcp.json; true'
    [ "$status" -eq 0 ]
    [[ "$output" == *"access-time filesystem layer is not used (/dev/fuse does not exist)"* ]]
    [[ "$output" == *'"**/*.secret"'* && "$output" == *'"**/.git/hooks"'* && "$output" == *'"**/.mcp.json"'* ]]
    # the gap it names is real: an existing subdirectory got no block
    [ -e "$T/ws/sub/.mcp.json" ]
    # asked for by name (DRUN_FS_LAYER=off), the fallback is quiet
    LAYER=off dprun 'true'
    [ "$status" -eq 0 ]
    [[ "$output" != *"layer is not used"* ]]
}

@test "a killed daemon: accesses fail, never the raw tree; the run ends with 125 and says why" {
    echo orig > "$T/ws/f"
    own
    env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c 'touch ready; sleep 600' > "$T/out" 2>&1 &
    runpid=$!
    for _ in $(seq 1 600); do [ -e "$T/ws/ready" ] && break; sleep 0.05; done
    [ -e "$T/ws/ready" ]
    dpid=$(pgrep -P "$runpid" -x drun-fuse)
    [ -n "$dpid" ]
    kill -KILL "$dpid"
    rc=0
    wait "$runpid" || rc=$?
    cat "$T/out"
    [ "$rc" -eq 125 ]
    grep -q "the filesystem layer ended during the run" "$T/out"
    [ "$(< "$T/ws/f")" = orig ]
}

@test "a killed daemon, the run kept going: the sandbox's accesses fail (ENOTCONN), the host is untouched" {
    echo orig > "$T/ws/f"
    own
    env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" DRUN_FS_LAYER_WATCH=off \
        "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c '
            touch ready; i=0
            while cat f > /dev/null 2>&1 && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
            cat f; echo evil > f; ls; echo END' > "$T/out" 2>&1 &
    runpid=$!
    for _ in $(seq 1 600); do [ -e "$T/ws/ready" ] && break; sleep 0.05; done
    dpid=$(pgrep -P "$runpid" -x drun-fuse)
    [ -n "$dpid" ]
    kill -KILL "$dpid"
    wait "$runpid" || true
    cat "$T/out"
    grep -q "Transport endpoint is not connected" "$T/out"
    run ! grep -q '^orig$' "$T/out"
    grep -q END "$T/out"
    [ "$(< "$T/ws/f")" = orig ]
}

@test "a non-root runtime (fusermount3): the same protections hold" {
    [ "$(id -u)" = 0 ] || skip "needs root to make the unprivileged user's files"
    command -v setpriv > /dev/null || skip "no setpriv"
    setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'exec 3<>/dev/fuse' 2> /dev/null ||
        skip "/dev/fuse is not open to an unprivileged user here ($(stat -c %a /dev/fuse)); distributions make it 0666"
    git_repo "$T/ws/sub"
    chown -R 65534:65534 "$T/ws" "$T/home" "$T/state"
    run setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin \
        XDG_STATE_HOME="$T/state" "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c '
            echo "workspace served: $(awk -v w="$PWD" '"'"'$5 == w && / - fuse\.drun /'"'"' /proc/self/mountinfo | wc -l)"
            echo evil > sub/.git/hooks/pre-commit; echo evil > sub/.mcp.json; echo ok > sub/ok.json; true'
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"workspace served: 1"* ]] # (run's scratch dir is served too: not counted here)
    [[ "$output" != *"layer is not used"* ]]
    [ ! -e "$T/ws/sub/.git/hooks/pre-commit" ]
    [ ! -e "$T/ws/sub/.mcp.json" ]
    [ "$(< "$T/ws/sub/ok.json")" = ok ]
}

@test "a runner killed with SIGKILL leaves no mount on the host (the guard unmounts)" {
    own
    env -i HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin XDG_STATE_HOME="$T/state" \
        "$DP" run "$T/cfg.toml" --workspace "$T/ws" -- sh -c 'touch ready; sleep 600' > /dev/null 2>&1 &
    runpid=$!
    for _ in $(seq 1 600); do [ -e "$T/ws/ready" ] && break; sleep 0.05; done
    grep -q " $T/state/drun/run/fuse/" /proc/mounts
    kill -KILL "$runpid"
    wait "$runpid" || true
    for _ in $(seq 1 200); do grep -q " $T/state/drun/run/fuse/" /proc/mounts || break; sleep 0.05; done
    run ! grep -q " $T/state/drun/run/fuse/" /proc/mounts
    # and the tree can be removed (no busy mount point in it)
    rm -rf "$T/state"
    [ ! -e "$T/state" ]
}
