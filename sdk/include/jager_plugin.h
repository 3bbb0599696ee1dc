/*
 * jager_plugin.h — the Jäger plugin ABI (versioned vtables) and the event record layout.
 *
 * A plugin is a shared library `libjager-<name>.so` exporting one symbol,
 * JAGER_PLUGIN_ENTRY_SYMBOL, that returns a jager_plugin_descriptor. The core passes it a
 * jager_host_api table at init. Both tables carry their size and ABI version in their
 * first fields and only ever grow at the end; a field is read only if the struct's
 * struct_size covers it, so a newer core loads older plugins, and a plugin built against
 * a newer minor runs on an older core by checking host->struct_size before using a field.
 * A plugin built for another ABI major is refused with one diagnostic.
 *
 * Reading order: versions, records (the event layout shared by rings, sinks and files),
 * self-describing event types, sinks, the host API, the plugin descriptor and entry point.
 */
#ifndef JAGER_PLUGIN_H
#define JAGER_PLUGIN_H

#include "jager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/** \name ABI versions
 * Major changes break compatibility (a descriptor or host field changed meaning); minor
 * versions only append fields. The core accepts any plugin whose abi_major equals
 * JAGER_PLUGIN_ABI_MAJOR, whatever its minor.
 */
#define JAGER_PLUGIN_ABI_MAJOR 1
#define JAGER_PLUGIN_ABI_MINOR 0

/** Export macro for a plugin's entry symbol (the only symbol a plugin should export). */
#if defined(__GNUC__)
#define JAGER_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define JAGER_PLUGIN_EXPORT
#endif

/* ------------------------------------------------------------------------------------ */
/** \name Records
 * Every event is a record: an 8-byte header and a payload, 8-byte aligned, size a multiple
 * of 8. The same bytes travel through the rings, reach sinks in batches and are stored in
 * `.jgr` event blocks. Multi-byte fields are little-endian (native on the supported hosts).
 */

/** Record header. */
typedef struct jager_record {
    uint16_t type;  /**< a jager_core_event_type, or a plugin type id ≥ JAGER_EV_FIRST_PLUGIN */
    uint16_t words; /**< total record size in 8-byte words, header included (≥ 1) */
    uint32_t aux;   /**< per-type: site id, counter id, severity, … (see each type) */
} jager_record;

/** Largest record in bytes (words is 16 bits, and rings cap records at 1/8 of their size). */
#define JAGER_RECORD_MAX_BYTES 65528u

/** Core event type ids. Stable: never renumbered or reused. */
typedef enum jager_core_event_type {
    JAGER_EV_PAD = 0,        /**< ring padding; never reaches a sink */
    JAGER_EV_SPAN = 1,       /**< jager_rec_span; aux = site */
    JAGER_EV_LOG = 2,        /**< jager_rec_log; aux = severity (1..24) | JAGER_LOG_TRUNCATED */
    JAGER_EV_COUNTER = 3,    /**< jager_rec_counter; aux = counter id */
    JAGER_EV_MARK = 4,       /**< jager_rec_mark; aux = string id of the name */
    JAGER_EV_DROP = 5,       /**< jager_rec_drop; aux = jager_drop_reason */
    JAGER_EV_DIAG = 6,       /**< jager_rec_diag; aux = severity */
    JAGER_EV_SPAN_ATTR = 7,  /**< jager_rec_span_attr; aux = site */
    JAGER_EV_SPAN_ERROR = 8, /**< jager_rec_span_error; aux = site */
    JAGER_EV_FIRST_PLUGIN = 256 /**< plugin types are numbered from here */
} jager_core_event_type;

/** A complete span (written at its end). 40 bytes. */
typedef struct jager_rec_span {
    jager_record h;     /**< type JAGER_EV_SPAN, aux = site */
    uint64_t start_ns; /**< begin time (jager_now_ns base) */
    uint64_t end_ns; /**< end time (jager_now_ns base) */
    uint32_t span_id;   /**< per-thread id, 1-based */
    uint32_t parent_id; /**< enclosing span's id on the same thread, 0 at top level */
    uint64_t bytes;     /**< bytes allocated inside (jager_span_end_bytes), else 0 */
} jager_rec_span;

