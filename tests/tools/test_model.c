/* test_model.c — the analysis model (tools/model/model.h) on a recording made here with the
 * real core, and on event sequences fed by hand to reach the cases a healthy run does not
 * produce (missing parents, GC overlap to the nanosecond, node caps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hunt_priv.h"
#include "hunt_rules.h"
#include "internal.h"
#include "model.h"
#include "testutil.h"

static const char *rec_path;
static jager_site sA, sB, sC, sD;
static uint16_t t_pause;

static void spin_ns(uint64_t ns)
{
    uint64_t t0 = jager_now_ns();
    while (jager_now_ns() - t0 < ns) {
    }
}

static const jager_field_desc pause_fields[] = {
    {"duration_ns", JAGER_FIELD_DURATION_NS, 0}, {"requested", JAGER_FIELD_U64, 0},
    {"full", JAGER_FIELD_BOOL, 0},               {"allocd_bytes", JAGER_FIELD_BYTES, 0},
    {"freed_bytes", JAGER_FIELD_BYTES, 0},       {"live_bytes", JAGER_FIELD_BYTES, 0},
    {"stack", JAGER_FIELD_STACK, 0},
};

/* A{ B{C C} B{C} D } twice; C ends with 100 bytes; the 2nd B of each A fails once. */
static int make_recording(void **state)
{
    (void)state;
    rec_path = strdup(tu_tmp_path(".jgr"));
    jager_config cfg = tu_config(0);
    cfg.output = rec_path;
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    assert_int_equal(jg_type_register("gc.pause", pause_fields, 7, 0, &t_pause), JAGER_OK);
    sA = jager_site_register("A", "m.c", 1);
    sB = jager_site_register("B", "m.c", 2);
    sC = jager_site_register("C", "m.c", 3);
    sD = jager_site_register("D", "m.c", 4);
    for (int r = 0; r < 2; r++) {
        jager_span a = jager_span_begin(sA);
        for (int b = 0; b < 2; b++) {
            jager_span sb = jager_span_begin(sB);
            for (int c = 0; c < 2 - b; c++) {
                jager_span sc = jager_span_begin(sC);
                spin_ns(20000);
                jager_span_end_bytes(sc, 100);
            }
            if (b == 1) jager_span_error(sb, "bad\x1b[31m thing");
            jager_span_end(sb);
        }
        jager_span d = jager_span_begin(sD);
        spin_ns(10000);
        jager_span_end(d);
        jager_span_end(a);
    }
    jager_shutdown();
    return 0;
}

static int drop_recording(void **state)
{
    (void)state;
    remove(rec_path);
    free((void *)rec_path);
    return 0;
}

static uint32_t child(const jm_tree *t, uint32_t parent, uint32_t site)
{
    for (uint32_t c = t->nodes[parent].first_child; c != JM_NONE; c = t->nodes[c].next_sibling)
        if (t->nodes[c].site == site) return c;
    return JM_NONE;
}

