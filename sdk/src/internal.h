/*
 * internal.h — what the recorder's modules offer each other. Never installed.
 *
 * sdk/src is the recorder; sdk/src/reader/ is the `.jgr` reader, which includes only
 * file_format.h, status.h and containers.h from here (docs/internals.md draws the layers).
 *
 * Modules (one concern each):
 *   clock.c      TSC calibration, jager_now_ns
 *   config.c     defaults, JAGER_* environment, jager_config copy
 *   status.c     jager_strerror, last error, jg_error (status.h)
 *   table.c      append-only chunked tables (stable pointers, lock-free reads)
 *   containers.c the growable array (jg_grow, jg_vec) and the open-addressing hash → id
 *                map (jg_idmap) every table of the core and the reader uses (containers.h)
 *   registry.c   strings, sites, counters, event types, threads, run metadata
 *   stacks.c     stack table, symbols (dladdr + binding-provided frames)
 *   ring.c       per-thread rings: creation, eviction, the collector's drain; the whole
 *                producer/consumer protocol and the inline reserve/commit are in ring.h
 *   thread.c     the calling thread's state (initial-exec TLS), ring life, site-aggregate
 *                directories, exit hook
 *   span.c       sites' filter, spans, per-thread site aggregates, sampling
 *   events.c     logs, counters, marks, span attributes/errors, generic plugin emit
 *   context.c    W3C trace context
 *   collector.c  the collector thread, sinks, flush
 *   lifecycle.c  jager_init / jager_shutdown / metadata collection / self-cost
 *   file_sink.c  the .jgr writer (a jager_sink); file_tables.c its table blocks,
 *                file_sink_priv.h what they share, file_format.h the bytes (with the reader)
 *   loader.c     plugin discovery, dlopen, descriptor checks
 *   host_api.c   the jager_host_api table given to plugins
 *   reader/      the .jgr reader (jager_reader.h): reader.c frames and iteration,
 *                reader_input.c input and errors, reader_absorb.c table blocks,
 *                reader_tables.c lookups, reader_attrs.c attribute lists
 */
#ifndef JAGER_INTERNAL_H
#define JAGER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jager.h"
#include "jager_plugin.h"

#include "ring.h"
#include "status.h"

#define JG_LIKELY(x) __builtin_expect(!!(x), 1)
#define JG_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- status.c: jg_error, in status.h (the reader uses it too) ---- */

/* ---- clock.c ---- */
typedef struct jg_clock {
    int use_tsc;           /* 1 when an invariant TSC is calibrated */
    uint64_t tsc0;         /* TSC at the anchor */
    uint64_t ns0;          /* CLOCK_MONOTONIC ns at the anchor */
    uint64_t mult;         /* ns per tick in 32.32 fixed point */
    double ticks_per_ns;   /* for the file header */
    uint64_t unix_ns0;     /* CLOCK_REALTIME ns at the anchor */
} jg_clock;
extern jg_clock jg_clock_state JG_HIDDEN;
/** Calibrate (spin \p spin_ns, default 5 ms); falls back to clock_gettime. [init-only] */
JG_HIDDEN void jg_clock_calibrate(uint64_t spin_ns);
JG_HIDDEN uint64_t jg_clock_gettime_ns(void);

/* ---- config.c ---- */
/** The active configuration (a private copy with owned strings). */
typedef struct jg_config {
    jager_config c;        /* strings below are owned copies */
} jg_config;
extern jg_config jg_cfg JG_HIDDEN;
/** A scalar of the active configuration, from any thread (a relaxed atomic load: jager_init
 *  may be replacing it). Strings are read by jager_init only. */
#define JG_CFG(field) __atomic_load_n(&jg_cfg.c.field, __ATOMIC_RELAXED)
#define JG_CFG_SET(field, v) __atomic_store_n(&jg_cfg.c.field, (v), __ATOMIC_RELAXED)
JG_HIDDEN jager_status jg_config_copy(const jager_config *src);

/* ---- table.c: append-only chunked arrays ----
 * Entries never move, so a pointer to one stays valid; count is published with release,
 * readers load it with acquire and may read entries below it without a lock. Writers
 * serialise on the caller's mutex. */
