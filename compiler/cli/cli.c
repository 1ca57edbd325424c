/* cli.c — option and command tables, the argument parser, --help.
 *
 * Adding an option: one row in cli_options (and a field in cli_args_t), then
 * its name in the opts string of each command that takes it. Help text and
 * completions come from these rows.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "policy.h"
#include "suggest.h"

#define OFF(f) offsetof(cli_args_t, f)

const cli_opt_t cli_options[] = {
    {"output", 'o', OPT_VALUE, "DIR", NULL, OFF(out_dir), "write the artifacts (or facts files) into DIR (created if missing)"},
    {"target", 0, OPT_VALUE, "TARGET", "linux|macos|all", OFF(target), "which targets: compile builds (default: all), facts prints (default: linux)"},
    {"facts", 0, OPT_VALUE, "FILE", NULL, OFF(facts), "host facts from FILE instead of probing (once per target)"},
    {"format", 0, OPT_VALUE, "FORMAT", "text|json|sarif", OFF(format), "output format (default: text)"},
    {"json-output", 0, OPT_VALUE, "FILE", NULL, OFF(json_out), "also write the JSON report to FILE"},
    {"sarif-output", 0, OPT_VALUE, "FILE", NULL, OFF(sarif_out), "also write the SARIF report to FILE"},
    {"strict", 0, OPT_FLAG, NULL, NULL, OFF(strict), "treat warnings as errors for the exit status"},
    {"workspace", 0, OPT_VALUE, "DIR", NULL, OFF(workspace), "the session workspace (default: the current directory)"},
    {"allow-broad-workspace", 0, OPT_FLAG, NULL, NULL, OFF(allow_broad_workspace),
     "let the workspace be /, $HOME, or an ancestor of $HOME or of the state dir"},
    {"sandbox-user", 0, OPT_VALUE, "USER", NULL, OFF(sandbox_user),
     "as root: who the sandbox runs as, USER, UID or UID:GID (default: drun-sandbox, else nobody)"},
    {"read", 0, OPT_VALUE, "PATH", NULL, OFF(q_read), "may the sandbox read PATH?"},
    {"write", 0, OPT_VALUE, "PATH", NULL, OFF(q_write), "may the sandbox write PATH?"},
    {"exec", 0, OPT_VALUE, "CMD", NULL, OFF(q_exec), "would session_bash run the shell command CMD?"},
    {"fetch", 0, OPT_VALUE, "URL", NULL, OFF(q_fetch), "may session_fetch reach URL?"},
    {"queries", 0, OPT_VALUE, "FILE", NULL, OFF(q_file),
     "answer every question in FILE, one a line: read PATH, write PATH, exec CMD, fetch URL ('-': stdin)"},
    {"json", 0, OPT_FLAG, NULL, NULL, OFF(json), "print one JSON object instead of text"},
    {"golden", 0, OPT_VALUE, "DIR", NULL, OFF(golden), "the committed artifacts to compare against"},
    {"toml", 0, OPT_VALUE, "VERSION", "1.0|1.1", OFF(toml), "TOML version to accept (default: 1.1)"},
    {"plain", 0, OPT_FLAG, NULL, NULL, OFF(plain), "ordinary JSON instead of toml-test's tagged form"},
    {"batch", 0, OPT_FLAG, NULL, NULL, OFF(batch), "decode a stream of length-prefixed documents, one framed answer each"},
    {"rules", 0, OPT_FLAG, NULL, NULL, OFF(list_rules), "list every rule ID with its severity and summary, and exit"},
    {NULL, 0, 0, NULL, NULL, 0, NULL},
};

const cli_cmd_t cli_commands[] = {
    {"compile", "[CONFIG] [-o DIR] [--target linux|macos|all] [--facts FILE]... [--json]",
     "compile a policy into a SBPL profile, a bwrap vector, a seccomp filter and a manifest",
     "Writes policy.sb (macOS), bwrap.args, seccomp.bpf and seccomp.txt (Linux) and policy.json "
     "into DIR, each through a temporary file renamed into place. Without -o the artifacts are "
     "printed; --json prints what was written instead (each file's path, size and sha256). A config "
     "with any error writes nothing and exits 1.",
     "drun-policy compile config.toml -o out/ --facts golden/facts-linux.json",
     "output target facts json", 0, 1, false, cmd_compile},
    {"run", "[CONFIG] [--workspace DIR] [--allow-broad-workspace] -- CMD [ARG...]",
     "run a command in the sandbox the policy describes (Linux, bubblewrap)",
     "The workspace (default: the current directory) is writable; a fresh scratch dir is HOME "
     "and TMPDIR. A workspace that is /, $HOME, or an ancestor of $HOME or of the state dir "
     "(after resolving symlinks) is refused with exit 2, unless --allow-broad-workspace: it "
     "would make the user's files writable. Exit status: the command's, 125 when the sandbox "
     "could not be set up, 126/127 as a shell does. A rejected config never runs the command.",
     "drun-policy run config.toml -- make test",
     "workspace allow-broad-workspace sandbox-user", 0, 1, true, cmd_run},
    {"facts", "[CONFIG] [--target linux|macos|all] [-o DIR]",
     "print the host facts the compiler uses, as JSON (the input of --facts)",
     "Facts are what the pure compile needs to know about a machine: home, $PATH, the system "
     "read set, merged-/usr links, bwrap's version, and the realpath of every path the policy "
     "(CONFIG, or the default) names. One JSON object per target (default: linux); --target all "
     "prints each under a '==> facts-TARGET.json <==' header. -o DIR writes DIR/facts-TARGET.json.",
     "drun-policy facts --target all -o golden/",
     "target output", 0, 1, false, cmd_facts},
    {"toml-decode", "[--toml 1.0|1.1] [--plain] [--batch]",
     "decode TOML on stdin into toml-test tagged JSON (or plain JSON) on stdout",
     "Reads one TOML document from standard input. A valid document is printed as the "
     "tagged JSON of the toml-test suite, exit 0; an invalid one gets a located error on "
     "stderr and exit 1. --plain prints ordinary JSON: numbers as numbers (nan and the "
     "infinities as strings), dates and times as RFC 3339 strings. --batch decodes many documents "
     "in one process (a test suite's cases): each record on stdin is its length in decimal, a "
     "newline and that many bytes; each is answered on stdout with 'STATUS OUTLEN ERRLEN', a "
     "newline, then the document's own stdout and stderr, exactly what the single command gives.",
     "drun-policy toml-decode --plain < config.toml | jq .",
     "toml plain batch", 0, 0, false, cmd_toml_decode},
    {"lint", "[CONFIG] [--format text|json|sarif] [--json-output FILE] [--sarif-output FILE] [--strict] [--facts FILE]...",
     "report problems in a policy, each with a rule ID, a severity and file:line:col",
     "Config errors (the compiler rejects the file), then warnings and notes about what the policy "
     "means on each target. Silence one finding with a comment '# drun-policy: allow RULE-ID' on its "
     "line or the line above. Exit 1 with errors, or with warnings under --strict. --format sarif "
     "writes SARIF 2.1.0 for code scanning. --sarif-output and --json-output write that report to a "
     "file as well, in the same run (SARIF for code scanning, text for the log). Rules: "
     "docs/lint-rules.md, or --rules.",
     "drun-policy lint config.toml --format sarif > lint.sarif",
     "format json-output sarif-output strict facts rules", 0, 1, false, cmd_lint},
    {"explain", "[CONFIG] [--workspace DIR] [--read PATH] [--write PATH] [--exec CMD] [--fetch URL] "
                "[--queries FILE] [--json] [--facts FILE]...",
     "say what a policy allows in plain words, or answer a question with the rules behind it",
     "With no question: what is writable, readable, hidden and protected; the network, commands, "
     "limits and environment. With a question: the decision, the grant and caps that made it "
     "(file:line), and the artifact line that enforces it on each target. A PATH is absolute, ~/..., "
     "${WORKSPACE}/... or relative to the workspace. A deny is an answer: exit 0.",
     "drun-policy explain config.toml --write ~/.bashrc",
     "workspace read write exec fetch queries json facts", 0, 1, false, cmd_explain},
    {"diff", "OLD NEW [--json] [--facts FILE]...",
     "say what access a policy change grants and revokes, then the artifact diff",
     "Compares the two policies' meaning on both targets: each path newly granted or revoked, each "
     "domain, command-list entry, limit, environment variable and protection changed; then the unified "
     "diff of policy.sb and bwrap.args. Exit 0 when nothing changed, 1 when something did.",
     "drun-policy diff old/config.toml config.toml",
     "json facts", 2, 2, false, cmd_diff},
    {"check", "[CONFIG] --golden DIR [--json]",
     "recompile with the facts recorded in DIR and diff against the artifacts in DIR",
     "What CI runs on every policy change: the committed artifacts must be what this compiler makes "
     "of the committed config. Prints a unified diff of every drifted artifact; exit 1 on drift or a "
     "missing artifact, 0 when identical. --json: one object with each artifact's status, hashes and diff.",
     "drun-policy check config.toml --golden artifacts/",
     "golden json", 0, 1, false, cmd_check_golden},
    {"completion", "bash|zsh [drun-policy|drun-mcp]",
     "print a shell completion script generated from these tables",
     "Load it with: source <(drun-policy completion bash). With drun-mcp: the completion of "
     "drun-mcp's options instead (source <(drun-policy completion bash drun-mcp)).",
     "drun-policy completion bash > /etc/bash_completion.d/drun-policy",
     "", 1, 2, false, cmd_completion},
    {"schema", "",
     "print the JSON Schema of the policy language, for TOML editors",
     "Generated from the compiler's key table: every key, its type, default and range, and "
     "additionalProperties false everywhere, so a typo is flagged while you type. The compiler "
     "remains the authority. How to point an editor at it: docs/editors.md.",
     "drun-policy schema > config.schema.json",
     "", 0, 0, false, cmd_schema},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, false, NULL},
};

static const cli_opt_t *find_opt(const char *name, size_t len, char short_name)
{
    for (const cli_opt_t *o = cli_options; o->name; o++) {
        if (short_name ? o->short_name == short_name
                       : strlen(o->name) == len && memcmp(o->name, name, len) == 0)
            return o;
    }
    return NULL;
}

bool cli_cmd_takes(const cli_cmd_t *c, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = c->opts; (p = strstr(p, opt)); p += n)
        if ((p == c->opts || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

static const cli_cmd_t *find_cmd(const char *name)
{
    for (const cli_cmd_t *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}

/* Help and usage lines are wrapped to this width (one screen: 24 x 100). */
#define HELP_WIDTH 100