static void test_nest_tree(void **state)
{
    (void)state;
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(rec_path, &r), JAGER_OK);
    jm_model *m = NULL;
    int rc = -99;
    assert_int_equal(jm_model_build(r, NULL, &m, &rc), JAGER_OK);
    assert_int_equal(rc, 0);
    const jm_tree *t = &m->merged;
    uint32_t a = child(t, 0, sA);
    assert_int_not_equal(a, JM_NONE);
    assert_int_equal(t->nodes[a].calls, 2);
    uint32_t b = child(t, a, sB), d = child(t, a, sD);
    assert_int_not_equal(b, JM_NONE);
    assert_int_not_equal(d, JM_NONE);
    assert_int_equal(t->nodes[b].calls, 4);
    assert_int_equal(t->nodes[d].calls, 2);
    assert_int_equal(t->nodes[b].errors, 2);
    assert_int_equal(t->nodes[a].errors, 0);
    uint32_t c = child(t, b, sC);
    assert_int_not_equal(c, JM_NONE);
    assert_int_equal(t->nodes[c].calls, 6);
    assert_int_equal(t->nodes[c].bytes, 600);
    assert_int_equal(child(t, a, sC), JM_NONE); /* C only ever ran inside B */
    /* Exclusive = inclusive minus the children's inclusive, at every level. */
    assert_int_equal(t->nodes[a].excl_ns, t->nodes[a].incl_ns - t->nodes[b].incl_ns - t->nodes[d].incl_ns);
    assert_int_equal(t->nodes[b].excl_ns, t->nodes[b].incl_ns - t->nodes[c].incl_ns);
    assert_int_equal(t->nodes[c].excl_ns, t->nodes[c].incl_ns);
    assert_true(t->nodes[c].min_ns >= 20000);
    assert_int_equal(t->nodes[0].incl_ns, t->nodes[a].incl_ns);

    /* Site totals are the core's exact ones, and the tree's events add up to them. */
    const jm_site *sc = jm_site_get(m, sC);
    assert_non_null(sc);
    assert_true(sc->exact);
    assert_int_equal(sc->calls, 6);
    assert_int_equal(sc->total_ns, t->nodes[c].incl_ns);
    assert_int_equal(sc->bytes, 600);
    assert_int_equal(jm_site_get(m, sB)->errors, 2);
    assert_int_equal(jm_site_get(m, sA)->self_ns, t->nodes[a].excl_ns);
    assert_string_equal(jm_site_get(m, sB)->name, "B");
    assert_int_equal(m->nmessages, 1);
    assert_int_equal(m->messages[0].count, 2);
    assert_string_equal(m->messages[0].text, "bad\x1b[31m thing");
    assert_int_equal(m->spans, 14);
    assert_int_equal(m->span_errors, 2);
    assert_true(m->have_stats);
    assert_int_equal(m->stats.spans_total, 14);
    assert_int_equal(m->dropped, 0);
    assert_int_equal(m->nthreads, 1);
    jm_model_free(m);
    jager_reader_close(r);
}

/* ---- hand-fed events ---- */

static jm_model *fresh_model(jager_reader **r, const jm_options *o)
{
    assert_int_equal(jager_reader_open(rec_path, r), JAGER_OK);
    /* Read to the end so every table is known, then feed our own events. */
    jager_event ev;
    while (jager_reader_next(*r, &ev) > 0) {
    }
    jm_model *m = NULL;
    jm_options own;
    if (!o) { /* the events fed are ours, not the file's: no exact paths from it */
        jm_options_default(&own);
        own.events_only = 1;
        o = &own;
    }
    assert_int_equal(jm_model_new(*r, o, &m), JAGER_OK);
    return m;
}

static void feed_span(jm_model *m, uint32_t thread, uint32_t site, uint32_t id, uint32_t parent, uint64_t start,
                      uint64_t end)
{
    jager_rec_span s = {{JAGER_EV_SPAN, sizeof(jager_rec_span) / 8, site}, start, end, id, parent, 0};
    jager_event ev = {.rec = &s.h, .thread = thread, .type = JAGER_EV_SPAN, .time_ns = start, .end_ns = end};
    assert_int_equal(jm_model_add(m, &ev), JAGER_OK);
}

static void feed_pause(jm_model *m, uint32_t thread, uint64_t start, uint64_t dur)
{
    uint64_t buf[2 + 7] = {0};
    jager_rec_plugin *p = (jager_rec_plugin *)buf;
    p->h.type = t_pause;
    p->h.words = 9;
    p->time_ns = start;
    p->fields[0] = dur;
    jager_event ev = {.rec = &p->h, .thread = thread, .type = t_pause, .time_ns = start, .end_ns = start};
    assert_int_equal(jm_model_add(m, &ev), JAGER_OK);
}

