/* The reader's API on hand-made input: attribute lists and log bodies, preambles of
 * other versions, malformed blocks and records, unknown ids, I/O errors. Each malformed
 * case must be refused with a message that says what is wrong and where. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jager_reader.h"
#include "testutil.h"

/* ---- a tiny .jgr builder ---- */
typedef struct buf {
    uint8_t *d;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->d = realloc(b->d, b->cap);
        assert_non_null(b->d);
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static void u16(buf *b, uint16_t v) { put(b, &v, 2); }
static void u32(buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(buf *b, uint64_t v) { put(b, &v, 8); }
static void str(buf *b, const char *s) { u32(b, (uint32_t)strlen(s)); put(b, s, strlen(s)); }

static void preamble(buf *f, uint16_t major, uint16_t minor, uint32_t flags, uint32_t extra)
{
    u32(f, 0x184D2A50u);
    u32(f, 16 + extra);
    put(f, "JAGERJGR", 8);
    u16(f, major);
    u16(f, minor);
    u32(f, flags);
    for (uint32_t i = 0; i < extra; i++) put(f, "\0", 1);
}

/* One block as an LZ4 frame (content size and checksum set, as the writer does). */
static void frame_opts(buf *f, uint32_t kind, const buf *body, int checksum)
{
    buf c = {0};
    u32(&c, kind);
    u32(&c, 0);
    if (body && body->n) put(&c, body->d, body->n);
    LZ4F_preferences_t p;
    memset(&p, 0, sizeof p);
    p.frameInfo.contentSize = c.n;
    p.frameInfo.contentChecksumFlag = checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
    p.frameInfo.blockMode = LZ4F_blockIndependent;
    size_t cap = LZ4F_compressFrameBound(c.n, &p);
    uint8_t *out = malloc(cap);
    size_t n = LZ4F_compressFrame(out, cap, c.d, c.n, &p);
    assert_false(LZ4F_isError(n));
    put(f, out, n);
    free(out);
    free(c.d);
}
static void frame(buf *f, uint32_t kind, const buf *body) { frame_opts(f, kind, body, 1); }

static void end_block(buf *f, uint64_t events, uint64_t frames)
{
    buf b = {0};
    u64(&b, 123456);
    u64(&b, events);
    u64(&b, frames);
    frame(f, 11, &b);
    free(b.d);
}

/* A minimal valid file: preamble, META, SCHEMA (one plugin type), STRINGS, SITES,
 * THREADS, then EVENTS with the records in \p recs, then END. */
static uint32_t base_flags; /* the preamble flags base_tables() writes */
static void base_tables(buf *f)
{
    preamble(f, 1, base_flags ? 1 : 0, base_flags, 0);
    buf b = {0};
    u32(&b, 2);
    str(&b, "host.name");
    str(&b, "h<1>");
    str(&b, "clock.start_ns");
    str(&b, "1000");
    frame(f, 1, &b);
    b.n = 0;
    u32(&b, 1);
    u16(&b, 300);
    u16(&b, 0);
    u32(&b, 2);
    str(&b, "test.ev");
    u16(&b, 7); /* DURATION_NS */
    u16(&b, 1); /* JAGER_FIELD_FLAG_EXTENT: the event's duration (without it, no extent) */
    str(&b, "dur");
    u16(&b, 4); /* STRING */
    u16(&b, 0);
    str(&b, "label");
    frame(f, 2, &b);
    b.n = 0;
    u32(&b, 2);
    u32(&b, 1);
    str(&b, "solve");
    u32(&b, 2);
    str(&b, "a.c");
    frame(f, 3, &b);
    b.n = 0;
    u32(&b, 1);
    u32(&b, 1);
    u32(&b, 1);
    u32(&b, 2);
    u32(&b, 9);
    frame(f, 4, &b);
    b.n = 0;
    u32(&b, 1);
    u32(&b, 1);
    u64(&b, 777);
    str(&b, "main");
    frame(f, 5, &b);
    free(b.d);
}

static void events_block_enc(buf *f, uint32_t thread, uint32_t enc, uint64_t nevents, const buf *recs)
{
    buf b = {0};
    u32(&b, thread);
    u32(&b, enc);
    u64(&b, nevents);
    if (recs) put(&b, recs->d, recs->n);
    frame(f, 7, &b);
    free(b.d);
}
static void events_block(buf *f, uint32_t thread, uint64_t nevents, const buf *recs)
{
    events_block_enc(f, thread, 0, nevents, recs);
}

static void rec_span(buf *r, uint32_t site, uint64_t start, uint64_t end)
{
    u16(r, 1);
    u16(r, 5);
    u32(r, site);
    u64(r, start);
    u64(r, end);
    u32(r, 1);
    u32(r, 0);
    u64(r, 0);
}

static void rec_plugin(buf *r, uint16_t type, uint64_t t, uint64_t dur, uint64_t label)
{
    u16(r, type);
    u16(r, 4);
    u32(r, 0);
    u64(r, t);
    u64(r, dur);
    u64(r, label);
}

/* Open \p f from memory and iterate; returns the final rc, events in *n. */
static int read_all(const buf *f, uint64_t *n, jager_reader **keep)
{
    jager_reader *r = NULL;
    jager_status st = jager_reader_open_memory(f->d, f->n, &r);
    if (keep) *keep = NULL;
    if (st != JAGER_OK) return st;
    jager_event ev;
    int rc;
    *n = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) (*n)++;
    if (keep) *keep = r;
    else jager_reader_close(r);
    return rc;
}

static void test_hand_made_file(void **state)
{
    (void)state;
    buf f = {0}, recs = {0};
    base_tables(&f);
    rec_span(&recs, 1, 100, 250);
    rec_plugin(&recs, 300, 1000, 40, 2);
    rec_plugin(&recs, 300, 2000, 5, 99); /* unknown string id: resolved lazily to NULL */
    events_block(&f, 1, 3, &recs);
    end_block(&f, 3, 7);
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open_memory(f.d, f.n, &r), JAGER_OK);
    assert_string_equal(jager_reader_meta(r, "host.name"), "h<1>");
    jager_event ev;
    assert_int_equal(jager_reader_next(r, &ev), 1);
    assert_int_equal(ev.type, 1);
    assert_int_equal(ev.time_ns, 100);
    assert_int_equal(ev.end_ns, 250);
    assert_int_equal(ev.thread, 1);
    assert_int_equal(jager_reader_next(r, &ev), 1);
    assert_int_equal(ev.type, 300);
    assert_int_equal(ev.time_ns, 1000);
    assert_int_equal(ev.end_ns, 1040);
    const jager_rec_plugin *p = (const jager_rec_plugin *)ev.rec;
    assert_string_equal(jager_reader_string(r, (uint32_t)p->fields[1]), "a.c");
    assert_int_equal(jager_reader_next(r, &ev), 1);
    p = (const jager_rec_plugin *)ev.rec;
    assert_null(jager_reader_string(r, (uint32_t)p->fields[1]));
    assert_int_equal(jager_reader_next(r, &ev), 0);
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    assert_int_equal(info.clean_end, 1);
    assert_int_equal(info.end_ns, 123456);
    assert_int_equal(info.start_ns, 1000);
    assert_int_equal(info.frames, 8);
    /* a caller built against a smaller (older) info struct gets only its part */
    struct { uint32_t struct_size; uint16_t maj, min; uint64_t bytes; uint64_t guard; } small;
    small.struct_size = 16;
    small.guard = 0xabcdef;
    assert_int_equal(jager_reader_get_info(r, (jager_reader_info *)&small), JAGER_OK);
    assert_int_equal(small.bytes, f.n);
    assert_int_equal(small.guard, 0xabcdef);
    uint64_t tid;
    const char *name;
    assert_int_equal(jager_reader_thread(r, 1, &tid, &name), JAGER_OK);
    assert_int_equal(tid, 777);
    assert_string_equal(name, "main");
    /* no STATS block: statistics are not found */
    jager_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_reader_stats(r, &st), JAGER_E_NOTFOUND);
    jager_reader_close(r);
    free(f.d);
    free(recs.d);
}

