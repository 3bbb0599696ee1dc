/* stats.c — Hodges–Lehmann shift with a Mann–Whitney interval, the U test, Holm, the verdict. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Samples up to this combined size use U's exact distribution: its counts are the
 * coefficients of the Gaussian binomial [n+m choose n]_q, all below C(56, 28) < 2^53, so
 * the polynomial arithmetic below is exact in doubles. */
#define JC_EXACT_MAX_N 56

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double jc_median(const double *v, size_t n)
{
    if (n == 0) return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

/* Counts of U = 0..n·m for samples of n and m untied values: the coefficients of
 * prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i). Multiplying by (1 - q^k) subtracts a shifted
 * copy; dividing by (1 - q^i) is a running sum with stride i. Returns a malloc'd array of
 * n·m + 1 counts, or NULL. */
static double *u_counts(size_t n, size_t m)
{
    size_t len = n * m + 1;
    double *c = calloc(len, sizeof *c);
    if (!c) return NULL;
    c[0] = 1;
    for (size_t i = 1; i <= n; i++) {
        size_t k = m + i;
        for (size_t u = len; u-- > k;) c[u] -= c[u - k];
        for (size_t u = i; u < len; u++) c[u] += c[u - i];
    }
    return c;
}

/* P(U ≤ u) from counts; u < 0 gives 0. */
static double u_cdf(const double *counts, size_t len, double total, long u)
{
    if (u < 0) return 0;
    double s = 0;
    for (long k = 0; k <= u && (size_t)k < len; k++) s += counts[k];
    return s / total;
}

/* z such that P(Z > z) = q, for 0 < q < 0.5 (bisection on erfc; 80 steps reach double precision). */
static double z_upper(double q)
{
    double lo = 0, hi = 40;
    for (int i = 0; i < 80; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(mid / sqrt(2.0)) > q) lo = mid; else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Ranks of a (first na) and b (next nb) in the pooled sample, with the tie term
 * sum(t^3 - t). Returns the rank sum of b, or -1 on OOM; *ties_out gets the tie term. */
static double rank_sum_b(const double *a, size_t na, const double *b, size_t nb, double *ties_out)
{
    size_t n = na + nb;
    struct item { double v; int from_b; } *it = malloc(n * sizeof *it);
    if (!it) return -1;
    for (size_t i = 0; i < na; i++) it[i] = (struct item){a[i], 0};
    for (size_t j = 0; j < nb; j++) it[na + j] = (struct item){b[j], 1};
    /* Sort by value (an insertion sort would do for benchmark sizes; qsort keeps it O(n log n)). */
    qsort(it, n, sizeof *it, cmp_double);
    double rb = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && it[j + 1].v == it[i].v) j++;
        double t = (double)(j - i + 1), rank = 0.5 * (double)(i + j) + 1.0;
        for (size_t k = i; k <= j; k++)
            if (it[k].from_b) rb += rank;
        ties += t * t * t - t;
        i = j + 1;
    }
    free(it);
    *ties_out = ties;
    return rb;
}

static double u_variance(size_t na, size_t nb, double ties)
{
    double n = (double)(na + nb), nm = (double)na * (double)nb;
    return nm / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
}

double jc_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb, int *exact_out)
{
    if (exact_out) *exact_out = 0;
    if (!a || !b || na == 0 || nb == 0) return -1;
    for (size_t i = 0; i < na; i++) if (!isfinite(a[i])) return -1;
    for (size_t j = 0; j < nb; j++) if (!isfinite(b[j])) return -1;
    double ties;
    double rb = rank_sum_b(a, na, b, nb, &ties);
    if (rb < 0) return -1;
    double u = rb - (double)nb * ((double)nb + 1.0) / 2.0; /* pairs (a_i, b_j) with b_j > a_i, ties ½ */
    double mean = (double)na * (double)nb / 2.0;
    if (ties == 0 && na + nb <= JC_EXACT_MAX_N) {
        double *c = u_counts(na, nb);
        if (!c) return -1;
        size_t len = na * nb + 1;
        double total = 0;
        for (size_t k = 0; k < len; k++) total += c[k];
        long ui = lround(u);
        double lower = u_cdf(c, len, total, ui), upper = 1.0 - u_cdf(c, len, total, ui - 1);
        free(c);
        if (exact_out) *exact_out = 1;
        double p = 2.0 * (lower < upper ? lower : upper);
        return p > 1 ? 1 : p;
    }
    double var = u_variance(na, nb, ties);
    if (var <= 0) return 1;                        /* every value tied: no evidence at all */
    double z = (fabs(u - mean) - 0.5) / sqrt(var);  /* continuity correction */
    if (z < 0) z = 0;
    double p = erfc(z / sqrt(2.0));
    return p > 1 ? 1 : p;
}

