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
 *   plugin_events.c  refused and late plugin events: counted, said once per type
 *   plugin_timer.c   host-owned periodic callbacks for plugins
 *   host_api.c   the jager_host_api table given to plugins
 *   plugin_call.c    bounded calls into plugin code (a worker thread, JAGER_PLUGIN_TIMEOUT_MS)
 *   plugin_handle.h  what loader, host API, plugin events and timers share about plugins
 *   span_hooks.c     host->span_hook_add/remove: plugin callbacks on named sites' spans
 *   paths.c      exact per-call-path aggregates per thread (the PATHS blocks' source)
 *   task_move.c  tasks that move between threads: the task directory (a task's open spans
 *                published at switch-out, adopted where it resumes) and the drop mailbox
 *   file_paths.c the .jgr writer's PATHS blocks (file_sink_priv.h)
 *   launch.c     which process of a tree records, and where (zero-code mode)
 *   supply_check.c   JAGER_LOCK: loads libjager-supply.so and runs its check
 *                    (supply_check.h; supply_module.h the interface to the module)
 *   supply/      the supply-chain scanner's engine (static library jager_supply: lock file,
 *                hashes, mapped objects, comparison; supply.h), linked into the module
 *                supply/module/supply_module.c (libjager-supply.so) and the `jager` command
 *   reader/      the .jgr reader (jager_reader.h): reader.c frames and iteration,
 *                reader_input.c input and errors, reader_absorb.c table blocks,
 *                reader_tables.c lookups, reader_attrs.c attribute lists (reader_priv.h)
 *
 * The same map, with what each folder may include, is in docs/internals.md; the test
 * docs_module_map fails when a file of sdk/src is missing from this list.
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
    /* JG_SITE_OFF (filtered out), JG_SITE_ON, or JG_SITE_HOOKED (on, and some plugin hooks
     * it: begin takes the cold way); jager_span_begin reads its copy in jg_site_state. */
    _Atomic(uint32_t) enabled;
    _Atomic(uint64_t) hooks; /* span hook slots on this site (span_hooks.c), under the registry lock */
    uint32_t filter_on;      /* JAGER_FILTER verdict, under the registry lock */
    uint32_t reserved;
} jg_site_info;
#define JG_SITE_OFF 0u
#define JG_SITE_ON 1u
#define JG_SITE_HOOKED 2u
extern jg_table jg_sites JG_HIDDEN;
/* What jager_span_begin reads of a site: its state (JG_SITE_*) in one byte per possible
 * id, written with release by registry.c after the site is published (and again whenever
 * the filter or the hooks change it). Ids not registered yet read JG_SITE_OFF: the array
 * is zero (.bss, whose untouched pages cost no memory). */
#define JG_SITE_MAX ((uint32_t)JG_TABLE_MAX_CHUNKS << JG_TABLE_CHUNK_BITS)
extern _Atomic(uint8_t) jg_site_state[JG_SITE_MAX] JG_HIDDEN;
static inline const jg_site_info *jg_site_get(jager_site site)
{
    return site ? (const jg_site_info *)jg_table_get(&jg_sites, site) : NULL;
}
JG_HIDDEN uint32_t jg_site_count(void);
/** Re-evaluate every site against the active filter (at init). */
JG_HIDDEN void jg_sites_apply_filter(const char *filter);
JG_HIDDEN int jg_filter_match(const char *filter, const char *name);
/** Point span hook slot \p slot at every site named \p name (present and registered
 *  later), or at none (\p name NULL); returns the name's string id (0 when cleared or out
 *  of memory). */
JG_HIDDEN uint32_t jg_sites_hook(uint32_t slot, const char *name);

typedef struct jg_counter_info {
    uint32_t name, unit, kind;
    uint32_t reserved;
    _Atomic(uint64_t) total_bits; /* running total of a monotonic counter, as double bits */
} jg_counter_info;
JG_HIDDEN const jg_counter_info *jg_counter_get(jager_counter id);
JG_HIDDEN uint32_t jg_counter_count(void);
/** Every monotonic counter's running total back to 0: a recording's totals start at 0 (at
 *  init, and in a forked child that starts its own recording). */
JG_HIDDEN void jg_counters_reset_totals(void);

