/*
 * jager_reader.h — reading `.jgr` recordings (part of libjager's stable ABI).
 *
 * A recording is a sequence of LZ4 frames (see docs/file-format.md): a skippable preamble
 * frame, then blocks of metadata, schema, string/site/thread/counter tables, events,
 * stacks, symbols and statistics. The reader streams blocks with bounded memory (tables
 * are kept, event blocks are not), verifies every frame's checksum, and on a file cut
 * short returns every event up to the last whole frame before reporting
 * JAGER_E_TRUNCATED. Corrupt input yields a clear message from jager_reader_error(),
 * never a crash.
 *
 * Typical use:
 * \code
 * jager_reader *r; if (jager_reader_open(path, &r) != JAGER_OK) { puts(jager_last_error()); ... }
 * jager_reader_load_tables(r);      // optional: one pass for stacks/symbols/stats written at the end
 * jager_event ev; int rc;
 * while ((rc = jager_reader_next(r, &ev)) > 0) { ... ev.rec->type ... }
 * if (rc < 0) fprintf(stderr, "%s\n", jager_reader_error(r));
 * jager_reader_close(r);
 * \endcode
 * A reader is not thread-safe: use one per thread. All strings and pointers it returns
 * live until jager_reader_close() unless stated otherwise.
 */
/** \file
 * See the comment above for this header's concern and reading order. */
#ifndef JAGER_READER_H
#define JAGER_READER_H

#include "jager_record.h"

