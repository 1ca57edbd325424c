#!/usr/bin/env bash
# tests/macos/acceptance.sh — the macOS profiles on a real Mac (issue 18).
#
# The SBPL profiles are held to the lattice on Linux by an independent
# evaluator (tests/helpers/sbpl_eval.c, suite 51); whether Seatbelt agrees
# is only known on a Mac. Run this once on macOS 13, 14 or 15, from the
# repository root, as an ordinary user (not root):
#
#   tests/macos/acceptance.sh            # every probe, TAP on stdout
#   tests/macos/acceptance.sh -v         # and each probe's command output
#
# Nothing needs building but the evaluator (cc, from tests/helpers/
# sbpl_eval.c alone): the profiles are the committed golden/*/policy.sb and
# tests/macos/acceptance.sb, compiled with golden/facts-macos.json, whose home
# is /Users/user; this script writes each into a temp dir with that home
# replaced by yours ($HOME, in the plain and in the case-folded spelling), so
# no drun-policy binary is needed on the Mac.
#
# It loads every profile with `sandbox-exec -f … -D WORKSPACE=… -D SCRATCH=…`
# (fresh, canonical temp dirs), runs the tools the issue names in the default
# profile, and each attack both ways (the allowed neighbour, then the attack),
# checking the host afterwards where the attack writes. Every TAP line says
# what the probe wanted and what the evaluator predicted for the same
# operation, so the first run calibrates the evaluator:
#   ok 12 - default: cat /etc/hosts (want allow; evaluator allow)
# A "# CALIBRATE" line follows a probe where the evaluator and Seatbelt
# disagree. Tools that are not installed are skipped (# SKIP). Exit 0 when
# every probe passed. Nothing outside the temp dirs is written; the home is
# only read (ls of ~ and ~/.drun in the permissive profile).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
VERBOSE=0
[ "${1:-}" = "-v" ] && VERBOSE=1