/** 1 when \p s is snake_case ([a-z][a-z0-9_]*) of at most \p max bytes. */
JG_HIDDEN int jg_name_is_snake(const char *s, size_t max);
/** Untrusted text for a message into \p buf: printable ASCII kept, the rest \xNN, cut with "...". */
JG_HIDDEN const char *jg_quote(char *buf, size_t size, const char *s);
/** Register a plugin or core type; idempotent for identical definitions. Plugin types
 *  (builtin_id 0) must be "<plugin>.<snake_case>", fields snake_case, unique, known flags. */
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
/** A host thread for plugins (timers, bounded calls, watchers): started with every signal
 *  blocked, so the program's signals never land on it; detached when \p detached. 0, or
 *  pthread_create's error. */
JG_HIDDEN int jg_host_thread_start(pthread_t *out, int detached, void *(*fn)(void *), void *arg);
/** pthread_cond_init on CLOCK_MONOTONIC (deadlines that a clock step cannot move). */
JG_HIDDEN void jg_cond_init_monotonic(pthread_cond_t *cv);

/** Run metadata, insertion ordered; set replaces. Reads copy under the lock. */
JG_HIDDEN jager_status jg_meta_set(const char *key, const char *value);
JG_HIDDEN const char *jg_meta_get(const char *key); /* stable until shutdown */
JG_HIDDEN uint32_t jg_meta_count(void);
JG_HIDDEN int jg_meta_at(uint32_t i, const char **key, const char **value);
/** The sets in order: entry of the \p pos-th set (1 on success), and how many there were
 *  (\p complete 0 when one could not be logged: write every entry then). */
JG_HIDDEN int jg_meta_log_at(uint32_t pos, const char **key, const char **value);
JG_HIDDEN uint32_t jg_meta_log_count(int *complete);
/** Monotonic change counter: the file sink writes the entries set since its last META block. */
JG_HIDDEN uint64_t jg_meta_generation(void);
/** Free everything registered (sites keep their ids across init cycles, so only at exit). */
JG_HIDDEN void jg_registry_reset_meta(void);
/** fork(): try-lock / unlock the registry's lock (prepare; parent and child when taken);
 *  make it anew (child, when not taken: a thread gone there may hold it). */
JG_HIDDEN int jg_registry_fork_trylock(void);
JG_HIDDEN void jg_registry_fork_unlock(void);
JG_HIDDEN void jg_registry_fork_child(void);

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
/** fork(): the same for the stack table's lock. */
JG_HIDDEN int jg_stacks_fork_trylock(void);
JG_HIDDEN void jg_stacks_fork_unlock(void);
JG_HIDDEN void jg_stacks_fork_child(void);

/* ---- ring.c: the per-thread ring and its protocol, in ring.h ---- */

/* ---- thread.c ---- */
/** Per-thread site aggregates: chunks of 64 sites, allocated on a site's first span on
 *  the thread. Fields are written by the owner with relaxed atomics and read by others. */
typedef struct jg_site_agg {
    _Atomic(uint64_t) calls, total_ns, min_ns, max_ns, bytes, errors;
    _Atomic(uint64_t) sampled_at;  /* sampling state: count (1-in-N) or last time (interval) */
    _Atomic(uint64_t) hist[JAGER_HIST_BUCKETS];
    /* Accounting per site and thread: calls == recorded + thinned + dropped, where thinned
     * spans were left out on purpose (sampling) and dropped ones found no room (no ring,
     * ring full). auto_state: JAGER_SAMPLE_AUTO's state, `calls` when the current window
     * began (sampled_at: its start), bit 63 set while the site is hot (it passed the
     * budget in the window before). */
    _Atomic(uint64_t) thinned, dropped, auto_state;
    /* While the site is hot (JAGER_SAMPLE_AUTO): the end of its window as a stamp (TSC
     * ticks, or ns on the clock_gettime clock), so the span end's fast path thins a span
     * that starts before it with one compare, converting nothing; 0 when not hot. */
    _Atomic(uint64_t) hot_until;
} jg_site_agg;

/* Open spans: the first JG_MAX_DEPTH on the thread state (the hot path's fixed arrays),
 * deeper ones on a growable overflow stack (jg_tls.deep, allocated by the first span that
 * goes past JG_MAX_DEPTH and doubled when full: off the hot path). */
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

