/*
 * Plugin ABI 1.2 and the lifecycle edges (issue 10): refused emits counted and said once,
 * emits after stop counted and named, host functions harmless with a stale handle, a
 * plugin thread outliving shutdown, type-name validation, the host timer, plugin
 * counters, emit_status, set_error, extension lookup, re-entry refused, last error kept,
 * and a plugin built against the 1.0 headers still loading.
 *
 * Built with ENABLE_EXPORTS: the "reenter" plugin calls jager_init/jager_shutdown, which
 * it resolves from this program, as a plugin would from libjager.so.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi_util.h"
#include "internal.h"
#include "jager_reader.h"
#include "testutil.h"
#include "tp_probe.h"

static const tp_probe *probe(void) { return jager_extension_get(TP_PROBE_ID); }

static uint64_t stat_drop(int reason)
{
    jager_stat s = {.struct_size = sizeof s};
    assert_int_equal(jager_stats(&s), JAGER_OK);
    return s.dropped[reason];
}

/* Capture stderr into a file while the core is not quiet. */
static int saved_err = -1;
static char err_path[64];
static void capture_begin(void)
{
    snprintf(err_path, sizeof err_path, "/tmp/jager-abi12-%d.err", (int)getpid());
    fflush(stderr);
    saved_err = dup(2);
    FILE *f = fopen(err_path, "w");
    assert_non_null(f);
    dup2(fileno(f), 2);
    fclose(f);
}
static const char *capture_end(void)
{
    static char text[16384];
    fflush(stderr);
    dup2(saved_err, 2);
    close(saved_err);
    FILE *f = fopen(err_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    unlink(err_path);
    return text;
}
static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* 1: every refused emit is counted under bad_emit and said once per type, naming what was
 * wrong; recorded + dropped == emitted still holds. */
static void test_bad_emit_counted_and_said_once(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "good", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    const jager_host_api *h = p->host;
    static const jager_field_desc f8[8] = {{"a", JAGER_FIELD_U64, 0}, {"b", JAGER_FIELD_U64, 0}, {"c", JAGER_FIELD_U64, 0},
                                           {"d", JAGER_FIELD_U64, 0}, {"e", JAGER_FIELD_U64, 0}, {"f", JAGER_FIELD_U64, 0},
                                           {"g", JAGER_FIELD_U64, 0}, {"h", JAGER_FIELD_U64, 0}};
    uint16_t t;
    assert_int_equal(h->register_type(p->self, "good.sample", f8, 8, &t), JAGER_OK);
    uint64_t v[8] = {0};
    assert_int_equal(h->emit_status(t, 0, v, 8), JAGER_OK);
    for (int i = 0; i < 3; i++) h->emit(t, 0, v, 7);            /* wrong count, 3 times */
    assert_int_equal(h->emit_status(t, 0, v, 7), JAGER_E_INVALID);
    assert_int_equal(h->emit_status(0, 0, v, 1), JAGER_E_INVALID);     /* type 0 */
    assert_int_equal(h->emit_status(60000, 0, v, 1), JAGER_E_INVALID); /* not registered */
    assert_int_equal(h->emit_status(JAGER_EV_SPAN, 0, v, 0), JAGER_E_INVALID); /* a core type */
    assert_int_equal(h->emit_status(t, 0, NULL, 8), JAGER_E_INVALID);  /* no values */
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(stat_drop(JAGER_DROP_BAD_EMIT), 8);
    jager_stat s = {.struct_size = sizeof s};
    assert_int_equal(jager_stats(&s), JAGER_OK);
    uint64_t lost = s.dropped[JAGER_DROP_RING_FULL] + s.dropped[JAGER_DROP_NO_RING] + s.dropped[JAGER_DROP_TOO_LARGE] +
                    s.dropped[JAGER_DROP_BAD_EMIT] + s.dropped[JAGER_DROP_AFTER_STOP];
    assert_int_equal(s.events_emitted, s.events_recorded + lost);
    abi_diag d[8];
    size_t n = abi_diags(r.m, "good", d, 8);
    assert_int_equal(n, 1); /* good.sample: once, though refused 5 times for two reasons */
    assert_non_null(strstr(d[0].text, "good.sample has 8 fields, got 7"));
    assert_non_null(strstr(d[0].text, "bad_emit"));
    n = abi_diags(r.m, "plugin", d, 8);
    assert_int_equal(n, 3);
    assert_non_null(strstr(d[0].text, "type 0"));
    assert_non_null(strstr(d[1].text, "type 60000 is not registered"));
    assert_non_null(strstr(d[2].text, "core type \"span\""));
    assert_int_equal(abi_count(r.m, t), 1);
    abi_finish(&r);
}

/* 2: a plugin thread stopped in shutdown instead of stop: every tick it emitted is in the
 * recording or counted as after_stop, and the plugin is named once. */
static void test_emits_after_stop_counted_and_named(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "late", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    uint16_t tick = p->tick_type;
    tu_sleep_ns(20000000);
    JG_CFG_SET(quiet, 0);
    capture_begin();
    jager_shutdown();
    const char *err = capture_end();
    JG_CFG_SET(quiet, 1);
    uint64_t emitted = p->value(TP_V_EMITTED), in_sink = abi_count(r.m, tick), late = stat_drop(JAGER_DROP_AFTER_STOP);
    assert_true(late >= 1); /* at least the one its shutdown emits */
    assert_int_equal(emitted, in_sink + late);
    assert_int_equal(count_of(err, "late.tick emitted after the plugins' stop returned"), 1);
    assert_non_null(strstr(err, "jager: late: "));
    memsink_free(r.m);
}

/* 3 and 4: a thread the plugin never stops calls every host function with its handle for
 * 300 ms after jager_shutdown(), among them its own timer, span hook and counters:
 * each call taking the handle returns its stale-handle status (JAGER_E_STATE, NULL),
 * emit_status JAGER_E_STATE, counter_add/set nothing; nothing is read from freed memory
 * (valgrind-unit runs this file) and nothing crashes. */
static void test_thread_outliving_shutdown_is_harmless(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "orphan", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    const jager_host_api *h = p->host;
    jager_plugin_handle *stale = p->self;
    abi_finish(&r);
    /* The same handle, now stale, from this thread too. */
    static const jager_field_desc fd[] = {{"x", JAGER_FIELD_U64, 0}};
    uint16_t t = 0;
    uint32_t timer = 0;
    assert_int_equal(h->register_type(stale, "orphan.x", fd, 1, &t), JAGER_E_STATE);
    assert_null(h->config(stale, "journal"));
    assert_int_equal(h->timer_start(stale, 1000000, (jager_timer_fn)abort, NULL, &timer), JAGER_E_STATE);
    assert_int_equal(h->counter_register(stale, "depth", NULL, JAGER_COUNTER_GAUGE), 0);
    assert_null(h->extension(stale, TP_PROBE_ID));
    h->log(stale, JAGER_SEV_WARN, "stale");
    h->set_error(stale, "stale");
    assert_int_equal(h->timer_stop(stale, 1), JAGER_E_STATE);
    uint32_t hook = 7;
    assert_int_equal(h->span_hook_add(stale, "orphan.site", (jager_span_hook_fn)abort, NULL, NULL, &hook), JAGER_E_STATE);
    assert_int_equal(hook, 7); /* not written */
    assert_int_equal(h->span_hook_remove(stale, 1), JAGER_E_STATE);
    uint64_t f2[2] = {0, 0};
    assert_int_equal(h->emit_status(p->tick_type, 0, f2, 2), JAGER_E_STATE);
    /* The orphan thread checked its own timer, hook, counters and the other calls once
     * after the unload (before the next run): each returned its stale-handle status. */
    for (int i = 0; i < 2000 && !p->value(TP_V_ORPHAN_CHECKED); i++) tu_sleep_ns(5000000);
    assert_int_equal(p->value(TP_V_ORPHAN_CHECKED), 1);
    assert_int_equal(p->value(TP_V_ORPHAN_BAD), 0);
    /* A new run loads a plugin into the freed slot: the stale handle still names nothing. */
    abi_start(&r, "good", TP_DIR);
    assert_null(h->config(stale, "journal"));
    assert_int_equal(h->register_type(stale, "good.x", fd, 1, &t), JAGER_E_STATE);
    abi_finish(&r);
    for (int i = 0; i < 400 && !p->value(TP_V_ORPHAN_DONE); i++) tu_sleep_ns(5000000);
    assert_int_equal(p->value(TP_V_ORPHAN_DONE), 1); /* its code stayed mapped: it ran to its end */
    assert_int_equal(p->value(TP_V_ORPHAN_CALLS), 300);
    assert_int_equal(p->value(TP_V_ORPHAN_BAD), 0); /* nor during or after the next run */
}

/* 7: names that would collide as file names, JSON keys or labels are refused. */
static void test_register_type_validates_names_and_fields(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "good", TP_DIR);
    const tp_probe *p = probe();
    const jager_host_api *h = p->host;
    static const jager_field_desc one[] = {{"x", JAGER_FIELD_U64, 0}};
    uint16_t t;
    const char *bad_names[] = {"good.a/b", "good.a b", "good..x", "good.A", "good.x\"y", "good.\xc3\x28", "good.1x",
                               "good.x.y", "good.a-b"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        assert_int_equal(h->register_type(p->self, bad_names[i], one, 1, &t), JAGER_E_INVALID);
        assert_non_null(strstr(jager_last_error(), "snake_case"));
    }
    assert_non_null(strstr((h->register_type(p->self, "good.\xc3\x28", one, 1, &t), jager_last_error()), "\\xc3"));
    static const jager_field_desc dup[] = {{"x", JAGER_FIELD_U64, 0}, {"x", JAGER_FIELD_F64, 0}};
    assert_int_equal(h->register_type(p->self, "good.dup", dup, 2, &t), JAGER_E_INVALID);
    assert_non_null(strstr(jager_last_error(), "fields 0 and 1 are both named \"x\""));
    static const jager_field_desc upper[] = {{"Bytes", JAGER_FIELD_BYTES, 0}};
    assert_int_equal(h->register_type(p->self, "good.upper", upper, 1, &t), JAGER_E_INVALID);
    static const jager_field_desc ext_u64[] = {{"x", JAGER_FIELD_U64, JAGER_FIELD_FLAG_EXTENT}};
    assert_int_equal(h->register_type(p->self, "good.ext", ext_u64, 1, &t), JAGER_E_INVALID);
    static const jager_field_desc two_ext[] = {{"a", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
                                               {"b", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT}};
    assert_int_equal(h->register_type(p->self, "good.ext2", two_ext, 2, &t), JAGER_E_INVALID);
    static const jager_field_desc unknown[] = {{"x", JAGER_FIELD_U64, 64}};
    assert_int_equal(h->register_type(p->self, "good.flags", unknown, 1, &t), JAGER_E_INVALID);
    static const jager_field_desc both[] = {{"x", JAGER_FIELD_U64, JAGER_FIELD_FLAG_COUNTER | JAGER_FIELD_FLAG_GAUGE}};
    assert_int_equal(h->register_type(p->self, "good.both", both, 1, &t), JAGER_E_INVALID);
    static const jager_field_desc str_gauge[] = {{"x", JAGER_FIELD_STRING, JAGER_FIELD_FLAG_GAUGE}};
    assert_int_equal(h->register_type(p->self, "good.sg", str_gauge, 1, &t), JAGER_E_INVALID);
    static const jager_field_desc ok[] = {{"cpu_ns", JAGER_FIELD_DURATION_NS, 0},
                                          {"pause_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
                                          {"rss_bytes", JAGER_FIELD_BYTES, JAGER_FIELD_FLAG_GAUGE},
                                          {"reads", JAGER_FIELD_U64, JAGER_FIELD_FLAG_COUNTER}};
    assert_int_equal(h->register_type(p->self, "good.proc_sample2", ok, 4, &t), JAGER_OK);
    assert_int_equal(h->type_info(t)->fields[1].flags, JAGER_FIELD_FLAG_EXTENT);
    assert_int_equal(h->type_info(t)->fields[2].flags, JAGER_FIELD_FLAG_GAUGE);
    /* Same name, other flags: another definition. */
    static const jager_field_desc ok2[] = {{"cpu_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT},
                                           {"pause_ns", JAGER_FIELD_DURATION_NS, 0},
                                           {"rss_bytes", JAGER_FIELD_BYTES, JAGER_FIELD_FLAG_GAUGE},
                                           {"reads", JAGER_FIELD_U64, JAGER_FIELD_FLAG_COUNTER}};
    assert_int_equal(h->register_type(p->self, "good.proc_sample2", ok2, 4, &t), JAGER_E_INVALID);
    abi_finish(&r);
}

/* 6: only a DURATION_NS field flagged EXTENT gives a plugin event an extent when read
 * back; a CPU-time field does not. */
static void test_duration_field_is_no_extent_unless_flagged(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "/tmp/jager-abi12-%d.jgr", (int)getpid());
    jager_config c = tu_config(0);
    c.output = path;
    c.plugins = "good";
    c.plugin_path = TP_DIR;
    assert_int_equal(jager_init(&c), JAGER_OK);
    const tp_probe *p = probe();
    const jager_host_api *h = p->host;
    static const jager_field_desc cpu[] = {{"cpu_ns", JAGER_FIELD_DURATION_NS, 0}};
    static const jager_field_desc pause[] = {{"duration_ns", JAGER_FIELD_DURATION_NS, JAGER_FIELD_FLAG_EXTENT}};
    uint16_t tc, tp;
    assert_int_equal(h->register_type(p->self, "good.cpu", cpu, 1, &tc), JAGER_OK);
    assert_int_equal(h->register_type(p->self, "good.pause", pause, 1, &tp), JAGER_OK);
    uint64_t now = h->now_ns(), ten_s = 10000000000ull, ms = 1000000;
    h->emit(tc, now, &ten_s, 1);
    h->emit(tp, now, &ms, 1);
    jager_shutdown();
    jager_reader *rd = NULL;
    assert_int_equal(jager_reader_open(path, &rd), JAGER_OK);
    jager_event ev;
    int seen = 0;
    while (jager_reader_next(rd, &ev) == 1) {
        if (ev.type == tc) {
            assert_int_equal(ev.end_ns, ev.time_ns);
            seen |= 1;
        } else if (ev.type == tp) {
            assert_int_equal(ev.end_ns, ev.time_ns + ms);
            seen |= 2;
        }
    }
    const jager_type_desc *d = jager_reader_type(rd, tp);
    assert_non_null(d);
    assert_int_equal(d->fields[0].flags, JAGER_FIELD_FLAG_EXTENT);
    jager_reader_close(rd);
    unlink(path);
    assert_int_equal(seen, 3);
}

/* Timer: the callback count is exact (every callback's tick is in the recording), the
 * host stopped the timer before stop ran, and no callback comes after. */
static void test_timer_exact_count_and_none_after_stop(void **st)
{
    (void)st;
    setenv("JAGER_TIMER_INTERVAL_US", "2000", 1);
    abi_run r;
    abi_start(&r, "timer", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    uint16_t tick = p->tick_type;
    /* Wait for a few callbacks (no timing is asserted: only what happened is counted). */
    for (int i = 0; i < 1000 && p->value(TP_V_TIMER_CALLS) < 3; i++) tu_sleep_ns(5000000);
    jager_shutdown();
    uint64_t calls = p->value(TP_V_TIMER_CALLS), at_stop = p->value(TP_V_TIMER_AT_STOP);
    tu_sleep_ns(20000000);
    assert_int_equal(p->value(TP_V_TIMER_CALLS), calls); /* none after shutdown */
    assert_int_equal(calls, at_stop);                     /* none after stop began */
    assert_true(calls >= 3);
    assert_int_equal(abi_count(r.m, tick), calls);        /* exact: each callback's tick recorded */
    memsink_free(r.m);
    unsetenv("JAGER_TIMER_INTERVAL_US");
}

/* Four threads adding to one plugin counter at once (TSan re-runs this file: the host's
 * running total is the only shared state, kept with atomics). */
#define CT_THREADS 4
#define CT_ADDS 1000
static const jager_host_api *ct_host;
static jager_counter ct_counter;
static void *ct_adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < CT_ADDS; i++) ct_host->counter_add(ct_counter, 0.5);
    return NULL;
}

/* Counters, emit_status, set_error, extension lookup. */
static void test_counters_extension_and_status(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "good,sink", TP_DIR);
    const tp_probe *p = probe();
    const jager_host_api *h = p->host;
    assert_true(h->abi_minor >= 2);
    jager_counter c = h->counter_register(p->self, "queue_depth", "items", JAGER_COUNTER_GAUGE);
    assert_true(c != 0);
    const char *name, *unit;
    uint32_t kind;
    assert_int_equal(h->counter_info(c, &name, &unit, &kind), JAGER_OK);
    assert_string_equal(name, "good.queue_depth");
    assert_string_equal(unit, "items");
    assert_int_equal(kind, JAGER_COUNTER_GAUGE);
    assert_int_equal(h->counter_register(p->self, "Queue Depth", NULL, JAGER_COUNTER_GAUGE), 0);
    h->counter_set(c, 3);
    h->counter_set(c, 4);
    jager_counter m = h->counter_register(p->self, "bytes_read", "bytes", JAGER_COUNTER_MONOTONIC);
    h->counter_add(m, 10);
    h->counter_add(m, 5);
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(memsink_count(r.m, JAGER_EV_COUNTER, 1, c), 2);
    assert_int_equal(memsink_count(r.m, JAGER_EV_COUNTER, 1, m), 2);
    /* From 4 threads at once: every add recorded, and the running total (shared by the
     * threads) ends at exactly the sum of the deltas: 4 × 1000 × 0.5. */
    ct_host = h;
    ct_counter = h->counter_register(p->self, "items_done", "items", JAGER_COUNTER_MONOTONIC);
    assert_true(ct_counter != 0);
    pthread_t th[CT_THREADS];
    for (int i = 0; i < CT_THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, ct_adder, NULL), 0);
    for (int i = 0; i < CT_THREADS; i++) pthread_join(th[i], NULL);
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(memsink_count(r.m, JAGER_EV_COUNTER, 1, ct_counter), CT_THREADS * CT_ADDS);
    double top = 0;
    uint64_t halves = 0; /* Σ over samples of value × 2: each total 0.5, 1.0, …, 2000 appears once */
    for (size_t i = 0; i < r.m->nrecs; i++) {
        memsink_rec mr = memsink_at(r.m, i);
        if (mr.rec->type != JAGER_EV_COUNTER || mr.rec->aux != ct_counter) continue;
        double v = ((const jager_rec_counter *)mr.rec)->value;
        if (v > top) top = v;
        halves += (uint64_t)(v * 2);
    }
    assert_true(top == CT_THREADS * CT_ADDS * 0.5);
    const uint64_t n = CT_THREADS * CT_ADDS;
    assert_int_equal(halves, n * (n + 1) / 2); /* no total lost or seen twice */
    /* Extension lookup: the first plugin offering the id. */
    const tp_probe *x = h->extension(p->self, TP_PROBE_ID);
    assert_ptr_equal(x, p);
    assert_null(h->extension(p->self, "no.such/1"));
    abi_finish(&r);
}