n=0 failed=0 calibrate=0
say() { printf '%s\n' "$*"; }
if [ "$(uname -s)" != Darwin ]; then say "1..0 # SKIP not macOS: run this on a Mac"; exit 0; fi
if [ "$(id -u)" = 0 ]; then say "Bail out! run as an ordinary user: root reads what a user cannot"; exit 2; fi
command -v sandbox-exec > /dev/null || { say "Bail out! no sandbox-exec"; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/drun-accept.XXXXXX") || exit 2
tmp=$(cd "$tmp" && pwd -P)
trap 'chmod -R u+w "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT

# ---- the evaluator ---------------------------------------------------------------------------------------
SE=$tmp/sbpl-eval
if ! ${CC:-cc} -std=c11 -O1 -o "$SE" "$ROOT/tests/helpers/sbpl_eval.c" 2> "$tmp/cc.log"; then
    say "Bail out! the evaluator does not build: $(head -3 "$tmp/cc.log")"
    exit 2
fi

# ---- the profiles, with this Mac's home ------------------------------------------------------------------
# The case-folded spelling the compiler writes for a literal cap: each ASCII
# letter as [xX], '.' as \\. (the regex escape, written in an SBPL string).
fold() {
    local s=$1 out="" c i
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case $c in
            [a-zA-Z]) out+="[$(tr 'A-Z' 'a-z' <<< "$c")$(tr 'a-z' 'A-Z' <<< "$c")]" ;;
            .) out+='\\.' ;;
            *) out+=$c ;;
        esac
    done
    printf '%s' "$out"
}
HOME_REAL=$(cd "$HOME" && pwd -P)
FOLD_GOLDEN=$(fold /Users/user)
FOLD_HOME=$(fold "$HOME_REAL")
mkprofile() { # SOURCE NAME
    FG=$FOLD_GOLDEN FH=$FOLD_HOME HR=$HOME_REAL perl -pe 's/\Q$ENV{FG}\E/$ENV{FH}/g; s{"/Users/user(?=["/])}{"$ENV{HR}}g' \
        "$1" > "$tmp/$2.sb"
}
PROFILES=()
for d in "$ROOT"/golden/*/; do
    [ -f "$d/policy.sb" ] || continue
    name=$(basename "$d")
    mkprofile "$d/policy.sb" "$name"
    PROFILES+=("$name")
done
mkprofile "$ROOT/tests/macos/acceptance.sb" acceptance
PROFILES+=(acceptance)

# ---- session dirs and the sandbox --------------------------------------------------------------------------
fresh() { local d; d=$(mktemp -d "$tmp/$1.XXXXXX") && (cd "$d" && pwd -P); }
WS=$(fresh ws) SC=$(fresh scratch) OUTSIDE=$(fresh outside)
SBPATH=/usr/bin:/bin:/usr/sbin:/sbin:/opt/homebrew/bin:/usr/local/bin

# sbx PROFILE CMD: runs CMD with /bin/sh in the sandbox, the environment cleared.
sbx() {
    local prof=$1
    shift
    sandbox-exec -f "$tmp/$prof.sb" -D "WORKSPACE=$WS" -D "SCRATCH=$SC" \
        /usr/bin/env -i HOME="$SC" TMPDIR="$SC/" PATH="$SBPATH" LANG=en_US.UTF-8 WS="$WS" SC="$SC" \
        /bin/sh -c "$1" > "$tmp/out" 2>&1 < /dev/null
}

# predict PROFILE QUERY: the evaluator's answer for one operation.
#   rd|wd|wc|un|md PATH  a file operation (read data, write data, create, unlink, metadata)
#   op OPERATION [NAME]  any other operation (sysctl-read kern.proc.all, ...)
predict() {
    local prof=$1 kind=${2%% *} arg=${2#* } line
    case $kind in
        op)
            line=$(printf '%s\n' "$arg" | "$SE" "$tmp/$prof.sb" -D "WORKSPACE=$WS" -D "SCRATCH=$SC" 2>&1) || { echo "error"; return; }
            echo "${line%%$'\t'*}" ;;
        rd | wd | wc | un | md)
            line=$(printf '%s\n' "$arg" | "$SE" "$tmp/$prof.sb" -D "WORKSPACE=$WS" -D "SCRATCH=$SC" \
                --map /etc=/private/etc --map /tmp=/private/tmp --map /var=/private/var 2>&1) || { echo "error"; return; }
            case $line in *"$kind=+"*) echo allow ;; *"$kind=-"*) echo deny ;; *) echo "error" ;; esac ;;
        *) echo n/a ;;
    esac
}

# probe PROFILE WANT QUERY DESCRIPTION CMD [HOSTCHECK]
# WANT allow: CMD must exit 0; deny: non-zero. HOSTCHECK, when given, is a
# shell test run on the host afterwards that must hold too.
probe() {
    local prof=$1 want=$2 query=$3 desc=$4 cmd=$5 host=${6:-} rc got pred ok=1
    sbx "$prof" "$cmd"
    rc=$?
    got=allow
    [ $rc -ne 0 ] && got=deny
    [ "$got" = "$want" ] || ok=0
    if [ -n "$host" ] && ! (eval "$host"); then ok=0; fi
    pred=n/a
    [ -n "$query" ] && pred=$(predict "$prof" "$query")
    n=$((n + 1))
    if [ $ok = 1 ]; then say "ok $n - $prof: $desc (want $want; evaluator $pred)"
    else failed=$((failed + 1)); say "not ok $n - $prof: $desc (want $want, got $got; evaluator $pred)"; fi
    if [ "$pred" != n/a ] && [ "$pred" != "$got" ]; then
        calibrate=$((calibrate + 1))
        say "# CALIBRATE: the evaluator said $pred for '$query', Seatbelt did $got"
    fi
    if [ $ok = 0 ] || [ $VERBOSE = 1 ]; then sed 's/^/#   /' "$tmp/out" | head -20; fi
}
skip() { n=$((n + 1)); say "ok $n - $1 # SKIP $2"; }
have() { command -v "$1" > /dev/null 2>&1; }

say "# macOS $(sw_vers -productVersion 2> /dev/null) ($(uname -m)); workspace $WS; scratch $SC"
say "# APFS case-sensitive: $(diskutil info / 2> /dev/null | grep -i 'case-sensitive' | head -1 | sed 's/.*: *//')"