/* Prints text starting at column col, breaking at spaces outside [...] so
 * that a synopsis group such as "[--target linux|macos|all]" stays whole;
 * continuation lines start with indent spaces. Ends with a newline. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        while (*p == ' ') p++;
        const char *w = p;
        int depth = 0;
        for (; *p && (*p != ' ' || depth > 0); p++) depth += *p == '[' ? 1 : (*p == ']' ? -1 : 0);
        int len = (int)(p - w);
        if (len == 0) break;
        if (!first && col + 1 + len > HELP_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fwrite(w, 1, (size_t)len, f);
        col += len;
        first = false;
    }
    fputc('\n', f);
}

/* "usage: drun-policy NAME SYNOPSIS", wrapped under the synopsis. */
static void print_usage(FILE *f, const cli_cmd_t *c)
{
    int col = fprintf(f, "usage: drun-policy %s ", c->name);
    wrap(f, c->synopsis, col, col);
}

static void print_opt(FILE *f, const cli_opt_t *o)
{
    buf_t b = BUF_INIT;
    if (o->short_name) buf_printf(&b, "-%c, ", o->short_name);
    buf_printf(&b, "--%s", o->name);
    if (o->kind == OPT_VALUE) buf_printf(&b, " %s", o->choices ? o->choices : o->metavar);
    int col = fprintf(f, "  %-28s ", buf_cstr(&b));
    wrap(f, o->help, col, 31);
    buf_free(&b);
}

