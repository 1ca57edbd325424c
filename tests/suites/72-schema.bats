#!/usr/bin/env bats
# 72-schema — the JSON Schema of the policy language (docs/config.schema.json)
# against the compiler it is generated from:
#   - the committed file is exactly `drun-policy schema` (regenerate with
#     `build/drun-policy schema > docs/config.schema.json`);
#   - every profile and every example config validates;
#   - bad configs (unknown key, wrong type, out of range, bad path...) fail
#     validation AND are rejected by the compiler;
#   - at every integer key's bounds the schema and the compiler agree (min and
#     max accepted by both, one past them refused by both), and a config with
#     every key at its schema default compiles: the schema is never looser or
#     stricter than the compiler about a key, a type or a range;
#   - every object is closed (additionalProperties false), and no pattern uses
#     look-around (Taplo compiles patterns with Rust's regex crate).
# The validator is tests/schema/validate.mjs (no npm packages); the shape,
# bounds and docs checks are tests/lib/schema-*.mjs. They run once, in one
# node (tests/lib/node.bash), in setup_file, over every file the tests ask
# about; each test then reads its file's verdict (node costs some 140 ms of
# CPU a start, the checks a few).

bats_require_minimum_version 1.5.0
source "$BATS_TEST_DIRNAME/../lib/bats.bash" # bats-support, bats-assert

# The bad configs (NAME TOML pairs): each is refused by the schema and the compiler.
BAD_CONFIGS=(
    unknown-key 'domain_alowlist = ["pypi.org"]'
    unknown-table-key $'[filesystem]\nallow_reed = ["/srv"]'
    unknown-table $'[sandbox]\nx = 1'
    key-in-wrong-table $'[process]\nbash_timeout_ms = 1000'
    wrong-type-string-for-int 'max_sessions = "5"'
    wrong-type-float-for-int 'max_sessions = 5.0'
    wrong-type-int-for-bool $'[protect]\ngit_hooks = 1'
    wrong-type-scalar-for-array 'mount_allowlist = "/srv"'
    wrong-type-array-entry 'mount_allowlist = [1]'
    wrong-type-table-for-key 'web_port = { a = 1 }'
    out-of-range-below $'[process]\nmemory_mb = 8'
    out-of-range-above 'web_port = 70000'
    relative-path $'[filesystem]\nallow_read = ["src/lib"]'
    glob-in-grant $'[filesystem]\nallow_write = ["/data/*"]'
    dotdot-path $'[filesystem]\ndeny_read = ["~/a/../.ssh"]'
    unknown-variable $'[filesystem]\nallow_read = ["$HOME/x"]'
    control-char-path $'[filesystem]\nallow_read = ["/a\\tb"]'
    bad-env-name $'[env]\npassthrough = ["1PATH"]'
    bad-env-set-name $'[env]\nset = { "A-B" = "x" }'
    env-set-not-string $'[env]\nset = { A = 1 }'
    empty-domain 'domain_allowlist = [""]'
    blank-command 'bash_command_denylist = ["   "]'
    overlay-dotdot 'mount_overlay_paths = [".."]'
    overlay-slash 'mount_overlay_paths = ["a/b"]'
    datetime-for-int 'max_sessions = 1979-05-27'
)

