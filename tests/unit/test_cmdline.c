/* test_cmdline.c — command lists: the shell split, entries, matching, verdicts.
 *
 * split() renders what shell_parse found as "cmd ; cmd", '!' marking an opaque
 * command and '+' one that receives more arguments at run time, so each case
 * pins the whole reading of a string in one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmdlist.h"
#include "tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char *split_n(const char *cmd, size_t len)
{
    shell_parse_t p;
    bool ok = shell_parse(cmd, len, &p);
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < p.ncmds; i++) {
        char *d = shell_cmd_display(&p.cmds[i]);
        buf_printf(&b, "%s%s%s%s", i ? " ; " : "", p.cmds[i].opaque ? "!" : "", d, p.cmds[i].more_args ? "+" : "");
        free(d);
    }
    if (!ok) buf_printf(&b, "%sERROR: %s", p.ncmds ? " ; " : "", p.error);
    shell_parse_free(&p);
    return buf_detach(&b, NULL);
}

#define SPLIT(cmd, want)                          \
    do {                                          \
        char *got_ = split_n((cmd), strlen(cmd)); \
        CHECK_STR(got_, (want), "split: " cmd);   \
        free(got_);                               \
    } while (0)

typedef struct lists {
    const char *const *deny;
    size_t ndeny;
    const char *const *allow;
    size_t nallow;
} lists_t;

static void verdict(const char *cmd, lists_t l, bool allowed, cmdlist_kind_t list, long entry, const char *reason)
{
    cmdlist_verdict_t v = cmdlist_check(cmd, strlen(cmd), l.deny, l.ndeny, l.allow, l.nallow);
    char name[200];
    snprintf(name, sizeof name, "%s: %.120s", allowed ? "allowed" : "denied", cmd);
    int ok = v.allowed == allowed && v.list == list && v.entry == entry && v.reason && !strcmp(v.reason, reason);
    CHECK(ok, name);
    if (!ok) {
        printf("#   got allowed=%d list=%d entry=%ld reason=%s\n", v.allowed, (int)v.list, v.entry, v.reason);
        printf("#  want allowed=%d list=%d entry=%ld reason=%s\n", allowed, (int)list, entry, reason);
    }
    cmdlist_verdict_free(&v);
}

static void entry_err(const char *entry, const char *want)
{
    char *err = NULL;
    bool ok = cmdlist_entry_valid(entry, &err);
    char name[200];
    snprintf(name, sizeof name, "entry rejected: %s", entry);
    CHECK(!ok, name);
    CHECK_STR(err, want, name);
    free(err);
}

static void entry_ok(const char *entry)
{
    char *err = NULL;
    char name[200];
    snprintf(name, sizeof name, "entry valid: %s", entry);
    CHECK(cmdlist_entry_valid(entry, &err) && err == NULL, name);
    free(err);
}

/* ---- the split ------------------------------------------------------------------ */

static void test_quoting(void)
{
    SPLIT("rm -fr x", "rm -fr x");
    SPLIT("r''m -rf", "rm -rf");
    SPLIT("r\"\"m -rf", "rm -rf");
    SPLIT("/bin/rm -r -f", "/bin/rm -r -f");
    SPLIT("\\rm -rf", "rm -rf");
    SPLIT("\"rm\" -rf", "rm -rf");
    SPLIT("'r'\"m\" x", "rm x");
    SPLIT("echo 'a b' \"c d\" e\\ f", "echo 'a b' 'c d' 'e f'");
    SPLIT("echo 'it'\\''s'", "echo 'it'\\''s'");
    SPLIT("echo \"a\\\"b\" \"c\\\\d\" \"e\\f\" \"\\$x\"", "echo 'a\"b' 'c\\d' 'e\\f' '$x'");
    SPLIT("echo $'a\\tb' $'\\x41\\101\\u0041' $'it\\'s'", "echo $'a\\tb' AAA 'it'\\''s'");
    /* bash encodes \u above ASCII in the run-time locale, and $"..." goes through
     * a message catalog chosen at run time: both are only known when they run */
    SPLIT("$'\\u0072\\u006d' -rf x; $'r\\u00e9' x; $\"rm\" x", "rm -rf x ; !$'r\\u00e9' x ; !$\"rm\" x");
    SPLIT("echo $'a\\0b'c", "echo ac");
    SPLIT("$'\\x72\\x6d' -rf /", "rm -rf /");
    SPLIT("echo $\"hi\"", "echo $\"hi\"");
    SPLIT("r\\\nm -rf x", "rm -rf x");
    SPLIT("echo a$ $ '$'", "echo 'a$' '$' '$'");
    SPLIT("echo ''", "echo ''");
    SPLIT("~/bin/tool x", "'~/bin/tool' x");
    SPLIT("echo \"multi\nline\"", "echo $'multi\\nline'");
}

static void test_operators(void)
{
    SPLIT("a && rm -rf x", "a ; rm -rf x");
    SPLIT("a || b; c & d", "a ; b ; c ; d");
    SPLIT("a | rm -rf x", "a ; rm -rf x");
    SPLIT("a |& b", "a ; b");
    SPLIT("a\nb\n\nc", "a ; b ; c");
    SPLIT("a&&b||c|d;e&f", "a ; b ; c ; d ; e ; f");
    SPLIT("a &\\\n& b", "a ; b");
    SPLIT("ls # rm -rf x", "ls");
    SPLIT("ls#x", "'ls#x'");
    SPLIT("#!/bin/sh\nls", "ls");
    SPLIT("echo a # c \\\nrm x", "echo a ; rm x");
    SPLIT("", "");
    SPLIT("   \n\t ", "");
    SPLIT("! ls", "ls");
    SPLIT("time -p ls | wc", "ls ; wc");
    SPLIT("time rm -rf x", "rm -rf x");
}

