/*
 * jager_plugin.h — the Jäger plugin ABI (versioned vtables). The event record layout it
 * emits and sinks receive is in jager_record.h, which this header includes.
 *
 * A plugin is a shared library `libjager-<name>.so` exporting one symbol,
 * JAGER_PLUGIN_ENTRY_SYMBOL, that returns a jager_plugin_descriptor. The core passes it a
 * jager_host_api table at init. Both tables carry their size and ABI version in their
 * first fields and only ever grow at the end; a field is read only if the struct's
 * struct_size covers it, so a newer core loads older plugins, and a plugin built against
 * a newer minor runs on an older core by checking host->struct_size before using a field.
 * A plugin built for another ABI major is refused with one diagnostic.
 *
 * Reading order: ABI versions, sinks, host API, plugin descriptor and entry point.
 *
 * Ownership words used below: "copied" (the callee keeps its own copy; the caller's memory
 * may go right after the call), "borrowed" (read or written during the call only, unless
 * the text gives a longer time), "lives until X" (the pointer stays valid until X), "owned
 * by X" (X frees it). The test docs_complete checks every pointer parameter has one.
 */
/** \file
 * See the comment above for this header's concern and reading order. */
#ifndef JAGER_PLUGIN_H
#define JAGER_PLUGIN_H

#include <string.h>

#include "jager.h"
#include "jager_record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/** \name ABI versions
 * Major changes break compatibility (a descriptor or host field changed meaning); minor
 * versions only append fields. The core accepts any plugin whose abi_major equals
 * JAGER_PLUGIN_ABI_MAJOR, whatever its minor.
 */
#define JAGER_PLUGIN_ABI_MAJOR 1 /**< plugins of another major are refused */
#define JAGER_PLUGIN_ABI_MINOR 3 /**< fields appended to the tables (1.1: the host's span functions; 1.2: emit_status, set_error, extension, timers, plugin counters; 1.3: span hooks) */

/** Export macro for a plugin's entry symbol (the only symbol a plugin should export). */
#if defined(__GNUC__)
#define JAGER_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define JAGER_PLUGIN_EXPORT
#endif

/* ------------------------------------------------------------------------------------ */
/** \name Sinks
 * A sink receives the drained records, one batch per thread ring per drain, on the
 * collector thread (never concurrently with itself). A sink must not call back into
 * emit functions. Callbacks may be NULL where marked optional.
 */

/** A batch of whole records from one thread. */
typedef struct jager_batch {
    uint32_t struct_size; /**< sizeof the struct as the writer built it (only grows) */
    uint32_t thread;       /**< thread index (1-based, see host->thread_info) */
    const uint8_t *data;   /**< records back to back, no JAGER_EV_PAD */
    size_t bytes; /**< bytes in data */
    uint64_t events;       /**< records in data */
} jager_batch;

/** A sink vtable. The struct is copied at registration; \p ctx is passed back. */
typedef struct jager_sink {
    uint32_t struct_size;                    /**< sizeof(jager_sink) at build time */
    uint32_t reserved; /**< 0; reserved for future use */
    const char *name;                        /**< for diagnostics */
    void *ctx; /**< opaque pointer passed back to every callback */
    jager_status (*open)(void *ctx);         /**< optional; before the first batch; \p ctx borrowed (the field above) */
    /** required; \p batch borrowed (its data lives until the call returns), \p ctx borrowed;
     *  non-zero counts the batch as dropped (JAGER_DROP_SINK) */
    jager_status (*write)(void *ctx, const jager_batch *batch);
    void (*flush)(void *ctx);                /**< optional; after each drain requested by jager_flush() and at close; \p ctx borrowed */
    void (*close)(void *ctx);                /**< optional; after the last batch, before plugins shut down; \p ctx borrowed, for the last time */
} jager_sink;

/**
 * \brief Add a sink from the application (a custom exporter, a test's memory sink); the
 *        struct is copied. A sink added before jager_init() serves the run it starts;
 *        jager_shutdown() closes and forgets every sink.
 * \return JAGER_OK; JAGER_E_INVALID (NULL, no write callback, struct_size too small);
 *         JAGER_E_FULL (more than 16 sinks). [any-thread] \since 1.0
 * \param sink the sink (copied); its ctx is borrowed and must live until the sink's close callback returns
 */
JAGER_API jager_status jager_sink_add(const jager_sink *sink);

/* ------------------------------------------------------------------------------------ */
/** \name Host API */

