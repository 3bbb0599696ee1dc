/* The sampler's samples on the report page (plugins/sampler, sampler.sample events): a
 * sampled flame graph — CPU time per call path of functions, merged over threads and
 * processes, for all samples and, as further roots, for the samples taken inside each site
 * (the sample's innermost open span) — and the sample density over time per sampled thread.
 *
 * Collected while the recording is read (rs_add: 40 bytes per sample), resolved into
 * functions when the page is written (the reader's symbols; inlined frames included, after
 * the function they are inlined into), so memory is the samples plus one node per distinct
 * path. Weights: `t`/`s` are CPU time (Σ cpu_ns), `c` trigger periods (Σ weight, what
 * `jager summary` and the folded export count as samples). */
#ifndef JAGER_TOOLS_REPORT_SAMPLES_H
#define JAGER_TOOLS_REPORT_SAMPLES_H
#include <stdint.h>
#include <stdio.h>

#include "jager_reader.h"

struct rm_input;

/** Columns of the density view: the page's duration in this many equal bins. */
#define RS_DENSITY_BINS 400

typedef struct rs_data rs_data;

/** Samples of recording \p r (borrowed; must outlive the rs_data). NULL on OOM. */
rs_data *rs_new(jager_reader *r);
/** Keep \p ev if it is a sampler.sample. 0 or -1 (OOM). */
int rs_add(rs_data *d, const jager_event *ev);
/** Samples kept. */
uint64_t rs_count(const rs_data *d);
/** `,"samples":{…}` for the page's \p n inputs (written only when one has samples): fns,
 *  the node arrays p/k/t/c/s, roots [[site index, node]…] and the density lanes. 0 or -1. */
int rs_write_json(FILE *out, const struct rm_input *in, size_t n);
/** NULL-safe. */
void rs_free(rs_data *d);
#endif
