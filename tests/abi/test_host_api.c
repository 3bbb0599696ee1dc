/*
 * The host API as a plugin sees it: the table and handle the test plugin "good" received
 * in init (via its probe extension), called exactly as plugin code would call them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi_util.h"
#include "internal.h"
#include "testutil.h"
#include "tp_probe.h"

typedef struct fixture {
    abi_run r;
    const tp_probe *p;
    const jager_host_api *h;
    jager_plugin_handle *self;
} fixture;

static int setup(void **st)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    abi_start(&f.r, "good", TP_DIR);
    f.p = jager_extension_get(TP_PROBE_ID);
    if (!f.p) return -1;
    f.h = f.p->host;
    f.self = f.p->self;
    *st = &f;
    return 0;
}

static int teardown(void **st)
{
    fixture *f = *st;
    abi_finish(&f->r);
    return 0;
}

static void test_table_header(void **st)
{
    fixture *f = *st;
    assert_int_equal(f->h->struct_size, sizeof(jager_host_api));
    assert_int_equal(f->h->abi_major, JAGER_PLUGIN_ABI_MAJOR);
    assert_int_equal(f->h->abi_minor, JAGER_PLUGIN_ABI_MINOR);
    /* Every 1.0, 1.1, 1.2 and 1.3 function is present, every reserved slot NULL; 1.1 took 5
     * of the 8 reserved slots, 1.2 the other 3 and appended 5 more and 8 new reserved ones,
     * 1.3 took 2 of those (the table's size is 1.2's). */
    const void *const *fn = (const void *const *)&f->h->register_type;
    size_t nfn = (offsetof(jager_host_api, reserved) - offsetof(jager_host_api, register_type)) / sizeof(void *);
    assert_int_equal(nfn, 17 + 5 + 8 + 2);
    for (size_t i = 0; i < nfn; i++) assert_non_null(fn[i]);
    for (size_t i = 0; i < 6; i++) assert_null(f->h->reserved[i]);
    /* The 1.3 functions sit where 1.2's first reserved slots were. */
    assert_int_equal(offsetof(jager_host_api, span_hook_add), offsetof(jager_host_api, counter_set) + sizeof(void *));
    /* The 1.1 functions kept their offsets (a 1.1 plugin reads them where they were). */
    assert_int_equal(offsetof(jager_host_api, span_end_ns), offsetof(jager_host_api, register_type) + 21 * sizeof(void *));
    assert_int_equal(offsetof(jager_host_api, emit_status), offsetof(jager_host_api, span_end_ns) + sizeof(void *));
    assert_int_equal(offsetof(jager_host_api, reserved) + sizeof f->h->reserved, sizeof(jager_host_api));
}

static void test_register_type_requires_own_prefix(void **st)
{
    fixture *f = *st;
    static const jager_field_desc a[] = {{"x", JAGER_FIELD_U64, 0}, {"where", JAGER_FIELD_SITE, 0}};
    static const jager_field_desc b[] = {{"x", JAGER_FIELD_F64, 0}};
    uint16_t id = 0, id2 = 0;
    assert_int_equal(f->h->register_type(f->self, "good.sample", a, 2, &id), JAGER_OK);
    assert_true(id >= JAGER_EV_FIRST_PLUGIN);
    assert_int_equal(f->h->register_type(f->self, "good.sample", a, 2, &id2), JAGER_OK);
    assert_int_equal(id2, id); /* same definition, same id */
    assert_int_equal(f->h->register_type(f->self, "good.sample", b, 1, &id2), JAGER_E_INVALID);
    assert_int_equal(f->h->register_type(f->self, "other.sample", a, 2, &id2), JAGER_E_INVALID);
    assert_non_null(strstr(jager_last_error(), "must be named \"good.<event>\""));
    assert_int_equal(f->h->register_type(f->self, "good.", a, 2, &id2), JAGER_E_INVALID);
    assert_int_equal(f->h->register_type(f->self, "goodx.sample", a, 2, &id2), JAGER_E_INVALID);
    assert_int_equal(f->h->register_type(f->self, "good", a, 2, &id2), JAGER_E_INVALID);
    assert_int_equal(f->h->register_type(f->self, NULL, a, 2, &id2), JAGER_E_INVALID);
    const jager_type_desc *t = f->h->type_info(id);
    assert_non_null(t);
    assert_string_equal(t->name, "good.sample");
    assert_int_equal(t->nfields, 2);
    assert_string_equal(t->fields[1].name, "where");
    assert_int_equal(t->fields[1].kind, JAGER_FIELD_SITE);
    assert_string_equal(f->h->type_info(JAGER_EV_SPAN)->name, "span");
}