/** Opaque handle naming one loaded plugin to the host. */
typedef struct jager_plugin_handle jager_plugin_handle;

/** \deprecated The 1.0 names of host->log levels: the jager_severity numbers JAGER_SEV_*. */
#define JAGER_DIAG_DEBUG JAGER_SEV_DEBUG
#define JAGER_DIAG_INFO JAGER_SEV_INFO   /**< \deprecated JAGER_SEV_INFO */
#define JAGER_DIAG_WARN JAGER_SEV_WARN   /**< \deprecated JAGER_SEV_WARN */
#define JAGER_DIAG_ERROR JAGER_SEV_ERROR /**< \deprecated JAGER_SEV_ERROR */

/** A host timer's callback (host->timer_start): runs on a thread the host owns; \p arg is
 *  borrowed (the pointer given to timer_start, owned by the plugin). */
typedef void (*jager_timer_fn)(void *arg);

/**
 * What a span hook (host->span_hook_add, 1.3) is told of one span beginning or ending on
 * a site it hooks. Borrowed: valid during the hook's call only. Grows at the end like the
 * other tables: read a field only if struct_size covers it. \since 1.3
 */
typedef struct jager_span_event {
    uint32_t struct_size; /**< sizeof the struct as the host built it (only grows) */
    jager_site site;      /**< the span's site (host->site_info names it) */
    uint32_t span_id;     /**< the span's id on its thread (jager_span.id) */
    uint32_t parent_id;   /**< the id of the span it is nested in on this thread, 0 at the top */
    uint32_t thread;      /**< thread index (host->thread_info) */
    uint32_t depth;       /**< spans open on this thread around it (0 at the top) */
    uint64_t time_ns;     /**< begin: now, just before the span's start is taken; end: the span's end */
    uint64_t duration_ns; /**< end: the span's duration as recorded; begin: 0 */
} jager_span_event;

/**
 * A span hook's callback: runs on the thread that begins or ends the span, inside
 * jager_span_begin()/jager_span_end(), so it must be short and must not block; it may
 * emit events and record spans (spans begun inside a hook are never hooked themselves).
 * Its own time is not charged to the span (begin hooks run before the start is taken,
 * end hooks after the end). \p arg is borrowed (the pointer given to span_hook_add, owned
 * by the plugin); \p span is borrowed, valid during the call only. \since 1.3
 */
typedef void (*jager_span_hook_fn)(void *arg, const jager_span_event *span);

/**
 * The core's services for plugins. Passed to init. The table itself is static and lives
 * as long as the process; the handle a plugin was given is a token that the host checks
 * on every call, so every function stays harmless after the plugin's shutdown (or after
 * jager_shutdown()): functions taking \p self then refuse (JAGER_E_STATE, NULL, nothing
 * logged into a recording), emit counts the event as lost (JAGER_DROP_AFTER_STOP once the
 * plugins' stop returned); functions taking no handle act as their jager_* counterparts
 * do outside a recording (describe what the process registered, record nothing). Each
 * entry below names its stale-handle result where it has one. Check struct_size (or
 * abi_minor) before using a field added after 1.0.
 */
