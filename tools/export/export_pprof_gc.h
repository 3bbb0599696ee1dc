/* The stack profiles of `jager export --format pprof`, written as gzip'd profiles next to
 * the span profile: gc.pause events aggregated by their triggering allocation stack
 * (pauses/count, gc/nanoseconds, "<stem>.gc.pb.gz"), and sampler.sample events by their
 * sampled stack (samples/count, cpu/nanoseconds, "<stem>.cpu.pb.gz"). */
#ifndef JAGER_TOOLS_EXPORT_PPROF_GC_H
#define JAGER_TOOLS_EXPORT_PPROF_GC_H
#include "export.h"
#include "plugin_events.h"

/** Which events a stack profile aggregates and how it names them. */
typedef struct pp_stack_kind {
    const jp_plugin *plugin;
    int event, f_stack, f_value; /* the plugin's event and field enums */
    const char *count_type, *value_type; /* sample types: "<count_type>/count", "<value_type>/nanoseconds" */
    const char *suffix;   /* ".gc.pb.gz" */
    const char *comment;
} pp_stack_kind;

extern const pp_stack_kind pp_kind_gc;  /* gc.pause by trigger stack */
extern const pp_stack_kind pp_kind_cpu; /* sampler.sample by sampled stack */

typedef struct pp_gc pp_gc;

/** The event type \p g turns into samples (0 when the file has none, or before the first
 *  event). */
uint16_t pp_gc_type(const pp_gc *g);

pp_gc *pp_gc_new(const pp_stack_kind *kind);
/** Count an event of the kind's type (other types are ignored). 0 or -1 (OOM, printed). */
int pp_gc_event(pp_gc *g, const jager_reader *r, const jager_event *ev);
/** Write OUT's sibling "<stem><suffix>" when there were events. 0 or -1 (printed). */
int pp_gc_write(pp_gc *g, const jager_reader *r, const export_opts *o);
void pp_gc_free(pp_gc *g);
#endif
