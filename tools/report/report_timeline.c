/* Timeline data for `jager report`: collecting events, nesting depths and the level of
 * detail (see report_timeline.h). The JSON writer is report_timeline_json.c. */
#include <stdlib.h>
#include <string.h>

#include "plugin_events.h"
#include "report_timeline_priv.h"
#include "toolutil.h"

const rt_gc_series_desc rt_gc_series[RT_GC_SERIES] = {
    {JP_SAMPLE_LIVE_BYTES, "gc.live_bytes", "bytes"},
    {JP_SAMPLE_ALLOCATED_BYTES, "gc.allocated_bytes", "bytes"},
    {JP_SAMPLE_COLLECTIONS, "gc.collections", ""},
    {JP_SAMPLE_RSS_BYTES, "process.rss_bytes", "bytes"},
    {JP_SAMPLE_GC_TOTAL_NS, "gc.total_ns", "ns"},
};

/* ---- growable arrays ---- */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int ev_push(rt_evlist *l, rt_ev e)
{
    if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return -1;
    l->v[l->n++] = e;
    return 0;
}

/* ---- strings ---- */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static int strings_rehash(rt_strings *st, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < st->n; i++) {
        size_t h = hash_bytes(st->v[i].s, st->v[i].len) & (nslots - 1);
        while (slots[h]) h = (h + 1) & (nslots - 1);
        slots[h] = (uint32_t)i + 1;
    }
    free(st->slots);
    st->slots = slots;
    st->nslots = nslots;
    return 0;
}

/* Index of \p s (n bytes) in the table, adding a copy when new; UINT32_MAX on OOM. */
static uint32_t strings_intern(rt_strings *st, const char *s, size_t n)
{
    if (!s) { s = ""; n = 0; }
    if ((st->n + 1) * 2 > st->nslots && strings_rehash(st, st->nslots ? st->nslots * 2 : 256)) return UINT32_MAX;
    size_t h = hash_bytes(s, n) & (st->nslots - 1);
    while (st->slots[h]) {
        uint32_t i = st->slots[h] - 1;
        if (st->v[i].len == n && !memcmp(st->v[i].s, s, n)) return i;
        h = (h + 1) & (st->nslots - 1);
    }
    if (grow((void **)&st->v, &st->cap, st->n + 1, sizeof *st->v)) return UINT32_MAX;
    char *copy = malloc(n + 1);
    if (!copy) return UINT32_MAX;
    memcpy(copy, s, n);
    copy[n] = 0;
    st->v[st->n] = (rt_str){copy, (uint32_t)n};
    st->slots[h] = (uint32_t)st->n + 1;
    return (uint32_t)st->n++;
}

static void strings_free(rt_strings *st)
{
    for (size_t i = 0; i < st->n; i++) free(st->v[i].s);
    free(st->v);
    free(st->slots);
}

/* ---- building ---- */
rt_data *rt_new(jager_reader *r, const rt_opts *o)
{
    rt_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->type_kind = calloc(65536, 1);
    if (!d->type_kind) { free(d); return NULL; }
    d->r = r;
    if (o) d->o = *o;
    if (!d->o.max_spans) d->o.max_spans = 150000;
    if (!d->o.max_blocks) d->o.max_blocks = 100000;
    if (!d->o.max_logs) d->o.max_logs = 20000;
    if (!d->o.counter_bins) d->o.counter_bins = 2000;
    if (!d->o.max_kept) d->o.max_kept = 16u << 20;
    d->first_ns = UINT64_MAX;
    d->gc_dur = d->gc_tid = d->cc_dur = d->cc_inf = d->cc_sig = UINT32_MAX;
    return d;
}

static rt_lane *lane_get(rt_data *d, uint32_t thread)
{
    if (thread >= d->nlanes) {
        size_t n = (size_t)thread + 1;
        rt_lane **l = realloc(d->lanes, n * sizeof *l);
        if (!l) return NULL;
        memset(l + d->nlanes, 0, (n - d->nlanes) * sizeof *l);
        d->lanes = l;
        d->nlanes = n;
    }
    if (!d->lanes[thread]) {
        d->lanes[thread] = calloc(1, sizeof(rt_lane));
        if (!d->lanes[thread]) return NULL;
        d->lanes[thread]->thread = thread;
    }
    return d->lanes[thread];
}

