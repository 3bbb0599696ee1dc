/* The collector: one thread that drains every ring into the sinks on an interval and on
 * request, reports drops as records, and on stop does a final drain and closes the sinks.
 * Sinks are called only from the thread that drains (never concurrently with themselves). */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "containers.h"
#include "internal.h"

#define MAX_SINKS 16

typedef struct sink_slot {
    jager_sink s;
    int opened;
    int failed_reported; /* also set from the start for a sink that reports its own failures */
} sink_slot;

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static sink_slot sinks[MAX_SINKS];
static int nsinks;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t wake;                /* collector waits here: posted by flushers, stop, and signal
                                     handlers (sem_post is async-signal-safe) */
static pthread_cond_t done;       /* flushers wait here */
static _Atomic(int) sig_req;      /* JG_SIGREQ_*: what a signal handler asked for */
static _Atomic(int) sig_done;     /* set when that is done */
static int cv_ready;
static pthread_t thread;
static int running, stopping;
static uint64_t flush_req, flush_done;

/* Drain state: used by whichever thread drains, serialised by drain_lock. */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *buf;
static size_t buf_cap;
static _Atomic(uint64_t) written, sink_drops;
static uint64_t last_sink_flush_ns, written_at_flush; /* collector thread only */

uint64_t jg_collector_written(void) { return atomic_load_explicit(&written, memory_order_relaxed); }
uint64_t jg_collector_sink_drops(void) { return atomic_load_explicit(&sink_drops, memory_order_relaxed); }

static jager_status sink_add(const jager_sink *sink, int reports_itself);
jager_status jg_sink_add(const jager_sink *sink) { return sink_add(sink, 0); }
jager_status jg_sink_add_self_reporting(const jager_sink *sink) { return sink_add(sink, 1); }

static jager_status sink_add(const jager_sink *sink, int reports_itself)
{
    if (!sink || sink->struct_size < offsetof(jager_sink, close) + sizeof(void *) || !sink->write)
        return jg_error(JAGER_E_INVALID, "sink: NULL, too old a struct, or no write callback");
    jager_status st = JAGER_OK;
    pthread_mutex_lock(&sink_lock);
    if (nsinks == MAX_SINKS) {
        st = jg_error(JAGER_E_FULL, "sink: at most %d sinks", MAX_SINKS);
    } else {
        memset(&sinks[nsinks], 0, sizeof sinks[nsinks]);
        memcpy(&sinks[nsinks].s, sink, sink->struct_size < sizeof(jager_sink) ? sink->struct_size : sizeof(jager_sink));
        sinks[nsinks].failed_reported = reports_itself;
        nsinks++;
    }
    pthread_mutex_unlock(&sink_lock);
    return st;
}

jager_status jager_sink_add(const jager_sink *sink) { return jg_sink_add(sink); }

/* Caller holds sink_lock. */
static void open_pending(void)
{
    for (int i = 0; i < nsinks; i++) {
        if (sinks[i].opened) continue;
        sinks[i].opened = 1;
        if (sinks[i].s.open && sinks[i].s.open(sinks[i].s.ctx) != JAGER_OK) {
            char msg[160];
            snprintf(msg, sizeof msg, "sink '%s' failed to open; its events are counted as dropped",
                     sinks[i].s.name ? sinks[i].s.name : "?");
            jg_diag("core", JAGER_SEV_WARN, msg);
            sinks[i].opened = -1;
        }
    }
}

static int ensure(size_t need)
{
    uint8_t *p = jg_grow(buf, &buf_cap, need, 1, 65536);
    if (!p) return -1;
    buf = p;
    return 0;
}

/* Append drop reports for what this ring lost since its last report. */
static size_t append_drops(jg_ring *r, size_t len, uint64_t *events)
{
    uint64_t now[JAGER_DROP_REASONS] = {0};
    now[JAGER_DROP_RING_FULL] = atomic_load_explicit(&r->dropped_full, memory_order_relaxed);
    now[JAGER_DROP_TOO_LARGE] = atomic_load_explicit(&r->dropped_large, memory_order_relaxed);
    now[JAGER_DROP_OVERWRITTEN] = atomic_load_explicit(&r->overwritten, memory_order_relaxed);
    for (int reason = 0; reason < JAGER_DROP_REASONS; reason++) {
        if (now[reason] <= r->reported_drops[reason]) continue;
        if (ensure(len + sizeof(jager_rec_drop))) break;
        jager_rec_drop *d = (jager_rec_drop *)(buf + len);
        d->h.type = JAGER_EV_DROP;
        d->h.words = sizeof *d / 8;
        d->h.aux = (uint32_t)reason;
        d->time_ns = jg_now_ns();
        d->count = now[reason] - r->reported_drops[reason];
        r->reported_drops[reason] = now[reason];
        len += sizeof *d;
        (*events)++;
    }
    return len;
}

