/* The parts of the report's data that come from the analysis model (model.h) and the
 * hunt (hunt_rules.h): run overview, sites, the merged call tree, the per-site table and
 * the findings. Written as JSON members into the page's data block.
 *
 * A page shows one or more recordings (one per process, e.g. the ranks of an MPI run).
 * Their sites share one array: recording i's site s is at index site_base + s; after
 * every recording's sites come "(other)", "(unrecorded)" and, with several recordings, one
 * entry per process that names its node under the flame graph's root. */
#ifndef JAGER_TOOLS_REPORT_MODEL_H
#define JAGER_TOOLS_REPORT_MODEL_H
#include <stdio.h>

#include "hunt_rules.h"
#include "model.h"
#include "report_samples.h"
#include "report_timeline.h"

/** One recording of the page, with what was built from it. */
typedef struct rm_input { /* tagged: report_samples.h declares struct rm_input */
    const char *path;         /**< as given on the command line */
    jager_reader *r;
    jm_model *m;
    rt_data *rt;
    rs_data *rs;              /**< the sampler's samples (report_samples.h) */
    hunt_finding *findings;
    size_t nfindings;
    int truncated;            /**< 1: the pass stopped early (partial) */
    const char *read_error;   /**< the reader's message when it stopped early, or NULL */
    /* Filled by rm_layout(): */
    char name[640];           /**< "rank 3 · host · exe · pid 12", or "exe · pid 12 on host" */
    const char *rank;         /**< mpi.rank metadata or NULL */
    uint32_t site_base;
    uint32_t proc_site;       /**< site index naming the process (several recordings only) */
    uint64_t t0;              /**< the page's time origin on this recording's clock */
    uint64_t end;             /**< its last time, relative to the page's origin */
} rm_input;

/** Names, site bases and a common time origin (wall clock) for \p n inputs. */
void rm_layout(rm_input *in, size_t n);
/** `"run":{...},"runs":[...],"processes":[...],"duration_ns":N`. */
void rm_write_runs(FILE *out, const rm_input *in, size_t n);
/** `"sites":[[name,file,line],...]`. */
void rm_write_sites(FILE *out, const rm_input *in, size_t n);
/** `"tree":{"p":[],"k":[],"t":[],"s":[],"c":[]}`: depth-first, parents first. \return 0 or -1 (OOM). */
int rm_write_tree(FILE *out, const rm_input *in, size_t n);
/** `"table":[{...}]`: one row per (process, site) with calls. */
void rm_write_table(FILE *out, const rm_input *in, size_t n);
/** `"findings":[{...}]`: every recording's, ranked by cost (warnings about the recording first). \return 0 or -1. */
int rm_write_findings(FILE *out, const rm_input *in, size_t n);
/** "allocators":[…]: each recording's largest allocators (hunt_allocators), by self bytes. */
void rm_write_allocators(FILE *out, const rm_input *in, size_t n);
/** `"attrs":[…]`: every site's calls grouped by each span attribute's value (model_attrs.c). */
void rm_write_attrs(FILE *out, const rm_input *in, size_t n);
/** `"methods":[…]`: log records and span errors by code.method, per recording (model_methods.c). */
void rm_write_methods(FILE *out, const rm_input *in, size_t n);
#endif
