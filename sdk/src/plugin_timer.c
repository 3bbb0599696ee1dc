/*
 * plugin_timer.c — host->timer_start/timer_stop: a periodic callback on a thread the host
 * owns, so a sampling plugin needs no thread of its own and cannot get the lifecycle
 * wrong. The host stops a plugin's timers before its stop callback (and when its init or
 * start fails, and at unload), waiting until no callback runs: none can run after stop,
 * emit into a closed recording, or call into unloaded code.
 *
 * One thread per timer (a plugin has one or two): each sleeps on its own condition
 * variable until the next deadline on CLOCK_MONOTONIC, so a stop wakes it at once.
 * Deadlines are start + k × interval; a callback that overruns skips the deadlines it
 * missed rather than running back to back. Timer ids, like plugin handles, carry a
 * generation, so a stale id is refused.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "plugin_handle.h"

#define JG_MAX_TIMERS 64
#define JG_TIMER_MIN_NS 100000ull /* 100 µs: faster than this is a busy loop, not sampling */

typedef struct jg_timer {
    const jager_plugin_handle *owner; /* NULL: slot free */
    uint32_t id;                      /* generation << 6 | slot */
    uint64_t interval_ns;
    void (*fn)(void *arg);
    void *arg;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;        /* under mu */
    int detached;    /* stopped from its own callback: the thread frees the slot */
} jg_timer;

static pthread_mutex_t timers_lock = PTHREAD_MUTEX_INITIALIZER; /* slots: owner, id */
static jg_timer timers[JG_MAX_TIMERS];
static uint32_t timer_generation = 1;
static __thread jg_timer *current __attribute__((tls_model("initial-exec"))); /* the timer this thread runs */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *timer_main(void *p)
{
    jg_timer *t = p;
    current = t;
    uint64_t next = mono_ns() + t->interval_ns;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->stop) {
            uint64_t now = mono_ns();
            if (now >= next) break;
            struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
            pthread_cond_timedwait(&t->cv, &t->mu, &ts);
        }
        if (t->stop) break;
        pthread_mutex_unlock(&t->mu);
        jg_plugins_callback_enter();
        t->fn(t->arg);
        jg_plugins_callback_leave();
        next += t->interval_ns;
        uint64_t now = mono_ns();
        if (next <= now) next = now + t->interval_ns - (now - next) % t->interval_ns; /* skip missed deadlines */
        pthread_mutex_lock(&t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_lock(&timers_lock);
    if (t->detached) { /* stopped from its own callback: nobody joins it */
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        t->owner = NULL;
    }
    pthread_mutex_unlock(&timers_lock);
    return NULL;
}

jager_status jg_plugin_timer_start(jager_plugin_handle *h, uint64_t interval_ns, void (*fn)(void *arg), void *arg,
                                   uint32_t *timer_out)
{
    char name[JG_PLUGIN_NAME_MAX + 1];
    if (!jg_plugin_handle_name(h, name)) return jg_error(JAGER_E_STATE, "timer_start: the plugin handle is not (or no longer) loaded");
    if (!fn || !timer_out || interval_ns < JG_TIMER_MIN_NS)
        return jg_error(JAGER_E_INVALID, "plugin '%s': timer_start: NULL callback or output, or interval below %llu ns", name,
                        (unsigned long long)JG_TIMER_MIN_NS);
    pthread_mutex_lock(&timers_lock);
    jg_timer *t = NULL;
    for (uint32_t i = 0; i < JG_MAX_TIMERS && !t; i++)
        if (!timers[i].owner) t = &timers[i];
    if (!t) {
        pthread_mutex_unlock(&timers_lock);
        return jg_error(JAGER_E_FULL, "plugin '%s': timer_start: more than %d timers", name, JG_MAX_TIMERS);
    }
    uint32_t slot = (uint32_t)(t - timers);
    memset(t, 0, sizeof *t);
    t->owner = h;
    t->id = (timer_generation++ << 6) | slot;
    if (!t->id) t->id = (timer_generation++ << 6) | slot;
    t->interval_ns = interval_ns;
    t->fn = fn;
    t->arg = arg;
    pthread_mutex_init(&t->mu, NULL);
    jg_cond_init_monotonic(&t->cv);
    int rc = jg_host_thread_start(&t->thread, 0, timer_main, t); /* never takes the program's signals */
    if (rc != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        t->owner = NULL;
        pthread_mutex_unlock(&timers_lock);
        return jg_error(JAGER_E_NOMEM, "plugin '%s': timer_start: cannot start a thread (%s)", name, strerror(rc));
    }
    char tname[16];
    snprintf(tname, sizeof tname, "jg-%.12s", name);
    pthread_setname_np(t->thread, tname);
    *timer_out = t->id;
    pthread_mutex_unlock(&timers_lock);
    return JAGER_OK;
}