static void test_missing_parent(void **state)
{
    (void)state;
    jager_reader *r;
    jm_model *m = fresh_model(&r, NULL);
    /* A(1) { B(2, never recorded) { C(3) } D(4) } */
    feed_span(m, 1, sC, 3, 2, 1000, 2000);
    feed_span(m, 1, sD, 4, 1, 2500, 2600);
    feed_span(m, 1, sA, 1, 0, 900, 3000);
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    const jm_tree *t = &m->merged;
    uint32_t a = child(t, 0, sA);
    assert_int_not_equal(a, JM_NONE);
    uint32_t u = child(t, a, JM_SITE_UNRECORDED);
    assert_int_not_equal(u, JM_NONE);
    assert_int_equal(t->nodes[u].incl_ns, 1000);
    uint32_t c = child(t, u, sC);
    assert_int_not_equal(c, JM_NONE);
    assert_int_equal(t->nodes[c].calls, 1);
    assert_int_not_equal(child(t, a, sD), JM_NONE);
    assert_int_equal(t->nodes[a].excl_ns, 2100 - 1000 - 100);
    assert_int_equal(t->unrecorded, 1);
    assert_string_equal(jm_site_name(m, JM_SITE_UNRECORDED), "(unrecorded)");
    jm_model_free(m);
    jager_reader_close(r);
}

static void feed_span_x(jm_model *m, uint32_t thread, uint32_t site, uint32_t id, uint32_t parent, uint64_t start,
                        uint64_t end, uint32_t begin_thread, uint32_t parent_thread)
{
    jager_rec_span_x s = {{JAGER_EV_SPAN_X, sizeof(jager_rec_span_x) / 8, site}, start, end, id, parent, 0,
                          begin_thread, parent_thread};
    jager_event ev = {.rec = &s.h, .thread = thread, .type = JAGER_EV_SPAN_X, .time_ns = start, .end_ns = end};
    assert_int_equal(jm_model_add(m, &ev), JAGER_OK);
}

/* A span error recorded on \p thread; \p begin_thread other than it: set after the span's
 * task moved there (JAGER_SPAN_REF_MOVED). */
static void feed_error(jm_model *m, uint32_t thread, uint32_t site, uint32_t id, uint32_t begin_thread, uint64_t t)
{
    uint64_t buf[4] = {0};
    jager_rec_span_error *e = (jager_rec_span_error *)buf;
    e->h = (jager_record){JAGER_EV_SPAN_ERROR, 4, site};
    if (begin_thread != thread) e->h.aux |= JAGER_SPAN_REF_MOVED | begin_thread << 22;
    e->time_ns = t;
    e->span_id = id;
    e->msg_len = 3;
    memcpy(e + 1, "bad", 3);
    jager_event ev = {.rec = &e->h, .thread = thread, .type = JAGER_EV_SPAN_ERROR, .time_ns = t, .end_ns = t};
    assert_int_equal(jm_model_add(m, &ev), JAGER_OK);
}

/* Thread 1: A(1) { B(2), which moves to thread 2 and ends there; D(3) of another task, with
 * an error }. On thread 2 B gets an error (thread 1's id 2), and C, thread 2's own span 2,
 * ends plainly first. B's error is B's — not C's, whose id on thread 2 is the same — and B's
 * end takes only its own: D's pending error (a higher id of thread 1) stays D's. */
static void test_moved_span_errors(void **state)
{
    (void)state;
    jager_reader *r;
    jm_model *m = fresh_model(&r, NULL);
    feed_error(m, 1, sD, 3, 1, 300);
    feed_error(m, 2, sB, 2, 1, 700);
    feed_span(m, 2, sC, 2, 0, 1000, 1100);
    feed_span_x(m, 2, sB, 2, 1, 500, 1500, 1, 1);
    feed_span(m, 1, sD, 3, 1, 200, 1700);
    feed_span(m, 1, sA, 1, 0, 100, 2000);
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    assert_int_equal(m->span_errors, 2);
    const jm_tree *t = &m->merged;
    uint32_t a = child(t, 0, sA), c = child(t, 0, sC);
    assert_int_not_equal(a, JM_NONE);
    assert_int_not_equal(c, JM_NONE);
    uint32_t b = child(t, a, sB), d = child(t, a, sD);
    assert_int_not_equal(b, JM_NONE);
    assert_int_not_equal(d, JM_NONE);
    assert_int_equal(t->nodes[b].errors, 1);
    assert_int_equal(t->nodes[d].errors, 1);
    assert_int_equal(t->nodes[c].errors, 0);
    assert_int_equal(t->nodes[a].errors, 0);
    jm_model_free(m);
    jager_reader_close(r);
}