static void write_batch(uint32_t thread_index, size_t len, uint64_t events)
{
    jager_batch b = {sizeof b, thread_index, buf, len, events};
    pthread_mutex_lock(&sink_lock);
    open_pending();
    for (int i = 0; i < nsinks; i++) {
        if (sinks[i].opened < 0) {
            atomic_fetch_add_explicit(&sink_drops, events, memory_order_relaxed);
            continue;
        }
        if (sinks[i].s.write(sinks[i].s.ctx, &b) != JAGER_OK) {
            atomic_fetch_add_explicit(&sink_drops, events, memory_order_relaxed);
            if (!sinks[i].failed_reported) {
                sinks[i].failed_reported = 1;
                char msg[160];
                snprintf(msg, sizeof msg, "sink '%s' failed to write; its lost events are counted as dropped",
                         sinks[i].s.name ? sinks[i].s.name : "?");
                pthread_mutex_unlock(&sink_lock);
                jg_diag("core", JAGER_SEV_WARN, msg);
                pthread_mutex_lock(&sink_lock);
            }
        }
    }
    pthread_mutex_unlock(&sink_lock);
    atomic_fetch_add_explicit(&written, events, memory_order_relaxed);
}

/* Free the rings whose threads are gone and that are drained, unless a drain is walking
 * the list right now (the next drain reaps them then). Caller holds the rings lock. */
void jg_rings_reap_idle(void)
{
    if (pthread_mutex_trylock(&drain_lock) != 0) return;
    jg_rings_reap();
    pthread_mutex_unlock(&drain_lock);
}

/* Drain every ring once; optionally flush the sinks. Only a drain (under drain_lock)
 * frees rings, so the list it walks stays valid. */
static void drain_all(int flush_sinks)
{
    pthread_mutex_lock(&drain_lock);
    /* Snapshot the list head: producers only push at the head, and only the drainer
     * removes nodes, so the rest of the list is stable while we walk it. */
    jg_rings_lock();
    jg_ring *head = jg_rings_head();
    jg_rings_unlock();
    for (jg_ring *r = head; r; r = r->next) {
        uint64_t events = 0;
        size_t len = jg_ring_drain(r, &buf, &buf_cap, &events);
        len = append_drops(r, len, &events);
        if (len) write_batch(r->thread, len, events);
    }
    jg_rings_lock();
    jg_rings_reap();
    jg_rings_unlock();
    if (flush_sinks) {
        pthread_mutex_lock(&sink_lock);
        open_pending();
        for (int i = 0; i < nsinks; i++)
            if (sinks[i].opened > 0 && sinks[i].s.flush) sinks[i].s.flush(sinks[i].s.ctx);
        pthread_mutex_unlock(&sink_lock);
    }
    pthread_mutex_unlock(&drain_lock);
}

/* Close every sink after a last flush (the final drain is the caller's). */
static void finish_sinks(void)
{
    pthread_mutex_lock(&sink_lock);
    open_pending();
    for (int i = 0; i < nsinks; i++) {
        if (sinks[i].opened > 0 && sinks[i].s.flush) sinks[i].s.flush(sinks[i].s.ctx);
        /* every sink is closed, also one whose open failed: close frees what it holds */
        if (sinks[i].opened != 0 && sinks[i].s.close) sinks[i].s.close(sinks[i].s.ctx);
    }
    nsinks = 0;
    pthread_mutex_unlock(&sink_lock);
}

void jg_collector_signal(int what)
{
    atomic_store_explicit(&sig_done, 0, memory_order_relaxed);
    atomic_store_explicit(&sig_req, what, memory_order_release);
    if (cv_ready) sem_post(&wake);
}

int jg_collector_signal_done(void) { return atomic_load_explicit(&sig_done, memory_order_acquire); }

/* What a signal handler asked for, on the collector (a normal thread context): a drain
 * and sink flush, or the end of the recording (final drain, symbols, sinks closed), after
 * which the collector stops. Returns 1 when it stopped. */
static int serve_signal(void)
{
    int what = atomic_exchange_explicit(&sig_req, 0, memory_order_acq_rel);
    if (!what) return 0;
    drain_all(what == JG_SIGREQ_FLUSH);
    if (what == JG_SIGREQ_FINISH) {
        jg_symbols_resolve_native();
        finish_sinks();
    }
    atomic_store_explicit(&sig_done, 1, memory_order_release);
    return what == JG_SIGREQ_FINISH;
}

/* Wait for a post of `wake` or the flush interval, with `mu` released meanwhile. */
static void wait_wake(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)JG_CFG(flush_interval_ms) * 1000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_unlock(&mu);
    while (sem_timedwait(&wake, &ts) != 0 && errno == EINTR) {
    }
    pthread_mutex_lock(&mu);
}

