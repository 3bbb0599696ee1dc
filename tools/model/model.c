/* model.c — building the analysis model from a stream of events (see model.h).
 *
 * Spans reach the file at their end, so on one thread a span's children arrive before
 * it. Each thread keeps a stack of "pending" subtrees keyed by the span id of a still-open
 * span: a span that ends merges itself (with the subtree its own children built) into the
 * pending subtree of its parent, and a top-level span merges into the thread's tree. Open
 * span ids grow with depth, so the stack stays sorted; entries left above a span when it
 * ends belong to spans whose record never came (sampling, drops) and are kept under an
 * "(unrecorded)" node instead of being lost. */
#include <stdlib.h>
#include <string.h>

#include "model_priv.h"
#include "plugin_events.h"
#include "toolutil.h"

#define MSG_KEEP_BYTES 512

void jm_options_default(jm_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->max_tree_nodes = 65536;
    o->max_gc_stacks = 4096;
    o->max_site_stacks = 65536;
    o->max_signatures = 65536;
    o->max_messages = 1024;
    o->max_pending_gc = 65536;
}

static void apply_options(jm_options *dst, const jm_options *src)
{
    jm_options_default(dst);
    if (!src) return;
#define TAKE(f) \
    if (src->struct_size >= offsetof(jm_options, f) + sizeof src->f && src->f) dst->f = src->f
    TAKE(max_tree_nodes);
    TAKE(max_gc_stacks);
    TAKE(max_site_stacks);
    TAKE(max_signatures);
    TAKE(max_messages);
    TAKE(max_pending_gc);
    TAKE(events_only);
#undef TAKE
}

jager_status jm_model_new(jager_reader *r, const jm_options *opt, jm_model **out)
{
    if (!out) return JAGER_E_INVALID;
    *out = NULL;
    if (!r) return JAGER_E_INVALID;
    jm_model *m = calloc(1, sizeof *m);
    jm_priv *p = calloc(1, sizeof *p);
    if (!m || !p) goto oom;
    m->reader = r;
    m->priv = p;
    apply_options(&m->opt, opt);
    for (uint32_t b = 0; b < JAGER_HIST_BUCKETS; b++) p->hist_lower[b] = jager_hist_bucket_lower_ns(b);
    memset(p->fields, -1, sizeof p->fields);
    m->first_ns = UINT64_MAX;
    m->stats.struct_size = sizeof m->stats;
    if (jm_tree_init(&m->merged, 0, m->opt.max_tree_nodes) != 0) goto oom;
    *out = m;
    return JAGER_OK;
oom:
    free(p);
    if (m) m->priv = NULL;
    jm_model_free(m);
    return JAGER_E_NOMEM;
}

/* ---- small helpers ---- */

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

/* The histogram bucket of a duration: a first guess from the documented geometry
 * (JAGER_HIST_SUB_BITS sub-buckets per power of two), settled against the library's own
 * bucket bounds so a change of geometry cannot misfile a call. */
static uint32_t hist_bucket(const jm_priv *p, uint64_t ns)
{
    const uint32_t sub = 1u << JAGER_HIST_SUB_BITS;
    uint32_t b;
    if (ns < sub) {
        b = (uint32_t)ns;
    } else {
        uint32_t e = 63u - (uint32_t)__builtin_clzll(ns);
        b = (e - 1u) * sub + (uint32_t)((ns >> (e - JAGER_HIST_SUB_BITS)) & (sub - 1u));
    }
    if (b >= JAGER_HIST_BUCKETS) b = JAGER_HIST_BUCKETS - 1;
    while (b + 1 < JAGER_HIST_BUCKETS && p->hist_lower[b + 1] <= ns) b++;
    while (b > 0 && p->hist_lower[b] > ns) b--;
    return b;
}

static jm_thread_state *thread_state(jm_model *m, uint32_t thread)
{
    jm_priv *p = m->priv;
    if (thread < p->nts && p->ts[thread].present) return &p->ts[thread]; /* the common case */
    if (!tu_thread_index_ok(m->reader, thread)) return NULL; /* a hostile index: never sizes ts */
    if (jm_grow((void **)&p->ts, &p->cap_threads, thread + 1, sizeof *p->ts) != 0) {
        p->oom = 1;
        return NULL;
    }
    if (thread >= p->nts) p->nts = thread + 1;
    jm_thread_state *ts = &p->ts[thread];
    if (!ts->present) {
        uint32_t cap = m->nthreads;
        if (jm_grow((void **)&m->threads, &cap, m->nthreads + 1, sizeof *m->threads) != 0) goto oom;
        /* The model keeps no capacity field: this regrows on every new thread (few). */
        jm_thread *t = &m->threads[m->nthreads];
        memset(t, 0, sizeof *t);
        t->index = thread;
        t->first_ns = UINT64_MAX;
        t->name = "";
        if (jm_tree_init(&t->tree, thread, m->opt.max_tree_nodes) != 0) goto oom;
        ts->slot = m->nthreads++;
        ts->present = 1;
    }
    return ts;
oom:
    p->oom = 1;
    return NULL;
}

jm_thread *jm_model_thread(jm_model *m, uint32_t thread)
{
    jm_thread_state *ts = thread_state(m, thread);
    return ts ? &m->threads[ts->slot] : NULL;
}

static jm_site_acc *site_acc(jm_model *m, uint32_t site)
{
    jm_priv *p = m->priv;
    if (site < p->nacc && p->acc[site].seen) return &p->acc[site]; /* the common case */
    if (site == 0 || site > jager_reader_site_count(m->reader)) return NULL;
    if (jm_grow((void **)&p->acc, &p->cap_sites, site + 1, sizeof *p->acc) != 0) {
        p->oom = 1;
        return NULL;
    }
    if (site >= p->nacc) p->nacc = site + 1;
    jm_site_acc *a = &p->acc[site];
    if (!a->seen) {
        a->seen = 1;
        a->min_ns = UINT64_MAX;
    }
    return a;
}

/* ---- pending subtrees ---- */

