/* ppath.c — parsing a policy path entry (SPEC §3.3) and writing it back.
 *
 * The entry's base ("/", "~", "${WORKSPACE}", ...) is split off, its
 * components are checked ('..' refused, empty and '.' dropped), and globs
 * are accepted only where the caller allows them.
 */
#include "ppath.h"

#include <string.h>

#include "glob.h"

/* ---- parsing ------------------------------------------------------------------------ */

static bool has_prefix(const char *s, size_t len, const char *pre)
{
    size_t n = strlen(pre);
    return len >= n && memcmp(s, pre, n) == 0;
}

bool ppath_parse(const char *s, size_t len, bool allow_glob, arena_t *a, ppath_t *out,
                 const char **msg, size_t *bad_off)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            *msg = c == 0 ? "a path may not contain a NUL byte"
                          : "a path may not contain a control character (newline, tab, escape...)";
            *bad_off = i;
            return false;
        }
    }
    /* Linux resolves no path of PATH_MAX bytes or more (the terminator
     * counts), so no such entry can name anything (macOS stops at 1,024); refusing it here also
     * bounds the depth (at most PATH_MAX / 2 components) that every later
     * stage walks — a 100 KB path of 50,000 components made compile and lint
     * run for minutes with memory growing as the square of the depth. */
    if (len >= PPATH_MAX) {
        *msg = "path too long: Linux resolves no path of 4,096 bytes or more; name a shorter path (or a "
               "parent directory)";
        *bad_off = PPATH_MAX - 1;
        return false;
    }
    if (len == 0) {
        *msg = "empty path: write an absolute path, ~/..., or ${WORKSPACE}/...";
        *bad_off = 0;
        return false;
    }

    size_t rest = 0; /* where the part below the base starts */
    if (s[0] == '/') {
        out->base = PB_ROOT, rest = 1;
    } else if (s[0] == '~' && (len == 1 || s[1] == '/')) {
        out->base = PB_HOME, rest = 1;
    } else if (s[0] == '~') {
        *msg = "'~user' paths are not supported: write the absolute path";
        *bad_off = 0;
        return false;
    } else if (has_prefix(s, len, "${HOME}") && (len == 7 || s[7] == '/')) {
        out->base = PB_HOME, rest = 7;
    } else if (has_prefix(s, len, "${WORKSPACE}") && (len == 12 || s[12] == '/')) {
        out->base = PB_WORKSPACE, rest = 12;
    } else if (has_prefix(s, len, "${SCRATCH}") && (len == 10 || s[10] == '/')) {
        out->base = PB_SCRATCH, rest = 10;
    } else if (s[0] == '$') {
        *msg = "unknown variable: only ${HOME}, ${WORKSPACE} and ${SCRATCH} may start a path";
        *bad_off = 0;
        return false;
    } else if (has_prefix(s, len, "**/") || (len == 2 && memcmp(s, "**", 2) == 0)) {
        out->base = PB_ROOT, rest = 0, out->anywhere = true;
    } else {
        *msg = "relative path: write an absolute path, ~/..., ${WORKSPACE}/..., or **/NAME "
               "for a glob that matches anywhere";
        *bad_off = 0;
        return false;
    }

    /* Split into components: drop empty and "." ones, refuse "..". */
    buf_t b = BUF_INIT;
    if (out->anywhere) buf_adds(&b, "**");
    size_t i = rest;
    if (out->anywhere) i = 2;
    while (i < len) {
        while (i < len && s[i] == '/') i++;
        size_t st = i;
        while (i < len && s[i] != '/') i++;
        size_t n = i - st;
        if (n == 0 || (n == 1 && s[st] == '.')) continue;
        if (n == 2 && s[st] == '.' && s[st + 1] == '.') {
            buf_free(&b);
            *msg = "'..' is not allowed in a policy path: write the path it leads to";
            *bad_off = st;
            return false;
        }
        if (b.len) buf_addc(&b, '/');
        buf_add(&b, s + st, n);
    }
    const char *rel = buf_cstr(&b);
    out->glob = glob_has_wildcard(rel);
    if (out->glob && !allow_glob) {
        size_t off = 0;
        for (size_t k = 0; k < len; k++)
            if ((s[k] == '*' || s[k] == '?') && (k == 0 || s[k - 1] != '\\')) {
                off = k;
                break;
            }
        buf_free(&b);
        *msg = "globs ('*', '?') are accepted in deny_read and deny_write only; write a "
               "literal path here (use \\* for a literal star)";
        *bad_off = off;
        return false;
    }
    if (out->glob && (out->base == PB_WORKSPACE || out->base == PB_SCRATCH)) {
        buf_free(&b);
        /* SBPL cannot quote a runtime parameter into a regex, so a session-relative
         * glob could not mean the same thing on both targets: refuse it. */
        *msg = "a glob cannot start with ${WORKSPACE} or ${SCRATCH}: write **/PATTERN (it "
               "matches anywhere, the workspace included) or a literal path";
        *bad_off = 0;
        return false;
    }
    out->rel = out->glob ? arena_strdup(a, rel) : glob_unescape(rel, a);
    buf_free(&b);
    return true;
}

void ppath_format(const ppath_t *p, buf_t *out)
{
    switch (p->base) {
    case PB_ROOT:
        if (!p->anywhere) buf_addc(out, '/');
        buf_adds(out, p->rel);
        return;
    case PB_HOME: buf_adds(out, "~"); break;
    case PB_WORKSPACE: buf_adds(out, "${WORKSPACE}"); break;
    case PB_SCRATCH: buf_adds(out, "${SCRATCH}"); break;
    }
    if (*p->rel) {
        buf_addc(out, '/');
        buf_adds(out, p->rel);
    }
}
