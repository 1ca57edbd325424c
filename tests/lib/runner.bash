# tests/lib/runner.bash — the fixture of the bats suites that run
# `drun-policy run` with the real bwrap (57-proxy, 58-fuse-caps,
# 59-fallback-caps, 59-fuse-hostile):
#
#   source "$BATS_TEST_DIRNAME/../lib/runner.bash"
#   setup_file() { runner_setup_file [fuse]; }
#   setup()      { runner_fixture DIR...; ... }
#   teardown()   { runner_teardown; }
#
# runner_setup_file [fuse]: ROOT, B (absolute) and DP, the drun-policy under
# test; skips the file without bwrap (and without /dev/fuse with "fuse").
runner_setup_file() {
    export ROOT=${ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    B=${B:-build}
    case $B in /*) ;; *) B=$ROOT/$B ;; esac
    export B DP=$B/drun-policy
    command -v bwrap > /dev/null || skip "no bwrap"
    if [ "${1:-}" = fuse ]; then [ -e /dev/fuse ] || skip "no /dev/fuse"; fi
    runner_sbx
    export RUNNER_SBX=$SBX # looked up once a file, not once a test
}

# runner_sbx: SBX, the sandbox user a root runner's sandbox runs as
# (drun-sandbox, else 65534; empty when not root)
runner_sbx() {
    SBX=
    if [ "$EUID" = 0 ]; then
        SBX=$(awk -F: '$1 == "drun-sandbox" {print $3 ":" $4}' /etc/passwd)
        SBX=${SBX:-65534:65534}
    fi
}

# runner_fixture DIR...: T, a fresh directory (0711: a root runner's sandbox
# user must pass it) holding the named subdirectories, and SBX, the sandbox
# user a root runner's sandbox runs as (drun-sandbox, else 65534; empty when
# not root).
runner_fixture() {
    T=$(mktemp -d)
    chmod 711 "$T"
    [ $# -eq 0 ] || mkdir -p -- "${@/#/$T/}" # (one process for them all)
    if [ -n "${RUNNER_SBX+x}" ]; then SBX=$RUNNER_SBX; else runner_sbx; fi
}

# runner_teardown: unmounts what a run left under the fixture's state dir (a
# layer mount would keep rm from the tree), then removes it.
runner_teardown() {
    local m
    for m in "$T"/state/drun/run/fuse/*; do [ -d "$m" ] && umount -l "$m" 2> /dev/null; done
    rm -rf "$T"
}

# own: the workspace belongs to the sandbox user (a root runner's sandbox
# runs as it, as 50-enforce does).
own() { if [ -n "$SBX" ]; then chown -R "$SBX" "$T/ws"; fi; }
