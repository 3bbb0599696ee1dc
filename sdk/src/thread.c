/* The calling thread's state: one initial-exec TLS pointer (the only TLS the hot path
 * touches), a ring created on the thread's first event, site aggregates, and the exit hook
 * that hands the ring to the collector and folds the aggregates into the retired totals. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

__thread jg_tls *jg_tls_ptr __attribute__((tls_model("initial-exec")));

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER; /* live list, retired data, rings */
static jg_tls *live_head;
static jg_ring *rings_head;
static int collector_running;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

/* Aggregates of threads that exited, and counters of rings that were freed. */
static jg_agg_dir retired_dir;
static jg_retired_counts retired;


void jg_rings_lock(void) { pthread_mutex_lock(&threads_lock); }
void jg_rings_unlock(void) { pthread_mutex_unlock(&threads_lock); }
jg_ring *jg_rings_head(void) { return rings_head; }

void jg_rings_set_collector(int running)
{
    pthread_mutex_lock(&threads_lock);
    collector_running = running;
    pthread_mutex_unlock(&threads_lock);
}

/* Caller holds threads_lock. */
static void retire_ring_locked(jg_ring *r)
{
    retired.emitted += atomic_load_explicit(&r->emitted, memory_order_relaxed);
    retired.dropped_full += atomic_load_explicit(&r->dropped_full, memory_order_relaxed);
    retired.dropped_large += atomic_load_explicit(&r->dropped_large, memory_order_relaxed);
    retired.overwritten += atomic_load_explicit(&r->overwritten, memory_order_relaxed);
}

void jg_rings_reap(void)
{
    jg_ring **pp = &rings_head;
    while (*pp) {
        jg_ring *r = *pp;
        if (jg_ring_reapable(r)) {
            *pp = r->next;
            retire_ring_locked(r);
            jg_ring_free(r);
        } else {
            pp = &r->next;
        }
    }
}

void jg_retired_counts_get(jg_retired_counts *out)
{
    pthread_mutex_lock(&threads_lock);
    *out = retired;
    pthread_mutex_unlock(&threads_lock);
}

/* ---- site aggregates ---- */
void jg_agg_each_chunk(_Atomic(jg_agg_mid *) *dir, void (*fn)(jager_site first, jg_site_agg *chunk, void *arg), void *arg)
{
    for (uint32_t d = 0; d < JG_AGG_DIR; d++) {
        jg_agg_mid *mid = atomic_load_explicit(&dir[d], memory_order_acquire);
        if (!mid) continue;
        for (uint32_t m = 0; m < JG_AGG_MID; m++) {
            jg_site_agg *c = atomic_load_explicit(&(*mid)[m], memory_order_acquire);
            if (c) fn(jg_agg_chunk_site(d, m), c, arg);
        }
    }
}

/* The slot of \p site, allocating its mid and chunk on first use. */
static jg_site_agg *agg_slot_create(_Atomic(jg_agg_mid *) *dir, jager_site site)
{
    jg_site_agg *a = jg_agg_find(dir, site);
    uint32_t d = jg_agg_dir_of(site);
    if (a || d >= JG_AGG_DIR) return a;
    jg_agg_mid *mid = atomic_load_explicit(&dir[d], memory_order_acquire);
    if (!mid) {
        mid = calloc(1, sizeof *mid);
        if (!mid) return NULL;
        atomic_store_explicit(&dir[d], mid, memory_order_release);
    }
    jg_site_agg *chunk = calloc(JG_SITE_CHUNK, sizeof *chunk);
    if (!chunk) return NULL;
    for (uint32_t i = 0; i < JG_SITE_CHUNK; i++) atomic_store_explicit(&chunk[i].min_ns, UINT64_MAX, memory_order_relaxed);
    atomic_store_explicit(&(*mid)[jg_agg_mid_of(site)], chunk, memory_order_release);
    return &chunk[jg_agg_slot_of(site)];
}

static void chunk_free(jager_site first, jg_site_agg *c, void *arg) { free(c); }

static void agg_free(_Atomic(jg_agg_mid *) *dir)
{
    jg_agg_each_chunk(dir, chunk_free, NULL);
    for (uint32_t d = 0; d < JG_AGG_DIR; d++) {
        free(atomic_load_explicit(&dir[d], memory_order_relaxed));
        atomic_store_explicit(&dir[d], NULL, memory_order_relaxed);
    }
}

