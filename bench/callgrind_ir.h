/* callgrind_ir.h — the benchmarks' instruction counts: this program run again under
 * callgrind as `SELF --callgrind-case CASE N`, counting only inside the function \p fn
 * (--toggle-collect), read from callgrind's summary line. Included by the span benchmarks
 * (span_bench_paths.h, hooks/, peer/). */
#ifndef JAGER_BENCH_CALLGRIND_IR_H
#define JAGER_BENCH_CALLGRIND_IR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Instructions executed in \p fn for case \p case_name with \p n iterations; -1 without
 * valgrind. \p tag names the temporary output file. */
static inline double bench_callgrind_ir(const char *self, const char *fn, const char *tag, const char *case_name, long n)
{
    char out[128], cmd[4096 + 512];
    snprintf(out, sizeof out, "/tmp/%s_cg.%d.%s", tag, (int)getpid(), case_name);
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --callgrind-out-file=%s --toggle-collect=%s '%s' --callgrind-case %s %ld "
             ">/dev/null 2>&1",
             out, fn, self, case_name, n);
    if (system(cmd) != 0) return -1;
    FILE *f = fopen(out, "r");
    if (!f) return -1;
    char line[256];
    double ir = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7)) ir = atof(strchr(line, ':') + 1);
    fclose(f);
    remove(out);
    return ir;
}

#endif
