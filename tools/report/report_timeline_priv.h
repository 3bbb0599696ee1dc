/* report_timeline_priv.h — the timeline data's layout, shared by its builder
 * (report_timeline.c) and its JSON writer (report_timeline_json.c). */
#ifndef JAGER_TOOLS_REPORT_TIMELINE_PRIV_H
#define JAGER_TOOLS_REPORT_TIMELINE_PRIV_H
#include <stddef.h>
#include <stdint.h>

#include "report_timeline.h"

#define RT_LOG_BODY_MAX 1024u /* bytes of a log message shown in the report */

enum rt_type_kind { RT_T_UNRESOLVED = 0, RT_T_OTHER, RT_T_GC_PAUSE, RT_T_COMPILE, RT_T_GC_SAMPLE };

/* gc.sample fields charted as counters (docs/event-types.md names the series); field is
 * the field's position in plugin_events.h's gc.sample (JP_SAMPLE_*). */
typedef struct rt_gc_series_desc {
    int field;
    const char *name, *unit;
} rt_gc_series_desc;
#define RT_GC_SERIES 5
extern const rt_gc_series_desc rt_gc_series[RT_GC_SERIES];
#define RT_GC_SERIES_ID 0x80000000u /* counter ids of the gc.sample series: this + index */

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
    size_t n, cap;
} rt_evlist;

typedef struct rt_lane {
    uint32_t thread;
    rt_span *spans;
    size_t n, cap;
    rt_block *blocks;
    size_t nblocks, capblocks;
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
    size_t n, cap;
} rt_counter;

/* Interned display strings (log bodies, signatures, mark names), deduplicated by hash. */
typedef struct rt_str {
    char *s;
    uint32_t len;
} rt_str;

typedef struct rt_strings {
    rt_str *v;
    size_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, 0 empty */
    size_t nslots;
} rt_strings;

struct rt_data {
    jager_reader *r;
    rt_opts o;
    rt_lane **lanes; /* by thread index */
    size_t nlanes;
    rt_counter *counters;
    size_t ncounters, capcounters;
    rt_strings strings;
    uint8_t *type_kind; /* per type id: an rt_type_kind */
    uint32_t gc_dur, gc_tid, cc_dur, cc_inf, cc_sig; /* field indices, UINT32_MAX if absent */
    uint32_t gs_field[RT_GC_SERIES];                 /* gc.sample field of each series */
    rt_gcp *gcp;
    size_t ngcp, capgcp;
    uint64_t first_ns, last_ns;
    uint64_t threshold, quantum;
    uint64_t kept, not_kept;
};

#endif