/* ---- paths.c: exact per-call-path aggregates ----
 * Per thread, one node per distinct call path (root → … → site): calls, total time, bytes.
 * Nodes live in chunks that are never moved or freed while the table lives, so other
 * threads read them with relaxed loads (count published with release); only the owner
 * thread adds nodes and bumps values. Node 0 is the root (never counted), node 1 the
 * overflow bucket: spans whose path would exceed JG_PATHS_MAX nodes or lie below it, and
 * the rare span whose parent is unknown (its entry found no memory on the overflow stack). */
#define JG_PATHS_MAX 16384u
#define JG_PATH_CHUNK_BITS 8
#define JG_PATH_CHUNK (1u << JG_PATH_CHUNK_BITS)
#define JG_PATH_OVERFLOW 1u
typedef struct jg_path {
    uint32_t parent;              /* node index, 0 = root */
    jager_site site;              /* 0 for the root and the overflow bucket */
    _Atomic(uint64_t) calls, total_ns, bytes;
} jg_path;
typedef struct jg_paths jg_paths;
/* One way of the span end's per-depth cache (jg_tls.end_cache). */
#define JG_END_WAYS 4u
typedef struct jg_end_cache {
    jager_site site;
    uint32_t parent_id;
    struct jg_site_agg *agg;
    jg_path *path;
} jg_end_cache;
struct jg_tls;
/** A depth for jg_path_resolve: the span's parent is unknown (the overflow bucket). */
#define JG_DEPTH_UNKNOWN UINT32_MAX
/** The node of the span ending at depth \p d whose site is \p site and whose parent is the
 *  open span with id \p parent (0: none; its ancestors are that span and the entries of the
 *  same task below it; JG_DEPTH_UNKNOWN: the overflow bucket): resolves the ancestors'
 *  nodes (cached in the stack entries) and the child. Never NULL: t->path_void when no
 *  table could be made. */
JG_HIDDEN jg_path *jg_path_resolve(struct jg_tls *t, uint32_t d, jager_site site, uint32_t parent);
/** Discard the thread's table (new generation: spans of the old run are not this run's). */
JG_HIDDEN void jg_paths_rearm(struct jg_tls *t);
/** At thread exit, under the threads lock: keep the table among the retired ones. */
JG_HIDDEN void jg_paths_retire_locked(struct jg_tls *t);
/** Free the retired tables (at init), under the threads lock. */
JG_HIDDEN void jg_paths_reset_retired_locked(void);
/** Visit every table of the current run: live threads, then exited ones. \p fn gets the
 *  thread index, the node count and the nodes (node i at nodes(i)). */
typedef struct jg_paths_view {
    uint32_t thread, count;
    const jg_paths *p;
} jg_paths_view;
JG_HIDDEN const jg_path *jg_paths_node(const jg_paths *p, uint32_t i);
JG_HIDDEN void jg_paths_foreach(void (*fn)(const jg_paths_view *v, void *arg), void *arg);

/** An open span a hook was told of: its id and site, and the hook slots told. */
#define JG_HOOKED_OPEN 32
typedef struct jg_hooked_span {
    uint32_t id;
    jager_site site;
    uint64_t mask;
} jg_hooked_span;

