/* The collector: one thread that drains every ring into the sinks on an interval and on
 * request, reports drops as records, and on stop does a final drain and closes the sinks.
 * Sinks are called only from the thread that drains (never concurrently with themselves). */
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "containers.h"
#include "internal.h"
#include "plugin_handle.h"

#define MAX_SINKS 16

typedef struct sink_slot {
    jager_sink s;
    int opened;
    int failed_reported; /* also set from the start for a sink that reports its own failures */
    const jager_plugin_handle *owner; /* the plugin that registered it; NULL: the core's or the program's */
    jg_worker *worker;                /* runs an owned sink's callbacks bounded (NULL: not yet) */
    int hung;                         /* a callback did not return, or its plugin is disabled: never called again */
} sink_slot;

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static sink_slot sinks[MAX_SINKS];
static int nsinks;

/* Per-sink accounting of this run, kept after the sinks close (until the next run adds its
 * first sink): every batch handed to sink i adds its events to delivered or to failed, so
 * delivered + failed = the events handed to sinks while it was registered. Written by the
 * drainer under sink_lock, read by anyone. */
typedef struct sink_count {
    char name[JAGER_SINK_NAME_MAX];
    _Atomic(uint64_t) delivered, failed, batches_failed;
} sink_count;
static sink_count counts[MAX_SINKS];
static _Atomic(uint32_t) ncounts;
static _Atomic(uint64_t) drained, drop_reports;
/* The accounting counters (written, drained, drop_reports, sink_drops, each sink's) move
 * together once per batch, inside a sequence lock: odd while they move, so a reader on any
 * thread sees one batch's counts all or not at all (written = drained + drop_reports, and
 * delivered + failed = written per sink, hold in every read), without a lock that a sink's
 * own callback (the file sink writes jager_stats() from its flush) would deadlock on. */
static _Atomic(uint64_t) acct_seq;

/* No fences (GCC's ThreadSanitizer does not model them): the counters are stored with
 * release and loaded with acquire, so a reader that sees any of a batch's counts also sees
 * the odd sequence number stored before them, and retries. */
static void acct_begin(void)
{
    atomic_store_explicit(&acct_seq, atomic_load_explicit(&acct_seq, memory_order_relaxed) + 1, memory_order_relaxed);
}

static void acct_end(void)
{
    atomic_store_explicit(&acct_seq, atomic_load_explicit(&acct_seq, memory_order_relaxed) + 1, memory_order_release);
}

/* A counter of the accounting: one writer (the drainer, under drain_lock). */
static void acct_add(_Atomic(uint64_t) *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by, memory_order_release);
}

static uint64_t acct_get(_Atomic(uint64_t) *c) { return atomic_load_explicit(c, memory_order_acquire); }

/* Read under the sequence lock: \p fn copies what it needs; retried while a batch's
 * counts move (a few stores: the wait is short), at most 1000 times. */
static void acct_read(void (*fn)(void *arg), void *arg)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t s1 = atomic_load_explicit(&acct_seq, memory_order_acquire);
        fn(arg); /* acquire loads: the load below cannot move before them */
        uint64_t s2 = atomic_load_explicit(&acct_seq, memory_order_relaxed);
        if (!(s1 & 1) && s1 == s2) return;
        sched_yield();
    }
}

/* Sinks found hung while sink_lock was held, reported (and their plugins disabled) once the
 * lock is released: the report takes it again. */
typedef struct hung_report {
    const jager_plugin_handle *owner;
    char what[96];
    long ms;
} hung_report;
static hung_report hung_pending[MAX_SINKS];
static int nhung_pending;

