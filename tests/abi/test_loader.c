/*
 * The plugin loader against each ABI case: a good plugin's whole life, an older and a
 * newer minor, every refusal (unknown major, missing entry, no descriptor, short
 * descriptor, no init, name mismatch, failing init, hostile names, not found) with one
 * clear diagnostic while the program runs on, stepping aside, a plugin's sink, and the
 * search order of JAGER_PLUGIN_PATH.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi_util.h"
#include "jager_reader.h"
#include "internal.h"
#include "testutil.h"
#include "tp_probe.h"

/* Spans on the calling thread, flushed, and counted in the sink: the program runs on. */
static void assert_still_records(abi_run *r, uint32_t n)
{
    jager_site s = jager_site_register("abi.still_records", __FILE__, __LINE__);
    size_t before = abi_count(r->m, JAGER_EV_SPAN);
    for (uint32_t i = 0; i < n; i++) jager_span_end(jager_span_begin(s));
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_count(r->m, JAGER_EV_SPAN) - before, n);
}

/* Exactly one warning from \p source, containing every needle; the last error says the same. */
static void assert_one_refusal(abi_run *r, const char *source, int nneedles, ...)
{
    abi_diag d[4];
    assert_int_equal(jager_flush(), JAGER_OK);
    size_t n = abi_diags(r->m, source, d, 4);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].level, JAGER_DIAG_WARN);
    va_list ap;
    va_start(ap, nneedles);
    for (int i = 0; i < nneedles; i++) {
        const char *needle = va_arg(ap, const char *);
        if (!strstr(d[0].text, needle)) fail_msg("diagnostic \"%s\" lacks \"%s\"", d[0].text, needle);
    }
    va_end(ap);
    /* The last error carries the same message (cut at its buffer's size). */
    assert_true(strlen(jager_last_error()) > 0);
    assert_int_equal(strncmp(jager_last_error(), d[0].text, strlen(jager_last_error())), 0);
}

static void test_good_plugin_lifecycle(void **st)
{
    const char *jp = abi_journal_for("good");
    char journal[512];
    snprintf(journal, sizeof journal, "%s", jp);
    setenv("JAGER_GOOD_COUNT", "250", 1);
    abi_run r;
    abi_start(&r, "good", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    assert_int_equal(jg_plugins_count(), 1);
    assert_string_equal(jg_plugins_loaded_names(), "good");

    const tp_probe *p = jager_extension_get(TP_PROBE_ID);
    assert_non_null(p);
    assert_string_equal(p->tag, "good");
    assert_null(jager_extension_get("test.probe/2")); /* versioned ids: another version is another id */
    const jager_type_desc *td = jg_type_get(p->tick_type);
    assert_non_null(td);
    assert_string_equal(td->name, "good.tick");
    assert_int_equal(td->nfields, 2);
    uint16_t tick = p->tick_type, summary = p->summary_type;
    assert_true(tick >= JAGER_EV_FIRST_PLUGIN && summary >= JAGER_EV_FIRST_PLUGIN && tick != summary);

    p->emit_ticks(1000); /* after the 250 its start emitted */
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_count(r.m, tick), 1250);
    jager_shutdown();

    /* Every tick arrived exactly once, with its fields. */
    static uint8_t seen[1250];
    memset(seen, 0, sizeof seen);
    size_t nsum = 0;
    for (size_t off = 0; off < r.m->bytes;) {
        const jager_rec_plugin *rec = (const jager_rec_plugin *)(r.m->data + off);
        off += (size_t)rec->h.words * 8u;
        if (rec->h.type == tick) {
            assert_int_equal(rec->h.words, 4); /* header, time, 2 fields */
            assert_true(rec->fields[0] < 1250);
            assert_int_equal(rec->fields[1], rec->fields[0] * 8);
            assert_true(rec->time_ns > 0);
            seen[rec->fields[0]]++;
        } else if (rec->h.type == summary) {
            assert_int_equal(rec->fields[0], 1250); /* stop's summary, written by the final drain */
            nsum++;
        }
    }
    for (size_t i = 0; i < 1250; i++) assert_int_equal(seen[i], 1);
    assert_int_equal(nsum, 1);
    assert_int_equal(abi_count(r.m, tick), 1250);
    /* Each callback in order: one flush for the jager_flush() above, one for the drain
     * jager_shutdown() makes before stop. */
    assert_string_equal(abi_journal_read(journal),
                        "good:init\ngood:start\ngood:flush\ngood:flush\ngood:stop\ngood:shutdown\n");
    assert_int_equal(jg_plugins_count(), 0);
    assert_null(jager_extension_get(TP_PROBE_ID));
    memsink_free(r.m);
    unsetenv("JAGER_GOOD_COUNT");
    remove(journal);
}

