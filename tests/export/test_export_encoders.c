/* Unit tests of the exporters' encoders, against byte sequences from the format specs:
 * the Thrift compact writer reproduces formats.md §1.9's Parquet page header and footer
 * byte for byte; the RLE/bit-packed hybrid the §1.6 example; pprof's generated protobuf-c code the
 * protobuf documentation's examples; plus JSON escaping, UTF-8 cleaning, the string
 * dictionary and the span-tree orderer/walker. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "enc_json.h"
#include "enc_parquet.h"
#include "profile.pb-c.h"
#include "enc_thrift.h"
#include "export_spans.h"
#include "strdict.h"

static void assert_bytes(const tu_buf *b, const uint8_t *want, size_t n)
{
    if (b->len != n || memcmp(b->data, want, n) != 0) {
        fprintf(stderr, "got %zu bytes:", b->len);
        for (size_t i = 0; i < b->len; i++) fprintf(stderr, " %02x", b->data[i]);
        fprintf(stderr, "\nwant %zu bytes:", n);
        for (size_t i = 0; i < n; i++) fprintf(stderr, " %02x", want[i]);
        fprintf(stderr, "\n");
    }
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

/* formats.md §1.9: the 17-byte PageHeader of a 3-value INT64 page. */
static void test_thrift_page_header(void **state)
{
    (void)state;
    static const uint8_t want[] = {0x15, 0x00, 0x15, 0x30, 0x15, 0x30, 0x2c, 0x15, 0x06,
                                   0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00, 0x00};
    tu_buf b = {0};
    th_writer w;
    th_init(&w, &b);
    th_field_i32(&w, 1, 0);
    th_field_i32(&w, 2, 24);
    th_field_i32(&w, 3, 24);
    th_field_struct_begin(&w, 5);
    th_field_i32(&w, 1, 3);
    th_field_i32(&w, 2, 0);
    th_field_i32(&w, 3, 3);
    th_field_i32(&w, 4, 3);
    th_struct_end(&w);
    assert_int_equal(th_finish(&w), 0);
    assert_bytes(&b, want, sizeof want);
    tu_buf_free(&b);
}

/* formats.md §1.9: the 66-byte FileMetaData. */
static void test_thrift_footer(void **state)
{
    (void)state;
    static const uint8_t want[] = {
        0x15, 0x02, 0x19, 0x2c, 0x48, 0x06, 's', 'c', 'h', 'e', 'm', 'a', 0x15, 0x02, 0x00, 0x15, 0x04,
        0x25, 0x00, 0x18, 0x01, 'x', 0x00, 0x16, 0x06, 0x19, 0x1c, 0x19, 0x1c, 0x26, 0x00, 0x1c, 0x15, 0x04,
        0x19, 0x25, 0x00, 0x06, 0x19, 0x18, 0x01, 'x', 0x15, 0x00, 0x16, 0x06, 0x16, 0x52, 0x16, 0x52, 0x26,
        0x08, 0x00, 0x00, 0x16, 0x52, 0x16, 0x06, 0x00, 0x28, 0x04, 'd', 'e', 'm', 'o', 0x00};
    assert_int_equal(sizeof want, 66);
    tu_buf b = {0};
    th_writer w;
    th_init(&w, &b);
    th_field_i32(&w, 1, 1);
    th_field_list_begin(&w, 2, TH_STRUCT, 2);
    th_elem_struct_begin(&w);
    th_field_string(&w, 4, "schema");
    th_field_i32(&w, 5, 1);
    th_struct_end(&w);
    th_elem_struct_begin(&w);
    th_field_i32(&w, 1, 2);
    th_field_i32(&w, 3, 0);
    th_field_string(&w, 4, "x");
    th_struct_end(&w);
    th_field_i64(&w, 3, 3);
    th_field_list_begin(&w, 4, TH_STRUCT, 1);
    th_elem_struct_begin(&w);
    th_field_list_begin(&w, 1, TH_STRUCT, 1);
    th_elem_struct_begin(&w);
    th_field_i64(&w, 2, 0);
    th_field_struct_begin(&w, 3);
    th_field_i32(&w, 1, 2);
    th_field_list_begin(&w, 2, TH_I32, 2);
    th_elem_i32(&w, 0);
    th_elem_i32(&w, 3);
    th_field_list_begin(&w, 3, TH_BINARY, 1);
    th_elem_binary(&w, "x", 1);
    th_field_i32(&w, 4, 0);
    th_field_i64(&w, 5, 3);
    th_field_i64(&w, 6, 41);
    th_field_i64(&w, 7, 41);
    th_field_i64(&w, 9, 4);
    th_struct_end(&w); /* ColumnMetaData */
    th_struct_end(&w); /* ColumnChunk */
    th_field_i64(&w, 2, 41);
    th_field_i64(&w, 3, 3);
    th_struct_end(&w); /* RowGroup */
    th_field_string(&w, 6, "demo");
    assert_int_equal(th_finish(&w), 0);
    assert_bytes(&b, want, sizeof want);
    tu_buf_free(&b);
}

