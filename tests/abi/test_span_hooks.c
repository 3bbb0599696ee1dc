/*
 * Span hooks (plugin ABI 1.3, issue 10): the "hooks" test plugin hooks the sites named
 * "hook.a" and "hook.b" and counts every begin and end call, checking that each end
 * matches the last begin on its thread and names a hooked site. Exact counts on the
 * hooked sites, none on the others, every span still recorded exactly, none after stop,
 * none after span_hook_remove, at most 32 hooked spans open per thread told.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "abi_util.h"
#include "testutil.h"
#include "tp_probe.h"

#define N 1000
#define THREADS 3

static const tp_probe *probe(void) { return jager_extension_get(TP_PROBE_ID); }

static jager_site site_a, site_b, site_c;

static uint64_t site_calls(jager_site s)
{
    jager_site_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_site_stats(s, &st), JAGER_OK);
    return st.calls;
}

/* Per round: a (hooked) around b (hooked) and c (not); c around a; c alone. */
static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
        jager_span a = jager_span_begin(site_a);
        jager_span b = jager_span_begin(site_b);
        jager_span c = jager_span_begin(site_c);
        jager_span_end(c);
        jager_span_end(b);
        jager_span_end(a);
        c = jager_span_begin(site_c);
        a = jager_span_begin(site_a);
        jager_span_end(a);
        jager_span_end(c);
        jager_span_end(jager_span_begin(site_c));
    }
    return NULL;
}

static void test_hooked_sites_told_exactly(void **st)
{
    (void)st;
    site_a = jager_site_register("hook.a", __FILE__, __LINE__); /* before the hook exists */
    abi_run r;
    abi_start(&r, "hooks", TP_DIR);
    assert_int_equal(r.init_status, JAGER_OK);
    const tp_probe *p = probe();
    assert_non_null(p);
    assert_true(p->host->abi_minor >= 3);
    site_b = jager_site_register("hook.b", __FILE__, __LINE__); /* after: hooked by name */
    site_c = jager_site_register("hook.c", __FILE__, __LINE__);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, work, NULL), 0);
    work(NULL);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    const uint64_t rounds = (uint64_t)N * (THREADS + 1);
    assert_int_equal(p->value(TP_V_HOOK_BEGIN_A), 2 * rounds);
    assert_int_equal(p->value(TP_V_HOOK_END_A), 2 * rounds);
    assert_int_equal(p->value(TP_V_HOOK_BEGIN_B), rounds);
    assert_int_equal(p->value(TP_V_HOOK_END_B), rounds);
    assert_int_equal(p->value(TP_V_HOOK_BAD), 0);
    /* Every span recorded as without hooks: a's own plus the one its begin hook records
     * (spans begun inside a hook are not hooked: no recursion). */
    assert_int_equal(site_calls(site_a), 4 * rounds);
    assert_int_equal(site_calls(site_b), rounds);
    assert_int_equal(site_calls(site_c), 3 * rounds);
    assert_int_equal(jager_flush(), JAGER_OK);
    assert_int_equal(memsink_count(r.m, JAGER_EV_SPAN, 1, site_a), 4 * rounds);
    assert_int_equal(memsink_count(r.m, JAGER_EV_SPAN, 1, site_c), 3 * rounds);

    /* Deeper than 32 hooked spans open on a thread: the deeper ones are not told, and
     * every begin told still gets its end. */
    uint64_t ba = p->value(TP_V_HOOK_BEGIN_A), ea = p->value(TP_V_HOOK_END_A);
    jager_span deep[40];
    for (int i = 0; i < 40; i++) deep[i] = jager_span_begin(site_b);
    for (int i = 40; i-- > 0;) jager_span_end(deep[i]);
    assert_int_equal(p->value(TP_V_HOOK_BEGIN_B), rounds + 32);
    assert_int_equal(p->value(TP_V_HOOK_END_B), rounds + 32);
    assert_int_equal(p->value(TP_V_HOOK_BAD), 0);

    /* Removed: no more calls for "hook.a"; "hook.b" still told. */
    assert_int_equal(p->host->span_hook_remove(p->self, (uint32_t)p->value(TP_V_HOOK_ID_A)), JAGER_OK);
    assert_int_equal(p->host->span_hook_remove(p->self, (uint32_t)p->value(TP_V_HOOK_ID_A)), JAGER_E_NOTFOUND);
    work(NULL);
    assert_int_equal(p->value(TP_V_HOOK_BEGIN_A), ba);
    assert_int_equal(p->value(TP_V_HOOK_END_A), ea);
    assert_int_equal(p->value(TP_V_HOOK_BEGIN_B), rounds + 32 + N);
    assert_int_equal(p->value(TP_V_HOOK_END_B), rounds + 32 + N);

    /* Refusals. */
    assert_int_equal(p->host->span_hook_add(p->self, "", NULL, NULL, NULL, NULL), JAGER_E_INVALID);
    abi_finish(&r);
    /* The hooks were removed before stop: the count stop saw is the last one. */
    uint64_t at_stop = p->value(TP_V_HOOK_AT_STOP);
    assert_int_equal(at_stop, ba + ea + 2 * (rounds + 32 + N));
    assert_int_equal(p->host->span_hook_add(p->self, "hook.a", NULL, NULL, NULL, NULL), JAGER_E_STATE);
}

/* A run without the plugin: the sites are no longer hooked (their spans take the plain
 * way again) and a second run with it is told afresh. */
static void test_hooks_end_with_the_run(void **st)
{
    (void)st;
    abi_run r;
    abi_start(&r, "", TP_DIR);
    work(NULL);
    assert_int_equal(site_calls(site_a), 2 * N);
    assert_int_equal(site_calls(site_b), N);
    abi_finish(&r);
    abi_start(&r, "hooks", TP_DIR);
    const tp_probe *p = probe();
    assert_non_null(p);
    work(NULL);
    assert_int_equal(p->value(TP_V_HOOK_BEGIN_A), 2 * N);
    assert_int_equal(p->value(TP_V_HOOK_END_B), N);
    assert_int_equal(p->value(TP_V_HOOK_BAD), 0);
    abi_finish(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hooked_sites_told_exactly),
        cmocka_unit_test(test_hooks_end_with_the_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