static void test_compound(void)
{
    SPLIT("(rm -rf x)", "rm -rf x");
    SPLIT("{ rm -rf x; }", "rm -rf x");
    SPLIT("{ echo }; ls; }", "echo '}' ; ls");
    SPLIT("if true; then rm -rf x; fi", "true ; rm -rf x");
    SPLIT("if a; then b; elif c; then d; else e; fi", "a ; b ; c ; d ; e");
    SPLIT("while read l; do echo $l; done < f", "read l ; echo $l");
    SPLIT("until a; do b; done", "a ; b");
    SPLIT("for i in $(seq 3) x; do rm $i; done", "seq 3 ; rm $i");
    SPLIT("for i; do a; done", "a");
    SPLIT("for ((i=0; i<$(n); i++)); do a; done", "n ; a");
    SPLIT("for x in a b; { c; }", "c");
    SPLIT("select x in a b; do c; done", "c");
    SPLIT("case $x in a|b) rm -rf x;; (*) ls;& c) d;;& esac", "rm -rf x ; ls ; d");
    SPLIT("case $(a) in $(b)) c;; esac", "a ; b ; c");
    SPLIT("case x in esac", "");
    SPLIT("echo $(case x in a) echo in;; esac)", "echo in ; echo $(case x in a) echo in;; esac)");
    SPLIT("[[ -f $(ls) && $x =~ ^(a|b)$ ]] && rm x", "ls ; rm x");
    SPLIT("[[ a < b ]]", "");
    SPLIT("f() { rm -rf x; }; f", "rm -rf x ; f");
    SPLIT("function g { ls; }", "ls");
    SPLIT("function g() ( ls )", "ls");
    SPLIT("f ()\n{ ls; }", "ls");
    SPLIT("coproc cat", "cat");
    SPLIT("coproc N { ls; }", "ls");
    SPLIT("echo if then fi done", "echo if then fi done");
    SPLIT("'if' x", "'if' x");
    SPLIT("{ ls; } > out 2>&1", "ls");
}

static void test_substitutions(void)
{
    SPLIT("echo $(rm -rf x)", "rm -rf x ; echo $(rm -rf x)");
    SPLIT("echo `rm -rf x`", "rm -rf x ; echo `rm -rf x`");
    SPLIT("echo \"a $(rm -rf x) b\"", "rm -rf x ; echo \"a $(rm -rf x) b\"");
    SPLIT("echo \"`rm -rf x`\"", "rm -rf x ; echo \"`rm -rf x`\"");
    SPLIT("echo `echo \\`rm x\\``", "rm x ; echo `rm x` ; echo `echo \\`rm x\\``");
    SPLIT("echo $(echo $(rm x))", "rm x ; echo $(rm x) ; echo $(echo $(rm x))");
    SPLIT("x=$(rm -rf y)", "rm -rf y");
    SPLIT("x=`rm -rf y` ls", "rm -rf y ; ls");
    SPLIT("a=(x $(rm y) z); ls", "rm y ; ls");
    SPLIT("ls > $(rm x)", "rm x ; ls");
    SPLIT("cat <<< \"$(id)\"", "id ; cat");
    SPLIT("echo ${x:-$(rm -rf y)}", "rm -rf y ; echo ${x:-$(rm -rf y)}");
    SPLIT("echo \"${x:-\"}\"}\" $(ls)", "ls ; echo \"${x:-\"}\"}\" $(ls)");
    SPLIT("echo ${x:-{a}}", "echo ${x:-{a}}");
    SPLIT("echo $((1 + $(ls)))", "ls ; echo $((1 + $(ls)))");
    SPLIT("echo $((ls) )", "ls ; echo $((ls) )");
    SPLIT("echo $[1 + $(ls)]", "ls ; echo $[1 + $(ls)]");
    SPLIT("(( x = $(ls) + 1 ))", "ls");
    SPLIT("diff <(ls a) >(sort)", "ls a ; sort ; diff <(ls a) >(sort)");
    SPLIT("echo ${x@P}", "!${x@P} ; echo ${x@P}");
    SPLIT("echo $(echo a # )\n)", "echo a ; echo $(echo a # )\\x0a)");
    SPLIT("echo \"$(echo \")\")\"", "echo ')' ; echo \"$(echo \")\")\"");
}

static void test_redirections_heredocs(void)
{
    SPLIT("ls >x 2>&1 <y >>z <>w >|v &>u &>>t", "ls");
    SPLIT("2>/dev/null rm -rf x", "rm -rf x");
    SPLIT("{fd}>x ls", "ls");
    SPLIT("echo 2 >x", "echo 2");
    SPLIT("cat <<EOF\n$(rm -rf x)\nEOF\nls", "rm -rf x ; cat ; ls");
    SPLIT("cat <<'EOF'\n$(rm -rf x)\nEOF\nls", "cat ; ls");
    SPLIT("cat <<\"E\"OF\n`rm x`\nEOF\nls", "cat ; ls");
    SPLIT("cat <<\\EOF\n$(rm x)\nEOF", "cat");
    SPLIT("cat <<-EOF\n\t$(a)\n\tEOF\nb", "a ; cat ; b");
    SPLIT("cat <<A <<B\n$(a)\nA\n$(b)\nB\nc", "a ; b ; cat ; c");
    SPLIT("cat <<EOF | rm -rf x\nbody\nEOF", "cat ; rm -rf x");
    SPLIT("cat <<EOF\nfoo\\\nEOF\nEOF\nls", "cat ; ls");
    SPLIT("cat <<EOF\nfoo\\\\\nEOF\nls", "cat ; ls");
    SPLIT("cat <<'EOF'\nrm x\nEOF", "cat");
    SPLIT("cat <<EOF; echo $(a\nb)\nbody $(c)\nEOF\nd", "cat ; a ; b ; c ; echo $(a\\x0ab) ; d");
    SPLIT("echo $(cat <<X\n)\nX\n)", "cat ; echo $(cat <<X\\x0a)\\x0aX\\x0a)");
    SPLIT("cat <<EOF", "cat ; ERROR: unterminated here-document at offset 4");
    SPLIT("cat <<EOF\nrm -rf x\n", "ERROR: unterminated here-document 'EOF' at offset 4");
    SPLIT("cat <<$'E'\nE\nrm x", "ERROR: here-document delimiter with '$' or '`' at offset 6; write a plain word such as EOF");
    SPLIT("echo $(cat <<EOF)\nx\nEOF", "cat ; ERROR: unterminated here-document at offset 11");
}