/* Later minors may grow the preamble and set ignorable flags and add block kinds. */
static void test_forward_compatible(void **state)
{
    (void)state;
    buf f = {0}, b = {0};
    preamble(&f, 1, 7, 0x0000ffffu, 16);
    u32(&b, 0);
    frame(&f, 1, &b);   /* empty META */
    frame(&f, 99, &b);  /* a block kind from the future */
    u32(&f, 0x184D2A5Fu); /* a skippable frame in between */
    u32(&f, 3);
    put(&f, "abc", 3);
    end_block(&f, 0, 4);
    uint64_t n;
    jager_reader *r = NULL;
    assert_int_equal(read_all(&f, &n, &r), 0);
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    assert_int_equal(info.format_minor, 7);
    assert_int_equal(info.clean_end, 1);
    jager_reader_close(r);
    free(f.d);
    free(b.d);
}

/* 1.1's packed span records (file_format.h), written by hand: differences from the span
 * before in the block, read back as the absolute values; a plugin record in between is
 * untouched. The same block in a file whose preamble lacks the flag is refused. */
static void put_packed(buf *r, uint32_t site, uint64_t dstart, uint64_t dur, uint32_t did, uint32_t dparent, uint64_t bytes)
{
    u16(r, 1);
    u16(r, 5);
    u32(r, site);
    u64(r, dstart);
    u64(r, dur);
    u32(r, did);
    u32(r, dparent);
    u64(r, bytes);
}
static void test_packed_spans(void **state)
{
    (void)state;
    for (int flagged = 1; flagged >= 0; flagged--) {
        buf f = {0}, recs = {0};
        base_flags = flagged ? 0x00010000u : 0;
        base_tables(&f);
        base_flags = 0;
        put_packed(&recs, 1, 1000, 50, 7, 0, 0);                  /* start 1000, end 1050, id 7, parent 0 */
        rec_plugin(&recs, 300, 5000, 40, 2);
        put_packed(&recs, 1, 100, 30, 1, 7, 64);                  /* start 1100, end 1130, id 8, parent 7 */
        put_packed(&recs, 1, (uint64_t)-1100, 0, (uint32_t)-8, (uint32_t)-7, 0); /* start 0, id 0, parent 0 */
        events_block_enc(&f, 1, 1, 4, &recs);
        end_block(&f, 4, 7);
        jager_reader *r = NULL;
        assert_int_equal(jager_reader_open_memory(f.d, f.n, &r), JAGER_OK);
        jager_event ev;
        if (!flagged) {
            assert_true(jager_reader_next(r, &ev) < 0);
            assert_non_null(strstr(jager_reader_error(r), "unknown encoding 1"));
        } else {
            static const uint64_t want[3][5] = {{1000, 1050, 7, 0, 0}, {1100, 1130, 8, 7, 64}, {0, 0, 0, 0, 0}};
            for (int i = 0, k = 0; i < 4; i++) {
                assert_int_equal(jager_reader_next(r, &ev), 1);
                if (ev.type == 300) {
                    assert_int_equal(ev.time_ns, 5000);
                    assert_int_equal(ev.end_ns, 5040);
                    continue;
                }
                const jager_rec_span *sp = (const jager_rec_span *)ev.rec;
                assert_int_equal(sp->start_ns, want[k][0]);
                assert_int_equal(sp->end_ns, want[k][1]);
                assert_int_equal(sp->span_id, want[k][2]);
                assert_int_equal(sp->parent_id, want[k][3]);
                assert_int_equal(sp->bytes, want[k][4]);
                k++;
            }
            assert_int_equal(jager_reader_next(r, &ev), 0);
            /* read twice: the block is unpacked once per decompression, never twice */
            assert_int_equal(jager_reader_rewind(r), JAGER_OK);
            assert_int_equal(jager_reader_next(r, &ev), 1);
            assert_int_equal(((const jager_rec_span *)ev.rec)->start_ns, 1000);
            jager_reader_info info = {.struct_size = sizeof info};
            jager_reader_get_info(r, &info);
            assert_int_equal(info.format_minor, 1);
        }
        jager_reader_close(r);
        free(f.d);
        free(recs.d);
    }
}

