/* sampler_fixture.h — record a workload with JAGER_PLUGINS=sampler into a .jgr file and
 * read back what the sampler wrote (samples with their leaf function, per-thread and
 * summary records, diagnostics, span count). */
#ifndef JAGER_SAMPLER_FIXTURE_H
#define JAGER_SAMPLER_FIXTURE_H
#include <stddef.h>
#include <stdint.h>

#include "jager.h"

typedef struct fx_sample {
    uint64_t os_tid, site, weight, flags;
    uint32_t n;
    char leaf[64];   /* function of the innermost frame ("??" when unnamed) */
    char caller[64]; /* function of the next frame ("" when none) */
} fx_sample;

typedef struct fx_thread {
    uint64_t os_tid, samples, lost, cpu_ns, expected, truncated, broken, handler_ns;
} fx_thread;

typedef struct fx_run {
    fx_sample *s;
    size_t ns;
    fx_thread t[64];
    size_t nt;
    uint64_t summary[16]; /* sampler.summary's fields in order ([14] slow_walks, [15] symbolize_ns) */
    int have_summary;
    char mode[16];
    uint64_t spans;
    uint64_t modules, modules_with_build_id;
    char diags[8192];    /* the sampler's diagnostics, newline-separated */
    jager_stat stats;    /* jager_stats() just before shutdown */
} fx_run;

/** Start recording into a fresh file with the sampler at \p hz in \p mode ("auto",
 *  "perf", "timer"); returns the path (static). Asserts on failure. */
const char *fx_start(unsigned hz, const char *mode, uint64_t ring_bytes);
/** Stop and read the file back. */
void fx_stop(const char *path, fx_run *out);
void fx_free(fx_run *r);
/** Samples with leaf \p func (and site \p site unless site == UINT64_MAX, tid unless 0). */
size_t fx_count(const fx_run *r, const char *func, uint64_t site, uint64_t tid);
/** 1 when perf_event_open is usable here (probe on this thread). */
int fx_perf_available(void);
/** The OS thread id of the caller. */
uint64_t fx_gettid(void);
#endif