static void test_extension_null_when_not_initialised(void **st)
{
    assert_null(jager_extension_get(TP_PROBE_ID));
    assert_null(jager_extension_get(NULL));
    assert_int_equal(jg_plugins_count(), 0);
}

static void test_older_minor_loads(void **st)
{
    char journal[512];
    snprintf(journal, sizeof journal, "%s", abi_journal_for("old"));
    abi_run r;
    abi_start(&r, "old", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    assert_int_equal(jg_plugins_count(), 1);
    /* get_extension lies beyond its struct_size: read as NULL (the plugin aborts if called). */
    assert_null(jager_extension_get(TP_PROBE_ID));
    assert_still_records(&r, 10);
    abi_diag d[2];
    assert_int_equal(abi_diags(r.m, NULL, d, 2), 0);
    abi_finish(&r);
    /* stop and shutdown too lie beyond it: never called. */
    assert_string_equal(abi_journal_read(journal), "old:init\nold:start\nold:flush\nold:flush\n");
    remove(journal);
}

static void test_newer_minor_loads(void **st)
{
    abi_run r;
    abi_start(&r, "newer", TP_DIR);
    assert_int_equal(jg_plugins_count(), 1);
    const tp_probe *p = jager_extension_get(TP_PROBE_ID);
    assert_non_null(p);
    assert_string_equal(p->tag, "newer");
    abi_finish(&r);
}

static void test_unknown_major_refused(void **st)
{
    abi_run r;
    abi_start(&r, "major", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK); /* init succeeds without the plugin */
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "major", 3, "plugin 'major'", "ABI 2.3", "speaks 1.3");
    assert_still_records(&r, 100);
    abi_finish(&r);
}

static void test_missing_entry_refused(void **st)
{
    abi_run r;
    abi_start(&r, "noentry", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "noentry", 2, "libjager-noentry.so", "no entry symbol jager_plugin_entry");
    assert_still_records(&r, 10);
    abi_finish(&r);
}

static void test_null_descriptor_refused(void **st)
{
    abi_run r;
    abi_start(&r, "nulldesc", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "nulldesc", 1, "returned no descriptor");
    abi_finish(&r);
}

