/* test_cuda_clock_fit.c — where CUPTI refuses the timestamp callback, GPU times come from a
 * paired-sample fit of cuptiGetTimestamp against the Jäger clock (a process of its own: the
 * callback is registered once per process). The double's CUPTI clock runs 5 s ahead. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cuda_test_util.h"
#include "fake_cuda.h"
#include "internal.h"
#include "testutil.h"

static int64_t absdiff(uint64_t a, uint64_t b) { return a > b ? (int64_t)(a - b) : (int64_t)(b - a); }

static void test_fit_maps_cupti_times(void **unused)
{
    (void)unused;
    fake_reset(FAKE_NO_TS_CALLBACK);
    fake_set_clock_offset(5000000000ll);
    ct_env(NULL, NULL);
    memsink *m = ct_start();
    assert_non_null(m);
    uint16_t t_kernel = ct_type("cuda.kernel"), t_clock = ct_type("cuda.clock_sample"),
             t_sum = ct_type("cuda.summary");
    uint32_t corr = fake_api_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", NULL);
    uint64_t j0 = jager_now_ns(), c0 = fake_cupti_now();
    tu_sleep_ns(2000000);
    uint64_t j1 = jager_now_ns(), c1 = fake_cupti_now();
    assert_true(fake_buf_begin());
    CUpti_ActivityKernel10 k = ct_kernel(corr, c0, c1, "k");
    assert_true(fake_buf_add(&k, sizeof k));
    fake_buf_finish(1, 0);
    jager_shutdown();
    ct_env_clear();

    assert_int_equal(ct_count(m, t_kernel), 1);
    const jager_rec_plugin *kr = ct_rec(m, t_kernel, 0);
    /* within 200 µs of the Jäger time (memcheck slows the paired samples 30-fold: 10 ms there) */
    assert_true(absdiff(kr->time_ns, j0) < (getenv("JAGER_UNDER_VALGRIND") ? 10000000 : 200000));
    assert_true(absdiff(kr->time_ns + kr->fields[0], j1) < 200000);
    assert_true(ct_count(m, t_clock) >= 5);                     /* 4 at start, one per flush and at stop */
    for (size_t i = 0; i < ct_count(m, t_clock); i++) {
        const jager_rec_plugin *c = ct_rec(m, t_clock, i);
        assert_true(c->fields[0] > 5000000000ull);
        if (i) assert_true(llabs((long long)(int64_t)c->fields[1]) < 200000); /* residual against the fit */
    }
    assert_int_equal(ct_rec(m, t_sum, 0)->fields[21], 2);
    assert_int_equal(ct_diags(m, "cuda", "paired-sample fit"), 1);
    assert_int_equal(fake_get_counts().ts_registrations, 0);
    memsink_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fit_maps_cupti_times)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
