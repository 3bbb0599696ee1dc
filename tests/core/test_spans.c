/* Spans: nesting and parents, durations against nanosleep, exact aggregates, sampling,
 * filtering, percentiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "memsink.h"
#include "testutil.h"

static memsink *start(jager_config *c)
{
    jager_sink s;
    memsink *m = memsink_new(&s);
    assert_non_null(m);
    assert_int_equal(jager_sink_add(&s), JAGER_OK);
    assert_int_equal(jager_init(c), JAGER_OK);
    return m;
}

static const jager_rec_span *nth_span(const memsink *m, size_t k)
{
    for (size_t i = 0, seen = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == JAGER_EV_SPAN && seen++ == k) return (const jager_rec_span *)r.rec;
    }
    return NULL;
}

static void test_inert_before_init(void **state)
{
    (void)state;
    jager_site s = jager_site_register("before", __FILE__, __LINE__);
    assert_true(s > 0);
    jager_span sp = jager_span_begin(s);
    assert_int_equal(sp.site, 0);
    jager_span_end(sp);
    jager_log(JAGER_SEV_INFO, "nothing", NULL, 0);
    assert_int_equal(jager_is_enabled(), 0);
    assert_int_equal(jager_flush(), JAGER_E_STATE);
    jager_shutdown(); /* no-op */
}

static void test_site_register_idempotent(void **state)
{
    (void)state;
    jager_site a = jager_site_register("solve", "a.c", 10);
    jager_site b = jager_site_register("solve", "a.c", 10);
    jager_site c = jager_site_register("solve", "a.c", 11);
    jager_site d = jager_site_register("solve", NULL, 10);
    assert_int_equal(a, b);
    assert_int_not_equal(a, c);
    assert_int_not_equal(a, d);
    assert_int_equal(jager_site_register("", "a.c", 1), 0);
    assert_int_equal(jager_site_register(NULL, "a.c", 1), 0);
}

static void test_nesting_and_parents(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    memsink *m = start(&c);
    jager_site outer = jager_site_register("outer", __FILE__, __LINE__);
    jager_site inner = jager_site_register("inner", __FILE__, __LINE__);
    jager_span a = jager_span_begin(outer);
    jager_span b = jager_span_begin(inner);
    jager_span b2 = jager_span_begin(inner);
    jager_span_end(b2);
    jager_span_end(b);
    jager_span c2 = jager_span_begin(inner);
    jager_span_end(c2);
    jager_span_end(a);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 0, 0), 4);
    const jager_rec_span *s0 = nth_span(m, 0), *s1 = nth_span(m, 1), *s2 = nth_span(m, 2), *s3 = nth_span(m, 3);
    /* end order: b2, b, c2, a */
    assert_int_equal(s0->span_id, b2.id);
    assert_int_equal(s0->parent_id, b.id);
    assert_int_equal(s1->span_id, b.id);
    assert_int_equal(s1->parent_id, a.id);
    assert_int_equal(s2->span_id, c2.id);
    assert_int_equal(s2->parent_id, a.id);
    assert_int_equal(s3->span_id, a.id);
    assert_int_equal(s3->parent_id, 0);
    assert_int_equal(s3->h.aux, outer);
    assert_true(s3->start_ns <= s1->start_ns && s1->end_ns <= s3->end_ns);
    memsink_free(m);
}

/* Spans that end out of order (two Julia tasks interleaved on one thread, overlapping
 * regions): each keeps its own entry, parents stay those of the stack at the end, and
 * the stack is empty afterwards. */
static void test_out_of_order_ends(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    memsink *m = start(&c);
    jager_site s = jager_site_register("interleaved", __FILE__, __LINE__);
    jager_span root = jager_span_begin(s);
    jager_span x = jager_span_begin(s);   /* task A */
    jager_span y = jager_span_begin(s);   /* task B, interleaved */
    jager_span y2 = jager_span_begin(s);  /* inside y */
    jager_span_end(x);                    /* A ends first: y and y2 stay open */
    jager_span_end(y2);
    jager_span_end(y);
    jager_span_end(root);
    jager_span after = jager_span_begin(s);
    jager_span_end(after);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 0, 0), 5);
    const jager_rec_span *ex = nth_span(m, 0), *ey2 = nth_span(m, 1), *ey = nth_span(m, 2), *er = nth_span(m, 3),
                         *ea = nth_span(m, 4);
    assert_int_equal(ex->span_id, x.id);
    assert_int_equal(ex->parent_id, root.id);
    assert_int_equal(ey2->span_id, y2.id);
    assert_int_equal(ey2->parent_id, y.id);
    assert_int_equal(ey->span_id, y.id);
    assert_int_equal(ey->parent_id, root.id); /* x's entry was taken out from under it */
    assert_int_equal(er->span_id, root.id);
    assert_int_equal(er->parent_id, 0);
    assert_int_equal(ea->parent_id, 0);       /* nothing left open */
    memsink_free(m);
}

/* jager_task_set: two tasks interleaved on one thread are parented per task (a span's
 * parent is the innermost open span its own task began), a log record names its task's
 * span, task records are written only at changes, and a span ended on a thread that did
 * not begin it (a migrated task) leaves that thread's open spans alone. */
