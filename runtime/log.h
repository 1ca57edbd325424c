/* log.h — the runtime's one logger.
 *
 * Everything goes to stderr: under the stdio transport stdout belongs to the
 * protocol alone. One line per event ("drun-mcp: warn: ..."), written with a
 * single write(2) so lines from different threads never interleave.
 */
#ifndef DRUN_RT_LOG_H
#define DRUN_RT_LOG_H

typedef enum {
    RTLOG_ERROR = 0,
    RTLOG_WARN,
    RTLOG_INFO,
    RTLOG_DEBUG
} rtlog_level_t;

/* Sets the most verbose level printed (default RTLOG_WARN). Called once at
 * startup by main; the level is an atomic, so reading it needs no lock. */
void log_set_level(rtlog_level_t l);

/* Parses "error", "warn", "info" or "debug"; false for anything else. */
int log_parse_level(const char *s, rtlog_level_t *out);

/* Prints one line at level l when l is enabled. */
void log_write(rtlog_level_t l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_write(RTLOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_write(RTLOG_WARN, __VA_ARGS__)
#define log_info(...) log_write(RTLOG_INFO, __VA_ARGS__)
#define log_debug(...) log_write(RTLOG_DEBUG, __VA_ARGS__)

#endif