static void test_short_descriptor_refused(void **st)
{
    abi_run r;
    abi_start(&r, "small", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    char want[64];
    snprintf(want, sizeof want, "struct_size %zu is too small", offsetof(jager_plugin_descriptor, init));
    assert_one_refusal(&r, "small", 1, want);
    abi_finish(&r);
}

static void test_missing_init_refused(void **st)
{
    abi_run r;
    abi_start(&r, "noinit", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "noinit", 1, "no init callback");
    abi_finish(&r);
}

static void test_name_mismatch_refused(void **st)
{
    abi_run r;
    abi_start(&r, "mismatch", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "mismatch", 2, "libjager-mismatch.so", "names itself \"other\"");
    abi_finish(&r);
}

static void test_failing_init_refused(void **st)
{
    char journal[512];
    snprintf(journal, sizeof journal, "%s", abi_journal_for("failinit"));
    abi_run r;
    abi_start(&r, "failinit", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    assert_int_equal(jg_plugins_count(), 0);
    /* The plugin's own info line, the refused type (said by the host), then the one
     * refusal with status and the host's reason. */
    abi_diag d[4];
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_diags(r.m, "failinit", d, 4), 3);
    assert_int_equal(d[0].level, JAGER_DIAG_INFO);
    assert_string_equal(d[0].text, "about to fail");
    assert_int_equal(d[1].level, JAGER_DIAG_WARN);
    assert_non_null(strstr(d[1].text, "event type \"bad.event\" must be named \"failinit.<event>\""));
    assert_int_equal(d[2].level, JAGER_DIAG_WARN);
    assert_non_null(strstr(d[2].text, "plugin 'failinit': init failed: invalid argument (-1)"));
    assert_non_null(strstr(d[2].text, "\"bad.event\" must be named \"failinit.<event>\""));
    /* The sink it registered in init was never added (its callbacks abort). */
    assert_still_records(&r, 50);
    abi_finish(&r);
    assert_string_equal(abi_journal_read(journal), "failinit:init\n"); /* no shutdown after a failed init */
    remove(journal);
}

static void test_unsupported_steps_aside(void **st)
{
    abi_run r;
    abi_start(&r, "unsupported", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    abi_diag d[4];
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_diags(r.m, "unsupported", d, 4), 2);
    assert_string_equal(d[0].text, "not a Julia process");
    assert_int_equal(d[1].level, JAGER_DIAG_INFO); /* not a warning: the environment does not fit */
    assert_non_null(strstr(d[1].text, "stepped aside"));
    abi_finish(&r);
}

static void test_start_failure_leaves_plugin_inactive(void **st)
{
    char journal[512];
    snprintf(journal, sizeof journal, "%s", abi_journal_for("startfail"));
    abi_run r;
    abi_start(&r, "startfail", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    assert_one_refusal(&r, "startfail", 2, "start failed", "input/output error (-4)");
    assert_null(jager_extension_get(TP_PROBE_ID));
    abi_finish(&r);
    /* No flush, no stop (it aborts); shutdown frees what init made. */
    assert_string_equal(abi_journal_read(journal), "startfail:init\nstartfail:start\nstartfail:shutdown\n");
    remove(journal);
}

static void test_plugin_sink_receives_events(void **st)
{
    char journal[512];
    snprintf(journal, sizeof journal, "%s", abi_journal_for("sink"));
    abi_run r;
    abi_start(&r, "sink", TP_DIR);
    assert_int_equal(jg_plugins_count(), 1);
    const tp_probe *p = jager_extension_get(TP_PROBE_ID);
    assert_non_null(p);
    assert_still_records(&r, 500);
    /* The plugin's sink saw every span the test's sink saw. */
    assert_int_equal(p->sink_spans(), 500);
    assert_true(p->sink_batches() >= 1);
    /* Sinks are registered from init or start only. */
    jager_sink late = {.struct_size = sizeof late, .name = "late", .write = r.sink.write, .ctx = r.m};
    assert_int_equal(p->host->register_sink(p->self, &late), JAGER_E_STATE);
    abi_finish(&r);
    const char *j = abi_journal_read(journal);
    assert_non_null(strstr(j, "sink:init\n"));
    const char *open = strstr(j, "sink:sink-open\n"), *close = strstr(j, "sink:sink-close\n"),
               *shut = strstr(j, "sink:shutdown\n");
    assert_non_null(open);
    assert_non_null(close);
    assert_non_null(shut);
    assert_true(open < close && close < shut); /* sinks close before plugins shut down */
    remove(journal);
}

static void test_search_path_order(void **st)
{
    struct {
        const char *path, *tag;
    } cases[] = {
        {TP_DIR_A ":" TP_DIR_B, "a"},
        {TP_DIR_B ":" TP_DIR_A, "b"},
        {"::" TP_DIR_B "/", "b"},                       /* empty entries skipped, trailing '/' fine */
        {"/nonexistent-jager-dir:" TP_DIR_A, "a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        abi_run r;
        abi_start(&r, "order", cases[i].path);
        assert_int_equal(jg_plugins_count(), 1);
        const tp_probe *p = jager_extension_get(TP_PROBE_ID);
        assert_non_null(p);
        assert_string_equal(p->tag, cases[i].tag);
        abi_finish(&r);
    }
}

/* A file that exists but is no shared library: the dlopen error is reported, and it is
 * not skipped in favour of a later folder (the first folder holding the name wins). */
static void test_dlopen_error_reported(void **st)
{
    char dir[512], file[600], path[1200];
    snprintf(dir, sizeof dir, "%s", tu_tmp_path(".plugins"));
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/libjager-good.so", dir);
    assert_int_equal(tu_write_file(file, "not an ELF file\n", 16), 0);
    snprintf(path, sizeof path, "%s:%s", dir, TP_DIR);
    abi_run r;
    abi_start(&r, "good", path);
    assert_int_equal(r.init_status, JAGER_OK);
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "good", 2, "cannot load", file);
    assert_still_records(&r, 10);
    abi_finish(&r);
    remove(file);
    rmdir(dir);
}

static void test_not_found_says_where(void **st)
{
    abi_run r;
    abi_start(&r, "absent", "/nonexistent-jager-1:/nonexistent-jager-2");
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "absent", 3, "libjager-absent.so not found", "/nonexistent-jager-1, /nonexistent-jager-2",
                       "/jager/plugins");
    /* This program links the core statically: it is not the build tree's libjager, so the
     * build tree's plugin folder is not searched (issue 10, defect 5). */
    assert_int_equal(jager_flush(), JAGER_OK);
    abi_diag d[4];
    assert_int_equal(abi_diags(r.m, "absent", d, 4), 1);
    assert_null(strstr(d[0].text, JAGER_TEST_PLUGIN_DIR));
    abi_finish(&r);
}

static void test_hostile_names_refused(void **st)
{
    abi_run r;
    abi_start(&r, "../evil", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    assert_one_refusal(&r, "core", 2, "plugin name \"../evil\" refused", "a-z, 0-9");
    abi_finish(&r);

    /* Several at once, each refused once; control bytes are escaped; good still loads. */
    abi_start(&r, "Good,a/b,x\x01y,good,/etc/passwd", TP_DIR);
    assert_int_equal(jg_plugins_count(), 1);
    abi_diag d[8];
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_diags(r.m, "core", d, 8), 4);
    assert_non_null(strstr(d[0].text, "\"Good\""));
    assert_non_null(strstr(d[1].text, "\"a/b\""));
    assert_non_null(strstr(d[2].text, "\"x\\x01y\""));
    assert_non_null(strstr(d[3].text, "\"/etc/passwd\""));
    abi_finish(&r);
}

static void test_list_trimmed_and_deduplicated(void **st)
{
    char journal[512];
    snprintf(journal, sizeof journal, "%s", abi_journal_for("good,sink"));
    abi_run r;
    abi_start(&r, " good , ,sink,good,, sink ,", TP_DIR);
    assert_int_equal(jg_plugins_count(), 2);
    assert_string_equal(jg_plugins_loaded_names(), "good,sink");
    abi_diag d[2];
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_diags(r.m, NULL, d, 2), 0);
    abi_finish(&r);
    /* Loaded in list order, shut down in reverse. */
    const char *j = abi_journal_read(journal);
    assert_true(strstr(j, "good:init") < strstr(j, "sink:init"));
    assert_true(strstr(j, "sink:shutdown") < strstr(j, "good:shutdown"));
    assert_null(strstr(strstr(j, "good:init") + 1, "good:init"));
    remove(journal);
}

