/* The parts of the report's data that come from the analysis model (model.h) and the
 * hunt (hunt_rules.h): run overview, sites, the merged call tree, the per-site table and
 * the findings. Written as JSON members into the page's data block. */
#ifndef JAGER_TOOLS_REPORT_MODEL_H
#define JAGER_TOOLS_REPORT_MODEL_H
#include <stdio.h>

#include "hunt_rules.h"
#include "model.h"
#include "report_timeline.h"

/** Where the recording came from, for the overview. */
typedef struct rm_source {
    const char *path;     /**< the recording's path as given */
    int truncated;        /**< 1: the pass stopped early (partial report) */
    const char *read_error; /**< the reader's message when it stopped early, or NULL */
} rm_source;

/** `"run":{...},"processes":[...]` (the overview and the process of the lanes). */
void rm_write_run(FILE *out, const jm_model *m, const rt_summary *ts, const rm_source *src);
/** `"sites":[[name,file,line],...]`: index = site id, then "(other)" and "(unrecorded)". */
void rm_write_sites(FILE *out, const jm_model *m);
/** `"tree":{"p":[],"k":[],"t":[],"s":[],"c":[]}`: the merged tree in depth-first order. \return 0 or -1 (OOM). */
int rm_write_tree(FILE *out, const jm_model *m);
/** `"table":[{...}]`: one row per site with calls. */
void rm_write_table(FILE *out, const jm_model *m);
/** `"findings":[{...}]`. */
void rm_write_findings(FILE *out, const jm_model *m, const hunt_finding *f, size_t n);
#endif
