/*
 * jager.h — the Jäger instrumentation API (stable C ABI).
 *
 * Jäger records what a numerical program spends its time on: spans around regions,
 * logs, counters and marks, from any number of threads, into per-thread lock-free rings
 * that a collector thread drains into sinks (a compressed `.jgr` file, OTLP, plugins).
 *
 * Reading order: export macro, version, status codes, configuration, lifecycle, clock,
 * sites and spans, statistics, logs, counters and marks, tasks, W3C trace context, run metadata,
 * stacks and symbols, extensions, convenience macros.
 *
 * Every pointer parameter says who owns it: "copied" (the library keeps its own copy),
 * "borrowed" (read or written during the call only), "lives until X" for what the
 * library hands out, or "owned by X" (X frees it). The test docs_complete checks each one.
 *
 * Thread tags used on every function:
 *   [any-thread]  callable from any thread at any time, including before jager_init()
 *                 and after jager_shutdown(), where it is a no-op.
 *   [hot-path]    no lock, no allocation, no system call in the steady state.
 *   [init-only]   call from one thread while no other thread uses Jäger.
 */
/**
 * \mainpage Jäger C SDK
 *
 * The happy path:
 * \code
 * #include <jager.h>
 * int main(void) {
 *     jager_init(NULL);                                   // configure from JAGER_* env
 *     jager_site s = jager_site_register("solve", __FILE__, __LINE__);
 *     for (int i = 0; i < 100; i++) { jager_span sp = jager_span_begin(s); solve(); jager_span_end(sp); }
 *     jager_shutdown();                                    // drains rings, writes JAGER_OUTPUT
 * }
 * \endcode
 * Or scoped: `{ JAGER_SPAN("solve"); solve(); }`.
 *
 * See jager_plugin.h for the plugin ABI, jager_record.h for the event record layout and
 * jager_reader.h for reading `.jgr` files.
 */
/** \file
 * See the comment above for this header's concern and reading order. */
#ifndef JAGER_H
#define JAGER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/** \name Export macro */
/** Marks a symbol as part of the public ABI; everything else in libjager is hidden. */
#if defined(JAGER_BUILDING_LIBRARY) && defined(__GNUC__)
#define JAGER_API __attribute__((visibility("default")))
#else
#define JAGER_API
#endif

/* ------------------------------------------------------------------------------------ */
/** \name Version
 * The macros describe the header compiled against; jager_version() the library loaded.
 * The library's SONAME carries JAGER_VERSION_MAJOR: a change that breaks the ABI bumps it.
 */
#define JAGER_VERSION_MAJOR 1 /**< incompatible ABI changes */
#define JAGER_VERSION_MINOR 0 /**< compatible additions */
#define JAGER_VERSION_PATCH 0 /**< fixes */
/** One number for comparisons: major*10000 + minor*100 + patch. */
#define JAGER_VERSION_NUMBER (JAGER_VERSION_MAJOR * 10000 + JAGER_VERSION_MINOR * 100 + JAGER_VERSION_PATCH)
/** \cond INTERNAL */
#define JAGER_STR_INNER(x) #x
#define JAGER_STR(x) JAGER_STR_INNER(x)
/** \endcond */
/** "major.minor.patch" as a string literal. */
#define JAGER_VERSION_STRING JAGER_STR(JAGER_VERSION_MAJOR) "." JAGER_STR(JAGER_VERSION_MINOR) "." JAGER_STR(JAGER_VERSION_PATCH)

/**
 * \brief The version of the loaded library as JAGER_VERSION_NUMBER.
 * \return major*10000 + minor*100 + patch; equals JAGER_VERSION_NUMBER when header and
 *         library agree. [any-thread] \since 1.0
 */
JAGER_API uint32_t jager_version(void);
/**
 * \brief The loaded library's version as "major.minor.patch" (static storage). [any-thread] \since 1.0
 * \return "major.minor.patch" in static storage.
 */
JAGER_API const char *jager_version_string(void);

/* ------------------------------------------------------------------------------------ */
/** \name Status codes
 * Every fallible function returns a jager_status: 0 is success, negative values are errors.
 * Values are stable and never reused.
 */
/** A status: JAGER_OK (0) or a negative JAGER_E_* code (enum jager_status_code). */
typedef int32_t jager_status;

/** X-macro table: name, value, message. jager_strerror() is generated from it. */
#define JAGER_STATUS_MAP(X)                                                            \
    X(OK, 0, "success")                                                                \
    X(E_INVALID, -1, "invalid argument")                                               \
    X(E_NOMEM, -2, "out of memory")                                                    \
    X(E_STATE, -3, "wrong state (not initialised, or already initialised)")           \
    X(E_IO, -4, "input/output error")                                                  \
    X(E_FORMAT, -5, "malformed input")                                                 \
    X(E_ABI, -6, "ABI version mismatch")                                               \
    X(E_NOTFOUND, -7, "not found")                                                     \
    X(E_DISABLED, -8, "disabled")                                                      \
    X(E_FULL, -9, "capacity exhausted")                                                \
    X(E_TRUNCATED, -10, "input ends early")                                            \
    X(E_CHECKSUM, -11, "checksum mismatch")                                            \
    X(E_UNSUPPORTED, -12, "not supported here")                                        \
    X(E_PLUGIN, -13, "plugin refused or failed")                                      \
    X(E_SUPPLY_CHAIN, -14, "supply chain: loaded code differs from the lock (JAGER_LOCK)")

