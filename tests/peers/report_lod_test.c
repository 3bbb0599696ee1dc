/* The report's timeline reduction (tools/report/report_timeline.c): nesting depths from
 * containment, the exact-span budget, merged blocks that never overlap exact spans,
 * counter binning and escaping of the JSON it writes. Events are built by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_timeline.h"

static void add_span(rt_data *d, uint32_t thread, uint32_t site, uint64_t start, uint64_t end)
{
    jager_rec_span s = {.h = {JAGER_EV_SPAN, sizeof(jager_rec_span) / 8, site}, .start_ns = start, .end_ns = end};
    jager_event ev = {.rec = &s.h, .thread = thread, .type = JAGER_EV_SPAN, .time_ns = start, .end_ns = end};
    assert_int_equal(rt_add(d, &ev), 0);
}

static char *to_json(const rt_data *d, uint64_t t0)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(rt_write_json(d, f, t0, 0), 0);
    fclose(f);
    return buf;
}

/* root [100,200] ⊃ a [110,150] ⊃ b [120,130]; a2 [160,190]; spans arrive in end order. */
static void depths_follow_nesting(void **state)
{
    (void)state;
    rt_data *d = rt_new(NULL, NULL);
    assert_non_null(d);
    add_span(d, 1, 3, 120, 130);
    add_span(d, 1, 2, 110, 150);
    add_span(d, 1, 2, 160, 190);
    add_span(d, 1, 1, 100, 200);
    assert_int_equal(rt_finish(d), 0);
    assert_int_equal(rt_check(d), 0);
    rt_summary s;
    rt_get_summary(d, &s);
    assert_int_equal(s.spans, 4);
    assert_int_equal(s.raw, 4);
    assert_int_equal(s.merged_spans, 0);
    char *j = to_json(d, 100);
    /* depth 0: root at 0 (relative) lasting 100; depth 1: a at 10, a2 50 later; depth 2: b at 20 */
    assert_non_null(strstr(j, "\"rows\":[{\"s\":[0],\"d\":[100],\"k\":[1]},{\"s\":[10,50],\"d\":[40,30],\"k\":[2,2]},{\"s\":[20],\"d\":[10],\"k\":[3]}]"));
    free(j);
    rt_free(d);
}

/* 20000 short spans and 50 long ones at depth 0 with a budget of 50 exact spans. */
static void budget_merges_short_spans(void **state)
{
    (void)state;
    rt_opts o = {.max_spans = 50, .max_blocks = 400};
    rt_data *d = rt_new(NULL, &o);
    assert_non_null(d);
    uint64_t t = 1000, n = 0;
    for (int i = 0; i < 50; i++) {
        add_span(d, 1, 1, t, t + 100000); /* long */
        t += 100010;
        n++;
        for (int k = 0; k < 400; k++) {
            add_span(d, 2 + (k & 1), 2, t, t + 10 + (uint64_t)(k % 5)); /* short, two threads */
            add_span(d, 1, 3, t, t + 10);
            t += 25;
            n += 2;
        }
    }
    assert_int_equal(rt_finish(d), 0);
    assert_int_equal(rt_check(d), 0);
    rt_summary s;
    rt_get_summary(d, &s);
    assert_int_equal(s.spans, n);
    assert_int_equal(s.raw + s.merged_spans, n);
    assert_int_equal(s.duration_threshold_ns, 14); /* the 50 long spans are the only ones above it */
    assert_true(s.raw >= 50 && s.raw < 50 + s.blocks + 1);
    assert_true(s.blocks > 0);
    assert_true(s.blocks <= 3 * 400 + 2 * 50); /* rows × run/quantum, plus one per exact span */
    assert_true(s.merged_spans > 19000);
    rt_free(d);
}

/* 100 long parents, each with 10 short children: the children merge per parent, never
 * across parents, even though the gaps between parents are below the quantum. */
static void blocks_stay_inside_parents(void **state)
{
    (void)state;
    rt_opts o = {.max_spans = 100, .max_blocks = 10};
    rt_data *d = rt_new(NULL, &o);
    uint64_t t = 1000;
    for (int p = 0; p < 100; p++) {
        for (int c = 0; c < 10; c++) add_span(d, 1, 2, t + 10 + (uint64_t)c * 50, t + 40 + (uint64_t)c * 50);
        add_span(d, 1, 1, t, t + 1000);
        t += 1005;
    }
    assert_int_equal(rt_finish(d), 0);
    assert_int_equal(rt_check(d), 0);
    rt_summary s;
    rt_get_summary(d, &s);
    assert_int_equal(s.raw, 100);
    assert_int_equal(s.merged_spans, 1000);
    assert_int_equal(s.blocks, 100);
    rt_free(d);
}

