/*
 * gc_internal.h — what the gc plugin's files offer each other. Never installed.
 *
 * Files (one concern each):
 *   gc_plugin.c   descriptor, options, event types, init/start/flush/stop/shutdown
 *   gc_julia.c    finding the Julia runtime in the process (dlsym) and reading its counters
 *   gc_hooks.c    the pre/post GC callbacks (C, allocation-free) and hooking/unhooking
 *   gc_queue.c    the bounded lock-free queue carrying finished pauses out of the callbacks
 *   gc_drain.c    off the callbacks: intern stacks, emit gc.pause, per-site GC aggregates
 *   gc_thread.c   the plugin thread: waits for Julia (zero-code mode), samples, drains
 *
 * Data flow: GC callback (triggering thread) → in-flight slot → queue → drain (plugin
 * thread, flush or stop: takes locks, allocates) → host->stack_intern + host->emit.
 */
#ifndef JAGER_GC_INTERNAL_H
#define JAGER_GC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "jager_plugin.h"

/** Deepest trigger stack kept (frames after the plugin's own). */
#define GC_MAX_DEPTH 128
/** Open sites of the triggering thread kept per pause (innermost first). */
#define GC_MAX_SITES 32
/** Threads that may be inside a collection's pre→post at once (Julia runs one). */
#define GC_INFLIGHT 8

/* ---- gc_julia.c ---------------------------------------------------------------------- */

/** jl_gc_num_t of Julia 1.5/1.6 (verified on 1.5.3: 104 bytes, total_time at 64). The
 *  padding absorbs fields later versions append: the struct is returned through a hidden
 *  pointer, so a larger buffer is safe while a smaller one would be overwritten. */
typedef struct gc_jl_num {
    int64_t allocd, deferred_alloc, freed;
    uint64_t malloc, realloc, poolalloc, bigalloc, freecall;
    uint64_t total_time, total_allocd, since_sweep;
    size_t interval;
    int32_t pause, full_sweep;
    uint8_t pad[512];
} gc_jl_num;

typedef void (*gc_jl_cb)(int collection);

/** The Julia runtime functions the plugin uses; every pointer but the two setters may be NULL. */
typedef struct gc_julia {
    void (*set_cb_pre)(gc_jl_cb cb, int enable);   /* jl_gc_set_cb_pre_gc (required) */
    void (*set_cb_post)(gc_jl_cb cb, int enable);  /* jl_gc_set_cb_post_gc (required) */
    int (*is_initialized)(void);                   /* jl_is_initialized */
    int64_t (*live_bytes)(void);                   /* jl_gc_live_bytes */
    void (*get_total_bytes)(int64_t *out);         /* jl_gc_get_total_bytes */
    uint64_t (*total_hrtime)(void);                /* jl_gc_total_hrtime: GC ns so far */
    gc_jl_num (*num)(void);                        /* jl_gc_num, only where the layout is known */
    int major, minor, patch;                       /* jl_ver_*, -1 when unknown */
} gc_julia;

/** Resolve the runtime with dlsym(RTLD_DEFAULT). Returns 0 when this is no Julia process. */
int gc_julia_find(gc_julia *jl);
/** 1 when Julia is initialised (or cannot tell: no jl_is_initialized). */
int gc_julia_ready(const gc_julia *jl);
/** Heap counters, -1/0 where the runtime lacks the function. Allocation-free. */
int64_t gc_julia_live(const gc_julia *jl);
int64_t gc_julia_total(const gc_julia *jl);
/** Collections and full sweeps so far (jl_gc_num); returns 0 when unavailable. */
int gc_julia_counts(const gc_julia *jl, uint64_t *collections, uint64_t *full_sweeps);
/** Resident set size from /proc/self/statm through an fd kept open; 0 on error. */
uint64_t gc_rss_bytes(int statm_fd);

/* ---- gc_queue.c ---------------------------------------------------------------------- */

/** One finished pause as the callbacks saw it. */
typedef struct gc_pause {
    uint64_t start_ns, end_ns;
    uint64_t plugin_ns;          /* time spent in the plugin's pre+post bodies */
    uint64_t allocd, freed, live_after;
    uint64_t os_tid;
    uint32_t requested, full;
    uint32_t nips, nsites;
    uint64_t ips[GC_MAX_DEPTH];  /* return addresses, innermost first */
    jager_site sites[GC_MAX_SITES];
} gc_pause;

typedef struct gc_queue_slot {
    _Atomic(uint64_t) seq;
    gc_pause p;
} gc_queue_slot;

/** Bounded multi-producer queue (Vyukov): producers never block or allocate; a full
 *  queue refuses and the caller counts the loss. Consumers serialise on their own lock. */
typedef struct gc_queue {
    gc_queue_slot *slots;
    uint64_t mask;
    char pad0[48];
    _Atomic(uint64_t) enq;
    char pad1[56];
    _Atomic(uint64_t) deq;
} gc_queue;

