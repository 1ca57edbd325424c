# tests/bench/lib.sh — what the benchmark scripts share (source it; not
# executable, so scripts/bench does not run it). Run from the repository
# root with B set.
#
#   bench_cc OUT SRC... [-- ARGS...]   builds a benchmark program against the
#       build's library, with the libraries the Makefile's PKGS line names:
#       a benchmark links whatever the binaries link, so a library added to
#       the product cannot leave a benchmark unlinkable (three did, unseen:
#       nothing built them but `make bench`). ARGS go after the libraries.
#   bench_built   ends the script here when BENCH_BUILD_ONLY is set: what
#       tests/suites/12-bench-build.bats runs to prove every program links.
#
# BENCH_BUILD_LOG, when set, gets a line "SRC" per source built.

bench_cc() {
    local out=$1 srcs=() pkgs opt=-O2
    [ -n "${BENCH_BUILD_ONLY:-}" ] && opt=-O0 # only whether it links is asked
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    pkgs=$(sed -n 's/^PKGS *:= *//p' Makefile)
    if [ -n "${BENCH_BUILD_LOG:-}" ]; then printf '%s\n' "${srcs[@]}" >> "$BENCH_BUILD_LOG"; fi
    # shellcheck disable=SC2046 # the include dirs and pkg-config's words split on purpose
    ${CC:-cc} -std=c11 $opt -D_GNU_SOURCE -Igrammar $(for d in compiler compiler/*/; do printf -- '-I%s ' "${d%/}"; done) \
        -Iruntime -I"$B/gen" -o "$out" "${srcs[@]}" "$B/libdrunpolicy.a" $(pkg-config --libs $pkgs) -lm -lpthread "$@"
}

bench_built() {
    [ -z "${BENCH_BUILD_ONLY:-}" ] || exit 0
}