static void test_emit_reaches_sinks(void **st)
{
    fixture *f = *st;
    static const jager_field_desc a[] = {{"v", JAGER_FIELD_F64, 0}};
    uint16_t id;
    assert_int_equal(f->h->register_type(f->self, "good.value", a, 1, &id), JAGER_OK);
    double v = 2.5;
    uint64_t bits;
    memcpy(&bits, &v, 8);
    uint64_t t0 = f->h->now_ns();
    f->h->emit(id, 12345, &bits, 1); /* explicit time */
    f->h->emit(id, 0, &bits, 1);     /* 0: now */
    uint64_t t1 = f->h->now_ns();
    assert_true(t1 >= t0);
    assert_int_equal(jager_flush(), JAGER_OK);
    size_t n = 0;
    for (size_t off = 0; off < f->r.m->bytes;) {
        const jager_rec_plugin *rec = (const jager_rec_plugin *)(f->r.m->data + off);
        off += (size_t)rec->h.words * 8u;
        if (rec->h.type != id) continue;
        double got;
        memcpy(&got, &rec->fields[0], 8);
        assert_true(got == 2.5);
        if (n == 0) assert_int_equal(rec->time_ns, 12345);
        else assert_true(rec->time_ns >= t0 && rec->time_ns <= t1);
        n++;
    }
    assert_int_equal(n, 2);
}

static void test_config_reads_plugin_environment(void **st)
{
    fixture *f = *st;
    setenv("JAGER_GOOD_MAX_DEPTH", "17", 1);
    assert_string_equal(f->h->config(f->self, "max-depth"), "17");
    assert_string_equal(f->h->config(f->self, "max_depth"), "17");
    assert_string_equal(f->h->config(f->self, "MAX_DEPTH"), "17");
    unsetenv("JAGER_GOOD_MAX_DEPTH");
    assert_null(f->h->config(f->self, "max-depth"));
    setenv("JAGER_GOOD_X", "y", 1);
    assert_null(f->h->config(f->self, "x=1"));    /* not a key */
    assert_null(f->h->config(f->self, "../x"));
    assert_null(f->h->config(f->self, ""));
    assert_null(f->h->config(f->self, NULL));
    assert_null(f->h->config(NULL, "x"));
    assert_string_equal(f->h->config(f->self, "x"), "y");
    unsetenv("JAGER_GOOD_X");
}

static void test_strings_round_trip(void **st)
{
    fixture *f = *st;
    uint32_t a = f->h->intern("solver.step");
    assert_true(a > 0);
    assert_int_equal(f->h->intern("solver.step"), a);
    assert_string_equal(f->h->string(a), "solver.step");
    assert_int_equal(f->h->intern(NULL), 0);
    assert_null(f->h->string(0xfffffff0u));
}

static void test_log_is_a_diagnostic_from_the_plugin(void **st)
{
    fixture *f = *st;
    f->h->log(f->self, JAGER_DIAG_WARN, "device <b>busy</b>");
    f->h->log(f->self, 99, "clamped");
    assert_int_equal(jager_flush(), JAGER_OK);
    abi_diag d[4];
    assert_int_equal(abi_diags(f->r.m, "good", d, 4), 2);
    assert_int_equal(d[0].level, JAGER_DIAG_WARN);
    assert_string_equal(d[0].text, "device <b>busy</b>");
    assert_int_equal(d[1].level, 24);
}

