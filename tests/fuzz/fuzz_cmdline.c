/* fuzz_cmdline.c — libFuzzer harness for the command-list checker.
 *
 * The input is a command string (any bytes). Beyond "no crash, no leak": a
 * verdict with both lists empty allows, every verdict is well formed, a parse
 * error denies with CMDLIST_NONE, shell_quote reads back as the same word, and the
 * display of an all-static command reads back as the same words. The input is
 * also tried as a list entry.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmdlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define REQUIRE(c)                  \
    do {                            \
        if (!(c)) __builtin_trap(); \
    } while (0)

static const char *const deny[] = {"rm -rf", "git push --force", "curl", "npm publish --tag=latest", "sudo"};
static const char *const allow[] = {"ls", "git status", "echo", "sh", "env", "cat", "xargs"};

static void check_verdict(cmdlist_verdict_t *v, size_t ndeny, size_t nallow)
{
    REQUIRE(v->reason && *v->reason);
    REQUIRE(v->list == CMDLIST_NONE || v->list == CMDLIST_DENY || v->list == CMDLIST_ALLOW);
    if (v->list == CMDLIST_DENY) REQUIRE(ndeny && v->entry < (long)ndeny);
    if (v->list == CMDLIST_ALLOW) REQUIRE(nallow && v->entry < (long)nallow);
    REQUIRE(v->entry >= -1);
    if (v->list == CMDLIST_NONE) REQUIRE(v->entry == -1);
    cmdlist_verdict_free(v);
}

/* shell_quote is the inverse of the word reader. */
static void check_quote(const shell_word_t *w)
{
    char *q = shell_quote(w->text, w->len);
    size_t n = strlen(q);
    char *line = malloc(n + 3);
    memcpy(line, "x ", 2);
    memcpy(line + 2, q, n + 1);
    shell_parse_t p;
    REQUIRE(shell_parse(line, n + 2, &p));
    REQUIRE(p.ncmds == 1 && p.cmds[0].nwords == 2);
    REQUIRE(!p.cmds[0].words[1].dynamic && p.cmds[0].words[1].len == w->len);
    REQUIRE(memcmp(p.cmds[0].words[1].text, w->text, w->len) == 0);
    shell_parse_free(&p);
    free(line);
    free(q);
}

/* A display of static words reads back as the same command. */
static void check_display(const shell_cmd_t *c)
{
    for (size_t i = 0; i < c->nwords; i++)
        if (c->words[i].dynamic || c->words[i].glob) return;
    char *d = shell_cmd_display(c);
    shell_parse_t p;
    REQUIRE(shell_parse(d, strlen(d), &p));
    REQUIRE(p.ncmds >= 1 && p.cmds[0].nwords == c->nwords);
    for (size_t i = 0; i < c->nwords; i++) {
        REQUIRE(p.cmds[0].words[i].len == c->words[i].len);
        REQUIRE(memcmp(p.cmds[0].words[i].text, c->words[i].text, c->words[i].len) == 0);
    }
    shell_parse_free(&p);
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;

    cmdlist_verdict_t v = cmdlist_check(s, size, NULL, 0, NULL, 0);
    REQUIRE(v.allowed && v.list == CMDLIST_NONE && v.entry == -1 && v.command == NULL);
    cmdlist_verdict_free(&v);

    shell_parse_t p;
    bool ok = shell_parse(s, size, &p);
    REQUIRE(ok == (p.error == NULL));
    size_t words = 0;
    for (size_t i = 0; i < p.ncmds; i++) {
        const shell_cmd_t *c = &p.cmds[i];
        REQUIRE(c->nwords >= 1 && c->depth < SHELL_MAX_DEPTH);
        char *why = shell_opaque_why(c);
        REQUIRE((why != NULL) == (c->opaque != SHELL_CHECKABLE));
        free(why);
        for (size_t k = 0; k < c->nwords && words < 64; k++, words++)
            if (!c->words[k].dynamic) check_quote(&c->words[k]);
        if (ok && i < 16) check_display(c);
    }

    v = cmdlist_check(s, size, deny, N(deny), NULL, 0);
    if (!ok) REQUIRE(!v.allowed && v.list == CMDLIST_NONE && !strcmp(v.reason, p.error));
    check_verdict(&v, N(deny), 0);
    v = cmdlist_check(s, size, NULL, 0, allow, N(allow));
    if (!ok) REQUIRE(!v.allowed && v.list == CMDLIST_NONE);
    if (ok && p.ncmds == 0) REQUIRE(v.allowed);
    check_verdict(&v, 0, N(allow));
    v = cmdlist_check(s, size, deny, N(deny), allow, N(allow));
    check_verdict(&v, N(deny), N(allow));
    shell_parse_free(&p);

    /* The same bytes as an entry (up to the first NUL). */
    char *entry = malloc(size + 1);
    memcpy(entry, data, size);
    entry[size] = '\0';
    char *err = NULL;
    if (cmdlist_entry_valid(entry, &err)) {
        REQUIRE(err == NULL);
        const char *one[] = {entry};
        v = cmdlist_check("ls -la; git status", 18, one, 1, one, 1);
        check_verdict(&v, 1, 1);
    } else {
        REQUIRE(err && *err);
    }
    free(err);
    free(entry);
    return 0;
}