static void test_init_failure_reason_and_last_error_kept(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "failreason,good", TP_DIR);
    assert_non_null(probe()); /* good loaded after it */
    /* The later plugin loading fine did not clear the refusal. */
    assert_non_null(strstr(jager_last_error(), "plugin 'failreason': init failed"));
    assert_non_null(strstr(jager_last_error(), "cannot open /proc/self/stat: permission denied"));
    assert_int_equal(jager_flush(), JAGER_OK);
    abi_diag d[4];
    assert_int_equal(abi_diags(r.m, "failreason", d, 4), 1);
    assert_non_null(strstr(d[0].text, "cannot open /proc/self/stat: permission denied"));
    abi_finish(&r);
}

/* Issue 16 item 11: jager_init/jager_shutdown from a plugin callback: E_STATE, no deadlock. */
static void test_reentry_refused(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "reenter", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    const tp_probe *p = probe();
    assert_non_null(p);
    assert_int_equal((jager_status)(int64_t)p->value(TP_V_REENTER_INIT), JAGER_E_STATE);
    assert_int_equal(p->value(TP_V_REENTER_SHUTDOWN), 1);
    assert_true(jager_is_enabled()); /* the run goes on */
    abi_finish(&r);
}

/* A plugin binary built against the 1.0 headers (tests/abi/abi-1.0, frozen from the 1.0
 * release) loads, registers, emits and stops as before. */