static void expect_open_error(const buf *f, jager_status want, const char *needle)
{
    jager_reader *r = (jager_reader *)1;
    assert_int_equal(jager_reader_open_memory(f->d, f->n, &r), want);
    assert_null(r);
    if (!strstr(jager_last_error(), needle)) fprintf(stderr, "message: %s\n", jager_last_error());
    assert_non_null(strstr(jager_last_error(), needle));
}

static void test_bad_preambles(void **state)
{
    (void)state;
    buf f = {0};
    preamble(&f, 2, 0, 0, 0);
    expect_open_error(&f, JAGER_E_FORMAT, "format version 2.0");
    f.n = 0;
    preamble(&f, 1, 0, 0x00020000u, 0); /* 0x10000 is 1.1's packed spans */
    expect_open_error(&f, JAGER_E_FORMAT, "newer reader");
    f.n = 0;
    preamble(&f, 1, 0, 0, 0);
    memcpy(f.d + 8, "JAGERJGX", 8);
    expect_open_error(&f, JAGER_E_FORMAT, "JAGERJGR");
    f.n = 0;
    put(&f, "hello world, not a recording", 28);
    expect_open_error(&f, JAGER_E_FORMAT, "not a .jgr");
    f.n = 0;
    expect_open_error(&f, JAGER_E_FORMAT, "not a .jgr");
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open("/nonexistent/x.jgr", &r), JAGER_E_IO);
    assert_non_null(strstr(jager_last_error(), "/nonexistent/x.jgr"));
    assert_int_equal(jager_reader_open("/tmp", &r), JAGER_E_IO);
    assert_int_equal(jager_reader_open(NULL, &r), JAGER_E_INVALID);
    assert_int_equal(jager_reader_open_memory(NULL, 5, &r), JAGER_E_INVALID);
    jager_reader_close(NULL);
    assert_string_equal(jager_reader_error(NULL), "");
    free(f.d);
}

/* A file whose events block (after the base tables) holds \p recs declared as \p n events
 * must fail with \p want and a message containing \p needle, after \p good events. */
