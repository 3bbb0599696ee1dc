/* Logs (severity, body, attributes, open span, trace context), counters, marks, span
 * attributes and errors, plugin events and their validation. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "memsink.h"
#include "testutil.h"

static memsink *start(void)
{
    jager_sink s;
    memsink *m = memsink_new(&s);
    jager_sink_add(&s);
    jager_config c = tu_config(0);
    assert_int_equal(jager_init(&c), JAGER_OK);
    return m;
}

static const jager_record *first(const memsink *m, uint16_t type)
{
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == type) return r.rec;
    }
    return NULL;
}

/* Decode one attribute at *p (the layout documented in jager_plugin.h). */
static const uint8_t *attr(const uint8_t *p, char *key, uint16_t *kind, const uint8_t **val, uint32_t *vlen)
{
    uint16_t klen;
    memcpy(&klen, p, 2);
    memcpy(kind, p + 2, 2);
    memcpy(vlen, p + 4, 4);
    memcpy(key, p + 8, klen);
    key[klen] = 0;
    *val = p + 8 + klen;
    return p + ((8 + klen + *vlen + 7) & ~7u);
}

static void test_log_record(void **state)
{
    (void)state;
    memsink *m = start();
    jager_site s = jager_site_register("with_log", __FILE__, __LINE__);
    jager_trace_context ctx;
    jager_trace_context_new(&ctx);
    jager_context_set(&ctx);
    jager_span sp = jager_span_begin(s);
    jager_attr attrs[4] = {
        {.key = "iter", .kind = JAGER_ATTR_I64, .value.i64 = 42},
        {.key = "residual", .kind = JAGER_ATTR_F64, .value.f64 = 1.5e-9},
        {.key = "solver", .kind = JAGER_ATTR_STR, .value.str = "<cg>\"x\""},
        {.key = "converged", .kind = JAGER_ATTR_BOOL, .value.boolean = 1},
    };
    jager_log(JAGER_SEV_WARN, "residual stalled", attrs, 4);
    jager_span_end(sp);
    jager_shutdown();
    const jager_rec_log *l = (const jager_rec_log *)first(m, JAGER_EV_LOG);
    assert_non_null(l);
    assert_int_equal(l->h.aux, JAGER_SEV_WARN);
    assert_int_equal(l->span_id, sp.id);
    assert_int_equal(l->site, s);
    assert_memory_equal(l->trace_id, ctx.trace_id, 16);
    assert_int_equal(l->body_len, strlen("residual stalled"));
    assert_memory_equal((const char *)(l + 1), "residual stalled", l->body_len);
    assert_int_equal(l->nattrs, 4);
    const uint8_t *p = (const uint8_t *)(l + 1) + ((l->body_len + 7) & ~7u);
    char key[64];
    uint16_t kind;
    const uint8_t *val;
    uint32_t vlen;
    int64_t i;
    double d;
    p = attr(p, key, &kind, &val, &vlen);
    memcpy(&i, val, 8);
    assert_string_equal(key, "iter");
    assert_int_equal(kind, JAGER_ATTR_I64);
    assert_int_equal(i, 42);
    p = attr(p, key, &kind, &val, &vlen);
    memcpy(&d, val, 8);
    assert_string_equal(key, "residual");
    assert_true(d == 1.5e-9);
    p = attr(p, key, &kind, &val, &vlen);
    assert_string_equal(key, "solver");
    assert_int_equal(vlen, strlen("<cg>\"x\""));
    assert_memory_equal(val, "<cg>\"x\"", vlen);
    p = attr(p, key, &kind, &val, &vlen);
    memcpy(&i, val, 8);
    assert_int_equal(kind, JAGER_ATTR_BOOL);
    assert_int_equal(i, 1);
    assert_ptr_equal(p, (const uint8_t *)l + l->h.words * 8u);
    memsink_free(m);
}

static void test_log_truncation_and_clamp(void **state)
{
    (void)state;
    memsink *m = start();
    static char big[10000];
    memset(big, 'x', sizeof big - 1);
    jager_log(99, big, NULL, 0);
    jager_log(-3, NULL, NULL, 0);
    jager_shutdown();
    const jager_rec_log *l = (const jager_rec_log *)first(m, JAGER_EV_LOG);
    assert_non_null(l);
    assert_int_equal(l->h.aux & 0xff, 24);
    assert_true(l->h.aux & JAGER_LOG_TRUNCATED);
    assert_int_equal(l->body_len, 4096);
    assert_int_equal(memsink_count(m, JAGER_EV_LOG, 1, 1), 1); /* severity clamped to 1, empty body */
    memsink_free(m);
}