/** Status values: JAGER_OK, JAGER_E_INVALID, … */
enum jager_status_code {
#define JAGER_STATUS_ENUM(name, value, msg) JAGER_##name = value,
    JAGER_STATUS_MAP(JAGER_STATUS_ENUM)
#undef JAGER_STATUS_ENUM
    JAGER__STATUS_END = 0 /**< \internal ends the list without a trailing comma (C++98 -pedantic); not a status */
};

/**
 * \brief A fixed message for a status code ("unknown status" for unknown values).
 * \return static storage, never NULL. [any-thread] \since 1.0
 * \param status any jager_status value
 */
JAGER_API const char *jager_strerror(jager_status status);

/**
 * \brief The calling thread's last detailed error message, e.g. "plugin 'gc': ABI major 2,
 *        this core speaks 1".
 * \return thread-local storage valid until the thread's next failing Jäger call; "" if none.
 *         [any-thread] \since 1.0
 */
JAGER_API const char *jager_last_error(void);

/* ------------------------------------------------------------------------------------ */
/** \name Configuration */

/** What a full ring does with a new event. Stored as uint32_t; values are stable. */
typedef enum jager_ring_mode {
    JAGER_RING_DISCARD = 0,   /**< drop the newest event and count it (default) */
    JAGER_RING_OVERWRITE = 1  /**< flight recorder: evict the oldest events and count them */
} jager_ring_mode;

/** Which span events reach the rings. Aggregates are exact under every policy. */
typedef enum jager_sample_mode {
    JAGER_SAMPLE_ALL = 0,      /**< every span is an event (JAGER_SAMPLE=all; the default was this until thinning became it) */
    JAGER_SAMPLE_ONE_IN_N = 1, /**< every n-th span of a site per thread */
    JAGER_SAMPLE_INTERVAL = 2, /**< at most one span event per site per thread per interval */
    JAGER_SAMPLE_AUTO = 3      /**< every span until a site passes sample_n per interval on a thread, then one per interval (\since 1.1; the default: a budget of 1000 per 1 ms window) */
} jager_sample_mode;

/**
 * Configuration for jager_init(). Initialise with jager_config_init() (which sets
 * struct_size and the defaults), then change fields. The struct only grows at the end;
 * the library reads no field beyond struct_size. Strings are copied by jager_init().
 * Every field has a JAGER_* environment variable, listed in docs/configuration.md;
 * jager_init(NULL) reads them.
 */
typedef struct jager_config {
    uint32_t struct_size;        /**< sizeof(jager_config) of the caller, set by jager_config_init */
    uint32_t disable;            /**< 1: record nothing (JAGER_DISABLE=1) */
    const char *output;          /**< .jgr path (JAGER_OUTPUT); NULL: no file sink. "%p" becomes the pid */
    const char *plugins;         /**< comma list of plugins to load (JAGER_PLUGINS) */
    const char *plugin_path;     /**< colon list of folders searched first (JAGER_PLUGIN_PATH) */
    const char *filter;          /**< site name patterns, comma list of globs, "-" prefix excludes (JAGER_FILTER) */
    uint64_t ring_bytes;         /**< bytes per thread ring, rounded up to a power of two (JAGER_RING_BYTES, default 1 MiB) */
    uint32_t ring_mode;          /**< a jager_ring_mode (JAGER_RING_MODE=discard|overwrite) */
    uint32_t flush_interval_ms;  /**< collector period (JAGER_FLUSH_MS, default 50) */
    uint32_t sample_mode;        /**< a jager_sample_mode (JAGER_SAMPLE=auto|all|1/N|interval:MS; default JAGER_SAMPLE_AUTO) */
    uint32_t sample_n;           /**< N for JAGER_SAMPLE_ONE_IN_N; the budget per window for JAGER_SAMPLE_AUTO (default 1000) */
    uint64_t sample_interval_ns; /**< interval for JAGER_SAMPLE_INTERVAL; the window for JAGER_SAMPLE_AUTO (default 1 ms) */
    uint32_t max_threads;        /**< rings registered at most (JAGER_MAX_THREADS, default 1024); more threads: events dropped and counted */
    uint32_t quiet;              /**< 1: no diagnostics on stderr (JAGER_QUIET=1); they still go into the file */
    /* appended fields go here, each commented with the version that added it */
} jager_config;

/**
 * \brief Fill \p cfg with the defaults (no environment is read) and set struct_size.
 * \return JAGER_OK, or JAGER_E_INVALID if \p cfg is NULL. [any-thread] \since 1.0
 * \param cfg the caller's struct (borrowed): set every field to its default, struct_size to sizeof(jager_config)
 */
JAGER_API jager_status jager_config_init(jager_config *cfg);

/**
 * \brief Apply the JAGER_* environment variables on top of \p cfg.
 * \return JAGER_OK, or JAGER_E_INVALID with jager_last_error() naming the variable whose
 *         value is malformed (the field keeps its previous value). [any-thread] \since 1.0
 * \param cfg a struct from jager_config_init() (borrowed): fields named by JAGER_* variables are overwritten; its strings then point into the environment and live until it changes
 */
JAGER_API jager_status jager_config_from_env(jager_config *cfg);

/* ------------------------------------------------------------------------------------ */
/** \name Lifecycle */