static uint8_t type_kind(rt_data *d, uint16_t type)
{
    if (d->type_kind[type] != RT_T_UNRESOLVED) return d->type_kind[type];
    const jager_type_desc *t = d->r ? jager_reader_type(d->r, type) : NULL;
    uint8_t k = RT_T_OTHER;
    if (t && t->name && !t->builtin) {
        if (jp_is(t->name, &jp_gc, JP_GC_PAUSE)) {
            d->gc_dur = jp_field_index(t, &jp_gc, JP_GC_PAUSE, JP_PAUSE_DURATION_NS);
            d->gc_tid = jp_field_index(t, &jp_gc, JP_GC_PAUSE, JP_PAUSE_OS_TID);
            if (d->gc_dur != UINT32_MAX) k = RT_T_GC_PAUSE;
        } else if (jp_is(t->name, &jp_gc, JP_GC_SAMPLE)) {
            for (size_t i = 0; i < RT_GC_SERIES; i++)
                d->gs_field[i] = jp_field_index(t, &jp_gc, JP_GC_SAMPLE, rt_gc_series[i].field);
            k = RT_T_GC_SAMPLE;
        } else if (jp_is(t->name, &jp_dispatch, JP_DISPATCH_COMPILE)) {
            d->cc_dur = jp_field_index(t, &jp_dispatch, JP_DISPATCH_COMPILE, JP_COMPILE_DURATION_NS);
            d->cc_inf = jp_field_index(t, &jp_dispatch, JP_DISPATCH_COMPILE, JP_COMPILE_INFERENCE_NS);
            d->cc_sig = jp_field_index(t, &jp_dispatch, JP_DISPATCH_COMPILE, JP_COMPILE_SIGNATURE);
            if (d->cc_dur != UINT32_MAX) k = RT_T_COMPILE;
        }
    }
    if (t) d->type_kind[type] = k; /* an unknown type may still be described later */
    return k;
}

/* Field \p i of a plugin record, bounds-checked against the record's size. */
static int plugin_field(const jager_record *h, uint32_t i, uint64_t *out)
{
    if (i == UINT32_MAX || (uint64_t)h->words * 8 < 16 + 8 * ((uint64_t)i + 1)) return 0;
    *out = ((const jager_rec_plugin *)h)->fields[i];
    return 1;
}

static void note_time(rt_data *d, uint64_t a, uint64_t b)
{
    if (a && a < d->first_ns) d->first_ns = a;
    if (b > d->last_ns) d->last_ns = b;
}

static int push_sample(rt_data *d, uint32_t id, uint64_t t, double v, uint32_t thread)
{
    rt_counter *ct = NULL;
    for (size_t i = 0; i < d->ncounters; i++)
        if (d->counters[i].id == id) { ct = &d->counters[i]; break; }
    if (!ct) {
        if (grow((void **)&d->counters, &d->capcounters, d->ncounters + 1, sizeof *d->counters)) return -1;
        ct = &d->counters[d->ncounters++];
        memset(ct, 0, sizeof *ct);
        ct->id = id;
    }
    if (grow((void **)&ct->s, &ct->cap, ct->n + 1, sizeof *ct->s)) return -1;
    ct->s[ct->n++] = (rt_sample){t, v, thread};
    note_time(d, t, t);
    return 0;
}

static int add_counter(rt_data *d, const jager_event *ev)
{
    if ((uint64_t)ev->rec->words * 8 < sizeof(jager_rec_counter)) return 0;
    const jager_rec_counter *c = (const jager_rec_counter *)ev->rec;
    return push_sample(d, c->h.aux, c->time_ns, c->value, ev->thread);
}