int jc_shift_estimate(const double *base, size_t nb, const double *head, size_t nh, double alpha, jc_shift *out)
{
    memset(out, 0, sizeof *out);
    if (!base || !head || nb == 0 || nh == 0 || !(alpha > 0 && alpha < 1)) return -1;
    for (size_t i = 0; i < nb; i++) if (!(isfinite(base[i]) && base[i] > 0)) return -1;
    for (size_t j = 0; j < nh; j++) if (!(isfinite(head[j]) && head[j] > 0)) return -1;
    size_t nd = nb * nh;
    double *lb = malloc(nb * sizeof *lb), *lh = malloc(nh * sizeof *lh), *d = malloc(nd * sizeof *d);
    if (!lb || !lh || !d) goto fail;
    for (size_t i = 0; i < nb; i++) lb[i] = log(base[i]);
    for (size_t j = 0; j < nh; j++) lh[j] = log(head[j]);
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nh; j++) d[i * nh + j] = lh[j] - lb[i];
    qsort(d, nd, sizeof *d, cmp_double);

    int exact = 0;
    out->p = jc_mann_whitney_p(lb, nb, lh, nh, &exact);
    if (out->p < 0) goto fail;
    out->exact = exact;

    /* c = the largest count with P(U ≤ c − 1) ≤ α/2; the interval is [D(c), D(nm+1−c)]
     * (1-based order statistics), covering the shift with probability 1 − 2·P(U ≤ c − 1). */
    size_t c = 1;
    if (exact) {
        double *cnt = u_counts(nb, nh);
        if (!cnt) goto fail;
        double total = 0;
        for (size_t k = 0; k <= nd; k++) total += cnt[k];
        while (c < (nd + 1) / 2 && u_cdf(cnt, nd + 1, total, (long)c) <= alpha / 2) c++;
        free(cnt);
    } else {
        double ties;
        if (rank_sum_b(lb, nb, lh, nh, &ties) < 0) goto fail;
        double sd = sqrt(u_variance(nb, nh, ties));
        double cc = floor((double)nd / 2.0 - z_upper(alpha / 2) * sd + 0.5);
        c = cc < 1 ? 1 : (size_t)cc;
        if (c > (nd + 1) / 2) c = (nd + 1) / 2;
    }
    double hl = nd % 2 ? d[nd / 2] : 0.5 * (d[nd / 2 - 1] + d[nd / 2]);
    out->ratio = exp(hl);
    out->lo = exp(d[c - 1]);
    out->hi = exp(d[nd - c]);
    free(lb); free(lh); free(d);
    return 0;
fail:
    free(lb); free(lh); free(d);
    return -1;
}

typedef struct { double p; size_t i; } pidx;

static int cmp_pidx(const void *a, const void *b)
{
    const pidx *x = a, *y = b;
    return (x->p > y->p) - (x->p < y->p);
}

int jc_holm(double *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) if (p[i] >= 0) k++;
    if (k == 0) return 0;
    pidx *v = malloc(k * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0, j = 0; i < n; i++) if (p[i] >= 0) v[j++] = (pidx){p[i], i};
    qsort(v, k, sizeof *v, cmp_pidx);
    double run = 0;
    for (size_t j = 0; j < k; j++) {
        double adj = (double)(k - j) * v[j].p;
        if (adj > 1) adj = 1;
        if (adj < run) adj = run;   /* adjusted p-values never decrease down the order */
        run = adj;
        p[v[j].i] = adj;
    }
    free(v);
    return 0;
}

const char *jc_verdict_name(jc_verdict v)
{
    switch (v) {
    case JC_UNCHANGED: return "unchanged";
    case JC_REGRESSED: return "regressed";
    case JC_IMPROVED: return "improved";
    case JC_NOISY: return "noisy";
    case JC_NO_VERDICT: return "no verdict";
    }
    return "?";
}

jc_verdict jc_decide(const jc_shift *s, size_t nb, size_t nh, double threshold, double noise, double alpha)
{
    if (nb < JC_MIN_RUNS || nh < JC_MIN_RUNS) return JC_NO_VERDICT;
    double t = threshold > noise ? threshold : noise;
    double up = 1.0 + t, down = 1.0 / (1.0 + t);
    if (s->lo > up && s->p < alpha) return JC_REGRESSED;
    if (s->hi < down && s->p < alpha) return JC_IMPROVED;
    /* Wider than the threshold (on the log scale, so ±t reads the same both ways). */
    if (log(s->hi) - log(s->lo) > log(1.0 + threshold)) return JC_NOISY;
    return JC_UNCHANGED;
}
