/* test_gc_fake_julia.c — the gc plugin against a stand-in Julia runtime (fake_julia.c)
 * exported from this executable: every field of gc.pause, the trigger stack, site
 * attribution, two triggering threads, zero-code hooking once Julia initialises,
 * unhooking at shutdown with late callbacks harmless, a full queue counted, options. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_julia.h"
#include "internal.h"
#include "jager_gc.h"
#include "memsink.h"
#include "testutil.h"

#define MS 1000000ull

static int g_no_stacks; /* under valgrind: JAGER_GC_DEPTH=0 for every case */

/* Field indexes of gc.pause / gc.site_time / gc.sample (docs/event-types.md). */
enum { P_DURATION, P_REQUESTED, P_FULL, P_ALLOCD, P_FREED, P_LIVE, P_STACK, P_OS_TID, P_PLUGIN_NS, P_SITE };
enum { S_SITE, S_GC_NS, S_PAUSES };
enum { M_LIVE, M_ALLOCATED, M_COLLECTIONS, M_RSS, M_GC_TOTAL };

typedef struct run {
    memsink *ms;
    jager_sink sink;
    uint16_t t_pause, t_site_time, t_sample;
    const jager_gc_api *ext;
} run;

static uint16_t type_id(const char *name)
{
    for (uint32_t id = JAGER_EV_FIRST_PLUGIN; id < jg_type_count(); id++) {
        const jager_type_desc *d = jg_type_get((uint16_t)id);
        if (d && d->name && strcmp(d->name, name) == 0) return (uint16_t)id;
    }
    return 0;
}

/* Stop recording; the records stay readable until the next run starts. */
static memsink *g_last;
static void run_end(run *r)
{
    jager_shutdown();
    g_last = r->ms;
}
static int free_last(void **unused)
{
    (void)unused;
    memsink_free(g_last);
    g_last = NULL;
    return 0;
}

static void run_start(run *r, int initialized)
{
    memset(r, 0, sizeof *r);
    free_last(NULL);
    if (jager_is_enabled()) jager_shutdown(); /* a failed case must not fail the next ones */
    fake_julia_reset(initialized, 10000);
    r->ms = memsink_new(&r->sink);
    assert_non_null(r->ms);
    assert_int_equal(jager_sink_add(&r->sink), JAGER_OK);
    jager_config cfg = tu_config(0);
    cfg.plugins = "gc";
    cfg.plugin_path = JAGER_TEST_PLUGIN_DIR;
    assert_int_equal(jager_init(&cfg), JAGER_OK);
    r->t_pause = type_id("gc.pause");
    r->t_site_time = type_id("gc.site_time");
    r->t_sample = type_id("gc.sample");
    assert_true(r->t_pause >= JAGER_EV_FIRST_PLUGIN);
    assert_true(r->t_site_time >= JAGER_EV_FIRST_PLUGIN);
    assert_true(r->t_sample >= JAGER_EV_FIRST_PLUGIN);
    r->ext = jager_extension_get(JAGER_GC_EXTENSION_ID);
    assert_non_null(r->ext);
    assert_true(r->ext->struct_size >= sizeof(jager_gc_api));
}


/* The i-th record of type \p t (NULL past the last). */
static const jager_rec_plugin *nth(const run *r, uint16_t t, size_t i, uint32_t *thread)
{
    for (size_t k = 0; k < r->ms->nrecs; k++) {
        memsink_rec m = memsink_at(r->ms, k);
        if (m.rec->type != t) continue;
        if (i-- == 0) {
            if (thread) *thread = m.thread;
            return (const jager_rec_plugin *)m.rec;
        }
    }
    return NULL;
}

static size_t count(const run *r, uint16_t t) { return memsink_count(r->ms, t, 0, 0); }

/* The i-th pause in time order: pauses leave the plugin from several threads (its own,
 * the collector at flush, the caller of jager_shutdown), so their records arrive in
 * different batches. */
static int by_time(const void *a, const void *b)
{
    uint64_t x = (*(const jager_rec_plugin *const *)a)->time_ns, y = (*(const jager_rec_plugin *const *)b)->time_ns;
    return x < y ? -1 : x > y;
}
static const jager_rec_plugin *pause_at(const run *r, size_t i)
{
    static const jager_rec_plugin *sorted[256];
    size_t n = 0;
    for (const jager_rec_plugin *p; n < 256 && (p = nth(r, r->t_pause, n, NULL)) != NULL; n++) sorted[n] = p;
    qsort(sorted, n, sizeof sorted[0], by_time);
    return i < n ? sorted[i] : NULL;
}

