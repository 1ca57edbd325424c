#!/usr/bin/env bash
# review.sh — the policy review a CI job runs on a pull request (see
# policy-review.yml and docs/review.md):
#
#   1. lint    the config, as SARIF for code scanning (and as text in the log);
#   2. diff    the config of the base commit against this one: what the change
#              grants and revokes, written to the job summary;
#   3. check   the committed artifacts against what the config compiles to.
#
#   review.sh --base REF --config FILE --artifacts DIR [--sarif FILE]
#             [--strict] [--facts FILE]...
#
# Run it from the root of the repository (a git checkout with the base commit
# fetched). DRUN_POLICY names the drun-policy binary (default: drun-policy
# on PATH); GITHUB_STEP_SUMMARY, when set, receives a Markdown report.
# Exit: 0 when lint has no errors (no warnings with --strict) and the
# artifacts match; 1 otherwise; 2 on usage errors. Every step runs even
# when an earlier one fails, so the SARIF and the summary are always written.
set -u
DP=${DRUN_POLICY:-drun-policy}
base="" config="" artifacts="" sarif=drun-policy.sarif strict=() facts=()
usage() { sed -n '10,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        --base) base=${2:-}; shift 2 ;;
        --config) config=${2:-}; shift 2 ;;
        --artifacts) artifacts=${2:-}; shift 2 ;;
        --sarif) sarif=${2:-}; shift 2 ;;
        --strict) strict=(--strict); shift ;;
        --facts) facts+=(--facts "${2:-}"); shift 2 ;;
        *) usage ;;
    esac
done
[ -n "$base" ] && [ -n "$config" ] && [ -n "$artifacts" ] || usage
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
status=0

# 1. lint: SARIF for code scanning, text for the log (one run)
NO_COLOR=1 "$DP" lint "$config" --sarif-output "$sarif" "${strict[@]}" "${facts[@]}" > "$tmp/lint.txt"; lint_rc=$?
cat "$tmp/lint.txt"
if [ $lint_rc -ne 0 ]; then
    echo "::error file=$config::drun-policy lint found errors${strict:+ or warnings (--strict)}"
    status=1
fi

# 2. diff against the base commit (an empty file when the config is new)
mkdir -p "$tmp/base/$(dirname "$config")"
old="$tmp/base/$config"
if ! git show "$base:$config" > "$old" 2> /dev/null; then
    : > "$old"
    echo "note: $config does not exist at $base; diffing against an empty policy"
fi
NO_COLOR=1 "$DP" diff "$old" "$config" "${facts[@]}" > "$tmp/diff.txt"; diff_rc=$?
if [ $diff_rc -gt 1 ]; then
    echo "::error file=$config::drun-policy diff failed"
    status=1
fi
cat "$tmp/diff.txt"

# 3. check the committed artifacts
NO_COLOR=1 "$DP" check "$config" --golden "$artifacts" > "$tmp/check.txt" 2>&1; check_rc=$?
cat "$tmp/check.txt"
if [ $check_rc -ne 0 ]; then
    echo "::error file=$config::the artifacts in $artifacts drifted from $config (drun-policy compile $config -o $artifacts)"
    status=1
fi

# the job summary: the meaning of the change first, then the lint findings
{
    echo "## Policy review: \`$config\`"
    echo
    case $diff_rc in
        0) echo "No change in what the sandbox may do, and no artifact change." ;;
        1) echo "### What this change grants and revokes"; echo; echo '```'; sed '/^--- policy.sb/,$d' "$tmp/diff.txt"; echo '```'
           echo; echo "<details><summary>Artifact diff (policy.sb, bwrap.args)</summary>"; echo; echo '```diff'
           sed -n '/^--- policy.sb/,$p' "$tmp/diff.txt"; echo '```'; echo; echo "</details>" ;;
        *) echo "drun-policy diff failed." ;;
    esac
    echo
    echo "### Lint"; echo; echo '```'; cat "$tmp/lint.txt"; echo '```'
    echo
    echo "### Committed artifacts"; echo
    if [ $check_rc -eq 0 ]; then echo "\`$artifacts\` is what \`$config\` compiles to."
    else echo '```diff'; cat "$tmp/check.txt"; echo '```'; fi
} >> "$summary"
exit $status