/** Allocate \p cap slots (a power of two) and touch them so callbacks never fault. */
jager_status gc_queue_init(gc_queue *q, uint32_t cap);
void gc_queue_free(gc_queue *q);
/** Producer: a slot to fill, or NULL when full. Publish it with gc_queue_publish. */
gc_pause *gc_queue_reserve(gc_queue *q, uint64_t *ticket);
void gc_queue_publish(gc_queue *q, uint64_t ticket);
/** Consumer: the oldest published pause or NULL; hand it back with gc_queue_release. */
gc_pause *gc_queue_peek(gc_queue *q, uint64_t *ticket);
void gc_queue_release(gc_queue *q, uint64_t ticket);

/* ---- shared state ------------------------------------------------------------------- */

/** Per-site GC time (index = site id). */
typedef struct gc_site_agg {
    uint64_t gc_ns, pauses;
} gc_site_agg;

/** What pre leaves for post on the same thread. */
typedef struct gc_inflight {
    _Atomic(uintptr_t) owner; /* pthread_self() of the thread between pre and post, 0 free */
    uint64_t start_ns, pre_ns;
    int64_t live_before, total_before;
    uint64_t full_before;
    int have_counts;
    uint32_t requested, nips, nsites;
    uint64_t os_tid;
    void *raw[GC_MAX_DEPTH + 8];
    jager_site sites[GC_MAX_SITES];
} gc_inflight;

typedef struct gc_state {
    const jager_host_api *host;
    jager_plugin_handle *self;
    gc_julia jl;
    uint16_t t_pause, t_site_time, t_sample, t_stall;
    uint32_t depth, interval_ms, queue_cap;
    uint32_t eager;              /* 1: drain right after each collection (JAGER_GC_EAGER) */
    uintptr_t own_lo, own_hi; /* the plugin's own code: its frames are cut from stacks */

    gc_queue q;
    gc_inflight inflight[GC_INFLIGHT];
    _Atomic(int64_t) last_total;   /* total bytes at the previous collection's start */
    _Atomic(uint64_t) lost_full;   /* pauses lost: queue full */
    _Atomic(uint64_t) unpaired;    /* post without pre (hooked mid-collection) or no in-flight slot */
    _Atomic(uint64_t) seen;        /* pauses recorded into the queue */
    _Atomic(int) hooked;           /* callbacks registered with Julia */

    /* the plugin thread */
    pthread_t thread;
    int thread_running;
    int wake_fd;                   /* eventfd: a finished pause or a stop request wakes the thread */
    _Atomic(int) stop_requested;
    int statm_fd;

    /* the drain side (plugin thread, collector's flush, stop), under drain_lock */
    pthread_mutex_t drain_lock;
    gc_site_agg *sites;
    uint32_t nsites;               /* capacity of sites[] */
    uint64_t emitted, total_gc_ns;
} gc_state;

/** The one instance (callbacks take no context argument). */
extern gc_state gc_g;

/* ---- gc_hooks.c ---------------------------------------------------------------------- */

/** Register the callbacks with Julia and arm them. [from start or the plugin thread] */
void gc_hooks_install(gc_state *st);
/** Disarm, unregister and wait until no callback body runs. Idempotent. */
void gc_hooks_remove(gc_state *st);
/** Callback invocations while armed / while not armed (late: after unhooking). */
void gc_hooks_counts(uint64_t *armed, uint64_t *late);
/** Find the plugin's own code range (st->own_lo/hi). [init] */
void gc_hooks_locate_self(gc_state *st);
/** The callbacks (exposed for the self-test extension and benchmarks). */
void gc_hook_pre(int collection);
void gc_hook_post(int collection);

/* ---- gc_drain.c ---------------------------------------------------------------------- */

/** Intern stacks and emit every queued pause; update site aggregates. Takes drain_lock. */
void gc_drain(gc_state *st);
/** Emit gc.site_time for every site that saw GC time. Takes drain_lock. */
void gc_emit_site_times(gc_state *st);
/** Emit one gc.sample with the runtime's counters now. */
void gc_sample(gc_state *st);
/** Copy a site's aggregate (0s when none). Takes drain_lock. */
void gc_site_get(gc_state *st, jager_site site, uint64_t *gc_ns, uint64_t *pauses);
void gc_drain_free(gc_state *st);

/* ---- gc_thread.c --------------------------------------------------------------------- */

/** Start the plugin thread (waits for Julia when not yet initialised, then samples and drains). */
jager_status gc_thread_start(gc_state *st);
/** Ask it to stop and join it. Idempotent. */
void gc_thread_stop(gc_state *st);
/** Wake the thread to drain now (from a GC callback: one write(2), no lock, no allocation). */
void gc_thread_wake(gc_state *st);

#endif
