# tests/lib/bats.bash — bats-support and bats-assert for the bats suites, from
# Debian's paths (packages bats-support, bats-assert):
#
#   source "$BATS_TEST_DIRNAME/../lib/bats.bash"
#
# bats sources a test file once per test; their own load.bash files cost a
# subshell per source line (dirname), which made loading them three times
# the cost of an empty test. Sourcing the files directly is the same code.
for _bats_lib in /usr/lib/bats/bats-support /usr/lib/bats/bats-assert; do
    if [ ! -d "$_bats_lib/src" ]; then
        echo "tests/lib/bats.bash: $_bats_lib is not installed (scripts/install-deps)" >&2
        exit 1
    fi
    for _bats_f in "$_bats_lib"/src/*.bash; do source "$_bats_f"; done
done
unset _bats_lib _bats_f

# skip_under_san [WHY]: for a suite whose sanitizer run would repeat its plain
# run: it runs none of a build's programs (77-layers and 79-format check the
# source tree, 11-test-slots drives tests/run over stubs), or only what
# another suite runs under the sanitizers too (70-install: the make rules,
# and `drun-policy completion`, which 73-completion runs). Under B=build/san
# each of its tests skips, saying WHY.
skip_under_san() {
    local why="runs none of the build's programs: the plain run did the same work"
    case ${B:-build} in *san*) skip "${1:-$why}" ;; esac
}