/* Long forms: field id deltas above 15 or going backwards, lists over 14 elements,
 * negative numbers (zigzag), bool fields. */
static void test_thrift_long_forms(void **state)
{
    (void)state;
    tu_buf b = {0};
    th_writer w;
    th_init(&w, &b);
    th_field_i32(&w, 20, -1);      /* 05 28 01: type I32, zz(20)=40, zz(-1)=1 */
    th_field_i64(&w, 3, -64);      /* 06 06 7f: backwards */
    th_field_bool(&w, 4, 1);       /* 11 */
    th_field_bool(&w, 5, 0);       /* 12 */
    th_field_list_begin(&w, 6, TH_I32, 15); /* 19 f5 0f */
    for (int i = 0; i < 15; i++) th_elem_i32(&w, i);
    th_field_i8(&w, 7, 64);        /* 13 40 */
    assert_int_equal(th_finish(&w), 0);
    static const uint8_t head[] = {0x05, 0x28, 0x01, 0x06, 0x06, 0x7f, 0x11, 0x12, 0x19, 0xf5, 0x0f, 0x00, 0x02};
    assert_true(b.len > sizeof head);
    assert_memory_equal(b.data, head, sizeof head);
    static const uint8_t tail[] = {0x13, 0x40, 0x00};
    assert_memory_equal(b.data + b.len - 3, tail, 3);
    tu_buf_free(&b);
}

/* formats.md §1.6: levels [1,0,1,1] bit-packed = 03 0d; all-equal values use an RLE run. */
static void test_hybrid(void **state)
{
    (void)state;
    tu_buf b = {0};
    const uint8_t lv[] = {1, 0, 1, 1};
    assert_int_equal(pq_hybrid_u8(&b, lv, 4, 1), 0);
    assert_bytes(&b, (const uint8_t[]){0x03, 0x0d}, 2);
    b.len = 0;
    const uint8_t ones[] = {1, 1, 1, 1, 1};
    assert_int_equal(pq_hybrid_u8(&b, ones, 5, 1), 0);
    assert_bytes(&b, (const uint8_t[]){0x0a, 0x01}, 2);
    /* dictionary indices 0..9, width 4: two groups, LSB first */
    b.len = 0;
    uint32_t idx[10];
    for (uint32_t i = 0; i < 10; i++) idx[i] = i;
    assert_int_equal(pq_hybrid_u32(&b, idx, 10, 4), 0);
    assert_bytes(&b, (const uint8_t[]){0x05, 0x10, 0x32, 0x54, 0x76, 0x98, 0x00, 0x00, 0x00}, 9);
    /* a 300-value RLE run: uvarint(600) = d8 04, then the value in two bytes for width 9 */
    b.len = 0;
    uint32_t same[300];
    for (int i = 0; i < 300; i++) same[i] = 257;
    assert_int_equal(pq_hybrid_u32(&b, same, 300, 9), 0);
    assert_bytes(&b, (const uint8_t[]){0xd8, 0x04, 0x01, 0x01}, 4);
    tu_buf_free(&b);
    assert_int_equal(pq_bit_width(0), 1);
    assert_int_equal(pq_bit_width(1), 1);
    assert_int_equal(pq_bit_width(2), 2);
    assert_int_equal(pq_bit_width(255), 8);
    assert_int_equal(pq_bit_width(256), 9);
}