#define JG_TABLE_CHUNK_BITS 10
#define JG_TABLE_MAX_CHUNKS 4096
typedef struct jg_table {
    size_t elem_size;
    _Atomic(uint32_t) count;
    _Atomic(void *) chunks[JG_TABLE_MAX_CHUNKS];
} jg_table;
static inline void *jg_table_get(jg_table *t, uint32_t index) /* NULL if index >= count */
{
    if (index >= atomic_load_explicit(&t->count, memory_order_acquire)) return NULL;
    uint8_t *chunk = (uint8_t *)atomic_load_explicit(&t->chunks[index >> JG_TABLE_CHUNK_BITS], memory_order_acquire);
    return chunk ? chunk + (size_t)(index & ((1u << JG_TABLE_CHUNK_BITS) - 1)) * t->elem_size : NULL;
}
JG_HIDDEN void *jg_table_append(jg_table *t, uint32_t *index_out); /* zeroed entry; NULL on OOM/full; caller publishes with jg_table_publish */
JG_HIDDEN void jg_table_publish(jg_table *t, uint32_t new_count);
JG_HIDDEN uint32_t jg_table_count(jg_table *t);

/* ---- registry.c ----
 * Ids are dense. String ids start at 1 (0 = none); site, counter ids start at 1; type ids
 * are record types; thread indexes start at 1. Counts returned are "largest id + 1" for
 * 1-based tables, so `for (id = 1; id < count; id++)` visits all. */
JG_HIDDEN uint32_t jg_intern(const char *s);           /* 0 on error */
JG_HIDDEN const char *jg_string(uint32_t id);          /* NULL if unknown */
JG_HIDDEN uint32_t jg_string_count(void);

typedef struct jg_site_info {
    uint32_t name;      /* string id */
    uint32_t file;      /* string id, 0 if unknown */
    uint32_t line;
    _Atomic(uint32_t) enabled; /* JAGER_FILTER verdict */
} jg_site_info;
extern jg_table jg_sites JG_HIDDEN;
static inline const jg_site_info *jg_site_get(jager_site site)
{
    return site ? (const jg_site_info *)jg_table_get(&jg_sites, site) : NULL;
}
JG_HIDDEN uint32_t jg_site_count(void);
/** Re-evaluate every site against the active filter (at init). */
JG_HIDDEN void jg_sites_apply_filter(const char *filter);
JG_HIDDEN int jg_filter_match(const char *filter, const char *name);

typedef struct jg_counter_info {
    uint32_t name, unit, kind;
    uint32_t reserved;
    _Atomic(uint64_t) total_bits; /* running total of a monotonic counter, as double bits */
} jg_counter_info;
JG_HIDDEN const jg_counter_info *jg_counter_get(jager_counter id);
JG_HIDDEN uint32_t jg_counter_count(void);

/** Register a plugin or core type; idempotent for identical definitions. */
JG_HIDDEN jager_status jg_type_register(const char *name, const jager_field_desc *fields, uint32_t nfields,
                                        uint16_t builtin_id, uint16_t *type_out);
JG_HIDDEN const jager_type_desc *jg_type_get(uint16_t type);
JG_HIDDEN uint32_t jg_type_count(void); /* largest type id + 1 */
JG_HIDDEN void jg_types_register_core(void);

typedef struct jg_thread_info {
    uint64_t os_tid;
    char name[32];
} jg_thread_info;
JG_HIDDEN uint32_t jg_thread_register(uint64_t os_tid, const char *name); /* 0 when full */
JG_HIDDEN const jg_thread_info *jg_thread_get(uint32_t index);
JG_HIDDEN uint32_t jg_thread_count(void);

/** Run metadata, insertion ordered; set replaces. Reads copy under the lock. */
JG_HIDDEN jager_status jg_meta_set(const char *key, const char *value);
JG_HIDDEN const char *jg_meta_get(const char *key); /* stable until shutdown */
JG_HIDDEN uint32_t jg_meta_count(void);
JG_HIDDEN int jg_meta_at(uint32_t i, const char **key, const char **value);
/** Monotonic change counter: the file sink rewrites metadata when it moved. */
JG_HIDDEN uint64_t jg_meta_generation(void);
/** Free everything registered (sites keep their ids across init cycles, so only at exit). */
JG_HIDDEN void jg_registry_reset_meta(void);

