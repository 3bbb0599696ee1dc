/* sample_events.h — reading the sampler plugin's sampler.sample events (plugins/sampler)
 * for the views that show them (folded stacks, speedscope, the report): the type and field
 * indexes resolved once per recording from the plugin's table (plugin_events.h), each
 * record decoded bounds-checked; and a stack's frames, outermost first, as every flame
 * graph wants them. */
#ifndef JAGER_TOOLS_MODEL_SAMPLE_EVENTS_H
#define JAGER_TOOLS_MODEL_SAMPLE_EVENTS_H

#include <stdint.h>

#include "jager_reader.h"

/** One decoded sample. */
typedef struct jm_sample_ev {
    uint64_t time_ns;
    uint64_t stack;   /**< stack id (innermost first), 0 when the record has none */
    uint64_t tid;     /**< the sampled thread's OS id */
    uint64_t site;    /**< innermost open site, 0 outside any span */
    uint64_t weight;  /**< trigger periods it stands for (≥ 1) */
    uint64_t cpu_ns;  /**< CPU time it stands for */
} jm_sample_ev;

/** Per-recording decoding state; zero it. */
typedef struct jm_sample_reader {
    int resolved;
    uint16_t type; /**< 0: the recording has no (usable) sampler.sample type */
    int f[5];      /**< stack, os_tid, site, weight, cpu_ns field indexes, -1 if absent */
} jm_sample_reader;

/** Decode \p ev into \p out if it is a sampler.sample of \p r. \return 1 if it was, else 0. */
int jm_sample_decode(jm_sample_reader *sr, const jager_reader *r, const jager_event *ev, jm_sample_ev *out);

/** Called for each frame of a stack, outermost first: a function, then the frames inlined
 *  into it. \p fr lives only during the call (an unnamed address gets its hex value as
 *  name). Return non-zero to stop. */
typedef int (*jm_frame_fn)(void *ctx, const jager_frame *fr);

/** Walk the frames of stack \p stack of \p r, outermost first. \return 0, the callback's
 *  non-zero value, or 0 with no call when the stack is unknown. */
int jm_stack_frames(const jager_reader *r, uint64_t stack, jm_frame_fn fn, void *ctx);
#endif