int rt_add(rt_data *d, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    rt_lane *l;
    uint64_t v;
    switch (ev->type) {
    case JAGER_EV_SPAN: {
        if ((uint64_t)h->words * 8 < sizeof(jager_rec_span)) return 0;
        const jager_rec_span *s = (const jager_rec_span *)h;
        if (d->kept >= d->o.max_kept) { d->not_kept++; return 0; } /* memory bound, see rt_opts */
        if (!(l = lane_get(d, ev->thread))) return -1;
        d->kept++;
        if (grow((void **)&l->spans, &l->cap, l->n + 1, sizeof *l->spans)) return -1;
        uint64_t end = s->end_ns >= s->start_ns ? s->end_ns : s->start_ns;
        l->spans[l->n++] = (rt_span){s->start_ns, end, h->aux, 0, 0};
        note_time(d, s->start_ns, end);
        return 0;
    }
    case JAGER_EV_LOG: {
        if ((uint64_t)h->words * 8 < sizeof(jager_rec_log)) return 0;
        const jager_rec_log *lg = (const jager_rec_log *)h;
        if (!(l = lane_get(d, ev->thread))) return -1;
        note_time(d, lg->time_ns, lg->time_ns);
        if (l->logs.n >= d->o.max_logs) { l->logs_dropped++; return 0; }
        const char *body = "";
        uint32_t len = 0;
        const uint8_t *a, *ae;
        if (jager_log_body(lg, &body, &len, &a, &ae) != JAGER_OK) { body = "(malformed log record)"; len = (uint32_t)strlen(body); }
        char cut[RT_LOG_BODY_MAX + 4];
        if (len > RT_LOG_BODY_MAX) { /* keep the page small; the file keeps the whole message */
            memcpy(cut, body, RT_LOG_BODY_MAX);
            memcpy(cut + RT_LOG_BODY_MAX, "\xE2\x80\xA6", 3);
            body = cut;
            len = RT_LOG_BODY_MAX + 3;
        }
        uint32_t si = strings_intern(&d->strings, body, len);
        if (si == UINT32_MAX) return -1;
        return ev_push(&l->logs, (rt_ev){lg->time_ns, 0, si, h->aux & 0xffu});
    }
    case JAGER_EV_MARK: {
        if ((uint64_t)h->words * 8 < sizeof(jager_rec_mark)) return 0;
        const jager_rec_mark *mk = (const jager_rec_mark *)h;
        if (!(l = lane_get(d, ev->thread))) return -1;
        const char *name = d->r ? jager_reader_string(d->r, h->aux) : NULL;
        uint32_t si = strings_intern(&d->strings, name ? name : "?", name ? strlen(name) : 1);
        if (si == UINT32_MAX) return -1;
        note_time(d, mk->time_ns, mk->time_ns);
        return ev_push(&l->marks, (rt_ev){mk->time_ns, 0, si, 0});
    }
    case JAGER_EV_COUNTER:
        return add_counter(d, ev);
    default:
        break;
    }
    if (ev->type < JAGER_EV_FIRST_PLUGIN || (uint64_t)h->words * 8 < sizeof(jager_rec_plugin)) return 0;
    const jager_rec_plugin *p = (const jager_rec_plugin *)h;
    switch (type_kind(d, ev->type)) {
    case RT_T_GC_PAUSE: {
        uint64_t tid = 0;
        if (!plugin_field(h, d->gc_dur, &v)) return 0;
        plugin_field(h, d->gc_tid, &tid);
        if (grow((void **)&d->gcp, &d->capgcp, d->ngcp + 1, sizeof *d->gcp)) return -1;
        d->gcp[d->ngcp++] = (rt_gcp){p->time_ns, v, tid, ev->thread};
        note_time(d, p->time_ns, p->time_ns + v);
        return 0;
    }
    case RT_T_GC_SAMPLE:
        for (uint32_t i = 0; i < RT_GC_SERIES; i++)
            if (plugin_field(h, d->gs_field[i], &v) && push_sample(d, RT_GC_SERIES_ID + i, p->time_ns, (double)v, ev->thread))
                return -1;
        return 0;
    case RT_T_COMPILE: {
        uint64_t inf = 0, sig = 0;
        if (!plugin_field(h, d->cc_dur, &v)) return 0;
        plugin_field(h, d->cc_inf, &inf);
        plugin_field(h, d->cc_sig, &sig);
        if (!(l = lane_get(d, ev->thread))) return -1;
        const char *text = d->r && sig <= UINT32_MAX ? jager_reader_string(d->r, (uint32_t)sig) : NULL;
        uint32_t si = strings_intern(&d->strings, text ? text : "", text ? strlen(text) : 0);
        if (si == UINT32_MAX) return -1;
        /* the plugin stamps a compile when it is seen, after it ran: draw it ending there */
        uint64_t dur = v + inf, t = p->time_ns > dur ? p->time_ns - dur : 0;
        note_time(d, t, p->time_ns);
        return ev_push(&l->cc, (rt_ev){t, dur, si, 0});
    }
    default:
        return 0;
    }
}