typedef struct jg_tls {
    jg_ring *ring;                 /* NULL if none could be made */
    uint32_t thread;               /* thread index */
    uint32_t generation;           /* jg_generation when this state was (re)armed */
    uint32_t depth;                /* open spans */
    uint32_t next_span;            /* last span id handed out */
    uint32_t nhooked;              /* entries in hooked[] (span_hooks.c) */
    int in_hook;                   /* a span hook runs on this thread: spans it begins are not hooked */
    jg_agg_dir agg_dir;
    uint64_t stack_sid[JG_MAX_DEPTH];  /* open spans, site (low) and id (high) as one word */
    uint64_t task;                     /* jager_task_set(): the task running now, 0 none */
    uint64_t stack_task[JG_MAX_DEPTH]; /* the task that began each open span */
    jager_trace_context ctx;       /* current trace context */
    int has_ctx;
    _Atomic(uint64_t) spans_ended; /* spans ended without a site aggregate (out of memory):
                                      jager_stats' spans_total is Σ calls + these */
    _Atomic(uint64_t) no_ring_drops;
    _Atomic(uint64_t) cross_thread;   /* spans ended here that this thread never began */
    struct jg_tls *next_all;       /* list of live thread states (stats) */
    struct jg_tls *prev_all;
    /* span end's cache, per depth and JG_END_WAYS ways chosen by the site's low bits: the
     * aggregate slot and the call-path node of a site under a parent span (site 0: none).
     * Valid while the site and the parent span id match: a parent span id names one open
     * span, whose path is fixed; slots and nodes live as long as the thread's run. */
    jg_end_cache end_cache[JG_MAX_DEPTH][JG_END_WAYS];
    /* the path node of the open span at depth d, valid when stack_node_id[d] is its id */
    uint32_t stack_node[JG_MAX_DEPTH];
    uint32_t stack_node_id[JG_MAX_DEPTH];
    jg_paths *paths;               /* NULL until the first span ends (or out of memory) */
    jg_path path_void;             /* counts nothing anyone reads: the node when no table exists */
    jg_site_agg *slow_agg;         /* the aggregate of the span record_slow() records or drops */
    uint64_t slow_bytes;           /* the bytes of the span finish_sampled() decides on (span.c) */
    /* open spans at depths JG_MAX_DEPTH …: deep[d - JG_MAX_DEPTH], deep_cap entries */
    struct jg_deep_entry *deep;
    uint32_t deep_cap;
    /* 1 + the depth of the first open span not on the stack (no memory for the overflow
     * stack: it and every span above it), 0 when every open span is on it */
    uint32_t deep_hole;
    /* open spans whose begin a span hook was told of (span_hooks.c; nhooked of them, near
     * the top: the end cache's miss path reads it): their ends are told too */
    jg_hooked_span hooked[JG_HOOKED_OPEN];
    /* foreign entries of the stack (a migrated task's spans another thread began,
     * task_move.c): nforeign of them, by the local id their stack entry holds */
    struct jg_foreign *foreign;
    uint32_t nforeign, foreign_cap;
} jg_tls;

/* A foreign stack entry (task_move.c): an open span that another thread began, adopted with
 * its task. Its stack word is SID(site | JG_SITE_FOREIGN, local id) — sites are below
 * JG_SITE_MAX, so no span end's compare ever matches it — and its stack_task is ~task, so
 * a span whose neighbour it is leaves the end's fast path for end_task. */
#define JG_SITE_FOREIGN 0x80000000u
typedef struct jg_foreign {
    uint32_t local_id;  /* the id in the stack entry (this thread's numbering) */
    uint32_t thread;    /* the thread index that began it */
    uint32_t id;        /* that thread's id of it */
} jg_foreign;

typedef struct jg_deep_entry {
    uint64_t sid;          /* as stack_sid */
    uint32_t node, node_id; /* as stack_node, stack_node_id */
    jg_end_cache cache;    /* as end_cache, one way: the last span that ended at this depth */
    uint64_t task;         /* as stack_task */
} jg_deep_entry;

/** Whether the open span at depth \p d (< t->depth) is on the stack. */
static inline int jg_stack_has(const jg_tls *t, uint32_t d) { return !t->deep_hole || d + 1 < t->deep_hole; }
/** The open span at depth \p d (on the stack): site low, id high. */
static inline uint64_t jg_stack_sid(const jg_tls *t, uint32_t d)
{
    return d < JG_MAX_DEPTH ? t->stack_sid[d] : t->deep[d - JG_MAX_DEPTH].sid;
}
static inline uint32_t jg_stack_id(const jg_tls *t, uint32_t d) { return (uint32_t)(jg_stack_sid(t, d) >> 32); }
/** The task that began the open span at depth \p d (on the stack). */
static inline uint64_t jg_stack_task(const jg_tls *t, uint32_t d)
{
    return d < JG_MAX_DEPTH ? t->stack_task[d] : t->deep[d - JG_MAX_DEPTH].task;
}
/** The innermost open span at depth \p d or below (on the stack) that \p task began, or -1:
 *  tasks interleave on a thread, and a span's parent is its own task's. */
