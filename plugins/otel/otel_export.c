/* The exporter thread: takes batches from the queues on schedule (or when a batch is full,
 * or on jager_flush()), encodes them, sends them, and counts every item by outcome. The
 * final flush at shutdown is bounded by JAGER_OTEL_SHUTDOWN_TIMEOUT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "otel_internal.h"

const char *ot_signal_name(int sig) { return sig == OT_SPANS ? "span" : sig == OT_LOGS ? "log" : "metric_data_point"; }

void ot_hex(const uint8_t *p, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) out[2 * i] = d[p[i] >> 4], out[2 * i + 1] = d[p[i] & 15];
    out[2 * n] = 0;
}

uint64_t ot_bucket_lower(uint32_t b)
{
    if (b < 4) return b;
    uint32_t e = b / 4 + 1, sub = b % 4;
    return (uint64_t)(4 + sub) << (e - 2);
}

/* Count n items of sig by the outcome of one export. */
static void account(ot_state *st, int sig, size_t n, int ok, uint64_t rejected, const char *cause)
{
    ot_counts *c = &st->cnt[sig];
    if (ok) {
        if (rejected > n) rejected = n;
        atomic_fetch_add(&c->exported, n - rejected);
        atomic_fetch_add(&c->rejected, rejected);
        return;
    }
    if (!strcmp(cause, "timeout")) atomic_fetch_add(&c->timeout, n);
    else if (!strcmp(cause, "connection")) atomic_fetch_add(&c->connection, n);
    else if (!strcmp(cause, "shutdown")) atomic_fetch_add(&c->shutdown, n);
    else if (cause[0] >= '1' && cause[0] <= '5' && atoi(cause) < 600) atomic_fetch_add(&c->http[atoi(cause)], n);
    else atomic_fetch_add(&c->other, n);
}

static uint64_t deadline_for(ot_state *st, int sig)
{
    uint64_t ms = st->cfg.ep[sig].timeout_ms;
    if (sig < 2 && st->cfg.bsp_export_timeout_ms[sig] < ms) ms = st->cfg.bsp_export_timeout_ms[sig];
    if (sig == OT_METRICS && st->cfg.metric_timeout_ms < ms) ms = st->cfg.metric_timeout_ms;
    return ot_now() + ms * 1000000u;
}

/* Export one batch of sig (spans or logs); returns the number of items taken. */
static size_t export_batch(ot_state *st, int sig)
{
    uint32_t cap = st->cfg.queue_cap[sig], max = st->cfg.batch[sig];
    void **v = malloc(max * sizeof *v);
    if (!v) return 0;
    size_t n = 0;
    pthread_mutex_lock(&st->lock);
    while (n < max && st->qn[sig]) {
        v[n++] = st->q[sig][st->qhead[sig]];
        st->qhead[sig] = (st->qhead[sig] + 1) % cap;
        st->qn[sig]--;
    }
    if (n) st->busy++;
    pthread_mutex_unlock(&st->lock);
    if (n) {
        ot_buf body = {0};
        int json = st->cfg.ep[sig].protocol == OT_PROTO_JSON;
        int rc = sig == OT_SPANS ? (json ? ot_json_spans(st, (ot_span **)v, n, &body) : ot_pb_spans(st, (ot_span **)v, n, &body))
                                 : (json ? ot_json_logs(st, (ot_log **)v, n, &body) : ot_pb_logs(st, (ot_log **)v, n, &body));
        char cause[32] = "other";
        uint64_t rej = 0;
        int ok = !rc && !body.oom && !ot_http_send(st, sig, body.p, body.n, deadline_for(st, sig), &rej, cause, sizeof cause);
        account(st, sig, n, ok, rej, cause);
        free(body.p);
        for (size_t i = 0; i < n; i++) {
            if (sig == OT_SPANS) ot_span_free(v[i]);
            else ot_log_free(v[i]);
        }
        pthread_mutex_lock(&st->lock);
        st->busy--;
        pthread_mutex_unlock(&st->lock);
        pthread_cond_broadcast(&st->cond);
    }
    free(v);
    return n;
}

static void export_metrics(ot_state *st)
{
    ot_buf body = {0};
    uint64_t points = 0;
    int json = st->cfg.ep[OT_METRICS].protocol == OT_PROTO_JSON;
    uint64_t now_unix = ot_unix(st, st->host->now_ns());
    int rc = json ? ot_json_metrics(st, now_unix, &body, &points) : ot_pb_metrics(st, now_unix, &body, &points);
    atomic_fetch_add(&st->cnt[OT_METRICS].seen, points);
    atomic_fetch_add(&st->cnt[OT_METRICS].enqueued, points);
    char cause[32] = "other";
    uint64_t rej = 0;
    int ok = !rc && !body.oom &&
             !ot_http_send(st, OT_METRICS, body.p, body.n, deadline_for(st, OT_METRICS), &rej, cause, sizeof cause);
    account(st, OT_METRICS, points, ok, rej, cause);
    atomic_fetch_add(&st->metric_exports, 1);
    free(body.p);
}

