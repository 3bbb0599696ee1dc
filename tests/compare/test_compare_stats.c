/* The statistics behind `jager compare`: exact U-test values from the textbook tables, the
 * interval's order statistics, Holm, and the verdict's error rates on synthetic suites
 * (A/A at 10 % jitter over 200 seeds, a 5 % shift, a 20 % improvement, too few runs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "history.h"
#include "stats.h"

/* A small deterministic generator (xorshift64*) and Box–Muller normals: no libc rand state. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}
static double rng_unit(uint64_t *s) { return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0; }
static double rng_normal(uint64_t *s)
{
    double u1 = rng_unit(s), u2 = rng_unit(s);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* n runs of a kernel taking `center` with multiplicative jitter `sd` (log-normal noise). */
static void sample(uint64_t *s, double *v, size_t n, double center, double sd)
{
    for (size_t i = 0; i < n; i++) v[i] = center * exp(sd * rng_normal(s));
}

static void test_exact_p_values(void **state)
{
    (void)state;
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {6, 7, 8, 9, 10};
    int exact = 0;
    /* Complete separation of 5 and 5: 2 of the C(10,5) = 252 arrangements are as extreme. */
    assert_float_equal(jc_mann_whitney_p(a, 5, b, 5, &exact), 2.0 / 252, 1e-12);
    assert_int_equal(exact, 1);
    /* U = 1 (one inversion): P(U <= 1) = 2/252, two-sided 4/252. */
    double c[5] = {1, 2, 3, 4, 7}, d[5] = {6, 8, 9, 10, 11};
    assert_float_equal(jc_mann_whitney_p(c, 5, d, 5, &exact), 4.0 / 252, 1e-12);
    /* Identical samples interleaved perfectly: p = 1. */
    double e[4] = {1, 3, 5, 7}, f[4] = {2, 4, 6, 8};
    assert_true(jc_mann_whitney_p(e, 4, f, 4, &exact) > 0.6);
    /* Ties force the normal approximation with tie correction. */
    double g[6] = {1, 1, 2, 2, 3, 3}, h[6] = {2, 2, 3, 3, 4, 4};
    double p = jc_mann_whitney_p(g, 6, h, 6, &exact);
    assert_int_equal(exact, 0);
    assert_true(p > 0.05 && p < 0.5);
    /* Every value tied: no evidence. */
    double k[5] = {2, 2, 2, 2, 2};
    assert_float_equal(jc_mann_whitney_p(k, 5, k, 5, &exact), 1.0, 0);
    /* Bad input. */
    double nan_v[2] = {1, NAN};
    assert_true(jc_mann_whitney_p(nan_v, 2, a, 5, NULL) < 0);
    assert_true(jc_mann_whitney_p(a, 0, b, 5, NULL) < 0);
}

static void test_interval_order_statistics(void **state)
{
    (void)state;
    /* n = m = 5 at 95 %: P(U <= 2) = 0.0159 <= 0.025 < P(U <= 3), so the interval is
     * [D(3), D(23)] of the 25 sorted log differences. With head = 2 × base (no ties)
     * the differences are log(2 j / i); check the estimate and both ends against them. */
    double base[5] = {1.0, 1.3, 1.7, 2.2, 2.9}, head[5];
    for (int i = 0; i < 5; i++) head[i] = 2 * base[i];
    double dd[25];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) dd[i * 5 + j] = log(head[j] / base[i]);
    for (int i = 1; i < 25; i++)  /* insertion sort */
        for (int j = i; j > 0 && dd[j - 1] > dd[j]; j--) { double t = dd[j]; dd[j] = dd[j - 1]; dd[j - 1] = t; }
    jc_shift s;
    assert_int_equal(jc_shift_estimate(base, 5, head, 5, 0.05, &s), 0);
    assert_int_equal(s.exact, 1);
    assert_float_equal(s.ratio, exp(dd[12]), 1e-12);
    assert_float_equal(s.lo, exp(dd[2]), 1e-12);
    assert_float_equal(s.hi, exp(dd[22]), 1e-12);
    /* A pure scale change is found exactly whatever the spread. */
    assert_float_equal(s.ratio, 2.0, 1e-12);
    /* Non-positive times are refused. */
    double bad[5] = {1, 2, 0, 4, 5};
    assert_int_equal(jc_shift_estimate(bad, 5, head, 5, 0.05, &s), -1);
}

static void test_holm(void **state)
{
    (void)state;
    double p[5] = {0.01, 0.04, -1, 0.03, 0.005};
    assert_int_equal(jc_holm(p, 5), 0);
    /* sorted 0.005, 0.01, 0.03, 0.04 (k = 4): 0.02, 0.03, 0.06, 0.06 (monotone) */
    assert_float_equal(p[4], 0.02, 1e-12);
    assert_float_equal(p[0], 0.03, 1e-12);
    assert_float_equal(p[3], 0.06, 1e-12);
    assert_float_equal(p[1], 0.06, 1e-12);
    assert_float_equal(p[2], -1, 0);
}

/* One synthetic suite: `n` runs a side, the head's centre `shift` × the base's. */
static jc_verdict verdict_of(uint64_t *s, size_t n, double shift, double jitter)
{
    double b[64], h[64];
    sample(s, b, n, 1e6, jitter);
    sample(s, h, n, 1e6 * shift, jitter);
    jc_shift sh;
    assert_int_equal(jc_shift_estimate(b, n, h, n, 0.05, &sh), 0);
    return jc_decide(&sh, n, n, 0.03, 0, 0.05);
}