# ---- every profile loads and runs a shell ----------------------------------------------------------------
for p in "${PROFILES[@]}"; do
    probe "$p" allow "" "loads; /bin/sh -c true" "true"
done

# ---- the tools (default profile) ---------------------------------------------------------------------------
P=default
probe $P allow "rd /private/var/select/sh" "/bin/sh reads /private/var/select/sh" "/bin/sh -c 'echo ok'"
probe $P allow "rd /etc/hosts" "cat /etc/hosts" "cat /etc/hosts > /dev/null"
probe $P allow "wd /dev/fd/2" "echo x > /dev/stderr" "echo x > /dev/stderr"
probe $P allow "md /dev/stdout" "echo x > /dev/stdout" "echo x > /dev/stdout"
probe $P allow "wd /dev/null" "echo x > /dev/null" "echo x > /dev/null"
probe $P allow "op sysctl-read kern.proc.pid.1" "ps -o pid= -p \$\$" 'ps -o pid= -p $$'
probe $P allow "rd /private/var/db/timezone/zoneinfo/UTC" "date (local zone: $(date +%Z))" "[ \"\$(date +%Z)\" = '$(date +%Z)' ]"
probe $P allow "md $(dirname "$WS")" "cd \"\$WS\" && pwd -P gives the workspace" 'cd "$WS" && [ "$(pwd -P)" = "$WS" ]'
probe $P allow "op mach-lookup com.apple.system.opendirectoryd.membership" "id -Gn (as outside: $(id -Gn | wc -w | tr -d ' ') groups)" \
    "[ \"\$(id -Gn)\" = '$(id -Gn)' ]"
probe $P allow "op sysctl-read hw.ncpu" "sysctl -n hw.ncpu hw.nperflevels" "sysctl -n hw.ncpu > /dev/null"
probe $P allow "wc $WS/made.txt" "write in the workspace" "echo hi > \"\$WS/made.txt\"" "[ \"\$(cat '$WS/made.txt')\" = hi ]"
probe $P allow "wc $SC/made.txt" "write in the scratch dir" "echo hi > \"\$SC/made.txt\"" "[ -f '$SC/made.txt' ]"
if xcode-select -p > /dev/null 2>&1; then
    probe $P allow "rd /private/var/db/xcode_select_link" "/usr/bin/git init (the xcrun shim)" 'cd "$WS" && /usr/bin/git init -q repo' "[ -d '$WS/repo/.git' ]"
    probe $P allow "" "/usr/bin/git status" 'cd "$WS/repo" && /usr/bin/git status > /dev/null'
    probe $P allow "" "/usr/bin/make --version" '/usr/bin/make --version > /dev/null'
    probe $P allow "" "/usr/bin/clang --version" '/usr/bin/clang --version > /dev/null'
    probe $P allow "" "/usr/bin/python3 -c 'import multiprocessing as m; m.Lock()'" \
        "/usr/bin/python3 -c 'import multiprocessing as m; m.Lock()'"
else
    skip "$P: /usr/bin shims (git, make, clang, python3)" "no developer dir (xcode-select -p fails)"
fi
brewgit=""
for g in /opt/homebrew/bin/git /usr/local/bin/git; do [ -x "$g" ] && brewgit=$g && break; done
if [ -n "$brewgit" ]; then
    [ -d "$WS/repo" ] || "$brewgit" init -q "$WS/repo"
    probe $P allow "" "Homebrew git status ($brewgit)" "cd \"\$WS/repo\" && $brewgit status > /dev/null"