static void *collector_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "jager-collector");
    pthread_mutex_lock(&mu);
    while (!stopping) {
        uint64_t want = flush_req;
        if (want == flush_done && !atomic_load_explicit(&sig_req, memory_order_acquire)) {
            wait_wake();
            want = flush_req;
        }
        if (stopping) break;
        if (atomic_load_explicit(&sig_req, memory_order_acquire)) {
            pthread_mutex_unlock(&mu);
            int stopped = serve_signal();
            pthread_mutex_lock(&mu);
            if (stopped) break;
            continue;
        }
        int requested = want != flush_done;
        pthread_mutex_unlock(&mu);
        if (requested) jg_plugins_flush();
        /* Sinks may hold events back to write bigger blocks: flush them about once a second
         * when something arrived, so an idle program that then crashes loses at most ~1 s. */
        uint64_t now = jg_now_ns(), w = atomic_load_explicit(&written, memory_order_relaxed);
        int periodic = now - last_sink_flush_ns >= 1000000000u && w != written_at_flush;
        drain_all(requested || periodic);
        if (requested || periodic) {
            last_sink_flush_ns = now;
            written_at_flush = atomic_load_explicit(&written, memory_order_relaxed);
        }
        pthread_mutex_lock(&mu);
        if (requested) {
            flush_done = want;
            pthread_cond_broadcast(&done);
        }
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

jager_status jg_collector_start(void)
{
    if (!cv_ready) {
        sem_init(&wake, 0, 0);
        pthread_cond_init(&done, NULL);
        cv_ready = 1;
    }
    atomic_store_explicit(&sig_req, 0, memory_order_relaxed);
    /* Leftovers of an earlier run (events that raced its shutdown) are not this run's. */
    pthread_mutex_lock(&drain_lock);
    jg_rings_lock();
    for (jg_ring *r = jg_rings_head(); r; r = r->next) {
        atomic_store_explicit(&r->tail, atomic_load_explicit(&r->head, memory_order_acquire), memory_order_release);
        memset(r->reported_drops, 0, sizeof r->reported_drops);
        /* Counters restart with the run (no producer runs during init). */
        atomic_store_explicit(&r->emitted, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dropped_full, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dropped_large, 0, memory_order_relaxed);
        atomic_store_explicit(&r->overwritten, 0, memory_order_relaxed);
    }
    jg_rings_reap();
    jg_rings_unlock();
    pthread_mutex_unlock(&drain_lock);
    atomic_store_explicit(&written, 0, memory_order_relaxed);
    atomic_store_explicit(&sink_drops, 0, memory_order_relaxed);
    pthread_mutex_lock(&sink_lock);
    open_pending();
    pthread_mutex_unlock(&sink_lock);
    pthread_mutex_lock(&mu);
    stopping = 0;
    flush_req = flush_done = 0;
    last_sink_flush_ns = jg_now_ns();
    written_at_flush = 0;
    /* The collector's writes must not raise SIGPIPE in the host, and SIGINT/SIGTERM must
     * reach a program thread (whose handler waits for this one): the thread starts with
     * them blocked. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(&thread, NULL, collector_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    running = rc == 0;
    pthread_mutex_unlock(&mu);
    if (rc) return jg_error(JAGER_E_NOMEM, "cannot start the collector thread (%s)", strerror(rc));
    jg_rings_set_collector(1);
    return JAGER_OK;
}

jager_status jg_collector_flush(void)
{
    pthread_mutex_lock(&mu);
    if (!running || pthread_equal(pthread_self(), thread)) {
        /* No collector, or called from a plugin's flush on the collector itself: drain here. */
        pthread_mutex_unlock(&mu);
        drain_all(1);
        return JAGER_OK;
    }
    uint64_t my = ++flush_req;
    sem_post(&wake);
    while (flush_done < my && running) pthread_cond_wait(&done, &mu);
    pthread_mutex_unlock(&mu);
    return JAGER_OK;
}

void jg_collector_stop(void)
{
    pthread_mutex_lock(&mu);
    int was_running = running;
    stopping = 1;
    if (cv_ready) sem_post(&wake);
    pthread_mutex_unlock(&mu);
    if (was_running) pthread_join(thread, NULL);
    pthread_mutex_lock(&mu);
    running = 0;
    flush_done = flush_req;
    pthread_cond_broadcast(&done);
    pthread_mutex_unlock(&mu);
    drain_all(0);
    /* Only now may exiting threads free their rings themselves: the walk above is over. */
    jg_rings_set_collector(0);
    /* Name what no binding named, so the file carries every stack's frames. */
    jg_symbols_resolve_native();
    finish_sinks();
    pthread_mutex_lock(&drain_lock);
    free(buf);
    buf = NULL;
    buf_cap = 0;
    pthread_mutex_unlock(&drain_lock);
}
