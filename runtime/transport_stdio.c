/* transport_stdio.c — MCP over stdin/stdout, one JSON message per line.
 *
 * The reader (the calling thread) frames lines and handles everything but
 * tools/call inline, in order — notifications must act at once (a
 * cancellation has to reach a command that is running), and lifecycle
 * requests stay ordered. tools/call requests go to a fixed pool of worker
 * threads. Locking: `out_mu` serialises whole lines on out_fd (one
 * response or notification per write); `q_mu`/`q_cv` guard the queue and
 * the closing flag.
 *
 * A client that goes away closes our stdout's reader: poll(2) reports POLLERR
 * (a pipe) or POLLHUP (a socket, a tty) on out_fd, with no write needed. That
 * stops everything at once, as a signal does: a command nobody will read the
 * result of is killed, not left to run its course.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "drun_policy.h"
#include "log.h"
#include "transport.h"

#define WORKERS 8
#define QUEUE_MAX 1024

typedef struct job {
    jsonrpc_msg_t msg;
    struct job *next;
} job_t;

typedef struct stdio_ctx {
    mcp_server_t *srv;
    mcp_conn_t *conn;
    int out_fd;
    pthread_mutex_t out_mu; /* one line at a time on out_fd */
    bool out_broken;        /* out_fd failed: the client is gone (under out_mu) */
    pthread_mutex_t q_mu;   /* guards the queue fields below */
    pthread_cond_t q_cv;
    job_t *head, *tail;
    size_t queued;
    bool closing; /* no more jobs will come */
    mcp_sink_t sink;
} stdio_ctx_t;

/* Writes text and a newline as one line; false once out_fd has failed. */
static bool write_line(stdio_ctx_t *c, const char *text)
{
    size_t len = strlen(text), done = 0;
    pthread_mutex_lock(&c->out_mu);
    bool ok = !c->out_broken;
    while (ok && done < len + 1) {
        struct iovec v[2];
        int n = 0;
        if (done < len)
            v[n++] = (struct iovec){(char *)text + done, len - done};
        v[n++] = (struct iovec){(char *)"\n", 1};
        ssize_t w = writev(c->out_fd, v, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            c->out_broken = true;
            ok = false;
        } else {
            done += (size_t)w;
        }
    }
    pthread_mutex_unlock(&c->out_mu);
    return ok;
}

static void sink_send(void *ctx, const char *json) { write_line(ctx, json); }

/* Did poll say the reader of out_fd is gone (revents of out_fd polled for
 * nothing)? Then nothing more can be answered: marked broken. */
static bool client_gone(stdio_ctx_t *c, short revents)
{
    if (!(revents & (POLLERR | POLLHUP | POLLNVAL)))
        return false;
    pthread_mutex_lock(&c->out_mu);
    if (!c->out_broken)
        log_info("the client closed its end of stdout: stopping its calls");
    c->out_broken = true;
    pthread_mutex_unlock(&c->out_mu);
    return true;
}

static void *worker(void *arg)
{
    stdio_ctx_t *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->q_mu);
        while (!c->head && !c->closing)
            pthread_cond_wait(&c->q_cv, &c->q_mu);
        job_t *j = c->head;
        if (j) {
            c->head = j->next;
            if (!c->head)
                c->tail = NULL;
            c->queued--;
        }
        pthread_mutex_unlock(&c->q_mu);
        if (!j)
            return NULL; /* closing and nothing left */
        mcp_reply_t r;
        mcp_dispatch(c->conn, &j->msg, &c->sink, &r);
        /* A cancelled request gets no response (MCP cancellation). */
        if (r.text && !r.cancelled)
            write_line(c, r.text);
        free(r.text);
        jsonrpc_msg_free(&j->msg);
        free(j);
    }
}

/* Handles one complete line. */
static void handle_line(stdio_ctx_t *c, const char *line, size_t len)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == len)
        return; /* blank lines are not messages */
    job_t *j = xcalloc(1, sizeof *j);
    jsonrpc_parse(line + i, len - i, &j->msg);
    /* Only tools/call can take long: it goes to the pool. Everything else is
     * answered here, in order — so an initialize is complete before the next
     * line is read, even from a client that does not wait for its answer. */
    if (j->msg.kind == JSONRPC_REQUEST && !strcmp(j->msg.method, "tools/call")) {
        pthread_mutex_lock(&c->q_mu);
        if (c->queued < QUEUE_MAX) {
            if (c->tail)
                c->tail->next = j;
            else
                c->head = j;
            c->tail = j;
            c->queued++;
            j = NULL;
            pthread_cond_signal(&c->q_cv);
        }
        pthread_mutex_unlock(&c->q_mu);
        if (j) {
            char *e = jsonrpc_error(j->msg.id, JSONRPC_INTERNAL_ERROR,
                                    "Internal error: too many requests in flight; retry later", NULL);
            write_line(c, e);
            free(e);
            jsonrpc_msg_free(&j->msg);
            free(j);
        }
        return;
    }
    mcp_reply_t r;
    mcp_dispatch(c->conn, &j->msg, &c->sink, &r);
    if (r.text)
        write_line(c, r.text);
    free(r.text);
    jsonrpc_msg_free(&j->msg);
    free(j);
}