static void test_open_at_end(void **state)
{
    (void)state;
    jager_reader *r;
    jm_model *m = fresh_model(&r, NULL);
    /* The file ends while A(1) is open (a crash): its finished child stays visible. */
    feed_span(m, 2, sB, 2, 1, 100, 400);
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    uint32_t u = child(&m->merged, 0, JM_SITE_UNRECORDED);
    assert_int_not_equal(u, JM_NONE);
    uint32_t b = child(&m->merged, u, sB);
    assert_int_not_equal(b, JM_NONE);
    assert_int_equal(m->merged.nodes[b].incl_ns, 300);
    jm_model_free(m);
    jager_reader_close(r);
}

static void test_gc_overlap(void **state)
{
    (void)state;
    jager_reader *r;
    jm_model *m = fresh_model(&r, NULL);
    /* A [1000, 5000) { B [1500, 2500) }; pauses [1200,1300) [2000,2200) [4900,5100) [6000,6100). */
    feed_pause(m, 1, 1200, 100);
    feed_pause(m, 1, 2000, 200);
    feed_span(m, 1, sB, 2, 1, 1500, 2500);
    feed_pause(m, 1, 4900, 200);
    feed_span(m, 1, sA, 1, 0, 1000, 5000);
    feed_pause(m, 1, 6000, 100);
    feed_pause(m, 2, 1000, 50); /* another thread: never inside thread 1's spans */
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    const jm_tree *t = &m->merged;
    uint32_t a = child(t, 0, sA), b = child(t, a, sB);
    assert_int_equal(t->nodes[b].gc_ns, 200);
    assert_int_equal(t->nodes[b].gc_pauses, 1);
    assert_int_equal(t->nodes[a].gc_ns, 100 + 200 + 100);
    assert_int_equal(t->nodes[a].gc_pauses, 3);
    assert_int_equal(m->gc.pauses, 5);
    assert_int_equal(m->gc.total_ns, 100 + 200 + 200 + 100 + 50);
    assert_int_equal(m->gc.max_ns, 200);
    assert_int_equal(m->gc.unattributed_ns, 100 + 50);
    assert_int_equal(jm_site_get(m, sA)->gc_ns, 400);
    jm_model_free(m);
    jager_reader_close(r);
}

static void test_node_cap(void **state)
{
    (void)state;
    jager_reader *r;
    jm_options o;
    jm_options_default(&o);
    o.max_tree_nodes = 3;
    o.events_only = 1;
    jm_model *m = fresh_model(&r, &o);
    /* 40 top-level spans over 4 sites, then a nest under D: more paths than the cap. */
    uint32_t sites[4] = {sA, sB, sC, sD};
    uint64_t t0 = 1000;
    for (uint32_t i = 0; i < 40; i++, t0 += 100) feed_span(m, 1, sites[i % 4], i + 1, 0, t0, t0 + 50);
    feed_span(m, 1, sA, 42, 41, t0 + 10, t0 + 20);
    feed_span(m, 1, sD, 41, 0, t0, t0 + 50);
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    const jm_tree *t = &m->merged;
    assert_true(t->count <= 2 * 3 + 1);
    uint64_t calls = 0, incl = 0;
    for (uint32_t c = t->nodes[0].first_child; c != JM_NONE; c = t->nodes[c].next_sibling) {
        calls += t->nodes[c].calls;
        incl += t->nodes[c].incl_ns;
    }
    assert_int_equal(calls, 41);
    assert_int_equal(incl, 41 * 50);
    assert_int_not_equal(child(t, 0, JM_SITE_OTHER), JM_NONE);
    assert_true(t->folded_calls > 0);
    jm_model_free(m);
    jager_reader_close(r);
}