static void expect_events_error(const buf *recs, uint64_t n, int want, const char *needle)
{
    buf f = {0};
    base_tables(&f);
    buf ok = {0};
    rec_span(&ok, 1, 1, 2);
    events_block(&f, 1, 1, &ok);
    events_block(&f, 1, n, recs);
    end_block(&f, n + 1, 8);
    jager_reader *r = NULL;
    uint64_t got;
    int rc = read_all(&f, &got, &r);
    if (rc != want || !strstr(jager_reader_error(r), needle))
        fprintf(stderr, "rc %d, message: %s\n", rc, jager_reader_error(r));
    assert_int_equal(rc, want);
    assert_int_equal(got, 1); /* the good block only: a bad block yields nothing */
    assert_non_null(strstr(jager_reader_error(r), needle));
    assert_non_null(strstr(jager_reader_error(r), "frame 7 at byte "));
    jager_reader_close(r);
    free(f.d);
    free(ok.d);
}

static void test_bad_records(void **state)
{
    (void)state;
    buf r = {0};
    rec_span(&r, 1, 1, 2);
    expect_events_error(&r, 2, JAGER_E_FORMAT, "declares 2 events but holds 1");
    r.n = 0;
    rec_plugin(&r, 301, 1, 1, 1);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "type 301");
    r.n = 0;
    u16(&r, 1);
    u16(&r, 0); /* zero words */
    u32(&r, 0);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "0 words");
    r.n = 0;
    u16(&r, 1);
    u16(&r, 9); /* more words than the block holds */
    u32(&r, 0);
    u64(&r, 0);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "9 words");
    r.n = 0;
    u16(&r, 300);
    u16(&r, 3); /* plugin type with 2 fields needs 4 words */
    u32(&r, 0);
    u64(&r, 0);
    u64(&r, 0);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "at least 32");
    r.n = 0;
    u16(&r, 2); /* log whose body_len overruns the record */
    u16(&r, 8);
    u32(&r, 9);
    u64(&r, 5);
    u64(&r, 0);
    for (int i = 0; i < 24; i++) put(&r, "\0", 1);
    u32(&r, 100);
    u32(&r, 0);
    u64(&r, 0);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "overrun");
    r.n = 0;
    u16(&r, 0); /* padding record */
    u16(&r, 1);
    u32(&r, 0);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "type 0");
    r.n = 0;
    rec_span(&r, 1, 1, 2);
    put(&r, "\1\2\3\4", 4);
    expect_events_error(&r, 1, JAGER_E_FORMAT, "stray bytes");
    free(r.d);
}

/* A malformed table block, appended after the base tables. */
static void expect_table_error(uint32_t kind, const buf *body, const char *needle)
{
    buf f = {0};
    base_tables(&f);
    frame(&f, kind, body);
    end_block(&f, 0, 7);
    uint64_t n;
    jager_reader *r = NULL;
    int rc = read_all(&f, &n, &r);
    if (rc != JAGER_E_FORMAT || !strstr(jager_reader_error(r), needle))
        fprintf(stderr, "rc %d, message: %s\n", rc, jager_reader_error(r));
    assert_int_equal(rc, JAGER_E_FORMAT);
    assert_non_null(strstr(jager_reader_error(r), needle));
    jager_reader_close(r);
    free(f.d);
}

static void test_bad_tables(void **state)
{
    (void)state;
    buf b = {0};
    u32(&b, 1);
    u32(&b, 5); /* strings 3 and 4 are missing */
    str(&b, "x");
    expect_table_error(3, &b, "skips ahead");
    b.n = 0;
    u32(&b, 1);
    u32(&b, 1);
    str(&b, "not solve");
    expect_table_error(3, &b, "redefined");
    b.n = 0;
    u32(&b, 1000000); /* more entries than bytes */
    expect_table_error(3, &b, "claims 1000000 entries");
    b.n = 0;
    u32(&b, 1);
    u32(&b, 3);
    u32(&b, 50); /* string longer than the block */
    put(&b, "ab", 2);
    expect_table_error(3, &b, "runs past the end");
    b.n = 0;
    u32(&b, 1);
    u16(&b, 12); /* a core id marked as a plugin type */
    u16(&b, 0);
    u32(&b, 0);
    str(&b, "fake");
    expect_table_error(2, &b, "builtin=0");
    b.n = 0;
    u32(&b, 1);
    u16(&b, 300); /* the same id with other fields */
    u16(&b, 0);
    u32(&b, 0);
    str(&b, "test.ev");
    expect_table_error(2, &b, "redefined");
    b.n = 0;
    u32(&b, 1);
    u16(&b, 400);
    u16(&b, 0);
    u32(&b, 33);
    str(&b, "too.many");
    expect_table_error(2, &b, "33 fields");
    b.n = 0;
    u32(&b, 1); /* STATS: flags first+last, no core values, limit 2, one site with bucket 500 */
    u32(&b, 0);
    u32(&b, 2);
    u32(&b, 1);
    u32(&b, 1);
    u32(&b, 0);
    u32(&b, 1);
    u32(&b, 500);
    u64(&b, 1);
    b.d[0] = 3;
    expect_table_error(10, &b, "bucket 500");
    free(b.d);
}