static void test_failed_plugin_reported_once_and_others_load(void **st)
{
    abi_run r;
    abi_start(&r, "major,good,major,absent,absent", TP_DIR);
    assert_int_equal(jg_plugins_count(), 1);
    assert_string_equal(jg_plugins_loaded_names(), "good");
    abi_diag d[4];
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_diags(r.m, "major", d, 4), 1);
    assert_int_equal(abi_diags(r.m, "absent", d, 4), 1);
    abi_finish(&r);
}

static void test_reload_across_init_cycles(void **st)
{
    char journal[512];
    snprintf(journal, sizeof journal, "%s", abi_journal_for("good"));
    for (int i = 0; i < 3; i++) {
        abi_run r;
        abi_start(&r, "good", TP_DIR);
        assert_int_equal(jg_plugins_count(), 1);
        const tp_probe *p = jager_extension_get(TP_PROBE_ID);
        assert_non_null(p);
        p->emit_ticks(10);
        uint16_t tick = p->tick_type;
        abi_finish(&r);
        (void)tick;
    }
    assert_string_equal(abi_journal_read(journal),
                        "good:init\ngood:start\ngood:flush\ngood:stop\ngood:shutdown\n"
                        "good:init\ngood:start\ngood:flush\ngood:stop\ngood:shutdown\n"
                        "good:init\ngood:start\ngood:flush\ngood:stop\ngood:shutdown\n");
    remove(journal);
}

