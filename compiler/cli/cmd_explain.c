/* cmd_explain.c — `drun-policy explain [CONFIG] [--workspace DIR]
 * [--read PATH] [--write PATH] [--exec CMD] [--fetch URL] [--queries FILE]
 * [--json] [--facts FILE]...`: the policy in plain words, or answers to
 * questions (one JSON object for one question, an array for several; the
 * overview as one object with --json and no question).
 * A "deny" is an answer: exit 0. Config errors exit 1, usage and I/O 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"
#include "explain.h"
#include "fsutil.h"
#include "jsonw.h"
#include "lattice.h"

typedef struct query {
    explain_q_t q;
    const char *arg;
} query_t;

typedef VEC(query_t) queries_t;

/* Lines "read PATH", "write PATH", "exec CMD", "fetch URL"; blank lines and
 * '#' comments skipped. Strings point into text. */
static bool parse_queries(const char *file, char *text, queries_t *out, char **err)
{
    static const struct {
        const char *word;
        explain_q_t q;
    } kinds[] = {{"read", EQ_READ}, {"write", EQ_WRITE}, {"exec", EQ_EXEC}, {"fetch", EQ_FETCH}};
    unsigned ln = 0;
    for (char *line = text, *next; line && *line; line = next) {
        ln++;
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (!*line || *line == '#') continue;
        char *sp = strchr(line, ' ');
        size_t i = 0;
        for (; sp && i < 4; i++)
            if ((size_t)(sp - line) == strlen(kinds[i].word) && strncmp(line, kinds[i].word, (size_t)(sp - line)) == 0)
                break;
        if (!sp || i == 4 || !sp[1]) {
            *err = xasprintf("%s:%u: expected 'read PATH', 'write PATH', 'exec CMD' or 'fetch URL', one "
                             "question a line",
                             file, ln);
            return false;
        }
        query_t q = {kinds[i].q, sp + 1};
        vec_push(out, q);
    }
    return true;
}

static bool collect(const cli_args_t *a, queries_t *qs, buf_t *file, char **err)
{
    query_t one[] = {{EQ_READ, a->q_read}, {EQ_WRITE, a->q_write}, {EQ_EXEC, a->q_exec}, {EQ_FETCH, a->q_fetch}};
    for (size_t i = 0; i < 4; i++)
        if (one[i].arg) vec_push(qs, one[i]);
    if (!a->q_file) return true;
    if (!fsutil_read_file(strcmp(a->q_file, "-") == 0 ? "/dev/stdin" : a->q_file, file, err)) return false;
    if (file->len && memchr(file->p, '\0', file->len)) {
        *err = xasprintf("%s: a NUL byte: --queries takes a text file, one question a line", a->q_file);
        return false;
    }
    return !file->len || parse_queries(strcmp(a->q_file, "-") == 0 ? "<stdin>" : a->q_file, file->p, qs, err);
}

int cmd_explain(const cli_args_t *a)
{
    int rc = EXIT_OK;
    queries_t qs = {0};
    buf_t file = BUF_INIT, out = BUF_INIT;
    char *err = NULL;
    if (!collect(a, &qs, &file, &err)) {
        fprintf(stderr, "drun-policy explain: %s\n", err);
        free(err);
        vec_free(&qs);
        buf_free(&file);
        return EXIT_USAGE;
    }
    policy_t *p = cli_load_policy("explain", a->pos[0], &rc);
    /* probing this host: its runtime-owned paths are known (the state dir,
     * this config); with a facts file they would be another host's */
    if (p && !a->facts[0] && !a->facts[1]) lattice_owned_add_defaults(p->path);
    explain_opts_t o = {{a->facts[0], a->facts[1]}, {NULL, NULL}, a->workspace};
    explain_t *e = p ? explain_new(p, &o, &err) : NULL;
    if (p && !e) {
        fprintf(stderr, "drun-policy explain: %s\n", err);
        free(err);
        rc = EXIT_USAGE;
    }
    if (e) {
        jw_t j;
        if (a->json) jw_init(&j, &out, true);
        bool array = a->json && (qs.n > 1 || a->q_file);
        if (array) jw_arr(&j);
        if (!qs.n && !a->q_file) { /* no question: the overview */
            if (a->json) explain_overview_json(e, &j);
            else explain_overview(e, &out);
        }
        for (size_t i = 0; i < qs.n && rc == EXIT_OK; i++) {
            if (!a->json && i) buf_addc(&out, '\n');
            if (!explain_query(e, qs.v[i].q, qs.v[i].arg, &out, a->json ? &j : NULL, &err)) {
                fprintf(stderr, "drun-policy explain: %s\n", err);
                free(err);
                rc = EXIT_USAGE;
            }
        }
        if (array) jw_end(&j);
        if (a->json) buf_addc(&out, '\n');
        if (rc == EXIT_OK) fwrite(out.p ? out.p : "", 1, out.len, stdout);
    }
    buf_free(&out);
    buf_free(&file);
    vec_free(&qs);
    explain_free(e);
    policy_free(p);
    return rc;
}
