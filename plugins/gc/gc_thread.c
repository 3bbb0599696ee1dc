/* gc_thread.c — the plugin thread.
 *
 * In zero-code mode (libjager preloaded) the plugin starts before Julia has initialised:
 * the thread polls jl_is_initialized every millisecond and registers the callbacks as
 * soon as it returns 1 (collections during Julia's start-up before that are missed).
 * Then, every interval_ms, it emits a gc.sample and drains the pause queue, so pauses
 * reach the recording while the program runs even if nobody calls jager_flush(). */
#include <errno.h>
#include <time.h>

#include "gc_internal.h"

/* Wait up to \p ns or until stop is requested; returns 1 when stop was requested. */
static int wait_or_stop(gc_state *st, uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec += (long)(ns % 1000000000u);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&st->wake_lock);
    while (!st->stop_requested) {
        int rc = pthread_cond_timedwait(&st->wake, &st->wake_lock, &ts);
        if (rc == ETIMEDOUT) break;
    }
    int stop = st->stop_requested;
    pthread_mutex_unlock(&st->wake_lock);
    return stop;
}

static void *thread_main(void *arg)
{
    gc_state *st = arg;
    pthread_setname_np(pthread_self(), "jager-gc");
    while (!atomic_load(&st->hooked)) {
        if (gc_julia_ready(&st->jl)) {
            gc_hooks_install(st);
            st->host->log(st->self, JAGER_DIAG_DEBUG, "Julia initialised: GC callbacks registered");
            break;
        }
        if (wait_or_stop(st, 1000000u)) return NULL;
    }
    uint64_t interval = (uint64_t)st->interval_ms * 1000000u;
    for (;;) {
        gc_sample(st);
        gc_drain(st);
        if (wait_or_stop(st, interval)) break;
    }
    return NULL;
}

jager_status gc_thread_start(gc_state *st)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&st->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) return JAGER_E_NOMEM;
    pthread_mutex_init(&st->wake_lock, NULL);
    st->stop_requested = 0;
    if (pthread_create(&st->thread, NULL, thread_main, st) != 0) {
        pthread_cond_destroy(&st->wake);
        pthread_mutex_destroy(&st->wake_lock);
        return JAGER_E_NOMEM;
    }
    st->thread_running = 1;
    return JAGER_OK;
}

void gc_thread_stop(gc_state *st)
{
    if (!st->thread_running) return;
    pthread_mutex_lock(&st->wake_lock);
    st->stop_requested = 1;
    pthread_cond_signal(&st->wake);
    pthread_mutex_unlock(&st->wake_lock);
    pthread_join(st->thread, NULL);
    st->thread_running = 0;
    pthread_cond_destroy(&st->wake);
    pthread_mutex_destroy(&st->wake_lock);
}