static void test_dynamic(void)
{
    SPLIT("$CMD -rf", "!$CMD -rf");
    SPLIT("${CMD} x", "!${CMD} x");
    SPLIT("\"$CMD\" x", "!\"$CMD\" x");
    SPLIT("$(which rm) -rf x", "which rm ; !$(which rm) -rf x");
    SPLIT("r*m x", "!r*m x");
    SPLIT("{rm,ls} x", "!{rm,ls} x");
    SPLIT("echo {a,b} *.txt", "echo {a,b} *.txt");
    SPLIT("/usr/$D/rm x", "!/usr/$D/rm x");
    SPLIT("eval 'rm -rf x'", "!eval 'rm -rf x'");
    SPLIT("source x.sh; . ./y", "!source x.sh ; !. ./y");
    SPLIT("alias ll='rm -rf'", "!alias 'll=rm -rf'");
    SPLIT("mapfile -C cb arr; bind -x x; fc -l; fc", "!mapfile -C cb arr ; !bind -x x ; fc -l ; !fc");
    /* bash runs substitutions in a quoted array subscript given to these */
    SPLIT("unset 'a[$(rm x)]'", "!unset 'a[$(rm x)]'");
    SPLIT("printf -v 'a[`rm x`]' y", "!printf -v 'a[`rm x`]' y");
    SPLIT("[[ -v 'a[${x:-$(rm)}]' ]]", "!'a[${x:-$(rm)}]'");
    SPLIT("echo 'a[$(x)]'; unset 'a[1]'", "echo 'a[$(x)]' ; unset 'a[1]'");
    SPLIT("a[$(rm x)]=1 ls", "rm x ; ls");
}

static void test_wrappers(void)
{
    SPLIT("sh -c 'rm -rf x'", "sh -c 'rm -rf x' ; rm -rf x");
    SPLIT("bash -ec 'a; b' arg0", "bash -ec 'a; b' arg0 ; a ; b");
    SPLIT("bash -o pipefail -c 'a'", "bash -o pipefail -c a ; a");
    SPLIT("bash --norc -c a", "bash --norc -c a ; a");
    SPLIT("sh -c \"sh -c 'rm x'\"", "sh -c 'sh -c '\\''rm x'\\''' ; sh -c 'rm x' ; rm x");
    SPLIT("bash -c \"$X\"", "!bash -c \"$X\"");
    SPLIT("bash", "!bash");
    SPLIT("echo x | sh -s", "echo x ; !sh -s");
    SPLIT("bash script.sh", "bash script.sh");
    SPLIT("fish -c 'rm x'", "!fish -c 'rm x'");
    SPLIT("env rm -rf", "env rm -rf ; rm -rf");
    SPLIT("env -i FOO=1 -u BAR rm x", "env -i FOO=1 -u BAR rm x ; rm x");
    SPLIT("env - PATH=/x rm x", "env - PATH=/x rm x ; rm x");
    SPLIT("env --ignore-env rm x", "env --ignore-env rm x ; rm x");
    SPLIT("env -S 'rm -rf' x", "!env -S 'rm -rf' x");
    SPLIT("env", "env");
    SPLIT("sudo rm -rf", "sudo rm -rf ; rm -rf");
    SPLIT("sudo -u root -E HOME=/ rm x", "sudo -u root -E HOME=/ rm x ; rm x");
    SPLIT("sudo -u \"$U\" rm x", "sudo -u \"$U\" rm x ; rm x");
    SPLIT("sudo -u $U rm x", "!sudo -u $U rm x");
    SPLIT("sudo -e /etc/hosts", "sudo -e /etc/hosts");
    SPLIT("sudo --frobnicate rm", "!sudo --frobnicate rm");
    SPLIT("sudo -Z rm", "!sudo -Z rm");
    SPLIT("doas -u root rm x", "doas -u root rm x ; rm x");
    SPLIT("command rm x; command -v rm", "command rm x ; rm x ; command -v rm");
    SPLIT("builtin eval x", "builtin eval x ; !eval x");
    SPLIT("exec -a name rm x; exec >log", "exec -a name rm x ; rm x ; exec");
    SPLIT("nice -n 5 rm x; nice -10 rm y; nice --adjustment=3 rm z",
          "nice -n 5 rm x ; rm x ; nice -10 rm y ; rm y ; nice --adjustment=3 rm z ; rm z");
    SPLIT("nohup rm x &", "nohup rm x ; rm x");
    SPLIT("timeout -k 1 -s KILL 5 rm x", "timeout -k 1 -s KILL 5 rm x ; rm x");
    SPLIT("timeout --sig=KILL 5s rm x", "timeout --sig=KILL 5s rm x ; rm x");
    SPLIT("stdbuf -oL -e 0 rm x", "stdbuf -oL -e 0 rm x ; rm x");
    SPLIT("/usr/bin/time -f %e -o t rm x", "/usr/bin/time -f %e -o t rm x ; rm x");
    SPLIT("setsid -w rm x", "setsid -w rm x ; rm x");
    SPLIT("busybox rm -rf x", "busybox rm -rf x ; rm -rf x");
    SPLIT("xargs rm -rf", "xargs rm -rf ; rm -rf+");
    SPLIT("xargs -0 -n1 -P4 rm", "xargs -0 -n1 -P4 rm ; rm+");
    SPLIT("xargs -I{} mv {} {}.bak", "xargs '-I{}' mv '{}' '{}.bak' ; mv {} {}.bak");
    SPLIT("xargs -I {} {} x", "xargs -I '{}' '{}' x ; !{} x");
    SPLIT("xargs $X rm", "!xargs $X rm");
    SPLIT("find . -exec rm -rf {} \\;", "find . -exec rm -rf '{}' ';' ; rm -rf '{}'");
    SPLIT("find . -name '*.o' -execdir rm {} + -ok ls \\;",
          "find . -name '*.o' -execdir rm '{}' + -ok ls ';' ; rm '{}' ; ls");
    SPLIT("find . -exec {} \\;", "find . -exec '{}' ';' ; !{}");
    SPLIT("find . -exec rm", "find . -exec rm");
    SPLIT("find $D -name x", "!find $D -name x");
    SPLIT("find \"$D\" -name x", "find \"$D\" -name x");
    SPLIT("find \"$D\" -exec ls \\;", "!find \"$D\" -exec ls ';' ; ls");
    SPLIT("watch -n1 'rm -rf x'", "watch -n1 'rm -rf x' ; rm -rf x");
    SPLIT("watch -x rm x", "watch -x rm x ; rm x");
    SPLIT("su -c 'rm -rf x' root", "su -c 'rm -rf x' root ; rm -rf x");
    SPLIT("su - root --command=ls", "su - root --command=ls ; ls");
    SPLIT("su - root -c \"$X\"", "!su - root -c \"$X\"");
    SPLIT("script -qc 'rm x' /dev/null", "script -qc 'rm x' /dev/null ; rm x");
    SPLIT("flock /tmp/l -c 'rm x'", "flock /tmp/l -c 'rm x' ; rm x");
    SPLIT("flock -w 5 /tmp/l rm x", "flock -w 5 /tmp/l rm x ; rm x");
    SPLIT("chroot --userspec=a:b /srv rm x", "chroot --userspec=a:b /srv rm x ; rm x");
    SPLIT("trap 'rm -rf x' EXIT; trap - INT; trap \"$A\" HUP",
          "trap 'rm -rf x' EXIT ; rm -rf x ; trap - INT ; !trap \"$A\" HUP");
    SPLIT("sudo -u root -E env FOO=1 nice -n 5 timeout 10 rm -rf /",
          "sudo -u root -E env FOO=1 nice -n 5 timeout 10 rm -rf / ; env FOO=1 nice -n 5 timeout 10 rm -rf / ; "
          "nice -n 5 timeout 10 rm -rf / ; timeout 10 rm -rf / ; rm -rf /");
}