static jm_tree *forest_get(jm_model *m)
{
    jm_priv *p = m->priv;
    if (p->npool) return p->pool[--p->npool];
    jm_tree *t = malloc(sizeof *t);
    if (!t || jm_tree_init(t, 0, m->opt.max_tree_nodes) != 0) {
        free(t);
        p->oom = 1;
        return NULL;
    }
    return t;
}

static void forest_put(jm_model *m, jm_tree *t)
{
    jm_priv *p = m->priv;
    if (!t) return;
    if (p->npool < 64 && jm_grow((void **)&p->pool, &p->cap_pool, p->npool + 1, sizeof *p->pool) == 0) {
        jm_tree_reset(t);
        p->pool[p->npool++] = t;
        return;
    }
    jm_tree_free(t);
    free(t);
}

/* Put the subtree of a span whose record never came under \p into's "(unrecorded)" child of \p at. */
static void attach_orphan(jm_model *m, jm_tree *into, uint32_t at, jm_tree *orphan)
{
    uint32_t u = jm_tree_child(into, at, JM_SITE_UNRECORDED);
    if (u == JM_NONE) {
        ((jm_priv *)m->priv)->oom = 1;
        forest_put(m, orphan);
        return;
    }
    jm_node sum = {.calls = 1, .min_ns = UINT64_MAX};
    for (uint32_t c = orphan->nodes[0].first_child; c != JM_NONE; c = orphan->nodes[c].next_sibling) {
        const jm_node *n = &orphan->nodes[c];
        sum.incl_ns += n->incl_ns;
        sum.bytes += n->bytes;
        sum.errors += n->errors;
    }
    sum.min_ns = sum.max_ns = sum.incl_ns;
    jm_node_add(&into->nodes[u], &sum);
    if (into->nodes[u].site == JM_SITE_UNRECORDED && jm_tree_merge_children(into, u, orphan) != 0)
        ((jm_priv *)m->priv)->oom = 1;
    into->unrecorded++;
    forest_put(m, orphan);
}

/* ---- GC overlap ---- */

/* The first of \p n pauses (ordered, not overlapping) that ends after \p start. */
static uint32_t first_ending_after(const jm_pause *v, uint32_t n, uint64_t start)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (v[mid].end <= start) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Stall time (gc.stall) on \p ts overlapping [start, end). Stalls reach the file before
 * the spans they stalled, so short spans get their GC time too. */
static void stall_overlap(const jm_thread_state *ts, uint64_t start, uint64_t end, uint64_t *gc_ns, uint64_t *pauses)
{
    *gc_ns = 0;
    *pauses = 0;
    if (end <= start) return;
    for (uint32_t i = first_ending_after(ts->stalls, ts->nstalls, start); i < ts->nstalls && ts->stalls[i].start < end; i++) {
        uint64_t a = ts->stalls[i].start > start ? ts->stalls[i].start : start;
        uint64_t b = ts->stalls[i].end < end ? ts->stalls[i].end : end;
        if (b <= a) continue;
        *gc_ns += b - a;
        (*pauses)++;
    }
}

/* GC pause time on \p ts overlapping [start, end); credits trigger stacks to \p site. */
static void gc_overlap(jm_model *m, jm_thread_state *ts, uint32_t site, uint64_t start, uint64_t end,
                       uint64_t *gc_ns, uint64_t *pauses)
{
    jm_priv *p = m->priv;
    *gc_ns = 0;
    *pauses = 0;
    if (!ts->npauses || end <= start) return;
    for (uint32_t i = first_ending_after(ts->pauses, ts->npauses, start); i < ts->npauses && ts->pauses[i].start < end; i++) {
        jm_pause *pz = &ts->pauses[i];
        uint64_t a = pz->start > start ? pz->start : start, b = pz->end < end ? pz->end : end;
        if (b <= a) continue;
        uint64_t ov = b - a;
        *gc_ns += ov;
        (*pauses)++;
        pz->attributed = 1;
        if (pz->requested) {
            jm_site_acc *acc = site_acc(m, site);
            if (acc) {
                acc->req_ns += ov;
                acc->req_pauses++;
            }
        }
        /* (site, trigger stack) → time: "80% of step!'s GC triggered from assemble";
         * requested collections keyed apart (the stack id inverted) so triggers of
         * automatic collections never count a GC.gc() call. */
        uint64_t skey = pz->requested ? ~(uint64_t)pz->stack : (uint64_t)pz->stack;
        uint32_t k = jm_map_get(&p->site_stack_map, site, skey);
        if (k == JM_NONE) {
            if (m->nsite_stacks >= m->opt.max_site_stacks) continue;
            if (jm_grow((void **)&m->site_stacks, &p->cap_site_stacks, m->nsite_stacks + 1,
                        sizeof *m->site_stacks) != 0 ||
                jm_map_put(&p->site_stack_map, site, skey, m->nsite_stacks) != 0) {
                p->oom = 1;
                continue;
            }
            k = m->nsite_stacks++;
            m->site_stacks[k].site = site;
            m->site_stacks[k].stack = pz->stack;
            m->site_stacks[k].requested = pz->requested != 0;
        }
        m->site_stacks[k].pauses++;
        m->site_stacks[k].total_ns += ov;
    }
}

/* Forget pauses that end by \p t (no later span of this thread can overlap them). */
static void gc_prune(jm_model *m, jm_thread_state *ts, uint64_t t, uint32_t keep_max)
{
    uint32_t n = 0;
    while (n < ts->npauses && (ts->pauses[n].end <= t || ts->npauses - n > keep_max)) {
        if (!ts->pauses[n].attributed) m->gc.unattributed_ns += ts->pauses[n].end - ts->pauses[n].start;
        n++;
    }
    if (n) {
        memmove(ts->pauses, ts->pauses + n, (ts->npauses - n) * sizeof *ts->pauses);
        ts->npauses -= n;
    }
    for (n = 0; n < ts->nstalls && (ts->stalls[n].end <= t || ts->nstalls - n > keep_max); n++) {
    }
    if (n) {
        memmove(ts->stalls, ts->stalls + n, (ts->nstalls - n) * sizeof *ts->stalls);
        ts->nstalls -= n;
    }
}

/* ---- spans ---- */

