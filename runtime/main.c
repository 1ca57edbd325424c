/* main.c — drun-mcp: options, signals, the state dir, then one transport.
 *
 *   drun-mcp [--config FILE | --artifacts DIR] [--stdio | --listen ADDR:PORT]
 *            [--state-dir DIR] [--token-file FILE] [--max-message BYTES]
 *            [--limit NAME=VALUE]... [--log-level error|warn|info|debug]
 *
 * Options are parsed through one table into an args struct (no global
 * option state); --help is printed from the same table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drun_policy.h"
#include "log.h"
#include "mcp.h"
#include "transport.h"

#ifndef DRUN_VERSION
#define DRUN_VERSION "0.0.0"
#endif

enum {
    EXIT_OK = 0,
    EXIT_USAGE = 2
};

typedef struct args {
    const char *config;       /* --config FILE */
    const char *artifacts;    /* --artifacts DIR */
    const char *listen;       /* --listen ADDR:PORT (HTTP); NULL: stdio */
    const char *state_dir;    /* --state-dir DIR */
    const char *token_file;   /* --token-file FILE */
    const char *max_msg;      /* --max-message BYTES */
    const char *log_level;    /* --log-level LEVEL */
    const char *sandbox_user; /* --sandbox-user USER|UID[:GID] (as root) */
    const char *limits[16];   /* --limit NAME=VALUE, in order (repeatable) */
    size_t nlimits;
    bool stdio;               /* --stdio */
    bool help, version;
} args_t;

typedef struct opt {
    const char *name;    /* long name without dashes */
    const char *metavar; /* NULL for a flag */
    size_t off;          /* where in args_t */
    const char *help;
} opt_t;

#define OPT(field) offsetof(args_t, field)
static const opt_t options[] = {
    {"config", "FILE", OPT(config), "policy, reloaded on change (default: $DRUN_CONFIG, ~/.drun/config.toml)"},
    {"artifacts", "DIR", OPT(artifacts), "serve precompiled artifacts (drun-policy compile -o)"},
    {"stdio", NULL, OPT(stdio), "MCP over stdin/stdout (the default)"},
    {"listen", "ADDR:PORT", OPT(listen), "MCP Streamable HTTP at http://ADDR:PORT/mcp "
                                         "(port 0: any free port)"},
    {"state-dir", "DIR", OPT(state_dir), "where sessions live (default: $XDG_STATE_HOME/drun)"},
    {"sandbox-user", "USER", OPT(sandbox_user), "as root: who sandboxes run as (drun-sandbox, or nobody)"},
    {"token-file", "FILE", OPT(token_file), "HTTP: Bearer tokens, one a line, each a "
                                            "principal of its own"},
    {"max-message", "BYTES", OPT(max_msg), "largest message: stdio line or HTTP body "
                                           "(default 67108864)"},
    {"limit", "NAME=VALUE", OPT(limits), "an HTTP limit (repeatable; names, defaults: "
                                         "drun-mcp(1))"},
    {"log-level", "LEVEL", OPT(log_level), "error, warn (default), info or debug; to stderr"},
    {"help", NULL, OPT(help), "show this help"},
    {"version", NULL, OPT(version), "show the version"},
};
#define NOPTS (sizeof options / sizeof *options)

