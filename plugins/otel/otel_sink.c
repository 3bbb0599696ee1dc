/* The sink, on Jäger's collector thread: records → queued spans and logs, per-site
 * aggregates and counter values. Never waits: a full queue drops and counts. */
#include <stdlib.h>
#include <string.h>

#include "otel_internal.h"

#define PEND_BUCKETS 4096u
#define PEND_MAX 65536u

struct ot_pending {
    ot_pending *next;
    uint64_t key;             /* thread << 32 | span id */
    uint8_t *attrs;
    uint32_t attrs_len, nattrs;
    char *error;
    int failed;
    uint64_t error_time;
};

uint64_t ot_unix(const ot_state *st, uint64_t t) { return t - st->anchor_ns + st->anchor_unix; }

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The OTLP span id of Jäger span (thread, id): splitmix64(salt ^ (thread << 32 | id)),
 * big-endian; the salt is in the recording as otel.span_id_salt, so tools map ids back. */
void ot_span_id(const ot_state *st, uint32_t thread, uint32_t id, uint8_t out[8])
{
    uint64_t v = mix64(st->salt ^ (((uint64_t)thread << 32) | id));
    if (!v) v = 1;
    for (int i = 7; i >= 0; i--, v >>= 8) out[i] = (uint8_t)v;
}

void ot_span_free(ot_span *s)
{
    if (!s) return;
    free(s->attrs);
    free(s->error);
    free(s);
}

void ot_log_free(ot_log *l)
{
    if (!l) return;
    free(l->body);
    free(l->attrs);
    free(l);
}

static ot_pending **pend_slot(ot_state *st, uint64_t key)
{
    if (!st->pend) {
        st->pend = calloc(PEND_BUCKETS, sizeof(ot_pending *));
        if (!st->pend) return NULL;
        st->pend_cap = PEND_BUCKETS;
    }
    ot_pending **pp = (ot_pending **)st->pend + (mix64(key) & (PEND_BUCKETS - 1));
    while (*pp && (*pp)->key != key) pp = &(*pp)->next;
    return pp;
}

static ot_pending *pend_get(ot_state *st, uint64_t key, int create)
{
    ot_pending **pp = pend_slot(st, key);
    if (!pp) return NULL;
    if (*pp || !create) return *pp;
    if (st->pend_n >= PEND_MAX) return NULL;
    ot_pending *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->key = key;
    *pp = p;
    st->pend_n++;
    return p;
}

static ot_pending *pend_take(ot_state *st, uint64_t key)
{
    ot_pending **pp = pend_slot(st, key);
    if (!pp || !*pp) return NULL;
    ot_pending *p = *pp;
    *pp = p->next;
    st->pend_n--;
    return p;
}

void ot_pending_free(ot_state *st)
{
    ot_pending **b = (ot_pending **)st->pend;
    for (size_t i = 0; b && i < st->pend_cap; i++)
        for (ot_pending *p = b[i], *n; p; p = n) {
            n = p->next;
            free(p->attrs);
            free(p->error);
            free(p);
        }
    free(st->pend);
    st->pend = NULL;
    st->pend_n = st->pend_cap = 0;
}

/* The host's string table (host->string), for interned string attributes. */
static const char *(*ot_string_of)(uint32_t id);
void ot_attr_strings(const char *(*string_of)(uint32_t id)) { ot_string_of = string_of; }

int ot_attr_next(const uint8_t *p, uint32_t len, uint32_t *off, ot_attr *out)
{
    if (*off + 8u > len) return 0;
    const uint8_t *e = p + *off;
    uint16_t kl, kind;
    uint32_t vl;
    memcpy(&kl, e, 2);
    memcpy(&kind, e + 2, 2);
    memcpy(&vl, e + 4, 4);
    uint64_t total = 8u + (((uint64_t)kl + vl + 7u) & ~(uint64_t)7u);
    if ((uint64_t)*off + total > len) return 0;
    out->key = (const char *)e + 8;
    out->key_len = kl;
    out->kind = kind;
    out->value = e + 8 + kl;
    out->value_len = vl;
    *off += (uint32_t)total;
    if (kind == JAGER_ATTR_STR_ID && vl == 8) { /* jager_string_intern(): exported as its text */
        uint64_t id;
        memcpy(&id, out->value, 8);
        const char *s = ot_string_of && id && id <= UINT32_MAX ? ot_string_of((uint32_t)id) : NULL;
        out->kind = JAGER_ATTR_STR;
        out->value = (const uint8_t *)(s ? s : "");
        out->value_len = s ? (uint32_t)strlen(s) : 0;
    }
    return 1;
}

