/* shell_quote.c — words back to text: the quoter that is the exact inverse of
 * the word reader, the display of a simple command, control bytes made visible,
 * and the sentence saying why a command is opaque.
 */
#include "shell_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ==== quoting and display =================================================================================== */

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t min, cp;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xE0) == 0xC0) len = 2, min = 0x80, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0) len = 3, min = 0x800, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0) len = 4, min = 0x10000, cp = s[0] & 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

/* Control bytes and invalid UTF-8 as \xHH, everything else as is. */
void shell_sanitize(buf_t *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] >= 0x20 && u[i] != 0x7f ? utf8_seq(u + i, n - i) : 0;
        if (!k) {
            buf_printf(b, "\\x%02x", u[i]);
            i++;
        } else {
            buf_add(b, s + i, k);
            i += k;
        }
    }
}

static bool safe_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("_@%+=:,./-", c));
}

static void ansi_quote_into(buf_t *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    buf_adds(b, "$'");
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t k = c >= 0x80 ? utf8_seq(u + i, n - i) : 1;
        if (c == '\\' || c == '\'') buf_printf(b, "\\%c", c);
        else if (c == '\n') buf_adds(b, "\\n");
        else if (c == '\t') buf_adds(b, "\\t");
        else if (c < 0x20 || c == 0x7f || !k) buf_printf(b, "\\x%02x", c);
        else {
            buf_add(b, s + i, k);
            i += k;
            continue;
        }
        i++;
    }
    buf_addc(b, '\'');
}

/* force quotes even a plain word (a command word that reads as a keyword or an
 * assignment). */
static void quote_into(buf_t *b, const char *s, size_t n, bool force)
{
    const unsigned char *u = (const unsigned char *)s;
    bool plain = n > 0 && !force, ansi = false;
    for (size_t i = 0; i < n; i++) {
        if (u[i] < 0x20 || u[i] == 0x7f) {
            ansi = true;
        } else if (u[i] >= 0x80) {
            size_t k = utf8_seq(u + i, n - i);
            if (!k) ansi = true;
            else i += k - 1;
            plain = false;
        } else if (!safe_char(u[i])) {
            plain = false;
        }
    }
    if (ansi) {
        ansi_quote_into(b, s, n);
    } else if (plain) {
        buf_add(b, s, n);
    } else {
        buf_addc(b, '\'');
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '\'') buf_adds(b, "'\\''");
            else buf_addc(b, s[i]);
        }
        buf_addc(b, '\'');
    }
}

char *shell_quote(const char *s, size_t len)
{
    buf_t b = BUF_INIT;
    quote_into(&b, s ? s : "", s ? len : 0, false);
    return buf_detach(&b, NULL);
}

static bool looks_assign(const char *t)
{
    if (!is_name_start((unsigned char)t[0])) return false;
    while (is_name_char((unsigned char)*t)) t++;
    return *t == '=' || *t == '[' || (t[0] == '+' && t[1] == '=');
}

char *shell_cmd_display(const shell_cmd_t *c)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < c->nwords; i++) {
        const shell_word_t *w = &c->words[i];
        if (i) buf_addc(&b, ' ');
        if (w->dynamic || w->glob) shell_sanitize(&b, w->raw, w->rawlen);
        else quote_into(&b, w->text, w->len, i == 0 && (shell_reserved(w->text) || looks_assign(w->text)));
    }
    return buf_detach(&b, NULL);
}

char *shell_clip(char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) return s;
    n = max - 3;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    memcpy(s + n, "...", 4);
    return s;
}

char *shell_cmd_display_clipped(const shell_cmd_t *c) { return shell_clip(shell_cmd_display(c), SHELL_CLIP); }

char *shell_opaque_why(const shell_cmd_t *c)
{
    static const char *const why[] = {
        [SHELL_OPAQUE_WORD] = "the command word of '%s' is only known when it runs",
        [SHELL_OPAQUE_EVAL] = "'%s' runs a string as shell code",
        [SHELL_OPAQUE_SOURCE] = "'%s' runs the commands in a file",
        [SHELL_OPAQUE_STRING] = "the command string of '%s' is only known when it runs",
        [SHELL_OPAQUE_STDIN] = "'%s' reads its commands from standard input",
        [SHELL_OPAQUE_FOREIGN] = "'%s' runs code in a shell language not parsed here",
        [SHELL_OPAQUE_WRAPPED] = "the command run by '%s' is only known when it runs",
        [SHELL_OPAQUE_OPTION] = "'%s' uses an option that hides which command it runs",
        [SHELL_OPAQUE_FIND] = "'%s' has arguments only known when it runs, which could add -exec",
        [SHELL_OPAQUE_PROMPT] = "'%s' expands a prompt string, which runs the substitutions in it",
        [SHELL_OPAQUE_ALIAS] = "'%s' defines an alias, which turns text into commands",
        [SHELL_OPAQUE_SUBSCRIPT] = "'%s' evaluates an array subscript, which runs the substitutions in it",
    };
    if (c->opaque == SHELL_CHECKABLE || (size_t)c->opaque >= sizeof why / sizeof why[0]) return NULL;
    char *d = shell_cmd_display_clipped(c);
    char *s = xasprintf(why[c->opaque], d);
    free(d);
    return s;
}