static void test_task_parents(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    memsink *m = start(&c);
    jager_site s = jager_site_register("tasks", __FILE__, __LINE__);
    jager_task_set(1);
    jager_task_set(1);                    /* no change: no record */
    jager_span a1 = jager_span_begin(s);
    jager_task_set(2);
    jager_span b1 = jager_span_begin(s);
    jager_task_set(1);
    jager_span a2 = jager_span_begin(s);  /* under a1, not b1 */
    jager_site cs = 0;
    assert_int_equal(jager_span_current(&cs), a2.id);
    assert_int_equal(cs, s);
    jager_task_set(2);
    assert_int_equal(jager_span_current(NULL), b1.id);
    jager_log(JAGER_SEV_INFO, "in b1", NULL, 0);
    jager_span b2 = jager_span_begin(s);  /* under b1, not a2 */
    jager_span_end(b2);
    jager_task_set(1);
    jager_span_end(a2);
    jager_span_end(a1);
    assert_int_equal(jager_task_current(), 1);
    jager_task_set(2);
    jager_span_end(b1);
    jager_span foreign = {b1.start_ns, s, 4242}; /* begun elsewhere */
    jager_span c1 = jager_span_begin(s);
    jager_span_end(foreign);
    jager_span c2 = jager_span_begin(s);
    jager_span_end(c2);
    jager_span_end(c1);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_TASK, 0, 0), 6); /* 1 2 1 2 1 2 */
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 0, 0), 7);
    const jager_rec_span *eb2 = nth_span(m, 0), *ea2 = nth_span(m, 1), *ea1 = nth_span(m, 2), *eb1 = nth_span(m, 3),
                         *ef = nth_span(m, 4), *ec2 = nth_span(m, 5), *ec1 = nth_span(m, 6);
    assert_int_equal(eb2->span_id, b2.id);
    assert_int_equal(eb2->parent_id, b1.id);
    assert_int_equal(ea2->parent_id, a1.id);
    assert_int_equal(ea1->parent_id, 0);
    assert_int_equal(eb1->parent_id, 0);
    assert_int_equal(ef->span_id, c1.id + 1); /* a fresh id of this thread's (4242 may name one of its own) */
    assert_int_equal(ef->h.aux, s);
    assert_int_equal(ef->parent_id, 0);
    assert_int_equal(ec2->parent_id, c1.id); /* c1 still open after the foreign end */
    assert_int_equal(ec1->parent_id, 0);
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == JAGER_EV_LOG) assert_int_equal(((const jager_rec_log *)r.rec)->span_id, b1.id);
    }
    memsink_free(m);
}

static void test_duration_against_nanosleep(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    memsink *m = start(&c);
    jager_site s = jager_site_register("sleep", __FILE__, __LINE__);
    const uint64_t want = 3000000; /* 3 ms */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    jager_span sp = jager_span_begin(s);
    tu_sleep_ns(want);
    jager_span_end(sp);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t outer = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec);
    jager_site_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_site_stats(s, &st), JAGER_OK);
    assert_int_equal(st.calls, 1);
    assert_true(st.total_ns >= want);       /* nanosleep never returns early */
    assert_true(st.total_ns <= outer + 20000); /* inside the CLOCK_MONOTONIC bracket, 20 µs slack for calibration error */
    assert_int_equal(st.min_ns, st.total_ns);
    assert_int_equal(st.max_ns, st.total_ns);
    jager_shutdown();
    const jager_rec_span *r = nth_span(m, 0);
    assert_non_null(r);
    assert_int_equal(r->end_ns - r->start_ns, st.total_ns);
    memsink_free(m);
}

static void test_aggregates_and_percentiles(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    memsink *m = start(&c);
    jager_site s = jager_site_register("agg", __FILE__, __LINE__);
    for (int i = 0; i < 1000; i++) {
        jager_span sp = jager_span_begin(s);
        jager_span_end_bytes(sp, 16);
    }
    jager_site_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_site_stats(s, &st), JAGER_OK);
    assert_int_equal(st.calls, 1000);
    assert_int_equal(st.bytes, 16000);
    uint64_t hsum = 0;
    for (int b = 0; b < JAGER_HIST_BUCKETS; b++) hsum += st.hist[b];
    assert_int_equal(hsum, 1000);
    assert_true(st.min_ns <= st.p50_ns && st.p50_ns <= st.p90_ns && st.p90_ns <= st.p99_ns && st.p99_ns <= st.max_ns);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), 1000);
    memsink_free(m);
}

static void test_hist_buckets(void **state)
{
    (void)state;
    assert_int_equal(jg_hist_bucket(0), 0);
    assert_int_equal(jg_hist_bucket(3), 3);
    for (uint64_t ns = 1; ns < 5000000; ns = ns * 3 / 2 + 1) {
        uint32_t b = jg_hist_bucket(ns);
        assert_true(jager_hist_bucket_lower_ns(b) <= ns);
        assert_true(jager_hist_bucket_lower_ns(b + 1) > ns);
    }
    assert_int_equal(jg_hist_bucket(UINT64_MAX), JAGER_HIST_BUCKETS - 1);
}