typedef struct jager_host_api {
    uint32_t struct_size; /**< sizeof the struct as the writer built it (only grows) */
    uint16_t abi_major; /**< JAGER_PLUGIN_ABI_MAJOR of the host */
    uint16_t abi_minor; /**< JAGER_PLUGIN_ABI_MINOR of the host */
    /* ---- 1.0 ---- */
    /** Register an event type named "<plugin>.<event>" (name and fields copied); same name
     *  and fields again returns the same id, same name with other fields is
     *  JAGER_E_INVALID; type_out (borrowed) receives the id. [any-thread] (lock) */
    jager_status (*register_type)(jager_plugin_handle *self, const char *name,
                                  const jager_field_desc *fields, uint32_t nfields, uint16_t *type_out);
    /** Record an event of a registered type on the calling thread's ring (fields copied,
     *  nfields values). time_ns 0 means now. Drops and counts when full; refuses and counts
     *  (JAGER_DROP_BAD_EMIT, said once per type) a type 0, unknown or core type or a wrong
     *  field count; after the plugins' stop returned, counts it lost (JAGER_DROP_AFTER_STOP,
     *  the plugin named once). emit_status (1.2) says which. [any-thread][hot-path] */
    void (*emit)(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields);
    /** jager_now_ns(). [any-thread][hot-path] */
    uint64_t (*now_ns)(void);
    /** Intern the UTF-8 string \p s (copied), returning a stable id (0 on error). [any-thread] (lock) */
    uint32_t (*intern)(const char *s);
    /** The text of a string id, or NULL. Lives until jager_shutdown(). [any-thread] */
    const char *(*string)(uint32_t id);
    /** A configuration value for this plugin: key (borrowed) "depth" of plugin "gc" reads
     *  JAGER_GC_DEPTH from the environment. NULL if unset; the value is the environment's
     *  and lives until the variable changes. [any-thread] */
    const char *(*config)(jager_plugin_handle *self, const char *key);
    /** A diagnostic of jager_severity \p level (message copied): to stderr (unless quiet)
     *  and into the recording as JAGER_EV_DIAG. [any-thread] */
    void (*log)(jager_plugin_handle *self, jager_severity level, const char *message);
    /** Add a sink; the struct is copied, its ctx borrowed until the sink's close returns. [init-only: from init or start] */
    jager_status (*register_sink)(jager_plugin_handle *self, const jager_sink *sink);
    /** jager_stack_intern() (ips copied). [any-thread] (lock; not from signal handlers or GC callbacks) */
    jager_stack_id (*stack_intern)(const uint64_t *ips, uint32_t n);
    /** Describe a type id, or NULL; the description lives until jager_shutdown(). [any-thread] */
    const jager_type_desc *(*type_info)(uint16_t type);
    /** Describe a site: name, file (live until exit: sites outlive runs) and line; outputs
     *  (borrowed) may be NULL. [any-thread] */
    jager_status (*site_info)(jager_site site, const char **name, const char **file, uint32_t *line);
    /** Describe a thread index: \p os_tid receives the OS thread id, \p name the name (may be "";
     *  lives until exit); both out-parameters borrowed (written during the call), may be NULL.
     *  [any-thread] */
    jager_status (*thread_info)(uint32_t thread, uint64_t *os_tid, const char **name);
    /** jager_metadata_set() (key and value copied). [any-thread] */
    jager_status (*metadata_set)(const char *key, const char *value);
    /** A run metadata value or NULL (host.name, process.pid, …); key borrowed, the value
     *  lives until jager_shutdown(). [any-thread] */
    const char *(*metadata_get)(const char *key);
    /** Describe a counter id: \p name and \p unit receive strings that live until exit, \p kind
     *  its jager_counter_kind; the out-parameters are borrowed (written during the call) and
     *  may be NULL. [any-thread] */
    jager_status (*counter_info)(jager_counter counter, const char **name, const char **unit, uint32_t *kind);
    /** Stack addresses of an interned stack: \p ips receives them (innermost first; they live
     *  until exit), \p n their number; both out-parameters borrowed (written during the call).
     *  [any-thread] */
    jager_status (*stack_get)(jager_stack_id id, const uint64_t **ips, uint32_t *n);
    /** Sites currently open on the calling thread, innermost first, into out (borrowed,
     *  cap entries); returns the count written (≤ cap). [any-thread][hot-path] */
    uint32_t (*open_sites)(jager_site *out, uint32_t cap);
    /* ---- 1.1 (took reserved slots 0..4; NULL in a 1.0 host: check abi_minor >= 1) ---- */
    /** jager_site_register() (\p name and \p file copied): a plugin that records regions as
     *  spans (OpenMP, MPI calls) names its sites like the application does. [any-thread]
     *  (lock) \since 1.1 */
    jager_site (*site_register)(const char *name, const char *file, uint32_t line);
    /** jager_span_begin() on the calling thread. [any-thread][hot-path] \since 1.1 */
    jager_span (*span_begin)(jager_site site);
    /** jager_span_end() on the calling thread. [any-thread][hot-path] \since 1.1 */
    void (*span_end)(jager_span span);
    /** jager_span_set_attrs() (\p attrs borrowed: copied into the ring during the call).
     *  [any-thread] (no lock) \since 1.1 */
    void (*span_set_attrs)(jager_span span, const jager_attr *attrs, size_t nattrs);
    /** jager_span_end() with the end time given: \p end_ns is a now_ns() value taken
     *  earlier on any thread (a runtime that reports an end late); an end before the
     *  start counts as no time. [any-thread][hot-path] \since 1.1 */
    void (*span_end_ns)(jager_span span, uint64_t end_ns);
    /* ---- 1.2 (took reserved slots 0..2, then appended; NULL or absent in an older host:
     *      check abi_minor >= 2) ---- */
    /** emit() returning what happened: JAGER_OK (in the ring), JAGER_E_FULL (dropped,
     *  counted by the ring), JAGER_E_INVALID (refused: bad type or field count, counted
     *  bad_emit), JAGER_E_STATE (not recording; after the plugins' stop counted after_stop),
     *  so a plugin can count its own losses. \p fields copied, as emit. [any-thread][hot-path]
     *  \since 1.2 */
    jager_status (*emit_status)(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields);
    /** Set the reason (copied) that the failure the plugin is about to return from init or
     *  start is reported with ("cannot open /proc/self/stat: EACCES"); also
     *  jager_last_error() on the calling thread. [any-thread] \since 1.2 */
    void (*set_error)(jager_plugin_handle *self, const char *reason);
    /** Another loaded plugin's extension table \p id (borrowed; "jager.dispatch/1"), or NULL;
     *  the table is owned by that plugin and lives until it is unloaded. Only plugins loaded
     *  before this one (earlier in JAGER_PLUGINS) are seen during init. NULL with a stale
     *  handle. [any-thread] \since 1.2 */
    const void *(*extension)(jager_plugin_handle *self, const char *id);
    /** Call \p fn(arg) every \p interval_ns (at least 100 µs) on a thread the host owns,
     *  until timer_stop or the plugin's stop: the host stops every timer of a plugin
     *  before calling its stop, and waits until no callback runs, so none runs after stop
     *  has returned. Deadlines are start + k × interval; a late callback skips the
     *  deadlines it missed. \p timer_out (borrowed) receives the id. JAGER_E_FULL past 64
     *  timers in the process; JAGER_E_STATE with a stale handle. [any-thread] \since 1.2 */
    jager_status (*timer_start)(jager_plugin_handle *self, uint64_t interval_ns, jager_timer_fn fn, void *arg,
                                uint32_t *timer_out);
    /** Stop a timer: returns once its callback no longer runs (from the timer's own
     *  callback: returns at once, no later call starts). JAGER_E_NOTFOUND for no running
     *  timer of this plugin; JAGER_E_STATE with a stale handle (its timers stopped at its
     *  unload). [any-thread] \since 1.2 */
    jager_status (*timer_stop)(jager_plugin_handle *self, uint32_t timer);
    /** jager_counter_register() for a counter named "<plugin>.<name>" (name snake_case;
     *  unit copied, e.g. "bytes", may be NULL; kind JAGER_COUNTER_MONOTONIC or
     *  JAGER_COUNTER_GAUGE). The report charts it. 0 on error (jager_last_error()).
     *  [any-thread] (lock) \since 1.2 */
    jager_counter (*counter_register)(jager_plugin_handle *self, const char *name, const char *unit, uint32_t kind);
    /** jager_counter_add(): add to a monotonic counter's running total (one for the whole
     *  process, from 0 at every jager_init(); a negative delta is ignored). Outside a
     *  recording (after jager_shutdown(), with the counter of an unloaded plugin) it does
     *  nothing. [any-thread] \since 1.2 */
    void (*counter_add)(jager_counter counter, double delta);
    /** jager_counter_set(): record a gauge's value; outside a recording it does nothing.
     *  [any-thread] \since 1.2 */
    void (*counter_set)(jager_counter counter, double value);
    /* ---- 1.3 (took reserved slots 0..1; NULL in an older host: check abi_minor >= 3) ---- */
    /** Ask to be told when a span begins and when it ends on every site named
     *  \p site_name (copied; exact name, sites registered later included): \p begin and
     *  \p end (either may be NULL) are called with \p arg on the span's thread. Spans of
     *  sites nobody hooks pay nothing for it. A hook's end is called exactly for the spans
     *  whose begin it was told of, when they end on the thread that began them (at most 32
     *  hooked spans open per thread: deeper ones are not told of). Hooks end before the
     *  plugin's stop is called, and span_hook_remove returns once no call of the hook runs
     *  (from the hook's own callback: at once, no later call starts). \p hook_out
     *  (borrowed, may be NULL) receives the id. JAGER_E_INVALID (empty name, no callback),
     *  JAGER_E_FULL past 64 hooks in the process, JAGER_E_STATE with a stale handle.
     *  [any-thread] (lock) \since 1.3 */
    jager_status (*span_hook_add)(jager_plugin_handle *self, const char *site_name, jager_span_hook_fn begin,
                                  jager_span_hook_fn end, void *arg, uint32_t *hook_out);
    /** Remove a hook of this plugin (see span_hook_add): JAGER_E_NOTFOUND for no such
     *  hook of it; JAGER_E_STATE with a stale handle (its hooks removed at its unload).
     *  [any-thread] \since 1.3 */
    jager_status (*span_hook_remove)(jager_plugin_handle *self, uint32_t hook);
    void *reserved[6]; /**< NULL; future minors put functions here */
} jager_host_api;