/* The errors of span \p span_id of \p ts's numbering, taken off its open errors. A plain
 * span also drops its thread's errors of ids above it (nested spans whose record is lost);
 * a span_x (\p x) does not — that thread went on with other tasks — and an error set on
 * another thread (moved) waits for its own span. Few entries: spans with errors still open. */
static uint32_t take_errors(jm_thread_state *ts, uint32_t span_id, int x)
{
    uint32_t count = 0, n = 0;
    for (uint32_t i = 0; i < ts->nerrs; i++) {
        jm_open_error e = ts->errs[i];
        if (e.span_id == span_id) count += e.count;
        else if (x || e.moved || e.span_id < span_id) ts->errs[n++] = e;
    }
    ts->nerrs = n;
    return count;
}

static void add_span(jm_model *m, const jager_event *ev)
{
    jm_priv *p = m->priv;
    const jager_rec_span *rec = (const jager_rec_span *)ev->rec;
    /* A span of a task that moved between threads (JAGER_EV_SPAN_X): its ids are its begin
     * thread's and its parent's thread's, and it goes into its begin thread's tree. */
    int x = ev->type == JAGER_EV_SPAN_X;
    if (rec->h.words * 8u < (x ? sizeof(jager_rec_span_x) : sizeof *rec)) {
        m->malformed++;
        return;
    }
    const jager_rec_span_x *rx = x ? (const jager_rec_span_x *)ev->rec : NULL;
    jm_site_acc *a = site_acc(m, rec->h.aux);
    jm_thread_state *ts = thread_state(m, x ? rx->begin_thread : ev->thread);
    jm_thread_state *pts = x && rx->parent_thread != rx->begin_thread ? thread_state(m, rx->parent_thread) : ts;
    if (!a || !ts || !pts) {
        m->malformed++;
        return;
    }
    uint32_t site = rec->h.aux, id = rec->span_id, parent = rec->parent_id;
    uint64_t dur = rec->end_ns >= rec->start_ns ? rec->end_ns - rec->start_ns : 0;
    m->spans++;
    m->threads[ts->slot].spans++;

    a->calls++;
    a->total_ns += dur;
    if (dur < a->min_ns) a->min_ns = dur;
    if (dur > a->max_ns) a->max_ns = dur;
    a->bytes += rec->bytes;
    if (!a->hist && !(a->hist = calloc(JAGER_HIST_BUCKETS, sizeof *a->hist))) p->oom = 1;
    if (a->hist) a->hist[hist_bucket(p, dur)]++;

    jm_node self = {.site = site, .calls = 1, .incl_ns = dur, .min_ns = dur, .max_ns = dur, .bytes = rec->bytes};
    /* With tasks interleaving on the thread (or a span that moved), spans with higher ids
     * may still be open — another task's — not lost: their pending entries and errors stay. */
    int others_open = x || ts->tasks;
    self.errors = ts->nerrs ? take_errors(ts, id, others_open) : 0;
    gc_overlap(m, ts, site, rec->start_ns, rec->end_ns, &self.gc_ns, &self.gc_pauses);
    if (p->have_stalls) stall_overlap(ts, rec->start_ns, rec->end_ns, &self.gc_ns, &self.gc_pauses);
    a->gc_ns += self.gc_ns;
    a->gc_pauses += self.gc_pauses;
    if (self.gc_ns && a->hist && !a->hist_nogc) {
        /* Calls so far had no GC: start from their histogram, less this call. */
        if ((a->hist_nogc = malloc(JAGER_HIST_BUCKETS * sizeof *a->hist_nogc)) != NULL) {
            memcpy(a->hist_nogc, a->hist, JAGER_HIST_BUCKETS * sizeof *a->hist_nogc);
            a->hist_nogc[hist_bucket(p, dur)]--;
            a->hist_nogc[hist_bucket(p, dur - (self.gc_ns < dur ? self.gc_ns : dur))]++;
        } else {
            p->oom = 1;
        }
    } else if (a->hist_nogc) {
        a->hist_nogc[hist_bucket(p, dur - (self.gc_ns < dur ? self.gc_ns : dur))]++;
    }

    /* This span's own children: the pending entry with its id; entries above it are orphans. */
    uint32_t top = ts->npending;
    while (top && ts->pending[top - 1].span_id > id) top--;
    jm_tree *kids = NULL;
    uint32_t below = top;
    if (top && ts->pending[top - 1].span_id == id) {
        kids = ts->pending[top - 1].forest;
        below = top - 1;
    }
    for (uint32_t i = top; !others_open && i < ts->npending; i++) { /* other tasks' entries are not orphans */
        if (!kids && !(kids = forest_get(m))) {
            forest_put(m, ts->pending[i].forest);
            continue;
        }
        attach_orphan(m, kids, 0, ts->pending[i].forest);
    }
    if (!others_open) {
        ts->npending = below;
    } else if (below < top) { /* only its own entry leaves: the entries above are others' */
        memmove(ts->pending + below, ts->pending + top, (ts->npending - top) * sizeof *ts->pending);
        ts->npending -= top - below;
    }

    uint64_t child_ns = 0;
    if (kids)
        for (uint32_t c = kids->nodes[0].first_child; c != JM_NONE; c = kids->nodes[c].next_sibling)
            child_ns += kids->nodes[c].incl_ns;
    self.excl_ns = dur > child_ns ? dur - child_ns : 0;

    jm_tree *dst;
    uint32_t full_limit = 0; /* set: dst's node cap, lowered for this merge */
    if (parent == 0 || (pts == ts && parent >= id)) {
        /* Top level: whatever is still pending belongs to spans that never got recorded. */
        dst = &m->threads[ts->slot].tree;
        for (uint32_t i = 0; !others_open && i < ts->npending; i++) attach_orphan(m, dst, 0, ts->pending[i].forest);
        if (!others_open) ts->npending = 0;
        dst->nodes[0].calls++;
        dst->nodes[0].incl_ns += dur;
        dst->nodes[0].bytes += rec->bytes;
        dst->nodes[0].errors += self.errors;
        dst->nodes[0].gc_ns += self.gc_ns;
        dst->nodes[0].gc_pauses += self.gc_pauses;
        gc_prune(m, ts, rec->end_ns, m->opt.max_pending_gc);
    } else {
        uint32_t n = pts->npending;
        while (n && pts->pending[n - 1].span_id > parent) n--;
        jm_tree *pf = NULL;
        if (n && pts->pending[n - 1].span_id == parent) {
            pf = pts->pending[n - 1].forest;
        } else if ((pf = forest_get(m)) != NULL) {
            /* Insert the parent's entry at n, keeping the stack sorted by id. */
            if (jm_grow((void **)&pts->pending, &pts->cap_pending, pts->npending + 1, sizeof *pts->pending) != 0) {
                p->oom = 1;
                forest_put(m, pf);
                pf = NULL;
            } else {
                memmove(pts->pending + n + 1, pts->pending + n, (pts->npending - n) * sizeof *pts->pending);
                pts->pending[n] = (jm_pending){parent, pf};
                pts->npending++;
                n++;
            }
        }
        if (!pf) {
            forest_put(m, kids);
            return;
        }
        /* Entries between the parent and this span: siblings that were never recorded. */
        for (uint32_t i = n; !x && i < pts->npending; i++) attach_orphan(m, pf, 0, pts->pending[i].forest);
        if (!x) pts->npending = n;
        dst = pf;
        /* The parent's first child so far: this span's own subtree becomes the parent's
         * pending forest in place, not copied into an empty one (a chain of D nested
         * spans would copy D²/2 nodes). */
        uint32_t w;
        if (kids && pf->count == 1 && (w = jm_tree_wrap(kids, site)) != JM_NONE) {
            jm_node_add(&kids->nodes[w], &self);
            pts->pending[n - 1].forest = kids;
            forest_put(m, pf);
            return;
        }
        /* The subtree is at the node cap: copied into the parent's empty forest below, to a
         * quarter of the cap (deeper paths folded into "(other)", counted; with the folds at
         * most half), so the next levels of a chain deeper than the cap wrap in place again.
         * Copying it whole each level cost cap × depth (an 80,000-deep chain: minutes). */
        if (kids && pf->count == 1) {
            full_limit = jm_tree_limit(pf);
            jm_tree_set_limit(pf, full_limit / 4);
        }
    }

    uint32_t c = jm_tree_child(dst, 0, site);
    if (c == JM_NONE) {
        p->oom = 1;
    } else if (dst->nodes[c].site != site) { /* folded: keeps no structure below */
        self.excl_ns = self.incl_ns;
        jm_node_add(&dst->nodes[c], &self);
        dst->folded_calls++;
    } else {
        jm_node_add(&dst->nodes[c], &self);
        if (kids && jm_tree_merge_children(dst, c, kids) != 0) p->oom = 1;
    }
    if (full_limit) jm_tree_set_limit(dst, full_limit);
    forest_put(m, kids);
}