static void test_plain_bools(void **state)
{
    (void)state;
    tu_buf b = {0};
    const uint8_t v[] = {1, 0, 1, 1, 0, 0, 0, 0, 1};
    assert_int_equal(pq_plain_bools(&b, v, 9), 0);
    assert_bytes(&b, (const uint8_t[]){0x0d, 0x01}, 2);
    tu_buf_free(&b);
}

static void test_dict(void **state)
{
    (void)state;
    tu_strdict d = {0};
    assert_int_equal(tu_strdict_put(&d, "a", 1), 0);
    assert_int_equal(tu_strdict_put(&d, "bc", 2), 1);
    assert_int_equal(tu_strdict_put(&d, "a", 1), 0);
    assert_int_equal(tu_strdict_put(&d, "", 0), 2);
    assert_int_equal(d.count, 3);
    assert_bytes(&d.plain, (const uint8_t[]){1, 0, 0, 0, 'a', 2, 0, 0, 0, 'b', 'c', 0, 0, 0, 0}, 15);
    /* growth keeps every index */
    char key[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(tu_strdict_put(&d, key, (uint32_t)n), 3 + i);
    }
    for (int i = 4999; i >= 0; i -= 7) {
        int n = snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(tu_strdict_put(&d, key, (uint32_t)n), 3 + i);
    }
    assert_int_equal(d.count, 5003);
    tu_strdict_clear(&d);
    assert_int_equal(tu_strdict_put(&d, "zz", 2), 0);
    tu_strdict_free(&d);
}

/* Protocol Buffers encoding guide, through the code protoc-c generates from our
 * profile.proto: 150 in field 1 = 08 96 01 (ValueType.type); packed [3, 270, 86942] in
 * field 1 = 0a 06 03 8e 02 9e a7 05 (Sample.location_id: proto3 packs repeated scalars, as
 * pprof writes them, formats.md §6); a string in field 6 = 32 len bytes. */