static inline int64_t jg_stack_top_of_task(const jg_tls *t, int64_t d, uint64_t task)
{
    while (d >= 0 && jg_stack_task(t, (uint32_t)d) != task) d--;
    return d;
}
static inline jager_site jg_stack_site(const jg_tls *t, uint32_t d) { return (jager_site)jg_stack_sid(t, d); }
/** Whether the open span at depth \p d (on the stack) is a foreign entry (task_move.c). */
static inline int jg_stack_foreign(const jg_tls *t, uint32_t d) { return (jg_stack_site(t, d) & JG_SITE_FOREIGN) != 0; }
/** The task of the open span at depth \p d, a foreign entry's too. */
static inline uint64_t jg_stack_task_real(const jg_tls *t, uint32_t d)
{
    return jg_stack_foreign(t, d) ? ~jg_stack_task(t, d) : jg_stack_task(t, d);
}
/** As jg_stack_top_of_task, foreign entries of \p task included: the parent of a migrated
 *  task's span may be a span another thread began. [cold paths only] */
static inline int64_t jg_stack_top_of_task_x(const jg_tls *t, int64_t d, uint64_t task)
{
    while (d >= 0 && jg_stack_task_real(t, (uint32_t)d) != task) d--;
    return d;
}
/** The innermost open span on the stack, or -1 when none. */
static inline int64_t jg_stack_top(const jg_tls *t)
{
    uint32_t d = t->depth;
    if (t->deep_hole && d >= t->deep_hole) d = t->deep_hole - 1;
    return (int64_t)d - 1;
}

/* ---- tasks that move between threads (task_move.c) ---- */
/** jager_task_set on \p t, from task t->task to \p to (before t->task changes): publish the
 *  old task's open spans, adopt the new one's if another thread published them. */
JG_HIDDEN void jg_task_switch(jg_tls *t, uint64_t to);
/** Drop the entries of tasks another thread adopted from \p t's stack (its mailbox). */
JG_HIDDEN void jg_task_mail(jg_tls *t);
/** The foreign entry whose stack word holds \p local_id, or NULL. */
JG_HIDDEN const jg_foreign *jg_foreign_of(const jg_tls *t, uint32_t local_id);
/** The innermost open span of \p t's current task, an adopted (foreign) one included: its
 *  site in \p site, the thread that began it in \p begin_thread, and that thread's id of it
 *  (the id its span record will carry), or 0 when none is open. [cold: t->nforeign set] */
JG_HIDDEN uint32_t jg_task_top_span(const jg_tls *t, jager_site *site, uint32_t *begin_thread);
/** The aux of an attribute or error record of span (\p site, \p id) written on \p t: the
 *  site, with JAGER_SPAN_REF_MOVED and the begin thread when the span is not one of \p t's
 *  own open spans but a foreign entry it adopted (its task moved here). [cold] */
JG_HIDDEN uint32_t jg_span_ref_aux(const jg_tls *t, jager_site site, uint32_t id);
/** Forget the foreign entry with \p local_id (its span ended or its task left). */
JG_HIDDEN void jg_foreign_forget(jg_tls *t, uint32_t local_id);
/** Take the open span at depth \p k out of \p t's stack (span.c). */
JG_HIDDEN void jg_stack_remove(jg_tls *t, uint32_t k);
/** Empty the task directory and the mailbox (a new run). */
JG_HIDDEN void jg_task_moves_reset(void);
/** Task switches whose open spans could not be published or adopted (no memory, directory
 *  or mailbox full, stack too deep): their spans end as before, roots on the ending thread. */
JG_HIDDEN uint64_t jg_task_moves_failed(void);

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
    uint64_t emitted, dropped_full, dropped_large, overwritten, no_ring, spans, cross_thread;
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
/** fork(): the prepare handler takes the threads lock (try only: a fork never waits on it
 *  for long), the parent's handler releases it. */
JG_HIDDEN int jg_threads_fork_trylock(void);
JG_HIDDEN void jg_threads_fork_unlock(void);
/** In the child: without \p fresh, the lock made anew (when the prepare handler could not
 *  take it: a thread gone here may hold it); with \p fresh (the child starts a recording
 *  of its own, the lock free) the parent's rings emptied and freed, the other threads
 *  unlisted, the forking thread's span stack emptied and registered under its new id. */