static void test_text_fit(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(jm_text_fit(buf, sizeof buf, "plain", 0), 5);
    assert_string_equal(buf, "plain");
    jm_text_fit(buf, sizeof buf, "a\x1b[31mb\n", 0);
    assert_string_equal(buf, "a\\x1b[31mb\\x0a");
    jm_text_fit(buf, sizeof buf, "bad\xff utf", 0);
    assert_string_equal(buf, "bad? utf");
    assert_int_equal(jm_text_fit(buf, sizeof buf, "abcdefghij", 5), 5);
    assert_string_equal(buf, "ab\xE2\x80\xA6ij"); /* cut in the middle, the end kept */
    /* siblings that differ only at the end stay apart (issue 11 item 7) */
    char a[64], b[64];
    assert_int_equal(jm_text_fit(a, sizeof a, "CalcFBHourglassForceForElems.omp", 24), 24);
    assert_int_equal(jm_text_fit(b, sizeof b, "CalcFBHourglassForceForElems.omp_barrier", 24), 24);
    assert_string_equal(a, "CalcFBHourg\xE2\x80\xA6" "ForElems.omp");
    assert_string_equal(b, "CalcFBHourg\xE2\x80\xA6.omp_barrier");
    assert_int_equal(jm_text_fit(buf, sizeof buf, "\xC3\xA4\xC3\xA4\xC3\xA4\xC3\xA4\xC3\xA4x", 4), 4); /* äääääx */
    assert_string_equal(buf, "\xC3\xA4\xE2\x80\xA6\xC3\xA4x");
    assert_int_equal(jm_text_fit(buf, sizeof buf, "abcde", 5), 5);
    assert_string_equal(buf, "abcde");
    assert_int_equal(jm_text_fit(buf, sizeof buf, "ä€x", 0), 3);
    jm_text_fit(buf, 4, "abcdefgh", 0); /* cut to the buffer */
    assert_string_equal(buf, "abc");
}

/* A recording whose ring drops most spans: the trees are the exact call paths, and what
 * the hunt takes as a site's time (hunt_site_time) is the exact outermost time, never
 * scaled above the site's total as event-derived times were. */
static void test_exact_tree_under_drops(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    jager_config cfg = tu_config(4096);
    cfg.output = path;
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    jager_site so = jager_site_register("outer_x", "x.c", 1), si = jager_site_register("inner_x", "x.c", 2);
    for (int i = 0; i < 200; i++) { /* 20000 spans: a 4 KiB ring drops even when the collector is quick */
        jager_span o = jager_span_begin(so);
        for (int k = 0; k < 100; k++) jager_span_end(jager_span_begin(si));
        jager_span_end(o);
    }
    jager_stat st = {.struct_size = sizeof st};
    jager_stats(&st);
    jager_shutdown();
    assert_true(st.events_dropped > 2000);
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    jm_model *m = NULL;
    int rc = -99;
    assert_int_equal(jm_model_build(r, NULL, &m, &rc), JAGER_OK);
    assert_true(m->exact_paths);
    assert_int_equal(m->tree_lost_calls, 0);
    uint32_t o = child(&m->merged, 0, so);
    assert_int_not_equal(o, JM_NONE);
    uint32_t in = child(&m->merged, o, si);
    assert_int_not_equal(in, JM_NONE);
    assert_int_equal(m->merged.nodes[o].calls, 200);
    assert_int_equal(m->merged.nodes[in].calls, 20000);
    const jm_site *s_out = jm_site_get(m, so), *s_in = jm_site_get(m, si);
    assert_int_equal(m->merged.nodes[o].incl_ns, s_out->total_ns);
    assert_int_equal(m->merged.nodes[in].incl_ns, s_in->total_ns);
    assert_int_equal(m->merged.nodes[o].excl_ns, s_out->total_ns - s_in->total_ns);
    assert_true(s_in->ev_calls < 20000); /* the events alone are short */
    assert_true(hunt_site_time(s_out) == (double)s_out->total_ns);
    assert_true(hunt_site_time(s_in) == (double)s_in->total_ns);
    /* the same file read with the events only: short, and flagged */
    jm_model_free(m);
    jager_reader_close(r);
    assert_int_equal(jager_reader_open(path, &r), JAGER_OK);
    jm_options ev;
    jm_options_default(&ev);
    ev.events_only = 1;
    assert_int_equal(jm_model_build(r, &ev, &m, &rc), JAGER_OK);
    assert_false(m->exact_paths);
    assert_true(m->tree_lost_calls > 0);
    jm_model_free(m);
    jager_reader_close(r);
    remove(path);
}

