#!/usr/bin/env bats
# 73-completion — the shell completions `drun-policy completion bash|zsh`
# generates from the CLI's option and command tables: the bash script loads
# in bash, and its function, called as bash-completion calls it (COMP_WORDS,
# COMP_CWORD), completes every command, exactly each command's options (the
# ones its --help lists), the values of options with choices, directories for
# DIR options and files for CONFIG. zsh: a syntax check when zsh is installed.
# The same for drun-mcp's completion, held to `drun-mcp --help`.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup_file() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    local t=$BATS_FILE_TMPDIR
    "$B/drun-policy" completion bash > "$t/drun-policy.bash"
    "$B/drun-policy" completion zsh > "$t/_drun-policy"
    "$B/drun-policy" completion bash drun-mcp > "$t/drun-mcp.bash"
    "$B/drun-policy" completion zsh drun-mcp > "$t/_drun-mcp"
    # what file and directory completion sees
    mkdir -p "$t/cwd/out-dir" "$t/cwd/other"
    touch "$t/cwd/config.toml" "$t/cwd/facts.json"
}

setup() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    ROOT=$PWD
    B=${B:-build}
    DP=$ROOT/$B/drun-policy
    t=$BATS_FILE_TMPDIR
}

# comp PROG WORD... — what PROG's bash completion offers for "PROG WORD...",
# the last word being completed; one candidate a line, sorted.
comp() {
    local prog=$1 fn
    shift
    fn=_${prog//-/_}
    (cd "$t/cwd" && bash -c 'source "$1"; fn=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; "$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}"' _ "$t/$prog.bash" "$fn" "$prog" "$@") | LC_ALL=C sort
}

# expect PROG WANT WORD... — the candidates are exactly WANT (words, any order)
expect() {
    local prog=$1 want
    want=$(printf '%s\n' $2 | LC_ALL=C sort)
    shift 2
    run comp "$prog" "$@"
    assert_equal "$(echo $output)" "$(echo $want)"
}

commands() { "$DP" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'; }

@test "the bash completion is valid bash" {
    run -0 bash -n "$t/drun-policy.bash"
}

@test "sourcing it registers _drun_policy for drun-policy" {
    run -0 bash -c 'source "$1" && complete -p drun-policy' _ "$t/drun-policy.bash"
    assert_output --regexp -- '-F _drun_policy.*drun-policy$'
}

@test "the first word completes every command, --help and --version" {
    expect drun-policy "$(commands) --help --version" ""
}

@test "'co' completes compile, completion" { expect drun-policy "compile completion" co; }
@test "'ch' completes check" { expect drun-policy "check" ch; }

@test "every command completes exactly the options of its --help" {
    local c want
    for c in $(commands); do
        want=$("$DP" "$c" --help | grep -oE '^  (-[a-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*' | LC_ALL=C sort)
        run comp drun-policy "$c" --
        assert_equal "$c: $(echo $output)" "$c: $(echo $want)"
    done
}

@test "'compile --t' completes --target" { expect drun-policy "--target" compile --t; }
@test "compile --target completes linux macos all" { expect drun-policy "linux macos all" compile --target ""; }
@test "lint --format s completes sarif" { expect drun-policy "sarif" lint --format s; }
@test "toml-decode --toml completes 1.0 1.1" { expect drun-policy "1.0 1.1" toml-decode --toml ""; }
@test "compile -o completes directories only" { expect drun-policy "out-dir other" compile -o ""; }
@test "check --golden completes directories only" { expect drun-policy "out-dir other" check --golden ""; }
@test "compile --facts completes files" { expect drun-policy "config.toml facts.json other out-dir" compile --facts ""; }
@test "a CONFIG argument completes files" { expect drun-policy "config.toml" lint con; }
@test "explain --exec completes nothing (a shell command)" { expect drun-policy "" explain --exec ""; }

# ---- zsh ------------------------------------------------------------------------------------------

@test "the zsh completion starts with #compdef drun-policy" {
    run -0 head -n 1 "$t/_drun-policy"
    assert_output '#compdef drun-policy'
}

@test "the zsh completion is valid zsh" {
    command -v zsh > /dev/null || skip "zsh is not installed"
    run -0 zsh -n "$t/_drun-policy"
}

@test "the zsh completion describes every command" {
    local c
    for c in $(commands); do
        grep -q "^    '$c:" "$t/_drun-policy" || fail "no description of $c"
    done
}

# ---- drun-mcp ---------------------------------------------------------------------------------------
# Its completion comes from a table in compiler/cli/cmd_completion.c: held here to
# exactly the options `drun-mcp --help` lists, so the two cannot drift apart.

@test "drun-mcp: the bash completion is valid bash" {
    run -0 bash -n "$t/drun-mcp.bash"
}

@test "drun-mcp: sourcing it registers _drun_mcp for drun-mcp" {
    run -0 bash -c 'source "$1" && complete -p drun-mcp' _ "$t/drun-mcp.bash"
    assert_output --regexp -- '-F _drun_mcp.*drun-mcp$'
}

@test "drun-mcp: '--' completes exactly the options of drun-mcp --help" {
    [ -x "$ROOT/$B/drun-mcp" ] || skip "drun-mcp is not built"
    local want
    want=$("$ROOT/$B/drun-mcp" --help 2>&1 | grep -oE -- '(^|[ [|])--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*' | LC_ALL=C sort -u)
    [ -n "$want" ]
    expect drun-mcp "$want" --
}

@test "drun-mcp: --log-level completes its four levels" { expect drun-mcp "error warn info debug" --log-level ""; }
@test "drun-mcp: --artifacts completes directories only" { expect drun-mcp "out-dir other" --artifacts ""; }
@test "drun-mcp: --config completes files" { expect drun-mcp "config.toml facts.json other out-dir" --config ""; }
@test "drun-mcp: --listen completes nothing (an address)" { expect drun-mcp "" --listen ""; }
@test "drun-mcp: '--s' completes --sandbox-user --state-dir --stdio" { expect drun-mcp "--sandbox-user --state-dir --stdio" --s; }

@test "drun-mcp: the zsh completion starts with #compdef drun-mcp" {
    run -0 head -n 1 "$t/_drun-mcp"
    assert_output '#compdef drun-mcp'
}

@test "drun-mcp: the zsh completion is valid zsh" {
    command -v zsh > /dev/null || skip "zsh is not installed"
    run -0 zsh -n "$t/_drun-mcp"
}

@test "completion refuses an unknown program (exit 2)" {
    run -2 "$DP" completion bash drun-mpc
    assert_output --partial "unknown program 'drun-mpc'"
}

# make install puts both where bash-completion and zsh look, as generated
@test "install-extra installs the drun-mcp completions (bash-completion/completions/drun-mcp, zsh/site-functions/_drun-mcp)" {
    (cd "$ROOT" && DESTDIR="$t/dest" PREFIX=/usr B="$B" scripts/install-extra install) > /dev/null 2>&1
    cmp "$t/drun-mcp.bash" "$t/dest/usr/share/bash-completion/completions/drun-mcp"
    cmp "$t/_drun-mcp" "$t/dest/usr/share/zsh/site-functions/_drun-mcp"
}