/* Diagnostics from source "gc" whose text contains \p needle. */
static size_t diag_count(const run *r, const char *needle)
{
    uint32_t src = jg_intern("gc");
    size_t n = 0;
    for (size_t k = 0; k < r->ms->nrecs; k++) {
        const jager_record *rec = memsink_at(r->ms, k).rec;
        if (rec->type != JAGER_EV_DIAG) continue;
        const jager_rec_diag *d = (const jager_rec_diag *)rec;
        const char *text = (const char *)(d + 1);
        if (d->source == src && memmem(text, d->text_len, needle, strlen(needle))) n++;
    }
    return n;
}

/* A named frame for the stack check: the "allocating function" of these tests. */
__attribute__((noinline, visibility("default"))) void gc_test_allocating_function(int requested, int full, int64_t freed,
                                                                                    uint64_t pause_ns)
{
    fake_julia_alloc(1000);
    fake_julia_collect(requested, full, freed, pause_ns);
    __asm__ volatile("" ::: "memory");
}

static const char *frame_name(uint64_t ip)
{
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)(ip - 1), &info) || !info.dli_sname) return "";
    return info.dli_sname;
}

static void wait_hooked(const run *r)
{
    for (int i = 0; i < 2000 && !r->ext->hooked(); i++) tu_sleep_ns(MS);
    assert_int_equal(r->ext->hooked(), 1);
}

/* ---- cases ---- */

static void test_pause_fields_and_stack(void **unused)
{
    (void)unused;
    run r;
    run_start(&r, 1);
    assert_int_equal(r.ext->hooked(), 1);
    assert_non_null(fake_julia_pre());
    assert_non_null(fake_julia_post());

    jager_site outer = jager_site_register("gc_test.outer", __FILE__, __LINE__);
    jager_site inner = jager_site_register("gc_test.inner", __FILE__, __LINE__);
    uint64_t t0 = jager_now_ns();
    jager_span so = jager_span_begin(outer);
    jager_span si = jager_span_begin(inner);
    gc_test_allocating_function(1, 1, 600, 2 * MS); /* alloc 1000, free 600 → live 10400 */
    jager_span_end(si);
    jager_span_end(so);
    uint64_t t1 = jager_now_ns();
    assert_int_equal(jager_flush(), JAGER_OK);

    assert_int_equal(count(&r, r.t_pause), 1);
    const jager_rec_plugin *p = pause_at(&r, 0);
    assert_int_equal(p->h.words, 2 + 10);
    assert_true(p->time_ns >= t0 && p->time_ns <= t1);
    assert_true(p->fields[P_DURATION] >= 2 * MS);
    assert_true(p->fields[P_DURATION] < 5000 * MS); /* generous: valgrind unwinds slowly */
    assert_true(p->time_ns + p->fields[P_DURATION] <= t1);
    assert_int_equal(p->fields[P_REQUESTED], 1);
    assert_int_equal(p->fields[P_FULL], 1);
    assert_int_equal(p->fields[P_ALLOCD], 1000);
    assert_int_equal(p->fields[P_FREED], 600);
    assert_int_equal(p->fields[P_LIVE], 10400);
    assert_int_equal(p->fields[P_OS_TID], (uint64_t)syscall(SYS_gettid));
    assert_true(p->fields[P_PLUGIN_NS] > 0);
    /* under memcheck the plugin's own unwinding outlasts the 2 ms fake pause */
    if (!getenv("JAGER_UNDER_VALGRIND")) assert_true(p->fields[P_PLUGIN_NS] < p->fields[P_DURATION]);
    assert_int_equal(p->fields[P_SITE], inner);

    /* The stack starts in the runtime (the plugin's own frames are cut) and names the
     * allocating function. */
    if (g_no_stacks) {
        assert_int_equal(p->fields[P_STACK], 0);
    } else {
        const uint64_t *ips = NULL;
        uint32_t n = 0;
        assert_true(p->fields[P_STACK] != 0);
        assert_true(jg_stack_get(p->fields[P_STACK], &ips, &n));
        assert_true(n >= 3);
        assert_string_equal(frame_name(ips[0]), "fake_julia_collect");
        assert_string_equal(frame_name(ips[1]), "gc_test_allocating_function");
    }

    /* Live aggregates through the extension. */
    uint64_t ns = 0, pauses = 0;
    assert_int_equal(r.ext->site_time(outer, &ns, &pauses), JAGER_OK);
    assert_int_equal(pauses, 1);
    assert_int_equal(ns, p->fields[P_DURATION]);
    run_end(&r);
}

