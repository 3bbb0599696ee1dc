/* The tabular view of events shared by the Parquet and CSV exporters: every event type
 * becomes a table with fixed, meaningful columns. Core types have hand-chosen columns with
 * ids resolved to names (a span's site name, file and line; a counter's name and unit);
 * plugin types get `thread`, `time_ns` and one column per registered field, typed from the
 * field kind (STRING fields resolved to their text, SITE fields followed by `<field>_name`).
 *
 * Times are INT64 nanoseconds on the recording's monotonic clock (jager_now_ns), exactly
 * as recorded — or, in a job's tables (ex_table_new_ranked with a clock), on the job's clock
 * (rank 0's), mapped by jm_mpi_job_time() as the Chrome export and the tools' MPI analysis
 * map them. Either way they are not instants since 1970, so no timestamp logical type
 * claims they are. */
#ifndef JAGER_TOOLS_EXPORT_TABLE_H
#define JAGER_TOOLS_EXPORT_TABLE_H
#include <stdint.h>

#include "jager_reader.h"
#include "toolutil.h"

/** Column value kinds (physical Parquet type in brackets). */
typedef enum ex_kind {
    EX_I64 = 1,  /**< signed 64-bit integer [INT64] */
    EX_U64 = 2,  /**< unsigned 64-bit integer [INT64 + INTEGER(64, unsigned)] */
    EX_F64 = 3,  /**< double [DOUBLE] */
    EX_BOOL = 4, /**< boolean [BOOLEAN] */
    EX_STR = 5   /**< UTF-8 text [BYTE_ARRAY + STRING] */
} ex_kind;

typedef struct ex_col {
    char *name;       /**< owned */
    uint8_t kind;     /**< ex_kind */
    uint8_t nullable; /**< 1: may hold nulls (Parquet OPTIONAL, CSV empty field) */
} ex_col;

/** One value of a row. Strings point into the reader, the current record or the row's
 *  scratch buffer: valid until the next ex_table_row() or jager_reader_next(). Always
 *  valid UTF-8. */
typedef struct ex_cell {
    uint8_t null;
    uint8_t in_scratch; /* internal: s is an offset into the scratch buffer until fixed up */
    uint32_t n;         /**< string length */
    int64_t i;          /**< I64, U64 (bit pattern), BOOL (0/1) */
    double f;
    const char *s;
} ex_cell;

typedef struct ex_table {
    uint16_t type;
    uint16_t builtin;
    char *name;       /**< the event type's name ("span", "gc.pause"), owned */
    uint32_t ncols;
    ex_col *cols;
    const jager_type_desc *desc; /**< plugin types: the registered fields */
    uint8_t field_col[JAGER_MAX_FIELDS]; /**< plugin types: first column of each field */
    uint8_t shared_name; /**< a plugin type whose name a core type or another type also has */
    uint8_t ranked;      /**< 1: a job's table, its first column `rank` (every row: \p rank) */
    int64_t rank;        /**< the rank of the part whose events are read now (ranked tables) */
    const struct jm_mpi *clock; /**< ranked tables: the job's clock (times mapped), or NULL (as recorded) */
    uint32_t part;       /**< the part's index in the job, for \p clock */
} ex_table;

/** The table for event type \p type, or NULL (unknown type, padding, or out of memory: the
 *  caller skips such events). */
ex_table *ex_table_new(const jager_reader *r, uint16_t type);
struct jm_mpi;
/** The same for a job's output (export_opts.job): first a column `rank` (INT64) that holds
 *  \p rank on every row (a field named `rank` becomes `rank_2`). With \p clock (the job's
 *  MPI view, NULL: none) the times of part \p part are put on the job's clock by
 *  jm_mpi_job_time(): `time_ns`, a span's `start_ns`/`end_ns`, TIME_NS fields (0 stays 0:
 *  none), and the event's own duration (`duration_ns` of a span, a DURATION_NS field with
 *  JAGER_FIELD_FLAG_EXTENT) as the difference of its mapped ends, so begin + duration is the
 *  mapped end. Other durations (a CPU time, an error bound) stay as recorded. */
ex_table *ex_table_new_ranked(const jager_reader *r, uint16_t type, int64_t rank, const struct jm_mpi *clock,
                              uint32_t part);
void ex_table_free(ex_table *t);
/** 1 if \p a and \p b have the same name and columns (names, kinds, nullability): the
 *  rows of one may go into the other's file (a job's parts, recorded by one build). */
int ex_table_same_columns(const ex_table *a, const ex_table *b);

/**
 * \brief Fill \p cells (t->ncols of them) from one event.
 * \param scratch reused between rows (cleared here); owned by the caller.
 * \return 0; 1 when the record is too short for its type (skip it); -1 on out of memory.
 */
int ex_table_row(const ex_table *t, const jager_reader *r, const jager_event *ev, ex_cell *cells, tu_buf *scratch);

/** The table an event of \p type goes to: a JAGER_EV_SPAN_X (a span of a task that moved
 *  between threads, format 1.2) is a row of the span table, whose begin_thread and
 *  parent_thread columns say which threads number its ids. */
static inline uint16_t ex_table_type(uint16_t type) { return type == JAGER_EV_SPAN_X ? (uint16_t)JAGER_EV_SPAN : type; }

/** A file name for a table: the type name with characters outside [A-Za-z0-9._-] as '_'. */
void ex_table_file_stem(const ex_table *t, char *buf, size_t size);
#endif