static void test_aa_false_alarms(void **state)
{
    (void)state;
    /* A/A at 10 % jitter, 15 runs a side, 200 seeds: a verdict of change at most α's share
     * (it is far rarer: the interval must also clear the threshold). */
    int flagged = 0, noisy = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed * 0x9E3779B97F4A7C15ull;
        jc_verdict v = verdict_of(&s, 15, 1.0, 0.10);
        flagged += v == JC_REGRESSED || v == JC_IMPROVED;
        noisy += v == JC_NOISY;
    }
    assert_true(flagged <= 10);      /* α = 5 % of 200 */
    assert_int_equal(noisy, 200 - flagged); /* 10 % jitter is wider than a 3 % threshold: inconclusive */
    /* At 0.5 % jitter A/A is "unchanged", never noisy. */
    int unchanged = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed * 0x2545F4914F6CDD1Dull;
        unchanged += verdict_of(&s, 15, 1.0, 0.005) == JC_UNCHANGED;
    }
    assert_int_equal(unchanged, 200);
}

static void test_true_shifts(void **state)
{
    (void)state;
    /* A true 5 % slowdown at 1 % jitter with 20 runs a side: detected every time. */
    int found = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed * 0xD1B54A32D192ED03ull;
        found += verdict_of(&s, 20, 1.05, 0.01) == JC_REGRESSED;
    }
    assert_true(found >= 198);
    /* A 20 % improvement at 3 % jitter: reported as one. */
    int improved = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed * 0x94D049BB133111EBull;
        improved += verdict_of(&s, 20, 0.80, 0.03) == JC_IMPROVED;
    }
    assert_true(improved >= 198);
    /* A 2 % change is below the 3 % threshold: unchanged, not a regression. */
    int regressed = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed * 0xBF58476D1CE4E5B9ull;
        regressed += verdict_of(&s, 20, 1.02, 0.003) == JC_REGRESSED;
    }
    assert_int_equal(regressed, 0);
}

static void test_too_few_runs(void **state)
{
    (void)state;
    uint64_t s = 42;
    /* Even a 50 % slowdown gets no verdict from 4 runs a side. */
    assert_int_equal(verdict_of(&s, 4, 1.5, 0.01), JC_NO_VERDICT);
    assert_int_equal(verdict_of(&s, 5, 1.5, 0.01), JC_REGRESSED);
    assert_string_equal(jc_verdict_name(JC_NO_VERDICT), "no verdict");
}

static void test_noise_floor_raises_the_bar(void **state)
{
    (void)state;
    /* A 5 % shift measured exactly clears a 3 % threshold, but not a 6 % noise floor. */
    jc_shift s = {1.05, 1.045, 1.055, 0.001, 1};
    assert_int_equal(jc_decide(&s, 10, 10, 0.03, 0.0, 0.05), JC_REGRESSED);
    assert_int_equal(jc_decide(&s, 10, 10, 0.03, 0.06, 0.05), JC_UNCHANGED);
    /* Significant interval but p above α after correction: not a regression. */
    s.p = 0.2;
    assert_int_equal(jc_decide(&s, 10, 10, 0.03, 0.0, 0.05), JC_UNCHANGED);
}

static void test_history_change_points(void **state)
{
    (void)state;
    uint64_t s = 7;
    double v[40];
    jh_change ch[8];
    /* A 6 % step at result 12 of 24, 1 % noise: one change there. */
    for (int i = 0; i < 24; i++) v[i] = (i < 12 ? 1000 : 1060) * exp(0.01 * rng_normal(&s));
    int n = jh_find_changes(v, 24, 0.03, 0.05, ch, 8);
    assert_int_equal(n, 1);
    assert_true(ch[0].at >= 11 && ch[0].at <= 13);
    assert_float_equal(ch[0].ratio, 1.06, 0.02);
    /* A slow drift: +0.4 % per result over 40 results (17 % in all), no step above noise on
     * its own — found as a change of more than the threshold. */
    for (int i = 0; i < 40; i++) v[i] = 1000 * pow(1.004, i) * exp(0.005 * rng_normal(&s));
    n = jh_find_changes(v, 40, 0.03, 0.05, ch, 8);
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) assert_true(ch[i].ratio > 1.03);
    /* Flat noise: none; too short: none; bad input refused. */
    for (int i = 0; i < 30; i++) v[i] = 1000 * exp(0.02 * rng_normal(&s));
    assert_int_equal(jh_find_changes(v, 30, 0.03, 0.05, ch, 8), 0);
    assert_int_equal(jh_find_changes(v, 5, 0.03, 0.05, ch, 8), 0);
    v[3] = -1;
    assert_int_equal(jh_find_changes(v, 30, 0.03, 0.05, ch, 8), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_p_values),
        cmocka_unit_test(test_interval_order_statistics),
        cmocka_unit_test(test_holm),
        cmocka_unit_test(test_aa_false_alarms),
        cmocka_unit_test(test_true_shifts),
        cmocka_unit_test(test_too_few_runs),
        cmocka_unit_test(test_noise_floor_raises_the_bar),
        cmocka_unit_test(test_history_change_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