/* Options are read with the plugin's own element size: option_size 0 (every plugin built
 * before it was named) is the 1.0 layout, and an element grown by a later minor is read by
 * its prefix, with the stride the plugin declared. */
static const jager_option_desc opts_1_0[] = {{"a", "int", "1", "first"}, {"b", "bool", "0", "second"}};
typedef struct grown_option {
    jager_option_desc d;
    const char *added_later[3];
} grown_option;
static const grown_option opts_grown[] = {{{"c", "string", "x", "third"}, {"?", "?", "?"}},
                                          {{"d", "bytes", "4k", "fourth"}, {"?", "?", "?"}}};

static void test_options_read_with_the_plugins_size(void **st)
{
    (void)st;
    jager_option_desc o;
    jager_plugin_descriptor d1 = {.struct_size = sizeof d1, .options = opts_1_0, .noptions = 2};
    assert_int_equal(d1.option_size, 0);
    assert_int_equal(jager_plugin_option(&d1, 1, &o), 1);
    assert_string_equal(o.key, "b");
    assert_string_equal(o.help, "second");
    assert_int_equal(jager_plugin_option(&d1, 2, &o), 0);

    jager_plugin_descriptor d2 = {.struct_size = sizeof d2, .options = &opts_grown[0].d, .noptions = 2,
                                  .option_size = sizeof(grown_option)};
    assert_int_equal(jager_plugin_option(&d2, 1, &o), 1);
    assert_string_equal(o.key, "d");
    assert_string_equal(o.default_value, "4k");

    static const jager_option_desc declared[] = {{"e", "int", "2", "fifth"}};
    jager_plugin_descriptor d3 = {.struct_size = sizeof d3, JAGER_PLUGIN_OPTIONS(declared)};
    assert_int_equal(d3.noptions, 1);
    assert_int_equal(d3.option_size, sizeof(jager_option_desc));
    assert_int_equal(jager_plugin_option(&d3, 0, &o), 1);
    assert_string_equal(o.type, "int");

    jager_plugin_descriptor bad = d1;
    bad.option_size = 8; /* smaller than the 1.0 layout: refused */
    assert_int_equal(jager_plugin_option(&bad, 0, &o), 0);
}

static void test_no_plugins_requested(void **st)
{
    abi_run r;
    abi_start(&r, NULL, NULL);
    assert_int_equal(jg_plugins_count(), 0);
    assert_string_equal(jg_plugins_loaded_names(), "");
    abi_finish(&r);
    abi_start(&r, " , ,", TP_DIR);
    assert_int_equal(jg_plugins_count(), 0);
    abi_diag d[2];
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(abi_diags(r.m, NULL, d, 2), 0);
    abi_finish(&r);
}

/* A plugin sink that fails every write, beside the file sink that takes every batch
 * (issue 16 item 6): the file is complete, the failures are the plugin sink's own
 * (counted per sink), nothing counts as dropped, and the file carries the same accounting. */
