/*
 * stats.h — the statistics behind `jager compare`: a shift estimate with a distribution-free
 * confidence interval, a rank test, a multiple-comparison correction and the verdict rule.
 *
 * Benchmark times are positive and their noise is multiplicative (a busy neighbour makes a
 * run a few percent slower, not a few nanoseconds), so everything works on log(time): the
 * Hodges–Lehmann estimate of the shift between two samples of logs is the log of the
 * "typical" ratio head/base, and its confidence interval comes from the order statistics of
 * the n·m pairwise differences, cut where the Mann–Whitney U distribution puts α/2 in each
 * tail (exact for small untied samples, normal with tie correction otherwise). Neither
 * assumes normal noise, and one outlier run moves neither.
 *
 * Pure functions, no I/O, no global state; the caller owns every array.
 */
#ifndef JAGER_COMPARE_STATS_H
#define JAGER_COMPARE_STATS_H

#include <stddef.h>

/** Fewer runs than this on either side: no verdict. */
#define JC_MIN_RUNS 5

/** The shift of \p head against \p base, as a ratio head/base. */
typedef struct jc_shift {
    double ratio;       /**< exp(Hodges–Lehmann estimate of the log shift) */
    double lo, hi;      /**< confidence interval of the ratio (1 − alpha) */
    double p;           /**< two-sided Mann–Whitney U p-value (before any correction) */
    int exact;          /**< 1: U's exact distribution was used; 0: the normal approximation */
} jc_shift;

/**
 * \brief Compare two samples of positive values.
 * \param base,nb the first sample (not modified); \param head,nh the second.
 * \param alpha two-sided level of the interval (0.05 for a 95 % interval).
 * \param out receives the result.
 * \return 0; -1 when a sample is empty, a value is not finite and positive, or memory runs out.
 */
int jc_shift_estimate(const double *base, size_t nb, const double *head, size_t nh, double alpha, jc_shift *out);

/**
 * \brief Two-sided Mann–Whitney U test of \p a against \p b (any finite values).
 * \param exact_out receives 1 when the exact distribution was used (may be NULL).
 * \return the p-value in [0, 1], or -1 on bad input or out of memory.
 */
double jc_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb, int *exact_out);

/**
 * \brief Holm's step-down correction, in place: \p p[i] becomes the adjusted p-value.
 *        Entries below 0 (tests not made) are left as they are and not counted.
 * \return 0, or -1 out of memory.
 */
int jc_holm(double *p, size_t n);

/** The median of \p v (copied, not modified). NaN when n is 0. */
double jc_median(const double *v, size_t n);

/** What a comparison says about one kernel. Stored as text in results; never reorder. */
typedef enum jc_verdict {
    JC_UNCHANGED = 0,   /**< the interval lies within the threshold */
    JC_REGRESSED = 1,   /**< the interval lies above 1 + max(threshold, noise) and p < α */
    JC_IMPROVED = 2,    /**< the interval lies below 1 / (1 + max(threshold, noise)) and p < α */
    JC_NOISY = 3,       /**< the interval is wider than the threshold: inconclusive */
    JC_NO_VERDICT = 4   /**< fewer than JC_MIN_RUNS runs on a side */
} jc_verdict;

/** "unchanged", "regressed", "improved", "noisy", "no verdict". */
const char *jc_verdict_name(jc_verdict v);

/**
 * \brief The verdict for one kernel.
 * \param s the shift (its p should already be Holm-corrected over the suite).
 * \param nb,nh runs per side; \param threshold relative change that matters (0.03 = 3 %);
 * \param noise relative noise floor measured by an A/A calibration (0 when unknown);
 * \param alpha significance level.
 */
jc_verdict jc_decide(const jc_shift *s, size_t nb, size_t nh, double threshold, double noise, double alpha);

#endif