/**
 * \brief Start recording: calibrate the clock, start the collector, open sinks, load plugins.
 * \param cfg configuration (copied, strings included), or NULL for defaults plus the JAGER_* environment.
 * \return JAGER_OK; JAGER_E_STATE if already initialised; JAGER_E_DISABLED when disabled
 *         (every other call then stays a no-op); JAGER_E_IO if the output cannot be opened.
 *         A plugin that fails to load is reported once and skipped: init still succeeds.
 *         With \c JAGER_LOCK=FILE (docs/supply-chain.md) the shared objects the process
 *         maps are checked against that lock file: each difference is a log event
 *         (severity error, attribute \c security=true) in the recording, found on a
 *         background thread; with \c JAGER_STRICT=1 the check runs first and
 *         JAGER_E_SUPPLY_CHAIN (\since 1.1) is returned, recording not started, when
 *         anything differs or the lock cannot be read (the table printed to stderr);
 *         with \c JAGER_STRICT=abort the process exits with status 78 and a message
 *         on stderr instead of returning.
 *
 * A child made by fork() without exec records on its own when the output names the pid
 * (`%p`): its own rings, collector and file, claimed at its first event; otherwise it
 * records nothing. It never writes to the parent's sinks. Such a child's recording ends
 * at exit(), at jager_shutdown(), and at _exit() or _Exit(): libjager defines those two
 * (passing on to libc's) for that case only (docs/configuration.md, "fork() without exec").
 * [init-only] \since 1.0
 */
JAGER_API jager_status jager_init(const jager_config *cfg);

/**
 * \brief Stop recording: drain every ring, flush and close sinks, shut plugins down and
 *        unload them. Idempotent. After it, every call is a no-op until jager_init().
 * [init-only] \since 1.0
 */
JAGER_API void jager_shutdown(void);

/**
 * \brief 1 while recording (initialised and not disabled), else 0. [any-thread][hot-path] \since 1.0
 * \return 1 while recording, else 0.
 */
JAGER_API int jager_is_enabled(void);

/**
 * \brief Nonzero while recording: the same answer as jager_is_enabled() without a call.
 *        The convenience macros test it inline, so a scope in a program that is not
 *        recording costs one load and one predictable branch. Read it with a relaxed
 *        atomic load; never write it. [any-thread][hot-path] \since 1.0
 */
JAGER_API extern int jager_active;

/**
 * \brief Drain every ring into the sinks and flush them; returns when done.
 * \return JAGER_OK, or JAGER_E_STATE when not recording. [any-thread] \since 1.0
 */
JAGER_API jager_status jager_flush(void);

/* ------------------------------------------------------------------------------------ */
/** \name Clock */

/**
 * \brief Monotonic nanoseconds on the CLOCK_MONOTONIC time base: an invariant TSC
 *        calibrated against CLOCK_MONOTONIC at init, else clock_gettime().
 *        Before init it returns clock_gettime(CLOCK_MONOTONIC). [any-thread][hot-path] \since 1.0
 * \return nanoseconds on the CLOCK_MONOTONIC base.
 */
JAGER_API uint64_t jager_now_ns(void);

/* ------------------------------------------------------------------------------------ */
/** \name Sites and spans */

/** A registered code location. 0 is "no site"; ids are dense and start at 1. */
typedef uint32_t jager_site;

/**
 * An open span, returned by value (two registers on x86-64). Treat as opaque: pass it
 * unchanged to jager_span_end(). A span with site 0 is inert (not recording, or filtered).
 */
typedef struct jager_span {
    uint64_t start_ns; /**< start stamp in the library's clock units; pass unchanged to jager_span_end() */
    jager_site site;   /**< site, 0 when inert */
    uint32_t id;       /**< per-thread span id, 1-based, wraps at 2^32 */
} jager_span;

/**
 * \brief Register (or look up) the site (name, file, line). Thread-safe and idempotent:
 *        the same triple always returns the same id, within a process lifetime (also
 *        across jager_shutdown()/jager_init()).
 * \param name  region name (copied); NULL or "" is JAGER_E_INVALID and returns 0.
 * \param file  source file (copied), may be NULL.
 * \param line  source line, 0 if unknown.
 * \return the site id (≥ 1), or 0 on error. Sites excluded by JAGER_FILTER get an id but
 *         their spans are inert. Works before jager_init(). [any-thread] (takes a lock) \since 1.0
 */
JAGER_API jager_site jager_site_register(const char *name, const char *file, uint32_t line);

/**
 * \brief Open a span at \p site on the calling thread; it becomes the parent of spans
 *        opened on this thread before its end.
 * \return the open span; inert when not recording, \p site is 0/unknown, or filtered.
 *         [any-thread][hot-path] \since 1.0
 * \param site a site from jager_site_register(); 0 gives an inert span
 */
JAGER_API jager_span jager_span_begin(jager_site site);

/**
 * \brief Close \p span: update the site's exact aggregates and, per the sampling policy,
 *        record a span event (start, end, span id, parent id). Spans end on the thread
 *        that began them, normally innermost first; one that ends while spans opened
 *        after it are still open (coroutines or tasks interleaved on the thread,
 *        overlapping regions) leaves them open, and its parent is the span open below it.
 *        [any-thread][hot-path] \since 1.0
 * \param span what jager_span_begin() returned (inert spans are ignored)
 */
JAGER_API void jager_span_end(jager_span span);

/**
 * \brief jager_span_end() that also records \p bytes allocated inside the span (the Julia
 *        binding passes the GC byte counter delta). [any-thread][hot-path] \since 1.0
 * \param span what jager_span_begin() returned
 * \param bytes bytes allocated inside the span
 */
JAGER_API void jager_span_end_bytes(jager_span span, uint64_t bytes);

/** Attribute value kinds, stored as uint32_t. */
typedef enum jager_attr_kind {
    JAGER_ATTR_I64 = 1,
    JAGER_ATTR_F64 = 2,
    JAGER_ATTR_STR = 3,  /**< UTF-8, copied into the ring (≤ 1 KiB; longer is cut) */
    JAGER_ATTR_BOOL = 4,
    /** A string interned once with jager_string_intern(): value.i64 holds its id, the
     *  recording stores the text once in its string table, whatever the number of events
     *  that carry it (the Julia binding's code.method). \since 1.1 */
    JAGER_ATTR_STR_ID = 5
} jager_attr_kind;