static void add_span_error(jm_model *m, const jager_event *ev)
{
    jm_priv *p = m->priv;
    const jager_rec_span_error *rec = (const jager_rec_span_error *)ev->rec;
    size_t bytes = rec->h.words * 8u;
    if (bytes < sizeof *rec || rec->msg_len > bytes - sizeof *rec) {
        m->malformed++;
        return;
    }
    m->span_errors++;
    /* keyed by the thread that numbers span_id: its begin thread when set on another (1.2) */
    uint32_t thread, site = jm_span_ref(ev, &thread);
    unsigned moved = thread != ev->thread;
    jm_site_acc *a = site_acc(m, site);
    jm_thread_state *ts = thread_state(m, thread);
    if (!a || !ts) return;
    a->errors++;
    jm_open_error *last = ts->nerrs ? &ts->errs[ts->nerrs - 1] : NULL;
    if (last && last->span_id == rec->span_id && last->moved == moved && last->count < INT32_MAX) {
        last->count++;
    } else if (ts->nerrs < 4096 &&
               jm_grow((void **)&ts->errs, &ts->cap_errs, ts->nerrs + 1, sizeof *ts->errs) == 0) {
        ts->errs[ts->nerrs++] = (jm_open_error){rec->span_id, 1, moved};
    }

    const char *text = (const char *)(rec + 1);
    size_t len = rec->msg_len < MSG_KEEP_BYTES ? rec->msg_len : MSG_KEEP_BYTES;
    uint64_t h = fnv1a(text, len);
    uint32_t k = jm_map_get(&p->msg_map, site, h);
    if (k == JM_NONE) {
        if (m->nmessages >= m->opt.max_messages) return; /* counted as msg_other at finish */
        char *copy = malloc(len + 1);
        if (!copy || jm_grow((void **)&m->messages, &p->cap_msgs, m->nmessages + 1, sizeof *m->messages) != 0 ||
            jm_map_put(&p->msg_map, site, h, m->nmessages) != 0) {
            free(copy);
            p->oom = 1;
            return;
        }
        memcpy(copy, text, len);
        copy[len] = 0;
        k = m->nmessages++;
        m->messages[k] = (jm_message){.site = site, .text = copy, .first_ns = rec->time_ns};
    }
    m->messages[k].count++;
}

/* ---- plugin records ---- */

/* The model's role for each plugin event it reads (the types and fields: plugin_events.h). */
static const struct role_def {
    const jp_plugin *plugin;
    int event;
    int role;
} role_defs[] = {
    {&jp_gc, JP_GC_PAUSE, JM_ROLE_GC_PAUSE},
    {&jp_gc, JP_GC_SITE_TIME, JM_ROLE_GC_SITE_TIME},
    {&jp_gc, JP_GC_STALL, JM_ROLE_GC_STALL},
    {&jp_dispatch, JP_DISPATCH_SIGNATURE, JM_ROLE_SIGNATURE},
    {&jp_dispatch, JP_DISPATCH_COMPILE, JM_ROLE_COMPILE},
    {&jp_dispatch, JP_DISPATCH_SPECIALIZATIONS, JM_ROLE_SPECS},
    {&jp_dispatch, JP_DISPATCH_INSTABILITY, JM_ROLE_INSTABILITY},
    {&jp_cuda, JP_CUDA_KERNEL, JM_ROLE_CUDA_KERNEL},
    {&jp_cuda, JP_CUDA_LAUNCH, JM_ROLE_CUDA_LAUNCH},
    {&jp_cuda, JP_CUDA_MEMCPY, JM_ROLE_CUDA_MEMCPY},
    {&jp_cuda, JP_CUDA_SUMMARY, JM_ROLE_CUDA_SUMMARY},
    {&jp_cuda, JP_CUDA_DEVICE, JM_ROLE_CUDA_DEVICE},
    {&jp_openmp, JP_OPENMP_SITE_ROLE, JM_ROLE_SITE_ROLE},
    {&jp_sampler, JP_SAMPLER_SAMPLE, JM_ROLE_SAMPLE},
};