static void test_counters_and_marks(void **state)
{
    (void)state;
    memsink *m = start();
    jager_counter c = jager_counter_register("bytes_sent", "bytes", JAGER_COUNTER_MONOTONIC);
    jager_counter g = jager_counter_register("queue_depth", NULL, JAGER_COUNTER_GAUGE);
    assert_int_equal(jager_counter_register("bytes_sent", "bytes", JAGER_COUNTER_MONOTONIC), c);
    assert_int_equal(jager_counter_register("x", NULL, 7), 0);
    jager_counter_add(c, 10);
    jager_counter_add(c, 5.5);
    jager_counter_set(g, 3);
    jager_mark("checkpoint");
    jager_mark("checkpoint");
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_COUNTER, 1, c), 2);
    assert_int_equal(memsink_count(m, JAGER_EV_COUNTER, 1, g), 1);
    double last = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == JAGER_EV_COUNTER && r.rec->aux == c) last = ((const jager_rec_counter *)r.rec)->value;
    }
    assert_true(last == 15.5); /* running total */
    uint32_t id = jg_intern("checkpoint");
    assert_int_equal(memsink_count(m, JAGER_EV_MARK, 1, id), 2);
    const jg_counter_info *ci = jg_counter_get(c);
    assert_string_equal(jg_string(ci->name), "bytes_sent");
    assert_string_equal(jg_string(ci->unit), "bytes");
    memsink_free(m);
}

/* A monotonic counter's total is one for the whole process: 4 threads × 1000 adds of 1
 * give the samples 1 … 4000, each once, and in time order (a later stamp never carries a
 * smaller total) they read 1, 2, …, 4000. Each recording starts from 0 (the total is reset
 * at jager_init); a negative or NaN delta is ignored. */
#define CT_THREADS 4
#define CT_ADDS 1000
static jager_counter ct_counter;

static void *ct_adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < CT_ADDS; i++) {
        jager_counter_add(ct_counter, 1);
        if (i % 50 == 49) sched_yield(); /* interleave the threads' adds */
    }
    return NULL;
}

static int by_time_then_value(const void *a, const void *b)
{
    const jager_rec_counter *x = *(const jager_rec_counter *const *)a, *y = *(const jager_rec_counter *const *)b;
    if (x->time_ns != y->time_ns) return x->time_ns < y->time_ns ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

static double last_sample(const memsink *m, jager_counter c, size_t *n)
{
    double v = -1;
    *n = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type == JAGER_EV_COUNTER && r.rec->aux == c) v = ((const jager_rec_counter *)r.rec)->value, (*n)++;
    }
    return v;
}

static void test_counter_total_is_the_process(void **state)
{
    (void)state;
    memsink *m = start();
    ct_counter = jager_counter_register("items_done", "items", JAGER_COUNTER_MONOTONIC);
    pthread_t t[CT_THREADS];
    for (int i = 0; i < CT_THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, ct_adder, NULL), 0);
    for (int i = 0; i < CT_THREADS; i++) pthread_join(t[i], NULL);
    jager_shutdown();
    const jager_rec_counter *s[CT_THREADS * CT_ADDS];
    size_t n = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        memsink_rec r = memsink_at(m, i);
        if (r.rec->type != JAGER_EV_COUNTER || r.rec->aux != ct_counter) continue;
        assert_true(n < CT_THREADS * CT_ADDS);
        s[n++] = (const jager_rec_counter *)r.rec;
    }
    assert_int_equal(n, CT_THREADS * CT_ADDS);
    qsort(s, n, sizeof s[0], by_time_then_value);
    for (size_t i = 0; i < n; i++)
        if (s[i]->value != (double)(i + 1)) fail_msg("in time order sample %zu is %g, not %zu", i, s[i]->value, i + 1);
    memsink_free(m);

    m = start(); /* a second recording in the process: from 0 again */
    jager_counter_add(ct_counter, 10);
    jager_shutdown();
    double v = last_sample(m, ct_counter, &n);
    assert_int_equal(n, 1);
    assert_true(v == 10);
    memsink_free(m);

    m = start();
    jager_counter_add(ct_counter, -3);
    jager_counter_add(ct_counter, NAN);
    jager_counter_add(ct_counter, 5);
    jager_shutdown();
    v = last_sample(m, ct_counter, &n);
    assert_int_equal(n, 1);
    assert_true(v == 5);
    memsink_free(m);
}

static void test_span_attrs_and_errors(void **state)
{
    (void)state;
    memsink *m = start();
    jager_site s = jager_site_register("fails", __FILE__, __LINE__);
    jager_span sp = jager_span_begin(s);
    jager_attr a = {.key = "n", .kind = JAGER_ATTR_I64, .value.i64 = 7};
    jager_span_set_attrs(sp, &a, 1);
    jager_span_error(sp, "DomainError: sqrt(-1)");
    jager_span_end(sp);
    jager_site_stat st = {.struct_size = sizeof st};
    jager_site_stats(s, &st);
    assert_int_equal(st.errors, 1);
    jager_shutdown();
    const jager_rec_span_attr *at = (const jager_rec_span_attr *)first(m, JAGER_EV_SPAN_ATTR);
    assert_non_null(at);
    assert_int_equal(at->span_id, sp.id);
    assert_int_equal(at->h.aux, s);
    const jager_rec_span_error *e = (const jager_rec_span_error *)first(m, JAGER_EV_SPAN_ERROR);
    assert_non_null(e);
    assert_int_equal(e->span_id, sp.id);
    assert_int_equal(e->msg_len, strlen("DomainError: sqrt(-1)"));
    assert_memory_equal(e + 1, "DomainError: sqrt(-1)", e->msg_len);
    memsink_free(m);
}

