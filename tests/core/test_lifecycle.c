/* Lifecycle: init twice, shutdown idempotent, re-init, disabled mode, configuration from
 * the environment, versions, metadata, the SDK's own cost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "memsink.h"
#include "testutil.h"

static void test_versions_agree(void **state)
{
    (void)state;
    assert_int_equal(jager_version(), JAGER_VERSION_NUMBER);
    assert_string_equal(jager_version_string(), JAGER_VERSION_STRING);
    assert_string_equal(jager_strerror(JAGER_OK), "success");
    assert_string_equal(jager_strerror(JAGER_E_ABI), "ABI version mismatch");
    assert_string_equal(jager_strerror(-999), "unknown status");
}

static void test_init_twice_and_reinit(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    assert_int_equal(jager_init(&c), JAGER_OK);
    assert_int_equal(jager_init(&c), JAGER_E_STATE);
    jager_site s = jager_site_register("cycle", __FILE__, __LINE__);
    jager_span_end(jager_span_begin(s));
    jager_span open_across = jager_span_begin(s);
    jager_shutdown();
    jager_shutdown();
    jager_span_end(open_across); /* after shutdown: a no-op */
    jager_sink sk;
    memsink *m = memsink_new(&sk);
    jager_sink_add(&sk);
    assert_int_equal(jager_init(&c), JAGER_OK);
    jager_site_stat st = {.struct_size = sizeof st};
    jager_site_stats(s, &st);
    assert_int_equal(st.calls, 0); /* aggregates restart with the run */
    jager_span_end(jager_span_begin(s));
    jager_site_stats(s, &st);
    assert_int_equal(st.calls, 1);
    jager_shutdown();
    assert_int_equal(memsink_count(m, JAGER_EV_SPAN, 1, s), 1);
    assert_int_equal(m->opened, 1);
    assert_int_equal(m->closed, 1);
    memsink_free(m);
}

static void test_disabled(void **state)
{
    (void)state;
    setenv("JAGER_DISABLE", "1", 1);
    jager_config c = tu_config(0);
    assert_int_equal(jager_init(&c), JAGER_E_DISABLED);
    assert_int_equal(jager_is_enabled(), 0);
    jager_site s = jager_site_register("off", __FILE__, __LINE__);
    assert_int_equal(jager_span_begin(s).site, 0);
    unsetenv("JAGER_DISABLE");
    jager_shutdown();
}

