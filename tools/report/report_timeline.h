/* The report's timeline data: spans per thread lane with their nesting depth, reduced to a
 * drawing budget (level of detail), plus GC pauses, compile events, log markers, marks
 * and counter series, all gathered in the report's single pass over the recording.
 *
 * Level of detail: a report must open fast with millions of spans, so at most
 * `max_spans` spans (over all lanes) are kept exactly — the longest ones, chosen by a
 * duration threshold — and the shorter spans of each (lane, depth) row are merged into
 * "N spans" blocks: consecutive short spans merge while the gap between them is below a
 * quantum chosen so that the blocks stay within budget too. Raw spans close a block, so
 * blocks never overlap them. Per-site totals, the call tree and the findings come from
 * the analysis model and stay exact whatever is merged here. */
#ifndef JAGER_TOOLS_REPORT_TIMELINE_H
#define JAGER_TOOLS_REPORT_TIMELINE_H
#include <stdint.h>
#include <stdio.h>

#include "jager_reader.h"

/** Deepest nesting level drawn; deeper spans are counted per lane, not drawn. */
#define RT_MAX_DEPTH 32

typedef struct rt_opts {
    uint64_t max_spans;     /**< exact spans kept over all lanes (default 150000) */
    uint64_t max_blocks;    /**< merged blocks over all lanes, about (default 100000) */
    uint32_t max_logs;      /**< log markers kept per lane (default 20000); the rest are counted */
    uint32_t counter_bins;  /**< points per counter series (default 2000; min/max kept per bin) */
    uint64_t max_kept;      /**< spans held while reading (24 bytes each; default 16M): the timeline
                                 of a bigger file shows its first max_kept spans, the rest are
                                 counted (aggregates, tree and findings still cover them all) */
} rt_opts;

typedef struct rt_data rt_data;

/** New, empty timeline data; NULL on out of memory. \p o may be NULL for the defaults. */
rt_data *rt_new(jager_reader *r, const rt_opts *o);
/** Take one event from the pass. \return 0, or -1 on out of memory. */
int rt_add(rt_data *d, const jager_event *ev);
/** Sort, compute depths and reduce to the budget. \return 0 or -1 (out of memory). */
int rt_finish(rt_data *d);

/** Totals for the overview. */
typedef struct rt_summary {
    uint64_t spans, raw, merged_spans, blocks, too_deep;
    uint64_t not_kept;              /**< spans beyond max_kept, not on the timeline */
    uint64_t gc_pauses, gc_ns, compiles, compile_ns, logs, logs_dropped;
    uint64_t duration_threshold_ns; /**< spans at least this long are exact (0: all are) */
} rt_summary;
void rt_get_summary(const rt_data *d, rt_summary *out);

/**
 * \brief Write `"lanes":[...],"counters":[...],"strings":[...]` (JSON members, no braces)
 *        with times relative to \p t0_ns. Lane \p proc index goes into each lane.
 * \return 0, or -1 on a write error.
 */
int rt_write_json(const rt_data *d, FILE *out, uint64_t t0_ns, uint32_t proc);

/**
 * \brief Check the drawing invariants after rt_finish(): within every (lane, depth) row the
 *        exact spans and the blocks are sorted by start and never overlap each other, every
 *        block lies inside an exact span or block of the row above, and exact + merged +
 *        too deep = spans of the lane. For tests (quadratic in blocks).
 * \return 0, or a negative code naming the first broken invariant.
 */
int rt_check(const rt_data *d);

/** Where one recording's timeline goes in a page that may hold several (one per process). */
typedef struct rt_json_ctx {
    uint64_t t0;                /**< the page's time origin, on this recording's clock (on map's, with map) */
    uint32_t proc;              /**< process index of the lanes */
    uint32_t site_base;         /**< added to site ids (sites of all recordings share one array) */
    uint32_t str_base;          /**< added to string indices (one string array per page) */
    const char *counter_prefix; /**< prepended to counter names ("rank 3: "), or NULL */
    /** NULL, or a monotonic map of this recording's times onto the page's clock (a job's:
     *  jm_mpi_job_time), applied to every time before t0 is subtracted; a duration becomes
     *  its mapped ends' difference */
    uint64_t (*map)(const void *arg, uint64_t t);
    const void *map_arg;
} rt_json_ctx;
/** Lane objects, each preceded by a comma unless *first (then cleared). \return 0 or -1. */
int rt_write_lanes(const rt_data *d, FILE *out, const rt_json_ctx *c, int *first);
/** Counter series objects, as rt_write_lanes. */
int rt_write_counters(const rt_data *d, FILE *out, const rt_json_ctx *c, int *first);
/** The display strings that lanes index (log bodies, signatures, mark names). */
int rt_write_strings(const rt_data *d, FILE *out, int *first);
uint32_t rt_string_count(const rt_data *d);

void rt_free(rt_data *d);
#endif
