/* The sampler's samples in `jager export --format speedscope`: one "sampled" profile per
 * sampled thread (the sample's os_tid), stacks root first, weights either each sample's
 * CPU time (cpu_ns, unit nanoseconds: the default) or one per sample (unit none), so
 * speedscope's Left Heavy and Sandwich views show where CPU time went, inside and outside
 * the spans. Frames are functions (name and file, one per distinct pair; inlined frames
 * included, after the function they are inlined into), appended to the shared frames after
 * the sites' frames. Memory: 40 bytes per sample plus one entry per distinct stack. */
#ifndef JAGER_TOOLS_EXPORT_SPEEDSCOPE_SAMPLES_H
#define JAGER_TOOLS_EXPORT_SPEEDSCOPE_SAMPLES_H
#include <stdio.h>

#include "export.h"
#include "toolutil.h"

typedef struct ss_samples ss_samples;

/** State for \p r's samples, weighted per \p weight (an export_sample_weight); NULL on OOM. */
ss_samples *ss_samples_new(jager_reader *r, int weight);
/** Keep one event if it is a sampler.sample. 0 or -1 (OOM, printed). */
int ss_samples_event(ss_samples *s, const jager_event *ev);
/** Resolve every kept stack into frames numbered from \p base; append each frame as
 *  ",{…}" to \p b. 0 or -1 (OOM, printed). */
int ss_samples_frames(ss_samples *s, tu_buf *b, uint32_t base);
/** Write one sampled profile per thread to \p f, a comma before each unless \p *first
 *  (cleared once one is written). 0 or -1 (write error). */
int ss_samples_profiles(ss_samples *s, FILE *f, int *first);
/** NULL-safe. */
void ss_samples_free(ss_samples *s);
#endif
