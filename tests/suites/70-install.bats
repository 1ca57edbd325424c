#!/usr/bin/env bats
# 70-install — `make install` and `make uninstall` as a packager runs them:
# DESTDIR staging with PREFIX=/usr, every file where man(1), bash-completion,
# zsh and editors look for it, with the right modes; nothing written outside
# DESTDIR; a second install changes nothing; another PREFIX is honoured; and
# uninstall leaves no file behind (and may be run twice).
# It installs the plain build, as a packager does: under B=build/san every
# test skips (skip_under_san). The install rules are the same make code for
# either build, and the only product code they run, `drun-policy completion`,
# runs under the sanitizers in 73-completion.
# The tests run in file order on one staging tree ($BATS_FILE_TMPDIR):
# install, look, install again, another PREFIX, uninstall, uninstall again.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup_file() {
    export ROOT=${ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    cd "$ROOT" || return 1
    local t=$BATS_FILE_TMPDIR
    mkdir -p "$t/home" "$t/tmpdir"
    [ "${B:-build}" = build ] || return 0 # every test skips
    # bring the build up to date first: what install itself writes is what is checked
    mk all > "$t/all.out" 2>&1 && echo 0 > "$t/all.rc" || echo 1 > "$t/all.rc"
    touch "$t/stamp"
    sleep 1 # mtimes of one second granularity must tell before from after
}

setup() {
    skip_under_san "installs the plain build; its one program run, drun-policy completion, runs under SAN in 73"
    cd "$ROOT"
    B=${B:-build}
    [ "$B" = build ] || skip "the Makefile's plain build is build/, not B=$B"
    t=$BATS_FILE_TMPDIR
    root=$t/root usr=$t/root/usr
    [ "$(cat "$t/all.rc")" = 0 ] || fail "make all: $(tail -5 "$t/all.out")"
}

# A make as a packager types it: no jobserver or flags inherited from `make test`.
mk() {
    env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS HOME="$BATS_FILE_TMPDIR/home" TMPDIR="$BATS_FILE_TMPDIR/tmpdir" \
        make -C "$ROOT" --no-print-directory -s "$@"
}
# "MODE SIZE PATH" of every file and link below $1, paths relative to it.
tree() { (cd "$1" && find . -mindepth 1 \( -type f -o -type l \) -printf '%m %s %p\n' | LC_ALL=C sort); }
sums() { (cd "$1" && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2); }

# ---- install ------------------------------------------------------------------------------------

@test "make install DESTDIR=… PREFIX=/usr" {
    run -0 mk install DESTDIR="$root" PREFIX=/usr
}

@test "installs the binaries, man pages, completions, schema, docs and examples" {
    local f missing=""
    local expect=(bin/drun-policy share/man/man1/drun-policy.1 share/man/man1/drun-mcp.1
        share/man/man5/drun-policy.toml.5 share/bash-completion/completions/drun-policy
        share/zsh/site-functions/_drun-policy share/drun-policy/config.schema.json
        share/doc/drun-policy/README.md share/doc/drun-policy/index.md share/doc/drun-policy/policy.md
        share/doc/drun-policy/examples/srt/srt share/doc/drun-policy/examples/drun-user/config.toml)
    [ -x "$B/drun-mcp" ] && expect+=(bin/drun-mcp)
    for f in "${expect[@]}"; do [ -f "$usr/$f" ] || missing="$missing $f"; done
    assert_equal "missing:$missing" "missing:"
}

@test "everything lands below DESTDIR/PREFIX" {
    run ls -A "$root"
    assert_output usr
}

@test "nothing written outside DESTDIR (HOME, TMPDIR, source and build tree untouched)" {
    run bash -c 'find "$1/home" "$1/tmpdir" -mindepth 1; find docs examples "$2/man" "$2/drun-policy" -newer "$1/stamp"' _ "$t" "$B"
    assert_output ""
}

@test "modes: programs 0755, data 0644" {
    run bash -c 'cd "$1" && find . -type f \( -path "./bin/*" -o -path ./share/doc/drun-policy/examples/srt/srt \) ! -perm 0755 -printf "%m %p\n"
                 find ./share -type f ! -perm 0644 ! -perm 0755 -printf "%m %p\n"' _ "$usr"
    assert_output ""
}

@test "no temporary file left behind" {
    run find "$root" -name '*.tmp.*'
    assert_output ""
}

@test "the installed schema is docs/config.schema.json" {
    cmp docs/config.schema.json "$usr/share/drun-policy/config.schema.json"
}