static void test_errors(void)
{
    SPLIT("echo 'abc", "ERROR: unterminated single quote at offset 5");
    SPLIT("echo \"abc", "ERROR: unterminated double quote at offset 5");
    SPLIT("echo `abc", "ERROR: unterminated backquote at offset 5");
    SPLIT("echo $(ls", "ls ; ERROR: unterminated command substitution '$(' at offset 5");
    SPLIT("echo ${x", "ERROR: unterminated '${' at offset 5");
    SPLIT("echo $'x", "ERROR: unterminated $' quote at offset 5");
    SPLIT("echo $[1", "ERROR: unterminated '$[' at offset 5");
    SPLIT("cat <(ls", "ls ; ERROR: unterminated process substitution at offset 4");
    SPLIT("a=(x", "ERROR: unterminated array assignment at offset 2");
    SPLIT("ls ;;", "ls ; ERROR: syntax error near ';;' at offset 3");
    SPLIT("fi", "ERROR: syntax error near 'fi' at offset 0");
    SPLIT("ls; }", "ls ; ERROR: syntax error near '}' at offset 4");
    SPLIT("if a; then b", "a ; b ; ERROR: missing 'fi' for the 'if' at offset 0");
    SPLIT("{ ls", "ls ; ERROR: missing '}' for the '{' at offset 0");
    SPLIT("( ls", "ls ; ERROR: missing ')' for the '(' at offset 0");
    SPLIT("ls )", "ls ; ERROR: syntax error near ')' at offset 3");
    SPLIT("ls |", "ls ; ERROR: syntax error near end of input at offset 4");
    SPLIT("&& ls", "ERROR: syntax error near '&&' at offset 0");
    SPLIT("case x in a) b", "b ; ERROR: missing 'esac' for the 'case' at offset 0");
    SPLIT("while a; do b", "a ; b ; ERROR: missing 'done' for the 'do' at offset 0");
    SPLIT("[[ a", "ERROR: missing ']]' for the '[[' at offset 0");
    SPLIT("[[ a ; ]]", "ERROR: syntax error near ';' at offset 5");
    SPLIT("x=1 if true; then ls; fi", "'if' true ; ERROR: syntax error near 'then' at offset 13");
    SPLIT("echo a (b)", "echo a ; ERROR: syntax error near '(' at offset 7");
    SPLIT("ls >", "ERROR: syntax error near end of input at offset 4");
    SPLIT("sh -c 'ls; echo \"x'", "sh -c 'ls; echo \"x' ; ls ; ERROR: unterminated double quote at offset 9 in the 'sh -c' string at offset 0");
    SPLIT("echo `echo 'x`", "ERROR: unterminated single quote at offset 5 in the backquoted command at offset 5");
    char nul[] = "ls\0rm -rf x";
    char *got = split_n(nul, sizeof nul - 1);
    CHECK_STR(got, "ERROR: NUL byte at offset 2", "split: a NUL byte is an error");
    free(got);
}

/* n nested copies of open, then the innermost command, then n closes. */
static char *nest(const char *open, const char *inner, const char *close, int n)
{
    buf_t b = BUF_INIT;
    for (int i = 0; i < n; i++) buf_adds(&b, open);
    buf_adds(&b, inner);
    for (int i = 0; i < n; i++) buf_adds(&b, close);
    return buf_detach(&b, NULL);
}