static void usage(FILE *f)
{
    fprintf(f, "usage: drun-mcp [--config FILE | --artifacts DIR] [--stdio | --listen ADDR:PORT]\n"
               "                [--state-dir DIR] [--token-file FILE] [--max-message BYTES]\n"
               "                [--log-level LEVEL] [--sandbox-user USER]\n\n"
               "An MCP server that hands AI agents sandboxed sessions under a drun policy.\n\n");
    for (size_t i = 0; i < NOPTS; i++) {
        char left[40];
        snprintf(left, sizeof left, "--%s%s%s", options[i].name, options[i].metavar ? " " : "",
                 options[i].metavar ? options[i].metavar : "");
        /* the help wrapped at 100 columns, continuation lines under the text */
        const char *h = options[i].help;
        int first = 1;
        while (*h) {
            size_t n = strlen(h);
            if (n > 72) {
                n = 72;
                while (n > 0 && h[n] != ' ') n--;
                if (n == 0) n = strlen(h);
            }
            fprintf(f, "  %-24s %.*s\n", first ? left : "", (int)n, h);
            first = 0;
            h += n;
            while (*h == ' ') h++;
        }
    }
    fprintf(f, "\nExit status: 0 after a clean shutdown (EOF on stdio, SIGINT, SIGTERM); 2 on a usage error\n"
               "or when the server cannot start. See drun-mcp(1) and docs/runtime.md.\n\n"
               "example:\n  drun-mcp --config ~/.drun/config.toml --listen 127.0.0.1:7273 --token-file ~/.drun/token\n");
}

static bool parse_args(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2)) {
            fprintf(stderr, "drun-mcp: unexpected argument '%s' (see --help)\n", arg);
            return false;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const opt_t *o = NULL;
        for (size_t k = 0; k < NOPTS; k++)
            if (strlen(options[k].name) == nlen && !strncmp(options[k].name, name, nlen))
                o = &options[k];
        if (!o) {
            fprintf(stderr, "drun-mcp: unknown option '%s' (see --help)\n", arg);
            return false;
        }
        if (!o->metavar) {
            if (eq) {
                fprintf(stderr, "drun-mcp: --%s takes no value\n", o->name);
                return false;
            }
            *(bool *)((char *)a + o->off) = true;
            continue;
        }
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val || !*val) {
            fprintf(stderr, "drun-mcp: --%s needs %s\n", o->name, o->metavar);
            return false;
        }
        if (o->off == OPT(limits)) {
            if (a->nlimits == sizeof a->limits / sizeof *a->limits) {
                fprintf(stderr, "drun-mcp: too many --limit options\n");
                return false;
            }
            a->limits[a->nlimits++] = val;
            continue;
        }
        *(const char **)((char *)a + o->off) = val;
    }
    if (a->config && a->artifacts) {
        fprintf(stderr, "drun-mcp: --config and --artifacts exclude each other\n");
        return false;
    }
    if (a->stdio && a->listen) {
        fprintf(stderr, "drun-mcp: --stdio and --listen exclude each other\n");
        return false;
    }
    if ((a->token_file || a->nlimits) && !a->listen) {
        fprintf(stderr, "drun-mcp: --%s applies to --listen only\n",
                a->token_file ? "token-file" : "limit");
        return false;
    }
    return true;
}

/* ---- signals: a self-pipe the transports poll ------------------------------------------- */

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    char c = (char)sig;
    ssize_t w = write(sig_pipe[1], &c, 1);
    (void)w;
    errno = saved;
}

static void on_sigpipe(int sig) { (void)sig; }

static bool install_signals(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return false;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A write to a client that is gone must fail with EPIPE, not kill the
     * server. A handler rather than SIG_IGN: handlers reset on exec, so
     * sandboxed commands still get the default SIGPIPE (`yes | head`). */
    sa.sa_handler = on_sigpipe;
    sigaction(SIGPIPE, &sa, NULL);
    return true;
}

/* ---- the state dir --------------------------------------------------------------------- */

/* The runner's own default (fsutil.h fsutil_state_path: /var/lib/drun for root),
 * so that both name one dir; NULL: not root and no HOME to put it in. */
static char *default_state_dir(void)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if ((xdg && xdg[0] == '/') || geteuid() == 0 || (home && home[0] == '/')) return fsutil_state_path("");
    return NULL;
}

/* Whoever may rename or replace a directory on the way to the state dir can
 * swap the sessions below it (their workspaces are mounted writable into
 * sandboxes). So, for every ancestor of the resolved path (OpenSSH's
 * safe_path rule): it belongs to root or to us; others may not write it,
 * unless it is sticky (/tmp, /dev/shm), where only an entry's owner can move
 * that entry, and then the entry below it must be ours or root's. The state
 * dir itself is checked when it is opened (sessions.c: ours, mode 0700).
 * Returns NULL when safe, else why not (caller frees). */