/* Append an attribute list to a pending span. */
static void pend_attrs(ot_pending *p, const uint8_t *list, uint32_t len, uint32_t n)
{
    uint8_t *a = realloc(p->attrs, (size_t)p->attrs_len + len);
    if (!a) return;
    memcpy(a + p->attrs_len, list, len);
    p->attrs = a;
    p->attrs_len += len;
    p->nattrs += n;
}

static size_t list_len(const uint8_t *list, size_t room, uint32_t n)
{
    uint32_t off = 0;
    ot_attr a;
    for (uint32_t i = 0; i < n && ot_attr_next(list, (uint32_t)(room > UINT32_MAX ? UINT32_MAX : room), &off, &a); i++) {}
    return off;
}

/* Queue an item of signal sig (0 spans, 1 logs); returns 1 if taken. */
int ot_enqueue(ot_state *st, int sig, void *item)
{
    ot_counts *c = &st->cnt[sig];
    int taken = 0, wake = 0;
    pthread_mutex_lock(&st->lock);
    if (st->closed) {
        atomic_fetch_add(&c->already_shutdown, 1);
    } else if (st->qn[sig] >= st->cfg.queue_cap[sig]) {
        atomic_fetch_add(&c->queue_full, 1);
    } else {
        uint32_t cap = st->cfg.queue_cap[sig];
        st->q[sig][(st->qhead[sig] + st->qn[sig]) % cap] = item;
        st->qn[sig]++;
        atomic_fetch_add(&c->enqueued, 1);
        taken = 1;
        wake = st->qn[sig] == st->cfg.batch[sig];
    }
    pthread_mutex_unlock(&st->lock);
    if (wake) pthread_cond_signal(&st->cond);
    return taken;
}

static void site_add(ot_state *st, uint32_t site, uint64_t dur)
{
    if (site >= st->nsites) {
        size_t n = site + 64u;
        ot_site **s = realloc(st->sites, n * sizeof *s);
        if (!s) return;
        st->sites = s;
        uint64_t *w = realloc(st->rate_window, n * sizeof *w);
        if (!w) return;
        st->rate_window = w;
        uint32_t *rc = realloc(st->rate_count, 2 * n * sizeof *rc);
        if (!rc) return;
        st->rate_count = rc;
        memset(s + st->nsites, 0, (n - st->nsites) * sizeof *s);
        st->nsites = n;
    }
    ot_site *a = st->sites[site];
    if (!a) {
        a = st->sites[site] = calloc(1, sizeof *a);
        if (!a) return;
        st->rate_window[site] = UINT64_MAX;
        st->rate_count[2 * site] = st->rate_count[2 * site + 1] = 0;
    }
    if (!a->calls || dur < a->min_ns) a->min_ns = dur;
    if (dur > a->max_ns) a->max_ns = dur;
    a->calls++;
    a->sum_ns += dur;
    uint32_t sh = 61u - (uint32_t)__builtin_clzll(dur | 4u);
    uint32_t b = sh * 4u + (uint32_t)(dur >> sh);
    a->hist[b < JAGER_HIST_BUCKETS ? b : JAGER_HIST_BUCKETS - 1] += 1;
}

/* Per-site rate: at most site_rate spans per site in each second of end time. Threads'
 * batches reach the sink out of order, so the current second and the one before it keep
 * their own counts (a span ending in an older second is sampled out): no second of end
 * time ever gets more than site_rate spans of a site. */
static int over_rate(ot_state *st, uint32_t site, uint64_t end_ns)
{
    if (!st->cfg.site_rate || site >= st->nsites || !st->sites[site]) return 0;
    uint64_t sec = end_ns / 1000000000u, *w = &st->rate_window[site];
    uint32_t *n = &st->rate_count[2 * site];
    if (*w == UINT64_MAX || sec > *w) {
        if (*w == UINT64_MAX || sec > *w + 1) n[0] = n[1] = 0; /* both slots are stale */
        else n[sec & 1] = 0;                                  /* the slot of sec - 2 */
        *w = sec;
    } else if (sec + 1 < *w) {
        return 1;
    }
    if (n[sec & 1] >= st->cfg.site_rate) return 1;
    n[sec & 1]++;
    return 0;
}

