/*
 * compare.h — `jager compare`: one row per kernel of two benchmark results, with the time
 * verdict (stats.h), the exact allocation gate and the suite's warnings; and the outputs
 * (terminal table, GitHub Markdown, workflow annotations).
 *
 * Time: each run's median call (exact from the span events when every call is in the file); the shift's interval and Mann–Whitney
 * p-value (Holm-corrected over every kernel that has one) decide regressed / improved /
 * noisy / unchanged, or no verdict below JC_MIN_RUNS runs. Allocations: bytes per call do
 * not jitter, so any growth of the median bytes per call fails (exact gate).
 */
#ifndef JAGER_COMPARE_COMPARE_H
#define JAGER_COMPARE_COMPARE_H

#include <stdio.h>

#include "bench_doc.h"
#include "stats.h"

typedef struct jc_options {
    double threshold;       /**< relative change that matters, unless a kernel sets its own (default 0.03) */
    double alpha;           /**< significance level (default 0.05) */
} jc_options;

typedef struct jc_row {
    const jb_kernel *base, *head;   /**< NULL: the kernel is new (no base) or was removed (no head) */
    int have_shift;
    jc_shift shift;                 /**< p Holm-corrected when have_shift */
    jc_verdict verdict;
    double threshold, noise;
    double base_ns, head_ns;        /**< median time per call */
    double base_bytes, head_bytes;  /**< median bytes per call */
    int alloc_regressed, alloc_improved;
    int calls_differ;               /**< the median calls per run differ: the workload changed */
} jc_row;

typedef struct jc_report {
    const jb_result *base, *head;
    jc_row *rows;
    size_t nrows;
    size_t regressed, improved, noisy, no_verdict, alloc_regressed, added, removed;
    char warnings[4][256];          /**< different machine, toolchain, few runs …; "" when unused */
} jc_report;

void jc_options_default(jc_options *o);
/** \brief Compare \p head against \p base. \return 0 or -1 (out of memory). */
int jc_compare(const jb_result *base, const jb_result *head, const jc_options *o, jc_report *out);
void jc_report_free(jc_report *r);
/** 1 when the report fails the gate: a time regression or an allocation regression. */
int jc_report_failed(const jc_report *r);

/** The table for a terminal. */
void jc_print_table(FILE *out, const jc_report *r);
/** GitHub-flavoured Markdown: a heading, the verdict line and a table; text escaped. */
void jc_print_markdown(FILE *out, const jc_report *r);
/** `::error file=…,line=…::…` for time and allocation regressions, `::notice` for inconclusive kernels. */
void jc_print_annotations(FILE *out, const jc_report *r);

#endif