/* ---- stacks.c ---- */
JG_HIDDEN uint64_t jg_stack_count(void); /* largest id + 1 */
JG_HIDDEN int jg_stack_get(jager_stack_id id, const uint64_t **ips, uint32_t *n);
typedef struct jg_symbol {
    uint64_t ip;
    uint32_t inline_depth;
    uint32_t line;
    uint32_t func; /* string id */
    uint32_t file; /* string id */
} jg_symbol;
JG_HIDDEN uint32_t jg_symbol_count(void);
JG_HIDDEN const jg_symbol *jg_symbol_at(uint32_t i);
/** Symbolize with dladdr every interned address not yet resolved (collector, at flush). */
JG_HIDDEN void jg_symbols_resolve_native(void);

/* ---- ring.c: the per-thread ring and its protocol, in ring.h ---- */

/* ---- thread.c ---- */
/** Per-thread site aggregates: chunks of 64 sites, allocated on a site's first span on
 *  the thread. Fields are written by the owner with relaxed atomics and read by others. */
typedef struct jg_site_agg {
    _Atomic(uint64_t) calls, total_ns, min_ns, max_ns, bytes, errors;
    _Atomic(uint64_t) sampled_at;  /* sampling state: count (1-in-N) or last time (interval) */
    _Atomic(uint64_t) hist[JAGER_HIST_BUCKETS];
} jg_site_agg;

#define JG_MAX_DEPTH 128
/* Site aggregates are found through a three-level directory: dir[jg_agg_dir_of(site)] →
 * mid[jg_agg_mid_of(site)] → chunk[jg_agg_slot_of(site)], i.e. site bits 14.. (256
 * entries), 6..13 (256) and 0..5 (64). Pointers are published with release and never freed
 * while the thread lives, so other threads can read aggregates without a lock. Only these
 * helpers know the shifts. */
#define JG_AGG_CHUNK_BITS 6
#define JG_AGG_MID_BITS 8
#define JG_SITE_CHUNK (1u << JG_AGG_CHUNK_BITS)
#define JG_AGG_MID (1u << JG_AGG_MID_BITS)
#define JG_AGG_DIR 256u
typedef _Atomic(jg_site_agg *) jg_agg_mid[JG_AGG_MID];
typedef _Atomic(jg_agg_mid *) jg_agg_dir[JG_AGG_DIR];

static inline uint32_t jg_agg_dir_of(jager_site site) { return site >> (JG_AGG_CHUNK_BITS + JG_AGG_MID_BITS); }
static inline uint32_t jg_agg_mid_of(jager_site site) { return (site >> JG_AGG_CHUNK_BITS) & (JG_AGG_MID - 1); }
static inline uint32_t jg_agg_slot_of(jager_site site) { return site & (JG_SITE_CHUNK - 1); }
/** The first site of the chunk at dir[d] → mid[m]. */
static inline jager_site jg_agg_chunk_site(uint32_t d, uint32_t m)
{
    return (jager_site)d << (JG_AGG_CHUNK_BITS + JG_AGG_MID_BITS) | (jager_site)m << JG_AGG_CHUNK_BITS;
}
/** The chunk holding \p site's aggregate in \p dir, or NULL when it is not there: two
 *  dependent acquire loads. [any-thread][hot-path] */
static inline jg_site_agg *jg_agg_chunk(_Atomic(jg_agg_mid *) *dir, jager_site site)
{
    uint32_t d = jg_agg_dir_of(site);
    if (JG_UNLIKELY(d >= JG_AGG_DIR)) return NULL;
    jg_agg_mid *mid = atomic_load_explicit(&dir[d], memory_order_acquire);
    if (JG_UNLIKELY(!mid)) return NULL;
    return atomic_load_explicit(&(*mid)[jg_agg_mid_of(site)], memory_order_acquire);
}
/** The aggregate of \p site in \p dir, or NULL when its chunk is not there. [any-thread] */
static inline jg_site_agg *jg_agg_find(_Atomic(jg_agg_mid *) *dir, jager_site site)
{
    jg_site_agg *c = jg_agg_chunk(dir, site);
    return c ? &c[jg_agg_slot_of(site)] : NULL;
}
/** Visit every allocated chunk of \p dir (JG_SITE_CHUNK aggregates from site \p first). */
JG_HIDDEN void jg_agg_each_chunk(_Atomic(jg_agg_mid *) *dir, void (*fn)(jager_site first, jg_site_agg *chunk, void *arg),
                                 void *arg);