static void test_nesting(void)
{
    /* 64 levels in all: the top level and 63 nested substitutions. */
    char *s = nest("echo $(", "rm -rf x", ")", 63);
    shell_parse_t p;
    CHECK(shell_parse(s, strlen(s), &p) && p.ncmds == 64 && p.cmds[0].depth == 63, "63 nested substitutions parse");
    shell_parse_free(&p);
    free(s);
    s = nest("echo $(", "rm -rf x", ")", 64);
    CHECK(!shell_parse(s, strlen(s), &p), "64 nested substitutions are too deep");
    CHECK_STR(p.error, "nested too deeply at offset 446", "the depth error names the offset");
    shell_parse_free(&p);
    const char *deny[] = {"ls"};
    cmdlist_verdict_t v = cmdlist_check(s, strlen(s), deny, 1, NULL, 0);
    CHECK(!v.allowed && v.list == CMDLIST_NONE && !strcmp(v.reason, "nested too deeply at offset 446"), "too deep is denied");
    cmdlist_verdict_free(&v);
    free(s);

    /* clang-format off */
    static const char *const deep[][3] = {
        {"( ", "ls", " )"}, {"{ ", "ls", "; }"}, {"$( ", "ls", ")"}, {"${x:-", "y", "}"}, {"if a; then ", "ls", "; fi"},
        {"\"$(", "ls", ")\""}, {"sudo ", "ls", ""}, {"while ", "a", "; do b; done"}, {"[[ $(", "a", ") ]]"},
        {"<(", "ls", ")"}, {"a=($(", "ls", "))"}, {"$(( $(", "1", ") ))"}, {"f() { ", "ls", "; }"},
    };
    /* clang-format on */
    for (size_t k = 0; k < N(deep); k++) {
        s = nest(deep[k][0], deep[k][1], deep[k][2], 100000);
        char name[80];
        snprintf(name, sizeof name, "100000 x '%s': an error, not a crash", deep[k][0]);
        CHECK(!shell_parse(s, strlen(s), &p) && strstr(p.error, "nested too deeply"), name);
        shell_parse_free(&p);
        free(s);
    }
    /* These do not nest in the shell either; they must simply finish. */
    static const char *const flat[][3] = {{"(", "ls", ")"}, {"`", "ls", "`"}, {"sh -c '", "ls", "'"}, {"$((", "1", "))"}};
    for (size_t k = 0; k < N(flat); k++) {
        s = nest(flat[k][0], flat[k][1], flat[k][2], 100000);
        char name[80];
        snprintf(name, sizeof name, "100000 x '%s' finishes", flat[k][0]);
        shell_parse(s, strlen(s), &p);
        CHECK(1, name);
        shell_parse_free(&p);
        free(s);
    }
    s = nest("((", "", "", 50000);
    CHECK(!shell_parse(s, strlen(s), &p), "50000 x '((' unclosed is an error");
    shell_parse_free(&p);
    free(s);

    /* Long flat inputs stay linear: a million commands and a huge word. */
    buf_t b = BUF_INIT;
    for (int i = 0; i < 200000; i++) buf_adds(&b, "a;b|c&&d\n");
    CHECK(shell_parse(b.p, b.len, &p) && p.ncmds == 800000, "800000 commands");
    shell_parse_free(&p);
    buf_truncate(&b, 0);
    buf_adds(&b, "rm ");
    for (int i = 0; i < 300000; i++) buf_adds(&b, "-f ");
    buf_adds(&b, "-r");
    v = cmdlist_check(b.p, b.len, (const char *[]){"rm -rf"}, 1, NULL, 0);
    CHECK(!v.allowed && v.list == CMDLIST_DENY, "300000 words checked");
    cmdlist_verdict_free(&v);
    buf_free(&b);
}

/* ---- quoting round trip ----------------------------------------------------------- */

static void roundtrip(const char *s, size_t n, const char *want)
{
    char *q = shell_quote(s, n);
    if (want) CHECK_STR(q, want, "quote");
    char *line = xasprintf("x %s", q);
    shell_parse_t p;
    bool ok = shell_parse(line, strlen(line), &p);
    CHECK(ok && p.ncmds == 1 && p.cmds[0].nwords == 2 && p.cmds[0].words[1].len == n &&
              memcmp(p.cmds[0].words[1].text, s, n) == 0,
          "quote reads back as the same single word");
    shell_parse_free(&p);
    free(line);
    free(q);
}

static void test_quote(void)
{
    roundtrip("abc-_./:=,@%+", 13, "abc-_./:=,@%+");
    roundtrip("", 0, "''");
    roundtrip("a b", 3, "'a b'");
    roundtrip("it's", 4, "'it'\\''s'");
    roundtrip("$HOME `x` \"y\" \\z", 16, "'$HOME `x` \"y\" \\z'");
    roundtrip("a\nb\tc\x01'\\", 8, "$'a\\nb\\tc\\x01\\'\\\\'");
    roundtrip("caf\xc3\xa9", 5, "'caf\xc3\xa9'");
    roundtrip("bad\xff\xc3", 5, "$'bad\\xff\\xc3'");
    roundtrip("\xc3\xa9\n", 3, "$'\xc3\xa9\\n'");
    roundtrip("*?[{}]~#!;&|<>()", 16, "'*?[{}]~#!;&|<>()'");
    roundtrip("-rf", 3, "-rf");
    char all[255];
    for (int i = 0; i < 255; i++) all[i] = (char)(i + 1);
    roundtrip(all, sizeof all, NULL);
}

/* ---- entries -------------------------------------------------------------------------- */