static void chunk_zero(jager_site first, jg_site_agg *c, void *arg)
{
    for (uint32_t i = 0; i < JG_SITE_CHUNK; i++) {
        jg_site_agg *a = &c[i];
        atomic_store_explicit(&a->calls, 0, memory_order_relaxed);
        atomic_store_explicit(&a->total_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&a->min_ns, UINT64_MAX, memory_order_relaxed);
        atomic_store_explicit(&a->max_ns, 0, memory_order_relaxed);
        atomic_store_explicit(&a->bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&a->errors, 0, memory_order_relaxed);
        atomic_store_explicit(&a->sampled_at, 0, memory_order_relaxed);
        for (int b = 0; b < JAGER_HIST_BUCKETS; b++) atomic_store_explicit(&a->hist[b], 0, memory_order_relaxed);
        atomic_store_explicit(&a->thinned, 0, memory_order_relaxed);
        atomic_store_explicit(&a->dropped, 0, memory_order_relaxed);
        atomic_store_explicit(&a->auto_state, 0, memory_order_relaxed);
        atomic_store_explicit(&a->hot_until, 0, memory_order_relaxed);
    }
}

/* Fold one chunk of an exiting thread's aggregates into the retired ones. Caller holds threads_lock. */
static void chunk_merge_into_retired(jager_site first, jg_site_agg *c, void *arg)
{
    for (uint32_t i = 0; i < JG_SITE_CHUNK; i++) {
        jg_site_agg *a = &c[i];
        uint64_t calls = atomic_load_explicit(&a->calls, memory_order_relaxed);
        uint64_t errs = atomic_load_explicit(&a->errors, memory_order_relaxed);
        if (!calls && !errs) continue;
        jg_site_agg *r = agg_slot_create(retired_dir, first + i);
        if (!r) continue;
        jg_bump(&r->calls, calls);
        jg_bump(&r->total_ns, atomic_load_explicit(&a->total_ns, memory_order_relaxed));
        jg_bump(&r->bytes, atomic_load_explicit(&a->bytes, memory_order_relaxed));
        jg_bump(&r->errors, errs);
        uint64_t mn = atomic_load_explicit(&a->min_ns, memory_order_relaxed);
        uint64_t mx = atomic_load_explicit(&a->max_ns, memory_order_relaxed);
        if (mn < atomic_load_explicit(&r->min_ns, memory_order_relaxed)) atomic_store_explicit(&r->min_ns, mn, memory_order_relaxed);
        if (mx > atomic_load_explicit(&r->max_ns, memory_order_relaxed)) atomic_store_explicit(&r->max_ns, mx, memory_order_relaxed);
        for (int b = 0; b < JAGER_HIST_BUCKETS; b++) jg_bump(&r->hist[b], atomic_load_explicit(&a->hist[b], memory_order_relaxed));
        jg_bump(&r->thinned, atomic_load_explicit(&a->thinned, memory_order_relaxed));
        jg_bump(&r->dropped, atomic_load_explicit(&a->dropped, memory_order_relaxed));
    }
}

jg_site_agg *jg_retired_agg(jager_site site) { return jg_agg_find(retired_dir, site); }

void jg_retired_reset(void)
{
    pthread_mutex_lock(&threads_lock);
    jg_agg_each_chunk(retired_dir, chunk_zero, NULL);
    memset(&retired, 0, sizeof retired);
    jg_paths_reset_retired_locked();
    pthread_mutex_unlock(&threads_lock);
}

jg_site_agg *jg_tls_site_agg(jg_tls *t, jager_site site) { return agg_slot_create(t->agg_dir, site); }

/* ---- thread life ---- */
static void on_thread_exit(void *arg)
{
    jg_tls *t = arg;
    if (!t) return;
    jg_task_mail(t); /* posts for it go with it */
    pthread_mutex_lock(&threads_lock);
    if (t->prev_all) t->prev_all->next_all = t->next_all;
    else if (live_head == t) live_head = t->next_all;
    if (t->next_all) t->next_all->prev_all = t->prev_all;
    if (t->generation == atomic_load_explicit(&jg_generation, memory_order_relaxed)) {
        jg_agg_each_chunk(t->agg_dir, chunk_merge_into_retired, NULL);
        retired.no_ring += atomic_load_explicit(&t->no_ring_drops, memory_order_relaxed);
        retired.spans += atomic_load_explicit(&t->spans_ended, memory_order_relaxed);
        retired.cross_thread += atomic_load_explicit(&t->cross_thread, memory_order_relaxed);
    }
    jg_paths_retire_locked(t);
    if (t->ring) {
        /* The collector drains what the thread wrote, then frees the ring. */
        jg_ring_orphan(t->ring);
        if (!collector_running) jg_rings_reap_idle();
    }
    pthread_mutex_unlock(&threads_lock);
    agg_free(t->agg_dir);
    jg_tls_ptr = NULL;
    free(t->deep);
    free(t->foreign);
    free(t);
}

static void make_exit_key(void) { exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0; }

/* (Re)arm the thread's state for the current run: a ring sized by the current config.
 * Runs on the owning thread only, so swapping its ring races with no producer. */
