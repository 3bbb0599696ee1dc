/* report_diff.h — `jager report --baseline BASE.jgr HEAD.jgr`: the baseline's call tree and
 * per-site totals as one more JSON member of the page's data, so the page can colour the
 * head's flame graph by change and list the sites whose time moved most (35-diff.js).
 * Paths are matched by site names, not ids: two recordings number their sites apart. */
#ifndef JAGER_TOOLS_REPORT_DIFF_H
#define JAGER_TOOLS_REPORT_DIFF_H
#include <stdio.h>

#include "report_model.h"

/** `"baseline":{"path":…,"run_ns":N,"tree":{"p":[],"n":[],"t":[]},"sites":[[name,file,total,calls],…]}`. */
void rm_write_baseline(FILE *out, const rm_input *base);
#endif
