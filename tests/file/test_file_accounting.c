/* The recorder's accounting and its span stack through the real core and the file (issue
 * 16 items 6 and 7): the identities of docs/configuration.md ("Accounting") exact in
 * overwrite mode with a tiny ring, spans ended on another thread than began them counted
 * and recorded, and 10,000-deep nesting recorded with its exact parent chain, read back
 * as exact call paths, and shown by `jager summary` with no share above 100 %. (A sink
 * that fails beside the file sink: tests/abi, test_failing_plugin_sink_accounting.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jager.h"
#include "jager_plugin.h"
#include "jager_reader.h"
#include "testutil.h"

/* emitted = recorded + every drop before the sinks; written = recorded − pending + reports */
static void assert_identities(const jager_stat *s)
{
    uint64_t before = s->events_recorded;
    for (int i = 0; i < JAGER_DROP_REASONS; i++)
        if (i != JAGER_DROP_SINK) before += s->dropped[i];
    assert_int_equal(s->events_emitted, before);
    assert_int_equal(s->events_written, s->events_recorded - s->events_pending + s->drop_reports);
    uint64_t sum = 0;
    for (int i = 0; i < JAGER_DROP_REASONS; i++) sum += s->dropped[i];
    assert_int_equal(s->events_dropped, sum);
}

typedef struct file_counts {
    uint64_t events, spans_of_site, drop_records, drop_counted[JAGER_DROP_REASONS];
    jager_stat st;
    jager_site_stat ss;
} file_counts;

static file_counts read_counts(const char *file, jager_site site)
{
    file_counts fc;
    memset(&fc, 0, sizeof fc);
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        fc.events++;
        if (ev.type == JAGER_EV_SPAN && ev.rec->aux == site) fc.spans_of_site++;
        if (ev.type == JAGER_EV_DROP) {
            const jager_rec_drop *d = (const jager_rec_drop *)ev.rec;
            fc.drop_records++;
            if (d->h.aux < JAGER_DROP_REASONS) fc.drop_counted[d->h.aux] += d->count;
        }
    }
    assert_int_equal(rc, 0);
    fc.st.struct_size = sizeof fc.st;
    assert_int_equal(jager_reader_stats(r, &fc.st), JAGER_OK);
    fc.ss.struct_size = sizeof fc.ss;
    assert_int_equal(jager_reader_site_stats(r, site, &fc.ss), JAGER_OK);
    jager_reader_close(r);
    return fc;
}

/* Overwrite mode, a 4 KiB ring, 1,000,000 spans: most are evicted before the collector
 * drains them. Each event is recorded or overwritten, never both, and the file holds
 * exactly the recorded ones (before the fix: emitted 1,000,000, recorded 1,000,000,
 * dropped 979,600). */
static void test_overwrite_identities(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(4096);
    c.ring_mode = JAGER_RING_OVERWRITE;
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site site = jager_site_register("acct.overwrite", "a.c", 1);
    enum { N = 1000000 };
    for (int i = 0; i < N; i++) jager_span_end(jager_span_begin(site));
    jager_stat live = {.struct_size = sizeof live};
    assert_int_equal(jager_stats(&live), JAGER_OK);
    assert_identities(&live); /* also before the drain: the thread is quiet */
    jager_shutdown();
    jager_stat s = {.struct_size = sizeof s};
    assert_int_equal(jager_stats(&s), JAGER_OK);
    assert_identities(&s);
    assert_int_equal(s.spans_total, N);
    assert_int_equal(s.events_pending, 0);
    assert_true(s.dropped[JAGER_DROP_OVERWRITTEN] > N / 2); /* a 4 KiB ring keeps ~100 spans */
    assert_int_equal(s.dropped[JAGER_DROP_RING_FULL], 0);
    assert_int_equal(s.dropped[JAGER_DROP_SINK], 0);
    assert_true(s.events_recorded < N / 2);
    /* the site: calls == recorded + thinned + dropped, evicted spans among the dropped */
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(site, &ss), JAGER_OK);
    assert_int_equal(ss.calls, N);
    assert_int_equal(ss.thinned, 0);
    /* the one sink, the file: it took every batch */
    assert_int_equal(s.sinks, 1);
    jager_sink_stat k = {.struct_size = sizeof k};
    assert_int_equal(jager_sink_stats(0, &k), JAGER_OK);
    assert_int_equal(k.events_delivered, s.events_written);
    assert_int_equal(k.events_failed, 0);

    file_counts fc = read_counts(file, site);
    assert_int_equal(fc.events, s.events_written);         /* everything handed over is in the file */
    assert_int_equal(fc.drop_records, s.drop_reports);
    assert_int_equal(fc.drop_counted[JAGER_DROP_OVERWRITTEN], s.dropped[JAGER_DROP_OVERWRITTEN]);
    assert_int_equal(fc.spans_of_site, ss.calls - ss.dropped); /* recorded spans of the site */
    assert_int_equal(fc.spans_of_site + ss.dropped, N);
    /* the file's STATS are the same counters */
    assert_identities(&fc.st);
    assert_int_equal(fc.st.events_emitted, s.events_emitted);
    assert_int_equal(fc.st.events_recorded, s.events_recorded);
    assert_int_equal(fc.st.dropped[JAGER_DROP_OVERWRITTEN], s.dropped[JAGER_DROP_OVERWRITTEN]);
    assert_int_equal(fc.st.sinks, 1);
    assert_int_equal(fc.ss.dropped, ss.dropped);
    remove(file);
}

