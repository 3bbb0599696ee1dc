/* Format versions: a file written by the 1.0 release (tests/file/fixtures, committed before
 * the writer changed) still reads, event for event; files of the current writer (1.1,
 * packed span records) read back byte for byte what the rings produced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_fixture.h"
#include "memsink.h"
#include "testutil.h"
#include "jager.h"
#include "jager_reader.h"

static jager_site site_named(jager_reader *r, const char *name)
{
    uint32_t n = jager_reader_site_count(r);
    for (jager_site s = 1; s <= n; s++) { /* n is the largest id */
        const char *nm = NULL, *file = NULL;
        uint32_t line = 0;
        if (jager_reader_site(r, s, &nm, &file, &line) == JAGER_OK && nm && !strcmp(nm, name)) return s;
    }
    return 0;
}

/* tests/file/fixtures/format-1.0.jgr: two threads × 100 × (outer, 3 × (inner, leaf with
 * bytes)), a log and a span error every 25, 20 counter values, a mark (written by the 1.0
 * release; its `jager dump` is format-1.0.dump.jsonl, compared by the file_fixture_dump test). */
static void test_fixture_1_0_reads(void **state)
{
    (void)state;
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(JAGER_FIXTURE_DIR "/format-1.0.jgr", &r), JAGER_OK);
    uint64_t by_type[512] = {0}, n = 0;
    assert_int_equal(fx_drain(r, by_type, &n), 0);
    jager_reader_info info = {.struct_size = sizeof info};
    assert_int_equal(jager_reader_get_info(r, &info), JAGER_OK);
    assert_int_equal(info.format_major, 1);
    assert_int_equal(info.format_minor, 0);
    assert_int_equal(n, 1437);
    assert_int_equal(by_type[JAGER_EV_SPAN], 1400);
    assert_int_equal(by_type[JAGER_EV_LOG], 8);
    assert_int_equal(by_type[JAGER_EV_COUNTER], 20);
    assert_int_equal(by_type[JAGER_EV_MARK], 1);
    assert_int_equal(by_type[JAGER_EV_SPAN_ERROR], 8);
    jager_site outer = site_named(r, "fx.outer"), leaf = site_named(r, "fx.leaf");
    assert_true(outer && leaf);
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_reader_site_stats(r, outer, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 200);
    assert_int_equal(ss.errors, 8);
    assert_int_equal(ss.thinned, 0); /* 1.0 has 9 values per site: the 1.1 ones read as 0 */
    assert_int_equal(ss.dropped, 0);
    assert_int_equal(jager_reader_site_stats(r, leaf, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 600);
    assert_int_equal(ss.bytes, 2 * (100 * 99 / 2 * 8 * 3 + 100 * 3)); /* Σ over i, j of 8i + j, twice */
    jager_reader_close(r);
}

/* ---- 1.1: every record the sinks got, read back from the file, byte for byte ---- */

static jager_site s_outer, s_inner;
static void *rt_worker(void *arg)
{
    long k = (long)arg;
    for (int i = 0; i < 3000; i++) {
        jager_span o = jager_span_begin(s_outer);
        for (int j = 0; j < 3; j++) jager_span_end_bytes(jager_span_begin(s_inner), (uint64_t)(i * j + k));
        if (i % 500 == 0) jager_log(9, "tick", NULL, 0);
        jager_span_end(o);
    }
    return NULL;
}

static void test_packed_roundtrip_equal(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s", tu_tmp_path(".jgr"));
    jager_sink s;
    memsink *m = memsink_new(&s);
    jager_sink_add(&s);
    jager_config c = tu_config(8u << 20);
    c.output = path;
    assert_int_equal(jager_init(&c), JAGER_OK);
    s_outer = jager_site_register("rt.outer", __FILE__, __LINE__);
    s_inner = jager_site_register("rt.inner", __FILE__, __LINE__);
    pthread_t th[3];
    for (long i = 0; i < 3; i++) pthread_create(&th[i], NULL, rt_worker, (void *)i);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    jager_shutdown();

    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    jager_reader_info info = {.struct_size = sizeof info};
    assert_int_equal(jager_reader_get_info(r, &info), JAGER_OK);
    assert_int_equal(info.format_major, 1);
    assert_int_equal(info.format_minor, JAGER_FORMAT_MINOR);
    /* the sink's records per thread, in order (indexed once: memsink_at walks from the
     * start): the file must give the same sequence */
    const jager_record **recs = calloc(m->nrecs + 1, sizeof *recs);
    assert_non_null(recs);
    uint32_t maxt = 0;
    for (size_t i = 0, off = 0; i < m->nrecs; i++) {
        recs[i] = (const jager_record *)(m->data + off);
        off += (size_t)recs[i]->words * 8u;
        if (m->threads[i] > maxt) maxt = m->threads[i];
    }
    size_t *next = calloc(maxt + 1, sizeof *next); /* per thread: index into m of the next match */
    assert_non_null(next);
    jager_event ev;
    uint64_t n = 0, spans = 0;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        assert_true(ev.thread <= maxt);
        size_t i = next[ev.thread];
        while (i < m->nrecs && m->threads[i] != ev.thread) i++;
        assert_true(i < m->nrecs);
        assert_int_equal(ev.rec->words, recs[i]->words);
        assert_memory_equal(ev.rec, recs[i], (size_t)recs[i]->words * 8u);
        next[ev.thread] = i + 1;
        n++;
        spans += ev.type == JAGER_EV_SPAN;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, m->nrecs); /* nothing more, nothing less */
    assert_int_equal(spans, 3 * 3000 * 4);
    free(next);
    free(recs);
    jager_reader_close(r);
    memsink_free(m);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_1_0_reads),
        cmocka_unit_test(test_packed_roundtrip_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