static void test_hunt_quiet_and_ranked(void **state)
{
    (void)state;
    jager_reader *r = NULL;
    assert_int_equal(jager_reader_open(rec_path, &r), JAGER_OK);
    jm_model *m = NULL;
    int rc;
    assert_int_equal(jm_model_build(r, NULL, &m, &rc), JAGER_OK);
    hunt_finding *f = NULL;
    size_t n = 99;
    assert_int_equal(hunt_run(m, NULL, &f, &n), 0);
    /* A tiny steady nest: nothing costs enough to report, and no rule fires. */
    for (size_t i = 0; i < n; i++) fail_msg("unexpected finding: %s", f[i].title);
    hunt_free(f, n);
    jm_model_free(m);
    jager_reader_close(r);
}

/* Hostile or damaged records (that still fit their declared size, as the reader
 * guarantees): the model must count or skip them, never crash, and hunt must run. */
static void test_random_records(void **state)
{
    (void)state;
    jager_reader *r;
    jm_model *m = fresh_model(&r, NULL);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    uint64_t buf[64];
    uint16_t types[] = {JAGER_EV_SPAN, JAGER_EV_LOG, JAGER_EV_COUNTER, JAGER_EV_MARK, JAGER_EV_DROP,
                        JAGER_EV_DIAG, JAGER_EV_SPAN_ATTR, JAGER_EV_SPAN_ERROR, t_pause, 300, 999};
    for (int i = 0; i < 50000; i++) {
        for (size_t k = 0; k < 64; k++) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            buf[k] = seed;
        }
        jager_record *h = (jager_record *)buf;
        h->type = types[buf[1] % (sizeof types / sizeof types[0])];
        h->words = (uint16_t)(1 + buf[2] % 63);
        h->aux = (uint32_t)(buf[3] % 8); /* mostly valid site/counter ids, sometimes not */
        if (buf[4] % 5 == 0) h->aux = (uint32_t)buf[4];
        if (h->type == JAGER_EV_SPAN && h->words >= 5) {
            jager_rec_span *sp = (jager_rec_span *)buf;
            sp->span_id = (uint32_t)(buf[5] % 16);
            sp->parent_id = (uint32_t)(buf[6] % 16);
            sp->start_ns = buf[7] % 100000;
            sp->end_ns = buf[8] % 100000;
        }
        if (h->type == JAGER_EV_SPAN_ERROR && h->words >= 3) ((jager_rec_span_error *)buf)->msg_len = (uint32_t)(buf[9] % 600);
        jager_event ev = {.rec = h, .thread = (uint32_t)(buf[10] % 4), .type = h->type, .time_ns = buf[11] % 100000};
        ev.end_ns = ev.time_ns + buf[12] % 1000;
        assert_int_equal(jm_model_add(m, &ev), JAGER_OK);
    }
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    assert_int_equal(m->events, 50000);
    assert_true(m->malformed > 0);
    hunt_finding *f = NULL;
    size_t n = 0;
    assert_int_equal(hunt_run(m, NULL, &f, &n), 0);
    hunt_free(f, n);
    jm_model_free(m);
    jager_reader_close(r);
}