/* ---- reads while the program records ---- */
static jager_status fail_write(void *ctx, const jager_batch *b)
{
    (void)ctx;
    (void)b;
    return JAGER_E_IO;
}

static _Atomic int producers_done, reader_done;
static jager_site live_site;

static void *produce(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200000; i++) {
        jager_span a = jager_span_begin(live_site);
        jager_span_end(jager_span_begin(live_site));
        jager_span_end(a);
    }
    atomic_fetch_add(&producers_done, 1);
    while (!atomic_load(&reader_done)) tu_sleep_ns(1000000); /* no thread exits while read */
    return NULL;
}

/* jager_stats() read over and over while two threads record into small rings, with a
 * second sink that fails: every read satisfies the identities exactly (the collector's
 * counts of one batch move together; a ring's drops are read before its emitted count). */
static void test_live_reads(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 16);
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_sink bad = {.struct_size = sizeof bad, .name = "failing", .write = fail_write};
    assert_int_equal(jager_sink_add(&bad), JAGER_OK);
    live_site = jager_site_register("acct.live", "l.c", 1);
    atomic_store(&producers_done, 0);
    atomic_store(&reader_done, 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, produce, NULL), 0);
    uint64_t reads = 0;
    do {
        jager_stat s = {.struct_size = sizeof s};
        assert_int_equal(jager_stats(&s), JAGER_OK);
        assert_identities(&s);
        assert_int_equal(s.sinks, 2);
        reads++;
        if (reads % 64 == 0) jager_flush();
    } while (atomic_load(&producers_done) < 2 || reads < 100);
    jager_flush();
    jager_stat s = {.struct_size = sizeof s};
    assert_int_equal(jager_stats(&s), JAGER_OK);
    assert_identities(&s);
    assert_int_equal(s.events_pending, 0);
    jager_sink_stat k0 = {.struct_size = sizeof k0}, k1 = {.struct_size = sizeof k1};
    assert_int_equal(jager_sink_stats(0, &k0), JAGER_OK);
    assert_int_equal(jager_sink_stats(1, &k1), JAGER_OK);
    assert_int_equal(k0.events_delivered, s.events_written);
    assert_int_equal(k1.events_failed, s.events_written);
    assert_int_equal(s.dropped[JAGER_DROP_SINK], 0);
    atomic_store(&reader_done, 1);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    jager_shutdown();
    assert_int_equal(jager_stats(&s), JAGER_OK);
    assert_identities(&s);
    assert_int_equal(s.spans_total, 2 * 2 * 200000);
    remove(file);
}

/* ---- spans ended on another thread ---- */
typedef struct handoff {
    jager_span span;
    jager_site own;
    int with_open_span;
    uint32_t thread_spans;
} handoff;

static void *end_elsewhere(void *arg)
{
    handoff *h = arg;
    jager_span mine = {0, 0, 0};
    if (h->with_open_span) mine = jager_span_begin(h->own); /* this thread's own open span */
    jager_span_end(h->span);                                /* not this thread's */
    if (h->with_open_span) jager_span_end(mine);            /* still found, still its own */
    return NULL;
}

