/* cli.h — the drun-policy command line: one option table, one command table.
 *
 * The parser fills a cli_args_t through the option table (no global option
 * state); --help, the man page and the shell completions are generated from
 * the same tables, so they cannot drift from what the parser accepts.
 */
#ifndef DRUN_CLI_H
#define DRUN_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses of SPEC §2. */
enum {
    EXIT_OK = 0,
    EXIT_REJECTED = 1, /* policy rejected, lint errors, drift, invalid TOML, diff found changes */
    EXIT_USAGE = 2,    /* usage or I/O error */
    EXIT_SETUP = 125,  /* run: the sandbox could not be set up */
};

typedef struct cli_args {
    const char *cmd;            /* the subcommand */
    const char *pos[2];         /* positional arguments (CONFIG; OLD NEW for diff) */
    int npos;                   /* how many of pos are set */
    char **rest;                /* after "--" (run): the command and its arguments */
    int nrest;
    const char *out_dir;        /* compile -o */
    const char *target;         /* linux | macos | all */
    const char *facts[2];       /* --facts FILE (given once per target) */
    const char *format;         /* lint: text | json | sarif */
    const char *json_out;       /* lint --json-output FILE */
    const char *sarif_out;      /* lint --sarif-output FILE */
    const char *workspace;      /* explain/run --workspace */
    const char *q_read;         /* explain --read */
    const char *q_write;        /* explain --write */
    const char *q_exec;         /* explain --exec */
    const char *q_fetch;        /* explain --fetch */
    const char *q_file;         /* explain --queries FILE */
    const char *golden;         /* check --golden DIR */
    const char *toml;           /* toml-decode --toml 1.0 | 1.1 */
    const char *shell;          /* completion SHELL */
    bool json;                  /* --json */
    bool plain;                 /* toml-decode --plain */
    bool batch;                 /* toml-decode --batch */
    bool strict;                /* lint --strict */
    bool list_rules;            /* lint --rules */
    bool allow_broad_workspace; /* run --allow-broad-workspace */
    const char *sandbox_user;   /* run --sandbox-user USER|UID[:GID] */
} cli_args_t;

typedef enum {
    OPT_FLAG,
    OPT_VALUE
} cli_opt_kind;

typedef struct cli_opt {
    const char *name;    /* long name without dashes: "target" */
    char short_name;     /* 'o', or 0 */
    cli_opt_kind kind;   /* flag or option with a value */
    const char *metavar; /* "DIR", "FILE" (values only) */
    const char *choices; /* "linux|macos|all", or NULL for free text */
    size_t offset;       /* where in cli_args_t the value goes */
    const char *help;    /* one line */
} cli_opt_t;

typedef struct cli_cmd {
    const char *name;     /* "compile" */
    const char *synopsis; /* "CONFIG [-o DIR] [--target linux|macos|all] [--facts FILE]" */
    const char *summary;  /* one line for the command list */
    const char *details;  /* a paragraph for --help (may be NULL) */
    const char *example;  /* one example command line */
    const char *opts;     /* space-separated long names of the options it accepts */
    int min_pos, max_pos; /* positional argument count */
    bool takes_rest;      /* accepts "-- CMD ARGS..." */
    int (*run)(const cli_args_t *a);
} cli_cmd_t;

extern const cli_opt_t cli_options[];
extern const cli_cmd_t cli_commands[];

/* Parses argv and runs the command; returns the exit status. */
int cli_main(int argc, char **argv);

/* True when command c accepts the long option opt. */
bool cli_cmd_takes(const cli_cmd_t *c, const char *opt);

/* Prints the help of one command (or the overview for NULL) to stdout. */
void cli_help(const cli_cmd_t *cmd);

/* Loads CONFIG (or the default chain) for command cmd; on failure prints the
 * diagnostics and sets *rc to EXIT_REJECTED (config errors) or EXIT_USAGE. */
struct policy;
struct policy *cli_load_policy(const char *cmd, const char *path, int *rc);

/* The commands, one per file (cmd_*.c). */
int cmd_compile(const cli_args_t *a);
int cmd_run(const cli_args_t *a);
int cmd_facts(const cli_args_t *a);
int cmd_toml_decode(const cli_args_t *a);
int cmd_completion(const cli_args_t *a);
int cmd_schema(const cli_args_t *a);
int cmd_lint(const cli_args_t *a);
int cmd_explain(const cli_args_t *a);
int cmd_diff(const cli_args_t *a);
int cmd_check_golden(const cli_args_t *a); /* `drun-policy check` */

#endif