static char *unsafe_ancestor(const char *real)
{
    uid_t me = geteuid();
    char *p = xstrdup(real);
    char *why = NULL;
    struct stat below;
    if (lstat(p, &below) < 0) {
        why = xasprintf("%s", strerror(errno));
        goto out;
    }
    for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
        slash[slash == p] = '\0'; /* the parent; "/" keeps its slash */
        struct stat st;
        if (lstat(p, &st) < 0) {
            why = xasprintf("%s: %s", p, strerror(errno));
            break;
        }
        if (st.st_uid != 0 && st.st_uid != me) {
            why = xasprintf("%s belongs to uid %u", p, (unsigned)st.st_uid);
            break;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
            if (!(st.st_mode & S_ISVTX)) {
                why = xasprintf("%s is writable by %s", p, st.st_mode & S_IWOTH ? "everyone" : "its group");
                break;
            }
            if (below.st_uid != 0 && below.st_uid != me) {
                why = xasprintf("the entry below the shared directory %s belongs to uid %u", p,
                                (unsigned)below.st_uid);
                break;
            }
        }
        if (p[1] == '\0') break; /* "/" done */
        below = st;
    }
out:
    free(p);
    return why;
}

/* Creates dir (0700, parents too) and returns its resolved path. */
static char *prepare_state_dir(const char *dir)
{
    /* as root the sandbox user must search it; a failure shows at realpath */
    fsutil_mkdirs(dir, geteuid() == 0 ? 0711 : 0700);
    char real[PATH_MAX];
    if (!realpath(dir, real)) {
        fprintf(stderr, "drun-mcp: state dir %s: %s\n", dir, strerror(errno));
        return NULL;
    }
    char *why = unsafe_ancestor(real);
    if (why) {
        fprintf(stderr, "drun-mcp: state dir %s: %s; choose a directory only you (or root) can "
                        "change (default: ~/.local/state/drun)\n",
                real, why);
        free(why);
        return NULL;
    }
    return xstrdup(real);
}

typedef VEC(char *) tokens_t;

static void free_tokens(tokens_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    vec_free(t);
}

/* The bearer tokens of --token-file: one a line (blank lines and lines
 * starting with # skipped), each at least 16 characters. Token i is
 * principal i: its clients never see another principal's sessions. */