/**
 * Attribute list encoding (used by logs and span attributes), repeated nattrs times:
 * `u16 key_len, u16 kind (jager_attr_kind), u32 value_len, key bytes, value bytes, zero
 * padding to 8`. I64/F64/BOOL values are 8 bytes; STR values are UTF-8 bytes.
 */
#define JAGER_LOG_TRUNCATED 0x100u /**< in jager_rec_log aux: body or attributes were cut */

/** A log record: fixed part, then body (body_len bytes, padded to 8), then attributes. */
typedef struct jager_rec_log {
    jager_record h;       /**< type JAGER_EV_LOG, aux = severity | flags */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint32_t span_id;     /**< innermost open span on the thread, 0 if none */
    uint32_t site;        /**< its site, 0 if none */
    uint8_t trace_id[16]; /**< current trace context, zeros if none */
    uint8_t ctx_span_id[8]; /**< span id of the current trace context, zeros if none */
    uint32_t body_len; /**< body bytes (UTF-8, not NUL-terminated) */
    uint32_t nattrs; /**< attributes that follow */
} jager_rec_log;

/** A counter sample. */
typedef struct jager_rec_counter {
    jager_record h; /**< type JAGER_EV_COUNTER, aux = counter id */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    double value;   /**< running total (monotonic) or level (gauge) */
} jager_rec_counter;

/** An instant mark. */
typedef struct jager_rec_mark {
    jager_record h; /**< type JAGER_EV_MARK, aux = string id */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
} jager_rec_mark;

/** Events lost on one thread since its previous drop report (written by the collector). */
typedef struct jager_rec_drop {
    jager_record h; /**< type JAGER_EV_DROP, aux = jager_drop_reason */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint64_t count; /**< events lost */
} jager_rec_drop;

/** A diagnostic from the core or a plugin; text follows (text_len bytes, padded to 8). */
typedef struct jager_rec_diag {
    jager_record h;  /**< type JAGER_EV_DIAG, aux = severity */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint32_t source; /**< string id of the plugin name, or of "core" */
    uint32_t text_len; /**< text bytes that follow */
} jager_rec_diag;

/** Attributes of an open span; an attribute list follows. */
typedef struct jager_rec_span_attr {
    jager_record h; /**< type JAGER_EV_SPAN_ATTR, aux = site */
    uint32_t span_id; /**< the span's per-thread id */
    uint32_t nattrs; /**< attributes that follow */
} jager_rec_span_attr;

/** A span marked as failed; message follows (msg_len bytes, padded to 8). */
typedef struct jager_rec_span_error {
    jager_record h; /**< type JAGER_EV_SPAN_ERROR, aux = site */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint32_t span_id; /**< the span's per-thread id */
    uint32_t msg_len; /**< message bytes that follow */
} jager_rec_span_error;

/**
 * A plugin record: header (aux free for the plugin, 0 by default), `u64 time_ns`, then
 * one 8-byte value per field of the registered type, in declaration order.
 */
typedef struct jager_rec_plugin {
    jager_record h; /**< record header */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint64_t fields[]; /**< reinterpret per jager_field_desc.kind */
} jager_rec_plugin;

/* ------------------------------------------------------------------------------------ */
/** \name Self-describing event types */

/** Field kinds of plugin event types. Stable values; stored as uint16_t in files. */
typedef enum jager_field_kind {
    JAGER_FIELD_U64 = 1,
    JAGER_FIELD_I64 = 2,
    JAGER_FIELD_F64 = 3,
    JAGER_FIELD_STRING = 4,   /**< a string id (see intern); readers show the text */
    JAGER_FIELD_STACK = 5,    /**< a jager_stack_id */
    JAGER_FIELD_TIME_NS = 6,  /**< a timestamp on the jager_now_ns() base */
    JAGER_FIELD_DURATION_NS = 7,
    JAGER_FIELD_BYTES = 8,    /**< a byte count */
    JAGER_FIELD_SITE = 9,     /**< a jager_site */
    JAGER_FIELD_BOOL = 10
} jager_field_kind;