static void test_frame_level_errors(void **state)
{
    (void)state;
    buf f = {0}, b = {0};
    base_tables(&f);
    u32(&b, 0);
    frame_opts(&f, 1, &b, 0); /* no content checksum */
    uint64_t n;
    jager_reader *r = NULL;
    assert_int_equal(read_all(&f, &n, &r), JAGER_E_FORMAT);
    assert_non_null(strstr(jager_reader_error(r), "without a content checksum"));
    jager_reader_close(r);

    f.n = 0;
    base_tables(&f);
    u32(&f, 0x184C2102u); /* the legacy LZ4 format */
    u32(&f, 0);
    assert_int_equal(read_all(&f, &n, &r), JAGER_E_FORMAT);
    assert_non_null(strstr(jager_reader_error(r), "not an LZ4 frame (magic 0x184c2102)"));
    assert_non_null(strstr(jager_reader_error(r), "frame 6 at byte "));
    jager_reader_close(r);

    f.n = 0; /* ends cleanly after a whole frame, without END */
    base_tables(&f);
    assert_int_equal(read_all(&f, &n, &r), JAGER_E_TRUNCATED);
    assert_non_null(strstr(jager_reader_error(r), "without an END block"));
    jager_reader_info info = {.struct_size = sizeof info};
    jager_reader_get_info(r, &info);
    assert_int_equal(info.truncated, 1);
    assert_int_equal(info.clean_end, 0);
    jager_reader_close(r);

    f.n = 0; /* an END block whose counts disagree */
    base_tables(&f);
    end_block(&f, 5, 6);
    assert_int_equal(read_all(&f, &n, &r), JAGER_E_FORMAT);
    assert_non_null(strstr(jager_reader_error(r), "END block counts 5 events"));
    jager_reader_close(r);
    free(f.d);
    free(b.d);
}

static void sym(buf *b, uint64_t ip, uint32_t depth, uint32_t line, uint32_t func)
{
    u64(b, ip);
    u32(b, depth);
    u32(b, line);
    u32(b, func);
    u32(b, 2);
}

static void stats_part(buf *f, uint32_t flags, uint32_t site, uint64_t calls_site1, int with_core)
{
    buf b = {0};
    u32(&b, flags);
    u32(&b, with_core ? 16 : 0);
    for (int i = 0; with_core && i < 16; i++) u64(&b, (uint64_t)i + 100);
    u32(&b, 3); /* covers sites 1 and 2 */
    u32(&b, 1);
    u32(&b, site);
    u32(&b, 10); /* one value more than 1.0 knows: ignored */
    u32(&b, 2);
    for (uint64_t v = 0; v < 10; v++) u64(&b, v == 0 ? calls_site1 : v);
    u32(&b, 3);
    u64(&b, 7);
    u32(&b, 191);
    u64(&b, 1);
    frame(f, 10, &b);
    free(b.d);
}

/* One PATHS block (format 1.1): flags, thread, nvalues, then (parent, site, values) entries. */
static void paths_block(buf *f, uint32_t flags, uint32_t thread, uint32_t nvalues, const uint32_t *ps, const uint64_t *vals,
                        uint32_t n)
{
    buf b = {0};
    u32(&b, flags);
    u32(&b, thread);
    u32(&b, nvalues);
    u32(&b, n);
    for (uint32_t i = 0; i < n; i++) {
        u32(&b, ps[2 * i]);
        u32(&b, ps[2 * i + 1]);
        for (uint32_t k = 0; k < nvalues; k++) u64(&b, vals[i * nvalues + k]);
    }
    frame(f, 12, &b);
    free(b.d);
}

/* Call paths: a set over two threads replaces an older one; self time is total minus the
 * children's; values beyond the three 1.1 knows are ignored; a file without PATHS (1.0)
 * has none; a parent that is not an earlier entry is refused. */
