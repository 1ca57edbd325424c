#!/usr/bin/env bats
# 71-man — the man pages (docs/man/*.scd, built by make into $B/man):
#   - each renders with `man --warnings -l` without a single warning (and the
#     check itself is seen to catch one), and man-db can index its NAME line;
#   - drun-policy(1) has every command and every option of `drun-policy
#     --help` / `COMMAND --help`, every exit status, and every environment
#     variable the compiler reads (getenv in compiler/ and grammar/);
#   - drun-mcp(1) has every option of `drun-mcp --help` and every variable the
#     runtime reads;
#   - drun-policy.toml(5) has an entry for every key of the compiler's key
#     table (`drun-policy schema`), under its table, with its default and range
#     (tests/lib/man-keys.mjs).

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    DP=$B/drun-policy MCP=$B/drun-mcp MAN=$B/man
    export LC_ALL=C.UTF-8
    tmp=$BATS_TEST_TMPDIR
}

# Warnings of man/groff for one page, at 80 columns (empty: clean).
warnings() { MANWIDTH=80 man --warnings=w -l -E UTF-8 "$1" 2>&1 > /dev/null; }
# The page as plain text, unwrapped (no line breaks, so no hyphenation inside words).
text() {
    [ -f "$MAN/$1" ] || fail "$MAN/$1 is not built (make builds docs/man/$1.scd)"
    MANWIDTH=1000 man -l -E UTF-8 "$MAN/$1" 2> /dev/null
}
# The lines of one top-level section (NAME, OPTIONS, ...) of a rendered page.
section() { text "$1" | awk -v s="$2" '/^[A-Z]/ { on = ($0 == s); next } on'; }
commands() { "$DP" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'; }

# renders PAGE — built, and not a single warning
renders() {
    [ -f "$MAN/$1" ] || fail "$MAN/$1 is not built (make builds docs/man/$1.scd)"
    run warnings "$MAN/$1"
    assert_output ""
}

# env_check PAGE FILES... — every getenv("X") in FILES is an entry of ENVIRONMENT
env_check() {
    local page=$1 vars v missing=""
    shift
    section "$page" ENVIRONMENT > "$tmp/env"
    vars=$(grep -ohE 'getenv\("[A-Z_]+"\)' "$@" | grep -oE '[A-Z_]+' | sort -u)
    [ -n "$vars" ]
    for v in $vars; do grep -qE "^ {7}$v$" "$tmp/env" || missing="$missing $v"; done
    assert_equal "not in ENVIRONMENT:$missing" "not in ENVIRONMENT:"
}

@test "drun-policy.1 renders without warnings" { renders drun-policy.1; }
@test "drun-policy.1 has a NAME line man-db can index" { run -0 lexgrog "$MAN/drun-policy.1"; }
@test "drun-mcp.1 renders without warnings" { renders drun-mcp.1; }
@test "drun-mcp.1 has a NAME line man-db can index" { run -0 lexgrog "$MAN/drun-mcp.1"; }
@test "drun-policy.toml.5 renders without warnings" { renders drun-policy.toml.5; }
@test "drun-policy.toml.5 has a NAME line man-db can index" { run -0 lexgrog "$MAN/drun-policy.toml.5"; }

@test "the warning check catches a bad page" {
    printf '.TH X 1\n.SH NAME\nx \\- y\n.XQ bogus\n' > "$tmp/broken.1"
    run warnings "$tmp/broken.1"
    refute_output ""
}

# ---- drun-policy(1) --------------------------------------------------------------------------------

@test "drun-policy(1) has every section" {
    text drun-policy.1 > "$tmp/page"
    local s
    for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
        grep -qx "$s" "$tmp/page" || fail "no section $s"
    done
}

@test "drun-policy(1) describes every command" {
    local c cmds missing=""
    cmds=$(commands)
    [ -n "$cmds" ]
    section drun-policy.1 COMMANDS > "$tmp/commands"
    for c in $cmds; do grep -qE "^ {7}$c( |$)" "$tmp/commands" || missing="$missing $c"; done
    assert_equal "not in COMMANDS:$missing" "not in COMMANDS:"
}

@test "drun-policy(1) describes every option of every --help" {
    local c o opts missing=""
    opts=$( (for c in $(commands); do "$DP" "$c" --help; done; "$DP" --help) |
        grep -oE '(^|[ ,[|])--?[a-z][a-z-]*' | grep -oE -- '--?[a-z][a-z-]*' | sort -u)
    [ -n "$opts" ]
    section drun-policy.1 OPTIONS > "$tmp/options"
    for o in $opts; do grep -qE -- "(^|[ ,])$o([ ,=]|$)" "$tmp/options" || missing="$missing $o"; done
    assert_equal "not in OPTIONS:$missing" "not in OPTIONS:"
}

@test "drun-policy(1) lists every exit status" {
    local s missing=""
    section drun-policy.1 "EXIT STATUS" > "$tmp/exit"
    for s in 0 1 2 125 126 127; do grep -qE "^ {7}$s(,| |$)|, $s( |$)" "$tmp/exit" || missing="$missing $s"; done
    assert_equal "missing:$missing" "missing:"
}

@test "drun-policy(1) lists every environment variable the code reads" {
    env_check drun-policy.1 compiler/*.c compiler/*/*.c grammar/*.c
}

# ---- drun-mcp(1) -------------------------------------------------------------------------------------

@test "drun-mcp(1) describes every option of drun-mcp --help" {
    [ -x "$MCP" ] || skip "drun-mcp is not built: its page is checked for rendering only"
    local o opts missing=""
    opts=$("$MCP" --help | grep -oE '^  +--?[a-z][a-z-]*' | tr -d ' ' | sort -u)
    [ -n "$opts" ]
    section drun-mcp.1 OPTIONS > "$tmp/mcp-options"
    for o in $opts; do grep -qE -- "^ {7}$o( |,|$)" "$tmp/mcp-options" || missing="$missing $o"; done
    assert_equal "not in OPTIONS:$missing" "not in OPTIONS:"
}

@test "drun-mcp(1) lists every environment variable the code reads" {
    [ -x "$MCP" ] || skip "drun-mcp is not built"
    env_check drun-mcp.1 runtime/*.c
}

# ---- drun-policy.toml(5): every key, under its table, with its default and range ----------------------

@test "drun-policy.toml(5) documents every key of the key table with its default and range" {
    "$DP" schema > "$tmp/schema.json"
    text drun-policy.toml.5 > "$tmp/page"
    run -0 node tests/lib/man-keys.mjs "$tmp/schema.json" "$tmp/page"
    assert_output --regexp '^OK [0-9]+$'
}