typedef struct jg_tls {
    jg_ring *ring;                 /* NULL if none could be made */
    uint32_t thread;               /* thread index */
    uint32_t generation;           /* jg_generation when this state was (re)armed */
    uint32_t depth;                /* open spans */
    uint32_t next_span;            /* last span id handed out */
    jg_agg_dir agg_dir;
    uint32_t stack_id[JG_MAX_DEPTH];   /* open span ids */
    jager_site stack_site[JG_MAX_DEPTH];
    jager_trace_context ctx;       /* current trace context */
    int has_ctx;
    _Atomic(uint64_t) spans_ended; /* spans ended without a site aggregate (out of memory):
                                      jager_stats' spans_total is Σ calls + these */
    _Atomic(uint64_t) no_ring_drops;
    struct jg_tls *next_all;       /* list of live thread states (stats) */
    struct jg_tls *prev_all;
    /* span end's cache, per depth: the aggregate slot of site agg_site[d] (0: none) */
    jager_site agg_site[JG_MAX_DEPTH];
    jg_site_agg *agg_at[JG_MAX_DEPTH];
} jg_tls;

/** The calling thread's state; created on first use (NULL only on out of memory). */
JG_HIDDEN jg_tls *jg_tls_get(void);
/** The same, but NULL if the thread never recorded. [hot-path] */
JG_HIDDEN jg_tls *jg_tls_peek(void);
/** Site aggregate slot of \p site on \p t (allocating its chunk on first use). */
JG_HIDDEN jg_site_agg *jg_tls_site_agg(jg_tls *t, jager_site site);
/** Visit every live thread state of the current generation under the threads lock. */
JG_HIDDEN void jg_tls_foreach(void (*fn)(jg_tls *t, void *arg), void *arg);
/** Aggregates of exited threads (merged at thread exit), for stats; under the threads lock. */
JG_HIDDEN jg_site_agg *jg_retired_agg(jager_site site);
/** Counters of rings that were freed (exited threads), merged into jager_stats. */
typedef struct jg_retired_counts {
    uint64_t emitted, dropped_full, dropped_large, overwritten, no_ring, spans;
} jg_retired_counts;
JG_HIDDEN void jg_retired_counts_get(jg_retired_counts *out);
/** Reset retired aggregates and counters (at init). */
JG_HIDDEN void jg_retired_reset(void);
/** The ring list the collector drains, under its lock. */
JG_HIDDEN void jg_rings_lock(void);
JG_HIDDEN void jg_rings_unlock(void);
JG_HIDDEN jg_ring *jg_rings_head(void);
/** Remove and free orphaned rings (after draining them). Caller holds the rings lock and
 *  the collector's drain lock (or uses jg_rings_reap_idle). */
JG_HIDDEN void jg_rings_reap(void);
/** Set whether a collector is running (thread exit frees rings itself when not). */
JG_HIDDEN void jg_rings_set_collector(int running);

/* ---- span.c ---- */
JG_HIDDEN uint32_t jg_hist_bucket(uint64_t ns);

/* ---- events.c ---- */
/** Generic plugin emit (host->emit). */
JG_HIDDEN void jg_emit_plugin(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields);
/** A diagnostic into the recording and (unless quiet) stderr: "jager: <source>: <msg>". */
JG_HIDDEN void jg_diag(const char *source, jager_severity level, const char *msg);

/* ---- collector.c ---- */
JG_HIDDEN jager_status jg_sink_add(const jager_sink *sink);
/** The same for a sink that reports its own failures (the file sink): the core adds no
 *  "failed to write" diagnostic of its own, so a broken output says so once. */
JG_HIDDEN jager_status jg_sink_add_self_reporting(const jager_sink *sink);
JG_HIDDEN jager_status jg_collector_start(void);
/** Drain all rings and flush sinks; from any thread; waits for completion. */
JG_HIDDEN jager_status jg_collector_flush(void);
/** Final drain, close sinks, stop the thread. */
JG_HIDDEN void jg_collector_stop(void);
/** From a signal handler (async-signal-safe): ask the collector for a drain and sink flush
 *  (JG_SIGREQ_FLUSH) or the end of the recording (JG_SIGREQ_FINISH: final drain, sinks
 *  closed, collector stopped); jg_collector_signal_done() says when it is done. */