/** A key/value attribute. Strings are borrowed for the duration of the call only. */
typedef struct jager_attr {
    const char *key;   /**< UTF-8 key, copied */
    uint32_t kind;     /**< a jager_attr_kind */
    uint32_t reserved; /**< 0 */
    union {
        int64_t i64; /**< JAGER_ATTR_I64 value */
        double f64; /**< JAGER_ATTR_F64 value */
        const char *str; /**< JAGER_ATTR_STR value (UTF-8, NUL-terminated) */
        int64_t boolean; /**< JAGER_ATTR_BOOL value (0 or 1) */
        /* JAGER_ATTR_STR_ID: the id from jager_string_intern() in i64 */
    } value; /**< the value, per kind */
} jager_attr;

/**
 * \brief Intern a UTF-8 string for JAGER_ATTR_STR_ID attributes: the same text gives the same
 *        id for the life of the process, and the recording stores it once. For values that
 *        repeat over many events (a method signature, a phase name); a value seen once is
 *        better passed as JAGER_ATTR_STR.
 * \param s UTF-8 text (copied; kept until exit), NULL gives 0
 * \return the id (≥ 1), or 0 on error. Works before jager_init(). [any-thread] (takes a lock) \since 1.1
 */
JAGER_API uint32_t jager_string_intern(const char *s);

/**
 * \brief Attach attributes to an open span (an attribute event referencing its id).
 *        [any-thread] (copies into the ring, no lock) \since 1.0
 * \param span an open span
 * \param attrs attributes (borrowed: copied into the ring during the call); may be NULL when \p nattrs is 0
 * \param nattrs entries in \p attrs
 */
JAGER_API void jager_span_set_attrs(jager_span span, const jager_attr *attrs, size_t nattrs);

/**
 * \brief Mark an open span as failed with \p message (copied, may be NULL); counts in the
 *        site's error aggregate. [any-thread] \since 1.0
 * \param span an open span
 * \param message UTF-8 text (copied, cut at 4 KiB); may be NULL
 */
JAGER_API void jager_span_error(jager_span span, const char *message);

/* ------------------------------------------------------------------------------------ */
/** \name Statistics */

/** Log-scale histogram geometry of jager_site_stat.hist: 4 sub-buckets per power of two. */
#define JAGER_HIST_SUB_BITS 2
#define JAGER_HIST_BUCKETS 192 /**< buckets in jager_site_stat.hist */

/**
 * Exact per-site aggregates, summed over all threads (live threads and exited ones).
 * Percentiles come from the log histogram (relative error ≤ 1/8). Grows only at the end.
 */
typedef struct jager_site_stat {
    uint32_t struct_size; /**< in: the caller's sizeof(jager_site_stat) */
    jager_site site; /**< the site */
    uint64_t calls;       /**< spans ended */
    uint64_t total_ns;    /**< sum of durations */
    uint64_t min_ns;      /**< 0 when calls == 0 */
    uint64_t max_ns;      /**< longest call */
    uint64_t bytes;       /**< sum of bytes passed to jager_span_end_bytes() */
    uint64_t errors;      /**< jager_span_error() calls */
    uint64_t p50_ns; /**< median, from the histogram */
    uint64_t p90_ns; /**< 90th percentile, from the histogram */
    uint64_t p99_ns; /**< 99th percentile, from the histogram */
    uint64_t hist[JAGER_HIST_BUCKETS]; /**< counts; see jager_hist_bucket_lower_ns() */
    /** spans left out of the events on purpose by the sampling mode (aggregates still
     *  count them): calls == recorded events + thinned + dropped. \since 1.1 */
    uint64_t thinned;
    /** spans whose events were lost (no ring, ring full). \since 1.1 */
    uint64_t dropped;
} jager_site_stat;

/**
 * \brief Read the exact aggregates of \p site.
 * \return JAGER_OK; JAGER_E_NOTFOUND for an unknown site; JAGER_E_INVALID for NULL or a
 *         struct_size smaller than version 1.0's. [any-thread] \since 1.0
 * \param site the site
 * \param out the caller's struct (borrowed) with struct_size set; filled on success
 */
JAGER_API jager_status jager_site_stats(jager_site site, jager_site_stat *out);

/**
 * \brief Lower bound in ns of histogram bucket \p b (< JAGER_HIST_BUCKETS). [any-thread] \since 1.0
 * \param b bucket index
 * \return the bucket's lower bound in ns; UINT64_MAX when \p b >= JAGER_HIST_BUCKETS.
 */
JAGER_API uint64_t jager_hist_bucket_lower_ns(uint32_t b);

/** Why an event did not reach a ring. Stable values, index into jager_stat.dropped. */
typedef enum jager_drop_reason {
    JAGER_DROP_RING_FULL = 0,    /**< discard mode, ring full */
    JAGER_DROP_OVERWRITTEN = 1,  /**< overwrite mode, evicted before drained */
    JAGER_DROP_NO_RING = 2,      /**< thread could not get a ring (max_threads, out of memory) */
    JAGER_DROP_TOO_LARGE = 3,    /**< record larger than a ring slot allows */
    JAGER_DROP_SINK = 4,         /**< every sink refused or failed to write the event (one sink's own failures: jager_sink_stats()) */
    JAGER_DROP_BAD_EMIT = 5,     /**< a plugin event refused: unknown, core or 0 type id, wrong field count (\since 1.2 of the plugin ABI) */
    JAGER_DROP_AFTER_STOP = 6,   /**< a plugin event emitted after the plugins' stop returned, when no drain can see it (\since 1.2 of the plugin ABI) */
    JAGER_DROP_REASONS = 8       /**< size of the dropped array */
} jager_drop_reason;

