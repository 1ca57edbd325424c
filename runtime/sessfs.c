/* sessfs.c — where a host path lies in mount_allowlist (see sessfs.h). */
#include "sessfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sessfs_skips_free(sessfs_skips_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->v[i].path);
        free(v->v[i].reason);
    }
    vec_free(v);
}

/* path with "//", "/./" and a trailing "/" folded; NULL with *why when it is
 * not absolute, holds "..", or a control character. */
static char *lexical(const char *path, const char **why)
{
    if (path[0] != '/') {
        *why = "it is not an absolute path";
        return NULL;
    }
    if (strlen(path) >= PATH_MAX) {
        *why = "it is longer than PATH_MAX";
        return NULL;
    }
    buf_t b = BUF_INIT;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        const char *e = strchrnul(p, '/');
        size_t n = (size_t)(e - p);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
                *why = "it contains a control character";
                buf_free(&b);
                return NULL;
            }
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            /* refused, not resolved: what ".." means depends on symlinks */
            *why = "\"..\" components are not accepted";
            buf_free(&b);
            return NULL;
        }
        if (n && !(n == 1 && p[0] == '.')) {
            buf_addc(&b, '/');
            buf_add(&b, p, n);
        }
        p = e;
    }
    if (!b.len)
        buf_addc(&b, '/');
    return buf_detach(&b, NULL);
}

/* Is p the directory d or below it? Then the part below (no leading '/'). */
static const char *below(const char *p, const char *d)
{
    size_t n = strlen(d);
    if (n == 1 && d[0] == '/')
        return p + 1;
    if (strncmp(p, d, n))
        return NULL;
    if (p[n] == '\0')
        return p + n;
    return p[n] == '/' ? p + n + 1 : NULL;
}

static char *allow_words(char *const *allow, size_t n)
{
    buf_t b = BUF_INIT;
    for (size_t i = 0; i < n; i++)
        buf_printf(&b, "%s\"%s\"", i ? ", " : "", allow[i]);
    return buf_detach(&b, NULL);
}

bool sessfs_locate(const char *path, char *const *allow, size_t nallow, bool canonical,
                   int *rootfd, char **rel, char **root_path, char **err)
{
    const char *why = NULL;
    char *lex = lexical(path, &why);
    if (!lex) {
        *err = xasprintf("\"%s\" is refused: %s; give an absolute host path inside "
                         "mount_allowlist",
                         path, why);
        return false;
    }
    if (!nallow) {
        *err = xasprintf("\"%s\" is refused: mount_allowlist is empty, and an empty list "
                         "allows no host path (ask the operator to add the directory to "
                         "mount_allowlist in the config)",
                         path);
        free(lex);
        return false;
    }
    char *p = lex;
    if (canonical) {
        p = realpath(lex, NULL);
        if (!p) {
            *err = xasprintf("cannot resolve \"%s\": %s", path, strerror(errno));
            free(lex);
            return false;
        }
        free(lex);
    }
    const char *best_rel = NULL;
    char *best_root = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < nallow; i++) {
        const char *w = NULL;
        char *a = lexical(allow[i], &w);
        char *ra = a ? realpath(a, NULL) : NULL;
        /* The resolved entry always; as written too when the path is taken
         * as written (an export target): both name the same directory. */
        const char *cand[2] = {ra, canonical ? NULL : a};
        for (int k = 0; k < 2; k++) {
            const char *r = cand[k] ? below(p, cand[k]) : NULL;
            if (r && ra && strlen(cand[k]) >= best_len) {
                best_len = strlen(cand[k]);
                best_rel = r;
                free(best_root);
                best_root = xstrdup(ra);
            }
        }
        free(a);
        free(ra);
    }
    if (!best_root) {
        char *list = allow_words(allow, nallow);
        *err = xasprintf("\"%s\"%s%s%s is outside mount_allowlist (%s): only paths inside those "
                         "directories may be mounted or exported",
                         path,
                         canonical && strcmp(p, path) ? " (resolved: " : "",
                         canonical && strcmp(p, path) ? p : "",
                         canonical && strcmp(p, path) ? ")" : "", list);
        free(list);
        free(p);
        return false;
    }
    *rootfd = open(best_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*rootfd < 0) {
        *err = xasprintf("cannot open the allowlisted directory \"%s\": %s", best_root,
                         strerror(errno));
        free(best_root);
        free(p);
        return false;
    }
    *rel = xstrdup(best_rel);
    *root_path = best_root;
    free(p);
    return true;
}
