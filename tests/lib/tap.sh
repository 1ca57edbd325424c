# tests/lib/tap.sh — the TAP helpers every bash suite shares (source it).
#
#   . "$ROOT/tests/lib/tap.sh"        (or: . "$(dirname "$0")/../lib/tap.sh")
#
# A suite prints one "ok N - name" / "not ok N - name" line per check and
# ends with "1..N" (finish); diagnostics are "# " lines after a failure.
# tests/run counts the top-level lines. The counters are plain globals: $n
# (points so far) and $failed (failed points), so a suite may still read
# them. Sourcing also sets ROOT (the checkout), B (the build dir, relative
# to ROOT unless absolute) and cds to ROOT, as every suite did by hand.
#
#   pass NAME [NOTE]        ok N - NAME (# NOTE: a remark, not a directive)
#   fail NAME [DIAG...]     not ok N - NAME, each DIAG line as "# ..."
#   skip NAME REASON        ok N - NAME # SKIP REASON
#   check NAME CMD...       pass if CMD succeeds, else fail with "$why" if set
#   diag TEXT...            "# TEXT" lines (always shown in the log)
#   finish                  prints the plan "1..N", exits 0 iff nothing failed
#   tap_tmpdir [TEMPLATE]   sets tmp to a new directory (default under
#                           ${TMPDIR:-/tmp}), removed on exit
#   tap_on_exit CMD         runs CMD (eval) on exit, before tmp is removed;
#                           the latest registered runs first
#   tap_build OUT SRC... [-- ARGS...]   compiles a test helper program into
#                           OUT with the project's strict flags (sanitizers
#                           too when $B is a sanitizer build) and include
#                           path; ARGS go last (-D_GNU_SOURCE, libraries);
#                           TAP_NOSAN=1: no sanitizers even then;
#                           compiler output in OUT.log; status of the compiler
#   tap_build_lib OUT SRC... [-- ARGS...]   the same with -D_GNU_SOURCE,
#                           linked against $B/libdrunpolicy.a and the
#                           Makefile's PKGS
#   tap_merge PREFIX FILE   renumbers the TAP of FILE (a C test binary's
#                           output) into this stream, each name prefixed
#   tap_node HELPER.mjs ARGS...   runs a tests/lib node helper in the
#                           suite's one node process (tests/lib/node.bash;
#                           tap_node_start first when used in $(...));
#                           stopped on exit
#
# The shell options stay the suite's own (set -u is expected).

if [ -z "${ROOT:-}" ]; then ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd); fi
cd "$ROOT" || exit 2
B=${B:-build}
n=${n:-0}
failed=${failed:-0}

pass() { n=$((n + 1)); echo "ok $n - $1${2:+ # $2}"; }
fail() {
    n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift
    local l
    for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name" "${why:-}"; fi; }
diag() { local l; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done; }
finish() { echo "1..$n"; [ "$failed" -eq 0 ]; exit $?; }

# ---- temp dir and exit actions ------------------------------------------------------

_tap_exit=()
_tap_on_exit_run() {
    local i
    for ((i = ${#_tap_exit[@]} - 1; i >= 0; i--)); do eval "${_tap_exit[i]}"; done
    if [ -n "${tmp:-}" ] && [ -n "${_tap_tmp:-}" ] && [ "$tmp" = "$_tap_tmp" ]; then rm -rf "$tmp"; fi
}
trap _tap_on_exit_run EXIT
tap_on_exit() { _tap_exit+=("$1"); }
tap_tmpdir() {
    tmp=$(mktemp -d "${1:-${TMPDIR:-/tmp}/drun-test.XXXXXX}") || { echo "Bail out! mktemp -d failed"; exit 2; }
    _tap_tmp=$tmp
}

# ---- helper programs ----------------------------------------------------------------

TAP_WARN=(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
          -Wno-format-nonliteral -Wvla)
TAP_SAN=() TAP_CC=${CC:-cc}
# a sanitizer build is the Makefile's SAN_CC's (clang): its helpers must be too
case $B in *san*) TAP_SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    TAP_CC=${SAN_CC:-$(sed -n 's/^SAN_CC *?= *//p' Makefile)} ;; esac
tap_build() { # OUT SRC... [-- ARGS...]
    local out=$1 inc=() d; shift
    local srcs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    for d in grammar compiler compiler/*/ runtime; do inc+=("-I${d%/}"); done
    mkdir -p "$(dirname "$out")"
    local san=("${TAP_SAN[@]}")
    [ -n "${TAP_NOSAN:-}" ] && san=()
    $TAP_CC -std=c11 -O1 -g "${TAP_WARN[@]}" "${san[@]}" "${inc[@]}" -I"$B/gen" -Itests/unit \
        -o "$out" "${srcs[@]}" "$@" > "$out.log" 2>&1
}

# The libraries the library needs: the Makefile's PKGS line, so a helper
# links whatever the binaries link.
tap_build_lib() { # OUT SRC... [-- ARGS...]
    local pkgs
    pkgs=$(sed -n 's/^PKGS *:= *//p' Makefile)
    local out=$1 a=(); shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    # shellcheck disable=SC2046
    tap_build "$out" "${a[@]}" "$B/libdrunpolicy.a" -- -D_GNU_SOURCE $(pkg-config --cflags --libs $pkgs) -lm -lpthread "$@"
}

# ---- merged TAP -----------------------------------------------------------------------

tap_merge() { # PREFIX FILE: returns 1 when a point in FILE failed
    local prefix=$1 line bad=0
    while IFS= read -r line; do
        case "$line" in
            "ok "*) n=$((n + 1)); echo "ok $n - $prefix${line#* - }" ;;
            "not ok "*) n=$((n + 1)); failed=$((failed + 1)); bad=1; echo "not ok $n - $prefix${line#* - }" ;;
            "1.."*) ;;
            *) echo "$line" ;;
        esac
    done < "$2"
    return $bad
}

# ---- one node process for the node helpers ---------------------------------------------

. "$ROOT/tests/lib/node.bash"
tap_on_exit tap_node_stop
