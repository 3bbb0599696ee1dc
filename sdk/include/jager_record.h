/*
 * jager_record.h — the event record layout: what rings carry, sinks receive and `.jgr`
 * files store (part of libjager's stable ABI).
 *
 * Readers (jager_reader.h, the `jager` tools, custom sinks) need only this header and
 * jager.h; plugins get it through jager_plugin.h. Layouts are fixed: a type id is never
 * renumbered or reused, and a record type's fixed part never changes (a new field means a
 * new type).
 *
 * Reading order: records (header, core event ids, the core record layouts), self-describing
 * event types (field kinds, field flags, field and type descriptions).
 */
/** \file
 * See the comment above for this header's concern and reading order. */
#ifndef JAGER_RECORD_H
#define JAGER_RECORD_H

#include "jager.h"

#ifdef __cplusplus
extern "C" {
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
    JAGER_EV_LOG = 2,        /**< jager_rec_log; aux = jager_severity (1..24) | JAGER_LOG_TRUNCATED */
    JAGER_EV_COUNTER = 3,    /**< jager_rec_counter; aux = counter id */
    JAGER_EV_MARK = 4,       /**< jager_rec_mark; aux = string id of the name */
    JAGER_EV_DROP = 5,       /**< jager_rec_drop; aux = jager_drop_reason */
    JAGER_EV_DIAG = 6,       /**< jager_rec_diag; aux = jager_severity */
    JAGER_EV_SPAN_ATTR = 7,  /**< jager_rec_span_attr; aux = site (| JAGER_SPAN_REF_MOVED, since 1.2) */
    JAGER_EV_SPAN_ERROR = 8, /**< jager_rec_span_error; aux = site (| JAGER_SPAN_REF_MOVED, since 1.2) */
    JAGER_EV_CONTEXT = 9,    /**< jager_rec_context; aux = 1 when a context is set, 0 when cleared */
    JAGER_EV_TASK = 10,      /**< jager_rec_task; aux = 0 (since 1.1) */
    JAGER_EV_SPAN_X = 11,    /**< jager_rec_span_x; aux = site (since 1.2) */
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
 * A span of a task that moved between threads (jager_task_set): begun on another thread
 * than the one that recorded it, or under a parent begun on another thread. The fields of
 * jager_rec_span (same offsets), then the threads that number its ids: \c span_id is
 * \c begin_thread's id of it, \c parent_id \c parent_thread's id of its parent. Readers
 * place it in the tree of \c begin_thread under (parent_thread, parent_id); it counts once.
 * 48 bytes. \since 1.2
 */
typedef struct jager_rec_span_x {
    jager_record h;         /**< type JAGER_EV_SPAN_X, aux = site */
    uint64_t start_ns;      /**< begin time (jager_now_ns base) */
    uint64_t end_ns;        /**< end time (jager_now_ns base) */
    uint32_t span_id;       /**< the id \c begin_thread gave it, 1-based */
    uint32_t parent_id;     /**< its parent's id on \c parent_thread, 0 at top level of its task */
    uint64_t bytes;         /**< bytes allocated inside (jager_span_end_bytes), else 0 */
    uint32_t begin_thread;  /**< the thread index (as the file numbers threads) that began it */
    uint32_t parent_thread; /**< the thread index that began its parent (begin_thread when none) */
} jager_rec_span_x;

/**
 * Attribute list encoding (used by logs and span attributes), repeated nattrs times:
 * `u16 key_len, u16 kind (jager_attr_kind), u32 value_len, key bytes, value bytes, zero
 * padding to 8`. I64/F64/BOOL values are 8 bytes; STR values are UTF-8 bytes.
 */
#define JAGER_LOG_TRUNCATED 0x100u /**< in jager_rec_log aux: body or attributes were cut */
/** In jager_rec_log aux (since 1.2): the task moved here (jager_task_set) and the log's span
 *  is one another thread began: span_id is the id that thread gave it, and the thread's
 *  index is JAGER_LOG_SPAN_THREAD(aux) (0 when the index does not fit 16 bits). */
#define JAGER_LOG_SPAN_MOVED 0x200u
/** The begin thread of a JAGER_LOG_SPAN_MOVED log's span (aux bits 16..31), 0 if unknown. */
#define JAGER_LOG_SPAN_THREAD(aux) ((uint32_t)(aux) >> 16)

/** A log record: fixed part, then body (body_len bytes, padded to 8), then attributes. */
typedef struct jager_rec_log {
    jager_record h;       /**< type JAGER_EV_LOG, aux = severity | flags (| begin thread << 16 with JAGER_LOG_SPAN_MOVED) */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint32_t span_id;     /**< innermost open span of the current task, 0 if none: the recording thread's id of it, or with JAGER_LOG_SPAN_MOVED its begin thread's */
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
    double value;   /**< the process's running total after the add (monotonic) or the level (gauge) */
} jager_rec_counter;

/**
 * An instant mark. A mark from jager_mark_attrs() (since 1.1) is longer: after the fixed
 * part come `uint32_t nattrs`, `uint32_t` 0, then the attributes, encoded as a log record's;
 * a record of exactly sizeof(jager_rec_mark) has none.
 */
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

/** \name Span references of attributes and errors (since 1.2)
 * The aux of a JAGER_EV_SPAN_ATTR or JAGER_EV_SPAN_ERROR record is the span's site (bits
 * 0..21: sites are below 2^22). With JAGER_SPAN_REF_MOVED set, the task moved here
 * (jager_task_set) and the span is one another thread began: \c span_id is the id that
 * thread gave it (as its JAGER_EV_SPAN_X record's), and the thread's index is
 * JAGER_SPAN_REF_THREAD(aux) — key the record by (that thread, span_id). Without the flag
 * the span is the recording thread's. A writer sets the flag only for a begin thread
 * below 512; readers before 1.2 see an unknown site.
 * @{ */
#define JAGER_SPAN_REF_MOVED 0x80000000u                        /**< the span is another thread's */
#define JAGER_SPAN_REF_SITE(aux) ((uint32_t)(aux) & 0x3FFFFFu)  /**< the span's site */
#define JAGER_SPAN_REF_THREAD(aux) (((uint32_t)(aux) >> 22) & 0x1FFu) /**< with the flag: its begin thread */
/** @} */

/** Attributes of an open span; an attribute list follows. */
typedef struct jager_rec_span_attr {
    jager_record h; /**< type JAGER_EV_SPAN_ATTR, aux = site (| JAGER_SPAN_REF_MOVED | begin thread << 22) */
    uint32_t span_id; /**< the span's per-thread id: the recording thread's, or with JAGER_SPAN_REF_MOVED its begin thread's */
    uint32_t nattrs; /**< attributes that follow */
} jager_rec_span_attr;

/** A span marked as failed; message follows (msg_len bytes, padded to 8). */
typedef struct jager_rec_span_error {
    jager_record h; /**< type JAGER_EV_SPAN_ERROR, aux = site (| JAGER_SPAN_REF_MOVED | begin thread << 22) */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    uint32_t span_id; /**< the span's per-thread id: the recording thread's, or with JAGER_SPAN_REF_MOVED its begin thread's */
    uint32_t msg_len; /**< message bytes that follow */
} jager_rec_span_error;

/**
 * The thread's W3C trace context changed (jager_context_set / jager_context_extract while
 * recording). Spans are written at their end and carry no trace id, so a reader learns a
 * span's trace from this record: spans of this thread with ids from \c first_span on (until
 * the thread's next context record) belong to \c trace_id, and those among them whose parent
 * began before this record (or that have none) are children of \c span_id — the remote
 * parent. With aux 0 the thread went back to the run's own trace.
 */
typedef struct jager_rec_context {
    jager_record h;       /**< type JAGER_EV_CONTEXT, aux = 1 set, 0 cleared */
    uint64_t time_ns;     /**< event time (jager_now_ns base) */
    uint8_t trace_id[16]; /**< the adopted trace, zeros when cleared */
    uint8_t span_id[8];   /**< the remote parent span, zeros when cleared */
    uint32_t first_span;  /**< the first span id of this thread begun under the new context */
    uint8_t flags;        /**< W3C trace-flags (bit 0: sampled) */
    uint8_t reserved[3];  /**< zero */
} jager_rec_context;

/**
 * The thread's current task changed (jager_task_set(), since 1.1): a green thread, coroutine
 * or Julia task. Every later record of this thread's ring (spans — written at their end —
 * logs, marks, attributes) until its next task record was emitted by task \c task; 0 means
 * "no task" (the thread itself). Task ids are the caller's (the Julia binding numbers its
 * tasks 1, 2, … in order of first sight; the root task is 1) and are the same on every thread.
 */
typedef struct jager_rec_task {
    jager_record h;       /**< type JAGER_EV_TASK, aux = 0 */
    uint64_t time_ns;     /**< event time (jager_now_ns base) */
    uint64_t task;        /**< the task now running on the thread, 0 for none */
    uint32_t first_span;  /**< the id the thread's next span will get */
    uint32_t reserved;    /**< zero */
} jager_rec_task;

/**
 * A plugin record: header (aux free for the plugin, 0 by default), `u64 time_ns`, then
 * one 8-byte value per field of the registered type, in declaration order.
 */
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc99-extensions" /* the flexible array member below, in C++ */
#endif
typedef struct jager_rec_plugin {
    jager_record h; /**< record header */
    uint64_t time_ns; /**< event time (jager_now_ns base) */
    __extension__ uint64_t fields[]; /**< reinterpret per jager_field_desc.kind (a C99 flexible array member; __extension__ keeps C++ -pedantic quiet) */
} jager_rec_plugin;
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic pop
#endif

/* ------------------------------------------------------------------------------------ */
/** \name Self-describing event types
 * What a plugin registers (host->register_type) and what readers get back
 * (jager_reader_type(), host->type_info) to decode a plugin record's fields.
 */

/** Field kinds of plugin event types. Stable values; stored as uint16_t in files. */
typedef enum jager_field_kind {
    JAGER_FIELD_U64 = 1,
    JAGER_FIELD_I64 = 2,
    JAGER_FIELD_F64 = 3,
    JAGER_FIELD_STRING = 4,   /**< a string id (see intern); readers show the text */
    JAGER_FIELD_STACK = 5,    /**< a jager_stack_id */
    JAGER_FIELD_TIME_NS = 6,  /**< a timestamp on the jager_now_ns() base */
    JAGER_FIELD_DURATION_NS = 7, /**< a length of time in ns (a CPU time, a total); the event's own duration only with JAGER_FIELD_FLAG_EXTENT */
    JAGER_FIELD_BYTES = 8,    /**< a byte count */
    JAGER_FIELD_SITE = 9,     /**< a jager_site */
    JAGER_FIELD_BOOL = 10
} jager_field_kind;

/** \name Field flags (jager_field_desc.flags; 0 in plugins built before plugin ABI 1.2)
 * @{ */
/** A DURATION_NS field that is the event's own duration: the event spans
 *  [time_ns, time_ns + value] (a pause, a kernel). At most one per type. Without it no
 *  field gives an event an extent, and no plugin field ever changes a run's length. */
#define JAGER_FIELD_FLAG_EXTENT 1u
/** A numeric field that is a monotonic total (bytes read so far): tools chart it. */
#define JAGER_FIELD_FLAG_COUNTER 2u
/** A numeric field that is a level (resident memory): tools chart it. */
#define JAGER_FIELD_FLAG_GAUGE 4u
/** @} */

/** One field of an event type. */
typedef struct jager_field_desc {
    const char *name; /**< snake_case ([a-z][a-z0-9_]*, at most 63 bytes), unique within the type */
    uint32_t kind;    /**< a jager_field_kind */
    uint32_t flags;   /**< JAGER_FIELD_FLAG_*; 0 for none (was reserved, always 0, before plugin ABI 1.2) */
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

#ifdef __cplusplus
}
#endif

#endif /* JAGER_RECORD_H */