/* Deep and branching (issue 16 item 7): a 3,000-deep recursion over three sites with
 * leaf siblings at every level, and a recursion of one site under it. The tree built from
 * the events (the only one of a file cut short) equals the exact call paths node for node
 * — calls and inclusive time — and is built in linear time (the spans' pending subtrees
 * move up in place instead of being copied at every level). */
static jager_site deep_sites[4];
static void deep_rec(int d, int depth)
{
    jager_span s = jager_span_begin(deep_sites[d % 3]);
    if (d % 7 == 0) jager_span_end(jager_span_begin(deep_sites[3])); /* a leaf before the child */
    if (d + 1 < depth) deep_rec(d + 1, depth);
    if (d % 5 == 0) jager_span_end(jager_span_begin(deep_sites[3])); /* and one after */
    if (d == depth - 1)
        for (int k = 0; k < 50; k++) jager_span_end(jager_span_begin(deep_sites[0])); /* same site as the recursion */
    jager_span_end(s);
}

static void assert_same_tree(const jm_tree *a, uint32_t na, const jm_tree *b, uint32_t nb, uint64_t *visited)
{
    /* iteratively: (node in a, node in b) pairs */
    uint32_t cap = 1024, n = 0;
    uint32_t *st = malloc(cap * 2 * sizeof *st);
    assert_non_null(st);
    st[n * 2] = na;
    st[n * 2 + 1] = nb;
    n++;
    while (n) {
        n--;
        uint32_t x = st[n * 2], y = st[n * 2 + 1];
        (*visited)++;
        uint32_t kids_a = 0, kids_b = 0;
        for (uint32_t c = b->nodes[y].first_child; c != JM_NONE; c = b->nodes[c].next_sibling) kids_b++;
        for (uint32_t c = a->nodes[x].first_child; c != JM_NONE; c = a->nodes[c].next_sibling) {
            kids_a++;
            uint32_t d = child(b, y, a->nodes[c].site);
            assert_int_not_equal(d, JM_NONE);
            assert_int_equal(a->nodes[c].calls, b->nodes[d].calls);
            assert_int_equal(a->nodes[c].incl_ns, b->nodes[d].incl_ns);
            assert_int_equal(a->nodes[c].depth, b->nodes[d].depth);
            if (n == cap) {
                cap *= 2;
                st = realloc(st, cap * 2 * sizeof *st);
                assert_non_null(st);
            }
            st[n * 2] = c;
            st[n * 2 + 1] = d;
            n++;
        }
        assert_int_equal(kids_a, kids_b);
    }
    free(st);
}

/* A chain far deeper than the node cap (issue 16 item 12: each level past the cap once copied
 * a full tree, cap x depth): its outer levels keep their paths, the deeper ones are folded
 * into one "(other)" below them and counted; every level's time is in the chain's top node. */