static void test_requested_kinds_and_full_flag(void **unused)
{
    (void)unused;
    run r;
    run_start(&r, 1);
    gc_test_allocating_function(1, 1, 0, MS / 10);  /* GC.gc(true) */
    gc_test_allocating_function(2, 0, 0, MS / 10);  /* GC.gc(false) */
    gc_test_allocating_function(0, 0, 0, MS / 10);  /* automatic, young generation */
    gc_test_allocating_function(0, 1, 0, MS / 10);  /* automatic that decided to sweep fully */
    run_end(&r);
    assert_int_equal(count(&r, r.t_pause), 4);
    const uint64_t want[4][2] = {{1, 1}, {2, 0}, {0, 0}, {0, 1}};
    for (size_t i = 0; i < 4; i++) {
        const jager_rec_plugin *p = pause_at(&r, i);
        assert_int_equal(p->fields[P_REQUESTED], want[i][0]);
        assert_int_equal(p->fields[P_FULL], want[i][1]);
        assert_int_equal(p->fields[P_ALLOCD], 1000);
        assert_int_equal(p->fields[P_SITE], 0);
    }
}

static void test_site_time_inclusive_once_per_pause(void **unused)
{
    (void)unused;
    run r;
    run_start(&r, 1);
    jager_site a = jager_site_register("gc_test.a", __FILE__, __LINE__);
    jager_site rec = jager_site_register("gc_test.recursive", __FILE__, __LINE__);
    jager_site idle = jager_site_register("gc_test.idle", __FILE__, __LINE__);
    jager_span s = jager_span_begin(idle);
    jager_span_end(s); /* a site with spans but no GC inside: no gc.site_time */

    jager_span sa = jager_span_begin(a);
    jager_span r1 = jager_span_begin(rec);
    jager_span r2 = jager_span_begin(rec); /* recursion: counted once per pause */
    gc_test_allocating_function(0, 0, 0, MS);
    jager_span_end(r2);
    gc_test_allocating_function(0, 0, 0, MS);
    jager_span_end(r1);
    jager_span_end(sa);
    gc_test_allocating_function(0, 0, 0, MS); /* outside every span */
    run_end(&r);

    assert_int_equal(count(&r, r.t_pause), 3);
    uint64_t d[3];
    for (size_t i = 0; i < 3; i++) d[i] = pause_at(&r, i)->fields[P_DURATION];
    assert_int_equal(count(&r, r.t_site_time), 2);
    int seen_a = 0, seen_rec = 0;
    for (size_t i = 0; i < 2; i++) {
        const jager_rec_plugin *p = nth(&r, r.t_site_time, i, NULL);
        if (p->fields[S_SITE] == a) {
            seen_a = 1;
            assert_int_equal(p->fields[S_PAUSES], 2);
            assert_int_equal(p->fields[S_GC_NS], d[0] + d[1]);
        } else {
            assert_int_equal(p->fields[S_SITE], rec);
            seen_rec = 1;
            assert_int_equal(p->fields[S_PAUSES], 2);
            assert_int_equal(p->fields[S_GC_NS], d[0] + d[1]);
        }
    }
    assert_true(seen_a && seen_rec);
}

typedef struct worker_arg {
    jager_site site;
    int n;
    uint64_t tid;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *w = p;
    w->tid = (uint64_t)syscall(SYS_gettid);
    for (int i = 0; i < w->n; i++) {
        jager_span s = jager_span_begin(w->site);
        gc_test_allocating_function(0, 0, 500, MS / 2);
        jager_span_end(s);
    }
    return NULL;
}