static void sink_unlock(void)
{
    hung_report r[MAX_SINKS];
    int n = nhung_pending;
    memcpy(r, hung_pending, (size_t)n * sizeof r[0]);
    nhung_pending = 0;
    pthread_mutex_unlock(&sink_lock);
    for (int i = 0; i < n; i++) jg_plugin_mark_hung(r[i].owner, r[i].what, r[i].ms);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t wake;                /* collector waits here: posted by flushers, stop, and signal
                                     handlers (sem_post is async-signal-safe) */
static pthread_cond_t done;       /* flushers wait here */
static _Atomic(int) sig_req;      /* JG_SIGREQ_*: what a signal handler asked for */
static _Atomic(int) sig_done;     /* set when that is done */
/* set once, before the first collector starts; read by producers (the watermark wake) and
 * signal handlers without the life lock, so atomic */
static _Atomic int cv_ready;
static pthread_t thread;
static int running, stopping;
static uint64_t flush_req, flush_done;

/* Drain state: used by whichever thread drains, serialised by drain_lock. */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(uint64_t) written, sink_drops;
static uint64_t last_sink_flush_ns, written_at_flush; /* collector thread only */

static void acct_copy(void *arg)
{
    jg_collector_acct *a = arg;
    a->written = acct_get(&written);
    a->drained = acct_get(&drained);
    a->drop_reports = acct_get(&drop_reports);
    a->sink_drops = acct_get(&sink_drops);
}

void jg_collector_accounting(jg_collector_acct *out) { acct_read(acct_copy, out); }
uint64_t jg_collector_written(void) { return atomic_load_explicit(&written, memory_order_relaxed); }
uint32_t jg_collector_sink_count(void) { return atomic_load_explicit(&ncounts, memory_order_acquire); }
void jg_collector_sinks_new_run(void)
{
    pthread_mutex_lock(&sink_lock);
    atomic_store_explicit(&ncounts, (uint32_t)nsinks, memory_order_release); /* 0 unless added before init */
    pthread_mutex_unlock(&sink_lock);
}

static void sink_copy(void *arg)
{
    jager_sink_stat *v = arg;
    sink_count *k = &counts[v->index];
    v->events_delivered = acct_get(&k->delivered);
    v->events_failed = acct_get(&k->failed);
    v->batches_failed = acct_get(&k->batches_failed);
}

jager_status jager_sink_stats(uint32_t index, jager_sink_stat *out)
{
    if (!out || out->struct_size < offsetof(jager_sink_stat, batches_failed) + sizeof out->batches_failed)
        return jg_error(JAGER_E_INVALID, "jager_sink_stats: out is NULL or struct_size too small");
    if (index >= jg_collector_sink_count())
        return jg_error(JAGER_E_NOTFOUND, "jager_sink_stats: no sink %u (this run has %u)", index, jg_collector_sink_count());
    jager_sink_stat v;
    memset(&v, 0, sizeof v);
    v.struct_size = out->struct_size;
    v.index = index;
    /* No lock: the file sink reads this from its own flush and close, which run under the
     * sinks' lock. The name was written before ncounts published it (release). */
    memcpy(v.name, counts[index].name, sizeof v.name);
    acct_read(sink_copy, &v);
    memcpy(out, &v, out->struct_size < sizeof v ? out->struct_size : sizeof v);
    return JAGER_OK;
}

static jager_status sink_add(const jager_sink *sink, int reports_itself, const jager_plugin_handle *owner);
jager_status jg_sink_add(const jager_sink *sink) { return sink_add(sink, 0, NULL); }
jager_status jg_sink_add_owned(const jager_sink *sink, const jager_plugin_handle *owner) { return sink_add(sink, 0, owner); }

void jg_sinks_disable_owner(const jager_plugin_handle *owner)
{
    pthread_mutex_lock(&sink_lock);
    for (int i = 0; i < nsinks; i++)
        if (owner && sinks[i].owner == owner) sinks[i].hung = 1;
    pthread_mutex_unlock(&sink_lock);
}
jager_status jg_sink_add_self_reporting(const jager_sink *sink) { return sink_add(sink, 1, NULL); }

static jager_status sink_add(const jager_sink *sink, int reports_itself, const jager_plugin_handle *owner)
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
        sink_count *k = &counts[nsinks];
        snprintf(k->name, sizeof k->name, "%s", sink->name ? sink->name : "?");
        atomic_store_explicit(&k->delivered, 0, memory_order_relaxed);
        atomic_store_explicit(&k->failed, 0, memory_order_relaxed);
        atomic_store_explicit(&k->batches_failed, 0, memory_order_relaxed);
        sinks[nsinks].owner = owner;
        nsinks++;
        atomic_store_explicit(&ncounts, (uint32_t)nsinks, memory_order_release);
    }
    int index = nsinks - 1;
    pthread_mutex_unlock(&sink_lock);
    if (st == JAGER_OK) { /* the file names each sink of its STATS accounting */
        char key[32];
        snprintf(key, sizeof key, "jager.sink.%d", index);
        jg_meta_set(key, sink->name ? sink->name : "?");
    }
    return st;
}