/* One exporter thread per signal: spans and logs on their schedule (or a full batch, or
 * jager_flush()), metrics every OTEL_METRIC_EXPORT_INTERVAL. */
static void *run(void *arg)
{
    ot_worker *w = arg;
    ot_state *st = w->st;
    int sig = w->sig;
    uint64_t period = (sig == OT_METRICS ? st->cfg.metric_interval_ms : st->cfg.delay_ms[sig]) * 1000000u;
    uint64_t next = ot_now() + period;
    pthread_mutex_lock(&st->lock);
    while (!st->stopping) {
        uint64_t now = ot_now();
        int due;
        if (sig == OT_METRICS) {
            due = now >= next;
        } else {
            due = st->qn[sig] && (st->qn[sig] >= st->cfg.batch[sig] || now >= next || st->flush_req);
            if (!st->qn[sig] && now >= next) next = now + period;
        }
        if (!due) {
            struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
            pthread_cond_timedwait(&st->cond, &st->lock, &ts);
            continue;
        }
        pthread_mutex_unlock(&st->lock);
        if (sig == OT_METRICS) export_metrics(st);
        else export_batch(st, sig);
        next = ot_now() + period;
        pthread_mutex_lock(&st->lock);
    }
    pthread_mutex_unlock(&st->lock);
    /* Final flush: everything queued, until the hard deadline; metrics once more at the end. */
    if (sig == OT_METRICS) {
        /* Wait for the other signals' flush so the self-metrics include it, for at most half
         * the final flush: a hung traces endpoint must not cost the last metrics. */
        uint64_t wait_end = st->hard_deadline_ns - st->cfg.shutdown_ms * 500000u;
        pthread_mutex_lock(&st->lock);
        while (!atomic_load(&st->abort_io) && ot_now() < wait_end && (st->qn[0] || st->qn[1] || st->busy)) {
            uint64_t t = ot_now() + 20000000u;
            if (t > wait_end) t = wait_end;
            struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
            pthread_cond_timedwait(&st->cond, &st->lock, &ts);
        }
        pthread_mutex_unlock(&st->lock);
        if (!atomic_load(&st->abort_io) && ot_now() < st->hard_deadline_ns) export_metrics(st);
        return NULL;
    }
    while (!atomic_load(&st->abort_io) && ot_now() < st->hard_deadline_ns && export_batch(st, sig)) {}
    return NULL;
}

int ot_export_start(ot_state *st)
{
    for (int s = 0; s < OT_NSIG; s++) {
        st->work[s].st = st;
        st->work[s].sig = s;
        if (ot_http_init(st, s) || pthread_create(&st->thread[s], NULL, run, &st->work[s])) {
            ot_http_free(st, s);
            pthread_mutex_lock(&st->lock);
            st->stopping = 1;
            st->hard_deadline_ns = ot_now();
            pthread_mutex_unlock(&st->lock);
            pthread_cond_broadcast(&st->cond);
            for (int k = 0; k < s; k++) pthread_join(st->thread[k], NULL), ot_http_free(st, k);
            return -1;
        }
    }
    st->thread_started = 1;
    return 0;
}

/* Stop the threads after a bounded final flush; what is still queued then counts as lost
 * at shutdown. Called from the plugin's stop, after the collector's last drain. */
void ot_export_stop(ot_state *st)
{
    if (!st->thread_started) return;
    pthread_mutex_lock(&st->lock);
    st->hard_deadline_ns = ot_now() + st->cfg.shutdown_ms * 1000000u;
    st->stopping = 1;
    pthread_mutex_unlock(&st->lock);
    pthread_cond_broadcast(&st->cond);
    /* The threads honour the deadline themselves; past it (and a grace second), cut what is
     * in flight (curl's progress callback sees abort_io). */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t left = st->cfg.shutdown_ms * 1000000u;
    ts.tv_sec += (time_t)(left / 1000000000u) + 1;
    ts.tv_nsec += (long)(left % 1000000000u);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    for (int s = 0; s < OT_NSIG; s++) {
        if (!atomic_load(&st->abort_io) && pthread_timedjoin_np(st->thread[s], NULL, &ts)) {
            atomic_store(&st->abort_io, 1);
            pthread_cond_broadcast(&st->cond);
            pthread_join(st->thread[s], NULL);
        } else if (atomic_load(&st->abort_io)) {
            pthread_join(st->thread[s], NULL);
        }
        ot_http_free(st, s);
    }
    st->thread_started = 0;
    pthread_mutex_lock(&st->lock);
    for (int s = 0; s < 2; s++) {
        while (st->qn[s]) {
            void *it = st->q[s][st->qhead[s]];
            st->qhead[s] = (st->qhead[s] + 1) % st->cfg.queue_cap[s];
            st->qn[s]--;
            atomic_fetch_add(&st->cnt[s].shutdown, 1);
            if (s == OT_SPANS) ot_span_free(it);
            else ot_log_free(it);
        }
    }
    st->closed = 1;
    pthread_mutex_unlock(&st->lock);
}

