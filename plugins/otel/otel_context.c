/* Trace contexts a thread adopted while recording (jager_context_set / _extract after
 * jager_init): span records carry no trace id, so the sink keeps, per thread, the history of
 * JAGER_EV_CONTEXT records and looks each span up by its id (span ids grow per thread). Used
 * only on the collector thread, like the rest of the sink. */
#include <stdlib.h>
#include <string.h>

#include "otel_internal.h"

/* Contexts remembered per thread: a span that began under an older one than these (a span
 * open across more than this many context changes) is exported in the run's trace. */
#define CTX_KEEP 256u

typedef struct ot_ctx_entry {
    uint32_t first;        /* first span id under this context */
    int set;               /* 0: back to the run's own trace */
    uint8_t trace_id[16];
    uint8_t span_id[8];    /* the remote parent */
} ot_ctx_entry;

struct ot_ctx_thread {
    ot_ctx_entry *e;
    uint32_t n;
};

void ot_context_record(ot_state *st, uint32_t thread, const jager_rec_context *r)
{
    if (thread >= st->nctx) {
        size_t n = (size_t)thread + 16u;
        ot_ctx_thread *t = realloc(st->ctx, n * sizeof *t);
        if (!t) return;
        memset(t + st->nctx, 0, (n - st->nctx) * sizeof *t);
        st->ctx = t;
        st->nctx = n;
    }
    ot_ctx_thread *t = &st->ctx[thread];
    if (!t->e && !(t->e = calloc(CTX_KEEP, sizeof *t->e))) return;
    if (t->n == CTX_KEEP) memmove(t->e, t->e + 1, --t->n * sizeof *t->e);
    ot_ctx_entry *e = &t->e[t->n++];
    e->first = r->first_span;
    /* The run's own context (the process span, made current on the jager_init thread) is
     * not an adopted one: its spans already are in the run's trace under their parents. */
    e->set = r->h.aux != 0 && memcmp(r->trace_id, st->trace_id, 16) != 0 && memcmp(r->trace_id, st->own_trace_id, 16) != 0;
    memcpy(e->trace_id, r->trace_id, 16);
    memcpy(e->span_id, r->span_id, 8);
}

int ot_context_of_span(const ot_state *st, uint32_t thread, uint32_t span_id, uint32_t parent_id,
                       uint8_t trace_id[16], uint8_t remote_parent[8])
{
    if (thread >= st->nctx) return 0;
    const ot_ctx_thread *t = &st->ctx[thread];
    uint32_t k = t->n;
    while (k > 0 && t->e[k - 1].first > span_id) k--;
    if (k == 0 || !t->e[k - 1].set) return 0;
    const ot_ctx_entry *e = &t->e[k - 1];
    memcpy(trace_id, e->trace_id, 16);
    /* A parent begun under the same context is in the same trace; one begun before it (or
     * none) makes this span a child of the remote parent. */
    if (parent_id && parent_id >= e->first) return 1;
    memcpy(remote_parent, e->span_id, 8);
    return 2;
}

void ot_context_free(ot_state *st)
{
    for (size_t i = 0; i < st->nctx; i++) free(st->ctx[i].e);
    free(st->ctx);
    st->ctx = NULL;
    st->nctx = 0;
}