/* The thread's task changed (jager_task_set: Julia tasks); its later spans carry it. */
static void on_task(ot_state *st, uint32_t thread, const jager_rec_task *r)
{
    if (thread >= st->ntask) {
        size_t n = (size_t)thread + 16;
        uint64_t *t = realloc(st->task, n * sizeof *t);
        if (!t) return;
        memset(t + st->ntask, 0, (n - st->ntask) * sizeof *t);
        st->task = t;
        st->ntask = n;
    }
    st->task[thread] = r->task;
}

/* A span recorded on \p rec_thread; \p thread numbers its id and \p parent_thread its
 * parent's: the recording thread for a span, its begin thread and its parent's for a
 * JAGER_EV_SPAN_X (a task that moved between threads), so its OTLP ids are those its
 * children and attributes use. */
static void on_span(ot_state *st, uint32_t rec_thread, uint64_t os_tid, const jager_rec_span *r, uint32_t thread,
                    uint32_t parent_thread)
{
    uint64_t dur = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
    uint64_t key = ((uint64_t)thread << 32) | r->span_id;
    ot_counts *c = &st->cnt[OT_SPANS];
    atomic_fetch_add(&c->seen, 1);
    pthread_mutex_lock(&st->agg_lock);
    site_add(st, r->h.aux, dur);
    int over = over_rate(st, r->h.aux, r->end_ns);
    pthread_mutex_unlock(&st->agg_lock);
    ot_pending *p = pend_take(st, key);
    ot_span *s = over ? NULL : calloc(1, sizeof *s);
    if (!s) {
        if (over) atomic_fetch_add(&c->sampled_out, 1);
        else atomic_fetch_add(&c->other, 1);
        if (p) free(p->attrs), free(p->error), free(p);
        return;
    }
    memcpy(s->trace_id, st->trace_id, 16);
    ot_span_id(st, thread, r->span_id, s->span_id);
    /* 2: the thread adopted a peer's context and this span's parent is the peer's span */
    if (ot_context_of_span(st, thread, r->span_id, r->parent_id, s->trace_id, s->parent) != 2) {
        if (r->parent_id) ot_span_id(st, parent_thread, r->parent_id, s->parent);
        else memcpy(s->parent, st->root_id, 8);
    }
    s->has_parent = 1;
    s->start = ot_unix(st, r->start_ns);
    s->end = ot_unix(st, r->end_ns);
    s->thread = rec_thread;
    const char *name = NULL, *file = NULL;
    uint32_t line = 0;
    if (st->host->site_info(r->h.aux, &name, &file, &line) == JAGER_OK) {
        s->name = name;
        s->file = file;
        s->line = line;
    }
    if (!s->name) s->name = "span";
    s->os_tid = os_tid;
    s->task = rec_thread < st->ntask ? st->task[rec_thread] : 0;
    if (p) {
        s->attrs = p->attrs;
        s->attrs_len = p->attrs_len;
        s->nattrs = p->nattrs;
        s->error = p->error;
        s->failed = p->failed;
        s->error_time = p->error_time;
        free(p);
    }
    if (!ot_enqueue(st, OT_SPANS, s)) ot_span_free(s);
}

static void on_attr(ot_state *st, uint32_t thread, const jager_rec_span_attr *r, size_t rbytes)
{
    const uint8_t *list = (const uint8_t *)(r + 1);
    size_t room = rbytes - sizeof *r;
    size_t len = list_len(list, room, r->nattrs);
    if (r->h.aux & JAGER_SPAN_REF_MOVED) thread = JAGER_SPAN_REF_THREAD(r->h.aux); /* its begin thread numbers the id */
    ot_pending *p = pend_get(st, ((uint64_t)thread << 32) | r->span_id, 1);
    if (p && len) pend_attrs(p, list, (uint32_t)len, r->nattrs);
}

static void on_error(ot_state *st, uint32_t thread, const jager_rec_span_error *r, size_t rbytes)
{
    uint32_t site = r->h.aux;
    if (site & JAGER_SPAN_REF_MOVED) { /* set after its task moved: its begin thread numbers the id */
        thread = JAGER_SPAN_REF_THREAD(site);
        site = JAGER_SPAN_REF_SITE(site);
    }
    pthread_mutex_lock(&st->agg_lock);
    if (site < st->nsites && st->sites[site]) st->sites[site]->errors++;
    pthread_mutex_unlock(&st->agg_lock);
    ot_pending *p = pend_get(st, ((uint64_t)thread << 32) | r->span_id, 1);
    if (!p) return;
    size_t ml = r->msg_len <= rbytes - sizeof *r ? r->msg_len : rbytes - sizeof *r;
    free(p->error);
    p->error = malloc(ml + 1);
    if (p->error) {
        memcpy(p->error, r + 1, ml);
        p->error[ml] = 0;
    }
    p->failed = 1;
    p->error_time = ot_unix(st, r->time_ns);
}

