/* A Thrift Compact Protocol writer for Parquet metadata (formats.md §1.2): structs, lists,
 * i8/i16/i32/i64, bool and binary fields, appended to a tu_buf. Field ids are written as
 * deltas from the previous id of the same struct; nesting saves and restores it.
 * Hand-written on purpose: no maintained C Parquet (or Thrift compact) writer is packaged in
 * Debian, and Parquet's footer needs only this small writer (about 120 lines). */
#ifndef JAGER_TOOLS_EXPORT_THRIFT_H
#define JAGER_TOOLS_EXPORT_THRIFT_H
#include <stddef.h>
#include <stdint.h>

#include "toolutil.h"

/** Compact type codes (field and list element codes are the same). */
enum {
    TH_BOOL_TRUE = 1,
    TH_BOOL_FALSE = 2,
    TH_I8 = 3,
    TH_I16 = 4,
    TH_I32 = 5,
    TH_I64 = 6,
    TH_DOUBLE = 7,
    TH_BINARY = 8,
    TH_LIST = 9,
    TH_STRUCT = 12
};

#define TH_MAX_DEPTH 16

typedef struct th_writer {
    tu_buf *b;
    int16_t last;                 /* previous field id in the current struct */
    int16_t saved[TH_MAX_DEPTH];  /* enclosing structs' last ids */
    int depth;
    int err;                      /* sticky: out of memory or nesting too deep */
} th_writer;

void th_init(th_writer *w, tu_buf *b);
void th_field_i8(th_writer *w, int16_t id, int8_t v);
void th_field_i32(th_writer *w, int16_t id, int32_t v);
void th_field_i64(th_writer *w, int16_t id, int64_t v);
void th_field_bool(th_writer *w, int16_t id, int v);
void th_field_binary(th_writer *w, int16_t id, const void *p, size_t n);
void th_field_string(th_writer *w, int16_t id, const char *s);
/** A struct-typed field: write its fields, then th_struct_end(). */
void th_field_struct_begin(th_writer *w, int16_t id);
/** A list-typed field header with \p n elements of \p elem_type. */
void th_field_list_begin(th_writer *w, int16_t id, uint8_t elem_type, uint32_t n);
/** Elements of a list. */
void th_elem_struct_begin(th_writer *w);
void th_elem_i32(th_writer *w, int32_t v);
void th_elem_binary(th_writer *w, const void *p, size_t n);
/** End the innermost struct (writes the stop byte, restores the enclosing field id). */
void th_struct_end(th_writer *w);
/** End the top-level struct (stop byte). Returns 0, or -1 if anything failed. */
int th_finish(th_writer *w);

#endif
