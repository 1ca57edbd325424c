/* fetch_probe.c — drives fetch_run from the command line for tests/suites/62-fetch,
 * so the fetch engine is tested on its own, against local servers only.
 *
 *   fetch_probe [--allow HOST]... [--private] [--max-bytes N] [--timeout MS]
 *               [--connect-timeout MS] [--redirects N] [--cancel-after BYTES]
 *               [--threads N] --out FILE URL
 *
 * Prints one line of key=value pairs (kind, status, bytes, ctype, final,
 * redirects, size = the file's size afterwards, error) and exits 0 on success,
 * 1 on a fetch failure, 2 on usage. --allow '*' allows every host. --threads
 * runs N fetches of URL at once (to FILE.0 ... FILE.N-1) and prints one line each.
 * With FETCH_PROBE_WHY set, a refused host gets the probe's own reason.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fetch.h"

typedef struct probe {
    const char *allow[32];
    int nallow;
    long long cancel_after; /* -1: never */
    int calls;              /* host_allowed calls */
} probe_t;

static bool allowed(void *ctx, const char *host, char **why)
{
    probe_t *p = ctx;
    __atomic_add_fetch(&p->calls, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < p->nallow; i++)
        if (strcmp(p->allow[i], "*") == 0 || strcmp(p->allow[i], host) == 0) return true;
    if (getenv("FETCH_PROBE_WHY")) *why = xasprintf("host %s is not one of the probe's %d", host, p->nallow);
    return false;
}

static bool progress(void *ctx, long long bytes)
{
    probe_t *p = ctx;
    return p->cancel_after < 0 || bytes < p->cancel_after;
}

typedef struct job {
    fetch_req_t req;
    const char *path;
    fetch_result_t res;
    bool ok;
} job_t;

static void *run(void *arg)
{
    job_t *j = arg;
    j->ok = fetch_run(&j->req, &j->res);
    return NULL;
}

static void print(const job_t *j)
{
    struct stat st;
    long long size = stat(j->path, &st) == 0 ? (long long)st.st_size : -1;
    printf("kind=%s status=%d bytes=%lld size=%lld redirects=%d ctype=%s final=%s error=%s\n",
           fetch_error_kind_name(j->res.error_kind), j->res.http_status, j->res.bytes, size,
           j->res.redirects, j->res.content_type ? j->res.content_type : "-",
           j->res.final_url ? j->res.final_url : "-", j->res.error ? j->res.error : "-");
}

int main(int argc, char **argv)
{
    probe_t p = {.cancel_after = -1};
    fetch_req_t req = {
        .timeout_ms = 10000,
        .connect_timeout_ms = 5000,
        .max_bytes = 1 << 20,
        .max_redirects = 5,
        .host_allowed = allowed,
        .progress = progress,
        .ctx = &p,
    };
    const char *out = NULL, *url = NULL;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--private") == 0) {
            req.allow_private = true;
            continue;
        }
        if (a[0] != '-') {
            url = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "usage: see fetch_probe.c\n");
            return 2;
        }
        if (strcmp(a, "--allow") == 0 && p.nallow < 32) p.allow[p.nallow++] = v;
        else if (strcmp(a, "--max-bytes") == 0) req.max_bytes = atoll(v);
        else if (strcmp(a, "--timeout") == 0) req.timeout_ms = atol(v);
        else if (strcmp(a, "--connect-timeout") == 0) req.connect_timeout_ms = atol(v);
        else if (strcmp(a, "--redirects") == 0) req.max_redirects = atoi(v);
        else if (strcmp(a, "--cancel-after") == 0) p.cancel_after = atoll(v);
        else if (strcmp(a, "--threads") == 0) threads = atoi(v);
        else if (strcmp(a, "--out") == 0) out = v;
        else {
            fprintf(stderr, "fetch_probe: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    if (!out || !url) {
        fprintf(stderr, "fetch_probe: --out FILE and URL are required\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    req.url = url;

    int n = threads > 0 ? threads : 1;
    job_t *jobs = xcalloc((size_t)n, sizeof *jobs);
    pthread_t *tid = xcalloc((size_t)n, sizeof *tid);
    for (int i = 0; i < n; i++) {
        jobs[i].path = threads > 0 ? xasprintf("%s.%d", out, i) : xstrdup(out);
        jobs[i].req = req;
        jobs[i].req.out_fd = open(jobs[i].path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (jobs[i].req.out_fd < 0) {
            perror(jobs[i].path);
            return 2;
        }
    }
    for (int i = 0; i < n; i++)
        if (pthread_create(&tid[i], NULL, run, &jobs[i]) != 0) {
            perror("pthread_create");
            return 2;
        }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        close(jobs[i].req.out_fd);
        print(&jobs[i]);
        if (!jobs[i].ok) rc = 1;
        fetch_result_free(&jobs[i].res);
        free((char *)jobs[i].path);
    }
    fprintf(stderr, "host_allowed calls: %d\n", p.calls);
    free(jobs);
    free(tid);
    return rc;
}