@test "the installed completions are what 'drun-policy completion' generates" {
    cmp <("$B/drun-policy" completion bash) "$usr/share/bash-completion/completions/drun-policy"
    cmp <("$B/drun-policy" completion zsh) "$usr/share/zsh/site-functions/_drun-policy"
}

# man finds the pages by name in the installed tree, in the sections they belong to
@test "man -M PREFIX/share/man finds drun-policy(1), drun-mcp(1), drun-policy.toml(5)" {
    run man -M "$usr/share/man" -w drun-policy drun-mcp 5 drun-policy.toml
    assert_line --index 0 "$usr/share/man/man1/drun-policy.1"
    assert_line --index 1 "$usr/share/man/man1/drun-mcp.1"
    assert_line --index 2 "$usr/share/man/man5/drun-policy.toml.5"
}

@test "the installed drun-policy runs" {
    run -0 "$usr/bin/drun-policy" --version
    assert_output --regexp '^drun-policy '
}

@test "the installed bash completion loads" {
    run -0 bash -c "source '$usr/share/bash-completion/completions/drun-policy' && complete -p drun-policy"
}

# ---- idempotent -----------------------------------------------------------------------------------

@test "a second make install succeeds and changes nothing" {
    local before
    before=$(sums "$root")
    run -0 mk install DESTDIR="$root" PREFIX=/usr
    assert_equal "$(sums "$root")" "$before"
}

# ---- another PREFIX ---------------------------------------------------------------------------------

@test "PREFIX=/opt/drun installs the same files below /opt/drun only" {
    run -0 mk install DESTDIR="$t/opt" PREFIX=/opt/drun
    run bash -c 'cd "$1" && find . -mindepth 1 \( -type f -o -type l \) ! -path "./opt/drun/*"' _ "$t/opt"
    assert_output ""
    assert_equal "$(tree "$t/opt/opt/drun" | wc -l)" "$(tree "$usr" | wc -l)"
    [ -f "$t/opt/opt/drun/share/man/man1/drun-policy.1" ]
}

# ---- uninstall ------------------------------------------------------------------------------------

@test "make uninstall" {
    mk uninstall DESTDIR="$t/opt" PREFIX=/opt/drun > /dev/null 2>&1
    run -0 mk uninstall DESTDIR="$root" PREFIX=/usr
}

@test "uninstall leaves no file behind" {
    run tree "$root"
    assert_output ""
}

@test "uninstall removes the package's own directories" {
    run bash -c 'cd "$1" && ls -d share/doc/drun-policy share/drun-policy 2> /dev/null' _ "$usr"
    assert_output ""
}

@test "uninstall with PREFIX=/opt/drun leaves no file behind" {
    run tree "$t/opt"
    assert_output ""
}

@test "a second make uninstall succeeds" {
    run -0 mk uninstall DESTDIR="$root" PREFIX=/usr
}

# ---- scripts/install-deps: the list .ci/run hands to one apt-get install ----------------------------
# nodesource's nodejs bundles npm and conflicts with Debian's npm: naming nodejs/npm
# when a node is already there broke CI's whole apt transaction once. So the list
# names them only when the binaries are missing.

@test "install-deps --list leaves out nodejs/npm when node and npm exist" {
    mkdir -p "$t/bin-node"
    printf '#!/bin/sh\n' > "$t/bin-node/node"; printf '#!/bin/sh\n' > "$t/bin-node/npm"
    chmod +x "$t/bin-node/node" "$t/bin-node/npm"
    run -0 env PATH="$t/bin-node" /bin/sh scripts/install-deps --list
    [[ " $output " == *" re2c "* ]]
    [[ " $output " != *" nodejs "* && " $output " != *" npm "* ]]
}

@test "install-deps --list names nodejs and npm when they are missing" {
    mkdir -p "$t/bin-none"
    run -0 env PATH="$t/bin-none" /bin/sh scripts/install-deps --list
    [[ " $output " == *" nodejs "* && " $output " == *" npm "* ]]
}

# The real list on this machine resolves as one transaction (a simulation: no root,
# nothing changes). Needs apt's package lists, which .ci/run fetches first.
@test "apt-get can install the install-deps list in one transaction" {
    command -v apt-get > /dev/null 2>&1 && apt-cache show re2c > /dev/null 2>&1 || skip "no apt package lists here"
    # shellcheck disable=SC2046
    run -0 apt-get install -s -y --no-install-recommends $(scripts/install-deps --list)
}