/**
 * Core counters since jager_init(). Grows only at the end. The accounting identities
 * (docs/configuration.md, "Accounting"), exact in every ring mode once the threads are
 * quiet (live threads are read without stopping them):
 *
 *     events_emitted = events_recorded + dropped[RING_FULL] + dropped[OVERWRITTEN]
 *                      + dropped[NO_RING] + dropped[TOO_LARGE] + dropped[BAD_EMIT] + dropped[AFTER_STOP]
 *     events_written = events_recorded − events_pending + drop_reports
 *     for each sink i (jager_sink_stats()):  delivered + failed = events handed to sinks
 *                                            while it was registered (events_written for a
 *                                            sink registered from the start)
 *
 * dropped[SINK] counts the events no sink took (every sink failed them); a sink's own
 * failures are in its jager_sink_stat, so one failing sink does not make the others'
 * events look lost. events_dropped (their sum) is every event that reached no sink.
 */
typedef struct jager_stat {
    uint32_t struct_size;      /**< in: the caller's sizeof(jager_stat) (a 1.0 struct, up to ring_bytes, is filled up to its size) */
    uint32_t threads;          /**< rings ever registered */
    uint64_t events_emitted;   /**< events offered to the rings, plugin events refused or emitted too late included */
    uint64_t events_recorded;  /**< events that entered a ring and were not overwritten there (overwrite mode evicts them before the collector drains them: since 1.1 those are not counted here) */
    uint64_t events_dropped;   /**< sum of dropped[] */
    uint64_t dropped[JAGER_DROP_REASONS]; /**< per jager_drop_reason */
    uint64_t events_written;   /**< events handed to sinks: the recorded events drained, and the collector's drop records */
    uint64_t spans_total;      /**< spans ended (sampled or not) */
    uint64_t span_cost_ns_x1000; /**< measured cost of one span begin+end, in ns × 1000 */
    uint64_t ring_bytes;       /**< bytes per ring */
    uint64_t events_pending;   /**< recorded events still in the rings (0 after jager_flush() and at shutdown) \since 1.1 */
    uint64_t drop_reports;     /**< drop records (JAGER_EV_DROP) the collector added to the batches \since 1.1 */
    uint64_t spans_cross_thread; /**< spans ended on another thread than the one that began them: with their task adopted there (jager_task_set, since 1.2) recorded with their true parent as JAGER_EV_SPAN_X, otherwise on the ending thread as top-level spans (docs/configuration.md) \since 1.1 */
    uint32_t sinks;            /**< sinks of this run: jager_sink_stats() reads sink 0 … sinks−1 \since 1.1 */
    uint32_t reserved0;        /**< 0 */
} jager_stat;

/**
 * \brief Read the core counters. Counters of live threads are read without stopping them.
 * \return JAGER_OK, or JAGER_E_INVALID. [any-thread] \since 1.0
 * \param out the caller's struct (borrowed) with struct_size set (at least the 1.0 size,
 *            which ends after ring_bytes); filled up to its size on success
 */
JAGER_API jager_status jager_stats(jager_stat *out);

/** Longest sink name kept in a jager_sink_stat, terminator included. */
#define JAGER_SINK_NAME_MAX 48

/** One sink's accounting this run. Grows only at the end. \since 1.1 */
typedef struct jager_sink_stat {
    uint32_t struct_size;      /**< in: the caller's sizeof(jager_sink_stat) */
    uint32_t index;            /**< the sink's place, in the order sinks were added (the file sink is 0 when JAGER_OUTPUT is set) */
    char name[JAGER_SINK_NAME_MAX]; /**< jager_sink.name, cut to fit, NUL-terminated */
    uint64_t events_delivered; /**< events of the batches its write accepted */
    uint64_t events_failed;    /**< events of the batches it failed (or could not open for) */
    uint64_t batches_failed;   /**< batches it failed */
} jager_sink_stat;

/**
 * \brief Read sink \p index's accounting (delivered + failed = the events handed to sinks
 *        while it was registered). Kept after jager_shutdown() until the next run adds a sink.
 * \param index 0 … jager_stat.sinks − 1
 * \param out the caller's struct (borrowed) with struct_size set; filled on success
 * \return JAGER_OK, JAGER_E_INVALID, or JAGER_E_NOTFOUND for an index past the last sink.
 *         [any-thread] (no lock; also from a sink's own callbacks) \since 1.1
 */
JAGER_API jager_status jager_sink_stats(uint32_t index, jager_sink_stat *out);

/* ------------------------------------------------------------------------------------ */
/** \name Logs */

/**
 * The one severity type, of log records (jager_log()), plugin diagnostics (host->log) and
 * the records they leave (jager_rec_log and jager_rec_diag aux): an OpenTelemetry severity
 * number (SeverityNumber) 1..24, TRACE 1–4, DEBUG 5–8, INFO 9–12, WARN 13–16, ERROR 17–20,
 * FATAL 21–24. A fixed-width integer, like jager_status, so any number in a range is valid
 * and it crosses the ABI and ccall as an int32_t. \since 1.0
 */
typedef int32_t jager_severity;