static void test_paths_hand_made(void **state)
{
    (void)state;
    buf f = {0};
    base_tables(&f);
    jager_reader *r;
    /* 1.0: no PATHS block at all */
    buf old = {0};
    put(&old, f.d, f.n);
    end_block(&old, 0, 6);
    assert_int_equal(jager_reader_open_memory(old.d, old.n, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    assert_int_equal(jager_reader_path_count(r), 0);
    jager_path_stat ps = {.struct_size = sizeof ps};
    assert_int_equal(jager_reader_path(r, 0, &ps), JAGER_E_NOTFOUND);
    jager_reader_close(r);

    /* an old set (thread 1 only), then a new one over two blocks, 4 values per entry */
    const uint32_t old_ps[] = {0, 0, 0, 1};
    const uint64_t old_v[] = {0, 0, 0, 5, 50, 0};
    paths_block(&f, 3, 1, 3, old_ps, old_v, 2);
    const uint32_t t1[] = {0, 0, 0, 1, 2, 1}; /* overflow, site 1, site 1 under it (recursion) */
    const uint64_t v1[] = {2, 30, 0, 9, /**/ 10, 1000, 64, 9, /**/ 4, 300, 0, 9};
    paths_block(&f, 1, 1, 4, t1, v1, 3);
    const uint32_t t2[] = {0, 0, 0, 1};
    const uint64_t v2[] = {0, 0, 0, 9, /**/ 7, 70, 0, 9};
    paths_block(&f, 2, 2, 4, t2, v2, 2);
    end_block(&f, 0, 9);
    assert_int_equal(jager_reader_open_memory(f.d, f.n, &r), JAGER_OK);
    int lt = jager_reader_load_tables(r);
    if (lt) fprintf(stderr, "%s\n", jager_reader_error(r));
    assert_int_equal(lt, JAGER_OK);
    assert_int_equal(jager_reader_path_count(r), 5);
    assert_int_equal(jager_reader_path(r, 0, &ps), JAGER_OK); /* thread 1's overflow bucket */
    assert_int_equal(ps.thread, 1);
    assert_int_equal(ps.site, 0);
    assert_int_equal(ps.parent, JAGER_PATH_TOP);
    assert_int_equal(ps.calls, 2);
    assert_int_equal(ps.total_ns, 30);
    assert_int_equal(ps.self_ns, 0); /* overlapping contents: no self time */
    assert_int_equal(jager_reader_path(r, 1, &ps), JAGER_OK);
    assert_int_equal(ps.site, 1);
    assert_int_equal(ps.parent, JAGER_PATH_TOP);
    assert_int_equal(ps.calls, 10);
    assert_int_equal(ps.total_ns, 1000);
    assert_int_equal(ps.self_ns, 700);
    assert_int_equal(ps.bytes, 64);
    assert_int_equal(jager_reader_path(r, 2, &ps), JAGER_OK);
    assert_int_equal(ps.parent, 1);
    assert_int_equal(ps.self_ns, 300);
    assert_int_equal(jager_reader_path(r, 4, &ps), JAGER_OK); /* thread 2's entry 2: index 4 */
    assert_int_equal(ps.thread, 2);
    assert_int_equal(ps.parent, JAGER_PATH_TOP);
    assert_int_equal(ps.calls, 7);
    assert_int_equal(jager_reader_path(r, 5, &ps), JAGER_E_NOTFOUND);
    jager_path_stat small = {.struct_size = 8};
    assert_int_equal(jager_reader_path(r, 0, &small), JAGER_E_INVALID);
    jager_reader_close(r);

    /* a parent that is not an earlier entry */
    buf bad = {0};
    base_tables(&bad);
    const uint32_t fwd[] = {2, 1, 0, 1};
    const uint64_t fv[] = {1, 1, 0, 1, 1, 0};
    paths_block(&bad, 3, 1, 3, fwd, fv, 2);
    end_block(&bad, 0, 7);
    assert_int_equal(jager_reader_open_memory(bad.d, bad.n, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_E_FORMAT);
    assert_non_null(strstr(jager_reader_error(r), "PATHS block: entry 1 names parent 2"));
    jager_reader_close(r);
    free(old.d);
    free(bad.d);
    free(f.d);
}

/* Stacks, symbols (out of order, inline frames, duplicates), counters and a statistics
 * set in two parts, hand-made. */
static void test_tables_hand_made(void **state)
{
    (void)state;
    buf f = {0}, b = {0};
    base_tables(&f);
    u32(&b, 2); /* STACKS */
    u64(&b, 1);
    u32(&b, 2);
    u64(&b, 0x1000);
    u64(&b, 0x2000);
    u64(&b, 2);
    u32(&b, 0);
    frame(&f, 8, &b);
    b.n = 0;
    u32(&b, 6); /* SYMBOLS: 0x1000 has frames at depths 2, 0, 1 interleaved with 0x2000 */
    sym(&b, 0x1000, 2, 30, 1);
    sym(&b, 0x2000, 0, 5, 2);
    sym(&b, 0x1000, 0, 10, 2);
    sym(&b, 0x1000, 1, 20, 1);
    sym(&b, 0x1000, 0, 99, 1); /* duplicate (ip, depth): the first one stands */
    sym(&b, 0x3000, 0, 1, 77); /* unknown function string */
    frame(&f, 9, &b);
    b.n = 0;
    u32(&b, 1); /* COUNTERS */
    u32(&b, 1);
    u32(&b, 1);
    u32(&b, 0);
    u32(&b, 1);
    frame(&f, 6, &b);
    stats_part(&f, 3, 1, 11, 1);  /* a complete set */
    stats_part(&f, 1, 1, 22, 1);  /* first part of a newer set … */
    int frames = 11; /* preamble, 5 base tables, stacks, symbols, counters, 2 stats */
    jager_reader *r;
    buf cut = {0};
    put(&cut, f.d, f.n);
    end_block(&cut, 0, (uint64_t)frames);
    assert_int_equal(jager_reader_open_memory(cut.d, cut.n, &r), JAGER_OK);
    int lt = jager_reader_load_tables(r);
    if (lt) fprintf(stderr, "%s\n", jager_reader_error(r));
    assert_int_equal(lt, JAGER_OK);
    const uint64_t *ips;
    uint32_t n;
    assert_int_equal(jager_reader_stack(r, 1, &ips, &n), JAGER_OK);
    assert_int_equal(n, 2);
    assert_int_equal(ips[1], 0x2000);
    assert_int_equal(jager_reader_stack(r, 2, &ips, &n), JAGER_OK);
    assert_int_equal(n, 0);
    jager_frame fr[4];
    assert_int_equal(jager_reader_symbolize(r, 0x1000, fr, 4), 3);
    assert_int_equal(fr[0].inline_depth, 0);
    assert_int_equal(fr[0].line, 10);
    assert_string_equal(fr[0].func, "a.c");
    assert_string_equal(fr[0].file, "a.c");
    assert_int_equal(fr[1].line, 20);
    assert_string_equal(fr[1].func, "solve");
    assert_int_equal(fr[2].line, 30);
    assert_int_equal(jager_reader_symbolize(r, 0x1000, fr, 2), 2); /* the outermost two */
    assert_int_equal(fr[0].line, 10);
    assert_int_equal(fr[1].line, 20);
    assert_int_equal(jager_reader_symbolize(r, 0x3000, fr, 4), 1);
    assert_string_equal(fr[0].func, "??");
    const char *name, *unit;
    uint32_t kind;
    assert_int_equal(jager_reader_counter(r, 1, &name, &unit, &kind), JAGER_OK);
    assert_string_equal(name, "solve");
    assert_null(unit);
    assert_int_equal(kind, 1);
    /* the second set never completed: the first one stands */
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_reader_site_stats(r, 1, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 11);
    assert_int_equal(ss.total_ns, 1);
    assert_int_equal(ss.p99_ns, 8);
    assert_int_equal(ss.hist[3], 7);
    assert_int_equal(ss.hist[191], 1);
    assert_int_equal(ss.hist[0], 0);
    jager_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_reader_stats(r, &st), JAGER_OK);
    assert_int_equal(st.threads, 100);
    assert_int_equal(st.dropped[7], 111);
    assert_int_equal(st.ring_bytes, 115);
    jager_reader_close(r);
    /* … and with its last part it replaces the first set */
    stats_part(&f, 2, 2, 33, 0);
    end_block(&f, 0, (uint64_t)frames + 1);
    assert_int_equal(jager_reader_open_memory(f.d, f.n, &r), JAGER_OK);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    ss.struct_size = sizeof ss;
    assert_int_equal(jager_reader_site_stats(r, 1, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 22);
    ss.struct_size = sizeof ss;
    assert_int_equal(jager_reader_site_stats(r, 2, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 33);
    ss.struct_size = sizeof ss;
    assert_int_equal(jager_reader_site_stats(r, 3, &ss), JAGER_E_NOTFOUND); /* beyond the covered range */
    jager_reader_close(r);
    free(f.d);
    free(cut.d);
    free(b.d);
}

static void test_attr_next(void **state)
{
    (void)state;
    buf b = {0};
    /* key "n" I64 -3, key "pi" F64, key "s" STR "hey", key "ok" BOOL 1 */
    u16(&b, 1); u16(&b, 1); u32(&b, 8); put(&b, "n", 1); u64(&b, (uint64_t)-3); put(&b, "\0\0\0\0\0\0\0", 7);
    double pi = 3.25;
    u16(&b, 2); u16(&b, 2); u32(&b, 8); put(&b, "pi", 2); put(&b, &pi, 8); put(&b, "\0\0\0\0\0\0", 6);
    u16(&b, 1); u16(&b, 3); u32(&b, 3); put(&b, "s", 1); put(&b, "hey", 3); put(&b, "\0\0\0\0", 4);
    u16(&b, 2); u16(&b, 4); u32(&b, 8); put(&b, "ok", 2); u64(&b, 1); put(&b, "\0\0\0\0\0\0", 6);
    assert_int_equal(b.n % 8, 0);
    const uint8_t *c = b.d, *end = b.d + b.n;
    jager_attr_view v;
    assert_int_equal(jager_attr_next(&c, end, &v), 1);
    assert_int_equal(v.kind, JAGER_ATTR_I64);
    assert_int_equal(v.i64, -3);
    assert_memory_equal(v.key, "n", 1);
    assert_int_equal(jager_attr_next(&c, end, &v), 1);
    assert_true(v.f64 == 3.25);
    assert_int_equal(v.key_len, 2);
    assert_int_equal(jager_attr_next(&c, end, &v), 1);
    assert_int_equal(v.str_len, 3);
    assert_memory_equal(v.str, "hey", 3);
    assert_int_equal(jager_attr_next(&c, end, &v), 1);
    assert_int_equal(v.kind, JAGER_ATTR_BOOL);
    assert_int_equal(v.i64, 1);
    assert_int_equal(jager_attr_next(&c, end, &v), 0);
    /* cut anywhere inside the list: each cut is refused, never read past */
    for (size_t cut = 1; cut < 24; cut++) {
        uint8_t *copy = malloc(cut);
        memcpy(copy, b.d, cut);
        c = copy;
        assert_int_equal(jager_attr_next(&c, copy + cut, &v), JAGER_E_FORMAT);
        free(copy);
    }
    /* a malformed entry: I64 with a 4-byte value, unknown kind, key overrunning */
    uint8_t bad[16] = {1, 0, 1, 0, 4, 0, 0, 0, 'k'};
    c = bad;
    assert_int_equal(jager_attr_next(&c, bad + 16, &v), JAGER_E_FORMAT);
    uint8_t bad2[16] = {1, 0, 9, 0, 0, 0, 0, 0, 'k'};
    c = bad2;
    assert_int_equal(jager_attr_next(&c, bad2 + 16, &v), JAGER_E_FORMAT);
    /* an interned string (kind 5, JAGER_ATTR_STR_ID, since 1.1): the 8-byte id in i64; with a
     * value of another length, malformed */
    uint8_t sid[24] = {1, 0, 5, 0, 8, 0, 0, 0, 'm', 42, 0, 0, 0, 0, 0, 0, 0};
    c = sid;
    assert_int_equal(jager_attr_next(&c, sid + 24, &v), 1);
    assert_int_equal(v.kind, JAGER_ATTR_STR_ID);
    assert_int_equal(v.i64, 42);
    assert_memory_equal(v.key, "m", 1);
    assert_ptr_equal(c, sid + 24);
    uint8_t sid4[16] = {1, 0, 5, 0, 4, 0, 0, 0, 'm', 42};
    c = sid4;
    assert_int_equal(jager_attr_next(&c, sid4 + 16, &v), JAGER_E_FORMAT);
    uint8_t bad3[16] = {200, 0, 3, 0, 0, 0, 0, 0};
    c = bad3;
    assert_int_equal(jager_attr_next(&c, bad3 + 16, &v), JAGER_E_FORMAT);
    c = bad3 + 8;
    assert_int_equal(jager_attr_next(&c, bad3, &v), JAGER_E_FORMAT); /* cursor past end */
    assert_int_equal(jager_attr_next(NULL, bad3, &v), JAGER_E_INVALID);
    free(b.d);
}

static void test_log_body(void **state)
{
    (void)state;
    _Alignas(8) uint8_t rec[80];
    memset(rec, 0, sizeof rec);
    jager_rec_log *l = (jager_rec_log *)rec;
    l->h.type = JAGER_EV_LOG;
    l->h.words = 10;
    l->body_len = 5;
    memcpy(rec + sizeof *l, "hello", 5);
    const char *body;
    uint32_t blen;
    const uint8_t *a, *e;
    assert_int_equal(jager_log_body(l, &body, &blen, &a, &e), JAGER_OK);
    assert_int_equal(blen, 5);
    assert_memory_equal(body, "hello", 5);
    assert_ptr_equal(a, rec + 64);
    assert_ptr_equal(e, rec + 80);
    l->body_len = 17; /* padded to 24 > 24? exactly fits */
    assert_int_equal(jager_log_body(l, &body, &blen, &a, &e), JAGER_OK);
    assert_ptr_equal(a, rec + 80);
    l->body_len = 25;
    assert_int_equal(jager_log_body(l, &body, &blen, &a, &e), JAGER_E_FORMAT);
    l->body_len = 0xFFFFFFFFu;
    assert_int_equal(jager_log_body(l, &body, &blen, &a, &e), JAGER_E_FORMAT);
    l->body_len = 0;
    l->h.words = 6; /* smaller than the fixed part */
    assert_int_equal(jager_log_body(l, &body, &blen, &a, &e), JAGER_E_FORMAT);
    l->h.words = 10;
    l->h.type = JAGER_EV_SPAN;
    assert_int_equal(jager_log_body(l, &body, &blen, &a, &e), JAGER_E_FORMAT);
    assert_int_equal(jager_log_body(NULL, &body, &blen, &a, &e), JAGER_E_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_made_file),
        cmocka_unit_test(test_forward_compatible),
        cmocka_unit_test(test_bad_preambles),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_bad_tables),
        cmocka_unit_test(test_frame_level_errors),
        cmocka_unit_test(test_tables_hand_made),
        cmocka_unit_test(test_paths_hand_made),
        cmocka_unit_test(test_attr_next),
        cmocka_unit_test(test_log_body),
        cmocka_unit_test(test_packed_spans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