static void resolve_role(jm_model *m, uint16_t type)
{
    jm_priv *p = m->priv;
    p->role[type] = JM_ROLE_OTHER;
    const jager_type_desc *d = jager_reader_type(m->reader, type);
    if (!d || !d->name) return;
    if (jp_in_plugin(d->name, &jp_gc) || jp_in_plugin(d->name, &jp_dispatch) || jp_in_plugin(d->name, &jp_cuda)
        || jp_in_plugin(d->name, &jp_sampler) || jp_in_plugin(d->name, &jp_mpi) /* mpi: model_mpi.c, hunt_rules_mpi.c */
        || jp_in_plugin(d->name, &jp_openmp)) /* openmp.summary: the plugin's own counts, shown by summary */
        p->role[type] = JM_ROLE_FAMILIAR;
    for (size_t i = 0; i < sizeof role_defs / sizeof role_defs[0]; i++) {
        const struct role_def *rd = &role_defs[i];
        /* Any plugin's "<name>.site_role" reads like openmp's (fields found by name). */
        if (!jp_is(d->name, rd->plugin, rd->event) && !(rd->role == JM_ROLE_SITE_ROLE && jp_is_site_role(d->name)))
            continue;
        for (int f = 0; f < JM_ROLE_FIELDS && f < JP_MAX_FIELDS && jp_field(rd->plugin, rd->event, f); f++) {
            uint32_t k = jp_field_index(d, rd->plugin, rd->event, f);
            p->fields[rd->role][f] = k < JAGER_MAX_FIELDS ? (int8_t)k : -1;
        }
        p->role[type] = (uint8_t)rd->role;
        return;
    }
}

/* Field \p f (the event's field enum in plugin_events.h) of a plugin record, 0 when the type or record lacks it. */
static uint64_t field(const jm_priv *p, int role, const jager_rec_plugin *rec, int f)
{
    int k = p->fields[role][f];
    if (k < 0 || rec->h.words < 3u + (unsigned)k) return 0;
    return rec->fields[k];
}

static uint32_t sig_slot(jm_model *m, jm_map *map, void **arr, uint32_t *cap, uint32_t *count, size_t elem,
                         uint64_t a, uint64_t b)
{
    jm_priv *p = m->priv;
    uint32_t k = jm_map_get(map, a, b);
    if (k != JM_NONE) return k;
    if (*count >= m->opt.max_signatures) {
        m->dispatch_other++;
        return JM_NONE;
    }
    if (jm_grow(arr, cap, *count + 1, elem) != 0 || jm_map_put(map, a, b, *count) != 0) {
        p->oom = 1;
        return JM_NONE;
    }
    return (*count)++;
}

static const char *str_or_empty(const jm_model *m, uint64_t id)
{
    const char *s = id <= UINT32_MAX ? jager_reader_string(m->reader, (uint32_t)id) : NULL;
    return s ? s : "";
}

static void add_gc_pause(jm_model *m, const jager_event *ev, const jager_rec_plugin *rec)
{
    jm_priv *p = m->priv;
    int R = JM_ROLE_GC_PAUSE;
    uint64_t dur = field(p, R, rec, JP_PAUSE_DURATION_NS);
    if (dur > UINT64_MAX - rec->time_ns) dur = UINT64_MAX - rec->time_ns; /* damaged: keep start ≤ end */
    jager_stack_id stack = field(p, R, rec, JP_PAUSE_STACK);
    jm_gc *g = &m->gc;
    g->pauses++;
    g->total_ns += dur;
    if (dur > g->max_ns) g->max_ns = dur;
    g->full_pauses += field(p, R, rec, JP_PAUSE_FULL); /* full sweeps: a pause can hold two */
    uint32_t requested = field(p, R, rec, JP_PAUSE_REQUESTED) != 0;
    if (requested) {
        g->requested_pauses++;
        g->requested_ns += dur;
    }
    g->allocd_bytes += field(p, R, rec, JP_PAUSE_ALLOCD_BYTES);
    g->freed_bytes += field(p, R, rec, JP_PAUSE_FREED_BYTES);
    uint64_t live = field(p, R, rec, JP_PAUSE_LIVE_BYTES);
    if (live > g->max_live_bytes) g->max_live_bytes = live;

    uint32_t k = jm_map_get(&p->gc_stack_map, stack, requested);
    if (k == JM_NONE && g->nstacks < m->opt.max_gc_stacks) {
        if (jm_grow((void **)&g->stacks, &p->cap_gc_stacks, g->nstacks + 1, sizeof *g->stacks) != 0 ||
            jm_map_put(&p->gc_stack_map, stack, requested, g->nstacks) != 0) {
            p->oom = 1;
        } else {
            k = g->nstacks++;
            g->stacks[k].stack = stack;
            g->stacks[k].requested = (int)requested;
        }
    }
    if (k == JM_NONE) {
        g->other_pauses++;
        g->other_ns += dur;
    } else {
        g->stacks[k].pauses++;
        g->stacks[k].total_ns += dur;
        if (dur > g->stacks[k].max_ns) g->stacks[k].max_ns = dur;
    }

    uint64_t psite = field(p, R, rec, JP_PAUSE_SITE);
    if (psite) jm_gc_pause_site(m, (jager_site)psite, stack, (int)requested, dur);

    /* The gc plugin emits pauses from its own thread; the thread that triggered (and whose
     * spans the pause stalled) is named by os_tid. Older files lack it: use the record's. */
    jm_thread_state *ts = thread_state(m, tu_thread_by_os_tid(m->reader, field(p, R, rec, JP_PAUSE_OS_TID), ev->thread));
    if (!ts) return;
    if (ts->npauses && rec->time_ns < ts->pauses[ts->npauses - 1].end) {
        /* Out of order or overlapping on one thread: keep the order the search relies on. */
        g->unattributed_ns += dur;
        return;
    }
    if (ts->npauses >= m->opt.max_pending_gc) gc_prune(m, ts, 0, m->opt.max_pending_gc / 2);
    if (jm_grow((void **)&ts->pauses, &ts->cap_pauses, ts->npauses + 1, sizeof *ts->pauses) != 0) {
        p->oom = 1;
        return;
    }
    ts->pauses[ts->npauses++] = (jm_pause){rec->time_ns, rec->time_ns + dur, stack, 0, requested};
}

