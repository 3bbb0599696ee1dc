/* report_timeline_priv.h — the timeline data's layout, shared by its builder
 * (report_timeline.c) and its JSON writer (report_timeline_json.c). */
#ifndef JAGER_TOOLS_REPORT_TIMELINE_PRIV_H
#define JAGER_TOOLS_REPORT_TIMELINE_PRIV_H
#include <stddef.h>
#include <stdint.h>

#include "model_map.h"
#include "plugin_events.h"
#include "report_timeline.h"
#include "strdict.h"

#define RT_LOG_BODY_MAX 1024u /* bytes of a log message shown in the report */

enum rt_type_kind { RT_T_UNRESOLVED = 0, RT_T_OTHER, RT_T_GC_PAUSE, RT_T_COMPILE, RT_T_GC_SAMPLE, RT_T_PLUGIN };

/* gc.sample fields charted as counters (docs/event-types.md names the series); field is
 * the field's position in plugin_events.h's gc.sample (JP_SAMPLE_*). */
typedef struct rt_gc_series_desc {
    int field;
    const char *name, *unit;
} rt_gc_series_desc;
#define RT_GC_SERIES 5
extern const rt_gc_series_desc rt_gc_series[RT_GC_SERIES];
#define RT_GC_SERIES_ID 0x80000000u /* counter ids of the gc.sample series: this + index */
/* Counter ids of plugin fields flagged COUNTER or GAUGE: this | type << 5 | field. */
#define RT_PLUGIN_SERIES_ID 0x40000000u
/* The Julia binding's GC counters on log records and marks (i64 attributes gc.allocated_bytes,
 * gc.pauses, gc.time_ns, gc.full_sweeps: process totals read at the event), charted as the
 * series julia.gc.*: counter ids this + index. */
#define RT_JGC_SERIES JP_JGC_NKEYS /* keys: jp_julia_gc_keys (plugin_events.h) */
#define RT_JGC_SERIES_ID 0x80000100u
extern const rt_gc_series_desc rt_jgc_series[RT_JGC_SERIES]; /* field unused; name is the series' */
#define RT_LANE_THREADS 8 /* threads a task lane lists by index (the rest are counted) */
#define RT_MAX_TASK_LANES 64 /* task lanes drawn (the page's canvas stays within Chromium's 32k-pixel height at usual depths); the other tasks share one lane */
#define RT_OTHER_TASKS UINT64_MAX /* the task of that shared lane */
#define RT_PLUGIN_MARKS_MAX 20000 /* markers of other plugin events, in all (memory bound) */

typedef struct rt_span {
    uint64_t start, end;
    uint32_t site;
    uint16_t depth;
    uint16_t raw; /* 1: drawn exactly */
} rt_span;

typedef struct rt_block {
    uint64_t start, end, busy, count;
    uint32_t site;   /* the site holding most of the busy time (weighted majority vote) */
    uint32_t depth;
    uint64_t weight; /* vote weight of `site` */
} rt_block;

/* An instant or interval event: GC pause, compile, log, mark. */
typedef struct rt_ev {
    uint64_t t, dur;
    uint32_t str; /* index into the string table (compile signature, log body, mark name) */
    uint32_t sev;
} rt_ev;

typedef struct rt_evlist {
    rt_ev *v;
    size_t n;
    uint32_t cap;
} rt_evlist;

/* A lane is a thread's (events emitted while no task was set on it) or a task's (jager_task_set:
 * a Julia task, wherever it ran: a task that migrated stays one lane). */
typedef struct rt_lane {
    uint32_t thread;  /* thread lane: its index; task lane: the first thread it ran on */
    uint64_t task;    /* 0: a thread lane */
    uint32_t threads[RT_LANE_THREADS]; /* task lane: the threads it ran on, in order of first sight */
    uint32_t nthreads, more_threads;
    uint64_t folded_tasks; /* the "other tasks" lane: how many tasks it holds */
    rt_span *spans;
    size_t n;
    uint32_t cap;
    rt_block *blocks;
    size_t nblocks;
    uint32_t capblocks;
    rt_evlist gc, cc, logs, marks;
    uint64_t raw, merged, too_deep, logs_dropped;
} rt_lane;

typedef struct rt_sample {
    uint64_t t;
    double v;
    uint32_t thread;
} rt_sample;

/* A GC pause waits for the end of the pass: its lane is the triggering thread, found by
 * OS thread id in the thread table, which may be written after the pause. */
typedef struct rt_gcp {
    uint64_t t, dur, os_tid;
    uint32_t thread; /* the thread that moved the record into the recording (fallback) */
} rt_gcp;

typedef struct rt_counter {
    uint32_t id; /* core counter id, or RT_GC_SERIES_ID + index for gc.sample series */
    rt_sample *s;
    size_t n;
    uint32_t cap;
} rt_counter;


/* A thread's task switches (task records), in its record order, for placing GC pauses. */
typedef struct rt_switch {
    uint64_t t, task;
} rt_switch;

typedef struct rt_thread_tasks {
    uint64_t cur; /* the task now set on the thread (0: none) */
    rt_switch *sw;
    size_t n;
    uint32_t cap;
} rt_thread_tasks;

struct rt_data {
    jager_reader *r;
    rt_opts o;
    rt_lane **lanes; /* by thread index (tu_thread_index_ok) */
    size_t nlanes;
    rt_lane **tlanes; /* task lanes, in order of first sight (sorted by task id in rt_finish) */
    size_t ntlanes;
    uint32_t captlanes;
    jm_map task_ix;   /* task id -> index in tlanes */
    rt_thread_tasks *tt; /* by thread index */
    size_t ntt;
    uint64_t bad_thread; /* events left out: a thread index the file's table lacks, too large to index */
    rt_counter *counters;
    size_t ncounters;
    uint32_t capcounters;
    tu_strdict strings; /* display strings (log bodies, signatures, mark names), deduplicated */
    uint8_t *type_kind; /* per type id: an rt_type_kind */
    uint32_t gc_dur, gc_tid, cc_dur, cc_inf, cc_sig; /* field indices, UINT32_MAX if absent */
    uint32_t gs_field[RT_GC_SERIES];                 /* gc.sample field of each series */
    rt_gcp *gcp;
    size_t ngcp;
    uint32_t capgcp;
    uint64_t first_ns, last_ns;
    uint64_t threshold, quantum;
    uint64_t kept, not_kept;
    uint64_t plugin_marks, plugin_marks_dropped; /* markers of plugin events kept / left out */
};

/* Every lane, thread lanes (by index, some NULL) then task lanes. */
static inline size_t rt_nall(const rt_data *d) { return d->nlanes + d->ntlanes; }
static inline rt_lane *rt_lane_at(const rt_data *d, size_t i) { return i < d->nlanes ? d->lanes[i] : d->tlanes[i - d->nlanes]; }

#endif