/* ------------------------------------------------------------------------------------ */
/** \name Plugin descriptor and entry point */

/**
 * A typed option a plugin understands (self-description for `jager plugins`). It grows
 * like the other tables, fields appended only, but it comes in an array, whose stride a
 * host must know before reading the first element: so the descriptor carries it
 * (jager_plugin_descriptor.option_size), and hosts read options through
 * jager_plugin_option(), which copies the fields the plugin's size covers and zeroes the
 * rest. Declare the array with JAGER_PLUGIN_OPTIONS().
 */
typedef struct jager_option_desc {
    /* ---- 1.0 ---- */
    const char *key;           /**< "depth": read as JAGER_<PLUGIN>_DEPTH */
    const char *type;          /**< "int", "bool", "string", "bytes", "duration" */
    const char *default_value; /**< default as text */
    const char *help; /**< one line of help */
} jager_option_desc;

/** The size of a 1.0 jager_option_desc (four pointers): what option_size 0 stands for. */
#define JAGER_OPTION_DESC_SIZE_1_0 (4 * sizeof(const char *))

/**
 * What a plugin's entry symbol returns. Static storage owned by the plugin. Callbacks may
 * be NULL unless marked required. Called in this order: init (required) → start →
 * flush* (collector thread, before each drain requested by jager_flush()) → stop (at
 * jager_shutdown(), before the final drain: emit summaries here, and end every thread
 * the plugin started — events emitted after stop returns are lost and counted) →
 * shutdown (after sinks closed; free everything) → dlclose. The library is opened with
 * RTLD_NODELETE: its code stays mapped after dlclose, so a thread left running cannot
 * crash the process (its events are counted as after_stop). Calling jager_init() or
 * jager_shutdown() from any callback (or a timer's) is refused with JAGER_E_STATE.
 * Every callback (and every callback of a sink the plugin registered) runs on a thread
 * the host owns for the plugin while the caller waits at most JAGER_PLUGIN_TIMEOUT_MS
 * (default 10 s; 0: inline, unbounded): one that does not return in time disables the
 * plugin, reported once, and no callback of it runs again (not even shutdown).
 */
