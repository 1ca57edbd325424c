/* tap.h — a minimal TAP producer for the C unit tests.
 *
 *   CHECK(cond, "name")            one test point
 *   CHECK_STR(got, want, "name")   string equality, shows both on failure
 *   CHECK_INT(got, want, "name")
 *   return tap_done();             from main: 0 when all passed
 */
#ifndef DRUN_TAP_H
#define DRUN_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_check(int ok, const char *name, const char *file, int line)
{
    tap_n++;
    printf("%sok %d - %s\n", ok ? "" : "not ", tap_n, name);
    if (!ok) {
        tap_failed++;
        printf("# at %s:%d\n", file, line);
    }
    return ok;
}

static inline void tap_show(const char *label, const char *s)
{
    printf("#   %s: ", label);
    if (!s) {
        printf("(null)\n");
        return;
    }
    printf("\"");
    for (; *s; s++) {
        if (*s == '\n') printf("\\n\n#         ");
        else putchar(*s);
    }
    printf("\"\n");
}

#define CHECK(cond, name) tap_check(!!(cond), (name), __FILE__, __LINE__)
#define CHECK_STR(got, want, name)                                                     \
    do {                                                                               \
        const char *g_ = (got), *w_ = (want);                                          \
        if (!tap_check(g_ && w_ && strcmp(g_, w_) == 0, (name), __FILE__, __LINE__)) { \
            tap_show("got ", g_);                                                      \
            tap_show("want", w_);                                                      \
        }                                                                              \
    } while (0)
#define CHECK_INT(got, want, name)                               \
    do {                                                         \
        long long g_ = (long long)(got), w_ = (long long)(want); \
        if (!tap_check(g_ == w_, (name), __FILE__, __LINE__))    \
            printf("#   got %lld, want %lld\n", g_, w_);         \
    } while (0)

static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#endif
