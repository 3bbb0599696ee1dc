/* history.c — binary segmentation with a permutation test on log values. */
#include "history.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JH_PERMUTATIONS 999

/* Best split of x[0..n): its index (first of the right part) and its statistic. */
static double best_split(const double *x, size_t n, size_t *at)
{
    double total = 0;
    for (size_t i = 0; i < n; i++) total += x[i];
    double left = 0, best = -1;
    *at = 0;
    for (size_t k = 1; k < n; k++) {
        left += x[k - 1];
        if (k < JH_MIN_SEG || n - k < JH_MIN_SEG) continue;
        double ml = left / (double)k, mr = (total - left) / (double)(n - k);
        double t = (double)k * (double)(n - k) / (double)n * (ml - mr) * (ml - mr);
        if (t > best) { best = t; *at = k; }
    }
    return best;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

typedef struct search {
    double threshold, alpha;
    jh_change *out;
    size_t cap, n;
    double *scratch;
} search;

static void segment(search *s, const double *x, size_t off, size_t n)
{
    if (n < 2 * JH_MIN_SEG || s->n >= s->cap) return;
    size_t at;
    double t = best_split(x + off, n, &at);
    if (t <= 0) return;
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ (uint64_t)n ^ ((uint64_t)off << 32);
    memcpy(s->scratch, x + off, n * sizeof *x);
    size_t as_good = 0, dummy;
    for (int p = 0; p < JH_PERMUTATIONS; p++) {
        for (size_t i = n - 1; i > 0; i--) {   /* Fisher–Yates */
            size_t j = (size_t)(next(&seed) % (i + 1));
            double tmp = s->scratch[i]; s->scratch[i] = s->scratch[j]; s->scratch[j] = tmp;
        }
        if (best_split(s->scratch, n, &dummy) >= t) as_good++;
    }
    double pval = (double)(as_good + 1) / (JH_PERMUTATIONS + 1);
    double ml = 0, mr = 0;
    for (size_t i = 0; i < at; i++) ml += x[off + i];
    for (size_t i = at; i < n; i++) mr += x[off + i];
    double ratio = exp(mr / (double)(n - at) - ml / (double)at);
    if (pval >= s->alpha || fabs(log(ratio)) <= log(1 + s->threshold)) return;
    segment(s, x, off, at);
    if (s->n < s->cap) s->out[s->n++] = (jh_change){off + at, ratio, pval};
    segment(s, x, off + at, n - at);
}

int jh_find_changes(const double *v, size_t n, double threshold, double alpha, jh_change *out, size_t cap)
{
    if (!v || (!out && cap) || !(threshold > 0) || !(alpha > 0 && alpha < 1)) return -1;
    for (size_t i = 0; i < n; i++) if (!(isfinite(v[i]) && v[i] > 0)) return -1;
    double *x = malloc((n ? n : 1) * sizeof *x), *scratch = malloc((n ? n : 1) * sizeof *x);
    if (!x || !scratch) { free(x); free(scratch); return -1; }
    for (size_t i = 0; i < n; i++) x[i] = log(v[i]);
    search s = {threshold, alpha, out, cap, 0, scratch};
    segment(&s, x, 0, n);
    free(x);
    free(scratch);
    return (int)s.n;
}