static void test_chain_past_cap(void **state)
{
    (void)state;
    jager_reader *r;
    jm_options o;
    jm_options_default(&o);
    o.max_tree_nodes = 64;
    o.events_only = 1;
    jm_model *m = fresh_model(&r, &o);
    uint32_t sites[4] = {sA, sB, sC, sD};
    enum { D = 5000 };
    for (uint32_t k = D; k >= 1; k--) /* innermost first, as a chain is written */
        feed_span(m, 1, sites[k % 4], k, k - 1, 1000 + k, 1000 + 2 * D - k);
    assert_int_equal(jm_model_finish(m), JAGER_OK);
    const jm_tree *t = &m->merged;
    assert_true(t->count <= 2 * 64 + 1);
    uint32_t top = t->nodes[0].first_child;
    assert_int_not_equal(top, JM_NONE);
    assert_int_equal(t->nodes[top].next_sibling, JM_NONE);
    assert_int_equal(t->nodes[top].site, sites[1]);
    assert_int_equal(t->nodes[top].calls, 1);
    assert_int_equal(t->nodes[top].incl_ns, 2 * D - 2);
    /* down the chain: distinct sites level by level, then the fold */
    uint32_t n = top, levels = 1;
    while (t->nodes[n].first_child != JM_NONE && t->nodes[t->nodes[n].first_child].site != JM_SITE_OTHER) {
        uint32_t c = t->nodes[n].first_child;
        assert_int_equal(t->nodes[c].next_sibling, JM_NONE);
        assert_int_equal(t->nodes[c].site, sites[(levels + 1) % 4]);
        n = c;
        levels++;
    }
    assert_true(levels >= 64 / 4 - 2);
    assert_true(levels < D);
    uint32_t fold = t->nodes[n].first_child;
    assert_int_not_equal(fold, JM_NONE);
    assert_int_equal(t->nodes[fold].site, JM_SITE_OTHER);
    /* the fold holds the rest of the chain: its time is the level above's, less that level's own */
    assert_int_equal(t->nodes[fold].incl_ns, t->nodes[n].incl_ns - t->nodes[n].excl_ns);
    assert_true(t->folded_calls > 0);
    jm_model_free(m);
    jager_reader_close(r);
}

static void test_deep_event_tree_equals_paths(void **state)
{
    (void)state;
    const char *path = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 24); /* every span an event */
    c.output = path;
    assert_int_equal(jager_init(&c), JAGER_OK);
    deep_sites[0] = jager_site_register("deep.a", "d.c", 1);
    deep_sites[1] = jager_site_register("deep.b", "d.c", 2);
    deep_sites[2] = jager_site_register("deep.c", "d.c", 3);
    deep_sites[3] = jager_site_register("deep.leaf", "d.c", 4);
    enum { DEPTH = 3000 };
    deep_rec(0, DEPTH);
    deep_rec(0, 40); /* a second, shallow call of the same recursion */
    jager_stat st = {.struct_size = sizeof st};
    jager_shutdown();
    assert_int_equal(jager_stats(&st), JAGER_OK);
    assert_int_equal(st.events_dropped, 0);
    jm_model *exact = NULL, *ev = NULL;
    jager_reader *r1 = NULL, *r2 = NULL;
    int rc;
    assert_int_equal(jager_reader_open(path, &r1), JAGER_OK);
    assert_int_equal(jm_model_build(r1, NULL, &exact, &rc), JAGER_OK);
    assert_true(exact->exact_paths);
    assert_int_equal(jager_reader_open(path, &r2), JAGER_OK);
    jm_options o;
    jm_options_default(&o);
    o.events_only = 1;
    assert_int_equal(jm_model_build(r2, &o, &ev, &rc), JAGER_OK);
    assert_false(ev->exact_paths);
    assert_int_equal(ev->tree_lost_calls, 0);
    uint64_t visited = 0;
    assert_same_tree(&exact->merged, 0, &ev->merged, 0, &visited);
    assert_int_equal(visited, exact->merged.count);
    assert_int_equal(exact->merged.count, ev->merged.count);
    assert_true(exact->merged.count > DEPTH);
    jm_model_free(exact);
    jm_model_free(ev);
    jager_reader_close(r1);
    jager_reader_close(r2);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nest_tree),   cmocka_unit_test(test_missing_parent),
        cmocka_unit_test(test_moved_span_errors),
        cmocka_unit_test(test_open_at_end), cmocka_unit_test(test_gc_overlap),
        cmocka_unit_test(test_node_cap),    cmocka_unit_test(test_text_fit),
        cmocka_unit_test(test_hunt_quiet_and_ranked), cmocka_unit_test(test_random_records),
        cmocka_unit_test(test_exact_tree_under_drops),
        cmocka_unit_test(test_deep_event_tree_equals_paths), cmocka_unit_test(test_chain_past_cap),
    };
    return cmocka_run_group_tests(tests, make_recording, drop_recording);
}