/* ---- finishing: depth, level of detail ---- */
static int span_cmp(const void *a, const void *b)
{
    const rt_span *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1; /* the enclosing span first */
    return 0;
}

static int ev_cmp(const void *a, const void *b)
{
    const rt_ev *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* qsort that accepts an empty (NULL) array. */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) qsort(base, n, size, cmp);
}

static int sample_cmp(const void *a, const void *b)
{
    const rt_sample *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Nesting depth from containment, after sorting by (start, end desc): a stack of the ends
 * of the open ancestors. Depth is recomputed rather than taken from parent ids so that
 * sampled-out or dropped parents leave no gaps. */
static int lane_depths(rt_lane *l)
{
    uint64_t *stack = NULL;
    size_t top = 0, cap = 0;
    for (size_t i = 0; i < l->n; i++) {
        rt_span *s = &l->spans[i];
        while (top && stack[top - 1] <= s->start) top--;
        if (grow((void **)&stack, &cap, top + 1, sizeof *stack)) { free(stack); return -1; }
        if (top < RT_MAX_DEPTH) s->depth = (uint16_t)top;
        else { s->depth = RT_MAX_DEPTH; l->too_deep++; } /* counted, not drawn */
        stack[top++] = s->end;
    }
    free(stack);
    return 0;
}

static void swap_u64(uint64_t *a, uint64_t *b) { uint64_t t = *a; *a = *b; *b = t; }

/* The k-th smallest value of a (0-based), reordering a (quickselect, median of three). */
static uint64_t select_kth(uint64_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo]) swap_u64(&a[mid], &a[lo]);
        if (a[hi] < a[lo]) swap_u64(&a[hi], &a[lo]);
        if (a[hi] < a[mid]) swap_u64(&a[hi], &a[mid]);
        uint64_t pivot = a[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) { swap_u64(&a[i], &a[j]); i++; if (j == 0) break; j--; }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return a[k];
    }
    return a[k];
}

static int block_close(rt_lane *l, rt_block *b)
{
    if (!b->count) return 0;
    if (grow((void **)&l->blocks, &l->capblocks, l->nblocks + 1, sizeof *l->blocks)) return -1;
    l->blocks[l->nblocks++] = *b;
    b->count = 0;
    return 0;
}

/* Close the open block of row \p k: a block of one span is shown as that exact span. */
static int row_close(rt_lane *l, rt_block *open, rt_span **first, int k)
{
    if (open[k].count == 1) {
        first[k]->raw = 1;
        open[k].count = 0;
        return 0;
    }
    return block_close(l, &open[k]);
}

/* Merge the short spans of each row into blocks (see report_timeline.h). Spans come in
 * start order, so a parent comes before its children: whenever a row breaks (an exact
 * span, or a new block), the open blocks of the rows below it close too, which keeps
 * every block inside the extent of what is drawn above it. */