static void test_cross_thread_end(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 20);
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site xs = jager_site_register("acct.cross", "x.c", 1);
    jager_site own = jager_site_register("acct.own", "x.c", 2);
    jager_site after = jager_site_register("acct.after", "x.c", 3);
    /* one ended on a thread that never recorded, one on a thread with a span of its own open */
    for (int k = 0; k < 2; k++) {
        handoff h = {jager_span_begin(xs), own, k, 0};
        assert_int_not_equal(h.span.site, 0);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, end_elsewhere, &h), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    }
    jager_span_end(jager_span_begin(after)); /* this thread records on */
    jager_stat s = {.struct_size = sizeof s};
    jager_shutdown();
    assert_int_equal(jager_stats(&s), JAGER_OK);
    assert_identities(&s);
    assert_int_equal(s.spans_cross_thread, 2);
    assert_int_equal(s.spans_total, 2 + 1 + 1); /* the two handed off, own, after */
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(xs, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 2);
    assert_int_equal(jager_site_stats(own, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 1);

    /* In the file: both on the ending threads, top-level, with their ids of that thread;
     * the other thread's own span was not taken for them. */
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    jager_event ev;
    uint32_t main_thread = 0, cross_threads[2] = {0, 0}, own_thread = 0, own_parent = 1;
    int ncross = 0, nown = 0;
    while (jager_reader_next(r, &ev) > 0) {
        if (ev.type != JAGER_EV_SPAN) continue;
        const jager_rec_span *sp = (const jager_rec_span *)ev.rec;
        if (sp->h.aux == xs) {
            assert_true(ncross < 2);
            assert_int_equal(sp->parent_id, 0);
            cross_threads[ncross++] = ev.thread;
        } else if (sp->h.aux == own) {
            own_thread = ev.thread;
            own_parent = sp->parent_id;
            nown++;
        } else if (sp->h.aux == after) {
            main_thread = ev.thread;
        }
    }
    assert_int_equal(ncross, 2);
    assert_int_equal(nown, 1);
    assert_int_equal(own_parent, 0);
    assert_int_equal(own_thread, cross_threads[1]);
    assert_int_not_equal(cross_threads[0], main_thread);
    assert_int_not_equal(cross_threads[1], main_thread);
    jager_stat fs = {.struct_size = sizeof fs};
    assert_int_equal(jager_reader_stats(r, &fs), JAGER_OK);
    assert_int_equal(fs.spans_cross_thread, 2);
    jager_reader_close(r);
    remove(file);
}

/* ---- 10,000-deep nesting ---- */
enum { DEEP = 10000, DEEP_SITES = 7 };

static char *run_cli(const char *args, const char *file, size_t *len)
{
#ifdef JAGER_CLI
    const char *out = tu_tmp_path(".out");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' >'%s' 2>/dev/null", JAGER_CLI, args, file, out);
    int rc = system(cmd);
    assert_int_equal(rc, 0);
    uint8_t *data = tu_read_file(out, len);
    assert_non_null(data);
    remove(out);
    char *text = realloc(data, *len + 1); /* a C string for strstr */
    assert_non_null(text);
    text[*len] = '\0';
    return text;
#else
    (void)args;
    (void)file;
    (void)len;
    return NULL;
#endif
}

