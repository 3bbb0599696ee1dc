/* Span trees in time order, for formats that need parents before children (speedscope's
 * evented O/C stream, pprof's span paths).
 *
 * A span record is written when the span ends, so a thread's spans arrive children first.
 * When a top-level span (parent_id 0) arrives, everything its thread buffered so far ends
 * no later than it: the orderer sorts that batch by start (parents first at equal starts:
 * longer first, then lower span id) and hands it over. Memory is bounded by the largest
 * top-level span tree of a thread; whatever is left at the end (spans still open when a
 * recording was cut short) is handed over by sp_finish(). */
#ifndef JAGER_TOOLS_EXPORT_SPANS_H
#define JAGER_TOOLS_EXPORT_SPANS_H
#include <stddef.h>
#include <stdint.h>

#include "jager_record.h"
#include "model.h"

typedef struct sp_span {
    uint64_t start, end;
    uint64_t bytes;
    uint32_t site, span_id, parent_id;
} sp_span;

/** Receives a thread's batch, sorted; return 0 or -1 to stop. */
typedef int (*sp_batch_fn)(void *ctx, uint32_t thread, const sp_span *spans, size_t n);

typedef struct sp_orderer sp_orderer;

sp_orderer *sp_new(sp_batch_fn fn, void *ctx);
/** Add one span record of \p thread; may call the batch function. 0 or -1 (OOM or the
 *  callback's -1). */
int sp_add(sp_orderer *o, uint32_t thread, const jager_rec_span *rec);
/** As sp_add, for a span or a span_x (a span of a task that moved between threads, model.h):
 *  a span_x joins the batch of the thread that numbers its parent (its begin thread at the
 *  top of its task), where its parent's spans are, so it nests under its true parent. */
int sp_add_view(sp_orderer *o, const jm_span_view *v);
/** Hand over every thread's remainder, threads in index order. 0 or -1. */
int sp_finish(sp_orderer *o);
void sp_free(sp_orderer *o);

/** Callbacks of sp_walk(). */
typedef struct sp_walker {
    /** A span opens at depth \p depth; \p parent_user is the enclosing span's value (0 at
     *  the top). Returns this span's value. */
    uint64_t (*open)(void *ctx, const sp_span *s, uint32_t depth, uint64_t parent_user);
    /** A span closes at \p end (its end, clamped into its parent); \p child_ns and
     *  \p child_bytes sum its direct children. Return 0 or -1 to stop. */
    int (*close)(void *ctx, const sp_span *s, uint64_t end, uint64_t child_ns, uint64_t child_bytes, uint32_t depth,
                 uint64_t user);
} sp_walker;

/**
 * \brief Walk a sorted batch as a properly nested tree: opens in start order, closes in end
 *        order, every close at or after the previous event. A span that overlaps its
 *        enclosing span without nesting (clock skew, a lost parent) is cut at the
 *        enclosing span's end. \return 0, or -1 (OOM or a callback's -1).
 */
int sp_walk(const sp_span *spans, size_t n, const sp_walker *w, void *ctx);
#endif