static int lane_reduce(rt_data *d, rt_lane *l)
{
    rt_block open[RT_MAX_DEPTH];
    rt_span *first[RT_MAX_DEPTH]; /* the only span of a block so far: shown exactly if it stays alone */
    memset(open, 0, sizeof open);
    memset(first, 0, sizeof first);
    for (size_t i = 0; i < l->n; i++) {
        rt_span *s = &l->spans[i];
        if (s->depth >= RT_MAX_DEPTH) continue;
        int dep = s->depth;
        rt_block *b = &open[dep];
        uint64_t dur = s->end - s->start;
        if (dur <= d->threshold && b->count && s->start <= b->end + d->quantum) {
            b->end = s->end > b->end ? s->end : b->end;
            b->busy += dur;
            b->count++;
            if (s->site == b->site) b->weight += dur;
            else if (b->weight > dur) b->weight -= dur;
            else { b->site = s->site; b->weight = dur - b->weight; }
            continue;
        }
        for (int k = dep; k < RT_MAX_DEPTH; k++)
            if (open[k].count && row_close(l, open, first, k)) return -1;
        if (dur > d->threshold) {
            s->raw = 1;
            continue;
        }
        *b = (rt_block){s->start, s->end, dur, 1, s->site, (uint32_t)dep, dur};
        first[dep] = s;
    }
    for (int k = 0; k < RT_MAX_DEPTH; k++)
        if (open[k].count && row_close(l, open, first, k)) return -1;
    for (size_t i = 0; i < l->n; i++) {
        if (l->spans[i].depth >= RT_MAX_DEPTH) continue;
        if (l->spans[i].raw) l->raw++;
        else l->merged++;
    }
    return 0;
}

/* Each GC pause goes to the lane of its triggering thread (by OS tid), else to the lane of
 * the thread that recorded it. */
static int place_gc(rt_data *d)
{
    for (size_t i = 0; i < d->ngcp; i++) {
        const rt_gcp *g = &d->gcp[i];
        uint32_t lane = tu_thread_by_os_tid(d->r, g->os_tid, g->thread);
        rt_lane *l = lane_get(d, lane);
        if (!l || ev_push(&l->gc, (rt_ev){g->t, g->dur, 0, 0})) return -1;
    }
    return 0;
}

int rt_finish(rt_data *d)
{
    uint64_t total = 0, rows = 0;
    if (place_gc(d)) return -1;
    for (size_t i = 0; i < d->nlanes; i++) {
        rt_lane *l = d->lanes[i];
        if (!l) continue;
        sort(l->spans, l->n, sizeof *l->spans, span_cmp);
        if (lane_depths(l)) return -1;
        sort(l->gc.v, l->gc.n, sizeof(rt_ev), ev_cmp);
        sort(l->cc.v, l->cc.n, sizeof(rt_ev), ev_cmp);
        sort(l->logs.v, l->logs.n, sizeof(rt_ev), ev_cmp);
        sort(l->marks.v, l->marks.n, sizeof(rt_ev), ev_cmp);
        total += l->n;
        uint16_t maxd = 0;
        for (size_t k = 0; k < l->n; k++)
            if (l->spans[k].depth < RT_MAX_DEPTH && l->spans[k].depth + 1 > maxd) maxd = l->spans[k].depth + 1;
        rows += maxd;
    }
    for (size_t i = 0; i < d->ncounters; i++)
        sort(d->counters[i].s, d->counters[i].n, sizeof(rt_sample), sample_cmp);
    /* Threshold: the max_spans longest spans are exact. */
    d->threshold = 0;
    if (total > d->o.max_spans) {
        uint64_t *durs = malloc(total * sizeof *durs);
        if (!durs) return -1;
        size_t n = 0;
        for (size_t i = 0; i < d->nlanes; i++)
            if (d->lanes[i])
                for (size_t k = 0; k < d->lanes[i]->n; k++) durs[n++] = d->lanes[i]->spans[k].end - d->lanes[i]->spans[k].start;
        d->threshold = select_kth(durs, n, n - d->o.max_spans - 1); /* the longest max_spans are above it */
        free(durs);
        /* Quantum: blocks in a row are separated by more than it, so a row holds at most
         * run/quantum + 1 of them (plus one per exact span that splits them). */
        uint64_t run = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 1;
        uint64_t q = (uint64_t)((double)run * (double)(rows ? rows : 1) / (double)d->o.max_blocks);
        d->quantum = q > d->threshold ? q : d->threshold;
    }
    for (size_t i = 0; i < d->nlanes; i++)
        if (d->lanes[i] && lane_reduce(d, d->lanes[i])) return -1;
    return 0;
}