/* Every "NNN.N%" share in \p text is at most 100 %. Returns how many were seen. */
static size_t shares_at_most_100(const char *text, size_t len)
{
    size_t seen = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '%' || i == 0) continue;
        size_t j = i;
        while (j > 0 && ((text[j - 1] >= '0' && text[j - 1] <= '9') || text[j - 1] == '.')) j--;
        if (j == i) continue;
        double v = strtod(text + j, NULL);
        if (v > 100.0) fail_msg("share %.1f%% above 100 %% at byte %zu", v, j);
        seen++;
    }
    return seen;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 22); /* holds every span: the events are checked too */
    c.output = file;
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site sites[DEEP_SITES];
    char name[32];
    for (int i = 0; i < DEEP_SITES; i++) {
        snprintf(name, sizeof name, "deep.s%d", i);
        sites[i] = jager_site_register(name, "deep.c", (uint32_t)i + 1);
    }
    static jager_span open[DEEP];
    for (int d = 0; d < DEEP; d++) open[d] = jager_span_begin(sites[d % DEEP_SITES]);
    /* a log inside the innermost span names it */
    jager_log(JAGER_SEV_INFO, "innermost", NULL, 0);
    for (int d = DEEP - 1; d >= 0; d--) jager_span_end(open[d]);
    jager_stat s = {.struct_size = sizeof s};
    jager_shutdown();
    assert_int_equal(jager_stats(&s), JAGER_OK);
    assert_identities(&s);
    assert_int_equal(s.spans_total, DEEP);
    assert_int_equal(s.events_dropped, 0);
    assert_int_equal(s.spans_cross_thread, 0);

    /* The events: each span's parent is the one begun before it. */
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    static uint32_t parent_of[DEEP + 1];
    static jager_site site_of[DEEP + 1];
    jager_event ev;
    uint64_t spans = 0;
    uint32_t log_span = 0;
    while (jager_reader_next(r, &ev) > 0) {
        if (ev.type == JAGER_EV_LOG) log_span = ((const jager_rec_log *)ev.rec)->span_id;
        if (ev.type != JAGER_EV_SPAN) continue;
        const jager_rec_span *sp = (const jager_rec_span *)ev.rec;
        assert_true(sp->span_id >= open[0].id && sp->span_id <= open[DEEP - 1].id);
        parent_of[sp->span_id - open[0].id] = sp->parent_id;
        site_of[sp->span_id - open[0].id] = sp->h.aux;
        spans++;
    }
    assert_int_equal(spans, DEEP);
    assert_int_equal(log_span, open[DEEP - 1].id);
    for (int d = 0; d < DEEP; d++) {
        assert_int_equal(open[d].id, open[0].id + (uint32_t)d);
        assert_int_equal(parent_of[d], d ? open[d - 1].id : 0);
        assert_int_equal(site_of[d], sites[d % DEEP_SITES]);
    }
    /* The exact call paths: one chain of DEEP nodes, one call each, nothing in the
     * overflow bucket. */
    assert_int_equal(jager_reader_load_tables(r), JAGER_OK);
    size_t np = jager_reader_path_count(r);
    uint32_t at = JAGER_PATH_TOP;
    uint64_t overflow = 0;
    int depth = 0;
    for (size_t i = 0; i < np; i++) {
        jager_path_stat p = {.struct_size = sizeof p};
        assert_int_equal(jager_reader_path(r, i, &p), JAGER_OK);
        if (!p.site) {
            overflow += p.calls;
            continue;
        }
        if (p.parent != at) continue;
        assert_int_equal(p.site, sites[depth % DEEP_SITES]);
        assert_int_equal(p.calls, 1);
        at = (uint32_t)i;
        depth++;
    }
    assert_int_equal(depth, DEEP);
    assert_int_equal(overflow, 0);
    jager_reader_close(r);

#ifdef JAGER_CLI
    /* jager summary: the tree is the chain, every share at most 100 %. */
    size_t len;
    char *json = run_cli("summary --format json", file, &len);
    assert_true(shares_at_most_100(json, len) == 0); /* JSON shares have no '%' sign */
    size_t nodes = 0, leaves = 0, chained = 0;
    for (const char *p = json; (p = strstr(p, "\"pct_parent\":")) != NULL; p++) {
        double v = strtod(p + 13, NULL);
        assert_true(v <= 100.0);
        nodes++;
    }
    for (const char *p = json; (p = strstr(p, "\"children\":[]")) != NULL; p++) leaves++;
    for (const char *p = json; (p = strstr(p, "\"children\":[{")) != NULL; p++) chained++;
    assert_int_equal(nodes, DEEP);
    assert_int_equal(leaves, 1);
    assert_int_equal(chained, DEEP - 1);
    free(json);
    char *text = run_cli("summary", file, &len);
    assert_true(shares_at_most_100(text, len) >= DEEP); /* a share of the parent in every row */
    char want[64];
    snprintf(want, sizeof want, "[%d] deep.s%d", DEEP, (DEEP - 1) % DEEP_SITES);
    assert_non_null(strstr(text, want)); /* the deepest row names its depth */
    assert_non_null(strstr(text, "(exact)"));
    assert_null(strstr(text, "(off"));
    free(text);
#endif
    remove(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overwrite_identities),
        cmocka_unit_test(test_live_reads),
        cmocka_unit_test(test_cross_thread_end),
        cmocka_unit_test(test_deep_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