jager_status jager_sink_add(const jager_sink *sink) { return jg_sink_add(sink); }

static uint8_t *buf;
static size_t buf_cap;

/* ---- a plugin's sink is called bounded (issue 16 item 11) ----
 * Its callbacks run on its own worker thread (plugin_call.c) while the drainer waits at
 * most JAGER_PLUGIN_TIMEOUT_MS: a write that never returns would otherwise stall every
 * drain, and so jager_flush(), jager_shutdown() and exit. Past the limit the sink is never
 * called again (its batches count as its failures), its plugin is disabled and reported
 * once; the stuck worker keeps the batch it reads (the drain buffer is handed to it and
 * the drainer continues with a copy). The core's and the program's sinks are called
 * directly. */
enum { SINK_OPEN, SINK_WRITE, SINK_FLUSH, SINK_CLOSE };
static const char *const sink_call_names[] = {"open", "write", "flush", "close"};

typedef struct sink_job {
    int what;
    jager_sink s;
    jager_batch b;
    jager_status st;
    uint8_t *kept; /* the drain buffer handed over with a stuck write */
} sink_job;

static void sink_job_run(void *p)
{
    sink_job *j = p;
    j->st = JAGER_OK;
    switch (j->what) {
    case SINK_OPEN: j->st = j->s.open(j->s.ctx); break;
    case SINK_WRITE: j->st = j->s.write(j->s.ctx, &j->b); break;
    case SINK_FLUSH: j->s.flush(j->s.ctx); break;
    default: j->s.close(j->s.ctx);
    }
}

static void sink_job_free(void *p)
{
    sink_job *j = p;
    free(j->kept);
    free(j);
}

/* Caller holds sink_lock; the callback exists. The callback's status (JAGER_OK for
 * flush/close); JAGER_E_IO when it did not return: the sink is then marked hung and its
 * plugin's report queued, and for a write *b's data (the drain buffer) replaced by a copy
 * (NULL when none could be made). */
static jager_status sink_call(sink_slot *k, int what, jager_batch *b)
{
    long ms = k->owner ? jg_plugin_timeout_ms() : 0;
    sink_job *j = NULL;
    if (ms > 0 && !k->worker) k->worker = jg_worker_new();
    if (ms > 0 && k->worker) j = calloc(1, sizeof *j);
    if (!j) { /* unbounded, here */
        switch (what) {
        case SINK_OPEN: return k->s.open(k->s.ctx);
        case SINK_WRITE: return k->s.write(k->s.ctx, b);
        case SINK_FLUSH: k->s.flush(k->s.ctx); return JAGER_OK;
        default: k->s.close(k->s.ctx); return JAGER_OK;
        }
    }
    j->what = what;
    j->s = k->s;
    if (b) j->b = *b;
    int proxy = (jg_collector_is_self() ? JG_PROXY_COLLECTOR : 0) | (jg_life_held() ? JG_PROXY_LIFE : 0);
    if (jg_worker_call(k->worker, sink_job_run, j, proxy, ms) == 0) {
        jager_status st = j->st;
        free(j);
        return st;
    }
    k->hung = 1;
    if (what == SINK_WRITE && b->data == buf && buf) {
        uint8_t *copy = malloc(buf_cap);
        if (copy) memcpy(copy, buf, b->bytes);
        j->kept = buf;
        buf = copy;
        buf_cap = copy ? buf_cap : 0;
        b->data = copy;
    }
    jg_worker_abandon(k->worker, sink_job_free, j);
    k->worker = NULL;
    if (nhung_pending < MAX_SINKS) {
        hung_report *r = &hung_pending[nhung_pending++];
        r->owner = k->owner;
        snprintf(r->what, sizeof r->what, "sink '%.40s' %s", k->s.name ? k->s.name : "?", sink_call_names[what]);
        r->ms = ms;
    }
    return JAGER_E_IO;
}

