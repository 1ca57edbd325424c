#!/usr/bin/env bats
# 69-cli-help — the command line reads well:
#   - `drun-policy --help` and every `drun-policy COMMAND --help` fit one
#     screen (at most 24 lines of at most 100 columns) and end with an
#     example of that very command; drun-mcp --help fits 24 lines; the
#     commands --help lists are exactly the ones tested here (a new command
#     needs its two tests);
#   - every user-facing error is pinned here, text and exit status: unknown
#     command and option with a did-you-mean, a bad choice, a missing or
#     extra argument (with the usage line), a missing file, a bad --facts
#     file (with its position), a bad --queries line (file:line), a missing
#     --golden directory — each names the file or argument and what to do.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    DP=$B/drun-policy
    export NO_COLOR=1
    tmp=$BATS_TEST_TMPDIR # made and removed by bats
}

# fits CMD... — the output of CMD (stdout and stderr) is at most 24 lines of
# at most 100 columns; it is left in $tmp/help
fits() {
    "$@" > "$tmp/help" 2>&1
    local lines cols
    lines=$(wc -l < "$tmp/help")
    cols=$(awk '{ l = length($0); if (l > m) m = l } END { print m + 0 }' "$tmp/help")
    [ "$lines" -le 24 ] && [ "$cols" -le 100 ] || fail "$* --help: $lines lines, $cols columns (want at most 24 x 100)"
}

# example_of CMD — `drun-policy CMD --help` ends with "example:" and a line
# running that very command
example_of() {
    "$DP" "$1" --help > "$tmp/help" 2>&1
    run awk '/^example:$/ { getline; print; exit }' "$tmp/help"
    assert_output --regexp "^  drun-policy $1( |\$)"
}

# err WANT-STATUS WANT-STDERR CMD... — exact stderr and exit status
err() {
    local want_rc=$1 want=$2
    shift 2
    run --separate-stderr "$@"
    assert_equal "$status" "$want_rc"
    assert_equal "$stderr" "$want"
}

@test "drun-policy --help fits one screen" {
    fits "$DP" --help
}

@test "--help lists exactly the commands this file tests" {
    "$DP" --help > "$tmp/help"
    run -0 awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }' "$tmp/help"
    assert_equal "$(echo $output)" "compile run facts toml-decode lint explain diff check completion schema"
}

@test "drun-policy compile --help fits one screen" {
    fits "$DP" compile --help
}

@test "drun-policy compile --help ends with an example of compile" {
    example_of compile
}

@test "drun-policy run --help fits one screen" {
    fits "$DP" run --help
}

@test "drun-policy run --help ends with an example of run" {
    example_of run
}

@test "drun-policy facts --help fits one screen" {
    fits "$DP" facts --help
}

@test "drun-policy facts --help ends with an example of facts" {
    example_of facts
}

@test "drun-policy toml-decode --help fits one screen" {
    fits "$DP" toml-decode --help
}

@test "drun-policy toml-decode --help ends with an example of toml-decode" {
    example_of toml-decode
}

@test "drun-policy lint --help fits one screen" {
    fits "$DP" lint --help
}

@test "drun-policy lint --help ends with an example of lint" {
    example_of lint
}

@test "drun-policy explain --help fits one screen" {
    fits "$DP" explain --help
}

@test "drun-policy explain --help ends with an example of explain" {
    example_of explain
}

@test "drun-policy diff --help fits one screen" {
    fits "$DP" diff --help
}

@test "drun-policy diff --help ends with an example of diff" {
    example_of diff
}

@test "drun-policy check --help fits one screen" {
    fits "$DP" check --help
}

@test "drun-policy check --help ends with an example of check" {
    example_of check
}

@test "drun-policy completion --help fits one screen" {
    fits "$DP" completion --help
}

@test "drun-policy completion --help ends with an example of completion" {
    example_of completion
}

@test "drun-policy schema --help fits one screen" {
    fits "$DP" schema --help
}

@test "drun-policy schema --help ends with an example of schema" {
    example_of schema
}

@test "drun-mcp --help fits 24 lines" {
    [ -x "$B/drun-mcp" ] || skip "$B/drun-mcp is not built"
    "$B/drun-mcp" --help > "$tmp/help" 2>&1
    lines=$(wc -l < "$tmp/help")
    [ "$lines" -le 24 ] || fail "drun-mcp --help: $lines lines"
}

@test "error: unknown command, with a suggestion" {
    err 2 "drun-policy: unknown command 'compil' (did you mean 'compile'?)
Run 'drun-policy --help' for the list of commands." "$DP" compil x.toml
}