void cli_help(const cli_cmd_t *c)
{
    if (!c) {
        printf("drun-policy %s: compile one config.toml into sandbox profiles, and review it\n\n"
               "usage: drun-policy COMMAND [ARGS...]\n"
               "       drun-policy --help | --version\n\ncommands:\n",
               DRUN_VERSION);
        for (const cli_cmd_t *k = cli_commands; k->name; k++) wrap(stdout, k->summary, printf("  %-12s ", k->name), 15);
        printf("\nWith no CONFIG: $DRUN_CONFIG, then ~/.drun/config.toml, then the built-in default.\n"
               "Exit status: 0 ok, 1 policy rejected or changed, 2 usage or I/O error.\n"
               "Run 'drun-policy COMMAND --help' for a command's options; man drun-policy for all.\n");
        return;
    }
    print_usage(stdout, c);
    printf("\n");
    printf("%s.\n", c->summary);
    if (c->details) {
        printf("\n");
        wrap(stdout, c->details, 0, 0);
    }
    printf("\noptions:\n");
    for (const cli_opt_t *o = cli_options; o->name; o++)
        if (cli_cmd_takes(c, o->name)) print_opt(stdout, o);
    printf("  %-28s %s\n", "-h, --help", "show this help");
    printf("\nexample:\n  %s\n", c->example);
}