/* A stall: the pause as the triggering thread's own ring saw it (before the spans it
 * stalled end). Only the GC time of spans comes from stalls; counts, stacks and the
 * attribution of trigger stacks stay with gc.pause. */
static void add_gc_stall(jm_model *m, const jager_event *ev, const jager_rec_plugin *rec)
{
    jm_priv *p = m->priv;
    uint64_t dur = field(p, JM_ROLE_GC_STALL, rec, JP_STALL_DURATION_NS);
    if (dur > UINT64_MAX - rec->time_ns) dur = UINT64_MAX - rec->time_ns;
    jm_thread_state *ts = thread_state(m, ev->thread);
    if (!ts) return;
    p->have_stalls = 1;
    if (ts->nstalls && rec->time_ns < ts->stalls[ts->nstalls - 1].end) return; /* keep them ordered */
    if (ts->nstalls >= m->opt.max_pending_gc) gc_prune(m, ts, 0, m->opt.max_pending_gc / 2);
    if (jm_grow((void **)&ts->stalls, &ts->cap_stalls, ts->nstalls + 1, sizeof *ts->stalls) != 0) {
        p->oom = 1;
        return;
    }
    ts->stalls[ts->nstalls++] = (jm_pause){rec->time_ns, rec->time_ns + dur, 0, 0, 0};
}

static void add_plugin(jm_model *m, const jager_event *ev)
{
    jm_priv *p = m->priv;
    const jager_rec_plugin *rec = (const jager_rec_plugin *)ev->rec;
    if (p->role[ev->type] == JM_ROLE_UNRESOLVED) resolve_role(m, ev->type);
    int R = p->role[ev->type];
    if (R == JM_ROLE_OTHER || R == JM_ROLE_FAMILIAR) return;
    if (rec->h.words < 2) {
        m->malformed++;
        return;
    }
    switch (R) {
    case JM_ROLE_SITE_ROLE: {
        jm_site_acc *a = site_acc(m, (uint32_t)field(p, R, rec, JP_ROLE_SITE));
        const char *role = jager_reader_string(m->reader, (uint32_t)field(p, R, rec, JP_ROLE_ROLE));
        if (!a || !role) break;
        a->role |= JM_SITE_ROLE_KNOWN;
        if (!strcmp(role, "barrier_wait") || !strcmp(role, "lock_wait")) a->role |= JM_SITE_ROLE_WAIT;
        else if (!strcmp(role, "region")) a->role |= JM_SITE_ROLE_REGION;
        else if (!strcmp(role, "work")) a->role |= JM_SITE_ROLE_WORK;
        if (strcmp(role, "region") != 0 && p->fields[R][JP_ROLE_REGION] >= 0) {
            uint64_t r = field(p, R, rec, JP_ROLE_REGION);
            uint32_t s = (uint32_t)field(p, R, rec, JP_ROLE_SITE);
            if (r && r != s && r < UINT32_MAX) a->region = (uint32_t)r;
        }
        break;
    }
    case JM_ROLE_SAMPLE:
        jm_samples_add(m, field(p, R, rec, JP_SMP_STACK), field(p, R, rec, JP_SMP_SITE), field(p, R, rec, JP_SMP_WEIGHT),
                       field(p, R, rec, JP_SMP_CPU_NS));
        break;
    case JM_ROLE_GC_PAUSE:
        add_gc_pause(m, ev, rec);
        break;
    case JM_ROLE_GC_STALL:
        add_gc_stall(m, ev, rec);
        break;
    case JM_ROLE_GC_SITE_TIME: {
        jm_site_acc *a = site_acc(m, (uint32_t)field(p, R, rec, JP_SITE_TIME_SITE));
        if (!a) break;
        a->site_time_gc_ns += field(p, R, rec, JP_SITE_TIME_GC_NS);
        a->site_time_pauses += field(p, R, rec, JP_SITE_TIME_PAUSES);
        m->gc.has_site_time = 1;
        break;
    }
    case JM_ROLE_SIGNATURE: {
        uint64_t site = field(p, R, rec, JP_SIGNATURE_SITE), sig = field(p, R, rec, JP_SIGNATURE_SIGNATURE), calls = field(p, R, rec, JP_SIGNATURE_CALLS);
        uint32_t k = sig_slot(m, &p->sig_map, (void **)&m->signatures, &p->cap_sigs, &m->nsignatures,
                              sizeof *m->signatures, site, sig);
        if (k == JM_NONE) break;
        jm_signature *s = &m->signatures[k];
        if (!s->signature) {
            s->site = (jager_site)site;
            s->signature = str_or_empty(m, sig);
        }
        if (calls > s->calls) s->calls = calls; /* the census repeats at each stop: keep the latest (largest) */
        break;
    }
    case JM_ROLE_INSTABILITY: {
        uint64_t site = field(p, R, rec, JP_INSTABILITY_SITE), sig = field(p, R, rec, JP_INSTABILITY_SIGNATURE);
        uint32_t k = sig_slot(m, &p->unstable_map, (void **)&m->instabilities, &p->cap_unstable,
                              &m->ninstabilities, sizeof *m->instabilities, site, sig);
        if (k == JM_NONE) break;
        jm_instability *u = &m->instabilities[k];
        if (!u->signature) {
            u->site = (jager_site)site;
            u->signature = str_or_empty(m, sig);
            u->reason = "";
            u->chain = "";
        }
        u->flags |= field(p, R, rec, JP_INSTABILITY_FLAGS);
        const char *reason = str_or_empty(m, field(p, R, rec, JP_INSTABILITY_REASON)), *chain = str_or_empty(m, field(p, R, rec, JP_INSTABILITY_CHAIN));
        if (!*u->reason) u->reason = reason;
        if (!*u->chain) u->chain = chain;
        u->reports++;
        break;
    }
    case JM_ROLE_COMPILE: {
        uint64_t dur = field(p, R, rec, JP_COMPILE_DURATION_NS), inf = field(p, R, rec, JP_COMPILE_INFERENCE_NS), sig = field(p, R, rec, JP_COMPILE_SIGNATURE);
        m->compile_count++;
        m->compile_ns += dur;
        m->inference_ns += inf;
        if (dur + inf > m->compile_max_ns) m->compile_max_ns = dur + inf;
        uint32_t k = sig_slot(m, &p->compile_map, (void **)&m->compiles, &p->cap_compiles, &m->ncompiles,
                              sizeof *m->compiles, sig, 0);
        if (k == JM_NONE) break;
        jm_compile *c = &m->compiles[k];
        if (!c->signature) c->signature = str_or_empty(m, sig);
        c->count++;
        c->codegen_ns += dur;
        c->inference_ns += inf;
        break;
    }
    case JM_ROLE_SPECS: {
        uint64_t method = field(p, R, rec, JP_SPECS_METHOD), count = field(p, R, rec, JP_SPECS_COUNT);
        uint32_t k = sig_slot(m, &p->method_map, (void **)&m->methods, &p->cap_methods, &m->nmethods,
                              sizeof *m->methods, method, 0);
        if (k == JM_NONE) break;
        jm_method_specs *s = &m->methods[k];
        if (!s->method) {
            s->method = str_or_empty(m, method);
            s->file = str_or_empty(m, field(p, R, rec, JP_SPECS_FILE));
            uint64_t line = field(p, R, rec, JP_SPECS_LINE);
            s->line = line > UINT32_MAX ? 0 : (uint32_t)line;
        }
        if (count > s->count) s->count = count;
        break;
    }
    case JM_ROLE_CUDA_KERNEL:
    case JM_ROLE_CUDA_LAUNCH:
    case JM_ROLE_CUDA_MEMCPY:
    case JM_ROLE_CUDA_SUMMARY:
    case JM_ROLE_CUDA_DEVICE: {
        uint64_t vals[JM_ROLE_FIELDS];
        for (int f = 0; f < JM_ROLE_FIELDS; f++) vals[f] = field(p, R, rec, f);
        jm_cuda_add(m, R, ev, vals);
        break;
    }
    default:
        break;
    }
}