/* 1.1: a plugin records spans through the table; span_end_ns ends one at a given time. */
static void test_spans_through_the_table(void **st)
{
    fixture *f = *st;
    jager_site s = f->h->site_register("host.span", "h.c", 7);
    assert_int_equal(s, jager_site_register("host.span", "h.c", 7));
    jager_span outer = f->h->span_begin(s);
    assert_int_equal(outer.site, s);
    jager_attr a = {"k", JAGER_ATTR_I64, 0, {.i64 = 5}};
    f->h->span_set_attrs(outer, &a, 1);
    uint64_t t0 = f->h->now_ns();
    jager_span late = f->h->span_begin(s);
    tu_sleep_ns(2000000);
    f->h->span_end_ns(late, t0 + 1000);   /* before its start: no time */
    f->h->span_end(outer);
    jager_site_stat ss = {.struct_size = sizeof ss};
    assert_int_equal(jager_site_stats(s, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 2);
    assert_true(ss.min_ns < 1000);
    assert_true(ss.max_ns >= 2000000);
    uint64_t prev_max = ss.max_ns;   /* the slept span: 2 ms, or more on a slow machine or valgrind */
    uint64_t before = f->h->now_ns();
    jager_span e = f->h->span_begin(s);
    uint64_t t1 = f->h->now_ns();
    f->h->span_end_ns(e, t1 + 5000000);    /* 5 ms after its start, whenever called */
    assert_int_equal(jager_site_stats(s, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 3);
    /* its start lies in [before, t1], so its duration in [5 ms, 5 ms + (t1 - before)] */
    uint64_t want_lo = prev_max > 5000000 ? prev_max : 5000000;
    assert_true(ss.max_ns >= want_lo && ss.max_ns <= (prev_max > 5000000 + (t1 - before) ? prev_max : 5000000 + (t1 - before)));
    f->h->span_end_ns((jager_span){0, 0, 0}, t1); /* inert: nothing */
    assert_int_equal(jager_site_stats(s, &ss), JAGER_OK);
    assert_int_equal(ss.calls, 3);
}

static void test_open_sites_innermost_first(void **st)
{
    fixture *f = *st;
    jager_site a = jager_site_register("host.a", "a.c", 1), b = jager_site_register("host.b", "b.c", 2),
               c = jager_site_register("host.c", "c.c", 3);
    jager_site out[8] = {0};
    jager_span sa = jager_span_begin(a), sb = jager_span_begin(b), sc = jager_span_begin(c);
    assert_int_equal(f->h->open_sites(out, 8), 3);
    assert_int_equal(out[0], c);
    assert_int_equal(out[1], b);
    assert_int_equal(out[2], a);
    memset(out, 0, sizeof out);
    assert_int_equal(f->h->open_sites(out, 2), 2);
    assert_int_equal(out[0], c);
    assert_int_equal(out[1], b);
    assert_int_equal(out[2], 0);
    assert_int_equal(f->h->open_sites(NULL, 8), 0);
    jager_span_end(sc);
    assert_int_equal(f->h->open_sites(out, 8), 2);
    assert_int_equal(out[0], b);
    jager_span_end(sb);
    jager_span_end(sa);
    assert_int_equal(f->h->open_sites(out, 8), 0);
}

static void test_site_thread_counter_metadata_stack_info(void **st)
{
    fixture *f = *st;
    jager_site s = jager_site_register("host.site", "solver.c", 42);
    const char *name = NULL, *file = NULL;
    uint32_t line = 0;
    assert_int_equal(f->h->site_info(s, &name, &file, &line), JAGER_OK);
    assert_string_equal(name, "host.site");
    assert_string_equal(file, "solver.c");
    assert_int_equal(line, 42);
    assert_int_equal(f->h->site_info(s, NULL, NULL, NULL), JAGER_OK);
    assert_int_equal(f->h->site_info(0, &name, &file, &line), JAGER_E_NOTFOUND);

    /* The calling thread's index, as batches name it. */
    jager_span_end(jager_span_begin(s));
    assert_int_equal(jager_flush(), JAGER_OK);
    uint32_t thread = 0;
    for (size_t i = 0; i < f->r.m->nrecs; i++) {
        memsink_rec mr = memsink_at(f->r.m, i);
        if (mr.rec->type == JAGER_EV_SPAN && mr.rec->aux == s) thread = mr.thread;
    }
    assert_true(thread >= 1);
    uint64_t tid = 0;
    const char *tname = NULL;
    assert_int_equal(f->h->thread_info(thread, &tid, &tname), JAGER_OK);
    assert_int_equal(tid, (uint64_t)syscall(SYS_gettid));
    assert_non_null(tname);
    assert_int_equal(f->h->thread_info(0, &tid, &tname), JAGER_E_NOTFOUND);

    jager_counter c = jager_counter_register("host.bytes", "bytes", JAGER_COUNTER_GAUGE);
    const char *cn = NULL, *cu = NULL;
    uint32_t kind = 99;
    assert_int_equal(f->h->counter_info(c, &cn, &cu, &kind), JAGER_OK);
    assert_string_equal(cn, "host.bytes");
    assert_string_equal(cu, "bytes");
    assert_int_equal(kind, JAGER_COUNTER_GAUGE);
    assert_int_equal(f->h->counter_info(0, &cn, &cu, &kind), JAGER_E_NOTFOUND);

    assert_int_equal(f->h->metadata_set("good.device", "gpu0"), JAGER_OK);
    assert_string_equal(f->h->metadata_get("good.device"), "gpu0");
    assert_int_equal(f->h->metadata_set("jager.version", "x"), JAGER_E_INVALID); /* reserved */
    assert_null(f->h->metadata_get("good.absent"));
    assert_null(f->h->metadata_get(NULL));

    uint64_t ips[3] = {0x1000, 0x2000, 0x3000};
    jager_stack_id sid = f->h->stack_intern(ips, 3);
    assert_true(sid != 0);
    assert_int_equal(f->h->stack_intern(ips, 3), sid);
    const uint64_t *got = NULL;
    uint32_t n = 0;
    assert_int_equal(f->h->stack_get(sid, &got, &n), JAGER_OK);
    assert_int_equal(n, 3);
    assert_memory_equal(got, ips, sizeof ips);
    assert_int_equal(f->h->stack_get(0, &got, &n), JAGER_E_NOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_table_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_type_requires_own_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emit_reaches_sinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_reads_plugin_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strings_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_is_a_diagnostic_from_the_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_sites_innermost_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spans_through_the_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_site_thread_counter_metadata_stack_info, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