/** One field of an event type. */
typedef struct jager_field_desc {
    const char *name; /**< snake_case, unique within the type */
    uint32_t kind;    /**< a jager_field_kind */
    uint32_t reserved; /**< 0; reserved for future use */
} jager_field_desc;

/** A registered event type, as the host and readers describe it. */
typedef struct jager_type_desc {
    uint32_t struct_size; /**< sizeof the struct as the writer built it (only grows) */
    uint16_t id;        /**< the record type */
    uint16_t builtin;   /**< 1 for core types (fixed layouts above), 0 for plugin types */
    const char *name;   /**< "<plugin>.<event>", e.g. "gc.pause"; core types "span", "log", … */
    uint32_t nfields; /**< number of fields */
    const jager_field_desc *fields; /**< field descriptions, nfields entries */
} jager_type_desc;

/** Maximum fields in one plugin event type. */
#define JAGER_MAX_FIELDS 32

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
    jager_status (*open)(void *ctx);         /**< optional; before the first batch */
    jager_status (*write)(void *ctx, const jager_batch *batch); /**< required; non-zero counts the batch as dropped (JAGER_DROP_SINK) */
    void (*flush)(void *ctx);                /**< optional; after each drain requested by jager_flush() and at close */
    void (*close)(void *ctx);                /**< optional; after the last batch, before plugins shut down */
} jager_sink;

/**
 * \brief Add a sink from the application (a custom exporter, a test's memory sink); the
 *        struct is copied. A sink added before jager_init() serves the run it starts;
 *        jager_shutdown() closes and forgets every sink.
 * \return JAGER_OK; JAGER_E_INVALID (NULL, no write callback, struct_size too small);
 *         JAGER_E_FULL (more than 16 sinks). [any-thread] \since 1.0
 */
JAGER_API jager_status jager_sink_add(const jager_sink *sink);

/* ------------------------------------------------------------------------------------ */
/** \name Host API */

/** Opaque handle naming one loaded plugin to the host. */
typedef struct jager_plugin_handle jager_plugin_handle;

/** Diagnostic levels for host->log (OpenTelemetry severities). */
enum jager_diag_level { JAGER_DIAG_DEBUG = 5, JAGER_DIAG_INFO = 9, JAGER_DIAG_WARN = 13, JAGER_DIAG_ERROR = 17 };

/**
 * The core's services for plugins. Passed to init; valid until the plugin's shutdown
 * returns. Check struct_size before using a field added after 1.0.
 */