/* ---- core records ---- */

static void add_counter(jm_model *m, const jager_event *ev)
{
    jm_priv *p = m->priv;
    const jager_rec_counter *rec = (const jager_rec_counter *)ev->rec;
    uint32_t id = rec->h.aux;
    if (rec->h.words * 8u < sizeof *rec || id == 0 || id > jager_reader_counter_count(m->reader)) {
        m->malformed++;
        return;
    }
    uint32_t cap = p->cap_counters;
    if (jm_grow((void **)&m->counters, &cap, id + 1, sizeof *m->counters) != 0) {
        p->oom = 1;
        return;
    }
    p->cap_counters = cap;
    if (id + 1 > m->ncounters) m->ncounters = id + 1;
    jm_counter *c = &m->counters[id];
    double v = rec->value;
    uint64_t t = rec->time_ns;
    if (!c->samples) {
        c->id = id;
        c->first = c->last = c->min = c->max = v;
        c->first_ns = c->last_ns = t;
    }
    c->samples++;
    if (v < c->min) c->min = v;
    if (v > c->max) c->max = v;
    /* Threads interleave in the file by drain: first and last go by time. A monotonic
     * counter's samples carry the process's running total, so of two samples stamped alike
     * the larger is the later add (the report and the OTel sink order ties the same way). */
    if (t < c->first_ns || (t == c->first_ns && v < c->first)) c->first = v, c->first_ns = t;
    if (t > c->last_ns || (t == c->last_ns && v > c->last)) c->last = v, c->last_ns = t;
}

static void copy_view(char *dst, size_t size, const char *s, uint32_t len)
{
    if (len >= size) len = (uint32_t)size - 1;
    memcpy(dst, s, len);
    dst[len] = 0;
}

/* A log event with security=true (the supply-chain scanner's): counted, the first kept. */
static void add_security(jm_model *m, const jager_event *ev)
{
    const char *body;
    uint32_t blen;
    const uint8_t *a, *ae;
    if (jager_log_body((const jager_rec_log *)ev->rec, &body, &blen, &a, &ae) != JAGER_OK) return;
    jager_attr_view v;
    const uint8_t *cur = a;
    int security = 0;
    while (jager_attr_next(&cur, ae, &v) == 1)
        if (v.key_len == 8 && !memcmp(v.key, "security", 8) && v.kind == JAGER_ATTR_BOOL && v.i64) security = 1;
    if (!security) return;
    m->security_events++;
    if (m->nsecurity >= JM_SECURITY_KEEP) return;
    if (!m->security && !(m->security = calloc(JM_SECURITY_KEEP, sizeof *m->security))) return;
    jm_security *s = &m->security[m->nsecurity++];
    copy_view(s->body, sizeof s->body, body, blen);
    cur = a;
    while (jager_attr_next(&cur, ae, &v) == 1) {
        if (v.kind != JAGER_ATTR_STR) continue;
        if (v.key_len == 11 && !memcmp(v.key, "supply.kind", 11)) copy_view(s->kind, sizeof s->kind, v.str, v.str_len);
        else if (v.key_len == 14 && !memcmp(v.key, "supply.package", 14)) copy_view(s->package, sizeof s->package, v.str, v.str_len);
        else if (v.key_len == 11 && !memcmp(v.key, "supply.file", 11)) copy_view(s->file, sizeof s->file, v.str, v.str_len);
    }
}

