/* Timeline data for `jager report`: collecting events, nesting depths and the level of
 * detail (see report_timeline.h). The JSON writer is report_timeline_json.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "model_map.h"
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

const rt_gc_series_desc rt_jgc_series[RT_JGC_SERIES] = {
    {0, "julia.gc.allocated_bytes", "bytes"},
    {1, "julia.gc.pauses", ""},
    {2, "julia.gc.time_ns", "ns"},
    {3, "julia.gc.full_sweeps", ""},
};

/* Arrays grow through the tools' jm_grow (model_map.h). */
static int ev_push(rt_evlist *l, rt_ev e)
{
    if (jm_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return -1;
    l->v[l->n++] = e;
    return 0;
}

/* ---- strings: the tools' string dictionary (util/strdict.h) ---- */
/* Index of \p s (n bytes) in the display strings, adding it when new; UINT32_MAX on OOM. */
static uint32_t strings_put(tu_strdict *st, const char *s, size_t n)
{
    if (!s) n = 0;
    if (n > UINT32_MAX) return UINT32_MAX;
    int64_t i = tu_strdict_put(st, s ? s : "", (uint32_t)n);
    return i < 0 ? UINT32_MAX : (uint32_t)i;
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

static int push_sample(rt_data *d, uint32_t id, uint64_t t, double v, uint32_t thread);
static rt_lane *lane_get(rt_data *d, uint32_t thread);

/* The thread's task bookkeeping, grown on demand; NULL on out of memory. */
static rt_thread_tasks *thread_tasks(rt_data *d, uint32_t thread)
{
    if (thread >= d->ntt) {
        size_t n = (size_t)thread + 16;
        rt_thread_tasks *t = realloc(d->tt, n * sizeof *t);
        if (!t) return NULL;
        memset(t + d->ntt, 0, (n - d->ntt) * sizeof *t);
        d->tt = t;
        d->ntt = n;
    }
    return &d->tt[thread];
}

/* The lane of \p task (made on first sight), noting that it ran on \p thread. */
static rt_lane *task_lane(rt_data *d, uint64_t task, uint32_t thread)
{
    uint32_t at = jm_map_get(&d->task_ix, task, 0);
    rt_lane *l = at != JM_NONE ? d->tlanes[at] : NULL;
    if (!l) {
        if (jm_grow((void **)&d->tlanes, &d->captlanes, d->ntlanes + 1, sizeof *d->tlanes)) return NULL;
        if (!(l = calloc(1, sizeof *l))) return NULL;
        if (jm_map_put(&d->task_ix, task, 0, (uint32_t)d->ntlanes)) {
            free(l);
            return NULL;
        }
        l->task = task;
        l->thread = thread;
        d->tlanes[d->ntlanes++] = l;
    }
    for (uint32_t i = 0; i < l->nthreads; i++)
        if (l->threads[i] == thread) return l;
    if (l->nthreads < RT_LANE_THREADS) l->threads[l->nthreads++] = thread;
    else l->more_threads = 1; /* "and others" */
    return l;
}

/* Where an event of \p thread goes: its current task's lane, or the thread's own. */
static rt_lane *event_lane(rt_data *d, uint32_t thread)
{
    uint64_t task = thread < d->ntt ? d->tt[thread].cur : 0;
    return task ? task_lane(d, task, thread) : lane_get(d, thread);
}

/* A task record: later records of the thread belong to its task. */
static int add_task(rt_data *d, const jager_event *ev)
{
    if ((uint64_t)ev->rec->words * 8 < sizeof(jager_rec_task)) return 0;
    const jager_rec_task *k = (const jager_rec_task *)ev->rec;
    rt_thread_tasks *t = thread_tasks(d, ev->thread);
    if (!t) return -1;
    t->cur = k->task;
    if (jm_grow((void **)&t->sw, &t->cap, t->n + 1, sizeof *t->sw)) return -1;
    t->sw[t->n++] = (rt_switch){k->time_ns, k->task};
    return 0;
}

/* The task set on \p thread at time \p t (its last switch at or before t), 0 if none. */
static uint64_t task_at(const rt_data *d, uint32_t thread, uint64_t t)
{
    if (thread >= d->ntt || !d->tt[thread].n) return 0;
    const rt_switch *sw = d->tt[thread].sw;
    size_t lo = 0, hi = d->tt[thread].n; /* first switch after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sw[mid].t <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo ? sw[lo - 1].task : 0;
}

/* The Julia binding's GC counters in an attribute list (log records, marks): chart samples. */
static int add_gc_attrs(rt_data *d, const uint8_t *a, const uint8_t *ae, uint64_t t, uint32_t thread)
{
    jager_attr_view v;
    while (a && a < ae && jager_attr_next(&a, ae, &v) == 1) {
        int i = v.kind == JAGER_ATTR_I64 ? jp_julia_gc_key(v.key, v.key_len) : -1;
        if (i >= 0 && i < RT_JGC_SERIES && push_sample(d, RT_JGC_SERIES_ID + (uint32_t)i, t, (double)v.i64, thread))
            return -1;
    }
    return 0;
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
        } else {
            k = RT_T_PLUGIN; /* any other plugin's: charted fields and markers (rt_add) */
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
        if (jm_grow((void **)&d->counters, &d->capcounters, d->ncounters + 1, sizeof *d->counters)) return -1;
        ct = &d->counters[d->ncounters++];
        memset(ct, 0, sizeof *ct);
        ct->id = id;
    }
    if (jm_grow((void **)&ct->s, &ct->cap, ct->n + 1, sizeof *ct->s)) return -1;
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

static double field_number(uint32_t kind, uint64_t v)
{
    double f;
    if (kind == JAGER_FIELD_F64) {
        memcpy(&f, &v, 8);
        return f;
    }
    return kind == JAGER_FIELD_I64 ? (double)(int64_t)v : (double)v;
}

/* A plugin event no lane knows by name: its fields flagged COUNTER or GAUGE become chart
 * series ("<type>.<field>"), and the event a marker on its thread's lane (so a thread
 * that only emits plugin events has a lane) whose text lists its fields, shown on hover.
 * Markers are bounded; those left out are counted (rt_summary). */
static int add_plugin_event(rt_data *d, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    const jager_rec_plugin *p = (const jager_rec_plugin *)h;
    const jager_type_desc *t = d->r ? jager_reader_type(d->r, ev->type) : NULL;
    if (!t) return 0;
    uint64_t v;
    int charted = 0;
    for (uint32_t f = 0; f < t->nfields && f < 32; f++) {
        if (!(t->fields[f].flags & (JAGER_FIELD_FLAG_COUNTER | JAGER_FIELD_FLAG_GAUGE)) || !plugin_field(h, f, &v)) continue;
        charted = 1;
        if (push_sample(d, RT_PLUGIN_SERIES_ID | (uint32_t)ev->type << 5 | f, p->time_ns, field_number(t->fields[f].kind, v),
                        ev->thread))
            return -1;
    }
    rt_lane *l = event_lane(d, ev->thread);
    if (!l) return -1;
    note_time(d, p->time_ns, p->time_ns);
    if (charted) return 0; /* a sample: its chart shows it */
    if (d->plugin_marks >= RT_PLUGIN_MARKS_MAX) {
        d->plugin_marks_dropped++;
        return 0;
    }
    char text[512];
    size_t o = (size_t)snprintf(text, sizeof text, "%s", t->name ? t->name : "plugin event");
    for (uint32_t f = 0; f < t->nfields && o + 40 < sizeof text; f++) {
        if (!plugin_field(h, f, &v)) break;
        const char *fn = t->fields[f].name ? t->fields[f].name : "?";
        uint32_t kind = t->fields[f].kind;
        const char *s = NULL;
        if (kind == JAGER_FIELD_STRING && d->r && v <= UINT32_MAX) s = jager_reader_string(d->r, (uint32_t)v);
        int w;
        if (s) w = snprintf(text + o, sizeof text - o, " %s=%.80s", fn, s);
        else if (kind == JAGER_FIELD_F64 || kind == JAGER_FIELD_I64) w = snprintf(text + o, sizeof text - o, " %s=%.6g", fn, field_number(kind, v));
        else w = snprintf(text + o, sizeof text - o, " %s=%" PRIu64, fn, v);
        if (w < 0) break;
        o += (size_t)w < sizeof text - o ? (size_t)w : sizeof text - o - 1;
    }
    uint32_t si = strings_put(&d->strings, text, strlen(text));
    if (si == UINT32_MAX) return -1;
    d->plugin_marks++;
    return ev_push(&l->marks, (rt_ev){p->time_ns, 0, si, 0});
}

int rt_add(rt_data *d, const jager_event *ev)
{
    const jager_record *h = ev->rec;
    rt_lane *l;
    uint64_t v;
    if (!tu_thread_index_ok(d->r, ev->thread)) { /* lanes are by index: a hostile one is left out, as in the model */
        d->bad_thread++;
        return 0;
    }
    switch (ev->type) {
    case JAGER_EV_SPAN: case JAGER_EV_SPAN_X: {
        /* a span of a task that moved between threads (span_x, model.h): on its task's lane,
         * where its parent is, or without a task on its begin thread's; lanes nest by time */
        jm_span_view sv;
        if (!jm_span_of(ev, &sv)) return 0;
        const jager_rec_span *s = sv.rec;
        if (d->kept >= d->o.max_kept) { d->not_kept++; return 0; } /* memory bound, see rt_opts */
        int own = sv.moved && !(ev->thread < d->ntt && d->tt[ev->thread].cur) && tu_thread_index_ok(d->r, sv.thread);
        if (!(l = own ? lane_get(d, sv.thread) : event_lane(d, ev->thread))) return -1;
        d->kept++;
        if (jm_grow((void **)&l->spans, &l->cap, l->n + 1, sizeof *l->spans)) return -1;
        uint64_t end = s->end_ns >= s->start_ns ? s->end_ns : s->start_ns;
        l->spans[l->n++] = (rt_span){s->start_ns, end, h->aux, 0, 0};
        note_time(d, s->start_ns, end);
        return 0;
    }
    case JAGER_EV_LOG: {
        if ((uint64_t)h->words * 8 < sizeof(jager_rec_log)) return 0;
        const jager_rec_log *lg = (const jager_rec_log *)h;
        if (!(l = event_lane(d, ev->thread))) return -1;
        note_time(d, lg->time_ns, lg->time_ns);
        const char *body = "";
        uint32_t len = 0;
        const uint8_t *a = NULL, *ae = NULL;
        if (jager_log_body(lg, &body, &len, &a, &ae) != JAGER_OK) { body = "(malformed log record)"; len = (uint32_t)strlen(body); a = ae = NULL; }
        else if (add_gc_attrs(d, a, ae, lg->time_ns, ev->thread)) return -1; /* charted whether or not the marker is kept */
        if (l->logs.n >= d->o.max_logs) { l->logs_dropped++; return 0; }
        char cut[RT_LOG_BODY_MAX + 4];
        if (len > RT_LOG_BODY_MAX) { /* keep the page small; the file keeps the whole message */
            memcpy(cut, body, RT_LOG_BODY_MAX);
            memcpy(cut + RT_LOG_BODY_MAX, "\xE2\x80\xA6", 3);
            body = cut;
            len = RT_LOG_BODY_MAX + 3;
        }
        uint32_t si = strings_put(&d->strings, body, len);
        if (si == UINT32_MAX) return -1;
        return ev_push(&l->logs, (rt_ev){lg->time_ns, 0, si, h->aux & 0xffu});
    }
    case JAGER_EV_MARK: {
        if ((uint64_t)h->words * 8 < sizeof(jager_rec_mark)) return 0;
        const jager_rec_mark *mk = (const jager_rec_mark *)h;
        if (!(l = event_lane(d, ev->thread))) return -1;
        if ((uint64_t)h->words * 8 >= sizeof(jager_rec_mark) + 8 && /* jager_mark_attrs(): nattrs, 0, then the list */
            add_gc_attrs(d, (const uint8_t *)h + sizeof(jager_rec_mark) + 8, (const uint8_t *)h + (size_t)h->words * 8, mk->time_ns,
                         ev->thread))
            return -1;
        const char *name = d->r ? jager_reader_string(d->r, h->aux) : NULL;
        uint32_t si = strings_put(&d->strings, name ? name : "?", name ? strlen(name) : 1);
        if (si == UINT32_MAX) return -1;
        note_time(d, mk->time_ns, mk->time_ns);
        return ev_push(&l->marks, (rt_ev){mk->time_ns, 0, si, 0});
    }
    case JAGER_EV_COUNTER:
        return add_counter(d, ev);
    case JAGER_EV_TASK:
        return add_task(d, ev);
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
        if (jm_grow((void **)&d->gcp, &d->capgcp, d->ngcp + 1, sizeof *d->gcp)) return -1;
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
        if (!(l = event_lane(d, ev->thread))) return -1;
        const char *text = d->r && sig <= UINT32_MAX ? jager_reader_string(d->r, (uint32_t)sig) : NULL;
        uint32_t si = strings_put(&d->strings, text ? text : "", text ? strlen(text) : 0);
        if (si == UINT32_MAX) return -1;
        /* the plugin stamps a compile when it is seen, after it ran: draw it ending there */
        uint64_t dur = v + inf, t = p->time_ns > dur ? p->time_ns - dur : 0;
        note_time(d, t, p->time_ns);
        return ev_push(&l->cc, (rt_ev){t, dur, si, 0});
    }
    case RT_T_PLUGIN:
        return add_plugin_event(d, ev);
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

/* By time; at equal times the smaller value first: a monotonic counter's samples carry the
 * process's running total, so of two adds stamped alike the larger total is the later. */
static int sample_cmp(const void *a, const void *b)
{
    const rt_sample *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* Nesting depth from containment, after sorting by (start, end desc): a stack of the ends
 * of the open ancestors. Depth is recomputed rather than taken from parent ids so that
 * sampled-out or dropped parents leave no gaps. */
static int lane_depths(rt_lane *l)
{
    uint64_t *stack = NULL;
    size_t top = 0;
    uint32_t cap = 0;
    for (size_t i = 0; i < l->n; i++) {
        rt_span *s = &l->spans[i];
        while (top && stack[top - 1] <= s->start) top--;
        if (jm_grow((void **)&stack, &cap, top + 1, sizeof *stack)) { free(stack); return -1; }
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
    if (jm_grow((void **)&l->blocks, &l->capblocks, l->nblocks + 1, sizeof *l->blocks)) return -1;
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

static int lane_task_cmp(const void *a, const void *b)
{
    const rt_lane *x = *(const rt_lane *const *)a, *y = *(const rt_lane *const *)b;
    if ((x->task == RT_OTHER_TASKS) != (y->task == RT_OTHER_TASKS)) return x->task == RT_OTHER_TASKS ? 1 : -1;
    return x->task < y->task ? -1 : x->task > y->task;
}

static size_t lane_weight(const rt_lane *l) { return l->n + l->logs.n + l->marks.n + l->cc.n + l->gc.n; }

static int lane_busier(const void *a, const void *b)
{
    size_t x = lane_weight(*(const rt_lane *const *)a), y = lane_weight(*(const rt_lane *const *)b);
    return x > y ? -1 : x < y;
}

static int evlist_append(rt_evlist *to, const rt_evlist *from)
{
    if (!from->n) return 0;
    if (jm_grow((void **)&to->v, &to->cap, to->n + from->n, sizeof *to->v)) return -1;
    memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
    to->n += from->n;
    return 0;
}

/* A lane and everything it holds (NULL is fine). */
static void lane_free(rt_lane *l)
{
    if (!l) return;
    free(l->spans);
    free(l->blocks);
    free(l->gc.v);
    free(l->cc.v);
    free(l->logs.v);
    free(l->marks.v);
    free(l);
}

/* More tasks than a page can draw as lanes (a program that spawns thousands): the busiest
 * RT_MAX_TASK_LANES keep their lanes, the others' events share one "other tasks" lane. */
static int fold_tasks(rt_data *d)
{
    if (d->ntlanes <= RT_MAX_TASK_LANES) return 0;
    sort(d->tlanes, d->ntlanes, sizeof *d->tlanes, lane_busier);
    rt_lane *o = calloc(1, sizeof *o);
    if (!o) return -1;
    o->task = RT_OTHER_TASKS;
    o->thread = d->tlanes[RT_MAX_TASK_LANES]->thread;
    for (size_t i = RT_MAX_TASK_LANES; i < d->ntlanes; i++) {
        rt_lane *l = d->tlanes[i];
        if (jm_grow((void **)&o->spans, &o->cap, o->n + l->n, sizeof *o->spans)) goto oom;
        if (l->n) memcpy(o->spans + o->n, l->spans, l->n * sizeof *l->spans);
        o->n += l->n;
        if (evlist_append(&o->gc, &l->gc) || evlist_append(&o->cc, &l->cc) || evlist_append(&o->logs, &l->logs) ||
            evlist_append(&o->marks, &l->marks))
            goto oom;
        o->logs_dropped += l->logs_dropped;
        for (uint32_t k = 0; k < l->nthreads; k++) {
            uint32_t t = l->threads[k], seen = 0;
            for (uint32_t j = 0; j < o->nthreads && !seen; j++) seen = o->threads[j] == t;
            if (seen) continue;
            if (o->nthreads < RT_LANE_THREADS) o->threads[o->nthreads++] = t;
            else o->more_threads = 1;
        }
        o->more_threads |= l->more_threads;
        lane_free(l);
        d->tlanes[i] = NULL; /* rt_free skips it, whatever happens next */
    }
    o->folded_tasks = d->ntlanes - RT_MAX_TASK_LANES;
    d->tlanes[RT_MAX_TASK_LANES] = o;
    d->ntlanes = RT_MAX_TASK_LANES + 1;
    return 0;
oom: /* the lanes folded so far are freed and NULL in the array (rt_free skips them) */
    lane_free(o);
    return -1;
}

/* Each GC pause goes to the lane of its triggering thread (by OS tid), else to the lane of
 * the thread that recorded it. */
static int place_gc(rt_data *d)
{
    for (size_t i = 0; i < d->ngcp; i++) {
        const rt_gcp *g = &d->gcp[i];
        uint32_t lane = tu_thread_by_os_tid(d->r, g->os_tid, g->thread);
        uint64_t task = task_at(d, lane, g->t); /* the task that ran on the triggering thread then */
        rt_lane *l = task ? task_lane(d, task, lane) : lane_get(d, lane);
        if (!l || ev_push(&l->gc, (rt_ev){g->t, g->dur, 0, 0})) return -1;
    }
    return 0;
}

int rt_finish(rt_data *d)
{
    uint64_t total = 0, rows = 0;
    if (place_gc(d)) return -1;
    if (fold_tasks(d)) return -1;
    sort(d->tlanes, d->ntlanes, sizeof *d->tlanes, lane_task_cmp);
    jm_map_clear(&d->task_ix); /* the lanes moved: index them again */
    for (size_t i = 0; i < d->ntlanes; i++)
        if (jm_map_put(&d->task_ix, d->tlanes[i]->task, 0, (uint32_t)i)) return -1;
    for (size_t i = 0; i < rt_nall(d); i++) {
        rt_lane *l = rt_lane_at(d, i);
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
        for (size_t i = 0; i < rt_nall(d); i++) {
            const rt_lane *l = rt_lane_at(d, i);
            if (l)
                for (size_t k = 0; k < l->n; k++) durs[n++] = l->spans[k].end - l->spans[k].start;
        }
        d->threshold = select_kth(durs, n, n - d->o.max_spans - 1); /* the longest max_spans are above it */
        free(durs);
        /* Quantum: blocks in a row are separated by more than it, so a row holds at most
         * run/quantum + 1 of them (plus one per exact span that splits them). */
        uint64_t run = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 1;
        uint64_t q = (uint64_t)((double)run * (double)(rows ? rows : 1) / (double)d->o.max_blocks);
        d->quantum = q > d->threshold ? q : d->threshold;
    }
    for (size_t i = 0; i < rt_nall(d); i++)
        if (rt_lane_at(d, i) && lane_reduce(d, rt_lane_at(d, i))) return -1;
    return 0;
}

void rt_get_summary(const rt_data *d, rt_summary *out)
{
    memset(out, 0, sizeof *out);
    out->duration_threshold_ns = d->threshold;
    out->not_kept = d->not_kept;
    for (size_t i = 0; i < rt_nall(d); i++) {
        const rt_lane *l = rt_lane_at(d, i);
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
    for (size_t i = 0; i < rt_nall(d); i++) {
        const rt_lane *l = rt_lane_at(d, i);
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
    for (size_t i = 0; i < rt_nall(d); i++) {
        rt_lane *l = rt_lane_at(d, i);
        lane_free(l);
    }
    free(d->lanes);
    free(d->tlanes);
    jm_map_free(&d->task_ix);
    for (size_t i = 0; i < d->ntt; i++) free(d->tt[i].sw);
    free(d->tt);
    for (size_t i = 0; i < d->ncounters; i++) free(d->counters[i].s);
    free(d->gcp);
    free(d->counters);
    tu_strdict_free(&d->strings);
    free(d->type_kind);
    free(d);
}