static void test_entries(void)
{
    entry_ok("rm -rf");
    entry_ok("'rm' -rf");
    entry_ok("git push --force");
    entry_ok("curl");
    entry_ok("rm '*'");
    entry_ok("  rm   -r  ");
    entry_ok("echo '$HOME' \\$ $'\\x41'");
    entry_err("", "the entry is empty; write a command name such as 'rm' or 'rm -rf'");
    entry_err("   ", "the entry is empty; write a command name such as 'rm' or 'rm -rf'");
    entry_err("rm 'x", "unterminated single quote at offset 3");
    entry_err("rm \"x", "unterminated double quote at offset 3");
    entry_err("ls; rm", "';' separates commands at offset 2; an entry is one command: write one entry per command");
    entry_err("ls | grep x", "'|' separates commands at offset 3; an entry is one command: write one entry per command");
    entry_err("a && b", "'&' separates commands at offset 2; an entry is one command: write one entry per command");
    entry_err("ls\nrm", "a newline separates commands at offset 2; an entry is one command: write one entry per command");
    entry_err("ls > x", "'>' is a redirection at offset 3; an entry is a command and its arguments only");
    entry_err("cat <(ls)", "'<' is a redirection at offset 4; an entry is a command and its arguments only");
    entry_err("(ls)", "'(' is a subshell or function parenthesis at offset 0; an entry is a command and its arguments only");
    entry_err("rm $HOME",
              "'$' starts an expansion at offset 3; an entry is literal words (write '$' in single quotes to match a dollar sign)");
    entry_err("rm \"$(x)\"",
              "'$' starts an expansion at offset 4; an entry is literal words (write '$' in single quotes to match a dollar sign)");
    entry_err("rm `x`", "'`' starts a command substitution at offset 3; an entry is literal words (quote it to match a backquote)");
    entry_err("/bin/rm -rf", "'/bin/rm' names a directory; write the command name alone ('rm'), which matches it in any directory");
    entry_err("FOO=1 rm", "'FOO=1' sets a variable; an entry starts with the command name");
    entry_err("rm -rf *",
              "'*' is a wildcard at offset 7; an entry already matches any further arguments, so leave it out (or quote it to match it literally)");
    entry_err("r?", "'?' is a wildcard at offset 1; an entry already matches any further arguments, so leave it out (or quote it to match it literally)");
    entry_err("{rm,ls}", "'}' is a wildcard at offset 6; an entry already matches any further arguments, so leave it out (or quote it to match it literally)");
    entry_err("if", "'if' is a shell keyword, not a command");
    entry_err("''", "the command name is empty");
    entry_err("# x", "'#' starts a comment at offset 0; quote it ('#') to match it literally");
    entry_err("r$'\\u00e9'", "the word is only known when it runs at offset 0; an entry is literal words "
                             "($'\\u..' above ASCII and $\"..\" depend on the locale)");
    entry_ok("$'\\u0072m' -rf");
    char *err = (char *)1;
    CHECK(!cmdlist_entry_valid(NULL, &err) && err && !strcmp(err, "the entry is missing"), "NULL entry");
    free(err);
    CHECK(!cmdlist_entry_valid("rm |", NULL), "err may be NULL");
}

/* ---- verdicts --------------------------------------------------------------------------- */

static const char *const RMRF[] = {"rm -rf"};
#define DENY(a) ((lists_t){(a), N(a), NULL, 0})
#define ALLOW(a) ((lists_t){NULL, 0, (a), N(a)})