/* Caller holds sink_lock. */
static void open_pending(void)
{
    for (int i = 0; i < nsinks; i++) {
        if (sinks[i].opened) continue;
        sinks[i].opened = 1;
        if (sinks[i].hung) {
            sinks[i].opened = -1;
            continue;
        }
        if (sinks[i].s.open && sink_call(&sinks[i], SINK_OPEN, NULL) != JAGER_OK) {
            if (sinks[i].hung) {
                sinks[i].opened = -1;
                continue;
            }
            char msg[160];
            snprintf(msg, sizeof msg, "sink '%s' failed to open; its events are counted as failed in its sink statistics",
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

/* Hand one batch (\p events, \p from_ring of them drained from the ring, the rest drop
 * records) to every sink. Each sink counts the batch's events as delivered or failed;
 * JAGER_DROP_SINK counts the events no sink took (every sink failed them). */
static void write_batch(uint32_t thread_index, size_t len, uint64_t events, uint64_t from_ring)
{
    jager_batch b = {sizeof b, thread_index, buf, len, events};
    int taken = 0;
    uint8_t ok[MAX_SINKS];
    pthread_mutex_lock(&sink_lock);
    open_pending();
    for (int i = 0; i < nsinks; i++) {
        ok[i] = sinks[i].opened > 0 && !sinks[i].hung && b.data && sink_call(&sinks[i], SINK_WRITE, &b) == JAGER_OK;
        taken |= ok[i];
        if (ok[i] || sinks[i].opened < 0) continue;
        if (sinks[i].hung) sinks[i].failed_reported = 1; /* said as hung instead */
        if (sinks[i].failed_reported) continue;
        sinks[i].failed_reported = 1;
        char msg[160];
        snprintf(msg, sizeof msg, "sink '%s' failed to write; its lost events are counted as failed in its sink statistics",
                 sinks[i].s.name ? sinks[i].s.name : "?");
        sink_unlock();
        jg_diag("core", JAGER_SEV_WARN, msg);
        pthread_mutex_lock(&sink_lock);
    }
    /* the batch's counts, together (a reader sees all of them or none) */
    acct_begin();
    for (int i = 0; i < nsinks; i++) {
        sink_count *k = &counts[i];
        if (ok[i]) {
            acct_add(&k->delivered, events);
        } else {
            acct_add(&k->failed, events);
            acct_add(&k->batches_failed, 1);
        }
    }
    if (!taken && nsinks) acct_add(&sink_drops, events);
    acct_add(&drained, from_ring);
    acct_add(&drop_reports, events - from_ring);
    acct_add(&written, events);
    acct_end();
    sink_unlock();
}

/* Free the rings whose threads are gone and that are drained, unless a drain is walking
 * the list right now (the next drain reaps them then). Caller holds the rings lock. */
void jg_rings_reap_idle(void)
{
    if (pthread_mutex_trylock(&drain_lock) != 0) return;
    /* No run is being collected: no drain will report what an orphaned ring lost. */
    for (jg_ring *r = jg_rings_head(); r; r = r->next)
        if (atomic_load_explicit(&r->orphaned, memory_order_acquire)) r->said_all = 1;
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
        /* Orphaned before this drain (acquire: every event and drop of its thread is
         * visible), it is said in full once the drain and the drop report below are done. */
        int orphan = atomic_load_explicit(&r->orphaned, memory_order_acquire);
        uint64_t events = 0;
        size_t len = jg_ring_drain(r, &buf, &buf_cap, &events);
        uint64_t from_ring = events;
        len = append_drops(r, len, &events);
        if (len) write_batch(r->thread, len, events, from_ring);
        if (orphan) r->said_all = 1;
    }
    jg_rings_lock();
    jg_rings_reap();
    jg_rings_unlock();
    if (flush_sinks) {
        pthread_mutex_lock(&sink_lock);
        open_pending();
        for (int i = 0; i < nsinks; i++)
            if (sinks[i].opened > 0 && !sinks[i].hung && sinks[i].s.flush) (void)sink_call(&sinks[i], SINK_FLUSH, NULL);
        sink_unlock();
    }
    pthread_mutex_unlock(&drain_lock);
}

/* Close every sink after a last flush (the final drain is the caller's). */
static void finish_sinks(void)
{
    pthread_mutex_lock(&sink_lock);
    open_pending();
    for (int i = 0; i < nsinks; i++) {
        sink_slot *k = &sinks[i];
        if (k->opened > 0 && !k->hung && k->s.flush) (void)sink_call(k, SINK_FLUSH, NULL);
        /* every sink is closed, also one whose open failed: close frees what it holds; a
         * hung one is not called again (its plugin is disabled) */
        if (k->opened != 0 && !k->hung && k->s.close) (void)sink_call(k, SINK_CLOSE, NULL);
        jg_worker_free(k->worker);
        k->worker = NULL;
    }
    nsinks = 0;
    sink_unlock();
}

void jg_collector_signal(int what)
{
    atomic_store_explicit(&sig_done, 0, memory_order_relaxed);
    atomic_store_explicit(&sig_req, what, memory_order_release);
    if (atomic_load_explicit(&cv_ready, memory_order_acquire)) sem_post(&wake);
}

void jg_collector_wake(void)
{
    if (atomic_load_explicit(&cv_ready, memory_order_acquire)) sem_post(&wake);
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

/* The collector's own CPU time this run (drain, compression, writing), for the file's
 * self-cost: the collector thread's CPU clock, sampled each round and at its exit, plus the
 * final drain that jg_collector_stop() does on the stopping thread. */
static _Atomic(uint64_t) cpu_ns, cpu_base_ns;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void note_cpu(void)
{
    atomic_store_explicit(&cpu_ns, atomic_load_explicit(&cpu_base_ns, memory_order_relaxed) + thread_cpu_ns(),
                          memory_order_relaxed);
}

/* While jg_collector_stop() does the collector's last work on the stopping thread (final
 * drain, symbols, sinks' last blocks), that thread's clock counts too, live. */
static _Atomic(int) stop_live;
static pthread_t stop_owner;

uint64_t jg_collector_cpu_ns(void)
{
    if (atomic_load_explicit(&stop_live, memory_order_acquire) && pthread_equal(pthread_self(), stop_owner))
        return atomic_load_explicit(&cpu_base_ns, memory_order_relaxed) + thread_cpu_ns();
    return atomic_load_explicit(&cpu_ns, memory_order_relaxed);
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
        note_cpu();
        pthread_mutex_lock(&mu);
        if (requested) {
            flush_done = want;
            pthread_cond_broadcast(&done);
        }
    }
    pthread_mutex_unlock(&mu);
    note_cpu();
    return NULL;
}

jager_status jg_collector_start(void)
{
    if (!atomic_load_explicit(&cv_ready, memory_order_relaxed)) {
        sem_init(&wake, 0, 0);
        pthread_cond_init(&done, NULL);
        atomic_store_explicit(&cv_ready, 1, memory_order_release);
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
        r->said_all = atomic_load_explicit(&r->orphaned, memory_order_relaxed); /* not this run's */
    }
    jg_rings_reap();
    jg_rings_unlock();
    pthread_mutex_unlock(&drain_lock);
    atomic_store_explicit(&written, 0, memory_order_relaxed);
    atomic_store_explicit(&sink_drops, 0, memory_order_relaxed);
    atomic_store_explicit(&drained, 0, memory_order_relaxed);
    atomic_store_explicit(&drop_reports, 0, memory_order_relaxed);
    pthread_mutex_lock(&sink_lock);
    open_pending();
    sink_unlock();
    pthread_mutex_lock(&mu);
    stopping = 0;
    flush_req = flush_done = 0;
    last_sink_flush_ns = jg_now_ns();
    written_at_flush = 0;
    atomic_store_explicit(&cpu_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&cpu_base_ns, 0, memory_order_relaxed);
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

int jg_collector_is_self(void)
{
    pthread_mutex_lock(&mu);
    int self = running && pthread_equal(pthread_self(), thread);
    pthread_mutex_unlock(&mu);
    return self;
}

jager_status jg_collector_flush(void)
{
    pthread_mutex_lock(&mu);
    if (!running || pthread_equal(pthread_self(), thread) || (jg_call_proxy() & JG_PROXY_COLLECTOR)) {
        /* No collector, or called from a plugin's flush made for the collector: drain here. */
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
    if (atomic_load_explicit(&cv_ready, memory_order_acquire)) sem_post(&wake);
    pthread_mutex_unlock(&mu);
    if (was_running) pthread_join(thread, NULL);
    pthread_mutex_lock(&mu);
    running = 0;
    flush_done = flush_req;
    pthread_cond_broadcast(&done);
    pthread_mutex_unlock(&mu);
    atomic_store_explicit(&cpu_base_ns, jg_collector_cpu_ns() - thread_cpu_ns(), memory_order_relaxed);
    stop_owner = pthread_self();
    atomic_store_explicit(&stop_live, 1, memory_order_release);
    drain_all(0);
    /* Only now may exiting threads free their rings themselves: the walk above is over. */
    jg_rings_set_collector(0);
    /* Name what no binding named, so the file carries every stack's frames. */
    jg_symbols_resolve_native();
    finish_sinks();
    note_cpu(); /* the collector's time plus this last work's */
    atomic_store_explicit(&stop_live, 0, memory_order_release);
    pthread_mutex_lock(&drain_lock);
    free(buf);
    buf = NULL;
    buf_cap = 0;
    pthread_mutex_unlock(&drain_lock);
}

/* A child made by fork(): the collector thread, the flushers and whoever held these locks
 * are the parent's and do not exist here. The parent's sinks are forgotten without a call
 * (their state and descriptors are the parent's: a write, flush or close from here would
 * put the parent's bytes in its file twice); the drain buffer too (the collector may have
 * been growing it). The child is single-threaded while this runs. */
void jg_collector_fork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    sink_lock = m0;
    mu = m0;
    drain_lock = m0;
    /* Forgotten, not freed: still reachable from here (a leak checker in the child must not
     * report what the parent owns): the slots keep their contexts until a sink of the
     * child's own takes one, the buffer stays in left_by_fork. */
    static uint8_t *volatile left_by_fork;
    nsinks = 0;
    left_by_fork = buf;
    (void)left_by_fork; /* a volatile store: kept */
    buf = NULL;
    buf_cap = 0;
    running = stopping = 0;
    flush_req = flush_done = 0;
    if (atomic_load_explicit(&cv_ready, memory_order_relaxed)) {
        sem_init(&wake, 0, 0);
        pthread_cond_init(&done, NULL);
    }
    atomic_store_explicit(&sig_req, 0, memory_order_relaxed);
    atomic_store_explicit(&sig_done, 0, memory_order_relaxed);
    atomic_store_explicit(&stop_live, 0, memory_order_relaxed);
}