JG_HIDDEN void jg_threads_fork_child(int fresh);

/* ---- span.c ---- */
JG_HIDDEN uint32_t jg_hist_bucket(uint64_t ns);
/** jager_now_ns() when the run began (jager_init): a span that began before it is an
 *  earlier run's. */
extern _Atomic(uint64_t) jg_run_start_ns JG_HIDDEN;
/** host->span_end_ns: end \p span at \p end_ns, a jager_now_ns() value taken earlier (an end
 *  reported late); an end before the start counts as no time. [any-thread] */
JG_HIDDEN void jg_span_end_ns(jager_span span, uint64_t end_ns);

/* ---- span_hooks.c ---- */
/** Call hook slots \p mask's begin (\p end 0) or end callbacks for \p ev's site. */
JG_HIDDEN void jg_span_hooks_call(uint64_t mask, int end, const jager_span_event *ev);

/* ---- events.c ---- */
/** Generic plugin emit (host->emit). */
JG_HIDDEN void jg_record_context(const jager_trace_context *c); /* events.c: a JAGER_EV_CONTEXT record */
JG_HIDDEN void jg_emit_plugin(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields);
JG_HIDDEN jager_status jg_emit_plugin_status(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields);
/* plugin_events.c: a plugin event refused (bad_emit) or lost after stop (after_stop). */
JG_HIDDEN jager_status jg_plugin_event_refused(uint16_t type, const jager_type_desc *td, uint32_t nfields, int have_fields);
JG_HIDDEN jager_status jg_plugin_event_lost(uint16_t type);
JG_HIDDEN void jg_plugin_events_reset(void);
JG_HIDDEN void jg_plugin_events_drops(uint64_t *bad_emit, uint64_t *after_stop);
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
/** A ring passed its watermark: wake the collector for a drain now (sem_post: no lock, no
 *  syscall unless it sleeps, async-signal-safe). [any-thread] */
JG_HIDDEN void jg_collector_wake(void);
JG_HIDDEN int jg_collector_signal_done(void);
/** Free orphaned, drained rings unless a drain is walking the list. Caller holds the rings lock. */
JG_HIDDEN void jg_rings_reap_idle(void);
/** Events handed to sinks so far. */
JG_HIDDEN uint64_t jg_collector_written(void);
/** The collector's accounting, one consistent read: events handed to sinks, those taken out
 *  of the rings, the drop records it added, the events no sink took. */
typedef struct jg_collector_acct {
    uint64_t written, drained, drop_reports, sink_drops;
} jg_collector_acct;
JG_HIDDEN void jg_collector_accounting(jg_collector_acct *out);
/** Sinks of this run with accounting (jager_sink_stats). */
JG_HIDDEN uint32_t jg_collector_sink_count(void);
/** A new run: its sinks' accounting starts empty (jager_init, before the first sink). */
JG_HIDDEN void jg_collector_sinks_new_run(void);
/** CPU time of the collector this run (its thread's clock, and the final drain), in ns. */
JG_HIDDEN uint64_t jg_collector_cpu_ns(void);
/** In a child made by fork() (single-threaded, from the atfork child handler): the
 *  parent's collector, flushers, sinks and drain buffer forgotten without a call, locks
 *  and the wake semaphore made anew. */
JG_HIDDEN void jg_collector_fork_child(void);

/* ---- lifecycle.c ---- */
/** 1 while recording. Read on the hot paths of events (the span paths test jg_live_generation). */
extern _Atomic(int) jg_enabled JG_HIDDEN;
/** Monotonic generation: bumped by every init, so thread state from an old run resets. */
extern _Atomic(uint32_t) jg_generation JG_HIDDEN;
/** jg_generation while recording, 0 while not (set with jg_enabled): the span fast paths
 *  compare the thread state's generation with it, one test for "recording, and this
 *  thread is armed for this run" (an armed state's generation is never 0). */
extern _Atomic(uint32_t) jg_live_generation JG_HIDDEN;