/** The first severity number of each range. */
enum jager_severity_number {
    JAGER_SEV_TRACE = 1,
    JAGER_SEV_DEBUG = 5,
    JAGER_SEV_INFO = 9,
    JAGER_SEV_WARN = 13,
    JAGER_SEV_ERROR = 17,
    JAGER_SEV_FATAL = 21
};

/**
 * \brief Record a log record with the current time, thread, open span and trace context.
 * \param severity OpenTelemetry severity number 1..24 (others are clamped).
 * \param body     UTF-8 message, copied (cut at 4 KiB with a truncation flag); may be NULL.
 * \param attrs    key/value attributes (copied), may be NULL when \p nattrs is 0.
 * [any-thread] (copies into the ring, no lock, no allocation) \since 1.0
 * \param nattrs entries in \p attrs
 */
JAGER_API void jager_log(jager_severity severity, const char *body, const jager_attr *attrs, size_t nattrs);

/* ------------------------------------------------------------------------------------ */
/** \name Counters and marks */

/** A registered counter; 0 is invalid. */
typedef uint32_t jager_counter;

/** Counter kinds, stored as uint32_t. */
typedef enum jager_counter_kind {
    JAGER_COUNTER_MONOTONIC = 0, /**< a running total of the whole process; jager_counter_add() deltas */
    JAGER_COUNTER_GAUGE = 1      /**< a level; jager_counter_set() values */
} jager_counter_kind;

/**
 * \brief Register (or look up by name) a counter. Idempotent per name.
 * \param name UTF-8 name (copied)
 * \param unit e.g. "bytes" (copied), may be NULL
 * \return the id, or 0 on error. [any-thread] (takes a lock) \since 1.0
 * \param kind a jager_counter_kind
 */
JAGER_API jager_counter jager_counter_register(const char *name, const char *unit, uint32_t kind);

/**
 * \brief Add \p delta to a monotonic counter and record a sample of its running total. [any-thread][hot-path] \since 1.0
 *
 * The total is one for the whole process, whatever thread adds: each sample carries the
 * total just after its add, and a sample stamped later never carries a smaller total, so
 * the counter's value at any time is the latest sample's (all threads together); its last
 * sample is the recording's total. It starts at 0 at every jager_init(). A negative or NaN
 * \p delta is ignored (a level that goes down is a gauge: jager_counter_set()).
 * \param counter a monotonic counter from jager_counter_register()
 * \param delta the amount to add, >= 0
 */
JAGER_API void jager_counter_add(jager_counter counter, double delta);

/**
 * \brief Record a gauge sample of \p value. [any-thread][hot-path] \since 1.0
 * \param counter a gauge from jager_counter_register()
 * \param value the level now
 */
JAGER_API void jager_counter_set(jager_counter counter, double value);

/**
 * \brief Record an instant mark named \p name (interned; keep the set of names small). [any-thread] \since 1.0
 * \param name UTF-8 name (copied: interned)
 */
JAGER_API void jager_mark(const char *name);

/**
 * \brief Record an instant mark named \p name with attributes (e.g. the Julia binding's
 *        allocation counters at the mark). \since 1.1 [any-thread] (copies into the ring)
 * \param name UTF-8 name (copied: interned)
 * \param attrs key/value attributes (borrowed: copied during the call); may be NULL when \p nattrs is 0
 * \param nattrs entries in \p attrs
 */
JAGER_API void jager_mark_attrs(const char *name, const jager_attr *attrs, size_t nattrs);

/* ------------------------------------------------------------------------------------ */
/** \name Tasks (green threads, coroutines, Julia tasks) */

/**
 * \brief Say which task now runs on the calling thread (0: none, the thread itself).
 *
 * Where several tasks interleave on one thread (a task yields inside a span and another
 * runs), spans are parented per task: a span's parent is the innermost span still open that
 * was begun on this thread by the same task, and a log record's span is the innermost open
 * span of the current task. While recording, a change is written to the thread's ring as a
 * `task` record (jager_rec_task), so readers know which task emitted each later record
 * (`jager summary --by task`). Setting the current task again records nothing.
 * A task may migrate (since 1.2): when the task a thread leaves has spans open there, they
 * are published (one lock, one allocation), and the thread that resumes the task adopts
 * them, so a span that ends on another thread than the one that began it keeps its parent,
 * spans the task begins there are its children, and per-call-path totals are those of the
 * same program without the move; the span is recorded as a JAGER_EV_SPAN_X with the threads
 * that number its ids, and counted in jager_stat.spans_cross_thread. The thread it left
 * takes the task's spans off its stack at its next task switch. A switch with no open spans
 * of the task left costs no lock. Task 0 (the thread itself) never migrates: a span of it
 * ended elsewhere, or one whose task's spans could not be published (no memory), is
 * recorded on the ending thread as a root of its task, as before 1.2.
 * \param task the caller's id of the task (the same on every thread), 0 for none
 * [any-thread][no alloc, no lock unless the task left or resumed has open spans] \since 1.1
 */
JAGER_API void jager_task_set(uint64_t task);

/**
 * \brief The task last set on the calling thread by jager_task_set(), 0 if none.
 * [any-thread][hot-path] \since 1.1
 * \return the task id
 */
JAGER_API uint64_t jager_task_current(void);

/**
 * \brief The innermost span still open on the calling thread that the current task began
 *        (where a task spawned now was made, say). [any-thread] \since 1.1
 * \param site receives its site (0 if none): borrowed, written during the call only; may be NULL
 * \return its per-thread span id, 0 if none is open: the id the thread that began it gave it
 *         (a span of a task that moved here, jager_task_set, keeps its begin thread's id,
 *         as its span record and a log inside it do: JAGER_LOG_SPAN_MOVED)
 */