static void add_log(jm_model *m, const jager_event *ev)
{
    add_security(m, ev);
    uint32_t sev = ev->rec->aux & 0xFFu;
    int b = sev == 0 ? JM_SEV_TRACE : (int)((sev - 1) / 4);
    if (b >= JM_SEV_COUNT) b = JM_SEV_FATAL;
    m->logs[b]++;
    if (ev->rec->aux & JAGER_LOG_TRUNCATED) m->logs_truncated++;
}

static void add_drop(jm_model *m, const jager_event *ev)
{
    const jager_rec_drop *rec = (const jager_rec_drop *)ev->rec;
    if (rec->h.words * 8u < sizeof *rec) {
        m->malformed++;
        return;
    }
    uint32_t reason = rec->h.aux < JAGER_DROP_REASONS ? rec->h.aux : JAGER_DROP_REASONS - 1;
    m->drop_records[reason] += rec->count;
}

jager_status jm_model_add(jm_model *m, const jager_event *ev)
{
    if (!m || !ev || !ev->rec) return JAGER_E_INVALID;
    jm_priv *p = m->priv;
    m->events++;
    p->type_counts[ev->type]++;
    if (ev->time_ns && ev->time_ns < m->first_ns) m->first_ns = ev->time_ns;
    /* A plugin event counts at its time: the reader gives it an extent from its first
     * DURATION_NS field, which may be a cumulative total (gc.sample's gc_total_ns) or a CPU
     * time, not how long the event lasted — it must never extend the run. */
    uint64_t end = ev->type < JAGER_EV_FIRST_PLUGIN && ev->end_ns > ev->time_ns ? ev->end_ns : ev->time_ns;
    if (end > m->last_ns) m->last_ns = end;
    jm_thread_state *ts = thread_state(m, ev->thread);
    if (ts) {
        jm_thread *t = &m->threads[ts->slot];
        t->events++;
        if (ev->time_ns && ev->time_ns < t->first_ns) t->first_ns = ev->time_ns;
        if (end > t->last_ns) t->last_ns = end;
    }
    if (ev->type == JAGER_EV_LOG || ev->type == JAGER_EV_SPAN_ATTR || ev->type == JAGER_EV_SPAN_ERROR ||
        ((ev->type == JAGER_EV_SPAN || ev->type == JAGER_EV_SPAN_X) && p->code_methods))
        jm_methods_add(m, ev);
    switch (ev->type) {
    case JAGER_EV_SPAN: case JAGER_EV_SPAN_X: add_span(m, ev); break;
    case JAGER_EV_SPAN_ERROR: add_span_error(m, ev); break;
    case JAGER_EV_LOG: add_log(m, ev); break;
    case JAGER_EV_COUNTER: add_counter(m, ev); break;
    case JAGER_EV_MARK: m->marks++; break;
    case JAGER_EV_DROP: add_drop(m, ev); break;
    case JAGER_EV_DIAG: m->diags++; break;
    case JAGER_EV_TASK: {
        jm_thread_state *tts = thread_state(m, ev->thread);
        if (tts) tts->tasks = 1;
        break;
    }
    default:
        if (ev->type >= JAGER_EV_FIRST_PLUGIN) add_plugin(m, ev);
        break;
    }
    return p->oom ? JAGER_E_NOMEM : JAGER_OK;
}

jager_status jm_model_build(jager_reader *r, const jm_options *opt, jm_model **out, int *read_status)
{
    jm_model *m = NULL;
    jager_status st = jm_model_new(r, opt, &m);
    if (st != JAGER_OK) return st;
    jager_event ev;
    int rc;
    while ((rc = jager_reader_next(r, &ev)) > 0) {
        if (jm_model_add(m, &ev) != JAGER_OK) {
            jm_model_free(m);
            *out = NULL;
            return JAGER_E_NOMEM;
        }
    }
    if (read_status) *read_status = rc;
    st = jm_model_finish(m);
    if (st != JAGER_OK) {
        jm_model_free(m);
        *out = NULL;
        return st;
    }
    *out = m;
    return JAGER_OK;
}

jager_status jm_model_finish(jm_model *m)
{
    if (!m || !m->priv) return JAGER_E_INVALID;
    return jm_finish_impl(m);
}

void jm_model_free(jm_model *m)
{
    if (!m) return;
    free(m->security);
    jm_priv *p = m->priv;
    if (p) {
        for (uint32_t i = 0; i < p->nts; i++) {
            jm_thread_state *ts = &p->ts[i];
            for (uint32_t k = 0; k < ts->npending; k++) {
                jm_tree_free(ts->pending[k].forest);
                free(ts->pending[k].forest);
            }
            free(ts->pending);
            free(ts->pauses);
            free(ts->stalls);
            free(ts->errs);
        }
        free(p->ts);
        for (uint32_t i = 0; i < p->nacc; i++) {
            free(p->acc[i].hist);
            free(p->acc[i].hist_nogc);
        }
        free(p->acc);
        for (uint32_t i = 0; i < p->npool; i++) {
            jm_tree_free(p->pool[i]);
            free(p->pool[i]);
        }
        free(p->pool);
        jm_map *maps[] = {&p->gc_stack_map, &p->site_stack_map, &p->sig_map, &p->unstable_map,
                          &p->compile_map, &p->method_map, &p->msg_map,
                          &p->cuda_name_map, &p->cuda_site_map, &p->psite_map};
        for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) jm_map_free(maps[i]);
        free(p->psites);
        jm_methods_pass_free(p->code_methods);
        free(p);
    }
    for (uint32_t i = 0; i < m->nthreads; i++) jm_tree_free(&m->threads[i].tree);
    free(m->threads);
    jm_tree_free(&m->merged);
    free(m->sites);
    free(m->gc.stacks);
    free(m->cuda.names);
    free(m->cuda.sites);
    free(m->signatures);
    free(m->instabilities);
    free(m->compiles);
    free(m->methods);
    for (uint32_t i = 0; i < m->nmessages; i++) free(m->messages[i].text);
    free(m->messages);
    free(m->site_stacks);
    free(m->counters);
    free(m->types);
    jm_samples_free(m);
    jm_rusage_free(m);
    jm_split_free(m);
    jm_attrs_free(m);
    jm_methods_free(m);
    free(m);
}