typedef struct jager_plugin_descriptor {
    uint32_t struct_size;    /**< sizeof(jager_plugin_descriptor) the plugin was built with */
    uint16_t abi_major;      /**< JAGER_PLUGIN_ABI_MAJOR the plugin was built with */
    uint16_t abi_minor;      /**< JAGER_PLUGIN_ABI_MINOR the plugin was built with */
    const char *name;        /**< must equal NAME in libjager-NAME.so */
    const char *version;     /**< the plugin's own version string */
    const char *description; /**< one line saying what the plugin records */
    /* ---- 1.0 ---- */
    /** Required. Register types and sinks; return JAGER_E_UNSUPPORTED to step aside quietly
     *  with a reason logged through host->log (e.g. "not a Julia process"). \p host lives
     *  until the process exits (a static table); \p state (borrowed) receives the plugin's
     *  state, owned by the plugin and passed back to every callback below. */
    jager_status (*init)(const jager_host_api *host, jager_plugin_handle *self, void **state);
    jager_status (*start)(void *state); /**< optional: begin recording (after every plugin initialised); \p state owned by the plugin */
    void (*flush)(void *state); /**< optional: collector thread, before each drain requested by jager_flush(); \p state owned by the plugin */
    void (*stop)(void *state); /**< optional: at jager_shutdown(), before the final drain; emit summaries here; \p state owned by the plugin */
    void (*shutdown)(void *state); /**< optional: free everything (\p state is owned by the plugin); sinks are closed */
    /** Versioned extension tables, e.g. "jager.dispatch/1" (\p id borrowed; \p state owned by
     *  the plugin); NULL if unknown. The table is owned by the plugin and lives until it is
     *  unloaded. */
    const void *(*get_extension)(void *state, const char *id);
    const jager_option_desc *options; /**< typed options the plugin reads (may be NULL) */
    uint32_t noptions; /**< entries in options */
    /** sizeof(jager_option_desc) the plugin was built with (JAGER_PLUGIN_OPTIONS sets it);
     *  0, as plugins built before it was named set it, reads as JAGER_OPTION_DESC_SIZE_1_0. \since 1.0 (was reserved0) */
    uint32_t option_size;
    /** JAGER_PLUGIN_FLAG_*: 0 for none (\since 1.3, was reserved[0]: a plugin built before
     *  reads as 0 there). */
    uint64_t flags;
    void *reserved[7];       /**< NULL */
} jager_plugin_descriptor;