static void test_sampling_one_in_n(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    c.sample_mode = JAGER_SAMPLE_ONE_IN_N;
    c.sample_n = 10;
    memsink *m = start(&c);
    jager_site s = jager_site_register("sampled", __FILE__, __LINE__);
    for (int i = 0; i < 1005; i++) jager_span_end(jager_span_begin(s));
    jager_site_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_site_stats(s, &st), JAGER_OK);
    assert_int_equal(st.calls, 1005); /* aggregates are exact whatever the sampling */
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), 100);
    memsink_free(m);
}

static void test_sampling_interval(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    c.sample_mode = JAGER_SAMPLE_INTERVAL;
    c.sample_interval_ns = 2000000; /* 2 ms */
    memsink *m = start(&c);
    jager_site s = jager_site_register("interval", __FILE__, __LINE__);
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < 100; k++) jager_span_end(jager_span_begin(s));
        tu_sleep_ns(2500000);
    }
    jager_shutdown();
    /* the first span of each burst is recorded, the rest of the burst falls inside the interval */
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), 5);
    memsink_free(m);
}

static void test_filter(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    c.filter = "solve*,-solve_slow";
    memsink *m = start(&c);
    jager_site keep = jager_site_register("solve_fast", __FILE__, __LINE__);
    jager_site drop1 = jager_site_register("solve_slow", __FILE__, __LINE__);
    jager_site drop2 = jager_site_register("assemble", __FILE__, __LINE__);
    assert_int_not_equal(jager_span_begin(keep).site, 0);
    jager_span x = jager_span_begin(keep);
    jager_span_end(x);
    assert_int_equal(jager_span_begin(drop1).site, 0);
    assert_int_equal(jager_span_begin(drop2).site, 0);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, keep), 1);
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, drop1), 0);
    assert_true(jg_filter_match("a*,b", "b"));
    assert_false(jg_filter_match("a*,b", "c"));
    assert_true(jg_filter_match("-x", "y"));
    assert_false(jg_filter_match("-x", "x"));
    memsink_free(m);
}

/* The fast path records a span with its start still a TSC stamp (an internal record type,
 * JG_EV_SPAN_TSC) that the collector's drain converts: every record a sink sees is a
 * JAGER_EV_SPAN in ns, inside the interval that held the spans, and the durations it
 * carries add up exactly to the site's aggregate total. */
static void test_fast_records_reach_sinks_in_ns(void **state)
{
    (void)state;
    jager_config c = tu_config(4u << 20);
    memsink *m = start(&c);
    jager_site s = jager_site_register("fast.ns", __FILE__, __LINE__);
    enum { N = 5000 };
    uint64_t before = jager_now_ns();
    volatile double x = 1.0;
    for (int i = 0; i < N; i++) {
        jager_span sp = jager_span_begin(s);
        x = x * 1.0000001 + 1e-9;
        jager_span_end(sp);
    }
    uint64_t after = jager_now_ns();
    assert_int_equal(jager_flush(), JAGER_OK);
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(s, &ss), JAGER_OK);
    jager_shutdown();
    assert_int_equal(ss.calls, N);
    assert_int_equal(memsink_count(m, JG_EV_SPAN_TSC, 0, 0), 0);
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), N);
    uint64_t sum = 0, prev_start = 0;
    for (size_t i = 0, k = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type != JAGER_EV_SPAN || r.rec->aux != s) continue;
        const jager_rec_span *sp = (const jager_rec_span *)r.rec;
        assert_true(sp->start_ns >= before);
        assert_true(sp->end_ns >= sp->start_ns);
        assert_true(sp->end_ns <= after + 1); /* the duration rounds down, the clock read may round up by 1 */
        assert_true(sp->start_ns >= prev_start); /* one thread: starts in order */
        prev_start = sp->start_ns;
        sum += sp->end_ns - sp->start_ns;
        k++;
    }
    assert_int_equal(sum, ss.total_ns);
    memsink_free(m);
}

static void test_scoped_macro(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    memsink *m = start(&c);
    for (int i = 0; i < 3; i++) {
        JAGER_SPAN("scoped");
    }
    jager_shutdown();
    jager_site s = jager_site_register("scoped", __FILE__, 0);
    (void)s;
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 0, 0), 3);
    memsink_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inert_before_init),
        cmocka_unit_test(test_site_register_idempotent),
        cmocka_unit_test(test_nesting_and_parents),
        cmocka_unit_test(test_out_of_order_ends),
        cmocka_unit_test(test_task_parents),
        cmocka_unit_test(test_duration_against_nanosleep),
        cmocka_unit_test(test_aggregates_and_percentiles),
        cmocka_unit_test(test_hist_buckets),
        cmocka_unit_test(test_sampling_one_in_n),
        cmocka_unit_test(test_sampling_interval),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_scoped_macro),
        cmocka_unit_test(test_fast_records_reach_sinks_in_ns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