static void test_abi_1_0_plugin_still_loads(void **st)
{
    (void)st;
    setenv("JAGER_V10_COUNT", "5", 1);
    abi_run r;
    abi_start(&r, "v10", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    assert_string_equal(p->tag, "v10");
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_count(r.m, p->tick_type), 5);
    jager_shutdown();
    assert_int_equal(abi_count(r.m, p->summary_type), 1);
    memsink_free(r.m);
    unsetenv("JAGER_V10_COUNT");
}

/* Plugin events in `jager summary`: every plugin type with its count and min / mean / max
 * of its numeric fields (text and JSON). */
static void test_summary_lists_plugin_types(void **st)
{
    (void)st;
#ifndef JAGER_CLI_PATH
    skip();
#else
    char path[128], cmd[512];
    snprintf(path, sizeof path, "/tmp/jager-abi12-sum-%d.jgr", (int)getpid());
    setenv("JAGER_GOOD_COUNT", "5", 1);
    jager_config c = tu_config(0);
    c.output = path;
    c.plugins = "good";
    c.plugin_path = TP_DIR;
    assert_int_equal(jager_init(&c), JAGER_OK);
    const tp_probe *p = probe();
    const jager_host_api *h = p->host;
    static const jager_field_desc lv[] = {{"rss", JAGER_FIELD_BYTES, JAGER_FIELD_FLAG_GAUGE}, {"cpu_ns", JAGER_FIELD_DURATION_NS, 0}};
    uint16_t t;
    assert_int_equal(h->register_type(p->self, "good.level", lv, 2, &t), JAGER_OK);
    uint64_t a[2] = {1024, 1000}, b[2] = {3072, 3000};
    h->emit(t, 0, a, 2);
    h->emit(t, 0, b, 2);
    jager_shutdown();
    unsetenv("JAGER_GOOD_COUNT");
    snprintf(cmd, sizeof cmd, "%s summary %s", JAGER_CLI_PATH, path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char out[16384];
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    assert_int_equal(pclose(f), 0);
    assert_non_null(strstr(out, "Plugin events (3 types; numeric fields: min / mean / max)"));
    assert_non_null(strstr(out, "good.tick                                           5 events"));
    assert_non_null(strstr(out, "good.summary                                        1 event\n"));
    assert_non_null(strstr(out, "    seq                                    0 / 2 / 4\n"));
    assert_non_null(strstr(out, "    rss                                    1.0 KiB / 2.0 KiB / 3.0 KiB (gauge)"));
    snprintf(cmd, sizeof cmd, "%s summary --format json %s", JAGER_CLI_PATH, path);
    f = popen(cmd, "r");
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    assert_int_equal(pclose(f), 0);
    assert_non_null(strstr(out, "\"name\":\"good.tick\",\"events\":5,\"fields\":[{\"name\":\"seq\",\"kind\":1,\"flags\":0,\"n\":5,\"min\":0,\"mean\":2,\"max\":4}"));
    unlink(path);
#endif
}

/* Plugin events in `jager report`: a thread that only emits plugin events has a lane; a
 * field flagged GAUGE is a chart series; other plugin events are markers listing their
 * fields (the page's hover text). */
static const tp_probe *rep_probe;
static uint16_t rep_level;
static void *rep_thread(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= 5; i++) {
        uint64_t f[1] = {1024u * i};
        rep_probe->host->emit(rep_level, 0, f, 1);
    }
    rep_probe->emit_ticks(3);
    return NULL;
}
static void test_report_charts_plugin_fields(void **st)
{
    (void)st;
#ifndef JAGER_CLI_PATH
    skip();
#else
    char path[128], html[160], cmd[600];
    snprintf(path, sizeof path, "/tmp/jager-abi12-rep-%d.jgr", (int)getpid());
    snprintf(html, sizeof html, "/tmp/jager-abi12-rep-%d.html", (int)getpid());
    jager_config c = tu_config(0);
    c.output = path;
    c.plugins = "good";
    c.plugin_path = TP_DIR;
    assert_int_equal(jager_init(&c), JAGER_OK);
    rep_probe = probe();
    static const jager_field_desc fd[] = {{"rss", JAGER_FIELD_BYTES, JAGER_FIELD_FLAG_GAUGE}};
    assert_int_equal(rep_probe->host->register_type(rep_probe->self, "good.rep_level", fd, 1, &rep_level), JAGER_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, rep_thread, NULL), 0);
    pthread_join(t, NULL);
    jager_shutdown();
    snprintf(cmd, sizeof cmd, "%s report -o %s %s", JAGER_CLI_PATH, html, path);
    FILE *pp = popen(cmd, "r");
    assert_non_null(pp);
    char sink[256];
    while (fread(sink, 1, sizeof sink, pp) > 0) {}
    int prc = pclose(pp);
    if (prc != 0) fail_msg("%s: pclose %d (%s)", cmd, prc, strerror(errno));
    FILE *f = fopen(html, "r");
    assert_non_null(f);
    static char page[4 << 20];
    size_t n = fread(page, 1, sizeof page - 1, f);
    fclose(f);
    page[n] = 0;
    assert_non_null(strstr(page, "\"name\":\"good.rep_level.rss\",\"unit\":\"bytes\",\"kind\":\"gauge\""));
    assert_non_null(strstr(page, "\"v\":[1024,2048,3072,4096,5120]"));
    assert_non_null(strstr(page, "\"good.tick seq=0 payload=0\""));
    assert_non_null(strstr(page, "\"good.tick seq=2 payload=16\""));
    unlink(path);
    unlink(html);