JAGER_API uint32_t jager_span_current(jager_site *site);

/* ------------------------------------------------------------------------------------ */
/** \name W3C trace context */

/** A W3C trace context. All-zero trace_id or span_id is invalid. */
typedef struct jager_trace_context {
    uint8_t trace_id[16]; /**< 128-bit trace id */
    uint8_t span_id[8]; /**< 64-bit span (parent) id */
    uint8_t flags;       /**< trace-flags; bit 0 = sampled */
    uint8_t version;     /**< 0 */
    uint8_t reserved[6]; /**< zeros */
} jager_trace_context;

/** Length of a version-00 traceparent string, without the terminating NUL. */
#define JAGER_TRACEPARENT_LEN 55

/**
 * \brief Make a new context: random 128-bit trace id and 64-bit span id (never zero),
 *        flags = sampled. [any-thread] \since 1.0
 * \param out receives the context (borrowed)
 * \return JAGER_OK, or JAGER_E_INVALID for NULL.
 */
JAGER_API jager_status jager_trace_context_new(jager_trace_context *out);

/**
 * \brief A child context: the same trace, a new random span id, the same flags. [any-thread] \since 1.0
 * \param parent a valid context (borrowed)
 * \param out receives the child (borrowed); may equal \p parent
 * \return JAGER_OK, or JAGER_E_INVALID for NULL or an invalid parent.
 */
JAGER_API jager_status jager_trace_context_child(const jager_trace_context *parent, jager_trace_context *out);

/**
 * \brief Format \p ctx as "00-<32 hex>-<16 hex>-<2 hex>" into \p buf.
 * \return JAGER_OK; JAGER_E_INVALID for NULL, an invalid context or \p size < 56. [any-thread] \since 1.0
 * \param ctx the context (borrowed)
 * \param buf receives the NUL-terminated text (borrowed)
 * \param size bytes at \p buf, at least 56
 */
JAGER_API jager_status jager_traceparent_format(const jager_trace_context *ctx, char *buf, size_t size);

/**
 * \brief Parse a traceparent header value strictly (W3C Trace Context level 1):
 *        lowercase hex, version ff rejected, all-zero ids rejected, version 00 exactly
 *        55 characters, later versions accepted when the prefix parses and is followed
 *        by '-' or the end. Never reads past \p len.
 * \return JAGER_OK, or JAGER_E_FORMAT (and \p out untouched). [any-thread] \since 1.0
 * \param value the header value (borrowed), not necessarily NUL-terminated
 * \param len bytes of \p value
 * \param out receives the context (borrowed)
 */
JAGER_API jager_status jager_traceparent_parse(const char *value, size_t len, jager_trace_context *out);

/**
 * \brief The calling thread's current context. \return JAGER_OK, or JAGER_E_NOTFOUND if none is set. [any-thread] \since 1.0
 * \param out receives the context (borrowed)
 */
JAGER_API jager_status jager_context_current(jager_trace_context *out);

/**
 * \brief Set (or with NULL clear) the calling thread's current context. [any-thread] \since 1.0
 *
 * While recording, a change is also written to the thread's ring as a `context` record, so
 * the spans this thread begins afterwards are known to belong to that trace (the otel plugin
 * exports them in it, the first ones as children of the context's span). Setting the same
 * context again records nothing.
 * \param ctx the context (copied), or NULL to clear
 */
JAGER_API void jager_context_set(const jager_trace_context *ctx);

/** Carrier setter: store \p key = \p value (both NUL-terminated, borrowed) into \p carrier
 *  (borrowed: the pointer given to jager_context_inject()). */
typedef void (*jager_carrier_set_fn)(void *carrier, const char *key, const char *value);
/** Carrier getter: the value of \p key (borrowed) in \p carrier (borrowed: the pointer given to
 *  jager_context_extract()), or NULL; the string must live until the call returns. */
typedef const char *(*jager_carrier_get_fn)(void *carrier, const char *key);

/**
 * \brief Write the current context into a carrier as "traceparent" (a child span id is
 *        not made: the current span id is propagated).
 * \return JAGER_OK, or JAGER_E_NOTFOUND when no context is current. [any-thread] \since 1.0
 * \param carrier the caller's carrier, passed back to \p set (borrowed)
 * \param set stores one key/value pair into \p carrier
 */
JAGER_API jager_status jager_context_inject(void *carrier, jager_carrier_set_fn set);

/**
 * \brief Read "traceparent" from a carrier, parse it and make it the current context.
 * \return JAGER_OK; JAGER_E_NOTFOUND if absent; JAGER_E_FORMAT if malformed (the current
 *         context is then left unchanged). [any-thread] \since 1.0
 * \param carrier the caller's carrier, passed back to \p get (borrowed)
 * \param get reads one key from \p carrier
 */
JAGER_API jager_status jager_context_extract(void *carrier, jager_carrier_get_fn get);

/* ------------------------------------------------------------------------------------ */
/** \name Run metadata
 * Host, command line, pid, start time, clock calibration and (when found by walking up
 * from the working directory to a .git folder, or from JAGER_GIT_COMMIT) the git commit
 * are collected at init and written into the file header.
 */

/**
 * \brief Add or replace a run metadata entry (e.g. "mpi.rank" = "3"), written into the
 *        file's metadata. Keys starting with "jager." are reserved.
 * \return JAGER_OK, JAGER_E_INVALID, JAGER_E_NOMEM. [any-thread] (takes a lock) \since 1.0
 * \param key UTF-8 key (copied)
 * \param value UTF-8 value (copied)
 */
