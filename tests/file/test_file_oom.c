/* Out of memory, in turn at every allocation of the reader (and of the writer's sink
 * while recording): nothing crashes, errors say JAGER_E_NOMEM, and what succeeds is
 * complete. Allocations are failed through -Wl,--wrap (malloc, calloc, realloc) only
 * while armed, so cmocka and the test itself are unaffected. Leaks on the error paths
 * show up in the ASan and valgrind runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_fixture.h"
#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);

static long countdown = -1; /* -1: never fail; else fail when it reaches 0 */
static long failures;

static int should_fail(void)
{
    if (countdown < 0) return 0;
    if (countdown-- == 0) {
        failures++;
        return 1;
    }
    return 0;
}
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }

static void test_reader_every_allocation(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    fx_expect ex;
    assert_int_equal(fx_record(path, 2, 20, &ex), 0);
    size_t size;
    uint8_t *data = tu_read_file(path, &size);
    assert_non_null(data);
    uint64_t total = 0;
    for (int t = 0; t < 512; t++) total += ex.by_type[t];

    long k;
    for (k = 0;; k++) {
        failures = 0;
        countdown = k;
        jager_reader *r = NULL;
        jager_status st = jager_reader_open_memory(data, size, &r);
        uint64_t n = 0;
        int rc = st;
        if (st == JAGER_OK) {
            rc = fx_drain(r, NULL, &n);
            if (rc == 0) rc = jager_reader_load_tables(r);
            if (rc == 0) rc = fx_drain(r, NULL, &n);
        }
        long failed = failures;
        countdown = -1;
        if (st == JAGER_OK) jager_reader_close(r);
        if (!failed) { /* every allocation of a full read has been failed once */
            assert_int_equal(rc, 0);
            assert_int_equal(n, total);
            break;
        }
        assert_true(rc == 0 || rc == JAGER_E_NOMEM);
        if (rc == 0) assert_int_equal(n, total); /* a failure it could absorb (a cache) */
    }
    print_message("reader: %ld allocation points failed in turn\n", k);
    assert_true(k > 5);

    /* the same through a file */
    for (k = 0;; k++) {
        failures = 0;
        countdown = k;
        jager_reader *r = NULL;
        jager_status st = jager_reader_open(path, &r);
        uint64_t n = 0;
        int rc = st;
        if (st == JAGER_OK) rc = fx_drain(r, NULL, &n);
        long failed = failures;
        countdown = -1;
        if (st == JAGER_OK) jager_reader_close(r);
        if (!failed) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_true(rc == 0 || rc == JAGER_E_NOMEM);
    }
    free(data);
    unlink(path);
}

/* The sink under allocation failures while recording: every failure either loses the
 * batch (counted as dropped) or is absorbed; the file stays readable. */
static void test_writer_allocation_failures(void **state)
{
    (void)state;
    for (long k = 0; k < 40; k += 3) {
        const char *path = tu_tmp_path(".jgr");
        jager_config c = tu_config(0);
        c.output = path;
        assert_int_equal(jager_init(&c), JAGER_OK);
        jager_site s = jager_site_register("oom", NULL, 0);
        for (int i = 0; i < 200; i++) jager_span_end(jager_span_begin(s));
        countdown = k; /* the collector's next allocations fail, one of them */
        jager_flush();
        countdown = -1;
        for (int i = 0; i < 200; i++) jager_span_end(jager_span_begin(s));
        jager_stat st = {.struct_size = sizeof st};
        jager_flush();
        jager_stats(&st);
        jager_shutdown();
        jager_reader *r;
        assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
        uint64_t by_type[512] = {0}, n = 0;
        jager_event ev;
        int rc;
        uint32_t last_id = 0;
        while ((rc = jager_reader_next(r, &ev)) > 0) {
            by_type[ev.type < 512 ? ev.type : 0]++;
            n++;
            if (ev.type != JAGER_EV_SPAN) continue;
            uint32_t id = ((const jager_rec_span *)ev.rec)->span_id;
            assert_true(id > last_id); /* the thread's order survives the failures */
            last_id = id;
        }
        assert_true(rc == 0 || rc == JAGER_E_TRUNCATED);
        assert_true(by_type[JAGER_EV_SPAN] <= 400);
        /* what reached the file plus what the core counted as lost is what was recorded */
        assert_true(by_type[JAGER_EV_SPAN] + st.dropped[JAGER_DROP_SINK] >= 400);
        jager_reader_close(r);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_every_allocation),
        cmocka_unit_test(test_writer_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
