#include "enc_thrift.h"

#include <string.h>

#include "enc_varint.h"

static void put(th_writer *w, const void *p, size_t n)
{
    if (!w->err && tu_buf_put(w->b, p, n)) w->err = 1;
}
static void put_byte(th_writer *w, uint8_t c) { put(w, &c, 1); }
static void put_varint(th_writer *w, uint64_t v)
{
    if (!w->err && enc_uvarint(w->b, v)) w->err = 1;
}

static void field_header(th_writer *w, int16_t id, uint8_t type)
{
    int delta = id - w->last;
    if (delta > 0 && delta <= 15) put_byte(w, (uint8_t)((delta << 4) | type));
    else {
        put_byte(w, type);
        put_varint(w, enc_zigzag64(id));
    }
    w->last = id;
}

void th_init(th_writer *w, tu_buf *b)
{
    memset(w, 0, sizeof *w);
    w->b = b;
}

void th_field_i8(th_writer *w, int16_t id, int8_t v)
{
    field_header(w, id, TH_I8);
    put_byte(w, (uint8_t)v);
}

void th_field_i32(th_writer *w, int16_t id, int32_t v)
{
    field_header(w, id, TH_I32);
    put_varint(w, enc_zigzag64(v));
}

void th_field_i64(th_writer *w, int16_t id, int64_t v)
{
    field_header(w, id, TH_I64);
    put_varint(w, enc_zigzag64(v));
}

void th_field_bool(th_writer *w, int16_t id, int v) { field_header(w, id, v ? TH_BOOL_TRUE : TH_BOOL_FALSE); }

void th_field_binary(th_writer *w, int16_t id, const void *p, size_t n)
{
    field_header(w, id, TH_BINARY);
    put_varint(w, n);
    put(w, p, n);
}

void th_field_string(th_writer *w, int16_t id, const char *s) { th_field_binary(w, id, s, strlen(s)); }

static void push(th_writer *w)
{
    if (w->depth >= TH_MAX_DEPTH) {
        w->err = 1;
        return;
    }
    w->saved[w->depth++] = w->last;
    w->last = 0;
}

void th_field_struct_begin(th_writer *w, int16_t id)
{
    field_header(w, id, TH_STRUCT);
    push(w);
}

void th_field_list_begin(th_writer *w, int16_t id, uint8_t elem_type, uint32_t n)
{
    field_header(w, id, TH_LIST);
    if (n <= 14) put_byte(w, (uint8_t)((n << 4) | elem_type));
    else {
        put_byte(w, (uint8_t)(0xF0 | elem_type));
        put_varint(w, n);
    }
}

void th_elem_struct_begin(th_writer *w) { push(w); }
void th_elem_i32(th_writer *w, int32_t v) { put_varint(w, enc_zigzag64(v)); }
void th_elem_binary(th_writer *w, const void *p, size_t n)
{
    put_varint(w, n);
    put(w, p, n);
}

void th_struct_end(th_writer *w)
{
    put_byte(w, 0);
    if (w->depth > 0) w->last = w->saved[--w->depth];
    else w->err = 1;
}

int th_finish(th_writer *w)
{
    put_byte(w, 0);
    if (w->depth != 0) w->err = 1;
    return w->err ? -1 : 0;
}
