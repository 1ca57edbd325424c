# tests/lib/node.bash — one node process for a suite's node helpers (source it;
# tap.sh does, and stops it on exit).
#
#   tap_node_start          starts node on tests/lib/serve.mjs, as a coprocess
#   tap_node HELPER ARGS... runs HELPER (a tests/lib/*.mjs exporting main, see
#                           tests/lib/cli.mjs) in it: its stdout on stdout, its
#                           stderr on stderr, its exit status returned (files,
#                           not stdin). Starts node on first use in the main
#                           shell; in a $(...) it must already be started.
#   tap_node_stop           ends it (nothing when not started)
#
# Starting node costs some 140 ms of CPU; a helper run in a node already
# started, well under one. The coprocess's pipes are copied to plain fds so
# that $(...) subshells (where bash hides a coprocess's own) can use them.
TAP_NODE_W="" TAP_NODE_R="" TAP_NODE_SERVE=$(cd "${BASH_SOURCE[0]%/*}" && pwd)/serve.mjs
tap_node_start() {
    coproc TAP_NODE_CO { exec node "$TAP_NODE_SERVE"; }
    exec {TAP_NODE_W}>&"${TAP_NODE_CO[1]}" {TAP_NODE_R}<&"${TAP_NODE_CO[0]}"
    TAP_NODE_PID=$TAP_NODE_CO_PID
}
tap_node_stop() {
    [ -n "$TAP_NODE_W" ] || return 0
    exec {TAP_NODE_W}>&- {TAP_NODE_R}<&-
    TAP_NODE_W="" TAP_NODE_R=""
    # EOF ends it; a child that kept the pipe (a daemon) must not keep it alive
    kill "$TAP_NODE_PID" 2> /dev/null || true
    wait "$TAP_NODE_PID" 2> /dev/null || true
}
tap_node() { # HELPER ARGS...
    if [ -z "$TAP_NODE_W" ]; then
        # in a $(...) the node started would be that subshell's alone
        [ "$BASHPID" = "$$" ] || { echo "tap_node: call tap_node_start first (in the suite's shell)" >&2; return 2; }
        tap_node_start
    fi
    local out err rc
    printf '%s\0' "$#" "$@" >&"$TAP_NODE_W"
    if ! { IFS= read -r -d '' out && IFS= read -r -d '' err && read -r -d '' rc; } <&"$TAP_NODE_R"; then
        echo "tap_node: tests/lib/serve.mjs gave no answer for $1" >&2
        return 2
    fi
    printf '%s' "$out"
    printf '%s' "$err" >&2
    return "$rc"
}