else skip "$P: Homebrew git status" "no Homebrew git"; fi
if have node; then
    NODE=$(command -v node)
    printf '%s\n' 'const fs = require("fs"), os = require("os");' \
        'if (fs.realpathSync(__filename) !== __filename) process.exit(3);' \
        'if (!(os.cpus().length > 0)) process.exit(4);' 'console.log("ok")' > "$WS/x.js"
    case $NODE in /opt/* | /usr/*) probe $P allow "md /Users" "node ws/x.js (realpath, os.cpus())" "$NODE \"\$WS/x.js\"" ;;
        *) skip "$P: node ws/x.js" "node at $NODE is outside the read set (nvm, volta): not a profile question" ;; esac
else skip "$P: node ws/x.js" "no node"; fi
PY=""
for p in /opt/homebrew/bin/python3 /usr/local/bin/python3; do [ -x "$p" ] && PY=$p && break; done
[ -z "$PY" ] && xcode-select -p > /dev/null 2>&1 && PY=/usr/bin/python3
if [ -n "$PY" ]; then
    probe $P allow "op ipc-posix-sem" "$PY multiprocessing.Lock() (POSIX semaphores)" "$PY -c 'import multiprocessing as m; m.Lock()'"
    probe $P allow "op ipc-posix-shm-write-create" "$PY shared_memory (POSIX shm)" \
        "$PY -c 'from multiprocessing import shared_memory as s; x = s.SharedMemory(create=True, size=16); x.close(); x.unlink()'"
    probe $P deny "op system-socket AF_UNIX" "$PY AF_UNIX socket (default: no allow_unix_sockets)" \
        "cd \"\$WS\" && $PY -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"s1\")'" "[ ! -e '$WS/s1' ]"
    probe permissive allow "op system-socket AF_UNIX" "$PY AF_UNIX socket bound in the workspace (allow_unix_sockets)" \
        "cd \"\$WS\" && $PY -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"s2\")'" "[ -S '$WS/s2' ]"
    probe permissive deny "op network-outbound 1.1.1.1:443" "$PY TCP connect (no network even with allow_unix_sockets)" \
        "$PY -c 'import socket; socket.create_connection((\"1.1.1.1\", 443), timeout=3)'"
else skip "$P: python3 probes" "no python3"; fi
if have script; then
    probe $P allow "" "script: a pty made in the sandbox is read and written" "script -q /dev/null /bin/echo pty-ok | grep -q pty-ok"
fi

# ---- attacks, both ways ----------------------------------------------------------------------------------------
# git hooks, in every case (on a case-insensitive volume .GIT is .git)
mkdir -p "$WS/.git/hooks"
probe $P allow "wc $WS/src.txt" "write beside .git" 'echo a > "$WS/src.txt"' "[ -f '$WS/src.txt' ]"
probe $P deny "wc $WS/.git/hooks/pre-commit" "write .git/hooks/pre-commit" \
    'echo evil > "$WS/.git/hooks/pre-commit"' "[ ! -e '$WS/.git/hooks/pre-commit' ]"
probe $P deny "wc $WS/.GIT/hooks/post-commit" "write .GIT/hooks/post-commit (case variant)" \
    'echo evil > "$WS/.GIT/hooks/post-commit"' "[ ! -e '$WS/.git/hooks/post-commit' ] && [ ! -e '$WS/.GIT/hooks/post-commit' ]"
probe $P deny "wc $WS/.git/HOOKS/x" "write .git/HOOKS/x (case variant)" \
    'echo evil > "$WS/.git/HOOKS/x"' "[ ! -e '$WS/.git/hooks/x' ]"
probe $P deny "un $WS/.git" "rename .git away (to change hooks and put it back)" 'mv "$WS/.git" "$WS/g2"' "[ -d '$WS/.git' ]"
probe $P allow "wc $WS/.gitx" "write .gitx (only the capped name)" 'mkdir -p "$WS/.gitx/hooks" && echo a > "$WS/.gitx/hooks/x"'
# .env and *.pem (deny_read globs) in any case; ? as one character, also a UTF-8 one
A=acceptance
printf 'SECRET=1\n' > "$WS/.env"
printf 'ok\n' > "$WS/.envrc"
printf 'key\n' > "$WS/k.pem"
probe $A allow "rd $WS/.envrc" "read .envrc" 'cat "$WS/.envrc"'
probe $A deny "rd $WS/.env" "read .env" 'cat "$WS/.env"'
probe $A deny "rd $WS/.ENV" "read .ENV (case variant)" 'cat "$WS/.ENV"'
probe $A deny "rd $WS/k.PEM" "read k.PEM (case variant)" 'cat "$WS/k.PEM"'
for f in report-a.txt "report-é.txt" "report-€.txt" "report-😀.txt"; do
    printf 'x\n' > "$WS/$f"
    probe $A deny "rd $WS/$f" "read $f (? is one character)" "cat \"\$WS/$f\""
done
printf 'x\n' > "$WS/report-ab.txt"
probe $A allow "rd $WS/report-ab.txt" "read report-ab.txt (? is not two)" 'cat "$WS/report-ab.txt"'
# raw UTF-8 in a profile string
probe $A deny "wc $WS/café-lock" "create café-lock (a UTF-8 cap)" 'echo x > "$WS/café-lock"' "[ ! -e '$WS/café-lock' ]"
probe $A allow "wc $WS/cafe-lock" "create cafe-lock" 'echo x > "$WS/cafe-lock"' "[ -f '$WS/cafe-lock' ]"
probe $A deny "wc $WS/LOCKED" "create LOCKED (cap **/Locked, case variant)" 'echo x > "$WS/LOCKED"' "[ ! -e '$WS/LOCKED' ] && [ ! -e '$WS/Locked' ]"
# the data volume's second spelling
DV=/System/Volumes/Data$WS
if [ -d "$DV" ]; then
    probe $P allow "rd $WS/src.txt" "read a workspace file" 'cat "$WS/src.txt"'
    probe $P deny "rd $DV/src.txt" "read it as /System/Volumes/Data/..." "cat '$DV/src.txt'"
    probe $P deny "wc $DV/.git/hooks/y" "write .git/hooks as /System/Volumes/Data/..." \
        "echo evil > '$DV/.git/hooks/y'" "[ ! -e '$WS/.git/hooks/y' ]"
