/*
 * bench_run.h — `jager bench run`: run a command N times, each under a fresh recording, and
 * turn every site of every recording into a kernel's per-run values (bench_doc.h).
 *
 * Each run's values come from the recording's exact per-site aggregates (the STATS block),
 * never from events, so thinning or drops cannot bias a benchmark. A whole command is one
 * run of every kernel in it, so a slow kernel cannot starve the others; the time budget
 * only bounds how many runs are made (never fewer than the warm-up plus one).
 */
#ifndef JAGER_COMPARE_BENCH_RUN_H
#define JAGER_COMPARE_BENCH_RUN_H

#include "bench_doc.h"

typedef struct jb_run_opts {
    unsigned runs;          /**< measured runs per command */
    unsigned warmup;        /**< runs before them whose recordings are discarded */
    double budget_s;        /**< wall-clock budget for all runs; 0: none */
    const char *keep_dir;   /**< keep the recordings here (NULL: a temporary folder, removed) */
    int show_output;        /**< 1: the command's stdout is shown; 0: discarded (stderr always shown) */
} jb_run_opts;

/** \brief Fill the machine, toolchain, date and commit fields of \p r. \return 0 or -1 (out of memory). */
int jb_describe_machine(jb_result *r);

/** \brief Add one recording's sites to \p r as one more run of each kernel.
 *  \return 0; -1 with a message in \p err (unreadable or damaged file, no exact statistics). */
int jb_absorb_recording(jb_result *r, const char *path, char *err, size_t errsize);

/**
 * \brief Run \p head_argv (and, when \p base_sh is not NULL, the shell command \p base_sh
 *        interleaved with it: base, head, base, head, …) and fill \p head (and \p base).
 * \return 0; -1 with a message in \p err when a run fails (exit status, signal, no recording).
 */
int jb_bench_run(const jb_run_opts *o, char *const *head_argv, const char *base_sh,
                 jb_result *head, jb_result *base, char *err, size_t errsize);

#endif