/* ---- file_sink.c ---- */
/** Create the .jgr file sink writing to \p path (already expanded); the returned sink is
 *  registered by the caller. Eager (\p lazy 0): the file is claimed now (jg_launch_claim)
 *  and preamble + metadata + schema are written at open. Lazy (zero-code mode): the file is
 *  claimed when the first event arrives, and a run with no events leaves no file. */
JG_HIDDEN jager_status jg_file_sink_create(const char *path, int lazy, jager_sink *out);
/** In a child made by fork(): drop the parent's file sink \p ctx without writing a byte —
 *  its stdio buffer discarded (an exit() would flush it into the parent's file again) and
 *  its descriptor closed; the rest is left (the parent's memory). */
JG_HIDDEN void jg_file_sink_forget(void *ctx);

/* ---- launch.c: which process of a tree records, and where ---- */
/** 1 when \p name (NULL: this process's executable) is a launcher that never records
 *  (a shell, `timeout`, `env`, `mpiexec`, …; JAGER_LAUNCHERS adds names, `-name` removes). */
JG_HIDDEN int jg_launch_is_launcher(const char *name);
/** The launcher's rank of this process (PMI_RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID in a
 *  job step, …), or -1; \p size gets the job size or -1 when unknown. */
JG_HIDDEN int jg_launch_rank(int *size);
/** Expand \p pattern into \p out: %p the pid, %r the rank (p<pid> without one), and
 *  ".<rank>" appended for a rank of a job of several when the pattern (as the process was
 *  started with it, when \p from_env) names neither. */
JG_HIDDEN void jg_launch_output_path(char *out, size_t size, const char *pattern, int from_env);
/** Copy JAGER_AUTOSTARTED and JAGER_OUTPUT for the claim and the empty-recording rule,
 *  which run where getenv would race the program's setenv (jg_launch_output_path and
 *  jg_launch_mark_tree call it; a test that changes them calls it too). */
JG_HIDDEN void jg_launch_snapshot_env(void);
/** First process of a tree with libjager (constructor): note the output's identity in
 *  JAGER_AUTOSTARTED, so later processes of the tree do not overwrite what an earlier wrote. */
JG_HIDDEN void jg_launch_mark_tree(void);
/** Whether a zero-code recording with no event is written at exit: only by the tree's first
 *  process (or the image it exec'd) when it made no child with fork() — the program run
 *  bare that recorded nothing; a wrapper that handed on, or a child, leaves no file. */
JG_HIDDEN int jg_launch_keep_empty(void);
/** Open \p path for writing and claim it: a write lock on a regular file (not truncated
 *  before it is held), refused when another process holds it or an earlier process of the
 *  tree wrote it; devices and pipes are opened as they are. Returns the descriptor, -1 on
 *  an error or -2 when the file is another's, with the sentence in \p why. */
JG_HIDDEN int jg_launch_claim(const char *path, char *why, size_t why_size);

/* ---- loader.c ---- */
/** Load plugins from the comma list; failures are diagnosed once and skipped. */
JG_HIDDEN void jg_plugins_load(const char *list, const char *search_path);
JG_HIDDEN void jg_plugins_start(void);
JG_HIDDEN void jg_plugins_flush(void);   /* collector thread, before a requested drain */
JG_HIDDEN void jg_plugins_stop(void);    /* before the final drain */
JG_HIDDEN void jg_plugins_unload(void);  /* after sinks closed */
JG_HIDDEN uint32_t jg_plugins_count(void);
JG_HIDDEN const char *jg_plugins_loaded_names(void); /* "gc,dispatch" (static buffer) */
/** In a child made by fork(): the parent's plugins forgotten without a call. */
JG_HIDDEN void jg_plugins_fork_child(void);

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

/** jg_now_ns() read in program order: after every earlier load has its value, before any
 *  later instruction starts (RDTSC alone may run early or late; the vDSO's clock_gettime
 *  orders its own read). jager_counter_add stamps with it between its load and its CAS. */
static inline uint64_t jg_now_ns_ordered(void)
{
#if defined(__x86_64__)
    if (JG_LIKELY(jg_clock_state.use_tsc)) {
        _mm_lfence();
        uint64_t tsc = __rdtsc();
        _mm_lfence();
        return jg_tsc_to_ns(tsc);
    }
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