static void arm(jg_tls *t, uint32_t gen)
{
    pthread_mutex_lock(&threads_lock);
    if (t->ring) {
        jg_ring_orphan(t->ring);
        t->ring = NULL;
    }
    if (t->generation != gen) {
        jg_agg_each_chunk(t->agg_dir, chunk_zero, NULL);
        atomic_store_explicit(&t->no_ring_drops, 0, memory_order_relaxed);
        atomic_store_explicit(&t->spans_ended, 0, memory_order_relaxed);
        jg_paths_rearm(t);
        atomic_store_explicit(&t->cross_thread, 0, memory_order_relaxed);
        t->depth = 0; /* spans still open from an earlier run are not this run's */
        t->deep_hole = 0;
        t->nhooked = 0; /* hooked spans of an earlier run end untold */
        t->task = 0; /* a new run's ring has no task record yet */
        t->nforeign = 0;
    }
    t->generation = gen;
    uint32_t live = 0;
    for (jg_ring *r = rings_head; r; r = r->next)
        if (!atomic_load_explicit(&r->orphaned, memory_order_relaxed)) live++;
    if (live < JG_CFG(max_threads)) {
        jg_ring *r = jg_ring_new(JG_CFG(ring_bytes), JG_CFG(ring_mode), t->thread);
        if (r) {
            r->next = rings_head;
            rings_head = r;
            t->ring = r;
        }
    }
    if (!collector_running) jg_rings_reap_idle();
    pthread_mutex_unlock(&threads_lock);
}

static jg_tls *create(void)
{
    pthread_once(&exit_key_once, make_exit_key);
    jg_tls *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    char name[32] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    t->thread = jg_thread_register((uint64_t)syscall(SYS_gettid), name);
    pthread_mutex_lock(&threads_lock);
    t->next_all = live_head;
    if (live_head) live_head->prev_all = t;
    live_head = t;
    pthread_mutex_unlock(&threads_lock);
    if (exit_key_ok) pthread_setspecific(exit_key, t);
    jg_tls_ptr = t;
    return t;
}

jg_tls *jg_tls_get(void)
{
    jg_tls *t = jg_tls_ptr;
    uint32_t gen = atomic_load_explicit(&jg_generation, memory_order_acquire);
    if (JG_LIKELY(t && t->generation == gen)) return t;
    if (!t && !(t = create())) return NULL;
    arm(t, gen);
    return t;
}

jg_tls *jg_tls_peek(void) { return jg_tls_ptr; }

void jg_tls_foreach(void (*fn)(jg_tls *t, void *arg), void *arg)
{
    uint32_t gen = atomic_load_explicit(&jg_generation, memory_order_relaxed);
    pthread_mutex_lock(&threads_lock);
    for (jg_tls *t = live_head; t; t = t->next_all)
        if (t->generation == gen) fn(t, arg);
    pthread_mutex_unlock(&threads_lock);
}

/* ---- fork ---- */
int jg_threads_fork_trylock(void) { return pthread_mutex_trylock(&threads_lock) == 0; }
void jg_threads_fork_unlock(void) { pthread_mutex_unlock(&threads_lock); }

void jg_threads_fork_child(int fresh)
{
    if (!fresh) { /* the lock, which a thread gone here may hold, made anew */
        static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
        threads_lock = m0;
        return;
    }
    /* Every ring holds the parent's events (the forking thread's too): emptied, orphaned and
     * freed; the forking thread gets a new ring at its first event of the child's run. */
    jg_tls *me = jg_tls_ptr;
    for (jg_ring *r = rings_head; r; r = r->next) {
        atomic_store_explicit(&r->tail, atomic_load_explicit(&r->head, memory_order_relaxed), memory_order_relaxed);
        jg_ring_orphan(r);
        r->said_all = 1; /* the parent's run: nothing of it is the child's to report */
    }
    if (me) me->ring = NULL;
    jg_rings_reap();
    /* The parent's other threads do not exist here: only the forking one stays listed. The
     * others' states are left as they are, on a list of their own (reachable: a leak
     * checker in the child must not report them), their rings gone. */
    static jg_tls *volatile left_by_fork;
    if (me) {
        if (me->prev_all) me->prev_all->next_all = me->next_all;
        else if (live_head == me) live_head = me->next_all;
        if (me->next_all) me->next_all->prev_all = me->prev_all;
    }
    for (jg_tls *t = live_head; t; t = t->next_all) t->ring = NULL;
    left_by_fork = live_head;
    (void)left_by_fork; /* a volatile store: kept */
    live_head = me;
    collector_running = 0;
    if (!me) return;
    me->next_all = me->prev_all = NULL;
    me->depth = 0; /* the child's spans start a tree of their own */
    char name[32] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    uint32_t idx = jg_thread_register((uint64_t)syscall(SYS_gettid), name); /* a new thread id */
    if (idx) me->thread = idx;
}

int jg_host_thread_start(pthread_t *out, int detached, void *(*fn)(void *), void *arg)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (detached) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0 && out) *out = t;
    return rc;
}

void jg_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}