static void test_protobuf(void **state)
{
    (void)state;
    uint8_t out[64];
    Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    vt.type = 150;
    assert_int_equal(perftools__profiles__value_type__pack(&vt, out), 3);
    assert_memory_equal(out, ((const uint8_t[]){0x08, 0x96, 0x01}), 3);
    Perftools__Profiles__Sample smp = PERFTOOLS__PROFILES__SAMPLE__INIT;
    uint64_t ids[] = {3, 270, 86942};
    smp.location_id = ids;
    smp.n_location_id = 3;
    assert_int_equal(perftools__profiles__sample__pack(&smp, out), 8);
    assert_memory_equal(out, ((const uint8_t[]){0x0a, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}), 8);
    Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
    char *strings[] = {"", "testing"};
    p.string_table = strings;
    p.n_string_table = 2;
    p.duration_nanos = -1; /* negative int64: a 10-byte varint */
    assert_int_equal(perftools__profiles__profile__pack(&p, out), 2 + 9 + 11);
    assert_memory_equal(out, ((const uint8_t[]){0x32, 0x00, 0x32, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', 0x50}), 12);
    assert_int_equal(out[21], 0x01);
}

static void expect_json(const char *in, size_t n, const char *want)
{
    tu_buf b = {0};
    assert_int_equal(ex_json_str(&b, in, n), 0);
    assert_int_equal(tu_buf_putc(&b, 0), 0);
    assert_string_equal((const char *)b.data, want);
    tu_buf_free(&b);
}

static void test_json(void **state)
{
    (void)state;
    expect_json("a\"b\\c\n\r\t\x01", (size_t)-1, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\"");
    expect_json("</script><img src=x onerror=alert(1)>&", (size_t)-1,
                "\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\\u0026\"");
    expect_json("\xc3\xbc\xf0\x9f\x8e\xaf", (size_t)-1, "\"\xc3\xbc\xf0\x9f\x8e\xaf\"");
    expect_json("x\xff\xfey", (size_t)-1, "\"x\\ufffd\\ufffdy\"");
    expect_json("\xe2\x80\xa8", (size_t)-1, "\"\\u2028\"");
    expect_json("a\0b", 3, "\"a\\u0000b\"");
    expect_json("\xc3", (size_t)-1, "\"\\ufffd\""); /* cut sequence */
    expect_json(NULL, 0, "null");
    tu_buf b = {0};
    assert_int_equal(ex_json_f64(&b, 0.1), 0);
    assert_int_equal(tu_buf_putc(&b, 0), 0);
    assert_string_equal((const char *)b.data, "0.10000000000000001");
    tu_buf_free(&b);
}

static void test_utf8_clean(void **state)
{
    (void)state;
    assert_true(ex_utf8_valid("\xc3\xbc ok", 4));
    assert_false(ex_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
    assert_false(ex_utf8_valid("\xc0\xaf", 2));     /* overlong */
    tu_buf b = {0};
    assert_int_equal(ex_utf8_clean(&b, "a\xff\xc3\xbc\xc3", 5), 0);
    assert_bytes(&b, (const uint8_t *)"a\xef\xbf\xbd\xc3\xbc\xef\xbf\xbd", 9);
    tu_buf_free(&b);
    char hex[33];
    const uint8_t id[4] = {0, 0xab, 0x01, 0xff};
    assert_int_equal(ex_hex(id, 4, hex), 1);
    assert_string_equal(hex, "00ab01ff");
    const uint8_t zero[4] = {0};
    assert_int_equal(ex_hex(zero, 4, hex), 0);
    assert_string_equal(ex_severity_text(9), "INFO");
    assert_string_equal(ex_severity_text(24), "FATAL");
    assert_string_equal(ex_severity_text(13), "WARN");
}

/* ---- span ordering ---- */

typedef struct walk_log {
    char text[1024];
    size_t len;
    uint64_t excl[16]; /* by site */
    uint64_t last_at;
    int monotonic;
    int batches;
} walk_log;

static uint64_t w_open(void *ctx, const sp_span *s, uint32_t depth, uint64_t parent_user)
{
    walk_log *l = ctx;
    l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "O%u@%llu ", s->site,
                               (unsigned long long)s->start);
    if (s->start < l->last_at) l->monotonic = 0;
    l->last_at = s->start;
    return parent_user * 10 + s->site;
}

static int w_close(void *ctx, const sp_span *s, uint64_t end, uint64_t child_ns, uint64_t child_bytes, uint32_t depth,
                   uint64_t user)
{
    walk_log *l = ctx;
    l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "C%u@%llu ", s->site,
                               (unsigned long long)end);
    if (end < l->last_at) l->monotonic = 0;
    l->last_at = end;
    l->excl[s->site] += (end - s->start) - child_ns;
    assert_int_equal(user % 10, s->site); /* the parent's user value reached the child */
    return 0;
}

static int on_batch(void *ctx, uint32_t thread, const sp_span *spans, size_t n)
{
    walk_log *l = ctx;
    l->batches++;
    static const sp_walker w = {w_open, w_close};
    return sp_walk(spans, n, &w, ctx);
}

static jager_rec_span rec(uint32_t site, uint64_t start, uint64_t end, uint32_t id, uint32_t parent)
{
    jager_rec_span r = {.h = {.type = JAGER_EV_SPAN, .words = 5, .aux = site},
                        .start_ns = start, .end_ns = end, .span_id = id, .parent_id = parent};
    return r;
}

static void test_span_order(void **state)
{
    (void)state;
    walk_log l = {.monotonic = 1};
    sp_orderer *o = sp_new(on_batch, &l);
    assert_non_null(o);
    /* thread 1: A[0,100] { B[0,40] { C[0,0] zero-length at the start }, B'[40,90] } — children first,
     * then a second top-level D[100,120] adjacent to A */
    jager_rec_span r;
    r = rec(3, 0, 0, 3, 2); assert_int_equal(sp_add(o, 1, &r), 0);
    r = rec(2, 0, 40, 2, 1); assert_int_equal(sp_add(o, 1, &r), 0);
    r = rec(2, 40, 90, 4, 1); assert_int_equal(sp_add(o, 1, &r), 0);
    assert_int_equal(l.batches, 0); /* nothing before the top-level span ends */
    r = rec(1, 0, 100, 1, 0); assert_int_equal(sp_add(o, 1, &r), 0);
    assert_int_equal(l.batches, 1);
    r = rec(4, 100, 120, 5, 0); assert_int_equal(sp_add(o, 1, &r), 0);
    assert_int_equal(l.batches, 2);
    l.text[l.len] = 0;
    assert_string_equal(l.text, "O1@0 O2@0 O3@0 C3@0 C2@40 O2@40 C2@90 C1@100 O4@100 C4@120 ");
    assert_true(l.monotonic);
    assert_int_equal(l.excl[1], 10);
    assert_int_equal(l.excl[2], 90);
    assert_int_equal(l.excl[3], 0);
    assert_int_equal(l.excl[4], 20);
    /* an unfinished tree (no top-level end) comes out at sp_finish; a child that overruns
     * its parent is cut at the parent's end */
    l.len = 0;
    l.last_at = 0;
    r = rec(5, 200, 260, 7, 6); assert_int_equal(sp_add(o, 2, &r), 0);
    r = rec(6, 190, 250, 6, 9); assert_int_equal(sp_add(o, 2, &r), 0);
    assert_int_equal(l.batches, 2);
    assert_int_equal(sp_finish(o), 0);
    l.text[l.len] = 0;
    assert_string_equal(l.text, "O6@190 O5@200 C5@250 C6@250 ");
    assert_true(l.monotonic);
    sp_free(o);
}

/* Spans of a task that moved between threads (JAGER_EV_SPAN_X): P begun on thread 1 and
 * ended on thread 3, S begun on thread 1 under P and ended on thread 2, C begun on thread 2
 * under S. All three join thread 1's batch, so they nest P { S { C } } there, as the
 * single-thread program's would (not three roots of threads 2 and 3). */
static void test_span_order_moved(void **state)
{
    (void)state;
    walk_log l = {.monotonic = 1};
    sp_orderer *o = sp_new(on_batch, &l);
    assert_non_null(o);
    jager_rec_span c = rec(3, 20, 30, 4, 2), sx = rec(2, 10, 50, 2, 1), p = rec(1, 0, 100, 1, 0);
    jm_span_view v;
    v = (jm_span_view){&c, 2, 1, 1}; /* C: numbered by thread 2, its parent S by thread 1 */
    assert_int_equal(sp_add_view(o, &v), 0);
    v = (jm_span_view){&sx, 1, 1, 1};
    assert_int_equal(sp_add_view(o, &v), 0);
    assert_int_equal(l.batches, 0);
    v = (jm_span_view){&p, 1, 1, 1}; /* P: a root of its task, numbered by thread 1 */
    assert_int_equal(sp_add_view(o, &v), 0);
    assert_int_equal(l.batches, 1); /* one batch: P's whole tree */
    l.text[l.len] = 0;
    assert_string_equal(l.text, "O1@0 O2@10 O3@20 C3@30 C2@50 C1@100 ");
    assert_int_equal(l.excl[1], 60);
    assert_int_equal(l.excl[2], 30);
    assert_int_equal(l.excl[3], 10);
    assert_int_equal(sp_finish(o), 0);
    assert_int_equal(l.batches, 1);
    sp_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thrift_page_header), cmocka_unit_test(test_thrift_footer),
        cmocka_unit_test(test_thrift_long_forms),  cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_plain_bools),        cmocka_unit_test(test_dict),
        cmocka_unit_test(test_protobuf),           cmocka_unit_test(test_json),
        cmocka_unit_test(test_utf8_clean),         cmocka_unit_test(test_span_order),
        cmocka_unit_test(test_span_order_moved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
