/*
 * bench_doc.h — benchmark results and baselines as JSON documents (schema "jager-bench",
 * version 1, docs/compare.md), read and written with jansson.
 *
 * A document holds one or more results, one per machine class, so a baseline committed
 * beside the code can cover several architectures; `jager bench run` writes one result,
 * `jager bench store` puts a result into a baseline (replacing the one of the same class),
 * `jager compare` picks the base result whose class matches the head's.
 *
 * Loading validates everything the comparison reads (types, lengths, positive times) and
 * fails with one message naming the file and the JSON path of the first problem, so a
 * broken baseline is a clear error (exit 2), never a silent pass.
 */
#ifndef JAGER_COMPARE_BENCH_DOC_H
#define JAGER_COMPARE_BENCH_DOC_H

#include <stddef.h>
#include <stdint.h>

#define JB_SCHEMA "jager-bench"
#define JB_VERSION 1

/** Values of one kernel in one run (all from the recording's exact per-site aggregates). */
typedef struct jb_run {
    double median_ns;       /**< the run's median call: the value compared (a preempted call
                                 moves a mean, not a median) */
    double mean_ns;         /**< total time / calls (exact) */
    double min_ns;          /**< fastest call */
    uint64_t calls;
    uint64_t bytes;         /**< allocated inside the kernel's spans (exact) */
    uint64_t gc_ns;         /**< GC time inside them */
    int median_exact;       /**< 1: median of every call's span; 0: from the log histogram
                                 (the file lacked some span events) */
} jb_run;

typedef struct jb_kernel {
    char *name, *file;
    uint32_t line;
    double threshold;       /**< relative; < 0 when the kernel sets none */
    double noise;           /**< relative noise floor from an A/A calibration; 0 when unknown */
    jb_run *runs;
    size_t nruns, cap;
} jb_kernel;

/** One machine's result. Text fields are owned; any may be "" but none is NULL. */
typedef struct jb_result {
    char *machine_class;    /**< "x86_64 AMD EPYC 7B13" — what baselines are keyed by */
    char *cpu_model, *arch, *os, *kernel_release, *cpu_flags_hash;
    uint32_t cores;
    char *jager_version, *compiler, *julia_version;
    char *commit, *date;
    char *command;          /**< the command line as one string, for people */
    char *counters;         /**< "instructions", or "none: <why>" (perf_event_open refused) */
    double threshold;       /**< default for kernels without one; < 0: the CLI's default */
    uint32_t warmup;
    int budget_exhausted;   /**< 1: the time budget stopped the runs early */
    jb_kernel *kernels;
    size_t nkernels, cap;
} jb_result;

typedef struct jb_doc {
    jb_result *results;
    size_t nresults, cap;
} jb_doc;

/** \brief Read and validate \p path. On failure returns -1 with a message in \p err. */
int jb_doc_load(const char *path, jb_doc *out, char *err, size_t errsize);
/** \brief Parse a document held in memory (\p name is used in messages). */
int jb_doc_parse(const char *text, size_t len, const char *name, jb_doc *out, char *err, size_t errsize);
/** \brief Write \p d to \p path atomically (a temporary in the same folder, then rename). */
int jb_doc_save(const jb_doc *d, const char *path, char *err, size_t errsize);
void jb_doc_free(jb_doc *d);

/** \brief Append an empty result; \return it, or NULL out of memory. */
jb_result *jb_doc_add_result(jb_doc *d);
/** \brief Insert \p r (moved: \p r is emptied) replacing the result of the same class. \return 0 or -1. */
int jb_doc_store(jb_doc *d, jb_result *r);
/** \brief The result whose machine class is \p cls, or NULL. */
const jb_result *jb_doc_find(const jb_doc *d, const char *cls);

/** \brief The kernel named (\p name, \p file), added when absent. \return NULL out of memory. */
jb_kernel *jb_result_kernel(jb_result *r, const char *name, const char *file, uint32_t line);
/** \brief Append a run to \p k. \return 0 or -1. */
int jb_kernel_add_run(jb_kernel *k, const jb_run *run);
void jb_result_free(jb_result *r);

/** strdup that never returns NULL for a NULL input ("" instead); NULL only out of memory. */
char *jb_strdup(const char *s);

#endif