static void test_two_threads_trigger(void **unused)
{
    (void)unused;
    run r;
    run_start(&r, 1);
    worker_arg w[2] = {{jager_site_register("gc_test.t1", __FILE__, __LINE__), 20, 0},
                       {jager_site_register("gc_test.t2", __FILE__, __LINE__), 30, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    run_end(&r);
    assert_int_equal(count(&r, r.t_pause), 50);
    size_t per[2] = {0, 0};
    uint64_t allocd = 0;
    for (size_t i = 0; i < 50; i++) {
        const jager_rec_plugin *p = pause_at(&r, i);
        int k = p->fields[P_OS_TID] == w[0].tid ? 0 : 1;
        assert_int_equal(p->fields[P_OS_TID], w[k].tid);
        assert_int_equal(p->fields[P_SITE], w[k].site); /* the triggering thread's own span */
        assert_int_equal(p->fields[P_FREED], 500);
        allocd += p->fields[P_ALLOCD];
        per[k]++;
    }
    assert_int_equal(per[0], 20);
    assert_int_equal(per[1], 30);
    assert_int_equal(allocd, 50 * 1000);
}

static void test_zero_code_hooks_when_julia_initialises(void **unused)
{
    (void)unused;
    run r;
    run_start(&r, 0); /* preloaded: Julia is not initialised yet */
    assert_int_equal(r.ext->hooked(), 0);
    assert_null(fake_julia_pre());
    gc_test_allocating_function(0, 0, 0, 0); /* during Julia's start-up: missed, by design */
    fake_julia_set_initialized(1);
    wait_hooked(&r);
    assert_non_null(fake_julia_pre());
    gc_test_allocating_function(2, 0, 0, MS);
    run_end(&r);
    assert_int_equal(count(&r, r.t_pause), 1);
    assert_int_equal(pause_at(&r, 0)->fields[P_REQUESTED], 2);
}

static void test_unhook_at_shutdown_late_callbacks_harmless(void **unused)
{
    (void)unused;
    run r;
    run_start(&r, 1);
    const jager_gc_api *ext = r.ext;
    fake_cb pre = fake_julia_pre(), post = fake_julia_post();
    assert_non_null(pre);
    gc_test_allocating_function(0, 0, 0, MS / 10);
    run_end(&r);
    unsigned reg[4];
    fake_julia_reg_calls(reg);
    assert_int_equal(reg[0], 1); /* pre registered once */
    assert_int_equal(reg[1], 1); /* and removed once */
    assert_int_equal(reg[2], 1);
    assert_int_equal(reg[3], 1);
    assert_null(fake_julia_pre());
    assert_null(fake_julia_post());
    /* A collection that had picked the callbacks before removal calls them afterwards:
     * they return at once (the library stays mapped once it has hooked). */
    uint64_t armed0 = 0, late0 = 0, armed1 = 0, late1 = 0;
    ext->callback_counts(&armed0, &late0);
    pre(1);
    post(1);
    ext->callback_counts(&armed1, &late1);
    assert_int_equal(armed1, armed0);
    assert_int_equal(late1, late0 + 2);
    gc_test_allocating_function(0, 0, 0, 0); /* nothing registered: nothing called */
    ext->callback_counts(&armed1, &late1);
    assert_int_equal(late1, late0 + 2);
    assert_int_equal(ext->site_time(1, NULL, NULL), JAGER_E_STATE);
}

static void test_full_queue_loses_and_counts(void **unused)
{
    (void)unused;
    setenv("JAGER_GC_QUEUE", "2", 1);
    setenv("JAGER_GC_EAGER", "0", 1);
    setenv("JAGER_GC_INTERVAL_MS", "60000", 1); /* the thread drains once at start, then sleeps */
    run r;
    run_start(&r, 1);
    tu_sleep_ns(50 * MS);
    for (int i = 0; i < 5; i++) gc_test_allocating_function(0, 0, 0, 0);
    uint64_t pauses = 0, lost = 0, unpaired = 0;
    assert_int_equal(r.ext->totals(&pauses, NULL, &lost, &unpaired), JAGER_OK);
    assert_int_equal(pauses + lost, 5);
    assert_int_equal(lost, 3);
    assert_int_equal(unpaired, 0);
    run_end(&r);
    unsetenv("JAGER_GC_QUEUE");
    unsetenv("JAGER_GC_EAGER");
    unsetenv("JAGER_GC_INTERVAL_MS");
    assert_int_equal(count(&r, r.t_pause), 2);
    assert_int_equal(diag_count(&r, "3 GC pauses lost"), 1);
}

static void test_small_queue_wraps_without_loss(void **unused)
{
    (void)unused;
    setenv("JAGER_GC_QUEUE", "2", 1);
    setenv("JAGER_GC_INTERVAL_MS", "1", 1);
    run r;
    run_start(&r, 1);
    for (int i = 0; i < 20; i++) {
        gc_test_allocating_function(i % 3, 0, 0, MS / 10);
        uint64_t pauses = 0;
        for (int k = 0; k < 5000 && (r.ext->totals(&pauses, NULL, NULL, NULL), pauses < (uint64_t)i + 1); k++)
            tu_sleep_ns(MS / 10); /* totals() drains too: the two slots are reused ten times */
    }
    uint64_t pauses = 0, lost = 0;
    assert_int_equal(r.ext->totals(&pauses, NULL, &lost, NULL), JAGER_OK);
    run_end(&r);
    unsetenv("JAGER_GC_QUEUE");
    unsetenv("JAGER_GC_INTERVAL_MS");
    assert_int_equal(lost, 0);
    assert_int_equal(pauses, 20);
    assert_int_equal(count(&r, r.t_pause), 20);
    for (size_t i = 0; i < 20; i++) assert_int_equal(pause_at(&r, i)->fields[P_REQUESTED], i % 3);
}

static void test_eager_drain_interns_right_after_the_collection(void **unused)
{
    (void)unused;
    setenv("JAGER_GC_INTERVAL_MS", "60000", 1); /* no periodic drain: only the wake-up */
    run r;
    run_start(&r, 1);
    tu_sleep_ns(20 * MS); /* the thread's first sample is out */
    jager_stat st0 = {.struct_size = sizeof st0}, st1 = {.struct_size = sizeof st1};
    assert_int_equal(jager_stats(&st0), JAGER_OK);
    gc_test_allocating_function(0, 0, 0, MS / 10);
    int emitted = 0;
    for (int k = 0; k < 2000 && !emitted; k++) {
        assert_int_equal(jager_stats(&st1), JAGER_OK);
        emitted = st1.events_emitted > st0.events_emitted;
        if (!emitted) tu_sleep_ns(MS / 10);
    }
    assert_true(emitted); /* the pause left the plugin without any flush or interval */
    run_end(&r);
    unsetenv("JAGER_GC_INTERVAL_MS");
    assert_int_equal(count(&r, r.t_pause), 1);
}

static void test_samples_follow_the_runtime(void **unused)
{
    (void)unused;
    setenv("JAGER_GC_INTERVAL_MS", "1", 1);
    run r;
    run_start(&r, 1);
    for (int i = 0; i < 5; i++) gc_test_allocating_function(0, 0, 200, MS);
    tu_sleep_ns(20 * MS);
    run_end(&r);
    unsetenv("JAGER_GC_INTERVAL_MS");
    size_t n = count(&r, r.t_sample);
    assert_true(n >= 5); /* 1 ms period over ≥ 25 ms, plus the one at stop */
    const jager_rec_plugin *last = nth(&r, r.t_sample, n - 1, NULL);
    assert_int_equal(last->fields[M_LIVE], 10000 + 5 * 800);
    assert_int_equal(last->fields[M_ALLOCATED], 10000 + 5 * 1000);
    assert_int_equal(last->fields[M_COLLECTIONS], 5);
    assert_true(last->fields[M_RSS] > 1024 * 1024);
    assert_int_equal(last->fields[M_GC_TOTAL], 5 * MS);
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) { /* monotonic counters never go back */
        const jager_rec_plugin *p = nth(&r, r.t_sample, i, NULL);
        assert_true(p->fields[M_COLLECTIONS] >= prev);
        prev = p->fields[M_COLLECTIONS];
    }
}

static void test_options_depth_zero_and_malformed(void **unused)
{
    (void)unused;
    setenv("JAGER_GC_DEPTH", "0", 1);
    setenv("JAGER_GC_QUEUE", "lots", 1);
    run r;
    run_start(&r, 1);
    gc_test_allocating_function(0, 0, 0, 0);
    run_end(&r);
    if (!g_no_stacks) unsetenv("JAGER_GC_DEPTH");
    unsetenv("JAGER_GC_QUEUE");
    assert_int_equal(count(&r, r.t_pause), 1);
    assert_int_equal(pause_at(&r, 0)->fields[P_STACK], 0);
    assert_int_equal(diag_count(&r, "option queue=\"lots\""), 1);
}

int main(void)
{
    /* libunwind validates addresses by write(2)ing them to a pipe, which memcheck reports
     * as uninitialised bytes; under scripts/valgrind-unit.sh the cases run without stacks
     * (the stack checks run in the plain, ASan and TSan builds). */
    if (getenv("JAGER_UNDER_VALGRIND")) {
        g_no_stacks = 1;
        setenv("JAGER_GC_DEPTH", "0", 1);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pause_fields_and_stack),
        cmocka_unit_test(test_requested_kinds_and_full_flag),
        cmocka_unit_test(test_site_time_inclusive_once_per_pause),
        cmocka_unit_test(test_two_threads_trigger),
        cmocka_unit_test(test_zero_code_hooks_when_julia_initialises),
        cmocka_unit_test(test_unhook_at_shutdown_late_callbacks_harmless),
        cmocka_unit_test(test_full_queue_loses_and_counts),
        cmocka_unit_test(test_small_queue_wraps_without_loss),
        cmocka_unit_test(test_eager_drain_interns_right_after_the_collection),
        cmocka_unit_test(test_samples_follow_the_runtime),
        cmocka_unit_test(test_options_depth_zero_and_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, free_last);
}