/* A usage error: the message (with a suggestion when there is one), then the
 * command's usage line, so the fix is on screen. Exit status 2. */
static int usage_error(const cli_cmd_t *c, const char *fmt, const char *arg, const char *hint)
{
    fprintf(stderr, "drun-policy%s%s: ", c ? " " : "", c ? c->name : "");
    fprintf(stderr, fmt, arg);
    if (hint) fprintf(stderr, " (did you mean '%s'?)", hint);
    fputc('\n', stderr);
    if (c) {
        print_usage(stderr, c);
        fprintf(stderr, "Run 'drun-policy %s --help' for the options and an example.\n", c->name);
    } else {
        fprintf(stderr, "Run 'drun-policy --help' for the list of commands.\n");
    }
    return EXIT_USAGE;
}

/* The required positional words of c's synopsis (those outside [...] that
 * are not options), from the n-th on: "NEW" when diff got only OLD. */
static void missing_positionals(const cli_cmd_t *c, int n, char *out, size_t size)
{
    out[0] = '\0';
    int depth = 0, i = 0;
    size_t len = 0;
    for (const char *p = c->synopsis; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        const char *w = p;
        int d0 = depth;
        for (; *p && *p != ' '; p++) depth += *p == '[' ? 1 : (*p == ']' ? -1 : 0);
        if (d0 > 0 || *w == '[' || *w == '-') continue;
        if (i++ < n) continue;
        len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%.*s", len ? " " : "", (int)(p - w), w);
    }
}

/* The long names a command accepts, as "--name" strings for suggestions. */
static const char *opt_suggestion(const cli_cmd_t *c, const char *word)
{
    static char names[64][40];
    const char *cands[65];
    size_t n = 0;
    for (const cli_opt_t *o = cli_options; o->name && n < 63; o++) {
        if (!cli_cmd_takes(c, o->name)) continue;
        snprintf(names[n], sizeof names[n], "--%s", o->name);
        cands[n] = names[n];
        n++;
    }
    snprintf(names[n], sizeof names[n], "--help");
    cands[n] = names[n];
    cands[++n] = NULL;
    return suggest(word, cands);
}

static bool in_choices(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = choices; p; p = strchr(p, '|'), p = p ? p + 1 : NULL)
        if (strncmp(p, v, n) == 0 && (p[n] == '|' || p[n] == '\0')) return true;
    return false;
}

