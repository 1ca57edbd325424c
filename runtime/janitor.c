/* janitor.c — deferred, gated placeholder removal (see janitor.h). */
#include "janitor.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "log.h"

/* Pending residues past which new commands wait for a cleanup (each holds
 * an fd). */
#define PENDING_FORCE 256

struct janitor {
    pthread_rwlock_t gate;            /* shared: a command runs; exclusive: cleanup */
    pthread_mutex_t mu;               /* guards pending and stop */
    pthread_cond_t cv;                /* pending grew, or stop */
    VEC(sbx_residue_t *) pending;
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

static void *janitor_main(void *arg)
{
    janitor_t *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->pending.n && !j->stop)
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->stop)
            break;
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
        if (!cleaned && !j->stop) {
            /* Commands are running; try again when one ends, or soon. */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&j->cv, &j->mu, &ts);
        }
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
    if (residue)
        vec_push(&j->pending, residue);
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    pthread_rwlock_unlock(&j->gate);
}