static void on_log(ot_state *st, uint32_t thread, const jager_rec_log *r, size_t rbytes)
{
    ot_counts *c = &st->cnt[OT_LOGS];
    atomic_fetch_add(&c->seen, 1);
    ot_log *l = calloc(1, sizeof *l);
    size_t room = rbytes - sizeof *r;
    size_t bl = r->body_len <= room ? r->body_len : room;
    size_t boff = (bl + 7u) & ~(size_t)7u;
    if (l) l->body = malloc(bl + 1);
    if (!l || !l->body) {
        atomic_fetch_add(&c->other, 1);
        ot_log_free(l);
        return;
    }
    const uint8_t *base = (const uint8_t *)(r + 1);
    memcpy(l->body, base, bl);
    l->body[bl] = 0;
    l->body_len = (uint32_t)bl;
    if (boff < room && r->nattrs) {
        size_t len = list_len(base + boff, room - boff, r->nattrs);
        if (len && (l->attrs = malloc(len))) {
            memcpy(l->attrs, base + boff, len);
            l->attrs_len = (uint32_t)len;
            l->nattrs = r->nattrs;
        }
    }
    l->time = ot_unix(st, r->time_ns);
    l->severity = r->h.aux & 0xffu;
    static const uint8_t zero[16];
    if (memcmp(r->trace_id, zero, 16) && memcmp(r->trace_id, st->trace_id, 16) && memcmp(r->trace_id, st->own_trace_id, 16)) {
        /* The thread's own trace context, another trace than the run's (set by the program,
         * e.g. extracted from a peer). The run's own context (the process span, made current
         * on the jager_init thread) falls through: the innermost span is more precise. */
        memcpy(l->trace_id, r->trace_id, 16);
        l->has_trace = 1;
        if (memcmp(r->ctx_span_id, zero, 8)) memcpy(l->span_id, r->ctx_span_id, 8), l->has_span = 1;
    } else {
        memcpy(l->trace_id, st->trace_id, 16);
        l->has_trace = 1;
        if (r->span_id) ot_span_id(st, thread, r->span_id, l->span_id);
        else memcpy(l->span_id, st->root_id, 8);
        l->has_span = 1;
    }
    if (!ot_enqueue(st, OT_LOGS, l)) ot_log_free(l);
}

/* A counter's latest sample, whatever thread took it: a monotonic counter's sample is the
 * process's running total (the largest of two stamped alike is the later add). Blocks come
 * thread by thread, so an older sample may arrive after a newer one. */
static void on_counter(ot_state *st, const jager_rec_counter *r)
{
    pthread_mutex_lock(&st->agg_lock);
    size_t i = 0;
    while (i < st->nctrs && st->ctrs[i].id != r->h.aux) i++;
    if (i == st->nctrs) {
        if (st->nctrs == st->cctrs) {
            size_t n = st->cctrs ? st->cctrs * 2 : 16;
            ot_ctr *c = realloc(st->ctrs, n * sizeof *c);
            if (!c) goto out;
            st->ctrs = c;
            st->cctrs = n;
        }
        st->ctrs[i] = (ot_ctr){.id = r->h.aux, .value = r->value, .time = r->time_ns};
        st->nctrs++;
    }
    ot_ctr *c = &st->ctrs[i];
    if (r->time_ns > c->time || (r->time_ns == c->time && r->value > c->value)) {
        c->value = r->value;
        c->time = r->time_ns;
    }
out:
    pthread_mutex_unlock(&st->agg_lock);
}

