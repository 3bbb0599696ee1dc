/* test_dispatch_threads.c — several threads feed the dispatch plugin at once (as several
 * Julia threads do): the books stay exact and nothing is lost or duplicated. Runs under
 * TSan in the sanitizer build. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dispatch_fixture.h"
#include "jager.h"

#define NTHREADS 4
#define NSIGS 300 /* signatures per site, shared by all threads */

typedef struct worker {
    const jager_dispatch_api *d;
    jager_site site[2];
    int index;
    int failures;
} worker;

static void *feed(void *arg)
{
    worker *w = arg;
    char sig[64], method[64];
    for (int i = 0; i < NSIGS; i++) {
        snprintf(sig, sizeof sig, "Tuple{typeof(hk), Val{%d}}", i);
        for (int s = 0; s < 2; s++) {
            w->failures += w->d->signature_seen(w->site[s], sig) != JAGER_OK;
            /* Every thread sends the same absolute count: the result must be exactly it. */
            w->failures += w->d->signature_count(w->site[s], sig, (uint64_t)i * 10 + 1) != JAGER_OK;
        }
        snprintf(method, sizeof method, "m%d(x) in Main at t.jl:7", w->index);
        w->failures += w->d->specializations(method, "t.jl", 7, (uint64_t)i) != JAGER_OK;
        w->failures += w->d->compile(0, 100, 10, sig) != JAGER_OK;
        w->failures += w->d->instability(w->site[i % 2], sig, 1, "runtime dispatch", "") != JAGER_OK;
    }
    return NULL;
}

static void test_concurrent_feeders(void **state)
{
    (void)state;
    dfx f;
    assert_int_equal(dfx_start(&f, NULL), 0);
    jager_site s0 = jager_site_register("hk", "t.jl", 1);
    jager_site s1 = jager_site_register("hk2", "t.jl", 2);
    pthread_t th[NTHREADS];
    worker w[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        w[t] = (worker){.d = f.d, .site = {s0, s1}, .index = t};
        assert_int_equal(pthread_create(&th[t], NULL, feed, &w[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_int_equal(w[t].failures, 0);
    }
    uint64_t n = 0;
    assert_int_equal(f.d->site_signatures(s0, &n), JAGER_OK);
    assert_int_equal(n, NSIGS);
    assert_int_equal(f.d->signature_calls(s1, "Tuple{typeof(hk), Val{7}}", &n), JAGER_OK);
    assert_int_equal(n, 71);
    dfx_stop(&f);

    /* Each pair's first sight once, whichever thread came first. */
    assert_int_equal(dfx_count_where(&f, f.t_signature, 4 /* final */, 0), 2 * NSIGS);
    assert_int_equal(dfx_count_where(&f, f.t_signature, 4, 1), 2 * NSIGS);
    assert_int_equal(dfx_count(&f, f.t_compile), NTHREADS * NSIGS);
    assert_int_equal(dfx_count(&f, f.t_instability), NSIGS); /* one per (site, signature) */
    /* Method m<t> found a new count (0, 1, … 299) at every census: all 300 are events. */
    assert_int_equal(dfx_count_where(&f, f.t_specializations, 8 /* final */, 0), NTHREADS * NSIGS);
    const jager_rec_plugin *s = dfx_nth(&f, f.t_summary, 0);
    assert_non_null(s);
    assert_int_equal(s->fields[0], 2);            /* sites */
    assert_int_equal(s->fields[1], 2 * NSIGS);    /* signatures */
    assert_int_equal(s->fields[2], 2);            /* polymorphic sites */
    assert_int_equal(s->fields[3], NTHREADS);     /* methods */
    assert_int_equal(s->fields[4], NTHREADS * (NSIGS - 1)); /* last count of each method */
    assert_int_equal(s->fields[5], NTHREADS * NSIGS);
    assert_int_equal(s->fields[6], NTHREADS * NSIGS * 100ull);
    assert_int_equal(s->fields[9], 0);            /* nothing rejected */
    dfx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_feeders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