static void test_deny_rm(void)
{
    lists_t l = DENY(RMRF);
    verdict("rm -r -f /tmp/x", l, false, CMDLIST_DENY, 0, "'rm -r -f /tmp/x' matches denylist entry 'rm -rf'");
    verdict("rm -fr x", l, false, CMDLIST_DENY, 0, "'rm -fr x' matches denylist entry 'rm -rf'");
    verdict("r''m -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("/bin/rm -r -f x", l, false, CMDLIST_DENY, 0, "'/bin/rm -r -f x' matches denylist entry 'rm -rf'");
    verdict("\\rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("\"rm\" -f -r x", l, false, CMDLIST_DENY, 0, "'rm -f -r x' matches denylist entry 'rm -rf'");
    verdict("FOO=1 rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("echo $(rm -rf x)", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("echo `rm -rf x`", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("a && rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("a | rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("(rm -rf x)", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("{ rm -rf x; }", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("if true; then rm -rf x; fi", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("sh -c 'rm -rf x'", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("env rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("sudo rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("find . -exec rm -rf {} \\;", l, false, CMDLIST_DENY, 0, "'rm -rf '{}'' matches denylist entry 'rm -rf'");
    verdict("rm -R --force x", l, false, CMDLIST_DENY, 0, "'rm -R --force x' matches denylist entry 'rm -rf'");
    verdict("rm --recursive -f x", l, false, CMDLIST_DENY, 0, "'rm --recursive -f x' matches denylist entry 'rm -rf'");
    verdict("rm -rfv x", l, false, CMDLIST_DENY, 0, "'rm -rfv x' matches denylist entry 'rm -rf'");
    verdict("$'\\x72m' -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("cat <<EOF\n$(rm -rf x)\nEOF", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("xargs rm -rf", l, false, CMDLIST_DENY, 0, "'rm -rf' matches denylist entry 'rm -rf'");
    verdict("timeout 5 nice rm -rf x", l, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    /* not matching */
    verdict("rm -r -- -f", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("rm -r x", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("rm -f x; ls -r", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("echo rm -rf x", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("echo 'rm -rf x'", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("cat <<'EOF'\n$(rm -rf x)\nEOF", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("grep -rf pats .", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("rmdir -rf x", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("", l, true, CMDLIST_NONE, -1, "the command runs no program");
    verdict("rm -- $F", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    /* cannot be checked */
    verdict("$CMD -rf x", l, false, CMDLIST_DENY, -1,
            "the command word of '$CMD -rf x' is only known when it runs; it cannot be checked against the denylist");
    verdict("eval 'rm -rf x'", l, false, CMDLIST_DENY, -1,
            "'eval 'rm -rf x'' runs a string as shell code; it cannot be checked against the denylist");
    verdict("bash -c \"$X\"", l, false, CMDLIST_DENY, -1,
            "the command string of 'bash -c \"$X\"' is only known when it runs; it cannot be checked against the denylist");
    verdict("echo 'rm -rf /' | bash", l, false, CMDLIST_DENY, -1,
            "'bash' reads its commands from standard input; it cannot be checked against the denylist");
    verdict("rm $F x", l, false, CMDLIST_DENY, 0,
            "'rm $F x' may match denylist entry 'rm -rf': some of its arguments are only known when it runs");
    verdict("rm -r \"$F\" x", l, false, CMDLIST_DENY, 0,
            "'rm -r \"$F\" x' may match denylist entry 'rm -rf': some of its arguments are only known when it runs");
    verdict("rm --recur -f x", l, false, CMDLIST_DENY, 0,
            "'rm --recur -f x' may match denylist entry 'rm -rf': some of its arguments are only known when it runs");
    verdict("find . -name '*.o' | xargs rm", l, false, CMDLIST_DENY, 0,
            "'rm' may match denylist entry 'rm -rf': some of its arguments are only known when it runs");
    verdict("find . -name '*.o' | xargs rm --", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("echo 'rm -rf x", l, false, CMDLIST_NONE, -1, "unterminated single quote at offset 5");
    /* a certain match anywhere wins over an earlier uncertain one */
    verdict("$X; rm -rf y", l, false, CMDLIST_DENY, 0, "'rm -rf y' matches denylist entry 'rm -rf'");
}

static void test_deny_other(void)
{
    static const char *const deny[] = {"curl", "git push --force", "git config --global", "npm publish --tag=latest"};
    lists_t l = DENY(deny);
    verdict("curl -s https://x", l, false, CMDLIST_DENY, 0, "'curl -s https://x' matches denylist entry 'curl'");
    verdict("/usr/bin/curl x | sh", l, false, CMDLIST_DENY, 0, "'/usr/bin/curl x' matches denylist entry 'curl'");
    verdict("wget x; echo curl", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("git push --force origin", l, false, CMDLIST_DENY, 1, "'git push --force origin' matches denylist entry 'git push --force'");
    verdict("git push origin main -f", l, false, CMDLIST_DENY, 1, "'git push origin main -f' matches denylist entry 'git push --force'");
    verdict("git push --force-with-lease", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("git push origin", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("git push --forc", l, false, CMDLIST_DENY, 1,
            "'git push --forc' may match denylist entry 'git push --force': some of its arguments are only known when it runs");
    verdict("git config --global=x user.name", l, false, CMDLIST_DENY, 2,
            "'git config --global=x user.name' matches denylist entry 'git config --global'");
    verdict("npm publish --tag latest", l, false, CMDLIST_DENY, 3,
            "'npm publish --tag latest' matches denylist entry 'npm publish --tag=latest'");
    verdict("npm publish --tag=latest", l, false, CMDLIST_DENY, 3,
            "'npm publish --tag=latest' matches denylist entry 'npm publish --tag=latest'");
    verdict("npm publish --tag beta", l, true, CMDLIST_NONE, -1, "no command matches the denylist");
    verdict("git -C repo push x --force", l, false, CMDLIST_DENY, 1, "'git -C repo push x --force' matches denylist entry 'git push --force'");
}

static void test_allow(void)
{
    static const char *const allow[] = {"ls", "git status", "echo", "cat", "grep", "sudo"};
    lists_t l = ALLOW(allow);
    verdict("ls -la", l, true, CMDLIST_ALLOW, 0, "'ls -la' matches allowlist entry 'ls'");
    verdict("git status -s", l, true, CMDLIST_ALLOW, 1, "'git status -s' matches allowlist entry 'git status'");
    verdict("ls; echo hi | grep h", l, true, CMDLIST_ALLOW, -1, "all 3 commands match the allowlist");
    verdict("cat <<EOF\nhello\nEOF", l, true, CMDLIST_ALLOW, 3, "'cat' matches allowlist entry 'cat'");
    verdict("ls | python3 x.py", l, false, CMDLIST_ALLOW, -1, "'python3 x.py' matches no allowlist entry");
    verdict("git push status", l, false, CMDLIST_ALLOW, -1, "'git push status' matches no allowlist entry");
    verdict("git -C x status", l, false, CMDLIST_ALLOW, -1, "'git -C x status' matches no allowlist entry");
    verdict("git $SUB", l, false, CMDLIST_ALLOW, -1, "'git $SUB' matches no allowlist entry");
    verdict("echo $(rm x)", l, false, CMDLIST_ALLOW, -1, "'rm x' matches no allowlist entry");
    verdict("sudo rm x", l, false, CMDLIST_ALLOW, -1, "'rm x' matches no allowlist entry");
    verdict("sudo ls", l, true, CMDLIST_ALLOW, -1, "all 2 commands match the allowlist");
    verdict("sh -c ls", l, false, CMDLIST_ALLOW, -1, "'sh -c ls' matches no allowlist entry");
    verdict("$CMD x", l, false, CMDLIST_ALLOW, -1,
            "the command word of '$CMD x' is only known when it runs; with an allowlist every command must be known");
    verdict("eval ls", l, false, CMDLIST_ALLOW, -1, "'eval ls' runs a string as shell code; with an allowlist every command must be known");
    verdict("source ./env.sh", l, false, CMDLIST_ALLOW, -1,
            "'source ./env.sh' runs the commands in a file; with an allowlist every command must be known");
    verdict("echo ${x@P}", l, false, CMDLIST_ALLOW, -1,
            "'${x@P}' expands a prompt string, which runs the substitutions in it; with an allowlist every command must be known");
    verdict("ls \"$DIR\" $X *.c", l, true, CMDLIST_ALLOW, 0, "'ls \"$DIR\" $X *.c' matches allowlist entry 'ls'");
    verdict("X=1; Y=$(ls)", l, true, CMDLIST_ALLOW, 0, "'ls' matches allowlist entry 'ls'");
    verdict("x=1", l, true, CMDLIST_NONE, -1, "the command runs no program");
    verdict("ls 'x", l, false, CMDLIST_NONE, -1, "unterminated single quote at offset 3");
    verdict("l* x", l, false, CMDLIST_ALLOW, -1,
            "the command word of 'l* x' is only known when it runs; with an allowlist every command must be known");
}

static void test_both_and_none(void)
{
    static const char *const deny[] = {"rm -rf"}, *const allow[] = {"rm", "ls"};
    lists_t both = {deny, 1, allow, 2};
    verdict("rm x", both, true, CMDLIST_ALLOW, 0, "'rm x' matches allowlist entry 'rm'");
    verdict("rm -rf x", both, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("python3; rm -rf x", both, false, CMDLIST_DENY, 0, "'rm -rf x' matches denylist entry 'rm -rf'");
    verdict("$X", both, false, CMDLIST_DENY, -1,
            "the command word of '$X' is only known when it runs; it cannot be checked against the denylist");
    lists_t none = {NULL, 0, NULL, 0};
    verdict("rm -rf /", none, true, CMDLIST_NONE, -1, "no command lists are set");
    verdict("echo 'unterminated", none, true, CMDLIST_NONE, -1, "no command lists are set");
    verdict("$CMD", none, true, CMDLIST_NONE, -1, "no command lists are set");
    cmdlist_verdict_t v = cmdlist_check(NULL, 0, NULL, 0, NULL, 0);
    CHECK(v.allowed && v.command == NULL, "NULL command with no lists");
    cmdlist_verdict_free(&v);
    static const char *const bad[] = {"ls", "rm; ls"}, *const nul[] = {NULL};
    verdict("ls", DENY(bad), false, CMDLIST_DENY, 1,
            "denylist entry 1 ('rm; ls') is invalid: ';' separates commands at offset 2; an entry is one command: write one entry per command");
    verdict("ls", ALLOW(nul), false, CMDLIST_ALLOW, 0, "allowlist entry 0 ('(null)') is invalid: the entry is missing");
    v = cmdlist_check("rm -rf x", 8, RMRF, 1, NULL, 0);
    CHECK_STR(v.command, "rm -rf x", "the deciding command is re-quoted for display");
    cmdlist_verdict_free(&v);
    v = cmdlist_check("ls; rm -r -f 'a b'", 18, RMRF, 1, NULL, 0);
    CHECK_STR(v.command, "rm -r -f 'a b'", "the deciding command, quoted");
    cmdlist_verdict_free(&v);
}

static void test_entry_match(void)
{
    shell_parse_t p;
    shell_parse("git push -f origin $B", 21, &p);
    CHECK_INT(cmdlist_entry_match("git push --force", &p.cmds[0], false), 1, "entry match: deny yes");
    CHECK_INT(cmdlist_entry_match("git push --force", &p.cmds[0], true), 1, "entry match: allow yes");
    CHECK_INT(cmdlist_entry_match("git push --tags", &p.cmds[0], false), -1, "entry match: deny maybe");
    CHECK_INT(cmdlist_entry_match("git push --tags", &p.cmds[0], true), 0, "entry match: allow no");
    CHECK_INT(cmdlist_entry_match("git pull", &p.cmds[0], false), -1, "entry match: dynamic operand may be 'pull'");
    CHECK_INT(cmdlist_entry_match("gitk", &p.cmds[0], false), 0, "entry match: other command");
    CHECK_INT(cmdlist_entry_match("bad |", &p.cmds[0], false), 0, "entry match: invalid entry matches nothing");
    shell_parse_free(&p);
}

static void test_display(void)
{
    shell_parse_t p;
    shell_parse("'if' x; 'a=b' y; $'\\n' z; echo \"$x\n\"", 36, &p);
    char *d0 = shell_cmd_display(&p.cmds[0]), *d1 = shell_cmd_display(&p.cmds[1]),
         *d2 = shell_cmd_display(&p.cmds[2]), *d3 = shell_cmd_display(&p.cmds[3]);
    CHECK_STR(d0, "'if' x", "a command word that reads as a keyword stays quoted");
    CHECK_STR(d1, "'a=b' y", "a command word that reads as an assignment stays quoted");
    CHECK_STR(d2, "$'\\n' z", "control characters are escaped");
    CHECK_STR(d3, "echo \"$x\\x0a\"", "control bytes in dynamic words are shown as \\xHH");
    free(d0), free(d1), free(d2), free(d3);
    CHECK(shell_opaque_why(&p.cmds[0]) == NULL, "no why for a checkable command");
    shell_parse_free(&p);
    buf_t b = BUF_INIT;
    buf_adds(&b, "$X ");
    for (int i = 0; i < 100; i++) buf_adds(&b, "word ");
    cmdlist_verdict_t v = cmdlist_check(b.p, b.len, RMRF, 1, NULL, 0);
    CHECK(strlen(v.reason) < 220 && strstr(v.reason, "...' is only known"), "long commands are clipped in reasons");
    CHECK(strlen(v.command) > 500, "but not in the command field");
    cmdlist_verdict_free(&v);
    buf_free(&b);
}

int main(void)
{
    test_quoting();
    test_operators();
    test_compound();
    test_substitutions();
    test_redirections_heredocs();
    test_dynamic();
    test_wrappers();
    test_errors();
    test_nesting();
    test_quote();
    test_entries();
    test_deny_rm();
    test_deny_other();
    test_allow();
    test_both_and_none();
    test_entry_match();
    test_display();
    return tap_done();
}