/* "--target must be one of linux|macos|all, not 'lnux' (did you mean 'linux'?)" */
static int bad_choice(const cli_cmd_t *c, const cli_opt_t *o, const char *val)
{
    char names[8][24];
    const char *cands[9];
    size_t n = 0;
    for (const char *p = o->choices; p && *p && n < 8; n++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        snprintf(names[n], sizeof names[n], "%.*s", (int)len, p);
        cands[n] = names[n];
        p = bar ? bar + 1 : NULL;
    }
    cands[n] = NULL;
    char fmt[96];
    snprintf(fmt, sizeof fmt, "--%s must be one of %s, not '%%s'", o->name, o->choices);
    return usage_error(c, fmt, val, suggest(val, cands));
}

policy_t *cli_load_policy(const char *cmd, const char *path, int *rc)
{
    diag_list_t d = {0};
    char *io = NULL;
    policy_t *p = policy_load(path, &d, &io);
    if (!p) {
        if (io) {
            fprintf(stderr, "drun-policy %s: %s\n", cmd, io);
            free(io);
            *rc = EXIT_USAGE;
        } else {
            buf_t b = BUF_INIT;
            diag_render_all(&b, &d, diag_want_color(stderr));
            size_t n = diag_count(&d, SEV_ERROR);
            buf_printf(&b, "%zu error%s: the policy was rejected; nothing was written or run\n", n, n == 1 ? "" : "s");
            fwrite(b.p, 1, b.len, stderr);
            buf_free(&b);
            *rc = EXIT_REJECTED;
        }
    }
    diag_list_free(&d);
    return p;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        cli_help(NULL);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2 && find_cmd(argv[2])) cli_help(find_cmd(argv[2]));
        else cli_help(NULL);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("drun-policy %s\n", DRUN_VERSION);
        return EXIT_OK;
    }
    const cli_cmd_t *c = find_cmd(name);
    if (!c) {
        const char *cands[64];
        size_t n = 0;
        for (const cli_cmd_t *k = cli_commands; k->name && n < 63; k++) cands[n++] = k->name;
        cands[n] = NULL;
        return usage_error(NULL, "unknown command '%s'", name, suggest(name, cands));
    }

    cli_args_t a = {0};
    a.cmd = c->name;
    for (int i = 2; i < argc; i++) {
        char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            if (!c->takes_rest) return usage_error(c, "'--' is not used by this command%s", "", NULL);
            a.rest = argv + i + 1;
            a.nrest = argc - i - 1;
            break;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_help(c);
            return EXIT_OK;
        }
        if (arg[0] == '-' && arg[1] != '\0') {
            const cli_opt_t *o;
            const char *val = NULL;
            if (arg[1] == '-') {
                const char *eq = strchr(arg + 2, '=');
                size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
                o = find_opt(arg + 2, len, 0);
                if (eq) val = eq + 1;
            } else {
                o = arg[2] == '\0' ? find_opt(NULL, 0, arg[1]) : NULL;
            }
            if (!o || !cli_cmd_takes(c, o->name))
                return usage_error(c, "unknown option '%s'", arg, opt_suggestion(c, arg));
            if (o->kind == OPT_FLAG) {
                if (val) return usage_error(c, "option '%s' takes no value", arg, NULL);
                *(bool *)((char *)&a + o->offset) = true;
                continue;
            }
            if (!val) {
                if (i + 1 >= argc) return usage_error(c, "option '%s' needs a value", arg, NULL);
                val = argv[++i];
            }
            if (o->choices && !in_choices(o->choices, val)) return bad_choice(c, o, val);
            const char **slot = (const char **)((char *)&a + o->offset);
            if (o->offset == offsetof(cli_args_t, facts) && a.facts[0]) slot = &a.facts[1];
            *slot = val;
            continue;
        }
        if (a.npos >= c->max_pos)
            return usage_error(c,
                               c->takes_rest ? "unexpected argument '%s': the command to run goes after '--'"
                                             : "unexpected argument '%s'",
                               arg, NULL);
        a.pos[a.npos++] = arg;
    }
    if (a.npos < c->min_pos) {
        char want[128];
        missing_positionals(c, a.npos, want, sizeof want);
        return usage_error(c, "missing argument %s", want, NULL);
    }
    if (c->takes_rest && a.nrest == 0)
        return usage_error(c, "missing the command to run after '--'%s", "", NULL);
    return c->run(&a);
}