static void test_config_from_env(void **state)
{
    (void)state;
    jager_config c;
    jager_config_init(&c);
    setenv("JAGER_RING_BYTES", "64K", 1);
    setenv("JAGER_RING_MODE", "overwrite", 1);
    setenv("JAGER_SAMPLE", "1/8", 1);
    setenv("JAGER_FLUSH_MS", "20", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_OK);
    assert_int_equal(c.ring_bytes, 65536);
    assert_int_equal(c.ring_mode, JAGER_RING_OVERWRITE);
    assert_int_equal(c.sample_mode, JAGER_SAMPLE_ONE_IN_N);
    assert_int_equal(c.sample_n, 8);
    assert_int_equal(c.flush_interval_ms, 20);
    setenv("JAGER_SAMPLE", "interval:5", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_OK);
    assert_int_equal(c.sample_mode, JAGER_SAMPLE_INTERVAL);
    assert_int_equal(c.sample_interval_ns, 5000000);
    setenv("JAGER_SAMPLE", "auto", 1); /* thinning on purpose: a budget of 1000 per ms */
    assert_int_equal(jager_config_from_env(&c), JAGER_OK);
    assert_int_equal(c.sample_mode, JAGER_SAMPLE_AUTO);
    assert_int_equal(c.sample_n, 1000);
    assert_int_equal(c.sample_interval_ns, 1000000);
    setenv("JAGER_SAMPLE", "auto:250", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_OK);
    assert_int_equal(c.sample_mode, JAGER_SAMPLE_AUTO);
    assert_int_equal(c.sample_n, 250);
    setenv("JAGER_SAMPLE", "auto:0", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    assert_int_equal(c.sample_n, 250); /* unchanged */
    setenv("JAGER_SAMPLE", "autox", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    setenv("JAGER_SAMPLE", "all", 1); /* how to turn it off */
    assert_int_equal(jager_config_from_env(&c), JAGER_OK);
    assert_int_equal(c.sample_mode, JAGER_SAMPLE_ALL);
    setenv("JAGER_RING_BYTES", "lots", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    assert_non_null(strstr(jager_last_error(), "JAGER_RING_BYTES"));
    assert_int_equal(c.ring_bytes, 65536); /* unchanged */
    setenv("JAGER_RING_MODE", "sometimes", 1);
    assert_int_equal(jager_config_from_env(&c), JAGER_E_INVALID);
    unsetenv("JAGER_RING_BYTES");
    unsetenv("JAGER_RING_MODE");
    unsetenv("JAGER_SAMPLE");
    unsetenv("JAGER_FLUSH_MS");
    assert_int_equal(jager_config_init(NULL), JAGER_E_INVALID);
    jager_config old = tu_config(0);
    old.struct_size = 8; /* a caller from the future's past: too small to be any version */
    assert_int_equal(jager_init(&old), JAGER_E_INVALID);
}

static void test_metadata_and_cost(void **state)
{
    (void)state;
    setenv("JAGER_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567", 1);
    jager_config c = tu_config(0);
    assert_int_equal(jager_init(&c), JAGER_OK);
    assert_non_null(jg_meta_get("host.name"));
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    assert_string_equal(jg_meta_get("process.pid"), pid);
    assert_non_null(strstr(jg_meta_get("process.command_line"), "test_core_lifecycle"));
    assert_string_equal(jg_meta_get("git.commit"), "0123456789abcdef0123456789abcdef01234567");
    assert_int_equal(jager_metadata_set("mpi.rank", "3"), JAGER_OK);
    assert_string_equal(jg_meta_get("mpi.rank"), "3");
    assert_int_equal(jager_metadata_set("jager.version", "x"), JAGER_E_INVALID);
    jager_stat st = {.struct_size = sizeof st};
    assert_int_equal(jager_stats(&st), JAGER_OK);
    assert_true(st.span_cost_ns_x1000 > 0);
    assert_true(st.span_cost_ns_x1000 < 100000000); /* under 100 µs even under valgrind */
    assert_int_equal(st.spans_total, 0); /* calibration spans are erased */
    assert_int_equal(st.events_emitted, 0);
    jager_shutdown();
    unsetenv("JAGER_GIT_COMMIT");
}

static void test_clock_monotonic_and_calibrated(void **state)
{
    (void)state;
    jager_config c = tu_config(0);
    assert_int_equal(jager_init(&c), JAGER_OK);
    uint64_t prev = jager_now_ns();
    for (int i = 0; i < 100000; i++) {
        uint64_t t = jager_now_ns();
        assert_true(t >= prev);
        prev = t;
    }
    /* against CLOCK_MONOTONIC over 20 ms: within 0.5% (calibration is ~0.02% here). Each
     * of our reads is bracketed by two of CLOCK_MONOTONIC, so a preemption (or valgrind's
     * scheduler) between the reads widens the bracket instead of failing the ratio. */
    uint64_t m0a = jg_clock_gettime_ns(), a0 = jager_now_ns(), m0b = jg_clock_gettime_ns();
    tu_sleep_ns(20000000);
    uint64_t m1a = jg_clock_gettime_ns(), a1 = jager_now_ns(), m1b = jg_clock_gettime_ns();
    double lo = (double)(m1a - m0b) * 0.995, hi = (double)(m1b - m0a) * 1.005, ours = (double)(a1 - a0);
    if (!(ours > lo && ours < hi))
        print_error("jager_now_ns moved %.0f ns; CLOCK_MONOTONIC %.0f … %.0f ns\n", ours, lo, hi);
    assert_true(ours > lo && ours < hi);
    /* same time base: within 1 ms of clock_gettime */
    int64_t off = (int64_t)(jager_now_ns() - jg_clock_gettime_ns());
    assert_true(off > -1000000 && off < 1000000);
    jager_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions_agree),
        cmocka_unit_test(test_init_twice_and_reinit),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_config_from_env),
        cmocka_unit_test(test_metadata_and_cost),
        cmocka_unit_test(test_clock_monotonic_and_calibrated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