else skip "$P: /System/Volumes/Data spellings" "$DV does not exist (the workspace is not on the data volume)"; fi
# hard links: the sandbox cannot link a file it cannot read into the workspace
printf 'secret\n' > "$OUTSIDE/secret"
probe $P deny "rd $OUTSIDE/secret" "read a file outside every grant" "cat '$OUTSIDE/secret'"
probe $P deny "" "hard-link it into the workspace" "ln '$OUTSIDE/secret' \"\$WS/hl\"" "[ ! -e '$WS/hl' ]"
ln "$OUTSIDE/secret" "$WS/host-link" 2> /dev/null &&
    probe $P allow "rd $WS/host-link" "a hard link the host made is the workspace's (documented)" 'cat "$WS/host-link"'
# symlinks out of the workspace are followed to their target's rules
ln -s "$OUTSIDE/secret" "$WS/sl"
probe $P deny "rd $OUTSIDE/secret" "read through a symlink to outside" 'cat "$WS/sl"'
# runtime-owned paths (SPEC §13) under a write grant of ~ (permissive): only read here
probe permissive allow "md $HOME_REAL" "ls ~ (permissive grants the home)" "ls '$HOME_REAL' > /dev/null"
probe permissive deny "rd $HOME_REAL/.drun/config.toml" "read ~/.drun (runtime-owned)" \
    "ls '$HOME_REAL/.drun' 2>&1 | grep -q 'not permitted'"
# ttys: another terminal cannot be read
other=""
me=$(tty 2> /dev/null || true)
for t in /dev/ttys0*; do [ -O "$t" ] && [ "$t" != "$me" ] && other=$t && break; done
if [ -n "$other" ]; then
    probe $P deny "rd $other" "open another terminal ($other) for reading" "exec 3< '$other'"
else skip "$P: another terminal is not readable" "no other tty of yours"; fi
# processes: one by id, not the host's list, not other processes' arguments
probe $P deny "op sysctl-read kern.proc.all" "ps ax (the host's process list)" 'ps ax > /dev/null'
probe $P deny "op sysctl-read kern.procargs2" "ps -o command= -p 1 (another process's arguments)" \
    'ps -o command= -p 1 | grep -q "^/sbin/launchd"'
# what process-info* does not restrict: recorded, not asserted
sbx $P 'ps -o pid= -p 1' && say "# process-info: ps -p 1 sees launchd from inside (process-info* is not a restriction)" ||
    say "# process-info: ps -p 1 does not see launchd from inside"

say "1..$n"
say "# $failed failed; $calibrate probe(s) where the evaluator disagreed with Seatbelt (CALIBRATE lines)"
[ "$failed" -eq 0 ]
