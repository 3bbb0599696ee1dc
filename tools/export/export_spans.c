#include "export_spans.h"

#include <stdlib.h>
#include <string.h>

#include "model_map.h"

typedef struct sp_thread {
    uint32_t thread; /* the thread index the file names */
    sp_span *v;
    size_t n, cap;
} sp_thread;

/* Threads in the order they first appear, found by index through a hash map: an index is
 * whatever the file says (up to 2^32 - 1), so nothing is sized by it. */
struct sp_orderer {
    sp_batch_fn fn;
    void *ctx;
    sp_thread *threads;
    uint32_t nthreads, cap;
    jm_map slot; /* (thread, 0) -> index in threads */
};

sp_orderer *sp_new(sp_batch_fn fn, void *ctx)
{
    sp_orderer *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->fn = fn;
    o->ctx = ctx;
    return o;
}

static int cmp_span(const void *a, const void *b)
{
    const sp_span *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1; /* the enclosing one first */
    if (x->span_id != y->span_id) return x->span_id < y->span_id ? -1 : 1; /* ids grow with begin order */
    return 0;
}

static int flush_thread(sp_orderer *o, sp_thread *t)
{
    if (!t->n) return 0;
    qsort(t->v, t->n, sizeof *t->v, cmp_span);
    int rc = o->fn(o->ctx, t->thread, t->v, t->n);
    t->n = 0;
    if (t->cap > 65536) { /* give a huge tree's memory back */
        free(t->v);
        t->v = NULL;
        t->cap = 0;
    }
    return rc;
}

int sp_add_view(sp_orderer *o, const jm_span_view *v)
{
    return sp_add(o, v->rec->parent_id ? v->parent_thread : v->thread, v->rec);
}

int sp_add(sp_orderer *o, uint32_t thread, const jager_rec_span *rec)
{
    uint32_t k = jm_map_get(&o->slot, thread, 0);
    if (k == JM_NONE) {
        if (o->nthreads == o->cap) {
            uint32_t cap = o->cap ? o->cap * 2 : 16;
            sp_thread *v = cap > o->cap ? realloc(o->threads, (size_t)cap * sizeof *v) : NULL;
            if (!v) return -1;
            o->threads = v;
            o->cap = cap;
        }
        if (jm_map_put(&o->slot, thread, 0, o->nthreads)) return -1;
        o->threads[o->nthreads] = (sp_thread){.thread = thread};
        k = o->nthreads++;
    }
    sp_thread *t = &o->threads[k];
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        sp_span *v = realloc(t->v, cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    uint64_t end = rec->end_ns >= rec->start_ns ? rec->end_ns : rec->start_ns;
    t->v[t->n++] = (sp_span){.start = rec->start_ns, .end = end, .bytes = rec->bytes, .site = rec->h.aux,
                             .span_id = rec->span_id, .parent_id = rec->parent_id};
    return rec->parent_id == 0 ? flush_thread(o, t) : 0;
}

static int cmp_thread(const void *a, const void *b)
{
    const sp_thread *x = a, *y = b;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

int sp_finish(sp_orderer *o)
{
    if (o->nthreads) /* threads is NULL for a part with no spans */
        qsort(o->threads, o->nthreads, sizeof *o->threads, cmp_thread); /* index order; the map is stale now */
    jm_map_free(&o->slot);
    for (uint32_t i = 0; i < o->nthreads; i++)
        if (flush_thread(o, &o->threads[i])) return -1;
    return 0;
}

void sp_free(sp_orderer *o)
{
    if (!o) return;
    for (uint32_t i = 0; i < o->nthreads; i++) free(o->threads[i].v);
    free(o->threads);
    jm_map_free(&o->slot);
    free(o);
}

typedef struct frame {
    const sp_span *s;
    uint64_t end, user, child_ns, child_bytes;
} frame;

static int close_top(frame *st, uint32_t *depth, const sp_walker *w, void *ctx)
{
    frame *f = &st[--*depth];
    if (w->close(ctx, f->s, f->end, f->child_ns, f->child_bytes, *depth, f->user)) return -1;
    if (*depth) {
        st[*depth - 1].child_ns += f->end - f->s->start;
        st[*depth - 1].child_bytes += f->s->bytes;
    }
    return 0;
}

int sp_walk(const sp_span *spans, size_t n, const sp_walker *w, void *ctx)
{
    frame small[64], *st = small;
    size_t cap = 64;
    uint32_t depth = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const sp_span *s = &spans[i];
        while (depth && st[depth - 1].end <= s->start && !rc) rc = close_top(st, &depth, w, ctx);
        if (rc) break;
        uint64_t end = s->end;
        if (depth && end > st[depth - 1].end) end = st[depth - 1].end;
        if (depth == cap) {
            frame *bigger = malloc(cap * 2 * sizeof *bigger);
            if (!bigger) { rc = -1; break; }
            memcpy(bigger, st, cap * sizeof *st);
            if (st != small) free(st);
            st = bigger;
            cap *= 2;
        }
        uint64_t parent_user = depth ? st[depth - 1].user : 0;
        st[depth] = (frame){.s = s, .end = end};
        st[depth].user = w->open(ctx, s, depth, parent_user);
        depth++;
    }
    while (depth && !rc) rc = close_top(st, &depth, w, ctx);
    if (st != small) free(st);
    return rc;
}
