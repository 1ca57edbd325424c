/* janitor.c — deferred, gated placeholder removal (see janitor.h). */
#include "janitor.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drun_policy.h"
#include "log.h"

/* Pending residues past which new commands wait for a cleanup (each holds
 * an fd). */
#define PENDING_FORCE 256
/* Cleanup waits for this long without a command ending: removing 20-odd
 * placeholders costs milliseconds, and between the commands of a busy
 * session they would only be made again. */
#define QUIET_MS 300

struct janitor {
    pthread_rwlock_t gate; /* shared: a command runs; exclusive: cleanup */
    pthread_mutex_t mu;    /* guards pending and stop */
    pthread_cond_t cv;     /* pending grew, or stop */
    VEC(sbx_residue_t *) pending;
    int64_t last_leave;    /* monotonic ms of the last command's end */
    bool stop;
    pthread_t thread;
};

/* Takes the pending list (mu held). */
static void take_locked(janitor_t *j, sbx_residue_t ***v, size_t *n)
{
    *v = j->pending.v;
    *n = j->pending.n;
    j->pending.v = NULL;
    j->pending.n = j->pending.cap = 0;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits on cv until the given monotonic ms at most (mu held). */
static void wait_until(janitor_t *j, int64_t until_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ms = until_ms - mono_ms();
    if (ms <= 0)
        return;
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&j->cv, &j->mu, &ts);
}

static void *janitor_main(void *arg)
{
    janitor_t *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->pending.n && !j->stop)
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->stop)
            break;
        if (mono_ms() - j->last_leave < QUIET_MS) {
            wait_until(j, j->last_leave + QUIET_MS);
            continue;
        }
        pthread_mutex_unlock(&j->mu);
        bool cleaned = false;
        if (pthread_rwlock_trywrlock(&j->gate) == 0) {
            /* No command runs: nothing can be using a placeholder. */
            pthread_mutex_lock(&j->mu);
            sbx_residue_t **v;
            size_t n;
            take_locked(j, &v, &n);
            pthread_mutex_unlock(&j->mu);
            for (size_t i = 0; i < n; i++)
                sandbox_cleanup(v[i]);
            free(v);
            pthread_rwlock_unlock(&j->gate);
            cleaned = true;
        }
        pthread_mutex_lock(&j->mu);
        if (!cleaned && !j->stop)
            wait_until(j, mono_ms() + 200); /* commands run: again when one ends, or soon */
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

janitor_t *janitor_new(void)
{
    janitor_t *j = xcalloc(1, sizeof *j);
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&j->gate, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    if (pthread_create(&j->thread, NULL, janitor_main, j) != 0) {
        log_error("cannot start the placeholder janitor thread");
        abort();
    }
    return j;
}

void janitor_free(janitor_t *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->thread, NULL);
    pthread_rwlock_wrlock(&j->gate);
    for (size_t i = 0; i < j->pending.n; i++)
        sandbox_cleanup(j->pending.v[i]);
    pthread_rwlock_unlock(&j->gate);
    vec_free(&j->pending);
    pthread_rwlock_destroy(&j->gate);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

void janitor_enter(janitor_t *j)
{
    pthread_mutex_lock(&j->mu);
    bool force = j->pending.n >= PENDING_FORCE;
    pthread_mutex_unlock(&j->mu);
    if (force) {
        /* Too many left over: wait for the running commands, clean up,
         * then run (writer preference keeps new commands from starving it). */
        pthread_rwlock_wrlock(&j->gate);
        pthread_mutex_lock(&j->mu);
        sbx_residue_t **v;
        size_t n;
        take_locked(j, &v, &n);
        pthread_mutex_unlock(&j->mu);
        for (size_t i = 0; i < n; i++)
            sandbox_cleanup(v[i]);
        free(v);
        pthread_rwlock_unlock(&j->gate);
    }
    pthread_rwlock_rdlock(&j->gate);
}

void janitor_leave(janitor_t *j, sbx_residue_t *residue)
{
    pthread_mutex_lock(&j->mu);
    /* Wake the janitor only from its untimed wait (nothing pending): when
     * something is pending it wakes on its own timer, and a wake-up per
     * command would cost a context switch on the request path. */
    if (residue && !j->pending.n)
        pthread_cond_signal(&j->cv);
    if (residue)
        vec_push(&j->pending, residue);
    j->last_leave = mono_ms();
    pthread_mutex_unlock(&j->mu);
    pthread_rwlock_unlock(&j->gate);
}