/* ---- metrics snapshot ---- */

static ot_point *pt(ot_point *v, size_t *n, const char *name, const char *unit, const char *desc, int type, double value, int is_int)
{
    ot_point *p = &v[(*n)++];
    memset(p, 0, sizeof *p);
    p->name = name;
    p->unit = unit;
    p->desc = desc;
    p->type = type;
    p->value = value;
    p->is_int = is_int;
    return p;
}

static void attr(ot_point *p, const char *k, const char *v, int64_t i)
{
    if (p->nattr >= 3) return;
    p->akey[p->nattr] = k;
    p->aval[p->nattr] = v;
    p->aint[p->nattr] = i;
    p->nattr++;
}

static const char *const proc_name[2] = {"otel.sdk.processor.span.processed", "otel.sdk.processor.log.processed"};
static const char *const qsize_name[2] = {"otel.sdk.processor.span.queue.size", "otel.sdk.processor.log.queue.size"};
static const char *const qcap_name[2] = {"otel.sdk.processor.span.queue.capacity", "otel.sdk.processor.log.queue.capacity"};
static const char *const exp_name[3] = {"otel.sdk.exporter.span.exported", "otel.sdk.exporter.log.exported",
                                        "otel.sdk.exporter.metric_data_point.exported"};
static const char *const proc_type[2] = {"batching_span_processor", "batching_log_processor"};
static const char *const exp_type[3] = {"otlp_http_span_exporter", "otlp_http_log_exporter", "otlp_http_metric_exporter"};

static char http_codes[600][4];