static void test_plugin_emit_validated(void **state)
{
    (void)state;
    memsink *m = start();
    jager_field_desc f[2] = {{"duration_ns", JAGER_FIELD_DURATION_NS, 0}, {"bytes", JAGER_FIELD_BYTES, 0}};
    uint16_t t = 0, t2 = 0;
    assert_int_equal(jg_type_register("test.thing", f, 2, 0, &t), JAGER_OK);
    assert_true(t >= JAGER_EV_FIRST_PLUGIN);
    assert_int_equal(jg_type_register("test.thing", f, 2, 0, &t2), JAGER_OK);
    assert_int_equal(t, t2);
    assert_int_equal(jg_type_register("test.thing", f, 1, 0, &t2), JAGER_E_INVALID);
    jager_field_desc badk = {"x", 99, 0};
    assert_int_equal(jg_type_register("test.bad", &badk, 1, 0, &t2), JAGER_E_INVALID);
    uint64_t v[2] = {1234, 5678};
    jg_emit_plugin(t, 777, v, 2);
    jg_emit_plugin(t, 0, v, 1);           /* wrong field count: refused */
    jg_emit_plugin(JAGER_EV_SPAN, 0, v, 2); /* core type: refused */
    jg_emit_plugin(65000, 0, v, 2);       /* unregistered: refused */
    jager_shutdown();
    assert_int_equal(memsink_count(m, t, 0, 0), 1);
    const jager_rec_plugin *p = (const jager_rec_plugin *)first(m, t);
    assert_int_equal(p->time_ns, 777);
    assert_int_equal(p->fields[0], 1234);
    assert_int_equal(p->fields[1], 5678);
    assert_int_equal(p->h.words, 4);
    assert_string_equal(jg_type_get(t)->name, "test.thing");
    assert_string_equal(jg_type_get(JAGER_EV_LOG)->name, "log");
    memsink_free(m);
}

static void test_stacks_and_symbols(void **state)
{
    (void)state;
    uint64_t a[3] = {0x1000, 0x2000, 0x3000}, b[2] = {0x1000, 0x4000};
    jager_stack_id sa = jager_stack_intern(a, 3), sb = jager_stack_intern(b, 2);
    assert_true(sa && sb && sa != sb);
    assert_int_equal(jager_stack_intern(a, 3), sa);
    const uint64_t *ips;
    uint32_t n;
    assert_true(jg_stack_get(sa, &ips, &n));
    assert_int_equal(n, 3);
    assert_int_equal(ips[2], 0x3000);
    uint64_t un[16];
    size_t k = jager_symbols_unresolved(un, 16);
    assert_int_equal(k, 4); /* 0x1000 0x2000 0x3000 0x4000, each once */
    assert_int_equal(jager_symbols_unresolved(un, 16), 0);
    uint32_t before = jg_symbol_count();
    assert_int_equal(jager_symbol_add(0x2000, 0, "assemble", "fem.jl", 88), JAGER_OK);
    assert_int_equal(jager_symbol_add(0x2000, 1, "getindex", "array.jl", 801), JAGER_OK);
    assert_int_equal(jg_symbol_count(), before + 2);
    const jg_symbol *sym = jg_symbol_at(before);
    assert_int_equal(sym->ip, 0x2000);
    assert_string_equal(jg_string(sym->func), "assemble");
    assert_int_equal(sym->line, 88);
    /* a real code address gets named by dladdr */
    uint64_t real[1] = {(uint64_t)(uintptr_t)&fopen + 1}; /* a libc export: the test binary exports nothing */
    jager_stack_intern(real, 1);
    jg_symbols_resolve_native();
    int named = 0;
    for (uint32_t i = 0; i < jg_symbol_count(); i++)
        if (jg_symbol_at(i)->ip == real[0] && strstr(jg_string(jg_symbol_at(i)->func), "fopen")) named = 1;
    assert_true(named);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_record),
        cmocka_unit_test(test_log_truncation_and_clamp),
        cmocka_unit_test(test_counters_and_marks),
        cmocka_unit_test(test_counter_total_is_the_process),
        cmocka_unit_test(test_span_attrs_and_errors),
        cmocka_unit_test(test_plugin_emit_validated),
        cmocka_unit_test(test_stacks_and_symbols),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