JAGER_API jager_status jager_metadata_set(const char *key, const char *value);

/* ------------------------------------------------------------------------------------ */
/** \name Stacks and symbols
 * Plugins capture raw return addresses; the core deduplicates them into a stack table
 * written into the file. C frames are symbolized by the core (dladdr); a language
 * binding symbolizes its JIT frames by pulling unresolved addresses and adding frames.
 */

/** A stack id; 0 is "no stack". */
typedef uint64_t jager_stack_id;

/**
 * \brief Intern a stack of \p n return addresses (innermost first); identical stacks get
 *        the same id. Not for signal handlers or GC callbacks: it locks and may allocate.
 * \return the id, or 0 on error. [any-thread] (takes a lock) \since 1.0
 * \param ips return addresses, innermost first (copied)
 * \param n entries in \p ips (at least 1)
 */
JAGER_API jager_stack_id jager_stack_intern(const uint64_t *ips, uint32_t n);

/**
 * \brief Copy up to \p cap addresses from interned stacks that no symbolizer has resolved
 *        yet and that dladdr could not name, marking them as handed out.
 * \return the number copied. [any-thread] \since 1.0
 * \param ips receives the addresses (borrowed)
 * \param cap room at \p ips
 */
JAGER_API size_t jager_symbols_unresolved(uint64_t *ips, size_t cap);

/**
 * \brief Record the source frame for return address \p ip. Call once per frame, outermost
 *        inlining level first with \p inline_depth 0, then 1, 2… for frames inlined into it.
 * \param func function name (copied); NULL or "" is recorded as "??"
 * \param file source file (copied); NULL is ""
 * \param line source line, 0 if unknown
 * \return JAGER_OK, JAGER_E_INVALID, JAGER_E_NOMEM. [any-thread] \since 1.0
 * \param ip the return address
 * \param inline_depth 0 for the outermost frame, 1.. for frames inlined into it
 */
JAGER_API jager_status jager_symbol_add(uint64_t ip, uint32_t inline_depth, const char *func,
                                        const char *file, uint32_t line);

/* ------------------------------------------------------------------------------------ */
/** \name Extensions */

/**
 * \brief Look up an extension that a loaded plugin offers by versioned id, e.g.
 *        "jager.dispatch/1" (the plugin's get_extension callback answers).
 * \return the plugin's table (lives until jager_shutdown()), or NULL when no loaded plugin
 *         offers \p id. [any-thread] \since 1.0
 * \param id the versioned extension id (borrowed)
 */
JAGER_API const void *jager_extension_get(const char *id);

/* ------------------------------------------------------------------------------------ */
/** \name Convenience macros
 * JAGER_SPAN(name) opens a span that ends when the enclosing scope exits (GCC/Clang
 * cleanup attribute); the site is registered once per expansion, so \p name must be a
 * string literal (anything else does not compile; for names known only at run time use
 * jager_site_register() and jager_span_begin()). All of them compile to
 * nothing when JAGER_NO_INSTRUMENTATION is defined.
 */
#if defined(JAGER_NO_INSTRUMENTATION)
#define JAGER_SPAN(name) ((void)sizeof("" name ""))
#define JAGER_LOG(sev, msg) ((void)0)
#define JAGER_MARK(name) ((void)0)
#else
/** \cond INTERNAL */
/* Never measured by -finstrument-functions (libjager-instrument.so): the helpers of a
 * JAGER_SPAN are not the program's functions. */
#define JAGER__NOINST __attribute__((no_instrument_function))
JAGER__NOINST static inline void jager__span_cleanup(jager_span *s)
{
    if (s->site) jager_span_end(*s);
}
JAGER__NOINST static inline jager_span jager__span_inert(void)
{
    jager_span s = {0, 0, 0};
    return s;
}
JAGER__NOINST static inline jager_site jager__site_once(jager_site *cache, const char *name, const char *file, uint32_t line)
{
    jager_site s = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (__builtin_expect(s == 0, 0)) {
        s = jager_site_register(name, file, line);
        __atomic_store_n(cache, s, __ATOMIC_RELEASE);
    }
    return s;
}
#define JAGER__CAT2(a, b) a##b
#define JAGER__CAT(a, b) JAGER__CAT2(a, b)
/* "" name "": the name must be a string literal (the site is registered once per
 * expansion, so a variable's later values would all count under its first one); the
 * span variable is used only by its cleanup, which Clang's -Wunused-variable ignores. */
#define JAGER__SPAN(name, n)                                                                                 \
    static jager_site JAGER__CAT(jager__site_, n);                                                          \
    jager_span JAGER__CAT(jager__span_, n) __attribute__((cleanup(jager__span_cleanup), unused)) =          \
        __builtin_expect(__atomic_load_n(&jager_active, __ATOMIC_RELAXED), 1)                               \
            ? jager_span_begin(jager__site_once(&JAGER__CAT(jager__site_, n), "" name "", __FILE__, __LINE__)) \
            : jager__span_inert()
/** \endcond */
/** Open a span named \p name (a string literal) until the enclosing scope exits.
 *  One per line and scope (the names it declares carry __LINE__, which, unlike
 *  __COUNTER__, is the same in every translation unit that includes an inline function). */
#define JAGER_SPAN(name) JAGER__SPAN(name, __LINE__)
/** jager_log() with severity \p sev and body \p msg, no attributes. */
#define JAGER_LOG(sev, msg) jager_log((sev), (msg), NULL, 0)
/** jager_mark(\p name). */
#define JAGER_MARK(name) jager_mark(name)
#endif

#ifdef __cplusplus
}
#endif

#endif /* JAGER_H */