#ifdef __cplusplus
extern "C" {
#endif

/** File format version written by this library. Readers accept the same major, any minor. */
#define JAGER_FORMAT_MAJOR 1 /**< files of another major are refused */
#define JAGER_FORMAT_MINOR 2 /**< appended fields and blocks, which older readers skip; 1.1: packed span records, the PATHS block; 1.2: JAGER_EV_SPAN_X */

/** Opaque reader. */
typedef struct jager_reader jager_reader;

/**
 * \brief Open a recording and read its preamble and first metadata block.
 * \param path file path (borrowed)
 * \param out receives the reader (NULL on failure), owned by the caller: free it with
 *            jager_reader_close()
 * \return JAGER_OK; JAGER_E_IO (cannot open); JAGER_E_FORMAT (not a .jgr file, or a
 *         format major this library does not read); jager_last_error() says which.
 * \since 1.0
 */
JAGER_API jager_status jager_reader_open(const char *path, jager_reader **out);

/**
 * \brief Open a recording held in memory. \p data is borrowed and must outlive the reader.
 * \return as jager_reader_open(). \since 1.0
 * \param data the recording (borrowed: it must outlive the reader)
 * \param size bytes at \p data
 * \param out receives the reader (NULL on failure), owned by the caller: free it with
 *            jager_reader_close()
 */
JAGER_API jager_status jager_reader_open_memory(const void *data, size_t size, jager_reader **out);

/**
 * \brief Close a reader and free everything it returned. NULL is allowed. \since 1.0
 * \param r the reader, or NULL, owned by the caller until this call: it and everything it
 *          returned are freed
 */
JAGER_API void jager_reader_close(jager_reader *r);

/**
 * \brief The reader's last error message ("" if none), e.g. "frame 12 at byte 40960: checksum mismatch". \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \return the message, owned by the reader; lives until the next call on \p r or jager_reader_close().
 */
JAGER_API const char *jager_reader_error(const jager_reader *r);

/** One event as returned by jager_reader_next(). */
typedef struct jager_event {
    const jager_record *rec; /**< the record (layouts in jager_record.h); valid until the next call */
    uint32_t thread;         /**< thread index (see jager_reader_thread) */
    uint16_t type;           /**< rec->type */
    uint16_t reserved; /**< 0; reserved for future use */
    uint64_t time_ns;        /**< start (span) or time of the event; 0 if the type has none */
    uint64_t end_ns;         /**< end of a span; equals time_ns for instant events */
} jager_event;

/**
 * \brief The next event in file order (per thread in time order; threads interleave by
 *        drain). Table blocks met on the way are absorbed, so every id an event carries
 *        resolves when the event is returned.
 * \return 1 with \p ev filled; 0 at the clean end; a negative jager_status on error:
 *         JAGER_E_TRUNCATED (file ends inside a frame: all whole frames were returned),
 *         JAGER_E_CHECKSUM, JAGER_E_FORMAT. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param ev receives the event (borrowed); ev->rec lives until the next call
 */
JAGER_API int jager_reader_next(jager_reader *r, jager_event *ev);

/**
 * \brief Read the whole file once, absorbing every table block (stacks and symbols are
 *        written late), then rewind to the first event.
 * \return JAGER_OK, or the error that stopped the pass (tables read up to there are kept). \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 */
JAGER_API jager_status jager_reader_load_tables(jager_reader *r);

/**
 * \brief Go back to the first event; tables already read are kept. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \return JAGER_OK, or the error that ends the file (the reader's terminal state).
 */
JAGER_API jager_status jager_reader_rewind(jager_reader *r);

/** What the reader learned about the file as a whole. */
typedef struct jager_reader_info {
    uint32_t struct_size; /**< sizeof the struct as the writer built it (only grows) */
    uint16_t format_major; /**< file format major version */
    uint16_t format_minor; /**< file format minor version */
    uint64_t file_bytes; /**< size of the file (or memory buffer) */
    uint64_t frames;          /**< whole frames read so far */
    uint64_t events;          /**< events read so far */
    uint64_t bytes_consumed;  /**< offset after the last whole frame */
    uint32_t clean_end;       /**< 1 if the END block was seen (a clean shutdown) */
    uint32_t truncated;       /**< 1 if the file ends inside a frame */
    double ticks_per_ns;      /**< TSC calibration, 0 when clock_gettime was used */
    uint64_t start_ns;        /**< jager_now_ns() at init */
    uint64_t start_unix_ns;   /**< wall clock at init (UTC, ns since 1970) */
    uint64_t end_ns;          /**< jager_now_ns() at shutdown, 0 if unknown */
} jager_reader_info;

/**
 * \brief Fill \p out (set out->struct_size first). \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param out the caller's struct (borrowed) with struct_size set
 * \return JAGER_OK, or JAGER_E_INVALID for NULL or a struct_size smaller than 1.0's.
 */
JAGER_API jager_status jager_reader_get_info(const jager_reader *r, jager_reader_info *out);

/**
 * \brief Metadata value by key (e.g. "host.name", "process.command_line", "git.commit"), or NULL. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param key the key (borrowed)
 * \return the value (lives until jager_reader_close()), or NULL.
 */
JAGER_API const char *jager_reader_meta(const jager_reader *r, const char *key);
/**
 * \brief Number of metadata entries. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \return the number of entries.
 */
JAGER_API size_t jager_reader_meta_count(const jager_reader *r);
/**
 * \brief The i-th metadata entry (insertion order). \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param i index below jager_reader_meta_count()
 * \param key receives the key (lives until jager_reader_close())
 * \param value receives the value (lives until jager_reader_close())
 * \return JAGER_OK, or JAGER_E_NOTFOUND when \p i is out of range.
 */
JAGER_API jager_status jager_reader_meta_at(const jager_reader *r, size_t i, const char **key, const char **value);

/**
 * \brief Text of string id \p id, or NULL if unknown. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param id a string id from a record or table
 * \return the text (lives until jager_reader_close()), or NULL.
 */
JAGER_API const char *jager_reader_string(const jager_reader *r, uint32_t id);

/**
 * \brief Largest site id seen so far (sites are dense from 1). \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \return the largest site id seen so far.
 */
JAGER_API uint32_t jager_reader_site_count(const jager_reader *r);
/**
 * \brief Describe a site; outputs may be NULL. \return JAGER_OK or JAGER_E_NOTFOUND. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param site the site id
 * \param name receives the name (lives until jager_reader_close()); may be NULL
 * \param file receives the file (lives until jager_reader_close()); may be NULL
 * \param line receives the line (borrowed: written during the call); may be NULL
 */
JAGER_API jager_status jager_reader_site(const jager_reader *r, jager_site site, const char **name,
                                         const char **file, uint32_t *line);

/**
 * \brief Describe an event type (core or plugin), or NULL if unknown. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param type a record type id
 * \return the description (lives until jager_reader_close()), or NULL.
 */
JAGER_API const jager_type_desc *jager_reader_type(const jager_reader *r, uint16_t type);
/**
 * \brief Type id by name ("gc.pause"), or 0 if absent. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param name the type's name (borrowed)
 * \return the type id, or 0.
 */
JAGER_API uint16_t jager_reader_type_by_name(const jager_reader *r, const char *name);

/**
 * \brief Largest thread index seen so far. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \return the largest thread index seen so far.
 */
JAGER_API uint32_t jager_reader_thread_count(const jager_reader *r);
/**
 * \brief Describe a thread index: OS thread id and name (may be ""). \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param thread a thread index
 * \param os_tid receives the OS thread id (borrowed: written during the call); may be NULL
 * \param name receives the name (lives until jager_reader_close()); may be NULL
 * \return JAGER_OK or JAGER_E_NOTFOUND.
 */
JAGER_API jager_status jager_reader_thread(const jager_reader *r, uint32_t thread, uint64_t *os_tid,
                                           const char **name);

/**
 * \brief Largest counter id seen so far. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \return the largest counter id seen so far.
 */
JAGER_API uint32_t jager_reader_counter_count(const jager_reader *r);
/**
 * \brief Describe a counter. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param counter a counter id
 * \param name receives the name (lives until jager_reader_close()); may be NULL
 * \param unit receives the unit (lives until jager_reader_close()); may be NULL
 * \param kind receives the jager_counter_kind (borrowed: written during the call); may be NULL
 * \return JAGER_OK or JAGER_E_NOTFOUND.
 */
JAGER_API jager_status jager_reader_counter(const jager_reader *r, jager_counter counter, const char **name,
                                            const char **unit, uint32_t *kind);

/**
 * \brief The addresses of a stack (innermost first). \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param id a stack id
 * \param ips receives the addresses (live until jager_reader_close())
 * \param n receives their number (borrowed: written during the call)
 * \return JAGER_OK or JAGER_E_NOTFOUND.
 */
JAGER_API jager_status jager_reader_stack(const jager_reader *r, jager_stack_id id, const uint64_t **ips,
                                          uint32_t *n);

/** A symbolized source frame. */
typedef struct jager_frame {
    const char *func; /**< never NULL ("??" if unknown) */
    const char *file; /**< never NULL ("" if unknown) */
    uint32_t line; /**< source line, 0 if unknown */
    uint32_t inline_depth; /**< 0 for the outermost frame, 1.. for frames inlined into it */
} jager_frame;

/**
 * \brief The frames for return address \p ip: outermost first (inline_depth 0), then the
 *        frames inlined into it.
 * \return the number of frames written (≤ cap); 0 when the address was never symbolized. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param ip a return address
 * \param out receives the frames (borrowed); their strings live until jager_reader_close()
 * \param cap room at \p out
 */
JAGER_API uint32_t jager_reader_symbolize(const jager_reader *r, uint64_t ip, jager_frame *out, uint32_t cap);

/**
 * \brief Exact aggregates of \p site from the last statistics block (written at every
 *        flush and at shutdown).
 * \return JAGER_OK; JAGER_E_NOTFOUND when no statistics block covered the site. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param site the site
 * \param out the caller's struct (borrowed) with struct_size set
 */
JAGER_API jager_status jager_reader_site_stats(const jager_reader *r, jager_site site, jager_site_stat *out);

/**
 * \brief Core counters from the last statistics block. \return JAGER_OK or JAGER_E_NOTFOUND. \since 1.0
 * \param r a reader from jager_reader_open() (borrowed)
 * \param out the caller's struct (borrowed) with struct_size set
 */
JAGER_API jager_status jager_reader_stats(const jager_reader *r, jager_stat *out);

/**
 * \brief One sink's accounting from the last statistics block (jager_sink_stats() when it
 *        was written; the name from the metadata key `jager.sink.<index>`).
 * \param r a reader from jager_reader_open() (borrowed)
 * \param index 0 … jager_stat.sinks − 1 (from jager_reader_stats())
 * \param out the caller's struct (borrowed) with struct_size set
 * \return JAGER_OK, JAGER_E_INVALID, or JAGER_E_NOTFOUND (no statistics, no such sink, or
 *         a file written before 1.1). \since 1.1
 */
JAGER_API jager_status jager_reader_sink_stats(const jager_reader *r, uint32_t index, jager_sink_stat *out);

/** The top level: jager_path_stat.parent of a path whose span had no enclosing span. \since 1.1 */
#define JAGER_PATH_TOP UINT32_MAX

/**
 * One call path of one thread (root → … → site) with exact aggregates, counted by the core
 * at every span end whether or not the span became an event (sampled out, dropped by a
 * full ring). Grows only at the end. \since 1.1
 */
typedef struct jager_path_stat {
    uint32_t struct_size; /**< in: the caller's sizeof(jager_path_stat) */
    uint32_t thread;      /**< thread index (jager_reader_thread()) */
    uint32_t parent;      /**< index of the enclosing path (always smaller than this one's), or JAGER_PATH_TOP */
    jager_site site;      /**< the site; 0 for the thread's overflow bucket: spans whose path did not fit
                               the core's per-thread limit, lay below the bucket or nested deeper than
                               128 (their times overlap each other, so the bucket has no self time) */
    uint64_t calls;       /**< spans ended on this path (0 for a span still open at the end) */
    uint64_t total_ns;    /**< sum of their durations */
    uint64_t self_ns;     /**< total_ns minus the children's total_ns, never below 0 */
    uint64_t bytes;       /**< bytes reported by jager_span_end_bytes() on this path */
} jager_path_stat;

/**
 * \brief Number of call paths in the last PATHS set (written with each statistics block,
 *        format 1.1); 0 when the file has none (an older file, or one cut before its first set).
 * \return the count. [any-thread, with no concurrent next()] \since 1.1
 * \param r a reader from jager_reader_open() (borrowed; NULL gives 0)
 */
JAGER_API size_t jager_reader_path_count(const jager_reader *r);

/**
 * \brief The call path at \p index (0 … jager_reader_path_count() − 1), threads one after
 *        the other, parents before their children.
 * \return JAGER_OK; JAGER_E_NOTFOUND past the end; JAGER_E_INVALID for a bad argument. \since 1.1
 * \param r a reader from jager_reader_open() (borrowed)
 * \param index the path
 * \param out the caller's struct (borrowed) with struct_size set; filled on success
 */
JAGER_API jager_status jager_reader_path(const jager_reader *r, size_t index, jager_path_stat *out);

/** One decoded attribute of a log or span-attribute record. */
typedef struct jager_attr_view {
    const char *key;   /**< not NUL-terminated */
    uint32_t key_len; /**< key bytes */
    uint32_t kind;     /**< jager_attr_kind */
    int64_t i64;       /**< I64 and BOOL; STR_ID: the string id (jager_reader_string()) */
    double f64; /**< JAGER_ATTR_F64 value */
    const char *str;   /**< STR, not NUL-terminated */
    uint32_t str_len; /**< value bytes (JAGER_ATTR_STR) */
} jager_attr_view;

/**
 * \brief Decode the next attribute of an attribute list, bounds-checked.
 * \param cursor in/out position in an attribute list (borrowed from the record)
 * \param end one past the record's end (borrowed from the record, like \p cursor)
 * \return 1 with \p out filled, 0 at \p end, JAGER_E_FORMAT on a malformed list. [any-thread] \since 1.0
 * \param out receives the attribute; its key and str point into the record (borrowed from it)
 */
JAGER_API int jager_attr_next(const uint8_t **cursor, const uint8_t *end, jager_attr_view *out);

/**
 * \brief The body of a log record and the start of its attribute list, bounds-checked.
 * \return JAGER_OK or JAGER_E_FORMAT. [any-thread] \since 1.0
 * \param rec the log record (borrowed), whole as jager_reader_next() returns it
 * \param body receives the body (not NUL-terminated), pointing into \p rec: it lives until
 *             \p rec does (the next jager_reader_next())
 * \param body_len receives its bytes (borrowed: written during the call)
 * \param attrs receives the start of the attribute list, in \p rec: lives until \p rec does
 * \param attrs_end receives its end, in \p rec: lives until \p rec does
 */
JAGER_API jager_status jager_log_body(const jager_rec_log *rec, const char **body, uint32_t *body_len,
                                      const uint8_t **attrs, const uint8_t **attrs_end);

#ifdef __cplusplus
}
#endif

#endif /* JAGER_READER_H */