/**
 * Descriptor flag (1.3): the plugin's init, start, stop and shutdown run on the thread that
 * calls jager_init()/jager_shutdown() itself, as in ABI 1.2 and before, instead of on a
 * host thread while that thread waits — for a plugin bound to a runtime that must be
 * called from the program's own thread (an OpenMP master thread, an MPI_THREAD_SINGLE
 * program, a Julia thread in a ccall). Those calls are then not bounded by
 * JAGER_PLUGIN_TIMEOUT_MS (a hang in them hangs the program: keep them short), only
 * watched: one that runs past it is named once in a diagnostic. Flush and sink callbacks
 * are still bounded.
 */
#define JAGER_PLUGIN_FLAG_CALLER_THREAD 1u

/** Fill a descriptor's options, noptions and option_size from a static array: `JAGER_PLUGIN_OPTIONS(my_options),` in its initializer. */
#define JAGER_PLUGIN_OPTIONS(array) \
    .options = (array), .noptions = (uint32_t)(sizeof(array) / sizeof((array)[0])), .option_size = (uint32_t)sizeof((array)[0])

/**
 * \brief Read option \p i of a plugin's descriptor with the plugin's own element size.
 * \param d     the descriptor (borrowed); its struct_size must cover option_size or be the
 *              1.0 size (then the options are read with the 1.0 layout).
 * \param i     index below d->noptions.
 * \param out   receives the option: the fields the plugin's size covers are copied, later
 *              ones are zeroed. Its strings are borrowed from the plugin and live until it
 *              is unloaded.
 * \return 1 with \p out filled; 0 when \p i is out of range, the descriptor has no
 *         options or its option_size is smaller than the 1.0 layout. [any-thread] \since 1.0
 */
static inline int jager_plugin_option(const jager_plugin_descriptor *d, uint32_t i, jager_option_desc *out)
{
    size_t stride, n;
    if (!d || !out || !d->options || i >= d->noptions) return 0;
    stride = d->option_size ? d->option_size : JAGER_OPTION_DESC_SIZE_1_0;
    if (stride < JAGER_OPTION_DESC_SIZE_1_0) return 0;
    n = stride < sizeof *out ? stride : sizeof *out;
    memset(out, 0, sizeof *out);
    memcpy(out, (const unsigned char *)d->options + (size_t)i * stride, n);
    return 1;
}

/**
 * \brief The folders the loader searches after the JAGER_PLUGIN_PATH ones, in order: the
 *        installed plugin folder (beside the running libjager: LIBDIR/jager/plugins), then
 *        the build tree's, only when this libjager is the build tree's own (a marker file
 *        the build writes beside it; an installed library never searches a build folder).
 * \param i      index from 0
 * \param origin receives "installed" or "build tree" (may be NULL): borrowed, written during
 *               the call; the string is static and lives until exit
 * \return the folder (static storage, lives until exit), NULL when \p i is past the last.
 *         [any-thread] \since 1.2 of the plugin ABI
 */
JAGER_API const char *jager_plugin_default_folder(uint32_t i, const char **origin);

/** The entry symbol's name. */
#define JAGER_PLUGIN_ENTRY_SYMBOL "jager_plugin_entry"

/**
 * Signature of the entry symbol. The host passes its ABI version so a plugin may adapt;
 * the plugin returns its descriptor (or NULL to refuse).
 */
typedef const jager_plugin_descriptor *(*jager_plugin_entry_fn)(uint32_t host_abi_major, uint32_t host_abi_minor);

/** Declare the entry point in a plugin: `JAGER_PLUGIN_DEFINE_ENTRY(&my_descriptor)`. */
#define JAGER_PLUGIN_DEFINE_ENTRY(desc_ptr)                                                   \
    JAGER_PLUGIN_EXPORT const jager_plugin_descriptor *jager_plugin_entry(uint32_t host_abi_major, \
                                                                          uint32_t host_abi_minor) \
    {                                                                                         \
        (void)host_abi_major;                                                                 \
        (void)host_abi_minor;                                                                 \
        return (desc_ptr);                                                                    \
    }

#ifdef __cplusplus
}
#endif

#endif /* JAGER_PLUGIN_H */