typedef struct jager_host_api {
    uint32_t struct_size; /**< sizeof the struct as the writer built it (only grows) */
    uint16_t abi_major; /**< JAGER_PLUGIN_ABI_MAJOR of the host */
    uint16_t abi_minor; /**< JAGER_PLUGIN_ABI_MINOR of the host */
    /* ---- 1.0 ---- */
    /** Register an event type named "<plugin>.<event>"; same name and fields again returns
     *  the same id, same name with other fields is JAGER_E_INVALID. [any-thread] (lock) */
    jager_status (*register_type)(jager_plugin_handle *self, const char *name,
                                  const jager_field_desc *fields, uint32_t nfields, uint16_t *type_out);
    /** Record an event of a registered type on the calling thread's ring. time_ns 0 means
     *  now. Drops and counts when full. [any-thread][hot-path] */
    void (*emit)(uint16_t type, uint64_t time_ns, const uint64_t *fields, uint32_t nfields);
    /** jager_now_ns(). [any-thread][hot-path] */
    uint64_t (*now_ns)(void);
    /** Intern a UTF-8 string, returning a stable id (0 on error). [any-thread] (lock) */
    uint32_t (*intern)(const char *s);
    /** The text of a string id, or NULL. Lives until jager_shutdown(). [any-thread] */
    const char *(*string)(uint32_t id);
    /** A configuration value for this plugin: key "depth" of plugin "gc" reads
     *  JAGER_GC_DEPTH from the environment. NULL if unset. [any-thread] */
    const char *(*config)(jager_plugin_handle *self, const char *key);
    /** A diagnostic: to stderr (unless quiet) and into the recording as JAGER_EV_DIAG. [any-thread] */
    void (*log)(jager_plugin_handle *self, int level, const char *message);
    /** Add a sink; the struct is copied. [init-only: from init or start] */
    jager_status (*register_sink)(jager_plugin_handle *self, const jager_sink *sink);
    /** jager_stack_intern(). [any-thread] (lock; not from signal handlers or GC callbacks) */
    jager_stack_id (*stack_intern)(const uint64_t *ips, uint32_t n);
    /** Describe a type id, or NULL. [any-thread] */
    const jager_type_desc *(*type_info)(uint16_t type);
    /** Describe a site. [any-thread] */
    jager_status (*site_info)(jager_site site, const char **name, const char **file, uint32_t *line);
    /** Describe a thread index: OS thread id and name (may be ""). [any-thread] */
    jager_status (*thread_info)(uint32_t thread, uint64_t *os_tid, const char **name);
    /** jager_metadata_set(). [any-thread] */
    jager_status (*metadata_set)(const char *key, const char *value);
    /** A run metadata value or NULL (host.name, process.pid, …). [any-thread] */
    const char *(*metadata_get)(const char *key);
    /** Describe a counter id. [any-thread] */
    jager_status (*counter_info)(jager_counter counter, const char **name, const char **unit, uint32_t *kind);
    /** Stack addresses of an interned stack (innermost first). [any-thread] */
    jager_status (*stack_get)(jager_stack_id id, const uint64_t **ips, uint32_t *n);
    /** Sites currently open on the calling thread, innermost first; returns the count
     *  written (≤ cap). [any-thread][hot-path] */
    uint32_t (*open_sites)(jager_site *out, uint32_t cap);
    void *reserved[8]; /**< NULL; future minors put functions here */
} jager_host_api;

/* ------------------------------------------------------------------------------------ */
/** \name Plugin descriptor and entry point */

/** A typed option a plugin understands (self-description for `jager plugins`). */
typedef struct jager_option_desc {
    const char *key;           /**< "depth": read as JAGER_<PLUGIN>_DEPTH */
    const char *type;          /**< "int", "bool", "string", "bytes", "duration" */
    const char *default_value; /**< default as text */
    const char *help; /**< one line of help */
} jager_option_desc;

/**
 * What a plugin's entry symbol returns. Static storage owned by the plugin. Callbacks may
 * be NULL unless marked required. Called in this order: init (required) → start →
 * flush* (collector thread, before each drain requested by jager_flush()) → stop (at
 * jager_shutdown(), before the final drain: emit summaries here) → shutdown (after sinks
 * closed; free everything) → dlclose.
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
     *  with a reason logged through host->log (e.g. "not a Julia process"). */
    jager_status (*init)(const jager_host_api *host, jager_plugin_handle *self, void **state);
    jager_status (*start)(void *state); /**< optional: begin recording (after every plugin initialised) */
    void (*flush)(void *state); /**< optional: collector thread, before each drain requested by jager_flush() */
    void (*stop)(void *state); /**< optional: at jager_shutdown(), before the final drain; emit summaries here */
    void (*shutdown)(void *state); /**< optional: free everything; sinks are closed */
    /** Versioned extension tables, e.g. "jager.dispatch/1"; NULL if unknown. */
    const void *(*get_extension)(void *state, const char *id);
    const jager_option_desc *options; /**< typed options the plugin reads (may be NULL) */
    uint32_t noptions; /**< entries in options */
    uint32_t reserved0; /**< 0 */
    void *reserved[8];       /**< NULL */
} jager_plugin_descriptor;

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