/* A span nested deeper than drawn is counted, not drawn. */
static void too_deep_is_counted(void **state)
{
    (void)state;
    rt_data *d = rt_new(NULL, NULL);
    for (uint64_t k = 0; k < RT_MAX_DEPTH + 3; k++) add_span(d, 1, 1, 1000 + k, 100000 - k);
    assert_int_equal(rt_finish(d), 0);
    assert_int_equal(rt_check(d), 0);
    rt_summary s;
    rt_get_summary(d, &s);
    assert_int_equal(s.too_deep, 3);
    assert_int_equal(s.raw, RT_MAX_DEPTH);
    rt_free(d);
}

/* Past max_kept the timeline stops holding spans and counts them instead. */
static void memory_cap_counts_the_rest(void **state)
{
    (void)state;
    rt_opts o = {.max_kept = 100};
    rt_data *d = rt_new(NULL, &o);
    for (uint64_t k = 0; k < 150; k++) add_span(d, 1 + (uint32_t)(k & 1), 1, 1000 + k * 10, 1005 + k * 10);
    assert_int_equal(rt_finish(d), 0);
    assert_int_equal(rt_check(d), 0);
    rt_summary s;
    rt_get_summary(d, &s);
    assert_int_equal(s.spans, 100);
    assert_int_equal(s.not_kept, 50);
    rt_free(d);
}

static void add_log(rt_data *d, uint32_t thread, uint64_t t, int sev, const char *body)
{
    uint8_t buf[512] __attribute__((aligned(8)));
    memset(buf, 0, sizeof buf);
    jager_rec_log *lg = (jager_rec_log *)buf;
    size_t n = strlen(body), words = (sizeof *lg + n + 7) / 8;
    lg->h = (jager_record){JAGER_EV_LOG, (uint16_t)words, (uint32_t)sev};
    lg->time_ns = t;
    lg->body_len = (uint32_t)n;
    memcpy(buf + sizeof *lg, body, n);
    jager_event ev = {.rec = &lg->h, .thread = thread, .type = JAGER_EV_LOG, .time_ns = t, .end_ns = t};
    assert_int_equal(rt_add(d, &ev), 0);
}

static void add_counter(rt_data *d, uint32_t thread, uint32_t id, uint64_t t, double v)
{
    jager_rec_counter c = {.h = {JAGER_EV_COUNTER, sizeof(jager_rec_counter) / 8, id}, .time_ns = t, .value = v};
    jager_event ev = {.rec = &c.h, .thread = thread, .type = JAGER_EV_COUNTER, .time_ns = t, .end_ns = t};
    assert_int_equal(rt_add(d, &ev), 0);
}

/* Log bodies are escaped (no raw '<' reaches the page) and deduplicated; long counter
 * series are binned with a range. */
static void logs_and_counters(void **state)
{
    (void)state;
    rt_opts o = {.counter_bins = 100};
    rt_data *d = rt_new(NULL, &o);
    add_log(d, 1, 500, 17, "</script><script>window.__pwned=2</script>");
    add_log(d, 1, 600, 9, "</script><script>window.__pwned=2</script>");
    add_log(d, 2, 700, 9, "line\u2028sep");
    for (int i = 0; i < 1000; i++) add_counter(d, 1, 1, 1000 + (uint64_t)i * 10, (double)(i % 7));
    assert_int_equal(rt_finish(d), 0);
    char *j = to_json(d, 0);
    assert_null(strchr(j, '<'));
    assert_null(strstr(j, "\xE2\x80\xA8"));
    assert_non_null(strstr(j, "\"strings\":[\"\\u003c/script\\u003e\\u003cscript\\u003ewindow.__pwned=2\\u003c/script\\u003e\",\"line\\u2028sep\"]"));
    assert_non_null(strstr(j, "\"logs\":{\"t\":[500,100],\"v\":[17,9],\"m\":[0,0]}"));
    const char *c = strstr(j, "\"counters\":[{");
    assert_non_null(c);
    assert_non_null(strstr(c, "\"lo\":[0,"));
    assert_non_null(strstr(c, "\"hi\":[6,"));
    free(j);
    rt_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(depths_follow_nesting),
        cmocka_unit_test(budget_merges_short_spans),
        cmocka_unit_test(blocks_stay_inside_parents),
        cmocka_unit_test(too_deep_is_counted),
        cmocka_unit_test(memory_cap_counts_the_rest),
        cmocka_unit_test(logs_and_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
