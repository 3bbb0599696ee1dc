/*
 * plugin_call.c — bounded calls into plugin code (issue 16 item 11).
 *
 * A plugin's lifecycle callbacks (init, start, flush, stop, shutdown) and the callbacks of
 * the sinks it registered run on a worker thread owned by the host while the calling
 * thread (the program's, inside jager_init/jager_flush/jager_shutdown/exit, or the
 * collector) waits at most JAGER_PLUGIN_TIMEOUT_MS. A call that does not return in time
 * leaves the worker stuck in plugin code: the caller abandons it (the worker frees itself
 * and what it was handed if the call ever returns), and the caller's module disables the
 * plugin. JAGER_PLUGIN_TIMEOUT_MS=0 calls everything inline, unbounded, on the calling
 * thread (the behaviour before bounding).
 *
 * One job at a time per worker; a second caller waits its turn within the same deadline.
 * The worker wears the caller's thread name and signal mask while a job runs (idle, every
 * signal is blocked), so threads a plugin starts from start are as they were.
 * While a job runs, the worker acts for its submitter: it counts as inside a plugin
 * callback (jager_init/jager_shutdown refuse), and when the submitter holds the life lock
 * or is the collector, jager_flush() from the job does not wait for either (that would
 * deadlock the submitter that waits for the job).
 */
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "plugin_handle.h"

struct jg_worker {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* job posted, job finished, turn free, quit: all broadcast */
    void (*fn)(void *arg);
    void *arg;
    int proxy;                /* the submitter's JG_PROXY_* flags */
    char name[16];            /* the submitter's thread name, worn while the job runs */
    sigset_t mask;            /* the submitter's signal mask, worn while the job runs */
    uint64_t posted, finished;
    int busy;                 /* a caller holds the job slot */
    int quit;
    int refs;                 /* the owner's and the thread's */
    void (*keep_free)(void *); /* what an abandoning owner handed over, freed with the worker */
    void *keep;
};

static __thread int proxy_flags __attribute__((tls_model("initial-exec")));
int jg_call_proxy(void) { return proxy_flags; }

long jg_plugin_timeout_ms(void)
{
    const char *v = getenv("JAGER_PLUGIN_TIMEOUT_MS");
    if (!v || !*v) return JG_PLUGIN_TIMEOUT_DEFAULT_MS;
    char *e;
    long ms = strtol(v, &e, 10);
    if (*e || ms < 0) return JG_PLUGIN_TIMEOUT_DEFAULT_MS;
    return ms;
}

static void worker_release(jg_worker *w)
{
    pthread_mutex_lock(&w->mu);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (!last) return;
    if (w->keep_free && w->keep) w->keep_free(w->keep);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

static void *worker_main(void *p)
{
    jg_worker *w = p;
    pthread_setname_np(pthread_self(), "jager-plugin");
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->quit && w->finished == w->posted) pthread_cond_wait(&w->cv, &w->mu);
        if (w->finished == w->posted) break; /* quit, nothing left */
        void (*fn)(void *) = w->fn;
        void *arg = w->arg;
        proxy_flags = w->proxy;
        char name[16];
        memcpy(name, w->name, sizeof name);
        sigset_t mask = w->mask, all;
        pthread_mutex_unlock(&w->mu);
        /* and its signal mask: threads the plugin starts inherit it as they would there */
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        /* The caller's name while the call runs: a thread the plugin starts here inherits
         * it (as it would on the caller), and so do its events; idle, the worker says what
         * it is. */
        prctl(PR_SET_NAME, name, 0, 0, 0);
        jg_plugins_callback_enter();
        fn(arg);
        jg_plugins_callback_leave();
        prctl(PR_SET_NAME, "jager-plugin", 0, 0, 0);
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, NULL);
        proxy_flags = 0;
        pthread_mutex_lock(&w->mu);
        w->finished++;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    worker_release(w);
    return NULL;
}

/* Idle workers are kept for the next plugin rather than ended: a thread that ran plugin
 * code may carry other libraries' thread-exit destructors (libomp registers one on a
 * thread that called into it), which must not run while the process exits and those
 * libraries are torn down. Threads are only ever left running, never ended, except an
 * abandoned one whose stuck call returns. A forked child has none of them (forget them). */
#define POOL_MAX 64
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static jg_worker *pool[POOL_MAX];
static int npool;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static void pool_forget_in_child(void) { npool = 0; } /* their threads are not in the child */
static void pool_init(void) { pthread_atfork(NULL, NULL, pool_forget_in_child); }

jg_worker *jg_worker_new(void)
{
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool_lock);
    jg_worker *idle = npool ? pool[--npool] : NULL;
    pthread_mutex_unlock(&pool_lock);
    if (idle) return idle;
    jg_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    pthread_mutex_init(&w->mu, NULL);
    jg_cond_init_monotonic(&w->cv);
    w->refs = 2;
    int rc = jg_host_thread_start(NULL, 1, worker_main, w); /* the program's signals never land on it */
    if (rc != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

static void deadline_in(struct timespec *dl, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, dl);
    dl->tv_sec += ms / 1000;
    dl->tv_nsec += (ms % 1000) * 1000000L;
    if (dl->tv_nsec >= 1000000000L) {
        dl->tv_sec++;
        dl->tv_nsec -= 1000000000L;
    }
}

int jg_worker_call(jg_worker *w, void (*fn)(void *arg), void *arg, int proxy, long timeout_ms)
{
    struct timespec dl;
    deadline_in(&dl, timeout_ms);
    int timed_out = 0;
    pthread_mutex_lock(&w->mu);
    while (w->busy && !timed_out) timed_out = pthread_cond_timedwait(&w->cv, &w->mu, &dl) == ETIMEDOUT;
    if (w->busy) { /* another caller's job is stuck: so is this worker */
        pthread_mutex_unlock(&w->mu);
        return -1;
    }
    w->busy = 1;
    memset(w->name, 0, sizeof w->name);
    prctl(PR_GET_NAME, w->name, 0, 0, 0);
    w->name[sizeof w->name - 1] = 0;
    pthread_sigmask(SIG_SETMASK, NULL, &w->mask);
    w->fn = fn;
    w->arg = arg;
    w->proxy = proxy;
    uint64_t my = ++w->posted;
    pthread_cond_broadcast(&w->cv);
    timed_out = 0;
    while (w->finished < my && !timed_out) timed_out = pthread_cond_timedwait(&w->cv, &w->mu, &dl) == ETIMEDOUT;
    int done = w->finished >= my;
    if (done) {
        w->busy = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return done ? 0 : -1;
}

void jg_worker_abandon(jg_worker *w, void (*keep_free)(void *), void *keep)
{
    if (!w) {
        if (keep_free && keep) keep_free(keep);
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    w->keep_free = keep_free;
    w->keep = keep;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    worker_release(w);
}

void jg_worker_free(jg_worker *w)
{
    if (!w) return;
    pthread_mutex_lock(&pool_lock);
    int kept = npool < POOL_MAX;
    if (kept) pool[npool++] = w;
    pthread_mutex_unlock(&pool_lock);
    if (!kept) jg_worker_abandon(w, NULL, NULL);
}