/* Caller holds timers_lock. Asks \p t to stop and takes its id (no second stop finds it);
 * returns 1 when the caller must join it (unlocked, then release()); 0 when the timer
 * stops itself from its own callback: its thread frees the slot as it ends. */
static int ask_stop_locked(jg_timer *t)
{
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    t->id = 0;
    if (current == t) {
        t->detached = 1;
        pthread_detach(t->thread);
        return 0;
    }
    return 1;
}

/* Join a timer asked to stop (timers_lock not held: its callback may take it), then free
 * its slot. The wait is bounded by JAGER_PLUGIN_TIMEOUT_MS (issue 16 item 11): a callback
 * that never returns leaves its thread to free the slot if it ever ends, and disables its
 * plugin (reported once), so jager_shutdown() and exit return. */
static void join_release(jg_timer *t)
{
    long ms = jg_plugin_timeout_ms();
    if (ms <= 0) {
        pthread_join(t->thread, NULL);
    } else {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += ms / 1000;
        dl.tv_nsec += (ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        if (pthread_timedjoin_np(t->thread, NULL, &dl) != 0) {
            pthread_mutex_lock(&timers_lock);
            const jager_plugin_handle *owner = t->owner;
            int hung = pthread_tryjoin_np(t->thread, NULL) != 0;
            if (hung) { /* its thread frees the slot if the callback ever returns */
                t->detached = 1;
                pthread_detach(t->thread);
            }
            pthread_mutex_unlock(&timers_lock);
            if (hung) {
                jg_plugin_mark_hung(owner, "timer callback", ms);
                return;
            }
        }
    }
    pthread_mutex_lock(&timers_lock);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    t->owner = NULL;
    pthread_mutex_unlock(&timers_lock);
}

jager_status jg_plugin_timer_stop(jager_plugin_handle *h, uint32_t timer)
{
    uint32_t slot = timer & 63u;
    pthread_mutex_lock(&timers_lock);
    jg_timer *t = slot < JG_MAX_TIMERS ? &timers[slot] : NULL;
    if (!timer || !t || t->id != timer || t->owner != h) {
        pthread_mutex_unlock(&timers_lock);
        return jg_error(JAGER_E_NOTFOUND, "timer_stop: no running timer %u of this plugin", timer);
    }
    int join = ask_stop_locked(t);
    pthread_mutex_unlock(&timers_lock);
    if (join) join_release(t);
    return JAGER_OK;
}

void jg_plugin_timers_stop(const jager_plugin_handle *h)
{
    if (!h) return;
    jg_timer *join[JG_MAX_TIMERS];
    uint32_t n = 0;
    pthread_mutex_lock(&timers_lock);
    for (uint32_t i = 0; i < JG_MAX_TIMERS; i++)
        if (timers[i].owner == h && timers[i].id && ask_stop_locked(&timers[i])) join[n++] = &timers[i];
    pthread_mutex_unlock(&timers_lock);
    for (uint32_t i = 0; i < n; i++) join_release(join[i]);
}

/* A child made by fork(): the timers' threads are the parent's; their slots are freed. */
void jg_plugin_timers_fork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    timers_lock = m0;
    memset(timers, 0, sizeof timers);
}