int transport_stdio_run(mcp_server_t *srv, int in_fd, int out_fd, int stop_fd, size_t max_line)
{
    stdio_ctx_t c = {.srv = srv, .out_fd = out_fd};
    c.conn = mcp_conn_new(srv);
    c.sink = (mcp_sink_t){sink_send, &c};
    pthread_mutex_init(&c.out_mu, NULL);
    pthread_mutex_init(&c.q_mu, NULL);
    pthread_cond_init(&c.q_cv, NULL);
    pthread_t th[WORKERS];
    int nth = 0;
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&th[nth], NULL, worker, &c) == 0)
            nth++;
    if (!nth) {
        log_error("cannot start any worker thread");
        return 1;
    }

    buf_t line = BUF_INIT;
    bool discarding = false, stopped = false;
    char chunk[65536];
    for (;;) {
        struct pollfd p[3] = {{in_fd, POLLIN, 0}, {out_fd, 0, 0}, {stop_fd, POLLIN, 0}};
        if (poll(p, stop_fd >= 0 ? 3 : 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (stop_fd >= 0 && p[2].revents) {
            stopped = true;
            break;
        }
        if (client_gone(&c, p[1].revents))
            break;
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t n = read(in_fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break; /* EOF: the client closed our stdin */
        const char *p0 = chunk, *end = chunk + n;
        while (p0 < end) {
            const char *nl = memchr(p0, '\n', (size_t)(end - p0));
            size_t seg = nl ? (size_t)(nl - p0) : (size_t)(end - p0);
            if (!discarding) {
                if (line.len + seg > max_line) {
                    /* Too long to be a message we would accept: answer once,
                     * drop the rest of the line, resync at the newline. */
                    char *e = jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST,
                                            "Invalid Request: message longer than the line limit",
                                            NULL);
                    write_line(&c, e);
                    free(e);
                    log_warn("dropped a message longer than %zu bytes", max_line);
                    buf_free(&line);
                    discarding = true;
                } else {
                    buf_add(&line, p0, seg);
                }
            }
            if (!nl)
                break;
            if (!discarding)
                handle_line(&c, line.p ? line.p : "", line.len);
            buf_truncate(&line, 0);
            if (line.cap > (1u << 20))
                buf_free(&line); /* do not keep a huge buffer around */
            discarding = false;
            p0 = nl + 1;
        }
        pthread_mutex_lock(&c.out_mu);
        bool broken = c.out_broken;
        pthread_mutex_unlock(&c.out_mu);
        if (broken)
            break;
    }
    /* A last line without a newline still counts at EOF. */
    if (!stopped && !discarding && line.len)
        handle_line(&c, line.p, line.len);
    buf_free(&line);

    pthread_mutex_lock(&c.out_mu);
    bool broken = c.out_broken;
    pthread_mutex_unlock(&c.out_mu);
    if (stopped || broken) {
        /* A signal, or nobody left to answer: stop the commands now and
         * drop the requests still queued. */
        mcp_conn_cancel_all(c.conn);
        pthread_mutex_lock(&c.q_mu);
        while (c.head) {
            job_t *j = c.head;
            c.head = j->next;
            jsonrpc_msg_free(&j->msg);
            free(j);
        }
        c.tail = NULL;
        pthread_mutex_unlock(&c.q_mu);
    }
    pthread_mutex_lock(&c.q_mu);
    c.closing = true;
    pthread_cond_broadcast(&c.q_cv);
    pthread_mutex_unlock(&c.q_mu);
    /* Requests already read are answered before exiting (EOF). A signal
     * arriving meanwhile cancels them. */
    for (int i = 0; i < nth; i++) {
        while (!stopped) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            if (pthread_timedjoin_np(th[i], NULL, &ts) == 0)
                goto joined;
            /* A signal, or the client leaving meanwhile, cancels them. */
            struct pollfd p[2] = {{out_fd, 0, 0}, {stop_fd, POLLIN, 0}};
            if (poll(p, stop_fd >= 0 ? 2 : 1, 0) > 0 &&
                ((stop_fd >= 0 && p[1].revents) || client_gone(&c, p[0].revents))) {
                stopped = true;
                mcp_conn_cancel_all(c.conn);
            }
        }
        pthread_join(th[i], NULL);
    joined:;
    }
    mcp_conn_free(c.conn);
    pthread_mutex_destroy(&c.out_mu);
    pthread_mutex_destroy(&c.q_mu);
    pthread_cond_destroy(&c.q_cv);
    return broken ? 1 : 0;
}