enum { JG_SIGREQ_FLUSH = 1, JG_SIGREQ_FINISH = 2 };
JG_HIDDEN void jg_collector_signal(int what);
JG_HIDDEN int jg_collector_signal_done(void);
/** Free orphaned, drained rings unless a drain is walking the list. Caller holds the rings lock. */
JG_HIDDEN void jg_rings_reap_idle(void);
/** Events handed to sinks so far. */
JG_HIDDEN uint64_t jg_collector_written(void);
JG_HIDDEN uint64_t jg_collector_sink_drops(void);

/* ---- lifecycle.c ---- */
/** 1 while recording. Read on every hot path with a relaxed load (one predictable branch). */
extern _Atomic(int) jg_enabled JG_HIDDEN;
/** Monotonic generation: bumped by every init, so thread state from an old run resets. */
extern _Atomic(uint32_t) jg_generation JG_HIDDEN;

/* ---- file_sink.c ---- */
/** Create the .jgr file sink writing to \p path; the returned sink is registered by the
 *  caller. Writes preamble + metadata + schema at open. */
JG_HIDDEN jager_status jg_file_sink_create(const char *path, jager_sink *out);

/* ---- loader.c ---- */
/** Load plugins from the comma list; failures are diagnosed once and skipped. */
JG_HIDDEN void jg_plugins_load(const char *list, const char *search_path);
JG_HIDDEN void jg_plugins_start(void);
JG_HIDDEN void jg_plugins_flush(void);   /* collector thread, before a requested drain */
JG_HIDDEN void jg_plugins_stop(void);    /* before the final drain */
JG_HIDDEN void jg_plugins_unload(void);  /* after sinks closed */
JG_HIDDEN uint32_t jg_plugins_count(void);
JG_HIDDEN const char *jg_plugins_loaded_names(void); /* "gc,dispatch" (static buffer) */

/* ---- host_api.c ---- */
JG_HIDDEN const jager_host_api *jg_host_api(void);

/* ---- hot-path inlines ---- */

/* The clock on hot paths, inline (no PLT call). A *stamp* is the clock's raw reading: TSC
 * ticks when jg_clock_state.use_tsc, else CLOCK_MONOTONIC ns. Spans keep stamps and
 * convert once, at their end. */
#if defined(__x86_64__)
#include <x86intrin.h>
/** Ticks to ns (32.32 fixed point; the 128-bit product does not overflow after ~40 minutes
 *  at 3 GHz as a 64-bit one would). [TSC only] */
static inline uint64_t jg_ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * jg_clock_state.mult) >> 32);
}
/** A TSC stamp to ns on the CLOCK_MONOTONIC base. [TSC only] */
static inline uint64_t jg_tsc_to_ns(uint64_t tsc)
{
    uint64_t d = tsc - jg_clock_state.tsc0;
    if (JG_UNLIKELY((int64_t)d < 0)) d = 0; /* a core whose TSC trails the calibrating one by a few ticks */
    return jg_clock_state.ns0 + jg_ticks_to_ns(d);
}
#endif

/** A stamp now. [hot-path] */
static inline uint64_t jg_stamp(void)
{
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) return __rdtsc();
#endif
    return jg_clock_gettime_ns();
}

/** jager_now_ns() for the library's own hot paths. */
static inline uint64_t jg_now_ns(void)
{
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) return jg_tsc_to_ns(__rdtsc());
#endif
    return jg_clock_gettime_ns();
}

/** The aggregate slot of \p site on \p t: two dependent loads when it exists. */
static inline jg_site_agg *jg_site_agg_fast(jg_tls *t, jager_site site)
{
    jg_site_agg *a = jg_agg_find(t->agg_dir, site);
    return JG_LIKELY(a != NULL) ? a : jg_tls_site_agg(t, site);
}

/** The calling thread's TLS pointer (initial-exec: one %fs-relative load). */
extern __thread jg_tls *jg_tls_ptr __attribute__((tls_model("initial-exec"))) JG_HIDDEN;

/** The calling thread's armed state, or NULL (out of memory). [hot-path after the first call] */
static inline jg_tls *jg_tls_fast(void)
{
    jg_tls *t = jg_tls_ptr;
    if (JG_LIKELY(t && t->generation == atomic_load_explicit(&jg_generation, memory_order_relaxed))) return t;
    return jg_tls_get();
}

#endif /* JAGER_INTERNAL_H */