void rt_get_summary(const rt_data *d, rt_summary *out)
{
    memset(out, 0, sizeof *out);
    out->duration_threshold_ns = d->threshold;
    out->not_kept = d->not_kept;
    for (size_t i = 0; i < d->nlanes; i++) {
        const rt_lane *l = d->lanes[i];
        if (!l) continue;
        out->spans += l->n;
        out->raw += l->raw;
        out->merged_spans += l->merged;
        out->blocks += l->nblocks;
        out->too_deep += l->too_deep;
        out->gc_pauses += l->gc.n;
        for (size_t k = 0; k < l->gc.n; k++) out->gc_ns += l->gc.v[k].dur;
        out->compiles += l->cc.n;
        for (size_t k = 0; k < l->cc.n; k++) out->compile_ns += l->cc.v[k].dur;
        out->logs += l->logs.n + l->logs_dropped;
        out->logs_dropped += l->logs_dropped;
    }
}

int rt_check(const rt_data *d)
{
    for (size_t i = 0; i < d->nlanes; i++) {
        const rt_lane *l = d->lanes[i];
        if (!l) continue;
        if (l->raw + l->merged + l->too_deep != l->n) return -1;
        for (int dep = 0; dep < RT_MAX_DEPTH; dep++) {
            /* Walk the row's exact spans and blocks in start order, merging the two lists. */
            uint64_t prev_end = 0;
            size_t a = 0, b = 0;
            for (;;) {
                while (a < l->n && (l->spans[a].depth != dep || !l->spans[a].raw)) a++;
                while (b < l->nblocks && l->blocks[b].depth != (uint32_t)dep) b++;
                if (a >= l->n && b >= l->nblocks) break;
                uint64_t s, e;
                if (b >= l->nblocks || (a < l->n && l->spans[a].start <= l->blocks[b].start)) {
                    s = l->spans[a].start; e = l->spans[a].end; a++;
                } else {
                    s = l->blocks[b].start; e = l->blocks[b].end;
                    if (l->blocks[b].count < 2 || l->blocks[b].busy > e - s) return -3;
                    b++;
                }
                if (s < prev_end) return -2;
                prev_end = e;
            }
        }
        /* A block lies inside an exact span or a block of the row above (quadratic: tests only). */
        for (size_t b = 0; b < l->nblocks; b++) {
            const rt_block *k = &l->blocks[b];
            if (!k->depth) continue;
            int inside = 0;
            for (size_t a = 0; a < l->n && !inside; a++)
                inside = l->spans[a].depth == k->depth - 1 && l->spans[a].raw && l->spans[a].start <= k->start &&
                         l->spans[a].end >= k->end;
            for (size_t a = 0; a < l->nblocks && !inside; a++)
                inside = l->blocks[a].depth == k->depth - 1 && l->blocks[a].start <= k->start && l->blocks[a].end >= k->end;
            if (!inside) return -4;
        }
    }
    return 0;
}

void rt_free(rt_data *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nlanes; i++) {
        rt_lane *l = d->lanes[i];
        if (!l) continue;
        free(l->spans);
        free(l->blocks);
        free(l->gc.v);
        free(l->cc.v);
        free(l->logs.v);
        free(l->marks.v);
        free(l);
    }
    free(d->lanes);
    for (size_t i = 0; i < d->ncounters; i++) free(d->counters[i].s);
    free(d->gcp);
    free(d->counters);
    strings_free(&d->strings);
    free(d->type_kind);
    free(d);
}