#endif
}

/* Issue 10, item 8: a size below the minimum is named as such, not "cannot parse". */
static void test_ring_bytes_below_minimum_named(void **st)
{
    (void)st;
    jager_config c;
    jager_config_init(&c);
    setenv("JAGER_RING_BYTES", "1K", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    assert_non_null(strstr(jager_last_error(), "JAGER_RING_BYTES: '1K' is below the minimum 4096"));
    setenv("JAGER_RING_BYTES", "12Q", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    assert_non_null(strstr(jager_last_error(), "cannot parse"));
    unsetenv("JAGER_RING_BYTES");
}

/* Issue 16 item 11: a plugin whose flush never returns does not hang the program: the
 * flush is bounded (JAGER_PLUGIN_TIMEOUT_MS), the plugin reported once and disabled, and
 * jager_flush/jager_shutdown return; its stop and shutdown are not called. */
static void test_hung_flush_disables_the_plugin(void **st)
{
    (void)st;
    setenv("JAGER_PLUGIN_TIMEOUT_MS", "300", 1);
    const char *journal = abi_journal_for("hangflush");
    abi_run r;
    abi_start(&r, "hangflush", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    assert_int_equal(jager_flush(), JAGER_OK); /* returns although the plugin's flush does not */
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(p->value(TP_V_FLUSHES), 1); /* disabled after the first: never called again */
    assert_null(probe());                         /* nor its extension */
    abi_diag d[4];
    assert_int_equal(abi_diags(r.m, "hangflush", d, 4), 1);
    assert_non_null(strstr(d[0].text, "its flush has not returned after 300 ms"));
    abi_finish(&r);
    const char *text = abi_journal_read(journal);
    assert_null(strstr(text, "hangflush:stop"));
    assert_null(strstr(text, "hangflush:shutdown"));
    unsetenv("JAGER_PLUGIN_TIMEOUT_MS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_emit_counted_and_said_once),
        cmocka_unit_test(test_emits_after_stop_counted_and_named),
        cmocka_unit_test(test_thread_outliving_shutdown_is_harmless),
        cmocka_unit_test(test_register_type_validates_names_and_fields),
        cmocka_unit_test(test_duration_field_is_no_extent_unless_flagged),
        cmocka_unit_test(test_timer_exact_count_and_none_after_stop),
        cmocka_unit_test(test_counters_extension_and_status),
        cmocka_unit_test(test_init_failure_reason_and_last_error_kept),
        cmocka_unit_test(test_reentry_refused),
        cmocka_unit_test(test_abi_1_0_plugin_still_loads),
        cmocka_unit_test(test_summary_lists_plugin_types),
        cmocka_unit_test(test_report_charts_plugin_fields),
        cmocka_unit_test(test_ring_bytes_below_minimum_named),
        cmocka_unit_test(test_hung_flush_disables_the_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
