/* compare.c — kernels of two results paired by name and file, a verdict each, the suite's warnings. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void jc_options_default(jc_options *o)
{
    o->threshold = 0.03;
    o->alpha = 0.05;
}

/* Kernels pair by (name, file): a line that moved because code above it changed is the
 * same kernel. The line breaks ties when one file has two sites of one name. */
static const jb_kernel *find_kernel(const jb_result *r, const jb_kernel *k)
{
    const jb_kernel *same_name = NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->nkernels; i++) {
        const jb_kernel *c = &r->kernels[i];
        if (strcmp(c->name, k->name) || strcmp(c->file, k->file)) continue;
        if (c->line == k->line) return c;
        same_name = c;
        n++;
    }
    return n == 1 ? same_name : NULL;
}

typedef double (*run_value)(const jb_run *);
static double v_time(const jb_run *r) { return r->median_ns; }
static double v_bytes(const jb_run *r) { return r->calls ? (double)r->bytes / (double)r->calls : 0; }
static double v_calls(const jb_run *r) { return (double)r->calls; }

/* The values of one column of \p k into a malloc'd array (NULL when empty or out of memory). */
static double *column(const jb_kernel *k, run_value f)
{
    if (!k->nruns) return NULL;
    double *v = malloc(k->nruns * sizeof *v);
    if (v) for (size_t i = 0; i < k->nruns; i++) v[i] = f(&k->runs[i]);
    return v;
}

static double median_of(const jb_kernel *k, run_value f)
{
    double *v = column(k, f);
    double m = v ? jc_median(v, k->nruns) : NAN;
    free(v);
    return m;
}

static int fill_row(jc_row *row, const jb_result *base, const jb_result *head, const jc_options *o)
{
    const jb_kernel *b = row->base, *h = row->head;
    const jb_kernel *k = h ? h : b;
    row->threshold = k->threshold > 0 ? k->threshold
                   : (b && b->threshold > 0) ? b->threshold
                   : base->threshold > 0 ? base->threshold
                   : head->threshold > 0 ? head->threshold : o->threshold;
    row->noise = b ? b->noise : 0;
    row->verdict = JC_NO_VERDICT;
    if (b) { row->base_ns = median_of(b, v_time); row->base_bytes = median_of(b, v_bytes); }
    if (h) { row->head_ns = median_of(h, v_time); row->head_bytes = median_of(h, v_bytes); }
    if (!b || !h) return 0;
    row->alloc_regressed = row->head_bytes > row->base_bytes;
    row->alloc_improved = row->head_bytes < row->base_bytes;
    row->calls_differ = median_of(b, v_calls) != median_of(h, v_calls);
    double *bv = column(b, v_time), *hv = column(h, v_time);
    int rc = 0;
    if (!bv || !hv) rc = -1;
    else if (jc_shift_estimate(bv, b->nruns, hv, h->nruns, o->alpha, &row->shift) == 0) row->have_shift = 1;
    free(bv);
    free(hv);
    return rc;
}

static void warn(jc_report *r, const char *fmt, const char *a, const char *b)
{
    for (int i = 0; i < 4; i++)
        if (!r->warnings[i][0]) { snprintf(r->warnings[i], sizeof r->warnings[i], fmt, a, b); return; }
}

static void machine_warnings(jc_report *r, const jb_result *base, const jb_result *head)
{
    if (strcmp(base->machine_class, head->machine_class))
        warn(r, "different machines: base on \"%s\", head on \"%s\"", base->machine_class, head->machine_class);
    else if (base->cores != head->cores || strcmp(base->cpu_flags_hash, head->cpu_flags_hash))
        warn(r, "same CPU model, different machine configuration (cores or CPU flags)%s%s", "", "");
    if (strcmp(base->compiler, head->compiler))
        warn(r, "different toolchains: \"%s\" vs \"%s\"", base->compiler, head->compiler);
    if (strcmp(base->julia_version, head->julia_version))
        warn(r, "different Julia versions: \"%s\" vs \"%s\"", base->julia_version, head->julia_version);
    if (base->budget_exhausted || head->budget_exhausted)
        warn(r, "the time budget cut the runs short%s%s: fewer runs than asked", "", "");
}

int jc_compare(const jb_result *base, const jb_result *head, const jc_options *o, jc_report *out)
{
    memset(out, 0, sizeof *out);
    out->base = base;
    out->head = head;
    size_t cap = head->nkernels + base->nkernels;
    out->rows = calloc(cap ? cap : 1, sizeof *out->rows);
    if (!out->rows) return -1;
    for (size_t i = 0; i < head->nkernels; i++) {
        jc_row *row = &out->rows[out->nrows++];
        row->head = &head->kernels[i];
        row->base = find_kernel(base, row->head);
    }
    for (size_t i = 0; i < base->nkernels; i++)
        if (!find_kernel(head, &base->kernels[i])) out->rows[out->nrows++].base = &base->kernels[i];
    for (size_t i = 0; i < out->nrows; i++)
        if (fill_row(&out->rows[i], base, head, o)) { jc_report_free(out); return -1; }

    /* Holm over every kernel tested; the verdicts use the corrected p-values. */
    double *p = malloc(out->nrows * sizeof *p + 1);
    if (!p) { jc_report_free(out); return -1; }
    for (size_t i = 0; i < out->nrows; i++) {
        const jc_row *row = &out->rows[i];
        int tested = row->have_shift && row->base->nruns >= JC_MIN_RUNS && row->head->nruns >= JC_MIN_RUNS;
        p[i] = tested ? row->shift.p : -1;
    }
    if (jc_holm(p, out->nrows)) { free(p); jc_report_free(out); return -1; }
    for (size_t i = 0; i < out->nrows; i++) {
        jc_row *row = &out->rows[i];
        if (!row->base) { out->added++; continue; }
        if (!row->head) { out->removed++; continue; }
        if (row->have_shift) {
            row->shift.p = p[i] >= 0 ? p[i] : row->shift.p;
            row->verdict = jc_decide(&row->shift, row->base->nruns, row->head->nruns, row->threshold, row->noise, o->alpha);
        }
        switch (row->verdict) {
        case JC_REGRESSED: out->regressed++; break;
        case JC_IMPROVED: out->improved++; break;
        case JC_NOISY: out->noisy++; break;
        case JC_NO_VERDICT: out->no_verdict++; break;
        case JC_UNCHANGED: break;
        }
        if (row->alloc_regressed) out->alloc_regressed++;
    }
    free(p);
    machine_warnings(out, base, head);
    return 0;
}

void jc_report_free(jc_report *r)
{
    if (!r) return;
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}

int jc_report_failed(const jc_report *r)
{
    return r->regressed > 0 || r->alloc_regressed > 0;
}