static bool read_tokens(const char *file, tokens_t *out)
{
    FILE *f = fopen(file, "re");
    if (!f) {
        fprintf(stderr, "drun-mcp: --token-file %s: %s\n", file, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        log_warn("token file %s is readable by other users: chmod 600 it", file);
    char line[4096];
    bool ok = true;
    for (unsigned n = 1; ok && fgets(line, sizeof line, f); n++) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        if (strlen(line) < 16) {
            fprintf(stderr, "drun-mcp: --token-file %s:%u: a token must have at least 16 "
                            "characters\n",
                    file, n);
            ok = false;
        } else {
            vec_push(out, xstrdup(line));
        }
    }
    fclose(f);
    if (ok && !out->n) {
        fprintf(stderr, "drun-mcp: --token-file %s: no token in it (one a line, at least 16 "
                        "characters)\n",
                file);
        ok = false;
    }
    return ok;
}

/* One --limit NAME=VALUE into h; false (with a message) when unknown or out of range. */
static bool set_limit(http_opts_t *h, const char *spec)
{
    static const struct {
        const char *name;
        size_t off;
        unsigned long long min, max;
        bool bytes; /* size_t, else unsigned */
    } lim[] = {
        {"request-timeout", offsetof(http_opts_t, request_timeout), 1, 3600, false},
        {"max-connections", offsetof(http_opts_t, max_conns), 2, 4096, false},
        {"max-connections-per-peer", offsetof(http_opts_t, max_conns_per_peer), 1, 4095, false},
        {"max-clients", offsetof(http_opts_t, max_clients), 1, 65536, false},
        {"client-idle", offsetof(http_opts_t, client_idle), 1, 7 * 86400, false},
        {"max-body-total", offsetof(http_opts_t, max_body_total), 1024, 1ull << 40, true},
    };
    const char *eq = strchr(spec, '=');
    for (size_t i = 0; eq && i < sizeof lim / sizeof *lim; i++) {
        size_t n = (size_t)(eq - spec);
        if (strlen(lim[i].name) != n || strncmp(spec, lim[i].name, n))
            continue;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(eq + 1, &end, 10);
        if (!eq[1] || *end || errno || eq[1] == '-' || v < lim[i].min || v > lim[i].max) {
            fprintf(stderr, "drun-mcp: --limit %s takes a whole number from %llu to %llu\n",
                    lim[i].name, lim[i].min, lim[i].max);
            return false;
        }
        if (lim[i].bytes)
            *(size_t *)((char *)h + lim[i].off) = (size_t)v;
        else
            *(unsigned *)((char *)h + lim[i].off) = (unsigned)v;
        return true;
    }
    fprintf(stderr, "drun-mcp: --limit %s: expected NAME=VALUE with NAME one of request-timeout, "
                    "max-connections, max-connections-per-peer, max-clients, client-idle, "
                    "max-body-total\n",
            spec);
    return false;
}

/* The HTTP options: defaults (transport.h), then each --limit. */
static bool http_options(const args_t *a, size_t max_msg, http_opts_t *h)
{
    *h = (http_opts_t){
        .listen = a->listen,
        .max_body = max_msg,
        .max_body_total = 2 * max_msg,
        .request_timeout = HTTP_REQUEST_TIMEOUT,
        .max_conns = HTTP_MAX_CONNS,
        .max_conns_per_peer = HTTP_MAX_CONNS_PER_PEER,
        .max_clients = HTTP_MAX_CLIENTS,
        .client_idle = HTTP_CLIENT_IDLE,
    };
    for (size_t i = 0; i < a->nlimits; i++)
        if (!set_limit(h, a->limits[i]))
            return false;
    if (h->max_conns_per_peer >= h->max_conns) {
        /* One peer must never be able to take every slot. */
        fprintf(stderr, "drun-mcp: --limit max-connections-per-peer (%u) must be below "
                        "max-connections (%u)\n",
                h->max_conns_per_peer, h->max_conns);
        return false;
    }
    if (h->max_body_total < h->max_body) {
        fprintf(stderr, "drun-mcp: --limit max-body-total (%zu) must be at least --max-message "
                        "(%zu)\n",
                h->max_body_total, h->max_body);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    sandbox_helper_main(argc, argv);    /* the access-time layer's daemon (sandbox.h): never returns */
    int relay = relay_main(argc, argv); /* inside a sandbox: its proxy relay (proxy.h) */
    if (relay >= 0) _exit(relay);       /* nothing to flush; no sanitizer exit check in place of the command's status */
    /* RSS of a long-lived server with one thread per HTTP connection: glibc
     * gives each thread an arena (up to 8 per core) and, once a 2 MiB read
     * buffer has been freed, raises its mmap threshold so that such buffers
     * and the zlib state of every checkpoint write come from the arenas,
     * where freed memory stays pinned below long-lived blocks. The heap in
     * use is flat (massif), yet RSS grew ~9 MB over 2,000 calls from 8
     * clients and ~14 MB over 8,000. Two arenas and a fixed 128 KiB mmap
     * threshold (large buffers go back to the kernel on free): +3 MB and
     * +6.3 MB (tests/mcp/soak.mjs, 8 concurrent clients). */
    mallopt(M_ARENA_MAX, 2);
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    /* jansson allocates through xmalloc too: one allocation-failure policy
     * (buf.h), so no JSON builder needs a NULL check. */
    json_set_alloc_funcs(xmalloc, free);
    args_t a;
    if (!parse_args(argc, argv, &a)) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (a.help) {
        usage(stdout);
        return EXIT_OK;
    }
    if (a.version) {
        printf("drun-mcp %s\n", DRUN_VERSION);
        return EXIT_OK;
    }
    if (a.log_level) {
        rtlog_level_t l;
        if (!log_parse_level(a.log_level, &l)) {
            fprintf(stderr, "drun-mcp: --log-level must be error, warn, info or debug\n");
            return EXIT_USAGE;
        }
        log_set_level(l);
    }
    char *uerr = NULL;
    if (!sandbox_use_user(a.sandbox_user, &uerr)) {
        fprintf(stderr, "drun-mcp: %s\n", uerr);
        free(uerr);
        return EXIT_USAGE;
    }
    size_t max_msg = STDIO_MAX_LINE;
    if (a.max_msg) {
        char *end;
        unsigned long long v = strtoull(a.max_msg, &end, 10);
        if (*end || v < 1024 || v > (1ull << 31)) {
            fprintf(stderr, "drun-mcp: --max-message must be a byte count from 1024 to 2^31\n");
            return EXIT_USAGE;
        }
        max_msg = (size_t)v;
    }
    tokens_t tokens = {0};
    http_opts_t h;
    if (a.listen && !http_options(&a, max_msg, &h))
        return EXIT_USAGE;
    if (a.token_file && !read_tokens(a.token_file, &tokens)) {
        free_tokens(&tokens);
        return EXIT_USAGE;
    }
    char *dflt = a.state_dir ? NULL : default_state_dir();
    if (!a.state_dir && !dflt) {
        fprintf(stderr, "drun-mcp: no HOME to put the state dir in: pass --state-dir DIR\n");
        return EXIT_USAGE;
    }
    char *state = prepare_state_dir(a.state_dir ? a.state_dir : dflt);
    free(dflt);
    if (!state || !install_signals()) {
        free_tokens(&tokens);
        return EXIT_USAGE;
    }
    /* A sandbox's pid 1 whose bwrap ends first comes back to us, not to the
     * init above, and is reaped (runtime/reaper.h). */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        log_warn("cannot become a child subreaper: %s", strerror(errno));

    /* the runtime's own files stay dark in every sandbox, whatever the grants (SPEC §13) */
    lattice_owned_add_defaults(a.config);
    lattice_owned_add(state, "drun-mcp's state dir (--state-dir)");
    if (a.artifacts) lattice_owned_add(a.artifacts, "the artifacts drun-mcp serves (--artifacts)");
    if (a.token_file) lattice_owned_add(a.token_file, "drun-mcp's bearer tokens (--token-file)");
    mcp_opts_t o = {
        .config = a.config,
        .artifacts = a.artifacts,
        .state_dir = state,
        .transport = a.listen ? "http" : "stdio",
    };
    char *err = NULL;
    mcp_server_t *srv = mcp_server_new(&o, &err);
    if (!srv) {
        fprintf(stderr, "drun-mcp: %s\n", err);
        free(err);
        free(state);
        free_tokens(&tokens);
        return EXIT_USAGE;
    }
    bool healthy;
    char *d = mcp_server_describe(srv, &healthy);
    log_write(healthy ? RTLOG_INFO : RTLOG_WARN, "%s", d);
    free(d);

    int rc;
    if (a.listen) {
        h.tokens = (const char *const *)tokens.v;
        h.ntokens = tokens.n;
        rc = transport_http_run(srv, &h, sig_pipe[0]);
    } else {
        rc = transport_stdio_run(srv, STDIN_FILENO, STDOUT_FILENO, sig_pipe[0], max_msg);
    }
    mcp_server_free(srv);
    log_info("stopped");
    free(state);
    free_tokens(&tokens);
    return rc == 2 ? EXIT_USAGE : EXIT_OK;
}