static void on_plugin_event(ot_state *st, const jager_record *r, size_t rbytes, uint64_t os_tid)
{
    int mpi_kind = 0;
    size_t i = (size_t)r->type - JAGER_EV_FIRST_PLUGIN;
    if (r->type == st->self_type || i >= 4096) return;
    pthread_mutex_lock(&st->agg_lock);
    if (i >= st->nptypes) {
        size_t n = i + 16;
        ot_ptype *p = realloc(st->ptypes, n * sizeof *p);
        if (!p) goto out;
        for (size_t k = st->nptypes; k < n; k++) p[k] = (ot_ptype){0, 0, -2, 0};
        st->ptypes = p;
        st->nptypes = n;
    }
    ot_ptype *t = &st->ptypes[i];
    if (t->dur_field == -2) {
        const jager_type_desc *d = st->host->type_info(r->type);
        t->dur_field = -1;
        t->mpi_kind = ot_mpi_kind(d ? d->name : NULL);
        for (uint32_t f = 0; d && f < d->nfields; f++)
            if (d->fields[f].kind == JAGER_FIELD_DURATION_NS && (d->fields[f].flags & JAGER_FIELD_FLAG_EXTENT)) {
                t->dur_field = (int)f;
                break;
            }
    }
    t->count++;
    if (t->dur_field >= 0 && sizeof(jager_rec_plugin) + ((size_t)t->dur_field + 1) * 8u <= rbytes)
        t->dur_ns += ((const jager_rec_plugin *)r)->fields[t->dur_field];
    mpi_kind = t->mpi_kind;
out:
    pthread_mutex_unlock(&st->agg_lock);
    if (mpi_kind) {
        /* the mpi plugin's rank and job spans, in the job's trace */
        ot_mpi_adopt(st);
        atomic_fetch_add(&st->cnt[OT_SPANS].seen, 1);
        ot_span *s = ot_mpi_span(st, mpi_kind, r, rbytes, os_tid);
        if (!s) atomic_fetch_add(&st->cnt[OT_SPANS].other, 1);
        else if (!ot_enqueue(st, OT_SPANS, s)) ot_span_free(s);
    }
}

jager_status ot_sink_write(void *ctx, const jager_batch *b)
{
    ot_state *st = ctx;
    if (!atomic_load(&st->active)) return JAGER_OK; /* start failed (no libcurl): stay out of the way */
    uint64_t os_tid = 0;
    const char *tname = NULL;
    st->host->thread_info(b->thread, &os_tid, &tname); /* once per batch: one thread's records */
    ot_mpi_adopt(st); /* once the mpi plugin broadcast the job's trace id */
    for (size_t off = 0; off + sizeof(jager_record) <= b->bytes;) {
        const jager_record *r = (const jager_record *)(b->data + off);
        size_t n = (size_t)r->words * 8u;
        if (!n || off + n > b->bytes) break;
        off += n;
        switch (r->type) {
        case JAGER_EV_SPAN:
            if (n >= sizeof(jager_rec_span)) on_span(st, b->thread, os_tid, (const jager_rec_span *)r, b->thread, b->thread);
            break;
        case JAGER_EV_SPAN_X:
            if (n >= sizeof(jager_rec_span_x)) {
                const jager_rec_span_x *x = (const jager_rec_span_x *)r;
                on_span(st, b->thread, os_tid, (const jager_rec_span *)r, x->begin_thread, x->parent_thread);
            }
            break;
        case JAGER_EV_SPAN_ATTR:
            if (n >= sizeof(jager_rec_span_attr)) on_attr(st, b->thread, (const jager_rec_span_attr *)r, n);
            break;
        case JAGER_EV_SPAN_ERROR:
            if (n >= sizeof(jager_rec_span_error)) on_error(st, b->thread, (const jager_rec_span_error *)r, n);
            break;
        case JAGER_EV_LOG:
            if (n >= sizeof(jager_rec_log)) on_log(st, b->thread, (const jager_rec_log *)r, n);
            break;
        case JAGER_EV_COUNTER:
            if (n >= sizeof(jager_rec_counter)) on_counter(st, (const jager_rec_counter *)r);
            break;
        case JAGER_EV_CONTEXT:
            if (n >= sizeof(jager_rec_context)) ot_context_record(st, b->thread, (const jager_rec_context *)r);
            break;
        case JAGER_EV_TASK:
            if (n >= sizeof(jager_rec_task)) on_task(st, b->thread, (const jager_rec_task *)r);
            break;
        default:
            if (r->type >= JAGER_EV_FIRST_PLUGIN) on_plugin_event(st, r, n, os_tid);
            break;
        }
    }
    return JAGER_OK;
}

/* jager_flush(): export what is queued now, without waiting for the schedule. */
void ot_sink_flush(void *ctx)
{
    ot_state *st = ctx;
    pthread_mutex_lock(&st->lock);
    st->flush_req = 1;
    pthread_mutex_unlock(&st->lock);
    pthread_cond_signal(&st->cond);
}

void ot_sink_close(void *ctx)
{
    ot_state *st = ctx;
    pthread_mutex_lock(&st->lock);
    st->closed = 1;
    pthread_mutex_unlock(&st->lock);
    ot_pending_free(st);
    ot_context_free(st);
    free(st->task);
    st->task = NULL;
    st->ntask = 0;
}