static void test_failing_plugin_sink_accounting(void **st)
{
    (void)st;
    const char *file = tu_tmp_path(".jgr");
    jager_config c = tu_config(1u << 22);
    c.output = file;
    c.plugins = "failsink";
    c.plugin_path = TP_DIR;
    assert_int_equal(jager_init(&c), JAGER_OK);
    const tp_probe *p = jager_extension_get(TP_PROBE_ID);
    assert_non_null(p);
    jager_site site = jager_site_register("acct.span", "a.c", 1);
    enum { N = 10000 };
    for (int i = 0; i < N; i++) jager_span_end(jager_span_begin(site));
    jager_shutdown();
    jager_stat s = {.struct_size = sizeof s};
    assert_int_equal(jager_stats(&s), JAGER_OK);
    assert_int_equal(s.spans_total, N);
    assert_int_equal(s.sinks, 2);
    assert_int_equal(s.events_pending, 0);
    assert_int_equal(s.events_dropped, 0);
    assert_int_equal(s.dropped[JAGER_DROP_SINK], 0); /* the file took every batch */
    assert_int_equal(s.events_written, s.events_recorded + s.drop_reports);
    jager_sink_stat k0 = {.struct_size = sizeof k0}, k1 = {.struct_size = sizeof k1};
    assert_int_equal(jager_sink_stats(0, &k0), JAGER_OK);
    assert_int_equal(jager_sink_stats(1, &k1), JAGER_OK);
    assert_int_equal(jager_sink_stats(2, &k1), JAGER_E_NOTFOUND);
    assert_int_equal(jager_sink_stats(1, &k1), JAGER_OK);
    assert_string_equal(k0.name, "file");
    assert_string_equal(k1.name, "tp-sink");
    assert_int_equal(k0.events_delivered, s.events_written);
    assert_int_equal(k0.events_failed, 0);
    assert_int_equal(k0.batches_failed, 0);
    assert_int_equal(k1.events_delivered, 0);
    assert_int_equal(k1.events_failed, s.events_written);
    assert_int_equal(k1.batches_failed, p->sink_batches()); /* every batch it was handed */
    assert_int_equal(p->sink_spans(), N);                   /* and it was handed every span */
    /* The file: every event, and the same accounting. */
    jager_reader *r;
    assert_int_equal(jager_reader_open(file, &r), JAGER_OK);
    jager_event ev;
    int rc;
    uint64_t events = 0, spans = 0;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        events++;
        if (ev.type == JAGER_EV_SPAN && ((const jager_rec_span *)ev.rec)->h.aux == site) spans++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(spans, N);
    assert_int_equal(events, s.events_written);
    jager_stat fs = {.struct_size = sizeof fs};
    assert_int_equal(jager_reader_stats(r, &fs), JAGER_OK);
    assert_int_equal(fs.sinks, 2);
    assert_int_equal(fs.dropped[JAGER_DROP_SINK], 0);
    assert_int_equal(fs.events_written, s.events_written);
    jager_sink_stat f0 = {.struct_size = sizeof f0}, f1 = {.struct_size = sizeof f1};
    assert_int_equal(jager_reader_sink_stats(r, 0, &f0), JAGER_OK);
    assert_int_equal(jager_reader_sink_stats(r, 1, &f1), JAGER_OK);
    assert_int_equal(jager_reader_sink_stats(r, 2, &f1), JAGER_E_NOTFOUND);
    assert_int_equal(jager_reader_sink_stats(r, 1, &f1), JAGER_OK);
    assert_string_equal(f0.name, "file");
    assert_string_equal(f1.name, "tp-sink");
    assert_int_equal(f0.events_delivered, events);
    assert_int_equal(f0.events_failed, 0);
    assert_int_equal(f1.events_delivered, 0);
    assert_int_equal(f1.events_failed, events);
    jager_reader_close(r);
    remove(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extension_null_when_not_initialised),
        cmocka_unit_test(test_good_plugin_lifecycle),
        cmocka_unit_test(test_options_read_with_the_plugins_size),
        cmocka_unit_test(test_older_minor_loads),
        cmocka_unit_test(test_newer_minor_loads),
        cmocka_unit_test(test_unknown_major_refused),
        cmocka_unit_test(test_missing_entry_refused),
        cmocka_unit_test(test_null_descriptor_refused),
        cmocka_unit_test(test_short_descriptor_refused),
        cmocka_unit_test(test_missing_init_refused),
        cmocka_unit_test(test_name_mismatch_refused),
        cmocka_unit_test(test_failing_init_refused),
        cmocka_unit_test(test_unsupported_steps_aside),
        cmocka_unit_test(test_start_failure_leaves_plugin_inactive),
        cmocka_unit_test(test_plugin_sink_receives_events),
        cmocka_unit_test(test_failing_plugin_sink_accounting),
        cmocka_unit_test(test_search_path_order),
        cmocka_unit_test(test_not_found_says_where),
        cmocka_unit_test(test_dlopen_error_reported),
        cmocka_unit_test(test_hostile_names_refused),
        cmocka_unit_test(test_list_trimmed_and_deduplicated),
        cmocka_unit_test(test_failed_plugin_reported_once_and_others_load),
        cmocka_unit_test(test_reload_across_init_cycles),
        cmocka_unit_test(test_no_plugins_requested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