size_t ot_points_build(ot_state *st, ot_point **out, ot_site **copies)
{
    for (int i = 100; i < 600; i++)
        if (!http_codes[i][0]) snprintf(http_codes[i], sizeof http_codes[i], "%d", i);
    pthread_mutex_lock(&st->agg_lock);
    size_t nhttp = 0;
    for (int s = 0; s < OT_NSIG; s++)
        for (int i = 100; i < 600; i++) nhttp += atomic_load(&st->cnt[s].http[i]) != 0;
    size_t cap = st->nsites * 2 + st->nctrs + st->nptypes * 2 + 64 + nhttp;
    ot_point *v = calloc(cap, sizeof *v);
    ot_site *cp = calloc(st->nsites ? st->nsites : 1, sizeof *cp);
    size_t n = 0;
    if (!v || !cp) {
        free(v);
        free(cp);
        pthread_mutex_unlock(&st->agg_lock);
        *out = NULL;
        *copies = NULL;
        return 0;
    }
    for (size_t s = 0; s < st->nsites; s++) {
        if (!st->sites[s] || !st->sites[s]->calls) continue;
        cp[s] = *st->sites[s];
        jager_site_stat x;
        memset(&x, 0, sizeof x);
        x.struct_size = sizeof x;
        if (st->site_stats && st->site_stats((jager_site)s, &x) == JAGER_OK && x.calls) {
            /* Jäger's own exact aggregates and log histogram (every span, not only events). */
            cp[s].calls = x.calls;
            cp[s].sum_ns = x.total_ns;
            cp[s].min_ns = x.min_ns;
            cp[s].max_ns = x.max_ns;
            cp[s].errors = x.errors;
            memcpy(cp[s].hist, x.hist, sizeof cp[s].hist);
        }
        const char *name = NULL, *file = NULL;
        uint32_t line = 0;
        st->host->site_info((jager_site)s, &name, &file, &line);
        ot_point *p = pt(v, &n, "jager.span.duration", "s", "Duration of the spans of one Jäger site (all calls, from its log histogram)", 2, 0, 0);
        p->hist = &cp[s];
        attr(p, "code.function.name", name ? name : "", 0);
        attr(p, "code.file.path", file ? file : "", 0);
        attr(p, "code.line.number", NULL, line);
        if (cp[s].errors) {
            p = pt(v, &n, "jager.span.errors", "{error}", "Spans of one site marked as failed", 0, (double)cp[s].errors, 1);
            attr(p, "code.function.name", name ? name : "", 0);
            attr(p, "code.file.path", file ? file : "", 0);
            attr(p, "code.line.number", NULL, line);
        }
    }
    /* Program counters: each one's latest sample — a monotonic counter's running total (the
     * process's, all threads: a cumulative sum), a gauge's level. */
    for (size_t i = 0; i < st->nctrs; i++) {
        const char *name = NULL, *unit = NULL;
        uint32_t kind = 0;
        if (st->host->counter_info(st->ctrs[i].id, &name, &unit, &kind) != JAGER_OK || !name) continue;
        pt(v, &n, name, unit ? unit : "", "A Jäger counter", kind == 1 ? 1 : 0, st->ctrs[i].value, 0);
    }
    /* Plugin events (gc.pause, …): how many, and the time in their first duration field. */
    for (size_t i = 0; i < st->nptypes; i++) {
        const ot_ptype *t = &st->ptypes[i];
        if (!t->count) continue;
        const jager_type_desc *d = st->host->type_info((uint16_t)(i + JAGER_EV_FIRST_PLUGIN));
        if (!d || !d->name) continue;
        ot_point *p = pt(v, &n, "jager.plugin.events", "{event}", "Events recorded by a plugin, by type", 0, (double)t->count, 1);
        attr(p, "jager.event.type", d->name, 0);
        if (t->dur_field >= 0) {
            p = pt(v, &n, "jager.plugin.event.duration", "s", "Sum of the first duration field of a plugin's events",
                   0, (double)t->dur_ns / 1e9, 0);
            attr(p, "jager.event.type", d->name, 0);
            attr(p, "jager.event.field", d->fields[t->dur_field].name, 0);
        }
    }
    pthread_mutex_unlock(&st->agg_lock);
    /* Self-metrics, semantic-convention names. */
    for (int s = 0; s < 2; s++) {
        ot_counts *c = &st->cnt[s];
        ot_point *p = pt(v, &n, proc_name[s], s ? "{log_record}" : "{span}", "Items processed by the processor", 0, (double)atomic_load(&c->enqueued), 1);
        attr(p, "otel.component.type", proc_type[s], 0);
        static const char *const why[] = {"queue_full", "already_shutdown"};
        uint64_t val[] = {atomic_load(&c->queue_full), atomic_load(&c->already_shutdown)};
        for (int k = 0; k < 2; k++)
            if (val[k]) {
                p = pt(v, &n, proc_name[s], s ? "{log_record}" : "{span}", "Items processed by the processor", 0, (double)val[k], 1);
                attr(p, "otel.component.type", proc_type[s], 0);
                attr(p, "error.type", why[k], 0);
            }
        pthread_mutex_lock(&st->lock);
        double qn = st->qn[s];
        pthread_mutex_unlock(&st->lock);
        p = pt(v, &n, qsize_name[s], s ? "{log_record}" : "{span}", "Items in the queue", 1, qn, 1);
        attr(p, "otel.component.type", proc_type[s], 0);
        p = pt(v, &n, qcap_name[s], s ? "{log_record}" : "{span}", "Queue capacity", 1, st->cfg.queue_cap[s], 1);
        attr(p, "otel.component.type", proc_type[s], 0);
    }
    for (int s = 0; s < OT_NSIG; s++) {
        ot_counts *c = &st->cnt[s];
        const char *unit = s == 0 ? "{span}" : s == 1 ? "{log_record}" : "{data_point}";
        ot_point *p = pt(v, &n, exp_name[s], unit, "Items exported", 0, (double)atomic_load(&c->exported), 1);
        attr(p, "otel.component.type", exp_type[s], 0);
        static const char *const why[] = {"rejected", "timeout", "connection", "other", "shutdown"};
        uint64_t val[] = {atomic_load(&c->rejected), atomic_load(&c->timeout), atomic_load(&c->connection),
                          atomic_load(&c->other), atomic_load(&c->shutdown)};
        for (int k = 0; k < 5; k++)
            if (val[k]) {
                p = pt(v, &n, exp_name[s], unit, "Items exported", 0, (double)val[k], 1);
                attr(p, "otel.component.type", exp_type[s], 0);
                attr(p, "error.type", why[k], 0);
            }
        for (int i = 100; i < 600; i++) {
            uint64_t x = atomic_load(&c->http[i]);
            if (!x || n >= cap) continue;
            p = pt(v, &n, exp_name[s], unit, "Items exported", 0, (double)x, 1);
            attr(p, "otel.component.type", exp_type[s], 0);
            attr(p, "error.type", http_codes[i], 0);
        }
    }
    *out = v;
    *copies = cp;
    return n;
}

void ot_points_free(ot_point *p, ot_site *copies)
{
    free(p);
    free(copies);
}
