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

#include <stdatomic.h>

#include "file_fixture.h"
#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);

/* -1: never fail; else fail when it reaches 0. Atomic: the collector thread allocates too
 * (it may wake by itself, at half a ring, while the test sets the countdown). */
static _Atomic long countdown = -1;
static _Atomic long failures;

static int should_fail(void)
{
    long c = atomic_load(&countdown);
    while (c >= 0) {
        if (atomic_compare_exchange_weak(&countdown, &c, c - 1)) {
            if (c != 0) return 0;
            atomic_fetch_add(&failures, 1);
            return 1;
        }
    }
    return 0;
}
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
/* The next realloc on this thread fails (the span stack's growth, which only the owning
 * thread does, so no other thread's allocation can take the failure). */
static __thread int fail_realloc_here;
void *__wrap_realloc(void *p, size_t n)
{
    if (fail_realloc_here) {
        fail_realloc_here = 0;
        return NULL;
    }
    return should_fail() ? NULL : __real_realloc(p, n);
}

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

/* The overflow stack of spans deeper than 128 cannot grow (issue 16 item 7): the spans
 * from there up are recorded honestly — parent 0, counted in the call paths' overflow
 * bucket — the 128 below keep their exact chain, nothing is lost, and once the stack is
 * back below the hole it grows again and deep spans are exact. */
static void test_deep_stack_without_memory(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 22);
    c.output = path;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site s = jager_site_register("oom.deep", "o.c", 1);
    enum { FIXED = 128, OFF = 11, AGAIN = 200 };
    static jager_span open[FIXED + AGAIN];
    for (int d = 0; d < FIXED; d++) open[d] = jager_span_begin(s);
    fail_realloc_here = 1; /* the first span past the fixed stack finds no memory */
    for (int d = FIXED; d < FIXED + OFF; d++) open[d] = jager_span_begin(s);
    assert_int_equal(fail_realloc_here, 0);
    for (int d = FIXED + OFF - 1; d >= FIXED; d--) jager_span_end(open[d]);
    for (int d = FIXED; d < FIXED + AGAIN; d++) open[d] = jager_span_begin(s); /* grows now */
    for (int d = FIXED + AGAIN - 1; d >= 0; d--) jager_span_end(open[d]);
    jager_stat st = {.struct_size = sizeof st};
    jager_shutdown();
    assert_int_equal(jager_stats(&st), JAGER_OK);
    assert_int_equal(st.spans_total, FIXED + OFF + AGAIN);
    assert_int_equal(st.events_dropped, 0);
    assert_int_equal(st.spans_cross_thread, 0);

    jager_reader *r;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    static uint32_t parent_of[FIXED + OFF + AGAIN + 2];
    jager_event ev;
    uint32_t first = open[0].id;
    while (jager_reader_next(r, &ev) > 0) {
        if (ev.type != JAGER_EV_SPAN) continue;
        const jager_rec_span *sp = (const jager_rec_span *)ev.rec;
        uint32_t k = sp->span_id - first;
        assert_true(k < FIXED + OFF + AGAIN);
        parent_of[k] = sp->parent_id + 1; /* +1: 0 means "not seen" */
    }
    /* ids: 0..127 fixed, 128..138 off the stack, 139..338 the second deep run */
    for (int k = 0; k < FIXED; k++) assert_int_equal(parent_of[k] - 1, k ? first + (uint32_t)k - 1 : 0);
    for (int k = FIXED; k < FIXED + OFF; k++) assert_int_equal(parent_of[k] - 1, 0); /* parent unknown */
    for (int k = FIXED + OFF; k < FIXED + OFF + AGAIN; k++)
        assert_int_equal(parent_of[k] - 1, k == FIXED + OFF ? first + FIXED - 1 : first + (uint32_t)k - 1);
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    uint64_t overflow = 0, calls = 0;
    for (size_t i = 0; i < jager_reader_path_count(r); i++) {
        jager_path_stat p = {.struct_size = sizeof p};
        assert_int_equal(jager_reader_path(r, i, &p), JAGER_OK);
        if (!p.site) overflow += p.calls;
        calls += p.calls;
    }
    assert_int_equal(overflow, OFF);
    assert_int_equal(calls, FIXED + OFF + AGAIN);
    jager_reader_close(r);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_every_allocation),
        cmocka_unit_test(test_writer_allocation_failures),
        cmocka_unit_test(test_deep_stack_without_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
