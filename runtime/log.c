/* log.c — one line per event on stderr, one write(2) per line. */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int log_level = RTLOG_WARN;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(rtlog_level_t l) { atomic_store(&log_level, (int)l); }

int log_parse_level(const char *s, rtlog_level_t *out)
{
    for (int i = 0; i <= RTLOG_DEBUG; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (rtlog_level_t)i;
            return 1;
        }
    return 0;
}

void log_write(rtlog_level_t l, const char *fmt, ...)
{
    if ((int)l > atomic_load(&log_level))
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "drun-mcp: %s: ", level_names[l]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* Best effort: a failed log write must never take the server down. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
