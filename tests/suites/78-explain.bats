#!/usr/bin/env bats
# 78-explain — explain agrees with the sandbox about a grant on a path this
# host does not have: bwrap's --bind-try skips a missing source, so the
# sandbox has no such path and cannot make one. explain must say "deny" on
# Linux for a documented reason (never "this is a bug in drun-policy"), and
# the real sandbox must fail to write there, leaving the host without the
# path. And `explain --json` with no question is the overview as one object
# that says what the text says.

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

setup() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    DP=$PWD/$B/drun-policy
    case $B in /*) DP=$B/drun-policy ;; esac
    export NO_COLOR=1
    tmp=$BATS_TEST_TMPDIR
    mkdir -p "$tmp/ws" "$tmp/host"
    chmod 755 "$tmp" "$tmp/ws" "$tmp/host"
    cat > "$tmp/p.toml" <<TOML
[filesystem]
allow_write = ["$tmp/host/data"]
deny_write = ["$tmp/host/data/raw"]
TOML
}

@test "explain: a write grant on a missing path is denied here, for a documented reason" {
    cd "$tmp/ws"
    run "$DP" explain "$tmp/p.toml" --write "$tmp/host/data/x"
    assert_success
    assert_line --regexp '^  linux: +deny '
    assert_line --partial "skipped here: --bind-try $tmp/host/data $tmp/host/data  (its source does not exist)"
    assert_output --partial 'stricter on this host: the granted path does not exist here'
    refute_output --partial 'please report it'
}

@test "explain --json names the skipped bind" {
    cd "$tmp/ws"
    run "$DP" explain "$tmp/p.toml" --write "$tmp/host/data/raw/x" --json
    assert_success
    assert_output --partial "\"skipped\": \"--bind-try $tmp/host/data $tmp/host/data\""
    refute_output --partial 'please report it'
}

@test "explain: once the path exists, the grant is mounted and writable" {
    mkdir -p "$tmp/host/data"
    chmod 777 "$tmp/host/data"
    cd "$tmp/ws"
    run "$DP" explain "$tmp/p.toml" --write "$tmp/host/data/x"
    assert_success
    assert_line --regexp '^  linux: +allow '
    refute_output --partial 'skipped here'
}

@test "the sandbox agrees: writing below the missing grant fails and the host has no such path" {
    command -v bwrap > /dev/null || skip "bwrap is not installed"
    cd "$tmp/ws"
    run "$DP" run "$tmp/p.toml" --workspace "$tmp/ws" -- /bin/sh -c "mkdir -p '$tmp/host/data' && echo x > '$tmp/host/data/x'"
    assert_failure
    [ ! -e "$tmp/host/data" ]
}

@test "explain --json with no question: the overview as one object, the text's sections and lines" {
    run "$DP" explain profiles/carveouts.toml --json --facts golden/facts-linux.json --facts golden/facts-macos.json
    assert_success
    printf '%s\n' "$output" > "$tmp/ov.json"
    "$DP" explain profiles/carveouts.toml --facts golden/facts-linux.json --facts golden/facts-macos.json > "$tmp/ov.txt"
    run node -e '
        const fs = require("fs");
        const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
        const text = fs.readFileSync(process.argv[2], "utf8");
        const back = text.split("\n\n").slice(1).join("\n\n");
        const made = j.sections.map(s => s.title + "\n" + s.lines.map(l => "  " + l).join("\n")).join("\n\n") + "\n";
        if (j.policy !== "profiles/carveouts.toml" || j.default !== false || j.plan !== "template") throw "header " + JSON.stringify(j);
        if (j.targets.linux.home !== "/home/user" || j.targets.macos.home !== "/Users/user") throw "targets";
        if (!j.sections.some(s => s.title === "Writable (read and write)" && s.lines.some(l => l.startsWith("~/data ")))) throw "writable";
        if (made !== back) throw "differs from the text:\n" + made + "\n---\n" + back;
        console.log("same");' "$tmp/ov.json" "$tmp/ov.txt"
    assert_success
    assert_output same
}
