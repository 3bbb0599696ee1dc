/* The GC trigger profile of `jager export --format pprof`: gc.pause events aggregated by
 * their triggering allocation stack (pauses/count, gc/nanoseconds), written as a second
 * gzip'd profile next to the span profile. */
#ifndef JAGER_TOOLS_EXPORT_PPROF_GC_H
#define JAGER_TOOLS_EXPORT_PPROF_GC_H
#include "export.h"

typedef struct pp_gc pp_gc;

pp_gc *pp_gc_new(void);
/** Count a gc.pause event (other types are ignored). 0 or -1 (OOM, printed). */
int pp_gc_event(pp_gc *g, const jager_reader *r, const jager_event *ev);
/** Write OUT's sibling "<stem>.gc.pb.gz" when there were pauses. 0 or -1 (printed). */
int pp_gc_write(pp_gc *g, const jager_reader *r, const export_opts *o);
void pp_gc_free(pp_gc *g);
#endif