setup_file() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    local d=$BATS_FILE_TMPDIR dp=${B:-build}/drun-policy schema=docs/config.schema.json i rc
    mkdir -p "$d/bad" "$d/b"
    for ((i = 0; i < ${#BAD_CONFIGS[@]}; i += 2)); do printf '%s\n' "${BAD_CONFIGS[i + 1]}" > "$d/bad/${BAD_CONFIGS[i]}.toml"; done
    source tests/lib/node.bash
    tap_node_start
    # each helper's output (stdout and stderr) in $d/NAME.out, its status in $d/NAME.rc
    rc=0; tap_node tests/lib/schema-shape.mjs "$schema" > "$d/shape.out" 2>&1 || rc=$?; echo $rc > "$d/shape.rc"
    rc=0; tap_node tests/lib/schema-undocumented.mjs "$schema" docs/policy.md > "$d/undoc.out" 2>&1 || rc=$?; echo $rc > "$d/undoc.rc"
    rc=0; tap_node tests/lib/schema-bounds.mjs "$schema" "$d/b" > "$d/bounds.out" 2>&1 || rc=$?; echo $rc > "$d/bounds.rc"
    # one "PASS FILE" or "FAIL FILE: why" line per file (exit 1 whenever one fails: the bad ones do)
    tap_node tests/schema/validate.mjs "$dp" "$schema" profiles/*.toml $(find examples -name '*.toml' ! -name '.taplo.toml' | LC_ALL=C sort) \
        "$d"/bad/*.toml "$d"/b/ok--*.toml "$d"/b/ko--*.toml > "$d/validate.out" 2>&1 || true
    tap_node_stop
    compile_all "$d"/bad/*.toml "$d"/b/ok--*.toml "$d"/b/ko--*.toml
}

# The compiler's verdict on a config: `drun-policy compile FILE --target
# linux --facts golden/facts-linux.json`, exit 0 or 1, its stderr kept.
COMPILE_ARGS=(--target linux --facts golden/facts-linux.json)

# compile_all FILE... — the compiler's verdict on every FILE, asked in one
# process (tests/helpers/cli_batch.c: cli_main, what the binary's main()
# calls, once per file; a process start under the sanitizers costs more than
# a compile). Each FILE's status, stdout and stderr go to $BATS_FILE_TMPDIR/cc/;
# accepts reads them (the helper is built under this suite's own name:
# suites run side by side). What the batch could hide fails every verdict
# (cc/broken): the helper not building, not answering every file, ending
# with a status or anything on its own stderr (LeakSanitizer's report at
# exit), or one of the files run again as the real binary (the first and
# every 20th) giving another status, stdout or stderr.
compile_all() {
    local c=$BATS_FILE_TMPDIR/cc dp=${B:-build}/drun-policy helper=${B:-build}/tests/helpers/cli-batch-72-schema f k i=0 rc
    local -a keys=() sts=()
    mkdir -p "$c"
    : > "$c/broken"
    if ! (source tests/lib/tap.sh && tap_build_lib "$helper" tests/helpers/cli_batch.c); then
        { echo "tests/helpers/cli_batch.c does not build:"; head -c 2000 "$helper.log"; } > "$c/broken"
        return
    fi
    for f in "$@"; do
        k=${f//\//_} keys+=("$k")
        printf '%s\t%s\tcompile\t%s' "$c/$k.out" "$c/$k.err" "$f"
        printf '\t%s' "${COMPILE_ARGS[@]}"
        echo
    done > "$c/jobs"
    rc=0; "$helper" < "$c/jobs" > "$c/statuses" 2> "$c/helper.err" || rc=$?
    mapfile -t sts < "$c/statuses"
    if [ $rc -ne 0 ] || [ -s "$c/helper.err" ] || [ ${#sts[@]} -ne $# ]; then
        { echo "cli-batch: exit $rc, ${#sts[@]} answers for $# files:"; head -c 2000 "$c/helper.err"; } > "$c/broken"
        return
    fi
    for f in "$@"; do
        k=${keys[i]}
        echo "${sts[i]}" > "$c/$k.rc"
        if [ $((i % 20)) -eq 0 ]; then
            rc=0; "$dp" compile "$f" "${COMPILE_ARGS[@]}" > "$c/single.out" 2> "$c/single.err" || rc=$?
            if [ "$rc" != "${sts[i]}" ] || ! cmp -s "$c/single.out" "$c/$k.out" || ! cmp -s "$c/single.err" "$c/$k.err"; then
                echo "cli-batch disagrees with $dp on $f: exit ${sts[i]} (batch) vs $rc (binary), or their output differs" >> "$c/broken"
            fi
        fi
        i=$((i + 1))
    done
}

# served NAME — replays a setup_file helper's answer: its output, its status
served() {
    cat "$BATS_FILE_TMPDIR/$1.out"
    return "$(cat "$BATS_FILE_TMPDIR/$1.rc")"
}

# verdict FILE — the validator's line for FILE
verdict() {
    local l found=""
    while IFS= read -r l; do
        { [ "$l" = "PASS $1" ] || [ "${l#"FAIL $1: "}" != "$l" ]; } && printf '%s\n' "$l" && found=1
    done < "$BATS_FILE_TMPDIR/validate.out"
    [ -n "$found" ] || echo "$1 was not validated (setup_file): $(head -c 300 "$BATS_FILE_TMPDIR/validate.out")"
}

setup() {
    cd "${ROOT:-$BATS_TEST_DIRNAME/../..}"
    B=${B:-build}
    DP=$B/drun-policy
    export NO_COLOR=1
    SCHEMA=docs/config.schema.json
    tmp=$BATS_TEST_TMPDIR
}

# accepts FILE — does the compiler accept FILE? (compile for linux with the
# golden facts: exit 0 or 1; its stderr in $tmp/compile.err), from the
# answers compile_all kept; a file it was not asked about is compiled here
# (builtins only: a fork of the bats shell costs more than the answer)
accepts() {
    local c=$BATS_FILE_TMPDIR/cc k=${1//\//_} rc=99 e=""
    if [ -s "$c/broken" ]; then
        IFS= read -r -d '' e < "$c/broken" || :
    elif [ -f "$c/$k.rc" ]; then
        read -r rc < "$c/$k.rc" || :
        IFS= read -r -d '' e < "$c/$k.err" || :
    fi
    [ -s "$c/broken" ] || [ -f "$c/$k.rc" ] && { printf '%s' "$e" > "$tmp/compile.err"; return "$rc"; }
    "$DP" compile "$1" "${COMPILE_ARGS[@]}" > /dev/null 2> "$tmp/compile.err"
}

# validates FILE — the schema accepts it
validates() {
    run verdict "$1"
    assert_line "PASS $1"
}

# bad NAME — the schema and the compiler both refuse BAD_CONFIGS' NAME
bad() {
    local f=$BATS_FILE_TMPDIR/bad/$1.toml
    run verdict "$f"
    assert_output --regexp '^FAIL'
    run accepts "$f"
    [ "$status" -eq 1 ] || fail "compiler exit $status (want 1): $(head -2 "$tmp/compile.err")"
}

# ---- the committed schema is the compiler's ----------------------------------------------------

@test "docs/config.schema.json is exactly 'drun-policy schema'" {
    "$DP" schema > "$tmp/schema.json"
    run diff -u "$SCHEMA" "$tmp/schema.json"
    assert_success # else regenerate: build/drun-policy schema > docs/config.schema.json
}

@test "draft-07; every table closed, every key described, every pattern valid without look-around" {
    run -0 served shape
    assert_output ""
}

# ---- every profile and example config validates --------------------------------------------------
@test "profiles/carveouts.toml validates against the schema" { validates profiles/carveouts.toml; }
@test "profiles/ci-runner.toml validates against the schema" { validates profiles/ci-runner.toml; }
@test "profiles/default.toml validates against the schema" { validates profiles/default.toml; }
@test "profiles/drun-compat.toml validates against the schema" { validates profiles/drun-compat.toml; }
@test "profiles/globs.toml validates against the schema" { validates profiles/globs.toml; }
@test "profiles/networked-dev.toml validates against the schema" { validates profiles/networked-dev.toml; }
@test "profiles/permissive.toml validates against the schema" { validates profiles/permissive.toml; }
@test "profiles/readonly-home.toml validates against the schema" { validates profiles/readonly-home.toml; }
@test "profiles/special-chars.toml validates against the schema" { validates profiles/special-chars.toml; }
@test "profiles/strict.toml validates against the schema" { validates profiles/strict.toml; }
@test "examples/drun-user/config.toml validates against the schema" { validates examples/drun-user/config.toml; }

@test "every profile and example config not named above validates too" {
    local f
    for f in profiles/*.toml $(find examples -name '*.toml' ! -name '.taplo.toml' | LC_ALL=C sort); do
        case " profiles/carveouts.toml profiles/ci-runner.toml profiles/default.toml profiles/drun-compat.toml profiles/globs.toml profiles/networked-dev.toml profiles/permissive.toml profiles/readonly-home.toml profiles/special-chars.toml profiles/strict.toml examples/drun-user/config.toml " in *" $f "*) continue ;; esac
        validates "$f"
    done
}

# ---- bad configs: the schema and the compiler both refuse them --------------------------------------
@test "bad config refused by the schema and the compiler: unknown-key" { bad unknown-key; }
@test "bad config refused by the schema and the compiler: unknown-table-key" { bad unknown-table-key; }
@test "bad config refused by the schema and the compiler: unknown-table" { bad unknown-table; }
@test "bad config refused by the schema and the compiler: key-in-wrong-table" { bad key-in-wrong-table; }
@test "bad config refused by the schema and the compiler: wrong-type-string-for-int" { bad wrong-type-string-for-int; }
@test "bad config refused by the schema and the compiler: wrong-type-float-for-int" { bad wrong-type-float-for-int; }
@test "bad config refused by the schema and the compiler: wrong-type-int-for-bool" { bad wrong-type-int-for-bool; }
@test "bad config refused by the schema and the compiler: wrong-type-scalar-for-array" { bad wrong-type-scalar-for-array; }
@test "bad config refused by the schema and the compiler: wrong-type-array-entry" { bad wrong-type-array-entry; }
@test "bad config refused by the schema and the compiler: wrong-type-table-for-key" { bad wrong-type-table-for-key; }
@test "bad config refused by the schema and the compiler: out-of-range-below" { bad out-of-range-below; }
@test "bad config refused by the schema and the compiler: out-of-range-above" { bad out-of-range-above; }
@test "bad config refused by the schema and the compiler: relative-path" { bad relative-path; }
@test "bad config refused by the schema and the compiler: glob-in-grant" { bad glob-in-grant; }
@test "bad config refused by the schema and the compiler: dotdot-path" { bad dotdot-path; }
@test "bad config refused by the schema and the compiler: unknown-variable" { bad unknown-variable; }
@test "bad config refused by the schema and the compiler: control-char-path" { bad control-char-path; }
@test "bad config refused by the schema and the compiler: bad-env-name" { bad bad-env-name; }
@test "bad config refused by the schema and the compiler: bad-env-set-name" { bad bad-env-set-name; }
@test "bad config refused by the schema and the compiler: env-set-not-string" { bad env-set-not-string; }
@test "bad config refused by the schema and the compiler: empty-domain" { bad empty-domain; }
@test "bad config refused by the schema and the compiler: blank-command" { bad blank-command; }
@test "bad config refused by the schema and the compiler: overlay-dotdot" { bad overlay-dotdot; }
@test "bad config refused by the schema and the compiler: overlay-slash" { bad overlay-slash; }
@test "bad config refused by the schema and the compiler: datetime-for-int" { bad datetime-for-int; }

# ---- bounds and defaults: the schema and the compiler agree -------------------------------------------

@test "schema and compiler agree at every integer bound and on every default" {
    run -0 served bounds # the configs, written by setup_file
    local f l name want verdict c nb=0 bad_bounds=()
    local -A got=()
    while IFS= read -r l; do
    case $l in "PASS "*) got[${l#PASS }]=PASS ;; "FAIL "*) l=${l#FAIL }; got[${l%%: *}]=FAIL ;; esac
    done < "$BATS_FILE_TMPDIR/validate.out"
    for f in "$BATS_FILE_TMPDIR"/b/ok--*.toml "$BATS_FILE_TMPDIR"/b/ko--*.toml; do
        name=${f##*/} name=${name%.toml} want=${name%%--*}
        verdict=${got[$f]:-}
        accepts "$f" && c=0 || c=$?
        if [ "$want" = ok ]; then [ "$verdict" = PASS ] && [ $c -eq 0 ] || bad_bounds+=("$name: schema $verdict, compiler exit $c")
        else [ "$verdict" = FAIL ] && [ $c -eq 1 ] || bad_bounds+=("$name: schema $verdict, compiler exit $c"); fi
        nb=$((nb + 1))
    done
    [ "$nb" -gt 40 ] || fail "only $nb boundary configs"
    assert_equal "${bad_bounds[*]}" ""
}

# ---- every key is documented in docs/policy.md -------------------------------------------------------

@test "every key of the schema is in docs/policy.md" {
    run -0 served undoc
    assert_output ""
}