@test "error: unknown option, with a suggestion and the usage" {
    err 2 "drun-policy compile: unknown option '--outptu' (did you mean '--output'?)
usage: drun-policy compile [CONFIG] [-o DIR] [--target linux|macos|all] [--facts FILE]... [--json]
Run 'drun-policy compile --help' for the options and an example." "$DP" compile --outptu x
}

@test "error: an option of another command" {
    err 2 "drun-policy lint: unknown option '--golden'
usage: drun-policy lint [CONFIG] [--format text|json|sarif] [--json-output FILE]
                        [--sarif-output FILE] [--strict] [--facts FILE]...
Run 'drun-policy lint --help' for the options and an example." "$DP" lint --golden x
}

@test "error: a bad choice, with a suggestion" {
    err 2 "drun-policy compile: --target must be one of linux|macos|all, not 'lnux' (did you mean 'linux'?)
usage: drun-policy compile [CONFIG] [-o DIR] [--target linux|macos|all] [--facts FILE]... [--json]
Run 'drun-policy compile --help' for the options and an example." "$DP" compile --target lnux
}

@test "error: a missing argument is named" {
    err 2 "drun-policy diff: missing argument NEW
usage: drun-policy diff OLD NEW [--json] [--facts FILE]...
Run 'drun-policy diff --help' for the options and an example." "$DP" diff old.toml
}

@test "error: an option without its value" {
    err 2 "drun-policy compile: option '-o' needs a value
usage: drun-policy compile [CONFIG] [-o DIR] [--target linux|macos|all] [--facts FILE]... [--json]
Run 'drun-policy compile --help' for the options and an example." "$DP" compile -o
}

@test "error: run: the command goes after --" {
    err 2 "drun-policy run: unexpected argument 'make': the command to run goes after '--'
usage: drun-policy run [CONFIG] [--workspace DIR] [--allow-broad-workspace] -- CMD [ARG...]
Run 'drun-policy run --help' for the options and an example." "$DP" run config.toml make test
}

@test "error: a missing config file is named" {
    err 2 "drun-policy lint: $tmp/none.toml: cannot open: No such file or directory" "$DP" lint "$tmp/none.toml"
}

@test "error: a bad --facts file: the file and the position, and how to make one" {
    printf '{\n  "target": "linux",\n  "home": \n}\n' > "$tmp/facts.json"
    err 2 "drun-policy compile: $tmp/facts.json: facts: not valid JSON at line 4, column 1: unexpected token near '}' (write the file with 'drun-policy facts > FILE')" \
        "$DP" compile builtin:default --facts "$tmp/facts.json"
}

@test "error: a bad --queries line: file:line and the expected forms" {
    printf 'read /etc/passwd\nlist /\n' > "$tmp/queries"
    err 2 "drun-policy explain: $tmp/queries:2: expected 'read PATH', 'write PATH', 'exec CMD' or 'fetch URL', one question a line" \
        "$DP" explain builtin:default --queries "$tmp/queries" --facts golden/facts-linux.json
}

@test "error: check: a missing --golden directory says what it should hold" {
    err 2 "drun-policy check: $tmp/none/policy.json: No such file or directory
--golden DIR is the directory 'drun-policy compile CONFIG -o DIR' wrote" "$DP" check builtin:default --golden "$tmp/none"
}

@test "error: a config error: file:line:col, the line, a caret, a suggestion" {
    printf 'domain_alowlist = ["pypi.org"]\n' > "$tmp/typo.toml"
    err 1 "$tmp/typo.toml:1:1: error: unknown key 'domain_alowlist' (did you mean 'domain_allowlist'?) [unknown-key]
    domain_alowlist = [\"pypi.org\"]
    ^~~~~~~~~~~~~~~
1 error: the policy was rejected; nothing was written or run" "$DP" compile "$tmp/typo.toml" --facts golden/facts-linux.json
}

# compile -o makes missing parents, like install -d; a file in the way is an error
@test "compile -o creates the missing parents of DIR" {
    run -0 "$DP" compile builtin:default -o "$tmp/out/nested/dir" --facts golden/facts-linux.json --facts golden/facts-macos.json
    [ -s "$tmp/out/nested/dir/policy.json" ]
    [ -s "$tmp/out/nested/dir/bwrap.args" ]
}

@test "error: compile -o through a file: the path and why" {
    : > "$tmp/plainfile"
    err 2 "drun-policy compile: $tmp/plainfile/x: cannot create: Not a directory" \
        "$DP" compile builtin:default -o "$tmp/plainfile/x" --facts golden/facts-linux.json --facts golden/facts-macos.json
    [ ! -e "$tmp/plainfile/x" ]
}
